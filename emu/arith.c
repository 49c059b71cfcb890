/* SPDX-License-Identifier: MIT */
/* arith.c: correctly rounded add, sub, mul, div, sqrt, fma, min, max and
 * compare for every format.
 *
 * Two exact paths feed the one rounding step (round.c):
 *  - formats with p <= 24 and e <= 8 (all but f64): operands are exact
 *    doubles; the double result plus the exact sign of its error (TwoSum
 *    for sums, the fma remainder for quotients and square roots, products
 *    exact) pins the exact value to an open interval no rounding decision
 *    point lies in (docs/semantics.md, "exactness shortcuts");
 *  - f64: integer significands with sticky ("jam") bits, after SoftFloat.
 * Special operands (NaN, inf, zero) are handled first, by class. */
#include <math.h>
#include "internal.h"


typedef int binop; /* EMU_OP_* */
enum { OP_ADD = EMU_OP_ADD, OP_SUB = EMU_OP_SUB, OP_MUL = EMU_OP_MUL, OP_DIV = EMU_OP_DIV };

/* An operand: class, sign, and for the double path its exact value. */
typedef struct { fpemu_class k; int sign; double v; } opnd;

static inline opnd load(const fpemu_format *f, uint64_t code, const fpemu_ctx *ctx) {
    opnd o;
    uint64_t c = emu__strip(f, code);
    o.sign = (c & f->sign_bit) != 0;
    if (f->decode_table) {
        o.k = (fpemu_class)f->class_table[c];
        o.v = f->decode_table[c];
    } else {
        o.k = emu__classify(f, c);
        /* only the real binary32 layout (f32, and tf32 inside its container)
         * may be read as a float; custom e8m23 variants differ in bias or NaNs */
        int f32_layout = f->ebits == 8 && f->bias == 127 && f->nan == FPEMU_NANS_IEEE;
        if (f32_layout && f->bits == 32) o.v = emu__bitsf((uint32_t)c);
        else if (f32_layout && f->pad) o.v = emu__bitsf((uint32_t)(c << f->pad));
        else if (f->bits == 64) o.v = emu__bitsd(c);
        else o.v = o.k <= FPEMU_CLASS_NORMAL ? emu__decode_finite(f, c) : 0;
    }
    if (o.k == FPEMU_CLASS_SUBNORMAL && ctx->daz) o.k = FPEMU_CLASS_ZERO, o.v = o.sign ? -0.0 : 0.0;
    return o;
}

static inline int isnan_k(fpemu_class k) { return k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN; }

/* NaN operands: INVALID if any is signalling; the result per NaN policy. */
static uint64_t nan_of(const fpemu_format *f, fpemu_ctx *ctx, int invalid, int n, const uint64_t *codes, const opnd *ops) {
    const fpemu_format *fmts[3] = {f, f, f};
    for (int i = 0; i < n; i++)
        if (ops[i].k == FPEMU_CLASS_SNAN) invalid = 1;
    return emu__nan_result(f, ctx, invalid, n, codes, fmts);
}

static uint64_t invalid_nan(const fpemu_format *f, fpemu_ctx *ctx) { return emu__nan_result(f, ctx, 1, 0, NULL, NULL); }

/* Exact zero result: x + (-x) is +0 except under rdn (IEEE 754 6.3). */
static inline uint64_t zero_sum(const fpemu_format *f, int sa, int sb, fpemu_ctx *ctx) {
    int s = sa == sb ? sa : ctx->round == FPEMU_RDN;
    return fpemu_round_pack(f, s, 0, 0, 0, ctx);
}

/* ---- f64: integer significands ------------------------------------------ */


/* Every f64-path result reaches emu__round_pack128 with at least p + 64
 * exact bits and a sticky (a sum's jam bit, a quotient's or root's
 * remainder): sr then decides on the exact fraction (docs/semantics.md:
 * r < frac x 2^R, R up to 64), not only the deterministic modes. The
 * formats up to f32 take these paths in sr whenever their double
 * computation is not exact (binary, sqrt_generic, emu__fma_generic). */

/* Right shift that ORs every bit shifted out into the last bit. */
static inline u128 shr_jam128(u128 x, int d) {
    if (d <= 0) return x;
    if (d >= 127) return x != 0;
    return (x >> d) | ((x & (((u128)1 << d) - 1)) != 0);
}

/* Exact sum of (sa, A * 2^ea) and (sb, B * 2^eb), both nonzero. */
static uint64_t add128(const fpemu_format *f, int sa, u128 A, int ea, int sb, u128 B, int eb, fpemu_ctx *ctx) {
    int la = 125 - (127 - emu__clz128(A)), lb = 125 - (127 - emu__clz128(B));
    A <<= la, ea -= la; /* leading bits at 125: two bits of headroom */
    B <<= lb, eb -= lb;
    if (eb > ea || (eb == ea && B > A)) {
        u128 t = A; A = B; B = t;
        int e = ea; ea = eb; eb = e;
        int s = sa; sa = sb; sb = s;
    }
    B = shr_jam128(B, ea - eb);
    u128 r = sa == sb ? A + B : A - B;
    if (r == 0) return zero_sum(f, sa, sb, ctx);
    return emu__round_pack128(f, sa, r, ea, 0, ctx); /* 126 bits, the last one jammed */
}

static uint64_t f64_binop(const fpemu_format *f, binop op, double x, double y, fpemu_ctx *ctx) {
    emu_split a = emu__split_double(x), b = emu__split_double(y);
    switch (op) {
    case OP_SUB: b.sign ^= 1; /* fall through */
    case OP_ADD: return add128(f, a.sign, a.sig, a.exp, b.sign, b.sig, b.exp, ctx);
    case OP_MUL: return emu__round_pack128(f, a.sign ^ b.sign, (u128)a.sig * b.sig, a.exp + b.exp, 0, ctx); /* exact */
    case OP_DIV: {
        int la = 52 - (63 - __builtin_clzll(a.sig)), lb = 52 - (63 - __builtin_clzll(b.sig));
        uint64_t sa = a.sig << la, sb = b.sig << lb;
        int sticky;
        if (ctx->round != FPEMU_SR) { /* a 63-bit quotient and sticky decide every other mode */
            u128 n = (u128)sa << 62;
            uint64_t q = (uint64_t)(n / sb);
            sticky = n - (u128)q * sb != 0;
            return fpemu_round_pack(f, a.sign ^ b.sign, q, (a.exp - la) - (b.exp - lb) - 62, sticky, ctx);
        }
        u128 q = emu__div117(sa, sb, &sticky);
        return emu__round_pack128(f, a.sign ^ b.sign, q, (a.exp - la) - (b.exp - lb) - 117, sticky, ctx);
    }
    }
    return 0;
}

static uint64_t f64_sqrt(const fpemu_format *f, double x, fpemu_ctx *ctx) {
    emu_split a = emu__split_double(x);
    int lead = 63 - __builtin_clzll(a.sig);
    int s = 124 - lead;
    if ((a.exp - s) & 1) s--;
    u128 n = (u128)a.sig << s;
    uint64_t r = (uint64_t)sqrtl((long double)n);
    while ((u128)r * r > n) r--;
    while ((u128)(r + 1) * (r + 1) <= n) r++;
    if (ctx->round != FPEMU_SR) /* a 63-bit root and sticky decide every other mode */
        return fpemu_round_pack(f, 0, r, (a.exp - s) / 2, (u128)r * r != n, ctx);
    /* sr: 56 more root bits: the largest t with (r 2^56 + t)^2 <= n 2^112, i.e.
     * 2 r t 2^56 + t^2 <= rem 2^112 (rem = n - r^2 <= 2r, t < 2^56),
     * compared as L 2^56 + (t^2 mod 2^56) against rem 2^112 with
     * L = 2 r t + (t^2 >> 56), every term below 2^122 */
    u128 rem = n - (u128)r * r, rhs = rem << 56;
    const uint64_t low56 = (UINT64_C(1) << 56) - 1;
    uint64_t t = (uint64_t)((rem << 55) / r); /* ignores t^2: at or above the root */
    if (t > low56) t = low56;
    for (;;) {
        u128 t2 = (u128)t * t, L = 2 * (u128)r * t + (t2 >> 56);
        int exact = L == rhs && (t2 & low56) == 0;
        if (L < rhs || exact) return emu__round_pack128(f, 0, (u128)r << 56 | t, (a.exp - s) / 2 - 56, !exact, ctx);
        t--;
    }
}

static uint64_t f64_fma(const fpemu_format *f, double x, double y, double z, fpemu_ctx *ctx) {
    emu_split a = emu__split_double(x), b = emu__split_double(y), c = emu__split_double(z);
    return add128(f, a.sign ^ b.sign, (u128)a.sig * b.sig, a.exp + b.exp, c.sign, c.sig, c.exp, ctx);
}

/* ---- the double path ----------------------------------------------------- */

static inline int sgn(double r) { return (r > 0) - (r < 0); }

static uint64_t small_binop(const fpemu_format *f, binop op, double x, double y, fpemu_ctx *ctx) {
    double s, e;
    int rs = 0;
    switch (op) {
    case OP_SUB: y = -y; /* fall through */
    case OP_ADD: {
        s = x + y; /* TwoSum: e is the exact error of s */
        double bv = s - x, av = s - bv;
        e = (x - av) + (y - bv);
        if (s == 0) return zero_sum(f, signbit(x) != 0, signbit(y) != 0, ctx);
        rs = sgn(e);
        break;
    }
    case OP_MUL: s = x * y; break; /* exact: p <= 24 each */
    default: s = x / y; rs = sgn(fma(-s, y, x)) * sgn(y); break;
    }
    return emu__round_double(f, s, rs, ctx);
}

/* ---- result tables for <= 8-bit registry formats --------------------------
 * Every result of a binary operation (and sqrt) of an 8-bit format fits in
 * a 2^16-entry table of uint16 entries. Two kinds, both built on first use
 * from the generic path below, published with an atomic store and never
 * freed (at most one per format x operation x key actually used):
 *  - per rounding mode (the hot path): code << 8 | flags, computed under
 *    the default policies, and DEP (bit 7) on every entry whose result or
 *    flags could depend on sat, ftz, daz, tininess or the NaN policy
 *    (special or subnormal operands; results that are special, subnormal,
 *    inexact zeros or the smallest normal after an inexact rounding; any
 *    flag other than inexact);
 *  - per full configuration (mode x policies): exact for every entry; the
 *    DEP entries look up here.
 * sr is not tabulated. */
#include <stdatomic.h>
#include <stdlib.h>

enum { TAB_OPS = EMU_TAB_OPS, TAB_MODES = 6, TAB_CONFIGS = 6 * 16 * FPEMU_NAN_POLICY_COUNT, TAB_DEP = 0x80 };
static _Atomic(uint16_t *) tables[EMU_REGISTRY_MAX][TAB_OPS][TAB_CONFIGS];
/* [op][mode] with a slot for sr that stays NULL, so a lookup needs no mode
 * test: the formats of fewer than 8 bits (8-bit formats keep theirs in
 * their emu_fastops, fo->tab8) */
static _Atomic(uint16_t *) mode_tables[EMU_REGISTRY_MAX][TAB_OPS][FPEMU_ROUND_COUNT];

static uint64_t binary(const fpemu_format *f, binop op, uint64_t ca, uint64_t cb, fpemu_ctx *ctx);
static uint64_t sqrt_generic(const fpemu_format *f, uint64_t ca, fpemu_ctx *ctx);

static int ordinary(fpemu_class k) { return k == FPEMU_CLASS_ZERO || k == FPEMU_CLASS_NORMAL; }

/* Could this entry change under other policies than the default ones? */
static int policy_dependent(const fpemu_format *f, uint64_t a, uint64_t b, int unary, uint64_t r, unsigned fl) {
    if (!ordinary((fpemu_class)f->class_table[a]) || (!unary && !ordinary((fpemu_class)f->class_table[b]))) return 1;
    fpemu_class k = (fpemu_class)f->class_table[r];
    if (!ordinary(k) || (fl & ~(unsigned)FPEMU_FLAG_INEXACT)) return 1;
    if (k == FPEMU_CLASS_ZERO) return fl != 0;
    uint64_t minnorm = (uint64_t)(f->emin + f->bias) << f->mbits; /* tininess before rounding, ftz */
    return (fl && (r & f->mag_mask) == minnorm) || !f->has_subnormals;
}

static __attribute__((noinline)) const uint16_t *build_table(const fpemu_format *f, _Atomic(uint16_t *) *slot, int op,
                                                              const fpemu_ctx *ctx, int mark_dep) {
    size_t n = (size_t)1 << (op == 4 ? f->bits : 2 * f->bits);
    uint16_t *t = malloc(n * sizeof *t);
    if (!t) return NULL; /* tables are an optimisation only */
    fpemu_ctx c = *ctx;
    c.sr_stream = NULL;
    for (size_t i = 0; i < n; i++) {
        c.flags = 0;
        uint64_t a = op == 4 ? i : i >> f->bits, b = i & ((1u << f->bits) - 1);
        uint64_t r = op == 4 ? sqrt_generic(f, a, &c) : binary(f, (binop)op, a, b, &c);
        t[i] = (uint16_t)(r << 8 | c.flags);
        if (mark_dep && policy_dependent(f, a, b, op == 4, r, c.flags)) t[i] |= TAB_DEP;
    }
    uint16_t *expected = NULL;
    if (!atomic_compare_exchange_strong(slot, &expected, t)) {
        free(t); /* another thread published first; both are identical */
        t = expected;
    }
    return t;
}

/* The full-configuration table of op under ctx (not sr), or NULL. */
static const uint16_t *config_table(const fpemu_format *f, int fi, int op, const fpemu_ctx *ctx) {
    if ((unsigned)ctx->round >= TAB_MODES || (unsigned)ctx->nan_policy >= FPEMU_NAN_POLICY_COUNT) return NULL;
    int cfg = (((ctx->round << 4) | (!!ctx->sat << 3) | (!!ctx->ftz << 2) | (!!ctx->daz << 1) | !!ctx->tininess_before) *
               FPEMU_NAN_POLICY_COUNT) + (int)ctx->nan_policy;
    _Atomic(uint16_t *) *slot = &tables[fi][op][cfg];
    uint16_t *t = atomic_load_explicit(slot, memory_order_acquire);
    return t ? t : build_table(f, slot, op, ctx, 0);
}

static __attribute__((noinline)) const uint16_t *build_mode_table(const fpemu_format *f, int op, int mode) {
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    c.round = (fpemu_round)mode;
    const emu_fastops *fo = f->fast;
    return build_table(f, (_Atomic(uint16_t *) *)fo->tables + op * FPEMU_ROUND_COUNT + mode, op, &c, 1);
}

/* Index of (a, b) in a binary table; of a in the sqrt table (b = 0). */
static inline unsigned tab_index(const fpemu_format *f, int op, uint64_t a, uint64_t b) {
    unsigned m = (1u << f->bits) - 1;
    return op == 4 ? (unsigned)a & m : ((unsigned)a & m) << f->bits | ((unsigned)b & m);
}

/* A tabulated operation of a <= 8-bit registry format: the mode table when
 * its entry does not depend on the policies, else the configuration table,
 * else (sr, or out of memory) the generic path. */
static __attribute__((noinline)) uint64_t tab_slow(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    if (ctx->round != FPEMU_SR) {
        const uint16_t *t = config_table(f, emu__registry_index(f), op, ctx);
        if (t) {
            unsigned e = t[tab_index(f, op, a, b)];
            ctx->flags |= e & 0x1F;
            return e >> 8;
        }
    }
    return op == 4 ? sqrt_generic(f, a, ctx) : binary(f, op, a, b, ctx);
}

static __attribute__((noinline)) uint64_t tab_first(const fpemu_format *f, int op, uint64_t a, uint64_t b,
                                                    fpemu_ctx *ctx);

static inline uint64_t tab_op(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    unsigned mode = (unsigned)ctx->round;
    if (__builtin_expect(mode < TAB_MODES, 1)) {
        const emu_fastops *fo = f->fast;
        _Atomic(uint16_t *) *slot = (_Atomic(uint16_t *) *)fo->tables + op * FPEMU_ROUND_COUNT + mode;
        const uint16_t *t = atomic_load_explicit(slot, memory_order_acquire);
        if (__builtin_expect(!t, 0)) return tab_first(f, op, a, b, ctx);
        unsigned e = t[tab_index(f, op, a, b)];
        if (__builtin_expect(!(e & TAB_DEP), 1)) {
            emu__or_flags(ctx, e & 0x1F);
            return e >> 8;
        }
    }
    return tab_slow(f, op, a, b, ctx);
}

/* First use of a mode table: build it, then look up (or, with no memory
 * for it, take the slow path). */
static uint64_t tab_first(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    if (!build_mode_table(f, op, (int)ctx->round)) return tab_slow(f, op, a, b, ctx);
    return tab_op(f, op, a, b, ctx);
}

static uint64_t tab_add(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg) {
    return tab_op(f, neg ? OP_SUB : OP_ADD, a, b, ctx);
}
static uint64_t tab_mul(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    return tab_op(f, OP_MUL, a, b, ctx);
}
/* sr of the <= 8-bit registry formats (not tabulated): operands from the
 * decode table, the exact double result, and the rounding of emu__fast_pack
 * with one draw taken inline. Anything else (special operands, results
 * that are not normal and finite, inexact double sums) goes generic. */
static inline __attribute__((always_inline)) uint64_t sr_pack(const emu_fastops *k, double d, const uint64_t *rb,
                                                              fpemu_ctx *ctx) {
    uint64_t u = emu__dbits(d), sign = u >> 63, mag = u & ~(UINT64_C(1) << 63);
    /* branch-free in the sign: random signs would mispredict */
    if ((mag - k->sr_lo >= k->sr_span) | (sign & (k->sr_signbit == 0))) return EMU_FAST_FAIL;
    const int sh = k->sr_sh;
    uint64_t kept = mag >> sh, low = mag & ((UINT64_C(1) << sh) - 1);
    if (kept + 1 > k->sr_maxr) return EMU_FAST_FAIL; /* the upper neighbour must be finite */
    /* rb: the caller's draw (fpemu_add_sr), else the context's */
    uint64_t up = emu__sr_up(rb ? *rb : emu__draw_inline(ctx), low << (64 - sh), ctx->sr_bits);
    emu__or_flags(ctx, low != 0);
    return ((kept + up) - k->sr_rebias) | (k->sr_signbit & (0 - sign));
}

static inline int sums_exact(const fpemu_format *f);

/* sr tables of the 8-bit registry formats: per operand pair, the result
 * rounded toward zero (low byte) and the exact fraction of an ulp above it
 * in 23 bits (the next 23); SR8_SLOW where tab_sr's rounding is not
 * certain to apply: an operand not normal, a result not normal or whose
 * upper neighbour is not finite, a fraction of more than 23 bits (wide
 * exponent gaps in e5m2 sums). An entry holds under every policy: sat,
 * ftz, tininess and the NaN policy act only on the excluded cases, and
 * daz is tested at the lookup. The result is the entry's code, or the
 * next magnitude when the draw falls below the fraction: one draw per
 * call, as sr_pack takes it. */
enum { SR8_FRAC = 23, SR8_SLOW = 0x80000000u };
static __attribute__((noinline)) const uint32_t *build_sr8(const fpemu_format *f, int op) {
    const emu_fastops *k = f->fast;
    uint32_t *t = malloc(sizeof *t << 16);
    if (!t) return NULL; /* an optimisation only */
    const int sh = k->sr_sh, drop = sh - SR8_FRAC;
    for (unsigned i = 0; i < 1u << 16; i++) {
        unsigned ia = i >> 8, ib = i & 0xFF;
        t[i] = SR8_SLOW;
        if (!k->sr_ok || f->class_table[ia] != FPEMU_CLASS_NORMAL || f->class_table[ib] != FPEMU_CLASS_NORMAL) continue;
        double x = f->decode_table[ia], y = f->decode_table[ib], s;
        if (op == OP_MUL) s = x * y; /* p <= 24: exact */
        else {
            if (op == OP_SUB) y = -y;
            s = x + y;
            double bv = s - x, av = s - bv;
            if ((x - av) + (y - bv) != 0) continue;
        }
        uint64_t u = emu__dbits(s), sign = u >> 63, mag = u & ~(UINT64_C(1) << 63);
        if (mag - k->sr_lo >= k->sr_span || (sign && !k->sr_signbit)) continue;
        uint64_t kept = mag >> sh, low = mag & ((UINT64_C(1) << sh) - 1);
        if (kept + 1 > k->sr_maxr || (low & ((UINT64_C(1) << drop) - 1))) continue;
        t[i] = (uint32_t)(((kept - k->sr_rebias) | (k->sr_signbit & (0 - sign))) | (low >> drop) << 8);
    }
    _Atomic(uint32_t *) *slot = &((emu_fastops *)k)->sr8[op];
    uint32_t *expected = NULL;
    if (!atomic_compare_exchange_strong(slot, &expected, t)) {
        free(t); /* another thread published first; both are identical */
        t = expected;
    }
    return t;
}

static uint64_t tab_sr(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx);
/* a table entry e (not SR8_SLOW): its code, or the next magnitude when the
 * draw falls below the fraction */
static inline __attribute__((always_inline)) uint64_t sr8_round(uint32_t e, uint64_t draw, fpemu_ctx *ctx) {
    uint32_t frac = e >> 8;
    uint64_t up = emu__sr_up_low(draw, frac, SR8_FRAC, ctx->sr_bits);
    emu__or_flags(ctx, frac != 0); /* FPEMU_FLAG_INEXACT */
    return (e & 0xFF) + up;
}
/* the sr table entry of the operand pair (a, b) */
static inline uint32_t sr8_at(const uint32_t *t, uint64_t a, uint64_t b) {
    return t[((unsigned)a & 0xFF) << 8 | ((unsigned)b & 0xFF)];
}
static inline uint64_t sr8_hit(const uint32_t *t, const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    uint32_t e = sr8_at(t, a, b);
    if (__builtin_expect(e & SR8_SLOW, 0)) return tab_sr(f, op, a, b, ctx);
    return sr8_round(e, emu__mix(ctx->seed, ctx->counter++), ctx);
}
/* No table yet (built here and used at once, so the first call takes the
 * same path as the others), daz, or a caller stream: tab_sr. Out of line,
 * so the hot path calls nothing. */
static __attribute__((noinline)) uint64_t sr8_other(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    const emu_fastops *k = f->fast;
    const uint32_t *t = atomic_load_explicit(&((emu_fastops *)k)->sr8[op], memory_order_acquire);
    if (!t && (t = build_sr8(f, op)) && !ctx->daz && !ctx->sr_stream) return sr8_hit(t, f, op, a, b, ctx);
    return tab_sr(f, op, a, b, ctx);
}
static inline uint64_t tab_sr8(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    const emu_fastops *k = f->fast;
    const uint32_t *t = atomic_load_explicit(&((emu_fastops *)k)->sr8[op], memory_order_acquire);
    if (__builtin_expect(!t || ctx->daz || ctx->sr_stream, 0)) return sr8_other(f, op, a, b, ctx);
    return sr8_hit(t, f, op, a, b, ctx);
}

/* The double path of tab_sr, with the caller's draw (rb) or the context's:
 * EMU_FAST_FAIL where the generic path decides. */
static inline __attribute__((always_inline)) uint64_t tab_sr_pack(const fpemu_format *f, int op, uint64_t a, uint64_t b,
                                                                  const uint64_t *rb, fpemu_ctx *ctx) {
    const emu_fastops *k = f->fast;
    unsigned m = (1u << f->bits) - 1, ia = (unsigned)a & m, ib = (unsigned)b & m;
    if (!k->sr_ok || ctx->daz || f->class_table[ia] != FPEMU_CLASS_NORMAL || f->class_table[ib] != FPEMU_CLASS_NORMAL)
        return EMU_FAST_FAIL;
    double x = f->decode_table[ia], y = f->decode_table[ib], s;
    if (op == OP_MUL) s = x * y; /* p <= 24: exact */
    else {
        if (op == OP_SUB) y = -y;
        s = x + y;
        if (!k->sr_sumexact) {
            double bv = s - x, av = s - bv;
            if ((x - av) + (y - bv) != 0) return EMU_FAST_FAIL; /* not exact: generic */
        }
    }
    return sr_pack(k, s, rb, ctx);
}
static __attribute__((noinline)) uint64_t tab_sr(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    uint64_t r = tab_sr_pack(f, op, a, b, NULL, ctx);
    return r != EMU_FAST_FAIL ? r : binary(f, op, a, b, ctx);
}
/* The same with the caller's draw (fpemu_add_sr): the double path, else
 * the generic one. */
static __attribute__((noinline)) uint64_t tab_sr_rb(const fpemu_format *f, int op, uint64_t a, uint64_t b,
                                                    uint64_t rbits, fpemu_ctx *ctx) {
    uint64_t r = tab_sr_pack(f, op, a, b, &rbits, ctx);
    if (r != EMU_FAST_FAIL) return r;
    return op == OP_MUL ? emu__mul_sr_generic(f, a, b, rbits, ctx)
                        : emu__add_sr_generic(f, a, b, rbits, ctx, op == OP_SUB);
}
/* and of the 8-bit formats, whose sr table fpemu_add_sr looks up inline:
 * the table (built here on first use) where an entry applies; daz, and
 * entries that do not, take tab_sr_rb */
static __attribute__((noinline)) uint64_t tab8_sr_rb_other(const fpemu_format *f, int op, uint64_t a, uint64_t b,
                                                           uint64_t rbits, fpemu_ctx *ctx) {
    if (f->bits != 8) /* ops without add_rb or mul_rb that are not an 8-bit format's: none today */
        return op == OP_MUL ? emu__mul_sr_generic(f, a, b, rbits, ctx)
                            : emu__add_sr_generic(f, a, b, rbits, ctx, op == OP_SUB);
    const uint32_t *t = atomic_load_explicit(&((emu_fastops *)f->fast)->sr8[op], memory_order_acquire);
    if (!t && (t = build_sr8(f, op)) && !ctx->daz) {
        uint32_t e = sr8_at(t, a, b);
        if (!(e & SR8_SLOW)) return sr8_round(e, rbits, ctx);
    }
    return tab_sr_rb(f, op, a, b, rbits, ctx);
}
static uint64_t tab_add_rb(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx, int neg) {
    return tab_sr_rb(f, OP_ADD + neg, a, b, rbits, ctx);
}
static uint64_t tab_mul_rb(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) {
    return tab_sr_rb(f, OP_MUL, a, b, rbits, ctx);
}
static uint64_t tab_add_sr(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg) {
    return tab_sr(f, neg ? OP_SUB : OP_ADD, a, b, ctx);
}
static uint64_t tab_mul_sr(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    return tab_sr(f, OP_MUL, a, b, ctx);
}
static uint64_t tab8_add_sr(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg) {
    return tab_sr8(f, OP_ADD + neg, a, b, ctx); /* OP_SUB = OP_ADD + 1 */
}
static uint64_t tab8_mul_sr(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    return tab_sr8(f, OP_MUL, a, b, ctx);
}

void emu__tabops(const fpemu_format *f, emu_fastops *o) {
    o->tables = f->bits == 8 ? (void *)o->tab8 : (void *)mode_tables[emu__registry_index(f)];
    for (int m = 0; m < FPEMU_SR; m++) o->add[m] = tab_add, o->mul[m] = tab_mul;
    o->add[FPEMU_SR] = f->bits == 8 ? tab8_add_sr : tab_add_sr;
    o->mul[FPEMU_SR] = f->bits == 8 ? tab8_mul_sr : tab_mul_sr;
    o->add_rb = f->bits == 8 ? NULL : tab_add_rb; /* 8 bits: fpemu_add_sr's inline lookup */
    o->mul_rb = f->bits == 8 ? NULL : tab_mul_rb;
    o->sr_sumexact = sums_exact(f);
    o->sr_ok = f->mbits > 0; /* m = 0 (e8m0): the kept LSB would be an exponent bit */
    o->sr_sh = 52 - f->mbits;
    o->sr_lo = (uint64_t)(1023 + f->emin) << 52;
    o->sr_span = ((uint64_t)(1023 + f->emax + 1) << 52) - o->sr_lo;
    o->sr_maxr = ((uint64_t)(1023 + f->emax) << f->mbits) | f->maxmant;
    o->sr_rebias = (uint64_t)(1023 - f->bias) << f->mbits;
    o->sr_signbit = f->is_signed ? f->sign_bit : 0;
}

/* ---- public operations ------------------------------------------------- */

/* Sums of two values of f are exact doubles when the format's whole span
 * of bits fits in 53. */
static inline int sums_exact(const fpemu_format *f) { return f->emax - f->emin + f->mbits <= 51; }

static uint64_t binary(const fpemu_format *f, binop op, uint64_t ca, uint64_t cb, fpemu_ctx *ctx) {
    double x, y;
    if (emu__bad_mode(ctx)) return emu__nan_result(f, ctx, 1, 0, NULL, NULL);
    if (!ctx->daz && emu__small(f) && emu__fast_decode(f, ca, &x) && emu__fast_decode(f, cb, &y)) {
        double s;
        int rs = 0;
        switch (op) {
        case OP_SUB: y = -y; /* fall through */
        case OP_ADD:
            s = x + y;
            if (!sums_exact(f)) {
                double bv = s - x, av = s - bv;
                rs = sgn((x - av) + (y - bv));
            }
            break;
        case OP_MUL: s = x * y; break;
        default: s = x / y; rs = sgn(fma(-s, y, x)) * sgn(y); break;
        }
        uint64_t r = emu__fast_pack(f, s, rs, ctx);
        if (r != EMU_FAST_FAIL) return r;
    }
    uint64_t codes[2] = {ca, cb};
    opnd o[2] = {load(f, ca, ctx), load(f, cb, ctx)};
    opnd a = o[0], b = o[1];
    if (isnan_k(a.k) || isnan_k(b.k)) return nan_of(f, ctx, 0, 2, codes, o);
    int bs = op == OP_SUB ? !b.sign : b.sign;
    int ainf = a.k == FPEMU_CLASS_INF, binf = b.k == FPEMU_CLASS_INF;
    int az = a.k == FPEMU_CLASS_ZERO, bz = b.k == FPEMU_CLASS_ZERO;
    switch (op) {
    case OP_ADD:
    case OP_SUB:
        if (ainf && binf && a.sign != bs) return invalid_nan(f, ctx);
        if (ainf || binf) return emu__inf_result(f, ctx, ainf ? a.sign : bs);
        if (az && bz) return zero_sum(f, a.sign, bs, ctx);
        break;
    case OP_MUL:
        if ((ainf && bz) || (az && binf)) return invalid_nan(f, ctx);
        if (ainf || binf) return emu__inf_result(f, ctx, a.sign ^ b.sign);
        if (az || bz) return fpemu_round_pack(f, a.sign ^ b.sign, 0, 0, 0, ctx);
        break;
    case OP_DIV:
        if ((ainf && binf) || (az && bz)) return invalid_nan(f, ctx);
        if (ainf) return emu__inf_result(f, ctx, a.sign ^ b.sign);
        if (binf || az) return fpemu_round_pack(f, a.sign ^ b.sign, 0, 0, 0, ctx);
        if (bz) {
            ctx->flags |= FPEMU_FLAG_INFINITE;
            return emu__inf_result(f, ctx, a.sign ^ b.sign);
        }
        break;
    }
    /* sr: the double path rounds a residual only by its sign; the f64 path
     * is exact to 64 bits below the quantum (see add128) */
    if (emu__small(f) && ctx->round != FPEMU_SR) return small_binop(f, op, a.v, b.v, ctx);
    if (az || bz) { /* f64 sums with one zero operand: the other, exactly */
        double v = az ? (op == OP_SUB ? -b.v : b.v) : a.v;
        emu_split u = emu__split_double(v);
        return fpemu_round_pack(f, u.sign, u.sig, u.exp, 0, ctx);
    }
    return f64_binop(f, op, a.v, b.v, ctx);
}

uint64_t emu__binary(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    return binary(f, op, a, b, ctx);
}

/* The hot path of the 8-bit registry formats, inline in fpemu_add, _sub
 * and _mul: a lookup in the mode table of op. One test covers both rare
 * exits, a policy-dependent entry (DEP, bit 7 of the entry, kept whatever
 * ctx->flags holds) and a flag not yet raised; tab_miss takes them out of
 * line, so the hit path keeps its registers. A format without a table
 * (or sr, or a table not built yet) enters its ops directly. */
static __attribute__((noinline)) uint64_t tab_miss(const fpemu_format *f, int op, uint64_t a, uint64_t b,
                                                   fpemu_ctx *ctx, unsigned e) {
    const emu_fastops *fo = f->fast;
    /* a DEP entry holds under the default policies, the ones it was built with */
    int dflt = !ctx->sat && !ctx->ftz && !ctx->daz && !ctx->tininess_before && ctx->nan_policy == FPEMU_NAN_CANONICAL;
    if ((e & TAB_DEP) && !dflt) {
        unsigned m = (unsigned)ctx->round;
        return op == OP_MUL ? fo->mul[m](f, a, b, ctx) : fo->add[m](f, a, b, ctx, op == OP_SUB);
    }
    ctx->flags |= e & 0x1Fu;
    return e >> 8;
}
/* no ops or an invalid mode: the generic path (same arguments as the
 * public calls, so reaching it moves no registers) */
static __attribute__((noinline)) uint64_t add_generic(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    return binary(f, OP_ADD, a, b, ctx);
}
static __attribute__((noinline)) uint64_t sub_generic(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    return binary(f, OP_SUB, a, b, ctx);
}
static __attribute__((noinline)) uint64_t mul_generic(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    return binary(f, OP_MUL, a, b, ctx);
}
#define TAB_HIT_OR(OP, GENERIC, OTHERWISE)                                                                 \
    const emu_fastops *fo = f->fast;                                                                      \
    unsigned m = (unsigned)ctx->round;                                                                    \
    if (__builtin_expect(!fo || m >= FPEMU_ROUND_COUNT, 0)) return GENERIC(f, a, b, ctx);                \
    const uint16_t *t = atomic_load_explicit(&((emu_fastops *)fo)->tab8[OP][m], memory_order_acquire);   \
    if (!t) return OTHERWISE;                                                                             \
    unsigned i = (unsigned)(uint8_t)a << 8 | (uint8_t)b, e = t[i];                                       \
    if (__builtin_expect((uint8_t)(e & (~ctx->flags | TAB_DEP)) != 0, 0)) return tab_miss(f, OP, a, b, ctx, e); \
    return e >> 8;

/* Registry formats enter their tables, specialised or tabulated ops
 * directly. */
uint64_t fpemu_add(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    TAB_HIT_OR(OP_ADD, add_generic, fo->add[m](f, a, b, ctx, 0))
}
uint64_t fpemu_sub(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    TAB_HIT_OR(OP_SUB, sub_generic, fo->add[m](f, a, b, ctx, 1))
}
uint64_t fpemu_mul(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    TAB_HIT_OR(OP_MUL, mul_generic, fo->mul[m](f, a, b, ctx))
}
uint64_t fpemu_div(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    if (f->bits <= 8 && f->fast) return tab_op(f, OP_DIV, a, b, ctx);
    return binary(f, OP_DIV, a, b, ctx);
}

uint64_t fpemu_sqrt(const fpemu_format *f, uint64_t ca, fpemu_ctx *ctx) {
    if (f->bits <= 8 && f->fast) return tab_op(f, 4, ca, 0, ctx);
    return sqrt_generic(f, ca, ctx);
}

static uint64_t sqrt_generic(const fpemu_format *f, uint64_t ca, fpemu_ctx *ctx) {
    double x;
    if (emu__bad_mode(ctx)) return emu__nan_result(f, ctx, 1, 0, NULL, NULL);
    if (!ctx->daz && emu__small(f) && emu__fast_decode(f, ca, &x) && x > 0) {
        double r = sqrt(x);
        uint64_t q = emu__fast_pack(f, r, sgn(fma(-r, r, x)), ctx);
        if (q != EMU_FAST_FAIL) return q;
    }
    opnd a = load(f, ca, ctx);
    if (isnan_k(a.k)) return nan_of(f, ctx, 0, 1, &ca, &a);
    if (a.k == FPEMU_CLASS_ZERO) return fpemu_round_pack(f, a.sign, 0, 0, 0, ctx); /* sqrt(-0) = -0 */
    if (a.sign) return invalid_nan(f, ctx);
    if (a.k == FPEMU_CLASS_INF) return emu__inf_result(f, ctx, 0);
    if (!emu__small(f) || ctx->round == FPEMU_SR) return f64_sqrt(f, a.v, ctx);
    double r = sqrt(a.v);
    return emu__round_double(f, r, sgn(fma(-r, r, a.v)), ctx);
}

uint64_t fpemu_fma(const fpemu_format *f, uint64_t ca, uint64_t cb, uint64_t cc, fpemu_ctx *ctx) {
    const emu_fastops *fo = f->fast;
    unsigned m = (unsigned)ctx->round;
    if (fo && m < FPEMU_ROUND_COUNT && fo->fma[m]) return fo->fma[m](f, ca, cb, cc, ctx);
    return emu__fma_generic(f, ca, cb, cc, ctx);
}

/* ---- sr with the caller's draw -----------------------------------------
 * fpemu_add_sr and friends are, by definition, the operation on a copy of
 * ctx in sr whose caller stream is the one draw rbits; only the flags come
 * back. That is also their generic path (emu__add_sr_generic ...). The
 * formats with specialised ops take the common case without the copy (the
 * ops' add_rb, mul_rb, fma_rb, which tail-call the generic path for the
 * rest), and tests/t_emu_sr checks them against the definition. */
static fpemu_ctx *rb_ctx(fpemu_ctx *c, const fpemu_ctx *ctx, const uint64_t *rbits) {
    *c = *ctx;
    c->round = FPEMU_SR;
    c->sr_stream = rbits;
    c->sr_len = 1;
    c->sr_pos = 0;
    return c;
}
enum { RB_ADD, RB_SUB, RB_MUL, RB_DIV, RB_SQRT, RB_FMA, RB_CONVERT, RB_FLOAT };
typedef struct { const fpemu_format *f, *src; uint64_t a, b, c; float x; } rb_args;
static __attribute__((noinline)) uint64_t rb_generic(int op, const rb_args *g, uint64_t rbits, fpemu_ctx *ctx) {
    fpemu_ctx t;
    rb_ctx(&t, ctx, &rbits);
    uint64_t r;
    switch (op) {
    case RB_ADD: r = fpemu_add(g->f, g->a, g->b, &t); break;
    case RB_SUB: r = fpemu_sub(g->f, g->a, g->b, &t); break;
    case RB_MUL: r = fpemu_mul(g->f, g->a, g->b, &t); break;
    case RB_DIV: r = fpemu_div(g->f, g->a, g->b, &t); break;
    case RB_SQRT: r = fpemu_sqrt(g->f, g->a, &t); break;
    case RB_FMA: r = fpemu_fma(g->f, g->a, g->b, g->c, &t); break;
    case RB_CONVERT: r = fpemu_convert(g->f, g->src, g->a, &t); break;
    default: r = fpemu_from_float(g->f, g->x, &t); break;
    }
    ctx->flags = t.flags;
    return r;
}
uint64_t emu__add_sr_generic(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx, int neg) {
    return rb_generic(neg ? RB_SUB : RB_ADD, &(rb_args){.f = f, .a = a, .b = b}, rbits, ctx);
}
uint64_t emu__mul_sr_generic(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) {
    return rb_generic(RB_MUL, &(rb_args){.f = f, .a = a, .b = b}, rbits, ctx);
}
uint64_t emu__fma_sr_generic(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits, fpemu_ctx *ctx) {
    return rb_generic(RB_FMA, &(rb_args){.f = f, .a = a, .b = b, .c = c}, rbits, ctx);
}
/* Registry formats with specialised ops enter them directly (a tail call);
 * the 8-bit formats (add_rb and mul_rb NULL) look up their sr table
 * inline, and enter tab8_sr_rb_other before it is built or where it does
 * not apply. */
#define SR8_HIT_OR(OP, FN, ARGS)                                                                           \
    const emu_fastops *fo = f->fast;                                                                      \
    if (__builtin_expect(!fo, 0)) return emu__##FN##_sr_generic ARGS;                                     \
    if (fo->FN##_rb) return fo->FN##_rb ARGS;                                                             \
    const uint32_t *t = atomic_load_explicit(&((emu_fastops *)fo)->sr8[OP], memory_order_acquire);       \
    uint32_t e;                                                                                           \
    if (__builtin_expect(!t || ctx->daz || ((e = sr8_at(t, a, b)) & SR8_SLOW), 0))                     \
        return tab8_sr_rb_other(f, OP, a, b, rbits, ctx);                                                 \
    return sr8_round(e, rbits, ctx);
uint64_t fpemu_add_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) {
    SR8_HIT_OR(OP_ADD, add, (f, a, b, rbits, ctx, 0))
}
uint64_t fpemu_sub_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) {
    SR8_HIT_OR(OP_SUB, add, (f, a, b, rbits, ctx, 1))
}
uint64_t fpemu_mul_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) {
    SR8_HIT_OR(OP_MUL, mul, (f, a, b, rbits, ctx))
}
uint64_t fpemu_fma_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits, fpemu_ctx *ctx) {
    const emu_fastops *fo = f->fast;
    return (fo && fo->fma_rb ? fo->fma_rb : emu__fma_sr_generic)(f, a, b, c, rbits, ctx);
}
uint64_t fpemu_div_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) {
    return rb_generic(RB_DIV, &(rb_args){.f = f, .a = a, .b = b}, rbits, ctx);
}
uint64_t fpemu_sqrt_sr(const fpemu_format *f, uint64_t a, uint64_t rbits, fpemu_ctx *ctx) {
    return rb_generic(RB_SQRT, &(rb_args){.f = f, .a = a}, rbits, ctx);
}
uint64_t fpemu_convert_sr(const fpemu_format *dst, const fpemu_format *src, uint64_t a, uint64_t rbits,
                          fpemu_ctx *ctx) {
    return rb_generic(RB_CONVERT, &(rb_args){.f = dst, .src = src, .a = a}, rbits, ctx);
}
uint64_t emu__from_float_sr_generic(const fpemu_format *dst, float x, uint64_t rbits, fpemu_ctx *ctx) {
    return rb_generic(RB_FLOAT, &(rb_args){.f = dst, .x = x}, rbits, ctx);
}
uint64_t fpemu_from_float_sr(const fpemu_format *dst, float x, uint64_t rbits, fpemu_ctx *ctx) {
    const emu_fastops *fo = dst->fast;
    return (fo && fo->from_f32_rb ? fo->from_f32_rb : emu__from_float_sr_generic)(dst, x, rbits, ctx);
}

uint64_t emu__fma_generic(const fpemu_format *f, uint64_t ca, uint64_t cb, uint64_t cc, fpemu_ctx *ctx) {
    double x, y, z;
    if (emu__bad_mode(ctx)) return emu__nan_result(f, ctx, 1, 0, NULL, NULL);
    if (!ctx->daz && emu__small(f) && emu__fast_decode(f, ca, &x) && emu__fast_decode(f, cb, &y) &&
        emu__fast_decode(f, cc, &z)) {
        double p = x * y, s = p + z, bv = s - p, av = s - bv; /* p exact; TwoSum */
        uint64_t q = emu__fast_pack(f, s, sgn((p - av) + (z - bv)), ctx);
        if (q != EMU_FAST_FAIL) return q;
    }
    uint64_t codes[3] = {ca, cb, cc};
    opnd o[3] = {load(f, ca, ctx), load(f, cb, ctx), load(f, cc, ctx)};
    opnd a = o[0], b = o[1], c = o[2];
    int ainf = a.k == FPEMU_CLASS_INF, binf = b.k == FPEMU_CLASS_INF, cinf = c.k == FPEMU_CLASS_INF;
    int az = a.k == FPEMU_CLASS_ZERO, bz = b.k == FPEMU_CLASS_ZERO, cz = c.k == FPEMU_CLASS_ZERO;
    /* 0 x inf is invalid even when c is a quiet NaN (IEEE 754 7.2). */
    int inv = (ainf && bz) || (az && binf);
    if (isnan_k(a.k) || isnan_k(b.k) || isnan_k(c.k) || inv) return nan_of(f, ctx, inv, 3, codes, o);
    int sp = a.sign ^ b.sign;
    if (ainf || binf) {
        if (cinf && c.sign != sp) return invalid_nan(f, ctx);
        return emu__inf_result(f, ctx, sp);
    }
    if (cinf) return emu__inf_result(f, ctx, c.sign);
    if (az || bz) {
        if (cz) return zero_sum(f, sp, c.sign, ctx);
        if (emu__small(f)) return emu__round_double(f, c.v, 0, ctx);
        emu_split u = emu__split_double(c.v);
        return fpemu_round_pack(f, u.sign, u.sig, u.exp, 0, ctx);
    }
    if (emu__small(f) && ctx->round != FPEMU_SR) {
        double p = a.v * b.v; /* exact */
        if (cz) return emu__round_double(f, p, 0, ctx);
        double s = p + c.v, bv = s - p, av = s - bv;
        double e = (p - av) + (c.v - bv);
        if (s == 0) return zero_sum(f, sp, c.sign, ctx);
        return emu__round_double(f, s, sgn(e), ctx);
    }
    if (cz) return f64_binop(f, OP_MUL, a.v, b.v, ctx);
    return f64_fma(f, a.v, b.v, c.v, ctx);
}

/* ---- comparisons, min and max -------------------------------------------- */

/* Order of two non-NaN operands: -1, 0, 1 (zeros equal). */
static int order(const opnd *a, const opnd *b) {
    double x = a->k == FPEMU_CLASS_INF ? (a->sign ? -INFINITY : INFINITY) : a->v;
    double y = b->k == FPEMU_CLASS_INF ? (b->sign ? -INFINITY : INFINITY) : b->v;
    return (x > y) - (x < y);
}

fpemu_cmp fpemu_compare(const fpemu_format *f, uint64_t ca, uint64_t cb, int signaling, fpemu_ctx *ctx) {
    opnd a = load(f, ca, ctx), b = load(f, cb, ctx);
    if (isnan_k(a.k) || isnan_k(b.k)) {
        if (signaling || a.k == FPEMU_CLASS_SNAN || b.k == FPEMU_CLASS_SNAN) ctx->flags |= FPEMU_FLAG_INVALID;
        return FPEMU_UN;
    }
    return (fpemu_cmp)order(&a, &b);
}

/* IEEE 754-2019 minimum/maximum (num = 0) and minimumNumber/maximumNumber
 * (num = 1); -0 orders below +0 in both. */
static uint64_t minmax(const fpemu_format *f, uint64_t ca, uint64_t cb, int want_max, int num, fpemu_ctx *ctx) {
    /* the result is one of the operands: without the bits outside the field */
    ca = emu__field(f, ca), cb = emu__field(f, cb);
    uint64_t codes[2] = {ca, cb};
    opnd o[2] = {load(f, ca, ctx), load(f, cb, ctx)};
    int an = isnan_k(o[0].k), bn = isnan_k(o[1].k);
    if (an || bn) {
        if (num && !(an && bn)) {
            if (o[0].k == FPEMU_CLASS_SNAN || o[1].k == FPEMU_CLASS_SNAN) ctx->flags |= FPEMU_FLAG_INVALID;
            return an ? cb : ca;
        }
        return nan_of(f, ctx, 0, 2, codes, o);
    }
    int c = order(&o[0], &o[1]);
    if (c == 0 && o[0].sign != o[1].sign) c = o[0].sign ? -1 : 1; /* -0 < +0 */
    uint64_t r = (c >= 0) == want_max ? ca : cb;
    if (c == 0) r = ca;
    opnd rr = load(f, r, ctx); /* daz: a flushed subnormal is delivered as zero */
    if (rr.k == FPEMU_CLASS_ZERO) return fpemu_round_pack(f, rr.sign, 0, 0, 0, ctx);
    return r;
}

uint64_t fpemu_min(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) { return minmax(f, a, b, 0, 0, ctx); }
uint64_t fpemu_max(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) { return minmax(f, a, b, 1, 0, ctx); }
uint64_t fpemu_min_num(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) { return minmax(f, a, b, 0, 1, ctx); }
uint64_t fpemu_max_num(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) { return minmax(f, a, b, 1, 1, ctx); }
