/* SPDX-License-Identifier: MIT */
/* t_emu_oracle.c: every <= 8-bit format, every pair (add, sub, mul, div),
 * every input (sqrt, conversion to every other small format), every
 * rounding mode but sr, sat on/off, tininess before/after, ftz: compared
 * bit for bit, flags included, with an oracle that rounds by enumeration.
 *
 * The oracle shares no code with emu/'s rounding: it lists every finite
 * value of the format, brackets the exact result between two neighbours
 * using exact comparisons (products of small-format values are exact
 * doubles), and applies the mode's rule and the overflow/underflow rules
 * of docs/semantics.md (IEEE 754-2019 clauses 4 and 7, extended to the
 * small formats) directly. Specials (NaN, inf and zero operands) are left
 * to t_emu_special. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"

typedef struct {
    const fpemu_format *f;
    int n;            /* finite nonnegative values */
    double v[300];    /* sorted ascending, v[0] = 0 or the smallest (e8m0) */
    uint64_t code[300];
} table;

static void build(table *t, const fpemu_format *f) {
    t->f = f;
    t->n = 0;
    for (uint64_t c = 0; c < (UINT64_C(1) << f->bits); c++) {
        if (c & f->sign_bit) continue;
        fpemu_class k = fpemu_classify(f, c);
        if (k == FPEMU_CLASS_INF || k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN) continue;
        t->v[t->n] = fpemu_to_double(f, c);
        t->code[t->n++] = c;
    }
    /* codes of a sign-magnitude format ascend with value already */
}

/* sign(y - X) for the exact result X, from an exact predicate. */
typedef int (*cmp_fn)(double y, const double *args);

static int cmp_val(double y, const double *a) { return (y > a[0]) - (y < a[0]); }
static int cmp_div(double y, const double *a) { /* X = a0 / a1 */
    double p = y * a[1];                           /* exact: small formats */
    int s = (p > a[0]) - (p < a[0]);
    return a[1] < 0 ? -s : s;
}
static int cmp_sqrt(double y, const double *a) { /* X = sqrt(a0), y >= 0 */
    if (y < 0) return -1;
    double p = y * y;
    return (p > a[0]) - (p < a[0]);
}

/* Parity of a value's significand at the quantum of lo. */
static double quantum(const fpemu_format *f, double lo) {
    int e;
    if (lo == 0) return ldexp(1.0, f->emin - f->mbits);
    frexp(lo, &e);
    e -= 1; /* lo in [2^e, 2^(e+1)) */
    if (e < f->emin && f->has_subnormals) e = f->emin;
    return ldexp(1.0, e - f->mbits);
}

typedef struct { uint64_t code; unsigned flags; } res;

static uint64_t neg(const fpemu_format *f, uint64_t c, int sign) {
    if (!sign) return c;
    return c | f->sign_bit;
}

/* Round |X| (the exact result, X's sign = sign, X != 0, finite). */
static res oracle(const table *t, int sign, cmp_fn cmp, const double *args, const fpemu_ctx *ctx) {
    const fpemu_format *f = t->f;
    res r = {0, 0};
    fpemu_round mode = ctx->round;
    /* compare magnitude: cm(y) = sign(y - |X|) */
#define CM(y) (sign ? -cmp(-(y), args) : cmp((y), args))
    double maxv = t->v[t->n - 1];
    double above = maxv + ldexp(1.0, f->emax - f->mbits); /* next p-bit value past max */
    /* unsigned formats: negative results are invalid */
    if (!f->is_signed && sign) { r.code = 0xFF; r.flags = FPEMU_FLAG_INVALID; return r; }
    int i = 0;
    while (i + 1 < t->n && CM(t->v[i + 1]) <= 0) i++;
    double lo, hi;
    int lo_i = i, hi_beyond = 0;
    if (CM(t->v[i]) > 0) { lo = 0; hi = t->v[0]; lo_i = -1; } /* below the smallest (e8m0) */
    else lo = t->v[i];
    if (lo_i >= 0 && CM(lo) == 0) { hi = lo; }
    else if (lo_i == t->n - 1) { hi = above; hi_beyond = 1; }
    else if (lo_i >= 0) hi = t->v[lo_i + 1];
    int exact = lo_i >= 0 && CM(lo) == 0;
    double q = quantum(f, lo_i >= 0 ? lo : 0);
    int lo_odd = lo_i >= 0 ? ((int64_t)(lo / q)) & 1 : 0;
    double mid = (lo + hi) / 2;
    int cmid = exact ? 0 : CM(mid);
    int up = 0;
    if (!exact) {
        switch (mode) {
        case FPEMU_RNE: up = cmid < 0 || (cmid == 0 && lo_odd); break;
        case FPEMU_RNA: up = cmid <= 0; break;
        case FPEMU_RTZ: up = 0; break;
        case FPEMU_RUP: up = !sign; break;
        case FPEMU_RDN: up = sign; break;
        case FPEMU_RTO: up = !lo_odd; break;
        default: break;
        }
    }
    double val = up ? hi : lo;
    /* Overflow: rounded with unbounded range past max; at or past `above`
     * that happens in every mode, between max and above only when rounding up. */
    int beyond = lo_i == t->n - 1 && !exact && (CM(above) <= 0 || (up && hi_beyond));
    /* tininess */
    double mn = f->min_normal;
    int tiny;
    if (ctx->tininess_before) tiny = CM(mn) > 0;
    else {
        double lo2 = mn - ldexp(1.0, f->emin - 1 - f->mbits); /* unbounded-precision neighbour below min normal */
        if (CM(mn) <= 0) tiny = 0;
        else if (CM(lo2) >= 0) tiny = 1;
        else {
            int c2 = CM((lo2 + mn) / 2), u2 = 0;
            switch (mode) {
            case FPEMU_RNE: u2 = c2 <= 0; break; /* mn is even */
            case FPEMU_RNA: u2 = c2 <= 0; break;
            case FPEMU_RTZ: u2 = 0; break;
            case FPEMU_RUP: u2 = !sign; break;
            case FPEMU_RDN: u2 = sign; break;
            case FPEMU_RTO: u2 = 0; break; /* lo2 is odd */
            default: break;
            }
            tiny = !u2;
        }
    }
    if (tiny && ctx->ftz) {
        r.flags = FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT;
        r.code = f->has_subnormals ? (sign && f->has_negzero ? f->sign_bit : 0) : 0;
        return r;
    }
    if (!f->has_subnormals && lo_i < 0 && !up) { /* e8m0: below its smallest value */
        r.code = 0;
        r.flags = FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT;
        return r;
    }
    if (beyond) {
        r.flags = FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
        int to_inf = 1;
        if (mode == FPEMU_RTZ || mode == FPEMU_RTO) to_inf = 0;
        if (mode == FPEMU_RUP) to_inf = !sign;
        if (mode == FPEMU_RDN) to_inf = sign;
        if (!to_inf || ctx->sat) { r.code = neg(f, f->max_code, sign); return r; }
        if (f->inf == FPEMU_INF_IEEE) { r.code = neg(f, (((UINT64_C(1) << f->ebits) - 1) << f->mbits), sign); return r; }
        if (f->inf == FPEMU_INF_TOP) { r.code = neg(f, f->mag_mask, sign); return r; }
        if (f->nan == FPEMU_NANS_NONE) { r.code = neg(f, f->max_code, sign); return r; }
        r.code = UINT64_MAX; /* any NaN */
        return r;
    }
    if (!exact) r.flags |= FPEMU_FLAG_INEXACT | (tiny ? FPEMU_FLAG_UNDERFLOW : 0);
    int idx = up ? lo_i + 1 : lo_i;
    if (val == 0) { r.code = sign && f->has_negzero ? f->sign_bit : 0; return r; }
    r.code = neg(f, t->code[idx], sign);
    return r;
}

static int failures;

static int same(const fpemu_format *f, uint64_t got, unsigned gf, res want) {
    if (want.code == UINT64_MAX) return fpemu_is_nan(f, got) && gf == want.flags;
    return got == want.code && gf == want.flags;
}

static void report(const char *what, const fpemu_format *f, const fpemu_ctx *c, uint64_t a, uint64_t b, uint64_t got,
                   unsigned gf, res want) {
    if (++failures <= 12)
        diag("%s %s %s%s%s%s: %02llX %02llX => emu %02llX %02X, oracle %02llX %02X", f->name, what,
             fpemu_round_name(c->round), c->sat ? " sat" : "", c->tininess_before ? " before" : "", c->ftz ? " ftz" : "",
             (unsigned long long)a, (unsigned long long)b, (unsigned long long)got, gf,
             (unsigned long long)want.code, want.flags);
}

static int finite_nonzero(const fpemu_format *f, uint64_t c) {
    fpemu_class k = fpemu_classify(f, c);
    return k == FPEMU_CLASS_NORMAL || k == FPEMU_CLASS_SUBNORMAL;
}

int main(void) {
    static const char *names[] = {"e5m2", "e4m3", "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1", "e8m0",
                                  "binary8p1e", "binary8p2f", "binary8p3e", "binary8p4f", "binary8p5e", "binary8p6f",
                                  "binary8p7e", "binary8p4e", "binary8p3f", "e6m1", "e3m4fn"};
    int nf = sizeof names / sizeof names[0];
    static table t;
    for (int fi = 0; fi < nf; fi++) {
        const fpemu_format *f = fpemu_format_get(names[fi], NULL, 0);
        if (!f) { ok(0, "format %s exists", names[fi]); continue; }
        build(&t, f);
        long cases = 0;
        failures = 0;
        uint64_t N = UINT64_C(1) << f->bits;
        for (int mode = 0; mode < FPEMU_RTO + 1; mode++)
            for (int variant = 0; variant < 4; variant++) {
                fpemu_ctx c;
                fpemu_ctx_init(&c);
                c.round = (fpemu_round)mode;
                c.sat = variant & 1;
                c.tininess_before = (variant >> 1) & 1;
                if (variant == 3) c.ftz = 1, c.tininess_before = mode & 1;
                for (uint64_t a = 0; a < N; a++) {
                    if (!finite_nonzero(f, a)) continue;
                    double va = fpemu_to_double(f, a);
                    /* sqrt of positive values */
                    if (va > 0) {
                        double args[1] = {va};
                        res w = oracle(&t, 0, cmp_sqrt, args, &c);
                        c.flags = 0;
                        uint64_t g = fpemu_sqrt(f, a, &c);
                        cases++;
                        if (!same(f, g, c.flags, w)) report("sqrt", f, &c, a, 0, g, c.flags, w);
                    }
                    for (uint64_t b = 0; b < N; b++) {
                        if (!finite_nonzero(f, b)) continue;
                        double vb = fpemu_to_double(f, b);
                        double s = va + vb, d = va - vb, p = va * vb; /* exact */
                        struct { const char *n; double x; } ex[3] = {{"add", s}, {"sub", d}, {"mul", p}};
                        for (int k = 0; k < 3; k++) {
                            if (ex[k].x == 0) continue;
                            /* e >= 6 formats: a sum may not be an exact double; the oracle needs exact */
                            if (k < 2 && (ex[k].x - va != (k ? -vb : vb) || ex[k].x - (k ? -vb : vb) != va)) continue;
                            double args[1] = {ex[k].x};
                            res w = oracle(&t, ex[k].x < 0, cmp_val, args, &c);
                            c.flags = 0;
                            uint64_t g = k == 0 ? fpemu_add(f, a, b, &c) : k == 1 ? fpemu_sub(f, a, b, &c) : fpemu_mul(f, a, b, &c);
                            cases++;
                            if (!same(f, g, c.flags, w)) report(ex[k].n, f, &c, a, b, g, c.flags, w);
                        }
                        double args[2] = {va, vb};
                        res w = oracle(&t, (va < 0) != (vb < 0), cmp_div, args, &c);
                        c.flags = 0;
                        uint64_t g = fpemu_div(f, a, b, &c);
                        cases++;
                        if (!same(f, g, c.flags, w)) report("div", f, &c, a, b, g, c.flags, w);
                    }
                }
            }
        ok(failures == 0, "%s: %ld cases of add/sub/mul/div/sqrt x 6 modes x sat/tininess/ftz agree with the oracle (%d mismatches)",
           f->name, cases, failures);
    }
    /* Conversions: every value of every small format into every other. */
    failures = 0;
    long cases = 0;
    for (int di = 0; di < nf; di++) {
        const fpemu_format *dst = fpemu_format_get(names[di], NULL, 0);
        build(&t, dst);
        for (int si = 0; si < nf; si++) {
            const fpemu_format *src = fpemu_format_get(names[si], NULL, 0);
            for (int mode = 0; mode < FPEMU_RTO + 1; mode++)
                for (int sat = 0; sat < 2; sat++) {
                    fpemu_ctx c;
                    fpemu_ctx_init(&c);
                    c.round = (fpemu_round)mode;
                    c.sat = sat;
                    for (uint64_t a = 0; a < (UINT64_C(1) << src->bits); a++) {
                        if (!finite_nonzero(src, a)) continue;
                        double va = fpemu_to_double(src, a);
                        double args[1] = {va};
                        res w = oracle(&t, va < 0, cmp_val, args, &c);
                        c.flags = 0;
                        uint64_t g = fpemu_convert(dst, src, a, &c);
                        cases++;
                        if (!same(dst, g, c.flags, w)) {
                            char what[160];
                            snprintf(what, sizeof what, "from %s", src->name);
                            report(what, dst, &c, a, 0, g, c.flags, w);
                        }
                    }
                }
        }
    }
    ok(failures == 0, "conversions among %d small formats: %ld cases agree with the oracle (%d mismatches)", nf, cases, failures);
    return done_testing();
}
