/* t_emu_host.c: f32 and f64 arithmetic against the host FPU, an IEEE 754
 * implementation no one on this project wrote: add, sub, mul, div, sqrt,
 * fma in the four IEEE modes, results and flags (x86 and ARM detect
 * tininess after rounding, fpemu's default). Operands are random with a
 * bias toward hard cases: every exponent including subnormals, significands
 * of runs of ones and zeros, near-cancellation, and results near overflow. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fpemu.h"
#include "hostfp.h"
#include "tap.h"

#ifdef __clang__
#pragma STDC FENV_ACCESS ON
#endif

static uint64_t rng_state;
static uint64_t rnd(void) { return rng_state = fpemu_random64(rng_state, 7); }

/* A random bit pattern of a binary format with e exponent bits, m mantissa
 * bits: hard significands and exponents more often than uniform. */
static uint64_t pattern(int e, int m) {
    uint64_t r = rnd();
    uint64_t sign = r & 1;
    uint64_t emax = (UINT64_C(1) << e) - 1;
    uint64_t ex;
    switch ((r >> 1) & 7) {
    case 0: ex = 0; break;                                /* subnormal/zero */
    case 1: ex = 1 + ((r >> 8) & 3); break;               /* near min normal */
    case 2: ex = emax - 1 - ((r >> 8) & 3); break;        /* near overflow */
    case 3: ex = emax; break;                             /* inf/NaN */
    default: ex = (r >> 8) % (emax + 1); break;
    }
    uint64_t mant, mmask = (UINT64_C(1) << m) - 1;
    uint64_t s = rnd();
    switch ((r >> 20) & 3) {
    case 0: mant = s & mmask; break;
    case 1: mant = mmask >> (s % (m + 1)); break;             /* low run of ones */
    case 2: mant = (mmask << (s % (m + 1))) & mmask; break;   /* high run of ones */
    default: mant = (UINT64_C(1) << (s % m)) ^ ((s >> 8) & 1 ? mmask : 0); break; /* walking one/zero */
    }
    return sign << (e + m) | ex << m | mant;
}

static const fpemu_round emu_modes[4] = {FPEMU_RNE, FPEMU_RTZ, FPEMU_RUP, FPEMU_RDN};
static const char *opnames[6] = {"add", "sub", "mul", "div", "sqrt", "fma"};

static int mismatches;

static void check(const fpemu_format *f, int op, int mi, uint64_t a, uint64_t b, uint64_t c, uint64_t want, unsigned wflags) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = emu_modes[mi];
    uint64_t got;
    switch (op) {
    case 0: got = fpemu_add(f, a, b, &ctx); break;
    case 1: got = fpemu_sub(f, a, b, &ctx); break;
    case 2: got = fpemu_mul(f, a, b, &ctx); break;
    case 3: got = fpemu_div(f, a, b, &ctx); break;
    case 4: got = fpemu_sqrt(f, a, &ctx); break;
    default: got = fpemu_fma(f, a, b, c, &ctx); break;
    }
    /* fma(0, inf, qNaN): IEEE 754 7.2 leaves INVALID implementation-defined;
     * x86 does not raise it, DESIGN.md (and SoftFloat) do. */
    if (op == 5 && fpemu_is_nan(f, c)) {
        fpemu_class ka = fpemu_classify(f, a), kb = fpemu_classify(f, b);
        if ((ka == FPEMU_CLASS_ZERO && kb == FPEMU_CLASS_INF) || (ka == FPEMU_CLASS_INF && kb == FPEMU_CLASS_ZERO))
            wflags |= FPEMU_FLAG_INVALID;
    }
    int nan_ok = fpemu_is_nan(f, got) && fpemu_is_nan(f, want);
    if ((got == want || nan_ok) && ctx.flags == wflags) return;
    if (++mismatches <= 10) {
        int w = f->bits / 4;
        diag("%s_%s %s: %0*llX %0*llX %0*llX => emu %0*llX %02X, host %0*llX %02X", f->name, opnames[op],
             fpemu_round_name(ctx.round), w, (unsigned long long)a, w, (unsigned long long)b, w, (unsigned long long)c, w,
             (unsigned long long)got, ctx.flags, w, (unsigned long long)want, wflags);
    }
}

int main(void) {
    rng_state = tap_seed(20261122);
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0), *f64 = fpemu_format_get("f64", NULL, 0);
    const long N = 40000;
    for (int fi = 0; fi < 2; fi++) {
        const fpemu_format *f = fi ? f64 : f32;
        for (int op = 0; op < 6; op++) {
            mismatches = 0;
            for (int mi = 0; mi < 4; mi++)
                for (long i = 0; i < N; i++) {
                    uint64_t a, b, c, r;
                    unsigned fl;
                    if (fi == 0) {
                        a = pattern(8, 23), b = pattern(8, 23), c = pattern(8, 23);
                        if (i & 1) b = (a ^ (rnd() & 0xFF)) ^ (UINT64_C(1) << 31); /* near-cancellation */
                        if (op == 5 && (i & 2)) { /* c close to -a*b */
                            float p = (float)((double)*(float *)&(uint32_t){(uint32_t)a} * *(float *)&(uint32_t){(uint32_t)b});
                            uint32_t pb;
                            memcpy(&pb, &p, 4);
                            c = (pb ^ 0x80000000u) ^ (rnd() & 3);
                        }
                        r = hostfp_op(0, op, mi, a, b, c, &fl);
                    } else {
                        a = pattern(11, 52), b = pattern(11, 52), c = pattern(11, 52);
                        if (i & 1) b = (a ^ (rnd() & 0xFFFF)) ^ (UINT64_C(1) << 63);
                        r = hostfp_op(1, op, mi, a, b, c, &fl);
                    }
                    check(f, op, mi, a, b, c, r, fl);
                }
            ok(mismatches == 0, "%s_%s: %ld random/structured cases x 4 modes agree with the host FPU, flags included (%d mismatches)",
               f->name, opnames[op], N, mismatches);
        }
    }
    return done_testing();
}
