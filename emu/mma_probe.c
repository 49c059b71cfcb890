/* SPDX-License-Identifier: MIT */
/* mma_probe.c: infer a tensor core's accumulation parameters from dot
 * products alone (the probe vectors of docs/tensor-cores.md, after Fasi,
 * Higham, Mikaitis & Pranesh 2021 and Khattak & Mikaitis' block-FMA tests).
 *
 * The published vectors assume f16 inputs and a 23-bit f32 output. Here
 * each vector is written relative to a unit U = 2^t and to the output
 * precision q found first, so the same tests work for fp8/fp6/fp4 inputs,
 * 13-bit (e8m13) outputs and f16 outputs. For each vector the probe picks
 * the first t (0, -1, 1, -2, ...) for which every input is a normal value
 * of its format and every product a*b is exactly the wanted value. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mma.h"

#define MAXK 256

typedef struct {
    fpemu_mma_blackbox bb;
    void *user;
    const fpemu_format *fa, *fb, *fc, *fd;
    int kmax;
    int queries;
    int refused;
    struct { double P; uint64_t a, b; int ok; } cache[64];
    int ncache;
} prober;

/* x exactly representable and normal (or zero) in f? */
static int enc_exact(const fpemu_format *f, double x, uint64_t *code) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    uint64_t c = fpemu_from_double(f, x, &ctx);
    if (ctx.flags & (FPEMU_FLAG_INEXACT | FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INVALID)) return 0;
    if (fpemu_to_double(f, c) != x) return 0;
    if (x != 0 && fpemu_classify(f, c) != FPEMU_CLASS_NORMAL) return 0;
    *code = c;
    return 1;
}

/* Find normal a in fa and b in fb with a * b == P exactly, exponents as
 * balanced as possible. */
static int mkprod_search(const prober *p, double P, uint64_t *a, uint64_t *b);
static int mkprod(prober *p, double P, uint64_t *a, uint64_t *b) {
    for (int i = 0; i < p->ncache; i++)
        if (p->cache[i].P == P) { *a = p->cache[i].a, *b = p->cache[i].b; return p->cache[i].ok; }
    int ok = mkprod_search(p, P, a, b);
    int slot = p->ncache < 64 ? p->ncache++ : (p->queries & 63);
    p->cache[slot].P = P, p->cache[slot].a = ok ? *a : 0, p->cache[slot].b = ok ? *b : 0, p->cache[slot].ok = ok;
    return ok;
}

static int mkprod_search(const prober *p, double P, uint64_t *a, uint64_t *b) {
    if (P == 0) {
        *a = 0, *b = 0;
        return 1;
    }
    static const double bsig[] = {1.0, 1.5};
    int best = INT_MAX;
    for (int s = 0; s < 2; s++) {
        for (int j = -160; j <= 160; j++) {
            double bv = ldexp(bsig[s], j);
            double av = P / bv;
            if (av * bv != P) continue;
            uint64_t ca, cb;
            if (!enc_exact(p->fb, bv, &cb) || !enc_exact(p->fa, av, &ca)) continue;
            int ea, eb;
            frexp(av, &ea);
            frexp(bv, &eb);
            int d = abs(ea - eb);
            if (d < best) best = d, *a = ca, *b = cb;
        }
    }
    return best != INT_MAX;
}

typedef struct {
    double c;          /* relative to U */
    int k;             /* vector length */
    int n;             /* nonzero products listed */
    int idx[MAXK];
    double prod[MAXK]; /* relative to U */
} vec;

static void vinit(vec *v, double c, int k) { v->n = 0; v->c = c; v->k = k; }
static void vprod(vec *v, int idx, double p) { v->idx[v->n] = idx; v->prod[v->n] = p; v->n++; }

/* Ask the box for v at unit 2^t. Returns 1 and *d (relative to U) on
 * success, 0 if the vector cannot be expressed at this t, -1 if the box
 * refused. */
static int ask_at(prober *p, const vec *v, int t, double *d) {
    uint64_t a[MAXK], b[MAXK];
    if (v->k > MAXK || v->k > p->kmax) return -1;
    double U = ldexp(1, t);
    uint64_t cc;
    double cabs = fabs(v->c * U);
    if (!enc_exact(p->fc, v->c * U, &cc)) return 0;
    /* every term normal in fd and far from its overflow threshold, so
     * that only the model's rounding shows (not the output's range) */
    const double hi = p->fd->max_finite / 2;
    if (v->c != 0 && (cabs < p->fd->min_normal || cabs > hi)) return 0;
    for (int i = 0; i < v->k; i++) a[i] = 0, b[i] = 0;
    for (int i = 0; i < v->n; i++) {
        double P = v->prod[i] * U;
        if (P != 0 && (fabs(P) < p->fd->min_normal || fabs(P) > hi)) return 0;
        if (!mkprod(p, P, &a[v->idx[i]], &b[v->idx[i]])) return 0;
    }
    uint64_t dc = 0;
    p->queries++;
    if (p->bb(p->user, a, b, v->k, cc, &dc)) { p->refused = 1; return -1; }
    *d = fpemu_to_double(p->fd, dc) / U;
    return 1;
}

static int ask(prober *p, const vec *v, double *d) {
    for (int i = 0; i <= 120; i++) {
        int t = (i & 1) ? (i + 1) / 2 : -(i / 2);
        int r = ask_at(p, v, t, d);
        if (r != 0) return r;
    }
    return 0;
}

static int maxsig_bits(const fpemu_format *f) { return f->mbits < 3 ? f->mbits : 3; }

int fpemu_mma_probe(fpemu_mma_blackbox bb, void *user, const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc,
                    const fpemu_format *fd, int kmax, fpemu_mma_probe_result *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->align_round, sizeof out->align_round, "?");
    snprintf(out->out_round, sizeof out->out_round, "?");
    snprintf(out->normalize, sizeof out->normalize, "?");
    snprintf(out->subnormals, sizeof out->subnormals, "?");
    snprintf(out->matches, sizeof out->matches, "none");
    out->monotonic = 1;
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0);
    if (!fc) fc = fd ? fd : f32;
    if (!fd) fd = fc;
    if (kmax < 8) kmax = 8;
    if (kmax > MAXK) kmax = MAXK;
    prober P = {.bb = bb, .user = user, .fa = fa, .fb = fb, .fc = fc, .fd = fd, .kmax = kmax};
    prober *p = &P;
    out->kmax = kmax;
    vec v;
    double d, d2;
    int notes = 0;
#define NOTE(...) do { size_t _o = strlen(out->note); snprintf(out->note + _o, sizeof out->note - _o, "%s", notes++ ? "; " : ""); _o = strlen(out->note); snprintf(out->note + _o, sizeof out->note - _o, __VA_ARGS__); } while (0)

    /* 1. m1 = min(q, nfrac): c = 2^s, one product 1: d == 2^s + 1 while s <= both */
    int m1 = 0;
    for (int s = 1; s <= 62; s++) {
        vinit(&v, ldexp(1, s), 1);
        vprod(&v, 0, 1);
        int r = ask(p, &v, &d);
        if (r < 0) { out->queries = p->queries; NOTE("box refused a 1-element dot product"); return -1; }
        if (r == 0) break;
        if (d != ldexp(1, s) + 1) break;
        m1 = s;
    }
    if (m1 == 0) { out->queries = p->queries; NOTE("c + 1*1 is never exact: not a dot product?"); return -1; }

    /* 2. block size: c = 2^(m1+1) - 1, p[0] = 2, p[j] = 1; exact 2^(m1+1) + 2
     * while j is in the first block (the block output is rounded before
     * the next block, losing the last bit). */
    int block = 0, chain = 0;
    for (int j = 1; j < kmax; j++) {
        vinit(&v, ldexp(1, m1 + 1) - 1, j + 1);
        vprod(&v, 0, 2);
        vprod(&v, j, 1);
        int r = ask(p, &v, &d);
        if (r < 0) { NOTE("box refused k=%d", j + 1); break; }
        if (r == 0) { NOTE("block vector not expressible"); break; }
        if (d != ldexp(1, m1 + 1) + 2) { block = j; chain = 1; break; }
    }
    if (block > 0) { /* the same with every sign flipped */
        vinit(&v, -(ldexp(1, m1 + 1) - 1), block + 1);
        vprod(&v, 0, -2);
        vprod(&v, block, -1);
        if (ask(p, &v, &d) == 1 && d == -(ldexp(1, m1 + 1) + 2)) NOTE("block boundary seen for positive sums only");
        vinit(&v, -(ldexp(1, m1 + 1) - 1), block);
        vprod(&v, 0, -2);
        vprod(&v, block - 1, -1);
        if (block > 1 && ask(p, &v, &d) == 1 && d != -(ldexp(1, m1 + 1) + 2)) NOTE("negated block test disagrees");
    }
    out->block = block;
    out->chain_rounded = chain;
    int kb = block > 0 ? (block < kmax ? block : kmax) : kmax; /* products that share a block */

    /* 3. nfrac. (a) cancellation {2^s, -2^s, 1} and {1, 2^s, -2^s}, c = 0:
     * the 1 survives alignment iff s <= nfrac; (b) where the products'
     * range cannot express that: all-ones products against c = 2^s. */
    int nfrac = -1, limit = 0, method = 0;
    {
        int lastok = 0, failed = 0;
        for (int s = 1; s <= 80; s++) {
            int any = 0, pass = 0;
            for (int order = 0; order < 2; order++) {
                if (kb >= 3 || (kb == 1 && order == 0)) {
                    /* three products in one block (kb >= 3), or in three blocks (kb == 1) */
                    vinit(&v, 0, 3);
                    if (order == 0) vprod(&v, 0, ldexp(1, s)), vprod(&v, 1, -ldexp(1, s)), vprod(&v, 2, 1);
                    else vprod(&v, 0, 1), vprod(&v, 1, ldexp(1, s)), vprod(&v, 2, -ldexp(1, s));
                } else if (kb == 2 && order == 0) {
                    /* c = -2^s cancels the first product */
                    vinit(&v, -ldexp(1, s), 2);
                    vprod(&v, 0, ldexp(1, s)), vprod(&v, 1, 1);
                } else {
                    continue;
                }
                int r = ask(p, &v, &d);
                if (r != 1) continue;
                any = 1;
                if (d == 1) pass = 1;
            }
            if (!any) break;
            limit = s;
            if (!pass) { failed = 1; break; }
            lastok = s;
        }
        if (limit > m1) {
            method = 1;
            nfrac = failed ? lastok : -1;
        } else {
            limit = 0;
        }
    }
    if (!method) {
        int lastok = 0, failed = 0;
        int lk = 0;
        while ((2 << lk) <= kb) lk++;
        for (int s = 1; s <= m1 + lk + 1; s++) {
            vinit(&v, ldexp(1, s), kb);
            for (int i = 0; i < kb; i++) vprod(&v, i, 1);
            int r = ask(p, &v, &d);
            if (r != 1) break;
            limit = s;
            if (!(d > ldexp(1, s))) { failed = 1; break; }
            lastok = s;
        }
        method = 2;
        nfrac = failed ? lastok : lastok;
        if (!failed) NOTE("nfrac >= %d (the boundary test cannot see further with %d products)", lastok, kb);
    }
    out->nfrac = nfrac;
    out->nfrac_limit = limit;
    (void)method;

    /* 4. output precision q: c = 2^(m1+1) - 1, product 2^m1: exact only if q > m1 */
    int q = m1;
    vinit(&v, ldexp(1, m1 + 1) - 1, 1);
    vprod(&v, 0, ldexp(1, m1));
    if (ask(p, &v, &d) == 1 && d == 3 * ldexp(1, m1) - 1) q = fd->mbits; /* nfrac < q: q is not visible */
    out->out_mant = q;
    out->guard = nfrac >= 0 ? nfrac - q : -1;
    const double u = ldexp(1, -q);

    /* 5. rounding at alignment (finite nfrac only): terms of 0.75 quantum */
    if (nfrac < 0) {
        snprintf(out->align_round, sizeof out->align_round, "none");
    } else {
        int up = -1, down = -1; /* up: a +0.75 quantum term became 1 quantum; down: -0.75 became -1 */
        /* cancellation form: c = -4*2^nfrac, p0 = 4*2^nfrac, p1 = +-3 (quantum = 4) */
        if (kb >= 2) {
            vinit(&v, -4 * ldexp(1, nfrac), 2);
            vprod(&v, 0, 4 * ldexp(1, nfrac));
            vprod(&v, 1, 3);
            int r1 = ask(p, &v, &d);
            v.prod[1] = -3;
            int r2 = ask(p, &v, &d2);
            if (r1 == 1 && r2 == 1) up = d > 0, down = d2 < 0;
        }
        if (up < 0) { /* c-big form: c = 2^nfrac, kb products of 0.75 (quantum 1) */
            int n = kb;
            vinit(&v, ldexp(1, nfrac), n);
            for (int i = 0; i < n; i++) vprod(&v, i, 0.75);
            int r1 = ask(p, &v, &d);
            for (int i = 0; i < n; i++) v.prod[i] = -0.75;
            int r2 = ask(p, &v, &d2);
            if (r1 == 1 && r2 == 1 && n >= ldexp(1, nfrac - q)) up = d > ldexp(1, nfrac), down = d2 < ldexp(1, nfrac);
        }
        const char *ar = up < 0 ? "?" : !up && !down ? "rz" : !up && down ? "rd" : up && down ? "rn" : "ru";
        snprintf(out->align_round, sizeof out->align_round, "%s", ar);
        if (up < 0) NOTE("alignment rounding not expressible");
    }

    /* 6. output rounding: c = 1.75 + j u, one product 1.5 * 1.5: 4 + j u */
    {
        int res[2][3], okr = 1;
        for (int sg = 0; sg < 2 && okr; sg++)
            for (int j = 1; j <= 3 && okr; j++) {
                double sgn = sg ? -1 : 1;
                vinit(&v, sgn * (1.75 + j * u), 1);
                vprod(&v, 0, sgn * 2.25);
                if (ask(p, &v, &d) != 1) { okr = 0; break; }
                double mag = fabs(d) - 4;
                res[sg][j - 1] = mag == 0 ? 0 : mag == 4 * u ? 4 : -1;
            }
        const char *name = "?";
        if (okr) {
            static const struct { const char *n; int r[2][3]; } tab[] = {
                {"rz", {{0, 0, 0}, {0, 0, 0}}},  {"rne", {{0, 0, 4}, {0, 0, 4}}}, {"rna", {{0, 4, 4}, {0, 4, 4}}},
                {"ru", {{4, 4, 4}, {0, 0, 0}}},  {"rd", {{0, 0, 0}, {4, 4, 4}}},  {"rto", {{4, 4, 4}, {4, 4, 4}}},
            };
            for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
                if (!memcmp(tab[i].r, res, sizeof res)) name = tab[i].n;
        }
        snprintf(out->out_round, sizeof out->out_round, "%s", name);
        if (!strcmp(name, "?")) NOTE("output rounding pattern not recognised");
    }

    /* 7. normalisation: c = 1 - 4u, p = 2 x 4.5u: 1 + 5u (once, at the end) or 1 + 4u (after each add) */
    {
        vinit(&v, 1 - 4 * u, 2);
        vprod(&v, 0, 4.5 * u);
        vprod(&v, 1, 4.5 * u);
        if (ask(p, &v, &d) == 1) {
            if (d == 1 + 5 * u) snprintf(out->normalize, sizeof out->normalize, "end");
            else if (d == 1 + 4 * u) snprintf(out->normalize, sizeof out->normalize, "each");
        }
    }

    /* 8. subnormal inputs: c = 0, a = fa's smallest subnormal, b = 1 */
    if (fa->has_subnormals && fa->mbits > 0) {
        uint64_t a1[1], b1[1], cc, dc;
        /* the subnormal 2^(emin-1) (it survives a tf32 truncation of f32
         * inputs) times the power of two b that brings the product nearest 1 */
        a1[0] = (uint64_t)1 << (fa->mbits - 1 + fa->pad);
        double av = fpemu_to_double(fa, a1[0]), want = 0;
        int found = 0;
        for (int j = 0; j <= 300 && !found; j++) {
            int e = (fa->emin - 1 < 0 ? -(fa->emin - 1) : 0) + ((j & 1) ? (j + 1) / 2 : -(j / 2));
            double bv = ldexp(1, e);
            uint64_t wc;
            want = av * bv;
            if (enc_exact(fb, bv, &b1[0]) && enc_exact(fd, want, &wc) && want >= fd->min_normal) found = 1;
        }
        if (found && enc_exact(fc, 0, &cc)) {
            p->queries++;
            if (!bb(user, a1, b1, 1, cc, &dc)) {
                double got = fpemu_to_double(fd, dc);
                if (got == 0) snprintf(out->subnormals, sizeof out->subnormals, "flushed");
                else if (got == want) snprintf(out->subnormals, sizeof out->subnormals, "kept");
            }
        }
    }

    /* 9. carry bits: c = M, n products M (M = 1.875 or the widest 1.x...1): exact (n+1) M */
    {
        int mb = maxsig_bits(fa) < maxsig_bits(fb) ? maxsig_bits(fa) : maxsig_bits(fb);
        double M = 2 - ldexp(1, -mb);
        int nmax = kb < 32 ? kb : 32, good = 0;
        for (int n = 1; n <= nmax; n++) {
            vinit(&v, M, n);
            for (int i = 0; i < n; i++) vprod(&v, i, M);
            if (ask(p, &v, &d) != 1 || d != (n + 1) * M) break;
            good = n;
        }
        out->carry_bits = good ? (int)floor(log2((good + 1) * M)) : 0;
    }

    /* 10. non-monotonic accumulation: p = 4 x u/2, c = 1 - u/2 or 1 */
    {
        vinit(&v, 1 - u / 2, 4);
        for (int i = 0; i < 4; i++) vprod(&v, i, u / 2);
        int r1 = ask(p, &v, &d);
        v.c = 1;
        int r2 = ask(p, &v, &d2);
        if (r1 == 1 && r2 == 1) out->monotonic = d2 >= d;
    }

    out->queries = p->queries;
    out->ok = out->out_round[0] != '?' && out->align_round[0] != '?' && out->normalize[0] != '?' &&
              out->subnormals[0] != '?';
    fpemu_mma_probe_match(out, fa, fb, fc, fd, out->matches, sizeof out->matches);
#undef NOTE
    return 0;
}

int fpemu_mma_probe_format(const fpemu_mma_probe_result *r, char *buf, size_t len) {
    char nf[32], blk[32];
    if (r->nfrac < 0) snprintf(nf, sizeof nf, "inf");
    else snprintf(nf, sizeof nf, "%d", r->nfrac);
    if (r->block == 0) snprintf(blk, sizeof blk, "none");
    else snprintf(blk, sizeof blk, "%d", r->block);
    return snprintf(buf, len,
                    "block=%s\nnfrac=%s\nnfrac_limit=%d\nalign_round=%s\nout_round=%s\nout_mant=%d\nnormalize=%s\n"
                    "subnormals=%s\ncarry_bits=%d\nguard=%d\nmonotonic=%d\nchain=%s\nmatches=%s\nqueries=%d\nok=%d\n%s%s%s",
                    blk, nf, r->nfrac_limit, r->align_round, r->out_round, r->out_mant, r->normalize, r->subnormals,
                    r->carry_bits, r->guard, r->monotonic, r->chain_rounded ? "rounded" : "none", r->matches,
                    r->queries, r->ok, r->note[0] ? "note=" : "", r->note, r->note[0] ? "\n" : "");
}

static const char *round_short(fpemu_round r) {
    switch (r) {
    case FPEMU_RNE: return "rne";
    case FPEMU_RNA: return "rna";
    case FPEMU_RTZ: return "rz";
    case FPEMU_RUP: return "ru";
    case FPEMU_RDN: return "rd";
    case FPEMU_RTO: return "rto";
    default: return "?";
    }
}

void fpemu_mma_probe_expected(const fpemu_mma_model *m, int kmax, fpemu_mma_probe_result *out) {
    memset(out, 0, sizeof *out);
    if (kmax < 8) kmax = 8;
    if (kmax > MAXK) kmax = MAXK;
    out->ok = 1;
    out->out_mant = m->out_mant;
    snprintf(out->out_round, sizeof out->out_round, "%s", round_short(m->out_round));
    snprintf(out->subnormals, sizeof out->subnormals, "%s", m->flush_subnormals ? "flushed" : "kept");
    snprintf(out->normalize, sizeof out->normalize, "%s", m->norm == FPEMU_MMA_NORM_EACH ? "each" : "end");
    switch (m->kind) {
    case FPEMU_MMA_KIND_BLOCK:
        /* normalising after every addition looks like a chain of
         * one-product blocks with exact alignment of each pair */
        if (m->norm == FPEMU_MMA_NORM_EACH) goto fma_like;
        out->block = m->block > 0 && m->block < kmax ? m->block : 0;
        out->nfrac = m->nfrac;
        snprintf(out->align_round, sizeof out->align_round, "%s", m->align == FPEMU_MMA_ALIGN_RD ? "rd" : "rz");
        out->guard = m->nfrac - m->out_mant;
        break;
    case FPEMU_MMA_KIND_FMA_SEQ:
    fma_like:
        out->block = 1;
        out->nfrac = -1;
        snprintf(out->align_round, sizeof out->align_round, "none");
        snprintf(out->normalize, sizeof out->normalize, "each");
        out->guard = -1;
        break;
    default: /* exact, pairwise */
        out->block = 0;
        out->nfrac = -1;
        snprintf(out->align_round, sizeof out->align_round, "none");
        out->guard = -1;
        break;
    }
    snprintf(out->matches, sizeof out->matches, "%s", m->name);
}

static int same_params(const fpemu_mma_probe_result *a, const fpemu_mma_probe_result *b) {
    return a->block == b->block && a->nfrac == b->nfrac && !strcmp(a->align_round, b->align_round) &&
           !strcmp(a->out_round, b->out_round) && a->out_mant == b->out_mant &&
           !strcmp(a->normalize, b->normalize) && !strcmp(a->subnormals, b->subnormals);
}

const char *fpemu_mma_probe_match(const fpemu_mma_probe_result *r, const fpemu_format *fa, const fpemu_format *fb,
                                  const fpemu_format *fc, const fpemu_format *fd, char *buf, size_t len) {
    size_t o = 0;
    if (len) buf[0] = 0; /* len = 0: nothing is written (buf may be NULL) */
    for (int i = 0; fpemu_mma_preset_names[i]; i++) {
        fpemu_mma_model m;
        if (fpemu_mma_model_preset(&m, fpemu_mma_preset_names[i], fa, fb, fc, fd, NULL, 0)) continue;
        fpemu_mma_probe_result e;
        fpemu_mma_probe_expected(&m, MAXK, &e);
        if (r->kmax) fpemu_mma_probe_expected(&m, r->kmax, &e);
        if (same_params(r, &e))
            o += (size_t)snprintf(o < len ? buf + o : NULL, o < len ? len - o : 0, "%s%s", o ? "," : "", fpemu_mma_preset_names[i]);
    }
    if (!o) snprintf(buf, len, "none");
    return buf;
}
