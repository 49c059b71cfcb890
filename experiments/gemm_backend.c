/* gemm_backend.c: INTERIM backend until emu/gemm.h lands: f64 accumulation
 * in K order, one rounding to f32 at the end. It ignores the tensor-core
 * model, and says so in trn__gemm_backend_name(). */
#include "gemm_backend.h"

int trn__gemm_lowp(const char *mma, const fpemu_format *fa, const fpemu_format *fb, int M, int N, int K,
                   const double *A, const double *B, double *C) {
    (void)mma; (void)fa; (void)fb;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double acc = 0;
            const double *a = A + (size_t)m * K, *b = B + (size_t)n * K;
            for (int k = 0; k < K; k++) acc += a[k] * b[k];
            C[(size_t)m * N + n] = (float)acc;
        }
    return 0;
}

const char *trn__gemm_backend_name(void) { return "interim-f64-accumulate (no tensor-core model)"; }
