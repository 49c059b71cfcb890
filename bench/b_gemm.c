/* SPDX-License-Identifier: MIT */
/* b_gemm.c: speed of the emulated GEMM (emu/gemm.h) for each tensor-core
 * preset against a native f32 GEMM, OpenBLAS cblas_sgemm, on the same A and
 * B, interleaved in one process (bench/bench.h: pairs A B, B A, ...; the
 * minimum and median of each side and of the ratio pair by pair; wall time
 * and process CPU time, since both sides run threads). Both sides get the
 * same thread count (--threads, default every online CPU:
 * openblas_set_num_threads and fpemu_gemm_config.nthreads).
 * Sizes: M = N = K = 512, then each of --sizes (default 2048), for every
 * preset that runs a vectorised kernel; what runs on the scalar model (a
 * probe call at n = 128 finds which) at n = 128 only, against sgemm at 128,
 * and scaled by (n/128)^3 in the n = 512 row.
 * Target (issue 32, item 4): every preset at 2x sgemm or better on one
 * thread for n = 512..2048 (docs/benchmarks.md says which do and why).
 * A second table times the scalar model alone (fpemu_mma_dot /
 * fpemu_mma_dot_scaled, one dot product of K = 4096 at a time, one thread)
 * in ns per product, interleaved with a native f32 dot-product loop of the
 * same length, thread CPU time.
 * --speedup: instead, the emulator on --threads N (default 2) against
 * itself on one thread, interleaved the same way, no BLAS in the process's
 * way (OpenBLAS's idle threads wait spinning); the speed-up is one thread's
 * wall time over N threads', pair by pair (issue 32, item 4: near 2x on 2).
 * Options: b_gemm [--quick] (512 only, the first two presets, 3 pairs)
 * [--scalar] (the second table only) [--speedup] [--threads N] [--pairs N]
 * [--sizes 512,1024,2048] (the sizes beyond 512). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "gemm.h"

static uint64_t rs = 12345;
static double urand(void) {
    rs ^= rs >> 12, rs ^= rs << 25, rs ^= rs >> 27;
    return ((rs * 0x2545F4914F6CDD1DULL >> 11) + 0.5) * 0x1p-53;
}
static float nrand(void) { return (float)(sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand())); }

typedef struct {
    int n;
    const float *A, *B;
    float *C;
    fpemu_gemm_config *cfg;
    fpemu_gemm_stats st;
    int failed;
} gemm_job;
static void run_sgemm(void *p) {
    gemm_job *j = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, j->n, j->n, j->n, 1.0f, j->A, j->n, j->B, j->n, 0.0f, j->C, j->n);
    bench_sink += (uint64_t)(j->C[7] != 0);
}
static void run_emu(void *p) {
    gemm_job *j = p;
    if (fpemu_gemm_f32(j->cfg, j->n, j->n, j->n, j->A, j->n, 0, j->B, j->n, 0, NULL, j->n, j->C, j->n, &j->st)) j->failed = 1;
    bench_sink += (uint64_t)(j->C[7] != 0);
}

/* ---- the scalar model -------------------------------------------------------- */
enum { K = 4096 };
typedef struct {
    const float *x, *y;
    int reps;
} dot_nat;
static void run_dot_nat(void *p) {
    dot_nat *d = p;
    float s = 0;
    for (int r = 0; r < d->reps; r++) {
        float acc = 0;
        for (int i = 0; i < K; i++) acc += d->x[i] * d->y[i + r];
        s += acc;
        __asm__ volatile("" ::: "memory");
    }
    bench_sink += (uint64_t)(s != 0);
}
typedef struct {
    const fpemu_mma_model *m;
    const uint64_t *a, *b, *sa, *sb;
    const fpemu_format *sf;
    int sblock, reps;
} dot_emu;
static void run_dot_emu(void *p) {
    dot_emu *d = p;
    uint64_t s = 0;
    for (int r = 0; r < d->reps; r++)
        s += d->sf ? fpemu_mma_dot_scaled(d->m, d->a, d->b, K, 0, d->sf, d->sa, d->sb, d->sblock, NULL)
                   : fpemu_mma_dot(d->m, d->a, d->b, K, 0, NULL);
    bench_sink += s;
}

static int scalar_model_table(const float *x, const float *y, int quick, int pairs) {
    static const struct { const char *model, *fmt, *sfmt; int sblock; } rows[] = {
        {"h100", "e4m3", NULL, 0},  {"a100", "f16", NULL, 0},     {"a100", "bf16", NULL, 0}, {"b200", "e2m1", "e4m3", 16},
        {"b200", "e4m3", "e8m0", 32}, {"exact", "e4m3", NULL, 0}, {"fma-seq", "f16", NULL, 0}, {"pairwise", "f16", NULL, 0},
    };
    static uint64_t a[K], b[K], sa[K / 16], sb[K / 16];
    int reps = quick ? 10 : 40;
    printf("\nscalar model: one dot product of K = %d at a time, one thread; ns per product, thread CPU time;\n"
           "baseline: an f32 dot-product loop of the same length (x = model / loop, pair by pair)\n", K);
    printf("%-8s %-6s %-6s %10s %10s %10s %10s %8s %8s\n", "model", "input", "scales", "emu med", "emu min", "loop med",
           "loop min", "x med", "x min");
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
        double mul = sf ? 4.0 : 1.0; /* e2m1 elements and scales that keep the products in range */
        for (int i = 0; i < K; i++)
            a[i] = fpemu_from_float(f, (float)(x[i] * mul), &ctx), b[i] = fpemu_from_float(f, (float)(y[i] * 20 * mul), &ctx);
        for (int i = 0; i < K / 16; i++) sa[i] = sb[i] = sf ? fpemu_from_float(sf, 1.0f, &ctx) : 0;
        int slow = !strcmp(rows[ri].model, "pairwise") || !strcmp(rows[ri].model, "exact");
        dot_emu e = {&m, a, b, sa, sb, sf, rows[ri].sblock, slow ? reps / 4 + 1 : reps};
        dot_nat nt = {x, y, reps * 4};
        bench_cmp r;
        bench_compare(run_dot_nat, &nt, (double)nt.reps * K, run_dot_emu, &e, (double)e.reps * K, pairs, BENCH_THREAD, &r);
        printf("%-8s %-6s %-6s %10.2f %10.2f %10.3f %10.3f %8.0f %8.0f\n", rows[ri].model, rows[ri].fmt,
               rows[ri].sfmt ? rows[ri].sfmt : "-", r.row_cpu.med * 1e9, r.row_cpu.min * 1e9, r.base_cpu.med * 1e9,
               r.base_cpu.min * 1e9, r.ratio_cpu.med, r.ratio_cpu.min);
        fflush(stdout);
    }
    return 0;
}

/* OpenBLAS, built for several CPUs (DYNAMIC_ARCH, as Debian builds it),
 * picks its kernels from CPUID when it loads, and a release that does not
 * know the CPU falls back to its generic SSE3 core, "Prescott": 0.3.21 does
 * on Emerald Rapids (family 6 model 207), where its sgemm then runs about 6x
 * slower than with its SkylakeX kernels (1024^3, one thread: 20 against 119
 * GFLOP/s) and every ratio below would flatter the emulator as much. So
 * where the core it chose has no AVX2 kernels and the CPU has AVX2 and FMA,
 * the program runs itself again with OPENBLAS_CORETYPE naming the best core
 * the CPU runs (SkylakeX with AVX-512, else Haswell); an OPENBLAS_CORETYPE
 * the user set is left alone. blas_core_note says what happened, for the
 * header. */
static const char *blas_core_note(char **argv) {
    static char note[160];
    const char *forced = getenv("B_GEMM_BLAS_FALLBACK"); /* set for the second run: the core OpenBLAS had chosen */
    const char *core = openblas_get_corename();
    if (forced) {
        snprintf(note, sizeof note, "%s (OPENBLAS_CORETYPE set by b_gemm: OpenBLAS chose %s on this CPU)", core, forced);
        return note;
    }
    if (getenv("OPENBLAS_CORETYPE")) {
        snprintf(note, sizeof note, "%s (OPENBLAS_CORETYPE=%s)", core, getenv("OPENBLAS_CORETYPE"));
        return note;
    }
    static const char *const avx2_cores[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"};
    int has = 0;
    for (size_t i = 0; i < sizeof avx2_cores / sizeof avx2_cores[0]; i++) has |= !strcasecmp(core, avx2_cores[i]);
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!has && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
        if (setenv("OPENBLAS_CORETYPE", avx512 ? "SkylakeX" : "Haswell", 1) == 0 && setenv("B_GEMM_BLAS_FALLBACK", core, 1) == 0) {
            fflush(stdout);
            execv("/proc/self/exe", argv);
        }
        fprintf(stderr, "b_gemm: OpenBLAS chose its %s kernels on a CPU with AVX2, and running again with OPENBLAS_CORETYPE "
                        "failed; the sgemm baseline is slower than this CPU allows\n", core);
        snprintf(note, sizeof note, "%s (generic kernels on a CPU with AVX2: a slow baseline)", core);
        return note;
    }
#endif
    (void)argv;
    snprintf(note, sizeof note, "%s", core);
    return note;
}

int main(int argc, char **argv) {
    const char *blas_core = blas_core_note(argv); /* (first: it may run the program again with argv as given) */
    int quick = 0, scalar_only = 0, threads = 0, pairs = 0, speedup = 0;
    int big[8] = {512, 2048}, nbig = 2;
    const char *only = NULL; /* --only MODEL/INPUT/SCALING[,...]: those rows alone */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--scalar")) scalar_only = 1;
        else if (!strcmp(argv[i], "--speedup")) speedup = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nbig = 0;
            for (char *t = strtok(argv[++i], ","); t && nbig < 8; t = strtok(NULL, ",")) big[nbig++] = atoi(t);
        } else {
            fprintf(stderr, "usage: b_gemm [--quick] [--scalar] [--speedup] [--threads N] [--pairs N] [--sizes 512,2048] "
                            "[--only MODEL/INPUT/SCALING,...]\n");
            return 2;
        }
    }
    if (threads <= 0) threads = speedup ? 2 : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (!speedup) openblas_set_num_threads(threads);
    /* OpenBLAS starts its threads when it loads, and an idle one waits
     * spinning (sched_yield) for about 0.1 s (its thread timeout, 2^28
     * cycles) before it sleeps: the first rows timed would share the CPUs
     * with them (their process CPU time was twice their wall time). */
    struct timespec settle = {0, 300000000L};
    nanosleep(&settle, NULL);
    static const struct { const char *model, *fmt, *recipe; } cases[] = {
        {"h100", "e4m3", "tensor"}, {"a100", "f16", "none"},  {"h100", "f16", "none"},
        {"a100", "bf16", "none"},   {"a100", "tf32", "none"}, {"v100", "f16", "none"},
        {"ada", "e4m3", "tensor"},  {"h100", "e4m3", "blockwise"}, {"b200", "e4m3", "mx-rceil"},
        {"b200", "e2m1", "nvfp4"},  {"b200", "e2m1", "mx-rceil"}, {"fma-seq", "f16", "none"}, {"exact", "e4m3", "tensor"},
        {"mi250", "f16", "none"},   {"mi250", "bf16", "none"},
        {"mi300", "f16", "none"},   {"mi300", "bf16", "none"},   {"pairwise", "f16", "none"},
        {"pairwise", "bf16", "none"}, {"pairwise", "tf32", "none"},
    };
    /* --only: the rows named (every name must be a row) */
    int picked[sizeof cases / sizeof cases[0]];
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) picked[ci] = !only;
    for (const char *w = only; w && *w;) {
        size_t l = strcspn(w, ",");
        int found = 0;
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            char name[64];
            snprintf(name, sizeof name, "%s/%s/%s", cases[ci].model, cases[ci].fmt, cases[ci].recipe);
            if (strlen(name) == l && !strncmp(name, w, l)) picked[ci] = found = 1;
        }
        if (!found) {
            fprintf(stderr, "b_gemm: --only: no row '%.*s' (rows are MODEL/INPUT/SCALING, e.g. b200/e2m1/nvfp4)\n", (int)l, w);
            return 2;
        }
        w += l + (w[l] == ',');
    }
    int sizes[8], nsizes = 0;
    if (!scalar_only) {
        sizes[nsizes++] = 512;
        for (int i = 0; i < nbig && !quick; i++)
            if (big[i] != 512) sizes[nsizes++] = big[i];
    }
    size_t maxn = 512;
    for (int i = 0; i < nsizes; i++) maxn = (size_t)sizes[i] > maxn ? (size_t)sizes[i] : maxn;
    float *A = malloc(sizeof(float) * maxn * maxn), *B = malloc(sizeof(float) * maxn * maxn);
    float *C = malloc(sizeof(float) * maxn * maxn);
    if (!A || !B || !C) { fprintf(stderr, "b_gemm: out of memory\n"); return 1; }
    for (size_t i = 0; i < maxn * maxn; i++) A[i] = nrand(), B[i] = nrand() * 0.05f;
    if (speedup)
        printf("b_gemm --speedup: emulated GEMM D = A x B (A ~ N(0,1), B ~ N(0,0.05^2)) on %d threads against itself on 1,\n"
               "interleaved in pairs (A B, B A, ...); seconds per GEMM, wall time; speed-up = 1-thread wall / %d-thread wall\n"
               "pair by pair (median, min); cpu = the %d-thread call's process CPU time / its wall time\n",
               threads, threads, threads);
    else
        printf("b_gemm: emulated GEMM D = A x B (A ~ N(0,1), B ~ N(0,0.05^2)) against OpenBLAS cblas_sgemm on the same A, B,\n"
               "interleaved in pairs (A B, B A, ...); %d thread%s each side; seconds per GEMM, wall and process CPU time;\n"
               "x = emu / sgemm pair by pair (median, min)\n", threads, threads == 1 ? "" : "s");
    bench_print_machine("# ");
    if (!speedup) printf("# %s, core %s\n", openblas_get_config(), blas_core);
    if (speedup && !scalar_only)
        printf("%-8s %-6s %-10s %5s %9s %9s %9s %9s %7s %7s %5s  %s\n", "model", "input", "scaling", "n", "1t wall", "1t min",
               "Nt wall", "Nt min", "speedup", "min", "cpu", "kernel");
    else if (!scalar_only)
        printf("%-8s %-6s %-10s %5s %9s %9s %9s %9s %9s %7s %7s %7s  %s\n", "model", "input", "scaling", "n", "emu wall",
               "emu min", "emu cpu", "blas wall", "blas cpu", "x wall", "x min", "x cpu", "kernel");
    /* which presets run on the scalar model: a probe call at n = 128 */
    int on_scalar[sizeof cases / sizeof cases[0]];
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        fpemu_gemm_config cfg;
        fpemu_gemm_stats st;
        char err[256];
        if (fpemu_gemm_config_init(&cfg, cases[ci].model, cases[ci].fmt, cases[ci].fmt, err, sizeof err) ||
            fpemu_gemm_config_set_scaling(&cfg, cases[ci].recipe, err, sizeof err)) {
            fprintf(stderr, "b_gemm: %s\n", err);
            return 1;
        }
        cfg.nthreads = 1;
        on_scalar[ci] = (!scalar_only && fpemu_gemm_f32(&cfg, 128, 128, 128, A, 128, 0, B, 128, 0, NULL, 128, C, 128, &st) == 0 &&
                         st.kernel == 0);
    }
    for (int si = 0; si < nsizes && speedup; si++) { /* the emulator on N threads against itself on one */
        int n = sizes[si];
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            if (on_scalar[ci] || (quick && ci > 1) || !picked[ci]) continue;
            fpemu_gemm_config c1, cn;
            char err[256];
            if (fpemu_gemm_config_init(&c1, cases[ci].model, cases[ci].fmt, cases[ci].fmt, err, sizeof err) ||
                fpemu_gemm_config_set_scaling(&c1, cases[ci].recipe, err, sizeof err)) {
                fprintf(stderr, "b_gemm: %s\n", err);
                return 1;
            }
            cn = c1;
            c1.nthreads = 1, cn.nthreads = threads;
            int np = pairs > 0 ? pairs : quick ? 3 : n >= 2048 ? 3 : 5;
            gemm_job one = {.n = n, .A = A, .B = B, .C = C, .cfg = &c1}, many = one;
            many.cfg = &cn;
            bench_cmp r;
            bench_compare(run_emu, &one, 1, run_emu, &many, 1, np, BENCH_PROCESS, &r);
            if (one.failed || many.failed) {
                fprintf(stderr, "b_gemm: fpemu_gemm_f32 failed\n");
                return 1;
            }
            /* speed-up pair by pair is 1 / (N-thread / 1-thread): its median is 1 / the ratio's
             * median, its least value 1 / the ratio's greatest, which bench_compare does not keep:
             * the minimum shown is 1-thread min / N-thread min */
            printf("%-8s %-6s %-10s %5d %9.4f %9.4f %9.4f %9.4f %7.2f %7.2f %5.2f  %s\n", cases[ci].model, cases[ci].fmt,
                   cases[ci].recipe, n, r.base_wall.med, r.base_wall.min, r.row_wall.med, r.row_wall.min,
                   1.0 / r.ratio_wall.med, r.base_wall.min / r.row_wall.min, r.row_cpu.med / r.row_wall.med,
                   many.st.lanes == 16 ? "16 lanes" : many.st.lanes == 8 ? "f64 x8" : "scalar");
            fflush(stdout);
        }
    }
    if (speedup) {
        free(A), free(B), free(C);
        return 0;
    }
    for (int si = 0; si < nsizes; si++) {
        int n = sizes[si];
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            if (n > 512 && on_scalar[ci]) continue;
            if (quick && ci > 1) continue;
            if (!picked[ci]) continue;
            fpemu_gemm_config cfg;
            char err[256];
            if (fpemu_gemm_config_init(&cfg, cases[ci].model, cases[ci].fmt, cases[ci].fmt, err, sizeof err) ||
                fpemu_gemm_config_set_scaling(&cfg, cases[ci].recipe, err, sizeof err)) {
                fprintf(stderr, "b_gemm: %s\n", err);
                return 1;
            }
            cfg.nthreads = threads;
            /* the scalar model: a smaller problem, against sgemm of the same size, scaled to n^3 */
            int scalar = on_scalar[ci];
            int nn = scalar ? 128 : n;
            int np = pairs > 0 ? pairs : quick ? 3 : n >= 2048 ? 3 : scalar ? 3 : 5;
            gemm_job ej, bj;
            memset(&ej, 0, sizeof ej);
            ej.n = nn, ej.A = A, ej.B = B, ej.C = C, ej.cfg = &cfg;
            bj = ej;
            bench_cmp r;
            bench_compare(run_sgemm, &bj, 1, run_emu, &ej, 1, np, BENCH_PROCESS, &r);
            if (ej.failed) {
                fprintf(stderr, "b_gemm: fpemu_gemm_f32 failed\n");
                return 1;
            }
            double scale = (double)n * n * n / ((double)nn * nn * nn);
            static const char *isa[] = {"scalar model", "SSE2", "AVX2", "AVX-512", "AMX"};
            char kern[64];
            /* which 16-lane kernel, by row (the stats say only how many lanes):
             * the reference kinds' and the AMD presets' own, the group kernel
             * for block-scaled e2m1 on the b200 (NVFP4, MX), else the f32 kernel */
            const char *k16 = !strcmp(cases[ci].model, "fma-seq") ? " fma chain x16"
                              : !strcmp(cases[ci].model, "mi250")  ? " pairwise x16"
                              : !strcmp(cases[ci].model, "pairwise") ? " tree x16"
                              : !strcmp(cases[ci].model, "mi300")  ? " f32 fused x16"
                              : !strcmp(cases[ci].model, "exact")  ? " exact sum x16"
                              : !strcmp(cases[ci].model, "b200") && !strcmp(cases[ci].fmt, "e2m1") &&
                                        (!strcmp(cases[ci].recipe, "nvfp4") || !strncmp(cases[ci].recipe, "mx-", 3))
                                  ? " groups x16"
                                  : " f32 x16";
            const int kl = ej.st.kernel >= 0 && ej.st.kernel <= 4 ? ej.st.kernel : 0;
            /* (level 4: the exact kind on AMX, the group kernel on VNNI) */
            snprintf(kern, sizeof kern, "%s%s%s", kl == 4 && strcmp(cases[ci].model, "exact") ? "VNNI" : isa[kl],
                     kl == 4 ? (strcmp(cases[ci].model, "exact") ? k16 : " exact sum, int8 digit tiles")
                     : ej.st.lanes == 16 ? k16 : ej.st.lanes == 8 ? " f64 x8" : "",
                     scalar ? " (n=128, scaled)" : "");
            printf("%-8s %-6s %-10s %5d %9.4f %9.4f %9.4f %9.4f %9.4f %7.2f %7.2f %7.2f  %s\n", cases[ci].model, cases[ci].fmt,
                   cases[ci].recipe, n, r.row_wall.med * scale, r.row_wall.min * scale, r.row_cpu.med * scale,
                   r.base_wall.med * scale, r.base_cpu.med * scale, r.ratio_wall.med, r.ratio_wall.min, r.ratio_cpu.med, kern);
            fflush(stdout);
        }
    }
    if (scalar_model_table(A, B, quick, pairs > 0 ? pairs : quick ? 3 : 5)) return 1;
    free(A), free(B), free(C);
    return 0;
}
