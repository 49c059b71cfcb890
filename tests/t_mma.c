/* SPDX-License-Identifier: MIT */
/* t_mma.c: the tensor-core models against the published probe results
 * (Fasi, Higham, Mikaitis & Pranesh 2021, V100/T4/A100; Khattak &
 * Mikaitis' block-FMA tests for A30/A100; the device table of
 * docs/tensor-cores.md for H100), presets and their errors, special values,
 * the reference kinds (exact, fma-seq, pairwise), block-scaled inputs and
 * integer MMA. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mma.h"
#include "tap.h"

static const fpemu_format *F(const char *n) {
    const fpemu_format *f = fpemu_format_get(n, NULL, 0);
    if (!f) bail("format %s missing", n);
    return f;
}

static uint64_t enc(const fpemu_format *f, double x) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    uint64_t c = fpemu_from_double(f, x, &ctx);
    if (ctx.flags & FPEMU_FLAG_INEXACT) bail("%g is not exact in %s", x, f->name);
    return c;
}

static fpemu_mma_model model(const char *name, const char *a, const char *c) {
    fpemu_mma_model m;
    char err[256];
    if (fpemu_mma_model_preset(&m, name, F(a), F(a), F(c), F(c), err, sizeof err)) bail("%s", err);
    return m;
}

/* d for c + sum p_i where each product p_i = pa[i] * pb[i] (f16 inputs, f32 c/d). */
static uint64_t run16(const fpemu_mma_model *m, double c, int k, const double *pa, const double *pb) {
    uint64_t a[128], b[128];
    for (int i = 0; i < k; i++) a[i] = enc(m->fa, pa[i]), b[i] = enc(m->fb, pb[i]);
    return fpemu_mma_dot(m, a, b, (size_t)k, enc(m->fc, c), NULL);
}

typedef struct { const char *name; int nfrac, block; } dev;

int main(void) {
    const double u = ldexp(1, -23);
    const dev devs[] = {{"v100", 23, 4}, {"t4", 24, 8}, {"a100", 24, 8}, {"ada", 24, 8}, {"h100", 25, 16}, {"b200", 25, 16}};
    for (size_t di = 0; di < sizeof devs / sizeof devs[0]; di++) {
        const dev *d = &devs[di];
        fpemu_mma_model m = model(d->name, "f16", "f32");
        double pa[64], pb[64];
        int extra = d->nfrac - 23;
        /* extra alignment bits: c = 1, p = {2^-24, 2^-24} */
        pa[0] = pa[1] = ldexp(1, -12), pb[0] = pb[1] = ldexp(1, -12);
        is_hex(run16(&m, 1, 2, pa, pb), extra >= 1 ? 0x3F800001 : 0x3F800000, "%s: c=1, p={2^-24,2^-24} (>=1 extra bit: %d)", d->name, extra >= 1);
        /* c = 1, p = {2^-24, 2^-25, 2^-25} */
        pb[1] = pb[2] = ldexp(1, -13), pa[2] = ldexp(1, -12);
        is_hex(run16(&m, 1, 3, pa, pb), extra >= 2 ? 0x3F800001 : 0x3F800000, "%s: c=1, p={2^-24,2^-25,2^-25} (>=2 extra bits: %d)", d->name, extra >= 2);
        /* block size: c = 1 + 2^-23, p[0] = 1, p[k-1] = 2^-23 */
        for (int k = d->block; k <= d->block + 1; k++) {
            for (int i = 0; i < k; i++) pa[i] = pb[i] = 0;
            pa[0] = pb[0] = 1;
            pa[k - 1] = ldexp(1, -12), pb[k - 1] = ldexp(1, -11);
            is_hex(run16(&m, 1 + u, k, pa, pb), k <= d->block ? 0x40000001 : 0x40000000, "%s: block size %d, k=%d", d->name, d->block, k);
            for (int i = 0; i < k; i++) pa[i] = -pa[i];
            is_hex(run16(&m, -(1 + u), k, pa, pb), k <= d->block ? 0xC0000001 : 0xC0000000, "%s: block size, negated, k=%d", d->name, k);
        }
        /* normalisation once at the end: c = 1 - 2^-21, p = 2 x (2^-21 + 2^-24) */
        pa[0] = pa[1] = pb[0] = pb[1] = 3 * ldexp(1, -12);
        is_hex(run16(&m, 1 - ldexp(1, -21), 2, pa, pb), 0x3F800005, "%s: normalisation at the end", d->name);
        /* output rounding: c = 1 + 2^-23 + 2^-22, p = 3 x 1: RZ gives 4 */
        pa[0] = pa[1] = pa[2] = pb[0] = pb[1] = pb[2] = 1;
        is_hex(run16(&m, 1 + 3 * u, 3, pa, pb), 0x40800000, "%s: output rounding RZ (+)", d->name);
        pa[0] = pa[1] = pa[2] = -1;
        is_hex(run16(&m, -(1 + 3 * u), 3, pa, pb), 0xC0800000, "%s: output rounding RZ (-)", d->name);
        /* rounding at alignment: c = 1, two products 2^-24 (2^-n + 2^-n-1) */
        pa[0] = pa[1] = 1.5 * ldexp(1, -12), pb[0] = pb[1] = ldexp(1, -12 - extra);
        is_hex(run16(&m, 1, 2, pa, pb), 0x3F800000, "%s: truncation at alignment", d->name);
        /* rounding between blocks: c = 1 + 2^-23, one product 1.5 x 2^-24 at index B */
        for (int i = 0; i <= d->block; i++) pa[i] = pb[i] = 0;
        pa[d->block] = 1.5 * ldexp(1, -12), pb[d->block] = ldexp(1, -12);
        is_hex(run16(&m, 1 + u, d->block + 1, pa, pb), 0x3F800001, "%s: RZ between blocks", d->name);
        /* guard bits: p = {1}, c = -(1 - 2^-24) */
        pa[0] = pb[0] = 1;
        is_hex(run16(&m, -(1 - ldexp(1, -24)), 1, pa, pb), extra >= 1 ? 0x33800000 : 0x34000000, "%s: guard bits", d->name);
        /* carry bits: p = {1, 1.5, 1.75, 1.875}, c = 1.875 gives 8 */
        pa[0] = 1, pa[1] = 1.5, pa[2] = 1.75, pa[3] = 1.875, pb[0] = pb[1] = pb[2] = pb[3] = 1;
        is_hex(run16(&m, 1.875, 4, pa, pb), 0x41000000, "%s: 3 carry bits", d->name);
        /* non-monotonic accumulation: p = 4 x 2^-24 */
        for (int i = 0; i < 4; i++) pa[i] = pb[i] = ldexp(1, -12);
        is_hex(run16(&m, 1 - ldexp(1, -24), 4, pa, pb), 0x3F800001, "%s: c = 1 - 2^-24, p = 4 x 2^-24", d->name);
        is_hex(run16(&m, 1, 4, pa, pb), extra >= 1 ? 0x3F800002 : 0x3F800000, "%s: c = 1, p = 4 x 2^-24 (non-monotonic on V100)", d->name);
        /* boundary: all inputs 1, c = 2^s: d > c exactly for s <= nfrac */
        int kk = d->block;
        for (int i = 0; i < kk; i++) pa[i] = pb[i] = 1;
        double cs = ldexp(1, d->nfrac), cs1 = ldexp(1, d->nfrac + 1);
        ok(fpemu_to_double(m.fd, run16(&m, cs, kk, pa, pb)) > cs, "%s: boundary s = nfrac = %d: d > c", d->name, d->nfrac);
        ok(fpemu_to_double(m.fd, run16(&m, cs1, kk, pa, pb)) == cs1, "%s: boundary s = nfrac + 1: d == c", d->name);
    }

    /* Hopper fp8: 13-bit output (e8m13) and nfrac 13. */
    {
        fpemu_mma_model m = model("h100", "e4m3", "f32");
        uint64_t a[32], b[32];
        for (int i = 0; i < 32; i++) a[i] = b[i] = 0;
        a[0] = b[0] = enc(m.fa, 1);
        /* c = 1 + 2^-13 + 2^-14: 2 + 2^-13 + 2^-14 truncated to 13 bits is 2 */
        uint64_t d = fpemu_mma_dot(&m, a, b, 1, enc(m.fc, 1 + ldexp(1, -13) + ldexp(1, -14)), NULL);
        is_hex(d, 0x40000000, "h100 e4m3: output truncated to 13 fraction bits");
        d = fpemu_mma_dot(&m, a, b, 1, enc(m.fc, 1 + ldexp(1, -12)), NULL);
        is_hex(d, 0x40000000 | (1u << 10), "h100 e4m3: 2 + 2^-12 survives (13 bits)");
        d = fpemu_mma_dot(&m, a, b, 0, enc(m.fc, 1 + ldexp(1, -20)), NULL);
        is_hex(d, 0x3F800000, "h100 e4m3: k = 0 still rounds c to 13 bits");
        /* nfrac = 13: c = 2^13 keeps a product 1, 2^14 drops it (single product, 13-bit output) */
        d = fpemu_mma_dot(&m, a, b, 1, enc(m.fc, ldexp(1, 13)), NULL);
        is_hex(d, enc(m.fd, ldexp(1, 13) + 1), "h100 e4m3: 2^13 + 1");
        d = fpemu_mma_dot(&m, a, b, 1, enc(m.fc, ldexp(1, 14)), NULL);
        is_hex(d, enc(m.fd, ldexp(1, 14)), "h100 e4m3: 2^14 + 1 -> 2^14");
        char err[200];
        fpemu_mma_model x;
        is_int(fpemu_mma_model_preset(&x, "h100", F("f32"), F("f32"), F("f16"), F("f16"), err, sizeof err), -1, "h100 tf32 with f16 accumulation is refused");
        diag("%s", err);
        is_int(fpemu_mma_model_preset(&x, "v100", F("bf16"), F("bf16"), NULL, NULL, err, sizeof err), -1, "v100 bf16 refused");
        ok(strstr(err, "supported: f16") != NULL, "message names what v100 supports: %s", err);
        is_int(fpemu_mma_model_preset(&x, "a100", F("e4m3"), F("e4m3"), NULL, NULL, err, sizeof err), -1, "a100 fp8 refused");
        is_int(fpemu_mma_model_preset(&x, "x9000", F("f16"), F("f16"), NULL, NULL, err, sizeof err), -1, "unknown model refused");
        ok(strstr(err, "expected one of") != NULL, "unknown model message lists presets: %s", err);
        is_int(fpemu_mma_model_preset(&x, "a100", F("f16"), F("bf16"), NULL, NULL, err, sizeof err), -1, "f16 x bf16 refused");
        is_int(fpemu_mma_model_preset(&x, "b200", F("e2m1"), F("e4m3"), NULL, NULL, err, sizeof err), 0, "b200 e2m1 x e4m3 accepted (f8f6f4)");
        is_int(fpemu_mma_model_set(&x, "nfrac", "99", err, sizeof err), -1, "bad option value refused");
        is_int(fpemu_mma_model_set(&x, "colour", "red", err, sizeof err), -1, "unknown option refused");
    }

    /* tf32: f32 inputs are truncated. a100: 1 + 2^-11 + 2^-12 (f32) -> 1 + 2^-10 when... */
    {
        fpemu_mma_model m = model("a100", "f32", "f32");
        uint64_t a[1] = {enc(F("f32"), 1 + ldexp(1, -10) + ldexp(1, -11))}, b[1] = {enc(F("f32"), 1)};
        is_hex(fpemu_mma_dot(&m, a, b, 1, 0, NULL), enc(F("f32"), 1 + ldexp(1, -10)), "a100 tf32: inputs truncated to 10 bits");
    }

    /* specials: NaN anywhere -> NaN (NVIDIA all-ones), inf - inf -> NaN, inf -> inf, 0 * inf -> NaN */
    {
        fpemu_mma_model m = model("a100", "f16", "f32");
        uint64_t a[2] = {0x7C00, 0x3C00}, b[2] = {0x3C00, 0x3C00};
        is_hex(fpemu_mma_dot(&m, a, b, 2, 0, NULL), 0x7F800000, "inf product -> +inf");
        a[1] = 0xFC00;
        is_hex(fpemu_mma_dot(&m, a, b, 2, 0, NULL), 0x7FFFFFFF, "inf - inf -> NaN (0x7FFFFFFF)");
        a[1] = 0x3C00, b[0] = 0;
        is_hex(fpemu_mma_dot(&m, a, b, 2, 0, NULL), 0x7FFFFFFF, "0 * inf -> NaN");
        a[0] = 0x7E00, b[0] = 0x3C00;
        is_hex(fpemu_mma_dot(&m, a, b, 1, 0, NULL), 0x7FFFFFFF, "NaN input -> NaN");
        a[0] = 0x3C00;
        is_hex(fpemu_mma_dot(&m, a, b, 1, 0x7FC00000, NULL), 0x7FFFFFFF, "NaN c -> NaN");
        /* f32 overflow under RZ: inf by default (MMA-Sim), max finite with overflow=max */
        char err[100];
        {
            fpemu_mma_model mb = model("a100", "bf16", "f32");
            uint64_t xa[1] = {0x7F7F}, xb[1] = {0x7F7F}; /* bf16 max squared ~ 2^255 */
            is_hex(fpemu_mma_dot(&mb, xa, xb, 1, 0, NULL), 0x7F800000, "RZ overflow -> inf (default)");
            xa[0] = 0xFF7F;
            is_hex(fpemu_mma_dot(&mb, xa, xb, 1, 0, NULL), 0xFF800000, "RZ overflow -> -inf (default)");
            fpemu_mma_model_set(&mb, "overflow", "max", err, sizeof err);
            is_hex(fpemu_mma_dot(&mb, xa, xb, 1, 0, NULL), 0xFF7FFFFF, "RZ overflow -> -FLT_MAX with overflow=max");
        }
        /* subnormal inputs kept, or flushed */
        m = model("a100", "f16", "f32");
        a[0] = 0x0001, b[0] = 0x3C00;
        is_hex(fpemu_mma_dot(&m, a, b, 1, 0, NULL), 0x33800000, "subnormal f16 input kept (2^-24)");
        fpemu_mma_model_set(&m, "subnormals", "flush", err, sizeof err);
        is_hex(fpemu_mma_dot(&m, a, b, 1, 0, NULL), 0, "subnormal f16 input flushed");
        /* zeros: -0 + -0 products give -0 */
        m = model("a100", "f16", "f32");
        a[0] = 0x8000, b[0] = 0x3C00;
        is_hex(fpemu_mma_dot(&m, a, b, 1, 0x80000000, NULL), 0x80000000, "-0 + (-0 * 1) = -0");
        /* emax floor: the emax-floor vector of docs/tensor-cores.md, f16
         * output: 2^-24 without a floor */
        fpemu_mma_model h;
        if (fpemu_mma_model_preset(&h, "a100", F("f16"), F("f16"), F("f16"), F("f16"), err, sizeof err)) bail("%s", err);
        uint64_t fa[2] = {enc(F("f16"), ldexp(1, -14)), enc(F("f16"), ldexp(1, -24))};
        uint64_t fb[2] = {enc(F("f16"), ldexp(1, -11)), enc(F("f16"), ldexp(1, -24))};
        fpemu_mma_model_set(&h, "zero_c", "ignore", err, sizeof err);
        is_hex(fpemu_mma_dot(&h, fa, fb, 2, 0, NULL), 0x0001, "emax floor vector: 2^-24 without a floor (zero c ignored)");
        fpemu_mma_model_set(&h, "emax_floor", "-14", err, sizeof err);
        is_hex(fpemu_mma_dot(&h, fa, fb, 2, 0, NULL), 0x0000, "emax floor vector: 0 with a floor at -14");
    }

    /* mixed c/d formats: f16 output rounds to nearest even */
    {
        fpemu_mma_model m = model("v100", "f16", "f16");
        uint64_t a[3] = {0x3C00, 0x3C00, 0x3C00}, b[3] = {0x3C00, 0x3C00, 0x3C00};
        /* c = 1 + 3 * 2^-10 (f16): 4 + 3*2^-10 -> RNE 4 + 2^-8 */
        is_hex(fpemu_mma_dot(&m, a, b, 3, 0x3C03, NULL), 0x4401, "v100 f16 output: RNE");
    }

    /* integer MMA */
    {
        fpemu_mma_model m;
        char err[100];
        if (fpemu_mma_model_preset_int(&m, "a100", 1, 1, 0, err, sizeof err)) bail("%s", err);
        int32_t a[4] = {-128, -128, 127, 1}, b[4] = {-128, -128, 127, 1};
        is_int(fpemu_mma_dot_int(&m, a, b, 4, 0), 16384 * 2 + 16129 + 1, "s8 dot exact");
        is_int(fpemu_mma_dot_int(&m, a, b, 2, INT32_MAX), (int32_t)((int64_t)INT32_MAX + 32768 - 4294967296LL), "s8 wraps");
        m.int_sat = 1;
        is_int(fpemu_mma_dot_int(&m, a, b, 2, INT32_MAX), INT32_MAX, "s8 saturates with satfinite");
        is_int(fpemu_mma_model_preset_int(&m, "v100", 1, 1, 0, err, sizeof err), -1, "v100 has no IMMA");
    }

    /* H100 regression vectors: outputs of an H100 80GB HBM3 (fpemu-gpu
     * validate, reports/gpu/NVIDIA-H100-80GB-HBM3-2026-11-22.md), each one
     * a case the preset got wrong before it was fitted to the hardware */
    {
        fpemu_mma_model m = model("h100", "bf16", "f32");
        const double h = 1 + 0x1p-7;
        /* emax floor -133 with a zero c ignored: (1+2^-7)^2 2^(j+14) + n1 n2 2^j */
        static const struct { int j, n1, n2; uint32_t d; } fl[] = {
            {-159, 13, 59, 0x10}, {-158, 1, 255, 0x21}, {-157, 1, 255, 0x42}, {-156, 1, 127, 0x83},
            {-155, 1, 63, 0x105}, {-154, 1, 31, 0x209}, {-153, 1, 15, 0x411}};
        for (int i = 0; i < 7; i++) {
            int e0 = fl[i].j + 14, j = fl[i].j;
            double pa[2] = {h * ldexp(1.0, e0 / 2), ldexp(fl[i].n1, j / 2)};
            double pb[2] = {h * ldexp(1.0, e0 - e0 / 2), ldexp(fl[i].n2, j - j / 2)};
            is_hex(run16(&m, 0.0, 2, pa, pb), fl[i].d, "h100 bf16 emax floor, lowest bits 2^%d: the H100's %X", j, fl[i].d);
        }
        double one[1] = {1}, two[1] = {2}, p104[1] = {0x1p104}, p103[1] = {0x1p103}, p127[1] = {0x1p127};
        is_hex(run16(&m, 0x1.fffffep127, 1, p104, one), 0x7F800000, "h100 bf16: FLT_MAX + 2^104 under RZ is +inf");
        is_hex(run16(&m, 0x1.fffffep127, 1, p103, one), 0x7F7FFFFF, "h100 bf16: FLT_MAX + 2^103 stays FLT_MAX");
        is_hex(run16(&m, 0.0, 1, p127, two), 0x7F800000, "h100 bf16: 2^127 * 2 is +inf");
        double tiny_a[1] = {-0x1p-75}, tiny_b[1] = {0x1p-75};
        is_hex(run16(&m, -0.0, 1, tiny_a, tiny_b), 0, "h100 bf16: -0 - 2^-150 rounds toward zero to +0");
        fpemu_mma_model m16 = model("h100", "f16", "f32");
        double za[16], zb[16];
        for (int i = 0; i < 16; i++) za[i] = -0.0, zb[i] = 0.0;
        is_hex(run16(&m16, -0.0, 16, za, zb), 0, "h100 f16: -0 + 16 products (-0)(+0) is +0");
        /* f16 accumulators: emax clamped at -21 (the emax-floor vector of
         * docs/tensor-cores.md, a = [2^-14, 2^-24], b = [2^-11, 2^-24], c = 0,
         * gives 0: the 2^-48 product is cut and 2^-25 ties to even) */
        fpemu_mma_model mh = model("h100", "f16", "f16");
        double ha[2] = {0x1p-14, 0x1p-24}, hb[2] = {0x1p-11, 0x1p-24};
        is_hex(run16(&mh, 0.0, 2, ha, hb), 0, "h100 f16 output: 2^-25 + 2^-48 is 0 (the H100's answer)");
        hb[1] = 0x1p-23;
        is_hex(run16(&mh, 0.0, 2, ha, hb), 0, "h100 f16 output: 2^-25 + 2^-47 is 0 (cut below 2^-46)");
        hb[1] = 0x1p-22;
        is_hex(run16(&mh, 0.0, 2, ha, hb), 1, "h100 f16 output: 2^-25 + 2^-46 is 2^-24 (kept)");
        fpemu_mma_model m0 = model("a100", "f16", "f32");
        is_hex(run16(&m0, -0.0, 16, za, zb), 0x80000000, "a100 (not measured): the IEEE sign, -0");
        /* .satfinite clamps each instruction's result (K = 32), not only the last */
        static const char *v =
            "7FFE7729 00 80 FF 00 7F 7F 7F 00 80 B2 81 20 8B 00 01 08 7F 80 81 00 0A 7F 81 00 80 80 80 77 01 "
            "01 51 A8 80 17 72 01 00 80 FF 05 00 FF 7F 7F 81 00 01 80 FF 7F 80 FF 7F FF 81 80 81 BF 80 80 09 "
            "7F 80 AD 51 81 01 81 00 7F 31 00 81 00 81 2D 94 00 7F 7F 00 01 C2 7F 01 1E 81 80 FF FD 5B 7F 7F "
            "FF 26 00 5A E0 80 80 01 7F 80 7F 80 80 01 09 01 81 00 81 7F 81 37 7F 01 81 01 FF 00 01 81 81 7F "
            "FF 81 81 01 00 FF 80 7D 01 FC 80 80 80 23 00 FF 00 81 7F 00 FF 7F 80 9C 7F 81 FF FF 81 01 80 00 "
            "80 01 81 7F 83 01 AD 76 80 02 9F 8A 10 C6 7F 01 E3 FF 81 75 81 80 7F 7F 81 01 00 7F 01 01 80 00 "
            "F7 81 00 7F 00 80 81 81 FF 80 7E 7F E8 7F 80 81 FF 00 18 FF FF 01 25 00 81 81 81 00 01 FF 00 FF "
            "81 01 00 01 80 FF 01 76 81 7F 82 01 AB 7F EE 00 00 01 FF 2D FF 00 8E 81 80 7F FF 80 00 F8 00 80 "
            "00 FF 80";
        int32_t c = 0, a[128], b[128];
        int n = 0, pos = 0, used;
        unsigned x;
        if (sscanf(v, "%X%n", &x, &used) == 1) c = (int32_t)x, pos = used;
        while (n < 256 && sscanf(v + pos, "%X%n", &x, &used) == 1) {
            if (n % 2) b[n / 2] = (int8_t)x;
            else a[n / 2] = (int8_t)x;
            n++, pos += used;
        }
        fpemu_mma_model mi;
        char err[256];
        if (n != 256 || fpemu_mma_model_preset_int(&mi, "h100", 1, 1, 1, err, sizeof err)) bail("s8 vector or preset");
        is_hex((uint32_t)fpemu_mma_dot_int(&mi, a, b, 128, c), 0x7FFDEEB4, "h100 s8 satfinite, 4 chained instructions: the H100's 7FFDEEB4");
        if (fpemu_mma_model_set(&mi, "block", "0", err, sizeof err)) bail("%s", err);
        is_hex((uint32_t)fpemu_mma_dot_int(&mi, a, b, 128, c), 0x7FFE46E5, "... and 7FFE46E5 with one clamp at the end (block=0)");
    }
    /* fpemu_mma_model_finish refuses enums out of range (describe indexed its
     * tables with them); a failed fpemu_mma_model_set or finish leaves the model
     * as it was (out_mant 0 used to stay, with a half-built outf, and
     * fpemu_mma_dot returned codes with stray high bits); integer models take
     * block only */
    {
        fpemu_mma_model m = model("h100", "f16", "f32"), m0 = m;
        char err[256], buf[600];
        m.kind = (fpemu_mma_kind)7;
        is_int(fpemu_mma_model_finish(&m, err, sizeof err), -1, "kind 7 refused: %s", err);
        fpemu_mma_model_describe(&m, buf, sizeof buf);
        ok(strstr(buf, "kind=?") != NULL, "describe prints kind=? for it");
        m = m0, m.align = (fpemu_mma_align)5;
        is_int(fpemu_mma_model_finish(&m, err, sizeof err), -1, "align 5 refused: %s", err);
        m = m0, m.norm = (fpemu_mma_norm)3;
        is_int(fpemu_mma_model_finish(&m, err, sizeof err), -1, "normalize 3 refused");
        m = m0, m.chain = (fpemu_mma_chain)2;
        is_int(fpemu_mma_model_finish(&m, err, sizeof err), -1, "chain 2 refused");
        m = m0, m.out_round = (fpemu_round)9;
        is_int(fpemu_mma_model_finish(&m, err, sizeof err), -1, "out_round 9 refused: %s", err);
        m = m0, m.out_round = FPEMU_SR;
        is_int(fpemu_mma_model_finish(&m, err, sizeof err), -1, "out_round sr refused (as fpemu_mma_model_set does)");
        m = m0, m.out_round = FPEMU_RNE;
        is_int(fpemu_mma_model_finish(&m, err, sizeof err), 0, "out_round rne accepted");

        fpemu_mma_model a = model("a100", "f16", "f32");
        char before[600], after[600];
        fpemu_mma_model_describe(&a, before, sizeof before);
        is_int(fpemu_mma_model_set(&a, "out_mant", "0", err, sizeof err), -1, "a100 f32 out_mant 0 refused: %s", err);
        fpemu_mma_model_describe(&a, after, sizeof after);
        ok(!strcmp(before, after) && a.outf.bits == 32 && a.outf.pad == 0 && a.outf.mbits == 23,
           "... and the model is unchanged (out_mant %d, outf bits %d pad %d)", a.out_mant, a.outf.bits, a.outf.pad);
        uint64_t x[1] = {0xBC00}, y[1] = {0x3C00};
        is_hex(fpemu_mma_dot(&a, x, y, 1, 0, NULL), 0xBF800000, "... fpemu_mma_dot gives the f32 code of -1");
        a.out_mant = 0;
        is_int(fpemu_mma_model_finish(&a, err, sizeof err), -1, "finish with out_mant 0 refused");
        ok(a.outf.bits == 32 && a.outf.pad == 0 && a.outf.mbits == 23, "... and outf is as it was");
        a.out_mant = 23;
        is_int(fpemu_mma_model_set(&a, "block", "4", err, sizeof err), 0, "a later set succeeds");
        is_int(a.block, 4, "... block 4");

        fpemu_mma_model mi;
        if (fpemu_mma_model_preset_int(&mi, "h100", 1, 1, 1, err, sizeof err)) bail("%s", err);
        fpemu_mma_model_describe(&mi, before, sizeof before);
        is_int(fpemu_mma_model_set(&mi, "nfrac", "5", err, sizeof err), -1, "int model: nfrac refused: %s", err);
        is_int(fpemu_mma_model_set(&mi, "out_mant", "-7", err, sizeof err), -1, "int model: out_mant refused");
        is_int(fpemu_mma_model_set(&mi, "group", "3", err, sizeof err), -1, "int model: group refused");
        fpemu_mma_model_describe(&mi, after, sizeof after);
        ok(!strcmp(before, after) && mi.nfrac == 0 && mi.out_mant == 0 && mi.group == 0, "... and the model is unchanged");
        is_int(fpemu_mma_model_set(&mi, "block", "16", err, sizeof err), 0, "int model: block accepted");
        is_int(mi.block, 16, "... block 16");
    }

    /* the b200 group rule (mxf4) takes only the OCP e2m1 parameters: an
     * e2m1-shaped custom format with bias 3 shifted by a negative amount;
     * it now takes the ungrouped path (scale exponents join the products') */
    {
        fpemu_mma_model m = model("b200", "e2m1", "f32");
        char err[256];
        const fpemu_format *e2b3 = fpemu_format_get("custom:e=2,m=1,bias=3,inf=no,nan=none", err, sizeof err);
        if (!e2b3) bail("%s", err);
        m.fa = m.fb = e2b3;
        if (fpemu_mma_model_finish(&m, err, sizeof err)) bail("%s", err);
        uint64_t a[2] = {1, 0x9}, b[2] = {1, 1}, s1[1] = {127}, s2[1] = {128}; /* 2^-3 * 2^-3 * 2 - 2^-3 * 2^-3 * 2 */
        is_hex(fpemu_mma_dot_scaled(&m, a, b, 1, 0, F("e8m0"), s1, s2, 32, NULL), 0x3D000000,
               "b200 with a bias-3 e2m1: 2^-3 * 2^-3 * scales 1 * 2 = 2^-5");
        is_hex(fpemu_mma_dot_scaled(&m, a, b, 2, 0, F("e8m0"), s1, s2, 32, NULL), 0, "... and 2^-5 - 2^-5 = +0");
        fpemu_mma_model o = model("b200", "e2m1", "f32");
        uint64_t oa[1] = {1}, ob[1] = {1}; /* OCP e2m1: 0.5 * 0.5 * 2 */
        is_hex(fpemu_mma_dot_scaled(&o, oa, ob, 1, 0, F("e8m0"), s1, s2, 32, NULL), 0x3F000000, "OCP e2m1 (grouped): 0.5 * 0.5 * 2 = 0.5");
    }

    /* one block of any length (block = 0, and the exact kind): blocks longer
     * than the terms held at once (65536) are summed in two passes; k was
     * cut to int (k >= 2^31: a stack overflow, k = 2^32: an endless loop).
     * Products of f16 values in [1, 2) are exact at 2^-20, so the block sum
     * (nfrac 24 below emax 0) and the exact sum are the double sum, RZ to
     * 24 bits */
    {
        const size_t k = 70001;
        uint64_t *a = malloc(8 * k), *b = malloc(8 * k);
        double sum = 0;
        for (size_t i = 0; i < k; i++) {
            uint64_t r = fpemu_random64(42, i);
            a[i] = 0x3C00 | (r & 0x3FF) | (r >> 40 & 1 ? 0x8000 : 0);
            b[i] = 0x3C00 | (r >> 10 & 0x3FF);
            sum += fpemu_to_double(F("f16"), a[i]) * fpemu_to_double(F("f16"), b[i]);
        }
        int e;
        double fr = frexp(sum, &e), want = ldexp(trunc(ldexp(fr, 24)), e - 24);
        uint64_t wc = fpemu_from_double(F("f32"), want, &(fpemu_ctx){0});
        fpemu_mma_model m = model("a100", "f16", "f32");
        char err[256];
        if (fpemu_mma_model_set(&m, "block", "0", err, sizeof err)) bail("%s", err);
        is_hex(fpemu_mma_dot(&m, a, b, k, 0, NULL), wc, "a100 block=0, k = %zu: one block, the exact sum RZ (%a)", k, want);
        fpemu_mma_model x = model("exact", "f16", "f32");
        x.out_round = FPEMU_RTZ;
        if (fpemu_mma_model_finish(&x, err, sizeof err)) bail("%s", err);
        is_hex(fpemu_mma_dot(&x, a, b, k, 0, NULL), wc, "exact kind, k = %zu, rtz: the same", k);
        if (fpemu_mma_model_set(&m, "block", "70001", err, sizeof err)) bail("%s", err);
        is_hex(fpemu_mma_dot(&m, a, b, k, 0, NULL), wc, "a100 block=70001: the same");
        a[k / 2] = 0x7E00; /* a NaN in the middle of the second pass's pieces */
        ok(isnan(fpemu_to_double(F("f32"), fpemu_mma_dot(&m, a, b, k, 0, NULL))), "a NaN term anywhere gives NaN");
        free(a), free(b);
    }

    /* c's bits outside its field are ignored and never returned (fma-seq
     * with k = 0 returned c as given, pad bits of tf32 included) */
    {
        fpemu_mma_model m = model("fma-seq", "tf32", "tf32");
        uint64_t a[1] = {0}, b[1] = {0};
        is_hex(fpemu_mma_dot(&m, a, b, 0, 0x3F801FFF, NULL), 0x3F800000, "fma-seq tf32, k = 0: c's pad bits cleared");
        fpemu_mma_model m2 = model("fma-seq", "f16", "f16");
        is_hex(fpemu_mma_dot(&m2, a, b, 0, UINT64_C(0xABCD00003C00), NULL), 0x3C00, "fma-seq f16, k = 0: c's high bits cleared");
        fpemu_mma_model m3 = model("h100", "f16", "f32");
        is_hex(fpemu_mma_dot(&m3, a, b, 0, UINT64_C(0xABCD00003F800000), NULL), 0x3F800000, "h100, k = 0: c's high bits ignored");
    }

    return done_testing();
}
