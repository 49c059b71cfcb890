/* SPDX-License-Identifier: MIT */
/* t_harden_state.c: a checkpoint whose CRC-32 matches is not trusted
 * (issue 26, class 3). Each case forges a checkpoint.bin from a real one,
 * changes one field, recomputes the CRC and resumes it: every field must
 * be refused (exit 2, a message naming the file and the field) as strictly
 * as the command line refuses it, and against the rest of the state. The
 * unchanged re-assembly resumes (the forging itself is sound), and a loaded
 * state steps. Prints TAP. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tap.h"
#include "train_cli.h"
#include "train.h"

static const char *bin;
static char tmp[256];

static int run(const char *args, char *errbuf, size_t n) { return tcli_train(bin, tmp, args, errbuf, n); }

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

/* a checkpoint, taken apart: steps and the four parts (state, metrics, tensors, eval) */
typedef struct { uint64_t steps; unsigned char *part[4]; size_t len[4]; } ckpt;

static uint64_t get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}
static void put64(FILE *f, uint64_t v) {
    for (int i = 0; i < 8; i++) fputc((int)(v >> (8 * i)) & 255, f);
}

static int ck_parse(const unsigned char *b, size_t n, ckpt *c) {
    size_t pos = 12;
    if (n < 12 + 8 + 36 || memcmp(b, "FPEMUCKPT 1\n", 12)) return -1;
    c->steps = get64(b + pos); pos += 8;
    for (int i = 0; i < 4; i++) {
        c->len[i] = (size_t)get64(b + pos); pos += 8;
        c->part[i] = malloc(c->len[i] + 1);
        memcpy(c->part[i], b + pos, c->len[i]);
        pos += c->len[i];
    }
    return 0;
}

/* write DIR/checkpoint.bin from c, with a correct CRC-32 */
static void ck_write(const char *dir, const ckpt *c) {
    char p[600];
    mkdir(dir, 0777);
    snprintf(p, sizeof p, "%s/checkpoint.bin", dir);
    char *mem = NULL;
    size_t ml = 0;
    FILE *f = open_memstream(&mem, &ml);
    fwrite("FPEMUCKPT 1\n", 1, 12, f);
    put64(f, c->steps);
    for (int i = 0; i < 4; i++) { put64(f, c->len[i]); fwrite(c->part[i], 1, c->len[i], f); }
    fclose(f);
    uint32_t crc = trn_crc32(mem, ml);
    FILE *o = fopen(p, "wb");
    fwrite(mem, 1, ml, o);
    for (int i = 0; i < 4; i++) fputc((int)(crc >> (8 * i)) & 255, o);
    fclose(o);
    free(mem);
}

static ckpt ck_copy(const ckpt *c) {
    ckpt d = *c;
    for (int i = 0; i < 4; i++) { d.part[i] = malloc(c->len[i] + 1); memcpy(d.part[i], c->part[i], c->len[i]); }
    return d;
}
static void ck_free(ckpt *c) { for (int i = 0; i < 4; i++) free(c->part[i]); }

/* replace the first occurrence of `from` in part i by `to` */
static int ck_replace(ckpt *c, int i, const char *from, const char *to) {
    unsigned char *p = c->part[i];
    size_t fl = strlen(from), tl = strlen(to);
    for (size_t k = 0; k + fl <= c->len[i]; k++)
        if (!memcmp(p + k, from, fl)) {
            unsigned char *q = malloc(c->len[i] - fl + tl + 1);
            memcpy(q, p, k);
            memcpy(q + k, to, tl);
            memcpy(q + k + tl, p + k + fl, c->len[i] - k - fl);
            c->len[i] = c->len[i] - fl + tl;
            free(p);
            c->part[i] = q;
            return 0;
        }
    return -1;
}

/* offset of the binary part of the state (after "end\n") */
static size_t bin_off(const ckpt *c) {
    const unsigned char *p = c->part[0];
    for (size_t k = 0; k + 5 <= c->len[0]; k++)
        if (!memcmp(p + k, "\nend\n", 5)) return k + 5;
    return 0;
}

int main(void) {
    bin = getenv("FPEMU_BIN");
    if (!bin || access(bin, X_OK)) skip_all("FPEMU_BIN not set or not executable (run through make test)");
    snprintf(tmp, sizeof tmp, "/tmp/t_harden_state.%ld", (long)getpid());
    mkdir(tmp, 0777);
    char a[4096], err[4096], ref[512], d[600];
    snprintf(ref, sizeof ref, "%s/ref", tmp);
    /* 6 steps, checkpoint at 4: a dynamic GradScaler, Adam, telemetry and eval rows */
    snprintf(a, sizeof a, "--model mlp-digits --policy 16-mixed --steps 6 --seed 7 --set hidden=16 --set depth=2 "
                          "--set checkpoint_every=4 --set tensors_every=2 --set eval_every=2 --set growth_interval=3 --out %s", ref);
    if (run(a, err, sizeof err)) bail("the reference run failed: %s", err);
    char p[600];
    snprintf(p, sizeof p, "%s/checkpoint.bin", ref);
    size_t n;
    unsigned char *raw = slurp(p, &n);
    ckpt c;
    if (!raw || ck_parse(raw, n, &c)) bail("cannot read %s", p);
    size_t bo = bin_off(&c);
    if (!bo) bail("no end line in the state");

    struct { const char *what, *needle; int kind; uint64_t v; const char *from, *to; } cases[] = {
        /* kind 0: binary field at offset v of the state's binary part = to (as u64); 1: text replace in part v; 2: header steps */
        {"state step -1", "step", 0, 8, NULL, "-1"},
        {"state step 2^62", "step", 0, 8, NULL, "4611686018427387904"},
        {"state step 5 with 4 metrics rows", "metrics rows", 0, 8, NULL, "5"},
        {"GradScaler growth tracker at growth_interval", "growth tracker", 0, 999, NULL, "3"},
        {"optimizer step beyond the step", "optimizer step", 0, 16, NULL, "5"},
        {"parameter count 0", "parameters", 0, 24, NULL, "0"},
        {"header step count 2^62", "step count", 2, 0, NULL, "4611686018427387904"},
        {"header step count 0", "step count", 2, 0, NULL, "0"},
        {"header step count below the state's step", "beyond", 2, 0, NULL, "3"},
        {"another model's name over these weights", "not the evaluation", 1, 0, "model=mlp-digits\n", "model=deep-mlp\n"},
        {"another policy's name over these weights", "not the evaluation", 1, 0, "policy=16-mixed\n", "policy=bf16-true\n"},
        {"another seed", "not the evaluation", 0, 0, NULL, "8"},
        {"a setting out of its range", "batch_size", 1, 0, "batch_size=32\n", "batch_size=0\n"},
        {"a setting given twice", "twice", 1, 0, "lr=", "momentum=0.9\nlr="},
        {"an unknown setting", "unknown key", 1, 0, "margin=0\n", "margin=0\nwarp=9\n"},
        {"settings out of order (policy first)", "model=", 1, 0, "model=mlp-digits\npolicy=16-mixed\n", "policy=16-mixed\nmodel=mlp-digits\n"},
        {"a metrics row repeating a step", "metrics rows", 1, 1, "\n3,", "\n2,"},
        {"an eval row from the future", "eval rows", 1, 3, "\n4,", "\n5,"},
        {"a tensors row off its schedule", "tensors rows", 1, 2, "\n4,", "\n3,"},
        {"a metrics header changed", "metrics rows", 1, 1, "step,loss", "step,lost"},
        {"a NUL byte in the rows", "NUL", 1, 1, "\n3,", "\n3\0"},
    };
    int nc = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < nc; i++) {
        ckpt f = ck_copy(&c);
        int okf = 1;
        if (cases[i].kind == 0) {
            uint64_t v = strcmp(cases[i].to, "-1") ? strtoull(cases[i].to, NULL, 10) : UINT64_MAX;
            size_t off = (size_t)cases[i].v;
            if (off == 999) off = 32 + 3 * (size_t)get64(f.part[0] + bo + 24) * 8 + 4; /* after the parameters and the f32 scale */
            unsigned char *q = f.part[0] + bo + off;
            for (int k = 0; k < 8; k++) q[k] = (unsigned char)(v >> (8 * k));
        } else if (cases[i].kind == 1) {
            if (!strcmp(cases[i].what, "a NUL byte in the rows")) {
                okf = ck_replace(&f, 1, "\n3,", "\n3,") == 0;
                for (size_t k = 0; k + 3 <= f.len[1]; k++) if (!memcmp(f.part[1] + k, "\n3,", 3)) { f.part[1][k + 2] = 0; break; }
            } else {
                okf = ck_replace(&f, (int)cases[i].v, cases[i].from, cases[i].to) == 0;
            }
        } else {
            f.steps = strtoull(cases[i].to, NULL, 10);
        }
        snprintf(d, sizeof d, "%s/f%d", tmp, i);
        ck_write(d, &f);
        ck_free(&f);
        snprintf(a, sizeof a, "--resume %s", d);
        int rc = run(a, err, sizeof err);
        struct stat st;
        char mp[700];
        snprintf(mp, sizeof mp, "%s/metrics.csv", d);
        ok(okf && rc == 2 && strstr(err, "checkpoint.bin") && strstr(err, cases[i].needle) && stat(mp, &st) != 0,
           "%s: refused (exit 2, names the file and '%s', no output): %d %.300s", cases[i].what, cases[i].needle, rc, err);
    }
    /* the forging is sound: the unchanged parts re-assembled resume, byte-identical */
    snprintf(d, sizeof d, "%s/same", tmp);
    ck_write(d, &c);
    snprintf(a, sizeof a, "--resume %s", d);
    int rc = run(a, err, sizeof err);
    char q1[700], q2[700];
    snprintf(q1, sizeof q1, "%s/metrics.csv", d);
    snprintf(q2, sizeof q2, "%s/metrics.csv", ref);
    size_t n1 = 0, n2 = 0;
    unsigned char *m1 = slurp(q1, &n1), *m2 = slurp(q2, &n2);
    ok(rc == 0 && m1 && m2 && n1 == n2 && !memcmp(m1, m2, n1), "the unchanged checkpoint re-assembled resumes to the same metrics (%d %.200s)",
       rc, err);
    free(m1); free(m2);

    /* the library: a state with step -1 is refused, a valid one loads and steps */
    trn_run *r = NULL;
    char e2[512] = "";
    ckpt f = ck_copy(&c);
    memset(f.part[0] + bo + 8, 0xff, 8);
    ok(trn_state_load(&r, f.part[0], f.len[0], e2, sizeof e2) == -1 && !r && strstr(e2, "step"), "trn_state_load refuses step -1 (%s)", e2);
    ck_free(&f);
    e2[0] = 0;
    int lr = trn_state_load(&r, c.part[0], c.len[0], e2, sizeof e2);
    trn_step_rec rec;
    ok(lr == 0 && r && trn_steps_done(r) == 4 && trn_step(r, &rec, e2, sizeof e2) == 0 && rec.step == 5,
       "a valid state loads and steps on from step 4 (%s)", e2);
    trn_close(r);

    ck_free(&c);
    free(raw);
    snprintf(a, sizeof a, "rm -rf %s", tmp);
    if (system(a) != 0) diag("could not remove %s", tmp);
    return done_testing();
}
