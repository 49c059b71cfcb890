/* SPDX-License-Identifier: MIT */
/* csv.c: the CSV reader of csv.h. */
#include "csv.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "train.h"

char *csv_slurp_max(const char *path, size_t max, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct stat st; /* a regular file too large is refused before it is read */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)max) {
        fclose(f);
        errno = EFBIG;
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);
    if (!b) { fclose(f); errno = ENOMEM; return NULL; }
    for (;;) {
        if (cap - n < 4096) {
            char *nb = realloc(b, cap * 2);
            if (!nb) { free(b); fclose(f); errno = ENOMEM; return NULL; }
            b = nb;
            cap *= 2;
        }
        errno = 0;
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (n > max) { free(b); fclose(f); errno = EFBIG; return NULL; }
        if (got == 0) break;
    }
    int bad = ferror(f), e = errno ? errno : EIO;
    fclose(f);
    if (bad) { free(b); errno = e; return NULL; }
    b[n] = 0;
    if (len) *len = n;
    return b;
}

char *csv_slurp(const char *path, size_t *len) { return csv_slurp_max(path, SIZE_MAX, len); }

/* Split one record starting at *pp (in place). Fields go to out (up to max;
 * the count is returned even beyond max). *pp moves past the line end.
 * Returns -1 on a quoting error, with *why set. */
static long split_record(char **pp, char **out, long max, long *line, const char **why) {
    char *p = *pp, *w;
    long nf = 0;
    for (;;) {
        char *start = p;
        w = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (!*p) { *why = "a quoted field runs to the end of the file (missing closing \")"; return -1; }
                if (*p == '"') {
                    if (p[1] == '"') { *w++ = '"'; p += 2; continue; }
                    p++;
                    break;
                }
                if (*p == '\n') (*line)++;
                *w++ = *p++;
            }
            if (*p && *p != ',' && *p != '\n' && !(*p == '\r' && (p[1] == '\n' || !p[1]))) {
                *why = "text after a closing quote (expected , or the end of the line)";
                return -1;
            }
        } else {
            while (*p && *p != ',' && *p != '\n') {
                if (*p == '"') { *why = "a quote inside an unquoted field"; return -1; }
                p++;
            }
            w = p;
            if (w > start && w[-1] == '\r' && (*p == '\n' || !*p)) w--;
        }
        if (*p == '\r') p++;
        char sep = *p;
        *w = 0;
        if (nf < max) out[nf] = start;
        nf++;
        if (sep == ',') { p++; continue; }
        if (sep == '\n') p++;
        break;
    }
    *pp = p;
    return nf;
}

/* Parse t->buf (LEN bytes, NUL-terminated) from offset OFF: the body of
 * csv_read, shared with csv_read_user. */
static int parse_table(csv_table *t, const char *path, size_t len, size_t off, char *err, size_t errlen);

/* t emptied and PATH read whole into t->buf (*len bytes): 0, or -1 with a message. */
static int load_buf(csv_table *t, const char *path, size_t *len, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    t->buf = csv_slurp(path, len);
    if (!t->buf) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int csv_read(csv_table *t, const char *path, char *err, size_t errlen) {
    size_t len;
    if (load_buf(t, path, &len, err, errlen)) return -1;
    return parse_table(t, path, len, 0, err, errlen);
}

static int parse_table(csv_table *t, const char *path, size_t len, size_t off, char *err, size_t errlen) {
    if (memchr(t->buf, 0, len)) {
        snprintf(err, errlen, "%s: binary data (a NUL byte at offset %zu), expected CSV text", path,
                 (size_t)((char *)memchr(t->buf, 0, len) - t->buf));
        csv_free(t);
        return -2;
    }
    /* count lines to size the arrays */
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += t->buf[i] == '\n';
    char *p = t->buf + off;
    long line = 1;
    const char *why = NULL;
    if (!*p) {
        snprintf(err, errlen, "%s: empty file, expected a header line", path);
        csv_free(t);
        return -2;
    }
    /* header: at most one field more than the commas in the file */
    size_t maxf = 1;
    for (size_t i = 0; i < len; i++) maxf += t->buf[i] == ',';
    t->header = malloc(maxf * sizeof *t->header);
    if (!t->header) { snprintf(err, errlen, "%s: out of memory", path); csv_free(t); return -1; }
    long nf = split_record(&p, t->header, (long)maxf, &line, &why);
    if (nf < 0) goto bad;
    t->cells = malloc(lines * (size_t)nf * sizeof *t->cells + 1);
    t->lineno = malloc(lines * sizeof *t->lineno + 1);
    if (!t->cells || !t->lineno) { snprintf(err, errlen, "%s: out of memory", path); csv_free(t); return -1; }
    t->ncols = (int)nf;
    for (int i = 0; i < t->ncols; i++) {
        if (!t->header[i][0]) {
            snprintf(err, errlen, "%s: line 1: column %d of the header has no name, expected a header line of column names", path, i + 1);
            csv_free(t);
            return -2;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(t->header[i], t->header[j])) {
                snprintf(err, errlen, "%s: line 1: column '%s' appears twice in the header", path, t->header[i]);
                csv_free(t);
                return -2;
            }
    }
    line++;
    while (*p) {
        long start_line = line;
        if (*p == '\n' || (*p == '\r' && p[1] == '\n')) {
            /* a blank line: allowed only at the end of the file */
            char *q = p;
            while (*q == '\n' || *q == '\r') q++;
            if (!*q) break;
            snprintf(err, errlen, "%s: line %ld: blank line inside the data, expected %d fields", path, line, t->ncols);
            csv_free(t);
            return -2;
        }
        char **row = t->cells + (size_t)t->nrows * (size_t)t->ncols;
        nf = split_record(&p, row, t->ncols, &line, &why);
        if (nf < 0) { line = start_line; goto bad; }
        if (nf != t->ncols) {
            snprintf(err, errlen, "%s: line %ld: %ld field%s, expected %d (the header's column count)", path, start_line, nf,
                     nf == 1 ? "" : "s", t->ncols);
            csv_free(t);
            return -2;
        }
        t->lineno[t->nrows++] = start_line;
        line++;
    }
    return 0;
bad:
    snprintf(err, errlen, "%s: line %ld: %s", path, line, why);
    csv_free(t);
    return -2;
}

int csv_read_user(csv_table *t, const char *path, char *err, size_t errlen) {
    size_t len;
    if (load_buf(t, path, &len, err, errlen)) return -1;
    size_t off = len >= 3 && !memcmp(t->buf, "\xEF\xBB\xBF", 3) ? 3 : 0;
    /* a CR that neither ends a CRLF line nor the file, outside quotes: the
     * old Mac line end, which the reader would take for one long line */
    long line = 1;
    int quoted = 0;
    for (size_t i = memchr(t->buf, 0, len) ? len : off; i < len; i++) { /* binary data: parse_table says so */
        char ch = t->buf[i];
        if (ch == '"') quoted = !quoted;
        else if (ch == '\n') line++;
        else if (ch == '\r' && !quoted && i + 1 < len && t->buf[i + 1] != '\n') {
            snprintf(err, errlen, "%s: line %ld: a carriage return (CR) that does not end a CRLF line (old Mac line ends?), "
                                  "expected LF or CRLF line ends", path, line);
            csv_free(t);
            return -2;
        }
    }
    int rc = parse_table(t, path, len, off, err, errlen);
    if (rc) return rc;
    /* spaces around the column names ("step, loss") are not part of them */
    for (int i = 0; i < t->ncols; i++) {
        char *h = t->header[i];
        while (*h == ' ' || *h == '\t') h++;
        size_t n = strlen(h);
        while (n && (h[n - 1] == ' ' || h[n - 1] == '\t')) h[--n] = 0;
        t->header[i] = h;
        if (!*h) {
            snprintf(err, errlen, "%s: line 1: column %d of the header has no name, expected a header line of column names", path,
                     i + 1);
            csv_free(t);
            return -2;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(t->header[i], t->header[j])) {
                snprintf(err, errlen, "%s: line 1: column '%s' appears twice in the header", path, t->header[i]);
                csv_free(t);
                return -2;
            }
    }
    return 0;
}

void csv_free(csv_table *t) {
    free(t->header);
    free(t->cells);
    free(t->lineno);
    free(t->buf);
    t->header = NULL;
    t->cells = NULL;
    t->lineno = NULL;
    t->buf = NULL;
    t->ncols = 0;
    t->nrows = 0;
}

int csv_col(const csv_table *t, const char *name) {
    for (int i = 0; i < t->ncols; i++)
        if (!strcmp(t->header[i], name)) return i;
    return -1;
}

int csv_num(const char *s, double *out) {
    while (*s == ' ') s++;
    if (!*s) return -1;
    const char *b = s;
    if (*b == '-' || *b == '+') b++;
    if (!strcasecmp(b, "nan") || !strcasecmp(b, "-nan")) { *out = NAN; return 0; }
    if (!strcasecmp(b, "inf") || !strcasecmp(b, "infinity")) { *out = *s == '-' ? -INFINITY : INFINITY; return 0; }
    /* digits, one point, an exponent: nothing else (no hex, no "0x") */
    const char *q = b;
    int digits = 0;
    while (*q >= '0' && *q <= '9') q++, digits++;
    if (*q == '.') { q++; while (*q >= '0' && *q <= '9') q++, digits++; }
    if (!digits) return -1;
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '-' || *q == '+') q++;
        if (!(*q >= '0' && *q <= '9')) return -1;
        while (*q >= '0' && *q <= '9') q++;
    }
    while (*q == ' ') q++;
    if (*q) return -1;
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return 0;
}

double csv_get(const csv_table *t, long row, int col) {
    double v;
    if (col < 0 || row < 0 || row >= t->nrows || csv_num(csv_cell(t, row, col), &v)) return NAN;
    return v;
}

int csv_check_steps(const csv_table *t, int strict, char *err, size_t errlen) {
    int sc = csv_col(t, "step");
    if (sc < 0) return 0;
    double prev = 0;
    for (long i = 0; i < t->nrows; i++) {
        double v;
        const char *c = csv_cell(t, i, sc);
        if (csv_num(c, &v) || !isfinite(v)) {
            snprintf(err, errlen, "%s: line %ld: step '%s' is not a number", t->path, t->lineno[i], c);
            return -2;
        }
        if (i && (v < prev || (strict && v == prev))) {
            if (v == prev)
                snprintf(err, errlen, "%s: line %ld: step %s repeats the step of line %ld (a duplicated row), expected one row "
                                      "per step", t->path, t->lineno[i], c, t->lineno[i - 1]);
            else
                snprintf(err, errlen, "%s: line %ld: step %s comes after step %s (line %ld), expected steps in increasing order",
                         t->path, t->lineno[i], c, csv_cell(t, i - 1, sc), t->lineno[i - 1]);
            return -2;
        }
        prev = v;
    }
    return 0;
}

/* CRC-32 (trn_crc32's) of the first N bytes of PATH; -1 if it cannot be read
 * whole. */
static int file_crc(const char *path, unsigned long long n, unsigned long *crc) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char b[65536];
    uint32_t c = 0;
    while (n) {
        size_t want = n < sizeof b ? (size_t)n : sizeof b, got = fread(b, 1, want, f);
        if (got != want) { fclose(f); return -1; }
        c = trn_crc32_update(c, b, got);
        n -= got;
    }
    fclose(f);
    *crc = (unsigned long)c;
    return 0;
}

int csv_run_check(const char *dir, char *err, size_t errlen) {
    static const char *const known[] = {"metrics.csv", "eval.csv", "tensors.csv", "checkpoint.bin", NULL};
    char p[4400];
    snprintf(p, sizeof p, "%s/summary.json", dir);
    struct stat st;
    if (lstat(p, &st) && errno == ENOENT) return 1;
    char *s = csv_slurp(p, NULL);
    if (!s) { snprintf(err, errlen, "%s: cannot read: %s", p, strerror(errno)); return -2; }
    cJSON *doc = cJSON_ParseWithOpts(s, NULL, 1);
    free(s);
    int rc = -2;
    const cJSON *files = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "files") : NULL;
    if (!cJSON_IsObject(doc)) {
        snprintf(err, errlen, "%s: not one whole JSON object (cut short, or text after it), expected the summary `fpemu train` "
                              "writes", p);
        goto out;
    }
    if (!files) {
        snprintf(err, errlen, "%s: no \"files\" list, so nothing says that the folder's files belong to one run (written by "
                              "an older fpemu train? run it again)", p);
        goto out;
    }
    if (!cJSON_IsObject(files)) {
        snprintf(err, errlen, "%s: \"files\" is not an object, expected {\"NAME\": {\"bytes\": N, \"crc32\": \"xxxxxxxx\"}, ...}", p);
        goto out;
    }
    for (const cJSON *f = files->child; f; f = f->next) {
        const char *name = f->string;
        if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "summary.json") ||
            strlen(name) > 255) {
            snprintf(err, errlen, "%s: \"files\": '%.80s' is not the name of another file of the folder", p, name ? name : "");
            goto out;
        }
        for (const cJSON *g = files->child; g != f; g = g->next)
            if (!strcmp(g->string, name)) {
                snprintf(err, errlen, "%s: \"files\" lists %s twice", p, name);
                goto out;
            }
        const cJSON *jb = cJSON_GetObjectItemCaseSensitive(f, "bytes"), *jc = cJSON_GetObjectItemCaseSensitive(f, "crc32");
        double bytes = cJSON_IsNumber(jb) ? jb->valuedouble : -1;
        const char *crc = cJSON_IsString(jc) ? jc->valuestring : "";
        int hexok = strlen(crc) == 8;
        for (int i = 0; hexok && i < 8; i++) hexok = (crc[i] >= '0' && crc[i] <= '9') || (crc[i] >= 'a' && crc[i] <= 'f');
        if (!cJSON_IsObject(f) || !(bytes >= 0 && bytes <= 9007199254740992.0 && bytes == floor(bytes)) || !hexok) {
            snprintf(err, errlen, "%s: \"files\": %s: expected {\"bytes\": N, \"crc32\": \"8 lowercase hex digits\"}", p, name);
            goto out;
        }
        char fp[4700];
        snprintf(fp, sizeof fp, "%s/%s", dir, name);
        if (stat(fp, &st)) {
            snprintf(err, errlen, "%s: %s: %s, but %s/summary.json lists it: the folder's files do not belong together", dir, name,
                     strerror(errno), dir);
            goto out;
        }
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, errlen, "%s: %s: not a regular file, but %s/summary.json lists it as one", dir, name, dir);
            goto out;
        }
        if ((double)st.st_size != bytes) {
            snprintf(err, errlen, "%s: %s has %lld bytes, summary.json says %.0f: the file does not belong to this run (another "
                                  "run's, or cut short)", dir, name, (long long)st.st_size, bytes);
            goto out;
        }
        unsigned long c;
        if (file_crc(fp, (unsigned long long)st.st_size, &c)) {
            snprintf(err, errlen, "%s: %s: cannot read: %s", dir, name, errno ? strerror(errno) : "short read");
            goto out;
        }
        char hex[16];
        snprintf(hex, sizeof hex, "%08lx", c & 0xffffffffUL);
        if (strcmp(hex, crc)) {
            snprintf(err, errlen, "%s: %s has CRC-32 %s, summary.json says %s: the file does not belong to this run (another "
                                  "run's, or changed since)", dir, name, hex, crc);
            goto out;
        }
    }
    for (int i = 0; known[i]; i++) {
        char fp[4700];
        snprintf(fp, sizeof fp, "%s/%s", dir, known[i]);
        if (lstat(fp, &st) == 0 && !cJSON_GetObjectItemCaseSensitive(files, known[i])) {
            snprintf(err, errlen, "%s: %s is there but %s/summary.json does not list it: it does not belong to this run", dir,
                     known[i], dir);
            goto out;
        }
    }
    rc = 0;
out:
    cJSON_Delete(doc);
    return rc;
}
