/* gemm_backend.h: the low-precision GEMM behind trn__gemm (one function, so
 * the engine has exactly one door to the tensor-core models of emu/). */
#ifndef FPEMU_GEMM_BACKEND_H
#define FPEMU_GEMM_BACKEND_H
#include "fpemu.h"
/* C[M][N] (f32 values) = sum_k A[m][k] B[n][k], A and B holding values of
 * fa / fb, through the tensor-core model `mma` (h100, a100, ...) for that
 * input type. Returns 0, or -1 if the model cannot take these formats. */
int trn__gemm_lowp(const char *mma, const fpemu_format *fa, const fpemu_format *fb, int M, int N, int K,
                   const double *A, const double *B, double *C);
/* The name of the backend in use (for summary.json). */
const char *trn__gemm_backend_name(void);
#endif
