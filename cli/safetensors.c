/* SPDX-License-Identifier: MIT */
/* safetensors.c: the safetensors reader and writer (safetensors.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "cli.h"
#include "safetensors.h"

/* The one table of dtypes: names as the header spells them (safetensors'
 * Dtype enum), bits per element, the fpemu format of their codes. */
static const st_dtype_info dtypes[ST_NDTYPE] = {
    [ST_BOOL] = {"BOOL", 8, NULL},
    [ST_U8] = {"U8", 8, NULL},
    [ST_I8] = {"I8", 8, NULL},
    [ST_F8_E5M2] = {"F8_E5M2", 8, "e5m2"},
    [ST_F8_E4M3] = {"F8_E4M3", 8, "e4m3"},
    [ST_F8_E8M0] = {"F8_E8M0", 8, "e8m0"},
    [ST_F8_E4M3FNUZ] = {"F8_E4M3FNUZ", 8, "e4m3fnuz"},
    [ST_F8_E5M2FNUZ] = {"F8_E5M2FNUZ", 8, "e5m2fnuz"},
    [ST_F4] = {"F4", 4, "e2m1"},
    [ST_F6_E2M3] = {"F6_E2M3", 6, "e2m3"},
    [ST_F6_E3M2] = {"F6_E3M2", 6, "e3m2"},
    [ST_I16] = {"I16", 16, NULL},
    [ST_U16] = {"U16", 16, NULL},
    [ST_F16] = {"F16", 16, "f16"},
    [ST_BF16] = {"BF16", 16, "bf16"},
    [ST_I32] = {"I32", 32, NULL},
    [ST_U32] = {"U32", 32, NULL},
    [ST_F32] = {"F32", 32, "f32"},
    [ST_F64] = {"F64", 64, "f64"},
    [ST_I64] = {"I64", 64, NULL},
    [ST_U64] = {"U64", 64, NULL},
    [ST_C64] = {"C64", 64, NULL},
};

const st_dtype_info *st_dtype_get(st_dtype d) { return (unsigned)d < ST_NDTYPE ? &dtypes[d] : NULL; }

int st_dtype_of_format(const char *format) {
    for (int d = 0; d < ST_NDTYPE; d++)
        if (dtypes[d].format && !strcmp(dtypes[d].format, format)) return d;
    return -1;
}

int st_cast_ok(st_dtype d) { return (unsigned)d < ST_NDTYPE && dtypes[d].format && dtypes[d].bits != 6; }

int64_t st_nbytes(st_dtype d, uint64_t n) {
    uint64_t bits = (uint64_t)dtypes[d].bits;
    if (n > (uint64_t)INT64_MAX / bits) return -1;
    if (n * bits % 8) return -1;
    return (int64_t)(n * bits / 8);
}

static int fail(char *err, size_t errlen, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, const char *name, const char *fmt, ...) {
    char m[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s: %s", name, m);
    return -1;
}

/* Strict UTF-8 (no overlong forms, no surrogates, at most U+10FFFF), as
 * Rust's str::from_utf8 reads the header. The offset of the first bad
 * byte, or n. */
static size_t utf8_bad(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) k = 1;
        else if (c >= 0xE0 && c <= 0xEF) k = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4) k = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        else return i;
        if (i + k >= n) return i; /* truncated */
        if (s[i + 1] < lo || s[i + 1] > hi) return i;
        for (size_t j = 2; j <= k; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xBF) return i;
        i += k + 1;
    }
    return n;
}

/* A JSON number that is a whole number in [0, 2^53] (exact in a double). */
static int json_count(const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || d != (double)(uint64_t)d) return -1;
    *out = (uint64_t)d;
    return 0;
}

static int by_offset(const void *a, const void *b) {
    const st_tensor *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name); /* empty tensors at one offset: by name, so that the order is one */
}
static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
/* A name that the n names hold twice (the array is sorted), or NULL. */
static const char *first_dup(char **names, int n) {
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 1; i < n; i++)
        if (!strcmp(names[i - 1], names[i])) return names[i];
    return NULL;
}
/* The header length: the first 8 bytes, little-endian. */
static uint64_t rd64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static int json_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void st_free(st_file *s) {
    if (!s) return;
    for (int i = 0; i < s->count; i++) free(s->t[i].name);
    for (int i = 0; i < s->nmeta; i++) free(s->meta_key[i]), free(s->meta_val[i]);
    free(s->t), free(s->meta_key), free(s->meta_val), free(s->path);
    if (s->f) fclose(s->f);
    memset(s, 0, sizeof *s);
}

static int parse_tensor(const cJSON *e, const char *name, st_tensor *t, char *err, size_t errlen) {
    if (!cJSON_IsObject(e)) return fail(err, errlen, name, "tensor '%s': not a JSON object", e->string);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dt)) return fail(err, errlen, name, "tensor '%s': no \"dtype\" string", e->string);
    int d = -1;
    for (int k = 0; k < ST_NDTYPE && d < 0; k++)
        if (!strcmp(dtypes[k].name, dt->valuestring)) d = k;
    if (d < 0) {
        char known[256] = "";
        for (int k = 0; k < ST_NDTYPE; k++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", dtypes[k].name);
        return fail(err, errlen, name, "tensor '%s': unknown dtype \"%.40s\" (expected one of %s)", e->string, dt->valuestring,
                    known);
    }
    t->dtype = (st_dtype)d;
    if (!cJSON_IsArray(sh)) return fail(err, errlen, name, "tensor '%s': no \"shape\" array", e->string);
    int nd = cJSON_GetArraySize(sh);
    if (nd > ST_MAXDIM) return fail(err, errlen, name, "tensor '%s': %d dimensions, at most %d are read", e->string, nd, ST_MAXDIM);
    t->ndim = nd;
    t->n = 1;
    int k = 0, over = 0;
    for (const cJSON *v = sh->child; v; v = v->next, k++) {
        if (json_count(v, &t->shape[k]))
            return fail(err, errlen, name, "tensor '%s': shape[%d] is not a whole number in [0, 2^53]", e->string, k);
        if (t->shape[k] && t->n > UINT64_MAX / t->shape[k]) over = 1;
        else t->n *= t->shape[k];
    }
    for (k = 0; k < nd; k++)
        if (!t->shape[k]) t->n = 0, over = 0; /* a zero dimension: no elements, whatever the others */
    if (!cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2 || json_count(of->child, &t->begin) ||
        json_count(of->child->next, &t->end))
        return fail(err, errlen, name, "tensor '%s': \"data_offsets\" is not [BEGIN, END] of whole numbers in [0, 2^53]",
                    e->string);
    int64_t nb = over ? -1 : st_nbytes(t->dtype, t->n);
    if (nb < 0)
        return fail(err, errlen, name, "tensor '%s': %s", e->string,
                    over ? "its shape has more elements than 2^64" : "its elements do not fill a whole number of bytes");
    if (t->end < t->begin || t->end - t->begin != (uint64_t)nb)
        return fail(err, errlen, name, "tensor '%s': data_offsets [%llu, %llu] hold %lld bytes, its shape and dtype %s need %lld",
                    e->string, (unsigned long long)t->begin, (unsigned long long)t->end,
                    t->end < t->begin ? -1LL : (long long)(t->end - t->begin), dtypes[d].name, (long long)nb);
    return 0;
}

/* "__metadata__" (null, or an object of strings, no key twice) into s's
 * meta_key and meta_val, in the header's order. 0, or -1 with a message. */
static int parse_meta(const cJSON *e, const char *name, st_file *s, char *err, size_t errlen) {
    if (cJSON_IsNull(e)) return 0;
    if (!cJSON_IsObject(e)) return fail(err, errlen, name, "\"__metadata__\" is not an object of strings");
    int m = cJSON_GetArraySize(e);
    s->meta_key = calloc((size_t)m + 1, sizeof *s->meta_key);
    s->meta_val = calloc((size_t)m + 1, sizeof *s->meta_val);
    if (!s->meta_key || !s->meta_val) return fail(err, errlen, name, "out of memory");
    for (const cJSON *v = e->child; v; v = v->next) {
        if (!cJSON_IsString(v)) return fail(err, errlen, name, "\"__metadata__\": the value of '%s' is not a string", v->string);
        s->meta_key[s->nmeta] = strdup(v->string);
        s->meta_val[s->nmeta] = strdup(v->valuestring);
        s->nmeta++;
        if (!s->meta_key[s->nmeta - 1] || !s->meta_val[s->nmeta - 1]) return fail(err, errlen, name, "out of memory");
    }
    char **keys = malloc(((size_t)m + 1) * sizeof *keys); /* sorted apart: meta_key keeps the header's order */
    if (!keys) return fail(err, errlen, name, "out of memory");
    memcpy(keys, s->meta_key, (size_t)m * sizeof *keys);
    const char *dup = first_dup(keys, m);
    int rc = dup ? fail(err, errlen, name, "\"__metadata__\": the key '%s' is given twice", dup) : 0;
    free(keys);
    return rc;
}

int st_parse(const unsigned char *buf, size_t n, uint64_t file_size, const char *name, st_file *s, char *err,
             size_t errlen) {
    memset(s, 0, sizeof *s);
    if (n < 8 || file_size < 8) return fail(err, errlen, name, "shorter than the 8-byte header length: not a safetensors file");
    uint64_t hl = rd64(buf);
    if (hl > ST_HEADER_MAX) return fail(err, errlen, name, "header length %llu is above the format's limit of 100,000,000 bytes",
                                        (unsigned long long)hl);
    if (hl + 8 > file_size) return fail(err, errlen, name, "header length %llu runs past the end of the file (%llu bytes)",
                                        (unsigned long long)hl, (unsigned long long)file_size);
    if (hl + 8 > n) return fail(err, errlen, name, "header not read whole");
    const unsigned char *h = buf + 8;
    size_t bad = utf8_bad(h, (size_t)hl);
    if (bad < hl) return fail(err, errlen, name, "header is not valid UTF-8 (byte %zu of the header)", bad);
    for (size_t i = 0; i + 1 < hl; i++)
        if (h[i] == '\\') {
            if (h[i + 1] == 'u' && i + 5 < hl && !strncasecmp((const char *)h + i + 2, "0000", 4))
                return fail(err, errlen, name, "header has a \\u0000 escape (a name or value with a NUL byte is not read)");
            i++;
        }
    size_t p = 0;
    while (p < hl && json_space(h[p])) p++;
    if (p == hl || h[p] != '{') return fail(err, errlen, name, "header is not a JSON object (it must start with '{')");
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts((const char *)h, (size_t)hl, &end, 0);
    if (!doc) return fail(err, errlen, name, "header is not valid JSON (near byte %td of the header)",
                          cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - (const char *)h : (ptrdiff_t)0);
    int rc = -1;
    for (const char *q = end; q < (const char *)h + hl; q++)
        if (!json_space((unsigned char)*q)) {
            fail(err, errlen, name, "header has data after its JSON object (byte %td)", q - (const char *)h);
            goto out;
        }
    if (!cJSON_IsObject(doc)) { fail(err, errlen, name, "header is not a JSON object"); goto out; }
    int members = cJSON_GetArraySize(doc);
    s->t = calloc((size_t)members + 1, sizeof *s->t);
    char **names = calloc((size_t)members + 1, sizeof *names);
    if (!s->t || !names) { free(names); fail(err, errlen, name, "out of memory"); goto out; }
    int nnames = 0, seen_meta = 0;
    for (const cJSON *e = doc->child; e; e = e->next) {
        names[nnames++] = e->string;
        if (!strcmp(e->string, "__metadata__")) {
            if (++seen_meta > 1) { free(names); fail(err, errlen, name, "the name '__metadata__' is given twice in the header"); goto out; }
            if (parse_meta(e, name, s, err, errlen)) { free(names); goto out; }
            continue;
        }
        st_tensor *t = &s->t[s->count];
        if (parse_tensor(e, name, t, err, errlen)) { free(names); goto out; }
        if (!(t->name = strdup(e->string))) { free(names); fail(err, errlen, name, "out of memory"); goto out; }
        s->count++;
    }
    const char *dup = first_dup(names, nnames);
    if (dup) fail(err, errlen, name, "the name '%s' is given twice in the header", dup);
    free(names);
    if (dup) goto out;
    /* the ranges, in order, tile the data part: no gap, no overlap */
    qsort(s->t, (size_t)s->count, sizeof *s->t, by_offset);
    uint64_t at = 0;
    for (int i = 0; i < s->count; i++) {
        if (s->t[i].begin != at) {
            fail(err, errlen, name, "tensor '%s' starts at byte %llu of the data, where %s at %llu (the data must be "
                 "covered exactly, without gaps or overlaps)", s->t[i].name, (unsigned long long)s->t[i].begin,
                 i ? "the previous tensor ends" : "the data starts", (unsigned long long)at);
            goto out;
        }
        at = s->t[i].end;
    }
    s->header_len = hl;
    s->data_len = file_size - 8 - hl;
    if (at != s->data_len) {
        fail(err, errlen, name, "the tensors cover %llu bytes of data, the file holds %llu after its header",
             (unsigned long long)at, (unsigned long long)s->data_len);
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(doc);
    if (rc) st_free(s);
    return rc;
}

int st_sniff(const unsigned char *buf, size_t n) {
    if (n < 9) return 0;
    for (size_t i = 8; i < n; i++) {
        if (buf[i] == '{') return 1;
        if (!json_space(buf[i])) return 0;
    }
    return 0;
}

int st_open(const char *path, st_file *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, path, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) { fclose(f); return fail(err, errlen, path, "not a regular file"); }
    unsigned char pre[8];
    if (fread(pre, 1, 8, f) != 8) { fclose(f); return fail(err, errlen, path, "shorter than the 8-byte header length: not a safetensors file"); }
    uint64_t hl = rd64(pre);
    if (hl > ST_HEADER_MAX || hl + 8 > (uint64_t)st.st_size) {
        fclose(f);
        return st_parse(pre, 8, (uint64_t)st.st_size, path, s, err, errlen); /* its message */
    }
    unsigned char *b = malloc((size_t)hl + 8);
    if (!b) { fclose(f); return fail(err, errlen, path, "out of memory (a header of %llu bytes)", (unsigned long long)hl); }
    memcpy(b, pre, 8);
    if (fread(b + 8, 1, (size_t)hl, f) != hl) { free(b), fclose(f); return fail(err, errlen, path, "changed while it was read"); }
    int rc = st_parse(b, (size_t)hl + 8, (uint64_t)st.st_size, path, s, err, errlen);
    free(b);
    if (rc) { fclose(f); return rc; }
    s->f = f;
    if (!(s->path = strdup(path))) { st_free(s); return fail(err, errlen, path, "out of memory"); }
    return 0;
}

int st_read_tensor(st_file *s, int i, void *buf, char *err, size_t errlen) {
    const st_tensor *t = &s->t[i];
    uint64_t nb = t->end - t->begin;
    if (!nb) return 0;
    uint64_t off = 8 + s->header_len + t->begin;
    if (off > (uint64_t)INT64_MAX || fseeko(s->f, (off_t)off, SEEK_SET) || fread(buf, 1, (size_t)nb, s->f) != nb)
        return fail(err, errlen, s->path, "tensor '%s': cannot read its %llu bytes (the file changed?)", t->name,
                    (unsigned long long)nb);
    return 0;
}

/* ---- writing ---------------------------------------------------------------- */

int st_write_header(FILE *f, const st_out *t, int count, char *const *meta_key, char *const *meta_val, int nmeta,
                    char *err, size_t errlen) {
    char *h = NULL;
    size_t hn = 0;
    FILE *m = open_memstream(&h, &hn);
    if (!m) return fail(err, errlen, "safetensors header", "out of memory");
    fputc('{', m);
    if (nmeta) {
        fputs("\"__metadata__\":{", m);
        for (int i = 0; i < nmeta; i++) {
            if (i) fputc(',', m);
            cli_json_str(m, meta_key[i]);
            fputc(':', m);
            cli_json_str(m, meta_val[i]);
        }
        fputc('}', m);
    }
    uint64_t at = 0;
    int bad = -1;
    for (int i = 0; i < count; i++) {
        uint64_t n = 1;
        for (int k = 0; k < t[i].ndim; k++) n *= t[i].shape[k];
        int64_t nb = st_nbytes(t[i].dtype, n);
        if (nb < 0 && bad < 0) bad = i;
        if (i || nmeta) fputc(',', m);
        cli_json_str(m, t[i].name);
        fprintf(m, ":{\"dtype\":\"%s\",\"shape\":[", dtypes[t[i].dtype].name);
        for (int k = 0; k < t[i].ndim; k++) fprintf(m, "%s%llu", k ? "," : "", (unsigned long long)t[i].shape[k]);
        fprintf(m, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)at, (unsigned long long)(at + (uint64_t)(nb < 0 ? 0 : nb)));
        at += (uint64_t)(nb < 0 ? 0 : nb);
    }
    fputc('}', m);
    while (ftell(m) % 8) fputc(' ', m); /* the data starts at a multiple of 8, as the reference writes it */
    if (fclose(m)) { free(h); return fail(err, errlen, "safetensors header", "out of memory"); }
    if (bad >= 0) { free(h); return fail(err, errlen, t[bad].name, "its elements do not make a whole number of bytes of %s", dtypes[t[bad].dtype].name); }
    unsigned char pre[8];
    for (int i = 0; i < 8; i++) pre[i] = (unsigned char)((uint64_t)hn >> 8 * i);
    int ok = fwrite(pre, 1, 8, f) == 8 && fwrite(h, 1, hn, f) == hn;
    free(h);
    if (!ok) return fail(err, errlen, "safetensors header", "write failed: %s", strerror(errno));
    return 0;
}
