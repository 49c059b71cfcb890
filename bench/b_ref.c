/* SPDX-License-Identifier: MIT */
/* b_ref.c: speed of the MPFR reference (ref_op), one thread: ns per case
 * and cases/s of add, mul, fma, div, sqrt on f16, bf16, e4m3, f32, f64 and
 * of conversions from f32, in rne (plus rna and rto, which take MPFR's
 * slower paths, for f16 add). Each row is interleaved with the emulator on
 * the same operands (bench/bench.h: pairs A B, B A, ...; thread CPU time;
 * minimum and median of each side and of ref / emu pair by pair): the
 * baseline here is fpemu itself, which the reference checks. Operands:
 * random codes of finite values (fixed seed). This binary links MPFR the
 * way the Makefile links every program (-lmpfr, shared); docs/benchmarks.md
 * (R5) compares it with the static libmpfr of build/verify/fpemu. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "ref.h"

#define N 8192

static int pairs = 7;
#define sink bench_sink
static uint64_t st = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    st ^= st >> 12, st ^= st << 25, st ^= st >> 27;
    return st * 0x2545F4914F6CDD1DULL;
}

static uint64_t ops[3][N];

/* random finite codes of f (exponent field not all ones for IEEE formats) */
static void fill(const fpemu_format *f, const ref_format *rf) {
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N; i++) {
            uint64_t c;
            do c = (rnd() & ((f->bits == 64 ? ~0ull : (1ull << f->bits) - 1))) << f->pad;
            while (!isfinite(ref_to_double(rf, c)));
            ops[k][i] = c;
        }
}

typedef struct { ref_ctx *r; const fpemu_format *f, *src; ref_opcode op; fpemu_round mode; } job;

static void time_ref(void *a) {
    job *j = a;
    j->r->round = j->mode;
    uint64_t s = 0;
    for (int i = 0; i < N; i++) {
        uint64_t x[3] = {ops[0][i], ops[1][i], ops[2][i]};
        unsigned fl;
        s += ref_op(j->r, j->f, j->op, x, j->src, &fl) + fl;
    }
    sink += s;
}

static void time_emu(void *a) {
    job *j = a;
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    c.round = j->mode;
    uint64_t s = 0;
    for (int i = 0; i < N; i++) {
        switch (j->op) {
        case REF_ADD: s += fpemu_add(j->f, ops[0][i], ops[1][i], &c); break;
        case REF_MUL: s += fpemu_mul(j->f, ops[0][i], ops[1][i], &c); break;
        case REF_DIV: s += fpemu_div(j->f, ops[0][i], ops[1][i], &c); break;
        case REF_SQRT: s += fpemu_sqrt(j->f, ops[0][i], &c); break;
        case REF_FMA: s += fpemu_fma(j->f, ops[0][i], ops[1][i], ops[2][i], &c); break;
        default: s += fpemu_convert(j->f, j->src, ops[0][i], &c); break;
        }
    }
    sink += s + c.flags;
}

static void row(const char *op, const char *fmt, const char *mode, job *j) {
    bench_cmp r;
    bench_compare(time_emu, j, N, time_ref, j, N, pairs, BENCH_THREAD, &r);
    printf("| %s | %s | %s | %.1f | %.1f | %.3g | %.1f | %.1f | %.1f | %.1f |\n", op, fmt, mode, r.row_cpu.med * 1e9,
           r.row_cpu.min * 1e9, 1 / r.row_cpu.med, r.base_cpu.med * 1e9, r.base_cpu.min * 1e9, r.ratio_cpu.med, r.ratio_cpu.min);
    fflush(stdout);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: b_ref [--pairs N]\n");
            return 2;
        }
    }
    ref_ctx r;
    if (ref_ctx_init(&r)) { fprintf(stderr, "b_ref: ref_ctx_init failed\n"); return 1; }
    printf("MPFR reference (ref_op), one thread, shared libmpfr %s, against fpemu on the same %d operands, interleaved\n"
           "in %d pairs (A B, B A, ...); ns per case, thread CPU time; ref / emu pair by pair\n", mpfr_get_version(), N, pairs);
    bench_print_machine("# ");
    printf("\n| operation | format | mode | ref ns med | ref ns min | ref cases/s | emu ns med | emu ns min | ref / emu med | ref / emu min |\n");
    printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    static const char *fmts[] = {"f16", "bf16", "e4m3", "f32", "f64"};
    static const ref_opcode opsl[] = {REF_ADD, REF_MUL, REF_FMA, REF_DIV, REF_SQRT};
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0);
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        const fpemu_format *f = fpemu_format_get(fmts[fi], NULL, 0);
        ref_format rf;
        ref_format_init(&rf, f);
        fill(f, &rf);
        for (size_t oi = 0; oi < sizeof opsl / sizeof opsl[0]; oi++) {
            int nm = (fi == 0 && opsl[oi] == REF_ADD) ? 3 : 1;
            static const fpemu_round modes[3] = {FPEMU_RNE, FPEMU_RNA, FPEMU_RTO};
            for (int mi = 0; mi < nm; mi++) {
                job j = {&r, f, f, opsl[oi], modes[mi]};
                row(ref_op_name(opsl[oi]), fmts[fi], fpemu_round_name(modes[mi]), &j);
            }
        }
    }
    ref_format rf32;
    ref_format_init(&rf32, f32);
    fill(f32, &rf32);
    static const char *dsts[] = {"f16", "bf16", "e4m3", "e5m2"};
    for (size_t di = 0; di < 4; di++) {
        const fpemu_format *d = fpemu_format_get(dsts[di], NULL, 0);
        job j = {&r, d, f32, REF_CONVERT, FPEMU_RNE};
        char name[32];
        snprintf(name, sizeof name, "f32 -> %s", dsts[di]);
        row("convert", name, "rne", &j);
    }
    ref_ctx_clear(&r);
    printf("\n(checksum %llu)\n", (unsigned long long)sink);
    return 0;
}
