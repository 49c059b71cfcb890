/* SPDX-License-Identifier: MIT */
/* api.c: the binding interface (fpemu_api.h): versions, format queries by
 * name, and the GEMM and dot-product handles over gemm.h and mma.h. The
 * cast handle lives in caststats.c. Nothing here computes: every result is
 * the one `fpemu gemm` and `fpemu mma` give. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpemu.h"
#include "fpemu_api.h"
#include "gemm.h"
#include "mma.h"
#include "internal.h"
#include "recipe.h"
#include "sumtree.h"


const char *fpemu_version(void) { return FPEMU_VERSION; }
int fpemu_api_version(void) { return FPEMU_API_VERSION; }

/* ---- formats ----------------------------------------------------------------- */

int fpemu_api_format_count(void) { return fpemu_format_count(); }

const char *fpemu_api_format_name(int i) {
    const fpemu_format *f = i >= 0 && i < fpemu_format_count() ? fpemu_format_at(i) : NULL;
    return f ? f->name : NULL;
}

static const char *const format_keys[] = {"name", "bits", "container", "pad", "ebits", "mbits", "bias", "p", "emin", "emax",
                                          "signed", "negzero", "subnormals", "inf", "nan", "max_finite", "min_normal",
                                          "min_subnormal", "aliases", NULL};

const char *fpemu_api_format_key(int i) {
    return i >= 0 && i < (int)(sizeof format_keys / sizeof *format_keys) ? format_keys[i] : NULL;
}

int fpemu_api_format_prop(const char *fmt, const char *key, double *value, const char **text, char *err, size_t errlen) {
    if (value) *value = NAN;
    if (text) *text = NULL;
    if (!fmt || !key) {
        emu__errf(err, errlen, "no format or no key given");
        return -1;
    }
    char e[400];
    const fpemu_format *f = fpemu_format_get(fmt, e, sizeof e);
    if (!f) {
        emu__errf(err, errlen, "%s", e);
        return -1;
    }
    double v = NAN;
    const char *t = NULL;
    if (!strcmp(key, "name")) t = f->name;
    else if (!strcmp(key, "bits")) v = f->bits;
    else if (!strcmp(key, "container")) v = f->container;
    else if (!strcmp(key, "pad")) v = f->pad;
    else if (!strcmp(key, "ebits")) v = f->ebits;
    else if (!strcmp(key, "mbits")) v = f->mbits;
    else if (!strcmp(key, "bias")) v = f->bias;
    else if (!strcmp(key, "p")) v = f->p;
    else if (!strcmp(key, "emin")) v = f->emin;
    else if (!strcmp(key, "emax")) v = f->emax;
    else if (!strcmp(key, "signed")) v = f->is_signed;
    else if (!strcmp(key, "negzero")) v = f->has_negzero;
    else if (!strcmp(key, "subnormals")) v = f->has_subnormals;
    else if (!strcmp(key, "max_finite")) v = f->max_finite;
    else if (!strcmp(key, "min_normal")) v = f->min_normal;
    else if (!strcmp(key, "min_subnormal")) v = f->min_subnormal;
    else if (!strcmp(key, "inf")) t = f->inf == FPEMU_INF_NONE ? "none" : f->inf == FPEMU_INF_IEEE ? "ieee" : "top";
    else if (!strcmp(key, "nan"))
        t = f->nan == FPEMU_NANS_NONE ? "none"
            : f->nan == FPEMU_NANS_IEEE ? "ieee"
            : f->nan == FPEMU_NANS_FN ? "fn"
            : f->nan == FPEMU_NANS_UZ ? "uz"
                                      : "allones";
    else if (!strcmp(key, "aliases")) {
        t = "";
        for (int i = 0; i < fpemu_format_count(); i++)
            if (fpemu_format_at(i) == f) t = fpemu_format_aliases(i) ? fpemu_format_aliases(i) : "";
    } else {
        emu__errf(err, errlen, "unknown format property '%s' (expected name, bits, container, pad, ebits, mbits, bias, p, emin, "
                             "emax, signed, negzero, subnormals, inf, nan, max_finite, min_normal, min_subnormal, aliases)", key);
        return -1;
    }
    if (value) *value = v;
    if (text) *text = t;
    return 0;
}

int fpemu_api_decode_f64(const char *fmt, const uint64_t *codes, size_t n, double *out, char *err, size_t errlen) {
    char e[400];
    const fpemu_format *f = fmt ? fpemu_format_get(fmt, e, sizeof e) : NULL;
    if (!f) {
        emu__errf(err, errlen, "%s", fmt ? e : "no format given");
        return -1;
    }
    if (n && (!codes || !out)) {
        emu__errf(err, errlen, "no array given");
        return -1;
    }
    for (size_t i = 0; i < n; i++) out[i] = fpemu_to_double(f, codes[i]);
    return 0;
}

/* The largest code of f's field (its bits and padding). */
static uint64_t code_max(const fpemu_format *f) {
    int w = f->bits + f->pad;
    return w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
    if (!s || !*s) return -1;
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (*e || errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* ---- GEMM ---------------------------------------------------------------------- */

struct fpemu_gemmer {
    fpemu_gemm_config cfg;
    fpemu_gemm_stats st;
    float smin[2];              /* the last run's scale_min_a, scale_min_b */
    int have;
    int trans_a, trans_b;       /* A given stored K x M, B stored N x K (their transposes, row-major) */
    char err[512];
    /* algo=cublas (docs/cublas.md): the call's tree from a table */
    char *model;                /* as given to fpemu_gemmer_new (the plain model's leaf) */
    int cublas, fast_accum;
    int no_rpr; /* reduced_precision_reduction=0 (PyTorch's allow_*_reduced_precision_reduction = False) */
    int tuned;                  /* promote or a model parameter was set: not a library call's tree */
    int cM, cN, cK;             /* call_shape; cK = 0: none (the matrices are the call) */
    char op[16];                /* the call the tree is looked up for (FPEMU_SUMTREE_OPS; "" = mm) */
    char *table_path;           /* NULL: the table built into the library */
    fpemu_sumtree_table tab;
    int have_tab;
    /* what the last run with algo=cublas used */
    int resolved;               /* 0 no such run, 1 a table row, 2 not listed: the plain model */
    int row_line;
    char row_status[24], tree[400];
};

/* fail a gemmer call with a message in its error buffer */
#define gfail(g, ...) emu__errf((g)->err, sizeof (g)->err, __VA_ARGS__)

fpemu_gemmer *fpemu_gemmer_new(const char *model, const char *afmt, const char *bfmt, char *err, size_t errlen) {
    if (!model || !afmt) {
        emu__errf(err, errlen, "%s", !model ? "no model given" : "no element format given (afmt)");
        return NULL;
    }
    fpemu_gemmer *g = calloc(1, sizeof *g);
    if (!g) {
        emu__errf(err, errlen, "out of memory");
        return NULL;
    }
    char e[512];
    if (fpemu_gemm_config_init(&g->cfg, model, afmt, bfmt ? bfmt : afmt, e, sizeof e)) {
        emu__errf(err, errlen, "%s", e);
        free(g);
        return NULL;
    }
    if (!(g->model = strdup(model))) {
        emu__errf(err, errlen, "out of memory");
        free(g);
        return NULL;
    }
    return g;
}

void fpemu_gemmer_free(fpemu_gemmer *g) {
    if (!g) return;
    fpemu_sumtree_table_free(&g->tab);
    free(g->model), free(g->table_path), free(g);
}
const char *fpemu_gemmer_error(const fpemu_gemmer *g) { return g ? g->err : "no gemmer"; }

int fpemu_gemmer_set(fpemu_gemmer *g, const char *key, const char *value) {
    if (!g) return -1;
    g->err[0] = 0;
    if (!key || !value) return gfail(g, "no option or no value given");
    long v;
    if (!strcmp(key, "scaling")) {
        fpemu_gemm_config c = g->cfg;
        if (fpemu_gemm_config_set_scaling(&c, value, g->err, sizeof g->err)) return -1;
        g->cfg = c;
    } else if (!strcmp(key, "promote")) {
        if (parse_int(value, 0, 1L << 30, &v)) return gfail(g, "expected a non-negative integer (at most 2^30)");
        g->cfg.promote = (int)v;
        g->tuned = 1;
    } else if (!strcmp(key, "algo")) {
        if (strcmp(value, "plain") && strcmp(value, "cublas")) return gfail(g, "expected plain or cublas");
        if (!strcmp(value, "cublas") && !g->have_tab) {
            if (fpemu_sumtree_table_builtin(&g->tab, g->err, sizeof g->err)) return -1;
            g->have_tab = 1;
        }
        g->cublas = value[0] == 'c';
    } else if (!strcmp(key, "fast_accum")) {
        if (parse_int(value, 0, 1, &v)) return gfail(g, "expected 0 or 1");
        g->fast_accum = (int)v;
    } else if (!strcmp(key, "reduced_precision_reduction")) {
        if (parse_int(value, 0, 1, &v)) return gfail(g, "expected 0 or 1");
        g->no_rpr = !v;
    } else if (!strcmp(key, "op")) {
        if (strcmp(value, "mm") && strcmp(value, "mm-ta") && strcmp(value, "linear"))
            return gfail(g, "expected one of %s", FPEMU_SUMTREE_OPS);
        snprintf(g->op, sizeof g->op, "%s", value);
    } else if (!strcmp(key, "call_shape")) {
        int m, n, k;
        char extra;
        if (!*value || !strcmp(value, "none")) g->cM = g->cN = g->cK = 0;
        else if (sscanf(value, "%dx%dx%d%c", &m, &n, &k, &extra) != 3 || m < 1 || n < 1 || k < 1 || m > 1 << 24 ||
                 n > 1 << 24 || k > 1 << 24)
            return gfail(g, "expected MxNxK (e.g. 64x64x4096; at most 2^24 each), or none");
        else g->cM = m, g->cN = n, g->cK = k;
    } else if (!strcmp(key, "table")) {
        /* a table file, read now (its errors name the file and line); "" or "builtin": the library's copy */
        fpemu_sumtree_table t;
        int builtin = !*value || !strcmp(value, "builtin");
        char *path = builtin ? NULL : strdup(value);
        if (!builtin && !path) return gfail(g, "out of memory");
        if (builtin ? fpemu_sumtree_table_builtin(&t, g->err, sizeof g->err) : fpemu_sumtree_table_read(&t, value, g->err, sizeof g->err)) {
            free(path);
            return -1;
        }
        fpemu_sumtree_table_free(&g->tab);
        free(g->table_path);
        g->tab = t, g->have_tab = 1, g->table_path = path;
    } else if (!strcmp(key, "threads")) {
        if (parse_int(value, 0, 64, &v)) return gfail(g, "expected an integer in [0, 64]");
        g->cfg.nthreads = (int)v;
    } else if (!strcmp(key, "sat")) {
        if (parse_int(value, 0, 1, &v)) return gfail(g, "expected 0 or 1");
        g->cfg.sat = (int)v;
    } else if (!strcmp(key, "trans_a") || !strcmp(key, "trans_b")) {
        if (parse_int(value, 0, 1, &v)) return gfail(g, "expected 0 or 1");
        if (key[6] == 'a') g->trans_a = (int)v;
        else g->trans_b = (int)v;
    } else if (!strcmp(key, "scale_a") || !strcmp(key, "scale_b")) {
        /* the given recipe's per-tensor encode scales (an f32, decimal or hex) */
        char *e;
        errno = 0;
        float x = strtof(value, &e);
        if (!*value || *e || !(x > 0) || !isfinite(x)) return gfail(g, "expected a finite f32 > 0");
        if (key[6] == 'a') g->cfg.scaling.scale_a = x;
        else g->cfg.scaling.scale_b = x;
    } else if (!strcmp(key, "pow2")) { /* tensor, rowwise: scales rounded down to 2^k */
        if (parse_int(value, 0, 1, &v)) return gfail(g, "expected 0 or 1");
        g->cfg.scaling.cur.pow2 = (int)v;
    } else if (!strcmp(key, "block_pow2")) {
        if (parse_int(value, 0, 1, &v)) return gfail(g, "expected 0 or 1");
        g->cfg.scaling.block_pow2 = (int)v;
    } else if (!strcmp(key, "block_a_rows") || !strcmp(key, "block_b_cols")) {
        if (parse_int(value, 1, 1L << 20, &v)) return gfail(g, "expected an integer in [1, 2^20]");
        if (key[6] == 'a') g->cfg.scaling.block_a_rows = (int)v;
        else g->cfg.scaling.block_b_cols = (int)v;
    } else if (!strcmp(key, "outfmt")) {
        if (!*value || !strcmp(value, "none")) g->cfg.outfmt = NULL;
        else {
            const fpemu_format *f = fpemu_format_get(value, g->err, sizeof g->err);
            if (!f) return -1;
            g->cfg.outfmt = f;
        }
    } else {
        if (fpemu_mma_model_set(&g->cfg.model, key, value, g->err, sizeof g->err)) return -1;
        g->tuned = 1;
    }
    return 0;
}

int fpemu_gemmer_get(const fpemu_gemmer *g, const char *key, char *buf, size_t len) {
    if (!g || !key) return -1;
    char num[80];
    const char *v;
    if (!strcmp(key, "algo")) v = g->cublas ? "cublas" : "plain";
    else if (!strcmp(key, "fast_accum")) v = g->fast_accum ? "1" : "0";
    else if (!strcmp(key, "reduced_precision_reduction")) v = g->no_rpr ? "0" : "1";
    else if (!strcmp(key, "trans_a")) v = g->trans_a ? "1" : "0";
    else if (!strcmp(key, "trans_b")) v = g->trans_b ? "1" : "0";
    else if (!strcmp(key, "op")) v = g->op[0] ? g->op : "mm";
    else if (!strcmp(key, "call_shape")) {
        if (g->cK) snprintf(num, sizeof num, "%dx%dx%d", g->cM, g->cN, g->cK);
        else num[0] = 0;
        v = num;
    } else if (!strcmp(key, "table")) v = g->table_path ? g->table_path : g->have_tab ? "builtin" : "";
    else if (!strcmp(key, "table_name")) v = g->have_tab ? g->tab.name : "";
    else if (!strcmp(key, "stands_for")) v = g->have_tab ? g->tab.stands_for : "";
    else if (!strcmp(key, "resolved")) v = g->resolved == 1 ? "table" : g->resolved == 2 ? "plain" : "";
    else if (!strcmp(key, "table_line")) {
        if (g->resolved == 1) snprintf(num, sizeof num, "%d", g->row_line);
        else num[0] = 0;
        v = num;
    } else if (!strcmp(key, "row_status")) v = g->resolved == 1 ? g->row_status : "";
    else if (!strcmp(key, "tree")) v = g->resolved ? g->tree : "";
    else return -1;
    return snprintf(buf, len, "%s", v);
}

static int gemm_sizes(fpemu_gemmer *g, int M, int N, int K) {
    if (M < 0 || N < 0 || K < 0) return gfail(g, "negative size (M %d, N %d, K %d)", M, N, K);
    return 0;
}

/* algo=cublas: what the call needs (what `fpemu gemm --algo cublas`
 * refuses), then its tree (fpemu_sumtree_resolve) bound to the formats into
 * *bd; the row used, or the fallback, is kept for fpemu_gemmer_get. */
static int cublas_tree(fpemu_gemmer *g, int M, int N, int K, fpemu_sumtree_bound *bd) {
    g->resolved = 0;
    if (g->cfg.scaling.kind != FPEMU_GEMM_SCALING_NONE || g->tuned)
        return gfail(g, "algo cublas takes unscaled inputs and the table's tree: no scaling, promote or model parameters");
    if (g->cK && (g->cK != K || g->cM < M || g->cN < N))
        return gfail(g, "call_shape %dx%dx%d: the matrices (%d x %d x %d) must be rows and columns of that call (the same K)", g->cM,
                     g->cN, g->cK, M, N, K);
    fpemu_sumtree tree;
    const fpemu_sumtree_row *row;
    if (fpemu_sumtree_resolve_op(&g->tab, g->op[0] ? g->op : "mm", g->model, g->cfg.afmt, g->cfg.bfmt, g->cfg.outfmt, g->fast_accum, g->cK ? g->cM : M,
                              g->cK ? g->cN : N, K, &tree, &row, g->err, sizeof g->err))
        return -1;
    if (g->no_rpr) fpemu_sumtree_no_reduced_precision(&tree);
    if (fpemu_sumtree_bind(bd, &tree, g->cfg.afmt, g->cfg.bfmt, g->err, sizeof g->err)) return -1;
    g->resolved = row ? 1 : 2;
    g->row_line = row ? row->line : 0;
    snprintf(g->row_status, sizeof g->row_status, "%s", row ? row->status : "");
    fpemu_sumtree_format(&tree, g->tree, sizeof g->tree);
    return 0;
}

/* The options of algo cublas are refused under algo plain, as `fpemu gemm` does. */
static int plain_options(fpemu_gemmer *g) {
    if (g->fast_accum || g->cK || g->table_path || (g->op[0] && strcmp(g->op, "mm")) || g->no_rpr)
        return gfail(g, "%s goes with algo cublas", g->fast_accum ? "fast_accum" : g->cK ? "call_shape" : g->table_path ? "table"
                                                    : g->no_rpr ? "reduced_precision_reduction=0" : "op");
    return 0;
}

/* D from codes through the tree (the bound tree, c = C in the epilogue). */
static int cublas_run(fpemu_gemmer *g, const fpemu_sumtree_bound *bd, int M, int N, int K, const uint64_t *A, const uint64_t *B,
                      const float *C, float *D) {
    if (fpemu_sumtree_gemm_codes(bd, M, N, K, A, B, C, g->cfg.nthreads, D, g->err, sizeof g->err)) return -1;
    g->have = 1;
    return 0;
}

/* What every run checks first: a handle, the sizes, the arrays a
 * non-empty product needs. 0, or -1 with a message (the last run's figures
 * dropped either way). */
static int run_start(fpemu_gemmer *g, int M, int N, int K, const void *A, const void *B, const float *D) {
    if (!g) return -1;
    g->err[0] = 0;
    g->have = 0;
    g->smin[0] = g->smin[1] = 1.0f; /* (the paths without a recipe) */
    if (gemm_sizes(g, M, N, K)) return -1;
    if (M && N && !D) return gfail(g, "no output array D given");
    if (K && (M || N) && (!A || !B)) return gfail(g, "no input array A or B given");
    return 0;
}

/* The operands as the paths without leading dimensions take them (A M x K,
 * B K x N, row-major): where trans_a or trans_b is set, a transposed copy
 * (of w-byte elements) into *own, which the caller frees. 0, or -1 (out of
 * memory, with a message). */
static int untransposed(fpemu_gemmer *g, int M, int N, int K, const void **A, const void **B, size_t w, void **own) {
    own[0] = own[1] = NULL;
    for (int s = 0; s < 2; s++) {
        if (!(s ? g->trans_b : g->trans_a)) continue;
        const size_t rows = (size_t)(s ? K : M), cols = (size_t)(s ? N : K); /* the operand's shape; stored cols x rows */
        const char *src = s ? *B : *A;
        char *dst = malloc(w * (rows * cols + 1));
        if (!dst) {
            free(own[0]);
            own[0] = NULL;
            return gfail(g, "out of memory");
        }
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) memcpy(dst + w * (r * cols + c), src + w * (c * rows + r), w);
        own[s] = dst;
        *(s ? B : A) = dst;
    }
    return 0;
}

int fpemu_gemmer_run_f32(fpemu_gemmer *g, int M, int N, int K, const float *A, const float *B, const float *C, float *D) {
    if (run_start(g, M, N, K, A, B, D)) return -1;
    if (g->cublas) {
        /* values cast to the bound tree's operand formats (scaling none), as `fpemu gemm --algo cublas` */
        fpemu_sumtree_bound bd;
        if (cublas_tree(g, M, N, K, &bd)) return -1;
        void *own[2];
        const void *a = A, *b = B;
        if (untransposed(g, M, N, K, &a, &b, sizeof(float), own)) return -1;
        A = a, B = b;
        memset(&g->st, 0, sizeof g->st);
        uint64_t *Ac = malloc(sizeof(uint64_t) * ((size_t)M * K + 1)), *Bc = malloc(sizeof(uint64_t) * ((size_t)K * N + 1));
        int rc = -1;
        if (!Ac || !Bc) gfail(g, "out of memory");
        else if (!fpemu_gemm_quantize_f32(&g->cfg.scaling, bd.fa, M, K, A, 0, g->cfg.sat, NULL, Ac, NULL, NULL, NULL, NULL,
                                          &g->st.a, g->err, sizeof g->err) &&
                 !fpemu_gemm_quantize_f32(&g->cfg.scaling, bd.fb, K, N, B, 0, g->cfg.sat, NULL, Bc, NULL, NULL, NULL, NULL,
                                          &g->st.b, g->err, sizeof g->err))
            rc = cublas_run(g, &bd, M, N, K, Ac, Bc, C, D);
        free(Ac), free(Bc), free(own[0]), free(own[1]);
        return rc;
    }
    if (plain_options(g)) return -1;
    /* transposed operands go to the GEMM as they lie (no copy) */
    const int lda = g->trans_a ? M : K, ldb = g->trans_b ? K : N;
    if (fpemu_gemm_check(&g->cfg, M, N, K, lda, g->trans_a, ldb, g->trans_b, N, N, g->err, sizeof g->err)) return -1;
    if (emu__gemm_f32_smin(&g->cfg, M, N, K, A, lda, g->trans_a, B, ldb, g->trans_b, C, N, D, N, &g->st, g->smin))
        return gfail(g, "gemm failed (out of memory?)");
    g->have = 1;
    return 0;
}

/* run_codes on A (M x K) and B (K x N) as they lie */
static int run_codes(fpemu_gemmer *g, int M, int N, int K, const uint64_t *A, const uint64_t *B, const float *C, float *D) {
    const fpemu_format *fs[2] = {g->cfg.afmt, g->cfg.bfmt};
    const uint64_t *xs[2] = {A, B};
    size_t rows[2] = {(size_t)M, (size_t)K}, cols[2] = {(size_t)K, (size_t)N};
    for (int w = 0; w < 2; w++) {
        uint64_t max = code_max(fs[w]);
        for (size_t i = 0; i < rows[w] * cols[w]; i++)
            if (xs[w][i] > max)
                return gfail(g, "%c: element [%zu, %zu] = %llu (0x%llX) is not a %s code (%d-bit codes, at most %llu)", w ? 'B' : 'A',
                             i / cols[w], i % cols[w], (unsigned long long)xs[w][i], (unsigned long long)xs[w][i], fs[w]->name,
                             fs[w]->bits + fs[w]->pad, (unsigned long long)max);
    }
    if (g->cublas) {
        fpemu_sumtree_bound bd;
        if (cublas_tree(g, M, N, K, &bd)) return -1;
        if (bd.fa != g->cfg.afmt || bd.fb != g->cfg.bfmt)
            return gfail(g, "algo cublas: the table's row for this call reads %s operands: give values (run_f32), not codes", bd.fa->name);
        memset(&g->st, 0, sizeof g->st);
        return cublas_run(g, &bd, M, N, K, A, B, C, D);
    }
    if (plain_options(g)) return -1;
    if (fpemu_gemm_check(&g->cfg, M, N, K, K, 0, N, 0, N, N, g->err, sizeof g->err)) return -1;
    if (fpemu_gemm_codes(&g->cfg, M, N, K, A, B, C, NULL, NULL, NULL, 0, D, &g->st)) return gfail(g, "gemm failed (out of memory?)");
    g->have = 1;
    return 0;
}

int fpemu_gemmer_run_codes(fpemu_gemmer *g, int M, int N, int K, const uint64_t *A, const uint64_t *B, const float *C, float *D) {
    if (run_start(g, M, N, K, A, B, D)) return -1;
    if (g->cfg.scaling.kind != FPEMU_GEMM_SCALING_NONE) return gfail(g, "codes input: scaling must be none (the codes are used as they are)");
    /* transposed operands as copies (the codes path takes no leading dimensions) */
    void *own[2];
    const void *a = A, *b = B;
    if (untransposed(g, M, N, K, &a, &b, sizeof(uint64_t), own)) return -1;
    int rc = run_codes(g, M, N, K, a, b, C, D);
    free(own[0]), free(own[1]);
    return rc;
}

static const char *const gemm_keys[] = {"a_n", "a_overflow", "a_saturated", "a_flushed", "a_subnormal", "a_nonfinite_in", "amax_a",
                                        "scale_a", "b_n", "b_overflow", "b_saturated", "b_flushed", "b_subnormal",
                                        "b_nonfinite_in", "amax_b", "scale_b", "slow_outputs", "kernel", "lanes", "scale_min_a",
                                        "scale_min_b", NULL};

const char *fpemu_gemmer_stat_key(int i) {
    return i >= 0 && i < (int)(sizeof gemm_keys / sizeof *gemm_keys) ? gemm_keys[i] : NULL;
}

int fpemu_gemmer_stat(fpemu_gemmer *g, const char *key, double *value) {
    if (!g || !key) return -1;
    if (!g->have) return gfail(g, "no telemetry: no GEMM has run");
    const fpemu_gemm_stats *s = &g->st;
    double v;
    if ((key[0] == 'a' || key[0] == 'b') && key[1] == '_') {
        const fpemu_cast_stats *c = key[0] == 'a' ? &s->a : &s->b;
        const char *k = key + 2;
        if (!strcmp(k, "n")) v = (double)c->n;
        else if (!strcmp(k, "overflow")) v = (double)c->overflow;
        else if (!strcmp(k, "saturated")) v = (double)c->saturated;
        else if (!strcmp(k, "flushed")) v = (double)c->underflow;
        else if (!strcmp(k, "subnormal")) v = (double)c->subnormal;
        else if (!strcmp(k, "nonfinite_in")) v = (double)c->nonfinite_in;
        else return gfail(g, "unknown telemetry key '%s'", key);
    } else if (!strcmp(key, "amax_a")) v = s->amax_a;
    else if (!strcmp(key, "amax_b")) v = s->amax_b;
    else if (!strcmp(key, "scale_a")) v = s->scale_a;
    else if (!strcmp(key, "scale_b")) v = s->scale_b;
    else if (!strcmp(key, "scale_min_a")) v = g->smin[0];
    else if (!strcmp(key, "scale_min_b")) v = g->smin[1];
    else if (!strcmp(key, "slow_outputs")) v = (double)s->slow_outputs;
    else if (!strcmp(key, "kernel")) v = s->kernel;
    else if (!strcmp(key, "lanes")) v = s->lanes;
    else return gfail(g, "unknown telemetry key '%s'", key);
    if (value) *value = v;
    return 0;
}

/* ---- dot products ------------------------------------------------------------------ */

struct fpemu_dotter {
    fpemu_mma_model m;
    int int_mode, a_signed, b_signed;
    unsigned long promote;
    char model[256];
    char err[512];
};

/* fail a dotter call with a message in its error buffer */
#define dfail(d, ...) emu__errf((d)->err, sizeof (d)->err, __VA_ARGS__)

static int int_fmt(const char *s, int *is_signed) {
    if (!strcmp(s, "s8") || !strcmp(s, "int8")) { *is_signed = 1; return 1; }
    if (!strcmp(s, "u8") || !strcmp(s, "uint8")) { *is_signed = 0; return 1; }
    return 0;
}

fpemu_dotter *fpemu_dotter_new(const char *model, const char *afmt, const char *bfmt, const char *cfmt, const char *dfmt, char *err,
                               size_t errlen) {
    if (!model || !afmt) {
        emu__errf(err, errlen, "%s", !model ? "no model given" : "no input format given (afmt)");
        return NULL;
    }
    if (!bfmt) bfmt = afmt;
    if (strlen(model) >= sizeof ((fpemu_dotter *)0)->model) {
        emu__errf(err, errlen, "model name too long");
        return NULL;
    }
    fpemu_dotter *d = calloc(1, sizeof *d);
    if (!d) {
        emu__errf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(d->model, sizeof d->model, "%s", model);
    char e[512];
    int sa = 0, sb = 0;
    int ia = int_fmt(afmt, &sa), ib = int_fmt(bfmt, &sb);
    if (ia || ib) {
        if (!ia || !ib) {
            emu__errf(err, errlen, "afmt %s, bfmt %s: integer and floating-point inputs do not mix", afmt, bfmt);
            goto bad;
        }
        if ((cfmt && strcmp(cfmt, "s32") && strcmp(cfmt, "int32")) || (dfmt && strcmp(dfmt, "s32") && strcmp(dfmt, "int32"))) {
            emu__errf(err, errlen, "integer MMA accumulates in s32 (cfmt and dfmt s32)");
            goto bad;
        }
        if (fpemu_mma_model_preset_int(&d->m, model, sa, sb, 0, e, sizeof e)) {
            emu__errf(err, errlen, "%s", e);
            goto bad;
        }
        d->int_mode = 1, d->a_signed = sa, d->b_signed = sb;
        return d;
    }
    const fpemu_format *f[4] = {NULL, NULL, NULL, NULL};
    const char *names[4] = {afmt, bfmt, cfmt, dfmt}, *what[4] = {"afmt", "bfmt", "cfmt", "dfmt"};
    for (int i = 0; i < 4; i++)
        if (names[i] && !(f[i] = fpemu_format_get(names[i], e, sizeof e))) {
            emu__errf(err, errlen, "%s: %s", what[i], e);
            goto bad;
        }
    if (fpemu_mma_model_preset(&d->m, model, f[0], f[1], f[2], f[3], e, sizeof e)) {
        emu__errf(err, errlen, "%s", e);
        goto bad;
    }
    return d;
bad:
    free(d);
    return NULL;
}

void fpemu_dotter_free(fpemu_dotter *d) { free(d); }
const char *fpemu_dotter_error(const fpemu_dotter *d) { return d ? d->err : "no dotter"; }

int fpemu_dotter_set(fpemu_dotter *d, const char *key, const char *value) {
    if (!d) return -1;
    d->err[0] = 0;
    if (!key || !value) return dfail(d, "no option or no value given");
    long v;
    if (!strcmp(key, "promote")) {
        if (parse_int(value, 0, 1L << 30, &v)) return dfail(d, "expected a non-negative integer (at most 2^30)");
        d->promote = (unsigned long)v;
    } else if (!strcmp(key, "sat")) {
        if (parse_int(value, 0, 1, &v)) return dfail(d, "expected 0 or 1");
        if (!d->int_mode) return dfail(d, "sat is for integer models (s8/u8 inputs)");
        fpemu_mma_model m;
        if (fpemu_mma_model_preset_int(&m, d->model, d->a_signed, d->b_signed, (int)v, d->err, sizeof d->err)) return -1;
        d->m = m;
    } else if (fpemu_mma_model_set(&d->m, key, value, d->err, sizeof d->err))
        return -1;
    return 0;
}

const char *fpemu_dotter_format(const fpemu_dotter *d, char which) {
    if (!d) return NULL;
    if (d->int_mode) {
        switch (which) {
        case 'a': return d->a_signed ? "s8" : "u8";
        case 'b': return d->b_signed ? "s8" : "u8";
        case 'c':
        case 'd': return "s32";
        default: return NULL;
        }
    }
    switch (which) {
    case 'a': return d->m.fa->name;
    case 'b': return d->m.fb->name;
    case 'c': return d->m.fc->name;
    case 'd': return d->m.fd->name;
    default: return NULL;
    }
}

int fpemu_dotter_run(fpemu_dotter *d, size_t nbatch, size_t k, const uint64_t *a, const uint64_t *b, const uint64_t *c,
                     uint64_t *out) {
    if (!d) return -1;
    d->err[0] = 0;
    if (nbatch && !out) return dfail(d, "no output array given");
    if (nbatch && k && (!a || !b)) return dfail(d, "no input array a or b given");
    if (k && nbatch > SIZE_MAX / k) return dfail(d, "too many elements");
    const fpemu_mma_model *m = &d->m;
    uint64_t ma = d->int_mode ? 0xFF : code_max(m->fa), mb = d->int_mode ? 0xFF : code_max(m->fb);
    uint64_t mc = d->int_mode ? 0xFFFFFFFFu : code_max(m->fc);
    const char *na = fpemu_dotter_format(d, 'a'), *nb = fpemu_dotter_format(d, 'b'), *nc = fpemu_dotter_format(d, 'c');
    for (size_t i = 0; i < nbatch * k; i++) {
        if (a[i] > ma) return dfail(d, "a[%zu][%zu] = 0x%llX is not a %s code", i / k, i % k, (unsigned long long)a[i], na);
        if (b[i] > mb) return dfail(d, "b[%zu][%zu] = 0x%llX is not a %s code", i / k, i % k, (unsigned long long)b[i], nb);
    }
    if (c)
        for (size_t i = 0; i < nbatch; i++)
            if (c[i] > mc) return dfail(d, "c[%zu] = 0x%llX is not a %s code", i, (unsigned long long)c[i], nc);
    int32_t *ia = NULL, *ib = NULL;
    if (d->int_mode && k) {
        ia = malloc(sizeof *ia * k), ib = malloc(sizeof *ib * k);
        if (!ia || !ib) {
            free(ia), free(ib);
            return dfail(d, "out of memory");
        }
    }
    for (size_t j = 0; j < nbatch; j++) {
        const uint64_t *aj = a ? a + j * k : NULL, *bj = b ? b + j * k : NULL;
        uint64_t cj = c ? c[j] : 0, r;
        if (d->int_mode) { /* as `fpemu mma`: the bytes as s8/u8 values, c as s32 */
            for (size_t i = 0; i < k; i++) ia[i] = (int32_t)aj[i], ib[i] = (int32_t)bj[i];
            r = (uint32_t)fpemu_mma_dot_int(m, ia, ib, k, (int32_t)(uint32_t)cj);
        } else if (d->promote && k > 0) {
            /* f32 promotion, as `fpemu mma --promote`: each chunk from c = 0, added to d in dfmt */
            fpemu_ctx ctx;
            fpemu_ctx_init(&ctx);
            uint64_t acc = fpemu_convert(m->fd, m->fc, cj, &ctx);
            for (size_t i0 = 0; i0 < k; i0 += d->promote) {
                size_t n = k - i0 < d->promote ? k - i0 : d->promote;
                acc = fpemu_add(m->fd, acc, fpemu_mma_dot(m, aj + i0, bj + i0, n, 0, NULL), &ctx);
            }
            r = acc;
        } else
            r = fpemu_mma_dot(m, aj, bj, k, cj, NULL);
        out[j] = r;
    }
    free(ia), free(ib);
    return 0;
}

int fpemu_api_delayed_scale(const char *fmt, double amax, double margin, double prev, double *scale, char *err,
                            size_t errlen) {
    char e[400];
    const fpemu_format *f = fmt ? fpemu_format_get(fmt, e, sizeof e) : NULL;
    if (!f) {
        emu__errf(err, errlen, "%s", fmt ? e : "no format given");
        return -1;
    }
    if (scale) { /* (in the library's floating-point environment, the caller's put back) */
        const unsigned fe = emu__fpenv_enter();
        *scale = emu__scaling_delayed_scale((float)amax, (float)f->max_finite, (float)margin, (float)prev);
        emu__fpenv_leave(fe);
    }
    return 0;
}
