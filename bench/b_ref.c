/* SPDX-License-Identifier: MIT */
/* b_ref.c: speed of the MPFR reference (ref_op), one thread: ns per case
 * and cases/s of add, mul, fma, div, sqrt on f16, bf16, e4m3, f32, f64 and
 * of conversions from f32, in rne (plus rna and rto, which take MPFR's
 * slower paths, for f16 add), against the emulator on the same operands and
 * a native double loop measured in the same run. Operands: random codes of
 * finite values (fixed seed). This binary links MPFR the way the Makefile
 * links every program (-lmpfr, shared); `fpemu check` in make verify uses a
 * static MPFR, about twice as fast (see docs/benchmarks.md). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "ref.h"

#define N 8192
#define REPS 5

static volatile uint64_t sink;
static uint64_t st = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    st ^= st >> 12, st ^= st << 25, st ^= st >> 27;
    return st * 0x2545F4914F6CDD1DULL;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
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

static double best_of(double (*fn)(void *), void *arg) {
    double b = 1e30;
    for (int r = 0; r < REPS; r++) {
        double t = fn(arg);
        if (t < b) b = t;
    }
    return b;
}

typedef struct { ref_ctx *r; const fpemu_format *f, *src; ref_opcode op; fpemu_round mode; } job;

static double time_ref(void *a) {
    job *j = a;
    j->r->round = j->mode;
    uint64_t s = 0;
    double t0 = now_ns();
    for (int i = 0; i < N; i++) {
        uint64_t x[3] = {ops[0][i], ops[1][i], ops[2][i]};
        unsigned fl;
        s += ref_op(j->r, j->f, j->op, x, j->src, &fl) + fl;
    }
    double t = (now_ns() - t0) / N;
    sink += s;
    return t;
}

static double time_emu(void *a) {
    job *j = a;
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    c.round = j->mode;
    uint64_t s = 0;
    double t0 = now_ns();
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
    double t = (now_ns() - t0) / N;
    sink += s + c.flags;
    return t;
}

static double dv[3][N];
static double time_native(void *a) {
    (void)a;
    double s = 0;
    double t0 = now_ns();
    for (int i = 0; i < N; i++) s += dv[0][i] * dv[1][i] + dv[2][i];
    double t = (now_ns() - t0) / N;
    sink += (uint64_t)s;
    return t;
}

int main(void) {
    ref_ctx r;
    if (ref_ctx_init(&r)) { fprintf(stderr, "b_ref: ref_ctx_init failed\n"); return 1; }
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 3; k++) dv[k][i] = (double)(rnd() >> 11) * 0x1p-40;
    double native = best_of(time_native, NULL);
    printf("MPFR reference (ref_op), one thread, shared libmpfr %s; native: double mul+add loop %.2f ns/case\n\n",
           mpfr_get_version(), native);
    printf("| operation | format | mode | ref ns/case | ref cases/s | emu ns/case | ref / emu | ref / native |\n");
    printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
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
                double tr = best_of(time_ref, &j), te = best_of(time_emu, &j);
                printf("| %s | %s | %s | %.1f | %.3g | %.1f | %.1f | %.0f |\n", ref_op_name(opsl[oi]), fmts[fi],
                       fpemu_round_name(modes[mi]), tr, 1e9 / tr, te, tr / te, tr / native);
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
        double tr = best_of(time_ref, &j), te = best_of(time_emu, &j);
        char name[32];
        snprintf(name, sizeof name, "f32 -> %s", dsts[di]);
        printf("| convert | %s | rne | %.1f | %.3g | %.1f | %.1f | %.0f |\n", name, tr, 1e9 / tr, te, tr / te, tr / native);
    }
    ref_ctx_clear(&r);
    return 0;
}
