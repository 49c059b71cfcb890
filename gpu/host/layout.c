/* SPDX-License-Identifier: MIT */
/* layout.c: the table of instruction kinds and the lane/register/shared
 * memory layouts of their operands (see layout.h). */
#include <string.h>
#include "layout.h"

const int gpu_sass_arch[3] = {80, 89, 90};
const char *const gpu_sass_arch_name[3] = {"sm_80", "sm_89", "sm_90a"};

/* fpemu_round values (fpemu.h): kept as numbers so this file needs no
 * library header. */
enum { R_RNE = 0, R_RTZ = 2, R_RUP = 3, R_RDN = 4 };

#define MMA(id, nm, ptx, ker, m, n, k, a, b, c, d, sat, cc, s80, s89, s90, note) \
    [id] = {id, nm, ptx, ker, GPU_OP_MMA, m, n, k, a, b, c, d, sat, 0, cc, 0, {s80, s89, s90}, note}
#define WGMMA(id, nm, ptx, ker, k, a, b, s90) WGMMA_ACC(id, nm, ptx, ker, k, a, b, "f32", s90)
#define WGMMA_ACC(id, nm, ptx, ker, k, a, b, acc, s90) \
    [id] = {id, nm, ptx, ker, GPU_OP_WGMMA, 64, 8, k, a, b, acc, acc, 0, 0, 90, 1, {NULL, NULL, s90}, NULL}
#define CVT(id, nm, ptx, ker, d, sat, rnd, cc, s80, s89, s90) \
    [id] = {id, nm, ptx, ker, GPU_OP_CVT, 0, 0, 0, "f32", NULL, NULL, d, sat, rnd, cc, 0, {s80, s89, s90}, NULL}

/* The SASS columns were read from `cuobjdump -sass bin/fpemu-gpu` (CUDA
 * 13.0 nvcc); tests/t_gpu_sass.sh checks them on every build where
 * cuobjdump is available. */
static const gpu_kind kinds[GPU_KIND_COUNT] = {
    MMA(GPU_MMA_F16, "mma.m16n8k16.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "gpu_k_mma_f16",
        16, 8, 16, "f16", "f16", "f32", "f32", 0, 80,
        "HMMA.16816.F32", "HMMA.16816.F32", "HMMA.16816.F32", NULL),
    MMA(GPU_MMA_BF16, "mma.m16n8k16.f32.bf16.bf16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "gpu_k_mma_bf16",
        16, 8, 16, "bf16", "bf16", "f32", "f32", 0, 80,
        "HMMA.16816.F32.BF16", "HMMA.16816.F32.BF16", "HMMA.16816.F32.BF16", NULL),
    MMA(GPU_MMA_TF32, "mma.m16n8k8.f32.tf32.tf32.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "gpu_k_mma_tf32",
        16, 8, 8, "tf32", "tf32", "f32", "f32", 0, 80,
        "HMMA.1688.F32.TF32", "HMMA.1688.F32.TF32", "HMMA.1688.F32.TF32", NULL),
    MMA(GPU_MMA_S8, "mma.m16n8k32.s32.s8.s8.s32",
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", "gpu_k_mma_s8",
        16, 8, 32, "s8", "s8", "s32", "s32", 0, 80,
        "IMMA.16832.S8.S8", "IMMA.16832.S8.S8", "IMMA.16832.S8.S8", NULL),
    MMA(GPU_MMA_S8_SAT, "mma.m16n8k32.satfinite.s32.s8.s8.s32",
        "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", "gpu_k_mma_s8_sat",
        16, 8, 32, "s8", "s8", "s32", "s32", 1, 80,
        "IMMA.16832.S8.S8.SAT", "IMMA.16832.S8.S8.SAT", "IMMA.16832.S8.S8.SAT", NULL),
    MMA(GPU_MMA_U8S8, "mma.m16n8k32.s32.u8.s8.s32",
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32", "gpu_k_mma_u8s8",
        16, 8, 32, "u8", "s8", "s32", "s32", 0, 80,
        "IMMA.16832.U8.S8", "IMMA.16832.U8.S8", "IMMA.16832.U8.S8", NULL),
    MMA(GPU_MMA_U8U8_SAT, "mma.m16n8k32.satfinite.s32.u8.u8.s32",
        "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32", "gpu_k_mma_u8u8_sat",
        16, 8, 32, "u8", "u8", "s32", "s32", 1, 80,
        "IMMA.16832.U8.U8.SAT", "IMMA.16832.U8.U8.SAT", "IMMA.16832.U8.U8.SAT", NULL),
    MMA(GPU_MMA_E4M3, "mma.m16n8k32.f32.e4m3.e4m3.f32",
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "gpu_k_mma_e4m3",
        16, 8, 32, "e4m3", "e4m3", "f32", "f32", 0, 89,
        NULL, "QMMA.16832.F32.E4M3.E4M3", "HMMA.16816.F32",
        "sm_90a: ptxas lowers fp8 mma.sync to F2FP (e4m3->f16) + 2x HMMA.16816 (K split "
        "into k%4<2 and k%4>=2 halves) + FADD of C: not the fp8 tensor-core path"),
    MMA(GPU_MMA_E5M2, "mma.m16n8k32.f32.e5m2.e5m2.f32",
        "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", "gpu_k_mma_e5m2",
        16, 8, 32, "e5m2", "e5m2", "f32", "f32", 0, 89,
        NULL, "QMMA.16832.F32.E5M2.E5M2", "HMMA.16816.F32",
        "sm_90a: ptxas lowers fp8 mma.sync to F2FP (e5m2->f16) + 2x HMMA.16816 (K split "
        "into k%4<2 and k%4>=2 halves) + FADD of C: not the fp8 tensor-core path"),
    WGMMA(GPU_WGMMA_F16, "wgmma.m64n8k16.f32.f16.f16",
          "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", "gpu_k_wgmma_f16",
          16, "f16", "f16", "HGMMA.64x8x16.F32"),
    WGMMA(GPU_WGMMA_BF16, "wgmma.m64n8k16.f32.bf16.bf16",
          "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", "gpu_k_wgmma_bf16",
          16, "bf16", "bf16", "HGMMA.64x8x16.F32.BF16"),
    WGMMA(GPU_WGMMA_E4M3, "wgmma.m64n8k32.f32.e4m3.e4m3",
          "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", "gpu_k_wgmma_e4m3",
          32, "e4m3", "e4m3", "QGMMA.64x8x32.F32.E4M3.E4M3"),
    WGMMA(GPU_WGMMA_E5M2, "wgmma.m64n8k32.f32.e5m2.e5m2",
          "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2", "gpu_k_wgmma_e5m2",
          32, "e5m2", "e5m2", "QGMMA.64x8x32.F32.E5M2.E5M2"),
    CVT(GPU_CVT_E4M3, "cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e4m3x2.f32",
        "gpu_k_cvt_e4m3", "e4m3", 1, R_RNE, 89, NULL, "F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C", "F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C"),
    CVT(GPU_CVT_E5M2, "cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.satfinite.e5m2x2.f32",
        "gpu_k_cvt_e5m2", "e5m2", 1, R_RNE, 89, NULL, "F2FP.SATFINITE.E5M2.F32.PACK_AB_MERGE_C", "F2FP.SATFINITE.E5M2.F32.PACK_AB_MERGE_C"),
    CVT(GPU_CVT_F16_RN, "cvt.rn.f16.f32", "cvt.rn.f16.f32", "gpu_k_cvt_f16_rn", "f16", 0, R_RNE, 80,
        "F2F.F16.F32", "F2F.F16.F32", "F2F.F16.F32"),
    CVT(GPU_CVT_F16_RZ, "cvt.rz.f16.f32", "cvt.rz.f16.f32", "gpu_k_cvt_f16_rz", "f16", 0, R_RTZ, 80,
        "F2F.F16.F32.RZ", "F2F.F16.F32.RZ", "F2F.F16.F32.RZ"),
    CVT(GPU_CVT_F16_RM, "cvt.rm.f16.f32", "cvt.rm.f16.f32", "gpu_k_cvt_f16_rm", "f16", 0, R_RDN, 80,
        "F2F.F16.F32.RM", "F2F.F16.F32.RM", "F2F.F16.F32.RM"),
    CVT(GPU_CVT_F16_RP, "cvt.rp.f16.f32", "cvt.rp.f16.f32", "gpu_k_cvt_f16_rp", "f16", 0, R_RUP, 80,
        "F2F.F16.F32.RP", "F2F.F16.F32.RP", "F2F.F16.F32.RP"),
    CVT(GPU_CVT_BF16_RN, "cvt.rn.bf16.f32", "cvt.rn.bf16.f32", "gpu_k_cvt_bf16_rn", "bf16", 0, R_RNE, 80,
        "F2F.BF16.F32", "F2F.BF16.F32", "F2F.BF16.F32"),
    CVT(GPU_CVT_BF16_RZ, "cvt.rz.bf16.f32", "cvt.rz.bf16.f32", "gpu_k_cvt_bf16_rz", "bf16", 0, R_RTZ, 80,
        "F2F.BF16.F32.RZ", "F2F.BF16.F32.RZ", "F2F.BF16.F32.RZ"),
    CVT(GPU_CVT_BF16_RM, "cvt.rm.bf16.f32", "cvt.rm.bf16.f32", "gpu_k_cvt_bf16_rm", "bf16", 0, R_RDN, 80,
        "F2F.BF16.F32.RM", "F2F.BF16.F32.RM", "F2F.BF16.F32.RM"),
    CVT(GPU_CVT_BF16_RP, "cvt.rp.bf16.f32", "cvt.rp.bf16.f32", "gpu_k_cvt_bf16_rp", "bf16", 0, R_RUP, 80,
        "F2F.BF16.F32.RP", "F2F.BF16.F32.RP", "F2F.BF16.F32.RP"),
    MMA(GPU_MMA_F16_F16, "mma.m16n8k16.f16.f16.f16.f16",
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", "gpu_k_mma_f16_f16",
        16, 8, 16, "f16", "f16", "f16", "f16", 0, 80,
        "HMMA.16816.F16", "HMMA.16816.F16", "HMMA.16816.F16", NULL),
    WGMMA_ACC(GPU_WGMMA_F16_F16, "wgmma.m64n8k16.f16.f16.f16",
              "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16", "gpu_k_wgmma_f16_f16",
              16, "f16", "f16", "f16", "HGMMA.64x8x16.F16"),
    WGMMA_ACC(GPU_WGMMA_E4M3_F16, "wgmma.m64n8k32.f16.e4m3.e4m3",
              "wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3", "gpu_k_wgmma_e4m3_f16",
              32, "e4m3", "e4m3", "f16", "QGMMA.64x8x32.F16.E4M3.E4M3"),
    WGMMA_ACC(GPU_WGMMA_E5M2_F16, "wgmma.m64n8k32.f16.e5m2.e5m2",
              "wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e5m2", "gpu_k_wgmma_e5m2_f16",
              32, "e5m2", "e5m2", "f16", "QGMMA.64x8x32.F16.E5M2.E5M2"),
    WGMMA(GPU_WGMMA_TF32, "wgmma.m64n8k8.f32.tf32.tf32",
          "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", "gpu_k_wgmma_tf32",
          8, "tf32", "tf32", "HGMMA.64x8x8.F32.TF32"),
    MMA(GPU_MMA_E4M3_F16, "mma.m16n8k32.f16.e4m3.e4m3.f16",
        "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", "gpu_k_mma_e4m3_f16",
        16, 8, 32, "e4m3", "e4m3", "f16", "f16", 0, 89,
        NULL, "QMMA.16832.F16.E4M3.E4M3", "HMMA.16816.F16",
        "sm_90a: ptxas lowers fp8 mma.sync to F2FP (e4m3->f16) + 2x HMMA.16816.F16 (K split "
        "into k%4<2 and k%4>=2 halves) + HADD2 of C: not the fp8 tensor-core path"),
    MMA(GPU_MMA_E5M2_F16, "mma.m16n8k32.f16.e5m2.e5m2.f16",
        "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", "gpu_k_mma_e5m2_f16",
        16, 8, 32, "e5m2", "e5m2", "f16", "f16", 0, 89,
        NULL, "QMMA.16832.F16.E5M2.E5M2", "HMMA.16816.F16",
        "sm_90a: ptxas lowers fp8 mma.sync to F2FP (e5m2->f16) + 2x HMMA.16816.F16 (K split "
        "into k%4<2 and k%4>=2 halves) + HADD2 of C: not the fp8 tensor-core path"),
};

const gpu_kind *gpu_kind_get(int id) {
    return id >= 0 && id < GPU_KIND_COUNT ? &kinds[id] : NULL;
}

const gpu_kind *gpu_kind_find(const char *name) {
    for (int i = 0; i < GPU_KIND_COUNT; i++)
        if (!strcmp(kinds[i].name, name) || !strcmp(kinds[i].kernel, name)) return &kinds[i];
    return NULL;
}

int gpu_kind_supported(const gpu_kind *k, int cc) {
    if (cc < k->min_cc) return 0;
    if (k->arch_specific && cc != k->min_cc) return 0;
    return 1;
}

int gpu_kind_is_int(const gpu_kind *k) {
    return k->op == GPU_OP_MMA && (!strcmp(k->a, "s8") || !strcmp(k->a, "u8"));
}

int gpu_kind_elem_bits(const gpu_kind *k) {
    if (k->op == GPU_OP_CVT) return 32;
    if (!strcmp(k->a, "tf32")) return 32;
    if (!strcmp(k->a, "f16") || !strcmp(k->a, "bf16")) return 16;
    return 8;
}

size_t gpu_a_words(const gpu_kind *k) {
    return k->op == GPU_OP_WGMMA ? GPU_WGMMA_A_WORDS : 32 * 4;
}
size_t gpu_b_words(const gpu_kind *k) {
    return k->op == GPU_OP_WGMMA ? GPU_WGMMA_B_WORDS : 32 * 2;
}
size_t gpu_cd_words(const gpu_kind *k) {
    return k->op == GPU_OP_WGMMA ? 128 * 4 : 32 * 4;
}

/* ---- mma.sync fragments (PTX ISA, warp-level matrix fragments) -------- */

void gpu_mma_a_pos(const gpu_kind *k, int lane, int i, int *row, int *col) {
    int g = lane >> 2, t = lane & 3;
    switch (gpu_kind_elem_bits(k)) {
    case 16: /* m16n8k16 f16/bf16: a0..a7 in 4 .f16x2 registers */
        *row = g + ((i >> 1) & 1) * 8;
        *col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
        break;
    case 32: /* m16n8k8 tf32: a0..a3, one per register */
        *row = g + (i & 1) * 8;
        *col = t + (i >= 2 ? 4 : 0);
        break;
    default: /* m16n8k32 8-bit: a0..a15, four per register */
        *row = g + ((i >> 2) & 1) * 8;
        *col = t * 4 + (i & 3) + (i >= 8 ? 16 : 0);
        break;
    }
}

void gpu_mma_b_pos(const gpu_kind *k, int lane, int i, int *row, int *col) {
    int g = lane >> 2, t = lane & 3;
    *col = g;
    switch (gpu_kind_elem_bits(k)) {
    case 16: *row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0); break;  /* b0..b3 */
    case 32: *row = t + (i >= 1 ? 4 : 0); break;                 /* b0, b1 */
    default: *row = t * 4 + (i & 3) + (i >= 4 ? 16 : 0); break;  /* b0..b7 */
    }
}

void gpu_mma_cd_pos(int lane, int i, int *row, int *col) {
    *row = (lane >> 2) + (i >= 2 ? 8 : 0);
    *col = (lane & 3) * 2 + (i & 1);
}

void gpu_wgmma_d_pos(int thread, int i, int *row, int *col) {
    int warp = thread >> 5, lane = thread & 31;
    *row = 16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1);
    *col = 8 * (i >> 2) + 2 * (lane & 3) + (i & 1);
}

size_t gpu_wgmma_smem_offset(const gpu_kind *k, int mn, int kk) {
    int esize = gpu_kind_elem_bits(k) / 8;
    int per_chunk = 16 / esize; /* T: elements in a 16-byte core-matrix row */
    return (size_t)(kk / per_chunk) * GPU_WGMMA_LBO + (size_t)(mn / 8) * GPU_WGMMA_SBO +
           (size_t)(mn % 8) * 16 + (size_t)(kk % per_chunk) * esize;
}

uint64_t gpu_wgmma_desc(uint32_t addr) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(GPU_WGMMA_LBO >> 4) << 16) |
           ((uint64_t)(GPU_WGMMA_SBO >> 4) << 32);
}

/* ---- images ------------------------------------------------------------- */

static uint64_t elem_mask(int bits) { return bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1; }

static void put_elem(uint32_t *w, int bits, int slot, uint64_t code) {
    if (bits == 32) { *w = (uint32_t)code; return; }
    uint32_t m = (uint32_t)elem_mask(bits) << (slot * bits);
    *w = (*w & ~m) | (((uint32_t)code << (slot * bits)) & m);
}
static uint64_t get_elem(uint32_t w, int bits, int slot) {
    if (bits == 32) return w;
    return (w >> (slot * bits)) & elem_mask(bits);
}

/* Byte image of one wgmma operand (rows x K codes, K-major) <-> codes. */
static void smem_put(const gpu_kind *k, uint8_t *bytes, int mn, int kk, uint64_t code) {
    size_t off = gpu_wgmma_smem_offset(k, mn, kk);
    int esize = gpu_kind_elem_bits(k) / 8;
    for (int i = 0; i < esize; i++) bytes[off + i] = (uint8_t)(code >> (8 * i)); /* little endian */
}
static uint64_t smem_get(const gpu_kind *k, const uint8_t *bytes, int mn, int kk) {
    size_t off = gpu_wgmma_smem_offset(k, mn, kk);
    int esize = gpu_kind_elem_bits(k) / 8;
    uint64_t v = 0;
    for (int i = 0; i < esize; i++) v |= (uint64_t)bytes[off + i] << (8 * i);
    return v;
}

/* The images are word arrays; the shared-memory images are byte images of
 * little-endian memory, read and written through these two helpers so the
 * layout does not depend on the host's byte order. */
static void words_to_bytes(const uint32_t *w, size_t nw, uint8_t *b) {
    for (size_t i = 0; i < nw; i++)
        for (int j = 0; j < 4; j++) b[4 * i + j] = (uint8_t)(w[i] >> (8 * j));
}
static void bytes_to_words(const uint8_t *b, size_t nw, uint32_t *w) {
    for (size_t i = 0; i < nw; i++)
        w[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
               (uint32_t)b[4 * i + 3] << 24;
}

void gpu_pack_a(const gpu_kind *k, int steps, const uint64_t *A, uint32_t *img) {
    int bits = gpu_kind_elem_bits(k), per = 32 / bits, kk = k->k * steps;
    uint64_t mask = elem_mask(bits);
    memset(img, 0, gpu_a_words(k) * steps * sizeof *img);
    for (int s = 0; s < steps; s++) {
        uint32_t *im = img + gpu_a_words(k) * s;
        if (k->op == GPU_OP_WGMMA) {
            uint8_t bytes[GPU_WGMMA_A_BYTES] = {0};
            for (int r = 0; r < k->m; r++)
                for (int c = 0; c < k->k; c++) smem_put(k, bytes, r, c, A[(size_t)r * kk + s * k->k + c] & mask);
            bytes_to_words(bytes, GPU_WGMMA_A_WORDS, im);
            continue;
        }
        for (int lane = 0; lane < 32; lane++)
            for (int i = 0; i < 4 * per; i++) {
                int r, c;
                gpu_mma_a_pos(k, lane, i, &r, &c);
                put_elem(&im[lane * 4 + i / per], bits, i % per, A[(size_t)r * kk + s * k->k + c] & mask);
            }
    }
}

void gpu_unpack_a(const gpu_kind *k, int steps, const uint32_t *img, uint64_t *A) {
    int bits = gpu_kind_elem_bits(k), per = 32 / bits, kk = k->k * steps;
    for (int s = 0; s < steps; s++) {
        const uint32_t *im = img + gpu_a_words(k) * s;
        if (k->op == GPU_OP_WGMMA) {
            uint8_t bytes[GPU_WGMMA_A_BYTES];
            words_to_bytes(im, GPU_WGMMA_A_WORDS, bytes);
            for (int r = 0; r < k->m; r++)
                for (int c = 0; c < k->k; c++) A[(size_t)r * kk + s * k->k + c] = smem_get(k, bytes, r, c);
            continue;
        }
        for (int lane = 0; lane < 32; lane++)
            for (int i = 0; i < 4 * per; i++) {
                int r, c;
                gpu_mma_a_pos(k, lane, i, &r, &c);
                A[(size_t)r * kk + s * k->k + c] = get_elem(im[lane * 4 + i / per], bits, i % per);
            }
    }
}

void gpu_pack_b(const gpu_kind *k, int steps, const uint64_t *B, uint32_t *img) {
    int bits = gpu_kind_elem_bits(k), per = 32 / bits, n = k->n;
    uint64_t mask = elem_mask(bits);
    memset(img, 0, gpu_b_words(k) * steps * sizeof *img);
    for (int s = 0; s < steps; s++) {
        uint32_t *im = img + gpu_b_words(k) * s;
        if (k->op == GPU_OP_WGMMA) {
            uint8_t bytes[GPU_WGMMA_B_BYTES] = {0};
            for (int c = 0; c < n; c++)
                for (int r = 0; r < k->k; r++) smem_put(k, bytes, c, r, B[(size_t)(s * k->k + r) * n + c] & mask);
            bytes_to_words(bytes, GPU_WGMMA_B_WORDS, im);
            continue;
        }
        for (int lane = 0; lane < 32; lane++)
            for (int i = 0; i < 2 * per; i++) {
                int r, c;
                gpu_mma_b_pos(k, lane, i, &r, &c);
                put_elem(&im[lane * 2 + i / per], bits, i % per, B[(size_t)(s * k->k + r) * n + c] & mask);
            }
    }
}

void gpu_unpack_b(const gpu_kind *k, int steps, const uint32_t *img, uint64_t *B) {
    int bits = gpu_kind_elem_bits(k), per = 32 / bits, n = k->n;
    for (int s = 0; s < steps; s++) {
        const uint32_t *im = img + gpu_b_words(k) * s;
        if (k->op == GPU_OP_WGMMA) {
            uint8_t bytes[GPU_WGMMA_B_BYTES];
            words_to_bytes(im, GPU_WGMMA_B_WORDS, bytes);
            for (int c = 0; c < n; c++)
                for (int r = 0; r < k->k; r++) B[(size_t)(s * k->k + r) * n + c] = smem_get(k, bytes, c, r);
            continue;
        }
        for (int lane = 0; lane < 32; lane++)
            for (int i = 0; i < 2 * per; i++) {
                int r, c;
                gpu_mma_b_pos(k, lane, i, &r, &c);
                B[(size_t)(s * k->k + r) * n + c] = get_elem(im[lane * 2 + i / per], bits, i % per);
            }
    }
}

void gpu_pack_cd(const gpu_kind *k, const uint64_t *C, uint32_t *img) {
    int threads = k->op == GPU_OP_WGMMA ? 128 : 32;
    for (int t = 0; t < threads; t++)
        for (int i = 0; i < 4; i++) {
            int r, c;
            if (k->op == GPU_OP_WGMMA) gpu_wgmma_d_pos(t, i, &r, &c);
            else gpu_mma_cd_pos(t, i, &r, &c);
            img[t * 4 + i] = (uint32_t)C[(size_t)r * k->n + c];
        }
}

void gpu_unpack_cd(const gpu_kind *k, const uint32_t *img, uint64_t *D) {
    int threads = k->op == GPU_OP_WGMMA ? 128 : 32;
    for (int t = 0; t < threads; t++)
        for (int i = 0; i < 4; i++) {
            int r, c;
            if (k->op == GPU_OP_WGMMA) gpu_wgmma_d_pos(t, i, &r, &c);
            else gpu_mma_cd_pos(t, i, &r, &c);
            D[(size_t)r * k->n + c] = img[t * 4 + i];
        }
}
