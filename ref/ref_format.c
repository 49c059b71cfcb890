/* SPDX-License-Identifier: MIT */
/* ref_format.c: the reference's own reading of a format descriptor, and its
 * own decoder. Nothing here calls emu/ code: the descriptor is data. */
#include <math.h>
#include <string.h>
#include "ref.h"

int ref_format_init(ref_format *rf, const fpemu_format *f) {
    memset(rf, 0, sizeof *rf);
    if (!f) return -1;
    rf->desc = f;
    rf->bits = f->bits;
    rf->pad = f->pad;
    rf->ebits = f->ebits;
    rf->mbits = f->mbits;
    rf->bias = f->bias;
    rf->p = f->p;
    rf->emin = f->emin;
    rf->emax = f->emax;
    rf->is_signed = f->is_signed;
    rf->has_negzero = f->is_signed && f->has_negzero;
    rf->inf = f->inf;
    rf->nan = f->nan;
    rf->has_inf = f->inf != FPEMU_INF_NONE;
    rf->has_nan = f->nan != FPEMU_NANS_NONE;
    rf->maxmant = f->maxmant;
    if (rf->bits < 2 || rf->bits + rf->pad > 64 || rf->ebits < 1 || rf->ebits > 11 || rf->mbits < 0 ||
        rf->mbits > 52 || rf->p != rf->mbits + 1 || rf->bits != rf->ebits + rf->mbits + (rf->is_signed ? 1 : 0))
        return -1;
    /* Exponent field 0 holds zero and subnormals unless it is a normal binade
     * (e8m0: 2^-127, no zero). */
    rf->has_zero = rf->emin + rf->bias >= 1;
    rf->ef_max = (UINT64_C(1) << rf->ebits) - 1;
    rf->mmask = (UINT64_C(1) << rf->mbits) - 1;
    rf->sign = rf->is_signed ? UINT64_C(1) << (rf->bits - 1) : 0;
    uint64_t magmask = (UINT64_C(1) << (rf->bits - (rf->is_signed ? 1 : 0))) - 1;
    if (rf->emax + rf->bias < 0 || (uint64_t)(rf->emax + rf->bias) > rf->ef_max || rf->maxmant > rf->mmask) return -1;
    rf->code_max = ((((uint64_t)(rf->emax + rf->bias)) << rf->mbits) | rf->maxmant) << rf->pad;
    switch (rf->inf) {
    case FPEMU_INF_IEEE: rf->code_inf = (rf->ef_max << rf->mbits) << rf->pad; break;
    case FPEMU_INF_TOP: rf->code_inf = magmask << rf->pad; break;
    default: rf->code_inf = 0;
    }
    switch (rf->nan) {
    case FPEMU_NANS_IEEE:
        if (rf->mbits < 1) return -1;
        rf->code_nan = ((rf->ef_max << rf->mbits) | (UINT64_C(1) << (rf->mbits - 1))) << rf->pad;
        break;
    case FPEMU_NANS_FN: rf->code_nan = magmask << rf->pad; break;
    case FPEMU_NANS_UZ: rf->code_nan = rf->sign << rf->pad; break;
    case FPEMU_NANS_ALLONES: rf->code_nan = ((UINT64_C(1) << rf->bits) - 1) << rf->pad; break;
    default: rf->code_nan = 0;
    }
    /* every value must be a double (docs/formats.md: custom formats e <= 8, m <= 23) */
    if (rf->emin - rf->mbits < -1074 || rf->emax > 1023) return -1;
    return 0;
}

void ref_decode(const ref_format *rf, uint64_t code, int daz, ref_value *v) {
    uint64_t c = (code >> rf->pad) & ((rf->bits == 64 ? 0 : (UINT64_C(1) << rf->bits)) - 1);
    if (rf->bits == 64) c = code;
    int s = rf->is_signed ? (int)((c >> (rf->bits - 1)) & 1) : 0;
    uint64_t mag = c & ~rf->sign;
    uint64_t magmask = rf->is_signed ? rf->sign - 1 : (rf->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << rf->bits) - 1);
    uint64_t ef = mag >> rf->mbits, mf = mag & rf->mmask;
    v->sign = s;
    v->sig = 0;
    v->exp = 0;
    switch (rf->nan) {
    case FPEMU_NANS_IEEE:
        if (ef == rf->ef_max && mf != 0) {
            v->cls = ((mf >> (rf->mbits - 1)) & 1) ? REF_QNAN : REF_SNAN;
            return;
        }
        break;
    case FPEMU_NANS_FN:
        if (mag == magmask) { v->cls = REF_QNAN; return; }
        break;
    case FPEMU_NANS_UZ:
        if (s && mag == 0) { v->cls = REF_QNAN; return; }
        break;
    case FPEMU_NANS_ALLONES:
        if (mag == magmask && (!rf->is_signed || s)) { v->cls = REF_QNAN; return; }
        break;
    default: break;
    }
    if ((rf->inf == FPEMU_INF_IEEE && ef == rf->ef_max && mf == 0) || (rf->inf == FPEMU_INF_TOP && mag == magmask)) {
        v->cls = REF_INF;
        return;
    }
    int e = (int)ef - rf->bias;
    if (e < rf->emin) { /* subnormal or zero (field 0) */
        if (mf == 0 || daz) { v->cls = REF_ZERO; return; }
        v->cls = REF_FINITE;
        v->sig = mf;
        v->exp = rf->emin - rf->mbits;
        return;
    }
    v->cls = REF_FINITE;
    v->sig = (UINT64_C(1) << rf->mbits) | mf;
    v->exp = e - rf->mbits;
}

int ref_is_nan(const ref_format *rf, uint64_t code) {
    ref_value v;
    ref_decode(rf, code, 0, &v);
    return v.cls == REF_QNAN || v.cls == REF_SNAN;
}

double ref_to_double(const ref_format *rf, uint64_t code) {
    ref_value v;
    ref_decode(rf, code, 0, &v);
    switch (v.cls) {
    case REF_ZERO: return v.sign ? -0.0 : 0.0;
    case REF_INF: return v.sign ? -INFINITY : INFINITY;
    case REF_QNAN:
    case REF_SNAN: return v.sign ? -NAN : NAN;
    default: break;
    }
    double d = ldexp((double)v.sig, v.exp);
    return v.sign ? -d : d;
}
