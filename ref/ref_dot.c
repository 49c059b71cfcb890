/* SPDX-License-Identifier: MIT */
/* ref_dot.c: exact dot products on MPFR (see ref_dot.h). */
#include <limits.h>
#include <stdlib.h>
#include "ref.h"
#include "ref_dot.h"

/* Exponent span of the finite terms, to size the exact precision. */
typedef struct { int cls, sign; mpfr_exp_t lo, hi; } span;

static int decode_fmt(const fpemu_format *f, ref_format *rf) { return f ? ref_format_init(rf, f) : 0; }

int ref_dot_exact(mpfr_t rop, const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc,
                  const uint64_t *a, const uint64_t *b, size_t k, uint64_t c, const fpemu_format *sfmt,
                  const uint64_t *sa, const uint64_t *sb, int sblock) {
    ref_format ra, rb, rc, rs;
    if (decode_fmt(fa, &ra) || decode_fmt(fb, &rb) || (fc && decode_fmt(fc, &rc)) || (sfmt && decode_fmt(sfmt, &rs)))
        return -1;
    if (sblock <= 0) sblock = 32;
    /* pass 1: specials and the exponent span */
    int nan = 0, pinf = 0, ninf = 0;
    long lo = LONG_MAX, hi = LONG_MIN;
    ref_value va, vb, vc, v1, v2;
    if (fc) {
        ref_decode(&rc, c, 0, &vc);
        if (vc.cls == REF_QNAN || vc.cls == REF_SNAN) nan = 1;
        else if (vc.cls == REF_INF) { if (vc.sign) ninf = 1; else pinf = 1; }
        else if (vc.cls == REF_FINITE) {
            lo = vc.exp;
            hi = vc.exp + 64;
        }
    }
    for (size_t i = 0; i < k; i++) {
        ref_decode(&ra, a[i], 0, &va);
        ref_decode(&rb, b[i], 0, &vb);
        int sgn = va.sign ^ vb.sign;
        long e = (long)va.exp + vb.exp;
        int zero = va.cls == REF_ZERO || vb.cls == REF_ZERO;
        if (sfmt) {
            ref_decode(&rs, sa[i / (size_t)sblock], 0, &v1);
            ref_decode(&rs, sb[i / (size_t)sblock], 0, &v2);
            if (v1.cls == REF_QNAN || v1.cls == REF_SNAN || v2.cls == REF_QNAN || v2.cls == REF_SNAN) { nan = 1; continue; }
            if (v1.cls == REF_ZERO || v2.cls == REF_ZERO) zero = 1;
            e += (long)v1.exp + v2.exp;
        }
        if (va.cls == REF_QNAN || va.cls == REF_SNAN || vb.cls == REF_QNAN || vb.cls == REF_SNAN) { nan = 1; continue; }
        if (va.cls == REF_INF || vb.cls == REF_INF) {
            if (zero) nan = 1;
            else if (sgn) ninf = 1;
            else pinf = 1;
            continue;
        }
        if (zero) continue;
        if (e < lo) lo = e;
        if (e + 256 > hi) hi = e + 256;
    }
    if (nan || (pinf && ninf)) { mpfr_set_nan(rop); return 0; }
    if (pinf || ninf) { mpfr_set_inf(rop, ninf ? -1 : 1); return 2; }
    if (lo == LONG_MAX) { /* every term zero */
        mpfr_set_prec(rop, 64);
        int allneg = fc ? (vc.cls == REF_ZERO && vc.sign) : 0;
        if (!fc) allneg = 1;
        for (size_t i = 0; i < k && allneg; i++) {
            ref_decode(&ra, a[i], 0, &va);
            ref_decode(&rb, b[i], 0, &vb);
            if (!(va.sign ^ vb.sign)) allneg = 0;
        }
        if (k == 0 && !fc) allneg = 0;
        mpfr_set_zero(rop, allneg ? -1 : 1);
        return 1;
    }
    /* pass 2: exact accumulation (precision covers the span plus carries) */
    mpfr_prec_t prec = (mpfr_prec_t)(hi - lo) + 64 + 2 * (mpfr_prec_t)(sizeof(size_t) * 8);
    mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_set_prec(rop, prec);
    mpfr_set_zero(rop, 1);
    mpfr_t t;
    mpfr_init2(t, 320);
    if (fc && vc.cls == REF_FINITE) {
        mpfr_set_uj_2exp(t, vc.sig, vc.exp, MPFR_RNDN);
        if (vc.sign) mpfr_neg(t, t, MPFR_RNDN);
        mpfr_add(rop, rop, t, MPFR_RNDN);
    }
    for (size_t i = 0; i < k; i++) {
        ref_decode(&ra, a[i], 0, &va);
        ref_decode(&rb, b[i], 0, &vb);
        if (va.cls != REF_FINITE || vb.cls != REF_FINITE) continue;
        mpfr_set_uj_2exp(t, va.sig, va.exp, MPFR_RNDN);
        mpfr_mul_2si(t, t, 0, MPFR_RNDN);
        mpfr_t u;
        mpfr_init2(u, 64);
        mpfr_set_uj_2exp(u, vb.sig, vb.exp, MPFR_RNDN);
        mpfr_mul(t, t, u, MPFR_RNDN); /* exact: 320 bits >= 4 x 64 */
        if (sfmt) {
            ref_decode(&rs, sa[i / (size_t)sblock], 0, &v1);
            ref_decode(&rs, sb[i / (size_t)sblock], 0, &v2);
            if (v1.cls != REF_FINITE || v2.cls != REF_FINITE) { mpfr_clear(u); continue; }
            mpfr_set_uj_2exp(u, v1.sig, v1.exp, MPFR_RNDN);
            mpfr_mul(t, t, u, MPFR_RNDN);
            mpfr_set_uj_2exp(u, v2.sig, v2.exp, MPFR_RNDN);
            mpfr_mul(t, t, u, MPFR_RNDN);
        }
        mpfr_clear(u);
        if (va.sign ^ vb.sign) mpfr_neg(t, t, MPFR_RNDN);
        mpfr_add(rop, rop, t, MPFR_RNDN); /* exact at prec */
    }
    mpfr_clear(t);
    if (mpfr_zero_p(rop)) mpfr_set_zero(rop, 1); /* cancellation gives +0 (rne) */
    mpfr_set_emin(old_emin);
    mpfr_set_emax(old_emax);
    return 1;
}

static mpfr_rnd_t mode(fpemu_round r, int *ok) {
    switch (r) {
    case FPEMU_RNE: return MPFR_RNDN;
    case FPEMU_RTZ: return MPFR_RNDZ;
    case FPEMU_RUP: return MPFR_RNDU;
    case FPEMU_RDN: return MPFR_RNDD;
    default: *ok = 0; return MPFR_RNDN;
    }
}

uint64_t ref_round_to_format(mpfr_srcptr x, const fpemu_format *f, fpemu_round rnd, int *ok) {
    ref_format rf;
    *ok = 1;
    if (ref_format_init(&rf, f) || !rf.has_zero) { *ok = 0; return 0; }
    mpfr_rnd_t m = mode(rnd, ok);
    if (!*ok) return 0;
    if (mpfr_nan_p(x)) return rf.code_nan ? rf.code_nan : rf.code_max;
    int neg = mpfr_signbit(x) != 0;
    uint64_t sbit = rf.sign << rf.pad;
    if (mpfr_inf_p(x)) {
        if (rf.has_inf) return rf.code_inf | (neg ? sbit : 0);
        return rf.code_nan ? rf.code_nan : (rf.code_max | (neg ? sbit : 0));
    }
    if (mpfr_zero_p(x)) return neg && rf.has_negzero ? sbit : 0;
    mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_t r;
    mpfr_init2(r, rf.p);
    int tern = mpfr_set(r, x, m);
    /* overflow: rounded with unbounded exponent range beyond max finite */
    mpfr_t mx;
    mpfr_init2(mx, rf.p);
    mpfr_set_uj_2exp(mx, (uintmax_t)(rf.maxmant | (UINT64_C(1) << rf.mbits)), rf.emax - rf.mbits, MPFR_RNDN);
    uint64_t code;
    if (mpfr_cmpabs(r, mx) > 0) {
        int to_inf = m == MPFR_RNDN || (m == MPFR_RNDU && !neg) || (m == MPFR_RNDD && neg);
        if (to_inf && rf.has_inf) code = rf.code_inf | (neg ? sbit : 0);
        else if (to_inf && rf.code_nan && rf.nan != FPEMU_NANS_NONE) code = rf.code_nan;
        else code = rf.code_max | (neg ? sbit : 0);
    } else {
        if (mpfr_get_exp(r) - 1 < rf.emin) { /* below the min normal: round on the subnormal grid instead */
            mpfr_set_emin(rf.emin - rf.mbits + 1); /* MPFR exponents: value in [2^(e-1), 2^e) */
            mpfr_set_emax(rf.emax + 1);
            mpfr_set_prec(r, rf.p);
            tern = mpfr_set(r, x, m);
            tern = mpfr_check_range(r, tern, m);
            mpfr_subnormalize(r, tern, m);
            mpfr_set_emin(mpfr_get_emin_min());
            mpfr_set_emax(mpfr_get_emax_max());
        }
        if (mpfr_zero_p(r)) {
            code = neg && rf.has_negzero ? sbit : 0;
        } else {
            mpfr_exp_t e = mpfr_get_exp(r) - 1; /* |r| in [2^e, 2^(e+1)) */
            mpfr_t s;
            mpfr_init2(s, rf.p + 2);
            mpfr_abs(s, r, MPFR_RNDN);
            uint64_t field;
            if (e < rf.emin) { /* subnormal: mantissa = |r| / 2^(emin - mbits) */
                mpfr_mul_2si(s, s, -(long)(rf.emin - rf.mbits), MPFR_RNDN);
                field = (uint64_t)mpfr_get_uj(s, MPFR_RNDN);
            } else {
                mpfr_mul_2si(s, s, -(long)(e - rf.mbits), MPFR_RNDN);
                uint64_t sig = (uint64_t)mpfr_get_uj(s, MPFR_RNDN);
                field = ((uint64_t)(e + rf.bias) << rf.mbits) | (sig & rf.mmask);
            }
            mpfr_clear(s);
            code = (field << rf.pad) | (neg ? sbit : 0);
        }
    }
    (void)tern;
    mpfr_clear(r);
    mpfr_clear(mx);
    mpfr_set_emin(old_emin);
    mpfr_set_emax(old_emax);
    return code;
}

int ref_dot(const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc, const fpemu_format *fd,
            fpemu_round rnd, const uint64_t *a, const uint64_t *b, size_t k, uint64_t c, uint64_t *d) {
    mpfr_t x;
    mpfr_init2(x, 64);
    int r = ref_dot_exact(x, fa, fb, fc, a, b, k, c, NULL, NULL, NULL, 0);
    if (r < 0) { mpfr_clear(x); return -1; }
    if (r == 1 && mpfr_zero_p(x) && rnd == FPEMU_RDN) {
        /* an exact zero from nonzero terms is -0 under rdn (IEEE 754 6.3) */
        int anynz = 0;
        ref_format ra, rb;
        ref_format_init(&ra, fa), ref_format_init(&rb, fb);
        for (size_t i = 0; i < k && !anynz; i++) {
            ref_value va, vb;
            ref_decode(&ra, a[i], 0, &va), ref_decode(&rb, b[i], 0, &vb);
            anynz = va.cls == REF_FINITE && vb.cls == REF_FINITE;
        }
        if (anynz) mpfr_set_zero(x, -1);
    }
    int ok;
    *d = ref_round_to_format(x, fd, rnd, &ok);
    mpfr_clear(x);
    return ok ? 0 : -1;
}

double ref_dot_double(const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc, const uint64_t *a,
                      const uint64_t *b, size_t k, uint64_t c) {
    mpfr_t x;
    mpfr_init2(x, 64);
    int r = ref_dot_exact(x, fa, fb, fc, a, b, k, c, NULL, NULL, NULL, 0);
    double v = r < 0 ? __builtin_nan("") : mpfr_get_d(x, MPFR_RNDN);
    mpfr_clear(x);
    return v;
}
