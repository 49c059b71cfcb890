/* SPDX-License-Identifier: MIT */
/* train_cli.h: run `BIN train ARGS --quiet` from a test program. */
#ifndef FPEMU_TEST_TRAIN_CLI_H
#define FPEMU_TEST_TRAIN_CLI_H
#include <stddef.h>
/* Runs the command through the shell with its standard error in
 * TMP/stderr.txt, copied into errbuf (n bytes, NUL-terminated; errbuf may be
 * NULL). Returns the exit status, or -1 if the program did not exit. */
int tcli_train(const char *bin, const char *tmp, const char *args, char *errbuf, size_t n);
#endif
