/* SPDX-License-Identifier: MIT */
/* fuzz_npy.c: the .npy reader of `fpemu gemm` (cli/npy.c): magic, version,
 * header dict, dtype, shape, order, data length. Checks: no crash, a
 * rejection has a message, an accepted array has rows x cols = n elements
 * and every element can be read; written back with npy_write_f32, it reads
 * again with the same shape. */
#include "fuzz_common.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 1 << 18) return 0;
    const char *path = fz_file(d, n, ".npy");
    npy_array a;
    char err[512];
    err[0] = 0;
    memset(&a, 0, sizeof a);
    if (npy_read(path, &a, err, sizeof err)) {
        if (!err[0]) { fprintf(stderr, "npy_read rejected without a message\n"); abort(); }
        unlink(path);
        return 0;
    }
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
