/* SPDX-License-Identifier: MIT */
/* t_emu_special.c: special values of every operation and format: signed
 * zeros, infinities, NaNs, boundaries, overflow in every mode, e4m3's
 * 464/480 cases, fnuz's missing -0, flags; the format registry and its
 * validator (bad names must be rejected). Expected values come from
 * docs/formats.md and docs/semantics.md, written out by hand. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"

enum { NX = FPEMU_FLAG_INEXACT, UF = FPEMU_FLAG_UNDERFLOW, OF = FPEMU_FLAG_OVERFLOW, DZ = FPEMU_FLAG_INFINITE,
       NV = FPEMU_FLAG_INVALID };

static const fpemu_format *F(const char *n) {
    const fpemu_format *f = fpemu_format_get(n, NULL, 0);
    if (!f) bail("format %s missing", n);
    return f;
}

static fpemu_ctx ctx_of(fpemu_round r, int sat) {
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    c.round = r;
    c.sat = sat;
    return c;
}

/* f32 value -> fmt, checking code and flags. */
static void conv(const char *fmt, uint32_t x, fpemu_round r, int sat, uint64_t want, unsigned wflags) {
    fpemu_ctx c = ctx_of(r, sat);
    uint64_t got = fpemu_convert(F(fmt), F("f32"), x, &c);
    int good = got == want && c.flags == wflags;
    ok(good, "f32_to_%s %s%s: %08X -> %02llX flags %02X", fmt, fpemu_round_name(r), sat ? " sat" : "", x,
       (unsigned long long)want, wflags);
    if (!good) diag("   got %02llX flags %02X", (unsigned long long)got, c.flags);
}

typedef uint64_t (*binf)(const fpemu_format *, uint64_t, uint64_t, fpemu_ctx *);

static void bin(const char *name, binf fn, const char *fmt, uint64_t a, uint64_t b, fpemu_round r, int sat, uint64_t want,
                unsigned wflags) {
    fpemu_ctx c = ctx_of(r, sat);
    uint64_t got = fn(F(fmt), a, b, &c);
    int good = got == want && c.flags == wflags;
    ok(good, "%s_%s %s%s: %llX %llX -> %llX flags %02X", fmt, name, fpemu_round_name(r), sat ? " sat" : "",
       (unsigned long long)a, (unsigned long long)b, (unsigned long long)want, wflags);
    if (!good) diag("   got %llX flags %02X", (unsigned long long)got, c.flags);
}

int main(void) {
    /* ---- registry and validator ---- */
    int n = fpemu_format_count();
    for (int i = 0; i < n; i++) {
        const fpemu_format *f = fpemu_format_at(i);
        ok(f->p == f->mbits + 1 && f->container >= f->bits && f->max_finite > 0 && f->min_subnormal > 0,
           "registry row %s is complete (p=%d, container=%d, max=%g)", f->name, f->p, f->container, f->max_finite);
    }
    struct { const char *name; double max, minn, mins; } tab[] = {
        {"f16", 65504, 0x1p-14, 0x1p-24},         {"bf16", 0x1.FEp127, 0x1p-126, 0x1p-133},
        {"e5m2", 57344, 0x1p-14, 0x1p-16},        {"e4m3", 448, 0x1p-6, 0x1p-9},
        {"e4m3fnuz", 240, 0x1p-7, 0x1p-10},       {"e5m2fnuz", 57344, 0x1p-15, 0x1p-17},
        {"e3m2", 28, 0x1p-2, 0x1p-4},             {"e2m3", 7.5, 1, 0x1p-3},
        {"e2m1", 6, 1, 0.5},                      {"e8m0", 0x1p127, 0x1p-127, 0x1p-127},
        {"binary8p4e", 224, 0x1p-7, 0x1p-10},     {"binary8p4f", 240, 0x1p-7, 0x1p-10},
        {"binary8p3e", 49152, 0x1p-15, 0x1p-17},  {"binary8p3f", 57344, 0x1p-15, 0x1p-17},
        {"tf32", 0x1.FFCp127, 0x1p-126, 0x1p-136}, {"f32", 0x1.FFFFFEp127, 0x1p-126, 0x1p-149},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        const fpemu_format *f = F(tab[i].name);
        ok(f->max_finite == tab[i].max && f->min_normal == tab[i].minn && f->min_subnormal == tab[i].mins,
           "%s: max %g, min normal %g, min subnormal %g (docs/formats.md table)", tab[i].name, tab[i].max, tab[i].minn, tab[i].mins);
    }
    const char *aliases[][2] = {{"fp16", "f16"}, {"float16", "f16"}, {"binary16", "f16"}, {"bfloat16", "bf16"},
                                {"float8_e4m3fn", "e4m3"}, {"float8_e5m2", "e5m2"}, {"FP32", "f32"},
                                {"float8_e4m3fnuz", "e4m3fnuz"}, {"binary8p4", "binary8p4e"}, {"float4_e2m1fn", "e2m1"}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        ok(F(aliases[i][0]) == F(aliases[i][1]), "alias %s is %s", aliases[i][0], aliases[i][1]);
    const char *bad[] = {"", "f17", "e9m2", "e4m", "em3", "e4m3x", "e4m24", "custom:", "custom:e=4", "custom:e=4,m=3,bogus=1",
                         "custom:e=4,m=3,inf=maybe", "custom:e=40,m=3", "e0m3", "binary8p9", "float8", "bf16 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[200] = "";
        ok(fpemu_format_get(bad[i], err, sizeof err) == NULL && err[0], "bad format name '%s' is rejected (%s)", bad[i], err);
    }
    {
        /* ml_dtypes' float8_e4m3 is IEEE-style (inf, max 240), not OCP's e4m3fn */
        char err[400] = "";
        ok(fpemu_format_get("float8_e4m3", err, sizeof err) == NULL && strstr(err, "ambiguous") &&
               strstr(err, "custom:e=4,m=3,bias=7,inf=ieee,nan=ieee") && strstr(err, "is e4m3"),
           "float8_e4m3 is refused as ambiguous, naming both formats (%s)", err);
        const fpemu_format *ie = fpemu_format_get("custom:e=4,m=3,bias=7,inf=ieee,nan=ieee", NULL, 0);
        ok(ie && ie->max_finite == 240 && ie->inf == FPEMU_INF_IEEE, "the IEEE-style E4M3 (ml_dtypes float8_e4m3): max 240, infinities");
    }
    const fpemu_format *e6m1 = fpemu_format_get("e6m1", NULL, 0);
    ok(e6m1 && e6m1->bits == 8 && e6m1->bias == 31 && e6m1->inf == FPEMU_INF_IEEE, "custom e6m1 is an IEEE-style 8-bit format");
    const fpemu_format *cu = fpemu_format_get("custom:e=4,m=3,bias=7,inf=no,nan=fn", NULL, 0);
    ok(cu && cu->max_finite == 448 && cu->nan == FPEMU_NANS_FN, "custom:e=4,m=3,bias=7,inf=no,nan=fn is e4m3");
    {
        /* one descriptor per custom format, however spelled; another bias is another format */
        const fpemu_format *s1 = fpemu_format_get("E5M10FN", NULL, 0), *s2 = fpemu_format_get("e5m10fn", NULL, 0),
                           *s3 = fpemu_format_get("custom:nan=fn,inf=no,m=10,e=5", NULL, 0),
                           *s4 = fpemu_format_get("custom:e=5,m=10,bias=14,inf=no,nan=fn", NULL, 0);
        ok(s1 && s1 == s2 && s2 == s3 && s4 && s4 != s1 && s4->bias == 14 && s1->bias == 15,
           "custom formats: E5M10FN, e5m10fn and custom:nan=fn,inf=no,m=10,e=5 are one descriptor; bias=14 another");
    }
    {
        /* specs whose NaN and infinity encodings collide, or a signed
         * all-ones NaN (two readings of +-top), are refused */
        char e[256];
        ok(!fpemu_format_get("custom:e=4,m=3,inf=no,nan=allones", e, sizeof e) && strstr(e, "nan=allones") &&
               !fpemu_format_get("custom:e=4,m=3,inf=top,nan=fn", e, sizeof e) && strstr(e, "inf=top") &&
               fpemu_format_get("custom:e=4,m=3,signed=no,inf=no,nan=allones", NULL, 0) &&
               fpemu_format_get("custom:e=4,m=3,inf=top,nan=uz", NULL, 0),
           "nan=allones needs an unsigned format, inf=top refuses nan=fn; unsigned allones and inf=top,nan=uz are fine");
        /* an unsigned format with subnormals has a zero (code 0): exact zeros
         * are zeros, not NaN (only formats without subnormals lack a zero) */
        const char *u = "custom:e=4,m=3,signed=no,inf=no,nan=allones";
        conv(u, 0x00000000, FPEMU_RNE, 0, 0x00, 0);
        conv(u, 0x80000000, FPEMU_RNE, 0, 0x00, 0);
        conv(u, 0x3F800000, FPEMU_RNE, 0, 0x38, 0);
        bin("add", fpemu_add, u, 0x00, 0x00, FPEMU_RNE, 0, 0x00, 0);
        bin("sub", fpemu_sub, u, 0x38, 0x38, FPEMU_RDN, 0, 0x00, 0);
        bin("mul", fpemu_mul, u, 0x00, 0x38, FPEMU_SR, 0, 0x00, 0);
        bin("mul", fpemu_mul, "custom:e=4,m=3,subnormals=no,inf=no,nan=fn", 0x08, 0x08, FPEMU_RNE, 0, 0x00, UF | NX);
    }
    ok(fpemu_format_get("e4m3fnuz", NULL, 0)->has_negzero == 0, "e4m3fnuz has no -0");
    ok(fpemu_round_parse("RNE") == FPEMU_RNE && fpemu_round_parse("-rMinMag") == FPEMU_RTZ && fpemu_round_parse("Sr") == FPEMU_SR &&
           fpemu_round_parse("rnz") == -1 && fpemu_nan_policy_parse("CUDA") == FPEMU_NAN_CUDA && fpemu_qtype_get("INT8") &&
           fpemu_qtype_get("Int4S")->qmin == -7 && !fpemu_qtype_get("int9"),
       "mode, NaN policy and integer type names are case-insensitive, as format names; unknown ones are refused");
    ok(fpemu_format_hex_digits(F("e2m1")) == 2 && fpemu_format_hex_digits(F("tf32")) == 8 &&
       fpemu_format_hex_digits(F("f64")) == 16, "hex widths: e2m1 2, tf32 8, f64 16");

    /* ---- e4m3 conversions (OCP 8-bit FP spec rev 1.0; docs/semantics.md) ---- */
    conv("e4m3", 0x43E80000, FPEMU_RNE, 0, 0x7E, NX);      /* 464 -> 448 (ties to even) */
    conv("e4m3", 0x43E80001, FPEMU_RNE, 0, 0x7F, OF | NX); /* just above 464 -> NaN */
    conv("e4m3", 0x43F00000, FPEMU_RNE, 0, 0x7F, OF | NX); /* 480 -> NaN */
    conv("e4m3", 0x43F00000, FPEMU_RNE, 1, 0x7E, OF | NX); /* 480 -> 448 with sat */
    conv("e4m3", 0x7F800000, FPEMU_RNE, 0, 0x7F, NV);      /* +inf -> NaN */
    conv("e4m3", 0x7F800000, FPEMU_RNE, 1, 0x7E, OF | NX); /* +inf -> 448 with sat */
    conv("e4m3", 0xFF800000, FPEMU_RNE, 1, 0xFE, OF | NX);
    conv("e4m3", 0x3A800000, FPEMU_RNE, 0, 0x00, UF | NX); /* 2^-10 -> 0 (tie to even) */
    conv("e4m3", 0x3AC00000, FPEMU_RNE, 0, 0x01, UF | NX); /* 1.5 * 2^-10 -> 2^-9 */
    conv("e4m3", 0x3B000000, FPEMU_RNE, 0, 0x01, 0);       /* 2^-9 exact subnormal */
    conv("e4m3", 0x43E80000, FPEMU_RTZ, 0, 0x7E, NX);
    conv("e4m3", 0x44000000, FPEMU_RTZ, 0, 0x7E, OF | NX); /* 512: rtz overflow -> max */
    conv("e4m3", 0x44000000, FPEMU_RUP, 0, 0x7F, OF | NX); /* rup -> "inf" -> NaN */
    conv("e4m3", 0xC4000000, FPEMU_RUP, 0, 0xFE, OF | NX); /* negative rup -> -max */
    conv("e4m3", 0xC4000000, FPEMU_RDN, 0, 0x7F, OF | NX); /* negative rdn -> NaN (canonical, positive) */
    conv("e4m3", 0x43E00000, FPEMU_RUP, 0, 0x7E, 0);       /* 448 exact */
    conv("e4m3", 0x43E00001, FPEMU_RUP, 0, 0x7F, OF | NX);
    conv("e4m3", 0x43E00001, FPEMU_RTO, 0, 0x7E, OF | NX); /* rto overflow -> max */
    conv("e4m3", 0x3F880000, FPEMU_RTO, 0, 0x39, NX);      /* 1.0625 -> 1.125 (odd) */
    conv("e4m3", 0x7FC00000, FPEMU_RNE, 1, 0x7F, 0);       /* qNaN stays NaN even with sat */
    conv("e4m3", 0x7F800001, FPEMU_RNE, 0, 0x7F, NV);      /* sNaN -> invalid */
    conv("e4m3", 0x80000000, FPEMU_RNE, 0, 0x80, 0);       /* -0 */
    /* e5m2: overflow threshold 61440 = max + half ulp */
    conv("e5m2", 0x47700000, FPEMU_RNE, 0, 0x7C, OF | NX); /* 61440 tie -> 65536 (even) -> inf */
    conv("e5m2", 0x476FFFFF, FPEMU_RNE, 0, 0x7B, NX);      /* just below: 57344 */
    conv("e5m2", 0x47700001, FPEMU_RNE, 0, 0x7C, OF | NX); /* -> inf */
    conv("e5m2", 0x47700001, FPEMU_RNE, 1, 0x7B, OF | NX);
    conv("e5m2", 0x7F800000, FPEMU_RNE, 0, 0x7C, 0);       /* inf -> inf */
    conv("e5m2", 0x7FC00000, FPEMU_RNE, 0, 0x7E, 0);       /* canonical NaN */
    /* fnuz: no -0; NaN is 0x80 */
    conv("e4m3fnuz", 0x80000000, FPEMU_RNE, 0, 0x00, 0);
    conv("e4m3fnuz", 0xB9000000, FPEMU_RNE, 0, 0x00, UF | NX); /* -2^-13 -> +0 */
    conv("e4m3fnuz", 0x7FC00000, FPEMU_RNE, 0, 0x80, 0);
    conv("e4m3fnuz", 0x43700000, FPEMU_RNE, 0, 0x7F, 0);       /* 240 */
    conv("e4m3fnuz", 0x43740000, FPEMU_RNE, 0, 0x7F, NX);      /* 244 -> 240 */
    conv("e4m3fnuz", 0x43780000, FPEMU_RNE, 0, 0x80, OF | NX); /* 248 ties to 256 (even): NaN */
    conv("e4m3fnuz", 0x43800000, FPEMU_RNE, 0, 0x80, OF | NX); /* 256 -> NaN */
    /* e2m1 / e2m3 / e3m2: no inf, no NaN: always saturate */
    conv("e2m1", 0x40C00000, FPEMU_RNE, 0, 0x7, 0);            /* 6 */
    conv("e2m1", 0x40A00000, FPEMU_RNE, 0, 0x6, NX);           /* 5 ties to 4 (even) */
    conv("e2m1", 0x40E00000, FPEMU_RNE, 0, 0x7, OF | NX);      /* 7 ties to 8 (even): overflow, saturates */
    conv("e2m1", 0x41000000, FPEMU_RNE, 0, 0x7, OF | NX);      /* 8 -> 6 */
    conv("e2m1", 0xFF800000, FPEMU_RNE, 0, 0xF, OF | NX);      /* -inf -> -6 */
    conv("e2m1", 0x7FC00000, FPEMU_RNE, 0, 0x7, NV);           /* NaN -> +6, invalid */
    conv("e2m1", 0x3E800000, FPEMU_RNE, 0, 0x0, UF | NX);      /* 0.25 tie -> 0 */
    conv("e2m1", 0x3E800001, FPEMU_RNE, 0, 0x1, UF | NX);      /* -> 0.5 */
    conv("e2m1", 0xBF400000, FPEMU_RNE, 0, 0xA, UF | NX);      /* -0.75 tie -> -1 (even); tiny after rounding */
    conv("e3m2", 0x41E00000, FPEMU_RNE, 0, 0x1F, 0);           /* 28 = max */
    conv("e3m2", 0x41F00000, FPEMU_RNE, 0, 0x1F, OF | NX);      /* 30 ties to 32 (even): overflow, saturates */
    conv("e2m3", 0x40F00000, FPEMU_RNE, 0, 0x1F, 0);           /* 7.5 */
    /* e8m0 */
    conv("e8m0", 0x3F800000, FPEMU_RNE, 0, 0x7F, 0);           /* 1.0 */
    conv("e8m0", 0x3FC00000, FPEMU_RNE, 0, 0x80, NX);          /* 1.5 tie -> 2 */
    conv("e8m0", 0x3FC00000, FPEMU_RTZ, 0, 0x7F, NX);
    conv("e8m0", 0x00000000, FPEMU_RNE, 0, 0xFF, NV);          /* no zero */
    conv("e8m0", 0xBF800000, FPEMU_RNE, 0, 0xFF, NV);          /* no sign */
    conv("e8m0", 0x7F800000, FPEMU_RNE, 0, 0xFF, NV);
    conv("e8m0", 0x7F800000, FPEMU_RNE, 1, 0xFE, OF | NX);
    conv("e8m0", 0x00000001, FPEMU_RNE, 0, 0x00, UF | NX);     /* 2^-149 -> 2^-127 stands in */
    /* P3109 */
    conv("binary8p4e", 0x43600000, FPEMU_RNE, 0, 0x7E, 0);     /* 224 = max (extended) */
    conv("binary8p4e", 0x43800000, FPEMU_RNE, 0, 0x7F, OF | NX); /* -> +inf 0x7F */
    conv("binary8p4e", 0xFF800000, FPEMU_RNE, 0, 0xFF, 0);     /* -inf 0xFF */
    conv("binary8p4f", 0x43700000, FPEMU_RNE, 0, 0x7F, 0);     /* 240 = max (finite) */
    conv("binary8p4f", 0x7F800000, FPEMU_RNE, 0, 0x80, NV);    /* inf -> NaN */
    /* tf32: low 13 bits are zero */
    conv("tf32", 0x3F801000, FPEMU_RNE, 0, 0x3F800000, NX);    /* tie -> even */
    conv("tf32", 0x3F803000, FPEMU_RNE, 0, 0x3F804000, NX);
    conv("tf32", 0x3F801000, FPEMU_RNA, 0, 0x3F802000, NX);

    /* ---- arithmetic specials (f16) ---- */
    bin("add", fpemu_add, "f16", 0x3C00, 0xBC00, FPEMU_RNE, 0, 0x0000, 0);  /* 1 + -1 = +0 */
    bin("add", fpemu_add, "f16", 0x3C00, 0xBC00, FPEMU_RDN, 0, 0x8000, 0);  /* ... -0 in rdn */
    bin("add", fpemu_add, "f16", 0x8000, 0x8000, FPEMU_RNE, 0, 0x8000, 0);  /* -0 + -0 */
    bin("add", fpemu_add, "f16", 0x0000, 0x8000, FPEMU_RNE, 0, 0x0000, 0);
    bin("add", fpemu_add, "f16", 0x0000, 0x8000, FPEMU_RDN, 0, 0x8000, 0);
    bin("add", fpemu_add, "f16", 0x7C00, 0xFC00, FPEMU_RNE, 0, 0x7E00, NV); /* inf - inf */
    bin("add", fpemu_add, "f16", 0x7BFF, 0x7BFF, FPEMU_RNE, 0, 0x7C00, OF | NX);
    bin("add", fpemu_add, "f16", 0x7BFF, 0x7BFF, FPEMU_RTZ, 0, 0x7BFF, OF | NX);
    bin("add", fpemu_add, "f16", 0x7BFF, 0x7BFF, FPEMU_RNE, 1, 0x7BFF, OF | NX);
    bin("add", fpemu_add, "f16", 0x7C00, 0x3C00, FPEMU_RNE, 1, 0x7BFF, OF | NX); /* sat: no inf at all */
    bin("add", fpemu_add, "f16", 0x7D00, 0x3C00, FPEMU_RNE, 0, 0x7E00, NV);      /* sNaN */
    bin("add", fpemu_add, "f16", 0x7E01, 0x3C00, FPEMU_RNE, 0, 0x7E00, 0);       /* qNaN: canonical */
    bin("sub", fpemu_sub, "f16", 0x3C00, 0x3C00, FPEMU_RNE, 0, 0x0000, 0);
    bin("mul", fpemu_mul, "f16", 0x0000, 0x7C00, FPEMU_RNE, 0, 0x7E00, NV);     /* 0 x inf */
    bin("mul", fpemu_mul, "f16", 0x8000, 0x3C00, FPEMU_RNE, 0, 0x8000, 0);      /* -0 x 1 */
    bin("mul", fpemu_mul, "f16", 0x0001, 0x3800, FPEMU_RNE, 0, 0x0000, UF | NX); /* 2^-25 -> 0 */
    bin("mul", fpemu_mul, "f16", 0x0001, 0x3800, FPEMU_RUP, 0, 0x0001, UF | NX);
    bin("div", fpemu_div, "f16", 0x3C00, 0x0000, FPEMU_RNE, 0, 0x7C00, DZ);     /* 1/0 */
    bin("div", fpemu_div, "f16", 0xBC00, 0x0000, FPEMU_RNE, 0, 0xFC00, DZ);
    bin("div", fpemu_div, "f16", 0x3C00, 0x0000, FPEMU_RNE, 1, 0x7BFF, DZ | OF | NX);
    bin("div", fpemu_div, "f16", 0x0000, 0x0000, FPEMU_RNE, 0, 0x7E00, NV);
    bin("div", fpemu_div, "f16", 0x7C00, 0x7C00, FPEMU_RNE, 0, 0x7E00, NV);
    bin("div", fpemu_div, "f16", 0x3C00, 0x7C00, FPEMU_RNE, 0, 0x0000, 0);
    bin("div", fpemu_div, "e4m3", 0x38, 0x00, FPEMU_RNE, 0, 0x7F, DZ | NV);     /* e4m3 1/0 -> NaN */
    bin("div", fpemu_div, "e4m3", 0x38, 0x00, FPEMU_RNE, 1, 0x7E, DZ | OF | NX);
    bin("div", fpemu_div, "e2m1", 0x2, 0x0, FPEMU_RNE, 0, 0x7, DZ | OF | NX);   /* e2m1 1/0 -> 6 */
    bin("add", fpemu_add, "e4m3fnuz", 0x40, 0xC0, FPEMU_RDN, 0, 0x00, 0);       /* x - x: +0 even in rdn */
    bin("mul", fpemu_mul, "e4m3fnuz", 0x80, 0x40, FPEMU_RNE, 0, 0x80, 0);       /* NaN x 1 */

    /* sqrt, fma */
    {
        fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
        is_hex(fpemu_sqrt(F("f16"), 0x8000, &c), 0x8000, "sqrt(-0) = -0");
        is_hex(fpemu_sqrt(F("f16"), 0xBC00, &c), 0x7E00, "sqrt(-1) = NaN");
        is_int(c.flags, NV, "sqrt(-1) is invalid");
        c.flags = 0;
        is_hex(fpemu_sqrt(F("f16"), 0x7C00, &c), 0x7C00, "sqrt(inf) = inf");
        is_hex(fpemu_sqrt(F("f16"), 0x4400, &c), 0x4000, "sqrt(4) = 2");
        is_int(c.flags, 0, "sqrt(4) exact");
        is_hex(fpemu_fma(F("f16"), 0x0000, 0x7C00, 0x7E00, &c), 0x7E00, "fma(0, inf, qNaN) = NaN");
        is_int(c.flags, NV, "fma(0, inf, qNaN) is invalid");
        c.flags = 0;
        is_hex(fpemu_fma(F("f16"), 0x7C00, 0x3C00, 0xFC00, &c), 0x7E00, "fma(inf, 1, -inf) = NaN");
        c.flags = 0;
        /* single rounding: (1 + 2^-10)^2 - 1 - 2^-9 = 2^-20 exactly, an f16 normal */
        is_hex(fpemu_fma(F("f16"), 0x3C01, 0x3C01, 0xBC02, &c), 0x0010, "fma rounds once: (1+u)^2 - (1+2u) = u^2");
        is_int(c.flags, 0, "... exactly");
        c.flags = 0;
        is_hex(fpemu_fma(F("f16"), 0x3C00, 0x8000, 0x0000, &c), 0x0000, "fma(1, -0, +0) = +0");
        c.round = FPEMU_RDN;
        is_hex(fpemu_fma(F("f16"), 0x3C00, 0x8000, 0x0000, &c), 0x8000, "fma(1, -0, +0) = -0 in rdn");
    }

    /* tininess before/after and ftz/daz (f16: 0x03FF.. boundary) */
    {
        const fpemu_format *h = F("f16");
        /* x = (1 - 2^-12) * 2^-14: rounds to min normal 2^-14 in rne; tiny before, not after */
        fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
        uint32_t x = 0x387FF000; /* f32 (1 - 2^-12) * 2^-14 */
        is_hex(fpemu_convert(h, F("f32"), x, &c), 0x0400, "f32 (1-2^-12)*2^-14 -> f16 min normal");
        is_int(c.flags, NX, "tininess after rounding: not tiny, no underflow");
        c = ctx_of(FPEMU_RNE, 0);
        c.tininess_before = 1;
        fpemu_convert(h, F("f32"), x, &c);
        is_int(c.flags, NX | UF, "tininess before rounding: underflow");
        c = ctx_of(FPEMU_RNE, 0);
        c.ftz = 1;
        is_hex(fpemu_convert(h, F("f32"), 0xB3800000, &c), 0x8000, "ftz: -2^-24 -> -0");
        is_int(c.flags, UF | NX, "ftz raises underflow and inexact");
        c = ctx_of(FPEMU_RNE, 0);
        c.daz = 1;
        is_hex(fpemu_add(h, 0x0001, 0x0000, &c), 0x0000, "daz: subnormal input reads as zero");
        is_int(c.flags, 0, "daz raises nothing");
    }

    /* NaN policy x86: first NaN operand, quieted; default NaN negative */
    {
        fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
        c.nan_policy = FPEMU_NAN_X86;
        is_hex(fpemu_add(F("f16"), 0x3C00, 0x7D23, &c), 0x7F23, "x86 policy: sNaN operand quieted, payload kept");
        is_hex(fpemu_add(F("f16"), 0x7C00, 0xFC00, &c), 0xFE00, "x86 policy: default NaN is 0xFE00");
        is_hex(fpemu_convert(F("f16"), F("f32"), 0xFFC12345, &c), 0xFE09, "x86 policy: f32 NaN payload's top bits kept");
    }

    /* NaN policy cuda (measured on an H100: reports/gpu): every NaN result
     * is the positive one with all significand bits set, whatever the
     * operands' signs and payloads; flags as under any policy */
    {
        static const struct { const char *f; uint64_t nan, inf, ninf, one; } t[] = {
            {"f16", 0x7FFF, 0x7C00, 0xFC00, 0x3C00},
            {"bf16", 0x7FFF, 0x7F80, 0xFF80, 0x3F80},
            {"f32", 0x7FFFFFFF, 0x7F800000, 0xFF800000, 0x3F800000},
            {"f64", UINT64_C(0x7FFFFFFFFFFFFFFF), UINT64_C(0x7FF0000000000000), UINT64_C(0xFFF0000000000000),
             UINT64_C(0x3FF0000000000000)},
            {"e5m2", 0x7F, 0x7C, 0xFC, 0x3C}};
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
            const fpemu_format *g = F(t[i].f);
            fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
            c.nan_policy = FPEMU_NAN_CUDA;
            uint64_t snan_neg = t[i].ninf | 1; /* a negative signalling NaN with payload 1 */
            uint64_t r1 = fpemu_add(g, t[i].inf, t[i].ninf, &c);
            unsigned f1 = c.flags;
            c.flags = 0;
            uint64_t r2 = fpemu_mul(g, snan_neg, t[i].one, &c);
            unsigned f2 = c.flags;
            c.flags = 0;
            uint64_t r3 = fpemu_sqrt(g, t[i].ninf, &c);
            ok(r1 == t[i].nan && r2 == t[i].nan && r3 == t[i].nan && f1 == NV && f2 == NV && c.flags == NV,
               "cuda policy %s: inf - inf, -sNaN x 1, sqrt(-inf) all give %llX, invalid raised", t[i].f,
               (unsigned long long)t[i].nan);
        }
        fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
        c.nan_policy = FPEMU_NAN_CUDA;
        is_hex(fpemu_convert(F("f16"), F("f32"), 0xFFC12345, &c), 0x7FFF, "cuda policy: f32 -> f16 of a negative NaN: 0x7FFF");
        is_hex(fpemu_convert(F("e4m3"), F("f32"), 0x7FC00000, &c), 0x7F, "cuda policy: e4m3's one NaN, 0x7F");
        is_hex(fpemu_convert(F("e4m3fnuz"), F("f32"), 0x7FC00000, &c), 0x80, "cuda policy: fnuz's NaN stays 0x80");
        is_int(fpemu_nan_policy_parse("cuda"), FPEMU_NAN_CUDA, "policy name 'cuda' parses");
        float src[40];
        uint16_t dst[40];
        for (int i = 0; i < 40; i++) src[i] = i % 7 == 3 ? -NAN : (float)i; /* NaNs among the vector lanes */
        fpemu_encode_f32(F("bf16"), dst, src, 40, &c, NULL);
        int good = 1;
        for (int i = 0; i < 40; i++) good &= i % 7 == 3 ? dst[i] == 0x7FFF : dst[i] != 0x7FFF;
        ok(good, "cuda policy: the array cast's NaN elements are 0x7FFF too");
        /* torch: PyTorch's casts (H200): fp8 NaNs and overflows keep their sign; wider formats as cuda */
        fpemu_ctx tc = ctx_of(FPEMU_RNE, 0);
        tc.nan_policy = FPEMU_NAN_TORCH;
        is_int(fpemu_nan_policy_parse("torch"), FPEMU_NAN_TORCH, "policy name 'torch' parses");
        is_hex(fpemu_convert(F("e4m3"), F("f32"), 0xFFC00000, &tc), 0xFF, "torch policy: -NaN -> e4m3 0xFF");
        is_hex(fpemu_convert(F("e4m3"), F("f32"), 0x7FC00000, &tc), 0x7F, "torch policy: +NaN -> e4m3 0x7F");
        is_hex(fpemu_convert(F("e4m3"), F("f32"), 0xC3FA0000, &tc), 0xFF, "torch policy: -500 -> e4m3 0xFF (negative overflow)");
        is_hex(fpemu_convert(F("e4m3"), F("f32"), 0xFF800000, &tc), 0xFF, "torch policy: -inf -> e4m3 0xFF");
        is_hex(fpemu_convert(F("e5m2"), F("f32"), 0xFFC00000, &tc), 0xFF, "torch policy: -NaN -> e5m2 0xFF");
        is_hex(fpemu_convert(F("e5m2"), F("f32"), 0x7FC00000, &tc), 0x7F, "torch policy: +NaN -> e5m2 0x7F");
        is_hex(fpemu_convert(F("f16"), F("f32"), 0xFFC12345, &tc), 0x7FFF, "torch policy: -NaN -> f16 0x7FFF (as cuda)");
        is_hex(fpemu_convert(F("bf16"), F("f32"), 0xFFC12345, &tc), 0x7FFF, "torch policy: -NaN -> bf16 0x7FFF (as cuda)");
        is_hex(fpemu_convert(F("e4m3fnuz"), F("f32"), 0xFFC00000, &tc), 0x80, "torch policy: fnuz's NaN stays 0x80");
        uint8_t d8[40];
        float s8[40];
        for (int i = 0; i < 40; i++) s8[i] = i % 5 == 1 ? -NAN : i % 5 == 2 ? -1000.0f : (float)i;
        fpemu_encode_f32(F("e4m3"), d8, s8, 40, &tc, NULL);
        good = 1;
        for (int i = 0; i < 40; i++) good &= i % 5 == 1 || i % 5 == 2 ? d8[i] == 0xFF : d8[i] != 0xFF;
        ok(good, "torch policy: the array cast's -NaN and -1000 elements are 0xFF");
    }

    /* min, max, compare */
    {
        fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
        const fpemu_format *h = F("f16");
        is_hex(fpemu_min(h, 0x0000, 0x8000, &c), 0x8000, "min(+0, -0) = -0");
        is_hex(fpemu_max(h, 0x8000, 0x0000, &c), 0x0000, "max(-0, +0) = +0");
        is_hex(fpemu_min(h, 0x7E00, 0x3C00, &c), 0x7E00, "minimum propagates NaN");
        is_hex(fpemu_min_num(h, 0x7E00, 0x3C00, &c), 0x3C00, "minimumNumber ignores a quiet NaN");
        is_int(fpemu_compare(h, 0x3C00, 0x4000, 0, &c), FPEMU_LT, "1 < 2");
        is_int(fpemu_compare(h, 0x0000, 0x8000, 0, &c), FPEMU_EQ, "+0 == -0");
        c.flags = 0;
        is_int(fpemu_compare(h, 0x7E00, 0x4000, 0, &c), FPEMU_UN, "quiet compare with NaN: unordered");
        is_int(c.flags, 0, "... and quiet");
        is_int(fpemu_compare(h, 0x7E00, 0x4000, 1, &c), FPEMU_UN, "signaling compare with NaN");
        is_int(c.flags, NV, "... raises invalid");
    }

    /* custom 32-bit formats are not f32: the bias and NaN layout count
     * (regression: e8m23 variants were once decoded as f32 bit patterns) */
    {
        const char *specs[] = {"custom:e=8,m=23,bias=100", "e8m23fn", "custom:e=8,m=23,bias=127,inf=no,nan=none"};
        for (int i = 0; i < 3; i++) {
            const fpemu_format *g = fpemu_format_get(specs[i], NULL, 0);
            fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
            uint64_t four = fpemu_from_double(g, 4.0, &c), three = fpemu_from_double(g, 3.0, &c);
            ok(fpemu_to_double(g, fpemu_sqrt(g, four, &c)) == 2.0 && fpemu_to_double(g, fpemu_mul(g, three, four, &c)) == 12.0 &&
               fpemu_to_double(g, fpemu_add(g, three, four, &c)) == 7.0 && fpemu_to_double(g, fpemu_div(g, four, four, &c)) == 1.0 &&
               fpemu_to_double(g, fpemu_fma(g, three, three, four, &c)) == 13.0 && c.flags == 0,
               "%s: sqrt 4 = 2, 3 x 4 = 12, 3 + 4 = 7, 4 / 4 = 1, fma(3, 3, 4) = 13, exact", specs[i]);
        }
        const fpemu_format *fn = fpemu_format_get("e8m23fn", NULL, 0);
        fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
        /* 0x7F800000 is a normal number (2^128) in e8m23fn: doubling it overflows to NaN */
        ok(fpemu_to_double(fn, 0x7F800000) == 0x1p128 && fpemu_is_nan(fn, fpemu_add(fn, 0x7F800000, 0x7F800000, &c)) &&
           c.flags == (OF | NX), "e8m23fn: 0x7F800000 is 2^128, and 2^128 + 2^128 overflows to NaN");
    }

    /* A rounding mode outside fpemu_round: every operation that rounds
     * gives the invalid operation's result (NaN; +max finite where the
     * format has no NaN) with only the invalid flag; min, max and compare
     * do not round and are unchanged; arrays still advance the counter by
     * n. (Before: rtz-like rounding with rne-like overflow.) */
    {
        const int badm[] = {-1, FPEMU_ROUND_COUNT, 1000, -2147483647 - 1};
        const fpemu_format *f64 = fpemu_format_get("f64", NULL, 0);
        for (int fi = 0; fi < fpemu_format_count(); fi++) {
            const fpemu_format *f = fpemu_format_at(fi);
            fpemu_ctx v = ctx_of(FPEMU_RNE, 0);
            uint64_t x = fpemu_from_double(f, 1.3, &v), y = fpemu_from_double(f, 0.7, &v);
            uint64_t want = f->nan == FPEMU_NANS_NONE ? f->max_code : fpemu_from_double(f, NAN, &v);
            uint64_t mn = fpemu_min(f, x, y, &v), mx = fpemu_max_num(f, x, y, &v);
            int cmp = (int)fpemu_compare(f, x, y, 0, &v);
            int good = 1;
            for (int b = 0; b < 4; b++) {
                fpemu_ctx c = ctx_of(FPEMU_RNE, 0);
                c.round = (fpemu_round)badm[b];
                uint64_t r[9] = {fpemu_add(f, x, y, &c), fpemu_sub(f, x, y, &c), fpemu_mul(f, x, y, &c),
                                 fpemu_div(f, x, y, &c), fpemu_sqrt(f, x, &c), fpemu_fma(f, x, y, x, &c),
                                 fpemu_convert(f, f64, 0x3FF4CCCCCCCCCCCDu, &c), fpemu_from_float(f, 2.5f, &c),
                                 fpemu_round_pack(f, 0, 5, -2, 0, &c)};
                for (int i = 0; i < 9; i++) good &= r[i] == want || (f->nan != FPEMU_NANS_NONE && fpemu_is_nan(f, r[i]));
                good &= c.flags == NV;
                good &= fpemu_min(f, x, y, &c) == mn && fpemu_max_num(f, x, y, &c) == mx &&
                        (int)fpemu_compare(f, x, y, 0, &c) == cmp && c.flags == NV;
                good &= fpemu_quantize(1.3, 0.5, 3, -128, 127, &c) == 3;
                float in[3] = {1.3f, -0.7f, 3.0f};
                uint64_t codes[3];
                uint64_t ctr = c.counter;
                fpemu_encode_f32(f, codes, in, 3, &c, NULL);
                for (int i = 0; i < 3 && f->bits < 32; i++) {
                    uint64_t e = fpemu_code_load(f, codes, (size_t)i);
                    good &= e == want || (f->nan != FPEMU_NANS_NONE && fpemu_is_nan(f, e));
                }
                good &= c.counter == ctr + 3 && c.flags == NV;
            }
            ok(good, "%s: a mode outside fpemu_round (-1, %d, 1000, INT_MIN): rounding operations give the invalid result with only NV; min/max/compare unchanged",
               f->name, FPEMU_ROUND_COUNT);
        }
        /* sr_bits outside 1..64 is 64; a NaN policy outside the enum is canonical */
        const char *names[] = {"f16", "bf16", "e4m3", "e2m1", "f32"};
        for (int k = 0; k < 5; k++) {
            const fpemu_format *f = fpemu_format_get(names[k], NULL, 0);
            int same = 1;
            for (int i = 0; i < 2000; i++) {
                uint64_t a = fpemu_random64(3, (uint64_t)i) & ((UINT64_C(1) << f->bits) - 1);
                uint64_t b = fpemu_random64(4, (uint64_t)i) & ((UINT64_C(1) << f->bits) - 1);
                uint64_t r[3];
                const int bits[3] = {0, -5, 1000};
                for (int j = 0; j < 3; j++) {
                    fpemu_ctx c = ctx_of(FPEMU_SR, 0);
                    c.sr_bits = bits[j], c.seed = 11, c.counter = (uint64_t)i;
                    r[j] = fpemu_add(f, a, b, &c) << 8 | c.flags;
                }
                same &= r[1] == r[0] && r[2] == r[0];
            }
            ok(same, "%s: sr add with sr_bits -5 and 1000 equals sr_bits 0 (64), 2000 cases", names[k]);
        }
        const fpemu_format *h = fpemu_format_get("f16", NULL, 0);
        fpemu_ctx c1 = ctx_of(FPEMU_RNE, 0), c2 = ctx_of(FPEMU_RNE, 0);
        c2.nan_policy = (fpemu_nan_policy)99;
        is_hex(fpemu_add(h, 0x7E01, 0x3C00, &c2), fpemu_add(h, 0x7E01, 0x3C00, &c1),
               "f16: qNaN 7E01 + 1 under NaN policy 99 gives the canonical policy's NaN");
    }

    /* round names */
    is_int(fpemu_round_parse("-rnear_even"), FPEMU_RNE, "-rnear_even is rne");
    is_int(fpemu_round_parse("-rminMag"), FPEMU_RTZ, "-rminMag is rtz");
    is_int(fpemu_round_parse("-rmin"), FPEMU_RDN, "-rmin is rdn");
    is_int(fpemu_round_parse("-rmax"), FPEMU_RUP, "-rmax is rup");
    is_int(fpemu_round_parse("-rnear_maxMag"), FPEMU_RNA, "-rnear_maxMag is rna");
    is_int(fpemu_round_parse("-rodd"), FPEMU_RTO, "-rodd is rto");
    is_int(fpemu_round_parse("sr"), FPEMU_SR, "sr");
    is_int(fpemu_round_parse("nearest"), -1, "unknown mode rejected");
    return done_testing();
}
