/* SPDX-License-Identifier: MIT */
/* b_gemm.c: speed of the emulated GEMM (emu/gemm.h) for each tensor-core
 * preset at M = N = K = 512 (and 2048 for the two target presets: h100
 * e4m3 with per-tensor scaling and a100 f16), next to a native f32 GEMM
 * measured in the same run (OpenBLAS cblas_sgemm, all threads). Both use
 * every online core. Each figure is the best of REPS runs (wall clock),
 * with the CPU time of that run; GFLOP/s count 2*M*N*K.
 * Target (issue 4): h100 fp8 and a100 f16 within 10x of native sgemm time.
 * A second table times the scalar model alone (fpemu_mma_dot /
 * fpemu_mma_dot_scaled, one dot product of K = 4096 at a time, one thread:
 * what the GEMM's fallback outputs, the reference kinds and NVFP4 run on)
 * in ns per product, next to a native f32 dot product of the same length.
 * Options: b_gemm [--quick] (512 only, one run each; fewer dot products)
 * [--scalar] (the second table only). */
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

/* The scalar model, one dot product at a time (see the head comment). */
static int scalar_model_table(const float *x, const float *y, int quick, const char *lead) {
    enum { K = 4096 };
    static const struct { const char *model, *fmt, *sfmt; int sblock; } rows[] = {
        {"h100", "e4m3", NULL, 0},  {"a100", "f16", NULL, 0},     {"a100", "bf16", NULL, 0}, {"b200", "e2m1", "e4m3", 16},
        {"b200", "e4m3", "e8m0", 32}, {"exact", "e4m3", NULL, 0}, {"fma-seq", "f16", NULL, 0}, {"pairwise", "f16", NULL, 0},
    };
    static uint64_t a[K], b[K], sa[K / 16], sb[K / 16];
    int reps = quick ? 20 : 100;
    /* native: f32 dot products of the same vectors (volatile sink keeps the loop) */
    volatile float sink = 0;
    double nat = 1e30;
    for (int t = 0; t < 5; t++) {
        double t0 = now();
        for (int r = 0; r < reps; r++) {
            float acc = 0;
            for (int i = 0; i < K; i++) acc += x[i] * y[i + r];
            sink = acc;
        }
        double d = (now() - t0) / ((double)reps * K);
        if (d < nat) nat = d;
    }
    (void)sink;
    printf("%sb_gemm: scalar model, one dot product of K = %d at a time, one thread; native = f32 dot product loop, same run\n",
           lead, K);
    printf("%-8s %-6s %-6s %12s %12s %9s\n", "model", "input", "scales", "ns/product", "native ns", "x native");
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
        char err[256];
        const fpemu_format *f = fpemu_format_get(rows[ri].fmt, err, sizeof err);
        const fpemu_format *sf = rows[ri].sfmt ? fpemu_format_get(rows[ri].sfmt, err, sizeof err) : NULL;
        fpemu_mma_model m;
        if (!f || (rows[ri].sfmt && !sf) || fpemu_mma_model_preset(&m, rows[ri].model, f, f, NULL, NULL, err, sizeof err)) {
            fprintf(stderr, "b_gemm: %s\n", err);
            return 1;
        }
        fpemu_ctx ctx;
        fpemu_ctx_init(&ctx);
        ctx.sat = 1;
        /* e2m1 elements and scales that keep the products in range */
        double mul = sf ? 4.0 : 1.0;
        for (int i = 0; i < K; i++) a[i] = fpemu_from_float(f, (float)(x[i] * mul), &ctx), b[i] = fpemu_from_float(f, (float)(y[i] * 20 * mul), &ctx);
        for (int i = 0; i < K / 16; i++) sa[i] = sb[i] = sf ? fpemu_from_float(sf, 1.0f, &ctx) : 0;
        double best = 1e30;
        uint64_t sum = 0;
        int n = !strcmp(rows[ri].model, "pairwise") || !strcmp(rows[ri].model, "exact") ? reps / 4 + 1 : reps;
        for (int t = 0; t < 3; t++) {
            double t0 = now();
            for (int r = 0; r < n; r++)
                sum += sf ? fpemu_mma_dot_scaled(&m, a, b, K, 0, sf, sa, sb, rows[ri].sblock, NULL) : fpemu_mma_dot(&m, a, b, K, 0, NULL);
            double d = (now() - t0) / ((double)n * K);
            if (d < best) best = d;
        }
        printf("%-8s %-6s %-6s %12.2f %12.3f %9.0f   (checksum %llx)\n", rows[ri].model, rows[ri].fmt, rows[ri].sfmt ? rows[ri].sfmt : "-",
               best * 1e9, nat * 1e9, best / nat, (unsigned long long)sum);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv) {
    int quick = 0, scalar_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--scalar")) scalar_only = 1;
        else { fprintf(stderr, "b_gemm: unknown option '%s' (expected --quick or --scalar)\n", argv[i]); return 2; }
    }
    static const struct { const char *model, *fmt, *recipe; int big; } cases[] = {
        {"h100", "e4m3", "tensor", 1},  {"a100", "f16", "none", 1},  {"h100", "f16", "none", 0},
        {"a100", "bf16", "none", 0},    {"a100", "tf32", "none", 0}, {"v100", "f16", "none", 0},
        {"ada", "e4m3", "tensor", 0},   {"h100", "e4m3", "blockwise", 0}, {"b200", "e4m3", "mx-rceil", 0},
        {"b200", "e2m1", "nvfp4", 0},   {"fma-seq", "f16", "none", 0}, {"exact", "e4m3", "tensor", 0},
    };
    int sizes[2] = {512, 2048};
    int nsizes = scalar_only ? 0 : quick ? 1 : 2;
    size_t maxn = quick ? 512 : 2048;
    float *A = malloc(sizeof(float) * maxn * maxn), *B = malloc(sizeof(float) * maxn * maxn);
    float *C = malloc(sizeof(float) * maxn * maxn);
    if (!A || !B || !C) { fprintf(stderr, "b_gemm: out of memory\n"); return 1; }
    for (size_t i = 0; i < maxn * maxn; i++) A[i] = nrand(), B[i] = nrand() * 0.05f;
    if (!scalar_only) {
        printf("b_gemm: emulated GEMM D = A x B (A, B ~ normal), every core; native = OpenBLAS cblas_sgemm, same run\n");
        printf("%-8s %-6s %-10s %5s %9s %9s %9s %10s %8s %s\n", "model", "input", "scaling", "n", "wall s", "cpu s", "GFLOP/s",
               "native s", "x native", "kernel");
    }
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
    if (scalar_model_table(A, B, quick, scalar_only ? "" : "\n")) return 1;
    free(A), free(B), free(C);
    return 0;
}
