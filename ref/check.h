/* SPDX-License-Identifier: MIT */
/* check.h: the differential checker behind `fpemu check`. It enumerates
 * cases (exhaustive, structured TestFloat-style grids, seeded random), runs
 * a device under test (emu/ by default) and the MPFR reference (ref.h) on
 * each, in threads, optionally on one shard of the case space, and keeps
 * the first mismatches as replayable vector lines.
 *
 * Case space: a plan is a list of jobs (one per format x operation x
 * rounding mode); case g of the plan is case g - start(job) of its job.
 * Every case is a pure function of (plan, job, index): no state is carried
 * from case to case, so shards and threads never change which cases run or
 * what they compute. Outside sr, a thread runs up to 512 cases of one job
 * at a time: their operands, the DUT on each, the reference on all of them
 * (ref_op_n), then the comparison; the cases and results are the same.
 * Library code: never prints, never exits. */
#ifndef FPEMU_CHECK_H
#define FPEMU_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include "fpemu.h"
#include "ref.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum check_kind { CHECK_EXHAUSTIVE = 0, CHECK_STRUCTURED, CHECK_RANDOM } check_kind;

/* sr: percent of cases whose draw straddles a decision of the reference */
#define CHECK_SR_EDGE 40

/* Exhaustive jobs larger than this are refused (2^36 cases). */
#define CHECK_EXHAUSTIVE_MAX (UINT64_C(1) << 36)
/* ... and jobs from the group names (arith, conv, all) larger than this are
 * left out of an exhaustive plan, with a note. */
#define CHECK_EXHAUSTIVE_GROUP_MAX (UINT64_C(1) << 24)

typedef struct check_job {
    const fpemu_format *fmt; /* result format */
    const fpemu_format *src; /* operand format (== fmt except conversions) */
    ref_opcode op;
    fpemu_round round;
    int arity;
    int from_f32;            /* a conversion from f32: the emu DUT calls fpemu_from_float(_sr) */
    char name[272];          /* TestFloat op name: e4m3_add, f32_to_e4m3, f16_mulAdd (two format names) */
    ref_format rfmt, rsrc;   /* the reference's reading of fmt and src */
    uint64_t count;          /* cases */
    uint64_t start;          /* index of its first case in the plan */
    uint64_t salt;           /* per-job random stream */
    /* structured: all tuples over full[0..nfull) first, then nhash tuples
     * drawn from set[0..nset) */
    const uint64_t *full, *set;
    size_t nfull, nset;
    uint64_t nfull_tuples, nhash;
} check_job;

typedef struct check_set check_set; /* shared operand sets (private) */

typedef struct check_plan {
    check_kind kind;
    uint64_t random_n;   /* CHECK_RANDOM: cases per job */
    uint64_t seed;
    check_job *jobs;
    int njobs;
    uint64_t total;
    check_set *sets;
    int nsets;
} check_plan;

typedef struct check_spec {
    const char *formats; /* comma list: names, custom specs, all, small (<= 8 bits), wide (> 8 bits) */
    const char *ops;     /* comma list: add,sub,mul,div,sqrt,fma|mulAdd, to_FMT, from_FMT, convert
                          * (= to_f32,from_f32), arith, conv, all */
    const char *modes;   /* comma list: rne,rna,rtz,rup,rdn,rto,sr (TestFloat spellings too), all */
    check_kind kind;
    uint64_t random_n;
    uint64_t seed;
} check_spec;

/* Build a plan. Returns 0, or -1 with a message naming the bad item and
 * what was expected in err (bad usage). note (may be NULL) receives a
 * remark about jobs left out of an exhaustive plan, or "". */
int check_plan_build(check_plan *pl, const check_spec *spec, char *err, size_t errlen, char *note, size_t notelen);
void check_plan_free(check_plan *pl);

/* The operands of case i of job j (i < j->count). */
void check_case(const check_plan *pl, const check_job *j, uint64_t i, uint64_t ops[3]);

/* Device under test: evaluate job j on ops (j->arity operands: read no
 * further, the next case's may follow) under ctx (ctx->flags is 0 on
 * entry; the DUT leaves its flags there). */
typedef uint64_t (*check_dut_fn)(const check_job *j, const uint64_t *ops, fpemu_ctx *ctx, void *arg);
uint64_t check_dut_emu(const check_job *j, const uint64_t *ops, fpemu_ctx *ctx, void *arg);
/* The same in sr with the caller's draw, through fpemu_add_sr and friends. */
uint64_t check_dut_emu_sr(const check_job *j, const uint64_t *ops, uint64_t draw, fpemu_ctx *ctx);

typedef struct check_mismatch {
    uint64_t index;      /* plan-wide case index */
    int job;
    uint64_t ops[3];
    uint64_t dut, ref;
    unsigned dut_flags, ref_flags;
    /* sr: the case's draw and R, and the draws each side took (0 or 1);
     * how the DUT got the draw: sr_stream 1, a one-draw caller stream, 2,
     * the per-call API (fpemu_add_sr ...: dut_draws is the reference's when
     * the context's counter stayed put, else -1), or 0, the stream of seed
     * at counter (fpemu_random64(seed, counter) == draw) */
    uint64_t draw, seed, counter;
    int sr_bits, sr_stream, dut_draws, ref_draws;
} check_mismatch;

typedef struct check_progress {
    uint64_t done, total, mismatches;
    double elapsed;
} check_progress;

typedef struct check_config {
    int sat, ftz, daz, tininess_before;
    /* sr: R for every case (1..64), or 0: case i takes R = 64, 1, 8, 13,
     * 23 in turn. Each sr case has its own 64-bit draw, a pure function of
     * the case like its operands: on CHECK_SR_EDGE percent of the cases the
     * draw whose top R bits sit just below or at the threshold of one of
     * the reference's decisions (so an off-by-one in the comparison
     * shows), else uniform. The DUT (emu) gets it as the seed's draw at
     * fpemu_random64_counter(seed, draw) on even cases (the fast paths)
     * and as a one-draw caller stream on odd ones; the draws it takes must
     * equal the reference's (one iff the exact result is finite and
     * nonzero). */
    int sr_bits;
    uint64_t shard_i, shard_n;  /* part shard_i (0-based) of shard_n; 0/0 or 0/1: all */
    int threads;                /* <= 0: number of online CPUs */
    size_t keep;                /* mismatches kept (the ones with the smallest indices) */
    check_dut_fn dut;           /* NULL: emu */
    void *dut_arg;
    /* called from the calling thread every progress_interval seconds
     * (<= 0: never) and once at the end */
    void (*progress)(const check_progress *p, void *arg);
    void *progress_arg;
    double progress_interval;
} check_config;

typedef struct check_result {
    uint64_t cases, mismatches;
    uint64_t first, last;  /* the shard's case range [first, last) */
    check_mismatch *kept;  /* sorted by index; free with check_result_free */
    uint64_t *job_mismatches; /* per job (njobs entries) */
    size_t nkept;
    double seconds;
    int threads;
} check_result;

/* Run the plan (or one shard of it). Returns 0 (whatever the mismatches),
 * or -1 with a message in err (threads or memory could not be had). */
int check_run(const check_plan *pl, const check_config *cfg, check_result *res, char *err, size_t errlen);
void check_result_free(check_result *res);

/* The replayable line of a mismatch, e.g.
 *   e4m3_add rtz sat: 3C 41 => emu 44 01 ref 45 01
 *   e4m3_mul sr R=8 draw=7F00000000000000: 3C 41 => emu 44 01 ref 45 01
 * operands, then the DUT's and the reference's result and flags, in the hex
 * widths of the vector format; in sr the case's R and draw, and
 * " draws emu D ref E" after the flags when the draws taken differ.
 * Returns the length (snprintf-style). */
int check_format_line(char *buf, size_t n, const check_plan *pl, const check_config *cfg, const check_mismatch *m);

/* Options part of a line: "rtz sat ftz daz tininess=before" (mode first). */
int check_format_options(char *buf, size_t n, fpemu_round round, const check_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
