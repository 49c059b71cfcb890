/* SPDX-License-Identifier: MIT */
/* t_ref.c: the MPFR reference on hand-worked cases (docs/semantics.md):
 * every expected result and flag set below was derived by hand from the
 * specification, not taken from emu/ or from ref/ itself. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ref.h"
#include "tap.h"

enum { IX = FPEMU_FLAG_INEXACT, UF = FPEMU_FLAG_UNDERFLOW, OF = FPEMU_FLAG_OVERFLOW,
       DZ = FPEMU_FLAG_INFINITE, NV = FPEMU_FLAG_INVALID };
enum { SAT = 1, FTZ = 2, DAZ = 4, BEFORE = 8 };

typedef struct {
    const char *fmt, *src; /* src: conversions only */
    ref_opcode op;
    const char *mode;
    int pol;
    uint64_t a, b, c, want;
    unsigned flags;
    const char *why;
} hcase;

static const hcase cases[] = {
    {"f16", 0, REF_ADD, "rne", 0, 0x3C00, 0x3C00, 0, 0x4000, 0, "1 + 1 = 2"},
    /* conversions to e4m3 (OCP 8-bit FP spec rev 1.0; docs/semantics.md) */
    {"e4m3", "f32", REF_CONVERT, "rne", 0, 0x43E80000, 0, 0, 0x7E, IX, "464 is the 448/480 midpoint: even 448"},
    {"e4m3", "f32", REF_CONVERT, "rna", 0, 0x43E80000, 0, 0, 0x7F, OF | IX, "464 rna: away, past max: NaN"},
    {"e4m3", "f32", REF_CONVERT, "rne", 0, 0x43F00000, 0, 0, 0x7F, OF | IX, "480 overflows to NaN"},
    {"e4m3", "f32", REF_CONVERT, "rne", SAT, 0x43F00000, 0, 0, 0x7E, OF | IX, "480 sat: 448"},
    {"e4m3", "f32", REF_CONVERT, "rne", 0, 0x7F800000, 0, 0, 0x7F, NV, "+inf: NaN, invalid"},
    {"e4m3", "f32", REF_CONVERT, "rne", SAT, 0x7F800000, 0, 0, 0x7E, OF | IX, "+inf sat: 448"},
    {"e4m3", "f32", REF_CONVERT, "rne", 0, 0x3A800000, 0, 0, 0x00, UF | IX, "2^-10: half the min subnormal, to even 0"},
    {"e4m3", "f32", REF_CONVERT, "rna", 0, 0x3A800000, 0, 0, 0x01, UF | IX, "2^-10 rna: away, 2^-9"},
    {"e4m3", "f32", REF_CONVERT, "rto", 0, 0x3A800000, 0, 0, 0x01, UF | IX, "2^-10 rto: odd 2^-9"},
    {"e4m3", "f32", REF_CONVERT, "rtz", 0, 0x3A800000, 0, 0, 0x00, UF | IX, "2^-10 rtz: 0"},
    {"e4m3", "f32", REF_CONVERT, "rup", 0, 0x3A800000, 0, 0, 0x01, UF | IX, "2^-10 rup: 2^-9"},
    {"e4m3", "f32", REF_CONVERT, "rdn", 0, 0xBA800000, 0, 0, 0x81, UF | IX, "-2^-10 rdn: -2^-9"},
    {"e4m3", "f32", REF_CONVERT, "rup", 0, 0xBA800000, 0, 0, 0x80, UF | IX, "-2^-10 rup: -0"},
    {"e4m3", "f32", REF_CONVERT, "rne", FTZ, 0x3B000000, 0, 0, 0x00, UF | IX, "2^-9 is subnormal in e4m3: ftz flushes"},
    {"e4m3", "f32", REF_CONVERT, "rne", 0, 0x3B000000, 0, 0, 0x01, 0, "2^-9 exact subnormal: no flag"},
    /* overflow in each mode */
    {"e4m3", 0, REF_ADD, "rne", 0, 0x7E, 0x7E, 0, 0x7F, OF | IX, "448 + 448: NaN"},
    {"e4m3", 0, REF_ADD, "rtz", 0, 0x7E, 0x7E, 0, 0x7E, OF | IX, "448 + 448 rtz: 448"},
    {"e4m3", 0, REF_ADD, "rne", SAT, 0x7E, 0x7E, 0, 0x7E, OF | IX, "448 + 448 sat: 448"},
    {"e5m2", 0, REF_ADD, "rne", 0, 0x7B, 0x7B, 0, 0x7C, OF | IX, "57344 * 2: inf"},
    {"e5m2", 0, REF_ADD, "rdn", 0, 0x7B, 0x7B, 0, 0x7B, OF | IX, "rdn, positive: max"},
    {"e5m2", 0, REF_ADD, "rup", 0, 0xFB, 0xFB, 0, 0xFB, OF | IX, "rup, negative: -max"},
    {"e5m2", 0, REF_ADD, "rdn", 0, 0xFB, 0xFB, 0, 0xFC, OF | IX, "rdn, negative: -inf"},
    {"e5m2", 0, REF_ADD, "rto", 0, 0x7B, 0x7B, 0, 0x7B, OF | IX, "rto: max"},
    {"binary8p3e", 0, REF_ADD, "rne", 0, 0x7E, 0x7E, 0, 0x7F, OF | IX, "P3109 p3 extended: 49152 * 2 -> inf 0x7F"},
    {"binary8p3f", 0, REF_ADD, "rne", 0, 0x7F, 0x7F, 0, 0x80, OF | IX, "P3109 p3 finite: 57344 * 2 -> NaN 0x80"},
    {"e2m1", 0, REF_ADD, "rne", 0, 0x07, 0x07, 0, 0x07, OF | IX, "e2m1 6 + 6: no inf, no NaN: 6"},
    /* exact infinities, invalid operations */
    {"f16", 0, REF_DIV, "rne", 0, 0x3C00, 0x0000, 0, 0x7C00, DZ, "1/0 = inf"},
    {"f16", 0, REF_DIV, "rne", 0, 0x3C00, 0x8000, 0, 0xFC00, DZ, "1/-0 = -inf"},
    {"f16", 0, REF_DIV, "rne", SAT, 0x3C00, 0x0000, 0, 0x7BFF, DZ | OF | IX, "1/0 sat: max"},
    {"f16", 0, REF_ADD, "rne", SAT, 0x7C00, 0x3C00, 0, 0x7BFF, OF | IX, "inf + 1 sat: max"},
    {"e4m3", 0, REF_DIV, "rne", 0, 0x38, 0x00, 0, 0x7F, DZ | NV, "e4m3 1/0: no inf: NaN, invalid"},
    {"e4m3", 0, REF_DIV, "rne", SAT, 0x38, 0x00, 0, 0x7E, DZ | OF | IX, "e4m3 1/0 sat: 448"},
    {"f16", 0, REF_DIV, "rne", 0, 0x0000, 0x0000, 0, 0x7E00, NV, "0/0"},
    {"f16", 0, REF_SUB, "rne", 0, 0x7C00, 0x7C00, 0, 0x7E00, NV, "inf - inf"},
    {"f16", 0, REF_MUL, "rne", 0, 0x0000, 0xFC00, 0, 0x7E00, NV, "0 * -inf"},
    {"f16", 0, REF_SQRT, "rne", 0, 0xBC00, 0, 0, 0x7E00, NV, "sqrt(-1)"},
    {"f16", 0, REF_SQRT, "rne", 0, 0x8000, 0, 0, 0x8000, 0, "sqrt(-0) = -0"},
    {"f16", 0, REF_FMA, "rne", 0, 0x0000, 0x7C00, 0x7E00, 0x7E00, NV, "fma(0, inf, qNaN) is invalid"},
    {"f16", 0, REF_FMA, "rne", 0, 0x3C00, 0x7C00, 0xFC00, 0x7E00, NV, "fma(1, inf, -inf)"},
    {"f16", 0, REF_ADD, "rne", 0, 0x7D00, 0x3C00, 0, 0x7E00, NV, "sNaN operand"},
    {"f16", 0, REF_ADD, "rne", 0, 0x7F00, 0x3C00, 0, 0x7E00, 0, "qNaN operand: no flag"},
    {"f32", "f16", REF_CONVERT, "rne", 0, 0x7D00, 0, 0, 0x7FC00000, NV, "sNaN converted: invalid"},
    {"e2m1", 0, REF_DIV, "rne", 0, 0x00, 0x00, 0, 0x07, NV, "e2m1 0/0: no NaN: +max, invalid"},
    {"e2m1", "f32", REF_CONVERT, "rne", 0, 0x7FC00000, 0, 0, 0x07, NV, "NaN to e2m1: +max, invalid"},
    {"e2m1", "f32", REF_CONVERT, "rne", 0, 0xFF800000, 0, 0, 0x0F, OF | IX, "-inf to e2m1: -max"},
    /* zero signs */
    {"f16", 0, REF_SUB, "rne", 0, 0x3C00, 0x3C00, 0, 0x0000, 0, "x - x = +0"},
    {"f16", 0, REF_SUB, "rdn", 0, 0x3C00, 0x3C00, 0, 0x8000, 0, "x - x = -0 in rdn"},
    {"f16", 0, REF_MUL, "rne", 0, 0x8000, 0x3C00, 0, 0x8000, 0, "-0 * 1 = -0"},
    {"e4m3fnuz", 0, REF_SUB, "rdn", 0, 0x40, 0x40, 0, 0x00, 0, "fnuz: no -0"},
    {"e4m3fnuz", 0, REF_MUL, "rne", 0, 0x01, 0x81, 0, 0x00, UF | IX, "fnuz: -tiny rounds to +0"},
    /* rounding: ties and odd */
    {"f16", 0, REF_ADD, "rne", 0, 0x3C00, 0x1000, 0, 0x3C00, IX, "1 + 2^-11: tie, even"},
    {"f16", 0, REF_ADD, "rna", 0, 0x3C00, 0x1000, 0, 0x3C01, IX, "1 + 2^-11: tie, away"},
    {"f16", 0, REF_ADD, "rto", 0, 0x3C00, 0x1000, 0, 0x3C01, IX, "1 + 2^-11: odd"},
    {"f16", 0, REF_ADD, "rto", 0, 0x3C01, 0x1000, 0, 0x3C01, IX, "1 + 2^-10 + 2^-11: odd is the lower"},
    {"f16", 0, REF_ADD, "rne", 0, 0x3C01, 0x1000, 0, 0x3C02, IX, "1 + 2^-10 + 2^-11: tie, even up"},
    {"tf32", 0, REF_ADD, "rne", 0, 0x3F800000, 0x3A000000, 0, 0x3F800000, IX, "tf32 1 + 2^-11: tie, even"},
    {"tf32", 0, REF_ADD, "rna", 0, 0x3F800000, 0x3A000000, 0, 0x3F802000, IX, "tf32 1 + 2^-11: away"},
    {"tf32", 0, REF_ADD, "rne", 0, 0x3F801FFF, 0x00000000, 0, 0x3F800000, 0, "tf32 ignores the low 13 bits"},
    {"f16", 0, REF_FMA, "rne", 0, 0x3C01, 0x3C01, 0xBC00, 0x1800, IX, "fma(1+u, 1+u, -1) = 2u + u^2: tie, even 2u"},
    {"f16", 0, REF_FMA, "rne", 0, 0x3C01, 0x3BFE, 0xBC00, 0x8010, 0, "fma(1+u, 1-u, -1) = -u^2, exact subnormal"},
    /* tininess: (1 - 2^-6)(1 + 2^-6) 2^-14 = 2^-14 - 2^-26 */
    {"f16", 0, REF_MUL, "rne", 0, 0x3BE0, 0x0410, 0, 0x0400, IX, "rounds to min normal: not tiny after rounding"},
    {"f16", 0, REF_MUL, "rne", BEFORE, 0x3BE0, 0x0410, 0, 0x0400, UF | IX, "tiny before rounding"},
    {"f16", 0, REF_MUL, "rne", BEFORE | FTZ, 0x3BE0, 0x0410, 0, 0x0000, UF | IX, "ftz with tininess before"},
    {"f16", 0, REF_MUL, "rne", FTZ, 0x3BE0, 0x0410, 0, 0x0400, IX, "ftz with tininess after: min normal"},
    {"f16", 0, REF_MUL, "rtz", 0, 0x3BE0, 0x0410, 0, 0x03FF, UF | IX, "rtz: max subnormal"},
    {"f16", 0, REF_MUL, "rne", 0, 0x0200, 0x3800, 0, 0x0100, 0, "exact subnormal product: no flag"},
    {"f16", 0, REF_MUL, "rne", 0, 0x0001, 0x3800, 0, 0x0000, UF | IX, "2^-25: tie, even 0"},
    {"f16", 0, REF_MUL, "rne", 0, 0x0003, 0x3800, 0, 0x0002, UF | IX, "1.5 * 2^-24: tie, even 2^-23"},
    {"f16", 0, REF_ADD, "rne", DAZ, 0x0001, 0x0001, 0, 0x0000, 0, "daz: subnormals read as 0"},
    {"f16", 0, REF_ADD, "rne", 0, 0x0001, 0x0001, 0, 0x0002, 0, "no daz: exact"},
    /* e8m0: unsigned, no zero, precision 1 */
    {"e8m0", "f32", REF_CONVERT, "rne", 0, 0x00000000, 0, 0, 0xFF, NV, "0 -> NaN, invalid"},
    {"e8m0", "f32", REF_CONVERT, "rne", 0, 0xBF800000, 0, 0, 0xFF, NV, "-1 -> NaN, invalid"},
    {"e8m0", "f32", REF_CONVERT, "rne", 0, 0x7F800000, 0, 0, 0xFF, NV, "+inf -> NaN, invalid"},
    {"e8m0", "f32", REF_CONVERT, "rne", SAT, 0x7F800000, 0, 0, 0xFE, OF | IX, "+inf sat -> 2^127"},
    {"e8m0", "f32", REF_CONVERT, "rne", 0, 0x3FC00000, 0, 0, 0x80, IX, "1.5: tie, to 2"},
    {"e8m0", "f32", REF_CONVERT, "rtz", 0, 0x3FC00000, 0, 0, 0x7F, IX, "1.5 rtz: 1"},
    {"e8m0", "f32", REF_CONVERT, "rne", 0, 0x3FB00000, 0, 0, 0x7F, IX, "1.375: 1"},
    {"e8m0", "f32", REF_CONVERT, "rne", 0, 0x00200000, 0, 0, 0x00, UF | IX, "2^-129: below 2^-127 -> 0x00"},
    {"e8m0", "f32", REF_CONVERT, "rne", 0, 0x00300000, 0, 0, 0x00, IX, "1.5 * 2^-128 rounds to 2^-127: not tiny after"},
    {"e8m0", "f32", REF_CONVERT, "rne", BEFORE, 0x00300000, 0, 0, 0x00, UF | IX, "same, tiny before rounding"},
    {"e8m0", 0, REF_SUB, "rne", 0, 0x7F, 0x7F, 0, 0xFF, NV, "1 - 1 = 0: NaN, invalid"},
    {"e8m0", 0, REF_MUL, "rne", 0, 0x7F, 0x80, 0, 0x80, 0, "1 * 2 = 2"},
    {"e8m0", 0, REF_MUL, "rne", 0, 0xFE, 0x80, 0, 0xFF, OF | IX, "2^127 * 2: overflow, NaN"},
    /* widening conversions are exact */
    {"f32", "f16", REF_CONVERT, "rne", 0, 0x3C00, 0, 0, 0x3F800000, 0, "f16 1 -> f32"},
    {"f32", "f16", REF_CONVERT, "rne", 0, 0x8001, 0, 0, 0xB3800000, 0, "f16 -2^-24 -> f32"},
    {"f64", "e8m0", REF_CONVERT, "rne", 0, 0x00, 0, 0, 0x3800000000000000ull, 0, "e8m0 2^-127 -> f64"},
    {"f32", "f64", REF_CONVERT, "rne", 0, 0x3690000000000000ull, 0, 0, 0x00000000, UF | IX, "f64 2^-150: tie, even +0"},
    {"f32", "f64", REF_CONVERT, "rne", 0, 0x3698000000000000ull, 0, 0, 0x00000001, UF | IX, "0.75 * 2^-149 -> min subnormal"},
    {"f32", "f64", REF_CONVERT, "rne", 0, 0x36A8000000000000ull, 0, 0, 0x00000002, UF | IX, "1.5 * 2^-149: tie, even 2^-148"},
};

/* The format table of docs/formats.md (IEEE 754-2019, the OCP 8-bit FP and
 * MX specifications, the P3109 interim report). The reference takes p,
 * emin, emax and maxmant from the descriptor, so check them against the
 * table here, through the reference's own decoder. */
typedef struct { const char *fmt; double max, min_normal, min_sub; } range_row;
static const range_row ranges[] = {
    {"f64", 0x1.fffffffffffffp+1023, 0x1p-1022, 0x1p-1074},
    {"f32", 0x1.fffffep+127, 0x1p-126, 0x1p-149},
    {"tf32", 0x1.ffcp+127, 0x1p-126, 0x1p-136},
    {"f16", 65504, 0x1p-14, 0x1p-24},
    {"bf16", 0x1.fep+127, 0x1p-126, 0x1p-133},
    {"e5m2", 57344, 0x1p-14, 0x1p-16},
    {"e4m3", 448, 0x1p-6, 0x1p-9},
    {"e4m3fnuz", 240, 0x1p-7, 0x1p-10},
    {"e5m2fnuz", 57344, 0x1p-15, 0x1p-17},
    {"e3m2", 28, 0x1p-2, 0x1p-4},
    {"e2m3", 7.5, 1, 0x1p-3},
    {"e2m1", 6, 1, 0.5},
    {"e8m0", 0x1p127, 0x1p-127, 0},
    {"binary8p4e", 224, 0x1p-7, 0x1p-10},
    {"binary8p4f", 240, 0x1p-7, 0x1p-10},
    {"binary8p3e", 49152, 0x1p-15, 0x1p-17},
    {"binary8p3f", 57344, 0x1p-15, 0x1p-17},
    {"binary8p1e", 0x1p62, 0x1p-63, 0},
    {"binary8p1f", 0x1p63, 0x1p-63, 0},
};

static void check_ranges(void) {
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        const range_row *w = &ranges[i];
        const fpemu_format *f = fpemu_format_get(w->fmt, NULL, 0);
        ref_format rf;
        if (!f || ref_format_init(&rf, f)) { ok(0, "%s: not in the registry", w->fmt); continue; }
        double mx = ref_to_double(&rf, rf.code_max);
        double mn = ref_to_double(&rf, (uint64_t)(rf.emin + rf.bias) << rf.mbits << rf.pad);
        double ms = rf.has_zero && rf.mbits ? ref_to_double(&rf, UINT64_C(1) << rf.pad) : 0;
        /* the code after max is inf or NaN (or does not exist) */
        ref_value nx;
        ref_decode(&rf, rf.code_max + (UINT64_C(1) << rf.pad), 0, &nx);
        int top = rf.code_max + (UINT64_C(1) << rf.pad) > (((rf.sign ? rf.sign : UINT64_C(1) << rf.bits)) - 1) << rf.pad ||
                  nx.cls == REF_INF || nx.cls == REF_QNAN || nx.cls == REF_SNAN;
        ok(mx == w->max && mn == w->min_normal && ms == w->min_sub && top && mn == ldexp(1, rf.emin),
           "%s: max %g, min normal %g, min subnormal %g (docs/formats.md)", w->fmt, mx, mn, ms);
    }
}

/* sr with the caller's draw (docs/semantics.md: up in magnitude iff the
 * draw's top R bits are below frac x 2^R), worked by hand: the result and
 * flags, whether a draw is taken (exact result finite and nonzero), and the
 * decisions with their last rounding-up top bits (T - 1, T = ceil(frac x
 * 2^R)); 0 where none. */
typedef struct {
    const char *fmt, *src;
    ref_opcode op;
    int pol, R;
    uint64_t draw, a, b, want;
    unsigned flags;
    int took, ndec;
    uint64_t lastup0, lastup1;
    const char *why;
} srcase;
#define D(x) UINT64_C(x)
static const srcase srcases[] = {
    /* e4m3 1 + 2^-5: ulp 2^-3 at 1, frac 1/4 */
    {"e4m3", 0, REF_ADD, 0, 64, D(0x3FFFFFFFFFFFFFFF), 0x38, 0x10, 0x39, IX, 1, 1, D(0x3FFFFFFFFFFFFFFF), 0, "1 + 1/32, frac 1/4: r = 2^62 - 1 goes up"},
    {"e4m3", 0, REF_ADD, 0, 64, D(0x4000000000000000), 0x38, 0x10, 0x38, IX, 1, 1, D(0x3FFFFFFFFFFFFFFF), 0, "r = 2^62 stays"},
    {"e4m3", 0, REF_ADD, 0, 1, D(0x7FFFFFFFFFFFFFFF), 0x38, 0x10, 0x39, IX, 1, 1, 0, 0, "R = 1: T = ceil(1/2) = 1, top bit 0 goes up"},
    {"e4m3", 0, REF_ADD, 0, 1, D(0x8000000000000000), 0x38, 0x10, 0x38, IX, 1, 1, 0, 0, "R = 1: top bit 1 stays"},
    {"e4m3", 0, REF_ADD, 0, 2, D(0x4000000000000000), 0x38, 0x10, 0x38, IX, 1, 1, 0, 0, "R = 2: T = 1, r = 1 stays"},
    {"e4m3", 0, REF_ADD, 0, 64, 0, 0xB8, 0x90, 0xB9, IX, 1, 1, D(0x3FFFFFFFFFFFFFFF), 0, "-1 - 1/32: up in magnitude, away from zero"},
    {"e4m3", 0, REF_ADD, 0, 64, 0, 0x38, 0x38, 0x40, 0, 1, 0, 0, 0, "1 + 1 = 2 exactly: a draw, no decision"},
    {"e4m3", 0, REF_ADD, 0, 64, 0, 0x38, 0xB8, 0x00, 0, 0, 0, 0, 0, "1 - 1 = +0: no draw"},
    /* subnormal results: e4m3 quantum 2^-9 below 2^-6 */
    {"e4m3", 0, REF_MUL, 0, 64, D(0x7FFFFFFFFFFFFFFF), 0x01, 0x30, 0x01, UF | IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "2^-9 x 1/2: frac 1/2 on the subnormal grid, up"},
    {"e4m3", 0, REF_MUL, 0, 64, D(0x8000000000000000), 0x01, 0x30, 0x00, UF | IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "2^-9 x 1/2: down to +0"},
    {"e4m3", 0, REF_MUL, FTZ, 64, D(0x7FFFFFFFFFFFFFFF), 0x01, 0x30, 0x00, UF | IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "ftz flushes the tiny result"},
    /* 3 x 2^-9 x 1.875 = 1.40625 x 2^-7: frac 1/4 unbounded, 5.625 x 2^-9 on the grid: frac 5/8; one draw decides both */
    {"e4m3", 0, REF_MUL, 0, 64, D(0x5000000000000000), 0x03, 0x3F, 0x06, UF | IX, 1, 2, D(0x3FFFFFFFFFFFFFFF), D(0x9FFFFFFFFFFFFFFF), "down unbounded, up (6 x 2^-9) on the grid"},
    /* 7 x 2^-9 x 1.125 = 7.875 x 2^-9 = 1.96875 x 2^-7: frac 3/4 unbounded (up reaches 2^-6), 7/8 on the grid */
    {"e4m3", 0, REF_MUL, 0, 64, 0, 0x07, 0x39, 0x08, IX, 1, 2, D(0xBFFFFFFFFFFFFFFF), D(0xDFFFFFFFFFFFFFFF), "up to the min normal: not tiny after rounding"},
    {"e4m3", 0, REF_MUL, BEFORE, 64, 0, 0x07, 0x39, 0x08, UF | IX, 1, 2, D(0xBFFFFFFFFFFFFFFF), D(0xDFFFFFFFFFFFFFFF), "tiny before rounding"},
    {"e4m3", 0, REF_MUL, 0, 64, D(0xD000000000000000), 0x07, 0x39, 0x08, UF | IX, 1, 2, D(0xBFFFFFFFFFFFFFFF), D(0xDFFFFFFFFFFFFFFF), "down unbounded (tiny), up on the grid: min normal with underflow"},
    {"e4m3", 0, REF_MUL, 0, 64, D(0xE000000000000000), 0x07, 0x39, 0x07, UF | IX, 1, 2, D(0xBFFFFFFFFFFFFFFF), D(0xDFFFFFFFFFFFFFFF), "down both"},
    /* overflow: 448 + 16 = 464, ulp 32, frac 1/2 */
    {"e4m3", 0, REF_ADD, 0, 64, D(0x7FFFFFFFFFFFFFFF), 0x7E, 0x58, 0x7F, OF | IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "448 + 16 up to 480: overflow, NaN"},
    {"e4m3", 0, REF_ADD, SAT, 64, D(0x7FFFFFFFFFFFFFFF), 0x7E, 0x58, 0x7E, OF | IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "sat: 448"},
    {"e4m3", 0, REF_ADD, 0, 64, D(0x8000000000000000), 0x7E, 0x58, 0x7E, IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "down: 448, no overflow"},
    /* irrational and periodic fractions */
    {"f16", 0, REF_DIV, 0, 64, D(0x5555555555555555), 0x3C00, 0x4200, 0x3556, IX, 1, 1, D(0x5555555555555555), 0, "1/3: frac 1/3, T = ceil(2^64 / 3)"},
    {"f16", 0, REF_DIV, 0, 64, D(0x5555555555555556), 0x3C00, 0x4200, 0x3555, IX, 1, 1, D(0x5555555555555555), 0, "1/3: r = T stays"},
    {"f16", 0, REF_DIV, 0, 8, D(0x55FFFFFFFFFFFFFF), 0x3C00, 0x4200, 0x3556, IX, 1, 1, 0x55, 0, "1/3, R = 8: T = 86"},
    {"f16", 0, REF_SQRT, 0, 8, D(0x27FFFFFFFFFFFFFF), 0x4000, 0, 0x3DA9, IX, 1, 1, 0x27, 0, "sqrt 2: frac x 256 = 39.6, T = 40"},
    {"f16", 0, REF_SQRT, 0, 8, D(0x2800000000000000), 0x4000, 0, 0x3DA8, IX, 1, 1, 0x27, 0, "sqrt 2, R = 8: r = 40 stays"},
    /* conversions */
    {"bf16", "f32", REF_CONVERT, 0, 64, D(0x7FFFFFFFFFFFFFFF), 0x3F808000, 0, 0x3F81, IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "f32 1 + 2^-8 to bf16: frac 1/2"},
    {"e8m0", "f32", REF_CONVERT, 0, 64, 0, 0xC0000000, 0, 0xFF, NV, 1, 0, 0, 0, "-2 to e8m0: NaN, invalid, and a draw taken"},
    {"e8m0", "f32", REF_CONVERT, 0, 64, 0, 0x00000000, 0, 0xFF, NV, 0, 0, 0, 0, "0 to e8m0: NaN, no draw"},
    {"e8m0", "f32", REF_CONVERT, 0, 64, 0, 0xC0400000, 0, 0xFF, NV, 1, 0, 0, 0, "-3 to e8m0: NaN whatever the draw, so no decision"},
    {"e8m0", "f32", REF_CONVERT, 0, 64, 0, 0x00300000, 0, 0x00, IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "1.5 x 2^-128 to e8m0: up to 2^-127; no subnormal grid, one decision"},
    {"e8m0", "f32", REF_CONVERT, 0, 64, D(0x8000000000000000), 0x00300000, 0, 0x00, UF | IX, 1, 1, D(0x7FFFFFFFFFFFFFFF), 0, "down: tiny, 2^-127 stands in"},
};
#undef D

static void check_sr(ref_ctx *r) {
    for (size_t i = 0; i < sizeof srcases / sizeof srcases[0]; i++) {
        const srcase *c = &srcases[i];
        const fpemu_format *f = fpemu_format_get(c->fmt, NULL, 0);
        const fpemu_format *s = c->src ? fpemu_format_get(c->src, NULL, 0) : f;
        if (!f || !s) bail("unknown format in sr case %zu", i);
        r->round = FPEMU_SR;
        r->sat = !!(c->pol & SAT), r->ftz = !!(c->pol & FTZ), r->daz = !!(c->pol & DAZ);
        r->tininess_before = !!(c->pol & BEFORE);
        r->sr_bits = c->R, r->sr_draw = c->draw;
        uint64_t x[3] = {c->a, c->b, 0};
        unsigned fl;
        uint64_t got = ref_op(r, f, c->op, x, s, &fl);
        int dec = r->sr_ndec == c->ndec && (c->ndec < 1 || r->sr_lastup[0] == c->lastup0) &&
                  (c->ndec < 2 || r->sr_lastup[1] == c->lastup1);
        ok(got == c->want && fl == c->flags && r->sr_took == c->took && dec,
           "sr %s %s R=%d: %s (got %llX %02X, draw %d, %d decisions; want %llX %02X, %d, %d)", c->fmt,
           c->src ? "from f32" : ref_op_name(c->op), c->R, c->why, (unsigned long long)got, fl, r->sr_took,
           r->sr_ndec, (unsigned long long)c->want, c->flags, c->took, c->ndec);
    }
}

int main(void) {
    int n = (int)(sizeof cases / sizeof cases[0]);
    plan(n + 3 + (int)(sizeof ranges / sizeof ranges[0]) + (int)(sizeof srcases / sizeof srcases[0]));
    check_ranges();
    ref_ctx r;
    if (ref_ctx_init(&r) != 0) bail("ref_ctx_init failed");
    for (int i = 0; i < n; i++) {
        const hcase *c = &cases[i];
        const fpemu_format *f = fpemu_format_get(c->fmt, NULL, 0);
        const fpemu_format *s = c->src ? fpemu_format_get(c->src, NULL, 0) : f;
        if (!f || !s) bail("unknown format in case %d", i);
        r.round = (fpemu_round)fpemu_round_parse(c->mode);
        r.sat = !!(c->pol & SAT), r.ftz = !!(c->pol & FTZ), r.daz = !!(c->pol & DAZ);
        r.tininess_before = !!(c->pol & BEFORE);
        uint64_t x[3] = {c->a, c->b, c->c};
        unsigned fl;
        uint64_t got = ref_op(&r, f, c->op, x, s, &fl);
        ok(got == c->want && fl == c->flags, "%s %s%s: %s (got %llX %02X, want %llX %02X)", c->src ? c->src : c->fmt,
           c->src ? "to " : ref_op_name(c->op), c->src ? c->fmt : "", c->why, (unsigned long long)got, fl,
           (unsigned long long)c->want, c->flags);
    }
    check_sr(&r);
    /* the exponent range is restored: other MPFR code in the thread sees MPFR's
     * default-like wide range, and ref_op copes with a range changed behind it */
    mpfr_set_emin(-100);
    r.round = FPEMU_RNE, r.sat = r.ftz = r.daz = r.tininess_before = 0;
    unsigned fl;
    uint64_t got = ref_mul(&r, fpemu_format_get("f16", NULL, 0), 0x0001, 0x3800, &fl);
    ok(got == 0 && fl == (UF | IX), "ref_op resets an exponent range changed behind its back");
    ok(mpfr_get_emin() < -10000, "the wide exponent range is left in place");
    ok(ref_thread_safe(), "MPFR is built thread-safe (exponent range per thread)");
    ref_ctx_clear(&r);
    return done_testing();
}
