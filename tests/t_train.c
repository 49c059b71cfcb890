/* SPDX-License-Identifier: MIT */
/* t_train.c: `fpemu train` end to end: byte-identical reruns whatever the
 * thread count, checkpoint + --resume equal to an uninterrupted run, and
 * bad input (unknown model/policy/key, wrong type or range, bad config,
 * unwritable folder, corrupt checkpoint): exit 2, a message naming the
 * input, no output files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tap.h"
#include "train_cli.h"

static const char *bin;
static char tmp[256];

static int run(const char *args, char *errbuf, size_t n) { return tcli_train(bin, tmp, args, errbuf, n); }

static char *slurp(const char *dir, const char *name, size_t *len) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = 0;
    fclose(f);
    *len = got;
    return b;
}

/* summary.json with its "timing" line (the documented non-reproducible part) removed */
static char *summary_sans_timing(const char *dir) {
    size_t n;
    char *s = slurp(dir, "summary.json", &n);
    if (!s) return NULL;
    char *t = strstr(s, "  \"timing\"");
    if (t) *t = 0;
    return s;
}

static int same_file(const char *d1, const char *d2, const char *name) {
    size_t n1, n2;
    char *a = slurp(d1, name, &n1), *b = slurp(d2, name, &n2);
    int same = a && b && n1 == n2 && !memcmp(a, b, n1);
    free(a); free(b);
    return same;
}

static int exists(const char *dir, const char *name) {
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

int main(void) {
    bin = getenv("FPEMU_BIN");
    if (!bin || access(bin, X_OK)) skip_all("FPEMU_BIN not set or not executable (run through make test)");
    snprintf(tmp, sizeof tmp, "/tmp/t_train.%ld", (long)getpid());
    mkdir(tmp, 0777);
    char a[4096], err[4096], d1[512], d2[512], d3[512], d4[512], d5[512];
    snprintf(d1, sizeof d1, "%s/a", tmp); snprintf(d2, sizeof d2, "%s/b", tmp); snprintf(d3, sizeof d3, "%s/c", tmp);
    snprintf(d4, sizeof d4, "%s/d", tmp); snprintf(d5, sizeof d5, "%s/e", tmp);
    const char *common = "--model mlp-digits --policy 16-mixed --steps 30 --seed 7 --set hidden=16 --set batch_size=8 "
                         "--set eval_every=10 --set tensors_every=5 --set growth_interval=4";
    snprintf(a, sizeof a, "%s --out %s", common, d1);
    int rc1 = run(a, err, sizeof err);
    snprintf(a, sizeof a, "%s --out %s", common, d2);
    int rc2 = run(a, err, sizeof err);
    snprintf(a, sizeof a, "%s --out %s --threads 2", common, d3);
    int rc3 = run(a, err, sizeof err);
    ok(rc1 == 0 && rc2 == 0 && rc3 == 0, "three runs succeed");
    const char *files[] = {"metrics.csv", "tensors.csv", "eval.csv"};
    for (int i = 0; i < 3; i++)
        ok(same_file(d1, d2, files[i]) && same_file(d1, d3, files[i]), "%s byte-identical across reruns and --threads 1/2", files[i]);
    char *s1 = summary_sans_timing(d1), *s2 = summary_sans_timing(d2), *s3 = summary_sans_timing(d3);
    ok(s1 && s2 && s3 && !strcmp(s1, s2) && !strcmp(s1, s3), "summary.json identical except its timing field");
    ok(s1 && strstr(s1, "\"policy\": \"16-mixed\"") && strstr(s1, "\"growth_interval\": 4") && strstr(s1, "\"seed\": 7"),
       "summary.json records policy, settings and seed");
    free(s1); free(s2); free(s3);
    size_t n;
    char *m = slurp(d1, "metrics.csv", &n);
    int lines = 0;
    for (size_t i = 0; m && i < n; i++) lines += m[i] == '\n';
    ok(m && !strncmp(m, "step,loss,grad_norm,loss_scale,skipped,overflow,underflow,lr", 60) && lines == 31,
       "metrics.csv: header and one row per step (%d lines)", lines);
    free(m);

    /* checkpoint every 20 of 30 steps; resume from the step-20 checkpoint */
    snprintf(a, sizeof a, "%s --out %s --set checkpoint_every=20", common, d4);
    int rc4 = run(a, err, sizeof err);
    ok(rc4 == 0 && exists(d4, "checkpoint.bin") && same_file(d1, d4, "metrics.csv"), "checkpointing run: same metrics, checkpoint.bin written");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s/checkpoint.bin %s/", d5, d4, d5);
    if (system(cmd) != 0) bail("cp failed");
    snprintf(a, sizeof a, "--resume %s", d5);
    int rc5 = run(a, err, sizeof err);
    ok(rc5 == 0, "--resume from step 20 succeeds (%s)", err);
    for (int i = 0; i < 3; i++) ok(same_file(d4, d5, files[i]), "resumed %s byte-identical to the uninterrupted run", files[i]);
    s1 = summary_sans_timing(d4); s2 = summary_sans_timing(d5);
    ok(s1 && s2 && !strcmp(s1, s2), "resumed summary.json identical except timing");
    free(s1); free(s2);

    /* A forward pass that overflows f32 (deep-mlp, input 1e30, weights
     * 1e3 times their usual size) gives a NaN loss, as in PyTorch: ReLU
     * propagates the NaN of inf - inf instead of turning it into 0 (which
     * gave a finite loss of ln 10 and hid the overflow). */
    snprintf(a, sizeof a, "--model deep-mlp --policy 32-true --steps 2 --set input_scale=1e30 --set init_gain=1e3 --out %s", d5);
    int rcn = run(a, err, sizeof err);
    m = slurp(d5, "metrics.csv", &n);
    char *row = m ? strchr(m, '\n') : NULL;
    double loss1 = row ? strtod(strchr(row, ',') ? strchr(row, ',') + 1 : row, NULL) : 0;
    ok(rcn == 0 && row && !strncmp(row + 1, "1,", 2) && isnan(loss1),
       "32-true whose activations overflow f32: step 1's loss is NaN (%d, %.*s)", rcn,
       row ? (int)strcspn(row + 1, "\n") : 14, row ? row + 1 : "no metrics.csv");
    size_t ne;
    char *e = slurp(d5, "eval.csv", &ne);
    ok(m && e && strstr(row, ",nan,") && !strstr(m, "-nan") && strstr(e, ",nan,") && !strstr(e, "-nan"),
       "a NaN prints as nan in metrics.csv and eval.csv, whatever its sign");
    free(m); free(e);
    /* and on the progress line (stderr, without --quiet) */
    snprintf(cmd, sizeof cmd, "rm -rf %s && %s train --model deep-mlp --policy 32-true --steps 1 --set input_scale=1e30 "
                              "--set init_gain=1e3 --out %s 2>%s/progress.txt >/dev/null", d5, bin, d5, tmp);
    int rcp = system(cmd);
    size_t np;
    char *pl = slurp(tmp, "progress.txt", &np);
    ok(rcp == 0 && pl && strstr(pl, "loss nan") && !strstr(pl, "-nan"), "a NaN loss prints as nan on the progress line (%.*s)",
       pl ? (int)strcspn(pl + (pl[0] == '\r'), "\n") : 7, pl ? pl + (pl[0] == '\r') : "nothing");
    free(pl);
    snprintf(cmd, sizeof cmd, "rm -rf %s", d5);
    if (system(cmd) != 0) bail("rm failed");

    /* corrupt checkpoint */
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp %s/checkpoint.bin %s/ && "
                              "printf 'X' | dd of=%s/checkpoint.bin bs=1 seek=100 conv=notrunc 2>/dev/null", d5, d5, d4, d5, d5);
    if (system(cmd) != 0) bail("corrupting failed");
    snprintf(a, sizeof a, "--resume %s", d5);
    int rc = run(a, err, sizeof err);
    ok(rc == 2 && strstr(err, "checkpoint.bin") && strstr(err, "corrupt") && !exists(d5, "metrics.csv"),
       "corrupt checkpoint: exit 2, names the file, no output (%d: %.120s)", rc, err);

    /* bad input */
    struct { const char *args, *needle, *what; } bad[] = {
        {"--model nope --policy 32-true", "nope", "unknown model"},
        {"--model mlp-digits --policy fp7", "fp7", "unknown policy"},
        {"--model mlp-digits --policy 32-true --set warp=1", "warp", "unknown key"},
        {"--model mlp-digits --policy 32-true --set lr=fast", "lr", "a value of the wrong type"},
        {"--model mlp-digits --policy 32-true --set batch_size=0", "batch_size", "a value out of range"},
        {"--model mlp-digits --policy 32-true --set fp8_format=E5M2", "fp8_format", "a bad choice"},
        {"--model mlp-digits --policy 32-true --steps -3", "--steps", "bad --steps"},
        {"--model tiny-transformer --policy 32-true --set d_model=10 --set heads=3", "heads", "inconsistent keys"},
        {"--model mlp-digits --policy bf16-mixed --set mma=v100", "v100", "a tensor-core model without the policy's formats"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char d[600];
        snprintf(d, sizeof d, "%s/bad%zu", tmp, i);
        snprintf(a, sizeof a, "%s --out %s", bad[i].args, d);
        rc = run(a, err, sizeof err);
        struct stat st;
        ok(rc == 2 && strstr(err, bad[i].needle) && stat(d, &st) != 0, "%s: exit 2, message names '%s', no output (%.100s)",
           bad[i].what, bad[i].needle, err);
    }
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s/run.cfg", tmp);
    FILE *f = fopen(cfg, "w");
    fprintf(f, "# a config\nmodel = mlp-digits\npolicy = bf16-mixed\nlr 0.1\n");
    fclose(f);
    snprintf(a, sizeof a, "--config %s --out %s/badcfg", cfg, tmp);
    rc = run(a, err, sizeof err);
    ok(rc == 2 && strstr(err, "run.cfg:4"), "config line without '=': exit 2, names FILE:LINE (%.100s)", err);
    f = fopen(cfg, "w");
    fprintf(f, "# a config\nmodel = mlp-digits   # comment\npolicy = bf16-mixed\nsteps = 3\nhidden = 8\nbatch_size=4\n");
    fclose(f);
    snprintf(a, sizeof a, "--config %s --out %s/goodcfg --set hidden=12", cfg, tmp);
    rc = run(a, err, sizeof err);
    char gd[600];
    snprintf(gd, sizeof gd, "%s/goodcfg", tmp);
    s1 = summary_sans_timing(gd);
    ok(rc == 0 && s1 && strstr(s1, "\"hidden\": 12") && strstr(s1, "\"batch_size\": 4") && strstr(s1, "\"steps\": 3"),
       "config file read; --set overrides it");
    free(s1);
    snprintf(a, sizeof a, "--model mlp-digits --policy 32-true --steps 2 --out /proc/nope/out");
    rc = run(a, err, sizeof err);
    ok(rc == 2 && strstr(err, "/proc/nope/out"), "unwritable output folder: exit 2, names it (%.100s)", err);
    snprintf(a, sizeof a, "--resume %s/nothing-here", tmp);
    rc = run(a, err, sizeof err);
    ok(rc == 2 && strstr(err, "nothing-here"), "--resume of a folder without a checkpoint: exit 2 (%.100s)", err);

    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0) diag("could not remove %s", tmp);
    return done_testing();
}
