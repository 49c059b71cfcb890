/* cast.c: the array fast paths of fpemu_encode_f32 and fpemu_round_f32
 * (array.c): f32 -> small formats. Each computes exactly what the generic
 * conversion computes and hands every element it cannot do to it;
 * tests/t_emu_fast checks them against the scalar conversion. */
#include <math.h>
#include <string.h>
#include "internal.h"

/* ---- arrays: f32 -> small formats in rne --------------------------------
 * A branch-free kernel handles inputs whose result is normal and finite;
 * the rest (zeros, subnormal results, overflow, inf/NaN) are redone by the
 * generic path in a second pass. Only integer operations: the result does
 * not depend on the instruction set the compiler picks. */

typedef struct { int m, bias, emin, emax; uint32_t maxmant, signshift; } kparams;

/* One element: the code, and whether it is right (a normal, finite result).
 * Every quantity fits in 31 bits, so the comparisons are signed: they map
 * to single vector compares. */
static inline uint32_t kelem(uint32_t u, const kparams *p, uint32_t *okv, uint32_t *low_out) {
    const int32_t sh = 23 - p->m, lowmask = (1 << sh) - 1, half = 1 << (sh - 1);
    const int32_t mmask = (1 << p->m) - 1, rebias = (127 - p->bias) << p->m, maxmant = (int32_t)p->maxmant;
    int32_t a = (int32_t)(u & 0x7FFFFFFFu);
    int32_t E = (a >> 23) - 127;
    int32_t low = a & lowmask, kept = a >> sh;
    int32_t inc = (low > half) | ((low == half) & kept);
    int32_t r = kept + (inc & 1);
    int32_t Er = (r >> p->m) - 127;
    *okv = (uint32_t)((E >= p->emin) & (E <= p->emax) & ((Er < p->emax) | ((Er == p->emax) & ((r & mmask) <= maxmant))));
    *low_out = (uint32_t)low;
    return (uint32_t)(r - rebias) | ((u >> 31) << p->signshift);
}

/* Kernels flag bad elements per block of KB, so the fix-up pass visits
 * only the blocks that need it. */
enum { KB = 16 };
#define KERNEL(NAME, T)                                                                                   \
    __attribute__((target_clones("avx2", "default"), optimize("O3"))) static uint32_t NAME(              \
        T *restrict out, const uint32_t *restrict in, size_t n, const kparams *pp, uint32_t *inexact,    \
        uint8_t *restrict badblk) {                                                                       \
        const kparams p = *pp;                                                                            \
        uint32_t bad = 0, nx = 0;                                                                         \
        for (size_t b = 0; b * KB < n; b++) {                                                             \
            size_t lo = b * KB, hi = lo + KB < n ? lo + KB : n;                                          \
            uint32_t bb = 0;                                                                              \
            for (size_t i = lo; i < hi; i++) {                                                            \
                uint32_t okv, low;                                                                        \
                out[i] = (T)kelem(in[i], &p, &okv, &low);                                                \
                bb |= okv ^ 1u;                                                                          \
                nx |= okv & (low != 0);                                                                  \
            }                                                                                             \
            badblk[b] = (uint8_t)bb;                                                                      \
            bad |= bb;                                                                                    \
        }                                                                                                 \
        *inexact = nx;                                                                                    \
        return bad;                                                                                       \
    }
KERNEL(kernel8, uint8_t)
KERNEL(kernel16, uint16_t)

/* Fake quantisation: for a normal, finite result the rounded value's f32
 * bits are the rounded magnitude shifted back, with the sign. */
__attribute__((target_clones("avx2", "default"), optimize("O3"))) static uint32_t kernel_round(
    uint32_t *restrict out, const uint32_t *restrict in, size_t n, const kparams *pp, uint32_t *inexact,
    uint8_t *restrict badblk) {
    const kparams p = *pp;
    const uint32_t sh = 23 - (uint32_t)p.m, rebias = (uint32_t)(127 - p.bias) << p.m;
    const uint32_t magmask = (1u << p.signshift) - 1;
    uint32_t bad = 0, nx = 0;
    for (size_t b = 0; b * KB < n; b++) {
        size_t lo = b * KB, hi = lo + KB < n ? lo + KB : n;
        uint32_t bb = 0;
        for (size_t i = lo; i < hi; i++) {
            uint32_t okv, low, u = in[i];
            uint32_t code = kelem(u, &p, &okv, &low);
            /* code = (r - rebias) | sign: undo the rebias to get r back */
            out[i] = (((code & magmask) + rebias) << sh) | (u & 0x80000000u);
            bb |= okv ^ 1u;
            nx |= okv & (low != 0);
        }
        badblk[b] = (uint8_t)bb;
        bad |= bb;
    }
    *inexact = nx;
    return bad;
}

__attribute__((target_clones("avx2", "default"), optimize("O3"))) static float amax_f32(const float *restrict x, size_t n) {
    float a = 0;
    for (size_t i = 0; i < n; i++) {
        float v = fabsf(x[i]);
        a = v > a && v <= 3.4028235e38f ? v : a; /* finite only; NaN compares false */
    }
    return a;
}

int emu__encode_fast(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats) {
    if (ctx->round != FPEMU_RNE || ctx->daz || ctx->ftz || fmt->p > 23 || fmt->mbits == 0 || fmt->ebits > 8 || fmt->pad ||
        !fmt->has_subnormals || fmt->emin < -126 || fmt->emax > 127 || (fmt->container != 8 && fmt->container != 16))
        return 0;
    const fpemu_format *f32 = emu__f32();
    enum { CHUNK = 4096 };
    unsigned flags = 0;
    const kparams kp = {fmt->mbits, fmt->bias, fmt->emin, fmt->emax, (uint32_t)fmt->maxmant, (uint32_t)fmt->bits - 1};
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        const uint32_t *in = (const uint32_t *)(const void *)(src + i0);
        uint32_t nx, bad;
        uint8_t badblk[CHUNK / KB];
        if (fmt->container == 8) bad = kernel8((uint8_t *)dst + i0, in, m, &kp, &nx, badblk);
        else bad = kernel16((uint16_t *)dst + i0, in, m, &kp, &nx, badblk);
        if (nx) flags |= FPEMU_FLAG_INEXACT;
        if (stats) {
            stats->n += m;
            float a = amax_f32(src + i0, m);
            if (a > stats->amax) stats->amax = a;
        }
        if (!bad) continue;
        /* second pass: the elements the kernel could not do */
        for (size_t j = 0; j < m; j++) {
            if (!badblk[j / KB]) { j |= KB - 1; continue; } /* the whole block was right */
            uint32_t okv, low;
            kelem(in[j], &kp, &okv, &low);
            if (okv) continue; /* the kernel's code is right */
            fpemu_ctx one = *ctx;
            one.flags = 0;
            uint64_t code = fpemu_convert(fmt, f32, in[j], &one);
            fpemu_code_store(fmt, dst, i0 + j, code);
            flags |= one.flags;
            if (stats) emu__count_cast(fmt, stats, src[i0 + j], code, one.flags, 0);
        }
    }
    ctx->flags |= flags;
    return 1;
}

int emu__round_fast(const fpemu_format *fmt, float *dst, const float *src, size_t n, fpemu_ctx *ctx,
                    fpemu_cast_stats *stats) {
    if (ctx->round != FPEMU_RNE || ctx->daz || ctx->ftz || fmt->p > 23 || fmt->mbits == 0 || fmt->ebits > 8 ||
        fmt->pad || !fmt->has_subnormals || fmt->emin < -126 || fmt->emax > 127 || fmt->bits > 16)
        return 0;
    const fpemu_format *f32 = emu__f32();
    const kparams kp = {fmt->mbits, fmt->bias, fmt->emin, fmt->emax, (uint32_t)fmt->maxmant, (uint32_t)fmt->bits - 1};
    enum { CHUNK = 4096 };
    unsigned flags = 0;
    uint32_t keep[CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        const uint32_t *in = (const uint32_t *)(const void *)(src + i0);
        if (stats) {
            stats->n += m;
            float a = amax_f32(src + i0, m);
            if (a > stats->amax) stats->amax = a;
        }
        /* dst may alias src: keep the inputs of this chunk for the fix-up pass */
        memcpy(keep, in, m * sizeof *keep);
        uint8_t badblk[CHUNK / KB];
        uint32_t nx, bad = kernel_round((uint32_t *)(void *)(dst + i0), keep, m, &kp, &nx, badblk);
        if (nx) flags |= FPEMU_FLAG_INEXACT;
        if (!bad) continue;
        for (size_t j = 0; j < m; j++) {
            if (!badblk[j / KB]) { j |= KB - 1; continue; }
            uint32_t okv, low;
            kelem(keep[j], &kp, &okv, &low);
            if (okv) continue;
            fpemu_ctx one = *ctx;
            one.flags = 0;
            uint64_t code = fpemu_convert(fmt, f32, keep[j], &one);
            dst[i0 + j] = fpemu_to_float(fmt, code, &one);
            flags |= one.flags;
            if (stats) {
                float x;
                memcpy(&x, &keep[j], 4);
                emu__count_cast(fmt, stats, x, code, one.flags, 0);
            }
        }
    }
    ctx->flags |= flags;
    return 1;
}
