/* SPDX-License-Identifier: MIT */
/* ref.c: the MPFR reference for every scalar operation (see ref.h for the
 * recipe). Semantics: IEEE 754-2019 clauses 4 and 7, extended to the small
 * formats as docs/semantics.md describes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ref.h"

/* The "unbounded" exponent range every operation is computed in: wide
 * enough that no finite operation on f64 values (products of two min
 * subnormals, 2^-2148; quotients up to 2^2098) over- or underflows. */
#if GMP_NUMB_BITS != 64
#error "ref/ needs 64-bit GMP limbs (encode/load read one limb)"
#endif

/* sr: bits kept below the result's precision, enough for a 64-bit draw
 * (R <= 64) with two to spare; whatever lies below is the ternary's. */
#define SR_EXTRA 66

#define REF_EMIN_WIDE ((mpfr_exp_t)-(1L << 20))
#define REF_EMAX_WIDE ((mpfr_exp_t)(1L << 20))

int ref_op_arity(ref_opcode op) {
    switch (op) {
    case REF_SQRT:
    case REF_CONVERT: return 1;
    case REF_FMA: return 3;
    default: return 2;
    }
}

const char *ref_op_name(ref_opcode op) {
    static const char *const names[REF_OP_COUNT] = {"add", "sub", "mul", "div", "sqrt", "mulAdd", "to"};
    return (unsigned)op < REF_OP_COUNT ? names[op] : "?";
}

int ref_thread_safe(void) { return mpfr_buildopt_tls_p(); }

static void set_wide_range(void) {
    if (mpfr_get_emin() != REF_EMIN_WIDE) mpfr_set_emin(REF_EMIN_WIDE);
    if (mpfr_get_emax() != REF_EMAX_WIDE) mpfr_set_emax(REF_EMAX_WIDE);
}

int ref_ctx_init(ref_ctx *r) {
    memset(r, 0, sizeof *r);
    r->round = FPEMU_RNE;
    /* 64 bits: one limb, so later mpfr_set_prec calls (p + 1 <= 54) never
     * reallocate. */
    mpfr_inits2(64, r->r, r->u, r->y, r->t, r->maxv, r->minnorm, (mpfr_ptr)0);
    /* sr: w holds up to 53 + 66 bits in two limbs (never reallocated) */
    mpfr_init2(r->w, 128);
    r->init = 1;
    set_wide_range();
    return (mpfr_get_emin() == REF_EMIN_WIDE && mpfr_get_emax() == REF_EMAX_WIDE) ? 0 : -1;
}

void ref_ctx_clear(ref_ctx *r) {
    if (!r->init) return;
    free(r->dtab);
    r->dtab = NULL;
    mpfr_clears(r->r, r->u, r->y, r->t, r->maxv, r->minnorm, r->w, (mpfr_ptr)0);
    r->init = 0;
}

/* Switch the cached target format (precisions, max finite, min normal). */
static int prepare_dst(ref_ctx *r, const fpemu_format *f) {
    if (r->cur_dst == f) return 0;
    if (ref_format_init(&r->dst, f) != 0) { r->cur_dst = NULL; return -1; }
    r->cur_dst = f;
    const ref_format *F = &r->dst;
    mpfr_set_prec(r->r, F->p);
    mpfr_set_prec(r->u, F->p);
    mpfr_set_prec(r->y, F->p + 1);
    mpfr_set_prec(r->w, F->p + SR_EXTRA);
    mpfr_set_prec(r->maxv, F->p);
    mpfr_set_prec(r->minnorm, F->p);
    /* max finite = (2^m + maxmant) * 2^(emax - m); min normal = 2^emin */
    mpfr_set_ui_2exp(r->maxv, (unsigned long)((UINT64_C(1) << F->mbits) | F->maxmant), F->emax - F->mbits, MPFR_RNDN);
    mpfr_set_ui_2exp(r->minnorm, 1, F->emin, MPFR_RNDN);
    /* MPFR significands lie in [1/2, 1): the min subnormal 2^(emin-p+1)
     * has MPFR exponent emin - p + 2 (the GNU MPFR manual's
     * mpfr_subnormalize recipe; docs/verification.md). */
    r->emin_sub = (mpfr_exp_t)F->emin - F->p + 2;
    return 0;
}

static int prepare_src(ref_ctx *r, const fpemu_format *f) {
    if (r->cur_src == f) return 0;
    if (ref_format_init(&r->src, f) != 0) { r->cur_src = NULL; return -1; }
    r->cur_src = f;
    return 0;
}

/* ---- delivering special results ------------------------------------------ */

static uint64_t max_code(const ref_format *F, int sign) { return F->code_max | (sign ? F->sign << F->pad : 0); }

/* A NaN result: the canonical NaN, or +max finite with invalid in a format
 * without NaN (docs/semantics.md). */
static uint64_t deliver_nan(const ref_format *F, unsigned *fl) {
    if (F->has_nan) return F->code_nan;
    *fl |= FPEMU_FLAG_INVALID;
    return F->code_max;
}

/* An exact zero with the given sign. */
static uint64_t deliver_zero(const ref_format *F, int sign, unsigned *fl) {
    if (!F->has_zero) { /* e8m0: no zero */
        *fl |= FPEMU_FLAG_INVALID;
        return deliver_nan(F, fl);
    }
    return (sign && F->has_negzero) ? F->sign << F->pad : 0;
}

/* An exact infinity (an inf operand, x/0). Under sat: max finite with
 * overflow|inexact (any format); formats without inf: NaN with invalid, or
 * max finite with overflow|inexact when they have no NaN either. */
static uint64_t deliver_inf(const ref_ctx *r, const ref_format *F, int sign, unsigned *fl) {
    if (sign && !F->is_signed) {
        *fl |= FPEMU_FLAG_INVALID;
        return deliver_nan(F, fl);
    }
    /* satfinite never delivers an infinity, in any format (docs/semantics.md) */
    if (!r->sat && F->has_inf) return F->code_inf | (sign ? F->sign << F->pad : 0);
    if (!r->sat && F->has_nan) {
        *fl |= FPEMU_FLAG_INVALID;
        return F->code_nan;
    }
    *fl |= FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
    return max_code(F, sign);
}

/* Overflow of a rounded result (IEEE 754-2019 7.4, extended to formats
 * without inf as docs/semantics.md describes): flags overflow|inexact
 * in every case; the value depends on the mode, sat and the format. */
static uint64_t deliver_overflow(const ref_ctx *r, const ref_format *F, int sign, unsigned *fl) {
    *fl |= FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
    int to_inf;
    switch (r->round) {
    case FPEMU_RTZ:
    case FPEMU_RTO: to_inf = 0; break;
    case FPEMU_RUP: to_inf = !sign; break;
    case FPEMU_RDN: to_inf = sign; break;
    default: to_inf = 1; break;
    }
    if (r->sat || !to_inf) return max_code(F, sign);
    if (F->has_inf) return F->code_inf | (sign ? F->sign << F->pad : 0);
    if (F->has_nan) return F->code_nan;
    return max_code(F, sign);
}

/* Encode a finite value that lies on the format's grid within range, from
 * MPFR's own representation: one limb (p <= 54) holding the significand
 * left-aligned, value = limb * 2^(E - 64). */
static inline uint64_t encode(const ref_format *F, mpfr_srcptr x, unsigned *fl) {
    if (mpfr_zero_p(x)) return deliver_zero(F, mpfr_signbit(x), fl);
    int sign = mpfr_signbit(x) ? 1 : 0;
    if (sign && !F->is_signed) {
        *fl |= FPEMU_FLAG_INVALID;
        return deliver_nan(F, fl);
    }
    uint64_t limb = ((const mp_limb_t *)mpfr_custom_get_significand(x))[0];
    mpfr_exp_t E = mpfr_get_exp(x);
    uint64_t ef, mf;
    if (E - 1 >= F->emin) { /* normal: the top p bits, implicit bit dropped */
        ef = (uint64_t)(E - 1 + F->bias);
        mf = (limb >> (64 - F->p)) & F->mmask;
    } else {                /* subnormal: value / 2^(emin - mbits) */
        ef = 0;
        mf = limb >> (64 - (E - F->emin + F->mbits));
    }
    return ((sign ? F->sign : 0) | (ef << F->mbits) | mf) << F->pad;
}

/* ---- the finite path --------------------------------------------------- */

static inline int eval(ref_ctx *r, mpfr_ptr d, mpfr_rnd_t rnd) {
    mpfr_srcptr a = &r->opnd[0], b = &r->opnd[1], c = &r->opnd[2];
    switch (r->op) {
    case REF_ADD: return mpfr_add(d, a, b, rnd);
    case REF_SUB: return mpfr_sub(d, a, b, rnd);
    case REF_MUL: return mpfr_mul(d, a, b, rnd);
    case REF_DIV: return mpfr_div(d, a, b, rnd);
    case REF_SQRT: return mpfr_sqrt(d, a, rnd);
    case REF_FMA: return mpfr_fma(d, a, b, c, rnd);
    default: return mpfr_set(d, a, rnd); /* conversion: a is at the source's precision */
    }
}

/* Is the bit of weight 2^w of nonzero x (whose lowest set bit is at weight
 * >= 2^w) set? */
static int bit_at(mpfr_srcptr x, mpfr_exp_t w) {
    return mpfr_get_exp(x) - (mpfr_exp_t)mpfr_min_prec(x) == w;
}

/* sr at quantum 2^q: dst = sign(w) (floor(|w| / 2^q) + up) 2^q, where w
 * is the exact result truncated toward zero (sticky: bits were dropped)
 * and up iff the draw's top R bits are below frac x 2^R, frac = the exact
 * |x| / 2^q - floor(|w| / 2^q). Everything here is exact: w is the integer
 * M (its two limbs) times 2^(e - 128), q lies at least 128 - p >= 75 bits
 * above M's last bit, and so frac x 2^R = W + f with W an integer and f in
 * [0, 1) read off M's bits; the dropped bits add less than one unit of M's
 * last place (far below 2^(q - R)), so the draw's r < frac x 2^R iff
 * r < W + (f != 0 or sticky). Returns whether the rounding is inexact; *up
 * the decision. dst must hold p bits. */
typedef unsigned __int128 u128;
static u128 low_bits(u128 x, int n) { return n >= 128 ? x : x & (((u128)1 << n) - 1); }
static int sr_at(ref_ctx *r, mpfr_exp_t q, int sticky, mpfr_ptr dst, int *up) {
    const mp_limb_t *l = mpfr_custom_get_significand(r->w); /* 2 limbs (p + 66 <= 128 bits), top bit set */
    u128 M = (u128)l[1] << 64 | l[0];
    int R = r->sr_bits >= 1 && r->sr_bits <= 64 ? r->sr_bits : 64;
    mpfr_exp_t sh = q - (mpfr_get_exp(r->w) - 128); /* M's bits below the quantum, >= 75 */
    u128 k = sh >= 128 ? 0 : M >> sh, low = low_bits(M, (int)(sh < 256 ? sh : 256));
    mpfr_exp_t d = sh - R; /* low x 2^R / 2^sh = W + f: W = low >> d */
    u128 W = d >= 128 ? 0 : low >> d;
    int f = low_bits(low, (int)(d < 256 ? d : 256)) != 0;
    u128 T = W + (f || sticky);
    uint64_t rR = R == 64 ? r->sr_draw : r->sr_draw >> (64 - R);
    *up = (u128)rR < T;
    if (T > 0 && r->sr_ndec < 2) r->sr_lastup[r->sr_ndec++] = (uint64_t)(T - 1);
    /* k + up <= 2^p, p <= 53: exact at dst's p bits */
    mpfr_set_ui_2exp(dst, (unsigned long)(k + (u128)*up), q, MPFR_RNDN);
    if (mpfr_signbit(r->w)) mpfr_neg(dst, dst, MPFR_RNDN);
    return low != 0 || sticky;
}

/* mpfr_cmpabs(x, y) without the call, for round_finite's one-limb values
 * against the target's max finite or min normal (y: nonzero, p <= 53
 * bits, set by prepare_dst): nonzero finite values of at most 64 bits
 * compare by MPFR's exponent, then by the limb (significands in [1/2, 1),
 * top bit set, the bits below the precision zero). Any other x goes to
 * mpfr_cmpabs. */
static inline int cmpabs1(mpfr_srcptr x, mpfr_srcptr y) {
    if (!mpfr_regular_p(x) || mpfr_get_prec(x) > GMP_NUMB_BITS) return mpfr_cmpabs(x, y);
    mpfr_exp_t ex = mpfr_get_exp(x), ey = mpfr_get_exp(y);
    mp_limb_t lx = ((const mp_limb_t *)mpfr_custom_get_significand(x))[0];
    mp_limb_t ly = ((const mp_limb_t *)mpfr_custom_get_significand(y))[0];
    return ex != ey ? (ex < ey ? -1 : 1) : (lx > ly) - (lx < ly);
}

/* MPFR's mode for a mode's first rounding (rto truncates, sr and rna
 * take their own ways). */
static mpfr_rnd_t rnd_of(fpemu_round m) {
    switch (m) {
    case FPEMU_RTZ:
    case FPEMU_RTO: return MPFR_RNDZ;
    case FPEMU_RUP: return MPFR_RNDU;
    case FPEMU_RDN: return MPFR_RNDD;
    default: return MPFR_RNDN;
    }
}
/* rne, rtz, rup, rdn: MPFR rounds them itself */
static int is_mpfr_mode(fpemu_round m) { return m != FPEMU_SR && m != FPEMU_RNA && m != FPEMU_RTO; }

/* The flags of an inexact result: inexact, and underflow if tiny; none if
 * exact. Without a branch: whether a rounding was exact is as good as
 * random from case to case, and a mispredicted branch costs more than the
 * arithmetic. */
static inline unsigned inex_flags(int inex, int tiny) {
    return (0u - (unsigned)(inex != 0)) & (FPEMU_FLAG_INEXACT | ((0u - (unsigned)(tiny != 0)) & FPEMU_FLAG_UNDERFLOW));
}

/* Steps 2 to 4 of round_finite, from step 1's result: u (rounded with
 * unbounded exponent range), its sign, inex (u != x), away (|u| > |x|), and
 * for step 4 the ternary t of r->r (rne rtz rup rdn rto) or r->y (rna),
 * MPFR's mode rnd, and sr's rounding on the subnormal grid (r->r, sub_inex). */
static inline __attribute__((always_inline)) uint64_t finish(ref_ctx *r, mpfr_ptr u, int sign, int inex, int away, int t,
                                                             mpfr_rnd_t rnd, int sub_inex, unsigned *fl) {
    const ref_format *F = &r->dst;
    if (sign && !F->is_signed) { /* e8m0: a negative result */
        *fl |= FPEMU_FLAG_INVALID;
        return deliver_nan(F, fl);
    }

    /* 2. overflow: the unbounded-range result exceeds max finite */
    if (cmpabs1(u, r->maxv) > 0) return deliver_overflow(r, F, sign, fl);

    /* 3. tininess: after = |u| < min normal; before = |x| < min normal */
    int cmp_min = cmpabs1(u, r->minnorm);
    int tiny_after = cmp_min < 0;
    int tiny_before = tiny_after || (cmp_min == 0 && away);
    int tiny = r->tininess_before ? tiny_before : tiny_after;

    if (!F->has_zero && tiny_after) { /* e8m0: below 2^-127 -> 0x00 */
        *fl |= FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT;
        return 0;
    }
    if (tiny && r->ftz && F->has_zero) {
        *fl |= FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT;
        return deliver_zero(F, sign, fl);
    }
    if (!tiny_after) {
        /* |u| >= min normal: u is on the format's grid (a subnormal-range x
         * rounding up to min normal lands there on the coarser grid too). */
        *fl |= inex_flags(inex, tiny);
        return encode(F, u, fl);
    }

    /* 4. gradual underflow: narrow the exponent range to the target's and
     * let MPFR re-round on the subnormal grid, using the ternary value so
     * that nothing is rounded twice. */
    mpfr_ptr res = r->r;
    if (r->round == FPEMU_SR) {
        inex = sub_inex; /* res: rounded on the subnormal grid in step 1 */
    } else if (r->round == FPEMU_RNA) {
        /* truncate to the subnormal grid with one more bit (quantum
         * 2^(emin_sub - 2)); its last bit decides, ties away */
        mpfr_set_emin(r->emin_sub - 1);
        t = mpfr_check_range(r->y, t, MPFR_RNDZ);
        t = mpfr_subnormalize(r->y, t, MPFR_RNDZ);
        mpfr_set_emin(REF_EMIN_WIDE);
        int half = !mpfr_zero_p(r->y) && bit_at(r->y, r->emin_sub - 2);
        mpfr_set(r->r, r->y, MPFR_RNDN); /* < 2^emin: at most p bits, exact */
        if (half) {
            mpfr_set_si_2exp(r->t, sign ? -1 : 1, r->emin_sub - 2, MPFR_RNDN);
            mpfr_add(r->r, r->r, r->t, MPFR_RNDN);
        }
        inex = t != 0 || half;
    } else {
        mpfr_set_emin(r->emin_sub);
        t = mpfr_check_range(r->r, t, rnd);
        t = mpfr_subnormalize(r->r, t, rnd);
        mpfr_set_emin(REF_EMIN_WIDE);
        inex = t != 0;
        if (r->round == FPEMU_RTO && inex && (mpfr_zero_p(r->r) || !bit_at(r->r, r->emin_sub - 1))) {
            /* odd on the subnormal grid (quantum 2^(emin_sub - 1)) */
            mpfr_set_si_2exp(r->t, sign ? -1 : 1, r->emin_sub - 1, MPFR_RNDN);
            mpfr_add(r->r, r->r, r->t, MPFR_RNDN);
        }
    }
    *fl |= inex_flags(inex, tiny);
    if (mpfr_zero_p(res)) return deliver_zero(F, sign, fl);
    return encode(F, res, fl);
}

/* Step 1 in rne, rtz, rup and rdn, MPFR's own modes: r->r holds the
 * result at p bits with unbounded exponent range and ternary t. */
static inline __attribute__((always_inline)) uint64_t round_mpfr_mode(ref_ctx *r, int t, mpfr_rnd_t rnd, unsigned *fl) {
    if (mpfr_zero_p(r->r)) return deliver_zero(&r->dst, mpfr_signbit(r->r), fl);
    int sign = mpfr_signbit(r->r) ? 1 : 0, inex = t != 0;
    return finish(r, r->r, sign, inex, inex & ((t > 0) != sign), t, rnd, 0, fl); /* & : no branch */
}

/* Round the finite exact result of r->op (operands already loaded) to the
 * target, with every policy. */
static uint64_t round_finite(ref_ctx *r, unsigned *fl) {
    const ref_format *F = &r->dst;
    const mpfr_exp_t p = F->p;
    int t = 0, sign, inex = 0, away = 0;
    const mpfr_rnd_t rnd = rnd_of(r->round);

    /* 1. round with unbounded exponent range: r->u, with inex (u != x) and
     * away (|u| > |x|). For rto and rna, r->r / r->y keep the truncation. */
    if (is_mpfr_mode(r->round)) return round_mpfr_mode(r, eval(r, r->r, rnd), rnd, fl);
    mpfr_ptr u = r->u;
    int sub_inex = 0;
    if (r->round == FPEMU_SR) {
        int sticky = eval(r, r->w, MPFR_RNDZ) != 0;
        if (mpfr_zero_p(r->w)) return deliver_zero(F, mpfr_signbit(r->w), fl);
        r->sr_took = 1; /* the exact result is finite and nonzero */
        sign = mpfr_signbit(r->w) ? 1 : 0;
        /* e8m0: a negative result takes its draw, which decides nothing
         * (NaN below) */
        if (!sign || F->is_signed) {
            inex = sr_at(r, mpfr_get_exp(r->w) - p, sticky, u, &away);
            /* below the min normal (|w| < 2^emin iff the exact |x| is), in a
             * format with subnormals: the rounding on the subnormal grid too,
             * with the same draw, used in step 4 if u is tiny (and so every
             * decision the draw can reach is in sr_lastup, whatever this draw
             * gave). Without subnormals a tiny u gives the smallest value. */
            if (F->has_zero && mpfr_cmpabs(r->w, r->minnorm) < 0) {
                int up;
                sub_inex = sr_at(r, r->emin_sub - 1, sticky, r->r, &up);
            }
        }
    } else if (r->round == FPEMU_RNA) {
        t = eval(r, r->y, MPFR_RNDZ); /* y = x truncated to p + 1 bits */
        if (mpfr_zero_p(r->y)) return deliver_zero(F, mpfr_signbit(r->y), fl);
        sign = mpfr_signbit(r->y) ? 1 : 0;
        int half = bit_at(r->y, mpfr_get_exp(r->y) - (p + 1));
        /* the (p+1)-th bit set: at or above the midpoint, ties go away */
        mpfr_set(u, r->y, half ? MPFR_RNDA : MPFR_RNDZ);
        inex = t != 0 || half;
        away = half;
    } else { /* rto */
        t = eval(r, r->r, rnd);
        if (mpfr_zero_p(r->r)) return deliver_zero(F, mpfr_signbit(r->r), fl);
        sign = mpfr_signbit(r->r) ? 1 : 0;
        u = r->r;
        inex = t != 0;
        away = inex && ((t > 0) != sign);
        if (inex && !bit_at(r->r, mpfr_get_exp(r->r) - p)) {
            /* odd: the neighbour away from zero (same binade: last bit 0) */
            u = r->u;
            mpfr_set_si_2exp(r->t, sign ? -1 : 1, mpfr_get_exp(r->r) - p, MPFR_RNDN);
            mpfr_add(u, r->r, r->t, MPFR_RNDN);
            away = 1;
        }
    }
    return finish(r, u, sign, inex, away, t, rnd, sub_inex, fl);
}

/* A decoded operand, ready for MPFR: its class and sign and, if finite and
 * nonzero, its significand left-aligned in one limb and MPFR's exponent
 * (|value| = limb * 2^(e - 64), limb's top bit set). sub: a subnormal (daz
 * reads it as a zero of its sign). Decode tables hold these. */
struct ref__dec { uint64_t limb; int32_t e; uint8_t cls, sign, sub; };

static void dec_of(const ref_value *v, int sub, struct ref__dec *d) {
    d->cls = (uint8_t)v->cls, d->sign = (uint8_t)v->sign, d->sub = (uint8_t)sub;
    d->limb = 0, d->e = 0;
    if (v->cls != REF_FINITE) return;
    int lz = __builtin_clzll(v->sig);
    d->limb = v->sig << lz;
    d->e = (int32_t)(v->exp + (64 - lz));
}

/* Point operand k at a decoded value, exactly, at precision prec (>= the
 * value's significant bits): no allocation, no rounding. */
static void load(ref_ctx *r, int k, const struct ref__dec *d, mpfr_prec_t prec) {
    mpfr_ptr x = &r->opnd[k];
    if (d->cls == REF_ZERO) {
        r->limb[k] = 0;
        mpfr_custom_init_set(x, d->sign ? -MPFR_ZERO_KIND : MPFR_ZERO_KIND, 0, prec, &r->limb[k]);
        return;
    }
    r->limb[k] = (mp_limb_t)d->limb;
    mpfr_custom_init_set(x, d->sign ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND, (mpfr_exp_t)d->e, prec, &r->limb[k]);
}

/* Decode tables: formats of at most 16 bits decode by lookup once the same
 * operand format has been used for DTAB_AFTER operations in a row (so a
 * caller alternating formats never pays for rebuilding). Built from
 * ref_decode with daz off and on: an entry whose class differs is marked
 * sub, so daz can apply at lookup. */
#define DTAB_AFTER 4096

static inline __attribute__((always_inline)) const struct ref__dec *decode_fast(ref_ctx *r, const ref_format *S, uint64_t code, struct ref__dec *tmp) {
    if (r->dtab_fmt == S->desc) {
        const struct ref__dec *d = &r->dtab[(code >> S->pad) & 0xFFFF];
        if (!(d->sub && r->daz)) return d;
        *tmp = *d;
        tmp->cls = REF_ZERO, tmp->limb = 0, tmp->e = 0;
        return tmp;
    }
    ref_value v;
    ref_decode(S, code, r->daz, &v);
    dec_of(&v, 0, tmp);
    return tmp;
}

/* ops: operations about to run with operand format S */
static void dtab_note(ref_ctx *r, const ref_format *S, size_t ops) {
    if (r->dtab_fmt == S->desc || S->bits > 16) return;
    if (r->dtab_want != S->desc) {
        r->dtab_want = S->desc;
        r->dtab_calls = 0;
    }
    r->dtab_calls += ops;
    if (r->dtab_calls < DTAB_AFTER) return;
    if (!r->dtab && !(r->dtab = malloc(sizeof(struct ref__dec) << 16))) return;
    r->dtab_fmt = NULL;
    uint64_t n = UINT64_C(1) << S->bits;
    for (uint64_t c = 0; c < n; c++) {
        ref_value v, w;
        ref_decode(S, c << S->pad, 0, &v);
        ref_decode(S, c << S->pad, 1, &w);
        dec_of(&v, v.cls != w.cls, &r->dtab[c]);
    }
    for (uint64_t c = n; c < 65536; c++) r->dtab[c] = r->dtab[c & (n - 1)];
    r->dtab_fmt = S->desc;
}

static int is_nan(const struct ref__dec *v) { return v->cls == REF_QNAN || v->cls == REF_SNAN; }

/* Make r ready for ops operations op with result format f (src: the
 * operand format of a conversion): the cached formats, the wide exponent
 * range (which every operation leaves in place), the decode table.
 * Returns the operand format's reading, or NULL for an unusable format. */
static const ref_format *op_begin(ref_ctx *r, const fpemu_format *f, ref_opcode op, const fpemu_format *src,
                                  size_t ops) {
    if ((unsigned)op >= REF_OP_COUNT || prepare_dst(r, f) != 0) return NULL;
    const ref_format *S = &r->dst;
    if (op == REF_CONVERT) {
        if (prepare_src(r, src ? src : f) != 0) return NULL;
        S = &r->src;
    }
    set_wide_range();
    r->op = op;
    dtab_note(r, S, ops);
    return S;
}

/* One operation, r set up by op_begin. */
static uint64_t op_one(ref_ctx *r, const ref_format *S, const uint64_t *x, unsigned *flags) {
    const ref_format *F = &r->dst;
    const ref_opcode op = r->op;
    unsigned fl = 0;
    r->sr_took = r->sr_ndec = 0;
    int n = ref_op_arity(op);
    struct ref__dec tmp[3];
    const struct ref__dec *v[3];
    for (int i = 0; i < n; i++) v[i] = decode_fast(r, S, x[i], &tmp[i]);

    /* ---- NaN operands and invalid operations ---- */
    int invalid = 0, any_nan = 0;
    for (int i = 0; i < n; i++) {
        invalid |= v[i]->cls == REF_SNAN;
        any_nan |= is_nan(v[i]);
    }
    /* fma(0, inf, c) is invalid even when c is a quiet NaN */
    if (op == REF_FMA && ((v[0]->cls == REF_ZERO && v[1]->cls == REF_INF) || (v[0]->cls == REF_INF && v[1]->cls == REF_ZERO)))
        invalid = 1;
    if (any_nan) {
        if (invalid) fl |= FPEMU_FLAG_INVALID;
        uint64_t res = deliver_nan(F, &fl);
        *flags = fl;
        return res;
    }
    if (invalid) goto invalid_op;

    uint64_t res;
    switch (op) {
    case REF_SUB:
    case REF_ADD: {
        int sb = v[1]->sign ^ (op == REF_SUB);
        if (v[0]->cls == REF_INF && v[1]->cls == REF_INF && v[0]->sign != sb) goto invalid_op;
        if (v[0]->cls == REF_INF) { res = deliver_inf(r, F, v[0]->sign, &fl); goto done; }
        if (v[1]->cls == REF_INF) { res = deliver_inf(r, F, sb, &fl); goto done; }
        break;
    }
    case REF_MUL:
        if (v[0]->cls == REF_INF || v[1]->cls == REF_INF) {
            if (v[0]->cls == REF_ZERO || v[1]->cls == REF_ZERO) goto invalid_op;
            res = deliver_inf(r, F, v[0]->sign ^ v[1]->sign, &fl);
            goto done;
        }
        break;
    case REF_DIV:
        if (v[0]->cls == REF_INF) {
            if (v[1]->cls == REF_INF) goto invalid_op;
            res = deliver_inf(r, F, v[0]->sign ^ v[1]->sign, &fl);
            goto done;
        }
        if (v[1]->cls == REF_INF) { res = deliver_zero(F, v[0]->sign ^ v[1]->sign, &fl); goto done; }
        if (v[1]->cls == REF_ZERO) {
            if (v[0]->cls == REF_ZERO) goto invalid_op;
            fl |= FPEMU_FLAG_INFINITE;
            res = deliver_inf(r, F, v[0]->sign ^ v[1]->sign, &fl);
            goto done;
        }
        break;
    case REF_SQRT:
        if (v[0]->cls == REF_ZERO) { res = deliver_zero(F, v[0]->sign, &fl); goto done; }
        if (v[0]->sign) goto invalid_op;
        if (v[0]->cls == REF_INF) { res = deliver_inf(r, F, 0, &fl); goto done; }
        break;
    case REF_FMA: {
        int ps = v[0]->sign ^ v[1]->sign;
        if (v[0]->cls == REF_INF || v[1]->cls == REF_INF) { /* the other factor is nonzero here */
            if (v[2]->cls == REF_INF && v[2]->sign != ps) goto invalid_op;
            res = deliver_inf(r, F, ps, &fl);
            goto done;
        }
        if (v[2]->cls == REF_INF) { res = deliver_inf(r, F, v[2]->sign, &fl); goto done; }
        break;
    }
    case REF_CONVERT:
        if (v[0]->cls == REF_INF) { res = deliver_inf(r, F, v[0]->sign, &fl); goto done; }
        if (v[0]->cls == REF_ZERO) { res = deliver_zero(F, v[0]->sign, &fl); goto done; }
        load(r, 0, v[0], S->p);
        res = round_finite(r, &fl);
        goto done;
    default: break;
    }
    /* finite operands (zeros included): MPFR does the rest, zero signs too */
    for (int i = 0; i < n; i++) load(r, i, v[i], F->p);
    res = round_finite(r, &fl);
done:
    *flags = fl;
    return res;
invalid_op:
    fl |= FPEMU_FLAG_INVALID;
    res = deliver_nan(F, &fl);
    *flags = fl;
    return res;
}

uint64_t ref_op(ref_ctx *r, const fpemu_format *f, ref_opcode op, const uint64_t *x,
                const fpemu_format *src, unsigned *flags) {
    *flags = 0;
    r->sr_took = r->sr_ndec = 0;
    const ref_format *S = op_begin(r, f, op, src, 1);
    if (!S) return 0;
    return op_one(r, S, x, flags);
}

int ref_op_n(ref_ctx *r, const fpemu_format *f, ref_opcode op, const uint64_t *x, size_t n,
             const fpemu_format *src, uint64_t *res, unsigned *flags) {
    r->sr_took = r->sr_ndec = 0;
    const ref_format *S = op_begin(r, f, op, src, n);
    if (!S) {
        for (size_t i = 0; i < n; i++) res[i] = 0, flags[i] = 0;
        return -1;
    }
    const int a = ref_op_arity(op);
    /* The bulk of the binary cases: add, sub, mul or div of two finite
     * operands (zeros included; div: a nonzero divisor) in rne, rtz, rup or
     * rdn. op_one has no special rule for these and hands them, loaded at
     * p bits, to round_finite, which hands them to round_mpfr_mode: so
     * does this loop, without op_one's general classification. */
    const int fast = a == 2 && is_mpfr_mode(r->round);
    const mpfr_rnd_t rnd = rnd_of(r->round);
    /* what eval would call; the batch's table and policies (nothing in
     * the loop changes them) */
    int (*const fn)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t) =
        op == REF_ADD ? mpfr_add : op == REF_SUB ? mpfr_sub : op == REF_MUL ? mpfr_mul : mpfr_div;
    const struct ref__dec *const tab = r->dtab_fmt == S->desc ? r->dtab : NULL;
    const int pad = S->pad, daz = r->daz;
    const mpfr_prec_t p = S->p;
    /* operand 0 as this loop last loaded it (op_one reloads it): cases in
     * a row often share it, and MPFR never writes its inputs */
    uint64_t code0 = 0;
    int have0 = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t *xi = x + i * (size_t)a;
        if (fast) {
            struct ref__dec t0, t1;
            const struct ref__dec *v0, *v1;
            if (tab && !daz) { /* decode_fast's table lookup, daz off */
                v0 = &tab[(xi[0] >> pad) & 0xFFFF];
                v1 = &tab[(xi[1] >> pad) & 0xFFFF];
            } else {
                v0 = decode_fast(r, S, xi[0], &t0);
                v1 = decode_fast(r, S, xi[1], &t1);
            }
            if ((v0->cls == REF_ZERO || v0->cls == REF_FINITE) && (v1->cls == REF_FINITE || (v1->cls == REF_ZERO && op != REF_DIV))) {
                unsigned fl = 0;
                if (!have0 || code0 != xi[0]) load(r, 0, v0, p), code0 = xi[0], have0 = 1;
                load(r, 1, v1, p);
                res[i] = round_mpfr_mode(r, fn(r->r, &r->opnd[0], &r->opnd[1], rnd), rnd, &fl);
                flags[i] = fl;
                continue;
            }
        }
        have0 = 0;
        res[i] = op_one(r, S, xi, &flags[i]);
    }
    return 0;
}

uint64_t ref_sr_straddle(ref_ctx *r, const fpemu_format *f, ref_opcode op, const uint64_t *operands,
                         const fpemu_format *src, unsigned which, int above, uint64_t fill) {
    unsigned fl;
    int R = r->sr_bits >= 1 && r->sr_bits <= 64 ? r->sr_bits : 64;
    r->sr_draw = 0;
    (void)ref_op(r, f, op, operands, src, &fl);
    if (!r->sr_ndec) return fill;
    uint64_t last = r->sr_lastup[which % (unsigned)r->sr_ndec], top = last + (above != 0);
    if (R == 64) return top < last ? fill : top; /* last = 2^64 - 1: every draw rounds up */
    if (top >> R) return fill;
    return top << (64 - R) | (fill & ((UINT64_C(1) << (64 - R)) - 1));
}

uint64_t ref_add(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, unsigned *flags) {
    uint64_t x[2] = {a, b};
    return ref_op(r, f, REF_ADD, x, NULL, flags);
}
uint64_t ref_sub(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, unsigned *flags) {
    uint64_t x[2] = {a, b};
    return ref_op(r, f, REF_SUB, x, NULL, flags);
}
uint64_t ref_mul(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, unsigned *flags) {
    uint64_t x[2] = {a, b};
    return ref_op(r, f, REF_MUL, x, NULL, flags);
}
uint64_t ref_div(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, unsigned *flags) {
    uint64_t x[2] = {a, b};
    return ref_op(r, f, REF_DIV, x, NULL, flags);
}
uint64_t ref_sqrt(ref_ctx *r, const fpemu_format *f, uint64_t a, unsigned *flags) {
    return ref_op(r, f, REF_SQRT, &a, NULL, flags);
}
uint64_t ref_fma(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, unsigned *flags) {
    uint64_t x[3] = {a, b, c};
    return ref_op(r, f, REF_FMA, x, NULL, flags);
}
uint64_t ref_convert(ref_ctx *r, const fpemu_format *dst, const fpemu_format *src, uint64_t a, unsigned *flags) {
    return ref_op(r, dst, REF_CONVERT, &a, src, flags);
}
