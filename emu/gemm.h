/* SPDX-License-Identifier: MIT */
/* gemm.h: emulated low-precision GEMM, D = A x B (+ C), with f32 host
 * matrices in and out. The engine of emulated training.
 *
 *   A (M x K) and B (K x N) are quantised inside, per the scaling recipe,
 *   to the element formats afmt / bfmt; every output element is then the
 *   MMA model's dot product over K (mma.h: blocks of B products, alignment
 *   to nfrac bits, the model's rounding, chaining), optionally with f32
 *   promotion every `promote` elements of K (CUTLASS's MMA promotion
 *   interval, DeepGEMM's two-level accumulation); the result is dequantised
 *   in f32 and, if outfmt is set, rounded to it (rne) and returned as f32.
 *
 * Layout: row-major with leading dimensions (C convention).
 *   transA = 0: A[i*lda + k]   (M x K)     transA = 1: A[k*lda + i]  (stored K x M)
 *   transB = 0: B[k*ldb + j]   (K x N)     transB = 1: B[j*ldb + k]  (stored N x K)
 *   C[i*ldc + j], D[i*ldd + j]; C may be NULL (then D = A x B).
 * Column-major callers pass the transposed problem (D^T = B^T A^T) or flip
 * the trans flags.
 *
 * Dataflow per recipe (s = encode scale, x8 = cast(x * s); dequantise with
 * 1/s):
 *   NONE      x8 = cast(x) (rne, sat if cfg.sat).
 *   TENSOR    per-tensor current scaling (fpemu_scaling_current_scale on each of
 *             A and B); D = fl32(acc * fl32(inv_a * inv_b)) + C (epilogue, f32).
 *   GIVEN     per-tensor scales from the caller (scale_a, scale_b): the
 *             delayed-scaling path (fpemu_scaling_delayed in scaling.h); epilogue
 *             as TENSOR.
 *   ROWWISE   one scale per row of A and per column of B (torchao rowwise,
 *             pow2 scales by default); epilogue as TENSOR, per (i, j).
 *   BLOCKWISE A tiles of block_a_rows x block_k (1 x 128), B tiles of
 *             block_k x block_b_cols (128 x 128), decode scale = amax / fmt_max;
 *             promotion every block_k (forced): acc = fmaf(partial, sa*sb, acc).
 *   MX        blocks of 32 along K, e8m0 scales (FLOOR or RCEIL rule); the
 *             scales go into the MMA (scale exponents join the product
 *             exponents).
 *   NVFP4     e2m1 in blocks of 16 along K, e4m3 block scales (inside the
 *             MMA), f32 tensor scales dequantised in the epilogue.
 * With promotion (promote > 0, any recipe): for each K chunk the MMA starts
 * from c = 0, and acc = fmaf(partial, dq, acc) in f32 (acc starts at 0)
 * where dq is the chunk's dequantisation factor (1 for NONE/MX).
 * C: for NONE and MX without promotion, C is the MMA's c input (in f32, as
 * mma.sync's accumulator); otherwise D = fl32(dequantised + C) in f32.
 *
 * Speed: operands are decoded once into exact packed values; the
 * block-FMA models run a vectorised kernel (16 f32 lanes, 8 f64 lanes, or
 * for NVFP4's group rule the group kernel; AVX-512/AVX2/SSE2 chosen at run
 * time, AMX int8 tiles for the exact kind and VNNI for the group kernel
 * where the CPU has them; all
 * exact, so every path gives the same bits) over row/column
 * tiles on nthreads pthreads. Outputs whose blocks leave the
 * normal f32 range, or whose operands hold inf/NaN, are recomputed on the
 * scalar model (fpemu_mma_dot), so results equal the scalar model bit for bit and
 * never depend on the thread count.
 */
#ifndef FPEMU_GEMM_H
#define FPEMU_GEMM_H

#include <stddef.h>
#include <stdint.h>
#include "fpemu.h"
#include "mma.h"
#include "scaling.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpemu_gemm_scaling_kind {
    FPEMU_GEMM_SCALING_NONE = 0,
    FPEMU_GEMM_SCALING_TENSOR,
    FPEMU_GEMM_SCALING_GIVEN,
    FPEMU_GEMM_SCALING_ROWWISE,
    FPEMU_GEMM_SCALING_BLOCKWISE,
    FPEMU_GEMM_SCALING_MX,
    FPEMU_GEMM_SCALING_NVFP4
} fpemu_gemm_scaling_kind;

typedef struct fpemu_gemm_scaling {
    fpemu_gemm_scaling_kind kind;
    fpemu_scaling_current_opts cur; /* TENSOR / ROWWISE: eps, f64 division, pow2 */
    float scale_a, scale_b;         /* GIVEN: encode scales (x8 = cast(x * scale)) */
    int block_a_rows;               /* BLOCKWISE: A tile rows (1) */
    int block_b_cols;               /* BLOCKWISE: B tile columns (128) */
    int block_k;                    /* BLOCKWISE: tile extent along K (128) */
    float block_eps;                /* BLOCKWISE: amax floor (1e-4) */
    int block_pow2;                 /* BLOCKWISE: power-of-two scales (TE) */
    fpemu_scaling_mx_rule mx_rule;  /* MX: FLOOR (OCP) or RCEIL (TE/cuBLAS) */
} fpemu_gemm_scaling;

typedef struct fpemu_gemm_config {
    fpemu_mma_model model;      /* accumulation model, bound to afmt/bfmt (c = d = f32) */
    const fpemu_format *afmt;   /* element format of A (== model.fa) */
    const fpemu_format *bfmt;   /* element format of B (== model.fb) */
    const fpemu_format *outfmt; /* D rounded (rne) to this; NULL = f32 as computed */
    fpemu_gemm_scaling scaling;
    int promote;                /* f32 promotion interval along K (0 = none) */
    int sat;                    /* NONE: saturating casts (default 1) */
    int inputs_prerounded;      /* NONE only: A and B already hold values of
                                 * afmt/bfmt (e.g. from fpemu_round_f32): skip the
                                 * cast (any f32 value is then taken exactly) */
    int nthreads;               /* 0 = number of online CPUs */
    int scalar_only;            /* testing: never use the vectorised kernel */
    int isa;                    /* testing: kernel instruction set, 0 = best the CPU
                                 * has, 1 = SSE2, 2 = AVX2, 3 = AVX-512, 4 = AVX-512
                                 * with its integer units: AMX int8 tiles (the exact
                                 * kind's integer form) or VNNI (the group kernel's);
                                 * other models take 3 (capped at what the CPU and
                                 * OS allow) */
} fpemu_gemm_config;

/* Telemetry of one call (docs/training.md). */
typedef struct fpemu_gemm_stats {
    fpemu_cast_stats a, b;      /* quantisation of A and B */
    float amax_a, amax_b;       /* max |x| of A and B as given (before scaling) */
    float scale_a, scale_b;     /* per-tensor encode scales used (1 if none/not per-tensor) */
    uint64_t slow_outputs;      /* outputs recomputed on the scalar model */
    int kernel;                 /* 0 scalar, 1 sse2, 2 avx2, 3 avx512, 4 avx512 and AMX int8 tiles (the exact kind) or VNNI (the group kernel) */
    int lanes;                  /* 16: a 16-lane kernel (every kernel but the f64 one), 8: the f64 kernel, 0: scalar model */
} fpemu_gemm_stats;

/* Set up cfg for a model preset and element formats ("h100", "e4m3",
 * "e4m3"): c = d = f32, scaling NONE, no promotion, sat = 1, all threads.
 * Returns 0, or -1 with a message (unknown model, unsupported format). */
int fpemu_gemm_config_init(fpemu_gemm_config *cfg, const char *model, const char *afmt,
                           const char *bfmt, char *err, size_t errlen);
/* Recipe helpers: set cfg->scaling (and promote for BLOCKWISE). name is one
 * of none, tensor (TE current), tensor-torchao, given, rowwise, blockwise,
 * mx-floor, mx-rceil, nvfp4. Returns 0 or -1 with a message. */
int fpemu_gemm_config_set_scaling(fpemu_gemm_config *cfg, const char *name, char *err,
                                  size_t errlen);

/* Quantise one operand as the GEMM does: X (rows x cols, row-major), the
 * recipe's blocks running along cols (the GEMM's K): A passes as it is, B
 * as its transpose. The public form of the recipes' one implementation
 * (emu/recipe.c, which fpemu_gemm_f32, `fpemu cast --scaling` and the
 * training engine run).
 *   tile_rows  BLOCKWISE: rows per tile (the GEMM passes block_a_rows for A,
 *              block_b_cols for B^T); <= 0: s->block_a_rows.
 *   sat        NONE: saturating casts; every scaled recipe saturates.
 *   ctx        NULL: rne, canonical NaN (the GEMM). Otherwise the element
 *              casts of NONE, TENSOR, GIVEN (s->scale_a), ROWWISE and
 *              BLOCKWISE take its rounding mode, NaN policy and stream
 *              (element (r, c) takes draw r * cols + c; the counter then
 *              advances by rows * cols), its flags are OR-ed, ctx->sat is
 *              left as it was. MX and NVFP4 cast with rne only (-1 for
 *              another mode) and their block casts' own canonical NaN.
 * Outputs (each may be NULL but codes):
 *   codes      rows x cols element codes;
 *   enc_scale  the per-tensor encode scale (TENSOR, GIVEN; NVFP4: the f32
 *              tensor scale), else 1;
 *   dec        fpemu_gemm_quantize_nscales(...) decode factors: TENSOR,
 *              GIVEN: 1 / scale; ROWWISE: 1 / scale per row; BLOCKWISE: the
 *              tile decode scales, ceil(rows / tile_rows) x ceil(cols /
 *              block_k) row-major; MX / NVFP4: the block scales' values
 *              (e8m0 / e4m3), rows x ceil(cols / 32 or 16); NONE: 1;
 *   scode      MX / NVFP4: the block scales' codes, laid out as dec;
 *   deq        rows x cols dequantised values in f32: decode(code) times
 *              the f32 decode factor (TENSOR, GIVEN, ROWWISE, BLOCKWISE: one
 *              f32 multiply), MX: times 2^(E-127) (exact, then to f32),
 *              NVFP4: fl32(e2m1 x block scale) x fl32(1 / tensor scale);
 *   st         accumulated into (amax, counts of the element casts).
 * Returns 0, or -1 with a message in err. */
int fpemu_gemm_quantize_f32(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int rows, int cols, const float *X,
                            int tile_rows, int sat, fpemu_ctx *ctx, uint64_t *codes, float *enc_scale, float *dec,
                            uint64_t *scode, float *deq, fpemu_cast_stats *st, char *err, size_t errlen);
/* Number of decode factors fpemu_gemm_quantize_f32 writes to dec. */
size_t fpemu_gemm_quantize_nscales(const fpemu_gemm_scaling *s, int rows, int cols, int tile_rows);

/* Check a call's arguments; 0, or -1 with a message. Besides the sizes
 * (0 <= M, N <= 2^31 - 65, K >= 0) and leading dimensions: afmt/bfmt are
 * the model's fa/fb, its c and d are f32, its parameters are those
 * fpemu_mma_model_finish accepts (outf up to date), scaling.kind and (MX)
 * mx_rule are values of their enums, and the recipe's rules on promote,
 * tile sizes, formats and given scales hold. */
int fpemu_gemm_check(const fpemu_gemm_config *cfg, int M, int N, int K, int lda, int transA,
                     int ldb, int transB, int ldc, int ldd, char *err, size_t errlen);

/* D = A x B (+ C). Returns 0, or -1 on bad arguments (see fpemu_gemm_check) or
 * out of memory. stats may be NULL. */
int fpemu_gemm_f32(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda,
                   int transA, const float *B, int ldb, int transB, const float *C /*nullable*/,
                   int ldc, float *D, int ldd, fpemu_gemm_stats *stats);

/* The same product from codes already in afmt/bfmt (no scaling; MX/NVFP4
 * scale codes optional: sa is M x ceil(K/sblock) row-major, sb is
 * ceil(K/sblock) x N row-major, or NULL). A is M x K row-major codes, B is
 * K x N row-major codes (uint64_t); bits outside a code's field are
 * ignored (fpemu.h). A and B may be NULL when K = 0. C (f32, nullable) is
 * the MMA's c. */
int fpemu_gemm_codes(const fpemu_gemm_config *cfg, int M, int N, int K, const uint64_t *A,
                     const uint64_t *B, const float *C, const fpemu_format *sfmt,
                     const uint64_t *sa, const uint64_t *sb, int sblock, float *D,
                     fpemu_gemm_stats *stats);

/* Reference: the same result computed one output at a time with fpemu_mma_dot /
 * fpemu_mma_dot_scaled after the same quantisation (slow; what the tests compare
 * fpemu_gemm_f32 against). */
int fpemu_gemm_f32_reference(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A,
                             int lda, int transA, const float *B, int ldb, int transB,
                             const float *C, int ldc, float *D, int ldd, fpemu_gemm_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
