/* SPDX-License-Identifier: MIT */
/* kinds.h: the instruction kinds gpu/ runs, numbered the same way on both
 * sides of the host/device boundary (plain C: included by the CUDA file and
 * by the host harness). The table that describes each kind (shapes,
 * formats, PTX text, expected SASS) is gpu/host/layout.c. */
#ifndef FPEMU_GPU_KINDS_H
#define FPEMU_GPU_KINDS_H

typedef enum gpu_kind_id {
    /* mma.sync, one warp per tile (sm_80+) */
    GPU_MMA_F16 = 0,   /* m16n8k16.row.col.f32.f16.f16.f32 */
    GPU_MMA_BF16,      /* m16n8k16.row.col.f32.bf16.bf16.f32 */
    GPU_MMA_TF32,      /* m16n8k8.row.col.f32.tf32.tf32.f32 */
    GPU_MMA_S8,        /* m16n8k32.row.col.s32.s8.s8.s32 */
    GPU_MMA_S8_SAT,    /* m16n8k32.row.col.satfinite.s32.s8.s8.s32 */
    GPU_MMA_U8S8,      /* m16n8k32.row.col.s32.u8.s8.s32 */
    GPU_MMA_U8U8_SAT,  /* m16n8k32.row.col.satfinite.s32.u8.u8.s32 */
    /* mma.sync with fp8 inputs (sm_89+) */
    GPU_MMA_E4M3,      /* m16n8k32.row.col.f32.e4m3.e4m3.f32 */
    GPU_MMA_E5M2,      /* m16n8k32.row.col.f32.e5m2.e5m2.f32 */
    /* wgmma, one warpgroup per tile, A and B from shared memory (sm_90a) */
    GPU_WGMMA_F16,     /* m64n8k16.f32.f16.f16 */
    GPU_WGMMA_BF16,    /* m64n8k16.f32.bf16.bf16 */
    GPU_WGMMA_E4M3,    /* m64n8k32.f32.e4m3.e4m3 */
    GPU_WGMMA_E5M2,    /* m64n8k32.f32.e5m2.e5m2 */
    /* conversions from f32, one element per thread */
    GPU_CVT_E4M3,      /* cvt.rn.satfinite.e4m3x2.f32 (sm_89+) */
    GPU_CVT_E5M2,      /* cvt.rn.satfinite.e5m2x2.f32 (sm_89+) */
    GPU_CVT_F16_RN,    /* cvt.rn.f16.f32 */
    GPU_CVT_F16_RZ,
    GPU_CVT_F16_RM,
    GPU_CVT_F16_RP,
    GPU_CVT_BF16_RN,   /* cvt.rn.bf16.f32 */
    GPU_CVT_BF16_RZ,
    GPU_CVT_BF16_RM,
    GPU_CVT_BF16_RP,
    /* mma.sync with f16 accumulators (sm_80+; after the conversions so that
     * the ids of the kinds above, which recordings hold, stay as they were) */
    GPU_MMA_F16_F16,   /* m16n8k16.row.col.f16.f16.f16.f16 */
    /* wgmma with f16 accumulators (sm_90a; appended for the same reason) */
    GPU_WGMMA_F16_F16,  /* m64n8k16.f16.f16.f16 */
    GPU_WGMMA_E4M3_F16, /* m64n8k32.f16.e4m3.e4m3 */
    GPU_WGMMA_E5M2_F16, /* m64n8k32.f16.e5m2.e5m2 */
    /* wgmma with tf32 inputs (sm_90a; appended for the same reason): what
     * cuBLAS's Hopper tf32 kernels run */
    GPU_WGMMA_TF32,     /* m64n8k8.f32.tf32.tf32 */
    /* mma.sync with fp8 inputs and f16 accumulators (sm_89+; appended) */
    GPU_MMA_E4M3_F16,   /* m16n8k32.row.col.f16.e4m3.e4m3.f16 */
    GPU_MMA_E5M2_F16,   /* m16n8k32.row.col.f16.e5m2.e5m2.f16 */
    GPU_KIND_COUNT
} gpu_kind_id;

/* Tile of every kernel launch: mma.sync kernels run 4 warps (4 tiles) per
 * block of 128 threads; wgmma kernels run one warpgroup (one tile) per
 * block; conversions one element per thread. */
#define GPU_BLOCK_THREADS 128
#define GPU_MMA_TILES_PER_BLOCK 4
/* Longest chain of instructions one tile may run (probe and validate). */
#define GPU_MAX_STEPS 16

#endif
