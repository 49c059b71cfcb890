/* SPDX-License-Identifier: MIT */
/* mma.c: tensor-core (MMA) dot-product models: the block-FMA algorithm of
 * Fasi, Higham, Mikaitis & Pranesh 2021 as Khattak & Mikaitis' models and
 * MMA-Sim parameterise it (docs/tensor-cores.md), the reference presets
 * (exact, fma-seq, pairwise), block-scaled inputs and integer MMA. Scalar
 * and exact: every model computes with integers (products sig_a*sig_b at
 * exponent ea+eb, aligned sums in __int128 or a wide fixed-point
 * accumulator) and ends in one fpemu_round_pack per rounding the hardware
 * does. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "mma.h"

typedef unsigned __int128 u128;
typedef __int128 i128;

/* ---- operands ------------------------------------------------------------ */

enum { CL_FIN = 0, CL_INF, CL_NAN };

/* An exact value (-1)^sign * sig * 2^exp; E is the exponent the alignment
 * sees (unbiased exponent of a normal operand, the format's emin for a
 * subnormal or zero one; for products the sum of the operands'). */
typedef struct {
    int cls, sign, zero;
    u128 sig;
    int exp, E;
} term;

static int is_f32(const fpemu_format *f) { return f->ebits == 8 && f->mbits == 23 && f->pad == 0; }

/* A format's decoding parameters, held in locals (registers) through a
 * loop over many operands. cls: the class table, or NULL. */
typedef struct {
    const uint8_t *cls;
    uint64_t field, sign_bit, mag_mask, mant;
    int pad, mbits, bias, emin, subn;
} dparams;
static inline __attribute__((always_inline)) dparams dparams_of(const fpemu_format *f) {
    dparams p = {f->class_table, f->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->bits) - 1, f->sign_bit, f->mag_mask,
                 (UINT64_C(1) << f->mbits) - 1, f->pad, f->mbits, f->bias, f->emin, f->has_subnormals};
    return p;
}

/* The term of field c (the code's bits, stripped) of class k: fpemu_unpack's
 * decomposition inline; inf and NaN keep only their sign. */
static inline __attribute__((always_inline)) void decode_field(dparams p, uint64_t c, fpemu_class k, int flush,
                                                               term *t) {
    t->sign = (c & p.sign_bit) != 0;
    t->cls = k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN ? CL_NAN : k == FPEMU_CLASS_INF ? CL_INF : CL_FIN;
    uint64_t mag = c & p.mag_mask;
    uint64_t expf = mag >> p.mbits, sig = mag & p.mant;
    int e;
    if (p.subn && expf == 0) {
        e = p.emin - p.mbits;
    } else {
        sig |= UINT64_C(1) << p.mbits;
        e = (int)expf - p.bias - p.mbits;
    }
    if (t->cls != CL_FIN || k == FPEMU_CLASS_ZERO || (flush && k == FPEMU_CLASS_SUBNORMAL)) sig = 0;
    t->sig = sig;
    t->exp = t->cls == CL_FIN ? e : 0;
    t->E = t->cls != CL_FIN ? 0 : k == FPEMU_CLASS_NORMAL || !p.subn ? e + p.mbits : p.emin;
    t->zero = t->cls == CL_FIN && sig == 0;
}

/* decode() for a format with a class table (p.cls set). */
static inline __attribute__((always_inline)) void decode_tab(dparams p, uint64_t code, int flush, term *t) {
    uint64_t c = code >> p.pad & p.field;
    decode_field(p, c, (fpemu_class)p.cls[c], flush, t);
}

static inline __attribute__((always_inline)) void decode(const fpemu_format *f, uint64_t code, int flush, int tf32,
                                                         term *t) {
    if (f->class_table) { /* formats of <= 16 bits */
        decode_tab(dparams_of(f), code, flush, t);
        return;
    }
    if (tf32 && is_f32(f)) {
        fpemu_class k0 = fpemu_classify(f, code);
        if (k0 != FPEMU_CLASS_QNAN && k0 != FPEMU_CLASS_SNAN) code &= ~(uint64_t)0x1FFF;
    }
    decode_field(dparams_of(f), emu__strip(f, code), fpemu_classify(f, code), flush, t);
}

/* Product of two decoded operands (exact). NaN if either is NaN or 0*inf. */
static inline __attribute__((always_inline)) void mul_terms(const term *a, const term *b, term *p) {
    p->cls = CL_FIN, p->zero = 0, p->sig = 0, p->exp = 0, p->E = 0;
    p->sign = a->sign ^ b->sign;
    if (a->cls == CL_NAN || b->cls == CL_NAN) { p->cls = CL_NAN; return; }
    if (a->cls == CL_INF || b->cls == CL_INF) {
        if ((a->cls == CL_FIN && a->zero) || (b->cls == CL_FIN && b->zero)) p->cls = CL_NAN;
        else p->cls = CL_INF;
        return;
    }
    p->sig = a->sig * b->sig;
    p->exp = a->exp + b->exp;
    p->E = a->E + b->E;
    p->zero = p->sig == 0;
}

static uint64_t nan_code(const fpemu_mma_model *m, const fpemu_format *f) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    if (m->nan_allones && f->nan == FPEMU_NANS_IEEE) return f->mag_mask << f->pad;
    /* the core's canonical NaN: 0 * inf in the format */
    uint64_t inf = fpemu_round_pack(f, 0, 1, 100000, 0, &ctx);
    return fpemu_mul(f, 0, inf, &ctx);
}

static uint64_t inf_code(const fpemu_format *f, int sign) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    return fpemu_round_pack(f, sign, 1, 100000, 0, &ctx);
}

/* Specials among terms (rule 7), gathered over one or more pieces of them
 * (specials_scan), then classified: CL_NAN, CL_INF (sign in *sign) or CL_FIN. */
typedef struct { int nan, pinf, ninf; } specs;
static void specials_scan(const term *t, size_t n, specs *s) {
    for (size_t i = 0; i < n; i++) {
        if (t[i].cls == CL_NAN) s->nan = 1;
        else if (t[i].cls == CL_INF) { if (t[i].sign) s->ninf = 1; else s->pinf = 1; }
    }
}
static int specials_class(const specs *s, int *sign) {
    if (s->nan || (s->pinf && s->ninf)) return CL_NAN;
    if (s->pinf || s->ninf) { *sign = s->ninf; return CL_INF; }
    return CL_FIN;
}
static int specials(const term *t, size_t n, int *sign) {
    specs s = {0, 0, 0};
    specials_scan(t, n, &s);
    return specials_class(&s, sign);
}

/* ---- wide exact accumulator ------------------------------------------------ */

#define BA_LIMBS 80
typedef struct { uint64_t w[BA_LIMBS]; int lo, n; } bigacc;

/* A window for terms whose lowest bit is >= 2^lo and whose magnitude is
 * < 2^hi, with room for carries. */
static void ba_init(bigacc *a, int lo, int hi) {
    a->lo = lo;
    a->n = (hi - lo + 80) / 64 + 1;
    if (a->n > BA_LIMBS) a->n = BA_LIMBS;
    memset(a->w, 0, sizeof a->w[0] * (size_t)a->n); /* limbs past n are never read */
}

static void ba_add(bigacc *a, int neg, u128 sig, int exp) {
    if (sig == 0) return;
    int pos = exp - a->lo;
    if (pos < 0) { sig >>= -pos; pos = 0; } /* never happens with a correct window */
    int li = pos / 64, bi = pos % 64;
    uint64_t v[3];
    v[0] = (uint64_t)sig << bi;
    v[1] = bi ? (uint64_t)(sig >> (64 - bi)) : (uint64_t)(sig >> 64);
    v[2] = bi ? (uint64_t)((sig >> 64) >> (64 - bi)) : 0;
    if (!neg) {
        uint64_t carry = 0;
        for (int i = li; i < a->n; i++) {
            uint64_t x = i - li < 3 ? v[i - li] : 0;
            u128 s = (u128)a->w[i] + x + carry;
            a->w[i] = (uint64_t)s;
            carry = (uint64_t)(s >> 64);
            if (i - li >= 2 && !carry) break;
        }
    } else {
        uint64_t borrow = 0;
        for (int i = li; i < a->n; i++) {
            uint64_t x = i - li < 3 ? v[i - li] : 0;
            u128 s = (u128)a->w[i] - x - borrow;
            a->w[i] = (uint64_t)s;
            borrow = (uint64_t)(s >> 64) ? 1 : 0;
            if (i - li >= 2 && !borrow) break;
        }
    }
}

/* Round the accumulated value to f. *is_zero reports an exact zero sum
 * (the caller picks the zero's sign). */
static uint64_t ba_round(bigacc *a, const fpemu_format *f, fpemu_ctx *ctx, int *is_zero) {
    int neg = (int)(a->w[a->n - 1] >> 63);
    if (neg) {
        uint64_t carry = 1;
        for (int i = 0; i < a->n; i++) {
            u128 s = (u128)(~a->w[i]) + carry;
            a->w[i] = (uint64_t)s;
            carry = (uint64_t)(s >> 64);
        }
    }
    int top = a->n - 1;
    while (top >= 0 && a->w[top] == 0) top--;
    if (top < 0) { *is_zero = 1; return 0; }
    *is_zero = 0;
    int hb = 63 - __builtin_clzll(a->w[top]); /* highest set bit within limb */
    int msb = top * 64 + hb;                  /* bit index of the leading 1 */
    uint64_t sig;
    int sticky = 0, exp;
    if (msb < 64) {
        sig = a->w[0];
        if (a->n > 1 && top == 1) sig = a->w[0]; /* msb < 64 means top == 0 */
        exp = a->lo;
    } else {
        int low = msb - 63; /* bit index of sig's lsb */
        int lw = low / 64, lb = low % 64;
        sig = a->w[lw] >> lb;
        if (lb) sig |= a->w[lw + 1] << (64 - lb);
        if (a->w[lw] & ((UINT64_C(1) << lb) - 1)) sticky = 1;
        for (int i = 0; i < lw && !sticky; i++) if (a->w[i]) sticky = 1;
        exp = a->lo + low;
    }
    return fpemu_round_pack(f, neg, sig, exp, sticky, ctx);
}

/* The exponent of a term's lowest and (exclusive) highest bit. */
static int bitlen128(u128 x) {
    uint64_t hi = (uint64_t)(x >> 64);
    if (hi) return 128 - __builtin_clzll(hi);
    uint64_t lo = (uint64_t)x;
    return lo ? 64 - __builtin_clzll(lo) : 0;
}

/* Exact sum of n finite terms rounded once to f (the zero sign per IEEE:
 * -0 only if every term is -0, or under rdn), in two passes that may see
 * the terms in pieces: es_scan over every term, es_start, es_add over every
 * term again, es_round. */
typedef struct { int lo, hi, allneg, any; } escan;
static void es_init(escan *s) { s->lo = INT_MAX, s->hi = INT_MIN, s->allneg = 1, s->any = 0; }
static void es_scan(const term *t, size_t n, escan *s) {
    for (size_t i = 0; i < n; i++) {
        if (!t[i].sign) s->allneg = 0;
        if (t[i].zero) continue;
        s->any = 1;
        if (t[i].exp < s->lo) s->lo = t[i].exp;
        int h = t[i].exp + bitlen128(t[i].sig);
        if (h > s->hi) s->hi = h;
    }
}
static void es_start(escan *s, bigacc *a) {
    /* keep the window inside the accumulator: far-below bits only matter as sticky */
    if ((s->hi - s->lo + 80) / 64 + 1 > BA_LIMBS) s->lo = s->hi + 80 - (BA_LIMBS - 1) * 64;
    ba_init(a, s->lo, s->hi);
}
static void es_add(bigacc *a, const term *t, size_t n) {
    int lo = a->lo;
    for (size_t i = 0; i < n; i++) {
        if (t[i].zero) continue;
        if (t[i].exp < lo) { /* only reachable for absurd spans; keep a sticky unit */
            int sh = lo - t[i].exp;
            u128 kept = sh >= 128 ? 0 : t[i].sig >> sh;
            ba_add(a, t[i].sign, kept, lo);
            continue;
        }
        ba_add(a, t[i].sign, t[i].sig, t[i].exp);
    }
}
static uint64_t es_round(bigacc *a, const fpemu_format *f, fpemu_ctx *ctx) {
    int z;
    uint64_t r = ba_round(a, f, ctx, &z);
    if (z) return fpemu_round_pack(f, ctx->round == FPEMU_RDN, 0, 0, 0, ctx);
    return r;
}

static uint64_t exact_sum(const term *t, size_t n, const fpemu_format *f, fpemu_ctx *ctx) {
    escan s;
    es_init(&s);
    es_scan(t, n, &s);
    if (!s.any) return fpemu_round_pack(f, n > 0 && s.allneg, 0, 0, 0, ctx);
    bigacc a;
    es_start(&s, &a);
    es_add(&a, t, n);
    return es_round(&a, f, ctx);
}

/* ---- formats of block results ------------------------------------------- */

static const fpemu_format *fmt(const char *name) { return fpemu_format_get(name, NULL, 0); }

/* Validate m and derive its block-result format; m changes only on success. */
int fpemu_mma_model_finish(fpemu_mma_model *m, char *err, size_t errlen) {
    if ((unsigned)m->kind > FPEMU_MMA_KIND_INT) {
        if (err) snprintf(err, errlen, "model %s: unknown kind %d", m->name, (int)m->kind);
        return -1;
    }
    if (m->kind == FPEMU_MMA_KIND_INT) {
        if (m->block < 0) {
            if (err) snprintf(err, errlen, "model %s: block must be >= 0", m->name);
            return -1;
        }
        return 0;
    }
    if (!m->fd || !m->fc || !m->fa || !m->fb) {
        if (err) snprintf(err, errlen, "model %s: formats not bound", m->name);
        return -1;
    }
    if (m->out_mant < 0 || m->out_mant > m->fd->mbits) {
        if (err) snprintf(err, errlen, "model %s: out_mant must lie in [0, %d] (the output format's mantissa bits)",
                          m->name, m->fd->mbits);
        return -1;
    }
    if (m->kind == FPEMU_MMA_KIND_BLOCK && (m->nfrac < 1 || m->nfrac > 60)) {
        if (err) snprintf(err, errlen, "model %s: nfrac must lie in [1, 60]", m->name);
        return -1;
    }
    if (m->block < 0) {
        if (err) snprintf(err, errlen, "model %s: block must be >= 0", m->name);
        return -1;
    }
    if ((unsigned)m->align > FPEMU_MMA_ALIGN_RD || (unsigned)m->norm > FPEMU_MMA_NORM_EACH || (unsigned)m->chain > FPEMU_MMA_CHAIN_F32_ADD) {
        if (err) snprintf(err, errlen, "model %s: align, normalize or chain out of range", m->name);
        return -1;
    }
    if ((unsigned)m->out_round >= FPEMU_SR) {
        if (err) snprintf(err, errlen, "model %s: out_round must be rne, rna, rtz, rup, rdn or rto", m->name);
        return -1;
    }
    if (m->has_emax_floor && (m->emax_floor < INT_MIN / 2 || m->emax_floor > INT_MAX / 2)) {
        if (err) snprintf(err, errlen, "model %s: emax_floor out of range", m->name);
        return -1;
    }
    if (m->fuse_nfrac != 0 && (m->fuse_nfrac < m->nfrac || m->fuse_nfrac > 60 || (unsigned)m->fuse_align > FPEMU_MMA_ALIGN_RD)) {
        if (err) snprintf(err, errlen, "model %s: fuse_nfrac must be 0 (off) or lie in [nfrac, 60]", m->name);
        return -1;
    }
    if ((m->split != 0 && m->split != 1 && m->split != 2) || m->ftz < 0 || m->ftz > 1) {
        if (err) snprintf(err, errlen, "model %s: split must be 1 or 2, ftz 0 or 1", m->name);
        return -1;
    }
    if (m->group > 0 && (m->group > 64 || m->group_nfrac < 1 || m->group_nfrac > 60 || m->group_block < 1)) {
        if (err) snprintf(err, errlen, "model %s: group must lie in [0, 64], group_nfrac in [1, 60], group_block >= 1", m->name);
        return -1;
    }
    fpemu_format o = *m->fd;
    if (m->out_mant != m->fd->mbits) {
        snprintf(o.name, sizeof o.name, "%.24s_m%d", m->fd->name, m->out_mant & 63);
        o.pad = m->fd->pad + (m->fd->mbits - m->out_mant);
        o.mbits = m->out_mant;
        o.bits = 0;
        o.decode_table = NULL;
        o.class_table = NULL;
        if (fpemu_format_finish(&o, err, errlen)) return -1;
    }
    m->outf = o;
    return 0;
}

/* ---- the block-FMA algorithm --------------------------------------------- */

typedef struct { const fpemu_mma_model *m; fpemu_ctx ctx; const fpemu_format *cf; } run_state;

/* A zero block result of sign neg (always +0 under zero_sign=plus). */
static uint64_t zero_result(run_state *rs, int neg) {
    return fpemu_round_pack(&rs->m->outf, neg && !rs->m->zero_plus, 0, 0, 0, &rs->ctx);
}

/* One block: term 0 is c (decoded in cf), terms 1..n-1 products (or group
 * terms). Returns the block result as a code of m->fd (outf). The terms
 * come from an array t of all n (src NULL), or from src in pieces of at
 * most cap into buf (a block of any length in bounded memory: two passes,
 * emax first, then the aligned sum; the terms are computed twice). */
typedef struct { specs sp; int emax, allneg; } bscan;

static void bs_scan(const fpemu_mma_model *m, const term *t, size_t n, size_t base, bscan *s) {
    specials_scan(t, n, &s->sp);
    for (size_t i = 0; i < n; i++) {
        if (!t[i].sign) s->allneg = 0;
        if (t[i].zero) {
            if (base + i == 0 ? !m->zero_c : !m->zero_product) continue;
        }
        if (t[i].E > s->emax) s->emax = t[i].E;
    }
}

static void bs_accum(const fpemu_mma_model *m, const term *t, size_t n, int q, i128 *sum, int *anynz) {
    for (size_t i = 0; i < n; i++) {
        if (t[i].zero) continue;
        *anynz = 1;
        int sh = t[i].exp - q;
        u128 mag;
        int lost = 0;
        if (sh >= 0) {
            mag = sh >= 100 ? 0 : t[i].sig << sh; /* sh is small: terms lie below 2^(emax+3) */
        } else if (sh <= -128) {
            mag = 0, lost = 1;
        } else {
            mag = t[i].sig >> -sh;
            lost = (t[i].sig & (((u128)1 << -sh) - 1)) != 0;
        }
        if (m->align == FPEMU_MMA_ALIGN_RD && t[i].sign && lost) mag += 1;
        *sum += t[i].sign ? -(i128)mag : (i128)mag;
    }
}

typedef struct block_src block_src;
static void block_fill(const block_src *src, size_t j0, size_t cnt, term *t);

/* The n terms of a block (or of an exact dot product) in buf, for passes
 * over them: all at once when they fit in cap (filled here from src; src
 * NULL: buf holds them already), else in pieces of cap, computed again by
 * piece_at on every pass. */
typedef struct { const block_src *src; term *buf; size_t n, step; int whole; } pieces;
static void pieces_init(pieces *p, const block_src *src, term *buf, size_t cap, size_t n) {
    p->src = src, p->buf = buf, p->n = n;
    p->whole = !src || n <= cap;
    p->step = p->whole ? n : cap;
    if (src && p->whole) block_fill(src, 0, n, buf);
}
/* The piece at j0 (a multiple of step) in buf; returns its length. */
static size_t piece_at(const pieces *p, size_t j0) {
    size_t cn = p->n - j0 < p->step ? p->n - j0 : p->step;
    if (!p->whole) block_fill(p->src, j0, cn, p->buf);
    return cn;
}

/* One term cut to the quantum 2^q: toward zero in sign-magnitude, or
 * (rd) toward -inf; signed. */
static i128 align_term(const term *t, int q, int rd) {
    int sh = t->exp - q;
    u128 mag;
    int lost = 0;
    if (sh >= 0) {
        mag = sh >= 100 ? 0 : t->sig << sh;
    } else if (sh <= -128) {
        mag = 0, lost = t->sig != 0;
    } else {
        mag = t->sig >> -sh;
        lost = (t->sig & (((u128)1 << -sh) - 1)) != 0;
    }
    if (rd && t->sign && lost) mag += 1;
    return t->sign ? -(i128)mag : (i128)mag;
}

/* v * 2^q0 cut to the quantum 2^(q0 + sh) (sh > 0: bits dropped toward
 * zero, or toward -inf with rd; sh <= 0: exact). */
static i128 requantize(i128 v, int sh, int rd) {
    if (sh <= 0) return sh <= -100 ? 0 : v * ((i128)1 << -sh);
    if (sh >= 127) return rd && v < 0 ? -1 : 0;
    if (v >= 0) return v >> sh;
    u128 mag = (u128)(-v), r = mag >> sh;
    if (rd && (mag & (((u128)1 << sh) - 1))) r += 1;
    return -(i128)r;
}

/* The two-stage sum of a block (fuse_nfrac > 0: AMD CDNA3, MMA-Sim's
 * TR-FDPA and, with split = 2, GTR-FDPA): the products without c at their
 * own emax (in two interleaved halves with split = 2), then that sum and c
 * at E = max(emax, c's exponent). Sets *q and returns the exact sum in
 * units of 2^q; *anynz as bs_accum. */
static i128 fused_sum(const fpemu_mma_model *m, const pieces *p, term *buf, size_t n, int nfrac, int cE, int ec_counts,
                      const int emax_h[2], int *q, int *anynz) {
    const int rd = m->align == FPEMU_MMA_ALIGN_RD, rd2 = m->fuse_align == FPEMU_MMA_ALIGN_RD;
    const int halves = m->split == 2 ? 2 : 1;
    i128 hs[2] = {0, 0};
    int ep = INT_MIN; /* the products' emax */
    for (int h = 0; h < halves; h++)
        if (emax_h[h] > ep) ep = emax_h[h];
    term c;
    memset(&c, 0, sizeof c);
    c.zero = 1;
    for (size_t j0 = 0; j0 < n; j0 += p->step) {
        size_t cn = piece_at(p, j0);
        for (size_t i = 0; i < cn; i++) {
            const term *t = &buf[i];
            if (j0 + i == 0) { c = *t; continue; }
            if (t->zero) continue;
            *anynz = 1;
            int h = halves == 2 ? (int)((j0 + i - 1) & 1) : 0;
            hs[h] += align_term(t, emax_h[h] - nfrac, rd);
        }
    }
    if (!c.zero) *anynz = 1;
    i128 ps = 0; /* the products' sum in units of 2^(ep - nfrac) */
    for (int h = 0; h < halves; h++)
        if (emax_h[h] != INT_MIN) ps += requantize(hs[h], ep - emax_h[h], rd);
    int E = ep;
    if (ec_counts && cE > E) E = cE;
    if (E == INT_MIN) E = cE;
    *q = E - m->fuse_nfrac;
    i128 sum = ep == INT_MIN ? 0 : requantize(ps, *q - (ep - nfrac), rd2);
    if (!c.zero) sum += requantize(align_term(&c, E - nfrac, rd2), nfrac - m->fuse_nfrac, 0);
    return sum;
}

static uint64_t block_sum_src(run_state *rs, const block_src *src, term *buf, size_t cap, size_t n, int nfrac) {
    const fpemu_mma_model *m = rs->m;
    pieces p;
    pieces_init(&p, src, buf, cap, n);
    bscan s = {{0, 0, 0}, INT_MIN, 1};
    /* two-stage blocks: the emax of each half of the products, and c's */
    int emax_h[2] = {INT_MIN, INT_MIN}, cE = INT_MIN, ec_counts = 0;
    for (size_t j0 = 0; j0 < n; j0 += p.step) {
        size_t cn = piece_at(&p, j0);
        bs_scan(m, buf, cn, j0, &s);
        if (m->fuse_nfrac > 0)
            for (size_t i = 0; i < cn; i++) {
                const term *t = &buf[i];
                if (j0 + i == 0) {
                    cE = t->E;
                    ec_counts = !t->zero || m->zero_c;
                    continue;
                }
                if (t->zero && !m->zero_product) continue;
                int h = m->split == 2 ? (int)((j0 + i - 1) & 1) : 0;
                if (t->E > emax_h[h]) emax_h[h] = t->E;
            }
    }
    int sgn = 0, sp = specials_class(&s.sp, &sgn);
    if (sp == CL_NAN) return nan_code(m, m->fd);
    if (sp == CL_INF) return inf_code(m->fd, sgn);
    if (s.emax == INT_MIN) /* every term zero and none counts */
        return zero_result(rs, s.allneg);
    i128 sum = 0;
    int anynz = 0, q;
    if (m->fuse_nfrac > 0) {
        sum = fused_sum(m, &p, buf, n, nfrac, cE, ec_counts, emax_h, &q, &anynz);
    } else {
        int emax = s.emax;
        if (m->has_emax_floor && emax < m->emax_floor) emax = m->emax_floor;
        q = emax - nfrac; /* the alignment quantum is 2^q */
        for (size_t j0 = 0; j0 < n; j0 += p.step) {
            size_t cn = piece_at(&p, j0);
            bs_accum(m, buf, cn, q, &sum, &anynz);
        }
    }
    if (sum == 0) {
        return zero_result(rs, anynz ? rs->ctx.round == FPEMU_RDN : s.allneg);
    }
    int neg = sum < 0;
    u128 mag = neg ? (u128)(-sum) : (u128)sum;
    int exp = q, sticky = 0;
    while (mag >> 64) { sticky |= (int)(mag & 1); mag >>= 1; exp++; }
    unsigned before = rs->ctx.flags;
    rs->ctx.flags = 0;
    uint64_t r = fpemu_round_pack(&m->outf, neg, (uint64_t)mag, exp, sticky, &rs->ctx);
    if ((rs->ctx.flags & FPEMU_FLAG_OVERFLOW) && m->overflow_inf && m->fd->inf != FPEMU_INF_NONE)
        r = inf_code(m->fd, neg);
    else if (m->zero_plus && neg && fpemu_classify(&m->outf, r) == FPEMU_CLASS_ZERO)
        r = zero_result(rs, 0); /* a negative sum rounded to zero */
    rs->ctx.flags |= before;
    return r;
}

static uint64_t block_sum(run_state *rs, term *t, size_t n, int nfrac) {
    return block_sum_src(rs, NULL, t, n, n, nfrac);
}

/* Add two finite-or-special values exactly and round to f (an IEEE add). */
static uint64_t add_round(const fpemu_mma_model *m, const fpemu_format *f, const term *x, const term *y, fpemu_ctx *ctx) {
    term t[2] = {*x, *y};
    int sgn = 0;
    int sp = specials(t, 2, &sgn);
    if (sp == CL_NAN) return nan_code(m, f);
    if (sp == CL_INF) return inf_code(f, sgn);
    if (x->zero && y->zero) {
        int s = x->sign == y->sign ? x->sign : ctx->round == FPEMU_RDN;
        return fpemu_round_pack(f, s, 0, 0, 0, ctx);
    }
    return exact_sum(t, 2, f, ctx);
}

/* Product terms for elements [lo, hi) (scales optional). */
typedef struct {
    const fpemu_mma_model *m;
    const uint64_t *a, *b;
    const fpemu_format *sfmt;
    const uint64_t *sa, *sb;
    int sblock;
} dot_in;

/* Scale the product p by its two decoded block scales s1, s2 (ue4m3 /
 * e8m0: magnitudes; a NaN scale makes the product NaN). */
static inline __attribute__((always_inline)) void apply_scales(term *p, term *s1, term *s2) {
    if (p->cls != CL_FIN) {
        if (s1->cls == CL_NAN || s2->cls == CL_NAN) p->cls = CL_NAN;
        return;
    }
    term s12;
    s1->sign = s2->sign = 0;
    mul_terms(s1, s2, &s12);
    if (s12.cls != CL_FIN) { p->cls = CL_NAN; return; }
    if (s12.zero) { p->sig = 0, p->zero = 1; p->E += s12.E; return; }
    p->sig *= s12.sig;
    p->exp += s12.exp;
    p->E += s12.E;
    p->zero = p->sig == 0;
}

static void product(const dot_in *in, size_t i, term *p) {
    const fpemu_mma_model *m = in->m;
    term ta, tb;
    decode(m->fa, in->a[i], m->flush_subnormals, m->tf32_truncate, &ta);
    decode(m->fb, in->b[i], m->flush_subnormals, m->tf32_truncate, &tb);
    mul_terms(&ta, &tb, p);
    if (in->sfmt) {
        term s1, s2;
        decode(in->sfmt, in->sa[i / in->sblock], 0, 0, &s1);
        decode(in->sfmt, in->sb[i / in->sblock], 0, 0, &s2);
        apply_scales(p, &s1, &s2);
    }
}

/* The terms of one block: c, then the products of elements [i, end) or,
 * grouped, one term per group of m->group of them. */
struct block_src {
    const fpemu_mma_model *m;
    const dot_in *in;
    int grouped;
    size_t i, end;
    const term *c;
};

static size_t block_count(const block_src *s) {
    size_t n = s->end - s->i, g = (size_t)s->m->group;
    return 1 + (s->grouped ? n / g + (n % g != 0) : n);
}

/* The group term of elements [g, min(g + group, end)) (grouped blocks). */
static void group_term(const block_src *s, size_t g, term *out) {
    const fpemu_mma_model *m = s->m;
    const dot_in *in = s->in;
    size_t ge = (size_t)m->group < s->end - g ? g + (size_t)m->group : s->end;
    /* exact group sum of the unscaled products (multiples of 1/4) */
    i128 gs = 0;
    term gt;
    memset(&gt, 0, sizeof gt);
    int gsp = 0;
    for (size_t j = g; j < ge; j++) {
        term ta, tb, p;
        decode(m->fa, in->a[j], 0, 0, &ta);
        decode(m->fb, in->b[j], 0, 0, &tb);
        mul_terms(&ta, &tb, &p);
        if (p.cls != CL_FIN) { gsp = 1; continue; }
        /* OCP e2m1 products (emu__is_ocp_e2m1): sig * 2^exp with -2 <= exp <= 2 */
        i128 v = (i128)(p.sig << (p.exp + 2));
        gs += p.sign ? -v : v;
    }
    term s1, s2, s12;
    decode(in->sfmt, in->sa[g / (size_t)in->sblock], 0, 0, &s1);
    decode(in->sfmt, in->sb[g / (size_t)in->sblock], 0, 0, &s2);
    s1.sign = s2.sign = 0;
    if (gsp || s1.cls != CL_FIN || s2.cls != CL_FIN) { gt.cls = CL_NAN; *out = gt; return; }
    mul_terms(&s1, &s2, &s12);
    gt.sign = gs < 0;
    u128 mag = gs < 0 ? (u128)(-gs) : (u128)gs;
    gt.sig = mag * s12.sig;
    gt.exp = s12.exp - 2;
    gt.E = s12.E; /* the group's exponent is the scales' (MMA-Sim) */
    gt.zero = 0;  /* a zero group still counts in emax */
    *out = gt;
}

/* product() over elements of table formats, with the formats' parameters
 * in registers; scaled is a constant at each call (two loops). */
static inline __attribute__((always_inline)) void fill_tab(const block_src *s, size_t j0, size_t cnt, term *t,
                                                           const int scaled) {
    const fpemu_mma_model *m = s->m;
    const dot_in *in = s->in;
    const dparams pa = dparams_of(m->fa), pb = dparams_of(m->fb);
    const dparams ps = dparams_of(scaled ? in->sfmt : m->fa);
    const uint64_t *a = in->a, *b = in->b;
    const int flush = m->flush_subnormals;
    size_t x = 0;
    if (j0 == 0 && cnt > 0) t[x++] = *s->c;
    for (; x < cnt; x++) {
        size_t i = s->i + (j0 + x - 1);
        term ta, tb, *p = &t[x];
        decode_tab(pa, a[i], flush, &ta);
        decode_tab(pb, b[i], flush, &tb);
        mul_terms(&ta, &tb, p);
        if (!scaled) continue;
        term s1, s2;
        decode_tab(ps, in->sa[i / in->sblock], 0, &s1);
        decode_tab(ps, in->sb[i / in->sblock], 0, &s2);
        apply_scales(p, &s1, &s2);
    }
}

static void block_fill(const block_src *s, size_t j0, size_t cnt, term *t) {
    const fpemu_mma_model *m = s->m;
    const dot_in *in = s->in;
    if (!s->grouped && m->fa->class_table && m->fb->class_table && (!in->sfmt || in->sfmt->class_table)) {
        if (in->sfmt) fill_tab(s, j0, cnt, t, 1);
        else fill_tab(s, j0, cnt, t, 0);
        return;
    }
    for (size_t x = 0; x < cnt; x++) {
        size_t j = j0 + x;
        if (j == 0) t[x] = *s->c;
        else if (s->grouped) group_term(s, s->i + (j - 1) * (size_t)s->m->group, &t[x]);
        else product(s->in, s->i + (j - 1), &t[x]);
    }
}

/* Terms held at once: a block up to this many is computed once; longer ones
 * (block = 0 with a long k) in pieces of this many, in two passes. */
#define TERMS_CAP 65536
#define TERMS_STACK 130

/* A term buffer for up to want terms, at most TERMS_CAP: on the stack when
 * small, else on the heap, else (no memory) the stack's, in smaller pieces. */
typedef struct { term stack[TERMS_STACK]; term *t; size_t cap; } termbuf;
static void termbuf_open(termbuf *b, size_t want) {
    b->cap = want < TERMS_CAP ? want : TERMS_CAP;
    b->t = b->cap <= TERMS_STACK ? b->stack : malloc(sizeof(term) * b->cap);
    if (!b->t) b->t = b->stack, b->cap = TERMS_STACK;
}
static void termbuf_close(termbuf *b) {
    if (b->t != b->stack) free(b->t);
}

static uint64_t dot_block(const fpemu_mma_model *m, const dot_in *in, size_t k, uint64_t c, unsigned *flags) {
    run_state rs = {.m = m, .cf = m->fc};
    fpemu_ctx_init(&rs.ctx);
    rs.ctx.round = m->out_round;
    term cur;
    decode(m->fc, c, 0, 0, &cur);
    /* a c in a format other than fd is only an input; chained c's are in fd */
    int grouped = in->sfmt && m->group > 0 && emu__is_ocp_e2m1(m->fa) && emu__is_ocp_e2m1(m->fb);
    int Bm = grouped ? m->group_block : m->block;
    size_t B = Bm <= 0 || (size_t)Bm > k ? (k > 0 ? k : 1) : (size_t)Bm;
    int nfrac = grouped ? m->group_nfrac : m->nfrac;
    termbuf tb;
    termbuf_open(&tb, (grouped ? B / (size_t)m->group + 2 : B) + 1);
    term *t = tb.t;
    size_t cap = tb.cap;
    uint64_t d = c;
    term run; /* FPEMU_MMA_CHAIN_F32_ADD: the running sum */
    run = cur;
    size_t i = 0;
    do {
        size_t end = B < k - i ? i + B : k;
        term c0;
        if (m->chain == FPEMU_MMA_CHAIN_F32_ADD) {
            memset(&c0, 0, sizeof c0);
            c0.zero = 1, c0.E = m->fc->emin;
        } else {
            c0 = cur;
        }
        block_src src = {.m = m, .in = in, .grouped = grouped, .i = i, .end = end, .c = &c0};
        size_t n = block_count(&src);
        uint64_t r;
        if (m->norm == FPEMU_MMA_NORM_EACH) {
            term acc = c0;
            r = 0;
            if (n == 1) r = block_sum(&rs, &acc, 1, nfrac);
            for (size_t j0 = 1; j0 < n; j0 += cap) {
                size_t cn = n - j0 < cap ? n - j0 : cap;
                block_fill(&src, j0, cn, t);
                for (size_t j = 0; j < cn; j++) {
                    term two[2] = {acc, t[j]};
                    r = block_sum(&rs, two, 2, nfrac);
                    decode(m->fd, r, 0, 0, &acc);
                }
            }
        } else {
            r = block_sum_src(&rs, &src, t, cap, n, nfrac);
        }
        if (m->chain == FPEMU_MMA_CHAIN_F32_ADD) {
            term part;
            decode(m->fd, r, 0, 0, &part);
            fpemu_ctx c2;
            fpemu_ctx_init(&c2);
            c2.round = m->out_round;
            d = add_round(m, m->fd, &run, &part, &c2);
            rs.ctx.flags |= c2.flags;
            decode(m->fd, d, 0, 0, &run);
        } else {
            d = r;
            decode(m->fd, d, 0, 0, &cur);
        }
        i = end;
    } while (i < k);
    termbuf_close(&tb);
    if (flags) *flags |= rs.ctx.flags;
    return d;
}

/* ---- reference kinds --------------------------------------------------------- */

/* One rounding of the exact sum, in pieces of at most TERMS_CAP terms (any k). */
static uint64_t dot_exact(const fpemu_mma_model *m, const dot_in *in, size_t k, uint64_t c, unsigned *flags) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = m->out_round;
    term c0;
    decode(m->fc, c, 0, 0, &c0);
    block_src src = {.m = m, .in = in, .grouped = 0, .i = 0, .end = k, .c = &c0};
    size_t n = k + 1;
    termbuf tb;
    termbuf_open(&tb, n);
    term *t = tb.t;
    pieces p;
    pieces_init(&p, &src, t, tb.cap, n);
    specs sp = {0, 0, 0};
    escan s;
    es_init(&s);
    for (size_t j0 = 0; j0 < n; j0 += p.step) {
        size_t cn = piece_at(&p, j0);
        specials_scan(t, cn, &sp);
        es_scan(t, cn, &s);
    }
    uint64_t r;
    int sgn = 0, cls = specials_class(&sp, &sgn);
    if (cls == CL_NAN) r = nan_code(m, m->fd);
    else if (cls == CL_INF) r = inf_code(m->fd, sgn);
    else if (!s.any) r = fpemu_round_pack(m->fd, s.allneg, 0, 0, 0, &ctx);
    else {
        bigacc a;
        es_start(&s, &a);
        for (size_t j0 = 0; j0 < n; j0 += p.step) {
            size_t cn = piece_at(&p, j0);
            es_add(&a, t, cn);
        }
        r = es_round(&a, m->fd, &ctx);
    }
    termbuf_close(&tb);
    if (flags) *flags |= ctx.flags;
    return r;
}

static uint64_t dot_fma_seq(const fpemu_mma_model *m, const dot_in *in, size_t k, uint64_t c, unsigned *flags) {
    /* The host's fmaf/fma is this loop exactly (one rne rounding per step,
     * IEEE specials) when every input is a float (double) and d is f32
     * (f64): use it unless flags are wanted, under the library's
     * floating-point environment (rne, no FTZ or DAZ; internal.h), the
     * caller's put back. */
    if (!in->sfmt && !flags && m->out_round == FPEMU_RNE && !m->flush_subnormals) {
        if (is_f32(m->fd) && emu__fits_f32(m->fa) && emu__fits_f32(m->fb) && emu__fits_f32(m->fc)) {
            const unsigned fe = emu__fpenv_enter();
            float d = (float)fpemu_to_double(m->fc, c);
            EMU_LAUNDER(d);
            for (size_t i = 0; i < k; i++)
                d = fmaf((float)fpemu_to_double(m->fa, in->a[i]), (float)fpemu_to_double(m->fb, in->b[i]), d);
            EMU_LAUNDER(d); /* (fmaf is const to the compiler: internal.h) */
            emu__fpenv_leave(fe);
            if (d != d) return nan_code(m, m->fd);
            uint32_t u;
            memcpy(&u, &d, 4);
            return u;
        }
        if (!strcmp(m->fd->name, "f64") && !strcmp(m->fa->name, "f64") && !strcmp(m->fb->name, "f64") &&
            !strcmp(m->fc->name, "f64")) {
            double d, x, y;
            uint64_t u = c;
            memcpy(&d, &u, 8);
            const unsigned fe = emu__fpenv_enter();
            EMU_LAUNDER(d);
            for (size_t i = 0; i < k; i++) {
                memcpy(&x, &in->a[i], 8), memcpy(&y, &in->b[i], 8);
                d = fma(x, y, d);
            }
            EMU_LAUNDER(d);
            emu__fpenv_leave(fe);
            if (d != d) return nan_code(m, m->fd);
            memcpy(&u, &d, 8);
            return u;
        }
    }
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = m->out_round;
    term acc, p;
    decode(m->fc, c, 0, 0, &acc);
    uint64_t d = c;
    if (m->fc != m->fd) { /* bring c into fd (exact if fd is wider) */
        term z;
        memset(&z, 0, sizeof z);
        z.zero = 1, z.sign = acc.sign;
        d = add_round(m, m->fd, &acc, &z, &ctx);
        decode(m->fd, d, 0, 0, &acc);
    }
    for (size_t i = 0; i < k; i++) {
        product(in, i, &p);
        d = add_round(m, m->fd, &acc, &p, &ctx);
        decode(m->fd, d, 0, 0, &acc);
    }
    if (flags) *flags |= ctx.flags;
    return d;
}

/* ftz: a subnormal code of f becomes the zero of its sign. */
static uint64_t ftz_code(const fpemu_format *f, uint64_t code) {
    if (fpemu_classify(f, code) != FPEMU_CLASS_SUBNORMAL) return code;
    return code & (f->sign_bit << f->pad);
}

/* An operand under ftz: a subnormal reads as +0 (MMA-Sim's CDNA2 model). */
static void decode_ftz(const fpemu_format *f, uint64_t code, term *t) {
    decode(f, code, 1, 0, t);
    if (fpemu_classify(f, code) == FPEMU_CLASS_SUBNORMAL) t->sign = 0;
}

/* Pairwise tree over the exact products [lo, hi); internal sums rounded.
 * ftz: each product is first rounded to fd, and every rounded value below
 * fd's normal range is flushed to zero (sign kept). */
static void pairwise_rec(const fpemu_mma_model *m, const dot_in *in, size_t lo, size_t hi, fpemu_ctx *ctx, term *out) {
    if (hi - lo == 1) {
        if (!m->ftz) { product(in, lo, out); return; }
        term ta, tb, p, z;
        decode_ftz(m->fa, in->a[lo], &ta);
        decode_ftz(m->fb, in->b[lo], &tb);
        mul_terms(&ta, &tb, &p);
        memset(&z, 0, sizeof z);
        z.zero = 1, z.sign = p.sign;
        decode(m->fd, ftz_code(m->fd, add_round(m, m->fd, &p, &z, ctx)), 0, 0, out);
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    term l, r;
    pairwise_rec(m, in, lo, mid, ctx, &l);
    pairwise_rec(m, in, mid, hi, ctx, &r);
    uint64_t s = add_round(m, m->fd, &l, &r, ctx);
    if (m->ftz) s = ftz_code(m->fd, s);
    decode(m->fd, s, 0, 0, out);
}

/* Blocks of products (block > 0), each a pairwise tree added to the
 * running d with one rounding (AMD CDNA2: MMA-Sim's FTZ-MUL-ADD), or one
 * tree with ftz. */
static uint64_t dot_pairwise_blocks(const fpemu_mma_model *m, const dot_in *in, size_t k, uint64_t c, unsigned *flags) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = m->out_round;
    term acc, tree, z;
    if (m->ftz) decode_ftz(m->fc, c, &acc);
    else decode(m->fc, c, 0, 0, &acc);
    memset(&z, 0, sizeof z);
    z.zero = 1, z.sign = acc.sign;
    uint64_t d = add_round(m, m->fd, &acc, &z, &ctx); /* c in fd */
    if (m->ftz) d = ftz_code(m->fd, d);
    decode(m->fd, d, 0, 0, &acc);
    size_t B = m->block > 0 ? (size_t)m->block : (k > 0 ? k : 1);
    for (size_t i = 0; i < k; i += B) {
        size_t end = k - i < B ? k : i + B;
        pairwise_rec(m, in, i, end, &ctx, &tree);
        d = add_round(m, m->fd, &acc, &tree, &ctx);
        if (m->ftz) d = ftz_code(m->fd, d);
        decode(m->fd, d, 0, 0, &acc);
    }
    if (flags) *flags |= ctx.flags;
    return d;
}

static uint64_t dot_pairwise(const fpemu_mma_model *m, const dot_in *in, size_t k, uint64_t c, unsigned *flags) {
    if ((m->block > 0 || m->ftz) && !in->sfmt) return dot_pairwise_blocks(m, in, k, c, flags);
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = m->out_round;
    term tc, tree;
    decode(m->fc, c, 0, 0, &tc);
    uint64_t d;
    if (k == 0) {
        memset(&tree, 0, sizeof tree);
        tree.zero = 1, tree.sign = tc.sign;
    } else {
        pairwise_rec(m, in, 0, k, &ctx, &tree);
    }
    d = add_round(m, m->fd, &tc, &tree, &ctx);
    if (flags) *flags |= ctx.flags;
    return d;
}

static uint64_t dot_any(const fpemu_mma_model *m, const dot_in *in, size_t k, uint64_t c, unsigned *flags) {
    switch (m->kind) {
    case FPEMU_MMA_KIND_BLOCK: return dot_block(m, in, k, c, flags);
    case FPEMU_MMA_KIND_EXACT: return dot_exact(m, in, k, c, flags);
    case FPEMU_MMA_KIND_FMA_SEQ: return dot_fma_seq(m, in, k, c, flags);
    case FPEMU_MMA_KIND_PAIRWISE: return dot_pairwise(m, in, k, c, flags);
    default: return 0;
    }
}

/* c with the bits outside fc's field cleared (fpemu.h: ignored; a result
 * that is c itself, fma-seq with k = 0, must not carry them). */
static uint64_t c_field(const fpemu_mma_model *m, uint64_t c) {
    return m->fc ? c & ((m->fc->sign_bit | m->fc->mag_mask) << m->fc->pad) : c;
}

uint64_t fpemu_mma_dot(const fpemu_mma_model *m, const uint64_t *a, const uint64_t *b, size_t k, uint64_t c,
                       unsigned *flags) {
    dot_in in = {.m = m, .a = a, .b = b};
    c = c_field(m, c);
    return dot_any(m, &in, k, c, flags);
}

uint64_t fpemu_mma_dot_scaled(const fpemu_mma_model *m, const uint64_t *a, const uint64_t *b, size_t k, uint64_t c,
                              const fpemu_format *sfmt, const uint64_t *sa, const uint64_t *sb, int sblock,
                              unsigned *flags) {
    dot_in in = {.m = m, .a = a, .b = b, .sfmt = sfmt, .sa = sa, .sb = sb, .sblock = sblock > 0 ? sblock : 32};
    if (!sfmt || !sa || !sb) in.sfmt = NULL;
    return dot_any(m, &in, k, c_field(m, c), flags);
}

/* Exact int32 accumulation. Wrapping: one sum, taken mod 2^32. .satfinite:
 * each instruction (block products, 0 = all k) clamps its own result,
 * which is the next one's c (H100, measured: reports/gpu). */
int32_t fpemu_mma_dot_int(const fpemu_mma_model *m, const int32_t *a, const int32_t *b, size_t k, int32_t c) {
    int64_t s = c;
    size_t B = m->int_sat && m->block > 0 ? (size_t)m->block : k;
    for (size_t i = 0; i < k; i++) {
        int32_t x = m->a_signed ? (int8_t)a[i] : (uint8_t)a[i];
        int32_t y = m->b_signed ? (int8_t)b[i] : (uint8_t)b[i];
        s += (int64_t)x * y; /* <= 2^32 products of at most 2^16 fit int64 */
        if (m->int_sat && ((i + 1) % B == 0 || i + 1 == k)) {
            if (s > INT32_MAX) s = INT32_MAX;
            if (s < INT32_MIN) s = INT32_MIN;
        }
    }
    if (m->int_sat) return (int32_t)s;
    return (int32_t)(uint32_t)(uint64_t)s;
}

int fpemu_mma_model_blackbox(void *user, const uint64_t *a, const uint64_t *b, int k, uint64_t c, uint64_t *d) {
    const fpemu_mma_model *m = user;
    if (k < 0 || !m || m->kind == FPEMU_MMA_KIND_INT) return -1;
    *d = fpemu_mma_dot(m, a, b, (size_t)k, c, NULL);
    return 0;
}

/* ---- presets --------------------------------------------------------------- */

/* THE PRESET TABLE. Every list of presets (names, help texts, the training
 * policies' `mma` values, the errk list, fpemu-gpu's compute-capability
 * mapping, the fp8 formats a policy trains with) is derived from these
 * rows: adding a preset is adding one row (docs/tensor-cores.md, "Adding
 * a preset"). A row is a device (or a reference kind) with its
 * instruction entries; the input formats select the entry. */

/* One instruction family of a device. */
typedef struct {
    const char *inputs;   /* formats a and b may each take (space-separated; mixed freely) */
    const char *label;    /* in the device string (NULL: a's format name) */
    const char *instr;    /* the instructions it stands for */
    fpemu_mma_kind kind;  /* BLOCK; PAIRWISE (CDNA2); FMA_SEQ (f64: a chain of fma) */
    int block, nfrac;     /* products per block; fraction bits kept at alignment */
    int mant32;           /* mantissa bits of an f32 result (0: all 23) */
    fpemu_round round32;  /* rounding of an f32 result (an f16 one is rne to 10 bits) */
    int acc16;            /* d may be f16 */
    int tf32;             /* f32 inputs truncated to tf32 */
    int fuse_nfrac, split; /* two-stage fusion (CDNA3) */
    fpemu_mma_align fuse_align;
    int ftz;              /* flush-to-zero pairwise sums (CDNA2) */
} preset_mma;

typedef struct {
    fpemu_mma_preset_info info; /* name, device, family, cc range, measured, status, sources
                                 * (inputs, instructions, fp8 formats: derived) */
    fpemu_mma_kind ref_kind;    /* reference rows: their kind */
    /* block-kind parameters the device's entries share */
    fpemu_mma_align align;
    int zero_c_ignore, zero_plus, nan_allones, overflow_inf;
    int floor_below_emin;       /* > 0: emax floor at d's emin minus this (H100: 7) */
    int group, group_nfrac, group_block; /* block-scaled e2m1 (b200) */
    int c16;                    /* c may be f16 */
    const char *int_inputs;     /* integer MMA: "s8 u8", "s8"; NULL: none */
    int int_block, int_sat;     /* products per instruction; .satfinite exists */
    const char *int_instr;
    preset_mma mma[6];
} preset_row;

#define LIT "from the literature, not measured here"
#define NV(in, B, F, ...) {.inputs = in, .kind = FPEMU_MMA_KIND_BLOCK, .block = B, .nfrac = F, \
                           .round32 = FPEMU_RTZ, __VA_ARGS__}
#define DMMA {.inputs = "f64", .label = "f64 (DMMA: chain of fma)", .instr = "DMMA (mma.sync f64)", \
              .kind = FPEMU_MMA_KIND_FMA_SEQ, .block = 1}
#define NV_DEV .align = FPEMU_MMA_ALIGN_RZ, .nan_allones = 1, .overflow_inf = 1, .c16 = 1
#define NV_INT .int_inputs = "s8 u8", .int_block = 32, .int_sat = 1, .int_instr = "mma.sync m16n8k32 s8/u8 (IMMA)"
#define CDNA3(in, B, ...) {.inputs = in, .kind = FPEMU_MMA_KIND_BLOCK, .block = B, .nfrac = 24, .mant32 = 23, \
                           .round32 = FPEMU_RNE, .fuse_nfrac = 31, __VA_ARGS__}
#define CDNA2(in, ...) {.inputs = in, .kind = FPEMU_MMA_KIND_PAIRWISE, .block = 4, .mant32 = 23, \
                        .round32 = FPEMU_RNE, .ftz = 1, __VA_ARGS__}
#define AMD_DEV .align = FPEMU_MMA_ALIGN_RZ, .overflow_inf = 1, .int_inputs = "s8"
#define MMASIM "MMA-Sim (Xie et al., arXiv:2511.10909; github.com/microsoft/MMA-Sim"
#define REF(n, dev, k, ...) {.info = {n, dev, "reference", 0, 0, 0, "reference algorithm", "docs/tensor-cores.md", \
                                      .reference = 1, __VA_ARGS__}, .ref_kind = k}

static preset_row presets[] = {
    {.info = {"v100", "V100 (sm_70)", "sm_70", 70, 72, 0, LIT,
              "Fasi, Higham, Mikaitis & Pranesh 2021; Khattak & Mikaitis, arXiv:2512.07004; MMA-Sim, arXiv:2511.10909",
              .errk = "7:f16"},
     NV_DEV,
     .mma = {NV("f16", 4, 23, .acc16 = 1, .instr = "HMMA.884 (mma.sync m8n8k4 f16)")}},
    {.info = {"t4", "T4 (sm_75)", "sm_75", 75, 75, 0, LIT,
              "Fasi et al. 2021 (block size 8 not confirmed by them); MMA-Sim, arXiv:2511.10909"},
     NV_DEV, NV_INT,
     .mma = {NV("f16", 8, 24, .acc16 = 1, .instr = "HMMA.1688 (mma.sync m16n8k8 f16)")}},
    {.info = {"a100", "A100 (sm_80)", "sm_80", 80, 88, 0, LIT,
              "Fasi et al. 2021; Khattak & Mikaitis, arXiv:2512.07004; MMA-Sim, arXiv:2511.10909",
              .errk = "8:f16 10:bf16"},
     NV_DEV, NV_INT,
     .mma = {NV("f16", 8, 24, .acc16 = 1, .instr = "HMMA.16816 (mma.sync m16n8k16 f16)"),
             NV("bf16", 8, 24, .instr = "HMMA.16816 (mma.sync m16n8k16 bf16)"),
             NV("tf32 f32", 4, 24, .tf32 = 1, .label = "tf32", .instr = "HMMA.1684 (mma.sync m16n8k8 tf32)"), DMMA}},
    {.info = {"ada", "Ada (sm_89)", "sm_89", 89, 89, 0, LIT,
              "Khattak & Mikaitis, arXiv:2512.07004; MMA-Sim, arXiv:2511.10909", .errk = "3:e4m3"},
     NV_DEV, NV_INT,
     .mma = {NV("f16", 8, 24, .acc16 = 1, .instr = "mma.sync m16n8k16 f16"),
             NV("bf16", 8, 24, .instr = "mma.sync m16n8k16 bf16"),
             NV("tf32 f32", 4, 24, .tf32 = 1, .label = "tf32", .instr = "mma.sync m16n8k8 tf32"),
             NV("e4m3 e5m2", 16, 13, .mant32 = 13, .acc16 = 1, .label = "fp8/fp6/fp4",
                .instr = "mma.sync m16n8k32 e4m3/e5m2"), DMMA}},
    {.info = {"h100", "H100/H200 (sm_90)", "sm_90", 90, 99, 1,
              "measured on H100 80GB HBM3 and H200 (reports/gpu)",
              "reports/gpu/NVIDIA-H100-80GB-HBM3-2026-11-22.md; Khattak & Mikaitis, arXiv:2512.07004; MMA-Sim, "
              "arXiv:2511.10909; DeepSeek-V3 report 3.3.2", .errk = "1:e4m3 2:e4m3:128 9:f16 11:bf16"},
     NV_DEV, NV_INT,
     /* measured on an H100 (reports/gpu; the model's open points,
      * docs/tensor-cores.md): a zero c takes no part in emax, emax is
      * clamped from below at the accumulator's emin - 7 (-133 for f32,
      * -21 for f16), and no result is -0 */
     .zero_c_ignore = 1, .zero_plus = 1, .floor_below_emin = 7,
     .mma = {NV("f16", 16, 25, .acc16 = 1, .instr = "wgmma.mma_async / mma.sync f16"),
             NV("bf16", 16, 25, .instr = "wgmma.mma_async / mma.sync bf16"),
             NV("tf32 f32", 8, 25, .tf32 = 1, .label = "tf32", .instr = "wgmma.mma_async / mma.sync tf32"),
             NV("e4m3 e5m2", 32, 13, .mant32 = 13, .acc16 = 1, .label = "fp8/fp6/fp4",
                .instr = "wgmma.mma_async e4m3/e5m2"), DMMA}},
    {.info = {"b200", "B200 (sm_100)", "sm_100", 100, 129, 0, LIT,
              "Khattak & Mikaitis, arXiv:2512.07004; MMA-Sim, arXiv:2511.10909 (kind::mxf4 group rule)",
              .errk = "4:e4m3"},
     NV_DEV, NV_INT, .group = 16, .group_nfrac = 35, .group_block = 64,
     .mma = {NV("f16", 16, 25, .acc16 = 1, .instr = "tcgen05.mma kind::f16"),
             NV("bf16", 16, 25, .instr = "tcgen05.mma kind::f16 (bf16)"),
             NV("tf32 f32", 8, 25, .tf32 = 1, .label = "tf32", .instr = "tcgen05.mma kind::tf32"),
             NV("e4m3 e5m2 e3m2 e2m3 e2m1", 32, 25, .acc16 = 1, .label = "fp8/fp6/fp4",
                .instr = "tcgen05.mma kind::f8f6f4 / mxf8f6f4 / mxf4"), DMMA}},
    /* AMD CDNA2 (MI200): per MMA-Sim, f16 and bf16 MFMA multiply in f32 with
     * subnormals flushed, add the products in pairs and pairs of pairs (f32,
     * rne, flushed) and add each 4-product sum to the accumulator. */
    {.info = {"mi250", "MI250/MI250X (CDNA2, gfx90a)", "gfx90a (CDNA2)", 0, 0, 0, LIT,
              MMASIM ": mmasim/amd/sim.py, arithmetic/ftz_mul_add.py); AMD Instinct MI200 (CDNA2) ISA "
              "reference guide, MFMA instructions"},
     AMD_DEV, .int_block = 16, .int_instr = "v_mfma_i32_32x32x8i8, v_mfma_i32_16x16x16i8",
     .mma = {CDNA2("f16", .instr = "v_mfma_f32_32x32x8f16, v_mfma_f32_16x16x16f16 (and 4x4x4, 2/4/16-block forms)"),
             CDNA2("bf16", .instr = "v_mfma_f32_32x32x8bf16_1k, v_mfma_f32_16x16x16bf16_1k (the older *bf16 forms "
                                    "add pairs: block=2)"),
             {.inputs = "f64", .label = "f64 (MFMA f64: chain of fma)", .instr = "v_mfma_f64_16x16x4f64",
              .kind = FPEMU_MMA_KIND_FMA_SEQ, .block = 1}}},
    /* AMD CDNA3 (MI300): per MMA-Sim, each group of 8 (f16, bf16), 4 (xf32)
     * or 16 (fp8) products is summed at 24 fraction bits below the products'
     * own emax, cut toward zero; that sum is cut to 31 fraction bits and c to
     * 24 below the larger of the two exponents, both toward -inf (the
     * asymmetric rounding), added, and rounded to nearest-even in f32. fp8
     * sums the even and the odd products separately first. */
    {.info = {"mi300", "MI300X/MI300A (CDNA3, gfx942)", "gfx942 (CDNA3)", 0, 0, 0, LIT,
              MMASIM ": mmasim/amd/sim.py, arithmetic/fdpa.py TR-FDPA/GTR-FDPA); AMD Instinct MI300 (CDNA3) ISA "
              "reference guide, MFMA instructions; LLVM D143956 (fp8 MFMA takes f8E4M3FNUZ/f8E5M2FNUZ)"},
     AMD_DEV, .zero_c_ignore = 1, .int_block = 32, .int_instr = "v_mfma_i32_16x16x32_i8, v_mfma_i32_32x32x16_i8",
     .mma = {CDNA3("f16", 8, .fuse_align = FPEMU_MMA_ALIGN_RD, .instr = "v_mfma_f32_32x32x8_f16, v_mfma_f32_16x16x16_f16"),
             CDNA3("bf16", 8, .fuse_align = FPEMU_MMA_ALIGN_RD, .instr = "v_mfma_f32_32x32x8_bf16, v_mfma_f32_16x16x16_bf16"),
             CDNA3("tf32 f32", 4, .fuse_align = FPEMU_MMA_ALIGN_RD, .tf32 = 1, .label = "xf32", .instr = "v_mfma_f32_16x16x8_xf32, v_mfma_f32_32x32x4_xf32"),
             CDNA3("e4m3fnuz e5m2fnuz", 16, .split = 2, .fuse_align = FPEMU_MMA_ALIGN_RZ, .label = "fp8/bf8",
                   .instr = "v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}, v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}"),
             {.inputs = "f64", .label = "f64 (MFMA f64: chain of fma)", .instr = "v_mfma_f64_16x16x4_f64",
              .kind = FPEMU_MMA_KIND_FMA_SEQ, .block = 1}}},
    REF("exact", "one rounding of the exact sum", FPEMU_MMA_KIND_EXACT, .errk = NULL),
    REF("fma-seq", "sequential fma loop", FPEMU_MMA_KIND_FMA_SEQ, .errk = "5:e4m3 12:bf16", .errk_note = " (f32 CPU loop)"),
    REF("pairwise", "pairwise tree", FPEMU_MMA_KIND_PAIRWISE, .errk = "6:e4m3", .errk_note = " (f32)"),
};
#define NPRESETS ((int)(sizeof presets / sizeof presets[0]))
#define NENTRIES ((int)(sizeof presets[0].mma / sizeof presets[0].mma[0]))

/* ---- derived from the table ---- */

const char *fpemu_mma_preset_names[NPRESETS + 1];
static char derived_inputs[NPRESETS][160], derived_instr[NPRESETS][600];

static int word_in(const char *list, const char *w) {
    size_t n = strlen(w);
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        const char *e = p;
        while (*e && *e != ' ') e++;
        if ((size_t)(e - p) == n && n && !strncmp(p, w, n)) return 1;
        p = e;
    }
    return 0;
}

static void append(char *buf, size_t len, const char *sep, const char *s) {
    size_t o = strlen(buf);
    if (o < len) snprintf(buf + o, len - o, "%s%s", o ? sep : "", s);
}

__attribute__((constructor)) static void presets_init(void) {
    static int done;
    if (done) return;
    for (int i = 0; i < NPRESETS; i++) {
        preset_row *r = &presets[i];
        fpemu_mma_preset_names[i] = r->info.name;
        if (r->info.reference) {
            r->info.inputs = "any";
            r->info.instructions = "none (a CPU algorithm)";
            continue;
        }
        char *in = derived_inputs[i], *ins = derived_instr[i];
        for (int e = 0; e < NENTRIES && r->mma[e].inputs; e++) {
            append(in, sizeof derived_inputs[i], " ", r->mma[e].inputs);
            if (r->mma[e].instr) append(ins, sizeof derived_instr[i], "; ", r->mma[e].instr);
            /* fp8 formats: an 8-bit input with 3 (e4m3-like) or 2 (e5m2-like) mantissa bits */
            const char *p = r->mma[e].inputs;
            while (*p) {
                char w[24];
                size_t n = strcspn(p, " ");
                snprintf(w, sizeof w, "%.*s", (int)(n < 23 ? n : 23), p);
                const fpemu_format *f = fpemu_format_get(w, NULL, 0);
                if (f && f->bits == 8 && f->ebits + f->mbits == 7) {
                    if (f->mbits == 3 && !r->info.fp8_e4m3) r->info.fp8_e4m3 = f->name;
                    if (f->mbits == 2 && !r->info.fp8_e5m2) r->info.fp8_e5m2 = f->name;
                }
                p += n;
                while (*p == ' ') p++;
            }
        }
        if (r->int_inputs) {
            append(in, sizeof derived_inputs[i], " ", r->int_inputs);
            if (r->int_instr) append(ins, sizeof derived_instr[i], "; ", r->int_instr);
        }
        r->info.inputs = in;
        r->info.instructions = ins;
    }
    fpemu_mma_preset_names[NPRESETS] = NULL;
    done = 1;
}

int fpemu_mma_preset_count(void) { return NPRESETS; }

const fpemu_mma_preset_info *fpemu_mma_preset_get(int i) {
    presets_init();
    return i >= 0 && i < NPRESETS ? &presets[i].info : NULL;
}

static const preset_row *find_row(const char *name) {
    presets_init();
    for (int i = 0; name && i < NPRESETS; i++) if (!strcmp(presets[i].info.name, name)) return &presets[i];
    return NULL;
}

const fpemu_mma_preset_info *fpemu_mma_preset_find(const char *name) {
    const preset_row *r = find_row(name);
    return r ? &r->info : NULL;
}

const char *fpemu_mma_preset_for_cc(int cc) {
    for (int i = 0; i < NPRESETS; i++)
        if (presets[i].info.cc_min > 0 && cc >= presets[i].info.cc_min && cc <= presets[i].info.cc_max)
            return presets[i].info.name;
    return NULL;
}

const char *fpemu_mma_preset_list(char *buf, size_t len, const char *sep) {
    if (!len) return buf;
    buf[0] = 0;
    for (int i = 0; i < NPRESETS; i++) append(buf, len, sep, presets[i].info.name);
    return buf;
}

int fpemu_mma_is_preset_file(const char *s) {
    size_t n = s ? strlen(s) : 0;
    return n && (strchr(s, '/') || (n > 7 && !strcmp(s + n - 7, ".preset")));
}

/* "f16, bf16, tf32/f32, ...": the inputs of a row's entries */
static const char *supported_list(const preset_row *r, char *buf, size_t len) {
    buf[0] = 0;
    for (int e = 0; e < NENTRIES && r->mma[e].inputs; e++) {
        char w[64];
        snprintf(w, sizeof w, "%s", r->mma[e].inputs);
        for (char *p = w; *p; p++) if (*p == ' ') *p = '/';
        append(buf, len, ", ", w);
    }
    return buf;
}

static void copy_origin(fpemu_mma_model *m, const preset_row *r) {
    snprintf(m->status, sizeof m->status, "%s", r->info.status);
    snprintf(m->source, sizeof m->source, "%s", r->info.sources);
}

int fpemu_mma_model_preset(fpemu_mma_model *m, const char *name, const fpemu_format *fa, const fpemu_format *fb,
                           const fpemu_format *fc, const fpemu_format *fd, char *err, size_t errlen) {
    if (fpemu_mma_is_preset_file(name)) {
        char *text = NULL;
        if (fpemu_mma_preset_read(name, &text, err, errlen)) return -1;
        int rc = fpemu_mma_model_parse(m, text, name, fa, fb, fc, fd, err, errlen);
        free(text);
        return rc;
    }
    memset(m, 0, sizeof *m);
    if (!name) name = "";
    const fpemu_format *f32 = fmt("f32"), *f16 = fmt("f16");
    if (!fc) fc = fd ? fd : f32;
    if (!fd) fd = fc;
    if (!fa || !fb) {
        if (err) snprintf(err, errlen, "model %s: input formats are required", name);
        return -1;
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    m->fa = fa, m->fb = fb, m->fc = fc, m->fd = fd;
    m->zero_c = 1;
    m->zero_product = 0;
    m->out_mant = fd->mbits;
    m->out_round = FPEMU_RNE;
    const preset_row *row = find_row(name);
    if (!row) {
        char list[400];
        if (err) snprintf(err, errlen, "unknown model '%s' (expected one of: %s, or a preset file: a path with a '/' "
                          "or ending in .preset)", name, fpemu_mma_preset_list(list, sizeof list, ", "));
        return -1;
    }
    copy_origin(m, row);
    if (row->info.reference) {
        m->kind = row->ref_kind;
        snprintf(m->device, sizeof m->device, "%s", row->info.device);
        m->block = m->kind == FPEMU_MMA_KIND_FMA_SEQ ? 1 : 0;
        if (fa->nan == FPEMU_NANS_ALLONES || fb->nan == FPEMU_NANS_ALLONES) {
            if (err) snprintf(err, errlen, "model %s: %s/%s cannot be dot-product inputs (scale-only format)", name, fa->name, fb->name);
            return -1;
        }
        return fpemu_mma_model_finish(m, err, errlen);
    }
    char sup[200];
    supported_list(row, sup, sizeof sup);
    const preset_mma *e = NULL;
    for (int i = 0; i < NENTRIES && row->mma[i].inputs && !e; i++)
        if (word_in(row->mma[i].inputs, fa->name) && word_in(row->mma[i].inputs, fb->name)) e = &row->mma[i];
    if (!e) {
        if (err) snprintf(err, errlen, "model %s has no MMA for %s x %s inputs (supported: %s)", name, fa->name, fb->name, sup);
        return -1;
    }
    if (e->kind == FPEMU_MMA_KIND_FMA_SEQ) { /* f64: a chain of IEEE fma */
        if (strcmp(fc->name, fa->name) || strcmp(fd->name, fa->name)) {
            if (err) snprintf(err, errlen, "model %s: %s inputs need %s c and d (%s)", name, fa->name, fa->name, e->label);
            return -1;
        }
        m->kind = FPEMU_MMA_KIND_FMA_SEQ;
        m->block = 1;
        snprintf(m->device, sizeof m->device, "%s %s", name, e->label);
        return fpemu_mma_model_finish(m, err, errlen);
    }
    int out16 = fd == f16 || !strcmp(fd->name, "f16");
    int out32 = fd == f32 || !strcmp(fd->name, "f32");
    int c_ok = !strcmp(fc->name, "f32") || (row->c16 && !strcmp(fc->name, "f16"));
    if (!c_ok || !(out32 || (out16 && e->acc16))) {
        if (err) snprintf(err, errlen, "model %s: %s x %s inputs accumulate into %s (c and d), not %s/%s",
                          name, fa->name, fb->name, e->acc16 ? "f32 or f16" : "f32", fc->name, fd->name);
        return -1;
    }
    m->kind = e->kind;
    snprintf(m->device, sizeof m->device, "%.34s %.12s", row->info.device, e->label ? e->label : fa->name);
    m->block = e->block;
    m->tf32_truncate = e->tf32;
    if (out16) {
        m->out_round = FPEMU_RNE;
        m->out_mant = fd->mbits;
    } else {
        m->out_round = e->round32;
        m->out_mant = e->mant32 ? e->mant32 : fd->mbits;
    }
    if (e->kind == FPEMU_MMA_KIND_PAIRWISE) { /* CDNA2 */
        m->ftz = e->ftz;
        m->flush_subnormals = e->ftz;
        return fpemu_mma_model_finish(m, err, errlen);
    }
    m->nfrac = e->nfrac;
    m->align = row->align;
    m->norm = FPEMU_MMA_NORM_END;
    m->chain = FPEMU_MMA_CHAIN_ROUNDED;
    m->fuse_nfrac = e->fuse_nfrac, m->split = e->split, m->fuse_align = e->fuse_align;
    m->overflow_inf = row->overflow_inf;
    m->nan_allones = row->nan_allones;
    m->zero_c = !row->zero_c_ignore;
    m->zero_plus = row->zero_plus;
    if (row->floor_below_emin > 0) m->has_emax_floor = 1, m->emax_floor = fd->emin - row->floor_below_emin;
    m->group = row->group, m->group_nfrac = row->group_nfrac, m->group_block = row->group_block;
    return fpemu_mma_model_finish(m, err, errlen);
}

int fpemu_mma_model_preset_int(fpemu_mma_model *m, const char *name, int a_signed, int b_signed, int saturate, char *err,
                               size_t errlen) {
    if (fpemu_mma_is_preset_file(name)) {
        char *text = NULL;
        if (fpemu_mma_preset_read(name, &text, err, errlen)) return -1;
        int rc = fpemu_mma_model_parse_int(m, text, name, a_signed, b_signed, saturate, err, errlen);
        free(text);
        return rc;
    }
    memset(m, 0, sizeof *m);
    const preset_row *row = find_row(name);
    int exact = name && !strcmp(name, "exact");
    if (!row || (row->info.reference && !exact)) {
        char list[300] = "";
        for (int i = 0; i < NPRESETS; i++) if (presets[i].int_inputs) append(list, sizeof list, ", ", presets[i].info.name);
        if (err) snprintf(err, errlen, "unknown model '%s' for integer MMA (expected %s or exact)", name ? name : "", list);
        return -1;
    }
    if (!exact) {
        if (!row->int_inputs) {
            if (err) snprintf(err, errlen, "model %s has no integer MMA", name);
            return -1;
        }
        if ((!a_signed && !word_in(row->int_inputs, "u8")) || (!b_signed && !word_in(row->int_inputs, "u8"))) {
            if (err) snprintf(err, errlen, "model %s: integer MMA takes %s inputs only", name, row->int_inputs);
            return -1;
        }
        if (saturate && !row->int_sat) {
            if (err) snprintf(err, errlen, "model %s: its integer MMA wraps (no saturating form is documented)", name);
            return -1;
        }
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->device, sizeof m->device, "%s s8/u8 (exact int32)", name);
    copy_origin(m, row);
    m->kind = FPEMU_MMA_KIND_INT;
    m->a_signed = a_signed, m->b_signed = b_signed, m->int_sat = saturate;
    m->block = exact ? 0 : row->int_block; /* products per instruction (NVIDIA mma.sync m16n8k32: 32) */
    return 0;
}

int fpemu_mma_preset_fp8(const char *name, const char **e4m3, const char **e5m2, char *err, size_t errlen) {
    *e4m3 = *e5m2 = NULL;
    if (fpemu_mma_is_preset_file(name)) {
        /* a file: its fp8 inputs (the 8-bit formats it binds) */
        char *text = NULL;
        if (fpemu_mma_preset_read(name, &text, err, errlen)) return -1;
        static const char *const cands[] = {"e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", NULL};
        for (int i = 0; cands[i]; i++) {
            const fpemu_format *f = fmt(cands[i]);
            fpemu_mma_model t;
            if (!f || fpemu_mma_model_parse(&t, text, name, f, f, NULL, NULL, NULL, 0)) continue;
            if (f->mbits == 3 && !*e4m3) *e4m3 = f->name;
            if (f->mbits == 2 && !*e5m2) *e5m2 = f->name;
        }
        free(text);
        return 0;
    }
    const preset_row *r = find_row(name);
    if (!r) {
        char list[400];
        if (err) snprintf(err, errlen, "unknown model '%s' (expected one of: %s)", name ? name : "",
                          fpemu_mma_preset_list(list, sizeof list, ", "));
        return -1;
    }
    *e4m3 = r->info.fp8_e4m3;
    *e5m2 = r->info.fp8_e5m2;
    return 0;
}

int fpemu_mma_model_check_name(const char *name, char *err, size_t errlen) {
    if (fpemu_mma_is_preset_file(name)) {
        char *text = NULL;
        if (fpemu_mma_preset_read(name, &text, err, errlen)) return -1;
        free(text);
        return 0;
    }
    if (find_row(name)) return 0;
    char list[400];
    if (err) snprintf(err, errlen, "unknown model '%s' (expected one of: %s, or a preset file)", name ? name : "",
                      fpemu_mma_preset_list(list, sizeof list, ", "));
    return -1;
}

/* Every binding of a row, for fpemu_mma_preset_format: calls fn for each
 * (fa, fb, fc, fd) the row takes. */
int emu__mma_preset_bindings(const char *name, void (*fn)(void *, const fpemu_format *, const fpemu_format *,
                                                             const fpemu_format *, const fpemu_format *),
                             void *user) {
    const preset_row *r = find_row(name);
    if (!r) return -1;
    static const char *const any[] = {"f16", "bf16", "tf32", "f32", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz",
                                      "e3m2", "e2m3", "e2m1", "f64", NULL};
    static const char *const accs[] = {"f32", "f16", "f64", NULL};
    for (int i = 0; any[i]; i++)
        for (int j = 0; any[j]; j++)
            for (int c = 0; accs[c]; c++)
                for (int d = 0; accs[d]; d++) {
                    fpemu_mma_model t;
                    const fpemu_format *fa = fmt(any[i]), *fb = fmt(any[j]), *fc = fmt(accs[c]), *fd = fmt(accs[d]);
                    if (!fa || !fb || !fc || !fd) continue;
                    if (fpemu_mma_model_preset(&t, name, fa, fb, fc, fd, NULL, 0)) continue;
                    fn(user, fa, fb, fc, fd);
                }
    return 0;
}

/* ---- options ------------------------------------------------------------- */

static int parse_int(const char *s, int *out) {
    char *e;
    long v = strtol(s, &e, 10);
    if (!*s || *e || v < INT_MIN / 2 || v > INT_MAX / 2) return -1;
    *out = (int)v;
    return 0;
}

/* Edits a copy, validated by fpemu_mma_model_finish: on failure *m is unchanged. */
int fpemu_mma_model_set(fpemu_mma_model *m_out, const char *key, const char *value, char *err, size_t errlen) {
    int v;
    fpemu_mma_model copy = *m_out, *m = &copy;
#define BAD(...) do { if (err) snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
    if (!key || !value) BAD("fpemu_mma_model_set: key and value are required");
    if (m->kind == FPEMU_MMA_KIND_INT && strcmp(key, "block"))
        BAD("option %s: integer models take block only", key);
    if (!strcmp(key, "block")) {
        if (parse_int(value, &v) || v < 0) BAD("option block: expected an integer >= 0, got '%s'", value);
        m->block = v;
    } else if (!strcmp(key, "nfrac")) {
        if (parse_int(value, &v) || v < 1 || v > 60) BAD("option nfrac: expected an integer in [1, 60], got '%s'", value);
        m->nfrac = v;
    } else if (!strcmp(key, "align")) {
        if (!strcmp(value, "rz")) m->align = FPEMU_MMA_ALIGN_RZ;
        else if (!strcmp(value, "rd")) m->align = FPEMU_MMA_ALIGN_RD;
        else BAD("option align: expected rz or rd, got '%s'", value);
    } else if (!strcmp(key, "normalize")) {
        if (!strcmp(value, "end")) m->norm = FPEMU_MMA_NORM_END;
        else if (!strcmp(value, "each")) m->norm = FPEMU_MMA_NORM_EACH;
        else BAD("option normalize: expected end or each, got '%s'", value);
    } else if (!strcmp(key, "chain")) {
        if (!strcmp(value, "rounded")) m->chain = FPEMU_MMA_CHAIN_ROUNDED;
        else if (!strcmp(value, "f32-add") || !strcmp(value, "add")) m->chain = FPEMU_MMA_CHAIN_F32_ADD;
        else BAD("option chain: expected rounded or f32-add, got '%s'", value);
    } else if (!strcmp(key, "out_round")) {
        int r = fpemu_round_parse(value);
        if (r < 0 || r == FPEMU_SR) BAD("option out_round: expected rne, rna, rtz, rup, rdn or rto, got '%s'", value);
        m->out_round = (fpemu_round)r;
    } else if (!strcmp(key, "out_mant")) {
        if (parse_int(value, &v)) BAD("option out_mant: expected an integer, got '%s'", value);
        m->out_mant = v;
    } else if (!strcmp(key, "subnormals")) {
        if (!strcmp(value, "keep") || !strcmp(value, "kept")) m->flush_subnormals = 0;
        else if (!strcmp(value, "flush") || !strcmp(value, "flushed")) m->flush_subnormals = 1;
        else BAD("option subnormals: expected keep or flush, got '%s'", value);
    } else if (!strcmp(key, "tf32_truncate")) {
        if (parse_int(value, &v) || (v != 0 && v != 1)) BAD("option tf32_truncate: expected 0 or 1, got '%s'", value);
        m->tf32_truncate = v;
    } else if (!strcmp(key, "emax_floor")) {
        if (!strcmp(value, "none")) m->has_emax_floor = 0;
        else if (parse_int(value, &v)) BAD("option emax_floor: expected none or an integer, got '%s'", value);
        else m->has_emax_floor = 1, m->emax_floor = v;
    } else if (!strcmp(key, "overflow")) {
        if (!strcmp(value, "inf")) m->overflow_inf = 1;
        else if (!strcmp(value, "max")) m->overflow_inf = 0;
        else BAD("option overflow: expected inf or max, got '%s'", value);
    } else if (!strcmp(key, "zero_c") || !strcmp(key, "zero_product")) {
        int *dst = !strcmp(key, "zero_c") ? &m->zero_c : &m->zero_product;
        if (!strcmp(value, "emin")) *dst = 1;
        else if (!strcmp(value, "ignore")) *dst = 0;
        else BAD("option %s: expected emin or ignore, got '%s'", key, value);
    } else if (!strcmp(key, "zero_sign")) {
        if (!strcmp(value, "ieee")) m->zero_plus = 0;
        else if (!strcmp(value, "plus")) m->zero_plus = 1;
        else BAD("option zero_sign: expected ieee or plus, got '%s'", value);
    } else if (!strcmp(key, "nan")) {
        if (!strcmp(value, "allones")) m->nan_allones = 1;
        else if (!strcmp(value, "canonical")) m->nan_allones = 0;
        else BAD("option nan: expected allones or canonical, got '%s'", value);
    } else if (!strcmp(key, "group")) {
        if (parse_int(value, &v) || v < 0 || v > 64) BAD("option group: expected an integer in [0, 64], got '%s'", value);
        m->group = v;
        if (v && !m->group_block) m->group_block = 64;
        if (v && !m->group_nfrac) m->group_nfrac = 35;
    } else if (!strcmp(key, "group_nfrac")) {
        if (parse_int(value, &v) || v < 1 || v > 60) BAD("option group_nfrac: expected an integer in [1, 60], got '%s'", value);
        m->group_nfrac = v;
    } else if (!strcmp(key, "group_block")) {
        if (parse_int(value, &v) || v < 1) BAD("option group_block: expected an integer >= 1, got '%s'", value);
        m->group_block = v;
    } else if (!strcmp(key, "fuse_nfrac")) {
        if (parse_int(value, &v) || v < 0 || v > 60) BAD("option fuse_nfrac: expected 0 (off) or an integer in [nfrac, 60], got '%s'", value);
        m->fuse_nfrac = v;
    } else if (!strcmp(key, "fuse_align")) {
        if (!strcmp(value, "rz")) m->fuse_align = FPEMU_MMA_ALIGN_RZ;
        else if (!strcmp(value, "rd")) m->fuse_align = FPEMU_MMA_ALIGN_RD;
        else BAD("option fuse_align: expected rz or rd, got '%s'", value);
    } else if (!strcmp(key, "split")) {
        if (parse_int(value, &v) || v < 1 || v > 2) BAD("option split: expected 1 or 2, got '%s'", value);
        m->split = v == 1 ? 0 : v;
    } else if (!strcmp(key, "ftz")) {
        if (parse_int(value, &v) || (v != 0 && v != 1)) BAD("option ftz: expected 0 or 1, got '%s'", value);
        m->ftz = v;
    } else {
        BAD("unknown model option '%s' (expected block, nfrac, align, normalize, chain, out_round, out_mant, "
            "subnormals, tf32_truncate, emax_floor, overflow, zero_c, zero_product, zero_sign, nan, group, group_nfrac, "
            "group_block, fuse_nfrac, fuse_align, split, ftz)", key);
    }
#undef BAD
    if (fpemu_mma_model_finish(m, err, errlen)) return -1;
    *m_out = copy;
    return 0;
}

int fpemu_mma_model_describe(const fpemu_mma_model *m, char *buf, size_t len) {
    static const char *kinds[] = {"block-fma", "exact", "fma-seq", "pairwise", "int"};
    const char *kind = (unsigned)m->kind <= FPEMU_MMA_KIND_INT ? kinds[m->kind] : "?";
    if (m->kind == FPEMU_MMA_KIND_INT)
        return snprintf(buf, len, "model=%s kind=int a=%s b=%s acc=int32 %s block=%d", m->name,
                        m->a_signed ? "s8" : "u8", m->b_signed ? "s8" : "u8", m->int_sat ? "satfinite" : "wrap",
                        m->block);
    char floor[24], extra[96] = "";
    if (m->has_emax_floor) snprintf(floor, sizeof floor, "%d", m->emax_floor);
    else snprintf(floor, sizeof floor, "none");
    /* the two-stage and ftz parameters appear only when set (the lines of
     * the other presets stay as they were) */
    if (m->fuse_nfrac || m->split == 2 || m->ftz)
        snprintf(extra, sizeof extra, " fuse_nfrac=%d fuse_align=%s split=%d ftz=%d", m->fuse_nfrac,
                 m->fuse_align == FPEMU_MMA_ALIGN_RD ? "rd" : "rz", m->split == 2 ? 2 : 1, m->ftz);
    return snprintf(buf, len,
                    "model=%s kind=%s a=%s b=%s c=%s d=%s block=%d nfrac=%d align=%s normalize=%s chain=%s "
                    "out_round=%s out_mant=%d subnormals=%s tf32_truncate=%d emax_floor=%s overflow=%s "
                    "zero_c=%s zero_product=%s zero_sign=%s group=%d%s",
                    m->name, kind, m->fa ? m->fa->name : "?", m->fb ? m->fb->name : "?", m->fc ? m->fc->name : "?",
                    m->fd ? m->fd->name : "?", m->block,
                    m->kind == FPEMU_MMA_KIND_BLOCK ? m->nfrac : -1, m->align == FPEMU_MMA_ALIGN_RD ? "rd" : m->align == FPEMU_MMA_ALIGN_RZ ? "rz" : "?",
                    m->norm == FPEMU_MMA_NORM_EACH ? "each" : m->norm == FPEMU_MMA_NORM_END ? "end" : "?",
                    m->chain == FPEMU_MMA_CHAIN_F32_ADD ? "f32-add" : m->chain == FPEMU_MMA_CHAIN_ROUNDED ? "rounded" : "?",
                    fpemu_round_name(m->out_round), m->out_mant, m->flush_subnormals ? "flush" : "keep",
                    m->tf32_truncate, floor, m->overflow_inf ? "inf" : "max", m->zero_c ? "emin" : "ignore",
                    m->zero_product ? "emin" : "ignore", m->zero_plus ? "plus" : "ieee", m->group, extra);
}
