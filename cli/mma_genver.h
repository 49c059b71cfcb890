/* SPDX-License-Identifier: MIT */
/* mma_genver.h: `fpemu mma --gen` (test vectors for a matrix unit: random,
 * adversarial and special-case lines with the model's D appended) and
 * `fpemu mma --verify` (a device's completed lines checked against the
 * model), in TestFloat's gen/ver discipline; docs/tensor-cores.md. */
#ifndef FPEMU_CLI_MMA_GENVER_H
#define FPEMU_CLI_MMA_GENVER_H
#include "mma.h"

enum { MMA_GV_NONE = 0, MMA_GV_GEN, MMA_GV_VERIFY };

typedef struct mma_genver_opts {
    int mode;                 /* MMA_GV_* */
    unsigned long long n;     /* --gen N: vector lines */
    unsigned long long seed;  /* --seed S (default 1) */
    unsigned long long k;     /* --k K: products per line (0: the model's block size, or 16) */
    long max_print;           /* --max-print K (default 20) */
    int exact_nan;            /* --exact-nan */
    char cmdline[1024];       /* the command as given, for the generated file's header */
} mma_genver_opts;

/* Take the gen/verify options (--gen N, --seed S, --k K, --verify,
 * --max-print K, --exact-nan) out of argv, compacting it (*argc shrinks) so
 * that the ordinary option parser sees the rest. 0, or 2 after a message. */
int mma_genver_take(const char *sub, int *argc, char **argv, mma_genver_opts *g);

/* Run --gen or --verify on a built model (int_mode: s8/u8 inputs; a_name,
 * b_name: the input format names as given; promote: --promote N, as `fpemu
 * mma` applies it). Returns the exit status: 0; 1 (verify: mismatches); 2
 * after a message (bad input). */
int mma_genver_run(const char *sub, const mma_genver_opts *g, const fpemu_mma_model *m, int int_mode,
                   const char *a_name, const char *b_name, unsigned long long promote);

/* D of one `fpemu mma` line, as `fpemu mma` computes it: the model's dot
 * product of a and b (k products) with c, or, with promote N, the sum of
 * N-product dot products added in fd (DeepGEMM's two-level accumulation);
 * int_mode: s8/u8 products through ia, ib (k entries of scratch). The one
 * definition that `fpemu mma`, --gen and --verify share. */
uint64_t mma_line_d(const fpemu_mma_model *m, int int_mode, unsigned long long promote, const uint64_t *a,
                    const uint64_t *b, int32_t *ia, int32_t *ib, size_t k, uint64_t c);

/* The vector classes, in the order of the generator's cycle table
 * (NULL-terminated; exposed for the docs and tests). */
extern const char *const mma_genver_float_cycle[];
extern const char *const mma_genver_int_cycle[];
#endif
