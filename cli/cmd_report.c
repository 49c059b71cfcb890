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
 * baseline is the reference policy's run if there is one). The report is
 * written to DIR: DIR/EXP/RUN/ (copies of the CSVs), DIR/EXP/NAME.png and
 * .svg (gnuplot, scripts in reports/), DIR/fragment.html and fragment.md
 * (the section of `make experiments`, mk/experiments.mk), the verdict block
 * DIR/headline.html, .md and the plots that matter DIR/keyplots.html, .md
 * (both put first in the report), DIR/summary.csv, and a standalone
 * DIR/index.html and DIR/summary.md.
 *
 * This file owns the command: its options, gathering the input folders
 * into the report, and the staging folder that makes --out appear whole or
 * not at all. The other parts are listed in report.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "report.h"

volatile sig_atomic_t rep_stop_signal;

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

static void stop_handler(int sig) { rep_stop_signal = sig; }

/* ON: SIGINT, SIGTERM and SIGHUP set rep_stop_signal (no SA_RESTART: a wait
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
    memcpy(o->base, b, strlen(b) + 1); /* fits: checked above */
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
        if (!empty && !rep_is_file(p1) && !rep_is_file(p2))
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
            if (!rep_is_dir(q)) { snprintf(o->top, sizeof o->top, "%s", q); break; }
            *p = c;
            if (!c) break;
        }
        if (rep_mkdir_p(o->parent)) {
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
    if (commit && !rep_stop_signal) {
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
            "       fpemu report --out DIR --suite DEFS --runs CACHE [--seeds S] [--title T] [--scripts DIR] [--no-plots]\n"
            "       fpemu report --plan --suite DEFS --runs CACHE [--seeds \"1 2 3\"]\n\n"
            "Write the training report to DIR: per experiment, copies of the runs' CSVs, gnuplot plots (PNG and SVG:\n"
            "loss against the baseline and the difference, held-out accuracy, overflow and underflow per tensor class,\n"
            "the loss scale with skipped steps, fp8 amax and scale histories), and DIR/index.html, summary.md,\n"
            "summary.csv, fragment.html and fragment.md (the section of `make experiments`).\n"
            "PATH: an experiment folder (experiment.txt and one folder per run), a folder of them, or run folders\n"
            "written by `fpemu train --out` (reported together against their %s run).\n"
            "--suite DEFS (a definition file or a folder of them, e.g. experiments/suite) with --runs CACHE takes\n"
            "the runs from CACHE/KEY (the folders --plan names, one per run and seed); --plan prints the makefile that\n"
            "runs them. --seeds \"1 2 3\" replaces every definition's seeds (make experiments SEEDS=\"1 2 3\").\n"
            "A claim is reproduced when each of its rules holds on every seed and beyond the seeds' spread\n"
            "(docs/experiments.md, \"Seeds\").\n"
            "--scripts DIR: the gnuplot scripts (default: $FPEMU_ROOT/reports, ./reports, or beside the program).\n\n"
            "Rules in a definition: `expect RUN: EXPR CMP EXPR` with CMP one of < <= > >= == != and EXPR built from\n"
            "numbers, + - * /, abs(), min(,), max(,) and these metrics of a run, METRIC(RUN):\n",
            rep_reference_policy());
    for (int i = 0; rep_metric_names[i]; i++) fprintf(out, "  %-12s %s\n", rep_metric_names[i], rep_metric_docs[i]);
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
        if (!strcmp(a, "--out") || !strcmp(a, "--suite") || !strcmp(a, "--runs") || !strcmp(a, "--scripts") || !strcmp(a, "--title") ||
            !strcmp(a, "--seeds")) {
            if (i + 1 >= argc) { free(paths); return cli_error(SUB, "%s needs a value", a); }
            const char *v = argv[++i];
            if (!strcmp(a, "--seeds")) {
                char e2[256];
                int ns = suite_parse_seeds(v, rep_seeds, e2, sizeof e2);
                if (ns < 0) { free(paths); return cli_error(SUB, "--seeds '%s': %s", v, e2); }
                rep_nseeds = ns;
                continue;
            }
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
        if (!suite || !runs || np || out) { free(paths); return cli_error(SUB, "--plan takes --suite DEFS, --runs CACHE and --seeds only"); }
        char **files;
        int nf = suite_list(suite, &files, err, sizeof err);
        free(paths);
        if (nf < 0) return cli_error(SUB, "--suite %s", err);
        int rc = rep_plan(files, nf, runs);
        for (int i = 0; i < nf; i++) free(files[i]);
        free(files);
        if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
            rc = cli_error(SUB, "standard output: write error (%s): the plan is incomplete", strerror(errno));
        return rc;
    }
    if (!out) { usage(stderr); free(paths); return cli_error(SUB, "--out DIR is required"); }
    if (!suite != !runs) { free(paths); return cli_error(SUB, "--suite and --runs go together"); }
    if (!suite && !np) { usage(stderr); free(paths); return cli_error(SUB, "expected run or experiment folders (or --suite and --runs)"); }
    if (rep_nseeds && !suite) { free(paths); return cli_error(SUB, "--seeds goes with --suite (experiment folders keep the seeds they ran)"); }
    gp_ctx g;
    memset(&g, 0, sizeof g);
    g.no_plots = no_plots;
    if (!no_plots) {
        if (rep_find_scripts(&g, scripts)) {
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
    if (rep_validate_inputs(suite, runs, paths, np)) {
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
            rep_apply_seeds(&d);
            rc = rep_collect_suite(&d, runs, out);
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
        if (rep_is_file(p)) {
            sub = malloc(sizeof *sub);
            sub[n_here++] = strdup(src);
        } else if (rep_is_dir(src)) {
            snprintf(p, sizeof p, "%s/metrics.csv", src);
            if (rep_is_file(p)) {
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
                if (!rep_is_file(q)) continue;
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
            if (!(rep_is_dir(dst) && rep_same_path(sub[k], dst))) {
                suite_exp d;
                snprintf(p, sizeof p, "%s/experiment.txt", sub[k]);
                if (suite_read(&d, p, name, err, sizeof err)) { rc = cli_error(SUB, "%s", err); break; }
                if (rep_mkdir_p(dst)) rc = cli_error(SUB, "%s: cannot create: %s", dst, strerror(errno));
                char q[4800];
                snprintf(q, sizeof q, "%s/experiment.txt", dst);
                if (!rc && rep_copy_file(p, q)) rc = cli_error(SUB, "%s: cannot write: %s", q, strerror(errno));
                for (int j = 0; j < d.nruns && !rc; j++)
                    for (int sd = 0; sd < d.nseeds && !rc; sd++) {
                        char s2[4600], d2[4800];
                        rep_run_dir(&d, sub[k], &d.runs[j], sd, s2, sizeof s2);
                        rep_run_out(&d, dst, &d.runs[j], sd, d2, sizeof d2);
                        if (rep_is_dir(s2)) rc = rep_copy_run(s2, d2);
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
        rc = rep_collect_adhoc(adhoc, na, out);
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
    for (int i = 0; i < nx && !rc && !rep_stop_signal; i++) {
        if (rep_exp_load(&xs[i], exps[i], err, sizeof err)) { rc = cli_error(SUB, "%s", err); loaded = i + 1; break; }
        loaded = i + 1;
        rep_make_plots(&g, &xs[i], &figs[i]);
    }
    if (!rc && !rep_stop_signal) rc = rep_write_verdict(&g, out, xs, nx, figs);
    if (!rc && !rep_stop_signal) rc = rep_write_html(out, xs, nx, figs, title);
    if (!rc && !rep_stop_signal) rc = rep_write_md(out, xs, nx, figs, title);
    if (!rc && !rep_stop_signal) rc = rep_write_csv(out, xs, nx);
    if (!rc && g.write_failed)
        rc = cli_error(SUB, "%s: some plot files could not be written (see above); the report is incomplete", final_out);
    if (!rc && rep_stop_signal) rc = 2;
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
    for (int i = 0; i < loaded; i++) rep_exp_free(&xs[i]);
    for (int i = 0; i < nx; i++) {
        for (int k = 0; k < figs[i].n; k++) { free(figs[i].v[k].caption); free(figs[i].v[k].vars); }
        free(figs[i].v);
        free(figs[i].note);
        free(exps[i]);
    }
    free(figs);
    free(xs);
    free(exps);
    stage_signals(0);
    if (rep_stop_signal) raise(rep_stop_signal); /* the default action now: die by the signal that stopped the report */
    return rc;
}
