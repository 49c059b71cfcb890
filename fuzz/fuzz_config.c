/* SPDX-License-Identifier: MIT */
/* fuzz_config.c: `fpemu train --config FILE` (the `key = value` reader of
 * cli/cmd_train.c, included here to reach its static functions), the
 * command line it completes and the settings it feeds (trn_settings_init /
 * trn_settings_set / _check of experiments/). The input is a config file;
 * it goes through cmd_train itself (with --out in a folder that cannot be
 * created, so a valid config stops at the output folder and no training
 * runs), which reaches every branch of the reader, the steps/seed checks and
 * their messages (issue 26: a message formatted from the freed config), and
 * then through the settings functions directly. Checks: no crash, no
 * sanitizer report, every rejection has a message. */
#define _GNU_SOURCE
#include "fuzz_common.h"
#define cmd_train fuzz_cmd_train /* the library has its own cmd_train */
#include "../cli/cmd_train.c"
#undef cmd_train

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 16384) return 0;
    const char *path = fz_file(d, n, ".cfg");
    /* the whole command: config, then model/policy/steps/seed, then settings;
     * /proc/fpemu-fuzz/out cannot be created, so nothing is trained or written */
    {
        char p[256], out[] = "/proc/fpemu-fuzz/out";
        snprintf(p, sizeof p, "%s", path);
        char *argv[] = {"train", "--config", p, "--out", out, "--quiet", NULL};
        int rc = fuzz_cmd_train(6, argv);
        if (rc != 2) { fprintf(stdout, "cmd_train: exit %d, expected 2 (the folder cannot be created)\n", rc); abort(); }
    }
    kv *list = NULL;
    int nkv = 0;
    if (read_config(path, &list, &nkv) == 0) {
        const char *model = "mlp-digits", *policy = "bf16-mixed";
        for (int i = 0; i < nkv; i++) {
            if (!strcmp(list[i].key, "model")) model = list[i].val;
            if (!strcmp(list[i].key, "policy")) policy = list[i].val;
            for (int j = 0; j < i; j++) if (!strcmp(list[i].key, list[j].key)) abort(); /* duplicates are refused */
        }
        trn_settings s;
        char err[512];
        err[0] = 0;
        if (trn_settings_init(&s, model, policy, err, sizeof err)) {
            if (!err[0]) abort();
        } else {
            for (int i = 0; i < nkv; i++) {
                if (!strcmp(list[i].key, "model") || !strcmp(list[i].key, "policy") || !strcmp(list[i].key, "steps") ||
                    !strcmp(list[i].key, "seed"))
                    continue;
                err[0] = 0;
                if (trn_settings_set(&s, list[i].key, list[i].val, err, sizeof err)) {
                    if (!err[0]) { fprintf(stdout, "trn_settings_set rejected without a message\n"); abort(); }
                }
            }
            err[0] = 0;
            if (trn_settings_check(&s, err, sizeof err) && !err[0]) abort();
            char buf[512];
            for (int i = 0; i < trn_settings_count(); i++) trn_settings_value(&s, i, buf, sizeof buf);
        }
    }
    free(list);
    unlink(path);
    return 0;
}
