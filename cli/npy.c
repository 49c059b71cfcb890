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

/* The dtypes each reader takes (one table: the names, the messages' lists):
 * MATRIX npy_read, WIDE npy_parse, ND npy_read_nd; ALIAS: another
 * spelling of the row above it, left out of the lists. */
enum { MATRIX = 1, WIDE = 2, ND = 4, ALIAS = 8 };
static const struct {
    const char *descr;
    npy_dtype t;
    unsigned modes;
} dtypes[] = {
    {"<f4", NPY_F4, MATRIX | WIDE | ND}, {"<f8", NPY_F8, WIDE | ND},
    {"<f2", NPY_F2, MATRIX | WIDE | ND}, {"<i4", NPY_I4, WIDE},
    {"<i8", NPY_I8, WIDE},               {"<u4", NPY_U4, WIDE},
    {"|i1", NPY_I1, WIDE},               {"<i1", NPY_I1, WIDE | ALIAS},
    {"|u1", NPY_U1, MATRIX | WIDE},      {"<u1", NPY_U1, MATRIX | WIDE | ALIAS},
    {"<u2", NPY_U2, MATRIX | WIDE},      {"<V2", NPY_V2, ND},
    {"|V2", NPY_V2, ND | ALIAS},         {"<V1", NPY_V1, ND},
    {"|V1", NPY_V1, ND | ALIAS},         {"<f1", NPY_V1, ND},
    {"|f1", NPY_V1, ND | ALIAS},
};

const char *npy_dtype_name(npy_dtype t) {
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].t == t && !(dtypes[i].modes & ALIAS)) return dtypes[i].descr;
    return "?";
}

static size_t itemsize(npy_dtype t) {
    switch (t) {
    case NPY_U1: case NPY_I1: case NPY_V1: return 1;
    case NPY_F2: case NPY_U2: case NPY_V2: return 2;
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

/* A header's dict, as a reader in `mode` takes it. */
typedef struct {
    npy_dtype dtype;
    int fortran, nd;
    size_t dims[NPY_MAXDIM];
    size_t n;
    char descr[32];
} header;

static int parse_header(const char *h, header *o, char *msg, size_t len, unsigned mode) {
    memset(o, 0, sizeof *o);
    const int maxd = mode == ND ? NPY_MAXDIM : 2;
    const char *p = h;
    while (*p == ' ') p++;
    if (*p != '{') { snprintf(msg, len, "bad header: expected a dict literal starting with '{'"); return -1; }
    if (!strchr(p, '}')) { snprintf(msg, len, "bad header: no closing '}'"); return -1; }
    const char *d = npy_header_key(h, "descr");
    if (!d || (*d != '\'' && *d != '"')) { snprintf(msg, len, "bad header: no 'descr' string"); return -1; }
    char q = *d++;
    size_t n = 0;
    while (*d && *d != q && n < sizeof o->descr - 1) o->descr[n++] = *d++;
    o->descr[n] = 0;
    if (*d != q) { snprintf(msg, len, "bad header: unterminated 'descr'"); return -1; }
    size_t i = 0, k = 0;
    while (i < sizeof dtypes / sizeof dtypes[0] && !((dtypes[i].modes & mode) && !strcmp(dtypes[i].descr, o->descr))) i++;
    if (i == sizeof dtypes / sizeof dtypes[0]) {
        k = (size_t)snprintf(msg, len, "unsupported dtype '%s' (expected", o->descr);
        size_t listed = 0, total = 0;
        for (size_t j = 0; j < sizeof dtypes / sizeof dtypes[0]; j++) total += (dtypes[j].modes & mode) && !(dtypes[j].modes & ALIAS);
        for (size_t j = 0; j < sizeof dtypes / sizeof dtypes[0] && k < len; j++)
            if ((dtypes[j].modes & mode) && !(dtypes[j].modes & ALIAS))
                k += (size_t)snprintf(msg + k, len - k, "%s '%s'", !listed++ ? "" : listed == total ? " or" : ",", dtypes[j].descr);
        if (k < len && mode == ND) k += (size_t)snprintf(msg + k, len - k, "; '<V2' is ml_dtypes' bfloat16, '<V1' and '<f1' its 8- and 4-bit types");
        if (k < len) snprintf(msg + k, len - k, ")");
        return -1;
    }
    o->dtype = dtypes[i].t;
    const char *f = npy_header_key(h, "fortran_order");
    if (!f) { snprintf(msg, len, "bad header: no 'fortran_order'"); return -1; }
    if (!strncmp(f, "True", 4)) o->fortran = 1;
    else if (!strncmp(f, "False", 5)) o->fortran = 0;
    else { snprintf(msg, len, "bad header: fortran_order must be True or False"); return -1; }
    const char *s = npy_header_key(h, "shape");
    if (!s || *s != '(') { snprintf(msg, len, "bad header: no 'shape' tuple"); return -1; }
    s++;
    o->n = 1;
    for (;;) {
        while (*s == ' ') s++;
        if (*s == ')') break;
        if (!isdigit((unsigned char)*s)) { snprintf(msg, len, "bad header: shape must be a tuple of non-negative integers"); return -1; }
        errno = 0;
        char *e;
        unsigned long long v = strtoull(s, &e, 10);
        if (errno || v > ((size_t)1 << 40)) { snprintf(msg, len, "bad header: shape dimension too large"); return -1; }
        if (o->nd == maxd) {
            if (mode == ND) snprintf(msg, len, "more than %d dimensions", NPY_MAXDIM);
            else snprintf(msg, len, "bad header: more than 2 dimensions (expected a vector or a matrix)");
            return -1;
        }
        o->dims[o->nd++] = (size_t)v;
        if (v && o->n > (mode == ND ? ((size_t)1 << 31) - 1 : (size_t)1 << 40) / v) {
            snprintf(msg, len, mode == ND ? "too many elements (at most 2^31 - 1)" : "bad header: array too large");
            return -1;
        }
        o->n *= (size_t)v;
        s = e;
        while (*s == ' ') s++;
        if (*s == ',') s++;
        else if (*s != ')') { snprintf(msg, len, "bad header: malformed shape tuple"); return -1; }
    }
    if (o->nd == 0) {
        snprintf(msg, len, mode == ND ? "a 0-d array (save at least a 1-d array)"
                                      : "bad header: 0-d arrays are not supported (expected a vector or a matrix)");
        return -1;
    }
    if (mode == ND && o->fortran && o->nd > 1) {
        snprintf(msg, len, "Fortran-order arrays are not supported (save np.ascontiguousarray(x))");
        return -1;
    }
    return 0;
}

/* The header dict of the .npy file fp (path in messages), malloc'ed in *h:
 * 0, NPY_NOT_NPY or -1, with a message. */
static int read_header(FILE *fp, const char *path, char **h, char *err, size_t errlen) {
    *h = NULL;
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, fp);
    if (got < 6 || memcmp(pre, "\x93NUMPY", 6)) {
        fail(err, errlen, path, "not a .npy file (wrong magic: expected \\x93NUMPY)");
        return NPY_NOT_NPY;
    }
    if (got < 10) return fail(err, errlen, path, "truncated header");
    int major = pre[6];
    size_t hlen;
    if (major == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, fp) != 2) return fail(err, errlen, path, "truncated header");
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        char m[100];
        snprintf(m, sizeof m, "unsupported .npy format version %d (expected 1, 2 or 3)", major);
        return fail(err, errlen, path, m);
    }
    if (hlen == 0 || hlen > (1u << 24)) return fail(err, errlen, path, "bad header length");
    char *b = malloc(hlen + 1);
    if (!b) return fail(err, errlen, path, "out of memory");
    if (fread(b, 1, hlen, fp) != hlen) { free(b); return fail(err, errlen, path, "truncated header"); }
    b[hlen] = 0;
    if (memchr(b, 0, hlen)) { free(b); return fail(err, errlen, path, "bad header: NUL byte in the header"); }
    *h = b;
    return 0;
}

/* The rest of fp, exactly `bytes` of it, into *data (malloc'ed): 0 or -1.
 * A header may promise far more data than the file holds: the size is
 * checked before allocating (a 100-byte file must not ask for 700 GB). */
static int read_data(FILE *fp, const char *path, size_t bytes, void **data, char *err, size_t errlen) {
    char msg[200];
    struct stat st;
    long pos = ftell(fp);
    *data = NULL;
    if (pos >= 0 && fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= (uint64_t)pos &&
        (uint64_t)st.st_size - (uint64_t)pos < (uint64_t)bytes) {
        snprintf(msg, sizeof msg, "truncated data: %llu of %zu bytes", (unsigned long long)((uint64_t)st.st_size - (uint64_t)pos), bytes);
        return fail(err, errlen, path, msg);
    }
    void *b = malloc(bytes ? bytes : 1);
    if (!b) return fail(err, errlen, path, "out of memory");
    size_t rd = fread(b, 1, bytes, fp);
    if (rd != bytes) {
        free(b);
        snprintf(msg, sizeof msg, "truncated data: %zu of %zu bytes", rd, bytes);
        return fail(err, errlen, path, msg);
    }
    if (fgetc(fp) != EOF) { free(b); return fail(err, errlen, path, "trailing data after the array (shape does not match the file size)"); }
    *data = b;
    return 0;
}

/* Open path and read its header dict in `mode`: 0 (fp open), NPY_NOT_NPY or -1. */
static int open_header(const char *path, FILE **fpp, header *o, unsigned mode, char *err, size_t errlen) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        char m[200];
        snprintf(m, sizeof m, "cannot open: %s", strerror(errno));
        return fail(err, errlen, path, m);
    }
    char *h, msg[300];
    int rc = read_header(fp, path, &h, err, errlen);
    if (rc == 0 && parse_header(h, o, msg, sizeof msg, mode)) rc = fail(err, errlen, path, msg);
    free(h);
    if (rc) fclose(fp);
    else *fpp = fp;
    return rc;
}

/* A 1-d or 2-d header as npy_array's fields (a vector of n is 1 x n). */
static void as_matrix(const header *o, npy_array *a) {
    a->dtype = o->dtype, a->fortran = o->fortran, a->ndim = o->nd;
    a->rows = o->nd == 2 ? o->dims[0] : 1;
    a->cols = o->nd == 2 ? o->dims[1] : o->dims[0];
    a->n = o->n;
}

int npy_read(const char *path, npy_array *a, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    FILE *fp;
    header o;
    if (open_header(path, &fp, &o, MATRIX, err, errlen)) return -1;
    as_matrix(&o, a);
    int rc = read_data(fp, path, a->n * itemsize(a->dtype), &a->data, err, errlen);
    fclose(fp);
    return rc;
}

int npy_read_nd(const char *path, npy_nd *t, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    FILE *fp;
    header o;
    int rc = open_header(path, &fp, &o, ND, err, errlen);
    if (rc) return rc;
    t->dtype = o.dtype, t->ndim = o.nd, t->n = o.n;
    memcpy(t->shape, o.dims, sizeof t->shape);
    memcpy(t->descr, o.descr, sizeof t->descr);
    rc = read_data(fp, path, t->n * itemsize(t->dtype), &t->data, err, errlen);
    fclose(fp);
    return rc;
}

void npy_nd_free(npy_nd *t) {
    free(t->data);
    t->data = NULL;
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
    char msg[300];
    header o;
    if (parse_header(h, &o, msg, sizeof msg, WIDE)) { free(h); return fail(err, errlen, name, msg); }
    free(h);
    as_matrix(&o, a);
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
