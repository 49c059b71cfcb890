/* SPDX-License-Identifier: MIT */
/* t_fpenv.c: the public calls that compute with the host's floats give the
 * same results under a caller's floating-point environment as under the
 * default one, and leave the caller's as it was (no flag raised in it):
 * the scale factors of scaling.h, the MX and NVFP4 block casts, the
 * delayed-scaling state, fpemu_quantize and fpemu_dequantize and the
 * array form, fpemu_api_delayed_scale,
 * and fpemu_mma_dot's fma-seq model, whose f32 and f64 forms run on the
 * host's fmaf and fma. The environment is x86's MXCSR with FTZ, DAZ and
 * round toward zero (a program built with -ffast-math runs with FTZ and
 * DAZ; torch.set_flush_denormal sets them). The inputs include subnormal
 * floats, where FTZ and DAZ act, and values whose f32 steps round, where
 * the mode acts. (The tensor cast's own check is in t_cast_f64.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "fpemu.h"
#include "fpemu_api.h"
#include "mma.h"
#include "scaling.h"
#include "tap.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <xmmintrin.h>
#define HOSTILE 0xFFC0u /* FTZ, DAZ, round toward zero, every exception masked, no flag */
static unsigned saved;
static void hostile(void) { saved = _mm_getcsr(), _mm_setcsr(HOSTILE); }
/* back to the caller's; whether the call left the MXCSR as it found it */
static int restore(void) {
    const unsigned now = _mm_getcsr();
    _mm_setcsr(saved);
    return now == HOSTILE;
}
#endif

static uint64_t rng = 0x2545F4914F6CDD1Du;
static uint64_t next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}
static uint32_t fbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static float bitsf(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

/* amax values: subnormal and normal floats of every binade, powers of two
 * and their neighbours, zero, inf, NaN */
enum { NA = 4096 };
static float amax[NA];
static void fill(void) {
    int i = 0;
    const float special[] = {0.0f, INFINITY, NAN, 1.0f, 448.0f, 57344.0f, 6.0f, 0x1p-149f, 0x1p-127f, 0x1.fffffcp-127f,
                             0x1p-126f, 3.4028235e38f, 1e-12f, 2688.0f};
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) amax[i++] = special[k];
    for (int e = -149; e <= 127 && i + 3 <= NA; e++) {
        const float p = ldexpf(1.0f, e);
        amax[i++] = p, amax[i++] = nextafterf(p, 0), amax[i++] = nextafterf(p, INFINITY);
    }
    while (i < NA) {
        uint32_t u = (uint32_t)next() & 0x7FFFFFFFu;
        if ((u >> 23) == 0xFF) continue;
        if (i % 3 == 0) u &= 0x007FFFFFu; /* a subnormal */
        amax[i++] = bitsf(u);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* n results of one scalar function, clean and under the hostile MXCSR:
 * the first difference, or the first call that left the MXCSR changed */
#define SAME_SCALAR(name, type, expr)                                                                                  \
    do {                                                                                                               \
        int good_ = 1;                                                                                                 \
        for (int i = 0; i < NA && good_; i++) {                                                                        \
            const float a = amax[i];                                                                                   \
            const type want = (expr);                                                                                  \
            hostile();                                                                                                 \
            const type got = (expr);                                                                                   \
            const int kept = restore();                                                                                \
            if (memcmp(&want, &got, sizeof want) || !kept) {                                                           \
                diag("%s(%a): 0x%llx under the MXCSR, 0x%llx under the default%s", name, (double)a,                   \
                     (unsigned long long)(sizeof got == 4 ? fbits((float)got) : (uint64_t)got),                       \
                     (unsigned long long)(sizeof want == 4 ? fbits((float)want) : (uint64_t)want),                     \
                     kept ? "" : "; the MXCSR changed");                                                               \
                good_ = 0;                                                                                             \
            }                                                                                                          \
        }                                                                                                              \
        ok(good_, "%s: %d amax values, the same under FTZ, DAZ and rtz, the MXCSR kept", name, NA);                   \
    } while (0)
#endif

int main(void) {
#if !(defined(__x86_64__) && defined(__GNUC__))
    skip_all("the caller's environment is x86's MXCSR here; not an x86 build");
#else
    rng ^= tap_seed(0);
    fill();
    plan(20);
    const fpemu_format *e4m3 = fpemu_format_get("e4m3", NULL, 0), *e2m1 = fpemu_format_get("e2m1", NULL, 0);
    fpemu_scaling_current_opts te, ao;
    fpemu_scaling_current_opts_te(&te);
    fpemu_scaling_current_opts_torchao(&ao);
    SAME_SCALAR("current_scale te e4m3", float, fpemu_scaling_current_scale(&te, a, 448.0));
    SAME_SCALAR("current_scale torchao e5m2", float, fpemu_scaling_current_scale(&ao, a, 57344.0));
    SAME_SCALAR("msamp_scale e4m3", float, fpemu_scaling_msamp_scale(a, 448.0, 0.75f));
    SAME_SCALAR("mx_scale rceil e4m3", uint8_t, fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e4m3, a));
    SAME_SCALAR("mx_scale floor e2m1", uint8_t, fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e2m1, a));
    SAME_SCALAR("nvfp4_tensor_scale", float, fpemu_scaling_nvfp4_tensor_scale(a));
    SAME_SCALAR("nvfp4_block_scale", uint8_t, fpemu_scaling_nvfp4_block_scale(a, 0.37f));
    SAME_SCALAR("block_encode_scale", float, fpemu_scaling_block_encode_scale(a, 448.0, 1e-12f, 0));
    SAME_SCALAR("block_decode_scale", float, fpemu_scaling_block_decode_scale(a, 448.0, 1e-12f, 0));
    SAME_SCALAR("block_encode_scale pow2", float, fpemu_scaling_block_encode_scale(a, 448.0, 1e-12f, 1));

    /* the block casts: 32 elements a block, the scale each block's own,
     * the elements scaled as the recipes do (subnormal products included) */
    for (int kind = 0; kind < 2; kind++) {
        int good = 1;
        for (int b = 0; b + 32 <= NA && good; b += 32) {
            uint64_t want[32], got[32];
            fpemu_cast_stats s0, s1;
            memset(&s0, 0, sizeof s0), memset(&s1, 0, sizeof s1);
            const uint8_t sc = (uint8_t)(next() % 255);
            if (kind == 0) fpemu_scaling_mx_quantize_block(e4m3, sc, amax + b, 32, 1, want, &s0);
            else fpemu_scaling_nvfp4_quantize_block(sc & 0x7F, 0.37f, amax + b, 16, 2, want, &s0);
            hostile();
            if (kind == 0) fpemu_scaling_mx_quantize_block(e4m3, sc, amax + b, 32, 1, got, &s1);
            else fpemu_scaling_nvfp4_quantize_block(sc & 0x7F, 0.37f, amax + b, 16, 2, got, &s1);
            const int kept = restore();
            if (memcmp(want, got, sizeof(uint64_t) * (kind ? 16 : 32)) || memcmp(&s0, &s1, sizeof s0) || !kept) {
                diag("%s block at %d, scale 0x%02X: differs%s", kind ? "nvfp4" : "mx", b, sc, kept ? "" : " (the MXCSR changed)");
                good = 0;
            }
        }
        ok(good, "%s_quantize_block: %d blocks, the same codes and counts under FTZ, DAZ and rtz, the MXCSR kept",
           kind ? "nvfp4" : "mx", NA / 32);
    }

    /* the delayed-scaling state through 64 steps */
    {
        fpemu_scaling_delayed d0, d1;
        int good = fpemu_scaling_delayed_init(&d0, 448.0, 16, FPEMU_SCALING_AMAX_MAX, 0) == 0 &&
                   fpemu_scaling_delayed_init(&d1, 448.0, 16, FPEMU_SCALING_AMAX_MAX, 0) == 0;
        for (int t = 0; t < 64 && good; t++) {
            const float a = amax[(t * 61) % NA];
            fpemu_scaling_delayed_record(&d0, a);
            fpemu_scaling_delayed_update(&d0);
            hostile();
            fpemu_scaling_delayed_record(&d1, a);
            fpemu_scaling_delayed_update(&d1);
            const int kept = restore();
            if (fbits(d0.scale) != fbits(d1.scale) || fbits(d0.scale_inv) != fbits(d1.scale_inv) ||
                memcmp(d0.history, d1.history, sizeof(float) * 16) || !kept) {
                diag("delayed step %d (amax %a): scale %a against %a%s", t, (double)a, (double)d1.scale, (double)d0.scale,
                     kept ? "" : " (the MXCSR changed)");
                good = 0;
            }
        }
        fpemu_scaling_delayed_free(&d0), fpemu_scaling_delayed_free(&d1);
        ok(good, "delayed_record and delayed_update: 64 steps, the same scales and history under FTZ, DAZ and rtz, the "
                 "MXCSR kept");
    }

    /* int8 quantisation of an array (its scalar form runs in the caller's
     * environment, fpemu.h): x / scale near half-integers and subnormal x */
    {
        static float xq[NA];
        static int32_t q0[NA], q1[NA];
        for (int i = 0; i < NA; i++) xq[i] = i % 4 == 0 ? amax[i] : (float)((int)(next() % 255) - 127) * 0.1f + 0.05f;
        fpemu_ctx c0, c1;
        fpemu_ctx_init(&c0), fpemu_ctx_init(&c1);
        fpemu_quantize_array(q0, xq, NA, 0.1, 3, -128, 127, &c0);
        hostile();
        fpemu_quantize_array(q1, xq, NA, 0.1, 3, -128, 127, &c1);
        const int kept = restore();
        ok(!memcmp(q0, q1, sizeof q0) && c0.flags == c1.flags && kept,
           "fpemu_quantize_array: %d values, the same codes and flags under FTZ, DAZ and rtz, the MXCSR kept", NA);
    }
    /* and its scalar forms, which switch only where the caller's modes
     * differ (and put back only what the call changed) */
    {
        int good = 1;
        for (int i = 0; i < NA && good; i++) {
            const double x = (double)(i % 4 == 0 ? amax[i] : (float)((int)(next() % 255) - 127) * 0.1f + 0.05f);
            fpemu_ctx c0, c1;
            fpemu_ctx_init(&c0), fpemu_ctx_init(&c1);
            const int32_t want = fpemu_quantize(x, 0.1, 3, -128, 127, &c0);
            hostile();
            const int32_t got = fpemu_quantize(x, 0.1, 3, -128, 127, &c1);
            const int kept = restore();
            if (want != got || c0.flags != c1.flags || !kept) {
                diag("fpemu_quantize(%a): %d under the MXCSR, %d under the default%s", x, got, want, kept ? "" : " (the MXCSR changed)");
                good = 0;
            }
        }
        ok(good, "fpemu_quantize: %d values, the same codes and flags under FTZ, DAZ and rtz, the MXCSR kept", NA);
        good = 1;
        for (int i = 0; i < NA && good; i++) {
            const int32_t q = (int32_t)(next() % 256) - 128;
            const double sc = (double)amax[i]; /* (subnormal scales included) */
            const float want = fpemu_dequantize(q, sc, 3);
            hostile();
            const float got = fpemu_dequantize(q, sc, 3);
            const int kept = restore();
            if (fbits(want) != fbits(got) || !kept) {
                diag("fpemu_dequantize(%d, %a): %a under the MXCSR, %a under the default%s", q, sc, (double)got, (double)want,
                     kept ? "" : " (the MXCSR changed)");
                good = 0;
            }
        }
        ok(good, "fpemu_dequantize: %d values, the same under FTZ, DAZ and rtz, the MXCSR kept", NA);
    }
    {
        int good = 1;
        for (int i = 0; i < NA && good; i++) {
            double s0 = 0, s1 = 0;
            const double a = amax[i]; /* (widened here, not under the MXCSR's DAZ) */
            fpemu_api_delayed_scale("e4m3", a, 0, 1.0, &s0, NULL, 0);
            hostile();
            fpemu_api_delayed_scale("e4m3", a, 0, 1.0, &s1, NULL, 0);
            const int kept = restore();
            if (memcmp(&s0, &s1, sizeof s0) || !kept) {
                diag("fpemu_api_delayed_scale(%a): %a under the MXCSR, %a under the default%s", (double)amax[i], s1, s0,
                     kept ? "" : " (the MXCSR changed)");
                good = 0;
            }
        }
        ok(good, "fpemu_api_delayed_scale: %d amax values, the same under FTZ, DAZ and rtz, the MXCSR kept", NA);
    }

    /* fpemu_mma_dot's fma-seq model on f32, f16 and f64 inputs (the host's
     * fmaf for the first two, fma for the last): K = 64, subnormal terms */
    static const char *ins[] = {"f32", "f16", "f64"};
    for (int w = 0; w < 3; w++) {
        char err[256];
        const fpemu_format *fi = fpemu_format_get(ins[w], NULL, 0);
        const fpemu_format *fo = fpemu_format_get(w == 2 ? "f64" : "f32", NULL, 0);
        fpemu_mma_model m;
        if (fpemu_mma_model_preset(&m, "fma-seq", fi, fi, fo, fo, err, sizeof err)) bail("fma-seq %s: %s", ins[w], err);
        int good = 1;
        for (int t = 0; t < 256 && good; t++) {
            uint64_t a[64], b[64];
            fpemu_ctx ctx;
            fpemu_ctx_init(&ctx);
            for (int i = 0; i < 64; i++) {
                a[i] = fpemu_from_double(fi, amax[(t * 64 + i) % NA] * ((next() & 1) ? 1 : -1), &ctx);
                b[i] = fpemu_from_double(fi, ldexp((double)(next() % 1000) / 999.0, -(int)(next() % 40)), &ctx);
            }
            const uint64_t c = fpemu_from_double(fo, 0x1p-130, &ctx);
            const uint64_t want = fpemu_mma_dot(&m, a, b, 64, c, NULL);
            hostile();
            const uint64_t got = fpemu_mma_dot(&m, a, b, 64, c, NULL);
            const int kept = restore();
            if (got != want || !kept) {
                diag("fma-seq %s dot %d: 0x%llx under the MXCSR, 0x%llx under the default%s", ins[w], t,
                     (unsigned long long)got, (unsigned long long)want, kept ? "" : " (the MXCSR changed)");
                good = 0;
            }
        }
        ok(good, "fpemu_mma_dot fma-seq on %s: 256 dots of 64, the same under FTZ, DAZ and rtz, the MXCSR kept", ins[w]);
    }
    return done_testing();
#endif
}
