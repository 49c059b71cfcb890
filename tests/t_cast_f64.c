/* SPDX-License-Identifier: MIT */
/* t_cast_f64.c: a cast of doubles with no recipe (fpemu_caster_run_f64,
 * what `fpemu cast` does with an f64 input) against the scalar conversion
 * of each element, fpemu_from_double: the codes, the values (a NaN code's
 * double as the NaN policy gives it), the counts and every figure, bit for
 * bit. The caster rounds such doubles to odd to f32 first where the format
 * allows it (caststats.c, odd_cast), so the inputs sit where that could go
 * wrong: on and around each value of the format and each midpoint between
 * two, at offsets below f32's last bit and at f32's own midpoints; below
 * f32's subnormals; at and beyond f32's largest; infinities; NaNs with
 * payloads; random doubles; and the same without the doubles beyond
 * f32's range, infinities and NaNs (the ones the odd path leaves to the
 * scalar conversion). The formats include custom ones at the edges of the
 * odd path (a 22-bit precision, a quantum of 2^-147) and just past them
 * (the scalar path), and every mode (sr takes the scalar path); each with
 * the odd path's AVX-512 loops (where the CPU has them) and its portable
 * ones. Then, on
 * x86, casts under a caller's MXCSR with FTZ, DAZ and round toward zero:
 * the same results, and no flag raised in it, for f64 and for f32 inputs
 * (with and without a recipe). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpemu.h"
#include "fpemu_api.h"
#include "tap.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <xmmintrin.h>
#define HOSTILE 0xFFC0u /* MXCSR: FTZ, DAZ, round toward zero, every exception masked, no flag */
#else
#define HOSTILE 0u
#endif

int emu__caster_simd(int on); /* emu/caststats.c: the odd path's AVX-512 loops on or off (tests only) */

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next(void) { /* splitmix64 */
    uint64_t z = (rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static double bitsd(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }
static uint64_t dbits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }

typedef struct { double *x; size_t n, cap; } vec;
static void put(vec *v, double x) {
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 4096;
        v->x = realloc(v->x, sizeof(double) * v->cap);
        if (!v->x) bail("out of memory");
    }
    v->x[v->n++] = x;
}
/* x and -x */
static void put2(vec *v, double x) { put(v, x), put(v, -x); }

/* the distance between f32's neighbours at |x| (x finite, nonzero) */
static double ulp32(double x) {
    int e;
    frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
    return ldexp(1, (e - 1 < -126 ? -126 : e - 1) - 23);
}

/* Points around t: t, t moved by a fraction of f32's last place (below
 * it, at its half, and just past that), and by a double's last place. */
static void around(vec *v, double t) {
    put2(v, t);
    if (t == 0) return;
    const double u = ulp32(t);
    const double d[] = {u / 2, u / 4, u * 0.75, u / 1024, ldexp(u, -29), nextafter(u / 2, 0), nextafter(u / 2, 1)};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) put2(v, t + d[i]), put2(v, t - d[i]);
    put2(v, nextafter(t, 0)), put2(v, nextafter(t, INFINITY));
}

/* The inputs for format f: its values and midpoints (every positive code
 * of a format of at most 12 bits, else a sample and the ends), each with
 * the points around it; the edges of f32 and f64; NaNs; random doubles. */
static vec inputs(const fpemu_format *f) {
    vec v = {0};
    const uint64_t top = f->max_code; /* (positive finite codes: 0 .. max_code) */
    const int all = f->bits <= 12;
    for (uint64_t s = 0; s <= (all ? top : 512); s++) {
        uint64_t k = all ? s : s < 128 ? s : s < 256 ? top - (s - 128) : next() % (top + 1);
        if (!all && s >= 256 && s % 5 == 0) k = (uint64_t)1 << f->mbits | (next() & 3); /* near the smallest normal */
        if (k > top) continue;
        const uint64_t code = k << f->pad;
        const double a = fpemu_to_double(f, code);
        if (!isfinite(a)) continue;
        around(&v, a);
        if (k < top) {
            const double b = fpemu_to_double(f, (k + 1) << f->pad);
            if (isfinite(b) && b > a) around(&v, a + (b - a) / 2);
        } else {
            /* past the largest: a half step on, and one step */
            const double ulp = k > 0 ? a - fpemu_to_double(f, (k - 1) << f->pad) : a;
            around(&v, a + ulp / 2), around(&v, a + ulp);
        }
    }
    /* f32's and f64's edges */
    const double edge[] = {0x1p-149, 0x1p-150, 0x1.8p-150, 0x1.8p-149, 0x1p-160, 0x1p-1074, 0x1p-1022, 0x1p-126,
                           0x1p-127, 0x1p-128, 0x1p-147, 0x1p-148, 0x1.4p-148, FLT_MAX, 0x1.fffffep127 + 0x1p103,
                           0x1p128, 0x1.0000001p128, 0x1p300, DBL_MAX, 1.0, 3.0};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) around(&v, edge[i]);
    put2(&v, INFINITY);
    /* NaNs: quiet and signalling, either sign, payloads low and high */
    const uint64_t nan[] = {0x7FF8000000000000u, 0x7FF8000000000001u, 0x7FFFFFFFFFFFFFFFu, 0x7FF0000000000001u,
                            0x7FF4000000000000u, 0x7FF0000020000000u, 0x7FFC00000000ABCDu};
    for (size_t i = 0; i < sizeof nan / sizeof nan[0]; i++) put(&v, bitsd(nan[i])), put(&v, bitsd(nan[i] | 1ull << 63));
    /* random doubles: any bits, and in f's range with a full fraction */
    for (int i = 0; i < 4096; i++) put(&v, bitsd(next()));
    for (int i = 0; i < 8192; i++) {
        const int e = f->emin - f->mbits - 4 + (int)(next() % (uint64_t)(f->emax - f->emin + f->mbits + 8));
        put(&v, ldexp(bitsd(0x3FF0000000000000u | (next() >> 12)), e) * (next() & 1 ? -1 : 1));
    }
    /* an infinity and a huge double with no NaN after them (a vector
     * maximum that let a NaN through would forget them), then a few more */
    put2(&v, INFINITY), put2(&v, 0x1p1000);
    for (int i = 0; i < 16; i++) put(&v, ldexp(1.0 + i, -i));
    return v;
}

/* One cast of the inputs x (n) to f under (mode, sat, nan) against the
 * scalar conversion of each: 1 if everything agrees. With csr (x86), the
 * cast runs under that MXCSR, which must be as it was after it. */
static int one(const fpemu_format *f, const char *mode, int sat, const char *nan, const double *x, size_t n,
               unsigned csr) {
    char err[256], buf[16];
    fpemu_caster *c = fpemu_caster_new(f->name, err, sizeof err);
    if (!c) bail("caster %s: %s", f->name, err);
    snprintf(buf, sizeof buf, "%d", sat);
    if (fpemu_caster_set(c, "round", mode) || fpemu_caster_set(c, "sat", buf) || fpemu_caster_set(c, "nan", nan) ||
        fpemu_caster_set(c, "seed", "7"))
        bail("caster %s: %s", f->name, fpemu_caster_error(c));
    double *y = malloc(sizeof(double) * (n + 1));
    uint64_t *codes = malloc(sizeof(uint64_t) * (n + 1));
    if (!y || !codes) bail("out of memory");
    const size_t shape[1] = {n};
    unsigned was = 0, after = csr;
#if defined(__x86_64__) && defined(__GNUC__)
    if (csr) was = _mm_getcsr(), _mm_setcsr(csr);
#endif
    const int rc = fpemu_caster_run_f64(c, x, 1, shape, y, codes);
#if defined(__x86_64__) && defined(__GNUC__)
    if (csr) after = _mm_getcsr(), _mm_setcsr(was);
#endif
    if (rc) {
        diag("%s %s: %s", f->name, mode, fpemu_caster_error(c));
        return 0;
    }
    int good = 1;
    if (after != csr) {
        diag("%s %s: MXCSR 0x%04X after the cast, 0x%04X before", f->name, mode, after, csr);
        good = 0;
    }
    /* the reference: the scalar conversion, element i taking draw i */
    const fpemu_format *f64 = fpemu_format_get("f64", NULL, 0);
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    int r = fpemu_round_parse(mode);
    uint64_t ov = 0, satd = 0, uf = 0, sub = 0, nonfin = 0, compared = 0;
    double amax = 0, max_abs = 0, max_rel = 0, se = 0, sx = 0;
    for (size_t i = 0; i < n && good; i++) {
        fpemu_ctx p;
        fpemu_ctx_init(&p);
        p.round = (fpemu_round)r, p.sat = sat, p.nan_policy = (fpemu_nan_policy)fpemu_nan_policy_parse(nan), p.seed = 7,
        p.counter = i;
        const uint64_t k = fpemu_from_double(f, x[i], &p);
        const fpemu_class cl = fpemu_classify(f, k);
        const int isnan_k = cl == FPEMU_CLASS_QNAN || cl == FPEMU_CLASS_SNAN;
        double v;
        if (isnan_k) {
            ctx.nan_policy = p.nan_policy;
            v = bitsd(fpemu_convert(f64, f, k, &ctx));
        } else v = fpemu_to_double(f, k);
        const uint64_t got = fpemu_code_load(f, codes, i);
        if (got != k || dbits(y[i]) != dbits(v)) {
            diag("%s %s sat=%d nan=%s: x = %a (0x%016llx): code 0x%llx, value %a (0x%016llx); expected 0x%llx, %a "
                 "(0x%016llx)",
                 f->name, mode, sat, nan, x[i], (unsigned long long)dbits(x[i]), (unsigned long long)got, y[i],
                 (unsigned long long)dbits(y[i]), (unsigned long long)k, v, (unsigned long long)dbits(v));
            good = 0;
        }
        if (!isfinite(x[i])) nonfin++;
        else if (p.flags & FPEMU_FLAG_OVERFLOW) {
            ov++;
            if (cl != FPEMU_CLASS_INF && !isnan_k) satd++;
        } else if (x[i] != 0 && cl == FPEMU_CLASS_ZERO) uf++;
        else if (x[i] != 0 && cl == FPEMU_CLASS_SUBNORMAL) sub++;
        if (isfinite(x[i]) && fabs(x[i]) > amax) amax = fabs(x[i]);
        if (isfinite(x[i]) && isfinite(v)) {
            const double e = fabs(v - x[i]);
            compared++;
            if (e > max_abs) max_abs = e;
            if (x[i] != 0 && e / fabs(x[i]) > max_rel) max_rel = e / fabs(x[i]);
            se += e * e, sx += x[i] * x[i];
        }
    }
    if (good) {
        const struct { const char *key; double want; } fig[] = {
            {"n", (double)n},       {"overflow", (double)ov},      {"saturated", (double)satd},
            {"flushed", (double)uf}, {"subnormal", (double)sub},   {"nonfinite_in", (double)nonfin},
            {"amax", amax},          {"compared", (double)compared}, {"max_abs_err", max_abs},
            {"max_rel_err", max_rel}, {"rms_err", compared ? sqrt(se / (double)compared) : 0},
            {"sqnr_db", se > 0 ? 10 * log10(sx / se) : INFINITY}};
        for (size_t j = 0; j < sizeof fig / sizeof fig[0]; j++) {
            double got;
            if (fpemu_caster_stat(c, fig[j].key, &got) < 0 || dbits(got) != dbits(fig[j].want)) {
                diag("%s %s sat=%d nan=%s: %s = %a, expected %a", f->name, mode, sat, nan, fig[j].key, got, fig[j].want);
                good = 0;
            }
        }
    }
    free(y), free(codes);
    fpemu_caster_free(c);
    return good;
}

int main(void) {
    rng ^= tap_seed(0);
    /* the odd path's formats (precision at most 22 bits, quantum 2^-147 or
     * above), then the two at its edges and two past them */
    const char *fmts[] = {"e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1", "e8m0", "bf16", "f16", "tf32",
                          "custom:e=8,m=21,bias=127", "custom:e=8,m=20,bias=128", "custom:e=8,m=20,bias=129", "custom:e=7,m=22,bias=63",
                          "f32"};
    const char *modes[] = {"rne", "rna", "rtz", "rup", "rdn", "rto", "sr"};
    const char *nans[] = {"canonical", "x86", "cuda", "torch"};
    const size_t nf = sizeof fmts / sizeof fmts[0], nm = sizeof modes / sizeof modes[0], nn = sizeof nans / sizeof nans[0];
    plan((int)(nf * nm * 2 + (HOSTILE ? 6 : 0))); /* (the last six: x86 only) */
    for (size_t a = 0; a < nf; a++) {
        char err[256];
        const fpemu_format *f = fpemu_format_get(fmts[a], err, sizeof err);
        if (!f) bail("%s: %s", fmts[a], err);
        vec v = inputs(f), w = {0};
        for (size_t i = 0; i < v.n; i++)
            if (fabs(v.x[i]) <= FLT_MAX) put(&w, v.x[i]); /* (and without the doubles that only the scalar path takes) */
        for (size_t m = 0; m < nm; m++)
            for (int sat = 0; sat <= 1; sat++) {
                int good = one(f, modes[m], sat, "canonical", w.x, w.n, 0);
                for (size_t q = 0; q < nn && good; q++) good = one(f, modes[m], sat, nans[q], v.x, v.n, 0);
                emu__caster_simd(0);
                good = good && one(f, modes[m], sat, "torch", v.x, v.n, 0);
                emu__caster_simd(1);
                ok(good, "%s %s sat=%d: %zu doubles under each NaN policy, and the %zu within f32's range, and "
                         "the portable loops: codes, values, counts and figures as the scalar conversion's",
                   fmts[a], modes[m], sat, v.n, w.n);
            }
        free(v.x), free(w.x);
    }
    /* a caller's FTZ, DAZ and rounding mode (a program built with
     * -ffast-math runs with FTZ and DAZ; torch.set_flush_denormal sets them)
     * reach neither the rounding to odd nor the figures, and the cast
     * raises no flag in the caller's MXCSR */
    const char *hfmts[] = {"e4m3", "bf16", "e8m0", "custom:e=8,m=21,bias=127"}, *hmodes[] = {"rne", "rtz", "rup"};
    for (size_t a = 0; HOSTILE && a < sizeof hfmts / sizeof hfmts[0]; a++) {
        const fpemu_format *f = fpemu_format_get(hfmts[a], NULL, 0);
        vec v = inputs(f);
        int good = 1;
        for (size_t m = 0; m < sizeof hmodes / sizeof hmodes[0] && good; m++)
            good = one(f, hmodes[m], 0, "canonical", v.x, v.n, HOSTILE);
        ok(good, "%s rne, rtz, rup under the caller's MXCSR 0x%04X (FTZ, DAZ, rtz): the same as the scalar "
                 "conversion's, and the MXCSR as it was",
           hfmts[a], HOSTILE);
        free(v.x);
    }
    /* an f32 input's cast, without a recipe and under one, under that
     * MXCSR and under the library's own: the same values, codes and figures
     * (the figures' sums once followed the caller's rounding mode) */
    const char *scal[] = {"none", "tensor"};
    for (size_t a = 0; HOSTILE && a < 2; a++) {
        const fpemu_format *f = fpemu_format_get("e4m3", NULL, 0);
        vec v = inputs(f);
        float *x32 = malloc(sizeof(float) * v.n), *y[2];
        uint8_t *k[2];
        char err[256];
        double fig[2][6];
        static const char *keys[] = {"amax", "max_abs_err", "max_rel_err", "rms_err", "sqnr_db", "overflow"};
        int good = 1;
        for (size_t i = 0; i < v.n; i++) x32[i] = (float)v.x[i];
        for (int h = 0; h < 2; h++) {
            fpemu_caster *c = fpemu_caster_new("e4m3", err, sizeof err);
            if (!c || fpemu_caster_set(c, "scaling", scal[a])) bail("caster e4m3 %s", scal[a]);
            y[h] = malloc(sizeof(float) * v.n), k[h] = malloc(v.n);
            const size_t shape[1] = {v.n};
            unsigned was = 0;
#if defined(__x86_64__) && defined(__GNUC__)
            if (h) was = _mm_getcsr(), _mm_setcsr(HOSTILE);
#endif
            const int rc = fpemu_caster_run_f32(c, x32, 1, shape, y[h], k[h]);
#if defined(__x86_64__) && defined(__GNUC__)
            if (h) _mm_setcsr(was);
#endif
            if (rc) bail("caster e4m3 %s: %s", scal[a], fpemu_caster_error(c));
            for (int j = 0; j < 6; j++)
                if (fpemu_caster_stat(c, keys[j], &fig[h][j]) < 0) bail("%s: %s", keys[j], fpemu_caster_error(c));
            fpemu_caster_free(c);
        }
        for (int j = 0; j < 6; j++)
            if (dbits(fig[0][j]) != dbits(fig[1][j])) diag("%s: %a under the MXCSR, %a without", keys[j], fig[1][j], fig[0][j]), good = 0;
        good = good && !memcmp(y[0], y[1], sizeof(float) * v.n) && !memcmp(k[0], k[1], v.n);
        ok(good, "f32 to e4m3, scaling %s, under the caller's MXCSR 0x%04X: the values, codes and figures of a clean one",
           scal[a], HOSTILE);
        free(x32), free(y[0]), free(y[1]), free(k[0]), free(k[1]), free(v.x);
    }
    return done_testing();
}
