/* SPDX-License-Identifier: MIT */
/* gemm_kernel.c: the vectorised block-FMA kernels behind fpemu_gemm_f32:
 * the f64 kernel (8 lanes, below), the f32 kernel (16 lanes, int32 sums)
 * and the group kernel (NVFP4's group rule), each with its exactness
 * argument; gemm.c decides which one a call may take.
 *
 * The f64 kernel's exactness argument (why every instruction set gives the
 * scalar model's bits): operands are exact doubles (<= 24-bit significands), so each
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
#include "gemm_internal.h"
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define GEMM_HAVE_AMX 1
#endif

/* The exact-sum kernel's AMX form: k of a chunk of kn as its digit rows
 * hold them, whole tiles of 64 (zeros past kn). */
static size_t gemm_exa_kp(int kn) { return ((size_t)(kn > 0 ? kn : 1) + 63) / 64 * 64; }

/* The exact-sum kernel's AMX form: columns of B per block (whole tiles of
 * 16, at most 512, digits of at most 1 MiB) for kp k and ndb digits. */
static int gemm_exa_nb(size_t kp, int ndb) {
    size_t nb = ((size_t)1 << 20) / (kp * (size_t)ndb) / 16 * 16;
    return nb < 16 ? 16 : nb > 512 ? 512 : (int)nb;
}

/* The pairwise-tree kernel sums the tree's nodes of at most PT_SEG products
 * for PT_NB register blocks of 8 rows x 32 columns at a time (_pt_top,
 * below); each level of the tree above those nodes holds one right-hand
 * sum for them in the job's scratch, not on the stack. */
#define PT_SEG 128
#define PT_NB 8
static int gemm_pt_levels(int kn) {
    int l = 0;
    for (int n = kn; n > PT_SEG; n -= n / 2) l++; /* the larger half, ceil(n / 2) */
    return l;
}

size_t emu__gemm_pt_scratch(int kn) {
    return 64 + (size_t)gemm_pt_levels(kn) * PT_NB * GEMM_F_ROWS * GEMM_F_COLS * sizeof(float);
}

/* The shape of a node of n <= PT_SEG products as the tree kernel sums it
 * (_pt_perfect): the depth d where q = floor(n / 2^d) lies in [4, 7] (0
 * below 8 products), and, unless every leaf has q products (n = q 2^d),
 * the leaves' starts from the model's halving, depth first, left first
 * (st[2^d] = n). Worked out once per node, not once per register block. */
typedef struct {
    int n, d, q, uniform;
    int st[PT_SEG / 4 + 1];
} gemm_pt_shape;
static void gemm_pt_shape_of(int n, gemm_pt_shape *s) {
    int d = 0;
    while ((n >> (d + 1)) >= 4) d++;
    s->n = n, s->d = d, s->q = n >> d, s->uniform = s->q << d == n;
    if (s->uniform || (1 << d) < 4) return; /* (below 4 leaves: the nested form, no starts) */
    int ns = 0, stk[8][3], sp = 1;
    stk[0][0] = 0, stk[0][1] = n, stk[0][2] = 0;
    while (sp) {
        sp--;
        const int a = stk[sp][0], b = stk[sp][1], e = stk[sp][2], m = a + (b - a) / 2;
        if (e == d) {
            s->st[ns++] = a;
            continue;
        }
        stk[sp][0] = m, stk[sp][1] = b, stk[sp][2] = e + 1, sp++;
        stk[sp][0] = a, stk[sp][1] = m, stk[sp][2] = e + 1, sp++;
    }
    s->st[ns] = n;
}

int emu__gemm_ex_digits(int emin, int mbits, int emax) {
    const int bits = (emax + 1) - (emin - mbits);
    return bits < 1 || bits > 21 ? 0 : (bits + 6) / 7;
}

int emu__gemm_ex_rows(int kn, int nda) {
    const size_t kp = gemm_exa_kp(kn), r = ((size_t)64 << 20) / (kp * (size_t)nda) / 16 * 16;
    return r < 16 ? 16 : r > 1024 ? 1024 : (int)r;
}

size_t emu__gemm_ex_scratch(int isa, int rows, int kn, int nda, int ndb) {
    if (isa != 4) return ((size_t)kn * (GEMM_F_COLS + GEMM_F_ROWS) + 8) * sizeof(double);
    const size_t kp = gemm_exa_kp(kn), rows16 = ((size_t)rows + 15) / 16 * 16;
    const size_t nb = (size_t)gemm_exa_nb(kp, ndb);
    return 64 + rows16 * kp * (size_t)nda + nb * kp * (size_t)ndb + 5 * 256 * sizeof(int32_t) + rows16 + nb;
}

#define GEMM_KERNEL_PASS 1
#define KNAME emu__gemm_kernel_generic
#define KTARGET
#include "gemm_kernel.c"
#undef GEMM_KERNEL_PASS
#undef KNAME
#undef KTARGET

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_KERNEL_PASS 2
#define KNAME emu__gemm_kernel_avx2
#define KTARGET __attribute__((target("avx2")))
#include "gemm_kernel.c"
#undef GEMM_KERNEL_PASS
#undef KNAME
#undef KTARGET

#define GEMM_KERNEL_PASS 3
#define KNAME emu__gemm_kernel_avx512
#define KTARGET __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
#include "gemm_kernel.c"
#undef GEMM_KERNEL_PASS
#undef KNAME
#undef KTARGET
#endif

/* The entry of each kernel: the instruction set's pass (3 AVX-512, 2 AVX2,
 * else the generic C one). */
#if defined(__x86_64__) && defined(__GNUC__)
#define KERNEL_ENTRY(SUFFIX, ARGS)                                                  \
    void emu__gemm_kernel##SUFFIX(int isa, const ARGS *g) {                         \
        if (isa >= 3) emu__gemm_kernel_avx512##SUFFIX(g);                           \
        else if (isa == 2) emu__gemm_kernel_avx2##SUFFIX(g);                        \
        else emu__gemm_kernel_generic##SUFFIX(g);                                   \
    }
#else
#define KERNEL_ENTRY(SUFFIX, ARGS) \
    void emu__gemm_kernel##SUFFIX(int isa, const ARGS *g) { (void)isa, emu__gemm_kernel_generic##SUFFIX(g); }
#endif
KERNEL_ENTRY(, gk_args)
KERNEL_ENTRY(_f32, gkf_args)
KERNEL_ENTRY(_f32f, gkf_args)
KERNEL_ENTRY(_grp, gkg_args)
KERNEL_ENTRY(_fs, gkf_args)
#ifdef GEMM_HAVE_AMX
void emu__gemm_kernel_ex(int isa, const gkf_args *g) { /* (isa 4: the AMX form) */
    if (isa == 4) emu__gemm_kernel_avx512_exa(g);
    else if (isa == 3) emu__gemm_kernel_avx512_ex(g);
    else if (isa == 2) emu__gemm_kernel_avx2_ex(g);
    else emu__gemm_kernel_generic_ex(g);
}
#else
KERNEL_ENTRY(_ex, gkf_args)
#endif
KERNEL_ENTRY(_pw, gkp_args)
KERNEL_ENTRY(_pt, gkf_args)

#ifdef GEMM_HAVE_AMX
/* AMX int8 tiles and AVX512-VBMI (the kernel's transposition) on the CPU,
 * and the tile state enabled by the OS (XCR0 bits 17 and 18). Decided once. */
static int amx_cpu(void) {
    static int known = -1;
    int r = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
    if (r >= 0) return r;
    unsigned a, b, c, d;
    r = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 24 & 1) && (d >> 25 & 1) && (c >> 1 & 1) &&
        __get_cpuid(1, &a, &b, &c, &d) && (c >> 27 & 1)) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        r = (lo >> 17 & 3) == 3;
    }
    __atomic_store_n(&known, r, __ATOMIC_RELEASE);
    return r;
}
#endif

int emu__gemm_amx_grant(void) {
#ifdef GEMM_HAVE_AMX
    static int known = -1;
    int r = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
    if (r >= 0) return r;
    r = amx_cpu() && syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
    __atomic_store_n(&known, r, __ATOMIC_RELEASE);
    return r;
#else
    return 0;
#endif
}

uint64_t emu__gemm_gv_blocks[3];

int emu__gemm_vnni(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

int emu__gemm_kernel_best(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw")) {
#ifdef GEMM_HAVE_AMX
        if (amx_cpu()) return 4;
#endif
        return emu__gemm_vnni() ? 4 : 3;
    }
    if (__builtin_cpu_supports("avx2")) return 2;
#endif
    return 1;
}

#else /* ---- the kernel body, compiled once per pass ------------------------- */

#ifndef GEMM_KERNEL_TYPES
#define GEMM_KERNEL_TYPES
typedef double vd __attribute__((vector_size(64)));
typedef int64_t vl __attribute__((vector_size(64)));
typedef uint64_t vul __attribute__((vector_size(64)));
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
            for (int kb = g->k0, ke; kb < g->k1; kb = ke) {
                ke = g->block < g->k1 - kb ? kb + g->block : g->k1;
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
                /* normalise and round toward zero to q bits; a zero sum is +0, as
                 * the model's is where a term is nonzero (rtz; a zero that every
                 * term had, negative, is the model's -0 only from a c of -0, which
                 * the caller recomputes): S is -0 where each cut gave -0 (trunc
                 * of a negative tiny c, above all under an emax floor) */
                #pragma GCC unroll 4
                for (int r = 0; r < RB; r++) {
                    vd v = (S[r] + vzero) * (em[r] * inv_two_nfrac);
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
 * normal range (gemm.c f32_kernel_ok and f32_data_ok: fp8, fp6, fp4 and f16
 * by their formats; bf16, tf32 and e8m0 block scales, joined into the
 * values and exponents, by the data of the call), RZ alignment and block
 * sums below 2^31, or (split) sums of each half of a block below 2^31, with
 * the lanes whose total leaves int32 flagged. The operands come
 * packed (gemm.h): A in panels of 8 rows, B in panels of 32 columns, one
 * contiguous run per k, values as floats and alignment exponents as 16-bit
 * words biased so that the sum of two is the product's biased f32 exponent
 * (a zero that takes no part: a large negative word).
 *
 * Per block of the model, for 8 rows x 32 columns: pass 1 takes emax over
 * the products on 32 word lanes (one add and one max per 32 products and
 * row), starting from the word of thr = 2^(nfrac - 126), which keeps
 * 2^(nfrac - emax) a normal float; emax as a float is the max of that and
 * c's exponent. Pass 2, per half panel of 16 columns: each term is
 * cvttps2dq((a*b) * 2^(nfrac-emax)) (exact: a*b has <= 24 bits, the scaling
 * is a power of two, the conversion truncates toward zero; an underflow
 * only hits values that truncate to 0 anyway), summed in int32 lanes after
 * c's own truncation; the block result is S * 2^(emax - nfrac) RZ to q bits.
 *
 * Range: clamping emax at thr changes nothing unless some c != 0 lies below
 * thr (min normal or zero c give emax >= 2^-126 in the model, and the
 * products' exponents are above thr). c's below thr can only be the c that
 * enters the call: a block result is 0 or at least 2^(emax - nfrac) >=
 * 2^(lo - nfrac) >= thr, which the caller guarantees (lo >= 2 nfrac - 126,
 * lo the least product exponent). Those lanes, and lanes whose c or result
 * reached inf or NaN (a running max of c's exponent bits), are flagged for
 * the caller's scalar recomputation. */
#ifndef GEMM_KERNEL_FTYPES
#define GEMM_KERNEL_FTYPES
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vfi __attribute__((vector_size(64)));
typedef uint32_t vfu __attribute__((vector_size(64)));
typedef int16_t vw __attribute__((vector_size(64)));
typedef int16_t vhw __attribute__((vector_size(32)));
typedef double vd8 __attribute__((vector_size(64)));
typedef int64_t vl8 __attribute__((vector_size(64)));
typedef int32_t vhi __attribute__((vector_size(32)));
typedef float vhf __attribute__((vector_size(32)));
typedef unsigned char vfb __attribute__((vector_size(16)));
#define FLOAD(p) ({ vf _v; memcpy(&_v, (p), sizeof _v); _v; })
#define ILOAD(p) ({ vfi _v; memcpy(&_v, (p), sizeof _v); _v; })
#define WLOAD(p) ({ vw _v; memcpy(&_v, (p), sizeof _v); _v; })
/* max of two integer vectors (a compare and a select: vpmaxsw/vpmaxsd) */
/* int32 lanes added with wrapping (unsigned: signed overflow is undefined);
 * a lane that wraps holds a c at inf or NaN (cvttps2dq's INT_MIN), flagged */
#define IADDW(a, b) ((vfi)((vfu)(a) + (vfu)(b)))
#define IMAX(a, b) ({ __typeof__(a) _a = (a), _b = (b), _m = (__typeof__(a))(_a > _b); (_a & _m) | (_b & ~_m); })
#define RBF GEMM_F_ROWS /* rows of an A panel = rows of the register block */
#define PBF GEMM_F_COLS /* columns of a B panel: two halves of 16 lanes */
#endif

/* 16 words to 16 int32 (sign-extended), max of words, max of int32 */
#undef W16TO32
#undef WMAX
#undef DMAX
#if GEMM_KERNEL_PASS == 3
#define W16TO32(p) ({ __m256i _w; memcpy(&_w, (p), 32); (vfi)_mm512_cvtepi16_epi32(_w); })
#define WMAX(a, b) ((vw)_mm512_max_epi16((__m512i)(a), (__m512i)(b)))
#define DMAX(a, b) ((vfi)_mm512_max_epi32((__m512i)(a), (__m512i)(b)))
#else
#define W16TO32(p) ({ vhw _w; memcpy(&_w, (p), sizeof _w); __builtin_convertvector(_w, vfi); })
#define WMAX(a, b) IMAX(a, b)
#define DMAX(a, b) IMAX(a, b)
#endif

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

/* The f32 kernel's (and its fused variant's) c of a register block into
 * accb (+0 where the call has none), 16 lanes at a time in a whole panel,
 * and into mxb the inf exponent where the block start cannot take the c
 * (the lane is flagged): the f32 kernel's 0 < |c| < thr, the fused
 * variant's subnormal c or -0. */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _f32_in)(const gkf_args *g, int i0, int j0, int nr, int nc,
                                                                              float accb[RBF][PBF], int32_t mxb[RBF][PBF],
                                                                              const int fused) {
    const vfi vexpm = (vfi){0} + 0x7F800000;
    const uint32_t thr_bits = (uint32_t)g->thr_w << 23;
    if (g->cin && nc == PBF) {
        /* the c's (and flags) of the next panel of these rows: eight
         * blocks from now, from memory when K is tiled (cin = out) */
        if (j0 + PBF < g->j1)
            for (int r = 0; r < nr; r++) {
                const float *nx = g->cin + (size_t)(i0 + r) * g->ldc + (size_t)(j0 + PBF);
                __builtin_prefetch(nx, 1), __builtin_prefetch(nx + 16, 1);
                __builtin_prefetch(g->flag + (size_t)(i0 + r) * g->ldo + (size_t)(j0 + PBF), 1);
            }
        for (int r = 0; r < RBF; r++)
            for (int h = 0; h < PBF; h += 16) {
                vf c = r < nr ? FLOAD(g->cin + (size_t)(i0 + r) * g->ldc + (size_t)(j0 + h)) : (vf){0};
                vfi t = fused ? (vfi)(((vfi)c & vexpm) == 0) & (vfi)((vfi)c != 0) & vexpm
                              : (vfi)((((vfu)c & 0x7FFFFFFFu) - 1u) < thr_bits - 1u) & vexpm;
                memcpy(&accb[r][h], &c, sizeof c);
                memcpy(&mxb[r][h], &t, sizeof t);
            }
    } else if (!g->cin) {
        /* c = +0 everywhere (promotion restarts each chunk from it): the
         * loop below's values, accb +0 and mxb 0, in two stores */
        memset(accb, 0, sizeof(float) * RBF * PBF);
        memset(mxb, 0, sizeof(int32_t) * RBF * PBF);
    } else {
        for (int r = 0; r < RBF; r++)
            for (int l = 0; l < PBF; l++) {
                float c = r < nr && l < nc ? g->cin[(size_t)(i0 + r) * g->ldc + (size_t)(j0 + l)] : 0.0f;
                uint32_t u;
                memcpy(&u, &c, 4);
                accb[r][l] = c;
                mxb[r][l] = (fused ? (u & 0x7F800000u) == 0 && u != 0 : (u & 0x7FFFFFFFu) - 1 < thr_bits - 1) ? 0x7F800000 : 0;
            }
    }
}

/* The f32 kernel's (and its fused variant's) outputs of a register block:
 * out, and the flag where c or the result reached the inf/NaN exponent
 * (mxb: the running max of c's exponent bits, set to it for a c that is
 * flagged from the start); 16 lanes at a time in a whole panel. */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _f32_out)(const gkf_args *g, int i0, int j0, int nr, int nc,
                                                                               float accb[RBF][PBF], int32_t mxb[RBF][PBF]) {
    const vfi vexpm = (vfi){0} + 0x7F800000;
    if (nc == PBF) {
        for (int r = 0; r < nr; r++)
            for (int h = 0; h < PBF; h += 16) {
                vf v = FLOAD(&accb[r][h]);
                vfi mx = DMAX(ILOAD(&mxb[r][h]), (vfi)v & vexpm);
                vfb bad = __builtin_convertvector(mx == vexpm, vfb) & 1;
                size_t o = (size_t)(i0 + r) * g->ldo + (size_t)(j0 + h);
                vfb f;
                memcpy(&f, g->flag + o, sizeof f);
                f |= bad;
                memcpy(g->flag + o, &f, sizeof f);
                memcpy(g->out + o, &v, sizeof v);
            }
        return;
    }
    for (int r = 0; r < nr; r++)
        for (int l = 0; l < nc; l++) {
            size_t o = (size_t)(i0 + r) * g->ldo + (size_t)(j0 + l);
            uint32_t u;
            memcpy(&u, &accb[r][l], 4);
            int32_t mx = mxb[r][l] > (int32_t)(u & 0x7F800000u) ? mxb[r][l] : (int32_t)(u & 0x7F800000u);
            g->out[o] = accb[r][l];
            g->flag[o] |= mx == 0x7F800000;
        }
}

/* The start of a block for 16 lanes of one row: emax (em: the max of the
 * products' exponent words and c's exponent, as f32 exponent bits), the
 * scale 2^(nfrac - emax) (sc), c's term truncated toward zero (S), and,
 * unless noinf, the running max of c's exponent bits (mxb) updated. */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _f32_c)(const float *accp, const int16_t *wbp, int32_t *mxp,
                                                                             vfi vscb, vfi *emo, vf *sc, vfi *S, int noinf) {
    const vfi vexpm = (vfi){0} + 0x7F800000;
    vfi emp = W16TO32(wbp) << 23;
    vf acc = FLOAD(accp);
    vfi ae = (vfi)acc & vexpm;
    if (!noinf) {
        vfi mx = ILOAD(mxp);
        mx = DMAX(ae, mx);
        memcpy(mxp, &mx, sizeof mx);
    }
    vfi em = DMAX(ae, emp);
    *sc = (vf)((vfu)vscb - (vfu)em); /* wraps by design: unsigned (signed overflow is UB) */
    *S = __builtin_convertvector(acc * *sc, vfi);
    *emo = em;
}

/* The end of a block for 16 lanes: the int32 sum S times 2^(emax - nfrac)
 * (sc's reciprocal), rounded toward zero to q bits, into dst. */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _f32_put)(vfi S, vf sc, int q, float *dst) {
    const vfi v254 = (vfi){0} + (int32_t)(254u << 23); /* em / 2^nfrac = v254 - sc (bits) */
#if GEMM_KERNEL_PASS == 3
    /* the int32 sum converted with round-toward-zero (embedded rounding: RZ
     * to 24 bits), masked to q bits, times 2^(emax - nfrac) (a power of two
     * >= 2^-126: exact unless it overflows, which the next c check flags) */
    const vfi qmask32 = (vfi){0} + (int32_t)~((UINT32_C(1) << (23 - q)) - 1);
    vf z = (vf)_mm512_cvt_roundepi32_ps((__m512i)S, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    z = (vf)((vfi)z & qmask32);
    vf v = z * (vf)(v254 - (vfi)sc);
#else
    /* the same in doubles (two halves of 8), then to float (exact, or inf
     * when it overflows) */
    const vl8 qmask = (vl8){0} + ~((INT64_C(1) << (52 - q)) - 1);
    vf emi = (vf)(v254 - (vfi)sc);
    vhi s0 = __builtin_shufflevector(S, S, 0, 1, 2, 3, 4, 5, 6, 7);
    vhi s1 = __builtin_shufflevector(S, S, 8, 9, 10, 11, 12, 13, 14, 15);
    vhf e0 = __builtin_shufflevector(emi, emi, 0, 1, 2, 3, 4, 5, 6, 7);
    vhf e1 = __builtin_shufflevector(emi, emi, 8, 9, 10, 11, 12, 13, 14, 15);
    vd8 v0 = (vd8)((vl8)__builtin_convertvector(s0, vd8) & qmask) * __builtin_convertvector(e0, vd8);
    vd8 v1 = (vd8)((vl8)__builtin_convertvector(s1, vd8) & qmask) * __builtin_convertvector(e1, vd8);
    vhf r0 = __builtin_convertvector(v0, vhf), r1 = __builtin_convertvector(v1, vhf);
    vf v = __builtin_shufflevector(r0, r1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
#endif
    memcpy(dst, &v, sizeof v);
}

#if GEMM_KERNEL_PASS == 3
/* The count pass's pair p of a block for rows rg..rg+3: the fmas of k and
 * (two) k + 1, and the count of k's and k + 1's products below the rows'
 * thresholds (a k without a pair: its second lsb byte is padding and
 * counts nothing) */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _f32_count_pair)(const float *ap, const uint8_t *alp,
                                                                                     const float *bvp, const uint8_t *blp, int kb,
                                                                                     int kp0, int p, int rg, const int two,
                                                                                     __m512 td[4][2], __m512i cnt[4],
                                                                                     const __m512i thv[4]) {
    const __m512i m1 = _mm512_set1_epi8(-1);
    const int k = kb + 2 * p;
    const __m512 b0 = _mm512_loadu_ps(bvp + (size_t)k * PBF), b1 = _mm512_loadu_ps(bvp + (size_t)k * PBF + 16);
    const __m512i wl = _mm512_loadu_si512(blp + (size_t)(kp0 + p) * 2 * PBF);
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        const __m512 a = _mm512_set1_ps(ap[(size_t)k * RBF + rg + r]);
        td[r][0] = _mm512_fmadd_round_ps(a, b0, td[r][0], _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        td[r][1] = _mm512_fmadd_round_ps(a, b1, td[r][1], _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        if (two) {
            const __m512 a2 = _mm512_set1_ps(ap[(size_t)(k + 1) * RBF + rg + r]);
            td[r][0] = _mm512_fmadd_round_ps(a2, _mm512_loadu_ps(bvp + (size_t)(k + 1) * PBF), td[r][0],
                                             _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
            td[r][1] = _mm512_fmadd_round_ps(a2, _mm512_loadu_ps(bvp + (size_t)(k + 1) * PBF + 16), td[r][1],
                                             _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        }
        int32_t la;
        memcpy(&la, alp + ((size_t)(kp0 + p) * RBF + rg + r) * 4, 4);
        const __m512i sw = _mm512_add_epi8(wl, _mm512_set1_epi32(la));
        const __mmask64 below = _mm512_cmplt_epu8_mask(sw, thv[r]);
        /* cnt -= -1 where below (written out: the compilers' merge-masked
         * subtract copied the register each time) */
        __asm__("vpsubb %[m1], %[c], %[c]%{%[k]%}" : [c] "+v"(cnt[r]) : [m1] "v"(m1), [k] "Yk"(below));
    }
}

/* The count pass (AVX-512; gemm.c f32_kernel_ok's *count: fp8, fp6 and
 * fp4 blocks of an even size at small nfrac, as h100's and ada's fp8):
 * pass 2's sum of the products cut toward zero, from one fma per 16
 * products and a count.
 *
 * With g = 2^(emax - nfrac) the model's quantum, a product p cut toward
 * zero is floor(p / g) g, or that plus g where p is negative and not a
 * multiple of g. The floors: a chain T per lane starts at T0 = 1.5 x 2^23
 * g, whose ulp is g, and fma(a, b, T) rounded toward -inf is exactly T +
 * floor(a b / g) g while T stays in [2^23 g, 2^24 g) (the fma's product is
 * exact before its one rounding; T is a multiple of g); the terms' sum
 * stays below block x (smax_a smax_b 2^nfrac + 1) < 2^22 quanta (gemm.c).
 * The count: p = a b is a multiple of g unless its lowest set bit is
 * below g, and that bit is 2^(q_a + q_b) (a = odd x 2^q_a, b = odd x 2^q_b:
 * the product of two odd numbers is odd). With the lsb bytes
 * (gemm_internal.h) the sum of a's byte and b's, mod 256, is q_a + q_b +
 * 40 (8 to 70) where p < 0, and 84 or more where p >= 0 or a factor is
 * zero; so one unsigned compare against log2(g) + 40, clamped to [0, 71],
 * finds the negative products below g: with log2(g) + 40 above 71 every
 * negative product lies below g, and below 0 none. A masked subtract of
 * -1 counts them, 64 products at a time (32 columns, a pair of k), in a
 * byte per column and k parity (at most 127 a block). Then (T - T0) / g
 * + count is exactly pass 2's sum of cvttps2dq terms, added to c's term
 * S; the block's end is common. T / g is T's significand as an integer
 * (T stays in T0's binade), so (T - T0) / g is T's fraction bits less
 * 2^22.
 *
 * T0 must be a finite float with room above it: a block where some lane's
 * emax exceeds 2^(103 + nfrac) (a c that large; products are far smaller)
 * returns 0 and takes pass 2. Four fmas and three byte instructions per 64
 * products, where pass 2 takes sixteen instructions. */
KTARGET static __attribute__((noinline)) int CAT(KNAME, _f32_count)(const gkf_args *g, const float *ap, const uint8_t *alp,
                                                                    const int8_t *axp, const float *bvp, const uint8_t *blp,
                                                                    const int8_t *bxp, int kb, int ke, float accb[RBF][PBF],
                                                                    int32_t mxb[RBF][PBF], int16_t wb[RBF][PBF], vfi vscb) {
    const int kp0 = kb / 2, npair = (ke - kb + 1) / 2; /* kb is even (gemm.c) */
    /* pass 1 on bytes: emax of the products, 64 at a time (32 columns, a
     * pair of k): a saturating add of the exponent bytes (a part that takes
     * no part, -128, keeps the sum at -113 or below, under every product's),
     * a max; then the max of the two k parities, as pass 1's words (from
     * thr), into wb */
    {
        __m512i E[RBF];
#pragma GCC unroll 8
        for (int r = 0; r < RBF; r++) E[r] = _mm512_set1_epi8(GEMM_F_XNOPART);
        for (int p = 0; p < npair; p++) {
            const __m512i bx = _mm512_loadu_si512(bxp + (size_t)(kp0 + p) * 2 * PBF);
#pragma GCC unroll 8
            for (int r = 0; r < RBF; r++) {
                int32_t ax;
                memcpy(&ax, axp + ((size_t)(kp0 + p) * RBF + r) * 4, 4);
                const __m512i t = _mm512_adds_epi8(bx, _mm512_set1_epi32(ax));
                __asm__("vpmaxsb %[t], %[e], %[e]" : [e] "+v"(E[r]) : [t] "v"(t)); /* (as the count's subtract) */
            }
        }
        const __m512i thr = _mm512_set1_epi16((short)g->thr_w), b127 = _mm512_set1_epi16(127);
#pragma GCC unroll 8
        for (int r = 0; r < RBF; r++) {
            __m512i m = _mm512_max_epi8(E[r], _mm512_srli_epi16(E[r], 8));         /* even bytes: the pair's max */
            __m512i w = _mm512_srai_epi16(_mm512_slli_epi16(m, 8), 8);             /* as signed words */
            _mm512_store_si512(wb[r], _mm512_max_epi16(_mm512_add_epi16(w, b127), thr)); /* biased, from thr */
        }
    }
    vf sc[RBF][2], t0[RBF][2];
    vfi S[RBF][2];
    uint8_t th[RBF][2 * PBF] __attribute__((aligned(64)));
    const vfi lim = (vfi){0} + (int32_t)((uint32_t)(230 + g->nfrac) << 23);
    const vfi t0o = (vfi){0} + (int32_t)(((uint32_t)(23 - g->nfrac) << 23) | 0x400000u);
    const vfi tho = (vfi){0} + (GEMM_F_LSB_BIAS - 127 - g->nfrac);
    const vfi tmax = (vfi){0} + GEMM_F_LSB_TMAX;
    vfi bad = {0};
#pragma GCC unroll 8
    for (int r = 0; r < RBF; r++)
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            vfi em;
            CAT(KNAME, _f32_c)(&accb[r][16 * h], &wb[r][16 * h], &mxb[r][16 * h], vscb, &em, &sc[r][h], &S[r][h], g->noinf);
            bad |= (vfi)(em > lim);
            t0[r][h] = (vf)((vfu)em + (vfu)t0o); /* wraps where em > lim (unsigned: the block is declined) */
            /* the count's threshold, log2(g) + 40 clamped to [0, 71], as a byte
             * for each of the column's two k parities */
            __m512i t = _mm512_min_epi32(_mm512_max_epi32((__m512i)((em >> 23) + tho), _mm512_setzero_si512()), (__m512i)tmax);
            __m256i w = _mm512_cvtepi32_epi16(t);
            _mm256_store_si256((__m256i *)&th[r][32 * h], _mm256_or_si256(w, _mm256_slli_epi16(w, 8)));
        }
    if (_mm512_test_epi32_mask((__m512i)bad, (__m512i)bad)) return 0;
#pragma GCC unroll 2
    for (int rg = 0; rg < RBF; rg += 4) {
        __m512 td[4][2];
        __m512i cnt[4], thv[4];
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            td[r][0] = (__m512)t0[rg + r][0], td[r][1] = (__m512)t0[rg + r][1];
            cnt[r] = _mm512_setzero_si512();
            thv[r] = _mm512_load_si512(th[rg + r]);
        }
        /* full pairs, then a block's odd last k alone (its second lsb byte
         * is padding, below no threshold) */
        const int nfull = (ke - kb) / 2;
        for (int p = 0; p < nfull; p++) CAT(KNAME, _f32_count_pair)(ap, alp, bvp, blp, kb, kp0, p, rg, 1, td, cnt, thv);
        if (nfull < npair) CAT(KNAME, _f32_count_pair)(ap, alp, bvp, blp, kb, kp0, nfull, rg, 0, td, cnt, thv);
        const __m512i ones = _mm512_set1_epi8(1);
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            const __m512i cw = _mm512_maddubs_epi16(cnt[r], ones); /* the column's two parities: 32 words */
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) {
                /* the chain's floors: (T - T0) / g, T's fraction bits less 2^22 */
                vfi x = ((vfi)td[r][h] & 0x7FFFFF) - 0x400000;
                vfi c = (vfi)_mm512_cvtepi16_epi32(h ? _mm512_extracti64x4_epi64(cw, 1) : _mm512_castsi512_si256(cw));
                S[rg + r][h] = IADDW(S[rg + r][h], x + c);
            }
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < RBF; r++)
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) CAT(KNAME, _f32_put)(S[r][h], sc[r][h], g->q, &accb[r][16 * h]);
    return 1;
}
#endif

/* (noinf: g->noinf as a constant, one instance each) */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _f32_body)(const gkf_args *g, const int noinf) {
    const size_t K = g->K;
    const vfi vexpm = (vfi){0} + 0x7F800000;
    const vfi vscb = (vfi){0} + (int32_t)((uint32_t)(254 + g->nfrac) << 23); /* 2^nfrac / em = scb - em (bits) */
    const vw vthr = (vw){0} + (int16_t)g->thr_w;

    for (int j0 = g->j0; j0 < g->j1; j0 += PBF) {
        const float *bvp = g->bv + (size_t)(j0 / PBF) * K * PBF;
        const int16_t *bwp = g->bw ? g->bw + (size_t)(j0 / PBF) * K * PBF : NULL; /* no words: the count pass */
        const int nc = g->j1 - j0 < PBF ? g->j1 - j0 : PBF;
        for (int i0 = g->i0; i0 < g->i1; i0 += RBF) {
            const int nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
            const float *ap = g->av + (size_t)(i0 / RBF) * K * RBF;
            const int32_t *awp = g->aw ? g->aw + (size_t)(i0 / RBF) * K * RBF : NULL;
            float accb[RBF][PBF] __attribute__((aligned(64)));
            int32_t mxb[RBF][PBF] __attribute__((aligned(64))); /* running max of c's exponent bits */
            int16_t wb[RBF][PBF] __attribute__((aligned(64)));
            CAT(KNAME, _f32_in)(g, i0, j0, nr, nc, accb, mxb, 0); /* c in */
            for (int kb = g->k0, ke; kb < g->k1; kb = ke) {
                ke = g->block < g->k1 - kb ? kb + g->block : g->k1;
#if GEMM_KERNEL_PASS == 3
                if (g->al) { /* the count pass (its own pass 1; wb filled when it declines the block) */
                    const size_t ao = gemm_f_byte_a(K, (size_t)i0, 0), bo = gemm_f_byte_b(K, (size_t)j0, 0);
                    if (CAT(KNAME, _f32_count)(g, ap, g->al + ao, g->ax + ao, bvp, g->bl + bo, g->bx + bo, kb, ke, accb, mxb, wb, vscb))
                        continue;
                } else
#endif
                {
                    /* pass 1: emax of the products as biased exponent words */
                    vw W[RBF];
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) W[r] = vthr;
                    for (int k = kb; k < ke; k++) {
                        const vw bw = WLOAD(bwp + (size_t)k * PBF);
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) {
                            vw t = bw + (vw)((vfi){0} + awp[(size_t)k * RBF + r]);
                            W[r] = WMAX(t, W[r]);
                        }
                    }
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) memcpy(wb[r], &W[r], sizeof W[r]);
                }
                /* pass 2, half panel by half panel */
                for (int h = 0; h < PBF; h += 16) {
                    vf sc[RBF];
                    vfi S[RBF];
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) {
                        vfi em;
                        CAT(KNAME, _f32_c)(&accb[r][h], &wb[r][h], &mxb[r][h], vscb, &em, &sc[r], &S[r], noinf);
                    }
                    /* split: the first half of the block (and c) in S0, the second in S;
                     * each fits int32 (gemm.c f32_kernel_ok), their sum may not */
                    const int km = g->split ? kb + (ke - kb + 1) / 2 : ke;
                    vfi S0[RBF];
                    for (int k = kb; k < km; k++) {
                        const vf bv = FLOAD(bvp + (size_t)k * PBF + h);
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) S[r] = IADDW(S[r], __builtin_convertvector((bv * ap[(size_t)k * RBF + r]) * sc[r], vfi));
                    }
                    if (g->split) {
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) S0[r] = S[r], S[r] = (vfi){0};
                        for (int k = km; k < ke; k++) {
                            const vf bv = FLOAD(bvp + (size_t)k * PBF + h);
#pragma GCC unroll 8
                            for (int r = 0; r < RBF; r++) S[r] = IADDW(S[r], __builtin_convertvector((bv * ap[(size_t)k * RBF + r]) * sc[r], vfi));
                        }
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) {
                            /* wrapping add (unsigned); it overflowed where both halves share a
                             * sign the sum lacks: those lanes go to the scalar model */
                            vfi s = (vfi)((vfu)S0[r] + (vfu)S[r]);
                            vfi ovf = (~(S0[r] ^ S[r]) & (S0[r] ^ s)) >> 31;
                            vfi mx = ILOAD(&mxb[r][h]);
                            mx = DMAX(mx, ovf & vexpm);
                            memcpy(&mxb[r][h], &mx, sizeof mx);
                            S[r] = s;
                        }
                    }
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) CAT(KNAME, _f32_put)(S[r], sc[r], g->q, &accb[r][h]);
                }
            }
            /* out, and the flag where c or the result reached inf or NaN (or c was tiny) */
            CAT(KNAME, _f32_out)(g, i0, j0, nr, nc, accb, mxb);
        }
    }
}
KTARGET static void CAT(KNAME, _f32)(const gkf_args *g) {
    if (g->noinf) CAT(KNAME, _f32_body)(g, 1);
    else CAT(KNAME, _f32_body)(g, 0);
}
/* ---- the f32 kernel's fused variant: AMD CDNA3's two-stage block ----------
 * The model (mma.c fused_sum, fuse_nfrac > 0: the mi300's f16, bf16, xf32
 * and fp8): per block, the products alone (c takes no part) are cut toward
 * zero at 2^(ep - nfrac), ep their emax, and summed exactly into S (split =
 * 2, fp8: the even and the odd products so, each at its own emax, and each
 * half's sum cut toward zero to the larger emax ep, then added); then, with E = max(ep, c's exponent) (ep alone for a zero c; c's
 * exponent alone when no product takes part), S * 2^(ep - nfrac) is cut to
 * the quantum 2^(E - fuse_nfrac) and c to 2^(E - nfrac), both toward -inf
 * (fuse_rd; toward zero otherwise), the two added exactly and rounded to
 * nearest-even in f32; blocks chain through that result.
 *
 * Here pass 1 and pass 2 are the f32 kernel's with c left out: emax over
 * the products as exponent words from thr = 2^(nfrac - 126) (which keeps
 * 2^(nfrac - ep) a normal float, and which no product that is not zero
 * reaches: gemm.c f32_range_ok, lo > nfrac - 126; so a word above thr
 * means a product takes part, and then the clamp changed nothing), each
 * term cvttps2dq((a*b) * 2^(nfrac - ep)) (exact as in the f32 kernel),
 * summed in int32 (gemm.c fused_kernel_ok: B terms below 2^(nfrac+2) fit).
 * With split, two emax and two sums, one per half; each half's sum is cut
 * to the larger emax by a logical shift of its magnitude (exact: the
 * model's toward-zero cut), and the two added (still below 2^31).
 *
 * The epilogue, general case, per lane in doubles: E's exponent field is
 * the max of ep's field (0 where no product takes part) and c's (0 for a
 * zero c); Y = floor(S * 2^(ep - nfrac - E + fuse_nfrac)) and Cq =
 * floor(c * 2^(nfrac - E)), each the conversion of an exact integer or
 * float to double, times a power of two built from its exponent field (E
 * between 2^-127 and 2^128: every scale a normal double), so exact, then
 * one floor (or trunc): exact. Both are integers: |Y| <= 2^31 *
 * 2^(fuse_nfrac - nfrac) and |Cq| <= 2^(nfrac+1), so T = Y + Cq *
 * 2^(fuse_nfrac - nfrac) is an integer below 2^52 (fused_kernel_ok), exact
 * in double, as is T * 2^(E - fuse_nfrac) (a power of two, T >= 1 or 0,
 * far inside double's range). That exact value is the model's sum; its one
 * conversion to float rounds to nearest-even (AVX-512: explicitly;
 * SSE2/AVX2: the default MXCSR mode, as every f32 operation of the library
 * assumes), and that is the model's rounding where the result is a normal
 * float.
 *
 * The fast path, taken for 16 lanes at once where in each a product takes
 * part and ep - 100 <= c's exponent <= ep + w (or c = +0 everywhere: the
 * call's first block without cin), w = fuse_nfrac - nfrac where nfrac >=
 * 23, else 0: there E - ep <= fuse_nfrac - nfrac, so the cut of the sum (a
 * multiple of 2^(ep - nfrac)) at 2^(E - fuse_nfrac) is a no-op, and c's
 * cut at 2^(E - nfrac) equals its cut at 2^(ep - nfrac) (for E = ep the
 * same; for E > ep, which needs nfrac >= 23, both are no-ops, c's last bit
 * being at 2^(E - 23) >= 2^(E - nfrac); below 23 fraction bits the model
 * cuts such a c, which the general case does). So the model's sum
 * is (S + floor(c * 2^(nfrac - ep))) * 2^(ep - nfrac): c * 2^(nfrac - ep) is
 * an exact f32 product (for a normal c, between 2^(nfrac - 100) and
 * 2^(fuse_nfrac + 1); a zero c gives 0; a subnormal c is in a flagged lane),
 * its floor exact; that integer (at most 2^(fuse_nfrac + 1) <= 2^51) plus S
 * (below 2^31) is exact in double, its conversion to float is the one
 * rounding to nearest-even, and the times
 * 2^(ep - nfrac) (>= 2^-126: thr) is exact unless it overflows (inf,
 * flagged). A product-less lane may not take it: there E is c's exponent,
 * which may lie below thr, and c must not be cut at 2^(thr - nfrac).
 *
 * A zero T is +0, the model's zero whenever a term is nonzero or c is +0
 * (T is -0 only if both of its parts are: in the general case Cq = 0
 * needs c = 0 or E = ep > c's exponent, and then Y = S * 2^(fuse_nfrac -
 * nfrac) is exact, -0 never; in the fast path S converts to +0). A c of -0
 * or a subnormal c coming in is flagged (its zero sign and its exponent
 * emin), as are, in the general case, results of magnitude at most 2^-126
 * (a guard: with products at 2^lo or above, lo >= 2 nfrac - 124
 * (f32_range_ok), a nonzero result is at least 2^(lo - fuse_nfrac), and
 * without products it is c) and results or c's at inf or NaN (the running
 * max of exponent fields; an inf or NaN c never takes the fast path, its
 * exponent being outside the window); flagged lanes are recomputed on the
 * scalar model by the caller.
 * No other rounding happens, so every instruction set gives the same bits. */
#undef FZ_RD
#undef FZ_RZ
#if GEMM_KERNEL_PASS == 1
#define FZ_RD(x) ({ vd8 _x = (x), _r; for (int _l = 0; _l < 8; _l++) _r[_l] = __builtin_floor(_x[_l]); _r; })
#define FZ_RZ(x) ({ vd8 _x = (x), _r; for (int _l = 0; _l < 8; _l++) _r[_l] = __builtin_trunc(_x[_l]); _r; })
#else
#define FZ_RD(x) VFLOOR(x)
#define FZ_RZ(x) VTRUNC(x)
#endif
#undef FZ_CVTF
#undef FZ_PD_F
#undef FZ_PD_I
#undef FZ_JOIN
#if GEMM_KERNEL_PASS == 3
/* half x (0: lanes 0-7, 1: 8-15) of 16 floats or int32 as 8 doubles; two halves of 8 floats joined */
#define FZ_PD_F(v, x) ((vd8)_mm512_cvtps_pd((x) ? (__m256)_mm512_extractf64x4_pd((__m512d)(v), 1) : _mm512_castps512_ps256((__m512)(v))))
#define FZ_PD_I(v, x) ((vd8)_mm512_cvtepi32_pd((x) ? _mm512_extracti64x4_epi64((__m512i)(v), 1) : _mm512_castsi512_si256((__m512i)(v))))
#define FZ_JOIN(a, b) ((vf)_mm512_insertf64x4(_mm512_castpd256_pd512((__m256d)(a)), (__m256d)(b), 1))
#else
#define FZ_PD_F(v, x) ({ vf _v = (v); vhf _h; memcpy(&_h, (char *)&_v + 32 * (x), 32); __builtin_convertvector(_h, vd8); })
#define FZ_PD_I(v, x) ({ vfi _v = (v); vhi _h; memcpy(&_h, (char *)&_v + 32 * (x), 32); __builtin_convertvector(_h, vd8); })
#define FZ_JOIN(a, b) __builtin_shufflevector((a), (b), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#endif
#undef FZ_RDF
#undef FZ_RZF
#if GEMM_KERNEL_PASS == 3
#define FZ_RDF(x) ((vf)_mm512_roundscale_ps((__m512)(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))
#define FZ_RZF(x) ((vf)_mm512_roundscale_ps((__m512)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#elif GEMM_KERNEL_PASS == 2
#define FZ_RDF(x) ({ vf _x = (x), _r; __m256 _lo, _hi; memcpy(&_lo, &_x, 32); memcpy(&_hi, (char *)&_x + 32, 32);  \
                     _lo = _mm256_round_ps(_lo, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);                  \
                     _hi = _mm256_round_ps(_hi, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);                  \
                     memcpy(&_r, &_lo, 32); memcpy((char *)&_r + 32, &_hi, 32); _r; })
#define FZ_RZF(x) ({ vf _x = (x), _r; __m256 _lo, _hi; memcpy(&_lo, &_x, 32); memcpy(&_hi, (char *)&_x + 32, 32);  \
                     _lo = _mm256_round_ps(_lo, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);                     \
                     _hi = _mm256_round_ps(_hi, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);                     \
                     memcpy(&_r, &_lo, 32); memcpy((char *)&_r + 32, &_hi, 32); _r; })
#else
#define FZ_RDF(x) ({ vf _x = (x), _r; for (int _l = 0; _l < 16; _l++) _r[_l] = __builtin_floorf(_x[_l]); _r; })
#define FZ_RZF(x) ({ vf _x = (x), _r; for (int _l = 0; _l < 16; _l++) _r[_l] = __builtin_truncf(_x[_l]); _r; })
#endif
#undef FZ_ALL
#if GEMM_KERNEL_PASS == 3
#define FZ_ALL(m) (_mm512_movepi32_mask((__m512i)(m)) == 0xFFFF)
#elif GEMM_KERNEL_PASS == 2
#define FZ_ALL(m) ({ vfi _m = (m); __m256i _a, _b; memcpy(&_a, &_m, 32); memcpy(&_b, (char *)&_m + 32, 32); \
                     _mm256_movemask_ps((__m256)_mm256_and_si256(_a, _b)) == 0xFF; })
#else
#define FZ_ALL(m) ({ vfi _m = (m); int32_t _all = -1; for (int _l = 0; _l < 16; _l++) _all &= _m[_l]; _all != 0; })
#endif
#if GEMM_KERNEL_PASS == 3
#define FZ_CVTF(v) ((vhf)_mm512_cvt_roundpd_ps((__m512d)(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#else
#define FZ_CVTF(v) __builtin_convertvector((v), vhf)
#endif

KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _f32f_body)(const gkf_args *g, const int rd,
                                                                                 const int split) {
    const size_t K = g->K;
    const int nf = g->nfrac, ff = g->fuse_nfrac;
    const vfi vexpm = (vfi){0} + 0x7F800000;
    const vfi vscb = (vfi){0} + (int32_t)((uint32_t)(254 + nf) << 23); /* 2^nfrac / 2^ep = scb - ep (bits) */
    const vw vthr = (vw){0} + (int16_t)g->thr_w;
    const vfi vthrb = (vfi){0} + (int32_t)((uint32_t)g->thr_w << 23);
    /* exponent fields (bias 1023) of s3 = 2^(E - ff): E's f32 field + k3; of
     * s1 = 2^(ep - nf - E + ff): ep's - E's + k1; s2 = 2^(nf - E) as bits: k2 - s3's */
    const vfi k3 = (vfi){0} + (1023 - 127 - ff), k1 = (vfi){0} + (1023 + ff - nf);
    const vl8 k2 = (vl8){0} + (int64_t)((uint64_t)(2046 + nf - ff) << 52);
    const vd8 cfac = (vd8){0} + __builtin_ldexp(1.0, ff - nf);
    const vfu tinyb = (vfu){0} + 0x00800000u;
    /* the fast path's window: c's exponent - ep in [-100, fuse_nfrac - nfrac],
     * or [-100, 0] where nfrac < 23 (c's cut at 2^(E - nfrac) then acts) */
    const vfu vfast = (vfu){0} + ((uint32_t)(100 + (nf >= 23 ? ff - nf : 0)) << 23);
    const vfi v254 = (vfi){0} + (int32_t)(254u << 23); /* 2^ep / 2^nfrac = v254 - sc (bits) */

    for (int j0 = g->j0; j0 < g->j1; j0 += PBF) {
        const float *bvp = g->bv + (size_t)(j0 / PBF) * K * PBF;
        const int16_t *bwp = g->bw ? g->bw + (size_t)(j0 / PBF) * K * PBF : NULL; /* no words: the count pass */
        const int nc = g->j1 - j0 < PBF ? g->j1 - j0 : PBF;
        for (int i0 = g->i0; i0 < g->i1; i0 += RBF) {
            const int nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
            const float *ap = g->av + (size_t)(i0 / RBF) * K * RBF;
            const int32_t *awp = g->aw ? g->aw + (size_t)(i0 / RBF) * K * RBF : NULL;
            float accb[RBF][PBF] __attribute__((aligned(64)));
            int32_t mxb[RBF][PBF] __attribute__((aligned(64))); /* running max of c's exponent bits */
            int16_t wb[RBF][PBF] __attribute__((aligned(64))), wb2[split ? RBF : 1][PBF] __attribute__((aligned(64)));
            CAT(KNAME, _f32_in)(g, i0, j0, nr, nc, accb, mxb, 1); /* c in */
            for (int kb = g->k0, ke; kb < g->k1; kb = ke) {
                ke = g->block < g->k1 - kb ? kb + g->block : g->k1;
                const int c0 = kb == g->k0 && !g->cin; /* c = +0 in every lane */
                /* pass 1: emax of the products as biased exponent words (from thr);
                 * split: of the even products (from the block start) in W, the odd in W2 */
                vw W[RBF], W2[RBF];
#pragma GCC unroll 8
                for (int r = 0; r < RBF; r++) W[r] = W2[r] = vthr;
                for (int k = kb; k < ke; k++) {
                    const vw bw = WLOAD(bwp + (size_t)k * PBF);
                    if (split && (k - kb) & 1) {
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) W2[r] = WMAX(bw + (vw)((vfi){0} + awp[(size_t)k * RBF + r]), W2[r]);
                    } else {
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) W[r] = WMAX(bw + (vw)((vfi){0} + awp[(size_t)k * RBF + r]), W[r]);
                    }
                }
#pragma GCC unroll 8
                for (int r = 0; r < RBF; r++) {
                    memcpy(wb[r], &W[r], sizeof W[r]);
                    if (split) memcpy(wb2[r], &W2[r], sizeof W2[r]);
                }
                /* pass 2, half panel by half panel: the products alone */
                for (int h = 0; h < PBF; h += 16) {
                    vf sc[RBF];
                    vfi S[RBF];
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) {
                        vfi emp = W16TO32(&wb[r][h]) << 23;
                        sc[r] = (vf)((vfu)vscb - (vfu)emp);
                        S[r] = (vfi){0};
                    }
                    if (!split) {
                        for (int k = kb; k < ke; k++) {
                            const vf bv = FLOAD(bvp + (size_t)k * PBF + h);
#pragma GCC unroll 8
                            for (int r = 0; r < RBF; r++) S[r] = IADDW(S[r], __builtin_convertvector((bv * ap[(size_t)k * RBF + r]) * sc[r], vfi));
                        }
                    } else {
                        /* the odd products at their own emax, in S2; then each half
                         * cut toward zero to the larger emax (the model's align RZ)
                         * and added: exact, |S| < block * 2^(nfrac+2) */
                        vf sc2[RBF];
                        vfi S2[RBF];
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) {
                            sc2[r] = (vf)((vfu)vscb - (vfu)(W16TO32(&wb2[r][h]) << 23));
                            S2[r] = (vfi){0};
                        }
                        for (int k = kb; k < ke; k++) {
                            const vf bv = FLOAD(bvp + (size_t)k * PBF + h);
                            if ((k - kb) & 1) {
#pragma GCC unroll 8
                                for (int r = 0; r < RBF; r++) S2[r] = IADDW(S2[r], __builtin_convertvector((bv * ap[(size_t)k * RBF + r]) * sc2[r], vfi));
                            } else {
#pragma GCC unroll 8
                                for (int r = 0; r < RBF; r++) S[r] = IADDW(S[r], __builtin_convertvector((bv * ap[(size_t)k * RBF + r]) * sc[r], vfi));
                            }
                        }
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) {
                            vfi e0 = W16TO32(&wb[r][h]), e1 = W16TO32(&wb2[r][h]), em = DMAX(e0, e1);
                            vfi d0 = em - e0, d1 = em - e1;
                            vfi b0 = (vfi)(d0 > 31), b1 = (vfi)(d1 > 31); /* shifts of 31 or more: 0 */
                            d0 = (d0 & ~b0) | (b0 & 31), d1 = (d1 & ~b1) | (b1 & 31);
                            vfi m0 = S[r] >> 31, m1 = S2[r] >> 31; /* toward zero: magnitude shifted, sign back */
                            vfi t0 = (vfi)((vfu)((S[r] ^ m0) - m0) >> (vfu)d0), t1 = (vfi)((vfu)((S2[r] ^ m1) - m1) >> (vfu)d1);
                            S[r] = ((t0 ^ m0) - m0) + ((t1 ^ m1) - m1);
                            sc[r] = (vf)((vfu)vscb - (vfu)(em << 23));
                        }
                    }
                    /* the fused epilogue */
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) {
                        vf c = FLOAD(&accb[r][h]), v;
                        vfi cb = (vfi)c & vexpm;
                        vfi emp = (vfi)((vfu)vscb - (vfu)sc[r]);      /* ep's f32 field (thr at least) */
                        vf inv = (vf)((vfu)v254 - (vfu)sc[r]);        /* 2^(ep - nfrac) */
                        vfu dd = (vfu)(cb - emp) + (100u << 23);       /* (c's exponent - ep + 100) << 23 */
                        /* the fast path where in every lane a product takes part and dd is in
                         * the window; or the block is the call's first and c = +0 everywhere */
#if GEMM_KERNEL_PASS == 3
                        const __mmask16 kp = _mm512_cmpgt_epi32_mask((__m512i)emp, (__m512i)vthrb);
#define FZ_FAST(lim) ((uint16_t)_mm512_mask_cmple_epu32_mask(kp, (__m512i)dd, (__m512i)(lim)) == 0xFFFF)
#else
                        const vfi pp = (vfi)(emp > vthrb);
#define FZ_FAST(lim) FZ_ALL(pp & (vfi)(dd <= (lim)))
#endif
                        if (c0 || FZ_FAST(vfast)) {
                            /* the fast path: T = S + cut(c * 2^(nfrac - ep)) in doubles */
                            vf xc = c * sc[r];
                            xc = rd ? FZ_RDF(xc) : FZ_RZF(xc);
                            vhf o0 = FZ_CVTF(FZ_PD_F(xc, 0) + FZ_PD_I(S[r], 0)), o1 = FZ_CVTF(FZ_PD_F(xc, 1) + FZ_PD_I(S[r], 1));
                            v = FZ_JOIN(o0, o1) * inv;
                        } else {
                            /* the general case: E, both cuts, in doubles */
                            vfi Eb = DMAX(emp & (vfi)(emp > vthrb), cb);
                            vfi f3 = (Eb >> 23) + k3, f1 = ((emp - Eb) >> 23) + k1;
                            vhf o[2];
#pragma GCC unroll 2
                            for (int x = 0; x < 2; x++) {
                                vhi sx, f3x, f1x;
                                vhf cx;
                                if (x == 0) {
                                    sx = __builtin_shufflevector(S[r], S[r], 0, 1, 2, 3, 4, 5, 6, 7);
                                    f3x = __builtin_shufflevector(f3, f3, 0, 1, 2, 3, 4, 5, 6, 7);
                                    f1x = __builtin_shufflevector(f1, f1, 0, 1, 2, 3, 4, 5, 6, 7);
                                    cx = __builtin_shufflevector(c, c, 0, 1, 2, 3, 4, 5, 6, 7);
                                } else {
                                    sx = __builtin_shufflevector(S[r], S[r], 8, 9, 10, 11, 12, 13, 14, 15);
                                    f3x = __builtin_shufflevector(f3, f3, 8, 9, 10, 11, 12, 13, 14, 15);
                                    f1x = __builtin_shufflevector(f1, f1, 8, 9, 10, 11, 12, 13, 14, 15);
                                    cx = __builtin_shufflevector(c, c, 8, 9, 10, 11, 12, 13, 14, 15);
                                }
                                vl8 b3 = __builtin_convertvector(f3x, vl8) << 52;
                                vd8 s1 = (vd8)(__builtin_convertvector(f1x, vl8) << 52), s2 = (vd8)(k2 - b3);
                                vd8 xs = __builtin_convertvector(sx, vd8) * s1, xc = __builtin_convertvector(cx, vd8) * s2;
                                vd8 Y = rd ? FZ_RD(xs) : FZ_RZ(xs), Cq = rd ? FZ_RD(xc) : FZ_RZ(xc);
                                vd8 T = Y + Cq * cfac;
                                o[x] = FZ_CVTF(T * (vd8)b3);
                            }
                            v = FZ_JOIN(o[0], o[1]);
                            /* flags: c at inf or NaN (only this path sees them: their
                             * exponent is outside the fast path's window), a tiny result */
                            vfi tiny = (vfi)(((vfu)v & 0x7FFFFFFFu) - 1u < tinyb); /* magnitude in (0, 2^-126] */
                            vfi mx = DMAX(ILOAD(&mxb[r][h]), cb);
                            mx = DMAX(mx, tiny & vexpm);
                            memcpy(&mxb[r][h], &mx, sizeof mx);
                        }
#undef FZ_FAST
                        memcpy(&accb[r][h], &v, sizeof v);
                    }
                }
            }
            /* out, and the flag where c or the result reached inf or NaN (or was flagged) */
            CAT(KNAME, _f32_out)(g, i0, j0, nr, nc, accb, mxb);
        }
    }
}

KTARGET static void CAT(KNAME, _f32f)(const gkf_args *g) {
    if (g->fuse_split) {
        if (g->fuse_rd) CAT(KNAME, _f32f_body)(g, 1, 1);
        else CAT(KNAME, _f32f_body)(g, 0, 1);
    } else {
        if (g->fuse_rd) CAT(KNAME, _f32f_body)(g, 1, 0);
        else CAT(KNAME, _f32f_body)(g, 0, 0);
    }
}

/* ---- c in and results out, 16 lanes of a row at a time --------------------
 * (the group, fma-chain, exact-sum and pairwise-tree kernels) */
/* c of row i, columns j .. j + 16 of which the first n are real (the rest,
 * and all of them without cin, +0) */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _c16)(vf *c, const float *cin, size_t ldc, int i, int j,
                                                                           int n) {
    *c = (vf){0};
    if (!cin) return;
    const float *src = cin + (size_t)i * ldc + (size_t)j;
    if (n >= 16) memcpy(c, src, sizeof *c);
    else
        for (int l = 0; l < n; l++) (*c)[l] = src[l];
}

/* v to out (row i, columns j .. j + min(n, 16)), and the flag OR-ed with 1
 * where a lane of bad is set or v is inf or NaN (a guard: the fma-chain,
 * exact-sum and tree kernels make no NaN from finite inputs, and inf is
 * the model's inf; a NaN would take the scalar model's encoding) */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _out16)(float *out, unsigned char *flag, size_t ldo, int i,
                                                                             int j, int n, const vf *vp, const vfi *bad) {
    const vfi vexpm = (vfi){0} + 0x7F800000;
    const vf v = *vp;
    const vfb b8 = __builtin_convertvector((*bad != 0) | (((vfi)v & vexpm) == vexpm), vfb) & 1;
    const size_t o = (size_t)i * ldo + (size_t)j;
    if (n >= 16) {
        vfb f;
        memcpy(&f, flag + o, sizeof f);
        f |= b8;
        memcpy(flag + o, &f, sizeof f);
        memcpy(out + o, &v, sizeof v);
        return;
    }
    for (int l = 0; l < n; l++) out[o + (size_t)l] = v[l], flag[o + (size_t)l] |= b8[l];
}

/* ---- the group kernel: block-scaled e2m1 with the group rule (NVFP4) --------
 * The model (mma.c group_term, block_sum): per block of `block` elements
 * from the chunk start, one term per group of `group` (the scale block):
 * the exact sum G of the group's e2m1 products (multiples of 1/4 of
 * magnitude at most 16 * 36) times the product of its two scale
 * magnitudes, with the scales' exponent sum as its alignment exponent (a
 * zero group counts too); c's exponent (a zero c at 2^-126 when zero_c);
 * every term cut toward zero at 2^(emax - nfrac), summed exactly,
 * normalised and cut toward zero to q bits.
 *
 * Here: G in f32 lanes (every partial sum a multiple of 1/4 below 2^10:
 * exact, so an fma and a multiply then add give the same), G * (sa * sb)
 * in f32 (scales of at most 4 bits and |E| <= 15, gemm.c group_kernel_ok:
 * at most 20 bits, in f32's normal range), times 2^(nfrac - emax) in f32
 * too (emax is at least the least Ea + Eb >= -30 and at most c's 127, so
 * the power is a normal float): the term is exact, or below 2^-126 where
 * it cuts to 0 anyway. Each term is cut toward zero as it leaves f32: to
 * int64 by vcvttps2qq on AVX-512, widened to double and truncated on the
 * other levels (terms below 2^(nfrac + 12); group_kernel_ok keeps a
 * block's sum below 2^53, so int64 and double sums are the same exact
 * integer). c's term is cut in double (2^(nfrac - emax) can leave f32's
 * range in wide mode). emax is known before the sums (it depends on the
 * scales and c only). A sum of zero is +0, as the model's (its group terms
 * count as nonzero: anynz). The result is exact in f32 unless it leaves
 * f32's normal range: those lanes are flagged for the scalar model.
 *
 * Scale blocks may hold several groups (MX: 32 elements, groups of 16): a
 * group's scales are those of the block it starts in, as in the model.
 * Wide mode (e8m0 scales, powers of two up to 2^+-127, which f32 cannot
 * multiply): the scales' magnitudes are not read; each group sum G (exact,
 * as above) is multiplied by 2^(nfrac - emax + Ea + Eb), whose exponent is
 * at most nfrac (emax >= Ea + Eb); below -126 the term cuts to 0 (|G| <
 * 2^10), and the factor is taken as 2^-126, which cuts it to 0 as well.
 * Every term is then below 2^(nfrac + 10). */
#undef GTRUNC
#if GEMM_KERNEL_PASS == 1
#define GTRUNC(x) ({ vd _x = (x), _r; for (int _l = 0; _l < 8; _l++) _r[_l] = __builtin_trunc(_x[_l]); _r; })
#else
#define GTRUNC(x) VTRUNC(x)
#endif
/* The block's sums: int64 lanes on AVX-512 (each f32 term cut toward zero
 * by one vcvttps2qq), doubles elsewhere (the term widened, then cut); the
 * same integers either way (below 2^53). GTERM: 8 f32 terms to sum lanes;
 * GFROMD: an integral double to sum lanes; GTOD: sum lanes to double. */
#undef GACC
#undef GTERM
#undef GFROMD
#undef GTOD
#undef GADD
#if GEMM_KERNEL_PASS == 3
#define GACC vl
/* (wrapping: a lane whose c is inf or NaN converts to INT64_MIN and is
 * flagged; its sum must not be signed overflow) */
#define GADD(s, t) ((vl)((vul)(s) + (vul)(t)))
#define GTERM(t) ((vl)_mm512_cvttps_epi64((__m256)(t)))
#define GFROMD(d) ((vl)_mm512_cvttpd_epi64((__m512d)(d)))
#define GTOD(s) ((vd)_mm512_cvtepi64_pd((__m512i)(s)))
#else
#define GACC vd
#define GADD(s, t) ((s) + (t))
#define GTERM(t) GTRUNC(__builtin_convertvector((t), vd))
#define GFROMD(d) (d)
#define GTOD(s) ((s) + 0.0)
#endif

/* The group kernel's register block, both forms: its rows' scales (a row
 * past the last takes the first's), c in accb (bad cleared), and out. */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _grp_rows)(const gkg_args *g, int i0, int nr, const float **sav,
                                                                                const int32_t **sae) {
#pragma GCC unroll 8
    for (int r = 0; r < RBF; r++) {
        size_t ii = (size_t)(i0 + (r < nr ? r : 0));
        sav[r] = g->sav + ii * g->nsb, sae[r] = g->sae + ii * g->nsb;
    }
}
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _grp_in)(const gkg_args *g, int i0, int j0, int h, int nr, int nc,
                                                                              float (*accb)[16], vfi *bad) {
    for (int r = 0; r < RBF; r++) {
        vf c;
        CAT(KNAME, _c16)(&c, r < nr ? g->cin : NULL, g->ldc, i0 + r, j0 + h, nc - h);
        memcpy(accb[r], &c, sizeof c);
        bad[r] = (vfi){0};
    }
}
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _grp_out)(const gkg_args *g, int i0, int j0, int h, int nr, int nc,
                                                                               float (*accb)[16], vfi *bad) {
    /* (an inf or NaN result is in bad already: outside the normal range) */
    for (int r = 0; r < nr; r++) {
        const vf v = FLOAD(accb[r]);
        CAT(KNAME, _out16)(g->out, g->flag, g->ldo, i0 + r, j0 + h, nc - h, &v, &bad[r]);
    }
}

/* A block's result from its exact value v (two halves of 8 doubles), both
 * forms: cut toward zero to q bits (v's low bits masked), as f32 into acc;
 * the lanes that leave f32's normal range (0 < |v| < 2^-126, |v| >= 2^128)
 * OR-ed into bad. */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _grp_store)(const gkg_args *g, vd v0, vd v1, float *acc, vfi *bad) {
    const vl qmask = (vl){0} + ~((INT64_C(1) << (52 - g->q)) - 1), absm = (vl){0} + INT64_C(0x7FFFFFFFFFFFFFFF);
    const vl lo_b = (vl){0} + INT64_C(0x3810000000000000), hi_b = (vl){0} + INT64_C(0x47F0000000000000); /* 2^-126, 2^128 */
    const vd v[2] = {v0, v1};
    vhf o[2];
    vl bl[2];
    for (int x = 0; x < 2; x++) {
        const vd w = (vd)((vl)v[x] & qmask);
        const vl a = (vl)w & absm;
        bl[x] = ((a != 0) & (a < lo_b)) | (a >= hi_b);
        o[x] = __builtin_convertvector(w, vhf);
    }
    const vf of = __builtin_shufflevector(o[0], o[1], 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    memcpy(acc, &of, sizeof of);
    const vhi b0 = __builtin_convertvector(bl[0], vhi), b1 = __builtin_convertvector(bl[1], vhi);
    *bad |= __builtin_shufflevector(b0, b1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* One block [kb, ke) of the group kernel for a register block of RBF rows
 * and the 16 columns from jh (h within B's panel bvp; A's panel ap, the
 * rows' scales sav/sae): c in accb, the block's result back in accb, and
 * the lanes that leave f32's normal range OR-ed into bad. Gi: the block's
 * group sums already formed (the integer form's, group x at Gi[x]; bvp
 * and ap unread), or NULL. */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _grp_block)(const gkg_args *g, const float *bvp, const float *ap,
                                                                                 size_t jh, int h, int kb, int ke,
                                                                                 const float *const *sav, const int32_t *const *sae,
                                                                                 float (*accb)[16], vfi *bad, const vf (*Gi)[RBF]) {
    const vfi cz = (vfi){0} + (g->zero_c ? -126 : -100000); /* a zero c's exponent (-100000: takes no part) */
    /* emax: c's exponent (emin for a subnormal), the groups' scale exponents */
    vfi emax[RBF];
#pragma GCC unroll 8
    for (int r = 0; r < RBF; r++) {
        vfi cb = ILOAD(accb[r]);
        vfi ex = (cb >> 23) & 0xFF;
        vfi ec = ex - 127 + (vfi)((ex == 0) & 1);
        vfi isz = (vfi)((cb & 0x7FFFFFFF) == 0);
        emax[r] = (cz & isz) | (ec & ~isz);
    }
    for (int gs = kb; gs < ke; gs += g->group) {
        const size_t sg = (size_t)gs / (size_t)g->sblock;
        const vfi sbe = ILOAD(g->sbe + sg * g->ldsb + jh);
#pragma GCC unroll 8
        for (int r = 0; r < RBF; r++) emax[r] = DMAX(emax[r], sbe + sae[r][sg]);
    }
    /* 2^(nfrac - emax) (as doubles in two halves of 8, and as floats: an
     * exponent in [nfrac - 127, nfrac + 30] without wide) and c's cut
     * term, in double */
    vd sc[RBF][2];
    GACC S[RBF][2];
    vfi ebase[RBF];
    vf scf[RBF];
#pragma GCC unroll 8
    for (int r = 0; r < RBF; r++) {
        ebase[r] = g->nfrac - emax[r];
        vfi e = ebase[r] + 1023;
        scf[r] = (vf)((vfi)((vfu)(ebase[r] + 127) << 23));
        vf c = FLOAD(accb[r]);
        vhi e0 = __builtin_shufflevector(e, e, 0, 1, 2, 3, 4, 5, 6, 7);
        vhi e1 = __builtin_shufflevector(e, e, 8, 9, 10, 11, 12, 13, 14, 15);
        vhf c0 = __builtin_shufflevector(c, c, 0, 1, 2, 3, 4, 5, 6, 7);
        vhf c1 = __builtin_shufflevector(c, c, 8, 9, 10, 11, 12, 13, 14, 15);
        sc[r][0] = (vd)(__builtin_convertvector(e0, vl) << 52);
        sc[r][1] = (vd)(__builtin_convertvector(e1, vl) << 52);
        S[r][0] = GFROMD(GTRUNC(__builtin_convertvector(c0, vd) * sc[r][0]));
        S[r][1] = GFROMD(GTRUNC(__builtin_convertvector(c1, vd) * sc[r][1]));
    }
    for (int gs = kb, ge; gs < ke; gs = ge) {
        ge = g->group < ke - gs ? gs + g->group : ke;
        const size_t sg = (size_t)gs / (size_t)g->sblock;
        vf G[RBF];
#pragma GCC unroll 8
        for (int r = 0; r < RBF; r++) G[r] = Gi ? Gi[(gs - kb) / g->group][r] : (vf){0};
        for (int k = gs; !Gi && k < ge; k++) {
            const vf bv = FLOAD(bvp + (size_t)k * PBF + h);
#pragma GCC unroll 8
            for (int r = 0; r < RBF; r++) {
#if GEMM_KERNEL_PASS == 3
                /* one fma: the same value as the product and the sum, both exact */
                G[r] = (vf)_mm512_fmadd_ps((__m512)bv, _mm512_set1_ps(ap[(size_t)k * RBF + r]), (__m512)G[r]);
#else
                G[r] += bv * ap[(size_t)k * RBF + r];
#endif
            }
        }
        /* the term in f32: exact, or below 2^-126 where it cuts to 0 anyway */
        vf t[RBF];
        if (g->wide) {
            /* G * 2^(nfrac - emax + Ea + Eb), the exponent at most nfrac;
             * one below -126 (the term cuts to 0) taken as -126 */
            const vfi sbe = ILOAD(g->sbe + sg * g->ldsb + jh);
#pragma GCC unroll 8
            for (int r = 0; r < RBF; r++) t[r] = G[r] * (vf)((DMAX(ebase[r] + sbe + sae[r][sg], (vfi){0} - 126) + 127) << 23);
        } else {
            const vf sbv = FLOAD(g->sbv + sg * g->ldsb + jh);
#pragma GCC unroll 8
            for (int r = 0; r < RBF; r++) t[r] = G[r] * (sbv * sav[r][sg]) * scf[r];
        }
#pragma GCC unroll 8
        for (int r = 0; r < RBF; r++) {
            S[r][0] = GADD(S[r][0], GTERM(__builtin_shufflevector(t[r], t[r], 0, 1, 2, 3, 4, 5, 6, 7)));
            S[r][1] = GADD(S[r][1], GTERM(__builtin_shufflevector(t[r], t[r], 8, 9, 10, 11, 12, 13, 14, 15)));
        }
    }
    /* normalise (a zero sum to +0: S times 2^(emax - nfrac)), cut, flag */
    const vl two = (vl){0} + (INT64_C(2046) << 52); /* (2^(emax - nfrac) = two - 2^(nfrac - emax) as bits) */
#pragma GCC unroll 8
    for (int r = 0; r < RBF; r++)
        CAT(KNAME, _grp_store)(g, GTOD(S[r][0]) * (vd)(two - (vl)sc[r][0]), GTOD(S[r][1]) * (vd)(two - (vl)sc[r][1]), accb[r], &bad[r]);
}

#if GEMM_KERNEL_PASS == 3
/* ---- the group kernel's integer form (AVX-512 VNNI) ---------------------------
 * The same model (above), faster where a block's cuts cut nothing.
 *
 * Group sums: e2m1 values times 2 are the integers 0, 1, 2, 3, 4, 6, 8, 12
 * with a sign, so 4 G (G the group's exact sum) is an integer of magnitude
 * at most 16 * 144 = 2304, which vpdpbusd forms 64 products to an
 * instruction (16 lanes x 4 k: B's bytes unsigned, plus 12; A's signed,
 * one word of 4 k broadcast; the 12 times A's sum is taken back by the
 * accumulator's start value). The same integers as the fma chains'.
 *
 * Blocks: the model cuts each term (and c) toward zero at 2^(emax - nfrac).
 * gemm.c (build_gv) writes, per row and per column and block, an exponent
 * L such that each group's term is acc * fa * rb * 2^(LA + LB), fa and rb
 * integers (the scales over 2^L: their significands times powers of two),
 * and U, the largest scale exponent, so emax <= max(c's exponent, UA + UB).
 * Where fa < 2^ka and rb < 2^kb with ka + kb <= 17, the block's integer
 * sum S of acc * fa * rb stays below 4 * 2^12 * 2^17 = 2^31, each such
 * product is exact in f32 (at most 12 + 4 + 4 significant bits), and
 * (UA - LA) + (UB - LB) <= ka + kb <= 17 < nfrac (the largest scale is at
 * least 2^U: its fa or rb at least 2^(U - L - 1)), so every term is a
 * multiple of 2^(emax - nfrac) where emax is a term's. Where besides
 *   c's exponent <= LA + LB + nfrac     (c, or a zero c's 2^-126, as emax),
 *   c = 0 or c's exponent >= UA + UB + 23 - nfrac   (c's bits not cut),
 * nothing is cut, and the block's result is c plus the terms, summed
 * exactly, cut to q bits. c + 2^(LA + LB) S is exact in double (c and the
 * terms are multiples of 2^(emax - nfrac) below 2^(emax + 15), nfrac + 15
 * <= 53: gemm.c gv_ok), so one fma gives it, and its low bits masked are
 * the cut to q bits: the model's (and _grp_block's) result; or one f32 fma
 * rounded toward zero where that is the same (below). The test costs one
 * scalar compare per register block and, where the block's largest and
 * least nonzero |c| pass the tile's tightest bounds, four instructions
 * per row; else it is taken lane by lane. A block that fails it takes
 * _grp_block on its group sums formed from the same bytes (the integer
 * form has no f32 panels). */
#define GV_TARGET __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx512vnni")))
/* 4 G of the group whose first word is w (16 k) for the register block's
 * rows and the 16 columns from h of B's panel bq: acor's start, then 16
 * vpdpbusd */
GV_TARGET static inline __attribute__((always_inline)) void CAT(KNAME, _grpv_sums)(const int32_t *aq, const int32_t *bq, const int32_t *acr,
                                                                                   size_t w, int h, __m512i acc[RBF]) {
#pragma GCC unroll 8
    for (int r = 0; r < RBF; r++) acc[r] = _mm512_set1_epi32(acr[(w / 4) * RBF + (size_t)r]);
#pragma GCC unroll 4
    for (int u = 0; u < 4; u++) {
        __m512i bw;
        memcpy(&bw, bq + (w + (size_t)u) * PBF + h, sizeof bw);
#pragma GCC unroll 8
        for (int r = 0; r < RBF; r++) acc[r] = _mm512_dpbusd_epi32(acc[r], bw, _mm512_set1_epi32(aq[(w + (size_t)u) * RBF + (size_t)r]));
    }
}
GV_TARGET static void CAT(KNAME, _grpv)(const gkg_args *g) {
    const struct gkg_int *gi = g->gi;
    const size_t kq = gi->kq, ng = kq / 4, ldc = g->ldsb, nv = ldc / 16;
    const int nbk = gi->nbk, B = g->block;
    uint64_t nfast = 0, nslow = 0, nf32 = 0;
    const __m512i qmask32 = _mm512_set1_epi32((int32_t)~((UINT32_C(1) << (23 - g->q)) - 1)); /* q fraction bits */
    for (int j0 = g->j0; j0 < g->j1; j0 += PBF) {
        const int32_t *bq = gi->bq + (size_t)(j0 / PBF) * kq * PBF;
        const int nc = g->j1 - j0 < PBF ? g->j1 - j0 : PBF;
        for (int i0 = g->i0; i0 < g->i1; i0 += RBF) {
            const int nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
            const int32_t *aq = gi->aq + (size_t)(i0 / RBF) * kq * RBF;
            const gkg_row *rw = gi->rows + (size_t)i0 * (size_t)nbk; /* [b][r]: rw + b * RBF */
            const int32_t *acr = gi->acor + (size_t)i0 * ng;
            const gkg_tile *rt = gi->rtile + (size_t)(i0 / RBF) * (size_t)nbk;
            const float *sav[RBF];
            const int32_t *sae[RBF];
            CAT(KNAME, _grp_rows)(g, i0, nr, sav, sae);
            for (int h = 0; h < nc; h += 16) {
                const size_t jh = (size_t)(j0 + h);
                float accb[RBF][16] __attribute__((aligned(64)));
                vfi bad[RBF];
                CAT(KNAME, _grp_in)(g, i0, j0, h, nr, nc, accb, bad);
                for (int kb = g->k0, ke; kb < g->k1; kb = ke) {
                    ke = B < g->k1 - kb ? kb + B : g->k1;
                    const size_t b = (size_t)(kb / B);
                    const gkg_row *rwb = rw + b * RBF;
                    const gkg_tile *ct = gi->ctile + b * nv + jh / 16;
                    int fast = rt[b].bits + ct->bits <= 17;
                    if (fast) {
                        /* c's exponent field E (a zero or subnormal c's as 1: 2^-126) against the bounds:
                         * first the tile's (the least of the lanes' upper bounds T1, the largest of their
                         * lower bounds T2) against the register block's largest |c| and least nonzero |c|
                         * (its bits less 1: a zero's is the greatest), then, where that fails, lane by lane */
                        const int32_t t1 = rt[b].lo + ct->lo, t2 = rt[b].hi + ct->hi;
                        const uint32_t b1 = t1 < 1 ? 0 : (uint32_t)(t1 > 255 ? 256 : t1 + 1) << 23;    /* E <= T1: |c| < b1 */
                        const uint32_t b2 = t2 <= 1 ? 0 : t2 > 255 ? UINT32_MAX : ((uint32_t)t2 << 23) - 1; /* E >= T2 or 0 */
                        __m512i vmax = _mm512_setzero_si512(), vmin = _mm512_set1_epi32(-1);
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) {
                            const __m512i ca = _mm512_and_si512(_mm512_load_si512(accb[r]), _mm512_set1_epi32(0x7FFFFFFF));
                            vmax = _mm512_max_epu32(vmax, ca);
                            vmin = _mm512_min_epu32(vmin, _mm512_sub_epi32(ca, _mm512_set1_epi32(1)));
                        }
                        if (_mm512_cmpge_epu32_mask(vmax, _mm512_set1_epi32((int32_t)b1)) |
                            _mm512_cmplt_epu32_mask(vmin, _mm512_set1_epi32((int32_t)b2))) {
                            const vfi clx = ILOAD(gi->clx + b * ldc + jh), cuy = ILOAD(gi->cuy + b * ldc + jh);
                            __mmask16 okm = 0xFFFF;
#pragma GCC unroll 8
                            for (int r = 0; r < RBF; r++) {
                                const vfi cb = ILOAD(accb[r]);
                                const vfi ex = DMAX((cb >> 23) & 0xFF, (vfi){0} + 1);
                                const __mmask16 m1 = _mm512_cmple_epi32_mask((__m512i)ex, (__m512i)(clx + rwb[r].la));
                                const __mmask16 m2 = _mm512_cmpge_epi32_mask((__m512i)ex, (__m512i)(cuy + rwb[r].ua));
                                const __mmask16 mz = _mm512_testn_epi32_mask((__m512i)cb, _mm512_set1_epi32(0x7FFFFFFF));
                                okm &= m1 & (m2 | mz);
                            }
                            fast = okm == 0xFFFF;
                        }
                    }
                    if (!fast) {
                        /* the block's group sums from the bytes (G = 4 G / 4, exact in f32) */
                        vf Gi[4][RBF];
                        for (int gs = kb, x = 0; gs < ke; gs += 16, x++) {
                            __m512i acc[RBF];
                            CAT(KNAME, _grpv_sums)(aq, bq, acr, (size_t)gs / 4, h, acc);
#pragma GCC unroll 8
                            for (int r = 0; r < RBF; r++) Gi[x][r] = (vf)_mm512_mul_ps(_mm512_cvtepi32_ps(acc[r]), _mm512_set1_ps(0.25f));
                        }
                        CAT(KNAME, _grp_block)(g, NULL, NULL, jh, h, kb, ke, sav, sae, accb, bad, (const vf(*)[RBF])Gi);
                        nslow++;
                        continue;
                    }
                    nfast++;
                    __m512i S[RBF];
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) S[r] = _mm512_setzero_si512();
                    for (int gs = kb, x = 0; gs < ke; gs += 16, x++) {
                        const size_t w = (size_t)gs / 4;
                        __m512i acc[RBF];
                        CAT(KNAME, _grpv_sums)(aq, bq, acr, w, h, acc);
                        const __m512 rb = _mm512_loadu_ps(gi->crb + (b * 4 + (size_t)x) * ldc + jh);
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) {
                            const __m512 t = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[r]), _mm512_set1_ps(rwb[r].fa[x])), rb);
                            S[r] = _mm512_add_epi32(S[r], _mm512_cvttps_epi32(t));
                        }
                    }
                    /* c + 2^(LA + LB) S, cut to q fraction bits. In float where S is exact in float
                     * (|S| <= 2^24) and the tiles' L are in the float range: one fma rounded toward
                     * zero (the exact value cut to a float's 23 fraction bits), its low bits masked.
                     * Nothing to flag: with 2^(LA + LB) >= 2^-149 and c a float the exact value is a
                     * multiple of 2^-149, so below 2^-126 it is a subnormal float exactly (the model's
                     * gradual underflow), and |c| < 2^(LA + LB + nfrac + 1) (the test) and |S| keep it
                     * below 2^120. Else in double, where it is exact (gemm.c gv_ok), flagged there
                     * outside f32's normal range. */
                    __m512i smax = _mm512_setzero_si512();
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) smax = _mm512_max_epu32(smax, _mm512_abs_epi32(S[r]));
                    if (rt[b].f32 && ct->f32 && !_mm512_cmpgt_epu32_mask(smax, _mm512_set1_epi32(1 << 24))) {
                        nf32++;
                        const __m512 pb = _mm512_loadu_ps(gi->cpf + b * ldc + jh);
#pragma GCC unroll 8
                        for (int r = 0; r < RBF; r++) {
                            const __m512 p = _mm512_mul_ps(pb, _mm512_set1_ps(rwb[r].paf));
                            __m512 v = _mm512_fmadd_round_ps(_mm512_cvtepi32_ps(S[r]), p, _mm512_load_ps(accb[r]),
                                                             _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
                            _mm512_store_si512(accb[r], _mm512_and_si512(_mm512_castps_si512(v), qmask32));
                        }
                        continue;
                    }
                    const __m512d pb0 = _mm512_loadu_pd(gi->cpb + b * ldc + jh), pb1 = _mm512_loadu_pd(gi->cpb + b * ldc + jh + 8);
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) {
                        const __m512d pa = _mm512_set1_pd(rwb[r].pa);
                        const __m512 c = _mm512_load_ps(accb[r]);
                        const __m512d c0 = _mm512_cvtps_pd(_mm512_castps512_ps256(c));
                        const __m512d c1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c), 1)));
                        const __m512d s0 = _mm512_cvtepi32_pd(_mm512_castsi512_si256(S[r]));
                        const __m512d s1 = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(S[r], 1));
                        CAT(KNAME, _grp_store)(g, (vd)_mm512_fmadd_pd(s0, _mm512_mul_pd(pb0, pa), c0),
                                               (vd)_mm512_fmadd_pd(s1, _mm512_mul_pd(pb1, pa), c1), accb[r], &bad[r]);
                    }
                }
                CAT(KNAME, _grp_out)(g, i0, j0, h, nr, nc, accb, bad);
            }
        }
    }
    __atomic_fetch_add(&emu__gemm_gv_blocks[0], nfast, __ATOMIC_RELAXED);
    __atomic_fetch_add(&emu__gemm_gv_blocks[2], nf32, __ATOMIC_RELAXED);
    __atomic_fetch_add(&emu__gemm_gv_blocks[1], nslow, __ATOMIC_RELAXED);
}
#endif

KTARGET static void CAT(KNAME, _grp)(const gkg_args *g) {
    const size_t K = g->K;
#if GEMM_KERNEL_PASS == 3
    /* the integer form where gemm.c built its data and the call's blocks are the data's */
    if (g->gi && g->k0 % g->block == 0 && (g->k1 % g->block == 0 || (size_t)g->k1 == K)) {
        CAT(KNAME, _grpv)(g);
        return;
    }
#endif
    for (int j0 = g->j0; j0 < g->j1; j0 += PBF) {
        const float *bvp = g->bv + (size_t)(j0 / PBF) * K * PBF;
        const int nc = g->j1 - j0 < PBF ? g->j1 - j0 : PBF;
        for (int i0 = g->i0; i0 < g->i1; i0 += RBF) {
            const int nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
            const float *ap = g->av + (size_t)(i0 / RBF) * K * RBF;
            const float *sav[RBF];
            const int32_t *sae[RBF];
            CAT(KNAME, _grp_rows)(g, i0, nr, sav, sae);
            for (int h = 0; h < nc; h += 16) {
                float accb[RBF][16] __attribute__((aligned(64)));
                vfi bad[RBF];
                CAT(KNAME, _grp_in)(g, i0, j0, h, nr, nc, accb, bad);
                for (int kb = g->k0, ke; kb < g->k1; kb = ke) {
                    ke = g->block < g->k1 - kb ? kb + g->block : g->k1;
                    CAT(KNAME, _grp_block)(g, bvp, ap, (size_t)(j0 + h), h, kb, ke, sav, sae, accb, bad, NULL);
                }
                CAT(KNAME, _grp_out)(g, i0, j0, h, nr, nc, accb, bad);
            }
        }
    }
}

/* ---- the fma-chain kernel: the reference kind fma-seq, f32 d ---------------
 * The model (mma.c dot_fma_seq): d = c, then d = fma(a_k, b_k, d) for k in
 * order, each step one round-to-nearest-even to f32. With every input exact
 * as a float that is the host's fmaf chain, which this kernel computes lane
 * by lane in the same order: vfmadd on AVX-512 (one rounding per step,
 * subnormals kept, IEEE signed zeros), fmaf per lane on the other levels.
 * Any order of a and b gives the same exact product, so the bits are the
 * scalar model's at every level. A lane whose result is inf or NaN is
 * flagged: the scalar model gives its NaN's encoding. */
#undef FSFMA
#if GEMM_KERNEL_PASS == 3
#define FSFMA(b, a, d) ((vf)_mm512_fmadd_ps((__m512)(b), _mm512_set1_ps(a), (__m512)(d)))
#else
#define FSFMA(b, a, d) ({ vf _d = (d), _b = (b); float _a = (a); for (int _l = 0; _l < 16; _l++) _d[_l] = __builtin_fmaf(_b[_l], _a, _d[_l]); _d; })
#endif

KTARGET static void CAT(KNAME, _fs)(const gkf_args *g) {
    const size_t K = g->K;
    for (int j0 = g->j0; j0 < g->j1; j0 += PBF) {
        const float *bvp = g->bv + (size_t)(j0 / PBF) * K * PBF;
        const int nc = g->j1 - j0 < PBF ? g->j1 - j0 : PBF;
        for (int i0 = g->i0; i0 < g->i1; i0 += RBF) {
            const int nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
            const float *ap = g->av + (size_t)(i0 / RBF) * K * RBF;
            vf d0[RBF], d1[RBF];
#pragma GCC unroll 8
            for (int r = 0; r < RBF; r++) {
                const float *cin = r < nr ? g->cin : NULL;
                CAT(KNAME, _c16)(&d0[r], cin, g->ldc, i0 + r, j0, nc), CAT(KNAME, _c16)(&d1[r], cin, g->ldc, i0 + r, j0 + 16, nc - 16);
            }
            for (int k = g->k0; k < g->k1; k++) {
                const vf b0 = FLOAD(bvp + (size_t)k * PBF), b1 = FLOAD(bvp + (size_t)k * PBF + 16);
#pragma GCC unroll 8
                for (int r = 0; r < RBF; r++) {
                    const float a = ap[(size_t)k * RBF + r];
                    d0[r] = FSFMA(b0, a, d0[r]);
                    d1[r] = FSFMA(b1, a, d1[r]);
                }
            }
            const vfi none = (vfi){0};
            for (int r = 0; r < nr; r++) {
                CAT(KNAME, _out16)(g->out, g->flag, g->ldo, i0 + r, j0, nc, &d0[r], &none);
                if (nc > 16) CAT(KNAME, _out16)(g->out, g->flag, g->ldo, i0 + r, j0 + 16, nc - 16, &d1[r], &none);
            }
        }
    }
}

/* ---- the exact-sum kernel: the reference kind exact, f32 d ---------------
 * The model (mma.c dot_exact): c plus every product, summed exactly, then
 * one rounding to f32 (rne). Where the formats make every product a
 * multiple of 2^lo below 2^hi, and (K + 1) * 2^(hi - lo) <= 2^53 (gemm.c
 * ex_kernel_ok: fp8 e4m3, fp6, fp4), every partial sum of the products and
 * of a c that is a multiple of 2^lo below 2^hi is a multiple of 2^lo below
 * 2^53 * 2^lo: exact in double, so a chain of double fma (a product exact in
 * double, then one exact add) holds the exact sum, whatever the order, and
 * its conversion to float is the one rounding (rne, subnormal and overflow
 * results included). Zeros: an exact zero sum of nonzero terms is +0 (rne)
 * and a sum of zeros keeps IEEE's signs, as in the model. Lanes whose c is
 * not such a multiple are flagged (the scalar model), and lanes whose result
 * is inf or NaN too. One call per chunk: the kernel starts from cin and
 * rounds once at its end. */
#undef EXFMA
#if GEMM_KERNEL_PASS == 3
#define EXFMA(b, a, d) ((vd)_mm512_fmadd_pd((__m512d)(b), _mm512_set1_pd(a), (__m512d)(d)))
#else
#define EXFMA(b, a, d) ({ vd _d = (d), _b = (b); double _a = (a); for (int _l = 0; _l < 8; _l++) _d[_l] = __builtin_fma(_b[_l], _a, _d[_l]); _d; })
#endif

KTARGET static void CAT(KNAME, _ex)(const gkf_args *g) {
    const size_t K = g->K;
    const int kn = g->k1 - g->k0;
    const double ulo = __builtin_ldexp(1.0, g->exlo), uhi = __builtin_ldexp(1.0, g->exhi);
    double *bd = (double *)(((uintptr_t)g->scratch + 63) & ~(uintptr_t)63); /* whole cache lines */
    for (int j0 = g->j0; j0 < g->j1; j0 += PBF) {
        const float *bvp = g->bv + (size_t)(j0 / PBF) * K * PBF;
        const int nc = g->j1 - j0 < PBF ? g->j1 - j0 : PBF;
        /* this panel of B in double, once for every row */
        for (int k = 0; k < kn; k++)
            for (int l = 0; l < PBF; l++) bd[(size_t)k * PBF + (size_t)l] = bvp[(size_t)(g->k0 + k) * PBF + (size_t)l];
        double *adp = bd + (size_t)kn * PBF; /* this panel of A in double (the broadcasts come from memory) */
        for (int i0 = g->i0; i0 < g->i1; i0 += RBF) {
            const int nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
            const float *ap = g->av + (size_t)(i0 / RBF) * K * RBF + (size_t)g->k0 * RBF;
            _Static_assert(RBF == 8, "a k of the A panel is one vector of 8 floats");
            for (size_t x = 0; x < (size_t)kn * RBF; x += 8) {
                vhf a8;
                memcpy(&a8, ap + x, sizeof a8);
                const vd a8d = __builtin_convertvector(a8, vd);
                memcpy(adp + x, &a8d, sizeof a8d);
            }
            for (int h = 0; h < nc; h += 16) {
                vd d0[RBF], d1[RBF];
                vfi cbad[RBF];
                for (int r = 0; r < RBF; r++) {
                    vf c;
                    CAT(KNAME, _c16)(&c, r < nr ? g->cin : NULL, g->ldc, i0 + r, j0 + h, nc - h);
                    double cv[16];
                    for (int l = 0; l < 16; l++) {
                        double q = (double)c[l] / ulo; /* exact: a power of two */
                        cbad[r][l] = !(__builtin_fabs(c[l]) < uhi) || q != __builtin_trunc(q);
                        cv[l] = cbad[r][l] ? 0.0 : c[l];
                    }
                    memcpy(&d0[r], cv, sizeof d0[r]), memcpy(&d1[r], cv + 8, sizeof d1[r]);
                }
                for (int k = 0; k < kn; k++) {
                    const double *bk = bd + (size_t)k * PBF + h;
                    const vd b0 = VLOAD(bk), b1 = VLOAD(bk + 8);
                    const double *ad = adp + (size_t)k * RBF;
#pragma GCC unroll 8
                    for (int r = 0; r < RBF; r++) {
                        d0[r] = EXFMA(b0, ad[r], d0[r]);
                        d1[r] = EXFMA(b1, ad[r], d1[r]);
                    }
                }
                for (int r = 0; r < nr; r++) {
                    /* the one rounding: each double (exact) to float */
                    const vf v = __builtin_shufflevector(__builtin_convertvector(d0[r], vhf), __builtin_convertvector(d1[r], vhf), 0, 1,
                                                         2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
                    CAT(KNAME, _out16)(g->out, g->flag, g->ldo, i0 + r, j0 + h, nc - h, &v, &cbad[r]);
                }
            }
        }
    }
}

#if GEMM_KERNEL_PASS == 3
/* ---- the exact-sum kernel's AMX form (isa 4) ------------------------------
 * The same model and exactness argument, in integers. A's values are
 * multiples of 2^alo and B's of 2^blo (alo + blo = exlo), so each is an
 * integer x = v / 2^lo of at most 7 nd bits (gemm.c: nd <= 3), written as nd
 * base-128 digits of x's sign, x = sum_t d_t 128^t with |d_t| <= 127. A
 * product is then sum_{s,t} da_s db_t 128^(s+t) 2^exlo, and the int8 dot
 * products of the digit planes (AMX TDPBSSD: 16 x 16 int32 sums over 64 k
 * at a time), summed per weight w = s + t, are the exact integer sums while
 * no int32 sum leaves int32's range: at most 3 digit pairs a weight, 127^2
 * each, so EXA_SEG = 32768 k (3 x 127^2 x 32768 < 2^31) before the sums move
 * to int64; how the unit would treat an overflow never matters. There
 * sum_w C_w 128^w plus c / 2^exlo is the exact sum as an integer of
 * magnitude at most (K + 1) 2^(exhi - exlo) <= 2^53 (gemm.c ex_kernel_ok):
 * exact in double, times 2^exlo exact, and its conversion to float is the
 * one rounding, as in the double kernel. A value that is not such an
 * integer (inf or NaN, in rows and columns the driver recomputes anyway)
 * reads as 0 and flags its row or column; c is checked as in the double
 * kernel, and a c of -0 is flagged too (an integer sum has no sign of zero).
 *
 * Layout (emu__gemm_ex_scratch): A's digits row-major, one plane per digit
 * (rows16 x kp, kp = kn rounded up to 64, zeros past kn); B's for a block of
 * NB columns (gemm_exa_nb: at most 1 MiB, which stays in L2 while each row
 * tile's digits of A pass by), per 16-column tile and plane (kp / 4) x 64
 * bytes, column n's k = 4 k4 .. 4 k4 + 3 at k4 * 64 + 4 n: the layout
 * TDPBSSD reads its second operand in. Tiles 0-4 hold the weights' sums,
 * 5 A's digits, 6 and 7 B's. */
#define XTARGET __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx512vbmi,amx-tile,amx-int8")))
#define EXA_SEG 32768

/* The digits of 16 values v / 2^lo (s = 2^-lo) as int32 lanes; the lanes
 * that are not integers below lim (2^(7 nd)) are set in the mask and read
 * as 0. */
XTARGET static inline __mmask16 exa_digits(__m512 v, __m512 s, __m512i lim, __m512i d[3]) {
    const __m512 y = _mm512_mul_ps(v, s);
    const __m512i q = _mm512_cvttps_epi32(y); /* NaN, inf, too large: INT_MIN */
    __m512i m = _mm512_abs_epi32(q);
    const __mmask16 bad = _mm512_cmp_ps_mask(_mm512_cvtepi32_ps(q), y, _CMP_NEQ_UQ) | _mm512_cmpge_epu32_mask(m, lim);
    m = _mm512_maskz_mov_epi32((__mmask16)~bad, m);
    const __mmask16 neg = _mm512_movepi32_mask(q);
    const __m512i m127 = _mm512_set1_epi32(127), z = _mm512_setzero_si512();
    const __m512i d0 = _mm512_and_si512(m, m127), d1 = _mm512_and_si512(_mm512_srli_epi32(m, 7), m127), d2 = _mm512_srli_epi32(m, 14);
    d[0] = _mm512_mask_sub_epi32(d0, neg, z, d0);
    d[1] = _mm512_mask_sub_epi32(d1, neg, z, d1);
    d[2] = _mm512_mask_sub_epi32(d2, neg, z, d2);
    return bad;
}

/* A's rows [i0, i1) of the chunk as digit planes (plane bytes apart; rows
 * up to rows16 and k up to kp zero); rowbad: the rows with a value that is
 * not an integer of nda digits. */
XTARGET static void exa_pack_a(const gkf_args *g, int8_t *ad, size_t plane, size_t kp, int rows16, uint8_t *rowbad) {
    const long kn = g->k1 - g->k0;
    const int nd = g->exnda;
    const __m512 s = _mm512_set1_ps(__builtin_ldexpf(1.0f, -g->exalo));
    const __m512i lim = _mm512_set1_epi32(1 << (7 * nd));
    /* 8 k x 8 rows of bytes ([k][r]) to 8 rows x 8 k ([r][k]) */
    uint8_t ix[64];
    for (int o = 0; o < 64; o++) ix[o] = (uint8_t)((o % 8) * 8 + o / 8);
    __m512i idx;
    memcpy(&idx, ix, sizeof idx);
    memset(rowbad, 0, (size_t)rows16);
    for (int p = 0; p < rows16 / RBF; p++) {
        const int i = g->i0 + RBF * p;
        if (i >= g->i1) {
            for (int t = 0; t < nd; t++) memset(ad + (size_t)t * plane + (size_t)RBF * p * kp, 0, RBF * kp);
            continue;
        }
        const float *ap = g->av + (size_t)(i / RBF) * g->K * RBF + (size_t)g->k0 * RBF;
        __mmask16 pbad = 0;
        for (size_t kk = 0; kk < kp; kk += 8) {
            __m128i by[3][4];
            for (int h = 0; h < 4; h++) {
                const long left = kn - (long)(kk + 2 * (size_t)h); /* k's of the chunk from this pair */
                const __mmask16 lm = left >= 2 ? 0xFFFF : left == 1 ? 0x00FF : 0;
                const __m512 v = _mm512_maskz_loadu_ps(lm, ap + (kk + 2 * (size_t)h) * RBF);
                __m512i d[3];
                pbad |= exa_digits(v, s, lim, d) & lm;
                for (int t = 0; t < nd; t++) by[t][h] = _mm512_cvtepi32_epi8(d[t]);
            }
            for (int t = 0; t < nd; t++) {
                __m512i x = _mm512_castsi128_si512(by[t][0]);
                x = _mm512_inserti64x2(x, by[t][1], 1);
                x = _mm512_inserti64x2(x, by[t][2], 2);
                x = _mm512_inserti64x2(x, by[t][3], 3);
                x = _mm512_permutexvar_epi8(idx, x);
                uint64_t w[8];
                memcpy(w, &x, sizeof w);
                int8_t *dst = ad + (size_t)t * plane + (size_t)RBF * p * kp + kk;
                for (int r = 0; r < RBF; r++) memcpy(dst + (size_t)r * kp, &w[r], 8);
            }
        }
        for (int r = 0; r < RBF; r++) rowbad[RBF * p + r] = (uint8_t)((pbad >> r | pbad >> (r + 8)) & 1);
    }
}

/* B's columns [jb, jb + 16 nbt) of the chunk as digit planes (plane bytes
 * apart, tile tt at 16 kp bytes each); colbad as rowbad. */
XTARGET static void exa_pack_b(const gkf_args *g, int8_t *bd, size_t plane, size_t kp, int jb, int nbt, uint8_t *colbad) {
    const size_t kn = (size_t)(g->k1 - g->k0);
    const int nd = g->exndb;
    const __m512 s = _mm512_set1_ps(__builtin_ldexpf(1.0f, -(g->exlo - g->exalo)));
    const __m512i lim = _mm512_set1_epi32(1 << (7 * nd)), m255 = _mm512_set1_epi32(255);
    for (int tt = 0; tt < nbt; tt++) {
        const int j = jb + 16 * tt;
        const float *bp = g->bv + (size_t)(j / PBF) * g->K * PBF + (size_t)g->k0 * PBF + (size_t)(j % PBF);
        int8_t *dst = bd + (size_t)tt * 16 * kp;
        __mmask16 cb = 0;
        for (size_t k4 = 0; k4 < kp / 4; k4++) {
            __m512i d[4][3];
            for (int u = 0; u < 4; u++) {
                const size_t k = 4 * k4 + (size_t)u;
                const __m512 v = k < kn ? _mm512_loadu_ps(bp + k * PBF) : _mm512_setzero_ps();
                cb |= exa_digits(v, s, lim, d[u]);
            }
            for (int t = 0; t < nd; t++) {
                const __m512i w = _mm512_or_si512(
                    _mm512_or_si512(_mm512_and_si512(d[0][t], m255), _mm512_slli_epi32(_mm512_and_si512(d[1][t], m255), 8)),
                    _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(d[2][t], m255), 16), _mm512_slli_epi32(d[3][t], 24)));
                _mm512_storeu_si512(dst + (size_t)t * plane + k4 * 64, w);
            }
        }
        for (int l = 0; l < 16; l++) colbad[16 * tt + l] = (uint8_t)(cb >> l & 1);
    }
}

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} exa_tilecfg;

/* tile w (0-4) zeroed, stored, or added the product of tiles 5 and 6 */
#define EXA_W(w, OP)                      \
    switch (w) {                          \
    case 0: OP(0); break;                 \
    case 1: OP(1); break;                 \
    case 2: OP(2); break;                 \
    case 3: OP(3); break;                 \
    default: OP(4); break;                \
    }
#define EXA_ZERO(t) _tile_zero(t)
#define EXA_STORE(t) _tile_stored(t, tmp + 256 * (t), 64)
#define EXA_DP56(t) _tile_dpbssd(t, 5, 6)

XTARGET static void CAT(KNAME, _exa)(const gkf_args *g) {
    const int kn = g->k1 - g->k0, nda = g->exnda, ndb = g->exndb, nw = nda + ndb - 1;
    const size_t kp = gemm_exa_kp(kn);
    const int rows16 = (g->i1 - g->i0 + 15) / 16 * 16;
    const int nb = gemm_exa_nb(kp, ndb);
    int8_t *ad = (int8_t *)(((uintptr_t)g->scratch + 63) & ~(uintptr_t)63);
    const size_t pa = (size_t)rows16 * kp, pb = (size_t)nb * kp;
    int8_t *bd = ad + (size_t)nda * pa;
    int32_t *tmp = (int32_t *)(bd + (size_t)ndb * pb); /* 5 tiles of 16 x 16 */
    uint8_t *rowbad = (uint8_t *)(tmp + 5 * 256), *colbad = rowbad + rows16;
    exa_pack_a(g, ad, pa, kp, rows16, rowbad);
    exa_tilecfg tc;
    memset(&tc, 0, sizeof tc);
    tc.palette = 1;
    for (int t = 0; t < 8; t++) tc.colsb[t] = 64, tc.rows[t] = 16;
    _tile_loadconfig(&tc);
    const __m512d ulo = _mm512_set1_pd(__builtin_ldexp(1.0, g->exlo)), sc = _mm512_set1_pd(__builtin_ldexp(1.0, -g->exlo));
    const __m512 uhi = _mm512_set1_ps(__builtin_ldexpf(1.0f, g->exhi));
    for (int jb = g->j0; jb < g->j1; jb += nb) {
        const int ncol = g->j1 - jb < nb ? g->j1 - jb : nb, nbt = (ncol + 15) / 16;
        exa_pack_b(g, bd, pb, kp, jb, nbt, colbad);
        for (int it = 0; it < rows16 / 16; it++)
            for (int tt = 0; tt < nbt; tt++) {
                const int8_t *a = ad + (size_t)it * 16 * kp, *b = bd + (size_t)tt * 16 * kp;
                __m512i acc[16][2];
                for (size_t seg = 0; seg < kp; seg += EXA_SEG) {
                    const size_t se = kp - seg < EXA_SEG ? kp : seg + EXA_SEG;
                    for (int w = 0; w < nw; w++) EXA_W(w, EXA_ZERO)
                    for (size_t ks = seg; ks < se; ks += 64) {
                        const int8_t *a0 = a + ks, *b0 = b + ks * 16;
                        if (nda == 3 && ndb == 3) { /* 9 products, 3 loads of A and 4 of B */
                            _tile_loadd(5, a0, kp);
                            _tile_loadd(6, b0, 64); _tile_dpbssd(0, 5, 6);
                            _tile_loadd(7, b0 + pb, 64); _tile_dpbssd(1, 5, 7);
                            _tile_loadd(6, b0 + 2 * pb, 64); _tile_dpbssd(2, 5, 6);
                            _tile_loadd(5, a0 + pa, kp);
                            _tile_dpbssd(3, 5, 6); _tile_dpbssd(2, 5, 7);
                            _tile_loadd(6, b0, 64); _tile_dpbssd(1, 5, 6);
                            _tile_loadd(5, a0 + 2 * pa, kp);
                            _tile_dpbssd(2, 5, 6); _tile_dpbssd(3, 5, 7);
                            _tile_loadd(6, b0 + 2 * pb, 64); _tile_dpbssd(4, 5, 6);
                        } else
                            for (int s = 0; s < nda; s++) {
                                _tile_loadd(5, a0 + (size_t)s * pa, kp);
                                for (int t = 0; t < ndb; t++) {
                                    _tile_loadd(6, b0 + (size_t)t * pb, 64);
                                    EXA_W(s + t, EXA_DP56)
                                }
                            }
                    }
                    for (int w = 0; w < nw; w++) EXA_W(w, EXA_STORE)
                    for (int r = 0; r < 16; r++) {
                        __m512i lo = seg ? acc[r][0] : _mm512_setzero_si512(), hi = seg ? acc[r][1] : _mm512_setzero_si512();
                        for (int w = 0; w < nw; w++) {
                            const __m512i x = _mm512_loadu_si512(tmp + 256 * w + 16 * r);
                            const __m128i sh = _mm_cvtsi32_si128(7 * w);
                            lo = _mm512_add_epi64(lo, _mm512_sll_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(x)), sh));
                            hi = _mm512_add_epi64(hi, _mm512_sll_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(x, 1)), sh));
                        }
                        acc[r][0] = lo, acc[r][1] = hi;
                    }
                }
                const int j = jb + 16 * tt, n = g->j1 - j < 16 ? g->j1 - j : 16;
                vfi cb;
                for (int l = 0; l < 16; l++) cb[l] = colbad[16 * tt + l];
                for (int r = 0; r < 16; r++) {
                    const int i = g->i0 + 16 * it + r;
                    if (i >= g->i1) break;
                    vf c;
                    CAT(KNAME, _c16)(&c, g->cin, g->ldc, i, j, n);
                    /* c / 2^exlo as an integer, or flagged (as the double kernel; and -0) */
                    const __m512 cv = (__m512)c;
                    __mmask16 cbad = ~_mm512_cmp_ps_mask(_mm512_abs_ps(cv), uhi, _CMP_LT_OQ) |
                                     _mm512_cmpeq_epi32_mask((__m512i)cv, _mm512_set1_epi32((int)0x80000000u));
                    const __m512d c0 = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(cv)), sc);
                    const __m512d c1 = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(cv, 1)), sc);
                    __m512i q0 = _mm512_cvttpd_epi64(c0), q1 = _mm512_cvttpd_epi64(c1);
                    cbad |= (__mmask16)(_mm512_cmp_pd_mask(_mm512_cvtepi64_pd(q0), c0, _CMP_NEQ_UQ) |
                                        _mm512_cmp_pd_mask(_mm512_cvtepi64_pd(q1), c1, _CMP_NEQ_UQ) << 8);
                    q0 = _mm512_maskz_mov_epi64((__mmask8)~cbad, q0), q1 = _mm512_maskz_mov_epi64((__mmask8)~(cbad >> 8), q1);
                    const __m256 v0 = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_add_epi64(acc[r][0], q0)), ulo));
                    const __m256 v1 = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_add_epi64(acc[r][1], q1)), ulo));
                    const vf v = (vf)_mm512_insertf32x8(_mm512_castps256_ps512(v0), v1, 1);
                    vfi bad = cb | (vfi)_mm512_movm_epi32(cbad);
                    if (rowbad[16 * it + r]) bad = (vfi){0} + 1;
                    CAT(KNAME, _out16)(g->out, g->flag, g->ldo, i, j, n, &v, &bad);
                }
            }
    }
    _tile_release();
}
#undef EXA_W
#undef EXA_ZERO
#undef EXA_STORE
#undef EXA_DP56
#endif

/* ---- the pairwise kernel: AMD CDNA2 (mma.c dot_pairwise_blocks, ftz) -----
 * The model, per output: c (a subnormal c reads as +0); per block of
 * `block` products from the start of K (the last one may be short), the
 * products of the operands (a subnormal operand reads as +0) each rounded
 * to f32, summed as a pairwise tree that splits [lo, hi) at
 * lo + (hi - lo) / 2, and the tree's value added to the running d; every
 * addition rounded to f32 to nearest even, every rounded value below f32's
 * normal range flushed to zero (its sign kept).
 *
 * Here the same operations in f32 lanes (16 per vector, 8 rows x 32
 * columns per register block), on the f32 kernel's packed values, where
 * gemm.c (build_values_pw) has already made the subnormal inputs +0. An IEEE
 * f32 product or sum rounded to nearest even is the model's add_round
 * whenever no operand and no result is subnormal (then the flush never
 * acts either). Every product and every sum of the tree is a multiple of
 * 2^lo, lo the least product lsb over the data; gemm.c keeps the lanes
 * with lo >= -126 here (the others go to the scalar model through their
 * row or column), so none of them that is not zero is subnormal. The sums
 * into d: a c that is 0 or at least 2^-103 is a multiple of 2^-126 too,
 * and so is then every d. A smaller c (normal) is exact while the trees
 * are 0; with lo >= -102 the first nonzero tree gives |c + t| >= 2^-103,
 * a normal sum and a multiple of 2^-126 after rounding; with lo < -102
 * gemm.c sets cthr (2^-103) and the lanes whose c lies in (0, cthr) are
 * flagged (a K tile's c is the previous tile's d: flagging one of those
 * only costs time). A subnormal c becomes +0, as the model reads it.
 * Zeros: IEEE gives the sum of two zeros of one sign that sign, of two
 * signs or of values that cancel +0, as the model's add_round does with
 * RNE. Products or sums that overflow are inf in both, and inf or NaN
 * never turns finite again: lanes whose result is not finite are flagged
 * for the scalar model (which also gives the model's NaN).
 *
 * Products of inputs of at most 12 bits are exact in f32, so where they
 * cannot overflow either (gemm.c sets fma: the data's greatest exponents
 * allow it) the first sum of each pair, RNE(p0 + p1), is one fma
 * fma(a0, b0, p1), the same value: AVX-512 takes it (2 multiplies, 2 fmas
 * and 2 adds per 4 products and 16 lanes instead of 4 and 4); the other
 * passes multiply and add. */
#undef PWFMA
#if GEMM_KERNEL_PASS == 3
#define PWFMA(x, s, y) ((vf)_mm512_fmadd_ps((__m512)(x), _mm512_set1_ps(s), (__m512)(y)))
#else
#define PWFMA(x, s, y) ((x) * (s) + (y))
#endif

/* The tree over n products (mma.c pairwise_rec: [0, n/2) and [n/2, n)). */
KTARGET static void CAT(KNAME, _pwtree)(vf *out, const vf *p, int n) {
    if (n == 1) {
        *out = p[0];
        return;
    }
    vf l, r;
    CAT(KNAME, _pwtree)(&l, p, n / 2);
    CAT(KNAME, _pwtree)(&r, p + n / 2, n - n / 2);
    *out = l + r;
}

/* One block [kb, ke) of any length (<= 64) into acc: the products in
 * memory, then the tree (short blocks at the end of K, blocks other than
 * 2 and 4). */
KTARGET static void CAT(KNAME, _pwblock)(vf acc[RBF][2], const float *ap, const float *bvp, int kb, int ke) {
    vf P[64];
    const int n = ke - kb;
    for (int r = 0; r < RBF; r++)
        for (int h = 0; h < 2; h++) {
            for (int k = kb; k < ke; k++) P[k - kb] = FLOAD(bvp + (size_t)k * PBF + 16 * h) * ap[(size_t)k * RBF + r];
            vf t;
            CAT(KNAME, _pwtree)(&t, P, n);
            acc[r][h] = acc[r][h] + t;
        }
}

/* Blocks of 4: ((p0 + p1) + (p2 + p3)); FIRST(x0, a0, x1, a1) is p0 + p1. */
#define PW4_LOOP(FIRST)                                                                              \
    for (; k + 4 <= g->k1; k += 4) {                                                                 \
        const float *bp = bvp + (size_t)k * PBF, *a = ap + (size_t)k * RBF;                          \
        const vf b00 = FLOAD(bp), b01 = FLOAD(bp + 16), b10 = FLOAD(bp + 32), b11 = FLOAD(bp + 48);  \
        const vf b20 = FLOAD(bp + 64), b21 = FLOAD(bp + 80), b30 = FLOAD(bp + 96), b31 = FLOAD(bp + 112); \
        _Pragma("GCC unroll 8") for (int r = 0; r < RBF; r++) {                                      \
            const float a0 = a[r], a1 = a[RBF + r], a2 = a[2 * RBF + r], a3 = a[3 * RBF + r];        \
            vf s0 = FIRST(b00, a0, b10, a1), s1 = FIRST(b20, a2, b30, a3);                           \
            vf t0 = FIRST(b01, a0, b11, a1), t1 = FIRST(b21, a2, b31, a3);                           \
            acc[r][0] = acc[r][0] + (s0 + s1);                                                       \
            acc[r][1] = acc[r][1] + (t0 + t1);                                                       \
        }                                                                                            \
    }
/* Blocks of 2: p0 + p1. */
#define PW2_LOOP(FIRST)                                                                              \
    for (; k + 2 <= g->k1; k += 2) {                                                                 \
        const float *bp = bvp + (size_t)k * PBF, *a = ap + (size_t)k * RBF;                          \
        const vf b00 = FLOAD(bp), b01 = FLOAD(bp + 16), b10 = FLOAD(bp + 32), b11 = FLOAD(bp + 48);  \
        _Pragma("GCC unroll 8") for (int r = 0; r < RBF; r++) {                                      \
            const float a0 = a[r], a1 = a[RBF + r];                                                  \
            acc[r][0] = acc[r][0] + FIRST(b00, a0, b10, a1);                                         \
            acc[r][1] = acc[r][1] + FIRST(b01, a0, b11, a1);                                         \
        }                                                                                            \
    }
#define PW_PLAIN(x0, s0, x1, s1) ((x0) * (s0) + (x1) * (s1))
#define PW_FMA(x0, s0, x1, s1) PWFMA(x0, s0, (x1) * (s1))

KTARGET static void CAT(KNAME, _pw)(const gkp_args *g) {
    const size_t K = g->K;
    const vfi vexpm = (vfi){0} + 0x7F800000;
    for (int j0 = g->j0; j0 < g->j1; j0 += PBF) {
        const float *bvp = g->bv + (size_t)(j0 / PBF) * K * PBF;
        const int nc = g->j1 - j0 < PBF ? g->j1 - j0 : PBF;
        for (int i0 = g->i0; i0 < g->i1; i0 += RBF) {
            const int nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
            const float *ap = g->av + (size_t)(i0 / RBF) * K * RBF;
            vf acc[RBF][2];
            vfb cf[RBF][2]; /* 1 where c lies in (0, cthr): flagged */
            const vfu cthr = (vfu){0} + g->cthr;
            /* c in: +0 for none, a subnormal c +0 (mma.c decode_ftz) */
#pragma GCC unroll 8
            for (int r = 0; r < RBF; r++) {
                for (int h = 0; h < 2; h++) {
                    vf c = (vf){0};
                    if (g->cin && r < nr) {
                        const float *cp = g->cin + (size_t)(i0 + r) * g->ldc + (size_t)(j0 + 16 * h);
                        if (nc == PBF) c = FLOAD(cp);
                        else
                            for (int l = 0; l < 16 && 16 * h + l < nc; l++) c[l] = cp[l];
                    }
                    vfu u = (vfu)c & 0x7FFFFFFFu;
                    vfi sub = (vfi)((u != 0) & (u < 0x00800000u));
                    acc[r][h] = (vf)((vfi)c & ~sub);
                    cf[r][h] = __builtin_convertvector((vfi)((u != 0) & (u < cthr)), vfb) & 1;
                }
            }
            int k = g->k0;
            if (g->block == 4) {
                if (g->fma) PW4_LOOP(PW_FMA)
                else PW4_LOOP(PW_PLAIN)
            } else if (g->block == 2) {
                if (g->fma) PW2_LOOP(PW_FMA)
                else PW2_LOOP(PW_PLAIN)
            }
            for (int ke; k < g->k1; k = ke) { /* other blocks, and a short block at the end */
                ke = g->block < g->k1 - k ? k + g->block : g->k1;
                CAT(KNAME, _pwblock)(acc, ap, bvp, k, ke);
            }
            /* out, and the flag where the result is not finite (or c was tiny) */
            for (int r = 0; r < nr; r++)
                for (int h = 0; h < 2; h++) {
                    vfb bad = (__builtin_convertvector(((vfi)acc[r][h] & vexpm) == vexpm, vfb) & 1) | cf[r][h];
                    size_t o = (size_t)(i0 + r) * g->ldo + (size_t)(j0 + 16 * h);
                    if (nc == PBF) {
                        vfb f;
                        memcpy(&f, g->flag + o, sizeof f);
                        f |= bad;
                        memcpy(g->flag + o, &f, sizeof f);
                        memcpy(g->out + o, &acc[r][h], sizeof acc[r][h]);
                    } else {
                        for (int l = 0; l < 16 && 16 * h + l < nc; l++) g->out[o + l] = acc[r][h][l], g->flag[o + l] |= bad[l];
                    }
                }
        }
    }
}
#undef PW4_LOOP
#undef PW2_LOOP
#undef PW_PLAIN
#undef PW_FMA

/* ---- the pairwise-tree kernel: the reference kind pairwise, one tree ------
 * The model (mma.c dot_pairwise without blocks or ftz): the exact products
 * summed as a binary tree over the chunk, [lo, hi) split at lo + (hi -
 * lo) / 2, each addition rounded to nearest-even in f32, then d = c + tree
 * rounded once more. Where every product is an f32 value (gemm.c
 * pt_kernel_ok: inputs of at most 12 bits, products within f32's range
 * down to its least subnormal), each of the model's additions is an IEEE
 * f32 addition of two f32 values: this kernel does the same additions on 16
 * lanes, in the same tree. On AVX-512 the first addition of a pair, p0 +
 * p1, is one fma of a1, b1 and p0: the same value, since p1 is exact.
 * Lanes whose result is inf or NaN are flagged (the scalar model gives the
 * NaN's encoding). One call per chunk.
 *
 * Order of work: the tree's nodes of at most PT_SEG products are summed for
 * PT_NB register blocks (8 rows x 32 columns each) while their share of
 * the panels stays in the L1 cache, and the nodes above them are added as
 * the model adds them (_pt_top). Within such a node the tree is a perfect
 * tree of leaves of 4 to 8 products (_pt_perfect). One tree over the whole
 * chunk per 4 rows and 16 columns, recursing to 32 products, streamed the
 * panels from L2 for every 4 x 16 outputs, and about 30% of its samples
 * (perf annotate) fell on the recursion's branches, calls and index
 * arithmetic. */
#undef PTPAIR
#if GEMM_KERNEL_PASS == 3
#define PTPAIR(b0, a0, b1, a1) ((vf)_mm512_fmadd_ps((__m512)(b1), _mm512_set1_ps(a1), (__m512)((b0) * (a0))))
#else
#define PTPAIR(b0, a0, b1, a1) ((b0) * (a0) + (b1) * (a1))
#endif

/* rows of A per tree evaluation (of the panel's 8): with 8, the pending
 * sums of the trees' levels did not fit the registers */
#undef PTR
#define PTR 4
/* a tree of n = hi - lo <= 4 products, written out */
KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, _pt_leaf)(const float *ap, const float *bp, int lo, int hi,
                                                                                vf *out) {
    const int n = hi - lo;
    const float *a = ap + (size_t)lo * RBF;
    const vf b0 = FLOAD(bp + (size_t)lo * PBF);
    if (n == 1) {
#pragma GCC unroll 8
        for (int r = 0; r < PTR; r++) out[r] = b0 * a[r];
        return;
    }
    const vf b1 = FLOAD(bp + (size_t)(lo + 1) * PBF);
    if (n == 2) {
#pragma GCC unroll 8
        for (int r = 0; r < PTR; r++) out[r] = PTPAIR(b0, a[r], b1, a[RBF + r]);
        return;
    }
    const vf b2 = FLOAD(bp + (size_t)(lo + 2) * PBF);
    if (n == 3) { /* p0 + (p1 + p2) */
#pragma GCC unroll 8
        for (int r = 0; r < PTR; r++) out[r] = b0 * a[r] + PTPAIR(b1, a[RBF + r], b2, a[2 * RBF + r]);
        return;
    }
    const vf b3 = FLOAD(bp + (size_t)(lo + 3) * PBF);
#pragma GCC unroll 8
    for (int r = 0; r < PTR; r++) out[r] = PTPAIR(b0, a[r], b1, a[RBF + r]) + PTPAIR(b2, a[2 * RBF + r], b3, a[3 * RBF + r]);
}

/* trees of at most 8 and 16 products, written out (inlined: where lo and
 * hi are constants every branch folds) */
#define PT_NODE(NAME, SUB, LIM)                                                                                    \
    KTARGET static inline __attribute__((always_inline)) void CAT(KNAME, NAME)(const float *ap, const float *bp, int lo, \
                                                                               int hi, vf *out) {                 \
        const int n = hi - lo, mid = lo + n / 2;                                                                   \
        if (n <= (LIM)) {                                                                                          \
            CAT(KNAME, SUB)(ap, bp, lo, hi, out);                                                                  \
            return;                                                                                                \
        }                                                                                                          \
        vf L[PTR], R[PTR];                                                                                         \
        CAT(KNAME, SUB)(ap, bp, lo, mid, L);                                                                       \
        CAT(KNAME, SUB)(ap, bp, mid, hi, R);                                                                       \
        _Pragma("GCC unroll 4") for (int r = 0; r < PTR; r++) out[r] = L[r] + R[r];                                \
    }
PT_NODE(_pt_n8, _pt_leaf, 4)
PT_NODE(_pt_n16, _pt_n8, 8)
#undef PT_NODE

/* A node [lo, lo + n) of n <= PT_SEG products as a perfect tree (its shape
 * from gemm_pt_shape_of). At the depth d
 * where q = floor(n / 2^d) lies in [4, 7], the model's halving has made
 * nodes of q or q + 1 products (halving keeps every node of a depth at the
 * floor or the ceiling of n / 2^d), and every node above that depth has two
 * children. The 2^d leaves are taken in order four at a time, ((l0 + l1) +
 * (l2 + l3)), and those sums are paired as a binary counter pairs them (the
 * group's index's low bits say which pending sums it closes), the pending
 * sums in named registers. When every leaf has q products (n = q 2^d: K a
 * power of two, or 3, 5 or 7 times one) the leaves' offsets and trees are
 * constants; otherwise their starts come from the model's halving. */
#define PT_GROUP(Q, OFF)                                                                                      \
    do {                                                                                                      \
        vf l0[PTR], l1[PTR], l2[PTR], l3[PTR];                                                                \
        CAT(KNAME, _pt_n8)(ap + (size_t)(OFF(0)) * RBF, bp + (size_t)(OFF(0)) * PBF, 0, Q(0), l0);            \
        CAT(KNAME, _pt_n8)(ap + (size_t)(OFF(1)) * RBF, bp + (size_t)(OFF(1)) * PBF, 0, Q(1), l1);            \
        CAT(KNAME, _pt_n8)(ap + (size_t)(OFF(2)) * RBF, bp + (size_t)(OFF(2)) * PBF, 0, Q(2), l2);            \
        CAT(KNAME, _pt_n8)(ap + (size_t)(OFF(3)) * RBF, bp + (size_t)(OFF(3)) * PBF, 0, Q(3), l3);            \
        _Pragma("GCC unroll 4") for (int r = 0; r < PTR; r++) t[r] = (l0[r] + l1[r]) + (l2[r] + l3[r]);    \
    } while (0)
/* (PT_SEG <= 128: at most 32 leaves, 8 groups, three pending levels) */
#define PT_COUNTER(GROUP)                                                                                     \
    for (int gi = 0; gi < ng; gi++) {                                                                         \
        GROUP;                                                                                                \
        if (!(gi & 1)) {                                                                                      \
            _Pragma("GCC unroll 4") for (int r = 0; r < PTR; r++) p0[r] = t[r];                               \
            continue;                                                                                         \
        }                                                                                                     \
        _Pragma("GCC unroll 4") for (int r = 0; r < PTR; r++) t[r] = p0[r] + t[r];                            \
        if (!(gi & 2)) {                                                                                      \
            _Pragma("GCC unroll 4") for (int r = 0; r < PTR; r++) p1[r] = t[r];                               \
            continue;                                                                                         \
        }                                                                                                     \
        _Pragma("GCC unroll 4") for (int r = 0; r < PTR; r++) t[r] = p1[r] + t[r];                            \
        if (!(gi & 4)) {                                                                                      \
            _Pragma("GCC unroll 4") for (int r = 0; r < PTR; r++) p2[r] = t[r];                               \
            continue;                                                                                         \
        }                                                                                                     \
        _Pragma("GCC unroll 4") for (int r = 0; r < PTR; r++) t[r] = p2[r] + t[r];                            \
    }
KTARGET static void CAT(KNAME, _pt_perfect)(const float *ap0, const float *bp0, int lo, const gemm_pt_shape *sh, vf *out) {
    const int n = sh->n, d = sh->d, q = sh->q, nl = 1 << d;
    if (nl < 4) { /* n < 16: the nested form */
        CAT(KNAME, _pt_n16)(ap0, bp0, lo, lo + n, out);
        return;
    }
    const int ng = nl / 4; /* (a power of two: the last group's t is the node's sum) */
    const float *ap = ap0 + (size_t)lo * RBF, *bp = bp0 + (size_t)lo * PBF;
    vf t[PTR] = {0}, p0[PTR] = {0}, p1[PTR] = {0}, p2[PTR] = {0};
    if (sh->uniform) {
#define PT_UOFF(i) ((4 * gi + (i)) * QC)
#define PT_UQ(i) QC
#define PT_UCASE(QV)                                                                                          \
    case QV: {                                                                                                \
        enum { QC = QV };                                                                                     \
        PT_COUNTER(PT_GROUP(PT_UQ, PT_UOFF))                                                                  \
        break;                                                                                                \
    }
        switch (q) { PT_UCASE(4) PT_UCASE(5) PT_UCASE(6) PT_UCASE(7) }
#undef PT_UCASE
#undef PT_UOFF
#undef PT_UQ
    } else {
        const int *st = sh->st;
#define PT_GOFF(i) (st[4 * gi + (i)])
#define PT_GQ(i) (st[4 * gi + (i) + 1] - st[4 * gi + (i)])
        PT_COUNTER(PT_GROUP(PT_GQ, PT_GOFF))
#undef PT_GOFF
#undef PT_GQ
    }
#pragma GCC unroll 4
    for (int r = 0; r < PTR; r++) out[r] = t[r];
}
#undef PT_GROUP
#undef PT_COUNTER

/* The tree's top for nb <= PT_NB register blocks (A panels ap, ap +
 * astride, ...; B's panel bvp), of 8 rows but the last's nrl, and nh
 * 16-column halves of the panel (a panel's padding is not summed): a node
 * of more than PT_SEG products splits as the model splits it, its right
 * half's sums in the scratch's level lev (gemm_pt_levels); a node of at
 * most PT_SEG is summed for every block, its halves and row quarters in
 * turn, into t[block][row][half]. */
KTARGET static void CAT(KNAME, _pt_top)(const float *ap, size_t astride, int nb, int nrl, int nh, const float *bvp, int lo,
                                        int hi, vf t[][RBF][2], vf (*scr)[RBF][2], int lev) {
    const int n = hi - lo, mid = lo + n / 2;
    if (n <= PT_SEG) {
        gemm_pt_shape sh;
        gemm_pt_shape_of(n, &sh);
        for (int b = 0; b < nb; b++)
            for (int h = 0; h < nh; h++)
                for (int rg = 0; rg < (b < nb - 1 ? RBF : nrl); rg += PTR) {
                    vf u[PTR];
                    CAT(KNAME, _pt_perfect)(ap + (size_t)b * astride + rg, bvp + 16 * h, lo, &sh, u);
                    for (int r = 0; r < PTR; r++) t[b][rg + r][h] = u[r];
                }
        return;
    }
    vf(*R)[RBF][2] = scr + (size_t)lev * PT_NB;
    CAT(KNAME, _pt_top)(ap, astride, nb, nrl, nh, bvp, lo, mid, t, scr, lev + 1);
    CAT(KNAME, _pt_top)(ap, astride, nb, nrl, nh, bvp, mid, hi, R, scr, lev + 1);
    for (int b = 0; b < nb; b++)
        for (int r = 0; r < (b < nb - 1 ? RBF : nrl); r++)
            for (int h = 0; h < nh; h++) t[b][r][h] = t[b][r][h] + R[b][r][h];
}

KTARGET static void CAT(KNAME, _pt)(const gkf_args *g) {
    const size_t K = g->K;
    vf(*scr)[RBF][2] = (void *)(((uintptr_t)g->scratch + 63) & ~(uintptr_t)63); /* emu__gemm_pt_scratch */
    for (int j0 = g->j0; j0 < g->j1; j0 += PBF) {
        const float *bvp = g->bv + (size_t)(j0 / PBF) * K * PBF;
        const int nc = g->j1 - j0 < PBF ? g->j1 - j0 : PBF;
        for (int ib = g->i0; ib < g->i1; ib += RBF * PT_NB) {
            const int nb = (g->i1 - ib + RBF - 1) / RBF < PT_NB ? (g->i1 - ib + RBF - 1) / RBF : PT_NB;
            vf t[PT_NB][RBF][2]; /* (a panel has 8 rows, zeros past the last) */
            const int nrl = g->i1 - (ib + (nb - 1) * RBF) < RBF ? (g->i1 - (ib + (nb - 1) * RBF) + PTR - 1) / PTR * PTR : RBF;
            CAT(KNAME, _pt_top)(g->av + (size_t)(ib / RBF) * K * RBF, K * RBF, nb, nrl, (nc + 15) / 16, bvp, g->k0, g->k1, t,
                                scr, 0);
            for (int b = 0; b < nb; b++) {
                const int i0 = ib + b * RBF, nr = g->i1 - i0 < RBF ? g->i1 - i0 : RBF;
                for (int r = 0; r < nr; r++)
                    for (int h = 0; h < nc; h += 16) {
                        vf d;
                        CAT(KNAME, _c16)(&d, g->cin, g->ldc, i0 + r, j0 + h, nc - h);
                        d = d + t[b][r][h / 16];
                        const vfi none = (vfi){0};
                        CAT(KNAME, _out16)(g->out, g->flag, g->ldo, i0 + r, j0 + h, nc - h, &d, &none);
                    }
            }
        }
    }
}
#endif
