/* SPDX-License-Identifier: MIT */
/* quant.c: integer quantisation with scale and zero point, and integer dot
 * products with exact accumulation. */
#include <math.h>
#include <string.h>
#include <strings.h>
#include "internal.h"

static const fpemu_qtype qtypes[] = {
    {"int8", -128, 127}, {"int8s", -127, 127}, {"uint8", 0, 255},
    {"int4", -8, 7},     {"int4s", -7, 7},     {"uint4", 0, 15},
};

const fpemu_qtype *fpemu_qtype_get(const char *name) {
    for (size_t i = 0; i < sizeof qtypes / sizeof qtypes[0]; i++)
        if (name && !strcasecmp(name, qtypes[i].name)) return &qtypes[i];
    return NULL;
}

/* fpemu_quantize's body: the division and its remainder in the host's
 * doubles, under the library's floating-point environment, which its two
 * callers set. */
static int32_t quantize_one(double x, double scale, int32_t zero_point, int qmin, int qmax, fpemu_ctx *ctx) {
    if (isnan(x) || !(scale > 0) || isinf(scale) || emu__bad_mode(ctx)) {
        ctx->flags |= FPEMU_FLAG_INVALID;
        return zero_point < qmin ? qmin : zero_point > qmax ? qmax : zero_point;
    }
    double q = x / scale;
    int64_t r;
    int inexact = 0;
    if (isinf(q) || fabs(q) >= 0x1p40) {
        r = q < 0 ? INT64_MIN / 2 : INT64_MAX / 2; /* clamps below */
        inexact = 1;
    } else if (ctx->round == FPEMU_SR && x != 0) {
        /* sr decides on 64 bits of the fraction: the exact quotient */
        r = emu__round_quotient(x, scale, ctx, &inexact);
    } else {
        /* The quotient is exact up to the sign of its remainder. */
        double rem = fma(-q, scale, x);
        r = emu__round_to_int(q, (rem > 0) - (rem < 0), ctx, &inexact);
    }
    int64_t v = r + zero_point;
    if (inexact) ctx->flags |= FPEMU_FLAG_INEXACT;
    if (v < qmin || v > qmax) {
        ctx->flags |= FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
        v = v < qmin ? qmin : qmax;
    }
    return (int32_t)v;
}

/* Under the library's floating-point environment, set and put back only
 * where needed (internal.h emu__fpenv_enter_lazy): two MXCSR writes a call
 * would cost more than the call. */
int32_t fpemu_quantize(double x, double scale, int32_t zero_point, int qmin, int qmax, fpemu_ctx *ctx) {
    const unsigned fe = emu__fpenv_enter_lazy();
    EMU_LAUNDER(x);
    EMU_LAUNDER(scale);
    int32_t r = quantize_one(x, scale, zero_point, qmin, qmax, ctx);
    EMU_LAUNDER(r);
    emu__fpenv_leave_lazy(fe);
    return r;
}

float fpemu_dequantize(int32_t q, double scale, int32_t zero_point) {
    const unsigned fe = emu__fpenv_enter_lazy();
    EMU_LAUNDER(scale);
    float r = (float)(((double)q - (double)zero_point) * scale);
    EMU_LAUNDER(r);
    emu__fpenv_leave_lazy(fe);
    return r;
}

void fpemu_quantize_array(int32_t *q, const float *x, size_t n, double scale, int32_t zero_point, int qmin, int qmax,
                          fpemu_ctx *ctx) {
    uint64_t base = ctx->counter;
    size_t pos = ctx->sr_pos;
    const unsigned fe = emu__fpenv_enter(); /* (rne, no FTZ or DAZ; the caller's put back, flags too) */
    for (size_t i = 0; i < n; i++) {
        emu__array_at(ctx, base, pos, i); /* element i always takes draw i, of either stream */
        q[i] = quantize_one(x[i], scale, zero_point, qmin, qmax, ctx);
    }
    emu__fpenv_leave(fe);
    emu__array_at(ctx, base, pos, n);
}

static int32_t finish_i32(int64_t acc, int saturate) {
    if (saturate) return acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : (int32_t)acc;
    return (int32_t)(uint32_t)(uint64_t)acc; /* two's complement wrap */
}

int32_t fpemu_dot_i8(const int8_t *a, const int8_t *b, size_t n, int32_t c, int saturate) {
    int64_t acc = c;
    for (size_t i = 0; i < n; i++) acc += (int32_t)a[i] * b[i];
    return finish_i32(acc, saturate);
}

int32_t fpemu_dot_u8i8(const uint8_t *a, const int8_t *b, size_t n, int32_t c, int saturate) {
    int64_t acc = c;
    for (size_t i = 0; i < n; i++) acc += (int32_t)a[i] * b[i];
    return finish_i32(acc, saturate);
}
