/* SPDX-License-Identifier: MIT */
/* round.c: the one round-and-pack step every operation ends in (after
 * SoftFloat's s_roundPackTo*), the context, special results and the
 * stochastic-rounding stream. Semantics: IEEE 754-2019 clauses 4 and 7,
 * extended to the small formats as docs/semantics.md describes. */
#include <string.h>
#include <strings.h>
#include "internal.h"

/* ---- context and names ------------------------------------------------- */

void fpemu_ctx_init(fpemu_ctx *ctx) {
    memset(ctx, 0, sizeof *ctx);
    ctx->round = FPEMU_RNE;
    ctx->nan_policy = FPEMU_NAN_CANONICAL;
}

static const char *const round_names[FPEMU_ROUND_COUNT] = {"rne", "rna", "rtz", "rup", "rdn", "rto", "sr"};
/* TestFloat's spellings, in the same order. */
static const char *const round_tf[FPEMU_ROUND_COUNT] = {"near_even", "near_maxMag", "minMag", "max", "min", "odd", "stochastic"};

const char *fpemu_round_name(fpemu_round r) { return (unsigned)r < FPEMU_ROUND_COUNT ? round_names[r] : "?"; }

int fpemu_round_parse(const char *name) {
    if (!name) return -1;
    while (*name == '-') name++;
    for (int i = 0; i < FPEMU_ROUND_COUNT; i++)
        if (!strcasecmp(name, round_names[i])) return i;
    if (name[0] == 'r') name++; /* "-rnear_even" */
    for (int i = 0; i < FPEMU_ROUND_COUNT; i++)
        if (!strcasecmp(name, round_tf[i])) return i;
    return -1;
}

static const char *const nan_names[FPEMU_NAN_POLICY_COUNT] = {"canonical", "x86", "cuda", "torch"};
const char *fpemu_nan_policy_name(fpemu_nan_policy p) { return (unsigned)p < FPEMU_NAN_POLICY_COUNT ? nan_names[p] : "?"; }
int fpemu_nan_policy_parse(const char *name) {
    for (int i = 0; i < FPEMU_NAN_POLICY_COUNT; i++)
        if (name && !strcasecmp(name, nan_names[i])) return i;
    return -1;
}

/* ---- random stream ------------------------------------------------------ */

/* SplitMix64 finaliser over a (seed, counter) pair: a counter-based
 * generator, so a draw depends only on its index, never on call order or
 * thread count. */
uint64_t fpemu_random64(uint64_t seed, uint64_t counter) { return emu__mix(seed, counter); }

/* Every step of emu__mix is a bijection of z (odd multiplies, xorshifts,
 * adding a constant), and so is counter -> z: undo them in reverse. */
static uint64_t inv_odd(uint64_t a) { /* a^-1 mod 2^64, a odd: Newton, 5 -> 10 -> ... -> 80 bits */
    uint64_t x = a * 3 ^ 2;
    for (int i = 0; i < 4; i++) x *= 2 - a * x;
    return x;
}
static uint64_t unxorshift(uint64_t y, int s) { /* x with x ^ (x >> s) == y */
    uint64_t x = y;
    for (int k = s; k < 64; k += s) x = y ^ (x >> s);
    return x;
}
uint64_t fpemu_random64_counter(uint64_t seed, uint64_t draw) {
    uint64_t z = unxorshift(draw, 32);
    z *= inv_odd(EMU_MIX_M1);
    z = unxorshift(z, 29);
    z -= seed ^ EMU_MIX_KEY;
    z = unxorshift(z, 31);
    z *= inv_odd(EMU_MIX_M2);
    z = unxorshift(z, 27);
    z *= inv_odd(EMU_MIX_M1);
    z = unxorshift(z, 31);
    return (z - seed * EMU_MIX_SEED) * inv_odd(EMU_MIX_CTR) - 1;
}

/* Every draw advances the counter, a caller-stream draw too: draw k of a
 * computation is sr_stream[sr_pos + k] while the stream lasts, else
 * fpemu_random64(seed, counter + k), as element k of an array cast takes it. */
uint64_t emu__draw(fpemu_ctx *ctx) {
    uint64_t c = ctx->counter++;
    if (ctx->sr_stream && ctx->sr_pos < ctx->sr_len) return ctx->sr_stream[ctx->sr_pos++];
    return fpemu_random64(ctx->seed, c);
}

/* ---- special results --------------------------------------------------- */

static uint64_t canonical_nan(const fpemu_format *f, int negative) {
    switch (f->nan) {
    case FPEMU_NANS_IEEE: {
        uint64_t eall = (UINT64_C(1) << f->ebits) - 1;
        return (eall << f->mbits) | (UINT64_C(1) << (f->mbits - 1)) | (negative ? f->sign_bit : 0);
    }
    case FPEMU_NANS_FN: return f->mag_mask | (negative ? f->sign_bit : 0);
    case FPEMU_NANS_UZ: return f->sign_bit;
    case FPEMU_NANS_ALLONES: return f->mag_mask | f->sign_bit;
    default: return f->max_code; /* no NaN: +max finite */
    }
}

uint64_t emu__nan_result(const fpemu_format *f, fpemu_ctx *ctx, int invalid, int nops, const uint64_t *ops,
                         const fpemu_format *const *fmts) {
    if (f->nan == FPEMU_NANS_NONE) invalid = 1;
    if (invalid) ctx->flags |= FPEMU_FLAG_INVALID;
    if (f->nan == FPEMU_NANS_NONE) return emu__unstrip(f, f->max_code);
    if (ctx->nan_policy == FPEMU_NAN_X86) {
        /* x86 SSE: the first NaN operand, quieted, sign and top payload bits kept. */
        for (int i = 0; i < nops; i++) {
            const fpemu_format *s = fmts[i];
            uint64_t c = emu__strip(s, ops[i]);
            fpemu_class k = emu__classify(s, c);
            if (k != FPEMU_CLASS_QNAN && k != FPEMU_CLASS_SNAN) continue;
            int neg = (c & s->sign_bit) != 0;
            if (f->nan != FPEMU_NANS_IEEE || s->nan != FPEMU_NANS_IEEE) return emu__unstrip(f, canonical_nan(f, neg));
            uint64_t payload = c & ((UINT64_C(1) << s->mbits) - 1);
            payload = s->mbits >= f->mbits ? payload >> (s->mbits - f->mbits) : payload << (f->mbits - s->mbits);
            return emu__unstrip(f, canonical_nan(f, neg) | payload);
        }
        return emu__unstrip(f, canonical_nan(f, 1));
    }
    if (ctx->nan_policy == FPEMU_NAN_TORCH && f->bits <= 8) {
        /* PyTorch's fp8 casts: the sign of the first NaN operand, every magnitude bit set */
        int neg = 0;
        for (int i = 0; i < nops; i++) {
            uint64_t c = emu__strip(fmts[i], ops[i]);
            fpemu_class k = emu__classify(fmts[i], c);
            if (k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN) { neg = (c & fmts[i]->sign_bit) != 0; break; }
        }
        return emu__nan_signed(f, ctx, 0, neg);
    }
    if ((ctx->nan_policy == FPEMU_NAN_CUDA || ctx->nan_policy == FPEMU_NAN_TORCH) && f->nan == FPEMU_NANS_IEEE)
        return emu__unstrip(f, f->mag_mask); /* every exponent and significand bit set */
    return emu__unstrip(f, canonical_nan(f, 0));
}

/* The NaN of an overflow (or of a NaN operand, under torch) with sign neg:
 * under the torch policy in a format of at most 8 bits, S.111..1 (e4m3,
 * e5m2; fnuz's only NaN 0x80, e8m0's 0xFF); otherwise the policy's NaN with
 * no operand. invalid as emu__nan_result. */
uint64_t emu__nan_signed(const fpemu_format *f, fpemu_ctx *ctx, int invalid, int neg) {
    if (ctx->nan_policy != FPEMU_NAN_TORCH || f->bits > 8 || f->nan == FPEMU_NANS_NONE)
        return emu__nan_result(f, ctx, invalid, 0, NULL, NULL);
    if (invalid) ctx->flags |= FPEMU_FLAG_INVALID;
    if (f->nan == FPEMU_NANS_FN || f->nan == FPEMU_NANS_IEEE) return emu__unstrip(f, f->mag_mask | (neg ? f->sign_bit : 0));
    return emu__unstrip(f, canonical_nan(f, neg));
}

uint64_t emu__inf_result(const fpemu_format *f, fpemu_ctx *ctx, int sign) {
    if (!f->is_signed && sign) return emu__nan_result(f, ctx, 1, 0, NULL, NULL);
    if (f->inf != FPEMU_INF_NONE && !ctx->sat) {
        uint64_t mag = f->inf == FPEMU_INF_TOP ? f->mag_mask : ((UINT64_C(1) << f->ebits) - 1) << f->mbits;
        return emu__unstrip(f, mag | (sign ? f->sign_bit : 0));
    }
    if (ctx->sat || f->nan == FPEMU_NANS_NONE) {
        ctx->flags |= FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
        return emu__unstrip(f, emu__maxfinite(f, sign));
    }
    return emu__nan_signed(f, ctx, 1, sign);
}

/* ---- rounding ----------------------------------------------------------- */

typedef struct {
    uint64_t kept;  /* the value divided by the quantum, rounded */
    int inexact;
} rounded;

/* Round (sig + sticky) * 2^exp to a multiple of 2^qe under mode; r is the
 * SR draw (used only for FPEMU_SR). sig has up to 128 bits: sr decides on
 * the 64 bits below the quantum (frac) and whether anything lies below
 * them, so an exact sr rounding needs sig to carry the value down to 64
 * bits below the quantum (emu__round_pack128's callers do; a 64-bit sig
 * with sticky is exact for sr_bits <= 64 - p). */
static inline rounded round_at(u128 sig, int exp, int sticky, int qe, fpemu_round mode, int sign, uint64_t r,
                               int sr_bits) {
    rounded o;
    int d = qe - exp;
    uint64_t kept, frac; /* frac: the discarded part as a 64-bit binary fraction of the quantum */
    int below;          /* something nonzero below frac's 64 bits */
    if (d <= 0) {
        kept = (uint64_t)(sig << -d); /* the callers' kept values fit in 64 bits */
        frac = 0;
        below = sticky;
    } else if (d <= 64) {
        kept = (uint64_t)(sig >> d);
        frac = (uint64_t)(sig << (64 - d)); /* the low d bits, on top */
        below = sticky;
    } else { /* the 64 bits below the quantum, and below them the rest (sig is nonzero) */
        kept = d < 128 ? (uint64_t)(sig >> d) : 0;
        frac = d < 192 ? (uint64_t)(sig >> (d - 64)) : 0;
        below = sticky || (d < 192 ? (sig & (((u128)1 << (d - 64)) - 1)) != 0 : 1);
    }
    int half = frac >> 63;
    int rest = (frac << 1) != 0 || below;
    o.inexact = half || rest;
    int inc = 0;
    switch (mode) {
    case FPEMU_RNE: inc = half && (rest || (kept & 1)); break;
    case FPEMU_RNA: inc = half; break;
    case FPEMU_RTZ: break;
    case FPEMU_RUP: inc = o.inexact && !sign; break;
    case FPEMU_RDN: inc = o.inexact && sign; break;
    case FPEMU_RTO: if (o.inexact) kept |= 1; break;
    case FPEMU_SR: {
        /* Up iff r < frac * 2^R, r an R-bit integer (docs/semantics.md). */
        int R = sr_bits <= 0 || sr_bits > 64 ? 64 : sr_bits;
        uint64_t rr = R == 64 ? r : r >> (64 - R);
        uint64_t thr = R == 64 ? frac : frac >> (64 - R);
        int more = (R == 64 ? 0 : (frac << R) != 0) || below;
        inc = rr < thr || (rr == thr && more);
        break;
    }
    default: break;
    }
    o.kept = kept + (uint64_t)inc;
    return o;
}

uint64_t fpemu_round_pack(const fpemu_format *f, int sign, uint64_t sig, int exp, int sticky, fpemu_ctx *ctx) {
    return emu__round_pack128(f, sign, sig, exp, sticky, ctx);
}

uint64_t emu__round_pack128(const fpemu_format *f, int sign, u128 sig, int exp, int sticky, fpemu_ctx *ctx) {
    if (emu__bad_mode(ctx)) return emu__nan_result(f, ctx, 1, 0, NULL, NULL);
    if (sig == 0) {
        if (!f->has_subnormals) return emu__nan_result(f, ctx, 1, 0, NULL, NULL); /* no zero (e8m0: exponent field 0 is a binade) */
        return emu__unstrip(f, emu__zero(f, sign));
    }
    if (!f->is_signed && sign) { /* finite and nonzero: sr takes its draw all the same (docs/semantics.md) */
        if (ctx->round == FPEMU_SR) (void)emu__draw(ctx);
        return emu__nan_result(f, ctx, 1, 0, NULL, NULL);
    }
    const int m = f->mbits;
    const int E = exp + 127 - emu__clz128(sig); /* value in [2^E, 2^(E+1)) */
    const fpemu_round mode = ctx->round;
    uint64_t r = mode == FPEMU_SR ? emu__draw(ctx) : 0;
    unsigned flags = 0;

    /* Tininess: before rounding, the exact value is below 2^emin; after
     * rounding, the value rounded to p bits with unbounded exponent range is. */
    int tiny = 0;
    if (E < f->emin) {
        tiny = 1;
        if (!ctx->tininess_before && E == f->emin - 1) {
            rounded u = round_at(sig, exp, sticky, E - m, mode, sign, r, ctx->sr_bits);
            tiny = u.kept < (UINT64_C(2) << m);
        }
    }
    /* ftz flushes to a zero; formats without subnormals (e8m0, custom
     * subnormals=no) have none, and their tiny results round as below */
    if (tiny && ctx->ftz && f->has_subnormals) {
        ctx->flags |= FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT;
        return emu__unstrip(f, emu__zero(f, sign));
    }

    int qe = (E < f->emin && f->has_subnormals ? f->emin : E) - m;
    rounded o = round_at(sig, exp, sticky, qe, mode, sign, r, ctx->sr_bits);
    uint64_t kept = o.kept;
    if (kept >> (m + 1)) { kept >>= 1; qe++; } /* carried into the next binade */

    if (!f->has_subnormals && qe + m < f->emin) {
        /* e8m0 has no zero and no subnormals: the smallest value stands in. */
        ctx->flags |= FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT;
        return emu__unstrip(f, 0);
    }
    if (o.inexact) flags |= FPEMU_FLAG_INEXACT | (tiny ? FPEMU_FLAG_UNDERFLOW : 0);

    /* Overflow: the value rounded with unbounded range exceeds max finite. */
    int er = qe + m;
    if (kept >> m && (er > f->emax || (er == f->emax && (kept & ((UINT64_C(1) << m) - 1)) > f->maxmant))) {
        ctx->flags |= flags | FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT;
        int to_inf;
        switch (mode) {
        case FPEMU_RTZ: case FPEMU_RTO: to_inf = 0; break;
        case FPEMU_RUP: to_inf = !sign; break;
        case FPEMU_RDN: to_inf = sign; break;
        default: to_inf = 1; break; /* rne, rna, and sr that rounded past max */
        }
        if (!to_inf || ctx->sat) return emu__unstrip(f, emu__maxfinite(f, sign));
        if (f->inf != FPEMU_INF_NONE) {
            uint64_t mag = f->inf == FPEMU_INF_TOP ? f->mag_mask : ((UINT64_C(1) << f->ebits) - 1) << f->mbits;
            return emu__unstrip(f, mag | (sign ? f->sign_bit : 0));
        }
        if (f->nan == FPEMU_NANS_NONE) return emu__unstrip(f, emu__maxfinite(f, sign));
        return emu__nan_signed(f, ctx, 0, sign); /* non-saturating: NaN, no invalid */
    }
    ctx->flags |= flags;
    if (kept == 0) return emu__unstrip(f, emu__zero(f, sign));
    /* Normal: biased exponent (qe + m + bias) above the mantissa, with the
     * implicit bit folded in by the addition; subnormal: qe + m = emin. */
    uint64_t mag = kept >> m ? ((uint64_t)(er + f->bias - (f->has_subnormals ? 1 : 0)) << m) + kept - (f->has_subnormals ? 0 : (UINT64_C(1) << m)) : kept;
    return emu__unstrip(f, mag | (sign ? f->sign_bit : 0));
}

uint64_t emu__round_double(const fpemu_format *f, double x, int rsign, fpemu_ctx *ctx) {
    emu_split d = emu__split_double(x);
    int sign = d.sign, exp = d.exp;
    uint64_t sig = d.sig;
    if (rsign == 0) return fpemu_round_pack(f, sign, sig, exp, 0, ctx);
    /* The exact value lies strictly between x and its neighbour toward
     * rsign (relative to the magnitude): (S-1, S) in units of 2^(exp-2)
     * below, (S, S+1) above; rounding only sees that open interval. */
    if ((rsign < 0) != (sign != 0)) return fpemu_round_pack(f, sign, (sig << 2) - 1, exp - 2, 1, ctx);
    return fpemu_round_pack(f, sign, sig, exp, 1, ctx);
}

int64_t emu__round_quotient(double x, double y, fpemu_ctx *ctx, int *inexact) {
    emu_split a = emu__split_double(x), b = emu__split_double(y);
    int la = 52 - (63 - __builtin_clzll(a.sig)), lb = 52 - (63 - __builtin_clzll(b.sig)), sticky;
    u128 q = emu__div117(a.sig << la, b.sig << lb, &sticky);
    uint64_t r = ctx->round == FPEMU_SR ? emu__draw(ctx) : 0;
    rounded o = round_at(q, (a.exp - la) - (b.exp - lb) - 117, sticky, 0, ctx->round, a.sign, r, ctx->sr_bits);
    *inexact = o.inexact;
    return a.sign ? -(int64_t)o.kept : (int64_t)o.kept;
}

int64_t emu__round_to_int(double x, int rsign, fpemu_ctx *ctx, int *inexact) {
    *inexact = 0;
    if (x == 0 && rsign == 0) return 0;
    emu_split d = emu__split_double(x);
    int sign = d.sign, exp = d.exp;
    uint64_t sig = d.sig;
    int sticky = 0;
    if (x == 0) { /* only the residual: a tiny value of sign rsign */
        sign = rsign < 0;
        sig = 1, exp = -1100, sticky = 0;
    } else if (rsign != 0) {
        sticky = 1;
        if ((rsign < 0) != (sign != 0)) sig = (sig << 2) - 1, exp -= 2;
    }
    uint64_t r = ctx->round == FPEMU_SR ? emu__draw(ctx) : 0;
    rounded o = round_at(sig, exp, sticky, 0, ctx->round, sign, r, ctx->sr_bits);
    *inexact = o.inexact;
    return sign ? -(int64_t)o.kept : (int64_t)o.kept;
}
