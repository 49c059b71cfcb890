/* SPDX-License-Identifier: MIT */
/* report_runs.c: the run and experiment folders of `fpemu report`
 * (report.h lists the parts). It owns:
 * - reading a run folder (metrics.csv, eval.csv, tensors.csv, checked
 *   against summary.json) into run_data, and the metrics of a run that the
 *   rules and the captions use (rep_metric_names);
 * - loading an experiment folder (experiment.txt and one folder per run);
 * - copying runs into the report: from the suite's run cache, from
 *   experiment folders, and plain run folders given on the command line
 *   (one experiment against the reference policy's run);
 * - checking every input before anything is written (exit 2 first);
 * - a run's cells in the summary tables;
 * - the small file helpers the other parts share. */
#define _GNU_SOURCE /* open_memstream */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "report.h"

/* ---- files ---------------------------------------------------------------- */

int rep_is_dir(const char *p) { struct stat st; return !stat(p, &st) && S_ISDIR(st.st_mode); }
int rep_is_file(const char *p) { struct stat st; return !stat(p, &st) && S_ISREG(st.st_mode); }

int rep_mkdir_p(const char *dir) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
    return rep_is_dir(tmp) ? 0 : -1;
}

/* Copy SRC to DST atomically. 0 or -1 (errno). */
int rep_copy_file(const char *src, const char *dst) {
    size_t n;
    char *b = csv_slurp(src, &n);
    if (!b) return -1;
    cli_atomic a;
    if (cli_atomic_open(&a, dst, "wb")) { free(b); return -1; }
    int ok = fwrite(b, 1, n, a.f) == n;
    free(b);
    return cli_atomic_close(&a, ok);
}

int rep_same_path(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb)) return 0;
    return !strcmp(ra, rb);
}

/* ---- run data and metrics -------------------------------------------------- */

const char *const rep_metric_names[] = {
    "final_loss", "loss_diff", "mean_diff", "max_dev", "eval_loss", "eval_acc", "skipped", "nonfinite",
    "overflow", "underflow", "subnormal", "saturated", "final_scale", "min_scale", "max_scale", "steps", "casts", NULL};

const char *const rep_metric_docs[] = {
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

long rep_final_window(long n) { long w = n / 10; return w < 5 ? (n < 5 ? n : 5) : w; }

void rep_run_free(run_data *r) {
    if (r->have) csv_free(&r->met);
    if (r->have_ev) csv_free(&r->ev);
    if (r->have_ten) csv_free(&r->ten);
    free(r->step); free(r->loss); free(r->scale); free(r->skip);
}

/* Read one run folder's CSVs (report.h). */
int rep_run_load(run_data *r, char *err, size_t errlen) {
    char p[4200];
    snprintf(p, sizeof p, "%s/metrics.csv", r->dir);
    if (!rep_is_file(p)) return 1;
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
    long w = rep_final_window(r->n), fin = 0;
    double s = 0;
    for (long i = r->n - w; i < r->n; i++)
        if (isfinite(r->loss[i])) { s += r->loss[i]; fin++; }
    r->final_loss = r->n == 0 ? NAN : 2 * fin < w ? INFINITY : s / (double)fin;
    /* eval.csv */
    snprintf(p, sizeof p, "%s/eval.csv", r->dir);
    r->eval_loss = r->eval_acc = NAN;
    if (rep_is_file(p)) {
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
    if (rep_is_file(p)) {
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
double rep_smooth_at(const run_data *r, long i, long w) {
    long lo = i - w + 1 < 0 ? 0 : i - w + 1;
    double s = 0;
    for (long j = lo; j <= i; j++) {
        if (!isfinite(r->loss[j])) return NAN;
        s += r->loss[j];
    }
    return s / (double)(i - lo + 1);
}

double rep_cls_frac(const run_data *r, const char *kind, const char *cls) {
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
double rep_metric(const exp_data *x, const run_data *r, const run_data *b, const char *m, const char *cls) {
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
        return rep_cls_frac(r, m, cls);
    }
    if (!strcmp(m, "subnormal") || !strcmp(m, "saturated")) return rep_cls_frac(r, m, cls);
    if (!strcmp(m, "final_scale")) return r->final_scale;
    if (!strcmp(m, "min_scale")) return r->min_scale;
    if (!strcmp(m, "max_scale")) return r->max_scale;
    if (!strcmp(m, "steps")) return (double)r->n;
    if (!strcmp(m, "casts")) return r->casts;
    return NAN;
}

/* ---- loading experiments ----------------------------------------------------- */

void rep_exp_free(exp_data *x) {
    for (int k = 0; k < x->nseeds; k++) {
        for (int i = 0; x->sr && x->sr[k] && i < x->nruns; i++) rep_run_free(&x->sr[k][i]);
        if (x->sr && x->sr[k] != x->runs) free(x->sr[k]);
    }
    if (!x->sr) for (int i = 0; i < x->nruns; i++) rep_run_free(&x->runs[i]);
    free(x->sr);
    free(x->runs);
    for (int i = 0; i < x->def.nexpects; i++) free(x->explain ? x->explain[i] : NULL);
    free(x->explain);
    free(x->holds);
    suite_free(&x->def);
}

/* Load the experiment in DIR (DIR/experiment.txt and DIR/RUN/). */
int rep_exp_load(exp_data *x, const char *dir, char *err, size_t errlen) {
    memset(x, 0, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "%s", dir);
    char p[4200], name[SUITE_NAME_MAX];
    snprintf(p, sizeof p, "%s/experiment.txt", dir);
    const char *b = strrchr(dir, '/');
    snprintf(name, sizeof name, "%s", b ? b + 1 : dir);
    if (suite_read_results(&x->def, p, name, err, errlen)) return -2;
    if (rep_check_rules(&x->def, err, errlen)) return -2;
    x->nruns = x->def.nruns;
    x->nseeds = x->def.nseeds;
    x->runs = calloc((size_t)x->nruns, sizeof *x->runs);
    x->sr = calloc((size_t)x->nseeds, sizeof *x->sr);
    x->sr[0] = x->runs;
    for (int k = 1; k < x->nseeds; k++) x->sr[k] = calloc((size_t)x->nruns, sizeof **x->sr);
    for (int k = 0; k < x->nseeds; k++)
        for (int i = 0; i < x->nruns; i++) {
            run_data *r = &x->sr[k][i];
            r->def = &x->def.runs[i];
            snprintf(r->name, sizeof r->name, "%s", r->def->name);
            snprintf(r->policy, sizeof r->policy, "%s", r->def->policy);
            rep_run_dir(&x->def, dir, r->def, k, r->dir, sizeof r->dir);
            if (!strcmp(r->name, x->def.baseline)) x->base = i;
            int rc = rep_run_load(r, err, errlen);
            if (rc == -2) return -2;
            if (rc == 1 && rep_is_dir(r->dir)) fprintf(stderr, "fpemu report: %s: no metrics.csv: run %s is reported as not run\n", r->dir, r->name);
        }
    /* a run is there when every seed is (a seed missing: "not run") */
    for (int k = 1; k < x->nseeds; k++)
        for (int i = 0; i < x->nruns; i++)
            if (!x->sr[k][i].have && x->runs[i].have) {
                fprintf(stderr, "fpemu report: %s: no metrics.csv: run %s (seed %llu missing) is reported as not run\n", x->sr[k][i].dir,
                        x->runs[i].name, x->def.seeds[k]);
                x->runs[i].have = 0; /* its tables are freed with it: have_* keep them */
                csv_free(&x->runs[i].met);
            }
    x->window = x->runs[x->base].n / 25;
    if (x->window < 1) x->window = 1;
    rep_eval_rules(x);
    return 0;
}

/* ---- seeds ------------------------------------------------------------------- */

unsigned long long rep_seeds[SUITE_MAX_SEEDS];
int rep_nseeds;

void rep_apply_seeds(suite_exp *d) {
    if (rep_nseeds) suite_set_seeds(d, rep_seeds, rep_nseeds);
}

void rep_run_dir(const suite_exp *d, const char *expdir, const suite_run *r, int s, char *buf, size_t n) {
    if (d->nseeds == 1) {
        char p[4600];
        snprintf(p, sizeof p, "%s/%s/metrics.csv", expdir, r->name);
        if (rep_is_file(p)) { snprintf(buf, n, "%s/%s", expdir, r->name); return; }
    }
    snprintf(buf, n, "%s/%s/seed-%llu", expdir, r->name, d->seeds[s]);
}

void rep_run_out(const suite_exp *d, const char *expdir, const suite_run *r, int s, char *buf, size_t n) {
    if (d->nseeds == 1) snprintf(buf, n, "%s/%s", expdir, r->name);
    else snprintf(buf, n, "%s/%s/seed-%llu", expdir, r->name, d->seeds[s]);
}

rep_agg rep_seed_agg(const exp_data *x, int i, const char *metric) {
    rep_agg a = {NAN, NAN, NAN, 0};
    double sum = 0;
    for (int k = 0; k < x->nseeds; k++) {
        exp_data v = *x;
        v.runs = x->sr[k];
        const run_data *r = &v.runs[i], *b = &v.runs[x->base];
        if (!r->have || !b->have) continue;
        double m = rep_metric(&v, r, b, metric, NULL);
        if (isnan(m)) continue;
        if (!a.n || m < a.min) a.min = m;
        if (!a.n || m > a.max) a.max = m;
        sum += m;
        a.n++;
    }
    if (a.n) a.mean = sum / a.n;
    return a;
}

/* ---- a run in the summary tables --------------------------------------------- */

static void fmt_cell(char *b, size_t n, const char *fmt, double v) {
    if (isnan(v)) snprintf(b, n, "-");
    else if (isinf(v)) snprintf(b, n, "%s", v > 0 ? "inf (diverged)" : "-inf");
    else snprintf(b, n, fmt, v);
}

const char *const rep_summary_cols[REP_SUMMARY_COLS] = {"experiment",    "run",           "policy",        "final loss",
                                                         "diff from baseline", "eval accuracy", "skipped steps",
                                                         "overflow rate", "underflow rate", "verdict"};

void rep_read_parts(const char *out, const char *ext, char *part[3]) {
    static const char *const name[3] = {"headline", "keyplots", "fragment"};
    for (int i = 0; i < 3; i++) {
        char fp[4400];
        snprintf(fp, sizeof fp, "%s/%s.%s", out, name[i], ext);
        size_t fl;
        part[i] = csv_slurp(fp, &fl);
    }
}

void rep_verdict_counts(const exp_data *xs, int nx, int *reproduced, int *not_reproduced, int *not_run) {
    int n[4] = {0, 0, 0, 0};
    for (int e = 0; e < nx; e++)
        for (int i = 0; i < xs[e].nruns; i++) {
            int v = xs[e].runs[i].verdict;
            if (v >= 1 && v <= 3) n[v]++;
        }
    *reproduced = n[1], *not_reproduced = n[2], *not_run = n[3];
}

void rep_row_of(const exp_data *x, const run_data *r, row_cells *c) {
    const run_data *b = &x->runs[x->base];
    size_t uo = 0;
    c->own[0] = 0;
    for (int j = r->def ? r->def->ncommon : 0; r->def && j < r->def->nsets && uo < sizeof c->own; j++)
        uo += (size_t)snprintf(c->own + uo, sizeof c->own - uo, " %s", r->def->sets[j]);
    if (!r->have) {
        strcpy(c->loss, "not run"); strcpy(c->diff, "-"); strcpy(c->acc, "-"); strcpy(c->skip, "-");
        strcpy(c->ovf, "-"); strcpy(c->unf, "-");
        return;
    }
    if (x->nseeds > 1) {
        /* the seeds' mean, and their range in brackets */
        int i = (int)(r - x->runs);
        struct { char *b; size_t n; const char *m, *fmt; } col[] = {
            {c->loss, sizeof c->loss, "final_loss", "%.4f"}, {c->diff, sizeof c->diff, "loss_diff", "%+.4f"},
            {c->acc, sizeof c->acc, "eval_acc", "%.3f"}, {c->skip, sizeof c->skip, "skipped", "%.0f"},
            {c->ovf, sizeof c->ovf, "overflow", "%.3g"}, {c->unf, sizeof c->unf, "underflow", "%.3g"}};
        for (size_t k = 0; k < sizeof col / sizeof col[0]; k++) {
            rep_agg a = rep_seed_agg(x, i, col[k].m);
            char m[24], lo[24], hi[24];
            fmt_cell(m, sizeof m, col[k].fmt, a.mean);
            fmt_cell(lo, sizeof lo, col[k].fmt, a.min);
            fmt_cell(hi, sizeof hi, col[k].fmt, a.max);
            if (a.min == a.max || a.n < 2) snprintf(col[k].b, col[k].n, "%s", m);
            else snprintf(col[k].b, col[k].n, "%s [%s, %s]", m, lo, hi);
        }
        if (r == b) strcpy(c->diff, "(baseline)");
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

void rep_settings_text(const run_data *r, char *b, size_t n) {
    size_t u = 0;
    b[0] = 0;
    for (int j = 0; r->def && j < r->def->nsets && u < n; j++) u += (size_t)snprintf(b + u, n - u, "%s%s", j ? " " : "", r->def->sets[j]);
}

/* ---- collecting runs into the report ----------------------------------------- */

static const char *const run_files[] = {"metrics.csv", "eval.csv", "tensors.csv", "checkpoint.bin", "summary.json", NULL};

/* Copy a run folder's result files into DST (created). */
int rep_copy_run(const char *src, const char *dst) {
    if (rep_is_dir(dst) && rep_same_path(src, dst)) return 0;
    if (rep_mkdir_p(dst)) return cli_error(SUB, "%s: cannot create: %s", dst, strerror(errno));
    for (int i = 0; run_files[i]; i++) {
        char a[4400], b[4400];
        snprintf(a, sizeof a, "%s/%s", src, run_files[i]);
        snprintf(b, sizeof b, "%s/%s", dst, run_files[i]);
        if (!rep_is_file(a)) continue;
        if (rep_copy_file(a, b)) return cli_error(SUB, "%s: cannot copy to %s: %s", a, b, strerror(errno));
    }
    return 0;
}

/* Materialise experiment DEF's folder OUT/NAME from the run cache. */
int rep_collect_suite(const suite_exp *d, const char *cache, const char *out) {
    char dir[4400], p[4600];
    snprintf(dir, sizeof dir, "%s/%s", out, d->name);
    if (rep_mkdir_p(dir)) return cli_error(SUB, "%s: cannot create: %s", dir, strerror(errno));
    snprintf(p, sizeof p, "%s/experiment.txt", dir);
    if (!rep_same_path(d->path, p)) {
        if (rep_copy_file(d->path, p)) return cli_error(SUB, "%s: cannot copy to %s: %s", d->path, p, strerror(errno));
        if (rep_nseeds) { /* the seeds --seeds ran, for whoever reads the folder again */
            FILE *f = fopen(p, "a");
            if (f) {
                fprintf(f, "\n# the seeds of this report (fpemu report --seeds; the last seeds line counts)\nseeds:");
                for (int s = 0; s < d->nseeds; s++) fprintf(f, " %llu", d->seeds[s]);
                fputc('\n', f);
            }
            if (!f || fclose(f)) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
        }
    }
    for (int i = 0; i < d->nruns; i++)
        for (int s = 0; s < d->nseeds; s++) {
            char src[4400], dst[4600];
            snprintf(src, sizeof src, "%s/%s", cache, d->runs[i].key[s]);
            rep_run_out(d, dir, &d->runs[i], s, dst, sizeof dst);
            if (!rep_is_dir(src)) {
                fprintf(stderr, "fpemu report: %s/%s seed %llu: no results in %s (run it with `make experiments`)\n", d->name, d->runs[i].name,
                        d->seeds[s], src);
                continue;
            }
            if (rep_copy_run(src, dst)) return 2;
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

/* Plain run folders given on the command line: one experiment "runs",
 * against the first run of the reference policy (else the first run). */
int rep_collect_adhoc(char **dirs, int n, const char *out) {
    char dir[4400], p[4600];
    snprintf(dir, sizeof dir, "%s/runs", out);
    if (rep_mkdir_p(dir)) return cli_error(SUB, "%s: cannot create: %s", dir, strerror(errno));
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
        if (base < 0 && !strcmp(pols[i], rep_reference_policy())) base = i;
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
        if (rep_copy_run(dirs[i], dst)) return 2;
    }
    return 0;
}

/* ---- checking the inputs before anything is written -------------------------- */

static int validate_run(const char *dir) {
    run_data r;
    memset(&r, 0, sizeof r);
    snprintf(r.dir, sizeof r.dir, "%s", dir);
    char err[8192];
    int rc = rep_run_load(&r, err, sizeof err);
    rep_run_free(&r);
    return rc == -2 ? cli_error(SUB, "%s", err) : 0;
}

static int validate_exp(const char *defpath, const char *name, const char *rundir_fmt_base, int from_cache) {
    suite_exp d;
    char err[8192];
    if (suite_read(&d, defpath, name, err, sizeof err) || rep_check_rules(&d, err, sizeof err)) {
        if (d.path[0]) suite_free(&d);
        return cli_error(SUB, "%s", err);
    }
    if (from_cache) rep_apply_seeds(&d);
    int rc = 0;
    for (int j = 0; j < d.nruns && !rc; j++)
        for (int s = 0; s < d.nseeds && !rc; s++) {
            char dir[4400];
            if (from_cache) snprintf(dir, sizeof dir, "%s/%s", rundir_fmt_base, d.runs[j].key[s]);
            else rep_run_dir(&d, rundir_fmt_base, &d.runs[j], s, dir, sizeof dir);
            if (rep_is_dir(dir)) rc = validate_run(dir);
        }
    suite_free(&d);
    return rc;
}

/* Every definition, rule and CSV the report will read, so that bad input
 * exits 2 before --out is created or touched. */
int rep_validate_inputs(const char *suite, const char *runs, char **paths, int np) {
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
        if (rep_is_file(p)) {
            if (validate_exp(p, name, paths[i], 0)) return 2;
            continue;
        }
        if (!rep_is_dir(paths[i])) return cli_error(SUB, "%s: no such folder", paths[i]);
        snprintf(p, sizeof p, "%s/metrics.csv", paths[i]);
        if (rep_is_file(p)) {
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
            if (!rep_is_file(e)) continue;
            found = 1;
            if (validate_exp(e, de->d_name, q, 0)) { closedir(dd); return 2; }
        }
        if (dd) closedir(dd);
        if (!found)
            return cli_error(SUB, "%s: neither a run folder (metrics.csv), an experiment folder (experiment.txt) nor a folder of experiment folders", paths[i]);
    }
    return 0;
}

