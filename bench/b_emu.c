/* SPDX-License-Identifier: MIT */
/* b_emu.c: speed of the emulator core, every row timed against a native
 * baseline in the same process, interleaved (bench/bench.h: pairs A B, B A,
 * ..., thread CPU time and wall time, minimum and median of each side and
 * of the ratio pair by pair).
 *
 * Sections, each row with the baseline named in its own column:
 *  scalar   fpemu_add/mul/fma/div/sqrt and fpemu_from_float (flags on, as
 *           always) on f16, bf16, e4m3, e5m2 and f32 in rne, rtz, sr and
 *           "sr call" (sr with the caller's bits: fpemu_add_sr and friends,
 *           one draw per call from a precomputed array); operands log-uniform
 *           in [2^-4, 2^4], random signs. Baseline: the native binary32 op
 *           (addss, mulss, vfmadd, divss, sqrtss) in a function that is never
 *           inlined, called once per element from the same loop over the same
 *           values as f32 bit patterns: what one scalar call of the hardware
 *           costs measured the same way. from_f32's baseline is the hardware
 *           conversion of one float: F16C vcvtps2ph (_cvtss_sh) for f16 and
 *           the formats without a converter, AVX512-BF16 vcvtneps2bf16
 *           (_mm_cvtneps_pbh on one lane) for bf16, each in a function compiled for its
 *           instruction set (a CPU without it: libgcc's conversion, named so).
 *  codes    f16 and bf16 add, mul and fma in rne on uniformly random codes
 *           (every class mixed, as a fuzzer or a checker feeds them), then
 *           on codes of one class at a time: normal results, overflowing
 *           results, results below the smallest normal, an inf or NaN
 *           operand, and for bf16 add an exponent gap above 15. Baseline:
 *           the native op as above, on the same values.
 *  array    fpemu_encode_f32 and fpemu_round_f32 of 65536 floats (in cache)
 *           to bf16, f16, e4m3, e5m2, binary8p1: rne, rne sat, rne in place with stats,
 *           sr; and for f16 and bf16 encode_f32 in rne with the context's
 *           flags cleared before each call ("rne fresh": the rne row's
 *           context keeps its flags from call to call, as a caller's does,
 *           and a flag already raised is not looked for again). Baseline: the hardware converter over the same array
 *           (AVX-512 vcvtps2ph for f16, vcvtneps2bf16 for bf16), or, for
 *           the formats no converter makes, an f32 array copy (memcpy).
 *           Last, e2m1 as MX and NVFP4 cast it: data scaled as a block is
 *           (|x| <= 6.4), rne sat with counts, calls of 1024 elements.
 *  tensor   fpemu_caster_run (the tensor cast of `fpemu cast` and the Python
 *           package) of 65536 values N(0, 64), no recipe, counts only, to
 *           e4m3 and bf16: held as doubles (the rounding to odd to f32,
 *           then the array casts), as floats, and the loop of
 *           fpemu_from_double and fpemu_to_double an f64 input took before
 *           the odd path. Baseline: the doubles converted to floats by a
 *           plain loop of (float) casts (vcvtpd2ps, vectorised as the
 *           compiler does).
 * Targets (issue 2: scalar f16/bf16 add/mul <= 5 ns, fma <= 8 ns, 8-bit
 * add/mul <= 2 ns, array <= 0.5 ns; issue 32: random codes <= 10 ns, every
 * class <= 15 ns, f16/bf16 rne array encoding <= 1.2x the converter) are
 * checked on the median thread-CPU ns.
 * Options: b_emu [--quick] [--section scalar|codes|array|tensor] [--pairs N]. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "fpemu.h"
#include "fpemu_api.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define X86 1
#else
#define X86 0
#endif

#define NS 4096      /* scalar operands per pass */
#define NA (1 << 16) /* array elements per pass */

static int pairs = 9;

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static uint64_t rng(void) { /* xorshift64*: fixed seed, reproducible inputs */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}
static double urand(void) { return ((rng() >> 11) + 0.5) * 0x1p-53; }
static double nrand(void) { return sqrt(-2 * log(urand())) * cos(2 * M_PI * urand()); }
static float fl(uint64_t bits) {
    uint32_t u = (uint32_t)bits;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
static uint32_t fb(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ---- what the CPU has ---------------------------------------------------- */
static int cpu_f16c, cpu_avx512f, cpu_bf16, cpu_fma;
static void cpu_probe(void) {
#if X86
    __builtin_cpu_init();
    cpu_f16c = __builtin_cpu_supports("avx") != 0;
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) cpu_f16c = cpu_f16c && (c >> 29 & 1), cpu_fma = (c >> 12 & 1) && cpu_f16c;
    cpu_avx512f = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) cpu_bf16 = cpu_avx512f && (a >> 5 & 1);
#endif
}

/* ---- native scalar ops: one out-of-line call per element ------------------ */
typedef enum { OP_ADD, OP_MUL, OP_FMA, OP_DIV, OP_SQRT, OP_FROM } opk;
static const char *op_name[] = {"add", "mul", "fma", "div", "sqrt", "from_f32"};

#define NOIPA __attribute__((noipa))
NOIPA static uint64_t nat_add(uint64_t a, uint64_t b, uint64_t c) { (void)c; return fb(fl(a) + fl(b)); }
NOIPA static uint64_t nat_mul(uint64_t a, uint64_t b, uint64_t c) { (void)c; return fb(fl(a) * fl(b)); }
NOIPA static uint64_t nat_div(uint64_t a, uint64_t b, uint64_t c) { (void)c; return fb(fl(a) / fl(b)); }
#if X86
NOIPA static uint64_t nat_sqrt(uint64_t a, uint64_t b, uint64_t c) {
    (void)b, (void)c;
    return fb(_mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(fl(a)))));
}
NOIPA __attribute__((target("fma"))) static uint64_t nat_fma_hw(uint64_t a, uint64_t b, uint64_t c) {
    return fb(_mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(fl(a)), _mm_set_ss(fl(b)), _mm_set_ss(fl(c)))));
}
NOIPA __attribute__((target("f16c,avx"))) static uint64_t nat_f16c(uint64_t a, uint64_t b, uint64_t c) {
    (void)b, (void)c;
    return (uint64_t)_cvtss_sh(fl(a), _MM_FROUND_TO_NEAREST_INT);
}
NOIPA __attribute__((target("avx512bf16,avx512vl,avx512f"))) static uint64_t nat_bf16(uint64_t a, uint64_t b, uint64_t c) {
    (void)b, (void)c;
    __m128bh h = _mm_cvtneps_pbh(_mm_set_ss(fl(a))); /* one vcvtneps2bf16 (gcc 12 and 13 name the scalar form apart) */
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}
#else
NOIPA static uint64_t nat_sqrt(uint64_t a, uint64_t b, uint64_t c) { (void)b, (void)c; return fb(sqrtf(fl(a))); }
#endif
NOIPA static uint64_t nat_fma_sw(uint64_t a, uint64_t b, uint64_t c) { return fb(fmaf(fl(a), fl(b), fl(c))); }
NOIPA static uint64_t nat_soft_f16(uint64_t a, uint64_t b, uint64_t c) { /* libgcc (no F16C) */
    (void)b, (void)c;
    _Float16 h = (_Float16)fl(a);
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}
typedef uint64_t (*natfn)(uint64_t, uint64_t, uint64_t);

/* The native baseline of an operation on a format: the function and its name. */
static natfn native_for(opk op, const char *fmt, const char **name) {
    switch (op) {
    case OP_ADD: *name = "f32 addss call"; return nat_add;
    case OP_MUL: *name = "f32 mulss call"; return nat_mul;
    case OP_DIV: *name = "f32 divss call"; return nat_div;
    case OP_SQRT: *name = "f32 sqrtss call"; return nat_sqrt;
    case OP_FMA:
#if X86
        if (cpu_fma) { *name = "f32 vfmadd call"; return nat_fma_hw; }
#endif
        *name = "f32 fmaf call (libm)";
        return nat_fma_sw;
    default:
#if X86
        if (!strcmp(fmt, "bf16") && cpu_bf16) { *name = "AVX512-BF16 cvt call"; return nat_bf16; }
        if (cpu_f16c) { *name = strcmp(fmt, "f16") ? "F16C f32->f16 call" : "F16C cvtss_sh call"; return nat_f16c; }
#endif
        (void)fmt;
        *name = "libgcc f32->f16 call";
        return nat_soft_f16;
    }
}

/* ---- timed units ----------------------------------------------------------- */
typedef struct {
    const fpemu_format *f;
    opk op;
    fpemu_ctx ctx;
    const uint64_t *a, *b, *c, *rb; /* rb: the caller's draws (NULL: the context's mode) */
    int inner;                      /* passes over the NS operands per call */
    natfn nat;                      /* the native side: a, b, c as f32 bits */
} scalar_job;

static void run_emu(void *p) {
    scalar_job *j = p;
    const fpemu_format *f = j->f;
    fpemu_ctx *ctx = &j->ctx;
    const uint64_t *a = j->a, *b = j->b, *c = j->c, *rb = j->rb;
    uint64_t acc = 0;
    for (int k = 0; k < j->inner; k++) {
        if (rb) switch (j->op) {
            case OP_ADD: for (int i = 0; i < NS; i++) acc += fpemu_add_sr(f, a[i], b[i], rb[i], ctx); break;
            case OP_MUL: for (int i = 0; i < NS; i++) acc += fpemu_mul_sr(f, a[i], b[i], rb[i], ctx); break;
            case OP_FMA: for (int i = 0; i < NS; i++) acc += fpemu_fma_sr(f, a[i], b[i], c[i], rb[i], ctx); break;
            case OP_DIV: for (int i = 0; i < NS; i++) acc += fpemu_div_sr(f, a[i], b[i], rb[i], ctx); break;
            case OP_SQRT: for (int i = 0; i < NS; i++) acc += fpemu_sqrt_sr(f, a[i], rb[i], ctx); break;
            case OP_FROM: for (int i = 0; i < NS; i++) acc += fpemu_from_float_sr(f, fl(a[i]), rb[i], ctx); break;
            }
        else switch (j->op) {
            case OP_ADD: for (int i = 0; i < NS; i++) acc += fpemu_add(f, a[i], b[i], ctx); break;
            case OP_MUL: for (int i = 0; i < NS; i++) acc += fpemu_mul(f, a[i], b[i], ctx); break;
            case OP_FMA: for (int i = 0; i < NS; i++) acc += fpemu_fma(f, a[i], b[i], c[i], ctx); break;
            case OP_DIV: for (int i = 0; i < NS; i++) acc += fpemu_div(f, a[i], b[i], ctx); break;
            case OP_SQRT: for (int i = 0; i < NS; i++) acc += fpemu_sqrt(f, a[i], ctx); break;
            case OP_FROM: for (int i = 0; i < NS; i++) acc += fpemu_from_float(f, fl(a[i]), ctx); break;
            }
    }
    bench_sink += acc + ctx->flags;
}
static void run_nat(void *p) {
    scalar_job *j = p;
    const uint64_t *a = j->a, *b = j->b, *c = j->c;
    natfn fn = j->nat;
    uint64_t acc = 0;
    for (int k = 0; k < j->inner; k++)
        for (int i = 0; i < NS; i++) acc += fn(a[i], b[i], c[i]);
    bench_sink += acc;
}

static int targets_met = 0, targets_missed = 0;
static void header(const char *title) {
    printf("\n%s\n", title);
    printf("%-16s %-6s %-9s %8s %8s  %-22s %8s %8s %7s %7s %8s %8s  %s\n", "op", "format", "mode", "emu med", "emu min",
           "baseline", "base med", "base min", "x med", "x min", "emu wall", "base wall", "target");
}
/* A row: ns per element (thread CPU, median and min), the baseline's, the
 * ratio pair by pair (median, min), and both medians in wall time; the
 * target (0: none) on the median ns, or on the median ratio (is_ratio). */
static void row(const char *op, const char *fmt, const char *mode, const char *base, const bench_cmp *r, double target,
                int is_ratio) {
    char t[48] = "";
    if (target > 0) {
        int met = is_ratio ? r->ratio_cpu.med <= target : r->row_cpu.med * 1e9 <= target;
        snprintf(t, sizeof t, "%s <= %g%s: %s", is_ratio ? "x" : "", target, is_ratio ? "" : " ns", met ? "met" : "MISSED");
        met ? targets_met++ : targets_missed++;
    }
    printf("%-16s %-6s %-9s %8.3f %8.3f  %-22s %8.3f %8.3f %7.2f %7.2f %8.3f %8.3f  %s\n", op, fmt, mode, r->row_cpu.med * 1e9,
           r->row_cpu.min * 1e9, base, r->base_cpu.med * 1e9, r->base_cpu.min * 1e9, r->ratio_cpu.med, r->ratio_cpu.min,
           r->row_wall.med * 1e9, r->base_wall.med * 1e9, t);
    fflush(stdout);
}

/* Target in ns (issue 2), or 0. */
static double scalar_target(const fpemu_format *f, opk op) {
    int wide16 = !strcmp(f->name, "f16") || !strcmp(f->name, "bf16");
    if (wide16 && (op == OP_ADD || op == OP_MUL)) return 5;
    if (wide16 && op == OP_FMA) return 8;
    if (f->bits <= 8 && (op == OP_ADD || op == OP_MUL)) return 2;
    return 0;
}

/* emu/fast.c: the scalar f16/bf16 ops' instruction-set level (0 portable
 * C, 1 F16C, 2 AVX512-FP16; the best the CPU has unless B_EMU_SCALAR_ISA
 * asks for a lower one). Results are the same at every level. */
int emu__scalar_isa(int level);

static void f32_bits_of(const fpemu_format *f, const uint64_t *codes, uint64_t *out, int n) {
    for (int i = 0; i < n; i++) {
        fpemu_ctx c;
        fpemu_ctx_init(&c);
        out[i] = fb((float)fpemu_to_double(f, codes[i])); /* exact for every format here but f64 */
    }
}

static void bench_scalar(int quick) {
    static const char *fmts[] = {"f16", "bf16", "e4m3", "e5m2", "f32"};
    static const fpemu_round modes[] = {FPEMU_RNE, FPEMU_RTZ, FPEMU_SR, FPEMU_SR}; /* the second sr: caller's bits */
    static uint64_t a[NS], b[NS], c[NS], sa[NS], rb[NS], xf[NS], na[NS], nb[NS], nc[NS], nsa[NS];
    header("scalar: ns per call, thread CPU time; x = emu / baseline, pair by pair");
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        const fpemu_format *f = fpemu_format_get(fmts[fi], NULL, 0);
        fpemu_ctx ictx;
        fpemu_ctx_init(&ictx);
        for (int i = 0; i < NS; i++) {
            double x = exp2(urand() * 8 - 4) * (rng() & 1 ? -1 : 1);
            double y = exp2(urand() * 8 - 4) * (rng() & 1 ? -1 : 1);
            double z = exp2(urand() * 8 - 4) * (rng() & 1 ? -1 : 1);
            a[i] = fpemu_from_double(f, x, &ictx);
            b[i] = fpemu_from_double(f, y, &ictx);
            c[i] = fpemu_from_double(f, z, &ictx);
            sa[i] = fpemu_from_double(f, fabs(x), &ictx);
            rb[i] = rng();
            xf[i] = fb((float)(x * (1 + urand() * 0x1p-6))); /* between codes: every conversion rounds */
        }
        f32_bits_of(f, a, na, NS), f32_bits_of(f, b, nb, NS), f32_bits_of(f, c, nc, NS), f32_bits_of(f, sa, nsa, NS);
        for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
            if (quick && mi) continue;
            for (int op = OP_ADD; op <= OP_FROM; op++) {
                scalar_job e = {0}, n = {0};
                e.f = f, e.op = (opk)op;
                fpemu_ctx_init(&e.ctx);
                e.ctx.round = modes[mi];
                e.ctx.seed = 1;
                int call = mi == 3;
                e.a = op == OP_SQRT ? sa : op == OP_FROM ? xf : a, e.b = b, e.c = c, e.rb = call ? rb : NULL;
                e.inner = f->bits <= 8 ? 16 : 8;
                const char *bname;
                n.nat = native_for((opk)op, f->name, &bname);
                n.a = op == OP_SQRT ? nsa : op == OP_FROM ? xf : na, n.b = nb, n.c = nc, n.inner = e.inner;
                bench_cmp r;
                bench_compare(run_nat, &n, (double)n.inner * NS, run_emu, &e, (double)e.inner * NS, pairs, BENCH_THREAD, &r);
                char name[32];
                snprintf(name, sizeof name, "scalar %s", op_name[op]);
                row(name, f->name, call ? "sr call" : fpemu_round_name(modes[mi]), bname, &r, scalar_target(f, (opk)op), 0);
            }
        }
    }
}

/* ---- uniformly random codes ------------------------------------------------ */
enum { CL_ALL, CL_NORMAL, CL_OVERFLOW, CL_TINY, CL_SPECIAL, CL_GAP, CL_COUNT };
static const char *cl_name[] = {"random", "normal", "overflow", "tiny", "inf/NaN", "gap>15"};

static int code_class(const fpemu_format *f, opk op, uint64_t x, uint64_t y, uint64_t z) {
    uint64_t ops[3] = {x, y, z};
    int n = op == OP_FMA ? 3 : 2;
    for (int i = 0; i < n; i++) {
        fpemu_class k = fpemu_classify(f, ops[i]);
        if (k >= FPEMU_CLASS_INF) return CL_SPECIAL;
    }
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    uint64_t r = op == OP_ADD ? fpemu_add(f, x, y, &c) : op == OP_MUL ? fpemu_mul(f, x, y, &c) : fpemu_fma(f, x, y, z, &c);
    if (c.flags & FPEMU_FLAG_OVERFLOW) return CL_OVERFLOW;
    fpemu_class k = fpemu_classify(f, r);
    if (k == FPEMU_CLASS_ZERO || k == FPEMU_CLASS_SUBNORMAL || (r & f->mag_mask) == (uint64_t)1 << f->mbits) return CL_TINY;
    if (op == OP_ADD && !strcmp(f->name, "bf16")) {
        int ex = (int)(x >> 7 & 0xFF), ey = (int)(y >> 7 & 0xFF);
        if (abs(ex - ey) > 15) return CL_GAP;
    }
    return CL_NORMAL;
}

static void bench_codes(int quick) {
    static const char *fmts[] = {"f16", "bf16"};
    static const opk ops[] = {OP_ADD, OP_MUL, OP_FMA};
    static uint64_t a[NS], b[NS], c[NS], na[NS], nb[NS], nc[NS];
    header("codes: f16 and bf16 in rne on uniformly random codes, then one class of case at a time (issue 32);\n"
           "ns per call, thread CPU time");
    for (size_t fi = 0; fi < 2; fi++) {
        const fpemu_format *f = fpemu_format_get(fmts[fi], NULL, 0);
        for (size_t oi = 0; oi < 3; oi++) {
            opk op = ops[oi];
            for (int cl = 0; cl < CL_COUNT; cl++) {
                if (cl == CL_GAP && (op != OP_ADD || fi != 1)) continue;
                if (quick && cl != CL_ALL) continue;
                int got = 0;
                for (long tries = 0; got < NS && tries < 400000000L; tries++) {
                    uint64_t r = rng();
                    uint64_t x = r & 0xFFFF, y = r >> 16 & 0xFFFF, z = r >> 32 & 0xFFFF;
                    if (cl != CL_ALL && code_class(f, op, x, y, z) != cl) continue;
                    a[got] = x, b[got] = y, c[got] = z;
                    got++;
                }
                if (got < NS) continue;
                f32_bits_of(f, a, na, NS), f32_bits_of(f, b, nb, NS), f32_bits_of(f, c, nc, NS);
                scalar_job e = {0}, n = {0};
                e.f = f, e.op = op, e.a = a, e.b = b, e.c = c, e.inner = 8;
                fpemu_ctx_init(&e.ctx);
                const char *bname;
                n.nat = native_for(op, f->name, &bname);
                n.a = na, n.b = nb, n.c = nc, n.inner = 8;
                bench_cmp r;
                bench_compare(run_nat, &n, 8.0 * NS, run_emu, &e, 8.0 * NS, pairs, BENCH_THREAD, &r);
                char name[32];
                snprintf(name, sizeof name, "%s %s", op_name[op], cl_name[cl]);
                row(name, f->name, "rne", bname, &r, cl == CL_ALL ? 10 : 15, 0);
            }
        }
    }
}

/* ---- arrays ------------------------------------------------------------------ */
/* emu/cast.c: the array kernels' instruction-set level (0 portable C,
 * 1 AVX2, 2 AVX-512; the best the CPU has unless B_EMU_CAST_ISA asks for a
 * lower one). Results are the same at every level. */
int emu__cast_isa(int level);

typedef struct {
    const fpemu_format *f;
    int kind, sat;
    const float *src;
    float *out;
    void *dst;
    fpemu_cast_stats st;
    fpemu_ctx ctx;
} array_job;
static void run_array(void *p) {
    array_job *j = p;
    if (j->kind == 5) { /* e2m1 as MX and NVFP4 cast it: runs of 1024 (EMU_CAST_CHUNK), rne, sat, with counts */
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < NA; i += 1024) fpemu_encode_f32(j->f, (uint8_t *)j->dst + i, j->src + i, 1024, &j->ctx, &j->st);
        bench_sink += ((uint8_t *)j->dst)[7] + j->st.underflow;
        return;
    }
    for (int k = 0; k < 4; k++) {
        if (j->kind == 4) j->ctx.flags = 0; /* a fresh context each call: every flag still to be found */
        if (j->kind == 0 || j->kind == 4) fpemu_encode_f32(j->f, j->dst, j->src, NA, &j->ctx, NULL);
        else if (j->kind == 1 || j->kind == 3) fpemu_round_f32(j->f, j->out, j->src, NA, &j->ctx, NULL);
        else fpemu_round_f32(j->f, j->out, j->out, NA, &j->ctx, &j->st); /* in place: values already rounded after the first */
    }
    bench_sink += ((uint8_t *)j->dst)[7] + (uint64_t)j->out[5] + j->ctx.flags + j->st.overflow;
}
typedef struct { const float *src; void *dst; int kind; } conv_job; /* kind 0 f16, 1 bf16, 2 copy */
#if X86
__attribute__((target("avx512f,avx512vl,f16c,avx"))) static void conv_f16(const float *s, uint16_t *d, size_t n) {
    for (size_t i = 0; i < n; i += 16)
        _mm256_storeu_si256((__m256i *)(void *)(d + i), _mm512_cvtps_ph(_mm512_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c,avx"))) static void conv_f16_avx(const float *s, uint16_t *d, size_t n) {
    for (size_t i = 0; i < n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("avx512bf16,avx512f,avx512vl"))) static void conv_bf16(const float *s, uint16_t *d, size_t n) {
    for (size_t i = 0; i < n; i += 16) {
        __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(s + i));
        memcpy(d + i, &h, 32);
    }
}
#endif
static void run_conv(void *p) {
    conv_job *j = p;
    for (int k = 0; k < 4; k++) {
#if X86
        if (j->kind == 0 && cpu_avx512f && cpu_f16c) conv_f16(j->src, j->dst, NA);
        else if (j->kind == 0 && cpu_f16c) conv_f16_avx(j->src, j->dst, NA);
        else if (j->kind == 1 && cpu_bf16) conv_bf16(j->src, j->dst, NA);
        else
#endif
            memcpy(j->dst, j->src, NA * sizeof(float));
        __asm__ volatile("" ::: "memory");
    }
    bench_sink += ((uint8_t *)j->dst)[3];
}

static void bench_array(int quick) {
    static const char *fmts[] = {"bf16", "f16", "e4m3", "e5m2", "binary8p1"};
    static const char *isa[] = {"portable C", "AVX2", "AVX-512"};
    static float src[NA], out[NA], cp[NA];
    static uint8_t dst[NA * 4];
    for (int i = 0; i < NA; i++) src[i] = (float)(nrand() * 8); /* mostly inside e4m3's range */
    const char *want = getenv("B_EMU_CAST_ISA");
    int level = emu__cast_isa(want && *want ? atoi(want) : -1);
    char title[160];
    snprintf(title, sizeof title, "array: ns per element of 65536 floats (in cache), thread CPU time; array kernels: %s", isa[level]);
    header(title);
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        const fpemu_format *f = fpemu_format_get(fmts[fi], NULL, 0);
        conv_job cj = {src, cp, 2};
        const char *bname = "f32 copy (memcpy)";
#if X86
        if (!strcmp(f->name, "f16") && cpu_f16c) cj.kind = 0, bname = cpu_avx512f ? "F16C vcvtps2ph zmm" : "F16C vcvtps2ph ymm";
        if (!strcmp(f->name, "bf16") && cpu_bf16) cj.kind = 1, bname = "AVX512-BF16 vcvtneps2bf16";
#endif
        for (int kind = 0; kind < 5; kind++)
            for (int sat = 0; sat < (kind >= 2 ? 1 : 2); sat++) {
                if (quick && (kind > 1 || sat)) continue;
                if (kind == 4 && cj.kind == 2) continue; /* fresh flags: only where a converter is the baseline */
                array_job j = {f, kind, sat, src, out, dst, {0}, {0}};
                fpemu_ctx_init(&j.ctx);
                j.ctx.sat = sat;
                if (kind == 3) j.ctx.round = FPEMU_SR;
                if (kind == 2) memcpy(out, src, sizeof out);
                bench_cmp r;
                bench_compare(run_conv, &cj, 4.0 * NA, run_array, &j, 4.0 * NA, pairs, BENCH_THREAD, &r);
                static const char *names[] = {"array encode_f32", "array round_f32", "array round+stats", "array round_f32",
                                              "array encode_f32"};
                int hw = cj.kind < 2 && kind == 0 && !sat; /* issue 32: within 1.2x of the converter */
                row(names[kind], f->name, kind == 4 ? "rne fresh" : kind == 3 ? "sr" : kind == 2 ? "rne inpl" : sat ? "rne sat" : "rne", bname, &r,
                    hw ? 1.2 : kind >= 2 ? 0 : 0.5, hw);
            }
    }
    if (quick) return;
    /* e2m1 (MX's and NVFP4's elements) on data scaled as their blocks are:
     * |x| <= 6.4, most of it below e2m1's min normal 1 */
    static float blk[NA];
    for (int i = 0; i < NA; i++) blk[i] = fmaxf(-6.4f, fminf(6.4f, src[i] / 5));
    const fpemu_format *f = fpemu_format_get("e2m1", NULL, 0);
    conv_job cj = {blk, cp, 2};
    array_job j = {f, 5, 1, blk, out, dst, {0}, {0}};
    fpemu_ctx_init(&j.ctx);
    j.ctx.sat = 1;
    bench_cmp r;
    bench_compare(run_conv, &cj, 4.0 * NA, run_array, &j, 4.0 * NA, pairs, BENCH_THREAD, &r);
    row("encode+stats", "e2m1", "1024s sat", "f32 copy (memcpy)", &r, 0, 0);
}

/* The tensor cast (fpemu_caster_run, what `fpemu cast` and the Python
 * package's cast do) of NA values held in doubles, without a recipe,
 * counts only (as cast() asks): the odd path, and the scalar conversion an
 * f64 input took before it (fpemu_from_double and a decode per element);
 * the same values as floats through the caster for comparison. Baseline:
 * the hardware conversion of the doubles to floats (vcvtpd2ps). */
typedef struct { fpemu_caster *c; const fpemu_format *f; const double *xd; const float *xf; double *yd; float *yf; int kind; } tensor_job;
static void run_tensor(void *p) {
    tensor_job *j = p;
    const size_t shape[1] = {NA};
    for (int k = 0; k < 4; k++) {
        if (j->kind == 0) fpemu_caster_run_f64(j->c, j->xd, 1, shape, j->yd, NULL);
        else if (j->kind == 1) fpemu_caster_run_f32(j->c, j->xf, 1, shape, j->yf, NULL);
        else {
            fpemu_ctx ctx;
            fpemu_ctx_init(&ctx);
            for (size_t i = 0; i < NA; i++) j->yd[i] = fpemu_to_double(j->f, fpemu_from_double(j->f, j->xd[i], &ctx));
        }
    }
    bench_sink += (uint64_t)j->yd[3] + (uint64_t)j->yf[5];
}
typedef struct { const double *x; float *y; } narrow_job;
static void run_narrow(void *p) {
    narrow_job *j = p;
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < NA; i++) j->y[i] = (float)j->x[i];
        __asm__ volatile("" ::: "memory");
    }
    bench_sink += (uint64_t)j->y[7];
}
static void bench_tensor(int quick) {
    static double xd[NA], yd[NA];
    static float xf[NA], yf[NA], cp[NA];
    for (int i = 0; i < NA; i++) xd[i] = nrand() * 8, xf[i] = (float)xd[i];
    header("tensor: ns per element of fpemu_caster_run over 65536 values (in cache), no recipe, counts only, thread CPU time");
    static const char *fmts[] = {"e4m3", "bf16"};
    for (size_t fi = 0; fi < (quick ? 1 : 2); fi++)
        for (int kind = 0; kind < 3; kind++) {
            char err[200];
            fpemu_caster *c = fpemu_caster_new(fmts[fi], err, sizeof err);
            if (!c || fpemu_caster_set(c, "stats", "counts")) {
                fprintf(stderr, "b_emu: caster %s: %s\n", fmts[fi], c ? fpemu_caster_error(c) : err);
                exit(1);
            }
            tensor_job j = {c, fpemu_format_get(fmts[fi], NULL, 0), xd, xf, yd, yf, kind};
            narrow_job nj = {xd, cp};
            bench_cmp r;
            bench_compare(run_narrow, &nj, 4.0 * NA, run_tensor, &j, 4.0 * NA, pairs, BENCH_THREAD, &r);
            static const char *names[] = {"cast f64", "cast f32", "from_double loop"};
            row(names[kind], fmts[fi], "rne", "f64->f32 (float) loop", &r, 0, 0);
            fpemu_caster_free(c);
        }
}

int main(int argc, char **argv) {
    int quick = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--section") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: b_emu [--quick] [--section scalar|codes|array|tensor] [--pairs N]\n");
            return 2;
        }
    }
    if (quick && pairs == 9) pairs = 3;
    cpu_probe();
    (void)fpemu_format_get("f16", NULL, 0); /* the registry sets the best level first */
    static const char *sisa[] = {"portable C", "F16C", "AVX512-FP16"};
    const char *want = getenv("B_EMU_SCALAR_ISA");
    int level = emu__scalar_isa(want && *want ? atoi(want) : 2);
    printf("b_emu: every row interleaved with its baseline, %d pairs (A B, B A, ...); med/min over the pairs;\n"
           "x = emu / baseline pair by pair (median, min); wall: medians of wall-clock time\n", pairs);
    bench_print_machine("# ");
    printf("# scalar f16/bf16 ops: %s; F16C %s, AVX-512 %s, AVX512-BF16 %s, FMA %s\n", sisa[level], cpu_f16c ? "yes" : "no",
           cpu_avx512f ? "yes" : "no", cpu_bf16 ? "yes" : "no", cpu_fma ? "yes" : "no");
    if (!only || !strcmp(only, "scalar")) bench_scalar(quick);
    if (!only || !strcmp(only, "codes")) bench_codes(quick);
    if (!only || !strcmp(only, "array")) bench_array(quick);
    if (!only || !strcmp(only, "tensor")) bench_tensor(quick);
    printf("\ntargets: %d met, %d missed (on the median thread-CPU ns; a shared machine can miss any of them)\n", targets_met,
           targets_missed);
    printf("(checksum %llu)\n", (unsigned long long)bench_sink);
    return 0;
}
