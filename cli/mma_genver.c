/* SPDX-License-Identifier: MIT */
/* mma_genver.c: `fpemu mma --gen` and `fpemu mma --verify`
 * (docs/tensor-cores.md, "Test vectors for a matrix unit").
 *
 * --gen writes N complete lines `C A0 B0 ... A(k-1) B(k-1) D` (D from the
 * model, as `fpemu mma` computes it). Vector line i (counted from 0, the
 * header comment not counted) belongs to class cycle[i % len(cycle)] and
 * draws its random bits from its own stream, fpemu_random64(seed, i) fed to
 * SplitMix64: the file for N lines is the first N lines of the file for
 * more, and one line can be regenerated alone.
 *
 * --verify reads complete lines, recomputes D, prints each mismatch as
 * `line N: C A0 B0 ... => GOT, expected WANT` (the part before `=>` is an
 * `fpemu mma` input line), then `N lines, M mismatches`; exit 0, 1 or 2,
 * as `fpemu verify` (cli/cmd_run.c). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "mma_genver.h"
#include "vector.h"

/* ---- options ------------------------------------------------------------ */

int mma_genver_take(const char *sub, int *argc, char **argv, mma_genver_opts *g) {
    memset(g, 0, sizeof *g);
    g->seed = 1;
    g->max_print = 20;
    size_t o = (size_t)snprintf(g->cmdline, sizeof g->cmdline, "fpemu");
    for (int i = 0; i < *argc && o < sizeof g->cmdline; i++)
        o += (size_t)snprintf(g->cmdline + o, sizeof g->cmdline - o, " %s", argv[i]);
    int seed_set = 0, k_set = 0, mp_set = 0, en_set = 0, w = 1;
    for (int i = 1; i < *argc; i++) {
        const char *s = argv[i];
        unsigned long long v;
        if (!strcmp(s, "--gen")) {
            if (i + 1 >= *argc || cli_parse_u64(argv[i + 1], &v) || v < 1 || v > 1000000000ULL)
                return cli_error(sub, "--gen needs a number of lines in [1, 10^9]");
            if (g->mode) return cli_error(sub, "--gen and --verify exclude each other (and each is given once)");
            g->mode = MMA_GV_GEN, g->n = v, i++;
        } else if (!strcmp(s, "--verify")) {
            if (g->mode) return cli_error(sub, "--gen and --verify exclude each other (and each is given once)");
            g->mode = MMA_GV_VERIFY;
        } else if (!strcmp(s, "--seed")) {
            if (i + 1 >= *argc || cli_parse_u64(argv[i + 1], &v)) return cli_error(sub, "--seed needs a non-negative integer");
            g->seed = v, seed_set = 1, i++;
        } else if (!strcmp(s, "--k")) {
            if (i + 1 >= *argc || cli_parse_u64(argv[i + 1], &v) || v < 1 || v > 4096)
                return cli_error(sub, "--k needs a number of products per line in [1, 4096]");
            g->k = v, k_set = 1, i++;
        } else if (!strcmp(s, "--max-print")) {
            if (i + 1 >= *argc || cli_parse_u64(argv[i + 1], &v) || v > 1000000000ULL)
                return cli_error(sub, "--max-print needs a non-negative integer");
            g->max_print = (long)v, mp_set = 1, i++;
        } else if (!strcmp(s, "--exact-nan")) {
            g->exact_nan = 1, en_set = 1;
        } else {
            argv[w++] = argv[i];
        }
    }
    *argc = w;
    argv[w] = NULL;
    if ((seed_set || k_set) && g->mode != MMA_GV_GEN) return cli_error(sub, "--seed and --k go with --gen N");
    if ((mp_set || en_set) && g->mode != MMA_GV_VERIFY) return cli_error(sub, "--max-print and --exact-nan go with --verify");
    return 0;
}

/* ---- D, as `fpemu mma` computes it (cli/cmd_mma.c) ----------------------------- */

uint64_t mma_line_d(const fpemu_mma_model *m, int int_mode, unsigned long long promote, const uint64_t *a,
                  const uint64_t *b, int32_t *ia, int32_t *ib, size_t k, uint64_t c) {
    if (int_mode) {
        for (size_t i = 0; i < k; i++) ia[i] = (int32_t)a[i], ib[i] = (int32_t)b[i];
        return (uint32_t)fpemu_mma_dot_int(m, ia, ib, k, (int32_t)(uint32_t)c);
    }
    if (promote && k > 0) {
        fpemu_ctx ctx;
        fpemu_ctx_init(&ctx);
        uint64_t acc = fpemu_convert(m->fd, m->fc, c, &ctx);
        for (size_t i0 = 0; i0 < k; i0 += promote) {
            size_t n = k - i0 < promote ? k - i0 : promote;
            acc = fpemu_add(m->fd, acc, fpemu_mma_dot(m, a + i0, b + i0, n, 0, NULL), &ctx);
        }
        return acc;
    }
    return fpemu_mma_dot(m, a, b, k, c, NULL);
}

/* ---- the generator -------------------------------------------------------- */

const char *const mma_genver_float_cycle[] = {"random", "cancel",  "align", "floor",     "overflow", "random",
                                              "nan-inf", "zero",   "align", "subnormal", "chain",    "random", NULL};
const char *const mma_genver_int_cycle[] = {"random", "cancel", "overflow", "zero", "chain", "random", NULL};

typedef struct {
    const fpemu_mma_model *m;
    int int_mode;
    const fpemu_format *fa, *fb, *fc, *fd; /* construction formats (tf32 for f32 inputs the model truncates) */
    int nfrac, omant, B, K, Kc;
    int pmin, pmax;                        /* exponents of normal x normal products */
    uint64_t s;                            /* SplitMix64 state */
    uint64_t *a, *b, c;
    size_t k;
} gen;

static uint64_t rnd(gen *g) {
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
/* Uniform in [lo, hi] (lo when hi < lo). */
static int rint_in(gen *g, int lo, int hi) { return hi <= lo ? lo : lo + (int)(rnd(g) % (uint64_t)(hi - lo + 1)); }
static int coin(gen *g, int n) { return rnd(g) % (uint64_t)n == 0; } /* probability 1/n */

static int lo_exp(const fpemu_format *f) { return f->has_subnormals ? f->emin - f->mbits : f->emin; }

/* ±sig * 2^exp in f exactly (finite), or -1. */
static int exact(const fpemu_format *f, int sign, uint64_t sig, int exp, uint64_t *code) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    if (sign && !f->is_signed) return -1;
    uint64_t c = fpemu_round_pack(f, sign, sig, exp, 0, &ctx);
    if (ctx.flags & (FPEMU_FLAG_INEXACT | FPEMU_FLAG_OVERFLOW)) return -1;
    fpemu_class k = fpemu_classify(f, c);
    if (k == FPEMU_CLASS_INF || k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN) return -1;
    *code = c;
    return 0;
}

static uint64_t zero_code(const fpemu_format *f, int sign) {
    uint64_t c;
    if (exact(f, sign && f->has_negzero, 0, 0, &c)) exact(f, 0, 0, 0, &c);
    return c;
}

static uint64_t neg_code(const fpemu_format *f, uint64_t c) { return c ^ (f->sign_bit << f->pad); }

/* A value of f whose leading bit is 2^E: 1 (rsig 0) or random fraction bits
 * (rsig 1). -1 when 2^E is outside f (below its smallest subnormal or above
 * its largest binade). */
static int val(gen *g, const fpemu_format *f, int sign, int E, int rsig, uint64_t *code) {
    int lo = lo_exp(f);
    if (E < lo || E > f->emax) return -1;
    int nb = E >= f->emin ? f->mbits : E - lo;
    if (rsig && nb > 0) {
        uint64_t sig = UINT64_C(1) << nb | (rnd(g) & ((UINT64_C(1) << nb) - 1));
        if (!exact(f, sign, sig, E - nb, code)) return 0;
    }
    return exact(f, sign, 1, E, code);
}

/* a, b with a*b = ±m * 2^E: m = 1 (rsig 0), random in [1, 2) (rsig 1: b a
 * power of two, so the product's leading bit is 2^E) or in [1, 4) (rsig
 * 2). Normal inputs when they can give E, else subnormal ones. -1 if no
 * pair of inputs gives 2^E. */
static int prod(gen *g, int E, int sign, int rsig, uint64_t *a, uint64_t *b) {
    const fpemu_format *fa = g->fa, *fb = g->fb;
    int lo = E - fb->emax > fa->emin ? E - fb->emax : fa->emin;
    int hi = E - fb->emin < fa->emax ? E - fb->emin : fa->emax;
    if (hi < lo) {
        lo = E - fb->emax > lo_exp(fa) ? E - fb->emax : lo_exp(fa);
        hi = E - lo_exp(fb) < fa->emax ? E - lo_exp(fb) : fa->emax;
        if (hi < lo) return -1;
    }
    int ea = rint_in(g, lo, hi), sa = (int)(rnd(g) & 1);
    if (!fb->is_signed) sa = sign;
    if (val(g, fa, sa, ea, rsig, a) || val(g, fb, sa ^ sign, E - ea, rsig == 2, b)) return -1;
    return 0;
}

/* c with leading bit 2^E (rsig as val). */
static int cval(gen *g, int sign, int E, int rsig) { return val(g, g->fc, sign, E, rsig, &g->c); }

/* A code of class want (FPEMU_CLASS_INF or a NaN) of f with the given sign,
 * or -1 if f has none. */
static int special(gen *g, const fpemu_format *f, int want_nan, int sign, uint64_t *code) {
    uint64_t expmask = ((UINT64_C(1) << f->ebits) - 1) << f->mbits, mant = (UINT64_C(1) << f->mbits) - 1;
    uint64_t cand[4];
    int n = 0;
    if (want_nan) {
        uint64_t r = rnd(g) & mant;
        cand[n++] = expmask | (r ? r : 1);
        cand[n++] = f->mag_mask;
        cand[n++] = 0; /* fnuz: the -0 pattern */
    } else {
        cand[n++] = expmask;
        cand[n++] = f->mag_mask;
    }
    for (int i = 0; i < n; i++) {
        for (int s = 0; s < 2; s++) {
            uint64_t c = (cand[i] | ((s ? !sign : sign) || (want_nan && i == 2) ? f->sign_bit : 0)) << f->pad;
            fpemu_class k = fpemu_classify(f, c);
            if (want_nan ? (k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN) : k == FPEMU_CLASS_INF) {
                if (!want_nan && ((c >> f->pad) & f->sign_bit ? 1 : 0) != sign) continue;
                *code = c;
                return 0;
            }
        }
    }
    return -1;
}

/* Random code of the model's own format (any bit pattern of the field). */
static uint64_t any_code(gen *g, const fpemu_format *f) {
    int w = f->bits;
    return (rnd(g) & (w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1)) << f->pad;
}

/* A band of product exponents inside the output's range (normal products). */
static int band(gen *g) {
    int lo = g->pmin, hi = g->pmax;
    int dlo[2] = {g->fd->emin + g->omant + 2, g->fd->emin}, dhi[2] = {g->fd->emax - 6, g->fd->emax - 2};
    for (int i = 0; i < 2; i++) {
        int l2 = lo > dlo[i] ? lo : dlo[i], h2 = hi < dhi[i] ? hi : dhi[i];
        if (l2 <= h2) return rint_in(g, l2, h2);
    }
    return rint_in(g, lo, hi);
}

/* Distinct random positions among [0, n) (n > 0), out[0..cnt-1]; cnt <= n. */
static void positions(gen *g, size_t n, size_t *out, size_t cnt) {
    for (size_t i = 0; i < cnt; i++) {
        size_t p;
        int again;
        do {
            p = (size_t)(rnd(g) % n), again = 0;
            for (size_t j = 0; j < i; j++) if (out[j] == p) again = 1;
        } while (again);
        out[i] = p;
    }
}

static void fill_zero(gen *g) {
    for (size_t i = 0; i < g->k; i++) {
        g->a[i] = zero_code(g->fa, (int)(rnd(g) & 1));
        g->b[i] = zero_code(g->fb, (int)(rnd(g) & 1));
    }
    g->c = zero_code(g->fc, (int)(rnd(g) & 1));
}

/* Put a product of 2^E (sign, rsig) at position p; 0, or -1 if 2^E is out
 * of the inputs' reach (p keeps its zero product). */
static int put(gen *g, size_t p, int E, int sign, int rsig) {
    uint64_t a, b;
    if (prod(g, E, sign, rsig, &a, &b)) return -1;
    g->a[p] = a, g->b[p] = b;
    return 0;
}

/* The line's first block (positions that share a block with position 0). */
static size_t block0(const gen *g) { return (size_t)g->B < g->k ? (size_t)g->B : g->k; }

static void c_random(gen *g, int E, int w) {
    int r = (int)(rnd(g) % 8);
    if (r == 0) g->c = zero_code(g->fc, (int)(rnd(g) & 1));
    else if (r == 1 || cval(g, (int)(rnd(g) & 1), E + rint_in(g, -w, w + 2), 1)) {
        do g->c = any_code(g, g->m->fc);
        while (fpemu_classify(g->m->fc, g->c) >= FPEMU_CLASS_INF);
    }
}

/* random: banded products (exponents within w of a centre, w from 2 to
 * nfrac + 4), random signs and significands, some zeros; one line in four
 * is every field a random bit pattern (NaN and inf included; f32 inputs of
 * a tf32 model keep their low bits). */
static void cls_random(gen *g) {
    if (coin(g, 4)) {
        g->c = any_code(g, g->m->fc);
        for (size_t i = 0; i < g->k; i++) g->a[i] = any_code(g, g->m->fa), g->b[i] = any_code(g, g->m->fb);
        return;
    }
    int E0 = band(g), ws[3] = {2, g->nfrac / 2, g->nfrac + 4}, w = ws[rnd(g) % 3];
    for (size_t i = 0; i < g->k; i++)
        if (!coin(g, 10)) put(g, i, E0 + rint_in(g, -w, w), (int)(rnd(g) & 1), 2);
    c_random(g, E0, w);
}

/* cancel: one to three pairs x, -x of large products (or c = -x of one
 * product) cancel exactly, leaving small products 1 to nfrac + 6 binades
 * below; a pair is split across a block boundary when the line is longer
 * than a block. */
static void cls_cancel(gen *g) {
    int E0 = band(g);
    size_t n0 = block0(g), pos[2 * 3 + 3]; /* up to 3 pairs and 3 small terms */
    int pairs = rint_in(g, 1, 3), smalls = rint_in(g, 1, 3);
    size_t need = (size_t)(2 * pairs + smalls);
    if (need > n0) need = n0;
    positions(g, n0, pos, need);
    size_t u = 0;
    if (g->k > (size_t)g->B && g->B > 0 && coin(g, 3)) { /* a pair across the boundary */
        size_t p = (size_t)g->B - 1;
        if (!put(g, p, E0, (int)(rnd(g) & 1), 2)) g->a[p + 1] = neg_code(g->fa, g->a[p]), g->b[p + 1] = g->b[p];
        for (size_t i = 0; i < need; i++) if (pos[i] == p) pos[i] = pos[need - 1], need--;
    }
    for (int j = 0; j < pairs && u + 2 <= need; j++, u += 2) {
        size_t p = pos[u], q = pos[u + 1];
        if (put(g, p, E0 + rint_in(g, -1, 0), (int)(rnd(g) & 1), 2)) continue;
        g->a[q] = neg_code(g->fa, g->a[p]), g->b[q] = g->b[p];
    }
    for (; u < need; u++) put(g, pos[u], E0 - rint_in(g, 1, g->nfrac + 6), (int)(rnd(g) & 1), (int)(rnd(g) % 3));
    int r = (int)(rnd(g) % 3);
    if (r == 0) {
        g->c = zero_code(g->fc, (int)(rnd(g) & 1));
    } else if (r == 1 && need >= 1) { /* c = -(a product), when c can hold it */
        uint64_t a, b, cc;
        if (!put(g, pos[0], E0, (int)(rnd(g) & 1), 1)) {
            a = g->a[pos[0]], b = g->b[pos[0]];
            int sa, ea, sb, eb;
            uint64_t ma, mb;
            fpemu_unpack(g->fa, a, &sa, &ma, &ea);
            fpemu_unpack(g->fb, b, &sb, &mb, &eb);
            if (!exact(g->fc, !(sa ^ sb), ma * mb, ea + eb, &cc)) g->c = cc;
        }
    } else {
        cval(g, (int)(rnd(g) & 1), E0 - rint_in(g, 1, g->nfrac + 4), (int)(rnd(g) & 1));
    }
}

/* align: the largest term at 2^E (a product or c); small terms at
 * 2^(E - nfrac + d), d in {-2, -1, 0, 1} (the last bit kept, one bit
 * more or less), power-of-two or with random low bits straddling the cut,
 * either sign; or every other product just below the cut (lost one by
 * one, worth quanta together). */
static void cls_align(gen *g) {
    size_t n0 = block0(g), pos[6];
    int sign = (int)(rnd(g) & 1), big_c = coin(g, 2), many = n0 >= 4 && coin(g, 4);
    int dmin = many ? -1 : -2;
    /* the largest term: a product at E with its smalls reachable, else c */
    int E = 0, ok = 0;
    if (!big_c) {
        int lo = g->pmin + g->nfrac + 2, hi = g->pmax < g->fd->emax - 2 ? g->pmax : g->fd->emax - 2;
        if (lo <= hi) E = rint_in(g, lo, hi), ok = !put(g, 0, E, sign, (int)(rnd(g) & 1));
        if (!ok) big_c = 1;
    }
    if (big_c) {
        int Es = rint_in(g, g->pmin, g->pmax);
        E = Es + g->nfrac - rint_in(g, dmin, 1);
        int top = g->fc->emax < g->fd->emax - 2 ? g->fc->emax : g->fd->emax - 2;
        if (E > top) E = top;
        cval(g, sign, E, (int)(rnd(g) & 1));
    }
    size_t first = big_c ? 0 : 1;
    if (many) {
        for (size_t i = first; i < n0; i++) put(g, i, E - g->nfrac - 1, (int)(rnd(g) & 1) & coin(g, 2), (int)(rnd(g) & 1));
        return;
    }
    size_t ns = (size_t)rint_in(g, 1, 4);
    if (ns > n0 - first) ns = n0 - first;
    if (ns > 0) positions(g, n0 - first, pos, ns);
    for (size_t i = 0; i < ns; i++) {
        int Es = E - g->nfrac + rint_in(g, dmin, 1), s = (int)(rnd(g) & 1), rs = (int)(rnd(g) & 1);
        if (put(g, first + pos[i], Es, s, rs) && !big_c && i == 0) cval(g, s, Es, rs); /* c as the small term */
    }
    if (!big_c && coin(g, 2) && fpemu_classify(g->fc, g->c) == FPEMU_CLASS_ZERO)
        cval(g, (int)(rnd(g) & 1), E - g->nfrac + rint_in(g, dmin, 1), (int)(rnd(g) & 1));
}

/* floor: the emax-floor family. Every term tiny: the largest at 2^T with
 * T below or near the floor F (the model's emax_floor, else fd's emin - 7,
 * the H100 rule): either 2^T = half of d's smallest subnormal (a tie of
 * the final rounding, which the small terms decide: rne), d's smallest
 * subnormal (a negative small term decides: rz), or T in F - 4 .. F + 1;
 * a small term nfrac - 1 .. nfrac + 2 binades below (either sign: under
 * rz a negative one shows), or the smallest product; c = ±0 or tiny; zero
 * products of both signs around. The generalisation of a = [2^-14, 2^-24],
 * b = [2^-11, 2^-24], c = 0 (docs/tensor-cores.md). Terms the inputs
 * cannot reach are left out. */
static void cls_floor(gen *g) {
    const fpemu_mma_model *m = g->m;
    int F = m->has_emax_floor ? m->emax_floor : g->fd->emin - 7;
    int r = (int)(rnd(g) % 4);
    int T = r == 0 ? lo_exp(g->fd) - 1 : r == 1 ? lo_exp(g->fd) : F + rint_in(g, -4, r == 2 ? -1 : 1);
    int plo = lo_exp(g->fa) + lo_exp(g->fb);
    if (T < plo) T = plo + rint_in(g, 0, 2);
    size_t n0 = block0(g), pos[2];
    int sign = (int)(rnd(g) & 1);
    positions(g, n0, pos, n0 >= 2 ? 2 : 1);
    if (put(g, pos[0], T, sign, 0)) put(g, pos[0], g->pmin, sign, 0);
    int Es = T - g->nfrac + rint_in(g, -1, 2), ss = coin(g, 2) ? !sign : sign;
    if (Es < plo && T - plo > 1) Es = plo + rint_in(g, 0, 1); /* as low as the inputs reach */
    int v = (int)(rnd(g) % 4);
    if (n0 >= 2 && v == 0) { /* the smallest product: tiniest a times tiniest b */
        uint64_t a, b;
        if (!exact(g->fa, ss, 1, lo_exp(g->fa), &a) && !exact(g->fb, 0, 1, lo_exp(g->fb), &b))
            g->a[pos[1]] = a, g->b[pos[1]] = b;
    } else if (n0 < 2 || v == 1 || put(g, pos[1], Es, ss, (int)(rnd(g) & 1))) {
        cval(g, ss, Es, 0);
    }
}

/* overflow: sums around fd's overflow threshold, both signs: c = ±max (or
 * a product in the top binade) plus terms of ulp/2, ulp/2 - quantum, ulp,
 * ulp - quantum (the rne tie, the rup/rdn and rz thresholds) or random
 * products in the top nfrac binades, and products beyond the range. */
static void cls_overflow(gen *g) {
    const fpemu_format *fd = g->fd;
    int s = (int)(rnd(g) & 1), Ed = fd->emax, n0 = (int)block0(g);
    size_t pos[4];
    int np = n0 < 3 ? n0 : 3;
    positions(g, (size_t)n0, pos, (size_t)np);
    int bigc = g->fc->emax >= Ed && coin(g, 3) != 0 ? 1 : g->pmax + 1 < Ed;
    if (g->fc->emax < Ed) bigc = 0;
    if (bigc) {
        uint64_t mx;
        /* ±max of d's precision (out_mant bits) */
        if (exact(g->fc, s, (UINT64_C(1) << (g->omant + 1)) - 1, Ed - g->omant, &mx)) cval(g, s, Ed, 1);
        else g->c = mx;
        int v = (int)(rnd(g) % 5), ulp = Ed - g->omant;
        int k = 0;
        if (v == 1 || v == 2) k += !put(g, pos[0], ulp - 1, s, 0);
        if (v == 2 && np > 1) put(g, pos[1], Ed - g->nfrac, !s, 0);
        if (v == 3 || v == 4) k += !put(g, pos[0], ulp, s, 0);
        if (v == 4 && np > 1) put(g, pos[1], Ed - g->nfrac, !s, 0);
        if (v == 0 || !k) /* random terms in the top binades, or as high as the inputs reach */
            for (int i = 0; i < np; i++) {
                int E = Ed - rint_in(g, 0, g->nfrac + 1);
                put(g, pos[i], E <= g->pmax ? E : g->pmax - rint_in(g, 0, 2), coin(g, 5) ? !s : s, 2);
            }
        return;
    }
    /* products in the top binades (or as high as the inputs reach) */
    int top = g->pmax < Ed + 1 ? g->pmax : Ed + 1;
    for (int i = 0; i < np; i++) {
        int E = i == 0 ? (coin(g, 4) ? top : (top < Ed ? top : Ed)) : top - rint_in(g, 0, g->nfrac + 1);
        put(g, pos[i], E, coin(g, 6) ? !s : s, 2);
    }
    if (coin(g, 2)) cval(g, s, top - rint_in(g, 0, g->omant + 1), 1);
}

/* nan-inf: a banded line with NaN operands (quiet and signalling, either
 * sign), inf x finite, inf x 0, +inf and -inf products, c = ±inf or NaN,
 * c = inf against a product of the other infinity; where a format has no
 * inf or NaN the special goes to another operand or to c. */
static void cls_naninf(gen *g) {
    int E0 = band(g);
    for (size_t i = 0; i < g->k; i++)
        if (coin(g, 2)) put(g, i, E0 + rint_in(g, -4, 4), (int)(rnd(g) & 1), 2);
    c_random(g, E0, 4);
    const fpemu_mma_model *m = g->m;
    size_t n = g->k, p = (size_t)(rnd(g) % n), q = (size_t)(rnd(g) % n);
    int s = (int)(rnd(g) & 1), v = (int)(rnd(g) % 6);
    uint64_t x;
    int useb = coin(g, 2);
    const fpemu_format *fx = useb ? m->fb : m->fa, *fy = useb ? m->fa : m->fb;
    uint64_t *X = useb ? g->b : g->a, *Y = useb ? g->a : g->b;
    if (v == 0 && !special(g, fx, 1, s, &x)) { X[p] = x; return; }           /* NaN operand */
    if (v == 1 && !special(g, fx, 0, s, &x)) {                                 /* inf x finite (nonzero) */
        X[p] = x;
        if (fpemu_classify(fy, Y[p]) == FPEMU_CLASS_ZERO || fpemu_classify(fy, Y[p]) >= FPEMU_CLASS_INF) val(g, fy, 0, 0, 1, &Y[p]);
        return;
    }
    if (v == 2 && !special(g, fx, 0, s, &x)) { X[p] = x, Y[p] = zero_code(fy, (int)(rnd(g) & 1)); return; } /* inf x 0 */
    if (v == 3 && n >= 2 && !special(g, fx, 0, 0, &x)) {                       /* +inf and -inf products */
        uint64_t y;
        if (q == p) q = (p + 1) % n;
        X[p] = x, X[q] = x;
        if (!val(g, fy, 0, 0, 0, &y)) Y[p] = y, Y[q] = neg_code(fy, y);
        return;
    }
    if (v == 4 && !special(g, m->fc, 0, s, &x)) {                              /* c = inf, maybe against -inf */
        g->c = x;
        if (coin(g, 2) && !special(g, fx, 0, !s, &x)) {
            uint64_t y;
            X[p] = x;
            if (!val(g, fy, 0, 0, 0, &y)) Y[p] = y;
        }
        return;
    }
    if (!special(g, m->fc, v == 5 || coin(g, 2), s, &x)) g->c = x;          /* c = NaN (or inf) */
}

/* zero: zero signs: sums of zeros only (all -0: -0 under IEEE rules),
 * -0 products (-0 x y, x x -0) with c = -0, exact cancellation with c = -0
 * (+0), c = -x against a product x, and negative results too small for d
 * (rounding to -0, or +0 on a zero_sign=plus part). */
static void cls_zero(gen *g) {
    int v = (int)(rnd(g) % 5), neg = (int)(rnd(g) & 1);
    size_t n0 = block0(g), pos[2];
    positions(g, n0, pos, n0 >= 2 ? 2 : 1);
    if (v == 0) return; /* zeros of random signs */
    if (v == 1) {       /* all products -0, c -0 */
        for (size_t i = 0; i < g->k; i++) {
            uint64_t x;
            if (rnd(g) & 1) { g->a[i] = zero_code(g->fa, 1); if (!val(g, g->fb, 0, rint_in(g, g->fb->emin, g->fb->emax), 1, &x)) g->b[i] = x; }
            else { g->b[i] = zero_code(g->fb, 1); if (!val(g, g->fa, 0, rint_in(g, g->fa->emin, g->fa->emax), 1, &x)) g->a[i] = x; }
        }
        g->c = zero_code(g->fc, neg || !coin(g, 4));
        return;
    }
    if (v == 2 && n0 >= 2) { /* x + (-x) with c = -0 */
        if (!put(g, pos[0], band(g), (int)(rnd(g) & 1), 2))
            g->a[pos[1]] = neg_code(g->fa, g->a[pos[0]]), g->b[pos[1]] = g->b[pos[0]];
        g->c = zero_code(g->fc, 1);
        return;
    }
    if (v == 3) { /* c = -(product) */
        if (!put(g, pos[0], band(g), (int)(rnd(g) & 1), 1)) {
            int sa, ea, sb, eb;
            uint64_t ma, mb, cc;
            fpemu_unpack(g->fa, g->a[pos[0]], &sa, &ma, &ea);
            fpemu_unpack(g->fb, g->b[pos[0]], &sb, &mb, &eb);
            if (!exact(g->fc, !(sa ^ sb), ma * mb, ea + eb, &cc)) g->c = cc;
        }
        return;
    }
    /* a tiny negative (or positive) result: the smallest product, or one
     * well below d's smallest subnormal, with c = ±0 */
    int E = lo_exp(g->fd) - rint_in(g, 1, 4);
    if (put(g, pos[0], E, 1 - coin(g, 4), (int)(rnd(g) & 1))) {
        uint64_t a, b;
        if (!exact(g->fa, 1, 1, lo_exp(g->fa), &a) && !exact(g->fb, 0, 1, lo_exp(g->fb), &b)) g->a[pos[0]] = a, g->b[pos[0]] = b;
    }
    if (coin(g, 2)) cval(g, 1, lo_exp(g->fc) + rint_in(g, 0, 2), 0);
}

/* subnormal: subnormal inputs times large ones (products inside the band,
 * so flushing them shows), subnormal x subnormal, subnormal c; c = 0 or a
 * term of the same size. */
static void cls_subnormal(gen *g) {
    size_t n0 = block0(g);
    for (size_t i = 0; i < n0; i++) {
        if (coin(g, 3)) continue;
        int onb = (int)(rnd(g) & 1), both = coin(g, 4);
        const fpemu_format *fs = onb ? g->fb : g->fa, *fo = onb ? g->fa : g->fb;
        uint64_t xs, xo;
        if (!fs->has_subnormals) continue;
        int Es = rint_in(g, lo_exp(fs), fs->emin - 1);
        if (val(g, fs, (int)(rnd(g) & 1), Es, 1, &xs)) continue;
        int Eo = both && fo->has_subnormals ? rint_in(g, lo_exp(fo), fo->emin - 1) : rint_in(g, fo->emax - 3, fo->emax);
        if (val(g, fo, (int)(rnd(g) & 1), Eo, 1, &xo)) continue;
        if (onb) g->b[i] = xs, g->a[i] = xo;
        else g->a[i] = xs, g->b[i] = xo;
    }
    int r = (int)(rnd(g) % 3);
    if (r == 1 && g->fc->has_subnormals) cval(g, (int)(rnd(g) & 1), rint_in(g, lo_exp(g->fc), g->fc->emin - 1), 1);
    else if (r == 2) cval(g, (int)(rnd(g) & 1), g->fa->emin + g->fb->emax + rint_in(g, -4, 4), 1);
}

/* chain: lines of Kc products (> the block size): banded random terms in
 * every block; or c with small same-sign products in every block, so each
 * block's rounding of the running sum shows; or a cancelling pair split
 * across the boundary; or an inf/NaN in a later block. */
static void cls_chain(gen *g) {
    int v = (int)(rnd(g) % 4), E0 = band(g);
    size_t B = g->B > 0 && (size_t)g->B < g->k ? (size_t)g->B : g->k / 2;
    if (B == 0) B = 1;
    if (v == 0) {
        int w = rint_in(g, 2, g->omant + 2);
        for (size_t i = 0; i < g->k; i++) if (!coin(g, 8)) put(g, i, E0 + rint_in(g, -w, w), (int)(rnd(g) & 1), 2);
        c_random(g, E0, w);
        return;
    }
    if (v == 1) {
        int s = (int)(rnd(g) & 1);
        cval(g, s, E0 + rint_in(g, 0, 3), 1);
        int lo = g->omant - 3 < 1 ? 1 : g->omant - 3;
        for (size_t i = 0; i < g->k; i++) if (!coin(g, 3)) put(g, i, E0 - rint_in(g, lo, g->nfrac + 2), coin(g, 6) ? !s : s, 1);
        return;
    }
    if (v == 2 && g->k > B) {
        size_t p = B - 1;
        if (!put(g, p, E0, (int)(rnd(g) & 1), 2)) g->a[p + 1] = neg_code(g->fa, g->a[p]), g->b[p + 1] = g->b[p];
        for (size_t i = 0; i < g->k; i++) if (i != p && i != p + 1 && coin(g, 3)) put(g, i, E0 - rint_in(g, 1, g->nfrac + 4), (int)(rnd(g) & 1), 2);
        c_random(g, E0 - 2, 4);
        return;
    }
    for (size_t i = 0; i < g->k; i++) if (coin(g, 2)) put(g, i, E0 + rint_in(g, -4, 4), (int)(rnd(g) & 1), 2);
    size_t p = B + (size_t)(rnd(g) % (g->k - B > 0 ? g->k - B : 1));
    if (p >= g->k) p = g->k - 1;
    uint64_t x;
    int nan = coin(g, 2);
    if (!special(g, g->m->fa, nan, (int)(rnd(g) & 1), &x)) {
        g->a[p] = x;
        uint64_t y;
        if (!val(g, g->m->fb, 0, 0, 0, &y)) g->b[p] = y;
    } else if (!special(g, g->m->fb, nan, (int)(rnd(g) & 1), &x)) {
        g->b[p] = x;
        uint64_t y;
        if (!val(g, g->m->fa, 0, 0, 0, &y)) g->a[p] = y;
    } else if (!special(g, g->m->fc, nan, (int)(rnd(g) & 1), &x)) {
        g->c = x; /* no specials in the inputs: c */
    }
}

/* ---- integer classes ---------------------------------------------------------- */

static int32_t ival(const gen *g, int isb, uint64_t code) {
    int sg = isb ? g->m->b_signed : g->m->a_signed;
    return sg ? (int8_t)(uint8_t)code : (int32_t)(uint8_t)code;
}
static int64_t iprod_sum(const gen *g, size_t lo, size_t hi) {
    int64_t s = 0;
    for (size_t i = lo; i < hi; i++) s += (int64_t)ival(g, 0, g->a[i]) * ival(g, 1, g->b[i]);
    return s;
}
/* An extreme operand: ±127/-128 (s8) or 255 (u8), of sign s where it can. */
static uint64_t iext(gen *g, int isb, int s) {
    int sg = isb ? g->m->b_signed : g->m->a_signed;
    if (!sg) return 0xFF - (rnd(g) % 4);
    return s ? 0x80 + (rnd(g) % 3) : 0x7F - (rnd(g) % 3);
}

static void int_line(gen *g, const char *cls) {
    size_t k = g->k;
    for (size_t i = 0; i < k; i++) g->a[i] = rnd(g) & 0xFF, g->b[i] = rnd(g) & 0xFF;
    g->c = rnd(g) & 0xFFFFFFFFu;
    int bs = g->m->b_signed, as = g->m->a_signed;
    if (!strcmp(cls, "random")) {
        if (coin(g, 2)) g->c = (uint32_t)(int32_t)rint_in(g, -100000, 100000);
        return;
    }
    if (!strcmp(cls, "cancel")) { /* pairs x*y, x*(-y); the rest small; c cancels what is left */
        for (size_t i = 0; i + 1 < k; i += 2) {
            if (coin(g, 4)) { g->a[i] = rnd(g) & 3, g->a[i + 1] = rnd(g) & 3; continue; }
            uint64_t x = rnd(g) & 0x7F, y = rnd(g) & 0x7F;
            g->a[i] = x, g->b[i] = y, g->a[i + 1] = x, g->b[i + 1] = y;
            if (bs) g->b[i + 1] = (uint8_t)-(int8_t)y;
            else if (as) g->a[i + 1] = (uint8_t)-(int8_t)x;
        }
        g->c = (uint32_t)(int32_t)(-iprod_sum(g, 0, k) + rint_in(g, -2, 2));
        return;
    }
    if (!strcmp(cls, "zero")) {
        for (size_t i = 0; i < k; i++) if (rnd(g) & 1) g->a[i] = 0; else g->b[i] = 0;
        if (coin(g, 2)) g->c = 0;
        else {
            size_t p = (size_t)(rnd(g) % k);
            g->a[p] = rnd(g) & 0x7F, g->b[p] = rnd(g) & 0x7F;
            g->c = (uint32_t)(int32_t)-iprod_sum(g, 0, k);
        }
        return;
    }
    /* overflow / chain: extreme products driving the int32 sum to its
     * limits: c = INT32_MAX (MIN) - sum + d, d in {-1, 0, 1, 2}; chain: the
     * first instruction's sum over the limit, later ones coming back */
    int s = (as || bs) ? (int)(rnd(g) & 1) : 0;
    for (size_t i = 0; i < k; i++) {
        int neg = s;
        if (!strcmp(cls, "chain") && i >= (size_t)g->B && g->B > 0) neg = !s;
        g->a[i] = iext(g, 0, as ? neg : 0), g->b[i] = iext(g, 1, as ? 0 : neg);
    }
    size_t first = !strcmp(cls, "chain") && g->B > 0 && (size_t)g->B < k ? (size_t)g->B : k;
    int64_t sum = iprod_sum(g, 0, first), d = rint_in(g, -1, 2);
    int64_t lim = (sum >= 0) ? INT32_MAX : INT32_MIN;
    int64_t c = lim - sum + (sum >= 0 ? d : -d);
    if (c > INT32_MAX) c = INT32_MAX;
    if (c < INT32_MIN) c = INT32_MIN;
    g->c = (uint32_t)(int32_t)c;
}

/* ---- gen --------------------------------------------------------------------- */

static int nonblock_prec(const fpemu_mma_model *m) { return m->fd->mbits + 1; }

static int gen_setup(gen *g, const fpemu_mma_model *m, int int_mode, unsigned long long kopt) {
    memset(g, 0, sizeof *g);
    g->m = m, g->int_mode = int_mode;
    int blk = m->block;
    if (!int_mode) {
        const fpemu_format *tf32 = fpemu_format_get("tf32", NULL, 0);
        g->fa = m->tf32_truncate && !strcmp(m->fa->name, "f32") ? tf32 : m->fa;
        g->fb = m->tf32_truncate && !strcmp(m->fb->name, "f32") ? tf32 : m->fb;
        g->fc = m->fc, g->fd = m->fd;
        g->nfrac = m->kind == FPEMU_MMA_KIND_BLOCK ? m->nfrac : nonblock_prec(m);
        g->omant = m->kind == FPEMU_MMA_KIND_BLOCK ? m->out_mant : m->fd->mbits;
        g->pmin = g->fa->emin + g->fb->emin;
        g->pmax = g->fa->emax + g->fb->emax;
    }
    g->K = kopt ? (int)kopt : blk > 1 ? blk : 16;
    g->B = blk > 1 ? blk : g->K;
    g->Kc = g->K > 3 * g->B ? g->K : 3 * g->B;
    if (g->Kc > 4096) g->Kc = g->K > 4096 ? g->K : 4096;
    g->a = malloc(sizeof *g->a * (size_t)g->Kc);
    g->b = malloc(sizeof *g->b * (size_t)g->Kc);
    return g->a && g->b ? 0 : -1;
}

static void gen_line(gen *g, const char *cls) {
    g->k = (size_t)(!strcmp(cls, "chain") ? g->Kc : g->K);
    if (g->int_mode) { int_line(g, cls); return; }
    fill_zero(g);
    if (!strcmp(cls, "random")) cls_random(g);
    else if (!strcmp(cls, "cancel")) cls_cancel(g);
    else if (!strcmp(cls, "align")) cls_align(g);
    else if (!strcmp(cls, "floor")) cls_floor(g);
    else if (!strcmp(cls, "overflow")) cls_overflow(g);
    else if (!strcmp(cls, "nan-inf")) cls_naninf(g);
    else if (!strcmp(cls, "zero")) cls_zero(g);
    else if (!strcmp(cls, "subnormal")) cls_subnormal(g);
    else cls_chain(g);
}

typedef struct { int da, db, dc, dd; } digits;

static digits digits_of(const fpemu_mma_model *m, int int_mode) {
    digits d;
    d.da = int_mode ? 2 : fpemu_format_hex_digits(m->fa), d.db = int_mode ? 2 : fpemu_format_hex_digits(m->fb);
    d.dc = int_mode ? 8 : fpemu_format_hex_digits(m->fc), d.dd = int_mode ? 8 : fpemu_format_hex_digits(m->fd);
    return d;
}

/* "C A0 B0 ... A(k-1) B(k-1)" at p; returns the end. */
static char *put_line(char *p, const digits *dg, uint64_t c, const uint64_t *a, const uint64_t *b, size_t k) {
    p = vec_put_hex(p, c, dg->dc);
    for (size_t i = 0; i < k; i++) {
        *p++ = ' ', p = vec_put_hex(p, a[i], dg->da);
        *p++ = ' ', p = vec_put_hex(p, b[i], dg->db);
    }
    return p;
}

static int do_gen(const char *sub, const mma_genver_opts *o, const fpemu_mma_model *m, int int_mode,
                  unsigned long long promote) {
    gen g;
    int32_t *ia = NULL, *ib = NULL;
    char *buf = NULL;
    int status = 0;
    if (gen_setup(&g, m, int_mode, o->k)) { status = cli_error(sub, "out of memory"); goto out; }
    digits dg = digits_of(m, int_mode);
    ia = malloc(sizeof *ia * (size_t)g.Kc), ib = malloc(sizeof *ib * (size_t)g.Kc);
    buf = malloc((size_t)g.Kc * (size_t)(dg.da + dg.db + 2) + 64);
    if (!ia || !ib || !buf) { status = cli_error(sub, "out of memory"); goto out; }
    const char *const *cyc = int_mode ? mma_genver_int_cycle : mma_genver_float_cycle;
    int ncyc = 0;
    while (cyc[ncyc]) ncyc++;
    printf("# %s\n# complete lines: C A0 B0 ... A(k-1) B(k-1) D; k = %d (class chain: %d); vector line i has class",
           o->cmdline, g.K, g.Kc);
    for (int i = 0; i < ncyc; i++) printf(" %s%s", cyc[i], i + 1 < ncyc ? "," : "");
    printf(" [i mod %d]\n", ncyc);
    for (unsigned long long i = 0; i < o->n; i++) {
        g.s = fpemu_random64(o->seed, i);
        gen_line(&g, cyc[i % (unsigned long long)ncyc]);
        uint64_t d = mma_line_d(m, int_mode, promote, g.a, g.b, ia, ib, g.k, g.c);
        char *p = put_line(buf, &dg, g.c, g.a, g.b, g.k);
        *p++ = ' ', p = vec_put_hex(p, d, dg.dd);
        *p++ = '\n';
        if (fwrite(buf, 1, (size_t)(p - buf), stdout) != (size_t)(p - buf)) break;
    }
out:
    free(g.a), free(g.b), free(ia), free(ib), free(buf);
    return cli_stdout_done(sub, status);
}

/* ---- verify ----------------------------------------------------------------- */

static int do_verify(const char *sub, const mma_genver_opts *o, const fpemu_mma_model *m, int int_mode,
                     const char *a_name, const char *b_name, unsigned long long promote) {
    digits dg = digits_of(m, int_mode);
    uint64_t ma = int_mode ? 0xFF : cli_code_max(m->fa), mb = int_mode ? 0xFF : cli_code_max(m->fb);
    uint64_t mc = int_mode ? 0xFFFFFFFFu : cli_code_max(m->fc), md = int_mode ? 0xFFFFFFFFu : cli_code_max(m->fd);
    const char *nc = int_mode ? "s32" : m->fc->name, *nd = int_mode ? "s32" : m->fd->name;
    const char *na = int_mode ? a_name : m->fa->name, *nb = int_mode ? b_name : m->fb->name;
    size_t cap = 0, fcap = 0;
    char *line = NULL, *out = NULL;
    uint64_t *v = NULL, *a = NULL, *b = NULL;
    int32_t *ia = NULL, *ib = NULL;
    long lineno = 0, lines = 0, mism = 0;
    ssize_t len;
    int status = 0;
    while ((errno = 0, len = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            status = cli_error(sub, "standard input: line %ld: NUL byte in the line (expected hex fields separated by spaces)", lineno);
            goto done;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t')) line[--len] = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p || *p == '#') continue;
        /* split: at most len / 2 + 1 fields */
        size_t need = (size_t)len / 2 + 2;
        if (need > fcap) {
            size_t nc2 = need * 2;
            uint64_t *nv = realloc(v, nc2 * sizeof *v);
            if (nv) v = nv;
            uint64_t *na2 = nv ? realloc(a, nc2 * sizeof *a) : NULL;
            if (na2) a = na2;
            uint64_t *nb2 = na2 ? realloc(b, nc2 * sizeof *b) : NULL;
            if (nb2) b = nb2;
            int32_t *nia = nb2 ? realloc(ia, nc2 * sizeof *ia) : NULL;
            if (nia) ia = nia;
            int32_t *nib = nia ? realloc(ib, nc2 * sizeof *ib) : NULL;
            if (nib) ib = nib;
            char *no = nib ? realloc(out, nc2 * 20 + 128) : NULL;
            if (no) out = no;
            if (!no) { status = cli_error(sub, "standard input: line %ld: out of memory", lineno); goto done; }
            fcap = nc2;
        }
        size_t nf = 0;
        /* first pass: count the fields (D is the last) */
        for (char *q = p; *q;) {
            while (*q == ' ' || *q == '\t') q++;
            if (!*q) break;
            while (*q && *q != ' ' && *q != '\t') q++;
            nf++;
        }
        if (nf < 2) {
            status = cli_error(sub, "standard input: line %ld: 1 field: expected a complete line C A0 B0 ... A(k-1) B(k-1) D "
                               "(%s C, pairs of %s and %s codes, %s D)", lineno, nc, na, nb, nd);
            goto done;
        }
        if (nf % 2) {
            status = cli_error(sub, "standard input: line %ld: %zu fields: expected C, pairs A B and D (an odd number of "
                               "operands, or D missing)", lineno, nf);
            goto done;
        }
        size_t idx = 0;
        for (char *q = p; *q;) {
            while (*q == ' ' || *q == '\t') q++;
            if (!*q) break;
            char *s = q;
            while (*q && *q != ' ' && *q != '\t') q++;
            size_t l = (size_t)(q - s);
            int isd = idx == nf - 1, isc = idx == 0, isb = !isc && !isd && (idx - 1) % 2;
            int dig = isc ? dg.dc : isd ? dg.dd : isb ? dg.db : dg.da;
            uint64_t mx = isc ? mc : isd ? md : isb ? mb : ma;
            const char *fname = isc ? nc : isd ? nd : isb ? nb : na;
            int why = cli_parse_hex(s, l, dig, mx, &v[idx]);
            if (why) {
                char nm[32], pb[48];
                size_t n = l > 40 ? 40 : l;
                for (size_t i = 0; i < n; i++) pb[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
                pb[n] = 0;
                if (isc || isd) snprintf(nm, sizeof nm, "%s", isc ? "C" : "D");
                else snprintf(nm, sizeof nm, "%c%zu", isb ? 'B' : 'A', (idx - 1) / 2);
                if (why == -2)
                    status = cli_error(sub, "standard input: line %ld: field %zu (%s) '%s': out of range for %s (at most %0*llX)",
                                       lineno, idx + 1, nm, pb, fname, dig, (unsigned long long)mx);
                else
                    status = cli_error(sub, "standard input: line %ld: field %zu (%s) '%s': expected at most %d hex digits of a %s code",
                                       lineno, idx + 1, nm, pb, dig, fname);
                goto done;
            }
            idx++;
        }
        size_t k = (nf - 2) / 2;
        for (size_t i = 0; i < k; i++) a[i] = v[1 + 2 * i], b[i] = v[2 + 2 * i];
        uint64_t want = v[nf - 1];
        uint64_t got = mma_line_d(m, int_mode, promote, a, b, ia, ib, k, v[0]);
        lines++;
        int same = got == want;
        if (!same && !int_mode && !o->exact_nan && fpemu_is_nan(m->fd, got) && fpemu_is_nan(m->fd, want)) same = 1;
        if (same || ++mism > o->max_print) continue;
        char *w = out + sprintf(out, "line %ld: ", lineno);
        w = put_line(w, &dg, v[0], a, b, k);
        memcpy(w, " => ", 4), w += 4;
        w = vec_put_hex(w, got, dg.dd);
        memcpy(w, ", expected ", 11), w += 11;
        w = vec_put_hex(w, want, dg.dd);
        *w++ = '\n';
        fwrite(out, 1, (size_t)(w - out), stdout);
    }
    if (len < 0 && (ferror(stdin) || errno == ENOMEM)) {
        status = cli_error(sub, "standard input: line %ld: cannot read: %s", lineno + 1, strerror(errno ? errno : EIO));
        goto done;
    }
    if (lines == 0) {
        status = cli_error(sub, "standard input: no vector lines (expected complete lines: C, pairs A B, D)");
        goto done;
    }
    if (mism > o->max_print) printf("(%ld more mismatches not printed; --max-print raises the limit)\n", mism - o->max_print);
    printf("%ld lines, %ld mismatches\n", lines, mism);
    status = mism ? 1 : 0;
done:
    free(line), free(out), free(v), free(a), free(b), free(ia), free(ib);
    return cli_stdout_done(sub, status);
}

int mma_genver_run(const char *sub, const mma_genver_opts *g, const fpemu_mma_model *m, int int_mode,
                   const char *a_name, const char *b_name, unsigned long long promote) {
    if (g->mode == MMA_GV_GEN) return do_gen(sub, g, m, int_mode, promote);
    return do_verify(sub, g, m, int_mode, a_name, b_name, promote);
}
