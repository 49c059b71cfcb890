/* SPDX-License-Identifier: MIT */
/* layout.h: the instruction kinds gpu/ runs and where each matrix element
 * lives in the registers (mma.sync) or shared memory (wgmma) of the
 * hardware. Plain C, no CUDA: the harness packs matrices into "images" that
 * the kernels copy verbatim, so every lane/register formula of the PTX ISA
 * lives here, where CPU tests can check it.
 *
 * Images, per tile and per chained step s (steps >= 1, see harness.h):
 *   mma.sync   A: 32 lanes x 4 words    img[(s*32 + lane)*4 + r]
 *              B: 32 lanes x 2 words    img[(s*32 + lane)*2 + r]
 *              C, D: 32 lanes x 4 words img[lane*4 + r]
 *   wgmma      A: the shared-memory bytes of a 64 x K K-major operand
 *                 (no swizzle), GPU_WGMMA_A_WORDS words per step
 *              B: the same for the 8 x K (N x K, K-major) operand
 *              C, D: 128 threads x 4 words  img[thread*4 + r]
 * Elements are packed low to high in each 32-bit word (element i of a
 * register sits at bit (i % per_word) * element_bits).
 */
#ifndef FPEMU_GPU_LAYOUT_H
#define FPEMU_GPU_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "../kinds.h"

/* wgmma operands in shared memory: K-major, no swizzle. A "core matrix"
 * is 8 rows x 16 bytes stored contiguously (128 bytes); the core matrix
 * next along K is LBO bytes further, the one 8 rows further (M or N) is SBO
 * bytes further (PTX ISA, "Shared Memory Matrix Layout", canonical K-major
 * layout ((8,m),(T,2k)):((1T,SBO),(1,LBO)) in units of elements, T = 16
 * bytes / element size). Every K here is two core matrices wide. */
#define GPU_WGMMA_LBO 128
#define GPU_WGMMA_SBO 256
#define GPU_WGMMA_A_BYTES (64 * 32)  /* 64 rows x 32 bytes (K=16 f16, K=32 fp8) */
#define GPU_WGMMA_B_BYTES (8 * 32)
#define GPU_WGMMA_A_WORDS (GPU_WGMMA_A_BYTES / 4)
#define GPU_WGMMA_B_WORDS (GPU_WGMMA_B_BYTES / 4)

typedef enum gpu_op { GPU_OP_MMA = 0, GPU_OP_WGMMA, GPU_OP_CVT } gpu_op;

typedef struct gpu_kind {
    gpu_kind_id id;
    const char *name;    /* short name used in reports, e.g. "mma.m16n8k16.f32.f16.f16.f32" */
    const char *ptx;     /* the PTX instruction the kernel issues */
    const char *kernel;  /* the kernel's symbol (extern "C") in bin/fpemu-gpu */
    gpu_op op;
    int m, n, k;         /* MMA shape; 0 for conversions */
    /* Formats: fpemu format names ("f16", "bf16", "tf32", "e4m3", "e5m2",
     * "f32"), or the integer types "s8", "u8", "s32". For conversions a is
     * the source (f32) and d the destination. */
    const char *a, *b, *c, *d;
    int satfinite;       /* integer MMA: clamp instead of wrap; cvt: .satfinite */
    int round;           /* cvt: fpemu_round of the instruction */
    int min_cc;          /* lowest compute capability x10 that runs it (80, 89, 90) */
    int arch_specific;   /* 1: runs on exactly min_cc (sm_90a code) */
    /* The SASS mnemonic (exact opcode token) the kernel must contain in
     * each cubin built (sm_80, sm_89, sm_90a); NULL: the target lacks the
     * instruction, the kernel body is empty and must hold no MMA. */
    const char *sass[3];
    const char *note;    /* what the SASS says about the unit used, or NULL */
} gpu_kind;

/* The cubin targets bin/fpemu-gpu carries, in the order of gpu_kind.sass. */
extern const int gpu_sass_arch[3];   /* 80, 89, 90 */
extern const char *const gpu_sass_arch_name[3]; /* "sm_80", "sm_89", "sm_90a" */

const gpu_kind *gpu_kind_get(int id);      /* NULL if out of range */
const gpu_kind *gpu_kind_find(const char *name); /* by name or kernel symbol */

/* Does a device of compute capability cc (x10) have the instruction? */
int gpu_kind_supported(const gpu_kind *k, int cc);

/* Element width in bits of the A/B operands (8, 16 or 32). */
int gpu_kind_elem_bits(const gpu_kind *k);
/* Is the kind an integer MMA (s8/u8 inputs, s32 accumulator)? */
int gpu_kind_is_int(const gpu_kind *k);

/* Image sizes in 32-bit words, per tile and per step (A, B) or per tile
 * (C, D). */
size_t gpu_a_words(const gpu_kind *k);
size_t gpu_b_words(const gpu_kind *k);
size_t gpu_cd_words(const gpu_kind *k);

/* Where element i of lane `lane` sits (mma.sync), from the PTX ISA's
 * formulas ("Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32"):
 * groupID = lane >> 2, threadID_in_group = lane % 4. i counts elements
 * low to high across the lane's registers. */
void gpu_mma_a_pos(const gpu_kind *k, int lane, int i, int *row, int *col);
void gpu_mma_b_pos(const gpu_kind *k, int lane, int i, int *row, int *col);
void gpu_mma_cd_pos(int lane, int i, int *row, int *col);
/* Accumulator register i of thread t (0..127) of a warpgroup (wgmma
 * m64nNk*, f32/s32 D): row 16*warp + groupID + 8*((i/2)%2), col
 * 8*(i/4) + 2*threadID_in_group + (i%2). */
void gpu_wgmma_d_pos(int thread, int i, int *row, int *col);
/* Byte offset of element (mn, kk) of a K-major wgmma operand (mn: row of A
 * or column of B; kk < K). */
size_t gpu_wgmma_smem_offset(const gpu_kind *k, int mn, int kk);
/* The 64-bit shared-memory matrix descriptor the kernel builds for an
 * operand at shared address addr (PTX ISA "Matrix Descriptor Format"):
 * bits 0-13 addr>>4, 16-29 LBO>>4, 32-45 SBO>>4, 49-51 base offset (0),
 * 62-63 swizzle (0: none). */
uint64_t gpu_wgmma_desc(uint32_t addr);

/* Pack / unpack. Matrices are row-major arrays of codes (uint64_t holding
 * the format's bit pattern; s8 as its 8-bit two's complement pattern, s32
 * as a 32-bit pattern). A is M x (steps*K), B is (steps*K) x N, C and D
 * are M x N. Images are as described at the top. */
void gpu_pack_a(const gpu_kind *k, int steps, const uint64_t *A, uint32_t *img);
void gpu_pack_b(const gpu_kind *k, int steps, const uint64_t *B, uint32_t *img);
void gpu_pack_cd(const gpu_kind *k, const uint64_t *C, uint32_t *img);
void gpu_unpack_a(const gpu_kind *k, int steps, const uint32_t *img, uint64_t *A);
void gpu_unpack_b(const gpu_kind *k, int steps, const uint32_t *img, uint64_t *B);
void gpu_unpack_cd(const gpu_kind *k, const uint32_t *img, uint64_t *D);

#endif
