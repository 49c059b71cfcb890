/* SPDX-License-Identifier: MIT */
/* cmd_train.c: `fpemu train`, a training run of the engine in
 * experiments/ written to a folder (metrics.csv, tensors.csv, eval.csv,
 * summary.json; checkpoint.bin every checkpoint_every steps). A checkpoint
 * holds the run state and the rows so far, so `--resume DIR` ends with
 * exactly the files of an uninterrupted run.
 *
 * The run folder is committed as a whole (docs/hardening.md, "Training state
 * and run folders"): every file of a commit is written into a new sibling
 * folder .NAME.tmp.PID and fsync'ed, then that folder is exchanged with DIR
 * in one renameat2(RENAME_EXCHANGE) (or put in place by rename when DIR does
 * not exist yet), so DIR never holds files of two runs; the old folder is
 * then removed. Files in DIR that fpemu did not write are carried into the
 * new folder (hard links before the exchange). A lock file .NAME.lock
 * beside DIR (flock, released by the kernel when the process dies) keeps a
 * second writer out. summary.json's "files" lists every other file of the
 * folder with its size and CRC-32, so readers can refuse a folder whose
 * files do not belong together. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "csv.h"
#include "npy.h"
#include "npz.h"
#include "safetensors.h"
#include "train.h"

#define SUB "train"

/* A growing buffer. A failed allocation sets failed and keeps what was
 * there; every later append does nothing, so callers check failed once
 * before they use the text. */
typedef struct { char *p; size_t n, cap; int failed; } sbuf;

static int sb_reserve(sbuf *b, size_t extra) {
    if (b->failed) return -1;
    if (extra > SIZE_MAX / 2 - b->n) { b->failed = 1; return -1; }
    if (b->n + extra + 1 <= b->cap) return 0;
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->n + extra + 1) nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np) { b->failed = 1; return -1; }
    b->p = np; b->cap = nc;
    return 0;
}

static void sb_put(sbuf *b, const void *d, size_t n) {
    if (sb_reserve(b, n)) return;
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) { b->failed = 1; return; }
    if (sb_reserve(b, (size_t)k)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu train --model M --policy P --out DIR [--steps N] [--seed S]\n"
            "                   [--set key=value ...] [--config FILE] [--quiet] [--threads T] [--save-state]\n"
            "                   [--init PATH] [--order FILE.npy]\n"
            "       fpemu train --resume DIR [--steps N] [--out DIR2] [--quiet] [--threads T] [--save-state]\n\n"
            "Writes DIR/metrics.csv (one row per step), DIR/tensors.csv (telemetry per layer and\n"
            "tensor class every tensors_every steps), DIR/eval.csv and DIR/summary.json; with\n"
            "checkpoint_every=N also DIR/checkpoint.bin. Defaults: --steps 200, --seed 1.\n"
            "DIR is replaced as a whole when the run ends (and at each checkpoint); one writer\n"
            "at a time (a lock file .DIR.lock beside it).\n"
            "A config file holds `key = value` lines (the keys below, and model, policy, steps,\n"
            "seed), each key at most once; `#` starts a comment. --set overrides the config file.\n"
            "--save-state also writes DIR/state.safetensors: the final parameters as the twin's state_dict\n"
            "(safetensors.torch.load_file, then load_state_dict; --init reads it too).\n"
            "--init PATH starts from a PyTorch state_dict: an .npz, a safetensors file or a folder of\n"
            "KEY.npy files, every parameter of the model's PyTorch twin (python/fpemu/twins.py), f32\n"
            "(f64, f16 and a safetensors file's bf16 read too).\n"
            "--order FILE.npy: int32/int64 indices into the digits training rows 0..1499, batch_size\n"
            "per step, at least steps x batch_size of them (mlp-digits, deep-mlp). docs/replay.md.\n\nmodels:");
    for (int i = 0; trn_model_names[i]; i++) fprintf(out, " %s", trn_model_names[i]);
    fprintf(out, "\npolicies:");
    for (int i = 0; trn_policy_names[i]; i++) fprintf(out, " %s", trn_policy_names[i]);
    fprintf(out, "\nkeys:");
    for (int i = 0; i < trn_settings_count(); i++) fprintf(out, "%s%s", i % 8 ? " " : "\n  ", trn_settings_key(i));
    fprintf(out, "\n");
}

typedef struct { char key[64]; char val[256]; char where[300]; int line; } kv;

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
    return s;
}

/* Append an entry to a kv list; -1 when out of memory (the list is kept). */
static kv *kv_add(kv **list, int *n) {
    if (*n >= INT_MAX / 2) return NULL;
    kv *np = realloc(*list, (size_t)(*n + 1) * sizeof **list);
    if (!np) return NULL;
    *list = np;
    kv *e = &np[(*n)++];
    memset(e, 0, sizeof *e);
    return e;
}

/* One line of f into line (at most cap - 1 bytes, without its '\n'): 1, 0 at
 * the end, -1 for a line too long, -2 for a NUL byte, -3 for a read error. */
static int get_line(FILE *f, char *line, size_t cap) {
    size_t n = 0;
    int c, any = 0;
    while ((c = getc(f)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (c == 0) return -2;
        if (n + 1 >= cap) return -1;
        line[n++] = (char)c;
    }
    line[n] = 0;
    if (ferror(f)) return -3;
    return any;
}

static int read_config(const char *path, kv **list, int *n) {
    FILE *f = fopen(path, "r");
    if (!f) return cli_error(SUB, "--config %s: cannot open: %s", path, strerror(errno));
    char line[1024];
    int ln = 0, g;
    while ((g = get_line(f, line, sizeof line)) > 0) {
        ln++;
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
        /* a key given twice is an error: one of the values would be dropped without a word */
        for (int i = 0; i < *n; i++)
            if (!strcmp((*list)[i].key, k)) {
                fclose(f);
                return cli_error(SUB, "%s:%d: duplicate key '%s' (lines %d and %d; give each key once)", path, ln, k,
                                 (*list)[i].line, ln);
            }
        kv *e = kv_add(list, n);
        if (!e) { fclose(f); return cli_error(SUB, "%s:%d: out of memory", path, ln); }
        snprintf(e->key, sizeof e->key, "%s", k);
        snprintf(e->val, sizeof e->val, "%s", v);
        snprintf(e->where, sizeof e->where, "%s:%d", path, ln);
        e->line = ln;
    }
    if (g == -1) { fclose(f); return cli_error(SUB, "%s:%d: line too long (1023 bytes at most)", path, ln + 1); }
    if (g == -2) { fclose(f); return cli_error(SUB, "%s:%d: a NUL byte (expected text)", path, ln + 1); }
    if (g == -3) { /* e.g. a directory: fopen succeeds, reading fails */
        int e = errno;
        fclose(f);
        return cli_error(SUB, "--config %s: cannot read: %s", path, strerror(e));
    }
    fclose(f);
    return 0;
}

static int mkdir_p(const char *dir) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp) { errno = ENAMETOOLONG; return -1; }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
    struct stat st;
    if (stat(tmp, &st)) return -1;
    if (!S_ISDIR(st.st_mode)) { errno = ENOTDIR; return -1; }
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- checkpoint file: magic, steps, four length-prefixed blobs, CRC-32 ----
 * The blobs: the run state (trn_state_save), then the metrics, tensors and
 * eval rows so far (each CSV with its header line). All integers are
 * little-endian u64. */
static const char CK_MAGIC[] = "FPEMUCKPT 1\n";
enum { CK_BLOBS = 4 };

static void put_u64(sbuf *b, uint64_t v) {
    unsigned char c[8];
    for (int i = 0; i < 8; i++) c[i] = (unsigned char)(v >> (8 * i));
    sb_put(b, c, 8);
}
static void put_blob(sbuf *b, const void *d, size_t n) {
    put_u64(b, n);
    sb_put(b, d, n);
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The checkpoint's bytes into *out (the caller frees out->p); -1 when out of memory. */
static int build_checkpoint(sbuf *out, trn_run *run, long steps, const sbuf *m, const sbuf *t, const sbuf *e) {
    unsigned char *st;
    size_t stn;
    if (trn_state_save(run, &st, &stn)) return -1;
    sbuf b = {0};
    sb_put(&b, CK_MAGIC, strlen(CK_MAGIC));
    put_u64(&b, (uint64_t)steps);
    put_blob(&b, st, stn);
    put_blob(&b, m->p ? m->p : "", m->n);
    put_blob(&b, t->p ? t->p : "", t->n);
    put_blob(&b, e->p ? e->p : "", e->n);
    free(st);
    if (b.failed) { free(b.p); return -1; }
    uint32_t crc = trn_crc32(b.p, b.n);
    unsigned char c[4] = {(unsigned char)crc, (unsigned char)(crc >> 8), (unsigned char)(crc >> 16), (unsigned char)(crc >> 24)};
    sb_put(&b, c, 4);
    if (b.failed) { free(b.p); return -1; }
    *out = b;
    return 0;
}

/* The run's latest checkpoint, replacing *ck (0, or an error naming OUT's
 * checkpoint.bin when out of memory). */
static int take_checkpoint(sbuf *ck, trn_run *run, unsigned long long steps, const sbuf *m, const sbuf *t, const sbuf *e,
                           const char *out) {
    sbuf nb = {0};
    if (build_checkpoint(&nb, run, (long)steps, m, t, e)) return cli_error(SUB, "%s/checkpoint.bin: cannot write: out of memory", out);
    free(ck->p);
    *ck = nb;
    return 0;
}

/* A checkpoint kept from before --resume --steps changed the run's length
 * names the new length, as one written by this run would: its step count
 * (the default --steps of the next --resume) and CRC-32 rewritten. */
static void restamp_checkpoint(sbuf *ck, unsigned long long steps) {
    size_t ml = strlen(CK_MAGIC);
    if (!ck->p || ck->n < ml + 12) return;
    unsigned char *p = (unsigned char *)ck->p;
    for (int i = 0; i < 8; i++) p[ml + (size_t)i] = (unsigned char)(steps >> (8 * i));
    uint32_t crc = trn_crc32(p, ck->n - 4);
    for (int i = 0; i < 4; i++) p[ck->n - 4 + (size_t)i] = (unsigned char)(crc >> (8 * i));
}

/* A checkpoint as read: its bytes (kept: the run folder's checkpoint.bin
 * until the run writes a newer one), the steps it was written for, its
 * state and rows, and the file's identity (to notice a replacement). */
typedef struct {
    sbuf bytes;
    long steps;
    const unsigned char *blob[CK_BLOBS];
    size_t blen[CK_BLOBS];
    dev_t dev; ino_t ino;
} ck_file;

/* Read PATH, bounded by what its header declares: the magic first, then
 * each length checked against the bytes the file has left before anything
 * is allocated; then the CRC over the whole, and no byte after it. */
static int read_checkpoint(const char *dir, const char *path, ck_file *ck) {
    memset(ck, 0, sizeof *ck);
    FILE *f = fopen(path, "rb");
    if (!f) return cli_error(SUB, "--resume %s: cannot open %s: %s", dir, path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st)) { int e = errno; fclose(f); return cli_error(SUB, "%s: cannot stat: %s", path, strerror(e)); }
    if (!S_ISREG(st.st_mode)) { fclose(f); return cli_error(SUB, "%s: not a regular file", path); }
    ck->dev = st.st_dev; ck->ino = st.st_ino;
    uint64_t size = (uint64_t)st.st_size;
    size_t ml = strlen(CK_MAGIC);
    unsigned char head[sizeof CK_MAGIC + 8];
    size_t got = fread(head, 1, ml, f);
    if (got < ml || memcmp(head, CK_MAGIC, ml)) {
        fclose(f);
        return cli_error(SUB, "%s: not an fpemu checkpoint (expected the header '%.10s')", path, CK_MAGIC);
    }
    uint64_t min = ml + 8 + CK_BLOBS * 8 + 4;
    if (size < min) { fclose(f); return cli_error(SUB, "%s: truncated checkpoint (%llu bytes, at least %llu expected)", path, (unsigned long long)size, (unsigned long long)min); }
    /* walk the declared lengths */
    uint64_t pos = ml + 8;
    for (int i = 0; i < CK_BLOBS; i++) {
        unsigned char lb[8];
        if (fseeko(f, (off_t)pos, SEEK_SET) || fread(lb, 1, 8, f) != 8) {
            fclose(f);
            return cli_error(SUB, "%s: truncated checkpoint (no length for part %d of %d)", path, i + 1, CK_BLOBS);
        }
        uint64_t l = get_u64(lb);
        pos += 8;
        if (l > size - 4 - pos || pos > size - 4) {
            fclose(f);
            return cli_error(SUB, "%s: truncated checkpoint (part %d of %d declares %llu bytes, %llu are left)", path, i + 1,
                             CK_BLOBS, (unsigned long long)l, (unsigned long long)(pos <= size - 4 ? size - 4 - pos : 0));
        }
        pos += l;
    }
    if (pos + 4 != size) {
        fclose(f);
        return cli_error(SUB, "%s: %llu bytes after the checkpoint's CRC-32 (expected %llu bytes in all)", path,
                         (unsigned long long)(size - pos - 4), (unsigned long long)(pos + 4));
    }
    if (size > SIZE_MAX / 2) { fclose(f); return cli_error(SUB, "%s: too large (%llu bytes)", path, (unsigned long long)size); }
    if (sb_reserve(&ck->bytes, (size_t)size)) {
        fclose(f);
        free(ck->bytes.p); ck->bytes.p = NULL;
        return cli_error(SUB, "%s: out of memory reading %llu bytes", path, (unsigned long long)size);
    }
    if (fseeko(f, 0, SEEK_SET) || fread(ck->bytes.p, 1, (size_t)size, f) != (size_t)size || fgetc(f) != EOF) {
        fclose(f);
        free(ck->bytes.p); ck->bytes.p = NULL;
        return cli_error(SUB, "%s: changed while it was read (another writer?)", path);
    }
    fclose(f);
    ck->bytes.n = (size_t)size;
    ck->bytes.p[size] = 0;
    const unsigned char *p = (const unsigned char *)ck->bytes.p, *c = p + size - 4;
    if (trn_crc32(p, (size_t)size - 4) != ((uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24)) {
        free(ck->bytes.p); ck->bytes.p = NULL;
        return cli_error(SUB, "%s: corrupt checkpoint (CRC-32 mismatch)", path);
    }
    /* the lengths again, from the bytes the CRC covers */
    size_t q = ml;
    uint64_t steps = get_u64(p + q);
    q += 8;
    for (int i = 0; i < CK_BLOBS; i++) {
        uint64_t l = get_u64(p + q);
        q += 8;
        if (l > size - 4 - q) { free(ck->bytes.p); ck->bytes.p = NULL; return cli_error(SUB, "%s: truncated checkpoint", path); }
        ck->blob[i] = p + q;
        ck->blen[i] = (size_t)l;
        q += (size_t)l;
    }
    if (steps < 1 || steps > TRN_STEPS_MAX) {
        free(ck->bytes.p); ck->bytes.p = NULL;
        return cli_error(SUB, "%s: the run's step count %lld is out of range (expected 1..%d, as --steps)", path,
                         (long long)steps, TRN_STEPS_MAX);
    }
    ck->steps = (long)steps;
    return 0;
}

static const char MET_HEAD[] = "step,loss,grad_norm,loss_scale,skipped,overflow,underflow,lr,casts\n";
static const char TEN_HEAD[] = "step,layer,class,format,n,amax,scale,overflow,underflow,saturated,subnormal,nonfinite_in\n";
static const char EV_HEAD[] = "step,eval_loss,eval_accuracy\n";

/* A value for the CSVs and the progress line: a NaN of either sign prints as "nan" (glibc prints
 * a negative one, as inf - inf gives on x86, as "-nan"). */
static double nan_plus(double v) { return isnan(v) ? fabs(v) : v; }

/* The rows a checkpoint carries, checked against its state: the header;
 * text lines only (no NUL, each ends in '\n'), each with the CSV's number
 * of fields and a step of 0..STEP (eval), 1..STEP (tensors: 1 or a multiple
 * of tensors_every), never decreasing; metrics: exactly one row for each of
 * the steps 1..STEP, in order. Returns 0, or -1 with a message in err. */
static int check_rows(int which, const unsigned char *p, size_t n, long step, const trn_settings *s, char *err, size_t errlen) {
    static const char *const names[3] = {"metrics", "tensors", "eval"};
    const char *head = which == 0 ? MET_HEAD : which == 1 ? TEN_HEAD : EV_HEAD;
    int fields = which == 0 ? 9 : which == 1 ? 12 : 3;
    size_t hl = strlen(head);
    if (n < hl || memcmp(p, head, hl)) { snprintf(err, errlen, "%s rows: the header is not '%.*s'", names[which], (int)hl - 1, head); return -1; }
    if (memchr(p, 0, n)) { snprintf(err, errlen, "%s rows: a NUL byte", names[which]); return -1; }
    if (p[n - 1] != '\n') { snprintf(err, errlen, "%s rows: the last row has no end of line", names[which]); return -1; }
    long prev = -1, rows = 0;
    for (size_t i = hl; i < n;) {
        const unsigned char *e = memchr(p + i, '\n', n - i);
        size_t ll = (size_t)(e - (p + i));
        int commas = 0;
        for (size_t k = 0; k < ll; k++) commas += p[i + k] == ',';
        char num[24];
        size_t dl = 0;
        while (dl < ll && dl < sizeof num - 1 && p[i + dl] >= '0' && p[i + dl] <= '9') { num[dl] = (char)p[i + dl]; dl++; }
        num[dl] = 0;
        rows++;
        if (commas != fields - 1 || dl == 0 || dl > 9 || dl >= ll || p[i + dl] != ',' || (dl > 1 && num[0] == '0')) {
            snprintf(err, errlen, "%s rows: row %ld is not %d fields starting with a step", names[which], rows, fields);
            return -1;
        }
        long st = strtol(num, NULL, 10);
        int bad = st > step || st < prev;
        if (which == 0) bad = st != rows;
        if (which == 1) bad = bad || st < 1 || (st != 1 && (s->tensors_every <= 0 || st % s->tensors_every));
        if (which == 2) bad = bad || st == prev || (rows == 1 && st != 0);
        if (bad) {
            snprintf(err, errlen, "%s rows: row %ld has step %ld, which a run at step %ld cannot have written there", names[which],
                     rows, st, step);
            return -1;
        }
        prev = st;
        i += ll + 1;
    }
    if (which == 0 && rows != step) {
        snprintf(err, errlen, "metrics rows: %ld rows for a run at step %ld (one row per step)", rows, step);
        return -1;
    }
    if (which == 2 && rows < 1) { snprintf(err, errlen, "eval rows: no row for step 0"); return -1; }
    return 0;
}

/* Load DIR/checkpoint.bin: the file (read_checkpoint), its state
 * (trn_state_load: every field validated), its rows against the state, and
 * the state against its origin: eval.csv's row 0 is the evaluation of the
 * initial parameters, which model, policy, settings and seed determine, so a
 * state relabelled with another model, policy or seed is refused. */
static int load_checkpoint(const char *dir, trn_run **run, ck_file *ck, sbuf *m, sbuf *t, sbuf *e) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/checkpoint.bin", dir) >= (int)sizeof path) return cli_error(SUB, "--resume %s: path too long", dir);
    if (read_checkpoint(dir, path, ck)) return 2;
    char err[512];
    if (trn_state_load(run, ck->blob[0], ck->blen[0], err, sizeof err)) {
        free(ck->bytes.p); ck->bytes.p = NULL;
        return cli_error(SUB, "%s: bad run state: %s", path, err);
    }
    long step = trn_steps_done(*run);
    const trn_settings *s = trn_run_settings(*run);
    int bad = 0;
    if (step > ck->steps) {
        snprintf(err, sizeof err, "the state is at step %ld, beyond the run's %ld steps (a checkpoint is written at or before "
                 "the last step)", step, ck->steps);
        bad = 1;
    }
    for (int i = 0; i < 3 && !bad; i++) bad = check_rows(i, ck->blob[i + 1], ck->blen[i + 1], step, s, err, sizeof err) != 0;
    if (!bad) {
        trn_run *r0 = NULL;
        double l0, a0;
        if (trn_open_initial(&r0, *run, err, sizeof err)) bad = 1;
        else if (trn_eval(r0, &l0, &a0)) {
            trn_close(r0);
            snprintf(err, sizeof err, "evaluating the initial parameters: out of memory");
            bad = 1;
        } else {
            trn_close(r0);
            char want[128];
            snprintf(want, sizeof want, "0,%.9g,%.9g\n", nan_plus(l0), nan_plus(a0));
            const char *row0 = (const char *)ck->blob[3] + strlen(EV_HEAD);
            size_t rl = strcspn(row0, "\n") + 1;
            if (rl != strlen(want) || memcmp(row0, want, rl)) {
                snprintf(err, sizeof err, "eval row '%.*s' is not the evaluation of the initial parameters of model %s, policy %s, "
                         "seed %llu with these settings ('%.*s'): the state and its rows are not of one run",
                         (int)rl - 1, row0, s->model, s->policy, (unsigned long long)trn_run_seed(*run), (int)strlen(want) - 1, want);
                bad = 1;
            }
        }
    }
    if (bad) {
        trn_close(*run); *run = NULL;
        free(ck->bytes.p); ck->bytes.p = NULL;
        return cli_error(SUB, "%s: bad checkpoint: %s", path, err);
    }
    sbuf *outs[3] = {m, t, e};
    for (int i = 0; i < 3; i++) {
        outs[i]->n = 0;
        sb_put(outs[i], ck->blob[i + 1], ck->blen[i + 1]);
        if (outs[i]->failed) {
            trn_close(*run); *run = NULL;
            free(ck->bytes.p); ck->bytes.p = NULL;
            return cli_error(SUB, "%s: out of memory", path);
        }
    }
    return 0;
}

/* ---- the run folder: locked, committed as a whole ---------------------- */

static const char *const OUTPUTS[] = {"checkpoint.bin", "metrics.csv", "tensors.csv", "eval.csv", "summary.json",
                                      "state.safetensors", NULL};

static int is_output(const char *name) {
    for (int i = 0; OUTPUTS[i]; i++) if (!strcmp(name, OUTPUTS[i])) return 1;
    return 0;
}

typedef struct {
    const char *arg;      /* --out as given (messages) */
    char parent[4096];    /* the folder that holds it */
    char name[256];
    char path[4400];      /* parent/name: the folder replaced at each commit */
    char lock[4400];      /* parent/.name.lock */
    int lock_fd;
} outdir;

typedef struct { const char *name; const void *data; size_t n; } outfile;

static int join(char *dst, size_t cap, const char *a, const char *b) {
    if (snprintf(dst, cap, "%s/%s", a, b) >= (int)cap) { errno = ENAMETOOLONG; return -1; }
    return 0;
}

/* A sibling folder of ours, .NAME.tmp.PID or .NAME.old.PID: its PID, else 0. */
static long sibling_pid(const outdir *o, const char *ent) {
    size_t nl = strlen(o->name);
    if (ent[0] != '.' || strncmp(ent + 1, o->name, nl)) return 0;
    const char *q = ent + 1 + nl;
    if (strncmp(q, ".tmp.", 5) && strncmp(q, ".old.", 5)) return 0;
    q += 5;
    char *end;
    errno = 0;
    long pid = strtol(q, &end, 10);
    if (q[0] < '1' || q[0] > '9' || *end || errno || pid <= 0) return 0;
    return pid;
}

/* Empty folder OLD, which held (or was to hold) a run of o->path, and
 * remove it: fpemu's outputs go; an entry that is
 * also in o->path (the same file: a hard link made for the carry-over)
 * goes; any other entry (a file that fpemu did not write, caught in OLD by
 * a kill) is moved back into o->path when that name is free there, else
 * kept, and so is OLD then. */
static void drain_folder(const outdir *o, const char *old) {
    DIR *d = opendir(old);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char a[4800], b[4800];
        if (join(a, sizeof a, old, e->d_name) || join(b, sizeof b, o->path, e->d_name)) continue;
        int ours = is_output(e->d_name);
        struct stat sa, sb;
        if (lstat(a, &sa)) continue;
        int in_dir = lstat(b, &sb) == 0;
        if (ours || (in_dir && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && !S_ISDIR(sa.st_mode))) unlink(a);
        else if (!in_dir) rename(a, b);
    }
    closedir(d);
    rmdir(old);
}

/* Folders left beside o->path by a writer that was killed (its PID gone):
 * drained and removed. Called with the lock held. */
static void clean_siblings(const outdir *o) {
    DIR *d = opendir(o->parent);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid = sibling_pid(o, e->d_name);
        if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char p[4800];
        if (join(p, sizeof p, o->parent, e->d_name)) continue;
        drain_folder(o, p);
    }
    closedir(d);
}

/* Where --out lives, and its lock. An existing DIR (or a symbolic link to
 * one) is resolved to its real path, so the link stays and the folder it
 * names is replaced; a new DIR's parent is created. The lock is a flock on
 * parent/.NAME.lock: the kernel drops it when the process ends, however it
 * ends, so a killed writer never blocks the next one; the file is removed
 * on release, and a writer that locked a file just removed tries again. */
static int outdir_open(outdir *o, const char *out) {
    memset(o, 0, sizeof *o);
    o->arg = out;
    o->lock_fd = -1;
    char buf[4096];
    struct stat st;
    if (lstat(out, &st) == 0) {
        if (!realpath(out, buf)) return cli_error(SUB, "--out %s: cannot resolve: %s", out, strerror(errno));
        if (stat(buf, &st) || !S_ISDIR(st.st_mode)) return cli_error(SUB, "--out %s: exists and is not a folder", out);
        /* a folder its owner made read-only is not replaced */
        if (access(buf, W_OK)) return cli_error(SUB, "--out %s: cannot write the folder: %s", out, strerror(errno));
    } else if (errno == ENOENT) {
        if (snprintf(buf, sizeof buf, "%s", out) >= (int)sizeof buf) return cli_error(SUB, "--out %s: path too long", out);
    } else {
        return cli_error(SUB, "--out %s: %s", out, strerror(errno));
    }
    size_t l = strlen(buf);
    while (l > 1 && buf[l - 1] == '/') buf[--l] = 0;
    char *slash = strrchr(buf, '/');
    const char *name = slash ? slash + 1 : buf;
    if (slash == buf) snprintf(o->parent, sizeof o->parent, "/");
    else if (slash) { *slash = 0; snprintf(o->parent, sizeof o->parent, "%s", buf); }
    else snprintf(o->parent, sizeof o->parent, ".");
    if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) + 24 >= sizeof o->name)
        return cli_error(SUB, "--out %s: expected a folder name (the folder is replaced as a whole)", out);
    memcpy(o->name, name, strlen(name) + 1); /* fits: checked above (snprintf here made gcc -O1 warn of truncation) */
    if (join(o->path, sizeof o->path, o->parent, o->name)) return cli_error(SUB, "--out %s: path too long", out);
    if (mkdir_p(o->parent)) return cli_error(SUB, "--out %s: cannot create or write the folder: %s", out, strerror(errno));
    if (snprintf(o->lock, sizeof o->lock, "%s/.%s.lock", o->parent, o->name) >= (int)sizeof o->lock)
        return cli_error(SUB, "--out %s: path too long", out);
    for (int tries = 0;; tries++) {
        int fd = open(o->lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0) return cli_error(SUB, "--out %s: cannot create or write the folder (lock file %s): %s", out, o->lock, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB)) {
            int e = errno;
            char pid[32] = "";
            ssize_t k = pread(fd, pid, sizeof pid - 1, 0);
            if (k > 0) pid[k] = 0, pid[strcspn(pid, "\n")] = 0;
            close(fd);
            if (e == EWOULDBLOCK)
                return cli_error(SUB, "--out %s: another fpemu train%s%s%s is writing this folder (it holds %s); wait for it to "
                                 "end or choose another --out", out, pid[0] ? " (process " : "", pid, pid[0] ? ")" : "", o->lock);
            return cli_error(SUB, "--out %s: cannot lock %s: %s", out, o->lock, strerror(e));
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(o->lock, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            o->lock_fd = fd;
            break;
        }
        close(fd); /* the file was removed by the writer that released it: lock the new one */
        if (tries > 100) return cli_error(SUB, "--out %s: cannot lock %s", out, o->lock);
    }
    char pid[32];
    int k = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(o->lock_fd, 0) || pwrite(o->lock_fd, pid, (size_t)k, 0) != k) { /* the PID is only for messages */ }
    clean_siblings(o);
    return 0;
}

static void outdir_close(outdir *o) {
    if (o->lock_fd < 0) return;
    unlink(o->lock); /* while still locked: the next writer then locks a new file */
    close(o->lock_fd);
    o->lock_fd = -1;
}

static int fsync_path(const char *p) {
    int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static int write_all(int fd, const void *d, size_t n) {
    const char *p = d;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) { if (errno == EINTR) continue; return -1; }
        p += k; n -= (size_t)k;
    }
    return 0;
}

/* Commit the n files as the whole content of o->path (with the files in it
 * that fpemu did not write). On failure nothing in o->path has changed, the
 * new folder is removed and the message names the file. */
static int outdir_commit(const outdir *o, const outfile *files, int n) {
    char tmp[4800], p[5000];
    if (snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", o->parent, o->name, (long)getpid()) >= (int)sizeof tmp)
        return cli_error(SUB, "--out %s: path too long", o->arg);
    drain_folder(o, tmp); /* a leftover of this process (none expected) */
    if (mkdir(tmp, 0777)) return cli_error(SUB, "--out %s: cannot create the new folder %s: %s", o->arg, tmp, strerror(errno));
    for (int i = 0; i < n; i++) {
        int fd = join(p, sizeof p, tmp, files[i].name) ? -1 : open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        int bad = fd < 0 || write_all(fd, files[i].data, files[i].n) || fsync(fd);
        int e = errno;
        if (fd >= 0 && close(fd) && !bad) bad = 1, e = errno;
        if (bad) {
            drain_folder(o, tmp);
            return cli_error(SUB, "%s/%s: cannot write: %s (%s is unchanged)", o->arg, files[i].name, strerror(e), o->arg);
        }
    }
    struct stat st;
    int exists = lstat(o->path, &st) == 0;
    if (exists && !S_ISDIR(st.st_mode)) {
        drain_folder(o, tmp);
        return cli_error(SUB, "--out %s: %s exists and is not a folder", o->arg, o->path);
    }
    if (exists) {
        /* carry over what fpemu did not write: hard links now, so each such
         * file stays visible in DIR; what cannot be linked moves after */
        cli_atomic_clean(o->path, OUTPUTS); /* temporaries of killed writers */
        DIR *d = opendir(o->path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || is_output(e->d_name)) continue;
            char a[4800];
            if (join(a, sizeof a, o->path, e->d_name) || join(p, sizeof p, tmp, e->d_name)) continue;
            struct stat es;
            if (lstat(a, &es) == 0 && !S_ISDIR(es.st_mode)) link(a, p);
        }
        if (d) closedir(d);
    }
    if (fsync_path(tmp)) {
        int e = errno;
        drain_folder(o, tmp);
        return cli_error(SUB, "--out %s: cannot sync the new folder: %s (%s is unchanged)", o->arg, strerror(e), o->arg);
    }
    if (!exists) {
        if (rename(tmp, o->path)) {
            int e = errno;
            drain_folder(o, tmp);
            return cli_error(SUB, "--out %s: cannot put the new folder in place: %s", o->arg, strerror(e));
        }
    } else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, o->path, RENAME_EXCHANGE)) {
        /* no atomic exchange on this file system: the old folder moves aside,
         * the new one takes its name; in between DIR does not exist (never
         * does it hold files of two runs) */
        int e = errno;
        char aside[4800];
        if ((e != EINVAL && e != ENOSYS && e != ENOTSUP) ||
            snprintf(aside, sizeof aside, "%s/.%s.old.%ld", o->parent, o->name, (long)getpid()) >= (int)sizeof aside ||
            rename(o->path, aside)) {
            drain_folder(o, tmp);
            return cli_error(SUB, "--out %s: cannot replace the folder: %s (%s is unchanged)", o->arg, strerror(errno), o->arg);
        }
        if (rename(tmp, o->path)) {
            e = errno;
            rename(aside, o->path);
            drain_folder(o, tmp);
            return cli_error(SUB, "--out %s: cannot put the new folder in place: %s (%s is unchanged)", o->arg, strerror(e), o->arg);
        }
        snprintf(tmp, sizeof tmp, "%s", aside);
    }
    fsync_path(o->parent);
    if (exists) drain_folder(o, tmp); /* the old run's files go, anything else comes back */
    return 0;
}
static void json_str(sbuf *b, const char *s) {
    char *q = cli_json_quote(s);
    if (q) sb_printf(b, "%s", q);
    else b->failed = 1;
    free(q);
}


static void json_source(sbuf *js, const trn_run *run, int which, const char *name) {
    const char *p;
    uint32_t c;
    if (trn_get_source(run, which, &p, &c)) return;
    sb_printf(js, "\n  \"%s\": {\"path\": ", name);
    json_str(js, p);
    sb_printf(js, ", \"crc32\": \"%08x\"", (unsigned)c);
    if (which == TRN_SRC_ORDER) sb_printf(js, ", \"indices\": %zu", trn_order_len(run));
    sb_printf(js, "},");
}

static void json_num(sbuf *b, double v) {
    if (isfinite(v)) sb_printf(b, "%.9g", v);
    else sb_printf(b, "null");
}


/* summary.json's "files": each other file of the folder, its size and CRC-32 */
static void json_files(sbuf *js, const outfile *f, int n) {
    sb_printf(js, "  \"files\": {");
    for (int i = 0; i < n; i++)
        sb_printf(js, "%s\n    \"%s\": {\"bytes\": %zu, \"crc32\": \"%08x\"}", i ? "," : "", f[i].name, f[i].n,
                  (unsigned)trn_crc32(f[i].data, f[i].n));
    sb_printf(js, "\n  },\n");
}

/* ---- --init and --order ----------------------------------------------------- */

/* The bytes of a file of at most max bytes (malloc'ed, *n of them): 0, or
 * -1 with a message naming the option and the file. */
static int slurp_file(const char *opt, const char *path, size_t max, unsigned char **buf, size_t *n) {
    char *b = csv_slurp_max(path, max, n);
    if (!b && errno == EFBIG) return cli_error(SUB, "%s %s: more than the %zu MiB expected here", opt, path, max >> 20);
    if (!b) return cli_error(SUB, "%s %s: cannot read: %s", opt, path, strerror(errno));
    *buf = (unsigned char *)b;
    return 0;
}

/* One array (a .npy's bytes) into the run's parameter KEY: f32 as it is,
 * f16 exactly, f64 to the engine as f64 (rounded to the parameters' format
 * there, as load_state_dict's copy rounds). 0, or 2 after a message. */
static int init_array(trn_run *run, const char *path, const char *key, const char *file, const unsigned char *bytes, size_t n) {
    char err[1024];
    npy_array a;
    if (npy_parse(bytes, n, file, &a, err, sizeof err)) return cli_error(SUB, "--init %s: %s", path, err);
    if (a.dtype != NPY_F4 && a.dtype != NPY_F8 && a.dtype != NPY_F2) {
        cli_error(SUB, "--init %s: %s: dtype '%s', expected float32 ('<f4'; '<f8' and '<f2' are read too)", path, key,
                  npy_dtype_name(a.dtype));
        npy_free(&a);
        return 2;
    }
    long shape[2] = {(long)a.rows, (long)a.cols};
    if (a.ndim == 1) shape[0] = (long)a.cols;
    int rc = 0;
    if (a.dtype == NPY_F8) {
        double *v = malloc(a.n * sizeof *v + 1);
        if (!v) { npy_free(&a); return cli_error(SUB, "--init %s: out of memory", path); }
        for (size_t i = 0, k = 0; i < a.rows; i++)
            for (size_t j = 0; j < a.cols; j++) v[k++] = npy_get(&a, i, j);
        if (trn_set_param_f64(run, key, v, shape, a.ndim, err, sizeof err)) rc = cli_error(SUB, "--init %s: %s", path, err);
        free(v);
    } else {
        float *v = malloc(a.n * sizeof *v + 1);
        if (!v) { npy_free(&a); return cli_error(SUB, "--init %s: out of memory", path); }
        for (size_t i = 0, k = 0; i < a.rows; i++)
            for (size_t j = 0; j < a.cols; j++, k++) {
                if (a.dtype == NPY_F4) { /* the bits as they are (a NaN keeps its payload) */
                    uint32_t u = (uint32_t)npy_code(&a, i, j);
                    memcpy(&v[k], &u, 4);
                } else {
                    v[k] = (float)npy_get(&a, i, j);
                }
            }
        if (trn_set_param(run, key, v, shape, a.ndim, err, sizeof err)) rc = cli_error(SUB, "--init %s: %s", path, err);
        free(v);
    }
    npy_free(&a);
    return rc;
}

/* --init PATH as a safetensors file: its bytes b (n of them). Every tensor
 * F32 (its bits as they are), F64 (to the engine as f64), F16 or BF16
 * (exact); keys and shapes as in an .npz. 0, or 2 after a message. */
static int init_safetensors(trn_run *run, const char *path, const unsigned char *b, size_t n) {
    char err[1024];
    st_file S;
    if (st_parse(b, n, n, path, &S, err, sizeof err)) return cli_error(SUB, "--init %s", err);
    int rc = 0;
    for (int i = 0; i < S.count && !rc; i++) {
        const st_tensor *t = &S.t[i];
        const unsigned char *d = b + 8 + S.header_len + t->begin;
        if (t->dtype != ST_F32 && t->dtype != ST_F64 && t->dtype != ST_F16 && t->dtype != ST_BF16) {
            rc = cli_error(SUB, "--init %s: %s: dtype %s, expected F32 (F64, F16 and BF16 are read too)", path, t->name,
                           st_dtype_get(t->dtype)->name);
            break;
        }
        long shape[ST_MAXDIM] = {0};
        for (int k = 0; k < t->ndim; k++) shape[k] = (long)t->shape[k]; /* checked against the key's (trn_set_param) */
        if (t->dtype == ST_F64) {
            double *v = malloc(t->n * sizeof *v + 1);
            if (!v) { rc = cli_error(SUB, "--init %s: out of memory", path); break; }
            memcpy(v, d, t->n * sizeof *v); /* little-endian host (Makefile checks) */
            if (trn_set_param_f64(run, t->name, v, shape, t->ndim, err, sizeof err)) rc = cli_error(SUB, "--init %s: %s", path, err);
            free(v);
            continue;
        }
        float *v = malloc(t->n * sizeof *v + 1);
        if (!v) { rc = cli_error(SUB, "--init %s: out of memory", path); break; }
        const fpemu_format *h = fpemu_format_get(t->dtype == ST_F16 ? "f16" : "bf16", NULL, 0);
        for (uint64_t k = 0; k < t->n; k++) {
            if (t->dtype == ST_F32) { memcpy(&v[k], d + 4 * k, 4); continue; } /* the bits as they are */
            uint16_t c;
            memcpy(&c, d + 2 * k, 2);
            v[k] = (float)fpemu_to_double(h, c);
        }
        if (trn_set_param(run, t->name, v, shape, t->ndim, err, sizeof err)) rc = cli_error(SUB, "--init %s: %s", path, err);
        free(v);
    }
    st_free(&S);
    return rc;
}

/* --init PATH: an .npz, a safetensors file, or a folder of KEY.npy files
 * (other files in it are not read); every key of the model's twin, each
 * once. The source's CRC-32: the .npz or safetensors file's bytes, or the
 * folder's KEY.npy files' bytes in the twin's key order. 0, or 2 after a
 * message. */
static int load_init(trn_run *run, const char *path) {
    char err[1024];
    struct stat st;
    if (stat(path, &st)) return cli_error(SUB, "--init %s: cannot open: %s", path, strerror(errno));
    const trn_param_key *keys;
    int nk = trn_param_keys(run, &keys);
    uint32_t crc = 0;
    if (S_ISDIR(st.st_mode)) {
        /* every KEY.npy of the folder must be a key of the model */
        DIR *d = opendir(path);
        if (!d) return cli_error(SUB, "--init %s: cannot read the folder: %s", path, strerror(errno));
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t l = strlen(e->d_name);
            if (l < 5 || strcmp(e->d_name + l - 4, ".npy") || e->d_name[0] == '.') continue;
            int known = 0;
            for (int i = 0; i < nk && !known; i++) known = l - 4 == strlen(keys[i].key) && !strncmp(e->d_name, keys[i].key, l - 4);
            if (!known) {
                char name[300];
                snprintf(name, sizeof name, "%.*s", (int)(l - 4), e->d_name);
                closedir(d);
                return cli_error(SUB, "--init %s: %s.npy: unknown key '%s' (model %s has %d keys; the first is '%s', the last '%s')",
                                 path, name, name, trn_run_settings(run)->model, nk, keys[0].key, keys[nk - 1].key);
            }
        }
        closedir(d);
        for (int i = 0; i < nk; i++) {
            char fp[4400];
            if (snprintf(fp, sizeof fp, "%s/%s.npy", path, keys[i].key) >= (int)sizeof fp) return cli_error(SUB, "--init %s: path too long", path);
            struct stat fs;
            if (stat(fp, &fs) && errno == ENOENT) continue; /* trn_init_finish names the first key missing */
            unsigned char *b;
            size_t n;
            if (slurp_file("--init", fp, NPZ_MEMBER_MAX, &b, &n)) return 2;
            crc = trn_crc32_update(crc, b, n);
            char file[TRN_KEY_MAX + 8];
            snprintf(file, sizeof file, "%s.npy", keys[i].key);
            int rc = init_array(run, path, keys[i].key, file, b, n);
            free(b);
            if (rc) return rc;
        }
    } else if (npz_is_zip(path) != 1) { /* a safetensors file: the CRC-32 of its bytes */
        unsigned char *b;
        size_t n;
        if (slurp_file("--init", path, NPZ_FILE_MAX, &b, &n)) return 2;
        if (!st_sniff(b, n)) {
            free(b);
            return cli_error(SUB, "--init %s: neither an .npz (a zip archive), a safetensors file nor a folder of .npy files", path);
        }
        crc = trn_crc32(b, n);
        int rc = init_safetensors(run, path, b, n);
        free(b);
        if (rc) return rc;
    } else {
        npz_file z;
        if (npz_read(path, &z, err, sizeof err)) return cli_error(SUB, "--init %s", err);
        crc = z.crc;
        for (int i = 0; i < z.count; i++) {
            char key[300];
            snprintf(key, sizeof key, "%.*s", (int)(strlen(z.m[i].name) - 4), z.m[i].name);
            int rc = init_array(run, path, key, z.m[i].name, z.m[i].data, z.m[i].n);
            if (rc) { npz_free(&z); return rc; }
        }
        npz_free(&z);
    }
    if (trn_init_finish(run, err, sizeof err)) return cli_error(SUB, "--init %s: %s", path, err);
    if (trn_set_source(run, TRN_SRC_INIT, path, crc)) return cli_error(SUB, "--init %s: out of memory", path);
    return 0;
}

/* --order FILE.npy: int32 or int64 indices (1-d, or 2-d read in C order).
 * 0, or 2 after a message. */
static int load_order(trn_run *run, const char *path) {
    char err[1024];
    unsigned char *b;
    size_t n;
    if (slurp_file("--order", path, NPZ_MEMBER_MAX, &b, &n)) return 2;
    uint32_t crc = trn_crc32(b, n);
    npy_array a;
    int rc = npy_parse(b, n, path, &a, err, sizeof err);
    free(b);
    if (rc) return cli_error(SUB, "--order %s", err);
    if (a.dtype != NPY_I4 && a.dtype != NPY_I8) {
        cli_error(SUB, "--order %s: dtype '%s', expected int32 ('<i4') or int64 ('<i8') sample indices", path, npy_dtype_name(a.dtype));
        npy_free(&a);
        return 2;
    }
    int64_t *idx = malloc(a.n * sizeof *idx + 1);
    if (!idx) { npy_free(&a); return cli_error(SUB, "--order %s: out of memory", path); }
    for (size_t i = 0, k = 0; i < a.rows; i++)
        for (size_t j = 0; j < a.cols; j++) idx[k++] = npy_int(&a, i, j);
    rc = trn_set_order(run, idx, a.n, err, sizeof err) ? cli_error(SUB, "--order %s: %s", path, err) : 0;
    free(idx);
    npy_free(&a);
    if (!rc && trn_set_source(run, TRN_SRC_ORDER, path, crc)) rc = cli_error(SUB, "--order %s: out of memory", path);
    return rc;
}

/* The order must reach the run's last step. 0, or 2 after a message. */
static int order_covers(trn_run *run, unsigned long long steps) {
    size_t n = trn_order_len(run);
    long B = trn_run_settings(run)->batch_size;
    if (!n || (unsigned long long)n / (unsigned long long)B >= steps) return 0;
    const char *p;
    uint32_t c;
    if (trn_get_source(run, TRN_SRC_ORDER, &p, &c)) p = "(the checkpoint's)";
    return cli_error(SUB, "--order %s: holds %zu indices, but %llu steps at batch_size %ld need %llu", p, n, steps, B,
                     steps * (unsigned long long)B);
}

/* summary.json's "init" / "order": the source's path and CRC-32 */
static void json_source(sbuf *js, const trn_run *run, int which, const char *name);

/* --save-state: the run's parameters as a safetensors file of the twin's
 * state_dict (keys, shapes and layouts as --init reads them), in the
 * parameters' own dtype (F32, F16, BF16 or F64; F64 where they are not one
 * format's values), exactly; metadata: format "pt" and the model, policy and
 * step. The bytes into *buf (malloc'ed). 0, or 2 after a message. */
static int state_bytes(const trn_run *run, unsigned long long step, char **buf, size_t *len) {
    const trn_param_key *keys;
    int nk = trn_param_keys(run, &keys);
    const char *pn = trn_param_format(run);
    int d = pn ? st_dtype_of_format(pn) : -1;
    st_dtype dt = d == ST_F16 || d == ST_BF16 || d == ST_F32 || d == ST_F64 ? (st_dtype)d : ST_F64;
    const fpemu_format *pf = dt == ST_F16 || dt == ST_BF16 ? fpemu_format_get(pn, NULL, 0) : NULL; /* their codes */
    st_out *o = calloc((size_t)nk + 1, sizeof *o);
    uint64_t(*shapes)[2] = calloc((size_t)nk + 1, sizeof *shapes);
    FILE *m = open_memstream(buf, len);
    if (!o || !shapes || !m) {
        free(o), free(shapes);
        if (m) fclose(m), free(*buf);
        *buf = NULL;
        return cli_error(SUB, "state.safetensors: out of memory");
    }
    for (int i = 0; i < nk; i++) {
        for (int k = 0; k < keys[i].ndim; k++) shapes[i][k] = (uint64_t)keys[i].shape[k];
        o[i] = (st_out){keys[i].key, dt, keys[i].ndim, shapes[i]};
    }
    const trn_settings *s = trn_run_settings(run);
    char stepv[32];
    snprintf(stepv, sizeof stepv, "%llu", step);
    char *mk[] = {"format", "fpemu_model", "fpemu_policy", "fpemu_step"};
    char *mv[] = {"pt", (char *)s->model, (char *)s->policy, stepv};
    char err[300];
    int rc = st_write_header(m, o, nk, mk, mv, 4, err, sizeof err) ? cli_error(SUB, "state.safetensors: %s", err) : 0;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    for (int i = 0; i < nk && !rc; i++) {
        size_t n;
        const double *v = trn_param_values(run, i, &n);
        for (size_t j = 0; j < n; j++) { /* exact: the values are the format's (little-endian host, Makefile checks) */
            if (dt == ST_F64) fwrite(&v[j], 8, 1, m);
            else if (dt == ST_F32) { float f = (float)v[j]; fwrite(&f, 4, 1, m); }
            else { uint16_t c = (uint16_t)fpemu_from_double(pf, v[j], &ctx); fwrite(&c, 2, 1, m); }
        }
    }
    free(o), free(shapes);
    if (fclose(m) && !rc) rc = cli_error(SUB, "state.safetensors: out of memory");
    if (rc) { free(*buf); *buf = NULL; }
    return rc;
}

int cmd_train(int argc, char **argv) {
    const char *model = NULL, *policy = NULL, *out = NULL, *resume = NULL, *config = NULL;
    unsigned long long steps = 200, seed = 1, threads = 1;
    int have_steps = 0, have_seed = 0, quiet = 0, save_state = 0;
    kv *sets = NULL;
    int nsets = 0;
    static const char *const opts[] = {"--model", "--policy", "--out", "--resume", "--config", "--steps", "--seed", "--threads",
                                       "--init", "--order", NULL};
    int given[10] = {0};
    const char *init = NULL, *order = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) { usage(stdout); free(sets); return 0; }
        if (!strcmp(a, "--quiet")) { quiet = 1; continue; }
        if (!strcmp(a, "--save-state")) { save_state = 1; continue; }
        int oi = -1;
        for (int k = 0; opts[k]; k++) if (!strcmp(a, opts[k])) oi = k;
        int takes = oi >= 0 || !strcmp(a, "--set");
        if (!takes) { free(sets); usage(stderr); return cli_error(SUB, "unknown option '%s'", a); }
        if (i + 1 >= argc) { free(sets); return cli_error(SUB, "%s needs a value", a); }
        const char *v = argv[++i];
        /* an option given twice would drop one of its values without a word */
        if (oi >= 0 && given[oi]++) { free(sets); return cli_error(SUB, "%s given twice (give it once)", a); }
        if (!strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "--policy")) policy = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--resume")) resume = v;
        else if (!strcmp(a, "--config")) config = v;
        else if (!strcmp(a, "--init")) init = v;
        else if (!strcmp(a, "--order")) order = v;
        else if (!strcmp(a, "--steps")) {
            if (cli_parse_u64(v, &steps) || steps < 1 || steps > TRN_STEPS_MAX) {
                free(sets);
                return cli_error(SUB, "--steps: expected an integer 1..%d, got '%s'", TRN_STEPS_MAX, v);
            }
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
            for (int k = 0; k < nsets; k++)
                if (strlen(sets[k].key) == (size_t)(eq - v) && !strncmp(sets[k].key, v, (size_t)(eq - v))) {
                    int rc = cli_error(SUB, "--set %.*s given twice ('%s' and '%s'; give each key once)", (int)(eq - v), v,
                                       sets[k].where + 6, v);
                    free(sets);
                    return rc;
                }
            kv *e = kv_add(&sets, &nsets);
            if (!e) { free(sets); return cli_error(SUB, "--set %s: out of memory", v); }
            snprintf(e->key, sizeof e->key, "%.*s", (int)(eq - v), v);
            snprintf(e->val, sizeof e->val, "%s", eq + 1);
            snprintf(e->where, sizeof e->where, "--set %s", v);
        }
    }
    char err[1024];
    trn_run *run = NULL;
    sbuf met = {0}, ten = {0}, ev = {0}, ck_bytes = {0}; /* ck_bytes: the run's latest checkpoint */
    char *state_p = NULL; /* --save-state: state.safetensors's bytes */
    size_t state_n = 0;
    long start_step = 0;
    int rc = 2;
    outdir od;
    memset(&od, 0, sizeof od);
    od.lock_fd = -1;
    ck_file ck;
    memset(&ck, 0, sizeof ck);
    if (resume) {
        if (model || policy || config || nsets || have_seed || init || order) {
            free(sets);
            return cli_error(SUB, "--resume DIR takes the run from DIR/checkpoint.bin: --model, --policy, --seed, "
                                  "--set, --config, --init and --order cannot be combined with it (the checkpoint keeps "
                                  "a run's --init and --order)");
        }
        free(sets);
        if (load_checkpoint(resume, &run, &ck, &met, &ten, &ev)) return 2;
        ck_bytes = ck.bytes;
        if (!have_steps) steps = (unsigned long long)ck.steps;
        if (!out) out = resume;
        start_step = trn_steps_done(run);
        if ((long)steps < start_step) {
            cli_error(SUB, "--steps %llu is below the checkpoint's step %ld", steps, start_step);
            goto done;
        }
        if (order_covers(run, steps)) goto done;
    } else {
        kv *cfg = NULL;
        int ncfg = 0;
        if (config && read_config(config, &cfg, &ncfg)) { free(cfg); free(sets); return 2; }
        /* model, policy, steps, seed from the config unless given on the command line */
        const char *cm = NULL, *cp = NULL;
        int bad = 0;
        for (int i = 0; i < ncfg && !bad; i++) {
            if (!strcmp(cfg[i].key, "model")) cm = cfg[i].val;
            else if (!strcmp(cfg[i].key, "policy")) cp = cfg[i].val;
            else if (!strcmp(cfg[i].key, "steps") && !have_steps) {
                if (cli_parse_u64(cfg[i].val, &steps) || steps < 1 || steps > TRN_STEPS_MAX)
                    bad = cli_error(SUB, "%s: steps: expected an integer 1..%d, got '%s'", cfg[i].where, TRN_STEPS_MAX, cfg[i].val);
            } else if (!strcmp(cfg[i].key, "seed") && !have_seed) {
                if (cli_parse_u64(cfg[i].val, &seed))
                    bad = cli_error(SUB, "%s: seed: expected a non-negative integer, got '%s'", cfg[i].where, cfg[i].val);
            }
        }
        if (!model) model = cm;
        if (!policy) policy = cp;
        if (!bad && (!model || !policy || !out)) {
            usage(stderr);
            bad = cli_error(SUB, "--model, --policy and --out are required (or --resume DIR)");
        }
        trn_settings s;
        if (!bad && trn_settings_init(&s, model, policy, err, sizeof err)) bad = cli_error(SUB, "%s", err);
        for (int pass = 0; pass < 2 && !bad; pass++) {
            kv *l = pass ? sets : cfg;
            int n = pass ? nsets : ncfg;
            for (int i = 0; i < n && !bad; i++) {
                if (!pass && (!strcmp(l[i].key, "model") || !strcmp(l[i].key, "policy") || !strcmp(l[i].key, "steps") ||
                              !strcmp(l[i].key, "seed")))
                    continue;
                if (trn_settings_set(&s, l[i].key, l[i].val, err, sizeof err)) bad = cli_error(SUB, "%s: %s", l[i].where, err);
            }
        }
        if (!bad && trn_settings_check(&s, err, sizeof err)) bad = cli_error(SUB, "%s", err);
        /* the messages above are printed before cfg and sets are freed: they point into them */
        free(cfg);
        free(sets);
        if (bad) return 2;
        /* the output folder: locked before any work is done */
        if (outdir_open(&od, out)) goto done;
        if (trn_open(&run, &s, seed, err, sizeof err)) { cli_error(SUB, "%s", err); goto done; }
        if (init && load_init(run, init)) goto done;
        if (order && (load_order(run, order) || order_covers(run, steps))) goto done;
        sb_printf(&met, "%s", MET_HEAD);
        sb_printf(&ten, "%s", TEN_HEAD);
        sb_printf(&ev, "%s", EV_HEAD);
    }
    if (resume) {
        /* the output folder: locked before any work is done */
        if (outdir_open(&od, out)) goto done;
        /* the checkpoint read must still be the folder's (no writer replaced it before the lock) */
        char cp[4400];
        struct stat st;
        snprintf(cp, sizeof cp, "%s/checkpoint.bin", resume);
        if (stat(cp, &st) || st.st_dev != ck.dev || st.st_ino != ck.ino) {
            cli_error(SUB, "--resume %s: checkpoint.bin was replaced while it was read (another writer?); try again", resume);
            goto done;
        }
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
        if (trn_eval(run, &eval_loss, &eval_acc)) { cli_error(SUB, "evaluation at step 0: out of memory"); goto done; }
        sb_printf(&ev, "0,%.9g,%.9g\n", nan_plus(eval_loss), nan_plus(eval_acc));
    }
    for (long st = start_step; st < (long)steps; st++) {
        if (trn_step(run, &rec, err, sizeof err)) { cli_error(SUB, "step %ld: %s", st + 1, err); rc = 1; goto done; }
        skipped += rec.skipped;
        sb_printf(&met, "%ld,%.9g,%.9g,%.9g,%d,%.9g,%.9g,%.9g,%llu\n", rec.step, nan_plus(rec.loss), nan_plus(rec.grad_norm), rec.loss_scale,
                  rec.skipped, rec.overflow, rec.underflow, rec.lr, (unsigned long long)rec.casts);
        if (s->tensors_every > 0 && (rec.step == 1 || rec.step % s->tensors_every == 0)) {
            trn_tensor_rec tr;
            for (int i = 0; i < trn_tensor_count(run); i++) {
                trn_tensor_get(run, i, &tr);
                sb_printf(&ten, "%ld,%s,%s,%s,%llu,%.9g,%.9g,%llu,%llu,%llu,%llu,%llu\n", rec.step, tr.layer, tr.cls,
                          tr.format, (unsigned long long)tr.n, nan_plus(tr.amax), nan_plus(tr.scale), (unsigned long long)tr.overflow,
                          (unsigned long long)tr.underflow, (unsigned long long)tr.saturated,
                          (unsigned long long)tr.subnormal, (unsigned long long)tr.nonfinite_in);
            }
        }
        /* A checkpoint holds the rows of any run that passes its step: at
         * the last step it is taken before the evaluation that only the end
         * of the run adds (eval_every does not divide the step), so that
         * --resume --steps N > step goes on as an N-step run would. */
        int scheduled_eval = s->eval_every > 0 && rec.step % s->eval_every == 0;
        int ck_due = s->checkpoint_every > 0 && rec.step % s->checkpoint_every == 0;
        if (ck_due && !scheduled_eval && rec.step == (long)steps && take_checkpoint(&ck_bytes, run, steps, &met, &ten, &ev, out))
            goto done;
        if (scheduled_eval || rec.step == (long)steps) {
            if (trn_eval(run, &eval_loss, &eval_acc)) { cli_error(SUB, "evaluation at step %ld: out of memory", rec.step); goto done; }
            sb_printf(&ev, "%ld,%.9g,%.9g\n", rec.step, nan_plus(eval_loss), nan_plus(eval_acc));
        }
        if (met.failed || ten.failed || ev.failed) { cli_error(SUB, "step %ld: out of memory for the rows", rec.step); goto done; }
        if (ck_due && (scheduled_eval || rec.step < (long)steps)) {
            if (take_checkpoint(&ck_bytes, run, steps, &met, &ten, &ev, out)) goto done;
            /* the folder holds this run's checkpoint alone: never a checkpoint
             * beside another run's results. The last step's goes out with the
             * run's final commit below. */
            outfile f = {"checkpoint.bin", ck_bytes.p, ck_bytes.n};
            if (rec.step < (long)steps && outdir_commit(&od, &f, 1)) goto done;
        }
        double t = now_s();
        if (!quiet && (t - last_print > 0.5 || rec.step == (long)steps)) {
            double rate = (double)(rec.step - start_step) / (t - t0 + 1e-9);
            fprintf(stderr, "\rstep %ld/%llu  loss %.4f  %.1f steps/s  ETA %.0fs   ", rec.step, steps, nan_plus(rec.loss), rate,
                    rate > 0 ? (double)((long)steps - rec.step) / rate : 0.0);
            if (rec.step == (long)steps) fputc('\n', stderr);
            last_print = t;
        }
    }
    double wall = now_s() - t0;
    if (start_step == (long)steps && isnan(eval_loss)) {
        if (trn_eval(run, &eval_loss, &eval_acc)) {
            cli_error(SUB, "evaluation at step %ld: out of memory", start_step);
            goto done;
        }
        /* resumed at its last step, no step run: the last step's loss
         * from its metrics row (written with %.9g, as summary.json's) */
        const char *last = NULL;
        for (const char *l = met.p ? strchr(met.p, '\n') : NULL; l && l[1]; l = strchr(l + 1, '\n')) last = l + 1;
        const char *f = last ? strchr(last, ',') : NULL;
        if (f) rec.loss = strtod(f + 1, NULL);
        /* and the evaluation the end of a run adds (a checkpoint's rows
         * hold only the scheduled ones) */
        if (start_step > 0 && !(s->eval_every > 0 && start_step % s->eval_every == 0)) {
            sb_printf(&ev, "%ld,%.9g,%.9g\n", start_step, nan_plus(eval_loss), nan_plus(eval_acc));
            if (ev.failed) { cli_error(SUB, "step %ld: out of memory for the rows", start_step); goto done; }
        }
    }
    restamp_checkpoint(&ck_bytes, steps);
    /* summary.json: everything to reproduce the run; "timing" is the only
     * part that differs between identical runs */
    outfile files[6] = {
        {"metrics.csv", met.p ? met.p : "", met.n},
        {"tensors.csv", ten.p ? ten.p : "", ten.n},
        {"eval.csv", ev.p ? ev.p : "", ev.n},
        {"checkpoint.bin", ck_bytes.p, ck_bytes.n},
    };
    int nfiles = ck_bytes.p ? 4 : 3;
    if (save_state) {
        if (state_bytes(run, steps, &state_p, &state_n)) goto done;
        files[nfiles++] = (outfile){"state.safetensors", state_p, state_n};
    }
    sbuf js = {0};
    sb_printf(&js, "{\n  \"fpemu_version\": \"%s\",\n  \"model\": ", FPEMU_VERSION);
    json_str(&js, s->model);
    sb_printf(&js, ",\n  \"policy\": ");
    json_str(&js, s->policy);
    sb_printf(&js, ",\n  \"gemm_backend\": ");
    json_str(&js, trn_gemm_backend());
    /* mma_algo=cublas: which tensor-core GEMM calls took a tree from the
     * table and which fell back to the plain model (absent under plain) */
    trn_gemm_calls groups[TRN_GEMM_CALLS_MAX];
    long from_table = 0, plain = 0;
    int ngroups = trn_gemm_call_groups(run, groups, TRN_GEMM_CALLS_MAX, &from_table, &plain);
    if (ngroups >= 0) {
        sb_printf(&js, ",\n  \"gemm_algo\": {\n    \"algo\": \"cublas\",\n    \"table\": ");
        json_str(&js, trn_gemm_table_name(run));
        sb_printf(&js, ",\n    \"calls_from_table\": %ld,\n    \"calls_plain\": %ld,\n    \"shapes\": [", from_table, plain);
        for (int g = 0; g < ngroups; g++) {
            sb_printf(&js, "%s\n      {\"a\": ", g ? "," : "");
            json_str(&js, groups[g].a);
            sb_printf(&js, ", \"b\": ");
            json_str(&js, groups[g].b);
            sb_printf(&js, ", \"m\": %d, \"n\": %d, \"k\": %d, \"table_line\": ", groups[g].M, groups[g].N, groups[g].K);
            if (groups[g].table_line) sb_printf(&js, "%d", groups[g].table_line);
            else sb_printf(&js, "null");
            sb_printf(&js, ", \"calls\": %ld}", groups[g].calls);
        }
        sb_printf(&js, "%s]\n  }", ngroups ? "\n    " : "");
    }
    sb_printf(&js, ",\n  \"seed\": %llu,\n  \"steps\": %llu,\n  \"parameters\": %zu,",
              (unsigned long long)trn_run_seed(run), steps, trn_param_count(run));
    json_source(&js, run, TRN_SRC_INIT, "init");
    json_source(&js, run, TRN_SRC_ORDER, "order");
    sb_printf(&js, "\n  \"settings\": {");
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
    json_files(&js, files, nfiles);
    sb_printf(&js, "  \"timing\": {\"wall_s\": %.3f, \"steps_per_s\": %.3f, \"threads\": %llu, \"resumed_at\": %ld}\n}\n",
              wall, wall > 0 ? (double)((long)steps - start_step) / wall : 0.0, threads, start_step);
    if (js.failed) { cli_error(SUB, "%s/summary.json: cannot write: out of memory", out); free(js.p); goto done; }
    files[nfiles++] = (outfile){"summary.json", js.p, js.n};
    if (outdir_commit(&od, files, nfiles)) { free(js.p); goto done; }
    free(js.p);
    rc = 0;
done:
    outdir_close(&od);
    trn_close(run);
    free(met.p); free(ten.p); free(ev.p); free(ck_bytes.p); free(state_p);
    return rc;
}
