/* SPDX-License-Identifier: MIT */
/* report_rules.c: the claim language of `fpemu report` (report.h lists the
 * parts). An experiment's definition (experiments/suite/README.md) states
 * claims about its runs and rules that decide them:
 *
 *     expect RUN: EXPR CMP EXPR
 *
 * with CMP one of < <= > >= == != and EXPR built from numbers, + - * /,
 * abs(), min(,), max(,) and the metrics of a run, METRIC(RUN) or
 * METRIC.CLASS(RUN) (report_runs.c: rep_metric_names). This file owns the
 * parser (a syntax and run-name check when a definition is read), the
 * evaluation on the runs' data with the values it used (the explanation
 * the report prints under each rule), and the verdicts: a claim is
 * reproduced when all its rules hold, not reproduced when one fails, not
 * run when a run it names has no data. */
#define _GNU_SOURCE /* open_memstream */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

typedef struct {
    const char *p;
    const exp_data *x;        /* NULL: syntax check only */
    const suite_exp *def;
    char err[256];
    FILE *ex;                 /* explanation: "name(run) = value; ..." */
    int nex;
    int missing;              /* a run referred to has no data */
    double a, b;              /* the two sides of the comparison, */
    int op;                   /* and its operator (index in ops below) */
} ev_ctx;

static void skip_ws(ev_ctx *c) { while (*c->p == ' ' || *c->p == '\t') c->p++; }

static double ev_expr(ev_ctx *c);

void rep_fmt_num(char *buf, size_t n, double v) {
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
    for (int i = 0; rep_metric_names[i]; i++) if (!strcmp(rep_metric_names[i], name)) mi = i;
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
    double v = rep_metric(c->x, r, ref, name, cls[0] ? cls : NULL);
    if (c->ex) {
        char nb[64];
        rep_fmt_num(nb, sizeof nb, v);
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
    c->a = a;
    c->b = b;
    c->op = op;
    if (c->missing) return -1;
    if (!c->x) return 1;
    if (c->ex) {
        char na[64], nb[64];
        rep_fmt_num(na, sizeof na, a);
        rep_fmt_num(nb, sizeof nb, b);
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

/* Check every rule of a definition for syntax and run names (report.h). */
int rep_check_rules(const suite_exp *d, char *err, size_t errlen) {
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

const char *rep_verdict_word(int v) {
    return v == 1 ? "reproduced" : v == 2 ? "not reproduced" : v == 3 ? "not run" : "";
}

/* Evaluate every rule of a loaded experiment and set each run's verdict.
 *
 * Seeds (docs/experiments.md, "Seeds"): each rule is evaluated on every
 * seed's runs (a pair of runs compared within the same seed). With one seed
 * the rule's result is the verdict. With several, a rule holds only when
 * (1) it holds on every seed, and (2) for an ordering (< <= > >=) the mean
 * of the per-seed margins (how far each seed's sides clear the comparison,
 * positive when it holds: B - A for A < B) exceeds twice their standard
 * error (sample standard deviation / sqrt(seeds)), that is, the claim holds
 * beyond the seeds' spread. == and != take (1) alone. A margin that is not
 * finite (a diverged run) leaves (1) alone to decide. */
void rep_eval_rules(exp_data *x) {
    static const char *const ops[] = {"<=", ">=", "==", "!=", "<", ">"};
    x->explain = calloc((size_t)x->def.nexpects + 1, sizeof *x->explain);
    x->holds = calloc((size_t)x->def.nexpects + 1, sizeof *x->holds);
    int ns = x->nseeds > 0 ? x->nseeds : 1;
    for (int i = 0; i < x->def.nexpects; i++) {
        size_t len = 0;
        FILE *ex = open_memstream(&x->explain[i], &len);
        double margin[SUITE_MAX_SEEDS];
        int nhold = 0, miss = 0, op = -1, fin = 1;
        for (int s = 0; s < ns; s++) {
            exp_data v = *x;
            if (x->sr) v.runs = x->sr[s];
            ev_ctx c;
            memset(&c, 0, sizeof c);
            c.def = &x->def;
            c.x = &v;
            char *one = NULL;
            size_t l1 = 0;
            c.ex = open_memstream(&one, &l1);
            int h = ev_rule(&c, x->def.expects[i].text);
            fclose(c.ex);
            if (ns == 1) fputs(one, ex);
            else fprintf(ex, "%sseed %llu: %s%s", s ? "; " : "", x->def.seeds[s], one, h == 1 ? "" : h == 0 ? " (fails)" : " (no data)");
            free(one);
            if (h < 0) { miss = 1; continue; }
            nhold += h == 1;
            op = c.op;
            margin[s] = op == 0 || op == 4 ? c.b - c.a : op == 1 || op == 5 ? c.a - c.b : NAN;
            if (!isfinite(margin[s])) fin = 0;
            if (ns == 1) x->holds[i] = h;
        }
        if (ns > 1) {
            if (miss) x->holds[i] = -1;
            else if (op == 2 || op == 3 || !fin) {
                x->holds[i] = nhold == ns;
                fprintf(ex, ". Holds on %d of %d seeds%s: %s", nhold, ns,
                        op == 2 || op == 3 ? " (an equality: every seed must hold)" : " (a margin is not finite: every seed must hold)",
                        nhold == ns ? "holds" : "fails");
            } else {
                double mean = 0, var = 0;
                for (int s = 0; s < ns; s++) mean += margin[s];
                mean /= ns;
                for (int s = 0; s < ns; s++) var += (margin[s] - mean) * (margin[s] - mean);
                double se = sqrt(var / (ns - 1) / ns);
                int strict = op == 4 || op == 5;
                int beyond = strict ? mean - 2 * se > 0 : mean - 2 * se >= 0;
                x->holds[i] = nhold == ns && beyond;
                fprintf(ex, ". Margin by seed (%s side clears %s by):", op == 0 || op == 4 ? "right" : "left", ops[op]);
                for (int s = 0; s < ns; s++) {
                    char nb[64];
                    rep_fmt_num(nb, sizeof nb, margin[s]);
                    fprintf(ex, "%s %s", s ? "," : "", nb);
                }
                char nm[64], n2[64];
                rep_fmt_num(nm, sizeof nm, mean);
                rep_fmt_num(n2, sizeof n2, 2 * se);
                fprintf(ex, "; mean %s, 2 x std error %s; holds on %d of %d seeds, %s the spread: %s", nm, n2, nhold, ns,
                        beyond ? "beyond" : "within", x->holds[i] ? "holds" : "fails");
            }
        }
        fclose(ex);
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
}
