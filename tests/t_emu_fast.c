/* SPDX-License-Identifier: MIT */
/* t_emu_fast.c: the fast paths against the generic path, bit for bit with
 * flags, in every rounding mode (sr included: both take one draw per
 * rounding). Three layers meet here:
 *   - the specialised paths of the hot registry formats (f16, bf16, e5m2, f32);
 *   - their custom-spec twins, which have no specialised path and take the
 *     generic fast decode/pack;
 *   - the same twins with daz set on operands that are not subnormal (daz
 *     changes nothing for them but turns every fast path off).
 * Plus the vectorised f32 -> small-format array kernel against scalar
 * conversion over a sweep of f32 bit patterns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"

static uint64_t rs;
static uint64_t rnd(void) { return rs = fpemu_random64(rs, 11); }

static uint64_t operand(const fpemu_format *f) {
    uint64_t r = rnd(), mask = f->bits == 32 ? 0xFFFFFFFFu : (UINT64_C(1) << f->bits) - 1;
    uint64_t c = r & mask;
    if ((r >> 40) % 4 == 0) c = (c & ~((UINT64_C(1) << f->mbits) - 1)) | (((UINT64_C(1) << f->mbits) - 1) >> ((r >> 50) % 4)); /* runs of ones */
    return c;
}

typedef uint64_t (*op3)(const fpemu_format *, uint64_t, uint64_t, uint64_t, fpemu_ctx *);
static uint64_t do_op(int op, const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *x) {
    switch (op) {
    case 0: return fpemu_add(f, a, b, x);
    case 1: return fpemu_sub(f, a, b, x);
    case 2: return fpemu_mul(f, a, b, x);
    case 3: return fpemu_div(f, a, b, x);
    case 4: return fpemu_sqrt(f, a, x);
    default: return fpemu_fma(f, a, b, c, x);
    }
}
static const char *opn[6] = {"add", "sub", "mul", "div", "sqrt", "fma"};

/* ---- array casts (emu/cast.c) against the scalar conversion ---------------
 * The reference is every element alone through fpemu_convert: its code, its
 * flags and its telemetry; an array call must give every code, the OR of
 * the flags and the sum of the counters (max for amax), and write nothing
 * outside its output. Each instruction-set level of the kernels is forced
 * in turn (emu__cast_isa), so AVX-512, AVX2 and portable C are each checked
 * on a machine that has them; a level the CPU lacks is reported as a skip. */

int emu__cast_isa(int level); /* emu/cast.c: force the kernels' level (tests only) */
static const char *const isa_name[] = {"portable", "avx2", "avx512"};
static const fpemu_format *F32;
static uint32_t emu_bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }

typedef struct {
    uint64_t code;
    unsigned flags;
    uint32_t rounded;    /* f32 bits of the decoded code: what round_f32 gives */
    fpemu_cast_stats st; /* this element's telemetry */
} refel;

static void ref_elem(const fpemu_format *f, const fpemu_ctx *tmpl, uint32_t u, refel *r) {
    fpemu_ctx d = *tmpl, e = *tmpl;
    d.flags = 0;
    r->code = fpemu_convert(f, F32, u, &d);
    r->flags = d.flags;
    float v = fpemu_to_float(f, r->code, &e), x;
    memcpy(&r->rounded, &v, 4);
    memcpy(&x, &u, 4);
    memset(&r->st, 0, sizeof r->st);
    r->st.n = 1;
    if (!isfinite(x)) { r->st.nonfinite_in = 1; return; }
    r->st.amax = fabsf(x);
    fpemu_class k = fpemu_classify(f, r->code);
    if (r->flags & FPEMU_FLAG_OVERFLOW) {
        r->st.overflow = 1;
        r->st.saturated = k != FPEMU_CLASS_INF && k != FPEMU_CLASS_QNAN && k != FPEMU_CLASS_SNAN;
    } else if (x != 0 && k == FPEMU_CLASS_ZERO) r->st.underflow = 1;
    else if (x != 0 && k == FPEMU_CLASS_SUBNORMAL) r->st.subnormal = 1;
}

/* Outputs of one window: encode_f32, round_f32 out of place, round_f32 in
 * place (dst == src), each with GUARD untouched elements on both sides. */
enum { GUARD = 40, MAXN = (1 << 16) + 64, NCALL = 3 };
static const char *const call_name[NCALL] = {"encode_f32", "round_f32", "round_f32 in place"};
static struct {
    uint32_t enc[MAXN + 2 * GUARD]; /* codes in their containers: 8, 16 or 32 bits (tf32) */
    uint32_t rnd[MAXN + 2 * GUARD], inpl[MAXN + 2 * GUARD];
    unsigned flags[NCALL];
    fpemu_cast_stats st[NCALL];
} got;
#define SENT8 0xA5u
#define SENT32 0xA5A5A5A5u

static void *enc_at(const fpemu_format *f, size_t i) { return (unsigned char *)got.enc + i * (f->container / 8); }

static void run_window(const fpemu_format *f, const fpemu_ctx *tmpl, const float *in, size_t n, size_t doff) {
    size_t end = doff + n + 2 * GUARD; /* guards: GUARD + doff before, GUARD after */
    memset(got.enc, SENT8, end * sizeof got.enc[0]);
    for (size_t i = 0; i < end; i++) got.rnd[i] = got.inpl[i] = SENT32;
    memcpy(got.inpl + GUARD + doff, in, n * 4);
    for (int c = 0; c < NCALL; c++) {
        fpemu_ctx x = *tmpl;
        x.flags = 0;
        memset(&got.st[c], 0, sizeof got.st[c]);
        if (c == 0) fpemu_encode_f32(f, enc_at(f, GUARD + doff), in, n, &x, &got.st[c]);
        else if (c == 1) fpemu_round_f32(f, (float *)(void *)(got.rnd + GUARD + doff), in, n, &x, &got.st[c]);
        else {
            float *w = (float *)(void *)(got.inpl + GUARD + doff);
            fpemu_round_f32(f, w, w, n, &x, &got.st[c]);
        }
        got.flags[c] = x.flags;
    }
}

/* Add one element's telemetry to a sum (amax: the maximum). */
static void stats_add(fpemu_cast_stats *sum, const fpemu_cast_stats *el) {
    sum->n += el->n;
    sum->overflow += el->overflow;
    sum->saturated += el->saturated;
    sum->underflow += el->underflow;
    sum->subnormal += el->subnormal;
    sum->nonfinite_in += el->nonfinite_in;
    if (el->amax > sum->amax) sum->amax = el->amax;
}

static int stats_differ(const fpemu_cast_stats *a, const fpemu_cast_stats *b) {
    return a->n != b->n || a->overflow != b->overflow || a->saturated != b->saturated || a->underflow != b->underflow ||
           a->subnormal != b->subnormal || a->nonfinite_in != b->nonfinite_in || a->amax != b->amax;
}

/* Contexts: the kernels' own (rne, sat or not: the elements they hand to
 * the generic path see tininess and the NaN policy), and ones that must
 * keep the generic path (flush modes, other rounding modes). */
static const struct {
    const char *name;
    fpemu_round round;
    int sat, tininess_before, ftz, daz;
    fpemu_nan_policy nan;
    int generic; /* no kernel: round_f32 decodes NaN codes by table (sign kept), so any NaN passes there */
} actx[] = {
    {"rne", FPEMU_RNE, 0, 0, 0, 0, FPEMU_NAN_CANONICAL, 0},
    {"rne sat", FPEMU_RNE, 1, 0, 0, 0, FPEMU_NAN_CANONICAL, 0},
    {"rne tininess-before", FPEMU_RNE, 0, 1, 0, 0, FPEMU_NAN_CANONICAL, 0},
    {"rne nan=x86", FPEMU_RNE, 0, 0, 0, 0, FPEMU_NAN_X86, 0},
    {"rne sat tininess-before nan=x86", FPEMU_RNE, 1, 1, 0, 0, FPEMU_NAN_X86, 0},
    {"rne ftz", FPEMU_RNE, 0, 0, 1, 0, FPEMU_NAN_CANONICAL, 1},
    {"rne daz", FPEMU_RNE, 0, 0, 0, 1, FPEMU_NAN_CANONICAL, 1},
    {"rtz", FPEMU_RTZ, 0, 0, 0, 0, FPEMU_NAN_CANONICAL, 1},
    {"rup sat", FPEMU_RUP, 1, 0, 0, 0, FPEMU_NAN_CANONICAL, 1},
    {"rna", FPEMU_RNA, 0, 0, 0, 0, FPEMU_NAN_CANONICAL, 1},
    {"rdn", FPEMU_RDN, 0, 0, 0, 0, FPEMU_NAN_CANONICAL, 1},
    {"rto", FPEMU_RTO, 0, 0, 0, 0, FPEMU_NAN_CANONICAL, 1},
    {"rup", FPEMU_RUP, 0, 0, 0, 0, FPEMU_NAN_CANONICAL, 1},
};
enum { NACTX = sizeof actx / sizeof actx[0] };

/* Mismatches of the window's outputs against ref[0..n), diagnosing the
 * first few (*shown counts them across calls) with what replays them. */
static int same_f32(uint32_t a, uint32_t b, int anynan) {
    return a == b || (anynan && (a & 0x7FFFFFFFu) > 0x7F800000u && (b & 0x7FFFFFFFu) > 0x7F800000u);
}

static long compare_window(const fpemu_format *f, int k, const char *what, const float *in, const refel *ref, size_t n,
                           size_t doff, int *shown) {
    long bad = 0;
    unsigned want_flags = 0;
    fpemu_cast_stats want = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &in[i], 4);
        uint64_t code = fpemu_code_load(f, enc_at(f, GUARD + doff), i);
        uint32_t r = got.rnd[GUARD + doff + i], p = got.inpl[GUARD + doff + i];
        if (code != ref[i].code || !same_f32(r, ref[i].rounded, actx[k].generic) || !same_f32(p, ref[i].rounded, actx[k].generic)) {
            if (++bad && (*shown)++ < 4)
                diag("%s %s: f32 %08X (element %zu of %zu) -> code %llX, round %08X, in place %08X; scalar %llX, %08X", f->name, what,
                     u, i, n, (unsigned long long)code, r, p, (unsigned long long)ref[i].code, ref[i].rounded);
        }
        want_flags |= ref[i].flags;
        stats_add(&want, &ref[i].st);
    }
    size_t cb = (size_t)f->container / 8;
    for (size_t i = 0; i < doff + n + 2 * GUARD; i++) {
        int inside = i >= GUARD + doff && i < GUARD + doff + n;
        int touched = got.rnd[i] != SENT32 || (!inside && got.inpl[i] != SENT32);
        for (size_t b = 0; b < cb && !inside; b++) touched |= ((unsigned char *)got.enc)[i * cb + b] != SENT8;
        if (!inside && touched) {
            if (++bad && (*shown)++ < 4) diag("%s %s: an array call wrote element %zd (outside 0..%zu)", f->name, what, (ssize_t)i - (ssize_t)(GUARD + doff), n);
        }
    }
    for (int c = 0; c < NCALL; c++) {
        if (got.flags[c] != want_flags || stats_differ(&got.st[c], &want)) {
            bad++;
            if ((*shown)++ < 4)
                diag("%s %s %s on %zu elements from f32 %08X: flags %02X counters n=%llu ovf=%llu sat=%llu unf=%llu sub=%llu nonfin=%llu amax=%a;"
                     " scalar %02X n=%llu ovf=%llu sat=%llu unf=%llu sub=%llu nonfin=%llu amax=%a",
                     f->name, what, call_name[c], n, n ? emu_bits(in[0]) : 0u, got.flags[c], (unsigned long long)got.st[c].n,
                     (unsigned long long)got.st[c].overflow, (unsigned long long)got.st[c].saturated,
                     (unsigned long long)got.st[c].underflow, (unsigned long long)got.st[c].subnormal,
                     (unsigned long long)got.st[c].nonfinite_in, got.st[c].amax, want_flags, (unsigned long long)want.n,
                     (unsigned long long)want.overflow, (unsigned long long)want.saturated, (unsigned long long)want.underflow,
                     (unsigned long long)want.subnormal, (unsigned long long)want.nonfinite_in, want.amax);
        }
    }
    return bad;
}

static fpemu_ctx make_ctx(int k) {
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    c.round = actx[k].round;
    c.sat = actx[k].sat;
    c.tininess_before = actx[k].tininess_before;
    c.ftz = actx[k].ftz;
    c.daz = actx[k].daz;
    c.nan_policy = actx[k].nan;
    return c;
}

/* f32 patterns at the edges of f's ranges, both signs: zeros, f32
 * subnormals, around half the smallest subnormal, the tininess borders
 * below min normal, min normal, a tie at 1, max finite, the overflow
 * threshold, inf, NaNs (quiet, signalling, payloads). */
static size_t probes(const fpemu_format *f, uint32_t *p) {
    float mn = (float)f->min_normal, ms = (float)f->min_subnormal, mx = (float)f->max_finite;
    float top = ldexpf(1, f->emax - f->mbits); /* ulp of max finite */
    const float v[] = {0, mn, ms, ms / 2, ms * 1.5f, ms * 2.5f, mn - ms / 2, mn - ms / 4, mn - ms / 2 - ms / 4, mn + ms / 2,
                       1, 1 + ldexpf(1, -f->mbits - 1), mx, mx + top / 2, mx + top, INFINITY};
    const uint32_t raw[] = {1, 0x7FFFFF, 0x400000, 0x800000, 0x7F7FFFFF, 0x7FC00000, 0x7F800001, 0x7FA00000, 0x7FFFFFFF, 0x7FC00001};
    size_t k = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint32_t b;
        memcpy(&b, &v[i], 4);
        for (int d = -1; d <= 1; d++) {
            if (b == 0 && d < 0) continue;
            p[k++] = b + (uint32_t)d;
            p[k++] = (b + (uint32_t)d) | 0x80000000u;
        }
    }
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) p[k++] = raw[i], p[k++] = raw[i] | 0x80000000u;
    for (int i = 0; i < 16; i++) p[k++] = (uint32_t)rnd();
    return k;
}

static const char *const array_fmts[] = {"bf16", "f16", "e4m3", "e5m2", "e3m2", "e2m1", "e2m3", "binary8p4e", "binary8p1e", "binary8p1f",
                                         "e4m3fnuz", "e8m3", "e6m9", "tf32", "e8m0"};

/* Each probe alone among fillers (1.0, an exact normal; +0 and -0, which
 * the kernels write themselves), at lanes of the vector loop and of the
 * tail, so the window's flags and counters are the probe's own. Every
 * level in levels[0..nlev) runs each window; bad[] and cases count per level. */
static void probe_windows(const fpemu_format *f, const int *levels, int nlev, long *bad, long *cases, int *shown) {
    static float in[MAXN] __attribute__((aligned(64)));
    static refel ref[MAXN];
    uint32_t pr[256];
    size_t np = probes(f, pr);
    const float fill[] = {1.0f, 0.0f, -0.0f};
    for (int k = 0; k < NACTX; k++) {
        fpemu_ctx c = make_ctx(k);
        refel pref[256], fref[3];
        for (size_t i = 0; i < np; i++) ref_elem(f, &c, pr[i], &pref[i]);
        for (int j = 0; j < 3; j++) ref_elem(f, &c, emu_bits(fill[j]), &fref[j]);
        for (size_t i = 0; i < np; i++)
            for (int j = 0; j < 3; j++) {
                /* lanes 0, 15, 16, 47 and three that rotate with the probe and filler */
                const size_t pos[] = {0, 15, 16, 47, (i + j) % 16, 16 + (i + 2 * j + 5) % 16, 32 + (i + j + 9) % 16};
                for (size_t q = 0; q < sizeof pos / sizeof pos[0]; q++) {
                    size_t lens[2] = {pos[q] + 1, 48};
                    for (int l = 0; l < 2; l++) {
                        size_t n = lens[l], off = (i + q) % 16, doff = (i + l) % 7;
                        for (size_t e = 0; e < n; e++) in[off + e] = fill[j], ref[e] = fref[j];
                        memcpy(&in[off + pos[q]], &pr[i], 4);
                        ref[pos[q]] = pref[i];
                        for (int v = 0; v < (actx[k].generic ? 1 : nlev); v++) { /* generic: no kernel to vary */
                            emu__cast_isa(levels[v]);
                            run_window(f, &c, in + off, n, doff);
                            char what[96];
                            snprintf(what, sizeof what, "%s %s", isa_name[levels[v]], actx[k].name);
                            bad[v] += compare_window(f, k, what, in + off, ref, n, doff, shown);
                            cases[v]++;
                        }
                    }
                }
            }
    }
}

/* A sweep of f32 patterns (every 2039th without sat, every 8191st with;
 * 4 times sparser for formats other than the hot four), in windows of 2^16
 * with unaligned starts and ends. */
static void sweep_windows(const fpemu_format *f, int hot, const int *levels, int nlev, long *bad, long *cases, int *shown) {
    enum { N = 1 << 16 };
    static float in[N + 32] __attribute__((aligned(64)));
    static refel ref[N + 32];
    for (int sat = 0; sat < 2; sat++) {
        fpemu_ctx c = make_ctx(sat);
        uint64_t stride = (sat ? 8191 : 2039) * (hot ? 1 : 4);
        int chunk = 0;
        for (uint64_t base = (uint64_t)sat * 777; base < (UINT64_C(1) << 32); base += (uint64_t)N * stride, chunk++) {
            for (size_t i = 0; i < N + 32; i++) {
                uint32_t u = (uint32_t)(base + i * stride);
                memcpy(&in[i], &u, 4);
                ref_elem(f, &c, u, &ref[i]);
            }
            size_t off = (size_t)chunk % 16, n = N - (size_t)chunk % 13, doff = (size_t)chunk % 5;
            for (int v = 0; v < nlev; v++) {
                emu__cast_isa(levels[v]);
                run_window(f, &c, in + off, n, doff);
                char what[96];
                snprintf(what, sizeof what, "%s %s sweep", isa_name[levels[v]], actx[sat].name);
                bad[v] += compare_window(f, sat, what, in + off, ref + off, n, doff, shown);
                cases[v] += (long)n;
            }
        }
    }
}

static void array_tests(void) {
    F32 = fpemu_format_get("f32", NULL, 0);
    int best = emu__cast_isa(99);
    /* the checker itself: one wrong element, flag, counter or stray write each fails */
    {
        const fpemu_format *f = fpemu_format_get("e4m3", NULL, 0);
        static float in[64];
        static refel ref[64];
        fpemu_ctx c = make_ctx(0);
        for (int i = 0; i < 64; i++) {
            in[i] = (float)(i - 20) * 0.37f;
            ref_elem(f, &c, emu_bits(in[i]), &ref[i]);
        }
        int shown = 99;
        run_window(f, &c, in, 50, 3);
        long clean = compare_window(f, 0, "planted", in, ref, 50, 3, &shown);
        long caught = 0;
        ((unsigned char *)got.enc)[GUARD + 3 + 17] ^= 1;
        caught += compare_window(f, 0, "planted", in, ref, 50, 3, &shown) > 0;
        ((unsigned char *)got.enc)[GUARD + 3 + 17] ^= 1;
        got.inpl[GUARD + 3 + 40] ^= 1;
        caught += compare_window(f, 0, "planted", in, ref, 50, 3, &shown) > 0;
        got.inpl[GUARD + 3 + 40] ^= 1;
        got.flags[1] ^= FPEMU_FLAG_UNDERFLOW;
        caught += compare_window(f, 0, "planted", in, ref, 50, 3, &shown) > 0;
        got.flags[1] ^= FPEMU_FLAG_UNDERFLOW;
        got.st[2].subnormal++;
        caught += compare_window(f, 0, "planted", in, ref, 50, 3, &shown) > 0;
        got.st[2].subnormal--;
        ((unsigned char *)got.enc)[GUARD + 3 + 50] ^= 1;
        caught += compare_window(f, 0, "planted", in, ref, 50, 3, &shown) > 0;
        ok(clean == 0 && caught == 5, "array checker: clean run passes (%ld), 5 of 5 planted faults caught (%ld)", clean, caught);
    }
    int levels[3], nlev = 0, ngen = 0;
    for (int k = 0; k < NACTX; k++) ngen += actx[k].generic;
    for (int level = 2; level >= 0; level--) {
        if (emu__cast_isa(level) == level) levels[nlev++] = level;
        else ok(1, "# SKIP array kernels at level %s: not on this CPU (best: %s)", isa_name[level], isa_name[best]);
    }
    for (size_t k = 0; k < sizeof array_fmts / sizeof array_fmts[0]; k++) {
        const fpemu_format *f = fpemu_format_get(array_fmts[k], NULL, 0);
        if (!f) bail("format %s", array_fmts[k]);
        long bad[3] = {0}, cases[3] = {0}, pbad[3] = {0}, pcases[3] = {0};
        int shown = 0;
        sweep_windows(f, k < 4, levels, nlev, bad, cases, &shown);
        probe_windows(f, levels, nlev, pbad, pcases, &shown);
        for (int v = 0; v < nlev; v++)
            ok(bad[v] + pbad[v] == 0, "%s %s: encode_f32, round_f32 and round_f32 in place equal scalar conversion (codes, flags, "
               "counters) on %ld swept f32 patterns and %ld probe windows in %d contexts (%s)", isa_name[levels[v]], f->name,
               cases[v], pcases[v], v ? NACTX - ngen : NACTX, v ? "rne" : "rne, and the generic path in the others");
    }
    emu__cast_isa(99);
}

/* ---- sr arrays (emu/array.c) ------------------------------------------
 * encode_f32 and round_f32 in sr against each element alone through
 * fpemu_convert with counter = start + i (and sr_pos = start + i): codes,
 * rounded values, the OR of the flags, the telemetry and the final counter
 * and stream position. Every registry format; inputs random bit patterns,
 * values inside the format's range (and around its smallest normal and
 * largest finite), specials; draw widths on both sides of the cut;
 * policies rotating; some contexts with a caller stream (which takes the
 * per-element path). */
static long sr_array_check(const fpemu_format *f, long *cases) {
    enum { N = 3000 };
    static float in[N], out[N];
    static uint8_t codes[N * 8];
    static refel ref[N];
    static const int widths[] = {0, 1, 3, 7, 12, 13, 16, 17, 20, 23, 40, 64, 70, -3};
    uint64_t stream[64];
    long bad = 0;
    for (int t = 0; t < 8; t++) {
        for (int i = 0; i < N; i++) {
            uint64_t r = rnd();
            float x;
            switch (r % 4) {
            case 0: { uint32_t u = (uint32_t)(r >> 8); memcpy(&x, &u, 4); break; } /* any pattern */
            case 1: x = (float)ldexp(1 + (double)(r >> 12 & 0xFFFFF) * 0x1p-20, f->emin + (int)((r >> 40) % (unsigned)(f->emax - f->emin + 2))); break;
            case 2: x = (float)(f->max_finite * (1 - ldexp((double)(r >> 12 & 0xFF), -8 - (int)((r >> 40) % 8)))); break;
            default: x = (float)(f->min_normal * (1 + ldexp((double)(r >> 12 & 0xFF), -8 - (int)((r >> 40) % 8)))); break;
            }
            if ((r >> 60) & 1) x = -x;
            in[i] = x;
        }
        in[0] = 0.0f, in[1] = -0.0f, in[2] = (float)INFINITY, in[3] = (float)NAN, in[4] = 0x1p-149f, in[5] = -0x1p-140f;
        fpemu_ctx c;
        fpemu_ctx_init(&c);
        c.round = FPEMU_SR;
        c.seed = rnd();
        c.counter = rnd() >> 8;
        c.sr_bits = widths[(size_t)t * 3 % (sizeof widths / sizeof widths[0])];
        c.sat = t & 1, c.ftz = (t >> 1) & 1, c.daz = t == 5, c.tininess_before = t == 6;
        c.flags = t == 3 ? FPEMU_FLAG_INEXACT : 0;
        if (t == 7) {
            for (int j = 0; j < 64; j++) stream[j] = rnd();
            c.sr_stream = stream, c.sr_len = 64, c.sr_pos = 5; /* 59 caller draws, then the counter */
        }
        unsigned want_flags = c.flags;
        fpemu_cast_stats want = {0};
        for (int i = 0; i < N; i++) {
            fpemu_ctx e = c;
            e.counter = c.counter + (uint64_t)i;
            e.sr_pos = c.sr_pos + (size_t)i;
            uint32_t u;
            memcpy(&u, &in[i], 4);
            ref_elem(f, &e, u, &ref[i]);
            want_flags |= ref[i].flags;
            stats_add(&want, &ref[i].st);
        }
        fpemu_ctx a = c, b = c;
        fpemu_cast_stats sa = {0}, sb = {0};
        fpemu_encode_f32(f, codes, in, N, &a, &sa);
        fpemu_round_f32(f, out, in, N, &b, &sb);
        long tb = 0;
        for (int i = 0; i < N; i++) {
            uint32_t r;
            memcpy(&r, &out[i], 4);
            uint64_t code = fpemu_code_load(f, codes, (size_t)i);
            if (code != ref[i].code || !same_f32(r, ref[i].rounded, 1)) {
                if (tb++ < 3)
                    diag("%s sr (R=%d, t=%d): f32 %a (element %d) -> %llX, round %08X; alone %llX, %08X", f->name, c.sr_bits, t,
                         (double)in[i], i, (unsigned long long)code, r, (unsigned long long)ref[i].code, ref[i].rounded);
            }
        }
        size_t want_pos = c.sr_stream ? c.sr_len : c.sr_pos + N;
        for (int k = 0; k < 2; k++) {
            const fpemu_ctx *x = k ? &b : &a;
            const fpemu_cast_stats *st = k ? &sb : &sa;
            if (x->flags != want_flags || x->counter != c.counter + N || x->sr_pos != want_pos || stats_differ(st, &want)) {
                if (tb++ < 3)
                    diag("%s sr (t=%d) %s: flags %02X counter +%llu pos %zu n %llu amax %a; alone %02X +%d %zu %llu %a", f->name, t,
                         k ? "round_f32" : "encode_f32", x->flags, (unsigned long long)(x->counter - c.counter), x->sr_pos,
                         (unsigned long long)st->n, st->amax, want_flags, N, want_pos, (unsigned long long)want.n, want.amax);
            }
        }
        bad += tb;
        *cases += N;
    }
    return bad;
}

/* ---- decoding to f32 -------------------------------------------------------
 * fpemu_to_float and fpemu_decode_f32 against fpemu_convert to f32, bit for
 * bit with flags, in every mode and under daz, on every code (the first
 * 2^16 and 2^16 random ones of wider formats). Formats whose every value is
 * a float decode exactly and take no sr draw, daz or not; the formats at
 * f32's lower edge are the point: without subnormals the lowest binade is
 * normal and its quantum, 2^(emin - m), is what must reach 2^-149 (an f32
 * with subnormals=no has bits down to 2^-150, so it rounds). */
static int fits_f32_by_codes(const fpemu_format *f, uint64_t ncodes) {
    for (uint64_t c = 0; c < ncodes; c++) {
        uint64_t code = c << f->pad;
        fpemu_class k = fpemu_classify(f, code);
        if (k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN || k == FPEMU_CLASS_INF) continue;
        double d = fpemu_to_double(f, code);
        if ((double)(float)d != d) return 0;
    }
    return 1;
}
static void decode_tests(void) {
    /* each with whether every value is a float: the lowest quantum is
     * 2^(-bias - m) without subnormals, 2^(1 - bias - m) with them */
    const char *names[] = {"custom:e=8,m=3,bias=146,subnormals=no", "custom:e=8,m=3,bias=147,subnormals=no",
                           "custom:e=8,m=3,bias=149,subnormals=no", "custom:e=8,m=3,bias=146",
                           "custom:e=8,m=3,bias=147", "custom:e=8,m=3,bias=148",
                           "custom:e=8,m=23,subnormals=no", "custom:e=8,m=0,bias=149,subnormals=no,inf=no,nan=none",
                           "custom:e=8,m=0,bias=150,subnormals=no,inf=no,nan=none"};
    const int expect_fit[] = {1, 0, 0, 1, 1, 0, 0, 1, 0};
    const int nn = (int)(sizeof names / sizeof names[0]);
    long cases = 0, bad = 0, drawn = 0, fitbad = 0;
    for (int fi = 0; fi < nn + fpemu_format_count(); fi++) {
        const fpemu_format *f = fi < nn ? fpemu_format_get(names[fi], NULL, 0) : fpemu_format_at(fi - nn);
        if (!f) bail("format %s", names[fi]);
        if (f->bits > 32) continue;
        const size_t n = f->bits <= 16 ? (size_t)1 << f->bits : 2 * ((size_t)1 << 16);
        uint64_t *codes = malloc(n * sizeof *codes);
        void *packed = malloc(n * 8);
        float *dec = malloc(n * sizeof *dec);
        if (!codes || !packed || !dec) bail("out of memory");
        for (size_t i = 0; i < n; i++) {
            codes[i] = (i < ((size_t)1 << 16) || f->bits <= 16 ? i : rnd() & ((UINT64_C(1) << f->bits) - 1)) << f->pad;
            fpemu_code_store(f, packed, i, codes[i]);
        }
        /* the decode is exact (and takes no draw) exactly where every value is a float */
        int fits = fits_f32_by_codes(f, n < 65536 ? n : 65536) && (f->bits <= 16 || (f->p <= 24 && f->emin - f->mbits >= -149));
        for (int mode = 0; mode < FPEMU_ROUND_COUNT; mode++)
            for (int daz = 0; daz < 2; daz++) {
                fpemu_ctx t, a, b;
                fpemu_ctx_init(&t);
                t.round = (fpemu_round)mode;
                t.daz = daz;
                t.seed = 3;
                a = t;
                b = t;
                unsigned orflags = 0;
                int samec = 1;
                for (size_t i = 0; i < n; i++) {
                    fpemu_ctx x = t, y = t;
                    x.counter = y.counter = i;
                    uint32_t want = (uint32_t)fpemu_convert(F32, f, codes[i], &x);
                    float dv = fpemu_to_float(f, codes[i], &y);
                    cases++;
                    orflags |= x.flags;
                    if (fits && y.counter != i) drawn++;
                    if (!fits) samec &= x.counter == y.counter;
                    if (emu_bits(dv) == want && x.flags == y.flags) continue;
                    if (++bad <= 5)
                        diag("%s %s daz=%d: code %llX: to_float %08X flags %02X, convert %08X flags %02X", f->name,
                             fpemu_round_name(mode), daz, (unsigned long long)codes[i], emu_bits(dv), y.flags, want, x.flags);
                }
                if (!samec) bad++;
                /* the array decode: every element as fpemu_to_float, flags OR-ed */
                fpemu_decode_f32(f, dec, packed, n, &a);
                for (size_t i = 0; i < n; i++) {
                    fpemu_ctx y = b;
                    y.flags = 0;
                    if (emu_bits(dec[i]) != emu_bits(fpemu_to_float(f, codes[i], &y))) bad++;
                    b.counter = y.counter, b.sr_pos = y.sr_pos;
                }
                if (a.flags != orflags || a.counter != b.counter) bad++;
            }
        if (fi < nn && fits != expect_fit[fi]) fitbad++;
        free(codes), free(packed), free(dec);
    }
    ok(bad == 0, "decode to f32: fpemu_to_float and fpemu_decode_f32 equal fpemu_convert (bits, flags) on %ld codes x modes x daz (%ld differ)",
       cases, bad);
    ok(drawn == 0, "decode to f32 takes no sr draw where every value is a float, daz or not (%ld drew)", drawn);
    ok(fitbad == 0, "formats at f32's lower edge: every value a float exactly where the lowest quantum is >= 2^-149 (%d of %d wrong)", (int)fitbad, nn);
}

/* fpemu_round_f32 for formats with p >= 24 against decode(encode(x)) element
 * by element: copied values where that is the identity (f32, f64, no
 * policy that changes an exact value), the conversions
 * themselves where it is not (a narrower range, no infinities or no
 * subnormals, sat, daz, ftz), and NaNs as the conversions give them. */
static void round_f32_wide_tests(void) {
    const char *names[] = {"f32", "f64", "custom:e=8,m=23,bias=150", "custom:e=8,m=23,inf=no,nan=fn",
                           "custom:e=8,m=23,subnormals=no", "custom:e=8,m=23,bias=100,subnormals=no"};
    const uint32_t bits[] = {0x3F800000, 0x80000000, 0x00000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF,
                             0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC12345, 0x7F800001, 0xFFA00000,
                             0x5D000000, 0x5E800001, 0x0A000001, 0x3EAAAAAB};
    enum { NB = sizeof bits / sizeof bits[0] };
    float in[NB], out[NB];
    memcpy(in, bits, sizeof in);
    long cases = 0, bad = 0;
    for (size_t fi = 0; fi < sizeof names / sizeof names[0]; fi++) {
        const fpemu_format *f = fpemu_format_get(names[fi], NULL, 0);
        if (!f) bail("format %s", names[fi]);
        for (int t = 0; t < 12; t++) {
            fpemu_ctx c;
            fpemu_ctx_init(&c);
            c.sat = t & 1, c.ftz = t >> 1 & 1, c.daz = t >> 2 & 1;
            c.round = t >= 8 ? FPEMU_SR : t == 7 ? FPEMU_RTZ : FPEMU_RNE;
            c.nan_policy = (fpemu_nan_policy)(t % 3);
            c.seed = 5, c.counter = 1000;
            fpemu_ctx r = c, q = c;
            fpemu_cast_stats sr = {0}, sq = {0};
            fpemu_round_f32(f, out, in, NB, &r, &sr);
            uint64_t codes[NB];
            fpemu_encode_f32(f, codes, in, NB, &q, &sq);
            if (stats_differ(&sr, &sq) && bad++ < 6)
                diag("round_f32 %s t=%d: stats n %llu subnormal %llu underflow %llu overflow %llu; encode_f32 %llu %llu %llu %llu",
                     f->name, t, (unsigned long long)sr.n, (unsigned long long)sr.subnormal, (unsigned long long)sr.underflow,
                     (unsigned long long)sr.overflow, (unsigned long long)sq.n, (unsigned long long)sq.subnormal,
                     (unsigned long long)sq.underflow, (unsigned long long)sq.overflow);
            unsigned want_flags = 0;
            for (int i = 0; i < NB; i++) {
                fpemu_ctx e = c;
                e.counter = c.counter + (uint64_t)i;
                float w = fpemu_to_float(f, fpemu_from_float(f, in[i], &e), &e);
                want_flags |= e.flags;
                uint32_t gb, wb;
                memcpy(&gb, &out[i], 4), memcpy(&wb, &w, 4);
                cases++;
                if (gb != wb && bad++ < 6)
                    diag("round_f32 %s sat=%d ftz=%d daz=%d %s nan=%d: %08X -> %08X, decode(encode) %08X", f->name, c.sat,
                         c.ftz, c.daz, fpemu_round_name(c.round), (int)c.nan_policy, bits[i], gb, wb);
            }
            if ((r.flags != want_flags || r.counter != c.counter + NB) && bad++ < 6)
                diag("round_f32 %s t=%d: flags %02X counter +%llu, element by element %02X +%d", f->name, t, r.flags,
                     (unsigned long long)(r.counter - c.counter), want_flags, NB);
        }
    }
    ok(bad == 0, "round_f32, formats with p >= 24 (f32, f64, narrower range, no inf, no subnormals) under sat, "
       "ftz, daz, sr and the NaN policies: decode(encode(x)) on %ld elements, stats as encode_f32's (%ld differ)", cases,
       bad);
}

/* Unsigned formats with subnormals (the kernels' shape but for the sign):
 * negative inputs are NaN with invalid, at every kernel level. */
static void unsigned_array_tests(void) {
    const char *names[] = {"custom:e=4,m=3,signed=no", "custom:e=4,m=3,signed=no,inf=no,nan=allones",
                           "custom:e=5,m=10,signed=no"};
    const float in[] = {-0.5f, -1.5f, -0.01f, -1e-3f, 0.5f, 1e-3f, -0.0f, 0.0f, -1e30f, 3.0f, -INFINITY};
    enum { NI = sizeof in / sizeof in[0] };
    long bad = 0, cases = 0;
    for (int lv = 2; lv >= 0; lv--) {
        emu__cast_isa(lv);
        for (size_t fi = 0; fi < sizeof names / sizeof names[0]; fi++) {
            const fpemu_format *f = fpemu_format_get(names[fi], NULL, 0);
            if (!f) bail("format %s", names[fi]);
            for (int sat = 0; sat < 2; sat++) {
                fpemu_ctx c;
                fpemu_ctx_init(&c);
                c.sat = sat;
                fpemu_ctx a = c, b = c;
                uint64_t codes[NI]; /* room for any container */
                float out[NI];
                fpemu_cast_stats sa = {0}, sb = {0};
                fpemu_encode_f32(f, codes, in, NI, &a, &sa);
                fpemu_round_f32(f, out, in, NI, &b, &sb);
                unsigned fl = 0;
                for (int i = 0; i < NI; i++) {
                    fpemu_ctx e = c;
                    uint64_t w = fpemu_from_float(f, in[i], &e);
                    fl |= e.flags;
                    float wf = fpemu_to_float(f, w, &e);
                    uint32_t gb, wb;
                    memcpy(&gb, &out[i], 4), memcpy(&wb, &wf, 4);
                    cases++;
                    uint64_t gcode = fpemu_code_load(f, codes, (size_t)i);
                    if ((gcode != w || !same_f32(gb, wb, 0)) && bad++ < 5)
                        diag("%s sat=%d level %d: %a -> %04llX, round %08X; scalar %04llX, %08X", f->name, sat, lv, (double)in[i],
                             (unsigned long long)gcode, gb, (unsigned long long)w, wb);
                }
                if ((a.flags != fl || b.flags != fl) && bad++ < 5)
                    diag("%s sat=%d level %d: flags %02X / %02X, scalar %02X", f->name, sat, lv, a.flags, b.flags, fl);
            }
        }
    }
    emu__cast_isa(99);
    ok(bad == 0, "unsigned formats with subnormals, rne and sat, every kernel level: encode_f32 and round_f32 equal the "
       "scalar conversions on %ld elements, negatives NaN with invalid (%ld differ)", cases, bad);
}


/* ---- f16 and bf16: every case against the generic path ------------------
 * The registry's f16 and bf16 add, sub, mul and fma (the fast paths, and
 * behind them the complete paths of emu/fast.c that take special
 * operands, zero, subnormal and overflowing results and bf16 sums of
 * operands far apart) against arith.c's generic path called directly
 * (emu__binary, emu__fma_generic), bit for bit with flags, NaN codes
 * included: uniformly random codes (2^24 pairs for add and mul, 2^22
 * triples for fma, in rne at the best level; fewer in the other modes,
 * levels and policies), operands built to land on every edge (results
 * around the smallest normal and the subnormal grid, half the smallest
 * subnormal, the largest finite and the overflow threshold, exact zeros
 * and cancellations, wide exponent gaps), and every code against each
 * special value. */
#include "internal.h"
int emu__scalar_isa(int level); /* emu/fast.c: force the level (tests only) */

static uint64_t gen_ref(int op, const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *x) {
    switch (op) {
    case 0: return emu__binary(f, EMU_OP_ADD, a, b, x);
    case 1: return emu__binary(f, EMU_OP_SUB, a, b, x);
    case 2: return emu__binary(f, EMU_OP_MUL, a, b, x);
    default: return emu__fma_generic(f, a, b, c, x);
    }
}
static const int cop[4] = {0, 1, 2, 5}; /* do_op's numbers of add, sub, mul, fma */

typedef struct {
    const char *name;
    int sat, ftz, before, daz;
    fpemu_nan_policy nan;
} pol;
static const pol pols[] = {{"", 0, 0, 0, 0, FPEMU_NAN_CANONICAL},        {" sat", 1, 0, 0, 0, FPEMU_NAN_CANONICAL},
                           {" ftz", 0, 1, 0, 0, FPEMU_NAN_CANONICAL},    {" tininess-before", 0, 0, 1, 0, FPEMU_NAN_CANONICAL},
                           {" daz", 0, 0, 0, 1, FPEMU_NAN_CANONICAL},    {" nan=x86", 0, 0, 0, 0, FPEMU_NAN_X86},
                           {" nan=cuda", 0, 0, 0, 0, FPEMU_NAN_CUDA},    {" sat ftz tininess-before", 1, 1, 1, 0, FPEMU_NAN_TORCH}};

/* One case: the public call and the generic path from the same context
 * (same counter: sr draws the same). Returns 1 on a difference. */
static int one_case(const fpemu_format *f, int op, uint64_t a, uint64_t b, uint64_t c, const fpemu_ctx *t, const char *what,
                    long *shown) {
    fpemu_ctx x = *t, y = *t;
    uint64_t r = do_op(cop[op], f, a, b, c, &x), g = gen_ref(op, f, a, b, c, &y);
    if (r == g && x.flags == y.flags && x.counter == y.counter) return 0;
    if ((*shown)++ < 6)
        diag("%s %s %s%s: %04llX %04llX %04llX => %04llX %02X, generic %04llX %02X", f->name, opn[cop[op]],
             fpemu_round_name(t->round), what, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
             (unsigned long long)r, x.flags, (unsigned long long)g, y.flags);
    return 1;
}

/* A code of f near value v (0: +0), moved by d codes. */
static uint64_t near_code(const fpemu_format *f, double v, int d) {
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    uint64_t k = fpemu_from_double(f, v, &c);
    return (k + (uint64_t)(int64_t)d) & 0xFFFF;
}
static double val(const fpemu_format *f, uint64_t c) { return fpemu_to_double(f, c); }

/* Operands that land on an edge: a random finite nonzero a, and b (and c)
 * chosen so that the exact result sits near target t, give or take a few
 * codes. */
static void edge_operands(const fpemu_format *f, int op, uint64_t r, uint64_t *a, uint64_t *b, uint64_t *c) {
    double mn = f->min_normal, ms = f->min_subnormal, mx = f->max_finite;
    double ulpmax = ldexp(1, f->emax - f->mbits);
    const double targets[] = {mn, mn - ms / 2, mn - ms / 4, mn * (1 - ldexp(1, -f->p - 1)), ms / 2, ms, 1.5 * ms, ms / 4,
                              ms * 3.5, mn / 2, mn * 0.75, mx, mx + ulpmax / 2, mx + ulpmax, 2 * mx, 0};
    double t = targets[(r >> 8) % (sizeof targets / sizeof targets[0])] * ((r >> 13) & 1 ? -1 : 1);
    int d = (int)((r >> 16) % 7) - 3;
    uint64_t ka, k = 0;
    do ka = fpemu_random64(r, ++k) & 0xFFFF;
    while (fpemu_classify(f, ka) != FPEMU_CLASS_NORMAL && fpemu_classify(f, ka) != FPEMU_CLASS_SUBNORMAL);
    double va = val(f, ka);
    *a = ka;
    *c = 0;
    switch (op) {
    case 0: *b = near_code(f, t - va, d); break;
    case 1: *b = near_code(f, va - t, d); break;
    case 2: {
        /* a scaled so that t / a is in range */
        double q = t / va;
        if (q != 0 && (fabs(q) > mx || fabs(q) < ms)) {
            *a = ka = near_code(f, t == 0 ? 1 : sqrt(fabs(t)) * (va < 0 ? -1 : 1), 0);
            va = val(f, ka);
            q = t / va;
        }
        *b = near_code(f, q, d);
        break;
    }
    default: { /* a * b near -c + t */
        uint64_t kb = fpemu_random64(r, 2) & 0xFFFF;
        if (fpemu_classify(f, kb) > FPEMU_CLASS_NORMAL) kb &= 0x3FFF;
        *b = kb;
        double p = va * val(f, kb);
        *c = near_code(f, t - p, d);
        if ((r >> 40) & 1) *c = near_code(f, -p, d); /* cancellation */
    }
    }
}

static void complete_path_tests(void) {
    static const char *names[] = {"f16", "bf16"};
    int best = emu__scalar_isa(2);
    for (int fi = 0; fi < 2; fi++) {
        const fpemu_format *f = fpemu_format_get(names[fi], NULL, 0);
        for (int level = best; level >= 0; level--) {
            if (emu__scalar_isa(level) != level) continue;
            for (int op = 0; op < 4; op++) {
                long bad = 0, cases = 0, shown = 0;
                for (int mode = 0; mode < FPEMU_ROUND_COUNT; mode++)
                    for (size_t pi = 0; pi < sizeof pols / sizeof pols[0]; pi++) {
                        fpemu_ctx t;
                        fpemu_ctx_init(&t);
                        t.round = (fpemu_round)mode;
                        t.sat = pols[pi].sat, t.ftz = pols[pi].ftz, t.tininess_before = pols[pi].before;
                        t.daz = pols[pi].daz, t.nan_policy = pols[pi].nan;
                        t.seed = 17;
                        /* uniformly random codes: the most in rne without policies at the best level */
                        long n = 1L << 14;
                        if (mode == FPEMU_RNE && pi == 0) n = level == best ? (op == 3 ? 1L << 22 : 1L << 24) : 1L << 20;
                        else if (pi == 0 && level == best) n = 1L << 17;
                        uint64_t st = fpemu_random64((uint64_t)(fi * 131 + level * 17 + op * 7 + mode), pi);
                        for (long i = 0; i < n; i++) {
                            uint64_t r = fpemu_random64(st, (uint64_t)i);
                            t.counter = (uint64_t)i;
                            bad += one_case(f, op, r & 0xFFFF, r >> 16 & 0xFFFF, r >> 32 & 0xFFFF, &t, pols[pi].name, &shown);
                        }
                        cases += n;
                        /* edges */
                        long ne = pi == 0 ? 1L << 16 : 1L << 12;
                        for (long i = 0; i < ne; i++) {
                            uint64_t a, b, c;
                            edge_operands(f, op, fpemu_random64(st + 1, (uint64_t)i), &a, &b, &c);
                            t.counter = (uint64_t)i;
                            bad += one_case(f, op, a, b, c, &t, pols[pi].name, &shown);
                            bad += one_case(f, op, b, a, c, &t, pols[pi].name, &shown);
                        }
                        cases += 2 * ne;
                        /* every code against each special value, in both places */
                        if (pi == 0 || mode == FPEMU_RNE) {
                            uint64_t sp[] = {0, 0x8000, 1, 0x8001, (uint64_t)(f->mag_mask ^ ((UINT64_C(1) << f->mbits) - 1)),
                                             f->max_code, f->max_code + 1, (f->max_code + 1) | 0x8000,
                                             (f->max_code + 1) | (UINT64_C(1) << (f->mbits - 1)), (f->max_code + 1) | 1,
                                             0xFFFF};
                            for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++)
                                for (uint64_t x = 0; x < 0x10000; x += (pi == 0 ? 1 : 7)) {
                                    t.counter = x;
                                    bad += one_case(f, op, x, sp[k], x ^ 0x8000, &t, pols[pi].name, &shown);
                                    bad += one_case(f, op, sp[k], x, sp[(k + 3) % 11], &t, pols[pi].name, &shown);
                                    cases += 2;
                                }
                        }
                    }
                ok(bad == 0, "%s %s (level %d): fast and complete paths equal the generic path on %ld cases (random codes, "
                   "edges, specials; 7 modes x 8 policy sets; %ld differ)", f->name, opn[cop[op]], level, cases, bad);
            }
        }
    }
    emu__scalar_isa(2);
}

int main(void) {
    rs = tap_seed(5);
    F32 = fpemu_format_get("f32", NULL, 0);
    /* at the best kernel level (AVX-512: sr 8 elements at a time) and in
     * portable C (element by element) */
    for (int lv = 2; lv >= 0; lv -= 2) {
        int got_lv = emu__cast_isa(lv);
        long cases = 0, bad = 0;
        int nf = 0;
        for (int i = 0; i < fpemu_format_count(); i++) {
            const fpemu_format *f = fpemu_format_at(i);
            if (f->p >= 24) continue; /* f32 and f64: round_f32 passes values through by design */
            bad += sr_array_check(f, &cases);
            nf++;
        }
        ok(bad == 0, "sr arrays (%s): encode_f32 and round_f32 equal element-by-element conversion on %ld elements in %d formats (%ld differ)",
           isa_name[got_lv], cases, nf, bad);
    }
    emu__cast_isa(99);
    const char *pairs[][2] = {{"f16", "custom:e=5,m=10"}, {"bf16", "custom:e=8,m=7"}, {"e5m2", "custom:e=5,m=2"},
                              {"f32", "custom:e=8,m=23"}, {"e4m3", "custom:e=4,m=3,bias=7,inf=no,nan=fn"}};
    for (size_t pi = 0; pi < sizeof pairs / sizeof pairs[0]; pi++) {
        const fpemu_format *f = fpemu_format_get(pairs[pi][0], NULL, 0), *g = fpemu_format_get(pairs[pi][1], NULL, 0);
        if (!g) bail("twin %s", pairs[pi][1]);
        long cases = 0, bad = 0;
        for (int op = 0; op < 6; op++)
            for (int mode = 0; mode < FPEMU_ROUND_COUNT; mode++)
                for (int i = 0; i < 6000; i++) {
                    uint64_t a = operand(f), b = operand(f), c = operand(f);
                    fpemu_ctx x, y, z;
                    fpemu_ctx_init(&x);
                    x.round = (fpemu_round)mode;
                    x.seed = 99;
                    x.counter = (uint64_t)i;
                    x.sat = i & 1;
                    y = x;
                    z = x;
                    uint64_t rf = do_op(op, f, a, b, c, &x), rg = do_op(op, g, a, b, c, &y);
                    int sub = fpemu_classify(f, a) == FPEMU_CLASS_SUBNORMAL || fpemu_classify(f, b) == FPEMU_CLASS_SUBNORMAL ||
                              fpemu_classify(f, c) == FPEMU_CLASS_SUBNORMAL;
                    uint64_t rz = rg;
                    unsigned zf = y.flags;
                    if (!sub) {
                        z.daz = 1;
                        rz = do_op(op, g, a, b, c, &z);
                        zf = z.flags;
                    }
                    cases++;
                    int nan = fpemu_is_nan(f, rf) && fpemu_is_nan(g, rg) && fpemu_is_nan(g, rz);
                    if ((rf != rg || rg != rz) && !nan) bad++;
                    else if (x.flags != y.flags || y.flags != zf || x.counter != y.counter) bad++;
                    else continue;
                    if (bad <= 5)
                        diag("%s_%s %s sat=%d: %llX %llX %llX => fast %llX %02X, twin %llX %02X, generic %llX %02X", f->name, opn[op],
                             fpemu_round_name(mode), x.sat, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
                             (unsigned long long)rf, x.flags, (unsigned long long)rg, y.flags, (unsigned long long)rz, zf);
                }
        ok(bad == 0, "%s: specialised, generic-fast and generic paths agree on %ld cases (6 ops x 7 modes x sat)", f->name, cases);
    }

    complete_path_tests();
    array_tests();
    decode_tests();
    round_f32_wide_tests();
    unsigned_array_tests();
    return done_testing();
}
