/* SPDX-License-Identifier: MIT */
/* csv.h: a small CSV reader for the report and drift tools (the files that
 * `fpemu train`, `fpemu formats --csv` and the report sections write).
 * RFC 4180 quoting ("a,b" and "" inside quotes), a header line naming the
 * columns, every row with exactly as many fields; a trailing CR is ignored.
 * Errors name the file, the line and what was expected. */
#ifndef FPEMU_CSV_H
#define FPEMU_CSV_H
#include <stddef.h>

typedef struct csv_table {
    char path[1024];
    int ncols;
    long nrows;
    char **header;   /* ncols names */
    char **cells;    /* nrows x ncols, row-major; point into buf */
    long *lineno;    /* source line of each row (1-based; the header is line 1) */
    char *buf;
} csv_table;

/* Read a whole file into memory (NUL-terminated; *len without the NUL).
 * Returns NULL with errno set on failure. */
char *csv_slurp(const char *path, size_t *len);

/* Parse PATH. Returns 0; -1 if the file cannot be read (errno set, err says
 * why); -2 if it is malformed (err names the line and what was expected).
 * An empty file (no header) is malformed. */
int csv_read(csv_table *t, const char *path, char *err, size_t errlen);
void csv_free(csv_table *t);

/* Index of the column called NAME, or -1. */
int csv_col(const csv_table *t, const char *name);
static inline const char *csv_cell(const csv_table *t, long row, int col) {
    return t->cells[(size_t)row * (size_t)t->ncols + (size_t)col];
}
/* Parse a number as the tools write them: decimal or exponent forms, and
 * nan, inf, -inf in any case. Returns 0, or -1 if S is not a number. */
int csv_num(const char *s, double *out);
/* The cell as a number, or NaN if it is not one. */
double csv_get(const csv_table *t, long row, int col);
#endif
