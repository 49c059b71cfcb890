/* SPDX-License-Identifier: MIT */
/* npy.c: NumPy .npy files (see npy.h). Format: "\x93NUMPY", major, minor,
 * header length (uint16 LE for v1, uint32 LE for v2/v3), then a Python dict
 * literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and a newline, then the raw data. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "npy.h"

static int fail(char *err, size_t len, const char *path, const char *msg) {
    if (err && len) snprintf(err, len, "%s: %s", path, msg);
    return -1;
}

const char *npy_dtype_name(npy_dtype t) {
    static const char *n[] = {"<f4", "<f2", "|u1", "<u2", "<f8", "<i4", "<i8", "<u4", "|i1"};
    return n[t];
}

static size_t itemsize(npy_dtype t) {
    switch (t) {
    case NPY_U1: case NPY_I1: return 1;
    case NPY_F2: case NPY_U2: return 2;
    case NPY_F4: case NPY_I4: case NPY_U4: return 4;
    default: return 8;
    }
}
size_t npy_itemsize(npy_dtype t) { return itemsize(t); }

const char *npy_header_key(const char *h, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(h, pat);
    }
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

/* wide: also '<f8', '<i4', '<i8', '<u4' and '|i1' (npy_parse); npy_read keeps to its four */
static int parse_header(const char *h, npy_array *a, char *msg, size_t len, int wide) {
    const char *p = h;
    while (*p == ' ') p++;
    if (*p != '{') { snprintf(msg, len, "bad header: expected a dict literal starting with '{'"); return -1; }
    if (!strchr(p, '}')) { snprintf(msg, len, "bad header: no closing '}'"); return -1; }
    const char *d = npy_header_key(h, "descr");
    if (!d || (*d != '\'' && *d != '"')) { snprintf(msg, len, "bad header: no 'descr' string"); return -1; }
    char q = *d++;
    char descr[32];
    size_t n = 0;
    while (*d && *d != q && n < sizeof descr - 1) descr[n++] = *d++;
    descr[n] = 0;
    if (*d != q) { snprintf(msg, len, "bad header: unterminated 'descr'"); return -1; }
    if (!strcmp(descr, "<f4")) a->dtype = NPY_F4;
    else if (!strcmp(descr, "<f2")) a->dtype = NPY_F2;
    else if (!strcmp(descr, "|u1") || !strcmp(descr, "<u1")) a->dtype = NPY_U1;
    else if (!strcmp(descr, "<u2")) a->dtype = NPY_U2;
    else if (wide && !strcmp(descr, "<f8")) a->dtype = NPY_F8;
    else if (wide && !strcmp(descr, "<i4")) a->dtype = NPY_I4;
    else if (wide && !strcmp(descr, "<i8")) a->dtype = NPY_I8;
    else if (wide && !strcmp(descr, "<u4")) a->dtype = NPY_U4;
    else if (wide && (!strcmp(descr, "|i1") || !strcmp(descr, "<i1"))) a->dtype = NPY_I1;
    else if (wide) {
        snprintf(msg, len, "unsupported dtype '%s' (expected '<f4', '<f8', '<f2', '<i4', '<i8', '<u4', '|i1', '|u1' or '<u2')", descr);
        return -1;
    } else {
        snprintf(msg, len, "unsupported dtype '%s' (expected '<f4', '<f2', '|u1' or '<u2')", descr);
        return -1;
    }
    const char *f = npy_header_key(h, "fortran_order");
    if (!f) { snprintf(msg, len, "bad header: no 'fortran_order'"); return -1; }
    if (!strncmp(f, "True", 4)) a->fortran = 1;
    else if (!strncmp(f, "False", 5)) a->fortran = 0;
    else { snprintf(msg, len, "bad header: fortran_order must be True or False"); return -1; }
    const char *s = npy_header_key(h, "shape");
    if (!s || *s != '(') { snprintf(msg, len, "bad header: no 'shape' tuple"); return -1; }
    s++;
    size_t dims[3];
    int nd = 0;
    for (;;) {
        while (*s == ' ') s++;
        if (*s == ')') break;
        if (!isdigit((unsigned char)*s)) { snprintf(msg, len, "bad header: shape must be a tuple of non-negative integers"); return -1; }
        errno = 0;
        char *e;
        unsigned long long v = strtoull(s, &e, 10);
        if (errno || v > ((size_t)1 << 40)) { snprintf(msg, len, "bad header: shape dimension too large"); return -1; }
        if (nd == 3) { snprintf(msg, len, "bad header: more than 2 dimensions (expected a vector or a matrix)"); return -1; }
        dims[nd++] = (size_t)v;
        s = e;
        while (*s == ' ') s++;
        if (*s == ',') s++;
        else if (*s != ')') { snprintf(msg, len, "bad header: malformed shape tuple"); return -1; }
    }
    if (nd == 0) { snprintf(msg, len, "bad header: 0-d arrays are not supported (expected a vector or a matrix)"); return -1; }
    if (nd > 2) { snprintf(msg, len, "bad header: %d dimensions (expected a vector or a matrix)", nd); return -1; }
    a->ndim = nd;
    a->rows = nd == 2 ? dims[0] : 1;
    a->cols = nd == 2 ? dims[1] : dims[0];
    if (a->cols && a->rows > ((size_t)1 << 40) / a->cols) { snprintf(msg, len, "bad header: array too large"); return -1; }
    a->n = a->rows * a->cols;
    return 0;
}

int npy_read(const char *path, npy_array *a, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        char m[200];
        snprintf(m, sizeof m, "cannot open: %s", strerror(errno));
        return fail(err, errlen, path, m);
    }
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, fp);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6)) {
        fclose(fp);
        return fail(err, errlen, path, "not a .npy file (wrong magic: expected \\x93NUMPY)");
    }
    int major = pre[6];
    size_t hlen;
    if (major == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, fp) != 2) { fclose(fp); return fail(err, errlen, path, "truncated header"); }
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        fclose(fp);
        char m[100];
        snprintf(m, sizeof m, "unsupported .npy format version %d (expected 1, 2 or 3)", major);
        return fail(err, errlen, path, m);
    }
    if (hlen == 0 || hlen > (1u << 24)) { fclose(fp); return fail(err, errlen, path, "bad header length"); }
    char *h = malloc(hlen + 1);
    if (!h) { fclose(fp); return fail(err, errlen, path, "out of memory"); }
    if (fread(h, 1, hlen, fp) != hlen) { free(h); fclose(fp); return fail(err, errlen, path, "truncated header"); }
    h[hlen] = 0;
    if (memchr(h, 0, hlen)) { free(h); fclose(fp); return fail(err, errlen, path, "bad header: NUL byte in the header"); }
    char msg[200];
    if (parse_header(h, a, msg, sizeof msg, 0)) { free(h); fclose(fp); return fail(err, errlen, path, msg); }
    free(h);
    size_t bytes = a->n * itemsize(a->dtype);
    /* a header may promise far more data than the file holds: check the
     * size before allocating (a 100-byte file must not ask for 700 GB) */
    struct stat st;
    long pos = ftell(fp);
    if (pos >= 0 && fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= (uint64_t)pos &&
        (uint64_t)st.st_size - (uint64_t)pos < (uint64_t)bytes) {
        fclose(fp);
        snprintf(msg, sizeof msg, "truncated data: %llu of %zu bytes", (unsigned long long)((uint64_t)st.st_size - (uint64_t)pos), bytes);
        return fail(err, errlen, path, msg);
    }
    a->data = malloc(bytes ? bytes : 1);
    if (!a->data) { fclose(fp); return fail(err, errlen, path, "out of memory"); }
    size_t rd = fread(a->data, 1, bytes, fp);
    if (rd != bytes) {
        fclose(fp);
        npy_free(a);
        snprintf(msg, sizeof msg, "truncated data: %zu of %zu bytes", rd, bytes);
        return fail(err, errlen, path, msg);
    }
    int extra = fgetc(fp);
    fclose(fp);
    if (extra != EOF) {
        npy_free(a);
        return fail(err, errlen, path, "trailing data after the array (shape does not match the file size)");
    }
    return 0;
}

void npy_free(npy_array *a) {
    free(a->data);
    a->data = NULL;
}

uint64_t npy_code(const npy_array *a, size_t i, size_t j) {
    size_t idx = a->fortran ? j * a->rows + i : i * a->cols + j;
    size_t w = itemsize(a->dtype);
    const unsigned char *p = (const unsigned char *)a->data + idx * w;
    uint64_t v = 0;
    for (size_t k = 0; k < w; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

int64_t npy_int(const npy_array *a, size_t i, size_t j) {
    uint64_t c = npy_code(a, i, j);
    switch (a->dtype) {
    case NPY_I4: return (int64_t)(int32_t)(uint32_t)c;
    case NPY_I1: return (int64_t)(int8_t)(uint8_t)c;
    case NPY_I8: return (int64_t)c;
    default: return (int64_t)c;
    }
}

double npy_get(const npy_array *a, size_t i, size_t j) {
    uint64_t c = npy_code(a, i, j);
    switch (a->dtype) {
    case NPY_F4: {
        uint32_t u = (uint32_t)c;
        float x;
        memcpy(&x, &u, 4);
        return x;
    }
    case NPY_F2: return fpemu_to_double(fpemu_format_get("f16", NULL, 0), c);
    case NPY_F8: {
        double x;
        memcpy(&x, &c, 8);
        return x;
    }
    case NPY_I4: case NPY_I8: case NPY_I1: return (double)npy_int(a, i, j);
    default: return (double)c;
    }
}

int npy_parse(const void *buf, size_t n, const char *name, npy_array *a, char *err, size_t errlen) {
    const unsigned char *b = buf;
    memset(a, 0, sizeof *a);
    if (n < 10 || memcmp(b, "\x93NUMPY", 6)) return fail(err, errlen, name, "not a .npy file (wrong magic: expected \\x93NUMPY)");
    int major = b[6];
    size_t hlen, at;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        at = 10;
    } else if (major == 2 || major == 3) {
        if (n < 12) return fail(err, errlen, name, "truncated header");
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        at = 12;
    } else {
        char m[100];
        snprintf(m, sizeof m, "unsupported .npy format version %d (expected 1, 2 or 3)", major);
        return fail(err, errlen, name, m);
    }
    if (hlen == 0 || hlen > (1u << 24)) return fail(err, errlen, name, "bad header length");
    if (n - at < hlen) return fail(err, errlen, name, "truncated header");
    char *h = malloc(hlen + 1);
    if (!h) return fail(err, errlen, name, "out of memory");
    memcpy(h, b + at, hlen);
    h[hlen] = 0;
    if (memchr(h, 0, hlen)) { free(h); return fail(err, errlen, name, "bad header: NUL byte in the header"); }
    char msg[200];
    if (parse_header(h, a, msg, sizeof msg, 1)) { free(h); return fail(err, errlen, name, msg); }
    free(h);
    at += hlen;
    size_t bytes = a->n * itemsize(a->dtype);
    if (n - at < bytes) {
        snprintf(msg, sizeof msg, "truncated data: %zu of %zu bytes", n - at, bytes);
        return fail(err, errlen, name, msg);
    }
    if (n - at > bytes) return fail(err, errlen, name, "trailing data after the array (shape does not match the size)");
    a->data = malloc(bytes ? bytes : 1);
    if (!a->data) return fail(err, errlen, name, "out of memory");
    memcpy(a->data, b + at, bytes);
    return 0;
}

int npy_write_header(FILE *f, const char *descr, const size_t *shape, int ndim) {
    char h[1024];
    size_t k = (size_t)snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim && k < sizeof h; i++) /* a 1-d shape keeps its comma: (n, ) */
        k += (size_t)snprintf(h + k, sizeof h - k, "%zu%s", shape[i], ndim == 1 || i < ndim - 1 ? ", " : "");
    if (k < sizeof h) k += (size_t)snprintf(h + k, sizeof h - k, "), }");
    if (k >= sizeof h) { errno = EOVERFLOW; return -1; }
    /* pad with spaces so that the data starts at a multiple of 64, end with '\n' */
    size_t total = 10 + k + 1, pad = (64 - total % 64) % 64, hl = k + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xFF), (unsigned char)(hl >> 8)};
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, k, f) == k;
    for (size_t i = 0; i < pad && ok; i++) ok = fputc(' ', f) != EOF;
    return ok && fputc('\n', f) != EOF ? 0 : -1;
}

int npy_write_f32(const char *path, const float *x, size_t rows, size_t cols, char *err, size_t errlen) {
    cli_atomic at;
    if (cli_atomic_open(&at, path, "wb")) {
        char m[200];
        snprintf(m, sizeof m, "cannot write: %s", strerror(errno));
        return fail(err, errlen, path, m);
    }
    size_t shape[2] = {rows, cols};
    int ok = npy_write_header(at.f, "<f4", shape, 2) == 0;
    for (size_t i = 0; i < rows * cols && ok; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16), (unsigned char)(u >> 24)};
        ok = fwrite(b, 1, 4, at.f) == 4;
    }
    if (cli_atomic_close(&at, ok) || !ok) {
        char m[200];
        snprintf(m, sizeof m, "write failed: %s", strerror(errno));
        return fail(err, errlen, path, m);
    }
    return 0;
}
