/* SPDX-License-Identifier: MIT */
/* t_train_oom.c: every allocation of the training engine is checked (issue
 * 26, class 1). Linked with ld's --wrap for malloc, calloc, realloc and
 * free (Makefile), so the engine's and emu's allocations go through the
 * counting wrappers below, which can make the k-th one fail. For models and
 * policies that cover every path of the engine (f32 and low-precision
 * GEMMs, the fp8 recipes, MX, int8 evaluation, the transformer):
 *   - trn_open sizes every buffer: steps and evaluations after it grow no
 *     scratch buffer (r->ws_grows), and under 32-true / 64-true (no emu
 *     GEMM) they allocate nothing at all;
 *   - trn_open with its k-th allocation failing, for every k: -1 with an
 *     "out of memory" message, no run, nothing left allocated;
 *   - trn_step with its k-th allocation failing (emu's GEMM allocates per
 *     call): -1 with a message, and the run closes with nothing leaked;
 *   - `fpemu train` on a transformer too large for a 3 GB address space
 *     (ulimit -v): exit 2, "out of memory", no crash and no --out folder.
 * On the code before the fix these crash (NULL buffers written) or leak. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tap.h"
#include "train_internal.h"

/* ---- the allocator wrappers -------------------------------------------------- */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static long g_calls;          /* allocation calls since the last reset */
static long g_fail_at;        /* 1-based call that fails (0: none) */
static long g_live;           /* blocks allocated through the wrappers, not yet freed */
/* the live blocks, for free(): a linear-probing set of pointers (deletion
 * by backward shift, so it never fills with tombstones) */
#define SET_BITS 20
#define SET_MASK ((1u << SET_BITS) - 1)
static void *g_set[1u << SET_BITS];

static size_t slot_of(void *p) { return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> (64 - SET_BITS)); }
static void set_add(void *p) {
    if (g_live >= (long)SET_MASK) return; /* full: not tracked (not reached) */
    size_t i = slot_of(p);
    while (g_set[i]) i = (i + 1) & SET_MASK;
    g_set[i] = p;
    g_live++;
}
static int set_del(void *p) {
    size_t i = slot_of(p);
    while (g_set[i] && g_set[i] != p) i = (i + 1) & SET_MASK;
    if (!g_set[i]) return 0;
    g_live--;
    for (size_t j = i;;) {
        g_set[i] = NULL;
        for (;;) {
            j = (j + 1) & SET_MASK;
            if (!g_set[j]) return 1;
            size_t k = slot_of(g_set[j]);
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue; /* stays: its home is after the hole */
            break;
        }
        g_set[i] = g_set[j];
        i = j;
    }
}
static int should_fail(void) {
    g_calls++;
    return g_fail_at && g_calls == g_fail_at;
}

void *__wrap_malloc(size_t n) {
    pthread_mutex_lock(&g_lock);
    void *p = should_fail() ? NULL : __real_malloc(n);
    if (p) set_add(p);
    pthread_mutex_unlock(&g_lock);
    return p;
}
void *__wrap_calloc(size_t n, size_t m) {
    pthread_mutex_lock(&g_lock);
    void *p = should_fail() ? NULL : __real_calloc(n, m);
    if (p) set_add(p);
    pthread_mutex_unlock(&g_lock);
    return p;
}
void *__wrap_realloc(void *q, size_t n) {
    pthread_mutex_lock(&g_lock);
    void *p = NULL;
    if (!should_fail()) {
        p = __real_realloc(q, n);
        if (p) {
            if (q) set_del(q);
            set_add(p);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return p;
}
void __wrap_free(void *p) {
    if (!p) return;
    pthread_mutex_lock(&g_lock);
    set_del(p); /* blocks of the C library (strdup, ...) are not in the set */
    pthread_mutex_unlock(&g_lock);
    __real_free(p);
}

static void arm(long fail_at) {
    pthread_mutex_lock(&g_lock);
    g_calls = 0;
    g_fail_at = fail_at;
    pthread_mutex_unlock(&g_lock);
}
static long calls(void) {
    pthread_mutex_lock(&g_lock);
    long n = g_calls;
    pthread_mutex_unlock(&g_lock);
    return n;
}
static long live(void) {
    pthread_mutex_lock(&g_lock);
    long n = g_live;
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* ---- the runs ------------------------------------------------------------------ */
typedef struct { const char *model, *policy, *sets; } cfg;
static const cfg g_cfgs[] = {
    {"mlp-digits", "32-true", "hidden=16 depth=2 batch_size=8"},
    {"mlp-digits", "64-true", "hidden=16 depth=1 batch_size=8"},
    {"mlp-digits", "16-mixed", "hidden=16 depth=2 batch_size=8"},
    {"mlp-digits", "int8-dynamic", "hidden=16 depth=2 batch_size=8"},
    {"deep-mlp", "fp8-delayed", "hidden=16 depth=3 batch_size=8 amax_history_len=4"},
    {"mlp-digits", "fp8-rowwise", "hidden=16 depth=2 batch_size=8"},
    {"mlp-digits", "msamp-o2", "hidden=16 depth=2 batch_size=8"},
    {"mlp-digits", "16-mixed", "hidden=16 depth=2 batch_size=8 numerics=torch-cuda"},
    {"mlp-digits", "fp8-current", "hidden=16 depth=2 batch_size=8 numerics=torch-cuda"},
    {"tiny-transformer", "32-true", "d_model=8 heads=2 d_ff=16 depth=1 seq_digits=2 batch_size=4"},
    {"tiny-transformer", "bf16-true-sr", "d_model=8 heads=2 d_ff=16 depth=1 seq_digits=2 batch_size=4"},
    {"tiny-transformer", "transformer-engine", "d_model=8 heads=2 d_ff=16 depth=1 seq_digits=2 batch_size=4 amax_history_len=4"},
    {"tiny-transformer", "fp8-current", "d_model=8 heads=2 d_ff=16 depth=1 seq_digits=2 batch_size=4 fp8_head=1"},
    {"tiny-transformer", "fp8-blockwise", "d_model=16 heads=2 d_ff=24 depth=1 seq_digits=3 batch_size=4 block_size=8 promotion_interval=4"},
    {"tiny-transformer", "mxfp8", "d_model=32 heads=2 d_ff=64 depth=1 seq_digits=2 batch_size=4"},
    {"tiny-transformer", "mxfp8", "d_model=32 heads=2 d_ff=64 depth=1 seq_digits=2 batch_size=4 fp8_scaling=none"},
};

static int settings(const cfg *c, trn_settings *s, char *err, size_t n) {
    if (trn_settings_init(s, c->model, c->policy, err, n)) return -1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", c->sets);
    for (char *save = NULL, *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        *eq = 0;
        if (trn_settings_set(s, kv, eq + 1, err, n)) return -1;
    }
    return 0;
}

static void one(const cfg *c) {
    char name[200], err[512];
    snprintf(name, sizeof name, "%s %s (%s)", c->model, c->policy, c->sets);
    trn_settings s;
    if (settings(c, &s, err, sizeof err)) { ok(0, "%s: settings: %s", name, err); return; }
    trn_run *r = NULL;
    trn_step_rec rec;
    double l, a;
    /* warm-up: the digits data and emu's tables are loaded once per process */
    arm(0);
    if (trn_open(&r, &s, 7, err, sizeof err)) { ok(0, "%s: open: %s", name, err); return; }
    trn_step(r, &rec, err, sizeof err);
    trn_eval(r, &l, &a);
    trn_close(r);
    long base = live();

    /* a run: how many allocations trn_open makes; none grow after it */
    arm(0);
    int rc = trn_open(&r, &s, 7, err, sizeof err);
    long nopen = calls();
    unsigned long grows = r ? r->ws_grows : 0;
    arm(0);
    int bad = rc;
    for (int i = 0; i < 3 && !bad; i++) bad = trn_step(r, &rec, err, sizeof err);
    if (!bad) bad = trn_eval(r, &l, &a);
    long nstep = calls();
    ok(!bad && r && r->ws_grows == grows, "%s: %ld allocations in trn_open; 3 steps and an evaluation grow no scratch (%lu -> %lu)",
       name, nopen, grows, r ? r->ws_grows : 0);
    if (!strcmp(c->policy, "32-true") || !strcmp(c->policy, "64-true"))
        is_int(nstep, 0, "%s: 3 steps and an evaluation allocate nothing", name);
    trn_close(r);
    is_int(live(), base, "%s: trn_close frees everything", name);

    /* trn_open with allocation k failing */
    int all = 1;
    for (long k = 1; k <= nopen; k++) {
        arm(k);
        err[0] = 0;
        r = (trn_run *)&r;
        rc = trn_open(&r, &s, 7, err, sizeof err);
        arm(0);
        if (rc != -1 || r || !strstr(err, "out of memory") || live() != base) {
            ok(0, "%s: trn_open with allocation %ld of %ld failing: -1, no run, 'out of memory', nothing leaked", name, k, nopen);
            diag("rc %d, run %p, message '%s', %ld blocks leaked", rc, (void *)r, err, live() - base);
            if (rc == 0) trn_close(r);
            all = 0;
            break;
        }
    }
    if (all) ok(1, "%s: trn_open with each of its %ld allocations failing: -1, 'out of memory', nothing leaked", name, nopen);

    /* trn_step with allocation k failing (the engine allocates none; emu's GEMM does) */
    arm(0);
    if (trn_open(&r, &s, 7, err, sizeof err)) { ok(0, "%s: open: %s", name, err); return; }
    arm(0);
    trn_step(r, &rec, err, sizeof err);
    long n1 = calls();
    trn_close(r);
    all = 1;
    long maxk = n1 < 60 ? n1 : 60;
    for (long k = 1; k <= maxk; k++) {
        arm(0);
        if (trn_open(&r, &s, 7, err, sizeof err)) { all = 0; break; }
        arm(k);
        err[0] = 0;
        rc = trn_step(r, &rec, err, sizeof err);
        arm(0);
        trn_close(r);
        if (rc != -1 || !err[0] || live() != base) {
            ok(0, "%s: trn_step with allocation %ld of %ld failing: -1 with a message, nothing leaked", name, k, n1);
            diag("rc %d, message '%s', %ld blocks leaked", rc, err, live() - base);
            all = 0;
            break;
        }
    }
    if (all) ok(1, "%s: trn_step with each of its first %ld allocations (of %ld) failing: -1 with a message, nothing leaked",
                name, maxk, n1);
}

/* `fpemu train` with a model whose buffers cannot fit a 3 GB address space */
static void cli(void) {
    const char *bin = getenv("FPEMU_BIN");
    if (!bin || access(bin, X_OK)) { ok(1, "# SKIP FPEMU_BIN not set (run through make test)"); return; }
    int asan = getenv("FPEMU_HARDEN_ASAN") != NULL;
    char dir[256], out[300], errf[300];
    snprintf(dir, sizeof dir, "/tmp/t_train_oom.%ld", (long)getpid());
    mkdir(dir, 0777);
    snprintf(out, sizeof out, "%s/run", dir);
    snprintf(errf, sizeof errf, "%s/err.txt", dir);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *e = freopen(errf, "w", stderr);
        (void)e;
        if (!freopen("/dev/null", "w", stdout)) _exit(99);
        if (asan) {
            /* ASan cannot start under ulimit -v: its allocator returns NULL above 2000 MB instead */
            setenv("ASAN_OPTIONS", "allocator_may_return_null=1:max_allocation_size_mb=2000:detect_leaks=1", 1);
        } else {
            struct rlimit rl = {3000ul << 20, 3000ul << 20};
            setrlimit(RLIMIT_AS, &rl);
        }
        /* the attention scores alone: 4096 x 64 heads x 128 x 128 doubles (32 GiB) */
        execl(bin, bin, "train", "--model", "tiny-transformer", "--policy", "32-true", "--steps", "1", "--quiet", "--out",
              out, "--set", "batch_size=4096", "--set", "seq_digits=64", "--set", "heads=64", "--set", "d_model=64",
              (char *)NULL);
        _exit(98);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char msg[600] = "";
    FILE *f = fopen(errf, "r");
    if (f) { size_t n = fread(msg, 1, sizeof msg - 1, f); msg[n] = 0; fclose(f); }
    struct stat sb;
    int has_out = stat(out, &sb) == 0;
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(msg, "out of memory") && !has_out,
       "fpemu train, a transformer larger than the %s: exit 2, 'out of memory', no --out folder (%s: '%.200s')",
       asan ? "ASan allocator's 2000 MB" : "3 GB address space",
       WIFEXITED(st) ? "exited" : "killed by a signal", msg);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 2) diag("status %s %d", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) diag("could not remove %s", dir);
}

int main(void) {
    for (size_t i = 0; i < sizeof g_cfgs / sizeof g_cfgs[0]; i++) one(&g_cfgs[i]);
    cli();
    return done_testing();
}
