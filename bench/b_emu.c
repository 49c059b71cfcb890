/* SPDX-License-Identifier: MIT */
/* b_emu.c: speed of the emulator core. ns per element of scalar
 * fpemu_add/mul/fma/div/sqrt (flags on, as always) on f16, bf16, e4m3, e5m2
 * and f32 in rne, rtz and sr, and sr with the caller's bits (mode "sr call":
 * fpemu_add_sr and friends, one draw per call from a precomputed array),
 * and of the array casts fpemu_encode_f32 and
 * fpemu_round_f32 from f32 to bf16, f16, e4m3, e5m2 (rne, with and without
 * saturation), against native loops measured in the same run (f32 add and
 * mul through arrays; an f32 array copy; f32 -> _Float16, which is a libgcc
 * call without F16C since nothing here uses -march=native). Inputs are
 * random (fixed seed) finite values; every result feeds a checksum so no
 * loop is dead code; each figure is the best of several repetitions.
 * Targets (issue 2): scalar f16/bf16 add/mul <= 5 ns, fma <= 8 ns, 8-bit
 * add/mul <= 2 ns, array f32 -> bf16/f16/e4m3/e5m2 <= 0.5 ns. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fpemu.h"

#define NS 4096       /* scalar operands per pass */
#define NA (1 << 16)  /* array elements per pass */
#define REPS 5

static volatile uint64_t sink;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static uint64_t rng(void) { /* xorshift64*: fixed seed, reproducible inputs */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}
/* Uniform in (0, 1). */
static double urand(void) { return ((rng() >> 11) + 0.5) * 0x1p-53; }
/* A normal deviate (Box-Muller). */
static double nrand(void) { return sqrt(-2 * log(urand())) * cos(2 * M_PI * urand()); }

static double native_add_ns, native_conv_ns;

typedef enum { OP_ADD, OP_MUL, OP_FMA, OP_DIV, OP_SQRT, OP_FROM } opk; /* OP_FROM: fpemu_from_float of a[i]'s float */
static const char *op_name[] = {"add", "mul", "fma", "div", "sqrt", "from_f32"};

/* Target in ns, or 0 when issue 2 sets none. */
static double scalar_target(const fpemu_format *f, opk op) {
    int wide16 = !strcmp(f->name, "f16") || !strcmp(f->name, "bf16");
    if (wide16 && (op == OP_ADD || op == OP_MUL)) return 5;
    if (wide16 && op == OP_FMA) return 8;
    if (f->bits <= 8 && (op == OP_ADD || op == OP_MUL)) return 2;
    return 0;
}

static void row(const char *op, const char *fmt, const char *mode, double ns, double base, double target) {
    char t[32];
    if (target > 0) snprintf(t, sizeof t, "<= %g", target);
    else snprintf(t, sizeof t, "-");
    printf("%-22s %-6s %-9s %9.2f %9.1f   %-8s %s\n", op, fmt, mode, ns, base > 0 ? ns / base : 0, t,
           target > 0 ? (ns <= target ? "yes" : "NO") : "");
}

static float fl(uint64_t bits) {
    uint32_t u = (uint32_t)bits;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Best-of-REPS ns per element for one scalar op over NS operand triples
 * (rb: through fpemu_X_sr with draw rb[i]; NULL: the context's mode). */
static double time_scalar(const fpemu_format *f, opk op, fpemu_ctx *ctx, const uint64_t *a, const uint64_t *b,
                          const uint64_t *c, const uint64_t *rb) {
    double best = 1e300;
    int inner = f->bits <= 8 ? 16 : 8;
    for (int r = 0; r < REPS; r++) {
        uint64_t acc = 0;
        double t0 = now_ns();
        for (int k = 0; k < inner; k++) {
            if (rb) switch (op) {
                case OP_ADD: for (int i = 0; i < NS; i++) acc += fpemu_add_sr(f, a[i], b[i], rb[i], ctx); break;
                case OP_MUL: for (int i = 0; i < NS; i++) acc += fpemu_mul_sr(f, a[i], b[i], rb[i], ctx); break;
                case OP_FMA: for (int i = 0; i < NS; i++) acc += fpemu_fma_sr(f, a[i], b[i], c[i], rb[i], ctx); break;
                case OP_DIV: for (int i = 0; i < NS; i++) acc += fpemu_div_sr(f, a[i], b[i], rb[i], ctx); break;
                case OP_SQRT: for (int i = 0; i < NS; i++) acc += fpemu_sqrt_sr(f, a[i], rb[i], ctx); break;
                case OP_FROM: for (int i = 0; i < NS; i++) acc += fpemu_from_float_sr(f, fl(a[i]), rb[i], ctx); break;
                }
            else switch (op) {
            case OP_ADD: for (int i = 0; i < NS; i++) acc += fpemu_add(f, a[i], b[i], ctx); break;
            case OP_MUL: for (int i = 0; i < NS; i++) acc += fpemu_mul(f, a[i], b[i], ctx); break;
            case OP_FMA: for (int i = 0; i < NS; i++) acc += fpemu_fma(f, a[i], b[i], c[i], ctx); break;
            case OP_DIV: for (int i = 0; i < NS; i++) acc += fpemu_div(f, a[i], b[i], ctx); break;
            case OP_SQRT: for (int i = 0; i < NS; i++) acc += fpemu_sqrt(f, a[i], ctx); break;
            case OP_FROM: for (int i = 0; i < NS; i++) acc += fpemu_from_float(f, fl(a[i]), ctx); break;
            }
        }
        double t = (now_ns() - t0) / ((double)inner * NS);
        sink += acc + ctx->flags;
        if (t < best) best = t;
    }
    return best;
}

/* emu/fast.c: the scalar f16/bf16 ops' instruction-set level (0 portable
 * C, 1 F16C, 2 AVX512-FP16; the best the CPU has unless B_EMU_SCALAR_ISA
 * asks for a lower one). Results are the same at every level. */
int emu__scalar_isa(int level);

static void bench_scalar(void) {
    static const char *fmts[] = {"f16", "bf16", "e4m3", "e5m2", "f32"};
    static const fpemu_round modes[] = {FPEMU_RNE, FPEMU_RTZ, FPEMU_SR, FPEMU_SR}; /* the second sr: caller's bits */
    static const char *isa[] = {"portable C", "F16C", "AVX512-FP16"};
    static uint64_t a[NS], b[NS], c[NS], sa[NS], rb[NS], xf[NS];
    (void)fpemu_format_get("f16", NULL, 0); /* the registry sets the best level first */
    const char *want = getenv("B_EMU_SCALAR_ISA");
    int level = emu__scalar_isa(want && *want ? atoi(want) : 2);
    printf("(scalar f16/bf16 ops: %s)\n", isa[level]);
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        const fpemu_format *f = fpemu_format_get(fmts[fi], NULL, 0);
        if (!f) { printf("(no format %s)\n", fmts[fi]); continue; }
        fpemu_ctx ictx;
        fpemu_ctx_init(&ictx);
        /* Operands: random signs, magnitudes log-uniform over a few binades
         * around 1 (well inside every format's range), encoded with rne. */
        for (int i = 0; i < NS; i++) {
            double x = exp2(urand() * 8 - 4) * (rng() & 1 ? -1 : 1);
            double y = exp2(urand() * 8 - 4) * (rng() & 1 ? -1 : 1);
            double z = exp2(urand() * 8 - 4) * (rng() & 1 ? -1 : 1);
            a[i] = fpemu_from_double(f, x, &ictx);
            b[i] = fpemu_from_double(f, y, &ictx);
            c[i] = fpemu_from_double(f, z, &ictx);
            sa[i] = fpemu_from_double(f, fabs(x), &ictx);
            rb[i] = rng();
            float xv = (float)(x * (1 + urand() * 0x1p-6)); /* between codes: every conversion rounds */
            uint32_t xu;
            memcpy(&xu, &xv, sizeof xu);
            xf[i] = xu;
        }
        for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
            for (int op = OP_ADD; op <= OP_FROM; op++) {
                fpemu_ctx ctx;
                fpemu_ctx_init(&ctx);
                ctx.round = modes[mi];
                ctx.seed = 1;
                int call = mi == 3;
                const uint64_t *x0 = op == OP_SQRT ? sa : op == OP_FROM ? xf : a;
                double ns = time_scalar(f, (opk)op, &ctx, x0, b, c, call ? rb : NULL);
                char name[32];
                snprintf(name, sizeof name, "scalar %s", op_name[op]);
                row(name, f->name, call ? "sr call" : fpemu_round_name(modes[mi]), ns, native_add_ns,
                    scalar_target(f, (opk)op));
            }
        }
    }
}

/* emu/cast.c: the array kernels' instruction-set level (0 portable C,
 * 1 AVX2, 2 AVX-512; the best the CPU has unless B_EMU_CAST_ISA asks for a
 * lower one). Results are the same at every level. */
int emu__cast_isa(int level);

/* Array casts: encode_f32 and round_f32 (src -> out) with and without sat,
 * then round_f32 in place with telemetry on, as the training engine calls
 * it (rows "+stats": no target of their own). */
static void bench_array(const float *src) {
    static const char *fmts[] = {"bf16", "f16", "e4m3", "e5m2"};
    static const char *isa[] = {"portable C", "AVX2", "AVX-512"};
    static uint8_t dst[NA * 4];
    static float out[NA];
    const char *want = getenv("B_EMU_CAST_ISA");
    int level = emu__cast_isa(want && *want ? atoi(want) : -1);
    printf("(array kernels: %s)\n", isa[level]);
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        const fpemu_format *f = fpemu_format_get(fmts[fi], NULL, 0);
        if (!f) { printf("(no format %s)\n", fmts[fi]); continue; }
        for (int kind = 0; kind < 4; kind++) { /* kind 3: round_f32 in sr (no target) */
            for (int sat = 0; sat < (kind >= 2 ? 1 : 2); sat++) {
                fpemu_ctx ctx;
                fpemu_ctx_init(&ctx);
                ctx.sat = sat;
                if (kind == 3) ctx.round = FPEMU_SR;
                fpemu_cast_stats st = {0};
                double best = 1e300;
                for (int r = 0; r < REPS; r++) {
                    if (kind == 2) memcpy(out, src, sizeof out); /* in place: fresh inputs, outside the timing */
                    double t0 = now_ns();
                    for (int k = 0; k < 4; k++) {
                        if (kind == 0) fpemu_encode_f32(f, dst, src, NA, &ctx, NULL);
                        else if (kind == 1 || kind == 3) fpemu_round_f32(f, out, src, NA, &ctx, NULL);
                        else fpemu_round_f32(f, out, out, NA, &ctx, &st);
                    }
                    double t = (now_ns() - t0) / (4.0 * NA);
                    sink += dst[r * 7] + (uint64_t)out[r * 5] + ctx.flags + st.overflow + st.underflow;
                    if (t < best) best = t;
                }
                static const char *names[] = {"array encode_f32", "array round_f32", "array round_f32 +stats", "array round_f32"};
                row(names[kind], f->name, kind == 3 ? "sr" : kind == 2 ? "rne inpl" : sat ? "rne sat" : "rne", best, native_conv_ns,
                    kind >= 2 ? 0 : 0.5);
            }
        }
    }
}

/* Native loops over the same shapes: scalar-ish f32 add/mul through arrays,
 * f32 -> _Float16 conversion, and a plain copy. */
static void bench_native(const float *src) {
    static float x[NS], y[NS], z[NS];
    static _Float16 h[NA];
    static float cp[NA];
    for (int i = 0; i < NS; i++) { x[i] = (float)nrand(); y[i] = (float)nrand(); }
    double best_add = 1e300, best_mul = 1e300, best_h = 1e300, best_cp = 1e300;
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ns();
        for (int k = 0; k < 64; k++) {
            for (int i = 0; i < NS; i++) z[i] = x[i] + y[i];
            __asm__ volatile("" ::: "memory");
        }
        double t = (now_ns() - t0) / (64.0 * NS);
        if (t < best_add) best_add = t;
        t0 = now_ns();
        for (int k = 0; k < 64; k++) {
            for (int i = 0; i < NS; i++) z[i] = x[i] * y[i];
            __asm__ volatile("" ::: "memory");
        }
        t = (now_ns() - t0) / (64.0 * NS);
        if (t < best_mul) best_mul = t;
        sink += (uint64_t)z[r];
        t0 = now_ns();
        for (int k = 0; k < 4; k++) {
            for (int i = 0; i < NA; i++) h[i] = (_Float16)src[i];
            __asm__ volatile("" ::: "memory");
        }
        t = (now_ns() - t0) / (4.0 * NA);
        if (t < best_h) best_h = t;
        t0 = now_ns();
        for (int k = 0; k < 4; k++) {
            memcpy(cp, src, sizeof cp);
            __asm__ volatile("" ::: "memory");
        }
        t = (now_ns() - t0) / (4.0 * NA);
        if (t < best_cp) best_cp = t;
        sink += (uint64_t)h[r] + (uint64_t)cp[r];
    }
    native_add_ns = best_add;
    native_conv_ns = best_cp;
    row("native f32 add", "f32", "rne", best_add, native_add_ns, 0);
    row("native f32 mul", "f32", "rne", best_mul, native_add_ns, 0);
    row("native f32 copy", "f32", "-", best_cp, native_conv_ns, 0);
    row("native f32->_Float16", "f16", "rne", best_h, native_conv_ns, 0);
}

int main(void) {
    static float src[NA];
    for (int i = 0; i < NA; i++) src[i] = (float)(nrand() * 8); /* mostly inside e4m3's range */
    printf("b_emu: ns per element, best of %d; ratio = ns / native baseline (scalar rows: native f32 add;\n"
           "array rows: native f32 array copy); target from issue 2, met?\n\n", REPS);
    printf("%-22s %-6s %-9s %9s %9s   %-8s %s\n", "op", "format", "mode", "ns/elem", "ratio", "target", "met");
    bench_native(src);
    bench_scalar();
    bench_array(src);
    printf("\n(checksum %llu)\n", (unsigned long long)sink);
    return 0;
}
