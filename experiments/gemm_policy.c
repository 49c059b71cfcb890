/* SPDX-License-Identifier: MIT */
/* gemm_policy.c: every GEMM of the engine. trn__gemm is the one place a
 * matrix product is computed; the Linear layer wraps it with the policy's
 * casts and scaling recipe (docs/scaling.md, docs/training.md).
 *
 * Layout: all products are "NT": C[M][N] = sum_k A[m][k] B[n][k], both
 * operands row-major with K contiguous, so every scaling recipe scales
 * along K the same way (rows of A, rows of B). Backward GEMMs transpose
 * their operands into scratch first. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "train_internal.h"
#include "gemm_backend.h"
#include "recipe.h"
#include "sumtree.h"

/* ---- the GEMM ---------------------------------------------------------------- */

typedef struct {
    trn_run *r;
    int M, N, K, m0, m1;
    const double *A, *B;
    double *C;
    float *A32;             /* room for the f32 copy of A: each job converts its own rows */
    const float *B32;       /* the f32 copy of B (exact: it holds values of fb); NULL for f64 */
    float *D32;             /* the f32 result (M x N) of the low-precision GEMM */
    const fpemu_format *fa, *fb;
    int f64, f32;           /* native f64 / f32 GEMM, else the tensor-core model */
    const fpemu_sumtree_bound *tree; /* mma_algo=cublas and the call's shape in the table: its tree */
    const uint64_t *Bc;     /* then B's codes, K x N */
} gemm_job;

/* fma without a libm call: the exact sum p + c (p = a*b exact in f64)
 * rounded to odd in f64 (TwoSum), then once to f32: that is fmaf(a, b, c)
 * exactly (53 >= 24 + 2 bits), for machines without FMA instructions. */
static float fmaf_soft(float a, float b, float c) {
    double p = (double)a * (double)b, s = p + c;
    double bp = s - c, err = (p - bp) + (c - (s - bp));
    if (err != 0 && isfinite(s)) {
        uint64_t u;
        memcpy(&u, &s, 8);
        if (!(u & 1)) { /* even: step toward the exact value, giving the odd neighbour */
            s = nextafter(s, err > 0 ? INFINITY : -INFINITY);
        }
    }
    return (float)s;
}

#define GEMM_LOOPS(FMAF, FMA)                                                                  \
    if (f64) {                                                                                 \
        for (int m = m0; m < m1; m++)                                                          \
            for (int n = 0; n < N; n++) {                                                      \
                const double *a = A + (size_t)m * K, *b = B + (size_t)n * K;                  \
                double acc = 0;                                                                \
                for (int k = 0; k < K; k++) acc = FMA(a[k], b[k], acc);                       \
                C[(size_t)m * N + n] = acc;                                                    \
            }                                                                                  \
    } else {                                                                                   \
        /* f32 copies of the operands (exact: they hold f32 values); B's made by trn__gemm */ \
        for (int m = m0; m < m1; m++) {                                                        \
            float *fa = A32 + (size_t)m * K;                                                   \
            for (int k = 0; k < K; k++) fa[k] = (float)A[(size_t)m * K + k];                   \
            for (int n = 0; n < N; n++) {                                                      \
                const float *b = B32 + (size_t)n * K;                                          \
                float acc = 0;                                                                 \
                for (int k = 0; k < K; k++) acc = FMAF(fa[k], b[k], acc);                      \
                C[(size_t)m * N + n] = acc;                                                    \
            }                                                                                  \
        }                                                                                      \
    }

/* f64 (DMMA: a chain of IEEE fma in K order) and f32 without TF32 (CUDA
 * cores: an f32 fma chain in K order). fma is exactly specified, so the
 * hardware and software paths give the same bits. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma"))) static void native_hw(int f64, int m0, int m1, int N, int K, const double *A,
                                                     const double *B, float *A32, const float *B32, double *C) {
    GEMM_LOOPS(__builtin_fmaf, __builtin_fma)
}
#endif
static void native_sw(int f64, int m0, int m1, int N, int K, const double *A, const double *B, float *A32,
                      const float *B32, double *C) {
    GEMM_LOOPS(fmaf_soft, fma)
}

/* mma_algo=cublas: D (rows x N, f32) = the tree over A's rows (values of
 * fa, rows x K) and B's codes (K x N). 0, or -1 out of memory. */
static int tree_rows(const fpemu_sumtree_bound *bd, int rows, int N, int K, const double *A, const uint64_t *Bc, float *D) {
    const fpemu_format *fa = bd->fa; /* the tree's operand format */
    uint64_t *Ac = malloc(sizeof *Ac * ((size_t)rows * K + 1));
    if (!Ac) return -1;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    for (size_t i = 0; i < (size_t)rows * K; i++) Ac[i] = fpemu_from_double(fa, A[i], &ctx); /* exact: values of fa */
    char err[300];
    int rc = fpemu_sumtree_gemm_codes(bd, rows, N, K, Ac, Bc, NULL, 1, D, err, sizeof err);
    free(Ac);
    return rc;
}

/* mma_algo=cublas: the tree for this call (torch.mm's m = M, n = N, k = K;
 * the output in f32, as the engine rounds it itself), bound into *bd, and
 * B's codes (K x N, malloc'ed into *Bc); 0 when the table does not list
 * the call (the plain model runs). Counts the call either way. 1, 0, or -1
 * (r->gemm_failed or r->oom set). */
static int cublas_call(trn_run *r, int M, int N, int K, const double *B, const fpemu_format *fa, const fpemu_format *fb,
                       fpemu_sumtree_bound *bd, uint64_t **Bc) {
    fpemu_sumtree tree;
    const fpemu_sumtree_row *row;
    char err[400];
    if (fpemu_sumtree_resolve(r->cublas_tab, r->cfg.mma, fa, fb, NULL, 0, M, N, K, &tree, &row, err, sizeof err)) {
        r->gemm_failed = 1; /* trn_open checked the table's device: not reached */
        return -1;
    }
    int line = row ? row->line : 0, g;
    for (g = 0; g < r->ncalls; g++) {
        const trn_gemm_calls *c = &r->calls[g];
        if (c->M == M && c->N == N && c->K == K && !strcmp(c->a, fa->name) && !strcmp(c->b, fb->name)) break;
    }
    if (g == r->ncalls && g < TRN_GEMM_CALLS_MAX) r->calls[r->ncalls++] = (trn_gemm_calls){fa->name, fb->name, M, N, K, line, 0};
    if (g < r->ncalls) r->calls[g].calls++;
    if (!row) {
        r->calls_plain++;
        return 0;
    }
    r->calls_table++;
    if (fpemu_sumtree_bind(bd, &tree, fa, fb, err, sizeof err)) {
        r->gemm_failed = 1; /* the table's rows bind when it is read: not reached */
        return -1;
    }
    uint64_t *c = malloc(sizeof *c * ((size_t)K * N + 1));
    if (!c) {
        r->oom = 1;
        return -1;
    }
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) c[(size_t)k * N + n] = fpemu_from_double(bd->fb, B[(size_t)n * K + k], &ctx); /* exact */
    *Bc = c;
    return 1;
}

static void gemm_rows(const gemm_job *j) {
    if (j->f64 || j->f32) {
#if defined(__x86_64__) && defined(__GNUC__)
        if (__builtin_cpu_supports("fma")) {
            native_hw(j->f64, j->m0, j->m1, j->N, j->K, j->A, j->B, j->A32, j->B32, j->C);
            return;
        }
#endif
        native_sw(j->f64, j->m0, j->m1, j->N, j->K, j->A, j->B, j->A32, j->B32, j->C);
        return;
    }
    size_t rows = (size_t)(j->m1 - j->m0), N = (size_t)j->N;
    float *a = j->A32 + (size_t)j->m0 * j->K, *d = j->D32 + (size_t)j->m0 * N;
    const double *A = j->A + (size_t)j->m0 * j->K;
    if (j->tree) {
        /* the call's tree over these rows: each output depends only on its
         * row, its column and the tree, so the split into jobs changes nothing */
        if (tree_rows(j->tree, (int)rows, j->N, j->K, A, j->Bc, d)) {
            j->r->gemm_failed = 1; /* reported by trn_step */
            return;
        }
    } else {
        for (size_t i = 0; i < rows * (size_t)j->K; i++) a[i] = (float)A[i]; /* exact: values of fa */
        if (trn__gemm_lowp(j->r->cfg.mma, j->fa, j->fb, j->m1 - j->m0, j->N, j->K, a, j->B32, d)) {
            j->r->gemm_failed = 1; /* reported by trn_step */
            return;
        }
    }
    double *C = j->C + (size_t)j->m0 * N;
    for (size_t i = 0; i < rows * N; i++) C[i] = d[i];
}

static void *gemm_thread(void *p) { gemm_rows(p); return NULL; }

/* The run's GEMM scratch: room for f32 copies of A[M][K] (convert_a: made
 * here, else by each job for its rows) and B[N][K] (made here), then for
 * the M x N result: NULL (r->oom) if the scratch cannot grow. */
static float *gemm_f32_operands(trn_run *r, int M, int N, int K, const double *A, const double *B, int convert_a) {
    size_t na = (size_t)M * K, nb = (size_t)N * K;
    float *w = trn__ws(r, WS_GEMM, (na + nb + (size_t)M * N + 1) * sizeof(float));
    if (!w) return NULL;
    if (convert_a)
        for (size_t i = 0; i < na; i++) w[i] = (float)A[i]; /* exact: values of fa */
    for (size_t i = 0; i < nb; i++) w[na + i] = (float)B[i];
    return w;
}

void trn__gemm(trn_run *r, int M, int N, int K, const double *A, const double *B, double *C,
               const fpemu_format *fa, const fpemu_format *fb) {
    int f64 = (!fa || fa->bits == 64) && (!fb || fb->bits == 64);
    int f32 = fa && fb && fa->bits == 32 && fa->pad == 0 && fb->bits == 32 && fb->pad == 0;
    float *A32 = NULL, *D32 = NULL;
    const float *B32 = NULL;
    if (!f64) {
        float *w = gemm_f32_operands(r, M, N, K, A, B, 0);
        if (!w) return; /* r->oom: reported by trn_step / trn_eval */
        A32 = w; B32 = w + (size_t)M * K; D32 = w + (size_t)M * K + (size_t)N * K;
    }
    fpemu_sumtree_bound bd, *tree = NULL;
    uint64_t *Bc = NULL;
    if (!f64 && !f32 && r->cublas_tab) {
        int got = cublas_call(r, M, N, K, B, fa, fb, &bd, &Bc);
        if (got < 0) return;
        if (got) tree = &bd;
    }
    int T = r->threads;
    double work = (double)M * N * K;
    if (T > M) T = M;
    if (T <= 1 || work < 65536) {
        gemm_job j = {r, M, N, K, 0, M, A, B, C, A32, B32, D32, fa, fb, f64, f32, tree, Bc};
        gemm_rows(&j);
        free(Bc);
        return;
    }
    /* Rows split across threads: each output element is computed by the
     * same code in the same order whatever T is. */
    gemm_job jobs[64];
    pthread_t th[64];
    if (T > 64) T = 64;
    for (int t = 0; t < T; t++) {
        jobs[t] = (gemm_job){r, M, N, K, (int)((long)M * t / T), (int)((long)M * (t + 1) / T), A, B, C, A32, B32, D32,
                             fa, fb, f64, f32, tree, Bc};
        if (t && pthread_create(&th[t], NULL, gemm_thread, &jobs[t]) != 0) { gemm_rows(&jobs[t]); th[t] = 0; }
    }
    gemm_rows(&jobs[0]);
    for (int t = 1; t < T; t++) if (th[t]) pthread_join(th[t], NULL);
    free(Bc);
}

/* ---- scaling recipes: the policy's choice, emu's arithmetic ---------------------- */

/* max |x| over the non-NaN elements (the telemetry's amax; TE's fmaxf
 * reduction), and in *has_nan whether any element is NaN, where torch's
 * max(abs(x)) is NaN: one pass for both. */
static double amax_of(const double *x, size_t n, int *has_nan) {
    double a = 0;
    int nan = 0;
    for (size_t i = 0; i < n; i++) {
        double v = fabs(x[i]);
        if (v > a) a = v;
        else if (isnan(v)) nan = 1;
    }
    *has_nan = nan;
    return a;
}

/* The MX multiplier telemetry reports for a tensor of the native MX GEMM
 * (quantise() reports its blocks' by the same rule): the GEMM's own
 * (emu/scaling.c fpemu_scaling_mx_scale of the f32 amax, OCP floor or
 * NVIDIA's rceil, and emu__mx_encode_factor); NaN when it holds a NaN or
 * an inf (the e8m0 NaN scale), 1 for a zero amax (zeros under any scale). */
static double mx_multiplier(const trn_run *r, double amax, int nan_in, const fpemu_format *fmt) {
    if (nan_in) return NAN;
    if (amax == 0) return 1.0;
    return emu__mx_encode_factor(fpemu_scaling_mx_scale(
        !strcmp(r->cfg.mx_scale_rule, "rceil") ? FPEMU_SCALING_MX_RCEIL : FPEMU_SCALING_MX_FLOOR, fmt, (float)amax));
}

typedef struct {
    int rows, K, kb;     /* block length along K (K for per-tensor / per-row) */
    int nkb;             /* blocks along K */
    double *dq;          /* rows * nkb dequantisation factors (1/scale): the caller's buffer (q_scales) */
} qinfo;

/* The emu recipe (emu/recipe.h) of an operand of fmt under the run's policy
 * (kind NONE: a plain cast to fmt, no recipe); *kb its block length along
 * K, *tile_rows the rows of a blockwise tile (the weights' kb x kb blocks).
 * A per-tensor scale the policy keeps (GIVEN) is given_scale()'s. */
static void recipe_of(const trn_run *r, const fpemu_format *fmt, int K, int weight_blocks, fpemu_gemm_scaling *s, int *kb,
                      int *tile_rows) {
    trn_recipe rec = r->pol->recipe;
    memset(s, 0, sizeof *s);
    *kb = K, *tile_rows = 1;
    if (rec == RECIPE_NONE || !trn__is_low(fmt) || fmt->bits > 8) return;
    if (rec == RECIPE_DELAYED || rec == RECIPE_CURRENT || r->fp8_unscaled) {
        s->kind = FPEMU_GEMM_SCALING_GIVEN; /* delayed, MS-AMP, fp8_scaling=none */
        if (rec == RECIPE_CURRENT && !r->fp8_unscaled && !r->pol->msamp) {
            /* torchao's tensorwise amax_to_scale: fmt_max / clamp(amax,
             * min=1e-12) in f64, optionally rounded down to 2^k; a NaN amax
             * gives the scale NaN, an inf amax 0 (the GEMM's outputs NaN) */
            s->kind = FPEMU_GEMM_SCALING_TENSOR;
            fpemu_scaling_current_opts_torchao(&s->cur);
            s->cur.pow2 = r->cfg.power_2_scale;
        }
        return;
    }
    if (rec == RECIPE_ROWWISE) { /* torchao rowwise: the tensorwise rule per row */
        s->kind = FPEMU_GEMM_SCALING_ROWWISE;
        fpemu_scaling_current_opts_torchao(&s->cur);
        s->cur.pow2 = r->cfg.power_2_scale;
        return;
    }
    *kb = (int)r->cfg.block_size < K ? (int)r->cfg.block_size : K;
    if (rec == RECIPE_MX) { /* blocks of 32 along K, e8m0 scales */
        s->kind = FPEMU_GEMM_SCALING_MX;
        s->mx_rule = !strcmp(r->cfg.mx_scale_rule, "rceil") ? FPEMU_SCALING_MX_RCEIL : FPEMU_SCALING_MX_FLOOR;
        return;
    }
    /* DeepGEMM's reference casts: 1 x kb tiles (kb x kb for weights), amax
     * clamped at 1e-4, elements cast(x * fl32(448 / amax)), decode factor
     * fl32(amax / 448); TE's power-of-two scales with power_2_scale */
    s->kind = FPEMU_GEMM_SCALING_BLOCKWISE;
    s->block_k = *kb;
    s->block_eps = 1e-4f;
    s->block_pow2 = r->cfg.power_2_scale;
    *tile_rows = weight_blocks ? *kb : 1;
}

/* The per-tensor scale the policy keeps (GIVEN): 1 for fp8_scaling=none;
 * delayed scaling's, from the history (this step's amax recorded); MS-AMP's,
 * from its ScalingMeta: torch's max propagates a NaN, amax 0 or NaN keeps
 * the operand's previous scale (inf inverts it), and as MS-AMP casts each
 * operand once and keeps the fp8 tensor for the backward, a recomputation
 * takes the scale the cast used. */
static float given_scale(trn_run *r, dscale *ds, int recompute, double amax, int nan_in, const fpemu_format *fmt) {
    if (r->fp8_unscaled) return 1.0f;
    if (r->pol->recipe == RECIPE_DELAYED) {
        if (r->tel_on && !r->in_eval && !isnan(amax)) fpemu_scaling_delayed_record(&ds->d, (float)amax); /* NaNs ignored, as TE's fmaxf */
        return ds->d.scale;
    }
    if (!recompute) ds->d.scale = fpemu_scaling_msamp_scale(nan_in ? NAN : (float)amax, fmt->max_finite, ds->d.scale);
    return ds->d.scale;
}

/* Blocks along K of an operand of fmt (its scales per row: rows x this). */
static size_t q_nkb(const trn_run *r, const fpemu_format *fmt, int K) {
    fpemu_gemm_scaling s;
    int kb, tile_rows;
    recipe_of(r, fmt, K, 0, &s, &kb, &tile_rows);
    return (size_t)emu__quant_nkb(&s, K);
}
/* The most blocks along K any operand of the policy has (sizing). */
static size_t q_nkb_max(const trn_run *r, int K) {
    trn_recipe rec = r->pol->recipe;
    if (rec != RECIPE_BLOCKWISE && rec != RECIPE_MX) return 1;
    int kb = (int)r->cfg.block_size < K ? (int)r->cfg.block_size : K;
    return kb > 0 ? (size_t)((K + kb - 1) / kb) : 1;
}
/* Room in scratch `slot` for the scales of a rows x K operand of fmt:
 * NULL (r->oom) if it cannot grow. */
static double *q_scales(trn_run *r, int slot, int rows, int K, const fpemu_format *fmt) {
    return trn__ws(r, slot, (size_t)rows * q_nkb(r, fmt, K) * sizeof(double));
}

/* Quantise x[rows][K] into q (values of fmt, in the scaled domain) per the
 * recipe (emu__quantize), the dequantisation factors into qi->dq (the
 * caller's buffer, of rows * q_nkb(r, fmt, K) values); cls < 0 means
 * "already counted" (a recomputation). Every value quantised here is an
 * f32 (the engine's tensors hold values of their formats, none wider than
 * f32 under a recipe), so emu's f32 interface takes it exactly. */
static void quantise(trn_run *r, int layer, int cls, dscale *ds, const double *x, double *q, int rows, int K,
                     const fpemu_format *fmt, int weight_blocks, qinfo *qi) {
    size_t n = (size_t)rows * K;
    int save_tel = r->tel_on, recompute = cls < 0;
    if (cls < 0) { r->tel_on = 0; cls = 0; }
    fpemu_gemm_scaling s;
    int kb, tile_rows;
    recipe_of(r, fmt, K, weight_blocks, &s, &kb, &tile_rows);
    int nkb = emu__quant_nkb(&s, K);
    size_t nb = (size_t)rows * (size_t)nkb;
    qi->rows = rows; qi->K = K; qi->kb = kb; qi->nkb = nkb;
    if (s.kind == FPEMU_GEMM_SCALING_NONE) { /* a plain cast */
        memcpy(q, x, n * sizeof *q);
        for (int i = 0; i < rows; i++) qi->dq[i] = 1.0;
        trn__round(r, layer, cls, fmt, q, n);
        r->tel_on = save_tel;
        return;
    }
    int per_tensor = s.kind == FPEMU_GEMM_SCALING_GIVEN || s.kind == FPEMU_GEMM_SCALING_TENSOR;
    int nan_in = 0;
    double amax = per_tensor || r->tel_on ? amax_of(x, n, &nan_in) : 0;
    if (s.kind == FPEMU_GEMM_SCALING_GIVEN) s.scale_a = given_scale(r, ds, recompute, amax, nan_in, fmt);
    float *f = trn__fscratch(r, n);
    float *w = trn__ws(r, WS_SG_A, (nb + 1) * sizeof(float)); /* the decode factors */
    if (!f || !w) { r->tel_on = save_tel; return; } /* r->oom: reported by trn_step / trn_eval */
    for (size_t i = 0; i < n; i++) f[i] = (float)x[i]; /* exact: f32 values */
    fpemu_cast_stats st;
    memset(&st, 0, sizeof st);
    emu_quant o = {.vals = f, .dec = w, .st = r->tel_on ? &st : NULL};
    if (emu__quantize(&s, fmt, rows, K, f, tile_rows, 1, NULL, &o, NULL, 0)) {
        r->gemm_failed = 1; /* a recipe emu does not take: not reached */
        r->tel_on = save_tel;
        return;
    }
    for (size_t i = 0; i < n; i++) q[i] = f[i];
    for (size_t i = 0; i < nb; i++) qi->dq[i] = o.dec[i];
    /* telemetry: the casts' counts, the amax (NaNs ignored) and the
     * smallest scale of the tensor (emu_quant smin: of its rows or blocks) */
    if (per_tensor || nb > 0) trn__account(r, layer, cls, fmt, &st, amax, o.smin);
    r->tel_on = save_tel;
}

static void transpose(double *dst, const double *src, int rows, int cols) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) dst[(size_t)j * rows + i] = src[(size_t)i * cols + j];
}

/* promotion every promo elements of a K block of kb, a divisor of kb
 * (trn_settings_check) */
static int sg_promo(const trn_run *r, int kb) {
    int promo = r->pol->recipe == RECIPE_BLOCKWISE && r->cfg.promotion_interval > 0 ? (int)r->cfg.promotion_interval : kb;
    return promo > kb ? kb : promo;
}

/* emu's row threads for a GEMM of this size: the engine's rule (trn__gemm) */
static int gemm_threads(const trn_run *r, int M, int N, int K) {
    int T = r->threads;
    if (T > M) T = M;
    return T <= 1 || (double)M * N * K < 65536 ? 1 : T;
}

/* C = dequantised product of two quantised operands: emu's scaled GEMM
 * (emu__gemm_scaled through trn__gemm_lowp_scaled): per K block, the
 * block's partial products (one per promotion_interval elements of it,
 * each from zero in the MMA model) times fl32(dqA * dqB), promoted into an
 * f32 accumulator (DeepSeek-V3 / DeepGEMM); one block without promotion:
 * fl32(acc * fl32(dqA * dqB)). Without a recipe: trn__gemm. */
static void scaled_gemm(trn_run *r, int M, int N, int K, const double *qa, const qinfo *ia, const double *qb,
                        const qinfo *ib, double *C, const fpemu_format *fa, const fpemu_format *fb) {
    int plain = r->pol->recipe == RECIPE_NONE || !trn__is_low(fa) || fa->bits > 8;
    if (plain) {
        trn__gemm(r, M, N, K, qa, qb, C, fa, fb);
        return;
    }
    int kb = ia->kb, nkb = ia->nkb, promo = sg_promo(r, kb);
    int promote = nkb == 1 && promo >= K ? 0 : promo;
    float *w = gemm_f32_operands(r, M, N, K, qa, qb, 1); /* exact: values of fa, fb */
    float *dq = trn__ws(r, WS_SG_B, ((size_t)(M + N) * nkb + 1) * sizeof(float));
    if (!w || !dq) return; /* r->oom: reported by trn_step / trn_eval */
    float *d = w + (size_t)M * K + (size_t)N * K;
    for (size_t i = 0; i < (size_t)M * nkb; i++) dq[i] = (float)ia->dq[i]; /* exact: f32 factors */
    for (size_t i = 0; i < (size_t)N * nkb; i++) dq[(size_t)M * nkb + i] = (float)ib->dq[i];
    if (trn__gemm_lowp_scaled(r->cfg.mma, fa, fb, M, N, K, w, w + (size_t)M * K, dq, dq + (size_t)M * nkb, kb, promote,
                              gemm_threads(r, M, N, K), d)) {
        r->gemm_failed = 1; /* reported by trn_step */
        return;
    }
    for (size_t i = 0; i < (size_t)M * N; i++) C[i] = d[i];
}

/* Telemetry of one operand of the MX GEMM: its cast statistics, amax, and
 * the multiplier of the block that holds the amax (the smallest of its
 * blocks', as quantise() reports it; NaN when a block holds a NaN or an
 * inf), by the GEMM's own scale rule. */
static void account_mx(trn_run *r, int layer, int cls, const fpemu_format *f, const fpemu_cast_stats *st,
                       const double *x, size_t n) {
    int nan_in;
    double amax = amax_of(x, n, &nan_in);
    trn__account(r, layer, cls, f, st, amax, mx_multiplier(r, amax, nan_in, f));
}

/* MX inside the MMA (when the backend has it): the raw operands go to the
 * GEMM, which quantises them in blocks of 32 along K; its cast statistics
 * are the telemetry (cls < 0: not counted, a recomputation). */
static int mx_gemm(trn_run *r, int layer, int cls_a, int cls_b, int M, int N, int K, const double *A, const double *B,
                   double *C, const fpemu_format *fa, const fpemu_format *fb) {
    if (r->pol->recipe != RECIPE_MX || !r->mx_native) return 0;
    fpemu_cast_stats sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    float *w = gemm_f32_operands(r, M, N, K, A, B, 1); /* f32-valued operands: exact */
    if (!w) return 1; /* r->oom: reported by trn_step / trn_eval */
    float *d = w + (size_t)M * K + (size_t)N * K;
    if (trn__gemm_lowp_mx(r->cfg.mma, !strcmp(r->cfg.mx_scale_rule, "rceil"), fa, fb, M, N, K, w, w + (size_t)M * K, d,
                          &sa, &sb)) {
        r->gemm_failed = 1;
        return 1;
    }
    for (size_t i = 0; i < (size_t)M * N; i++) C[i] = d[i];
    if (cls_a >= 0) account_mx(r, layer, cls_a, fa, &sa, A, (size_t)M * K);
    if (cls_b >= 0) account_mx(r, layer, cls_b, fb, &sb, B, (size_t)N * K);
    return 1;
}

/* ---- Linear ---------------------------------------------------------------------- */

int trn__linear_init(trn_run *r, lin_state *L, int layer, int in, int out, size_t w_off, size_t b_off) {
    memset(L, 0, sizeof *L);
    L->layer = layer; L->in = in; L->out = out; L->w_off = w_off; L->b_off = b_off;
    L->wq = malloc(((size_t)in * out + 1) * sizeof(double));
    L->bq = malloc(((size_t)out + 1) * sizeof(double));
    /* the weights' scales: out rows of blocks along in (prepare_weights) */
    L->wq_scale_cap = (size_t)out * q_nkb_max(r, in) + 1;
    L->wq_scale_buf = malloc(L->wq_scale_cap * sizeof(double));
    int bad = !L->wq || !L->bq || !L->wq_scale_buf;
    /* the operands' scales start at 1; delayed scaling's history (every
     * policy has one: a checkpoint holds it) is the library's */
    const fpemu_scaling_amax_algo algo =
        !strcmp(r->cfg.amax_compute_algo, "most_recent") ? FPEMU_SCALING_AMAX_MOST_RECENT : FPEMU_SCALING_AMAX_MAX;
    for (int i = 0; i < ROLE_COUNT; i++)
        bad |= fpemu_scaling_delayed_init(&L->ds[i].d, (i == ROLE_DY ? r->f8_bwd : r->f8_fwd)->max_finite,
                                          (int)r->cfg.amax_history_len, algo, (float)r->cfg.margin) != 0;
    if (bad) { r->oom = 1; return -1; }
    return 0;
}

void trn__linear_free(lin_state *L) {
    free(L->wq); free(L->bq); free(L->wq_scale_buf);
    for (int i = 0; i < ROLE_COUNT; i++) fpemu_scaling_delayed_free(&L->ds[i].d);
    L->wq = L->bq = L->wq_scale = L->wq_scale_buf = NULL;
}

/* Grow the run's scratch for a GEMM of M x N x K through scaled_gemm: the
 * f32 operands and result, and under a recipe the f32 decode factors. */
static int reserve_gemm(trn_run *r, int M, int N, int K) {
    if (!trn__ws(r, WS_GEMM, ((size_t)M * K + (size_t)N * K + (size_t)M * N + 1) * sizeof(float))) return -1;
    if (r->pol->recipe == RECIPE_NONE) return 0;
    if (!trn__ws(r, WS_SG_B, (((size_t)M + N) * q_nkb_max(r, K) + 1) * sizeof(float))) return -1;
    return 0;
}

/* The same for quantise() of operands rows x K: its per-row, per-block
 * factors (three floats each). */
static int reserve_quantise(trn_run *r, size_t rows, int K) {
    if (r->pol->recipe == RECIPE_NONE) return 0;
    return trn__ws(r, WS_SG_A, (3 * rows * q_nkb_max(r, K) + 1) * sizeof(float)) ? 0 : -1;
}

static size_t zmax(size_t a, size_t b) { return a > b ? a : b; }

int trn__linear_reserve(trn_run *r, const lin_state *L, int BT) {
    size_t C = (size_t)L->in, OC = (size_t)L->out, bt = (size_t)BT, d = sizeof(double);
    size_t big = zmax(bt * zmax(C, OC), C * OC);
    /* forward */
    if (!trn__ws(r, WS_XQ, bt * C * d) || !trn__ws(r, WS_DQ0, bt * q_nkb_max(r, L->in) * d)) return -1;
    if (reserve_gemm(r, BT, L->out, L->in)) return -1;
    /* backward: dinp = dout . W, dW = dout^T . in */
    if (!trn__ws(r, WS_T1, big * d) || !trn__ws(r, WS_T2, big * d) || !trn__ws(r, WS_Q1, big * d) ||
        !trn__ws(r, WS_Q2, big * d))
        return -1;
    if (!trn__ws(r, WS_DQ1, zmax(bt * q_nkb_max(r, L->out), OC * q_nkb_max(r, BT)) * d)) return -1;
    if (!trn__ws(r, WS_DQ2, zmax(C, zmax(C * q_nkb_max(r, L->out), C * q_nkb_max(r, BT))) * d)) return -1;
    /* quantise()'s factors for every operand: in, W (forward); dout, W^T, dout^T, in^T (backward) */
    if (reserve_quantise(r, bt, L->in) || reserve_quantise(r, OC, L->in) || reserve_quantise(r, bt, L->out) ||
        reserve_quantise(r, C, L->out) || reserve_quantise(r, OC, BT) || reserve_quantise(r, C, BT))
        return -1;
    if (reserve_gemm(r, BT, L->in, L->out) || reserve_gemm(r, L->out, L->in, BT)) return -1;
    /* the casts of the Linear's inputs, outputs, weights and gradients */
    if (!trn__fscratch(r, zmax(big, bt * OC))) return -1;
    /* int8 evaluation */
    if (r->pol->int8_eval && !trn__ws(r, WS_I8, C * OC + 2 * C + 1)) return -1;
    return 0;
}

int trn__bmm_reserve(trn_run *r, int M, int N, int K) {
    size_t d = sizeof(double);
    if (!trn__ws(r, WS_BMM_A, (size_t)M * K * d) || !trn__ws(r, WS_BMM_B, (size_t)N * K * d)) return -1;
    if (!trn__fscratch(r, zmax((size_t)M * N, zmax((size_t)M * K, (size_t)N * K)))) return -1;
    return reserve_gemm(r, M, N, K);
}

/* A Linear the recipe leaves out (L->hp: the output head under fp8_head=0)
 * runs as autocast does: for the call's duration the run's policy is its
 * copy without the recipe. */
typedef struct hp_scope { const pol_def *saved; pol_def plain; } hp_scope;
static void hp_enter(trn_run *r, const lin_state *L, hp_scope *h) {
    h->saved = r->pol;
    if (!L->hp || r->pol->recipe == RECIPE_NONE) return;
    h->plain = *r->pol;
    h->plain.recipe = RECIPE_NONE;
    h->plain.msamp = 0;
    r->pol = &h->plain;
}
static void hp_leave(trn_run *r, const hp_scope *h) { r->pol = h->saved; }

static const fpemu_format *gemm_fmt(trn_run *r, int role) {
    if (r->pol->recipe == RECIPE_NONE) return r->f_lo;
    return role == ROLE_DY ? r->f8_bwd : r->f8_fwd;
}

/* The weights as the GEMM sees them, cast once per step (autocast's cache). */
static void prepare_weights(trn_run *r, lin_state *L) {
    if (L->wq_valid) return;
    const double *W = r->params + L->w_off;
    const fpemu_format *f = gemm_fmt(r, ROLE_W);
    qinfo qi;
    if ((f == r->f_param && r->pol->recipe == RECIPE_NONE) || (r->pol->recipe == RECIPE_MX && r->mx_native)) {
        memcpy(L->wq, W, (size_t)L->in * L->out * sizeof(double));
        qi.dq = NULL;
    } else {
        size_t need = (size_t)L->out * q_nkb(r, f, L->in);
        if (need > L->wq_scale_cap) { /* trn__linear_init sized it: not reached */
            double *nb = malloc(need * sizeof(double));
            r->ws_grows++;
            if (!nb) { r->oom = 1; return; }
            free(L->wq_scale_buf);
            L->wq_scale_buf = nb; L->wq_scale_cap = need;
        }
        qi.dq = L->wq_scale_buf;
        quantise(r, L->layer, CLS_WEIGHT, &L->ds[ROLE_W], W, L->wq, L->out, L->in, f, 1, &qi);
    }
    L->wq_scale = qi.dq;
    if (L->b_off != (size_t)-1) {
        memcpy(L->bq, r->params + L->b_off, (size_t)L->out * sizeof(double));
        if (r->f_lo != r->f_param) trn__round(r, L->layer, CLS_WEIGHT, r->f_lo, L->bq, (size_t)L->out);
    }
    L->wq_valid = 1;
}

static void linear_fwd(trn_run *r, lin_state *L, double *out, const double *in, const fpemu_format *in_fmt,
                       int BT, const fpemu_format *out_fmt) {
    int C = L->in, OC = L->out;
    int first = !L->wq_valid;
    prepare_weights(r, L);
    const fpemu_format *fx = gemm_fmt(r, ROLE_X), *fw = gemm_fmt(r, ROLE_W);
    double *xq = trn__ws(r, WS_XQ, (size_t)BT * C * sizeof *xq);
    if (!xq) return; /* r->oom: reported by trn_step / trn_eval */
    qinfo ix, iw;
    ix.dq = NULL;
    if (mx_gemm(r, L->layer, CLS_ACT, first ? CLS_WEIGHT : -1, BT, OC, C, in, r->params + L->w_off, out, fx, fw)) {
        /* done inside the MMA */
    } else if (fx == in_fmt && r->pol->recipe == RECIPE_NONE) {
        memcpy(xq, in, (size_t)BT * C * sizeof *xq);
        ix.dq = NULL;
        ix.nkb = 1; ix.kb = C;
    } else {
        if (!(ix.dq = q_scales(r, WS_DQ0, BT, C, fx))) return;
        quantise(r, L->layer, CLS_ACT, &L->ds[ROLE_X], in, xq, BT, C, fx, 0, &ix);
    }
    if (r->pol->recipe == RECIPE_MX && r->mx_native) {
        /* computed above */
    } else if (r->pol->recipe == RECIPE_NONE) {
        trn__gemm(r, BT, OC, C, xq, L->wq, out, fx, fw);
    } else if (r->pol->recipe == RECIPE_DELAYED || r->pol->recipe == RECIPE_CURRENT || r->pol->recipe == RECIPE_ROWWISE ||
               r->fp8_unscaled) {
        iw.dq = L->wq_scale; iw.nkb = 1; iw.kb = C;
        scaled_gemm(r, BT, OC, C, xq, &ix, L->wq, &iw, out, fx, fw);
    } else {
        iw.dq = L->wq_scale; iw.nkb = ix.nkb; iw.kb = ix.kb;
        scaled_gemm(r, BT, OC, C, xq, &ix, L->wq, &iw, out, fx, fw);
    }
    /* Bias in the epilogue, in the accumulator's precision, then one
     * rounding to the output format. */
    if (L->b_off != (size_t)-1) {
        int f64 = !out_fmt || out_fmt->bits == 64;
        for (int i = 0; i < BT; i++)
            for (int o = 0; o < OC; o++) {
                double *p = &out[(size_t)i * OC + o];
                *p = f64 ? *p + L->bq[o] : (double)((float)*p + (float)L->bq[o]);
            }
    }
    trn__round(r, L->layer, CLS_OUT, out_fmt, out, (size_t)BT * OC);
}

static void linear_bwd(trn_run *r, lin_state *L, double *dinp, const fpemu_format *in_fmt, const double *dout,
                       const double *in, int BT, const fpemu_format *out_fmt) {
    int C = L->in, OC = L->out;
    trn_recipe rec = r->pol->recipe;
    const fpemu_format *fx = gemm_fmt(r, ROLE_X), *fw = gemm_fmt(r, ROLE_W), *fy = gemm_fmt(r, ROLE_DY);
    prepare_weights(r, L);
    size_t big = (size_t)BT * (C > OC ? C : OC);
    if ((size_t)C * OC > big) big = (size_t)C * OC;
    double *t1 = trn__ws(r, WS_T1, big * sizeof(double)), *t2 = trn__ws(r, WS_T2, big * sizeof(double));
    double *q1 = trn__ws(r, WS_Q1, big * sizeof(double)), *q2 = trn__ws(r, WS_Q2, big * sizeof(double));
    if (!t1 || !t2 || !q1 || !q2) return; /* r->oom: reported by trn_step */
    qinfo i1, i2;
    int per_tensor = rec == RECIPE_NONE || rec == RECIPE_DELAYED || rec == RECIPE_CURRENT || r->fp8_unscaled;

    /* dinp[BT][C] = dout[BT][OC] . W[OC][C]: A = dout (K = OC), B = W^T. */
    /* dout is in out_fmt (the gradient of the output); without a recipe a
     * GEMM in that format takes it as it is: no cast, nothing to count */
    int dy_as_is = rec == RECIPE_NONE && fy == out_fmt;
    int mx = rec == RECIPE_MX && r->mx_native;
    if (dinp && mx) {
        transpose(t2, r->params + L->w_off, OC, C);
        mx_gemm(r, L->layer, CLS_GRAD_OUT, -1, BT, C, OC, dout, t2, dinp, fy, fw);
        trn__round(r, L->layer, CLS_GRAD_IN, r->f_lo, dinp, (size_t)BT * C);
        trn__round(r, L->layer, CLS_GRAD_IN, in_fmt, dinp, (size_t)BT * C);
    } else if (dinp) {
        if (dy_as_is) {
            memcpy(q1, dout, (size_t)BT * OC * sizeof(double));
            i1.dq = NULL; i1.kb = OC; i1.nkb = 1;
        } else {
            if (!(i1.dq = q_scales(r, WS_DQ1, BT, OC, fy))) return;
            quantise(r, L->layer, CLS_GRAD_OUT, &L->ds[ROLE_DY], dout, q1, BT, OC, fy, 0, &i1);
        }
        if (per_tensor) {
            /* the step's cast/quantised weights, transposed */
            transpose(q2, L->wq, OC, C);
            if (!(i2.dq = trn__ws(r, WS_DQ2, (size_t)C * sizeof(double)))) return;
            for (int c = 0; c < C; c++) i2.dq[c] = L->wq_scale ? L->wq_scale[0] : 1.0;
            i2.kb = OC; i2.nkb = 1;
        } else {
            transpose(t2, r->params + L->w_off, OC, C);
            if (!(i2.dq = q_scales(r, WS_DQ2, C, OC, fw))) return;
            quantise(r, L->layer, CLS_WEIGHT, &L->ds[ROLE_W], t2, q2, C, OC, fw, 1, &i2);
        }
        scaled_gemm(r, BT, C, OC, q1, &i1, q2, &i2, dinp, fy, fw);
        /* the grad of the GEMM's (cast) input is in the GEMM output format,
         * then the cast's backward takes it to the input's format */
        trn__round(r, L->layer, CLS_GRAD_IN, r->f_lo, dinp, (size_t)BT * C);
        trn__round(r, L->layer, CLS_GRAD_IN, in_fmt, dinp, (size_t)BT * C);
    }
    /* dW[OC][C] = dout^T[OC][BT] . in^T[C][BT] (K = BT) */
    transpose(t1, dout, BT, OC);
    transpose(t2, in, BT, C);
    double *dW = r->grads + L->w_off;
    if (mx) {
        mx_gemm(r, L->layer, dinp ? -1 : CLS_GRAD_OUT, CLS_ACT, OC, C, BT, t1, t2, dW, fy, fx);
        i1.dq = i2.dq = NULL;
    } else if (dy_as_is) {
        memcpy(q1, t1, (size_t)OC * BT * sizeof(double));
        i1.dq = NULL; i1.kb = BT; i1.nkb = 1;
    } else {
        if (!(i1.dq = q_scales(r, WS_DQ1, OC, BT, fy))) return;
        quantise(r, L->layer, dinp ? -1 : CLS_GRAD_OUT, &L->ds[ROLE_DY], t1, q1, OC, BT, fy, 0, &i1);
    }
    if (mx) {
        /* computed above */
    } else if (fx == in_fmt && rec == RECIPE_NONE) {
        memcpy(q2, t2, (size_t)C * BT * sizeof(double));
        i2.dq = NULL; i2.kb = BT; i2.nkb = 1;
    } else {
        if (!(i2.dq = q_scales(r, WS_DQ2, C, BT, fx))) return;
        quantise(r, L->layer, per_tensor ? -1 : CLS_ACT, &L->ds[ROLE_X], t2, q2, C, BT, fx, 0, &i2);
    }
    if (!mx) scaled_gemm(r, OC, C, BT, q1, &i1, q2, &i2, dW, fy, fx);
    /* the GEMM's output format; DeepSeek-V3's Wgrad GEMM writes f32
     * weight gradients (its report, figure 6; DeepGEMM's wgrad kernels) */
    if (rec != RECIPE_BLOCKWISE) trn__round(r, L->layer, CLS_GRAD_W, r->f_lo, dW, (size_t)OC * C);
    trn__round(r, L->layer, CLS_GRAD_W, r->f_param, dW, (size_t)OC * C);
    if (L->b_off != (size_t)-1) {
        /* bias grad: a sum over the batch, accumulated in f32 (f64 for f64) */
        double *db = r->grads + L->b_off;
        int f64 = !out_fmt || out_fmt->bits == 64;
        for (int o = 0; o < OC; o++) {
            double s = 0; float sf = 0;
            for (int i = 0; i < BT; i++) {
                if (f64) s += dout[(size_t)i * OC + o];
                else sf += (float)dout[(size_t)i * OC + o];
            }
            db[o] = f64 ? s : sf;
        }
        trn__round(r, L->layer, CLS_GRAD_W, r->f_lo, db, (size_t)OC);
        trn__round(r, L->layer, CLS_GRAD_W, r->f_param, db, (size_t)OC);
    }
}

void trn__linear_fwd(trn_run *r, lin_state *L, double *out, const double *in, const fpemu_format *in_fmt,
                     int BT, const fpemu_format *out_fmt) {
    hp_scope h;
    hp_enter(r, L, &h);
    linear_fwd(r, L, out, in, in_fmt, BT, out_fmt);
    hp_leave(r, &h);
}

void trn__linear_bwd(trn_run *r, lin_state *L, double *dinp, const fpemu_format *in_fmt, const double *dout,
                     const double *in, int BT, const fpemu_format *out_fmt) {
    hp_scope h;
    hp_enter(r, L, &h);
    linear_bwd(r, L, dinp, in_fmt, dout, in, BT, out_fmt);
    hp_leave(r, &h);
}

void trn__linear_step_end(trn_run *r, lin_state *L) {
    L->wq_valid = 0;
    if (r->pol->recipe != RECIPE_DELAYED || L->hp) return;
    /* TE's amax_and_scale_update (emu/scaling.c): the history's max (or this
     * step's amax) gives the scale, the old one staying when that is 0, inf
     * or NaN; then the history rolls */
    for (int i = 0; i < ROLE_COUNT; i++) fpemu_scaling_delayed_update(&L->ds[i].d);
}

void trn__bmm(trn_run *r, int layer, int M, int N, int K, const double *A, const double *B, double *C,
              const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *out_fmt) {
    /* autocast: both inputs cast to the low-precision type (attention runs
     * in lo even under fp8 recipes, which convert only Linear layers) */
    const fpemu_format *f = r->f_lo;
    double *qa = NULL, *qb = NULL;
    const double *a = A, *b = B;
    if (f != fa) {
        if (!(qa = trn__ws(r, WS_BMM_A, (size_t)M * K * sizeof *qa))) return; /* r->oom */
        memcpy(qa, A, (size_t)M * K * sizeof *qa);
        trn__round(r, layer, CLS_ACT, f, qa, (size_t)M * K);
        a = qa;
    }
    if (f != fb) {
        if (!(qb = trn__ws(r, WS_BMM_B, (size_t)N * K * sizeof *qb))) return;
        memcpy(qb, B, (size_t)N * K * sizeof *qb);
        trn__round(r, layer, CLS_ACT, f, qb, (size_t)N * K);
        b = qb;
    }
    trn__gemm(r, M, N, K, a, b, C, f, f);
    trn__round(r, layer, CLS_OUT, out_fmt, C, (size_t)M * N);
}

/* ---- int8 dynamic quantisation (torch.quantization.quantize_dynamic) ---- */
void trn__linear_int8(trn_run *r, lin_state *L, double *out, const double *in, int BT) {
    int C = L->in, OC = L->out;
    const double *W = r->params + L->w_off;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    /* weights: per tensor, symmetric, scale = max(|min|, |max|) / 127.5 (>= f32 eps) */
    double wmin = 0, wmax = 0;
    for (size_t i = 0; i < (size_t)C * OC; i++) { if (W[i] < wmin) wmin = W[i]; if (W[i] > wmax) wmax = W[i]; }
    double wabs = fmax(-wmin, wmax);
    float ws = (float)(wabs / 127.5);
    if (ws < FLT_EPSILON) ws = FLT_EPSILON;
    int8_t *wq = trn__ws(r, WS_I8, (size_t)C * OC + 2 * (size_t)C + 1);
    if (!wq) return; /* r->oom: reported by trn_eval */
    uint8_t *xq = (uint8_t *)(wq + (size_t)C * OC);
    int8_t *wrow = wq + (size_t)C * OC + C;
    for (size_t i = 0; i < (size_t)C * OC; i++) wq[i] = (int8_t)fpemu_quantize(W[i], ws, 0, -128, 127, &ctx);
    for (int i = 0; i < BT; i++) {
        const double *x = in + (size_t)i * C;
        /* activations per call: min(x, 0), max(x, 0), affine u8 */
        double mn = 0, mx = 0;
        for (int c = 0; c < C; c++) { if (x[c] < mn) mn = x[c]; if (x[c] > mx) mx = x[c]; }
        (void)i;
        int qmax = r->cfg.reduce_range ? 127 : 255;
        float xs = (float)((mx - mn) / qmax);
        if (xs < FLT_EPSILON) xs = FLT_EPSILON;
        double zp = nearbyint(-mn / xs);
        if (zp < 0) zp = 0;
        if (zp > qmax) zp = qmax;
        for (int c = 0; c < C; c++) xq[c] = (uint8_t)fpemu_quantize(x[c], xs, (int32_t)zp, 0, qmax, &ctx);
        for (int o = 0; o < OC; o++) {
            memcpy(wrow, wq + (size_t)o * C, (size_t)C);
            int32_t acc = fpemu_dot_u8i8(xq, wrow, (size_t)C, 0, 0);
            /* remove the zero point: sum_c (xq - zp) w = acc - zp sum_c w */
            int32_t wsum = 0;
            for (int c = 0; c < C; c++) wsum += wrow[c];
            int32_t corr = acc - (int32_t)zp * wsum;
            float y = (float)((double)corr * (double)((float)(xs * ws)));
            if (L->b_off != (size_t)-1) y = y + (float)r->params[L->b_off + o];
            out[(size_t)i * OC + o] = y;
        }
    }
}
