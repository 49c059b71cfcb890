/* SPDX-License-Identifier: MIT */
/* t_hwconv.c: fpemu_encode_f32 to f16 and bf16 through the hardware
 * converters (emu/array.c: F16C vcvtps2ph, AVX512-BF16 vcvtneps2bf16, in
 * rne without sat, ftz, daz, tininess before or telemetry) against every
 * element alone through the scalar conversion (fpemu_convert): codes and
 * the OR of the flags, over a stride sample of all 2^32 f32 patterns in
 * windows of 2^16 (unaligned starts, odd lengths), and every special and
 * border pattern alone among fillers (so the window's flags are its own),
 * under the NaN policies (NaN inputs take the bit-exact path) and with
 * flags already raised (the bf16 kernel then stops looking for them).
 * Also: under a caller's MXCSR with rtz, FTZ and DAZ the results are
 * those of the bit-exact path under it, and its control bits and raised
 * flags come back. On a CPU with F16C and AVX-512 the 16-lane f16
 * converter must pass its self-test. Skips where the CPU has no converter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

int emu__hwconv(int on);                          /* emu/array.c: turn the converters off (0) or on (1) */
int emu__hwconv_kind(const fpemu_format *fmt);    /* the converter fpemu_encode_f32 uses, 0: none */
int emu__cast_isa(int level);                     /* emu/cast.c: the kernels' level */

static const fpemu_format *F32;

/* The reference: each element alone. */
static unsigned ref_window(const fpemu_format *f, const fpemu_ctx *t, const uint32_t *in, size_t n, uint16_t *out) {
    unsigned fl = 0;
    for (size_t i = 0; i < n; i++) {
        fpemu_ctx e = *t;
        e.flags = 0;
        out[i] = (uint16_t)fpemu_convert(f, F32, in[i], &e);
        fl |= e.flags;
    }
    return fl;
}

static long check_window(const fpemu_format *f, const fpemu_ctx *t, const uint32_t *in, size_t n, const char *what, int *shown) {
    static uint16_t want[(1 << 16) + 64], got[(1 << 16) + 64 + 2];
    unsigned wf = ref_window(f, t, in, n, want) | t->flags;
    fpemu_ctx c = *t;
    got[n] = got[n + 1] = 0xA5A5;
    fpemu_encode_f32(f, got, (const float *)(const void *)in, n, &c, NULL);
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ < 3 && (*shown)++ < 8)
            diag("%s %s: f32 %08X (element %zu of %zu) -> %04X, scalar %04X", f->name, what, in[i], i, n, got[i], want[i]);
    if (got[n] != 0xA5A5 || got[n + 1] != 0xA5A5) {
        bad++;
        if ((*shown)++ < 8) diag("%s %s: wrote past element %zu", f->name, what, n);
    }
    if (c.flags != wf) {
        bad++;
        if ((*shown)++ < 8)
            diag("%s %s: %zu elements from %08X: flags %02X, scalar %02X", f->name, what, n, n ? in[0] : 0, c.flags, wf);
    }
    return bad;
}

static const struct { const char *name; fpemu_nan_policy nan; unsigned flags; } ctxs[] = {
    {"rne", FPEMU_NAN_CANONICAL, 0},
    {"rne nan=x86", FPEMU_NAN_X86, 0},
    {"rne nan=cuda", FPEMU_NAN_CUDA, 0},
    {"rne, inexact already raised", FPEMU_NAN_CANONICAL, FPEMU_FLAG_INEXACT},
    {"rne, overflow already raised", FPEMU_NAN_CANONICAL, FPEMU_FLAG_OVERFLOW},
};

int main(void) {
    uint64_t seed = tap_seed(32);
    F32 = fpemu_format_get("f32", NULL, 0);
    static const char *names[] = {"f16", "bf16"};
    int any = 0;
    for (int fi = 0; fi < 2; fi++) {
        const fpemu_format *f = fpemu_format_get(names[fi], NULL, 0);
        emu__cast_isa(99);
        int kind = emu__hwconv_kind(f);
#if defined(__x86_64__) && defined(__GNUC__)
        /* a CPU with F16C and AVX-512 (F, BW, VL) must get the 16-lane f16
         * converter: a self-test that refuses it is a failure here, not a skip */
        if (fi == 0 && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
            is_int(kind, 2, "f16: the 16-lane converter passes its self-test on this CPU");
#endif
        if (!kind) {
            ok(1, "# SKIP %s: no hardware converter used on this CPU (or its self-test refused it)", f->name);
            continue;
        }
        any = 1;
        long bad = 0, cases = 0;
        int shown = 0;
        enum { N = 1 << 16 };
        static uint32_t in[N + 64];
        /* the stride sample: every 1021st pattern, from a seeded start */
        uint64_t stride = 1021, base = seed % stride;
        int chunk = 0;
        for (uint64_t s0 = base; s0 < (UINT64_C(1) << 32); s0 += (uint64_t)N * stride, chunk++) {
            size_t off = (size_t)chunk % 16, n = N - (size_t)chunk % 13;
            for (size_t i = 0; i < n; i++) in[off + i] = (uint32_t)(s0 + i * stride);
            fpemu_ctx t;
            fpemu_ctx_init(&t);
            int k = chunk % (int)(sizeof ctxs / sizeof ctxs[0]);
            t.nan_policy = ctxs[k].nan, t.flags = ctxs[k].flags;
            bad += check_window(f, &t, in + off, n, ctxs[k].name, &shown);
            cases += (long)n;
        }
        ok(bad == 0, "%s (converter kind %d): encode_f32 equals the scalar conversion on %ld f32 patterns (every %llu-th, "
           "windows of 2^16; codes and flags; %ld differ)", f->name, kind, cases, (unsigned long long)stride, bad);
        /* borders and specials, each alone among fillers at several lanes */
        static const uint32_t probes[] = {0, 0x80000000u, 1, 0x7FFFFF, 0x400000, 0x800000, 0x7F7FFFFF, 0x7F800000,
                                          0x7FC00000, 0x7F800001, 0x7FA00000, 0x7FFFFFFF, 0x3F801000, 0x3F808000,
                                          0x3F818000, 0x477FE000, 0x477FF000, 0x477FEFFF, 0x477FF001, 0x47800000,
                                          0x38800000, 0x387FF000, 0x387FE000, 0x387FFFFF, 0x33800000, 0x33000000,
                                          0x33000001, 0x32FFFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x7F7F0000, 0x00808000,
                                          0x007F8000, 0x00008000, 0x0000C000, 0x387FC000, 0x38802000, 0x00000080};
        long pbad = 0, pcases = 0;
        const uint32_t fill[] = {0x3F800000u, 0x00000000u, 0x3FC00001u};
        for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++)
            for (int sg = 0; sg < 2; sg++)
                for (int d = -1; d <= 1; d++)
                    for (int j = 0; j < 3; j++)
                        for (size_t k = 0; k < sizeof ctxs / sizeof ctxs[0]; k++) {
                            uint32_t v = (probes[p] + (uint32_t)d) ^ (sg ? 0x80000000u : 0);
                            size_t lens[] = {1, 17, 1500}, pos = (p * 7 + (size_t)j * 5 + k) % 17;
                            for (int l = 0; l < 3; l++) {
                                size_t n = lens[l], at = pos < n ? pos : n - 1;
                                for (size_t i = 0; i < n; i++) in[i] = fill[j];
                                in[at] = v;
                                fpemu_ctx t;
                                fpemu_ctx_init(&t);
                                t.nan_policy = ctxs[k].nan, t.flags = ctxs[k].flags;
                                pbad += check_window(f, &t, in, n, ctxs[k].name, &shown);
                                pcases++;
                            }
                        }
        ok(pbad == 0, "%s: every border and special pattern alone among fillers (%ld windows in %d contexts; %ld differ)",
           f->name, pcases, (int)(sizeof ctxs / sizeof ctxs[0]), pbad);
        /* the same arrays with the converters off take the bit-exact kernels: the same bits */
        {
            static uint16_t a[N], b[N];
            for (size_t i = 0; i < N; i++) in[i] = (uint32_t)fpemu_random64(seed, i);
            fpemu_ctx x, y;
            fpemu_ctx_init(&x);
            fpemu_ctx_init(&y);
            fpemu_encode_f32(f, a, (const float *)(const void *)in, N, &x, NULL);
            emu__hwconv(0);
            int off = emu__hwconv_kind(f) == 0;
            fpemu_encode_f32(f, b, (const float *)(const void *)in, N, &y, NULL);
            emu__hwconv(1);
            ok(off && !memcmp(a, b, sizeof a) && x.flags == y.flags,
               "%s: converters on and off give the same codes and flags on 2^16 random patterns", f->name);
        }
#if defined(__x86_64__) && defined(__GNUC__)
        {
            /* the caller's MXCSR: rtz, FTZ and DAZ on, some flags raised; the converters on and off */
            unsigned mine = _mm_getcsr();
            unsigned set = (mine & ~0xE07Fu) | 0x1F80u | 0x6000u | 0x8000u | 0x0040u | 0x21u; /* masked, rtz, FTZ, DAZ, PE, IE */
            for (size_t i = 0; i < 4096; i++) in[i] = (uint32_t)fpemu_random64(seed + 1, i);
            static uint16_t a[2][4096];
            unsigned fl[2], after[2];
            for (int k = 0; k < 2; k++) {
                emu__hwconv(k == 0);
                fpemu_ctx x;
                fpemu_ctx_init(&x);
                _mm_setcsr(set);
                fpemu_encode_f32(f, a[k], (const float *)(const void *)in, 4096, &x, NULL);
                after[k] = _mm_getcsr();
                _mm_setcsr(mine);
                fl[k] = x.flags;
            }
            emu__hwconv(1);
            /* control bits as they were, the caller's flags still raised (the library's own arithmetic may raise
             * host flags, converters or not) */
            int same = (after[0] & ~0x3Fu) == (set & ~0x3Fu) && (after[0] & set & 0x3Fu) == (set & 0x3Fu);
            ok(same && !memcmp(a[0], a[1], sizeof a[0]) && fl[0] == fl[1],
               "%s: under the caller's MXCSR (rtz, FTZ, DAZ, flags %02X) the converters give what the bit-exact path "
               "gives, and MXCSR's control bits and raised flags come back (%04X, was %04X)", f->name, set & 0x3F,
               after[0], set);
        }
#endif
    }
    if (!any) diag("no hardware converter on this CPU: nothing compared");
    return done_testing();
}
