/* SPDX-License-Identifier: MIT */
/* t_quant_exact.c: fpemu_quantize against exact rational arithmetic (GMP's
 * mpq, no floating point): q = clamp(round(x / scale) + zero_point) in the
 * six deterministic modes and in sr (docs/semantics.md: up, away from zero, iff
 * r < frac x 2^R, r the draw's top R bits, frac the exact fraction of the
 * magnitude; R = 64, 8, 23, with draws either side of each case's decision),
 * result and flags (inexact, overflow, invalid),
 * on cases aimed at the rounding boundaries (x = (k + 1/2) scale and its
 * double neighbours, exact multiples, random values, scales that are not
 * powers of two, subnormal and huge operands, clamping at every qtype's
 * bounds, inf and NaN). Prints TAP. */
#include <float.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"

typedef struct {
    int32_t q;
    unsigned flags;
} qres;

static int64_t clamp64(int64_t v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* T = ceil(frac x 2^R) for the magnitude of x / scale (0 when exact), as a
 * double-word: *hi is 1 when T = 2^64 (R = 64, frac > 1 - 2^-64). */
static uint64_t sr_threshold(double x, double scale, int R, int *hi) {
    mpq_t Q, sc;
    mpz_t fl, t;
    mpq_inits(Q, sc, NULL);
    mpz_inits(fl, t, NULL);
    mpq_set_d(Q, x);
    mpq_set_d(sc, scale);
    mpq_div(Q, Q, sc);
    mpq_abs(Q, Q);
    mpz_fdiv_q(fl, mpq_numref(Q), mpq_denref(Q));
    mpz_mul(fl, fl, mpq_denref(Q));
    mpz_sub(t, mpq_numref(Q), fl); /* frac x den */
    mpz_mul_2exp(t, t, (unsigned)R);
    mpz_cdiv_q(t, t, mpq_denref(Q)); /* ceil(frac x 2^R) */
    *hi = mpz_sizeinbase(t, 2) > 64;
    uint64_t v = *hi ? 0 : (uint64_t)mpz_get_ui(t);
    mpq_clears(Q, sc, NULL);
    mpz_clears(fl, t, NULL);
    return v;
}

/* The exact answer; draw and R for sr. */
static qres oracle(double x, double scale, int32_t zp, int qmin, int qmax, fpemu_round mode, uint64_t draw, int R) {
    qres o = {0, 0};
    if (isnan(x) || !(scale > 0) || isinf(scale)) {
        o.q = (int32_t)clamp64(zp, qmin, qmax);
        o.flags = FPEMU_FLAG_INVALID;
        return o;
    }
    if (isinf(x)) {
        o.q = x > 0 ? qmax : qmin;
        o.flags = FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
        return o;
    }
    mpq_t Q, fr, half;
    mpz_t fl;
    mpq_inits(Q, fr, half, NULL);
    mpz_init(fl);
    mpq_set_d(Q, x);
    mpq_set_d(fr, scale);
    mpq_div(Q, Q, fr);
    mpz_fdiv_q(fl, mpq_numref(Q), mpq_denref(Q)); /* floor */
    mpq_set_z(fr, fl);
    mpq_sub(fr, Q, fr); /* fraction in [0, 1) */
    mpq_set_ui(half, 1, 2);
    int c = mpq_cmp(fr, half), inexact = mpq_sgn(fr) != 0, up = 0;
    int odd_fl = mpz_odd_p(fl) != 0, neg = mpq_sgn(Q) < 0;
    switch (mode) {
    case FPEMU_RNE: up = c > 0 || (c == 0 && odd_fl); break;
    case FPEMU_RNA: up = c > 0 || (c == 0 && !neg); break;
    case FPEMU_RTZ: up = inexact && neg; break;
    case FPEMU_RUP: up = inexact; break;
    case FPEMU_RDN: up = 0; break;
    case FPEMU_RTO: up = inexact && !odd_fl; break;
    default: { /* sr on the magnitude: r < frac x 2^R */
        int hi;
        uint64_t T = sr_threshold(x, scale, R, &hi), r = R == 64 ? draw : draw >> (64 - R);
        int away = inexact && (hi || r < T);
        up = neg ? !away && inexact : away; /* toward +inf in floor's terms */
        break;
    }
    }
    if (up) mpz_add_ui(fl, fl, 1);
    int64_t v;
    if (mpz_cmp_si(fl, -(1L << 40)) < 0) v = INT64_MIN / 2;
    else if (mpz_cmp_si(fl, 1L << 40) > 0) v = INT64_MAX / 2;
    else v = mpz_get_si(fl) + zp;
    o.flags = inexact ? FPEMU_FLAG_INEXACT : 0;
    if (v < qmin || v > qmax) o.flags |= FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
    o.q = (int32_t)clamp64(v, qmin, qmax);
    mpq_clears(Q, fr, half, NULL);
    mpz_clear(fl);
    return o;
}

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next(void) { return rng = fpemu_random64(rng, 1); }
static double unit(void) { return (double)(next() >> 11) * 0x1p-53; }

int main(void) {
    static const char *qnames[] = {"int8", "int8s", "uint8", "int4", "int4s", "uint4"};
    static const double fixed_scales[] = {1, 0.5, 0.1, 1.0 / 3, 0.0078125, 3, 7.3, 0x1p-30, 1e-300, 1e300};
    long cases[FPEMU_ROUND_COUNT] = {0}, bad[FPEMU_ROUND_COUNT] = {0};
    long near_half = 0, clamped = 0, special = 0;
    for (int mode = 0; mode <= FPEMU_SR; mode++) {
        for (int i = 0; i < 60000; i++) {
            const fpemu_qtype *qt = fpemu_qtype_get(qnames[next() % 6]);
            double scale = (i & 1) ? fixed_scales[next() % 10] : ldexp(1 + unit(), (int)(next() % 41) - 20);
            int32_t zp = (int32_t)(next() % 9) - 4;
            if (next() % 8 == 0) zp = (int32_t)(next() % 400) - 200;
            double k = (double)((int64_t)(next() % 41) - 20), x;
            switch (next() % 8) {
            case 0: x = k * scale; break;                   /* (near) exact multiple */
            case 1: x = (k + 0.5) * scale; near_half++; break; /* (near) tie */
            case 2: x = nextafter((k + 0.5) * scale, INFINITY); near_half++; break;
            case 3: x = nextafter((k + 0.5) * scale, -INFINITY); near_half++; break;
            case 4: x = (2 * unit() - 1) * 300 * scale; break; /* often clamped */
            case 5: x = ldexp(2 * unit() - 1, (int)(next() % 2100) - 1074); break; /* any magnitude */
            case 6: {
                static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, DBL_MIN, -DBL_MIN, 4.9e-324, DBL_MAX, 0x1p40, 0x1p41};
                x = sp[next() % 11];
                special++;
                break;
            }
            default: x = (k + unit()) * scale; break;
            }
            if (next() % 64 == 0) scale = (next() & 1) ? -1.0 : NAN; /* invalid scales */
            fpemu_ctx c;
            fpemu_ctx_init(&c);
            c.round = (fpemu_round)mode;
            /* sr: the caller's draw; half the time just either side of the
             * case's decision (top R bits T - 1 or T) */
            static const int Rs[3] = {64, 8, 23};
            int R = Rs[i % 3];
            uint64_t draw = next();
            if (mode == FPEMU_SR && (i & 2) && isfinite(x) && scale > 0 && isfinite(scale) && fabs(x / scale) < 0x1p40) {
                int hi;
                uint64_t T = sr_threshold(x, scale, R, &hi), top = (i & 4) && T > 0 ? T - 1 : T;
                if (!hi && (R == 64 || top < (UINT64_C(1) << R)))
                    draw = R == 64 ? top : top << (64 - R) | (draw >> R);
            }
            c.sr_stream = &draw, c.sr_len = 1, c.sr_bits = R;
            int32_t q = fpemu_quantize(x, scale, zp, qt->qmin, qt->qmax, &c);
            qres o = oracle(x, scale, zp, qt->qmin, qt->qmax, (fpemu_round)mode, draw, R);
            if (o.flags & FPEMU_FLAG_OVERFLOW) clamped++;
            cases[mode]++;
            if (q != o.q || c.flags != o.flags) {
                if (bad[mode]++ < 5)
                    diag("%s: quantize(%a, %a, zp %d, [%d, %d]) = %d flags %02X, exact %d flags %02X", fpemu_round_name(mode),
                         x, scale, zp, qt->qmin, qt->qmax, q, c.flags, o.q, o.flags);
            }
        }
        ok(bad[mode] == 0, "quantize in %s: %ld cases against exact rationals, %ld wrong", fpemu_round_name(mode),
           cases[mode], bad[mode]);
    }
    ok(near_half > 60000 && clamped > 10000 && special > 20000,
       "the cases reach the boundaries: %ld near a half-integer, %ld clamped, %ld special operands", near_half, clamped,
       special);
    return done_testing();
}
