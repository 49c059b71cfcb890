/* SPDX-License-Identifier: MIT */
/* fuzz_table.c: the summation-tree table parser (emu/sumtree.c) that
 * `fpemu gemm --algo cublas --table FILE`, $FPEMU_CUBLAS_TABLE and the
 * library's table option read. Checks: no crash; a rejected text has a
 * message; in an accepted one every row's tree formats to text that parses
 * back to the same tree, binds to the row's formats (the parser checked
 * it), is what the lookup finds for the row's call, and, for K up to 256,
 * evaluates one output the same on the per-output path and the GEMM path. */
#include <math.h>
#include "fuzz_common.h"
#include "sumtree.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 16384) return 0;
    char *text = fz_str(d, n);
    fpemu_sumtree_table tab;
    char err[512];
    err[0] = 0;
    if (fpemu_sumtree_table_parse(&tab, text, "fuzz.txt", err, sizeof err)) {
        if (!err[0]) { fprintf(stderr, "table rejected without a message\n"); abort(); }
        free(text);
        return 0;
    }
    for (int i = 0; i < tab.nrows; i++) {
        const fpemu_sumtree_row *r = &tab.rows[i];
        char buf[512], e2[400];
        fpemu_sumtree_format(&r->tree, buf, sizeof buf);
        fpemu_sumtree u;
        fpemu_sumtree_init(&u);
        if (fpemu_sumtree_parse(&u, buf, e2, sizeof e2) || !fpemu_sumtree_equal(&u, &r->tree)) {
            fprintf(stderr, "row %d: '%s' does not parse back (%s)\n", r->line, buf, e2);
            abort();
        }
        const fpemu_format *fa = fpemu_format_get(r->a, e2, sizeof e2), *fb = fpemu_format_get(r->b, e2, sizeof e2);
        if (!fa || !fb) { fprintf(stderr, "row %d: formats %s %s\n", r->line, r->a, r->b); abort(); }
        fpemu_sumtree_bound bd;
        if (fpemu_sumtree_bind(&bd, &r->tree, fa, fb, e2, sizeof e2)) {
            fprintf(stderr, "row %d: accepted but does not bind: %s\n", r->line, e2);
            abort();
        }
        const fpemu_sumtree_row *f = fpemu_sumtree_table_find_op(&tab, r->op, r->a, r->b, r->d, r->fast, r->M, r->N, r->K);
        if (!f) { fprintf(stderr, "row %d: the lookup finds no row for its own call\n", r->line); abort(); }
        if (r->K > 256 || r->K < 1) continue;
        uint64_t a[256], b[256];
        fpemu_ctx ctx;
        fpemu_ctx_init(&ctx);
        for (int k = 0; k < r->K; k++) {
            a[k] = fpemu_from_double(bd.fa, ldexp(1.0 + (k % 7) / 8.0, k % 5 - 2) * (k % 3 ? 1 : -1), &ctx);
            b[k] = fpemu_from_double(bd.fb, ldexp(1.0 + (k % 5) / 4.0, -(k % 4)), &ctx);
        }
        uint64_t v = fpemu_sumtree_dot(&bd, a, b, r->K, 0);
        float D[1];
        if (fpemu_sumtree_gemm_codes(&bd, 1, 1, r->K, a, b, NULL, 1, D, e2, sizeof e2)) {
            fprintf(stderr, "row %d: gemm failed: %s\n", r->line, e2);
            abort();
        }
        const fpemu_format *fo = bd.t.out ? bd.t.out : fpemu_format_get("f32", e2, sizeof e2);
        double want = fpemu_to_double(fo, v);
        if (!((double)D[0] == want || (isnan(D[0]) && isnan(want)))) {
            fprintf(stderr, "row %d: gemm %a, dot %a\n", r->line, (double)D[0], want);
            abort();
        }
    }
    fpemu_sumtree_table_free(&tab);
    free(text);
    return 0;
}
