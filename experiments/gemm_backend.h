/* SPDX-License-Identifier: MIT */
/* gemm_backend.h: the low-precision GEMM behind trn__gemm (one function, so
 * the engine has exactly one door to the tensor-core models of emu/). */
#ifndef FPEMU_GEMM_BACKEND_H
#define FPEMU_GEMM_BACKEND_H
#include "fpemu.h"
/* D[M][N] = sum_k A[m][k] B[n][k], A and B holding values of fa / fb,
 * through the tensor-core model `mma` (h100, a100, ...) for that input
 * type. The caller owns every buffer (the engine's scratch): nothing is
 * allocated here. Returns 0, or -1 if the model cannot take these formats
 * or the GEMM could not run. */
int trn__gemm_lowp(const char *mma, const fpemu_format *fa, const fpemu_format *fb, int M, int N, int K,
                   const float *A, const float *B, float *D);
/* MX block scaling inside the MMA (OCP MX; Blackwell: the e8m0 scale
 * exponents join the product exponents): A and B are the unquantised
 * (f32-valued) operands, quantised inside to fa / fb in blocks of 32 along
 * K with the FLOOR (rceil = 0) or RCEIL rule. Fills the cast statistics of
 * A and B. Returns 0, -1 on failure, or -2 if this backend has no MX path
 * (the caller then quantises and promotes per block itself). */
int trn__gemm_lowp_mx(const char *mma, int rceil, const fpemu_format *fa, const fpemu_format *fb, int M, int N,
                      int K, const float *A, const float *B, float *D, fpemu_cast_stats *sa, fpemu_cast_stats *sb);
/* 1 if trn__gemm_lowp_mx takes these formats under preset mma (its
 * configuration passes fpemu_gemm_check; nothing is allocated), else 0. */
int trn__gemm_mx_valid(const char *mma, int rceil, const fpemu_format *fa, const fpemu_format *fb);
/* The scaled GEMM of emu (emu/recipe.h emu__gemm_scaled) under preset mma:
 * D[M][N] = sum_k A[m][k] B[n][k], A and B holding quantised values of fa /
 * fb (the scaled domain), dequantised with da (M x nkb) and db (N x nkb),
 * the decode factors per row and K block of kb (nkb = ceil(K / kb));
 * promote = 0: one chunk (nkb 1), D = fl32(acc * fl32(da * db)); promote > 0:
 * f32 promotion every promote elements of K (a divisor of kb),
 * acc = fmaf(partial, fl32(da * db), acc). nthreads: emu's row threads.
 * Returns 0, or -1 if the model cannot take these formats or the GEMM
 * could not run. */
int trn__gemm_lowp_scaled(const char *mma, const fpemu_format *fa, const fpemu_format *fb, int M, int N, int K,
                          const float *A, const float *B, const float *da, const float *db, int kb, int promote,
                          int nthreads, float *D);
/* 0 if the preset has an MMA for fa x fb; else -1 with a message. */
int trn__gemm_supported(const char *mma, const fpemu_format *fa, const fpemu_format *fb, char *err, size_t errlen);
/* The name of the backend in use (for summary.json). */
const char *trn__gemm_backend_name(void);
#endif
