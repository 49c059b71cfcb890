/* SPDX-License-Identifier: MIT */
/* tap.c: see tap.h. */
#include "tap.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count, tap_failed, tap_planned = -1;
static void print_one_line(const char *fmt, va_list ap);

void tap_plan(int n) { tap_planned = n; printf("1..%d\n", n); fflush(stdout); }
void tap_done(void) { if (tap_planned < 0) printf("1..%d\n", tap_count); fflush(stdout); }
int tap_exit_status(void) { return tap_failed || (tap_planned >= 0 && tap_count != tap_planned); }

void tap_skip_all(const char *why) { printf("1..0 # SKIP %s\n", why); fflush(stdout); exit(0); }

void tap_bail(const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    printf("Bail out! "); vprintf(fmt, ap); printf("\n");
    va_end(ap); fflush(stdout); exit(255);
}

void tap_diag(const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    printf("# "); print_one_line(fmt, ap); printf("\n");
    va_end(ap); fflush(stdout);
}

/* Print a formatted description on one line: a newline or carriage return
 * inside it (an error message quoted whole) would end the TAP line and
 * leave the rest as a line prove cannot parse, so each becomes a space. */
static void print_one_line(const char *fmt, va_list ap) {
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!b) { vprintf(fmt, ap); return; }
    vsnprintf(b, (size_t)n + 1, fmt, ap);
    for (char *c = b; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    fputs(b, stdout);
    free(b);
}

static int report(const char *file, int line, int cond, const char *fmt, va_list ap) {
    tap_count++;
    if (!cond) tap_failed++;
    printf("%sok %d - ", cond ? "" : "not ", tap_count);
    print_one_line(fmt, ap);
    printf("\n");
    if (!cond) printf("#   Failed at %s line %d.\n", file, line);
    fflush(stdout);
    return cond;
}

int tap_ok_at(const char *file, int line, int cond, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int r = report(file, line, cond, fmt, ap);
    va_end(ap); return r;
}
int tap_is_int_at(const char *file, int line, long long got, long long want, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int r = report(file, line, got == want, fmt, ap);
    va_end(ap);
    if (!r) printf("#        got: %lld\n#   expected: %lld\n", got, want);
    return r;
}
int tap_is_hex_at(const char *file, int line, uint64_t got, uint64_t want, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int r = report(file, line, got == want, fmt, ap);
    va_end(ap);
    if (!r) printf("#        got: 0x%" PRIX64 "\n#   expected: 0x%" PRIX64 "\n", got, want);
    return r;
}
int tap_is_str_at(const char *file, int line, const char *got, const char *want, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int eq = (got && want) ? strcmp(got, want) == 0 : got == want;
    int r = report(file, line, eq, fmt, ap);
    va_end(ap);
    if (!r) printf("#        got: '%s'\n#   expected: '%s'\n", got ? got : "(null)", want ? want : "(null)");
    return r;
}
uint64_t tap_seed(uint64_t dflt) {
    const char *s = getenv("FPEMU_SEED");
    uint64_t seed = s ? strtoull(s, NULL, 0) : dflt;
    printf("# seed %" PRIu64 " (set FPEMU_SEED to replay)\n", seed);
    return seed;
}
