/* SPDX-License-Identifier: MIT */
/* fake.c: a stand-in "device" that answers through the same image
 * interface as the GPU, computing with an emu reference. It exercises the
 * whole harness (packing, unpacking, comparison, report) on machines
 * without a GPU, and with a planted difference it proves the harness finds
 * and reports a wrong bit. It is never a GPU result: reports name it
 * "FAKE". */
#include <stdlib.h>
#include <string.h>
#include "harness.h"

static int fake_mma(void *user, const gpu_kind *k, int ntiles, int steps, const uint32_t *a, const uint32_t *b,
                    const uint32_t *c, uint32_t *d, char *err, size_t errlen) {
    gpu_fake *fk = user;
    gpu_reference ref;
    const int M = k->m, N = k->n, kk = k->k * steps;
    if (gpu_reference_init(&ref, k, fk->preset, fk->cc, err, errlen)) return -1;
    uint64_t *A = malloc(sizeof *A * (size_t)M * kk), *B = malloc(sizeof *B * (size_t)kk * N);
    uint64_t *C = malloc(sizeof *C * (size_t)M * N), *D = malloc(sizeof *D * (size_t)M * N);
    uint64_t va[GPU_MAX_STEPS * 32], vb[GPU_MAX_STEPS * 32];
    if (!A || !B || !C || !D) {
        free(A), free(B), free(C), free(D);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int t = 0; t < ntiles; t++) {
        gpu_unpack_a(k, steps, a + (size_t)t * steps * gpu_a_words(k), A);
        gpu_unpack_b(k, steps, b + (size_t)t * steps * gpu_b_words(k), B);
        gpu_unpack_cd(k, c + (size_t)t * gpu_cd_words(k), C);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                for (int x = 0; x < kk; x++) va[x] = A[(size_t)i * kk + x], vb[x] = B[(size_t)x * N + j];
                uint64_t r = gpu_reference_dot(&ref, va, vb, kk, C[i * N + j]);
                if (fk->plant_kind == (int)k->id && fk->plant_match && fk->plant_match(k, va, vb, kk, C[i * N + j]))
                    r ^= 1;
                D[i * N + j] = r;
            }
        gpu_pack_cd(k, D, d + (size_t)t * gpu_cd_words(k));
    }
    free(A), free(B), free(C), free(D);
    return 0;
}

static int fake_cvt(void *user, const gpu_kind *k, size_t n, const uint32_t *x, uint32_t *y, char *err,
                    size_t errlen) {
    gpu_fake *fk = user;
    gpu_reference ref;
    if (gpu_reference_init(&ref, k, fk->preset, fk->cc, err, errlen)) return -1;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = gpu_reference_cvt(&ref, x[i]);
        uint64_t xi = x[i];
        if (fk->plant_kind == (int)k->id && fk->plant_match && fk->plant_match(k, &xi, NULL, 1, 0)) v ^= 1;
        y[i] = (uint32_t)v;
    }
    return 0;
}

void gpu_fake_backend(gpu_backend *be, gpu_fake *fake) {
    be->name = "fake";
    be->user = fake;
    be->run_mma = fake_mma;
    be->run_cvt = fake_cvt;
}
