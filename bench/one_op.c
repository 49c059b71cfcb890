/* SPDX-License-Identifier: MIT */
/* one_op.c: one scalar operation in a loop, for instruction counts
 * (bench/instr.sh runs it under callgrind; timings on a shared VM are too
 * noisy to compare small changes, instructions per call are not).
 * Usage: one_op FORMAT MODE OP [REPS]   (MODE: rne..sr, or srb: sr with the
 * caller's bits, fpemu_add_sr and friends, one precomputed draw per call
 * from an array; OP: add|mul|fma)
 * Operands: random signs, magnitudes in [2^-4, 2^4), fixed seed, as in
 * b_emu. Prints ns per call (best of REPS passes) for a rough look. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fpemu.h"

#define N 4096

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: one_op FORMAT MODE add|mul|fma [REPS]\n");
        return 2;
    }
    char err[256];
    const fpemu_format *f = fpemu_format_get(argv[1], err, sizeof err);
    int srb = !strcmp(argv[2], "srb");
    int mode = srb ? FPEMU_SR : fpemu_round_parse(argv[2]);
    int op = !strcmp(argv[3], "add") ? 0 : !strcmp(argv[3], "mul") ? 1 : !strcmp(argv[3], "fma") ? 2 : -1;
    long reps = argc > 4 ? strtol(argv[4], NULL, 10) : 300;
    if (!f || mode < 0 || op < 0 || reps < 1) {
        fprintf(stderr, "one_op: %s\n", !f ? err : mode < 0 ? "unknown mode" : op < 0 ? "op must be add, mul or fma" : "REPS must be >= 1");
        return 2;
    }
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    c.round = (fpemu_round)mode;
    static uint64_t a[N], b[N], z[N], rb[N];
    uint64_t s = 1;
    for (int i = 0; i < N; i++) {
        uint64_t *dst[3] = {&a[i], &b[i], &z[i]};
        for (int k = 0; k < 3; k++) {
            uint64_t r = s = fpemu_random64(s, (uint64_t)i);
            double v = ldexp(1 + (double)(r >> 12) * 0x1p-52, (int)(r % 8) - 4) * (r >> 11 & 1 ? -1 : 1);
            *dst[k] = fpemu_from_double(f, v, &c);
        }
        rb[i] = fpemu_random64(7, (uint64_t)i);
    }
    if (srb) c.round = FPEMU_RNE; /* the _sr calls round in sr whatever the context says */
    double best = 1e300;
    uint64_t acc = 0;
    for (long r = 0; r < reps; r++) {
        double t0 = now_ns();
        switch (op + 3 * srb) {
        case 3: for (int i = 0; i < N; i++) acc += fpemu_add_sr(f, a[i], b[i], rb[i], &c); break;
        case 4: for (int i = 0; i < N; i++) acc += fpemu_mul_sr(f, a[i], b[i], rb[i], &c); break;
        case 5: for (int i = 0; i < N; i++) acc += fpemu_fma_sr(f, a[i], b[i], z[i], rb[i], &c); break;
        case 0: for (int i = 0; i < N; i++) acc += fpemu_add(f, a[i], b[i], &c); break;
        case 1: for (int i = 0; i < N; i++) acc += fpemu_mul(f, a[i], b[i], &c); break;
        default: for (int i = 0; i < N; i++) acc += fpemu_fma(f, a[i], b[i], z[i], &c); break;
        }
        double t = (now_ns() - t0) / N;
        if (t < best) best = t;
    }
    printf("%s %s %s: %.2f ns per call (best of %ld passes; checksum %llu)\n", f->name, srb ? "srb" : fpemu_round_name(c.round),
           argv[3], best, reps, (unsigned long long)(acc & 0xFFFF));
    return 0;
}
