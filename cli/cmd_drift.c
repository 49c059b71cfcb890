/* SPDX-License-Identifier: MIT */
/* cmd_drift.c: `fpemu drift BASELINE RESULTS`, the numeric regression gate.
 *
 * Every regular file under BASELINE (a folder, or one file) is compared with
 * the file at the same relative path under RESULTS. CSV files are compared
 * cell by cell (rows in order, columns by name); other files line by line.
 * By default every value must be identical (numbers compare as numbers, so
 * "0.5" equals "5e-1"; NaN equals NaN). A tolerance file (--tolerances) gives
 * bands for chosen files and columns:
 *
 *     # FILE-GLOB                     COLUMN-GLOB   RULE
 *     training/[*]/[*]/metrics.csv    loss          abs=0.002 rel=0.02 smooth=20
 *     catalogue/[*]                   [*]           exact
 *
 * (written here with [*] for a star; globs as fnmatch(3) without
 * FNM_PATHNAME, so a star also matches `/`). The
 * first matching line wins; no match means exact. A band accepts
 * |results - baseline| <= abs + rel x |baseline|; smooth=N compares the
 * trailing means over N rows instead of single rows (loss curves are noisy
 * step to step; a band on the running mean asks whether the curve moved).
 *
 * Exit status: 0 every file identical or within its bands; 1 drift (a value
 * outside its band, a missing column, a different row count); 2 bad input
 * (a missing folder or file, a malformed CSV or tolerance file). */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "csv.h"

#define SUB "drift"

typedef enum { RULE_EXACT, RULE_IGNORE, RULE_BAND } rule_kind;
typedef struct {
    char file[512], col[128];
    rule_kind kind;
    double abs_tol, rel_tol;
    long smooth;
    int line;
} rule;

typedef struct {
    rule *rules;
    int nrules;
    const char *tol_path;
    int max_print, verbose;
    /* totals */
    int n_files, n_identical, n_band, n_drift, n_bad;
} drift_ctx;

static const rule exact_rule = {"*", "*", RULE_EXACT, 0, 0, 0, 0};

static const rule *find_rule(const drift_ctx *c, const char *rel, const char *col) {
    for (int i = 0; i < c->nrules; i++)
        if (!fnmatch(c->rules[i].file, rel, 0) && !fnmatch(c->rules[i].col, col, 0)) return &c->rules[i];
    return &exact_rule;
}

static void rule_text(const rule *r, char *buf, size_t n) {
    if (r->kind == RULE_EXACT) { snprintf(buf, n, "exact"); return; }
    if (r->kind == RULE_IGNORE) { snprintf(buf, n, "ignored"); return; }
    int k = snprintf(buf, n, "|d| <= %g + %g x |baseline|", r->abs_tol, r->rel_tol);
    if (r->smooth > 1 && k > 0 && (size_t)k < n) snprintf(buf + k, n - (size_t)k, " on %ld-row trailing means", r->smooth);
}

static int read_tolerances(drift_ctx *c, const char *path) {
    size_t len;
    char *text = csv_slurp(path, &len);
    if (!text) return cli_error(SUB, "--tolerances %s: cannot read: %s", path, strerror(errno));
    int ln = 0;
    char *next = text;
    while (next && *next) {
        char *line = next;
        char *nl = strchr(line, '\n');
        if (nl) { *nl = 0; next = nl + 1; } else next = NULL;
        ln++;
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char *tok[16];
        int nt = 0;
        char *s2 = NULL;
        for (char *t = strtok_r(line, " \t\r", &s2); t && nt < 16; t = strtok_r(NULL, " \t\r", &s2)) tok[nt++] = t;
        if (!nt) continue;
        if (nt < 3) {
            int rc_ = cli_error(SUB, "%s: line %d: expected `FILE-GLOB COLUMN-GLOB RULE` (RULE: exact, ignore, or "
                                  "abs=A rel=R smooth=N), got %d field%s", path, ln, nt, nt == 1 ? "" : "s");
            free(text); /* after the message: its tokens point into text */
            return rc_;
        }
        rule r;
        memset(&r, 0, sizeof r);
        r.line = ln;
        if (strlen(tok[0]) >= sizeof r.file || strlen(tok[1]) >= sizeof r.col) {
            int rc_ = cli_error(SUB, "%s: line %d: glob too long", path, ln);
            free(text); /* after the message: its tokens point into text */
            return rc_;
        }
        strcpy(r.file, tok[0]);
        strcpy(r.col, tok[1]);
        if (!strcmp(tok[2], "exact") || !strcmp(tok[2], "ignore")) {
            r.kind = tok[2][0] == 'e' ? RULE_EXACT : RULE_IGNORE;
            if (nt > 3) {
                int rc_ = cli_error(SUB, "%s: line %d: nothing may follow '%s', got '%s'", path, ln, tok[2], tok[3]);
                free(text); /* after the message: its tokens point into text */
                return rc_;
            }
        } else {
            r.kind = RULE_BAND;
            for (int i = 2; i < nt; i++) {
                double v;
                char *eq = strchr(tok[i], '=');
                if (!eq || cli_parse_double(eq + 1, &v) || !(v >= 0) || isinf(v)) {
                    int rc_ = cli_error(SUB, "%s: line %d: '%s': expected exact, ignore, or abs=A, rel=R, smooth=N with "
                                          "non-negative numbers", path, ln, tok[i]);
                    free(text); /* after the message: its tokens point into text */
                    return rc_;
                }
                *eq = 0;
                if (!strcmp(tok[i], "abs")) r.abs_tol = v;
                else if (!strcmp(tok[i], "rel")) r.rel_tol = v;
                else if (!strcmp(tok[i], "smooth") && v == floor(v) && v >= 1 && v <= 1e6) r.smooth = (long)v;
                else {
                    int rc_ = cli_error(SUB, "%s: line %d: '%s=%s': expected abs=A, rel=R or smooth=N (N a whole number "
                                          "1..1000000)", path, ln, tok[i], eq + 1);
                    free(text); /* after the message: its tokens point into text */
                    return rc_;
                }
            }
        }
        c->rules = realloc(c->rules, (size_t)(c->nrules + 1) * sizeof *c->rules);
        c->rules[c->nrules++] = r;
    }
    free(text);
    return 0;
}

/* ---- file lists ---------------------------------------------------------- */
typedef struct { char **v; int n, cap; } strlist;
static void sl_add(strlist *l, const char *s) {
    if (l->n == l->cap) { l->cap = l->cap ? l->cap * 2 : 64; l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v); }
    l->v[l->n++] = strdup(s);
}
static void sl_free(strlist *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Relative paths of the regular files under ROOT/REL (hidden entries skipped). */
static int walk(const char *root, const char *rel, strlist *out) {
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *e;
    strlist names = {0};
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        sl_add(&names, e->d_name);
    }
    closedir(d);
    if (names.n) qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str); /* qsort(NULL, 0) is UB */
    for (int i = 0; i < names.n; i++) {
        char r2[4096], p2[8300];
        snprintf(r2, sizeof r2, "%s%s%s", rel, *rel ? "/" : "", names.v[i]);
        snprintf(p2, sizeof p2, "%s/%s", root, r2);
        struct stat st;
        if (stat(p2, &st)) continue;
        if (S_ISDIR(st.st_mode)) walk(root, r2, out);
        else if (S_ISREG(st.st_mode)) sl_add(out, r2);
    }
    sl_free(&names);
    return 0;
}

/* The folder of PATH, if it is a run folder (it has a summary.json), must
 * hold files that belong together (csv_run_check). Each folder is checked
 * once: CHECKED holds "0DIR" (good) or "1DIR\tMESSAGE". Returns NULL, or
 * the message (valid until CHECKED is freed). */
static const char *run_check(strlist *checked, const char *path, const char *side) {
    char dir[8400];
    snprintf(dir, sizeof dir, "%s", path);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = 0;
    else snprintf(dir, sizeof dir, ".");
    size_t dl = strlen(dir);
    for (int i = 0; i < checked->n; i++) {
        const char *e = checked->v[i];
        if (!strncmp(e + 1, dir, dl) && (e[1 + dl] == 0 || e[1 + dl] == '\t')) return e[0] == '0' ? NULL : e + 2 + dl;
    }
    char err[9000], *ent;
    int rc = csv_run_check(dir, err, sizeof err);
    if (rc < 0) {
        if (asprintf(&ent, "1%s\t%s: %s", dir, side, err) < 0) ent = NULL;
    } else if (asprintf(&ent, "0%s", dir) < 0) ent = NULL;
    if (!ent) return rc < 0 ? "out of memory" : NULL;
    sl_add(checked, ent);
    free(ent);
    const char *e = checked->v[checked->n - 1];
    return e[0] == '0' ? NULL : e + 2 + dl;
}

static int has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* ---- comparing ------------------------------------------------------------ */

/* Where a row is: "step 120" when the file has a step column, else "line N". */
static void where(const csv_table *t, long row, char *buf, size_t n) {
    int sc = csv_col(t, "step");
    if (sc >= 0) snprintf(buf, n, "step %s", csv_cell(t, row, sc));
    else snprintf(buf, n, "line %ld", t->lineno[row]);
}

static void fmt_dev(double b, double r, char *buf, size_t n) {
    if (isfinite(b) && isfinite(r)) {
        double d = r - b;
        if (b != 0) snprintf(buf, n, "%+.4g, %+.3g%%", d, 100.0 * d / fabs(b));
        else snprintf(buf, n, "%+.4g", d);
    } else {
        snprintf(buf, n, "not finite");
    }
}

/* The class of a number: finite, NaN, +inf or -inf. */
typedef enum { C_FIN, C_NAN, C_PINF, C_NINF } vclass;
static vclass vclass_of(double v) { return isnan(v) ? C_NAN : isinf(v) ? (v > 0 ? C_PINF : C_NINF) : C_FIN; }
static const char *vclass_name(double v) {
    static const char *const n[] = {"a finite value", "NaN", "+inf", "-inf"};
    return n[vclass_of(v)];
}

/* Trailing means over w rows of both columns, over the rows of the window
 * where both values are finite (a NaN or an inf neither makes the whole
 * window equal nor the whole window different: the value itself is
 * compared by its class, the rule of compare_csv). NaN where the window has
 * no such row. */
static void trailing_means(const csv_table *B, int bc, const csv_table *R, int rc, long nrows, long w, double *mb, double *mr) {
    for (long i = 0; i < nrows; i++) {
        long lo = i - w + 1 < 0 ? 0 : i - w + 1, k = 0;
        double sb = 0, sr = 0;
        for (long j = lo; j <= i; j++) {
            double b = csv_get(B, j, bc), r = csv_get(R, j, rc);
            if (!isfinite(b) || !isfinite(r)) continue;
            sb += b;
            sr += r;
            k++;
        }
        mb[i] = k ? sb / (double)k : NAN;
        mr[i] = k ? sr / (double)k : NAN;
    }
}

static int same_value(const char *a, const char *b) {
    if (!strcmp(a, b)) return 1;
    double x, y;
    if (csv_num(a, &x) || csv_num(b, &y)) return 0;
    return x == y || (isnan(x) && isnan(y));
}

typedef enum { F_IDENTICAL, F_BAND, F_DRIFT, F_BAD } fstatus;

static fstatus compare_csv(drift_ctx *c, const char *rel, const char *bpath, const char *rpath) {
    csv_table B, R;
    char err[1024];
    int rc = csv_read(&B, bpath, err, sizeof err);
    if (rc) { fprintf(stdout, "BAD    %s: baseline: %s\n", rel, err); return F_BAD; }
    rc = csv_read(&R, rpath, err, sizeof err);
    if (rc) { csv_free(&B); fprintf(stdout, "BAD    %s: results: %s\n", rel, err); return F_BAD; }
    /* rows compare in order: a step column must be in order (one row per
     * step in metrics.csv and eval.csv), or "step N" would name two rows */
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    int strict = !strcmp(base, "metrics.csv") || !strcmp(base, "eval.csv");
    for (int side = 0; side < 2; side++)
        if (csv_check_steps(side ? &R : &B, strict, err, sizeof err)) {
            fprintf(stdout, "BAD    %s: %s: %s\n", rel, side ? "results" : "baseline", err);
            csv_free(&B);
            csv_free(&R);
            return F_BAD;
        }
    /* collect messages first, print with the file's status line */
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *m = open_memstream(&msgs, &mlen);
    int drift = 0, band = 0, printed = 0;
    long nrows = B.nrows < R.nrows ? B.nrows : R.nrows;
    if (B.nrows != R.nrows) {
        drift = 1;
        printed++;
        fprintf(m, "         rows: baseline has %ld, results %ld%s\n", B.nrows, R.nrows,
                nrows ? " (the common rows are compared below)" : "");
    }
    for (int i = 0; i < R.ncols; i++)
        if (csv_col(&B, R.header[i]) < 0 && c->verbose) fprintf(m, "         column %s: new in the results (not compared)\n", R.header[i]);
    for (int bc = 0; bc < B.ncols; bc++) {
        const char *name = B.header[bc];
        const rule *ru = find_rule(c, rel, name);
        if (ru->kind == RULE_IGNORE) continue;
        int rcn = csv_col(&R, name);
        if (rcn < 0) {
            drift = 1;
            if (printed++ < c->max_print) fprintf(m, "         column %s: missing from the results\n", name);
            continue;
        }
        double *mb = NULL, *mr = NULL;
        if (ru->kind == RULE_BAND && ru->smooth > 1) {
            mb = malloc((size_t)(nrows ? nrows : 1) * sizeof *mb);
            mr = malloc((size_t)(nrows ? nrows : 1) * sizeof *mr);
            if (!mb || !mr) {
                free(mb); free(mr); fclose(m); free(msgs); csv_free(&B); csv_free(&R);
                printf("BAD    %s: out of memory\n", rel);
                return F_BAD;
            }
            trailing_means(&B, bc, &R, rcn, nrows, ru->smooth, mb, mr);
        }
        long n_out = 0, n_in = 0, first_out = -1, worst_out = -1, worst_in = -1;
        double worst_out_x = -1, worst_in_x = -1;
        for (long r = 0; r < nrows; r++) {
            const char *sb = csv_cell(&B, r, bc), *sr = csv_cell(&R, r, rcn);
            if (same_value(sb, sr)) continue;
            double b, x;
            int numeric = !csv_num(sb, &b) && !csv_num(sr, &x);
            /* NaN and inf: equal classes (both NaN, both +inf, both -inf)
             * compare equal, a change of class is drift whatever the band,
             * and neither hides its finite neighbours (the trailing means
             * are over the rows where both values are finite) */
            if (numeric && vclass_of(b) != vclass_of(x)) {
                if (!(worst_out_x >= INFINITY)) { worst_out_x = INFINITY; worst_out = r; }
            } else if (numeric && ru->kind == RULE_BAND) {
                if (mb) { b = mb[r]; x = mr[r]; }
                double d = fabs(x - b), lim = ru->abs_tol + ru->rel_tol * fabs(b);
                /* excess over the band, relative to the band (for "largest") */
                double ex = d / (lim > 0 ? lim : 1e-300);
                if (isnan(b) || d <= lim) { /* NaN mean: no row of the window is finite on both sides */
                    if (isnan(b)) ex = 0;
                    n_in++;
                    if (!(ex <= worst_in_x)) { worst_in_x = ex; worst_in = r; }
                    continue;
                }
                if (!(ex <= worst_out_x)) { worst_out_x = ex; worst_out = r; }
            } else if (numeric) {
                double d = fabs(x - b) / (fabs(b) > 0 ? fabs(b) : 1);
                if (!(d <= worst_out_x)) { worst_out_x = d; worst_out = r; }
            } else if (worst_out < 0) {
                worst_out = r;
            }
            n_out++;
            if (first_out < 0) first_out = r;
        }
        char rt[160];
        rule_text(ru, rt, sizeof rt);
        if (n_out) {
            drift = 1;
            if (printed++ < c->max_print) {
                char w1[128], w2[128], d1[96], d2[96];
                where(&B, first_out, w1, sizeof w1);
                double b1, x1;
                int num1 = !csv_num(csv_cell(&B, first_out, bc), &b1) && !csv_num(csv_cell(&R, first_out, rcn), &x1);
                fprintf(m, "         column %s: %ld of %ld rows outside (%s); first at %s: baseline %s, results %s", name,
                        n_out, nrows, rt, w1, csv_cell(&B, first_out, bc), csv_cell(&R, first_out, rcn));
                if (num1 && vclass_of(b1) != vclass_of(x1)) {
                    fprintf(m, " (not finite on one side or both: a change from %s to %s)", vclass_name(b1), vclass_name(x1));
                } else if (num1) {
                    if (mb) { b1 = mb[first_out]; x1 = mr[first_out]; fprintf(m, " (means %.6g vs %.6g", b1, x1); }
                    else fprintf(m, " (");
                    fmt_dev(b1, x1, d1, sizeof d1);
                    fprintf(m, "%s%s)", mb ? ": " : "", d1);
                }
                if (worst_out >= 0 && worst_out != first_out) {
                    where(&B, worst_out, w2, sizeof w2);
                    int cls2 = vclass_of(csv_get(&B, worst_out, bc)) != vclass_of(csv_get(&R, worst_out, rcn));
                    double b2 = mb && !cls2 ? mb[worst_out] : csv_get(&B, worst_out, bc);
                    double x2 = mb && !cls2 ? mr[worst_out] : csv_get(&R, worst_out, rcn);
                    fmt_dev(b2, x2, d2, sizeof d2);
                    fprintf(m, "; largest at %s: %s%.6g vs %.6g (%s)", w2, mb && !cls2 ? "means " : "", b2, x2, d2);
                }
                fputc('\n', m);
            }
        } else if (n_in) {
            band = 1;
            if (c->verbose || printed < c->max_print) {
                char w2[128], d2[96];
                where(&B, worst_in, w2, sizeof w2);
                double b2 = mb ? mb[worst_in] : csv_get(&B, worst_in, bc);
                double x2 = mb ? mr[worst_in] : csv_get(&R, worst_in, rcn);
                fmt_dev(b2, x2, d2, sizeof d2);
                fprintf(m, "         column %s: %ld of %ld rows moved, all within (%s); largest at %s: %s%.6g vs %.6g (%s)\n",
                        name, n_in, nrows, rt, w2, mb ? "means " : "", b2, x2, d2);
                printed++;
            }
        }
        free(mb);
        free(mr);
    }
    if (printed > c->max_print) fprintf(m, "         ... %d more findings (--max-print)\n", printed - c->max_print);
    fclose(m);
    fstatus st = drift ? F_DRIFT : band ? F_BAND : F_IDENTICAL;
    if (st == F_DRIFT) printf("DRIFT  %s\n%s", rel, msgs);
    else if (st == F_BAND) printf("band   %s\n%s", rel, msgs);
    else if (c->verbose) printf("same   %s\n", rel);
    free(msgs);
    csv_free(&B);
    csv_free(&R);
    return st;
}

/* Non-CSV files: line by line, exactly (or ignored). */
static fstatus compare_text(drift_ctx *c, const char *rel, const char *bpath, const char *rpath) {
    const rule *ru = find_rule(c, rel, "");
    if (ru->kind == RULE_IGNORE) return F_IDENTICAL;
    size_t bl, rl;
    char *b = csv_slurp(bpath, &bl);
    if (!b) { printf("BAD    %s: baseline: cannot read %s: %s\n", rel, bpath, strerror(errno)); return F_BAD; }
    char *r = csv_slurp(rpath, &rl);
    if (!r) { printf("BAD    %s: results: cannot read %s: %s\n", rel, rpath, strerror(errno)); free(b); return F_BAD; }
    fstatus st = F_IDENTICAL;
    if (bl != rl || memcmp(b, r, bl)) {
        st = F_DRIFT;
        long line = 1, ndiff = 0, first = 0;
        const char *p = b, *q = r, *fp = NULL, *fq = NULL;
        while (*p || *q) {
            const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
            size_t pl = pe ? (size_t)(pe - p) : strlen(p), ql = qe ? (size_t)(qe - q) : strlen(q);
            if (pl != ql || memcmp(p, q, pl)) {
                if (!ndiff++) { first = line; fp = p; fq = q; }
            }
            p += pl + (pe ? 1 : 0);
            q += ql + (qe ? 1 : 0);
            line++;
        }
        printf("DRIFT  %s\n", rel);
        if (fp) {
            int pl = (int)strcspn(fp, "\n"), ql = (int)strcspn(fq, "\n");
            printf("         %ld line%s differ; first at line %ld:\n           baseline: %.*s%s\n           results:  %.*s%s\n",
                   ndiff, ndiff == 1 ? "" : "s", first, pl > 120 ? 120 : pl, fp, pl > 120 ? "..." : "",
                   ql > 120 ? 120 : ql, fq, ql > 120 ? "..." : "");
        }
    } else if (c->verbose) {
        printf("same   %s\n", rel);
    }
    free(b);
    free(r);
    return st;
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu drift [--tolerances FILE] [--max-print N] [--verbose] BASELINE RESULTS\n\n"
            "Compare every file under BASELINE (a folder or one file) with the same path under RESULTS.\n"
            "CSV files compare cell by cell (columns by name, rows in order), other files line by line;\n"
            "values must be identical unless a line of the tolerance file gives a band:\n"
            "  FILE-GLOB  COLUMN-GLOB  exact | ignore | abs=A rel=R [smooth=N]\n"
            "(first match wins; |results - baseline| <= A + R x |baseline|, on N-row trailing means).\n"
            "Prints what moved, by how much and where (file, column, step), then a summary.\n"
            "Exit status: 0 no drift, 1 drift, 2 bad input (missing folder or file, malformed CSV).\n");
}

int cmd_drift(int argc, char **argv) {
    drift_ctx c;
    memset(&c, 0, sizeof c);
    c.max_print = 10;
    const char *paths[2] = {NULL, NULL};
    int np = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) { usage(stdout); free(c.rules); return 0; }
        if (!strcmp(a, "--tolerances") || !strcmp(a, "--max-print")) {
            if (i + 1 >= argc) { free(c.rules); return cli_error(SUB, "%s needs a value", a); }
            const char *v = argv[++i];
            if (a[2] == 't') {
                if (c.tol_path) { free(c.rules); return cli_error(SUB, "--tolerances given twice"); }
                c.tol_path = v;
                if (read_tolerances(&c, v)) { free(c.rules); return 2; }
            } else {
                unsigned long long k;
                if (cli_parse_u64(v, &k) || k > 1000000) { free(c.rules); return cli_error(SUB, "--max-print: expected a count, got '%s'", v); }
                c.max_print = (int)k;
            }
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            c.verbose = 1;
        } else if (a[0] == '-' && a[1]) {
            usage(stderr);
            free(c.rules);
            return cli_error(SUB, "unknown option '%s'", a);
        } else if (np < 2) {
            paths[np++] = a;
        } else {
            free(c.rules);
            return cli_error(SUB, "expected two paths, BASELINE and RESULTS; got a third, '%s'", a);
        }
    }
    if (np != 2) { usage(stderr); free(c.rules); return cli_error(SUB, "expected two paths, BASELINE and RESULTS"); }
    struct stat sb, sr;
    if (stat(paths[0], &sb)) { free(c.rules); return cli_error(SUB, "baseline %s: %s", paths[0], strerror(errno)); }
    if (stat(paths[1], &sr)) { free(c.rules); return cli_error(SUB, "results %s: %s", paths[1], strerror(errno)); }
    if (S_ISDIR(sb.st_mode) != S_ISDIR(sr.st_mode)) {
        free(c.rules);
        return cli_error(SUB, "%s and %s: expected two folders or two files", paths[0], paths[1]);
    }
    printf("fpemu drift: baseline %s, results %s, tolerances %s\n", paths[0], paths[1], c.tol_path ? c.tol_path : "none (all exact)");
    strlist files = {0};
    int dirs = S_ISDIR(sb.st_mode);
    if (dirs) {
        walk(paths[0], "", &files);
        if (!files.n) {
            free(c.rules);
            return cli_error(SUB, "baseline %s: no files to compare (run `make baseline`)", paths[0]);
        }
    } else {
        const char *base = strrchr(paths[0], '/');
        sl_add(&files, base ? base + 1 : paths[0]);
    }
    int missing = 0;
    strlist checked = {0};
    for (int i = 0; i < files.n; i++) {
        char bp[8300], rp[8300];
        if (dirs) {
            snprintf(bp, sizeof bp, "%s/%s", paths[0], files.v[i]);
            snprintf(rp, sizeof rp, "%s/%s", paths[1], files.v[i]);
        } else {
            snprintf(bp, sizeof bp, "%s", paths[0]);
            snprintf(rp, sizeof rp, "%s", paths[1]);
        }
        /* a whole file ignored by the tolerance file (COLUMN-GLOB matching "") */
        if (find_rule(&c, files.v[i], "")->kind == RULE_IGNORE && !has_suffix(files.v[i], ".csv")) continue;
        c.n_files++;
        struct stat st;
        if (stat(rp, &st) || !S_ISREG(st.st_mode)) {
            printf("MISSING %s: in the baseline, not in the results (%s)\n", files.v[i], rp);
            missing++;
            c.n_bad++;
            continue;
        }
        /* a run folder (it has a summary.json): its files must belong together */
        const char *why = run_check(&checked, bp, "baseline");
        if (!why) why = run_check(&checked, rp, "results");
        if (why) {
            printf("BAD    %s: %s\n", files.v[i], why);
            c.n_bad++;
            continue;
        }
        fstatus s = has_suffix(files.v[i], ".csv") ? compare_csv(&c, files.v[i], bp, rp) : compare_text(&c, files.v[i], bp, rp);
        if (s == F_IDENTICAL) c.n_identical++;
        else if (s == F_BAND) c.n_band++;
        else if (s == F_DRIFT) c.n_drift++;
        else c.n_bad++;
    }
    /* CSV files the baseline does not cover (not compared); walk's order is
     * per folder, so sort a copy for the search */
    if (dirs) {
        qsort(files.v, (size_t)files.n, sizeof *files.v, cmp_str);
        strlist rf = {0};
        walk(paths[1], "", &rf);
        int extra = 0;
        for (int i = 0; i < rf.n; i++) {
            if (!has_suffix(rf.v[i], ".csv")) continue;
            if (bsearch(&rf.v[i], files.v, (size_t)files.n, sizeof *files.v, cmp_str)) continue;
            if (c.verbose) printf("new    %s: not in the baseline (not compared)\n", rf.v[i]);
            extra++;
        }
        if (extra && !c.verbose) printf("note: %d CSV file%s in the results %s not in the baseline (not compared; --verbose lists them)\n",
                                        extra, extra == 1 ? "" : "s", extra == 1 ? "is" : "are");
        sl_free(&rf);
    }
    printf("fpemu drift: %d file%s compared: %d identical, %d within tolerance, %d drifted, %d missing or unreadable\n",
           c.n_files, c.n_files == 1 ? "" : "s", c.n_identical, c.n_band, c.n_drift, c.n_bad);
    int rc = c.n_bad ? 2 : c.n_drift ? 1 : 0;
    printf("fpemu drift: %s (exit %d)\n", rc == 0 ? "PASS" : rc == 1 ? "FAIL: numeric drift" : "ERROR: bad input", rc);
    if (missing) fprintf(stderr, "fpemu drift: %d file%s of the baseline missing from %s\n", missing, missing == 1 ? "" : "s", paths[1]);
    sl_free(&files);
    sl_free(&checked);
    free(c.rules);
    /* the report is the output: a write error (a full disk) must not pass */
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_error(SUB, "standard output: write error (%s): the drift report is incomplete", strerror(errno));
    return rc;
}
