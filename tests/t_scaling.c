/* SPDX-License-Identifier: MIT */
/* t_scaling.c: scale rules bit for bit on hand-computed cases: MX FLOOR
 * (OCP) and RCEIL (TE/cuBLAS) e8m0 scales and the element casts they
 * imply, NVFP4 tensor/block scales and e2m1 elements, per-tensor current
 * scaling (TE, torchao), the delayed-scaling state machine (TE), blockwise
 * scales. Expected values computed by hand (see the comments). And the
 * shared helpers of emu/recipe.h: the delayed scale from an amax (against
 * the f64 formula the training engine used), the MX and NVFP4 encode
 * factors, the block cast to codes and to values. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "scaling.h"
#include "recipe.h"
#include "tap.h"

static const fpemu_format *F(const char *n) { return fpemu_format_get(n, NULL, 0); }

int main(void) {
    const fpemu_format *e4m3 = F("e4m3"), *e5m2 = F("e5m2"), *e2m1 = F("e2m1");
    /* ---- MX ---- */
    is_int(fpemu_scaling_mx_emax_elem(e4m3), 8, "emax_elem e4m3 = 8");
    is_int(fpemu_scaling_mx_emax_elem(e5m2), 15, "emax_elem e5m2 = 15");
    is_int(fpemu_scaling_mx_emax_elem(F("e3m2")), 4, "emax_elem e3m2 = 4");
    is_int(fpemu_scaling_mx_emax_elem(F("e2m3")), 2, "emax_elem e2m3 = 2");
    is_int(fpemu_scaling_mx_emax_elem(e2m1), 2, "emax_elem e2m1 = 2");
    /* FLOOR: floor(log2 amax) - emax_elem; RCEIL: ceil(log2(fl32(amax * fl32(1/max)))) */
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e4m3, 448), 0x7F, "FLOOR e4m3 amax 448: 8-8 = 0");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e4m3, 448), 0x7F, "RCEIL e4m3 amax 448: 448*fl32(1/448) = 1 exactly");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e4m3, 1), 0x77, "FLOOR e4m3 amax 1: -8");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e4m3, 1), 0x77, "RCEIL e4m3 amax 1: 0x1.249p-9 -> -8");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e4m3, 500), 0x7F, "FLOOR e4m3 amax 500: floor(8.97) - 8 = 0");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e4m3, 500), 0x80, "RCEIL e4m3 amax 500: 1.116 -> 2^1");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e4m3, 3), 0x78, "FLOOR e4m3 amax 3: 1-8 = -7");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e4m3, 3), 0x78, "RCEIL e4m3 amax 3: -7");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e4m3, 0x1p-130f), 0x00, "FLOOR clamps at -127");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e4m3, 0x1p-130f), 0x00, "RCEIL clamps at -127");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e4m3, 0), 0x00, "FLOOR amax 0 -> 0x00");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e4m3, NAN), 0xFF, "FLOOR NaN amax -> NaN scale");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e4m3, NAN), 0xFF, "RCEIL NaN amax -> NaN scale");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e5m2, 57344), 0x7F, "FLOOR e5m2 amax 57344: 15-15");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e5m2, 500), 0x79, "RCEIL e5m2 amax 500: 0x1.1dbp-7 -> -6");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e2m1, 6), 0x7F, "FLOOR e2m1 amax 6: 2-2");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e2m1, 7), 0x7F, "FLOOR e2m1 amax 7: floor(2.8)-2 = 0");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e2m1, 7), 0x80, "RCEIL e2m1 amax 7: 7/6 -> 2^1");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_FLOOR, e2m1, 0.75f), 0x7C, "FLOOR e2m1 amax 0.75: -1-2 = -3");
    is_hex(fpemu_scaling_mx_scale(FPEMU_SCALING_MX_RCEIL, e2m1, 0.75f), 0x7C, "RCEIL e2m1 amax 0.75: 0.125 -> -3");
    {
        /* elements: FLOOR saturates 500 to 448 (0x7E); RCEIL halves it: 250 -> 256 (0x78) */
        float x[3] = {500, -3, 0.01f};
        uint64_t c[3];
        fpemu_scaling_mx_quantize_block(e4m3, 0x7F, x, 3, 1, c, NULL);
        is_hex(c[0], 0x7E, "FLOOR element 500 -> 448 (saturated)");
        is_hex(c[1], 0xC4, "element -3 = -1.5 * 2^1 -> 0xC4");
        is_hex(c[2], 0x05, "element 0.01 = 5.12 * 2^-9 -> 5 * 2^-9 (0x05)");
        fpemu_scaling_mx_quantize_block(e4m3, 0x80, x, 3, 1, c, NULL);
        is_hex(c[0], 0x78, "RCEIL element 500/2 = 250 -> 256 (0x78)");
        float y[2] = {7, -7};
        fpemu_scaling_mx_quantize_block(e2m1, 0x80, y, 2, 1, c, NULL);
        is_hex(c[0], 0x6, "e2m1 7/2 = 3.5 -> 4 (tie to even)");
        is_hex(c[1], 0xE, "e2m1 -3.5 -> -4");
        fpemu_scaling_mx_quantize_block(e2m1, 0x7F, y, 1, 1, c, NULL);
        is_hex(c[0], 0x7, "e2m1 FLOOR 7 -> 6 (saturated)");
        fpemu_cast_stats st;
        memset(&st, 0, sizeof st);
        fpemu_scaling_mx_quantize_block(e4m3, 0x7F, x, 3, 1, c, &st);
        is_int((long long)st.saturated, 1, "telemetry counts the saturated element");
    }
    /* ---- NVFP4 ---- */
    is_int((long long)(fpemu_scaling_nvfp4_tensor_scale(6) * 1000), 448000, "NVFP4 tensor scale 2688/6 = 448");
    ok(fpemu_scaling_nvfp4_tensor_scale(0) == 1.0f, "NVFP4 tensor scale of amax 0 is 1");
    ok(fpemu_scaling_nvfp4_tensor_scale(INFINITY) == 1.0f, "NVFP4 tensor scale of amax inf is 1");
    ok(fpemu_scaling_nvfp4_tensor_scale(1e-40f) == FLT_MAX, "NVFP4 tensor scale clamps to FLT_MAX");
    is_hex(fpemu_scaling_nvfp4_block_scale(6, 448), 0x7E, "block amax 6: 6/6 * 448 = 448 (0x7E)");
    is_hex(fpemu_scaling_nvfp4_block_scale(1.5f, 448), 0x6E, "block amax 1.5: 0.25 * 448 = 112 (0x6E)");
    is_hex(fpemu_scaling_nvfp4_block_scale(100, 448), 0x7E, "block scale saturates at 448");
    {
        float x[3] = {1.5f, 0.4f, -1.5f};
        uint64_t c[3];
        fpemu_scaling_nvfp4_quantize_block(0x6E, 448, x, 3, 1, c, NULL);
        is_hex(c[0], 0x7, "1.5 * 448/112 = 6 (0x7)");
        is_hex(c[1], 0x3, "0.4 * 4 = 1.6 -> 1.5 (0x3)");
        is_hex(c[2], 0xF, "-1.5 * 4 = -6 (0xF)");
        fpemu_scaling_nvfp4_quantize_block(0x00, 448, x, 1, 1, c, NULL);
        is_hex(c[0], 0x0, "a zero block scale encodes zeros");
    }
    /* ---- per-tensor current scaling ---- */
    {
        fpemu_scaling_current_opts te, ao;
        fpemu_scaling_current_opts_te(&te);
        fpemu_scaling_current_opts_torchao(&ao);
        ok(fpemu_scaling_current_scale(&te, 2, 448) == 224, "TE: 448/2");
        ok(fpemu_scaling_current_scale(&te, 0, 448) == 1, "TE: amax 0 -> 1");
        ok(fpemu_scaling_current_scale(&te, NAN, 448) == 1, "TE: amax NaN -> 1");
        ok(fpemu_scaling_current_scale(&te, INFINITY, 448) == 1, "TE: amax inf -> 1");
        ok(fpemu_scaling_current_scale(&ao, 0, 448) == (float)(448 / (double)1e-12f), "torchao: amax 0 clamps to eps");
        /* torchao's amax_to_scale: 448 / clamp(inf) = 0 and 448 / NaN = NaN,
         * then exp2(floor(log2 s)) keeps both */
        fpemu_scaling_current_opts ao2 = ao, zero;
        ao2.pow2 = 1;
        memset(&zero, 0, sizeof zero);
        ok(fpemu_scaling_current_scale(&ao, INFINITY, 448) == 0 && fpemu_scaling_current_scale(&ao2, INFINITY, 448) == 0 &&
               !signbit(fpemu_scaling_current_scale(&ao2, INFINITY, 448)),
           "torchao: amax inf -> scale +0 (pow2 too)");
        ok(isnan(fpemu_scaling_current_scale(&ao, NAN, 448)) && isnan(fpemu_scaling_current_scale(&ao2, NAN, 448)),
           "torchao: amax NaN -> scale NaN (pow2 too)");
        ok(fpemu_scaling_current_scale(&zero, INFINITY, 448) == 1 && fpemu_scaling_current_scale(&zero, NAN, 448) == 1,
           "zeroed options follow TE: amax inf or NaN -> 1");
        ok(fpemu_scaling_current_scale(&ao2, 1e-30f, 448) == 0x1p48f,
           "torchao pow2: amax below eps clamps to it, 448/1e-12 rounds down to 2^48");
        /* 448/3 in f64 then f32 vs in f32: both 149.33333 here; a case where they differ: */
        float a = 0x1.fffffep-1f;
        float s32 = fpemu_scaling_current_scale(&te, a, 57344), s64 = fpemu_scaling_current_scale(&ao, a, 57344);
        ok(s32 == (float)57344 / a && s64 == (float)(57344.0 / (double)a), "f32 and f64 divisions as specified (%a, %a)", s32, s64);
        fpemu_scaling_current_opts p2 = te;
        p2.pow2 = 1;
        ok(fpemu_scaling_current_scale(&p2, 3, 448) == 128, "pow2: 448/3 = 149.3 -> 128");
    }
    /* ---- delayed scaling: history 3, max, margin 0 ---- */
    {
        fpemu_scaling_delayed d;
        if (fpemu_scaling_delayed_init(&d, 448, 3, FPEMU_SCALING_AMAX_MAX, 0)) bail("init");
        ok(d.scale == 1, "initial scale 1");
        const float seq[] = {2, 4, 1, 1, 1};
        const float want[] = {224, 112, 112, 112, 448};
        for (int i = 0; i < 5; i++) {
            fpemu_scaling_delayed_record(&d, seq[i]);
            fpemu_scaling_delayed_update(&d);
            ok(d.scale == want[i], "step %d: amax %g -> scale %g (got %g)", i, seq[i], want[i], d.scale);
        }
        ok(d.scale_inv == 1.0f / 448, "scale_inv = 1/scale");
        fpemu_scaling_delayed_record(&d, 0);
        fpemu_scaling_delayed_update(&d); /* history now [0,1,1] -> max 1: 448 */
        ok(d.scale == 448, "zero amax in a window with others: max of the window");
        fpemu_scaling_delayed_free(&d);
        fpemu_scaling_delayed_init(&d, 448, 2, FPEMU_SCALING_AMAX_MOST_RECENT, 1);
        fpemu_scaling_delayed_record(&d, 7);
        fpemu_scaling_delayed_update(&d);
        ok(d.scale == 32, "most_recent, margin 1: 448/2/7 = 32");
        fpemu_scaling_delayed_record(&d, 0);
        fpemu_scaling_delayed_update(&d);
        ok(d.scale == 32, "amax 0 keeps the old scale");
        fpemu_scaling_delayed_record(&d, 1e-45f);
        fpemu_scaling_delayed_update(&d);
        ok(d.scale == FLT_MAX, "an infinite scale becomes FLT_MAX");
        fpemu_scaling_delayed_free(&d);
        ok(fpemu_scaling_fp8_format_for(FPEMU_SCALING_FP8_HYBRID, 1) == e5m2 && fpemu_scaling_fp8_format_for(FPEMU_SCALING_FP8_HYBRID, 0) == e4m3 &&
               fpemu_scaling_fp8_format_for(FPEMU_SCALING_FP8_E4M3, 1) == e4m3,
           "HYBRID: e5m2 for gradients, e4m3 forward; E4M3 everywhere");
    }
    /* ---- blockwise ---- */
    ok(fpemu_scaling_block_decode_scale(448, 448, 1e-4f, 0) == 1, "blockwise decode amax/448");
    ok(fpemu_scaling_block_encode_scale(3, 448, 1e-4f, 0) == 448.0f / 3, "blockwise encode fl32(448/amax)");
    ok(fpemu_scaling_block_decode_scale(0, 448, 1e-4f, 0) == 1e-4f / 448, "blockwise amax clamped to eps");
    ok(fpemu_scaling_block_encode_scale(INFINITY, 448, 1e-4f, 0) == 0 && fpemu_scaling_block_decode_scale(INFINITY, 448, 1e-4f, 0) == INFINITY &&
           isnan(fpemu_scaling_block_encode_scale(NAN, 448, 1e-4f, 0)) && isnan(fpemu_scaling_block_decode_scale(NAN, 448, 1e-4f, 0)),
       "blockwise (DeepGEMM): amax inf encodes by 0 and decodes by inf, NaN by NaN");
    ok(fpemu_scaling_block_encode_scale(INFINITY, 448, 1e-4f, 1) == 1 && fpemu_scaling_block_decode_scale(INFINITY, 448, 1e-4f, 1) == 1 &&
           fpemu_scaling_block_encode_scale(NAN, 448, 1e-4f, 1) == 1 && fpemu_scaling_block_decode_scale(NAN, 448, 1e-4f, 1) == 1,
       "blockwise pow2 (TE Float8BlockScaling): amax inf or NaN -> scale 1");
    ok(fpemu_scaling_block_encode_scale(3, 448, 1e-4f, 1) == 128 && fpemu_scaling_block_decode_scale(3, 448, 1e-4f, 1) == 1.0f / 128,
       "blockwise pow2: encode rounded down, decode its inverse");
    /* ---- MS-AMP (compute_scaling_factor) ---- */
    ok(fpemu_scaling_msamp_scale(2, 448, 1) == 128, "msamp: 2^floor(log2(448/2)) = 128");
    ok(fpemu_scaling_msamp_scale(448, 448, 1) == 1, "msamp: amax = fmt_max gives 1");
    ok(fpemu_scaling_msamp_scale(500, 448, 1) == 0.5f, "msamp: amax above fmt_max: 2^-1");
    ok(fpemu_scaling_msamp_scale(1e-30f, 448, 1) == ldexpf(1, 108), "msamp: log2(448/1e-30) = 108.46");
    ok(fpemu_scaling_msamp_scale(1e6f, 57344, 1) == ldexpf(1, -5), "msamp e5m2: log2(57344/1e6) = -4.12 -> 2^-5");
    ok(fpemu_scaling_msamp_scale(0, 448, 4) == 4 && fpemu_scaling_msamp_scale(NAN, 448, 4) == 4,
       "msamp: amax 0 or NaN keeps the previous scale");
    ok(fpemu_scaling_msamp_scale(INFINITY, 448, 4) == 0.25f,
       "msamp: amax inf gives 1/previous (exp = -inf: the kept scale is inverted)");
    ok(isinf(fpemu_scaling_msamp_scale(1e-38f, 65504, 1)), "msamp: fmt_max / amax overflows f32: scale inf (torch.pow)");
    {
        /* q = fl32(448 / amax) one ulp below 256: log2 q = 8 - 8.6e-8 rounds
         * to 8 in f32, so the scale is 256 and amax * 256 exceeds 448; one ulp
         * below 2, log2 q = 1 - 8.6e-8 rounds below 1 and the scale is 1 */
        float a8 = 448.0f / nextafterf(256, 0), a1 = 448.0f / nextafterf(2, 0);
        ok(448.0f / a8 < 256 && fpemu_scaling_msamp_scale(a8, 448, 1) == 256 && a8 * 256 > 448,
           "msamp: log2 of a quotient just below 2^8 rounds up to 8 (scale 256, amax scaled past 448)");
        ok(448.0f / a1 < 2 && fpemu_scaling_msamp_scale(a1, 448, 1) == 1, "msamp: just below 2^1 stays below (scale 1)");
    }

    /* ---- the shared helpers of emu/recipe.h ---- */
    {
        /* TE's delayed scale from the reduced amax: the rule of
         * fpemu_scaling_delayed_update and of the training engine's histories,
         * which computed it as fl32((fmt_max / amax) / 2^margin) in f64: the
         * same bits for f32 amaxes and integer margins */
        ok(emu__scaling_delayed_scale(2, 448, 0, 1) == 224 && emu__scaling_delayed_scale(2, 448, 1, 1) == 112,
           "delayed scale: 448/2, margin 1 halves it");
        ok(emu__scaling_delayed_scale(0, 448, 0, 3) == 3 && emu__scaling_delayed_scale(INFINITY, 448, 0, 3) == 3 &&
               emu__scaling_delayed_scale(NAN, 448, 0, 3) == 3,
           "delayed scale: amax 0, inf, NaN keep the previous scale");
        ok(emu__scaling_delayed_scale(1e-40f, 448, 0, 1) == FLT_MAX, "delayed scale: an infinite quotient becomes FLT_MAX");
        uint64_t rs = 5;
        int bad = 0;
        for (int i = 0; i < 20000; i++) {
            rs = fpemu_random64(rs, 11);
            uint32_t u = (uint32_t)(rs >> 32) & 0x7FFFFFFFu;
            float amax;
            memcpy(&amax, &u, 4);
            if (!(amax > 0) || isinf(amax)) continue;
            int m = (int)(rs & 7);
            double fm = i & 1 ? 57344 : 448;
            float want = (float)((fm / amax) / ldexp(1.0, m));
            if (isinf(want)) want = FLT_MAX;
            float got = emu__scaling_delayed_scale(amax, (float)fm, (float)m, 1);
            if (memcmp(&got, &want, 4) && bad++ < 3) diag("amax %a margin %d: %a, f64 gives %a", amax, m, got, want);
        }
        is_int(bad, 0, "delayed scale: f32 arithmetic = the f64 formula, 20000 random amaxes, margins 0..7");
        /* and fpemu_scaling_delayed_update takes its scale from it */
        fpemu_scaling_delayed d;
        fpemu_scaling_delayed_init(&d, 448, 4, FPEMU_SCALING_AMAX_MAX, 2);
        fpemu_scaling_delayed_record(&d, 3.5f);
        fpemu_scaling_delayed_update(&d);
        ok(d.scale == emu__scaling_delayed_scale(3.5f, 448, 2, 1), "delayed update: scale %g", d.scale);
        fpemu_scaling_delayed_free(&d);

        ok(isnan(emu__mx_encode_factor(0xFF)) && emu__mx_encode_factor(127) == 1 && emu__mx_encode_factor(0) == 0x1p127f &&
               emu__mx_encode_factor(254) == 0x1p-127f,
           "MX encode factor 2^(127-E), NaN for 0xFF, 2^-127 exact");
        uint8_t sc = fpemu_scaling_nvfp4_block_scale(3, 100);
        ok(emu__nvfp4_encode_factor(sc, 100) == 100.0f / (float)fpemu_to_double(e4m3, sc) &&
               emu__nvfp4_encode_factor(0, 100) == 0,
           "NVFP4 encode factor tensor/block scale, 0 for a zero block scale");

        /* the block cast: codes and values agree (values = decode(codes),
         * same counts), strided input, in place */
        float x[70], v[70], w[70];
        uint64_t c[70];
        for (int i = 0; i < 70; i++) x[i] = (float)((i * 37) % 23 - 11) * 0.37f;
        x[5] = INFINITY, x[9] = -1e30f, x[13] = 1e-30f;
        fpemu_cast_stats s1, s2;
        memset(&s1, 0, sizeof s1), memset(&s2, 0, sizeof s2);
        emu__scaled_cast(e4m3, 64.0f, x, 70, 1, c, NULL, &s1);
        emu__scaled_cast(e4m3, 64.0f, x, 70, 1, NULL, v, &s2);
        int same = 1;
        for (int i = 0; i < 70; i++) {
            float y = (float)fpemu_to_double(e4m3, c[i]);
            same &= !memcmp(&y, &v[i], 4);
        }
        ok(same && !memcmp(&s1, &s2, sizeof s1), "scaled cast: values = decode(codes), same statistics");
        memcpy(w, x, sizeof x);
        emu__scaled_cast(e4m3, 64.0f, w, 70, 1, NULL, w, NULL);
        ok(!memcmp(w, v, sizeof v), "scaled cast: in place");
        uint64_t c2[35];
        emu__scaled_cast(e2m1, 0.5f, x + 1, 35, 2, c2, NULL, NULL);
        same = 1;
        for (int i = 0; i < 35; i++) {
            uint64_t want[1];
            emu__scaled_cast(e2m1, 0.5f, &x[1 + 2 * i], 1, 1, want, NULL, NULL);
            same &= c2[i] == want[0];
        }
        ok(same, "scaled cast: stride 2");
        uint64_t cm[32], cq[32];
        emu__scaled_cast(e4m3, emu__mx_encode_factor(120), x, 32, 1, cm, NULL, NULL);
        fpemu_scaling_mx_quantize_block(e4m3, 120, x, 32, 1, cq, NULL);
        ok(!memcmp(cm, cq, sizeof cm), "fpemu_scaling_mx_quantize_block is the scaled cast by the MX factor");
    }
    /* ---- amax: the vector pass (stride 1) against a plain loop: lengths
     * around the 32-float step, zeros, -0, subnormals, inf, NaNs (the
     * first NaN's bits with the sign cleared), strides ---- */
    {
        static float x[301];
        int bad = 0;
        uint64_t st = 12345;
        for (int t = 0; t < 400; t++) {
            size_t n = (size_t)(t % 100) + (t >= 300 ? 200 : 0);
            for (size_t i = 0; i < n; i++) {
                st = st * 6364136223846793005ULL + 1442695040888963407ULL;
                uint32_t u = (uint32_t)(st >> 32);
                if (t % 4 == 0) u &= 0x80FFFFFFu; /* zeros and subnormals */
                memcpy(&x[i], &u, 4);
                if (t % 4 == 1 && isnan(x[i])) x[i] = 1.0f; /* no NaN: the vector result */
                if (t % 4 == 2 && i == n / 2) x[i] = -INFINITY;
            }
            for (size_t stride = 1; stride <= 3; stride++) {
                float want = 0;
                uint32_t wb = 0, gb;
                for (size_t i = 0; i * stride < n; i++) {
                    float v = fabsf(x[i * stride]);
                    if (isnan(v)) { want = v; break; }
                    if (v > want) want = v;
                }
                float got = fpemu_scaling_amax_f32(x, n == 0 ? 0 : (n - 1) / stride + 1, stride);
                memcpy(&wb, &want, 4), memcpy(&gb, &got, 4);
                bad += wb != gb;
            }
        }
        ok(bad == 0, "fpemu_scaling_amax_f32: the vector pass gives the plain loop's bits (1200 arrays, NaN, inf, -0, subnormals; %d differ)", bad);
    }
    return done_testing();
}
