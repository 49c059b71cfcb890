/* SPDX-License-Identifier: MIT */
/* fuzz_csv.c: the CSV reader (cli/csv.c) of `fpemu report` and `fpemu
 * drift` (metrics, eval, tensors, baselines). Checks: no crash, a rejected
 * file has a message, an accepted one is rectangular, and csv_num agrees
 * with itself on every cell. */
#include <math.h>
#include "fuzz_common.h"
#include "csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 65536) return 0;
    const char *path = fz_file(d, n, ".csv");
    csv_table t;
    char err[512];
    err[0] = 0;
    int rc = csv_read(&t, path, err, sizeof err);
    if (rc) {
        if (!err[0]) { fprintf(stderr, "csv_read rejected without a message (rc %d)\n", rc); abort(); }
        unlink(path);
        return 0;
    }
    if (t.ncols < 1 || t.nrows < 0) { fprintf(stderr, "csv: ncols %d nrows %ld\n", t.ncols, t.nrows); abort(); }
    for (int c = 0; c < t.ncols; c++) {
        if (!t.header[c]) abort();
        if (csv_col(&t, t.header[c]) < 0) { fprintf(stderr, "csv_col cannot find header '%s'\n", t.header[c]); abort(); }
    }
    for (long r = 0; r < t.nrows; r++) {
        if (r && t.lineno[r] <= t.lineno[r - 1]) { fprintf(stderr, "line numbers not increasing\n"); abort(); }
        for (int c = 0; c < t.ncols; c++) {
            const char *s = csv_cell(&t, r, c);
            if (!s) abort();
            double x;
            int ok = csv_num(s, &x) == 0;
            double y = csv_get(&t, r, c);
            if (ok && !(x == y || (isnan(x) && isnan(y)))) { fprintf(stderr, "csv_get != csv_num for '%s'\n", s); abort(); }
            if (!ok && !isnan(y)) { fprintf(stderr, "csv_get of non-number '%s' is %g\n", s, y); abort(); }
        }
    }
    csv_free(&t);
    unlink(path);
    return 0;
}
