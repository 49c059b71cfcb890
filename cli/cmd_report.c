/* SPDX-License-Identifier: MIT */
/* cmd_report.c: `fpemu report`, the training section of the experiments
 * report, from run folders (`fpemu train --out DIR`).
 *
 *   fpemu report --out DIR PATH...                  regenerate from existing runs
 *   fpemu report --out DIR --suite DEFS --runs CACHE collect a suite's runs, then report
 *   fpemu report --plan --suite DEFS --runs CACHE    print the makefile that runs a suite
 *
 * An experiment folder holds experiment.txt (its definition, suite.h) and
 * one folder per run (metrics.csv, eval.csv, tensors.csv, summary.json).
 * PATH may be an experiment folder, a folder of experiment folders, or a
 * run folder (plain run folders become one experiment, "runs", whose
 * baseline is the 32-true run if there is one). The report is written to
 * DIR: DIR/EXP/RUN/ (copies of the CSVs), DIR/EXP/NAME.png and .svg (gnuplot,
 * scripts in reports/), DIR/fragment.html and fragment.md (the section of
 * `make experiments`, mk/experiments.mk), DIR/summary.csv, and a standalone
 * DIR/index.html and DIR/summary.md.
 *
 * Verdicts are computed from the data by the rules in each definition
 * (`expect RUN: EXPR CMP EXPR`); the metrics are listed in metric_names. */
#define _GNU_SOURCE /* vasprintf, open_memstream */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include "cli.h"
#include "csv.h"
#include "suite.h"

#define SUB "report"

/* ---- small helpers -------------------------------------------------------- */

/* The signal (SIGINT, SIGTERM, SIGHUP) that asked the report to stop, or 0:
 * set by stop_handler, read where the report can stop cleanly (gnuplot's
 * wait, between experiments, before the staging folder is committed). */
static volatile sig_atomic_t stop_signal;

static int is_dir(const char *p) { struct stat st; return !stat(p, &st) && S_ISDIR(st.st_mode); }
static int is_file(const char *p) { struct stat st; return !stat(p, &st) && S_ISREG(st.st_mode); }

static int mkdir_p(const char *dir) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
    return is_dir(tmp) ? 0 : -1;
}

/* Copy SRC to DST atomically. 0 or -1 (errno). */
static int copy_file(const char *src, const char *dst) {
    size_t n;
    char *b = csv_slurp(src, &n);
    if (!b) return -1;
    cli_atomic a;
    if (cli_atomic_open(&a, dst, "wb")) { free(b); return -1; }
    int ok = fwrite(b, 1, n, a.f) == n;
    free(b);
    return cli_atomic_close(&a, ok);
}

static int same_path(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb)) return 0;
    return !strcmp(ra, rb);
}

static void html_esc(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* Markdown table cells: | would split the cell. */
static void md_esc(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else fputc(*s, f);
    }
}

/* Text for gnuplot strings in single quotes. */
static void gp_clean(char *s) {
    for (; *s; s++)
        if (*s == '\'' || *s == '\n' || *s == '"') *s = ' ';
}

/* ---- run data and metrics -------------------------------------------------- */

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
    run_data *runs;
    int nruns, base;
    char **explain;           /* one line per expect (HTML-free text) */
    int *holds;               /* per expect: 1 holds, 0 fails, -1 no data */
    long window;              /* smoothing window (steps) */
} exp_data;

static const char *const metric_names[] = {
    "final_loss", "loss_diff", "mean_diff", "max_dev", "eval_loss", "eval_acc", "skipped", "nonfinite",
    "overflow", "underflow", "subnormal", "saturated", "final_scale", "min_scale", "max_scale", "steps", "casts", NULL};

static const char *const metric_docs[] = {
    "mean training loss over the last max(5, steps/10) steps (+inf if fewer than half of them are finite)",
    "final_loss(R) - final_loss(baseline); loss_diff(R, S) against run S instead",
    "mean over the second half of the steps of loss(R) - loss(baseline), step by step (+inf if R's loss is not finite there); mean_diff(R, S) against S",
    "largest |loss(R) - loss(baseline)| over all steps (0: identical curves); max_dev(R, S) against S",
    "held-out loss at the last evaluation (+inf if not finite)",
    "held-out accuracy at the last evaluation",
    "optimizer steps skipped by the loss scaler (inf/NaN gradients)",
    "steps whose training loss is inf or NaN",
    "fraction of all low-precision cast elements that overflowed (metrics.csv, weighted by casts); overflow.CLASS: one tensor class (tensors.csv)",
    "fraction that became zero; underflow.CLASS: one tensor class (tensors.csv)",
    "fraction that became subnormal (tensors.csv; .CLASS for one class)",
    "fraction clamped by a saturating cast (tensors.csv; .CLASS for one class)",
    "loss scale at the last step",
    "smallest loss scale over the run",
    "largest loss scale over the run",
    "steps run",
    "low-precision cast elements over the run",
    NULL};

static long final_window(long n) { long w = n / 10; return w < 5 ? (n < 5 ? n : 5) : w; }

static void run_free(run_data *r) {
    if (r->have) csv_free(&r->met);
    if (r->have_ev) csv_free(&r->ev);
    if (r->have_ten) csv_free(&r->ten);
    free(r->step); free(r->loss); free(r->scale); free(r->skip);
}

/* Read one run folder's CSVs. Returns 0, 1 if metrics.csv is missing
 * (the run is "not run"), -2 on malformed data (err). */
static int run_load(run_data *r, char *err, size_t errlen) {
    char p[4200];
    snprintf(p, sizeof p, "%s/metrics.csv", r->dir);
    if (!is_file(p)) return 1;
    int rc = csv_read(&r->met, p, err, errlen);
    if (rc) return -2;
    r->have = 1;
    int cs = csv_col(&r->met, "step"), cl = csv_col(&r->met, "loss");
    if (cs < 0 || cl < 0) { snprintf(err, errlen, "%s: line 1: expected the columns step and loss", p); return -2; }
    /* one row per step, in order: the plots and metrics go by row */
    if (csv_check_steps(&r->met, 1, err, errlen)) return -2;
    r->n = r->met.nrows;
    size_t nn = (size_t)(r->n ? r->n : 1);
    r->step = malloc(nn * sizeof *r->step);
    r->loss = malloc(nn * sizeof *r->loss);
    r->scale = malloc(nn * sizeof *r->scale);
    r->skip = malloc(nn * sizeof *r->skip);
    int csc = csv_col(&r->met, "loss_scale"), csk = csv_col(&r->met, "skipped"), cof = csv_col(&r->met, "overflow"),
        cuf = csv_col(&r->met, "underflow"), cca = csv_col(&r->met, "casts");
    double sof = 0, suf = 0, sca = 0;
    r->min_scale = INFINITY; r->max_scale = -INFINITY;
    for (long i = 0; i < r->n; i++) {
        double v;
        if (csv_num(csv_cell(&r->met, i, cs), &v) || !isfinite(v)) {
            snprintf(err, errlen, "%s: line %ld: step '%s' is not a number", p, r->met.lineno[i], csv_cell(&r->met, i, cs));
            return -2;
        }
        r->step[i] = v;
        if (csv_num(csv_cell(&r->met, i, cl), &v)) {
            snprintf(err, errlen, "%s: line %ld: loss '%s' is not a number", p, r->met.lineno[i], csv_cell(&r->met, i, cl));
            return -2;
        }
        r->loss[i] = v;
        if (!isfinite(v)) r->nonfinite++;
        r->scale[i] = csc >= 0 ? csv_get(&r->met, i, csc) : NAN;
        if (isfinite(r->scale[i])) {
            if (r->scale[i] < r->min_scale) r->min_scale = r->scale[i];
            if (r->scale[i] > r->max_scale) r->max_scale = r->scale[i];
        }
        r->skip[i] = csk >= 0 && csv_get(&r->met, i, csk) != 0 && !isnan(csv_get(&r->met, i, csk));
        r->skipped += r->skip[i];
        double c = cca >= 0 ? csv_get(&r->met, i, cca) : NAN;
        if (isfinite(c)) {
            sca += c;
            if (cof >= 0 && isfinite(csv_get(&r->met, i, cof))) sof += c * csv_get(&r->met, i, cof);
            if (cuf >= 0 && isfinite(csv_get(&r->met, i, cuf))) suf += c * csv_get(&r->met, i, cuf);
        }
    }
    if (r->min_scale > r->max_scale) r->min_scale = r->max_scale = NAN;
    r->final_scale = r->n ? r->scale[r->n - 1] : NAN;
    r->casts = cca >= 0 ? sca : NAN;
    r->overflow = cca < 0 || cof < 0 ? NAN : sca > 0 ? sof / sca : 0;
    r->underflow = cca < 0 || cuf < 0 ? NAN : sca > 0 ? suf / sca : 0;
    /* final loss: mean of the last window, +inf if fewer than half finite */
    long w = final_window(r->n), fin = 0;
    double s = 0;
    for (long i = r->n - w; i < r->n; i++)
        if (isfinite(r->loss[i])) { s += r->loss[i]; fin++; }
    r->final_loss = r->n == 0 ? NAN : 2 * fin < w ? INFINITY : s / (double)fin;
    /* eval.csv */
    snprintf(p, sizeof p, "%s/eval.csv", r->dir);
    r->eval_loss = r->eval_acc = NAN;
    if (is_file(p)) {
        if (csv_read(&r->ev, p, err, errlen)) return -2;
        r->have_ev = 1;
        int el = csv_col(&r->ev, "eval_loss"), ea = csv_col(&r->ev, "eval_accuracy");
        if (csv_col(&r->ev, "step") < 0 || el < 0 || ea < 0) {
            snprintf(err, errlen, "%s: line 1: expected the columns step, eval_loss, eval_accuracy", p);
            return -2;
        }
        if (csv_check_steps(&r->ev, 1, err, errlen)) return -2;
        if (r->ev.nrows) {
            r->eval_loss = csv_get(&r->ev, r->ev.nrows - 1, el);
            if (!isfinite(r->eval_loss)) r->eval_loss = INFINITY;
            r->eval_acc = csv_get(&r->ev, r->ev.nrows - 1, ea);
        }
    }
    /* tensors.csv: per-class totals */
    snprintf(p, sizeof p, "%s/tensors.csv", r->dir);
    memset(&r->all, 0, sizeof r->all);
    strcpy(r->all.name, "all");
    if (is_file(p)) {
        if (csv_read(&r->ten, p, err, errlen)) return -2;
        r->have_ten = 1;
        const char *need[] = {"step", "layer", "class", "format", "n", "amax", "scale", "overflow", "underflow"};
        for (size_t k = 0; k < sizeof need / sizeof need[0]; k++)
            if (csv_col(&r->ten, need[k]) < 0) {
                snprintf(err, errlen, "%s: line 1: expected a column '%s'", p, need[k]);
                return -2;
            }
        int cc = csv_col(&r->ten, "class"), cn = csv_col(&r->ten, "n"), co = csv_col(&r->ten, "overflow"),
            cu = csv_col(&r->ten, "underflow"), csb = csv_col(&r->ten, "subnormal"), cst = csv_col(&r->ten, "saturated");
        /* steps in order (the plots group a step's rows), each tensor
         * (layer, class, format) once per step (the totals add rows up) */
        if (csv_check_steps(&r->ten, 0, err, errlen)) return -2;
        int ts = csv_col(&r->ten, "step"), tl = csv_col(&r->ten, "layer"), tf = csv_col(&r->ten, "format");
        for (long i = 0, g = 0; i < r->ten.nrows; i++) {
            if (strcmp(csv_cell(&r->ten, i, ts), csv_cell(&r->ten, g, ts))) g = i;
            for (long j = g; j < i; j++)
                if (!strcmp(csv_cell(&r->ten, i, tl), csv_cell(&r->ten, j, tl)) && !strcmp(csv_cell(&r->ten, i, cc), csv_cell(&r->ten, j, cc)) &&
                    !strcmp(csv_cell(&r->ten, i, tf), csv_cell(&r->ten, j, tf))) {
                    snprintf(err, errlen, "%s: line %ld: step %s, layer %s, class %s, format %s repeats line %ld (a duplicated row), "
                                          "expected each tensor once per step", p, r->ten.lineno[i], csv_cell(&r->ten, i, ts),
                             csv_cell(&r->ten, i, tl), csv_cell(&r->ten, i, cc), csv_cell(&r->ten, i, tf), r->ten.lineno[j]);
                    return -2;
                }
        }
        for (long i = 0; i < r->ten.nrows; i++) {
            const char *c = csv_cell(&r->ten, i, cc);
            int k;
            for (k = 0; k < r->ncls; k++) if (!strcmp(r->cls[k].name, c)) break;
            if (k == r->ncls) {
                if (r->ncls == MAX_CLS) continue;
                memset(&r->cls[k], 0, sizeof r->cls[k]);
                snprintf(r->cls[k].name, sizeof r->cls[k].name, "%s", c);
                r->ncls++;
            }
            double v[5] = {csv_get(&r->ten, i, cn), csv_get(&r->ten, i, co), csv_get(&r->ten, i, cu),
                           csb >= 0 ? csv_get(&r->ten, i, csb) : 0, cst >= 0 ? csv_get(&r->ten, i, cst) : 0};
            for (int j = 0; j < 5; j++) if (!isfinite(v[j])) v[j] = 0;
            cls_tot *t[2] = {&r->cls[k], &r->all};
            for (int j = 0; j < 2; j++) {
                t[j]->n += v[0]; t[j]->overflow += v[1]; t[j]->underflow += v[2]; t[j]->subnormal += v[3]; t[j]->saturated += v[4];
            }
        }
    }
    /* the files must be one run's (summary.json lists them with their
     * sizes and CRCs: a folder mixed by a killed or concurrent writer, or
     * by hand, is refused) */
    int rc2 = csv_run_check(r->dir, err, errlen);
    if (rc2 == 1) {
        snprintf(err, errlen, "%s: metrics.csv but no summary.json, so nothing says that the folder's files belong to one run "
                              "(expected a folder written by `fpemu train --out`)", r->dir);
        return -2;
    }
    return rc2 ? -2 : 0;
}

/* Trailing mean of the loss over w rows (NaN if a value in the window is not finite). */
static double smooth_at(const run_data *r, long i, long w) {
    long lo = i - w + 1 < 0 ? 0 : i - w + 1;
    double s = 0;
    for (long j = lo; j <= i; j++) {
        if (!isfinite(r->loss[j])) return NAN;
        s += r->loss[j];
    }
    return s / (double)(i - lo + 1);
}

static double cls_frac(const run_data *r, const char *kind, const char *cls) {
    const cls_tot *t = NULL;
    if (!cls || !strcmp(cls, "all")) t = &r->all;
    else {
        for (int k = 0; k < r->ncls; k++) if (!strcmp(r->cls[k].name, cls)) t = &r->cls[k];
        if (!t) return 0; /* the class was never cast: nothing over- or underflowed */
    }
    double num = !strcmp(kind, "overflow") ? t->overflow : !strcmp(kind, "underflow") ? t->underflow
               : !strcmp(kind, "subnormal") ? t->subnormal : t->saturated;
    return t->n > 0 ? num / t->n : 0;
}

/* One metric of a run. */
static double metric(const exp_data *x, const run_data *r, const run_data *b, const char *m, const char *cls) {
    (void)x;
    if (!strcmp(m, "final_loss")) return r->final_loss;
    if (!strcmp(m, "loss_diff")) return r->final_loss - b->final_loss;
    if (!strcmp(m, "mean_diff") || !strcmp(m, "max_dev")) {
        long n = r->n < b->n ? r->n : b->n;
        if (!b->have || n == 0) return NAN;
        int mean = m[1] == 'e';
        double s = 0, mx = 0;
        long k = 0;
        for (long i = mean ? n / 2 : 0; i < n; i++) {
            double d = r->loss[i] - b->loss[i];
            if (r->loss[i] == b->loss[i] || (isnan(r->loss[i]) && isnan(b->loss[i]))) d = 0;
            if (!isfinite(d)) return INFINITY;
            s += d; k++;
            if (fabs(d) > mx) mx = fabs(d);
        }
        return mean ? (k ? s / (double)k : NAN) : mx;
    }
    if (!strcmp(m, "eval_loss")) return r->eval_loss;
    if (!strcmp(m, "eval_acc")) return r->eval_acc;
    if (!strcmp(m, "skipped")) return (double)r->skipped;
    if (!strcmp(m, "nonfinite")) return (double)r->nonfinite;
    if (!strcmp(m, "overflow") || !strcmp(m, "underflow")) {
        if (!cls) return m[0] == 'o' ? r->overflow : r->underflow;
        return cls_frac(r, m, cls);
    }
    if (!strcmp(m, "subnormal") || !strcmp(m, "saturated")) return cls_frac(r, m, cls);
    if (!strcmp(m, "final_scale")) return r->final_scale;
    if (!strcmp(m, "min_scale")) return r->min_scale;
    if (!strcmp(m, "max_scale")) return r->max_scale;
    if (!strcmp(m, "steps")) return (double)r->n;
    if (!strcmp(m, "casts")) return r->casts;
    return NAN;
}

/* ---- rules: `EXPR CMP EXPR` ------------------------------------------------- */

typedef struct {
    const char *p;
    const exp_data *x;        /* NULL: syntax check only */
    const suite_exp *def;
    char err[256];
    FILE *ex;                 /* explanation: "name(run) = value; ..." */
    int nex;
    int missing;              /* a run referred to has no data */
} ev_ctx;

static void skip_ws(ev_ctx *c) { while (*c->p == ' ' || *c->p == '\t') c->p++; }

static double ev_expr(ev_ctx *c);

static void fmt_num(char *buf, size_t n, double v) {
    if (isnan(v)) snprintf(buf, n, "NaN");
    else if (isinf(v)) snprintf(buf, n, "%sinf", v < 0 ? "-" : "");
    else snprintf(buf, n, "%.4g", v);
}

static double ev_primary(ev_ctx *c) {
    skip_ws(c);
    if (c->err[0]) return NAN;
    if (*c->p == '(') {
        c->p++;
        double v = ev_expr(c);
        skip_ws(c);
        if (*c->p != ')') { snprintf(c->err, sizeof c->err, "expected ')' at '%.20s'", c->p); return NAN; }
        c->p++;
        return v;
    }
    if (isdigit((unsigned char)*c->p) || *c->p == '.') {
        char *end;
        double v = strtod(c->p, &end);
        if (end == c->p) { snprintf(c->err, sizeof c->err, "bad number at '%.20s'", c->p); return NAN; }
        c->p = end;
        return v;
    }
    if (!isalpha((unsigned char)*c->p)) {
        snprintf(c->err, sizeof c->err, "expected a number, a metric(RUN), abs(), min(), max() or '(' at '%.20s'", c->p);
        return NAN;
    }
    char name[64], cls[32] = "";
    int k = 0;
    while ((isalnum((unsigned char)*c->p) || *c->p == '_') && k < 63) name[k++] = *c->p++;
    name[k] = 0;
    if (*c->p == '.') {
        c->p++;
        k = 0;
        while ((isalnum((unsigned char)*c->p) || *c->p == '_') && k < 31) cls[k++] = *c->p++;
        cls[k] = 0;
        if (!k) { snprintf(c->err, sizeof c->err, "expected a tensor class after '%s.'", name); return NAN; }
    }
    skip_ws(c);
    if (*c->p != '(') { snprintf(c->err, sizeof c->err, "expected '(' after '%s'", name); return NAN; }
    c->p++;
    if (!strcmp(name, "abs") || !strcmp(name, "min") || !strcmp(name, "max")) {
        if (cls[0]) { snprintf(c->err, sizeof c->err, "%s takes no .class", name); return NAN; }
        double a = ev_expr(c), b = 0;
        skip_ws(c);
        if (name[0] == 'm') {
            if (*c->p != ',') { snprintf(c->err, sizeof c->err, "%s needs two arguments", name); return NAN; }
            c->p++;
            b = ev_expr(c);
            skip_ws(c);
        }
        if (*c->p != ')') { snprintf(c->err, sizeof c->err, "expected ')' after the arguments of %s", name); return NAN; }
        c->p++;
        if (name[0] == 'a') return fabs(a);
        if (isnan(a) || isnan(b)) return NAN;
        return name[1] == 'i' ? fmin(a, b) : fmax(a, b);
    }
    int mi = -1;
    for (int i = 0; metric_names[i]; i++) if (!strcmp(metric_names[i], name)) mi = i;
    if (mi < 0) {
        snprintf(c->err, sizeof c->err, "unknown metric '%s' (see `fpemu report --help` for the metrics)", name);
        return NAN;
    }
    if (cls[0] && !strstr("overflow underflow subnormal saturated", name)) {
        snprintf(c->err, sizeof c->err, "%s takes no .class (only overflow, underflow, subnormal, saturated do)", name);
        return NAN;
    }
    /* the run, and for the comparisons an optional reference run */
    char run[2][SUITE_NAME_MAX];
    int nr = 0;
    for (;;) {
        skip_ws(c);
        k = 0;
        while ((isalnum((unsigned char)*c->p) || strchr("._+-", *c->p)) && *c->p && k < SUITE_NAME_MAX - 1) run[nr][k++] = *c->p++;
        run[nr][k] = 0;
        skip_ws(c);
        if (!suite_find_run(c->def, run[nr])) {
            snprintf(c->err, sizeof c->err, "%s(%s): '%s' is not one of the runs", name, run[nr], run[nr]);
            return NAN;
        }
        nr++;
        if (*c->p == ',' && nr < 2) { c->p++; continue; }
        break;
    }
    if (*c->p != ')') { snprintf(c->err, sizeof c->err, "expected ')' after the run name%s in %s(%s", nr > 1 ? "s" : "", name, run[0]); return NAN; }
    c->p++;
    int pair = !strcmp(name, "loss_diff") || !strcmp(name, "mean_diff") || !strcmp(name, "max_dev");
    if (nr == 2 && !pair) {
        snprintf(c->err, sizeof c->err, "%s takes one run (only loss_diff, mean_diff and max_dev take a second, the reference)", name);
        return NAN;
    }
    if (!c->x) return 1;
    const run_data *r = NULL, *ref = &c->x->runs[c->x->base];
    for (int i = 0; i < c->x->nruns; i++) {
        if (!strcmp(c->x->runs[i].name, run[0])) r = &c->x->runs[i];
        if (nr == 2 && !strcmp(c->x->runs[i].name, run[1])) ref = &c->x->runs[i];
    }
    if (!r || !r->have || !ref->have) { c->missing = 1; return NAN; }
    double v = metric(c->x, r, ref, name, cls[0] ? cls : NULL);
    if (c->ex) {
        char nb[64];
        fmt_num(nb, sizeof nb, v);
        fprintf(c->ex, "%s%s%s%s(%s%s%s) = %s", c->nex++ ? ", " : "", name, cls[0] ? "." : "", cls, run[0], nr == 2 ? ", " : "",
                nr == 2 ? run[1] : "", nb);
    }
    return v;
}

static double ev_unary(ev_ctx *c) {
    skip_ws(c);
    if (*c->p == '-') { c->p++; return -ev_unary(c); }
    return ev_primary(c);
}

static double ev_term(ev_ctx *c) {
    double v = ev_unary(c);
    for (;;) {
        skip_ws(c);
        if (c->err[0]) return NAN;
        if (*c->p == '*') { c->p++; v *= ev_unary(c); }
        else if (*c->p == '/') { c->p++; v /= ev_unary(c); }
        else return v;
    }
}

static double ev_expr(ev_ctx *c) {
    double v = ev_term(c);
    for (;;) {
        skip_ws(c);
        if (c->err[0]) return NAN;
        if (*c->p == '+') { c->p++; v += ev_term(c); }
        else if (*c->p == '-') { c->p++; v -= ev_term(c); }
        else return v;
    }
}

/* Evaluate one rule. Returns 1 holds, 0 fails, -1 missing data, -2 syntax
 * error (c->err). */
static int ev_rule(ev_ctx *c, const char *text) {
    c->p = text;
    c->err[0] = 0;
    double a = ev_expr(c);
    skip_ws(c);
    if (c->err[0]) return -2;
    const char *ops[] = {"<=", ">=", "==", "!=", "<", ">"};
    int op = -1;
    for (int i = 0; i < 6; i++)
        if (!strncmp(c->p, ops[i], strlen(ops[i]))) { op = i; c->p += strlen(ops[i]); break; }
    if (op < 0) { snprintf(c->err, sizeof c->err, "expected a comparison (< <= > >= == !=) at '%.20s'", c->p); return -2; }
    double b = ev_expr(c);
    skip_ws(c);
    if (c->err[0]) return -2;
    if (*c->p) { snprintf(c->err, sizeof c->err, "unexpected text at '%.20s'", c->p); return -2; }
    if (c->missing) return -1;
    if (!c->x) return 1;
    if (c->ex) {
        char na[64], nb[64];
        fmt_num(na, sizeof na, a);
        fmt_num(nb, sizeof nb, b);
        fprintf(c->ex, "; %s %s %s", na, ops[op], nb);
    }
    if (isnan(a) || isnan(b)) return 0;
    switch (op) {
    case 0: return a <= b;
    case 1: return a >= b;
    case 2: return a == b;
    case 3: return a != b;
    case 4: return a < b;
    default: return a > b;
    }
}

/* Check every rule of a definition for syntax and run names. */
static int check_rules(const suite_exp *d, char *err, size_t errlen) {
    for (int i = 0; i < d->nexpects; i++) {
        ev_ctx c;
        memset(&c, 0, sizeof c);
        c.def = d;
        if (ev_rule(&c, d->expects[i].text) == -2) {
            snprintf(err, errlen, "%s:%d: expect %s: %s", d->path, d->expects[i].line, d->expects[i].run, c.err);
            return -1;
        }
    }
    return 0;
}

/* ---- gnuplot ---------------------------------------------------------------- */

typedef struct {
    char scripts[4096];
    int no_plots;
    int plots_made, plots_failed;
    int write_failed; /* a plot's data or image could not be written (exit 2) */
} gp_ctx;

static int find_scripts(gp_ctx *g, const char *given) {
    const char *cands[5] = {given, NULL, "reports", NULL, NULL};
    char c1[4200], c3[4200], c4[4200];
    const char *root = getenv("FPEMU_ROOT");
    if (root) { snprintf(c1, sizeof c1, "%s/reports", root); cands[1] = c1; }
    char exe[4096];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l > 0) {
        exe[l] = 0;
        char *s = strrchr(exe, '/');
        if (s) *s = 0;
        snprintf(c3, sizeof c3, "%s/../reports", exe);
        snprintf(c4, sizeof c4, "%s/../share/fpemu/reports", exe);
        cands[3] = c3;
        cands[4] = c4;
    }
    for (int i = 0; i < 5; i++) {
        if (!cands[i]) continue;
        char p[4300];
        snprintf(p, sizeof p, "%s/curves.gp", cands[i]);
        if (is_file(p)) {
            if (!realpath(cands[i], g->scripts)) snprintf(g->scripts, sizeof g->scripts, "%s", cands[i]);
            return 0;
        }
        if (i == 0) return -1; /* --scripts given but wrong */
    }
    return -1;
}

/* Is the file at P a complete PNG (ends with the IEND chunk) or SVG (ends
 * with </svg>)? gnuplot can exit 0 after a short write (a full disk). */
static int complete_image(const char *p, int png) {
    FILE *f = fopen(p, "rb");
    if (!f) return 0;
    unsigned char b[16];
    size_t n = 0;
    if (fseek(f, -(long)sizeof b, SEEK_END) == 0) n = fread(b, 1, sizeof b, f);
    fclose(f);
    if (n != sizeof b) return 0;
    if (png) return !memcmp(b + 8, "IEND\xae\x42\x60\x82", 8);
    size_t e = n;
    while (e && (b[e - 1] == '\n' || b[e - 1] == '\r' || b[e - 1] == ' ')) e--;
    return e >= 6 && !memcmp(b + e - 6, "</svg>", 6);
}

/* Flush a finished file to the disk before it is renamed into place. */
static int sync_file(const char *p) {
    FILE *f = fopen(p, "rb");
    if (!f) return -1;
    int rc = fsync(fileno(f));
    fclose(f);
    return rc;
}

/* Run `gnuplot -e VARS SCRIPT` in DIR. gnuplot writes OUT.tmp.PID.png and
 * .svg; both are renamed to OUT.png and OUT.svg only after it exits 0 and
 * both are complete, so a killed or failed run leaves no half-written
 * image (at most the temporaries, which are removed here on failure). Its
 * log goes to OUT.gp.log.tmp.PID, kept as DIR/OUT.gp.log only if gnuplot
 * failed. Returns 0 or -1. */
static int gnuplot(gp_ctx *g, const char *dir, const char *script, const char *out, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int gnuplot(gp_ctx *g, const char *dir, const char *script, const char *out, const char *fmt, ...) {
    if (g->no_plots || stop_signal) return 0;
    char vars[8192], sp[4300], logp[4400], logt[4500], tmpbase[200];
    snprintf(tmpbase, sizeof tmpbase, "%s.tmp.%ld", out, (long)getpid());
    int k = snprintf(vars, sizeof vars, "dir='%s/'; out='%s'; ", g->scripts, tmpbase);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(vars + k, sizeof vars - (size_t)k, fmt, ap);
    va_end(ap);
    snprintf(sp, sizeof sp, "%s/%s", g->scripts, script);
    snprintf(logp, sizeof logp, "%s/%s.gp.log", dir, out);
    snprintf(logt, sizeof logt, "%s.tmp.%ld", logp, (long)getpid());
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (chdir(dir)) _exit(126);
        FILE *lf = freopen(logt, "w", stderr);
        (void)lf;
        if (!freopen("/dev/null", "w", stdout)) _exit(126);
        execlp("gnuplot", "gnuplot", "-e", vars, sp, (char *)NULL);
        _exit(127);
    }
    int st = 0, killed = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) { st = 0x7f00; break; }
        if (stop_signal && !killed) { kill(pid, SIGTERM); killed = 1; } /* the report is stopping: so does gnuplot */
    }
    int ok = !stop_signal && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    static const char *const ext[2] = {"png", "svg"};
    char tmp[2][4500], dst[2][4500];
    for (int i = 0; i < 2; i++) {
        snprintf(tmp[i], sizeof tmp[i], "%s/%s.%s", dir, tmpbase, ext[i]);
        snprintf(dst[i], sizeof dst[i], "%s/%s.%s", dir, out, ext[i]);
    }
    int complete = ok && complete_image(tmp[0], 1) && complete_image(tmp[1], 0);
    int moved = complete && !sync_file(tmp[0]) && !sync_file(tmp[1]) && !rename(tmp[0], dst[0]) && !rename(tmp[1], dst[1]);
    int e = errno;
    unlink(tmp[0]);
    unlink(tmp[1]);
    if (moved) {
        unlink(logt);
        g->plots_made++;
        return 0;
    }
    if (ok) { /* gnuplot said yes but an image is short or could not be moved: a write error */
        g->write_failed = 1;
        unlink(dst[0]); /* never one image of the pair from this run and a stale other */
        unlink(dst[1]);
        unlink(logt);
        fprintf(stderr, "fpemu report: %s/%s.png, .svg: cannot write: %s\n", dir, out,
                complete ? strerror(e) : "gnuplot's output is incomplete (disk full?)");
        g->plots_failed++;
        return -1;
    }
    g->plots_failed++;
    if (rename(logt, logp)) unlink(logt);
    size_t n;
    char *log = csv_slurp(logp, &n);
    fprintf(stderr, "fpemu report: gnuplot %s for %s/%s failed (exit %d)%s%.600s\n", script, dir, out,
            WIFEXITED(st) ? WEXITSTATUS(st) : -1, log && n ? ":\n" : "", log ? log : "");
    free(log);
    return -1;
}

/* ---- loading experiments ----------------------------------------------------- */

static void exp_free(exp_data *x) {
    for (int i = 0; i < x->nruns; i++) run_free(&x->runs[i]);
    free(x->runs);
    for (int i = 0; i < x->def.nexpects; i++) free(x->explain ? x->explain[i] : NULL);
    free(x->explain);
    free(x->holds);
    suite_free(&x->def);
}

/* Load the experiment in DIR (DIR/experiment.txt and DIR/RUN/). */
static int exp_load(exp_data *x, const char *dir, char *err, size_t errlen) {
    memset(x, 0, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "%s", dir);
    char p[4200], name[SUITE_NAME_MAX];
    snprintf(p, sizeof p, "%s/experiment.txt", dir);
    const char *b = strrchr(dir, '/');
    snprintf(name, sizeof name, "%s", b ? b + 1 : dir);
    if (suite_read(&x->def, p, name, err, errlen)) return -2;
    if (check_rules(&x->def, err, errlen)) return -2;
    x->nruns = x->def.nruns;
    x->runs = calloc((size_t)x->nruns, sizeof *x->runs);
    for (int i = 0; i < x->nruns; i++) {
        run_data *r = &x->runs[i];
        r->def = &x->def.runs[i];
        snprintf(r->name, sizeof r->name, "%s", r->def->name);
        snprintf(r->policy, sizeof r->policy, "%s", r->def->policy);
        snprintf(r->dir, sizeof r->dir, "%s/%s", dir, r->name);
        if (!strcmp(r->name, x->def.baseline)) x->base = i;
        int rc = run_load(r, err, errlen);
        if (rc == -2) return -2;
        if (rc == 1 && is_dir(r->dir)) fprintf(stderr, "fpemu report: %s: no metrics.csv: run %s is reported as not run\n", r->dir, r->name);
    }
    x->window = x->runs[x->base].n / 25;
    if (x->window < 1) x->window = 1;
    /* verdicts */
    x->explain = calloc((size_t)x->def.nexpects + 1, sizeof *x->explain);
    x->holds = calloc((size_t)x->def.nexpects + 1, sizeof *x->holds);
    for (int i = 0; i < x->def.nexpects; i++) {
        ev_ctx c;
        memset(&c, 0, sizeof c);
        c.def = &x->def;
        c.x = x;
        size_t len = 0;
        c.ex = open_memstream(&x->explain[i], &len);
        x->holds[i] = ev_rule(&c, x->def.expects[i].text);
        fclose(c.ex);
    }
    for (int i = 0; i < x->nruns; i++) {
        run_data *r = &x->runs[i];
        int any = 0, fail = 0, miss = !r->have;
        for (int j = 0; j < x->def.nexpects; j++) {
            if (strcmp(x->def.expects[j].run, r->name)) continue;
            any = 1;
            if (x->holds[j] == 0) fail = 1;
            if (x->holds[j] < 0) miss = 1;
        }
        r->verdict = miss && (any || !r->have) ? 3 : !any ? 0 : fail ? 2 : 1;
    }
    return 0;
}

/* ---- the plots of one experiment ------------------------------------------- */

static const char *verdict_word(int v) {
    return v == 1 ? "reproduced" : v == 2 ? "not reproduced" : v == 3 ? "not run" : "";
}

/* A plot's data file DIR/NAME, written atomically (cli_atomic: NAME.tmp.PID,
 * then rename): open_w gives a->f or NULL, close_w returns 0 when the whole
 * file is in place. A failure is reported once here and makes the report's
 * exit status 2; the plot that needs the file is not drawn. */
static FILE *open_w(gp_ctx *g, cli_atomic *a, const char *dir, const char *name) {
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (cli_atomic_open(a, p, "w") == 0) return a->f;
    fprintf(stderr, "fpemu report: %s: cannot write: %s\n", p, strerror(errno));
    g->write_failed = 1;
    a->f = NULL;
    return NULL;
}

static int close_w(gp_ctx *g, cli_atomic *a) {
    if (!a->f) return -1;
    if (cli_atomic_close(a, !ferror(a->f)) == 0) return 0;
    fprintf(stderr, "fpemu report: %s: cannot write: %s\n", a->path, strerror(errno ? errno : EIO));
    g->write_failed = 1;
    return -1;
}

static void put_val(FILE *f, double v) {
    if (isnan(v)) fputs(" NaN", f);
    else if (isinf(v)) fputs(" NaN", f);
    else fprintf(f, " %.9g", v);
}

typedef struct {
    char file[64], alt[160];
    char *caption;   /* HTML-safe text (escaped when written) */
} figure;

typedef struct { figure *v; int n; } figlist;

static void fig_add(figlist *l, const char *file, const char *alt, char *caption) {
    l->v = realloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
    figure *f = &l->v[l->n++];
    snprintf(f->file, sizeof f->file, "%s", file);
    snprintf(f->alt, sizeof f->alt, "%s", alt);
    f->caption = caption;
}

static char *sprintf_alloc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sprintf_alloc(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    return s;
}

static int is_fp8_format(const char *f) {
    return f[0] == 'e' && isdigit((unsigned char)f[1]) && f[2] == 'm' && isdigit((unsigned char)f[3]) && strcmp(f, "e8m0");
}

static void names_of(const exp_data *x, int with_base, char *buf, size_t n, int (*want)(const run_data *)) {
    size_t u = 0;
    buf[0] = 0;
    for (int i = 0; i < x->nruns; i++) {
        const run_data *r = &x->runs[i];
        if (!r->have || (!with_base && i == x->base) || (want && !want(r))) continue;
        u += (size_t)snprintf(buf + u, n - u, "%s%s", u ? " " : "", r->name);
        if (u >= n) break;
    }
}

static int has_scaler(const run_data *r) { return r->n && isfinite(r->max_scale) && (r->max_scale != 1 || r->min_scale != 1 || r->skipped); }

static void make_plots(gp_ctx *g, exp_data *x, figlist *figs) {
    const run_data *b = &x->runs[x->base];
    char names[2048], t[512];
    long nmax = 0;
    for (int i = 0; i < x->nruns; i++) if (x->runs[i].n > nmax) nmax = x->runs[i].n;
    /* order: baseline first */
    int order[256], no = 0;
    order[no++] = x->base;
    for (int i = 0; i < x->nruns && no < 256; i++) if (i != x->base && x->runs[i].have) order[no++] = i;
    if (!b->have) no = 0;
    size_t u = 0;
    names[0] = 0;
    for (int k = 0; k < no; k++) u += (size_t)snprintf(names + u, sizeof names - u, "%s%s", k ? " " : "", x->runs[order[k]].name);
    char title[300];
    snprintf(title, sizeof title, "%s", x->def.title);
    gp_clean(title);
    char *expected = x->def.expected ? x->def.expected : "";
    if (no) {
        /* loss and its difference from the baseline */
        cli_atomic a_loss, a_diff;
        FILE *f = open_w(g, &a_loss, x->dir, "loss.dat"), *fd = f ? open_w(g, &a_diff, x->dir, "loss_diff.dat") : NULL;
        if (f && fd) {
            fprintf(f, "# step, then the %ld-step trailing mean of the training loss of: %s\n", x->window, names);
            fprintf(fd, "# step, then the trailing mean of the loss minus the baseline's (%s) for: %s\n", b->name, names);
            for (long i = 0; i < nmax; i++) {
                double st = i < b->n ? b->step[i] : NAN;
                for (int k = 0; k < no && isnan(st); k++) if (i < x->runs[order[k]].n) st = x->runs[order[k]].step[i];
                fprintf(f, "%.9g", st);
                fprintf(fd, "%.9g", st);
                double bs = i < b->n ? smooth_at(b, i, x->window) : NAN;
                for (int k = 0; k < no; k++) {
                    const run_data *r = &x->runs[order[k]];
                    double v = i < r->n ? smooth_at(r, i, x->window) : NAN;
                    put_val(f, v);
                    put_val(fd, v - bs);
                }
                fputc('\n', f);
                fputc('\n', fd);
            }
        }
        if (f && !fd) cli_atomic_close(&a_loss, 0); /* nothing written: no file */
        int have_loss = f && fd && !close_w(g, &a_loss);
        int have_diff = fd && !close_w(g, &a_diff);
        /* the captions' numbers */
        char *fl = NULL, *fd_s = NULL;
        size_t l1 = 0, l2 = 0;
        FILE *m1 = open_memstream(&fl, &l1), *m2 = open_memstream(&fd_s, &l2);
        int diverged = 0;
        double worst = 0;
        const char *worst_name = NULL;
        for (int k = 0; k < no; k++) {
            const run_data *r = &x->runs[order[k]];
            char nb[64];
            fmt_num(nb, sizeof nb, r->final_loss);
            fprintf(m1, "%s%s %s", k ? "; " : "", r->name, nb);
            if (!isfinite(r->final_loss)) diverged++;
            if (k) {
                double d = r->final_loss - b->final_loss;
                char db[64];
                fmt_num(db, sizeof db, d);
                fprintf(m1, " (%s%s)", d > 0 ? "+" : "", db);
                double md = metric(x, r, b, "mean_diff", NULL);
                fmt_num(db, sizeof db, md);
                fprintf(m2, "%s%s %s%s", k > 1 ? "; " : "", r->name, md > 0 ? "+" : "", db);
                if (isfinite(d) && fabs(d) > fabs(worst)) { worst = d; worst_name = r->name; }
            }
        }
        fclose(m1);
        fclose(m2);
        snprintf(t, sizeof t, "%s: training loss (%ld-step mean)", title, x->window);
        gp_clean(t);
        double lo = INFINITY, hi = 0;
        for (int k = 0; k < no; k++)
            for (long i = 0; i < x->runs[order[k]].n; i++) {
                double v = smooth_at(&x->runs[order[k]], i, x->window);
                if (v > 0 && isfinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
            }
        int logy = hi > 0 && lo > 0 && hi / lo > 8;
        if (have_loss && !gnuplot(g, x->dir, "curves.gp", "loss", "file='loss.dat'; names='%s'; ttl='%s'; yl='training loss'; logy=%d", names, t, logy))
            fig_add(figs, "loss", "training loss curves",
                    sprintf_alloc("Training loss of every run (trailing mean over %ld step%s%s) against the baseline %s "
                                  "(black, thick), same model, seed and data order. Final loss (mean of the last %ld steps): "
                                  "%s.%s%s%s",
                                  x->window, x->window == 1 ? "" : "s", logy ? ", log scale" : "", b->name, final_window(b->n), fl,
                                  diverged ? " Runs whose loss became inf or NaN stop where it did." : "",
                                  expected[0] ? " Expected: " : "", expected));
        snprintf(t, sizeof t, "%s: loss minus the loss of %s", title, b->name);
        gp_clean(t);
        if (have_diff && no > 1 && !gnuplot(g, x->dir, "curves.gp", "loss_diff", "file='loss_diff.dat'; names='%s'; ttl='%s'; yl='loss - %s loss'; zero=1", names, t, b->name))
            fig_add(figs, "loss_diff", "loss difference from the baseline",
                    sprintf_alloc("Difference between each run's smoothed training loss and the baseline's (%s, the zero line): "
                                  "above zero the run lags. Mean difference over the second half of training: %s.%s%s%s"
                                  " Expected: runs that track %s stay near zero; see the claims below.",
                                  b->name, fd_s, worst_name ? " Largest final gap: " : "", worst_name ? worst_name : "",
                                  worst_name ? "." : "", b->name));
        free(fl);
        free(fd_s);
        /* held-out accuracy */
        int any_ev = 0;
        for (int k = 0; k < no; k++) any_ev |= x->runs[order[k]].have_ev && x->runs[order[k]].ev.nrows > 0;
        if (any_ev) {
            /* union of evaluation steps, in order */
            double *steps = NULL;
            long ns = 0;
            for (int k = 0; k < no; k++) {
                const run_data *r = &x->runs[order[k]];
                if (!r->have_ev) continue;
                for (long i = 0; i < r->ev.nrows; i++) {
                    double s = csv_get(&r->ev, i, csv_col(&r->ev, "step"));
                    long j;
                    for (j = 0; j < ns; j++) if (steps[j] == s) break;
                    if (j == ns) { steps = realloc(steps, (size_t)(ns + 1) * sizeof *steps); steps[ns++] = s; }
                }
            }
            for (long i = 1; i < ns; i++)
                for (long j = i; j > 0 && steps[j - 1] > steps[j]; j--) { double tmp = steps[j]; steps[j] = steps[j - 1]; steps[j - 1] = tmp; }
            cli_atomic a_ev;
            f = open_w(g, &a_ev, x->dir, "eval.dat");
            if (f) {
                fprintf(f, "# step, then the held-out accuracy of: %s (? = not evaluated at that step)\n", names);
                for (long i = 0; i < ns; i++) {
                    fprintf(f, "%.9g", steps[i]);
                    for (int k = 0; k < no; k++) {
                        const run_data *r = &x->runs[order[k]];
                        double v = NAN;
                        int found = 0;
                        if (r->have_ev)
                            for (long j = 0; j < r->ev.nrows; j++)
                                if (csv_get(&r->ev, j, csv_col(&r->ev, "step")) == steps[i]) {
                                    v = csv_get(&r->ev, j, csv_col(&r->ev, "eval_accuracy"));
                                    found = 1;
                                }
                        if (found) put_val(f, v);
                        else fputs(" ?", f);
                    }
                    fputc('\n', f);
                }
            }
            int have_ev = f && !close_w(g, &a_ev);
            free(steps);
            char *acc = NULL;
            size_t la = 0;
            FILE *m = open_memstream(&acc, &la);
            for (int k = 0; k < no; k++) {
                char nb[64];
                fmt_num(nb, sizeof nb, x->runs[order[k]].eval_acc);
                fprintf(m, "%s%s %s", k ? "; " : "", x->runs[order[k]].name, nb);
            }
            fclose(m);
            snprintf(t, sizeof t, "%s: held-out accuracy", title);
            gp_clean(t);
            if (have_ev && !gnuplot(g, x->dir, "curves.gp", "eval_acc", "file='eval.dat'; names='%s'; ttl='%s'; yl='held-out accuracy'; pts=1; yr='0:1.02'", names, t))
                fig_add(figs, "eval_acc", "held-out accuracy",
                        sprintf_alloc("Accuracy on the held-out set at each evaluation (int8-dynamic: the quantize_dynamic model). "
                                      "Final: %s. Expected: runs that train well reach the baseline's accuracy (%s).",
                                      acc, b->name));
            free(acc);
        }
    }
    /* the loss scaler */
    names_of(x, 1, names, sizeof names, has_scaler);
    if (names[0]) {
        cli_atomic a_sc;
        FILE *f = open_w(g, &a_sc, x->dir, "scale.dat");
        char *cap = NULL;
        size_t lc = 0;
        FILE *m = open_memstream(&cap, &lc);
        if (f) {
            fprintf(f, "# step, then for each of %s: the loss scale, and the scale at skipped steps only (? elsewhere)\n", names);
            for (long i = 0; i < nmax; i++) {
                /* the step of row i (the metrics' own step column, not i + 1) */
                double st = i < b->n ? b->step[i] : NAN;
                for (int k = 0; k < x->nruns && isnan(st); k++) if (x->runs[k].have && i < x->runs[k].n) st = x->runs[k].step[i];
                fprintf(f, "%.9g", st);
                for (int k = 0; k < x->nruns; k++) {
                    const run_data *r = &x->runs[k];
                    if (!r->have || !has_scaler(r)) continue;
                    if (i < r->n) {
                        put_val(f, r->scale[i]);
                        if (r->skip[i]) put_val(f, r->scale[i]);
                        else fputs(" ?", f);
                    } else fputs(" ? ?", f);
                }
                fputc('\n', f);
            }
        }
        int have_sc = f && !close_w(g, &a_sc);
        for (int k = 0; k < x->nruns; k++) {
            const run_data *r = &x->runs[k];
            if (!r->have || !has_scaler(r)) continue;
            long first_skip = -1;
            for (long i = 0; i < r->n; i++) if (r->skip[i]) { first_skip = (long)r->step[i]; break; }
            fprintf(m, "%s%s: %ld skipped step%s%s", lc ? "; " : "", r->name, r->skipped, r->skipped == 1 ? "" : "s",
                    first_skip > 0 ? " (first at step " : "");
            if (first_skip > 0) fprintf(m, "%ld)", first_skip);
            fprintf(m, ", scale %g at the start, between %g and %g, %g at the end", r->n ? r->scale[0] : NAN, r->min_scale,
                    r->max_scale, r->final_scale);
            fflush(m);
        }
        fclose(m);
        snprintf(t, sizeof t, "%s: loss scale", title);
        gp_clean(t);
        if (have_sc && !gnuplot(g, x->dir, "scale.gp", "scale", "file='scale.dat'; names='%s'; ttl='%s'", names, t))
            fig_add(figs, "scale", "loss scale over steps",
                    sprintf_alloc("The loss scale over steps (log2 axis), crosses at the skipped steps (a gradient was inf or "
                                  "NaN, so the optimizer step was skipped). %s. Expected (torch.amp.GradScaler): the scale "
                                  "starts at init_scale, halves at every skipped step and doubles after growth_interval "
                                  "clean steps; a static scale stays flat.", cap));
        free(cap);
    }
    /* overflow and underflow per tensor class, one plot per run with casts */
    for (int k = 0; k < x->nruns; k++) {
        run_data *r = &x->runs[k];
        if (!r->have_ten || r->ten.nrows == 0 || r->all.n == 0) continue;
        int cs = csv_col(&r->ten, "step"), cc = csv_col(&r->ten, "class"), cn = csv_col(&r->ten, "n"),
            co = csv_col(&r->ten, "overflow"), cu = csv_col(&r->ten, "underflow");
        char fn[128], out[96];
        snprintf(out, sizeof out, "rates_%s", r->name);
        snprintf(fn, sizeof fn, "%s.dat", out);
        cli_atomic a_fn;
        FILE *f = open_w(g, &a_fn, x->dir, fn);
        if (!f) continue;
        fprintf(f, "# step, then for each class of");
        for (int c = 0; c < r->ncls; c++) fprintf(f, " %s", r->cls[c].name);
        fprintf(f, ": underflow and overflow fractions summed over layers (? = zero)\n");
        double minpos = 1;
        int anyev = 0;
        long i = 0;
        while (i < r->ten.nrows) {
            const char *st = csv_cell(&r->ten, i, cs);
            double n[MAX_CLS] = {0}, o[MAX_CLS] = {0}, uu[MAX_CLS] = {0};
            long j = i;
            for (; j < r->ten.nrows && !strcmp(csv_cell(&r->ten, j, cs), st); j++) {
                for (int c = 0; c < r->ncls; c++)
                    if (!strcmp(r->cls[c].name, csv_cell(&r->ten, j, cc))) {
                        double a = csv_get(&r->ten, j, cn), bo = csv_get(&r->ten, j, co), bu = csv_get(&r->ten, j, cu);
                        if (isfinite(a)) n[c] += a;
                        if (isfinite(bo)) o[c] += bo;
                        if (isfinite(bu)) uu[c] += bu;
                    }
            }
            fprintf(f, "%s", st);
            for (int c = 0; c < r->ncls; c++) {
                double fu = n[c] > 0 ? uu[c] / n[c] : 0, fo = n[c] > 0 ? o[c] / n[c] : 0;
                if (fu > 0) { fprintf(f, " %.6g", fu); anyev = 1; if (fu < minpos) minpos = fu; } else fputs(" ?", f);
                if (fo > 0) { fprintf(f, " %.6g", fo); anyev = 1; if (fo < minpos) minpos = fo; } else fputs(" ?", f);
            }
            fputc('\n', f);
            i = j;
        }
        if (close_w(g, &a_fn)) continue;
        char cls[512], quiet[512];
        size_t u1 = 0, u2 = 0;
        cls[0] = quiet[0] = 0;
        const char *worst_u = NULL, *worst_o = NULL;
        double wu = 0, wo = 0;
        for (int c = 0; c < r->ncls; c++) {
            double fu = cls_frac(r, "underflow", r->cls[c].name), fo = cls_frac(r, "overflow", r->cls[c].name);
            u1 += (size_t)snprintf(cls + u1, sizeof cls - u1 > u1 ? sizeof cls - u1 : 0, "%s%s", u1 ? " " : "", r->cls[c].name);
            if (fu == 0 && fo == 0)
                u2 += (size_t)snprintf(quiet + u2, sizeof quiet - u2 > u2 ? sizeof quiet - u2 : 0, "%s%s", u2 ? ", " : "", r->cls[c].name);
            if (fu > wu) { wu = fu; worst_u = r->cls[c].name; }
            if (fo > wo) { wo = fo; worst_o = r->cls[c].name; }
        }
        double ymin = minpos / 3;
        if (ymin < 1e-9) ymin = 1e-9;
        if (ymin > 1e-3) ymin = 1e-3;
        snprintf(t, sizeof t, "%s: %s (%s): overflow and underflow per tensor class", x->def.name, r->name, r->policy);
        gp_clean(t);
        const char *claim = suite_claim(&x->def, r->name);
        char hu[96] = "", ho[96] = "";
        if (worst_u) snprintf(hu, sizeof hu, " (highest in %s: %.3g)", worst_u, wu);
        if (worst_o) snprintf(ho, sizeof ho, " (highest in %s: %.3g)", worst_o, wo);
        double xmin = csv_get(&r->ten, 0, cs), xmax = csv_get(&r->ten, r->ten.nrows - 1, cs);
        if (!(xmax > xmin)) xmax = xmin + 1;
        if (!gnuplot(g, x->dir, "rates.gp", out, "file='%s'; names='%s'; ttl='%s'; ymin=%g; xmin=%g; xmax=%g; none=%d", fn, cls,
                     t, ymin, xmin, xmax, !anyev))
            fig_add(figs, out, "overflow and underflow rates",
                    sprintf_alloc("%s (%s): fraction of each tensor class's elements that became zero (underflow, solid) or "
                                  "overflowed (dashed) when cast to low precision, summed over layers, at the telemetry steps "
                                  "(tensors.csv). Over those steps: underflow %.3g%s, overflow %.3g%s.%s%s%s%s%s",
                                  r->name, r->policy, cls_frac(r, "underflow", NULL), hu, cls_frac(r, "overflow", NULL), ho,
                                  quiet[0] ? " Classes with no event (not drawn on the log axis): " : "", quiet,
                                  quiet[0] ? "." : "", (claim || expected[0]) ? " Expected: " : "", claim ? claim : expected));
    }
    /* fp8 amax and scale histories: the first layer with scaled 8-bit tensors */
    for (int k = 0; k < x->nruns; k++) {
        run_data *r = &x->runs[k];
        if (!r->have_ten || r->ten.nrows == 0) continue;
        int cs = csv_col(&r->ten, "step"), cl = csv_col(&r->ten, "layer"), cc = csv_col(&r->ten, "class"),
            cf = csv_col(&r->ten, "format"), ca = csv_col(&r->ten, "amax"), csc = csv_col(&r->ten, "scale");
        const char *layer = NULL;
        for (long i = 0; i < r->ten.nrows && !layer; i++)
            if (is_fp8_format(csv_cell(&r->ten, i, cf)) && csv_get(&r->ten, i, csc) != 1) layer = csv_cell(&r->ten, i, cl);
        if (!layer) continue;
        char cls[MAX_CLS][32], fmts[MAX_CLS][16];
        int nc = 0;
        for (long i = 0; i < r->ten.nrows; i++) {
            if (strcmp(csv_cell(&r->ten, i, cl), layer) || !is_fp8_format(csv_cell(&r->ten, i, cf))) continue;
            int c;
            for (c = 0; c < nc; c++) if (!strcmp(cls[c], csv_cell(&r->ten, i, cc))) break;
            if (c == nc && nc < MAX_CLS) {
                snprintf(cls[nc], sizeof cls[nc], "%s", csv_cell(&r->ten, i, cc));
                snprintf(fmts[nc], sizeof fmts[nc], "%s", csv_cell(&r->ten, i, cf));
                nc++;
            }
        }
        char fn[128], out[96];
        snprintf(out, sizeof out, "fp8_%s", r->name);
        snprintf(fn, sizeof fn, "%s.dat", out);
        cli_atomic a_fn;
        FILE *f = open_w(g, &a_fn, x->dir, fn);
        if (!f) continue;
        fprintf(f, "# step, then for each fp8 class of layer %s:", layer);
        for (int c = 0; c < nc; c++) fprintf(f, " %s", cls[c]);
        fprintf(f, ": amax and scale\n");
        long i = 0;
        while (i < r->ten.nrows) {
            const char *st = csv_cell(&r->ten, i, cs);
            double am[MAX_CLS], sc[MAX_CLS];
            for (int c = 0; c < nc; c++) am[c] = sc[c] = NAN;
            long j = i;
            for (; j < r->ten.nrows && !strcmp(csv_cell(&r->ten, j, cs), st); j++) {
                if (strcmp(csv_cell(&r->ten, j, cl), layer)) continue;
                for (int c = 0; c < nc; c++) /* a class may have a second, non-fp8 row (a bias in bf16) */
                    if (!strcmp(cls[c], csv_cell(&r->ten, j, cc)) && !strcmp(fmts[c], csv_cell(&r->ten, j, cf))) {
                        am[c] = csv_get(&r->ten, j, ca);
                        sc[c] = csv_get(&r->ten, j, csc);
                    }
            }
            fprintf(f, "%s", st);
            for (int c = 0; c < nc; c++) {
                if (am[c] > 0 && isfinite(am[c])) fprintf(f, " %.9g", am[c]); else fputs(" ?", f);
                if (sc[c] > 0 && isfinite(sc[c])) fprintf(f, " %.9g", sc[c]); else fputs(" ?", f);
            }
            fputc('\n', f);
            i = j;
        }
        if (close_w(g, &a_fn)) continue;
        char cn[512], cf2[512];
        size_t u1 = 0, u2 = 0;
        cn[0] = cf2[0] = 0;
        for (int c = 0; c < nc; c++) {
            u1 += (size_t)snprintf(cn + u1, sizeof cn - u1 > u1 ? sizeof cn - u1 : 0, "%s%s", c ? " " : "", cls[c]);
            u2 += (size_t)snprintf(cf2 + u2, sizeof cf2 - u2 > u2 ? sizeof cf2 - u2 : 0, "%s%s %s", c ? ", " : "", cls[c], fmts[c]);
        }
        snprintf(t, sizeof t, "%s: %s (%s): fp8 amax and scale of layer %s", x->def.name, r->name, r->policy, layer);
        gp_clean(t);
        const char *how =
            strstr(r->policy, "delayed") || strstr(r->policy, "transformer-engine")
                ? "Delayed scaling: the scale comes from the largest amax in the history (amax_history_len steps), so it "
                  "follows a falling amax only after the history rolls, and a rising amax at once only through saturation."
            : strstr(r->policy, "current") || strstr(r->policy, "msamp")
                ? "Current scaling: scale = fmt_max / amax of the same step, so the scale mirrors the amax step by step."
                : "Fine-grained scaling (per row, block or MX block): the scale shown is the smallest of the tensor's scales "
                  "(the one for its largest block), which mirrors the tensor amax.";
        if (!gnuplot(g, x->dir, "fp8.gp", out, "file='%s'; names='%s'; ttl='%s'", fn, cn, t))
            fig_add(figs, out, "fp8 amax and scale history",
                    sprintf_alloc("%s (%s), layer %s: amax (top) and scale (bottom) of the fp8 tensors (%s) at the telemetry "
                                  "steps. %s",
                                  r->name, r->policy, layer, cf2, how));
    }
}

/* ---- writing the report ------------------------------------------------------ */

static void fmt_cell(char *b, size_t n, const char *fmt, double v) {
    if (isnan(v)) snprintf(b, n, "-");
    else if (isinf(v)) snprintf(b, n, "%s", v > 0 ? "inf (diverged)" : "-inf");
    else snprintf(b, n, fmt, v);
}

typedef struct {
    char loss[48], diff[48], acc[48], skip[32], ovf[32], unf[32];
} row_cells;

static void row_of(const exp_data *x, const run_data *r, row_cells *c) {
    const run_data *b = &x->runs[x->base];
    if (!r->have) {
        strcpy(c->loss, "not run"); strcpy(c->diff, "-"); strcpy(c->acc, "-"); strcpy(c->skip, "-");
        strcpy(c->ovf, "-"); strcpy(c->unf, "-");
        return;
    }
    fmt_cell(c->loss, sizeof c->loss, "%.4f", r->final_loss);
    if (r == b) strcpy(c->diff, "(baseline)");
    else if (isinf(r->final_loss) && isfinite(b->final_loss)) strcpy(c->diff, "inf");
    else fmt_cell(c->diff, sizeof c->diff, "%+.4f", r->final_loss - b->final_loss);
    fmt_cell(c->acc, sizeof c->acc, "%.3f", r->eval_acc);
    snprintf(c->skip, sizeof c->skip, "%ld", r->skipped);
    fmt_cell(c->ovf, sizeof c->ovf, "%.3g", r->overflow);
    fmt_cell(c->unf, sizeof c->unf, "%.3g", r->underflow);
}

static void settings_text(const run_data *r, char *b, size_t n) {
    size_t u = 0;
    b[0] = 0;
    for (int j = 0; r->def && j < r->def->nsets && u < n; j++) u += (size_t)snprintf(b + u, n - u, "%s%s", j ? " " : "", r->def->sets[j]);
}

static int write_outputs(const char *out, exp_data *xs, int nx, figlist *figs, const char *title) {
    char p[4400];
    cli_atomic ah, am, ac;
    snprintf(p, sizeof p, "%s/fragment.html", out);
    if (cli_atomic_open(&ah, p, "w")) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    snprintf(p, sizeof p, "%s/fragment.md", out);
    if (cli_atomic_open(&am, p, "w")) { cli_atomic_close(&ah, 0); return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno)); }
    snprintf(p, sizeof p, "%s/summary.csv", out);
    if (cli_atomic_open(&ac, p, "w")) {
        cli_atomic_close(&ah, 0); cli_atomic_close(&am, 0);
        return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    }
    FILE *h = ah.f, *m = am.f, *c = ac.f;
    int nrep = 0, nnot = 0, nrun = 0, nmiss = 0;
    for (int e = 0; e < nx; e++)
        for (int i = 0; i < xs[e].nruns; i++) {
            int v = xs[e].runs[i].verdict;
            nrep += v == 1; nnot += v == 2; nmiss += v == 3; nrun += xs[e].runs[i].have;
        }
    /* header and the rules of the verdicts */
    fprintf(h, "<h2 id=\"training\">");
    html_esc(h, title);
    fprintf(h, "</h2>\n<p>Each experiment trains one model under several precision policies with the same seed and data "
               "order, against a baseline run (normally <code>32-true</code>). Verdicts are computed from the runs' data by "
               "the rules written in each experiment's definition (<code>experiment.txt</code>, shown under each claim): a "
               "claim is <b>reproduced</b> when all its rules hold, <b>not reproduced</b> otherwise, with the numbers. "
               "%d claims reproduced, %d not reproduced, %d not run; %d runs.</p>\n", nrep, nnot, nmiss, nrun);
    fprintf(h, "<details><summary>Metrics used by the rules</summary><ul>\n");
    for (int i = 0; metric_names[i]; i++) {
        fprintf(h, "<li><code>%s(RUN)</code>: ", metric_names[i]);
        html_esc(h, metric_docs[i]);
        fprintf(h, "</li>\n");
    }
    fprintf(h, "</ul></details>\n");
    fprintf(m, "## ");
    md_esc(m, title);
    fprintf(m, "\n\nEach experiment trains one model under several precision policies with the same seed and data order, "
               "against a baseline run; verdicts come from the rules in each experiment's definition, computed on the data "
               "(index.html lists the rules with their numbers). %d claims reproduced, %d not reproduced, %d not run.\n\n",
            nrep, nnot, nmiss);
    /* the summary table */
    const char *cols[] = {"experiment", "run", "policy", "final loss", "diff from baseline", "eval accuracy", "skipped steps",
                          "overflow rate", "underflow rate", "verdict"};
    fprintf(h, "<table>\n<tr>");
    for (int i = 0; i < 10; i++) fprintf(h, "<th>%s</th>", cols[i]);
    fprintf(h, "</tr>\n");
    fprintf(m, "|");
    for (int i = 0; i < 10; i++) fprintf(m, " %s |", cols[i]);
    fprintf(m, "\n|");
    for (int i = 0; i < 10; i++) fprintf(m, " --- |");
    fprintf(m, "\n");
    fprintf(c, "experiment,run,policy,settings,steps,final_loss,loss_diff,eval_loss,eval_acc,skipped,overflow,underflow,verdict\n");
    for (int e = 0; e < nx; e++) {
        exp_data *x = &xs[e];
        for (int i = 0; i < x->nruns; i++) {
            run_data *r = &x->runs[i];
            row_cells rc;
            row_of(x, r, &rc);
            char st[600];
            settings_text(r, st, sizeof st);
            char own[600] = "";
            size_t uo = 0;
            for (int j = r->def ? r->def->ncommon : 0; r->def && j < r->def->nsets && uo < sizeof own; j++)
                uo += (size_t)snprintf(own + uo, sizeof own - uo, " %s", r->def->sets[j]);
            fprintf(h, "<tr><td><a href=\"#exp-%s\">%s</a></td><td>%s</td><td><code>%s</code>%s</td><td>%s</td><td>%s</td>"
                       "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                    x->def.name, x->def.name, r->name, r->policy, own, rc.loss, rc.diff, rc.acc, rc.skip, rc.ovf, rc.unf,
                    r->verdict == 1 ? "<span style=\"color:#080\">reproduced</span>"
                    : r->verdict == 2 ? "<span style=\"color:#b00\">not reproduced</span>"
                    : r->verdict == 3 ? "<span style=\"color:#b60\">not run</span>" : "");
            fprintf(m, "| %s | %s | `%s`%s | %s | %s | %s | %s | %s | %s | %s |\n", x->def.name, r->name, r->policy, own, rc.loss,
                    rc.diff, rc.acc, rc.skip, rc.ovf, rc.unf, verdict_word(r->verdict));
            double b = x->runs[x->base].final_loss;
            fprintf(c, "%s,%s,%s,\"%s\",%ld,%.9g,%.9g,%.9g,%.9g,%ld,%.9g,%.9g,%s\n", x->def.name, r->name, r->policy, st, r->n,
                    r->final_loss, r->have ? r->final_loss - b : NAN, r->eval_loss, r->eval_acc, r->skipped, r->overflow,
                    r->underflow, r->verdict ? verdict_word(r->verdict) : "-");
        }
    }
    fprintf(h, "</table>\n");
    fprintf(m, "\n");
    /* one part per experiment */
    for (int e = 0; e < nx; e++) {
        exp_data *x = &xs[e];
        const char *n = x->def.name;
        fprintf(h, "<h3 id=\"exp-%s\">", n);
        html_esc(h, x->def.title);
        fprintf(h, "</h3>\n<p>Model <code>%s</code>, %ld steps, seed %llu, baseline <code>%s</code>. ", x->def.model,
                x->def.steps, x->def.seed, x->def.baseline);
        html_esc(h, x->def.about);
        fprintf(h, "</p>\n");
        if (x->def.expected) {
            fprintf(h, "<p><b>Expected:</b> ");
            html_esc(h, x->def.expected);
            fprintf(h, "</p>\n");
        }
        fprintf(m, "### ");
        md_esc(m, x->def.title);
        fprintf(m, "\n\nModel `%s`, %ld steps, seed %llu, baseline `%s`. %s\n\n", x->def.model, x->def.steps, x->def.seed,
                x->def.baseline, x->def.about ? x->def.about : "");
        if (x->def.expected) fprintf(m, "Expected: %s\n\n", x->def.expected);
        /* runs */
        fprintf(h, "<table>\n<tr><th>run</th><th>policy and settings</th><th>command</th></tr>\n");
        for (int i = 0; i < x->nruns; i++) {
            run_data *r = &x->runs[i];
            char st[600], args[2048];
            settings_text(r, st, sizeof st);
            suite_train_args(&x->def, r->def, args, sizeof args);
            fprintf(h, "<tr><td>%s%s</td><td><code>%s</code> ", r->name, i == x->base ? " (baseline)" : "", r->policy);
            html_esc(h, st);
            fprintf(h, "</td><td><code>fpemu train ");
            html_esc(h, args);
            fprintf(h, "</code>%s</td></tr>\n", r->have ? "" : " <span style=\"color:#b60\">(no data: not run)</span>");
        }
        fprintf(h, "</table>\n");
        /* claims and verdicts */
        if (x->def.nexpects || x->def.nclaims) {
            fprintf(h, "<ul>\n");
            for (int i = 0; i < x->nruns; i++) {
                run_data *r = &x->runs[i];
                const char *cl = suite_claim(&x->def, r->name);
                int any = 0;
                for (int j = 0; j < x->def.nexpects; j++) any |= !strcmp(x->def.expects[j].run, r->name);
                if (!cl && !any) continue;
                fprintf(h, "<li><b>%s</b>: ", r->name);
                html_esc(h, cl ? cl : "");
                fprintf(h, " &rarr; <b style=\"color:%s\">%s</b>\n<ul>\n",
                        r->verdict == 1 ? "#080" : r->verdict == 2 ? "#b00" : "#b60", any ? verdict_word(r->verdict) : "no rule");
                fprintf(m, "- **%s**: %s → **%s**\n", r->name, cl ? cl : "", any ? verdict_word(r->verdict) : "no rule");
                for (int j = 0; j < x->def.nexpects; j++) {
                    if (strcmp(x->def.expects[j].run, r->name)) continue;
                    const char *hw = x->holds[j] == 1 ? "holds" : x->holds[j] == 0 ? "fails" : "no data";
                    fprintf(h, "<li><code>");
                    html_esc(h, x->def.expects[j].text);
                    fprintf(h, "</code>: %s (", hw);
                    html_esc(h, x->explain[j]);
                    fprintf(h, ")</li>\n");
                    fprintf(m, "  - `%s`: %s (%s)\n", x->def.expects[j].text, hw, x->explain[j]);
                }
                fprintf(h, "</ul></li>\n");
            }
            fprintf(h, "</ul>\n");
            fprintf(m, "\n");
        }
        /* figures */
        for (int i = 0; i < figs[e].n; i++) {
            figure *f = &figs[e].v[i];
            fprintf(h, "<figure><a href=\"%s/%s.svg\"><img src=\"%s/%s.png\" alt=\"%s\" width=\"900\"></a>\n<figcaption>", n,
                    f->file, n, f->file, f->alt);
            html_esc(h, f->caption);
            fprintf(h, "</figcaption></figure>\n");
            fprintf(m, "![%s](%s/%s.png)\n\n%s\n\n", f->alt, n, f->file, f->caption ? f->caption : "");
        }
        fprintf(h, "<p>Data: <a href=\"%s/experiment.txt\">experiment.txt</a> (the definition)", n);
        for (int i = 0; i < x->nruns; i++)
            if (x->runs[i].have)
                fprintf(h, ", %s: <a href=\"%s/%s/metrics.csv\">metrics.csv</a>%s%s%s%s%s%s", x->runs[i].name, n, x->runs[i].name,
                        x->runs[i].have_ev ? " <a href=\"" : "", x->runs[i].have_ev ? n : "", x->runs[i].have_ev ? "/" : "",
                        x->runs[i].have_ev ? x->runs[i].name : "", x->runs[i].have_ev ? "/eval.csv\">eval.csv</a>" : "",
                        x->runs[i].have_ten ? "" : "");
        fprintf(h, ".</p>\n");
    }
    int ok = !ferror(h) && !ferror(m) && !ferror(c);
    int r1 = cli_atomic_close(&ah, ok), r2 = cli_atomic_close(&am, ok), r3 = cli_atomic_close(&ac, ok);
    if (!ok || r1 || r2 || r3) return cli_error(SUB, "%s: cannot write the report files: %s", out, strerror(errno));
    /* standalone pages around the fragments */
    char fp[4400];
    snprintf(fp, sizeof fp, "%s/fragment.html", out);
    size_t fl;
    char *frag = csv_slurp(fp, &fl);
    snprintf(p, sizeof p, "%s/index.html", out);
    cli_atomic ai;
    if (frag && !cli_atomic_open(&ai, p, "w")) {
        fprintf(ai.f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
        html_esc(ai.f, title);
        fprintf(ai.f, "</title>\n<style>body{font-family:sans-serif;margin:2em auto;max-width:1100px;line-height:1.4;padding:0 1em}"
                      "table{border-collapse:collapse;font-size:90%%;margin:1em 0}td,th{border:1px solid #bbb;padding:2px 6px;"
                      "text-align:left}th{background:#f0f0f0}figure{margin:1.5em 0}figure img{max-width:100%%;height:auto;"
                      "border:1px solid #eee}figcaption{font-size:92%%;color:#333}code{background:#f6f6f6;padding:0 2px}</style>"
                      "</head><body>\n%s</body></html>\n", frag);
        cli_atomic_close(&ai, !ferror(ai.f));
    }
    free(frag);
    snprintf(fp, sizeof fp, "%s/fragment.md", out);
    frag = csv_slurp(fp, &fl);
    snprintf(p, sizeof p, "%s/summary.md", out);
    if (frag && !cli_atomic_open(&ai, p, "w")) {
        fputs(frag, ai.f);
        cli_atomic_close(&ai, !ferror(ai.f));
    }
    free(frag);
    return 0;
}

/* ---- collecting and planning ------------------------------------------------- */

static const char *const run_files[] = {"metrics.csv", "eval.csv", "tensors.csv", "checkpoint.bin", "summary.json", NULL};

/* Copy a run folder's result files into DST (created). */
static int copy_run(const char *src, const char *dst) {
    if (is_dir(dst) && same_path(src, dst)) return 0;
    if (mkdir_p(dst)) return cli_error(SUB, "%s: cannot create: %s", dst, strerror(errno));
    for (int i = 0; run_files[i]; i++) {
        char a[4400], b[4400];
        snprintf(a, sizeof a, "%s/%s", src, run_files[i]);
        snprintf(b, sizeof b, "%s/%s", dst, run_files[i]);
        if (!is_file(a)) continue;
        if (copy_file(a, b)) return cli_error(SUB, "%s: cannot copy to %s: %s", a, b, strerror(errno));
    }
    return 0;
}

/* Materialise experiment DEF's folder OUT/NAME from the run cache. */
static int collect_suite_exp(const suite_exp *d, const char *cache, const char *out) {
    char dir[4400], p[4600];
    snprintf(dir, sizeof dir, "%s/%s", out, d->name);
    if (mkdir_p(dir)) return cli_error(SUB, "%s: cannot create: %s", dir, strerror(errno));
    snprintf(p, sizeof p, "%s/experiment.txt", dir);
    if (!same_path(d->path, p) && copy_file(d->path, p)) return cli_error(SUB, "%s: cannot copy to %s: %s", d->path, p, strerror(errno));
    for (int i = 0; i < d->nruns; i++) {
        char src[4400], dst[4600];
        snprintf(src, sizeof src, "%s/%s", cache, d->runs[i].key);
        snprintf(dst, sizeof dst, "%s/%s", dir, d->runs[i].name);
        if (!is_dir(src)) {
            fprintf(stderr, "fpemu report: %s/%s: no results in %s (run it with `make experiments`)\n", d->name, d->runs[i].name, src);
            continue;
        }
        if (copy_run(src, dst)) return 2;
    }
    return 0;
}

/* Read a string field of a run's summary.json with a JSON parser (cJSON):
 * the whole file must be one JSON object (a file cut short or with bytes
 * after the object is refused), and the field a string that fits in val. */
static int json_field(const char *dir, const char *key, char *val, size_t n) {
    char p[4400];
    snprintf(p, sizeof p, "%s/summary.json", dir);
    char *s = csv_slurp(p, NULL);
    if (!s) return -1;
    cJSON *doc = cJSON_ParseWithOpts(s, NULL, 1);
    free(s);
    const cJSON *f = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, key) : NULL;
    int rc = -1;
    if (cJSON_IsString(f) && strlen(f->valuestring) < n) {
        snprintf(val, n, "%s", f->valuestring);
        rc = 0;
    }
    cJSON_Delete(doc);
    return rc;
}

/* Plain run folders given on the command line: one experiment "runs". */
static int collect_adhoc(char **dirs, int n, const char *out) {
    char dir[4400], p[4600];
    snprintf(dir, sizeof dir, "%s/runs", out);
    if (mkdir_p(dir)) return cli_error(SUB, "%s: cannot create: %s", dir, strerror(errno));
    char model[64] = "", names[256][SUITE_NAME_MAX], pols[256][SUITE_NAME_MAX];
    int base = -1;
    if (n > 256) return cli_error(SUB, "at most 256 run folders, got %d", n);
    for (int i = 0; i < n; i++) {
        char m[64];
        if (json_field(dirs[i], "policy", pols[i], sizeof pols[i]) || json_field(dirs[i], "model", m, sizeof m))
            return cli_error(SUB, "%s/summary.json: cannot read the model and policy (expected a folder written by `fpemu train --out`)", dirs[i]);
        if (!model[0]) snprintf(model, sizeof model, "%s", m);
        /* the name: the folder's base name, cleaned */
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s", dirs[i]);
        size_t l = strlen(tmp);
        while (l > 1 && tmp[l - 1] == '/') tmp[--l] = 0;
        const char *b = strrchr(tmp, '/');
        b = b ? b + 1 : tmp;
        int k = 0;
        for (; *b && k < SUITE_NAME_MAX - 12; b++) names[i][k++] = (isalnum((unsigned char)*b) || strchr("._+-", *b)) ? *b : '_';
        names[i][k] = 0;
        if (!k) snprintf(names[i], sizeof names[i], "run%d", i + 1);
        for (int j = 0; j < i; j++)
            if (!strcmp(names[j], names[i])) { /* room for "-N" is kept above */
                size_t u = strlen(names[i]);
                snprintf(names[i] + u, sizeof names[i] - u, "-%d", i + 1);
                break;
            }
        if (base < 0 && !strcmp(pols[i], "32-true")) base = i;
    }
    if (base < 0) base = 0;
    snprintf(p, sizeof p, "%s/experiment.txt", dir);
    cli_atomic a;
    if (cli_atomic_open(&a, p, "w")) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    fprintf(a.f, "# written by fpemu report for the run folders given on its command line\n"
                 "title: Runs given on the command line\nmodel: %s\nbaseline: %s\n", model, names[base]);
    for (int i = 0; i < n; i++) fprintf(a.f, "run %s: %s\n", names[i], pols[i]);
    if (cli_atomic_close(&a, !ferror(a.f))) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    for (int i = 0; i < n; i++) {
        char dst[sizeof dir + SUITE_NAME_MAX + 2]; /* dir, '/', a name: never truncated */
        snprintf(dst, sizeof dst, "%s/%.*s", dir, SUITE_NAME_MAX - 1, names[i]);
        if (copy_run(dirs[i], dst)) return 2;
    }
    return 0;
}

static double model_cost(const char *m) { return !strcmp(m, "tiny-transformer") ? 40 : !strcmp(m, "deep-mlp") ? 5 : 1; }

/* Rough relative cost of a run's policy (f32/f64 GEMMs are native; low
 * precision goes through the emulator; exact accumulation is slowest). */
static double policy_cost(const suite_run *r) {
    for (int j = 0; j < r->nsets; j++)
        if (!strcmp(r->sets[j], "mma=exact")) return 20;
    if (!strcmp(r->policy, "32-true") || !strcmp(r->policy, "64-true") || !strcmp(r->policy, "int8-dynamic")) return 0.1;
    return strstr(r->policy, "fp8") || strstr(r->policy, "mx") || strstr(r->policy, "msamp") || strstr(r->policy, "transformer") ? 1.5 : 1;
}

/* ---- the plan's make and shell text ----------------------------------------- */

/* A cache folder name the plan may write as it is: letters, digits, . _ + -
 * (not first . or -). */
static int plain_name(const char *s) {
    if (!*s || *s == '.' || *s == '-') return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("._+-", *s)) return 0;
    return 1;
}

/* A word of a recipe, for the shell and for make: as it is if it holds
 * only characters neither treats specially (and ALWAYS is 0), else in
 * single quotes (' as '\'') with $ doubled for make. Returns 0, or -1 for a
 * control character (a newline would end the recipe line: refused). */
static int sh_word(FILE *f, const char *s, int always) {
    int plain = *s && !always;
    for (const char *q = s; *q; q++) {
        if ((unsigned char)*q < 0x20 || *q == 0x7f) return -1;
        if (!isalnum((unsigned char)*q) && !strchr("_@%+=:,./-", *q)) plain = 0;
    }
    if (plain) { fputs(s, f); return 0; }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else if (*s == '$') fputs("$$", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
    return 0;
}

/* Text in a make comment: a control character (a newline would end the
 * comment) or a backslash (one at the end continues it) becomes '?'. */
static void comment_text(FILE *f, const char *s) {
    for (; *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f || *s == '\\' ? '?' : *s, f);
}

static int plan(char **files, int nfiles, const char *cache) {
    suite_exp *d = calloc((size_t)nfiles, sizeof *d);
    char err[8192];
    for (int i = 0; i < nfiles; i++) {
        if (suite_read(&d[i], files[i], NULL, err, sizeof err) || check_rules(&d[i], err, sizeof err)) {
            for (int j = 0; j < i; j++) suite_free(&d[j]);
            free(d);
            return cli_error(SUB, "%s", err);
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(d[j].name, d[i].name)) {
                cli_error(SUB, "%s and %s define the same experiment name '%s'", d[j].path, d[i].path, d[i].name);
                for (int k = 0; k <= i; k++) suite_free(&d[k]);
                free(d);
                return 2;
            }
    }
    /* unique runs, most expensive first (so that make -j packs them well) */
    typedef struct { const suite_exp *e; const suite_run *r; double cost; char users[512]; } urun;
    urun *u = NULL;
    int nu = 0;
    for (int i = 0; i < nfiles; i++)
        for (int j = 0; j < d[i].nruns; j++) {
            const suite_run *r = &d[i].runs[j];
            int k;
            for (k = 0; k < nu; k++) if (!strcmp(u[k].r->key, r->key)) break;
            if (k == nu) {
                u = realloc(u, (size_t)(nu + 1) * sizeof *u);
                u[nu].e = &d[i];
                u[nu].r = r;
                u[nu].cost = model_cost(d[i].model) * (double)d[i].steps * policy_cost(r);
                u[nu].users[0] = 0;
                nu++;
            }
            size_t l = strlen(u[k].users);
            snprintf(u[k].users + l, sizeof u[k].users - l, "%s%s/%s", l ? " " : "", d[i].name, r->name);
        }
    for (int i = 1; i < nu; i++)
        for (int j = i; j > 0 && u[j - 1].cost < u[j].cost; j--) { urun t = u[j]; u[j] = u[j - 1]; u[j - 1] = t; }
    /* The plan is make and shell text: no path goes into it. Its targets
     * are relative to the run cache (make runs it there, -C CACHE), the
     * keys are checked to be plain names, and every other word of a
     * recipe is quoted for the shell and for make (sh_word); a path in a
     * comment has its control characters and backslashes replaced. */
    int bad = -1;
    for (int k = 0; k < nu && bad < 0; k++)
        if (!plain_name(u[k].r->key)) bad = k;
    if (bad >= 0) {
        int rc = cli_error(SUB, "%s:%d: run %s: its cache folder name '%s' is not a plain name (letters, digits, . _ + -)",
                           u[bad].e->path, u[bad].r->line, u[bad].r->name, u[bad].r->key);
        free(u);
        for (int i = 0; i < nfiles; i++) suite_free(&d[i]);
        free(d);
        return rc;
    }
    char *text = NULL;
    size_t tlen = 0;
    FILE *o = open_memstream(&text, &tlen);
    int qbad = 0;
    fprintf(o, "# Generated by `fpemu report --plan` from:");
    for (int i = 0; i < nfiles; i++) { fputc(' ', o); comment_text(o, files[i]); }
    fprintf(o, "\n# for the run cache ");
    comment_text(o, cache);
    fprintf(o, ". Do not edit. Run it in that folder: make -C CACHE -f plan.mk suite-runs\n"
               "# (its targets are relative to it). Variables: SUITE_FPEMU (the program), SUITE_DEP (what a run depends on).\n"
               "SUITE_FPEMU ?= fpemu\n\nSUITE_RUNS :=");
    for (int k = 0; k < nu; k++) fprintf(o, " \\\n  %s/summary.json", u[k].r->key);
    fprintf(o, "\n\n.PHONY: suite-runs\nsuite-runs: $(SUITE_RUNS)\n\t@echo \"  SUITE   %d runs done (results in $$(pwd))\"\n\n", nu);
    for (int k = 0; k < nu; k++) {
        const suite_exp *e = u[k].e;
        const suite_run *r = u[k].r;
        const char *key = r->key;
        /* the command's words */
        char num[2][32], *args = NULL, *msg = NULL;
        size_t al = 0, ml = 0;
        snprintf(num[0], sizeof num[0], "%ld", e->steps);
        snprintf(num[1], sizeof num[1], "%llu", e->seed);
        FILE *a = open_memstream(&args, &al);
        const char *w[] = {"--model", e->model, "--policy", r->policy, "--steps", num[0], "--seed", num[1]};
        for (size_t j = 0; j < sizeof w / sizeof w[0]; j++) { if (j) fputc(' ', a); qbad |= sh_word(a, w[j], 0); }
        for (int j = 0; j < r->nsets; j++) { fputs(" --set ", a); qbad |= sh_word(a, r->sets[j], 0); }
        fclose(a);
        fprintf(o, "%s/summary.json: $(SUITE_DEP)\n\t@echo ", key);
        FILE *mm = open_memstream(&msg, &ml);
        fprintf(mm, "  TRAIN   [%d/%d] %s (%s %s, %ld steps)", k + 1, nu, u[k].users, e->model, r->policy, e->steps);
        fclose(mm);
        qbad |= sh_word(o, msg, 1);
        free(msg);
        fprintf(o, "\n\t@rm -rf %s.tmp; t0=$$(date +%%s.%%N); \\\n", key);
        fprintf(o, "\t  $(SUITE_FPEMU) train %s --out %s.tmp --quiet >%s.log 2>&1 || { cat %s.log >&2; echo ", args, key, key, key);
        mm = open_memstream(&msg, &ml);
        fprintf(mm, "suite: run %s failed (command: fpemu train %s)", u[k].users, args);
        fclose(mm);
        qbad |= sh_word(o, msg, 1);
        free(msg);
        free(args);
        fprintf(o, " >&2; exit 1; }; \\\n");
        fprintf(o, "\t  rm -rf %s && mv %s.tmp %s && rm -f %s.log; \\\n", key, key, key, key);
        mm = open_memstream(&msg, &ml);
        fprintf(mm, "  DONE    [%d/%d] %s in ", k + 1, nu, u[k].users);
        fclose(mm);
        fprintf(o, "\t  echo ");
        qbad |= sh_word(o, msg, 1);
        free(msg);
        fprintf(o, "\"$$(awk -v a=$$t0 -v b=$$(date +%%s.%%N) 'BEGIN { printf \"%%.1f\", b - a }')\"' s'\n\n");
    }
    fclose(o);
    int rc = 0;
    if (qbad) rc = cli_error(SUB, "--plan: a run's settings hold a control character (a newline?), which no makefile line can carry");
    else fwrite(text, 1, tlen, stdout);
    free(text);
    free(u);
    for (int i = 0; i < nfiles; i++) suite_free(&d[i]);
    free(d);
    return rc;
}

/* ---- checking the inputs before anything is written -------------------------- */

static int validate_run(const char *dir) {
    run_data r;
    memset(&r, 0, sizeof r);
    snprintf(r.dir, sizeof r.dir, "%s", dir);
    char err[8192];
    int rc = run_load(&r, err, sizeof err);
    run_free(&r);
    return rc == -2 ? cli_error(SUB, "%s", err) : 0;
}

static int validate_exp(const char *defpath, const char *name, const char *rundir_fmt_base, int from_cache) {
    suite_exp d;
    char err[8192];
    if (suite_read(&d, defpath, name, err, sizeof err) || check_rules(&d, err, sizeof err)) {
        if (d.path[0]) suite_free(&d);
        return cli_error(SUB, "%s", err);
    }
    int rc = 0;
    for (int j = 0; j < d.nruns && !rc; j++) {
        char dir[4400];
        snprintf(dir, sizeof dir, "%s/%s", rundir_fmt_base, from_cache ? d.runs[j].key : d.runs[j].name);
        if (is_dir(dir)) rc = validate_run(dir);
    }
    suite_free(&d);
    return rc;
}

/* Every definition, rule and CSV the report will read, so that bad input
 * exits 2 before --out is created or touched. */
static int validate_inputs(const char *suite, const char *runs, char **paths, int np) {
    char err[8192];
    if (suite) {
        char **files;
        int nf = suite_list(suite, &files, err, sizeof err);
        if (nf < 0) return cli_error(SUB, "--suite %s", err);
        int rc = 0;
        for (int i = 0; i < nf; i++) {
            if (!rc) rc = validate_exp(files[i], NULL, runs, 1);
            free(files[i]);
        }
        free(files);
        if (rc) return rc;
    }
    for (int i = 0; i < np; i++) {
        char p[4400];
        snprintf(p, sizeof p, "%s/experiment.txt", paths[i]);
        const char *b = strrchr(paths[i], '/');
        char name[SUITE_NAME_MAX * 2];
        snprintf(name, sizeof name, "%s", b && b[1] ? b + 1 : paths[i]);
        if (is_file(p)) {
            if (validate_exp(p, name, paths[i], 0)) return 2;
            continue;
        }
        if (!is_dir(paths[i])) return cli_error(SUB, "%s: no such folder", paths[i]);
        snprintf(p, sizeof p, "%s/metrics.csv", paths[i]);
        if (is_file(p)) {
            char v[64];
            if (validate_run(paths[i])) return 2;
            if (json_field(paths[i], "policy", v, sizeof v) || json_field(paths[i], "model", v, sizeof v))
                return cli_error(SUB, "%s/summary.json: cannot read the model and policy (expected a folder written by `fpemu train --out`)", paths[i]);
            continue;
        }
        DIR *dd = opendir(paths[i]);
        struct dirent *de;
        int found = 0;
        while (dd && (de = readdir(dd))) {
            if (de->d_name[0] == '.') continue;
            char q[4600], e[4700];
            snprintf(q, sizeof q, "%s/%s", paths[i], de->d_name);
            snprintf(e, sizeof e, "%s/experiment.txt", q);
            if (!is_file(e)) continue;
            found = 1;
            if (validate_exp(e, de->d_name, q, 0)) { closedir(dd); return 2; }
        }
        if (dd) closedir(dd);
        if (!found)
            return cli_error(SUB, "%s: neither a run folder (metrics.csv), an experiment folder (experiment.txt) nor a folder of experiment folders", paths[i]);
    }
    return 0;
}

/* ---- the staging folder of --out ------------------------------------------- */

static int rm_entry(const char *p, const struct stat *st, int type, struct FTW *ftw) {
    (void)st; (void)ftw;
    return (type == FTW_DP ? rmdir(p) : unlink(p)) && errno != ENOENT ? -1 : 0;
}

/* Remove the tree at P (symbolic links are removed, never followed). */
static int rm_tree(const char *p) {
    struct stat st;
    if (lstat(p, &st)) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlink(p);
    return nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void stop_handler(int sig) { stop_signal = sig; }

/* ON: SIGINT, SIGTERM and SIGHUP set stop_signal (no SA_RESTART: a wait
 * returns EINTR); off: their default action again. */
static void stage_signals(int on) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on ? stop_handler : SIG_DFL;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

typedef struct {
    char final[4096];  /* --out, without trailing slashes */
    char parent[4096], base[1024];
    char stage[4096];  /* PARENT/BASE.tmp.PID */
    char top[4096];    /* the first folder above --out made here ("" if none) */
} out_stage;

/* Remove what killed reports left beside --out: PARENT/BASE.tmp.PID (the
 * staging folder, with gnuplot's and the plot data's temporaries in it) of
 * a PID that is not running; PARENT/BASE.old.PID (an earlier report being
 * swapped out) too, or, if --out itself is missing, it is put back. */
static void stage_clean(const out_stage *o) {
    DIR *d = opendir(o->parent);
    if (!d) return;
    size_t l = strlen(o->base);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, o->base, l)) continue;
        int old = !strncmp(e->d_name + l, ".old.", 5);
        if (!old && strncmp(e->d_name + l, ".tmp.", 5)) continue;
        const char *q = e->d_name + l + 5;
        char *end;
        errno = 0;
        long pid = strtol(q, &end, 10);
        if (q[0] < '1' || q[0] > '9' || *end || errno || pid <= 0 || (long)(pid_t)pid != pid) continue;
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* a live report's */
        char p[5400];
        snprintf(p, sizeof p, "%s/%s", o->parent, e->d_name);
        struct stat st;
        if (old && lstat(o->final, &st) && errno == ENOENT && rename(p, o->final) == 0) continue;
        rm_tree(p);
    }
    closedir(d);
}

/* Undo the folders above --out that stage_open made. */
static void stage_unmake_parents(const out_stage *o) {
    if (!o->top[0]) return;
    char q[4096];
    snprintf(q, sizeof q, "%s", o->parent);
    for (;;) {
        rmdir(q);
        if (!strcmp(q, o->top)) break;
        char *sl = strrchr(q, '/');
        if (!sl || sl == q) break;
        *sl = 0;
    }
}

/* Make the staging folder for --out OUT. 0, or 2 with a message. */
static int stage_open(out_stage *o, const char *out) {
    memset(o, 0, sizeof *o);
    if (strlen(out) >= sizeof o->final - 1) return cli_error(SUB, "--out %.80s...: path too long", out);
    snprintf(o->final, sizeof o->final, "%s", out);
    size_t l = strlen(o->final);
    while (l > 1 && o->final[l - 1] == '/') o->final[--l] = 0;
    const char *sl = strrchr(o->final, '/');
    const char *b = sl ? sl + 1 : o->final;
    if (!*b || !strcmp(b, ".") || !strcmp(b, "..") || strlen(b) >= sizeof o->base - 24)
        return cli_error(SUB, "--out %s: expected a folder's path that ends in its name (not /, . or ..)", out);
    snprintf(o->base, sizeof o->base, "%s", b);
    if (!sl) snprintf(o->parent, sizeof o->parent, ".");
    else if (sl == o->final) snprintf(o->parent, sizeof o->parent, "/");
    else snprintf(o->parent, sizeof o->parent, "%.*s", (int)(sl - o->final), o->final);
    int k = snprintf(o->stage, sizeof o->stage, "%s/%s.tmp.%ld", o->parent, o->base, (long)getpid());
    if (k < 0 || (size_t)k + 64 >= sizeof o->stage) return cli_error(SUB, "--out %.80s...: path too long", out);
    struct stat st;
    if (lstat(o->final, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return cli_error(SUB, "--out %s: exists and is not a folder", out);
        /* a folder with files in it must be an earlier report (it is replaced whole) */
        DIR *d = opendir(o->final);
        int empty = 1;
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) { empty = 0; break; }
        if (d) closedir(d);
        char p1[4200], p2[4200];
        snprintf(p1, sizeof p1, "%s/summary.csv", o->final);
        snprintf(p2, sizeof p2, "%s/fragment.html", o->final);
        if (!empty && !is_file(p1) && !is_file(p2))
            return cli_error(SUB, "--out %s: a folder that holds files but no report (no summary.csv, no fragment.html): the "
                                  "report replaces its --out whole, so give a new or empty folder, or an earlier report's", out);
    }
    /* the first component above --out that does not exist yet */
    if (strcmp(o->parent, ".") && strcmp(o->parent, "/")) {
        char q[4096];
        snprintf(q, sizeof q, "%s", o->parent);
        for (char *p = q + 1;; p++) {
            char c = *p;
            if (c != '/' && c) continue;
            *p = 0;
            if (!is_dir(q)) { snprintf(o->top, sizeof o->top, "%s", q); break; }
            *p = c;
            if (!c) break;
        }
        if (mkdir_p(o->parent)) {
            int e = errno;
            stage_unmake_parents(o);
            return cli_error(SUB, "--out %s: cannot create %s: %s", out, o->parent, strerror(e));
        }
    }
    stage_clean(o);
    stage_signals(1);
    if (mkdir(o->stage, 0777)) {
        int e = errno;
        stage_signals(0);
        stage_unmake_parents(o);
        return cli_error(SUB, "--out %s: cannot create %s: %s", out, o->stage, strerror(e));
    }
    return 0;
}

static void sync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) { fsync(fd); close(fd); }
}

/* COMMIT: put the staging folder in place of --out (renamed over a missing
 * or empty one; swapped with an earlier report, which is then removed).
 * Else remove it. Returns 0, or 2 with a message. */
static int stage_close(out_stage *o, int commit) {
    int rc = 0;
    if (commit && !stop_signal) {
        sync_dir(o->stage);
        if (rename(o->stage, o->final) == 0) {
            sync_dir(o->parent);
            return 0;
        }
        if (errno == EEXIST || errno == ENOTEMPTY) {
#ifdef SYS_renameat2
            if (syscall(SYS_renameat2, AT_FDCWD, o->stage, AT_FDCWD, o->final, 1 /* RENAME_EXCHANGE */) == 0) {
                sync_dir(o->parent);
                rm_tree(o->stage); /* the earlier report, under the staging name */
                return 0;
            }
#endif
            /* no atomic exchange here: move the earlier report aside first */
            char old[5300];
            snprintf(old, sizeof old, "%s/%s.old.%ld", o->parent, o->base, (long)getpid());
            if (rename(o->final, old) == 0) {
                if (rename(o->stage, o->final) == 0) {
                    sync_dir(o->parent);
                    rm_tree(old);
                    return 0;
                }
                int e = errno;
                rename(old, o->final);
                errno = e;
            }
        }
        rc = cli_error(SUB, "--out %s: cannot put the report in place (from %s): %s", o->final, o->stage, strerror(errno));
    }
    rm_tree(o->stage);
    stage_unmake_parents(o);
    return rc;
}

/* ---- main --------------------------------------------------------------------- */

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu report --out DIR [--title T] [--scripts DIR] [--no-plots] PATH...\n"
            "       fpemu report --out DIR --suite DEFS --runs CACHE [--title T] [--scripts DIR] [--no-plots]\n"
            "       fpemu report --plan --suite DEFS --runs CACHE\n\n"
            "Write the training report to DIR: per experiment, copies of the runs' CSVs, gnuplot plots (PNG and SVG:\n"
            "loss against the baseline and the difference, held-out accuracy, overflow and underflow per tensor class,\n"
            "the loss scale with skipped steps, fp8 amax and scale histories), and DIR/index.html, summary.md,\n"
            "summary.csv, fragment.html and fragment.md (the section of `make experiments`).\n"
            "PATH: an experiment folder (experiment.txt and one folder per run), a folder of them, or run folders\n"
            "written by `fpemu train --out` (reported together against their 32-true run).\n"
            "--suite DEFS (a definition file or a folder of them, e.g. experiments/suite) with --runs CACHE takes\n"
            "the runs from CACHE/KEY (the folders --plan names); --plan prints the makefile that runs them.\n"
            "--scripts DIR: the gnuplot scripts (default: $FPEMU_ROOT/reports, ./reports, or beside the program).\n\n"
            "Rules in a definition: `expect RUN: EXPR CMP EXPR` with CMP one of < <= > >= == != and EXPR built from\n"
            "numbers, + - * /, abs(), min(,), max(,) and these metrics of a run, METRIC(RUN):\n");
    for (int i = 0; metric_names[i]; i++) fprintf(out, "  %-12s %s\n", metric_names[i], metric_docs[i]);
    fprintf(out, "Exit status: 0 report written, 1 a plot failed, 2 bad input (missing folder, malformed CSV or definition)\n"
                 "or a file that could not be written. Every file appears whole or not at all (written to NAME.tmp.PID,\n"
                 "then renamed).\n");
}

int cmd_report(int argc, char **argv) {
    const char *out = NULL, *suite = NULL, *runs = NULL, *scripts = NULL, *title = "Training experiments: precision policies against fp32";
    int do_plan = 0, no_plots = 0;
    char **paths = calloc((size_t)argc + 1, sizeof *paths);
    int np = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) { usage(stdout); free(paths); return 0; }
        if (!strcmp(a, "--plan")) { do_plan = 1; continue; }
        if (!strcmp(a, "--no-plots")) { no_plots = 1; continue; }
        if (!strcmp(a, "--out") || !strcmp(a, "--suite") || !strcmp(a, "--runs") || !strcmp(a, "--scripts") || !strcmp(a, "--title")) {
            if (i + 1 >= argc) { free(paths); return cli_error(SUB, "%s needs a value", a); }
            const char *v = argv[++i];
            if (!strcmp(a, "--out")) out = v;
            else if (!strcmp(a, "--suite")) suite = v;
            else if (!strcmp(a, "--runs")) runs = v;
            else if (!strcmp(a, "--scripts")) scripts = v;
            else title = v;
            continue;
        }
        if (a[0] == '-' && a[1]) { usage(stderr); free(paths); return cli_error(SUB, "unknown option '%s'", a); }
        paths[np++] = (char *)a;
    }
    char err[8192];
    if (do_plan) {
        if (!suite || !runs || np || out) { free(paths); return cli_error(SUB, "--plan takes --suite DEFS and --runs CACHE only"); }
        char **files;
        int nf = suite_list(suite, &files, err, sizeof err);
        free(paths);
        if (nf < 0) return cli_error(SUB, "--suite %s", err);
        int rc = plan(files, nf, runs);
        for (int i = 0; i < nf; i++) free(files[i]);
        free(files);
        if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
            rc = cli_error(SUB, "standard output: write error (%s): the plan is incomplete", strerror(errno));
        return rc;
    }
    if (!out) { usage(stderr); free(paths); return cli_error(SUB, "--out DIR is required"); }
    if (!suite != !runs) { free(paths); return cli_error(SUB, "--suite and --runs go together"); }
    if (!suite && !np) { usage(stderr); free(paths); return cli_error(SUB, "expected run or experiment folders (or --suite and --runs)"); }
    gp_ctx g;
    memset(&g, 0, sizeof g);
    g.no_plots = no_plots;
    if (!no_plots) {
        if (find_scripts(&g, scripts)) {
            free(paths);
            return cli_error(SUB, "cannot find the gnuplot scripts (curves.gp)%s%s: run from the repository root, set "
                                  "FPEMU_ROOT, or pass --scripts DIR", scripts ? " in " : "", scripts ? scripts : "");
        }
        if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
            free(paths);
            return cli_error(SUB, "gnuplot not found (make deps installs gnuplot-nox; or pass --no-plots)");
        }
    }
    /* The report is made in a staging folder beside --out (OUT.tmp.PID)
     * and renamed into place only when it is complete: --out appears all
     * at once or not at all (an earlier report there is swapped out whole,
     * then removed). Staging folders of killed reports (their PID gone) are
     * removed first; SIGINT, SIGTERM and SIGHUP remove this one. */
    out_stage os;
    if (stage_open(&os, out)) { free(paths); return 2; }
    const char *final_out = out;
    out = os.stage;
    if (validate_inputs(suite, runs, paths, np)) {
        stage_close(&os, 0);
        free(paths);
        return 2;
    }
    /* gather experiment folders into OUT */
    char **exps = NULL;
    int nx = 0;
    char **adhoc = NULL;
    int na = 0;
    int rc = 0;
    if (suite) {
        char **files;
        int nf = suite_list(suite, &files, err, sizeof err);
        if (nf < 0) rc = cli_error(SUB, "--suite %s", err);
        for (int i = 0; i < nf && !rc; i++) {
            suite_exp d;
            if (suite_read(&d, files[i], NULL, err, sizeof err)) { rc = cli_error(SUB, "%s", err); break; }
            rc = collect_suite_exp(&d, runs, out);
            exps = realloc(exps, (size_t)(nx + 1) * sizeof *exps);
            exps[nx] = malloc(4400);
            snprintf(exps[nx++], 4400, "%s/%s", out, d.name);
            suite_free(&d);
        }
        for (int i = 0; i < nf; i++) free(files[i]);
        free(files);
    }
    for (int i = 0; i < np && !rc; i++) {
        char p[4400];
        const char *src = paths[i];
        snprintf(p, sizeof p, "%s/experiment.txt", src);
        int n_here = 0;
        char **sub = NULL;
        if (is_file(p)) {
            sub = malloc(sizeof *sub);
            sub[n_here++] = strdup(src);
        } else if (is_dir(src)) {
            snprintf(p, sizeof p, "%s/metrics.csv", src);
            if (is_file(p)) {
                adhoc = realloc(adhoc, (size_t)(na + 1) * sizeof *adhoc);
                adhoc[na++] = strdup(src);
                continue;
            }
            /* a folder of experiment folders */
            DIR *dd = opendir(src);
            struct dirent *de;
            while (dd && (de = readdir(dd))) {
                if (de->d_name[0] == '.') continue;
                char q[4600];
                snprintf(q, sizeof q, "%s/%s/experiment.txt", src, de->d_name);
                if (!is_file(q)) continue;
                sub = realloc(sub, (size_t)(n_here + 1) * sizeof *sub);
                snprintf(q, sizeof q, "%s/%s", src, de->d_name);
                sub[n_here++] = strdup(q);
            }
            if (dd) closedir(dd);
            for (int a = 1; a < n_here; a++)
                for (int b = a; b > 0 && strcmp(sub[b - 1], sub[b]) > 0; b--) { char *t = sub[b]; sub[b] = sub[b - 1]; sub[b - 1] = t; }
            if (!n_here) { rc = cli_error(SUB, "%s: neither a run folder (metrics.csv), an experiment folder (experiment.txt) nor a folder of experiment folders", src); break; }
        } else {
            rc = cli_error(SUB, "%s: no such folder", src);
            break;
        }
        for (int k = 0; k < n_here && !rc; k++) {
            /* copy the experiment into OUT unless it is there already */
            const char *b = strrchr(sub[k], '/');
            char name[SUITE_NAME_MAX * 2];
            snprintf(name, sizeof name, "%s", b ? b + 1 : sub[k]);
            char dst[4600];
            snprintf(dst, sizeof dst, "%s/%s", out, name);
            if (!(is_dir(dst) && same_path(sub[k], dst))) {
                suite_exp d;
                snprintf(p, sizeof p, "%s/experiment.txt", sub[k]);
                if (suite_read(&d, p, name, err, sizeof err)) { rc = cli_error(SUB, "%s", err); break; }
                if (mkdir_p(dst)) rc = cli_error(SUB, "%s: cannot create: %s", dst, strerror(errno));
                char q[4800];
                snprintf(q, sizeof q, "%s/experiment.txt", dst);
                if (!rc && copy_file(p, q)) rc = cli_error(SUB, "%s: cannot write: %s", q, strerror(errno));
                for (int j = 0; j < d.nruns && !rc; j++) {
                    char s2[4600], d2[4800];
                    snprintf(s2, sizeof s2, "%s/%s", sub[k], d.runs[j].name);
                    snprintf(d2, sizeof d2, "%s/%s", dst, d.runs[j].name);
                    if (is_dir(s2)) rc = copy_run(s2, d2);
                }
                suite_free(&d);
            }
            exps = realloc(exps, (size_t)(nx + 1) * sizeof *exps);
            exps[nx++] = strdup(dst);
        }
        for (int k = 0; k < n_here; k++) free(sub[k]);
        free(sub);
    }
    if (!rc && na) {
        rc = collect_adhoc(adhoc, na, out);
        exps = realloc(exps, (size_t)(nx + 1) * sizeof *exps);
        exps[nx] = malloc(4400);
        snprintf(exps[nx++], 4400, "%s/runs", out);
    }
    for (int i = 0; i < na; i++) free(adhoc[i]);
    free(adhoc);
    free(paths);
    exp_data *xs = calloc((size_t)(nx ? nx : 1), sizeof *xs);
    figlist *figs = calloc((size_t)(nx ? nx : 1), sizeof *figs);
    int loaded = 0;
    for (int i = 0; i < nx && !rc && !stop_signal; i++) {
        if (exp_load(&xs[i], exps[i], err, sizeof err)) { rc = cli_error(SUB, "%s", err); loaded = i + 1; break; }
        loaded = i + 1;
        make_plots(&g, &xs[i], &figs[i]);
    }
    if (!rc && !stop_signal) rc = write_outputs(out, xs, nx, figs, title);
    if (!rc && g.write_failed)
        rc = cli_error(SUB, "%s: some plot files could not be written (see above); the report is incomplete", final_out);
    if (!rc && stop_signal) rc = 2;
    if (!rc && g.plots_failed) rc = 1;
    if (!rc || rc == 1) {
        if (stage_close(&os, 1)) rc = 2;
    } else {
        stage_close(&os, 0);
    }
    out = final_out;
    if (!rc || rc == 1) {
        int nrep = 0, nnot = 0, nmiss = 0;
        for (int e = 0; e < nx; e++)
            for (int i = 0; i < xs[e].nruns; i++) {
                nrep += xs[e].runs[i].verdict == 1; nnot += xs[e].runs[i].verdict == 2; nmiss += xs[e].runs[i].verdict == 3;
            }
        fprintf(stderr, "fpemu report: %d experiment%s, %d plot%s%s; claims: %d reproduced, %d not reproduced, %d not run; %s/index.html\n",
                nx, nx == 1 ? "" : "s", g.plots_made, g.plots_made == 1 ? "" : "s", g.plots_failed ? " (some failed)" : "",
                nrep, nnot, nmiss, out);
    }
    for (int i = 0; i < loaded; i++) exp_free(&xs[i]);
    for (int i = 0; i < nx; i++) {
        for (int k = 0; k < figs[i].n; k++) free(figs[i].v[k].caption);
        free(figs[i].v);
        free(exps[i]);
    }
    free(figs);
    free(xs);
    free(exps);
    stage_signals(0);
    if (stop_signal) raise(stop_signal); /* the default action now: die by the signal that stopped the report */
    return rc;
}
