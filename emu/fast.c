/* SPDX-License-Identifier: MIT */
/* fast.c: fast paths. Each computes exactly what the generic path
 * (round.c) computes, for the common case only, and says "no" (returns
 * EMU_FAST_FAIL / 0) before touching the context otherwise, so a fallback
 * to the generic path sees the same state. tests/t_emu_fast checks them
 * against the generic path bit for bit. */
#include <math.h>
#include <string.h>
#include "internal.h"

/* Decode a code of a format with p <= 24 to its exact double, for finite
 * values; 0 for inf/NaN or formats without a fast decoder. */
int emu__fast_decode(const fpemu_format *f, uint64_t code, double *v) {
    if (f->bits <= 8 && f->decode_table) { /* 2 KiB tables: L1-resident */
        uint64_t c = emu__strip(f, code); /* bits above the format's are ignored, as everywhere */
        if (f->class_table[c] > FPEMU_CLASS_NORMAL) return 0;
        *v = f->decode_table[c];
        return 1;
    }
    /* without subnormals exponent field 0 is a normal binade: generic decode */
    if (f->nan != FPEMU_NANS_IEEE || f->bits == 64 || !f->has_subnormals) return 0;
    /* IEEE-style layouts: place the fields into a double's. */
    uint64_t c = emu__strip(f, code);
    const int m = f->mbits;
    const uint64_t eall = (UINT64_C(1) << f->ebits) - 1;
    uint64_t expf = (c >> m) & eall, mant = c & ((UINT64_C(1) << m) - 1);
    uint64_t sign = (c & f->sign_bit) ? UINT64_C(1) << 63 : 0;
    if (expf == eall) return 0;
    if (expf == 0) {
        /* zero or subnormal: mant * 2^(emin - m), exact */
        double scale = emu__bitsd((uint64_t)(1023 + f->emin - m) << 52);
        double x = (double)mant * scale;
        *v = sign ? -x : x;
        return 1;
    }
    *v = emu__bitsd(sign | (expf - (uint64_t)f->bias + 1023) << 52 | mant << (52 - m));
    return 1;
}

/* Round d (+ a tiny residual of sign rsign) to f when the result is a
 * normal number that does not overflow; otherwise EMU_FAST_FAIL. */
uint64_t emu__fast_pack(const fpemu_format *f, double d, int rsign, fpemu_ctx *ctx) {
    uint64_t u = emu__dbits(d);
    int sign = (int)(u >> 63);
    int E = (int)((u >> 52) & 0x7FF) - 1023;
    /* m = 0 formats: the kept LSB below would be an exponent bit, not the significand's */
    if (E < f->emin || E > f->emax || (sign && !f->is_signed) || f->mbits == 0) return EMU_FAST_FAIL;
    const int m = f->mbits, sh = 52 - m;
    uint64_t mag = u & ~(UINT64_C(1) << 63);
    uint64_t low = mag & ((UINT64_C(1) << sh) - 1), half = UINT64_C(1) << (sh - 1);
    /* a residual matters only when d sits on a representable value or a
     * midpoint; leave those to the generic path */
    if (rsign && (low == 0 || low == half)) return EMU_FAST_FAIL;
    if (rsign && ctx->round == FPEMU_SR) return EMU_FAST_FAIL;
    uint64_t inc = 0;
    uint64_t kept = mag >> sh;
    switch (ctx->round) {
    case FPEMU_RNE: inc = low > half || (low == half && (kept & 1)); break;
    case FPEMU_RNA: inc = low >= half; break;
    case FPEMU_RTZ: break;
    case FPEMU_RUP: inc = low && !sign; break;
    case FPEMU_RDN: inc = low && sign; break;
    case FPEMU_RTO: if (low) kept |= 1; break;
    default: break; /* sr: decided below, after the overflow check */
    }
    uint64_t r = kept + inc;
    int Er = (int)(r >> m) - 1023;
    uint64_t mmask = (UINT64_C(1) << m) - 1;
    if (ctx->round == FPEMU_SR) {
        /* the upper neighbour must not overflow either, or the draw would decide */
        uint64_t up = kept + 1;
        int Eu = (int)(up >> m) - 1023;
        if (Eu > f->emax || (Eu == f->emax && (up & mmask) > f->maxmant)) return EMU_FAST_FAIL;
        /* one draw per rounding, exact or not, as the generic path takes */
        r = kept + emu__sr_up(emu__draw(ctx), low << (64 - sh), ctx->sr_bits);
        Er = (int)(r >> m) - 1023;
    } else if (Er > f->emax || (Er == f->emax && (r & mmask) > f->maxmant)) {
        return EMU_FAST_FAIL;
    }
    emu__or_flags(ctx, low != 0); /* FPEMU_FLAG_INEXACT */
    uint64_t code = ((uint64_t)(Er + f->bias) << m | (r & mmask)) | (sign ? f->sign_bit : 0);
    return emu__unstrip(f, code);
}

/* ---- specialised scalar paths for the hot formats -----------------------
 * fpemu_add/sub/mul/fma of f16, bf16 and f32 (and fma of e5m2, e4m3 and
 * the fnuz formats) enter here directly. The same algorithm as
 * emu__fast_decode/emu__fast_pack above, with the format's parameters as compile-time constants so shifts and
 * masks fold; the deterministic modes run in a leaf function with one
 * predictable branch per special case, sr in its own function, and every
 * case they do not handle (inf/NaN operands, daz subnormals, results that
 * are zero, subnormal, overflow, or sit where the residual decides) tail
 * calls the generic path (arith.c), which computes everything again; f16
 * and bf16 in the deterministic modes tail call their complete paths
 * instead (below), which do every case but daz with a subnormal operand. */

typedef struct { int m, bias, emin, emax, bits, sumexact; uint64_t maxmant; } fk;

/* Exact double of a finite code; 0 for inf/NaN and, under daz, for
 * subnormals (the generic path flushes them). */
static inline __attribute__((always_inline)) int kdec(const fk K, uint64_t c, int daz, double *v) {
    const uint64_t signbit = UINT64_C(1) << (K.bits - 1), magmask = signbit - 1;
    const uint64_t one = UINT64_C(1) << K.m, expmask = magmask & ~(one - 1);
    if (__builtin_expect((c & expmask) - one < expmask - one, 1)) { /* normal: move the fields into a double's */
        *v = emu__bitsd((c & signbit) << (64 - K.bits) | (((c & magmask) << (52 - K.m)) + ((uint64_t)(1023 - K.bias) << 52)));
        return 1;
    }
    if ((c & expmask) == expmask) return 0; /* inf/NaN (IEEE-style layouts only) */
    uint64_t mant = c & (one - 1);
    if (mant && daz) return 0;
    double x = (double)mant * emu__bitsd((uint64_t)(1023 + K.emin - K.m) << 52);
    *v = c & signbit ? -x : x;
    return 1;
}

/* Round d (+ a tiny residual of sign rsign) in a deterministic mode when
 * the result is normal and finite; EMU_FAST_FAIL otherwise. */
static inline __attribute__((always_inline)) uint64_t kpack(const fk K, double d, int rsign, int mode, fpemu_ctx *ctx) {
    const int sh = 52 - K.m;
    const uint64_t lo = (uint64_t)(1023 + K.emin) << 52, hi = (uint64_t)(1023 + K.emax + 1) << 52;
    const uint64_t lowmask = (UINT64_C(1) << sh) - 1, half = UINT64_C(1) << (sh - 1);
    const uint64_t maxr = ((uint64_t)(1023 + K.emax) << K.m) | K.maxmant;
    uint64_t u = emu__dbits(d), sign = u >> 63, mag = u & ~(UINT64_C(1) << 63);
    if (mag - lo >= hi - lo) return EMU_FAST_FAIL; /* zero, tiny, or beyond emax */
    uint64_t low = mag & lowmask, r;
    /* a residual matters only where d sits on a representable value or a midpoint */
    if (rsign && (low == 0 || low == half)) return EMU_FAST_FAIL;
    switch (mode) {
    case FPEMU_RNE: r = (mag + (half - 1) + ((mag >> sh) & 1)) >> sh; break;
    case FPEMU_RNA: r = (mag + half) >> sh; break;
    case FPEMU_RTZ: r = mag >> sh; break;
    case FPEMU_RUP: r = (mag + (sign ? 0 : lowmask)) >> sh; break;
    case FPEMU_RDN: r = (mag + (sign ? lowmask : 0)) >> sh; break;
    default: r = (mag >> sh) | (low != 0); break; /* rto */
    }
    if (r > maxr) return EMU_FAST_FAIL; /* overflow: the generic path applies the policy */
    emu__or_flags(ctx, low != 0);              /* FPEMU_FLAG_INEXACT */
    return (r - ((uint64_t)(1023 - K.bias) << K.m)) | sign << (K.bits - 1);
}

/* The same in sr: one draw per rounding (taken even when the value is
 * exact), as the generic path takes; up with probability low / ulp. The
 * upper neighbour must be finite too, or the draw would decide overflow.
 * The draw is *rb (the caller's: fpemu_add_sr), or the context's when rb is
 * NULL. */
static inline __attribute__((always_inline)) uint64_t kpack_sr(const fk K, double d, int rsign, const uint64_t *rb,
                                                               fpemu_ctx *ctx) {
    const int sh = 52 - K.m;
    const uint64_t lo = (uint64_t)(1023 + K.emin) << 52, hi = (uint64_t)(1023 + K.emax + 1) << 52;
    const uint64_t lowmask = (UINT64_C(1) << sh) - 1;
    const uint64_t maxr = ((uint64_t)(1023 + K.emax) << K.m) | K.maxmant;
    uint64_t u = emu__dbits(d), sign = u >> 63, mag = u & ~(UINT64_C(1) << 63);
    if (mag - lo >= hi - lo || rsign) return EMU_FAST_FAIL;
    uint64_t kept = mag >> sh, low = mag & lowmask;
    if (kept + 1 > maxr) return EMU_FAST_FAIL;
    uint64_t up = emu__sr_up(rb ? *rb : emu__draw_inline(ctx), low << (64 - sh), ctx->sr_bits);
    emu__or_flags(ctx, low != 0);
    return ((kept + up) - ((uint64_t)(1023 - K.bias) << K.m)) | sign << (K.bits - 1);
}
/* kpack in a deterministic mode, kpack_sr in sr */
static inline __attribute__((always_inline)) uint64_t kround(const fk K, double d, int rsign, int mode, const uint64_t *rb,
                                                             fpemu_ctx *ctx) {
    return mode == FPEMU_SR ? kpack_sr(K, d, rsign, rb, ctx) : kpack(K, d, rsign, mode, ctx);
}

static inline int ksgn(double r) { return (r > 0) - (r < 0); }
/* The same for a TwoSum residual, which is almost always zero (operands of
 * similar magnitude): the predicted test skips the sign computation. */
static inline int kres(double r) { return __builtin_expect(r == 0, 1) ? 0 : ksgn(r); }

/* Exact sum (TwoSum residual sign when sums are not exact doubles). */
#define KSUM(K, x, y, s, rs)                                \
    double s = (x) + (y);                                   \
    int rs = 0;                                             \
    if (!(K).sumexact) {                                    \
        double bv_ = s - (x), av_ = s - bv_;                \
        rs = ksgn(((x) - av_) + ((y) - bv_));               \
    }

/* a +- b, a * b and a * b + c of finite codes in the double domain,
 * rounded in mode (sr: the draw *rb, or the context's when rb is NULL);
 * EMU_FAST_FAIL where the generic path decides, before any change to ctx. */
static inline __attribute__((always_inline)) uint64_t kadd(const fk K, uint64_t a, uint64_t b, int neg, int mode,
                                                           const uint64_t *rb, fpemu_ctx *ctx) {
    double x, y;
    if (!kdec(K, a, ctx->daz, &x) || !kdec(K, b ^ (uint64_t)neg << (K.bits - 1), ctx->daz, &y)) return EMU_FAST_FAIL;
    KSUM(K, x, y, s, rs)
    return kround(K, s, rs, mode, rb, ctx);
}
static inline __attribute__((always_inline)) uint64_t kmul(const fk K, uint64_t a, uint64_t b, int mode,
                                                           const uint64_t *rb, fpemu_ctx *ctx) {
    double x, y;
    if (!kdec(K, a, ctx->daz, &x) || !kdec(K, b, ctx->daz, &y)) return EMU_FAST_FAIL;
    return kround(K, x * y, 0, mode, rb, ctx); /* p <= 24: exact product */
}
/* x * y + z of exact doubles whose product is exact */
static inline __attribute__((always_inline)) uint64_t kfma_dec(const fk K, double x, double y, double z, int mode,
                                                               const uint64_t *rb, fpemu_ctx *ctx) {
    double p = x * y; /* exact */
    double s = p + z, bv = s - p, av = s - bv;
    return kround(K, s, kres((p - av) + (z - bv)), mode, rb, ctx);
}
static inline __attribute__((always_inline)) uint64_t kfma(const fk K, uint64_t a, uint64_t b, uint64_t c, int mode,
                                                           const uint64_t *rb, fpemu_ctx *ctx) {
    double x, y, z;
    if (!kdec(K, a, ctx->daz, &x) || !kdec(K, b, ctx->daz, &y) || !kdec(K, c, ctx->daz, &z)) return EMU_FAST_FAIL;
    return kfma_dec(K, x, y, z, mode, rb, ctx);
}

/* One function per format, operation and mode: the mode is a constant,
 * so each deterministic one is a short leaf. */
#define FAST_ADD(NAME, MODE)                                                                              \
    static __attribute__((noinline)) uint64_t add_##NAME##_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                   fpemu_ctx *ctx, int neg) {            \
        uint64_t r = kadd(K_##NAME, a, b, neg, FPEMU_##MODE, NULL, ctx);                                  \
        return r != EMU_FAST_FAIL ? r : emu__binary(f, neg ? EMU_OP_SUB : EMU_OP_ADD, a, b, ctx);        \
    }                                                                                                     \
    static __attribute__((noinline)) uint64_t mul_##NAME##_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                   fpemu_ctx *ctx) {                     \
        uint64_t r = kmul(K_##NAME, a, b, FPEMU_##MODE, NULL, ctx);                                       \
        return r != EMU_FAST_FAIL ? r : emu__binary(f, EMU_OP_MUL, a, b, ctx);                            \
    }
#define FAST_FMA(NAME, MODE)                                                                              \
    static __attribute__((noinline)) uint64_t fma_##NAME##_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                   uint64_t c, fpemu_ctx *ctx) {         \
        uint64_t r = kfma(K_##NAME, a, b, c, FPEMU_##MODE, NULL, ctx);                                    \
        return r != EMU_FAST_FAIL ? r : emu__fma_generic(f, a, b, c, ctx);                                \
    }
/* sr with the caller's draw rbits (fpemu_add_sr and friends): the same
 * paths, falling back to their generic path. */
#define FAST_RB(NAME)                                                                                     \
    static uint64_t add_##NAME##_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx, \
                                    int neg) {                                                           \
        uint64_t r = kadd(K_##NAME, a, b, neg, FPEMU_SR, &rbits, ctx);                                    \
        return r != EMU_FAST_FAIL ? r : emu__add_sr_generic(f, a, b, rbits, ctx, neg);                    \
    }                                                                                                     \
    static uint64_t mul_##NAME##_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) { \
        uint64_t r = kmul(K_##NAME, a, b, FPEMU_SR, &rbits, ctx);                                         \
        return r != EMU_FAST_FAIL ? r : emu__mul_sr_generic(f, a, b, rbits, ctx);                         \
    }                                                                                                     \
    static uint64_t fma_##NAME##_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits, \
                                    fpemu_ctx *ctx) {                                                    \
        uint64_t r = kfma(K_##NAME, a, b, c, FPEMU_SR, &rbits, ctx);                                      \
        return r != EMU_FAST_FAIL ? r : emu__fma_sr_generic(f, a, b, c, rbits, ctx);                      \
    }
#define FAST_SR(NAME) FAST_ADD(NAME, SR) FAST_FMA(NAME, SR) FAST_RB(NAME)
#define FAST_MODES(X, NAME) X(NAME, RNE) X(NAME, RNA) X(NAME, RTZ) X(NAME, RUP) X(NAME, RDN) X(NAME, RTO)
#define FAST_MODES_1(X) X(RNE) X(RNA) X(RTZ) X(RUP) X(RDN) X(RTO)
#define FAST_TABLE(OP, NAME)                                                                              \
    { OP##_##NAME##_RNE, OP##_##NAME##_RNA, OP##_##NAME##_RTZ, OP##_##NAME##_RUP, OP##_##NAME##_RDN,   \
      OP##_##NAME##_RTO, OP##_##NAME##_SR }
#define FAST_FORMAT(NAME)                                                                                 \
    FAST_MODES(FAST_ADD, NAME) FAST_MODES(FAST_FMA, NAME) FAST_SR(NAME)                                   \
    static const emu_fastops ops_##NAME = {.add = FAST_TABLE(add, NAME), .mul = FAST_TABLE(mul, NAME),   \
                                           .fma = FAST_TABLE(fma, NAME), .add_rb = add_##NAME##_RB,      \
                                           .mul_rb = mul_##NAME##_RB, .fma_rb = fma_##NAME##_RB};

/*                      m   bias emin  emax bits sums-exact maxmant */
static const fk K_f16  = {10, 15,  -14,  15,  16,  1,         0x3FF};
static const fk K_bf16 = {7,  127, -126, 127, 16,  0,         0x7F};
static const fk K_f32  = {23, 127, -126, 127, 32,  0,         0x7FFFFF};

/* ---- the complete paths of f16 and bf16 ----------------------------------
 * What the fast paths above refuse (special operands; results that are
 * zero, subnormal, the smallest normal after rounding, overflowing; bf16
 * sums of operands far apart) used to go to the generic path (arith.c,
 * 40-50 ns a call on uniformly random codes). Here, for the deterministic
 * modes, every case is done directly:
 *  - inf and NaN operands by their class (spec16), with the NaN policy of
 *    emu__nan_result and the inf result of emu__inf_result;
 *  - finite operands through their exact doubles: a product of two 16-bit
 *    values is exact, a sum is the double s with the sign of its TwoSum
 *    residual (exact for f16), fma the exact product plus TwoSum;
 *  - then kfull rounds that value (+ the residual) exactly as
 *    fpemu_round_pack does, in 64-bit integers: the double's significand at
 *    the top of a word, a residual as a sticky bit above it or one unit
 *    less below it (|residual| <= ulp(s) / 2 is at most 2^10 units of the
 *    word, so neither proxy crosses a multiple of the 2^52 or more units at
 *    which a rounding decision lies); the quantum of the result's binade,
 *    or of the subnormal grid below 2^emin; tininess after rounding (the
 *    value rounded to p bits with unbounded exponent is below 2^emin: only
 *    possible from the binade just below) or before (the exact value is);
 *    ftz, the overflow result per mode and sat.
 * daz with a subnormal operand, sr, and anything else take the generic
 * path as before. tests/t_emu_fast compares these paths with the generic
 * one on random codes (every mode and policy) and on every class of edge. */

/* The rounded significand of kept + rem / 2^sh (half = 2^(sh - 1)). */
static inline __attribute__((always_inline)) uint64_t kinc(uint64_t kept, uint64_t rem, uint64_t half, uint64_t sign,
                                                           int mode) {
    switch (mode) {
    case FPEMU_RNE: return kept + ((rem > half) | ((rem == half) & kept & 1));
    case FPEMU_RNA: return kept + (rem >= half);
    case FPEMU_RTZ: return kept;
    case FPEMU_RUP: return kept + ((rem != 0) & !sign);
    case FPEMU_RDN: return kept + ((rem != 0) & sign);
    default: return kept | (rem != 0); /* rto */
    }
}

/* Round d (finite, nonzero) + a tiny residual of sign rs to an IEEE-style
 * format of K in a deterministic mode, with every policy but daz (which
 * acts on operands) and the NaN policy (no NaN comes out): the code, and
 * the flags in *flp (not yet OR-ed into ctx). Branch-free but for ftz, so
 * that a mix of classes (random codes) costs no misprediction. */
static inline __attribute__((always_inline)) uint64_t kfull(const fk K, double d, int rs, int mode, const fpemu_ctx *ctx,
                                                            unsigned *flp) {
    const int m = K.m;
    const uint64_t maxcode = ((uint64_t)(K.emax + K.bias) << m) | K.maxmant;
    uint64_t u = emu__dbits(d), sign = u >> 63;
    int E = (int)((u >> 52) & 0x7FF) - 1023;
    uint64_t S = (u << 11) | (UINT64_C(1) << 63); /* d's significand, leading bit at 63 */
    int rmag = sign ? -rs : rs;                    /* +1: the exact magnitude is above |d| */
    S = (S | (uint64_t)(rmag > 0)) - (uint64_t)(rmag < 0);
    uint64_t n = (S >> 63) ^ 1; /* |d| a power of two, the value below it: one binade down */
    S = S << n | n;
    E -= (int)n;
    int over = K.emin - E;
    int sh = 63 - m + (over > 0 ? over : 0);
    uint64_t Sx = sh > 64 ? 1 : S; /* below half the smallest subnormal: only that it is nonzero counts */
    sh = sh > 64 ? 64 : sh;
    uint64_t rem = Sx & (~UINT64_C(0) >> (64 - sh));
    uint64_t r = kinc((Sx >> 1) >> (sh - 1), rem, UINT64_C(1) << (sh - 1), sign, mode);
    unsigned fl = rem != 0; /* FPEMU_FLAG_INEXACT */
    /* tiny: below 2^emin before rounding; after rounding, from the binade
     * just below it only if rounding to p bits does not carry up to 2^emin
     * (computed without a branch: near the smallest normal it would
     * mispredict) */
    const int su = 63 - m;
    uint64_t ru = kinc(S >> su, S & ((UINT64_C(1) << su) - 1), UINT64_C(1) << (su - 1), sign, mode);
    unsigned below = (unsigned)(E == K.emin - 1) & (ctx->tininess_before ? 1u : (unsigned)!(ru >> (m + 1)));
    unsigned tiny = (unsigned)(E < K.emin - 1) | below;
    const uint64_t sb = sign << (K.bits - 1);
    if (__builtin_expect(tiny & ctx->ftz, 0)) {
        *flp = FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT;
        return sb;
    }
    fl |= (tiny & fl) << 1; /* FPEMU_FLAG_UNDERFLOW */
    int eb = (E > K.emin ? E : K.emin) + K.bias - 1; /* 0 below 2^emin: r is the subnormal code */
    uint64_t c = r + ((uint64_t)eb << m);           /* a carry moves into the exponent */
    const int to_inf = mode == FPEMU_RNE || mode == FPEMU_RNA || (mode == FPEMU_RUP && !sign) || (mode == FPEMU_RDN && sign);
    uint64_t ovr = to_inf && !ctx->sat ? maxcode + 1 : maxcode;
    int ov = c > maxcode;
    *flp = fl | (ov ? FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT : 0);
    return (ov ? ovr : c) | sb;
}

/* inf and NaN operands of a 16-bit IEEE-style format (a, b, c as given:
 * b not negated; neg: the operation is a - b), as arith.c's generic path
 * decides them: the canonical NaN policy and inf results without sat here,
 * the others through emu__nan_result and emu__inf_result. */
enum { K_ADD, K_MUL, K_FMA };
static inline __attribute__((always_inline)) uint64_t knan(const fpemu_format *f, fpemu_ctx *ctx, int invalid, int n,
                                                           const uint64_t *codes) {
    if (__builtin_expect(ctx->nan_policy == FPEMU_NAN_CANONICAL, 1)) {
        if (invalid) ctx->flags |= FPEMU_FLAG_INVALID;
        return 0x7FFFu & ~((UINT64_C(1) << (f->mbits - 1)) - 1); /* exponent all ones, quiet bit: 0x7E00, 0x7FC0 */
    }
    const fpemu_format *const fm[3] = {f, f, f};
    return emu__nan_result(f, ctx, invalid, n, codes, fm);
}
static inline __attribute__((always_inline)) uint64_t kinf(const fpemu_format *f, fpemu_ctx *ctx, int sign) {
    if (__builtin_expect(!ctx->sat, 1)) return (0x7FFFu & ~((UINT64_C(1) << f->mbits) - 1)) | (uint64_t)sign << 15;
    return emu__inf_result(f, ctx, sign);
}
static __attribute__((noinline)) uint64_t spec16_slow(const fpemu_format *f, int op, uint64_t a, uint64_t b, uint64_t c,
                                                      int neg, fpemu_ctx *ctx) {
    if (ctx->daz) /* a subnormal operand may read as a zero (inf x 0): the generic path decides */
        return op == K_FMA ? emu__fma_generic(f, a, b, c, ctx)
                           : emu__binary(f, op == K_MUL ? EMU_OP_MUL : neg ? EMU_OP_SUB : EMU_OP_ADD, a, b, ctx);
    const uint32_t mm = (1u << f->mbits) - 1, em = 0x7FFFu & ~mm, qb = 1u << (f->mbits - 1);
    /* bitwise, operand by operand (random operands' classes would mispredict;
     * an array here was vectorised through the stack and stalled on it) */
    const uint32_t x0 = (uint32_t)a & 0xFFFFu, x1 = ((uint32_t)b & 0xFFFFu) ^ (uint32_t)neg << 15, x2 = (uint32_t)c & 0xFFFFu;
    const int n = op == K_FMA ? 3 : 2;
#define KCLASS(X, I)                                                                                      \
    unsigned sp##I = ((X) & em) == em, mt##I = ((X) & mm) != 0, inf##I = sp##I & !mt##I, zero##I = !((X) & 0x7FFFu), \
             sg##I = (X) >> 15, nan##I = sp##I & mt##I, snan##I = nan##I & !((X) & qb);
    KCLASS(x0, 0)
    KCLASS(x1, 1)
    KCLASS(x2, 2)
#undef KCLASS
    if (op != K_FMA) nan2 = snan2 = inf2 = 0;
    unsigned nan = nan0 | nan1 | nan2, snan = snan0 | snan1 | snan2;
    const unsigned inf[3] = {inf0, inf1, inf2}, zero[3] = {zero0, zero1, zero2}, sg[3] = {sg0, sg1, sg2};
    /* inv: 0 x inf, invalid even beside a NaN operand; ii: inf - inf, without NaN operands */
    unsigned inv = op != K_ADD && ((inf[0] & zero[1]) | (zero[0] & inf[1]));
    unsigned sp = sg[0] ^ sg[1], isig, ii; /* isig: the inf result's sign */
    if (op == K_ADD) ii = inf[0] & inf[1] & (sg[0] != sg[1]), isig = (sg[0] & inf[0]) | (sg[1] & !inf[0]);
    else if (op == K_MUL) ii = 0, isig = sp;
    else ii = (inf[0] | inf[1]) & inf[2] & (sg[2] != sp), isig = (sp & (inf[0] | inf[1])) | (sg[2] & !(inf[0] | inf[1]));
    ii &= !nan;
    if (nan) {
        const uint64_t codes[3] = {a, b, c};
        return knan(f, ctx, inv || snan, n, codes);
    }
    if (inv | ii) return knan(f, ctx, 1, 0, NULL);
    return kinf(f, ctx, (int)isig);
}
/* The common case, the canonical NaN policy without sat or daz, with
 * masks and no branches: which operand is special varies from call to call,
 * and the general version's arrays cost spills. */
static inline __attribute__((always_inline)) uint64_t spec16(const fpemu_format *f, int op, uint64_t a, uint64_t b,
                                                             uint64_t c, int neg, fpemu_ctx *ctx) {
    if (__builtin_expect(ctx->daz | ctx->sat | (ctx->nan_policy != FPEMU_NAN_CANONICAL), 0))
        return spec16_slow(f, op, a, b, c, neg, ctx);
    const uint32_t mm = (1u << f->mbits) - 1, em = 0x7FFFu & ~mm, qb = 1u << (f->mbits - 1);
    const uint32_t x0 = (uint32_t)a & 0xFFFFu, x1 = ((uint32_t)b & 0xFFFFu) ^ (uint32_t)neg << 15, x2 = (uint32_t)c & 0xFFFFu;
    const uint32_t s0 = (x0 & em) == em, s1 = (x1 & em) == em, s2 = op == K_FMA && (x2 & em) == em;
    const uint32_t m0 = (x0 & mm) != 0, m1 = (x1 & mm) != 0, m2 = (x2 & mm) != 0;
    const uint32_t i0 = s0 & !m0, i1 = s1 & !m1, i2 = s2 & !m2; /* inf */
    const uint32_t z0 = !(x0 & 0x7FFFu), z1 = !(x1 & 0x7FFFu);  /* zero */
    const uint32_t g0 = x0 >> 15, g1 = x1 >> 15, g2 = x2 >> 15;  /* sign */
    const uint32_t nan = (s0 & m0) | (s1 & m1) | (s2 & m2);
    const uint32_t snan = (s0 & m0 & !(x0 & qb)) | (s1 & m1 & !(x1 & qb)) | (s2 & m2 & !(x2 & qb));
    uint32_t inv = op == K_ADD ? 0 : (i0 & z1) | (z0 & i1), ii, isig, gp = g0 ^ g1, ip = i0 | i1;
    if (op == K_ADD) ii = i0 & i1 & (g0 ^ g1), isig = (g0 & i0) | (g1 & !i0);
    else if (op == K_MUL) ii = 0, isig = gp;
    else ii = ip & i2 & (g2 ^ gp), isig = (gp & ip) | (g2 & !ip);
    ii &= !nan;
    uint32_t isn = nan | inv | ii, keep = isn - 1; /* keep: all ones for an inf result */
    emu__or_flags(ctx, (snan | inv | ii) << 4);     /* FPEMU_FLAG_INVALID */
    return em | (qb & ~keep) | ((isig << 15) & keep);
}
static __attribute__((noinline)) uint64_t spec16_add(const fpemu_format *f, uint64_t a, uint64_t b, int neg, fpemu_ctx *ctx) {
    return spec16(f, K_ADD, a, b, 0, neg, ctx);
}
static __attribute__((noinline)) uint64_t spec16_mul(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    return spec16(f, K_MUL, a, b, 0, 0, ctx);
}
static __attribute__((noinline)) uint64_t spec16_fma(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) {
    return spec16(f, K_FMA, a, b, c, 0, ctx);
}

/* The sign of an exact zero sum of operands of signs sa and sb. */
#define KZERO(K, sa, sb, mode) ((uint64_t)((sa) == (sb) ? (sa) : (mode) == FPEMU_RDN) << ((K).bits - 1))
#define KSPECIAL(K, x) ((((x) >> (K).m) & ((UINT64_C(1) << ((K).bits - 1 - (K).m)) - 1)) == ((UINT64_C(1) << ((K).bits - 1 - (K).m)) - 1))

/* The exact double of a finite code (no inf or NaN; no daz). */
static inline __attribute__((always_inline)) double kdecf(const fk K, uint64_t c) {
    const uint64_t signbit = UINT64_C(1) << (K.bits - 1), magmask = signbit - 1, one = UINT64_C(1) << K.m;
    uint64_t sg = (c & signbit) << (64 - K.bits);
    uint64_t vn = sg | (((c & magmask) << (52 - K.m)) + ((uint64_t)(1023 - K.bias) << 52));
    if (__builtin_expect((c & magmask & ~(one - 1)) != 0, 1)) return emu__bitsd(vn);
    return emu__bitsd(sg | emu__dbits((double)(c & (one - 1)) * emu__bitsd((uint64_t)(1023 + K.emin - K.m) << 52)));
}
/* The same without a branch: for the complete paths, whose operands (zero
 * and subnormal among them) come from edge cases. */
static inline __attribute__((always_inline, unused)) double kdecf_nb(const fk K, uint64_t c) {
    const uint64_t signbit = UINT64_C(1) << (K.bits - 1), magmask = signbit - 1, one = UINT64_C(1) << K.m;
    uint64_t sg = (c & signbit) << (64 - K.bits);
    uint64_t vn = sg | (((c & magmask) << (52 - K.m)) + ((uint64_t)(1023 - K.bias) << 52));
    uint64_t vs = sg | emu__dbits((double)(c & (one - 1)) * emu__bitsd((uint64_t)(1023 + K.emin - K.m) << 52));
    return emu__bitsd((c & magmask & ~(one - 1)) ? vn : vs);
}
static inline __attribute__((always_inline)) int ksub(const fk K, uint64_t c) {
    const uint64_t magmask = (UINT64_C(1) << (K.bits - 1)) - 1, one = UINT64_C(1) << K.m;
    return !(c & magmask & ~(one - 1)) & ((c & (one - 1)) != 0);
}

static inline __attribute__((always_inline)) uint64_t kadd_full(const fk K, const fpemu_format *f, uint64_t a, uint64_t b,
                                                                int neg, int mode, fpemu_ctx *ctx) {
    const uint64_t mask = (UINT64_C(1) << K.bits) - 1;
    uint64_t ua = a & mask, ub = (b ^ (uint64_t)neg << (K.bits - 1)) & mask;
    if (__builtin_expect(KSPECIAL(K, ua) | KSPECIAL(K, ub), 0)) return spec16_add(f, a, b, neg, ctx);
    if (__builtin_expect(ctx->daz && (ksub(K, ua) | ksub(K, ub)), 0)) return emu__binary(f, neg ? EMU_OP_SUB : EMU_OP_ADD, a, b, ctx);
    double x = kdecf(K, ua), y = kdecf(K, ub);
    double s = x + y;
    int rs = 0;
    if (!K.sumexact) {
        double bv = s - x, av = s - bv;
        rs = ksgn((x - av) + (y - bv));
    }
    unsigned fl;
    uint64_t r = kfull(K, s != 0 ? s : 1.0, rs, mode, ctx, &fl);
    if (s == 0) r = KZERO(K, ua >> (K.bits - 1), ub >> (K.bits - 1), mode), fl = 0;
    emu__or_flags(ctx, fl);
    return r;
}
static inline __attribute__((always_inline)) uint64_t kmul_full(const fk K, const fpemu_format *f, uint64_t a, uint64_t b,
                                                                int mode, fpemu_ctx *ctx) {
    const uint64_t mask = (UINT64_C(1) << K.bits) - 1;
    uint64_t ua = a & mask, ub = b & mask;
    if (__builtin_expect(KSPECIAL(K, ua) | KSPECIAL(K, ub), 0)) return spec16_mul(f, a, b, ctx);
    if (__builtin_expect(ctx->daz && (ksub(K, ua) | ksub(K, ub)), 0)) return emu__binary(f, EMU_OP_MUL, a, b, ctx);
    double p = kdecf(K, ua) * kdecf(K, ub); /* exact */
    unsigned fl;
    uint64_t r = kfull(K, p != 0 ? p : 1.0, 0, mode, ctx, &fl);
    if (p == 0) r = (ua ^ ub) & (UINT64_C(1) << (K.bits - 1)), fl = 0;
    emu__or_flags(ctx, fl);
    return r;
}
static inline __attribute__((always_inline)) uint64_t kfma_full(const fk K, const fpemu_format *f, uint64_t a, uint64_t b,
                                                                uint64_t c, int mode, fpemu_ctx *ctx) {
    const uint64_t mask = (UINT64_C(1) << K.bits) - 1;
    uint64_t ua = a & mask, ub = b & mask, uc = c & mask;
    if (__builtin_expect(KSPECIAL(K, ua) | KSPECIAL(K, ub) | KSPECIAL(K, uc), 0)) return spec16_fma(f, a, b, c, ctx);
    if (__builtin_expect(ctx->daz && (ksub(K, ua) | ksub(K, ub) | ksub(K, uc)), 0)) return emu__fma_generic(f, a, b, c, ctx);
    double z = kdecf(K, uc);
    double p = kdecf(K, ua) * kdecf(K, ub); /* exact */
    double s = p + z, bv = s - p, av = s - bv;
    unsigned fl;
    uint64_t r = kfull(K, s != 0 ? s : 1.0, ksgn((p - av) + (z - bv)), mode, ctx, &fl);
    if (s == 0) r = KZERO(K, (ua ^ ub) >> (K.bits - 1), uc >> (K.bits - 1), mode), fl = 0;
    emu__or_flags(ctx, fl);
    return r;
}
#define FULL_OPS(NAME, MODE)                                                                              \
    static __attribute__((noinline)) uint64_t add_##NAME##_full_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                        fpemu_ctx *ctx, int neg) {       \
        return kadd_full(K_##NAME, f, a, b, neg, FPEMU_##MODE, ctx);                                      \
    }                                                                                                     \
    static __attribute__((noinline)) uint64_t mul_##NAME##_full_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                        fpemu_ctx *ctx) {                \
        return kmul_full(K_##NAME, f, a, b, FPEMU_##MODE, ctx);                                           \
    }                                                                                                     \
    static __attribute__((noinline)) uint64_t fma_##NAME##_full_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                        uint64_t c, fpemu_ctx *ctx) {    \
        return kfma_full(K_##NAME, f, a, b, c, FPEMU_##MODE, ctx);                                        \
    }

/* f16 in the double domain, falling back to the complete path (f32: to
 * the generic one) */
#define FAST_ADD_FULL(NAME, MODE)                                                                         \
    FULL_OPS(NAME, MODE)                                                                                  \
    static __attribute__((noinline)) uint64_t add_##NAME##_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                   fpemu_ctx *ctx, int neg) {            \
        uint64_t r = kadd(K_##NAME, a, b, neg, FPEMU_##MODE, NULL, ctx);                                  \
        return r != EMU_FAST_FAIL ? r : add_##NAME##_full_##MODE(f, a, b, ctx, neg);                     \
    }                                                                                                     \
    static __attribute__((noinline)) uint64_t mul_##NAME##_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                   fpemu_ctx *ctx) {                     \
        uint64_t r = kmul(K_##NAME, a, b, FPEMU_##MODE, NULL, ctx);                                       \
        return r != EMU_FAST_FAIL ? r : mul_##NAME##_full_##MODE(f, a, b, ctx);                          \
    }                                                                                                     \
    static __attribute__((noinline)) uint64_t fma_##NAME##_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                   uint64_t c, fpemu_ctx *ctx) {         \
        uint64_t r = kfma(K_##NAME, a, b, c, FPEMU_##MODE, NULL, ctx);                                    \
        return r != EMU_FAST_FAIL ? r : fma_##NAME##_full_##MODE(f, a, b, c, ctx);                       \
    }
FAST_MODES(FAST_ADD_FULL, f16) FAST_SR(f16)
static const emu_fastops ops_f16 = {.add = FAST_TABLE(add, f16), .mul = FAST_TABLE(mul, f16), .fma = FAST_TABLE(fma, f16),
                                    .add_rb = add_f16_RB, .mul_rb = mul_f16_RB, .fma_rb = fma_f16_RB};
FAST_MODES(FULL_OPS, bf16)
FAST_FORMAT(f32)
/* The 8-bit OCP and fnuz formats: fma only (add and mul go through the
 * result tables), with operands from the format's decode table (cheaper
 * than kdec, and e4m3's and fnuz's layouts are not IEEE's): finite
 * operands only, none under daz. kpack refuses zero, subnormal and
 * overflowing results, and NaN codes never come out of it. */
static inline __attribute__((always_inline)) uint64_t tab_fma(const fk K, const fpemu_format *f, uint64_t a, uint64_t b,
                                                              uint64_t c, int mode, const uint64_t *rb, fpemu_ctx *ctx) {
    unsigned ia = (unsigned)a & 0xFFu, ib = (unsigned)b & 0xFFu, ic = (unsigned)c & 0xFFu;
    const uint8_t *cl = f->class_table;
    if ((cl[ia] > FPEMU_CLASS_NORMAL) | (cl[ib] > FPEMU_CLASS_NORMAL) | (cl[ic] > FPEMU_CLASS_NORMAL) | ctx->daz)
        return EMU_FAST_FAIL;
    const double *dt = f->decode_table;
    return kfma_dec(K, dt[ia], dt[ib], dt[ic], mode, rb, ctx);
}
#define TAB_FMA(NAME, MODE)                                                                               \
    static uint64_t fma_##NAME##_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c,       \
                                        fpemu_ctx *ctx) {                                                 \
        uint64_t r = tab_fma(K_##NAME, f, a, b, c, FPEMU_##MODE, NULL, ctx);                             \
        return r != EMU_FAST_FAIL ? r : emu__fma_generic(f, a, b, c, ctx);                                \
    }
/*                          m   bias emin  emax bits sums-exact maxmant */
static const fk K_e5m2     = {2, 15,  -14,  15,  8,   1,         0x3};
static const fk K_e4m3     = {3, 7,   -6,   8,   8,   1,         0x6};
static const fk K_e4m3fnuz = {3, 8,   -7,   7,   8,   1,         0x7};
static const fk K_e5m2fnuz = {2, 16,  -15,  15,  8,   1,         0x3};
#define TAB_FMA_ALL(NAME)                                                                                 \
    FAST_MODES(TAB_FMA, NAME) TAB_FMA(NAME, SR)                                                           \
    static uint64_t fma_##NAME##_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits, \
                                    fpemu_ctx *ctx) {                                                    \
        uint64_t r = tab_fma(K_##NAME, f, a, b, c, FPEMU_SR, &rbits, ctx);                                \
        return r != EMU_FAST_FAIL ? r : emu__fma_sr_generic(f, a, b, c, rbits, ctx);                      \
    }
TAB_FMA_ALL(e5m2) TAB_FMA_ALL(e4m3) TAB_FMA_ALL(e4m3fnuz) TAB_FMA_ALL(e5m2fnuz)

/* f32 -> f16, bf16 and the 8-bit OCP and fnuz formats (fpemu_from_float):
 * the float's exact double rounded by kpack or kpack_sr where the result is
 * normal and finite, else the generic path. daz needs no test: a float
 * subnormal (or one the host's MXCSR DAZ reads as zero) is below every one
 * of these formats' smallest normal, which kpack refuses. */
#define F32TO(NAME, MODE)                                                                                 \
    static uint64_t f32to_##NAME##_##MODE(const fpemu_format *f, float x, fpemu_ctx *ctx) {              \
        uint64_t r = kround(K_##NAME, (double)x, 0, FPEMU_##MODE, NULL, ctx);                             \
        return r != EMU_FAST_FAIL ? r : emu__from_float_generic(f, x, ctx);                               \
    }
#define F32TO_ALL(NAME)                                                                                   \
    FAST_MODES(F32TO, NAME) F32TO(NAME, SR)                                                               \
    static uint64_t f32to_##NAME##_RB(const fpemu_format *f, float x, uint64_t rbits, fpemu_ctx *ctx) {  \
        uint64_t r = kpack_sr(K_##NAME, (double)x, 0, &rbits, ctx);                                       \
        return r != EMU_FAST_FAIL ? r : emu__from_float_sr_generic(f, x, rbits, ctx);                     \
    }
F32TO_ALL(f16) F32TO_ALL(bf16) F32TO_ALL(e5m2) F32TO_ALL(e4m3) F32TO_ALL(e4m3fnuz) F32TO_ALL(e5m2fnuz)
#define F32TO_SET(OPS, NAME)                                                                              \
    do {                                                                                                  \
        emu_from_fn t_[FPEMU_ROUND_COUNT] = FAST_TABLE(f32to, NAME);                                       \
        memcpy((OPS).from_f32, t_, sizeof t_);                                                            \
        (OPS).from_f32_rb = f32to_##NAME##_RB;                                                            \
    } while (0)

/* ---- bf16 add and mul in the binary32 domain ---------------------------
 * A bf16 code shifted left by 16 is the float of the same value. When both
 * operands are normal and their exponents differ by at most 15, the float
 * sum is exact (8 + 15 + 1 bits); float products of two bf16 are exact in
 * float's range. The exact float then rounds to bf16 on its bit pattern:
 * keep the top 16 bits, after adding the mode's increment to the low 16.
 * Operands that could make a float denormal (bf_add_ok, bf_mul_ok), and
 * results that are not normal and finite, or sit on the smallest normal or
 * the largest finite magnitude (where tininess, ftz and overflow policies
 * decide), go to the fallbacks below (bf_edge_rne in rne) and the complete
 * paths above; sr to the double-path functions (bf16d). */

static inline __attribute__((always_inline)) int bf_normal(uint32_t c) { return ((c & 0x7F80u) - 0x80u) < 0x7F00u; }
/* Exponent fields of at least 8 (inf and NaN pass): a nonzero float sum of
 * two such bf16 is a multiple of 2^-126 (their quanta are), so never a
 * float denormal, which would cost a microcode assist of ~150 cycles (the
 * sum toward zero or near the smallest normal takes the complete path). */
static inline __attribute__((always_inline)) int bf_add_ok(uint64_t a, uint64_t b) {
    return ((((uint32_t)a & 0x7F80u) - 0x400u) | (((uint32_t)b & 0x7F80u) - 0x400u)) < 0x8000u; /* fields in place */
}
/* Nonzero fields (no zero or subnormal operand: the host's MXCSR daz must
 * never meet a float denormal; fields of 255, inf and NaN, pass: they make
 * an inf or NaN float, which bf_round refuses) summing to 128 or more: the
 * float product is normal (or inf/NaN), never a float denormal (see
 * bf_add_ok). */
static inline __attribute__((always_inline)) int bf_mul_ok(uint64_t a, uint64_t b) {
    int32_t xa = (int32_t)((uint32_t)a & 0x7F80u), xb = (int32_t)((uint32_t)b & 0x7F80u); /* fields in place */
    return ((xa - 0x80) | (xb - 0x80) | (xa + xb - (128 << 7))) >= 0; /* one test: none of the three negative */
}
/* bf_add_ok, and the fields at most 15 apart: the float sum is exact (8 +
 * 15 + 1 bits). */
static inline __attribute__((always_inline)) int bf_sum_exact(uint64_t a, uint64_t b) {
    uint32_t xa = (uint32_t)a & 0x7F80u, xb = (uint32_t)b & 0x7F80u;
    return bf_add_ok(a, b) & (xa - xb + (15u << 7) <= (30u << 7));
}/* The floats of a bf16 code, and of b negated when neg is 1. */
static inline __attribute__((always_inline)) float bf_f(uint64_t c) { return emu__bitsf((uint32_t)c << 16); }
static inline __attribute__((always_inline)) float bf_fn(uint64_t c, int neg) { return emu__bitsf((uint32_t)c << 16 ^ (uint32_t)neg << 31); }

/* bf_round's refusals in rne (bf_edge_rne) without sat, where the float sb (finite
 * operands, so no inf or NaN operand) is nonzero and never below 2^-126
 * (bf_add_ok, bf_mul_ok): only the smallest normal, the largest finite and
 * overflow to inf remain, and none is tiny; an exact zero (rdn's -0 and
 * rup's +0 taken to odd: sb = 1) is +0 in rne. Other modes and sat: the
 * complete path (EMU_FAST_FAIL). */
static __attribute__((noinline)) uint64_t bf_edge_rne(uint32_t sb, fpemu_ctx *ctx) {
    if (ctx->sat) return EMU_FAST_FAIL;
    if ((sb & 0x7FFFFFFFu) > 0x7F800000u) return EMU_FAST_FAIL; /* NaN: an inf or NaN operand */
    if (sb == 1) return 0;
    uint32_t r = (sb + 0x7FFFu + ((sb >> 16) & 1u)) >> 16, low = sb & 0xFFFFu;
    emu__or_flags(ctx, (r & 0x7FFFu) == 0x7F80u ? FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT : low != 0);
    return r;
}

static inline __attribute__((always_inline)) uint64_t bf_round(uint32_t sb, int mode, fpemu_ctx *ctx) {
    uint32_t low = sb & 0xFFFFu, neg = sb >> 31, r;
    switch (mode) {
    case FPEMU_RNE: r = (sb + 0x7FFFu + ((sb >> 16) & 1u)) >> 16; break;
    case FPEMU_RNA: r = (sb + 0x8000u) >> 16; break;
    case FPEMU_RTZ: r = sb >> 16; break;
    case FPEMU_RUP: r = (sb + (neg ? 0 : 0xFFFFu)) >> 16; break;
    case FPEMU_RDN: r = (sb + (neg ? 0xFFFFu : 0)) >> 16; break;
    default: r = (sb >> 16) | (low != 0); break; /* rto */
    }
    /* magnitude strictly between the smallest normal and the largest finite */
    if ((r & 0x7FFFu) - 0x81u >= 0x7F7Fu - 0x81u) return EMU_FAST_FAIL;
    emu__or_flags(ctx, low != 0);
    return r;
}

static inline __attribute__((always_inline)) int bf_fin(uint64_t a) { return ((uint32_t)a & 0x7F80u) != 0x7F80u; }
/* What bf_round refuses: in rne bf_edge_rne, else (and then) the complete
 * path. Out of line, reached by a tail call: the hot paths keep their
 * registers. */
/* At the AVX512-FP16 level (emu__scalar_isa), bf16 sums that bf_sum_exact
 * refuses continue in add_bf16x_far (below): set there, read here. */
static int bf16_far_x;
#define BF16_FAR_DECL(MODE) static uint64_t add_bf16x_far_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg);
#if (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12) || (defined(__clang__) && defined(__AVX512FP16__))
FAST_MODES_1(BF16_FAR_DECL)
#define BF16_FAR(MODE) if (bf16_far_x) return add_bf16x_far_##MODE(f, a, b, ctx, neg);
#else
#define BF16_FAR(MODE)
#endif
#define BF16_FB(MODE)                                                                                     \
    static __attribute__((noinline)) uint64_t add_bf16_fb_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                  fpemu_ctx *ctx, int neg) {             \
        if (KSPECIAL(K_bf16, a & 0xFFFF) | KSPECIAL(K_bf16, b & 0xFFFF)) return spec16_add(f, a, b, neg, ctx);\
        if (!bf_sum_exact(a, b)) { BF16_FAR(MODE) }                                                       \
        else if (FPEMU_##MODE == FPEMU_RNE && bf_fin(a) && bf_fin(b)) {                                   \
            uint64_t r = bf_edge_rne(emu__fbits(bf_f(a) + bf_fn(b, neg)), ctx);                           \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return add_bf16_full_##MODE(f, a, b, ctx, neg);                                                   \
    }                                                                                                     \
    static __attribute__((noinline)) uint64_t mul_bf16_fb_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                  fpemu_ctx *ctx) {                      \
        if (KSPECIAL(K_bf16, a & 0xFFFF) | KSPECIAL(K_bf16, b & 0xFFFF)) return spec16_mul(f, a, b, ctx);\
        if (FPEMU_##MODE == FPEMU_RNE && bf_mul_ok(a, b) && bf_fin(a) && bf_fin(b)) {                     \
            uint64_t r = bf_edge_rne(emu__fbits(bf_f(a) * bf_f(b)), ctx);                                 \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return mul_bf16_full_##MODE(f, a, b, ctx);                                                        \
    }
FAST_MODES_1(BF16_FB)

#define BF16_ADDMUL(MODE)                                                                                 \
    static uint64_t add_bf16_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg) { \
        if (__builtin_expect(bf_sum_exact(a, b), 1)) {                                               \
            uint64_t r = bf_round(emu__fbits(bf_f(a) + bf_fn(b, neg)), FPEMU_##MODE, ctx);                  \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return add_bf16_fb_##MODE(f, a, b, ctx, neg);                                                     \
    }                                                                                                     \
    static uint64_t mul_bf16_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {     \
        if (__builtin_expect(bf_mul_ok(a, b), 1)) {                                                 \
            uint64_t r = bf_round(emu__fbits(bf_f(a) * bf_f(b)), FPEMU_##MODE, ctx);                        \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return mul_bf16_fb_##MODE(f, a, b, ctx);                                                        \
    }
/* the complete paths (above) are the fallback; in sr the double-path
 * versions (bf16d), which fall back to the generic path */
static const fk K_bf16d = {7, 127, -126, 127, 16, 0, 0x7F};
FAST_SR(bf16d)
/* sr in the binary32 domain: up with probability (low 16 bits) / 2^16,
 * one draw per rounding; the upper neighbour must be below the largest
 * finite magnitude too. */
static inline __attribute__((always_inline)) uint64_t bf_round_sr(uint32_t sb, const uint64_t *rb, fpemu_ctx *ctx) {
    uint32_t kept = sb >> 16, low = sb & 0xFFFFu;
    if ((kept & 0x7FFFu) - 0x81u >= 0x7F7Eu - 0x81u) return EMU_FAST_FAIL;
    /* the caller's draw *rb, else (callers: no caller stream) the counter stream's */
    uint64_t up = emu__sr_up_low(rb ? *rb : emu__mix(ctx->seed, ctx->counter++), low, 16, ctx->sr_bits);
    emu__or_flags(ctx, low != 0);
    return kept + up;
}
static uint64_t add_bf16_SR(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg) {
    if (bf_sum_exact(a, b) && !ctx->sr_stream) {
        uint64_t r = bf_round_sr(emu__fbits(bf_f(a) + bf_fn(b, neg)), NULL, ctx);
        if (r != EMU_FAST_FAIL) return r;
    }
    return add_bf16d_SR(f, a, b, ctx, neg);
}
static uint64_t mul_bf16_SR(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) {
    if (bf_mul_ok(a, b) && !ctx->sr_stream) {
        uint64_t r = bf_round_sr(emu__fbits(bf_f(a) * bf_f(b)), NULL, ctx);
        if (r != EMU_FAST_FAIL) return r;
    }
    return mul_bf16d_SR(f, a, b, ctx);
}
static uint64_t add_bf16_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx, int neg) {
    if (bf_sum_exact(a, b)) {
        uint64_t r = bf_round_sr(emu__fbits(bf_f(a) + bf_fn(b, neg)), &rbits, ctx);
        if (r != EMU_FAST_FAIL) return r;
    }
    return add_bf16d_RB(f, a, b, rbits, ctx, neg);
}
static uint64_t mul_bf16_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) {
    if (bf_mul_ok(a, b)) {
        uint64_t r = bf_round_sr(emu__fbits(bf_f(a) * bf_f(b)), &rbits, ctx);
        if (r != EMU_FAST_FAIL) return r;
    }
    return mul_bf16d_RB(f, a, b, rbits, ctx);
}
/* fma: operands decode by a shift; the double path rounds. */
static inline __attribute__((always_inline)) uint64_t bf_fma(uint64_t a, uint64_t b, uint64_t c, int mode,
                                                             const uint64_t *rb, fpemu_ctx *ctx) {
    uint32_t ua = (uint32_t)a & 0xFFFFu, ub = (uint32_t)b & 0xFFFFu, uc = (uint32_t)c & 0xFFFFu;
    if (!(bf_normal(ua) & bf_normal(ub) & bf_normal(uc))) return EMU_FAST_FAIL;
    return kfma_dec(K_bf16, (double)emu__bitsf(ua << 16), (double)emu__bitsf(ub << 16), (double)emu__bitsf(uc << 16),
                    mode, rb, ctx);
}
#define BF16_FMA(MODE)                                                                                    \
    static uint64_t fma_bf16_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) { \
        uint64_t r = bf_fma(a, b, c, FPEMU_##MODE, NULL, ctx);                                             \
        return r != EMU_FAST_FAIL ? r : fma_bf16_full_##MODE(f, a, b, c, ctx);                            \
    }
FAST_MODES_1(BF16_FMA)
static uint64_t fma_bf16_SR(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) {
    uint64_t r = bf_fma(a, b, c, FPEMU_SR, NULL, ctx);
    return r != EMU_FAST_FAIL ? r : fma_bf16d_SR(f, a, b, c, ctx);
}
static uint64_t fma_bf16_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits, fpemu_ctx *ctx) {
    uint64_t r = bf_fma(a, b, c, FPEMU_SR, &rbits, ctx);
    return r != EMU_FAST_FAIL ? r : fma_bf16d_RB(f, a, b, c, rbits, ctx);
}
FAST_MODES_1(BF16_ADDMUL)
static const emu_fastops ops_bf16 = {.add = FAST_TABLE(add, bf16), .mul = FAST_TABLE(mul, bf16),
                                     .fma = FAST_TABLE(fma, bf16), .add_rb = add_bf16_RB, .mul_rb = mul_bf16_RB,
                                     .fma_rb = fma_bf16_RB};

/* ---- f16 add and mul through F16C ------------------------------------
 * Where the CPU has F16C, vcvtph2ps decodes both operands at once (exact;
 * f16 subnormals become normal floats, so MXCSR's daz/ftz never apply) and
 * vcvtps2ph rounds an exact float to f16 in rne, rdn, rup or rtz in one
 * instruction (the mode comes from the immediate, not MXCSR). Float
 * products of two f16 are exact; float sums are when the exponent fields
 * differ by at most 12 (11 + 12 + 1 bits; a subnormal's field 0 only
 * overstates the gap). inf and NaN operands give an inf or NaN float, so
 * the result check sends them, with zero, subnormal, smallest-normal and
 * largest-finite results (where tininess, ftz and overflow policies
 * decide), to the software path; daz with its subnormal operands too.
 * Otherwise the result is inexact iff the float had bits below f16's 10. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define F16C_FN __attribute__((target("f16c,avx")))


/* h: the f16 code vcvtps2ph made of the float s (the rounding field must be
 * a constant, so the caller converts) */
F16C_FN static inline __attribute__((always_inline)) uint64_t h_round(__m128 s, __m128i h, fpemu_ctx *ctx) {
    uint32_t r = (uint32_t)_mm_cvtsi128_si32(h) & 0xFFFFu;
    if ((r & 0x7FFFu) - 0x401u >= 0x7BFFu - 0x401u) return EMU_FAST_FAIL;
    emu__or_flags(ctx, (_mm_cvtsi128_si32(_mm_castps_si128(s)) & 0x1FFF) != 0);
    return r;
}

/* The other modes (rna, rto, sr) and fma: F16C decodes, the double path
 * rounds. inf/NaN operands make an inf/NaN double, which kpack refuses. */
F16C_FN static inline __attribute__((always_inline)) __m128 h_dec3(uint64_t a, uint64_t b, uint64_t c) {
    return _mm_cvtph_ps(_mm_cvtsi64_si128((long long)((a & 0xFFFF) | (b & 0xFFFF) << 16 | (c & 0xFFFF) << 32)));
}
/* rna, rto and sr on the exact float's bits: a normal f16 result keeps the
 * top 10 of the float's 23 fraction bits (rebias the exponent by 112). */
static inline __attribute__((always_inline)) uint64_t h_round_int(uint32_t sb, int mode, const uint64_t *rb,
                                                                  fpemu_ctx *ctx) {
    uint32_t mag = sb & 0x7FFFFFFFu, low = mag & 0x1FFFu, kept = (mag >> 13) - (112u << 10), r;
    /* magnitude of the float strictly above 2^-14 and below 65504 + ulp */
    if (mag - 0x38802000u >= 0x477FE000u - 0x38802000u) return EMU_FAST_FAIL;
    switch (mode) {
    case FPEMU_RNA: r = ((mag + 0x1000u) >> 13) - (112u << 10); break;
    case FPEMU_RTO: r = kept | (low != 0); break;
    default: /* sr: the caller's draw *rb, else (no caller stream: see F16C_ADDMUL) the counter stream's; the
              * upper neighbour is finite (kept < 0x7BFF) by the range test, so nothing fails past the draw */
        r = kept + (uint32_t)emu__sr_up_low(rb ? *rb : emu__mix(ctx->seed, ctx->counter++), low, 13, ctx->sr_bits);
        emu__or_flags(ctx, low != 0);
        return r | (sb >> 31) << 15;
    }
    if (r > 0x7BFFu) return EMU_FAST_FAIL; /* rna carried past the largest finite */
    emu__or_flags(ctx, low != 0);
    return r | (sb >> 31) << 15;
}
static inline uint32_t hbits(__m128 s) { return (uint32_t)_mm_cvtsi128_si32(_mm_castps_si128(s)); }
/* How each mode rounds the exact float s (ctx in scope). */
#define HROUND_RNE(s) h_round(s, _mm_cvtps_ph(s, _MM_FROUND_TO_NEAREST_INT), ctx)
#define HROUND_RDN(s) h_round(s, _mm_cvtps_ph(s, _MM_FROUND_TO_NEG_INF), ctx)
#define HROUND_RUP(s) h_round(s, _mm_cvtps_ph(s, _MM_FROUND_TO_POS_INF), ctx)
#define HROUND_RTZ(s) h_round(s, _mm_cvtps_ph(s, _MM_FROUND_TO_ZERO), ctx)
#define HROUND_RNA(s) h_round_int(hbits(s), FPEMU_RNA, NULL, ctx)
#define HROUND_RTO(s) h_round_int(hbits(s), FPEMU_RTO, NULL, ctx)
#define HROUND_SR(s) h_round_int(hbits(s), FPEMU_SR, NULL, ctx)
#define HROUND_RB(s) h_round_int(hbits(s), FPEMU_SR, &rbits, ctx)
/* The exact float sum (b negated when neg) of two f16 whose exponent
 * fields are at most 12 apart (0 otherwise), and the exact float product. */
F16C_FN static inline __attribute__((always_inline)) int h_sum(uint64_t a, uint64_t b, int neg, __m128 *s) {
    uint32_t ua = (uint32_t)a & 0xFFFFu, ub = ((uint32_t)b ^ (uint32_t)neg << 15) & 0xFFFFu;
    if ((ua >> 10 & 0x1Fu) - (ub >> 10 & 0x1Fu) + 12u > 24u) return 0;
    __m128 x = _mm_cvtph_ps(_mm_cvtsi32_si128((int)(ua | ub << 16)));
    *s = _mm_add_ss(x, _mm_movehdup_ps(x));
    return 1;
}
F16C_FN static inline __attribute__((always_inline)) __m128 h_prod(uint64_t a, uint64_t b) {
    uint32_t ua = (uint32_t)a & 0xFFFFu, ub = (uint32_t)b & 0xFFFFu;
    __m128 x = _mm_cvtph_ps(_mm_cvtsi32_si128((int)(ua | ub << 16)));
    return _mm_mul_ss(x, _mm_movehdup_ps(x));
}
/* fma: F16C decodes, the double path rounds (sr: the draw *rb, or the
 * context's when rb is NULL) */
F16C_FN static inline __attribute__((always_inline)) uint64_t h_fma(uint64_t a, uint64_t b, uint64_t c, int mode,
                                                                    const uint64_t *rb, fpemu_ctx *ctx) {
    if (ctx->daz) return EMU_FAST_FAIL;
    __m128 v = h_dec3(a, b, c);
    __m128d xy = _mm_cvtps_pd(v);
    return kfma_dec(K_f16, _mm_cvtsd_f64(xy), _mm_cvtsd_f64(_mm_unpackhi_pd(xy, xy)),
                    _mm_cvtsd_f64(_mm_cvtps_pd(_mm_movehl_ps(v, v))), mode, rb, ctx);
}
/* sr with a caller stream takes the software path (h_round_int draws from
 * the counter stream only). */
#define F16C_ADDMUL(MODE)                                                                                 \
    F16C_FN static uint64_t add_f16h_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg) { \
        __m128 s;                                                                                         \
        if (!ctx->daz && !(FPEMU_##MODE == FPEMU_SR && ctx->sr_stream) && h_sum(a, b, neg, &s)) {        \
            uint64_t r = HROUND_##MODE(s);                                                                \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return add_f16_##MODE(f, a, b, ctx, neg);                                                         \
    }                                                                                                     \
    F16C_FN static uint64_t mul_f16h_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) { \
        if (!ctx->daz && !(FPEMU_##MODE == FPEMU_SR && ctx->sr_stream)) {                                \
            uint64_t r = HROUND_##MODE(h_prod(a, b));                                                     \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return mul_f16_##MODE(f, a, b, ctx);                                                              \
    }
#define F16C_FMA(MODE)                                                                                    \
    F16C_FN static uint64_t fma_f16h_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) { \
        uint64_t r = h_fma(a, b, c, FPEMU_##MODE, NULL, ctx);                                              \
        return r != EMU_FAST_FAIL ? r : fma_f16_##MODE(f, a, b, c, ctx);                                  \
    }
F16C_ADDMUL(RNA) F16C_ADDMUL(RTO) F16C_ADDMUL(SR)
FAST_MODES_1(F16C_FMA) F16C_FMA(SR)
/* sr with the caller's draw (fpemu_add_sr), else the double path's */
F16C_FN static uint64_t add_f16h_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx,
                                    int neg) {
    __m128 s;
    if (!ctx->daz && h_sum(a, b, neg, &s)) {
        uint64_t r = HROUND_RB(s);
        if (r != EMU_FAST_FAIL) return r;
    }
    return add_f16_RB(f, a, b, rbits, ctx, neg);
}
F16C_FN static uint64_t mul_f16h_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx) {
    if (!ctx->daz) {
        uint64_t r = HROUND_RB(h_prod(a, b));
        if (r != EMU_FAST_FAIL) return r;
    }
    return mul_f16_RB(f, a, b, rbits, ctx);
}
F16C_FN static uint64_t fma_f16h_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits,
                                    fpemu_ctx *ctx) {
    uint64_t r = h_fma(a, b, c, FPEMU_SR, &rbits, ctx);
    return r != EMU_FAST_FAIL ? r : fma_f16_RB(f, a, b, c, rbits, ctx);
}
F16C_ADDMUL(RNE) F16C_ADDMUL(RDN) F16C_ADDMUL(RUP) F16C_ADDMUL(RTZ)

/* ---- f16 through AVX512-FP16 -------------------------------------------
 * Where the CPU has AVX512-FP16 (Sapphire Rapids and later), vaddsh, vmulsh
 * and vfmadd213sh give the correctly rounded f16 result in the mode of
 * their embedded rounding field, with {sae}: MXCSR's mode and flags are
 * neither read nor written. Each operation also runs in rdn and rup: the
 * exact result is an f16 iff the two agree (they are its neighbours
 * otherwise), which gives the inexact flag without the exact value (fma's
 * does not fit a float). rtz is whichever of the two lies toward zero, rto
 * that with its last bit set when inexact; rna is rne's result except at a
 * tie, where it is the neighbour away from zero. A tie can only change rne's
 * choice when rne chose the even neighbour toward zero; only then does the
 * exact test run in double: the value minus the neighbours' midpoint is
 * zero (a + b, a * b and c - mid are exact doubles; fma rounds once).
 * The result check is h_round's: magnitude strictly between the smallest
 * normal and the largest finite (no tininess, ftz, overflow or NaN policy
 * applies there; inf/NaN operands give inf/NaN and fail it); those cases,
 * daz, and sr (whose draw needs the exact fraction) take the F16C path. */
/* gcc 12 declares the intrinsics for target attributes; clang 14 only
 * under -mavx512fp16 (its builds, the fuzz targets, stop at F16C) */
#if (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12) || (defined(__clang__) && defined(__AVX512FP16__))
#define HAVE_FP16_ISA 1
#define FP16_FN __attribute__((target("avx512fp16,avx512vl,avx512bw,avx512dq,avx512f,fma")))
#define X_RN (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define X_RD (_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define X_RU (_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
enum { X_ADD, X_MUL, X_FMA };
FP16_FN static inline __attribute__((always_inline)) __m128h x16(uint64_t c) {
    return _mm_castsi128_ph(_mm_cvtsi16_si128((short)c));
}
FP16_FN static inline __attribute__((always_inline)) uint32_t c16(__m128h v) {
    return (uint16_t)_mm_cvtsi128_si16(_mm_castph_si128(v));
}
FP16_FN static inline __attribute__((always_inline)) double d16(__m128h v) {
    return _mm_cvtsd_f64(_mm_cvtsh_sd(_mm_setzero_pd(), v));
}
#define X_RUN(R) (op == X_ADD ? _mm_add_round_sh(x, y, R) : op == X_MUL ? _mm_mul_round_sh(x, y, R) : _mm_fmadd_round_sh(x, y, z, R))
FP16_FN static inline __attribute__((always_inline)) uint64_t x_op(int op, int mode, uint64_t a, uint64_t b, uint64_t c,
                                                                    fpemu_ctx *ctx) {
    __m128h x = x16(a), y = x16(b), z = x16(c);
    uint32_t rd = c16(X_RUN(X_RD)), ru = c16(X_RUN(X_RU)), rz = rd & 0x8000u ? ru : rd, r;
    switch (mode) {
    case FPEMU_RNE: r = c16(X_RUN(X_RN)); break;
    case FPEMU_RUP: r = ru; break;
    case FPEMU_RDN: r = rd; break;
    case FPEMU_RTZ: r = rz; break;
    case FPEMU_RTO: r = rz | (rd != ru); break;
    default: /* rna */
        r = c16(X_RUN(X_RN));
        if (rd != ru && r == rz && !(r & 1)) {
            double X = d16(x), Y = d16(y), mid = (d16(x16(rd)) + d16(x16(ru))) * 0.5;
            double t = op == X_ADD ? (X + Y) - mid : op == X_MUL ? X * Y - mid
                     : _mm_cvtsd_f64(_mm_fmadd_sd(_mm_set_sd(X), _mm_set_sd(Y), _mm_set_sd(d16(z) - mid)));
            if (t == 0) r = rd & 0x8000u ? rd : ru; /* away from zero */
        }
    }
    if ((r & 0x7FFFu) - 0x401u >= 0x7BFFu - 0x401u) return EMU_FAST_FAIL;
    emu__or_flags(ctx, rd != ru);
    return r;
}
/* What x_op refuses, in rne: its result is right at any magnitude
 * (subnormal, zero and overflow to inf included), so where no policy acts
 * (no sat, ftz or tininess before; no inf or NaN operand) only its flags
 * remain: inexact iff rd != ru (but for an exact zero, rdn's -0 and rup's
 * +0); overflow iff the result is inf; underflow iff inexact below the
 * smallest normal (a value rounded to the subnormal grid below 2^emin was
 * below it rounded to p bits too). At the smallest normal itself the
 * unbounded rounding decides: EMU_FAST_FAIL, as for the rest (the
 * complete path). Out of line: the hot path keeps its registers. */
FP16_FN static __attribute__((noinline)) uint64_t x_edge_rne(int op, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) {
    /* bitwise: which operand is special varies from call to call */
    unsigned sp = ((a & 0x7C00u) == 0x7C00u) | ((b & 0x7C00u) == 0x7C00u) | (op == X_FMA && (c & 0x7C00u) == 0x7C00u);
    if (sp | (unsigned)ctx->sat | (unsigned)ctx->ftz | (unsigned)ctx->tininess_before) return EMU_FAST_FAIL;
    __m128h x = x16(a), y = x16(b), z = x16(c);
    uint32_t rd = c16(X_RUN(X_RD)), ru = c16(X_RUN(X_RU)), r = c16(X_RUN(X_RN));
    uint32_t mg = r & 0x7FFFu, nx = rd != ru && ((rd | ru) & 0x7FFFu) != 0;
    if (mg == 0x400u && nx) return EMU_FAST_FAIL;
    unsigned fl = nx;
    if (mg == 0x7C00u) fl |= FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
    else if (mg < 0x400u && fl) fl |= FPEMU_FLAG_UNDERFLOW;
    emu__or_flags(ctx, fl);
    return r;
}
/* the fallbacks of the ops below: x_edge_rne in rne, then the complete
 * path; out of line, so that the ops reach them by a tail call and keep no
 * registers of their own */
#define X_FALLBACKS(MODE)                                                                                 \
    FP16_FN static __attribute__((noinline)) uint64_t add_f16x_fb_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                         fpemu_ctx *ctx, int neg) {      \
        if (KSPECIAL(K_f16, a & 0xFFFF) | KSPECIAL(K_f16, b & 0xFFFF)) return spec16_add(f, a, b, neg, ctx);\
        if (FPEMU_##MODE == FPEMU_RNE && !ctx->daz) {                                                     \
            uint64_t e_ = x_edge_rne(X_ADD, a, b ^ (uint64_t)neg << 15, 0, ctx);                          \
            if (e_ != EMU_FAST_FAIL) return e_;                                                           \
        }                                                                                                 \
        return add_f16_full_##MODE(f, a, b, ctx, neg);                                                    \
    }                                                                                                     \
    FP16_FN static __attribute__((noinline)) uint64_t mul_f16x_fb_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                         fpemu_ctx *ctx) {               \
        if (KSPECIAL(K_f16, a & 0xFFFF) | KSPECIAL(K_f16, b & 0xFFFF)) return spec16_mul(f, a, b, ctx);\
        if (FPEMU_##MODE == FPEMU_RNE && !ctx->daz) {                                                     \
            uint64_t e_ = x_edge_rne(X_MUL, a, b, 0, ctx);                                                \
            if (e_ != EMU_FAST_FAIL) return e_;                                                           \
        }                                                                                                 \
        return mul_f16_full_##MODE(f, a, b, ctx);                                                         \
    }                                                                                                     \
    FP16_FN static __attribute__((noinline)) uint64_t fma_f16x_fb_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                         uint64_t c, fpemu_ctx *ctx) {   \
        if (KSPECIAL(K_f16, a & 0xFFFF) | KSPECIAL(K_f16, b & 0xFFFF) | KSPECIAL(K_f16, c & 0xFFFF))  \
            return spec16_fma(f, a, b, c, ctx);                                                       \
        if (FPEMU_##MODE == FPEMU_RNE && !ctx->daz) {                                                     \
            uint64_t e_ = x_edge_rne(X_FMA, a, b, c, ctx);                                                \
            if (e_ != EMU_FAST_FAIL) return e_;                                                           \
        }                                                                                                 \
        return fma_f16_full_##MODE(f, a, b, c, ctx);                                                      \
    }
X_FALLBACKS(RNE) X_FALLBACKS(RNA) X_FALLBACKS(RTZ) X_FALLBACKS(RUP) X_FALLBACKS(RDN) X_FALLBACKS(RTO)
#define FP16_OPS(MODE)                                                                                    \
    FP16_FN static uint64_t add_f16x_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg) { \
        if (!ctx->daz) {                                                                                  \
            uint64_t r = x_op(X_ADD, FPEMU_##MODE, a, b ^ (uint64_t)neg << 15, 0, ctx);                   \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return add_f16x_fb_##MODE(f, a, b, ctx, neg);                                                     \
    }                                                                                                     \
    FP16_FN static uint64_t mul_f16x_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx) { \
        if (!ctx->daz) {                                                                                  \
            uint64_t r = x_op(X_MUL, FPEMU_##MODE, a, b, 0, ctx);                                         \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return mul_f16x_fb_##MODE(f, a, b, ctx);                                                          \
    }                                                                                                     \
    FP16_FN static uint64_t fma_f16x_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) { \
        if (!ctx->daz) {                                                                                  \
            uint64_t r = x_op(X_FMA, FPEMU_##MODE, a, b, c, ctx);                                         \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return fma_f16x_fb_##MODE(f, a, b, c, ctx);                                                       \
    }
FP16_OPS(RNE) FP16_OPS(RNA) FP16_OPS(RTZ) FP16_OPS(RUP) FP16_OPS(RDN) FP16_OPS(RTO)

/* The complete paths of bf16 add and fma at this level: the double sum
 * (of the operands, or of the exact product and c) rounded to odd by
 * embedded rounding (rdn and rup agree iff exact; otherwise the one toward
 * zero with its last bit set) replaces TwoSum's residual: 53 >= 8 + 2
 * bits, and rounding to odd never moves a value across a power of two, so
 * kfull's rounding, tininess (before or after) and overflow of it are those
 * of the exact value. An exact zero sum is rdn's -0 and rup's +0. */
FP16_FN static inline __attribute__((always_inline)) double x_rto(double x, double y, int *zero) {
    __m128d X = _mm_set_sd(x), Y = _mm_set_sd(y);
    uint64_t d = emu__dbits(_mm_cvtsd_f64(_mm_add_round_sd(X, Y, X_RD))), u = emu__dbits(_mm_cvtsd_f64(_mm_add_round_sd(X, Y, X_RU)));
    *zero = ((d | u) << 1) == 0;
    return emu__bitsd((d >> 63 ? u : d) | (d != u));
}
#define BF16_XFULL(MODE)                                                                                  \
    FP16_FN static __attribute__((noinline)) uint64_t add_bf16x_full_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                            fpemu_ctx *ctx, int neg) {   \
        uint64_t ua = a & 0xFFFFu, ub = (b ^ (uint64_t)neg << 15) & 0xFFFFu;                              \
        if (__builtin_expect(KSPECIAL(K_bf16, ua) | KSPECIAL(K_bf16, ub), 0)) return spec16_add(f, a, b, neg, ctx); \
        if (__builtin_expect(ctx->daz, 0)) return add_bf16_full_##MODE(f, a, b, ctx, neg);                \
        int zero;                                                                                         \
        double s = x_rto(kdecf_nb(K_bf16, ua), kdecf_nb(K_bf16, ub), &zero);                                    \
        unsigned fl;                                                                                      \
        uint64_t r = kfull(K_bf16, zero ? 1.0 : s, 0, FPEMU_##MODE, ctx, &fl);                            \
        if (zero) r = KZERO(K_bf16, ua >> 15, ub >> 15, FPEMU_##MODE), fl = 0;                            \
        emu__or_flags(ctx, fl);                                                                           \
        return r;                                                                                         \
    }                                                                                                     \
    FP16_FN static __attribute__((noinline)) uint64_t fma_bf16x_full_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, \
                                                                            uint64_t c, fpemu_ctx *ctx) { \
        uint64_t ua = a & 0xFFFFu, ub = b & 0xFFFFu, uc = c & 0xFFFFu;                                    \
        if (__builtin_expect(KSPECIAL(K_bf16, ua) | KSPECIAL(K_bf16, ub) | KSPECIAL(K_bf16, uc), 0))      \
            return spec16_fma(f, a, b, c, ctx);                                                           \
        if (__builtin_expect(ctx->daz, 0)) return fma_bf16_full_##MODE(f, a, b, c, ctx);                  \
        int zero;                                                                                         \
        double s = x_rto(kdecf_nb(K_bf16, ua) * kdecf_nb(K_bf16, ub), kdecf_nb(K_bf16, uc), &zero); /* product exact */ \
        unsigned fl;                                                                                      \
        uint64_t r = kfull(K_bf16, zero ? 1.0 : s, 0, FPEMU_##MODE, ctx, &fl);                            \
        if (zero) r = KZERO(K_bf16, (ua ^ ub) >> 15, uc >> 15, FPEMU_##MODE), fl = 0;                     \
        emu__or_flags(ctx, fl);                                                                           \
        return r;                                                                                         \
    }
BF16_XFULL(RNE) BF16_XFULL(RNA) BF16_XFULL(RTZ) BF16_XFULL(RUP) BF16_XFULL(RDN) BF16_XFULL(RTO)

/* bf16 fma at the same level, in binary32 like bf16 add: the float product
 * p of two bf16 is exact when its exponent stays in float's normal range
 * (exponent fields summing to 128..380); p + z rounded to odd in float by
 * AVX-512F embedded rounding (the rdn and rup sums agree iff the sum is
 * exact; otherwise the one toward zero with its last bit set) then rounds
 * once more on its bit pattern (bf_round): 24 >= 8 + 2 bits make the double
 * rounding exact in every deterministic mode. sr needs the exact sum: it
 * takes this path only when the two agree. A float sum the host's FTZ
 * could flush is below bf16's smallest normal, which bf_round refuses. */
#define BF16_FMAX_BODY(ROUND)                                                                             \
        uint32_t ua = (uint32_t)a & 0xFFFFu, ub = (uint32_t)b & 0xFFFFu, uc = (uint32_t)c & 0xFFFFu;     \
        if (bf_normal(ua) & bf_normal(ub) & bf_add_ok(uc, uc) & ((ua >> 7 & 0xFFu) + (ub >> 7 & 0xFFu) - 144u <= 236u)) { \
            __m128 P = _mm_set_ss(bf_f(a) * bf_f(b)), Z = _mm_set_ss(bf_f(c)); /* P exact */            \
            uint32_t d = (uint32_t)_mm_cvtsi128_si32(_mm_castps_si128(_mm_add_round_ss(P, Z, X_RD)));     \
            uint32_t u = (uint32_t)_mm_cvtsi128_si32(_mm_castps_si128(_mm_add_round_ss(P, Z, X_RU)));     \
            uint64_t r = ROUND;                                                                           \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }
#define BF16_FMAX(MODE)                                                                                   \
    FP16_FN static uint64_t fma_bf16x_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) { \
        BF16_FMAX_BODY(bf_round((d >> 31 ? u : d) | (d != u), FPEMU_##MODE, ctx))                         \
        return fma_bf16x_full_##MODE(f, a, b, c, ctx);                                                     \
    }
FP16_FN static uint64_t fma_bf16x_SR(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) {
    if (!ctx->sr_stream) {
        BF16_FMAX_BODY(d == u ? bf_round_sr(d, NULL, ctx) : EMU_FAST_FAIL)
    }
    return fma_bf16d_SR(f, a, b, c, ctx);
}
FP16_FN static uint64_t fma_bf16x_RB(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits,
                                     fpemu_ctx *ctx) {
    BF16_FMAX_BODY(d == u ? bf_round_sr(d, &rbits, ctx) : EMU_FAST_FAIL)
    return fma_bf16_RB(f, a, b, c, rbits, ctx);
}
BF16_FMAX(RNE) BF16_FMAX(RNA) BF16_FMAX(RTZ) BF16_FMAX(RUP) BF16_FMAX(RDN) BF16_FMAX(RTO)
/* bf16 add at this level, in binary32 for any exponent gap, where the
 * portable path's exact float sum (a gap of at most 15) does not apply
 * (add_bf16_fb enters here at this level): the rdn and rup float
 * sums agree iff the sum is exact; otherwise the one toward zero with its
 * last bit set is the sum rounded to odd, which bf_round rounds once more
 * exactly (24 >= 8 + 2 bits), as for fma above. Zero and subnormal
 * operands (float denormals, which the host's daz could read as zero) and
 * results that bf_round refuses (a float overflow among them: rdn's FLT_MAX
 * rounds past bf16's largest finite) take the complete path. */
#define BF16_ADDX(MODE)                                                                                   \
    FP16_FN static uint64_t add_bf16x_far_##MODE(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int neg) { \
        if (__builtin_expect(bf_add_ok(a, b), 1)) {                                                       \
            __m128 X = _mm_set_ss(bf_f(a)), Y = _mm_set_ss(bf_fn(b, neg));                                \
            uint32_t d = (uint32_t)_mm_cvtsi128_si32(_mm_castps_si128(_mm_add_round_ss(X, Y, X_RD)));     \
            uint32_t u = (uint32_t)_mm_cvtsi128_si32(_mm_castps_si128(_mm_add_round_ss(X, Y, X_RU)));     \
            uint64_t r = bf_round((d >> 31 ? u : d) | (d != u), FPEMU_##MODE, ctx);                       \
            if (r != EMU_FAST_FAIL) return r;                                                             \
        }                                                                                                 \
        return add_bf16x_full_##MODE(f, a, b, ctx, neg);                                                  \
    }
BF16_ADDX(RNE) BF16_ADDX(RNA) BF16_ADDX(RTZ) BF16_ADDX(RUP) BF16_ADDX(RDN) BF16_ADDX(RTO)
#endif

/* CPUID.1:ECX F16C (29), AVX (28) and OSXSAVE (27), and XCR0 saving the
 * SSE and AVX state (clang's __builtin_cpu_supports has no "f16c"):
 * internal.h */
#include <cpuid.h>
int emu__have_f16c(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c >> 29 & 1) || !(c >> 28 & 1) || !(c >> 27 & 1)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6) == 6;
}
/* CPUID.7.0: EBX AVX512F (16), DQ (17), BW (30), VL (31); EDX AVX512-FP16
 * (23); and XCR0 saving the opmask and ZMM state (bits 5-7) too */
#ifdef HAVE_FP16_ISA
static int have_fp16(void) {
    unsigned a, b, c, d;
    if (!emu__have_f16c() || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    if (!(b >> 16 & 1) || !(b >> 17 & 1) || !(b >> 30 & 1) || !(b >> 31 & 1) || !(d >> 23 & 1)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 0xE6) == 0xE6;
}
#endif
#endif /* x86: every use of emu__have_f16c is x86-only too */

/* ops_f16 and ops_bf16, with the versions of the level in force */
static emu_fastops ops_f16_best, ops_bf16_best;

/* Instruction-set level of the scalar f16 and bf16 ops: 0 portable, 1 F16C
 * (f16), 2 AVX512-FP16 (f16 but sr; bf16 fma); a level the CPU lacks is
 * refused (returns the level in force). Tests use it to check each; the
 * registry starts at the best level. */
int emu__scalar_isa(int level) {
    ops_f16_best = ops_f16;
    ops_bf16_best = ops_bf16;
    F32TO_SET(ops_f16_best, f16);
    F32TO_SET(ops_bf16_best, bf16);
    bf16_far_x = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (level >= 1 && emu__have_f16c()) {
        ops_f16_best.add[FPEMU_RNE] = add_f16h_RNE, ops_f16_best.mul[FPEMU_RNE] = mul_f16h_RNE;
        ops_f16_best.add[FPEMU_RDN] = add_f16h_RDN, ops_f16_best.mul[FPEMU_RDN] = mul_f16h_RDN;
        ops_f16_best.add[FPEMU_RUP] = add_f16h_RUP, ops_f16_best.mul[FPEMU_RUP] = mul_f16h_RUP;
        ops_f16_best.add[FPEMU_RTZ] = add_f16h_RTZ, ops_f16_best.mul[FPEMU_RTZ] = mul_f16h_RTZ;
        ops_f16_best.add[FPEMU_RNA] = add_f16h_RNA, ops_f16_best.mul[FPEMU_RNA] = mul_f16h_RNA;
        ops_f16_best.add[FPEMU_RTO] = add_f16h_RTO, ops_f16_best.mul[FPEMU_RTO] = mul_f16h_RTO;
        ops_f16_best.add[FPEMU_SR] = add_f16h_SR, ops_f16_best.mul[FPEMU_SR] = mul_f16h_SR;
        ops_f16_best.add_rb = add_f16h_RB, ops_f16_best.mul_rb = mul_f16h_RB, ops_f16_best.fma_rb = fma_f16h_RB;
        emu_fma_fn h[FPEMU_ROUND_COUNT] = {fma_f16h_RNE, fma_f16h_RNA, fma_f16h_RTZ, fma_f16h_RUP,
                                           fma_f16h_RDN, fma_f16h_RTO, fma_f16h_SR};
        memcpy(ops_f16_best.fma, h, sizeof h);
#ifdef HAVE_FP16_ISA
        if (level >= 2 && have_fp16()) {
#define X_SET(MODE) ops_f16_best.add[FPEMU_##MODE] = add_f16x_##MODE, ops_f16_best.mul[FPEMU_##MODE] = mul_f16x_##MODE, \
                    ops_f16_best.fma[FPEMU_##MODE] = fma_f16x_##MODE
            X_SET(RNE), X_SET(RNA), X_SET(RTZ), X_SET(RUP), X_SET(RDN), X_SET(RTO);
            emu_fma_fn bx[FPEMU_ROUND_COUNT] = {fma_bf16x_RNE, fma_bf16x_RNA, fma_bf16x_RTZ, fma_bf16x_RUP,
                                                fma_bf16x_RDN, fma_bf16x_RTO, fma_bf16x_SR};
            memcpy(ops_bf16_best.fma, bx, sizeof bx);
            bf16_far_x = 1;
            ops_bf16_best.fma_rb = fma_bf16x_RB;
            return 2;
        }
#endif
        return 1;
    }
#endif
    return 0;
}

/* The ops of a registry format: specialised for f16, bf16 and f32; result
 * tables (arith.c) for the <= 8-bit formats, with the fma of e5m2, e4m3 and
 * the fnuz formats specialised.
 * Registry initialisation runs once (pthread_once), one call per format. */
const emu_fastops *emu__fastops_for(const fpemu_format *f) {
    static emu_fastops small[EMU_REGISTRY_MAX];
    if (!strcmp(f->name, "f16")) {
        emu__scalar_isa(2);
        return &ops_f16_best;
    }
    if (!strcmp(f->name, "bf16")) {
        emu__scalar_isa(2);
        return &ops_bf16_best;
    }
    if (!strcmp(f->name, "f32")) {
        return &ops_f32;
    }
    int fi = emu__registry_index(f);
    if (f->bits > 8 || fi < 0) return NULL;
    emu__tabops(f, &small[fi]);
#define FMA_OPS(NAME) {fma_##NAME##_RNE, fma_##NAME##_RNA, fma_##NAME##_RTZ, fma_##NAME##_RUP, fma_##NAME##_RDN, \
                       fma_##NAME##_RTO, fma_##NAME##_SR}
    static const struct {
        const char *name;
        emu_fma_fn fma[FPEMU_ROUND_COUNT];
        emu_fma_rb_fn rb;
        emu_from_fn from[FPEMU_ROUND_COUNT];
        emu_from_rb_fn from_rb;
    } fmas[] = {{"e5m2", FMA_OPS(e5m2), fma_e5m2_RB, FAST_TABLE(f32to, e5m2), f32to_e5m2_RB},
                {"e4m3", FMA_OPS(e4m3), fma_e4m3_RB, FAST_TABLE(f32to, e4m3), f32to_e4m3_RB},
                {"e4m3fnuz", FMA_OPS(e4m3fnuz), fma_e4m3fnuz_RB, FAST_TABLE(f32to, e4m3fnuz), f32to_e4m3fnuz_RB},
                {"e5m2fnuz", FMA_OPS(e5m2fnuz), fma_e5m2fnuz_RB, FAST_TABLE(f32to, e5m2fnuz), f32to_e5m2fnuz_RB}};
    for (size_t i = 0; i < sizeof fmas / sizeof fmas[0]; i++)
        if (!strcmp(f->name, fmas[i].name)) {
            memcpy(small[fi].fma, fmas[i].fma, sizeof fmas[i].fma);
            small[fi].fma_rb = fmas[i].rb;
            memcpy(small[fi].from_f32, fmas[i].from, sizeof fmas[i].from);
            small[fi].from_f32_rb = fmas[i].from_rb;
        }
    return &small[fi];
}
