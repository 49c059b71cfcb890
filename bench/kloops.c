/* SPDX-License-Identifier: MIT */
/* kloops.c: the inner loops of the f32 GEMM kernel, and of designs for it,
 * against the inner loop of sgemm, on data in L1.
 * Usage: kloops [ROUNDS]   (build: make build/bench/kloops; AVX-512 only)
 *
 * Each row is a loop over one register block, 8 rows x 32 columns x 32 k
 * (one h100 fp8 block), written as the kernel writes it, on data that stays
 * in L1, so that it shows what the instructions cost and nothing else:
 *   fma (sgemm)      one fma per 16 products, B in registers: the inner
 *                    loop of a BLAS sgemm, the baseline
 *   pass 1 (emax)    the f32 kernel's exponent words: one add and one max
 *                    per 32 products
 *   emax bytes       the count pass's: a saturating add and a max of bytes
 *                    per 64 products
 *   pass 2           the f32 kernel's terms: product, scaling, conversion
 *                    toward zero, integer add (four per 16 products)
 *   chains           the two-chain design (docs/benchmarks.md): two fmas
 *                    per 16 products, rounded down and up, B split by sign,
 *                    the pair picked by a byte offset from a's sign
 *   chains, fixed    the same with the offsets fixed: what the fmas and
 *                    loads cost without the data-dependent addresses (not
 *                    a correct algorithm; a floor)
 *   chains, B regs   the same with B held in registers (not correct
 *                    either; the floor of two fmas per 16 products)
 *   chains, masks    the pair picked by write masks instead, two mask
 *                    loads (kmovw) per row and half
 *   count words 8r   the count pass's first form: one fma chain rounded
 *                    down per 16 products, and per 32 products an add of
 *                    lsb words, a compare into a mask and a masked
 *                    subtract (thresholds loaded, 8 rows)
 *   count words 4r   the same, 4 rows at a time, thresholds in registers
 *   count bytes      the count on bytes, 64 products per add, compare and
 *                    subtract: the kernel's count pass (gemm_kernel.c)
 *   count f64        the count pass in doubles, a design for f16 and bf16
 *                    (whose terms, up to 2^27 quanta, do not fit an f32
 *                    chain): two fmas rounded down per 16 products (8
 *                    lanes each), 4 rows x 16 columns at a time, and the
 *                    byte count (tried 2026-11-27: slower than pass 2)
 * The rows take turns over ROUNDS rounds (default 9; the order rotates).
 * Prints ns per 16 products (thread CPU time; minimum and median over the
 * rounds) and each row's time over the fma loop's in the same round
 * (minimum and median). The rows' results are summed into bench_sink. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define KB 32                  /* k per block */
#define ROWS 8                 /* rows of the register block */
#define UNITS (ROWS * KB * 2)  /* 16-product units per pass over the block */
#define AVX512 __attribute__((target("avx512f,avx512bw"), noinline))
#define RD (_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define RU (_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)

static float bv[KB * 32] __attribute__((aligned(64)));   /* B panel: 32 columns per k */
static float pm[KB * 96] __attribute__((aligned(64)));   /* per k: B+ of both halves, B-, B+ again */
static float ap[KB * ROWS] __attribute__((aligned(64))); /* A panel: 8 rows per k */
static int32_t aw[KB * ROWS] __attribute__((aligned(64)));
static int16_t bw[KB * 32] __attribute__((aligned(64)));
static int32_t dl[KB * ROWS] __attribute__((aligned(64)));   /* 128 where a < 0 */
static uint16_t mk[KB * ROWS * 4] __attribute__((aligned(64))); /* per (k, row): down h0, h1, up h0, h1 */
static int32_t al[KB * ROWS] __attribute__((aligned(64)));    /* lsb words of a, repeated in both halves */
static int16_t bl[KB * 32] __attribute__((aligned(64)));      /* lsb words of b */
static int16_t thr[ROWS * 32] __attribute__((aligned(64)));   /* per row and column: the count's threshold */
static int32_t alb[KB / 2 * ROWS] __attribute__((aligned(64))); /* lsb bytes of a: (k, k+1) twice, per k pair */
static uint8_t blb[KB * 32] __attribute__((aligned(64)));      /* lsb bytes of b, k pairs interleaved */
static uint8_t thb[ROWS * 64] __attribute__((aligned(64)));    /* byte thresholds, each column's twice */
static float out[ROWS * 32 * 2] __attribute__((aligned(64)));

/* a mask register loaded straight from memory (the compilers load it
 * through a general register, a uop on a vector port) */
#define KLD(p) ({ __mmask16 _k; __asm__("kmovw %1, %0" : "=k"(_k) : "m"(*(const uint16_t *)(p))); _k; })

AVX512 static void fma_loop(long reps) {
    for (long it = 0; it < reps; it++) {
        __m512 t[ROWS][2];
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++)
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) t[r][h] = _mm512_set1_ps((float)(r + h));
        for (int k = 0; k < KB; k++) {
            __m512 b0 = _mm512_load_ps(bv + k * 32), b1 = _mm512_load_ps(bv + k * 32 + 16);
#pragma GCC unroll 8
            for (int r = 0; r < ROWS; r++) {
                __m512 a = _mm512_set1_ps(ap[k * ROWS + r]);
                t[r][0] = _mm512_fmadd_ps(a, b0, t[r][0]);
                t[r][1] = _mm512_fmadd_ps(a, b1, t[r][1]);
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++)
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) _mm512_store_ps(out + (r * 2 + h) * 16, t[r][h]);
    }
}

AVX512 static void pass1_loop(long reps) {
    for (long it = 0; it < reps; it++) {
        __m512i w[ROWS];
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) w[r] = _mm512_set1_epi16((short)(r + 1));
        for (int k = 0; k < KB; k++) {
            __m512i b = _mm512_load_si512(bw + k * 32);
#pragma GCC unroll 8
            for (int r = 0; r < ROWS; r++) w[r] = _mm512_max_epi16(w[r], _mm512_add_epi16(b, _mm512_set1_epi32(aw[k * ROWS + r])));
        }
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) _mm512_store_si512(out + r * 16, w[r]);
    }
}

/* the count pass's emax: exponent bytes, a saturating add and a max per 64
 * products (32 columns x a pair of k) */
AVX512 static void pass1b_loop(long reps) {
    for (long it = 0; it < reps; it++) {
        __m512i e[ROWS];
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) e[r] = _mm512_set1_epi8(-128);
        for (int k = 0; k < KB; k += 2) {
            __m512i b = _mm512_load_si512(blb + k * 32);
#pragma GCC unroll 8
            for (int r = 0; r < ROWS; r++) {
                __m512i t = _mm512_adds_epi8(b, _mm512_set1_epi32(alb[k / 2 * ROWS + r]));
                __asm__("vpmaxsb %[t], %[e], %[e]" : [e] "+v"(e[r]) : [t] "v"(t));
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) _mm512_store_si512(out + r * 16, e[r]);
    }
}

AVX512 static void pass2_loop(long reps) {
    for (long it = 0; it < reps; it++)
        for (int h = 0; h < 2; h++) {
            __m512i s[ROWS];
            __m512 sc[ROWS];
#pragma GCC unroll 8
            for (int r = 0; r < ROWS; r++) s[r] = _mm512_set1_epi32(r), sc[r] = _mm512_set1_ps(256.0f);
            for (int k = 0; k < KB; k++) {
                __m512 b = _mm512_load_ps(bv + k * 32 + 16 * h);
#pragma GCC unroll 8
                for (int r = 0; r < ROWS; r++)
                    s[r] = _mm512_add_epi32(s[r], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(b, _mm512_set1_ps(ap[k * ROWS + r])), sc[r])));
            }
#pragma GCC unroll 8
            for (int r = 0; r < ROWS; r++) _mm512_store_si512(out + (r * 2 + h) * 16, s[r]);
        }
}

/* The two-chain loops, four rows at a time (16 chains in registers).
 * how: 0 offsets from a's sign, 1 fixed offsets, 2 B in registers, 3 masks */
#define CHAINS_BODY(how)                                                                                          \
    for (long it = 0; it < reps; it++)                                                                            \
        for (int rg = 0; rg < ROWS; rg += 4) {                                                                    \
            __m512 td[4][2], tu[4][2];                                                                            \
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++)                                                   \
                _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) td[r][h] = tu[r][h] = _mm512_set1_ps(12582912.0f); \
            for (int k = 0; k < KB; k++) {                                                                        \
                const char *pk = (const char *)pm + k * 384;                                                      \
                __m512 b0 = _mm512_load_ps(bv + k * 32), b1 = _mm512_load_ps(bv + k * 32 + 16);                   \
                __m512 n0 = _mm512_load_ps(pm + k * 96 + 32), n1 = _mm512_load_ps(pm + k * 96 + 48);              \
                (void)pk, (void)b0, (void)b1, (void)n0, (void)n1;                                                 \
                _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) {                                             \
                    __m512 a = _mm512_set1_ps(ap[k * ROWS + rg + r]);                                             \
                    if (how == 0 || how == 1) {                                                                   \
                        const float *p = (const float *)(pk + (how == 0 ? dl[k * ROWS + rg + r] : 0));            \
                        td[r][0] = _mm512_fmadd_round_ps(a, _mm512_load_ps(p), td[r][0], RD);                     \
                        td[r][1] = _mm512_fmadd_round_ps(a, _mm512_load_ps(p + 16), td[r][1], RD);                \
                        tu[r][0] = _mm512_fmadd_round_ps(a, _mm512_load_ps(p + 32), tu[r][0], RU);                \
                        tu[r][1] = _mm512_fmadd_round_ps(a, _mm512_load_ps(p + 48), tu[r][1], RU);                \
                    } else if (how == 2) {                                                                        \
                        td[r][0] = _mm512_fmadd_round_ps(a, b0, td[r][0], RD);                                    \
                        td[r][1] = _mm512_fmadd_round_ps(a, b1, td[r][1], RD);                                    \
                        tu[r][0] = _mm512_fmadd_round_ps(a, n0, tu[r][0], RU);                                    \
                        tu[r][1] = _mm512_fmadd_round_ps(a, n1, tu[r][1], RU);                                    \
                    } else {                                                                                      \
                        const uint16_t *m = mk + (k * ROWS + rg + r) * 4;                                         \
                        td[r][0] = _mm512_mask3_fmadd_round_ps(a, b0, td[r][0], KLD(m), RD);                      \
                        td[r][1] = _mm512_mask3_fmadd_round_ps(a, b1, td[r][1], KLD(m + 1), RD);                  \
                        tu[r][0] = _mm512_mask3_fmadd_round_ps(a, b0, tu[r][0], KLD(m + 2), RU);                  \
                        tu[r][1] = _mm512_mask3_fmadd_round_ps(a, b1, tu[r][1], KLD(m + 3), RU);                  \
                    }                                                                                             \
                }                                                                                                 \
            }                                                                                                     \
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++)                                                   \
                _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++)                                               \
                    _mm512_store_ps(out + ((rg + r) * 2 + h) * 16, _mm512_add_ps(td[r][h], tu[r][h]));            \
        }

AVX512 static void chains_loop(long reps) { CHAINS_BODY(0) }
AVX512 static void chains_fixed_loop(long reps) { CHAINS_BODY(1) }
AVX512 static void chains_regs_loop(long reps) { CHAINS_BODY(2) }
AVX512 static void chains_masks_loop(long reps) { CHAINS_BODY(3) }


/* One fma chain rounded down per 16 products (B in registers), and the
 * count of the negative products that are not multiples of the quantum:
 * an add of lsb words, a compare into a mask and a masked subtract per 32
 * products. rows: 8 (thresholds loaded as operands) or 4 (in registers). */
#define COUNT_BODY(NRW)                                                                                           \
    for (long it = 0; it < reps; it++)                                                                            \
        for (int rg = 0; rg < ROWS; rg += NRW) {                                                                  \
            __m512 td[NRW][2];                                                                                    \
            __m512i cnt[NRW], th[NRW];                                                                            \
            _Pragma("GCC unroll 8") for (int r = 0; r < NRW; r++) {                                               \
                td[r][0] = td[r][1] = _mm512_set1_ps(12582912.0f);                                                \
                cnt[r] = _mm512_setzero_si512();                                                                  \
                th[r] = _mm512_load_si512(thr + (rg + r) * 32);                                                   \
            }                                                                                                     \
            const __m512i m1 = _mm512_set1_epi16(-1);                                                             \
            for (int k = 0; k < KB; k++) {                                                                        \
                __m512 b0 = _mm512_load_ps(bv + k * 32), b1 = _mm512_load_ps(bv + k * 32 + 16);                   \
                __m512i wl = _mm512_load_si512(bl + k * 32);                                                      \
                _Pragma("GCC unroll 8") for (int r = 0; r < NRW; r++) {                                           \
                    __m512 a = _mm512_set1_ps(ap[k * ROWS + rg + r]);                                             \
                    td[r][0] = _mm512_fmadd_round_ps(a, b0, td[r][0], RD);                                        \
                    td[r][1] = _mm512_fmadd_round_ps(a, b1, td[r][1], RD);                                        \
                    __m512i sw = _mm512_add_epi16(wl, _mm512_set1_epi32(al[k * ROWS + rg + r]));                  \
                    __mmask32 m = _mm512_cmplt_epu16_mask(sw, NRW == 4 ? th[r] : _mm512_load_si512(thr + (rg + r) * 32)); \
                    cnt[r] = _mm512_mask_sub_epi16(cnt[r], m, cnt[r], m1);                                        \
                }                                                                                                 \
            }                                                                                                     \
            _Pragma("GCC unroll 8") for (int r = 0; r < NRW; r++) {                                               \
                _mm512_store_ps(out + ((rg + r) * 2) * 16, td[r][0]);                                             \
                _mm512_store_ps(out + ((rg + r) * 2 + 1) * 16, _mm512_add_ps(td[r][1], (__m512)cnt[r]));          \
            }                                                                                                     \
        }

AVX512 static void count8_loop(long reps) { COUNT_BODY(8) }
AVX512 static void count4_loop(long reps) { COUNT_BODY(4) }

/* The same count on byte lanes: 64 products (32 columns x a pair of k) per
 * add, compare and masked subtract. */
/* the byte count's pieces (countb_loop, countd_loop): the counts and
 * thresholds of rows rg..rg+3, and one row's step for a pair of k */
#define COUNTB_START(cnt, th, rg)                                              \
    _Pragma("GCC unroll 4") for (int _r = 0; _r < 4; _r++)                     \
        cnt[_r] = _mm512_setzero_si512(), th[_r] = _mm512_load_si512(thb + ((rg) + _r) * 64)
#define COUNTB_STEP(cnt, th, wl, k, rg, r, m1)                                                                  \
    do {                                                                                                          \
        __m512i _sw = _mm512_add_epi8(wl, _mm512_set1_epi32(alb[(k) / 2 * ROWS + (rg) + (r)]));                 \
        __mmask64 _below = _mm512_cmplt_epu8_mask(_sw, th[r]);                                                    \
        __asm__("vpsubb %[m1], %[c], %[c]%{%[k]%}" : [c] "+v"(cnt[r]) : [m1] "v"(m1), [k] "Yk"(_below));         \
    } while (0)
AVX512 static void countb_loop(long reps) {
    for (long it = 0; it < reps; it++)
        for (int rg = 0; rg < ROWS; rg += 4) {
            __m512 td[4][2];
            __m512i cnt[4], th[4];
            COUNTB_START(cnt, th, rg);
#pragma GCC unroll 4
            for (int r = 0; r < 4; r++) td[r][0] = td[r][1] = _mm512_set1_ps(12582912.0f);
            const __m512i m1 = _mm512_set1_epi8(-1);
            for (int k = 0; k < KB; k += 2) {
                __m512 b0 = _mm512_load_ps(bv + k * 32), b1 = _mm512_load_ps(bv + k * 32 + 16);
                __m512 c0 = _mm512_load_ps(bv + k * 32 + 32), c1 = _mm512_load_ps(bv + k * 32 + 48);
                __m512i wl = _mm512_load_si512(blb + k * 32);
#pragma GCC unroll 4
                for (int r = 0; r < 4; r++) {
                    __m512 a = _mm512_set1_ps(ap[k * ROWS + rg + r]), a2 = _mm512_set1_ps(ap[(k + 1) * ROWS + rg + r]);
                    td[r][0] = _mm512_fmadd_round_ps(a, b0, td[r][0], RD);
                    td[r][1] = _mm512_fmadd_round_ps(a, b1, td[r][1], RD);
                    td[r][0] = _mm512_fmadd_round_ps(a2, c0, td[r][0], RD);
                    td[r][1] = _mm512_fmadd_round_ps(a2, c1, td[r][1], RD);
                    COUNTB_STEP(cnt, th, wl, k, rg, r, m1);
                }
            }
#pragma GCC unroll 4
            for (int r = 0; r < 4; r++) {
                _mm512_store_ps(out + ((rg + r) * 2) * 16, td[r][0]);
                _mm512_store_ps(out + ((rg + r) * 2 + 1) * 16, _mm512_add_ps(td[r][1], (__m512)cnt[r]));
            }
        }
}

/* The count pass's chain in doubles: B's 16 columns of a half as two
 * vectors of 8 doubles, 4 rows, a chain rounded down per lane; the byte
 * count as countb_loop's (once per k pair and row, for both halves). */
static double bvd[KB * 32] __attribute__((aligned(64)));
static double apd[KB * ROWS] __attribute__((aligned(64)));
AVX512 static void countd_loop(long reps) {
    for (long it = 0; it < reps; it++)
        for (int rg = 0; rg < ROWS; rg += 4)
            for (int h = 0; h < 2; h++) {
                __m512d td[4][2];
                __m512i cnt[4], th[4];
                COUNTB_START(cnt, th, rg);
#pragma GCC unroll 4
                for (int r = 0; r < 4; r++) td[r][0] = td[r][1] = _mm512_set1_pd(6755399441055744.0);
                const __m512i m1 = _mm512_set1_epi8(-1);
                for (int k = 0; k < KB; k += 2) {
#pragma GCC unroll 2
                    for (int kk = k; kk < k + 2; kk++) {
                        __m512d b0 = _mm512_load_pd(bvd + kk * 32 + 16 * h), b1 = _mm512_load_pd(bvd + kk * 32 + 16 * h + 8);
#pragma GCC unroll 4
                        for (int r = 0; r < 4; r++) {
                            __m512d a = _mm512_set1_pd(apd[kk * ROWS + rg + r]);
                            td[r][0] = _mm512_fmadd_round_pd(a, b0, td[r][0], RD);
                            td[r][1] = _mm512_fmadd_round_pd(a, b1, td[r][1], RD);
                        }
                    }
                    if (h == 0) {
                        __m512i wl = _mm512_load_si512(blb + k * 32);
#pragma GCC unroll 4
                        for (int r = 0; r < 4; r++) COUNTB_STEP(cnt, th, wl, k, rg, r, m1);
                    }
                }
#pragma GCC unroll 4
                for (int r = 0; r < 4; r++) {
                    __m512d s = _mm512_add_pd(td[r][0], td[r][1]);
                    _mm512_store_ps(out + ((rg + r) * 2 + h) * 16,
                                    _mm512_add_ps(_mm512_castpd_ps(s), (__m512)cnt[r]));
                }
            }
}

static void fill(void) {
    uint64_t s = 1;
    for (int i = 0; i < KB * 32; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        int e = (int)(s >> 60) - 8, m = (int)(s >> 56 & 7) + 8; /* e4m3-like: 4-bit significands */
        float v = (float)m / 8 * (e < 0 ? 1.0f / (float)(1 << -e) : (float)(1 << e));
        bv[i] = s >> 55 & 1 ? -v : v;
        bw[i] = (int16_t)(e + 63);
        bl[i] = (int16_t)(e - 3 + 512 + (s >> 55 & 1 ? 0 : -0x4000));
    }
    for (int k = 0; k < KB; k++)
        for (int h = 0; h < 2; h++)
            for (int l = 0; l < 16; l++) {
                float b = bv[k * 32 + 16 * h + l];
                pm[k * 96 + 16 * h + l] = pm[k * 96 + 64 + 16 * h + l] = b < 0 ? 0 : b;
                pm[k * 96 + 32 + 16 * h + l] = b < 0 ? b : 0;
            }
    for (int i = 0; i < KB * ROWS; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        int e = (int)(s >> 60) - 8, m = (int)(s >> 56 & 7) + 8;
        float v = (float)m / 8 * (e < 0 ? 1.0f / (float)(1 << -e) : (float)(1 << e));
        ap[i] = s >> 55 & 1 ? -v : v;
        aw[i] = (int32_t)((uint32_t)(e + 64) << 16 | (uint32_t)(e + 64));
        dl[i] = ap[i] < 0 ? 128 : 0;
        uint16_t w = (uint16_t)(e - 3 + (s >> 55 & 1 ? 0x4000 : 0));
        al[i] = (int32_t)((uint32_t)w << 16 | w);
    }
    for (int i = 0; i < ROWS * 32; i++) thr[i] = (int16_t)(512 + (i % 7) - 3);
    for (int i = 0; i < ROWS * 64; i++) thb[i] = (uint8_t)(40 + (i / 2 % 7) - 3);
    for (int i = 0; i < KB * 32; i++) blb[i] = (uint8_t)(bl[i] - 512 + 40);
    for (int i = 0; i < KB / 2 * ROWS; i++) alb[i] = (int32_t)((al[i] & 0xFF) * 0x01010101u);
    for (int k = 0; k < KB; k++)
        for (int r = 0; r < ROWS; r++)
            for (int h = 0; h < 2; h++) {
                uint16_t pos = 0;
                for (int l = 0; l < 16; l++) pos |= (uint16_t)((bv[k * 32 + 16 * h + l] >= 0) << l);
                uint16_t d = ap[k * ROWS + r] >= 0 ? pos : (uint16_t)~pos;
                mk[(k * ROWS + r) * 4 + h] = d, mk[(k * ROWS + r) * 4 + 2 + h] = (uint16_t)~d;
            }
    for (int i = 0; i < KB * 32; i++) bvd[i] = bv[i];
    for (int i = 0; i < KB * ROWS; i++) apd[i] = ap[i];
}

static uint64_t out_sum(void) {
    uint64_t u = 0;
    uint32_t w;
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) memcpy(&w, &out[i], 4), u += w;
    return u;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 9;
    if (rounds < 1 || rounds > 1000) {
        fprintf(stderr, "kloops: ROUNDS must be a number from 1 to 1000, got '%s'\n", argv[1]);
        return 2;
    }
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw")) {
        printf("kloops: this CPU has no AVX-512 (F and BW); nothing to time\n");
        return 0;
    }
    fill();
    struct {
        const char *name;
        void (*fn)(long);
    } row[] = {{"fma (sgemm)", fma_loop},      {"pass 1 (emax)", pass1_loop}, {"emax bytes", pass1b_loop},          {"pass 2", pass2_loop},
               {"chains", chains_loop},        {"chains, fixed", chains_fixed_loop}, {"chains, B regs", chains_regs_loop},
               {"chains, masks", chains_masks_loop}, {"count words 8r", count8_loop}, {"count words 4r", count4_loop}, {"count bytes", countb_loop},
               {"count f64", countd_loop}};
    enum { NR = sizeof row / sizeof row[0] };
    const long reps = 100000;
    double ns[NR][1000], ratio[NR][1000];
    for (int i = 0; i < NR; i++) row[i].fn(reps / 10); /* warm-up */
    for (int q = 0; q < rounds; q++) {
        double t[NR];
        for (int o = 0; o < NR; o++) {
            int i = (o + q) % NR; /* the order rotates */
            double c0 = bench_thread_cpu();
            row[i].fn(reps);
            t[i] = (bench_thread_cpu() - c0) / ((double)reps * UNITS) * 1e9;
            bench_sink += out_sum();
        }
        for (int i = 0; i < NR; i++) ns[i][q] = t[i], ratio[i][q] = t[i] / t[0];
    }
    bench_print_machine("# ");
    printf("# kloops: 8 rows x 32 columns x %d k in L1, %d rounds; ns per 16 products (thread CPU time)\n", KB, rounds);
    printf("%-16s %9s %9s %9s %9s\n", "loop", "min ns", "med ns", "min x", "med x");
    for (int i = 0; i < NR; i++) {
        bench_stat a = bench_stats(ns[i], rounds), b = bench_stats(ratio[i], rounds);
        printf("%-16s %9.3f %9.3f %9.2f %9.2f\n", row[i].name, a.min, a.med, b.min, b.med);
    }
    return 0;
}
#else
int main(void) {
    printf("kloops: x86-64 with GCC or Clang only; nothing to time\n");
    return 0;
}
#endif
