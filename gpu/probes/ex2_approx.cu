// SPDX-License-Identifier: MIT
// ex2_approx.cu: records what the special function unit's ex2.approx.ftz.f32
// (PTX ISA: "ex2.approx.ftz.f32 d, a", 2^a with an implementation-defined
// error) returns, so that numerics=torch-cuda could replace its
// round-to-nearest model of it inside CUDA's expf (docs/replay.md; the H200's
// recording of 2026-11-27 is tests/data/ex2-approx/, and the model fitted to
// it tc_ex2_approx). Run by gpu/session.sh on a lent GPU; not built by the
// Makefile.
//
//   nvcc -O2 -arch=sm_90 gpu/probes/ex2_approx.cu -o ex2_approx
//   ./ex2_approx DIR [--fake]
//
// Writes into DIR (little-endian raw arrays; gpu/probes/pack_ex2.py packs
// them into one compressed .npz):
//   grid_out.bin    uint32 x (2^24 + 1): the result bits for x = (i - 2^23) * 2^-23,
//                   every multiple of 2^-23 in [-1, 1] (expf's reduced argument
//                   lies in [-1, 1])
//   sample_in.bin   uint32 x 2^18: inputs: half of them grid points plus an offset
//                   below 2^-23 (do the bits under the grid matter?), half with a
//                   random sign and exponent in [-40, 0] (the small arguments)
//   sample_out.bin  uint32 x 2^18: their results
//   info.txt        the device, the driver and runtime versions, the seconds taken
// --fake computes the results on the host as 2^x rounded to nearest (the
// earlier model) instead of on a GPU, to test the pipeline without one;
// pack_ex2.py says how many results equal that model.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <ctime>
#include <cuda_runtime.h>

static const long GRID_N = (1L << 24) + 1;
static const long SAMPLE_N = 1L << 18;

__device__ __forceinline__ float ex2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__global__ void grid_kernel(uint32_t *out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = (float)(i - (1L << 23)) * 0x1p-23f; // exact: |i - 2^23| <= 2^23
    out[i] = __float_as_uint(ex2_approx(x));
}

__global__ void list_kernel(const uint32_t *in, uint32_t *out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = __float_as_uint(ex2_approx(__uint_as_float(in[i])));
}

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

// the earlier model: flush a subnormal input to zero, then 2^x rounded to nearest
static uint32_t model(uint32_t xb) {
    float x = bitsf(xb);
    if (fabsf(x) < 0x1p-126f) x = 0;
    return fbits((float)exp2((double)x));
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) { // splitmix64
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int write_all(const char *dir, const char *name, const void *p, size_t bytes) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, bytes, f) != bytes || fclose(f)) {
        fprintf(stderr, "ex2_approx: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

#define CK(call)                                                                                      \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            fprintf(stderr, "ex2_approx: %s: %s\n", #call, cudaGetErrorString(e_));                   \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--fake"))) {
        fprintf(stderr, "usage: ex2_approx DIR [--fake]\n");
        return 2;
    }
    const char *dir = argv[1];
    int fake = argc == 3;
    time_t t0 = time(NULL);
    uint32_t *grid = (uint32_t *)malloc(GRID_N * 4), *sin_ = (uint32_t *)malloc(SAMPLE_N * 4),
             *sout = (uint32_t *)malloc(SAMPLE_N * 4);
    if (!grid || !sin_ || !sout) { fprintf(stderr, "ex2_approx: out of memory\n"); return 1; }
    for (long i = 0; i < SAMPLE_N; i++) {
        uint64_t r = rng();
        if (i % 2 == 0) { // a grid point and an offset of 1..2^20 units of 2^-43 below the next one
            long g = (long)(r % (1u << 24)) - (1L << 23);
            float x = (float)g * 0x1p-23f;
            double off = (double)(1 + ((r >> 24) & 0xFFFFF)) * 0x1p-43;
            float y = (float)((double)x + (g < 0 ? -off : off));
            sin_[i] = fbits(y);
        } else { // random sign, exponent in [-40, 0], random significand
            int e = (int)((r >> 32) % 41) - 40;
            uint32_t s = (uint32_t)(r >> 8) & 0x7FFFFFu;
            sin_[i] = ((uint32_t)(r & 1) << 31) | ((uint32_t)(e + 127) << 23) | s;
        }
    }
    char dev[512] = "host model (--fake): 2^x rounded to nearest";
    if (fake) {
        for (long i = 0; i < GRID_N; i++) grid[i] = model(fbits((float)(i - (1L << 23)) * 0x1p-23f));
        for (long i = 0; i < SAMPLE_N; i++) sout[i] = model(sin_[i]);
    } else {
        cudaDeviceProp p;
        int drv = 0, rt = 0;
        CK(cudaGetDeviceProperties(&p, 0));
        CK(cudaDriverGetVersion(&drv));
        CK(cudaRuntimeGetVersion(&rt));
        snprintf(dev, sizeof dev, "%s, sm_%d%d, CUDA driver %d, runtime %d", p.name, p.major, p.minor, drv, rt);
        uint32_t *dg, *di, *dout;
        CK(cudaMalloc(&dg, GRID_N * 4));
        CK(cudaMalloc(&di, SAMPLE_N * 4));
        CK(cudaMalloc(&dout, SAMPLE_N * 4));
        grid_kernel<<<(unsigned)((GRID_N + 255) / 256), 256>>>(dg, GRID_N);
        CK(cudaGetLastError());
        CK(cudaMemcpy(di, sin_, SAMPLE_N * 4, cudaMemcpyHostToDevice));
        list_kernel<<<(unsigned)((SAMPLE_N + 255) / 256), 256>>>(di, dout, SAMPLE_N);
        CK(cudaGetLastError());
        CK(cudaMemcpy(grid, dg, GRID_N * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(sout, dout, SAMPLE_N * 4, cudaMemcpyDeviceToHost));
        CK(cudaFree(dg));
        CK(cudaFree(di));
        CK(cudaFree(dout));
    }
    if (write_all(dir, "grid_out.bin", grid, GRID_N * 4) || write_all(dir, "sample_in.bin", sin_, SAMPLE_N * 4) ||
        write_all(dir, "sample_out.bin", sout, SAMPLE_N * 4))
        return 1;
    char info[1024];
    /* how many equal the earlier model: pack_ex2.py counts them */
    int n = snprintf(info, sizeof info, "device: %s\ngrid: %ld points, sample: %ld inputs\nseconds: %ld\n", dev, GRID_N,
                     SAMPLE_N, (long)(time(NULL) - t0));
    if (write_all(dir, "info.txt", info, (size_t)n)) return 1;
    fputs(info, stdout);
    free(grid);
    free(sin_);
    free(sout);
    return 0;
}
