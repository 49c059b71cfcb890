/* SPDX-License-Identifier: MIT */
/* csv.c: the CSV reader of csv.h. */
#include "csv.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *csv_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);
    if (!b) { fclose(f); errno = ENOMEM; return NULL; }
    for (;;) {
        if (cap - n < 4096) {
            char *nb = realloc(b, cap * 2);
            if (!nb) { free(b); fclose(f); errno = ENOMEM; return NULL; }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(b); errno = EIO; return NULL; }
    b[n] = 0;
    if (len) *len = n;
    return b;
}

/* Split one record starting at *pp (in place). Fields go to out (up to max;
 * the count is returned even beyond max). *pp moves past the line end.
 * Returns -1 on a quoting error, with *why set. */
static long split_record(char **pp, char **out, long max, long *line, const char **why) {
    char *p = *pp, *w;
    long nf = 0;
    for (;;) {
        char *start = p;
        w = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (!*p) { *why = "a quoted field runs to the end of the file (missing closing \")"; return -1; }
                if (*p == '"') {
                    if (p[1] == '"') { *w++ = '"'; p += 2; continue; }
                    p++;
                    break;
                }
                if (*p == '\n') (*line)++;
                *w++ = *p++;
            }
            if (*p && *p != ',' && *p != '\n' && !(*p == '\r' && (p[1] == '\n' || !p[1]))) {
                *why = "text after a closing quote (expected , or the end of the line)";
                return -1;
            }
        } else {
            while (*p && *p != ',' && *p != '\n') {
                if (*p == '"') { *why = "a quote inside an unquoted field"; return -1; }
                p++;
            }
            w = p;
            if (w > start && w[-1] == '\r' && (*p == '\n' || !*p)) w--;
        }
        if (*p == '\r') p++;
        char sep = *p;
        *w = 0;
        if (nf < max) out[nf] = start;
        nf++;
        if (sep == ',') { p++; continue; }
        if (sep == '\n') p++;
        break;
    }
    *pp = p;
    return nf;
}

int csv_read(csv_table *t, const char *path, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    size_t len;
    t->buf = csv_slurp(path, &len);
    if (!t->buf) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    if (memchr(t->buf, 0, len)) {
        snprintf(err, errlen, "%s: binary data (a NUL byte at offset %zu), expected CSV text", path,
                 (size_t)((char *)memchr(t->buf, 0, len) - t->buf));
        csv_free(t);
        return -2;
    }
    /* count lines to size the arrays */
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += t->buf[i] == '\n';
    char *p = t->buf;
    long line = 1;
    const char *why = NULL;
    if (!*p) {
        snprintf(err, errlen, "%s: empty file, expected a header line", path);
        csv_free(t);
        return -2;
    }
    /* header: at most one field more than the commas in the file */
    size_t maxf = 1;
    for (size_t i = 0; i < len; i++) maxf += t->buf[i] == ',';
    t->header = malloc(maxf * sizeof *t->header);
    if (!t->header) { snprintf(err, errlen, "%s: out of memory", path); csv_free(t); return -1; }
    long nf = split_record(&p, t->header, (long)maxf, &line, &why);
    if (nf < 0) goto bad;
    t->cells = malloc(lines * (size_t)nf * sizeof *t->cells + 1);
    t->lineno = malloc(lines * sizeof *t->lineno + 1);
    if (!t->cells || !t->lineno) { snprintf(err, errlen, "%s: out of memory", path); csv_free(t); return -1; }
    t->ncols = (int)nf;
    for (int i = 0; i < t->ncols; i++) {
        if (!t->header[i][0]) {
            snprintf(err, errlen, "%s: line 1: column %d of the header has no name, expected a header line of column names", path, i + 1);
            csv_free(t);
            return -2;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(t->header[i], t->header[j])) {
                snprintf(err, errlen, "%s: line 1: column '%s' appears twice in the header", path, t->header[i]);
                csv_free(t);
                return -2;
            }
    }
    line++;
    while (*p) {
        long start_line = line;
        if (*p == '\n' || (*p == '\r' && p[1] == '\n')) {
            /* a blank line: allowed only at the end of the file */
            char *q = p;
            while (*q == '\n' || *q == '\r') q++;
            if (!*q) break;
            snprintf(err, errlen, "%s: line %ld: blank line inside the data, expected %d fields", path, line, t->ncols);
            csv_free(t);
            return -2;
        }
        char **row = t->cells + (size_t)t->nrows * (size_t)t->ncols;
        nf = split_record(&p, row, t->ncols, &line, &why);
        if (nf < 0) { line = start_line; goto bad; }
        if (nf != t->ncols) {
            snprintf(err, errlen, "%s: line %ld: %ld field%s, expected %d (the header's column count)", path, start_line, nf,
                     nf == 1 ? "" : "s", t->ncols);
            csv_free(t);
            return -2;
        }
        t->lineno[t->nrows++] = start_line;
        line++;
    }
    return 0;
bad:
    snprintf(err, errlen, "%s: line %ld: %s", path, line, why);
    csv_free(t);
    return -2;
}

void csv_free(csv_table *t) {
    free(t->header);
    free(t->cells);
    free(t->lineno);
    free(t->buf);
    t->header = NULL;
    t->cells = NULL;
    t->lineno = NULL;
    t->buf = NULL;
    t->ncols = 0;
    t->nrows = 0;
}

int csv_col(const csv_table *t, const char *name) {
    for (int i = 0; i < t->ncols; i++)
        if (!strcmp(t->header[i], name)) return i;
    return -1;
}

int csv_num(const char *s, double *out) {
    while (*s == ' ') s++;
    if (!*s) return -1;
    const char *b = s;
    if (*b == '-' || *b == '+') b++;
    if (!strcasecmp(b, "nan") || !strcasecmp(b, "-nan")) { *out = NAN; return 0; }
    if (!strcasecmp(b, "inf") || !strcasecmp(b, "infinity")) { *out = *s == '-' ? -INFINITY : INFINITY; return 0; }
    /* digits, one point, an exponent: nothing else (no hex, no "0x") */
    const char *q = b;
    int digits = 0;
    while (*q >= '0' && *q <= '9') q++, digits++;
    if (*q == '.') { q++; while (*q >= '0' && *q <= '9') q++, digits++; }
    if (!digits) return -1;
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '-' || *q == '+') q++;
        if (!(*q >= '0' && *q <= '9')) return -1;
        while (*q >= '0' && *q <= '9') q++;
    }
    while (*q == ' ') q++;
    if (*q) return -1;
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return 0;
}

double csv_get(const csv_table *t, long row, int col) {
    double v;
    if (col < 0 || row < 0 || row >= t->nrows || csv_num(csv_cell(t, row, col), &v)) return NAN;
    return v;
}
