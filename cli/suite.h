/* SPDX-License-Identifier: MIT */
/* suite.h: experiment definitions for `make experiments` and `fpemu report`.
 *
 * One text file per experiment (experiments/suite/NN-name.txt): which model,
 * steps, seed and common settings, the runs (a name, a policy, settings),
 * the baseline run, and the phenomenon expected, as claims with checkable
 * rules (`expect RUN: EXPR CMP EXPR`, evaluated on the runs' data by
 * report.c). The format is in experiments/suite/README.md. */
#ifndef FPEMU_SUITE_H
#define FPEMU_SUITE_H
#include <stddef.h>

#define SUITE_NAME_MAX 64
#define SUITE_MAX_SEEDS 64
#define SUITE_KEY_MAX 64

typedef struct suite_run {
    char name[SUITE_NAME_MAX];
    char policy[SUITE_NAME_MAX];
    char **sets;        /* key=value (the experiment's common settings first) */
    int nsets;
    int ncommon;        /* how many of sets are the experiment's common ones */
    int line;
    /* cache folder names, one per seed of the experiment (seeds[s]):
     * model-policy-hash, the hash over the whole command, seed included */
    char key[SUITE_MAX_SEEDS][SUITE_KEY_MAX];
} suite_run;

typedef struct suite_expect {
    char run[SUITE_NAME_MAX];
    char *text;
    int line;
} suite_expect;

typedef struct suite_exp {
    char path[1024];
    char name[SUITE_NAME_MAX];
    char *title, *about, *expected;
    char model[SUITE_NAME_MAX];
    long steps;
    unsigned long long seed;   /* the first of seeds */
    unsigned long long seeds[SUITE_MAX_SEEDS]; /* `seeds: 1 2 3` (or `seed: N`, one) */
    int nseeds;
    char baseline[SUITE_NAME_MAX];
    suite_run *runs;
    int nruns;
    /* claims (one sentence per run) and their rules */
    suite_expect *claims, *expects;
    int nclaims, nexpects;
} suite_exp;

/* The experiment name of a definition file: its base name without a leading
 * "NN-" and without ".txt". */
void suite_name_from_path(const char *path, char *name, size_t n);
/* Read a definition. NAME may be NULL (then taken from the path). Checks
 * the model, policies and settings with the training engine's own
 * validation, so a bad key fails here with the file and line. Returns 0, or
 * -1 with a message in err. */
int suite_read(suite_exp *e, const char *path, const char *name, char *err, size_t errlen);
/* The same for the definition of runs already done (a report's
 * experiment.txt beside its run folders, which may come from the PyTorch
 * bridge's RunLogger): the syntax is checked, but not that the engine could
 * train the model, policy and settings. */
int suite_read_results(suite_exp *e, const char *path, const char *name, char *err, size_t errlen);
void suite_free(suite_exp *e);
/* The run called NAME, or NULL. */
const suite_run *suite_find_run(const suite_exp *e, const char *name);
/* The text of the claim for RUN, or NULL. */
const char *suite_claim(const suite_exp *e, const char *run);
/* Definition files of a folder (*.txt, sorted), or PATH itself if it is a
 * file. Returns the count (malloc'ed array of malloc'ed paths), -1 on error. */
int suite_list(const char *path, char ***files, char *err, size_t errlen);
/* The `fpemu train` arguments of a run for seed index S (for the plan and the report). */
void suite_train_args(const suite_exp *e, const suite_run *r, int s, char *buf, size_t n);
/* Parse a list of seeds ("1 2 3", commas allowed): distinct whole numbers,
 * at most SUITE_MAX_SEEDS. Returns the count, or -1 (err). */
int suite_parse_seeds(const char *text, unsigned long long *seeds, char *err, size_t errlen);
/* Replace the definition's seeds (make experiments SEEDS=...) and name the
 * runs' cache folders again. */
void suite_set_seeds(suite_exp *e, const unsigned long long *seeds, int n);
#endif
