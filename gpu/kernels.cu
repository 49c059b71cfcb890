/* SPDX-License-Identifier: MIT */
// kernels.cu: the device kernels of bin/fpemu-gpu (inline PTX) and the thin
// C API of gpu_rt.h around them. Operands arrive as images already laid out
// for the hardware (gpu/host/layout.c does all the lane arithmetic), so
// each kernel only loads words, issues its instruction and stores words.
//
// Every kernel is extern "C" (its symbol is the name tests/t_gpu_sass.sh
// looks for in `cuobjdump -sass`) and writes the __CUDA_ARCH__ its body was
// compiled for to *status, or -1 when the target lacks the instruction and
// the body is empty: the host never trusts a result without that mark.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kinds.h"
#include "gpu_rt.h"
#include "host/layout.h"

#if defined(__CUDA_ARCH__)
#define ARCH __CUDA_ARCH__
#else
#define ARCH 0
#endif

static __device__ __forceinline__ void mark(int *status, int have) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *status = have ? ARCH : -1;
}

// ---- mma.sync: D(16x8) = A(16xK) B(Kx8) + C, 4 A words, 2 B words, 4 C/D
// words per lane for every kind ------------------------------------------

template <int KIND> struct Mma;

#define MMA_ASM(PTX)                                                              \
    asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"     \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                 \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

// MMA_GATE_NEED(ASM, PTX): ASM(PTX) in a cubin whose arch has the
// instruction (NEED: 800, 890), an empty body in the others
#if ARCH >= 800
#define MMA_GATE_800(ASM, PTX) ASM(PTX)
#else
#define MMA_GATE_800(ASM, PTX) (void)d, (void)a, (void)b
#endif
#if ARCH >= 890
#define MMA_GATE_890(ASM, PTX) ASM(PTX)
#else
#define MMA_GATE_890(ASM, PTX) (void)d, (void)a, (void)b
#endif
#define MMA_KIND(KIND, NEED, ASM, PTX)                                                  \
    template <> struct Mma<KIND> {                                                      \
        static const int need = NEED;                                                   \
        static __device__ __forceinline__ void run(uint32_t (&d)[4], const uint32_t (&a)[4], \
                                                   const uint32_t (&b)[2]) {            \
            MMA_GATE_##NEED(ASM, PTX);                                                  \
        }                                                                               \
    };
#define MMA_OP(KIND, NEED, PTX) MMA_KIND(KIND, NEED, MMA_ASM, PTX)

MMA_OP(GPU_MMA_F16, 800, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
MMA_OP(GPU_MMA_BF16, 800, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")
MMA_OP(GPU_MMA_TF32, 800, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")
MMA_OP(GPU_MMA_S8, 800, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32")
MMA_OP(GPU_MMA_S8_SAT, 800, "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32")
MMA_OP(GPU_MMA_U8S8, 800, "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32")
MMA_OP(GPU_MMA_U8U8_SAT, 800, "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32")
MMA_OP(GPU_MMA_E4M3, 890, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32")
MMA_OP(GPU_MMA_E5M2, 890, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32")

// f16 accumulators: C and D are two .f16x2 registers per lane (c0,c1 and
// c2,c3, the lower index in the low half); the images keep one element per
// word like the f32 kinds, so the lane packs them around the instruction.
#define MMA16_OP(KIND, NEED, PTX) MMA_KIND(KIND, NEED, MMA16_ASM, PTX)
#define MMA16_ASM(PTX)                                                                                \
    uint32_t p0 = (d[0] & 0xFFFFu) | d[1] << 16, p1 = (d[2] & 0xFFFFu) | d[3] << 16;                  \
    asm volatile(PTX " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"                                     \
                 : "+r"(p0), "+r"(p1)                                                                 \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));                 \
    d[0] = p0 & 0xFFFFu, d[1] = p0 >> 16, d[2] = p1 & 0xFFFFu, d[3] = p1 >> 16
MMA16_OP(GPU_MMA_F16_F16, 800, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16")
MMA16_OP(GPU_MMA_E4M3_F16, 890, "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16")
MMA16_OP(GPU_MMA_E5M2_F16, 890, "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16")

// One warp per tile, GPU_MMA_TILES_PER_BLOCK warps per block.
template <int KIND>
static __device__ __forceinline__ void mma_tile(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,
                                                const uint32_t *__restrict__ c, uint32_t *__restrict__ d,
                                                int ntiles, int steps, int *status) {
    mark(status, ARCH >= Mma<KIND>::need);
    const int lane = threadIdx.x & 31;
    const int tile = blockIdx.x * GPU_MMA_TILES_PER_BLOCK + (threadIdx.x >> 5);
    if (tile >= ntiles) return; // the whole warp leaves together
    uint32_t acc[4], ra[4], rb[2];
    for (int r = 0; r < 4; r++) acc[r] = c[((size_t)tile * 32 + lane) * 4 + r];
    for (int s = 0; s < steps; s++) {
        const size_t st = (size_t)tile * steps + s;
        for (int r = 0; r < 4; r++) ra[r] = a[(st * 32 + lane) * 4 + r];
        for (int r = 0; r < 2; r++) rb[r] = b[(st * 32 + lane) * 2 + r];
        Mma<KIND>::run(acc, ra, rb);
    }
    for (int r = 0; r < 4; r++) d[((size_t)tile * 32 + lane) * 4 + r] = acc[r];
}

#define MMA_PARAMS                                                                        \
    const uint32_t *__restrict__ a, const uint32_t *__restrict__ b, const uint32_t *__restrict__ c, \
        uint32_t *__restrict__ d, int ntiles, int steps, int *status
#define MMA_KERNEL(NAME, KIND) \
    extern "C" __global__ void __launch_bounds__(GPU_BLOCK_THREADS) NAME(MMA_PARAMS) { \
        mma_tile<KIND>(a, b, c, d, ntiles, steps, status);                           \
    }

MMA_KERNEL(gpu_k_mma_f16, GPU_MMA_F16)
MMA_KERNEL(gpu_k_mma_bf16, GPU_MMA_BF16)
MMA_KERNEL(gpu_k_mma_tf32, GPU_MMA_TF32)
MMA_KERNEL(gpu_k_mma_s8, GPU_MMA_S8)
MMA_KERNEL(gpu_k_mma_s8_sat, GPU_MMA_S8_SAT)
MMA_KERNEL(gpu_k_mma_u8s8, GPU_MMA_U8S8)
MMA_KERNEL(gpu_k_mma_u8u8_sat, GPU_MMA_U8U8_SAT)
MMA_KERNEL(gpu_k_mma_e4m3, GPU_MMA_E4M3)
MMA_KERNEL(gpu_k_mma_e5m2, GPU_MMA_E5M2)
MMA_KERNEL(gpu_k_mma_f16_f16, GPU_MMA_F16_F16)
MMA_KERNEL(gpu_k_mma_e4m3_f16, GPU_MMA_E4M3_F16)
MMA_KERNEL(gpu_k_mma_e5m2_f16, GPU_MMA_E5M2_F16)

// ---- wgmma (sm_90a): D(64x8) = A(64xK) B(Kx8) + D, A and B from shared
// memory through matrix descriptors, one warpgroup (128 threads) per tile.

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HAVE_WGMMA 1
#else
#define HAVE_WGMMA 0
#endif

#if HAVE_WGMMA
static __device__ __forceinline__ uint64_t smem_desc(const void *p) {
    // PTX ISA "Matrix Descriptor Format": start address, LBO and SBO in
    // 16-byte units; base offset 0 and swizzle 0 (none).
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(GPU_WGMMA_LBO >> 4) << 16) |
           ((uint64_t)(GPU_WGMMA_SBO >> 4) << 32);
}
#endif

template <int KIND> struct Wgmma;
// acc16 = 0: D is 4 f32 registers per thread (m64n8, .dtype .f32). acc16 =
// 1 (.dtype .f16): D is N/4 = 2 .f16x2 registers per thread, holding the
// elements of the f32 form's registers 0,1 and 2,3 (the lower index in the
// low half), as mma.sync's f16 C/D. The images keep one element per word
// like the f32 kinds, so the tile packs C into acc[0..1] before the chain
// and unpacks D after wait_group: no ordinary instruction touches the
// accumulators between two wgmma.
#if HAVE_WGMMA
#define WGMMA_OP(KIND, PTX, TAIL)                                                         \
    template <> struct Wgmma<KIND> {                                                      \
        static const int acc16 = 0;                                                       \
        static __device__ __forceinline__ void run(uint32_t (&d)[4], uint64_t da, uint64_t db) { \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n" PTX                  \
                         " {%0,%1,%2,%3}, %4, %5, p, 1, 1" TAIL ";\n}\n"                  \
                         : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                 \
                         : "l"(da), "l"(db), "r"(1));                                     \
        }                                                                                 \
    };
#define WGMMA16_OP(KIND, PTX, TAIL)                                                       \
    template <> struct Wgmma<KIND> {                                                      \
        static const int acc16 = 1;                                                       \
        static __device__ __forceinline__ void run(uint32_t (&d)[4], uint64_t da, uint64_t db) { \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n" PTX                  \
                         " {%0,%1}, %2, %3, p, 1, 1" TAIL ";\n}\n"                        \
                         : "+r"(d[0]), "+r"(d[1])                                         \
                         : "l"(da), "l"(db), "r"(1));                                     \
        }                                                                                 \
    };
#else
#define WGMMA_OP(KIND, PTX, TAIL)                                                         \
    template <> struct Wgmma<KIND> {                                                      \
        static const int acc16 = 0;                                                       \
        static __device__ __forceinline__ void run(uint32_t (&d)[4], uint64_t da, uint64_t db) { \
            (void)d, (void)da, (void)db;                                                  \
        }                                                                                 \
    };
#define WGMMA16_OP(KIND, PTX, TAIL)                                                       \
    template <> struct Wgmma<KIND> {                                                      \
        static const int acc16 = 1;                                                       \
        static __device__ __forceinline__ void run(uint32_t (&d)[4], uint64_t da, uint64_t db) { \
            (void)d, (void)da, (void)db;                                                  \
        }                                                                                 \
    };
#endif
// 16-bit inputs take imm-trans-a/b (0: K-major); fp8 inputs have none.
WGMMA_OP(GPU_WGMMA_F16, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", ", 0, 0")
WGMMA_OP(GPU_WGMMA_BF16, "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", ", 0, 0")
WGMMA_OP(GPU_WGMMA_E4M3, "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", "")
WGMMA_OP(GPU_WGMMA_E5M2, "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2", "")
WGMMA16_OP(GPU_WGMMA_F16_F16, "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16", ", 0, 0")
WGMMA16_OP(GPU_WGMMA_E4M3_F16, "wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3", "")
WGMMA16_OP(GPU_WGMMA_E5M2_F16, "wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e5m2", "")
// tf32 inputs are K-major only: no imm-trans operands.
WGMMA_OP(GPU_WGMMA_TF32, "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", "")

template <int KIND>
static __device__ __forceinline__ void wgmma_tile(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,
                                                  const uint32_t *__restrict__ c, uint32_t *__restrict__ d,
                                                  int ntiles, int steps, int *status) {
    __shared__ __align__(128) uint32_t sa[GPU_MAX_STEPS * GPU_WGMMA_A_WORDS];
    __shared__ __align__(128) uint32_t sb[GPU_MAX_STEPS * GPU_WGMMA_B_WORDS];
    mark(status, HAVE_WGMMA);
    const int t = threadIdx.x, tile = blockIdx.x;
    if (tile >= ntiles) return; // the whole block leaves together
    for (int i = t; i < steps * GPU_WGMMA_A_WORDS; i += GPU_BLOCK_THREADS)
        sa[i] = a[(size_t)tile * steps * GPU_WGMMA_A_WORDS + i];
    for (int i = t; i < steps * GPU_WGMMA_B_WORDS; i += GPU_BLOCK_THREADS)
        sb[i] = b[(size_t)tile * steps * GPU_WGMMA_B_WORDS + i];
    uint32_t acc[4];
    for (int r = 0; r < 4; r++) acc[r] = c[((size_t)tile * GPU_BLOCK_THREADS + t) * 4 + r];
    if (Wgmma<KIND>::acc16) {
        acc[0] = (acc[0] & 0xFFFFu) | acc[1] << 16;
        acc[1] = (acc[2] & 0xFFFFu) | acc[3] << 16;
    }
#if HAVE_WGMMA
    // Generic-proxy stores must be made visible to the async proxy that
    // wgmma reads shared memory through, then every thread synchronises.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    // wgmma.fence before each wgmma: the accumulators were last touched by
    // ordinary instructions (the loads above, or the loop's moves).
    for (int s = 0; s < steps; s++) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        Wgmma<KIND>::run(acc, smem_desc(&sa[s * GPU_WGMMA_A_WORDS]), smem_desc(&sb[s * GPU_WGMMA_B_WORDS]));
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#else
    __syncthreads();
#endif
    if (Wgmma<KIND>::acc16) {
        uint32_t p0 = acc[0], p1 = acc[1];
        acc[0] = p0 & 0xFFFFu, acc[1] = p0 >> 16, acc[2] = p1 & 0xFFFFu, acc[3] = p1 >> 16;
    }
    for (int r = 0; r < 4; r++) d[((size_t)tile * GPU_BLOCK_THREADS + t) * 4 + r] = acc[r];
}

#define WGMMA_KERNEL(NAME, KIND) \
    extern "C" __global__ void __launch_bounds__(GPU_BLOCK_THREADS) NAME(MMA_PARAMS) { \
        wgmma_tile<KIND>(a, b, c, d, ntiles, steps, status);                         \
    }
WGMMA_KERNEL(gpu_k_wgmma_f16, GPU_WGMMA_F16)
WGMMA_KERNEL(gpu_k_wgmma_bf16, GPU_WGMMA_BF16)
WGMMA_KERNEL(gpu_k_wgmma_e4m3, GPU_WGMMA_E4M3)
WGMMA_KERNEL(gpu_k_wgmma_e5m2, GPU_WGMMA_E5M2)
WGMMA_KERNEL(gpu_k_wgmma_f16_f16, GPU_WGMMA_F16_F16)
WGMMA_KERNEL(gpu_k_wgmma_e4m3_f16, GPU_WGMMA_E4M3_F16)
WGMMA_KERNEL(gpu_k_wgmma_e5m2_f16, GPU_WGMMA_E5M2_F16)
WGMMA_KERNEL(gpu_k_wgmma_tf32, GPU_WGMMA_TF32)

// ---- conversions from f32 -------------------------------------------------

#define CVT_PARAMS const uint32_t *__restrict__ x, uint32_t *__restrict__ y, int n, int *status

// One element per thread: cvt.RND.{f16,bf16}.f32.
#define CVT16_KERNEL(NAME, PTX)                                                         \
    extern "C" __global__ void __launch_bounds__(GPU_BLOCK_THREADS) NAME(CVT_PARAMS) { \
        mark(status, 1);                                                                \
        int i = blockIdx.x * GPU_BLOCK_THREADS + threadIdx.x;                           \
        if (i >= n) return;                                                             \
        unsigned short h;                                                               \
        asm(PTX " %0, %1;" : "=h"(h) : "f"(__uint_as_float(x[i])));                    \
        y[i] = h;                                                                       \
    }
CVT16_KERNEL(gpu_k_cvt_f16_rn, "cvt.rn.f16.f32")
CVT16_KERNEL(gpu_k_cvt_f16_rz, "cvt.rz.f16.f32")
CVT16_KERNEL(gpu_k_cvt_f16_rm, "cvt.rm.f16.f32")
CVT16_KERNEL(gpu_k_cvt_f16_rp, "cvt.rp.f16.f32")
CVT16_KERNEL(gpu_k_cvt_bf16_rn, "cvt.rn.bf16.f32")
CVT16_KERNEL(gpu_k_cvt_bf16_rz, "cvt.rz.bf16.f32")
CVT16_KERNEL(gpu_k_cvt_bf16_rm, "cvt.rm.bf16.f32")
CVT16_KERNEL(gpu_k_cvt_bf16_rp, "cvt.rp.bf16.f32")

// Two elements per thread: cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b puts
// cvt(a) in the upper byte of d and cvt(b) in the lower one; element 2i goes
// in b, 2i+1 in a. n is even (the host pads).
#if ARCH >= 890
#define CVT8_BODY(PTX)                                                                   \
    unsigned short h;                                                                    \
    asm(PTX " %0, %1, %2;" : "=h"(h) : "f"(__uint_as_float(x[2 * i + 1])), "f"(__uint_as_float(x[2 * i]))); \
    y[2 * i] = h & 0xFF;                                                                 \
    y[2 * i + 1] = h >> 8;
#define CVT8_HAVE 1
#else
#define CVT8_BODY(PTX) (void)x, (void)y;
#define CVT8_HAVE 0
#endif
#define CVT8_KERNEL(NAME, PTX)                                                          \
    extern "C" __global__ void __launch_bounds__(GPU_BLOCK_THREADS) NAME(CVT_PARAMS) { \
        mark(status, CVT8_HAVE);                                                        \
        int i = blockIdx.x * GPU_BLOCK_THREADS + threadIdx.x;                           \
        if (2 * i >= n) return;                                                         \
        CVT8_BODY(PTX)                                                                  \
    }
CVT8_KERNEL(gpu_k_cvt_e4m3, "cvt.rn.satfinite.e4m3x2.f32")
CVT8_KERNEL(gpu_k_cvt_e5m2, "cvt.rn.satfinite.e5m2x2.f32")

// ---- host side ------------------------------------------------------------

static int is_cvt(int id) { return id >= GPU_CVT_E4M3 && id <= GPU_CVT_BF16_RP; }
static int is_wgmma(int id) {
    return (id >= GPU_WGMMA_F16 && id <= GPU_WGMMA_E5M2) || (id >= GPU_WGMMA_F16_F16 && id <= GPU_WGMMA_E5M2_F16) ||
           id == GPU_WGMMA_TF32;
}

static const void *kernel_of(int id) {
    switch (id) {
    case GPU_MMA_F16: return (const void *)gpu_k_mma_f16;
    case GPU_MMA_BF16: return (const void *)gpu_k_mma_bf16;
    case GPU_MMA_TF32: return (const void *)gpu_k_mma_tf32;
    case GPU_MMA_S8: return (const void *)gpu_k_mma_s8;
    case GPU_MMA_S8_SAT: return (const void *)gpu_k_mma_s8_sat;
    case GPU_MMA_U8S8: return (const void *)gpu_k_mma_u8s8;
    case GPU_MMA_U8U8_SAT: return (const void *)gpu_k_mma_u8u8_sat;
    case GPU_MMA_E4M3: return (const void *)gpu_k_mma_e4m3;
    case GPU_MMA_E5M2: return (const void *)gpu_k_mma_e5m2;
    case GPU_MMA_F16_F16: return (const void *)gpu_k_mma_f16_f16;
    case GPU_MMA_E4M3_F16: return (const void *)gpu_k_mma_e4m3_f16;
    case GPU_MMA_E5M2_F16: return (const void *)gpu_k_mma_e5m2_f16;
    case GPU_WGMMA_F16: return (const void *)gpu_k_wgmma_f16;
    case GPU_WGMMA_BF16: return (const void *)gpu_k_wgmma_bf16;
    case GPU_WGMMA_E4M3: return (const void *)gpu_k_wgmma_e4m3;
    case GPU_WGMMA_E5M2: return (const void *)gpu_k_wgmma_e5m2;
    case GPU_WGMMA_F16_F16: return (const void *)gpu_k_wgmma_f16_f16;
    case GPU_WGMMA_E4M3_F16: return (const void *)gpu_k_wgmma_e4m3_f16;
    case GPU_WGMMA_E5M2_F16: return (const void *)gpu_k_wgmma_e5m2_f16;
    case GPU_WGMMA_TF32: return (const void *)gpu_k_wgmma_tf32;
    case GPU_CVT_E4M3: return (const void *)gpu_k_cvt_e4m3;
    case GPU_CVT_E5M2: return (const void *)gpu_k_cvt_e5m2;
    case GPU_CVT_F16_RN: return (const void *)gpu_k_cvt_f16_rn;
    case GPU_CVT_F16_RZ: return (const void *)gpu_k_cvt_f16_rz;
    case GPU_CVT_F16_RM: return (const void *)gpu_k_cvt_f16_rm;
    case GPU_CVT_F16_RP: return (const void *)gpu_k_cvt_f16_rp;
    case GPU_CVT_BF16_RN: return (const void *)gpu_k_cvt_bf16_rn;
    case GPU_CVT_BF16_RZ: return (const void *)gpu_k_cvt_bf16_rz;
    case GPU_CVT_BF16_RM: return (const void *)gpu_k_cvt_bf16_rm;
    case GPU_CVT_BF16_RP: return (const void *)gpu_k_cvt_bf16_rp;
    default: return NULL;
    }
}

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            snprintf(err, errlen, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

extern "C" int gpu_rt_open(gpu_rt_device *dev, char *err, size_t errlen) {
    int n = 0;
    cudaDeviceProp p;
    memset(dev, 0, sizeof *dev);
    {
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
            int rt = 0;
            cudaRuntimeGetVersion(&rt);
            snprintf(err, errlen, "%s (%s; the program carries CUDA runtime %d.%d)",
                     e == cudaErrorNoDevice ? "no CUDA-capable device is visible"
                                            : "no NVIDIA driver could be loaded, or it is older than the runtime",
                     cudaGetErrorName(e), rt / 1000, (rt % 1000) / 10);
            return -1;
        }
        CK(e);
    }
    if (n < 1) {
        snprintf(err, errlen, "cudaGetDeviceCount found no device");
        return -1;
    }
    CK(cudaSetDevice(0));
    CK(cudaGetDeviceProperties(&p, 0));
    dev->index = 0;
    snprintf(dev->name, sizeof dev->name, "%s", p.name);
    dev->cc = p.major * 10 + p.minor;
    dev->sm_count = p.multiProcessorCount;
    dev->global_mem = p.totalGlobalMem;
    for (int i = 0; i < 16; i++)
        snprintf(dev->uuid + 2 * i, sizeof dev->uuid - 2 * i, "%02x", (unsigned char)p.uuid.bytes[i]);
    CK(cudaDriverGetVersion(&dev->driver_version));
    CK(cudaRuntimeGetVersion(&dev->runtime_version));
    return 0;
fail:
    return -1;
}

extern "C" int gpu_rt_runtime_version(void) {
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) return 0;
    return v;
}

extern "C" int gpu_rt_kernel_image(int id, int *binary_version, int *ptx_version, char *err, size_t errlen) {
    cudaFuncAttributes at;
    const void *f = kernel_of(id);
    if (!f) {
        snprintf(err, errlen, "no kernel for kind %d", id);
        return -1;
    }
    CK(cudaFuncGetAttributes(&at, f));
    *binary_version = at.binaryVersion;
    *ptx_version = at.ptxVersion;
    return 0;
fail:
    cudaGetLastError(); // clear the sticky-free error so later calls start clean
    return -1;
}

extern "C" int gpu_rt_run_mma(int id, int ntiles, int steps, const uint32_t *a, size_t a_words,
                              const uint32_t *b, size_t b_words, const uint32_t *c, uint32_t *d,
                              size_t cd_words, int *arch, char *err, size_t errlen) {
    uint32_t *da = NULL, *db = NULL, *dc = NULL, *dd = NULL;
    int *dst = NULL, rc = -1, blocks;
    const void *f = kernel_of(id);
    const int wg = is_wgmma(id);
    const size_t na = (size_t)ntiles * steps * a_words, nb = (size_t)ntiles * steps * b_words;
    const size_t ncd = (size_t)ntiles * cd_words;
    if (!f || is_cvt(id) || ntiles < 1 || steps < 1 || steps > GPU_MAX_STEPS) {
        snprintf(err, errlen, "bad MMA launch (kind %d, %d tiles, %d steps)", id, ntiles, steps);
        return -1;
    }
    *arch = -1;
    CK(cudaMalloc((void **)&da, na * 4));
    CK(cudaMalloc((void **)&db, nb * 4));
    CK(cudaMalloc((void **)&dc, ncd * 4));
    CK(cudaMalloc((void **)&dd, ncd * 4));
    CK(cudaMalloc((void **)&dst, sizeof(int)));
    CK(cudaMemcpy(da, a, na * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b, nb * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dc, c, ncd * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dd, 0xA5, ncd * 4)); // poison: every word must be rewritten
    CK(cudaMemset(dst, 0, sizeof(int)));
    blocks = wg ? ntiles : (ntiles + GPU_MMA_TILES_PER_BLOCK - 1) / GPU_MMA_TILES_PER_BLOCK;
    {
        void *args[] = {&da, &db, &dc, &dd, &ntiles, &steps, &dst};
        CK(cudaLaunchKernel(f, dim3(blocks), dim3(GPU_BLOCK_THREADS), args, 0, 0));
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(d, dd, ncd * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(arch, dst, sizeof(int), cudaMemcpyDeviceToHost));
    rc = 0;
fail:
    cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd), cudaFree(dst);
    return rc;
}

extern "C" int gpu_rt_run_cvt(int id, size_t n, const uint32_t *x, uint32_t *y, int *arch, char *err,
                              size_t errlen) {
    uint32_t *dx = NULL, *dy = NULL;
    int *dst = NULL, rc = -1;
    const void *f = kernel_of(id);
    size_t np = (n + 1) & ~(size_t)1; // even, for the x2 conversions
    if (!f || !is_cvt(id) || n < 1 || n > (size_t)1 << 30) {
        snprintf(err, errlen, "bad conversion launch (kind %d, %zu elements)", id, n);
        return -1;
    }
    *arch = -1;
    CK(cudaMalloc((void **)&dx, np * 4));
    CK(cudaMalloc((void **)&dy, np * 4));
    CK(cudaMalloc((void **)&dst, sizeof(int)));
    CK(cudaMemset(dx, 0, np * 4));
    CK(cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dy, 0xA5, np * 4));
    CK(cudaMemset(dst, 0, sizeof(int)));
    {
        int ni = (int)np;
        void *args[] = {&dx, &dy, &ni, &dst};
        CK(cudaLaunchKernel(f, dim3((unsigned)((np + GPU_BLOCK_THREADS - 1) / GPU_BLOCK_THREADS)),
                            dim3(GPU_BLOCK_THREADS), args, 0, 0));
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(y, dy, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(arch, dst, sizeof(int), cudaMemcpyDeviceToHost));
    rc = 0;
fail:
    cudaFree(dx), cudaFree(dy), cudaFree(dst);
    return rc;
}
