/* SPDX-License-Identifier: MIT */
/* bench.h: the one timing helper of the benchmark programs (bench/b_*.c).
 *
 * A measured row is always timed against its baseline in the same process,
 * interleaved: pairs A B, B A, A B, ... (the order rotates), each run timed
 * in wall-clock time and in CPU time (the calling thread's by default; the
 * whole process's for multi-threaded work such as BLAS). Each pair gives a
 * ratio row / baseline; the report is the minimum and the median of each
 * side and of the ratios taken pair by pair, so a machine whose speed
 * drifts from one minute to the next moves both sides of a pair together.
 * Thread CPU time is the figure to read on a shared machine: it does not
 * count the time another process held the core. */
#ifndef FPEMU_BENCH_H
#define FPEMU_BENCH_H

#include <stdint.h>

/* Clocks, in seconds. */
double bench_wall(void);       /* CLOCK_MONOTONIC */
double bench_thread_cpu(void); /* CLOCK_THREAD_CPUTIME_ID */
double bench_process_cpu(void); /* CLOCK_PROCESS_CPUTIME_ID */

/* One timed unit of work: run it once (its caller divides by the units it
 * does, e.g. elements or steps). */
typedef void (*bench_fn)(void *arg);

enum { BENCH_THREAD = 0, BENCH_PROCESS = 1 }; /* which CPU clock */
enum { BENCH_MAXPAIRS = 64 };

typedef struct { double min, med; } bench_stat;
typedef struct {
    int pairs;
    /* per unit (time of one call / units), seconds */
    bench_stat base_wall, base_cpu, row_wall, row_cpu;
    /* row / baseline, pair by pair */
    bench_stat ratio_wall, ratio_cpu;
} bench_cmp;

/* Time the row against its baseline in `pairs` interleaved pairs (at most
 * BENCH_MAXPAIRS), after one untimed warm-up call of each. base_units and
 * row_units divide each side's time (the elements, steps or GEMMs one call
 * does: the stats are then seconds per element). clock: BENCH_THREAD or
 * BENCH_PROCESS. */
void bench_compare(bench_fn base, void *base_arg, double base_units, bench_fn row, void *row_arg, double row_units,
                   int pairs, int clock, bench_cmp *out);

/* Median and minimum of v[0..n) (v is reordered). */
bench_stat bench_stats(double *v, int n);

/* Where the benchmark ran: the CPU model, core count, load average and
 * the date, as one comment line (prefix, e.g. "# "). */
void bench_print_machine(const char *prefix);

/* Keep a value alive (the compiler cannot drop the work that made it). */
extern volatile uint64_t bench_sink;

#endif
