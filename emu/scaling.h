/* SPDX-License-Identifier: MIT */
/* scaling.h: scale factors for low-precision GEMM inputs (docs/scaling.md):
 * per-tensor current scaling, the delayed-scaling state machine
 * (TransformerEngine DelayedScaling), MX block scales (OCP FLOOR and
 * TE/cuBLAS RCEIL rules, e8m0) and NVFP4 scales (e4m3 block scales, f32
 * tensor scale). All arithmetic that the frameworks do in f32 is done in
 * f32 here (same operations, same order), so the scale bits match.
 *
 * The quantisation of a whole operand per recipe and the scaled GEMM are
 * in gemm.h (fpemu_gemm_quantize_f32, fpemu_gemm_f32); in the source tree,
 * emu/recipe.h lists where each piece of a recipe lives.
 *
 * Conventions: an "encode scale" s multiplies the high-precision value
 * before the cast (x8 = cast(x * s)); the "decode scale" 1/s multiplies the
 * low-precision value back. MX and NVFP4 block scales are stored as decode
 * scales (codes of e8m0 / e4m3), as the formats define them.
 */
#ifndef FPEMU_SCALING_H
#define FPEMU_SCALING_H

#include <stddef.h>
#include <stdint.h>
#include "fpemu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- per-tensor current scaling (TE Float8CurrentScaling, torchao tensorwise) */

typedef struct fpemu_scaling_current_opts {
    float eps;          /* amax is clamped to at least eps (torchao 1e-12, TE 0) */
    int div_in_f64;     /* torchao: fmt_max / amax in f64, then rounded to f32 */
    int pow2;           /* round the scale down to a power of two */
    int torch_nonfinite; /* torchao: an inf or NaN amax goes through the
                          * arithmetic as in torch (scale 0 or NaN); 0: TE's 1 */
} fpemu_scaling_current_opts;

/* TE defaults: eps 0, f32 division, no pow2, non-finite amax -> 1. */
void fpemu_scaling_current_opts_te(fpemu_scaling_current_opts *o);
/* torchao defaults: eps 1e-12, f64 division, no pow2 (rowwise: pow2 = 1),
 * torch's non-finite arithmetic. */
void fpemu_scaling_current_opts_torchao(fpemu_scaling_current_opts *o);

/* Encode scale for a tensor with this amax: fmt_max / max(amax, eps), an
 * infinite quotient clamped to FLT_MAX. A zero amax (with eps 0), an inf
 * or a NaN gives 1 (TE's compute_scale_from_amax). With torch_nonfinite
 * (torchao's amax_to_scale: fmt_max / clamp(amax, min=eps), then
 * exp2(floor(log2 s)) for pow2) an inf amax gives 0 and a NaN amax NaN:
 * every element of the tensor (or row) then casts to 0 or NaN and its
 * dequantisation factor 1/scale is inf or NaN, so the GEMM outputs that
 * use it are NaN, as torch._scaled_mm's are. */
float fpemu_scaling_current_scale(const fpemu_scaling_current_opts *o, float amax, double fmt_max);

/* MS-AMP's scale (ScalingMeta.compute_scaling_factor, margin 0), for every
 * ScalingTensor cast (fp8 GEMM inputs, fp8 weight gradients and moments,
 * scaled f16 weights and moments): 2^e with e = floor(log2(fl32(fmt_max /
 * amax))), the quotient an f32 division and its log2 correctly rounded to
 * f32 (CUDA's log2f is within 1 ulp of that); |e| >= 128 gives 2^|e| = inf
 * (then 1/inf = 0 for e < 0), as torch.pow in f32. amax 0 or NaN keeps
 * prev (the tensor's previous scale); amax inf gives 1/prev (its exponent
 * is -inf, and the final where(exp < 0, 1/sf, sf) inverts the kept
 * scale). Unlike the rule above, a quotient just below a power of two
 * whose log2 rounds up to it scales amax a few ulps past fmt_max, where
 * the saturating cast clamps it. */
float fpemu_scaling_msamp_scale(float amax, double fmt_max, float prev);

/* max |x| over finite elements (NaN/inf make the result NaN/inf, so the
 * scale rule above falls back to 1). Strided: x[i * stride], n elements. */
float fpemu_scaling_amax_f32(const float *x, size_t n, size_t stride);

/* ---- delayed scaling (TransformerEngine DelayedScaling) --------------- */

typedef enum fpemu_scaling_amax_algo {
    FPEMU_SCALING_AMAX_MAX = 0,
    FPEMU_SCALING_AMAX_MOST_RECENT
} fpemu_scaling_amax_algo;
typedef enum fpemu_scaling_fp8_format {
    FPEMU_SCALING_FP8_HYBRID = 0,
    FPEMU_SCALING_FP8_E4M3
} fpemu_scaling_fp8_format;

/* Format for a tensor under an fp8_format: HYBRID = e4m3 forward (input,
 * weight, output), e5m2 for gradients; E4M3 = e4m3 everywhere. */
const fpemu_format *fpemu_scaling_fp8_format_for(fpemu_scaling_fp8_format f, int is_gradient);

typedef struct fpemu_scaling_delayed {
    float *history;               /* len slots; slot 0 collects the current step's amax */
    int len;                      /* amax_history_len (TE default 1024) */
    fpemu_scaling_amax_algo algo; /* max (default) or most_recent */
    float margin;                 /* scale = (fmt_max / amax) * 2^-margin */
    float fmt_max;
    float scale;                  /* current encode scale (starts at 1) */
    float scale_inv;              /* 1 / scale in f32 */
} fpemu_scaling_delayed;

/* Allocates the history (zeros). Returns 0 or -1 (bad len, out of memory). */
int fpemu_scaling_delayed_init(fpemu_scaling_delayed *s, double fmt_max, int len,
                               fpemu_scaling_amax_algo algo, float margin);
void fpemu_scaling_delayed_free(fpemu_scaling_delayed *s);
/* Record an amax seen this step: slot 0 = max(slot 0, amax) (NaN sticks). */
void fpemu_scaling_delayed_record(fpemu_scaling_delayed *s, float amax);
/* End of step (TE amax_and_scale_update): reduce the history (max over all
 * len slots, or slot 0), new scale = fmt_max * 2^-margin / amax unless amax
 * is 0, inf or NaN (then the old scale stays); an infinite scale becomes
 * FLT_MAX; scale_inv = 1/scale; then the history rolls (the newest amax
 * moves to slot len-1, slot 0 is cleared for the next step). */
void fpemu_scaling_delayed_update(fpemu_scaling_delayed *s);

/* ---- MX block scaling (OCP Microscaling 1.0) --------------------------- */

typedef enum fpemu_scaling_mx_rule {
    FPEMU_SCALING_MX_FLOOR = 0, /* OCP: floor(log2 amax) - emax_elem, clamped to [-127,127] */
    FPEMU_SCALING_MX_RCEIL      /* TE/cuBLAS: ceil(log2(fl32(amax * fl32(1/fmt_max)))) */
} fpemu_scaling_mx_rule;

/* emax_elem of an MX element format: 8 e4m3, 15 e5m2, 4 e3m2, 2 e2m3 and
 * e2m1 (int8 has 0; see fpemu_scaling_mx_scale_int8). */
int fpemu_scaling_mx_emax_elem(const fpemu_format *elem);
/* e8m0 code of the shared scale for a block with this amax (NaN -> 0xFF;
 * amax 0 -> 0x00 under FLOOR (clamped) and RCEIL). */
uint8_t fpemu_scaling_mx_scale(fpemu_scaling_mx_rule rule, const fpemu_format *elem, float amax);
/* Quantise n elements x[i*stride] of one block to elem codes with the
 * shared scale (e8m0 code): saturating cast (rne) of x / 2^(E-127), the
 * division exact. codes has n entries (uint64_t). */
void fpemu_scaling_mx_quantize_block(const fpemu_format *elem, uint8_t scale, const float *x,
                                     size_t n, size_t stride, uint64_t *codes,
                                     fpemu_cast_stats *stats);

/* ---- NVFP4 (e2m1 elements, blocks of 16, e4m3 block scale, f32 tensor scale) */

/* Tensor (global) encode scale: 448 * 6 / amax, clamped to FLT_MAX;
 * amax 0 or scale 0 -> 1 (TE). */
float fpemu_scaling_nvfp4_tensor_scale(float tensor_amax);
/* e4m3 code of a block's decode scale: e4m3_rne_sat(fl32(block_amax / 6) * tensor_scale). */
uint8_t fpemu_scaling_nvfp4_block_scale(float block_amax, float tensor_scale);
/* Quantise one block: e2m1 = cast_rne_sat(x * fl32(tensor_scale / float(block scale))),
 * the encode factor 0 when the block scale is 0. */
void fpemu_scaling_nvfp4_quantize_block(uint8_t scale_code, float tensor_scale, const float *x,
                                        size_t n, size_t stride, uint64_t *codes,
                                        fpemu_cast_stats *stats);

/* ---- blockwise (DeepSeek-V3 / DeepGEMM 1x128 and 128x128) -------------- */

/* Decode scale of a tile: max(amax, eps) / fmt_max in f32 (eps = 1e-4 in
 * DeepGEMM's reference casts); the elements are cast(x * fl32(fmt_max /
 * max(amax, eps))). An inf amax decodes by inf and encodes by 0, a NaN one
 * by NaN (torch's arithmetic), so the GEMM outputs that use the tile are
 * NaN. pow2: the decode scale is rounded up to a power of two (TE
 * Float8BlockScaling power_2_scale), and an inf or NaN amax gives 1 (TE). */
float fpemu_scaling_block_decode_scale(float amax, double fmt_max, float eps, int pow2);
float fpemu_scaling_block_encode_scale(float amax, double fmt_max, float eps, int pow2);

#ifdef __cplusplus
}
#endif
#endif
