/* SPDX-License-Identifier: MIT */
/* caststats.c: the tensor cast and its figures (fpemu_caster in
 * fpemu_api.h): what `fpemu cast` and the Python package's cast and
 * cast_stats compute, in one place. The element casts are the library's:
 * without a recipe its array casts (fpemu_round_f32, fpemu_encode_f32) for
 * f32 values, and for f64 values rounded to odd to f32 first where that
 * gives the same codes (odd_cast), else fpemu_from_double, one rounding;
 * under a recipe fpemu_gemm_quantize_f32, the recipes' one implementation;
 * this file lays the tensor out in the recipe's blocks along the chosen
 * axis, and counts and measures what the cast did (docs/cast.md, "The
 * figures"). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include "fpemu.h"
#include "fpemu_api.h"
#include "internal.h"
#include "gemm.h"
#include "recipe.h"

#define MAXNDIM 64

/* The figures of one cast. */
typedef struct figures {
    size_t n, overflow, saturated, underflow, subnormal, nonfinite_in, compared;
    double amax, max_abs, max_rel, sum_e2, sum_x2;
    int have_scale;      /* per-tensor scale */
    double scale;        /* encode scale */
    size_t nscales;      /* per-block decode factors */
    double smin, smax;
    double tensor_scale; /* nvfp4 */
} figures;

struct fpemu_caster {
    const fpemu_format *f;
    int round, nan_policy, sat;
    uint64_t seed;
    long axis;
    char recipe[32];        /* the scaling as it was set (the figures' "scaling") */
    fpemu_gemm_scaling sc;
    int counts_only;        /* stats=counts: no error figures */
    int have;               /* figures of a successful run */
    int have_errors;        /* ... with the error figures */
    figures F;
    /* the last run's decode factors (fpemu_caster_scales): kind 0 none, 1
     * one for the tensor, 2 per block (in fpemu_caster_scale_layout's
     * shape); nvfp4's tensor factor */
    int scale_kind;
    float *scales;
    float tensor_factor;
    char err[512];
};

/* fail a caster call with a message in its error buffer */
#define fail(c, ...) emu__errf((c)->err, sizeof (c)->err, __VA_ARGS__)

/* The recipe's settings, as `fpemu gemm` sets them for A. */
static int scaling_of(const char *name, fpemu_gemm_scaling *out, char *err, size_t errlen) {
    if (!strcmp(name, "given") || !strcmp(name, "delayed")) {
        snprintf(err, errlen, "needs scales from a previous step; not supported by cast (expected none, tensor, "
                              "tensor-torchao, rowwise, blockwise, mx-floor, mx-rceil, nvfp4)");
        return -1;
    }
    if (strlen(name) >= sizeof ((fpemu_caster *)0)->recipe) {
        snprintf(err, errlen, "unknown scaling recipe (expected none, tensor, tensor-torchao, rowwise, blockwise, "
                              "mx-floor, mx-rceil, nvfp4)");
        return -1;
    }
    fpemu_gemm_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.scaling.block_a_rows = 1, cfg.scaling.block_b_cols = 128, cfg.scaling.block_k = 128, cfg.scaling.block_eps = 1e-4f;
    fpemu_scaling_current_opts_te(&cfg.scaling.cur);
    if (fpemu_gemm_config_set_scaling(&cfg, name, err, errlen)) return -1;
    *out = cfg.scaling;
    return 0;
}

fpemu_caster *fpemu_caster_new(const char *fmt, char *err, size_t errlen) {
    char e[512];
    const fpemu_format *f = fmt ? fpemu_format_get(fmt, e, sizeof e) : NULL;
    if (!f) {
        if (err && errlen) snprintf(err, errlen, "%s", fmt ? e : "no format given");
        return NULL;
    }
    fpemu_caster *c = calloc(1, sizeof *c);
    if (!c) {
        if (err && errlen) snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->f = f;
    c->round = FPEMU_RNE, c->nan_policy = FPEMU_NAN_CANONICAL;
    c->axis = -1;
    strcpy(c->recipe, "none");
    scaling_of("none", &c->sc, e, sizeof e);
    return c;
}

void fpemu_caster_free(fpemu_caster *c) {
    if (c) free(c->scales);
    free(c);
}

const char *fpemu_caster_error(const fpemu_caster *c) { return c ? c->err : "no caster"; }

static int parse_long(const char *s, long lo, long hi, long *out) {
    if (!s || !*s) return -1;
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (*e || errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int fpemu_caster_set(fpemu_caster *c, const char *key, const char *value) {
    if (!c) return -1;
    c->err[0] = 0;
    if (!key || !value) return fail(c, "no option or no value given");
    if (!strcmp(key, "round")) {
        int r = fpemu_round_parse(value);
        if (r < 0) return fail(c, "unknown rounding mode (expected rne, rna, rtz, rup, rdn, rto, sr)");
        c->round = r;
    } else if (!strcmp(key, "nan")) {
        int p = fpemu_nan_policy_parse(value);
        if (p < 0) return fail(c, "unknown NaN policy (expected canonical, x86, cuda, torch)");
        c->nan_policy = p;
    } else if (!strcmp(key, "sat")) {
        long v;
        if (parse_long(value, 0, 1, &v)) return fail(c, "expected 0 or 1");
        c->sat = (int)v;
    } else if (!strcmp(key, "seed")) {
        /* an integer in [0, 2^64), as `fpemu cast --seed` reads it (decimal, 0x hex) */
        const char *s = value;
        if (!*s || *s == '-' || *s == '+') return fail(c, "expected a non-negative integer below 2^64");
        char *e;
        errno = 0;
        unsigned long long v = strtoull(s, &e, 0);
        if (*e || errno) return fail(c, "expected a non-negative integer below 2^64");
        c->seed = v;
    } else if (!strcmp(key, "axis")) {
        long v;
        if (parse_long(value, -MAXNDIM, MAXNDIM - 1, &v)) return fail(c, "expected an integer in [%d, %d]", -MAXNDIM, MAXNDIM - 1);
        c->axis = v;
    } else if (!strcmp(key, "stats")) {
        if (strcmp(value, "full") && strcmp(value, "counts")) return fail(c, "expected full or counts");
        c->counts_only = value[0] == 'c';
    } else if (!strcmp(key, "scaling")) {
        fpemu_gemm_scaling sc;
        if (scaling_of(value, &sc, c->err, sizeof c->err)) return -1;
        c->sc = sc;
        snprintf(c->recipe, sizeof c->recipe, "%s", value);
    } else {
        return fail(c, "unknown option '%s' (expected round, sat, seed, scaling, axis, nan, stats)", key);
    }
    return 0;
}

static const char *kind_name(fpemu_gemm_scaling_kind k) {
    switch (k) {
    case FPEMU_GEMM_SCALING_NONE: return "none";
    case FPEMU_GEMM_SCALING_TENSOR: return "tensor";
    case FPEMU_GEMM_SCALING_GIVEN: return "given";
    case FPEMU_GEMM_SCALING_ROWWISE: return "rowwise";
    case FPEMU_GEMM_SCALING_BLOCKWISE: return "blockwise";
    case FPEMU_GEMM_SCALING_MX: return "mx";
    case FPEMU_GEMM_SCALING_NVFP4: return "nvfp4";
    }
    return "?";
}

int fpemu_caster_get(const fpemu_caster *c, const char *key, char *buf, size_t len) {
    if (!c || !key) return -1;
    char tmp[64];
    const char *v = tmp;
    if (!strcmp(key, "format")) v = c->f->name;
    else if (!strcmp(key, "round")) v = fpemu_round_name((fpemu_round)c->round);
    else if (!strcmp(key, "nan")) v = fpemu_nan_policy_name((fpemu_nan_policy)c->nan_policy);
    else if (!strcmp(key, "sat")) v = c->sat ? "1" : "0";
    else if (!strcmp(key, "seed")) snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)c->seed);
    else if (!strcmp(key, "axis")) snprintf(tmp, sizeof tmp, "%ld", c->axis);
    else if (!strcmp(key, "scaling")) v = c->recipe;
    else if (!strcmp(key, "recipe")) v = kind_name(c->sc.kind);
    else if (!strcmp(key, "stats")) v = c->counts_only ? "counts" : "full";
    else return -1;
    return snprintf(buf, len, "%s", v);
}

int fpemu_caster_check(fpemu_caster *c) {
    if (!c) return -1;
    c->err[0] = 0;
    if ((c->sc.kind == FPEMU_GEMM_SCALING_MX || c->sc.kind == FPEMU_GEMM_SCALING_NVFP4) && c->round != FPEMU_RNE)
        return fail(c, "round %s: the %s recipe casts with rne only", fpemu_round_name((fpemu_round)c->round), c->recipe);
    if (c->sc.kind == FPEMU_GEMM_SCALING_NVFP4 && strcmp(c->f->name, "e2m1"))
        return fail(c, "scaling nvfp4 needs the e2m1 format (got %s)", c->f->name);
    return 0;
}

/* ---- the figures ----------------------------------------------------------- */

#if defined(__x86_64__) && defined(__GNUC__)
/* errors() for floats x and y, 8 elements at a time: the maxima across
 * lanes (a maximum does not depend on the order), the squares in lanes,
 * and the two sums in element order, as the scalar loop adds them. Returns
 * how many elements it took (a multiple of 8). */
__attribute__((target("avx512f"))) static size_t errors_f32_avx512(const float *xf, const float *yf, size_t n, size_t *compared,
                                                                 double *max_abs, double *max_rel, double *sum_e2, double *sum_x2) {
    const __m512d inf = _mm512_set1_pd(INFINITY), zero = _mm512_setzero_pd();
    __m512d ma = _mm512_set1_pd(*max_abs), mr = _mm512_set1_pd(*max_rel);
    double e2[8] __attribute__((aligned(64))), x2[8] __attribute__((aligned(64)));
    double se = *sum_e2, sx = *sum_x2;
    size_t cmp = *compared, i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(xf + i)), y = _mm512_cvtps_pd(_mm256_loadu_ps(yf + i));
        const __m512d ax = _mm512_abs_pd(x), e = _mm512_abs_pd(_mm512_sub_pd(y, x));
        const __mmask8 fin = _mm512_cmp_pd_mask(ax, inf, _CMP_LT_OQ) & _mm512_cmp_pd_mask(_mm512_abs_pd(y), inf, _CMP_LT_OQ);
        const __mmask8 nz = fin & _mm512_cmp_pd_mask(ax, zero, _CMP_NEQ_OQ);
        ma = _mm512_mask_max_pd(ma, fin, ma, e);
        mr = _mm512_mask_max_pd(mr, nz, mr, _mm512_maskz_div_pd(nz, e, ax));
        _mm512_store_pd(e2, _mm512_mul_pd(e, e));
        _mm512_store_pd(x2, _mm512_mul_pd(x, x));
        for (unsigned m = fin; m; m &= m - 1) {
            const int k = __builtin_ctz(m);
            se += e2[k];
            sx += x2[k];
        }
        cmp += (size_t)__builtin_popcount(fin);
    }
    *max_abs = _mm512_reduce_max_pd(ma), *max_rel = _mm512_reduce_max_pd(mr);
    *sum_e2 = se, *sum_x2 = sx, *compared = cmp;
    return i;
}
#endif

/* The error figures of y against x, each as doubles (xd, yd) or, where
 * that is NULL, floats (xf, yf). */
static void errors(figures *F, const double *xd, const float *xf, const double *yd, const float *yf, size_t n) {
    /* (in locals: F's fields could alias xd and yd, which would keep every
     * step's sums in memory) */
    size_t compared = F->compared, i = 0;
    double max_abs = F->max_abs, max_rel = F->max_rel, sum_e2 = F->sum_e2, sum_x2 = F->sum_x2;
#if defined(__x86_64__) && defined(__GNUC__)
    if (!xd && !yd && __builtin_cpu_supports("avx512f"))
        i = errors_f32_avx512(xf, yf, n, &compared, &max_abs, &max_rel, &sum_e2, &sum_x2);
#endif
    for (; i < n; i++) {
        double x = xd ? xd[i] : (double)xf[i], y = yd ? yd[i] : (double)yf[i];
        if (!isfinite(x) || !isfinite(y)) continue;
        double e = fabs(y - x);
        compared++;
        if (e > max_abs) max_abs = e;
        if (x != 0 && e / fabs(x) > max_rel) max_rel = e / fabs(x);
        sum_e2 += e * e;
        sum_x2 += x * x;
    }
    F->compared = compared, F->max_abs = max_abs, F->max_rel = max_rel, F->sum_e2 = sum_e2, F->sum_x2 = sum_x2;
}

static double frac(size_t k, size_t n) { return n ? (double)k / (double)n : 0.0; }
static double rms_of(const figures *F) { return F->compared ? sqrt(F->sum_e2 / (double)F->compared) : 0; }
static double sqnr_of(const figures *F) { return F->sum_e2 > 0 ? 10 * log10(F->sum_x2 / F->sum_e2) : INFINITY; }

/* Appending to a caller buffer with snprintf semantics: pos counts every
 * byte the whole text needs, what fits is written, always terminated. */
typedef struct { char *buf; size_t len, pos; } out_text;
static void put(out_text *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_text *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *p = o->buf && o->pos < o->len ? o->buf + o->pos : NULL;
    int k = vsnprintf(p, p ? o->len - o->pos : 0, fmt, ap);
    va_end(ap);
    if (k > 0) o->pos += (size_t)k;
}
/* JSON number (finite) or null (inf/NaN). */
static void put_num(out_text *o, double v) {
    if (isfinite(v)) put(o, "%.17g", v);
    else put(o, "null");
}

static const char *const count_names[] = {"overflow", "saturated", "flushed", "subnormal", "nonfinite_in"};
static void counts(const figures *F, size_t v[5]) {
    v[0] = F->overflow, v[1] = F->saturated, v[2] = F->underflow, v[3] = F->subnormal, v[4] = F->nonfinite_in;
}

int fpemu_caster_stats_text(fpemu_caster *c, char *buf, size_t len) {
    if (!c) return -1;
    if (!c->have) return fail(c, "no figures: no cast has run");
    const figures *F = &c->F;
    out_text o = {buf, len, 0};
    if (buf && len) buf[0] = 0;
    put(&o, "format        %s\nscaling       %s\nn             %zu\namax          %.9g\n", c->f->name, c->recipe, F->n, F->amax);
    if (F->have_scale) put(&o, "scale         %.9g\n", F->scale);
    if (F->nscales) put(&o, "block scales  %zu (decode factors, min %.9g, max %.9g)\n", F->nscales, F->smin, F->smax);
    if (F->tensor_scale) put(&o, "tensor scale  %.9g\n", F->tensor_scale);
    size_t v[5];
    counts(F, v);
    for (int i = 0; i < 5; i++) put(&o, "%-13s %zu (%.6g%%)\n", count_names[i], v[i], 100 * frac(v[i], F->n));
    if (!c->have_errors) return o.pos > (size_t)INT32_MAX ? -1 : (int)o.pos; /* stats=counts */
    put(&o, "max_abs_err   %.9g\nmax_rel_err   %.9g\nrms_err       %.9g\nsqnr_db       %.6g\n", F->max_abs, F->max_rel, rms_of(F),
        sqnr_of(F));
    return o.pos > (size_t)INT32_MAX ? -1 : (int)o.pos;
}

int fpemu_caster_stats_json(fpemu_caster *c, char *buf, size_t len) {
    if (!c) return -1;
    if (!c->have) return fail(c, "no figures: no cast has run");
    const figures *F = &c->F;
    out_text o = {buf, len, 0};
    if (buf && len) buf[0] = 0;
    put(&o, "{\"format\": \"%s\", \"scaling\": \"", c->f->name);
    for (const char *s = c->recipe; *s; s++) /* a recipe name is plain ASCII; escape anyway */
        if (*s == '"' || *s == '\\') put(&o, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) put(&o, "\\u%04x", (unsigned char)*s);
        else put(&o, "%c", *s);
    put(&o, "\", \"n\": %zu, \"amax\": ", F->n);
    put_num(&o, F->amax);
    put(&o, ", \"scale\": ");
    if (F->have_scale) put_num(&o, F->scale);
    else put(&o, "null");
    put(&o, ", \"block_scales\": ");
    if (F->nscales) {
        put(&o, "{\"count\": %zu, \"min\": ", F->nscales);
        put_num(&o, F->smin);
        put(&o, ", \"max\": ");
        put_num(&o, F->smax);
        put(&o, "}");
    } else put(&o, "null");
    put(&o, ", \"tensor_scale\": ");
    if (F->tensor_scale) put_num(&o, F->tensor_scale);
    else put(&o, "null");
    size_t v[5];
    counts(F, v);
    for (int i = 0; i < 5; i++) {
        put(&o, ", \"%s\": %zu, \"%s_frac\": ", count_names[i], v[i], count_names[i]);
        put_num(&o, frac(v[i], F->n));
    }
    if (!c->have_errors) { /* stats=counts: the error figures were not computed */
        put(&o, ", \"compared\": null, \"max_abs_err\": null, \"max_rel_err\": null, \"rms_err\": null, \"sqnr_db\": null}\n");
        return o.pos > (size_t)INT32_MAX ? -1 : (int)o.pos;
    }
    put(&o, ", \"compared\": %zu, \"max_abs_err\": ", F->compared);
    put_num(&o, F->max_abs);
    put(&o, ", \"max_rel_err\": ");
    put_num(&o, F->max_rel);
    put(&o, ", \"rms_err\": ");
    put_num(&o, rms_of(F));
    put(&o, ", \"sqnr_db\": ");
    put_num(&o, sqnr_of(F));
    put(&o, "}\n");
    return o.pos > (size_t)INT32_MAX ? -1 : (int)o.pos;
}

static const char *const stat_keys[] = {
    "n", "amax", "scale", "block_scales.count", "block_scales.min", "block_scales.max", "tensor_scale",
    "overflow", "overflow_frac", "saturated", "saturated_frac", "flushed", "flushed_frac", "subnormal", "subnormal_frac",
    "nonfinite_in", "nonfinite_in_frac", "compared", "max_abs_err", "max_rel_err", "rms_err", "sqnr_db", NULL};

const char *fpemu_caster_stat_key(int i) {
    return i >= 0 && i < (int)(sizeof stat_keys / sizeof *stat_keys) ? stat_keys[i] : NULL;
}

int fpemu_caster_stat(fpemu_caster *c, const char *key, double *value) {
    if (!c || !key) return -1;
    if (!c->have) return fail(c, "no figures: no cast has run");
    const figures *F = &c->F;
    double v = NAN;
    int null = 0;
    size_t cnt[5];
    counts(F, cnt);
    if (!strcmp(key, "n")) v = (double)F->n;
    else if (!strcmp(key, "amax")) v = F->amax, null = !isfinite(v);
    else if (!strcmp(key, "scale")) null = !F->have_scale || !isfinite(F->scale), v = F->have_scale ? F->scale : NAN;
    else if (!strcmp(key, "block_scales.count")) null = !F->nscales, v = F->nscales ? (double)F->nscales : NAN;
    else if (!strcmp(key, "block_scales.min")) null = !F->nscales || !isfinite(F->smin), v = F->nscales ? F->smin : NAN;
    else if (!strcmp(key, "block_scales.max")) null = !F->nscales || !isfinite(F->smax), v = F->nscales ? F->smax : NAN;
    else if (!strcmp(key, "tensor_scale")) null = !F->tensor_scale || !isfinite(F->tensor_scale), v = F->tensor_scale ? F->tensor_scale : NAN;
    else if (!c->have_errors && (!strcmp(key, "compared") || !strcmp(key, "max_abs_err") || !strcmp(key, "max_rel_err") ||
                                 !strcmp(key, "rms_err") || !strcmp(key, "sqnr_db")))
        return fail(c, "figure '%s' is computed with stats=full (this cast ran with stats=counts)", key);
    else if (!strcmp(key, "compared")) v = (double)F->compared;
    else if (!strcmp(key, "max_abs_err")) v = F->max_abs, null = !isfinite(v);
    else if (!strcmp(key, "max_rel_err")) v = F->max_rel, null = !isfinite(v);
    else if (!strcmp(key, "rms_err")) v = rms_of(F), null = !isfinite(v);
    else if (!strcmp(key, "sqnr_db")) v = sqnr_of(F), null = !isfinite(v);
    else {
        int found = 0;
        for (int i = 0; i < 5 && !found; i++) {
            size_t l = strlen(count_names[i]);
            if (strncmp(key, count_names[i], l)) continue;
            if (!key[l]) v = (double)cnt[i], found = 1;
            else if (!strcmp(key + l, "_frac")) v = frac(cnt[i], F->n), found = 1;
        }
        if (!found) return fail(c, "unknown figure '%s'", key);
    }
    if (value) *value = v;
    return null;
}

/* ---- the cast ------------------------------------------------------------- */

/* The context of one run: the caster's mode, NaN policy and seed (the
 * recipes set saturation themselves). */
static void cast_ctx(const fpemu_caster *c, fpemu_ctx *ctx) {
    fpemu_ctx_init(ctx);
    ctx->round = (fpemu_round)c->round;
    ctx->nan_policy = (fpemu_nan_policy)c->nan_policy;
    ctx->seed = c->seed;
}

/* dst (C x R) = src (R x C) transposed, elements of es bytes (1, 2, 4 or
 * 8), copied as bits, in square tiles that stay in cache: the moves
 * between an array's layout and its blocks' (the axis last). */
static void transpose(const void *src, void *dst, size_t R, size_t C, size_t es) {
    enum { T = 16 };
#define TILE(type)                                                                                                     \
    for (size_t r = r0; r < r1; r++)                                                                                   \
        for (size_t c = c0; c < c1; c++) ((type *)dst)[c * R + r] = ((const type *)src)[r * C + c]
    for (size_t r0 = 0; r0 < R; r0 += T)
        for (size_t c0 = 0; c0 < C; c0 += T) {
            const size_t r1 = R - r0 < T ? R : r0 + T, c1 = C - c0 < T ? C : c0 + T;
            switch (es) {
            case 1: TILE(uint8_t); break;
            case 2: TILE(uint16_t); break;
            case 4: TILE(uint32_t); break;
            default: TILE(uint64_t); break;
            }
        }
#undef TILE
}

/* The cast's counts into the figures. */
static void take_counts(figures *F, const fpemu_cast_stats *cs) {
    F->overflow = cs->overflow, F->saturated = cs->saturated, F->underflow = cs->underflow, F->subnormal = cs->subnormal;
    F->nonfinite_in = cs->nonfinite_in;
}

/* The start of a cast of n elements without a recipe: zeroed figures and
 * counts, the run's context with the caster's saturation. */
static void plain_start(const fpemu_caster *c, size_t n, figures *F, fpemu_ctx *ctx, fpemu_cast_stats *cs) {
    memset(F, 0, sizeof *F);
    F->n = n;
    cast_ctx(c, ctx);
    ctx->sat = c->sat;
    memset(cs, 0, sizeof *cs);
}

/* The end of a cast that succeeded: its counts into its figures, which c
 * keeps. 0. */
static int keep(fpemu_caster *c, figures *F, const fpemu_cast_stats *cs) {
    take_counts(F, cs);
    c->F = *F;
    c->have = 1, c->have_errors = !c->counts_only;
    c->err[0] = 0;
    return 0;
}

/* The cast of f32 values xf (n) with no recipe to a format f
 * whose values are all floats: one array rounding to the values (and one
 * array encoding for the codes), under the context the general path's
 * quantisation takes (mode, NaN policy, saturation), with the rounding's
 * counts and the error figures from the values. (Only for such a format:
 * the array rounding decodes under the context, so for a wider format with
 * sat a code beyond f32's range, f64's largest from an infinity, would give
 * f32's largest, where the general path gives the code's value rounded to
 * f32, inf.) 0, or -1 with the message in c. */
static int array_cast(fpemu_caster *c, const fpemu_format *f, const float *xf, size_t n, float *values, void *codes_out,
                      double *scaled_out) {
    float *y = values ? values : malloc(sizeof(float) * (n + 1));
    if (!y) return fail(c, "out of memory (%zu elements)", n);
    figures F;
    fpemu_ctx ctx;
    fpemu_cast_stats cs;
    plain_start(c, n, &F, &ctx, &cs);
    if (codes_out) {
        fpemu_ctx cx = ctx;
        fpemu_encode_f32(f, codes_out, xf, n, &cx, NULL);
    }
    fpemu_round_f32(f, y, xf, n, &ctx, &cs);
    F.amax = cs.amax; /* (the cast's telemetry: the largest finite |x|) */
    if (!c->counts_only) errors(&F, NULL, xf, NULL, y, n);
    for (size_t i = 0; scaled_out && i < n; i++) scaled_out[i] = xf[i]; /* (no recipe: the input itself) */
    if (y != values) free(y);
    return keep(c, &F, &cs);
}

/* Element i of an f64 input without a recipe, x, to f by the scalar
 * conversion (one rounding, draw i): its code, its value into *y (exact;
 * a NaN code as the policy gives it, as fpemu_to_float does for f32
 * values, not with the code's own sign) and its counts into cs. */
static uint64_t f64_one(const fpemu_caster *c, const fpemu_format *f, const fpemu_ctx *ctx, double x, size_t i,
                        fpemu_cast_stats *cs, double *y) {
    fpemu_ctx probe;
    fpemu_ctx_init(&probe);
    probe.round = ctx->round, probe.sat = c->sat, probe.nan_policy = ctx->nan_policy, probe.seed = c->seed, probe.counter = i;
    const uint64_t k = fpemu_from_double(f, x, &probe);
    const fpemu_class cl = fpemu_classify(f, k);
    if (!isfinite(x)) cs->nonfinite_in++;
    else if (probe.flags & FPEMU_FLAG_OVERFLOW) {
        cs->overflow++;
        if (cl != FPEMU_CLASS_INF && cl != FPEMU_CLASS_QNAN && cl != FPEMU_CLASS_SNAN) cs->saturated++;
    } else if (x != 0 && cl == FPEMU_CLASS_ZERO) cs->underflow++;
    else if (x != 0 && cl == FPEMU_CLASS_SUBNORMAL) cs->subnormal++;
    if (cl == FPEMU_CLASS_QNAN || cl == FPEMU_CLASS_SNAN) {
        fpemu_ctx dc;
        fpemu_ctx_init(&dc);
        dc.nan_policy = ctx->nan_policy;
        *y = emu__bitsd(fpemu_convert(emu__f64(), f, k, &dc));
    } else *y = fpemu_to_double(f, k);
    return k;
}

/* x rounded to odd to f32: x where a float holds it, else the float next
 * to x toward zero with its last bit set (beyond f32's range, f32's
 * largest). For x not a NaN. */
static inline float ro_f32(double x) {
    float r = (float)x; /* (a neighbour of x, whatever the rounding) */
    uint32_t b;
    memcpy(&b, &r, sizeof b);
    const double back = r;
    b -= fabs(back) > fabs(x); /* (a magnitude one step down; inf - 1 is f32's largest) */
    b |= back != x;
    memcpy(&r, &b, sizeof r);
    return r;
}

/* Whether odd_cast may take its AVX-512 loops where the CPU has them: 1
 * unless a test has asked for the portable ones (emu__caster_simd). */
static int simd_ok = 1;

/* Tests only: 0 makes odd_cast take its portable loops, 1 its AVX-512 ones
 * where the CPU has them (the default). Returns the setting before. */
int emu__caster_simd(int on) {
    const int was = simd_ok;
    simd_ok = on != 0;
    return was;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* odd_cast's first pass, 8 doubles at a time: xf the odd float of each
 * element within f32's range (rounded toward zero, its last bit set where
 * that was inexact: ro_f32), 0 for the others (*anyfar set if any), *amax
 * the largest |x| of those within range. Returns how many elements it took
 * (a multiple of 8). */
__attribute__((target("avx512f,avx512vl"))) static size_t odd_avx512(const double *x, float *xf, size_t m, double *amax,
                                                                   int *anyfar) {
    const __m512d lim = _mm512_set1_pd(FLT_MAX);
    const __m256i one = _mm256_set1_epi32(1);
    __m512d am = _mm512_set1_pd(*amax);
    unsigned far = 0;
    size_t j = 0;
    for (; j + 8 <= m; j += 8) {
        const __m512d v = _mm512_loadu_pd(x + j), a = _mm512_abs_pd(v);
        const __mmask8 in = _mm512_cmp_pd_mask(a, lim, _CMP_LE_OQ); /* (not a NaN either) */
        const __m256 r = _mm512_cvt_roundpd_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __mmask8 inexact = _mm512_cmp_pd_mask(_mm512_cvtps_pd(r), v, _CMP_NEQ_OQ);
        __m256i b = _mm256_castps_si256(r);
        b = _mm256_mask_or_epi32(b, inexact, b, one);
        _mm256_storeu_si256((__m256i *)(xf + j), _mm256_maskz_mov_epi32(in, b));
        am = _mm512_mask_max_pd(am, in, am, a);
        far |= (unsigned)(__mmask8)~in;
    }
    *amax = _mm512_reduce_max_pd(am);
    *anyfar |= far != 0;
    return j;
}

/* v = y widened to double, 8 at a time; *anynan set if a y is a NaN.
 * Returns how many elements it took (a multiple of 8). */
__attribute__((target("avx512f"))) static size_t widen_avx512(const float *y, double *v, size_t m, int *anynan) {
    unsigned nan = 0;
    size_t j = 0;
    for (; j + 8 <= m; j += 8) {
        const __m512d d = _mm512_cvtps_pd(_mm256_loadu_ps(y + j));
        nan |= _mm512_cmp_pd_mask(d, d, _CMP_UNORD_Q);
        _mm512_storeu_pd(v + j, d);
    }
    *anynan |= nan != 0;
    return j;
}
#endif

/* The cast of f64 values xd (n) with no recipe to a format f for which
 * odd_ok() holds, in chunks: each double rounded to odd to f32, then the
 * array casts, the figures against the doubles. Rounding to odd to at
 * least p + 2 bits and then to p bits gives the rounding of x itself, to
 * nearest (either tie rule), directed or to odd (S. Boldo and G.
 * Melquiond, "Emulation of FMA and correctly rounded sums: proved
 * algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008):
 * the format's values and the midpoints between them are floats with a
 * last bit of 0, so the odd float lies strictly between the same two of
 * them as x, or is x. Doubles beyond f32's range (whose odd float, f32's
 * largest, can miss an overflow a double makes under rtz), infinities and
 * NaNs (whose payloads f32 cuts) take the scalar conversion, f64_one, and
 * so does the value of every NaN output (its double follows the policy).
 * Values as doubles, codes in the format's container. 0, or -1 with the
 * message in c. */
static int odd_cast(fpemu_caster *c, const fpemu_format *f, const double *xd, size_t n, double *values, void *codes_out,
                    double *scaled_out) {
    enum { CH = 2048 };
    float *xf = malloc(sizeof(float) * 2 * CH), *yf = xf + CH;
    if (!xf) return fail(c, "out of memory (%d elements)", 2 * CH);
    figures F;
    fpemu_ctx ctx;
    fpemu_cast_stats cs, none;
    plain_start(c, n, &F, &ctx, &cs);
    memset(&none, 0, sizeof none);
    const size_t csz = (size_t)f->container / 8;
#if defined(__x86_64__) && defined(__GNUC__)
    const int avx512 = simd_ok && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#endif
    for (size_t i0 = 0; i0 < n; i0 += CH) {
        const size_t m = n - i0 < CH ? n - i0 : CH;
        const double *x = xd + i0;
        int anyfar = 0, anynan = 0; /* (any element for the scalar conversion; any NaN output) */
        size_t j = 0;
#if defined(__x86_64__) && defined(__GNUC__)
        if (avx512) j = odd_avx512(x, xf, m, &F.amax, &anyfar);
#endif
        for (; j < m; j++) {
            const int far = !(fabs(x[j]) <= FLT_MAX);
            anyfar |= far;
            xf[j] = far ? 0.0f : ro_f32(x[j]);
            if (!far && fabs(x[j]) > F.amax) F.amax = fabs(x[j]);
        }
        if (codes_out) {
            fpemu_ctx cx = ctx;
            fpemu_encode_f32(f, (char *)codes_out + i0 * csz, xf, m, &cx, NULL);
        }
        fpemu_round_f32(f, yf, xf, m, &ctx, &cs); /* (a 0 in place of a far element counts nothing) */
        /* the values: the floats widened, then a far element's and a NaN's put right */
        j = 0;
        double *v = values ? values + i0 : NULL;
#if defined(__x86_64__) && defined(__GNUC__)
        if (v && avx512) j = widen_avx512(yf, v, m, &anynan);
#endif
        for (; v && j < m; j++) {
            v[j] = yf[j];
            anynan |= yf[j] != yf[j];
        }
        for (j = 0; anyfar && j < m; j++) {
            if (fabs(x[j]) <= FLT_MAX) continue;
            double y;
            const uint64_t k = f64_one(c, f, &ctx, x[j], i0 + j, &cs, &y);
            if (codes_out) fpemu_code_store(f, codes_out, i0 + j, k);
            if (isfinite(x[j]) && fabs(x[j]) > F.amax) F.amax = fabs(x[j]);
            yf[j] = (float)y; /* (f's largest, an infinity or a NaN: the same value) */
            if (v) v[j] = y;
        }
        for (j = 0; v && anynan && j < m; j++)
            if (yf[j] != yf[j] && fabs(x[j]) <= FLT_MAX) f64_one(c, f, &ctx, x[j], i0 + j, &none, &v[j]);
        if (!c->counts_only) errors(&F, x, NULL, NULL, yf, m);
    }
    if (scaled_out) memcpy(scaled_out, xd, sizeof(double) * n); /* (no recipe: the input itself) */
    free(xf);
    return keep(c, &F, &cs);
}

/* Whether an f64 input cast to f in mode r may round to odd to f32 first
 * (odd_cast): every value of f a float, a precision of at most 22 bits
 * (two below f32's) and a quantum nowhere below 2^-147 (two bits above
 * f32's subnormals'), in a mode without draws. */
static int odd_ok(const fpemu_format *f, int r) {
    return emu__fits_f32(f) && f->p <= 22 && f->emin - f->mbits >= -147 && r != FPEMU_SR;
}

static int caster_run(fpemu_caster *c, int in_type, const char *in_fmt, const void *x, int ndim, const size_t *shape,
                      void *values, void *codes_out, double *scaled_out) {
    c->have = 0;
    if (fpemu_caster_check(c)) return -1;
    if (in_type != FPEMU_API_F64 && in_type != FPEMU_API_F32 && in_type != FPEMU_API_CODES)
        return fail(c, "input type %d: expected FPEMU_API_F64, FPEMU_API_F32 or FPEMU_API_CODES", in_type);
    if (ndim < 1 || ndim > MAXNDIM) return fail(c, "%d dimensions: expected 1 to %d", ndim, MAXNDIM);
    if (!shape) return fail(c, "no shape given");
    const fpemu_format *ff = NULL, *f = c->f;
    if (in_type == FPEMU_API_CODES) {
        char e[400];
        if (!in_fmt) return fail(c, "codes input: no input format given");
        if (!(ff = fpemu_format_get(in_fmt, e, sizeof e))) return fail(c, "input format: %s", e);
    }
    size_t n = 1;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] && n > (((size_t)1 << 31) - 1) / shape[k]) return fail(c, "too many elements (at most 2^31 - 1)");
        n *= shape[k];
    }
    if (n && !x) return fail(c, "no input array given");
    const int nd = ndim;
    long axis = c->axis;
    if (axis < -nd || axis >= nd) return fail(c, "axis %ld: the input is %d-d: the axis must lie in [%d, %d]", axis, nd, -nd, nd - 1);
    if (axis < 0) axis += nd;
    int scaled = c->sc.kind != FPEMU_GEMM_SCALING_NONE;
    c->scale_kind = 0; /* (set again by a run with a recipe) */
    int rc = -1;
    /* per element: the input as float (an f32 input as it is), the
     * dequantised floats and the codes; the input as double only where a
     * float does not hold it (an f64 input, codes of a format wider than
     * f32), the decoded doubles only for an f64 input without a recipe, the
     * scaled values only when asked for */
    int f64_direct = in_type == FPEMU_API_F64 && !scaled;
    int wide = in_type == FPEMU_API_F64 || (in_type == FPEMU_API_CODES && !emu__fits_f32(ff));
    /* (an f64 input is read in place; its floats only under a recipe) */
    double *xdo = wide && in_type != FPEMU_API_F64 ? malloc(sizeof(double) * (n + 1)) : NULL, *yd = NULL, *xs = NULL;
    const double *xd = in_type == FPEMU_API_F64 ? x : xdo;
    const int need_xf = in_type != FPEMU_API_F32 && !f64_direct;
    float *xfo = need_xf ? malloc(sizeof(float) * (n + 1)) : NULL, *deq = NULL, *deqo = NULL, *dec = NULL;
    const float *xf = in_type == FPEMU_API_F32 ? x : xfo;
    void *codes = NULL, *codeso = NULL; /* (codeso, deqo, xdo, xfo: the ones owned here) */
    if ((wide && in_type != FPEMU_API_F64 && !xdo) || (need_xf && !xfo)) {
        fail(c, "out of memory (%zu elements)", n);
        goto done;
    }
    uint64_t fmax = ff ? (ff->bits + ff->pad >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << (ff->bits + ff->pad)) - 1) : 0;
    size_t i0 = 0;
    if (ff && ff->decode_table && !ff->pad && (ff->container == 8 || ff->container == 16)) {
        /* codes of a format of at most 16 bits in bytes or halfwords: the
         * table's value, as fpemu_to_double gives it, up to the first code
         * out of range (which the loop below names) */
        const double *t = ff->decode_table;
        if (ff->container == 8)
            for (const uint8_t *p = x; i0 < n && p[i0] <= fmax; i0++) xfo[i0] = (float)t[p[i0]];
        else
            for (const uint16_t *p = x; i0 < n && p[i0] <= fmax; i0++) xfo[i0] = (float)t[p[i0]];
    }
    for (size_t i = i0; i < n && (xfo || xdo); i++) {
        double v;
        if (in_type == FPEMU_API_F64) v = ((const double *)x)[i];
        else {
            uint64_t k = fpemu_code_load(ff, x, i);
            if (k > fmax) {
                fail(c, "element %zu = 0x%02llX is not a %s code (%d-bit codes)", i, (unsigned long long)k, ff->name,
                     ff->bits + ff->pad);
                goto done;
            }
            v = fpemu_to_double(ff, k);
        }
        if (xdo) xdo[i] = v;
        if (xfo) xfo[i] = (float)v; /* scaling works in f32 (the frameworks' arithmetic): an f64 input is rounded first */
    }
    if (!wide && !scaled && emu__fits_f32(f)) {
        /* f32 values (an f32 input, or codes of a format of floats), no
         * recipe: the array casts */
        rc = array_cast(c, f, xf, n, values, codes_out, scaled_out);
        goto done;
    }
    if (f64_direct && odd_ok(f, c->round)) {
        rc = odd_cast(c, f, xd, n, values, codes_out, scaled_out);
        goto done;
    }
    /* the codes: uint64 for an f64 input without a recipe and for a format
     * wider than 32 bits, else in the format's container (the output's own
     * memory where it is asked for); the dequantised floats into the f32
     * output where there is one */
    const int narrow = !f64_direct && f->container <= 32;
    const size_t csz = narrow ? (size_t)f->container / 8 : sizeof(uint64_t);
    yd = f64_direct ? malloc(sizeof(double) * (n + 1)) : NULL;
    xs = scaled_out ? malloc(sizeof(double) * (n + 1)) : NULL;
    if (f64_direct) deq = NULL;
    else if (values && in_type != FPEMU_API_F64) deq = values;
    else deq = deqo = malloc(sizeof(float) * (n + 1));
    codes = narrow && codes_out ? codes_out : (codeso = malloc(csz * (n + 1)));
    if ((f64_direct && !yd) || (scaled_out && !xs) || (!f64_direct && !deq) || !codes) {
        fail(c, "out of memory (%zu elements)", n);
        goto done;
    }
    /* the blocks' layout: element (o, l, i) of (outer, L, inner) as row o*inner+i, column l */
    size_t L = shape[axis], inner = 1, outer = 1;
    for (int k = 0; k < nd; k++) {
        if (k < axis) outer *= shape[k];
        else if (k > axis) inner *= shape[k];
    }
    fpemu_gemm_scaling sc = c->sc;
    int blocky = sc.kind == FPEMU_GEMM_SCALING_ROWWISE || sc.kind == FPEMU_GEMM_SCALING_BLOCKWISE || sc.kind == FPEMU_GEMM_SCALING_MX ||
                 sc.kind == FPEMU_GEMM_SCALING_NVFP4;
    size_t rows = blocky ? outer * inner : 1, cols = blocky ? L : n;
    if (blocky && n == 0) rows = cols = 0;
    fpemu_ctx ctx;
    cast_ctx(c, &ctx);
    fpemu_cast_stats cs;
    memset(&cs, 0, sizeof cs);
    figures F;
    memset(&F, 0, sizeof F);
    F.n = n;
    for (size_t i = 0; i < n; i++) {
        double v = xd ? xd[i] : (double)xf[i];
        if (isfinite(v) && fabs(v) > F.amax) F.amax = fabs(v);
    }
    if (f64_direct) {
        /* f64 straight to the format (one rounding), element i taking draw i */
        for (size_t i = 0; i < n; i++) ((uint64_t *)codes)[i] = f64_one(c, f, &ctx, xd[i], i, &cs, &yd[i]);
        if (xs) memcpy(xs, xd, sizeof(double) * n);
    } else {
        /* gather into the blocks' layout, quantise with the library's recipe, scatter back */
        const float *xb = xf;
        float *xg = NULL; /* (the gathered input, when it moves) */
        void *cb = codes;
        float *db = deq;
        int ok = 0;
        if (blocky && axis != nd - 1 && n) {
            xb = xg = malloc(sizeof(float) * (n + 1));
            cb = malloc(csz * (n + 1));
            db = malloc(sizeof(float) * (n + 1));
            if (!xg || !cb || !db) { fail(c, "out of memory (%zu elements)", n); goto gdone; }
            for (size_t o = 0; o < outer; o++) transpose(xf + o * L * inner, xg + o * inner * L, L, inner, sizeof *xg);
        }
        if (rows > (size_t)1 << 31 || cols > ((size_t)1 << 31) - 1) { fail(c, "too large for one cast"); goto gdone; }
        size_t ns = fpemu_gemm_quantize_nscales(&sc, (int)rows, (int)cols, 1);
        dec = malloc(sizeof(float) * (ns + 1));
        if (!dec) { fail(c, "out of memory (%zu scales)", ns); goto gdone; }
        float enc = 1;
        if (narrow ? emu__quantize_f32_n(&sc, f, (int)rows, (int)cols, xb, 1, c->sat, &ctx, cb, &enc, dec, db, &cs, c->err, sizeof c->err)
                   : fpemu_gemm_quantize_f32(&sc, f, (int)rows, (int)cols, xb, 1, c->sat, &ctx, cb, &enc, dec, NULL, db, &cs, c->err,
                                             sizeof c->err))
            goto gdone;
        if (sc.kind == FPEMU_GEMM_SCALING_TENSOR) F.have_scale = 1, F.scale = enc;
        if (sc.kind == FPEMU_GEMM_SCALING_NVFP4) F.tensor_scale = enc;
        /* the decode factors, for fpemu_caster_scales: the blocks' (as they
         * came), or the tensor's one, 1 / scale rounded to f32 as the
         * dequantisation multiplies by it */
        float *keep = realloc(c->scales, sizeof(float) * ((blocky ? ns : 1) + 1));
        if (!keep) { fail(c, "out of memory (%zu scales)", ns); goto gdone; }
        c->scales = keep;
        if (blocky) memcpy(keep, dec, sizeof(float) * ns);
        else keep[0] = 1.0f / enc;
        c->scale_kind = blocky ? 2 : 1;
        c->tensor_factor = sc.kind == FPEMU_GEMM_SCALING_NVFP4 ? 1.0f / enc : 1.0f;
        if (blocky) {
            F.nscales = ns;
            F.smin = INFINITY, F.smax = -INFINITY;
            for (size_t k = 0; k < ns; k++) {
                if (dec[k] < F.smin) F.smin = dec[k];
                if (dec[k] > F.smax) F.smax = dec[k];
            }
            if (!ns) F.smin = F.smax = 0;
        }
        /* the codes and dequantised values back from the blocks' layout */
        for (size_t o = 0; xb != xf && o < outer; o++) {
            transpose((const char *)cb + o * inner * L * csz, (char *)codes + o * L * inner * csz, inner, L, csz);
            transpose(db + o * inner * L, deq + o * L * inner, inner, L, sizeof *deq);
        }
        /* the scaled value each element's cast saw: x over its decode factor */
        for (size_t r = 0; r < rows && xs; r++)
            for (size_t q = 0; q < cols; q++) {
                size_t i = r * cols + q;
                double dq = 1;
                switch (sc.kind) {
                case FPEMU_GEMM_SCALING_TENSOR: dq = 1.0 / enc; break;
                case FPEMU_GEMM_SCALING_ROWWISE: dq = dec[r]; break;
                case FPEMU_GEMM_SCALING_BLOCKWISE: dq = dec[r * ((cols + sc.block_k - 1) / sc.block_k) + q / sc.block_k]; break;
                case FPEMU_GEMM_SCALING_MX: dq = dec[r * ((cols + 31) / 32) + q / 32]; break;
                case FPEMU_GEMM_SCALING_NVFP4: dq = dec[r * ((cols + 15) / 16) + q / 16] / (double)enc; break;
                default: break;
                }
                const size_t dst = xb != xf ? (r / inner * L + q) * inner + r % inner : i;
                xs[dst] = (double)xf[dst] / dq;
            }
        if (xs && !scaled)
            for (size_t i = 0; i < n; i++) xs[i] = xd ? xd[i] : (double)xf[i];
        ok = 1;
    gdone:
        if (xb != xf) free(xg), free(cb), free(db);
        if (!ok) goto done;
    }
    if (!c->counts_only) errors(&F, xd, xf, yd, deq, n);
    if (values) { /* f64 values for an f64 input, else f32 (deq itself) */
        if (yd) memcpy(values, yd, sizeof(double) * n);
        else if (in_type == FPEMU_API_F64)
            for (size_t i = 0; i < n; i++) ((double *)values)[i] = deq[i];
    }
    if (codes_out && codes != codes_out)
        for (size_t i = 0; i < n; i++) fpemu_code_store(f, codes_out, i, ((const uint64_t *)codes)[i]);
    if (scaled_out) memcpy(scaled_out, xs, sizeof(double) * n);
    rc = keep(c, &F, &cs);
done:
    free(xdo), free(yd), free(xs), free(xfo), free(deqo), free(dec), free(codeso);
    return rc;
}

/* Under the library's floating-point environment (internal.h
 * emu__fpenv_enter): the float and double arithmetic here (the rounding to
 * odd, the figures) must not see a caller's FTZ, DAZ or rounding mode, and
 * raises no flag in the caller's. */
int fpemu_caster_run(fpemu_caster *c, int in_type, const char *in_fmt, const void *x, int ndim, const size_t *shape,
                     void *values, void *codes_out, double *scaled_out) {
    if (!c) return -1;
    const unsigned fe = emu__fpenv_enter();
    const int rc = caster_run(c, in_type, in_fmt, x, ndim, shape, values, codes_out, scaled_out);
    emu__fpenv_leave(fe);
    return rc;
}

int fpemu_caster_scale_layout(fpemu_caster *c, int ndim, const size_t *shape, int *sndim, size_t *sshape) {
    if (!c) return -1;
    if (ndim < 1 || ndim > MAXNDIM || !shape) return fail(c, "ndim %d: expected 1 to %d dimensions", ndim, MAXNDIM);
    long axis = c->axis;
    if (axis < -ndim || axis >= ndim)
        return fail(c, "axis %ld: the input is %d-d: the axis must lie in [%d, %d]", axis, ndim, -ndim, ndim - 1);
    if (axis < 0) axis += ndim;
    const fpemu_gemm_scaling *sc = &c->sc;
    *sndim = 0;
    switch (sc->kind) {
    case FPEMU_GEMM_SCALING_NONE: return 0;
    case FPEMU_GEMM_SCALING_ROWWISE: case FPEMU_GEMM_SCALING_BLOCKWISE: case FPEMU_GEMM_SCALING_MX: case FPEMU_GEMM_SCALING_NVFP4: break;
    default: return 1; /* one factor for the tensor: a scalar */
    }
    size_t r = 1, L = shape[axis];
    for (int k = 0; k < ndim; k++)
        if (k != axis) r *= shape[k], sshape[(*sndim)++] = shape[k];
    if (r > (size_t)1 << 31 || L > ((size_t)1 << 31) - 1) return fail(c, "too large for one cast");
    /* the blocks along the axis: the library's count of scales for one row of L */
    sshape[(*sndim)++] = L ? fpemu_gemm_quantize_nscales(sc, 1, (int)L, 1) : 0;
    return 2;
}

int fpemu_caster_scales(fpemu_caster *c, const float **factors, float *tensor_factor) {
    if (!c) return -1;
    if (!c->have || !c->scale_kind) return fail(c, "no scales: no successful run with a recipe");
    if (factors) *factors = c->scales;
    if (tensor_factor) *tensor_factor = c->tensor_factor;
    return 0;
}

int fpemu_caster_run_f32(fpemu_caster *c, const float *x, int ndim, const size_t *shape, float *values, void *codes) {
    return fpemu_caster_run(c, FPEMU_API_F32, NULL, x, ndim, shape, values, codes, NULL);
}

int fpemu_caster_run_f64(fpemu_caster *c, const double *x, int ndim, const size_t *shape, double *values, void *codes) {
    return fpemu_caster_run(c, FPEMU_API_F64, NULL, x, ndim, shape, values, codes, NULL);
}
