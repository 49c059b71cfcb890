/* SPDX-License-Identifier: MIT */
/* cmd_compare.c: `fpemu compare RUN TRACE`: an fpemu run folder against a
 * trace of a real training run (docs/replay.md): the loss step by step in
 * f32 ulps, the loss-scale and skip sequences, the gradient norms, and the
 * final evaluation. `--as-run DIR` writes the trace as a run folder that
 * `fpemu report` draws beside fpemu's own.
 *
 * A trace is the CSV gpu/torch/record_runs.py writes ("fpemu-trace 1":
 * '#' metadata lines, then step,loss,scale,skipped,grad_norm), or one run
 * of a traces.json of the earlier recordings (`--key MODEL/POLICY/REP`).
 * Exit status: 0 every compared step bit-identical, 1 a difference (a
 * normal outcome), 2 bad input. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "cli.h"
#include "csv.h"
#include "train.h"

#define SUB "compare"
#define META_MAX 32

/* One side: per-step f32 values (1-based step i at index i - 1). */
typedef struct {
    const char *path;
    long n;
    float *loss, *scale, *gn;
    int *skip;
    int have_scale, have_skip, have_gn, have_eval;
    float eval_loss, eval_acc;
    long eval_step;                 /* the run's last evaluation (0: none); a trace's is its last step */
    char model[64], policy[64];
    int nmeta;
    char meta_k[META_MAX][64], meta_v[META_MAX][256];
    uint32_t crc;
} series;

static void series_free(series *s) { free(s->loss); free(s->scale); free(s->gn); free(s->skip); }

static int series_alloc(series *s, long n) {
    size_t k = (size_t)(n ? n : 1);
    s->n = n;
    s->loss = calloc(k, sizeof(float)); s->scale = calloc(k, sizeof(float)); s->gn = calloc(k, sizeof(float));
    s->skip = calloc(k, sizeof(int));
    return s->loss && s->scale && s->gn && s->skip ? 0 : -1;
}

static const char *meta_get(const series *s, const char *k) {
    for (int i = 0; i < s->nmeta; i++) if (!strcmp(s->meta_k[i], k)) return s->meta_v[i];
    return NULL;
}

/* A number as the tools write them (csv_num's forms), as the f32 it names:
 * parsed by strtof, so any decimal that round-trips an f32 reads back to
 * its bits. 0, or -1. */
static int parse_f32(const char *s, float *out) {
    double d;
    if (csv_num(s, &d)) return -1;
    if (isnan(d) || isinf(d)) { *out = (float)d; return 0; }
    errno = 0;
    *out = strtof(s, NULL);
    return 0;
}

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static int same_f32(float a, float b) { return (isnan(a) && isnan(b)) || f32_bits(a) == f32_bits(b); }
/* The distance in f32 ulps (the number of f32 values between them, plus
 * one); -1 when one is NaN and the other is not. */
static int64_t ulps(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : -1;
    uint32_t ua = f32_bits(a), ub = f32_bits(b);
    int64_t ka = ua >> 31 ? -(int64_t)(ua & 0x7FFFFFFFu) : (int64_t)ua, kb = ub >> 31 ? -(int64_t)(ub & 0x7FFFFFFFu) : (int64_t)ub;
    return ka > kb ? ka - kb : kb - ka;
}

/* ---- the trace: CSV -------------------------------------------------------- */

static const char *const TRACE_COLS[] = {"step", "loss", "scale", "skipped", "grad_norm"};

static int trace_csv(series *t, const char *path, char *buf, size_t len) {
    long line = 0;
    char *p = buf, *end = buf + len;
    int cols[5] = {-1, -1, -1, -1, -1}, ncol = 0;
    int version_seen = 0;
    long cap = 0, n = 0;
    /* metadata, then the header */
    for (;;) {
        if (p >= end) return cli_error(SUB, "%s: no header line (expected step,loss,scale,skipped,grad_norm)", path);
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        line++;
        if (le > p && le[-1] == '\r') le[-1] = 0;
        *le = 0;
        char *l = p;
        p = nl ? nl + 1 : end;
        if (line == 1) {
            if (strncmp(l, "# fpemu-trace ", 14))
                return cli_error(SUB, "%s:1: expected '# fpemu-trace 1' (a trace as gpu/torch/record_runs.py writes it; a traces.json "
                                      "needs --key MODEL/POLICY/REP)", path);
            if (strcmp(l + 14, "1")) return cli_error(SUB, "%s:1: trace format version '%s', this fpemu reads version 1", path, l + 14);
            version_seen = 1;
            continue;
        }
        if (l[0] == '#') {
            char *c = strstr(l, ": ");
            if (!c || t->nmeta == META_MAX) continue; /* a comment */
            char *k = l + 1;
            while (*k == ' ') k++;
            *c = 0;
            if (!*k || strlen(k) >= sizeof t->meta_k[0] || strlen(c + 2) >= sizeof t->meta_v[0])
                return cli_error(SUB, "%s:%ld: a metadata line '# KEY: VALUE' with a key of 1..63 and a value of at most 255 bytes", path, line);
            for (int i = 0; i < t->nmeta; i++)
                if (!strcmp(t->meta_k[i], k)) return cli_error(SUB, "%s:%ld: metadata key '%s' given twice", path, line, k);
            snprintf(t->meta_k[t->nmeta], sizeof t->meta_k[0], "%s", k);
            snprintf(t->meta_v[t->nmeta], sizeof t->meta_v[0], "%s", c + 2);
            t->nmeta++;
            continue;
        }
        /* the header */
        for (char *f = l;; ncol++) {
            char *comma = strchr(f, ',');
            if (comma) *comma = 0;
            int k;
            for (k = 0; k < 5; k++) if (!strcmp(f, TRACE_COLS[k])) break;
            if (k == 5) return cli_error(SUB, "%s:%ld: unknown column '%s' (expected step, loss, scale, skipped, grad_norm)", path, line, f);
            if (cols[k] >= 0) return cli_error(SUB, "%s:%ld: column '%s' given twice", path, line, f);
            cols[k] = ncol;
            if (!comma) { ncol++; break; }
            f = comma + 1;
        }
        if (cols[0] < 0 || cols[1] < 0) return cli_error(SUB, "%s:%ld: the header must name the columns step and loss", path, line);
        break;
    }
    (void)version_seen;
    t->have_scale = cols[2] >= 0; t->have_skip = cols[3] >= 0; t->have_gn = cols[4] >= 0;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        line++;
        if (le > p && le[-1] == '\r') le[-1] = 0;
        *le = 0;
        char *l = p;
        p = nl ? nl + 1 : end;
        if (!*l) {
            if (p < end) return cli_error(SUB, "%s:%ld: an empty line before the end of the file", path, line);
            break;
        }
        char *f[8];
        int nf = 0;
        for (char *q = l;;) {
            if (nf < 8) f[nf] = q;
            nf++;
            char *comma = strchr(q, ',');
            if (!comma) break;
            *comma = 0;
            q = comma + 1;
        }
        if (nf != ncol) return cli_error(SUB, "%s:%ld: %d fields, the header has %d", path, line, nf, ncol);
        if (n == cap) {
            long nc = cap ? cap * 2 : 1024;
            float *a = realloc(t->loss, (size_t)nc * sizeof(float)), *b = a ? realloc(t->scale, (size_t)nc * sizeof(float)) : NULL;
            if (a) t->loss = a;
            if (b) t->scale = b;
            float *c = b ? realloc(t->gn, (size_t)nc * sizeof(float)) : NULL;
            if (c) t->gn = c;
            int *d = c ? realloc(t->skip, (size_t)nc * sizeof(int)) : NULL;
            if (!d) return cli_error(SUB, "%s: out of memory", path);
            t->skip = d;
            cap = nc;
        }
        unsigned long long st;
        if (cli_parse_u64(f[cols[0]], &st) || st != (unsigned long long)n + 1)
            return cli_error(SUB, "%s:%ld: step '%s', expected %ld (steps 1, 2, 3, ... in order)", path, line, f[cols[0]], n + 1);
        if (parse_f32(f[cols[1]], &t->loss[n])) return cli_error(SUB, "%s:%ld: loss '%s' is not a number", path, line, f[cols[1]]);
        t->scale[n] = 1; t->skip[n] = 0; t->gn[n] = NAN;
        if (cols[2] >= 0 && parse_f32(f[cols[2]], &t->scale[n])) return cli_error(SUB, "%s:%ld: scale '%s' is not a number", path, line, f[cols[2]]);
        if (cols[3] >= 0) {
            const char *v = f[cols[3]];
            if (strcmp(v, "0") && strcmp(v, "1")) return cli_error(SUB, "%s:%ld: skipped '%s', expected 0 or 1", path, line, v);
            t->skip[n] = v[0] == '1';
        }
        if (cols[4] >= 0 && parse_f32(f[cols[4]], &t->gn[n])) return cli_error(SUB, "%s:%ld: grad_norm '%s' is not a number", path, line, f[cols[4]]);
        n++;
    }
    if (!n) return cli_error(SUB, "%s: no steps (expected rows after the header)", path);
    t->n = n;
    const char *el = meta_get(t, "eval_loss"), *ea = meta_get(t, "eval_accuracy");
    if (el || ea) {
        if (!el || !ea) return cli_error(SUB, "%s: metadata eval_loss and eval_accuracy come together", path);
        if (parse_f32(el, &t->eval_loss)) return cli_error(SUB, "%s: eval_loss '%s' is not a number", path, el);
        if (parse_f32(ea, &t->eval_acc)) return cli_error(SUB, "%s: eval_accuracy '%s' is not a number", path, ea);
        t->have_eval = 1;
        t->eval_step = n;
    }
    const char *m = meta_get(t, "model"), *po = meta_get(t, "policy");
    if (m) snprintf(t->model, sizeof t->model, "%.63s", m);
    if (po) snprintf(t->policy, sizeof t->policy, "%.63s", po);
    return 0;
}

/* ---- the trace: traces.json (--key) ---------------------------------------- */

/* Python's json writes inf and NaN as the bare words Infinity, -Infinity
 * and NaN, which JSON (and cJSON) does not have: outside strings they
 * become 1e999, -1e999 (strtod's inf) and the string "NaN". */
static char *json_py_fix(const char *s, size_t n) {
    char *o = malloc(n * 2 + 16);
    if (!o) return NULL;
    size_t k = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            o[k++] = c;
            if (c == '\\' && i + 1 < n) o[k++] = s[++i];
            else if (c == '"') in_str = 0;
            continue;
        }
        if (c == '"') { in_str = 1; o[k++] = c; continue; }
        if (!strncmp(s + i, "Infinity", 8) && n - i >= 8) { memcpy(o + k, "1e999", 5); k += 5; i += 7; continue; }
        if (!strncmp(s + i, "NaN", 3) && n - i >= 3) { memcpy(o + k, "\"NaN\"", 5); k += 5; i += 2; continue; }
        o[k++] = c;
    }
    o[k] = 0;
    return o;
}

static int json_f32(const cJSON *v, float *out) {
    if (cJSON_IsNumber(v)) { *out = (float)v->valuedouble; return 0; }
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "NaN")) { *out = NAN; return 0; }
    return -1;
}

static int trace_json(series *t, const char *path, const char *buf, size_t len, const char *key) {
    char *fixed = json_py_fix(buf, len);
    if (!fixed) return cli_error(SUB, "%s: out of memory", path);
    cJSON *doc = cJSON_ParseWithOpts(fixed, NULL, 1);
    free(fixed);
    int rc = 2;
    if (!cJSON_IsObject(doc)) { cli_error(SUB, "%s: not one JSON object (expected a traces.json: {\"MODEL/POLICY/REP\": {...}})", path); goto out; }
    if (!key) {
        char keys[600] = "";
        size_t u = 0;
        for (const cJSON *c = doc->child; c && u < sizeof keys - 80; c = c->next) u += (size_t)snprintf(keys + u, sizeof keys - u, " %s", c->string);
        cli_error(SUB, "%s: a traces.json holds several runs: name one with --key (it has:%s)", path, keys);
        goto out;
    }
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(doc, key);
    if (!cJSON_IsObject(r)) { cli_error(SUB, "%s: no run '%s' (--key MODEL/POLICY/REP)", path, key); goto out; }
    const char *names[4] = {"loss", "scale", "skipped", "grad_norm"};
    const cJSON *arr[4];
    for (int i = 0; i < 4; i++) {
        arr[i] = cJSON_GetObjectItemCaseSensitive(r, names[i]);
        if (!cJSON_IsArray(arr[i])) { cli_error(SUB, "%s: %s: no array \"%s\"", path, key, names[i]); goto out; }
    }
    long n = cJSON_GetArraySize(arr[0]);
    if (n < 1) { cli_error(SUB, "%s: %s: no steps", path, key); goto out; }
    for (int i = 1; i < 4; i++)
        if (cJSON_GetArraySize(arr[i]) != n) { cli_error(SUB, "%s: %s: \"%s\" has %d entries, \"loss\" %ld", path, key, names[i], cJSON_GetArraySize(arr[i]), n); goto out; }
    if (series_alloc(t, n)) { cli_error(SUB, "%s: out of memory", path); goto out; }
    const cJSON *e[4] = {arr[0]->child, arr[1]->child, arr[2]->child, arr[3]->child};
    for (long s = 0; s < n; s++) {
        float sk;
        if (json_f32(e[0], &t->loss[s]) || json_f32(e[1], &t->scale[s]) || json_f32(e[2], &sk) || json_f32(e[3], &t->gn[s]) ||
            (sk != 0 && sk != 1)) {
            cli_error(SUB, "%s: %s: step %ld: expected numbers (skipped 0 or 1)", path, key, s + 1);
            goto out;
        }
        t->skip[s] = sk == 1;
        for (int i = 0; i < 4; i++) e[i] = e[i]->next;
    }
    t->have_scale = t->have_skip = t->have_gn = 1;
    const cJSON *el = cJSON_GetObjectItemCaseSensitive(r, "eval_loss"), *ea = cJSON_GetObjectItemCaseSensitive(r, "eval_acc");
    if (el && ea) {
        if (json_f32(el, &t->eval_loss) || json_f32(ea, &t->eval_acc)) { cli_error(SUB, "%s: %s: eval_loss and eval_acc must be numbers", path, key); goto out; }
        t->have_eval = 1;
        t->eval_step = n;
    }
    /* MODEL/POLICY/REP */
    const char *s1 = strchr(key, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (s1) snprintf(t->model, sizeof t->model, "%.*s", (int)(s1 - key < 63 ? s1 - key : 63), key);
    if (s1 && s2) snprintf(t->policy, sizeof t->policy, "%.*s", (int)(s2 - s1 - 1 < 63 ? s2 - s1 - 1 : 63), s1 + 1);
    snprintf(t->meta_k[0], sizeof t->meta_k[0], "key");
    snprintf(t->meta_v[0], sizeof t->meta_v[0], "%.255s", key);
    t->nmeta = 1;
    rc = 0;
out:
    cJSON_Delete(doc);
    return rc;
}

static int load_trace(series *t, const char *path, const char *key) {
    memset(t, 0, sizeof *t);
    t->path = path;
    size_t len;
    char *buf = csv_slurp(path, &len);
    if (!buf) return cli_error(SUB, "%s: cannot read: %s", path, strerror(errno));
    if (memchr(buf, 0, len)) { free(buf); return cli_error(SUB, "%s: a NUL byte (expected a text file)", path); }
    t->crc = trn_crc32(buf, len);
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i])) i++;
    int rc;
    if (i < len && buf[i] == '{') rc = trace_json(t, path, buf, len, key);
    else if (key) rc = cli_error(SUB, "--key %s: %s is not a traces.json (--key picks a run of one)", key, path);
    else rc = trace_csv(t, path, buf, len);
    free(buf);
    return rc;
}

/* ---- the run folder ------------------------------------------------------------ */

static int json_string_field(const char *path, const char *key, char *out, size_t n) {
    char *s = csv_slurp(path, NULL);
    if (!s) return -1;
    cJSON *doc = cJSON_ParseWithOpts(s, NULL, 1);
    free(s);
    const cJSON *f = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, key) : NULL;
    int rc = -1;
    if (cJSON_IsString(f) && strlen(f->valuestring) < n) { snprintf(out, n, "%s", f->valuestring); rc = 0; }
    cJSON_Delete(doc);
    return rc;
}

static int load_run(series *r, const char *dir) {
    memset(r, 0, sizeof *r);
    r->path = dir;
    char p[4400], err[1024];
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) return cli_error(SUB, "%s: not a run folder (expected the --out folder of `fpemu train`)", dir);
    snprintf(p, sizeof p, "%s/summary.json", dir);
    int have_summary = stat(p, &st) == 0;
    if (have_summary) {
        if (csv_run_check(dir, err, sizeof err) < 0) return cli_error(SUB, "%s", err);
        if (json_string_field(p, "model", r->model, sizeof r->model) || json_string_field(p, "policy", r->policy, sizeof r->policy))
            return cli_error(SUB, "%s: no model and policy (expected the summary `fpemu train` writes)", p);
    }
    csv_table m;
    snprintf(p, sizeof p, "%s/metrics.csv", dir);
    if (csv_read(&m, p, err, sizeof err)) return cli_error(SUB, "%s", err);
    int cs = csv_col(&m, "step"), cl = csv_col(&m, "loss"), cg = csv_col(&m, "grad_norm"), cc = csv_col(&m, "loss_scale"),
        ck = csv_col(&m, "skipped");
    int rc = 0;
    if (cs < 0 || cl < 0) { rc = cli_error(SUB, "%s: line 1: expected the columns step and loss", p); goto out; }
    if (!m.nrows) { rc = cli_error(SUB, "%s: no steps", p); goto out; }
    if (series_alloc(r, m.nrows)) { rc = cli_error(SUB, "%s: out of memory", p); goto out; }
    r->have_gn = cg >= 0; r->have_scale = cc >= 0; r->have_skip = ck >= 0;
    for (long i = 0; i < m.nrows; i++) {
        unsigned long long stp;
        if (cli_parse_u64(csv_cell(&m, i, cs), &stp) || stp != (unsigned long long)i + 1) {
            rc = cli_error(SUB, "%s: line %ld: step '%s', expected %ld", p, m.lineno[i], csv_cell(&m, i, cs), i + 1);
            goto out;
        }
        const int col[4] = {cl, cg, cc, ck};
        float *dst[3] = {&r->loss[i], &r->gn[i], &r->scale[i]};
        static const char *const what[4] = {"loss", "grad_norm", "loss_scale", "skipped"};
        r->scale[i] = 1; r->gn[i] = NAN;
        for (int k = 0; k < 3; k++)
            if (col[k] >= 0 && parse_f32(csv_cell(&m, i, col[k]), dst[k])) {
                rc = cli_error(SUB, "%s: line %ld: %s '%s' is not a number", p, m.lineno[i], what[k], csv_cell(&m, i, col[k]));
                goto out;
            }
        if (ck >= 0) {
            const char *v = csv_cell(&m, i, ck);
            if (strcmp(v, "0") && strcmp(v, "1")) { rc = cli_error(SUB, "%s: line %ld: skipped '%s', expected 0 or 1", p, m.lineno[i], v); goto out; }
            r->skip[i] = v[0] == '1';
        }
    }
    /* eval.csv: the last evaluation */
    snprintf(p, sizeof p, "%s/eval.csv", dir);
    if (stat(p, &st) == 0) {
        csv_table e;
        if (csv_read(&e, p, err, sizeof err)) { rc = cli_error(SUB, "%s", err); goto out; }
        int es = csv_col(&e, "step"), el = csv_col(&e, "eval_loss"), ea = csv_col(&e, "eval_accuracy");
        if (es < 0 || el < 0 || ea < 0) rc = cli_error(SUB, "%s: line 1: expected the columns step, eval_loss, eval_accuracy", p);
        else if (e.nrows) {
            long k = e.nrows - 1;
            unsigned long long stp;
            if (cli_parse_u64(csv_cell(&e, k, es), &stp) || parse_f32(csv_cell(&e, k, el), &r->eval_loss) ||
                parse_f32(csv_cell(&e, k, ea), &r->eval_acc))
                rc = cli_error(SUB, "%s: line %ld: expected a step and two numbers", p, e.lineno[k]);
            else { r->have_eval = 1; r->eval_step = (long)stp; }
        }
        csv_free(&e);
    }
out:
    csv_free(&m);
    return rc;
}

/* ---- the comparison ------------------------------------------------------------- */

typedef struct {
    long k;                         /* steps compared */
    long loss_first, loss_maxu_step, loss_maxa_step, loss_equal;
    int64_t loss_first_ulps, loss_maxu;
    double loss_maxa;
    int scale_cmp, skip_cmp, gn_cmp;
    long scale_first, skip_first, gn_equal, gn_max_step;
    double gn_max_rel;
    int eval_cmp;                   /* 1: compared; 0: one side has none; -1: not the same step */
    int eval_loss_eq, eval_acc_eq;
    int64_t eval_loss_ulps, eval_acc_ulps;
    int lengths_differ;
    int identical;
} result;

static void compare(const series *r, const series *t, long limit, int strict_gn, result *o) {
    memset(o, 0, sizeof *o);
    o->k = r->n < t->n ? r->n : t->n;
    if (limit > 0 && limit < o->k) o->k = limit;
    o->lengths_differ = limit > 0 ? 0 : r->n != t->n;
    o->loss_first = o->scale_first = o->skip_first = 0;
    o->loss_maxu = -2;
    o->loss_maxa = -1;
    for (long i = 0; i < o->k; i++) {
        float a = r->loss[i], b = t->loss[i];
        int64_t u = ulps(a, b);
        if (same_f32(a, b)) o->loss_equal++;
        else if (!o->loss_first) { o->loss_first = i + 1; o->loss_first_ulps = u; }
        /* the largest (the first step of it): a NaN against a number (-1) ranks above every distance */
        int64_t rank = u < 0 ? INT64_MAX : u, best = o->loss_maxu < 0 ? INT64_MAX : o->loss_maxu;
        if (o->loss_maxu == -2 || rank > best) { o->loss_maxu = u; o->loss_maxu_step = i + 1; }
        double d = fabs((double)a - (double)b);
        if (isfinite(d) && d > o->loss_maxa) { o->loss_maxa = d; o->loss_maxa_step = i + 1; }
    }
    o->scale_cmp = r->have_scale && t->have_scale;
    o->skip_cmp = r->have_skip && t->have_skip;
    o->gn_cmp = r->have_gn && t->have_gn;
    o->gn_max_rel = -1;
    for (long i = 0; i < o->k; i++) {
        if (o->scale_cmp && !o->scale_first && !same_f32(r->scale[i], t->scale[i])) o->scale_first = i + 1;
        if (o->skip_cmp && !o->skip_first && r->skip[i] != t->skip[i]) o->skip_first = i + 1;
        if (o->gn_cmp) {
            float a = r->gn[i], b = t->gn[i];
            if (same_f32(a, b)) o->gn_equal++;
            if (isfinite(a) && isfinite(b) && b != 0) {
                double rel = fabs((double)a - (double)b) / fabs((double)b);
                if (rel > o->gn_max_rel) { o->gn_max_rel = rel; o->gn_max_step = i + 1; }
            }
        }
    }
    if (!r->have_eval || !t->have_eval) o->eval_cmp = 0;
    else if (r->eval_step != t->eval_step || (limit > 0 && limit < t->eval_step)) o->eval_cmp = -1;
    else {
        o->eval_cmp = 1;
        o->eval_loss_eq = same_f32(r->eval_loss, t->eval_loss);
        o->eval_acc_eq = same_f32(r->eval_acc, t->eval_acc);
        o->eval_loss_ulps = ulps(r->eval_loss, t->eval_loss);
        o->eval_acc_ulps = ulps(r->eval_acc, t->eval_acc);
    }
    o->identical = o->loss_equal == o->k && !o->scale_first && !o->skip_first && !o->lengths_differ &&
                   (o->eval_cmp != 1 || (o->eval_loss_eq && o->eval_acc_eq)) && (!strict_gn || !o->gn_cmp || o->gn_equal == o->k);
}

static void print_f32(FILE *f, float v) { fprintf(f, "%.9g (0x%08x)", (double)v, (unsigned)f32_bits(v)); }
static void print_ulps(FILE *f, int64_t u) {
    if (u < 0) fprintf(f, "NaN against a number");
    else fprintf(f, "%lld ulp%s", (long long)u, u == 1 ? "" : "s");
}

static void describe(FILE *f, const char *role, const series *s) {
    fprintf(f, "%-6s %s (", role, s->path);
    fprintf(f, "model %s, policy %s, %ld steps", s->model[0] ? s->model : "?", s->policy[0] ? s->policy : "?", s->n);
    const char *dev = meta_get(s, "device");
    if (dev) fprintf(f, "; %s", dev);
    fprintf(f, ")\n");
}

static void report_text(FILE *f, const series *r, const series *t, const result *o) {
    describe(f, "run:", r);
    describe(f, "trace:", t);
    fprintf(f, "steps compared: %ld%s\n", o->k, o->lengths_differ ? " (the run and the trace differ in length)" : "");
    if (o->loss_equal == o->k) fprintf(f, "loss: identical at every step\n");
    else {
        long s = o->loss_first;
        fprintf(f, "loss: first difference at step %ld: run ", s);
        print_f32(f, r->loss[s - 1]);
        fprintf(f, ", trace ");
        print_f32(f, t->loss[s - 1]);
        fprintf(f, ": ");
        print_ulps(f, o->loss_first_ulps);
        fprintf(f, "\nloss: %ld of %ld steps equal; largest difference ", o->loss_equal, o->k);
        print_ulps(f, o->loss_maxu);
        fprintf(f, " at step %ld", o->loss_maxu_step);
        if (o->loss_maxa >= 0) fprintf(f, "; largest absolute difference %.9g at step %ld", o->loss_maxa, o->loss_maxa_step);
        fprintf(f, "\n");
    }
    if (!o->scale_cmp) fprintf(f, "loss scale: not compared (%s has none)\n", r->have_scale ? "the trace" : "the run");
    else if (!o->scale_first) fprintf(f, "loss scale: equal at every step\n");
    else fprintf(f, "loss scale: first difference at step %ld: run %.9g, trace %.9g\n", o->scale_first, (double)r->scale[o->scale_first - 1],
                 (double)t->scale[o->scale_first - 1]);
    if (!o->skip_cmp) fprintf(f, "skipped: not compared (%s has none)\n", r->have_skip ? "the trace" : "the run");
    else {
        long nr = 0, nt = 0;
        for (long i = 0; i < o->k; i++) nr += r->skip[i], nt += t->skip[i];
        if (!o->skip_first) fprintf(f, "skipped: equal at every step (%ld skipped)\n", nr);
        else fprintf(f, "skipped: first difference at step %ld: run %d, trace %d (%ld and %ld skipped)\n", o->skip_first,
                     r->skip[o->skip_first - 1], t->skip[o->skip_first - 1], nr, nt);
    }
    if (!o->gn_cmp) fprintf(f, "grad_norm: not compared (%s has none)\n", r->have_gn ? "the trace" : "the run");
    else {
        fprintf(f, "grad_norm: %ld of %ld equal (as f32)", o->gn_equal, o->k);
        if (o->gn_max_rel >= 0) fprintf(f, "; largest relative difference %.3g at step %ld", o->gn_max_rel, o->gn_max_step);
        fprintf(f, "\n");
    }
    if (o->eval_cmp == 0) fprintf(f, "eval: not compared (%s has none)\n", r->have_eval ? "the trace" : "the run");
    else if (o->eval_cmp < 0) fprintf(f, "eval: not compared (the run's last evaluation is at step %ld, the trace's at step %ld)\n", r->eval_step, t->eval_step);
    else {
        fprintf(f, "eval_loss: run ");
        print_f32(f, r->eval_loss);
        fprintf(f, ", trace ");
        print_f32(f, t->eval_loss);
        if (o->eval_loss_eq) fprintf(f, ": equal\n");
        else { fprintf(f, ": differ by "); print_ulps(f, o->eval_loss_ulps); fprintf(f, "\n"); }
        fprintf(f, "eval_accuracy: run %.9g, trace %.9g: %s\n", (double)r->eval_acc, (double)t->eval_acc, o->eval_acc_eq ? "equal" : "differ");
    }
    fprintf(f, "result: %s\n", o->identical ? "identical" : "differ");
}

static cJSON *jf32(float v) {
    cJSON *o = cJSON_CreateObject();
    char b[16];
    snprintf(b, sizeof b, "0x%08x", (unsigned)f32_bits(v));
    if (isfinite(v)) cJSON_AddNumberToObject(o, "value", (double)v);
    else cJSON_AddStringToObject(o, "value", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    cJSON_AddStringToObject(o, "bits", b);
    return o;
}
static void jside(cJSON *root, const char *name, const series *s) {
    cJSON *o = cJSON_AddObjectToObject(root, name);
    cJSON_AddStringToObject(o, "path", s->path);
    cJSON_AddStringToObject(o, "model", s->model);
    cJSON_AddStringToObject(o, "policy", s->policy);
    cJSON_AddNumberToObject(o, "steps", (double)s->n);
}
static void julps(cJSON *o, const char *k, int64_t u) {
    if (u < 0) cJSON_AddNullToObject(o, k);
    else cJSON_AddNumberToObject(o, k, (double)u);
}

static char *report_json(const series *r, const series *t, const result *o) {
    cJSON *root = cJSON_CreateObject();
    jside(root, "run", r);
    jside(root, "trace", t);
    cJSON_AddNumberToObject(root, "steps_compared", (double)o->k);
    cJSON_AddBoolToObject(root, "lengths_differ", o->lengths_differ);
    cJSON *l = cJSON_AddObjectToObject(root, "loss");
    cJSON_AddNumberToObject(l, "equal_steps", (double)o->loss_equal);
    if (o->loss_first) {
        cJSON *fd = cJSON_AddObjectToObject(l, "first_difference");
        cJSON_AddNumberToObject(fd, "step", (double)o->loss_first);
        cJSON_AddItemToObject(fd, "run", jf32(r->loss[o->loss_first - 1]));
        cJSON_AddItemToObject(fd, "trace", jf32(t->loss[o->loss_first - 1]));
        julps(fd, "ulps", o->loss_first_ulps);
        cJSON *mu = cJSON_AddObjectToObject(l, "max_ulps");
        cJSON_AddNumberToObject(mu, "step", (double)o->loss_maxu_step);
        julps(mu, "ulps", o->loss_maxu);
        if (o->loss_maxa >= 0) {
            cJSON *ma = cJSON_AddObjectToObject(l, "max_abs");
            cJSON_AddNumberToObject(ma, "step", (double)o->loss_maxa_step);
            cJSON_AddNumberToObject(ma, "abs", o->loss_maxa);
        }
    } else {
        cJSON_AddNullToObject(l, "first_difference");
    }
    cJSON *s = cJSON_AddObjectToObject(root, "loss_scale");
    cJSON_AddBoolToObject(s, "compared", o->scale_cmp);
    if (o->scale_cmp) {
        cJSON_AddBoolToObject(s, "equal", !o->scale_first);
        if (o->scale_first) {
            cJSON *fd = cJSON_AddObjectToObject(s, "first_difference");
            cJSON_AddNumberToObject(fd, "step", (double)o->scale_first);
            cJSON_AddItemToObject(fd, "run", jf32(r->scale[o->scale_first - 1]));
            cJSON_AddItemToObject(fd, "trace", jf32(t->scale[o->scale_first - 1]));
        }
    }
    s = cJSON_AddObjectToObject(root, "skipped");
    cJSON_AddBoolToObject(s, "compared", o->skip_cmp);
    if (o->skip_cmp) {
        cJSON_AddBoolToObject(s, "equal", !o->skip_first);
        if (o->skip_first) {
            cJSON *fd = cJSON_AddObjectToObject(s, "first_difference");
            cJSON_AddNumberToObject(fd, "step", (double)o->skip_first);
            cJSON_AddNumberToObject(fd, "run", r->skip[o->skip_first - 1]);
            cJSON_AddNumberToObject(fd, "trace", t->skip[o->skip_first - 1]);
        }
    }
    s = cJSON_AddObjectToObject(root, "grad_norm");
    cJSON_AddBoolToObject(s, "compared", o->gn_cmp);
    if (o->gn_cmp) {
        cJSON_AddNumberToObject(s, "equal_steps", (double)o->gn_equal);
        if (o->gn_max_rel >= 0) {
            cJSON_AddNumberToObject(s, "max_rel_diff", o->gn_max_rel);
            cJSON_AddNumberToObject(s, "max_rel_diff_step", (double)o->gn_max_step);
        }
    }
    s = cJSON_AddObjectToObject(root, "eval");
    cJSON_AddBoolToObject(s, "compared", o->eval_cmp == 1);
    if (o->eval_cmp == 1) {
        cJSON *e = cJSON_AddObjectToObject(s, "eval_loss");
        cJSON_AddItemToObject(e, "run", jf32(r->eval_loss));
        cJSON_AddItemToObject(e, "trace", jf32(t->eval_loss));
        cJSON_AddBoolToObject(e, "equal", o->eval_loss_eq);
        julps(e, "ulps", o->eval_loss_ulps);
        e = cJSON_AddObjectToObject(s, "eval_accuracy");
        cJSON_AddItemToObject(e, "run", jf32(r->eval_acc));
        cJSON_AddItemToObject(e, "trace", jf32(t->eval_acc));
        cJSON_AddBoolToObject(e, "equal", o->eval_acc_eq);
    }
    cJSON_AddBoolToObject(root, "identical", o->identical);
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    return txt;
}

/* ---- --as-run: the trace as a run folder ---------------------------------------------- */

typedef struct { char *p; size_t n, cap; int failed; } tbuf;
static void tb_printf(tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_printf(tbuf *b, const char *fmt, ...) {
    if (b->failed) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) { b->failed = 1; return; }
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + (size_t)k + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) { b->failed = 1; return; }
        b->p = np; b->cap = nc;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}
static double num(float v) { return isnan(v) ? NAN : (double)v; } /* "nan", never "-nan" */
static void tb_json_str(tbuf *b, const char *s) {
    char *q = cli_json_quote(s);
    if (q) tb_printf(b, "%s", q);
    else b->failed = 1;
    free(q);
}
static void tb_json_num(tbuf *b, double v) {
    if (isfinite(v)) tb_printf(b, "%.9g", v);
    else tb_printf(b, "null");
}

static int write_file(const char *dir, const char *name, const char *data, size_t n) {
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    cli_atomic a;
    if (cli_atomic_open(&a, p, "wb")) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    int ok = fwrite(data, 1, n, a.f) == n;
    if (cli_atomic_close(&a, ok) || !ok) return cli_error(SUB, "%s: cannot write: %s", p, strerror(errno));
    return 0;
}

static int as_run(const series *t, const char *dir, const char *model_opt, const char *policy_opt) {
    const char *model = model_opt ? model_opt : t->model[0] ? t->model : NULL;
    const char *policy = policy_opt ? policy_opt : t->policy[0] ? t->policy : NULL;
    if (!model || !policy)
        return cli_error(SUB, "--as-run %s: the trace names no %s (give --model and --policy)", dir, model ? "policy" : "model");
    trn_settings s;
    char err[1024];
    if (trn_settings_init(&s, model, policy, err, sizeof err))
        return cli_error(SUB, "--as-run %s: %s (fpemu report reads a run folder of an fpemu model and policy)", dir, err);
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return cli_error(SUB, "--as-run %s: exists and is not a folder", dir);
        static const char *const foreign[] = {"tensors.csv", "checkpoint.bin", NULL};
        for (int i = 0; foreign[i]; i++) {
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", dir, foreign[i]);
            if (stat(p, &st) == 0) return cli_error(SUB, "--as-run %s: holds %s: an fpemu train folder, not one --as-run wrote (choose another folder)", dir, foreign[i]);
        }
    } else if (mkdir(dir, 0777)) {
        return cli_error(SUB, "--as-run %s: cannot create: %s", dir, strerror(errno));
    }
    tbuf m = {0}, e = {0}, js = {0};
    tb_printf(&m, "step,loss,grad_norm,loss_scale,skipped\n");
    long skipped = 0;
    for (long i = 0; i < t->n; i++) {
        tb_printf(&m, "%ld,%.9g,%.9g,%.9g,%d\n", i + 1, num(t->loss[i]), num(t->gn[i]), num(t->scale[i]), t->skip[i]);
        skipped += t->skip[i];
    }
    tb_printf(&e, "step,eval_loss,eval_accuracy\n");
    if (t->have_eval) tb_printf(&e, "%ld,%.9g,%.9g\n", t->n, num(t->eval_loss), num(t->eval_acc));
    const char *dev = meta_get(t, "device");
    tb_printf(&js, "{\n  \"fpemu_version\": \"%s\",\n  \"model\": ", FPEMU_VERSION);
    tb_json_str(&js, model);
    tb_printf(&js, ",\n  \"policy\": ");
    tb_json_str(&js, policy);
    tb_printf(&js, ",\n  \"source\": \"real\",\n  \"device\": ");
    tb_json_str(&js, dev ? dev : "unknown");
    tb_printf(&js, ",\n  \"trace\": {\"path\": ");
    tb_json_str(&js, t->path);
    tb_printf(&js, ", \"crc32\": \"%08x\"", (unsigned)t->crc);
    for (int i = 0; i < t->nmeta; i++) {
        if (!strcmp(t->meta_k[i], "model") || !strcmp(t->meta_k[i], "policy")) continue;
        tb_printf(&js, ", ");
        tb_json_str(&js, t->meta_k[i]);
        tb_printf(&js, ": ");
        tb_json_str(&js, t->meta_v[i]);
    }
    tb_printf(&js, "},\n  \"steps\": %ld,\n  \"final\": {\n    \"train_loss\": ", t->n);
    tb_json_num(&js, t->loss[t->n - 1]);
    tb_printf(&js, ",\n    \"eval_loss\": ");
    tb_json_num(&js, t->have_eval ? t->eval_loss : NAN);
    tb_printf(&js, ",\n    \"eval_accuracy\": ");
    tb_json_num(&js, t->have_eval ? t->eval_acc : NAN);
    tb_printf(&js, ",\n    \"loss_scale\": ");
    tb_json_num(&js, t->scale[t->n - 1]);
    tb_printf(&js, ",\n    \"skipped_steps\": %ld\n  },\n  \"files\": {\n", skipped);
    tb_printf(&js, "    \"metrics.csv\": {\"bytes\": %zu, \"crc32\": \"%08x\"},\n", m.n, (unsigned)trn_crc32(m.p, m.n));
    tb_printf(&js, "    \"eval.csv\": {\"bytes\": %zu, \"crc32\": \"%08x\"}\n  }\n}\n", e.n, (unsigned)trn_crc32(e.p, e.n));
    int rc = 0;
    if (m.failed || e.failed || js.failed) rc = cli_error(SUB, "--as-run %s: out of memory", dir);
    else rc = write_file(dir, "metrics.csv", m.p, m.n) || write_file(dir, "eval.csv", e.p, e.n) ||
              write_file(dir, "summary.json", js.p, js.n) ? 2 : 0;
    free(m.p); free(e.p); free(js.p);
    return rc;
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu compare RUN TRACE [--key MODEL/POLICY/REP] [--steps N] [--grad-norm] [--json FILE]\n"
            "                     [--as-run DIR [--model M] [--policy P]]\n"
            "       fpemu compare --as-run DIR TRACE [--key ...] [--model M] [--policy P]\n\n"
            "Compares an fpemu run folder (metrics.csv, eval.csv, summary.json of `fpemu train --out`)\n"
            "with a trace of a real run: a CSV in the fpemu-trace 1 format (gpu/torch/README.md), or one\n"
            "run of a traces.json (--key). Prints the first step whose loss differs (both f32 values and\n"
            "the distance in ulps), the largest difference, whether the loss-scale and skip sequences\n"
            "are equal, how many gradient norms agree, and the final evaluation.\n"
            "  --steps N     compare the first N steps only (both must have them)\n"
            "  --grad-norm   count a gradient norm that differs as a difference (default: reported only)\n"
            "  --json FILE   the same as JSON\n"
            "  --as-run DIR  also write the trace as a run folder that `fpemu report` reads\n"
            "  --model M, --policy P  the trace's model and policy for --as-run (default: its metadata)\n"
            "Exit status: 0 identical, 1 a difference, 2 bad input. docs/replay.md.\n");
}

int cmd_compare(int argc, char **argv) {
    const char *pos[2] = {NULL, NULL}, *key = NULL, *json = NULL, *asrun = NULL, *model = NULL, *policy = NULL;
    int npos = 0, strict_gn = 0;
    unsigned long long limit = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) { usage(stdout); return 0; }
        if (!strcmp(a, "--grad-norm")) { strict_gn = 1; continue; }
        const char **dst = !strcmp(a, "--key") ? &key : !strcmp(a, "--json") ? &json : !strcmp(a, "--as-run") ? &asrun
                         : !strcmp(a, "--model") ? &model : !strcmp(a, "--policy") ? &policy : NULL;
        if (dst || !strcmp(a, "--steps")) {
            if (i + 1 >= argc) return cli_error(SUB, "%s needs a value", a);
            const char *v = argv[++i];
            if (!dst) {
                if (cli_parse_u64(v, &limit) || limit < 1 || limit > TRN_STEPS_MAX) return cli_error(SUB, "--steps: expected an integer 1..%d, got '%s'", TRN_STEPS_MAX, v);
                continue;
            }
            if (*dst) return cli_error(SUB, "%s given twice", a);
            *dst = v;
            continue;
        }
        if (a[0] == '-' && a[1]) { usage(stderr); return cli_error(SUB, "unknown option '%s'", a); }
        if (npos == 2) { usage(stderr); return cli_error(SUB, "too many arguments ('%s'): expected RUN TRACE", a); }
        pos[npos++] = a;
    }
    if ((model || policy) && !asrun) return cli_error(SUB, "--model and --policy name the trace's run for --as-run");
    if (npos == 1 && asrun) { /* the trace alone, written as a run folder */
        series t;
        int rc = load_trace(&t, pos[0], key);
        if (!rc) rc = as_run(&t, asrun, model, policy);
        series_free(&t);
        return rc;
    }
    if (npos != 2) { usage(stderr); return cli_error(SUB, "expected RUN TRACE (or --as-run DIR TRACE)"); }
    series r, t;
    memset(&r, 0, sizeof r);
    int rc = load_trace(&t, pos[1], key);
    if (!rc) rc = load_run(&r, pos[0]);
    if (!rc && r.model[0] && t.model[0] && strcmp(r.model, t.model))
        rc = cli_error(SUB, "the run is of model %s, the trace of %s", r.model, t.model);
    if (!rc && limit && ((long)limit > r.n || (long)limit > t.n))
        rc = cli_error(SUB, "--steps %llu: the run has %ld steps, the trace %ld", limit, r.n, t.n);
    if (!rc && asrun) rc = as_run(&t, asrun, model, policy);
    if (!rc) {
        result o;
        compare(&r, &t, (long)limit, strict_gn, &o);
        report_text(stdout, &r, &t, &o);
        if (json) {
            char *txt = report_json(&r, &t, &o);
            cli_atomic a;
            if (!txt) rc = cli_error(SUB, "--json %s: out of memory", json);
            else if (cli_atomic_open(&a, json, "w")) rc = cli_error(SUB, "--json %s: cannot write: %s", json, strerror(errno));
            else {
                int ok = fputs(txt, a.f) >= 0 && fputc('\n', a.f) != EOF;
                if (cli_atomic_close(&a, ok) || !ok) rc = cli_error(SUB, "--json %s: cannot write: %s", json, strerror(errno));
            }
            free(txt);
        }
        if (!rc) rc = o.identical ? 0 : 1;
    }
    series_free(&r);
    series_free(&t);
    return rc;
}
