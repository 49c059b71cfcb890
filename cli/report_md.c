/* SPDX-License-Identifier: MIT */
/* report_md.c: the plain-text outputs of `fpemu report` (report.h lists the
 * parts): DIR/fragment.md, the training section of the Markdown report of
 * `make experiments` (paths relative to DIR), DIR/summary.md, the same as a
 * standalone file, and DIR/summary.csv, one row per run (the table the drift
 * gate compares: its columns are documented in docs/experiments.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

/* Markdown table cells: | would split the cell. */
static void md_esc(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else fputc(*s, f);
    }
}

int rep_write_md(const char *out, exp_data *xs, int nx, figlist *figs, const char *title) {
    char p[4400];
    cli_atomic am;
    snprintf(p, sizeof p, "%s/fragment.md", out);
    if (cli_atomic_open(&am, p, "w")) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    FILE *m = am.f;
    int nrep, nnot, nmiss;
    rep_verdict_counts(xs, nx, &nrep, &nnot, &nmiss);
    fprintf(m, "## ");
    md_esc(m, title);
    fprintf(m, "\n\nEach experiment trains one model under several precision policies with the same seed and data order, "
               "against a baseline run; verdicts come from the rules in each experiment's definition, computed on the data "
               "(index.html lists the rules with their numbers). %d claims reproduced, %d not reproduced, %d not run.\n\n",
            nrep, nnot, nmiss);
    /* the summary table */
    fprintf(m, "|");
    for (int i = 0; i < REP_SUMMARY_COLS; i++) fprintf(m, " %s |", rep_summary_cols[i]);
    fprintf(m, "\n|");
    for (int i = 0; i < REP_SUMMARY_COLS; i++) fprintf(m, " --- |");
    fprintf(m, "\n");
    for (int e = 0; e < nx; e++) {
        exp_data *x = &xs[e];
        for (int i = 0; i < x->nruns; i++) {
            run_data *r = &x->runs[i];
            row_cells rc;
            rep_row_of(x, r, &rc);
            fprintf(m, "| %s | %s | `%s`%s | %s | %s | %s | %s | %s | %s | %s |\n", x->def.name, r->name, r->policy, rc.own, rc.loss,
                    rc.diff, rc.acc, rc.skip, rc.ovf, rc.unf, rep_verdict_word(r->verdict));
        }
    }
    fprintf(m, "\n");
    /* one part per experiment */
    for (int e = 0; e < nx; e++) {
        exp_data *x = &xs[e];
        const char *n = x->def.name;
        fprintf(m, "### ");
        md_esc(m, x->def.title);
        fprintf(m, "\n\nModel `%s`, %ld steps, seed %llu, baseline `%s`. %s\n\n", x->def.model, x->def.steps, x->def.seed,
                x->def.baseline, x->def.about ? x->def.about : "");
        if (x->def.expected) fprintf(m, "Expected: %s\n\n", x->def.expected);
        /* claims and verdicts */
        if (x->def.nexpects || x->def.nclaims) {
            for (int i = 0; i < x->nruns; i++) {
                run_data *r = &x->runs[i];
                const char *cl = suite_claim(&x->def, r->name);
                int any = 0;
                for (int j = 0; j < x->def.nexpects; j++) any |= !strcmp(x->def.expects[j].run, r->name);
                if (!cl && !any) continue;
                fprintf(m, "- **%s**: %s → **%s**\n", r->name, cl ? cl : "", any ? rep_verdict_word(r->verdict) : "no rule");
                for (int j = 0; j < x->def.nexpects; j++) {
                    if (strcmp(x->def.expects[j].run, r->name)) continue;
                    const char *hw = x->holds[j] == 1 ? "holds" : x->holds[j] == 0 ? "fails" : "no data";
                    fprintf(m, "  - `%s`: %s (%s)\n", x->def.expects[j].text, hw, x->explain[j]);
                }
            }
            fprintf(m, "\n");
        }
        /* figures */
        for (int i = 0; i < figs[e].n; i++) {
            figure *f = &figs[e].v[i];
            fprintf(m, "![%s](%s/%s.png)\n\n%s\n\n", f->alt, n, f->file, f->caption ? f->caption : "");
        }
        if (figs[e].note) fprintf(m, "%s\n\n", figs[e].note);
    }
    int ok = !ferror(m);
    if (cli_atomic_close(&am, ok) || !ok) return cli_error(SUB, "%s: cannot write the report files: %s", out, strerror(errno));
    /* the standalone file: the verdict block, then the fragment */
    char *part[3];
    rep_read_parts(out, "md", part);
    snprintf(p, sizeof p, "%s/summary.md", out);
    cli_atomic ai;
    if (part[0] && part[1] && part[2] && !cli_atomic_open(&ai, p, "w")) {
        fprintf(ai.f, "# ");
        md_esc(ai.f, title);
        fprintf(ai.f, "\n\n## Verdict\n\n%s%s%s", part[0], part[1], part[2]);
        cli_atomic_close(&ai, !ferror(ai.f));
    }
    for (int i = 0; i < 3; i++) free(part[i]);
    return 0;
}

int rep_write_csv(const char *out, exp_data *xs, int nx) {
    char p[4400];
    cli_atomic ac;
    snprintf(p, sizeof p, "%s/summary.csv", out);
    if (cli_atomic_open(&ac, p, "w")) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    FILE *c = ac.f;
    fprintf(c, "experiment,run,policy,settings,steps,final_loss,loss_diff,eval_loss,eval_acc,skipped,overflow,underflow,verdict\n");
    for (int e = 0; e < nx; e++) {
        exp_data *x = &xs[e];
        for (int i = 0; i < x->nruns; i++) {
            run_data *r = &x->runs[i];
            char st[600];
            rep_settings_text(r, st, sizeof st);
            double b = x->runs[x->base].final_loss;
            if (x->nseeds > 1) { /* the seeds' means (summary-seeds.csv has each seed) */
                fprintf(c, "%s,%s,%s,\"%s\",%ld", x->def.name, r->name, r->policy, st, r->n);
                const char *m[] = {"final_loss", "loss_diff", "eval_loss", "eval_acc", "skipped", "overflow", "underflow"};
                for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) fprintf(c, ",%.9g", r->have ? rep_seed_agg(x, i, m[k]).mean : NAN);
                fprintf(c, ",%s\n", r->verdict ? rep_verdict_word(r->verdict) : "-");
                continue;
            }
            fprintf(c, "%s,%s,%s,\"%s\",%ld,%.9g,%.9g,%.9g,%.9g,%ld,%.9g,%.9g,%s\n", x->def.name, r->name, r->policy, st, r->n,
                    r->final_loss, r->have ? r->final_loss - b : NAN, r->eval_loss, r->eval_acc, r->skipped, r->overflow,
                    r->underflow, r->verdict ? rep_verdict_word(r->verdict) : "-");
        }
    }
    int ok = !ferror(c);
    if (cli_atomic_close(&ac, ok) || !ok) return cli_error(SUB, "%s: cannot write the report files: %s", out, strerror(errno));
    /* summary-seeds.csv: one row per run and seed (the runs compared within their seed) */
    snprintf(p, sizeof p, "%s/summary-seeds.csv", out);
    if (cli_atomic_open(&ac, p, "w")) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    c = ac.f;
    fprintf(c, "experiment,run,seed,steps,final_loss,loss_diff,eval_loss,eval_acc,skipped,overflow,underflow\n");
    for (int e = 0; e < nx; e++) {
        exp_data *x = &xs[e];
        for (int i = 0; i < x->nruns; i++)
            for (int k = 0; k < (x->sr ? x->nseeds : 1); k++) {
                const run_data *r = x->sr ? &x->sr[k][i] : &x->runs[i], *rb = x->sr ? &x->sr[k][x->base] : &x->runs[x->base];
                fprintf(c, "%s,%s,%llu,%ld,%.9g,%.9g,%.9g,%.9g,%ld,%.9g,%.9g\n", x->def.name, r->name, x->def.seeds[k], r->n, r->final_loss,
                        r->have && rb->have ? r->final_loss - rb->final_loss : NAN, r->eval_loss, r->eval_acc, r->skipped, r->overflow, r->underflow);
            }
    }
    ok = !ferror(c);
    if (cli_atomic_close(&ac, ok) || !ok) return cli_error(SUB, "%s: cannot write the report files: %s", out, strerror(errno));
    return 0;
}
