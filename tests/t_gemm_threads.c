/* SPDX-License-Identifier: MIT */
/* t_gemm_threads.c: the GEMM's worker pool (emu/pool.c) never changes a
 * result. Every call is checked bit for bit, with its statistics, against
 * the same call on one thread:
 * - 2, 3 and 5 threads, on kernels that split A, B and the rows apart
 *   (h100 e4m3 with tensor scaling, fma-seq f16, mi250 f16, a100 bf16);
 * - calls one after another with pauses that let the workers fall asleep
 *   (past the 0.1 ms they spin), and without;
 * - three threads of the caller's at once (one has the pool, the others
 *   start threads of their own);
 * - a fork()ed child, which starts with no workers, and the parent after it;
 * - emu__parallel itself with up to 100 items (63 workers, the rest on the
 *   caller);
 * - A and B given transposed (the threads share the transposed copies).
 * A lost wake-up would hang a call: an alarm fails the program after 300 s.
 * Prints TAP. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gemm.h"
#include "tap.h"

enum { M = 96, N = 80, K = 832 }; /* N * K >= 65536: A and B are quantised and packed on two threads */

typedef struct {
    const char *model, *fmt, *scaling;
} preset;
static const preset presets[] = {
    {"h100", "e4m3", "tensor"}, {"fma-seq", "f16", "none"}, {"mi250", "f16", "none"}, {"a100", "bf16", "none"}};
enum { NP = sizeof presets / sizeof presets[0] };

static float A[M * K], B[K * N];
static float ref[NP][M * N];
static fpemu_gemm_stats ref_st[NP];

static int call(int p, int threads, float *D, fpemu_gemm_stats *st) {
    fpemu_gemm_config cfg;
    char err[256];
    if (fpemu_gemm_config_init(&cfg, presets[p].model, presets[p].fmt, presets[p].fmt, err, sizeof err) ||
        fpemu_gemm_config_set_scaling(&cfg, presets[p].scaling, err, sizeof err))
        bail("%s/%s/%s: %s", presets[p].model, presets[p].fmt, presets[p].scaling, err);
    cfg.nthreads = threads;
    return fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, N, 0, NULL, N, D, N, st);
}

/* 1 when the call on `threads` threads gives the reference's bits and figures */
static int same(int p, int threads) {
    float D[M * N];
    fpemu_gemm_stats st;
    if (call(p, threads, D, &st)) return 0;
    return !memcmp(D, ref[p], sizeof D) && st.slow_outputs == ref_st[p].slow_outputs && st.kernel == ref_st[p].kernel &&
           st.amax_a == ref_st[p].amax_a && st.amax_b == ref_st[p].amax_b && st.scale_a == ref_st[p].scale_a &&
           st.scale_b == ref_st[p].scale_b && !memcmp(&st.a, &ref_st[p].a, sizeof st.a) &&
           !memcmp(&st.b, &ref_st[p].b, sizeof st.b);
}

static void pause_ms(int ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

/* emu__parallel alone (internal.h): every item runs once, more items than
 * workers included */
void emu__parallel(int n, void *(*fn)(void *), void *args, size_t size);
typedef struct {
    int hits;
    char pad[60]; /* one item a cache line */
} item;
static void *hit(void *p) {
    ((item *)p)->hits++;
    return NULL;
}
#if defined(__x86_64__) && defined(__GNUC__)
#include <xmmintrin.h>
/* the MXCSR an item ran under (flags masked off) */
static void *csr_of(void *p) {
    ((item *)p)->hits = (int)(_mm_getcsr() & ~0x3Fu);
    return NULL;
}
#endif

static int user_bad[3];
static void *user(void *arg) {
    int u = (int)(size_t)arg;
    for (int r = 0; r < 6; r++)
        for (int p = 0; p < NP; p++) user_bad[u] += !same(p, 2 + (u + r) % 3);
    return NULL;
}

int main(void) {
    alarm(300); /* a worker that is never woken hangs the call: fail instead */
    uint64_t s = tap_seed(20261127);
    for (int i = 0; i < M * K; i++) s = s * 6364136223846793005ULL + 1442695040888963407ULL, A[i] = (float)((s >> 40) & 0xFFFF) / 32768.0f - 1.0f;
    for (int i = 0; i < K * N; i++) s = s * 6364136223846793005ULL + 1442695040888963407ULL, B[i] = ((float)((s >> 40) & 0xFFFF) / 32768.0f - 1.0f) * 0.05f;
    for (int p = 0; p < NP; p++) {
        if (call(p, 1, ref[p], &ref_st[p])) bail("%s: the one-thread call failed", presets[p].model);
        ok(ref_st[p].kernel > 0, "%s/%s: a vectorised kernel runs (kernel %d)", presets[p].model, presets[p].fmt, ref_st[p].kernel);
    }
    for (int p = 0; p < NP; p++)
        for (int t = 2; t <= 5; t += t == 3 ? 2 : 1)
            ok(same(p, t), "%s/%s/%s on %d threads: the one-thread bits and statistics", presets[p].model, presets[p].fmt,
               presets[p].scaling, t);
    /* transposed operands: A given as A^T (transA, M columns), B as B^T
     * (transB: rows in place, no copy); on 2 and 3 threads the copies of
     * A^T are made half on each thread */
    {
        static float At[K * M], Bt[N * K], D[M * N];
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++) At[(size_t)k * M + i] = A[(size_t)i * K + k];
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++) Bt[(size_t)j * K + k] = B[(size_t)k * N + j];
        int tbad = 0;
        for (int p = 0; p < NP; p++)
            for (int t = 1; t <= 3; t++)
                for (int ta = 0; ta < 2; ta++)
                    for (int tb = 0; tb < 2; tb++) {
                        fpemu_gemm_config cfg;
                        char err[256];
                        if (fpemu_gemm_config_init(&cfg, presets[p].model, presets[p].fmt, presets[p].fmt, err, sizeof err) ||
                            fpemu_gemm_config_set_scaling(&cfg, presets[p].scaling, err, sizeof err))
                            bail("%s", err);
                        cfg.nthreads = t;
                        int rc = fpemu_gemm_f32(&cfg, M, N, K, ta ? At : A, ta ? M : K, ta, tb ? Bt : B, tb ? K : N, tb, NULL, N, D,
                                                N, NULL);
                        tbad += rc || memcmp(D, ref[p], sizeof D);
                    }
        ok(!tbad, "A or B given transposed, 1-3 threads, 4 presets: the reference's bits (%d of 48 differ)", tbad);
    }
    int bad = 0;
    for (int r = 0; r < 8; r++) {
        bad += !same(r % NP, 2);
        pause_ms(r % 2 ? 5 : 0); /* 5 ms: past the workers' spin, they sleep */
    }
    ok(!bad, "calls one after another, with and without 5 ms pauses: %d differ", bad);
    static item items[100];
    int wrong = 0;
    static const int counts[] = {0, 1, 2, 3, 97, 100};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        const int n = counts[c];
        memset(items, 0, sizeof items);
        emu__parallel(n, hit, items, sizeof items[0]);
        for (int i = 0; i < 100; i++) wrong += items[i].hits != (i < n);
    }
    ok(!wrong, "emu__parallel runs each of 0, 1, 2, 3, 97 and 100 items once (64 threads at most): %d wrong", wrong);
#if defined(__x86_64__) && defined(__GNUC__)
    {
        /* every item under the caller's MXCSR, the workers' (started under
         * another, above) included: FTZ and DAZ, then the default again */
        const unsigned csr = _mm_getcsr(), env[2] = {(csr & ~0x3Fu) | 0x8040u, csr & ~0x3Fu};
        int off = 0;
        for (int e = 0; e < 2; e++) {
            memset(items, 0, sizeof items);
            _mm_setcsr(env[e]);
            emu__parallel(8, csr_of, items, sizeof items[0]);
            _mm_setcsr(csr);
            for (int i = 0; i < 8; i++) off += (unsigned)items[i].hits != env[e];
        }
        ok(!off, "emu__parallel's items run under the caller's MXCSR (FTZ and DAZ, then without): %d did not", off);
    }
#else
    ok(1, "# SKIP the MXCSR test is for x86");
#endif
    pthread_t th[3];
    int started = 0;
    for (int u = 0; u < 3; u++) started += !pthread_create(&th[u], NULL, user, (void *)(size_t)u);
    for (int u = 0; u < started; u++) pthread_join(th[u], NULL);
    ok(started == 3 && !user_bad[0] && !user_bad[1] && !user_bad[2],
       "three caller threads at once, 24 calls each: %d, %d, %d differ", user_bad[0], user_bad[1], user_bad[2]);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int b = 0;
        for (int p = 0; p < NP; p++) b += !same(p, 3);
        _exit(b ? 1 : 0);
    }
    int status = 0;
    ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "a forked child's calls on 3 threads: the one-thread bits");
    bad = 0;
    for (int p = 0; p < NP; p++) bad += !same(p, 3);
    ok(!bad, "the parent after the fork: %d differ", bad);
    return done_testing();
}
