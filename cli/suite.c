/* SPDX-License-Identifier: MIT */
/* suite.c: experiment definition files (suite.h). */
#include "suite.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "csv.h"
#include "train.h"

void suite_name_from_path(const char *path, char *name, size_t n) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *d = b;
    while (isdigit((unsigned char)*d)) d++;
    if (d > b && *d == '-') b = d + 1;
    size_t l = strlen(b);
    if (l > 4 && !strcmp(b + l - 4, ".txt")) l -= 4;
    snprintf(name, n, "%.*s", (int)l, b);
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) *--e = 0;
    return s;
}

/* Names of runs and experiments: letters, digits, and . _ + - (they become
 * folder names, gnuplot titles and words in rules). */
static int good_name(const char *s) {
    if (!*s || strlen(s) >= SUITE_NAME_MAX) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("._+-", *s)) return 0;
    return 1;
}

static void append_text(char **dst, const char *s) {
    size_t a = *dst ? strlen(*dst) : 0, b = strlen(s);
    char *n = realloc(*dst, a + b + 2);
    if (!n) return;
    if (a) n[a++] = ' ';
    memcpy(n + a, s, b + 1);
    *dst = n;
}

static void add_set(char ***v, int *n, const char *s) {
    *v = realloc(*v, (size_t)(*n + 1) * sizeof **v);
    (*v)[(*n)++] = strdup(s);
}

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 0x100000001b3ULL; }
    h ^= '\n';
    h *= 0x100000001b3ULL;
    return h;
}

/* Split "k=v k2=v2" into the set list; -1 on a word without '='. */
static int split_sets(char *v, char ***sets, int *nsets, const char **bad) {
    char *save = NULL;
    for (char *t = strtok_r(v, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(t, '=');
        if (!eq || eq == t || !eq[1]) { *bad = t; return -1; }
        add_set(sets, nsets, t);
    }
    return 0;
}

static void set_err(char *err, size_t errlen, const char *path, int ln, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void set_err(char *err, size_t errlen, const char *path, int ln, const char *fmt, ...) {
    int k = ln ? snprintf(err, errlen, "%s:%d: ", path, ln) : snprintf(err, errlen, "%s: ", path);
    if (k < 0 || (size_t)k >= errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
    va_end(ap);
}

static int read_def(suite_exp *e, const char *path, const char *name, int check_engine, char *err, size_t errlen);

int suite_parse_seeds(const char *text, unsigned long long *seeds, char *err, size_t errlen) {
    int n = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) break;
        if (!isdigit((unsigned char)*p)) { snprintf(err, errlen, "expected whole numbers, got '%.20s'", p); return -1; }
        char *end;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (errno || (*end && *end != ' ' && *end != '\t' && *end != ',')) { snprintf(err, errlen, "expected whole numbers, got '%.20s'", p); return -1; }
        if (n == SUITE_MAX_SEEDS) { snprintf(err, errlen, "at most %d seeds", SUITE_MAX_SEEDS); return -1; }
        for (int i = 0; i < n; i++)
            if (seeds[i] == x) { snprintf(err, errlen, "seed %llu is given twice", x); return -1; }
        seeds[n++] = x;
        p = end;
    }
    if (!n) { snprintf(err, errlen, "expected at least one seed"); return -1; }
    return n;
}

void suite_set_seeds(suite_exp *e, const unsigned long long *seeds, int n) {
    if (seeds != e->seeds) memmove(e->seeds, seeds, (size_t)n * sizeof *seeds);
    e->nseeds = n;
    e->seed = e->seeds[0];
    for (int i = 0; i < e->nruns; i++) {
        suite_run *r = &e->runs[i];
        for (int s = 0; s < n; s++) {
            char num[64];
            uint64_t h = 0xcbf29ce484222325ULL;
            h = fnv1a(h, e->model);
            h = fnv1a(h, r->policy);
            snprintf(num, sizeof num, "%ld", e->steps);
            h = fnv1a(h, num);
            snprintf(num, sizeof num, "%llu", e->seeds[s]);
            h = fnv1a(h, num);
            for (int j = 0; j < r->nsets; j++) h = fnv1a(h, r->sets[j]);
            /* the seed is in the hash (as it always was): seed 1's folder is
             * the one it had before experiments had several seeds */
            snprintf(r->key[s], sizeof r->key[s], "%.12s-%.12s-%08x", e->model, r->policy, (unsigned)(h ^ (h >> 32)));
        }
    }
}

int suite_read(suite_exp *e, const char *path, const char *name, char *err, size_t errlen) {
    return read_def(e, path, name, 1, err, errlen);
}

int suite_read_results(suite_exp *e, const char *path, const char *name, char *err, size_t errlen) {
    return read_def(e, path, name, 0, err, errlen);
}

static int read_def(suite_exp *e, const char *path, const char *name, int check_engine, char *err, size_t errlen) {
    memset(e, 0, sizeof *e);
    snprintf(e->path, sizeof e->path, "%s", path);
    if (name) snprintf(e->name, sizeof e->name, "%s", name);
    else suite_name_from_path(path, e->name, sizeof e->name);
    e->steps = 200;
    e->seed = e->seeds[0] = 1;
    e->nseeds = 1;
    size_t len;
    char *text = csv_slurp(path, &len);
    if (!text) { snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno)); return -1; }
    if (!good_name(e->name)) {
        snprintf(err, errlen, "%s: the experiment name '%s' may hold only letters, digits and . _ + -", path, e->name);
        free(text);
        return -1;
    }
    char **common = NULL;
    int ncommon = 0, ln = 0;
    char *next = text;
#define FAIL(...) do { set_err(err, errlen, path, ln, __VA_ARGS__); goto fail; } while (0)
    while (next && *next) {
        char *line = next;
        char *nl = strchr(line, '\n');
        if (nl) { *nl = 0; next = nl + 1; } else next = NULL;
        ln++;
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        char *colon = strchr(s, ':');
        if (!colon) FAIL("expected `key: value`, got '%.60s'", s);
        *colon = 0;
        char *k = trim(s), *v = trim(colon + 1);
        char *arg = strchr(k, ' ');
        if (arg) { *arg++ = 0; arg = trim(arg); }
        if (!*v) FAIL("'%s' has no value", k);
        if (!strcmp(k, "title") || !strcmp(k, "about") || !strcmp(k, "expected")) {
            if (arg) FAIL("'%s' takes no run name", k);
            append_text(k[0] == 't' ? &e->title : k[0] == 'a' ? &e->about : &e->expected, v);
        } else if (!strcmp(k, "model")) {
            if (arg || strlen(v) >= sizeof e->model) FAIL("model: expected a model name");
            strcpy(e->model, v);
        } else if (!strcmp(k, "seeds")) {
            char e2[256];
            int ns = arg ? -1 : suite_parse_seeds(v, e->seeds, e2, sizeof e2);
            if (ns < 0) FAIL("seeds: %s", arg ? "takes no run name" : e2);
            e->nseeds = ns;
            e->seed = e->seeds[0];
        } else if (!strcmp(k, "steps") || !strcmp(k, "seed")) {
            unsigned long long x;
            char *end;
            errno = 0;
            x = strtoull(v, &end, 10);
            if (arg || *end || errno || !isdigit((unsigned char)*v) || (k[1] == 't' && (x < 1 || x > 100000000)))
                FAIL("%s: expected a whole number%s, got '%s'", k, k[1] == 't' ? " 1..100000000" : "", v);
            if (k[1] == 't') e->steps = (long)x;
            else { e->seed = e->seeds[0] = x; e->nseeds = 1; } /* the last seed or seeds line wins */
        } else if (!strcmp(k, "set")) {
            const char *bad;
            if (arg) FAIL("set: takes no run name (put per-run settings on the run line)");
            if (split_sets(v, &common, &ncommon, &bad)) FAIL("set: expected key=value words, got '%s'", bad);
        } else if (!strcmp(k, "baseline")) {
            if (arg || !good_name(v)) FAIL("baseline: expected a run name");
            strcpy(e->baseline, v);
        } else if (!strcmp(k, "run")) {
            if (!arg || !good_name(arg)) FAIL("expected `run NAME: POLICY [key=value ...]` with NAME of letters, digits, . _ + -");
            if (suite_find_run(e, arg)) FAIL("run '%s' is defined twice", arg);
            e->runs = realloc(e->runs, (size_t)(e->nruns + 1) * sizeof *e->runs);
            suite_run *r = &e->runs[e->nruns++];
            memset(r, 0, sizeof *r);
            strcpy(r->name, arg);
            r->line = ln;
            char *sp = v + strcspn(v, " \t");
            if (*sp) *sp++ = 0;
            if (strlen(v) >= sizeof r->policy) FAIL("policy name too long");
            strcpy(r->policy, v);
            const char *bad;
            /* the run's own settings; common ones are prepended at the end */
            if (split_sets(sp, &r->sets, &r->nsets, &bad)) FAIL("run %s: expected key=value words after the policy, got '%s'", arg, bad);
        } else if (!strcmp(k, "claim") || !strcmp(k, "expect")) {
            if (!arg || !good_name(arg)) FAIL("expected `%s RUN: ...`", k);
            int is_claim = k[0] == 'c';
            suite_expect **lst = is_claim ? &e->claims : &e->expects;
            int *cnt = is_claim ? &e->nclaims : &e->nexpects;
            *lst = realloc(*lst, (size_t)(*cnt + 1) * sizeof **lst);
            suite_expect *x = &(*lst)[(*cnt)++];
            memset(x, 0, sizeof *x);
            strcpy(x->run, arg);
            x->text = strdup(v);
            x->line = ln;
        } else {
            FAIL("unknown key '%s' (expected title, about, expected, model, steps, seed, seeds, set, baseline, run NAME, "
                 "claim RUN, expect RUN)", k);
        }
    }
    ln = 0;
    if (!e->model[0]) FAIL("no `model:` line");
    if (!e->nruns) FAIL("no `run NAME: POLICY` line");
    if (!e->baseline[0]) strcpy(e->baseline, e->runs[0].name);
    if (!suite_find_run(e, e->baseline)) FAIL("baseline '%s' is not one of the runs", e->baseline);
    if (!e->title) e->title = strdup(e->name);
    for (int i = 0; i < e->nclaims; i++) {
        ln = e->claims[i].line;
        if (!suite_find_run(e, e->claims[i].run)) FAIL("claim for '%s', which is not one of the runs", e->claims[i].run);
    }
    for (int i = 0; i < e->nexpects; i++) {
        ln = e->expects[i].line;
        if (!suite_find_run(e, e->expects[i].run)) FAIL("expect for '%s', which is not one of the runs", e->expects[i].run);
    }
    /* prepend the common settings, check every run with the engine's own
     * validation, and name its cache folder */
    for (int i = 0; i < e->nruns; i++) {
        suite_run *r = &e->runs[i];
        ln = r->line;
        char **all = NULL;
        int nall = 0;
        for (int j = 0; j < ncommon; j++) add_set(&all, &nall, common[j]);
        for (int j = 0; j < r->nsets; j++) { add_set(&all, &nall, r->sets[j]); free(r->sets[j]); }
        free(r->sets);
        r->sets = all;
        r->nsets = nall;
        r->ncommon = ncommon;
        trn_settings st;
        char e2[512];
        if (check_engine) {
            if (trn_settings_init(&st, e->model, r->policy, e2, sizeof e2)) FAIL("run %s: %s", r->name, e2);
            for (int j = 0; j < r->nsets; j++) {
                char kbuf[128];
                const char *eq = strchr(r->sets[j], '=');
                snprintf(kbuf, sizeof kbuf, "%.*s", (int)(eq - r->sets[j]), r->sets[j]);
                if (trn_settings_set(&st, kbuf, eq + 1, e2, sizeof e2)) FAIL("run %s: %s", r->name, e2);
            }
            if (trn_settings_check(&st, e2, sizeof e2)) FAIL("run %s: %s", r->name, e2);
        }
    }
    suite_set_seeds(e, e->seeds, e->nseeds);
    for (int j = 0; j < ncommon; j++) free(common[j]);
    free(common);
    free(text);
    return 0;
fail:
#undef FAIL
    for (int j = 0; j < ncommon; j++) free(common[j]);
    free(common);
    free(text);
    suite_free(e);
    return -1;
}

void suite_free(suite_exp *e) {
    for (int i = 0; i < e->nruns; i++) {
        for (int j = 0; j < e->runs[i].nsets; j++) free(e->runs[i].sets[j]);
        free(e->runs[i].sets);
    }
    free(e->runs);
    for (int i = 0; i < e->nclaims; i++) free(e->claims[i].text);
    for (int i = 0; i < e->nexpects; i++) free(e->expects[i].text);
    free(e->claims);
    free(e->expects);
    free(e->title);
    free(e->about);
    free(e->expected);
    memset(e, 0, sizeof *e);
}

const suite_run *suite_find_run(const suite_exp *e, const char *name) {
    for (int i = 0; i < e->nruns; i++)
        if (!strcmp(e->runs[i].name, name)) return &e->runs[i];
    return NULL;
}

const char *suite_claim(const suite_exp *e, const char *run) {
    for (int i = 0; i < e->nclaims; i++)
        if (!strcmp(e->claims[i].run, run)) return e->claims[i].text;
    return NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int suite_list(const char *path, char ***files, char *err, size_t errlen) {
    struct stat st;
    *files = NULL;
    if (stat(path, &st)) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    if (!S_ISDIR(st.st_mode)) {
        *files = malloc(sizeof **files);
        (*files)[0] = strdup(path);
        return 1;
    }
    DIR *d = opendir(path);
    if (!d) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || l < 5 || strcmp(de->d_name + l - 4, ".txt")) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, de->d_name);
        if (stat(p, &st) || !S_ISREG(st.st_mode)) continue;
        *files = realloc(*files, (size_t)(n + 1) * sizeof **files);
        (*files)[n++] = strdup(p);
    }
    closedir(d);
    if (n) qsort(*files, (size_t)n, sizeof **files, cmp_str);
    if (!n) { snprintf(err, errlen, "%s: no experiment definitions (*.txt)", path); return -1; }
    return n;
}

void suite_train_args(const suite_exp *e, const suite_run *r, int s, char *buf, size_t n) {
    size_t used;
    if (s >= 0 || e->nseeds == 1)
        used = (size_t)snprintf(buf, n, "--model %s --policy %s --steps %ld --seed %llu", e->model, r->policy, e->steps, e->seeds[s < 0 ? 0 : s]);
    else
        used = (size_t)snprintf(buf, n, "--model %s --policy %s --steps %ld --seed SEED", e->model, r->policy, e->steps);
    for (int j = 0; j < r->nsets && used < n; j++) used += (size_t)snprintf(buf + used, n - used, " --set %s", r->sets[j]);
    if (s < 0 && e->nseeds > 1)
        for (int j = 0; j < e->nseeds && used < n; j++) used += (size_t)snprintf(buf + used, n - used, "%s%llu", j ? " " : " (SEED: ", e->seeds[j]);
    if (s < 0 && e->nseeds > 1 && used < n) snprintf(buf + used, n - used, ")");
}
