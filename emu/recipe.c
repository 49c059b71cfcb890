/* SPDX-License-Identifier: MIT */
/* recipe.c: an operand's quantisation per scaling recipe (recipe.h
 * emu__quantize), the one implementation behind fpemu_gemm_f32,
 * fpemu_gemm_quantize_f32 (`fpemu cast --scaling`) and the training
 * engine's fp8 Linear layers; docs/scaling.md describes the recipes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include "recipe.h"
#include "internal.h"

static void seterr(char *err, size_t len, const char *msg) {
    if (err && len) snprintf(err, len, "%s", msg);
}

/* ceil(a / b) for a >= 0, b >= 1, without the overflow of (a + b - 1) / b */
static int cdiv(int a, int b) { return a / b + (a % b != 0); }

int emu__quant_nkb(const fpemu_gemm_scaling *s, int cols) {
    if (!s || cols < 0) return -1;
    switch (s->kind) {
    case FPEMU_GEMM_SCALING_NONE:
    case FPEMU_GEMM_SCALING_TENSOR:
    case FPEMU_GEMM_SCALING_GIVEN:
    case FPEMU_GEMM_SCALING_ROWWISE: return 1;
    case FPEMU_GEMM_SCALING_BLOCKWISE: return s->block_k >= 1 ? cdiv(cols, s->block_k) : -1;
    case FPEMU_GEMM_SCALING_MX: return cdiv(cols, 32);
    case FPEMU_GEMM_SCALING_NVFP4: return cdiv(cols, 16);
    default: return -1;
    }
}

/* The element casts of one call, through the caller's context: element
 * (r, c) takes draw r * cols + c of its stream, whatever order the recipe
 * visits its blocks in; to codes or (codes NULL) to values. */
typedef struct {
    fpemu_ctx *ctx;
    uint64_t base;
    size_t pos, cols;
    const fpemu_format *fmt;
    uint64_t *codes;
    void *ncodes; /* (emu_quant) */
    float *vals;
    fpemu_cast_stats *st;
    float buf[EMU_CAST_CHUNK];
    uint64_t cbuf[EMU_CAST_CHUNK];
} qcast;

/* Cast n elements x[0..n) into elements (r, c0 ..) (a run of the row-major
 * array, rows included): times f first when mul (every scaled recipe
 * multiplies, a factor of 1 included), as they are for NONE. Codes go
 * through a buffer of EMU_CAST_CHUNK; values are scaled in place and cast in one call
 * (x may be the values' own memory). */
static void qcast_seg(qcast *e, const float *x, size_t r, size_t c0, size_t n, int mul, float f) {
    const size_t at0 = r * e->cols + c0;
    if (!e->codes && !e->ncodes) {
        float *v = e->vals + at0;
        if (mul) {
            for (size_t i = 0; i < n; i++) v[i] = x[i] * f;
        } else if (v != x) {
            memmove(v, x, n * sizeof *v);
        }
        emu__array_at(e->ctx, e->base, e->pos, at0);
        fpemu_round_f32(e->fmt, v, v, n, e->ctx, e->st);
        return;
    }
    for (size_t i0 = 0; i0 < n; i0 += EMU_CAST_CHUNK) {
        size_t m = n - i0 < EMU_CAST_CHUNK ? n - i0 : EMU_CAST_CHUNK;
        const float *src = x + i0;
        if (mul) {
            for (size_t i = 0; i < m; i++) e->buf[i] = x[i0 + i] * f;
            src = e->buf;
        }
        size_t at = at0 + i0;
        emu__array_at(e->ctx, e->base, e->pos, at);
        if (e->ncodes) { /* straight into the caller's containers */
            fpemu_encode_f32(e->fmt, (char *)e->ncodes + at * (e->fmt->container / 8), src, m, e->ctx, e->st);
            continue;
        }
        fpemu_encode_f32(e->fmt, e->cbuf, src, m, e->ctx, e->st);
        emu__widen_codes(e->fmt, e->codes + at, e->cbuf, m);
    }
}

/* dst[i] = x[i] * f[i / sb] for i < n (sb 16 or 32; dst may be x): the
 * MX and NVFP4 blocks scaled by their factors, 16 lanes at a time on
 * AVX-512. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void scale_blocks_avx512(const float *x, size_t n, int sb, const float *f, float *dst) {
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(dst + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), _mm512_set1_ps(f[i / (size_t)sb])));
    }
}
#endif

static void scale_blocks(const float *x, size_t n, int sb, const float *f, float *dst) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (sb % 16 == 0 && __builtin_cpu_supports("avx512f")) {
        scale_blocks_avx512(x, n, sb, f, dst);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) dst[i] = x[i] * f[i / (size_t)sb];
}

/* MX's or NVFP4's (mx 0; ts its tensor scale) encode factor and decoded
 * scale of each scale code, once per call (the codes are bytes); returns
 * the format the elements are cast to: fmt, or for NVFP4 the registry's
 * OCP e2m1 (the callers check fmt is one) */
static const fpemu_format *blk_tables(int mx, float ts, const fpemu_format *fmt, float ftab[256], float dtab[256]) {
    const fpemu_format *sf = fpemu_format_get(mx ? "e8m0" : "e4m3", NULL, 0);
    for (int sc = 0; sc < 256; sc++) {
        ftab[sc] = mx ? emu__mx_encode_factor((uint8_t)sc) : emu__nvfp4_encode_factor((uint8_t)sc, ts);
        dtab[sc] = (float)fpemu_to_double(sf, (uint64_t)sc);
    }
    return mx ? fmt : fpemu_format_get("e2m1", NULL, 0);
}

/* emu_quant smin's fold: the first block's factor, then the least, a NaN
 * sticking */
static inline void smin_fold(float *m, int *have, float v) {
    if (!*have || (!isnan(*m) && (v < *m || isnan(v)))) *m = v;
    *have = 1;
}

/* n MX or NVFP4 blocks of amaxes am: their scale codes (MX's rule, or
 * NVFP4's with tensor scale ts), their encode factors into f, and the
 * per-block outputs of o at at0 + i * stride (emu__quantize's rows: 1;
 * emu__quantize_cols's columns: nkb), folded into smin. */
static void blk_scales(const fpemu_gemm_scaling *s, const fpemu_format *fmt, float ts, const float ftab[256],
                       const float dtab[256], const float *am, size_t n, float *f, emu_quant *o, size_t at0, size_t stride,
                       float *smin, int *have) {
    const int mx = s->kind == FPEMU_GEMM_SCALING_MX;
    uint8_t code[EMU_CAST_CHUNK / 16];
    for (size_t i0 = 0; i0 < n; i0 += EMU_CAST_CHUNK / 16) {
        const size_t m = n - i0 < EMU_CAST_CHUNK / 16 ? n - i0 : EMU_CAST_CHUNK / 16;
        if (mx)
            for (size_t i = 0; i < m; i++) code[i] = emu__mx_scale(s->mx_rule, fmt, am[i0 + i]);
        else
            emu__nvfp4_block_scales(am + i0, m, ts, code);
        for (size_t i = 0; i < m; i++) {
            const size_t at = at0 + (i0 + i) * stride;
            f[i0 + i] = ftab[code[i]];
            if (o->scode) o->scode[at] = code[i];
            if (o->dec) o->dec[at] = dtab[code[i]];
            if (o->enc) o->enc[at] = f[i0 + i];
            if (o->bamax) o->bamax[at] = am[i0 + i];
            smin_fold(smin, have, mx && am[i0 + i] == 0 ? 1.0f : f[i0 + i]); /* (mx_multiplier's rule) */
        }
    }
}

/* NVFP4 casts its elements to OCP e2m1 only: 1 with a message for another
 * element format (emu__quantize, emu__quantize_cols) */
static int nvfp4_elems_bad(const fpemu_gemm_scaling *s, const fpemu_format *fmt, char *err, size_t errlen) {
    if (s->kind != FPEMU_GEMM_SCALING_NVFP4 || emu__is_ocp_e2m1(fmt)) return 0;
    seterr(err, errlen, "quantize: nvfp4 scaling needs e2m1 elements");
    return 1;
}

int emu__quantize(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int rows, int cols, const float *X,
                  int tile_rows, int sat, fpemu_ctx *ctx, emu_quant *o, char *err, size_t errlen) {
    if (!s || !fmt || !o || rows < 0 || cols < 0 || (unsigned)s->kind > FPEMU_GEMM_SCALING_NVFP4) {
        seterr(err, errlen, "quantize: bad arguments");
        return -1;
    }
    if ((size_t)rows * (size_t)cols > 0 && (!X || (!o->codes && !o->ncodes && !o->vals))) { seterr(err, errlen, "quantize: no data"); return -1; }
    if (!o->codes && o->ncodes && fmt->container > 32) {
        seterr(err, errlen, "quantize: codes in their containers need a format of at most 32 bits");
        return -1;
    }
    const int K = cols, tr = tile_rows > 0 ? tile_rows : s->block_a_rows;
    if (s->kind == FPEMU_GEMM_SCALING_BLOCKWISE && (tr < 1 || s->block_k < 1)) {
        seterr(err, errlen, "quantize: blockwise tiles must be at least 1 x 1");
        return -1;
    }
    if (nvfp4_elems_bad(s, fmt, err, errlen)) return -1;
    if ((s->kind == FPEMU_GEMM_SCALING_MX || s->kind == FPEMU_GEMM_SCALING_NVFP4) && ctx && ctx->round != FPEMU_RNE) {
        seterr(err, errlen, "quantize: the MX and NVFP4 recipes cast with rne (saturating); another rounding mode is not supported");
        return -1;
    }
    fpemu_cast_stats local;
    fpemu_cast_stats *st = o->st;
    if (!st) { memset(&local, 0, sizeof local); st = &local; }
    fpemu_ctx own;
    fpemu_ctx_init(&own);
    fpemu_ctx *c = ctx ? ctx : &own;
    const int saved_sat = c->sat;
    c->sat = s->kind == FPEMU_GEMM_SCALING_NONE ? sat : 1;
    qcast e = {.ctx = c, .base = c->counter, .pos = c->sr_pos, .cols = (size_t)K, .fmt = fmt, .codes = o->codes,
               .ncodes = o->codes ? NULL : o->ncodes, .vals = o->codes || o->ncodes ? NULL : o->vals, .st = st};
    const int nkb = emu__quant_nkb(s, K);
    float enc = 1.0f, smin = 1.0f;
    int have = 0; /* smin is a block's */
    switch (s->kind) {
    case FPEMU_GEMM_SCALING_NONE: /* the whole array, one run */
        qcast_seg(&e, X, 0, 0, (size_t)rows * K, 0, 1.0f);
        for (int i = 0; i < rows; i++) {
            if (o->dec) o->dec[i] = 1.0f;
            if (o->enc) o->enc[i] = 1.0f;
        }
        break;
    case FPEMU_GEMM_SCALING_TENSOR:
    case FPEMU_GEMM_SCALING_GIVEN: {
        enc = s->kind == FPEMU_GEMM_SCALING_GIVEN
                  ? s->scale_a
                  : emu__current_scale(&s->cur, o->amax ? *o->amax : fpemu_scaling_amax_f32(X, (size_t)rows * K, 1),
                                                fmt->max_finite);
        const float d = 1.0f / enc;
        qcast_seg(&e, X, 0, 0, (size_t)rows * K, 1, enc);
        for (int i = 0; i < rows; i++) {
            if (o->dec) o->dec[i] = d;
            if (o->enc) o->enc[i] = enc;
        }
        break;
    }
    case FPEMU_GEMM_SCALING_ROWWISE:
        for (int i = 0; i < rows; i++) {
            const float *x = X + (size_t)i * K;
            float am = fpemu_scaling_amax_f32(x, (size_t)K, 1);
            float sc = emu__current_scale(&s->cur, am, fmt->max_finite);
            qcast_seg(&e, x, (size_t)i, 0, (size_t)K, 1, sc);
            if (o->dec) o->dec[i] = 1.0f / sc;
            if (o->enc) o->enc[i] = sc;
            if (o->bamax) o->bamax[i] = am;
            smin_fold(&smin, &have, sc);
        }
        break;
    case FPEMU_GEMM_SCALING_BLOCKWISE: {
        int bk = s->block_k, nrt = cdiv(rows, tr);
        for (int ti = 0; ti < nrt; ti++)
            for (int kt = 0; kt < nkb; kt++) {
                int i0 = ti * tr, i1 = tr < rows - i0 ? i0 + tr : rows, k0 = kt * bk, k1 = bk < K - k0 ? k0 + bk : K;
                float am = 0;
                for (int i = i0; i < i1; i++) {
                    float v = fpemu_scaling_amax_f32(X + (size_t)i * K + k0, (size_t)(k1 - k0), 1);
                    am = isnan(v) || v > am ? v : am;
                }
                float en = emu__block_encode_scale(am, fmt->max_finite, s->block_eps, s->block_pow2);
                float de = o->dec ? emu__block_decode_scale(am, fmt->max_finite, s->block_eps, s->block_pow2) : 1.0f;
                smin_fold(&smin, &have, en);
                for (int i = i0; i < i1; i++) {
                    qcast_seg(&e, X + (size_t)i * K + k0, (size_t)i, (size_t)k0, (size_t)(k1 - k0), 1, en);
                    size_t at = (size_t)i * nkb + kt;
                    if (o->dec) o->dec[at] = de;
                    if (o->enc) o->enc[at] = en;
                    if (o->bamax) o->bamax[at] = am;
                }
            }
        break;
    }
    case FPEMU_GEMM_SCALING_MX:
    case FPEMU_GEMM_SCALING_NVFP4: {
        /* the blocks cast through their own contexts (canonical NaN; rne) */
        const int mx = s->kind == FPEMU_GEMM_SCALING_MX, sb = mx ? 32 : 16;
        float ts = 1;
        if (!mx) enc = ts = emu__nvfp4_tensor_scale(o->amax ? *o->amax : fpemu_scaling_amax_f32(X, (size_t)rows * K, 1));
        const int run = EMU_CAST_CHUNK / sb; /* blocks cast together */
        float ftab[256], dtab[256];
        const fpemu_format *ef = blk_tables(mx, ts, fmt, ftab, dtab);
        float am[EMU_CAST_CHUNK / 16], f[EMU_CAST_CHUNK / 16];
        for (int r = 0; r < rows; r++)
            for (int b0 = 0; b0 < nkb; b0 += run) {
                const int nb = run < nkb - b0 ? run : nkb - b0;
                const size_t at0 = (size_t)r * K + (size_t)b0 * sb, n = (size_t)(K - b0 * sb) < (size_t)nb * sb ? (size_t)(K - b0 * sb) : (size_t)nb * sb;
                const float *x = X + at0;
                float *dst = o->codes || o->ncodes ? e.buf : o->vals + at0; /* the scaled elements, cast as one run */
                emu__block_amax(x, n, (size_t)sb, am);
                blk_scales(s, fmt, ts, ftab, dtab, am, (size_t)nb, f, o, (size_t)r * nkb + (size_t)b0, 1, &smin, &have);
                scale_blocks(x, n, sb, f, dst);
                if (!o->codes && o->ncodes) emu__own_encode(ef, dst, n, (char *)o->ncodes + at0 * (ef->container / 8), st);
                else emu__own_cast(ef, dst, n, o->codes ? o->codes + at0 : NULL, o->codes ? NULL : dst, st);
            }
        break;
    }
    default: break;
    }
    if (ctx) emu__array_at(c, e.base, e.pos, (size_t)rows * K);
    c->sat = saved_sat;
    o->tensor_enc = enc;
    o->smin = s->kind == FPEMU_GEMM_SCALING_TENSOR || s->kind == FPEMU_GEMM_SCALING_GIVEN ? enc : smin;
    return 0;
}

/* ---- MX and NVFP4 down the columns (emu__quantize_cols) -------------------------
 * The operand's rows are X's columns: a band of sb rows of X holds one
 * block of every column, so a block's amax is a maximum across rows, 16
 * columns to a vector, and the band's scaled elements, laid out as X's rows,
 * are cast a row (or a row's segment of CW columns) at a time into codes
 * laid out as X. */
enum { QC_CW = 512 }; /* columns per segment: a band of 32 rows is 64 KiB of floats */

/* am[j] = the amax of rows [k0, k1) of column j of X (j < n, row stride
 * ld): fpemu_scaling_amax_f32 of the column's block, its first NaN where it
 * holds one */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static size_t col_amax_avx512(const float *x, size_t ld, int nk, size_t n, float *am) {
    const __m512i abs = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512i m = _mm512_setzero_si512();
        for (int k = 0; k < nk; k++) m = _mm512_max_epu32(m, _mm512_and_si512(_mm512_loadu_si512(x + (size_t)k * ld + j), abs));
        _mm512_storeu_si512(am + j, m);
        for (unsigned nan = _mm512_cmpgt_epu32_mask(m, inf); nan; nan &= nan - 1) { /* (the column's first NaN) */
            size_t c = j + (size_t)__builtin_ctz(nan);
            am[c] = fpemu_scaling_amax_f32(x + c, (size_t)nk, ld);
        }
    }
    return j;
}
#endif

static void col_amax(const float *x, size_t ld, int nk, size_t n, float *am) {
    size_t j = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) j = col_amax_avx512(x, ld, nk, n, am);
#endif
    for (; j < n; j++) am[j] = fpemu_scaling_amax_f32(x + j, (size_t)nk, ld);
}

/* y[k][j] = x[k][j] * f[j] for nk rows of n (x's row stride ld, y's n) */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void col_scale_avx512(const float *x, size_t ld, int nk, size_t n, const float *f, float *y) {
    for (size_t j = 0; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j)) - 1);
        const __m512 fv = _mm512_maskz_loadu_ps(m, f + j);
        for (int k = 0; k < nk; k++)
            _mm512_mask_storeu_ps(y + (size_t)k * n + j, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + (size_t)k * ld + j), fv));
    }
}
#endif

static void col_scale(const float *x, size_t ld, int nk, size_t n, const float *f, float *y) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) {
        col_scale_avx512(x, ld, nk, n, f, y);
        return;
    }
#endif
    for (int k = 0; k < nk; k++)
        for (size_t j = 0; j < n; j++) y[(size_t)k * n + j] = x[(size_t)k * ld + j] * f[j];
}

float emu__amax_cols(const float *X, size_t ld, int K, int N) {
    float m = 0;
    for (int k = 0; k < K; k++) {
        float v = fpemu_scaling_amax_f32(X + (size_t)k * ld, (size_t)N, 1);
        if (isnan(v)) {
            for (int j = 0; j < N; j++) {
                v = fpemu_scaling_amax_f32(X + j, (size_t)K, ld);
                if (isnan(v)) return v;
            }
        }
        m = v > m ? v : m;
    }
    return m;
}

int emu__quantize_cols(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int K, int N, const float *X, size_t ld,
                       emu_quant *o, char *err, size_t errlen) {
    if (!s || !fmt || !o || K < 0 || N < 0 || (s->kind != FPEMU_GEMM_SCALING_MX && s->kind != FPEMU_GEMM_SCALING_NVFP4) ||
        o->codes || o->vals || ld < (size_t)N) {
        seterr(err, errlen, "quantize_cols: bad arguments (MX or NVFP4, codes in their containers)");
        return -1;
    }
    if ((size_t)K * (size_t)N > 0 && (!X || !o->ncodes || fmt->container > 32)) {
        seterr(err, errlen, "quantize_cols: no data, or codes wider than 32 bits");
        return -1;
    }
    const int mx = s->kind == FPEMU_GEMM_SCALING_MX, sb = mx ? 32 : 16, nkb = emu__quant_nkb(s, K);
    if (nvfp4_elems_bad(s, fmt, err, errlen)) return -1;
    fpemu_cast_stats local;
    fpemu_cast_stats *st = o->st;
    if (!st) { memset(&local, 0, sizeof local); st = &local; }
    float ts = 1, smin = 1.0f;
    int have = 0;
    if (!mx) ts = emu__nvfp4_tensor_scale(o->amax ? *o->amax : emu__amax_cols(X, ld, K, N));
    float ftab[256], dtab[256];
    const fpemu_format *ef = blk_tables(mx, ts, fmt, ftab, dtab);
    const size_t cw = (size_t)N < QC_CW ? (size_t)N : QC_CW, cb = fmt->container / 8;
    float *band = malloc(sizeof(float) * ((size_t)sb * cw + 1)), am[QC_CW], f[QC_CW];
    if (!band) {
        seterr(err, errlen, "quantize_cols: out of memory");
        return -1;
    }
    for (int b = 0; b < nkb; b++) {
        const int k0 = b * sb, nk = sb < K - k0 ? sb : K - k0;
        for (size_t c0 = 0; c0 < (size_t)N; c0 += cw) {
            const size_t n = (size_t)N - c0 < cw ? (size_t)N - c0 : cw;
            const float *x = X + (size_t)k0 * ld + c0;
            col_amax(x, ld, nk, n, am);
            blk_scales(s, fmt, ts, ftab, dtab, am, n, f, o, c0 * (size_t)nkb + (size_t)b, (size_t)nkb, &smin, &have);
            col_scale(x, ld, nk, n, f, band);
            char *dst = (char *)o->ncodes + ((size_t)k0 * (size_t)N + c0) * cb;
            if (n == (size_t)N) emu__own_encode(ef, band, (size_t)nk * n, dst, st); /* the band's rows one after another */
            else
                for (int k = 0; k < nk; k++) emu__own_encode(ef, band + (size_t)k * n, n, dst + (size_t)k * (size_t)N * cb, st);
        }
    }
    free(band);
    o->tensor_enc = mx ? 1.0f : ts;
    o->smin = smin;
    return 0;
}

/* ---- the public form (gemm.h) ------------------------------------------------- */

size_t fpemu_gemm_quantize_nscales(const fpemu_gemm_scaling *s, int rows, int cols, int tile_rows) {
    if (!s || rows < 0 || cols < 0) return 0;
    switch (s->kind) {
    case FPEMU_GEMM_SCALING_ROWWISE: return (size_t)rows;
    case FPEMU_GEMM_SCALING_BLOCKWISE: {
        int tr = tile_rows > 0 ? tile_rows : s->block_a_rows, bk = s->block_k;
        if (tr < 1 || bk < 1) return 0;
        return (size_t)cdiv(rows, tr) * (size_t)cdiv(cols, bk);
    }
    case FPEMU_GEMM_SCALING_MX: return (size_t)rows * (size_t)cdiv(cols, 32);
    case FPEMU_GEMM_SCALING_NVFP4: return (size_t)rows * (size_t)cdiv(cols, 16);
    default: return 1;
    }
}

/* fpemu_gemm_quantize_f32 with the codes in codes (uint64) or, codes NULL,
 * in ncodes (the format's container) */
static int gemm_quantize_f32(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int rows, int cols, const float *X,
                             int tile_rows, int sat, fpemu_ctx *ctx, uint64_t *codes, void *ncodes, float *enc_scale,
                             float *dec, uint64_t *scode, float *deq, fpemu_cast_stats *st, char *err, size_t errlen) {
    if (!s || !fmt || rows < 0 || cols < 0 || (unsigned)s->kind > FPEMU_GEMM_SCALING_NVFP4) {
        seterr(err, errlen, "quantize: bad arguments");
        return -1;
    }
    if ((size_t)rows * (size_t)cols > 0 && (!X || (!codes && !ncodes))) { seterr(err, errlen, "quantize: no data"); return -1; }
    const int K = cols, tr = tile_rows > 0 ? tile_rows : s->block_a_rows;
    const int nkb = emu__quant_nkb(s, K);
    /* the decode factors per row and block (recipe.h), laid out as gemm.h's
     * dec afterwards; the dequantised values need them too */
    float *rdec = NULL;
    if ((dec || deq) && nkb >= 0) {
        rdec = malloc(sizeof(float) * ((size_t)rows * (size_t)nkb + 1));
        if (!rdec) { seterr(err, errlen, "quantize: out of memory"); return -1; }
    }
    emu_quant o = {.codes = codes, .ncodes = codes ? NULL : ncodes, .dec = rdec, .scode = scode, .st = st};
    if (emu__quantize(s, fmt, rows, cols, X, tile_rows, sat, ctx, &o, err, errlen)) { free(rdec); return -1; }
    const float enc = o.tensor_enc;
    if (enc_scale) *enc_scale = enc;
    if (dec) {
        switch (s->kind) {
        case FPEMU_GEMM_SCALING_NONE: dec[0] = 1.0f; break;
        case FPEMU_GEMM_SCALING_TENSOR:
        case FPEMU_GEMM_SCALING_GIVEN: dec[0] = 1.0f / enc; break;
        case FPEMU_GEMM_SCALING_BLOCKWISE: /* one factor per tile: its first row's */
            for (int ti = 0; ti < cdiv(rows, tr); ti++)
                for (int kt = 0; kt < nkb; kt++) dec[(size_t)ti * nkb + kt] = rdec[(size_t)ti * tr * nkb + kt];
            break;
        default: memcpy(dec, rdec, sizeof(float) * (size_t)rows * (size_t)nkb); break; /* ROWWISE, MX, NVFP4 */
        }
    }
    if (deq) { /* dequantised values, as the GEMM's epilogue and MMA use the scales */
        const int blk = s->kind == FPEMU_GEMM_SCALING_MX || s->kind == FPEMU_GEMM_SCALING_NVFP4;
        const int nv = s->kind == FPEMU_GEMM_SCALING_NVFP4;
        const int kb = s->kind == FPEMU_GEMM_SCALING_BLOCKWISE ? s->block_k : s->kind == FPEMU_GEMM_SCALING_MX ? 32 : 16;
        const float inv_ts = 1.0f / enc;
        fpemu_ctx dc;
        fpemu_ctx_init(&dc);
        if (ctx) dc.nan_policy = ctx->nan_policy;
        if (codes) emu__decode_codes_f32(fmt, deq, codes, (size_t)rows * K, &dc);
        else fpemu_decode_f32(fmt, deq, ncodes, (size_t)rows * K, &dc);
        /* then each row's blocks times their factors: K columns a block where there is one */
        const size_t span = nkb > 1 ? (size_t)kb : (size_t)K;
        for (int r = 0; r < rows && s->kind != FPEMU_GEMM_SCALING_NONE; r++)
            for (size_t kt = 0; kt * span < (size_t)K; kt++) {
                const float f = rdec[(size_t)r * nkb + kt];
                float *v = deq + (size_t)r * K + kt * span;
                const size_t m = span < K - kt * span ? span : K - kt * span;
                if (!blk)
                    for (size_t k = 0; k < m; k++) v[k] = v[k] * f;
                else
                    for (size_t k = 0; k < m; k++) {
                        double d = (double)v[k] * f; /* exact: the MMA joins the scale exactly */
                        v[k] = nv ? (float)d * inv_ts : (float)d;
                    }
            }
    }
    free(rdec);
    return 0;
}

/* (under the GEMM's floating-point environment: internal.h emu__fpenv_enter) */
int fpemu_gemm_quantize_f32(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int rows, int cols, const float *X,
                            int tile_rows, int sat, fpemu_ctx *ctx, uint64_t *codes, float *enc_scale, float *dec,
                            uint64_t *scode, float *deq, fpemu_cast_stats *st, char *err, size_t errlen) {
    const unsigned fe = emu__fpenv_enter();
    const int rc = gemm_quantize_f32(s, fmt, rows, cols, X, tile_rows, sat, ctx, codes, NULL, enc_scale, dec, scode, deq, st, err, errlen);
    emu__fpenv_leave(fe);
    return rc;
}

int emu__quantize_f32_n(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int rows, int cols, const float *X, int tile_rows,
                        int sat, fpemu_ctx *ctx, void *ncodes, float *enc_scale, float *dec, float *deq, fpemu_cast_stats *st,
                        char *err, size_t errlen) {
    const unsigned fe = emu__fpenv_enter(); /* (emu__quantize refuses a container above 32 bits) */
    const int rc = gemm_quantize_f32(s, fmt, rows, cols, X, tile_rows, sat, ctx, NULL, ncodes, enc_scale, dec, NULL, deq, st, err, errlen);
    emu__fpenv_leave(fe);
    return rc;
}
