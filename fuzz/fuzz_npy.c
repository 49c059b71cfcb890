/* SPDX-License-Identifier: MIT */
/* fuzz_npy.c: the .npy reader of `fpemu gemm` (cli/npy.c): magic, version,
 * header dict, dtype, shape, order, data length. Checks: no crash, a
 * rejection has a message, an accepted array has rows x cols = n elements
 * and every element can be read; written back with npy_write_f32, it reads
 * again with the same shape. The same file through npy_read_nd (`fpemu
 * cast`'s N-d reader): a rejection has a message, an accepted array's
 * shape multiplies to n (at most 2^31 - 1) with data of n elements, and
 * where npy_read took the file too (the dtypes they share) it has the same
 * elements. */
#include "fuzz_common.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 1 << 18) return 0;
    const char *path = fz_file(d, n, ".npy");
    npy_array a;
    char err[512];
    err[0] = 0;
    memset(&a, 0, sizeof a);
    npy_nd t;
    err[0] = 0;
    const int rnd = npy_read_nd(path, &t, err, sizeof err);
    if (rnd && !err[0]) { fprintf(stderr, "npy_read_nd rejected without a message\n"); abort(); }
    if (!rnd) {
        size_t prod = 1;
        for (int i = 0; i < t.ndim; i++) prod *= t.shape[i];
        if (t.ndim < 1 || t.ndim > NPY_MAXDIM || prod != t.n || t.n > ((size_t)1 << 31) - 1 || !t.data) {
            fprintf(stderr, "npy_read_nd: ndim %d n %zu\n", t.ndim, t.n);
            abort();
        }
    }
    err[0] = 0;
    if (npy_read(path, &a, err, sizeof err)) {
        if (!err[0]) { fprintf(stderr, "npy_read rejected without a message\n"); abort(); }
        if (!rnd) npy_nd_free(&t);
        unlink(path);
        return 0;
    }
    if (!rnd && !a.fortran && (t.dtype != a.dtype || t.n != a.n || memcmp(t.data, a.data, a.n * npy_itemsize(a.dtype)))) {
        fprintf(stderr, "npy_read and npy_read_nd read the same file differently\n");
        abort();
    }
    if (!rnd) npy_nd_free(&t);
    if (a.ndim < 1 || a.ndim > 2 || a.rows * a.cols != a.n || (a.n && !a.data)) {
        fprintf(stderr, "npy: ndim %d rows %zu cols %zu n %zu\n", a.ndim, a.rows, a.cols, a.n);
        abort();
    }
    float *x = malloc((a.n ? a.n : 1) * sizeof *x);
    if (!x) abort();
    for (size_t i = 0; i < a.rows; i++)
        for (size_t j = 0; j < a.cols; j++) {
            x[i * a.cols + j] = (float)npy_get(&a, i, j);
            (void)npy_code(&a, i, j);
        }
    char out[300];
    snprintf(out, sizeof out, "%s.out.npy", path);
    if (npy_write_f32(out, x, a.rows, a.cols, err, sizeof err) == 0) {
        npy_array b;
        memset(&b, 0, sizeof b);
        if (npy_read(out, &b, err, sizeof err)) { fprintf(stderr, "a written .npy does not read: %s\n", err); abort(); }
        if (b.rows != a.rows || b.cols != a.cols) { fprintf(stderr, "shape changed on write\n"); abort(); }
        npy_free(&b);
        unlink(out);
    }
    free(x);
    npy_free(&a);
    unlink(path);
    return 0;
}
