/* SPDX-License-Identifier: MIT */
/* t_gemm.c: the emulated GEMM agrees bit for bit with a direct scalar loop
 * over the same model: for every scaling recipe and several presets, with
 * and without C, transposed operands, thread counts 1..3, the vectorised
 * kernel against the scalar model; special values and values that leave
 * f32's range (recomputed on the scalar model); argument checking. And
 * the recipes' shared pieces (emu/recipe.h) the training engine calls:
 * emu__quantize to codes and to values, its per-row factors against
 * fpemu_gemm_quantize_f32's, and emu__gemm_scaled against fpemu_gemm_f32's
 * recipes and against the engine's former per-chunk loop. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <xmmintrin.h>
#endif
#include "gemm.h"
#include "gemm_internal.h"
#include "recipe.h"
#include "tap.h"

static uint64_t rs;
static double urand(void) { rs = fpemu_random64(rs, 7); return (double)(rs >> 11) / 9007199254740992.0; }
static float nrand(void) { return (float)(sqrt(-2 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand())); }

static int cmp(const float *x, const float *y, int n, const char *what) {
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (memcmp(&x[i], &y[i], 4) && !(isnan(x[i]) && isnan(y[i]))) {
            if (bad++ < 3) diag("%s: element %d: %a vs %a", what, i, x[i], y[i]);
        }
    return bad;
}

/* cmp, NaNs included: their sign and payload too (the kernels flag a NaN
 * lane, so that the scalar model gives its encoding) */
static int cmp_bits(const float *x, const float *y, int n, const char *what) {
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (memcmp(&x[i], &y[i], 4) && bad++ < 3) diag("%s: element %d: %a vs %a (bits differ)", what, i, x[i], y[i]);
    return bad;
}

/* Direct loop for recipe "tensor" (TE current scaling), independent of gemm.c. */
static void direct_tensor(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, const float *B, const float *C, float *D) {
    const fpemu_mma_model *m = &cfg->model;
    fpemu_scaling_current_opts o;
    fpemu_scaling_current_opts_te(&o);
    float amax_a = fpemu_scaling_amax_f32(A, (size_t)M * K, 1), amax_b = fpemu_scaling_amax_f32(B, (size_t)K * N, 1);
    float sa = fpemu_scaling_current_scale(&o, amax_a, m->fa->max_finite), sb = fpemu_scaling_current_scale(&o, amax_b, m->fb->max_finite);
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.sat = 1;
    uint64_t *a = malloc(sizeof(uint64_t) * (size_t)K), *b = malloc(sizeof(uint64_t) * (size_t)K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            for (int k = 0; k < K; k++) {
                a[k] = fpemu_from_float(m->fa, A[(size_t)i * K + k] * sa, &ctx);
                b[k] = fpemu_from_float(m->fb, B[(size_t)k * N + j] * sb, &ctx);
            }
            uint64_t d = fpemu_mma_dot(m, a, b, (size_t)K, 0, NULL);
            float x = (float)fpemu_to_double(m->fd, d);
            x = x * ((1.0f / sa) * (1.0f / sb));
            if (C) x = x + C[(size_t)i * N + j];
            D[(size_t)i * N + j] = x;
        }
    free(a), free(b);
}

/* Direct loop for MX (scales inside the MMA), independent of gemm.c. */
static void direct_mx(const fpemu_gemm_config *cfg, fpemu_scaling_mx_rule rule, int M, int N, int K, const float *A, const float *B, const float *C, float *D) {
    const fpemu_mma_model *m = &cfg->model;
    const fpemu_format *e8m0 = fpemu_format_get("e8m0", NULL, 0);
    int nb = (K + 31) / 32;
    uint64_t *a = malloc(sizeof(uint64_t) * (size_t)K), *b = malloc(sizeof(uint64_t) * (size_t)K);
    uint64_t *sa = malloc(sizeof(uint64_t) * (size_t)nb), *sb = malloc(sizeof(uint64_t) * (size_t)nb);
    float *col = malloc(sizeof(float) * (size_t)K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            for (int k = 0; k < K; k++) col[k] = B[(size_t)k * N + j];
            for (int bb = 0; bb < nb; bb++) {
                int k0 = bb * 32, n = K - k0 < 32 ? K - k0 : 32;
                uint8_t s1 = fpemu_scaling_mx_scale(rule, m->fa, fpemu_scaling_amax_f32(A + (size_t)i * K + k0, (size_t)n, 1));
                uint8_t s2 = fpemu_scaling_mx_scale(rule, m->fb, fpemu_scaling_amax_f32(col + k0, (size_t)n, 1));
                fpemu_scaling_mx_quantize_block(m->fa, s1, A + (size_t)i * K + k0, (size_t)n, 1, a + k0, NULL);
                fpemu_scaling_mx_quantize_block(m->fb, s2, col + k0, (size_t)n, 1, b + k0, NULL);
                sa[bb] = s1, sb[bb] = s2;
            }
            float c = C ? C[(size_t)i * N + j] : 0.0f; /* C is the MMA's c for MX */
            fpemu_ctx cx;
            fpemu_ctx_init(&cx);
            uint64_t cc = fpemu_from_float(m->fc, c, &cx);
            uint64_t d = fpemu_mma_dot_scaled(m, a, b, (size_t)K, cc, e8m0, sa, sb, 32, NULL);
            D[(size_t)i * N + j] = (float)fpemu_to_double(m->fd, d);
        }
    free(a), free(b), free(sa), free(sb), free(col);
}

/* D from fpemu_gemm_f32 against the reference on every kernel level (the
 * best, SSE2, AVX2, AVX-512: the best is AVX-512 with AMX where the CPU has
 * it), with the lane count the best level took; returns the number of
 * mismatching outputs. */
static int f32_vs_ref(fpemu_gemm_config *cfg, int M, int N, int K, const float *A, const float *B, const float *C,
                      int *lanes, unsigned long long *slow, const char *what) {
    float *D = malloc(sizeof(float) * (size_t)M * N), *R = malloc(sizeof(float) * (size_t)M * N);
    fpemu_gemm_stats st;
    int bad = 0;
    fpemu_gemm_f32_reference(cfg, M, N, K, A, K, 0, B, N, 0, C, N, R, N, NULL);
    for (int isa = 0; isa <= 3; isa++) {
        cfg->isa = isa;
        cfg->nthreads = isa ? 1 : 2;
        if (fpemu_gemm_f32(cfg, M, N, K, A, K, 0, B, N, 0, C, N, D, N, &st)) bad++;
        bad += cmp(D, R, M * N, what);
        if (isa == 0) *lanes = st.lanes, *slow = (unsigned long long)st.slow_outputs;
    }
    cfg->isa = 0;
    free(D), free(R);
    return bad;
}

/* fpemu_gemm_codes on the scalar model (r), then on each kernel level (d;
 * level 0, the best, on 3 threads): how many levels differ from r; lanes and
 * slow outputs of the best level. */
static int codes_every_level(fpemu_gemm_config *cfg, int M, int N, int K, const uint64_t *a, const uint64_t *b, const float *c,
                             const fpemu_format *sf, const uint64_t *sa, const uint64_t *sb, int sblock, float *d, float *r,
                             const char *what, int *lanes, unsigned long long *slow) {
    cfg->scalar_only = 1, cfg->nthreads = 1;
    fpemu_gemm_codes(cfg, M, N, K, a, b, c, sf, sa, sb, sblock, r, NULL);
    cfg->scalar_only = 0;
    int bad = 0;
    for (int isa = 0; isa <= 3; isa++) {
        fpemu_gemm_stats st;
        cfg->isa = isa, cfg->nthreads = isa ? 1 : 3;
        bad += fpemu_gemm_codes(cfg, M, N, K, a, b, c, sf, sa, sb, sblock, d, &st) != 0 || cmp(d, r, M * N, what);
        if (isa == 0) *lanes = st.lanes, *slow = (unsigned long long)st.slow_outputs;
    }
    cfg->isa = 0;
    return bad;
}

/* The f32 kernel (16 lanes) on the presets whose formats do not prove it
 * exact (bf16, tf32: their range is checked on the data; h100 f16 and the
 * b200's 32-product blocks: block sums in two int32 halves) and on MX
 * scales: the data at the range limits (one exponent inside: 16 lanes; one
 * outside: the f64 kernel), zeros, inf/NaN, subnormal inputs, c in, odd
 * sizes, and block sums that leave int32 (flagged: the scalar model). */
/* The operands' layouts: A and B each given as it is or transposed (the
 * untransposed B and the transposed A are quantised as they lie, K x R,
 * and their codes kept in the format's container where the recipe casts
 * element by element with one factor; the rest are copied into rows), for
 * the kernels that read them so (table formats, f32-layout, the pairwise,
 * fma-chain and exact-sum kernels, the fused and count-pass variants), the
 * f64 kernel and the scalar model that take 64-bit rows, and a recipe with
 * block scales: the same bits and the same statistics in all four, with
 * inf and NaN inputs in a row of A and a column of B (their outputs come
 * from the scalar model, which gathers a column's codes), and shapes with
 * one row, one column or K = 1. */
/* The packing's AVX-512 decoding of f16 and bf16 codes (gemm.c pack_tab16)
 * against the decode tables, every code, under each set of the model flags
 * it honours: where the two differ the packing takes the tables instead, so
 * a wrong decoding would only cost time; this asserts that it is not wrong. */
static void vdec_packing(void) {
    int r = emu__gemm_vdec_check();
    if (r == -1) {
        ok(1, "# SKIP no AVX-512: the packing decodes f16 and bf16 through the tables");
        return;
    }
    is_int(r, 0, "f16 and bf16 codes decoded 16 at a time = the decode tables (2^16 codes, 4 flag sets, 2 formats)");
}

/* fpemu_gemm_f32 against fpemu_gemm_f32_reference on M x N x K, A and B
 * as laid out (ta, tb: transposed), d and r their outputs, st the call's
 * statistics (or NULL): nonzero where the call fails or a bit differs */
static int against_reference(fpemu_gemm_config *cfg, int M, int N, int K, const float *a, int ta, const float *b, int tb,
                             float *d, float *r, fpemu_gemm_stats *st, const char *what) {
    const int lda = ta ? M : K, ldb = tb ? K : N;
    fpemu_gemm_f32_reference(cfg, M, N, K, a, lda, ta, b, ldb, tb, NULL, N, r, N, NULL);
    return fpemu_gemm_f32(cfg, M, N, K, a, lda, ta, b, ldb, tb, NULL, N, d, N, st) != 0 || cmp_bits(d, r, M * N, what);
}

/* The pairwise kernel's operand ranges (gemm.c pw_pack and pack_pw16):
 * one bf16 element at 2^-100 against 2^-40 on the other side, every other
 * element 0, so that its row (or column) holds the only product below f32's
 * normal range, which the model flushes; wherever it lies (every k of a
 * panel's rows, the transposed 8 x 16 blocks and the tails, each side,
 * given or transposed), the kernel must leave that row (or column) to the
 * scalar model. */
static void pw_ranges(void) {
    enum { PM = 8, PN = 16, PK = 40 };
    static float a[PM * PK], b[PK * PN], d[PM * PN], r[PM * PN];
    fpemu_gemm_config cfg;
    char err[200];
    if (fpemu_gemm_config_init(&cfg, "mi250", "bf16", "bf16", err, sizeof err)) bail("%s", err);
    for (int side = 0; side < 2; side++)
        for (int tr = 0; tr < 2; tr++) {
            int bad = 0;
            for (int pos = 0; pos < PK; pos++) {
                const int row = side ? pos % PN : pos % PM;
                for (int i = 0; i < PM * PK; i++) a[i] = side ? 0x1p-40f : 0.0f;
                for (int i = 0; i < PK * PN; i++) b[i] = side ? 0.0f : 0x1p-40f;
                /* (A is M x K, or K x M transposed; B K x N, or N x K transposed) */
                if (side) b[tr ? (size_t)row * PK + pos : (size_t)pos * PN + row] = 0x1p-100f;
                else a[tr ? (size_t)pos * PM + row : (size_t)row * PK + pos] = 0x1p-100f;
                bad += against_reference(&cfg, PM, PN, PK, a, !side && tr, b, side && tr, d, r, NULL, "pw ranges");
            }
            ok(bad == 0, "mi250 bf16: a product below f32's normal range at every k of %s %s sends its %s to the scalar model",
               side ? "B" : "A", tr ? "transposed" : "as given", side ? "column" : "row");
        }
}

/* A subnormal tf32 input aligns at 2^emin in the model (not at its own
 * leading bit): a100 tf32, one block of a row with a subnormal A element
 * times a large B (the block's greatest product, at 2^-30: the f32 kernel
 * takes the data) and a product whose last bit, 2^-51, lies below the
 * block's quantum 2^(-126 + 100 - 24) but not below 2^(-127 + 100 - 24)
 * (every B element 2^50 or more, so that the data stay in the f32 kernel's
 * range); A as given and transposed, on every level. */
static void tf32_subnormal_align(void) {
    enum { SM = 8, SN = 16, SK = 8 };
    static float a[SM * SK], at[SK * SM], b[SK * SN], d[SM * SN], r[SM * SN];
    fpemu_gemm_config cfg;
    char err[200];
    if (fpemu_gemm_config_init(&cfg, "a100", "tf32", "tf32", err, sizeof err)) bail("%s", err);
    for (int i = 0; i < SM * SK; i++) a[i] = 0.0f;
    for (int i = 0; i < SK * SN; i++) b[i] = 0.0f;
    a[0] = 0x1.8p-130f, a[1] = 0x1.004p-81f; /* a subnormal; then a last bit at 2^-91 */
    for (int j = 0; j < SN; j++) b[j] = 0x1.4p100f, b[SN + j] = 0x1.004p50f; /* last bit 2^40: 2^-51 in the product */
    for (int i = 1; i < SM; i++) a[i * SK] = 0x1p-20f, a[i * SK + 1] = 0x1p-60f;
    for (int i = 0; i < SM; i++)
        for (int k = 0; k < SK; k++) at[k * SM + i] = a[i * SK + k];
    int bad = 0, lanes = 1;
    fpemu_gemm_f32_reference(&cfg, SM, SN, SK, a, SK, 0, b, SN, 0, NULL, SN, r, SN, NULL);
    for (int isa = 0; isa <= 2; isa++)
        for (int tr = 0; tr < 2; tr++) {
            fpemu_gemm_stats st;
            cfg.isa = isa;
            bad += fpemu_gemm_f32(&cfg, SM, SN, SK, tr ? at : a, tr ? SM : SK, tr, b, SN, 0, NULL, SN, d, SN, &st) != 0 ||
                   cmp_bits(d, r, SM * SN, "tf32 subnormal");
            lanes &= st.lanes == 16 && st.slow_outputs == 0;
        }
    ok(bad == 0 && lanes, "a100 tf32: a subnormal input aligns at 2^emin on the f32 kernel, A as given and transposed, every level");
}

/* The packing's inf/NaN marks at every position of whole panels (the
 * vector packers' blocks and their tails): h100 e4m3 with the count pass,
 * one NaN in A or B, each given or transposed, at every k of a row (or
 * column) that moves with it: the same bits as the scalar model. */
static void nan_marks(void) {
    enum { QM = 8, QN = 32, QK = 20 };
    static float a[QM * QK], b[QK * QN], d[QM * QN], r[QM * QN];
    fpemu_gemm_config cfg;
    char err[200];
    if (fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", err, sizeof err) ||
        fpemu_gemm_config_set_scaling(&cfg, "tensor", err, sizeof err))
        bail("%s", err);
    for (int side = 0; side < 2; side++)
        for (int tr = 0; tr < 2; tr++) {
            int bad = 0;
            for (int pos = 0; pos < QK; pos++) {
                const int row = side ? (5 * pos) % QN : pos % QM;
                for (int i = 0; i < QM * QK; i++) a[i] = (float)(i % 13) - 6.0f;
                for (int i = 0; i < QK * QN; i++) b[i] = 0.25f * (float)(i % 7) - 0.75f;
                if (side) b[tr ? (size_t)row * QK + pos : (size_t)pos * QN + row] = NAN;
                else a[tr ? (size_t)pos * QM + row : (size_t)row * QK + pos] = NAN;
                bad += against_reference(&cfg, QM, QN, QK, a, !side && tr, b, side && tr, d, r, NULL, "nan marks");
            }
            ok(bad == 0, "h100 e4m3 tensor: a NaN at every k of %s %s: the scalar model's bits", side ? "B" : "A",
               tr ? "transposed" : "as given");
        }
}

/* The MX packing's blocks (gemm.c pack_mx8) against the scalar model: b200
 * e4m3 mx-rceil in whole panels with a NaN in one 32-element block of A
 * or B (its scale is NaN: the block's elements take no part, its row or
 * column is marked), A and B given or transposed; and NVFP4 on a b200
 * without the group rule (group = 0), whose e4m3 block scales are not
 * powers of two: the f64 kernel takes it. */
static void mx_blocks(void) {
    enum { XM = 8, XN = 32, XK = 72 };
    static float a[XM * XK], b[XK * XN], d[XM * XN], r[XM * XN];
    char err[200];
    for (int t = 0; t < 3; t++)
        for (int tr = 0; tr < 2; tr++) {
            fpemu_gemm_config cfg;
            if (fpemu_gemm_config_init(&cfg, "b200", t == 2 ? "e2m1" : "e4m3", t == 2 ? "e2m1" : "e4m3", err, sizeof err) ||
                fpemu_gemm_config_set_scaling(&cfg, t == 2 ? "nvfp4" : "mx-rceil", err, sizeof err) ||
                (t == 2 && fpemu_mma_model_set(&cfg.model, "group", "0", err, sizeof err)))
                bail("%s", err);
            for (int i = 0; i < XM * XK; i++) a[i] = nrand() * (1 + i % 5);
            for (int i = 0; i < XK * XN; i++) b[i] = nrand() * 0.05f * (1 + i % 3);
            if (t == 0) a[tr ? (size_t)37 * XM + 3 : (size_t)3 * XK + 37] = NAN; /* A's row 3, block 1 */
            if (t == 1) b[tr ? (size_t)20 * XK + 40 : (size_t)40 * XN + 20] = NAN; /* B's column 20, block 1 */
            fpemu_gemm_stats st;
            const int bad = against_reference(&cfg, XM, XN, XK, a, t == 0 && tr, b, t != 0 && tr, d, r, &st, "mx blocks");
            ok(!bad && st.lanes == (t == 2 ? 8 : 16), "b200 %s%s, %s %s: the scalar model's bits (%d lanes)",
               t == 2 ? "e2m1 nvfp4" : "e4m3 mx-rceil", t == 2 ? " with group = 0" : " with a NaN block", t == 0 ? "A" : "B",
               tr ? "transposed" : "as given", st.lanes);
        }
}

/* What t_gemm_sweep found, one case each (each failed before its fix):
 * mi300 at nfrac 15, c above the products' emax with bits below 2^(E -
 * nfrac) (the fused kernel's fast path kept them); an emax floor above a
 * negative tiny c in lanes whose products are all -0 (the f64 kernel gave
 * -0, the model +0); the floor with B all zeros (the f32 kernel kept a c the floor
 * cuts: its data check took an all-zero operand as in range). */
static void sweep_found(void) {
    enum { M = 8, N = 32, K = 16 };
    static float A[M * K], B[K * N], C[M * N], Z[K * N];
    for (int i = 0; i < M * K; i++) A[i] = ldexpf(1.0f + (float)(i % 8) / 8, (int)(urand() * 4) - 2) * (i % 3 ? 1 : -1);
    for (int i = 0; i < K * N; i++) B[i] = ldexpf(1.0f + (float)(i % 4) / 4, (int)(urand() * 4) - 2) * (i % 5 ? 1 : -1);
    /* case 2's operands: row 0 of A all -0 against B > 0, so that the products' zeros are -0 too */
    static float A0[M * K], Bp[K * N];
    memcpy(A0, A, sizeof A0);
    for (int k = 0; k < K; k++) A0[k] = -0.0f;
    for (int i = 0; i < K * N; i++) Bp[i] = fabsf(B[i]);
    struct { const char *model, *fmt, *key, *val, *what; int c, zero_a_row, zero_b; } cs[] = {
        {"mi300", "f16", "nfrac", "15", "mi300 f16 nfrac 15, c = 2^6 (1 + 2^-20) above the products", 1, 0, 0},
        {"a100", "f16", "emax_floor", "-20", "a100 f16 emax_floor -20, a row of A all -0 against B > 0, c = -2^-60 (the model's +0)", 2, 1, 0},
        {"a100", "f16", "emax_floor", "-20", "a100 f16 emax_floor -20, B all zeros, c = 1.5 x 2^-100 (cut to +0)", 3, 0, 1},
    };
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
        fpemu_gemm_config cfg;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, cs[ci].model, cs[ci].fmt, cs[ci].fmt, err, sizeof err) ||
            fpemu_mma_model_set(&cfg.model, cs[ci].key, cs[ci].val, err, sizeof err))
            bail("%s", err);
        for (int i = 0; i < M * N; i++)
            C[i] = cs[ci].c == 1 ? ldexpf(1.0f + ldexpf(1.0f, -20), 6) * (i % 2 ? -1 : 1)
                   : cs[ci].c == 2 ? (i < N ? -ldexpf(1.0f, -60) : nrand())
                                   : ldexpf(1.5f, -100) * (i % 2 ? -1 : 1);
        int lanes;
        unsigned long long slow;
        int bad = f32_vs_ref(&cfg, M, N, K, cs[ci].zero_a_row ? A0 : A, cs[ci].zero_b ? Z : cs[ci].zero_a_row ? Bp : B, C, &lanes,
                             &slow, cs[ci].what);
        ok(bad == 0, "%s: == reference on every level (%d lanes)", cs[ci].what, lanes);
    }
}

/* The MX and NVFP4 recipes of the quantisation tests, on the b200: recipe
 * ri of mxnv_recipes, with e2m1 elements for NVFP4 (or where e2m1), else e4m3. */
static const char *const mxnv_recipes[] = {"mx-floor", "mx-rceil", "nvfp4"};
static void mxnv_config(fpemu_gemm_config *cfg, int ri, int e2m1) {
    char err[200];
    const char *f = ri == 2 || e2m1 ? "e2m1" : "e4m3";
    if (fpemu_gemm_config_init(cfg, "b200", f, f, err, sizeof err) || fpemu_gemm_config_set_scaling(cfg, mxnv_recipes[ri], err, sizeof err))
        bail("%s", err);
}

/* emu__quantize's MX and NVFP4 blocks against the per-block public API
 * (scaling.h), block by block: the block's amax, its scale code, the
 * element codes of fpemu_scaling_mx_quantize_block or
 * fpemu_scaling_nvfp4_quantize_block, the decoded scale and the encode
 * factor; rows of 3 and a half blocks, zero blocks, huge and tiny ones. */
static void mx_nvfp4_blocks(void) {
    enum { QR = 5, QC = 120 };
    static float x[QR * QC];
    static uint64_t codes[QR * QC], want[32];
    static uint64_t scode[QR * 8];
    static float dec[QR * 8], enc[QR * 8];
    for (int i = 0; i < QR * QC; i++) x[i] = nrand() * (i / 32 % 3 == 0 ? 1e-3f : i / 32 % 3 == 1 ? 1.0f : 3e4f);
    for (int i = 32; i < 48; i++) x[i] = 0.0f; /* a zero block (NVFP4), half of one (MX) */
    for (int i = 64; i < 96; i++) x[i] = 0.0f; /* a zero block (MX) */
    const char *const *recipes = mxnv_recipes;
    for (int ri = 0; ri < 3; ri++) {
        fpemu_gemm_config cfg;
        mxnv_config(&cfg, ri, 0);
        const int mx = ri < 2, sb = mx ? 32 : 16, nkb = (QC + sb - 1) / sb;
        const fpemu_format *f = cfg.afmt, *sf = fpemu_format_get(mx ? "e8m0" : "e4m3", NULL, 0);
        emu_quant o = {.codes = codes, .scode = scode, .dec = dec, .enc = enc};
        int bad = emu__quantize(&cfg.scaling, f, QR, QC, x, 1, 1, NULL, &o, NULL, 0) != 0;
        const float ts = fpemu_scaling_nvfp4_tensor_scale(fpemu_scaling_amax_f32(x, (size_t)QR * QC, 1));
        for (int r = 0; r < QR; r++)
            for (int b = 0; b < nkb; b++) {
                const int k0 = b * sb, n = QC - k0 < sb ? QC - k0 : sb;
                const float *xb = x + (size_t)r * QC + k0;
                const float am = fpemu_scaling_amax_f32(xb, (size_t)n, 1);
                const uint8_t sc = mx ? fpemu_scaling_mx_scale(cfg.scaling.mx_rule, f, am) : fpemu_scaling_nvfp4_block_scale(am, ts);
                if (mx) fpemu_scaling_mx_quantize_block(f, sc, xb, (size_t)n, 1, want, NULL);
                else fpemu_scaling_nvfp4_quantize_block(sc, ts, xb, (size_t)n, 1, want, NULL);
                const size_t at = (size_t)r * nkb + b;
                const float d = (float)fpemu_to_double(sf, sc), e = mx ? emu__mx_encode_factor(sc) : emu__nvfp4_encode_factor(sc, ts);
                int same = scode[at] == sc && !memcmp(&dec[at], &d, 4) && !memcmp(&enc[at], &e, 4) &&
                           !memcmp(codes + (size_t)r * QC + k0, want, sizeof(uint64_t) * (size_t)n);
                if (!same && bad++ < 3)
                    diag("%s row %d block %d: scale %#x/%#x dec %a/%a enc %a/%a", recipes[ri], r, b, (unsigned)scode[at],
                         (unsigned)sc, dec[at], d, enc[at], e);
            }
        ok(!bad, "emu__quantize %s: every block's scale, codes, decoded scale and encode factor = scaling.h's per-block API",
           recipes[ri]);
        /* smin: MX counts its zero blocks as 1 (every other block's factor here is
         * below 1: the least is a nonzero block's); NVFP4's zero block scale gives 0 */
        float least = INFINITY;
        for (int i = 0; i < QR * nkb; i++)
            if (!(mx && i == 2)) least = enc[i] < least ? enc[i] : least;
        ok(mx ? o.smin == least && least < 1 && enc[2] > 1 : o.smin == 0 && least == 0,
           "emu__quantize %s: smin %g, the least encode factor %s", recipes[ri], o.smin, mx ? "of the nonzero blocks" : "(a zero block's)");
    }
}

/* emu__quantize's MX and NVFP4 runs (a row's blocks amaxed, scaled and
 * cast together, EMU_CAST_CHUNK elements at a time: emu__block_amax,
 * emu__nvfp4_block_scales) against the per-block public API, on rows long
 * enough to split into runs, with a short last block: in all three output
 * forms (codes, codes in their containers, values) the codes, scales,
 * decoded scales, encode factors, block amaxes (a NaN's payload: the
 * block's first) and the cast counts summed over the blocks; blocks of
 * NaN, inf, f32 subnormals, -0, zeros, and MX blocks that saturate. */
static void mx_nvfp4_runs(void) {
    enum { QR = 3, QC = 1100, NB = (QC + 15) / 16 };
    static float x[QR * QC], vals[QR * QC], dec[QR * NB], enc[QR * NB], bam[QR * NB];
    static uint64_t codes[QR * QC], want[32], scode[QR * NB];
    static uint8_t nc[QR * QC];
    for (int i = 0; i < QR * QC; i++) x[i] = nrand() * ldexpf(1.0f, (i / 16 * 7) % 41 - 20);
    for (int i = 0; i < 16; i++) x[QC + 48 + i] = ldexpf(i % 2 ? -1.0f : 1.0f, -140 + i); /* f32 subnormals */
    for (int i = 0; i < 16; i++) x[QC + 96 + i] = i % 3 ? -0.0f : 0.0f;               /* zeros, -0 */
    uint32_t nan1 = 0x7FC00077u, nan2 = 0xFFC01234u; /* (the larger magnitude second) */
    memcpy(&x[QC + 16 * 70 + 5], &nan1, 4), memcpy(&x[QC + 16 * 70 + 9], &nan2, 4); /* a block's two NaNs (the first's payload) */
    x[2 * QC + 16 * 3 + 2] = -INFINITY, x[2 * QC + QC - 3] = INFINITY;             /* inf, in the short last block */
    for (int i = 0; i < 32; i++) x[2 * QC + 32 * 20 + i] = 1.0f + (float)i / 32;   /* MX floor: saturates (amax 1.97) */
    const char *const *recipes = mxnv_recipes;
    for (int ri = 0; ri < 3; ri++)
        for (int form = 0; form < 3; form++) {
            fpemu_gemm_config cfg;
            mxnv_config(&cfg, ri, 0);
            const int mx = ri < 2, sb = mx ? 32 : 16, nkb = (QC + sb - 1) / sb;
            const fpemu_format *f = cfg.afmt, *sf = fpemu_format_get(mx ? "e8m0" : "e4m3", NULL, 0);
            fpemu_cast_stats got, exp;
            memset(&got, 0, sizeof got), memset(&exp, 0, sizeof exp);
            /* NVFP4's tensor amax as a caller gives it (emu_quant.amax), of the finite elements: the
             * NaN's would scale every block by FLT_MAX / 448 */
            float tam = 0;
            for (int i = 0; i < QR * QC; i++) tam = isfinite(x[i]) && fabsf(x[i]) > tam ? fabsf(x[i]) : tam;
            emu_quant o = {.scode = scode, .dec = dec, .enc = enc, .bamax = bam, .st = &got, .amax = &tam};
            if (form == 0) o.codes = codes;
            else if (form == 1) o.ncodes = nc;
            else o.vals = vals;
            int bad = emu__quantize(&cfg.scaling, f, QR, QC, x, 1, 1, NULL, &o, NULL, 0) != 0, nblk = 0;
            const float ts = fpemu_scaling_nvfp4_tensor_scale(tam);
            for (int r = 0; r < QR; r++)
                for (int b = 0; b < nkb; b++, nblk++) {
                    const int k0 = b * sb, n = QC - k0 < sb ? QC - k0 : sb;
                    const float *xb = x + (size_t)r * QC + k0;
                    const float am = fpemu_scaling_amax_f32(xb, (size_t)n, 1);
                    const uint8_t sc = mx ? fpemu_scaling_mx_scale(cfg.scaling.mx_rule, f, am) : fpemu_scaling_nvfp4_block_scale(am, ts);
                    if (mx) fpemu_scaling_mx_quantize_block(f, sc, xb, (size_t)n, 1, want, form == 2 ? NULL : &exp);
                    else fpemu_scaling_nvfp4_quantize_block(sc, ts, xb, (size_t)n, 1, want, form == 2 ? NULL : &exp);
                    const size_t at = (size_t)r * nkb + b, e0 = (size_t)r * QC + k0;
                    const float d = (float)fpemu_to_double(sf, sc), e = mx ? emu__mx_encode_factor(sc) : emu__nvfp4_encode_factor(sc, ts);
                    int same = scode[at] == sc && !memcmp(&dec[at], &d, 4) && !memcmp(&enc[at], &e, 4) && !memcmp(&bam[at], &am, 4);
                    for (int k = 0; k < n && same; k++) {
                        if (form == 0) same = codes[e0 + k] == want[k];
                        else if (form == 1) same = nc[e0 + k] == want[k];
                        else {
                            double v = fpemu_to_double(f, want[k]);
                            same = isnan(v) ? isnan(vals[e0 + k]) : vals[e0 + k] == v && !signbit(vals[e0 + k]) == !signbit(v);
                        }
                    }
                    if (!same && bad++ < 3)
                        diag("%s form %d row %d block %d: scale %#x/%#x dec %a/%a enc %a/%a amax %a/%a", recipes[ri], form, r, b,
                             (unsigned)scode[at], (unsigned)sc, dec[at], d, enc[at], e, bam[at], am);
                }
            int stats = form == 2 || (got.n == exp.n && got.overflow == exp.overflow && got.saturated == exp.saturated &&
                                      got.underflow == exp.underflow && got.subnormal == exp.subnormal &&
                                      got.nonfinite_in == exp.nonfinite_in && got.amax == exp.amax);
            if (!stats)
                diag("%s form %d counts: n %llu/%llu overflow %llu/%llu saturated %llu/%llu underflow %llu/%llu subnormal %llu/%llu "
                     "nonfinite %llu/%llu amax %g/%g", recipes[ri], form, (unsigned long long)got.n, (unsigned long long)exp.n,
                     (unsigned long long)got.overflow, (unsigned long long)exp.overflow, (unsigned long long)got.saturated,
                     (unsigned long long)exp.saturated, (unsigned long long)got.underflow, (unsigned long long)exp.underflow,
                     (unsigned long long)got.subnormal, (unsigned long long)exp.subnormal, (unsigned long long)got.nonfinite_in,
                     (unsigned long long)exp.nonfinite_in, got.amax, exp.amax);
            ok(!bad && stats && (form == 2 || ((ri != 0 || exp.saturated > 0) && exp.nonfinite_in > 0 && exp.underflow > 0 && exp.subnormal > 0)),
               "emu__quantize %s runs (%s, %d blocks): = the per-block API, block by block%s", recipes[ri],
               form == 0 ? "codes" : form == 1 ? "codes in containers" : "values", nblk, form == 2 ? "" : ", and the cast counts");
        }
}

/* emu__quantize_cols (MX and NVFP4 down the columns of a K x N array)
 * against emu__quantize of the array's transpose: codes (laid out as the
 * array), scales, decoded scales, encode factors, block amaxes, counts,
 * tensor scale and smin, bit for bit; K with a short last block, N above a
 * segment and not a multiple of 16, a row stride above N, NaNs whose first
 * in column order is not the first in row order, inf, f32 subnormals,
 * zero blocks; the tensor amax computed and given. */
static void mx_nvfp4_cols(void) {
    enum { QK = 83, QN = 530, LD = 537 };
    static float x[QK * LD], xt[QN * QK], dec[2][QN * 6], enc[2][QN * 6], bam[2][QN * 6];
    static uint64_t scode[2][QN * 6];
    static uint8_t nc[QK * QN], nt[QN * QK];
    for (int k = 0; k < QK; k++)
        for (int j = 0; j < LD; j++) x[k * LD + j] = nrand() * ldexpf(1.0f, (j * 5 + k / 16 * 3) % 37 - 18);
    for (int k = 0; k < QK; k++) x[k * LD + 7] = 0.0f, x[k * LD + 300] = ldexpf(k % 2 ? -1.0f : 1.0f, -135 - k % 10);
    uint32_t n1 = 0x7FC00011u, n2 = 0xFFC00022u, n3 = 0x7FA00033u;
    memcpy(&x[5 * LD + 40], &n1, 4), memcpy(&x[2 * LD + 41], &n2, 4); /* row order meets n2 first, column order n1 */
    memcpy(&x[70 * LD + 41], &n3, 4);
    uint32_t n4 = 0x7FC00001u, n5 = 0xFFC00005u; /* one block's two NaNs, the larger magnitude second */
    memcpy(&x[3 * LD + 100], &n4, 4), memcpy(&x[9 * LD + 100], &n5, 4);
    x[33 * LD + 520] = INFINITY, x[82 * LD + 529] = -INFINITY;
    for (int k = 0; k < QK; k++)
        for (int j = 0; j < QN; j++) xt[j * QK + k] = x[k * LD + j];
    {
        const float a = emu__amax_cols(x, LD, QK, QN), want = fpemu_scaling_amax_f32(xt, (size_t)QN * QK, 1);
        const float fin = emu__amax_cols(x + 101, LD, QK, QN - 101), wf = fpemu_scaling_amax_f32(xt + 101 * QK, (size_t)(QN - 101) * QK, 1);
        uint32_t ab;
        memcpy(&ab, &a, 4);
        ok(!memcmp(&a, &want, 4) && ab == n1 && !memcmp(&fin, &wf, 4) && isinf(fin),
           "emu__amax_cols = fpemu_scaling_amax_f32 of the transpose: its first NaN in column order (%08x), inf", (unsigned)ab);
    }
    const char *const *recipes = mxnv_recipes;
    for (int ri = 0; ri < 3; ri++)
        for (int given = 0; given < 2; given++) {
            fpemu_gemm_config cfg;
            char err[200];
            mxnv_config(&cfg, ri, 1);
            const int nkb = emu__quant_nkb(&cfg.scaling, QK);
            float tam = 0;
            for (int i = 0; i < QK * QN; i++) tam = isfinite(xt[i]) && fabsf(xt[i]) > tam ? fabsf(xt[i]) : tam;
            fpemu_cast_stats st[2];
            memset(st, 0, sizeof st);
            emu_quant o[2];
            for (int w = 0; w < 2; w++)
                o[w] = (emu_quant){.ncodes = w ? (void *)nc : (void *)nt, .scode = scode[w], .dec = dec[w], .enc = enc[w],
                                   .bamax = bam[w], .st = &st[w], .amax = given ? &tam : NULL};
            int rc = emu__quantize(&cfg.scaling, cfg.bfmt, QN, QK, xt, 1, 1, NULL, &o[0], NULL, 0) ||
                     emu__quantize_cols(&cfg.scaling, cfg.bfmt, QK, QN, x, LD, &o[1], err, sizeof err);
            long bad = 0;
            for (int k = 0; k < QK; k++)
                for (int j = 0; j < QN; j++) bad += nc[k * QN + j] != nt[j * QK + k];
            const size_t nb = (size_t)QN * nkb;
            int same = !rc && !bad && !memcmp(scode[0], scode[1], nb * 8) && !memcmp(dec[0], dec[1], nb * 4) &&
                       !memcmp(enc[0], enc[1], nb * 4) && !memcmp(bam[0], bam[1], nb * 4) && !memcmp(&st[0], &st[1], sizeof st[0]) &&
                       !memcmp(&o[0].tensor_enc, &o[1].tensor_enc, 4) && !memcmp(&o[0].smin, &o[1].smin, 4);
            if (!same)
                diag("%s given %d: rc %d, %ld codes differ; scales %d dec %d enc %d amax %d counts %d tensor %g/%g smin %g/%g",
                     recipes[ri], given, rc, bad, !memcmp(scode[0], scode[1], nb * 8), !memcmp(dec[0], dec[1], nb * 4),
                     !memcmp(enc[0], enc[1], nb * 4), !memcmp(bam[0], bam[1], nb * 4), !memcmp(&st[0], &st[1], sizeof st[0]),
                     o[0].tensor_enc, o[1].tensor_enc, o[0].smin, o[1].smin);
            ok(same && st[0].nonfinite_in > 0 && (!given || st[0].underflow > 0), /* (a NaN tensor amax scales all by FLT_MAX / 448) */
               "emu__quantize_cols %s (%d x %d, row stride %d, tensor amax %s) = emu__quantize of the transpose, bit for bit",
               recipes[ri], QK, QN, LD, given ? "given" : "computed");
        }
}

/* emu__quantize's smin, the telemetry's scale, against its rule restated
 * from the encode factors and block amaxes: NONE 1; TENSOR, GIVEN the
 * tensor's scale; the others the least block factor (MX: a zero block
 * counting as 1), a NaN sticking. Finite data with a zero row and a zero
 * MX block (and rows spanning 2^-22 to 2^20, so that the blocks' factors
 * differ), the same with a NaN, and with every value below 2^-10 (MX: the
 * zero block's 1 is the least); every recipe, tiles of 1 and 3 rows. */
static void quant_smin(void) {
    enum { QR = 7, QC = 100 };
    static float x[QR * QC], enc[QR * 8], bam[QR * 8];
    static uint64_t codes[QR * QC];
    static const char *const recipes[] = {"none", "tensor", "tensor-torchao", "given", "rowwise", "blockwise",
                                          "mx-floor", "mx-rceil", "nvfp4"};
    for (int nan = 0; nan < 3; nan++) {
        /* (nan 2: every value below 2^-10, so that every nonzero MX block's
         * factor exceeds 1 and the zero block's 1 is the least) */
        for (int i = 0; i < QR * QC; i++) x[i] = nrand() * ldexpf(1.0f, nan == 2 ? -12 - i / QC : 20 - 7 * (i / QC));
        for (int i = QC; i < 2 * QC; i++) x[i] = 0.0f;        /* a zero row (every recipe's zero blocks) */
        for (int i = 0; i < 32; i++) x[3 * QC + 32 + i] = 0; /* a zero MX block in row 3 */
        if (nan == 1) x[5 * QC + 70] = NAN;
        for (size_t ri = 0; ri < sizeof recipes / sizeof recipes[0]; ri++)
            for (int tr = 1; tr <= 3; tr += 2) {
                fpemu_gemm_config cfg;
                fpemu_gemm_config_init(&cfg, "b200", "e4m3", "e4m3", NULL, 0);
                fpemu_gemm_config_set_scaling(&cfg, recipes[ri], NULL, 0);
                cfg.scaling.scale_a = 3.0f;
                const int kind = cfg.scaling.kind, nkb = emu__quant_nkb(&cfg.scaling, QC);
                const fpemu_format *f = fpemu_format_get(kind == FPEMU_GEMM_SCALING_NVFP4 ? "e2m1" : "e4m3", NULL, 0);
                emu_quant o = {.codes = codes, .enc = enc, .bamax = bam};
                int rc = emu__quantize(&cfg.scaling, f, QR, QC, x, tr, 1, NULL, &o, NULL, 0);
                const int blocks = kind != FPEMU_GEMM_SCALING_NONE && kind != FPEMU_GEMM_SCALING_TENSOR &&
                                   kind != FPEMU_GEMM_SCALING_GIVEN;
                float least = blocks ? enc[0] : kind == FPEMU_GEMM_SCALING_NONE ? 1.0f : o.tensor_enc;
                for (int i = 0; blocks && i < QR * nkb; i++) {
                    float e = kind == FPEMU_GEMM_SCALING_MX && bam[i] == 0 ? 1.0f : enc[i];
                    if (i == 0 || (!isnan(least) && (e < least || isnan(e)))) least = e;
                }
                const int mx1 = nan == 2 && kind == FPEMU_GEMM_SCALING_MX; /* the zero block's 1 */
                ok(!rc && (o.smin == least || (isnan(o.smin) && isnan(least))) && (!blocks || (o.smin != 1) != mx1),
                   "emu__quantize %s (tile rows %d)%s: smin %g = the least encode factor %g", recipes[ri], tr,
                   nan == 1 ? ", a NaN in row 5" : nan == 2 ? ", values below 2^-10" : "", o.smin, least);
            }
    }
}

static void layouts(void) {
    static const struct { const char *model, *fmt, *recipe; int spec; } cs[] = {
        {"a100", "f16", "none", 0},      {"a100", "f16", "none", 1},       {"h100", "e4m3", "tensor", 0},
        {"h100", "e4m3", "given", 1},    {"a100", "tf32", "none", 1},      {"mi250", "f16", "none", 1},
        {"fma-seq", "f16", "none", 1},   {"exact", "e4m3", "tensor", 1},   {"pairwise", "bf16", "none", 1},
        {"mi300", "f16", "none", 1},     {"a100", "bf16", "none", 2},      {"b200", "e4m3", "mx-rceil", 1},
        {"h100", "e4m3", "rowwise", 1},  {"mi250", "f16", "none", 3},
    };
    static const int shapes[][3] = {{21, 70, 77}, {1, 7, 9}, {6, 1, 4}, {5, 3, 1}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
        float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
        float *At = malloc(sizeof(float) * M * K), *Bt = malloc(sizeof(float) * K * N);
        float *D[4];
        for (int v = 0; v < 4; v++) D[v] = malloc(sizeof(float) * M * N);
        for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
            for (int i = 0; i < M * K; i++) A[i] = nrand() * 3;
            for (int i = 0; i < K * N; i++) B[i] = nrand() * 0.05f;
            if (cs[ci].spec == 1) A[(M - 1) * K + K / 2] = NAN, B[(K - 1) * N] = -INFINITY;
            if (cs[ci].spec == 2) A[0] = 1e30f, B[N - 1] = 1e-30f; /* beyond the f32 kernel: the f64 one */
            for (int i = 0; i < M; i++) for (int k = 0; k < K; k++) At[(size_t)k * M + i] = A[(size_t)i * K + k];
            for (int k = 0; k < K; k++) for (int j = 0; j < N; j++) Bt[(size_t)j * K + k] = B[(size_t)k * N + j];
            fpemu_gemm_config cfg;
            char err[256];
            if (fpemu_gemm_config_init(&cfg, cs[ci].model, cs[ci].fmt, cs[ci].fmt, err, sizeof err) ||
                fpemu_gemm_config_set_scaling(&cfg, cs[ci].recipe, err, sizeof err))
                bail("%s", err);
            if (cfg.scaling.kind == FPEMU_GEMM_SCALING_GIVEN) cfg.scaling.scale_a = 16, cfg.scaling.scale_b = 512;
            if (cs[ci].spec == 3) cfg.model.block = 0, cfg.sat = 0; /* (one tree: the scalar model for every output) */
            cfg.nthreads = 2;
            fpemu_gemm_stats st[4];
            int rc = 0;
            for (int v = 0; v < 4; v++) { /* v: A transposed (1), B transposed (2) */
                rc |= fpemu_gemm_f32(&cfg, M, N, K, v & 1 ? At : A, v & 1 ? M : K, v & 1, v & 2 ? Bt : B, v & 2 ? K : N, v >> 1,
                                     NULL, N, D[v], N, &st[v]);
            }
            char what[128];
            snprintf(what, sizeof what, "%dx%dx%d %s %s %s%s", M, N, K, cs[ci].model, cs[ci].fmt, cs[ci].recipe,
                     cs[ci].spec == 1 ? " (inf, NaN)" : cs[ci].spec == 2 ? " (the f64 kernel)" : cs[ci].spec == 3 ? " (scalar)" : "");
            int bad = rc;
            for (int v = 1; v < 4; v++) {
                bad += cmp_bits(D[v], D[0], M * N, what);
                bad += memcmp(&st[v].a, &st[0].a, sizeof st[0].a) != 0 || memcmp(&st[v].b, &st[0].b, sizeof st[0].b) != 0;
                bad += memcmp(&st[v].amax_a, &st[0].amax_a, 4) || memcmp(&st[v].amax_b, &st[0].amax_b, 4) ||
                       st[v].scale_a != st[0].scale_a || st[v].scale_b != st[0].scale_b || st[v].slow_outputs != st[0].slow_outputs ||
                       st[v].kernel != st[0].kernel || st[v].lanes != st[0].lanes;
            }
            ok(bad == 0, "%s: A and B as given or transposed: same bits and statistics (kernel %d, %d lanes, %llu scalar outputs)", what,
               st[0].kernel, st[0].lanes, (unsigned long long)st[0].slow_outputs);
        }
        free(A), free(B), free(At), free(Bt);
        for (int v = 0; v < 4; v++) free(D[v]);
    }
}

static void f32_lane_edges(void) {
    enum { M = 13, N = 37, K = 70 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N), *C = malloc(sizeof(float) * M * N);
    char what[160];
    int lanes;
    unsigned long long slow;
    static const struct { const char *model, *fmt; } pm[] = {
        {"a100", "bf16"}, {"a100", "tf32"}, {"h100", "bf16"}, {"h100", "tf32"}, {"h100", "f16"}, {"b200", "e4m3"}, {"b200", "bf16"}};
    for (size_t pi = 0; pi < sizeof pm / sizeof pm[0]; pi++) {
        fpemu_gemm_config cfg;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, pm[pi].model, pm[pi].fmt, pm[pi].fmt, err, sizeof err)) bail("%s", err);
        cfg.sat = 0;
        const fpemu_mma_model *m = &cfg.model;
        /* exponents of the elements: A's and B's least (lo/2) and greatest */
        int lo = 2 * m->nfrac - 124; /* f32_range_ok's least product exponent */
        if (lo <= m->nfrac - 126) lo = m->nfrac - 125;
        int ea = lo / 2 - (lo < 0 && lo % 2 ? 1 : 0), eb = lo - ea;
        int big = m->fa->emax < 59 ? m->fa->emax : 59;
        for (int edge = 0; edge < 4; edge++) {
            if (m->fa->emin > ea - 1 && edge == 1) continue; /* f16, e4m3: the formats' range proves it */
            /* edge 0: inside; 1: one exponent below; 2: product exponents up to
             * 118 (products below 2^120, the limit); 3: up to 119 */
            for (int i = 0; i < M * K; i++) A[i] = ldexpf(1.0f + (float)(i % 7) / 8, ea + (int)(urand() * 6)) * (i % 3 ? 1 : -1);
            for (int i = 0; i < K * N; i++) B[i] = ldexpf(1.0f + (float)(i % 5) / 4, eb + (int)(urand() * 6)) * (i % 4 ? 1 : -1);
            A[5] = ldexpf(1.0f, edge == 1 ? ea - 1 : ea), B[7] = ldexpf(1.0f, eb);
            if (edge >= 2) {
                if (m->fa->emax < 59) continue;
                A[K + 3] = ldexpf(1.5f, big), B[3 * N + 2] = ldexpf(1.5f, edge == 2 ? 59 : 60);
            }
            for (int i = 0; i < M * N; i++) C[i] = i % 5 ? 0.0f : ldexpf(nrand(), lo - m->nfrac);
            snprintf(what, sizeof what, "%s %s range edge %d", pm[pi].model, pm[pi].fmt, edge);
            int bad = f32_vs_ref(&cfg, M, N, K, A, B, C, &lanes, &slow, what);
            int want = edge == 1 || edge == 3 ? 8 : 16;
            ok(bad == 0 && lanes == want, "%s %s, products from 2^%d%s: %d lanes (want %d) == reference on every level",
               pm[pi].model, pm[pi].fmt, edge == 1 ? lo - 1 : lo, edge == 2 ? " to 2^118" : edge == 3 ? " to 2^119" : "", lanes, want);
        }
        /* N(0,1) data with zeros, subnormal-free rows, inf/NaN inputs and special c */
        for (int i = 0; i < M * K; i++) A[i] = i % 11 == 0 ? 0.0f : nrand() * 3;
        for (int i = 0; i < K * N; i++) B[i] = i % 13 == 0 ? -0.0f : nrand() * 0.05f;
        for (int k = 0; k < K; k++) A[2 * K + k] = 0; /* a zero row: c alone */
        A[4 * K + 1] = INFINITY, A[6 * K + 9] = NAN, B[5 * N + 3] = -INFINITY;
        for (int i = 0; i < M * N; i++) C[i] = nrand();
        C[0] = -0.0f, C[1] = NAN, C[2] = 1e-40f, C[3] = INFINITY, C[4] = 3e38f, C[N + 1] = 1e-30f, C[2 * N + 5] = 0.0f;
        snprintf(what, sizeof what, "%s %s specials", pm[pi].model, pm[pi].fmt);
        int bad = f32_vs_ref(&cfg, M, N, K, A, B, C, &lanes, &slow, what);
        ok(bad == 0 && lanes == 16, "%s %s: zeros, inf/NaN inputs, -0/NaN/inf/subnormal/tiny/huge c: %d lanes, %llu scalar outputs, == reference",
           pm[pi].model, pm[pi].fmt, lanes, slow);
        /* a subnormal input (its exponent is emin): the f64 kernel where the
         * format has them below the f32 kernel's range */
        A[7] = m->fa->emin < -100 ? ldexpf(1.0f, m->fa->emin - 3) : ldexpf(1.0f, m->fa->emin - 1);
        snprintf(what, sizeof what, "%s %s subnormal input", pm[pi].model, pm[pi].fmt);
        bad = f32_vs_ref(&cfg, M, N, K, A, B, C, &lanes, &slow, what);
        ok(bad == 0, "%s %s: a subnormal input: %d lanes, == reference", pm[pi].model, pm[pi].fmt, lanes);
    }

    /* the statistics' amax of A and B: fpemu_scaling_amax_f32's (the first
     * NaN's bits where there is one), both operands quantised side by side;
     * without scaling and with finite data it is the casts' own count */
    {
        enum { QM = 40, QN = 50, QK = 2000 };
        float *a = malloc(sizeof(float) * QM * QK), *b = malloc(sizeof(float) * QK * QN), *d = malloc(sizeof(float) * QM * QN);
        int bad = 0;
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < QM * QK; i++) a[i] = nrand() * 5;
            for (int i = 0; i < QK * QN; i++) b[i] = -fabsf(nrand());
            if (t == 1 || t == 2) {
                uint32_t n1 = 0x7FC00123u, n2 = 0xFFC00456u;
                memcpy(&a[QM * QK / 2], &n1, 4), memcpy(&a[QM * QK - 3], &n2, 4); /* the first has the smaller payload */
                b[7] = -INFINITY;
            }
            if (t == 2) memcpy(&b[QK * QN - 1], &(uint32_t){0x7F800001u}, 4);
            fpemu_gemm_config cfg;
            fpemu_gemm_stats st;
            fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
            fpemu_gemm_config_set_scaling(&cfg, t % 2 ? "none" : "tensor", NULL, 0);
            cfg.nthreads = 2, cfg.sat = 1;
            fpemu_gemm_f32(&cfg, QM, QN, QK, a, QK, 0, b, QN, 0, NULL, QN, d, QN, &st);
            float wa = fpemu_scaling_amax_f32(a, (size_t)QM * QK, 1), wb = fpemu_scaling_amax_f32(b, (size_t)QK * QN, 1);
            bad += memcmp(&st.amax_a, &wa, 4) != 0 || memcmp(&st.amax_b, &wb, 4) != 0;
        }
        ok(bad == 0, "fpemu_gemm_stats amax of A and B: fpemu_scaling_amax_f32's bits (finite, inf, first of two NaNs; with and without scaling)");
        free(a), free(b), free(d);
    }

    /* c near f32's largest value through the f32 kernel: with f16 and e4m3
     * inputs no block result can reach inf (its blocks keep no running max
     * of c's exponent), with bf16 products of 2^118 it does (they keep it):
     * the scalar model's bits either way */
    {
        enum { BM = 8, BN = 32, BK = 48 };
        float *a = malloc(sizeof(float) * BM * BK), *b = malloc(sizeof(float) * BK * BN), *c = malloc(sizeof(float) * BM * BN);
        float *d = malloc(sizeof(float) * BM * BN), *r = malloc(sizeof(float) * BM * BN);
        static const char *bm[][2] = {{"a100", "f16"}, {"v100", "f16"}, {"h100", "e4m3"}, {"a100", "bf16"}};
        int bad = 0, infs = 0, nl = 16;
        for (int pi = 0; pi < 4; pi++) {
            const int bf = pi == 3;
            for (int i = 0; i < BM * BK; i++) a[i] = bf ? ldexpf(i % 3 ? 1.0f : -1.0f, 59) : nrand() * 100;
            for (int i = 0; i < BK * BN; i++) b[i] = bf ? ldexpf(1.0f, 59) : nrand() * 100;
            for (int i = 0; i < BM * BN; i++) c[i] = i % 4 == 0 ? FLT_MAX : i % 4 == 1 ? -FLT_MAX : i % 4 == 2 ? ldexpf(1.9f, 127) : nrand();
            fpemu_gemm_config cfg;
            fpemu_gemm_stats st;
            fpemu_gemm_config_init(&cfg, bm[pi][0], bm[pi][1], bm[pi][1], NULL, 0);
            cfg.sat = 1, cfg.nthreads = 1;
            fpemu_gemm_f32(&cfg, BM, BN, BK, a, BK, 0, b, BN, 0, c, BN, d, BN, &st);
            fpemu_gemm_f32_reference(&cfg, BM, BN, BK, a, BK, 0, b, BN, 0, c, BN, r, BN, NULL);
            bad += cmp_bits(d, r, BM * BN, bm[pi][0]);
            for (int i = 0; bf && i < BM * BN; i++) infs += isinf(r[i]);
            nl = st.lanes < nl ? st.lanes : nl;
        }
        ok(bad == 0 && infs > 0 && nl == 16, "c near f32's largest value through the f32 kernel (%d inf outputs with bf16): the scalar model's bits", infs);
        free(a), free(b), free(c), free(d), free(r);
    }

    /* the epilogue's dequantisation after the kernels (16 outputs at a
     * time) and after the scalar model: a given scale so small (2^-149)
     * that its decode factor is inf, so that outputs are 0 x inf (the
     * default NaN) or inf, and ordinary ones; NaN bits included */
    {
        enum { EM = 9, EN = 35, EK = 40 };
        float *a = malloc(sizeof(float) * EM * EK), *b = malloc(sizeof(float) * EK * EN), *d = malloc(sizeof(float) * EM * EN),
              *r = malloc(sizeof(float) * EM * EN);
        for (int i = 0; i < EM * EK; i++) a[i] = nrand() * 1e3f;
        for (int i = 0; i < EK * EN; i++) b[i] = nrand();
        int bad = 0, nans = 0;
        for (int t = 0; t < 2; t++) {
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
            fpemu_gemm_config_set_scaling(&cfg, "given", NULL, 0);
            cfg.scaling.scale_a = t ? 0.25f : 0x1p-149f, cfg.scaling.scale_b = 3.0f;
            fpemu_gemm_f32(&cfg, EM, EN, EK, a, EK, 0, b, EN, 0, NULL, EN, d, EN, NULL);
            fpemu_gemm_f32_reference(&cfg, EM, EN, EK, a, EK, 0, b, EN, 0, NULL, EN, r, EN, NULL);
            bad += cmp_bits(d, r, EM * EN, t ? "given 0.25" : "given 2^-149");
            for (int i = 0; t == 0 && i < EM * EN; i++) nans += isnan(d[i]);
        }
        ok(bad == 0 && nans > 0, "the epilogue's dequantisation: the scalar model's bits (%d NaN outputs of 0 x inf)", nans);
        free(a), free(b), free(d), free(r);
    }

    /* K over several of the kernels' K tiles (256): the partial sums chained
     * through memory, on the f32 kernel (split blocks and whole ones) and
     * the group kernel */
    {
        enum { TM = 17, TN = 45, TK = 700 };
        float *a = malloc(sizeof(float) * TM * TK), *b = malloc(sizeof(float) * TK * TN), *c = malloc(sizeof(float) * TM * TN);
        for (int i = 0; i < TM * TK; i++) a[i] = nrand();
        for (int i = 0; i < TK * TN; i++) b[i] = nrand() * 0.1f;
        for (int i = 0; i < TM * TN; i++) c[i] = nrand();
        static const char *tc[][3] = {{"h100", "f16", "none"}, {"a100", "bf16", "none"}, {"h100", "e4m3", "tensor"},
                                      {"b200", "e4m3", "mx-rceil"}, {"b200", "e2m1", "nvfp4"}};
        for (int t = 0; t < 5; t++) {
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, tc[t][0], tc[t][1], tc[t][1], NULL, 0);
            fpemu_gemm_config_set_scaling(&cfg, tc[t][2], NULL, 0);
            snprintf(what, sizeof what, "%s %s %s K = %d", tc[t][0], tc[t][1], tc[t][2], TK);
            int bad = f32_vs_ref(&cfg, TM, TN, TK, a, b, c, &lanes, &slow, what);
            ok(bad == 0 && lanes == 16, "%s %s %s, K = %d (three K tiles), with C: %d lanes, == reference on every level", tc[t][0],
               tc[t][1], tc[t][2], TK, lanes);
        }
        free(a), free(b), free(c);
    }

    /* block sums that leave int32: c just below 2^(e+1) and every product
     * near 4 * 2^e, all of one sign (h100 f16: 16 products at nfrac 25; b200
     * e4m3: 32): the halves fit, the total does not; flagged, the scalar
     * model's result */
    static const struct { const char *model, *fmt; float big, c; } ov[] = {
        {"h100", "f16", 1.9990234375f, 1.99f}, {"b200", "e4m3", 1.875f, 1.99f}};
    for (size_t oi = 0; oi < 2; oi++) {
        fpemu_gemm_config cfg;
        fpemu_gemm_config_init(&cfg, ov[oi].model, ov[oi].fmt, ov[oi].fmt, NULL, 0);
        enum { OM = 9, ON = 33, OK = 64 };
        float *a = malloc(sizeof(float) * OM * OK), *b = malloc(sizeof(float) * OK * ON), *c = malloc(sizeof(float) * OM * ON);
        for (int i = 0; i < OM * OK; i++) a[i] = (i / OK) % 3 == 2 ? (i % 2 ? ov[oi].big : -ov[oi].big) : ((i / OK) % 3 ? -ov[oi].big : ov[oi].big);
        for (int i = 0; i < OK * ON; i++) b[i] = i % ON == 5 ? 1.0f : ov[oi].big;
        for (int i = 0; i < OM * ON; i++) c[i] = (i / ON) % 3 == 1 ? -ov[oi].c : ov[oi].c;
        snprintf(what, sizeof what, "%s %s int32 overflow", ov[oi].model, ov[oi].fmt);
        int bad = f32_vs_ref(&cfg, OM, ON, OK, a, b, c, &lanes, &slow, what);
        ok(bad == 0 && lanes == 16 && slow > 0, "%s %s: block sums past int32 (both signs): %d lanes, %llu outputs flagged to the scalar model, == reference",
           ov[oi].model, ov[oi].fmt, lanes, slow);
        free(a), free(b), free(c);
    }

    /* block scales (fpemu_gemm_codes): e8m0 powers of two joined into the
     * f32 kernel's values and exponents; a scale that takes the products out
     * of its range, and a non-power-of-two scale format, give the f64
     * kernel; a NaN scale, the scalar model for its row */
    {
        enum { SM = 11, SN = 35, SK = 96, NB = SK / 32 };
        const fpemu_format *e8m0 = fpemu_format_get("e8m0", NULL, 0), *e4m3 = fpemu_format_get("e4m3", NULL, 0);
        fpemu_gemm_config cfg;
        fpemu_gemm_config_init(&cfg, "b200", "e4m3", "e4m3", NULL, 0);
        const fpemu_mma_model *m = &cfg.model;
        uint64_t *a = malloc(sizeof(uint64_t) * SM * SK), *b = malloc(sizeof(uint64_t) * SK * SN), col[SK];
        uint64_t sa[SM * NB], sb[NB * SN];
        float c[SM * SN], d[SM * SN], r[SM * SN];
        for (int i = 0; i < SM * SK; i++) a[i] = fpemu_random64(rs, (uint64_t)i) & 0xFF;
        for (int i = 0; i < SK * SN; i++) b[i] = fpemu_random64(rs + 1, (uint64_t)i) & 0xFF;
        for (int i = 0; i < SM * SK; i++) a[i] -= (a[i] & 0x7F) == 0x7F; /* e4m3's NaN: one row only */
        for (int i = 0; i < SK * SN; i++) b[i] -= (b[i] & 0x7F) == 0x7F;
        a[4 * SK + 7] = 0x7F;
        for (int i = 0; i < SM * SN; i++) c[i] = i % 4 ? nrand() : 0.0f;
        static const char *cs[] = {"e8m0 scales 2^-10..2^9", "an e8m0 scale of 2^-127", "a NaN e8m0 scale", "e4m3 scales"};
        for (int t = 0; t < 4; t++) {
            const fpemu_format *sf = t == 3 ? e4m3 : e8m0;
            for (int i = 0; i < SM * NB; i++) sa[i] = t == 3 ? 0x30 + (uint64_t)(i % 9) : 117 + (uint64_t)(i % 20);
            for (int i = 0; i < NB * SN; i++) sb[i] = t == 3 ? 0x31 + (uint64_t)(i % 5) : 120 + (uint64_t)(i % 7);
            if (t == 1) sa[2 * NB + 1] = 0;
            if (t == 2) sa[3 * NB] = 0xFF;
            fpemu_gemm_stats st;
            cfg.nthreads = 2;
            int rc = fpemu_gemm_codes(&cfg, SM, SN, SK, a, b, c, sf, sa, sb, 32, d, &st);
            uint64_t sbc[NB];
            for (int i = 0; i < SM; i++)
                for (int j = 0; j < SN; j++) {
                    for (int k = 0; k < SK; k++) col[k] = b[(size_t)k * SN + j];
                    for (int q = 0; q < NB; q++) sbc[q] = sb[q * SN + j];
                    uint32_t cb;
                    memcpy(&cb, &c[i * SN + j], 4);
                    uint64_t dd = fpemu_mma_dot_scaled(m, a + (size_t)i * SK, col, SK, cb, sf, sa + i * NB, sbc, 32, NULL);
                    r[i * SN + j] = (float)fpemu_to_double(m->fd, dd);
                }
            int bad = rc != 0 || cmp(d, r, SM * SN, cs[t]);
            for (int isa = 1; isa <= 2; isa++) {
                cfg.isa = isa;
                bad += fpemu_gemm_codes(&cfg, SM, SN, SK, a, b, c, sf, sa, sb, 32, d, NULL) != 0 || cmp(d, r, SM * SN, cs[t]);
            }
            cfg.isa = 0;
            int want = t == 1 || t == 3 ? 8 : 16;
            ok(bad == 0 && st.lanes == want, "fpemu_gemm_codes b200 e4m3, %s: %d lanes (want %d), %llu scalar outputs, == the scalar model on every level",
               cs[t], st.lanes, want, (unsigned long long)st.slow_outputs);
        }
        free(a), free(b);
    }

    /* the group kernel (b200 e2m1 with e4m3 block scales: NVFP4's group
     * rule) against the scalar model, through fpemu_gemm_codes (c in the
     * MMA): scales of every class (zero, subnormal, negative codes, the
     * largest, NaN), zero groups beside small negative ones (a zero sum is
     * +0), c tiny, subnormal, -0, huge, NaN; K not a multiple of the group
     * or the block; promotion */
    {
        enum { GM = 11, GN = 37, GK = 150, GB = (GK + 15) / 16 };
        const fpemu_format *e4m3 = fpemu_format_get("e4m3", NULL, 0);
        uint64_t *a = malloc(sizeof(uint64_t) * GM * GK), *b = malloc(sizeof(uint64_t) * GK * GN);
        uint64_t sa[GM * GB], sb[GB * GN];
        float c[GM * GN], d[GM * GN], r[GM * GN];
        static const uint64_t sc_set[] = {0x00, 0x01, 0x05, 0x08, 0x30, 0x38, 0x3F, 0x48, 0x7E, 0xB8, 0x80, 0x56};
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < GM * GK; i++) a[i] = fpemu_random64(rs + 10 + t, (uint64_t)i) & 0xF;
            for (int i = 0; i < GK * GN; i++) b[i] = fpemu_random64(rs + 20 + t, (uint64_t)i) & 0xF;
            for (int i = 0; i < GM * GB; i++) sa[i] = t == 0 ? 0x38 + (uint64_t)(i % 9) : sc_set[fpemu_random64(rs + 30 + t, (uint64_t)i) % 12];
            for (int i = 0; i < GB * GN; i++) sb[i] = t == 0 ? 0x30 + (uint64_t)(i % 7) : sc_set[fpemu_random64(rs + 40 + t, (uint64_t)i) % 12];
            for (int i = 0; i < GM * GN; i++) c[i] = t < 2 ? (i % 3 ? nrand() : 0.0f) : ldexpf(nrand(), (int)(urand() * 60) - 40);
            if (t == 2) {
                /* a block whose terms are all -0 or cut to -0 (negative group sums
                 * times a zero scale, a tiny negative c): the model's sum is +0 */
                for (int k = 0; k < GK; k++) a[3 * GK + k] = 0x9, b[(size_t)k * GN + 4] = 0x1; /* -0.5, 0.5 */
                for (int g = 0; g < GB; g++) sa[3 * GB + g] = g % 2 ? 0x80 : 0x00, sb[g * GN + 4] = 0x7E;
                c[3 * GN + 4] = -1e-30f; /* (and every block after it the same, with c = +0) */
                /* zero groups with the largest scales beside the least nonzero term */
                for (int k = 0; k < 64; k++) a[5 * GK + k] = k >= 16 && k < 32 ? (k == 16 ? 0x9 : 0) : 0;
                sa[5 * GB] = 0x7E, sa[5 * GB + 1] = 0x01, sb[4] = 0x7E, sb[GN + 4] = 0x01;
                c[5 * GN + 4] = 0.0f;
            }
            if (t == 3) {
                c[0] = -0.0f, c[1] = NAN, c[2] = 1e-40f, c[3] = 3.3e38f, c[4] = -3.3e38f, c[5] = 1e-30f, c[6] = INFINITY;
                sa[2 * GB + 1] = 0x7F; /* NaN scale: row 2 on the scalar model */
                sb[3 * GN + 7] = 0xFF;
            }
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, "b200", "e2m1", "e2m1", NULL, 0);
            for (int promo = 0; promo < 2; promo++) {
                cfg.promote = promo ? 32 : 0;
                int bad = codes_every_level(&cfg, GM, GN, GK, a, b, c, e4m3, sa, sb, 16, d, r, "group kernel", &lanes, &slow);
                if (t == 2 && !promo) bad += memcmp(&r[3 * GN + 4], &(float){0.0f}, 4) != 0; /* the case is the one meant */
                static const char *gw[] = {"normal scales", "scales of every class", "zero groups beside negative ones",
                                           "special c and NaN scales"};
                ok(bad == 0 && lanes == 16, "b200 e2m1 with e4m3 scales (group rule), %s%s: %d lanes, %llu scalar outputs, == the scalar model on every level",
                   gw[t], promo ? ", promote 32" : "", lanes, slow);
            }
        }
        /* the rule's parameters as data: groups of 8 (scale blocks of 8),
         * blocks of 32, 30 fraction bits; and groups of 16 in scale blocks of
         * 32 (two groups share a scale) */
        static const struct { int group, gblock, gnfrac, sblock, lanes; } gp[] = {{8, 32, 30, 8, 16}, {16, 64, 35, 32, 16}};
        for (int t = 0; t < 2; t++) {
            fpemu_gemm_config cfg;
            char err[256], v[3][16];
            fpemu_gemm_config_init(&cfg, "b200", "e2m1", "e2m1", NULL, 0);
            snprintf(v[0], 16, "%d", gp[t].group), snprintf(v[1], 16, "%d", gp[t].gblock), snprintf(v[2], 16, "%d", gp[t].gnfrac);
            if (fpemu_mma_model_set(&cfg.model, "group", v[0], err, sizeof err) ||
                fpemu_mma_model_set(&cfg.model, "group_block", v[1], err, sizeof err) ||
                fpemu_mma_model_set(&cfg.model, "group_nfrac", v[2], err, sizeof err))
                bail("%s", err);
            int nb = (GK + gp[t].sblock - 1) / gp[t].sblock;
            uint64_t *s1 = malloc(sizeof(uint64_t) * GM * nb), *s2 = malloc(sizeof(uint64_t) * nb * GN);
            for (int i = 0; i < GM * nb; i++) s1[i] = sc_set[fpemu_random64(rs + 50, (uint64_t)i) % 12] % 0x7F;
            for (int i = 0; i < nb * GN; i++) s2[i] = sc_set[fpemu_random64(rs + 60, (uint64_t)i) % 12] % 0x7F;
            int bad = codes_every_level(&cfg, GM, GN, GK, a, b, c, e4m3, s1, s2, gp[t].sblock, d, r, "group parameters", &lanes, &slow);
            ok(bad == 0 && lanes == gp[t].lanes, "group = %d, group_block = %d, group_nfrac = %d, scale blocks of %d: %d lanes (want %d), == the scalar model on every level",
               gp[t].group, gp[t].gblock, gp[t].gnfrac, gp[t].sblock, lanes, gp[t].lanes);
            free(s1), free(s2);
        }
        /* MX: e8m0 scales (blocks of 32, two groups each) on the group rule,
         * the kernel's wide mode: scales near 1, scales of every exponent
         * from 2^-127 to 2^127, and extreme scales with NaN scales and
         * special c's */
        const fpemu_format *e8m0 = fpemu_format_get("e8m0", NULL, 0);
        enum { WB = (GK + 31) / 32 };
        uint64_t wa[GM * WB], wb[WB * GN];
        static const uint64_t s8[] = {0x00, 0x01, 0x02, 0x40, 0x70, 0x7F, 0x80, 0x85, 0xC0, 0xFD, 0xFE, 0x7E};
        for (int t = 0; t < 3; t++) {
            for (int i = 0; i < GM * GK; i++) a[i] = fpemu_random64(rs + 70 + t, (uint64_t)i) & 0xF;
            for (int i = 0; i < GK * GN; i++) b[i] = fpemu_random64(rs + 80 + t, (uint64_t)i) & 0xF;
            for (int i = 0; i < GM * WB; i++) wa[i] = t == 0 ? 0x7C + (uint64_t)(i % 7) : s8[fpemu_random64(rs + 90 + t, (uint64_t)i) % 12];
            for (int i = 0; i < WB * GN; i++) wb[i] = t == 0 ? 0x7B + (uint64_t)(i % 5) : s8[fpemu_random64(rs + 100 + t, (uint64_t)i) % 12];
            for (int i = 0; i < GM * GN; i++) c[i] = t < 2 ? (i % 3 ? nrand() : 0.0f) : ldexpf(nrand(), (int)(urand() * 250) - 125);
            if (t == 2) {
                c[0] = -0.0f, c[1] = NAN, c[2] = 1e-40f, c[3] = 3.3e38f, c[4] = -3.3e38f, c[5] = 1e-30f, c[6] = INFINITY;
                for (int g = 0; g < WB; g++) wa[4 * WB + g] = g % 2 ? 0xFE : 0x00, wb[g * GN + 9] = g % 2 ? 0x00 : 0xFE;
                wa[2 * WB + 1] = 0xFF; /* NaN scales: row 2 and column 7 on the scalar model */
                wb[3 * GN + 7] = 0xFF;
            }
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, "b200", "e2m1", "e2m1", NULL, 0);
            for (int promo = 0; promo < 2; promo++) {
                cfg.promote = promo ? 64 : 0;
                int bad = codes_every_level(&cfg, GM, GN, GK, a, b, c, e8m0, wa, wb, 32, d, r, "group kernel, e8m0", &lanes, &slow);
                static const char *ww[] = {"scales near 1", "scales of every exponent", "extreme and NaN scales, special c"};
                ok(bad == 0 && lanes == 16, "b200 e2m1 with e8m0 scales (MX, group rule), %s%s: %d lanes, %llu scalar outputs, == the scalar model on every level",
                   ww[t], promo ? ", promote 64" : "", lanes, slow);
            }
        }
        free(a), free(b);
    }
    free(A), free(B), free(C);
}

/* The group kernel's integer form (AVX-512 VNNI: gemm_kernel.c _grpv)
 * against the scalar model, on every level: NVFP4 (e4m3 scales, blocks of
 * 16) and MX (e8m0, blocks of 32) e2m1 on the b200, K = 256 and 200 (a
 * last block of 8 k: half a group), promotion by 64 (chunks of whole
 * blocks) and 32 (half blocks: the f32 form). Case 0: scales within a few
 * binades and c near the terms, blocks the integer form sums without cuts;
 * case 1: the same with outputs that must go to the f32 form, c far below
 * the terms (its low bits cut), c far above them (the terms' bits cut), a
 * subnormal c, and a row whose block holds the format's least and greatest
 * scales (more than nfrac binades apart); with e8m0 also results below
 * 2^-126 and above 2^128 (flagged: the scalar model); case 2: scales of every class;
 * case 3 (e8m0): blocks whose terms reach 2^17 times their group sums
 * (the integer form's int32 bound: summed) and 2^18 (handed over);
 * case 4 (e8m0): scales near 2^-70, whose blocks end in float with
 * results below 2^-126 (exact there: subnormal floats); case 5: c at the
 * bounds of the fast test (nothing cut), and a binade past them in one
 * lane of a register block (the block to the f32 form). And that both forms
 * ran where they should, and the integer form's two block ends (float
 * where the sum and the scales allow, else double): the register blocks
 * each summed (emu__gemm_gv_blocks). */
/* The integer form's packing from the codes (gemm.c gv_side): NVFP4 and
 * MX GEMMs through fpemu_gemm_f32, A and B either way round (B as it lies
 * takes the byte permutations, B transposed the dword ones), on shapes
 * with partial panels (M % 8, N % 32), K's last word and group partial,
 * and whole ones, against the scalar model on 1 and 2 threads; rows 3 and
 * 5 scaled far apart from the rest (blocks the fast test hands to the f32
 * form, whose group sums come from the same bytes). */
static void group_packing(void) {
    if (!emu__gemm_vnni() || emu__gemm_kernel_best() < 4) {
        ok(1, "# SKIP no AVX-512 VNNI: no integer form");
        return;
    }
    static const int shape[][3] = {{37, 70, 203}, {8, 32, 64}, {19, 33, 130}, {16, 64, 256}};
    static const char *const rec[] = {"nvfp4", "mx-rceil"};
    enum { MX = 37, NX = 70, KX = 256 };
    float *A = malloc(sizeof(float) * MX * KX), *B = malloc(sizeof(float) * KX * NX), *C = malloc(sizeof(float) * MX * NX);
    float *D = malloc(sizeof(float) * MX * NX), *R = malloc(sizeof(float) * MX * NX);
    const uint64_t f0 = emu__gemm_gv_blocks[0], s0 = emu__gemm_gv_blocks[1];
    for (int sh = 0; sh < 4; sh++)
        for (int x = 0; x < 2; x++)
            for (int tr = 0; tr < 4; tr++) {
                const int M = shape[sh][0], N = shape[sh][1], K = shape[sh][2], ta = tr & 1, tb = tr >> 1;
                fpemu_gemm_config cfg;
                char err[256], what[160];
                fpemu_gemm_config_init(&cfg, "b200", "e2m1", "e2m1", NULL, 0);
                fpemu_gemm_config_set_scaling(&cfg, rec[x], err, sizeof err);
                rs = 4242 + (uint64_t)(sh * 8 + x * 4 + tr);
                for (int i = 0; i < M; i++)
                    for (int k = 0; k < K; k++) {
                        const float v = nrand() * (i == 3 ? 1e-12f : i == 5 ? 1e9f : 1.0f);
                        A[ta ? (size_t)k * M + i : (size_t)i * K + k] = v;
                    }
                for (int k = 0; k < K; k++)
                    for (int j = 0; j < N; j++) B[tb ? (size_t)j * K + k : (size_t)k * N + j] = nrand() * 0.05f;
                for (int i = 0; i < M * N; i++) C[i] = i % 3 ? nrand() : 0.0f;
                const int lda = ta ? M : K, ldb = tb ? K : N;
                fpemu_gemm_f32_reference(&cfg, M, N, K, A, lda, ta, B, ldb, tb, C, N, R, N, NULL);
                int bad = 0, kern = 1;
                for (int t = 1; t <= 2; t++) {
                    fpemu_gemm_stats st;
                    cfg.isa = 0, cfg.nthreads = t;
                    snprintf(what, sizeof what, "%s %dx%dx%d%s%s, %d threads", rec[x], M, N, K, ta ? " A^T" : "", tb ? " B^T" : "", t);
                    bad += fpemu_gemm_f32(&cfg, M, N, K, A, lda, ta, B, ldb, tb, C, N, D, N, &st) != 0;
                    bad += cmp(D, R, M * N, what);
                    kern &= st.kernel == 4;
                }
                ok(bad == 0 && kern, "%s %dx%dx%d%s%s: the integer form == scalar model on 1 and 2 threads", rec[x], M, N, K,
                   ta ? " A^T" : "", tb ? " B^T" : "");
            }
    const uint64_t nf = emu__gemm_gv_blocks[0] - f0, ns = emu__gemm_gv_blocks[1] - s0;
    ok(nf > 0 && ns > 0, "group packing: blocks summed by the integer form (%llu) and handed to the f32 form (%llu)",
       (unsigned long long)nf, (unsigned long long)ns);
    free(A), free(B), free(C), free(D), free(R);
}

static void group_integer_form(void) {
    if (!emu__gemm_vnni() || emu__gemm_kernel_best() < 4) {
        ok(1, "# SKIP no AVX-512 VNNI: the group kernel's f32 form takes every block");
        return;
    }
    enum { M = 21, N = 50, KMAX = 256 };
    uint64_t *a = malloc(sizeof(uint64_t) * M * KMAX), *b = malloc(sizeof(uint64_t) * KMAX * N);
    uint64_t sa[M * 16], sb[16 * N];
    float c[M * N], d[M * N], r[M * N];
    static const uint64_t e4[] = {0x00, 0x01, 0x05, 0x08, 0x30, 0x38, 0x3F, 0x48, 0x7E, 0xB8, 0x80, 0x56};
    static const uint64_t e8[] = {0x00, 0x01, 0x02, 0x40, 0x70, 0x7F, 0x80, 0x85, 0xC0, 0xFD, 0xFE, 0x7E};
    for (int sf = 0; sf < 2; sf++) {
        const fpemu_format *fmt = fpemu_format_get(sf ? "e8m0" : "e4m3", NULL, 0);
        const int sblock = sf ? 32 : 16;
        for (int ki = 0; ki < 2; ki++) {
            const int K = ki ? 200 : 256, nsb = (K + sblock - 1) / sblock;
            for (int cs = 0; cs < 6; cs++) {
                if (!sf && (cs == 3 || cs == 4)) continue;
                fpemu_gemm_config cfg;
                fpemu_gemm_config_init(&cfg, "b200", "e2m1", "e2m1", NULL, 0);
                const unsigned ss = 900 + 10 * (unsigned)sf + 3 * (unsigned)ki + (unsigned)cs;
                for (int i = 0; i < M * K; i++) a[i] = fpemu_random64(ss, (uint64_t)i) & 0xF;
                for (int i = 0; i < K * N; i++) b[i] = fpemu_random64(ss + 1000, (uint64_t)i) & 0xF;
                for (int i = 0; i < M * nsb; i++)
                    sa[i] = cs == 2 ? (sf ? e8 : e4)[fpemu_random64(ss + 2000, (uint64_t)i) % 12] : (sf ? 0x7C : 0x30) + (uint64_t)(i % 5);
                for (int i = 0; i < nsb * N; i++)
                    sb[i] = cs == 2 ? (sf ? e8 : e4)[fpemu_random64(ss + 3000, (uint64_t)i) % 12] : (sf ? 0x7D : 0x38) + (uint64_t)(i % 3);
                for (int i = 0; i < M * N; i++) c[i] = i % 5 ? nrand() * 8 : 0.0f;
                if (cs == 1) {
                    for (int j = 0; j < N; j++) {
                        c[5 * N + j] = nrand() * 1e-9f;           /* below the terms: c's low bits cut */
                        c[7 * N + j] = nrand() * 1e25f;           /* far above: every term cut */
                        c[9 * N + j] = (j % 2 ? -1 : 1) * 1e-40f; /* subnormal */
                    }
                    sa[11 * nsb + 2] = sf ? 0x01 : 0x01, sa[11 * nsb + 3] = sf ? 0xFD : 0x7E; /* least and greatest in one block */
                    if (sf) {
                        /* results below 2^-126 in every block (row 17: scales 2^-127; with columns 21-24's 2^-26 to
                         * 2^-23, below 2^-149 too) and above 2^128 in the last (row 19, zeros before it, and column
                         * 20: scales 2^113), with c = 0 in rows 16-20: blocks the integer form sums, whose lanes it
                         * must flag itself */
                        sa[11 * nsb + 0] = 0x01, sa[11 * nsb + 1] = 0xFD;
                        for (int g = 0; g < nsb; g++) {
                            sa[17 * nsb + g] = 0x00, sa[19 * nsb + g] = 0xF0, sb[g * N + 20] = 0xF0;
                            for (int j = 21; j < 25; j++) sb[g * N + j] = (uint64_t)(127 - 26 + (j - 21));
                        }
                        for (int k = 0; k < (K - 1) / 64 * 64; k++) a[19 * K + k] = 0;
                        for (int i = 16 * N; i < M * N; i++) c[i] = 0.0f;
                    }
                }
                if (cs == 5) {
                    /* every scale 1: per block the least exponent of the terms' unit is LA + LB =
                     * -2 smb - 2 (A's bytes are 2 a and its sums 4 G), the largest scale exponent 0;
                     * c stands in lanes of every register block at the fast test's bounds: its
                     * exponent at most LA + LB + nfrac (the terms not cut) and at least 23 - nfrac
                     * (c's bits not cut). Rows 0-7: one lane a binade above (every k block cut);
                     * rows 8-15: one a binade below; rows 16-20: both bounds, no cut */
                    const int t1 = -2 * fmt->mbits - 2 + cfg.model.group_nfrac, t2 = 23 - cfg.model.group_nfrac;
                    for (int i = 0; i < M * nsb; i++) sa[i] = sf ? 0x7F : 0x38;
                    for (int i = 0; i < nsb * N; i++) sb[i] = sf ? 0x7F : 0x38;
                    for (int i = 0; i < M; i++)
                        for (int j = 0; j < N; j++) {
                            const float m = (1.0f + (float)(fpemu_random64(ss + 4000, (uint64_t)(i * N + j)) >> 41) * 0x1p-23f) *
                                            (j % 2 ? -1.0f : 1.0f);
                            c[i * N + j] = ldexpf(m, j % 16 == 3 ? (i < 8 ? t1 + 1 : i < 16 ? t2 - 1 : t1) : j % 16 == 5 ? t2 : t1 - j % 16 - 1);
                        }
                }
                if (cs == 4) {
                    /* e8m0: scales near 2^-70 (terms' units near 2^-142), c = 0: results below 2^-126,
                     * which a block's end in float must flag */
                    for (int i = 0; i < M * nsb; i++) sa[i] = (uint64_t)(127 - 70 + i % 3);
                    for (int i = 0; i < nsb * N; i++) sb[i] = (uint64_t)(127 - 72 + i % 2);
                    for (int i = 0; i < M * N; i++) c[i] = 0.0f;
                }
                if (cs == 3) {
                    /* e8m0: per block scales 2^8 and 1 (rows 8-15: 2^9 and 1) in A, 2^7 and 1 in B: terms
                     * of at most 2^17 (2^18) times the group sums, which the integer form sums (hands over) */
                    for (int i = 0; i < M * nsb; i++) sa[i] = (uint64_t)(127 + (i % nsb % 2 ? 0 : i / nsb / 8 == 1 ? 9 : 8));
                    for (int i = 0; i < nsb * N; i++) sb[i] = (uint64_t)(127 + (i / N % 2 ? 0 : 7));
                    for (int i = 0; i < M * N; i++) c[i] = 0.0f;
                }
                for (int promo = 0; promo < 3; promo++) {
                    cfg.promote = promo == 1 ? 64 : promo == 2 ? 32 : 0;
                    const uint64_t f0 = emu__gemm_gv_blocks[0], s0 = emu__gemm_gv_blocks[1], x0 = emu__gemm_gv_blocks[2];
                    int lanes;
                    unsigned long long slow;
                    int bad = codes_every_level(&cfg, M, N, K, a, b, c, fmt, sa, sb, sblock, d, r, "group integer form", &lanes, &slow);
                    const uint64_t nf = emu__gemm_gv_blocks[0] - f0, ns = emu__gemm_gv_blocks[1] - s0, nx = emu__gemm_gv_blocks[2] - x0;
                    /* where each form must have run: the integer form's fast blocks in cases 0 and 1
                     * (not with half-block chunks), its hand-overs in case 1 */
                    /* and the ends in float in cases 0 and 4, in double in case 3 and e8m0's case 1 */
                    const int want = promo == 2 ? nf == 0 && ns == 0 && nx == 0
                                                : (cs == 2 || nf > 0) && (!(cs == 1 || cs == 3) || ns > 0) && (cs % 4 != 0 || nx > 0) &&
                                                      (!(cs == 3 || (sf && cs == 1)) || nf > nx) && (cs != 5 || promo || (ns > 0 && nf > 0));
                    ok(bad == 0 && lanes == 16 && want,
                       "b200 e2m1, %s scales, K = %d, %s%s: == the scalar model on every level; register blocks without cuts %llu "
                       "(ended in float %llu), on the f32 form %llu",
                       sf ? "e8m0" : "e4m3", K,
                       cs == 0   ? "scales near 1"
                       : cs == 1 ? "c cut, terms cut, scales far apart"
                       : cs == 2 ? "scales of every class"
                       : cs == 3 ? "terms up to 2^17 and 2^18 G"
                       : cs == 4 ? "scales near 2^-70, results below 2^-126"
                                 : "c at the fast test's bounds and a binade past them",
                       promo == 1 ? ", promote 64" : promo == 2 ? ", promote 32" : "", (unsigned long long)nf, (unsigned long long)nx,
                       (unsigned long long)ns);
                }
            }
        }
    }
    free(a), free(b);
}

/* A caller's floating-point environment: with FTZ and DAZ set in MXCSR
 * (x86), fpemu_gemm_f32 (1 and 2 threads: the pool's workers too) and
 * fpemu_gemm_quantize_f32 give the same bits as under the default one, on
 * data whose products, scales or partial sums are subnormal (NVFP4 and MX
 * at 1e-20, where the quantisation and the group kernel's float block end
 * would flush them), and leave the caller's MXCSR as it was. */
static void fpenv_caller(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    enum { n = 72 };
    static const struct {
        const char *m, *f, *sc;
        float s;
    } cs[] = {{"b200", "e2m1", "nvfp4", 1e-20f}, {"b200", "e2m1", "mx-rceil", 1e-20f}, {"h100", "e4m3", NULL, 1e-3f},
              {"a100", "f16", NULL, 1e-4f},      {"h100", "bf16", NULL, 1e-20f},     {"mi250", "f16", NULL, 1e-4f}};
    float *A = malloc(sizeof(float) * n * n), *B = malloc(sizeof(float) * n * n), *C = malloc(sizeof(float) * n * n);
    float *D0 = malloc(sizeof(float) * n * n), *D1 = malloc(sizeof(float) * n * n);
    uint64_t *q0 = malloc(sizeof(uint64_t) * n * n), *q1 = malloc(sizeof(uint64_t) * n * n);
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        for (int i = 0; i < n * n; i++) A[i] = nrand() * cs[c].s, B[i] = nrand() * cs[c].s, C[i] = nrand() * cs[c].s * cs[c].s;
        fpemu_gemm_config cfg;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, cs[c].m, cs[c].f, cs[c].f, err, sizeof err) ||
            (cs[c].sc && fpemu_gemm_config_set_scaling(&cfg, cs[c].sc, err, sizeof err)))
            bail("%s", err);
        for (int t = 1; t <= 2; t++) {
            cfg.nthreads = t;
            fpemu_gemm_stats st;
            const unsigned csr = _mm_getcsr(), ftz = (csr & ~0x3Fu) | 0x8040u; /* FTZ, DAZ; flags clear */
            int rc = fpemu_gemm_f32(&cfg, n, n, n, A, n, 0, B, n, 0, C, n, D0, n, &st);
            _mm_setcsr(ftz);
            rc |= fpemu_gemm_f32(&cfg, n, n, n, A, n, 0, B, n, 0, C, n, D1, n, &st);
            const unsigned after = _mm_getcsr() & ~0x3Fu;
            _mm_setcsr(csr);
            int diff = 0;
            for (int i = 0; i < n * n; i++) diff += memcmp(&D0[i], &D1[i], 4) != 0;
            ok(rc == 0 && diff == 0 && after == (ftz & ~0x3Fu),
               "%s %s%s%s data x %g, %d thread%s, caller's FTZ and DAZ: the same bits (%d differ), its MXCSR kept", cs[c].m, cs[c].f,
               cs[c].sc ? " " : "", cs[c].sc ? cs[c].sc : "", (double)cs[c].s, t, t > 1 ? "s" : "", diff);
        }
        if (cs[c].sc) {
            float e0 = 0, e1 = 0;
            int rc = fpemu_gemm_quantize_f32(&cfg.scaling, cfg.afmt, n, n, A, 0, 1, NULL, q0, &e0, NULL, NULL, NULL, NULL, err, sizeof err);
            const unsigned csr = _mm_getcsr();
            _mm_setcsr((csr & ~0x3Fu) | 0x8040u);
            rc |= fpemu_gemm_quantize_f32(&cfg.scaling, cfg.afmt, n, n, A, 0, 1, NULL, q1, &e1, NULL, NULL, NULL, NULL, err, sizeof err);
            _mm_setcsr(csr);
            ok(rc == 0 && memcmp(q0, q1, sizeof(uint64_t) * n * n) == 0 && memcmp(&e0, &e1, 4) == 0,
               "fpemu_gemm_quantize_f32 %s at x %g, caller's FTZ and DAZ: the same codes and scale", cs[c].sc, (double)cs[c].s);
        }
    }
    free(A), free(B), free(C), free(D0), free(D1), free(q0), free(q1);
#else
    ok(1, "# SKIP the floating-point environment test is for x86's MXCSR");
#endif
}

/* The f32 kernel's count pass (AVX-512; gemm_kernel.c: one fma chain
 * rounded down per lane, plus a count of the negative products below the
 * quantum) for the fp8 presets whose blocks it takes: fp8 data of both
 * signs whose products fall on and off the quantum (values spread over
 * 2^-9 to 2^8, zeros of both signs, the formats' subnormals, a column
 * of each format's greatest power of two), K that ends in a partial block,
 * c in the MMA (scaling none): ordinary, large (up to 2^100, where every
 * negative product counts), and so large that the chain's start would
 * overflow (up to 3e38: those blocks take pass 2), against the scalar
 * model on every level. */
static void f32_count_pass(void) {
    enum { M = 19, N = 45, K = 77 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N), *C = malloc(sizeof(float) * M * N);
    char what[160];
    static const char *pm[][3] = {{"h100", "e4m3", "e4m3"}, {"h100", "e5m2", "e5m2"}, {"h100", "e4m3", "e5m2"}, {"ada", "e4m3", "e4m3"},
                                  {"ada", "e5m2", "e4m3"}};
    for (size_t pi = 0; pi < sizeof pm / sizeof pm[0]; pi++) {
        fpemu_gemm_config cfg;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, pm[pi][0], pm[pi][1], pm[pi][2], err, sizeof err)) bail("%s", err);
        /* the greatest lsb: a power of two near the format's top (2^15 in e5m2) */
        const float biga = ldexpf(1.0f, cfg.model.fa->emax), bigb = ldexpf(1.0f, cfg.model.fb->emax);
        for (int cs = 0; cs < 3; cs++) {
            for (int i = 0; i < M * K; i++) A[i] = i % 17 == 0 ? 0.0f : ldexpf(1.0f + (float)(i % 8) / 8, (int)(urand() * 17) - 9) * (urand() < 0.5 ? -1 : 1);
            for (int i = 0; i < K * N; i++) B[i] = i % 19 == 0 ? -0.0f : ldexpf(1.0f + (float)(i % 4) / 4, (int)(urand() * 17) - 9) * (urand() < 0.5 ? -1 : 1);
            A[3] = ldexpf(1.0f, -9), B[5] = -ldexpf(3.0f, -16); /* subnormals (e4m3's least; e5m2's) */
            for (int i = 0; i < M; i++) A[(size_t)i * K + 40] = i % 2 ? -biga : biga;
            for (int j = 0; j < N; j++) B[40 * N + j] = j % 3 ? bigb : -bigb;
            for (int i = 0; i < M * N; i++) C[i] = i % 7 == 0 ? 0.0f : nrand() * 4;
            /* cs 1: c up to 2^100, where a quantum exceeds every product (each
             * negative one counts); cs 2: c up to 2^127, whose blocks take pass 2 */
            for (int i = 0; cs && i < M * N; i += 3) C[i] = ldexpf(i % 2 ? -1.25f : 1.75f, cs == 1 ? 32 + i % 69 : 100 + i % 28);
            snprintf(what, sizeof what, "%s %s x %s count pass, case %d", pm[pi][0], pm[pi][1], pm[pi][2], cs);
            int lanes;
            unsigned long long slow;
            int bad = f32_vs_ref(&cfg, M, N, K, A, B, C, &lanes, &slow, what);
            ok(bad == 0 && lanes == 16, "%s %s x %s, fp8 data of both signs, K = %d%s: %d lanes, %llu scalar outputs, == reference on every level",
               pm[pi][0], pm[pi][1], pm[pi][2], K, cs == 1 ? ", c up to 2^100" : cs == 2 ? ", c up to 2^127" : "", lanes, slow);
        }
    }
    /* e5m2 at nfrac 10 (below e5m2's top exponent 15 - 2): a row of A that
     * is zero, so no product of its lanes takes part, against B's 2^15 and a
     * c just above thr (2^-115 (1 + 2^-10), its lsb 2^-125): the model cuts c
     * at 10 bits below c's own exponent and keeps it. The count pass's
     * exponent bytes would give the lane an emax of 2^-113 from the zeros
     * (-128 + 15) and cut c's lsb: gemm.c keeps such formats off it. */
    {
        fpemu_gemm_config cfg;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, "ada", "e5m2", "e5m2", err, sizeof err) ||
            fpemu_mma_model_set(&cfg.model, "nfrac", "10", err, sizeof err))
            bail("%s", err);
        for (int i = 0; i < M * K; i++) A[i] = i < K ? 0.0f : ldexpf(1.0f + (float)(i % 4) / 4, (int)(urand() * 9) - 4);
        for (int i = 0; i < K * N; i++) B[i] = ldexpf(i % 3 ? 1.5f : -1.25f, i % 5 == 0 ? 15 : (int)(urand() * 9) - 4);
        for (int i = 0; i < M * N; i++) C[i] = i < N ? ldexpf(1.0f + ldexpf(1.0f, -10), -115) * (i % 2 ? -1 : 1) : nrand();
        int lanes;
        unsigned long long slow;
        int bad = f32_vs_ref(&cfg, M, N, K, A, B, C, &lanes, &slow, "ada e5m2 nfrac 10, a zero row");
        ok(bad == 0, "ada e5m2 at nfrac 10, a zero row of A against 2^15 in B, c = 2^-115 (1 + 2^-10): == reference on every level "
                     "(%d lanes, %llu scalar outputs)", lanes, slow);
    }
    free(A), free(B), free(C);
}

/* The pairwise kernel (AMD CDNA2, mi250: blocks of 4 or, --set block=2, of
 * 2 products as f32 pairwise trees, ftz) against the scalar model: K tails
 * of 1 to 3 products, other block sizes, K tiles (K above 256), every
 * kernel level and 1 to 3 threads, and the data its argument rests on:
 * subnormal f16/bf16 inputs (+0), subnormal and tiny c, c = -0, inf/NaN
 * inputs and c, products and sums that overflow, zero and -0 rows, bf16
 * products below f32's normal range (their rows go to the scalar model)
 * and products near it (c below 2^-103 flagged). */
static int pw_case(const char *fmt, const char *key, const char *val, int M, int N, int K, const float *A, const float *B, const float *C,
                   int isa, int threads, fpemu_gemm_stats *st, const char *what) {
    fpemu_gemm_config cfg;
    char err[256];
    if (fpemu_gemm_config_init(&cfg, "mi250", fmt, fmt, err, sizeof err) ||
        fpemu_gemm_config_set_scaling(&cfg, "none", err, sizeof err) ||
        (key && fpemu_mma_model_set(&cfg.model, key, val, err, sizeof err)))
        bail("%s", err);
    cfg.sat = 0;
    float *D = malloc(sizeof(float) * (size_t)M * N), *R = malloc(sizeof(float) * (size_t)M * N);
    fpemu_gemm_f32_reference(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, R, N, NULL);
    cfg.isa = isa, cfg.nthreads = threads;
    int bad = fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, D, N, st) ? 1 : 0;
    bad += cmp(D, R, M * N, what);
    free(D), free(R);
    return bad;
}

static void pw_edges(void) {
    enum { M = 13, N = 37, KX = 1027 };
    float *A = malloc(sizeof(float) * M * KX), *B = malloc(sizeof(float) * KX * N), *C = malloc(sizeof(float) * M * N);
    char what[160];
    fpemu_gemm_stats st;
    static const char *fmts[] = {"f16", "bf16"};
    /* plain data: K tails, blocks 4, 2, 3 (the generic tree), 1; K tiles (1027: past the
     * pairwise kernel's 1024); every level, 1-3 threads */
    for (int i = 0; i < M * KX; i++) A[i] = nrand();
    for (int i = 0; i < KX * N; i++) B[i] = nrand() * 0.25f;
    for (int i = 0; i < M * N; i++) C[i] = nrand();
    static const int Ks[] = {1, 2, 3, 5, 6, 7, 70, 301, 1027};
    static const char *blocks[] = {NULL, "2", "3", "1", "16"};
    for (int fi = 0; fi < 2; fi++)
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++)
            for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
                int bad = 0, lanes_ok = 1, slow = 0;
                for (int isa = 1; isa <= 3; isa++) {
                    int threads = 1 + (int)((ki + (size_t)isa) % 3);
                    snprintf(what, sizeof what, "mi250 %s block=%s K=%d isa %d", fmts[fi], blocks[bi] ? blocks[bi] : "4", Ks[ki], isa);
                    bad += pw_case(fmts[fi], blocks[bi] ? "block" : NULL, blocks[bi], M, N, Ks[ki], A, B, ki % 2 ? C : NULL, isa, threads, &st, what);
                    lanes_ok &= st.lanes == 16 && st.kernel >= 1 && st.kernel <= isa;
                    slow += (int)st.slow_outputs;
                }
                ok(bad == 0 && lanes_ok && slow == 0, "mi250 %s block=%s K=%d%s, isa 1-3, 1-3 threads: pairwise kernel (16 lanes, %d scalar outputs) == reference",
                   fmts[fi], blocks[bi] ? blocks[bi] : "4", Ks[ki], ki % 2 ? " +C" : "", slow);
            }
    /* special data, K = 70 */
    const int K = 70;
    for (int fi = 0; fi < 2; fi++) {
        int bf = fi == 1;
        for (int i = 0; i < M * K; i++) A[i] = nrand();
        for (int i = 0; i < K * N; i++) B[i] = nrand() * 0.25f;
        for (int i = 0; i < M * N; i++) C[i] = nrand();
        float sub = bf ? 3e-39f : 3e-6f; /* subnormal in the format */
        for (int k = 0; k < K; k += 3) A[1 * K + k] = k % 2 ? sub : -sub; /* subnormal inputs: +0 */
        for (int k = 0; k < K; k++) A[2 * K + k] = 0;                      /* a zero row */
        for (int k = 0; k < K; k++) A[3 * K + k] = -0.0f;                  /* a -0 row */
        for (int k = 0; k < K; k++) B[(size_t)k * N + 5] = k % 4 ? sub : -0.0f; /* a column of subnormals and -0 */
        A[4 * K + 3] = INFINITY, A[5 * K + 9] = NAN;
        if (bf) {
            A[6 * K + 10] = 3e38f, A[6 * K + 11] = 3e38f;   /* products that overflow */
            A[7 * K + 0] = 1e38f, A[7 * K + 4] = -1e38f;    /* a sum that overflows (or not) */
            A[8 * K + 8] = 5.5e36f, A[8 * K + 9] = -1e36f;  /* p0 overflows, p0 + p1 would not: inf (no fma) */
            for (int k = 0; k < K; k++) B[(size_t)k * N + 7] = 64.0f;
        } else {
            A[6 * K + 10] = 60000.0f, A[6 * K + 11] = 60000.0f; /* large products, finite */
        }
        C[0] = -0.0f, C[1] = 1e-40f, C[2] = -1e-40f, C[3] = 1e-35f, C[4] = -1e-33f, C[5] = NAN, C[6] = INFINITY;
        for (int j = 0; j < N; j++) C[2 * N + j] = j % 3 == 0 ? -0.0f : j % 3 == 1 ? 1e-41f : 0.0f;
        for (int j = 0; j < N; j++) C[3 * N + j] = j % 2 ? -0.0f : 0.0f;
        for (int isa = 1; isa <= 3; isa++) {
            int bad = 0;
            /* subnormals=keep: the model's other input rule, which ftz overrides (mma.c decode_ftz) */
            for (int wc = 0; wc < 4; wc++) {
                snprintf(what, sizeof what, "mi250 %s special isa %d%s%s", fmts[fi], isa, wc % 2 ? " +C" : "", wc / 2 ? " subnormals=keep" : "");
                bad += pw_case(fmts[fi], wc / 2 ? "subnormals" : NULL, "keep", M, N, K, A, B, wc % 2 ? C : NULL, isa, isa, &st, what);
                bad += st.lanes != 16;
            }
            ok(bad == 0, "mi250 %s (and subnormals=keep): subnormal inputs, zero and -0 rows, inf/NaN, overflow, subnormal/tiny/-0 c: kernel isa %d == reference",
               fmts[fi], isa);
        }
    }
    /* zero signs: every product -0, c +0, -0 or none */
    {
        float Az[4 * 6], Bz[6 * 4], Cz[16], Dz[16];
        for (int i = 0; i < 24; i++) Az[i] = -0.0f, Bz[i] = 1.0f + (float)(i % 3);
        for (int cs = 0; cs < 3; cs++) {
            for (int i = 0; i < 16; i++) Cz[i] = cs == 1 ? -0.0f : 0.0f;
            int bad = 0;
            for (int isa = 1; isa <= 3; isa++)
                bad += pw_case("bf16", NULL, NULL, 4, 4, 6, Az, Bz, cs == 2 ? NULL : Cz, isa, 1, &st, "zero signs");
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, "mi250", "bf16", "bf16", NULL, 0);
            fpemu_gemm_f32(&cfg, 4, 4, 6, Az, 6, 0, Bz, 4, 0, cs == 2 ? NULL : Cz, 4, Dz, 4, NULL);
            int neg = 0;
            for (int i = 0; i < 16; i++) neg += Dz[i] == 0 && signbit(Dz[i]);
            ok(bad == 0 && neg == (cs == 1 ? 16 : 0), "mi250: 6 products -0, c %s: %s0 (kernel == reference)",
               cs == 0 ? "+0" : cs == 1 ? "-0" : "none", cs == 1 ? "-" : "+");
        }
    }
    /* bf16 products below f32's normal range: one row of A near 2^-110
     * (its row to the scalar model), then all of A and B near 2^-65 (every
     * row), then products near 2^-96 (lsb 2^-110: the kernel, c below
     * 2^-103 flagged), and pairs of them that cancel (d = c) */
    for (int t = 0; t < 4; t++) {
        for (int i = 0; i < M * K; i++) A[i] = nrand();
        for (int i = 0; i < K * N; i++) B[i] = nrand();
        for (int i = 0; i < M * N; i++) C[i] = ldexpf(nrand(), -100 - (int)(urand() * 40));
        if (t == 0) for (int k = 0; k < K; k++) A[4 * K + k] = ldexpf((float)(1 + urand()), -110) * (k % 2 ? 1 : -1);
        if (t == 1) for (int i = 0; i < M * K; i++) A[i] = ldexpf(A[i], -65), B[i % (K * N)] = ldexpf(nrand(), -65);
        if (t >= 2) {
            for (int i = 0; i < M * K; i++) A[i] = ldexpf((float)(1 + urand()), -48) * (i % 3 ? 1 : -1);
            for (int i = 0; i < K * N; i++) B[i] = ldexpf((float)(1 + urand()), -48) * (i % 5 ? 1 : -1);
        }
        if (t == 3) /* pairs that cancel: a_k b_k + a_(k+1) b_(k+1) = 0 or tiny */
            for (int i = 0; i < M; i++)
                for (int k = 0; k + 1 < K; k += 2) A[i * K + k + 1] = -A[i * K + k], B[(size_t)(k + 1) * N + i % N] = B[(size_t)k * N + i % N];
        int bad = 0;
        unsigned long long slow = 0;
        for (int isa = 1; isa <= 3; isa++)
            for (int wc = 0; wc < 2; wc++) {
                snprintf(what, sizeof what, "mi250 bf16 tiny t=%d isa %d%s", t, isa, wc ? " +C" : "");
                bad += pw_case("bf16", NULL, NULL, M, N, K, A, B, wc ? C : NULL, isa, 2, &st, what);
                bad += st.lanes != 16;
                slow += st.slow_outputs;
            }
        ok(bad == 0 && (t == 1 ? slow == 6ULL * M * N : t == 0 ? slow == 6ULL * N : slow > 0 && slow < 3ULL * M * N),
           "mi250 bf16 data %s: kernel isa 1-3 == reference (%llu scalar outputs)",
           t == 0 ? "with a row near 2^-110" : t == 1 ? "near 2^-65 (every product below 2^-126)" : t == 2 ? "near 2^-48, c near 2^-120" : "near 2^-48, cancelling pairs",
           slow);
    }
    /* mi250 with block 0 (one flushed tree over K: ftz, which neither the
     * pairwise nor the pairwise-tree kernel takes) stays on the scalar model */
    {
        fpemu_gemm_config cfg;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, "mi250", "f16", "f16", err, sizeof err) || fpemu_mma_model_set(&cfg.model, "block", "0", err, sizeof err))
            bail("%s", err);
        float *D = malloc(sizeof(float) * M * N);
        fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, NULL, N, D, N, &st);
        ok(st.kernel == 0 && st.slow_outputs == (uint64_t)M * N, "mi250 block=0 (one tree, ftz): the scalar model");
        free(D);
    }
    free(A), free(B), free(C);
}


/* AMD CDNA3 (mi300: two-stage blocks, the f32 kernel's fused variant)
 * against the scalar model: c that dominates the products (E = c's
 * exponent, the products' sum cut toward -inf), c far below them (c cut),
 * c of the same size, zero and negative zero c, rows and columns of zeros
 * and all-zero blocks, results at the edges of f32's range (c subnormal or
 * at 2^-126, products at the least exponent the kernel takes; sums past
 * f32's max), inf/NaN in A, B and C, K of whole, partial and several K
 * tiles (the kernel called again with c = its output), every instruction
 * set and 1 to 3 threads, fuse_align rz; and that the fused kernel ran. */
static void mi300_fused(void) {
    enum { M = 19, N = 45, KMAX = 600 };
    float *A = malloc(sizeof(float) * M * KMAX), *B = malloc(sizeof(float) * KMAX * N), *C = malloc(sizeof(float) * M * N);
    float *D = malloc(sizeof(float) * M * N), *R = malloc(sizeof(float) * M * N);
    static const struct { const char *fmt, *bfmt, *opt; } fm[] = {
        {"f16", "f16", NULL}, {"bf16", "bf16", NULL}, {"tf32", "tf32", NULL}, {"f32", "f32", NULL}, {"f16", "f16", "rz"},
        {"bf16", "bf16", "rz"}, {"e4m3fnuz", "e4m3fnuz", NULL}, {"e5m2fnuz", "e5m2fnuz", NULL}, {"e4m3fnuz", "e5m2fnuz", NULL}};
    static const int Ks[] = {8, 37, 300};
    static const char *scen[] = {"c dominates", "c far below", "c alike", "zero c, -0 c, zero rows/blocks", "range edges",
                                 "inf/NaN", "c at 2^7 and 2^8 times the products' emax",
                                 "fp8 halves: even products near 2^10, odd near 2^-12"};
    int best = -1;
    for (size_t fi = 0; fi < sizeof fm / sizeof fm[0]; fi++)
        for (int sc = 0; sc < 8; sc++)
            for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
                const int K = Ks[ki];
                if (sc == 6 && K != 8) continue; /* one block: c as chosen */
                if (sc == 7 && !strstr(fm[fi].fmt, "fnuz")) continue; /* split = 2 (fp8) only */
                const int edges = sc == 4;
                if (edges && strcmp(fm[fi].fmt, "bf16")) continue; /* only bf16 reaches f32's edges through the kernel */
                fpemu_gemm_config cfg;
                char err[256], what[200];
                if (fpemu_gemm_config_init(&cfg, "mi300", fm[fi].fmt, fm[fi].bfmt, err, sizeof err)) bail("%s", err);
                if (fm[fi].opt && fpemu_mma_model_set(&cfg.model, "fuse_align", fm[fi].opt, err, sizeof err)) bail("%s", err);
                cfg.sat = 0;
                snprintf(what, sizeof what, "mi300 %s%s%s%s%s %dx%dx%d, %s", fm[fi].fmt, strcmp(fm[fi].fmt, fm[fi].bfmt) ? " x " : "",
                         strcmp(fm[fi].fmt, fm[fi].bfmt) ? fm[fi].bfmt : "", fm[fi].opt ? " fuse_align=" : "",
                         fm[fi].opt ? fm[fi].opt : "", M, N, K, scen[sc]);
                /* products about N(0,1), c scaled per scenario */
                double cs = sc == 0 ? 0x1p12 : sc == 1 ? 0x1p-30 : 1;
                for (int i = 0; i < M * K; i++) A[i] = nrand();
                for (int i = 0; i < K * N; i++) B[i] = nrand();
                for (int i = 0; i < M * N; i++) C[i] = (float)(nrand() * cs);
                if (sc == 0)
                    for (int i = 0; i < M * N; i += 3) C[i] = (float)(nrand() * 16); /* E = c's, a few bits above */
                if (sc == 3) {
                    for (int i = 0; i < M * N; i++) C[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? -0.0f : C[i];
                    for (int k = 0; k < K; k++) A[2 * K + k] = 0, A[5 * K + k] = -0.0f;
                    for (int k = 0; k < K; k++) B[(size_t)k * N + 7] = 0;
                    for (int i = 0; i < M; i++)
                        for (int k = 8; k < 16 && k < K; k++) A[(size_t)i * K + k] = 0; /* a block of zero products */
                }
                if (edges) {
                    /* element exponents in [-38, 59]: products from 2^-76 (the
                     * least the kernel takes) to below 2^120 (the most) */
                    for (int i = 0; i < M; i++)
                        for (int k = 0; k < K; k++) {
                            int e = i == 0 ? -38 : i == 1 ? 59 : i == 2 ? 57 : -38 + (int)(urand() * 98);
                            A[(size_t)i * K + k] = ldexpf(1.0f + (float)((i + k) % 7) / 8, e) * (k % 3 ? 1 : -1);
                        }
                    for (int k = 0; k < K; k++)
                        for (int j = 0; j < N; j++) {
                            int e = j == 0 ? -38 : j == 1 ? 59 : j == 2 ? 58 : -38 + (int)(urand() * 98);
                            B[(size_t)k * N + j] = ldexpf(1.0f + (float)((j + 2 * k) % 4) / 4, e) * ((k + j) % 4 ? 1 : -1);
                        }
                    static const float ce[] = {0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1p-126f, 0x1.fffffep-127f, 0x1p-100f,
                                               -0x1.000002p-110f, 0x1.234568p-104f, 0x1.fffffep127f, -0x1.fffffep127f, 0x1p127f, -0x1.8p126f, 0, -0.0f, 1};
                    for (int i = 0; i < M * N; i++) C[i] = ce[(size_t)i % (sizeof ce / sizeof ce[0])];
                    /* row 3: two blocks without products first, c (down to
                     * 2^-126 and below thr) passing through them unchanged */
                    for (int k = 0; k < 16 && k < K; k++) A[3 * K + k] = 0;
                    /* row 4 likewise, its c's all below thr (whole panels of them) */
                    for (int k = 0; k < 16 && k < K; k++) A[4 * K + k] = 0;
                    for (int j = 0; j < N; j++) C[4 * N + j] = ldexpf(j % 2 ? -1.0f - 0x1p-23f * (float)j : 1.0f + 0x1p-22f * (float)j, -104 - j % 20);
                }
                if (sc == 6) {
                    /* exact f16 values; per output the products' emax ep (the sum
                     * of the exponents), and c with exponent ep + 7 (row i even:
                     * the sum's cut at 2^(E - 31) is a no-op) or ep + 8 (odd: it
                     * is not) */
                    for (int i = 0; i < M * K; i++) A[i] = ldexpf(1.0f + (float)(int)(urand() * 1024) / 1024, -6 + (int)(urand() * 10)) * (urand() < 0.5 ? -1 : 1);
                    for (int i = 0; i < K * N; i++) B[i] = ldexpf(1.0f + (float)(int)(urand() * 1024) / 1024, -6 + (int)(urand() * 10)) * (urand() < 0.5 ? -1 : 1);
                    for (int i = 0; i < M; i++)
                        for (int j = 0; j < N; j++) {
                            int ep = INT_MIN;
                            for (int k = 0; k < K; k++) {
                                int e = ilogbf(A[(size_t)i * K + k]) + ilogbf(B[(size_t)k * N + j]);
                                ep = e > ep ? e : ep;
                            }
                            C[(size_t)i * N + j] = ldexpf(1.0f + (float)(int)(urand() * 8388608) / 8388608, ep + 7 + i % 2) * (urand() < 0.5 ? -1 : 1);
                        }
                }
                if (sc == 7) {
                    /* the odd half's sum has bits below the even half's 2^(emax -
                     * 24): cut toward zero once, as a sum (not term by term) */
                    for (int i = 0; i < M; i++)
                        for (int k = 0; k < K; k++)
                            A[(size_t)i * K + k] = ldexpf(1.0f + (float)(int)(urand() * 4) / 4, k % 2 ? -6 : 5) * (urand() < 0.5 ? -1 : 1);
                    for (int k = 0; k < K; k++)
                        for (int j = 0; j < N; j++)
                            B[(size_t)k * N + j] = ldexpf(1.0f + (float)(int)(urand() * 4) / 4, k % 2 ? -6 : 5) * (urand() < 0.5 ? -1 : 1);
                }
                if (sc == 5) {
                    A[3 * K + K / 2] = INFINITY, A[4 * K + 1] = NAN, A[6 * K] = -INFINITY;
                    B[(size_t)(K - 1) * N + 4] = -INFINITY, B[9] = NAN;
                    C[11] = INFINITY, C[N + 2] = -INFINITY, C[2 * N + 3] = NAN;
                }
                fpemu_gemm_f32_reference(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, R, N, NULL);
                int bad = 0, notk = 0;
                unsigned long long slow = 0;
                if (best < 0) { /* the best level the CPU has: what isa 3 gets */
                    fpemu_gemm_stats st;
                    cfg.isa = 3, cfg.nthreads = 1;
                    fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, D, N, &st);
                    best = st.kernel;
                }
                for (int isa = 1; isa <= 3; isa++)
                    for (int t = 1; t <= 3; t++) {
                        fpemu_gemm_stats st;
                        cfg.isa = isa, cfg.nthreads = t;
                        if (fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, D, N, &st)) bad++;
                        char w2[240];
                        snprintf(w2, sizeof w2, "%s, isa %d, %d threads", what, isa, t);
                        bad += cmp(D, R, M * N, w2);
                        if (st.lanes != 16 || st.kernel != (isa < best ? isa : best)) notk++;
                        if (isa == 1 && t == 1) slow = (unsigned long long)st.slow_outputs;
                    }
                cfg.isa = 0, cfg.nthreads = 0;
                ok(bad == 0, "%s: == scalar model on isa 1-3, 1-3 threads (%llu outputs recomputed)", what, slow);
                ok(notk == 0, "%s: the fused f32 kernel ran (16 lanes) at each level", what);
            }
    /* promotion every 64 (chunks restart from c = +0: the first-block
     * fast path) and every 12 (not whole blocks: the scalar model) */
    for (int pv = 0; pv < 2; pv++) {
        fpemu_gemm_config cfg;
        fpemu_gemm_stats st;
        const int K = 300;
        fpemu_gemm_config_init(&cfg, "mi300", "bf16", "bf16", NULL, 0);
        cfg.promote = pv ? 12 : 64;
        for (int i = 0; i < M * K; i++) A[i] = nrand();
        for (int i = 0; i < K * N; i++) B[i] = nrand();
        for (int i = 0; i < M * N; i++) C[i] = nrand();
        fpemu_gemm_f32_reference(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, R, N, NULL);
        int bad = 0, lanes = 0;
        for (int isa = 1; isa <= 3; isa++) {
            cfg.isa = isa, cfg.nthreads = isa;
            bad += fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, D, N, &st) != 0;
            bad += cmp(D, R, M * N, pv ? "mi300 bf16 promote 12" : "mi300 bf16 promote 64");
            lanes |= st.lanes;
        }
        ok(bad == 0 && lanes == (pv ? 0 : 16), "mi300 bf16 + C, promote %d: == scalar model on isa 1-3 (%s)", cfg.promote,
           pv ? "not whole blocks: the scalar model" : "the fused kernel");
    }
    /* what keeps the fused kernel off: a zero product that takes part in
     * emax (the scalar model, still equal) */
    {
        fpemu_gemm_config cfg;
        fpemu_gemm_stats st;
        const int K = 37;
        fpemu_gemm_config_init(&cfg, "mi300", "f16", "f16", NULL, 0);
        fpemu_mma_model_set(&cfg.model, "zero_product", "emin", NULL, 0);
        for (int i = 0; i < M * K; i++) A[i] = i % 5 ? nrand() : 0;
        for (int i = 0; i < K * N; i++) B[i] = nrand();
        for (int i = 0; i < M * N; i++) C[i] = nrand();
        fpemu_gemm_f32_reference(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, R, N, NULL);
        fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, D, N, &st);
        ok(st.lanes == 0 && cmp(D, R, M * N, "mi300 zero_product=emin") == 0,
           "mi300 f16 zero_product=emin: not the fused kernel (%d lanes), == scalar model", st.lanes);
    }
    free(A), free(B), free(C), free(D), free(R);
}


/* fpemu_gemm_f32 on the scalar model's reference (r), then on each kernel
 * level with 1 and 3 threads (d): how many runs differ from r; lanes and
 * slow outputs of the best level on one thread. */
static int f32_every_level(fpemu_gemm_config *cfg, int M, int N, int K, const float *a, const float *b, const float *c, float *d,
                           float *r, const char *what, int *lanes, unsigned long long *slow) {
    fpemu_gemm_f32_reference(cfg, M, N, K, a, K, 0, b, N, 0, c, N, r, N, NULL);
    int bad = 0;
    for (int isa = 0; isa <= 3; isa++)
        for (int th = 1; th <= 3; th += 2) {
            fpemu_gemm_stats st;
            cfg->isa = isa, cfg->nthreads = th;
            bad += fpemu_gemm_f32(cfg, M, N, K, a, K, 0, b, N, 0, c, N, d, N, &st) != 0 || cmp_bits(d, r, M * N, what);
            if (isa == 0 && th == 1) *lanes = st.lanes, *slow = (unsigned long long)st.slow_outputs;
        }
    cfg->isa = 0;
    return bad;
}

/* The one-chunk epilogue 16 outputs at a time (gemm.c finish_row16): the
 * decode factors of tensor, rowwise and given scaling (rowwise multiplies
 * by b, then a; the others by a * b), C added after the MMA, an output
 * format, with NaN and inf in A, B and C; whole and partial groups of 16,
 * against the scalar model and with the kernel on every level. */
static void epilogue16_edges(void) {
    enum { EM = 13, EN = 53, EK = 96 };
    float *A = malloc(sizeof(float) * EM * EK), *B = malloc(sizeof(float) * EK * EN);
    float C[EM * EN], d[EM * EN], r[EM * EN];
    static const char *rec[] = {"tensor", "rowwise", "given", "tensor-torchao"};
    static const char *of[] = {NULL, "bf16", "f16"};
    int bad = 0, runs = 0;
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < EM * EK; i++) A[i] = nrand() * (1 + i % 7);
        for (int i = 0; i < EK * EN; i++) B[i] = nrand() * 0.03f * (1 + i % 5);
        for (int i = 0; i < EM * EN; i++) C[i] = nrand();
        if (t) A[3 * EK + 5] = NAN, B[7 * EN + 20] = INFINITY, C[2 * EN + 33] = NAN, C[4 * EN + 1] = -INFINITY;
        for (size_t ri = 0; ri < sizeof rec / sizeof rec[0]; ri++)
            for (size_t oi = 0; oi < sizeof of / sizeof of[0]; oi++) {
                fpemu_gemm_config cfg;
                char err[200];
                if (fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", err, sizeof err) ||
                    fpemu_gemm_config_set_scaling(&cfg, rec[ri], err, sizeof err))
                    bail("%s", err);
                if (cfg.scaling.kind == FPEMU_GEMM_SCALING_GIVEN) cfg.scaling.scale_a = 3.7f, cfg.scaling.scale_b = 90.3f;
                cfg.outfmt = of[oi] ? fpemu_format_get(of[oi], NULL, 0) : NULL;
                for (int withc = 0; withc < 2; withc++) {
                    const float *Cu = withc ? C : NULL;
                    fpemu_gemm_f32_reference(&cfg, EM, EN, EK, A, EK, 0, B, EN, 0, Cu, EN, r, EN, NULL);
                    for (int isa = 0; isa <= 2; isa++) {
                        cfg.isa = isa, cfg.nthreads = isa ? 1 : 2;
                        bad += fpemu_gemm_f32(&cfg, EM, EN, EK, A, EK, 0, B, EN, 0, Cu, EN, d, EN, NULL) != 0 || cmp(d, r, EM * EN, rec[ri]);
                    }
                    runs++;
                }
            }
    }
    ok(bad == 0, "the one-chunk epilogue, 16 at a time: tensor, rowwise, given and torchao factors, C added, outputs in bf16 and f16, "
                 "NaN and inf in A, B and C: == the scalar model on every level (%d runs)", runs);
    free(A), free(B);
}

/* The fma-chain kernel (the reference kind fma-seq): f32, bf16 and e4m3
 * inputs with subnormal, huge and special values, C with -0, subnormals and
 * values that the products overflow past, promotion, every level and 1-3
 * threads, against the scalar model; the kernel must run (16 lanes). */
static void fma_chain_edges(void) {
    enum { FM = 13, FN = 45, FK = 300 };
    float *a = malloc(sizeof(float) * FM * FK), *b = malloc(sizeof(float) * FK * FN);
    float c[FM * FN], d[FM * FN], r[FM * FN];
    static const char *fm[] = {"f32", "bf16", "e4m3"};
    for (int t = 0; t < 6; t++) {
        const char *f = fm[t % 3];
        for (int i = 0; i < FM * FK; i++) a[i] = t < 3 ? nrand() : ldexpf(nrand(), (int)(urand() * 120) - 70);
        for (int i = 0; i < FK * FN; i++) b[i] = t < 3 ? nrand() * 0.1f : ldexpf(nrand(), (int)(urand() * 120) - 70);
        for (int i = 0; i < FM * FN; i++) c[i] = t % 2 ? nrand() : ldexpf(nrand(), -140);
        c[0] = -0.0f, c[1] = 1e-45f, c[2] = -3e38f, c[3] = 3e38f;
        if (t >= 3) {
            for (int k = 0; k < FK; k++) a[2 * FK + k] = k % 2 ? 1e30f : -1e30f; /* overflow both ways: inf - inf */
            for (int k = 0; k < FK; k++) a[4 * FK + k] = -0.0f;                    /* -0 products into c */
            a[5 * FK + 7] = INFINITY, b[(size_t)9 * FN + 3] = NAN;                  /* rows and columns with specials */
        }
        fpemu_gemm_config cfg;
        if (fpemu_gemm_config_init(&cfg, "fma-seq", f, f, NULL, 0)) bail("fma-seq %s", f);
        for (int promo = 0; promo < 2; promo++) {
            cfg.promote = promo ? 64 : 0;
            int lanes = -1;
            unsigned long long slow = 0;
            int bad = f32_every_level(&cfg, FM, FN, FK, a, b, promo ? NULL : c, d, r, "fma chain", &lanes, &slow);
            ok(bad == 0 && lanes == 16, "fma-seq %s, %s%s: %d lanes, %llu scalar outputs, == the scalar model on every level and thread count", f,
               t < 3 ? "normal data" : "data from 2^-70 to 2^50 with overflow, -0 and specials", promo ? ", promote 64" : ", with C", lanes, slow);
        }
    }
    free(a), free(b);
}

/* The exact-sum kernel (the reference kind exact): e4m3, e3m2 and e2m1
 * without scaling (C is the MMA's c): c's that are multiples of the
 * products' unit (the kernel) and c's that are not (the scalar model), -0,
 * sums that cancel to zero, sums that round at f32; promotion; every level
 * and 1-3 threads, against the scalar model; e5m2 (products beyond
 * double's 53 bits) stays on the scalar model. */
static void exact_sum_edges(void) {
    enum { XM = 11, XN = 37, XK = 300 };
    float *a = malloc(sizeof(float) * XM * XK), *b = malloc(sizeof(float) * XK * XN);
    float c[XM * XN], d[XM * XN], r[XM * XN];
    static const struct { const char *f; int lanes; } fm[] = {{"e4m3", 16}, {"e3m2", 16}, {"e2m1", 16}, {"e5m2", 0}};
    for (int t = 0; t < 4; t++) {
        for (int i = 0; i < XM * XK; i++) a[i] = nrand() * 4;
        for (int i = 0; i < XK * XN; i++) b[i] = nrand() * 4;
        for (int k = 0; k < XK; k++) a[3 * XK + k] = k % 2 ? 2.0f : -2.0f, b[(size_t)k * XN + 5] = 3.0f; /* cancels to 0 */
        for (int k = 0; k < XK; k++) a[4 * XK + k] = -0.0f, b[(size_t)k * XN + 1] = fabsf(b[(size_t)k * XN + 1]); /* -0 products */
        for (int i = 0; i < XM * XN; i++) c[i] = i % 3 == 0 ? ldexpf((float)(i % 97) - 48, -10) : i % 3 == 1 ? 0.0f : nrand();
        c[4 * XN + 1] = -0.0f, c[3 * XN + 5] = 0.0f, c[0] = 1e30f, c[1] = -3e-39f;
        /* c = 2^35 with products 2^11 and 2^-18: a double sum rounds the
         * 2^-18 away at a tie of f32 (2^35 + 2^11) and rounds down, the exact
         * sum rounds up; the kernel must leave that lane to the scalar model */
        for (int k = 0; k < XK; k++) a[5 * XK + k] = k == 0 ? 256.0f : k == 1 ? 0x1p-9f : 0.0f;
        b[6] = 8.0f, b[XN + 6] = 0x1p-9f, c[5 * XN + 6] = 0x1p35f;
        fpemu_gemm_config cfg;
        if (fpemu_gemm_config_init(&cfg, "exact", fm[t].f, fm[t].f, NULL, 0)) bail("exact %s", fm[t].f);
        for (int promo = 0; promo < 2; promo++) {
            cfg.promote = promo ? 64 : 0;
            int lanes = -1;
            unsigned long long slow = 0;
            int bad = f32_every_level(&cfg, XM, XN, XK, a, b, c, d, r, "exact sum", &lanes, &slow);
            if (t == 0 && !promo) /* the cases are the ones meant */
                bad += memcmp(&r[3 * XN + 5], &(float){0.0f}, 4) != 0 || !signbit(r[4 * XN + 1]) || r[5 * XN + 6] != 0x1p35f + 4096;
            ok(bad == 0 && lanes == fm[t].lanes, "exact %s%s: %d lanes (want %d), %llu scalar outputs, == the scalar model on every level and thread count",
               fm[t].f, promo ? ", promote 64" : ", C in the MMA", lanes, fm[t].lanes, slow);
        }
    }
    free(a), free(b);
}

/* The exact-sum kernel's AMX form (isa 4, where the CPU has AMX int8 tiles
 * and Linux grants them): base-128 digits of 3 (e4m3), 2 (e3m2) and 1 (e2m3,
 * e2m1) planes, mixed (the general schedule) and 3 x 3 (the written-out
 * one); shapes off the tiles' 16 rows, 16 columns and 64 k; more columns
 * than one block of B's digits; K beyond one int32 segment (32768 k);
 * promotion; inf and NaN in A and B, c's that are -0, not multiples of the
 * products' unit, or cancel; against the scalar model on the best level and
 * on AVX-512 alone, 1 and 2 threads. Elsewhere the best level is the double
 * kernel and the cases still run. */
static void exact_amx(void) {
    static const struct { const char *fa, *fb; int M, N, K, promote; } cs[] = {
        {"e4m3", "e4m3", 35, 600, 200, 0}, {"e4m3", "e2m1", 19, 45, 131, 0}, {"e2m1", "e4m3", 21, 40, 64, 0},
        {"e3m2", "e2m3", 40, 33, 300, 64}, {"e2m1", "e2m1", 16, 16, 64, 0},  {"e4m3", "e4m3", 18, 40, 33000, 0},
    };
    const int best = emu__gemm_kernel_best() == 4 && !emu__gemm_amx_grant() ? 3 : emu__gemm_kernel_best(); /* (no grant: AVX-512) */
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
        const int M = cs[ci].M, N = cs[ci].N, K = cs[ci].K;
        float *a = malloc(sizeof(float) * (size_t)M * K), *b = malloc(sizeof(float) * (size_t)K * N);
        float *c = malloc(sizeof(float) * (size_t)M * N), *d = malloc(sizeof(float) * (size_t)M * N),
              *r = malloc(sizeof(float) * (size_t)M * N);
        if (!a || !b || !c || !d || !r) bail("out of memory");
        for (size_t i = 0; i < (size_t)M * K; i++) a[i] = nrand() * ldexpf(1.0f, (int)(i % 13) - 6);
        for (size_t i = 0; i < (size_t)K * N; i++) b[i] = nrand() * ldexpf(1.0f, (int)(i % 11) - 5);
        for (int i = 0; i < M * N; i++) c[i] = i % 7 == 0 ? nrand() : i % 7 == 1 ? 0.0f : roundf(nrand() * 64) / 4; /* (multiples of every unit here, 2^-2 and below) */
        c[1] = -0.0f, c[2] = 1e30f;
        a[(size_t)2 * K + 3] = INFINITY, b[(size_t)(K - 1) * N + 4] = NAN;
        for (int k = 0; k < K; k++) a[(size_t)5 * K + k] = k % 2 ? 2.0f : -2.0f, b[(size_t)k * N + 6] = 1.5f; /* cancels */
        fpemu_gemm_config cfg;
        if (fpemu_gemm_config_init(&cfg, "exact", cs[ci].fa, cs[ci].fb, NULL, 0)) bail("exact %s x %s", cs[ci].fa, cs[ci].fb);
        cfg.promote = cs[ci].promote;
        fpemu_gemm_f32_reference(&cfg, M, N, K, a, K, 0, b, N, 0, c, N, r, N, NULL);
        int bad = 0, kernel = -1;
        unsigned long long slow = 0;
        for (int isa = 0; isa <= 3; isa += 3)
            for (int th = 1; th <= 2; th++) {
                fpemu_gemm_stats st;
                char what[96];
                snprintf(what, sizeof what, "exact %s x %s isa %d %d threads", cs[ci].fa, cs[ci].fb, isa, th);
                cfg.isa = isa, cfg.nthreads = th;
                bad += fpemu_gemm_f32(&cfg, M, N, K, a, K, 0, b, N, 0, c, N, d, N, &st) != 0 || cmp_bits(d, r, M * N, what);
                if (isa == 0 && th == 1) kernel = st.kernel, slow = (unsigned long long)st.slow_outputs;
            }
        ok(bad == 0 && kernel == best && slow < (unsigned long long)M * N / 2,
           "exact %s x %s, %dx%dx%d%s: the best level (kernel %d of %d, %llu scalar outputs) and AVX-512 == the scalar model",
           cs[ci].fa, cs[ci].fb, M, N, K, cs[ci].promote ? ", promote 64" : "", kernel, best, slow);
        free(a), free(b), free(c), free(d), free(r);
    }
    if (best < 4) diag("this CPU or OS has no AMX int8 tiles: the AMX form did not run (the cases ran on kernel %d)", best);
}

/* The pairwise-tree kernel (the reference kind pairwise, one tree over
 * K): f16, e4m3 and e2m1, K from 1 to 1000 (trees of every shape the split
 * makes: nested trees below 16; nodes of at most 128 whose leaves are all
 * 4, 5, 6 or 7 products (16 .. 128, 384, 640, 1024) or mixed (157, 300,
 * 1000); one to three levels above those nodes), C in the MMA (scaling
 * none) with -0, subnormal and huge values, products of -0, promotion;
 * every level and 1-3 threads against the scalar model; bf16 and tf32
 * too, whose data decide. Then 70 rows (a call's 64 rows of 8 register
 * blocks, and 6 more), and bf16 and tf32 data whose products leave f32's
 * range (pt_select in gemm.c: those rows or columns on the scalar
 * model). */
static void pairwise_tree_edges(void) {
    enum { TM = 9, TN = 35, TKMAX = 1024, TM2 = 70 };
    float *a = malloc(sizeof(float) * TM2 * TKMAX), *b = malloc(sizeof(float) * TKMAX * TN);
    float c[TM2 * TN], d[TM2 * TN], r[TM2 * TN];
    static const struct { const char *f; int lanes; } fm[] = {{"f16", 16}, {"e4m3", 16}, {"e2m1", 16}, {"bf16", 16}, {"tf32", 16}};
    static const int ks[] = {1, 2, 3, 4, 5, 7, 13, 16, 24, 40, 56, 80, 96, 112, 128, 157, 300, 384, 640, 1000, 1024};
    int bad = 0, used = 1, runs = 0;
    for (int t = 0; t < 5; t++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            const int K = ks[ki];
            for (int i = 0; i < TM * K; i++) a[i] = nrand() * (t == 0 ? 300 : 2);
            for (int i = 0; i < K * TN; i++) b[i] = nrand() * (t == 0 ? 200 : 2);
            for (int k = 0; k < K; k++) a[2 * K + k] = -0.0f, b[(size_t)k * TN + 3] = fabsf(b[(size_t)k * TN + 3]);
            for (int i = 0; i < TM * TN; i++) c[i] = i % 4 ? nrand() : 0.0f;
            c[2 * TN + 3] = -0.0f, c[1] = 1e-41f, c[2] = 3.4e38f, c[3] = -3.4e38f;
            fpemu_gemm_config cfg;
            if (fpemu_gemm_config_init(&cfg, "pairwise", fm[t].f, fm[t].f, NULL, 0)) bail("pairwise %s", fm[t].f);
            for (int promo = 0; promo < 2; promo++) {
                cfg.promote = promo ? 2 : 0;
                int lanes = -1;
                unsigned long long slow = 0;
                bad += f32_every_level(&cfg, TM, TN, K, a, b, c, d, r, "pairwise tree", &lanes, &slow);
                if (lanes != fm[t].lanes) used = 0, diag("pairwise %s K %d: %d lanes", fm[t].f, K, lanes);
                if (t == 1 && !promo && K == 157 && !signbit(r[2 * TN + 3])) bad++, diag("the -0 case is not one: %a", r[2 * TN + 3]); /* the case is the one meant */
                runs++;
            }
        }
    ok(bad == 0 && used, "pairwise (one tree): f16, e4m3, e2m1, bf16 and tf32 on the kernel, K 1..1024, C with -0, "
                         "subnormals and huge values, promotion: == the scalar model on every level and thread count (%d runs)", runs);
    bad = 0, used = 1;
    for (int ki = 0; ki < 2; ki++) {
        const int K = ki ? 300 : 256;
        for (int i = 0; i < TM2 * K; i++) a[i] = nrand() * 3;
        for (int i = 0; i < K * TN; i++) b[i] = nrand();
        for (int i = 0; i < TM2 * TN; i++) c[i] = nrand();
        fpemu_gemm_config cfg;
        if (fpemu_gemm_config_init(&cfg, "pairwise", "f16", "f16", NULL, 0)) bail("pairwise f16");
        int lanes = -1;
        unsigned long long slow = 0;
        bad += f32_every_level(&cfg, TM2, TN, K, a, b, c, d, r, "pairwise tree, 70 rows", &lanes, &slow);
        if (lanes != 16) used = 0, diag("pairwise f16 K %d, 70 rows: %d lanes", K, lanes);
    }
    ok(bad == 0 && used, "pairwise (one tree), f16, 70 rows, K 256 and 300: == the scalar model on every level and thread count");
    /* bf16 and tf32 (f32's exponents): products of tiny values below 2^-149
     * (rows 3 and 5 of A against column 7 of B, subnormal products in the
     * trees elsewhere) or of huge ones at 2^128 (row 60 against column 20):
     * their rows or columns on the scalar model, the rest on the kernel */
    static const char *wide[] = {"bf16", "tf32"};
    for (int t = 0; t < 2; t++)
        for (int v = 0; v < 4; v++) {
            const int K = 300;
            for (int i = 0; i < TM2 * K; i++) a[i] = nrand();
            for (int i = 0; i < K * TN; i++) b[i] = nrand();
            for (int i = 0; i < TM2 * TN; i++) c[i] = i % 3 ? 0x1p-140f * (1 + i % 5) * (i % 2 ? -1 : 1) : nrand(); /* (subnormal c) */
            if (v == 0) { /* subnormal products that stay exact: tiny rows against B of at least 2^-6 */
                for (int i = 0; i < K * TN; i++) b[i] = fabsf(b[i]) < 0x1p-6f ? copysignf(0x1p-6f, b[i]) : b[i];
                for (int k = 0; k < K; k++) a[3 * K + k] = 0x1p-121f * (1 + k % 3) * (k % 2 ? -1 : 1), a[5 * K + k] = k % 7 ? 0 : 0x1p-123f * (1 + k % 3);
            }
            if (v == 1) { /* and against a tiny column: below f32's least subnormal */
                for (int k = 0; k < K; k++) a[3 * K + k] *= 0x1p-120f, b[(size_t)k * TN + 7] *= 0x1p-40f;
                a[5 * K + 11] = 0x1p-126f * 0.75f; /* a subnormal input */
            }
            if (v == 2) /* a product at 2^128 (inf): a huge row against a huge column */
                for (int k = 0; k < K; k++) a[60 * K + k] *= 0x1p100f, b[(size_t)k * TN + 20] *= 0x1p27f;
            if (v == 3) /* products near 2^-145 whose low bits lie below 2^-149: their exponents alone would pass */
                for (int k = 0; k < K; k++) {
                    a[3 * K + k] = 0x1p-120f * (1 + (float)(2 * (k % 60) + 1) / 128) * (k % 2 ? -1 : 1);
                    b[(size_t)k * TN + 7] = 0x1p-25f * (1 + (float)(2 * (k % 37) + 1) / 128) * (k % 3 ? 1 : -1);
                }
            fpemu_gemm_config cfg;
            if (fpemu_gemm_config_init(&cfg, "pairwise", wide[t], wide[t], NULL, 0)) bail("pairwise %s", wide[t]);
            int lanes = -1;
            unsigned long long slow = 0;
            const int b0 = f32_every_level(&cfg, TM2, TN, K, a, b, c, d, r, "pairwise tree, wide exponents", &lanes, &slow);
            const int sent = v ? slow > 0 && slow < (unsigned long long)TM2 * TN / 4 : slow == 0;
            ok(b0 == 0 && lanes == 16 && sent, "pairwise (one tree), %s, %s: == the scalar model on every level (%llu of %d outputs on the "
                                              "scalar model)", wide[t], v == 0 ? "subnormal products" : v == 1 ? "products below 2^-149" : v == 2 ? "a product at 2^128" : "products with bits below 2^-149",
               slow, TM2 * TN);
        }
    /* a model option that takes every kernel away after the tree kernel was
     * chosen (fuse_nfrac on the pairwise kind: no fused variant, so the
     * scalar model): its data check must not look at panels never built */
    {
        fpemu_gemm_config cfg;
        if (fpemu_gemm_config_init(&cfg, "pairwise", "bf16", "bf16", NULL, 0) || fpemu_mma_model_set(&cfg.model, "fuse_nfrac", "30", NULL, 0))
            bail("pairwise bf16 fuse_nfrac=30");
        int lanes = -1;
        unsigned long long slow = 0;
        const int b0 = f32_every_level(&cfg, TM, TN, 33, a, b, c, d, r, "pairwise bf16 fuse_nfrac=30", &lanes, &slow);
        ok(b0 == 0 && lanes == 0, "pairwise bf16 with fuse_nfrac=30: the scalar model on every level (%d lanes)", lanes);
    }
    free(a), free(b);
}

/* Rowwise and tensorwise scales as the H200 applies them
 * (tests/data/rowwise-h200, from gpu/probes/rowwise_epilogue.py):
 * torch._scaled_mm of e4m3 codes with one f32 factor per row of A and per
 * column of B, or one for each operand, factors in [0.5, 2) that are not
 * powers of two, so the orders of the multiplies differ. The h100 model's
 * accumulator must be the H200's (the same call with factors 1), then
 * emu__gemm_scaled's epilogues give the recorded f32 and bf16 outputs bit
 * for bit; another order must miss some of them, or the data could not
 * tell the orders apart. */
static void rowwise_h200(void) {
    static const int shapes[][3] = {{64, 64, 16}, {64, 64, 32}};
    const fpemu_format *e4m3 = fpemu_format_get("e4m3", NULL, 0);
    const char *root = getenv("FPEMU_ROOT");
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
        char path[4200];
        snprintf(path, sizeof path, "%s/tests/data/rowwise-h200/%dx%dx%d.bin", root && *root ? root : ".", M, N, K);
        size_t want = (size_t)(M + N) * K + 4 * ((size_t)M + N + 5 * (size_t)M * N), got = 0;
        unsigned char *buf = malloc(want + 1);
        FILE *f = fopen(path, "rb");
        if (f) got = fread(buf, 1, want + 1, f), fclose(f);
        if (!f || got != want) {
            ok(0, "%s: %s (expected %zu bytes)", path, f ? "wrong size" : "not found (run in the repository, or set FPEMU_ROOT)", want);
            free(buf);
            continue;
        }
        float *va = malloc(sizeof(float) * M * K), *vb = malloc(sizeof(float) * N * K);
        float *sa = malloc(sizeof(float) * M), *sb = malloc(sizeof(float) * N);
        float *rec = malloc(sizeof(float) * 5 * M * N), *d = malloc(sizeof(float) * M * N);
        for (int i = 0; i < M * K; i++) va[i] = (float)fpemu_to_double(e4m3, buf[i]);
        for (int i = 0; i < N * K; i++) vb[i] = (float)fpemu_to_double(e4m3, buf[M * K + i]);
        const unsigned char *p = buf + (size_t)(M + N) * K;
        memcpy(sa, p, 4 * (size_t)M), memcpy(sb, p + 4 * (size_t)M, 4 * (size_t)N);
        memcpy(rec, p + 4 * ((size_t)M + N), 20 * (size_t)M * N);
        const float *acc = rec, *out32 = rec + M * N, *out16 = rec + 2 * M * N, *t32 = rec + 3 * M * N, *t16 = rec + 4 * M * N;
        fpemu_gemm_config cfg;
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        cfg.nthreads = 2;
        int rc = emu__gemm_scaled(&cfg, M, N, K, va, vb, NULL, NULL, K, 0, d, NULL);
        ok(!rc && !cmp_bits(d, acc, M * N, "accumulator"), "rowwise %dx%dx%d: the h100 model's accumulator is the H200's", M, N, K);
        rc = emu__gemm_scaled(&cfg, M, N, K, va, vb, sa, sb, K, 1, d, NULL);
        ok(!rc && !cmp_bits(d, out32, M * N, "f32 out"), "rowwise %dx%dx%d: f32 outputs fl32(fl32(acc * sb_j) * sa_i), as the H200's", M, N,
           K);
        cfg.outfmt = fpemu_format_get("bf16", NULL, 0);
        rc = emu__gemm_scaled(&cfg, M, N, K, va, vb, sa, sb, K, 1, d, NULL);
        ok(!rc && !cmp_bits(d, out16, M * N, "bf16 out"), "rowwise %dx%dx%d: bf16 outputs, that f32 rounded to bf16, as the H200's", M, N,
           K);
        int other = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                volatile float t = acc[i * N + j] * sa[i];
                float x = t * sb[j];
                other += memcmp(&x, &out32[i * N + j], 4) != 0;
            }
        ok(other > 0, "rowwise %dx%dx%d: A's factor first misses %d of %d recorded outputs", M, N, K, other, M * N);
        /* tensorwise: the same call with one factor each, sa[0] and sb[0]:
         * fl32(acc * fl32(sa * sb)), which one factor after the other misses */
        for (int i = 0; i < M; i++) sa[i] = sa[0];
        for (int j = 0; j < N; j++) sb[j] = sb[0];
        for (int of = 0; of < 2; of++) {
            cfg.outfmt = of ? fpemu_format_get("bf16", NULL, 0) : NULL;
            rc = emu__gemm_scaled(&cfg, M, N, K, va, vb, sa, sb, K, 0, d, NULL);
            ok(!rc && !cmp_bits(d, of ? t16 : t32, M * N, "tensorwise"), "tensorwise %dx%dx%d: %s outputs fl32(acc * fl32(sa * sb)), as the H200's",
               M, N, K, of ? "bf16" : "f32");
        }
        cfg.outfmt = NULL;
        emu__gemm_scaled(&cfg, M, N, K, va, vb, sa, sb, K, 1, d, NULL);
        other = 0;
        for (int i = 0; i < M * N; i++) other += memcmp(&d[i], &t32[i], 4) != 0;
        ok(other > 0, "tensorwise %dx%dx%d: one factor after the other misses %d of %d recorded outputs", M, N, K, other, M * N);
        free(va), free(vb), free(sa), free(sb), free(rec), free(d), free(buf);
    }
}

int main(void) {
    rs = tap_seed(77);
    /* two shapes: 21 x 19 (partial register blocks and panels only) and
     * 19 x 70 (whole 32-column panels of the f32 kernel and a partial one) */
    const int MM = 21, NM = 70, KM = 157;
    float *A = malloc(sizeof(float) * MM * KM), *B = malloc(sizeof(float) * KM * NM), *C = malloc(sizeof(float) * MM * NM);
    float *At = malloc(sizeof(float) * MM * KM), *Bt = malloc(sizeof(float) * KM * NM);
    float *D = malloc(sizeof(float) * MM * NM), *R = malloc(sizeof(float) * MM * NM), *X = malloc(sizeof(float) * MM * NM);
    for (int shape = 0; shape < 2; shape++) {
    const int M = shape ? 19 : 21, N = shape ? 70 : 19, K = shape ? 77 : 157;
    for (int i = 0; i < M * K; i++) A[i] = nrand() * 3;
    for (int i = 0; i < K * N; i++) B[i] = nrand() * 0.05f;
    for (int i = 0; i < M * N; i++) C[i] = nrand();
    for (int i = 0; i < M; i++) for (int k = 0; k < K; k++) At[(size_t)k * M + i] = A[(size_t)i * K + k];
    for (int k = 0; k < K; k++) for (int j = 0; j < N; j++) Bt[(size_t)j * K + k] = B[(size_t)k * N + j];

    static const struct { const char *model, *fmt, *recipe; } cases[] = {
        {"h100", "e4m3", "tensor"},  {"h100", "e4m3", "none"},      {"h100", "e5m2", "tensor-torchao"},
        {"h100", "e4m3", "rowwise"}, {"h100", "e4m3", "blockwise"}, {"h100", "e4m3", "given"},
        {"a100", "f16", "none"},     {"a100", "bf16", "none"},      {"a100", "tf32", "none"},
        {"v100", "f16", "tensor"},   {"ada", "e4m3", "tensor"},     {"h100", "f16", "none"},
        {"b200", "e4m3", "mx-floor"}, {"b200", "e4m3", "mx-rceil"}, {"b200", "e2m1", "nvfp4"},
        {"b200", "e2m1", "mx-floor"}, {"b200", "e3m2", "mx-rceil"}, {"exact", "e4m3", "tensor"},
        {"fma-seq", "f16", "none"},  {"pairwise", "bf16", "rowwise"}, {"t4", "f16", "none"},
        {"mi250", "f16", "none"},    {"mi250", "bf16", "none"},     {"mi250", "bf16", "none"},
        {"mi250", "f16", "none"},    {"mi250", "f16", "tensor"},    {"mi250", "f16", "blockwise"},
        {"mi250", "bf16", "rowwise"},
        /* AMD CDNA3 (the f32 kernel's fused variant), each with C (odd
         * index) and without */
        {"mi300", "f16", "none"},    {"mi300", "f16", "none"},      {"mi300", "bf16", "none"},
        {"mi300", "bf16", "none"},   {"mi300", "tf32", "none"},     {"mi300", "f32", "none"},
        {"mi300", "f32", "none"},    {"mi300", "tf32", "none"},     {"mi300", "f16", "tensor"},
        {"mi300", "f16", "tensor"},  {"mi300", "bf16", "rowwise"},  {"mi300", "bf16", "rowwise"},
        {"mi300", "e4m3fnuz", "tensor"}, {"mi300", "e4m3fnuz", "tensor"}, {"mi300", "e5m2fnuz", "none"},
        {"mi300", "e5m2fnuz", "none"},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        fpemu_gemm_config cfg;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, cases[ci].model, cases[ci].fmt, cases[ci].fmt, err, sizeof err)) bail("%s", err);
        if (fpemu_gemm_config_set_scaling(&cfg, cases[ci].recipe, err, sizeof err)) bail("%s", err);
        if (cfg.scaling.kind == FPEMU_GEMM_SCALING_GIVEN) cfg.scaling.scale_a = 16, cfg.scaling.scale_b = 512;
        const float *Cuse = ci % 2 ? C : NULL;
        fpemu_gemm_stats st;
        cfg.nthreads = 2;
        int rc = fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, Cuse, N, D, N, &st);
        fpemu_gemm_f32_reference(&cfg, M, N, K, A, K, 0, B, N, 0, Cuse, N, R, N, NULL);
        char what[128];
        snprintf(what, sizeof what, "%dx%dx%d %s %s %s%s", M, N, K, cases[ci].model, cases[ci].fmt, cases[ci].recipe, Cuse ? " +C" : "");
        ok(rc == 0 && cmp(D, R, M * N, what) == 0, "%s: fpemu_gemm_f32 == reference (kernel %d, %llu scalar outputs)", what, st.kernel,
           (unsigned long long)st.slow_outputs);
        if (!strcmp(cases[ci].model, "mi250")) { /* (bf16 rowwise: values up to bf16's max, every product overflows) */
            int ovf = !strcmp(cases[ci].recipe, "rowwise");
            ok(st.lanes == 16 && st.kernel >= 1 && st.slow_outputs == (ovf ? (uint64_t)M * N : 0),
               "%s: the pairwise kernel (%d lanes; %s)", what, st.lanes, ovf ? "every output flagged: inf" : "no output flagged");
        }
        /* mi300: the fused f32 kernel; bf16 rowwise scales each row's amax
         * to bf16's max, products beyond the f32 kernel's range: the scalar model */
        if (!strcmp(cases[ci].model, "mi300") && strcmp(cases[ci].recipe, "rowwise"))
            ok(st.kernel > 0 && st.lanes == 16 && st.slow_outputs < (uint64_t)M * N / 4, "%s: the fused f32 kernel (%d lanes)", what,
               st.lanes);
        else if (!strcmp(cases[ci].model, "mi300"))
            ok(st.lanes == 0, "%s: data beyond the f32 kernel's range: the scalar model", what);
        /* transposed operands, 1 and 3 threads, scalar only: same bits */
        cfg.nthreads = 3;
        fpemu_gemm_f32(&cfg, M, N, K, At, M, 1, Bt, K, 1, Cuse, N, X, N, NULL);
        ok(cmp(X, D, M * N, what) == 0, "%s: transposed A and B, 3 threads: same bits", what);
        cfg.nthreads = 1;
        cfg.scalar_only = 1;
        fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, Cuse, N, X, N, NULL);
        ok(cmp(X, D, M * N, what) == 0, "%s: scalar model only, 1 thread: same bits", what);
        cfg.scalar_only = 0;
        for (int isa = 1; isa <= 2; isa++) {
            fpemu_gemm_stats s2;
            cfg.isa = isa;
            fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, Cuse, N, X, N, &s2);
            ok(cmp(X, D, M * N, what) == 0, "%s: kernel isa %d: same bits", what, s2.kernel);
        }
        cfg.isa = 0;
        if (!strcmp(cases[ci].recipe, "tensor") && strcmp(cases[ci].model, "exact")) {
            direct_tensor(&cfg, M, N, K, A, B, Cuse, X);
            ok(cmp(X, D, M * N, what) == 0, "%s: equals an independent direct loop", what);
        }
        if (!strncmp(cases[ci].recipe, "mx-", 3)) {
            direct_mx(&cfg, cfg.scaling.mx_rule, M, N, K, A, B, Cuse, X);
            ok(cmp(X, D, M * N, what) == 0, "%s: equals an independent direct loop (scales in the MMA)", what);
        }
    }

    /* model options through the kernels: zero c ignored, AMD-style RD alignment,
     * an emax floor, 13-bit outputs on f16 inputs; rows of zeros */
    {
        static const char *opt[][4] = {{"h100", "e4m3", "zero_c", "ignore"}, {"a100", "f16", "zero_c", "ignore"},
                                       {"a100", "f16", "align", "rd"},      {"a100", "bf16", "align", "rd"},
                                       {"h100", "bf16", "emax_floor", "-20"}, {"a100", "f16", "out_mant", "13"},
                                       {"h100", "e4m3", "zero_product", "emin"}};
        float *A3 = malloc(sizeof(float) * M * K);
        memcpy(A3, A, sizeof(float) * M * K);
        for (int k = 0; k < K; k++) A3[2 * K + k] = 0, A3[5 * K + k] = k % 7 ? 0 : A[5 * K + k];
        for (size_t oi = 0; oi < sizeof opt / sizeof opt[0]; oi++) {
            fpemu_gemm_config cfg;
            char err[256];
            fpemu_gemm_config_init(&cfg, opt[oi][0], opt[oi][1], opt[oi][1], NULL, 0);
            if (fpemu_mma_model_set(&cfg.model, opt[oi][2], opt[oi][3], err, sizeof err)) bail("%s", err);
            fpemu_gemm_stats st;
            fpemu_gemm_f32(&cfg, M, N, K, A3, K, 0, B, N, 0, C, N, D, N, &st);
            fpemu_gemm_f32_reference(&cfg, M, N, K, A3, K, 0, B, N, 0, C, N, R, N, NULL);
            char what[96];
            snprintf(what, sizeof what, "%s %s %s=%s", opt[oi][0], opt[oi][1], opt[oi][2], opt[oi][3]);
            ok(cmp(D, R, M * N, what) == 0, "%s: kernel %d == reference", what, st.kernel);
        }
        /* f32-layout inputs (tf32) are decoded in the packing loops: zeros of
         * both signs and NaN, then subnormals (flushed, or kept) and inf,
         * under the options that change their decoding */
        for (int k = 0; k < K; k++) A3[3 * K + k] = k % 5 == 1 ? -0.0f : A[3 * K + k];
        A3[6 * K + 1] = NAN;
        static const char *t32[][2] = {{"subnormals", "keep"}, {"subnormals", "flush"}, {"zero_product", "emin"}};
        for (int sub = 0; sub < 3; sub++)
            for (size_t oi = 0; oi < sizeof t32 / sizeof t32[0]; oi++) {
                fpemu_gemm_config cfg;
                char err[256];
                fpemu_gemm_config_init(&cfg, "a100", "tf32", "tf32", NULL, 0);
                if (fpemu_mma_model_set(&cfg.model, t32[oi][0], t32[oi][1], err, sizeof err)) bail("%s", err);
                if (sub) A3[3 * K + 5] = 1e-39f, A3[3 * K + 10] = -3e-40f; /* subnormal inputs */
                if (sub == 2) A3[4 * K + 2] = INFINITY, cfg.sat = 0; /* (saturated, it would be tf32's largest value) */
                fpemu_gemm_stats st;
                fpemu_gemm_f32(&cfg, M, N, K, A3, K, 0, B, N, 0, C, N, D, N, &st);
                fpemu_gemm_f32_reference(&cfg, M, N, K, A3, K, 0, B, N, 0, C, N, R, N, NULL);
                char what[96];
                snprintf(what, sizeof what, "a100 tf32 %s=%s%s", t32[oi][0], t32[oi][1],
                         sub == 2 ? ", subnormal and inf inputs" : sub ? ", subnormal inputs" : "");
                /* the f32 kernel (16 lanes) unless a subnormal is kept (the inf's row
                 * goes to the scalar model) */
                const int want16 = sub == 0 || oi == 1;
                ok(cmp(D, R, M * N, what) == 0 && (!want16 || st.lanes == 16),
                   "%s, zero, -0 and NaN inputs: kernel %d, %d lanes == reference", what, st.kernel, st.lanes);
            }
        free(A3);
    }

    /* h100's measured rules in the kernel (emax floor -133, zero c ignored,
     * no -0 result), on bf16 and tf32 inputs near 2^-70 (products near the
     * floor, many below f32's range), signed zeros in A and C, a zero C row */
    {
        static const char *fm[] = {"bf16", "tf32"};
        float *A4 = malloc(sizeof(float) * M * K), *B4 = malloc(sizeof(float) * K * N), *C4 = malloc(sizeof(float) * M * N);
        for (int i = 0; i < M * K; i++) A4[i] = (i % 5 == 0) ? -0.0f : ldexpf(nrand(), -70 - (int)(urand() * 8));
        for (int i = 0; i < K * N; i++) B4[i] = ldexpf(nrand(), -70 - (int)(urand() * 8));
        for (int i = 0; i < M * N; i++) C4[i] = i < N ? 0.0f : (i % 3 == 0) ? -0.0f : ldexpf(nrand(), -140);
        for (int k = 0; k < K; k++) A4[3 * K + k] = -0.0f, B4[(size_t)k * N] = fabsf(B4[(size_t)k * N]);
        C4[3 * N] = -0.0f; /* D[3][0] = -0 + K products -0: IEEE -0, h100 +0 */
        for (size_t fi = 0; fi < 2; fi++) {
            fpemu_gemm_config cfg;
            fpemu_gemm_stats st;
            char err[256];
            if (fpemu_gemm_config_init(&cfg, "h100", fm[fi], fm[fi], err, sizeof err) ||
                fpemu_gemm_config_set_scaling(&cfg, "none", err, sizeof err))
                bail("%s", err);
            fpemu_gemm_f32(&cfg, M, N, K, A4, K, 0, B4, N, 0, C4, N, D, N, &st);
            fpemu_gemm_f32_reference(&cfg, M, N, K, A4, K, 0, B4, N, 0, C4, N, R, N, NULL);
            int negz = 0, tiny = 0;
            for (int i = 0; i < M * N; i++) negz += D[i] == 0 && signbit(D[i]), tiny += D[i] != 0 && fabsf(D[i]) < 0x1p-126f;
            ok(cmp(D, R, M * N, fm[fi]) == 0 && negz == 0 && tiny > 0,
               "h100 %s near the emax floor, signed zeros: kernel %d == reference, no -0 (%d subnormal results)",
               fm[fi], st.kernel, tiny);
        }
        free(A4), free(B4), free(C4);
        /* every product -0 and C = -0: IEEE gives -0, h100 +0 (a -0 C sends the
         * element to the scalar model; the kernel never makes -0 from a +0 c) */
        float Az[4 * 40], Bz[40 * 4], Cz[16], Dz[16], Rz[16];
        for (int i = 0; i < 160; i++) Az[i] = -0.0f, Bz[i] = 1.0f + (float)(i % 3);
        for (int i = 0; i < 16; i++) Cz[i] = -0.0f;
        for (int zs = 0; zs < 2; zs++) {
            fpemu_gemm_config cfg;
            fpemu_gemm_stats st;
            char err[256];
            if (fpemu_gemm_config_init(&cfg, "h100", "bf16", "bf16", err, sizeof err) ||
                fpemu_gemm_config_set_scaling(&cfg, "none", err, sizeof err) ||
                fpemu_mma_model_set(&cfg.model, "zero_sign", zs ? "ieee" : "plus", err, sizeof err))
                bail("%s", err);
            fpemu_gemm_f32(&cfg, 4, 4, 40, Az, 40, 0, Bz, 4, 0, Cz, 4, Dz, 4, &st);
            fpemu_gemm_f32_reference(&cfg, 4, 4, 40, Az, 40, 0, Bz, 4, 0, Cz, 4, Rz, 4, NULL);
            int neg = 0;
            for (int i = 0; i < 16; i++) neg += Dz[i] == 0 && signbit(Dz[i]);
            ok(cmp(Dz, Rz, 16, "zero sign") == 0 && neg == (zs ? 16 : 0),
               "h100 bf16 zero_sign=%s: -0 + 40 products -0 gives %s0 (kernel %d == reference)", zs ? "ieee" : "plus",
               zs ? "-" : "+", st.kernel);
        }
    }

    /* the f32 vectorised kernel is used for fp8/f16 presets, the f64 one for bf16 */
    {
        fpemu_gemm_config cfg;
        fpemu_gemm_stats st;
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, NULL, N, D, N, &st);
        ok(st.kernel >= 1, "h100 e4m3 runs a vectorised kernel (isa %d)", st.kernel);
    }

    /* special values and out-of-range results go through the scalar model:
     * the f64 kernel (a100 bf16) and the f32 kernel (a100 f16, h100 e4m3),
     * with c in the MMA (subnormal, tiny below 2^(nfrac-126), -0, NaN, huge) */
    static const char *spm[][2] = {{"a100", "bf16"}, {"a100", "f16"}, {"h100", "e4m3"}, {"v100", "f16"}};
    for (size_t si = 0; si < sizeof spm / sizeof spm[0]; si++) {
        fpemu_gemm_config cfg;
        fpemu_gemm_config_init(&cfg, spm[si][0], spm[si][1], spm[si][1], NULL, 0);
        cfg.sat = 0; /* let inf through the cast (sat would clamp it to max) */
        float *A2 = malloc(sizeof(float) * M * K);
        memcpy(A2, A, sizeof(float) * M * K);
        A2[3] = INFINITY;
        A2[K + 5] = NAN;
        A2[2 * K + 1] = 3e38f; /* overflows f32 when multiplied */
        A2[3 * K + 2] = 1e-38f, A2[3 * K + 3] = 0; /* tiny: subnormal results */
        for (int k = 0; k < K; k++) A2[4 * K + k] = k == 7 ? 1e-39f : 0;
        for (int k = 0; k < K; k++) A2[6 * K + k] = 0; /* a zero row: c alone */
        float *C2 = malloc(sizeof(float) * M * N);
        memcpy(C2, C, sizeof(float) * M * N);
        C2[0] = -0.0f, C2[1] = NAN, C2[2] = 1e-40f;
        for (int j = 0; j < N; j++) C2[6 * N + j] = j % 3 == 0 ? 1e-33f * (float)(j + 1) : j % 3 == 1 ? 3e38f : 1e-44f;
        C2[5 * N + 4] = 1e-36f, C2[5 * N + N - 1] = -2e-38f, C2[N + 2] = 3.4e38f;
        fpemu_gemm_stats st;
        fpemu_gemm_f32(&cfg, M, N, K, A2, K, 0, B, N, 0, C2, N, D, N, &st);
        fpemu_gemm_f32_reference(&cfg, M, N, K, A2, K, 0, B, N, 0, C2, N, R, N, NULL);
        ok(cmp(D, R, M * N, "specials") == 0,
           "%dx%dx%d %s %s: inf/NaN/huge/tiny inputs and -0/NaN/subnormal/tiny/huge C: same as the scalar model (%d lanes, %llu scalar outputs)",
           M, N, K, spm[si][0], spm[si][1], st.lanes, (unsigned long long)st.slow_outputs);
        if (si == 0) ok(isnan(D[N + 3]) && isinf(D[3]), "row with NaN gives NaN, row with inf gives inf (%g %g)", D[N + 3], D[3]);
        for (int isa = 1; isa <= 2; isa++) {
            cfg.isa = isa;
            fpemu_gemm_f32(&cfg, M, N, K, A2, K, 0, B, N, 0, C2, N, X, N, NULL);
            ok(cmp(X, R, M * N, "specials") == 0, "%s %s specials: kernel isa %d: same bits", spm[si][0], spm[si][1], isa);
        }
        free(A2), free(C2);
    }

    /* promotion: h100 fp8 with promote 128 differs from no promotion, equals the reference */
    {
        fpemu_gemm_config cfg;
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        fpemu_gemm_config_set_scaling(&cfg, "tensor", NULL, 0);
        cfg.promote = 64;
        fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, D, N, NULL);
        fpemu_gemm_f32_reference(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, R, N, NULL);
        ok(cmp(D, R, M * N, "promote") == 0, "promote=64: same as the reference");
        cfg.outfmt = fpemu_format_get("bf16", NULL, 0);
        fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, C, N, D, N, NULL);
        int allbf16 = 1;
        for (int i = 0; i < M * N; i++) {
            uint32_t u;
            memcpy(&u, &D[i], 4);
            if (u & 0xFFFF) allbf16 = 0;
        }
        ok(allbf16, "outfmt=bf16: every output is a bf16 value");
    }

    } /* shapes */

    /* codes in, scales given: fpemu_gemm_codes equals fpemu_mma_dot per element */
    {
        fpemu_gemm_config cfg;
        fpemu_gemm_config_init(&cfg, "b200", "e4m3", "e4m3", NULL, 0);
        const fpemu_format *e8m0 = fpemu_format_get("e8m0", NULL, 0);
        int m = 5, n = 7, k = 64;
        uint64_t *ac = malloc(8 * (size_t)m * k), *bc = malloc(8 * (size_t)k * n), sa[10], sb[14];
        for (int i = 0; i < m * k; i++) ac[i] = (uint64_t)(fpemu_random64(rs, (uint64_t)i) & 0x7E);
        for (int i = 0; i < k * n; i++) bc[i] = (uint64_t)(fpemu_random64(rs + 1, (uint64_t)i) & 0xFE) ^ 0x01;
        for (int i = 0; i < 10; i++) sa[i] = 120 + (uint64_t)i;
        for (int i = 0; i < 14; i++) sb[i] = 125 + (uint64_t)(i % 5);
        fpemu_gemm_codes(&cfg, m, n, k, ac, bc, NULL, e8m0, sa, sb, 32, D, NULL);
        int bad = 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                uint64_t a[64], b[64], s1[2] = {sa[i * 2], sa[i * 2 + 1]}, s2[2] = {sb[j], sb[n + j]};
                for (int q = 0; q < k; q++) a[q] = ac[i * k + q], b[q] = bc[q * n + j];
                uint64_t d = fpemu_mma_dot_scaled(&cfg.model, a, b, 64, 0, e8m0, s1, s2, 32, NULL);
                float x = (float)fpemu_to_double(cfg.model.fd, d);
                if (memcmp(&x, &D[i * n + j], 4) && !(isnan(x) && isnan(D[i * n + j]))) bad++;
            }
        is_int(bad, 0, "fpemu_gemm_codes with e8m0 scales == fpemu_mma_dot_scaled per element");
        free(ac), free(bc);
    }

    /* argument checking */
    {
        fpemu_gemm_config cfg;
        char err[200];
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        is_int(fpemu_gemm_check(&cfg, 4, 4, 4, 3, 0, 4, 0, 4, 4, err, sizeof err), -1, "lda too small refused: %s", err);
        is_int(fpemu_gemm_f32(&cfg, -1, 4, 4, A, 4, 0, B, 4, 0, NULL, 4, D, 4, NULL), -1, "negative M refused");
        is_int(fpemu_gemm_config_set_scaling(&cfg, "magic", err, sizeof err), -1, "unknown recipe refused: %s", err);
        fpemu_gemm_config_set_scaling(&cfg, "blockwise", NULL, 0);
        cfg.promote = 0;
        is_int(fpemu_gemm_check(&cfg, 4, 4, 4, 4, 0, 4, 0, 4, 4, err, sizeof err), -1, "blockwise without promotion refused: %s", err);
        is_int(fpemu_gemm_config_init(&cfg, "v100", "e4m3", "e4m3", err, sizeof err), -1, "v100 e4m3 refused: %s", err);
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        fpemu_gemm_config_set_scaling(&cfg, "nvfp4", NULL, 0);
        is_int(fpemu_gemm_check(&cfg, 4, 4, 4, 4, 0, 4, 0, 4, 4, err, sizeof err), -1, "nvfp4 with e4m3 elements refused: %s", err);
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        is_int(fpemu_gemm_f32(&cfg, 3, 2, 0, A, 0, 0, B, 2, 0, NULL, 2, D, 2, NULL), 0, "K = 0 accepted");
        ok(D[0] == 0 && D[5] == 0, "K = 0 gives zeros");
    }
    /* fpemu_gemm_check enforces the configuration's invariants: an out-of-range
     * recipe (quantise left the codes unset: SEGV) or MX rule, afmt/bfmt
     * other than the model's (tables of one format indexed with codes of
     * another), c/d other than f32, a model edited without fpemu_mma_model_finish */
    {
        fpemu_gemm_config cfg;
        char err[200];
        float a4[4] = {1, 2, 3, 4}, d4[4];
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        cfg.scaling.kind = (fpemu_gemm_scaling_kind)99;
        is_int(fpemu_gemm_check(&cfg, 2, 2, 2, 2, 0, 2, 0, 2, 2, err, sizeof err), -1, "scaling kind 99 refused: %s", err);
        is_int(fpemu_gemm_f32(&cfg, 2, 2, 2, a4, 2, 0, a4, 2, 0, NULL, 2, d4, 2, NULL), -1, "... and fpemu_gemm_f32 returns -1");
        fpemu_gemm_config_set_scaling(&cfg, "mx-floor", NULL, 0);
        cfg.scaling.mx_rule = (fpemu_scaling_mx_rule)77;
        is_int(fpemu_gemm_check(&cfg, 2, 2, 2, 2, 0, 2, 0, 2, 2, err, sizeof err), -1, "MX rule 77 refused: %s", err);
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        cfg.afmt = fpemu_format_get("f16", NULL, 0);
        is_int(fpemu_gemm_check(&cfg, 2, 2, 2, 2, 0, 2, 0, 2, 2, err, sizeof err), -1, "afmt f16 on an e4m3 model refused: %s", err);
        is_int(fpemu_gemm_f32(&cfg, 2, 2, 2, a4, 2, 0, a4, 2, 0, NULL, 2, d4, 2, NULL), -1, "... and fpemu_gemm_f32 returns -1");
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        cfg.bfmt = fpemu_format_get("e5m2", NULL, 0);
        is_int(fpemu_gemm_check(&cfg, 2, 2, 2, 2, 0, 2, 0, 2, 2, err, sizeof err), -1, "bfmt e5m2 on an e4m3 model refused: %s", err);
        fpemu_gemm_config_init(&cfg, "h100", "f16", "f16", NULL, 0);
        const fpemu_format *f16 = fpemu_format_get("f16", NULL, 0);
        fpemu_mma_model_preset(&cfg.model, "h100", f16, f16, f16, f16, NULL, 0);
        is_int(fpemu_gemm_check(&cfg, 2, 2, 2, 2, 0, 2, 0, 2, 2, err, sizeof err), -1, "an f16-accumulating model refused: %s", err);
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        cfg.model.out_mant = 40;
        is_int(fpemu_gemm_check(&cfg, 2, 2, 2, 2, 0, 2, 0, 2, 2, err, sizeof err), -1, "out_mant 40 (not finished) refused: %s", err);
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        is_int(fpemu_gemm_check(&cfg, 2, 2, 2, 2, 0, 2, 0, 2, 2, err, sizeof err), 0, "the initialised configuration passes");
    }

    /* sizes fpemu_gemm_check accepts up to INT_MAX (promotion interval, blockwise
     * tiles, fpemu_gemm_codes' scale block): no signed overflow in the ceiling
     * divisions (the chunk count went negative); blockwise with K = 0 and
     * N > block_b_cols (chunk_dq read past the scale arrays) */
    {
        fpemu_gemm_config cfg;
        float a4[4] = {1.0f, 1.25f, 1.5f, 1.75f}, b4[4] = {1.0f, 0.5f, 2.0f, 0.75f}, want[2], got[2];
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        cfg.nthreads = 1;
        fpemu_gemm_f32(&cfg, 1, 1, 2, a4, 2, 0, b4, 1, 0, NULL, 1, want, 1, NULL);
        cfg.promote = INT_MAX;
        got[0] = -1;
        is_int(fpemu_gemm_f32(&cfg, 1, 1, 2, a4, 2, 0, b4, 1, 0, NULL, 1, got, 1, NULL), 0, "promote = INT_MAX accepted");
        ok(cmp(got, want, 1, "promote INT_MAX") == 0, "promote = INT_MAX (one chunk) equals no promotion: %a", got[0]);
        got[0] = -1;
        fpemu_gemm_f32_reference(&cfg, 1, 1, 2, a4, 2, 0, b4, 1, 0, NULL, 1, got, 1, NULL);
        ok(cmp(got, want, 1, "promote INT_MAX ref") == 0, "... and so does the reference: %a", got[0]);
        fpemu_gemm_config_set_scaling(&cfg, "blockwise", NULL, 0);
        cfg.scaling.block_a_rows = 2;
        fpemu_gemm_f32(&cfg, 2, 1, 2, a4, 2, 0, b4, 1, 0, NULL, 1, want, 1, NULL);
        cfg.scaling.block_k = cfg.promote = INT_MAX;
        got[0] = got[1] = -1;
        fpemu_gemm_f32(&cfg, 2, 1, 2, a4, 2, 0, b4, 1, 0, NULL, 1, got, 1, NULL);
        ok(cmp(got, want, 2, "block_k INT_MAX") == 0, "blockwise block_k = promote = INT_MAX: one K tile as with 128");
        cfg.scaling.block_k = cfg.promote = 128;
        cfg.scaling.block_a_rows = cfg.scaling.block_b_cols = INT_MAX;
        got[0] = got[1] = -1;
        fpemu_gemm_f32(&cfg, 2, 1, 2, a4, 2, 0, b4, 1, 0, NULL, 1, got, 1, NULL);
        ok(cmp(got, want, 2, "tiles INT_MAX") == 0, "blockwise block_a_rows = block_b_cols = INT_MAX: the tiles of 2 x 1");
        fpemu_gemm_config_init(&cfg, "b200", "e4m3", "e4m3", NULL, 0);
        const fpemu_format *e8m0 = fpemu_format_get("e8m0", NULL, 0);
        uint64_t ac[2] = {0x38, 0x39}, bc[2] = {0x3A, 0x30}, s1[1] = {126}, s2[1] = {129};
        fpemu_gemm_codes(&cfg, 1, 1, 2, ac, bc, NULL, e8m0, s1, s2, 32, want, NULL);
        got[0] = -1;
        fpemu_gemm_codes(&cfg, 1, 1, 2, ac, bc, NULL, e8m0, s1, s2, INT_MAX, got, NULL);
        ok(cmp(got, want, 1, "sblock INT_MAX") == 0, "fpemu_gemm_codes sblock = INT_MAX: one scale block as with 32 (%a)", got[0]);
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        fpemu_gemm_config_set_scaling(&cfg, "blockwise", NULL, 0);
        float c129[129], d129[129];
        for (int j = 0; j < 129; j++) c129[j] = (float)(j + 1) * 0.5f, d129[j] = NAN;
        is_int(fpemu_gemm_f32(&cfg, 1, 129, 0, a4, 0, 0, b4, 129, 0, NULL, 129, d129, 129, NULL), 0, "blockwise K = 0, N = 129 accepted");
        int nz = 0;
        for (int j = 0; j < 129; j++) nz += memcmp(&d129[j], &(float){0.0f}, 4) != 0;
        is_int(nz, 0, "... every output is +0");
        fpemu_gemm_f32(&cfg, 1, 129, 0, a4, 0, 0, b4, 129, 0, c129, 129, d129, 129, NULL);
        ok(cmp(d129, c129, 129, "K = 0 with C") == 0, "... and D = C with C");
        for (int j = 0; j < 129; j++) d129[j] = NAN;
        fpemu_gemm_f32_reference(&cfg, 1, 129, 0, a4, 0, 0, b4, 129, 0, c129, 129, d129, 129, NULL);
        ok(cmp(d129, c129, 129, "K = 0 with C, reference") == 0, "... in the reference too");
    }

    /* fpemu_gemm_codes ignores bits outside the codes' fields (fpemu.h): they
     * indexed the decode tables out of bounds. Junk above the field (and in
     * tf32's pad), on every path: f32 kernel, f64 kernel, scalar model,
     * e8m0 scales */
    {
        static const struct { const char *model, *fmt; int scalar, scaled; } jc[] = {
            {"h100", "e4m3", 0, 0}, {"h100", "e4m3", 1, 0}, {"a100", "bf16", 0, 0}, {"a100", "tf32", 0, 0},
            {"b200", "e2m1", 0, 0}, {"b200", "e4m3", 0, 1}};
        const fpemu_format *e8m0 = fpemu_format_get("e8m0", NULL, 0);
        for (size_t t = 0; t < sizeof jc / sizeof jc[0]; t++) {
            fpemu_gemm_config cfg;
            if (fpemu_gemm_config_init(&cfg, jc[t].model, jc[t].fmt, jc[t].fmt, NULL, 0)) bail("%s %s", jc[t].model, jc[t].fmt);
            cfg.nthreads = 1, cfg.scalar_only = jc[t].scalar;
            const fpemu_format *f = cfg.afmt;
            uint64_t field = (f->sign_bit | f->mag_mask) << f->pad;
            enum { JM = 3, JN = 5, JK = 64 };
            uint64_t a[JM * JK], b[JK * JN], aj[JM * JK], bj[JK * JN], sa[JM * 2], sb[2 * JN], saj[JM * 2], sbj[2 * JN];
            for (int i = 0; i < JM * JK; i++) {
                a[i] = fpemu_random64(rs + t, (uint64_t)i) & field;
                aj[i] = a[i] | (fpemu_random64(rs + t + 100, (uint64_t)i) & ~field);
            }
            for (int i = 0; i < JK * JN; i++) {
                b[i] = fpemu_random64(rs + t + 200, (uint64_t)i) & field;
                bj[i] = b[i] | (fpemu_random64(rs + t + 300, (uint64_t)i) & ~field);
            }
            for (int i = 0; i < JM * 2; i++) sa[i] = 120 + (uint64_t)i, saj[i] = sa[i] | (UINT64_C(0xABC) << 8);
            for (int i = 0; i < 2 * JN; i++) sb[i] = 125 + (uint64_t)(i % 5), sbj[i] = sb[i] | (UINT64_C(1) << 63);
            float dc[JM * JN], dj[JM * JN];
            int sc = jc[t].scaled;
            fpemu_gemm_codes(&cfg, JM, JN, JK, a, b, NULL, sc ? e8m0 : NULL, sc ? sa : NULL, sc ? sb : NULL, 32, dc, NULL);
            fpemu_gemm_codes(&cfg, JM, JN, JK, aj, bj, NULL, sc ? e8m0 : NULL, sc ? saj : NULL, sc ? sbj : NULL, 32, dj, NULL);
            ok(cmp(dj, dc, JM * JN, "junk bits") == 0, "fpemu_gemm_codes %s %s%s%s: codes with junk outside the field give the clean codes' result",
               jc[t].model, jc[t].fmt, jc[t].scalar ? " (scalar)" : "", sc ? " with e8m0 scales" : "");
        }
        fpemu_gemm_config cfg;
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        float d4[4] = {NAN, NAN, NAN, NAN};
        is_int(fpemu_gemm_codes(&cfg, 2, 2, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, d4, NULL), 0, "fpemu_gemm_codes K = 0 with NULL A and B");
        ok(d4[0] == 0 && d4[3] == 0, "... gives zeros");
        uint64_t one[4] = {0x38, 0x38, 0x38, 0x38};
        is_int(fpemu_gemm_codes(&cfg, 2, 2, 2, NULL, one, NULL, NULL, NULL, NULL, 0, d4, NULL), -1, "fpemu_gemm_codes K = 2 with NULL A refused");
        is_int(fpemu_gemm_f32(&cfg, 2, 2, 2, NULL, 2, 0, d4, 2, 0, NULL, 2, d4, 2, NULL), -1, "fpemu_gemm_f32 K = 2 with NULL A refused");
    }

    /* zero_c = ignore and no product taking part: every kernel gives the
     * scalar model's +0 (SSE2 gave -0: the f64 kernel's 2^nfrac / 2^-1060
     * overflowed, 0 * inf = NaN, cvttpd2dq(NaN) = INT_MIN) */
    {
        static const char *zm[][3] = {{"a100", "bf16", "ignore"}, {"a100", "f16", "ignore"}, {"h100", "bf16", NULL},
                                      {"a100", "tf32", "ignore"}, {"a100", "bf16", "emin"}};
        for (size_t t = 0; t < sizeof zm / sizeof zm[0]; t++) {
            fpemu_gemm_config cfg;
            if (fpemu_gemm_config_init(&cfg, zm[t][0], zm[t][1], zm[t][1], NULL, 0)) bail("%s %s", zm[t][0], zm[t][1]);
            if (zm[t][2] && fpemu_mma_model_set(&cfg.model, "zero_c", zm[t][2], NULL, 0)) bail("zero_c");
            cfg.nthreads = 1;
            const fpemu_format *f = cfg.afmt;
            uint64_t a[2] = {f->sign_bit << f->pad, 0}, b[2] = {0, 0}; /* (-0)(+0) + (+0)(+0) */
            float ref = NAN, d;
            int bad = 0;
            for (int isa = 0; isa <= 3; isa++) {
                cfg.isa = isa, cfg.scalar_only = isa == 0;
                d = NAN;
                fpemu_gemm_codes(&cfg, 1, 1, 2, a, b, NULL, NULL, NULL, NULL, 0, &d, NULL);
                if (isa == 0) ref = d;
                else if (memcmp(&d, &ref, 4)) bad++, diag("isa %d: %a, the scalar model %a", isa, d, ref);
            }
            ok(!bad && memcmp(&ref, &(float){0.0f}, 4) == 0, "%s %s zero_c=%s: zero products give +0 on every kernel", zm[t][0],
               zm[t][1], zm[t][2] ? zm[t][2] : "ignore");
        }
    }

    /* the group rule goes by the OCP e2m1 parameters in fpemu_gemm_codes as in
     * fpemu_mma_dot_scaled: a custom format equal to e2m1 (another name) took the
     * vectorised kernel's ungrouped sums while the scalar model grouped */
    {
        fpemu_gemm_config cfg;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, "b200", "e2m1", "e2m1", err, sizeof err)) bail("%s", err);
        const fpemu_format *ce = fpemu_format_get("custom:e=2,m=1,bias=1,inf=no,nan=none", err, sizeof err);
        if (!ce) bail("%s", err);
        cfg.afmt = cfg.bfmt = cfg.model.fa = cfg.model.fb = ce;
        if (fpemu_mma_model_finish(&cfg.model, err, sizeof err)) bail("%s", err);
        cfg.nthreads = 1;
        const fpemu_format *e8m0 = fpemu_format_get("e8m0", NULL, 0);
        enum { EM = 3, EN = 4, EK = 64 };
        uint64_t a[EM * EK], b[EK * EN], sa[EM * 2], sb[2 * EN];
        float d[EM * EN];
        int bad = 0;
        for (int t = 0; t < 10; t++) {
            for (int i = 0; i < EM * EK; i++) a[i] = fpemu_random64(rs + (uint64_t)t, (uint64_t)i) & 0xF;
            for (int i = 0; i < EK * EN; i++) b[i] = fpemu_random64(rs + 1000 + (uint64_t)t, (uint64_t)i) & 0xF;
            for (int i = 0; i < EM * 2; i++) sa[i] = 100 + fpemu_random64(rs + 2000 + (uint64_t)t, (uint64_t)i) % 40;
            for (int i = 0; i < 2 * EN; i++) sb[i] = 100 + fpemu_random64(rs + 3000 + (uint64_t)t, (uint64_t)i) % 40;
            if (fpemu_gemm_codes(&cfg, EM, EN, EK, a, b, NULL, e8m0, sa, sb, 32, d, NULL)) bail("fpemu_gemm_codes refused");
            for (int i = 0; i < EM; i++)
                for (int j = 0; j < EN; j++) {
                    uint64_t x[EK], y[EK], s1[2] = {sa[i * 2], sa[i * 2 + 1]}, s2[2] = {sb[j], sb[EN + j]};
                    for (int q = 0; q < EK; q++) x[q] = a[i * EK + q], y[q] = b[q * EN + j];
                    float w = (float)fpemu_to_double(cfg.model.fd, fpemu_mma_dot_scaled(&cfg.model, x, y, EK, 0, e8m0, s1, s2, 32, NULL));
                    bad += memcmp(&w, &d[i * EN + j], 4) != 0;
                }
        }
        is_int(bad, 0, "b200 with a custom e2m1 (OCP parameters) and e8m0 scales: fpemu_gemm_codes == fpemu_mma_dot_scaled");
    }

    /* A non-finite operand under the current-scaling recipes: TE's rule
     * (tensor) takes scale 1 and saturates the inf, so every output is
     * finite; torchao's (tensor-torchao) scale fmt_max / inf = 0 casts every
     * element to 0 (the inf to NaN) and dequantises by 1/0, so every output
     * is NaN, as torch._scaled_mm's; rowwise (torchao) does that to the inf's
     * row only, and a NaN scales its row by NaN. */
    {
        enum { m = 4, n = 3, k = 40 };
        float a[m * k], b[k * n], d[m * n];
        for (int i = 0; i < m * k; i++) a[i] = (float)((i % 9) - 4) / 4;
        for (int i = 0; i < k * n; i++) b[i] = (float)((i % 7) - 3) / 8;
        a[1 * k + 5] = INFINITY;
        const char *rec[3] = {"tensor", "tensor-torchao", "rowwise"};
        for (int t = 0; t < 3; t++) {
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
            fpemu_gemm_config_set_scaling(&cfg, rec[t], NULL, 0);
            if (t == 2) a[2 * k + 9] = NAN;
            if (fpemu_gemm_f32(&cfg, m, n, k, a, k, 0, b, n, 0, NULL, n, d, n, NULL)) bail("fpemu_gemm_f32 refused %s", rec[t]);
            int nan_out = 0, want = 0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    int expect_nan = t == 1 || (t == 2 && (i == 1 || i == 2));
                    want += expect_nan ? isnan(d[i * n + j]) != 0 : isfinite(d[i * n + j]) != 0;
                    nan_out += isnan(d[i * n + j]) != 0;
                }
            is_int(want, m * n, "%s with an inf%s in A: %d NaN outputs, as its framework gives", rec[t],
                   t == 2 ? " and a NaN" : "", nan_out);
        }
    }

    /* blockwise (DeepGEMM's torch arithmetic): an inf in A's 1x128 tile of
     * row 1 makes row 1's outputs NaN; an inf in B's 128x128 block (all
     * three columns here) makes every output NaN; with pow2 (TE's rule,
     * scale 1) the inf saturates and every output is finite */
    {
        enum { m = 4, n = 3, k = 40 };
        float a[m * k], b[k * n], d[m * n];
        for (int i = 0; i < m * k; i++) a[i] = (float)((i % 9) - 4) / 4;
        for (int i = 0; i < k * n; i++) b[i] = (float)((i % 7) - 3) / 8;
        for (int t = 0; t < 3; t++) {
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
            fpemu_gemm_config_set_scaling(&cfg, "blockwise", NULL, 0);
            cfg.scaling.block_pow2 = t == 2;
            float a1 = a[1 * k + 5], b1 = b[7 * n + 2];
            if (t == 1) b[7 * n + 2] = INFINITY;
            else a[1 * k + 5] = INFINITY;
            if (fpemu_gemm_f32(&cfg, m, n, k, a, k, 0, b, n, 0, NULL, n, d, n, NULL)) bail("fpemu_gemm_f32 refused blockwise");
            a[1 * k + 5] = a1, b[7 * n + 2] = b1;
            int want = 0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    int expect_nan = t == 1 || (t == 0 && i == 1);
                    want += expect_nan ? isnan(d[i * n + j]) != 0 : isfinite(d[i * n + j]) != 0;
                }
            is_int(want, m * n, "blockwise%s with an inf in %s: NaN outputs %s", t == 2 ? " pow2 (TE)" : "", t == 1 ? "B" : "A",
                   t == 0 ? "in its row" : t == 1 ? "everywhere (one 128x128 block)" : "nowhere (scale 1)");
        }
    }

    /* blockwise at sizes past one row tile (64 rows) and one 16-lane group,
     * K not a multiple of 128 (a short last chunk), with and without C:
     * the vectorised promotion (AVX-512) against the scalar model on every
     * kernel level and on 1 to 3 threads; then with inf/NaN in A and B,
     * and with a row of A and a column of B near f32's top (the two decode
     * factors' product overflows: the dequantisation's inf and NaN) and
     * others near its bottom (the product underflows) */
    {
        enum { m = 150, n = 83, k = 300 };
        static float a[m * k], b[k * n], c[m * n], d[m * n], r[m * n];
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < m * k; i++) a[i] = nrand() * (i % 13 == 0 ? 30 : 1);
            for (int i = 0; i < k * n; i++) b[i] = nrand() * 0.1f;
            for (int i = 0; i < m * n; i++) c[i] = nrand();
            if (t == 1) { /* A's: their rows' outputs NaN; C's: their own */
                a[3 * k + 200] = INFINITY, a[70 * k + 7] = NAN, a[71 * k + 299] = -INFINITY;
                c[5 * n + 9] = INFINITY, c[100 * n + 33] = NAN, c[6 * n + 80] = -INFINITY;
            }
            if (t == 3) b[150 * n + 4] = -INFINITY, b[20 * n + 80] = NAN; /* every output NaN (the 128x128 blocks span n) */
            if (t == 2) {
                for (int kk = 0; kk < k; kk++) a[9 * k + kk] *= 1e30f, a[90 * k + kk] *= 1e-25f;
                for (int kk = 0; kk < 128; kk++) b[kk * n + 17] *= 1e31f, b[kk * n + 40] *= 1e-30f;
                for (int kk = 128; kk < k; kk++) b[kk * n + 70] *= 3e30f;
                a[9 * k + 5] = 0, a[9 * k + 131] = 0;
            }
            for (int wc = 0; wc < 2; wc++) {
                fpemu_gemm_config cfg;
                fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
                fpemu_gemm_config_set_scaling(&cfg, "blockwise", NULL, 0);
                const float *cu = wc ? c : NULL;
                char what[128];
                snprintf(what, sizeof what, "blockwise %dx%dx%d%s%s", m, n, k,
                         t == 1 ? " inf/NaN in A" : t == 2 ? " extreme scales" : t == 3 ? " inf/NaN in B" : "", wc ? " +C" : "");
                int lanes = 0;
                unsigned long long slow = 0;
                int bad = f32_vs_ref(&cfg, m, n, k, a, b, cu, &lanes, &slow, what);
                fpemu_gemm_f32_reference(&cfg, m, n, k, a, k, 0, b, n, 0, cu, n, r, n, NULL);
                for (int th = 1; th <= 3; th++) {
                    cfg.nthreads = th;
                    if (fpemu_gemm_f32(&cfg, m, n, k, a, k, 0, b, n, 0, cu, n, d, n, NULL)) bad++;
                    bad += cmp(d, r, m * n, what);
                }
                int nonfin = 0;
                for (int i = 0; i < m * n; i++) nonfin += !isfinite(r[i]);
                ok(bad == 0 && lanes == 16, "%s: == the scalar model on every level, 1-3 threads (%d lanes, %llu scalar outputs, %d inf/NaN outputs)",
                   what, lanes, slow, nonfin);
            }
        }
    }

    /* ---- emu/recipe.h: the quantisation and the scaled GEMM the engine shares ---- */
    {
        enum { m = 13, n = 9, k = 300 };
        static float a[m * k], b[k * n], bt[n * k], va[m * k], vb[n * k], d1[m * n], d2[m * n];
        static float da[m * 19], db[n * 19], dec2[m * 19], enc[m * 19], bam[m * 19], w[m * k]; /* nkb <= 19 */
        static uint64_t ca[m * k];
        for (int i = 0; i < m * k; i++) a[i] = nrand() * (i % 11 == 0 ? 40 : 1);
        for (int i = 0; i < k * n; i++) b[i] = nrand() * 0.1f;
        a[3 * k + 200] = INFINITY, a[5 * k + 7] = NAN, b[150 * n + 4] = -INFINITY;
        for (int kk = 0; kk < k; kk++) for (int j = 0; j < n; j++) bt[(size_t)j * k + kk] = b[(size_t)kk * n + j];
        const fpemu_format *e4m3 = fpemu_format_get("e4m3", NULL, 0), *e2m1 = fpemu_format_get("e2m1", NULL, 0);
        static const char *const recipes[] = {"none", "tensor", "tensor-torchao", "given", "rowwise", "blockwise",
                                              "mx-floor", "mx-rceil", "nvfp4"};
        for (size_t ri = 0; ri < sizeof recipes / sizeof recipes[0]; ri++) {
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, "b200", "e4m3", "e4m3", NULL, 0);
            fpemu_gemm_config_set_scaling(&cfg, recipes[ri], NULL, 0);
            cfg.scaling.scale_a = 3.0f;
            const fpemu_format *f = cfg.scaling.kind == FPEMU_GEMM_SCALING_NVFP4 ? e2m1 : e4m3;
            for (int tr = 1; tr <= 5; tr += 4) {
                fpemu_cast_stats s1, s2;
                memset(&s1, 0, sizeof s1), memset(&s2, 0, sizeof s2);
                int nkb = emu__quant_nkb(&cfg.scaling, k);
                emu_quant oc = {.codes = ca, .dec = da, .st = &s1}, ov = {.vals = va, .dec = dec2, .enc = enc, .bamax = bam, .st = &s2};
                int rc = emu__quantize(&cfg.scaling, f, m, k, a, tr, 1, NULL, &oc, NULL, 0);
                rc |= emu__quantize(&cfg.scaling, f, m, k, a, tr, 1, NULL, &ov, NULL, 0);
                int bad = 0;
                for (int i = 0; i < m * k; i++) {
                    float y = (float)fpemu_to_double(f, ca[i]);
                    if (memcmp(&y, &va[i], 4) && !(isnan(y) && isnan(va[i]))) bad++;
                }
                if (bad || memcmp(&s1, &s2, sizeof s1))
                    diag("%d values differ; counts n %llu/%llu ovf %llu/%llu sat %llu/%llu unf %llu/%llu sub %llu/%llu nonfin %llu/%llu amax %g/%g",
                         bad, (unsigned long long)s1.n, (unsigned long long)s2.n, (unsigned long long)s1.overflow,
                         (unsigned long long)s2.overflow, (unsigned long long)s1.saturated, (unsigned long long)s2.saturated,
                         (unsigned long long)s1.underflow, (unsigned long long)s2.underflow, (unsigned long long)s1.subnormal,
                         (unsigned long long)s2.subnormal, (unsigned long long)s1.nonfinite_in, (unsigned long long)s2.nonfinite_in,
                         s1.amax, s2.amax);
                ok(!rc && !bad && !memcmp(&s1, &s2, sizeof s1) && !memcmp(da, dec2, sizeof(float) * m * nkb) &&
                       (oc.tensor_enc == ov.tensor_enc || (isnan(oc.tensor_enc) && isnan(ov.tensor_enc))),
                   "emu__quantize %s (tile rows %d): values = decode(codes), same counts and factors", recipes[ri], tr);
                /* in place, as the engine calls it */
                memcpy(w, a, sizeof a);
                emu_quant oi = {.vals = w};
                emu__quantize(&cfg.scaling, f, m, k, w, tr, 1, NULL, &oi, NULL, 0);
                ok(!cmp(w, va, m * k, "in place"), "emu__quantize %s (tile rows %d): in place", recipes[ri], tr);
                /* gemm.h's layout of the factors: one per tile, per row, per block */
                float pub[m * 19 + 1];
                uint64_t cp[m * k];
                fpemu_gemm_quantize_f32(&cfg.scaling, f, m, k, a, tr, 1, NULL, cp, NULL, pub, NULL, NULL, NULL, NULL, 0);
                int same = !memcmp(cp, ca, sizeof cp);
                size_t ns = fpemu_gemm_quantize_nscales(&cfg.scaling, m, k, tr);
                for (size_t t = 0; t < ns; t++) {
                    size_t want = cfg.scaling.kind == FPEMU_GEMM_SCALING_BLOCKWISE ? (t / nkb) * tr * nkb + t % nkb : t;
                    same &= !memcmp(&pub[t], &da[want], 4) || (isnan(pub[t]) && isnan(da[want]));
                }
                ok(same, "fpemu_gemm_quantize_f32 %s (tile rows %d): the same codes, its factors from the per-row ones",
                   recipes[ri], tr);
            }
        }

        /* emu__gemm_scaled against fpemu_gemm_f32's recipes: the operands
         * quantised by emu__quantize to values, their per-row factors */
        static const char *const grecipes[] = {"tensor", "tensor-torchao", "given", "rowwise", "blockwise"};
        for (size_t ri = 0; ri < sizeof grecipes / sizeof grecipes[0]; ri++) {
            for (int th = 1; th <= 3; th += 2) {
                fpemu_gemm_config cfg;
                fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
                fpemu_gemm_config_set_scaling(&cfg, grecipes[ri], NULL, 0);
                cfg.scaling.scale_a = 3.0f, cfg.scaling.scale_b = 0.25f;
                cfg.nthreads = th;
                fpemu_gemm_scaling sb = cfg.scaling;
                sb.scale_a = cfg.scaling.scale_b;
                emu_quant oa = {.vals = va, .dec = da}, ob = {.vals = vb, .dec = db};
                emu__quantize(&cfg.scaling, e4m3, m, k, a, cfg.scaling.block_a_rows, 1, NULL, &oa, NULL, 0);
                emu__quantize(&sb, e4m3, n, k, bt, cfg.scaling.block_b_cols, 1, NULL, &ob, NULL, 0);
                int blockwise = cfg.scaling.kind == FPEMU_GEMM_SCALING_BLOCKWISE;
                fpemu_gemm_f32(&cfg, m, n, k, a, k, 0, b, n, 0, NULL, n, d1, n, NULL);
                fpemu_gemm_config c2 = cfg;
                c2.promote = blockwise ? cfg.scaling.block_k : 0;
                int rc = emu__gemm_scaled(&c2, m, n, k, va, vb, da, db, blockwise ? cfg.scaling.block_k : k,
                                          cfg.scaling.kind == FPEMU_GEMM_SCALING_ROWWISE, d2, NULL);
                ok(!rc && !cmp(d2, d1, m * n, grecipes[ri]), "emu__gemm_scaled = fpemu_gemm_f32 %s (%d threads)", grecipes[ri], th);
            }
        }

        /* against the engine's former scaled GEMM: per chunk of `promote`
         * elements of K a GEMM of the values from c = 0 (scaling none), then
         * acc = fmaf(partial, fl32(da * db), acc); one chunk:
         * fl32(acc * fl32(da * db)) */
        for (int pi = 0; pi < 4; pi++) {
            static const int promos[] = {0, 32, 128, 300};
            int promote = promos[pi], kb = promote == 0 || promote == 300 ? k : 128, nkb = (k + kb - 1) / kb;
            fpemu_gemm_config cfg;
            fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e5m2", NULL, 0);
            for (int i = 0; i < m * nkb; i++) da[i] = ldexpf(1 + (i % 5) / 8.0f, (i % 9) - 4);
            for (int i = 0; i < n * nkb; i++) db[i] = ldexpf(1 + (i % 3) / 4.0f, (i % 7) - 3);
            da[2 * nkb] = NAN; /* a NaN factor: the MMA's NaN comes first where both are NaN */
            for (int i = 0; i < m * k; i++) va[i] = (float)fpemu_to_double(e4m3, fpemu_from_float(e4m3, a[i] * 8, &(fpemu_ctx){.sat = 1}));
            const fpemu_format *e5m2 = fpemu_format_get("e5m2", NULL, 0);
            for (int i = 0; i < n * k; i++) vb[i] = (float)fpemu_to_double(e5m2, fpemu_from_float(e5m2, bt[i], &(fpemu_ctx){.sat = 1}));
            int P = promote > 0 ? promote : k;
            static float acc[m * n], part[m * n], sa[m * 300], sbb[n * 300];
            memset(acc, 0, sizeof acc);
            for (int k0 = 0; k0 < k; k0 += P) {
                int len = k0 + P < k ? P : k - k0;
                for (int i = 0; i < m; i++) memcpy(sa + (size_t)i * len, va + (size_t)i * k + k0, sizeof(float) * len);
                for (int j = 0; j < n; j++) memcpy(sbb + (size_t)j * len, vb + (size_t)j * k + k0, sizeof(float) * len);
                fpemu_gemm_f32(&cfg, m, n, len, sa, len, 0, sbb, len, 1, NULL, n, part, n, NULL);
                int bi = kb == k ? 0 : k0 / kb;
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        float dq = da[i * nkb + bi] * db[j * nkb + bi], p = part[i * n + j];
                        float *x = &acc[i * n + j];
                        if (promote > 0) *x = isnan(p) ? p : isnan(dq) ? dq : fmaf(p, dq, *x);
                        else *x = isnan(p) ? p : isnan(dq) ? dq : p * dq;
                    }
            }
            fpemu_gemm_config c2 = cfg;
            c2.promote = promote;
            int rc = emu__gemm_scaled(&c2, m, n, k, va, vb, da, db, kb, 0, d2, NULL);
            int bad = 0;
            for (int i = 0; i < m * n; i++) bad += memcmp(&d2[i], &acc[i], 4) != 0;
            ok(!rc && !bad, "emu__gemm_scaled, promotion every %d of K in blocks of %d: the per-chunk loop, NaN bits included",
               promote, kb);
        }
        fpemu_gemm_config cfg;
        fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", NULL, 0);
        ok(emu__gemm_scaled(&cfg, m, n, k, va, vb, da, db, 128, 0, d2, NULL) == -1,
           "emu__gemm_scaled: no promotion needs one block");
        cfg.promote = 96;
        ok(emu__gemm_scaled(&cfg, m, n, k, va, vb, da, db, 128, 0, d2, NULL) == -1,
           "emu__gemm_scaled: a chunk must not straddle two blocks");
        cfg.promote = 0;
        ok(emu__gemm_scaled(&cfg, m, n, k, va, vb, da, NULL, k, 0, d2, NULL) == -1, "emu__gemm_scaled: both factors or neither");
        ok(emu__gemm_scaled(&cfg, m, n, k, va, vb, NULL, NULL, 1, 0, d2, NULL) == 0 &&
               fpemu_gemm_f32(&cfg, m, n, k, va, k, 0, vb, k, 1, NULL, n, d1, n, NULL) == 0 && !cmp(d2, d1, m * n, "none"),
           "emu__gemm_scaled without factors = fpemu_gemm_f32 without scaling");
    }

    f32_lane_edges();
    group_integer_form();
    group_packing();
    fpenv_caller();
    f32_count_pass();
    fma_chain_edges();
    exact_sum_edges();
    exact_amx();
    pw_edges();
    mi300_fused();
    pairwise_tree_edges();
    epilogue16_edges();
    rowwise_h200();

    free(A), free(B), free(C), free(At), free(Bt), free(D), free(R), free(X);
    layouts();
    vdec_packing();
    pw_ranges();
    tf32_subnormal_align();
    nan_marks();
    mx_blocks();
    mx_nvfp4_blocks();
    mx_nvfp4_runs();
    mx_nvfp4_cols();
    quant_smin();
    sweep_found();
    return done_testing();
}
