/* SPDX-License-Identifier: MIT */
/* t_sr_exact.c: stochastic rounding decides on the exact fraction
 * (docs/semantics.md: the upper neighbour, by magnitude, iff
 * r < frac x 2^R), checked with MPFR and the caller's draws on either side
 * of every case's decision.
 * For f16, bf16, f32 and f64 add, sub, mul, div, sqrt and fma on random
 * operands (wide exponent gaps and cancellations included) whose result is
 * normal with a finite upper neighbour: MPFR gives the exact value (sums,
 * products, fma: exact at 2400 bits; div and sqrt: 200 bits toward zero and
 * the ternary as sticky), hence the lower neighbour L and T = ceil(frac x
 * 2^R); the draw with top R bits T - 1 must give L + ulp, the draw T must
 * give L, inexact set iff frac != 0. R = 64, 23, 8. Independent of the
 * Python spec oracle (which checks sr through the CLI). Prints TAP. */
#include <math.h>
#include <stdint.h> /* before mpfr.h: mpfr_get_uj */
#include <mpfr.h>
#include <stdio.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"

enum { CASES = 3000, PREC = 2400 };

static uint64_t rs = 0x5EED5EEDu;
static uint64_t next(void) { return rs = fpemu_random64(rs, 7); }

/* a random normal code of f: exponent within [lo, hi] of the format's range (0..1 fractions) */
static uint64_t rand_code(const fpemu_format *f, double lo, double hi) {
    int emin = f->emin, emax = f->emax;
    int span = emax - emin;
    int e = emin + (int)(lo * span) + (int)(next() % (uint64_t)((int)((hi - lo) * span) + 1));
    if (e > emax) e = emax;
    uint64_t mant = next() & ((UINT64_C(1) << f->mbits) - 1);
    uint64_t code = ((uint64_t)(e + f->bias) << f->mbits | mant) | (next() & 1 ? f->sign_bit : 0);
    return code << f->pad;
}

int main(void) {
    const char *names[] = {"f16", "bf16", "f32", "f64"};
    const char *ops[] = {"add", "sub", "mul", "div", "sqrt", "fma"};
    const int Rs[] = {64, 23, 8};
    mpfr_t x, y, z, v, t, u;
    mpfr_inits2(PREC, x, y, z, v, t, u, (mpfr_ptr)0);
    for (int fi = 0; fi < 4; fi++) {
        const fpemu_format *f = fpemu_format_get(names[fi], NULL, 0);
        const int p = f->mbits + 1;
        for (int op = 0; op < 6; op++) {
            long checked = 0, bad = 0;
            char first[300] = "";
            for (int i = 0; i < CASES; i++) {
                /* operands: near each other, far apart (sums), or anywhere */
                double lo = 0.3, hi = 0.7;
                uint64_t a = rand_code(f, lo, hi), b, c = rand_code(f, lo, hi);
                switch (i % 3) {
                case 0: b = rand_code(f, lo, hi); break;
                case 1: b = rand_code(f, 0.05, 0.45); break; /* a wide gap for sums */
                default: b = (a & ~(f->sign_bit << f->pad)) ^ (next() & 3) << f->pad ^ (next() & 1 ? f->sign_bit << f->pad : 0); break; /* cancellation */
                }
                if (op == 4) a &= ~(f->sign_bit << f->pad);
                mpfr_set_d(x, fpemu_to_double(f, a), MPFR_RNDN);
                mpfr_set_d(y, fpemu_to_double(f, b), MPFR_RNDN);
                mpfr_set_d(z, fpemu_to_double(f, c), MPFR_RNDN);
                int tern = 0;
                mpfr_set_prec(v, PREC);
                switch (op) {
                case 0: tern = mpfr_add(v, x, y, MPFR_RNDZ); break;
                case 1: tern = mpfr_sub(v, x, y, MPFR_RNDZ); break;
                case 2: tern = mpfr_mul(v, x, y, MPFR_RNDZ); break;
                case 3: mpfr_set_prec(v, 200); tern = mpfr_div(v, x, y, MPFR_RNDZ); break;
                case 4: mpfr_set_prec(v, 200); tern = mpfr_sqrt(v, x, MPFR_RNDZ); break;
                default: tern = mpfr_fma(v, x, y, z, MPFR_RNDZ); break;
                }
                if (mpfr_zero_p(v)) continue;
                int neg = mpfr_sgn(v) < 0;
                mpfr_abs(v, v, MPFR_RNDN);
                long E = mpfr_get_exp(v) - 1; /* |v| in [2^E, 2^(E+1)) */
                if (E < f->emin || E > f->emax) continue;
                /* kept = floor(|v| / ulp), frac in [0, 1) (exact: scaling by 2^k) */
                mpfr_set_prec(t, PREC);
                mpfr_mul_2si(t, v, (long)(p - 1) - E, MPFR_RNDN);
                mpfr_set_prec(u, PREC);
                mpfr_floor(u, t);
                double kept = mpfr_get_d(u, MPFR_RNDN); /* < 2^53 */
                if (ldexp(kept + 1, (int)(E - (p - 1))) > f->max_finite) continue; /* the upper neighbour must be finite */
                mpfr_sub(t, t, u, MPFR_RNDN); /* frac, exact */
                int inexact = !mpfr_zero_p(t) || tern != 0;
                for (int k = 0; k < 3; k++) {
                    int R = Rs[k];
                    /* T = ceil(frac 2^R), frac just above t when the value was truncated */
                    mpfr_set_prec(u, PREC);
                    mpfr_mul_2si(u, t, R, MPFR_RNDN);
                    int integral = mpfr_integer_p(u);
                    mpfr_ceil(u, u);
                    if (integral && tern != 0) mpfr_add_ui(u, u, 1, MPFR_RNDN);
                    int T64 = mpfr_cmp_ui_2exp(u, 1, 64) >= 0; /* T = 2^64 */
                    uint64_t T = T64 ? 0 : (uint64_t)mpfr_get_uj(u, MPFR_RNDN);
                    for (int side = 0; side < 2; side++) {
                        /* side 0: top R bits T - 1 (up); side 1: T (down) */
                        uint64_t top;
                        if (side == 0) {
                            if (!T64 && T == 0) continue;
                            top = T64 ? (R == 64 ? ~UINT64_C(0) : (UINT64_C(1) << R) - 1) : T - 1;
                        } else {
                            if (T64 || (R < 64 && T >> R)) continue;
                            top = T;
                        }
                        uint64_t draw = R == 64 ? top : top << (64 - R) | (next() >> R);
                        fpemu_ctx ctx;
                        fpemu_ctx_init(&ctx);
                        ctx.round = FPEMU_SR;
                        ctx.sr_bits = R;
                        ctx.sr_stream = &draw, ctx.sr_len = 1;
                        uint64_t r;
                        switch (op) {
                        case 0: r = fpemu_add(f, a, b, &ctx); break;
                        case 1: r = fpemu_sub(f, a, b, &ctx); break;
                        case 2: r = fpemu_mul(f, a, b, &ctx); break;
                        case 3: r = fpemu_div(f, a, b, &ctx); break;
                        case 4: r = fpemu_sqrt(f, a, &ctx); break;
                        default: r = fpemu_fma(f, a, b, c, &ctx); break;
                        }
                        double want = ldexp(kept + (side == 0 && inexact ? 1 : 0), (int)(E - (p - 1)));
                        if (neg) want = -want;
                        double got = fpemu_to_double(f, r);
                        unsigned wflags = inexact ? FPEMU_FLAG_INEXACT : 0;
                        checked++;
                        if (got != want || ctx.flags != wflags) {
                            if (!bad++)
                                snprintf(first, sizeof first, "%llx %llx %llx, R %d, draw %016llx: got %a flags %02x, want %a flags %02x",
                                         (unsigned long long)a, (unsigned long long)b, (unsigned long long)c, R,
                                         (unsigned long long)draw, got, ctx.flags, want, wflags);
                        }
                    }
                }
            }
            if (!ok(bad == 0 && checked > CASES, "%s sr %s: %ld draws either side of the exact decision, %ld wrong",
                    names[fi], ops[op], checked, bad))
                diag("first: %s", first);
        }
    }
    mpfr_clears(x, y, z, v, t, u, (mpfr_ptr)0);
    mpfr_free_cache();
    return done_testing();
}
