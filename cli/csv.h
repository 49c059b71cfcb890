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
 * Returns NULL with errno set on failure: EFBIG where it holds more than
 * max bytes (csv_slurp: no bound), the read's own errno (EISDIR for a
 * folder) or EIO where it failed. The CLI's one whole-file reader. */
char *csv_slurp_max(const char *path, size_t max, size_t *len);
char *csv_slurp(const char *path, size_t *len);

/* Parse PATH. Returns 0; -1 if the file cannot be read (errno set, err says
 * why); -2 if it is malformed (err names the line and what was expected).
 * An empty file (no header) is malformed. */
int csv_read(csv_table *t, const char *path, char *err, size_t errlen);
void csv_free(csv_table *t);
/* csv_read for files that users bring (fpemu drift --key and its kin): the
 * same, plus a UTF-8 byte-order mark before the header is skipped, spaces
 * around column names are dropped, and a CR that does not end a CRLF line
 * (old Mac line ends) is malformed, naming its line. CRLF files read as
 * csv_read reads them. */
int csv_read_user(csv_table *t, const char *path, char *err, size_t errlen);


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

/* The column "step" of T must hold numbers in order: STRICT, each greater
 * than the one before (metrics.csv, eval.csv: one row per step); else each
 * at least the one before (tensors.csv: several rows per step). Returns 0
 * (also when T has no step column), or -2 with err naming the file, the
 * line and the step (a repeated step names the line it repeats). */
int csv_check_steps(const csv_table *t, int strict, char *err, size_t errlen);

/* Do the files of the run folder DIR belong together? DIR/summary.json
 * (read with cJSON, the whole file one JSON object) lists under "files"
 * each other file the run wrote with its size and CRC-32 ({"bytes": N,
 * "crc32": "8 lowercase hex digits"}); every listed file must be there
 * with that size and CRC, and each of metrics.csv, eval.csv, tensors.csv
 * and checkpoint.bin that is there must be listed. Returns 0; 1 if DIR has
 * no summary.json (the caller decides); -2 with err naming the folder and
 * the file and what was expected. */
int csv_run_check(const char *dir, char *err, size_t errlen);
#endif
