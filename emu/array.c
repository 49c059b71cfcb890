/* SPDX-License-Identifier: MIT */
/* array.c: whole-array encode, decode, fake-quantise and convert, with the
 * telemetry counters of docs/training.md. Element i of an encode,
 * round, convert or quantize array always takes SR draw (counter + i), so
 * splitting such an array across threads never changes a result; decode is
 * the loop of fpemu_to_float (docs/semantics.md). Fast paths for the hot f32
 * casts live in cast.c. */
#include <float.h>
#include <math.h>
#include "internal.h"

/* cast.c: returns 1 if it handled the whole array. */
int emu__encode_fast(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats);
int emu__round_fast(const fpemu_format *fmt, float *dst, const float *src, size_t n, fpemu_ctx *ctx,
                    fpemu_cast_stats *stats);

/* Telemetry of one cast (docs/training.md): overflow (finite inputs
 * that became inf/NaN or were clamped), underflow to zero, subnormal
 * results. The fast kernels count n and amax for whole chunks themselves
 * and pass with_n_amax = 0 for the elements they redo. */
void emu__count_cast(const fpemu_format *fmt, fpemu_cast_stats *st, float x, uint64_t code, unsigned fl, int with_n_amax) {
    if (with_n_amax) st->n++;
    if (!isfinite(x)) { st->nonfinite_in++; return; }
    if (with_n_amax && fabsf(x) > st->amax) st->amax = fabsf(x);
    fpemu_class k = fpemu_classify(fmt, code);
    if (fl & FPEMU_FLAG_OVERFLOW) {
        st->overflow++;
        if (k != FPEMU_CLASS_INF && k != FPEMU_CLASS_QNAN && k != FPEMU_CLASS_SNAN) st->saturated++;
    } else if (x != 0 && k == FPEMU_CLASS_ZERO) st->underflow++;
    else if (x != 0 && k == FPEMU_CLASS_SUBNORMAL) st->subnormal++;
}

/* sr without a caller stream, for a format whose normal range lies inside
 * binary32's (p <= 23): a result that is normal with a finite upper
 * neighbour is the f32's bits cut at the format's last place, plus one if
 * element i's draw, mix(seed, counter + i), falls below the cut-off
 * fraction (emu__sr_up_low; one draw per element, as fpemu_convert takes
 * it). *sr32 is set when this applies; its fields are the cut's constants. */
static emu_sr_cut sr32_for(const fpemu_format *fmt, const fpemu_ctx *ctx) {
    emu_sr_cut k = {0};
    if (ctx->round != FPEMU_SR || ctx->sr_stream || !emu__small(fmt) || fmt->mbits < 1 || fmt->mbits > 22 ||
        fmt->emin < -126 || fmt->emax > 127)
        return k;
    k.ok = 1;
    k.sh = 23 - fmt->mbits;
    k.lo = (uint32_t)(127 + fmt->emin) << 23;
    /* the largest finite magnitude with float's exponent bias: below it the upper neighbour is finite */
    k.hi = (((uint32_t)(127 + fmt->emax) << fmt->mbits) | (uint32_t)fmt->maxmant) << k.sh;
    k.rebias = (uint32_t)(127 - fmt->bias) << fmt->mbits;
    k.lowmask = (1u << k.sh) - 1;
    k.signbit = fmt->is_signed ? fmt->sign_bit : 0;
    return k;
}

/* Every array cast leaves the stream n draws on, whatever the mode and the
 * path taken (the caller's stream is used up to its end). */
static void skip_draws(fpemu_ctx *ctx, size_t n) { emu__array_at(ctx, ctx->counter, ctx->sr_pos, n); }

void fpemu_encode_f32(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                      fpemu_cast_stats *stats) {
    if (emu__encode_fast(fmt, dst, src, n, ctx, stats)) {
        skip_draws(ctx, n); /* as the element-by-element loop below does */
        return;
    }
    const fpemu_format *f32 = emu__f32();
    uint64_t base = ctx->counter;
    size_t pos = ctx->sr_pos;
    unsigned all = 0;
    const emu_sr_cut k = sr32_for(fmt, ctx);
    /* the cut 8 elements at a time where the CPU has it (cast.c): it marks
     * the elements it did in mask, the loop below does the others */
    enum { BLK = 1024 };
    uint8_t mask[BLK / 8];
    const int vec = k.ok && !fmt->pad && (fmt->container == 8 || fmt->container == 16);
    for (size_t i0 = 0; i0 < n; i0 += BLK) {
        const size_t m = n - i0 < BLK ? n - i0 : BLK;
        const size_t done = vec ? emu__sr_cut_fast(&k, ctx->seed, base + i0, ctx->sr_bits, src + i0, m,
                                                   (uint8_t *)dst + i0 * (fmt->container / 8), fmt->container / 8, mask,
                                                   &all, stats)
                                : 0;
        for (size_t j = 0; j < m; j++) {
            if (j < done) {
                if (mask[j >> 3] == 0xFF) { /* j is a multiple of 8 here */
                    j += 7;
                    continue;
                }
                if (mask[j >> 3] >> (j & 7) & 1) continue;
            }
            const size_t i = i0 + j;
            uint32_t u = emu__fbits(src[i]), mag = u & 0x7FFFFFFFu;
            if (k.ok && mag - k.lo < k.hi - k.lo && (!(u >> 31) || k.signbit)) {
                uint32_t low = mag & k.lowmask;
                uint64_t up = emu__sr_up_low(emu__mix(ctx->seed, base + i), low, k.sh, ctx->sr_bits);
                uint64_t code = ((uint64_t)((mag >> k.sh) - k.rebias) + up) | (u >> 31 ? k.signbit : 0);
                fpemu_code_store(fmt, dst, i, emu__unstrip(fmt, code));
                all |= low != 0; /* FPEMU_FLAG_INEXACT */
                if (stats) { /* all emu__count_cast counts of a normal result from a finite input */
                    stats->n++;
                    if (fabsf(src[i]) > stats->amax) stats->amax = fabsf(src[i]);
                }
                continue;
            }
            unsigned saved = ctx->flags;
            ctx->flags = 0;
            emu__array_at(ctx, base, pos, i);
            uint64_t code = fpemu_convert(fmt, f32, u, ctx);
            fpemu_code_store(fmt, dst, i, code);
            if (stats) emu__count_cast(fmt, stats, src[i], code, ctx->flags, 1);
            all |= ctx->flags;
            ctx->flags = saved;
        }
    }
    ctx->flags |= all;
    emu__array_at(ctx, base, pos, n);
}

void fpemu_decode_f32(const fpemu_format *fmt, float *dst, const void *src, size_t n, fpemu_ctx *ctx) {
    if (emu__fits_f32(fmt) && fmt->decode_table && !ctx->daz) {
        /* NaN codes as fpemu_to_float delivers them (per the NaN policy),
         * not with the table's sign: -NaN for 0x80 of fnuz formats */
        const double *t = fmt->decode_table;
        const uint8_t *cls = fmt->class_table;
        /* the tables have 2^bits entries: bits of a container outside the
         * field are ignored (fpemu.h), never an index */
        const unsigned m = (unsigned)((UINT64_C(1) << fmt->bits) - 1);
        if (!fmt->pad && fmt->container == 8) { /* the common containers without a call per element */
            const uint8_t *p = src;
            for (size_t i = 0; i < n; i++) {
                unsigned c = p[i] & m;
                dst[i] = cls[c] < FPEMU_CLASS_QNAN ? (float)t[c] : fpemu_to_float(fmt, c, ctx);
            }
        } else if (!fmt->pad && fmt->container == 16) {
            const uint16_t *p = src;
            for (size_t i = 0; i < n; i++) {
                unsigned c = p[i] & m;
                dst[i] = cls[c] < FPEMU_CLASS_QNAN ? (float)t[c] : fpemu_to_float(fmt, c, ctx);
            }
        } else
            for (size_t i = 0; i < n; i++) {
                uint64_t code = fpemu_code_load(fmt, src, i), c = emu__strip(fmt, code);
                dst[i] = cls[c] < FPEMU_CLASS_QNAN ? (float)t[c] : fpemu_to_float(fmt, code, ctx);
            }
        return;
    }
    for (size_t i = 0; i < n; i++) dst[i] = fpemu_to_float(fmt, fpemu_code_load(fmt, src, i), ctx);
}

/* Does decode(encode(x)) give x back, with no flag and no draw, for every
 * float x that is not a NaN, under ctx? fmt holds every float exactly (p
 * >= 24, its range and subnormal grid cover f32's), has IEEE infinities,
 * signed zeros and NaNs, and no policy of ctx changes an exact value: sat
 * (an infinity becomes max finite), daz (a float subnormal reads as zero),
 * ftz (a float subnormal is tiny in fmt, or in f32 when decoded back), a
 * rounding mode outside the enum. */
static int round_f32_identity(const fpemu_format *fmt, const fpemu_ctx *ctx) {
    int lowest = fmt->has_subnormals ? fmt->emin - fmt->mbits : fmt->emin; /* exponent of the smallest quantum */
    return fmt->p >= 24 && fmt->is_signed && fmt->has_negzero && fmt->inf == FPEMU_INF_IEEE &&
           fmt->nan == FPEMU_NANS_IEEE && fmt->max_finite >= FLT_MAX && lowest <= -149 && !ctx->sat && !ctx->daz &&
           !ctx->ftz && (unsigned)ctx->round < FPEMU_ROUND_COUNT;
}

void fpemu_round_f32(const fpemu_format *fmt, float *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats) {
    if (round_f32_identity(fmt, ctx)) { /* f32 itself, f64: every value but a NaN passes unchanged */
        for (size_t i = 0; i < n; i++) {
            float x = src[i];
            /* a NaN as the scalar conversions give it (the NaN policy; a
             * signalling NaN raises invalid): it takes no draw */
            dst[i] = x == x ? x : fpemu_to_float(fmt, fpemu_from_float(fmt, x, ctx), ctx);
            if (stats) {
                stats->n++;
                if (!isfinite(x)) stats->nonfinite_in++;
                else {
                    if (fabsf(x) > stats->amax) stats->amax = fabsf(x);
                    if (x != 0 && fabsf(x) < fmt->min_normal) stats->subnormal++; /* f32's subnormals, in f32 */
                }
            }
        }
        skip_draws(ctx, n);
        return;
    }
    if (emu__round_fast(fmt, dst, src, n, ctx, stats)) {
        skip_draws(ctx, n);
        return;
    }
    /* Encode in chunks into a small code buffer, then decode in place. */
    enum { CHUNK = 1024 };
    uint64_t buf[CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t m = n - i < CHUNK ? n - i : CHUNK;
        fpemu_encode_f32(fmt, buf, src + i, m, ctx, stats);
        /* the decode draws nothing from the stream of the encode: where a
         * value of fmt is not always a float (p > 24, or bits below 2^-149)
         * it rounds, which in sr would take draws and shift every later
         * chunk's (element i takes draw counter + i) */
        uint64_t counter = ctx->counter;
        size_t pos = ctx->sr_pos;
        fpemu_decode_f32(fmt, dst + i, buf, m, ctx);
        ctx->counter = counter, ctx->sr_pos = pos;
    }
}

void fpemu_convert_array(const fpemu_format *dst_fmt, void *dst, const fpemu_format *src_fmt, const void *src, size_t n,
                         fpemu_ctx *ctx) {
    uint64_t base = ctx->counter;
    size_t pos = ctx->sr_pos;
    for (size_t i = 0; i < n; i++) {
        emu__array_at(ctx, base, pos, i);
        fpemu_code_store(dst_fmt, dst, i, fpemu_convert(dst_fmt, src_fmt, fpemu_code_load(src_fmt, src, i), ctx));
    }
    emu__array_at(ctx, base, pos, n);
}
