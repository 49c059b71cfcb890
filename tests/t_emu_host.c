/* SPDX-License-Identifier: MIT */
/* t_emu_host.c: f32 and f64 arithmetic against the host FPU, an IEEE 754
 * implementation no one on this project wrote: add, sub, mul, div, sqrt,
 * fma in the four IEEE modes, results and flags (with the host's tininess
 * detection: after rounding on x86, before on ARM). Operands are random with a
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

/* Case i's operands in format fi (0 f32, 1 f64, 2 f16): three patterns, b
 * on odd i near -a (near-cancellation). */
static void operands(int fi, long i, uint64_t *a, uint64_t *b, uint64_t *c) {
    static const int e[3] = {8, 11, 5}, m[3] = {23, 52, 10};
    static const uint64_t near[3] = {0xFF, 0xFFFF, 0xF}, sign[3] = {UINT64_C(1) << 31, UINT64_C(1) << 63, 0x8000};
    *a = pattern(e[fi], m[fi]), *b = pattern(e[fi], m[fi]), *c = pattern(e[fi], m[fi]);
    if (i & 1) *b = (*a ^ (rnd() & near[fi])) ^ sign[fi];
}

static int mismatches;
/* the flush modes of the current pass, on both sides */
static int pass_ftz, pass_daz;

#if defined(__x86_64__) || defined(__i386__)
static int x86_mismatches;
static long x86_nans;

/* The operation under the x86 NaN policy. */
static uint64_t op_x86(const fpemu_format *f, int op, int mi, uint64_t a, uint64_t b, uint64_t c) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = emu_modes[mi];
    ctx.nan_policy = FPEMU_NAN_X86;
    ctx.ftz = pass_ftz, ctx.daz = pass_daz;
    switch (op) {
    case 0: return fpemu_add(f, a, b, &ctx);
    case 1: return fpemu_sub(f, a, b, &ctx);
    case 2: return fpemu_mul(f, a, b, &ctx);
    case 3: return fpemu_div(f, a, b, &ctx);
    case 4: return fpemu_sqrt(f, a, &ctx);
    default: return fpemu_fma(f, a, b, c, &ctx);
    }
}
#endif

static void check(const fpemu_format *f, int op, int mi, uint64_t a, uint64_t b, uint64_t c, uint64_t want, unsigned wflags) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = emu_modes[mi];
    ctx.tininess_before = HOSTFP_TININESS_BEFORE;
    ctx.ftz = pass_ftz, ctx.daz = pass_daz;
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
     * x86 does not raise it; fpemu's contract (docs/semantics.md) and
     * SoftFloat do. */
    if (op == 5 && fpemu_is_nan(f, c)) {
        fpemu_class ka = fpemu_classify(f, a), kb = fpemu_classify(f, b);
        if ((ka == FPEMU_CLASS_ZERO && kb == FPEMU_CLASS_INF) || (ka == FPEMU_CLASS_INF && kb == FPEMU_CLASS_ZERO))
            wflags |= FPEMU_FLAG_INVALID;
    }
    int nan_ok = fpemu_is_nan(f, got) && fpemu_is_nan(f, want);
#if defined(__x86_64__) || defined(__i386__)
    /* The x86 NaN policy must give the host's NaN bit for bit. */
    if (fpemu_is_nan(f, want)) {
        uint64_t gx = op_x86(f, op, mi, a, b, c);
        x86_nans++;
        if (gx != want && ++x86_mismatches <= 10)
            diag("%s_%s %s (nan x86): %llX %llX %llX => emu %llX, host %llX", f->name, opnames[op], fpemu_round_name(ctx.round),
                 (unsigned long long)a, (unsigned long long)b, (unsigned long long)c, (unsigned long long)gx,
                 (unsigned long long)want);
    }
#endif
    if ((got == want || nan_ok) && ctx.flags == wflags) return;
    if (++mismatches <= 10) {
        int w = f->bits / 4;
        diag("%s_%s %s: %0*llX %0*llX %0*llX => emu %0*llX %02X, host %0*llX %02X", f->name, opnames[op],
             fpemu_round_name(ctx.round), w, (unsigned long long)a, w, (unsigned long long)b, w, (unsigned long long)c, w,
             (unsigned long long)got, ctx.flags, w, (unsigned long long)want, wflags);
    }
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
/* NaN conversions f32 <-> f16 under the x86 NaN policy against F16C's
 * vcvtps2ph / vcvtph2ps, bit for bit: every f16 NaN code, and random f32
 * NaNs of both signs (quiet and signalling, every payload width). */
__attribute__((target("f16c"))) static void f16c_nans(void) {
    const fpemu_format *f16 = fpemu_format_get("f16", NULL, 0), *f32 = fpemu_format_get("f32", NULL, 0);
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.nan_policy = FPEMU_NAN_X86;
    long n = 0, bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7C00) != 0x7C00 || !(h & 0x3FF)) continue;
        uint32_t want = (uint32_t)_mm_cvtsi128_si32(_mm_castps_si128(_mm_cvtph_ps(_mm_cvtsi32_si128((int)h))));
        uint64_t got = fpemu_convert(f32, f16, h, &ctx);
        n++;
        if (got != want && ++bad <= 5) diag("f16_to_f32 (nan x86) %04X: emu %08llX, F16C %08X", h, (unsigned long long)got, want);
    }
    for (int i = 0; i < 200000; i++) {
        uint32_t x = 0x7F800000u | (uint32_t)(rnd() & 0x807FFFFFu);
        if (!(x & 0x7FFFFF)) x |= 1u << (rnd() % 23);
        __m128 v = _mm_castsi128_ps(_mm_cvtsi32_si128((int)x));
        uint32_t want = (uint32_t)_mm_cvtsi128_si32(_mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)) & 0xFFFF;
        uint64_t got = fpemu_convert(f16, f32, x, &ctx);
        n++;
        if (got != want && ++bad <= 10) diag("f32_to_f16 (nan x86) %08X: emu %04llX, F16C %04X", x, (unsigned long long)got, want);
    }
    ok(bad == 0, "f32 <-> f16 NaN conversions under the x86 NaN policy are F16C's bit for bit (%ld cases, %ld differ)", n, bad);
}
#endif

int main(void) {
    rng_state = tap_seed(20261122);
    /* f32 and f64 against the host FPU; f16 against AVX512-FP16, where the CPU has it */
    static const char *const fmts[3] = {"f32", "f64", "f16"};
    static const char *const hosts[3][2] = {{"the host FPU", "the host's"}, {"the host FPU", "the host's"},
                                            {"AVX512-FP16", "AVX512-FP16's"}};
    fpemu_ctx pc;
    fpemu_ctx_init(&pc);
    const long N = 40000;
    for (int fi = 0; fi < 3; fi++) {
        const fpemu_format *f = fpemu_format_get(fmts[fi], NULL, 0);
        if (fi == 2 && !hostfp_have_f16()) {
            ok(1, "# SKIP no AVX512-FP16 (CPU or compiler): f16 arithmetic not checked against hardware");
            continue;
        }
        for (int op = 0; op < 6; op++) {
            mismatches = 0;
            for (int mi = 0; mi < 4; mi++)
                for (long i = 0; i < N; i++) {
                    uint64_t a, b, c, r;
                    unsigned fl;
                    operands(fi, i, &a, &b, &c);
                    if (fi == 0) {
                        if (op == 5 && (i & 2)) { /* c close to -a*b */
                            float p = (float)((double)*(float *)&(uint32_t){(uint32_t)a} * *(float *)&(uint32_t){(uint32_t)b});
                            uint32_t pb;
                            memcpy(&pb, &p, 4);
                            c = (pb ^ 0x80000000u) ^ (rnd() & 3);
                        }
                        r = hostfp_op(0, op, mi, a, b, c, &fl);
                    } else if (fi == 1) {
                        r = hostfp_op(1, op, mi, a, b, c, &fl);
                    } else {
                        if (op == 5 && (i & 2)) /* c close to -a*b */
                            c = fpemu_from_double(f, -fpemu_to_double(f, a) * fpemu_to_double(f, b), &pc) ^ (rnd() & 3);
                        r = hostfp_op_f16(op, mi, a, b, c, &fl);
                    }
                    check(f, op, mi, a, b, c, r, fl);
                }
            ok(mismatches == 0, "%s_%s: %ld random/structured cases x 4 modes agree with %s, flags included (%d mismatches)",
               f->name, opnames[op], N, hosts[fi][0], mismatches);
#if defined(__x86_64__) || defined(__i386__)
            ok(x86_mismatches == 0, "%s_%s: under the x86 NaN policy, %ld NaN results are %s bit for bit (%d differ)",
               f->name, opnames[op], x86_nans, hosts[fi][1], x86_mismatches);
            x86_mismatches = 0, x86_nans = 0;
#endif
        }
    }
    /* ftz and daz against the host's flush modes (x86: MXCSR's FTZ and DAZ):
     * a result that is tiny after rounding is flushed even where it rounds
     * to the least normal (f32: 2^-126 x (2^24 - 1) / 2^24 -> +0 with
     * underflow and inexact), as fpemu's ftz does (docs/semantics.md) */
    if (hostfp_set_flush(1, 0)) {
        static const char *const flush_names[3] = {"ftz", "daz", "ftz and daz"};
        for (int fl = 0; fl < 3; fl++)
            for (int fi = 0; fi < 2; fi++) {
                const fpemu_format *f = fpemu_format_get(fmts[fi], NULL, 0);
                pass_ftz = fl != 1, pass_daz = fl != 0;
                hostfp_set_flush(pass_ftz, pass_daz);
                mismatches = 0;
                long cases = 0;
                for (int op = 0; op < 5; op++) /* not fma: libm's fma() need not honour MXCSR's flush bits */
                    for (int mi = 0; mi < 4; mi++)
                        for (long i = 0; i < N / 4; i++, cases++) {
                            uint64_t a, b, c, r;
                            unsigned flg;
                            operands(fi, i, &a, &b, &c);
                            if (fi == 0 && i % 5 == 0) /* the tie at 2^-126 */
                                a = 0x00800000u | (a & 0x80000000u), b = 0x3F7FFFFFu ^ (rnd() & 1);
                            r = hostfp_op(fi, op, mi, a, b, 0, &flg);
                            check(f, op, mi, a, b, 0, r, flg);
                        }
                ok(mismatches == 0, "%s add/sub/mul/div/sqrt with %s: %ld cases (4 modes) agree with the host FPU's, flags included (%d mismatches)",
                   f->name, flush_names[fl], cases, mismatches);
#if defined(__x86_64__) || defined(__i386__)
                ok(x86_mismatches == 0, "%s with %s: under the x86 NaN policy, %ld NaN results are the host's bit for bit (%d differ)",
                   f->name, flush_names[fl], x86_nans, x86_mismatches);
                x86_mismatches = 0, x86_nans = 0;
#endif
            }
        hostfp_set_flush(0, 0);
        pass_ftz = pass_daz = 0;
    } else {
        ok(1, "# SKIP the host's flush modes are not reachable here (x86-64 SSE only): ftz and daz not checked against hardware");
    }
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    unsigned ea, eb, ec, ed;
    /* CPUID.1:ECX F16C (29), AVX (28), OSXSAVE (27), and the OS saving the AVX state */
    int f16c = __get_cpuid(1, &ea, &eb, &ec, &ed) && (ec >> 27 & 7) == 7;
    if (f16c) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        f16c = (lo & 6) == 6;
    }
    if (f16c) f16c_nans();
    else ok(1, "# SKIP no F16C: f32 <-> f16 NaN conversions not checked against hardware");
#endif
    return done_testing();
}
