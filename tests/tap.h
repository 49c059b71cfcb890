/* SPDX-License-Identifier: MIT */
/* tap.h: a small TAP producer for fpemu's test programs (after rra's
 * c-tap-harness and git's unit-test library). Checks print both sides on
 * failure, with the file and line of the call. */
#ifndef FPEMU_TAP_H
#define FPEMU_TAP_H
#include <stdint.h>

void tap_plan(int n);                 /* "1..n" up front */
void tap_done(void);                  /* "1..n" at the end (no plan given) */
void tap_skip_all(const char *why);   /* "1..0 # SKIP why", exit 0 */
void tap_bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tap_ok_at(const char *file, int line, int cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tap_is_int_at(const char *file, int line, long long got, long long want, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int tap_is_hex_at(const char *file, int line, uint64_t got, uint64_t want, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int tap_is_str_at(const char *file, int line, const char *got, const char *want, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int tap_exit_status(void);            /* 0 if every test passed */
/* Seed from $FPEMU_SEED if set, else the default; printed as a diag line. */
uint64_t tap_seed(uint64_t dflt);

#define ok(cond, ...) tap_ok_at(__FILE__, __LINE__, (cond), __VA_ARGS__)
#define is_int(got, want, ...) tap_is_int_at(__FILE__, __LINE__, (got), (want), __VA_ARGS__)
#define is_hex(got, want, ...) tap_is_hex_at(__FILE__, __LINE__, (got), (want), __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str_at(__FILE__, __LINE__, (got), (want), __VA_ARGS__)
#define diag tap_diag
#define plan tap_plan
#define done_testing() (tap_done(), tap_exit_status())
#define skip_all tap_skip_all
#define bail tap_bail
#endif
