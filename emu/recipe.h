/* SPDX-License-Identifier: MIT */
/* recipe.h: the scaling recipes' one implementation, as the library's
 * callers inside this repository use it (not installed; emu__ names stay
 * out of libfpemu.so, emu/libfpemu.map). docs/scaling.md describes the
 * recipes. Three pieces, each written once:
 *
 *   the scale of an amax    scaling.c: fpemu_scaling_current_scale (TE,
 *                           torchao; rowwise), fpemu_scaling_block_*
 *                           (DeepGEMM, TE power-of-two), fpemu_scaling_mx_scale
 *                           with emu__mx_encode_factor (MX), the NVFP4 pair,
 *                           fpemu_scaling_msamp_scale, and
 *                           emu__scaling_delayed_scale (TE delayed scaling:
 *                           the scale from the amax its history reduces to);
 *   an operand's quantisation  emu__quantize (recipe.c): a row-major tensor
 *                           into codes or values and per-row, per-block
 *                           decode factors, per recipe (tensor, row, 1 x N
 *                           and N x N blocks, MX, NVFP4). fpemu_gemm_f32,
 *                           fpemu_gemm_quantize_f32 (so `fpemu cast`) and the
 *                           training engine call it;
 *   the scaled GEMM          emu__gemm_scaled (gemm.c): quantised values and
 *                           their decode factors per row and K block, f32
 *                           promotion every `promote` elements of K. The
 *                           library GEMM's recipes run through the same
 *                           dequantisation code (gemm.c's chunk_dq and
 *                           epilogue), the training engine calls it.
 *
 * experiments/ (libfpemutrain links the static libfpemu.a) includes this
 * header; experiments/gemm_policy.c keeps the policy: which tensor gets
 * which recipe, the delayed-scaling histories, the telemetry. */
#ifndef FPEMU_RECIPE_H
#define FPEMU_RECIPE_H

#include <stddef.h>
#include <stdint.h>
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Outputs of emu__quantize; every pointer may be NULL (but one of codes
 * and vals is needed when there are elements). nkb = emu__quant_nkb(s, cols). */
typedef struct emu_quant {
    uint64_t *codes;    /* rows x cols element codes (fpemu_encode_f32) */
    void *ncodes;       /* or (codes NULL) the same in the format's container
                         * (at most 32 bits), fpemu_encode_f32's layout */
    float *vals;        /* rows x cols element values, in the scaled domain
                         * (fpemu_round_f32); may be X itself (in place) */
    float *dec;         /* rows x nkb decode factors, per row and K block:
                         * NONE 1; TENSOR, GIVEN 1/scale (every row); ROWWISE
                         * 1/scale of the row; BLOCKWISE the row's tile's decode
                         * scale; MX, NVFP4 the block scale's value (e8m0, e4m3) */
    float *enc;         /* rows x nkb: the factor x was multiplied by before its
                         * cast (NONE: 1; MX: 2^(127-E), NaN for the NaN scale;
                         * NVFP4: fl32(tensor scale / block scale), 0 for a zero
                         * block scale) */
    float *bamax;       /* rows x nkb, ROWWISE / BLOCKWISE / MX / NVFP4: the
                         * amax the block's scale came from (NaN if it holds a
                         * NaN, fpemu_scaling_amax_f32) */
    uint64_t *scode;    /* MX / NVFP4: rows x nkb block scale codes */
    fpemu_cast_stats *st; /* the element casts' counts, accumulated into */
    const float *amax;  /* TENSOR, NVFP4: the tensor's fpemu_scaling_amax_f32
                         * where the caller has it (else NULL: computed here) */
    float tensor_enc;   /* out: the per-tensor encode scale (TENSOR, GIVEN:
                         * s->scale_a; NVFP4: the f32 tensor scale), else 1 */
    float smin;         /* out: the telemetry's scale, the smallest encode
                         * factor (NONE, or no block: 1; TENSOR, GIVEN:
                         * tensor_enc; ROWWISE, BLOCKWISE, NVFP4: the least of
                         * enc; MX: of enc, a block of amax 0 counting as 1);
                         * a NaN one (an MX block holding inf or NaN) sticks */
} emu_quant;

/* fpemu_scaling_amax_f32 of the transpose of X (K x N, row stride ld):
 * the largest magnitude, or the first NaN in column order. */
float emu__amax_cols(const float *X, size_t ld, int K, int N);

/* emu__quantize of X's transpose for the MX and NVFP4 recipes, without
 * making the transpose: X is K x N (row-major, row stride ld >= N), the
 * operand's rows are its N columns, each cut into blocks along K. The
 * codes go to o->ncodes laid out as X's rows (K x N, row stride N; the
 * format's container, at most 32 bits); scode, dec, enc, bamax, st,
 * tensor_enc and smin as emu__quantize writes them for the transpose (N x
 * nkb), the same bits; o->codes and o->vals must be NULL; the context is
 * the recipes' own (rne, saturating). The GEMM's B (K x N) goes through it
 * where its kernels read B's codes in that layout. 0, or -1 with a message. */
int emu__quantize_cols(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int K, int N, const float *X, size_t ld,
                       emu_quant *o, char *err, size_t errlen);

/* Blocks along cols of a recipe's decode factors (rows x nkb): 1 for NONE,
 * TENSOR, GIVEN and ROWWISE; ceil(cols / s->block_k) for BLOCKWISE, ceil(cols
 * / 32) for MX, ceil(cols / 16) for NVFP4 (0 when cols is 0); -1 for a bad
 * recipe. */
int emu__quant_nkb(const fpemu_gemm_scaling *s, int cols);

/* Quantise X (rows x cols, row-major; the recipe's blocks run along cols,
 * the GEMM's K) per recipe s to fmt: the arguments tile_rows, sat and ctx
 * as fpemu_gemm_quantize_f32 (gemm.h) takes them; the outputs in o. A
 * given scale (GIVEN) is taken as it is: 0, inf and NaN multiply through.
 * Returns 0, or -1 with a message (the messages of fpemu_gemm_quantize_f32). */
int emu__quantize(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int rows, int cols, const float *X,
                  int tile_rows, int sat, fpemu_ctx *ctx, emu_quant *o, char *err, size_t errlen);

/* fpemu_gemm_quantize_f32 (gemm.h) with the codes in the format's
 * container (at most 32 bits; fpemu_encode_f32's layout) instead of
 * uint64: the caster's (caststats.c), whose codes are its output. */
int emu__quantize_f32_n(const fpemu_gemm_scaling *s, const fpemu_format *fmt, int rows, int cols, const float *X, int tile_rows,
                        int sat, fpemu_ctx *ctx, void *ncodes, float *enc_scale, float *dec, float *deq, fpemu_cast_stats *st,
                        char *err, size_t errlen);

/* The factor an MX block is multiplied by before its cast, for e8m0 scale
 * code E: 2^(127 - E) (exact in f32), NaN for the NaN scale 0xFF. */
float emu__mx_encode_factor(uint8_t code);

/* fpemu_scaling_amax_f32 of each block of sb elements of x[0 .. n) (the
 * last may be short) into am[0 .. ceil(n / sb)): whole blocks of 16 or 32
 * 16 lanes at a time where the CPU has AVX-512 (MX, NVFP4: one call per
 * run of blocks instead of one per block). */
void emu__block_amax(const float *x, size_t n, size_t sb, float *am);

/* fpemu_scaling_nvfp4_block_scale of each of am[0 .. n) (its f32 steps,
 * then the e4m3 casts as one array cast: the rule's one implementation,
 * which the public per-block function calls with n = 1). */
void emu__nvfp4_block_scales(const float *am, size_t n, float tensor_scale, uint8_t *codes);
/* The bodies of fpemu_scaling_current_scale, _mx_scale,
 * _nvfp4_tensor_scale and _block_{decode,encode}_scale, without their
 * switch to the library's floating-point environment: for the recipes,
 * which run under it already. */
float emu__current_scale(const fpemu_scaling_current_opts *o, float amax, double fmt_max);
uint8_t emu__mx_scale(fpemu_scaling_mx_rule rule, const fpemu_format *elem, float amax);
float emu__nvfp4_tensor_scale(float tensor_amax);
float emu__block_decode_scale(float amax, double fmt_max, float eps, int pow2);
float emu__block_encode_scale(float amax, double fmt_max, float eps, int pow2);

/* The factor an NVFP4 block's elements are multiplied by before their
 * cast: fl32(tensor_scale / block scale), 0 when the block scale (e4m3
 * code) is 0. */
float emu__nvfp4_encode_factor(uint8_t scale_code, float tensor_scale);

/* Elements cast per call of fpemu_encode_f32 where the recipes cast codes
 * through a buffer: each call costs its set-up (more than 16 casts), so the
 * chunk is large; the buffers stay in L1. */
#define EMU_CAST_CHUNK 1024

/* Codes of a format's container (cbuf, as fpemu_encode_f32 writes them)
 * widened to uint64, without a call per element where the container is 8
 * or 16 bits. */
void emu__widen_codes(const fpemu_format *fmt, uint64_t *out, const void *cbuf, size_t m);

/* The cast of n floats y, already scaled (rne, saturating, the format's
 * canonical NaN, a context of its own, whose flags nobody sees): the block
 * casts of MX and NVFP4, one block or a row's run of blocks each scaled by
 * its own factor. To codes (fpemu_encode_f32) or, with codes NULL, to
 * values (fpemu_round_f32; vals may be y). */
void emu__own_cast(const fpemu_format *fmt, const float *y, size_t n, uint64_t *codes, float *vals, fpemu_cast_stats *stats);
/* The same to codes in the format's container at dst (fpemu_encode_f32's
 * layout). */
void emu__own_encode(const fpemu_format *fmt, const float *y, size_t n, void *dst, fpemu_cast_stats *stats);

/* emu__own_cast of n elements x[i * stride] times f (vals may be x when
 * stride is 1). */
void emu__scaled_cast(const fpemu_format *fmt, float f, const float *x, size_t n, size_t stride, uint64_t *codes,
                      float *vals, fpemu_cast_stats *stats);

/* TE DelayedScaling's scale from the amax its history reduces to
 * (amax_and_scale_update): fl32(fmt_max * 2^-margin) / amax in f32 when
 * amax is finite and > 0, else prev; an infinite scale becomes FLT_MAX.
 * fpemu_scaling_delayed_update and the training engine's histories use it. */
float emu__scaling_delayed_scale(float amax, float fmt_max, float margin, float prev);

/* The scaled GEMM on operands already quantised: D[M][N] = sum over K of
 * A[i][k] Bt[j][k] through cfg's MMA model, A holding values of cfg->afmt and
 * Bt (N x K, row-major: B transposed) values of cfg->bfmt (the scaled
 * domain; taken exactly); cfg->scaling is ignored, cfg->promote and
 * cfg->nthreads apply. da (M x nkb) and db (N x nkb), nkb = ceil(K / kb),
 * are the decode factors per row and K block (NULL, both: none):
 *   promote = 0 (nkb must be 1): D = fl32(acc * fl32(da_i * db_j)), or with
 *            rowseq D = fl32(fl32(acc * db_j) * da_i) (B's factor first, as
 *            torch._scaled_mm's rowwise scales on an H200: docs/scaling.md);
 *   promote > 0 (kb a multiple of promote when nkb > 1): each chunk of
 *            promote elements from c = 0, acc = fmaf(partial, fl32(da_ib *
 *            db_jb), acc) in f32, b the chunk's block; D = acc.
 * stats may be NULL. Returns 0, or -1 on bad arguments or out of memory. */
int emu__gemm_scaled(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, const float *Bt,
                     const float *da, const float *db, int kb, int rowseq, float *D, fpemu_gemm_stats *stats);

/* fpemu_gemm_f32, and A's and B's smallest encode scale (emu_quant smin:
 * what fpemu train's telemetry writes as the operand's scale) into smin
 * (may be NULL; 1 for an empty product). */
int emu__gemm_f32_smin(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda, int transA, const float *B,
                       int ldb, int transB, const float *C, int ldc, float *D, int ldd, fpemu_gemm_stats *stats, float smin[2]);

#ifdef __cplusplus
}
#endif
#endif
