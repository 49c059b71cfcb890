/* SPDX-License-Identifier: MIT */
/* mma_preset.c: preset files, the text form of MMA models
 * (docs/tensor-cores.md, "Preset files"): written by
 * fpemu_mma_model_format / fpemu_mma_preset_format, read by
 * fpemu_mma_model_parse. One `key = value` per line, `#` comment lines:
 *
 *   fpemu_mma_preset = 1
 *   name = mydev
 *   device = ..., family = ..., status = ..., source = ... (repeatable)
 *   a = e4m3 e5m2          <- each `a =` line starts a binding
 *   b = e4m3 e5m2          (default: a's list)
 *   c = f32 f16            (default: f32)
 *   d = f32                (default: f32)
 *   kind = block-fma       (block-fma, exact, fma-seq, pairwise, int)
 *   block = 32 ...         (the keys of fpemu_mma_model_set)
 *
 * The library never prints: errors come back as "FILE:LINE: ...". */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "mma.h"

int emu__mma_preset_bindings(const char *name,
                             void (*fn)(void *, const fpemu_format *, const fpemu_format *, const fpemu_format *,
                                        const fpemu_format *),
                             void *user);

#define PRESET_MAX_BYTES (1 << 20)

int fpemu_mma_preset_read(const char *path, char **text, char *err, size_t errlen) {
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err) snprintf(err, errlen, "preset file %s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            if (cap > PRESET_MAX_BYTES) break;
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb, cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) {
        if (err) snprintf(err, errlen, "preset file %s: out of memory", path);
        return -1;
    }
    if (bad || n > PRESET_MAX_BYTES) {
        if (err) snprintf(err, errlen, "preset file %s: %s", path, bad ? "read error" : "larger than 1 MiB");
        free(buf);
        return -1;
    }
    buf[n] = 0;
    if (strlen(buf) != n) {
        if (err) snprintf(err, errlen, "preset file %s: NUL byte (not a text file)", path);
        free(buf);
        return -1;
    }
    *text = buf;
    return 0;
}

/* ---- writing ------------------------------------------------------------ */

typedef struct { char *buf; size_t len, o; } out;
static void put(out *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->o < w->len ? w->buf + w->o : NULL, w->o < w->len ? w->len - w->o : 0, fmt, ap);
    va_end(ap);
    if (n > 0) w->o += (size_t)n;
}

static const char *kind_name(fpemu_mma_kind k) {
    static const char *const names[] = {"block-fma", "exact", "fma-seq", "pairwise", "int"};
    return (unsigned)k <= FPEMU_MMA_KIND_INT ? names[k] : "?";
}

/* The parameter lines of m (everything but the formats). */
static void put_params(out *w, const fpemu_mma_model *m) {
    put(w, "kind = %s\n", kind_name(m->kind));
    if (m->kind == FPEMU_MMA_KIND_INT) {
        put(w, "block = %d\n", m->block);
        return;
    }
    put(w, "block = %d\n", m->block);
    if (m->kind == FPEMU_MMA_KIND_BLOCK) put(w, "nfrac = %d\n", m->nfrac);
    put(w, "align = %s\n", m->align == FPEMU_MMA_ALIGN_RD ? "rd" : "rz");
    put(w, "normalize = %s\n", m->norm == FPEMU_MMA_NORM_EACH ? "each" : "end");
    put(w, "chain = %s\n", m->chain == FPEMU_MMA_CHAIN_F32_ADD ? "f32-add" : "rounded");
    put(w, "out_round = %s\n", fpemu_round_name(m->out_round));
    put(w, "out_mant = %d\n", m->out_mant);
    put(w, "subnormals = %s\n", m->flush_subnormals ? "flush" : "keep");
    put(w, "tf32_truncate = %d\n", m->tf32_truncate);
    if (m->has_emax_floor) put(w, "emax_floor = %d\n", m->emax_floor);
    else put(w, "emax_floor = none\n");
    put(w, "overflow = %s\n", m->overflow_inf ? "inf" : "max");
    put(w, "zero_c = %s\n", m->zero_c ? "emin" : "ignore");
    put(w, "zero_product = %s\n", m->zero_product ? "emin" : "ignore");
    put(w, "zero_sign = %s\n", m->zero_plus ? "plus" : "ieee");
    put(w, "nan = %s\n", m->nan_allones ? "allones" : "canonical");
    put(w, "group = %d\n", m->group);
    if (m->group) put(w, "group_nfrac = %d\ngroup_block = %d\n", m->group_nfrac, m->group_block);
    if (m->kind == FPEMU_MMA_KIND_BLOCK)
        put(w, "fuse_nfrac = %d\nfuse_align = %s\nsplit = %d\n", m->fuse_nfrac,
            m->fuse_align == FPEMU_MMA_ALIGN_RD ? "rd" : "rz", m->split == 2 ? 2 : 1);
    put(w, "ftz = %d\n", m->ftz);
}

static void put_header(out *w, const char *name, const char *device, const char *family, const char *status,
                       const char *source) {
    put(w, "# fpemu MMA preset file (docs/tensor-cores.md, \"Preset files\")\n");
    put(w, "fpemu_mma_preset = 1\n");
    put(w, "name = %s\n", name);
    if (device && *device) put(w, "device = %s\n", device);
    if (family && *family) put(w, "family = %s\n", family);
    if (status && *status) put(w, "status = %s\n", status);
    if (source && *source) put(w, "source = %s\n", source);
}

int fpemu_mma_model_format(const fpemu_mma_model *m, char *buf, size_t len) {
    out w = {buf, len, 0};
    if (len) buf[0] = 0;
    put_header(&w, m->name, m->device, NULL, m->status, m->source);
    if (m->kind == FPEMU_MMA_KIND_INT) {
        put(&w, "a = %s\nb = %s\nc = s32\nd = s32\n", m->a_signed ? "s8" : "u8", m->b_signed ? "s8" : "u8");
        put(&w, "satfinite = %s\n", m->int_sat ? "yes" : "no");
    } else {
        put(&w, "a = %s\nb = %s\nc = %s\nd = %s\n", m->fa->name, m->fb->name, m->fc->name, m->fd->name);
        put(&w, "label = %s\n", m->device);
    }
    put_params(&w, m);
    return (int)w.o;
}

/* ---- a whole preset ---- */

typedef struct {
    const fpemu_format *f[4]; /* a b c d */
    char params[1024];
} binding;
typedef struct { binding *b; int n, cap, oom; const char *name; } bindings;

static void collect(void *user, const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc,
                    const fpemu_format *fd) {
    bindings *bs = user;
    if (bs->n == bs->cap) {
        int nc = bs->cap ? bs->cap * 2 : 64;
        binding *nb = realloc(bs->b, sizeof *nb * (size_t)nc);
        if (!nb) { bs->oom = 1; return; }
        bs->b = nb, bs->cap = nc;
    }
    binding *b = &bs->b[bs->n];
    fpemu_mma_model m;
    if (fpemu_mma_model_preset(&m, bs->name, fa, fb, fc, fd, NULL, 0)) return;
    b->f[0] = fa, b->f[1] = fb, b->f[2] = fc, b->f[3] = fd;
    out w = {b->params, sizeof b->params, 0};
    put(&w, "label = %s\n", m.device);
    put_params(&w, &m);
    bs->n++;
}

/* Index of format f in set (a list of up to 16), adding it. */
static int set_add(const fpemu_format **set, int *n, const fpemu_format *f) {
    for (int i = 0; i < *n; i++) if (set[i] == f) return i;
    if (*n < 16) set[(*n)++] = f;
    return *n - 1;
}

static int has(const bindings *bs, const char *params, const fpemu_format *a, const fpemu_format *b,
               const fpemu_format *c, const fpemu_format *d) {
    for (int i = 0; i < bs->n; i++) {
        const binding *x = &bs->b[i];
        if (x->f[0] == a && x->f[1] == b && x->f[2] == c && x->f[3] == d) return !strcmp(x->params, params);
    }
    return 0;
}

int fpemu_mma_preset_format(const char *name, char *buf, size_t len, char *err, size_t errlen) {
    const fpemu_mma_preset_info *info = fpemu_mma_preset_find(name);
    if (!info) {
        if (err) snprintf(err, errlen, "unknown model '%s'", name ? name : "");
        return -1;
    }
    if (info->reference) {
        if (err) snprintf(err, errlen, "model %s is a reference algorithm (any formats): save it bound to formats", name);
        return -1;
    }
    bindings bs = {NULL, 0, 0, 0, name};
    emu__mma_preset_bindings(name, collect, &bs);
    if (bs.oom) {
        free(bs.b);
        if (err) snprintf(err, errlen, "out of memory");
        return -1;
    }
    out w = {buf, len, 0};
    if (len) buf[0] = 0;
    put_header(&w, info->name, info->device, info->family, info->status, info->sources);
    char *done = calloc((size_t)bs.n + 1, 1);
    if (!done) {
        free(bs.b);
        if (err) snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* one section per (parameters, a) whose b, c, d lists form a full cross
     * product; sections with equal parameters and lists share one a line */
    typedef struct { const fpemu_format *s[4][16]; int n[4]; int params; } section;
    section *secs = calloc((size_t)bs.n + 1, sizeof *secs);
    int ns = 0;
    for (int i = 0; secs && i < bs.n; i++) {
        if (done[i]) continue;
        section sc;
        memset(&sc, 0, sizeof sc);
        sc.params = i;
        set_add(sc.s[0], &sc.n[0], bs.b[i].f[0]);
        for (int j = i; j < bs.n; j++)
            if (!done[j] && bs.b[j].f[0] == bs.b[i].f[0] && !strcmp(bs.b[j].params, bs.b[i].params))
                for (int k = 1; k < 4; k++) set_add(sc.s[k], &sc.n[k], bs.b[j].f[k]);
        int full = 1;
        for (int x = 0; x < sc.n[1] && full; x++)
            for (int y = 0; y < sc.n[2] && full; y++)
                for (int z = 0; z < sc.n[3] && full; z++)
                    full = has(&bs, bs.b[i].params, sc.s[0][0], sc.s[1][x], sc.s[2][y], sc.s[3][z]);
        if (!full) { /* this binding alone */
            for (int k = 1; k < 4; k++) sc.s[k][0] = bs.b[i].f[k], sc.n[k] = 1;
            done[i] = 1;
        } else {
            for (int j = i; j < bs.n; j++)
                if (bs.b[j].f[0] == bs.b[i].f[0] && !strcmp(bs.b[j].params, bs.b[i].params)) done[j] = 1;
        }
        /* merge into an earlier section with the same parameters and b, c, d lists */
        int merged = 0;
        for (int s2 = 0; s2 < ns && !merged; s2++) {
            section *o = &secs[s2];
            if (strcmp(bs.b[o->params].params, bs.b[i].params)) continue;
            int same = 1;
            for (int k = 1; k < 4 && same; k++) {
                same = o->n[k] == sc.n[k];
                for (int x = 0; x < sc.n[k] && same; x++) {
                    int found = 0;
                    for (int y = 0; y < o->n[k]; y++) found |= o->s[k][y] == sc.s[k][x];
                    same = found;
                }
            }
            if (same) merged = 1, set_add(o->s[0], &o->n[0], sc.s[0][0]);
        }
        if (!merged) secs[ns++] = sc;
    }
    for (int s2 = 0; secs && s2 < ns; s2++) {
        static const char *const keys[4] = {"a", "b", "c", "d"};
        put(&w, "\n");
        for (int k = 0; k < 4; k++) {
            put(&w, "%s =", keys[k]);
            for (int x = 0; x < secs[s2].n[k]; x++) put(&w, " %s", secs[s2].s[k][x]->name);
            put(&w, "\n");
        }
        put(&w, "%s", bs.b[secs[s2].params].params);
    }
    /* integer MMA */
    fpemu_mma_model im;
    const char *ints[2] = {NULL, NULL};
    int ni = 0;
    if (!fpemu_mma_model_preset_int(&im, name, 1, 1, 0, NULL, 0)) ints[ni++] = "s8";
    if (!fpemu_mma_model_preset_int(&im, name, 0, 0, 0, NULL, 0)) ints[ni++] = "u8";
    if (ni) {
        fpemu_mma_model sat;
        int can_sat = !fpemu_mma_model_preset_int(&sat, name, 1, 1, 1, NULL, 0);
        fpemu_mma_model_preset_int(&im, name, 1, 1, 0, NULL, 0);
        put(&w, "\na = %s%s%s\nb = %s%s%s\nc = s32\nd = s32\nsatfinite = %s\n", ints[0], ni > 1 ? " " : "",
            ni > 1 ? ints[1] : "", ints[0], ni > 1 ? " " : "", ni > 1 ? ints[1] : "", can_sat ? "yes" : "no");
        put_params(&w, &im);
    }
    int fail = !secs;
    free(secs);
    free(done);
    free(bs.b);
    if (fail) {
        if (err) snprintf(err, errlen, "out of memory");
        return -1;
    }
    return (int)w.o;
}

/* ---- reading ------------------------------------------------------------- */

typedef struct {
    const char *key, *val; /* into a copy of the text */
    int line;
} kv;

static int word_in(const char *list, const char *w) {
    size_t n = strlen(w);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == '\t') p++;
        const char *e = p;
        while (*e && *e != ' ' && *e != '\t') e++;
        if ((size_t)(e - p) == n && n && !strncmp(p, w, n)) return 1;
        p = e;
    }
    return 0;
}

static const char *const file_keys[] = {"fpemu_mma_preset", "name", "device", "family", "status", "source", NULL};
static const char *const section_keys[] = {"b", "c", "d", "kind", "label", "satfinite", NULL};
static const char *const param_keys[] = {"block", "nfrac", "align", "normalize", "chain", "out_round", "out_mant",
                                         "subnormals", "tf32_truncate", "emax_floor", "overflow", "zero_c",
                                         "zero_product", "zero_sign", "nan", "group", "group_nfrac", "group_block",
                                         "fuse_nfrac", "fuse_align", "split", "ftz", NULL};
static int in_list(const char *const *l, const char *k) {
    for (int i = 0; l[i]; i++) if (!strcmp(l[i], k)) return 1;
    return 0;
}

/* Split text into key/value pairs (in copy, which the pairs point into). */
static int lex(char *copy, const char *what, kv **out_kv, int *n_out, char *err, size_t errlen) {
    int cap = 64, n = 0, line = 0;
    kv *v = malloc(sizeof *v * (size_t)cap);
    if (!v) { if (err) snprintf(err, errlen, "%s: out of memory", what); return -1; }
    for (char *p = copy; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        line++;
        char *s = p;
        p = nl ? nl + 1 : NULL;
        size_t l = strlen(s);
        while (l && (s[l - 1] == '\r' || s[l - 1] == ' ' || s[l - 1] == '\t')) s[--l] = 0;
        while (*s == ' ' || *s == '\t') s++;
        if (!*s || *s == '#') continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            if (err) snprintf(err, errlen, "%s:%d: expected key = value", what, line);
            free(v);
            return -1;
        }
        char *ke = eq;
        while (ke > s && (ke[-1] == ' ' || ke[-1] == '\t')) ke--;
        *ke = 0;
        char *val = eq + 1;
        while (*val == ' ' || *val == '\t') val++;
        if (!*s || !*val) {
            if (err) snprintf(err, errlen, "%s:%d: expected key = value (%s is empty)", what, line, *s ? "the value" : "the key");
            free(v);
            return -1;
        }
        if (n == cap) {
            kv *nv = realloc(v, sizeof *v * (size_t)(cap *= 2));
            if (!nv) { free(v); if (err) snprintf(err, errlen, "%s: out of memory", what); return -1; }
            v = nv;
        }
        v[n].key = s, v[n].val = val, v[n].line = line;
        n++;
    }
    *out_kv = v, *n_out = n;
    return 0;
}

/* The file's keys checked; returns the index of the first `a` line (n if none). */
static int check_keys(const kv *v, int n, const char *what, char *err, size_t errlen) {
    int first_a = n, version = 0, name = 0;
    for (int i = 0; i < n; i++) {
        const char *k = v[i].key;
        if (!strcmp(k, "a")) {
            if (first_a == n) first_a = i;
            continue;
        }
        if (in_list(file_keys, k)) {
            if (i > first_a) {
                if (err) snprintf(err, errlen, "%s:%d: %s belongs before the first binding (the first `a =` line)", what, v[i].line, k);
                return -1;
            }
            if (!strcmp(k, "fpemu_mma_preset")) {
                if (strcmp(v[i].val, "1")) {
                    if (err) snprintf(err, errlen, "%s:%d: fpemu_mma_preset = %s: this fpemu reads version 1", what, v[i].line, v[i].val);
                    return -1;
                }
                version = 1;
            }
            if (!strcmp(k, "name")) {
                if (strlen(v[i].val) >= sizeof ((fpemu_mma_model *)0)->name) {
                    if (err) snprintf(err, errlen, "%s:%d: name is longer than 31 characters", what, v[i].line);
                    return -1;
                }
                name = 1;
            }
            continue;
        }
        if (in_list(section_keys, k) || in_list(param_keys, k)) {
            if (i < first_a) {
                if (err) snprintf(err, errlen, "%s:%d: %s belongs to a binding: put it after an `a = FORMATS` line", what, v[i].line, k);
                return -1;
            }
            continue;
        }
        if (err) snprintf(err, errlen, "%s:%d: unknown key '%s' (expected fpemu_mma_preset, name, device, family, status, "
                          "source, a, b, c, d, kind, label, satfinite or a key of fpemu mma --set)", what, v[i].line, k);
        return -1;
    }
    if (!version || !name) {
        if (err) snprintf(err, errlen, "%s:1: not a preset file (it needs the lines fpemu_mma_preset = 1 and name = NAME)", what);
        return -1;
    }
    return first_a;
}

static const char *get(const kv *v, int lo, int hi, const char *key, int *line) {
    const char *r = NULL;
    for (int i = lo; i < hi; i++) if (!strcmp(v[i].key, key)) r = v[i].val, *line = v[i].line;
    return r;
}

/* The sections [lo, hi) of v: *next gets the end of the one at lo. */
static int section_end(const kv *v, int n, int lo) {
    int j = lo + 1;
    while (j < n && strcmp(v[j].key, "a")) j++;
    return j;
}

static int parse_common(fpemu_mma_model *m, const char *text, const char *what, int want_int, const fpemu_format *fa,
                        const fpemu_format *fb, const fpemu_format *fc, const fpemu_format *fd, int a_signed,
                        int b_signed, int saturate, char *err, size_t errlen) {
    if (!what) what = "preset";
    char *copy = strdup(text ? text : "");
    if (!copy) { if (err) snprintf(err, errlen, "%s: out of memory", what); return -1; }
    kv *v = NULL;
    int n = 0, rc = -1;
    if (lex(copy, what, &v, &n, err, errlen)) { free(copy); return -1; }
    int first = check_keys(v, n, what, err, errlen);
    if (first < 0) goto done;
    int line = 0;
    const char *name = get(v, 0, first, "name", &line), *device = get(v, 0, first, "device", &line);
    const char *status = get(v, 0, first, "status", &line);
    char source[256] = "";
    for (int i = 0; i < first; i++)
        if (!strcmp(v[i].key, "source")) {
            size_t o = strlen(source);
            snprintf(source + o, sizeof source - o, "%s%s", o ? "; " : "", v[i].val);
        }
    const char *an = want_int ? (a_signed ? "s8" : "u8") : fa->name, *bn = want_int ? (b_signed ? "s8" : "u8") : fb->name;
    const char *cn = want_int ? "s32" : fc->name, *dn = want_int ? "s32" : fd->name;
    char bound[400] = "";
    for (int lo = first; lo < n; lo = section_end(v, n, lo)) {
        int hi = section_end(v, n, lo), l2 = 0;
        const char *al = v[lo].val, *bl = get(v, lo, hi, "b", &l2), *cl = get(v, lo, hi, "c", &l2);
        const char *dl = get(v, lo, hi, "d", &l2), *kind = get(v, lo, hi, "kind", &l2);
        if (!bl) bl = al;
        int is_int = kind && !strcmp(kind, "int");
        if (!cl) cl = is_int ? "s32" : "f32";
        if (!dl) dl = is_int ? "s32" : "f32";
        {
            size_t o = strlen(bound);
            if (o < sizeof bound) snprintf(bound + o, sizeof bound - o, "%s[%s] x [%s] -> [%s]", o ? "; " : "", al, bl, dl);
        }
        if (is_int != want_int || !word_in(al, an) || !word_in(bl, bn) || !word_in(cl, cn) || !word_in(dl, dn)) continue;
        /* this binding */
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "%s", name);
        snprintf(m->status, sizeof m->status, "%s", status ? status : "preset file");
        snprintf(m->source, sizeof m->source, "%s", *source ? source : what);
        const char *label = get(v, lo, hi, "label", &l2);
        snprintf(m->device, sizeof m->device, "%s", label ? label : device ? device : name);
        if (want_int) {
            const char *sf = get(v, lo, hi, "satfinite", &l2);
            if (saturate && !(sf && !strcmp(sf, "yes"))) {
                if (err) snprintf(err, errlen, "%s:%d: this binding's integer MMA wraps (satfinite = yes is not set)", what, v[lo].line);
                goto done;
            }
            m->kind = FPEMU_MMA_KIND_INT;
            m->a_signed = a_signed, m->b_signed = b_signed, m->int_sat = saturate;
        } else {
            m->fa = fa, m->fb = fb, m->fc = fc, m->fd = fd;
            m->zero_c = 1;
            m->out_mant = fd->mbits;
            m->out_round = FPEMU_RNE;
            m->kind = FPEMU_MMA_KIND_BLOCK;
            if (kind) {
                int k = -1;
                for (int i = 0; i < FPEMU_MMA_KIND_INT; i++) if (!strcmp(kind, kind_name((fpemu_mma_kind)i))) k = i;
                if (k < 0) {
                    if (err) snprintf(err, errlen, "%s:%d: kind = %s: expected block-fma, exact, fma-seq, pairwise or int", what, l2, kind);
                    goto done;
                }
                m->kind = (fpemu_mma_kind)k;
            }
            if (m->kind == FPEMU_MMA_KIND_BLOCK) {
                int ln;
                if (!get(v, lo, hi, "nfrac", &ln)) {
                    if (err) snprintf(err, errlen, "%s:%d: a block-fma binding needs nfrac", what, v[lo].line);
                    goto done;
                }
                m->nfrac = 24; /* replaced below; lets each key be checked on its own */
            }
            if (fpemu_mma_model_finish(m, err, errlen)) goto done;
        }
        for (int i = lo + 1; i < hi; i++) {
            if (!in_list(param_keys, v[i].key)) continue;
            char e2[300];
            if (fpemu_mma_model_set(m, v[i].key, v[i].val, e2, sizeof e2)) {
                if (err) snprintf(err, errlen, "%s:%d: %s", what, v[i].line, e2);
                goto done;
            }
        }
        rc = 0;
        goto done;
    }
    if (err) snprintf(err, errlen, "%s: no binding for %s x %s -> %s (c %s); the file binds: %s", what, an, bn, dn, cn,
                      *bound ? bound : "nothing");
done:
    free(v);
    free(copy);
    return rc;
}

int fpemu_mma_model_parse(fpemu_mma_model *m, const char *text, const char *what, const fpemu_format *fa,
                          const fpemu_format *fb, const fpemu_format *fc, const fpemu_format *fd, char *err,
                          size_t errlen) {
    if (!fa || !fb) {
        if (err) snprintf(err, errlen, "%s: input formats are required", what ? what : "preset");
        return -1;
    }
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0);
    if (!fc) fc = fd ? fd : f32;
    if (!fd) fd = fc;
    fpemu_mma_model t;
    if (parse_common(&t, text, what, 0, fa, fb, fc, fd, 0, 0, 0, err, errlen)) return -1;
    *m = t;
    return 0;
}

int fpemu_mma_model_parse_int(fpemu_mma_model *m, const char *text, const char *what, int a_signed, int b_signed,
                              int saturate, char *err, size_t errlen) {
    fpemu_mma_model t;
    if (parse_common(&t, text, what, 1, NULL, NULL, NULL, NULL, a_signed, b_signed, saturate, err, errlen)) return -1;
    *m = t;
    return 0;
}
