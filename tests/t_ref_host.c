/* SPDX-License-Identifier: MIT */
/* t_ref_host.c: the MPFR reference against the host's IEEE 754 hardware, an
 * implementation no one on this project wrote: f32 and f64 add, sub, mul,
 * div, sqrt, fma and f64 -> f32 in the four IEEE modes, results and flags
 * (with the host's tininess detection: after rounding on x86, the
 * reference's default, before on ARM); f16 via
 * the compiler's _Float16 (float arithmetic is wide enough for one correct
 * rounding of +, -, *, /, sqrt to f16), values in rne. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ref.h"
#include "hostfp.h"
#include "tap.h"

static uint64_t state;
static uint64_t next(void) { /* SplitMix64 */
    uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Bit patterns biased toward hard cases: subnormals, near overflow, runs of
 * ones, exponents close to a previous operand's. */
static uint64_t operand(int e, int m, uint64_t near) {
    uint64_t r = next(), em = (UINT64_C(1) << e) - 1, mm = (UINT64_C(1) << m) - 1, ex, mant;
    switch (r & 7) {
    case 0: ex = 0; break;
    case 1: ex = 1 + (r >> 8) % 3; break;
    case 2: ex = em - 1 - (r >> 8) % 3; break;
    case 3: ex = (r >> 8) % 8 == 0 ? em : (r >> 8) % em; break;
    case 4:
    case 5: {
        int64_t x = (int64_t)((near >> m) & em) + (int64_t)((r >> 8) % (2 * (uint64_t)m + 5)) - (m + 2);
        ex = x < 0 ? 0 : x > (int64_t)em ? em : (uint64_t)x;
        break;
    }
    default: ex = (r >> 8) % em; break;
    }
    uint64_t s = next();
    switch ((r >> 20) & 3) {
    case 0: mant = s & mm; break;
    case 1: mant = mm >> (s % (uint64_t)(m + 1)); break;
    case 2: mant = (mm << (s % (uint64_t)(m + 1))) & mm; break;
    default: mant = (UINT64_C(1) << (s % (uint64_t)m)) ^ ((s >> 8) & 1 ? mm : 0); break;
    }
    return ((r >> 40) & 1) << (e + m) | ex << m | mant;
}

int main(void) {
    uint64_t seed = tap_seed(20260522);
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0), *f64 = fpemu_format_get("f64", NULL, 0);
    const fpemu_format *f16 = fpemu_format_get("f16", NULL, 0);
    if (!f32 || !f64 || !f16) bail("no f16/f32/f64 in the registry");
    ref_ctx r;
    if (ref_ctx_init(&r)) bail("ref_ctx_init");
    ref_format rf32, rf64, rf16;
    ref_format_init(&rf32, f32), ref_format_init(&rf64, f64), ref_format_init(&rf16, f16);
    static const char *opn[7] = {"add", "sub", "mul", "div", "sqrt", "fma", "f64_to_f32"};
    static const char *mn[4] = {"rne", "rtz", "rup", "rdn"};
    static const fpemu_round rm[4] = {FPEMU_RNE, FPEMU_RTZ, FPEMU_RUP, FPEMU_RDN};
    const int N = 4000;
    for (int wide = 0; wide < 2; wide++) {
        int e = wide ? 11 : 8, m = wide ? 52 : 23;
        const fpemu_format *F = wide ? f64 : f32;
        const ref_format *RF = wide ? &rf64 : &rf32;
        for (int op = 0; op < (wide ? 7 : 6); op++) {
            for (int mode = 0; mode < 4; mode++) {
                state = seed ^ (uint64_t)(wide * 1000 + op * 10 + mode);
                int bad = 0;
                for (int i = 0; i < N; i++) {
                    uint64_t a = operand(e, m, 0), b = operand(e, m, a), c;
                    /* fma: c near a*b */
                    uint64_t pe = ((a >> m) & ((1u << e) - 1)) + ((b >> m) & ((1u << e) - 1));
                    uint64_t bias = (UINT64_C(1) << (e - 1)) - 1;
                    uint64_t near = pe > bias ? (pe - bias) << m : 0;
                    c = operand(e, m, near);
                    unsigned hf, rfl;
                    uint64_t want = hostfp_op(wide, op, mode, a, b, c, &hf);
                    r.round = rm[mode];
                    r.tininess_before = HOSTFP_TININESS_BEFORE;
                    uint64_t x[3] = {a, b, c}, got;
                    const ref_format *DF = RF;
                    if (op == 6) {
                        got = ref_op(&r, f32, REF_CONVERT, x, f64, &rfl);
                        DF = &rf32;
                    } else {
                        got = ref_op(&r, F, op == 5 ? REF_FMA : (ref_opcode)op, x, NULL, &rfl);
                    }
                    /* fma(0, inf, qNaN): INVALID is implementation-defined in
                     * IEEE 754; x86 does not raise it, the project does. */
                    if (op == 5 && ref_is_nan(RF, c)) {
                        ref_value va, vb;
                        ref_decode(RF, a, 0, &va), ref_decode(RF, b, 0, &vb);
                        if ((va.cls == REF_ZERO && vb.cls == REF_INF) || (va.cls == REF_INF && vb.cls == REF_ZERO))
                            hf |= FPEMU_FLAG_INVALID;
                    }
                    int same = (got == want || (ref_is_nan(DF, got) && ref_is_nan(DF, want))) && rfl == hf;
                    if (!same && bad++ < 5)
                        diag("%s_%s %s: %0*llX %0*llX %0*llX => ref %llX %02X host %llX %02X", wide ? "f64" : "f32", opn[op],
                             mn[mode], wide ? 16 : 8, (unsigned long long)a, wide ? 16 : 8, (unsigned long long)b,
                             wide ? 16 : 8, (unsigned long long)c, (unsigned long long)got, rfl,
                             (unsigned long long)want, hf);
                }
                ok(bad == 0, "%s %s %s: %d cases, %d mismatches with the host FPU", wide ? "f64" : "f32", opn[op], mn[mode], N, bad);
            }
        }
    }
#ifdef __FLT16_MAX__
    /* f16 through _Float16: the float result of +, -, *, /, sqrt of f16
     * values rounded once to f16 is correctly rounded (24 >= 2 * 11 + 2). */
    for (int op = 0; op < 5; op++) {
        state = seed ^ (uint64_t)(5000 + op);
        int bad = 0;
        r.round = FPEMU_RNE;
        for (int i = 0; i < N; i++) {
            uint16_t a = (uint16_t)operand(5, 10, 0), b = (uint16_t)operand(5, 10, a);
            _Float16 ha, hb;
            memcpy(&ha, &a, 2), memcpy(&hb, &b, 2);
            float fa = ha, fb = hb, fr;
            switch (op) {
            case 0: fr = fa + fb; break;
            case 1: fr = fa - fb; break;
            case 2: fr = fa * fb; break;
            case 3: fr = fa / fb; break;
            default: fr = sqrtf(fa); break;
            }
            _Float16 hr = (_Float16)fr;
            uint16_t want;
            memcpy(&want, &hr, 2);
            uint64_t x[2] = {a, b};
            unsigned fl;
            uint64_t got = ref_op(&r, f16, (ref_opcode)op, x, NULL, &fl);
            if (!(got == want || (ref_is_nan(&rf16, got) && ref_is_nan(&rf16, want))) && bad++ < 5)
                diag("f16_%s rne: %04X %04X => ref %04llX host %04X", opn[op], a, b, (unsigned long long)got, want);
        }
        ok(bad == 0, "f16 %s rne: %d cases against _Float16, %d mismatches", opn[op], N, bad);
    }
#else
    for (int op = 0; op < 5; op++) ok(1, "# SKIP no _Float16 in this compiler");
#endif
    ref_ctx_clear(&r);
    return done_testing();
}
