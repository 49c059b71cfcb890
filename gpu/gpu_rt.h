/* SPDX-License-Identifier: MIT */
/* gpu_rt.h: the CUDA side of bin/fpemu-gpu as plain C functions
 * (implemented in gpu/kernels.cu, the only file nvcc compiles). The host
 * harness hands over operand images already packed in the hardware's
 * layout (gpu/host/layout.h) and gets result images back; nothing here
 * knows about formats or models. Every function returns 0 on success, or -1
 * with a message in err. */
#ifndef FPEMU_GPU_RT_H
#define FPEMU_GPU_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpu_rt_device {
    int index;
    char name[256];
    int cc;               /* compute capability x10 (90 for 9.0) */
    int driver_version;   /* cudaDriverGetVersion, e.g. 13000 */
    int runtime_version;  /* cudaRuntimeGetVersion of the linked runtime */
    int sm_count;
    size_t global_mem;
    char uuid[64];
} gpu_rt_device;

/* Open device 0 (or $CUDA_VISIBLE_DEVICES' first). -1 when there is no
 * usable device or driver; err then says why (the CUDA error string). */
int gpu_rt_open(gpu_rt_device *dev, char *err, size_t errlen);

/* cudaRuntimeGetVersion of the linked runtime (works without a driver). */
int gpu_rt_runtime_version(void);

/* The cubin the runtime picked for a kind's kernel on this device
 * (cudaFuncAttributes: binaryVersion, ptxVersion, x10). -1 if the kernel
 * has no image for the device. */
int gpu_rt_kernel_image(int kind_id, int *binary_version, int *ptx_version, char *err, size_t errlen);

/* Run ntiles tiles of an MMA kind, each chaining `steps` instructions
 * (D = A_s B_s + D for s = 0..steps-1, starting from C). a holds
 * ntiles*steps A images, b ntiles*steps B images, c and d ntiles C/D
 * images (sizes in words per image: a_words, b_words, cd_words). *arch
 * receives the __CUDA_ARCH__ the kernel body was compiled for (-1 when the
 * kernel has no body for that target: nothing was computed). */
int gpu_rt_run_mma(int kind_id, int ntiles, int steps,
                   const uint32_t *a, size_t a_words, const uint32_t *b, size_t b_words,
                   const uint32_t *c, uint32_t *d, size_t cd_words, int *arch,
                   char *err, size_t errlen);

/* Convert n f32 bit patterns x to codes y (one per word, low bits). */
int gpu_rt_run_cvt(int kind_id, size_t n, const uint32_t *x, uint32_t *y, int *arch,
                   char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
