/* SPDX-License-Identifier: MIT */
/* report_verdict.c: the verdict block of `fpemu report` (report.h lists the
 * parts), the first thing the report shows. It owns:
 * - what was run: experiments, distinct runs, models and policies (in the
 *   order of the engine's tables, trn_model_names[] and trn_policy_names[]),
 *   seeds, steps, the settings the runs vary;
 * - how many claims held, and every claim that did not, with the rules
 *   that failed and their numbers;
 * - the plots that matter (at most REP_KEY_PLOTS): first the experiments
 *   with a claim not reproduced, then those whose runs end furthest from
 *   their baseline; each experiment's loss plot, or its loss difference
 *   when the curves lie on top of each other (final gaps under 10%).
 * It writes DIR/headline.html and headline.md (the text) and
 * DIR/keyplots.html and keyplots.md (the figures), which
 * reports/assemble.sh puts at the top of the report of `make experiments`
 * and report_html.c / report_md.c at the top of the standalone pages. */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "train.h"

#define REP_KEY_PLOTS 3

/* ---- what was run --------------------------------------------------------------- */

/* A list of distinct words, in the order added. */
typedef struct { char **v; int n; } words;

static int words_has(const words *w, const char *s) {
    for (int i = 0; i < w->n; i++) if (!strcmp(w->v[i], s)) return 1;
    return 0;
}

static void words_add(words *w, const char *s) {
    if (words_has(w, s)) return;
    w->v = realloc(w->v, (size_t)(w->n + 1) * sizeof *w->v);
    w->v[w->n++] = strdup(s);
}

static void words_free(words *w) {
    for (int i = 0; i < w->n; i++) free(w->v[i]);
    free(w->v);
}

/* The words of FOUND in the order of the engine's TABLE, then any the table
 * does not name. */
static void words_in_order(const words *found, const char *const *table, words *out) {
    for (int i = 0; table[i]; i++) if (words_has(found, table[i])) words_add(out, table[i]);
    for (int i = 0; i < found->n; i++) words_add(out, found->v[i]);
}

static void words_print(FILE *f, const words *w, int html) {
    for (int i = 0; i < w->n; i++) {
        fputs(i == 0 ? "" : i == w->n - 1 ? " and " : ", ", f);
        fputs(html ? "<code>" : "`", f);
        if (html) cli_html_esc(f, w->v[i]); else fputs(w->v[i], f);
        fputs(html ? "</code>" : "`", f);
    }
}

typedef struct {
    int nexp, nruns, nmissing, nrep, nnot, nmiss;
    words models, policies, seeds, settings;
    long steps_lo, steps_hi;
} run_summary;

static void summarise(const exp_data *xs, int nx, run_summary *s) {
    memset(s, 0, sizeof *s);
    words keys = {0}, models = {0}, policies = {0};
    s->nexp = nx;
    s->steps_lo = -1;
    for (int e = 0; e < nx; e++) {
        const exp_data *x = &xs[e];
        for (int k = 0; k < x->def.nseeds; k++) {
            char seed[32];
            snprintf(seed, sizeof seed, "%llu", x->def.seeds[k]);
            words_add(&s->seeds, seed);
        }
        words_add(&models, x->def.model);
        if (s->steps_lo < 0 || x->def.steps < s->steps_lo) s->steps_lo = x->def.steps;
        if (x->def.steps > s->steps_hi) s->steps_hi = x->def.steps;
        for (int i = 0; i < x->nruns; i++) {
            const run_data *r = &x->runs[i];
            s->nrep += r->verdict == 1; s->nnot += r->verdict == 2; s->nmiss += r->verdict == 3;
            words_add(&policies, r->policy);
            /* a run shared by experiments (the same command) counts once,
             * each of its seeds a run of its own */
            for (int k = 0; k < (x->sr ? x->nseeds : 1); k++) {
                const run_data *rs = x->sr ? &x->sr[k][i] : r;
                char key[4200];
                snprintf(key, sizeof key, "%s", r->def ? r->def->key[k] : rs->dir);
                if (!words_has(&keys, key)) {
                    words_add(&keys, key);
                    if (rs->have) s->nruns++; else s->nmissing++;
                }
            }
            for (int j = r->def ? r->def->ncommon : 0; r->def && j < r->def->nsets; j++) {
                char k[128];
                snprintf(k, sizeof k, "%s", r->def->sets[j]);
                char *eq = strchr(k, '=');
                if (eq) *eq = 0;
                words_add(&s->settings, k);
            }
        }
    }
    words_in_order(&models, trn_model_names, &s->models);
    words_in_order(&policies, trn_policy_names, &s->policies);
    words_free(&keys);
    words_free(&models);
    words_free(&policies);
}

static void summary_free(run_summary *s) {
    words_free(&s->models);
    words_free(&s->policies);
    words_free(&s->seeds);
    words_free(&s->settings);
}

static void print_what_ran(FILE *f, const run_summary *s, int html) {
    fprintf(f, "%d training run%s", s->nruns, s->nruns == 1 ? "" : "s");
    if (s->nmissing) fprintf(f, " (and %d without data)", s->nmissing);
    fprintf(f, " in %d experiment%s; model%s ", s->nexp, s->nexp == 1 ? "" : "s", s->models.n == 1 ? "" : "s");
    words_print(f, &s->models, html);
    fprintf(f, "; %d polic%s: ", s->policies.n, s->policies.n == 1 ? "y" : "ies");
    words_print(f, &s->policies, html);
    fprintf(f, "; seed%s %s", s->seeds.n == 1 ? "" : "s", s->seeds.n ? "" : "-");
    for (int i = 0; i < s->seeds.n; i++) fprintf(f, "%s%s", i ? ", " : "", s->seeds.v[i]);
    if (s->steps_lo == s->steps_hi) fprintf(f, "; %ld steps each", s->steps_lo);
    else fprintf(f, "; %ld to %ld steps", s->steps_lo, s->steps_hi);
    if (s->settings.n) {
        fprintf(f, "; settings varied by run: ");
        words_print(f, &s->settings, html);
    }
    fputs(".", f);
}

/* ---- the plots that matter ------------------------------------------------------ */

typedef struct {
    int exp;                /* index into xs */
    const char *file;       /* the figure (loss or loss_diff) */
    int failed;             /* a claim of the experiment was not reproduced */
    double gap;             /* largest |final loss - baseline's| / |baseline's| */
    const char *gap_run;
} key_plot;

static int has_fig(const figlist *l, const char *file) {
    for (int i = 0; i < l->n; i++) if (!strcmp(l->v[i].file, file)) return 1;
    return 0;
}

static int pick_plots(const exp_data *xs, int nx, const figlist *figs, key_plot *k) {
    key_plot *c = calloc((size_t)(nx ? nx : 1), sizeof *c);
    int nc = 0;
    for (int e = 0; e < nx; e++) {
        const exp_data *x = &xs[e];
        const run_data *b = &x->runs[x->base];
        if (!has_fig(&figs[e], "loss")) continue;
        key_plot p = {e, "loss", 0, 0, NULL};
        for (int i = 0; i < x->nruns; i++) {
            const run_data *r = &x->runs[i];
            p.failed |= r->verdict == 2;
            if (i == x->base || !r->have) continue;
            double d = isfinite(r->final_loss) ? fabs(r->final_loss - b->final_loss) / fmax(fabs(b->final_loss), 1e-12) : INFINITY;
            if (d > p.gap || !p.gap_run) { p.gap = d; p.gap_run = r->name; }
        }
        if (p.gap < 0.1 && has_fig(&figs[e], "loss_diff")) p.file = "loss_diff";
        c[nc++] = p;
    }
    /* failed first (in order), then by the largest gap (stable) */
    for (int i = 1; i < nc; i++)
        for (int j = i; j > 0; j--) {
            key_plot *a = &c[j - 1], *bb = &c[j];
            int swap = bb->failed > a->failed || (bb->failed == a->failed && !bb->failed && bb->gap > a->gap);
            if (!swap) break;
            key_plot t = *a; *a = *bb; *bb = t;
        }
    int n = nc < REP_KEY_PLOTS ? nc : REP_KEY_PLOTS;
    memcpy(k, c, (size_t)n * sizeof *k);
    free(c);
    return n;
}

static void print_plot_caption(FILE *f, const exp_data *x, const key_plot *p, int html) {
    const run_data *b = &x->runs[x->base];
    if (html) { fputs("<b>", f); cli_html_esc(f, x->def.title); fputs("</b>", f); }
    else fprintf(f, "**%s**", x->def.title);
    fprintf(f, ": %s. ", !strcmp(p->file, "loss") ? "training loss against the baseline" : "loss minus the baseline's");
    if (p->failed) {
        int nf = 0;
        for (int i = 0; i < x->nruns; i++) nf += x->runs[i].verdict == 2;
        fputs(nf == 1 ? "A claim not reproduced:" : "Claims not reproduced:", f);
        for (int i = 0, j = 0; i < x->nruns; i++)
            if (x->runs[i].verdict == 2) fprintf(f, "%s %s", j++ ? "," : "", x->runs[i].name);
        fputs(".", f);
    } else if (p->gap_run) {
        const run_data *r = NULL;
        for (int i = 0; i < x->nruns; i++) if (!strcmp(x->runs[i].name, p->gap_run)) r = &x->runs[i];
        char a[64], bb[64];
        rep_fmt_num(a, sizeof a, r ? r->final_loss : NAN);
        rep_fmt_num(bb, sizeof bb, b->final_loss);
        fprintf(f, "Furthest from the baseline: %s ends at %s against %s's %s.", p->gap_run, a, b->name, bb);
    }
}

/* ---- the files ------------------------------------------------------------------ */

static int write_file(const char *out, const char *name, const char *text, size_t len) {
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", out, name);
    cli_atomic a;
    if (cli_atomic_open(&a, p, "w")) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    int ok = fwrite(text, 1, len, a.f) == len && !ferror(a.f);
    if (cli_atomic_close(&a, ok) || !ok) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno ? errno : EIO));
    return 0;
}

int rep_write_verdict(gp_ctx *g, const char *out, exp_data *xs, int nx, figlist *figs) {
    run_summary s;
    summarise(xs, nx, &s);
    key_plot k[REP_KEY_PLOTS];
    int nk = pick_plots(xs, nx, figs, k);
    int nclaims = s.nrep + s.nnot + s.nmiss;
    char *t[4] = {NULL, NULL, NULL, NULL};
    size_t l[4] = {0, 0, 0, 0};
    FILE *h = open_memstream(&t[0], &l[0]), *m = open_memstream(&t[1], &l[1]);
    /* the claims */
    fprintf(h, "<p class=\"verdict-line\" id=\"verdict-training\"><b>Training: ");
    fprintf(m, "**Training: ");
    if (nclaims) {
        fprintf(h, "%d of %d claim%s reproduced</b>, <span class=\"%s\">%d not reproduced</span>, %d not run.", s.nrep, nclaims,
                nclaims == 1 ? "" : "s", s.nnot ? "bad" : "good", s.nnot, s.nmiss);
        fprintf(m, "%d of %d claim%s reproduced**, %d not reproduced, %d not run.", s.nrep, nclaims, nclaims == 1 ? "" : "s",
                s.nnot, s.nmiss);
    } else {
        fprintf(h, "no claims</b> (no run has a rule to check).");
        fprintf(m, "no claims** (no run has a rule to check).");
    }
    fprintf(h, "</p>\n<p class=\"what-ran\">What was run: ");
    fprintf(m, "\n\nWhat was run: ");
    print_what_ran(h, &s, 1);
    print_what_ran(m, &s, 0);
    fprintf(h, "</p>\n");
    fprintf(m, "\n\n");
    /* every claim that did not hold, with its failing rules and their numbers */
    if (s.nnot || s.nmiss) {
        fprintf(h, "<ul class=\"failed\">\n");
        for (int e = 0; e < nx; e++) {
            const exp_data *x = &xs[e];
            for (int i = 0; i < x->nruns; i++) {
                const run_data *r = &x->runs[i];
                if (r->verdict != 2 && r->verdict != 3) continue;
                const char *cl = suite_claim(&x->def, r->name);
                fprintf(h, "<li><span class=\"%s\">%s</span>: <a href=\"#exp-%s\">%s</a> / <b>%s</b>: ", r->verdict == 2 ? "bad" : "warn",
                        rep_verdict_word(r->verdict), x->def.name, x->def.name, r->name);
                cli_html_esc(h, cl ? cl : "");
                fprintf(m, "- %s: %s / **%s**: %s", rep_verdict_word(r->verdict), x->def.name, r->name, cl ? cl : "");
                for (int j = 0; j < x->def.nexpects; j++) {
                    if (strcmp(x->def.expects[j].run, r->name) || x->holds[j] == 1) continue;
                    fprintf(h, "<br><code>");
                    cli_html_esc(h, x->def.expects[j].text);
                    fprintf(h, "</code> %s: ", x->holds[j] == 0 ? "fails" : "has no data");
                    cli_html_esc(h, x->explain[j]);
                    fprintf(m, "\n  - `%s` %s: %s", x->def.expects[j].text, x->holds[j] == 0 ? "fails" : "has no data", x->explain[j]);
                }
                fprintf(h, "</li>\n");
                fprintf(m, "\n");
            }
        }
        fprintf(h, "</ul>\n");
        fprintf(m, "\n");
    }
    fclose(h);
    fclose(m);
    /* the plots that matter */
    h = open_memstream(&t[2], &l[2]);
    m = open_memstream(&t[3], &l[3]);
    for (int i = 0; i < nk; i++) {
        const exp_data *x = &xs[k[i].exp];
        /* drawn again at about the size shown (half the page), so that its
         * text stays legible, without the title (the caption has it); the
         * full-size plot if that fails */
        const figure *fg = NULL;
        for (int j = 0; j < figs[k[i].exp].n; j++)
            if (!strcmp(figs[k[i].exp].v[j].file, k[i].file)) fg = &figs[k[i].exp].v[j];
        char key[80], img[80];
        snprintf(key, sizeof key, "key_%s", k[i].file);
        snprintf(img, sizeof img, "%s", fg && !g->no_plots && !rep_replot(g, x->dir, fg, key, 620, 380, "ttl=''") ? key : k[i].file);
        fprintf(h, "<figure><a href=\"#exp-%s\"><img src=\"%s/%s.png\" alt=\"", x->def.name, x->def.name, img);
        cli_html_esc(h, x->def.title);
        fprintf(h, "\"></a>\n<figcaption>");
        print_plot_caption(h, x, &k[i], 1);
        fprintf(h, "</figcaption></figure>\n");
        fprintf(m, "![%s](%s/%s.png)\n\n", x->def.name, x->def.name, img);
        print_plot_caption(m, x, &k[i], 0);
        fprintf(m, "\n\n");
    }
    fclose(h);
    fclose(m);
    static const char *const names[4] = {"headline.html", "headline.md", "keyplots.html", "keyplots.md"};
    int rc = 0;
    for (int i = 0; i < 4 && !rc; i++) rc = write_file(out, names[i], t[i] ? t[i] : "", t[i] ? l[i] : 0);
    for (int i = 0; i < 4; i++) free(t[i]);
    summary_free(&s);
    return rc;
}
