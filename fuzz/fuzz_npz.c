/* SPDX-License-Identifier: MIT */
/* fuzz_npz.c: the .npz reader of `fpemu train --init` (cli/npz.c): the
 * end-of-central-directory record, the central and local headers, member
 * names, stored and deflated members, their sizes and CRCs; then each
 * member through the .npy parser (npy_parse) as --init reads it. Checks: no
 * crash, a rejection has a message, an accepted archive's members hold the
 * bytes they declare, and every element of a member that parses can be
 * read. */
#include "fuzz_common.h"
#include "npy.h"
#include "npz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 1 << 18) return 0;
    const char *path = fz_file(d, n, ".npz");
    npz_file z;
    char err[512];
    err[0] = 0;
    memset(&z, 0, sizeof z);
    if (npz_read(path, &z, err, sizeof err)) {
        if (!err[0]) { fprintf(stderr, "npz_read rejected without a message\n"); abort(); }
        unlink(path);
        return 0;
    }
    if (z.count < 0 || (z.count && !z.m) || z.bytes != n) { fprintf(stderr, "npz: count %d bytes %zu\n", z.count, z.bytes); abort(); }
    for (int i = 0; i < z.count; i++) {
        if (!z.m[i].name || (z.m[i].n && !z.m[i].data)) { fprintf(stderr, "npz: member %d\n", i); abort(); }
        npy_array a;
        memset(&a, 0, sizeof a);
        err[0] = 0;
        if (npy_parse(z.m[i].data, z.m[i].n, z.m[i].name, &a, err, sizeof err)) {
            if (!err[0]) { fprintf(stderr, "npy_parse rejected without a message\n"); abort(); }
            continue;
        }
        volatile double sink = 0;
        for (size_t r = 0; r < a.rows; r++)
            for (size_t c = 0; c < a.cols; c++) sink += npy_get(&a, r, c);
        (void)sink;
        npy_free(&a);
    }
    npz_free(&z);
    unlink(path);
    return 0;
}
