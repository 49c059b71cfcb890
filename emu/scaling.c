/* SPDX-License-Identifier: MIT */
/* scaling.c: scale factors of the low-precision GEMM recipes (scaling.h).
 * Every step the frameworks do in f32 is an f32 operation here, in the
 * same order, so scales and quantised elements match bit for bit. */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include "scaling.h"
#include "recipe.h"
#include "internal.h"

/* The public functions that compute in floats run under the library's
 * floating-point environment (internal.h emu__fpenv_enter): a caller's
 * rounding mode, FTZ or DAZ changes none of their results, and they raise
 * no flag in the caller's. The recipes, which run under it already, call
 * the bodies (emu__*) directly; every body is (internal.h). */
#define CLEAN(type, expr)                                                                                              \
    do {                                                                                                               \
        const unsigned fe_ = emu__fpenv_enter();                                                                       \
        type r_ = (expr);                                                                                              \
        EMU_LAUNDER(r_);                                                                                               \
        emu__fpenv_leave(fe_);                                                                                         \
        return r_;                                                                                                     \
    } while (0)
#define CLEAN_VOID(stmt)                                                                                               \
    do {                                                                                                               \
        const unsigned fe_ = emu__fpenv_enter();                                                                       \
        stmt;                                                                                                          \
        emu__fpenv_leave(fe_);                                                                                         \
    } while (0)

/* A registry format by name, looked up once (registry descriptors never
 * move): the NVFP4 helpers run once per 16-element block, where the name
 * search of fpemu_format_get was a fifth of an NVFP4 GEMM's time. */
static const fpemu_format *registry_format(_Atomic(const fpemu_format *) *slot, const char *name) {
    const fpemu_format *f = atomic_load_explicit(slot, memory_order_acquire);
    if (!f) {
        f = fpemu_format_get(name, NULL, 0);
        atomic_store_explicit(slot, f, memory_order_release);
    }
    return f;
}
static _Atomic(const fpemu_format *) fmt_e4m3, fmt_e5m2, fmt_e2m1;
#define E4M3() registry_format(&fmt_e4m3, "e4m3")
#define E5M2() registry_format(&fmt_e5m2, "e5m2")
#define E2M1() registry_format(&fmt_e2m1, "e2m1")

static float pow2_floor(float x) {
    if (!(x > 0) || isinf(x)) return x; /* exp2(floor(log2 x)) of 0, NaN, inf */
    int e;
    frexpf(x, &e);
    return ldexpf(1.0f, e - 1);
}

/* torch.clamp(x, min=lo): a NaN stays NaN (so the scale arithmetic after
 * it carries an inf or NaN amax through as torch does). */
static float clamp_min_nan(float x, float lo) { return x > lo || isnan(x) ? x : lo; }

void fpemu_scaling_current_opts_te(fpemu_scaling_current_opts *o) {
    memset(o, 0, sizeof *o);
}

void fpemu_scaling_current_opts_torchao(fpemu_scaling_current_opts *o) {
    memset(o, 0, sizeof *o);
    o->eps = 1e-12f;
    o->div_in_f64 = 1;
    o->torch_nonfinite = 1;
}

float emu__current_scale(const fpemu_scaling_current_opts *o, float amax, double fmt_max) {
    /* TE: amax 0, inf or NaN keeps scale 1. torch: fmt_max / inf = 0 and
     * NaN stay through the division and the power-of-two rounding. */
    if ((isnan(amax) || isinf(amax)) && !o->torch_nonfinite) return 1.0f;
    float a = clamp_min_nan(amax, o->eps);
    if (a == 0) return 1.0f;
    float s = o->div_in_f64 ? (float)(fmt_max / (double)a) : (float)fmt_max / a;
    if (isinf(s)) s = FLT_MAX; /* TE clamps an infinite scale */
    if (o->pow2) s = pow2_floor(s);
    return s;
}

float fpemu_scaling_current_scale(const fpemu_scaling_current_opts *o, float amax, double fmt_max) {
    CLEAN(float, emu__current_scale(o, amax, fmt_max));
}

static float msamp_scale(float amax, double fmt_max, float prev) {
    /* torch.where(amax > 0 & isfinite(amax), sf, scale), then where(exp <
     * 0, 1/sf, sf): an infinite amax has exp = floor(log2(0)) = -inf, so it
     * gives 1/scale; 0 (exp = +inf) and NaN (exp = NaN) give scale */
    if (isinf(amax)) return 1.0f / prev;
    if (!(amax > 0)) return prev;
    float q = (float)fmt_max / amax;
    float e = floorf((float)log2((double)q)); /* q = inf (amax tiny): e = inf */
    float a = fabsf(e);
    float sf = a >= 128 ? INFINITY : ldexpf(1.0f, (int)a); /* round(pow(2, |e|)) in f32 */
    return e < 0 ? 1.0f / sf : sf;
}

float fpemu_scaling_msamp_scale(float amax, double fmt_max, float prev) { CLEAN(float, msamp_scale(amax, fmt_max, prev)); }

/* The largest |x| bit pattern of x[0 .. n) (the magnitude as an integer:
 * the order of non-NaN magnitudes; a NaN is above 0x7F800000): 16 lanes at
 * a time on AVX-512 (a masked load for the last few), a plain loop
 * elsewhere. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static uint32_t amax_bits_avx512(const float *x, size_t n) {
    const __m512i abs = _mm512_set1_epi32(0x7FFFFFFF);
    __m512i m0 = _mm512_setzero_si512(), m1 = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_loadu_si512(x + i), abs));
        m1 = _mm512_max_epu32(m1, _mm512_and_si512(_mm512_loadu_si512(x + i + 16), abs));
    }
    for (; i < n; i += 16) { /* the last 1-31: whole 16s, then a masked load (inactive lanes read as 0) */
        __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_maskz_loadu_epi32(k, x + i), abs));
    }
    return _mm512_reduce_max_epu32(_mm512_max_epu32(m0, m1));
}
#endif

static uint32_t amax_bits(const float *x, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    /* (short arrays, NVFP4's blocks of 16: the plain loop costs less than the vector set-up) */
    if (n >= 64 && __builtin_cpu_supports("avx512f")) return amax_bits_avx512(x, n);
#endif
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, 4);
        u &= 0x7FFFFFFFu;
        m = u > m ? u : m;
    }
    return m;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* emu__block_amax's whole blocks (sb a multiple of 16), one reduction per
 * block; a block holding a NaN (bits above 0x7F800000) goes to
 * fpemu_scaling_amax_f32 for its first NaN. Returns the blocks done. */
__attribute__((target("avx512f"))) static size_t block_amax_avx512(const float *x, size_t nb, size_t sb, float *am) {
    const __m512i abs = _mm512_set1_epi32(0x7FFFFFFF);
    for (size_t b = 0; b < nb; b++) {
        const float *xb = x + b * sb;
        __m512i m = _mm512_and_si512(_mm512_loadu_si512(xb), abs);
        for (size_t i = 16; i < sb; i += 16) m = _mm512_max_epu32(m, _mm512_and_si512(_mm512_loadu_si512(xb + i), abs));
        uint32_t u = _mm512_reduce_max_epu32(m);
        if (u > 0x7F800000u) am[b] = fpemu_scaling_amax_f32(xb, sb, 1);
        else memcpy(&am[b], &u, 4);
    }
    return nb;
}
#endif

void emu__block_amax(const float *x, size_t n, size_t sb, float *am) {
    size_t b = 0, nb = sb ? n / sb : 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (nb && sb % 16 == 0 && __builtin_cpu_supports("avx512f")) b = block_amax_avx512(x, nb, sb, am);
#endif
    for (; b * sb < n; b++) am[b] = fpemu_scaling_amax_f32(x + b * sb, n - b * sb < sb ? n - b * sb : sb, 1);
}

float fpemu_scaling_amax_f32(const float *x, size_t n, size_t stride) {
    if (stride == 1) { /* no NaN: the largest magnitude (a NaN: the first one, below) */
        uint32_t b = amax_bits(x, n);
        if (b <= 0x7F800000u) {
            float r;
            memcpy(&r, &b, 4);
            return r;
        }
    }
    float m = 0;
    for (size_t i = 0; i < n; i++) {
        float v = fabsf(x[i * stride]);
        if (isnan(v)) return v;
        if (v > m) m = v;
    }
    return m;
}

/* ---- delayed scaling -------------------------------------------------------- */

const fpemu_format *fpemu_scaling_fp8_format_for(fpemu_scaling_fp8_format f, int is_gradient) {
    return f == FPEMU_SCALING_FP8_HYBRID && is_gradient ? E5M2() : E4M3();
}

int fpemu_scaling_delayed_init(fpemu_scaling_delayed *s, double fmt_max, int len, fpemu_scaling_amax_algo algo, float margin) {
    memset(s, 0, sizeof *s);
    if (len < 1 || len > (1 << 24)) return -1;
    s->history = calloc((size_t)len, sizeof *s->history);
    if (!s->history) return -1;
    s->len = len;
    s->algo = algo;
    s->margin = margin;
    s->fmt_max = (float)fmt_max;
    s->scale = 1.0f;
    s->scale_inv = 1.0f;
    return 0;
}

void fpemu_scaling_delayed_free(fpemu_scaling_delayed *s) {
    free(s->history);
    s->history = NULL;
    s->len = 0;
}

static void delayed_record(fpemu_scaling_delayed *s, float amax) {
    if (!s->len) return;
    float h = s->history[0];
    if (isnan(amax) || isnan(h)) s->history[0] = isnan(amax) ? amax : h;
    else if (amax > h) s->history[0] = amax;
}

void fpemu_scaling_delayed_record(fpemu_scaling_delayed *s, float amax) { CLEAN_VOID(delayed_record(s, amax)); }

float emu__scaling_delayed_scale(float amax, float fmt_max, float margin, float prev) {
    /* scaled_max = fp8_max * 2^-margin in f32, then scale = scaled_max / amax */
    float scaled_max = fmt_max * powf(2.0f, -margin);
    float scale = prev;
    if (isfinite(amax) && amax > 0) scale = scaled_max / amax;
    if (isinf(scale)) scale = FLT_MAX;
    return scale;
}

static void delayed_update(fpemu_scaling_delayed *s) {
    if (!s->len) return;
    /* TE amax_and_scale_update: the reduced amax is the max over the whole
     * history (slot 0 holds this step's amax), or slot 0 (most_recent) */
    const float last = s->history[0];
    float amax = 0;
    if (s->algo == FPEMU_SCALING_AMAX_MOST_RECENT) {
        amax = last;
    } else {
        for (int i = 0; i < s->len; i++) amax = fmaxf(amax, s->history[i]); /* fmaxf: NaN slots ignored, as CUDA's */
    }
    float scale = emu__scaling_delayed_scale(amax, s->fmt_max, s->margin, s->scale);
    s->scale = scale;
    s->scale_inv = 1.0f / scale;
    /* roll: slot i takes slot i+1, the newest amax moves to slot len-1,
     * slot 0 is cleared for the next step */
    for (int i = 0; i + 1 < s->len; i++) s->history[i] = s->history[i + 1];
    s->history[s->len - 1] = last;
    s->history[0] = 0;
    if (s->len == 1) s->history[0] = 0;
}

void fpemu_scaling_delayed_update(fpemu_scaling_delayed *s) { CLEAN_VOID(delayed_update(s)); }

/* ---- MX ------------------------------------------------------------------- */

int fpemu_scaling_mx_emax_elem(const fpemu_format *elem) { return elem->emax; }

uint8_t emu__mx_scale(fpemu_scaling_mx_rule rule, const fpemu_format *elem, float amax) {
    if (isnan(amax) || isinf(amax)) return 0xFF;
    if (rule == FPEMU_SCALING_MX_FLOOR) {
        if (amax == 0) return 0x00; /* floor(log2 0) = -inf, clamped to -127 */
        int e;
        frexpf(amax, &e); /* amax in [2^(e-1), 2^e) */
        int shared = (e - 1) - fpemu_scaling_mx_emax_elem(elem);
        if (shared < -127) shared = -127;
        if (shared > 127) shared = 127;
        return (uint8_t)(shared + 127);
    }
    /* RCEIL (TE/cuBLAS): v = amax * fl32(1/fmt_max) in f32, rounded up to a
     * power of two (cvt.rp.satfinite.ue8m0x2.f32) */
    float rcp = (float)(1.0 / elem->max_finite);
    float v = amax * rcp;
    if (isinf(v)) return 0xFE;
    if (v == 0) return 0x00;
    int e;
    float m = frexpf(v, &e); /* v = m * 2^e, m in [0.5, 1) */
    int E = m == 0.5f ? e - 1 : e;
    if (E < -127) E = -127;
    if (E > 127) E = 127;
    return (uint8_t)(E + 127);
}

uint8_t fpemu_scaling_mx_scale(fpemu_scaling_mx_rule rule, const fpemu_format *elem, float amax) {
    CLEAN(uint8_t, emu__mx_scale(rule, elem, amax));
}

/* x / 2^(E-127) as x * 2^(127-E) in f32 (exact unless it falls below f32's
 * normal range, where no element format can tell the difference) */
float emu__mx_encode_factor(uint8_t code) { return code == 0xFF ? NAN : ldexpf(1.0f, 127 - (int)code); }

void emu__widen_codes(const fpemu_format *fmt, uint64_t *out, const void *cbuf, size_t m) {
    switch (fmt->container) {
    case 8: for (size_t i = 0; i < m; i++) out[i] = ((const uint8_t *)cbuf)[i]; break;
    case 16: for (size_t i = 0; i < m; i++) out[i] = ((const uint16_t *)cbuf)[i]; break;
    default: for (size_t i = 0; i < m; i++) out[i] = fpemu_code_load(fmt, cbuf, i); break;
    }
}

/* the block casts' context: rne, saturating, flags nobody sees */
static fpemu_ctx own_ctx(void) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.sat = 1;
    return ctx;
}

void emu__own_encode(const fpemu_format *fmt, const float *y, size_t n, void *dst, fpemu_cast_stats *stats) {
    fpemu_ctx ctx = own_ctx();
    fpemu_encode_f32(fmt, dst, y, n, &ctx, stats);
}

void emu__own_cast(const fpemu_format *fmt, const float *y, size_t n, uint64_t *codes, float *vals, fpemu_cast_stats *stats) {
    if (!codes) {
        fpemu_ctx ctx = own_ctx();
        fpemu_round_f32(fmt, vals, y, n, &ctx, stats);
        return;
    }
    uint64_t out[EMU_CAST_CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += EMU_CAST_CHUNK) {
        size_t m = n - i0 < EMU_CAST_CHUNK ? n - i0 : EMU_CAST_CHUNK;
        emu__own_encode(fmt, y + i0, m, out, stats);
        emu__widen_codes(fmt, codes + i0, out, m);
    }
}

void emu__scaled_cast(const fpemu_format *fmt, float f, const float *x, size_t n, size_t stride, uint64_t *codes,
                      float *vals, fpemu_cast_stats *stats) {
    if (!codes) { /* values: scaled in place, one cast */
        for (size_t i = 0; i < n; i++) vals[i] = x[i * stride] * f;
        emu__own_cast(fmt, vals, n, NULL, vals, stats);
        return;
    }
    float buf[EMU_CAST_CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += EMU_CAST_CHUNK) {
        size_t m = n - i0 < EMU_CAST_CHUNK ? n - i0 : EMU_CAST_CHUNK;
        for (size_t i = 0; i < m; i++) buf[i] = x[(i0 + i) * stride] * f;
        emu__own_cast(fmt, buf, m, codes + i0, NULL, stats);
    }
}

void fpemu_scaling_mx_quantize_block(const fpemu_format *elem, uint8_t scale, const float *x, size_t n, size_t stride,
                                     uint64_t *codes, fpemu_cast_stats *stats) {
    CLEAN_VOID(emu__scaled_cast(elem, emu__mx_encode_factor(scale), x, n, stride, codes, NULL, stats));
}

/* ---- NVFP4 ------------------------------------------------------------------ */

float emu__nvfp4_tensor_scale(float tensor_amax) {
    float s = 2688.0f / tensor_amax; /* 448 * 6 */
    s = fminf(s, FLT_MAX);
    if (tensor_amax == 0.0f || s == 0.0f) return 1.0f;
    return s;
}

float fpemu_scaling_nvfp4_tensor_scale(float tensor_amax) { CLEAN(float, emu__nvfp4_tensor_scale(tensor_amax)); }

void emu__nvfp4_block_scales(const float *am, size_t n, float tensor_scale, uint8_t *codes) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.sat = 1;
    float dec[64];
    for (size_t i0 = 0; i0 < n; i0 += 64) {
        size_t m = n - i0 < 64 ? n - i0 : 64;
        for (size_t i = 0; i < m; i++) {
            float d = am[i0 + i] / 6.0f;
            dec[i] = d * tensor_scale;
        }
        fpemu_encode_f32(E4M3(), codes + i0, dec, m, &ctx, NULL); /* (e4m3's container is a byte) */
    }
}

uint8_t fpemu_scaling_nvfp4_block_scale(float block_amax, float tensor_scale) {
    uint8_t code;
    CLEAN_VOID(emu__nvfp4_block_scales(&block_amax, 1, tensor_scale, &code));
    return code;
}

float emu__nvfp4_encode_factor(uint8_t scale_code, float tensor_scale) {
    float dec = (float)fpemu_to_double(E4M3(), scale_code);
    return dec == 0 ? 0.0f : tensor_scale / dec;
}

void fpemu_scaling_nvfp4_quantize_block(uint8_t scale_code, float tensor_scale, const float *x, size_t n, size_t stride,
                                        uint64_t *codes, fpemu_cast_stats *stats) {
    CLEAN_VOID(emu__scaled_cast(E2M1(), emu__nvfp4_encode_factor(scale_code, tensor_scale), x, n, stride, codes, NULL, stats));
}

/* ---- blockwise ---------------------------------------------------------------- */

/* A NaN or inf amax: TE (pow2) takes scale 1 (compute_scale_from_amax);
 * DeepGEMM's torch arithmetic carries it through: clamp(NaN) = NaN, inf /
 * fmt_max = inf to decode, fmt_max / inf = 0 to encode, so the tile's
 * outputs are NaN. */
float emu__block_decode_scale(float amax, double fmt_max, float eps, int pow2) {
    if (pow2 && (isnan(amax) || isinf(amax))) return 1.0f;
    float a = clamp_min_nan(amax, eps);
    if (a == 0) return 1.0f;
    if (pow2) return 1.0f / emu__block_encode_scale(amax, fmt_max, eps, 1);
    return a / (float)fmt_max;
}

float emu__block_encode_scale(float amax, double fmt_max, float eps, int pow2) {
    if (pow2 && (isnan(amax) || isinf(amax))) return 1.0f;
    float a = clamp_min_nan(amax, eps);
    if (a == 0) return 1.0f;
    float s = (float)fmt_max / a;
    if (isinf(s)) s = FLT_MAX;
    if (pow2) s = pow2_floor(s);
    return s;
}

float fpemu_scaling_block_decode_scale(float amax, double fmt_max, float eps, int pow2) {
    CLEAN(float, emu__block_decode_scale(amax, fmt_max, eps, pow2));
}

float fpemu_scaling_block_encode_scale(float amax, double fmt_max, float eps, int pow2) {
    CLEAN(float, emu__block_encode_scale(amax, fmt_max, eps, pow2));
}
