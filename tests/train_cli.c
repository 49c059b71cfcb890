/* SPDX-License-Identifier: MIT */
/* train_cli.c: `fpemu train` from the C tests (t_train, t_harden_state). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "train_cli.h"

int tcli_train(const char *bin, const char *tmp, const char *args, char *errbuf, size_t n) {
    char cmd[4096], ef[512];
    snprintf(ef, sizeof ef, "%s/stderr.txt", tmp);
    snprintf(cmd, sizeof cmd, "%s train %s --quiet >/dev/null 2>%s", bin, args, ef);
    int st = system(cmd);
    if (errbuf && n) {
        errbuf[0] = 0;
        FILE *f = fopen(ef, "r");
        if (f) { size_t k = fread(errbuf, 1, n - 1, f); errbuf[k] = 0; fclose(f); }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
