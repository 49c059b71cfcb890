/* SPDX-License-Identifier: MIT */
/* vector.h: TestFloat-style vector lines, shared by `fpemu run` and
 * `fpemu verify` (Berkeley TestFloat's text format; docs/cli.md).
 *
 * A line holds the operands, then the result, then the flags, each in
 * upper-case hex of its format's width (fpemu_format_hex_digits), separated
 * by one space: `3C00 3C00 4000 00`. Comparison ops (FMT_eq, ...) have a
 * one-digit result, 0 or 1, as TestFloat writes them. */
#ifndef FPEMU_CLI_VECTOR_H
#define FPEMU_CLI_VECTOR_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "fpemu.h"

typedef enum vec_kind {
    VEC_ADD, VEC_SUB, VEC_MUL, VEC_DIV, VEC_SQRT, VEC_FMA,
    VEC_MIN, VEC_MAX, VEC_MIN_NUM, VEC_MAX_NUM,
    VEC_EQ, VEC_LE, VEC_LT, VEC_EQ_SIGNALING, VEC_LE_QUIET, VEC_LT_QUIET,
    VEC_CONVERT
} vec_kind;

#define VEC_MAX_FIELDS 5 /* three operands, result, flags */

typedef struct vec_op {
    char name[160];
    vec_kind kind;
    const fpemu_format *in;  /* operand format */
    const fpemu_format *out; /* result format; NULL for comparisons (0/1) */
    int nargs;               /* operands per line */
    int in_digits, out_digits;
    uint64_t in_max, out_max; /* largest code value accepted in a field */
} vec_op;

/* Parse an op name: FMT_add|sub|mul|div|sqrt|mulAdd|fma|min|max|
 * minimumNumber|maximumNumber|eq|le|lt|eq_signaling|le_quiet|lt_quiet,
 * or SRC_to_DST. Formats go through fpemu_format_get (aliases and custom
 * specs work). Returns 0, or -1 with a message in err. */
int vec_op_parse(const char *name, vec_op *op, char *err, size_t errlen);

/* Evaluate one line's operands; ctx->flags is cleared first and holds the
 * operation's flags after. */
uint64_t vec_eval(const vec_op *op, const uint64_t *a, fpemu_ctx *ctx);

/* Options shared by run and verify. */
typedef struct vec_cfg {
    const char *opname;
    fpemu_ctx ctx;
    const char *draws_path; /* --sr-draws FILE: line i's sr draw (NULL: the seed's stream) */
    uint64_t first_counter; /* --counter C: line i draws at counter C + i */
    int exact_nan;   /* verify: NaNs must match bit for bit */
    long max_print;  /* verify: mismatches printed (default 20) */
} vec_cfg;

/* Parse argv (argv[0] = "run" or "verify"). Returns 0 to go on, 2 after
 * printing a usage error, or -1 after printing the help text (exit 0). */
int vec_parse_args(int argc, char **argv, int verify, vec_cfg *cfg);

/* Buffered line reader for standard input: lines up to VEC_MAX_LINE bytes. */
#define VEC_MAX_LINE 4096
typedef struct vec_reader {
    FILE *in;
    char *buf;
    size_t cap, start, end;
    long lineno;
    int eof;
} vec_reader;
int vec_reader_init(vec_reader *r, FILE *in);
void vec_reader_free(vec_reader *r);
/* 1: a line in *line (len bytes, newline and a trailing CR removed, not
 * NUL-terminated); 0: end of input; -1: the line is longer than
 * VEC_MAX_LINE (r->lineno names it); -2: a read error. */
int vec_read_line(vec_reader *r, const char **line, size_t *len);

/* Split and check one line's fields. want_min..want_max is the accepted
 * number of fields (operands only = nargs, complete = nargs + 2). Values
 * land in v[0..n-1]; *nfields gets n. Returns 0, 1 for a line to skip
 * (blank, or a comment starting with '#'), or -1 with a message saying what
 * was expected in err. */
int vec_parse_line(const vec_op *op, const char *line, size_t len, int want_min, int want_max,
                   uint64_t *v, int *nfields, char *err, size_t errlen);

/* --sr-draws FILE: the caller's random bits, one 64-bit draw per line (1
 * to 16 hex digits; blank lines and '#' lines skipped), read in step with
 * the vector lines: vector line i's operation, if it takes a draw, takes
 * draw i (else draw i goes unused). */
typedef struct vec_draws {
    vec_reader rd;
    FILE *f;
    const char *path;
    uint64_t draw; /* the current line's draw (ctx->sr_stream points here) */
} vec_draws;
/* Open path; 0, or -1 with a message in err. */
int vec_draws_open(vec_draws *d, const char *path, char *err, size_t errlen);
/* The next draw into d->draw, and ctx's stream set to it alone. 0, or -1
 * with a message naming the file's line (or its end) in err. */
int vec_draws_next(vec_draws *d, fpemu_ctx *ctx, char *err, size_t errlen);
void vec_draws_close(vec_draws *d);

/* Write `digits` upper-case hex digits of v at p; returns p + digits. */
char *vec_put_hex(char *p, uint64_t v, int digits);
#endif
