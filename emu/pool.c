/* SPDX-License-Identifier: MIT */
/* pool.c: the library's worker threads (internal.h emu__parallel).
 *
 * A GEMM call has up to three parallel phases (quantising A and B, packing
 * them, the kernel's row blocks). Each used to start its threads afresh,
 * and a thread started on an idle CPU begins late: on the 2-vCPU dev VM
 * the second thread of a phase began 0.5 ms after the first (the idle vCPU
 * is woken through the hypervisor), three times per call, against calls
 * of 3 ms at n = 512. The workers here are started once and, after an
 * item, wait for the next one by spinning for up to POOL_SPIN_NS (0.1 ms)
 * before they sleep on a condition variable: the next phase of the call
 * finds them awake. Past the first microseconds the spin calls
 * sched_yield(), so that a thread that needs the CPU gets it. The spin is
 * short on purpose: calls made one after another ran no faster with 2 ms
 * (the pool was awake anyway), and interleaved with OpenBLAS, whose idle
 * threads wait the same way, longer spins only took CPU from each other.
 *
 * One caller at a time has the pool (pool_lock); a caller that finds it
 * taken (another thread's GEMM) starts its own threads, as before. Work
 * is split the same way whichever thread runs it, so results never
 * depend on it. fork() is safe: the child starts with no workers. When
 * the library goes (exit, or dlclose of libfpemu.so or of a plugin that
 * carries libfpemu.a), a destructor stops and joins the workers, so that
 * none runs on in code that is no longer mapped. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "internal.h"

#define POOL_MAX 63
#define POOL_SPIN_NS 100000L

typedef struct {
    pthread_t th;
    int started;          /* under pool_lock */
    _Atomic unsigned seq; /* bumped by the caller for each item */
    _Atomic int done;     /* set by the worker when the item returns */
    _Atomic int sleeping; /* the worker is (about to be) in cond_wait */
    void *(*fn)(void *);
    void *arg;
    unsigned fpenv; /* the caller's floating-point environment, for the item */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} worker;

static worker pool[POOL_MAX];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int pool_quit; /* set by the destructor: workers return */

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker_main(void *p) {
    worker *w = p;
    unsigned seen = 0; /* the first item is set before the thread starts (seq 1) */
    for (;;) {
        unsigned s = atomic_load(&w->seq);
        if (s == seen) { /* spin, then sleep */
            long t0 = now_ns();
            for (int i = 0; (s = atomic_load(&w->seq)) == seen && !atomic_load(&pool_quit); i++) {
                if (i < 1024) { /* the next phase of this call: microseconds away */
                    relax();
                    continue;
                }
                if (now_ns() - t0 > POOL_SPIN_NS) break;
                sched_yield(); /* a thread that wants this CPU (the caller's other work, BLAS) gets it */
            }
            if (s == seen) {
                pthread_mutex_lock(&w->mu);
                atomic_store(&w->sleeping, 1);
                while ((s = atomic_load(&w->seq)) == seen && !atomic_load(&pool_quit)) pthread_cond_wait(&w->cv, &w->mu);
                atomic_store(&w->sleeping, 0);
                pthread_mutex_unlock(&w->mu);
            }
        }
        if (s == seen) return NULL; /* pool_quit */
        seen = s;
        if (emu__fpenv_get() != w->fpenv) emu__fpenv_set(w->fpenv);
        w->fn(w->arg);
        atomic_store_explicit(&w->done, 1, memory_order_release);
    }
    return NULL;
}

/* Item i on worker w (started here if need be). 0, or -1: it could not start. */
static int give(worker *w, void *(*fn)(void *), void *arg) {
    w->fn = fn, w->arg = arg, w->fpenv = emu__fpenv_get();
    atomic_store(&w->done, 0);
    if (!w->started) {
        atomic_store(&w->seq, 1);
        /* the worker blocks every signal: the program's handlers run on its
         * own threads, never on the library's */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&w->th, NULL, worker_main, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc) {
            atomic_store(&w->seq, 0);
            return -1;
        }
        w->started = 1;
        return 0;
    }
    atomic_fetch_add(&w->seq, 1);
    if (atomic_load(&w->sleeping)) { /* under its mutex: it is in cond_wait, or will see seq */
        pthread_mutex_lock(&w->mu);
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    return 0;
}

/* Without the pool: a thread per item (POOL_MAX at most; the caller runs
 * the rest), joined. */
static void run_fresh(int n, void *(*fn)(void *), char *args, size_t size) {
    pthread_t th[POOL_MAX];
    int started = 0;
    for (int i = 1; i < n && i <= POOL_MAX; i++) {
        if (pthread_create(&th[i - 1], NULL, fn, args + (size_t)i * size)) break;
        started = i;
    }
    fn(args);
    for (int i = started + 1; i < n; i++) fn(args + (size_t)i * size); /* those that did not start */
    for (int i = 1; i <= started; i++) pthread_join(th[i - 1], NULL);
}

void emu__parallel(int n, void *(*fn)(void *), void *args, size_t size) {
    char *a = args;
    if (n <= 1) {
        if (n == 1) fn(a);
        return;
    }
    if (pthread_mutex_trylock(&pool_lock)) {
        run_fresh(n, fn, a, size);
        return;
    }
    /* items 1 .. POOL_MAX to the workers; the caller runs item 0, those
     * whose worker could not start, and any beyond POOL_MAX */
    const int nw = n - 1 < POOL_MAX ? n - 1 : POOL_MAX;
    int given[POOL_MAX];
    for (int i = 1; i <= nw; i++) given[i - 1] = !give(&pool[i - 1], fn, a + (size_t)i * size);
    fn(a);
    for (int i = 1; i < n; i++)
        if (i > nw || !given[i - 1]) fn(a + (size_t)i * size);
    for (int i = 1; i <= nw; i++) {
        if (!given[i - 1]) continue;
        for (int s = 0; !atomic_load_explicit(&pool[i - 1].done, memory_order_acquire); s++) {
            relax();
            if (s > 4096) sched_yield();
        }
    }
    pthread_mutex_unlock(&pool_lock);
}

/* fork(): taken around it (no item is running then); the child has no
 * workers, so its pool starts empty, with fresh locks. */
static void pool_prepare(void) { pthread_mutex_lock(&pool_lock); }
static void pool_parent(void) { pthread_mutex_unlock(&pool_lock); }
static void pool_child(void) {
    for (int i = 0; i < POOL_MAX; i++) {
        worker *w = &pool[i];
        w->started = 0;
        atomic_store(&w->seq, 0), atomic_store(&w->done, 0), atomic_store(&w->sleeping, 0);
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
    }
    pthread_mutex_init(&pool_lock, NULL);
}

/* The library is going: each worker returns once its item (if any) is
 * done, and is joined. A sleeping one is woken under its mutex. */
__attribute__((destructor)) static void pool_fini(void) {
    pthread_mutex_lock(&pool_lock);
    atomic_store(&pool_quit, 1);
    for (int i = 0; i < POOL_MAX; i++) {
        worker *w = &pool[i];
        if (!w->started) continue;
        pthread_mutex_lock(&w->mu);
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
        w->started = 0;
    }
    pthread_mutex_unlock(&pool_lock);
}

__attribute__((constructor)) static void pool_init(void) {
    for (int i = 0; i < POOL_MAX; i++) {
        pthread_mutex_init(&pool[i].mu, NULL);
        pthread_cond_init(&pool[i].cv, NULL);
    }
    pthread_atfork(pool_prepare, pool_parent, pool_child);
}
