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

static uint64_t block_sum_src(run_state *rs, const block_src *src, term *buf, size_t cap, size_t n, int nfrac) {
    const fpemu_mma_model *m = rs->m;
    pieces p;
    pieces_init(&p, src, buf, cap, n);
    bscan s = {{0, 0, 0}, INT_MIN, 1};
    for (size_t j0 = 0; j0 < n; j0 += p.step) {
        size_t cn = piece_at(&p, j0);
        bs_scan(m, buf, cn, j0, &s);
    }
    int sgn = 0, sp = specials_class(&s.sp, &sgn);
    if (sp == CL_NAN) return nan_code(m, m->fd);
    if (sp == CL_INF) return inf_code(m->fd, sgn);
    if (s.emax == INT_MIN) /* every term zero and none counts */
        return zero_result(rs, s.allneg);
    int emax = s.emax;
    if (m->has_emax_floor && emax < m->emax_floor) emax = m->emax_floor;
    const int q = emax - nfrac; /* the alignment quantum is 2^q */
    i128 sum = 0;
    int anynz = 0;
    for (size_t j0 = 0; j0 < n; j0 += p.step) {
        size_t cn = piece_at(&p, j0);
        bs_accum(m, buf, cn, q, &sum, &anynz);
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
     * (f64): use it unless flags are wanted. */
    if (!in->sfmt && !flags && m->out_round == FPEMU_RNE && !m->flush_subnormals) {
        if (is_f32(m->fd) && emu__fits_f32(m->fa) && emu__fits_f32(m->fb) && emu__fits_f32(m->fc)) {
            float d = (float)fpemu_to_double(m->fc, c);
            for (size_t i = 0; i < k; i++)
                d = fmaf((float)fpemu_to_double(m->fa, in->a[i]), (float)fpemu_to_double(m->fb, in->b[i]), d);
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
            for (size_t i = 0; i < k; i++) {
                memcpy(&x, &in->a[i], 8), memcpy(&y, &in->b[i], 8);
                d = fma(x, y, d);
            }
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

/* Pairwise tree over the exact products [lo, hi); internal sums rounded. */
static void pairwise_rec(const fpemu_mma_model *m, const dot_in *in, size_t lo, size_t hi, fpemu_ctx *ctx, term *out) {
    if (hi - lo == 1) { product(in, lo, out); return; }
    size_t mid = lo + (hi - lo) / 2;
    term l, r;
    pairwise_rec(m, in, lo, mid, ctx, &l);
    pairwise_rec(m, in, mid, hi, ctx, &r);
    uint64_t s = add_round(m, m->fd, &l, &r, ctx);
    decode(m->fd, s, 0, 0, out);
}

static uint64_t dot_pairwise(const fpemu_mma_model *m, const dot_in *in, size_t k, uint64_t c, unsigned *flags) {
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

const char *const fpemu_mma_preset_names[] = {"v100", "t4", "a100", "ada", "h100", "b200",
                                        "exact", "fma-seq", "pairwise", NULL};

enum { IN_F16 = 1, IN_BF16 = 2, IN_TF32 = 4, IN_FP8 = 8, IN_FP6FP4 = 16, IN_F64 = 32, IN_OTHER = 64 };

static int input_class(const fpemu_format *f) {
    const char *n = f->name;
    if (!strcmp(n, "f16")) return IN_F16;
    if (!strcmp(n, "bf16")) return IN_BF16;
    if (!strcmp(n, "tf32") || !strcmp(n, "f32")) return IN_TF32;
    if (!strcmp(n, "e4m3") || !strcmp(n, "e5m2")) return IN_FP8;
    if (!strcmp(n, "e3m2") || !strcmp(n, "e2m3") || !strcmp(n, "e2m1")) return IN_FP6FP4;
    if (!strcmp(n, "f64")) return IN_F64;
    return IN_OTHER;
}

typedef struct {
    const char *name, *device;
    int inputs;          /* IN_* mask this row covers */
    int block, nfrac, fp8_mant; /* fp8_mant: f32 output mantissa bits (13 or 23) */
} preset_row;

static const preset_row presets[] = {
    {"v100", "V100 (sm_70)", IN_F16, 4, 23, 23},
    {"t4", "T4 (sm_75)", IN_F16, 8, 24, 23},
    {"a100", "A100 (sm_80)", IN_F16 | IN_BF16, 8, 24, 23},
    {"a100", "A100 (sm_80)", IN_TF32, 4, 24, 23},
    {"ada", "Ada (sm_89)", IN_F16 | IN_BF16, 8, 24, 23},
    {"ada", "Ada (sm_89)", IN_TF32, 4, 24, 23},
    {"ada", "Ada (sm_89)", IN_FP8, 16, 13, 13},
    {"h100", "H100/H200 (sm_90)", IN_F16 | IN_BF16, 16, 25, 23},
    {"h100", "H100/H200 (sm_90)", IN_TF32, 8, 25, 23},
    {"h100", "H100/H200 (sm_90)", IN_FP8, 32, 13, 13},
    {"b200", "B200 (sm_100)", IN_F16 | IN_BF16, 16, 25, 23},
    {"b200", "B200 (sm_100)", IN_TF32, 8, 25, 23},
    {"b200", "B200 (sm_100)", IN_FP8 | IN_FP6FP4, 32, 25, 23},
};
#define NPRESETS ((int)(sizeof presets / sizeof presets[0]))

static const char *supported_list(const char *name, char *buf, size_t len) {
    buf[0] = 0;
    size_t o = 0;
    static const char *cls_names[] = {"f16", "bf16", "tf32 (or f32, truncated)", "e4m3/e5m2", "e3m2/e2m3/e2m1", "f64"};
    int mask = 0;
    for (int i = 0; i < NPRESETS; i++) if (!strcmp(presets[i].name, name)) mask |= presets[i].inputs;
    if (strcmp(name, "v100") && strcmp(name, "t4")) mask |= IN_F64;
    for (int b = 0; b < 6; b++)
        if (mask & (1 << b)) o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? ", " : "", cls_names[b]);
    return buf;
}

static int is_device(const char *name) {
    for (int i = 0; i < NPRESETS; i++) if (!strcmp(presets[i].name, name)) return 1;
    return 0;
}

int fpemu_mma_model_preset(fpemu_mma_model *m, const char *name, const fpemu_format *fa, const fpemu_format *fb,
                           const fpemu_format *fc, const fpemu_format *fd, char *err, size_t errlen) {
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
    if (!strcmp(name, "exact") || !strcmp(name, "fma-seq") || !strcmp(name, "pairwise")) {
        m->kind = !strcmp(name, "exact") ? FPEMU_MMA_KIND_EXACT : !strcmp(name, "fma-seq") ? FPEMU_MMA_KIND_FMA_SEQ : FPEMU_MMA_KIND_PAIRWISE;
        snprintf(m->device, sizeof m->device, "%s", !strcmp(name, "exact") ? "one rounding of the exact sum"
                                                    : !strcmp(name, "fma-seq") ? "sequential fma loop" : "pairwise tree");
        m->block = m->kind == FPEMU_MMA_KIND_FMA_SEQ ? 1 : 0;
        if (fa->nan == FPEMU_NANS_ALLONES || fb->nan == FPEMU_NANS_ALLONES) {
            if (err) snprintf(err, errlen, "model %s: %s/%s cannot be dot-product inputs (scale-only format)", name, fa->name, fb->name);
            return -1;
        }
        return fpemu_mma_model_finish(m, err, errlen);
    }
    if (!is_device(name)) {
        char list[200] = "";
        size_t o = 0;
        for (int i = 0; fpemu_mma_preset_names[i]; i++) o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", fpemu_mma_preset_names[i]);
        if (err) snprintf(err, errlen, "unknown model '%s' (expected one of: %s)", name, list);
        return -1;
    }
    int ca = input_class(fa), cb = input_class(fb);
    char sup[200];
    supported_list(name, sup, sizeof sup);
    /* DMMA: a chain of IEEE fma in f64 */
    if (ca == IN_F64 || cb == IN_F64) {
        if (!strcmp(name, "v100") || !strcmp(name, "t4") || ca != cb) {
            if (err) snprintf(err, errlen, "model %s has no MMA for %s x %s inputs (supported: %s)", name, fa->name, fb->name, sup);
            return -1;
        }
        if (strcmp(fc->name, "f64") || strcmp(fd->name, "f64")) {
            if (err) snprintf(err, errlen, "model %s: f64 inputs need f64 c and d (DMMA)", name);
            return -1;
        }
        m->kind = FPEMU_MMA_KIND_FMA_SEQ;
        m->block = 1;
        snprintf(m->device, sizeof m->device, "%s f64 (DMMA: chain of fma)", name);
        return fpemu_mma_model_finish(m, err, errlen);
    }
    const preset_row *row = NULL;
    for (int i = 0; i < NPRESETS; i++) {
        if (strcmp(presets[i].name, name)) continue;
        if ((presets[i].inputs & ca) && (presets[i].inputs & cb)) {
            /* f16 and bf16 do not mix; tf32 only with tf32; fp8/fp6/fp4 mix on b200 */
            if ((ca | cb) == (IN_F16 | IN_BF16)) continue;
            row = &presets[i];
            break;
        }
    }
    if (!row) {
        if (err) snprintf(err, errlen, "model %s has no MMA for %s x %s inputs (supported: %s)", name, fa->name, fb->name, sup);
        return -1;
    }
    int out16 = fd == f16 || !strcmp(fd->name, "f16");
    int out32 = fd == f32 || !strcmp(fd->name, "f32");
    int c_ok = !strcmp(fc->name, "f16") || !strcmp(fc->name, "f32");
    int f16_acc_ok = (ca & (IN_F16 | IN_FP8 | IN_FP6FP4)) && (cb & (IN_F16 | IN_FP8 | IN_FP6FP4));
    if (!c_ok || !(out32 || (out16 && f16_acc_ok))) {
        if (err) snprintf(err, errlen, "model %s: %s x %s inputs accumulate into %s (c and d), not %s/%s",
                          name, fa->name, fb->name, f16_acc_ok ? "f32 or f16" : "f32", fc->name, fd->name);
        return -1;
    }
    m->kind = FPEMU_MMA_KIND_BLOCK;
    snprintf(m->device, sizeof m->device, "%.24s %.12s", row->device, (ca & IN_TF32) ? "tf32" : (ca & IN_FP8) || (ca & IN_FP6FP4) ? "fp8/fp6/fp4" : fa->name);
    m->block = row->block;
    m->nfrac = row->nfrac;
    m->align = FPEMU_MMA_ALIGN_RZ;
    m->norm = FPEMU_MMA_NORM_END;
    m->chain = FPEMU_MMA_CHAIN_ROUNDED;
    m->tf32_truncate = (ca == IN_TF32);
    m->overflow_inf = 1;
    m->nan_allones = 1;
    if (out16) {
        m->out_round = FPEMU_RNE;
        m->out_mant = fd->mbits;
    } else {
        m->out_round = FPEMU_RTZ;
        m->out_mant = (ca & IN_FP8) ? row->fp8_mant : 23;
    }
    if (!strcmp(name, "b200")) m->group = 16, m->group_nfrac = 35, m->group_block = 64;
    if (!strcmp(name, "h100")) {
        /* measured on an H100 (reports/gpu; the model's open points,
         * docs/tensor-cores.md): a zero c takes no part in emax, emax is
         * clamped from below at -133 for f32 accumulators and -21 for f16 ones (the
         * accumulator's emin - 7 both times), and no result is -0 */
        m->zero_c = 0;
        m->has_emax_floor = 1, m->emax_floor = out16 ? -21 : -133;
        m->zero_plus = 1;
    }
    return fpemu_mma_model_finish(m, err, errlen);
}

int fpemu_mma_model_preset_int(fpemu_mma_model *m, const char *name, int a_signed, int b_signed, int saturate, char *err,
                               size_t errlen) {
    memset(m, 0, sizeof *m);
    if (!name || (!is_device(name) && strcmp(name, "exact"))) {
        if (err) snprintf(err, errlen, "unknown model '%s' for integer MMA (expected t4, a100, ada, h100, b200 or exact)", name ? name : "");
        return -1;
    }
    if (!strcmp(name, "v100")) {
        if (err) snprintf(err, errlen, "model v100 has no integer MMA (IMMA needs sm_72+)");
        return -1;
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->device, sizeof m->device, "%s s8/u8 (exact int32)", name);
    m->kind = FPEMU_MMA_KIND_INT;
    m->a_signed = a_signed, m->b_signed = b_signed, m->int_sat = saturate;
    m->block = strcmp(name, "exact") ? 32 : 0; /* mma.sync m16n8k32: 32 products per instruction */
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
    } else {
        BAD("unknown model option '%s' (expected block, nfrac, align, normalize, chain, out_round, out_mant, "
            "subnormals, tf32_truncate, emax_floor, overflow, zero_c, zero_product, zero_sign, nan, group, group_nfrac, "
            "group_block)", key);
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
    char floor[24];
    if (m->has_emax_floor) snprintf(floor, sizeof floor, "%d", m->emax_floor);
    else snprintf(floor, sizeof floor, "none");
    return snprintf(buf, len,
                    "model=%s kind=%s a=%s b=%s c=%s d=%s block=%d nfrac=%d align=%s normalize=%s chain=%s "
                    "out_round=%s out_mant=%d subnormals=%s tf32_truncate=%d emax_floor=%s overflow=%s "
                    "zero_c=%s zero_product=%s zero_sign=%s group=%d",
                    m->name, kind, m->fa ? m->fa->name : "?", m->fb ? m->fb->name : "?", m->fc ? m->fc->name : "?",
                    m->fd ? m->fd->name : "?", m->block,
                    m->kind == FPEMU_MMA_KIND_BLOCK ? m->nfrac : -1, m->align == FPEMU_MMA_ALIGN_RD ? "rd" : m->align == FPEMU_MMA_ALIGN_RZ ? "rz" : "?",
                    m->norm == FPEMU_MMA_NORM_EACH ? "each" : m->norm == FPEMU_MMA_NORM_END ? "end" : "?",
                    m->chain == FPEMU_MMA_CHAIN_F32_ADD ? "f32-add" : m->chain == FPEMU_MMA_CHAIN_ROUNDED ? "rounded" : "?",
                    fpemu_round_name(m->out_round), m->out_mant, m->flush_subnormals ? "flush" : "keep",
                    m->tf32_truncate, floor, m->overflow_inf ? "inf" : "max", m->zero_c ? "emin" : "ignore",
                    m->zero_product ? "emin" : "ignore", m->zero_plus ? "plus" : "ieee", m->group);
}
