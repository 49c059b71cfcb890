/* SPDX-License-Identifier: MIT */
/* convert.c: conversion between any two formats, and to/from host
 * binary32/binary64. Decode exactly, then the one rounding step. */
#include "internal.h"

const fpemu_format *emu__f64(void) { return fpemu_format_at(0); }
const fpemu_format *emu__f32(void) { return fpemu_format_at(1); }

uint64_t fpemu_convert(const fpemu_format *dst, const fpemu_format *src, uint64_t a, fpemu_ctx *ctx) {
    if (emu__bad_mode(ctx)) return emu__nan_result(dst, ctx, 1, 0, NULL, NULL);
    /* Fast path: the input's exact double (f64 as it is; a format with p <=
     * 24 and at most 8 exponent bits through its decoder), rounded by
     * emu__fast_pack when the result is normal and finite, in any mode
     * (sr: its one draw). Everything else, and daz, goes on below: the fast
     * path refuses before touching ctx. */
    if (!ctx->daz && emu__small(dst)) {
        double v;
        /* the registry's f64 is its first row: an address test, without
         * emu__f64()'s once-only initialisation on every call */
        int ok = src == &emu__registry[0] ? (v = emu__bitsd(emu__strip(src, a)), 1)
                                          : emu__small(src) && emu__fast_decode(src, a, &v);
        if (ok) {
            uint64_t r = emu__fast_pack(dst, v, 0, ctx);
            if (r != EMU_FAST_FAIL) return r;
        }
    }
    uint64_t c = emu__strip(src, a);
    fpemu_class k = src->class_table ? (fpemu_class)src->class_table[c] : emu__classify(src, c);
    int sign = (c & src->sign_bit) != 0;
    if (k == FPEMU_CLASS_SUBNORMAL && ctx->daz) k = FPEMU_CLASS_ZERO;
    switch (k) {
    case FPEMU_CLASS_QNAN:
    case FPEMU_CLASS_SNAN: {
        const fpemu_format *fmts[1] = {src};
        return emu__nan_result(dst, ctx, k == FPEMU_CLASS_SNAN, 1, &a, fmts);
    }
    case FPEMU_CLASS_INF: return emu__inf_result(dst, ctx, sign);
    case FPEMU_CLASS_ZERO: return fpemu_round_pack(dst, sign, 0, 0, 0, ctx);
    default: {
        int s, e;
        uint64_t sig;
        fpemu_unpack(src, a, &s, &sig, &e);
        return fpemu_round_pack(dst, s, sig, e, 0, ctx);
    }
    }
}

uint64_t fpemu_from_double(const fpemu_format *dst, double x, fpemu_ctx *ctx) {
    return fpemu_convert(dst, emu__f64(), emu__dbits(x), ctx);
}

/* f16, bf16 and the 8-bit OCP and fnuz formats have their own (fast.c) */
uint64_t fpemu_from_float(const fpemu_format *dst, float x, fpemu_ctx *ctx) {
    const emu_fastops *fo = dst->fast;
    unsigned m = (unsigned)ctx->round;
    if (fo && m < FPEMU_ROUND_COUNT && fo->from_f32[m]) return fo->from_f32[m](dst, x, ctx);
    return emu__from_float_generic(dst, x, ctx);
}
uint64_t emu__from_float_generic(const fpemu_format *dst, float x, fpemu_ctx *ctx) {
    return fpemu_convert(dst, emu__f32(), emu__fbits(x), ctx);
}

/* Every finite value of f is a float: p <= 24, below 2^128, and no bit
 * under 2^-149. The lowest bit any value has is the quantum of the lowest
 * binade, 2^(emin - mbits), whether that binade is subnormal or (custom
 * subnormals=no) normal. */
int emu__fits_f32(const fpemu_format *f) { return f->p <= 24 && f->emax <= 127 && f->emin - f->mbits >= -149; }

/* Where every value is a float the decode is exact: no rounding, so no sr
 * draw, daz or not (daz reads a subnormal code as a zero of its sign). NaN
 * codes take the NaN policy through fpemu_convert. */
float fpemu_to_float(const fpemu_format *f, uint64_t code, fpemu_ctx *ctx) {
    if (emu__fits_f32(f)) {
        fpemu_class k = fpemu_classify(f, code);
        if (k == FPEMU_CLASS_SUBNORMAL && ctx->daz) return emu__bitsf((emu__strip(f, code) & f->sign_bit) ? 0x80000000u : 0);
        if (k != FPEMU_CLASS_QNAN && k != FPEMU_CLASS_SNAN) return (float)fpemu_to_double(f, code); /* exact */
    }
    return emu__bitsf((uint32_t)fpemu_convert(emu__f32(), f, code, ctx));
}
