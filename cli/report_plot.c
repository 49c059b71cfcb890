/* SPDX-License-Identifier: MIT */
/* report_plot.c: the plots of `fpemu report` (report.h lists the parts).
 * For one experiment it writes the plot data (DIR/NAME.dat, atomically),
 * runs the gnuplot scripts of reports/ (curves.gp, scale.gp, rates.gp,
 * fp8.gp) into DIR/NAME.png and .svg (both complete or neither), and
 * writes each figure's caption: what the plot shows, its numbers, and what
 * was expected. It owns the choice of plots (loss, loss_diff, eval_acc,
 * scale, rates_RUN, fp8_RUN) and finding the scripts. */
#define _GNU_SOURCE /* vasprintf, open_memstream */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "report.h"

/* Text for gnuplot strings in single quotes. */
static void gp_clean(char *s) {
    for (; *s; s++)
        if (*s == '\'' || *s == '\n' || *s == '"') *s = ' ';
}

/* ---- gnuplot ---------------------------------------------------------------- */

int rep_find_scripts(gp_ctx *g, const char *given) {
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
        if (rep_is_file(p)) {
            if (!realpath(cands[i], g->scripts)) snprintf(g->scripts, sizeof g->scripts, "%s", cands[i]);
            return 0;
        }
        if (i == 0) return -1; /* --scripts given but wrong */
    }
    return -1;
}

/* Run `gnuplot -e VARS SCRIPT` in DIR. gnuplot writes OUT.tmp.PID.png and
 * .svg; both are renamed to OUT.png and OUT.svg only after it exits 0 and
 * both are complete, so a killed or failed run leaves no half-written
 * image (at most the temporaries, which are removed here on failure). Its
 * log goes to OUT.gp.log.tmp.PID, kept as DIR/OUT.gp.log only if gnuplot
 * failed. COUNT: a plot of its own (plots_made), else a copy of one at
 * another size. Returns 0 or -1. */
static int gnuplot_run(gp_ctx *g, const char *dir, const char *script, const char *out, const char *given, int count) {
    if (g->no_plots || rep_stop_signal) return 0;
    char vars[8192], sp[4300], logp[4400], logt[4500], tmpbase[200];
    snprintf(tmpbase, sizeof tmpbase, "%s.tmp.%ld", out, (long)getpid());
    snprintf(vars, sizeof vars, "dir='%s/'; out='%s'; %s", g->scripts, tmpbase, given);
    snprintf(sp, sizeof sp, "%s/%s", g->scripts, script);
    snprintf(logp, sizeof logp, "%s/%s.gp.log", dir, out);
    snprintf(logt, sizeof logt, "%s.tmp.%ld", logp, (long)getpid());
    const int st = cli_gnuplot(dir, logt, vars, sp, &rep_stop_signal); /* (the report stopping stops gnuplot) */
    int ok = !rep_stop_signal && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    static const char *const ext[2] = {"png", "svg"};
    char tmp[2][4500], dst[2][4500];
    for (int i = 0; i < 2; i++) {
        snprintf(tmp[i], sizeof tmp[i], "%s/%s.%s", dir, tmpbase, ext[i]);
        snprintf(dst[i], sizeof dst[i], "%s/%s.%s", dir, out, ext[i]);
    }
    int complete = ok && cli_image_done(tmp[0], 1) && cli_image_done(tmp[1], 0);
    int moved = complete && !rename(tmp[0], dst[0]) && !rename(tmp[1], dst[1]);
    int e = errno;
    unlink(tmp[0]);
    unlink(tmp[1]);
    if (moved) {
        unlink(logt);
        g->plots_made += count;
        return 0;
    }
    if (ok) { /* gnuplot said yes but an image is short or could not be moved: a write error */
        g->write_failed = 1;
        unlink(dst[0]); /* never one image of the pair from this run and a stale other */
        unlink(dst[1]);
        unlink(logt);
        fprintf(stderr, "fpemu report: %s/%s.png, .svg: cannot write: %s\n", dir, out,
                complete ? strerror(e) : "gnuplot's output is incomplete or could not be synced (disk full?)");
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

/* gnuplot_run with the script's variables from FMT; they are kept in g (the
 * figure made from this plot copies them, so that it can be drawn again). */
static int gnuplot(gp_ctx *g, const char *dir, const char *script, const char *out, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int gnuplot(gp_ctx *g, const char *dir, const char *script, const char *out, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->last_vars, sizeof g->last_vars, fmt, ap);
    va_end(ap);
    snprintf(g->last_script, sizeof g->last_script, "%s", script);
    return gnuplot_run(g, dir, script, out, g->last_vars, 1);
}

int rep_replot(gp_ctx *g, const char *dir, const figure *f, const char *out, int width, int height, const char *extra) {
    if (!f->vars) return -1;
    char *v = NULL;
    if (asprintf(&v, "%s; width=%d; height=%d; %s", f->vars, width, height, extra ? extra : "") < 0) return -1;
    int rc = gnuplot_run(g, dir, f->script, out, v, 0);
    free(v);
    return rc;
}
/* ---- the plots of one experiment ------------------------------------------- */

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

/* Add the figure FILE just drawn (its script and variables are g's last). */
static void fig_add(gp_ctx *g, figlist *l, const char *file, const char *alt, char *caption) {
    l->v = realloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
    figure *f = &l->v[l->n++];
    snprintf(f->file, sizeof f->file, "%s", file);
    snprintf(f->alt, sizeof f->alt, "%s", alt);
    snprintf(f->script, sizeof f->script, "%s", g->last_script);
    f->vars = strdup(g->last_vars);
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

void rep_make_plots(gp_ctx *g, exp_data *x, figlist *figs) {
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
        int band = x->nseeds > 1;
        if (f && fd && band) {
            /* several seeds: per run the seeds' mean, min and max (the band) */
            fprintf(f, "# step, then for each of: %s: the mean, min and max over seeds", names);
            for (int k = 0; k < x->nseeds; k++) fprintf(f, "%s%llu", k ? " " : " ", x->def.seeds[k]);
            fprintf(f, " of the %ld-step trailing mean of the training loss\n", x->window);
            fprintf(fd, "# step, then for each of: %s: the mean, min and max over seeds of the trailing mean of the loss minus the "
                        "baseline's (%s) of the same seed\n", names, b->name);
            for (long i = 0; i < nmax; i++) {
                double st = i < b->n ? b->step[i] : NAN;
                for (int k = 0; k < no && isnan(st); k++) if (i < x->runs[order[k]].n) st = x->runs[order[k]].step[i];
                fprintf(f, "%.9g", st);
                fprintf(fd, "%.9g", st);
                for (int k = 0; k < no; k++) {
                    double sum[2] = {0, 0}, lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
                    int cnt[2] = {0, 0};
                    for (int q = 0; q < x->nseeds; q++) {
                        const run_data *r = &x->sr[q][order[k]], *bq = &x->sr[q][x->base];
                        double v = i < r->n ? rep_smooth_at(r, i, x->window) : NAN;
                        double bs = i < bq->n ? rep_smooth_at(bq, i, x->window) : NAN;
                        double d2[2] = {v, v - bs};
                        for (int tt = 0; tt < 2; tt++) {
                            if (!isfinite(d2[tt])) continue;
                            sum[tt] += d2[tt];
                            cnt[tt]++;
                            if (d2[tt] < lo[tt]) lo[tt] = d2[tt];
                            if (d2[tt] > hi[tt]) hi[tt] = d2[tt];
                        }
                    }
                    /* a seed that diverged here: no band (a gap), not a mean of the others */
                    for (int tt = 0; tt < 2; tt++) {
                        FILE *ff = tt ? fd : f;
                        if (cnt[tt] < x->nseeds) { put_val(ff, NAN); put_val(ff, NAN); put_val(ff, NAN); }
                        else { put_val(ff, sum[tt] / cnt[tt]); put_val(ff, lo[tt]); put_val(ff, hi[tt]); }
                    }
                }
                fputc('\n', f);
                fputc('\n', fd);
            }
        } else if (f && fd) {
            fprintf(f, "# step, then the %ld-step trailing mean of the training loss of: %s\n", x->window, names);
            fprintf(fd, "# step, then the trailing mean of the loss minus the baseline's (%s) for: %s\n", b->name, names);
            for (long i = 0; i < nmax; i++) {
                double st = i < b->n ? b->step[i] : NAN;
                for (int k = 0; k < no && isnan(st); k++) if (i < x->runs[order[k]].n) st = x->runs[order[k]].step[i];
                fprintf(f, "%.9g", st);
                fprintf(fd, "%.9g", st);
                double bs = i < b->n ? rep_smooth_at(b, i, x->window) : NAN;
                for (int k = 0; k < no; k++) {
                    const run_data *r = &x->runs[order[k]];
                    double v = i < r->n ? rep_smooth_at(r, i, x->window) : NAN;
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
            /* several seeds: the seeds' means (the same seed's runs paired for the difference) */
            double rf = band ? rep_seed_agg(x, order[k], "final_loss").mean : r->final_loss;
            rep_fmt_num(nb, sizeof nb, rf);
            fprintf(m1, "%s%s %s", k ? "; " : "", r->name, nb);
            if (!isfinite(rf)) diverged++;
            if (k) {
                double d = band ? rep_seed_agg(x, order[k], "loss_diff").mean : r->final_loss - b->final_loss;
                char db[64];
                rep_fmt_num(db, sizeof db, d);
                fprintf(m1, " (%s%s)", d > 0 ? "+" : "", db);
                double md = band ? rep_seed_agg(x, order[k], "mean_diff").mean : rep_metric(x, r, b, "mean_diff", NULL);
                rep_fmt_num(db, sizeof db, md);
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
                double v = rep_smooth_at(&x->runs[order[k]], i, x->window);
                if (v > 0 && isfinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
            }
        int logy = hi > 0 && lo > 0 && hi / lo > 8;
        if (have_loss && !gnuplot(g, x->dir, "curves.gp", "loss", "file='loss.dat'; names='%s'; ttl='%s'; yl='training loss'; logy=%d; band=%d", names, t, logy, band))
            fig_add(g, figs, "loss", "training loss curves",
                    sprintf_alloc("Training loss of every run (trailing mean over %ld step%s%s) against the baseline %s "
                                  "(black, thick), same model, seed and data order.%s Final loss (mean of the last %ld steps%s): "
                                  "%s.%s%s%s",
                                  x->window, x->window == 1 ? "" : "s", logy ? ", log scale" : "", b->name,
                                  band ? " Each line is the mean over the seeds, the shaded band their smallest to largest value." : "",
                                  rep_final_window(b->n), band ? ", mean over seeds" : "", fl,
                                  diverged ? " Runs whose loss became inf or NaN stop where it did." : "",
                                  expected[0] ? " Expected: " : "", expected));
        snprintf(t, sizeof t, "%s: loss minus the loss of %s", title, b->name);
        gp_clean(t);
        if (have_diff && no > 1 && !gnuplot(g, x->dir, "curves.gp", "loss_diff", "file='loss_diff.dat'; names='%s'; ttl='%s'; yl='loss - %s loss'; zero=1; band=%d", names, t, b->name, band))
            fig_add(g, figs, "loss_diff", "loss difference from the baseline",
                    sprintf_alloc("Difference between each run's smoothed training loss and the baseline's (%s, the zero line)%s: "
                                  "above zero the run lags. Mean difference over the second half of training: %s.%s%s%s"
                                  " Expected: runs that track %s stay near zero; see the claims below.",
                                  b->name, band ? ", seed by seed (line: the seeds' mean; band: their smallest to largest)" : "", fd_s,
                                  worst_name ? " Largest final gap: " : "", worst_name ? worst_name : "",
                                  worst_name ? "." : "", b->name));
        free(fl);
        free(fd_s);
        /* held-out accuracy (several seeds: per run the seeds' mean, min and max) */
        int any_ev = 0;
        for (int k = 0; k < no; k++) any_ev |= x->runs[order[k]].have_ev && x->runs[order[k]].ev.nrows > 0;
        int nsd = band ? x->nseeds : 1;
        if (any_ev) {
            /* union of evaluation steps (over the seeds too), in order */
            double *steps = NULL;
            long ns = 0;
            for (int q = 0; q < nsd; q++)
                for (int k = 0; k < no; k++) {
                    const run_data *r = band ? &x->sr[q][order[k]] : &x->runs[order[k]];
                    if (!r->have_ev) continue;
                    for (long i = 0; i < r->ev.nrows; i++) {
                        double s = csv_get(&r->ev, i, csv_col(&r->ev, "step"));
                        long j;
                        for (j = 0; j < ns; j++) if (steps[j] == s) break;
                        if (j < ns) continue;
                        double *ns2 = realloc(steps, (size_t)(ns + 1) * sizeof *steps);
                        if (!ns2) break; /* out of memory: the steps so far */
                        steps = ns2;
                        steps[ns++] = s;
                    }
                }
            for (long i = 1; i < ns; i++)
                for (long j = i; j > 0 && steps[j - 1] > steps[j]; j--) { double tmp = steps[j]; steps[j] = steps[j - 1]; steps[j - 1] = tmp; }
            cli_atomic a_ev;
            f = open_w(g, &a_ev, x->dir, "eval.dat");
            if (f) {
                if (band) {
                    fprintf(f, "# step, then for each of: %s: the mean, min and max over seeds", names);
                    for (int q = 0; q < x->nseeds; q++) fprintf(f, " %llu", x->def.seeds[q]);
                    fprintf(f, " of the held-out accuracy (? = not evaluated at that step on every seed)\n");
                } else {
                    fprintf(f, "# step, then the held-out accuracy of: %s (? = not evaluated at that step)\n", names);
                }
                for (long i = 0; i < ns; i++) {
                    fprintf(f, "%.9g", steps[i]);
                    for (int k = 0; k < no; k++) {
                        double sum = 0, alo = INFINITY, ahi = -INFINITY;
                        int found = 0;
                        for (int q = 0; q < nsd; q++) {
                            const run_data *r = band ? &x->sr[q][order[k]] : &x->runs[order[k]];
                            if (!r->have_ev) continue;
                            for (long j = 0; j < r->ev.nrows; j++)
                                if (csv_get(&r->ev, j, csv_col(&r->ev, "step")) == steps[i]) {
                                    double v = csv_get(&r->ev, j, csv_col(&r->ev, "eval_accuracy"));
                                    sum += v;
                                    if (v < alo) alo = v;
                                    if (v > ahi) ahi = v;
                                    found++;
                                    break;
                                }
                        }
                        if (found < nsd) fputs(band ? " ? ? ?" : " ?", f);
                        else if (band) { put_val(f, sum / nsd); put_val(f, alo); put_val(f, ahi); }
                        else put_val(f, sum);
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
                if (band) {
                    rep_agg a = rep_seed_agg(x, order[k], "eval_acc");
                    char nlo[32], nhi[32];
                    rep_fmt_num(nb, sizeof nb, a.mean);
                    rep_fmt_num(nlo, sizeof nlo, a.min);
                    rep_fmt_num(nhi, sizeof nhi, a.max);
                    fprintf(m, "%s%s %s (%s to %s)", k ? "; " : "", x->runs[order[k]].name, nb, nlo, nhi);
                } else {
                    rep_fmt_num(nb, sizeof nb, x->runs[order[k]].eval_acc);
                    fprintf(m, "%s%s %s", k ? "; " : "", x->runs[order[k]].name, nb);
                }
            }
            fclose(m);
            snprintf(t, sizeof t, "%s: held-out accuracy", title);
            gp_clean(t);
            if (have_ev && !gnuplot(g, x->dir, "curves.gp", "eval_acc", "file='eval.dat'; names='%s'; ttl='%s'; yl='held-out accuracy'; pts=1; yr='0:1.02'; band=%d", names, t, band))
                fig_add(g, figs, "eval_acc", "held-out accuracy",
                        sprintf_alloc("Accuracy on the held-out set at each evaluation (%s: the quantize_dynamic model).%s "
                                      "Final%s: %s. Expected: runs that train well reach the baseline's accuracy (%s).",
                                      rep_int8_eval_policy(),
                                      band ? " Each line is the mean over the seeds, the shaded band their smallest to largest value." : "",
                                      band ? " (mean over seeds, smallest to largest)" : "", acc, b->name));
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
        /* each run in the colour and dash of its loss curve (its place in the loss plot) */
        char ci[512] = "";
        size_t uc = 0;
        int seq = 0;
        for (int k = 0; k < x->nruns; k++) {
            if (!x->runs[k].have || !has_scaler(&x->runs[k])) continue;
            int pos = ++seq;
            for (int q = 0; q < no; q++) if (order[q] == k) pos = q + 1;
            uc += (size_t)snprintf(ci + uc, sizeof ci - uc > uc ? sizeof ci - uc : 0, "%s%d", uc ? " " : "", pos);
        }
        if (have_sc && !gnuplot(g, x->dir, "scale.gp", "scale", "file='scale.dat'; names='%s'; ci='%s'; ttl='%s'", names, ci, t))
            fig_add(g, figs, "scale", "loss scale over steps",
                    sprintf_alloc("The loss scale over steps (log2 axis), crosses at the skipped steps (a gradient was inf or "
                                  "NaN, so the optimizer step was skipped). %s. Expected (torch.amp.GradScaler): the scale "
                                  "starts at init_scale, halves at every skipped step and doubles after growth_interval "
                                  "clean steps; a static scale stays flat.", cap));
        free(cap);
    }
    /* overflow and underflow per tensor class, one plot per run with casts
     * (a run none of whose cast elements overflowed or underflowed gets no
     * plot, only its name in a note: an empty panel says nothing) */
    char quiet_runs[1024] = "";
    size_t uq = 0;
    int nquiet = 0;
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
        fprintf(f, ": underflow and overflow fractions summed over layers (NaN = the class was not cast at that step)\n");
        double minpos = 1;
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
                if (!(n[c] > 0)) { fputs(" NaN NaN", f); continue; }
                double fu = uu[c] / n[c], fo = o[c] / n[c];
                fprintf(f, " %.6g %.6g", fu, fo);
                if (fu > 0 && fu < minpos) minpos = fu;
                if (fo > 0 && fo < minpos) minpos = fo;
            }
            fputc('\n', f);
            i = j;
        }
        if (close_w(g, &a_fn)) continue;
        /* the series drawn: a class's underflow (overflow) when it has an event */
        char cls[512], quiet[512], useries[64] = "", oseries[64] = "";
        size_t u1 = 0, u2 = 0, u3 = 0, u4 = 0;
        cls[0] = quiet[0] = 0;
        const char *worst_u = NULL, *worst_o = NULL;
        double wu = 0, wo = 0;
        for (int c = 0; c < r->ncls; c++) {
            double fu = rep_cls_frac(r, "underflow", r->cls[c].name), fo = rep_cls_frac(r, "overflow", r->cls[c].name);
            u1 += (size_t)snprintf(cls + u1, sizeof cls - u1 > u1 ? sizeof cls - u1 : 0, "%s%s", u1 ? " " : "", r->cls[c].name);
            if (fu == 0 && fo == 0)
                u2 += (size_t)snprintf(quiet + u2, sizeof quiet - u2 > u2 ? sizeof quiet - u2 : 0, "%s%s", u2 ? ", " : "", r->cls[c].name);
            if (fu > 0) u3 += (size_t)snprintf(useries + u3, sizeof useries - u3 > u3 ? sizeof useries - u3 : 0, "%s%d", u3 ? " " : "", c + 1);
            if (fo > 0) u4 += (size_t)snprintf(oseries + u4, sizeof oseries - u4 > u4 ? sizeof oseries - u4 : 0, "%s%d", u4 ? " " : "", c + 1);
            if (fu > wu) { wu = fu; worst_u = r->cls[c].name; }
            if (fo > wo) { wo = fo; worst_o = r->cls[c].name; }
        }
        if (!useries[0] && !oseries[0]) {
            char pol[SUITE_NAME_MAX + 4] = "";
            if (strcmp(r->name, r->policy)) snprintf(pol, sizeof pol, "%s, ", r->policy);
            uq += (size_t)snprintf(quiet_runs + uq, sizeof quiet_runs - uq > uq ? sizeof quiet_runs - uq : 0, "%s%s (%s%.0f cast elements)",
                                   uq ? "; " : "", r->name, pol, r->all.n);
            nquiet++;
            continue;
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
        if (!gnuplot(g, x->dir, "rates.gp", out, "file='%s'; names='%s'; useries='%s'; oseries='%s'; ttl='%s'; ymin=%g; xmin=%g; xmax=%g",
                     fn, cls, useries, oseries, t, ymin, xmin, xmax))
            fig_add(g, figs, out, "overflow and underflow rates",
                    sprintf_alloc("%s (%s): fraction of each tensor class's elements that became zero (underflow, solid) or "
                                  "overflowed (dashed) when cast to low precision, summed over layers, at the telemetry steps "
                                  "(tensors.csv); a step where the fraction was exactly 0 is a marker on the row labelled 0 "
                                  "below the log axis, and no line crosses it. Over those steps: underflow %.3g%s, overflow "
                                  "%.3g%s.%s%s%s%s%s",
                                  r->name, r->policy, rep_cls_frac(r, "underflow", NULL), hu, rep_cls_frac(r, "overflow", NULL), ho,
                                  quiet[0] ? " Classes with no event at any step (not drawn): " : "", quiet,
                                  quiet[0] ? "." : "", (claim || expected[0]) ? " Expected: " : "", claim ? claim : expected));
    }
    if (nquiet)
        figs->note = sprintf_alloc("No overflow and underflow plot for %s: none of %s cast elements overflowed or became zero at "
                                   "the telemetry steps (the numbers are in the rates_*.dat files, all zero).",
                                   quiet_runs, nquiet == 1 ? "its" : "their");
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
        fprintf(f, ": amax and scale (NaN = not cast at that step)\n");
        double amin = INFINITY, amaxv = 0;
        int azero = 0;
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
                /* amax 0 (every element zero) is written as 0: the plot shows it on its zero row */
                if (am[c] >= 0 && isfinite(am[c])) fprintf(f, " %.9g", am[c]); else fputs(" NaN", f);
                if (sc[c] > 0 && isfinite(sc[c])) fprintf(f, " %.9g", sc[c]); else fputs(" NaN", f);
                if (am[c] > 0 && am[c] < amin) amin = am[c];
                if (am[c] > amaxv && isfinite(am[c])) amaxv = am[c];
                azero |= am[c] == 0;
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
            rep_policy_scaling(r->policy) == REP_SCALING_DELAYED
                ? "Delayed scaling: the scale comes from the largest amax in the history (amax_history_len steps), so it "
                  "follows a falling amax only after the history rolls, and a rising amax at once only through saturation."
            : rep_policy_scaling(r->policy) == REP_SCALING_CURRENT
                ? "Current scaling: scale = fmt_max / amax of the same step, so the scale mirrors the amax step by step."
                : "Fine-grained scaling (per row, block or MX block): the scale shown is the smallest of the tensor's scales "
                  "(the one for its largest block), which mirrors the tensor amax.";
        if (!isfinite(amin)) amin = amaxv = 1;
        if (!gnuplot(g, x->dir, "fp8.gp", out, "file='%s'; names='%s'; ttl='%s'; amin=%g; amax=%g; azero=%d", fn, cn, t, amin, amaxv,
                     azero))
            fig_add(g, figs, out, "fp8 amax and scale history",
                    sprintf_alloc("%s (%s), layer %s: amax (top) and scale (bottom) of the fp8 tensors (%s) at the telemetry "
                                  "steps.%s %s",
                                  r->name, r->policy, layer, cf2,
                                  azero ? " An amax of exactly 0 (every element of the tensor zero) is a marker on the row "
                                          "labelled 0 below the log axis." : "", how));
    }
    /* several seeds: the loss and accuracy plots show them all; the others the first seed's runs */
    for (int k = 0; x->nseeds > 1 && k < figs->n; k++) {
        if (!strcmp(figs->v[k].file, "loss") || !strcmp(figs->v[k].file, "loss_diff") || !strcmp(figs->v[k].file, "eval_acc")) continue;
        char *c = sprintf_alloc("%s (Seed %llu, the first of %d seeds; the loss and accuracy plots show every seed.)", figs->v[k].caption,
                                x->def.seeds[0], x->nseeds);
        free(figs->v[k].caption);
        figs->v[k].caption = c;
    }
}
