/* array.c: whole-array encode, decode, fake-quantise and convert, with the
 * telemetry counters of DESIGN.md section 10. Element i of an array always
 * takes SR draw (counter + i), so splitting an array across threads never
 * changes a result. Fast paths for the hot f32 casts live in cast.c. */
#include <math.h>
#include "internal.h"

/* cast.c: returns 1 if it handled the whole array. */
int emu__encode_fast(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats);
int emu__round_fast(const fpemu_format *fmt, float *dst, const float *src, size_t n, fpemu_ctx *ctx,
                    fpemu_cast_stats *stats);

/* Telemetry of one cast (DESIGN.md section 10): overflow (finite inputs
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

void fpemu_encode_f32(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                      fpemu_cast_stats *stats) {
    if (emu__encode_fast(fmt, dst, src, n, ctx, stats)) return;
    const fpemu_format *f32 = emu__f32();
    uint64_t base = ctx->counter;
    size_t pos = ctx->sr_pos;
    unsigned all = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned saved = ctx->flags;
        ctx->flags = 0;
        ctx->counter = base + i;
        ctx->sr_pos = pos + i;
        uint64_t code = fpemu_convert(fmt, f32, emu__fbits(src[i]), ctx);
        fpemu_code_store(fmt, dst, i, code);
        if (stats) emu__count_cast(fmt, stats, src[i], code, ctx->flags, 1);
        all |= ctx->flags;
        ctx->flags = saved;
    }
    ctx->flags |= all;
    ctx->counter = base + n;
    ctx->sr_pos = ctx->sr_stream && pos + n > ctx->sr_len ? ctx->sr_len : pos + n;
}

void fpemu_decode_f32(const fpemu_format *fmt, float *dst, const void *src, size_t n, fpemu_ctx *ctx) {
    if (emu__fits_f32(fmt) && fmt->decode_table && !ctx->daz) {
        /* NaN codes as fpemu_to_float delivers them (per the NaN policy),
         * not with the table's sign: -NaN for 0x80 of fnuz formats */
        const double *t = fmt->decode_table;
        for (size_t i = 0; i < n; i++) {
            uint64_t code = fpemu_code_load(fmt, src, i), c = code >> fmt->pad;
            dst[i] = fmt->class_table[c] < FPEMU_CLASS_QNAN ? (float)t[c] : fpemu_to_float(fmt, code, ctx);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) dst[i] = fpemu_to_float(fmt, fpemu_code_load(fmt, src, i), ctx);
}

void fpemu_round_f32(const fpemu_format *fmt, float *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats) {
    if (fmt->p >= 24 && fmt->ebits >= 8 && fmt->mbits >= 23) { /* f32 itself, f64: values pass unchanged */
        if (dst != src) for (size_t i = 0; i < n; i++) dst[i] = src[i];
        if (stats)
            for (size_t i = 0; i < n; i++) {
                stats->n++;
                if (!isfinite(src[i])) stats->nonfinite_in++;
                else if (fabsf(src[i]) > stats->amax) stats->amax = fabsf(src[i]);
            }
        return;
    }
    if (emu__round_fast(fmt, dst, src, n, ctx, stats)) return;
    /* Encode in chunks into a small code buffer, then decode in place. */
    enum { CHUNK = 1024 };
    uint64_t buf[CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t m = n - i < CHUNK ? n - i : CHUNK;
        fpemu_encode_f32(fmt, buf, src + i, m, ctx, stats);
        fpemu_decode_f32(fmt, dst + i, buf, m, ctx);
    }
}

void fpemu_convert_array(const fpemu_format *dst_fmt, void *dst, const fpemu_format *src_fmt, const void *src, size_t n,
                         fpemu_ctx *ctx) {
    uint64_t base = ctx->counter;
    size_t pos = ctx->sr_pos;
    for (size_t i = 0; i < n; i++) {
        ctx->counter = base + i;
        ctx->sr_pos = pos + i;
        fpemu_code_store(dst_fmt, dst, i, fpemu_convert(dst_fmt, src_fmt, fpemu_code_load(src_fmt, src, i), ctx));
    }
    ctx->counter = base + n;
    ctx->sr_pos = ctx->sr_stream && pos + n > ctx->sr_len ? ctx->sr_len : pos + n;
}
