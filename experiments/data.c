/* SPDX-License-Identifier: MIT */
/* data.c: the data sets. digits: experiments/data/digits.csv.gz (1797 rows of
 * 64 pixels 0..16 and a label; rows 0..1499 train, 1500..1796 eval; origin
 * and licence in experiments/data/README.md). $FPEMU_DATA names the file (and
 * then only it is tried); otherwise it is looked for under $FPEMU_ROOT, under
 * the current folder, and where `make install` puts it beside the program
 * (PREFIX/bin/fpemu -> PREFIX/share/fpemu/digits.csv.gz). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "train_internal.h"

static float *g_x;
static int *g_y;
static int g_n;

/* The data files are tens of kilobytes; these bounds only keep a wrong file
 * from taking the machine's memory. */
enum { DATA_GZ_MAX = 16 << 20, DATA_CSV_MAX = 64 << 20 };

/* 0, -1 (cannot open or read: errno), -2 (larger than max bytes) */
static int read_file(const char *path, size_t max, unsigned char **buf, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    if (!b) { fclose(f); errno = ENOMEM; return -1; }
    for (;;) {
        if (n > max) { free(b); fclose(f); return -2; }
        if (n == cap) { cap *= 2; unsigned char *nb = realloc(b, cap); if (!nb) { free(b); fclose(f); errno = ENOMEM; return -1; } b = nb; }
        size_t got = fread(b + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(b); return -1; }
    *buf = b; *len = n;
    return 0;
}

int trn__digits_load(float **x, int **y, int *n, char *err, size_t errlen) {
    if (g_x) { *x = g_x; *y = g_y; *n = g_n; return 0; }
    char paths[5][4200];
    int np = 0;
    const char *data = getenv("FPEMU_DATA"), *e;
    if (data && *data) snprintf(paths[np++], sizeof paths[0], "%s", data);
    else {
        e = getenv("FPEMU_ROOT");
        if (e && *e) snprintf(paths[np++], sizeof paths[0], "%s/experiments/data/digits.csv.gz", e);
        snprintf(paths[np++], sizeof paths[0], "experiments/data/digits.csv.gz");
        /* beside the program: PREFIX/bin/fpemu -> PREFIX/share/fpemu (make
         * install), and BINDIR/fpemu -> BINDIR/../experiments/data (a build) */
        char exe[4096];
        ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (el > 0) {
            exe[el] = 0;
            for (int up = 0; up < 2; up++) { char *sl = strrchr(exe, '/'); if (sl) *sl = 0; }
            snprintf(paths[np++], sizeof paths[0], "%s/share/fpemu/digits.csv.gz", exe);
            snprintf(paths[np++], sizeof paths[0], "%s/experiments/data/digits.csv.gz", exe);
        }
    }
    unsigned char *gz = NULL, *csv = NULL;
    size_t gzlen = 0, csvlen = 0;
    int pi, rc = -1, why;
    for (pi = 0; pi < np; pi++) {
        rc = read_file(paths[pi], DATA_GZ_MAX, &gz, &gzlen);
        if (rc != -1 || errno != ENOENT) break; /* found, or there but unreadable or too large */
    }
    why = errno;
    if (pi == np && data && *data) {
        snprintf(err, errlen, "%s (FPEMU_DATA): cannot read the digits data: %s", paths[0], strerror(why));
        return -1;
    }
    if (pi == np) {
        snprintf(err, errlen, "cannot find the digits data (%s): run from the repository root, set FPEMU_ROOT, "
                 "or set FPEMU_DATA to the file", paths[0]);
        return -1;
    }
    if (rc == -2) {
        snprintf(err, errlen, "%s: larger than %d MiB: not the digits data (expected a gzip file of the digits CSV)",
                 paths[pi], DATA_GZ_MAX >> 20);
        return -1;
    }
    if (rc) {
        snprintf(err, errlen, "%s: cannot read the digits data: %s", paths[pi], strerror(why));
        return -1;
    }
    rc = trn_gunzip(gz, gzlen, DATA_CSV_MAX, &csv, &csvlen);
    free(gz);
    if (rc) {
        if (rc == TRN_GUNZIP_TOOBIG)
            snprintf(err, errlen, "%s: expands past %d MiB: not the digits data", paths[pi], DATA_CSV_MAX >> 20);
        else
            snprintf(err, errlen, "%s: %s", paths[pi], rc == TRN_GUNZIP_NOMEM ? "out of memory while decompressing"
                     : "not a valid gzip file (bad header, data, CRC or length, or bytes after it)");
        return -1;
    }
    int cap = 2048, rows = 0;
    float *xs = malloc((size_t)cap * 64 * sizeof *xs);
    int *ys = malloc((size_t)cap * sizeof *ys);
    if (!xs || !ys) {
        snprintf(err, errlen, "%s: out of memory", paths[pi]);
        free(csv); free(xs); free(ys);
        return -1;
    }
    size_t pos = 0;
    int line = 1;
    while (pos < csvlen) {
        if (rows == cap) break;
        for (int c = 0; c < 65; c++) {
            long v = 0;
            int digits = 0;
            while (pos < csvlen && csv[pos] >= '0' && csv[pos] <= '9') { v = v * 10 + (csv[pos++] - '0'); digits++; }
            char want = c < 64 ? ',' : '\n';
            if (!digits || v > (c < 64 ? 16 : 9) || pos >= csvlen || (csv[pos] != want && !(c == 64 && csv[pos] == '\r'))) {
                if (c == 64 && digits && pos >= csvlen && v <= 9) { /* last line without newline */ }
                else {
                    snprintf(err, errlen, "%s: line %d, field %d: expected %s", paths[pi], line, c + 1,
                             c < 64 ? "a pixel 0..16 and ','" : "a label 0..9 and a newline");
                    free(csv); free(xs); free(ys);
                    return -1;
                }
            }
            if (c < 64) xs[(size_t)rows * 64 + c] = (float)v; else ys[rows] = (int)v;
            if (pos < csvlen && csv[pos] == '\r') pos++;
            pos++;
        }
        rows++; line++;
    }
    free(csv);
    if (rows != 1797) {
        snprintf(err, errlen, "%s: expected 1797 rows, found %d", paths[pi], rows);
        free(xs); free(ys);
        return -1;
    }
    g_x = xs; g_y = ys; g_n = rows;
    *x = xs; *y = ys; *n = rows;
    return 0;
}
