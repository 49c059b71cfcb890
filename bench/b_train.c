/* SPDX-License-Identifier: MIT */
/* b_train.c: training step time of every precision policy against 32-true
 * (the baseline), on mlp-digits and tiny-transformer, one thread each.
 * Each policy's run and a 32-true run are open side by side and their
 * blocks of steps alternate (bench/bench.h: pairs A B, B A, ...; process CPU
 * time, which with one thread is that thread's and any helper's, and wall time; the minimum and median of each side and of policy /
 * 32-true pair by pair), so both see the same machine. Targets (issue 5):
 * bf16-mixed and 16-mixed step time <= 3x 32-true; fp8 policies <= 5x,
 * checked on the median of the ratios (CPU time).
 * Options: b_train [--pairs N] [--model NAME]; FPEMU_BENCH_STEPS=N timed
 * steps per block (default 40 for the MLP; the transformer gets N/10). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "train.h"

typedef struct {
    trn_run *r;
    int steps;
    const char *name;
} train_job;

static void run_steps(void *p) {
    train_job *j = p;
    char err[512];
    trn_step_rec rec;
    for (int i = 0; i < j->steps; i++)
        if (trn_step(j->r, &rec, err, sizeof err)) {
            fprintf(stderr, "b_train: %s: %s\n", j->name, err);
            exit(2);
        }
}

static trn_run *open_run(const char *model, const char *policy, const char *const *kv) {
    trn_settings s;
    char err[512];
    if (trn_settings_init(&s, model, policy, err, sizeof err)) { fprintf(stderr, "%s\n", err); exit(2); }
    for (int i = 0; kv && kv[i]; i += 2) trn_settings_set(&s, kv[i], kv[i + 1], err, sizeof err);
    trn_run *r;
    if (trn_open(&r, &s, 1, err, sizeof err)) { fprintf(stderr, "%s: %s\n", policy, err); exit(2); }
    trn_set_threads(r, 1);
    return r;
}

static int is_fp8(const char *p) {
    return strstr(p, "fp8") || strstr(p, "mxfp8") || strstr(p, "transformer-engine") || strstr(p, "msamp");
}

static void table(const char *model, int steps, const char *const *only, int pairs) {
    printf("\n%s: %d pairs of %d-step blocks per policy; ms per step, process CPU time (wall: medians)\n", model, pairs, steps);
    printf("%-28s %9s %9s %9s %9s %8s %8s %9s %9s  %s\n", "policy", "ms med", "ms min", "32t med", "32t min", "x med", "x min",
           "wall ms", "32t wall", "target");
    for (int i = 0; trn_policy_names[i]; i++) {
        const char *p = trn_policy_names[i];
        if (only) {
            int in = 0;
            for (int k = 0; only[k]; k++) in |= !strcmp(only[k], p);
            if (!in) continue;
        }
        /* f16 optimiser states need eps=1e-4 (1e-8 is 0 in f16: NaN from step 2) */
        static const char *const eps[] = {"eps", "1e-4", NULL};
        int f16_states = !strcmp(p, "16-true") || !strcmp(p, "transformer-engine-float16");
        train_job base = {open_run(model, "32-true", NULL), steps, "32-true"};
        train_job row = {open_run(model, p, f16_states ? eps : NULL), steps, p};
        bench_cmp r;
        bench_compare(run_steps, &base, steps, run_steps, &row, steps, pairs, BENCH_PROCESS, &r);
        trn_close(base.r);
        trn_close(row.r);
        const char *target = "-";
        double x = r.ratio_cpu.med;
        if (!strcmp(p, "16-mixed") || !strcmp(p, "bf16-mixed")) target = x <= 3 ? "<=3x ok" : "<=3x MISS";
        else if (is_fp8(p)) target = x <= 5 ? "<=5x ok" : "<=5x MISS";
        printf("%-28s %9.3f %9.3f %9.3f %9.3f %8.2f %8.2f %9.3f %9.3f  %s\n", p, r.row_cpu.med * 1e3, r.row_cpu.min * 1e3,
               r.base_cpu.med * 1e3, r.base_cpu.min * 1e3, x, r.ratio_cpu.min, r.row_wall.med * 1e3, r.base_wall.med * 1e3,
               target);
        fflush(stdout);
    }
}

int main(int argc, char **argv) {
    int pairs = 5;
    const char *only_model = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--model") && i + 1 < argc) only_model = argv[++i];
        else {
            fprintf(stderr, "usage: b_train [--pairs N] [--model mlp-digits|tiny-transformer]\n");
            return 2;
        }
    }
    const char *e = getenv("FPEMU_BENCH_STEPS");
    int steps = e ? atoi(e) : 40;
    if (steps < 1) steps = 1;
    printf("b_train: step time per policy against 32-true, interleaved (threads 1; GEMM backend per docs/training.md);\n"
           "x = policy / 32-true pair by pair\n");
    bench_print_machine("# ");
    if (!only_model || !strcmp(only_model, "mlp-digits")) table("mlp-digits", steps, NULL, pairs);
    static const char *const tf[] = {"bf16-mixed", "16-mixed", "fp8-delayed", "fp8-blockwise", NULL};
    if (!only_model || !strcmp(only_model, "tiny-transformer"))
        table("tiny-transformer", steps / 10 > 0 ? steps / 10 : 1, tf, pairs);
    return 0;
}
