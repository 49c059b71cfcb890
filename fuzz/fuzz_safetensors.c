/* SPDX-License-Identifier: MIT */
/* fuzz_safetensors.c: the safetensors reader of `fpemu cast` and `fpemu
 * train --init` (cli/safetensors.c): the header length, UTF-8, the JSON,
 * the tensors' fields, dtypes, shapes and offsets, the metadata. Checks: no
 * crash, a rejection has a message, an accepted file's tensors tile its
 * data part in order with the bytes their shapes need, and the header the
 * writer makes of them (st_write_header) reads back to the same names,
 * dtypes, shapes, sizes and metadata. */
#include "fuzz_common.h"
#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 1 << 18) return 0;
    st_file s, r;
    char err[512];
    err[0] = 0;
    if (st_parse(d, n, n, "fuzz.safetensors", &s, err, sizeof err)) {
        if (!err[0]) { fprintf(stderr, "st_parse rejected without a message\n"); abort(); }
        return 0;
    }
    uint64_t at = 0;
    for (int i = 0; i < s.count; i++) {
        const st_tensor *t = &s.t[i];
        if (!t->name || t->begin != at || t->end < t->begin || (int64_t)(t->end - t->begin) != st_nbytes(t->dtype, t->n)) {
            fprintf(stderr, "tensor %d: [%llu, %llu) at %llu\n", i, (unsigned long long)t->begin, (unsigned long long)t->end,
                    (unsigned long long)at);
            abort();
        }
        at = t->end;
    }
    if (at != s.data_len || 8 + s.header_len + s.data_len != n) { fprintf(stderr, "data part\n"); abort(); }
    /* the writer's header of the same tensors, with the data part after it */
    st_out *o = calloc((size_t)s.count + 1, sizeof *o);
    char *buf = NULL;
    size_t bn = 0;
    FILE *m = open_memstream(&buf, &bn);
    if (!o || !m) abort();
    for (int i = 0; i < s.count; i++) o[i] = (st_out){s.t[i].name, s.t[i].dtype, s.t[i].ndim, s.t[i].shape};
    if (st_write_header(m, o, s.count, s.meta_key, s.meta_val, s.nmeta, err, sizeof err)) { fprintf(stderr, "write: %s\n", err); abort(); }
    if (s.data_len && fwrite(d + 8 + s.header_len, 1, (size_t)s.data_len, m) != s.data_len) abort();
    if (fclose(m)) abort();
    if (st_parse((const unsigned char *)buf, bn, bn, "rewritten", &r, err, sizeof err)) { fprintf(stderr, "reread: %s\n", err); abort(); }
    int same = r.count == s.count && r.nmeta == s.nmeta && (8 + r.header_len) % 8 == 0;
    for (int i = 0; same && i < s.count; i++) {
        same = !strcmp(r.t[i].name, s.t[i].name) && r.t[i].dtype == s.t[i].dtype && r.t[i].ndim == s.t[i].ndim &&
               r.t[i].begin == s.t[i].begin && r.t[i].end == s.t[i].end;
        for (int k = 0; same && k < s.t[i].ndim; k++) same = r.t[i].shape[k] == s.t[i].shape[k];
    }
    for (int i = 0; same && i < s.nmeta; i++) same = !strcmp(r.meta_key[i], s.meta_key[i]) && !strcmp(r.meta_val[i], s.meta_val[i]);
    if (!same) { fprintf(stderr, "the rewritten header reads back differently\n"); abort(); }
    st_free(&r);
    st_free(&s);
    free(buf), free(o);
    return 0;
}
