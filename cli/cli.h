/* SPDX-License-Identifier: MIT */
/* cli.h: the subcommands of bin/fpemu and helpers they share. Each
 * subcommand is `int cmd_NAME(int argc, char **argv)` (argv[0] is the
 * subcommand name) returning the exit status: 0 success, 1 a verification
 * found mismatches, 2 bad usage or bad input. */
#ifndef FPEMU_CLI_H
#define FPEMU_CLI_H
#include <signal.h>
#include <stdio.h>
#include "fpemu.h"
#include "../gpu/host/outfile.h" /* fpemu_out: the output-file rule */

int cmd_formats(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_drift(int argc, char **argv);
int cmd_mma(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_errk(int argc, char **argv);
int cmd_cast(int argc, char **argv);
int cmd_compare(int argc, char **argv);

/* Print "fpemu SUB: message" on stderr; returns 2 (the bad-input status). */
int cli_error(const char *sub, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s written into HTML text or an attribute: < > & " escaped (NULL: nothing). */
void cli_html_esc(FILE *f, const char *s);
/* Whether s ends with suffix. */
int cli_has_suffix(const char *s, const char *suffix);
/* s as a JSON string: in quotes, " and \ escaped, control characters as
 * \u00XX, other bytes as they are (UTF-8 stays UTF-8). malloc'ed; NULL if
 * out of memory. cli_json_str writes it to f: 0, or -1. */
char *cli_json_quote(const char *s);
int cli_json_str(FILE *f, const char *s);
/* True if s is "--help" or "-h". */
int cli_is_help(const char *s);
/* Parse a non-negative integer / a double; return 0 on success, -1 on garbage. */
int cli_parse_u64(const char *s, unsigned long long *out);
/* The largest code of a format: its field (bits + pad), not its container
 * (e2m1's codes are 0..F, e3m2's 0..3F), as `fpemu run` checks. */
uint64_t cli_code_max(const fpemu_format *f);
/* One hex field of 1..digits digits (either case) into *v: 0, -1 when it is
 * not that, -2 when the code is above max. */
int cli_parse_hex(const char *s, size_t len, int digits, uint64_t max, uint64_t *v);
int cli_parse_double(const char *s, double *out);
/* Write a file under the output rule of gpu/host/outfile.h (shared with
 * bin/fpemu-gpu): a new path or a regular file gets PATH.tmp.PID, renamed
 * over PATH when complete; a symbolic link is followed (its target is
 * written that way, in the target's folder), never replaced; a device or
 * FIFO is written directly, never replaced; a directory is refused.
 * Open with cli_atomic_open, write to a.f, finish with
 * cli_atomic_close(a, ok): on ok the file is in place, else the temporary
 * is removed. Both return 0 on success, -1 (errno set) on failure. */
typedef fpemu_out cli_atomic;
int cli_atomic_open(cli_atomic *a, const char *path, const char *mode);
int cli_atomic_close(cli_atomic *a, int ok);
/* Remove DIR/NAME.tmp.PID, for each NAME of the NULL-terminated list, left
 * by a writer that was killed: only when PID is not a running process (a
 * live writer's file, this process's included, is kept; a PID reused by an
 * unrelated process keeps a stale file, never removes a live one). Returns
 * the number removed. */
int cli_atomic_clean(const char *dir, const char *const *names);
/* End of a subcommand that wrote to standard output: flush it and check
 * every write (the stream's error flag). rc, or 2 after "fpemu SUB: cannot
 * write standard output: REASON" on stderr. */
int cli_stdout_done(const char *sub, int rc);
/* gnuplot, the one runner of bin/fpemu's pictures (fpemu cast --plot, fpemu
 * report): `gnuplot [-e VARS] SCRIPT` in folder DIR (NULL: this one), its
 * standard output to /dev/null, its standard error to ERRLOG (a path from
 * this process's folder; NULL: this process's standard error). When *STOP
 * (if given) is set while it runs (a signal interrupting the wait), gnuplot
 * is sent SIGTERM. Returns its wait status: exit 127 when gnuplot is not on
 * PATH or could not be started, 126 when ERRLOG or DIR could not be used. */
int cli_gnuplot(const char *dir, const char *errlog, const char *vars, const char *script, const volatile sig_atomic_t *stop);
/* 1 if the picture at PATH is complete, a PNG (it ends with the IEND chunk)
 * or an SVG (it ends with </svg>), and on the disk (fsync'ed); else 0.
 * gnuplot can exit 0 after a short write (a full disk). */
int cli_image_done(const char *path, int png);
#endif
