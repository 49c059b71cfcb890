/* SPDX-License-Identifier: MIT */
/* cast.c: the array fast paths of fpemu_encode_f32 and fpemu_round_f32
 * (array.c): f32 -> small formats in rne. Each computes exactly what the
 * generic conversion computes and hands every element it cannot do to it;
 * tests/t_emu_fast checks them against the scalar conversion, at every
 * instruction-set level (emu__cast_isa forces one).
 *
 * One pass over the array, 16 (AVX-512), 8 (AVX2, portable C) elements at
 * a time: integer rounding of the f32 bits and a mask of the elements whose
 * result is a normal finite number; zeros and results below min normal are
 * done in the same vector code when a step has any, and only overflow,
 * inf and NaN inputs go to the generic fpemu_convert, element by element.
 * Flags (inexact, underflow) and telemetry (amax, zero and subnormal
 * results) are vector reductions. Integer operations only (the one int ->
 * float conversion is exact), so the three kernels give the same bits,
 * flags and counters on every x86-64 and elsewhere, whatever MXCSR says. */
#include <math.h>
#include <string.h>
#include "internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CAST_X86 1
#else
#define CAST_X86 0
#endif

/* Constants of one format, all on |x|'s f32 bits a (< 2^31):
 * r = a rounded to the format's precision (rne) = (a + half - 1 + lsb) >> sh
 * is, for a normal finite result, the result's magnitude in f32's exponent
 * frame; the code's magnitude is r - rebias and the rounded f32 is r << sh.
 * A tie goes to the even significand: lsb = ((a >> sh) & lsbm) ^ lsbx is
 * the kept significand's last bit, (a >> sh) & 1, where the format has
 * fraction bits (lsbm 1, lsbx 0). Without them (P3109's binary8p1) both
 * neighbours' significands are 1, both odd, and IEEE 754-2019 4.3.1 then
 * delivers the larger magnitude: lsb is 1 (lsbm 0, lsbx 1), as on the
 * generic path.
 * The result is normal and finite iff a >= amin (|x| >= min normal, so never
 * tiny either way tininess is detected) and r <= rmax (the largest finite
 * magnitude, which also rejects inf/NaN inputs: emax <= 127). */
typedef struct {
    uint32_t sh, half1, amin, rmax, rebias, lowmask, lsbm, lsbx;
    uint32_t signpos, signbit; /* code's sign = (u >> signpos) & signbit */
    uint32_t zsign_code, zsign_f32; /* sign kept by a zero result: 0 for formats without -0 */
    /* Results below min normal (0 < a < amin): the code's magnitude is c =
     * |x| / 2^(emin-m) rounded (rne) = sig >> s with s = sbase - max(E, 1)
     * (E: x's biased exponent, sig its significand); c = 2^m is min normal.
     * Tiny (per ctx) iff a < atiny. As an f32, c * 2^(emin-m) is the bits of
     * (float)c plus eadj, or c << subsh below f32's normals (c < clim). */
    uint32_t sbase, atiny, mincode, eadj, clim, subsh;
    int e2m1; /* OCP e2m1 with -0 (step512_e2m1) */
} kparams;

enum { KIND_CODE8, KIND_CODE16, KIND_ROUND };

/* Where the elements the kernels cannot do go, with what they need. */
typedef struct {
    const fpemu_format *fmt, *f32;
    const fpemu_ctx *ctx;
    fpemu_cast_stats *stats;
    void *dst;
    int kind;
    int code32;     /* KIND_ROUND's kernels writing codes whose bits are the rounded f32's (tf32) */
    unsigned flags; /* OR of the elements' flags */
} fixup;

/* One element through the generic conversion, as the scalar array loop
 * does it (n and amax are counted by the kernel). */
__attribute__((noinline)) static void fix_one(fixup *fx, size_t i, uint32_t u) {
    fpemu_ctx one = *fx->ctx;
    one.flags = 0;
    uint64_t code = fpemu_convert(fx->fmt, fx->f32, u, &one);
    if (fx->kind == KIND_ROUND && !fx->code32) ((float *)fx->dst)[i] = fpemu_to_float(fx->fmt, code, &one);
    else fpemu_code_store(fx->fmt, fx->dst, i, code);
    fx->flags |= one.flags;
    if (fx->stats) emu__count_cast(fx->fmt, fx->stats, emu__bitsf(u), code, one.flags, 0);
}

static void amax_update(fpemu_cast_stats *st, uint32_t amax_bits) {
    float a = emu__bitsf(amax_bits);
    if (a > st->amax) st->amax = a;
}

/* The vector loops make no calls (so their constants stay in registers):
 * they go through the array in chunks of CH, note which elements of each
 * group of 8 need the generic path, keep those groups' inputs (dst may be
 * src), and fix_chunk does them once the chunk is written. */
enum { CH = 512 };
typedef struct {
    uint8_t bad[CH / 8];
    uint32_t keep[CH];
} chunkbuf;

__attribute__((noinline)) static void fix_chunk(fixup *fx, size_t i0, size_t m, const chunkbuf *cb) {
    for (size_t g = 0; g * 8 < m; g++)
        for (unsigned b = cb->bad[g]; b; b &= b - 1) {
            size_t j = g * 8 + (size_t)__builtin_ctz(b);
            fix_one(fx, i0 + j, cb->keep[j]);
        }
}

/* ---- portable C ---------------------------------------------------------- */

/* One element: the result bits (code or rounded f32), whether they are
 * right (*ok: a normal finite result, or a zero) and inexact (*nx). */
#define INL __attribute__((always_inline)) static inline

INL uint32_t pelem(uint32_t u, const kparams *p, int kind, uint32_t *ok, uint32_t *nx) {
    uint32_t a = u & 0x7FFFFFFFu;
    uint32_t r = (a + p->half1 + (((a >> p->sh) & p->lsbm) ^ p->lsbx)) >> p->sh;
    uint32_t good = (a >= p->amin) & (r <= p->rmax), z = a == 0;
    *ok = good | z;
    *nx = good & ((a & p->lowmask) != 0);
    uint32_t v = kind == KIND_ROUND ? (r << p->sh) | (u & 0x80000000u) : (r - p->rebias) | ((u >> p->signpos) & p->signbit);
    uint32_t zv = kind == KIND_ROUND ? u & p->zsign_f32 : (u >> p->signpos) & p->zsign_code;
    return z ? zv : v;
}

/* An element whose result is below min normal (0 < a < amin): the result
 * bits, inexact (*nx), underflow (*uf), and whether it is zero (*isz) or
 * subnormal (*issub) for the counters. */
INL uint32_t psub(uint32_t u, const kparams *p, int kind, int *nx, int *uf, int *isz, int *issub) {
    uint32_t a = u & 0x7FFFFFFFu, be = a >> 23, sig = a & 0x7FFFFFu;
    if (be) sig |= 0x800000u;
    else be = 1;
    uint32_t s = p->sbase - be, c, rem; /* s >= 2 */
    if (s >= 32) c = 0, rem = sig;
    else c = (sig + (1u << (s - 1)) - 1 + ((sig >> s) & 1)) >> s, rem = sig & ((1u << s) - 1);
    *nx = rem != 0;
    *uf = *nx & (a < p->atiny);
    *isz = c == 0;
    *issub = c != 0 && c < p->mincode;
    if (kind != KIND_ROUND) return c | ((u >> p->signpos) & (c ? p->signbit : p->zsign_code));
    if (!c) return u & p->zsign_f32;
    return (c < p->clim ? c << p->subsh : emu__fbits((float)c) + p->eadj) | (u & 0x80000000u);
}

/* What a kernel gathers besides the results. */
typedef struct {
    uint32_t nx, uf, amax;  /* inexact, underflow, max finite |x| bits */
    uint64_t unf, sub;      /* counters: results zero / subnormal */
} pacc;

INL void put(void *dst, size_t i, uint32_t v, int kind) {
    if (kind == KIND_ROUND) ((uint32_t *)dst)[i] = v;
    else if (kind == KIND_CODE16) ((uint16_t *)dst)[i] = (uint16_t)v;
    else ((uint8_t *)dst)[i] = (uint8_t)v;
}

/* Elements in[j0 .. j0+k) of a chunk (k <= 8, j0 a multiple of 8), dst
 * already offset to the chunk: straight through for normal results and
 * zeros, then the group again if it had others. */
INL void pgroup(const kparams *p, const uint32_t *in, void *dst, size_t j0, size_t k, int kind, int st,
                          chunkbuf *cb, pacc *acc) {
    uint32_t ub[8], vb[8], okall = 1, nx = 0, amax = acc->amax;
    memcpy(ub, in + j0, k * 4);
    for (size_t j = 0; j < k; j++) {
        uint32_t ok, x, a = ub[j] & 0x7FFFFFFFu;
        vb[j] = pelem(ub[j], p, kind, &ok, &x);
        okall &= ok;
        nx |= x;
        uint32_t af = a < 0x7F800000u ? a : 0; /* finite only */
        if (st) amax = af > amax ? af : amax;
    }
    for (size_t j = 0; j < k; j++) put(dst, j0 + j, vb[j], kind);
    acc->nx |= nx;
    acc->amax = amax;
    unsigned bad = 0;
    if (!okall) {
        for (size_t j = 0; j < k; j++) {
            uint32_t ok, x;
            pelem(ub[j], p, kind, &ok, &x);
            if (ok) continue;
            if ((ub[j] & 0x7FFFFFFFu) < p->amin) {
                int snx, suf, isz, issub;
                put(dst, j0 + j, psub(ub[j], p, kind, &snx, &suf, &isz, &issub), kind);
                acc->nx |= (uint32_t)snx;
                acc->uf |= (uint32_t)suf;
                acc->unf += (uint64_t)isz;
                acc->sub += (uint64_t)issub;
            } else bad |= 1u << j;
        }
        if (bad) memcpy(cb->keep + j0, ub, k * 4);
    }
    cb->bad[j0 / 8] = (uint8_t)bad;
}

INL size_t elsize(int kind) { return kind == KIND_ROUND ? 4 : kind == KIND_CODE16 ? 2 : 1; }

static void finish(fixup *fx, const pacc *acc, int st) {
    if (acc->nx) fx->flags |= FPEMU_FLAG_INEXACT;
    if (acc->uf) fx->flags |= FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT;
    if (st) {
        fx->stats->underflow += acc->unf;
        fx->stats->subnormal += acc->sub;
        amax_update(fx->stats, acc->amax);
    }
}

INL void portable_body(fixup *fx, const kparams *p, const uint32_t *in, size_t n, int kind, int st) {
    const kparams k = *p;
    pacc acc = {0, 0, 0, 0, 0};
    chunkbuf cb;
    for (size_t i0 = 0; i0 < n; i0 += CH) {
        size_t m = n - i0 < CH ? n - i0 : CH;
        void *dst = (char *)fx->dst + i0 * elsize(kind);
        unsigned any = 0;
        size_t j0 = 0;
        for (; j0 + 8 <= m; j0 += 8) {
            pgroup(&k, in + i0, dst, j0, 8, kind, st, &cb, &acc);
            any |= cb.bad[j0 / 8];
        }
        if (j0 < m) {
            pgroup(&k, in + i0, dst, j0, m - j0, kind, st, &cb, &acc);
            any |= cb.bad[j0 / 8];
        }
        if (any) fix_chunk(fx, i0, m, &cb);
    }
    finish(fx, &acc, st);
}

#if CAST_X86
/* ---- AVX-512 (F, BW, VL): 16 elements per step --------------------------- */

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,bmi,bmi2"), always_inline)) static inline

/* One step: src[j .. j+16) (lanes live; full: all 16) -> dst, with the
 * zeros and results below min normal done here and the rest noted in cb. */
T512 void step512(const kparams *p, const uint32_t *src, char *dst, size_t j, __mmask16 live, int full, int kind, int st,
                  chunkbuf *cb_, unsigned *any, __mmask16 *nx, __mmask16 *uf, __m512i *amax, uint64_t *unf, uint64_t *sub) {
    const __m512i half1 = _mm512_set1_epi32((int)p->half1), one = _mm512_set1_epi32(1), lsbx = _mm512_set1_epi32((int)p->lsbx),
                  lsbm = _mm512_set1_epi32((int)p->lsbm);
    const __m512i amin = _mm512_set1_epi32((int)p->amin), rmax = _mm512_set1_epi32((int)p->rmax);
    const __m512i rebias = _mm512_set1_epi32((int)p->rebias), lowmask = _mm512_set1_epi32((int)p->lowmask);
    const __m512i signbit = _mm512_set1_epi32((int)p->signbit), fsign = _mm512_set1_epi32((int)0x80000000u);
    const __m512i zsc = _mm512_set1_epi32((int)p->zsign_code), zsf = _mm512_set1_epi32((int)p->zsign_f32);
    const __m512i inf = _mm512_set1_epi32(0x7F800000), zero = _mm512_setzero_si512();
    const __m128i sh = _mm_cvtsi32_si128((int)p->sh), signpos = _mm_cvtsi32_si128((int)p->signpos);
    chunkbuf *cb = cb_;
    __m512i u = full ? _mm512_loadu_si512(src + j) : _mm512_maskz_loadu_epi32(live, src + j);
    __m512i a = _mm512_andnot_si512(fsign, u);
    __m512i lsb = _mm512_ternarylogic_epi32(_mm512_srl_epi32(a, sh), lsbm, lsbx, 0x6A); /* 0x6A = (A & B) ^ C */
    __m512i r = _mm512_srl_epi32(_mm512_add_epi32(_mm512_add_epi32(a, half1), lsb), sh);
    __mmask16 ok = _mm512_mask_cmple_epu32_mask(_mm512_mask_cmpge_epu32_mask(live, a, amin), r, rmax);
    *nx |= _mm512_mask_test_epi32_mask(ok, a, lowmask);
    if (st) *amax = _mm512_mask_max_epu32(*amax, _mm512_cmplt_epu32_mask(a, inf), *amax, a);
    __m512i v; /* 0xF8 = A | (B & C) */
    if (kind == KIND_ROUND) v = _mm512_ternarylogic_epi32(_mm512_sll_epi32(r, sh), u, fsign, 0xF8);
    else v = _mm512_ternarylogic_epi32(_mm512_sub_epi32(r, rebias), _mm512_srl_epi32(u, signpos), signbit, 0xF8);
    __mmask16 bad = live & (__mmask16)~ok;
    if (bad) { /* zeros here; the rest to fix_chunk */
        __mmask16 z = _mm512_mask_cmpeq_epi32_mask(bad, a, zero);
        __m512i zv = kind == KIND_ROUND ? _mm512_and_si512(u, zsf) : _mm512_and_si512(_mm512_srl_epi32(u, signpos), zsc);
        v = _mm512_mask_mov_epi32(v, z, zv);
        bad &= (__mmask16)~z;
        __mmask16 sm = _mm512_mask_cmplt_epu32_mask(bad, a, amin);
        if (sm) { /* results below min normal (see kparams) */
            const __m512i imp = _mm512_set1_epi32(0x800000);
            __m512i be = _mm512_max_epu32(_mm512_srli_epi32(a, 23), one);
            __m512i frac = _mm512_and_si512(a, _mm512_set1_epi32(0x7FFFFF));
            __m512i sig = _mm512_mask_or_epi32(frac, _mm512_cmpge_epu32_mask(a, imp), frac, imp);
            __m512i sv = _mm512_sub_epi32(_mm512_set1_epi32((int)p->sbase), be);
            __m512i hv = _mm512_sllv_epi32(one, _mm512_sub_epi32(sv, one));
            __m512i lb = _mm512_and_si512(_mm512_srlv_epi32(sig, sv), one);
            __m512i c = _mm512_srlv_epi32(_mm512_add_epi32(_mm512_add_epi32(sig, hv), _mm512_sub_epi32(lb, one)), sv);
            __mmask16 inx = _mm512_mask_test_epi32_mask(sm, sig, _mm512_sub_epi32(_mm512_sllv_epi32(one, sv), one));
            __mmask16 cz = _mm512_mask_cmpeq_epi32_mask(sm, c, zero), cnz = sm & (__mmask16)~cz;
            *nx |= inx;
            *uf |= _mm512_mask_cmplt_epu32_mask(inx, a, _mm512_set1_epi32((int)p->atiny));
            if (st) {
                *unf += (uint64_t)__builtin_popcount(cz);
                *sub += (uint64_t)__builtin_popcount(_mm512_mask_cmplt_epu32_mask(cnz, c, _mm512_set1_epi32((int)p->mincode)));
            }
            __m512i sv2;
            if (kind == KIND_ROUND) {
                __m512i fb = _mm512_add_epi32(_mm512_castps_si512(_mm512_cvtepi32_ps(c)), _mm512_set1_epi32((int)p->eadj));
                __mmask16 lo = _mm512_mask_cmplt_epu32_mask(cnz, c, _mm512_set1_epi32((int)p->clim));
                fb = _mm512_mask_sllv_epi32(fb, lo, c, _mm512_set1_epi32((int)p->subsh));
                sv2 = _mm512_mask_mov_epi32(_mm512_and_si512(u, zsf), cnz, _mm512_ternarylogic_epi32(fb, u, fsign, 0xF8));
            } else {
                __m512i sg = _mm512_srl_epi32(u, signpos);
                sv2 = _mm512_or_si512(c, _mm512_mask_and_epi32(_mm512_and_si512(sg, zsc), cnz, sg, signbit));
            }
            v = _mm512_mask_mov_epi32(v, sm, sv2);
            bad &= (__mmask16)~sm;
        }
        if (bad) _mm512_storeu_si512(cb->keep + j, u);
    }
    memcpy(cb->bad + j / 8, &bad, 2);
    *any |= bad;
    if (full) {
        if (kind == KIND_ROUND) _mm512_storeu_si512(dst + j * 4, v);
        else if (kind == KIND_CODE16) _mm256_storeu_si256((__m256i *)(dst + j * 2), _mm512_cvtepi32_epi16(v));
        else _mm_storeu_si128((__m128i *)(dst + j), _mm512_cvtepi32_epi8(v));
    } else {
        if (kind == KIND_ROUND) _mm512_mask_storeu_epi32(dst + j * 4, live, v);
        else if (kind == KIND_CODE16) _mm512_mask_cvtepi32_storeu_epi16(dst + j * 2, live, v);
        else _mm512_mask_cvtepi32_storeu_epi8(dst + j, live, v);
    }
}

/* step512 for OCP e2m1 codes (kparams.e2m1), which MX and NVFP4 cast to
 * and whose results lie mostly below its min normal 1 (a block's largest
 * is scaled to 6): there the result is 0, 0.5 or 1, |x| > 1/4 and |x| >=
 * 3/4 (the ties to the even code, 0 and 1), two compares instead of
 * step512's shifts by the exponent. The same codes, flags, counts and
 * lanes for the generic path (above 6, inf, NaN). */
T512 void step512_e2m1(const kparams *p, const uint32_t *src, char *dst, size_t j, __mmask16 live, int full, int st,
                       chunkbuf *cb, unsigned *any, __mmask16 *nx, __mmask16 *uf, __m512i *amax, uint64_t *unf, uint64_t *sub) {
    /* the normal results as step512 takes them, from the format's kparams;
     * below 1 the three f32 patterns 1/4, 1/2 and 3/4 */
    const __m512i one = _mm512_set1_epi32(1), inf = _mm512_set1_epi32(0x7F800000);
    const __m128i sh = _mm_cvtsi32_si128((int)p->sh), signpos = _mm_cvtsi32_si128((int)p->signpos);
    const __m512i u = full ? _mm512_loadu_si512(src + j) : _mm512_maskz_loadu_epi32(live, src + j);
    const __m512i a = _mm512_andnot_si512(_mm512_set1_epi32((int)0x80000000u), u);
    const __m512i r = _mm512_srl_epi32(_mm512_add_epi32(_mm512_add_epi32(a, _mm512_set1_epi32((int)p->half1)),
                                                        _mm512_and_si512(_mm512_srl_epi32(a, sh), one)), sh);
    const __mmask16 nm = _mm512_mask_cmpge_epu32_mask(live, a, _mm512_set1_epi32((int)p->amin));  /* |x| >= 1 */
    const __mmask16 bad = _mm512_mask_cmpgt_epu32_mask(nm, r, _mm512_set1_epi32((int)p->rmax));   /* above 6, inf, NaN */
    const __mmask16 sm = live & (__mmask16)~nm, gq = _mm512_mask_cmpgt_epu32_mask(sm, a, _mm512_set1_epi32(0x3E800000));
    const __mmask16 gh = _mm512_mask_cmpge_epu32_mask(sm, a, _mm512_set1_epi32(0x3F400000)), nz = _mm512_mask_test_epi32_mask(sm, a, a);
    __m512i v = _mm512_mask_add_epi32(_mm512_maskz_mov_epi32(gq, one), gh, _mm512_maskz_mov_epi32(gq, one), one);
    v = _mm512_mask_sub_epi32(v, nm, r, _mm512_set1_epi32((int)p->rebias));
    v = _mm512_ternarylogic_epi32(v, _mm512_srl_epi32(u, signpos), _mm512_set1_epi32((int)p->signbit), 0xF8); /* the sign, a zero's too */
    const __mmask16 sx = nz & _mm512_mask_cmpneq_epi32_mask(sm, a, _mm512_set1_epi32(0x3F000000)); /* not 0 or 1/2 */
    *nx |= _mm512_mask_test_epi32_mask(nm & (__mmask16)~bad, a, _mm512_set1_epi32((int)p->lowmask)) | sx;
    *uf |= _mm512_mask_cmplt_epu32_mask(sx, a, _mm512_set1_epi32((int)p->atiny));
    if (st) {
        *amax = _mm512_mask_max_epu32(*amax, _mm512_cmplt_epu32_mask(a, inf), *amax, a);
        *unf += (uint64_t)__builtin_popcount(nz & (__mmask16)~gq);
        *sub += (uint64_t)__builtin_popcount(gq & (__mmask16)~gh);
    }
    if (bad) _mm512_storeu_si512(cb->keep + j, u);
    memcpy(cb->bad + j / 8, &bad, 2);
    *any |= bad;
    if (full) _mm_storeu_si128((__m128i *)(dst + j), _mm512_cvtepi32_epi8(v));
    else _mm512_mask_cvtepi32_storeu_epi8(dst + j, live, v);
}

T512 void body512(fixup *fx, const kparams *pp, const uint32_t *in, size_t n, int kind, int st) {
    const kparams p = *pp; /* the broadcasts of step512 are hoisted out of the loops */
    __mmask16 nx = 0, uf = 0;
    __m512i amax = _mm512_setzero_si512();
    uint64_t unf = 0, sub = 0;
    chunkbuf cb;
    for (size_t i0 = 0; i0 < n; i0 += CH) {
        size_t m = n - i0 < CH ? n - i0 : CH, j = 0;
        char *dst = (char *)fx->dst + i0 * elsize(kind);
        const uint32_t *src = in + i0;
        unsigned any = 0;
        if (kind == KIND_CODE8 && p.e2m1) {
            for (; j + 16 <= m; j += 16) step512_e2m1(&p, src, dst, j, (__mmask16)0xFFFF, 1, st, &cb, &any, &nx, &uf, &amax, &unf, &sub);
            if (j < m)
                step512_e2m1(&p, src, dst, j, (__mmask16)((1u << (m - j)) - 1), 0, st, &cb, &any, &nx, &uf, &amax, &unf, &sub);
        } else {
            for (; j + 16 <= m; j += 16)
                step512(&p, src, dst, j, (__mmask16)0xFFFF, 1, kind, st, &cb, &any, &nx, &uf, &amax, &unf, &sub);
            if (j < m)
                step512(&p, src, dst, j, (__mmask16)((1u << (m - j)) - 1), 0, kind, st, &cb, &any, &nx, &uf, &amax, &unf, &sub);
        }
        if (any) fix_chunk(fx, i0, m, &cb);
    }
    pacc acc = {nx != 0, uf != 0, st ? _mm512_reduce_max_epu32(amax) : 0, unf, sub};
    /* finish's scalar code is SSE: with the upper halves of the vector
     * registers dirty each SSE instruction waits on them (the counts made
     * a call of 1024 e4m3 elements cost 500 ns instead of 270) */
    _mm256_zeroupper();
    finish(fx, &acc, st);
}

/* ---- AVX2: 8 elements per step ------------------------------------------ */

#define T256 __attribute__((target("avx2"), always_inline)) static inline

T256 void body256(fixup *fx, const kparams *p, const uint32_t *in, size_t n, int kind, int st) {
    /* every quantity is below 2^31, so the signed compares of AVX2 do */
    const kparams kp = *p;
    const __m256i half1 = _mm256_set1_epi32((int)p->half1), one = _mm256_set1_epi32(1), lsbx = _mm256_set1_epi32((int)p->lsbx),
                  lsbm = _mm256_set1_epi32((int)p->lsbm);
    const __m256i amin1 = _mm256_set1_epi32((int)p->amin - 1), rmax = _mm256_set1_epi32((int)p->rmax);
    const __m256i rebias = _mm256_set1_epi32((int)p->rebias), lowmask = _mm256_set1_epi32((int)p->lowmask);
    const __m256i signbit = _mm256_set1_epi32((int)p->signbit), fsign = _mm256_set1_epi32((int)0x80000000u);
    const __m256i zsc = _mm256_set1_epi32((int)p->zsign_code), zsf = _mm256_set1_epi32((int)p->zsign_f32);
    const __m256i inf = _mm256_set1_epi32(0x7F800000), zero = _mm256_setzero_si256();
    const __m128i sh = _mm_cvtsi32_si128((int)p->sh), signpos = _mm_cvtsi32_si128((int)p->signpos);
    __m256i nxv = zero, ufv = zero, amaxv = zero;
    pacc acc = {0, 0, 0, 0, 0}; /* the tail's, then everything */
    chunkbuf cb;
    for (size_t i0 = 0; i0 < n; i0 += CH) {
        size_t m = n - i0 < CH ? n - i0 : CH;
        char *dst = (char *)fx->dst + i0 * elsize(kind);
        const uint32_t *src = in + i0;
        unsigned any = 0;
        size_t j = 0;
        for (; j + 8 <= m; j += 8) {
            __m256i u = _mm256_loadu_si256((const __m256i *)(src + j));
            __m256i a = _mm256_andnot_si256(fsign, u);
            __m256i lsb = _mm256_xor_si256(_mm256_and_si256(_mm256_srl_epi32(a, sh), lsbm), lsbx);
            __m256i r = _mm256_srl_epi32(_mm256_add_epi32(_mm256_add_epi32(a, half1), lsb), sh);
            __m256i okv = _mm256_andnot_si256(_mm256_cmpgt_epi32(r, rmax), _mm256_cmpgt_epi32(a, amin1));
            nxv = _mm256_or_si256(nxv, _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(a, lowmask), zero), okv));
            if (st) amaxv = _mm256_max_epu32(amaxv, _mm256_and_si256(a, _mm256_cmpgt_epi32(inf, a)));
            __m256i v;
            if (kind == KIND_ROUND) v = _mm256_or_si256(_mm256_sll_epi32(r, sh), _mm256_and_si256(u, fsign));
            else v = _mm256_or_si256(_mm256_sub_epi32(r, rebias), _mm256_and_si256(_mm256_srl_epi32(u, signpos), signbit));
            unsigned bad = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(okv)) ^ 0xFFu;
            if (bad) {
                __m256i z = _mm256_cmpeq_epi32(a, zero);
                __m256i zv = kind == KIND_ROUND ? _mm256_and_si256(u, zsf) : _mm256_and_si256(_mm256_srl_epi32(u, signpos), zsc);
                v = _mm256_blendv_epi8(v, zv, z);
                bad &= ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(z));
                __m256i smv = _mm256_andnot_si256(_mm256_or_si256(z, _mm256_cmpgt_epi32(a, amin1)), _mm256_set1_epi32(-1));
                unsigned sm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(smv));
                if (sm) { /* results below min normal (see kparams) */
                    const __m256i imp = _mm256_set1_epi32(0x800000);
                    __m256i be = _mm256_max_epu32(_mm256_srli_epi32(a, 23), one);
                    __m256i sig = _mm256_or_si256(_mm256_and_si256(a, _mm256_set1_epi32(0x7FFFFF)),
                                                  _mm256_and_si256(_mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7FFFFF)), imp));
                    __m256i sv = _mm256_sub_epi32(_mm256_set1_epi32((int)p->sbase), be);
                    __m256i hv = _mm256_sllv_epi32(one, _mm256_sub_epi32(sv, one));
                    __m256i lb = _mm256_and_si256(_mm256_srlv_epi32(sig, sv), one);
                    __m256i c = _mm256_srlv_epi32(_mm256_add_epi32(_mm256_add_epi32(sig, hv), _mm256_sub_epi32(lb, one)), sv);
                    __m256i rem = _mm256_and_si256(sig, _mm256_sub_epi32(_mm256_sllv_epi32(one, sv), one));
                    __m256i inx = _mm256_andnot_si256(_mm256_cmpeq_epi32(rem, zero), smv);
                    __m256i cz = _mm256_cmpeq_epi32(c, zero);
                    __m256i cnz = _mm256_andnot_si256(cz, smv);
                    nxv = _mm256_or_si256(nxv, inx);
                    ufv = _mm256_or_si256(ufv, _mm256_and_si256(inx, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)p->atiny), a)));
                    if (st) {
                        acc.unf += (uint64_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_and_si256(cz, smv))));
                        __m256i issub = _mm256_and_si256(cnz, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)p->mincode), c));
                        acc.sub += (uint64_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(issub)));
                    }
                    __m256i sv2;
                    if (kind == KIND_ROUND) {
                        __m256i fb = _mm256_add_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(c)), _mm256_set1_epi32((int)p->eadj));
                        __m256i lo = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)p->clim), c);
                        fb = _mm256_blendv_epi8(fb, _mm256_sllv_epi32(c, _mm256_set1_epi32((int)p->subsh)), lo);
                        sv2 = _mm256_blendv_epi8(_mm256_and_si256(u, zsf), _mm256_or_si256(fb, _mm256_and_si256(u, fsign)), cnz);
                    } else {
                        __m256i sg = _mm256_srl_epi32(u, signpos);
                        sv2 = _mm256_or_si256(c, _mm256_and_si256(sg, _mm256_blendv_epi8(zsc, signbit, cnz)));
                    }
                    v = _mm256_blendv_epi8(v, sv2, smv);
                    bad &= ~sm;
                }
                if (bad) _mm256_storeu_si256((__m256i *)(cb.keep + j), u);
            }
            cb.bad[j / 8] = (uint8_t)bad;
            any |= bad;
            if (kind == KIND_ROUND) _mm256_storeu_si256((__m256i *)(dst + j * 4), v);
            else {
                __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
                if (kind == KIND_CODE16) _mm_storeu_si128((__m128i *)(dst + j * 2), w);
                else _mm_storel_epi64((__m128i *)(dst + j), _mm_packus_epi16(w, w));
            }
        }
        if (j < m) { /* the last few of the array */
            pgroup(&kp, src, dst, j, m - j, kind, st, &cb, &acc);
            any |= cb.bad[j / 8];
        }
        if (any) fix_chunk(fx, i0, m, &cb);
    }
    acc.nx |= !_mm256_testz_si256(nxv, nxv);
    acc.uf |= !_mm256_testz_si256(ufv, ufv);
    if (st) {
        uint32_t t[8];
        _mm256_storeu_si256((__m256i *)t, amaxv);
        for (int k = 0; k < 8; k++) acc.amax = t[k] > acc.amax ? t[k] : acc.amax;
    }
    _mm256_zeroupper(); /* (as body512) */
    finish(fx, &acc, st);
}
#endif

/* ---- instantiation and dispatch ------------------------------------------ */

typedef void (*kernel_fn)(fixup *, const kparams *, const uint32_t *, size_t);

#define INSTANCE(ATTR, BODY, NAME, KIND, ST)                                                       \
    ATTR static void NAME(fixup *fx, const kparams *p, const uint32_t *in, size_t n) {             \
        BODY(fx, p, in, n, KIND, ST);                                                              \
    }
#define INSTANCES(ATTR, BODY, PFX)                                                                 \
    INSTANCE(ATTR, BODY, PFX##_c8, KIND_CODE8, 0)                                                  \
    INSTANCE(ATTR, BODY, PFX##_c8s, KIND_CODE8, 1)                                                 \
    INSTANCE(ATTR, BODY, PFX##_c16, KIND_CODE16, 0)                                                \
    INSTANCE(ATTR, BODY, PFX##_c16s, KIND_CODE16, 1)                                               \
    INSTANCE(ATTR, BODY, PFX##_r, KIND_ROUND, 0)                                                   \
    INSTANCE(ATTR, BODY, PFX##_rs, KIND_ROUND, 1)                                                  \
    static const kernel_fn PFX##_table[3][2] = {{PFX##_c8, PFX##_c8s}, {PFX##_c16, PFX##_c16s}, {PFX##_r, PFX##_rs}};

INSTANCES(, portable_body, kp)
#if CAST_X86
INSTANCES(__attribute__((target("avx512f,avx512bw,avx512vl,avx2,bmi,bmi2"))), body512, k512)
INSTANCES(__attribute__((target("avx2"))), body256, k256)
#endif

/* Instruction-set level of the kernels: 0 portable C, 1 AVX2, 2 AVX-512.
 * The best the CPU (and OS) supports, unless a test forced a lower one. */
static int cast_level = -1;

static int cast_best(void) {
#if CAST_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))
        return 2;
    if (__builtin_cpu_supports("avx2")) return 1;
#endif
    return 0;
}

/* Internal hook for tests and benchmarks: level < 0 asks, otherwise sets
 * the level (capped at what the CPU has). Returns the level in use. Results
 * do not depend on it. */
int emu__cast_isa(int level);
int emu__cast_isa(int level) {
    int best = cast_best();
    if (level >= 0) __atomic_store_n(&cast_level, level < best ? level : best, __ATOMIC_RELAXED);
    int l = __atomic_load_n(&cast_level, __ATOMIC_RELAXED);
    if (l < 0) __atomic_store_n(&cast_level, l = best, __ATOMIC_RELAXED);
    return l;
}

static kernel_fn pick(int kind, int st) {
    int l = __atomic_load_n(&cast_level, __ATOMIC_RELAXED);
    if (l < 0) l = emu__cast_isa(-1);
#if CAST_X86
    if (l == 2) return k512_table[kind][st];
    if (l == 1) return k256_table[kind][st];
#endif
    return kp_table[kind][st];
}

/* Formats and contexts the kernels cover: rne without flush modes, IEEE-
 * like signed layouts inside f32's range with subnormals (an unsigned
 * format's top bit is an exponent bit, and its negative inputs are NaN with
 * invalid: the generic path). The rounded values (KIND_ROUND) take their
 * sign from the f32 and never build a code, so a format with container
 * padding (tf32's 13 low bits) is covered for them; the codes are not. */
static int covered_values(const fpemu_format *fmt, const fpemu_ctx *ctx) {
    return ctx->round == FPEMU_RNE && !ctx->daz && !ctx->ftz && fmt->is_signed && fmt->p <= 23 &&
           fmt->ebits <= 8 && fmt->has_subnormals && fmt->emin >= -126 && fmt->emax <= 127;
}
static int covered(const fpemu_format *fmt, const fpemu_ctx *ctx) { return covered_values(fmt, ctx) && !fmt->pad; }

static kparams params(const fpemu_format *fmt, const fpemu_ctx *ctx) {
    kparams k;
    int m = fmt->mbits, ss = fmt->bits - 1;
    k.sh = (uint32_t)(23 - m);
    k.half1 = (1u << (k.sh - 1)) - 1;
    k.lowmask = (1u << k.sh) - 1;
    k.amin = (uint32_t)(fmt->emin + 127) << 23;
    k.rmax = ((uint32_t)(fmt->emax + 127) << m) | (uint32_t)fmt->maxmant;
    k.rebias = (uint32_t)(127 - fmt->bias) << m;
    k.lsbm = m > 0, k.lsbx = m == 0;
    k.signpos = (uint32_t)(31 - ss);
    k.signbit = 1u << ss;
    k.zsign_code = fmt->has_negzero ? k.signbit : 0;
    k.zsign_f32 = fmt->has_negzero ? 0x80000000u : 0;
    int q = fmt->emin - m; /* exponent of the smallest subnormal */
    k.sbase = (uint32_t)(fmt->emin + 127 + 23 - m);
    k.mincode = 1u << m;
    k.eadj = (uint32_t)q << 23;
    k.clim = q < -126 ? 1u << (-126 - q) : 1;
    k.subsh = (uint32_t)(q + 149);
    k.e2m1 = emu__is_ocp_e2m1(fmt) && fmt->has_negzero && fmt->bits == 4;
    /* tiny after rounding: below the midpoint of min normal and the p-bit
     * number under it (the tie rounds to min normal, which is even) */
    double t = ldexp(1, fmt->emin) - ldexp(1, fmt->emin - 2 - m);
    float tf = (float)t;
    if ((double)tf < t) tf = nextafterf(tf, INFINITY);
    k.atiny = ctx->tininess_before ? k.amin : emu__fbits(tf);
    return k;
}

static void run(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx, fpemu_cast_stats *stats,
                int kind, int code32) {
    const kparams kp = params(fmt, ctx);
    fixup fx = {fmt, emu__f32(), ctx, stats, dst, kind, code32, 0};
    if (stats) stats->n += n;
    pick(kind, stats != NULL)(&fx, &kp, (const uint32_t *)(const void *)src, n);
#if CAST_X86
    /* After an AVX2/AVX-512 kernel, clear the upper register state here too:
     * without it the caller's later SSE code (the scalar MMA model's fmaf
     * loop, for one) ran 20x slower on Sapphire Rapids (fpemu gemm --model
     * fma-seq, 256^3: 0.22 s with, 5.1 s without), although the kernels
     * end in vzeroupper. Legal: level > 0 means the CPU has AVX. */
    if (__atomic_load_n(&cast_level, __ATOMIC_RELAXED) > 0) __asm__ volatile("vzeroupper");
#endif
    ctx->flags |= fx.flags;
}

/* A format whose code is the f32 bit pattern of its value, its padding the
 * low bits (tf32: 1 + 8 + 10 bits over 13 zero bits): f32's exponent field
 * and bias, IEEE infinities and NaNs, -0, a 32-bit container. */
static int code_is_f32_bits(const fpemu_format *fmt) {
    return fmt->container == 32 && fmt->bits + fmt->pad == 32 && fmt->ebits == 8 && fmt->bias == 127 && fmt->is_signed &&
           fmt->has_negzero && fmt->inf == FPEMU_INF_IEEE && fmt->nan == FPEMU_NANS_IEEE;
}

int emu__encode_fast(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats) {
    if (covered_values(fmt, ctx) && code_is_f32_bits(fmt)) { /* the rounded f32's bits are the codes */
        run(fmt, dst, src, n, ctx, stats, KIND_ROUND, 1);
        return 1;
    }
    if (!covered(fmt, ctx) || (fmt->container != 8 && fmt->container != 16)) return 0;
    run(fmt, dst, src, n, ctx, stats, fmt->container == 8 ? KIND_CODE8 : KIND_CODE16, 0);
    return 1;
}

int emu__round_fast(const fpemu_format *fmt, float *dst, const float *src, size_t n, fpemu_ctx *ctx,
                    fpemu_cast_stats *stats) {
    if (!covered_values(fmt, ctx)) return 0;
    run(fmt, dst, src, n, ctx, stats, KIND_ROUND, 0);
    return 1;
}

/* ---- sr: the cut of array.c, 8 elements at a time ---------------------
 * Each lane: the f32's magnitude against the cut's range, element i's draw
 * fpemu_random64(seed, base + i) (emu__mix, in 64-bit lanes: AVX-512DQ's
 * vpmullq), the up decision of emu__sr_up_low, and the code. Lanes outside
 * the range are left unmarked for array.c's element loop. */
#if CAST_X86
#define SR512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
SR512 static size_t sr_cut512(const emu_sr_cut *k, uint64_t seed, uint64_t base, int sr_bits, const float *src, size_t n,
                              void *dst, int bytes, uint8_t *mask, unsigned *flags, fpemu_cast_stats *stats) {
    const __m512i absm = _mm512_set1_epi64(0x7FFFFFFF), lo = _mm512_set1_epi64(k->lo),
                  span = _mm512_set1_epi64((long long)(k->hi - k->lo)), lowm = _mm512_set1_epi64(k->lowmask),
                  rebias = _mm512_set1_epi64(k->rebias), signbit = _mm512_set1_epi64((long long)k->signbit),
                  one = _mm512_set1_epi64(1), iota = _mm512_set_epi64(8, 7, 6, 5, 4, 3, 2, 1);
    const __m512i sg = _mm512_set1_epi64((long long)(seed * EMU_MIX_SEED)),
                  sk = _mm512_set1_epi64((long long)(seed ^ EMU_MIX_KEY)), d = _mm512_set1_epi64((long long)EMU_MIX_CTR),
                  m1 = _mm512_set1_epi64((long long)EMU_MIX_M1), m2 = _mm512_set1_epi64((long long)EMU_MIX_M2);
    /* emu__sr_up_low with L = sh: the draw's top L bits against low, or with
     * R < L its top R bits against low / 2^(L - R) rounded up */
    const int L = k->sh, full = (unsigned)sr_bits - 1u >= (unsigned)L - 1u;
    const __m128i rshift = _mm_cvtsi32_si128(full ? 64 - L : 64 - sr_bits), cshift = _mm_cvtsi32_si128(full ? 0 : L - sr_bits);
    const __m512i cadd = _mm512_set1_epi64(full ? 0 : (long long)((UINT64_C(1) << (L - sr_bits)) - 1));
    const __m128i sh = _mm_cvtsi32_si128(k->sh);
    __mmask8 inexact = 0;
    __m512i amax = _mm512_setzero_si512();
    uint64_t count = 0;
    size_t n8 = n - n % 8;
    for (size_t i = 0; i < n8; i += 8) {
        __m512i u = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(src + i)));
        __m512i mag = _mm512_and_si512(u, absm);
        __mmask8 neg = _mm512_test_epi64_mask(u, _mm512_set1_epi64(0x80000000));
        __mmask8 ok = _mm512_cmplt_epu64_mask(_mm512_sub_epi64(mag, lo), span);
        if (!k->signbit) ok &= (__mmask8)~neg;
        /* the draws: emu__mix(seed, base + i + lane) */
        __m512i c = _mm512_add_epi64(_mm512_set1_epi64((long long)(base + i)), iota); /* counter + 1 */
        __m512i z = _mm512_add_epi64(sg, _mm512_mullo_epi64(c, d));
        z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
        z = _mm512_mullo_epi64(z, m1);
        z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
        z = _mm512_mullo_epi64(z, m2);
        z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
        z = _mm512_add_epi64(z, sk);
        z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 29));
        z = _mm512_mullo_epi64(z, m1);
        z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 32));
        __m512i low = _mm512_and_si512(mag, lowm);
        __m512i thr = _mm512_srl_epi64(_mm512_add_epi64(low, cadd), cshift);
        __mmask8 up = _mm512_cmplt_epu64_mask(_mm512_srl_epi64(z, rshift), thr);
        __m512i code = _mm512_sub_epi64(_mm512_srl_epi64(mag, sh), rebias);
        code = _mm512_mask_add_epi64(code, up, code, one);
        code = _mm512_mask_or_epi64(code, neg, code, signbit);
        if (bytes == 1) _mm_storel_epi64((__m128i *)(void *)((uint8_t *)dst + i), _mm512_cvtepi64_epi8(code));
        else _mm_storeu_si128((__m128i *)(void *)((uint8_t *)dst + 2 * i), _mm512_cvtepi64_epi16(code));
        mask[i / 8] = ok;
        inexact |= _mm512_mask_test_epi64_mask(ok, low, low);
        amax = _mm512_mask_max_epu64(amax, ok, amax, mag);
        count += (uint64_t)__builtin_popcount(ok);
    }
    if (inexact) *flags |= FPEMU_FLAG_INEXACT;
    if (stats) {
        uint32_t a = (uint32_t)_mm512_reduce_max_epu64(amax);
        float af;
        memcpy(&af, &a, 4);
        stats->n += count;
        if (af > stats->amax) stats->amax = af;
    }
    _mm256_zeroupper(); /* SSE code after AVX code runs slowly otherwise (see run()) */
    return n8;
}

static int sr_cut_ok = -1; /* the CPU has AVX-512DQ besides the kernels' level 2 */
#endif

size_t emu__sr_cut_fast(const emu_sr_cut *k, uint64_t seed, uint64_t base, int sr_bits, const float *src, size_t n,
                        void *dst, int bytes, uint8_t *mask, unsigned *flags, fpemu_cast_stats *stats) {
#if CAST_X86
    int l = __atomic_load_n(&cast_level, __ATOMIC_RELAXED);
    if (l < 0) l = emu__cast_isa(-1);
    int dq = __atomic_load_n(&sr_cut_ok, __ATOMIC_RELAXED);
    if (dq < 0) {
        __builtin_cpu_init();
        dq = __builtin_cpu_supports("avx512dq") != 0;
        __atomic_store_n(&sr_cut_ok, dq, __ATOMIC_RELAXED);
    }
    if (l == 2 && dq && k->ok && (bytes == 1 || bytes == 2))
        return sr_cut512(k, seed, base, sr_bits, src, n, dst, bytes, mask, flags, stats);
#endif
    (void)k, (void)seed, (void)base, (void)sr_bits, (void)src, (void)n, (void)dst, (void)bytes, (void)mask, (void)flags,
        (void)stats;
    return 0;
}
