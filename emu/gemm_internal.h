/* SPDX-License-Identifier: MIT */
/* gemm_internal.h: the vectorised GEMM kernel's interface, shared by
 * gemm.c and gemm_kernel.c only (not installed). */
#ifndef FPEMU_GEMM_INTERNAL_H
#define FPEMU_GEMM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* One call of the vectorised kernel: rows [i0, i1), columns [j0, j1) (j0
 * and the row stride ldb multiples of 8), K range [k0, k1) in blocks of
 * `block`; A as exact values av and alignment powers ae (2^E, 0 = takes no
 * part), row-major with stride lda; B likewise [k][j] with stride ldb;
 * initial c per output from cin (f32, NULL = 0); block results rounded
 * toward zero to q bits; out/flag row-major with stride ldo (flag OR-ed with
 * 1 when the lane left the output's normal range: recompute it with the
 * scalar model). cin may equal out (in place, for K tiles). */
typedef struct gk_args {
    const double *av, *ae;
    size_t lda;
    const double *bv, *be;
    size_t ldb;
    int i0, i1, j0, j1, k0, k1;
    int block, nfrac, q, rd;
    double floor2;     /* 2^emax_floor, or 0 for none */
    double zero_c_e;   /* alignment power of a zero c: 2^emin, or (ignored) a power of
                        * two below every product's that keeps 2^nfrac / zero_c_e finite */
    double emin_d;     /* 2^emin of the output (min normal) */
    double ovf_d;      /* 2^(emax+1) of the output */
    const float *cin;
    size_t ldc;
    float *out;
    unsigned char *flag;
    size_t ldo;
} gk_args;
/* The f32 variant (16 lanes, int32 sums), on packed operands: A in panels
 * of GEMM_F_ROWS rows (rows padded with zeros), element (i, k) at
 * ((i / R) * K + k) * R + i % R; B in panels of GEMM_F_COLS columns,
 * element (k, j) at ((j / C) * K + k) * C + j % C. av/bv: the exact values
 * as floats; bw: the alignment exponent of b as a 16-bit word, log2(be) + 63,
 * or GEMM_F_NOPART for an element that takes no part (be = 0); aw: the same
 * for a with bias 64, the word repeated in both halves of an int32
 * (both NULL where the count pass, below, runs: it takes emax from its own
 * bytes, for the blocks it declines too). i0 a
 * multiple of R, j0 of C; cin/out/flag row-major with strides ldc/ldo
 * (columns up to j1 only); thr_w = nfrac + 1 (the biased exponent of
 * 2^(nfrac - 126)); see gemm_kernel.c for when it is exact. */
#define GEMM_F_ROWS 8
#define GEMM_F_COLS 32
#define GEMM_F_NOPART (-16384)
typedef struct gkf_args {
    const float *av;
    const int32_t *aw;
    const float *bv;
    const int16_t *bw;
    size_t K;
    int i0, i1, j0, j1, k0, k1;
    int block, nfrac, q, thr_w;
    int split;         /* sum each block in two halves (int32 each) and flag lanes whose total leaves int32 */
    int noinf;         /* the f32 kernel: no block result can reach inf (gemm.c run), so the blocks keep
                        * no running max of c's exponent */
    int exlo, exhi;    /* the exact-sum kernel: products are multiples of 2^exlo below 2^exhi */
    int exalo, exnda, exndb; /* its AMX form (isa 4): A's values are multiples of 2^exalo (B's of 2^(exlo -
                              * exalo)), their integers of exnda and exndb base-128 digits (each 1-3) */
    double *scratch;   /* the exact-sum kernel: emu__gemm_ex_scratch(...) bytes; the tree kernel:
                        * emu__gemm_pt_scratch(...) (the driver's, per job) */
    const float *cin;
    size_t ldc;
    float *out;
    unsigned char *flag;
    size_t ldo;
    int fuse_nfrac, fuse_rd, fuse_split; /* the fused variant only (emu__gemm_kernel_f32f) */
    /* The f32 kernel's count pass (AVX-512; gemm.c f32_kernel_ok's *count;
     * else NULL): lsb bytes. A value's lsb exponent q is that of its lowest
     * set bit (v = odd * 2^q), within [GEMM_F_LSB_QMIN, GEMM_F_LSB_QMAX]
     * (fp8, fp6, fp4); a's byte is q, plus GEMM_F_LSB_SIGN where a < 0; b's
     * is q + GEMM_F_LSB_BIAS, minus GEMM_F_LSB_SIGN where b > 0; zeros (and
     * padding) take GEMM_F_LSB_ZA and GEMM_F_LSB_ZB. The sum of a's byte and
     * b's, mod 256, is then q_a + q_b + GEMM_F_LSB_BIAS, in [8, 70], exactly
     * where the product is negative, and 84 or more where it is positive or
     * zero (see gemm_kernel.c). Layout, k in pairs (kp = k / 2, Kp = (K +
     * 1) / 2; a pair's missing second k is padding): B's byte of (k, j) at
     * ((j / C) * Kp + kp) * 2C + 2 (j % C) + k % 2; A's of (i, k) at
     * (((i / R) * Kp + kp) * R + i % R) * 4 + k % 2, repeated 2 bytes on
     * (gemm_f_byte_a, gemm_f_byte_b below). */
    const uint8_t *al, *bl;
    /* With them, the alignment exponents as signed bytes in the same
     * layout (log2 of ae or be; GEMM_F_XNOPART for an element that takes no
     * part, and padding): the count pass's emax, 64 products at a time. */
    const int8_t *ax, *bx;
} gkf_args;
#define GEMM_F_XNOPART (-128)
#define GEMM_F_LSB_QMIN (-16)
#define GEMM_F_LSB_QMAX 15
#define GEMM_F_LSB_SIGN 100
#define GEMM_F_LSB_BIAS 40
#define GEMM_F_LSB_ZA 200
#define GEMM_F_LSB_ZB 140
#define GEMM_F_LSB_TMAX 71 /* a threshold above every negative product's sum */
/* The byte layout above: the offset of A's byte of (i, k) (its repeat is 2
 * bytes on) and of B's byte of (k, j), for K columns of A (rows of B); k = K
 * (K odd) is the last pair's padding. */
static inline size_t gemm_f_byte_a(size_t K, size_t i, size_t k) {
    return (((i / GEMM_F_ROWS) * ((K + 1) / 2) + k / 2) * GEMM_F_ROWS + i % GEMM_F_ROWS) * 4 + k % 2;
}
static inline size_t gemm_f_byte_b(size_t K, size_t j, size_t k) {
    return ((j / GEMM_F_COLS) * ((K + 1) / 2) + k / 2) * 2 * GEMM_F_COLS + 2 * (j % GEMM_F_COLS) + k % 2;
}
void emu__gemm_kernel_f32(int isa, const gkf_args *g);
/* The packing's AVX-512 decoding of f16 and bf16 codes (gemm.c pack_tab16)
 * checked against the decode tables, every code, for both formats under
 * every combination of the model flags it honours: the number of
 * combinations that differ (0), or -1 where the CPU lacks AVX-512 (the
 * packing then never uses it). */
int emu__gemm_vdec_check(void);
/* Its fused variant (AMD CDNA3's two-stage block: gemm.c fused_kernel_ok):
 * the same passes over the products without c, then per lane the sum cut
 * at fuse_nfrac bits and c at nfrac bits below their larger exponent
 * (toward -inf with fuse_rd, else toward zero), added, rounded to nearest
 * even in f32; fuse_split: the products summed first as even and odd
 * halves at their own emax (cut toward zero to the larger); split and q
 * are not read. Flags as the f32 kernel's, and
 * results of magnitude at most 2^-126. See gemm_kernel.c. */
void emu__gemm_kernel_f32f(int isa, const gkf_args *g);
/* The fma-chain kernel (the reference kind fma-seq with f32 d: a chain of
 * f32 fma per output, k in order), on the same packed values (av, bv; the
 * exponent words and block parameters are not read); flag: the lane's result
 * is inf or NaN. */
void emu__gemm_kernel_fs(int isa, const gkf_args *g);
/* The exact-sum kernel (the reference kind exact, f32 d, rne, formats whose
 * products are multiples of 2^lo below 2^hi with (K + 1) * 2^(hi - lo) <=
 * 2^53): a chain of double fma per output over the whole chunk (one call per
 * chunk: K tiles would round), then one rounding to f32. lo/hi in the
 * args' exlo/exhi; flag: c is not a multiple of 2^lo below 2^hi, or the
 * result is inf or NaN. */
void emu__gemm_kernel_ex(int isa, const gkf_args *g);
/* The bytes of scratch one call of the exact-sum kernel needs for at most
 * `rows` rows and kn k (isa 4: the AMX form's digits; else the double
 * panels). */
size_t emu__gemm_ex_scratch(int isa, int rows, int kn, int nda, int ndb);
size_t emu__gemm_pt_scratch(int kn);
/* The AMX form's rows per call for chunks of kn k (a multiple of 16, from 16
 * to 1024: A's digits of a call, at most 64 MiB): B's digits are made once
 * per call, so the calls take many rows. */
int emu__gemm_ex_rows(int kn, int nda);
/* Base-128 digits of a format's values as integers (multiples of its
 * least value 2^(emin - mbits), below 2^(emax + 1)): 0 where more than 3
 * (the AMX form does not take the format). */
int emu__gemm_ex_digits(int emin, int mbits, int emax);
/* The pairwise-tree kernel (the reference kind pairwise: one tree over the
 * chunk, f32 rne additions, then c + tree; inputs whose products are f32
 * values), on the same packed values; one call per chunk; flag: the result
 * is inf or NaN. */
void emu__gemm_kernel_pt(int isa, const gkf_args *g);
/* The group kernel (block-scaled e2m1 with the MMA model's group rule:
 * NVFP4 on the b200), on the f32 kernel's packed values (av, bv; the
 * exponent words are not read; NULL with gi: the integer form reads its
 * bytes) and the block scales as magnitudes and
 * exponents: A's sav/sae (M x nsb, stride nsb), B's sbv/sbe (nsb x ldsb).
 * Groups of `group` elements from each block start (scale blocks of
 * sblock, a multiple of group),
 * blocks of `block` (a multiple of group); nfrac = group_nfrac; zero_c:
 * a zero c counts in emax at 2^-126. Outputs as gkf_args (flag: the lane
 * left f32's normal range). See gemm_kernel.c for why it is exact. */
typedef struct gkg_args {
    const float *av, *bv;
    size_t K;
    const float *sav, *sbv;
    const int32_t *sae, *sbe;
    size_t nsb, ldsb;
    int i0, i1, j0, j1, k0, k1;
    int block, group, nfrac, q, zero_c;
    int sblock;        /* the scale block: a multiple of group (scales of group gs at gs / sblock) */
    int wide;          /* scales are powers of two (e8m0): sav/sbv are not read, the exponents scale in double */
    const struct gkg_int *gi; /* the integer form's data (gemm.c build_gv; AVX-512 VNNI), or NULL */
    const float *cin;
    size_t ldc;
    float *out;
    unsigned char *flag;
    size_t ldo;
} gkg_args;
/* The group kernel's integer form (gemm_kernel.c, "the integer form"):
 * e2m1 values times 2 as bytes, 4 k to a 32-bit word (K padded with zeros
 * to a multiple of 16): A's words [Mp / RBF][kq][RBF] (signed), B's [Np /
 * PBF][kq][PBF] (plus 12: unsigned); per row of A and group of 16 k, -12
 * times the sum of its bytes (B's offset taken back). Per row and block b
 * of the call (k from b * block), and per column and block: the least
 * exponent L of the terms' unit (terms are integer multiples of 2^(LA +
 * LB)), each group's scale over its share of that unit (an integer: fa,
 * rb), 2^L in double, and in float where L is within GKG_F32_LMIN to
 * GKG_F32_LMAX (else 0); the largest scale exponent U (A: ua; B: cuy, with
 * clx, as the per-lane bounds of the fast test). Per tile of RBF rows
 * (rtile) and of 16 columns (ctile) and block: the bits of the largest fa
 * and rb (99: a scale that is not such an integer), the least of the
 * rows' la (the columns' clx), the largest of their ua (cuy), and whether
 * every L is in the float range. */
typedef struct {
    int32_t la, ua;
    float fa[4];
    float paf;
    double pa;
} gkg_row;
typedef struct {
    int32_t bits, lo, hi, f32;
} gkg_tile;
/* L's range for a block's end in float (gemm_kernel.c): 2^LA and 2^LB are
 * normal floats and 2^(LA + LB) at least 2^-149 */
#define GKG_F32_LMIN (-74)
#define GKG_F32_LMAX 40
typedef struct gkg_int {
    const int32_t *aq, *bq, *acor; /* acor: [Mp / RBF][kq / 4][RBF] */
    size_t kq;                     /* words per k row of a panel: K rounded up to 16, over 4 */
    int nbk;                       /* blocks: ceil(K / block) */
    const gkg_row *rows;           /* [Mp / RBF][nbk][RBF]: a register block's rows of a block side by side */
    const gkg_tile *rtile;         /* (Mp / RBF) x nbk */
    const int32_t *clx, *cuy;      /* nbk x Np: LB + nfrac + 127, UB + 23 - nfrac + 127 */
    const float *crb;              /* nbk x 4 x Np */
    const double *cpb;             /* nbk x Np: 2^LB */
    const float *cpf;              /* nbk x Np: 2^LB in float, or 0 (out of the float range) */
    const gkg_tile *ctile;         /* nbk x Np / 16 */
} gkg_int;
/* The CPU has AVX-512 VNNI (the group kernel's integer form). */
int emu__gemm_vnni(void);
/* Register blocks (RBF rows x 16 columns) x blocks the integer form has
 * summed without cuts [0] and handed to the f32 form [1], and of the first
 * those whose end ran in float [2], since the process began (for the
 * tests: that each happens). */
extern uint64_t emu__gemm_gv_blocks[3];
void emu__gemm_kernel_grp(int isa, const gkg_args *g);
/* The pairwise kernel (AMD CDNA2: mma.c dot_pairwise_blocks with ftz), on
 * the f32 kernel's packed values (av, bv; subnormals made +0 by gemm.c,
 * exponent words not read): blocks of `block` (<= 64) from k0, each a
 * pairwise tree of f32 products added to d, all in f32 RNE. fma: no
 * product can overflow (one fma may do a product and a sum); cthr: flag
 * the lanes whose c has 0 < |c| < cthr (bits of |c|; 0: none). Outputs as
 * gkf_args (flag: the result is not finite). See gemm_kernel.c for why it
 * is exact. */
typedef struct gkp_args {
    const float *av, *bv;
    size_t K;
    int i0, i1, j0, j1, k0, k1;
    int block, fma;
    uint32_t cthr;
    const float *cin;
    size_t ldc;
    float *out;
    unsigned char *flag;
    size_t ldo;
} gkp_args;
void emu__gemm_kernel_pw(int isa, const gkp_args *g);
int emu__gemm_kernel_best(void);         /* 1 generic, 2 avx2, 3 avx512, 4 avx512 and its integer units (AMX int8 tiles or VNNI) */
/* The process's permission to use AMX tile data, which Linux grants on
 * request (arch_prctl ARCH_REQ_XCOMP_PERM; signal frames grow by the 8 KiB
 * of tile data from then on): asked once, by the first call that would run
 * the AMX form (gemm.c). 1 granted, 0 not (or no AMX). */
int emu__gemm_amx_grant(void);
void emu__gemm_kernel(int isa, const gk_args *g);

#endif
