/* SPDX-License-Identifier: MIT */
/* torch_cuda.c: PyTorch's CUDA numerics for the MLP models (torch_cuda.h).
 *
 * Sources, per op (PyTorch 2.x, aten/src/ATen/native/cuda/ unless named):
 *  - F.linear(x, W, b) is addmm(b, x, W^T); for f32/f16/bf16 with a 1-d
 *    bias it runs cuBLASLt with the BIAS epilogue (Blas.cpp), which adds
 *    the bias to the f32 accumulator and rounds once to the output type.
 *    Every GEMM (the forward's F.linear, the weight gradient mm(dY.t(), X),
 *    the input gradient mm(dY, W)) takes its summation tree from the
 *    library's cuBLAS table (emu/cublas-h200.txt: rows op=linear, mm-ta,
 *    mm, fitted to these calls on an H200, docs/cublas.md), resolved by
 *    fpemu_sumtree_resolve_op; a shape it does not list gets the plain
 *    model (f16/bf16: one chain of the tensor-core model; f32 with TF32
 *    off: one fma per term in K order from 0).
 *  - log_softmax over 10 classes: the persistent warp kernel
 *    (PersistentSoftmax.cuh): 16 lanes, max and sum by xor-butterfly
 *    (offsets 8, 4, 2, 1), out = x - max - log(sum); its backward
 *    gx = g - exp(out) * sum(g), which nvcc contracts into one fma.
 *  - nll_loss, mean (Loss.cu / NLLLoss.cu): one block of 32 threads, each
 *    summing -x[i][t_i] over rows i = thread, thread + 32, ..., then a
 *    shared-memory tree (strides 16 .. 1), then one division by the count.
 *  - the bias gradient is grad.sum(0) (autograd's sum_to_size): Reduce.cuh
 *    gives each output column one thread with 4 accumulators over rows
 *    (row r into accumulator r mod 4), combined ((a0 + a1) + a2) + a3.
 *  - CUDA's expf and logf are libdevice's __nv_expf / __nv_logf: logf is
 *    a polynomial of fmaf steps (reproduced exactly here); expf reduces
 *    its argument with fmaf and calls ex2.approx.ftz.f32, the special
 *    function unit's 2^x, whose bits no document gives: here it is the
 *    table-and-quadratic model fitted to an H200's results
 *    (tc_ex2_approx, exact on all 2^24 + 1 recorded grid points and
 *    2^18 recorded other inputs).
 *  - AdamW (torch/optim/adam.py, _single_tensor_adam / _multi_tensor_adam)
 *    (tc_adamw). GradScaler (torch/amp/grad_scaler.py, AmpKernels.cu) is
 *    the engine's own trn_scaler and unscale, shared with the default
 *    numerics: one f32 product of each gradient and the f32 of 1/scale
 *    taken in double. A Python float reaches a kernel as the f32 of
 *    its double; nvcc contracts a + b * c into fmaf(b, c, a) (--fmad=true,
 *    its default, is how PyTorch builds).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "torch_cuda.h"
#include "train_internal.h"

static float fbits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t ubits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
/* an f32 constant written as the double LLVM's IR prints */
static float fd(uint64_t u) { double d; memcpy(&d, &u, 8); return (float)d; }
/* n rounded up to a multiple of 16 (torch._scaled_mm's operand sizes) */
static int pad16(int n) { return (n + 15) / 16 * 16; }

/* ex2.approx.ftz.f32, the special function unit's 2^x, as an H200 returns it
 * (tests/data/ex2-approx/: every x = k / 2^23 in [-1, 1] and 2^18 inputs off
 * that grid or small, all reproduced bit for bit by tests/t_ex2_approx.c).
 * The structure is the one envytools (nvhw/sfu.c, Tesla's SFU) describes:
 *  - the input becomes a sign-magnitude fixed-point number with 23
 *    fraction bits, truncated (the bits below 2^-23 are dropped, towards
 *    zero; an input under 2^-23 in magnitude, subnormals included, is 0);
 *  - for x >= 0, integer part n and fraction f: 2^n * P(f). For x < 0 the
 *    fraction is complemented bitwise, not negated: n' = -n - 1 and
 *    f' = 2^23 - 1 - f (so 2^x is taken at x - 2^-23, about an ulp low),
 *    and f = 0 gives 2^-n exactly;
 *  - P: the top 6 bits of f pick one of 64 segments, whose table row
 *    (A, B, C) the low 17 bits t feed into one fixed-point sum,
 *    (A * 2^13 + R + B * t + C * sq(t)) >> 15, the significand with its
 *    leading one; sq is a truncated squarer (ex2_square);
 *  - a result below 2^-126 is +0 (ftz), above the f32 range +inf.
 * The table is sfu_ex2_table.h, derived from the recording by
 * gpu/probes/fit_ex2.py (the only integer B, C near a least-squares fit
 * and the only shared R that fit); it equals envytools' Tesla table row for row (each A here is
 * theirs + 3, as their R, 0x77E2, is 0x17E2 + 3 * 2^13). Only |x| < 2 was
 * recorded: the integer part's path beyond that, inf and NaN follow the
 * structure above unrecorded (tc_expf gives it r in [-24.04, 2) for every
 * f32 a in [-104, 88.7228], and r <= -2 only where its result is below
 * 2^-126). */
#include "sfu_ex2_table.h"

/* for each set bit j of the 17-bit t, the partial product t * 2^j / 2^18
 * truncated; the sum halved, truncated: about t^2 / 2^19 */
static int64_t ex2_square(uint32_t t) {
    int64_t acc = 0;
    for (int j = 0; j < 17; j++)
        if (t >> j & 1) acc += t >> (18 - j);
    return acc >> 1;
}

float tc_ex2_approx(float x) {
    uint32_t u = ubits(x), neg = u >> 31;
    int e = (int)(u >> 23 & 0xFF);
    uint32_t m = (u & 0x7FFFFFu) | 0x800000u;
    if (e == 0xFF) return (u & 0x7FFFFFu) ? fbits(0x7FFFFFFFu) : (neg ? 0.0f : x);
    if (e >= 127 + 7) return neg ? 0.0f : fbits(0x7F800000u); /* |x| >= 128 */
    /* the 7.23 fixed-point magnitude, truncated */
    uint32_t q = e == 0 ? 0 : (e >= 127 ? m << (e - 127) : (127 - e > 24 ? 0 : m >> (127 - e)));
    int n = (int)(q >> 23);
    uint32_t f = q & 0x7FFFFFu;
    if (neg) {
        if (f) n = -n - 1, f = ~f & 0x7FFFFFu;
        else n = -n;
    }
    const int32_t *row = sfu_ex2_table[f >> 17];
    uint32_t t = f & 0x1FFFFu;
    int64_t s = ((int64_t)row[0] << 13) + SFU_EX2_R + (int64_t)row[1] * t + (int64_t)row[2] * ex2_square(t);
    uint32_t sig = (uint32_t)(s >> 15); /* in [2^23, 2^24] */
    if (sig >> 24) sig >>= 1, n++;
    int be = n + 127;
    if (be <= 0) return 0.0f;
    if (be >= 255) return fbits(0x7F800000u);
    return fbits((uint32_t)be << 23 | (sig & 0x7FFFFFu));
}

float tc_expf(float a) {
    const float l2e = fbits(0x3FB8AA3Bu), l2e_lo = fbits(0x32A57060u), big = fbits(0x4B400000u);
    if (a != a) return a + 1.0f;
    float t = fmaf(a, l2e / 252.0f, 0.5f);
    t = t < 0 ? 0 : (t > 1 ? 1 : t); /* saturate */
    /* fma rounding toward -inf: t * 252 + 12582913 is exact below 2^24 except the fraction */
    double e = (double)t * 252.0 + (double)(big + 1.0f);
    float j4 = (float)floor(e);
    float jneg = -(j4 - (big + 127.0f));
    float r = fmaf(a, l2e, jneg);
    r = fmaf(a, l2e_lo, r);
    float scale = fbits(ubits(j4) << 23);
    return tc_ex2_approx(r) * scale;
}

float tc_logf(float a) {
    float x = a, i0 = 0.0f;
    if (a < 0x1p-126f) { x = a * 0x1p23f; i0 = -23.0f; }
    uint32_t ix = ubits(x);
    int32_t e = (int32_t)((ix - 0x3F2AAAABu) & 0xFF800000u);
    float m = fbits(ix - (uint32_t)e);
    float t = fmaf((float)e, 0x1p-23f, i0);
    float f = m - 1.0f;
    float p = fmaf(fd(0xBFC0AA04E0000000ull), f, fd(0x3FC2073EC0000000ull));
    p = fmaf(p, f, fd(0xBFBF19B980000000ull));
    p = fmaf(p, f, fd(0x3FC1E52AA0000000ull));
    p = fmaf(p, f, fd(0xBFC55B1720000000ull));
    p = fmaf(p, f, fd(0x3FC99DA160000000ull));
    p = fmaf(p, f, fd(0xBFCFFFE440000000ull));
    p = fmaf(p, f, fd(0x3FD5554F00000000ull));
    p = fmaf(p, f, -0.5f);
    float q = p * f;
    q = fmaf(q, f, f);
    float r = fmaf(t, fd(0x3FE62E4300000000ull), q);
    if (ubits(x) >= 0x7F800000u) r = fmaf(x, INFINITY, INFINITY);
    if (x == 0) r = -INFINITY;
    return r;
}

/* ---- setup ------------------------------------------------------------------ */

int tc_mlp_init(tc_mlp *m, int nlin, const int *dims, const fpemu_format *lo, const char *mma, int Bmax, char *err,
                size_t errlen) {
    memset(m, 0, sizeof *m);
    if (nlin < 1 || nlin > 256 || Bmax < 1) { snprintf(err, errlen, "torch-cuda: bad MLP shape"); return -1; }
    m->nlin = nlin; m->Bmax = Bmax;
    int wmax = 0;
    for (int i = 0; i <= nlin; i++) {
        m->dims[i] = dims[i];
        if (dims[i] < 1) { snprintf(err, errlen, "torch-cuda: bad MLP shape"); return -1; }
        if (dims[i] > wmax) wmax = dims[i];
    }
    for (int i = 0; i < nlin; i++) m->nparams += (size_t)dims[i] * dims[i + 1] + dims[i + 1];
    m->lo = lo;
    m->f32 = fpemu_format_get("f32", NULL, 0);
    if (!mma || strlen(mma) >= sizeof m->mma) { snprintf(err, errlen, "torch-cuda: bad mma model"); return -1; }
    snprintf(m->mma, sizeof m->mma, "%s", mma);
    if (fpemu_mma_model_check_name(mma, err, errlen)) return -1;
    char e2[300];
    if (fpemu_sumtree_table_builtin(&m->tab, e2, sizeof e2)) {
        if (strstr(e2, "out of memory")) snprintf(err, errlen, "out of memory"); /* the engine's OOM message */
        else snprintf(err, errlen, "torch-cuda: the cuBLAS table: %s", e2);
        return -1;
    }
    /* the table's trees must be this device's: the first Linear's forward
     * at the largest batch resolves now, so a refusal names itself here */
    fpemu_sumtree tr;
    const fpemu_sumtree_row *row;
    const fpemu_format *f = lo ? lo : m->f32;
    if (fpemu_sumtree_resolve_op(&m->tab, "linear", mma, f, f, lo, 0, Bmax, dims[1], dims[0], &tr, &row, e2, sizeof e2)) {
        snprintf(err, errlen, "torch-cuda: mma=%s: %s", mma, e2);
        fpemu_sumtree_table_free(&m->tab);
        return -1;
    }
    m->a = calloc((size_t)nlin + 1, sizeof *m->a);
    m->h = calloc((size_t)nlin, sizeof *m->h);
    m->wlo = malloc(m->nparams * sizeof(float));
    size_t bw = (size_t)Bmax * wmax;
    m->logp = malloc((size_t)Bmax * dims[nlin] * sizeof(float));
    m->g1 = malloc(bw * sizeof(float));
    m->g2 = malloc(bw * sizeof(float));
    m->tmp = malloc((size_t)wmax * (wmax > Bmax ? wmax : Bmax) * sizeof(float));
    m->tgt = malloc((size_t)Bmax * sizeof(int));
    /* operands up to wmax x max(wmax, Bmax), padded to multiples of 16 (the fp8 calls) */
    size_t w2 = (size_t)pad16(wmax) * pad16(wmax > Bmax ? wmax : Bmax);
    m->ccap = w2;
    m->ca = malloc(w2 * sizeof(uint64_t));
    m->cb = malloc(w2 * sizeof(uint64_t));
    m->cc = malloc(w2 * sizeof(float));
    int bad = !m->ca || !m->cb || !m->cc || !m->a || !m->h || !m->wlo || !m->logp || !m->g1 || !m->g2 || !m->tmp || !m->tgt;
    for (int i = 0; !bad && i < nlin; i++) {
        m->a[i] = malloc((size_t)Bmax * dims[i] * sizeof(float));
        m->h[i] = malloc((size_t)Bmax * dims[i + 1] * sizeof(float));
        bad = !m->a[i] || !m->h[i];
    }
    if (bad) { tc_mlp_free(m); snprintf(err, errlen, "out of memory"); return -1; }
    return 0;
}

void tc_mlp_free(tc_mlp *m) {
    for (int i = 0; m->a && i < m->nlin; i++) free(m->a[i]);
    for (int i = 0; m->h && i < m->nlin; i++) free(m->h[i]);
    free(m->a); free(m->h); free(m->wlo); free(m->logp); free(m->g1); free(m->g2); free(m->tmp); free(m->tgt);
    free(m->ca); free(m->cb); free(m->cc);
    for (int i = 0; m->x8 && i < m->nlin; i++) free(m->x8[i]);
    free(m->x8); free(m->w8); free(m->g8); free(m->sx); free(m->sw); free(m->woff); free(m->tmp8);
    fpemu_sumtree_table_free(&m->tab);
    memset(m, 0, sizeof *m);
}

int tc_mlp_fp8(tc_mlp *m, const fpemu_format *fwd, const fpemu_format *bwd, int head, char *err, size_t errlen) {
    if (!m->lo || !fwd || !bwd) { snprintf(err, errlen, "torch-cuda: fp8 Linear layers need an autocast type and two fp8 formats"); return -1; }
    m->f8_fwd = fwd, m->f8_bwd = bwd, m->fp8_head = head;
    int wmax = 0;
    for (int i = 0; i <= m->nlin; i++) if (m->dims[i] > wmax) wmax = m->dims[i];
    m->x8 = calloc((size_t)m->nlin, sizeof *m->x8);
    m->woff = malloc((size_t)m->nlin * sizeof *m->woff);
    m->sx = malloc((size_t)m->nlin * sizeof(float));
    m->sw = malloc((size_t)m->nlin * sizeof(float));
    m->w8 = malloc(m->nparams * sizeof(float));
    m->g8 = malloc((size_t)m->Bmax * wmax * sizeof(float));
    m->tmp8 = malloc(3 * m->ccap * sizeof(float));
    int bad = !m->x8 || !m->woff || !m->sx || !m->sw || !m->w8 || !m->g8 || !m->tmp8;
    for (int i = 0, o = 0; !bad && i < m->nlin; i++) {
        m->woff[i] = (size_t)o;
        o += m->dims[i] * m->dims[i + 1] + m->dims[i + 1];
        m->x8[i] = malloc((size_t)m->Bmax * m->dims[i] * sizeof(float));
        bad = !m->x8[i];
    }
    if (bad) { snprintf(err, errlen, "out of memory"); return -1; }
    return 0;
}

/* round to the autocast type in place (.to(dtype): rne, overflow to inf);
 * lin and cls name the tensor for the telemetry */
static void to_lo(const tc_mlp *m, float *x, size_t n, int lin, int cls) {
    if (!m->lo) return;
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    if (!m->note) { fpemu_round_f32(m->lo, x, x, n, &c, NULL); return; }
    double amax = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && fabs(x[i]) > amax) amax = fabs(x[i]);
    fpemu_cast_stats st;
    memset(&st, 0, sizeof st);
    fpemu_round_f32(m->lo, x, x, n, &c, &st);
    m->note(m->note_ctx, lin, cls, m->lo, &st, amax, 1.0);
}

/* D[M][N] = the call `op` of A (M x K, values of fa) and B (given as N x K:
 * B[n][k], values of fb) with the bias (op linear: N values, the call's C
 * broadcast over rows; else NULL), as cuBLAS computes it before the
 * rounding to the output type: the tree of the table's row for the call
 * (formats, output format, fast accumulation, shape), or the plain model.
 * The tree's output rounding is left to the caller's to_lo, which counts
 * the casts; the tree rounds last, so this is the same value. */
static int gemm_call(tc_mlp *m, const char *op, const fpemu_format *fa, const fpemu_format *fb, int fast, float alpha, int M,
                     int N, int K, const float *A, const float *B, const float *bias, float *D) {
    size_t na = (size_t)M * K, nb = (size_t)K * N;
    if (na > m->ccap || nb > m->ccap || (size_t)M * N > m->ccap) return -1;
    fpemu_sumtree tr;
    const fpemu_sumtree_row *row;
    fpemu_sumtree_bound bd;
    char e2[300];
    const fpemu_format *out = fa == m->lo && fb == m->lo ? m->lo : NULL;
    if (fpemu_sumtree_resolve_op(&m->tab, op, m->mma, fa, fb, out, fast, M, N, K, &tr, &row, e2, sizeof e2)) return -1;
    tr.out = NULL;
    tr.alpha = alpha; /* the call's alpha: the epilogue's fl32(alpha * acc) */
    if (fpemu_sumtree_bind(&bd, &tr, fa, fb, e2, sizeof e2)) return -1;
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    /* the operands hold values of their formats (rounded by to_lo or the fp8 casts): their codes */
    fa = bd.fa, fb = bd.fb; /* the tree's operand formats */
    for (size_t i = 0; i < na; i++) m->ca[i] = fa == m->f32 ? ubits(A[i]) : fpemu_from_double(fa, A[i], &c);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) {
            float v = B[(size_t)j * K + k];
            m->cb[(size_t)k * N + j] = fb == m->f32 ? ubits(v) : fpemu_from_double(fb, v, &c);
        }
    if (bias)
        for (int i = 0; i < M; i++) memcpy(m->cc + (size_t)i * N, bias, (size_t)N * sizeof(float));
    return fpemu_sumtree_gemm_codes(&bd, M, N, K, m->ca, m->cb, bias ? m->cc : NULL, 1, D, e2, sizeof e2);
}

/* the GEMMs of the autocast type (f32 under 32-true) */
static int gemm_acc(tc_mlp *m, const char *op, int M, int N, int K, const float *A, const float *B, const float *bias,
                    float *D) {
    const fpemu_format *f = m->lo ? m->lo : m->f32;
    return gemm_call(m, op, f, f, 0, 1.0f, M, N, K, A, B, bias, D);
}

/* ---- fp8 Linear layers (gpu/torch/record_runs.py, Fp8LinearFn) -------------------- */

/* column sums of G (B x n) as Reduce.cuh orders them */
static void col_sum(const float *G, int B, int n, float *out) {
    for (int j = 0; j < n; j++) {
        float acc[4] = {0, 0, 0, 0};
        int r = 0;
        for (; r + 3 < B; r += 4)
            for (int u = 0; u < 4; u++) acc[u] += G[(size_t)(r + u) * n + j];
        for (int u = 0; r < B; r++, u++) acc[u] += G[(size_t)r * n + j];
        out[j] = ((acc[0] + acc[1]) + acc[2]) + acc[3];
    }
}

static void transpose(const float *src, float *dst, int rows, int cols) {
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}


/* torchao's amax_to_scale: fmax / max(amax, 1e-12), the division in
 * double (amax widened), the quotient rounded to f32; a NaN stays NaN */
static float f8_scale(const float *x, size_t n, double fmax, double *amax_out) {
    double amax = 0;
    for (size_t i = 0; i < n; i++) {
        double a = fabs((double)x[i]);
        if (a != a || a > amax) amax = a; /* torch's max propagates NaN */
        if (amax != amax) break;
    }
    *amax_out = amax;
    return (float)(fmax / (amax < 1e-12 ? 1e-12 : amax));
}

/* (x * scale) in f32, clamped to [-fmax, fmax], cast to fmt (rne) into
 * dst; counted for the telemetry as class cls of layer lin */
static void f8_cast(const tc_mlp *m, const float *x, float *dst, size_t n, const fpemu_format *fmt, float fmax, float scale,
                    double amax, int lin, int cls) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i] * scale;
        dst[i] = v > fmax ? fmax : (v < -fmax ? -fmax : v); /* NaN passes through */
    }
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    fpemu_cast_stats st;
    memset(&st, 0, sizeof st);
    fpemu_round_f32(fmt, dst, dst, n, &c, m->note ? &st : NULL);
    if (m->note) m->note(m->note_ctx, lin, cls, fmt, &st, amax, scale);
}

/* torch._scaled_mm(a8, b8_t.t(), 1/sa, 1/sb, out f32): A (M x K) and B (N x
 * K) are padded with zeros to multiples of 16 in both sizes, as the
 * recorder pads them; the tensorwise epilogue is fl32(acc * fl32(1/sa *
 * 1/sb)), each reciprocal an f32 division (measured on an H200:
 * docs/scaling.md, "The epilogue's order"): the tree's alpha. D is M x N. */
static int scaled_mm(tc_mlp *m, const fpemu_format *fa, const fpemu_format *fb, int fast, int M, int N, int K,
                     const float *A, const float *B, float sa, float sb, float *D) {
    int Mp = pad16(M), Np = pad16(N), Kp = pad16(K);
    size_t np = (size_t)(Mp > Np ? Mp : Np) * Kp;
    if (np > m->ccap || (size_t)Mp * Np > m->ccap) return -1;
    float *pa = m->tmp8, *pb = m->tmp8 + m->ccap, *pd = m->tmp8 + 2 * m->ccap;
    memset(pa, 0, sizeof(float) * (size_t)Mp * Kp);
    memset(pb, 0, sizeof(float) * (size_t)Np * Kp);
    for (int i = 0; i < M; i++) memcpy(pa + (size_t)i * Kp, A + (size_t)i * K, sizeof(float) * (size_t)K);
    for (int j = 0; j < N; j++) memcpy(pb + (size_t)j * Kp, B + (size_t)j * K, sizeof(float) * (size_t)K);
    /* cuBLASLt's per-tensor scales are the call's alpha, scale_a * scale_b in f32 */
    if (gemm_call(m, "mm", fa, fb, fast, (1.0f / sa) * (1.0f / sb), Mp, Np, Kp, pa, pb, NULL, pd)) return -1;
    for (int i = 0; i < M; i++) memcpy(D + (size_t)i * N, pd + (size_t)i * Np, sizeof(float) * (size_t)N);
    return 0;
}

static int lin_is_fp8(const tc_mlp *m, int i) { return m->f8_fwd && (i + 1 < m->nlin || m->fp8_head); }

/* Fp8LinearFn.forward of layer i on B rows: h = (y + b) in the autocast type */
static int fp8_forward(tc_mlp *m, int i, const float *W, const float *b, int B) {
    int in = m->dims[i], out = m->dims[i + 1];
    const float f8max = (float)m->f8_fwd->max_finite;
    double ax, aw;
    m->sx[i] = f8_scale(m->a[i], (size_t)B * in, f8max, &ax);
    m->sw[i] = f8_scale(W, (size_t)in * out, f8max, &aw);
    float *w8 = m->w8 + m->woff[i];
    f8_cast(m, m->a[i], m->x8[i], (size_t)B * in, m->f8_fwd, f8max, m->sx[i], ax, i, CLS_ACT);
    f8_cast(m, W, w8, (size_t)in * out, m->f8_fwd, f8max, m->sw[i], aw, i, CLS_WEIGHT);
    float *h = m->h[i];
    if (scaled_mm(m, m->f8_fwd, m->f8_fwd, 1, B, out, in, m->x8[i], w8, m->sx[i], m->sw[i], h)) return -1;
    for (int r = 0; r < B; r++)
        for (int j = 0; j < out; j++) h[(size_t)r * out + j] += b[j];
    to_lo(m, h, (size_t)B * out, i, CLS_OUT);
    return 0;
}

/* Fp8LinearFn.backward of layer i: dh (B x out, the autocast type) ->
 * gW (f32), gb (f32) and, unless i is 0, da (B x in, the autocast type) */
static int fp8_backward(tc_mlp *m, int i, const float *dh, float *gW, float *gb, float *da, int B) {
    int in = m->dims[i], out = m->dims[i + 1];
    const float gmax = (float)m->f8_bwd->max_finite;
    double ag;
    float sg = f8_scale(dh, (size_t)B * out, gmax, &ag);
    f8_cast(m, dh, m->g8, (size_t)B * out, m->f8_bwd, gmax, sg, ag, i, CLS_GRAD_OUT);
    col_sum(dh, B, out, gb); /* dy.float().sum(0), kept in f32 */
    /* dW = _scaled_mm(g8^T (out x B), x8^T (in x B)), no fast accumulation, kept in f32 */
    float *gT = m->tmp, *xT = da;
    transpose(m->g8, gT, B, out);
    transpose(m->x8[i], xT, B, in);
    if (scaled_mm(m, m->f8_bwd, m->f8_fwd, 0, out, in, B, gT, xT, sg, m->sx[i], gW)) return -1;
    if (i == 0) return 0;
    /* dx = _scaled_mm(g8 (B x out), (w8^T) (in x out)), then to the autocast type */
    transpose(m->w8 + m->woff[i], m->tmp, out, in);
    if (scaled_mm(m, m->f8_bwd, m->f8_fwd, 0, B, in, out, m->g8, m->tmp, sg, m->sw[i], da)) return -1;
    to_lo(m, da, (size_t)B * in, i, CLS_GRAD_IN);
    return 0;
}

/* log_softmax of one row of n <= 32 values, the warp kernel's order */
static void log_softmax_row(const float *x, float *out, int n) {
    int w = 1;
    while (w < n) w *= 2;
    float v[32], s[32];
    for (int l = 0; l < w; l++) v[l] = l < n ? x[l] : -INFINITY;
    for (int l = 0; l < w; l++) s[l] = v[l];
    for (int off = w / 2; off > 0; off /= 2) {
        float t[32];
        for (int l = 0; l < w; l++) t[l] = s[l] > s[l ^ off] ? s[l] : s[l ^ off];
        memcpy(s, t, sizeof(float) * (size_t)w);
    }
    float mx = s[0];
    for (int l = 0; l < w; l++) s[l] = tc_expf(v[l] - mx);
    for (int off = w / 2; off > 0; off /= 2) {
        float t[32];
        for (int l = 0; l < w; l++) t[l] = s[l] + s[l ^ off];
        memcpy(s, t, sizeof(float) * (size_t)w);
    }
    float ls = tc_logf(s[0]);
    for (int l = 0; l < n; l++) out[l] = (v[l] - mx) - ls;
}

/* mean NLL over rows: 32 threads, strided per-thread sums, tree, divide */
static float nll_mean(const float *logp, const int *tgt, int B, int C) {
    float sh[32];
    for (int t = 0; t < 32; t++) {
        sh[t] = 0.0f;
        for (int i = t; i < B; i += 32) sh[t] -= logp[(size_t)i * C + tgt[i]];
    }
    for (int st = 16; st > 0; st >>= 1)
        for (int t = 0; t < st; t++) sh[t] += sh[t + st];
    return sh[0] / (float)B;
}

/* forward through the Linear/ReLU stack; logits (f32) in m->h[nlin-1] */
static int forward(tc_mlp *m, const float *params, const float *x, int B) {
    const float *w = params;
    if (m->lo) {
        memcpy(m->wlo, params, m->nparams * sizeof(float));
        for (size_t i = 0, o = 0; i < (size_t)m->nlin; i++) { /* each Linear's weight and bias */
            size_t n = (size_t)m->dims[i] * m->dims[i + 1] + m->dims[i + 1];
            if (!lin_is_fp8(m, (int)i)) to_lo(m, m->wlo + o, n, (int)i, CLS_WEIGHT); /* fp8: the f32 master's own casts */
            o += n;
        }
        w = m->wlo;
    }
    memcpy(m->a[0], x, (size_t)B * m->dims[0] * sizeof(float));
    to_lo(m, m->a[0], (size_t)B * m->dims[0], 0, CLS_ACT);
    size_t off = 0;
    for (int i = 0; i < m->nlin; i++) {
        int in = m->dims[i], out = m->dims[i + 1];
        const float *W = w + off, *b = w + off + (size_t)in * out;
        off += (size_t)in * out + out;
        float *h = m->h[i];
        if (lin_is_fp8(m, i)) {
            if (fp8_forward(m, i, params + m->woff[i], params + m->woff[i] + (size_t)in * out, B)) return -1;
        } else {
            if (gemm_acc(m, "linear", B, out, in, m->a[i], W, b, h)) return -1; /* the bias epilogue: fl32(acc + b) */
            to_lo(m, h, (size_t)B * out, i, CLS_OUT);
        }
        if (i + 1 < m->nlin)
            for (size_t k = 0; k < (size_t)B * out; k++) m->a[i + 1][k] = h[k] > 0 ? h[k] : 0.0f;
    }
    return 0;
}

int tc_mlp_forward(tc_mlp *m, const float *params, const float *x, const int *tgt, int B, float *loss) {
    if (B > m->Bmax || forward(m, params, x, B)) return -1;
    int C = m->dims[m->nlin];
    const float *logits = m->h[m->nlin - 1];
    for (int r = 0; r < B; r++) log_softmax_row(logits + (size_t)r * C, m->logp + (size_t)r * C, C);
    memcpy(m->tgt, tgt, (size_t)B * sizeof(int));
    *loss = nll_mean(m->logp, tgt, B, C);
    return 0;
}

int tc_mlp_backward(tc_mlp *m, const float *params, float *grads, int B, float scale) {
    int C = m->dims[m->nlin];
    const float *w = m->lo ? m->wlo : params;
    /* nll backward: -(grad_output / total_weight) at each target */
    float g = -(scale / (float)B);
    float *dh = m->g1, *da = m->g2;
    for (int r = 0; r < B; r++) {
        const float *o = m->logp + (size_t)r * C;
        float *d = dh + (size_t)r * C;
        /* the warp sum of the incoming gradient: one nonzero term */
        float sum = g;
        for (int j = 0; j < C; j++) {
            float gj = j == m->tgt[r] ? g : 0.0f;
            d[j] = fmaf(-tc_expf(o[j]), sum, gj);
        }
    }
    to_lo(m, dh, (size_t)B * C, m->nlin, CLS_GRAD_IN); /* the backward of logits.float() */
    size_t off = m->nparams;
    for (int i = m->nlin - 1; i >= 0; i--) {
        int in = m->dims[i], out = m->dims[i + 1];
        off -= (size_t)in * out + out;
        float *gW = grads + off, *gb = grads + off + (size_t)in * out;
        const float *W = w + off;
        if (lin_is_fp8(m, i)) {
            if (fp8_backward(m, i, dh, gW, gb, da, B)) return -1;
            if (i == 0) break;
            const float *act = m->a[i];
            for (size_t k = 0; k < (size_t)B * in; k++) dh[k] = act[k] > 0 ? da[k] : 0.0f;
            continue;
        }
        col_sum(dh, B, out, gb);
        to_lo(m, gb, (size_t)out, i, CLS_GRAD_W);
        /* grad_W[o][k] = sum_r dh[r][o] a[r][k]: (out x B) (B x in) */
        float *dhT = m->tmp;
        transpose(dh, dhT, B, out);
        float *aT = da; /* da is free until the input gradient below */
        transpose(m->a[i], aT, B, in);
        if (gemm_acc(m, "mm-ta", out, in, B, dhT, aT, NULL, gW)) return -1;
        to_lo(m, gW, (size_t)in * out, i, CLS_GRAD_W);
        if (i == 0) break;
        /* grad_a[r][k] = sum_o dh[r][o] W[o][k]: W^T as the B operand */
        transpose(W, m->tmp, out, in);
        if (gemm_acc(m, "mm", B, in, out, dh, m->tmp, NULL, da)) return -1;
        to_lo(m, da, (size_t)B * in, i, CLS_GRAD_IN);
        /* ReLU backward: the gradient where the output is positive */
        const float *act = m->a[i];
        for (size_t k = 0; k < (size_t)B * in; k++) dh[k] = act[k] > 0 ? da[k] : 0.0f;
    }
    return 0;
}

int tc_mlp_eval(tc_mlp *m, const float *params, const float *x, const int *y, int N, float *loss, float *acc) {
    int C = m->dims[m->nlin];
    float sh[32] = {0};
    long correct = 0;
    for (int s = 0; s < N; s += m->Bmax) {
        int B = N - s < m->Bmax ? N - s : m->Bmax;
        if (forward(m, params, x + (size_t)s * m->dims[0], B)) return -1;
        const float *logits = m->h[m->nlin - 1];
        for (int r = 0; r < B; r++) {
            float lp[32];
            log_softmax_row(logits + (size_t)r * C, lp, C);
            int row = s + r;
            sh[row % 32] -= lp[y[row]];
            int am = 0;
            for (int j = 1; j < C; j++) if (logits[(size_t)r * C + j] > logits[(size_t)r * C + am]) am = j;
            correct += am == y[row];
        }
    }
    for (int st = 16; st > 0; st >>= 1)
        for (int t = 0; t < st; t++) sh[t] += sh[t + st];
    *loss = sh[0] / (float)N;
    *acc = (float)correct * (1.0f / (float)N);
    return 0;
}

/* ---- AdamW ---------------------------------------------------------------------- */

void tc_adamw(int impl, float *p, const float *g, float *m, float *v, size_t n, double step, double lr, double beta1,
              double beta2, double eps, double weight_decay) {
    double bc1 = 1 - pow(beta1, step), bc2 = 1 - pow(beta2, step);
    float wd = (float)(1 - lr * weight_decay);
    float w1 = (float)(1 - beta1), b2 = (float)beta2, w2 = (float)(1 - beta2), feps = (float)eps;
    double bc2_sqrt = sqrt(bc2);
    float bc2s = (float)bc2_sqrt;
    /* the reciprocal of the Python float, in double, then to f32: measured
     * (the recordings rule out 1.0f / f32(bc2_sqrt) and a true division) */
    float inv_bc2s = (float)(1.0 / bc2_sqrt);
    float step_size = impl == TC_ADAMW_FOREACH ? (float)((lr / bc1) * -1) : (float)-(lr / bc1);
    for (size_t i = 0; i < n; i++) {
        if (weight_decay != 0) p[i] = p[i] * wd;
        /* lerp with a small weight: self + weight * (end - self), contracted */
        m[i] = fmaf(w1, g[i] - m[i], m[i]);
        v[i] = v[i] * b2;
        /* addcmul: a + value * (b * c) */
        v[i] = fmaf(w2, g[i] * g[i], v[i]);
        float s = sqrtf(v[i]);
        /* single: / python float is a multiply by its reciprocal (div_true
         * with a CPU scalar); foreach: _foreach_div_ divides by the f32 */
        float d = impl == TC_ADAMW_FOREACH ? s / bc2s : s * inv_bc2s;
        d = d + feps;
        /* addcdiv: a + value * (b / c) */
        p[i] = fmaf(step_size, m[i] / d, p[i]);
    }
}

/* ---- the engine's door (train_internal.h) ----------------------------------------- */

struct trn_tc {
    tc_mlp m;
    float *p, *g, *mo, *vo, *x;
    int *y;
    trn_run *run;
    int layer[257]; /* the engine's layer of each Linear, then the loss's */
};

/* the casts' telemetry into the engine's slots (tensors.csv, and the step's
 * cast and overflow counts of metrics.csv), as its own layers account them */
static void tc_note(void *ctx, int lin, int cls, const fpemu_format *fmt, const fpemu_cast_stats *st, double amax,
                    double scale) {
    struct trn_tc *t = ctx;
    trn__account(t->run, t->layer[lin], cls, fmt, st, amax, scale);
}

int trn__tc_open(trn_run *r, int nlin, const int *dims, const int *layers, int Bmax, char *err, size_t errlen) {
    /* the policy's autocast type; f32 (32-true): no autocast */
    const fpemu_format *lo = r->f_lo == r->f_f32 ? NULL : r->f_lo;
    struct trn_tc *t = calloc(1, sizeof *t);
    if (!t) { r->oom = 1; snprintf(err, errlen, "out of memory"); return -1; }
    if (tc_mlp_init(&t->m, nlin, dims, lo, r->cfg.mma, Bmax, err, errlen)) {
        if (!strcmp(err, "out of memory")) r->oom = 1;
        free(t);
        return -1;
    }
    t->run = r;
    for (int i = 0; i <= nlin; i++) t->layer[i] = layers[i];
    t->m.note = tc_note;
    t->m.note_ctx = t;
    size_t n = t->m.nparams;
    t->p = malloc(n * sizeof(float)); t->g = malloc(n * sizeof(float));
    t->mo = malloc(n * sizeof(float)); t->vo = malloc(n * sizeof(float));
    t->x = malloc((size_t)Bmax * dims[0] * sizeof(float));
    t->y = malloc((size_t)Bmax * sizeof(int));
    r->tc = t;
    if (!t->p || !t->g || !t->mo || !t->vo || !t->x || !t->y) {
        trn__tc_close(r);
        r->oom = 1;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* fp8-current: the Linear layers through torch._scaled_mm (the recorder's Fp8LinearFn) */
    if (r->pol->recipe == RECIPE_CURRENT && tc_mlp_fp8(&t->m, r->f8_fwd, r->f8_bwd, (int)r->cfg.fp8_head, err, errlen)) {
        if (!strcmp(err, "out of memory")) r->oom = 1;
        trn__tc_close(r);
        return -1;
    }
    return 0;
}

void trn__tc_close(trn_run *r) {
    struct trn_tc *t = r->tc;
    if (!t) return;
    tc_mlp_free(&t->m);
    free(t->p); free(t->g); free(t->mo); free(t->vo); free(t->x); free(t->y);
    free(t);
    r->tc = NULL;
}

static void to_f32(float *dst, const double *src, size_t n) { for (size_t i = 0; i < n; i++) dst[i] = (float)src[i]; }
static void to_f64(double *dst, const float *src, size_t n) { for (size_t i = 0; i < n; i++) dst[i] = src[i]; }

int trn__tc_train_batch(trn_run *r, const double *x, const int *tgt, int B, double dloss, double *loss) {
    struct trn_tc *t = r->tc;
    size_t n = t->m.nparams;
    to_f32(t->p, r->params, n);
    to_f32(t->x, x, (size_t)B * t->m.dims[0]);
    float l;
    if (tc_mlp_forward(&t->m, t->p, t->x, tgt, B, &l) || tc_mlp_backward(&t->m, t->p, t->g, B, (float)dloss)) {
        r->gemm_failed = 1;
        return -1;
    }
    to_f64(r->grads, t->g, n);
    *loss = l;
    return 0;
}

int trn__tc_eval(trn_run *r, const float *pixels, double scale, const int *y, int N, double *loss, double *acc) {
    struct trn_tc *t = r->tc;
    if (N > t->m.Bmax) return -1;
    to_f32(t->p, r->params, t->m.nparams);
    for (size_t i = 0; i < (size_t)N * t->m.dims[0]; i++) t->x[i] = (float)(pixels[i] * scale);
    float l, a;
    if (tc_mlp_eval(&t->m, t->p, t->x, y, N, &l, &a)) { r->gemm_failed = 1; return -1; }
    *loss = l; *acc = a;
    return 0;
}

void trn__tc_optim_step(trn_run *r) {
    struct trn_tc *t = r->tc;
    const trn_settings *s = &r->cfg;
    size_t n = t->m.nparams;
    long step = ++r->opt_step;
    to_f32(t->p, r->params, n); to_f32(t->g, r->grads, n);
    to_f32(t->mo, r->opt_m, n); to_f32(t->vo, r->opt_v, n);
    int impl = !strcmp(s->adamw_impl, "foreach") ? TC_ADAMW_FOREACH : TC_ADAMW_SINGLE;
    tc_adamw(impl, t->p, t->g, t->mo, t->vo, n, (double)step, s->lr, s->beta1, s->beta2, s->eps, s->weight_decay);
    to_f64(r->params, t->p, n);
    to_f64(r->opt_m, t->mo, n); to_f64(r->opt_v, t->vo, n);
}
