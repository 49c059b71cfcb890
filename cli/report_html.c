/* SPDX-License-Identifier: MIT */
/* report_html.c: the HTML pages of `fpemu report` (report.h lists the
 * parts): DIR/fragment.html, the training section that reports/assemble.sh
 * inlines into the report of `make experiments` (paths relative to DIR),
 * and DIR/index.html, the same as a standalone page. It owns their layout:
 * the heading with the claim counts, the metrics the rules use, the
 * summary table, and per experiment its settings, runs with their
 * commands, claims with every rule and its numbers, and figures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

/* A plot of one run's telemetry (rates_RUN, fp8_RUN), not of the experiment. */
static int is_run_plot(const char *file) { return !strncmp(file, "rates_", 6) || !strncmp(file, "fp8_", 4); }

static int first_run_plot(const figlist *l) {
    for (int i = 0; i < l->n; i++) if (is_run_plot(l->v[i].file)) return i;
    return -1;
}

int rep_write_html(const char *out, exp_data *xs, int nx, figlist *figs, const char *title) {
    char p[4400];
    cli_atomic ah;
    snprintf(p, sizeof p, "%s/fragment.html", out);
    if (cli_atomic_open(&ah, p, "w")) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    FILE *h = ah.f;
    int nrep, nnot, nmiss;
    rep_verdict_counts(xs, nx, &nrep, &nnot, &nmiss);
    /* header and the rules of the verdicts */
    fprintf(h, "<h2 id=\"training\">");
    cli_html_esc(h, title);
    fprintf(h, "</h2>\n<p>Each experiment trains one model under several precision policies with the same seed and data "
               "order, against a baseline run (normally <code>%s</code>). Verdicts are computed from the runs' data by "
               "the rules written in each experiment's definition (<code>experiment.txt</code>, shown under each claim): a "
               "claim is <b>reproduced</b> when all its rules hold, <b>not reproduced</b> otherwise, with the numbers. "
               "%d claims reproduced, %d not reproduced, %d not run.</p>\n", rep_reference_policy(), nrep, nnot, nmiss);
    fprintf(h, "<details><summary>Metrics used by the rules</summary><ul>\n");
    for (int i = 0; rep_metric_names[i]; i++) {
        fprintf(h, "<li><code>%s(RUN)</code>: ", rep_metric_names[i]);
        cli_html_esc(h, rep_metric_docs[i]);
        fprintf(h, "</li>\n");
    }
    fprintf(h, "</ul></details>\n");
    /* the summary table */
    fprintf(h, "<table>\n<tr>");
    for (int i = 0; i < REP_SUMMARY_COLS; i++) fprintf(h, "<th>%s</th>", rep_summary_cols[i]);
    fprintf(h, "</tr>\n");
    for (int e = 0; e < nx; e++) {
        exp_data *x = &xs[e];
        for (int i = 0; i < x->nruns; i++) {
            run_data *r = &x->runs[i];
            row_cells rc;
            rep_row_of(x, r, &rc);
            fprintf(h, "<tr><td><a href=\"#exp-%s\">%s</a></td><td>%s</td><td><code>%s</code>%s</td><td>%s</td><td>%s</td>"
                       "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                    x->def.name, x->def.name, r->name, r->policy, rc.own, rc.loss, rc.diff, rc.acc, rc.skip, rc.ovf, rc.unf,
                    r->verdict == 1 ? "<span style=\"color:#080\">reproduced</span>"
                    : r->verdict == 2 ? "<span style=\"color:#b00\">not reproduced</span>"
                    : r->verdict == 3 ? "<span style=\"color:#b60\">not run</span>" : "");
        }
    }
    fprintf(h, "</table>\n");
    /* one part per experiment */
    for (int e = 0; e < nx; e++) {
        exp_data *x = &xs[e];
        const char *n = x->def.name;
        fprintf(h, "<h3 id=\"exp-%s\">", n);
        cli_html_esc(h, x->def.title);
        fprintf(h, "</h3>\n<p>Model <code>%s</code>, %ld steps, seed %llu, baseline <code>%s</code>. ", x->def.model,
                x->def.steps, x->def.seed, x->def.baseline);
        cli_html_esc(h, x->def.about);
        fprintf(h, "</p>\n");
        if (x->def.expected) {
            fprintf(h, "<p><b>Expected:</b> ");
            cli_html_esc(h, x->def.expected);
            fprintf(h, "</p>\n");
        }
        /* runs */
        fprintf(h, "<table>\n<tr><th>run</th><th>policy and settings</th><th>command</th></tr>\n");
        for (int i = 0; i < x->nruns; i++) {
            run_data *r = &x->runs[i];
            char st[600], args[2048];
            rep_settings_text(r, st, sizeof st);
            suite_train_args(&x->def, r->def, -1, args, sizeof args);
            fprintf(h, "<tr><td>%s%s</td><td><code>%s</code> ", r->name, i == x->base ? " (baseline)" : "", r->policy);
            cli_html_esc(h, st);
            fprintf(h, "</td><td><code>fpemu train ");
            cli_html_esc(h, args);
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
                cli_html_esc(h, cl ? cl : "");
                fprintf(h, " &rarr; <b style=\"color:%s\">%s</b>\n<ul>\n",
                        r->verdict == 1 ? "#080" : r->verdict == 2 ? "#b00" : "#b60", any ? rep_verdict_word(r->verdict) : "no rule");
                for (int j = 0; j < x->def.nexpects; j++) {
                    if (strcmp(x->def.expects[j].run, r->name)) continue;
                    const char *hw = x->holds[j] == 1 ? "holds" : x->holds[j] == 0 ? "fails" : "no data";
                    fprintf(h, "<li><code>");
                    cli_html_esc(h, x->def.expects[j].text);
                    fprintf(h, "</code>: %s (", hw);
                    cli_html_esc(h, x->explain[j]);
                    fprintf(h, ")</li>\n");
                }
                fprintf(h, "</ul></li>\n");
            }
            fprintf(h, "</ul>\n");
        }
        /* figures: the experiment's, then each run's telemetry (rates_RUN,
         * fp8_RUN) folded away, so that the page can be scanned experiment
         * by experiment */
        int nrun = 0, nrates = 0;
        for (int i = 0; i < figs[e].n; i++) {
            nrun += is_run_plot(figs[e].v[i].file);
            nrates += !strncmp(figs[e].v[i].file, "rates_", 6);
        }
        for (int i = 0; i < figs[e].n; i++) {
            figure *f = &figs[e].v[i];
            if (nrun && i == first_run_plot(&figs[e])) {
                fprintf(h, "<details><summary>Each run's telemetry (click to open): ");
                if (nrates) fprintf(h, "%d plot%s of overflow and underflow per tensor class", nrates, nrates == 1 ? "" : "s");
                if (nrun > nrates)
                    fprintf(h, "%s%d plot%s of fp8 amax and scale", nrates ? ", " : "", nrun - nrates, nrun - nrates == 1 ? "" : "s");
                fprintf(h, "</summary>\n");
            }
            fprintf(h, "<figure><a href=\"%s/%s.svg\"><img src=\"%s/%s.png\" alt=\"%s\" width=\"900\"></a>\n<figcaption>", n,
                    f->file, n, f->file, f->alt);
            cli_html_esc(h, f->caption);
            fprintf(h, "</figcaption></figure>\n");
        }
        if (nrun) fprintf(h, "</details>\n");
        if (figs[e].note) {
            fprintf(h, "<p class=\"note\">");
            cli_html_esc(h, figs[e].note);
            fprintf(h, "</p>\n");
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
    int ok = !ferror(h);
    if (cli_atomic_close(&ah, ok) || !ok) return cli_error(SUB, "%s: cannot write the report files: %s", out, strerror(errno));
    /* the standalone page: the verdict block, then the fragment */
    char *part[3];
    rep_read_parts(out, "html", part);
    snprintf(p, sizeof p, "%s/index.html", out);
    cli_atomic ai;
    if (part[0] && part[1] && part[2] && !cli_atomic_open(&ai, p, "w")) {
        fprintf(ai.f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>");
        cli_html_esc(ai.f, title);
        fprintf(ai.f, "</title>\n<style>body{font-family:sans-serif;margin:2em auto;max-width:1100px;line-height:1.4;padding:0 1em}"
                      "table{border-collapse:collapse;font-size:90%%;margin:1em 0}td,th{border:1px solid #bbb;padding:2px 6px;"
                      "text-align:left}th{background:#f0f0f0}figure{margin:1.5em 0}figure img{max-width:100%%;height:auto;"
                      "border:1px solid #eee}figcaption{font-size:92%%;color:#333}code{background:#f6f6f6;padding:0 2px}"
                      ".verdict{background:#f7f9fc;border:1px solid #d0d7e2;padding:0.2em 1em 0.6em;margin:1em 0}"
                      ".keyplots{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:0.8em}"
                      ".keyplots figure{margin:0}.keyplots figcaption{font-size:88%%}"
                      ".bad{color:#b00;font-weight:bold}.warn{color:#b60;font-weight:bold}.good{color:#080}.note{color:#555}"
                      "td:first-child{white-space:nowrap}</style>"
                      "</head><body>\n<h1>fpemu report</h1>\n<section class=\"verdict\">\n<h2 id=\"verdict\">Verdict</h2>\n%s<div class=\"keyplots\">\n%s</div>\n"
                      "</section>\n%s</body></html>\n", part[0], part[1], part[2]);
        cli_atomic_close(&ai, !ferror(ai.f));
    }
    for (int i = 0; i < 3; i++) free(part[i]);
    return 0;
}
