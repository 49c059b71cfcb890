/* SPDX-License-Identifier: MIT */
/* array.c: whole-array encode, decode, fake-quantise and convert, with the
 * telemetry counters of docs/training.md. Element i of an encode,
 * round, convert or quantize array always takes SR draw (counter + i), so
 * splitting such an array across threads never changes a result; decode is
 * the loop of fpemu_to_float (docs/semantics.md). Fast paths for the hot f32
 * casts live in cast.c. */
#include <float.h>
#include <math.h>
#include "internal.h"

/* cast.c: returns 1 if it handled the whole array. */
int emu__encode_fast(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats);
int emu__round_fast(const fpemu_format *fmt, float *dst, const float *src, size_t n, fpemu_ctx *ctx,
                    fpemu_cast_stats *stats);

/* Telemetry of one cast (docs/training.md): overflow (finite inputs
 * that became inf/NaN or were clamped), underflow to zero, subnormal
 * results. The fast kernels count n and amax for whole chunks themselves
 * and pass with_n_amax = 0 for the elements they redo. */
void emu__count_cast(const fpemu_format *fmt, fpemu_cast_stats *st, float x, uint64_t code, unsigned fl, int with_n_amax) {
    if (with_n_amax) st->n++;
    if (!isfinite(x)) { st->nonfinite_in++; return; }
    if (with_n_amax && fabsf(x) > st->amax) st->amax = fabsf(x);
    fpemu_class k = fpemu_classify(fmt, code);
    if (fl & FPEMU_FLAG_OVERFLOW) {
        st->overflow++;
        if (k != FPEMU_CLASS_INF && k != FPEMU_CLASS_QNAN && k != FPEMU_CLASS_SNAN) st->saturated++;
    } else if (x != 0 && k == FPEMU_CLASS_ZERO) st->underflow++;
    else if (x != 0 && k == FPEMU_CLASS_SUBNORMAL) st->subnormal++;
}

/* sr without a caller stream, for a format whose normal range lies inside
 * binary32's (p <= 23): a result that is normal with a finite upper
 * neighbour is the f32's bits cut at the format's last place, plus one if
 * element i's draw, mix(seed, counter + i), falls below the cut-off
 * fraction (emu__sr_up_low; one draw per element, as fpemu_convert takes
 * it). *sr32 is set when this applies; its fields are the cut's constants. */
static emu_sr_cut sr32_for(const fpemu_format *fmt, const fpemu_ctx *ctx) {
    emu_sr_cut k = {0};
    if (ctx->round != FPEMU_SR || ctx->sr_stream || !emu__small(fmt) || fmt->mbits > 22 ||
        fmt->emin < -126 || fmt->emax > 127)
        return k;
    k.ok = 1;
    k.sh = 23 - fmt->mbits;
    k.lo = (uint32_t)(127 + fmt->emin) << 23;
    /* the largest finite magnitude with float's exponent bias: below it the upper neighbour is finite */
    k.hi = (((uint32_t)(127 + fmt->emax) << fmt->mbits) | (uint32_t)fmt->maxmant) << k.sh;
    k.rebias = (uint32_t)(127 - fmt->bias) << fmt->mbits;
    k.lowmask = (1u << k.sh) - 1;
    k.signbit = fmt->is_signed ? fmt->sign_bit : 0;
    return k;
}

/* Every array cast leaves the stream n draws on, whatever the mode and the
 * path taken (the caller's stream is used up to its end). */
static void skip_draws(fpemu_ctx *ctx, size_t n) { emu__array_at(ctx, ctx->counter, ctx->sr_pos, n); }

/* e8m0, the exponent-only unsigned format (its code the biased exponent,
 * bias 127 as binary32's; no zero, no subnormals, no sign, 0xFF NaN), in
 * the modes without draws: a positive normal f32 whose result does not
 * overflow has as code the f32's exponent field after the rounding's
 * carry, (u + add) >> 23. The one kept bit is odd, so rne and rna both go
 * up from half the binade (add 2^22); rup from any fraction (2^23 - 1);
 * rtz, rdn and rto never (rto's kept bit is odd already). The result is
 * inexact where the fraction is not zero, and never tiny (2^-126 is above
 * e8m0's least value). u in [2^23, hi) takes this; every other input
 * (zero, negative, f32 subnormal, inf, NaN, overflow) and sr take
 * fpemu_convert. */
typedef struct { int ok; uint32_t add, hi; } emu_e8_cut;
static emu_e8_cut e8_for(const fpemu_format *fmt, const fpemu_ctx *ctx) {
    emu_e8_cut k = {0, 0, 0};
    if (fmt->is_signed || fmt->has_subnormals || fmt->mbits != 0 || fmt->ebits != 8 || fmt->bias != 127 || fmt->pad ||
        fmt->container != 8 || fmt->emax != 127 || fmt->nan != FPEMU_NANS_ALLONES || emu__bad_mode(ctx))
        return k;
    switch (ctx->round) {
    case FPEMU_RNE: case FPEMU_RNA: k.add = UINT32_C(1) << 22; break;
    case FPEMU_RUP: k.add = (UINT32_C(1) << 23) - 1; break;
    case FPEMU_RTZ: case FPEMU_RDN: case FPEMU_RTO: k.add = 0; break;
    default: return k; /* sr */
    }
    k.ok = 1;
    k.hi = (UINT32_C(255) << 23) - k.add; /* the least u whose (u + add) >> 23 is 255 */
    return k;
}

/* ---- hardware converters ----------------------------------------------
 * fpemu_encode_f32 to f16 and to bf16 in rne, where the CPU has a converter
 * whose rounding is that one: F16C vcvtps2ph (16 lanes with AVX-512, else
 * 8) and AVX512-BF16 vcvtneps2bf16. Both round to nearest even, give
 * IEEE overflow to inf and signed zeros, and handle subnormal results; so
 * they are used when the context asks for exactly that: rne, no sat, ftz,
 * daz or tininess before rounding, no telemetry, the format f16's or
 * bf16's IEEE layout in a 16-bit container. What they do not give:
 *  - NaN: both return the input's NaN quietened (sign and top payload
 *    kept), where fpemu's policy may want another (canonical: 0x7E00,
 *    0x7FC0; a signalling NaN raises invalid). Elements with a NaN input
 *    are redone one by one by the scalar conversion.
 *  - bf16: vcvtneps2bf16 reads f32 denormal inputs as zero (their exact
 *    result is a bf16 subnormal) and sets no flag. Denormal inputs are
 *    redone by the scalar conversion; the flags of the others are computed
 *    beside the conversion: inexact iff some low 16 bits are nonzero,
 *    overflow (with inexact) iff some |x| >= 0x7F7F8000 (rounds past the
 *    largest finite); no other element can be tiny.
 *  - f16: the flags come from MXCSR: the loop runs under a clean MXCSR
 *    (exceptions masked, no FTZ/DAZ, flags clear; the caller's is put
 *    back after) and reads precision, underflow and overflow from it. x86
 *    detects tininess after rounding (SoftFloat's 8086 specialisation
 *    says the same), which is fpemu's default.
 * That the hardware agrees is checked, not assumed: on first use, a
 * self-test runs a set of f32 patterns (zeros, denormals, the borders of
 * the subnormal grid, min normal, ties, the overflow threshold, max
 * finite, inf, NaNs, random ones) through the hardware path one element at
 * a time and in a block, against the scalar conversion, codes and flags;
 * a converter that differs anywhere is not used (the bit-exact kernels of
 * cast.c run instead). tests/t_hwconv compares the two paths over a
 * stride sample of all f32 patterns. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HW_X86 1
int emu__cast_isa(int level); /* cast.c */

enum { HW_BLK = 1024 };
#define HW_F16_512 __attribute__((target("avx512f,avx512bw,avx512vl,f16c,avx")))
#define HW_F16_256 __attribute__((target("f16c,avx")))
#define HW_BF16 __attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl,avx512dq")))

/* f16, 16 lanes: codes of src[0..n) into dst; returns whether some input
 * is a NaN (the MXCSR flags are the caller's to read). */
HW_F16_512 static int hw_f16_512(const float *src, uint16_t *dst, size_t n) {
    __mmask16 nan = 0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(src + i);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    if (i < n) {
        __mmask16 live = (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(live, src + i);
        _mm256_mask_storeu_epi16(dst + i, live, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        nan |= _mm512_mask_cmp_ps_mask(live, v, v, _CMP_UNORD_Q);
    }
    return nan != 0;
}
HW_F16_256 static int hw_f16_256(const float *src, uint16_t *dst, size_t n) {
    __m256 nan = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(src + i);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    if (i < n) { /* the last few through a buffer */
        float b[8] = {0};
        uint16_t h[8];
        memcpy(b, src + i, (n - i) * 4);
        __m256 v = _mm256_loadu_ps(b);
        _mm_storeu_si128((__m128i *)(void *)h, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        memcpy(dst + i, h, (n - i) * 2);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    return _mm256_movemask_ps(nan) != 0;
}

/* bf16, 16 lanes: codes into dst; *bad when some input is a NaN or a
 * denormal; else the flags: inexact (checked while nx is set: not yet
 * known) iff some low 16 bits are nonzero, overflow (while of) iff some
 * |x| is in [0x7F7F8000, inf). */
#define BF16_OVF 0x7F7F8000u /* |x| from here rounds past the largest finite (0x7F7F) to inf */
static inline __attribute__((always_inline)) HW_BF16 unsigned hw_bf16_body(const float *src, uint16_t *dst, size_t n,
                                                                            int *bad, int nx, int of) {
    __m512i nxa = _mm512_setzero_si512();
    __m512 mx = _mm512_setzero_ps(); /* the largest |x| (vrangeps, no exceptions: max of magnitudes, sign cleared) */
    const __m512i lowm = _mm512_set1_epi32(0xFFFF);
    __mmask16 bk = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) { /* two vectors a step: half the loop's own instructions */
        __m512 v = _mm512_loadu_ps(src + i), w = _mm512_loadu_ps(src + i + 16);
        __m256bh h = _mm512_cvtneps_pbh(v), g = _mm512_cvtneps_pbh(w);
        memcpy(dst + i, &h, 32);
        memcpy(dst + i + 16, &g, 32);
        bk |= _mm512_fpclass_ps_mask(v, 0xA1) | _mm512_fpclass_ps_mask(w, 0xA1); /* QNaN 0x01 | SNaN 0x80 | denormal 0x20 */
        if (nx) /* nxa | (u & 0xFFFF) */
            nxa = _mm512_ternarylogic_epi32(nxa, _mm512_or_si512(_mm512_castps_si512(v), _mm512_castps_si512(w)), lowm, 0xF8);
        if (of) mx = _mm512_range_round_ps(mx, _mm512_range_round_ps(v, w, 0x0B, _MM_FROUND_NO_EXC), 0x0B, _MM_FROUND_NO_EXC);
    }
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(src + i);
        __m256bh h = _mm512_cvtneps_pbh(v);
        memcpy(dst + i, &h, 32);
        bk |= _mm512_fpclass_ps_mask(v, 0xA1);
        nxa = _mm512_ternarylogic_epi32(nxa, _mm512_castps_si512(v), lowm, 0xF8);
        mx = _mm512_range_round_ps(mx, v, 0x0B, _MM_FROUND_NO_EXC);
    }
    if (i < n) {
        __mmask16 live = (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(live, src + i);
        __m256bh h = _mm512_cvtneps_pbh(v);
        __m256i hi;
        memcpy(&hi, &h, 32);
        _mm256_mask_storeu_epi16(dst + i, live, hi);
        bk |= _mm512_mask_fpclass_ps_mask(live, v, 0xA1);
        __m512i u = _mm512_castps_si512(v); /* dead lanes are +0: no flag */
        nxa = _mm512_ternarylogic_epi32(nxa, u, lowm, 0xF8);
        mx = _mm512_range_round_ps(mx, v, 0x0B, _MM_FROUND_NO_EXC);
    }
    *bad = bk != 0;
    unsigned fl = _mm512_test_epi32_mask(nxa, nxa) ? FPEMU_FLAG_INEXACT : 0;
    /* (a NaN in mx comes with *bad; the lane max may be an inf: look again) */
    if (!bk && _mm512_cmpge_epu32_mask(_mm512_castps_si512(mx), _mm512_set1_epi32((int)BF16_OVF)))
        for (size_t j = 0; j < n; j++) {
            uint32_t a = emu__fbits(src[j]) & 0x7FFFFFFFu;
            if (a >= BF16_OVF && a < 0x7F800000u) fl |= FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
        }
    return fl;
}
HW_BF16 static unsigned hw_bf16_11(const float *s, uint16_t *d, size_t n, int *bad) { return hw_bf16_body(s, d, n, bad, 1, 1); }
HW_BF16 static unsigned hw_bf16_01(const float *s, uint16_t *d, size_t n, int *bad) { return hw_bf16_body(s, d, n, bad, 0, 1); }
HW_BF16 static unsigned hw_bf16_10(const float *s, uint16_t *d, size_t n, int *bad) { return hw_bf16_body(s, d, n, bad, 1, 0); }
HW_BF16 static unsigned hw_bf16_00(const float *s, uint16_t *d, size_t n, int *bad) { return hw_bf16_body(s, d, n, bad, 0, 0); }

/* 0: none; 1: f16 256-bit; 2: f16 512-bit; bf16: 1. Decided once (cpuid
 * and the self-test), -1 before. emu__hwconv turns the use off for tests. */
static int hw_f16_kind = -1, hw_bf16_kind = -1, hw_enabled = 1;

/* MXCSR's precision (0x20), underflow (0x10) and overflow (0x08) flags as
 * fpemu's (invalid, from signalling NaNs, and denormal are not fpemu's:
 * NaN inputs are redone by the bit-exact path) */
static unsigned hw_mxcsr_flags(unsigned got) {
    return (got & 0x20 ? FPEMU_FLAG_INEXACT : 0) | (got & 0x10 ? FPEMU_FLAG_UNDERFLOW : 0) | (got & 0x08 ? FPEMU_FLAG_OVERFLOW : 0);
}

/* One array through the hardware, a block at a time; a block with an
 * element the converter does not do as fpemu does goes again through the
 * bit-exact kernels (cast.c), which also give its flags. f16's flags are
 * read from MXCSR once for the whole array, under a clean MXCSR
 * (exceptions masked, rne, no FTZ/DAZ, flags clear) and the caller's put
 * back: a redone block's flags there are those of its other elements,
 * which the bit-exact path raises too. bf16's: per block, and only those
 * not yet raised are looked for. */
static void hw_encode(const fpemu_format *fmt, int bf, int kind, uint16_t *dst, const float *src, size_t n, fpemu_ctx *ctx) {
    unsigned all = ctx->flags, csr = 0;
    if (!bf) {
        csr = emu__fpenv_enter();
    }
    for (size_t i0 = 0; i0 < n; i0 += HW_BLK) {
        size_t m = n - i0 < HW_BLK ? n - i0 : HW_BLK;
        int bad;
        if (bf) {
            int nx = !(all & FPEMU_FLAG_INEXACT), of = !(all & FPEMU_FLAG_OVERFLOW);
            unsigned fl = (nx ? of ? hw_bf16_11 : hw_bf16_10 : of ? hw_bf16_01 : hw_bf16_00)(src + i0, dst + i0, m, &bad);
            if (!bad) all |= fl;
        } else bad = kind == 2 ? hw_f16_512(src + i0, dst + i0, m) : hw_f16_256(src + i0, dst + i0, m);
        if (!bad) continue;
        fpemu_ctx one = *ctx;
        one.flags = 0;
        if (!emu__encode_fast(fmt, dst + i0, src + i0, m, &one, NULL))
            for (size_t i = i0; i < i0 + m; i++) dst[i] = (uint16_t)fpemu_convert(fmt, emu__f32(), emu__fbits(src[i]), &one);
        all |= one.flags;
    }
    if (!bf) {
        all |= hw_mxcsr_flags(emu__fpenv_get());
        emu__fpenv_leave(csr);
    }
    __asm__ volatile("vzeroupper"); /* SSE code after AVX code runs slowly otherwise (cast.c's run) */
    ctx->flags |= all;
}

/* The self-test: patterns at every border of f16 and bf16, one at a time
 * and all together, against the scalar conversion. */
static int hw_selftest(const fpemu_format *fmt, int bf, int kind) {
    enum { NP = 512 };
    static const uint32_t fixed[] = {0, 1, 0x7FFFFF, 0x400000, 0x800000, 0x7F7FFFFF, 0x7F800000, 0x7FC00000, 0x7F800001,
                                     0x7FA00000, 0x7FFFFFFF, 0x7FC00001, 0x3F800000, 0x3F801000, 0x3F808000, 0x3F818000,
                                     0x477FE000, 0x477FF000, 0x477FEFFF, 0x477FF001, 0x47800000, 0x38800000, 0x387FF000,
                                     0x387FE000, 0x387FFFFF, 0x33800000, 0x33000000, 0x33000001, 0x32FFFFFF, 0x33C00000,
                                     0x7F7F8000, 0x7F7F7FFF, 0x7F7F0000, 0x00808000, 0x00800000, 0x007F8000, 0x00000080,
                                     0x00008000, 0x0000C000, 0x00018000, 0x38000000, 0x37800000, 0x387FC000, 0x38802000};
    uint32_t p[NP];
    size_t k = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        for (int d = -1; d <= 1; d++) p[k++] = fixed[i] + (uint32_t)d, p[k++] = (fixed[i] + (uint32_t)d) | 0x80000000u;
    uint64_t r = 0x9E3779B97F4A7C15u;
    while (k < NP) r = emu__mix(r, k), p[k++] = (uint32_t)(r >> 7);
    float in[NP];
    memcpy(in, p, sizeof in);
    uint16_t got[NP], want[NP];
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    unsigned wall = 0;
    const fpemu_format *f32 = emu__f32();
    for (size_t i = 0; i < NP; i++) {
        fpemu_ctx e = c, h = c;
        want[i] = (uint16_t)fpemu_convert(fmt, f32, p[i], &e);
        wall |= e.flags;
        hw_encode(fmt, bf, kind, &got[i], &in[i], 1, &h); /* alone: its own flags */
        if (got[i] != want[i] || h.flags != e.flags) return 0;
    }
    fpemu_ctx h = c;
    hw_encode(fmt, bf, kind, got, in, NP, &h);
    return !memcmp(got, want, sizeof got) && h.flags == wall;
}

static int hw_cpu_f16(int level) {
    unsigned a, b, c, d;
    if (level < 1 || !__get_cpuid(1, &a, &b, &c, &d) || !(c >> 29 & 1)) return 0; /* F16C (with AVX: cast level >= 1) */
    __builtin_cpu_init();
    return level >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") ? 2 : 1;
}
static int hw_cpu_bf16(int level) {
    unsigned a, b, c, d;
    /* CPUID.(7,1):EAX[5] AVX512_BF16, with the AVX-512 kernels' level (which checked the OS's ZMM state) */
    __builtin_cpu_init();
    return level >= 2 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1) && __builtin_cpu_supports("avx512dq");
}

/* Internal hook for tests and benchmarks: on < 0 asks, 0 turns the
 * converters off, 1 back on. Returns whether they are on. */
int emu__hwconv(int on);
int emu__hwconv(int on) {
    if (on >= 0) __atomic_store_n(&hw_enabled, on != 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&hw_enabled, __ATOMIC_RELAXED);
}

static int hw_kind(const fpemu_format *fmt, const fpemu_ctx *ctx, const fpemu_cast_stats *stats, int *bf);
/* Internal hook for tests: the converter fpemu_encode_f32 uses for fmt in
 * a default context at the kernels' level in force (0: none, the CPU
 * lacks it, the self-test refused it or it is turned off; 1, 2: F16C
 * 8 or 16 lanes, or AVX512-BF16). */
int emu__hwconv_kind(const fpemu_format *fmt);
int emu__hwconv_kind(const fpemu_format *fmt) {
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    int bf;
    return hw_kind(fmt, &c, NULL, &bf);
}

/* The kind of converter fpemu_encode_f32 may use for fmt under ctx (0:
 * none). The first call per format runs the self-test. */
static int hw_kind(const fpemu_format *fmt, const fpemu_ctx *ctx, const fpemu_cast_stats *stats, int *bf) {
    if (stats || ctx->round != FPEMU_RNE || ctx->sat || ctx->ftz || ctx->daz || ctx->tininess_before ||
        !__atomic_load_n(&hw_enabled, __ATOMIC_RELAXED))
        return 0;
    int *slot;
    if (emu__ieee16(fmt, 5, 10, 15)) *bf = 0, slot = &hw_f16_kind;
    else if (emu__ieee16(fmt, 8, 7, 127)) *bf = 1, slot = &hw_bf16_kind;
    else return 0;
    int level = emu__cast_isa(-1); /* the kernels' level: forced lower, no converter either */
    int k = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (k < 0) {
        k = *bf ? hw_cpu_bf16(2) : hw_cpu_f16(2);
        if (k && !hw_selftest(fmt, *bf, k)) k = 0;
        __atomic_store_n(slot, k, __ATOMIC_RELEASE);
    }
    if (!*bf && k == 2 && level < 2) k = 1;
    if (level < 1 || (*bf && level < 2)) k = 0;
    return k;
}
#endif

void fpemu_encode_f32(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                      fpemu_cast_stats *stats) {
#ifdef HW_X86
    int bf, kind = hw_kind(fmt, ctx, stats, &bf);
    if (kind) {
        hw_encode(fmt, bf, kind, dst, src, n, ctx);
        skip_draws(ctx, n);
        return;
    }
#endif
    if (emu__encode_fast(fmt, dst, src, n, ctx, stats)) {
        skip_draws(ctx, n); /* as the element-by-element loop below does */
        return;
    }
    const fpemu_format *f32 = emu__f32();
    uint64_t base = ctx->counter;
    size_t pos = ctx->sr_pos;
    unsigned all = 0;
    const emu_sr_cut k = sr32_for(fmt, ctx);
    const emu_e8_cut e8 = e8_for(fmt, ctx);
    /* the cut 8 elements at a time where the CPU has it (cast.c): it marks
     * the elements it did in mask, the loop below does the others */
    enum { BLK = 1024 };
    uint8_t mask[BLK / 8];
    const int vec = k.ok && !fmt->pad && (fmt->container == 8 || fmt->container == 16);
    for (size_t i0 = 0; i0 < n; i0 += BLK) {
        const size_t m = n - i0 < BLK ? n - i0 : BLK;
        const size_t done = vec ? emu__sr_cut_fast(&k, ctx->seed, base + i0, ctx->sr_bits, src + i0, m,
                                                   (uint8_t *)dst + i0 * (fmt->container / 8), fmt->container / 8, mask,
                                                   &all, stats)
                                : 0;
        for (size_t j = 0; j < m; j++) {
            if (j < done) {
                if (mask[j >> 3] == 0xFF) { /* j is a multiple of 8 here */
                    j += 7;
                    continue;
                }
                if (mask[j >> 3] >> (j & 7) & 1) continue;
            }
            const size_t i = i0 + j;
            uint32_t u = emu__fbits(src[i]), mag = u & 0x7FFFFFFFu;
            if (k.ok && mag - k.lo < k.hi - k.lo && (!(u >> 31) || k.signbit)) {
                uint32_t low = mag & k.lowmask;
                uint64_t up = emu__sr_up_low(emu__mix(ctx->seed, base + i), low, k.sh, ctx->sr_bits);
                uint64_t code = ((uint64_t)((mag >> k.sh) - k.rebias) + up) | (u >> 31 ? k.signbit : 0);
                fpemu_code_store(fmt, dst, i, emu__unstrip(fmt, code));
                all |= low != 0; /* FPEMU_FLAG_INEXACT */
                if (stats) { /* all emu__count_cast counts of a normal result from a finite input */
                    stats->n++;
                    if (fabsf(src[i]) > stats->amax) stats->amax = fabsf(src[i]);
                }
                continue;
            }
            if (e8.ok && u - (UINT32_C(1) << 23) < e8.hi - (UINT32_C(1) << 23)) {
                ((uint8_t *)dst)[i] = (uint8_t)((u + e8.add) >> 23);
                all |= (u & 0x7FFFFFu) != 0; /* FPEMU_FLAG_INEXACT */
                if (stats) { /* a normal result from a finite input */
                    stats->n++;
                    if (src[i] > stats->amax) stats->amax = src[i];
                }
                continue;
            }
            unsigned saved = ctx->flags;
            ctx->flags = 0;
            emu__array_at(ctx, base, pos, i);
            uint64_t code = fpemu_convert(fmt, f32, u, ctx);
            fpemu_code_store(fmt, dst, i, code);
            if (stats) emu__count_cast(fmt, stats, src[i], code, ctx->flags, 1);
            all |= ctx->flags;
            ctx->flags = saved;
        }
    }
    ctx->flags |= all;
    emu__array_at(ctx, base, pos, n);
}

/* The decode tables serve fmt under ctx: every value of fmt is a float,
 * the tables are built, and no daz turns a subnormal code into zero. */
static int decode_tables(const fpemu_format *fmt, const fpemu_ctx *ctx) {
    return emu__fits_f32(fmt) && fmt->decode_table && !ctx->daz;
}

/* One code through the tables (decode_tables holds): a NaN code as
 * fpemu_to_float delivers it (per the NaN policy), not with the table's
 * sign: -NaN for 0x80 of fnuz formats. */
static inline float decode_one(const fpemu_format *fmt, uint64_t code, fpemu_ctx *ctx) {
    const uint64_t c = emu__strip(fmt, code);
    return fmt->class_table[c] < FPEMU_CLASS_QNAN ? (float)fmt->decode_table[c] : fpemu_to_float(fmt, code, ctx);
}

void emu__decode_codes_f32(const fpemu_format *fmt, float *dst, const uint64_t *codes, size_t n, fpemu_ctx *ctx) {
    if (decode_tables(fmt, ctx))
        for (size_t i = 0; i < n; i++) dst[i] = decode_one(fmt, codes[i], ctx);
    else
        for (size_t i = 0; i < n; i++) dst[i] = fpemu_to_float(fmt, codes[i], ctx);
}

void fpemu_decode_f32(const fpemu_format *fmt, float *dst, const void *src, size_t n, fpemu_ctx *ctx) {
    if (decode_tables(fmt, ctx)) {
        /* decode_one, written out for the common containers */
        const double *t = fmt->decode_table;
        const uint8_t *cls = fmt->class_table;
        /* the tables have 2^bits entries: bits of a container outside the
         * field are ignored (fpemu.h), never an index */
        const unsigned m = (unsigned)((UINT64_C(1) << fmt->bits) - 1);
        if (!fmt->pad && fmt->container == 8) { /* the common containers without a call per element */
            const uint8_t *p = src;
            for (size_t i = 0; i < n; i++) {
                unsigned c = p[i] & m;
                dst[i] = cls[c] < FPEMU_CLASS_QNAN ? (float)t[c] : fpemu_to_float(fmt, c, ctx);
            }
        } else if (!fmt->pad && fmt->container == 16) {
            const uint16_t *p = src;
            for (size_t i = 0; i < n; i++) {
                unsigned c = p[i] & m;
                dst[i] = cls[c] < FPEMU_CLASS_QNAN ? (float)t[c] : fpemu_to_float(fmt, c, ctx);
            }
        } else
            for (size_t i = 0; i < n; i++) dst[i] = decode_one(fmt, fpemu_code_load(fmt, src, i), ctx);
        return;
    }
    for (size_t i = 0; i < n; i++) dst[i] = fpemu_to_float(fmt, fpemu_code_load(fmt, src, i), ctx);
}

/* Does decode(encode(x)) give x back, with no flag and no draw, for every
 * float x that is not a NaN, under ctx? fmt holds every float exactly (p
 * >= 24, its range and subnormal grid cover f32's), has IEEE infinities,
 * signed zeros and NaNs, and no policy of ctx changes an exact value: sat
 * (an infinity becomes max finite), daz (a float subnormal reads as zero),
 * ftz (a float subnormal is tiny in fmt, or in f32 when decoded back), a
 * rounding mode outside the enum. */
static int round_f32_identity(const fpemu_format *fmt, const fpemu_ctx *ctx) {
    int lowest = fmt->has_subnormals ? fmt->emin - fmt->mbits : fmt->emin; /* exponent of the smallest quantum */
    return fmt->p >= 24 && fmt->is_signed && fmt->has_negzero && fmt->inf == FPEMU_INF_IEEE &&
           fmt->nan == FPEMU_NANS_IEEE && fmt->max_finite >= FLT_MAX && lowest <= -149 && !ctx->sat && !ctx->daz &&
           !ctx->ftz && (unsigned)ctx->round < FPEMU_ROUND_COUNT;
}

void fpemu_round_f32(const fpemu_format *fmt, float *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats) {
    if (round_f32_identity(fmt, ctx)) { /* f32 itself, f64: every value but a NaN passes unchanged */
        for (size_t i = 0; i < n; i++) {
            float x = src[i];
            /* a NaN as the scalar conversions give it (the NaN policy; a
             * signalling NaN raises invalid): it takes no draw */
            dst[i] = x == x ? x : fpemu_to_float(fmt, fpemu_from_float(fmt, x, ctx), ctx);
            if (stats) {
                stats->n++;
                if (!isfinite(x)) stats->nonfinite_in++;
                else {
                    if (fabsf(x) > stats->amax) stats->amax = fabsf(x);
                    if (x != 0 && fabsf(x) < fmt->min_normal) stats->subnormal++; /* f32's subnormals, in f32 */
                }
            }
        }
        skip_draws(ctx, n);
        return;
    }
    if (emu__round_fast(fmt, dst, src, n, ctx, stats)) {
        skip_draws(ctx, n);
        return;
    }
    /* Encode in chunks into a small code buffer, then decode in place. */
    enum { CHUNK = 1024 };
    uint64_t buf[CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t m = n - i < CHUNK ? n - i : CHUNK;
        fpemu_encode_f32(fmt, buf, src + i, m, ctx, stats);
        /* the decode draws nothing from the stream of the encode: where a
         * value of fmt is not always a float (p > 24, or bits below 2^-149)
         * it rounds, which in sr would take draws and shift every later
         * chunk's (element i takes draw counter + i) */
        uint64_t counter = ctx->counter;
        size_t pos = ctx->sr_pos;
        fpemu_decode_f32(fmt, dst + i, buf, m, ctx);
        ctx->counter = counter, ctx->sr_pos = pos;
    }
}

void fpemu_convert_array(const fpemu_format *dst_fmt, void *dst, const fpemu_format *src_fmt, const void *src, size_t n,
                         fpemu_ctx *ctx) {
    uint64_t base = ctx->counter;
    size_t pos = ctx->sr_pos;
    for (size_t i = 0; i < n; i++) {
        emu__array_at(ctx, base, pos, i);
        fpemu_code_store(dst_fmt, dst, i, fpemu_convert(dst_fmt, src_fmt, fpemu_code_load(src_fmt, src, i), ctx));
    }
    emu__array_at(ctx, base, pos, n);
}
