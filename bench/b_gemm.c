/* b_gemm.c: speed of the emulated GEMM (emu/gemm.h) for each tensor-core
 * preset at M = N = K = 512 (and 2048 for the two target presets: h100
 * e4m3 with per-tensor scaling and a100 f16), next to a native f32 GEMM
 * measured in the same run (OpenBLAS cblas_sgemm, all threads). Both use
 * every online core. Each figure is the best of REPS runs (wall clock),
 * with the CPU time of that run; GFLOP/s count 2*M*N*K.
 * Target (issue 4): h100 fp8 and a100 f16 within 10x of native sgemm time.
 * Options: b_gemm [--quick] (512 only, one run each). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gemm.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t rs = 12345;
static double urand(void) {
    rs ^= rs >> 12, rs ^= rs << 25, rs ^= rs >> 27;
    return ((rs * 0x2545F4914F6CDD1DULL >> 11) + 0.5) * 0x1p-53;
}
static float nrand(void) { return (float)(sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand())); }

typedef struct { double wall, cpu; } timing;

static timing best_sgemm(int n, const float *A, const float *B, float *C, int reps) {
    timing b = {1e30, 0};
    for (int r = 0; r < reps; r++) {
        double t0 = now(), c0 = cpu();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
        double t = now() - t0, c = cpu() - c0;
        if (t < b.wall) b.wall = t, b.cpu = c;
    }
    return b;
}

int main(int argc, char **argv) {
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    static const struct { const char *model, *fmt, *recipe; int big; } cases[] = {
        {"h100", "e4m3", "tensor", 1},  {"a100", "f16", "none", 1},  {"h100", "f16", "none", 0},
        {"a100", "bf16", "none", 0},    {"a100", "tf32", "none", 0}, {"v100", "f16", "none", 0},
        {"ada", "e4m3", "tensor", 0},   {"h100", "e4m3", "blockwise", 0}, {"b200", "e4m3", "mx-rceil", 0},
        {"b200", "e2m1", "nvfp4", 0},   {"fma-seq", "f16", "none", 0}, {"exact", "e4m3", "tensor", 0},
    };
    int sizes[2] = {512, 2048};
    int nsizes = quick ? 1 : 2;
    size_t maxn = quick ? 512 : 2048;
    float *A = malloc(sizeof(float) * maxn * maxn), *B = malloc(sizeof(float) * maxn * maxn);
    float *C = malloc(sizeof(float) * maxn * maxn);
    if (!A || !B || !C) { fprintf(stderr, "b_gemm: out of memory\n"); return 1; }
    for (size_t i = 0; i < maxn * maxn; i++) A[i] = nrand(), B[i] = nrand() * 0.05f;
    printf("b_gemm: emulated GEMM D = A x B (A, B ~ normal), every core; native = OpenBLAS cblas_sgemm, same run\n");
    printf("%-8s %-6s %-10s %5s %9s %9s %9s %10s %8s %s\n", "model", "input", "scaling", "n", "wall s", "cpu s", "GFLOP/s",
           "native s", "x native", "kernel");
    for (int si = 0; si < nsizes; si++) {
        int n = sizes[si];
        int reps = n >= 2048 ? 1 : 3;
        timing nat = best_sgemm(n, A, B, C, n >= 2048 ? 3 : 10);
        printf("%-8s %-6s %-10s %5d %9.4f %9.4f %9.1f %10s %8s\n", "native", "f32", "-", n, nat.wall, nat.cpu,
               2.0 * n * n * n / nat.wall / 1e9, "-", "1.0");
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            if (n > 512 && !cases[ci].big) continue;
            if (quick && ci > 1) continue;
            fpemu_gemm_config cfg;
            char err[256];
            if (fpemu_gemm_config_init(&cfg, cases[ci].model, cases[ci].fmt, cases[ci].fmt, err, sizeof err) ||
                fpemu_gemm_config_set_scaling(&cfg, cases[ci].recipe, err, sizeof err)) {
                fprintf(stderr, "b_gemm: %s\n", err);
                return 1;
            }
            int nn = n;
            /* the slow reference kinds: a smaller problem, scaled to n^3 for the ratio */
            int scalar = !strcmp(cases[ci].model, "exact") || !strcmp(cases[ci].model, "fma-seq") ||
                         !strcmp(cases[ci].recipe, "nvfp4");
            if (scalar) nn = 256;
            timing best = {1e30, 0};
            fpemu_gemm_stats st;
            for (int r = 0; r < (scalar ? 1 : reps); r++) {
                double t0 = now(), c0 = cpu();
                if (fpemu_gemm_f32(&cfg, nn, nn, nn, A, nn, 0, B, nn, 0, NULL, nn, C, nn, &st)) {
                    fprintf(stderr, "b_gemm: fpemu_gemm_f32 failed\n");
                    return 1;
                }
                double t = now() - t0, c = cpu() - c0;
                if (t < best.wall) best.wall = t, best.cpu = c;
            }
            double gf = 2.0 * nn * nn * nn / best.wall / 1e9;
            double scale = (double)n * n * n / ((double)nn * nn * nn);
            static const char *isa[] = {"scalar model", "SSE2", "AVX2", "AVX-512"};
            char kern[64];
            snprintf(kern, sizeof kern, "%s%s%s", isa[st.kernel], st.lanes == 16 ? " f32 x16" : st.lanes == 8 ? " f64 x8" : "",
                     scalar ? " (n=256, scaled)" : "");
            printf("%-8s %-6s %-10s %5d %9.4f %9.4f %9.2f %10.4f %8.1f %s\n", cases[ci].model, cases[ci].fmt, cases[ci].recipe, n,
                   best.wall * scale, best.cpu * scale, gf, nat.wall, best.wall * scale / nat.wall, kern);
            fflush(stdout);
        }
    }
    free(A), free(B), free(C);
    return 0;
}
