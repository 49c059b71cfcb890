/* SPDX-License-Identifier: MIT */
/* gen.h: the inputs the validation harness feeds every kind: random tiles
 * from several distributions (deterministic in the seed), the probe
 * vectors of docs/tensor-cores.md (Fasi et al. 2021, Khattak & Mikaitis) as
 * fixed cases, and adversarial cases (special values, overflow, subnormals,
 * zero signs, integer wrap). */
#ifndef FPEMU_GPU_GEN_H
#define FPEMU_GPU_GEN_H

#include <stddef.h>
#include <stdint.h>
#include "fpemu.h"
#include "layout.h"

typedef enum gpu_dist {
    GPU_DIST_UNIFORM = 0, /* uniform bit patterns (finite, specials 1/256) */
    GPU_DIST_NORMAL,      /* N(0,1) values rounded to the format */
    GPU_DIST_WIDE,        /* exponents spread over the whole range, c near a product */
    GPU_DIST_CANCEL,      /* MMA: products cancelling in pairs; cvt: ties and their neighbours */
    GPU_DIST_COUNT
} gpu_dist;
const char *gpu_dist_name(const gpu_kind *k, int dist);

/* Counter-based generator (SplitMix64 of seed, stream and counter): the
 * same (seed, stream) always gives the same sequence. */
typedef struct gpu_rng { uint64_t seed, stream, ctr; } gpu_rng;
void gpu_rng_init(gpu_rng *r, uint64_t seed, uint64_t stream);
uint64_t gpu_rng_next(gpu_rng *r);
uint64_t gpu_rng_below(gpu_rng *r, uint64_t n); /* uniform in [0, n), n >= 1 */

/* The operand formats of a kind. Float kinds: a, b, c, d are registry
 * formats. Integer kinds: a = b = c = d = NULL and is_int = 1. */
typedef struct gpu_fmts {
    const fpemu_format *a, *b, *c, *d;
    int is_int, a_signed, b_signed;
} gpu_fmts;
int gpu_kind_formats(const gpu_kind *k, gpu_fmts *f, char *err, size_t errlen);

/* One random tile: A is M x (steps*K), B is (steps*K) x N, C is M x N
 * (row-major codes). tile numbers the tile within (seed, kind, dist). */
void gpu_gen_tile(const gpu_kind *k, const gpu_fmts *f, int dist, uint64_t seed, uint64_t tile,
                  int steps, uint64_t *A, uint64_t *B, uint64_t *C);

/* A designed dot product: c + sum_{i<k} a[i]*b[i], k <= the kind's K. */
#define GPU_CASE_KMAX 32
typedef struct gpu_case {
    int k;
    uint64_t a[GPU_CASE_KMAX], b[GPU_CASE_KMAX], c;
    char what[48];
} gpu_case;
enum { GPU_CASES_PROBE = 0, GPU_CASES_ADVERSARIAL = 1 };
/* Fill out with up to max cases of the set; returns how many. Probe
 * vectors that a format cannot express exactly (even scaled by 2^8 or
 * 2^16) are left out. */
int gpu_designed_cases(const gpu_kind *k, const gpu_fmts *f, int set, gpu_case *out, int max);
/* Put cases[0..n) (n <= N) into one steps=1 tile: case r in row r of A and
 * column r of B, its c at C[r][r]; everything else +0. */
void gpu_place_cases(const gpu_kind *k, const gpu_case *cases, int n, uint64_t *A, uint64_t *B,
                     uint64_t *C);

/* Conversion inputs: n f32 bit patterns of a distribution, and the
 * adversarial set (returns how many, at most max). */
void gpu_gen_cvt(const gpu_kind *k, const gpu_fmts *f, int dist, uint64_t seed, size_t n, uint32_t *x);
int gpu_cvt_adversarial(const gpu_kind *k, const gpu_fmts *f, uint32_t *x, int max);

#endif
