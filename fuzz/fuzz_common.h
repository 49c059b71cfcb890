/* SPDX-License-Identifier: MIT */
/* fuzz_common.h: helpers shared by the libFuzzer targets in fuzz/. */
#ifndef FPEMU_FUZZ_COMMON_H
#define FPEMU_FUZZ_COMMON_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A NUL-terminated copy of the input (free it). */
static inline char *fz_str(const uint8_t *d, size_t n) {
    char *s = malloc(n + 1);
    if (!s) abort();
    memcpy(s, d, n);
    s[n] = 0;
    return s;
}

/* Write the input to a per-process scratch file; returns its path. */
static inline const char *fz_file(const uint8_t *d, size_t n, const char *suffix) {
    static char path[256];
    const char *dir = getenv("FUZZ_TMPDIR");
    snprintf(path, sizeof path, "%s/fpemu-fuzz-%ld%s", dir && *dir ? dir : "/tmp", (long)getpid(), suffix);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(d, 1, n, f) != n) abort();
    if (fclose(f)) abort();
    return path;
}
/* The code under test prints its messages; run the targets with
 * -close_fd_mask=3 (as `make fuzz` does) to silence them: libFuzzer and the
 * sanitizers keep a private copy of stderr for their reports. */
#endif
