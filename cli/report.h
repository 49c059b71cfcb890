/* SPDX-License-Identifier: MIT */
/* report.h: the parts of `fpemu report` (docs/experiments.md), one owner each:
 *
 *   cmd_report.c     the command: options, gathering the input folders, the
 *                    staging folder of --out (it appears whole or not at all),
 *                    signals, the closing line on stderr
 *   report_runs.c    run and experiment folders: loading the CSVs, the
 *                    metrics of a run, copying runs into the report, checking
 *                    every input before anything is written, a run's table cells
 *   report_rules.c   the claim language (`expect RUN: EXPR CMP EXPR`): parsing,
 *                    evaluating with the values it used, the verdicts
 *   report_engine.c  what the report knows of the training engine's models and
 *                    policies (from its tables, never from names written here):
 *                    the reference policy, a policy's scaling recipe, the
 *                    planner's cost table
 *   report_plan.c    `--plan`: the makefile that runs a suite, one target per
 *                    distinct run
 *   report_plot.c    gnuplot (the scripts in reports/), the plot data files and the
 *                    captions of one experiment's figures
 *   report_verdict.c the verdict block: what was run, how many claims held,
 *                    the ones that did not with their numbers, the plots
 *                    that matter (headline.html/.md, keyplots.html/.md)
 *   report_html.c    fragment.html and the standalone index.html
 *   report_md.c      fragment.md, the standalone summary.md and summary.csv
 *
 * Names shared between the files start with rep_; everything else is static. */
#ifndef FPEMU_REPORT_H
#define FPEMU_REPORT_H
#include <signal.h>
#include <stdio.h>
#include "cli.h"
#include "csv.h"
#include "suite.h"

#define SUB "report"

/* The signal (SIGINT, SIGTERM, SIGHUP) that asked the report to stop, or 0:
 * set by cmd_report.c's handler, read where the report can stop cleanly
 * (gnuplot's wait, between experiments, before the staging folder is
 * committed). */
extern volatile sig_atomic_t rep_stop_signal;

/* ---- files (report_runs.c) ---- */
int rep_is_dir(const char *p);
int rep_is_file(const char *p);
int rep_mkdir_p(const char *dir);
/* Copy SRC to DST atomically. 0 or -1 (errno). */
int rep_copy_file(const char *src, const char *dst);
int rep_same_path(const char *a, const char *b);

/* ---- runs and experiments (report_runs.c) ---- */
#define MAX_CLS 16

typedef struct {
    char name[32];
    double n, overflow, underflow, subnormal, saturated;
} cls_tot;

typedef struct run_data {
    const suite_run *def;
    char name[SUITE_NAME_MAX], policy[SUITE_NAME_MAX];
    char dir[4096];
    int have;                 /* metrics.csv read */
    csv_table met, ev, ten;
    int have_ev, have_ten;
    long n;                   /* steps (rows) */
    double *step, *loss, *scale;
    int *skip;
    /* metrics */
    double final_loss, eval_loss, eval_acc, overflow, underflow, casts;
    double final_scale, min_scale, max_scale;
    long skipped, nonfinite;
    cls_tot cls[MAX_CLS];
    int ncls;
    cls_tot all;
    /* verdict */
    int verdict;              /* 0 no claim, 1 reproduced, 2 not reproduced, 3 not run */
} run_data;

typedef struct exp_data {
    suite_exp def;
    char dir[4096];
    run_data *runs;           /* the runs of the first seed (def.seeds[0]) */
    int nruns, base;
    int nseeds;               /* def.nseeds */
    run_data **sr;            /* sr[s][i]: run i of seed s (sr[0] == runs) */
    char **explain;           /* one line per expect (HTML-free text) */
    int *holds;               /* per expect: 1 holds, 0 fails, -1 no data */
    long window;              /* smoothing window (steps) */
} exp_data;

/* The metrics a rule may use (NULL-terminated) and one line of help each. */
extern const char *const rep_metric_names[];
extern const char *const rep_metric_docs[];

/* Rows of the final-loss window of a run of n steps: max(5, n/10), at most n. */
long rep_final_window(long n);
void rep_run_free(run_data *r);
/* Read one run folder's CSVs. Returns 0, 1 if metrics.csv is missing
 * (the run is "not run"), -2 on malformed data (err). */
int rep_run_load(run_data *r, char *err, size_t errlen);
/* Trailing mean of the loss over w rows (NaN if a value in the window is not finite). */
double rep_smooth_at(const run_data *r, long i, long w);
/* Fraction of a class's cast elements that over/underflowed, became
 * subnormal or saturated (KIND); CLS NULL or "all": every class. */
double rep_cls_frac(const run_data *r, const char *kind, const char *cls);
/* One metric M of run r against the reference b (CLS: a tensor class or NULL). */
double rep_metric(const exp_data *x, const run_data *r, const run_data *b, const char *m, const char *cls);
/* Load the experiment in DIR (DIR/experiment.txt and DIR/RUN/) and its verdicts. */
int rep_exp_load(exp_data *x, const char *dir, char *err, size_t errlen);
void rep_exp_free(exp_data *x);
/* Copy a run folder's result files into DST (created). 0 or 2 (message). */
int rep_copy_run(const char *src, const char *dst);
/* The seeds of `--seeds` (make experiments SEEDS=...): they replace every
 * definition's seeds (rep_nseeds 0: the definitions' own). */
extern unsigned long long rep_seeds[SUITE_MAX_SEEDS];
extern int rep_nseeds;
/* Apply --seeds to a definition just read. */
void rep_apply_seeds(suite_exp *d);
/* The folder of run R, seed index S of the experiment folder EXPDIR:
 * EXPDIR/RUN/seed-SEED, or EXPDIR/RUN when the experiment has one seed and
 * EXPDIR/RUN/metrics.csv exists (folders written before seeds, or by the
 * PyTorch bridge's RunLogger). */
void rep_run_dir(const suite_exp *d, const char *expdir, const suite_run *r, int s, char *buf, size_t n);
/* Where the report writes that folder: EXPDIR/RUN with one seed, else
 * EXPDIR/RUN/seed-SEED. */
void rep_run_out(const suite_exp *d, const char *expdir, const suite_run *r, int s, char *buf, size_t n);
/* Aggregate of a metric over the seeds of run i: mean, min, max and the
 * count of finite values (NaN when none). */
typedef struct { double mean, min, max; int n; } rep_agg;
rep_agg rep_seed_agg(const exp_data *x, int i, const char *metric);
/* Materialise experiment DEF's folder OUT/NAME from the run cache. */
int rep_collect_suite(const suite_exp *d, const char *cache, const char *out);
/* Plain run folders given on the command line: one experiment OUT/runs. */
int rep_collect_adhoc(char **dirs, int n, const char *out);
/* Every definition, rule and CSV the report will read, so that bad input
 * exits 2 before --out is created or touched. */
int rep_validate_inputs(const char *suite, const char *runs, char **paths, int np);

/* A run's cells in the summary tables (HTML and Markdown). */
typedef struct {
    char loss[48], diff[48], acc[48], skip[32], ovf[32], unf[32];
    char own[600]; /* the run's own settings (not the experiment's common ones), each after a space */
} row_cells;
void rep_row_of(const exp_data *x, const run_data *r, row_cells *c);
/* The summary table's columns, in order (REP_SUMMARY_COLS of them). */
#define REP_SUMMARY_COLS 10
extern const char *const rep_summary_cols[REP_SUMMARY_COLS];
/* The three parts of the standalone report, OUT/headline.EXT, keyplots.EXT
 * and fragment.EXT, read whole into part[0..2] (NULL where one cannot be
 * read; free each). */
void rep_read_parts(const char *out, const char *ext, char *part[3]);
/* How many claims the experiments xs[0..nx) reproduced, did not, and did not run. */
void rep_verdict_counts(const exp_data *xs, int nx, int *reproduced, int *not_reproduced, int *not_run);
/* The run's settings, space-separated (the experiment's common ones first). */
void rep_settings_text(const run_data *r, char *b, size_t n);

/* ---- rules and verdicts (report_rules.c) ---- */
/* A number as the rules' explanations print it: %.4g, NaN, inf, -inf. */
void rep_fmt_num(char *buf, size_t n, double v);
/* Check every rule of a definition for syntax and run names. 0, or -1 (err). */
int rep_check_rules(const suite_exp *d, char *err, size_t errlen);
/* Evaluate every rule of a loaded experiment (x->holds, x->explain) and set
 * each run's verdict. */
void rep_eval_rules(exp_data *x);
/* "reproduced", "not reproduced", "not run", or "" (no claim). */
const char *rep_verdict_word(int v);

/* ---- the engine's models and policies (report_engine.c) ---- */
typedef enum { REP_SCALING_NONE = 0, REP_SCALING_DELAYED, REP_SCALING_CURRENT, REP_SCALING_FINE } rep_scaling;
/* The policy that computes everything in f32 (the baseline of runs given
 * on the command line). */
const char *rep_reference_policy(void);
/* The policy whose evaluation runs through int8 dynamic quantisation, or "". */
const char *rep_int8_eval_policy(void);
/* How POLICY scales its 8-bit GEMM inputs. */
rep_scaling rep_policy_scaling(const char *policy);
/* Relative cost of a run (the plan runs the costliest first). */
double rep_run_cost(const suite_exp *e, const suite_run *r);

/* ---- the plan (report_plan.c) ---- */
/* Print the makefile that runs the suite FILES into CACHE. 0, or 2 (message). */
int rep_plan(char **files, int nfiles, const char *cache);

/* ---- plots (report_plot.c) ---- */
typedef struct {
    char scripts[4096];
    int no_plots;
    int plots_made, plots_failed;
    int write_failed; /* a plot's data or image could not be written (exit 2) */
    char last_script[32], last_vars[8192]; /* of the last plot drawn */
} gp_ctx;

typedef struct {
    char file[64], alt[160];
    char *caption;   /* HTML-safe text (escaped when written) */
    char script[32]; /* how it was drawn: the script and its variables */
    char *vars;
} figure;

/* An experiment's figures, in order, and a note on the plots left out
 * (NULL if none). */
typedef struct { figure *v; int n; char *note; } figlist;

/* Find the gnuplot scripts: GIVEN (--scripts), $FPEMU_ROOT/reports,
 * ./reports, or beside the program. 0, or -1. */
int rep_find_scripts(gp_ctx *g, const char *given);
/* Write one experiment's plot data and plots into x->dir; FIGS gets the
 * figures drawn, with their captions. */
void rep_make_plots(gp_ctx *g, exp_data *x, figlist *figs);

/* Draw figure F of the experiment in DIR again, WIDTH x HEIGHT pixels, with
 * the script's variables EXTRA ("name=value; ..." or NULL) on top, as
 * DIR/OUT.png and .svg (not counted as a plot of its own). 0, or -1. */
int rep_replot(gp_ctx *g, const char *dir, const figure *f, const char *out, int width, int height, const char *extra);

/* ---- pages (report_verdict.c, report_html.c, report_md.c) ---- */
/* OUT/headline.html, headline.md, keyplots.html and keyplots.md, and each
 * key plot drawn again at the size the verdict shows it (EXP/key_NAME.png).
 * 0, or 2 (message). */
int rep_write_verdict(gp_ctx *g, const char *out, exp_data *xs, int nx, figlist *figs);
/* OUT/fragment.html and OUT/index.html (the verdict block, then the fragment). 0, or 2 (message). */
int rep_write_html(const char *out, exp_data *xs, int nx, figlist *figs, const char *title);
/* OUT/fragment.md and OUT/summary.md (the verdict block, then the fragment). 0, or 2 (message). */
int rep_write_md(const char *out, exp_data *xs, int nx, figlist *figs, const char *title);
/* OUT/summary.csv. 0, or 2 (message). */
int rep_write_csv(const char *out, exp_data *xs, int nx);
#endif
