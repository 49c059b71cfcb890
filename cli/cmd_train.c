/* SPDX-License-Identifier: MIT */
/* cmd_train.c: `fpemu train`, a training run of the engine in
 * experiments/ written to a folder (metrics.csv, tensors.csv, eval.csv,
 * summary.json; checkpoint.bin every checkpoint_every steps). Every output
 * file is written at the end, atomically; a checkpoint holds the run state
 * and the rows so far, so `--resume DIR` ends with exactly the files of an
 * uninterrupted run. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "train.h"

#define SUB "train"

typedef struct { char *p; size_t n, cap; } sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->p && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + (size_t)k + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) return;
        b->p = np; b->cap = nc;
    }
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu train --model M --policy P --out DIR [--steps N] [--seed S]\n"
            "                   [--set key=value ...] [--config FILE] [--quiet] [--threads T]\n"
            "       fpemu train --resume DIR [--steps N] [--out DIR2] [--quiet] [--threads T]\n\n"
            "Writes DIR/metrics.csv (one row per step), DIR/tensors.csv (telemetry per layer and\n"
            "tensor class every tensors_every steps), DIR/eval.csv and DIR/summary.json; with\n"
            "checkpoint_every=N also DIR/checkpoint.bin. Defaults: --steps 200, --seed 1.\n"
            "A config file holds `key = value` lines (the keys below, and model, policy, steps,\n"
            "seed); `#` starts a comment. --set overrides the config file.\n\nmodels:");
    for (int i = 0; trn_model_names[i]; i++) fprintf(out, " %s", trn_model_names[i]);
    fprintf(out, "\npolicies:");
    for (int i = 0; trn_policy_names[i]; i++) fprintf(out, " %s", trn_policy_names[i]);
    fprintf(out, "\nkeys:");
    for (int i = 0; i < trn_settings_count(); i++) fprintf(out, "%s%s", i % 8 ? " " : "\n  ", trn_settings_key(i));
    fprintf(out, "\n");
}

typedef struct { char key[64]; char val[256]; char where[300]; } kv;

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
    return s;
}

static int read_config(const char *path, kv **list, int *n) {
    FILE *f = fopen(path, "r");
    if (!f) return cli_error(SUB, "--config %s: cannot open: %s", path, strerror(errno));
    char line[1024];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (!strchr(line, '\n') && !feof(f)) { fclose(f); return cli_error(SUB, "%s:%d: line too long", path, ln); }
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char *s = trim(line);
        if (!*s) continue;
        char *eq = strchr(s, '=');
        if (!eq) { fclose(f); return cli_error(SUB, "%s:%d: expected `key = value`, got '%s'", path, ln, s); }
        *eq = 0;
        char *k = trim(s), *v = trim(eq + 1);
        if (!*k || !*v || strlen(k) >= 64 || strlen(v) >= 256) {
            fclose(f);
            return cli_error(SUB, "%s:%d: expected `key = value` with a non-empty key and value", path, ln);
        }
        *list = realloc(*list, (size_t)(*n + 1) * sizeof **list);
        kv *e = &(*list)[(*n)++];
        snprintf(e->key, sizeof e->key, "%s", k);
        snprintf(e->val, sizeof e->val, "%s", v);
        snprintf(e->where, sizeof e->where, "%s:%d", path, ln);
    }
    if (ferror(f)) { /* e.g. a directory: fopen succeeds, reading fails */
        int e = errno;
        fclose(f);
        return cli_error(SUB, "--config %s: cannot read: %s", path, strerror(e));
    }
    fclose(f);
    return 0;
}

static int write_file(const char *dir, const char *name, const void *data, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cli_atomic a;
    if (cli_atomic_open(&a, path, "wb")) return -1;
    int ok = fwrite(data, 1, n, a.f) == n;
    return cli_atomic_close(&a, ok);
}

static int mkdir_p(const char *dir) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
    struct stat st;
    return stat(tmp, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- checkpoint file: magic, steps, four length-prefixed blobs, CRC-32 ---- */
static const char CK_MAGIC[] = "FPEMUCKPT 1\n";

static void put_u64(sbuf *b, uint64_t v) {
    unsigned char c[8];
    for (int i = 0; i < 8; i++) c[i] = (unsigned char)(v >> (8 * i));
    if (b->n + 8 + 1 > b->cap) sb_printf(b, "%s", ""); /* grow */
    while (b->n + 8 >= b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        b->p = realloc(b->p, nc); b->cap = nc;
    }
    memcpy(b->p + b->n, c, 8);
    b->n += 8;
}
static void put_blob(sbuf *b, const void *d, size_t n) {
    put_u64(b, n);
    while (b->n + n >= b->cap) { size_t nc = b->cap * 2; b->p = realloc(b->p, nc); b->cap = nc; }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int save_checkpoint(const char *dir, trn_run *run, long steps, const sbuf *m, const sbuf *t, const sbuf *e) {
    unsigned char *st;
    size_t stn;
    if (trn_state_save(run, &st, &stn)) return -1;
    sbuf b = {0};
    sb_printf(&b, "%s", CK_MAGIC);
    put_u64(&b, (uint64_t)steps);
    put_blob(&b, st, stn);
    put_blob(&b, m->p ? m->p : "", m->n);
    put_blob(&b, t->p ? t->p : "", t->n);
    put_blob(&b, e->p ? e->p : "", e->n);
    free(st);
    uint32_t crc = trn_crc32(b.p, b.n);
    unsigned char c[4] = {(unsigned char)crc, (unsigned char)(crc >> 8), (unsigned char)(crc >> 16), (unsigned char)(crc >> 24)};
    put_blob(&b, "", 0);
    b.n -= 8; /* (put_blob grew the buffer; the CRC goes where its length went) */
    memcpy(b.p + b.n, c, 4);
    b.n += 4;
    int rc = write_file(dir, "checkpoint.bin", b.p, b.n);
    free(b.p);
    return rc;
}

static int load_checkpoint(const char *dir, trn_run **run, long *steps, sbuf *m, sbuf *t, sbuf *e) {
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return cli_error(SUB, "--resume %s: cannot open %s: %s", dir, path, strerror(errno));
    sbuf b = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        while (b.n + got >= b.cap) { size_t nc = b.cap ? b.cap * 2 : 65536; b.p = realloc(b.p, nc); b.cap = nc; }
        memcpy(b.p + b.n, chunk, got);
        b.n += got;
    }
    fclose(f);
    const unsigned char *p = (const unsigned char *)b.p;
    size_t ml = strlen(CK_MAGIC);
    if (b.n < ml + 8 + 4 || memcmp(p, CK_MAGIC, ml)) {
        free(b.p);
        return cli_error(SUB, "%s: not an fpemu checkpoint (expected the header '%.10s')", path, CK_MAGIC);
    }
    uint32_t crc = trn_crc32(p, b.n - 4);
    const unsigned char *c = p + b.n - 4;
    if (crc != ((uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24)) {
        free(b.p);
        return cli_error(SUB, "%s: corrupt checkpoint (CRC-32 mismatch)", path);
    }
    size_t pos = ml, end = b.n - 4;
    *steps = (long)get_u64(p + pos);
    pos += 8;
    const unsigned char *blob[4];
    size_t blen[4];
    for (int i = 0; i < 4; i++) {
        if (end - pos < 8) { free(b.p); return cli_error(SUB, "%s: truncated checkpoint", path); }
        blen[i] = get_u64(p + pos);
        pos += 8;
        if (blen[i] > end - pos) { free(b.p); return cli_error(SUB, "%s: truncated checkpoint", path); }
        blob[i] = p + pos;
        pos += blen[i];
    }
    char err[512];
    if (trn_state_load(run, blob[0], blen[0], err, sizeof err)) {
        free(b.p);
        return cli_error(SUB, "%s: bad run state: %s", path, err);
    }
    sbuf *outs[3] = {m, t, e};
    for (int i = 0; i < 3; i++) {
        outs[i]->n = 0;
        sb_printf(outs[i], "%.*s", (int)blen[i + 1], (const char *)blob[i + 1]);
    }
    free(b.p);
    return 0;
}

static void json_str(sbuf *b, const char *s) {
    sb_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') sb_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) sb_printf(b, "\\u%04x", *s);
        else sb_printf(b, "%c", *s);
    }
    sb_printf(b, "\"");
}

/* A value for the CSVs and the progress line: a NaN of either sign prints as "nan" (glibc prints
 * a negative one, as inf - inf gives on x86, as "-nan"). */
static double csv_num(double v) { return isnan(v) ? fabs(v) : v; }

static void json_num(sbuf *b, double v) {
    if (isfinite(v)) sb_printf(b, "%.9g", v);
    else sb_printf(b, "null");
}

int cmd_train(int argc, char **argv) {
    const char *model = NULL, *policy = NULL, *out = NULL, *resume = NULL, *config = NULL;
    unsigned long long steps = 200, seed = 1, threads = 1;
    int have_steps = 0, have_seed = 0, quiet = 0;
    kv *sets = NULL;
    int nsets = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) { usage(stdout); free(sets); return 0; }
        int takes = !strcmp(a, "--model") || !strcmp(a, "--policy") || !strcmp(a, "--out") || !strcmp(a, "--resume") ||
                    !strcmp(a, "--config") || !strcmp(a, "--steps") || !strcmp(a, "--seed") || !strcmp(a, "--set") ||
                    !strcmp(a, "--threads");
        if (!strcmp(a, "--quiet")) { quiet = 1; continue; }
        if (!takes) { free(sets); usage(stderr); return cli_error(SUB, "unknown option '%s'", a); }
        if (i + 1 >= argc) { free(sets); return cli_error(SUB, "%s needs a value", a); }
        const char *v = argv[++i];
        if (!strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "--policy")) policy = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--resume")) resume = v;
        else if (!strcmp(a, "--config")) config = v;
        else if (!strcmp(a, "--steps")) {
            if (cli_parse_u64(v, &steps) || steps < 1 || steps > 100000000) { free(sets); return cli_error(SUB, "--steps: expected an integer 1..100000000, got '%s'", v); }
            have_steps = 1;
        } else if (!strcmp(a, "--seed")) {
            if (cli_parse_u64(v, &seed)) { free(sets); return cli_error(SUB, "--seed: expected a non-negative integer, got '%s'", v); }
            have_seed = 1;
        } else if (!strcmp(a, "--threads")) {
            if (cli_parse_u64(v, &threads) || threads < 1 || threads > 64) { free(sets); return cli_error(SUB, "--threads: expected an integer 1..64, got '%s'", v); }
        } else if (!strcmp(a, "--set")) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1] || (size_t)(eq - v) >= 64 || strlen(eq + 1) >= 256) {
                free(sets);
                return cli_error(SUB, "--set: expected key=value, got '%s'", v);
            }
            sets = realloc(sets, (size_t)(nsets + 1) * sizeof *sets);
            kv *e = &sets[nsets++];
            snprintf(e->key, sizeof e->key, "%.*s", (int)(eq - v), v);
            snprintf(e->val, sizeof e->val, "%s", eq + 1);
            snprintf(e->where, sizeof e->where, "--set %s", v);
        }
    }
    char err[1024];
    trn_run *run = NULL;
    sbuf met = {0}, ten = {0}, ev = {0};
    long start_step = 0;
    int rc = 2;
    if (resume) {
        if (model || policy || config || nsets || have_seed) {
            free(sets);
            return cli_error(SUB, "--resume DIR takes the run from DIR/checkpoint.bin: --model, --policy, --seed, "
                                  "--set and --config cannot be combined with it");
        }
        long ck_steps = 0;
        if (load_checkpoint(resume, &run, &ck_steps, &met, &ten, &ev)) { free(sets); return 2; }
        if (!have_steps) steps = (unsigned long long)ck_steps;
        if (!out) out = resume;
        start_step = trn_steps_done(run);
        if ((long)steps < start_step) {
            trn_close(run);
            free(sets); free(met.p); free(ten.p); free(ev.p);
            return cli_error(SUB, "--steps %llu is below the checkpoint's step %ld", steps, start_step);
        }
    } else {
        kv *cfg = NULL;
        int ncfg = 0;
        if (config && read_config(config, &cfg, &ncfg)) { free(cfg); free(sets); return 2; }
        /* model, policy, steps, seed from the config unless given on the command line */
        const char *cm = NULL, *cp = NULL;
        for (int i = 0; i < ncfg; i++) {
            if (!strcmp(cfg[i].key, "model")) cm = cfg[i].val;
            else if (!strcmp(cfg[i].key, "policy")) cp = cfg[i].val;
            else if (!strcmp(cfg[i].key, "steps") && !have_steps) {
                if (cli_parse_u64(cfg[i].val, &steps) || steps < 1 || steps > 100000000) {
                    free(cfg); free(sets);
                    return cli_error(SUB, "%s: steps: expected an integer 1..100000000, got '%s'", cfg[i].where, cfg[i].val);
                }
            } else if (!strcmp(cfg[i].key, "seed") && !have_seed) {
                if (cli_parse_u64(cfg[i].val, &seed)) {
                    free(cfg); free(sets);
                    return cli_error(SUB, "%s: seed: expected a non-negative integer, got '%s'", cfg[i].where, cfg[i].val);
                }
            }
        }
        if (!model) model = cm;
        if (!policy) policy = cp;
        if (!model || !policy || !out) {
            free(cfg); free(sets);
            usage(stderr);
            return cli_error(SUB, "--model, --policy and --out are required (or --resume DIR)");
        }
        trn_settings s;
        if (trn_settings_init(&s, model, policy, err, sizeof err)) { free(cfg); free(sets); return cli_error(SUB, "%s", err); }
        for (int pass = 0; pass < 2; pass++) {
            kv *l = pass ? sets : cfg;
            int n = pass ? nsets : ncfg;
            for (int i = 0; i < n; i++) {
                if (!pass && (!strcmp(l[i].key, "model") || !strcmp(l[i].key, "policy") || !strcmp(l[i].key, "steps") ||
                              !strcmp(l[i].key, "seed")))
                    continue;
                if (trn_settings_set(&s, l[i].key, l[i].val, err, sizeof err)) {
                    char where[300];
                    snprintf(where, sizeof where, "%s", l[i].where);
                    free(cfg); free(sets);
                    return cli_error(SUB, "%s: %s", where, err);
                }
            }
        }
        free(cfg);
        if (trn_settings_check(&s, err, sizeof err)) { free(sets); return cli_error(SUB, "%s", err); }
        if (trn_open(&run, &s, seed, err, sizeof err)) { free(sets); return cli_error(SUB, "%s", err); }
        sb_printf(&met, "step,loss,grad_norm,loss_scale,skipped,overflow,underflow,lr,casts\n");
        sb_printf(&ten, "step,layer,class,format,n,amax,scale,overflow,underflow,saturated,subnormal,nonfinite_in\n");
        sb_printf(&ev, "step,eval_loss,eval_accuracy\n");
    }
    free(sets);
    /* the output folder must be writable before any work is done */
    {
        char probe[4096];
        snprintf(probe, sizeof probe, "%s/metrics.csv", out);
        cli_atomic a;
        if (mkdir_p(out) || cli_atomic_open(&a, probe, "wb")) {
            cli_error(SUB, "--out %s: cannot create or write the folder: %s", out, strerror(errno));
            goto done;
        }
        cli_atomic_close(&a, 0);
        static const char *const outputs[] = {"checkpoint.bin", "metrics.csv", "tensors.csv", "eval.csv", "summary.json", NULL};
        cli_atomic_clean(out, outputs); /* temporaries of a killed run (its PID gone) */
    }
    trn_set_threads(run, (int)threads);
    const trn_settings *s = trn_run_settings(run);
    double t0 = now_s(), last_print = 0;
    double eval_loss = NAN, eval_acc = NAN;
    trn_step_rec rec;
    memset(&rec, 0, sizeof rec);
    long skipped = 0;
    /* a resumed run counts the skips recorded before its checkpoint */
    for (const char *l = met.p ? strchr(met.p, '\n') : NULL; l && l[1]; l = strchr(l + 1, '\n')) {
        const char *f = l + 1;
        for (int k = 0; k < 4 && f; k++) { f = strchr(f, ','); if (f) f++; }
        if (f && *f == '1') skipped++;
    }
    if (start_step == 0) {
        trn_eval(run, &eval_loss, &eval_acc);
        sb_printf(&ev, "0,%.9g,%.9g\n", csv_num(eval_loss), csv_num(eval_acc));
    }
    for (long st = start_step; st < (long)steps; st++) {
        if (trn_step(run, &rec, err, sizeof err)) { cli_error(SUB, "step %ld: %s", st + 1, err); rc = 1; goto done; }
        skipped += rec.skipped;
        sb_printf(&met, "%ld,%.9g,%.9g,%.9g,%d,%.9g,%.9g,%.9g,%llu\n", rec.step, csv_num(rec.loss), csv_num(rec.grad_norm), rec.loss_scale,
                  rec.skipped, rec.overflow, rec.underflow, rec.lr, (unsigned long long)rec.casts);
        if (s->tensors_every > 0 && (rec.step == 1 || rec.step % s->tensors_every == 0)) {
            trn_tensor_rec tr;
            for (int i = 0; i < trn_tensor_count(run); i++) {
                trn_tensor_get(run, i, &tr);
                sb_printf(&ten, "%ld,%s,%s,%s,%llu,%.9g,%.9g,%llu,%llu,%llu,%llu,%llu\n", rec.step, tr.layer, tr.cls,
                          tr.format, (unsigned long long)tr.n, csv_num(tr.amax), csv_num(tr.scale), (unsigned long long)tr.overflow,
                          (unsigned long long)tr.underflow, (unsigned long long)tr.saturated,
                          (unsigned long long)tr.subnormal, (unsigned long long)tr.nonfinite_in);
            }
        }
        if ((s->eval_every > 0 && rec.step % s->eval_every == 0) || rec.step == (long)steps) {
            trn_eval(run, &eval_loss, &eval_acc);
            sb_printf(&ev, "%ld,%.9g,%.9g\n", rec.step, csv_num(eval_loss), csv_num(eval_acc));
        }
        if (s->checkpoint_every > 0 && rec.step % s->checkpoint_every == 0 && rec.step < (long)steps) {
            if (save_checkpoint(out, run, (long)steps, &met, &ten, &ev)) {
                cli_error(SUB, "%s/checkpoint.bin: cannot write: %s", out, strerror(errno));
                goto done;
            }
        }
        double t = now_s();
        if (!quiet && (t - last_print > 0.5 || rec.step == (long)steps)) {
            double rate = (double)(rec.step - start_step) / (t - t0 + 1e-9);
            fprintf(stderr, "\rstep %ld/%llu  loss %.4f  %.1f steps/s  ETA %.0fs   ", rec.step, steps, csv_num(rec.loss), rate,
                    rate > 0 ? (double)((long)steps - rec.step) / rate : 0.0);
            if (rec.step == (long)steps) fputc('\n', stderr);
            last_print = t;
        }
    }
    double wall = now_s() - t0;
    if (start_step == (long)steps && isnan(eval_loss)) trn_eval(run, &eval_loss, &eval_acc);
    /* summary.json: everything to reproduce the run; "timing" is the only
     * part that differs between identical runs */
    sbuf js = {0};
    sb_printf(&js, "{\n  \"fpemu_version\": \"%s\",\n  \"model\": ", FPEMU_VERSION);
    json_str(&js, s->model);
    sb_printf(&js, ",\n  \"policy\": ");
    json_str(&js, s->policy);
    sb_printf(&js, ",\n  \"gemm_backend\": ");
    json_str(&js, trn_gemm_backend());
    sb_printf(&js, ",\n  \"seed\": %llu,\n  \"steps\": %llu,\n  \"parameters\": %zu,\n  \"settings\": {",
              (unsigned long long)trn_run_seed(run), steps, trn_param_count(run));
    for (int i = 0; i < trn_settings_count(); i++) {
        char val[256];
        trn_settings_value(s, i, val, sizeof val);
        sb_printf(&js, "%s\n    \"%s\": ", i ? "," : "", trn_settings_key(i));
        if (trn_settings_is_string(i)) json_str(&js, val);
        else sb_printf(&js, "%s", val);
    }
    sb_printf(&js, "\n  },\n  \"final\": {\n    \"train_loss\": ");
    json_num(&js, rec.loss);
    sb_printf(&js, ",\n    \"eval_loss\": ");
    json_num(&js, eval_loss);
    sb_printf(&js, ",\n    \"eval_accuracy\": ");
    json_num(&js, eval_acc);
    sb_printf(&js, ",\n    \"loss_scale\": ");
    json_num(&js, trn_loss_scale(run));
    sb_printf(&js, ",\n    \"skipped_steps\": %ld\n  },\n", skipped + 0L);
    sb_printf(&js, "  \"timing\": {\"wall_s\": %.3f, \"steps_per_s\": %.3f, \"threads\": %llu, \"resumed_at\": %ld}\n}\n",
              wall, wall > 0 ? (double)((long)steps - start_step) / wall : 0.0, threads, start_step);
    if (write_file(out, "metrics.csv", met.p, met.n) || write_file(out, "tensors.csv", ten.p, ten.n) ||
        write_file(out, "eval.csv", ev.p, ev.n) || write_file(out, "summary.json", js.p, js.n)) {
        cli_error(SUB, "%s: cannot write the results: %s", out, strerror(errno));
        free(js.p);
        goto done;
    }
    free(js.p);
    rc = 0;
done:
    trn_close(run);
    free(met.p); free(ten.p); free(ev.p);
    return rc;
}
