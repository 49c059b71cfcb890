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
        uint64_t c = code & 0xFF;
        if (f->class_table[c] > FPEMU_CLASS_NORMAL) return 0;
        *v = f->decode_table[c];
        return 1;
    }
    if (f->nan != FPEMU_NANS_IEEE || f->bits == 64) return 0;
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
        if (low) {
            int R = ctx->sr_bits <= 0 || ctx->sr_bits > 64 ? 64 : ctx->sr_bits;
            uint64_t frac = low << (64 - sh), draw = emu__draw(ctx);
            uint64_t rr = R == 64 ? draw : draw >> (64 - R), thr = R == 64 ? frac : frac >> (64 - R);
            int more = R < 64 && (frac << R) != 0;
            r = kept + (rr < thr || (rr == thr && more));
        } else {
            emu__draw(ctx); /* the generic path takes one draw per rounding */
        }
        Er = (int)(r >> m) - 1023;
    } else if (Er > f->emax || (Er == f->emax && (r & mmask) > f->maxmant)) {
        return EMU_FAST_FAIL;
    }
    if (low) ctx->flags |= FPEMU_FLAG_INEXACT;
    uint64_t code = ((uint64_t)(Er + f->bias) << m | (r & mmask)) | (sign ? f->sign_bit : 0);
    return emu__unstrip(f, code);
}

/* ---- specialised scalar fast paths for the hot formats -------------------
 * The same algorithm as emu__fast_decode/emu__fast_pack above, with the
 * format's parameters as compile-time constants so shifts and masks fold. */

typedef struct { int m, bias, emin, emax, bits, sumexact; uint64_t maxmant; } fk;

static inline __attribute__((always_inline)) int kdec(const fk K, uint64_t c, double *v) {
    const uint64_t eall = (UINT64_C(1) << (K.bits - 1 - K.m)) - 1;
    uint64_t expf = (c >> K.m) & eall, mant = c & ((UINT64_C(1) << K.m) - 1);
    uint64_t sign = (c >> (K.bits - 1)) & 1;
    if (expf == eall) return 0; /* inf/NaN (IEEE-style layouts only) */
    if (expf == 0) {
        double x = (double)mant * emu__bitsd((uint64_t)(1023 + K.emin - K.m) << 52);
        *v = sign ? -x : x;
        return 1;
    }
    *v = emu__bitsd(sign << 63 | (expf - (uint64_t)K.bias + 1023) << 52 | mant << (52 - K.m));
    return 1;
}

static inline __attribute__((always_inline)) uint64_t kpack(const fk K, double d, int rsign, fpemu_ctx *ctx) {
    uint64_t u = emu__dbits(d);
    uint64_t sign = u >> 63;
    int E = (int)((u >> 52) & 0x7FF) - 1023;
    if (E < K.emin || E > K.emax) return EMU_FAST_FAIL;
    const int sh = 52 - K.m;
    const uint64_t mmask = (UINT64_C(1) << K.m) - 1;
    uint64_t mag = u & ~(UINT64_C(1) << 63);
    uint64_t low = mag & ((UINT64_C(1) << sh) - 1), half = UINT64_C(1) << (sh - 1);
    uint64_t kept = mag >> sh, r;
    fpemu_round mode = ctx->round;
    if (rsign && (low == 0 || low == half || mode == FPEMU_SR)) return EMU_FAST_FAIL;
    switch (mode) {
    case FPEMU_RNE: r = kept + (low > half || (low == half && (kept & 1))); break;
    case FPEMU_RNA: r = kept + (low >= half); break;
    case FPEMU_RTZ: r = kept; break;
    case FPEMU_RUP: r = kept + (low && !sign); break;
    case FPEMU_RDN: r = kept + (low && sign); break;
    case FPEMU_RTO: r = kept | (low != 0); break;
    default: {
        uint64_t up = kept + 1;
        int Eu = (int)(up >> K.m) - 1023;
        if (Eu > K.emax || (Eu == K.emax && (up & mmask) > K.maxmant)) return EMU_FAST_FAIL;
        uint64_t draw = emu__draw(ctx);
        if (!low) { r = kept; break; }
        int R = ctx->sr_bits <= 0 || ctx->sr_bits > 64 ? 64 : ctx->sr_bits;
        uint64_t frac = low << (64 - sh);
        uint64_t rr = R == 64 ? draw : draw >> (64 - R), thr = R == 64 ? frac : frac >> (64 - R);
        int more = R < 64 && (frac << R) != 0;
        r = kept + (rr < thr || (rr == thr && more));
        break;
    }
    }
    int Er = (int)(r >> K.m) - 1023;
    if (Er > K.emax || (Er == K.emax && (r & mmask) > K.maxmant)) return EMU_FAST_FAIL; /* sr checked above */
    ctx->flags |= low != 0; /* FPEMU_FLAG_INEXACT */
    return ((uint64_t)(Er + K.bias) << K.m | (r & mmask)) | sign << (K.bits - 1);
}

static inline int ksgn(double r) { return (r > 0) - (r < 0); }

#define FAST_FORMAT(NAME, ...)                                                                            \
    static const fk K_##NAME = {__VA_ARGS__};                                                             \
    static uint64_t add_##NAME(uint64_t a, uint64_t b, int neg, fpemu_ctx *ctx) {                        \
        double x, y;                                                                                      \
        if (!kdec(K_##NAME, a, &x) || !kdec(K_##NAME, b, &y)) return EMU_FAST_FAIL;                      \
        if (neg) y = -y;                                                                                  \
        double s = x + y;                                                                                 \
        int rs = 0;                                                                                       \
        if (!K_##NAME.sumexact) {                                                                         \
            double bv = s - x, av = s - bv;                                                               \
            rs = ksgn((x - av) + (y - bv));                                                               \
        }                                                                                                 \
        return kpack(K_##NAME, s, rs, ctx);                                                               \
    }                                                                                                     \
    static uint64_t mul_##NAME(uint64_t a, uint64_t b, fpemu_ctx *ctx) {                                 \
        double x, y;                                                                                      \
        if (!kdec(K_##NAME, a, &x) || !kdec(K_##NAME, b, &y)) return EMU_FAST_FAIL;                      \
        return kpack(K_##NAME, x * y, 0, ctx);                                                            \
    }                                                                                                     \
    static uint64_t fma_##NAME(uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx) {                     \
        double x, y, z;                                                                                   \
        if (!kdec(K_##NAME, a, &x) || !kdec(K_##NAME, b, &y) || !kdec(K_##NAME, c, &z))                  \
            return EMU_FAST_FAIL;                                                                         \
        double p = x * y, s = p + z, bv = s - p, av = s - bv;                                             \
        return kpack(K_##NAME, s, ksgn((p - av) + (z - bv)), ctx);                                        \
    }                                                                                                     \
    static const emu_fastops ops_##NAME = {add_##NAME, mul_##NAME, fma_##NAME};

/*          name  m   bias emin  emax bits sums-exact maxmant */
FAST_FORMAT(f16,  10, 15,  -14,  15,  16,  1,         0x3FF)
FAST_FORMAT(bf16, 7,  127, -126, 127, 16,  0,         0x7F)
FAST_FORMAT(e5m2, 2,  15,  -14,  15,  8,   1,         0x3)
FAST_FORMAT(f32,  23, 127, -126, 127, 32,  0,         0x7FFFFF)

const emu_fastops *emu__fastops_for(const char *name) {
    if (!strcmp(name, "f16")) return &ops_f16;
    if (!strcmp(name, "bf16")) return &ops_bf16;
    if (!strcmp(name, "e5m2")) return &ops_e5m2;
    if (!strcmp(name, "f32")) return &ops_f32;
    return NULL;
}
