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
 * (a missing folder or file, a malformed CSV or tolerance file).
 *
 * Users' files (docs/drift-gate.md, "Gating your own runs"): --key,
 * --columns, --baseline-seeds, --json and their kin switch CSV files to
 * compare_keyed below (rows by key, bands fixed or from several seeds, a
 * table of failures, a JSON verdict); without them the output above is
 * unchanged, byte for byte, which is what `make drift` reads. */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
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
    /* the keyed comparison (compare_keyed), chosen by any of its options */
    int keyed;
    char **keys, **cols;   /* --key, --columns: comma lists (none: rows by position; every numeric column) */
    int nkeys, ncols;
    int seeds;             /* --baseline-seeds */
    int use_k;             /* --k K: mean +- K x std; else min/max widened by --margin x range */
    double k, margin;
    int has_def;           /* --abs/--rel/--smooth: the band of columns no tolerance line matches */
    rule def;
    int allow_missing;     /* --allow-missing: keys missing from the results do not fail */
    const char *json_path; /* --json FILE */
    cJSON *jfiles;
    long n_values, n_outside, n_missing, n_extra, n_colmissing;
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

/* ---- the keyed comparison: users' files ------------------------------------
 *
 * Any of --key, --columns, --baseline-seeds, --json, --allow-missing, --abs,
 * --rel, --smooth selects it for every CSV file (other files compare as
 * above; without these options nothing here runs, so the suite's gate prints
 * what it always printed). Rows match by the key columns (--key; without it
 * by position, the key being the row number). Each compared cell has a
 * class: empty, finite, NaN, +inf or -inf. One baseline: the classes must be
 * equal, and finite values must be identical or within the column's band.
 * Several baselines (--baseline-seeds): the result's class must be one that
 * a seed has at that key, and a finite value must lie within
 * [min - M x range, max + M x range] of the seeds' finite values (M is
 * --margin, 1 by default), widened by the column's fixed band as a floor;
 * or, with --k K (5 seeds or more), within mean +- (K x std + floor). */

typedef enum { K_FIN, K_NAN, K_PINF, K_NINF, K_EMPTY } kcls;
static const char *const kcls_name[] = {"a finite value", "NaN", "+inf", "-inf", "an empty cell"};
static const char *const kcls_short[] = {"finite", "NaN", "+inf", "-inf", "empty"};

/* The class of a cell and its value; -1 if it is neither empty nor a number. */
static int cell_class(const char *s, double *v) {
    const char *p = s;
    while (*p == ' ' || *p == '\t') p++;
    *v = NAN;
    if (!*p) return K_EMPTY;
    if (csv_num(s, v)) return -1;
    return isnan(*v) ? K_NAN : isinf(*v) ? (*v > 0 ? K_PINF : K_NINF) : K_FIN;
}

typedef struct {
    csv_table t;
    int ok;        /* read */
    int *kc;       /* the key columns' indices */
    char **key;    /* per row: the key, normalised (numbers as %.17g) */
    long *idx;     /* rows in key order */
} ktab;

static int key_order(const void *a, const void *b, void *arg) {
    const ktab *k = arg;
    long x = *(const long *)a, y = *(const long *)b;
    int s = strcmp(k->key[x], k->key[y]);
    return s ? s : (x > y) - (x < y);
}

/* The row of K whose key is S, or -1. */
static long key_find(const ktab *k, const char *s) {
    long lo = 0, hi = k->t.nrows;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        int cmp = strcmp(k->key[k->idx[mid]], s);
        if (!cmp) return k->idx[mid];
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* "step=120", "step=3,layer=fc1", or "row 7" (rows by position). */
static void key_text(const drift_ctx *c, const ktab *k, long row, char *buf, size_t n) {
    if (!c->nkeys) { snprintf(buf, n, "row %ld", row + 1); return; }
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < c->nkeys && o < n; i++) {
        int w = snprintf(buf + o, n - o, "%s%s=%s", i ? "," : "", c->keys[i], csv_cell(&k->t, row, k->kc[i]));
        if (w < 0) break;
        o += (size_t)w;
    }
}

/* The header's names, for an error message. */
static void header_list(const csv_table *t, char *buf, size_t n) {
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < t->ncols && o + 4 < n; i++) {
        int w = snprintf(buf + o, n - o, "%s%s", i ? ", " : "", t->header[i]);
        if (w < 0 || (size_t)w >= n - o) { snprintf(buf + (n > 4 ? n - 4 : 0), 4, "..."); break; }
        o += (size_t)w;
    }
}

/* Keys of every row; a missing or empty key cell, or a key that repeats, is
 * bad input (0, or -2 with ERR). */
static int build_keys(const drift_ctx *c, ktab *k, char *err, size_t errlen) {
    const csv_table *t = &k->t;
    k->kc = calloc((size_t)c->nkeys + 1, sizeof *k->kc);
    k->key = calloc((size_t)t->nrows + 1, sizeof *k->key);
    k->idx = malloc(((size_t)t->nrows + 1) * sizeof *k->idx);
    if (!k->kc || !k->key || !k->idx) { snprintf(err, errlen, "%s: out of memory", t->path); return -2; }
    for (int i = 0; i < c->nkeys; i++) {
        k->kc[i] = csv_col(t, c->keys[i]);
        if (k->kc[i] < 0) {
            char h[400];
            header_list(t, h, sizeof h);
            snprintf(err, errlen, "%s: line 1: no key column '%s' (--key), the header has: %s", t->path, c->keys[i], h);
            return -2;
        }
    }
    for (long r = 0; r < t->nrows; r++) {
        char *s = NULL;
        size_t sl = 0;
        FILE *m = open_memstream(&s, &sl);
        if (!m) { snprintf(err, errlen, "%s: out of memory", t->path); return -2; }
        if (!c->nkeys) fprintf(m, "%020ld", r);
        for (int i = 0; i < c->nkeys; i++) {
            const char *cell = csv_cell(t, r, k->kc[i]), *p = cell;
            double v;
            while (*p == ' ' || *p == '\t') p++;
            if (!*p) {
                fclose(m);
                free(s);
                snprintf(err, errlen, "%s: line %ld: the key column '%s' is empty, expected a key in every row", t->path,
                         t->lineno[r], c->keys[i]);
                return -2;
            }
            if (i) fputc('\x1f', m);
            if (!csv_num(cell, &v) && isfinite(v)) fprintf(m, "%.17g", v == 0 ? 0.0 : v); /* 10, 10.0 and 1e1 are one key */
            else fputs(cell, m);
        }
        if (fclose(m) || !s) { free(s); snprintf(err, errlen, "%s: out of memory", t->path); return -2; }
        k->key[r] = s;
        k->idx[r] = r;
    }
    if (t->nrows) qsort_r(k->idx, (size_t)t->nrows, sizeof *k->idx, key_order, k);
    long dup = -1, first = -1;
    for (long i = 1; i < t->nrows; i++)
        if (!strcmp(k->key[k->idx[i]], k->key[k->idx[i - 1]]) && (dup < 0 || k->idx[i] < dup)) {
            dup = k->idx[i];
            first = k->idx[i - 1];
        }
    if (dup >= 0) {
        /* the earliest row of that key */
        for (long i = 0; i < t->nrows; i++)
            if (!strcmp(k->key[i], k->key[dup])) { first = i; break; }
        char kt[300];
        key_text(c, k, dup, kt, sizeof kt);
        snprintf(err, errlen, "%s: line %ld: key %s repeats line %ld (a duplicate key), expected one row per key", t->path,
                 t->lineno[dup], kt, t->lineno[first]);
        return -2;
    }
    return 0;
}

static void ktab_free(ktab *k) {
    if (k->key)
        for (long r = 0; r < k->t.nrows; r++) free(k->key[r]);
    free(k->key);
    free(k->idx);
    free(k->kc);
    if (k->ok) csv_free(&k->t);
    memset(k, 0, sizeof *k);
}

/* The rule of a column: the tolerance file's first match, else the band of
 * --abs/--rel/--smooth, else exact. */
static const rule *keyed_rule(const drift_ctx *c, const char *rel, const char *col) {
    const rule *r = find_rule(c, rel, col);
    if (r == &exact_rule && c->has_def) return &c->def;
    return r;
}

static void keyed_rule_text(const drift_ctx *c, const rule *r, int seeds, char *buf, size_t n) {
    char fl[160];
    if (r->kind == RULE_BAND) snprintf(fl, sizeof fl, "%g + %g x |%s|", r->abs_tol, r->rel_tol, seeds ? "mean" : "baseline");
    else snprintf(fl, sizeof fl, "0");
    int k;
    if (!seeds) {
        rule_text(r, buf, n);
        return;
    }
    if (c->use_k) k = snprintf(buf, n, "seeds' mean +- (%g x std + %s)", c->k, fl);
    else k = snprintf(buf, n, "seeds' min - %g x range .. max + %g x range, widened by %s", c->margin, c->margin, fl);
    if (r->kind == RULE_BAND && r->smooth > 1 && k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, ", on %ld-row trailing means", r->smooth);
}

typedef struct {
    long m;           /* matched index */
    int col;          /* compared column */
    int what;         /* 0 outside the band, 1 a change of class, 2 exact and different */
    double base, lo, hi, x;
    int smoothed;
} kfail;

static int kfail_order(const void *a, const void *b) {
    const kfail *x = a, *y = b;
    if (x->m != y->m) return x->m < y->m ? -1 : 1;
    return (x->col > y->col) - (x->col < y->col);
}

static cJSON *jnum(double v) {
    if (isfinite(v)) return cJSON_CreateNumber(v);
    return cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}
static cJSON *jcell(int cls, double v, const char *text) {
    if (cls == K_EMPTY) return cJSON_CreateNull();
    if (cls < 0) return cJSON_CreateString(text);
    return jnum(v);
}

/* Compare RPATH with the baseline BPATHS[0..NB-1] (one file, or NB >= 2
 * seeds), key by key. REL names the pair in the output and matches the
 * tolerance file. */
static fstatus compare_keyed(drift_ctx *c, const char *rel, char *const *bpaths, int nb, const char *rpath) {
    int nt = nb + 1, seeds = nb > 1;
    ktab *T = calloc((size_t)nt, sizeof *T);
    cJSON *jf = cJSON_CreateObject();
    cJSON_AddStringToObject(jf, "file", rel);
    cJSON *jb = cJSON_AddArrayToObject(jf, "baseline");
    for (int i = 0; i < nb; i++) cJSON_AddItemToArray(jb, cJSON_CreateString(bpaths[i]));
    cJSON_AddStringToObject(jf, "results", rpath);
    cJSON_AddItemToArray(c->jfiles, jf);
    char err[4096];
    err[0] = 0;
    fstatus st = F_BAD;
    /* per compared column */
    int ncmp = 0, *cidx = NULL;  /* cidx[j * nt + t]: the column in table t (-1: the results lack it) */
    const char **cname = NULL;
    long **rows = NULL, M = 0, *missing = NULL, nmissing = 0, *extra = NULL, nextra = 0;
    double *val = NULL, *sm = NULL;
    int *cls = NULL;
    kfail *fails = NULL;
    long nfails = 0, capfails = 0;
    char *notes = NULL;
    size_t notes_len = 0;
    FILE *nm = NULL;
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *m = NULL;
    if (!T) { snprintf(err, sizeof err, "out of memory"); goto bad; }
    for (int t = 0; t < nt; t++) {
        const char *p = t < nb ? bpaths[t] : rpath;
        if (csv_read_user(&T[t].t, p, err, sizeof err)) goto bad;
        T[t].ok = 1;
        if (!T[t].t.nrows) {
            snprintf(err, sizeof err, "%s: line 1: a header and no data rows, expected at least one row of values", p);
            goto bad;
        }
        if (build_keys(c, &T[t], err, sizeof err)) goto bad;
    }
    const ktab *B0 = &T[0], *R = &T[nb];

    /* the columns */
    nm = open_memstream(&notes, &notes_len);
    cJSON *jnot = cJSON_AddArrayToObject(jf, "not_compared");
    cname = calloc((size_t)B0->t.ncols + (size_t)c->ncols + 1, sizeof *cname);
    cidx = calloc(((size_t)B0->t.ncols + (size_t)c->ncols + 1) * (size_t)nt, sizeof *cidx);
    if (!nm || !cname || !cidx) { snprintf(err, sizeof err, "out of memory"); goto bad; }
#define NOTE(name, ...) do { \
        char why_[512]; snprintf(why_, sizeof why_, __VA_ARGS__); \
        fprintf(nm, "%s%s (%s)", ftell(nm) ? ", " : "", name, why_); \
        cJSON *o_ = cJSON_CreateObject(); cJSON_AddStringToObject(o_, "column", name); \
        cJSON_AddStringToObject(o_, "why", why_); cJSON_AddItemToArray(jnot, o_); } while (0)
    int is_key;
    if (c->ncols) {
        for (int j = 0; j < c->ncols; j++) {
            const char *name = c->cols[j];
            is_key = 0;
            for (int i = 0; i < c->nkeys; i++) is_key |= !strcmp(c->keys[i], name);
            if (is_key) { snprintf(err, sizeof err, "--columns: '%s' is a key column (--key), expected columns to compare", name); goto bad; }
            if (keyed_rule(c, rel, name)->kind == RULE_IGNORE) { NOTE(name, "ignored by the tolerance file"); continue; }
            for (int t = 0; t < nt; t++) {
                int ci = csv_col(&T[t].t, name);
                if (ci < 0 && t < nb) {
                    char h[400];
                    header_list(&T[t].t, h, sizeof h);
                    snprintf(err, sizeof err, "%s: line 1: no column '%s' (--columns), the header has: %s", T[t].t.path, name, h);
                    goto bad;
                }
                cidx[ncmp * nt + t] = ci;
            }
            cname[ncmp++] = name;
        }
    } else {
        for (int bc = 0; bc < B0->t.ncols; bc++) {
            const char *name = B0->t.header[bc];
            is_key = 0;
            for (int i = 0; i < c->nkeys; i++) is_key |= !strcmp(c->keys[i], name);
            if (is_key) continue;
            if (keyed_rule(c, rel, name)->kind == RULE_IGNORE) { NOTE(name, "ignored by the tolerance file"); continue; }
            int ok = 1;
            for (int t = 0; t < nt && ok; t++) {
                int ci = csv_col(&T[t].t, name);
                cidx[ncmp * nt + t] = ci;
                if (ci < 0) {
                    if (t == nb) NOTE(name, "only in the baseline");
                    else NOTE(name, "not in %s", T[t].t.path);
                    ok = 0;
                }
            }
            /* numeric: every non-empty cell of every baseline is a number */
            int any = 0;
            for (int t = 0; t < nb && ok; t++) {
                int ci = cidx[ncmp * nt + t];
                for (long r = 0; r < T[t].t.nrows && ok; r++) {
                    double v;
                    int k = cell_class(csv_cell(&T[t].t, r, ci), &v);
                    if (k < 0) {
                        NOTE(name, "text: %s line %ld has '%.40s'", T[t].t.path, T[t].t.lineno[r], csv_cell(&T[t].t, r, ci));
                        ok = 0;
                    }
                    any |= k != K_EMPTY;
                }
            }
            if (ok && !any) { NOTE(name, "empty in the baseline"); ok = 0; }
            if (ok) cname[ncmp++] = name;
        }
        for (int rc = 0; rc < R->t.ncols; rc++) {
            const char *name = R->t.header[rc];
            is_key = 0;
            for (int i = 0; i < c->nkeys; i++) is_key |= !strcmp(c->keys[i], name);
            if (!is_key && csv_col(&B0->t, name) < 0) NOTE(name, "only in the results");
        }
    }
#undef NOTE
    fflush(nm);
    if (!ncmp) {
        snprintf(err, sizeof err, "%s: no column to compare%s%s", rel, notes_len ? ": " : " (only key columns)", notes ? notes : "");
        goto bad;
    }
    /* every compared cell is a number or empty */
    for (int j = 0; j < ncmp; j++)
        for (int t = 0; t < nt; t++) {
            int ci = cidx[j * nt + t];
            if (ci < 0) continue;
            for (long r = 0; r < T[t].t.nrows; r++) {
                double v;
                if (cell_class(csv_cell(&T[t].t, r, ci), &v) < 0) {
                    snprintf(err, sizeof err, "%s: line %ld: column '%s': '%.60s' is not a number (expected a number, nan, inf, "
                                              "or an empty cell)", T[t].t.path, T[t].t.lineno[r], cname[j], csv_cell(&T[t].t, r, ci));
                    goto bad;
                }
            }
        }

    /* the keys: the seeds must hold the same ones; the results may miss some
     * or add some */
    for (int t = 1; t < nb; t++) {
        for (long r = 0; r < B0->t.nrows; r++)
            if (key_find(&T[t], B0->key[r]) < 0) {
                char kt[300];
                key_text(c, B0, r, kt, sizeof kt);
                snprintf(err, sizeof err, "%s: no row for key %s, which %s has (line %ld): the seeds must hold the same keys",
                         T[t].t.path, kt, B0->t.path, B0->t.lineno[r]);
                goto bad;
            }
        for (long r = 0; r < T[t].t.nrows; r++)
            if (key_find(B0, T[t].key[r]) < 0) {
                char kt[300];
                key_text(c, &T[t], r, kt, sizeof kt);
                snprintf(err, sizeof err, "%s: line %ld: key %s is not in %s: the seeds must hold the same keys", T[t].t.path,
                         T[t].t.lineno[r], kt, B0->t.path);
                goto bad;
            }
    }
    rows = calloc((size_t)nt, sizeof *rows);
    missing = malloc(((size_t)B0->t.nrows + 1) * sizeof *missing);
    extra = malloc(((size_t)R->t.nrows + 1) * sizeof *extra);
    if (!rows || !missing || !extra) { snprintf(err, sizeof err, "out of memory"); goto bad; }
    for (int t = 0; t < nt; t++)
        if (!(rows[t] = malloc(((size_t)B0->t.nrows + 1) * sizeof **rows))) { snprintf(err, sizeof err, "out of memory"); goto bad; }
    for (long r = 0; r < B0->t.nrows; r++) {
        long rr = key_find(R, B0->key[r]);
        if (rr < 0) { missing[nmissing++] = r; continue; }
        rows[0][M] = r;
        for (int t = 1; t < nb; t++) rows[t][M] = key_find(&T[t], B0->key[r]);
        rows[nb][M] = rr;
        M++;
    }
    for (long r = 0; r < R->t.nrows; r++)
        if (key_find(B0, R->key[r]) < 0) extra[nextra++] = r;

    /* the values, column by column */
    val = malloc(((size_t)M + 1) * (size_t)nt * sizeof *val);
    sm = malloc(((size_t)M + 1) * (size_t)nt * sizeof *sm);
    cls = malloc(((size_t)M + 1) * (size_t)nt * sizeof *cls);
    m = open_memstream(&msgs, &mlen);
    if (!val || !sm || !cls || !m) { snprintf(err, sizeof err, "out of memory"); goto bad; }
    cJSON *jcols = cJSON_AddArrayToObject(jf, "columns");
    int drift = 0, moved = 0, col_missing = 0;
    long f_values = 0, f_outside = 0;
    for (int j = 0; j < ncmp; j++) {
        const rule *ru = keyed_rule(c, rel, cname[j]);
        char rt[300];
        keyed_rule_text(c, ru, seeds, rt, sizeof rt);
        cJSON *jc = cJSON_CreateObject();
        cJSON_AddItemToArray(jcols, jc);
        cJSON_AddStringToObject(jc, "column", cname[j]);
        cJSON_AddStringToObject(jc, "rule", rt);
        if (cidx[j * nt + nb] < 0) {
            drift = 1;
            col_missing++;
            fprintf(m, "         column %s: missing from the results\n", cname[j]);
            cJSON_AddStringToObject(jc, "status", "missing from the results");
            continue;
        }
        for (long k = 0; k < M; k++)
            for (int t = 0; t < nt; t++)
                cls[k * nt + t] = cell_class(csv_cell(&T[t].t, rows[t][k], cidx[j * nt + t]), &val[k * nt + t]);
        long smooth = ru->kind == RULE_BAND && ru->smooth > 1 ? ru->smooth : 0;
        if (smooth)
            for (long k = 0; k < M; k++) {
                long lo = k - smooth + 1 < 0 ? 0 : k - smooth + 1, n = 0;
                for (int t = 0; t < nt; t++) sm[k * nt + t] = 0;
                for (long i = lo; i <= k; i++) {
                    int fin = 1;
                    for (int t = 0; t < nt; t++) fin &= cls[i * nt + t] == K_FIN;
                    if (!fin) continue;
                    for (int t = 0; t < nt; t++) sm[k * nt + t] += val[i * nt + t];
                    n++;
                }
                for (int t = 0; t < nt; t++) sm[k * nt + t] = n ? sm[k * nt + t] / (double)n : NAN;
            }
        long n_out = 0, n_in = 0;
        double worst = -1;
        long worst_k = -1;
        for (long k = 0; k < M; k++) {
            const int *kc = cls + k * nt;
            const double *kv = val + k * nt, *ks = sm + k * nt;
            int xc = kc[nb];
            kfail f = {k, j, 0, NAN, NAN, NAN, NAN, 0};
            int out = 0;
            if (!seeds) {
                if (kc[0] != xc) { out = 1; f.what = 1; }
                else if (xc != K_FIN || kv[0] == kv[1]) continue; /* the same class, or the same number */
                else if (ru->kind != RULE_BAND) { out = 1; f.what = 2; f.base = kv[0]; f.lo = f.hi = kv[0]; f.x = kv[1]; }
                else {
                    double b = smooth ? ks[0] : kv[0], x = smooth ? ks[1] : kv[1];
                    double lim = ru->abs_tol + ru->rel_tol * fabs(b);
                    f.base = b; f.x = x; f.lo = b - lim; f.hi = b + lim; f.smoothed = smooth > 0;
                    out = !isnan(b) && !(fabs(x - b) <= lim); /* NaN means: no row of the window is finite on every side */
                    if (out) {
                        double ex = fabs(x - b) / (lim > 0 ? lim : 1e-300);
                        if (ex > worst) { worst = ex; worst_k = k; }
                    }
                }
            } else {
                int has = 0;
                for (int t = 0; t < nb; t++) has |= kc[t] == xc;
                if (!has) { out = 1; f.what = 1; }
                else if (xc != K_FIN) { n_in++; continue; }
                else {
                    double lo = INFINITY, hi = -INFINITY, sum = 0, ss = 0, x = smooth ? ks[nb] : kv[nb];
                    int n = 0;
                    for (int t = 0; t < nb; t++) {
                        double v = smooth ? ks[t] : kv[t];
                        if (smooth ? isnan(v) : kc[t] != K_FIN) continue;
                        lo = v < lo ? v : lo;
                        hi = v > hi ? v : hi;
                        sum += v;
                        n++;
                    }
                    if (!n) { n_in++; continue; } /* smoothed: no row of the window is finite on every side */
                    double mean = sum / n;
                    for (int t = 0; t < nb; t++) {
                        double v = smooth ? ks[t] : kv[t];
                        if (smooth ? isnan(v) : kc[t] != K_FIN) continue;
                        ss += (v - mean) * (v - mean);
                    }
                    double floor_ = ru->kind == RULE_BAND ? ru->abs_tol + ru->rel_tol * fabs(mean) : 0;
                    if (c->use_k) {
                        double sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
                        f.lo = mean - (c->k * sd + floor_);
                        f.hi = mean + (c->k * sd + floor_);
                    } else {
                        f.lo = lo - c->margin * (hi - lo) - floor_;
                        f.hi = hi + c->margin * (hi - lo) + floor_;
                    }
                    f.base = mean; f.x = x; f.smoothed = smooth > 0;
                    out = !(x >= f.lo && x <= f.hi);
                    if (out) {
                        double half = (f.hi - f.lo) / 2, ex = fabs(x - (f.lo + f.hi) / 2) / (half > 0 ? half : 1e-300);
                        if (ex > worst) { worst = ex; worst_k = k; }
                    }
                }
            }
            if (!out) { n_in++; continue; }
            n_out++;
            if (nfails == capfails) {
                capfails = capfails ? capfails * 2 : 64;
                kfail *nf = realloc(fails, (size_t)capfails * sizeof *fails);
                if (!nf) { snprintf(err, sizeof err, "out of memory"); goto bad; }
                fails = nf;
            }
            fails[nfails++] = f;
        }
        f_values += M;
        f_outside += n_out;
        if (n_out) drift = 1;
        if (n_in && !seeds) moved = 1;
        if (!seeds && !n_out && !n_in && !c->verbose) goto col_done; /* identical: nothing to say */
        fprintf(m, "         column %s (%s): %ld of %ld outside", cname[j], rt, n_out, M);
        if (!seeds) fprintf(m, ", %ld moved within", n_in);
        if (worst_k >= 0) {
            char kt[300];
            key_text(c, B0, rows[0][worst_k], kt, sizeof kt);
            fprintf(m, "; furthest out at %s", kt);
        }
        fputc('\n', m);
    col_done:
        cJSON_AddStringToObject(jc, "status", n_out ? "drift" : "pass");
        cJSON_AddNumberToObject(jc, "compared", (double)M);
        cJSON_AddNumberToObject(jc, "outside", (double)n_out);
        if (!seeds) cJSON_AddNumberToObject(jc, "moved_within", (double)n_in);
        cJSON_AddNumberToObject(jc, "smooth", (double)(smooth ? smooth : 1));
    }
    if (nmissing && !c->allow_missing) drift = 1;

    /* the keys */
    cJSON *jk = cJSON_AddObjectToObject(jf, "keys");
    if (c->nkeys) {
        cJSON *a = cJSON_AddArrayToObject(jk, "columns");
        for (int i = 0; i < c->nkeys; i++) cJSON_AddItemToArray(a, cJSON_CreateString(c->keys[i]));
    } else cJSON_AddNullToObject(jk, "columns");
    cJSON_AddNumberToObject(jk, "baseline", (double)B0->t.nrows);
    cJSON_AddNumberToObject(jk, "results", (double)R->t.nrows);
    cJSON_AddNumberToObject(jk, "matched", (double)M);
    cJSON_AddNumberToObject(jk, "missing", (double)nmissing);
    cJSON_AddNumberToObject(jk, "extra", (double)nextra);
    cJSON_AddBoolToObject(jk, "missing_allowed", c->allow_missing);
    for (int side = 0; side < 2; side++) {
        long n = side ? nextra : nmissing, *list = side ? extra : missing;
        const ktab *k = side ? R : B0;
        if (!n) continue;
        cJSON *a = cJSON_AddArrayToObject(jk, side ? "extra_keys" : "missing_keys");
        fprintf(m, "         %s keys: %ld (%s): ", side ? "extra" : "missing", n,
                side ? "in the results only; not compared, they never fail"
                     : c->allow_missing ? "in the baseline, not in the results; accepted by --allow-missing"
                                        : "in the baseline, not in the results; drift unless --allow-missing");
        long shown_k = 0;
        for (long i = 0; i < n; i++) {
            char kt[300];
            key_text(c, k, list[i], kt, sizeof kt);
            cJSON_AddItemToArray(a, cJSON_CreateString(kt));
        }
        /* runs of whole numbers (one key column, or rows by position) print as first..last */
        for (long i = 0; i < n && shown_k < c->max_print; shown_k++) {
            char kt[300];
            key_text(c, k, list[i], kt, sizeof kt);
            long j = i;
            double v0, v1;
            int num = c->nkeys <= 1 && (c->nkeys ? !csv_num(csv_cell(&k->t, list[i], k->kc[0]), &v0) : (v0 = (double)list[i], 1)) &&
                      v0 == floor(v0);
            while (num && j + 1 < n) {
                if (c->nkeys ? csv_num(csv_cell(&k->t, list[j + 1], k->kc[0]), &v1) : (v1 = (double)list[j + 1], 0)) break;
                if (v1 != v0 + (double)(j + 1 - i)) break;
                j++;
            }
            fprintf(m, "%s%s", i ? ", " : "", kt);
            if (j > i) {
                const char *last = c->nkeys ? csv_cell(&k->t, list[j], k->kc[0]) : NULL;
                if (last) fprintf(m, "..%s", last);
                else fprintf(m, "..%ld", list[j] + 1);
            }
            i = j + 1;
            if (shown_k + 1 == c->max_print && i < n) fprintf(m, ", ... (%ld more)", n - i);
        }
        fputc('\n', m);
    }
    if (notes_len) fprintf(m, "         not compared: %s\n", notes);

    /* the failures: a table of the first --max-print, all of them in JSON */
    if (nfails) qsort(fails, (size_t)nfails, sizeof *fails, kfail_order);
    cJSON *jfl = cJSON_AddArrayToObject(jf, "failures");
    long shown = nfails < c->max_print ? nfails : c->max_print;
    char (*cells)[5][480] = shown ? calloc((size_t)shown, sizeof *cells) : NULL;
    int wd[5] = {3, 6, seeds ? 10 : 8, 4, 5};
    for (long i = 0; i < nfails; i++) {
        const kfail *f = &fails[i];
        long br = rows[0][f->m], rr = rows[nb][f->m];
        int bcol = cidx[f->col * nt], rcol = cidx[f->col * nt + nb];
        const char *bt = csv_cell(&B0->t, br, bcol), *xt = csv_cell(&R->t, rr, rcol);
        char kt[300], c2[160], c3[160], c4[160], note[200];
        key_text(c, B0, br, kt, sizeof kt);
        double xv;
        int xcls = cell_class(xt, &xv);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", kt);
        cJSON_AddStringToObject(o, "column", cname[f->col]);
        if (f->what == 1) {
            /* a change of class: the baseline's class (the seeds' classes) */
            int mask = 0, bcl = K_EMPTY;
            double bv = NAN;
            for (int t = 0; t < nb; t++) {
                double v;
                int k = cell_class(csv_cell(&T[t].t, rows[t][f->m], cidx[f->col * nt + t]), &v);
                mask |= 1 << k;
                if (!t) { bcl = k; bv = v; }
            }
            char cl[120];
            size_t o2 = 0;
            cl[0] = 0;
            for (int k = 0; k < 5; k++)
                if (mask & (1 << k)) o2 += (size_t)snprintf(cl + o2, sizeof cl - o2, "%s%s", o2 ? " or " : "", kcls_short[k]);
            snprintf(c2, sizeof c2, "%s", seeds ? cl : *bt ? bt : "(empty)");
            snprintf(c3, sizeof c3, "class: %s", cl);
            snprintf(c4, sizeof c4, "%s", *xt ? xt : "(empty)");
            if (seeds) snprintf(note, sizeof note, "%s where the seeds have %s", kcls_short[xcls], cl);
            else snprintf(note, sizeof note, "%s where the baseline has %s", kcls_name[xcls], kcls_name[bcl]);
            cJSON_AddStringToObject(o, "why", "class");
            cJSON_AddItemToObject(o, "baseline", seeds ? cJSON_CreateString(cl) : jcell(bcl, bv, bt));
            cJSON_AddItemToObject(o, "value", jcell(xcls, xv, xt));
        } else if (f->what == 2) {
            snprintf(c2, sizeof c2, "%s", bt);
            snprintf(c3, sizeof c3, "exact");
            snprintf(c4, sizeof c4, "%s", xt);
            snprintf(note, sizeof note, "differs by %+.3g", f->x - f->base);
            cJSON_AddStringToObject(o, "why", "exact");
            cJSON_AddItemToObject(o, "baseline", jnum(f->base));
            cJSON_AddItemToObject(o, "value", jnum(f->x));
        } else {
            snprintf(c2, sizeof c2, "%s%.9g", f->smoothed ? "mean " : "", f->base);
            snprintf(c3, sizeof c3, "[%.6g, %.6g]", f->lo, f->hi);
            snprintf(c4, sizeof c4, "%s%.9g", f->smoothed ? "mean " : "", f->x);
            double by = f->x > f->hi ? f->x - f->hi : f->lo - f->x;
            snprintf(note, sizeof note, "%s by %.4g", f->x > f->hi ? "above" : "below", by);
            cJSON_AddStringToObject(o, "why", "band");
            cJSON_AddItemToObject(o, "baseline", jnum(f->base));
            cJSON_AddItemToObject(o, "low", jnum(f->lo));
            cJSON_AddItemToObject(o, "high", jnum(f->hi));
            cJSON_AddItemToObject(o, "value", jnum(f->x));
            cJSON_AddBoolToObject(o, "smoothed", f->smoothed);
        }
        cJSON_AddStringToObject(o, "note", note);
        cJSON_AddItemToArray(jfl, o);
        if (i < shown && cells) {
            snprintf(cells[i][0], 480, "%s", kt);
            snprintf(cells[i][1], 480, "%.300s", cname[f->col]);
            snprintf(cells[i][2], 480, "%s", c2);
            snprintf(cells[i][3], 480, "%s", c3);
            snprintf(cells[i][4], 480, "%s  %s", c4, note);
            for (int q = 0; q < 4; q++) {
                int w = (int)strlen(cells[i][q]);
                if (w > wd[q]) wd[q] = w;
            }
        }
    }
    if (shown && cells) {
        fprintf(m, "         %-*s  %-*s  %-*s  %-*s  value\n", wd[0], "key", wd[1], "column", wd[2], seeds ? "seeds' mean" : "baseline",
                wd[3], "band");
        for (long i = 0; i < shown; i++)
            fprintf(m, "         %-*s  %-*s  %-*s  %-*s  %s\n", wd[0], cells[i][0], wd[1], cells[i][1], wd[2], cells[i][2], wd[3],
                    cells[i][3], cells[i][4]);
        if (nfails > shown) fprintf(m, "         ... %ld more outside (--max-print; --json lists them all)\n", nfails - shown);
    }
    free(cells);
    fclose(m);
    m = NULL;

    /* identical: every compared value the same, and the same keys */
    st = drift ? F_DRIFT : (moved || seeds || nmissing || nextra) ? F_BAND : F_IDENTICAL;
    const char *tag = st == F_DRIFT ? "DRIFT " : st == F_BAND ? "band  " : "same  ";
    printf("%s %s (", tag, rel);
    if (seeds) printf("%d seeds, ", nb);
    if (c->nkeys) {
        printf("key ");
        for (int i = 0; i < c->nkeys; i++) printf("%s%s", i ? "," : "", c->keys[i]);
    } else printf("rows by position");
    printf(": %ld in the baseline, %ld in the results, %ld matched, %ld missing, %ld extra)\n", B0->t.nrows, R->t.nrows, M,
           nmissing, nextra);
    fputs(msgs, stdout); /* identical columns print only with --verbose */
    cJSON_AddStringToObject(jf, "status", st == F_DRIFT ? "drift" : st == F_BAND ? "within" : "identical");
    cJSON_AddNumberToObject(jf, "values", (double)f_values);
    cJSON_AddNumberToObject(jf, "outside", (double)f_outside);
    c->n_values += f_values;
    c->n_outside += f_outside;
    c->n_missing += nmissing;
    c->n_extra += nextra;
    c->n_colmissing += col_missing;
    goto out;
bad:
    printf("BAD    %s: %s\n", rel, err);
    cJSON_AddStringToObject(jf, "status", "bad input");
    cJSON_AddStringToObject(jf, "error", err);
    st = F_BAD;
out:
    if (m) fclose(m);
    free(msgs);
    if (nm) fclose(nm);
    free(notes);
    free(fails);
    free(val);
    free(sm);
    free(cls);
    free(missing);
    free(extra);
    if (rows)
        for (int t = 0; t < nt; t++) free(rows[t]);
    free(rows);
    free(cname);
    free(cidx);
    if (T)
        for (int t = 0; t < nt; t++) ktab_free(&T[t]);
    free(T);
    return st;
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu drift [--tolerances FILE] [--max-print N] [--verbose] BASELINE RESULTS\n"
            "       fpemu drift [--key COLS] [--columns COLS] [--abs A] [--rel R] [--smooth N] [--allow-missing]\n"
            "                   [--json FILE] [--tolerances FILE] [--max-print N] [--verbose] BASELINE RESULTS\n"
            "       fpemu drift --baseline-seeds [--margin M | --k K] [options above] SEED SEED... RESULTS\n"
            "       fpemu drift --baseline-seeds [--margin M | --k K] [options above] SEEDS-FOLDER RESULTS\n\n"
            "Compare every file under BASELINE (a folder or one file) with the same path under RESULTS.\n"
            "CSV files compare cell by cell (columns by name, rows in order), other files line by line;\n"
            "values must be identical unless a line of the tolerance file gives a band:\n"
            "  FILE-GLOB  COLUMN-GLOB  exact | ignore | abs=A rel=R [smooth=N]\n"
            "(first match wins; |results - baseline| <= A + R x |baseline|, on N-row trailing means).\n"
            "Prints what moved, by how much and where (file, column, step), then a summary.\n\n"
            "Any of the options of the second and third forms compares CSV files key by key instead:\n"
            "  --key COLS        match rows by these columns (e.g. step; without it, by position);\n"
            "                    keys missing from the results are drift unless --allow-missing; extra keys never fail\n"
            "  --columns COLS    compare these columns (default: every numeric column both files have)\n"
            "  --abs A --rel R --smooth N   the band of columns that no tolerance line matches (default exact)\n"
            "  --baseline-seeds  the baseline is several runs (seeds): CSV files, or one folder of CSV files\n"
            "                    or of run folders (each holding a file named as RESULTS); per key and column\n"
            "                    the band is [min - M x range, max + M x range] of the seeds' values (--margin M,\n"
            "                    default 1), or with --k K (5 seeds or more) mean +- K x std; widened by the\n"
            "                    column's fixed band (tolerance file or --abs/--rel) as a floor\n"
            "  --json FILE       write the verdict, every failing key and column, missing and extra keys\n"
            "NaN and inf: a value's class (finite, NaN, +inf, -inf, empty) must match (with seeds: be one a seed\n"
            "has at that key); only finite values compare against bands.\n"
            "Exit status: 0 no drift, 1 drift, 2 bad input (missing folder or file, malformed CSV).\n");
}

/* "a,b,c" into a list; 0, or -1 on an empty name. */
static int split_list(const char *s, char ***out, int *n) {
    *out = NULL;
    *n = 0;
    if (!*s) return -1;
    char *dup = strdup(s), *save = NULL;
    int cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    char **v = calloc((size_t)cap, sizeof *v);
    if (!dup || !v) { free(dup); free(v); return -1; }
    const char *p = s;
    (void)save;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        while (l && (*p == ' ')) p++, l--;
        while (l && p[l - 1] == ' ') l--;
        if (!l) { for (int i = 0; i < *n; i++) free(v[i]); free(v); free(dup); return -1; }
        v[(*n)++] = strndup(p, l);
        if (!e) break;
        p = e + 1;
    }
    free(dup);
    *out = v;
    return 0;
}
static void free_list(char **v, int n) {
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* The seeds of --baseline-seeds DIR: DIR's CSV files, or, when it has none,
 * DIR/SUB/NAME for each folder SUB (run folders), NAME being the results'
 * file name. */
static int seed_folder(const char *dir, const char *name, strlist *out) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    strlist names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') sl_add(&names, e->d_name);
    closedir(d);
    if (names.n) qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
    for (int pass = 0; pass < 2 && !out->n; pass++)
        for (int i = 0; i < names.n; i++) {
            char p[8400];
            struct stat st;
            if (pass == 0) {
                if (!cli_has_suffix(names.v[i], ".csv")) continue;
                snprintf(p, sizeof p, "%s/%s", dir, names.v[i]);
            } else {
                snprintf(p, sizeof p, "%s/%s/%s", dir, names.v[i], name);
            }
            if (!stat(p, &st) && S_ISREG(st.st_mode)) sl_add(out, p);
        }
    sl_free(&names);
    return 0;
}

static void drift_free(drift_ctx *c) {
    free(c->rules);
    free_list(c->keys, c->nkeys);
    free_list(c->cols, c->ncols);
    c->rules = NULL;
    c->keys = c->cols = NULL;
    c->nkeys = c->ncols = 0;
}

int cmd_drift(int argc, char **argv) {
    drift_ctx c;
    memset(&c, 0, sizeof c);
    c.max_print = 10;
    c.margin = 1;
    int margin_set = 0;
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    int np = 0;
    if (!paths) return cli_error(SUB, "out of memory");
    strlist files = {0}, seedl = {0}, checked = {0};
#define FAIL(...) do { int rc_ = cli_error(SUB, __VA_ARGS__); drift_free(&c); sl_free(&seedl); free(paths); return rc_; } while (0)
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) { usage(stdout); drift_free(&c); free(paths); return 0; }
        if (!strcmp(a, "--tolerances") || !strcmp(a, "--max-print")) {
            if (i + 1 >= argc) FAIL("%s needs a value", a);
            const char *v = argv[++i];
            if (a[2] == 't') {
                if (c.tol_path) FAIL("--tolerances given twice");
                c.tol_path = v;
                if (read_tolerances(&c, v)) { drift_free(&c); free(paths); return 2; }
            } else {
                unsigned long long k;
                if (cli_parse_u64(v, &k) || k > 1000000) FAIL("--max-print: expected a count, got '%s'", v);
                c.max_print = (int)k;
            }
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            c.verbose = 1;
        } else if (!strcmp(a, "--key") || !strcmp(a, "--columns")) {
            if (i + 1 >= argc) FAIL("%s needs a value (a comma list of column names)", a);
            const char *v = argv[++i];
            int key = a[2] == 'k';
            if (key ? c.keys != NULL : c.cols != NULL) FAIL("%s given twice", a);
            if (split_list(v, key ? &c.keys : &c.cols, key ? &c.nkeys : &c.ncols))
                FAIL("%s: expected a comma list of column names, got '%s'", a, v);
            c.keyed = 1;
        } else if (!strcmp(a, "--abs") || !strcmp(a, "--rel") || !strcmp(a, "--smooth") || !strcmp(a, "--margin") ||
                   !strcmp(a, "--k")) {
            if (i + 1 >= argc) FAIL("%s needs a value", a);
            const char *v = argv[++i];
            double x;
            if (cli_parse_double(v, &x) || !(x >= 0) || isinf(x)) FAIL("%s: expected a non-negative number, got '%s'", a, v);
            if (!strcmp(a, "--smooth")) {
                if (x != floor(x) || x < 1 || x > 1e6) FAIL("--smooth: expected a whole number 1..1000000, got '%s'", v);
                c.def.smooth = (long)x;
            } else if (!strcmp(a, "--abs")) c.def.abs_tol = x;
            else if (!strcmp(a, "--rel")) c.def.rel_tol = x;
            else if (!strcmp(a, "--margin")) { c.margin = x; margin_set = 1; }
            else {
                if (!(x > 0)) FAIL("--k: expected a positive number, got '%s'", v);
                c.k = x;
                c.use_k = 1;
            }
            if (a[2] == 'a' || a[2] == 'r' || a[2] == 's') {
                c.has_def = 1;
                c.def.kind = RULE_BAND;
                snprintf(c.def.file, sizeof c.def.file, "*");
                snprintf(c.def.col, sizeof c.def.col, "*");
            }
            c.keyed = 1;
        } else if (!strcmp(a, "--baseline-seeds")) {
            c.seeds = c.keyed = 1;
        } else if (!strcmp(a, "--allow-missing")) {
            c.allow_missing = c.keyed = 1;
        } else if (!strcmp(a, "--json")) {
            if (i + 1 >= argc) FAIL("--json needs a file name");
            c.json_path = argv[++i];
            c.keyed = 1;
        } else if (a[0] == '-' && a[1]) {
            usage(stderr);
            FAIL("unknown option '%s'", a);
        } else {
            paths[np++] = a; /* more than two only with --baseline-seeds, which may come after them */
        }
    }
    if ((c.use_k || margin_set) && !c.seeds) FAIL("%s: only with --baseline-seeds", c.use_k ? "--k" : "--margin");
    if (c.use_k && margin_set) FAIL("--k and --margin: give one (mean +- k x std, or min/max widened by margin x range)");
    if (!c.seeds && np > 2) FAIL("expected two paths, BASELINE and RESULTS; got a third, '%s' (several baselines: --baseline-seeds)", paths[2]);
    if (!c.seeds && np != 2) { usage(stderr); FAIL("expected two paths, BASELINE and RESULTS"); }
    if (c.seeds && np < 2) { usage(stderr); FAIL("--baseline-seeds: expected the seeds (files, or one folder), then RESULTS"); }

    int dirs = 0, missing = 0;
    struct stat sb, sr;
    const char *results = paths[np - 1];
    if (c.seeds) {
        if (stat(results, &sr)) { FAIL("results %s: %s", results, strerror(errno)); }
        if (!S_ISREG(sr.st_mode)) FAIL("results %s: expected a CSV file with --baseline-seeds", results);
        const char *rname = strrchr(results, '/');
        rname = rname ? rname + 1 : results;
        for (int i = 0; i < np - 1; i++) {
            if (stat(paths[i], &sb)) { FAIL("seed %s: %s", paths[i], strerror(errno)); }
            if (S_ISDIR(sb.st_mode)) {
                if (np != 2) { FAIL("--baseline-seeds: %s is a folder: give one folder, or CSV files", paths[i]); }
                if (seed_folder(paths[i], rname, &seedl)) { FAIL("seeds %s: %s", paths[i], strerror(errno)); }
                if (!seedl.n) FAIL("seeds %s: no CSV files, and no folders holding %s", paths[i], rname);
            } else if (!S_ISREG(sb.st_mode)) {
                FAIL("seed %s: not a regular file", paths[i]);
            } else sl_add(&seedl, paths[i]);
        }
        if (seedl.n < 2) {
            int n = seedl.n;
            FAIL("--baseline-seeds: %d seed%s, expected at least 2 (a spread needs two runs; one baseline: leave out "
                 "--baseline-seeds)", n, n == 1 ? "" : "s");
        }
        if (c.use_k && seedl.n < 5) {
            int n = seedl.n;
            FAIL("--k: mean +- k x std needs at least 5 seeds, got %d: with 2 to 4 the sample std is too unreliable (with 3, "
                 "its 90%% interval is 0.23 to 1.73 times the true std); use --margin (min/max widened by margin x range)", n);
        }
    } else {
        if (stat(paths[0], &sb)) FAIL("baseline %s: %s", paths[0], strerror(errno));
        if (stat(paths[1], &sr)) FAIL("results %s: %s", paths[1], strerror(errno));
        if (S_ISDIR(sb.st_mode) != S_ISDIR(sr.st_mode)) FAIL("%s and %s: expected two folders or two files", paths[0], paths[1]);
        dirs = S_ISDIR(sb.st_mode);
    }
#undef FAIL
    if (c.keyed) c.jfiles = cJSON_CreateArray();
    if (c.seeds) {
        printf("fpemu drift: baseline %d seeds (", seedl.n);
        for (int i = 0; i < seedl.n; i++) printf("%s%s", i ? ", " : "", seedl.v[i]);
        printf("), results %s, tolerances %s; band: ", results, c.tol_path ? c.tol_path : "none");
        if (c.use_k) printf("seeds' mean +- %g x std", c.k);
        else printf("seeds' min/max widened by %g x range", c.margin);
        printf(", plus each column's fixed band\n");
    } else {
        printf("fpemu drift: baseline %s, results %s, tolerances %s\n", paths[0], paths[1],
               c.tol_path ? c.tol_path : c.has_def ? "none (--abs/--rel for every column)" : "none (all exact)");
    }
    if (c.seeds) {
        const char *rel = strrchr(results, '/');
        rel = rel ? rel + 1 : results;
        c.n_files = 1;
        const char *why = NULL;
        for (int i = 0; i < seedl.n && !why; i++) why = run_check(&checked, seedl.v[i], "baseline");
        if (!why) why = run_check(&checked, results, "results");
        fstatus s;
        if (why) {
            printf("BAD    %s: %s\n", rel, why);
            cJSON *jf = cJSON_CreateObject();
            cJSON_AddStringToObject(jf, "file", rel);
            cJSON_AddStringToObject(jf, "status", "bad input");
            cJSON_AddStringToObject(jf, "error", why);
            cJSON_AddItemToArray(c.jfiles, jf);
            s = F_BAD;
        } else s = compare_keyed(&c, rel, seedl.v, seedl.n, results);
        if (s == F_IDENTICAL) c.n_identical++;
        else if (s == F_BAND) c.n_band++;
        else if (s == F_DRIFT) c.n_drift++;
        else c.n_bad++;
    } else if (dirs) {
        walk(paths[0], "", &files);
        if (!files.n) {
            int rc_ = cli_error(SUB, "baseline %s: no files to compare (run `make baseline`)", paths[0]);
            drift_free(&c);
            free(paths);
            cJSON_Delete(c.jfiles);
            return rc_;
        }
    } else {
        const char *base = strrchr(paths[0], '/');
        sl_add(&files, base ? base + 1 : paths[0]);
    }
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
        if (find_rule(&c, files.v[i], "")->kind == RULE_IGNORE && !cli_has_suffix(files.v[i], ".csv")) continue;
        c.n_files++;
        struct stat st;
        const char *why = NULL;
        int gone = 0;
        if ((gone = stat(rp, &st) || !S_ISREG(st.st_mode))) {
            printf("MISSING %s: in the baseline, not in the results (%s)\n", files.v[i], rp);
            missing++;
            c.n_bad++;
            why = "missing from the results";
        } else {
            /* a run folder (it has a summary.json): its files must belong together */
            why = run_check(&checked, bp, "baseline");
            if (!why) why = run_check(&checked, rp, "results");
            if (why) {
                printf("BAD    %s: %s\n", files.v[i], why);
                c.n_bad++;
            }
        }
        if (why) {
            if (c.jfiles) {
                cJSON *jf = cJSON_CreateObject();
                cJSON_AddStringToObject(jf, "file", files.v[i]);
                cJSON_AddStringToObject(jf, "status", gone ? "missing" : "bad input");
                cJSON_AddStringToObject(jf, "error", why);
                cJSON_AddItemToArray(c.jfiles, jf);
            }
            continue;
        }
        fstatus s;
        if (cli_has_suffix(files.v[i], ".csv")) {
            char *bpp = bp;
            s = c.keyed ? compare_keyed(&c, files.v[i], &bpp, 1, rp) : compare_csv(&c, files.v[i], bp, rp);
        } else {
            s = compare_text(&c, files.v[i], bp, rp);
            if (c.jfiles) {
                cJSON *jf = cJSON_CreateObject();
                cJSON_AddStringToObject(jf, "file", files.v[i]);
                cJSON_AddStringToObject(jf, "status", s == F_IDENTICAL ? "identical" : s == F_DRIFT ? "drift" : "bad input");
                cJSON_AddItemToArray(c.jfiles, jf);
            }
        }
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
            if (!cli_has_suffix(rf.v[i], ".csv")) continue;
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
    if (c.keyed) {
        printf("fpemu drift: %ld value%s compared, %ld outside %s band; keys: %ld missing from the results", c.n_values,
               c.n_values == 1 ? "" : "s", c.n_outside, c.n_outside == 1 ? "its" : "their", c.n_missing);
        if (c.n_missing) printf(" (%s)", c.allow_missing ? "accepted: --allow-missing" : "drift; --allow-missing accepts them");
        printf(", %ld extra%s", c.n_extra, c.n_extra ? " (not compared; extra keys never fail)" : "");
        if (c.n_colmissing) printf("; %ld compared column%s missing from the results (drift)", c.n_colmissing, c.n_colmissing == 1 ? "" : "s");
        printf("\n");
    }
    printf("fpemu drift: %s (exit %d)\n", rc == 0 ? "PASS" : rc == 1 ? "FAIL: numeric drift" : "ERROR: bad input", rc);
    if (missing) fprintf(stderr, "fpemu drift: %d file%s of the baseline missing from %s\n", missing, missing == 1 ? "" : "s", paths[1]);
    if (c.json_path) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddNumberToObject(doc, "fpemu_drift", 1);
        cJSON_AddStringToObject(doc, "verdict", rc == 0 ? "pass" : rc == 1 ? "drift" : "bad input");
        cJSON_AddNumberToObject(doc, "exit", rc);
        cJSON *jb = cJSON_AddArrayToObject(doc, "baseline");
        if (c.seeds)
            for (int i = 0; i < seedl.n; i++) cJSON_AddItemToArray(jb, cJSON_CreateString(seedl.v[i]));
        else cJSON_AddItemToArray(jb, cJSON_CreateString(paths[0]));
        cJSON_AddStringToObject(doc, "results", results);
        if (c.tol_path) cJSON_AddStringToObject(doc, "tolerances", c.tol_path);
        else cJSON_AddNullToObject(doc, "tolerances");
        cJSON *band = cJSON_AddObjectToObject(doc, "band");
        if (c.seeds) {
            cJSON_AddStringToObject(band, "from", "seeds");
            cJSON_AddNumberToObject(band, "seeds", seedl.n);
            cJSON_AddStringToObject(band, "statistic", c.use_k ? "mean +- k x std" : "min - margin x range .. max + margin x range");
            if (c.use_k) cJSON_AddNumberToObject(band, "k", c.k);
            else cJSON_AddNumberToObject(band, "margin", c.margin);
        } else cJSON_AddStringToObject(band, "from", "fixed");
        if (c.has_def) {
            cJSON_AddNumberToObject(band, "abs", c.def.abs_tol);
            cJSON_AddNumberToObject(band, "rel", c.def.rel_tol);
            cJSON_AddNumberToObject(band, "smooth", c.def.smooth ? c.def.smooth : 1);
        }
        cJSON *sum = cJSON_AddObjectToObject(doc, "summary");
        cJSON_AddNumberToObject(sum, "files", c.n_files);
        cJSON_AddNumberToObject(sum, "identical", c.n_identical);
        cJSON_AddNumberToObject(sum, "within", c.n_band);
        cJSON_AddNumberToObject(sum, "drifted", c.n_drift);
        cJSON_AddNumberToObject(sum, "bad", c.n_bad);
        cJSON_AddNumberToObject(sum, "values", (double)c.n_values);
        cJSON_AddNumberToObject(sum, "outside", (double)c.n_outside);
        cJSON_AddNumberToObject(sum, "missing_keys", (double)c.n_missing);
        cJSON_AddNumberToObject(sum, "extra_keys", (double)c.n_extra);
        cJSON_AddItemToObject(doc, "files", c.jfiles);
        c.jfiles = NULL;
        char *text = cJSON_Print(doc);
        cJSON_Delete(doc);
        cli_atomic a;
        int ok = text && !cli_atomic_open(&a, c.json_path, "w");
        if (ok) {
            int wok = fputs(text, a.f) >= 0 && fputc('\n', a.f) != EOF;
            ok = !cli_atomic_close(&a, wok) && wok;
        }
        int e = errno;
        free(text);
        if (!ok) {
            rc = cli_error(SUB, "--json %s: cannot write: %s", c.json_path, strerror(e ? e : EIO));
        }
    }
    cJSON_Delete(c.jfiles);
    sl_free(&files);
    sl_free(&seedl);
    sl_free(&checked);
    drift_free(&c);
    free(paths);
    /* the report is the output: a write error (a full disk) must not pass */
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_error(SUB, "standard output: write error (%s): the drift report is incomplete", strerror(errno));
    return rc;
}
