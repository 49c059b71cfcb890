/* gemm_kernel.c: the vectorised block-FMA kernel behind gemm_f32.
 *
 * Exactness argument (why every instruction set gives the scalar model's
 * bits): operands are exact doubles (<= 24-bit significands), so each
 * product a*b is exact in double; the alignment exponent is carried as a
 * power of two 2^E (products 2^Ea * 2^Eb exact); scaling by
 * 2^(nfrac - emax) is exact; truncation toward zero is a conversion to
 * int32 (terms stay below 2^(nfrac+2) <= 2^30) or a roundpd; the block sum of integers
 * below 2^53 is exact in double; the block result RZ to q bits is a mask
 * of the double's low mantissa bits, exact while the value is in the
 * output's normal range. Lanes that leave that range are flagged and the
 * caller recomputes them with the scalar model. No rounding happens
 * anywhere else, so SSE2, AVX2 and AVX-512 builds agree bit for bit.
 *
 * The file includes itself once per instruction set (GEMM_KERNEL_PASS). */
#ifndef GEMM_KERNEL_PASS
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include "gemm.h"

#define GEMM_KERNEL_PASS 1
#define KNAME gemm__kernel_generic
#define KTARGET
#include "gemm_kernel.c"
#undef GEMM_KERNEL_PASS
#undef KNAME
#undef KTARGET

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_KERNEL_PASS 2
#define KNAME gemm__kernel_avx2
#define KTARGET __attribute__((target("avx2")))
#include "gemm_kernel.c"
#undef GEMM_KERNEL_PASS
#undef KNAME
#undef KTARGET

#define GEMM_KERNEL_PASS 3
#define KNAME gemm__kernel_avx512
#define KTARGET __attribute__((target("avx512f,avx512dq,avx512vl")))
#include "gemm_kernel.c"
#undef GEMM_KERNEL_PASS
#undef KNAME
#undef KTARGET
#endif

void gemm__kernel_f32(int isa, const gkf_args *g) {
    switch (isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    case 3: gemm__kernel_avx512_f32(g); break;
    case 2: gemm__kernel_avx2_f32(g); break;
#endif
    default: gemm__kernel_generic_f32(g); break;
    }
}

int gemm__kernel_best(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return 3;
    if (__builtin_cpu_supports("avx2")) return 2;
#endif
    return 1;
}

void gemm__kernel(int isa, const gk_args *g) {
    switch (isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    case 3: gemm__kernel_avx512(g); break;
    case 2: gemm__kernel_avx2(g); break;
#endif
    default: gemm__kernel_generic(g); break;
    }
}

#else /* ---- the kernel body, compiled once per pass ------------------------- */

#ifndef GEMM_KERNEL_TYPES
#define GEMM_KERNEL_TYPES
typedef double vd __attribute__((vector_size(64)));
typedef int64_t vl __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(32)));
#define RB 4 /* rows per register block */
#define VSEL(m, a, b) ((vd)(((vl)(a) & (m)) | ((vl)(b) & ~(m))))
#define VMAX(a, b) VSEL((vl)((a) > (b)), (a), (b))
#define VLOAD(p) ({ vd _v; memcpy(&_v, (p), sizeof _v); _v; })
#endif

/* Truncation toward zero, floor and max of 8 doubles: one instruction on
 * AVX-512, two on AVX2, a round trip through int32 on SSE2 (exact: the
 * terms are below 2^31). */
#undef VTRUNC
#undef VFLOOR
#undef VMAXP
#if GEMM_KERNEL_PASS == 3
#define VTRUNC(x) ((vd)_mm512_roundscale_pd((__m512d)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#define VFLOOR(x) ((vd)_mm512_roundscale_pd((__m512d)(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))
#define VMAXP(a, b) ((vd)_mm512_max_pd((__m512d)(a), (__m512d)(b)))
#elif GEMM_KERNEL_PASS == 2
#define AVX2_HALVES(x, OP)                                                              \
    ({ __m256d _lo, _hi; vd _r; memcpy(&_lo, &(x), 32); memcpy(&_hi, (char *)&(x) + 32, 32); \
       _lo = OP(_lo); _hi = OP(_hi); memcpy(&_r, &_lo, 32); memcpy((char *)&_r + 32, &_hi, 32); _r; })
#define RZ256(v) _mm256_round_pd((v), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define RD256(v) _mm256_round_pd((v), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define VTRUNC(x) ({ vd _x = (x); AVX2_HALVES(_x, RZ256); })
#define VFLOOR(x) ({ vd _x = (x); AVX2_HALVES(_x, RD256); })
#define VMAXP(a, b) VMAX(a, b)
#else
#define VTRUNC(x) __builtin_convertvector(__builtin_convertvector((x), vi), vd)
#define VFLOOR(x) ({ vd _x = (x), _t = VTRUNC(_x); _t + __builtin_convertvector((vl)(_t > _x), vd); })
#define VMAXP(a, b) VMAX(a, b)
#endif

KTARGET static void KNAME(const gk_args *g) {
    const int W = 8;
    const vl expmask = {0x7FF0000000000000LL, 0x7FF0000000000000LL, 0x7FF0000000000000LL, 0x7FF0000000000000LL,
                        0x7FF0000000000000LL, 0x7FF0000000000000LL, 0x7FF0000000000000LL, 0x7FF0000000000000LL};
    const int64_t qm = ~((INT64_C(1) << (52 - g->q)) - 1);
    const vl qmask = {qm, qm, qm, qm, qm, qm, qm, qm};
    const int64_t am = 0x7FFFFFFFFFFFFFFFLL;
    const vl absmask = {am, am, am, am, am, am, am, am};
    const double two_nfrac = __builtin_ldexp(1.0, g->nfrac), inv_two_nfrac = __builtin_ldexp(1.0, -g->nfrac);
    const vd vemin = {g->emin_d, g->emin_d, g->emin_d, g->emin_d, g->emin_d, g->emin_d, g->emin_d, g->emin_d};
    const vd vzeroE = {g->zero_c_e, g->zero_c_e, g->zero_c_e, g->zero_c_e, g->zero_c_e, g->zero_c_e, g->zero_c_e, g->zero_c_e};
    const vd vfloor = {g->floor2, g->floor2, g->floor2, g->floor2, g->floor2, g->floor2, g->floor2, g->floor2};
    const vd vzero = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t mn, ov;
    memcpy(&mn, &g->emin_d, 8);
    memcpy(&ov, &g->ovf_d, 8);
    const vl vmn = {mn, mn, mn, mn, mn, mn, mn, mn}, vov = {ov, ov, ov, ov, ov, ov, ov, ov};
    const vl lzero = {0, 0, 0, 0, 0, 0, 0, 0};

    /* j outer: the B strip (k range x 8 columns) stays in L1 while the
     * caller's A tile (<= 64 rows) streams from L2 */
    for (int j = g->j0; j < g->j1; j += W) {
        for (int i0 = g->i0; i0 < g->i1; i0 += RB) {
            int nr = g->i1 - i0 < RB ? g->i1 - i0 : RB;
            const double *arow_v[RB], *arow_e[RB];
#pragma GCC unroll 4
for (int r = 0; r < RB; r++) {
                size_t ii = (size_t)(i0 + (r < nr ? r : 0));
                arow_v[r] = g->av + ii * g->lda;
                arow_e[r] = g->ae + ii * g->lda;
            }
            vd acc[RB];
            vl bad[RB];
            #pragma GCC unroll 4
            for (int r = 0; r < RB; r++) {
                int ii = i0 + (r < nr ? r : 0);
                vd c = vzero;
                if (g->cin) {
                    for (int l = 0; l < W; l++) c[l] = g->cin[(size_t)ii * g->ldc + (size_t)(j + l)];
                }
                acc[r] = c;
                bad[r] = lzero;
            }
            for (int kb = g->k0; kb < g->k1; kb += g->block) {
                int ke = kb + g->block < g->k1 ? kb + g->block : g->k1;
                vd em[RB];
                #pragma GCC unroll 4
                for (int r = 0; r < RB; r++) {
                    /* c's alignment exponent: 2^floor(log2|c|), at least 2^emin; a zero c per the zero rule */
                    vd e = (vd)((vl)acc[r] & expmask);
                    e = VMAX(e, vemin);
                    vl isz = (vl)(acc[r] == vzero);
                    e = VSEL(isz, vzeroE, e);
                    em[r] = e;
                }
                /* pass 1: emax over the products of the block */
                for (int k = kb; k < ke; k++) {
                    vd be = VLOAD(g->be + (size_t)k * g->ldb + (size_t)j);
                    #pragma GCC unroll 4
                    for (int r = 0; r < RB; r++) {
                        double ae = arow_e[r][k];
                        vd p = be * ae;
                        em[r] = VMAXP(em[r], p);
                    }
                }
                vd sc[RB], S[RB];
                #pragma GCC unroll 4
                for (int r = 0; r < RB; r++) {
                    if (g->floor2 > 0) em[r] = VMAX(em[r], vfloor);
                    /* 2^(nfrac - emax): exact (powers of two) */
                    sc[r] = two_nfrac / em[r];
                    vd x = acc[r] * sc[r];
                    S[r] = g->rd ? VFLOOR(x) : VTRUNC(x);
                }
                /* pass 2: the terms truncated toward zero (NVIDIA) or toward -inf (AMD) */
                if (!g->rd) {
                    for (int k = kb; k < ke; k++) {
                        vd bv = VLOAD(g->bv + (size_t)k * g->ldb + (size_t)j);
                        #pragma GCC unroll 4
                        for (int r = 0; r < RB; r++) S[r] += VTRUNC((bv * arow_v[r][k]) * sc[r]);
                    }
                } else {
                    for (int k = kb; k < ke; k++) {
                        vd bv = VLOAD(g->bv + (size_t)k * g->ldb + (size_t)j);
                        #pragma GCC unroll 4
                        for (int r = 0; r < RB; r++) S[r] += VFLOOR((bv * arow_v[r][k]) * sc[r]);
                    }
                }
                /* normalise and round toward zero to q bits */
                #pragma GCC unroll 4
                for (int r = 0; r < RB; r++) {
                    vd v = S[r] * (em[r] * inv_two_nfrac);
                    v = (vd)((vl)v & qmask);
                    vl a = (vl)v & absmask;
                    bad[r] |= ((a < vmn) & (a != lzero)) | (a >= vov);
                    acc[r] = v;
                }
            }
            for (int r = 0; r < nr; r++) {
                for (int l = 0; l < W && j + l < g->j1; l++) {
                    size_t o = (size_t)(i0 + r) * g->ldo + (size_t)(j + l);
                    g->out[o] = (float)acc[r][l];
                    g->flag[o] |= bad[r][l] != 0;
                }
            }
        }
    }
}

/* ---- the f32 variant: 16 lanes, int32 sums ----------------------------------
 * For inputs whose products and alignment powers are exact floats in f32's
 * normal range (f16, fp8, fp6, fp4 without block scales), RZ alignment and
 * sums below 2^31 ((B+1) * 2^(nfrac+2) < 2^31): each term is
 * cvttps2dq((a*b) * 2^(nfrac-emax)) (exact: a*b has <= 22 bits, the scaling
 * is a power of two, the conversion truncates toward zero; an underflow
 * only hits values that truncate to 0 anyway) summed in int32 lanes. */
#ifndef GEMM_KERNEL_FTYPES
#define GEMM_KERNEL_FTYPES
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vfi __attribute__((vector_size(64)));
typedef uint32_t vfu __attribute__((vector_size(64)));
typedef double vd8 __attribute__((vector_size(64)));
typedef int64_t vl8 __attribute__((vector_size(64)));
typedef int32_t vhi __attribute__((vector_size(32)));
typedef float vhf __attribute__((vector_size(32)));
#define FSEL(m, a, b) ((vf)(((vfi)(a) & (m)) | ((vfi)(b) & ~(m))))
#define FMAXG(a, b) FSEL((vfi)((a) > (b)), (a), (b))
#define FLOAD(p) ({ vf _v; memcpy(&_v, (p), sizeof _v); _v; })
#define RBF 8 /* rows per register block of the f32 kernel */
#endif
#undef FMAXP
#if GEMM_KERNEL_PASS == 3
#define FMAXP(a, b) ((vf)_mm512_max_ps((__m512)(a), (__m512)(b)))
#else
#define FMAXP(a, b) FMAXG(a, b)
#endif

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

KTARGET static void CAT(KNAME, _f32)(const gkf_args *g) {
    const int W = 16;
    const float two_nfrac = __builtin_ldexpf(1.0f, g->nfrac);
    const double inv_two_nfrac = __builtin_ldexp(1.0, -g->nfrac);
    const float fzeroE = g->zero_c_e, fmin = g->emin_f, fthresh = __builtin_ldexpf(1.0f, g->nfrac - 126);
    const vf vzeroE = {fzeroE, fzeroE, fzeroE, fzeroE, fzeroE, fzeroE, fzeroE, fzeroE,
                       fzeroE, fzeroE, fzeroE, fzeroE, fzeroE, fzeroE, fzeroE, fzeroE};
    const vf vemin = {fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin, fmin};
    const vf vthr = {fthresh, fthresh, fthresh, fthresh, fthresh, fthresh, fthresh, fthresh,
                     fthresh, fthresh, fthresh, fthresh, fthresh, fthresh, fthresh, fthresh};
    const vf vfz = {0};
    const vfi vexpm = {0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000,
                       0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000};
    const vfi viz = {0};
    const int64_t qm = ~((INT64_C(1) << (52 - g->q)) - 1), am = 0x7FFFFFFFFFFFFFFFLL;
    const vl8 qmask = {qm, qm, qm, qm, qm, qm, qm, qm}, absmask = {am, am, am, am, am, am, am, am};
    int64_t mn, ov;
    memcpy(&mn, &g->emin_d, 8);
    memcpy(&ov, &g->ovf_d, 8);
    const vl8 vmn = {mn, mn, mn, mn, mn, mn, mn, mn}, vov = {ov, ov, ov, ov, ov, ov, ov, ov}, lz = {0};
    const float big = __builtin_ldexpf(1.0f, 127);
    const int zero_differs = g->zero_c_e != g->emin_f;
    const int32_t scb = (int32_t)((uint32_t)(254 + g->nfrac) << 23); /* no signed overflow (UBSan) */
    const vfi vscb = {scb, scb, scb, scb, scb, scb, scb, scb, scb, scb, scb, scb, scb, scb, scb, scb};
    (void)two_nfrac;
    const float inv_two_nfrac_f = __builtin_ldexpf(1.0f, -g->nfrac);
    const int32_t qm32 = (int32_t)~((UINT32_C(1) << (23 - g->q)) - 1);
    const vfi qmask32 = {qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32, qm32};
    const vfi absmask32 = {0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF,
                           0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF};
    const vfi vminbits = {0x00800000, 0x00800000, 0x00800000, 0x00800000, 0x00800000, 0x00800000, 0x00800000, 0x00800000,
                          0x00800000, 0x00800000, 0x00800000, 0x00800000, 0x00800000, 0x00800000, 0x00800000, 0x00800000};
    const vfi vinfbits = {0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000,
                          0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000};
    (void)inv_two_nfrac_f, (void)qmask32, (void)absmask32, (void)vminbits, (void)vinfbits;
    (void)inv_two_nfrac, (void)qmask, (void)absmask, (void)vmn, (void)vov, (void)lz;

    for (int j = g->j0; j < g->j1; j += W) {
        for (int i0 = g->i0; i0 < g->i1; i0 += RBF) {
            int nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
            const float *arow_v[RBF], *arow_e[RBF];
            vf acc[RBF];
            vfi bad[RBF];
#pragma GCC unroll 8
            for (int r = 0; r < RBF; r++) {
                size_t ii = (size_t)(i0 + (r < nr ? r : 0));
                arow_v[r] = g->av + ii * g->lda;
                arow_e[r] = g->ae + ii * g->lda;
                vf c = vfz;
                if (g->cin)
                    for (int l = 0; l < W; l++) c[l] = g->cin[ii * g->ldc + (size_t)(j + l)];
                acc[r] = c;
                bad[r] = viz;
            }
            for (int kb = g->k0; kb < g->k1; kb += g->block) {
                int ke = kb + g->block < g->k1 ? kb + g->block : g->k1;
                vf em[RBF], sc[RBF];
                vfi S[RBF];
#pragma GCC unroll 8
                for (int r = 0; r < RBF; r++) {
                    vf e = (vf)((vfi)acc[r] & vexpm);
                    e = FMAXG(e, vemin); /* subnormal and zero c: emin */
                    if (zero_differs) {  /* zero_c=ignore: a zero c takes no part */
                        vfi isz = (vfi)(acc[r] == vfz);
                        e = FSEL(isz, vzeroE, e);
                    }
                    em[r] = e;
                }
                for (int k = kb; k < ke; k++) {
                    vf be = FLOAD(g->be + (size_t)k * g->ldb + (size_t)j);
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) em[r] = FMAXP(em[r], be * arow_e[r][k]);
                }
#pragma GCC unroll 8
                for (int r = 0; r < RBF; r++) {
                    /* a tiny emax: only all-zero terms (fine, sc is clamped) or a tiny c (flagged) */
                    vfi tiny = (vfi)(em[r] < vthr);
                    bad[r] |= tiny & (vfi)(acc[r] != vfz);
                    /* 2^nfrac / em by exponent arithmetic (em is a power of two; a
                     * division costs ~10 cycles a vector): bits (254 + nfrac) << 23
                     * minus em's bits; lanes where that leaves the normal range are
                     * the tiny ones, replaced just below */
                    vf q = (vf)(vscb - (vfi)em[r]);
                    sc[r] = FSEL(tiny, ((vf){big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big}), q);
                    S[r] = __builtin_convertvector(acc[r] * sc[r], vfi);
                }
                for (int k = kb; k < ke; k++) {
                    vf bv = FLOAD(g->bv + (size_t)k * g->ldb + (size_t)j);
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) S[r] += __builtin_convertvector((bv * arow_v[r][k]) * sc[r], vfi);
                }
#pragma GCC unroll 8
                for (int r = 0; r < RBF; r++) {
#if GEMM_KERNEL_PASS == 3
                    /* AVX-512: the int32 sum converted with round-toward-zero (embedded
                     * rounding: RZ to 24 bits), masked to q bits, times 2^(emax - nfrac)
                     * (a power of two, exact while the result is a normal float) */
                    vf z = (vf)_mm512_cvt_roundepi32_ps((__m512i)S[r], _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
                    z = (vf)((vfi)z & qmask32);
                    vf v = z * (em[r] * inv_two_nfrac_f);
                    vfi a = (vfi)v & absmask32;
                    /* 0 < |v| < min normal (one unsigned compare), or inf */
                    bad[r] |= (vfi)((vfu)(a - 1) < (vfu)(vminbits - 1)) | (vfi)(a >= vinfbits);
                    acc[r] = v;
                }
            }
#else
                    /* S * 2^(emax - nfrac), RZ to q bits, in doubles (two halves of 8) */
                    vhi s0 = __builtin_shufflevector(S[r], S[r], 0, 1, 2, 3, 4, 5, 6, 7);
                    vhi s1 = __builtin_shufflevector(S[r], S[r], 8, 9, 10, 11, 12, 13, 14, 15);
                    vhf e0 = __builtin_shufflevector(em[r], em[r], 0, 1, 2, 3, 4, 5, 6, 7);
                    vhf e1 = __builtin_shufflevector(em[r], em[r], 8, 9, 10, 11, 12, 13, 14, 15);
                    vd8 v0 = __builtin_convertvector(s0, vd8) * (__builtin_convertvector(e0, vd8) * inv_two_nfrac);
                    vd8 v1 = __builtin_convertvector(s1, vd8) * (__builtin_convertvector(e1, vd8) * inv_two_nfrac);
                    v0 = (vd8)((vl8)v0 & qmask);
                    v1 = (vd8)((vl8)v1 & qmask);
                    vl8 a0 = (vl8)v0 & absmask, a1 = (vl8)v1 & absmask;
                    vl8 b0 = ((a0 < vmn) & (a0 != lz)) | (a0 >= vov);
                    vl8 b1 = ((a1 < vmn) & (a1 != lz)) | (a1 >= vov);
                    vhf r0 = __builtin_convertvector(v0, vhf), r1 = __builtin_convertvector(v1, vhf);
                    acc[r] = __builtin_shufflevector(r0, r1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
                    vhi c0 = __builtin_convertvector(b0, vhi), c1 = __builtin_convertvector(b1, vhi);
                    bad[r] |= __builtin_shufflevector(c0, c1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
                }
            }
#endif
            for (int r = 0; r < nr; r++)
                for (int l = 0; l < W && j + l < g->j1; l++) {
                    size_t o = (size_t)(i0 + r) * g->ldo + (size_t)(j + l);
                    g->out[o] = acc[r][l];
                    g->flag[o] |= bad[r][l] != 0;
                }
        }
    }
}
#endif
