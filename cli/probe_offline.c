/* SPDX-License-Identifier: MIT */
/* probe_offline.c: the black-box probe (emu/mma_probe.c) for a device that
 * is reachable only through files.
 *
 * The probe is adaptive: which dot product it asks next depends on the
 * answers so far. It runs here unchanged, against a callback that answers
 * from the recorded answers (every --answers file, or DIR/answers-*.txt).
 * When every question it asks is answered, its result is the online
 * probe's result. Otherwise a plan is written: the questions not yet
 * answered that the probe reaches when each unanswered question is
 * answered by a hypothesis, for each hypothesis of a fixed list (the
 * --model given, every preset that takes these formats, and variations of
 * the first block-FMA one: block 0,1,2,4,...,32 at its nfrac, nfrac q-1..q+3
 * at blocks 1, 2 and its own). The first
 * unanswered question on the device's own path is in every hypothesis's
 * run, so each round answers at least one more of the device's questions;
 * a device a hypothesis describes is done after one round. The plan
 * depends only on the options and the answers (deterministic: hypotheses in
 * a fixed order, questions in the order first asked). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "mma.h"
#include "probe_offline.h"

/* ---- options ------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap) break;
        char *nb = realloc(buf, cap * 2 + 1);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb, cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) { free(buf); if (!errno) errno = EIO; return NULL; }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

static int path_join(char *out, size_t len, const char *dir, const char *name) {
    return snprintf(out, len, "%s/%s", dir, name) >= (int)len ? -1 : 0;
}

int probe_offline_take(const char *sub, int *argc, char ***argvp, probe_offline_opts *po) {
    char **argv = *argvp;
    memset(po, 0, sizeof *po);
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *s = argv[i];
        const char **dst = NULL;
        if (!strcmp(s, "--plan")) dst = &po->plan;
        else if (!strcmp(s, "--state")) dst = &po->state;
        else if (!strcmp(s, "--save")) dst = &po->save;
        else if (!strcmp(s, "--answers")) {
            if (po->nanswers == PROBE_OFFLINE_MAX_ANSWERS)
                return cli_error(sub, "too many --answers files (at most %d)", PROBE_OFFLINE_MAX_ANSWERS);
            dst = &po->answers[po->nanswers++];
        }
        if (!dst) { argv[out++] = argv[i]; continue; }
        if (i + 1 >= *argc || !argv[i + 1][0]) return cli_error(sub, "%s needs a value", s);
        *dst = argv[++i];
        po->active = 1;
    }
    *argc = out;
    argv[out] = NULL;
    if (!po->state) return 0;
    char path[4096];
    if (path_join(path, sizeof path, po->state, "options")) return cli_error(sub, "--state %s: path too long", po->state);
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        if (errno == ENOENT) return 0; /* a new state folder: the options are stored by probe_offline_run */
        return cli_error(sub, "%s: cannot read: %s", path, strerror(errno));
    }
    /* one option per line */
    int n = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') n++;
    char **sv = calloc((size_t)n + 2, sizeof *sv);
    if (!sv) { free(text); return cli_error(sub, "out of memory"); }
    int sc = 0;
    sv[sc++] = argv[0];
    for (char *p = text, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl) { free(sv); free(text); return cli_error(sub, "%s: the last line is not complete (a damaged state folder?)", path); }
        *nl = 0;
        if (memchr(p, 0, (size_t)(nl - p))) break;
        sv[sc++] = p;
    }
    sv[sc] = NULL;
    if (*argc == 1) { /* nothing but offline options: continue with the stored ones */
        *argc = sc;
        *argvp = sv;
        po->from_state = 1;
        po->stored_argv = sv, po->stored_text = text; /* until probe_offline_release */
        return 0;
    }
    int same = *argc == sc;
    for (int i = 1; same && i < sc; i++) same = !strcmp(argv[i], sv[i]);
    if (!same) {
        char got[512] = "", want[512] = "";
        for (int i = 1, o = 0; i < *argc; i++) o += snprintf(got + o, o < (int)sizeof got ? sizeof got - (size_t)o : 0, "%s%s", i > 1 ? " " : "", argv[i]);
        for (int i = 1, o = 0; i < sc; i++) o += snprintf(want + o, o < (int)sizeof want ? sizeof want - (size_t)o : 0, "%s%s", i > 1 ? " " : "", sv[i]);
        free(sv), free(text);
        return cli_error(sub, "%s: this probe was started with '%s', not '%s' (give the same options, or none)", path, want, got);
    }
    free(sv), free(text);
    return 0;
}

void probe_offline_release(probe_offline_opts *po) {
    free(po->stored_argv), free(po->stored_text);
    po->stored_argv = NULL, po->stored_text = NULL;
}

/* ---- the question table ---------------------------------------------------- */

typedef struct {
    uint64_t h, c, d;
    int k, has_d;
    uint64_t *ab; /* a0 b0 a1 b1 ... */
    const char *file;
    long line;
} qent;

typedef struct {
    qent *e;
    size_t n, cap;
    size_t *slot; /* open addressing: index + 1, 0 = empty */
    size_t nslot;
} qtab;

static uint64_t qhash(int k, uint64_t c, const uint64_t *a, const uint64_t *b, const uint64_t *ab) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)k;
#define MIX(x) (h ^= (x), h *= 1099511628211ull, h ^= h >> 29)
    MIX(c);
    for (int i = 0; i < k; i++) {
        MIX(ab ? ab[2 * i] : a[i]);
        MIX(ab ? ab[2 * i + 1] : b[i]);
    }
#undef MIX
    return h;
}

static qent *qfind(const qtab *t, uint64_t h, int k, uint64_t c, const uint64_t *a, const uint64_t *b) {
    if (!t->nslot) return NULL;
    for (size_t s = h & (t->nslot - 1);; s = (s + 1) & (t->nslot - 1)) {
        if (!t->slot[s]) return NULL;
        qent *e = &t->e[t->slot[s] - 1];
        if (e->h != h || e->k != k || e->c != c) continue;
        int i = 0;
        while (i < k && e->ab[2 * i] == a[i] && e->ab[2 * i + 1] == b[i]) i++;
        if (i == k) return e;
    }
}

/* Add a question (a copy of a, b); NULL when out of memory. */
static qent *qadd(qtab *t, uint64_t h, int k, uint64_t c, const uint64_t *a, const uint64_t *b) {
    if (2 * (t->n + 1) > t->nslot) {
        size_t ns = t->nslot ? t->nslot * 2 : 1024;
        size_t *sl = calloc(ns, sizeof *sl);
        if (!sl) return NULL;
        for (size_t i = 0; i < t->n; i++) {
            size_t s = t->e[i].h & (ns - 1);
            while (sl[s]) s = (s + 1) & (ns - 1);
            sl[s] = i + 1;
        }
        free(t->slot);
        t->slot = sl, t->nslot = ns;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        qent *ne = realloc(t->e, nc * sizeof *ne);
        if (!ne) return NULL;
        t->e = ne, t->cap = nc;
    }
    qent *e = &t->e[t->n];
    memset(e, 0, sizeof *e);
    e->ab = malloc(((size_t)k * 2 + 1) * sizeof *e->ab);
    if (!e->ab) return NULL;
    for (int i = 0; i < k; i++) e->ab[2 * i] = a[i], e->ab[2 * i + 1] = b[i];
    e->h = h, e->k = k, e->c = c;
    size_t s = h & (t->nslot - 1);
    while (t->slot[s]) s = (s + 1) & (t->nslot - 1);
    t->slot[s] = ++t->n;
    return e;
}

static void qfree(qtab *t) {
    for (size_t i = 0; i < t->n; i++) free(t->e[i].ab);
    free(t->e), free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ---- answers files ----------------------------------------------------------- */

/* Read FILE's completed lines `C A0 B0 ... D` into t. Returns 0, or 2
 * after a message naming the file and line. */
static int load_answers(const char *sub, const char *file, const fpemu_mma_model *m, qtab *t, size_t *nlines) {
    FILE *f = fopen(file, "r");
    if (!f) return cli_error(sub, "%s: cannot read: %s", file, strerror(errno));
    const fpemu_format *fmts[4] = {m->fc, m->fa, m->fb, m->fd};
    const char *names[4] = {"C", "A", "B", "D"};
    char *line = NULL;
    size_t cap = 0, acap = 0;
    uint64_t *v = NULL;
    long lineno = 0;
    ssize_t len;
    int rc = 0;
    *nlines = 0;
    while ((errno = 0, len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) { rc = cli_error(sub, "%s:%ld: NUL byte in the line", file, lineno); break; }
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p || *p == '\n' || *p == '\r' || *p == '#') continue;
        size_t nf = 0;
        for (char *q = p;;) {
            while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n') q++;
            if (!*q) break;
            char *s = q;
            while (*q && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n') q++;
            if (nf == acap) {
                size_t nc = acap ? acap * 2 : 256;
                uint64_t *nv = realloc(v, nc * sizeof *nv);
                if (!nv) { rc = cli_error(sub, "%s:%ld: out of memory", file, lineno); goto out; }
                v = nv, acap = nc;
            }
            /* field roles are known only at the end (the last one is D): parse
             * every field as the widest, check each against its format below */
            if (cli_parse_hex(s, (size_t)(q - s), 16, ~UINT64_C(0), &v[nf])) {
                rc = cli_error(sub, "%s:%ld: field %zu '%.*s': expected a hex code", file, lineno, nf + 1,
                               (int)((q - s) > 40 ? 40 : (q - s)), s);
                goto out;
            }
            nf++;
        }
        if (nf < 2 || nf % 2) {
            rc = cli_error(sub, "%s:%ld: expected C A0 B0 ... A(k-1) B(k-1) D, as `fpemu mma` writes (got %zu fields%s)",
                           file, lineno, nf, nf % 2 ? ": an odd number, a plan line without its answer D?" : "");
            goto out;
        }
        for (size_t i = 0; i < nf; i++) {
            int role = i == 0 ? 0 : i == nf - 1 ? 3 : (i - 1) % 2 ? 2 : 1;
            if (v[i] > cli_code_max(fmts[role])) {
                rc = cli_error(sub, "%s:%ld: field %zu (%s) %llX: out of range for %s", file, lineno, i + 1, names[role],
                               (unsigned long long)v[i], fmts[role]->name);
                goto out;
            }
        }
        int k = (int)((nf - 2) / 2);
        /* split into a and b */
        uint64_t *a = malloc(((size_t)k + 1) * sizeof *a), *b = malloc(((size_t)k + 1) * sizeof *b);
        if (!a || !b) { free(a), free(b); rc = cli_error(sub, "%s:%ld: out of memory", file, lineno); goto out; }
        for (int i = 0; i < k; i++) a[i] = v[1 + 2 * i], b[i] = v[2 + 2 * i];
        uint64_t h = qhash(k, v[0], a, b, NULL), d = v[nf - 1];
        qent *e = qfind(t, h, k, v[0], a, b);
        if (e && e->d != d) {
            rc = cli_error(sub, "%s:%ld: D = %llX, but %s:%ld answered the same question with %llX (a nondeterministic "
                           "device, or lines from another device or formats)", file, lineno, (unsigned long long)d, e->file,
                           e->line, (unsigned long long)e->d);
        } else if (!e) {
            if (!(e = qadd(t, h, k, v[0], a, b))) rc = cli_error(sub, "%s:%ld: out of memory", file, lineno);
            else e->d = d, e->has_d = 1, e->file = file, e->line = lineno;
        }
        free(a), free(b);
        if (rc) goto out;
        (*nlines)++;
    }
    if (len < 0 && ferror(f)) rc = cli_error(sub, "%s:%ld: cannot read: %s", file, lineno + 1, strerror(errno ? errno : EIO));
out:
    free(line), free(v);
    fclose(f);
    return rc;
}

/* ---- replay ------------------------------------------------------------------ */

typedef struct {
    const qtab *known;
    qtab *plan;                 /* unanswered questions are added here (NULL: not recorded) */
    const fpemu_mma_model *hyp; /* answers the unanswered ones (NULL: 0) */
    long missing;
    int oom;
} replay;

static int replay_bb(void *user, const uint64_t *a, const uint64_t *b, int k, uint64_t c, uint64_t *d) {
    replay *r = user;
    uint64_t h = qhash(k, c, a, b, NULL);
    const qent *e = qfind(r->known, h, k, c, a, b);
    if (e) { *d = e->d; return 0; }
    r->missing++;
    if (r->plan && !qfind(r->plan, h, k, c, a, b) && !qadd(r->plan, h, k, c, a, b)) r->oom = 1;
    *d = r->hyp ? fpemu_mma_dot(r->hyp, a, b, (size_t)k, c, NULL) : 0;
    return 0;
}

/* The hypotheses, in a fixed order: the prior, the presets that take these
 * formats, and a grid of block-FMA models. */
static int hypotheses(const fpemu_mma_model *m, int have_prior, fpemu_mma_model **out) {
    static const int blocks[] = {0, 1, 2, 4, 8, 16, 32};
    int cap = 16 + 10 * 5, n = 0;
    fpemu_mma_model *h = calloc((size_t)cap, sizeof *h), base;
    if (!h) return -1;
    int have_base = 0;
    if (have_prior) h[n++] = *m;
    for (int i = 0; fpemu_mma_preset_names[i] && n < 16; i++)
        if (!fpemu_mma_model_preset(&h[n], fpemu_mma_preset_names[i], m->fa, m->fb, m->fc, m->fd, NULL, 0)) n++;
    for (int i = 0; i < n && !have_base; i++)
        if (h[i].kind == FPEMU_MMA_KIND_BLOCK && h[i].norm == FPEMU_MMA_NORM_END) base = h[i], have_base = 1;
    if (!have_base && !fpemu_mma_model_preset(&base, "exact", m->fa, m->fb, m->fc, m->fd, NULL, 0)) {
        base.kind = FPEMU_MMA_KIND_BLOCK, base.align = FPEMU_MMA_ALIGN_RZ, base.out_round = FPEMU_RTZ;
        base.nfrac = base.out_mant + 1;
        have_base = !fpemu_mma_model_finish(&base, NULL, 0);
    }
    if (have_base) { /* every block size at the base's nfrac; nfrac q-1..q+3 at blocks 1, 2 and the base's */
        int q = base.out_mant;
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0] + 3; bi++)
            for (int nf = q - 1; nf <= q + 3; nf++) {
                int blk = bi < sizeof blocks / sizeof blocks[0] ? blocks[bi] : bi == sizeof blocks / sizeof blocks[0] ? 1 : bi == sizeof blocks / sizeof blocks[0] + 1 ? 2 : base.block;
                if (bi < sizeof blocks / sizeof blocks[0] && nf != base.nfrac) continue;
                if (nf < 1 || nf > 60) continue;
                fpemu_mma_model g = base;
                g.block = blk, g.nfrac = nf;
                if (!fpemu_mma_model_finish(&g, NULL, 0)) h[n++] = g;
            }
    }
    *out = h;
    return n;
}

/* ---- writing ------------------------------------------------------------------ */

static int write_plan(const char *path, const fpemu_mma_model *m, const qtab *plan, int round, const char *how) {
    cli_atomic a;
    if (cli_atomic_open(&a, path, "w")) return -1;
    int dc = fpemu_format_hex_digits(m->fc), da = fpemu_format_hex_digits(m->fa), db = fpemu_format_hex_digits(m->fb);
    fprintf(a.f, "# fpemu probe plan, round %d: %zu lines `C A0 B0 A1 B1 ...` (%s x %s, c %s, d %s);\n"
                 "# answer each as `fpemu mma` does (the line with D appended), then %s\n",
            round, plan->n, m->fa->name, m->fb->name, m->fc->name, m->fd->name, how);
    for (size_t i = 0; i < plan->n; i++) {
        const qent *e = &plan->e[i];
        fprintf(a.f, "%0*llX", dc, (unsigned long long)e->c);
        for (int j = 0; j < e->k; j++)
            fprintf(a.f, " %0*llX %0*llX", da, (unsigned long long)e->ab[2 * j], db, (unsigned long long)e->ab[2 * j + 1]);
        fputc('\n', a.f);
    }
    return cli_atomic_close(&a, !ferror(a.f));
}

static int in_list(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !strncmp(p, name, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* The model the result describes: a base (the prior when the result
 * matches it or names no preset, else the first preset matched, else the
 * first block-FMA preset that takes these formats) with the inferred
 * parameters set. Returns 0, or -1 with a message. */
static int result_model(const fpemu_mma_probe_result *r, const fpemu_mma_model *m, int have_prior, fpemu_mma_model *out,
                        char *base, size_t blen, char *err, size_t errlen) {
    const char *pick = NULL;
    char first[32] = "";
    if (strcmp(r->matches, "none")) {
        const char *c = strchr(r->matches, ',');
        snprintf(first, sizeof first, "%.*s", c ? (int)(c - r->matches) : (int)strlen(r->matches), r->matches);
        pick = have_prior && in_list(r->matches, m->name) ? m->name : first;
    }
    int unbounded = r->nfrac < 0;
    if (!pick && unbounded) pick = r->block == 1 ? "fma-seq" : "exact";
    if (!pick && have_prior && m->kind == FPEMU_MMA_KIND_BLOCK) pick = m->name;
    for (int i = 0; !pick && fpemu_mma_preset_names[i]; i++) {
        fpemu_mma_model t;
        if (!fpemu_mma_model_preset(&t, fpemu_mma_preset_names[i], m->fa, m->fb, m->fc, m->fd, NULL, 0) &&
            t.kind == FPEMU_MMA_KIND_BLOCK)
            pick = fpemu_mma_preset_names[i];
    }
    if (!pick) { snprintf(err, errlen, "no block-FMA preset takes %s x %s to base the model on", m->fa->name, m->fb->name); return -1; }
    snprintf(base, blen, "%s", pick);
    if (have_prior && !strcmp(pick, m->name)) *out = *m; /* keeps the prior's --set options */
    else if (fpemu_mma_model_preset(out, pick, m->fa, m->fb, m->fc, m->fd, err, errlen)) return -1;
    if (!strcmp(r->out_round, "?") || !strcmp(r->align_round, "?") || !strcmp(r->normalize, "?") || !strcmp(r->subnormals, "?")) {
        snprintf(err, errlen, "the probe did not infer every parameter (ok=0)");
        return -1;
    }
    static const char *rmap[][2] = {{"rz", "rtz"}, {"rne", "rne"}, {"rna", "rna"}, {"ru", "rup"}, {"rd", "rdn"}, {"rto", "rto"}};
    const char *orr = NULL;
    for (size_t i = 0; i < sizeof rmap / sizeof rmap[0]; i++)
        if (!strcmp(r->out_round, rmap[i][0])) orr = rmap[i][1];
    char num[24];
    const char *sets[8][2];
    int ns = 0;
    sets[ns][0] = "out_round", sets[ns++][1] = orr ? orr : r->out_round;
    snprintf(num, sizeof num, "%d", r->out_mant);
    sets[ns][0] = "out_mant", sets[ns++][1] = num;
    sets[ns][0] = "subnormals", sets[ns++][1] = r->subnormals;
    char nb[24], nn[24];
    if (out->kind == FPEMU_MMA_KIND_BLOCK && !unbounded) {
        if (strcmp(r->align_round, "rz") && strcmp(r->align_round, "rd")) {
            snprintf(err, errlen, "alignment rounding %s: the model has rz and rd only", r->align_round);
            return -1;
        }
        snprintf(nb, sizeof nb, "%d", r->block);
        snprintf(nn, sizeof nn, "%d", r->nfrac);
        sets[ns][0] = "block", sets[ns++][1] = nb;
        sets[ns][0] = "nfrac", sets[ns++][1] = nn;
        sets[ns][0] = "align", sets[ns++][1] = r->align_round;
        sets[ns][0] = "normalize", sets[ns++][1] = r->normalize;
        sets[ns][0] = "chain", sets[ns++][1] = "rounded";
    } else if (out->kind == FPEMU_MMA_KIND_BLOCK || !unbounded) {
        snprintf(err, errlen, "the result (block=%d, nfrac=%d) does not fit preset %s", r->block, r->nfrac, pick);
        return -1;
    }
    for (int i = 0; i < ns; i++) {
        char e2[256];
        if (fpemu_mma_model_set(out, sets[i][0], sets[i][1], e2, sizeof e2)) {
            snprintf(err, errlen, "%s=%s: %s", sets[i][0], sets[i][1], e2);
            return -1;
        }
    }
    return 0;
}

/* The model as a preset file (emu/mma_preset.c's format), named as probed. */
static int save_preset(FILE *f, const fpemu_mma_model *m0, const char *base, size_t nanswers, int rounds) {
    fpemu_mma_model m = *m0;
    snprintf(m.name, sizeof m.name, "probed");
    snprintf(m.device, sizeof m.device, "probed offline (base %.24s)", base);
    snprintf(m.status, sizeof m.status, "probed offline: %zu answers, %d round%s", nanswers, rounds, rounds == 1 ? "" : "s");
    snprintf(m.source, sizeof m.source,
             "fpemu probe (block nfrac align normalize out_round out_mant subnormals); the other keys from preset %s", base);
    int n = fpemu_mma_model_format(&m, NULL, 0);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!buf) { errno = ENOMEM; return -1; }
    fpemu_mma_model_format(&m, buf, (size_t)n + 1);
    fputs(buf, f);
    free(buf);
    return ferror(f) ? -1 : 0;
}

/* ---- the command ------------------------------------------------------------- */

static int count_answers(const char *dir) {
    int n = 0;
    for (;; n++) {
        char name[64], path[4096];
        struct stat st;
        snprintf(name, sizeof name, "answers-%d.txt", n + 1);
        if (path_join(path, sizeof path, dir, name) || stat(path, &st)) break;
    }
    return n;
}

static int copy_file(const char *from, const char *to) {
    size_t len;
    char *text = read_file(from, &len);
    if (!text) return -1;
    cli_atomic a;
    if (cli_atomic_open(&a, to, "w")) { free(text); return -1; }
    fwrite(text, 1, len, a.f);
    free(text);
    return cli_atomic_close(&a, !ferror(a.f));
}

int probe_offline_run(const char *sub, const probe_offline_opts *po, const fpemu_mma_model *m, int have_prior, int kmax,
                      int argc, char **argv) {
    char path[4096];
    const char *files[PROBE_OFFLINE_MAX_ANSWERS + 1];
    int nfiles = 0, rc = 0;
    static char names[PROBE_OFFLINE_MAX_ANSWERS][4096];
    if (po->state) {
        if (mkdir(po->state, 0777) && errno != EEXIST) return cli_error(sub, "--state %s: cannot create: %s", po->state, strerror(errno));
        if (path_join(path, sizeof path, po->state, "options")) return cli_error(sub, "--state %s: path too long", po->state);
        if (!po->from_state) { /* store (or rewrite, the same) options */
            cli_atomic a;
            if (cli_atomic_open(&a, path, "w")) return cli_error(sub, "%s: cannot write: %s", path, strerror(errno));
            for (int i = 1; i < argc; i++) fprintf(a.f, "%s\n", argv[i]);
            if (cli_atomic_close(&a, !ferror(a.f))) return cli_error(sub, "%s: cannot write: %s", path, strerror(errno));
        }
    }
    if (!po->state && !po->nanswers && !po->plan)
        return cli_error(sub, "the offline probe needs --plan FILE, --answers FILE or --state DIR");
    if (po->save && !po->nanswers && !po->state) return cli_error(sub, "--save needs the device's answers (--answers FILE)");
    qtab known = {0}, plan = {0};
    size_t nl, nanswered = 0;
    int stored = po->state ? count_answers(po->state) : 0;
    for (int i = 0; i < stored; i++) {
        char name[64];
        snprintf(name, sizeof name, "answers-%d.txt", i + 1);
        path_join(names[nfiles], sizeof names[0], po->state, name);
        files[nfiles] = names[nfiles];
        if ((rc = load_answers(sub, files[nfiles], m, &known, &nl))) goto out;
        nanswered += nl;
        nfiles++;
    }
    /* the new answers are checked (format, agreement with the earlier
     * ones) before they join the state folder */
    for (int i = 0; i < po->nanswers; i++) {
        if ((rc = load_answers(sub, po->answers[i], m, &known, &nl))) goto out;
        if (!nl) fprintf(stderr, "fpemu %s: %s: no answered lines (the device's output is expected)\n", sub, po->answers[i]);
        nanswered += nl;
        if (po->state) {
            char name[64];
            snprintf(name, sizeof name, "answers-%d.txt", stored + i + 1);
            path_join(names[nfiles], sizeof names[0], po->state, name);
        }
        files[nfiles++] = po->answers[i];
    }
    for (int i = stored; po->state && i < nfiles; i++) {
        if (copy_file(files[i], names[i])) {
            rc = cli_error(sub, "%s -> %s: cannot copy: %s", files[i], names[i], strerror(errno));
            goto out;
        }
        files[i] = names[i];
    }
    int round = nfiles + 1;

    /* the device's own path */
    replay rp = {.known = &known};
    fpemu_mma_probe_result r;
    int prc = fpemu_mma_probe(replay_bb, &rp, m->fa, m->fb, m->fc, m->fd, kmax, &r);
    if (!rp.missing) {
        if (prc) { rc = cli_error(sub, "the probe could not run on these answers (%s)", r.note); goto out; }
        char buf[2048];
        fpemu_mma_probe_format(&r, buf, sizeof buf);
        printf("status=done\nrounds=%d\nanswered=%zu\n%s", nfiles, nanswered, buf);
        if (po->state) {
            path_join(path, sizeof path, po->state, "result.txt");
            cli_atomic a;
            if (cli_atomic_open(&a, path, "w")) { rc = cli_error(sub, "%s: cannot write: %s", path, strerror(errno)); goto out; }
            fputs(buf, a.f);
            if (cli_atomic_close(&a, !ferror(a.f))) { rc = cli_error(sub, "%s: cannot write: %s", path, strerror(errno)); goto out; }
        }
        fpemu_mma_model sm;
        char base[32], err[512];
        int have_model = !result_model(&r, m, have_prior, &sm, base, sizeof base, err, sizeof err);
        if (!have_model) fprintf(stderr, "fpemu %s: note: no model (and no preset file) for this result: %s\n", sub, err);
        if (have_model) {
            /* the saved model must give every recorded answer */
            size_t agree = 0;
            for (size_t i = 0; i < known.n; i++) {
                const qent *e = &known.e[i];
                uint64_t a[512], b[512];
                if (e->k > 512) continue;
                for (int j = 0; j < e->k; j++) a[j] = e->ab[2 * j], b[j] = e->ab[2 * j + 1];
                agree += fpemu_mma_dot(&sm, a, b, (size_t)e->k, e->c, NULL) == e->d;
            }
            printf("preset_base=%s\npreset_agrees=%zu/%zu\n", base, agree, known.n);
            if (agree != known.n)
                fprintf(stderr, "fpemu %s: note: the model of these parameters (on %s) gives %zu of the %zu recorded answers\n",
                        sub, base, agree, known.n);
        }
        if (po->save) {
            if (!have_model) { rc = cli_error(sub, "--save %s: %s", po->save, err); goto out; }
            cli_atomic a;
            if (cli_atomic_open(&a, po->save, "w")) { rc = cli_error(sub, "%s: cannot write: %s", po->save, strerror(errno)); goto out; }
            fprintf(a.f, "# fpemu preset file: inferred by the offline probe (fpemu probe) from %zu answers in %d round%s;\n"
                         "# probed: block nfrac align normalize out_round out_mant subnormals (matches=%s);\n"
                         "# taken from preset %s: the other keys\n",
                    nanswered, nfiles, nfiles == 1 ? "" : "s", r.matches, base);
            save_preset(a.f, &sm, base, nanswered, nfiles);
            if (cli_atomic_close(&a, !ferror(a.f))) { rc = cli_error(sub, "%s: cannot write: %s", po->save, strerror(errno)); goto out; }
            printf("preset=%s\n", po->save);
        }
        fprintf(stderr, "fpemu %s: offline probe done after %d round%s (%zu answered lines): matches %s%s%s\n", sub, nfiles,
                nfiles == 1 ? "" : "s", nanswered, r.matches, po->save ? "; preset written to " : "", po->save ? po->save : "");
        goto out;
    }

    /* more questions: the plan of every hypothesis's path */
    if (!po->plan && !po->state) {
        rc = cli_error(sub, "the answers do not cover the probe yet: give --plan FILE for round %d's questions", round);
        goto out;
    }
    fpemu_mma_model *hyp = NULL;
    int nh = hypotheses(m, have_prior, &hyp);
    if (nh < 0) { rc = cli_error(sub, "out of memory"); goto out; }
    for (int i = 0; i < (nh > 0 ? nh : 1); i++) {
        replay hr = {.known = &known, .plan = &plan, .hyp = nh > 0 ? &hyp[i] : NULL};
        fpemu_mma_probe(replay_bb, &hr, m->fa, m->fb, m->fc, m->fd, kmax, &r);
        if (hr.oom) { free(hyp); rc = cli_error(sub, "out of memory"); goto out; }
    }
    free(hyp);
    char cont[4096 + 256], sp[4096];
    const char *out_plan = po->plan;
    if (po->state) {
        char name[64];
        snprintf(name, sizeof name, "plan-%d.txt", round);
        path_join(sp, sizeof sp, po->state, name);
        snprintf(cont, sizeof cont, "fpemu probe --state %s --answers ANSWERS", po->state);
        if (write_plan(sp, m, &plan, round, cont)) { rc = cli_error(sub, "%s: cannot write: %s", sp, strerror(errno)); goto out; }
        if (!out_plan) out_plan = sp;
    } else {
        int o = snprintf(cont, sizeof cont, "fpemu probe");
        for (int i = 1; i < argc && o < (int)sizeof cont; i++) o += snprintf(cont + o, sizeof cont - (size_t)o, " %s", argv[i]);
        for (int i = 0; i < nfiles && o < (int)sizeof cont; i++)
            o += snprintf(cont + o, sizeof cont - (size_t)o, " --answers %s", files[i]);
        if (o < (int)sizeof cont) snprintf(cont + o, sizeof cont - (size_t)o, " --answers ANSWERS --plan NEXT");
    }
    if (po->plan && write_plan(po->plan, m, &plan, round, cont)) {
        rc = cli_error(sub, "%s: cannot write: %s", po->plan, strerror(errno));
        goto out;
    }
    printf("status=plan\nround=%d\nplan=%s\nlines=%zu\nanswered=%zu\n", round, out_plan, plan.n, nanswered);
    fprintf(stderr, "fpemu %s: round %d: %zu questions in %s; run them on the device (`fpemu mma` lines: the line with D\n"
                    "appended), then: %s\n",
            sub, round, plan.n, out_plan, cont);
out:
    qfree(&known), qfree(&plan);
    return rc;
}
