/* SPDX-License-Identifier: MIT */
/* report_plan.c: `fpemu report --plan --suite DEFS --runs CACHE` (report.h
 * lists the parts): the makefile that runs a suite. It reads every
 * definition (the engine checks model, policy and keys, report_rules.c the
 * rules), keeps one target per distinct `fpemu train` command (runs shared
 * by experiments run once), costliest first (report_engine.c's cost table)
 * so that make -j packs them well, and writes it as make and shell text
 * with no path in it: targets are relative to the run cache, keys are
 * plain names, every other word is quoted for the shell and for make. */
#define _GNU_SOURCE /* open_memstream */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

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

int rep_plan(char **files, int nfiles, const char *cache) {
    suite_exp *d = calloc((size_t)nfiles, sizeof *d);
    char err[8192];
    for (int i = 0; i < nfiles; i++) {
        if (suite_read(&d[i], files[i], NULL, err, sizeof err) || rep_check_rules(&d[i], err, sizeof err)) {
            for (int j = 0; j < i; j++) suite_free(&d[j]);
            free(d);
            return cli_error(SUB, "%s", err);
        }
        rep_apply_seeds(&d[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(d[j].name, d[i].name)) {
                cli_error(SUB, "%s and %s define the same experiment name '%s'", d[j].path, d[i].path, d[i].name);
                for (int k = 0; k <= i; k++) suite_free(&d[k]);
                free(d);
                return 2;
            }
    }
    /* unique runs, most expensive first (so that make -j packs them well) */
    /* one target per run and seed (s: the seed's index in its experiment) */
    typedef struct { const suite_exp *e; const suite_run *r; int s; double cost; char users[512]; } urun;
    urun *u = NULL;
    int nu = 0;
    for (int i = 0; i < nfiles; i++)
        for (int j = 0; j < d[i].nruns; j++)
            for (int s = 0; s < d[i].nseeds; s++) {
                const suite_run *r = &d[i].runs[j];
                int k;
                for (k = 0; k < nu; k++) if (!strcmp(u[k].r->key[u[k].s], r->key[s])) break;
                if (k == nu) {
                    u = realloc(u, (size_t)(nu + 1) * sizeof *u);
                    u[nu].e = &d[i];
                    u[nu].r = r;
                    u[nu].s = s;
                    u[nu].cost = rep_run_cost(&d[i], r);
                    u[nu].users[0] = 0;
                    nu++;
                }
                size_t l = strlen(u[k].users);
                snprintf(u[k].users + l, sizeof u[k].users - l, "%s%s/%s", l ? " " : "", d[i].name, r->name);
            }
    /* costliest first; equal costs keep their order (stable), so a run's
     * seeds stay together */
    for (int i = 1; i < nu; i++)
        for (int j = i; j > 0 && u[j - 1].cost < u[j].cost; j--) { urun t = u[j]; u[j] = u[j - 1]; u[j - 1] = t; }
    /* The plan is make and shell text: no path goes into it. Its targets
     * are relative to the run cache (make runs it there, -C CACHE), the
     * keys are checked to be plain names, and every other word of a
     * recipe is quoted for the shell and for make (sh_word); a path in a
     * comment has its control characters and backslashes replaced. */
    int bad = -1;
    for (int k = 0; k < nu && bad < 0; k++)
        if (!plain_name(u[k].r->key[u[k].s])) bad = k;
    if (bad >= 0) {
        int rc = cli_error(SUB, "%s:%d: run %s: its cache folder name '%s' is not a plain name (letters, digits, . _ + -)",
                           u[bad].e->path, u[bad].r->line, u[bad].r->name, u[bad].r->key[u[bad].s]);
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
    for (int k = 0; k < nu; k++) fprintf(o, " \\\n  %s/summary.json", u[k].r->key[u[k].s]);
    fprintf(o, "\n\n.PHONY: suite-runs\nsuite-runs: $(SUITE_RUNS)\n\t@echo \"  SUITE   %d runs done (results in $$(pwd))\"\n\n", nu);
    /* the runs' targets one per line: the shards of a sweep over several
     * machines (GNU parallel, a Slurm job array: examples/sweep/) */
    fprintf(o, ".PHONY: suite-list\nsuite-list:\n\t@for t in $(SUITE_RUNS); do echo \"$$t\"; done\n\n");
    for (int k = 0; k < nu; k++) {
        const suite_exp *e = u[k].e;
        const suite_run *r = u[k].r;
        const char *key = r->key[u[k].s];
        /* the command's words */
        char num[2][32], *args = NULL, *msg = NULL;
        size_t al = 0, ml = 0;
        snprintf(num[0], sizeof num[0], "%ld", e->steps);
        snprintf(num[1], sizeof num[1], "%llu", e->seeds[u[k].s]);
        FILE *a = open_memstream(&args, &al);
        const char *w[] = {"--model", e->model, "--policy", r->policy, "--steps", num[0], "--seed", num[1]};
        for (size_t j = 0; j < sizeof w / sizeof w[0]; j++) { if (j) fputc(' ', a); qbad |= sh_word(a, w[j], 0); }
        for (int j = 0; j < r->nsets; j++) { fputs(" --set ", a); qbad |= sh_word(a, r->sets[j], 0); }
        fclose(a);
        fprintf(o, "%s/summary.json: $(SUITE_DEP)\n\t@echo ", key);
        FILE *mm = open_memstream(&msg, &ml);
        fprintf(mm, "  TRAIN   [%d/%d] %s seed %llu (%s %s, %ld steps)", k + 1, nu, u[k].users, e->seeds[u[k].s], e->model, r->policy, e->steps);
        fclose(mm);
        qbad |= sh_word(o, msg, 1);
        free(msg);
        fprintf(o, "\n\t@rm -rf %s.tmp; t0=$$(date +%%s.%%N); \\\n", key);
        fprintf(o, "\t  $(SUITE_FPEMU) train %s --out %s.tmp --quiet >%s.log 2>&1 || { cat %s.log >&2; echo ", args, key, key, key);
        mm = open_memstream(&msg, &ml);
        fprintf(mm, "suite: run %s seed %llu failed (command: fpemu train %s)", u[k].users, e->seeds[u[k].s], args);
        fclose(mm);
        qbad |= sh_word(o, msg, 1);
        free(msg);
        free(args);
        fprintf(o, " >&2; exit 1; }; \\\n");
        fprintf(o, "\t  rm -rf %s && mv %s.tmp %s && rm -f %s.log; \\\n", key, key, key, key);
        mm = open_memstream(&msg, &ml);
        fprintf(mm, "  DONE    [%d/%d] %s seed %llu in ", k + 1, nu, u[k].users, e->seeds[u[k].s]);
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
