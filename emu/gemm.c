/* SPDX-License-Identifier: MIT */
/* gemm.c: the emulated low-precision GEMM (gemm.h): quantisation per
 * scaling recipe (recipe.c emu__quantize), the MMA model over K
 * (vectorised kernel or scalar model), promotion and dequantisation, on
 * pthreads; and the scaled GEMM on operands quantised already
 * (recipe.h emu__gemm_scaled, the training engine's), through the same
 * dequantisation code. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <stdatomic.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include "gemm.h"
#include "gemm_internal.h"
#include "recipe.h"
#include "internal.h"

#define KTILE 256  /* K extent of a kernel call (rounded to the model block) */
#define KTILE_F 256 /* the same for the f32 and group kernels: a B panel of 256 k (48 KiB) mostly in L1, and half the
                     * passes over the partial sums of 128 (2-6% at n = 2048) */
#define KTILE_PW 1024 /* the pairwise kernel's (mi250): each call's partial sums in and out, per register block, were
                      * about a tenth of its time at 256 (n = 2048: 0.209-0.211 s at 256, 0.183-0.186 s at 1024) */
#define KTILE_GV 1024 /* the group kernel's integer form: B's bytes of 1024 k (32 KiB); each call's partial sums in and
                      * out were 6-8% of its perf samples at 256 (n = 1024) */
#define ITILE 64   /* rows of a kernel call */

static void seterr(char *err, size_t len, const char *msg) {
    if (err && len) snprintf(err, len, "%s", msg);
}

/* ---- configuration ---------------------------------------------------------- */

int fpemu_gemm_config_init(fpemu_gemm_config *cfg, const char *model, const char *afmt, const char *bfmt, char *err,
                           size_t errlen) {
    memset(cfg, 0, sizeof *cfg);
    const fpemu_format *fa = fpemu_format_get(afmt, err, errlen);
    if (!fa) return -1;
    const fpemu_format *fb = fpemu_format_get(bfmt, err, errlen);
    if (!fb) return -1;
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0);
    if (fpemu_mma_model_preset(&cfg->model, model, fa, fb, f32, f32, err, errlen)) return -1;
    cfg->afmt = fa;
    cfg->bfmt = fb;
    cfg->sat = 1;
    cfg->scaling.kind = FPEMU_GEMM_SCALING_NONE;
    fpemu_scaling_current_opts_te(&cfg->scaling.cur);
    cfg->scaling.scale_a = cfg->scaling.scale_b = 1.0f;
    cfg->scaling.block_a_rows = 1;
    cfg->scaling.block_b_cols = 128;
    cfg->scaling.block_k = 128;
    cfg->scaling.block_eps = 1e-4f;
    return 0;
}

int fpemu_gemm_config_set_scaling(fpemu_gemm_config *cfg, const char *name, char *err, size_t errlen) {
    fpemu_gemm_scaling *s = &cfg->scaling;
    if (!strcmp(name, "none")) {
        s->kind = FPEMU_GEMM_SCALING_NONE;
    } else if (!strcmp(name, "tensor") || !strcmp(name, "tensor-te")) {
        s->kind = FPEMU_GEMM_SCALING_TENSOR;
        fpemu_scaling_current_opts_te(&s->cur);
    } else if (!strcmp(name, "tensor-torchao")) {
        s->kind = FPEMU_GEMM_SCALING_TENSOR;
        fpemu_scaling_current_opts_torchao(&s->cur);
    } else if (!strcmp(name, "given") || !strcmp(name, "delayed")) {
        s->kind = FPEMU_GEMM_SCALING_GIVEN;
    } else if (!strcmp(name, "rowwise") || !strcmp(name, "axiswise")) {
        s->kind = FPEMU_GEMM_SCALING_ROWWISE;
        fpemu_scaling_current_opts_torchao(&s->cur);
        s->cur.pow2 = 1; /* torchao rowwise: round_scales_to_power_of_2 */
    } else if (!strcmp(name, "blockwise") || !strcmp(name, "deepseek")) {
        s->kind = FPEMU_GEMM_SCALING_BLOCKWISE;
        s->block_a_rows = 1, s->block_b_cols = 128, s->block_k = 128, s->block_eps = 1e-4f, s->block_pow2 = 0;
        cfg->promote = 128;
    } else if (!strcmp(name, "mx-floor") || !strcmp(name, "mx")) {
        s->kind = FPEMU_GEMM_SCALING_MX;
        s->mx_rule = FPEMU_SCALING_MX_FLOOR;
    } else if (!strcmp(name, "mx-rceil")) {
        s->kind = FPEMU_GEMM_SCALING_MX;
        s->mx_rule = FPEMU_SCALING_MX_RCEIL;
    } else if (!strcmp(name, "nvfp4")) {
        s->kind = FPEMU_GEMM_SCALING_NVFP4;
    } else {
        seterr(err, errlen, "unknown scaling recipe (expected none, tensor, tensor-torchao, given, rowwise, blockwise, mx-floor, mx-rceil, nvfp4)");
        return -1;
    }
    return 0;
}

/* ceil(a / b) for a >= 0, b >= 1, without the overflow of (a + b - 1) / b */
static int cdiv(int a, int b) { return a / b + (a % b != 0); }

static int same_format(const fpemu_format *a, const fpemu_format *b) {
    if (a == b) return 1;
    if (!a || !b) return 0;
    return !strcmp(a->name, b->name) && a->bits == b->bits && a->container == b->container && a->pad == b->pad &&
           a->ebits == b->ebits && a->mbits == b->mbits && a->bias == b->bias && a->is_signed == b->is_signed &&
           a->has_negzero == b->has_negzero && a->has_subnormals == b->has_subnormals && a->inf == b->inf &&
           a->nan == b->nan;
}

static int sblock_of(const fpemu_gemm_config *cfg) {
    return cfg->scaling.kind == FPEMU_GEMM_SCALING_MX ? 32 : cfg->scaling.kind == FPEMU_GEMM_SCALING_NVFP4 ? 16 : 0;
}

int fpemu_gemm_check(const fpemu_gemm_config *cfg, int M, int N, int K, int lda, int transA, int ldb, int transB, int ldc,
                     int ldd, char *err, size_t errlen) {
    char buf[256];
    if (!cfg || !cfg->model.fa || !cfg->afmt || !cfg->bfmt) { seterr(err, errlen, "gemm: configuration not initialised (fpemu_gemm_config_init)"); return -1; }
    if (cfg->model.kind == FPEMU_MMA_KIND_INT) { seterr(err, errlen, "gemm: integer models are not supported by fpemu_gemm_f32"); return -1; }
    const fpemu_mma_model *m = &cfg->model;
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0);
    if (!same_format(cfg->afmt, m->fa) || !same_format(cfg->bfmt, m->fb)) {
        seterr(err, errlen, "gemm: afmt and bfmt must be the model's input formats (model.fa, model.fb)");
        return -1;
    }
    if (!same_format(m->fc, f32) || !same_format(m->fd, f32)) { seterr(err, errlen, "gemm: the model's c and d formats must be f32"); return -1; }
    if ((unsigned)m->kind > FPEMU_MMA_KIND_PAIRWISE || m->block < 0 || m->out_mant < 0 || m->out_mant > m->fd->mbits ||
        m->outf.mbits != m->out_mant || (m->kind == FPEMU_MMA_KIND_BLOCK && (m->nfrac < 1 || m->nfrac > 60))) {
        seterr(err, errlen, "gemm: model parameters out of range (edit the model with fpemu_mma_model_set, or call fpemu_mma_model_finish)");
        return -1;
    }
    if (M < 0 || N < 0 || K < 0) { seterr(err, errlen, "gemm: M, N, K must be >= 0"); return -1; }
    if (M > INT_MAX - 64 || N > INT_MAX - 64) { seterr(err, errlen, "gemm: M and N must be below 2^31 - 64 (rows and columns are padded)"); return -1; }
    if (lda < (transA ? M : K) || ldb < (transB ? K : N) || ldc < N || ldd < N) {
        snprintf(buf, sizeof buf, "gemm: leading dimensions too small (lda >= %d, ldb >= %d, ldc/ldd >= %d)", transA ? M : K,
                 transB ? K : N, N);
        seterr(err, errlen, buf);
        return -1;
    }
    if (cfg->promote < 0) { seterr(err, errlen, "gemm: promote must be >= 0"); return -1; }
    const fpemu_gemm_scaling *s = &cfg->scaling;
    if ((unsigned)s->kind > FPEMU_GEMM_SCALING_NVFP4) { seterr(err, errlen, "gemm: unknown scaling kind"); return -1; }
    if (s->kind == FPEMU_GEMM_SCALING_MX && (unsigned)s->mx_rule > FPEMU_SCALING_MX_RCEIL) { seterr(err, errlen, "gemm: unknown MX scale rule (expected FLOOR or RCEIL)"); return -1; }
    if (s->kind == FPEMU_GEMM_SCALING_BLOCKWISE) {
        if (s->block_k < 1 || s->block_a_rows < 1 || s->block_b_cols < 1) { seterr(err, errlen, "gemm: blockwise tile sizes must be >= 1"); return -1; }
        if (cfg->promote != s->block_k) { seterr(err, errlen, "gemm: blockwise scaling promotes every block_k elements (set promote = block_k)"); return -1; }
    }
    int sb = sblock_of(cfg);
    if (sb && cfg->promote % sb) {
        snprintf(buf, sizeof buf, "gemm: the promotion interval must be a multiple of the scale block (%d)", sb);
        seterr(err, errlen, buf);
        return -1;
    }
    if (s->kind == FPEMU_GEMM_SCALING_NVFP4 && (strcmp(cfg->afmt->name, "e2m1") || strcmp(cfg->bfmt->name, "e2m1"))) {
        seterr(err, errlen, "gemm: nvfp4 scaling needs e2m1 elements for A and B");
        return -1;
    }
    if (s->kind == FPEMU_GEMM_SCALING_GIVEN && !(s->scale_a > 0 && s->scale_b > 0 && isfinite(s->scale_a) && isfinite(s->scale_b))) {
        seterr(err, errlen, "gemm: given scales must be finite and > 0");
        return -1;
    }
    return 0;
}

/* ---- quantised operands ------------------------------------------------------ */

typedef struct {
    const fpemu_gemm_config *cfg;
    int M, N, K, Np, nsb;   /* nsb: scale blocks along K (MX/NVFP4) */
    uint64_t *Ac, *Btc;     /* codes: A M x K, B^T N x K; or, where nat, K x M and K x N */
    void *An, *Bn;          /* or, where ncw, the same in their format's container (Ac, Btc NULL) */
    int ncw[2];             /* A's (0), B's (1) bytes per code in An, Bn (1, 2, 4), or 0 (Ac, Btc) */
    int nat[2];             /* A's, B's codes lie K x R, as the caller's transposed A or untransposed
                             * B does; for the readers, code_run, code_vec, codes_to_rows (quantise) */
    double *av, *ae;        /* M x K */
    double *bv, *be;        /* K x Np */
    int use_f;              /* the f32 kernel: packed panels (gemm.h gkf_args) */
    int f_split;            /* its blocks summed in two halves (f32_kernel_ok) */
    int f_count;            /* its AVX-512 count pass: build the lsb words (f32_kernel_ok) */
    int f_noinf;            /* its block results cannot reach inf (run; gkf_args.noinf) */
    int use_fz;             /* its fused variant (fused_kernel_ok: CDNA3's two-stage blocks) */
    int f_check;            /* the formats' range does not prove it exact: check the data's */
    int f_wlo[2], f_whi[2]; /* A, B: least and greatest exponent word of a nonzero packed value (f_check) */
    int f_bad[2];           /* A, B: a value that is not a float, or a block scale not a power of two */
    int use_g;              /* the group kernel (NVFP4 with the group rule): f32 panels (none with use_gv) and the scales below */
    int x_alo, x_nda, x_ndb; /* the exact-sum kernel's AMX form: A's least value 2^x_alo, the digits of A and B (0: not taken), */
    int x_rows;              /* and the rows of its calls (emu__gemm_ex_rows of the chunk length) */
    int vk, x_lo, x_hi;     /* the kernel on values alone (values_kernel: VK_*), on the f32 panels;
                             * the exact-sum kernel's product bounds 2^lo, 2^hi */
    float *gsav, *gsbv;     /* scale magnitudes: A's M x nsb, B's nsb x Np */
    int32_t *gsae, *gsbe;   /* their alignment exponents */
    int use_gv;             /* the group kernel's integer form (AVX-512 VNNI): gi, built by build_gv, and no f32 panels */
    gkg_int gi;
    int32_t *gv_aq, *gv_bq, *gv_acor, *gv_clx, *gv_cuy;
    gkg_tile *gv_rtile, *gv_ctile;
    gkg_row *gv_rows;
    float *gv_crb, *gv_cpf;
    double *gv_cpb;
    float *avf, *bvf;
    int32_t *aw;
    int16_t *bw;
    uint8_t *al, *bl;       /* the count pass's lsb bytes (gemm_internal.h), or NULL */
    int8_t *ax, *bx;        /* and its exponent bytes */
    unsigned char *arow_sp, *bcol_sp; /* rows/columns holding inf/NaN */
    const fpemu_format *sfmt;
    int sblock;
    uint64_t *sa, *sbt;     /* M x nsb, N x nsb scale codes */
    /* dequantisation (recipe.h emu__gemm_scaled): decode factors per row of A
     * and of B^T and per K block of kb (nkb blocks); NULL: none */
    const float *da, *db;
    float *da_own, *db_own;
    int kb, nkb;
    int rowseq;             /* no promotion: fl32(fl32(acc * db) * da) (cuBLASLt's outer-vector order), else fl32(acc * fl32(da * db)) */
    int c_in_mma;           /* C is the MMA's c input */
    int use_pw;             /* the pairwise kernel (CDNA2), on the f32 kernel's panels (use_f set too) */
    int pw_fma;             /* pw_select: no product overflows f32 (gkp_args fma) */
    int vpack;              /* the packing may use AVX-512 (the kernels' instruction set is) */
    uint32_t pw_cthr;       /* pw_select: gkp_args cthr */
    float smin[2];          /* A's and B's smallest encode scale (emu_quant smin) */
} qops;

static void big_free(void *p);

static void qops_free(qops *q) {
    big_free(q->Ac), big_free(q->Btc), big_free(q->An), big_free(q->Bn), free(q->av), free(q->ae), free(q->bv), free(q->be);
    free(q->arow_sp), free(q->bcol_sp), free(q->sa), free(q->sbt), free(q->da_own), free(q->db_own);
    big_free(q->avf), big_free(q->aw), big_free(q->bvf), big_free(q->bw), big_free(q->al), big_free(q->bl);
    big_free(q->ax), big_free(q->bx);
    free(q->gsav), free(q->gsbv), free(q->gsae), free(q->gsbe);
    big_free(q->gv_aq), big_free(q->gv_bq), free(q->gv_acor), free(q->gv_rtile), free(q->gv_clx), free(q->gv_cuy);
    free(q->gv_ctile), free(q->gv_rows), free(q->gv_crb), free(q->gv_cpb), free(q->gv_cpf);
    memset(q, 0, sizeof *q);
}

/* Exact value and alignment power of a code under the model's input rules
 * (mma.c decode): returns 1 for inf/NaN. */
static int decode_elem(const fpemu_mma_model *m, const fpemu_format *f, uint64_t code, double *v, double *e) {
    if (m->tf32_truncate && f->ebits == 8 && f->mbits == 23 && f->pad == 0) {
        fpemu_class k0 = fpemu_classify(f, code);
        if (k0 != FPEMU_CLASS_QNAN && k0 != FPEMU_CLASS_SNAN) code &= ~(uint64_t)0x1FFF;
    }
    fpemu_class k = fpemu_classify(f, code);
    if (k == FPEMU_CLASS_INF || k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN) { *v = 0, *e = 0; return 1; }
    int s, ex;
    uint64_t sig;
    fpemu_unpack(f, code, &s, &sig, &ex);
    int zero = k == FPEMU_CLASS_ZERO || (m->flush_subnormals && k == FPEMU_CLASS_SUBNORMAL);
    int E = k == FPEMU_CLASS_NORMAL || !f->has_subnormals ? ex + f->mbits : f->emin;
    *v = zero ? (s ? -0.0 : 0.0) : ldexp((double)sig, ex) * (s ? -1 : 1);
    *e = zero && !m->zero_product ? 0 : ldexp(1.0, E);
    return 0;
}

/* decode_elem for a format laid out as f32 with its low fraction bits cut
 * (tf32: sign, 8 exponent bits of bias 127, subnormals, IEEE inf and NaN),
 * from the bits, without the generic unpacking: the f32 kernel's packing of
 * a 19-bit format, which has no decode table. */
static int f32_layout(const fpemu_format *f) {
    return f->container == 32 && f->ebits == 8 && f->bias == 127 && f->mbits + f->pad == 23 && f->bits == 32 - f->pad &&
           f->is_signed && f->has_subnormals && f->inf == FPEMU_INF_IEEE && f->nan == FPEMU_NANS_IEEE;
}
static int decode_f32_layout(const fpemu_mma_model *m, const fpemu_format *f, uint64_t code, double *v, double *e) {
    uint32_t u = (uint32_t)(emu__strip(f, code) << f->pad);
    uint32_t ex = (u >> 23) & 0xFF;
    if (ex == 0xFF) { *v = 0, *e = 0; return 1; } /* inf, NaN */
    if (ex == 0 && ((u & 0x7FFFFF) == 0 || m->flush_subnormals)) {
        *v = u >> 31 ? -0.0 : 0.0;
        *e = m->zero_product ? ldexp(1.0, f->emin) : 0;
        return 0;
    }
    float x;
    memcpy(&x, &u, 4);
    *v = x;
    uint64_t eb = (uint64_t)((ex ? (int)ex - 127 : f->emin) + 1023) << 52; /* 2^E, E = the exponent or emin */
    memcpy(e, &eb, 8);
    return 0;
}

/* Alignment power of a scale code (its unbiased exponent, or emin). */
static double scale_pow(const fpemu_format *f, uint64_t code, double *val) {
    fpemu_class k = fpemu_classify(f, code);
    int s, ex;
    uint64_t sig;
    fpemu_unpack(f, code, &s, &sig, &ex);
    *val = fabs(fpemu_to_double(f, code));
    int E = k == FPEMU_CLASS_NORMAL || !f->has_subnormals ? ex + f->mbits : f->emin;
    return ldexp(1.0, E);
}

/* One operand of quantise: its rows (A's, or B^T's) copied out of the
 * caller's layout, their amax, and emu__quantize; or (cols) B's MX or
 * NVFP4 blocks quantised down its columns as it lies (emu__quantize_cols). */
typedef struct {
    const fpemu_gemm_scaling *s;
    const fpemu_format *f;
    const float *src;
    int ld, trans, rows, K, tile, sat, isB, cols;
    emu_quant *o;
    float amax;
    int rc;
} qside;

/* The GEMM's large work buffers (the copied rows, the codes, the packed
 * panels, the partial sums and flags: about 160 MB at n = 2048), with
 * big_alloc/big_free:
 * - blocks of 4 MiB and more are aligned to 2 MiB and, where Linux offers
 *   transparent huge pages on request, asked for them (a fault per 2 MiB
 *   rather than per 4 KiB); blocks from WS_MIN (256 KiB) up are rounded up
 *   to 64 KiB and aligned to a page;
 * - a freed one is kept for the next call, up to WS_CAP bytes in WS_SLOTS
 *   blocks, instead of going back to the system: memory fresh from the
 *   system is faulted in and cleared by the kernel page by page, which took
 *   6-30% of a call at n = 2048 on the dev VM (perf), and at n = 512 (2 MB
 *   blocks, which glibc's malloc gave back and took again call after call)
 *   the faults were 8% of b_gemm's samples. A block is reused for a request
 *   of at least half its size; the cache is emptied at exit.
 * Each block starts with a 64-byte header holding its size (0: not
 * cacheable, from malloc). */
#define WS_MIN ((size_t)256 << 10)
#define WS_HUGE ((size_t)4 << 20)
#define WS_CAP ((size_t)256 << 20)
#define WS_SLOTS 32
#define WS_HDR ((size_t)64)
static pthread_mutex_t ws_lock = PTHREAD_MUTEX_INITIALIZER;
static void *ws_blk[WS_SLOTS];
static size_t ws_len[WS_SLOTS], ws_bytes;

static void *big_alloc(size_t n, int zero) {
    if (n + WS_HDR < n) return NULL;
    if (n < WS_MIN) {
        char *b = zero ? calloc(n + WS_HDR, 1) : malloc(n + WS_HDR);
        if (!b) return NULL;
        *(size_t *)b = 0;
        return b + WS_HDR;
    }
    const int huge = n >= WS_HUGE;
    const size_t align = huge ? (size_t)2 << 20 : (size_t)64 << 10, rn = (n + WS_HDR + align - 1) & ~(align - 1);
    char *b = NULL;
    pthread_mutex_lock(&ws_lock);
    int best = -1;
    for (int i = 0; i < WS_SLOTS; i++)
        if (ws_blk[i] && ws_len[i] >= rn && ws_len[i] / 2 <= rn && (best < 0 || ws_len[i] < ws_len[best])) best = i;
    if (best >= 0) b = ws_blk[best], ws_blk[best] = NULL, ws_bytes -= ws_len[best];
    pthread_mutex_unlock(&ws_lock);
    if (!b) {
        void *v = NULL;
        if (posix_memalign(&v, huge ? align : (size_t)4096, rn)) return NULL;
        b = v;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (huge) madvise(b, rn, MADV_HUGEPAGE);
#endif
        *(size_t *)b = rn;
    }
    if (zero) memset(b + WS_HDR, 0, n);
    return b + WS_HDR;
}

static void big_free(void *p) {
    if (!p) return;
    char *b = (char *)p - WS_HDR;
    size_t rn = *(size_t *)b;
    if (rn) {
        pthread_mutex_lock(&ws_lock);
        int slot = -1;
        for (int i = 0; i < WS_SLOTS && slot < 0; i++)
            if (!ws_blk[i]) slot = i;
        if (slot >= 0 && ws_bytes + rn <= WS_CAP) ws_blk[slot] = b, ws_len[slot] = rn, ws_bytes += rn, b = NULL;
        pthread_mutex_unlock(&ws_lock);
    }
    free(b);
}

/* fork() while another thread holds ws_lock would leave it held in the
 * child: take it around the fork, as glibc does for malloc's locks. */
static void ws_fork_prepare(void) { pthread_mutex_lock(&ws_lock); }
static void ws_fork_done(void) { pthread_mutex_unlock(&ws_lock); }
__attribute__((constructor)) static void ws_init(void) { pthread_atfork(ws_fork_prepare, ws_fork_done, ws_fork_done); }

__attribute__((destructor)) static void ws_release(void) {
    pthread_mutex_lock(&ws_lock);
    for (int i = 0; i < WS_SLOTS; i++) free(ws_blk[i]), ws_blk[i] = NULL;
    ws_bytes = 0;
    pthread_mutex_unlock(&ws_lock);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* dst[i][j] = src[j][i] for a 16 x 16 tile (row strides ld, ldd): four
 * rounds of shuffles (32-bit, 64-bit, then 128-bit lanes twice). */
__attribute__((target("avx512f"))) static void transpose16_avx512(const float *src, size_t ld, float *dst, size_t ldd) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + (size_t)i * ld);
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
        __m512d c = _mm512_castps_pd(t[4 * i + 2]), e = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, e));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, e));
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            t[8 * i + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + j + 4], 0x88);
            t[8 * i + j + 4] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + j + 4], 0xdd);
        }
    for (int j = 0; j < 8; j++) {
        _mm512_storeu_ps(dst + (size_t)j * ldd, _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88));
        _mm512_storeu_ps(dst + (size_t)(j + 8) * ldd, _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd));
    }
}
#endif

/* fn on A's side (args[0]) and on B's (args[1]): on two threads when
 * threaded (emu__parallel), else one after the other. The quantisation and
 * the packing take two where the GEMM runs on more than one (nthreads_of)
 * and B is large enough (sides_threaded). */
static int nthreads_of(const fpemu_gemm_config *cfg, int M);
static int sides_threaded(const qops *q) { return nthreads_of(q->cfg, q->M) > 1 && (size_t)q->N * q->K >= 65536; }
static void both_sides(int threaded, void *(*fn)(void *), void *args, size_t size) {
    if (threaded) emu__parallel(2, fn, args, size);
    else fn(args), fn((char *)args + size);
}

/* Rows [r0, r1) of X (R x K, row r = column r of src, a K x R array of
 * row stride ld): a transposed copy (B^T of a row-major B, rows of a
 * transposed A), 16 rows at a time so that each source row is read in runs
 * of 16. */
static void transpose_rows(const float *src, size_t ld, float *X, int K, int r0, int r1) {
    int avx512 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    avx512 = __builtin_cpu_supports("avx512f") != 0;
#endif
    for (int a = r0; a < r1; a += 16) {
        int b = a + 16 < r1 ? a + 16 : r1, k = 0;
#if defined(__x86_64__) && defined(__GNUC__)
        if (avx512 && b - a == 16)
            for (; k + 16 <= K; k += 16) transpose16_avx512(src + (size_t)k * ld + a, ld, X + (size_t)a * K + k, (size_t)K);
#endif
        for (; k < K; k++)
            for (int r = a; r < b; r++) X[(size_t)r * K + k] = src[(size_t)k * ld + r];
    }
}

/* One thread's half of the transposed copies quantise makes before the
 * sides are quantised (X[s] NULL: side s needs none). */
typedef struct {
    const float *src[2];
    size_t ld[2];
    float *X[2];
    int R[2], K, half;
} tcopy;
static void *transpose_half(void *arg) {
    tcopy *t = arg;
    for (int s = 0; s < 2; s++) {
        if (!t->X[s]) continue;
        int mid = (t->R[s] / 2 + 15) / 16 * 16; /* a multiple of 16: whole tiles on each side of it */
        mid = mid < t->R[s] ? mid : t->R[s];
        transpose_rows(t->src[s], t->ld[s], t->X[s], t->K, t->half ? mid : 0, t->half ? t->R[s] : mid);
    }
    return NULL;
}

/* A side's amax and cast, X its R x K rows: the amax first where the
 * recipe needs it (TENSOR's and NVFP4's tensor scales take it:
 * emu_quant.amax); without
 * scaling, the cast's own count, the largest finite magnitude, which is
 * fpemu_scaling_amax_f32's where no input is inf or NaN (the statistics
 * are this call's, from zero) */
static void side_cast(qside *d, const float *X, int R, int K) {
    const fpemu_cast_stats *st = d->o->st;
    const int none = d->s->kind == FPEMU_GEMM_SCALING_NONE;
    if (!none) d->amax = fpemu_scaling_amax_f32(X, (size_t)R * K, 1), d->o->amax = &d->amax;
    d->rc = emu__quantize(d->s, d->f, R, K, X, d->tile, d->sat, NULL, d->o, NULL, 0);
    if (none) d->amax = st->nonfinite_in == 0 ? (float)st->amax : fpemu_scaling_amax_f32(X, (size_t)R * K, 1);
}

static void *quantise_side(void *arg) {
    qside *d = arg;
    int R = d->rows, K = d->K;
    if (d->cols) { /* (B, K x R as it lies) */
        d->amax = emu__amax_cols(d->src, (size_t)d->ld, K, R), d->o->amax = &d->amax;
        d->rc = emu__quantize_cols(d->s, d->f, K, R, d->src, (size_t)d->ld, d->o, NULL, 0);
        return NULL;
    }
    const int tr = d->isB ? !d->trans : d->trans;
    if (!tr && (d->ld == K || R <= 1)) { /* the rows already lie one after another: quantise them in place */
        side_cast(d, d->src, R, K);
        return NULL;
    }
    float *X = big_alloc(sizeof(float) * ((size_t)R * K + 1), 0);
    if (!X) { d->rc = -1; return NULL; }
    if (tr) {
        transpose_rows(d->src, (size_t)d->ld, X, K, 0, R);
    } else {
        for (int r = 0; r < R; r++) memcpy(X + (size_t)r * K, d->src + (size_t)r * d->ld, sizeof(float) * (size_t)K);
    }
    side_cast(d, X, R, K);
    big_free(X);
    return NULL;
}

/* Does B (K x N, transposed or not) go through emu__quantize_cols: MX or
 * NVFP4 blocks, B row-major, e2m1 on both sides with the group rule (the
 * group kernel, whose packing reads byte codes in B's layout: pack_tab8,
 * AVX-512 VBMI), more than one row and column? */
static int cols_ok(const fpemu_gemm_config *cfg, int transB, int N, int K) {
    const fpemu_gemm_scaling *s = &cfg->scaling;
    int x86 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    x86 = __builtin_cpu_supports("avx512vbmi") != 0;
#endif
    return x86 && (s->kind == FPEMU_GEMM_SCALING_MX || s->kind == FPEMU_GEMM_SCALING_NVFP4) && !transB && N > 1 && K > 1 &&
           cfg->model.group > 0 && emu__is_ocp_e2m1(cfg->afmt) && emu__is_ocp_e2m1(cfg->bfmt) && cfg->bfmt->container == 8;
}

/* Quantise A (rows) and B (columns) per the recipe into codes and scales
 * (recipe.c emu__quantize: A as it is, B as its transpose, or where
 * cols_ok B as it lies through emu__quantize_cols), and the decode
 * factors per row of A and of B^T the dequantisation takes. A here and B
 * on a second thread where the GEMM has more than one (the two are
 * independent: their own outputs and statistics). */
static int quantise(qops *q, const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda, int transA,
                    const float *B, int ldb, int transB, fpemu_gemm_stats *st) {
    const fpemu_gemm_scaling *s = &cfg->scaling;
    const fpemu_format *fa = cfg->afmt, *fb = cfg->bfmt;
    q->cfg = cfg, q->M = M, q->N = N, q->K = K;
    /* each side's codes stay in their format's container (ncw: formats of
     * at most 32 bits); where the recipe casts element by element with one
     * factor for the whole tensor (NONE, TENSOR, GIVEN), they lie as the
     * caller's array does: a transposed A or an untransposed B K x R (nat),
     * without a transposed copy. The same codes, amax and counts */
    const int elementwise =
        s->kind == FPEMU_GEMM_SCALING_NONE || s->kind == FPEMU_GEMM_SCALING_TENSOR || s->kind == FPEMU_GEMM_SCALING_GIVEN;
    const int cols = cols_ok(cfg, transB, N, K);
    for (int sdx = 0; sdx < 2; sdx++) {
        const fpemu_format *f = sdx ? fb : fa;
        const size_t n = (size_t)(sdx ? N : M) * K;
        q->ncw[sdx] = f->container <= 32 ? f->container / 8 : 0;
        q->nat[sdx] = elementwise && (sdx ? !transB : transA) && (sdx ? N : M) > 1 && K > 1;
        /* B's MX or NVFP4 blocks quantised as B lies (no transposed copy)
         * where its codes are bytes the group kernel's packing reads in
         * that layout (pack_tab8); any other reader takes them as nat */
        if (sdx && cols) q->nat[1] = 1;
        void *p = big_alloc((q->ncw[sdx] ? (size_t)q->ncw[sdx] : sizeof(uint64_t)) * (n + 1), 0);
        if (!p) return -1;
        if (q->ncw[sdx]) *(sdx ? &q->Bn : &q->An) = p;
        else *(sdx ? &q->Btc : &q->Ac) = p;
    }
    st->scale_a = st->scale_b = 1.0f;
    q->c_in_mma = cfg->promote == 0 && (s->kind == FPEMU_GEMM_SCALING_NONE || s->kind == FPEMU_GEMM_SCALING_MX);
    /* B goes through as its transpose (N x K): its GIVEN scale is scale_b,
     * its blockwise tiles are block_b_cols rows of B^T */
    fpemu_gemm_scaling sB = *s;
    sB.scale_a = s->scale_b;
    /* decode factors: from the quantisation per row and K block (ROWWISE,
     * BLOCKWISE; TENSOR and GIVEN: 1/scale on every row); NVFP4's block scales
     * go into the MMA and its tensor scales are set below */
    int rows_dec = s->kind == FPEMU_GEMM_SCALING_TENSOR || s->kind == FPEMU_GEMM_SCALING_GIVEN ||
                   s->kind == FPEMU_GEMM_SCALING_ROWWISE || s->kind == FPEMU_GEMM_SCALING_BLOCKWISE;
    int dq = rows_dec || s->kind == FPEMU_GEMM_SCALING_NVFP4;
    q->nkb = 1, q->kb = K > 0 ? K : 1;
    if (s->kind == FPEMU_GEMM_SCALING_BLOCKWISE) q->nkb = cdiv(K, s->block_k), q->kb = s->block_k;
    q->rowseq = s->kind == FPEMU_GEMM_SCALING_ROWWISE;
    if (dq) {
        q->da = q->da_own = malloc(sizeof(float) * ((size_t)M * q->nkb + 1));
        q->db = q->db_own = malloc(sizeof(float) * ((size_t)N * q->nkb + 1));
        if (!q->da_own || !q->db_own) return -1;
    }
    if (s->kind == FPEMU_GEMM_SCALING_MX || s->kind == FPEMU_GEMM_SCALING_NVFP4) {
        q->sblock = sblock_of(cfg), q->nsb = cdiv(K, q->sblock);
        q->sfmt = fpemu_format_get(s->kind == FPEMU_GEMM_SCALING_MX ? "e8m0" : "e4m3", NULL, 0);
        q->sa = malloc(sizeof(uint64_t) * ((size_t)M * q->nsb + 1));
        q->sbt = malloc(sizeof(uint64_t) * ((size_t)N * q->nsb + 1));
        if (!q->sa || !q->sbt) return -1;
    }
    emu_quant oa = {.codes = q->Ac, .ncodes = q->An, .dec = rows_dec && !q->nat[0] ? q->da_own : NULL, .scode = q->sa, .st = &st->a};
    emu_quant ob = {.codes = q->Btc, .ncodes = q->Bn, .dec = rows_dec && !q->nat[1] ? q->db_own : NULL, .scode = q->sbt, .st = &st->b};
    qside sd[2] = {{.s = s, .f = fa, .src = A, .ld = lda, .trans = transA, .rows = M, .K = K, .tile = s->block_a_rows,
                    .sat = cfg->sat, .isB = 0, .o = &oa},
                   {.s = &sB, .f = fb, .src = B, .ld = ldb, .trans = transB, .rows = N, .K = K, .tile = s->block_b_cols,
                    .sat = cfg->sat, .isB = 1, .o = &ob}};
    /* a nat side is quantised as it lies, K x R (its decode factors, one
     * per row of A or column of B, are written below) */
    for (int sdx = 0; sdx < 2; sdx++)
        if (q->nat[sdx] && !(sdx && cols)) sd[sdx].K = sd[sdx].rows, sd[sdx].rows = K, sd[sdx].trans = sd[sdx].isB; /* (tr = 0) */
    sd[1].cols = cols;
    const int threaded = sides_threaded(q);
    /* on two threads, a side's transposed copy (B^T of a row-major B, or a
     * transposed A) is made first, each thread half of it: the copy was
     * one side's alone, and the quantisation after it is the same work on
     * both (at n = 512, B's side took 0.46 ms against A's 0.28) */
    float *xt[2] = {NULL, NULL};
    if (threaded) {
        tcopy tc[2];
        memset(tc, 0, sizeof tc);
        for (int sdx = 0; sdx < 2; sdx++) {
            qside *d = &sd[sdx];
            if (!(d->isB ? !d->trans : d->trans) || d->rows <= 1 || d->cols) continue;
            if (!(xt[sdx] = big_alloc(sizeof(float) * ((size_t)d->rows * K + 1), 0))) continue; /* quantise_side tries */
            for (int h = 0; h < 2; h++)
                tc[h].src[sdx] = d->src, tc[h].ld[sdx] = (size_t)d->ld, tc[h].X[sdx] = xt[sdx], tc[h].R[sdx] = d->rows;
        }
        if (xt[0] || xt[1]) {
            tc[0].K = tc[1].K = K, tc[1].half = 1;
            emu__parallel(2, transpose_half, tc, sizeof tc[0]);
            for (int sdx = 0; sdx < 2; sdx++)
                if (xt[sdx]) sd[sdx].src = xt[sdx], sd[sdx].ld = K, sd[sdx].trans = sd[sdx].isB; /* rows in place now */
        }
    }
    both_sides(threaded, quantise_side, sd, sizeof sd[0]);
    big_free(xt[0]), big_free(xt[1]);
    st->amax_a = sd[0].amax, st->amax_b = sd[1].amax;
    q->smin[0] = oa.smin, q->smin[1] = ob.smin;
    int rc = sd[0].rc || sd[1].rc ? -1 : 0;
    for (int sdx = 0; !rc && rows_dec && sdx < 2; sdx++) /* (as emu__quantize writes them for rows) */
        for (int r = 0; q->nat[sdx] && r < (sdx ? N : M); r++) (sdx ? q->db_own : q->da_own)[r] = 1.0f / (sdx ? ob : oa).tensor_enc;
    if (!rc) {
        switch (s->kind) {
        case FPEMU_GEMM_SCALING_TENSOR:
        case FPEMU_GEMM_SCALING_GIVEN: st->scale_a = oa.tensor_enc, st->scale_b = ob.tensor_enc; break;
        case FPEMU_GEMM_SCALING_NVFP4: { /* the f32 tensor scales, dequantised in the epilogue */
            st->scale_a = oa.tensor_enc, st->scale_b = ob.tensor_enc;
            float ia = 1.0f / oa.tensor_enc, ib = 1.0f / ob.tensor_enc;
            for (int i = 0; i < M; i++) q->da_own[i] = ia;
            for (int j = 0; j < N; j++) q->db_own[j] = ib;
            break;
        }
        default: break;
        }
    }
    return rc;
}

/* The readers of a side's codes (pass 0: A, 1: B), whatever their width
 * (ncw) and layout (nat). Storage index i is r K + k, or k R + r where
 * nat. cload: code i of an array of cw-byte codes. */
static inline __attribute__((always_inline)) uint64_t cload(const void *p, int cw, size_t i) {
    return cw == 1 ? ((const uint8_t *)p)[i] : cw == 2 ? ((const uint16_t *)p)[i] : cw == 4 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}
static inline uint64_t code_at(const qops *q, int pass, size_t i) {
    return q->ncw[pass] ? cload(pass ? q->Bn : q->An, q->ncw[pass], i) : (pass ? q->Btc : q->Ac)[i];
}

/* n codes from storage index i on: in place where they are 64-bit, else
 * widened into buf */
static inline const uint64_t *code_run(const qops *q, int pass, size_t i, size_t n, uint64_t *buf) {
    const void *p = pass ? q->Bn : q->An;
    switch (q->ncw[pass]) {
    case 1: for (size_t x = 0; x < n; x++) buf[x] = ((const uint8_t *)p)[i + x]; return buf;
    case 2: for (size_t x = 0; x < n; x++) buf[x] = ((const uint16_t *)p)[i + x]; return buf;
    case 4: for (size_t x = 0; x < n; x++) buf[x] = ((const uint32_t *)p)[i + x]; return buf;
    default: return (pass ? q->Btc : q->Ac) + i;
    }
}

/* Codes of row r over [k0, k1): in place, or in buf (k1 - k0 of them). */
static inline const uint64_t *code_vec(const qops *q, int pass, int r, int k0, int k1, uint64_t *buf) {
    const size_t R = (size_t)(pass ? q->N : q->M), K = (size_t)q->K;
    if (!q->nat[pass]) return code_run(q, pass, (size_t)r * K + (size_t)k0, (size_t)(k1 - k0), buf);
    for (int k = k0; k < k1; k++) buf[k - k0] = code_at(q, pass, (size_t)k * R + (size_t)r);
    return buf;
}

/* A side's codes as 64-bit R x K rows (Ac, Btc), for the readers that take
 * them only so: the f64 kernel's values, the packing element by element or
 * with block scales, the scalar model for every output. */
static int codes_to_rows(qops *q, int pass) {
    if (!q->nat[pass] && !q->ncw[pass]) return 0;
    const size_t R = (size_t)(pass ? q->N : q->M), K = (size_t)q->K;
    uint64_t *dst = big_alloc(sizeof(uint64_t) * (R * K + 1), 0);
    if (!dst) return -1;
    if (!q->nat[pass])
        for (size_t r = 0; r < R; r++) (void)code_run(q, pass, r * K, K, dst + r * K); /* (narrow: widened into dst) */
    else
        for (size_t r0 = 0; r0 < R; r0 += 8) /* a cache line of each source row at a time */
            for (size_t k = 0; k < K; k++)
                for (size_t r = r0; r < r0 + 8 && r < R; r++) dst[r * K + k] = code_at(q, pass, k * R + r);
    if (pass) big_free(q->Btc), big_free(q->Bn), q->Btc = dst, q->Bn = NULL;
    else big_free(q->Ac), big_free(q->An), q->Ac = dst, q->An = NULL;
    q->nat[pass] = q->ncw[pass] = 0;
    return 0;
}

/* Exact values for the kernel: av/ae (M x K), bv/be (K x Np), with the
 * block scales joined as the model does (MX: exponents; NVFP4 without the
 * group rule: value times scale, exponent plus the scale's). */
/* Decoded values of every code of a <= 16-bit format (a table per call). */
typedef struct {
    double *v, *e;
    unsigned char *sp;
    float *vf;       /* v as a float (the f32 kernel) */
    int16_t *wa, *wb; /* e as the f32 kernel's exponent words of A and B (gemm.h gkf_args) */
    uint8_t *la, *lb; /* v as the count pass's lsb bytes of A and B (gemm_internal.h) */
    int8_t *x;        /* e as its exponent bytes */
    _Atomic int vok;  /* vdec16 gives this table's vf, wa, wb and sp: 0 not yet checked, 1 yes, 2 no */
} dtable;

static int16_t f_word(double e, int bias);
static uint8_t f_lsb(double v, int pass);
static int8_t f_xbyte(double e);

static int dtable_build(const fpemu_mma_model *m, const fpemu_format *f, dtable *t) {
    size_t n = (size_t)1 << f->container;
    t->v = malloc(n * sizeof(double));
    t->e = malloc(n * sizeof(double));
    t->sp = malloc(n);
    t->vf = malloc(n * sizeof(float));
    t->wa = malloc(n * sizeof(int16_t));
    t->wb = malloc(n * sizeof(int16_t));
    t->la = malloc(n);
    t->lb = malloc(n);
    t->x = malloc(n);
    if (!t->v || !t->e || !t->sp || !t->vf || !t->wa || !t->wb || !t->la || !t->lb || !t->x) return -1;
    for (size_t c = 0; c < n; c++) {
        t->sp[c] = (unsigned char)decode_elem(m, f, (uint64_t)c, &t->v[c], &t->e[c]);
        t->vf[c] = (float)t->v[c];
        t->wa[c] = f_word(t->e[c], 64);
        t->wb[c] = f_word(t->e[c], 63);
        t->la[c] = f_lsb(t->v[c], 0);
        t->lb[c] = f_lsb(t->v[c], 1);
        t->x[c] = f_xbyte(t->e[c]);
    }
    return 0;
}
static void dtable_free(dtable *t) {
    free(t->v), free(t->e), free(t->sp), free(t->vf), free(t->wa), free(t->wb), free(t->la), free(t->lb), free(t->x);
}

/* The decode table depends only on the format and three model flags, so
 * registry formats keep one per process (built on first use, published
 * with an atomic store, never freed): a GEMM no longer rebuilds 2^16
 * entries per call, nor decodes element by element below that size. */
static _Atomic(dtable *) dcache[EMU_REGISTRY_MAX][8];

static const dtable *dtable_cached(const fpemu_mma_model *m, const fpemu_format *f) {
    int fi = emu__registry_index(f);
    if (fi < 0 || f->container > 16) return NULL;
    int key = (m->tf32_truncate ? 1 : 0) | (m->flush_subnormals ? 2 : 0) | (m->zero_product ? 4 : 0);
    dtable *t = atomic_load_explicit(&dcache[fi][key], memory_order_acquire);
    if (t) return t;
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (dtable_build(m, f, t)) { dtable_free(t); free(t); return NULL; }
    dtable *expected = NULL;
    if (!atomic_compare_exchange_strong(&dcache[fi][key], &expected, t)) {
        dtable_free(t); /* another thread published an identical table */
        free(t);
        t = expected;
    }
    return t;
}

/* Alignment exponent word of a power of two e (gemm.h gkf_args). */
static int16_t f_word(double e, int bias) {
    if (e == 0) return GEMM_F_NOPART;
    uint64_t u;
    memcpy(&u, &e, 8);
    return (int16_t)((int)((u >> 52) & 0x7FF) - 1023 + bias);
}

/* The count pass's lsb byte of a value (gemm_internal.h; pass 0: A, 1: B):
 * v is a value of a format whose lsb exponents f32_kernel_ok has checked. */
static uint8_t f_lsb(double v, int pass) {
    if (v == 0 || !isfinite(v)) return pass ? GEMM_F_LSB_ZB : GEMM_F_LSB_ZA; /* (inf/NaN: the scalar model's lanes) */
    uint64_t u;
    memcpy(&u, &v, 8);
    int be = (int)(u >> 52 & 0x7FF);
    uint64_t m = (u & ((UINT64_C(1) << 52) - 1)) | (be ? UINT64_C(1) << 52 : 0);
    int q = (be ? be : 1) - 1075 + __builtin_ctzll(m);
    int neg = (int)(u >> 63);
    return (uint8_t)(pass ? q + GEMM_F_LSB_BIAS - (neg ? 0 : GEMM_F_LSB_SIGN) : q + (neg ? GEMM_F_LSB_SIGN : 0));
}

/* The count pass's exponent byte of an alignment power e (gemm_internal.h):
 * log2(e), within the lsb_ok formats' [-16, 15]. */
static int8_t f_xbyte(double e) {
    if (e == 0) return GEMM_F_XNOPART;
    return (int8_t)ilogb(e);
}

/* Packed operands of the f32 kernel: A in panels of GEMM_F_ROWS rows, B in
 * panels of GEMM_F_COLS columns, values as floats and alignment exponents
 * as words (gemm.h). No block scales here (f32_kernel_ok). */
typedef struct { qops *q; int pass, rc; } bpf_arg;
static int build_pass_f(qops *q, int pass);
static void *build_pass_f_thread(void *arg) {
    bpf_arg *b = arg;
    b->rc = build_pass_f(b->q, b->pass);
    return NULL;
}

static int build_values_f(qops *q) {
    const int R = GEMM_F_ROWS, CP = GEMM_F_COLS;
    int M = q->M, N = q->N, K = q->K;
    size_t Mp = (size_t)(M + R - 1) / R * R, Np = (size_t)(N + CP - 1) / CP * CP;
    q->Np = (int)Np;
    /* the exponent words: for the f32 kernel only (the group, fma-chain and
     * exact-sum kernels read the values alone; its count pass reads bytes,
     * and the range check, which reads words, is for formats it never takes) */
    const int words = !q->use_g && !q->vk && !(q->f_count && !q->f_check);
    q->avf = big_alloc((Mp * K + 1) * sizeof(float), 0);
    q->aw = words ? big_alloc((Mp * K + 1) * sizeof(int32_t), 0) : NULL;
    q->bvf = big_alloc((Np * K + 1) * sizeof(float), 0);
    q->bw = words ? big_alloc((Np * K + 1) * sizeof(int16_t), 0) : NULL;
    const size_t abytes = gemm_f_byte_a((size_t)K, Mp, 0), bbytes = gemm_f_byte_b((size_t)K, Np, 0); /* (gemm_internal.h) */
    q->al = q->f_count ? big_alloc(abytes + 1, 0) : NULL;
    q->bl = q->f_count ? big_alloc(bbytes + 1, 0) : NULL;
    q->ax = q->f_count ? big_alloc(abytes + 1, 0) : NULL;
    q->bx = q->f_count ? big_alloc(bbytes + 1, 0) : NULL;
    /* the packing writes every element of a real row or column: zero the
     * last panel of each (its padding), the only place left unwritten */
    if (q->avf && M > 0) memset(q->avf + (size_t)((M - 1) / R) * K * R, 0, (size_t)K * R * sizeof(float));
    if (q->bvf && N > 0) memset(q->bvf + (size_t)((N - 1) / CP) * K * CP, 0, (size_t)K * CP * sizeof(float));
    q->arow_sp = calloc((size_t)M + 1, 1);
    q->bcol_sp = calloc((size_t)N + 1, 1);
    if (!q->avf || (words && (!q->aw || !q->bw)) || !q->bvf || !q->arow_sp || !q->bcol_sp) return -1;
    if (q->f_count && (!q->al || !q->bl || !q->ax || !q->bx)) return -1;
    const int32_t nop2 = (int32_t)(((uint32_t)(uint16_t)GEMM_F_NOPART << 16) | (uint16_t)GEMM_F_NOPART);
    for (size_t i = (size_t)M / R * R * K; words && i < Mp * K; i++) q->aw[i] = nop2; /* padding rows take no part */
    for (size_t i = (size_t)N / CP * CP * K; words && i < Np * K; i++) q->bw[i] = GEMM_F_NOPART;
    /* the lsb bytes' padding reads as zeros: the last panel of each (the
     * packing overwrites its real rows or columns), and with K odd the
     * missing second k of every last pair */
    if (q->al && M > 0) {
        const size_t p0 = gemm_f_byte_a((size_t)K, (size_t)(M - 1) / R * R, 0), n = abytes - p0;
        memset(q->al + p0, GEMM_F_LSB_ZA, n), memset(q->ax + p0, (uint8_t)GEMM_F_XNOPART, n);
        for (size_t i = 0; K % 2 && i < Mp; i++) {
            const size_t o = gemm_f_byte_a((size_t)K, i, (size_t)K);
            q->al[o] = q->al[o + 2] = GEMM_F_LSB_ZA, q->ax[o] = q->ax[o + 2] = GEMM_F_XNOPART;
        }
    }
    if (q->bl && N > 0) {
        const size_t p0 = gemm_f_byte_b((size_t)K, (size_t)(N - 1) / CP * CP, 0), n = bbytes - p0;
        memset(q->bl + p0, GEMM_F_LSB_ZB, n), memset(q->bx + p0, (uint8_t)GEMM_F_XNOPART, n);
        for (size_t j = 0; K % 2 && j < Np; j++) {
            const size_t o = gemm_f_byte_b((size_t)K, j, (size_t)K);
            q->bl[o] = GEMM_F_LSB_ZB, q->bx[o] = GEMM_F_XNOPART;
        }
    }
    for (int p = 0; p < 2; p++) q->f_wlo[p] = INT_MAX / 4, q->f_whi[p] = INT_MIN / 4;
    q->f_bad[0] = q->f_bad[1] = 0;
    /* A and B, on two threads where the GEMM has more than one */
    bpf_arg b[2] = {{q, 0, 0}, {q, 1, 0}};
    both_sides(sides_threaded(q), build_pass_f_thread, b, sizeof b[0]);
    return b[0].rc || b[1].rc ? -1 : 0;
}

/* One operand of build_values_f (pass 0: A, 1: B). */
static void f_range_pass(qops *q, int pass);

/* The packing's fast paths (build_pass_f): one row of A (or column of B)
 * over a run of k [k0, k1), its panel element (r, k0) at base. */
typedef struct {
    qops *q;
    const fpemu_mma_model *m;
    const fpemu_format *f;
    int pass, P, K;
    const uint64_t *sc;
    unsigned char *sp;
    const dtable *tab;
    int bias;      /* the exponent words' bias (63 for B, 64 for A) */
    uint32_t keep; /* f32_put: the code's bits */
    int16_t zw;    /* f32_put: a zero's word */
} pack_ctx;

/* A row's (or column's) destination in the panels: values ov, exponent
 * words ob (B) or oa (A, the word repeated in both halves of an int32),
 * NULL where the kernel reads none; and, for the element functions (held
 * in registers: their byte stores may alias anything in memory), the count
 * pass's bytes ol, ox (from the panels' start), this side's table columns
 * and the f32-layout decoding's constants. */
typedef struct {
    float *ov;
    int16_t *ob;
    int32_t *oa;
    uint8_t *ol;
    int8_t *ox;
    const float *tv;
    const int16_t *tw;
    const unsigned char *tsp;
    const uint8_t *tl;
    const int8_t *tx;
    size_t K;
    uint32_t keep;
    int16_t zw;
    int emin, bias, flush;
} pack_dst;
static inline __attribute__((always_inline)) pack_dst pack_dst_of(const pack_ctx *c, int pass, size_t base) {
    const qops *q = c->q;
    const dtable *t = c->tab;
    return (pack_dst){.ov = (pass ? q->bvf : q->avf) + base,
                      .ob = pass && q->bw ? q->bw + base : NULL,
                      .oa = !pass && q->aw ? q->aw + base : NULL,
                      .ol = pass ? q->bl : q->al,
                      .ox = pass ? q->bx : q->ax,
                      .tv = t->vf,
                      .tw = pass ? t->wb : t->wa,
                      .tsp = t->sp,
                      .tl = pass ? t->lb : t->la,
                      .tx = t->x,
                      .K = (size_t)c->K,
                      .keep = c->keep,
                      .zw = c->zw,
                      .emin = c->f->emin,
                      .bias = c->bias,
                      .flush = c->m->flush_subnormals};
}
static inline __attribute__((always_inline)) void pack_put(pack_dst d, int pass, size_t o, float x, int16_t w) {
    d.ov[o] = x;
    if (pass && d.ob) d.ob[o] = w;
    if (!pass && d.oa) d.oa[o] = (int32_t)(((uint32_t)(uint16_t)w << 16) | (uint16_t)w);
}

/* The table and f32-layout paths' traversal, element by element (cw bytes
 * a code, 8: Ac, Btc), each element (r, k) to its panel offset o and the
 * count pass's byte offset bo (gemm_f_byte_a or _b, stepped from a run's
 * first) through elem, which returns its inf/NaN mark. Codes in rows (R x K): a panel of
 * P rows (or columns) at a time, in runs of 64 k, so that the panel's lines
 * stay in L1 while its rows fill them. nat's (K x R): in their order; where
 * a panel row of P holds a mark, elem runs again (the same stores) to mark
 * its rows (or columns). */
typedef unsigned char (*pack_elem_fn)(const pack_ctx *c, pack_dst d, size_t bo, size_t o, uint64_t code);
static inline __attribute__((always_inline)) void pack_elems(const pack_ctx *c, int Rn, pack_elem_fn elem, int cw) {
    const int P = c->P, K = c->K, pass = c->pass;
    /* bytes between two pairs of k of a row, and between neighbours in a panel */
    const size_t kstep = pass ? 2 * GEMM_F_COLS : 4 * GEMM_F_ROWS, lstep = pass ? 2 : 4;
    const pack_dst d = pack_dst_of(c, c->pass, 0);
    const void *codes = cw == 8 ? (const void *)(c->pass ? c->q->Btc : c->q->Ac) : c->pass ? c->q->Bn : c->q->An;
    if (!c->q->nat[c->pass]) {
        for (int r0 = 0; r0 < Rn; r0 += P) {
            const int r1 = r0 + P < Rn ? r0 + P : Rn;
            for (int k0 = 0; k0 < K; k0 += 64) {
                const int k1 = k0 + 64 < K ? k0 + 64 : K;
                for (int r = r0; r < r1; r++) {
                    const size_t row = (size_t)r * (size_t)K, o = (size_t)(r0 / P) * K * P + (size_t)(r - r0);
                    const size_t b0 = pass ? gemm_f_byte_b(d.K, (size_t)r, (size_t)k0) : gemm_f_byte_a(d.K, (size_t)r, (size_t)k0);
                    unsigned char sp = 0;
                    for (int k = k0; k < k1; k++) {
                        const size_t t = (size_t)(k - k0); /* (k0 is even) */
                        sp |= elem(c, d, b0 + (t >> 1) * kstep + (t & 1), o + (size_t)k * P, cload(codes, cw, row + (size_t)k));
                    }
                    c->sp[r] |= sp;
                }
            }
        }
        return;
    }
    for (int k = 0; k < K; k++) {
        const size_t row = (size_t)k * (size_t)Rn;
        for (int r0 = 0; r0 < Rn; r0 += P) {
            const size_t o = ((size_t)(r0 / P) * K + k) * P;
            const size_t b0 = pass ? gemm_f_byte_b(d.K, (size_t)r0, (size_t)k) : gemm_f_byte_a(d.K, (size_t)r0, (size_t)k);
            const int n = Rn - r0 < P ? Rn - r0 : P;
            unsigned char any = 0;
            for (int l = 0; l < n; l++) any |= elem(c, d, b0 + (size_t)l * lstep, o + (size_t)l, cload(codes, cw, row + (size_t)(r0 + l)));
            if (any)
                for (int l = 0; l < n; l++)
                    c->sp[r0 + l] |= elem(c, d, b0 + (size_t)l * lstep, o + (size_t)l, cload(codes, cw, row + (size_t)(r0 + l)));
        }
    }
}
/* its instances by code width (ncw; 0: 64 bits) */
#define PACK_ELEMS_CW(c, Rn, elem)                                \
    do {                                                          \
        switch ((c)->q->ncw[(c)->pass]) {                         \
        case 1: pack_elems((c), (Rn), (elem), 1); break;          \
        case 2: pack_elems((c), (Rn), (elem), 2); break;          \
        case 4: pack_elems((c), (Rn), (elem), 4); break;          \
        default: pack_elems((c), (Rn), (elem), 8); break;         \
        }                                                         \
    } while (0)

/* Table look-ups (formats of at most 16 bits, no scales): the value and
 * exponent word (tab_put) and, with the count pass, its lsb and exponent
 * bytes (tab_bytes); pass is a constant in each instance (pack_tab), so
 * each side gets its own loop. */
static inline __attribute__((always_inline)) unsigned char tab_put(int pass, pack_dst d, size_t o, uint64_t code) {
    pack_put(d, pass, o, d.tv[code], d.tw[code]);
    return d.tsp[code];
}
static inline __attribute__((always_inline)) void tab_bytes(int pass, pack_dst d, size_t bo, uint64_t code) {
    if (pass) d.ol[bo] = d.tl[code], d.ox[bo] = d.tx[code];
    else d.ol[bo] = d.ol[bo + 2] = d.tl[code], d.ox[bo] = d.ox[bo + 2] = d.tx[code];
}
/* an element, for each side and with or without the count pass's bytes */
#define TAB_ELEM(NAME, PASS, BYTES)                                                                          \
    static inline __attribute__((always_inline)) unsigned char NAME(const pack_ctx *c, pack_dst d, size_t bo, size_t o, \
                                                                    uint64_t code) {                          \
        (void)c;                                                                                             \
        if (BYTES) tab_bytes(PASS, d, bo, code);                                                             \
        return tab_put(PASS, d, o, code);                                                                    \
    }
TAB_ELEM(tab_elem_a, 0, 0)
TAB_ELEM(tab_elem_b, 1, 0)
TAB_ELEM(tab_elem_ab, 0, 1)
TAB_ELEM(tab_elem_bb, 1, 1)
#undef TAB_ELEM
static __attribute__((noinline)) void pack_tab(const pack_ctx *c, int Rn) {
    const int bytes = c->pass ? c->q->bl != NULL : c->q->al != NULL;
    if (c->pass && bytes) PACK_ELEMS_CW(c, Rn, tab_elem_bb);
    else if (c->pass) PACK_ELEMS_CW(c, Rn, tab_elem_b);
    else if (bytes) PACK_ELEMS_CW(c, Rn, tab_elem_ab);
    else PACK_ELEMS_CW(c, Rn, tab_elem_a);
}

/* f16 and bf16 codes without the count pass's bytes, 16 at a time with
 * AVX-512 (pack_tab16): each code decoded from its bits as decode_elem
 * decodes it (dtable_build's vf, wa or wb, and sp), which vdec16_check checks
 * against the table, every code, once per table; a table that differs is
 * packed by pack_tab. The decoding: inf and NaN are marked, value +0, no
 * word; zeros (and subnormals where the model flushes them) keep their
 * sign, with the word of 2^emin where zero products take part (zero_product)
 * and none otherwise; subnormals the word of 2^emin; the rest their value's
 * exponent. Codes in rows go 16 k of a row at a time to the panel's stride
 * P (scattered), except A's whole panels of 8 rows, whose 8 x 16 codes are
 * transposed first and stored 16 at a time; codes laid out K x R go 16 at a
 * time as they lie. After this the packing is bound by memory: for each
 * two-byte code read, a four-byte value and a word written. */
#if defined(__x86_64__) && defined(__GNUC__)
typedef struct {
    int bf16, flush;   /* bf16 (else f16); the model flushes subnormal inputs */
    int16_t zw;        /* a zero's word (bias added) */
    int bias;          /* the words' bias (pack_ctx bias) */
} vdec;
static int vdec_kind(const fpemu_format *f) { return emu__ieee16(f, 5, 10, 15) ? 1 : emu__ieee16(f, 8, 7, 127) ? 2 : 0; }
#define VPK_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c,avx2")))
#define VPK8_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2")))
/* decode_elem's word and value (f32_put's too) for 16 codes, from their
 * exponent fields ex (fbias, emin: the format's), their subnormal, zero
 * and inf/NaN lanes and their values' f32 bits: the word of the exponent,
 * of emin for subnormals, zw for zeros, none for inf and NaN; a zero's
 * sign alone, +0 for inf and NaN (vdec16, vdec32) */
VPK_TARGET static inline __attribute__((always_inline)) void vdec_tail(__m512i ex, int fbias, int emin, int bias, int16_t zw,
                                                                       __mmask16 sub, __mmask16 zero, __mmask16 special,
                                                                       __m512i bits, __m512 *v, __m512i *w) {
    __m512i e = _mm512_mask_blend_epi32(sub, _mm512_sub_epi32(ex, _mm512_set1_epi32(fbias)), _mm512_set1_epi32(emin));
    e = _mm512_add_epi32(e, _mm512_set1_epi32(bias));
    e = _mm512_mask_blend_epi32(zero, e, _mm512_set1_epi32(zw));
    *w = _mm512_mask_blend_epi32(special, e, _mm512_set1_epi32((int16_t)GEMM_F_NOPART));
    bits = _mm512_mask_and_epi32(bits, zero, bits, _mm512_set1_epi32((int)0x80000000u));
    *v = _mm512_castsi512_ps(_mm512_mask_blend_epi32(special, bits, _mm512_setzero_si512()));
}
/* 16 codes: values v, words as int32 w, inf/NaN marks sp */
VPK_TARGET static inline __attribute__((always_inline)) void vdec16(const vdec *d, __m256i codes, __m512 *v, __m512i *w,
                                                                    __mmask16 *sp) {
    const __m512i ci = _mm512_cvtepu16_epi32(codes);
    __m512 x;
    __m512i ex;
    int emask, fbias, emin;
    if (d->bf16) {
        x = _mm512_castsi512_ps(_mm512_slli_epi32(ci, 16));
        ex = _mm512_and_si512(_mm512_srli_epi32(ci, 7), _mm512_set1_epi32(0xFF));
        emask = 0xFF, fbias = 127, emin = -126;
    } else {
        x = _mm512_cvtph_ps(codes);
        ex = _mm512_and_si512(_mm512_srli_epi32(ci, 10), _mm512_set1_epi32(0x1F));
        emask = 0x1F, fbias = 15, emin = -14;
    }
    const __m512i mag = _mm512_and_si512(ci, _mm512_set1_epi32(0x7FFF));
    const __mmask16 special = _mm512_cmpeq_epi32_mask(ex, _mm512_set1_epi32(emask));
    const __mmask16 sub = _mm512_cmpeq_epi32_mask(ex, _mm512_setzero_si512());
    const __mmask16 zero = _mm512_cmpeq_epi32_mask(mag, _mm512_setzero_si512()) | (d->flush ? sub : 0);
    vdec_tail(ex, fbias, emin, d->bias, d->zw, sub, zero, special, _mm512_castps_si512(x), v, w);
    *sp = special;
}
/* A's words: each in both halves of an int32 (pack_put) */
VPK_TARGET static inline __attribute__((always_inline)) __m512i wdup(__m512i w) {
    return _mm512_or_si512(_mm512_slli_epi32(w, 16), _mm512_and_si512(w, _mm512_set1_epi32(0xFFFF)));
}
/* the stores of 16 (n of them) decoded elements: values at ov (stride 1,
 * or P through vidx), words at ob (B, int16) or oa (A, the word in both
 * halves of an int32) where the kernel reads them */
VPK_TARGET static inline __attribute__((always_inline)) void vdec_put(int pass, pack_dst d, size_t o, __mmask16 m, __m512 v,
                                                                      __m512i w, int strided, __m512i vidx) {
    if (strided) {
        _mm512_mask_i32scatter_ps(d.ov + o, m, vidx, v, 4);
        if (pass && d.ob) {
            /* int16 words at stride P: as int32 pairs would overwrite neighbours; one by one */
            int32_t ws[16];
            _mm512_storeu_si512(ws, w);
            for (int l = 0; l < 16; l++)
                if (m >> l & 1) d.ob[o + (size_t)l * (size_t)GEMM_F_COLS] = (int16_t)ws[l];
        }
        if (!pass && d.oa)
            _mm512_mask_i32scatter_epi32(d.oa + o, m, vidx, wdup(w), 4);
        return;
    }
    _mm512_mask_storeu_ps(d.ov + o, m, v);
    if (pass && d.ob) _mm256_mask_storeu_epi16(d.ob + o, m, _mm512_cvtepi32_epi16(w));
    if (!pass && d.oa)
        _mm512_mask_storeu_epi32(d.oa + o, m, wdup(w));
}
/* The pairwise kernel's side of 16 decoded elements (pw_pack: pw_val):
 * magnitudes in (0, thr) made +0, and the least u - 1 (a zero wraps to the
 * top) and greatest magnitude bits u of the lanes in m into mn1, mx */
VPK_TARGET static inline __attribute__((always_inline)) __m512 vpw16(__m512 v, __mmask16 m, uint32_t thr, __m512i *mn1,
                                                                     __m512i *mx) {
    const __m512i one = _mm512_set1_epi32(1);
    __m512i u = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7FFFFFFF));
    const __mmask16 sub = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(u, one), _mm512_set1_epi32((int)(thr - 1)));
    v = _mm512_mask_blend_ps(sub, v, _mm512_setzero_ps());
    u = _mm512_mask_blend_epi32(sub, u, _mm512_setzero_si512());
    *mn1 = _mm512_mask_min_epu32(*mn1, m, *mn1, _mm512_sub_epi32(u, one));
    *mx = _mm512_mask_max_epu32(*mx, m, *mx, u);
    return v;
}
/* The vector packers' walk of codes laid out K x R (cw bytes each): each
 * k's codes in their order, 16 at a time within a panel, through f (the
 * element at panel offset o, row or column r on), which stores them and
 * returns their inf/NaN marks */
typedef struct {
    const vdec *vd;
    pack_dst d;
    int pass;
    uint32_t thr, *rmn1, *rmx; /* (vpw16) */
} v16_arg;
typedef __mmask16 (*v16_fn)(const v16_arg *a, const void *src, __mmask16 m, size_t o, int r);
VPK_TARGET static inline __attribute__((always_inline)) void nat16_walk(const pack_ctx *c, int Rn, const void *codes, int cw,
                                                                        v16_fn f, const v16_arg *a) {
    const int P = c->P, K = c->K;
    for (int k = 0; k < K; k++) {
        const char *row = (const char *)codes + (size_t)k * (size_t)Rn * (size_t)cw;
        for (int r0 = 0; r0 < Rn; r0 += P) {
            const size_t o = ((size_t)(r0 / P) * K + k) * P;
            const int n = Rn - r0 < P ? Rn - r0 : P;
            for (int l0 = 0; l0 < n; l0 += 16) {
                const __mmask16 m = n - l0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - l0)) - 1);
                const __mmask16 sp = f(a, row + (size_t)(r0 + l0) * (size_t)cw, m, o + (size_t)l0, r0 + l0) & m;
                for (__mmask16 b = sp; b; b &= (__mmask16)(b - 1)) c->sp[r0 + l0 + __builtin_ctz(b)] = 1;
            }
        }
    }
}
/* its element functions: f16 and bf16 to the f32 kernel's panels, or to
 * the pairwise kernel's (vpw16, the ranges by r) */
VPK_TARGET static inline __attribute__((always_inline)) __mmask16 v16_tab(const v16_arg *a, const void *src, __mmask16 m, size_t o,
                                                                          int r) {
    __m512 v;
    __m512i w;
    __mmask16 sp;
    (void)r;
    vdec16(a->vd, _mm256_maskz_loadu_epi16(m, src), &v, &w, &sp);
    vdec_put(a->pass, a->d, o, m, v, w, 0, _mm512_setzero_si512());
    return sp;
}
VPK_TARGET static inline __attribute__((always_inline)) __mmask16 v16_pw(const v16_arg *a, const void *src, __mmask16 m, size_t o,
                                                                         int r) {
    __m512 v;
    __m512i w;
    __mmask16 sp;
    vdec16(a->vd, _mm256_maskz_loadu_epi16(m, src), &v, &w, &sp);
    __m512i mn1 = _mm512_maskz_loadu_epi32(m, a->rmn1 + r), mx = _mm512_maskz_loadu_epi32(m, a->rmx + r);
    v = vpw16(v, m, a->thr, &mn1, &mx);
    _mm512_mask_storeu_epi32(a->rmn1 + r, m, mn1), _mm512_mask_storeu_epi32(a->rmx + r, m, mx);
    _mm512_mask_storeu_ps(a->d.ov + o, m, v);
    return sp;
}

/* pack_elems' two traversals (16-bit codes in An or Bn), for the f32
 * kernel's panels (pw 0: values and words) or the pairwise kernel's (pw 1:
 * values through vpw16, each row's or column's range into rmn1[r], rmx[r],
 * which the caller starts at UINT32_MAX and 0) */
VPK_TARGET static inline __attribute__((always_inline)) void pack16_body(const pack_ctx *c, int Rn, const vdec *vd, const int pw,
                                                                         uint32_t thr, uint32_t *rmn1, uint32_t *rmx) {
    const int P = c->P, K = c->K, pass = c->pass;
    const pack_dst d = pack_dst_of(c, pass, 0);
    const uint16_t *codes = pass ? c->q->Bn : c->q->An;
    const __m512i vidx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(P));
    const __m512i top = _mm512_set1_epi32(-1), nil = _mm512_setzero_si512();
    if (!c->q->nat[pass]) {
        /* rows: a row's 16 k at a time, to stride P */
        for (int r0 = 0; r0 < Rn; r0 += P) {
            const int r1 = r0 + P < Rn ? r0 + P : Rn;
            for (int k0 = 0; k0 < K; k0 += 64) {
                const int k1 = k0 + 64 < K ? k0 + 64 : K;
                int kt = k0; /* (k0, kt): done by 8 x 16 transpositions */
                if (P == 8 && r1 - r0 == 8) {
                    /* A's whole panels: the codes of 8 rows x 16 k transposed (an 8 x 8
                     * transposition in each 128-bit lane, then the lanes of two k
                     * paired), decoded 2 k x 8 rows at a time into contiguous panel */
                    const size_t o = (size_t)(r0 / P) * K * P;
                    unsigned spr = 0;
                    __m512i mn1 = top, mx = nil; /* (pw) lane l and l + 8: row l */
                    for (; kt + 16 <= k1; kt += 16) {
                        __m256i x[8], t[8], u[8], v[8];
                        for (int l = 0; l < 8; l++) x[l] = _mm256_loadu_si256((const __m256i *)(codes + (size_t)(r0 + l) * (size_t)K + kt));
                        for (int l = 0; l < 8; l += 2)
                            t[l] = _mm256_unpacklo_epi16(x[l], x[l + 1]), t[l + 1] = _mm256_unpackhi_epi16(x[l], x[l + 1]);
                        for (int h = 0; h < 8; h += 4) {
                            u[h] = _mm256_unpacklo_epi32(t[h], t[h + 2]), u[h + 1] = _mm256_unpackhi_epi32(t[h], t[h + 2]);
                            u[h + 2] = _mm256_unpacklo_epi32(t[h + 1], t[h + 3]), u[h + 3] = _mm256_unpackhi_epi32(t[h + 1], t[h + 3]);
                        }
                        for (int i = 0; i < 4; i++) /* v[2i], v[2i+1]: k = 2i, 2i+1 (lane 0) and 8 on (lane 1) */
                            v[2 * i] = _mm256_unpacklo_epi64(u[i], u[4 + i]), v[2 * i + 1] = _mm256_unpackhi_epi64(u[i], u[4 + i]);
                        for (int i = 0; i < 8; i += 2)
                            for (int hi = 0; hi < 2; hi++) {
                                const __m256i cv = hi ? _mm256_permute2x128_si256(v[i], v[i + 1], 0x31) : _mm256_permute2x128_si256(v[i], v[i + 1], 0x20);
                                __m512 val;
                                __m512i w;
                                __mmask16 sp;
                                vdec16(vd, cv, &val, &w, &sp);
                                if (pw) {
                                    val = vpw16(val, (__mmask16)0xFFFF, thr, &mn1, &mx);
                                    _mm512_storeu_ps(d.ov + o + (size_t)(kt + 8 * hi + i) * 8, val);
                                } else
                                    vdec_put(pass, d, o + (size_t)(kt + 8 * hi + i) * 8, (__mmask16)0xFFFF, val, w, 0, vidx);
                                spr |= (unsigned)sp | (unsigned)sp >> 8;
                            }
                    }
                    for (int l = 0; l < 8; l++)
                        if (spr >> l & 1) c->sp[r0 + l] = 1;
                    if (pw && kt > k0) {
                        uint32_t a[16], b[16];
                        _mm512_storeu_si512(a, mn1), _mm512_storeu_si512(b, mx);
                        for (int l = 0; l < 8; l++) {
                            const uint32_t a1 = a[l] < a[l + 8] ? a[l] : a[l + 8], b1 = b[l] > b[l + 8] ? b[l] : b[l + 8];
                            if (a1 < rmn1[r0 + l]) rmn1[r0 + l] = a1;
                            if (b1 > rmx[r0 + l]) rmx[r0 + l] = b1;
                        }
                    }
                }
                for (int r = r0; kt < k1 && r < r1; r++) {
                    const uint16_t *row = codes + (size_t)r * (size_t)K;
                    const size_t o = (size_t)(r0 / P) * K * P + (size_t)(r - r0);
                    __mmask16 spr = 0;
                    __m512i mn1 = top, mx = nil;
                    for (int k = kt; k < k1; k += 16) {
                        const __mmask16 m = k1 - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (k1 - k)) - 1);
                        __m512 v;
                        __m512i w;
                        __mmask16 sp;
                        vdec16(vd, _mm256_maskz_loadu_epi16(m, row + k), &v, &w, &sp);
                        if (pw) {
                            v = vpw16(v, m, thr, &mn1, &mx);
                            _mm512_mask_i32scatter_ps(d.ov + o + (size_t)k * P, m, vidx, v, 4);
                        } else
                            vdec_put(pass, d, o + (size_t)k * P, m, v, w, 1, vidx);
                        spr |= sp & m;
                    }
                    if (spr) c->sp[r] = 1;
                    if (pw) {
                        const uint32_t a1 = _mm512_reduce_min_epu32(mn1), b1 = _mm512_reduce_max_epu32(mx);
                        if (a1 < rmn1[r]) rmn1[r] = a1;
                        if (b1 > rmx[r]) rmx[r] = b1;
                    }
                }
            }
        }
        return;
    }
    /* nat: each k's codes in their order */
    const v16_arg a = {.vd = vd, .d = d, .pass = pass, .thr = thr, .rmn1 = rmn1, .rmx = rmx};
    nat16_walk(c, Rn, codes, 2, pw ? v16_pw : v16_tab, &a);
}
VPK_TARGET static void pack_tab16(const pack_ctx *c, int Rn, const vdec *vd) { pack16_body(c, Rn, vd, 0, 0, NULL, NULL); }
VPK_TARGET static void pack_pw16(const pack_ctx *c, int Rn, const vdec *vd, uint32_t thr, uint32_t *rmn1, uint32_t *rmx) {
    pack16_body(c, Rn, vd, 1, thr, rmn1, rmx);
}
/* Codes of one byte (fp8, fp6, fp4) through their decode table 64 at a time
 * (AVX-512 VBMI, pack_tab8): each of the table's byte planes (the value's
 * four bytes, the word's two, the mark, the count pass's lsb and exponent
 * bytes) is a 256-byte table looked up with two two-source byte
 * permutations and a blend on the code's top bit, so the panels get the
 * table's own entries; the bytes are then put in place by fixed
 * permutations: A's codes in rows as 8 x 8 blocks (rows x k, transposed
 * by one permutation), B's as two k of a whole 32-column panel (laid out
 * K x N: as they lie; in rows: from four such blocks of 32 rows x 8 k).
 * Everything else (partial panels, an odd last k, K's last k below a block
 * of 8, a transposed A) goes element by element. */
typedef struct {
    __m512i t[9][4]; /* planes: value bytes 0-3, word bytes 0-1, mark, lsb byte, exponent byte */
} vtab8;
VPK8_TARGET static void vtab8_of(vtab8 *vt, const dtable *t, int pass) {
    uint8_t b[9][256];
    const int16_t *tw = pass ? t->wb : t->wa;
    const uint8_t *tl = pass ? t->lb : t->la;
    for (int c = 0; c < 256; c++) {
        uint32_t u;
        memcpy(&u, &t->vf[c], 4);
        for (int i = 0; i < 4; i++) b[i][c] = (uint8_t)(u >> (8 * i));
        b[4][c] = (uint8_t)((uint16_t)tw[c] & 0xFF), b[5][c] = (uint8_t)((uint16_t)tw[c] >> 8);
        b[6][c] = t->sp[c], b[7][c] = tl[c], b[8][c] = (uint8_t)t->x[c];
    }
    for (int p = 0; p < 9; p++)
        for (int q = 0; q < 4; q++) vt->t[p][q] = _mm512_loadu_si512(b[p] + 64 * q);
}
VPK8_TARGET static inline __attribute__((always_inline)) __m512i vlook8(const __m512i T[4], __m512i idx, __mmask64 hi) {
    const __m512i lo = _mm512_permutex2var_epi8(T[0], idx, T[1]), up = _mm512_permutex2var_epi8(T[2], idx, T[3]);
    return _mm512_mask_blend_epi8(hi, lo, up);
}
/* an 8 x 8 transposition of bytes (vpermb's indices: entry i is the source
 * of byte i), k-major from row-major */
static const uint8_t pk8_tr[64] = {
#define T8(k) 8 * 0 + k, 8 * 1 + k, 8 * 2 + k, 8 * 3 + k, 8 * 4 + k, 8 * 5 + k, 8 * 6 + k, 8 * 7 + k
    T8(0), T8(1), T8(2), T8(3), T8(4), T8(5), T8(6), T8(7)
#undef T8
};
/* the offsets of 8 rows K bytes apart (a gather's, once per call) */
VPK8_TARGET static inline __attribute__((always_inline)) __m512i rows8(int K) {
    return _mm512_setr_epi64(0, K, 2 * (long long)K, 3 * (long long)K, 4 * (long long)K, 5 * (long long)K, 6 * (long long)K,
                             7 * (long long)K);
}
/* A's 8 x 8 block at rows r0.., k.. (rows: rows8(K), tr: pk8_tr): element
 * 8 kk + l is (r0 + l, k + kk) */
VPK8_TARGET static inline __attribute__((always_inline)) __m512i a8_block(const uint8_t *codes, int K, int r0, int k, __m512i rows,
                                                                          __m512i tr) {
    return _mm512_permutexvar_epi8(tr, _mm512_i64gather_epi64(rows, codes + (size_t)r0 * K + k, 1));
}
/* B's 32 rows (columns of B) r0.. x 8 k from k on, as four pairs of k:
 * x[p] element e is column r0 + e % 32 at k + 2p + e / 32 */
VPK8_TARGET static inline __attribute__((always_inline)) void b8_pairs(const uint8_t *codes, int K, int r0, int k, __m512i rows,
                                                                       __m512i x[4]) {
    /* element e of pair 0: byte 8 (e % 8) + e / 32 of block e % 32 / 8, which
     * is G[0] or G[1] (bytes 0-63, 64-127 of a two-source permutation) for
     * columns below 16, G[2] or G[3] above; pair p: 2p bytes on */
    static const uint8_t bp0[64] = {
        0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120,
        0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120,
        1, 9, 17, 25, 33, 41, 49, 57, 65, 73, 81, 89, 97, 105, 113, 121,
        1, 9, 17, 25, 33, 41, 49, 57, 65, 73, 81, 89, 97, 105, 113, 121,
    };
    __m512i G[4];
    for (int q = 0; q < 4; q++) G[q] = _mm512_i64gather_epi64(rows, codes + (size_t)(r0 + 8 * q) * K + k, 1); /* rows 8q.. */
    __m512i idx = _mm512_loadu_si512(bp0);
    for (int p = 0; p < 4; p++, idx = _mm512_add_epi8(idx, _mm512_set1_epi8(2)))
        x[p] = _mm512_mask_blend_epi8(0xFFFF0000FFFF0000ull, _mm512_permutex2var_epi8(G[0], idx, G[1]),
                                      _mm512_permutex2var_epi8(G[2], idx, G[3]));
}
/* 64 elements' values (16 at a time) and words from their byte planes:
 * pairs of bytes interleaved (elements 0-31, 32-63), then pairs of pairs */
VPK8_TARGET static inline __attribute__((always_inline)) void vj8_pairs(__m512i x, __m512i y, __m512i *lo, __m512i *hi) {
    const __m512i i0 = _mm512_set_epi8(95, 31, 94, 30, 93, 29, 92, 28, 91, 27, 90, 26, 89, 25, 88, 24, 87, 23, 86, 22, 85, 21, 84, 20,
                                       83, 19, 82, 18, 81, 17, 80, 16, 79, 15, 78, 14, 77, 13, 76, 12, 75, 11, 74, 10, 73, 9, 72, 8,
                                       71, 7, 70, 6, 69, 5, 68, 4, 67, 3, 66, 2, 65, 1, 64, 0);
    const __m512i i1 = _mm512_add_epi8(i0, _mm512_set1_epi8(32));
    *lo = _mm512_permutex2var_epi8(x, i0, y), *hi = _mm512_permutex2var_epi8(x, i1, y);
}
VPK8_TARGET static inline __attribute__((always_inline)) void vj8_quads(__m512i lo, __m512i hi, __m512i lo2, __m512i hi2, __m512i out[4]) {
    /* words: (lo, lo2) pairs for elements 0-31, (hi, hi2) for 32-63 */
    const __m512i j0 = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3,
                                        34, 2, 33, 1, 32, 0);
    const __m512i j1 = _mm512_add_epi16(j0, _mm512_set1_epi16(16));
    out[0] = _mm512_permutex2var_epi16(lo, j0, lo2), out[1] = _mm512_permutex2var_epi16(lo, j1, lo2);
    out[2] = _mm512_permutex2var_epi16(hi, j0, hi2), out[3] = _mm512_permutex2var_epi16(hi, j1, hi2);
}
/* the 64 codes x (in element order) into the panels: values and words at
 * element offset o (contiguous), marks returned as a mask; bytes (where the
 * count pass reads them) by the caller */
VPK8_TARGET static inline __attribute__((always_inline)) __mmask64 vput8(int pass, pack_dst d, const vtab8 *vt, __m512i x, size_t o) {
    const __mmask64 hi = _mm512_movepi8_mask(x);
    __m512i v01l, v01h, v23l, v23h, f[4];
    vj8_pairs(vlook8(vt->t[0], x, hi), vlook8(vt->t[1], x, hi), &v01l, &v01h);
    vj8_pairs(vlook8(vt->t[2], x, hi), vlook8(vt->t[3], x, hi), &v23l, &v23h);
    vj8_quads(v01l, v01h, v23l, v23h, f);
    for (int q = 0; q < 4; q++) _mm512_storeu_si512(d.ov + o + 16 * q, f[q]);
    if ((pass && d.ob) || (!pass && d.oa)) {
        __m512i wl, wh;
        vj8_pairs(vlook8(vt->t[4], x, hi), vlook8(vt->t[5], x, hi), &wl, &wh);
        if (pass) _mm512_storeu_si512(d.ob + o, wl), _mm512_storeu_si512(d.ob + o + 32, wh);
        else {
            vj8_quads(wl, wh, wl, wh, f); /* the word in both halves of an int32 */
            for (int q = 0; q < 4; q++) _mm512_storeu_si512(d.oa + o + 16 * q, f[q]);
        }
    }
    const __m512i sp = vlook8(vt->t[6], x, hi);
    return _mm512_test_epi8_mask(sp, sp);
}
/* the inf/NaN marks of 64 elements: A's 8 x 8 block (element 8 kk + l:
 * row l) or B's pair of k (element e: column e % 32) */
static inline void mark8_rows(const pack_ctx *c, int r0, __mmask64 sp) {
    if (sp)
        for (int l = 0; l < 8; l++)
            if (sp & (UINT64_C(0x0101010101010101) << l)) c->sp[r0 + l] = 1;
}
static inline void mark8_cols(const pack_ctx *c, int r0, __mmask64 sp) {
    const uint64_t s2 = (uint64_t)sp | (uint64_t)sp >> 32;
    for (int l = 0; s2 && l < 32; l++)
        if (s2 >> l & 1) c->sp[r0 + l] = 1;
}
/* B's pair of k of a whole panel (x: 64 codes in element order) into the
 * panels at o, the count pass's bytes at b (bperm: by column and parity) */
VPK8_TARGET static inline __attribute__((always_inline)) void put8_bpair(const pack_ctx *c, pack_dst d, const vtab8 *vt, __m512i x,
                                                                         size_t o, size_t b, int r0, __m512i bperm) {
    mark8_cols(c, r0, vput8(1, d, vt, x, o));
    if (d.ol) {
        const __mmask64 top = _mm512_movepi8_mask(x);
        _mm512_storeu_si512(d.ol + b, _mm512_permutexvar_epi8(bperm, vlook8(vt->t[7], x, top)));
        _mm512_storeu_si512(d.ox + b, _mm512_permutexvar_epi8(bperm, vlook8(vt->t[8], x, top)));
    }
}
/* its rest of a panel's rows [r0, r1) in rows layout, from k on, element
 * by element (o0: the panel's offset) */
static inline __attribute__((always_inline)) void tab8_rest(const pack_ctx *c, pack_dst d, const uint8_t *codes, int pass, int r0,
                                                            int r1, int k, size_t o0) {
    const int P = c->P, K = c->K, bytes = d.ol != NULL;
    const size_t kstep = pass ? 2 * GEMM_F_COLS : 4 * GEMM_F_ROWS; /* bytes between pairs of k (pack_elems) */
    for (int r = r0; r < r1; r++) {
        const size_t o = o0 + (size_t)(r - r0);
        const size_t b = pass ? gemm_f_byte_b(d.K, (size_t)r, (size_t)k) : gemm_f_byte_a(d.K, (size_t)r, (size_t)k);
        unsigned char spr = 0;
        for (int kk = k; kk < K; kk++) {
            const size_t t = (size_t)(kk - k), bo = b + (t >> 1) * kstep + (t & 1), ok = o + (size_t)kk * P;
            const uint64_t code = codes[(size_t)r * K + kk];
            spr |= pass ? (bytes ? tab_elem_bb(c, d, bo, ok, code) : tab_elem_b(c, d, 0, ok, code))
                        : (bytes ? tab_elem_ab(c, d, bo, ok, code) : tab_elem_a(c, d, 0, ok, code));
        }
        c->sp[r] |= spr;
    }
}
VPK8_TARGET static void pack_tab8(const pack_ctx *c, int Rn, const vtab8 *vt) {
    const int P = c->P, K = c->K, pass = c->pass;
    const pack_dst d = pack_dst_of(c, pass, 0);
    const uint8_t *codes = pass ? c->q->Bn : c->q->An;
    const int bytes = d.ol != NULL;
    const __m512i rows = rows8(K), tr = _mm512_loadu_si512(pk8_tr);
    if (!pass) {
        /* A in rows: 8 x 8 blocks of whole panels; the rest element by element */
        /* the count pass's bytes of a block: pair p, row l, [k even, k odd] twice */
        uint8_t bi[2][64];
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < 64; j++) {
                const int p = 2 * h + j / 32, l = j % 32 / 4, t = j % 2;
                bi[h][j] = (uint8_t)((2 * p + t) * 8 + l);
            }
        const __m512i b0 = _mm512_loadu_si512(bi[0]), b1 = _mm512_loadu_si512(bi[1]);
        for (int r0 = 0; r0 < Rn; r0 += P) {
            const int r1 = r0 + P < Rn ? r0 + P : Rn, whole = r1 - r0 == 8;
            const size_t o0 = (size_t)(r0 / P) * K * P;
            int k = 0;
            for (; whole && k + 8 <= K; k += 8) {
                const __m512i x = a8_block(codes, K, r0, k, rows, tr);
                const __mmask64 sp = vput8(0, d, vt, x, o0 + (size_t)k * 8);
                if (bytes) {
                    const __mmask64 top = _mm512_movepi8_mask(x);
                    const __m512i l = vlook8(vt->t[7], x, top), e = vlook8(vt->t[8], x, top);
                    const size_t bo = gemm_f_byte_a(d.K, (size_t)r0, (size_t)k);
                    _mm512_storeu_si512(d.ol + bo, _mm512_permutexvar_epi8(b0, l));
                    _mm512_storeu_si512(d.ol + bo + 64, _mm512_permutexvar_epi8(b1, l));
                    _mm512_storeu_si512(d.ox + bo, _mm512_permutexvar_epi8(b0, e));
                    _mm512_storeu_si512(d.ox + bo + 64, _mm512_permutexvar_epi8(b1, e));
                }
                mark8_rows(c, r0, sp);
            }
            tab8_rest(c, d, codes, 0, r0, r1, k, o0); /* K's last k below 8, or a partial panel's rows */
        }
        return;
    }
    /* B: two k of a whole panel at a time, in element order (k: its 32
     * columns, then k + 1's), the count pass's bytes by column and parity */
    uint8_t bi[64];
    for (int j = 0; j < 64; j++) bi[j] = (uint8_t)((j % 2) * 32 + j / 2); /* column j / 2, k parity j % 2 */
    const __m512i bperm = _mm512_loadu_si512(bi);
    if (!c->q->nat[pass]) {
        /* B in rows (transposed): 32 rows x 8 k as four pairs of k (b8_pairs) */
        for (int r0 = 0; r0 < Rn; r0 += P) {
            const int r1 = r0 + P < Rn ? r0 + P : Rn, whole = r1 - r0 == P;
            const size_t o0 = (size_t)(r0 / P) * K * P;
            int k = 0;
            for (; whole && k + 8 <= K; k += 8) {
                __m512i x[4];
                b8_pairs(codes, K, r0, k, rows, x);
                for (int p = 0; p < 4; p++)
                    put8_bpair(c, d, vt, x[p], o0 + (size_t)(k + 2 * p) * P, gemm_f_byte_b(d.K, (size_t)r0, (size_t)(k + 2 * p)), r0,
                               bperm);
            }
            tab8_rest(c, d, codes, 1, r0, r1, k, o0); /* K's last k below 8, or a partial panel's columns */
        }
        return;
    }
    for (int r0 = 0; r0 < Rn; r0 += P) {
        const int n = Rn - r0 < P ? Rn - r0 : P;
        for (int k = 0; k < K; k += 2) {
            const size_t o = ((size_t)(r0 / P) * K + k) * P, b = gemm_f_byte_b(d.K, (size_t)r0, (size_t)k);
            if (n == 32 && k + 1 < K) {
                const __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(codes + (size_t)k * Rn + r0))),
                                                     _mm256_loadu_si256((const __m256i *)(codes + (size_t)(k + 1) * Rn + r0)), 1);
                put8_bpair(c, d, vt, x, o, b, r0, bperm);
                continue;
            }
            for (int kk = k; kk < k + 2 && kk < K; kk++) /* a partial panel, an odd last k */
                for (int l = 0; l < n; l++) {
                    const uint64_t code = codes[(size_t)kk * Rn + r0 + l];
                    const size_t ol = o + (size_t)(kk - k) * P + (size_t)l, bl = b + 2 * (size_t)l + (size_t)(kk - k);
                    c->sp[r0 + l] |= bytes ? tab_elem_bb(c, d, bl, ol, code) : tab_elem_b(c, d, 0, ol, code);
                }
        }
    }
}
static inline unsigned char f32_put(const pack_ctx *c, pack_dst d, size_t o, uint64_t code);
/* f32-layout codes (tf32, f32: f32_put) 16 at a time with AVX-512
 * (pack_f32v): A's whole 8-row panels as 8 x 8 transpositions of the
 * codes, B laid out K x N as they lie; the same decoding as f32_put, lane
 * by lane (the bits kept, inf and NaN marked with value +0 and no word,
 * zeros and flushed subnormals a signed zero with the zero word, the rest
 * their bits and the word of their exponent, emin for subnormals). */
VPK_TARGET static inline __attribute__((always_inline)) void vdec32(const pack_dst *d, __m512i code, __m512 *v, __m512i *w,
                                                                    __mmask16 *sp) {
    const __m512i u = _mm512_and_si512(code, _mm512_set1_epi32((int)d->keep));
    const __m512i ex = _mm512_and_si512(_mm512_srli_epi32(u, 23), _mm512_set1_epi32(0xFF));
    const __mmask16 special = _mm512_cmpeq_epi32_mask(ex, _mm512_set1_epi32(0xFF));
    const __mmask16 sub = _mm512_cmpeq_epi32_mask(ex, _mm512_setzero_si512());
    const __mmask16 zero = sub & (_mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7FFFFF)) | (d->flush ? (__mmask16)0xFFFF : 0));
    vdec_tail(ex, 127, d->emin, d->bias, d->zw, sub, zero, special, u, v, w);
    *sp = special;
}
VPK_TARGET static inline __attribute__((always_inline)) __mmask16 v16_f32(const v16_arg *a, const void *src, __mmask16 m, size_t o,
                                                                          int r) {
    __m512 v;
    __m512i w;
    __mmask16 sp;
    (void)r;
    vdec32(&a->d, _mm512_maskz_loadu_epi32(m, src), &v, &w, &sp);
    vdec_put(a->pass, a->d, o, m, v, w, 0, _mm512_setzero_si512());
    return sp;
}
VPK_TARGET static void pack_f32v(const pack_ctx *c, int Rn) {
    const int P = c->P, K = c->K, pass = c->pass;
    const pack_dst d = pack_dst_of(c, pass, 0);
    const uint32_t *codes = pass ? c->q->Bn : c->q->An;
    const __m512i vidx = _mm512_setzero_si512();
    if (!pass) {
        for (int r0 = 0; r0 < Rn; r0 += P) {
            const int r1 = r0 + P < Rn ? r0 + P : Rn, whole = r1 - r0 == 8;
            const size_t o0 = (size_t)(r0 / P) * K * P;
            int k = 0;
            unsigned spr = 0;
            for (; whole && k + 8 <= K; k += 8) {
                __m256 x[8], t[8], s[8];
                for (int l = 0; l < 8; l++) x[l] = _mm256_loadu_ps((const float *)(codes + (size_t)(r0 + l) * K + k));
                for (int l = 0; l < 8; l += 2) t[l] = _mm256_unpacklo_ps(x[l], x[l + 1]), t[l + 1] = _mm256_unpackhi_ps(x[l], x[l + 1]);
                for (int h = 0; h < 8; h += 4) {
                    s[h] = _mm256_shuffle_ps(t[h], t[h + 2], 0x44), s[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], 0xEE);
                    s[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44), s[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
                }
                /* s[i] (rows 0-3) and s[4 + i] (rows 4-7): k = i in lane 0, 4 + i in lane 1 */
                for (int i = 0; i < 4; i += 2)
                    for (int hi = 0; hi < 2; hi++) {
                        /* k = i + 4 hi and the next: 16 codes, 8 rows each */
                        const __m256 a0 = hi ? _mm256_permute2f128_ps(s[i], s[4 + i], 0x31) : _mm256_permute2f128_ps(s[i], s[4 + i], 0x20);
                        const __m256 a1 = hi ? _mm256_permute2f128_ps(s[i + 1], s[5 + i], 0x31) : _mm256_permute2f128_ps(s[i + 1], s[5 + i], 0x20);
                        __m512 v;
                        __m512i w;
                        __mmask16 sp;
                        vdec32(&d, _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(a0), a1, 1)), &v, &w, &sp);
                        vdec_put(0, d, o0 + (size_t)(k + i + 4 * hi) * 8, (__mmask16)0xFFFF, v, w, 0, vidx);
                        spr |= (unsigned)sp | (unsigned)sp >> 8;
                    }
            }
            for (int l = 0; l < 8; l++)
                if (spr >> l & 1) c->sp[r0 + l] = 1;
            for (int r = r0; r < r1; r++) { /* the rest: K's last k below 8, or a partial panel's rows */
                unsigned char sp1 = 0;
                for (int kk = k; kk < K; kk++) sp1 |= f32_put(c, d, o0 + (size_t)(r - r0) + (size_t)kk * P, codes[(size_t)r * K + kk]);
                c->sp[r] |= sp1;
            }
        }
        return;
    }
    const v16_arg a = {.d = d, .pass = pass};
    nat16_walk(c, Rn, codes, 4, v16_f32, &a);
}
static inline void pack_row_mx(const pack_ctx *c, int r, int k0, int k1, size_t base, const uint64_t *cr);
/* MX: one-byte codes in rows with block scales (pack_mx8), as pack_row_mx
 * packs them: each value times its block's scale 2^S (a scale that is not a
 * power of two sets f_bad: the f64 kernel; a value that the scaling leaves
 * inexact in f32 too, checked by scaling back), each word plus S, and a NaN
 * scale's elements 0 with no word, their row marked. The same blocks as
 * pack_tab8 (A's 8 x 8, B's 32 x 8 from four), 8 k within one scale block;
 * the rest through pack_row_mx. */
typedef struct {
    int16_t S[256];     /* log2 of the scale code's power of two */
    uint8_t nan[256], pow2[256];
} mxsc;
static void mxsc_of(mxsc *t, const fpemu_format *sf) {
    for (int c = 0; c < 256; c++) {
        double sv = 0;
        t->nan[c] = (uint8_t)fpemu_is_nan(sf, (uint64_t)c);
        const double s2 = t->nan[c] ? 1.0 : scale_pow(sf, (uint64_t)c, &sv);
        t->pow2[c] = !t->nan[c] && sv == s2;
        t->S[c] = (int16_t)ilogb(s2);
    }
}
/* 64 codes x with per-element scales: S4[q] (int32) for elements 16q on,
 * Sw (int16) for elements 32h + i, i < 32, and the NaN scales' elements nm */
VPK8_TARGET static inline __attribute__((always_inline)) __mmask64 vput8s(int pass, pack_dst d, const vtab8 *vt, __m512i x, size_t o,
                                                                          const __m512i S4[4], __m512i Sw, __mmask64 nm, int *bad) {
    const __mmask64 hi = _mm512_movepi8_mask(x);
    __m512i v01l, v01h, v23l, v23h, f[4];
    vj8_pairs(vlook8(vt->t[0], x, hi), vlook8(vt->t[1], x, hi), &v01l, &v01h);
    vj8_pairs(vlook8(vt->t[2], x, hi), vlook8(vt->t[3], x, hi), &v23l, &v23h);
    vj8_quads(v01l, v01h, v23l, v23h, f);
    __mmask16 inexact = 0;
    for (int q = 0; q < 4; q++) {
        const __m512 v = _mm512_castsi512_ps(f[q]), sf = _mm512_cvtepi32_ps(S4[q]);
        const __m512 y = _mm512_scalef_ps(v, sf);
        inexact |= _mm512_cmp_ps_mask(_mm512_scalef_ps(y, _mm512_sub_ps(_mm512_setzero_ps(), sf)), v, _CMP_NEQ_UQ);
        _mm512_storeu_ps(d.ov + o + 16 * q, _mm512_mask_blend_ps((__mmask16)(nm >> (16 * q)), y, _mm512_setzero_ps()));
    }
    if (inexact) *bad = 1;
    if ((pass && d.ob) || (!pass && d.oa)) {
        __m512i wl, wh;
        const __m512i nop = _mm512_set1_epi16((int16_t)GEMM_F_NOPART);
        vj8_pairs(vlook8(vt->t[4], x, hi), vlook8(vt->t[5], x, hi), &wl, &wh);
        /* plus S, except where no part or the scale is NaN */
        wl = _mm512_mask_blend_epi16(_mm512_cmpeq_epi16_mask(wl, nop) | (__mmask32)nm, _mm512_add_epi16(wl, Sw), nop);
        wh = _mm512_mask_blend_epi16(_mm512_cmpeq_epi16_mask(wh, nop) | (__mmask32)(nm >> 32), _mm512_add_epi16(wh, Sw), nop);
        if (pass) _mm512_storeu_si512(d.ob + o, wl), _mm512_storeu_si512(d.ob + o + 32, wh);
        else {
            vj8_quads(wl, wh, wl, wh, f);
            for (int q = 0; q < 4; q++) _mm512_storeu_si512(d.oa + o + 16 * q, f[q]);
        }
    }
    const __m512i sp = vlook8(vt->t[6], x, hi);
    return _mm512_test_epi8_mask(sp, sp);
}
VPK8_TARGET static void pack_mx8(const pack_ctx *c, int Rn, const vtab8 *vt, const mxsc *ms) {
    qops *q = c->q;
    const int P = c->P, K = c->K, pass = c->pass, sb = q->sblock;
    const pack_dst d = pack_dst_of(c, pass, 0);
    const uint8_t *codes = pass ? q->Bn : q->An;
    const __m512i rows = rows8(K), tr = _mm512_loadu_si512(pk8_tr);
    uint64_t buf[64];
    int bad = 0;
    for (int r0 = 0; r0 < Rn; r0 += P) {
        const int r1 = r0 + P < Rn ? r0 + P : Rn, whole = r1 - r0 == P;
        const size_t o0 = (size_t)(r0 / P) * K * P;
        for (int k0 = 0; k0 < K; k0 += sb) {
            const int k1 = k0 + sb < K ? k0 + sb : K;
            int k = k0;
            if (whole) {
                /* the rows' scales: S and NaN per row (or column), lanes as the elements lie */
                int32_t Sr[32];
                uint64_t nrow = 0;
                for (int l = 0; l < P; l++) {
                    const uint64_t scode = c->sc[(size_t)(r0 + l) * q->nsb + k0 / sb];
                    if (ms->nan[scode]) nrow |= UINT64_C(1) << l, c->sp[r0 + l] = 1, Sr[l] = 0;
                    else Sr[l] = ms->S[scode], bad |= !ms->pow2[scode];
                }
                __m512i S4[4], Sw;
                __mmask64 nm;
                if (!pass) { /* element 8 kk + l: row l */
                    const __m512i s8 = _mm512_loadu_si512(Sr); /* (lanes 8-15 unused) */
                    S4[0] = S4[1] = S4[2] = S4[3] = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7), s8);
                    Sw = _mm512_permutexvar_epi16(_mm512_set_epi16(7, 6, 5, 4, 3, 2, 1, 0, 7, 6, 5, 4, 3, 2, 1, 0, 7, 6, 5, 4, 3, 2, 1, 0,
                                                                   7, 6, 5, 4, 3, 2, 1, 0),
                                                  _mm512_castsi256_si512(_mm512_cvtepi32_epi16(s8)));
                    nm = (__mmask64)(nrow * UINT64_C(0x0101010101010101));
                } else { /* element e: column e % 32 */
                    S4[0] = S4[2] = _mm512_loadu_si512(Sr), S4[1] = S4[3] = _mm512_loadu_si512(Sr + 16);
                    Sw = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(S4[0])), _mm512_cvtepi32_epi16(S4[1]), 1);
                    nm = (__mmask64)(nrow | nrow << 32);
                }
                for (; k + 8 <= k1; k += 8) {
                    if (!pass) mark8_rows(c, r0, vput8s(0, d, vt, a8_block(codes, K, r0, k, rows, tr), o0 + (size_t)k * 8, S4, Sw, nm, &bad));
                    else {
                        __m512i x[4];
                        b8_pairs(codes, K, r0, k, rows, x);
                        for (int p = 0; p < 4; p++) mark8_cols(c, r0, vput8s(1, d, vt, x[p], o0 + (size_t)(k + 2 * p) * P, S4, Sw, nm, &bad));
                    }
                }
            }
            if (k < k1) /* the rest of the block: a partial panel's rows, or a tail below 8 */
                for (int r = r0; r < r1; r++)
                    pack_row_mx(c, r, k, k1, o0 + (size_t)(r - r0), code_vec(q, pass, r, k, k1, buf));
        }
    }
    if (bad) q->f_bad[pass] = 1; /* beyond f32, or a scale not a power of two: the f64 kernel */
}
/* Does vdec16 give the table's every entry? (once per table: 2^16 codes) */
VPK_TARGET static int vdec16_check(const dtable *t, const fpemu_mma_model *m, int bf16) {
    for (int side = 0; side < 2; side++) {
        const int bias = side ? 63 : 64;
        const vdec vd = {.bf16 = bf16, .flush = m->flush_subnormals, .bias = bias,
                         .zw = m->zero_product ? (int16_t)((bf16 ? -126 : -14) + bias) : (int16_t)GEMM_F_NOPART};
        const int16_t *tw = side ? t->wb : t->wa;
        for (uint32_t c0 = 0; c0 < 65536; c0 += 16) {
            uint16_t cs[16];
            for (int l = 0; l < 16; l++) cs[l] = (uint16_t)(c0 + (uint32_t)l);
            __m512 v;
            __m512i w;
            __mmask16 sp;
            vdec16(&vd, _mm256_loadu_si256((const __m256i *)cs), &v, &w, &sp);
            float vs[16];
            int32_t ws[16];
            _mm512_storeu_ps(vs, v);
            _mm512_storeu_si512(ws, w);
            for (int l = 0; l < 16; l++) {
                if (memcmp(&vs[l], &t->vf[c0 + (uint32_t)l], 4) || (int16_t)ws[l] != tw[c0 + (uint32_t)l] ||
                    ((sp >> l) & 1) != (t->sp[c0 + (uint32_t)l] != 0))
                    return 0;
            }
        }
    }
    return 1;
}
#endif
/* vdec16 against dtable_build for f16 and bf16 under each combination of
 * the model flags it reads (gemm_internal.h) */
int emu__gemm_vdec_check(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512dq") ||
        !__builtin_cpu_supports("avx512vl") || !emu__have_f16c())
        return -1;
    int bad = 0;
    for (int kind = 1; kind <= 2; kind++) {
        const fpemu_format *f = fpemu_format_get(kind == 2 ? "bf16" : "f16", NULL, 0);
        if (!f || vdec_kind(f) != kind) return -2;
        for (int key = 0; key < 4; key++) {
            fpemu_mma_model m = {0};
            m.flush_subnormals = key & 1, m.zero_product = key >> 1 & 1;
            dtable t = {0};
            if (dtable_build(&m, f, &t)) bad++;
            else bad += !vdec16_check(&t, &m, kind == 2);
            dtable_free(&t);
        }
    }
    return bad;
#else
    return -1;
#endif
}

/* build_pass_f's ways to pack a side (pack_vec, then the scalar packers) */
enum pack_path { PK_TAB, PK_F32, PK_MX, PK_ELEM };
#if defined(__x86_64__) && defined(__GNUC__)
/* pack_tab8 for this side, where it applies: one-byte codes, A in rows
 * (not transposed) or B either way, an AVX-512 VBMI CPU */
static int pack_tab8_ok(const pack_ctx *c) {
    return c->q->vpack && c->q->ncw[c->pass] == 1 && (c->pass || !c->q->nat[0]) && __builtin_cpu_supports("avx512vbmi");
}

/* pack_tab16 for this side, where it applies (with its table checked) */
static int pack_tab16_ok(const pack_ctx *c, dtable *t, int cached) {
    const int bytes = c->pass ? c->q->bl != NULL : c->q->al != NULL;
    const int kind = vdec_kind(c->f);
    if (!cached || !c->q->vpack || c->q->ncw[c->pass] != 2 || bytes || !kind || c->m->tf32_truncate) return 0;
    int ok = atomic_load_explicit(&t->vok, memory_order_acquire);
    if (!ok) {
        ok = vdec16_check(t, c->m, kind == 2) ? 1 : 2;
        atomic_store_explicit(&t->vok, ok, memory_order_release);
    }
    return ok == 1;
}
#endif

/* A side packed by a vector packer where one takes it (tab: its decode
 * table; cached: the same where it is the process's, else NULL): 1, else
 * 0 and nothing done (the scalar packers then) */
static int pack_vec(const pack_ctx *pc, int Rn, enum pack_path path, const dtable *tab, const dtable *cached) {
#if defined(__x86_64__) && defined(__GNUC__)
    const qops *q = pc->q;
    const int pass = pc->pass;
    if (path == PK_F32) {
        if (!q->vpack || q->ncw[pass] != 4 || q->nat[pass] != pass) return 0;
        pack_f32v(pc, Rn);
        return 1;
    }
    const int mx = path == PK_MX;
    if ((path == PK_TAB || (mx && !q->nat[pass] && q->sblock % 8 == 0 && q->sfmt->container <= 8)) && pack_tab8_ok(pc)) {
        vtab8 vt;
        vtab8_of(&vt, tab, pass);
        if (mx) {
            mxsc ms;
            mxsc_of(&ms, q->sfmt);
            pack_mx8(pc, Rn, &vt, &ms);
        } else
            pack_tab8(pc, Rn, &vt);
        return 1;
    }
    if (path == PK_TAB && pack_tab16_ok(pc, (dtable *)cached, cached != NULL)) {
        const vdec vd = {.bf16 = vdec_kind(pc->f) == 2, .flush = pc->m->flush_subnormals, .bias = pc->bias, .zw = pc->zw};
        pack_tab16(pc, Rn, &vd);
        return 1;
    }
#else
    (void)pc, (void)Rn, (void)path, (void)tab, (void)cached;
#endif
    return 0;
}

/* f32-layout codes (tf32, f32) without scales (pack_f32), decoded as decode_f32_layout
 * decodes them, without its call and double exponent per element. */
static inline __attribute__((always_inline)) unsigned char f32_put(const pack_ctx *c, pack_dst d, size_t o, uint64_t code) {
    const uint32_t u = (uint32_t)code & d.keep, ex = u >> 23 & 0xFF;
    float x = 0.0f;
    int16_t w;
    unsigned char sp = 0;
    if (ex == 0xFF) { /* inf, NaN: the scalar model's row or column */
        sp = 1, w = (int16_t)GEMM_F_NOPART;
    } else if (ex == 0 && (!(u & 0x7FFFFF) || d.flush)) {
        x = u >> 31 ? -0.0f : 0.0f, w = d.zw;
    } else {
        memcpy(&x, &u, 4);
        w = (int16_t)((ex ? (int)ex - 127 : d.emin) + d.bias);
    }
    pack_put(d, c->pass, o, x, w);
    return sp;
}
static inline __attribute__((always_inline)) unsigned char f32_elem(const pack_ctx *c, pack_dst d, size_t bo, size_t o,
                                                                    uint64_t code) {
    (void)bo;
    return f32_put(c, d, o, code);
}
static __attribute__((noinline)) void pack_f32(const pack_ctx *c, int Rn) { PACK_ELEMS_CW(c, Rn, f32_elem); }

/* Table formats with power-of-two block scales (MX), one row (or column)
 * over a scale block [k0, k1) whose codes are cr, its panel element (r,
 * k0) at base: the scale once, then each value times it (exact in double;
 * not a float: the f64 kernel) and its word plus the scale's exponent, as
 * the element path computes them. */
static inline __attribute__((always_inline)) void pack_row_mx(const pack_ctx *c, int r, int k0, int k1, size_t base,
                                                              const uint64_t *cr) {
    qops *q = c->q;
    const dtable *t = c->tab;
    const uint64_t scode = c->sc[(size_t)r * q->nsb + k0 / q->sblock];
    const int nan_scale = fpemu_is_nan(q->sfmt, scode);
    double sv = 0, s2 = 1;
    if (nan_scale) c->sp[r] = 1;
    else {
        s2 = scale_pow(q->sfmt, scode, &sv);
        if (sv != s2) q->f_bad[c->pass] = 1; /* not a power of two (or 0): the f64 kernel */
    }
    const int S = ilogb(s2);
    const pack_dst d = pack_dst_of(c, c->pass, base);
    unsigned char spr = 0, bad = 0;
    for (int k = k0; k < k1; k++) {
        const uint64_t code = cr[k - k0];
        const double v = nan_scale ? 0.0 : t->v[code] * sv; /* (a NaN scale: the element takes no part) */
        const float x = (float)v;
        const int16_t w0 = c->pass ? t->wb[code] : t->wa[code];
        spr |= t->sp[code];
        bad |= (double)x != v;
        pack_put(d, c->pass, (size_t)k * c->P, x,
                 nan_scale || w0 == (int16_t)GEMM_F_NOPART ? (int16_t)GEMM_F_NOPART : (int16_t)(w0 + S));
    }
    c->sp[r] |= spr;
    if (bad) q->f_bad[c->pass] = 1; /* beyond f32: the f64 kernel */
}
/* and its traversal of codes in rows (R x K): a panel of P rows (or
 * columns) at a time, a scale block of k (at most 64: build_pass_f) at a
 * time, so that the panel's lines stay in L1 while its rows fill them */
static void pack_mx(const pack_ctx *c, int Rn) {
    const int P = c->P, K = c->K, run = c->q->sblock;
    uint64_t buf[64];
    for (int r0 = 0; r0 < Rn; r0 += P) {
        const int r1 = r0 + P < Rn ? r0 + P : Rn;
        for (int k0 = 0; k0 < K; k0 += run) {
            const int k1 = k0 + run < K ? k0 + run : K;
            for (int r = r0; r < r1; r++)
                pack_row_mx(c, r, k0, k1, (size_t)(r / P) * K * P + (size_t)(r % P), code_vec(c->q, c->pass, r, k0, k1, buf));
        }
    }
}

static int build_pass_f(qops *q, int pass) {
    const fpemu_mma_model *m = &q->cfg->model;
    const int R = GEMM_F_ROWS, CP = GEMM_F_COLS;
    int M = q->M, N = q->N, K = q->K;
    {
        int Rn = pass ? N : M;
        const fpemu_format *f = pass ? m->fb : m->fa;
        const uint64_t *sc = q->use_g ? NULL : pass ? q->sbt : q->sa; /* the group kernel takes its scales apart */
        unsigned char *sp = pass ? q->bcol_sp : q->arow_sp;
        dtable tab = {0};
        const dtable *cached = dtable_cached(m, f);
        int use_tab = cached || (f->container <= 16 && (size_t)Rn * K > ((size_t)1 << f->container) / 4);
        int own_tab = use_tab && !cached;
        if (cached) tab = *cached;
        else if (use_tab && dtable_build(m, f, &tab)) { dtable_free(&tab); return -1; }
        /* the fast paths: a panel at a time, rows (or columns) in runs of k */
        const int fast32 = !use_tab && f32_layout(f) && !(m->tf32_truncate && f->mbits == 23);
        pack_ctx pc = {.q = q, .m = m, .f = f, .pass = pass, .P = pass ? CP : R, .K = K, .sc = sc,
                       .sp = sp, .tab = &tab, .bias = pass ? 63 : 64};
        const enum pack_path path = use_tab && !sc       ? PK_TAB /* the common case: table look-ups */
                                    : fast32 && !sc && !q->al ? PK_F32 /* tf32, f32 */
                                    : use_tab && sc && !q->al ? PK_MX  /* MX */
                                                              : PK_ELEM;
        /* the table and f32-layout paths read codes of any width either way
         * (pack_elems), MX's rows of any width in runs of at most 64 k
         * (pack_mx); the rest take 64-bit rows */
        if ((path == PK_ELEM || (path == PK_MX && (q->nat[pass] || q->sblock > 64))) && codes_to_rows(q, pass)) {
            if (own_tab) dtable_free(&tab);
            return -1;
        }
        const uint64_t *codes = pass ? q->Btc : q->Ac;
        if (path != PK_ELEM) {
            pc.keep = (uint32_t)(((UINT64_C(1) << f->bits) - 1) << f->pad);
            pc.zw = m->zero_product ? (int16_t)(f->emin + pc.bias) : (int16_t)GEMM_F_NOPART;
            if (!pack_vec(&pc, Rn, path, &tab, cached)) {
                if (path == PK_TAB) pack_tab(&pc, Rn);
                else if (path == PK_F32) pack_f32(&pc, Rn);
                else pack_mx(&pc, Rn);
            }
            if (own_tab) dtable_free(&tab);
            f_range_pass(q, pass);
            return 0;
        }
        /* element by element (formats above 16 bits), or with block scales
         * (power-of-two scales only: value times scale and exponent plus the
         * scale's, exact in double; f_range_pass checks that they are floats) */
        const int sbk = sc ? q->sblock : 64;
        for (int r0 = 0; r0 < Rn; r0 += 64)
            for (int k0 = 0; k0 < K; k0 += sbk) {
                int r1 = r0 + 64 < Rn ? r0 + 64 : Rn, k1 = k0 + sbk < K ? k0 + sbk : K;
                for (int r = r0; r < r1; r++) {
                    int nan_scale = 0;
                    double sv = 1, s2 = 1;
                    if (sc) {
                        uint64_t scode = sc[(size_t)r * q->nsb + k0 / q->sblock];
                        if (fpemu_is_nan(q->sfmt, scode)) nan_scale = 1, sp[r] = 1;
                        else {
                            s2 = scale_pow(q->sfmt, scode, &sv);
                            if (sv != s2) q->f_bad[pass] = 1; /* not a power of two (or 0): the f64 kernel */
                        }
                    }
                    for (int k = k0; k < k1; k++) {
                        uint64_t code = codes[(size_t)r * K + k];
                        double v, e;
                        if (use_tab) {
                            v = tab.v[code], e = tab.e[code];
                            if (tab.sp[code]) sp[r] = 1;
                        } else if (fast32 ? decode_f32_layout(m, f, code, &v, &e) : decode_elem(m, f, code, &v, &e)) {
                            sp[r] = 1;
                        }
                        if (nan_scale) v = 0, e = 0;
                        else v *= sv, e *= s2;
                        if ((double)(float)v != v) q->f_bad[pass] = 1; /* beyond f32: the f64 kernel */
                        if (pass) {
                            size_t o = ((size_t)(r / CP) * K + k) * CP + r % CP;
                            q->bvf[o] = (float)v;
                            if (q->bw) q->bw[o] = f_word(e, 63);
                            if (q->bl) {
                                const size_t ol = gemm_f_byte_b((size_t)K, (size_t)r, (size_t)k);
                                q->bl[ol] = f_lsb(v, 1), q->bx[ol] = f_xbyte(e);
                            }
                        } else {
                            size_t o = ((size_t)(r / R) * K + k) * R + r % R;
                            q->avf[o] = (float)v;
                            if (q->aw) {
                                uint16_t w = (uint16_t)f_word(e, 64);
                                q->aw[o] = (int32_t)(((uint32_t)w << 16) | w);
                            }
                            if (q->al) {
                                const size_t ol = gemm_f_byte_a((size_t)K, (size_t)r, (size_t)k);
                                q->al[ol] = q->al[ol + 2] = f_lsb(v, 0);
                                q->ax[ol] = q->ax[ol + 2] = f_xbyte(e);
                            }
                        }
                    }
                }
            }
        if (own_tab) dtable_free(&tab);
    }
    f_range_pass(q, pass);
    return 0;
}

/* The least and greatest alignment exponent of a nonzero packed value of
 * one operand (f_check only; the values are exact floats: f_bad): zeros and padding are left out (a zero that
 * takes part never decides emax against a nonzero term above thr, and a
 * block of zero terms sums to +0 whatever its emax). */
#if defined(__x86_64__) && defined(__GNUC__)
/* its first n0 (a multiple of 16) elements, 16 at a time with AVX-512 */
VPK_TARGET static void f_range16(const qops *q, int pass, size_t n0, int *lo, int *hi) {
    __m512i l = _mm512_set1_epi32(*lo), h = _mm512_set1_epi32(*hi);
    const __m512i bias = _mm512_set1_epi32(pass ? 63 : 64);
    for (size_t x = 0; x < n0; x += 16) {
        const __m512 v = _mm512_loadu_ps((pass ? q->bvf : q->avf) + x);
        const __mmask16 nz = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NEQ_UQ); /* (v != 0: NaN too) */
        __m512i w = pass ? _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(q->bw + x)))
                         : _mm512_srai_epi32(_mm512_slli_epi32(_mm512_loadu_si512(q->aw + x), 16), 16);
        w = _mm512_sub_epi32(w, bias);
        l = _mm512_mask_min_epi32(l, nz, l, w), h = _mm512_mask_max_epi32(h, nz, h, w);
    }
    *lo = _mm512_reduce_min_epi32(l), *hi = _mm512_reduce_max_epi32(h);
}
#endif
static void f_range_pass(qops *q, int pass) {
    if (!q->f_check || !q->aw) return;
    size_t n = pass ? (size_t)q->Np * q->K : (size_t)(q->M + GEMM_F_ROWS - 1) / GEMM_F_ROWS * GEMM_F_ROWS * q->K, x0 = 0;
    int lo = INT_MAX / 4, hi = INT_MIN / 4;
#if defined(__x86_64__) && defined(__GNUC__)
    if (q->vpack) f_range16(q, pass, x0 = n / 16 * 16, &lo, &hi);
#endif
    if (pass) {
        for (size_t x = x0; x < n; x++) {
            int w = q->bw[x] - 63, nz = q->bvf[x] != 0;
            lo = nz && w < lo ? w : lo, hi = nz && w > hi ? w : hi;
        }
    } else {
        for (size_t x = x0; x < n; x++) {
            int w = (int16_t)q->aw[x] - 64, nz = q->avf[x] != 0;
            lo = nz && w < lo ? w : lo, hi = nz && w > hi ? w : hi;
        }
    }
    q->f_wlo[pass] = lo, q->f_whi[pass] = hi;
}

/* Exact values for the f64 kernel (the f32 kernel: build_values_f):
 * av/ae (M x K), bv/be (K x Np), with the block scales joined as the model
 * does (MX: exponents; NVFP4 without the group rule: value times scale,
 * exponent plus the scale's). */
static int build_scales_g(qops *q);
static int build_gv(qops *q);
static int build_values_pw(qops *q);

static int build_values(qops *q) {
    const fpemu_mma_model *m = &q->cfg->model;
    int M = q->M, N = q->N, K = q->K, Np = (N + 15) / 16 * 16;
    if (q->use_g && q->use_gv) { /* the integer form: its bytes, no f32 panels (its kernel takes every call: run_job) */
        q->Np = (q->N + GEMM_F_COLS - 1) / GEMM_F_COLS * GEMM_F_COLS;
        q->arow_sp = calloc((size_t)q->M + 1, 1), q->bcol_sp = calloc((size_t)q->N + 1, 1);
        if (!q->arow_sp || !q->bcol_sp) return -1;
        return build_scales_g(q) || build_gv(q) ? -1 : 0;
    }
    if (q->use_g) return build_values_f(q) || build_scales_g(q) ? -1 : 0;
    if (q->use_pw) return build_values_pw(q);
    if (q->use_f) return build_values_f(q);
    if (codes_to_rows(q, 0) || codes_to_rows(q, 1)) return -1;
    q->Np = Np;
    size_t es = sizeof(double);
    void *av = malloc(es * ((size_t)M * K + 1)), *ae = malloc(es * ((size_t)M * K + 1));
    void *bv = calloc((size_t)K * Np + 16, es), *be = calloc((size_t)K * Np + 16, es);
    q->arow_sp = calloc((size_t)M + 1, 1);
    q->bcol_sp = calloc((size_t)N + 1, 1);
    q->av = av, q->ae = ae, q->bv = bv, q->be = be;
    if (!av || !ae || !bv || !be || !q->arow_sp || !q->bcol_sp) return -1;
    for (int pass = 0; pass < 2; pass++) {
        int R = pass ? N : M;
        const fpemu_format *f = pass ? m->fb : m->fa;
        const uint64_t *codes = pass ? q->Btc : q->Ac;
        const uint64_t *sc = pass ? q->sbt : q->sa;
        unsigned char *sp = pass ? q->bcol_sp : q->arow_sp;
        dtable tab = {0};
        const dtable *cached = dtable_cached(m, f);
        int use_tab = cached || (f->container <= 16 && (size_t)R * K > ((size_t)1 << f->container) / 4);
        int own_tab = use_tab && !cached;
        if (cached) tab = *cached;
        else if (use_tab && dtable_build(m, f, &tab)) { dtable_free(&tab); return -1; }
        if (use_tab && !sc) { /* the common case, tiled so that B's transposed stores stay in cache */
            for (int r0 = 0; r0 < R; r0 += 64)
                for (int k0 = 0; k0 < K; k0 += 64) {
                    int r1 = r0 + 64 < R ? r0 + 64 : R, k1 = k0 + 64 < K ? k0 + 64 : K;
                    for (int r = r0; r < r1; r++)
                        for (int k = k0; k < k1; k++) {
                            uint64_t code = codes[(size_t)r * K + k];
                            sp[r] |= tab.sp[code];
                            size_t o = pass ? (size_t)k * Np + r : (size_t)r * K + k;
                            ((double *)(pass ? bv : av))[o] = tab.v[code], ((double *)(pass ? be : ae))[o] = tab.e[code];
                        }
                }
            if (own_tab) dtable_free(&tab);
            continue;
        }
        for (int r = 0; r < R; r++)
            for (int k = 0; k < K; k++) {
                double v, e;
                uint64_t code = codes[(size_t)r * K + k];
                if (use_tab) {
                    v = tab.v[code], e = tab.e[code];
                    if (tab.sp[code]) sp[r] = 1;
                } else if (decode_elem(m, f, code, &v, &e)) {
                    sp[r] = 1;
                }
                if (sc) {
                    uint64_t scode = sc[(size_t)r * q->nsb + k / q->sblock];
                    if (fpemu_is_nan(q->sfmt, scode)) sp[r] = 1, v = 0, e = 0;
                    else {
                        double sv, sp2 = scale_pow(q->sfmt, scode, &sv);
                        v *= sv;
                        if (sv == 0) { if (!m->zero_product) e = 0; else e *= sp2; }
                        else e *= sp2;
                    }
                }
                size_t o = pass ? (size_t)k * Np + r : (size_t)r * K + k;
                ((double *)(pass ? bv : av))[o] = v, ((double *)(pass ? be : ae))[o] = e;
            }
        if (own_tab) dtable_free(&tab);
    }
    return 0;
}

/* The group kernel's block scales: magnitudes and alignment exponents
 * (mma.c group_term: signs cleared; a NaN or inf scale makes the group
 * NaN, so its row or column goes to the scalar model). */
/* a scale code's magnitude, its power of two's exponent, and whether it is
 * inf or NaN (build_scales_g) */
static int gscale_of(const fpemu_format *sf, uint64_t code, float *v, int32_t *e) {
    double dv = 0, p2 = 1;
    fpemu_class k = fpemu_classify(sf, code);
    const int special = k == FPEMU_CLASS_INF || k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN;
    if (!special) p2 = scale_pow(sf, code, &dv);
    *v = (float)dv, *e = ilogb(p2);
    return special;
}
static int build_scales_g(qops *q) {
    int M = q->M, N = q->N, Np = q->Np, nsb = q->nsb;
    q->gsav = calloc((size_t)M * nsb + 1, sizeof(float)), q->gsae = calloc((size_t)M * nsb + 1, sizeof(int32_t));
    q->gsbv = calloc((size_t)Np * nsb + 1, sizeof(float)), q->gsbe = calloc((size_t)Np * nsb + 1, sizeof(int32_t));
    if (!q->gsav || !q->gsae || !q->gsbv || !q->gsbe) return -1;
    /* one-byte scale formats (e4m3, e8m0): each code's entries once */
    const int tab = q->sfmt->container <= 8;
    float tv[256];
    int32_t te[256];
    unsigned char tsp[256];
    for (int c = 0; tab && c < 256; c++) tsp[c] = (unsigned char)gscale_of(q->sfmt, (uint64_t)c, &tv[c], &te[c]);
    for (int pass = 0; pass < 2; pass++) {
        int R = pass ? N : M;
        const uint64_t *sc = pass ? q->sbt : q->sa;
        unsigned char *sp = pass ? q->bcol_sp : q->arow_sp;
        float *gv = pass ? q->gsbv : q->gsav;
        int32_t *ge = pass ? q->gsbe : q->gsae;
        for (int r = 0; r < R; r++)
            for (int b = 0; b < nsb; b++) {
                uint64_t code = sc[(size_t)r * nsb + b];
                size_t o = pass ? (size_t)b * Np + r : (size_t)r * nsb + b;
                if (tab && code < 256) {
                    gv[o] = tv[code], ge[o] = te[code];
                    if (tsp[code]) sp[r] = 1;
                } else if (gscale_of(q->sfmt, code, &gv[o], &ge[o]))
                    sp[r] = 1;
            }
    }
    return 0;
}

/* The group kernel's wide mode: scales that are powers of two (no
 * significand bits: e8m0) within 2^+-127, applied as exponents in double. */
static int group_wide(const fpemu_format *s) {
    return s->mbits == 0 && s->emax <= 127 && s->emin >= -127;
}

/* Can the group kernel take its integer form (gemm_kernel.c, AVX-512
 * VNNI)? Groups of 16 (whole 4-k words), blocks of at most 4 groups,
 * nfrac from 23 (c's 24 bits are then never cut where its exponent is
 * within the bounds) to 38 (a block's exact sum, below 2^(nfrac + 15) of
 * its cut unit, fits a double), chunks of whole blocks. */
static int gv_ok(const fpemu_gemm_config *cfg, const qops *q) {
    const fpemu_mma_model *m = &cfg->model;
    return emu__gemm_vnni() && m->group == 16 && m->group_block % 16 == 0 && m->group_block <= 64 && m->group_nfrac >= 23 &&
           m->group_nfrac <= 38 && q->sblock % 16 == 0 && (cfg->promote == 0 || cfg->promote % m->group_block == 0);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The integer form's bytes of one side (pass 0: A, 1: B) straight from
 * its codes: 2v (A, signed) or 2v + 12 (B, unsigned) of each element's
 * value v (an e2m1 value: 2v is an integer of magnitude at most 12; the
 * group kernel takes no flushing), byte k % 4 of word k / 4 of its row's
 * (column's) lane in the panel; per row of A and group of 16 k, -12 times
 * the sum of its bytes (acor); a row (column) with a special code marked
 * and the code's byte that of a zero, as the packing marks them. The last
 * panel's padding lanes and the words past K are the caller's (build_gv). */
typedef struct {
    qops *q;
    int pass, rc;
} gvs_arg;

/* the byte panels' words per k row (gemm_internal.h gkg_int kq): K rounded
 * up to a whole group of 16, over 4 */
static size_t gv_kq(int K) { return ((size_t)K + 15) / 16 * 4; }

/* element by element: rows (columns) [r0, r1) from k0 on (a multiple of
 * 16), through the decode table t, and the pads of K's last word */
static void gv_side_rows(qops *q, int pass, const dtable *t, int r0, int r1, int k0, uint64_t *buf) {
    const int K = q->K, P = pass ? GEMM_F_COLS : GEMM_F_ROWS, pad = pass ? 12 : 0;
    const size_t kq = gv_kq(K), ng = kq / 4, kw = ((size_t)K + 3) / 4 * 4;
    uint8_t *dst = (uint8_t *)(pass ? q->gv_bq : q->gv_aq);
    unsigned char *sp = pass ? q->bcol_sp : q->arow_sp;
    for (int r = r0; r < r1; r++) {
        const uint64_t *cr = k0 < K ? code_vec(q, pass, r, k0, K, buf) : buf;
        uint8_t *lane = dst + ((size_t)(r / P) * kq * (size_t)P + (size_t)(r % P)) * 4;
        unsigned char spr = 0;
        int32_t gsum = 0;
        for (size_t k = (size_t)k0; k < kw; k++) {
            int v = pad;
            if (k < (size_t)K) {
                const uint64_t code = cr[k - (size_t)k0];
                if (t->sp[code]) spr = 1;
                else v += (int)(2 * t->v[code]);
            }
            lane[k / 4 * (size_t)P * 4 + k % 4] = (uint8_t)v;
            gsum += v;
            if (!pass && (k % 16 == 15 || k + 1 == kw)) {
                q->gv_acor[((size_t)(r / P) * ng + k / 16) * (size_t)P + (size_t)(r % P)] = -12 * gsum;
                gsum = 0;
            }
        }
        sp[r] |= spr;
    }
}

/* 64 bytes at a time (one-byte codes below 16 whose values are not
 * special), each code's byte looked up by vpshufb in t16 (its 16
 * entries in every 128-bit lane); 0 where a code was 16 or more (the
 * caller then packs the side element by element) */
#define GVP_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define GVP8_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
/* 16 bytes from each of four rows stride apart, row j in 128-bit lane j */
GVP_TARGET static inline __attribute__((always_inline)) __m512i gv_rows4x16(const uint8_t *s, size_t stride) {
    __m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)s));
    x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(s + stride)), 1);
    x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(s + 2 * stride)), 2);
    return _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(s + 3 * stride)), 3);
}
/* (vpermt2d's indices: dword u of four rows' 16 bytes in x0 (rows 0-3) and
 * x1 (rows 4-7), for u and u + 1, the 8 rows each) */
static const int32_t gvp_tr[16] = {0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29};
/* A in rows: whole panels [0, Rv), groups [0, Kv / 16): 8 rows x 16 k
 * transposed to [word][row] by two permutations of dwords; the group sums by
 * vpdpbusd */
GVP_TARGET static int gv_a_vec(qops *q, const int8_t t16[16], int Rv, int Kv) {
    const __m512i tab = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)t16));
    const int K = q->K, R = GEMM_F_ROWS;
    const size_t kq = gv_kq(K), ng = kq / 4;
    const uint8_t *codes = q->An;
    const __m512i i0 = _mm512_loadu_si512(gvp_tr), i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(2)), ones = _mm512_set1_epi8(1);
    __m512i chk = _mm512_setzero_si512();
    for (int r0 = 0; r0 < Rv; r0 += R)
        for (int g = 0; g < Kv / 16; g++) {
            const uint8_t *src = codes + (size_t)r0 * K + 16 * (size_t)g;
            const __m512i x[2] = {gv_rows4x16(src, (size_t)K), gv_rows4x16(src + 4 * (size_t)K, (size_t)K)};
            chk = _mm512_ternarylogic_epi32(chk, x[0], x[1], 0xFE);
            const __m512i o0 = _mm512_shuffle_epi8(tab, _mm512_permutex2var_epi32(x[0], i0, x[1]));
            const __m512i o1 = _mm512_shuffle_epi8(tab, _mm512_permutex2var_epi32(x[0], i1, x[1]));
            uint8_t *dst = (uint8_t *)q->gv_aq + ((size_t)(r0 / R) * kq + 4 * (size_t)g) * (size_t)R * 4;
            _mm512_storeu_si512(dst, o0), _mm512_storeu_si512(dst + 64, o1);
            const __m512i sm = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, o0), ones, o1);
            const __m256i s8 = _mm256_add_epi32(_mm512_castsi512_si256(sm), _mm512_extracti64x4_epi64(sm, 1));
            _mm256_storeu_si256((__m256i *)(q->gv_acor + ((size_t)(r0 / R) * ng + (size_t)g) * (size_t)R),
                                _mm256_mullo_epi32(s8, _mm256_set1_epi32(-12)));
        }
    return _mm512_test_epi8_mask(chk, _mm512_set1_epi8((char)0xF0)) == 0;
}
/* B in rows (columns of B, transposed): whole panels [0, Rv), groups [0,
 * Kv / 16): four columns' 16 k to a register, their words u and u + 1 (or
 * u + 2 and u + 3) picked by the same permutations, and two such halves
 * of 8 columns joined by 128-bit lanes */
GVP_TARGET static int gv_b_vec(qops *q, const int8_t t16[16], int Rv, int Kv) {
    const __m512i tab = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)t16));
    const int K = q->K, CP = GEMM_F_COLS;
    const size_t kq = gv_kq(K);
    const uint8_t *codes = q->Bn;
    const __m512i i0 = _mm512_loadu_si512(gvp_tr), i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(2));
    __m512i chk = _mm512_setzero_si512();
    for (int c0 = 0; c0 < Rv; c0 += CP)
        for (int g = 0; g < Kv / 16; g++) {
            __m512i z[8];
            for (int j = 0; j < 8; j++) {
                z[j] = gv_rows4x16(codes + (size_t)(c0 + 4 * j) * K + 16 * (size_t)g, (size_t)K);
                chk = _mm512_or_si512(chk, z[j]);
                z[j] = _mm512_shuffle_epi8(tab, z[j]);
            }
            uint8_t *dst = (uint8_t *)q->gv_bq + ((size_t)(c0 / CP) * kq + 4 * (size_t)g) * (size_t)CP * 4;
            for (int hh = 0; hh < 2; hh++) { /* columns 16 hh.. */
                const __m512i *zz = z + 4 * hh;
                const __m512i a01 = _mm512_permutex2var_epi32(zz[0], i0, zz[1]), a23 = _mm512_permutex2var_epi32(zz[2], i0, zz[3]);
                const __m512i b01 = _mm512_permutex2var_epi32(zz[0], i1, zz[1]), b23 = _mm512_permutex2var_epi32(zz[2], i1, zz[3]);
                uint8_t *d = dst + 64 * (size_t)hh;
                _mm512_storeu_si512(d, _mm512_shuffle_i64x2(a01, a23, 0x44));
                _mm512_storeu_si512(d + (size_t)CP * 4, _mm512_shuffle_i64x2(a01, a23, 0xEE));
                _mm512_storeu_si512(d + 2 * (size_t)CP * 4, _mm512_shuffle_i64x2(b01, b23, 0x44));
                _mm512_storeu_si512(d + 3 * (size_t)CP * 4, _mm512_shuffle_i64x2(b01, b23, 0xEE));
            }
        }
    return _mm512_test_epi8_mask(chk, _mm512_set1_epi8((char)0xF0)) == 0;
}
/* B as it lies (K x N, nat): whole panels [0, Rv), words [0, Kv / 4): four
 * k of 32 columns interleaved by two byte permutations (AVX-512 VBMI) */
GVP8_TARGET static int gv_b_vec_nat(qops *q, const int8_t t16[16], int Rv, int Kv) {
    const __m512i tab = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)t16));
    const int K = q->K, N = q->N, CP = GEMM_F_COLS;
    const size_t kq = gv_kq(K);
    const uint8_t *codes = q->Bn;
    uint8_t ib[2][64];
    for (int h = 0; h < 2; h++)
        for (int c = 0; c < 16; c++)
            for (int kk = 0; kk < 4; kk++) ib[h][c * 4 + kk] = (uint8_t)((kk >> 1) * 64 + (kk & 1) * 32 + 16 * h + c);
    const __m512i ib0 = _mm512_loadu_si512(ib[0]), ib1 = _mm512_loadu_si512(ib[1]);
    __m512i chk = _mm512_setzero_si512();
    for (int c0 = 0; c0 < Rv; c0 += CP)
        for (int u = 0; u < Kv / 4; u++) {
            const uint8_t *s = codes + (size_t)(4 * u) * N + (size_t)c0;
            __m512i x01 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)s)),
                                             _mm256_loadu_si256((const __m256i *)(s + N)), 1);
            __m512i x23 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(s + 2 * (size_t)N))),
                                             _mm256_loadu_si256((const __m256i *)(s + 3 * (size_t)N)), 1);
            chk = _mm512_ternarylogic_epi32(chk, x01, x23, 0xFE);
            x01 = _mm512_shuffle_epi8(tab, x01), x23 = _mm512_shuffle_epi8(tab, x23);
            uint8_t *dst = (uint8_t *)q->gv_bq + ((size_t)(c0 / CP) * kq + (size_t)u) * (size_t)CP * 4;
            _mm512_storeu_si512(dst, _mm512_permutex2var_epi8(x01, ib0, x23));
            _mm512_storeu_si512(dst + 64, _mm512_permutex2var_epi8(x01, ib1, x23));
        }
    return _mm512_test_epi8_mask(chk, _mm512_set1_epi8((char)0xF0)) == 0;
}

static void *gv_side(void *arg) {
    gvs_arg *a = arg;
    qops *q = a->q;
    const int pass = a->pass, K = q->K, P = pass ? GEMM_F_COLS : GEMM_F_ROWS, Rn = pass ? q->N : q->M;
    const fpemu_mma_model *m = &q->cfg->model;
    const fpemu_format *f = pass ? m->fb : m->fa;
    dtable own = {0};
    const dtable *t = dtable_cached(m, f);
    uint64_t *buf = malloc(sizeof(uint64_t) * ((size_t)K + 1));
    if (!t && !dtable_build(m, f, &own)) t = &own;
    if (!t || !buf) {
        dtable_free(&own), free(buf);
        a->rc = -1;
        return NULL;
    }
    /* the vector paths: one-byte codes, the table's first 16 entries not
     * special; then every code below 16 (else all again element by element) */
    int vec = q->ncw[pass] == 1 && (pass || !q->nat[0]) && (!q->nat[pass] || __builtin_cpu_supports("avx512vbmi"));
    int8_t t16[16];
    for (int c = 0; c < 16; c++) {
        vec &= !t->sp[c];
        t16[c] = (int8_t)(c < (1 << f->container) && !t->sp[c] ? (int)(2 * t->v[c]) + (pass ? 12 : 0) : 0);
    }
    const int Rv = vec ? Rn / P * P : 0, Kv = q->nat[pass] ? K / 4 * 4 : K / 16 * 16;
    const int done = Rv > 0 && Kv > 0 && /* (0 also where a code was 16 or more) */
                     (!pass ? gv_a_vec(q, t16, Rv, Kv) : q->nat[1] ? gv_b_vec_nat(q, t16, Rv, Kv) : gv_b_vec(q, t16, Rv, Kv));
    if (done) {
        gv_side_rows(q, pass, t, 0, Rv, Kv / 16 * 16, buf); /* the vector paths' rows' last k */
        gv_side_rows(q, pass, t, Rv, Rn, 0, buf);
    } else
        gv_side_rows(q, pass, t, 0, Rn, 0, buf);
    dtable_free(&own), free(buf);
    return NULL;
}

/* The bounds of 16 rows of A (pass 0) or columns of B (1) for block b
 * (build_gv), lanes i0.. (those in real: the rest padding, whose scales
 * read as zeros): the least and greatest scale exponents of the block's
 * groups, L (the least, less the scale format's fraction bits and shift:
 * A's 2 takes the group sums' 1/4), 2^L (in double, and in float where L
 * is in the float end's range, gemm_internal.h GKG_F32_LMIN, else 0), each
 * group's factor f (the scale over 2^L's share: an integer where the scale
 * format has few bits; 0 past the block's groups) and bits, the most bits
 * of an f (99 where one is not an integer below 2^20). Powers of two by
 * vscalefps (as ldexpf: inf above the range, gradual underflow below; the
 * GEMM runs under the default MXCSR). gs: the block's groups' scale
 * indices (gv_groups, once per block: no division per row). */
typedef struct {
    __m512i L, hi, bits;
    __m512 f[4], pf;
    __m512d p[2];
} gv_bound16;
#define GVB_TARGET __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
GVB_TARGET static inline __attribute__((always_inline)) void gv_bounds16(const qops *q, int pass, const int32_t *gs, int ngr, size_t i0,
                                                                         __mmask16 real, gv_bound16 *o) {
    const int smb = q->sfmt->mbits, wide = group_wide(q->sfmt), shift = pass ? 0 : 2;
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512 v[4];
    __m512i e[4], lo = _mm512_set1_epi32(INT32_MAX), hi = _mm512_set1_epi32(INT32_MIN);
    for (int y = 0; y < ngr; y++) {
        if (pass) { /* (scales nsb x Np: the columns side by side) */
            const size_t x = (size_t)gs[y] * (size_t)q->Np + i0;
            v[y] = _mm512_maskz_loadu_ps(real, q->gsbv + x), e[y] = _mm512_maskz_loadu_epi32(real, q->gsbe + x);
        } else { /* (M x nsb: a row's nsb apart) */
            const __m512i ix = _mm512_add_epi32(_mm512_mullo_epi32(lane, _mm512_set1_epi32(q->nsb)), _mm512_set1_epi32(gs[y]));
            v[y] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), real, ix, q->gsav + i0 * (size_t)q->nsb, 4);
            e[y] = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), real, ix, q->gsae + i0 * (size_t)q->nsb, 4);
        }
        lo = _mm512_min_epi32(lo, e[y]), hi = _mm512_max_epi32(hi, e[y]);
    }
    o->L = _mm512_sub_epi32(lo, _mm512_set1_epi32(smb + shift)), o->hi = hi;
    const __m512 Lf = _mm512_cvtepi32_ps(o->L);
    o->p[0] = _mm512_scalef_pd(_mm512_set1_pd(1.0), _mm512_cvtepi32_pd(_mm512_castsi512_si256(o->L)));
    o->p[1] = _mm512_scalef_pd(_mm512_set1_pd(1.0), _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(o->L, 1)));
    const __mmask16 in = _mm512_cmpge_epi32_mask(o->L, _mm512_set1_epi32(GKG_F32_LMIN)) &
                         _mm512_cmple_epi32_mask(o->L, _mm512_set1_epi32(GKG_F32_LMAX));
    o->pf = _mm512_maskz_scalef_ps(in, one, Lf);
    const __m512 ps = _mm512_scalef_ps(one, _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_set1_epi32(smb), lo)));
    __m512i bits = _mm512_setzero_si512();
    for (int y = 0; y < 4; y++) {
        o->f[y] = _mm512_setzero_ps();
        if (y >= ngr) continue;
        o->f[y] = wide ? _mm512_scalef_ps(one, _mm512_cvtepi32_ps(_mm512_sub_epi32(e[y], lo))) : _mm512_mul_ps(v[y], ps);
        /* (f >= 0, a magnitude) an integer below 2^20 with E + 1 bits: its
         * bits below 2^0 zero, read off the encoding */
        const __m512i u = _mm512_castps_si512(o->f[y]);
        const __m512i E = _mm512_sub_epi32(_mm512_srli_epi32(u, 23), _mm512_set1_epi32(127));
        const __m512i low = _mm512_sub_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_sub_epi32(_mm512_set1_epi32(23), E)),
                                             _mm512_set1_epi32(1));
        const __mmask16 nonint = _mm512_cmplt_epi32_mask(E, _mm512_setzero_si512()) | _mm512_cmpge_epi32_mask(E, _mm512_set1_epi32(20)) |
                                 _mm512_test_epi32_mask(u, low);
        const __m512i by = _mm512_mask_mov_epi32(_mm512_add_epi32(E, _mm512_set1_epi32(1)), nonint, _mm512_set1_epi32(99));
        bits = _mm512_mask_max_epi32(bits, _mm512_test_epi32_mask(u, u), bits, by); /* (a zero f: none) */
    }
    o->bits = bits;
}
/* A tile's bounds (gkg_tile) from its lanes m of a gv_bound16: lo and hi
 * as given (A: L and U; B: clx and cuy) */
GVB_TARGET static inline __attribute__((always_inline)) void gv_tile16(gkg_tile *t, __mmask16 m, const gv_bound16 *g, __m512i lo,
                                                                       __m512i hi) {
    t->bits = _mm512_mask_reduce_max_epi32(m, g->bits), t->lo = _mm512_mask_reduce_min_epi32(m, lo);
    t->hi = _mm512_mask_reduce_max_epi32(m, hi);
    t->f32 = (_mm512_cmp_ps_mask(g->pf, _mm512_setzero_ps(), _CMP_NEQ_UQ) & m) == m;
}
/* A's rows [0, Mp) and B's columns [0, Np), 16 at a time, block by block */
GVB_TARGET static void gv_bounds(qops *q, const int32_t (*gs)[4], const int *ngr, size_t nbk) {
    const int R = GEMM_F_ROWS, M = q->M, N = q->N, nf = q->cfg->model.group_nfrac;
    const size_t Mp = (size_t)(M + R - 1) / R * R, Np = (size_t)q->Np;
    for (size_t i0 = 0; i0 < Mp; i0 += 16)
        for (size_t b = 0; b < nbk; b++) {
            const __mmask16 rows = (__mmask16)(Mp - i0 >= 16 ? 0xFFFF : 0xFF); /* (Mp: a multiple of 8) */
            const __mmask16 real = (__mmask16)((size_t)M - i0 >= 16 ? 0xFFFF : (1u << (M - (int)i0)) - 1);
            gv_bound16 g;
            gv_bounds16(q, 0, gs[b], ngr[b], i0, real, &g);
            int32_t L[16], U[16];
            float f[4][16], pf[16];
            double p[16];
            _mm512_storeu_si512(L, g.L), _mm512_storeu_si512(U, g.hi), _mm512_storeu_ps(pf, g.pf);
            _mm512_storeu_pd(p, g.p[0]), _mm512_storeu_pd(p + 8, g.p[1]);
            for (int y = 0; y < 4; y++) _mm512_storeu_ps(f[y], g.f[y]);
            for (int t = 0; t < 2 && rows >> (8 * t) & 1; t++) {
                gv_tile16(q->gv_rtile + (i0 / (size_t)R + (size_t)t) * nbk + b, (__mmask16)(0xFF << (8 * t)), &g, g.L, g.hi);
                gkg_row *rw = &q->gv_rows[((i0 / (size_t)R + (size_t)t) * nbk + b) * (size_t)R];
                for (int l = 8 * t; l < 8 * t + 8; l++, rw++) {
                    rw->la = L[l], rw->ua = U[l], rw->pa = p[l], rw->paf = pf[l];
                    for (int y = 0; y < 4; y++) rw->fa[y] = f[y][l];
                }
            }
        }
    for (size_t b = 0; b < nbk; b++)
        for (size_t i0 = 0; i0 < Np; i0 += 16) { /* (Np: a multiple of 32) */
            const __mmask16 real = (__mmask16)(i0 >= (size_t)N ? 0 : (size_t)N - i0 >= 16 ? 0xFFFF : (1u << (N - (int)i0)) - 1);
            gv_bound16 g;
            gv_bounds16(q, 1, gs[b], ngr[b], i0, real, &g);
            const size_t x = b * Np + i0;
            const __m512i clx = _mm512_add_epi32(g.L, _mm512_set1_epi32(nf + 127));
            const __m512i cuy = _mm512_add_epi32(g.hi, _mm512_set1_epi32(23 - nf + 127));
            _mm512_storeu_si512(q->gv_clx + x, clx), _mm512_storeu_si512(q->gv_cuy + x, cuy);
            gv_tile16(q->gv_ctile + b * (Np / 16) + i0 / 16, 0xFFFF, &g, clx, cuy);
            _mm512_storeu_pd(q->gv_cpb + x, g.p[0]), _mm512_storeu_pd(q->gv_cpb + x + 8, g.p[1]);
            _mm512_storeu_ps(q->gv_cpf + x, g.pf);
            for (int y = 0; y < 4; y++) _mm512_storeu_ps(q->gv_crb + (b * 4 + (size_t)y) * Np + i0, g.f[y]);
        }
}

/* Block b's groups (of 16 k, up to 4): their scale indices (k / sblock)
 * into gs; returns how many. */
static int gv_groups(const qops *q, size_t b, int32_t gs[4]) {
    const int B = q->cfg->model.group_block, K = q->K;
    const size_t g0 = b * (size_t)B, g1 = g0 + (size_t)B < (size_t)K ? g0 + (size_t)B : (size_t)K;
    int n = 0;
    for (size_t k = g0; k < g1; k += 16) gs[n++] = (int32_t)(k / (size_t)q->sblock);
    return n;
}

/* Its data (gemm_internal.h gkg_int): the byte panels from the codes
 * (gv_side) and the bounds from the scales (build_scales_g first). -1: out
 * of memory. */
static int build_gv(qops *q) {
    const fpemu_mma_model *m = &q->cfg->model;
    const int R = GEMM_F_ROWS, CP = GEMM_F_COLS, M = q->M, N = q->N, K = q->K, B = m->group_block;
    const size_t Mp = (size_t)(M + R - 1) / R * R, Np = (size_t)q->Np, kq = gv_kq(K), ng = kq / 4;
    const size_t nbk = ((size_t)K + (size_t)B - 1) / (size_t)B;
    q->gv_aq = big_alloc(Mp * kq * 4 + 4, 0), q->gv_bq = big_alloc(Np * kq * 4 + 4, 0);
    q->gv_acor = calloc(Mp * ng + 1, 4), q->gv_rows = calloc(Mp * nbk + 1, sizeof(gkg_row));
    q->gv_rtile = malloc((Mp / (size_t)R * nbk + 1) * sizeof(gkg_tile)), q->gv_ctile = malloc((nbk * (Np / 16) + 1) * sizeof(gkg_tile));
    q->gv_clx = malloc((nbk * Np + 1) * 4), q->gv_cuy = malloc((nbk * Np + 1) * 4);
    q->gv_crb = calloc(nbk * 4 * Np + 1, 4), q->gv_cpb = malloc((nbk * Np + 1) * 8), q->gv_cpf = malloc((nbk * Np + 1) * 4);
    if (!q->gv_aq || !q->gv_bq || !q->gv_acor || !q->gv_rows || !q->gv_rtile || !q->gv_ctile || !q->gv_clx || !q->gv_cuy ||
        !q->gv_crb || !q->gv_cpb || !q->gv_cpf)
        return -1;
    /* the bytes (gv_side, on two threads where the GEMM has more than one):
     * the words past K's (up to a whole group) and the last panel's padding
     * lanes 0 (A) and 12 (B) */
    const size_t nq = ((size_t)K + 3) / 4;
    for (size_t p = 0; p < Mp / (size_t)R; p++) memset((uint8_t *)q->gv_aq + (p * kq + nq) * (size_t)R * 4, 0, (kq - nq) * (size_t)R * 4);
    for (size_t p = 0; p < Np / (size_t)CP; p++)
        memset((uint8_t *)q->gv_bq + (p * kq + nq) * (size_t)CP * 4, 12, (kq - nq) * (size_t)CP * 4);
    if (M % R) memset((uint8_t *)q->gv_aq + (size_t)(M / R) * kq * (size_t)R * 4, 0, kq * (size_t)R * 4);
    if (N % CP) memset((uint8_t *)q->gv_bq + (size_t)(N / CP) * kq * (size_t)CP * 4, 12, kq * (size_t)CP * 4);
    gvs_arg sa[2] = {{q, 0, 0}, {q, 1, 0}};
    both_sides(sides_threaded(q), gv_side, sa, sizeof sa[0]);
    if (sa[0].rc || sa[1].rc) return -1;
    /* the bounds, per row of A (and its padding) and per column of B, per
     * block; B's scales lie column-contiguous (gsbv: nsb x Np), so its
     * columns are walked block by block */
    int32_t(*gs)[4] = malloc(sizeof *gs * nbk);
    int *ngr = malloc(sizeof *ngr * nbk);
    if (!gs || !ngr) {
        free(gs), free(ngr);
        return -1;
    }
    for (size_t b = 0; b < nbk; b++) ngr[b] = gv_groups(q, b, gs[b]);
    gv_bounds(q, (const int32_t(*)[4])gs, ngr, nbk);
    free(gs), free(ngr);
    q->gi = (gkg_int){.aq = q->gv_aq, .bq = q->gv_bq, .acor = q->gv_acor, .kq = kq, .nbk = (int)nbk, .rows = q->gv_rows,
                      .rtile = q->gv_rtile, .clx = q->gv_clx, .cuy = q->gv_cuy, .crb = q->gv_crb, .cpb = q->gv_cpb,
                      .cpf = q->gv_cpf, .ctile = q->gv_ctile};
    return 0;
}
#else
static int build_gv(qops *q) { /* (never called: emu__gemm_vnni is 0 off x86) */
    q->use_gv = 0;
    return 0;
}
#endif

/* Can the group kernel run this model (gemm_kernel.c: the group rule, its
 * sums exact in f32 and double)? Block-scaled OCP e2m1 on a model with
 * groups of at most 16, scale blocks of whole groups (NVFP4's 16, MX's
 * 32), a block of whole groups, RZ alignment and result, no floor; scales
 * of at most 4 bits with |E| <= 15 (NVFP4's e4m3), or powers of two with
 * |E| <= 127 (MX's e8m0: the kernel's wide mode, which keeps the scales'
 * exponents out of f32); the block's terms below 2^(group_nfrac + 12) each
 * (group sums of at most 16 * 36 < 2^10, scale significands below 4) and
 * their sum below 2^53. */
static int group_kernel_ok(const fpemu_gemm_config *cfg, const qops *q) {
    const fpemu_mma_model *m = &cfg->model;
    if (!q->sa || m->group <= 0 || m->group > 16 || !emu__is_ocp_e2m1(m->fa) || !emu__is_ocp_e2m1(m->fb)) return 0;
    if (q->sblock % m->group || m->group_block < m->group || m->group_block % m->group || m->group_nfrac < 1) return 0;
    if (m->kind != FPEMU_MMA_KIND_BLOCK || m->norm != FPEMU_MMA_NORM_END || m->chain != FPEMU_MMA_CHAIN_ROUNDED ||
        m->out_round != FPEMU_RTZ || m->align != FPEMU_MMA_ALIGN_RZ || m->has_emax_floor || m->flush_subnormals)
        return 0;
    const fpemu_format *s = q->sfmt;
    if (!group_wide(s) && (s->mbits > 3 || s->emax > 15 || s->emin < -15)) return 0;
    double terms = m->group_block / m->group + 1;
    return terms * ldexp(1.0, m->group_nfrac + 12) < ldexp(1.0, 53);
}

/* Can the fma-chain kernel run this model (gemm_kernel.c: the reference
 * kind fma-seq, which is the host's fmaf chain when every input is a float
 * and d is f32, rne, no flushing, no block scales)? */
static int fs_kernel_ok(const fpemu_gemm_config *cfg, const qops *q) {
    const fpemu_mma_model *m = &cfg->model;
    return m->kind == FPEMU_MMA_KIND_FMA_SEQ && !q->sa && m->out_round == FPEMU_RNE && !m->flush_subnormals &&
           !strcmp(m->fc->name, "f32") && !strcmp(m->fd->name, "f32") && emu__fits_f32(m->fa) && emu__fits_f32(m->fb);
}

/* Can the exact-sum kernel run this model (gemm_kernel.c: the reference
 * kind exact, f32 c and d, rne, no block scales, formats whose products
 * are multiples of 2^lo below 2^hi with (K + 1) * 2^(hi - lo) <= 2^53, the
 * products exact in double)? Sets lo and hi. */
static int ex_kernel_ok(const fpemu_gemm_config *cfg, const qops *q, int *lo, int *hi) {
    const fpemu_mma_model *m = &cfg->model;
    if (m->kind != FPEMU_MMA_KIND_EXACT || q->sa || m->out_round != FPEMU_RNE || m->flush_subnormals ||
        strcmp(m->fc->name, "f32") || strcmp(m->fd->name, "f32") || !emu__fits_f32(m->fa) || !emu__fits_f32(m->fb) ||
        m->fa->p + m->fb->p > 53)
        return 0;
    *lo = (m->fa->emin - m->fa->mbits) + (m->fb->emin - m->fb->mbits);
    *hi = (m->fa->emax + 1) + (m->fb->emax + 1);
    return ldexp((double)q->K + 1, *hi - *lo) <= ldexp(1.0, 53);
}

/* The exact-sum kernel's AMX form (isa 4: gemm_kernel.c) takes formats whose
 * values are integers of at most 3 base-128 digits (fp8 e4m3, fp6, fp4);
 * sets q's x_alo, x_nda and x_ndb (digits 0 where it does not). */
static int exa_ok(const fpemu_gemm_config *cfg, qops *q) {
    const fpemu_format *fa = cfg->model.fa, *fb = cfg->model.fb;
    q->x_alo = fa->emin - fa->mbits;
    q->x_nda = emu__gemm_ex_digits(fa->emin, fa->mbits, fa->emax);
    q->x_ndb = emu__gemm_ex_digits(fb->emin, fb->mbits, fb->emax);
    if (!q->x_nda || !q->x_ndb) q->x_nda = q->x_ndb = 0;
    return q->x_nda > 0;
}

/* Can the pairwise-tree kernel run this model (gemm_kernel.c: the
 * reference kind pairwise with one tree over K, no ftz, rne, f32 c and d,
 * no block scales; every product an f32 value: inputs of at most 12 bits,
 * each an f32 value, whose products lie between f32's least subnormal and
 * its largest power)? Where the formats' ranges do not prove the products'
 * (bf16, tf32: f32's exponents), *check is set and the data decide
 * (pt_select, after the packing). */
static int pt_kernel_ok(const fpemu_gemm_config *cfg, const qops *q, int *check) {
    const fpemu_mma_model *m = &cfg->model;
    const fpemu_format *fa = m->fa, *fb = m->fb;
    if (m->kind != FPEMU_MMA_KIND_PAIRWISE || m->ftz || m->block != 0 || m->out_round != FPEMU_RNE || q->sa) return 0;
    if (strcmp(m->fc->name, "f32") || strcmp(m->fd->name, "f32") || fa->p > 12 || fb->p > 12) return 0;
    if (fa->emax > 127 || fb->emax > 127 || fa->emin - fa->mbits < -149 || fb->emin - fb->mbits < -149) return 0;
    if (check) *check = !((fa->emin - fa->mbits) + (fb->emin - fb->mbits) >= -149 && (fa->emax + 1) + (fb->emax + 1) <= 127);
    return 1;
}

/* The data's side of pt_kernel_ok (*check): per row of A and column of B,
 * the least lsb bound (a nonzero finite value's exponent, emin's for a
 * subnormal, less p - 1) and the greatest exponent (inf and NaN take no
 * part: they make their lanes inf or NaN, which the kernel flags). Where
 * row i and column j give lo_i + lo_j < -149 (a product could have bits
 * below f32's least subnormal) or hi_i + hi_j + 2 > 127 (a product could
 * reach 2^128), the rows of A or the columns of B that break the bounds
 * against the other side's extremes, whichever costs fewer outputs, go to
 * the scalar model (arow_sp, bcol_sp): every pair left then keeps both.
 * 0, or -1 out of memory. */
#define PT_NONE (INT_MAX / 4)
static inline void pt_val(float f, int dp, int *lo, int *hi) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u &= 0x7FFFFFFFu;
    if (u == 0 || u >= 0x7F800000u) return;
    const int be = (int)(u >> 23), l = (be ? be : 1) - 127 - dp, h = be - 127;
    *lo = l < *lo ? l : *lo, *hi = h > *hi ? h : *hi;
}
#if defined(__x86_64__) && defined(__GNUC__)
/* nv vectors of 16 floats, v, v + step, ..., into lane-wise bounds: l the
 * least biased exponent (1 for a subnormal), h the greatest, PT_NONE and
 * -PT_NONE where a lane saw no nonzero finite value */
VPK_TARGET static void pt_range16(const float *v, size_t nv, size_t step, int l[16], int h[16]) {
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000), one = _mm512_set1_epi32(1);
    __m512i lo = _mm512_set1_epi32(PT_NONE), hi = _mm512_set1_epi32(-PT_NONE);
    for (size_t x = 0; x < nv; x++) {
        const __m512i u = _mm512_and_si512(_mm512_loadu_si512(v + x * step), absm);
        const __mmask16 ok = _mm512_test_epi32_mask(u, u) & _mm512_cmplt_epi32_mask(u, inf);
        const __m512i be = _mm512_srli_epi32(u, 23);
        lo = _mm512_mask_min_epi32(lo, ok, lo, _mm512_max_epi32(be, one));
        hi = _mm512_mask_max_epi32(hi, ok, hi, be);
    }
    _mm512_storeu_si512(l, lo), _mm512_storeu_si512(h, hi);
}
#endif
static int pt_select(qops *q) {
    const fpemu_mma_model *m = &q->cfg->model;
    const int M = q->M, N = q->N, K = q->K, none = PT_NONE;
    int *rlo = malloc(sizeof(int) * ((size_t)M + (size_t)N) * 2 + 1);
    if (!rlo) return -1;
    int *rhi = rlo + M, *clo = rhi + M, *chi = clo + N;
    for (int i = 0; i < M; i++) rlo[i] = none, rhi[i] = -none;
    for (int j = 0; j < N; j++) clo[j] = none, chi[j] = -none;
    const int dpa = m->fa->p - 1, dpb = m->fb->p - 1;
    for (int p = 0; p * GEMM_F_ROWS < M; p++) { /* A's panels: 8 rows, k after k */
        const float *v = q->avf + (size_t)p * K * GEMM_F_ROWS;
        size_t x0 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
        if (q->vpack) { /* 16 lanes: 2 k of 8 rows */
            int l[16], h[16];
            pt_range16(v, (size_t)K * GEMM_F_ROWS / 16, 16, l, h);
            x0 = (size_t)K * GEMM_F_ROWS / 16 * 16;
            for (int r = 0; r < GEMM_F_ROWS && p * GEMM_F_ROWS + r < M; r++) {
                const int i = p * GEMM_F_ROWS + r, a = l[r] < l[r + 8] ? l[r] : l[r + 8], b = h[r] > h[r + 8] ? h[r] : h[r + 8];
                if (a != none) rlo[i] = a - 127 - dpa, rhi[i] = b - 127;
            }
        }
#endif
        for (size_t x = x0; x < (size_t)K * GEMM_F_ROWS; x++)
            if (p * GEMM_F_ROWS + (int)(x % GEMM_F_ROWS) < M) pt_val(v[x], dpa, &rlo[p * GEMM_F_ROWS + x % GEMM_F_ROWS], &rhi[p * GEMM_F_ROWS + x % GEMM_F_ROWS]);
    }
    for (int p = 0; p * GEMM_F_COLS < N; p++) { /* B's panels: 32 columns, k after k */
        const float *v = q->bvf + (size_t)p * K * GEMM_F_COLS;
        int done = 0;
#if defined(__x86_64__) && defined(__GNUC__)
        if (q->vpack) {
            for (int h2 = 0; h2 < 2; h2++) {
                int l[16], h[16];
                pt_range16(v + 16 * h2, (size_t)K, GEMM_F_COLS, l, h);
                for (int c = 0; c < 16 && p * GEMM_F_COLS + 16 * h2 + c < N; c++)
                    if (l[c] != none) clo[p * GEMM_F_COLS + 16 * h2 + c] = l[c] - 127 - dpb, chi[p * GEMM_F_COLS + 16 * h2 + c] = h[c] - 127;
            }
            done = 1;
        }
#endif
        for (int k = 0; !done && k < K; k++)
            for (int c = 0; c < GEMM_F_COLS && p * GEMM_F_COLS + c < N; c++)
                pt_val(v[(size_t)k * GEMM_F_COLS + c], dpb, &clo[p * GEMM_F_COLS + c], &chi[p * GEMM_F_COLS + c]);
    }
    int la = none, ha = -none, lb = none, hb = -none;
    for (int i = 0; i < M; i++) la = rlo[i] < la ? rlo[i] : la, ha = rhi[i] > ha ? rhi[i] : ha;
    for (int j = 0; j < N; j++) lb = clo[j] < lb ? clo[j] : lb, hb = chi[j] > hb ? chi[j] : hb;
    if (la != none && lb != none && (la + lb < -149 || ha + hb + 2 > 127)) {
        size_t costr = 0, costc = 0;
        for (int i = 0; i < M; i++) costr += rlo[i] != none && (rlo[i] + lb < -149 || rhi[i] + hb + 2 > 127) ? (size_t)N : 0;
        for (int j = 0; j < N; j++) costc += clo[j] != none && (la + clo[j] < -149 || ha + chi[j] + 2 > 127) ? (size_t)M : 0;
        if (costr <= costc)
            for (int i = 0; i < M; i++) q->arow_sp[i] |= rlo[i] != none && (rlo[i] + lb < -149 || rhi[i] + hb + 2 > 127);
        else
            for (int j = 0; j < N; j++) q->bcol_sp[j] |= clo[j] != none && (la + clo[j] < -149 || ha + chi[j] + 2 > 127);
    }
    free(rlo);
    return 0;
}

/* The kernels that read the packed values alone (gkf_args av, bv, no
 * exponent words): which one runs this model, if any (lo, hi: the
 * exact-sum kernel's bounds). */
enum { VK_NONE, VK_FS, VK_EX, VK_PT };
static int values_kernel(const fpemu_gemm_config *cfg, const qops *q, int *lo, int *hi) {
    if (fs_kernel_ok(cfg, q)) return VK_FS;
    if (ex_kernel_ok(cfg, q, lo, hi)) return VK_EX;
    if (pt_kernel_ok(cfg, q, NULL)) return VK_PT;
    return VK_NONE;
}

/* Can the pairwise kernel (gemm_kernel.c) run this model? Blocks of at
 * most 64 products with ftz (AMD CDNA2's rule; block 0 with ftz, one
 * flushed tree over K, stays on the scalar model, and the reference kind
 * without ftz has the pairwise-tree kernel), RNE, f32 c and d, inputs of at most 12 bits
 * (products exact in f32) whose values are normal floats or subnormals
 * of the format (read as +0), no block scales (the model's scaled tree is
 * another path), chunks of whole blocks. */
static int pw_kernel_ok(const fpemu_gemm_config *cfg, const qops *q) {
    const fpemu_mma_model *m = &cfg->model;
    if (m->kind != FPEMU_MMA_KIND_PAIRWISE || !m->ftz || m->block < 1 || m->block > 64 || m->out_round != FPEMU_RNE) return 0;
    if (strcmp(m->fc->name, "f32") || strcmp(m->fd->name, "f32") || q->sa) return 0;
    if (m->fa->p > 12 || m->fb->p > 12) return 0;
    if (m->fa->emax > 127 || m->fb->emax > 127 || m->fa->emin < -126 || m->fb->emin < -126) return 0;
    return cfg->promote == 0 || cfg->promote % m->block == 0;
}

static int fused_kernel_ok(const fpemu_gemm_config *cfg, const qops *q, int *check);

/* Can a vectorised kernel run this model? */
static int kernel_ok(const fpemu_gemm_config *cfg, const qops *q) {
    const fpemu_mma_model *m = &cfg->model;
    int lo, hi;
    if (!cfg->scalar_only && values_kernel(cfg, q, &lo, &hi)) return 1;
    if (m->kind == FPEMU_MMA_KIND_PAIRWISE) return !cfg->scalar_only && pw_kernel_ok(cfg, q);
    if (cfg->scalar_only || m->kind != FPEMU_MMA_KIND_BLOCK || m->norm != FPEMU_MMA_NORM_END || m->chain != FPEMU_MMA_CHAIN_ROUNDED) return 0;
    if (m->fuse_nfrac > 0) { /* two-stage blocks: the f32 kernel's fused variant or nothing */
        int check;
        return fused_kernel_ok(cfg, q, &check);
    }
    if (m->out_round != FPEMU_RTZ || m->nfrac > 28) return 0;
    if (strcmp(m->fc->name, "f32") || strcmp(m->fd->name, "f32")) return 0;
    if (m->fa->p > 24 || m->fb->p > 24) return 0;
    /* block-scaled e2m1 x e2m1 on a model with the group rule (b200): the
     * group kernel, or the scalar model */
    if (q->sa && m->group > 0 && emu__is_ocp_e2m1(m->fa) && emu__is_ocp_e2m1(m->fb)) return group_kernel_ok(cfg, q);
    return 1;
}

/* Do the f64 kernel's doubles hold every product and alignment power
 * exactly (custom formats with extreme biases, and fpemu_gemm_codes' scale
 * formats, can leave double's range), with room below the least alignment
 * power for a zero c that takes no part (run_job's zero_c_e)? Every
 * registry format passes with room to spare (f32 x f32: 2^-298). */
static int kernel_range_ok(const fpemu_gemm_config *cfg, const qops *q) {
    const fpemu_mma_model *m = &cfg->model;
    int s_emin = 0, s_lo = 0, s_hi = 0;
    if (q->sa) s_emin = q->sfmt->emin, s_lo = q->sfmt->emin - q->sfmt->mbits, s_hi = q->sfmt->emax + 1;
    int emin = m->fa->emin + m->fb->emin + 2 * s_emin;                                  /* least alignment power */
    int lo = m->fa->emin - m->fa->mbits + m->fb->emin - m->fb->mbits + 2 * s_lo;        /* least product bit */
    int hi = m->fa->emax + 1 + m->fb->emax + 1 + 2 * s_hi;                              /* products below 2^hi */
    return emin > m->nfrac - 1000 && lo > -1070 && hi < 1000;
}

/* Does the f32 kernel stay exact when every product that is not zero has
 * its alignment exponent in [lo, hi - 2] (products below 2^hi)? The
 * products, the alignment powers and 2^(nfrac - emax) must be normal
 * floats, and a block result is 0 or at least 2^(lo - nfrac), which must
 * be at least thr = 2^(nfrac - 126) (gemm_kernel.c). A zero that takes
 * part (zero_product) needs no bound: it decides emax only in a block
 * whose terms are all zero (c included, or c is at or above thr), which
 * sums to +0 at any emax. */
/* Does an emax floor lie above c's least exponent (fc's emin: a subnormal
 * c counts at emin, a zero one not at all), where it may cut a c the f32
 * kernel would keep? */
static int floor_above_c(const fpemu_mma_model *m) { return m->has_emax_floor && m->emax_floor > m->fc->emin; }

static int f32_range_ok(const fpemu_mma_model *m, int lo, int hi) {
    if (lo <= m->nfrac - 126 || hi > 120) return 0;
    if (lo - 2 < 2 * m->nfrac - 126) return 0;
    /* a floor at or below every product's and c's exponent never acts
     * (h100's -133 with f16 or fp8 inputs) */
    if (floor_above_c(m) || (m->has_emax_floor && m->emax_floor > lo)) return 0;
    return 1;
}

/* Can the f32 kernel run this model? Inputs of at most 12 bits (products
 * exact in f32's 24), RZ alignment, no NVFP4, block scales (MX) only as
 * powers of two, and block sums that fit int32: terms below
 * smax_a * smax_b * 2^nfrac (smax = 2 - 2^(1-p), the largest significand)
 * and c's below 2^(nfrac+1); where a whole block may not fit, each half
 * must (*split: h100 f16 with 16 products at nfrac 25, the b200's 32) and
 * the kernel flags the lanes whose total leaves int32. *count: the blocks
 * are small enough for the AVX-512 count pass. *check: the
 * formats' exponent range does not prove f32_range_ok (bf16, tf32, block
 * scales), so the packed data's range decides (run). */
/* Are a format's lsb exponents (its least subnormal's to its greatest
 * power of two) within the count pass's bytes (gemm_internal.h)? */
static int lsb_ok(const fpemu_format *f) { return f->emin - (f->p - 1) >= GEMM_F_LSB_QMIN && f->emax <= GEMM_F_LSB_QMAX; }

/* Are a format's exponents within the count pass's exponent bytes at this
 * nfrac? Its pass 1 (gemm_kernel.c) gives a part that takes no part the
 * byte -128: with every exponent at most nfrac + 2 its sums stay at or
 * below nfrac - 126, the floor thr stands for, and cannot raise a block's
 * emax (with a larger exponent, a lane whose block has no product taking
 * part would get an emax above the floor, and cut its c coarser than the
 * model; the presets' fp8 are within it: e5m2's 15 at nfrac 13). */
static int xbyte_ok(const fpemu_mma_model *m, const fpemu_format *f) { return f->emax <= m->nfrac + 2; }

static int f32_kernel_ok(const fpemu_gemm_config *cfg, const qops *q, int *split, int *count, int *check) {
    const fpemu_mma_model *m = &cfg->model;
    if (m->align != FPEMU_MMA_ALIGN_RZ || cfg->scaling.kind == FPEMU_GEMM_SCALING_NVFP4) return 0;
    if (q->sa && q->sfmt->mbits != 0) return 0; /* (the group rule never reaches here: kernel_ok) */
    if (m->fa->p > 12 || m->fb->p > 12) return 0; /* products <= 24 bits */
    if (m->nfrac < 1 || m->nfrac > 100) return 0;
    int B = m->block > 0 ? m->block : 0;
    if (B <= 0) return 0;
    double term = (2 - ldexp(1.0, 1 - m->fa->p)) * (2 - ldexp(1.0, 1 - m->fb->p)) * ldexp(1.0, m->nfrac);
    double cterm = ldexp(1.0, m->nfrac + 1);
    if (B * term + cterm < 2147483648.0) *split = 0;
    else if ((B + 1) / 2 * term + cterm < 2147483648.0) *split = 1;
    else return 0;
    /* the count pass (gemm_kernel.c): one chain's terms, each below term + 1
     * quanta, stay below 2^22 of them; blocks of k pairs whose counts fit a
     * byte; formats whose lsb exponents fit the bytes (fp8, fp6, fp4); no
     * block scales (the lsb bytes are the values') */
    *count = !*split && !q->sa && B % 2 == 0 && B <= 254 && B * (term + 1) < 4194304.0 && lsb_ok(m->fa) && lsb_ok(m->fb) &&
             xbyte_ok(m, m->fa) && xbyte_ok(m, m->fb);
    int lo = m->fa->emin + m->fb->emin, hi = (m->fa->emax + 1) + (m->fb->emax + 1);
    *check = q->sa || !f32_range_ok(m, lo, hi);
    return 1;
}

/* Can the f32 kernel's fused variant (gemm_kernel.c _f32f) run this model?
 * Two-stage blocks (fuse_nfrac > 0: the mi300's f16, bf16 and xf32, and
 * with split = 2 its fp8), RZ alignment of the products (and halves), results rounded to
 * nearest-even in f32 (c and d f32), inputs of at most 12 bits (a tf32
 * truncation of f32 inputs counts as 11), no block scales, zeros that take
 * no part in emax (a zero product below thr could otherwise decide E), and
 * sums that fit: the products' int32 (B terms below 2^(nfrac + 2)) and the
 * epilogue's integer T below 2^52 (2^(31 + fuse_nfrac - nfrac) +
 * 2^(fuse_nfrac + 1)). *check as f32_kernel_ok's. */
static int fused_kernel_ok(const fpemu_gemm_config *cfg, const qops *q, int *check) {
    const fpemu_mma_model *m = &cfg->model;
    if (m->kind != FPEMU_MMA_KIND_BLOCK || m->fuse_nfrac <= 0 || m->group > 0) return 0;
    if (m->align != FPEMU_MMA_ALIGN_RZ || m->fuse_align > FPEMU_MMA_ALIGN_RD || m->zero_product) return 0;
    if (m->out_round != FPEMU_RNE || m->out_mant != 23 || strcmp(m->fc->name, "f32") || strcmp(m->fd->name, "f32")) return 0;
    if (q->sa || cfg->scaling.kind == FPEMU_GEMM_SCALING_NVFP4) return 0;
    int pa = m->fa->p, pb = m->fb->p;
    if (m->tf32_truncate && m->fa->ebits == 8 && m->fa->mbits == 23 && m->fa->pad == 0) pa = 11;
    if (m->tf32_truncate && m->fb->ebits == 8 && m->fb->mbits == 23 && m->fb->pad == 0) pb = 11;
    if (pa > 12 || pb > 12 || m->nfrac < 1 || m->nfrac > 28) return 0;
    if (m->fuse_nfrac < m->nfrac || m->fuse_nfrac - m->nfrac > 20 || m->fuse_nfrac > 50) return 0;
    if (m->block <= 0 || (double)m->block * ldexp(1.0, m->nfrac + 2) >= 2147483648.0) return 0;
    int lo = m->fa->emin + m->fb->emin, hi = (m->fa->emax + 1) + (m->fb->emax + 1);
    *check = !f32_range_ok(m, lo, hi);
    return 1;
}

/* The data's side of f32_kernel_ok: every value a float, every scale a
 * power of two, and the nonzero products' exponents within f32_range_ok. */
static int f32_data_ok(const qops *q) {
    const fpemu_mma_model *m = &q->cfg->model;
    if (q->f_bad[0] || q->f_bad[1]) return 0;
    if (q->f_wlo[0] > q->f_whi[0] || q->f_wlo[1] > q->f_whi[1]) /* an operand all zeros: no nonzero product, c alone */
        return !floor_above_c(m);
    return f32_range_ok(m, q->f_wlo[0] + q->f_wlo[1], q->f_whi[0] + q->f_whi[1] + 2);
}

/* The pairwise kernel's side of the packed operands (gemm_kernel.c):
 * subnormal inputs (below the format's 2^emin) become +0, as mma.c
 * decode_ftz reads them (where the model's subnormals=flush has made the
 * decode table give a zero of their sign already, that sign stays: the
 * sign of a zero product never reaches d here, which is -0 only from a
 * c = -0, and those outputs go to the scalar model, c_special); then
 * the least exponent of a nonzero value per row of A and column of B
 * (rmin, cmin; lo and hi: the least and greatest per operand) decides
 * which outputs the kernel may compute: those whose least product lsb,
 * 2^lo with lo = ea + eb - (pa - 1) - (pb - 1), is at least 2^-126.
 * Where some are not (bf16 data below about 2^-56), the rows of A or the
 * columns of B that hold them, whichever costs fewer outputs, go to the
 * scalar model (arow_sp, bcol_sp). The least lo left sets cthr (lo <
 * -102: c below 2^-103 is flagged), the greatest exponents fma (products
 * below 2^128). */
#define PW_NONE (INT_MAX / 4)
static void pw_select(qops *q, const int *rmin, const int *cmin, const int lo[2], const int hi[2]) {
    const fpemu_mma_model *m = &q->cfg->model;
    const int M = q->M, N = q->N, none = PW_NONE;
    const int dp = m->fa->p - 1 + m->fb->p - 1;
    size_t costr = 0, costc = 0;
    for (int i = 0; i < M; i++) costr += rmin[i] != none && rmin[i] + lo[1] - dp < -126 ? (size_t)N : 0;
    for (int j = 0; j < N; j++) costc += cmin[j] != none && lo[0] + cmin[j] - dp < -126 ? (size_t)M : 0;
    int least = none; /* the least lo of the lanes left */
    if (costr <= costc) {
        for (int i = 0; i < M; i++) {
            if (rmin[i] == none || lo[1] == none) continue;
            if (rmin[i] + lo[1] - dp < -126) q->arow_sp[i] = 1;
            else least = rmin[i] + lo[1] - dp < least ? rmin[i] + lo[1] - dp : least;
        }
    } else {
        for (int j = 0; j < N; j++) {
            if (cmin[j] == none || lo[0] == none) continue;
            if (lo[0] + cmin[j] - dp < -126) q->bcol_sp[j] = 1;
            else least = lo[0] + cmin[j] - dp < least ? lo[0] + cmin[j] - dp : least;
        }
    }
    q->pw_cthr = least < -102 ? (uint32_t)24 << 23 : 0; /* 2^-103 */
    q->pw_fma = hi[0] + hi[1] + 2 <= 128;
}

/* One operand (pass 0: A, 1: B) into the f32 kernel's value panels,
 * through the decode table tab (or, tab NULL, from the panels
 * build_values_f made), subnormals made +0, with its ranges. */
typedef struct { qops *q; const dtable *tab; int pass, lo, hi; int *mn; } pw_arg;
#define NAT_STRIP 2048
/* pw_pack's element: a subnormal made +0 (a zero keeps its sign), and the
 * least (u - 1: a zero wraps to the top) and greatest magnitude bits */
static inline __attribute__((always_inline)) float pw_val(float f, uint32_t thr, uint32_t *a, uint32_t *b) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u &= 0x7FFFFFFFu;
    if (u - 1 < thr - 1) f = 0.0f, u = 0;
    *a = u - 1 < *a ? u - 1 : *a, *b = u > *b ? u : *b;
    return f;
}
/* and its row's (or column's) end: the marks and ranges out */
static inline void pw_row_end(pw_arg *w, unsigned char *sp, int r, uint32_t a, uint32_t b, unsigned char t, uint32_t *lo_u,
                              uint32_t *hi_u) {
    sp[r] |= t;
    w->mn[r] = b ? (int)((a + 1) >> 23) - 127 : PW_NONE;
    *lo_u = a < *lo_u ? a : *lo_u, *hi_u = b > *hi_u ? b : *hi_u;
}

static void *pw_pack(void *arg) {
    pw_arg *w = arg;
    qops *q = w->q;
    const fpemu_mma_model *m = &q->cfg->model;
    const int pass = w->pass, K = q->K, Rn = pass ? q->N : q->M, P = pass ? GEMM_F_COLS : GEMM_F_ROWS;
    const uint32_t thr = (uint32_t)((pass ? m->fb : m->fa)->emin + 127) << 23; /* bits of 2^emin */
    unsigned char *sp = pass ? q->bcol_sp : q->arow_sp;
    float *v = pass ? q->bvf : q->avf;
    uint32_t lo_u = UINT32_MAX, hi_u = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    uint32_t *rr; /* f16 and bf16 16 at a time (pack_pw16): each row's (or column's) least u - 1, greatest u */
    const pack_ctx pc = {.q = q, .m = m, .f = pass ? m->fb : m->fa, .pass = pass, .P = P, .K = K, .sp = sp, .tab = w->tab};
    if (w->tab && pack_tab16_ok(&pc, (dtable *)w->tab, 1) && (rr = malloc(2 * sizeof(uint32_t) * ((size_t)Rn + 1)))) {
        for (int r = 0; r < Rn; r++) rr[r] = UINT32_MAX, rr[Rn + 1 + r] = 0;
        const vdec vd = {.bf16 = vdec_kind(pc.f) == 2, .flush = m->flush_subnormals};
        pack_pw16(&pc, Rn, &vd, thr, rr, rr + Rn + 1);
        for (int r = 0; r < Rn; r++) pw_row_end(w, sp, r, rr[r], rr[Rn + 1 + r], 0, &lo_u, &hi_u);
        free(rr);
    } else
#endif
    if (w->tab && q->nat[pass]) {
        /* nat's codes in their order, in strips of NAT_STRIP rows (or
         * columns): each strip's codes of one k after another */
        uint64_t buf[NAT_STRIP];
        for (int s0 = 0; s0 < Rn; s0 += NAT_STRIP) {
            const int s1 = s0 + NAT_STRIP < Rn ? s0 + NAT_STRIP : Rn;
            uint32_t mn1[NAT_STRIP], mx[NAT_STRIP];
            unsigned char spr[NAT_STRIP];
            for (int r = s0; r < s1; r++) mn1[r - s0] = UINT32_MAX, mx[r - s0] = 0, spr[r - s0] = 0;
            for (int k = 0; k < K; k++) {
                const uint64_t *src = code_run(q, pass, (size_t)k * (size_t)Rn + (size_t)s0, (size_t)(s1 - s0), buf);
                for (int r0 = s0; r0 < s1; r0 += P) { /* (NAT_STRIP is a multiple of P) */
                    float *x = v + ((size_t)(r0 / P) * K + k) * P;
                    for (int l = 0, i = r0 - s0; l < P && r0 + l < s1; l++, i++) {
                        spr[i] |= w->tab->sp[src[i]];
                        x[l] = pw_val(w->tab->vf[src[i]], thr, &mn1[i], &mx[i]);
                    }
                }
            }
            for (int r = s0; r < s1; r++) pw_row_end(w, sp, r, mn1[r - s0], mx[r - s0], spr[r - s0], &lo_u, &hi_u);
        }
    } else {
        /* a panel at a time in runs of 64 k (the panel's lines stay in L1
         * while its rows fill them): through the table from the codes in
         * rows, or from the panels build_values_f made */
        uint64_t buf[64];
        for (int r0 = 0; r0 < Rn; r0 += P) {
            const int nr = Rn - r0 < P ? Rn - r0 : P;
            float *xp = v + (size_t)(r0 / P) * K * P;
            uint32_t mn1[GEMM_F_COLS], mx[GEMM_F_COLS];
            unsigned char spr[GEMM_F_COLS];
            for (int l = 0; l < nr; l++) mn1[l] = UINT32_MAX, mx[l] = 0, spr[l] = 0;
            for (int k0 = 0; k0 < K; k0 += 64) {
                const int k1 = k0 + 64 < K ? k0 + 64 : K;
                for (int l = 0; l < nr; l++) {
                    const uint64_t *cr = w->tab ? code_vec(q, pass, r0 + l, k0, k1, buf) : NULL; /* (r0 + l, k0) on */
                    float *x = xp + l;
                    uint32_t a = mn1[l], b = mx[l];
                    unsigned char t = 0;
                    for (int k = k0; k < k1; k++) {
                        float f;
                        if (w->tab) t |= w->tab->sp[cr[k - k0]], f = w->tab->vf[cr[k - k0]];
                        else f = x[(size_t)k * P];
                        x[(size_t)k * P] = pw_val(f, thr, &a, &b);
                    }
                    mn1[l] = a, mx[l] = b, spr[l] |= t;
                }
            }
            for (int l = 0; l < nr; l++) pw_row_end(w, sp, r0 + l, mn1[l], mx[l], spr[l], &lo_u, &hi_u);
        }
    }
    int lo = hi_u ? (int)((lo_u + 1) >> 23) - 127 : PW_NONE, hi = hi_u ? (int)(hi_u >> 23) - 127 : -PW_NONE;
    w->lo = lo, w->hi = hi;
    return NULL;
}

/* The pairwise kernel's operands: value panels only (its exponent words
 * are not read), packed, flushed and ranged in one pass per operand (A
 * here, B on a second thread where there is one); formats without a
 * cached decode table through build_values_f first. */
static int build_values_pw(qops *q) {
    const fpemu_mma_model *m = &q->cfg->model;
    const int M = q->M, N = q->N, K = q->K;
    const dtable *ta = dtable_cached(m, m->fa), *tb = dtable_cached(m, m->fb);
    if (!ta || !tb) {
        if (build_values_f(q)) return -1;
        ta = tb = NULL;
    } else {
        size_t Mp = (size_t)(M + GEMM_F_ROWS - 1) / GEMM_F_ROWS * GEMM_F_ROWS;
        size_t Np = (size_t)(N + GEMM_F_COLS - 1) / GEMM_F_COLS * GEMM_F_COLS;
        q->Np = (int)Np;
        q->avf = big_alloc((Mp * K + 1) * sizeof(float), 0);
        q->bvf = big_alloc((Np * K + 1) * sizeof(float), 0);
        q->arow_sp = calloc((size_t)M + 1, 1);
        q->bcol_sp = calloc((size_t)N + 1, 1);
        if (!q->avf || !q->bvf || !q->arow_sp || !q->bcol_sp) return -1;
        /* pw_pack writes every element of a real row or column: the last panels hold the padding */
        if (M > 0) memset(q->avf + (size_t)((M - 1) / GEMM_F_ROWS) * K * GEMM_F_ROWS, 0, (size_t)K * GEMM_F_ROWS * sizeof(float));
        if (N > 0) memset(q->bvf + (size_t)((N - 1) / GEMM_F_COLS) * K * GEMM_F_COLS, 0, (size_t)K * GEMM_F_COLS * sizeof(float));
    }
    int *rmin = malloc(sizeof(int) * ((size_t)M + 1)), *cmin = malloc(sizeof(int) * ((size_t)N + 1));
    if (!rmin || !cmin) { free(rmin), free(cmin); return -1; }
    pw_arg w[2] = {{q, ta, 0, 0, 0, rmin}, {q, tb, 1, 0, 0, cmin}};
    both_sides(sides_threaded(q), pw_pack, w, sizeof w[0]);
    pw_select(q, rmin, cmin, (int[2]){w[0].lo, w[1].lo}, (int[2]){w[0].hi, w[1].hi});
    free(rmin), free(cmin);
    return 0;
}

/* ---- the driver ----------------------------------------------------------------- */

typedef struct {
    const qops *q;
    const fpemu_gemm_config *cfg;
    const float *C;
    int ldc;
    float *D;
    int ldd;
    int i0, i1;
    int isa; /* 0: scalar model only */
    float *part;          /* M x Np partial sums of the current chunk */
    unsigned char *flag;  /* M x Np */
    float *acc;           /* M x N promoted accumulator */
    float *cpad;          /* M x Np: C for the MMA's c (c_in_mma) */
    float *dbc;           /* N: B's decode factor of the current chunk per column (AVX-512 promotion), or NULL */
    double *xs;           /* the exact-sum kernel's scratch (gkf_args.scratch), or NULL */
    uint64_t *gather;     /* scalar_partial's: 2 K codes where a side is nat or narrow, or NULL */
    uint64_t slow;
    int err;
} job;

static uint64_t f32_code(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static float code_f32(uint64_t c) {
    uint32_t u = (uint32_t)c;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* Scalar model for output (i, j) over K range [k0, k1) from c; gather:
 * room for 2 K codes where a side is nat or narrow (code_vec; else unused). */
static float scalar_partial(const qops *q, int i, int j, int k0, int k1, float c, uint64_t *gather) {
    const fpemu_mma_model *m = &q->cfg->model;
    uint64_t d;
    const uint64_t *a = code_vec(q, 0, i, k0, k1, gather), *b = code_vec(q, 1, j, k0, k1, gather + q->K);
    if (q->sa)
        d = fpemu_mma_dot_scaled(m, a, b, (size_t)(k1 - k0), f32_code(c), q->sfmt, q->sa + (size_t)i * q->nsb + k0 / q->sblock,
                                 q->sbt + (size_t)j * q->nsb + k0 / q->sblock, q->sblock, NULL);
    else
        d = fpemu_mma_dot(m, a, b, (size_t)(k1 - k0), f32_code(c), NULL);
    return code_f32(d);
}

/* The dequantisation's f32 operations with the NaN of the MMA's result
 * first, then the factor's, then the accumulator's: x86's rule with the
 * operands in that order, which the results have always had. Written out,
 * so that the order in which the compiler passes the commutative operands
 * of fmaf and of a product (its choice) cannot change a NaN's payload. */
static inline float mul_nan_first(float x, float f) { return isnan(x) ? x : isnan(f) ? f : x * f; }
static inline float promote_step(float part, float dq, float acc) {
    return isnan(part) ? part : isnan(dq) ? dq : fmaf(part, dq, acc);
}

/* The block of decode factors of the chunk from k0 (each row's and
 * column's factor b of nkb); where there are factors (da, nkb > 0) */
static size_t chunk_fb(const qops *q, int k0) { return q->nkb == 1 ? 0 : (size_t)(k0 / q->kb); }

/* Dequantisation factor of chunk [k0, k1) for output (i, j) (promotion):
 * the product of its block's decode factors, in f32. */
static float chunk_dq(const qops *q, int i, int j, int k0) {
    if (!q->da || q->nkb == 0) return 1.0f; /* no factors; K = 0: no blocks, nothing to dequantise */
    const size_t b = chunk_fb(q, k0);
    return mul_nan_first(q->da[(size_t)i * q->nkb + b], q->db[(size_t)j * q->nkb + b]);
}

/* The final f32 values of outputs (i, j .. j + n) from their accumulated
 * MMA results x (in place): one owner of the epilogue's operations, for
 * one output (epilogue) or a run of them (finish_row16). */
static inline void epilogue_n(const qops *q, const fpemu_gemm_config *cfg, int i, int j, float *x, int n, const float *C,
                              int ldc) {
    if (cfg->promote == 0 && q->da) { /* one chunk: dequantise here (nkb is 1) */
        const float a = q->da[(size_t)i * q->nkb];
        for (int l = 0; l < n; l++) {
            const float b = q->db[(size_t)(j + l) * q->nkb];
            x[l] = q->rowseq ? mul_nan_first(mul_nan_first(x[l], b), a) : mul_nan_first(x[l], mul_nan_first(a, b));
        }
    }
    if (C && !q->c_in_mma)
        for (int l = 0; l < n; l++) x[l] = x[l] + C[(size_t)i * ldc + (size_t)(j + l)];
    if (cfg->outfmt) {
        fpemu_ctx ctx;
        fpemu_ctx_init(&ctx);
        fpemu_round_f32(cfg->outfmt, x, x, (size_t)n, &ctx, NULL);
    }
}

/* The final f32 value of output (i, j) from its accumulated MMA result. */
static inline float epilogue(const qops *q, const fpemu_gemm_config *cfg, int i, int j, float x, const float *C, int ldc) {
    epilogue_n(q, cfg, i, j, &x, 1, C, ldc);
    return x;
}

static int c_special(float c) {
    return !isfinite(c) || (c == 0 && signbit(c));
}

/* One kernel call: rows [ib, ie), K tile [kk, ke) of the chunk starting at k0. */
static void kernel_tile(job *J, int ib, int ie, int kk, int ke, int k0) {
    const qops *q = J->q;
    const fpemu_mma_model *m = &J->cfg->model;
    const int N = q->N, K = q->K, Np = q->Np;
    const int P = J->cfg->promote > 0 ? J->cfg->promote : (K > 0 ? K : 1);
    const int B = q->use_g ? m->group_block : m->block > 0 ? m->block : P;
    const float *C = J->C;
    if (q->use_g) {
        gkg_args gg = {
            .av = q->avf, .bv = q->bvf, .K = (size_t)K, .sav = q->gsav, .sbv = q->gsbv, .sae = q->gsae,
            .sbe = q->gsbe, .nsb = (size_t)q->nsb, .ldsb = (size_t)Np,
            .i0 = ib, .i1 = ie, .j0 = 0, .j1 = N, .k0 = kk, .k1 = ke,
            .block = B, .group = m->group, .sblock = q->sblock, .wide = group_wide(q->sfmt), .nfrac = m->group_nfrac,
            .q = m->out_mant, .zero_c = m->zero_c, .gi = q->use_gv ? &q->gi : NULL,
            .cin = kk == k0 ? (q->c_in_mma && C ? J->cpad : NULL) : J->part, .ldc = (size_t)Np,
            .out = J->part, .flag = J->flag, .ldo = (size_t)Np,
        };
        emu__gemm_kernel_grp(J->isa, &gg);
        return;
    }
    if (q->vk) {
        gkf_args gf = {
            .av = q->avf, .bv = q->bvf, .K = (size_t)K, .i0 = ib, .i1 = ie, .j0 = 0, .j1 = N, .k0 = kk, .k1 = ke,
            .exlo = q->x_lo, .exhi = q->x_hi, .exalo = q->x_alo, .exnda = q->x_nda, .exndb = q->x_ndb, .scratch = J->xs,
            .cin = kk == k0 ? (q->c_in_mma && C ? J->cpad : NULL) : J->part, .ldc = (size_t)Np,
            .out = J->part, .flag = J->flag, .ldo = (size_t)Np,
        };
        if (q->vk == VK_EX) emu__gemm_kernel_ex(J->isa, &gf);
        else if (q->vk == VK_PT) emu__gemm_kernel_pt(J->isa, &gf);
        else emu__gemm_kernel_fs(J->isa, &gf);
        return;
    }
    if (q->use_pw) {
        gkp_args gp = {
            .av = q->avf, .bv = q->bvf, .K = (size_t)K, .i0 = ib, .i1 = ie, .j0 = 0, .j1 = N, .k0 = kk, .k1 = ke,
            .block = B, .fma = q->pw_fma, .cthr = q->pw_cthr,
            .cin = kk == k0 ? (q->c_in_mma && C ? J->cpad : NULL) : J->part, .ldc = (size_t)Np,
            .out = J->part, .flag = J->flag, .ldo = (size_t)Np,
        };
        emu__gemm_kernel_pw(J->isa, &gp);
        return;
    }
    if (q->use_f) {
        gkf_args gf = {
            .av = q->avf, .aw = q->aw, .bv = q->bvf, .bw = q->bw, .K = (size_t)K,
            .i0 = ib, .i1 = ie, .j0 = 0, .j1 = N, .k0 = kk, .k1 = ke,
            .block = B, .nfrac = m->nfrac, .q = m->out_mant, .thr_w = m->nfrac + 1, .split = q->f_split, .noinf = q->f_noinf,
            .al = J->isa >= 3 ? q->al : NULL, .bl = J->isa >= 3 ? q->bl : NULL,
            .ax = J->isa >= 3 ? q->ax : NULL, .bx = J->isa >= 3 ? q->bx : NULL,
            .cin = kk == k0 ? (q->c_in_mma && C ? J->cpad : NULL) : J->part, .ldc = (size_t)Np,
            .out = J->part, .flag = J->flag, .ldo = (size_t)Np,
        };
        if (q->use_fz) {
            gf.fuse_nfrac = m->fuse_nfrac, gf.fuse_rd = m->fuse_align == FPEMU_MMA_ALIGN_RD, gf.fuse_split = m->split == 2;
            emu__gemm_kernel_f32f(J->isa, &gf);
        } else {
            emu__gemm_kernel_f32(J->isa, &gf);
        }
        return;
    }
    gk_args g = {
        .av = q->av, .ae = q->ae, .lda = (size_t)K, .bv = q->bv, .be = q->be, .ldb = (size_t)Np,
        .i0 = ib, .i1 = ie, .j0 = 0, .j1 = N, .k0 = kk, .k1 = ke,
        .block = B, .nfrac = m->nfrac, .q = m->out_mant, .rd = m->align == FPEMU_MMA_ALIGN_RD,
        .floor2 = m->has_emax_floor ? ldexp(1.0, m->emax_floor) : 0,
        /* a zero c that takes no part: a power of two below every
         * product's alignment power (kernel_range_ok) that keeps
         * 2^nfrac / emax finite (nfrac <= 28 here): with no product
         * taking part either, the block sums to +0 as in the model
         * (2^-1060 made that scale inf: 0 * inf = NaN, which SSE2's
         * int32 truncation turned into -0) */
        .zero_c_e = m->zero_c ? ldexp(1.0, m->fc->emin) : ldexp(1.0, m->nfrac - 1022),
        .emin_d = ldexp(1.0, m->fd->emin), .ovf_d = ldexp(1.0, m->fd->emax + 1),
        .cin = kk == k0 ? (q->c_in_mma && C ? J->cpad : NULL) : J->part, .ldc = (size_t)Np,
        .out = J->part, .flag = J->flag, .ldo = (size_t)Np,
    };
    emu__gemm_kernel(J->isa, &g);
}

/* Output (i, j) after chunk ch ([k0, k1)): the kernel's partial sum (or the
 * scalar model's, for flagged lanes and inf/NaN operands), promoted into
 * acc or (one chunk) straight out through the epilogue. */
static inline void finish_one(job *J, int i, int j, int ch, int k0, int k1) {
    const qops *q = J->q;
    const fpemu_gemm_config *cfg = J->cfg;
    const int N = q->N, K = q->K, Np = q->Np;
    const float *C = J->C;
    const int cmma = q->c_in_mma && C;
    size_t o = (size_t)i * Np + j;
    float c0 = cmma ? C[(size_t)i * J->ldc + j] : 0.0f;
    float part;
    if (!J->isa || K == 0 || J->flag[o] || q->arow_sp[i] || q->bcol_sp[j] || (cmma && c_special(c0))) {
        part = scalar_partial(q, i, j, k0, k1, c0, J->gather);
        if (J->isa) J->slow++;
    } else {
        part = J->part[o];
    }
    float *acc = J->acc + (size_t)i * N + j;
    if (cfg->promote > 0) *acc = promote_step(part, chunk_dq(q, i, j, k0), ch == 0 ? 0.0f : *acc);
    else J->D[(size_t)i * J->ldd + j] = epilogue(q, cfg, i, j, part, C, J->ldc); /* one chunk: straight out */
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Promotion of columns [0, N16) (a multiple of 16) of row i, 16 at a time,
 * with AVX-512's fma: the same correctly rounded f32 fma as fmaf, and the
 * same product of the two decode factors, for every group of 16 whose
 * lanes are all ordinary (not flagged, no inf/NaN column, the partial sum,
 * the factor and the accumulator finite: promote_step and mul_nan_first
 * then reduce to the plain fma and product); any other group goes through
 * finish_one, lane by lane, as before. dbc: B's decode factor of the
 * chunk per column; dai: A's of row i. */
/* The AVX-512 epilogues' test of a group of 16 outputs (promote_row_avx512,
 * finish_row16_avx512): whether any is flagged or in a marked column, and
 * which lanes of the n vectors v hold an inf or NaN */
__attribute__((target("avx512f,avx512bw"))) static inline int group_flagged(const unsigned char *flag, const unsigned char *csp) {
    const __m128i fl = _mm_or_si128(_mm_loadu_si128((const __m128i *)flag), _mm_loadu_si128((const __m128i *)csp));
    return !_mm_test_all_zeros(fl, fl);
}
__attribute__((target("avx512f,avx512bw"))) static inline __mmask16 group_special(const __m512 *v, int n) {
    const __m512i expm = _mm512_set1_epi32(0x7F800000);
    __m512i e = _mm512_and_si512(_mm512_castps_si512(v[0]), expm);
    for (int x = 1; x < n; x++) e = _mm512_max_epu32(e, _mm512_and_si512(_mm512_castps_si512(v[x]), expm));
    return _mm512_cmpeq_epi32_mask(e, expm);
}
__attribute__((target("avx512f,avx512bw"))) static void promote_row_avx512(job *J, int i, int ch, int k0, int k1, int N16,
                                                                           const float *dbc, float dai) {
    const qops *q = J->q;
    const int Np = q->Np, N = q->N;
    const float *part = J->part + (size_t)i * Np;
    const unsigned char *flag = J->flag + (size_t)i * Np;
    float *acc = J->acc + (size_t)i * N;
    const __m512 va = _mm512_set1_ps(dai);
    for (int j = 0; j < N16; j += 16) {
        const __m512 p = _mm512_loadu_ps(part + j), dq = _mm512_mul_ps(va, _mm512_loadu_ps(dbc + j));
        const __m512 a = ch == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + j);
        if (!group_flagged(flag + j, q->bcol_sp + j) && !group_special((const __m512[]){p, dq, a}, 3)) {
            _mm512_storeu_ps(acc + j, _mm512_fmadd_ps(p, dq, a));
        } else {
            for (int l = 0; l < 16; l++) finish_one(J, i, j + l, ch, k0, k1);
        }
    }
}

/* finish_row16 (below) with AVX-512, without outfmt: for every group of 16
 * whose lanes are all ordinary (not flagged, no inf/NaN column, C as the
 * MMA's c not special, the partial sum, the decode factors and a C added
 * after finite: mul_nan_first then reduces to the plain product), the
 * dequantisation's products in epilogue_n's order and C's sum, 16 lanes at
 * a time; any other group through finish_one, lane by lane. */
__attribute__((target("avx512f,avx512bw"))) static int finish_row16_avx512(job *J, int i, int ch, int k0, int k1) {
    const qops *q = J->q;
    const int N16 = q->N / 16 * 16, Np = q->Np;
    const float *part = J->part + (size_t)i * Np;
    const unsigned char *flag = J->flag + (size_t)i * Np;
    const float *Cm = q->c_in_mma && J->C ? J->C + (size_t)i * J->ldc : NULL; /* C as the MMA's c */
    const float *Ca = J->C && !q->c_in_mma ? J->C + (size_t)i * J->ldc : NULL;   /* C added after */
    const float *db = J->cfg->promote == 0 && q->da ? q->db : NULL;              /* (one chunk: nkb is 1) */
    float *D = J->D + (size_t)i * J->ldd;
    const __m512i expm = _mm512_set1_epi32(0x7F800000), mzero = _mm512_set1_epi32((int)0x80000000u);
    const __m512 va = _mm512_set1_ps(db ? q->da[(size_t)i * q->nkb] : 1.0f);
    for (int j = 0; j < N16; j += 16) {
        __m512 x = _mm512_loadu_ps(part + j), b = db ? _mm512_loadu_ps(db + j) : va, c = Ca ? _mm512_loadu_ps(Ca + j) : x;
        __mmask16 bad = group_special((const __m512[]){x, b, va, c}, 4);
        if (Cm) { /* c_special: inf, NaN or -0 */
            const __m512i cb = _mm512_loadu_si512(Cm + j);
            bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(cb, expm), expm) | _mm512_cmpeq_epi32_mask(cb, mzero);
        }
        if (group_flagged(flag + j, q->bcol_sp + j) || bad) {
            for (int l = 0; l < 16; l++) finish_one(J, i, j + l, ch, k0, k1);
            continue;
        }
        if (db) x = q->rowseq ? _mm512_mul_ps(_mm512_mul_ps(x, b), va) : _mm512_mul_ps(x, _mm512_mul_ps(va, b));
        if (Ca) x = _mm512_add_ps(x, c);
        _mm512_storeu_ps(D + j, x);
    }
    return N16;
}
#endif

/* Columns [0, N16) (N rounded down to 16) of row i without promotion, 16
 * at a time: where no lane of the 16 is flagged, in an inf/NaN column or
 * with a special c (c_special), the kernel's partial sums through
 * epilogue_n, finish_one's values without its checks lane by lane; any
 * other group goes through finish_one. Returns N16. */
static int finish_row16(job *J, int i, int ch, int k0, int k1) {
    const qops *q = J->q;
    const int N16 = q->N / 16 * 16, Np = q->Np;
    const float *part = J->part + (size_t)i * Np;
    const unsigned char *flag = J->flag + (size_t)i * Np;
    const float *Cm = q->c_in_mma && J->C ? J->C + (size_t)i * J->ldc : NULL; /* C as the MMA's c */
    float *D = J->D + (size_t)i * J->ldd;
    for (int j = 0; j < N16; j += 16) {
        unsigned bad = 0;
        for (int l = 0; l < 16; l++) bad |= flag[j + l] | q->bcol_sp[j + l] | (Cm && c_special(Cm[j + l]));
        if (bad) {
            for (int l = 0; l < 16; l++) finish_one(J, i, j + l, ch, k0, k1);
            continue;
        }
        float x[16];
        memcpy(x, part + j, sizeof x);
        epilogue_n(q, J->cfg, i, j, x, 16, J->C, J->ldc);
        memcpy(D + j, x, sizeof x);
    }
    return N16;
}

/* Outputs of rows [ia, ie) after chunk ch; after the last chunk (promotion),
 * their epilogue. */
static void finish_rows(job *J, int ia, int ie, int ch, int k0, int k1, int last, float *dbc) {
    const qops *q = J->q;
    const fpemu_gemm_config *cfg = J->cfg;
    const int N = q->N;
    int N16 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    /* the vector promotion: AVX-512 kernels, promotion, C not the MMA's c (it never is with promotion) */
    if (J->isa >= 3 && cfg->promote > 0 && q->K > 0 && !(q->c_in_mma && J->C) && dbc) N16 = N / 16 * 16;
#endif
    for (int i = ia; i < ie; i++) {
        int j0 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
        if (N16 && !q->arow_sp[i]) {
            float dai = 1.0f;
            if (q->da && q->nkb > 0) dai = q->da[(size_t)i * q->nkb + chunk_fb(q, k0)];
            promote_row_avx512(J, i, ch, k0, k1, N16, dbc, dai);
            j0 = N16;
        }
#endif
        if (!j0 && J->isa && q->K > 0 && cfg->promote == 0 && !q->arow_sp[i]) {
#if defined(__x86_64__) && defined(__GNUC__)
            if (J->isa >= 3 && !cfg->outfmt) j0 = finish_row16_avx512(J, i, ch, k0, k1);
            else
#endif
                j0 = finish_row16(J, i, ch, k0, k1);
        }
        for (int j = j0; j < N; j++) finish_one(J, i, j, ch, k0, k1);
        if (last && cfg->promote > 0)
            for (int j = 0; j < N; j++) J->D[(size_t)i * J->ldd + j] = epilogue(q, cfg, i, j, J->acc[(size_t)i * N + j], J->C, J->ldc);
    }
}

/* B's decode factor of the chunk from k0 per column into dbc (N), as
 * chunk_dq takes it: 1 where there are no factors (or no blocks) */
static void chunk_dbc(const qops *q, int k0, float *dbc) {
    const int hasf = q->da && q->nkb > 0;
    const size_t b = hasf ? chunk_fb(q, k0) : 0;
    for (int j = 0; j < q->N; j++) dbc[j] = hasf ? q->db[(size_t)j * q->nkb + b] : 1.0f;
}

static void *run_job(void *arg) {
    job *J = arg;
    const qops *q = J->q;
    const fpemu_gemm_config *cfg = J->cfg;
    const fpemu_mma_model *m = &cfg->model;
    const int K = q->K, Np = q->Np;
    const int P = cfg->promote > 0 ? cfg->promote : (K > 0 ? K : 1);
    const int B = q->use_g ? m->group_block : q->vk == VK_FS ? 1 : q->vk ? P : m->block > 0 ? m->block : P; /* exact, tree: one tile a chunk */
    const int ktile = q->use_pw ? KTILE_PW : q->use_gv ? KTILE_GV : q->use_f ? KTILE_F : KTILE;
    const int kt = ktile < B ? B : ktile / B * B;
    const int nchunks = K > 0 ? cdiv(K, P) : 1;
    /* rows of a kernel call: the AMX form converts B's digits once per call,
     * so it takes up to 1024 at once (gemm_kernel.c) */
    const int itile = J->isa == 4 ? q->x_rows : ITILE;
    /* B's decode factor of the chunk per column (the vector promotion) */
    float *dbc = J->dbc;
    if (J->isa && K > 0 && cfg->promote > 0 && P <= kt) {
        /* promotion, one kernel call per row tile and chunk, a row tile's
         * chunks in turn: its partial sums and accumulator rows stay in
         * cache from chunk to chunk. (Chunk by chunk over every row tile,
         * the promotion's passes over the M x N partial sums and
         * accumulator pushed B's panels out of L2 between row tiles: h100
         * blockwise e4m3 was about 20% slower at n = 2048.) */
        for (int ib = J->i0; ib < J->i1; ib += itile) {
            const int ie = ib + itile < J->i1 ? ib + itile : J->i1;
            for (int ch = 0; ch < nchunks; ch++) {
                const int k0 = ch * P, k1 = P < K - k0 ? k0 + P : K;
                if (dbc) chunk_dbc(q, k0, dbc);
                for (int i = ib; i < ie; i++) memset(J->flag + (size_t)i * Np, 0, (size_t)Np);
                kernel_tile(J, ib, ie, k0, k1, k0);
                finish_rows(J, ib, ie, ch, k0, k1, ch == nchunks - 1, dbc);
            }
        }
        return NULL;
    }
    for (int ch = 0; ch < nchunks; ch++) {
        int k0 = ch * P, k1 = P < K - k0 ? k0 + P : K;
        const int last = ch == nchunks - 1;
        if (dbc) chunk_dbc(q, k0, dbc);
        if (J->isa && K > 0) {
            for (int i = J->i0; i < J->i1; i++) memset(J->flag + (size_t)i * Np, 0, (size_t)Np);
            for (int kk = k0, ke; kk < k1; kk = ke) {
                ke = kt < k1 - kk ? kk + kt : k1;
                for (int ib = J->i0; ib < J->i1; ib += itile)
                    kernel_tile(J, ib, ib + itile < J->i1 ? ib + itile : J->i1, kk, ke, k0);
            }
        }
        finish_rows(J, J->i0, J->i1, ch, k0, k1, last, dbc);
    }
    return NULL;
}

static int nthreads_of(const fpemu_gemm_config *cfg, int M) {
    int t = cfg->nthreads;
    if (t <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        t = n > 0 ? (int)n : 1;
    }
    if (t > 64) t = 64;
    int maxt = (M + 3) / 4;
    if (t > maxt) t = maxt > 0 ? maxt : 1;
    return t;
}

/* Run the product over prepared operands. */
static int run(qops *q, const fpemu_gemm_config *cfg, const float *C, int ldc, float *D, int ldd, fpemu_gemm_stats *st) {
    int M = q->M, N = q->N;
    int isa = kernel_ok(cfg, q) && q->K > 0 && kernel_range_ok(cfg, q) ? emu__gemm_kernel_best() : 0;
    if (isa && cfg->isa > 0 && cfg->isa < isa) isa = cfg->isa;
    int split = 0, check = 0, count = 0;
    q->use_g = isa && q->sa && cfg->model.group > 0 && emu__is_ocp_e2m1(cfg->model.fa) && emu__is_ocp_e2m1(cfg->model.fb);
    q->vk = isa ? values_kernel(cfg, q, &q->x_lo, &q->x_hi) : VK_NONE;
    /* level 4's integer units: VNNI for the group kernel's integer form (which runs on level 3's jobs);
     * AMX for the exact-sum kernel's form, only once Linux grants the tile data (asked here, not before) */
    q->use_gv = isa == 4 && q->use_g && gv_ok(cfg, q);
    if (isa == 4 && !(q->vk == VK_EX && exa_ok(cfg, q) && emu__gemm_amx_grant())) isa = 3;
    q->use_f = q->use_g || q->vk || (isa && f32_kernel_ok(cfg, q, &split, &count, &check) &&
                            (cfg->promote == 0 || cfg->promote % cfg->model.block == 0));
    q->use_pw = isa && cfg->model.kind == FPEMU_MMA_KIND_PAIRWISE && !q->vk; /* (kernel_ok: pw_kernel_ok) */
    if (q->use_pw) q->use_f = 1, split = check = 0;                 /* the f32 kernel's panels, tiles and lanes */
    if (isa && cfg->model.fuse_nfrac > 0) { /* (kernel_ok: fused_kernel_ok) the fused variant, or the scalar model */
        q->use_f = q->use_fz = fused_kernel_ok(cfg, q, &check) && (cfg->promote == 0 || cfg->promote % cfg->model.block == 0);
        split = 0;
        if (!q->use_fz) isa = 0;
    }
    q->f_split = split, q->f_check = check;
    /* the f32 kernel's blocks keep no running max of c's exponent where no
     * block result can reach inf or NaN: without block scales every product
     * is at most the formats' largest values' product P; a block result's
     * magnitude is at most its c's plus its products' (every cut is toward
     * zero), so at most |c| + K P for the call's first c, which is finite
     * (inf, NaN and -0 go to the scalar model: cpad), at most 2^128 -
     * 2^104; below 2^128 where K P < 2^104 (fp8, f16: always). A flagged
     * lane may carry any value from tile to tile; its flag stays. */
    q->f_noinf = !q->sa && (double)q->K * cfg->model.fa->max_finite * cfg->model.fb->max_finite < 0x1p104;
    q->f_count = isa >= 3 && q->use_f && !q->use_g && !q->vk && !q->use_pw && !q->use_fz && count;
    q->vpack = isa >= 3;
    if (isa && build_values(q)) return -1;
    int pt_check = 0; /* (the tree kernel's data check: bf16, tf32) */
    if (isa && q->vk == VK_PT && pt_kernel_ok(cfg, q, &pt_check) && pt_check && pt_select(q)) return -1;
    if (q->use_fz && check && !f32_data_ok(q)) isa = 0, q->use_f = q->use_fz = 0; /* no other kernel: the scalar model */
    if (q->use_f && check && !f32_data_ok(q)) { /* the data leave the f32 kernel's range: the f64 kernel */
        big_free(q->avf), big_free(q->aw), big_free(q->bvf), big_free(q->bw), free(q->arow_sp), free(q->bcol_sp);
        big_free(q->al), big_free(q->bl), big_free(q->ax), big_free(q->bx);
        q->avf = q->bvf = NULL, q->aw = NULL, q->bw = NULL, q->arow_sp = q->bcol_sp = NULL, q->al = q->bl = NULL, q->ax = q->bx = NULL;
        q->use_f = q->f_count = 0;
        if (build_values(q)) return -1;
    }
    if (!isa) {
        if (codes_to_rows(q, 0) || codes_to_rows(q, 1)) return -1; /* (every output on the scalar model) */
        q->Np = (N + 15) / 16 * 16;
        if (!q->arow_sp) q->arow_sp = calloc((size_t)M + 1, 1);
        if (!q->bcol_sp) q->bcol_sp = calloc((size_t)N + 1, 1);
        if (!q->arow_sp || !q->bcol_sp) return -1;
    }
    int Np = q->Np;
    float *part = big_alloc(sizeof(float) * ((size_t)M * Np + 8), 0);
    unsigned char *flag = big_alloc((size_t)M * Np + 8, 1);
    float *acc = malloc(sizeof(float) * ((size_t)M * N + 1));
    float *cpad = NULL;
    if (!part || !flag || !acc) { big_free(part), big_free(flag), free(acc); return -1; }
    if (isa && q->c_in_mma && C) {
        cpad = calloc((size_t)M * Np + 8, sizeof(float));
        if (!cpad) { big_free(part), big_free(flag), free(acc); return -1; }
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float c = C[(size_t)i * ldc + j];
                cpad[(size_t)i * Np + j] = c_special(c) ? 0.0f : c;
            }
    }
    int T = nthreads_of(cfg, M);
    /* the AVX-512 promotion's per-chunk row of B's decode factors, one per job */
    float *dbcs = NULL;
    if (isa >= 3 && cfg->promote > 0 && q->K > 0) {
        dbcs = malloc(sizeof(float) * ((size_t)N + 1) * (size_t)(T < 64 ? T : 64));
        if (!dbcs) { big_free(part), big_free(flag), free(acc), free(cpad); return -1; }
    }
    /* the exact-sum kernel's panels in double, or the tree kernel's pending
     * sums, one set per job (else a malloc per kernel call, which two
     * threads' calls serialised on) */
    int rows = (M + T - 1) / T;
    rows = (rows + GEMM_F_ROWS - 1) / GEMM_F_ROWS * GEMM_F_ROWS; /* f32 kernel: whole A panels per job */
    const int kn = cfg->promote > 0 && cfg->promote < q->K ? cfg->promote : q->K; /* (one call per chunk) */
    q->x_rows = isa == 4 ? emu__gemm_ex_rows(kn, q->x_nda) : 0;
    const int xrows = isa == 4 && q->x_rows < rows ? q->x_rows : rows;
    const size_t xsn = q->vk == VK_EX   ? (emu__gemm_ex_scratch(isa, xrows, isa == 4 ? kn : q->K, q->x_nda, q->x_ndb) + 7) / 8
                       : q->vk == VK_PT ? (emu__gemm_pt_scratch(kn) + 7) / 8
                                        : 0;
    double *xs = xsn ? big_alloc(sizeof(double) * xsn * (size_t)(T < 64 ? T : 64), 0) : NULL;
    if (xsn && !xs) { big_free(part), big_free(flag), free(acc), free(cpad), free(dbcs); return -1; }
    /* the scalar model's codes of a nat or narrow side, gathered per output, one buffer per job */
    const size_t gn = q->nat[0] || q->nat[1] || q->ncw[0] || q->ncw[1] ? 2 * (size_t)q->K + 1 : 0;
    uint64_t *gather = gn ? malloc(sizeof(uint64_t) * gn * (size_t)(T < 64 ? T : 64)) : NULL;
    if (gn && !gather) { big_free(part), big_free(flag), free(acc), free(cpad), free(dbcs), big_free(xs); return -1; }
    job jobs[64];
    int nj = 0;
    for (int t = 0; t < T; t++) {
        int i0 = t * rows, i1 = i0 + rows < M ? i0 + rows : M;
        if (i0 >= i1) break;
        jobs[nj] = (job){.q = q, .cfg = cfg, .C = C, .ldc = ldc, .D = D, .ldd = ldd, .i0 = i0, .i1 = i1, .isa = isa,
                         .part = part, .flag = flag, .acc = acc, .cpad = cpad,
                         .dbc = dbcs ? dbcs + (size_t)nj * ((size_t)N + 1) : NULL, .xs = xs ? xs + (size_t)nj * xsn : NULL,
                         .gather = gather ? gather + (size_t)nj * gn : NULL};
        nj++;
    }
    emu__parallel(nj, run_job, jobs, sizeof jobs[0]);
    if (st) {
        st->kernel = q->use_gv ? 4 : isa; /* (the group kernel's integer form: level 4, on level 3's jobs) */
        st->lanes = isa ? (q->use_f ? 16 : 8) : 0; /* (use_f: every 16-lane kernel, on the f32 panels) */
        for (int t = 0; t < nj; t++) st->slow_outputs += jobs[t].slow;
        if (!isa) st->slow_outputs = (uint64_t)M * N;
    }
    big_free(part), big_free(flag), free(acc), free(cpad), free(dbcs), big_free(xs), free(gather);
    return 0;
}

/* The start of fpemu_gemm_f32 and of its scalar reference: the checks,
 * the figures zeroed, A and B quantised into *q. 1: nothing to compute (M
 * or N is 0); 0: *q ready (the caller frees it); otherwise quantise's
 * error, *q freed. */
static int gemm_enter(qops *q, const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda, int transA,
                      const float *B, int ldb, int transB, int ldc, float *D, int ldd, fpemu_gemm_stats *st) {
    if (fpemu_gemm_check(cfg, M, N, K, lda, transA, ldb, transB, ldc, ldd, NULL, 0)) return -1;
    memset(st, 0, sizeof *st);
    if (M == 0 || N == 0) return 1;
    if (!D || (K > 0 && (!A || !B))) return -1;
    memset(q, 0, sizeof *q);
    int rc = quantise(q, cfg, M, N, K, A, lda, transA, B, ldb, transB, st);
    if (rc) qops_free(q);
    return rc;
}

static int gemm_f32_smin(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda, int transA, const float *B,
                         int ldb, int transB, const float *C, int ldc, float *D, int ldd, fpemu_gemm_stats *stats, float smin[2]) {
    fpemu_gemm_stats local;
    fpemu_gemm_stats *st = stats ? stats : &local;
    qops q;
    if (smin) smin[0] = smin[1] = 1.0f;
    int rc = gemm_enter(&q, cfg, M, N, K, A, lda, transA, B, ldb, transB, ldc, D, ldd, st);
    if (rc) return rc == 1 ? 0 : rc;
    if (smin) smin[0] = q.smin[0], smin[1] = q.smin[1];
    rc = run(&q, cfg, C, ldc, D, ldd, st);
    qops_free(&q);
    return rc;
}

/* The GEMM's entry points run under the environment its paths assume
 * (internal.h emu__fpenv_enter), the caller's put back. */
int emu__gemm_f32_smin(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda, int transA, const float *B,
                       int ldb, int transB, const float *C, int ldc, float *D, int ldd, fpemu_gemm_stats *stats, float smin[2]) {
    const unsigned fe = emu__fpenv_enter();
    const int rc = gemm_f32_smin(cfg, M, N, K, A, lda, transA, B, ldb, transB, C, ldc, D, ldd, stats, smin);
    emu__fpenv_leave(fe);
    return rc;
}

int fpemu_gemm_f32(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda, int transA, const float *B,
                   int ldb, int transB, const float *C, int ldc, float *D, int ldd, fpemu_gemm_stats *stats) {
    return emu__gemm_f32_smin(cfg, M, N, K, A, lda, transA, B, ldb, transB, C, ldc, D, ldd, stats, NULL);
}

static int gemm_codes(const fpemu_gemm_config *cfg, int M, int N, int K, const uint64_t *A, const uint64_t *B, const float *C,
                      const fpemu_format *sfmt, const uint64_t *sa, const uint64_t *sb, int sblock, float *D, fpemu_gemm_stats *stats) {
    fpemu_gemm_config c2 = *cfg;
    c2.scaling.kind = FPEMU_GEMM_SCALING_NONE;
    if (fpemu_gemm_check(&c2, M, N, K, K, 0, N, 0, N, N, NULL, 0)) return -1;
    fpemu_gemm_stats local;
    fpemu_gemm_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    if (M == 0 || N == 0) return 0;
    if (!D || (K > 0 && (!A || !B))) return -1;
    qops q;
    memset(&q, 0, sizeof q);
    q.cfg = &c2, q.M = M, q.N = N, q.K = K;
    q.c_in_mma = c2.promote == 0;
    q.Ac = big_alloc(sizeof(uint64_t) * ((size_t)M * K + 1), 0);
    q.Btc = big_alloc(sizeof(uint64_t) * ((size_t)N * K + 1), 0);
    int rc = -1;
    if (!q.Ac || !q.Btc) goto out;
    /* codes masked to their fields: bits outside are ignored (fpemu.h), and
     * the decode tables are indexed with these codes */
    for (size_t x = 0; x < (size_t)M * K; x++) q.Ac[x] = emu__field(c2.model.fa, A[x]);
    for (size_t x = 0; x < (size_t)K * N; x++) q.Btc[x] = emu__field(c2.model.fb, B[x]); /* K x N, as it lies */
    q.nat[1] = 1;
    if (sfmt && sa && sb) {
        if (sblock < 1 || (c2.promote && c2.promote % sblock)) goto out;
        q.sfmt = sfmt, q.sblock = sblock, q.nsb = cdiv(K, sblock);
        q.sa = malloc(sizeof(uint64_t) * ((size_t)M * q.nsb + 1));
        q.sbt = malloc(sizeof(uint64_t) * ((size_t)N * q.nsb + 1));
        if (!q.sa || !q.sbt) goto out;
        for (size_t x = 0; x < (size_t)M * q.nsb; x++) q.sa[x] = emu__field(sfmt, sa[x]);
        for (int b = 0; b < q.nsb; b++)
            for (int j = 0; j < N; j++) q.sbt[(size_t)j * q.nsb + b] = emu__field(sfmt, sb[(size_t)b * N + j]);
    }
    rc = run(&q, &c2, C, N, D, N, st);
out:
    qops_free(&q);
    return rc;
}

int fpemu_gemm_codes(const fpemu_gemm_config *cfg, int M, int N, int K, const uint64_t *A, const uint64_t *B, const float *C,
                     const fpemu_format *sfmt, const uint64_t *sa, const uint64_t *sb, int sblock, float *D,
                     fpemu_gemm_stats *stats) {
    const unsigned fe = emu__fpenv_enter();
    const int rc = gemm_codes(cfg, M, N, K, A, B, C, sfmt, sa, sb, sblock, D, stats);
    emu__fpenv_leave(fe);
    return rc;
}

static int gemm_scaled(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, const float *Bt, const float *da,
                       const float *db, int kb, int rowseq, float *D, fpemu_gemm_stats *stats) {
    if (!cfg) return -1;
    fpemu_gemm_config c2 = *cfg;
    c2.scaling.kind = FPEMU_GEMM_SCALING_NONE; /* the operands are quantised already */
    if (fpemu_gemm_check(&c2, M, N, K, K, 0, K, 1, N, N, NULL, 0)) return -1;
    if ((da == NULL) != (db == NULL) || (da && kb < 1)) return -1;
    const int nkb = da ? cdiv(K, kb) : 0;
    /* one chunk needs one block; a chunk must not straddle two blocks */
    if (da && ((c2.promote == 0 && nkb > 1) || (c2.promote > 0 && nkb > 1 && kb % c2.promote))) return -1;
    fpemu_gemm_stats local;
    fpemu_gemm_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    st->scale_a = st->scale_b = 1.0f;
    if (M == 0 || N == 0) return 0;
    if (!D || (K > 0 && (!A || !Bt))) return -1;
    qops q;
    memset(&q, 0, sizeof q);
    q.cfg = &c2, q.M = M, q.N = N, q.K = K;
    q.da = da, q.db = db, q.kb = da ? kb : 1, q.nkb = nkb, q.rowseq = rowseq;
    q.Ac = big_alloc(sizeof(uint64_t) * ((size_t)M * K + 1), 0);
    q.Btc = big_alloc(sizeof(uint64_t) * ((size_t)N * K + 1), 0);
    int rc = -1;
    if (q.Ac && q.Btc) {
        /* values of afmt / bfmt: their codes, exactly (NONE with cfg's sat, as fpemu_gemm_f32 casts) */
        emu_quant oa = {.codes = q.Ac, .st = &st->a}, ob = {.codes = q.Btc, .st = &st->b};
        rc = emu__quantize(&c2.scaling, c2.afmt, M, K, A, 1, c2.sat, NULL, &oa, NULL, 0);
        if (!rc) rc = emu__quantize(&c2.scaling, c2.bfmt, N, K, Bt, 1, c2.sat, NULL, &ob, NULL, 0);
        if (!rc) rc = run(&q, &c2, NULL, N, D, N, st);
    }
    qops_free(&q);
    return rc;
}

int emu__gemm_scaled(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, const float *Bt,
                     const float *da, const float *db, int kb, int rowseq, float *D, fpemu_gemm_stats *stats) {
    const unsigned fe = emu__fpenv_enter();
    const int rc = gemm_scaled(cfg, M, N, K, A, Bt, da, db, kb, rowseq, D, stats);
    emu__fpenv_leave(fe);
    return rc;
}

static int gemm_f32_reference(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda, int transA,
                              const float *B, int ldb, int transB, const float *C, int ldc, float *D, int ldd,
                              fpemu_gemm_stats *stats) {
    fpemu_gemm_stats local;
    fpemu_gemm_stats *st = stats ? stats : &local;
    qops q;
    int rc = gemm_enter(&q, cfg, M, N, K, A, lda, transA, B, ldb, transB, ldc, D, ldd, st);
    if (rc) return rc == 1 ? 0 : rc;
    if (codes_to_rows(&q, 0) || codes_to_rows(&q, 1)) {
        qops_free(&q);
        return -1;
    }
    /* one output at a time on the scalar model, chunk by chunk */
    int P = cfg->promote > 0 ? cfg->promote : (K > 0 ? K : 1);
    int nchunks = K > 0 ? cdiv(K, P) : 1;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int ch = 0; ch < nchunks; ch++) {
                int k0 = ch * P, k1 = P < K - k0 ? k0 + P : K;
                float c0 = q.c_in_mma && C ? C[(size_t)i * ldc + j] : 0.0f;
                float part = scalar_partial(&q, i, j, k0, k1, c0, NULL);
                acc = cfg->promote > 0 ? promote_step(part, chunk_dq(&q, i, j, k0), acc) : part;
            }
            D[(size_t)i * ldd + j] = epilogue(&q, cfg, i, j, acc, C, ldc);
        }
    qops_free(&q);
    return 0;
}

int fpemu_gemm_f32_reference(const fpemu_gemm_config *cfg, int M, int N, int K, const float *A, int lda, int transA,
                             const float *B, int ldb, int transB, const float *C, int ldc, float *D, int ldd,
                             fpemu_gemm_stats *stats) {
    const unsigned fe = emu__fpenv_enter();
    const int rc = gemm_f32_reference(cfg, M, N, K, A, lda, transA, B, ldb, transB, C, ldc, D, ldd, stats);
    emu__fpenv_leave(fe);
    return rc;
}
