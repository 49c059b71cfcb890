/* SPDX-License-Identifier: MIT */
/* t_emu_scalar.c: the scalar entry points of the registry formats (their
 * specialised paths in emu/fast.c, at each instruction-set level, and the
 * result tables of the 8-bit formats in emu/arith.c) against the generic
 * path, bit for bit with flags and SR draws.
 *
 * The generic path is reached through each format's custom-spec twin: a
 * custom format has no specialised ops and no tables. Three checks:
 *  - f16 add/sub/mul/fma at every scalar ISA level (portable; F16C and
 *    AVX512-FP16 where the CPU has them), bf16 at levels 0 and 2 (its fma
 *    uses AVX-512F rounding there), and both again under the
 *    host's MXCSR DAZ and FTZ, every mode: each of a set of boundary
 *    operands (around the smallest normal, the largest finite, one, the
 *    exponent gaps where float sums stop being exact) against every sign
 *    and exponent with 16 mantissas each, plus random triples;
 *  - every <= 8-bit registry format, every tabulated operation (add, sub,
 *    mul, div, sqrt), every deterministic mode and every combination of
 *    sat, ftz, daz, tininess and NaN policy: all operand pairs under a
 *    rotating subset of configurations, so each configuration's table is
 *    checked against the generic path and a table entry that wrongly
 *    claims policy independence shows up;
 *  - a planted difference (a twin with a different bias) is caught. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

int emu__scalar_isa(int level); /* emu/fast.c: force the level (tests only) */

static uint64_t rs;
static uint64_t rnd(void) { return rs = fpemu_random64(rs, 7); }

/* The custom spec of a registry format: the same fields, no fast paths. */
static const fpemu_format *twin(const fpemu_format *f) {
    static const char *inf[] = {"no", "ieee", "top"}, *nan[] = {"none", "ieee", "fn", "uz", "allones"};
    char spec[200];
    snprintf(spec, sizeof spec, "custom:e=%d,m=%d,bias=%d,inf=%s,nan=%s,negzero=%s,signed=%s,subnormals=%s", f->ebits,
             f->mbits, f->bias, inf[f->inf], nan[f->nan], f->has_negzero ? "yes" : "no", f->is_signed ? "yes" : "no",
             f->has_subnormals ? "yes" : "no");
    const fpemu_format *g = fpemu_format_get(spec, NULL, 0);
    if (!g) bail("no twin for %s (%s)", f->name, spec);
    return g;
}

enum { ADD, SUB, MUL, DIV, SQRT, FMA, NOPS };
static const char *opn[NOPS] = {"add", "sub", "mul", "div", "sqrt", "fma"};

static uint64_t do_op(int op, const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *x) {
    switch (op) {
    case ADD: return fpemu_add(f, a, b, x);
    case SUB: return fpemu_sub(f, a, b, x);
    case MUL: return fpemu_mul(f, a, b, x);
    case DIV: return fpemu_div(f, a, b, x);
    case SQRT: return fpemu_sqrt(f, a, x);
    default: return fpemu_fma(f, a, b, c, x);
    }
}

static long shown;

/* Caller-supplied sr draws for some cases (shorter than a run of calls, so
 * the counter stream takes over after it). */
static uint64_t stream[4];

/* The same op with the caller's draw (fpemu_add_sr ...). */
static uint64_t do_op_sr(int op, const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t r, fpemu_ctx *x) {
    switch (op) {
    case ADD: return fpemu_add_sr(f, a, b, r, x);
    case SUB: return fpemu_sub_sr(f, a, b, r, x);
    case MUL: return fpemu_mul_sr(f, a, b, r, x);
    case DIV: return fpemu_div_sr(f, a, b, r, x);
    case SQRT: return fpemu_sqrt_sr(f, a, r, x);
    default: return fpemu_fma_sr(f, a, b, c, r, x);
    }
}

/* The draw an sr operation on c would take: its caller stream's while it
 * lasts, else the counter's. */
static uint64_t next_draw(const fpemu_ctx *c) {
    return c->sr_stream && c->sr_pos < c->sr_len ? c->sr_stream[c->sr_pos] : fpemu_random64(c->seed, c->counter);
}

/* In sr, the same case through fpemu_X_sr on f with the draw the context
 * would take, against the definition: the op on the twin g with the
 * one-draw caller stream {draw}. Whatever the context's round (rotating
 * through every mode and an invalid one), sr applies; the context's
 * counter, stream and position stay as they were. 1 if anything differs. */
static int differ_rb(int op, const fpemu_format *f, const fpemu_format *g, uint64_t a, uint64_t b, uint64_t c,
                     const fpemu_ctx *tmpl) {
    uint64_t r = next_draw(tmpl);
    fpemu_ctx x = *tmpl, y = *tmpl;
    x.round = (fpemu_round)((a + b + c + tmpl->counter) % (FPEMU_ROUND_COUNT + 1));
    y.sr_stream = &r, y.sr_len = 1, y.sr_pos = 0;
    uint64_t rf = do_op_sr(op, f, a, b, c, r, &x), rg = do_op(op, g, a, b, c, &y);
    if (rf == rg && x.flags == y.flags && x.counter == tmpl->counter && x.sr_pos == tmpl->sr_pos &&
        x.sr_stream == tmpl->sr_stream)
        return 0;
    if (shown++ < 8)
        diag("%s_%s_sr (round %d) sat=%d ftz=%d daz=%d tb=%d nan=%d bits=%d: %llX %llX %llX draw %016llX => %llX "
             "flags %02X counter %llu, generic %llX flags %02X",
             f->name, opn[op], (int)x.round, tmpl->sat, tmpl->ftz, tmpl->daz, tmpl->tininess_before,
             (int)tmpl->nan_policy, tmpl->sr_bits, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
             (unsigned long long)r, (unsigned long long)rf, x.flags, (unsigned long long)x.counter,
             (unsigned long long)rg, y.flags);
    return 1;
}

/* One case on f and on its twin g under the same context: 1 if they differ
 * (NaNs compare by class only when both are NaN of the same encoding set).
 * In sr, fpemu_X_sr too (differ_rb). */
static int differ(int op, const fpemu_format *f, const fpemu_format *g, uint64_t a, uint64_t b, uint64_t c,
                  const fpemu_ctx *tmpl) {
    fpemu_ctx x = *tmpl, y = *tmpl;
    uint64_t rf = do_op(op, f, a, b, c, &x), rg = do_op(op, g, a, b, c, &y);
    if (tmpl->round == FPEMU_SR && differ_rb(op, f, g, a, b, c, tmpl)) return 1;
    if (rf == rg && x.flags == y.flags && x.counter == y.counter && x.sr_pos == y.sr_pos) return 0;
    if (shown++ < 8)
        diag("%s_%s %s sat=%d ftz=%d daz=%d tb=%d nan=%d: %llX %llX %llX => %llX flags %02X, generic %llX flags %02X",
             f->name, opn[op], fpemu_round_name(tmpl->round), tmpl->sat, tmpl->ftz, tmpl->daz, tmpl->tininess_before,
             (int)tmpl->nan_policy, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
             (unsigned long long)rf, x.flags, (unsigned long long)rg, y.flags);
    return 1;
}

static fpemu_ctx config(int mode, int k) {
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    c.round = (fpemu_round)mode;
    c.sat = k & 1;
    c.ftz = (k >> 1) & 1;
    c.daz = (k >> 2) & 1;
    c.tininess_before = (k >> 3) & 1;
    c.nan_policy = (fpemu_nan_policy)((k >> 4) & 1);
    c.seed = 1234;
    return c;
}

/* f16 / bf16: boundary operands x all codes, and random triples. */
static long check16(const fpemu_format *f, const fpemu_format *g, long *cases) {
    const int m = f->mbits;
    const uint64_t one = (uint64_t)f->bias << m, minn = UINT64_C(1) << m, maxf = f->max_code;
    uint64_t special[] = {minn, minn + 1, minn + 2, 2 * minn, maxf, maxf - 1, maxf - minn, one, one + 1, one - 1,
                          one + (12ull << m), one + (13ull << m), one + (15ull << m), one + (16ull << m),
                          one - (12ull << m), one - (13ull << m), 1, (1ull << m) - 1, 0, 0x7C00 & f->mag_mask};
    long bad = 0;
    for (int mode = 0; mode < FPEMU_ROUND_COUNT; mode++) {
        fpemu_ctx c = config(mode, 0);
        for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
            for (int sgn = 0; sgn < 2; sgn++) {
                uint64_t a = special[i] | (sgn ? f->sign_bit : 0);
                /* every sign and exponent field with 16 mantissas each (the
                 * extreme two and random ones) */
                for (uint64_t k = 0; k < (UINT64_C(32) << f->ebits); k++) { /* 2^(1+e) sign/exponent pairs x 16 */
                    uint64_t mlow = (k & 15) == 0 ? 0 : (k & 15) == 1 ? (1u << m) - 1 : rnd() & ((1u << m) - 1);
                    uint64_t b = (k >> 4) << m | mlow;
                    c.counter = k;
                    c.sat = (int)(k & 1);
                    for (int op = ADD; op <= MUL; op++) {
                        if (op == SUB && (k & 3)) continue; /* sub shares add's code: a quarter is enough */
                        bad += differ(op, f, g, a, b, 0, &c) + differ(op, f, g, b, a, 0, &c);
                        *cases += 2;
                    }
                }
            }
        /* ties: a * 2^k + c where c is (1 or 3) half-ulps of the product,
         * so rne and rna part ways and the tie tests decide */
        for (int i = 0; i < 4000; i++) {
            fpemu_ctx t = config(mode, 0), q = t;
            t.counter = (uint64_t)i;
            uint64_t a = rnd() & 0xFFFF;
            uint64_t b = (uint64_t)((int64_t)one + ((int64_t)(rnd() % 17) - 8) * ((int64_t)1 << m));
            double pv = fpemu_to_double(f, a) * fpemu_to_double(f, b);
            int e;
            if (!isfinite(pv) || pv == 0) continue;
            frexp(pv, &e);
            double cv = ldexp((i & 1) ? 3 : 1, e - 2 - m) * ((i & 2) ? -1 : 1);
            uint64_t cc = fpemu_from_double(f, cv, &q);
            if (q.flags || fpemu_to_double(f, cc) != cv) continue; /* c must be exact */
            bad += differ(FMA, f, g, a, b, cc, &t) + differ(ADD, f, g, fpemu_mul(f, a, b, &q), cc, 0, &t);
            *cases += 2;
        }
        for (int i = 0; i < 20000; i++) {
            fpemu_ctx r = config(mode, (int)(rnd() & 31));
            r.counter = (uint64_t)i;
            r.sr_bits = i % 3 ? 0 : i % 7 == 0 ? INT_MIN + i % 2 : (int)(rnd() % 70) - 2; /* sr: 64 up and below 1 mean 64 */
            if (i % 5 == 0) {
                for (int j = 0; j < 4; j++) stream[j] = rnd();
                r.sr_stream = stream, r.sr_len = 1 + (size_t)(i % 4), r.sr_pos = (size_t)(i % 2);
            }
            if (i % 4 == 1) r.flags = (unsigned)rnd();
            uint64_t a = rnd() & 0xFFFF, b = rnd() & 0xFFFF, cc = rnd() & 0xFFFF;
            for (int op = ADD; op < NOPS; op++) {
                if (op == DIV || op == SQRT) continue;
                bad += differ(op, f, g, a, b, cc, &r);
                (*cases)++;
            }
        }
    }
    return bad;
}

/* fpemu_from_float (and fpemu_from_float_sr) of one float on f and its twin
 * g under tmpl: 1 if result, flags, counter or stream position differ. */
static int differ_from(const fpemu_format *f, const fpemu_format *g, float x, const fpemu_ctx *tmpl) {
    fpemu_ctx p = *tmpl, q = *tmpl;
    uint64_t rf = fpemu_from_float(f, x, &p), rg = fpemu_from_float(g, x, &q);
    int bad = rf != rg || p.flags != q.flags || p.counter != q.counter || p.sr_pos != q.sr_pos;
    uint64_t r = 0, sf = 0, sg = 0;
    unsigned ff = 0, fg = 0;
    if (tmpl->round == FPEMU_SR) { /* the per-call form against its definition on the twin */
        r = next_draw(tmpl);
        fpemu_ctx u = *tmpl, v = *tmpl;
        u.round = (fpemu_round)(tmpl->counter % (FPEMU_ROUND_COUNT + 1));
        v.sr_stream = &r, v.sr_len = 1, v.sr_pos = 0;
        sf = fpemu_from_float_sr(f, x, r, &u), sg = fpemu_from_float(g, x, &v);
        ff = u.flags, fg = v.flags;
        bad |= sf != sg || ff != fg || u.counter != tmpl->counter || u.sr_pos != tmpl->sr_pos;
    }
    if (bad && shown++ < 8)
        diag("%s from_float %s sat=%d ftz=%d daz=%d tb=%d nan=%d bits=%d: %a => %llX flags %02X, generic %llX flags %02X; "
             "per call (draw %016llX) %llX flags %02X, definition %llX flags %02X",
             f->name, fpemu_round_name(tmpl->round), tmpl->sat, tmpl->ftz, tmpl->daz, tmpl->tininess_before,
             (int)tmpl->nan_policy, tmpl->sr_bits, (double)x, (unsigned long long)rf, p.flags, (unsigned long long)rg,
             q.flags, (unsigned long long)r, (unsigned long long)sf, ff, (unsigned long long)sg, fg);
    return bad;
}

/* f32 -> f, the formats with their own fpemu_from_float (f16, bf16, the
 * OCP and fnuz 8-bit formats): every code's value of f as a float, its
 * float neighbours, the midpoints between neighbouring codes and theirs,
 * zeros, infinities, NaNs, float subnormals, FLT_MAX, and random floats,
 * in every mode under rotating policies, draw widths and caller streams. */
static long check_from(const fpemu_format *f, const fpemu_format *g, long *cases) {
    static const int srb[] = {0, 1, 3, 8, 13, 22, 23, 24, 64};
    long bad = 0, k = 0;
    uint64_t ncodes = UINT64_C(1) << f->bits;
    for (uint64_t c = 0; c < ncodes; c++) {
        fpemu_ctx q;
        fpemu_ctx_init(&q);
        double v = fpemu_to_double(f, c), w = fpemu_to_double(f, c + 1 < ncodes ? c + 1 : c);
        if (isnan(v)) continue;
        float xs[8] = {(float)v, nextafterf((float)v, INFINITY), nextafterf((float)v, -INFINITY), 0, 0, 0, 0, 0};
        int nx = 3;
        if (isfinite(w) && !isnan(w) && fabs(w - v) > 0 && (float)((v + w) / 2) == (v + w) / 2) {
            float m = (float)((v + w) / 2);
            xs[nx++] = m, xs[nx++] = nextafterf(m, INFINITY), xs[nx++] = nextafterf(m, -INFINITY);
        }
        for (int j = 0; j < nx; j++) {
            for (int mode = 0; mode < FPEMU_ROUND_COUNT; mode++, k++) {
                fpemu_ctx t = config(mode, (int)(k & 31));
                t.counter = (uint64_t)k;
                t.sr_bits = srb[k % 9];
                if (k % 7 == 0) {
                    for (int i = 0; i < 4; i++) stream[i] = rnd();
                    t.sr_stream = stream, t.sr_len = 1 + (size_t)(k % 4), t.sr_pos = (size_t)(k % 3);
                }
                if (k % 5 == 0) t.flags = (unsigned)rnd() & 0x1F;
                bad += differ_from(f, g, xs[j], &t);
                (*cases)++;
            }
        }
    }
    float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149f, -0x1p-130f, 0x1.fffffcp-127f, FLT_MAX, -FLT_MAX,
                       0x1p-126f, 65504.0f, 65520.0f, 448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 240.0f, 0x1p-10f, 0x1p-17f};
    uint32_t snan = 0x7F800001u;
    float sn;
    memcpy(&sn, &snan, 4);
    for (int i = 0; i < 200000; i++, k++) {
        float x;
        if (i < 22 * FPEMU_ROUND_COUNT * 4) x = special[i % 22];
        else if (i % 997 == 0) x = sn;
        else {
            uint32_t u = (uint32_t)rnd();
            u = (u & 0x807FFFFFu) | (uint32_t)(96 + rnd() % 64) << 23; /* exponents 2^-31 .. 2^32 */
            memcpy(&x, &u, 4);
        }
        fpemu_ctx t = config(i % FPEMU_ROUND_COUNT, (int)(rnd() & 31));
        t.counter = (uint64_t)i;
        t.sr_bits = srb[i % 9];
        bad += differ_from(f, g, x, &t);
        (*cases)++;
    }
    return bad;
}

/* <= 8-bit registry formats: all pairs, every tabulated op and mode, under
 * the default policies and `extra` more of the 32 configurations (rotating
 * with the mode), plus random cases in all 32. */
static long check8(const fpemu_format *f, const fpemu_format *g, int extra, long *cases) {
    long bad = 0;
    uint64_t n = UINT64_C(1) << f->bits;
    for (int mode = 0; mode < FPEMU_SR; mode++)
        for (int j = 0; j <= extra; j++) {
            int k = j == 0 ? 0 : (mode * 5 + j * 7) & 31;
            fpemu_ctx c = config(mode, k);
            for (uint64_t a = 0; a < n; a++)
                for (uint64_t b = 0; b < n; b++) {
                    /* flags already raised, and bits above the five, in a
                     * quarter of the cases: the hit path tests them */
                    c.flags = (a ^ b) & 3 ? 0 : (unsigned)((a * 0x9Du + b * 0x3Bu) & 0xFFu);
                    for (int op = ADD; op <= SQRT; op++) {
                        if (op == SQRT && b) continue;
                        bad += differ(op, f, g, a, b, 0, &c);
                        (*cases)++;
                    }
                }
        }
    /* sr: all pairs of add, sub and mul, the draw's width cycling through
     * both sides of the tables' 23 fraction bits, under rotating policies */
    static const int srb[] = {0, 1, 3, 8, 22, 23, 24, 40, 63, 64, 70, -1, INT_MIN, INT_MAX};
    for (uint64_t a = 0; a < n; a++)
        for (uint64_t b = 0; b < n; b++) {
            fpemu_ctx c = config(FPEMU_SR, (int)((a * 3 + b) & 31));
            c.counter = a << 8 | b;
            c.sr_bits = srb[(a + b * 7) % (sizeof srb / sizeof srb[0])];
            c.flags = (a ^ b) & 3 ? 0 : FPEMU_FLAG_INEXACT;
            for (int op = ADD; op <= MUL; op++) {
                bad += differ(op, f, g, a, b, 0, &c);
                (*cases)++;
            }
        }
    /* fma (specialised for e5m2, e4m3 and the fnuz formats): all pairs
     * with 4 addends per mode, rotating policies and sr widths */
    static const char *fmas[] = {"e5m2", "e4m3", "e4m3fnuz", "e5m2fnuz"};
    int special_fma = 0;
    for (size_t i = 0; i < sizeof fmas / sizeof fmas[0]; i++) special_fma |= !strcmp(f->name, fmas[i]);
    for (int mode = 0; mode < FPEMU_ROUND_COUNT && special_fma; mode++)
        for (int j = 0; j < 4; j++) {
            uint64_t cc = rnd() % n;
            for (uint64_t a = 0; a < n; a++)
                for (uint64_t b = 0; b < n; b++) {
                    fpemu_ctx c = config(mode, (int)((a + b * 5 + (uint64_t)j) & 31));
                    c.counter = a << 8 | b;
                    c.sr_bits = srb[(a * 7 + b) % (sizeof srb / sizeof srb[0])];
                    bad += differ(FMA, f, g, a, b, cc, &c);
                    (*cases)++;
                }
        }
    for (int i = 0; i < 100000; i++) {
        fpemu_ctx c = config((int)(rnd() % FPEMU_ROUND_COUNT), (int)(rnd() & 31));
        c.counter = (uint64_t)i;
        c.sr_bits = i % 3 ? 0 : (int)(rnd() % 70);
        if (i % 5 == 0) {
            for (int j = 0; j < 4; j++) stream[j] = rnd();
            c.sr_stream = stream, c.sr_len = 1 + (size_t)(i % 4), c.sr_pos = (size_t)(i % 2);
        }
        if (i % 4 == 0) c.flags = (unsigned)rnd();
        int op = (int)(rnd() % NOPS);
        bad += differ(op, f, g, rnd() % n, rnd() % n, rnd() % n, &c);
        (*cases)++;
    }
    return bad;
}

int main(void) {
    rs = tap_seed(3);
    const char *wide[] = {"f16", "bf16"};
    int best = 0;
    /* the registry sets the best level when it initialises: before the loop */
    (void)fpemu_format_get("f16", NULL, 0);
    for (int level = 0; level <= 2; level++) {
        int got = emu__scalar_isa(level);
        if (got != level) {
            ok(1, "# SKIP scalar ISA level %d: not on this CPU", level);
            continue;
        }
        best = level;
        for (size_t i = 0; i < 2; i++) {
            if (i == 1 && level == 1) continue; /* F16C changes f16 only */
            const fpemu_format *f = fpemu_format_get(wide[i], NULL, 0), *g = twin(f);
            long cases = 0, bad = check16(f, g, &cases);
            ok(bad == 0, "%s at scalar ISA level %d: add/sub/mul/fma equal the generic path on %ld cases (%ld differ)",
               f->name, level, cases, bad);
        }
    }
    emu__scalar_isa(best);
    {
        static const char *from_fmts[] = {"f16", "bf16", "e5m2", "e4m3", "e4m3fnuz", "e5m2fnuz"};
        for (size_t i = 0; i < sizeof from_fmts / sizeof from_fmts[0]; i++) {
            const fpemu_format *f = fpemu_format_get(from_fmts[i], NULL, 0), *g = twin(f);
            long cases = 0, bad = check_from(f, g, &cases);
            ok(bad == 0, "%s: fpemu_from_float and fpemu_from_float_sr equal the generic path on %ld cases (%ld differ)",
               f->name, cases, bad);
        }
    }
#if defined(__x86_64__) || defined(__i386__)
    /* The host's denormals-are-zero and flush-to-zero (a program built with
     * -ffast-math runs with both) must not reach the fast paths. */
    unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040u);
    for (size_t i = 0; i < 2; i++) {
        const fpemu_format *f = fpemu_format_get(wide[i], NULL, 0), *g = twin(f);
        long cases = 0, bad = check16(f, g, &cases);
        ok(bad == 0, "%s at scalar ISA level %d under the host's MXCSR DAZ and FTZ: equal the generic path on %ld cases (%ld differ)",
           f->name, best, cases, bad);
    }
    _mm_setcsr(csr);
#endif

    for (int i = 0; i < fpemu_format_count(); i++) {
        const fpemu_format *f = fpemu_format_at(i);
        if (f->bits > 8) continue;
        const fpemu_format *g = twin(f);
        /* the OCP formats under 3 extra configurations per mode, the rest 1 */
        int extra = !strcmp(f->name, "e4m3") || !strcmp(f->name, "e5m2") ? 3 : 1;
        long cases = 0, bad = check8(f, g, extra, &cases);
        ok(bad == 0, "%s: tabulated add/sub/mul/div/sqrt equal the generic path on %ld cases, 6 modes x %d policy sets, sr, and fma (%ld differ)",
           f->name, cases, 1 + extra, bad);
    }

    /* The checker sees a difference: e4m3 against a twin with another bias. */
    const fpemu_format *e4 = fpemu_format_get("e4m3", NULL, 0);
    const fpemu_format *wrong = fpemu_format_get("custom:e=4,m=3,bias=8,inf=no,nan=fn", NULL, 0);
    long saved = shown, caught = 0;
    shown = 1000; /* no diagnostics for the planted run */
    fpemu_ctx c = config(FPEMU_RNE, 0);
    for (uint64_t a = 0; a < 256; a++) caught += differ(MUL, e4, wrong, a, 0x38, 0, &c);
    shown = saved;
    ok(caught > 0, "a twin with a different bias is caught (%ld of 256 products differ)", caught);

    /* A modified copy of a registry descriptor, finished again, computes in
     * its own format: the registry's tables and fast paths do not travel. */
    const char *copies[] = {"e4m3", "f16", "bf16", "e5m2"};
    for (size_t i = 0; i < 4; i++) {
        fpemu_format mine = *fpemu_format_get(copies[i], NULL, 0);
        mine.bias += 1;
        snprintf(mine.name, sizeof mine.name, "%s-bias+1", copies[i]);
        if (fpemu_format_finish(&mine, NULL, 0)) bail("finish %s", mine.name);
        const fpemu_format *g = twin(&mine);
        long bad = 0, cases = 0;
        for (int k = 0; k < 20000; k++) {
            fpemu_ctx x = config((int)(rnd() % FPEMU_ROUND_COUNT), 0);
            uint64_t m = (UINT64_C(1) << mine.bits) - 1;
            for (int op = ADD; op < NOPS; op++, cases++) bad += differ(op, &mine, g, rnd() & m, rnd() & m, rnd() & m, &x);
        }
        ok(bad == 0, "a finished copy of %s with bias + 1 equals its custom twin on %ld cases", copies[i], cases);
    }
    /* fpemu_decode_f32 (table path) and fpemu_to_float agree on every code
     * of every <= 16-bit registry format, NaN signs included. */
    long dbad = 0, dcases = 0;
    for (int i = 0; i < fpemu_format_count(); i++) {
        const fpemu_format *f = fpemu_format_at(i);
        if (f->bits > 16 || f->pad) continue;
        for (int pol = 0; pol < FPEMU_NAN_POLICY_COUNT; pol++)
            for (uint64_t code = 0; code < (UINT64_C(1) << f->bits); code++, dcases++) {
                fpemu_ctx x;
                fpemu_ctx_init(&x);
                x.nan_policy = (fpemu_nan_policy)pol;
                uint8_t c8 = (uint8_t)code;
                uint16_t c16 = (uint16_t)code;
                float got, want = fpemu_to_float(f, code, &x);
                fpemu_decode_f32(f, &got, f->container == 8 ? (const void *)&c8 : (const void *)&c16, 1, &x);
                if (memcmp(&got, &want, 4) && dbad++ < 4) diag("%s code %llX: decode_f32 %a, to_float %a", f->name, (unsigned long long)code, got, want);
            }
    }
    ok(dbad == 0, "decode_f32 equals fpemu_to_float bit for bit on %ld codes x NaN policies (%ld differ)", dcases, dbad);
    return done_testing();
}
