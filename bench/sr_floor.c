/* SPDX-License-Identifier: MIT */
/* sr_floor.c: what a scalar sr call costs before it does any arithmetic.
 * Usage: sr_floor [PASSES]   (build: make build/bench/sr_floor)
 *
 * In one process, with the loop of bench/one_op (4096 operand pairs, one
 * out-of-line call each, results summed), rounds alternated so that every
 * row sees the same load:
 *   empty call       a function that returns a + b
 *   counter step     the same, advancing ctx->counter (the store every sr
 *                    call must make)
 *   draw             the same, drawing fpemu's sr value (emu__mix of seed
 *                    and counter, as the fast paths do) and comparing it
 *   FMT MODE add     the library's fpemu_add, e4m3 / f16 / bf16, rne and sr
 * Prints ns per call (best of PASSES passes per round, best over 10
 * rounds) and each row minus the empty call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "fpemu.h"
#include "internal.h"

#define N 4096
typedef uint64_t (*binop)(const fpemu_format *, uint64_t, uint64_t, fpemu_ctx *);

__attribute__((noinline)) static uint64_t empty_call(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    (void)f, (void)ctx;
    return a + b;
}
__attribute__((noinline)) static uint64_t counter_step(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    (void)f;
    return a + b + (ctx->counter++ & 1);
}
__attribute__((noinline)) static uint64_t draw_only(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    (void)f;
    return a + ((emu__mix(ctx->seed, ctx->counter++) >> 51) < b);
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    long passes = argc > 1 ? strtol(argv[1], NULL, 10) : 300;
    if (passes < 1) {
        fprintf(stderr, "sr_floor: PASSES must be a positive number, got '%s'\n", argv[1]);
        return 2;
    }
    const char *names[3] = {"e4m3", "f16", "bf16"};
    const fpemu_format *F[3];
    for (int k = 0; k < 3; k++)
        if (!(F[k] = fpemu_format_get(names[k], NULL, 0))) return 2;
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    /* operands as bench/one_op: random signs, magnitudes in [2^-4, 2^4) */
    static uint64_t a[3][N], b[3][N];
    uint64_t s = 1;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < 2; j++) {
                uint64_t r = s = fpemu_random64(s, (uint64_t)i);
                double v = ldexp(1 + (double)(r >> 12) * 0x1p-52, (int)(r % 8) - 4) * (r >> 11 & 1 ? -1 : 1);
                (j ? b : a)[k][i] = fpemu_from_double(F[k], v, &c);
            }
    struct row { const char *name; binop fn; int k; fpemu_round mode; } rows[] = {
        {"empty call", empty_call, 0, FPEMU_RNE},   {"counter step", counter_step, 0, FPEMU_RNE},
        {"draw", draw_only, 0, FPEMU_RNE},          {"e4m3 rne add", fpemu_add, 0, FPEMU_RNE},
        {"e4m3 sr add", fpemu_add, 0, FPEMU_SR},    {"f16 rne add", fpemu_add, 1, FPEMU_RNE},
        {"f16 sr add", fpemu_add, 1, FPEMU_SR},     {"bf16 rne add", fpemu_add, 2, FPEMU_RNE},
        {"bf16 sr add", fpemu_add, 2, FPEMU_SR}};
    enum { NR = sizeof rows / sizeof rows[0] };
    double best[NR];
    uint64_t acc = 0;
    for (int r = 0; r < NR; r++) best[r] = 1e300;
    for (int round = 0; round < 10; round++)
        for (int r = 0; r < NR; r++) {
            const struct row *w = &rows[r];
            c.round = w->mode;
            const fpemu_format *f = F[w->k];
            const uint64_t *x = a[w->k], *y = b[w->k];
            for (long p = 0; p < passes; p++) {
                double t0 = now_ns();
                for (int i = 0; i < N; i++) acc += w->fn(f, x[i], y[i], &c);
                double t = (now_ns() - t0) / N;
                if (t < best[r]) best[r] = t;
            }
        }
    printf("%-14s %8s %14s\n", "call", "ns", "- empty call");
    for (int r = 0; r < NR; r++) printf("%-14s %8.2f %14.2f\n", rows[r].name, best[r], best[r] - best[0]);
    printf("(best of %ld passes x 10 alternated rounds; checksum %llu)\n", passes, (unsigned long long)(acc & 0xFFFF));
    return 0;
}
