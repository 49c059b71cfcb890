/* SPDX-License-Identifier: MIT */
/* bench.c: the timing helper of bench.h. */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t bench_sink;

static double clk(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
double bench_wall(void) { return clk(CLOCK_MONOTONIC); }
double bench_thread_cpu(void) { return clk(CLOCK_THREAD_CPUTIME_ID); }
double bench_process_cpu(void) { return clk(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_stat bench_stats(double *v, int n) {
    bench_stat s = {0, 0};
    if (n <= 0) return s;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    s.min = v[0];
    s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

static void timed(bench_fn fn, void *arg, int clock, double *wall, double *cpu) {
    double (*c)(void) = clock == BENCH_PROCESS ? bench_process_cpu : bench_thread_cpu;
    double w0 = bench_wall(), c0 = c();
    fn(arg);
    *cpu = c() - c0;
    *wall = bench_wall() - w0;
}

void bench_compare(bench_fn base, void *base_arg, double base_units, bench_fn row, void *row_arg, double row_units,
                   int pairs, int clock, bench_cmp *out) {
    double bw[BENCH_MAXPAIRS], bc[BENCH_MAXPAIRS], rw[BENCH_MAXPAIRS], rc[BENCH_MAXPAIRS];
    double qw[BENCH_MAXPAIRS], qc[BENCH_MAXPAIRS];
    if (pairs < 1) pairs = 1;
    if (pairs > BENCH_MAXPAIRS) pairs = BENCH_MAXPAIRS;
    double w, c;
    timed(base, base_arg, clock, &w, &c); /* warm-up: caches, tables, lazy initialisation */
    timed(row, row_arg, clock, &w, &c);
    for (int i = 0; i < pairs; i++) {
        if (i % 2 == 0) {
            timed(base, base_arg, clock, &bw[i], &bc[i]);
            timed(row, row_arg, clock, &rw[i], &rc[i]);
        } else {
            timed(row, row_arg, clock, &rw[i], &rc[i]);
            timed(base, base_arg, clock, &bw[i], &bc[i]);
        }
        bw[i] /= base_units, bc[i] /= base_units, rw[i] /= row_units, rc[i] /= row_units;
        qw[i] = bw[i] > 0 ? rw[i] / bw[i] : 0;
        qc[i] = bc[i] > 0 ? rc[i] / bc[i] : 0;
    }
    out->pairs = pairs;
    out->base_wall = bench_stats(bw, pairs);
    out->base_cpu = bench_stats(bc, pairs);
    out->row_wall = bench_stats(rw, pairs);
    out->row_cpu = bench_stats(rc, pairs);
    out->ratio_wall = bench_stats(qw, pairs);
    out->ratio_cpu = bench_stats(qc, pairs);
}

void bench_print_machine(const char *prefix) {
    /* the model name, and the family and model numbers: a name such as
     * "Intel(R) Xeon(R) Processor" does not tell Sapphire Rapids (model
     * 143) from Emerald Rapids (207) */
    char model[256] = "unknown CPU", family[32] = "", number[32] = "", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            char *p = strchr(line, ':');
            if (!p) continue;
            char *v = p + 1 + (p[1] == ' ');
            v[strcspn(v, "\n")] = 0;
            if (!strncmp(line, "model name", 10)) snprintf(model, sizeof model, "%s", v);
            else if (!strncmp(line, "cpu family", 10)) snprintf(family, sizeof family, "%s", v);
            else if (!strncmp(line, "model\t", 6)) snprintf(number, sizeof number, "%s", v);
            else if (!strncmp(line, "processor", 9) && strcmp(v, "0")) break; /* the first CPU's lines only */
        }
        fclose(f);
    }
    if (*family && *number) {
        size_t l = strlen(model);
        snprintf(model + l, sizeof model - l, " (family %s model %s)", family, number);
    }
    double load[3] = {0, 0, 0};
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = load[1] = load[2] = -1;
        fclose(f);
    }
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    printf("%s%s, %ld online CPUs, load average %.2f %.2f %.2f, %s\n", prefix, model, sysconf(_SC_NPROCESSORS_ONLN), load[0],
           load[1], load[2], when);
}
