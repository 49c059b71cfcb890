/* SPDX-License-Identifier: MIT */
/* format.c: the format registry, custom format specs, classification and
 * exact decoding. A format is a row of data; every operation is generic
 * over it. */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

typedef struct {
    const char *name, *aliases;
    int bits, pad, e, m, bias, is_signed, negzero, subnormals;
    fpemu_inf_style inf;
    fpemu_nan_style nan;
} format_row;

#define IEEE_ROW(n, al, bits, e, m) {n, al, bits, 0, e, m, (1 << ((e) - 1)) - 1, 1, 1, 1, FPEMU_INF_IEEE, FPEMU_NANS_IEEE}
#define P3109(P, dom, inf, al)                                                                   \
    {"binary8p" #P dom, al, 8, 0, 8 - (P), (P) - 1, 1 << (7 - (P)), 1, 0, 1, inf, FPEMU_NANS_UZ}

static const format_row rows[] = {
    IEEE_ROW("f64", "binary64,fp64,float64,double", 64, 11, 52),
    IEEE_ROW("f32", "binary32,fp32,float32,float,single", 32, 8, 23),
    {"tf32", "tensorfloat32,tensorfloat-32", 19, 13, 8, 10, 127, 1, 1, 1, FPEMU_INF_IEEE, FPEMU_NANS_IEEE},
    IEEE_ROW("f16", "binary16,fp16,float16,half", 16, 5, 10),
    IEEE_ROW("bf16", "bfloat16,bfloat", 16, 8, 7),
    IEEE_ROW("e5m2", "fp8_e5m2,float8_e5m2,f8e5m2", 8, 5, 2),
    {"e4m3", "e4m3fn,fp8_e4m3,float8_e4m3fn,f8e4m3fn", 8, 0, 4, 3, 7, 1, 1, 1, FPEMU_INF_NONE, FPEMU_NANS_FN},
    {"e4m3fnuz", "float8_e4m3fnuz,f8e4m3fnuz", 8, 0, 4, 3, 8, 1, 0, 1, FPEMU_INF_NONE, FPEMU_NANS_UZ},
    {"e5m2fnuz", "float8_e5m2fnuz,f8e5m2fnuz", 8, 0, 5, 2, 16, 1, 0, 1, FPEMU_INF_NONE, FPEMU_NANS_UZ},
    {"e3m2", "fp6_e3m2,float6_e3m2fn,e3m2fn", 6, 0, 3, 2, 3, 1, 1, 1, FPEMU_INF_NONE, FPEMU_NANS_NONE},
    {"e2m3", "fp6_e2m3,float6_e2m3fn,e2m3fn", 6, 0, 2, 3, 1, 1, 1, 1, FPEMU_INF_NONE, FPEMU_NANS_NONE},
    {"e2m1", "fp4,fp4_e2m1,float4_e2m1fn,e2m1fn", 4, 0, 2, 1, 1, 1, 1, 1, FPEMU_INF_NONE, FPEMU_NANS_NONE},
    {"e8m0", "e8m0fnu,float8_e8m0fnu,ue8m0", 8, 0, 8, 0, 127, 0, 0, 0, FPEMU_INF_NONE, FPEMU_NANS_ALLONES},
    P3109(1, "e", FPEMU_INF_TOP, "binary8p1"), P3109(1, "f", FPEMU_INF_NONE, ""),
    P3109(2, "e", FPEMU_INF_TOP, "binary8p2"), P3109(2, "f", FPEMU_INF_NONE, ""),
    P3109(3, "e", FPEMU_INF_TOP, "binary8p3"), P3109(3, "f", FPEMU_INF_NONE, ""),
    P3109(4, "e", FPEMU_INF_TOP, "binary8p4"), P3109(4, "f", FPEMU_INF_NONE, ""),
    P3109(5, "e", FPEMU_INF_TOP, "binary8p5"), P3109(5, "f", FPEMU_INF_NONE, ""),
    P3109(6, "e", FPEMU_INF_TOP, "binary8p6"), P3109(6, "f", FPEMU_INF_NONE, ""),
    P3109(7, "e", FPEMU_INF_TOP, "binary8p7"), P3109(7, "f", FPEMU_INF_NONE, ""),
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

fpemu_format emu__registry[NROWS];
const int emu__registry_n = NROWS;
#define registry emu__registry
_Static_assert(NROWS <= EMU_REGISTRY_MAX, "registry larger than the result-table index");
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

/* ---- derived fields ----------------------------------------------------- */

static void errf(char *err, size_t errlen, const char *fmt, const char *a) {
    if (err && errlen) snprintf(err, errlen, fmt, a);
}

int fpemu_format_finish(fpemu_format *f, char *err, size_t errlen) {
    /* a copy of a registry descriptor must not keep its tables or ops */
    f->decode_table = NULL;
    f->class_table = NULL;
    f->fast = NULL;
    int is_f64 = f->ebits == 11 && f->mbits == 52;
    if (!is_f64 && (f->ebits < 1 || f->ebits > 8 || f->mbits < 0 || f->mbits > 23)) {
        errf(err, errlen, "format '%s': need 1 <= e <= 8 and 0 <= m <= 23 (or e=11,m=52)", f->name);
        return -1;
    }
    if (!is_f64 && (f->bias < -64 || f->bias > 300)) {
        errf(err, errlen, "format '%s': bias must lie in [-64, 300]", f->name);
        return -1;
    }
    if (f->nan == FPEMU_NANS_IEEE && f->mbits == 0) {
        errf(err, errlen, "format '%s': IEEE-style NaNs need at least one mantissa bit", f->name);
        return -1;
    }
    if ((f->nan == FPEMU_NANS_IEEE) != (f->inf == FPEMU_INF_IEEE)) {
        errf(err, errlen, "format '%s': IEEE-style NaNs and IEEE-style infinities go together (inf=ieee,nan=ieee)", f->name);
        return -1;
    }
    if ((f->nan == FPEMU_NANS_UZ || f->inf == FPEMU_INF_TOP) && !f->is_signed) {
        errf(err, errlen, "format '%s': nan=uz and inf=top need a sign bit", f->name);
        return -1;
    }
    if (f->nan == FPEMU_NANS_ALLONES && f->is_signed) {
        errf(err, errlen, "format '%s': nan=allones is the NaN of unsigned formats (e8m0's all-ones code); a signed "
             "format's NaN at the all-ones magnitude is nan=fn", f->name);
        return -1;
    }
    if (f->inf == FPEMU_INF_TOP && f->nan == FPEMU_NANS_FN) {
        errf(err, errlen, "format '%s': inf=top and nan=fn both claim the all-ones magnitude (P3109: inf=top,nan=uz)",
             f->name);
        return -1;
    }
    if (f->nan == FPEMU_NANS_UZ) f->has_negzero = 0;
    if (!f->is_signed) f->has_negzero = 0;
    int nb = f->is_signed + f->ebits + f->mbits;
    if (f->bits == 0) f->bits = nb;
    if (f->bits != nb) {
        errf(err, errlen, "format '%s': bits do not add up", f->name);
        return -1;
    }
    f->container = f->bits + f->pad <= 8 ? 8 : f->bits + f->pad <= 16 ? 16 : f->bits + f->pad <= 32 ? 32 : 64;
    f->p = f->mbits + 1;
    f->emin = (f->has_subnormals ? 1 : 0) - f->bias;
    f->sign_bit = f->is_signed ? UINT64_C(1) << (f->bits - 1) : 0;
    f->mag_mask = (f->is_signed ? f->sign_bit : (f->bits == 64 ? 0 : UINT64_C(1) << f->bits)) - 1;
    uint64_t top = f->mag_mask; /* the all-ones magnitude */
    uint64_t maxc;
    switch (f->nan) {
    case FPEMU_NANS_IEEE: maxc = ((UINT64_C(1) << f->ebits) - 1) << f->mbits; maxc -= 1; break;
    case FPEMU_NANS_FN: maxc = top - 1; break;
    case FPEMU_NANS_ALLONES: maxc = top - 1; break;
    default: maxc = f->inf == FPEMU_INF_TOP ? top - 1 : top; break;
    }
    f->max_code = maxc;
    uint64_t mmask = (UINT64_C(1) << f->mbits) - 1;
    f->maxmant = maxc & mmask;
    f->emax = (int)(maxc >> f->mbits) - f->bias;
    f->max_finite = ldexp((double)(f->maxmant | (UINT64_C(1) << f->mbits)), f->emax - f->mbits);
    f->min_normal = ldexp(1.0, f->emin);
    f->min_subnormal = f->has_subnormals ? ldexp(1.0, f->emin - f->mbits) : f->min_normal;
    if (f->emax < f->emin) {
        errf(err, errlen, "format '%s': no normal values", f->name);
        return -1;
    }
    return 0;
}

int fpemu_format_hex_digits(const fpemu_format *f) { return f->container / 4; }

/* ---- classification and decoding --------------------------------------- */

fpemu_class emu__classify(const fpemu_format *f, uint64_t c) {
    uint64_t mag = c & f->mag_mask;
    uint64_t mmask = (UINT64_C(1) << f->mbits) - 1;
    uint64_t expf = mag >> f->mbits;
    uint64_t eall = (UINT64_C(1) << f->ebits) - 1;
    switch (f->nan) {
    case FPEMU_NANS_IEEE:
        if (expf == eall) {
            if ((mag & mmask) == 0) return FPEMU_CLASS_INF;
            return (mag >> (f->mbits - 1)) & 1 ? FPEMU_CLASS_QNAN : FPEMU_CLASS_SNAN;
        }
        break;
    case FPEMU_NANS_FN:
        if (mag == f->mag_mask) return FPEMU_CLASS_QNAN;
        break;
    case FPEMU_NANS_UZ:
        if (c == f->sign_bit) return FPEMU_CLASS_QNAN;
        break;
    case FPEMU_NANS_ALLONES:
        if (mag == f->mag_mask) return FPEMU_CLASS_QNAN;
        break;
    default: break;
    }
    if (f->inf == FPEMU_INF_TOP && mag == f->mag_mask) return FPEMU_CLASS_INF;
    if (f->inf == FPEMU_INF_IEEE && expf == eall && (mag & mmask) == 0) return FPEMU_CLASS_INF;
    if (!f->has_subnormals) return FPEMU_CLASS_NORMAL;
    if (mag == 0) return FPEMU_CLASS_ZERO;
    return expf == 0 ? FPEMU_CLASS_SUBNORMAL : FPEMU_CLASS_NORMAL;
}

void fpemu_unpack(const fpemu_format *f, uint64_t code, int *sign, uint64_t *sig, int *exp) {
    uint64_t c = emu__strip(f, code);
    uint64_t mag = c & f->mag_mask;
    uint64_t expf = mag >> f->mbits, mant = mag & ((UINT64_C(1) << f->mbits) - 1);
    *sign = (c & f->sign_bit) != 0;
    if (!f->has_subnormals) {
        *sig = UINT64_C(1) << f->mbits | mant;
        *exp = (int)expf - f->bias - f->mbits;
    } else if (expf == 0) {
        *sig = mant;
        *exp = f->emin - f->mbits;
    } else {
        *sig = UINT64_C(1) << f->mbits | mant;
        *exp = (int)expf - f->bias - f->mbits;
    }
}

double emu__decode_finite(const fpemu_format *f, uint64_t c) {
    int s, e;
    uint64_t sig;
    fpemu_unpack(f, emu__unstrip(f, c), &s, &sig, &e);
    double v = ldexp((double)sig, e);
    return s ? -v : v;
}

fpemu_class fpemu_classify(const fpemu_format *f, uint64_t code) {
    uint64_t c = emu__strip(f, code);
    if (f->class_table) return (fpemu_class)f->class_table[c];
    return emu__classify(f, c);
}

int fpemu_is_nan(const fpemu_format *f, uint64_t code) {
    fpemu_class k = fpemu_classify(f, code);
    return k == FPEMU_CLASS_QNAN || k == FPEMU_CLASS_SNAN;
}

double fpemu_to_double(const fpemu_format *f, uint64_t code) {
    uint64_t c = emu__strip(f, code);
    if (f->decode_table) return f->decode_table[c];
    int neg = (c & f->sign_bit) != 0;
    switch (emu__classify(f, c)) {
    case FPEMU_CLASS_INF: return neg ? -INFINITY : INFINITY;
    case FPEMU_CLASS_QNAN:
    case FPEMU_CLASS_SNAN: return neg ? -NAN : NAN;
    default: break;
    }
    if (f->bits == 64) return emu__bitsd(c); /* f64: the bits are the value */
    return emu__decode_finite(f, c);
}

uint64_t emu__zero(const fpemu_format *f, int sign) { return sign && f->has_negzero ? f->sign_bit : 0; }
uint64_t emu__maxfinite(const fpemu_format *f, int sign) { return f->max_code | (sign ? f->sign_bit : 0); }

/* Decode tables for <= 16-bit formats: every decode becomes a load. */
static void build_tables(fpemu_format *f) {
    if (f->bits > 16) return;
    size_t n = (size_t)1 << f->bits;
    double *d = malloc(n * sizeof *d);
    uint8_t *k = malloc(n);
    if (!d || !k) { free(d); free(k); return; } /* tables are an optimisation only */
    f->decode_table = NULL;
    f->class_table = NULL;
    for (size_t c = 0; c < n; c++) {
        k[c] = (uint8_t)emu__classify(f, c);
        d[c] = fpemu_to_double(f, emu__unstrip(f, c));
    }
    f->decode_table = d;
    f->class_table = k;
}

static void registry_init(void) {
    for (int i = 0; i < NROWS; i++) {
        const format_row *r = &rows[i];
        fpemu_format *f = &registry[i];
        memset(f, 0, sizeof *f);
        snprintf(f->name, sizeof f->name, "%s", r->name);
        f->bits = r->bits;
        f->pad = r->pad;
        f->ebits = r->e;
        f->mbits = r->m;
        f->bias = r->bias;
        f->is_signed = r->is_signed;
        f->has_negzero = r->negzero;
        f->has_subnormals = r->subnormals;
        f->inf = r->inf;
        f->nan = r->nan;
        int rc = fpemu_format_finish(f, NULL, 0);
        (void)rc; /* registry rows are valid by construction; t_emu_special checks every row */
        build_tables(f);
        f->fast = emu__fastops_for(f);
    }
}

int fpemu_format_count(void) { return NROWS; }

const fpemu_format *fpemu_format_at(int i) {
    pthread_once(&registry_once, registry_init);
    return i >= 0 && i < NROWS ? &registry[i] : NULL;
}
const char *fpemu_format_aliases(int i) { return i >= 0 && i < NROWS ? rows[i].aliases : NULL; }

/* ---- custom formats ---------------------------------------------------- */

typedef struct custom_node { struct custom_node *next; fpemu_format f; } custom_node;
static custom_node *customs;
static pthread_mutex_t custom_lock = PTHREAD_MUTEX_INITIALIZER;

static int lower_eq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

static int alias_match(const char *list, const char *name) {
    const char *p = list;
    while (p && *p) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        char buf[64];
        if (len < sizeof buf) {
            memcpy(buf, p, len);
            buf[len] = 0;
            if (lower_eq(buf, name)) return 1;
        }
        p = q ? q + 1 : NULL;
    }
    return 0;
}

/* Parse a decimal integer at *s; advance. */
static int parse_int(const char **s, int *out) {
    const char *p = *s;
    int neg = 0;
    if (*p == '-') neg = 1, p++;
    if (!isdigit((unsigned char)*p)) return -1;
    long v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p++ - '0');
        if (v > 100000) return -1;
    }
    *out = (int)(neg ? -v : v);
    *s = p;
    return 0;
}

/* "eXmY", "eXmYfn", "eXmYfnuz" */
static int parse_exmy(const char *name, fpemu_format *f) {
    const char *p = name;
    int e, m;
    if (tolower((unsigned char)*p++) != 'e' || parse_int(&p, &e) || tolower((unsigned char)*p++) != 'm' || parse_int(&p, &m))
        return -1;
    f->ebits = e;
    f->mbits = m;
    f->is_signed = 1;
    f->has_negzero = 1;
    f->has_subnormals = 1;
    if (e < 1 || e > 8) return -2;
    f->bias = (1 << (e - 1)) - 1;
    if (*p == 0) {
        f->inf = FPEMU_INF_IEEE;
        f->nan = FPEMU_NANS_IEEE;
    } else if (lower_eq(p, "fn")) {
        f->inf = FPEMU_INF_NONE;
        f->nan = FPEMU_NANS_FN;
    } else if (lower_eq(p, "fnuz")) {
        f->inf = FPEMU_INF_NONE;
        f->nan = FPEMU_NANS_UZ;
        f->bias += 1;
        f->has_negzero = 0;
    } else {
        return -1;
    }
    return 0;
}

/* "custom:e=4,m=3,bias=7,inf=no,nan=fn[,negzero=no][,signed=no][,subnormals=no]" */
static int parse_custom(const char *spec, fpemu_format *f, char *err, size_t errlen) {
    const char *p = spec + 7;
    int have_e = 0, have_m = 0, have_bias = 0;
    f->is_signed = 1;
    f->has_negzero = 1;
    f->has_subnormals = 1;
    f->inf = FPEMU_INF_IEEE;
    f->nan = FPEMU_NANS_IEEE;
    while (*p) {
        char key[32], val[32];
        size_t k = 0, v = 0;
        while (*p && *p != '=' && *p != ',' && k + 1 < sizeof key) key[k++] = *p++;
        key[k] = 0;
        if (*p != '=') { errf(err, errlen, "custom format '%s': expected key=value items separated by commas", spec); return -1; }
        p++;
        while (*p && *p != ',' && v + 1 < sizeof val) val[v++] = *p++;
        val[v] = 0;
        if (*p == ',') p++;
        const char *vp = val;
        int n;
        if (!strcmp(key, "e") || !strcmp(key, "m") || !strcmp(key, "bias")) {
            if (parse_int(&vp, &n) || *vp) { errf(err, errlen, "custom format '%s': expected an integer value", spec); return -1; }
            if (!strcmp(key, "e")) f->ebits = n, have_e = 1;
            else if (!strcmp(key, "m")) f->mbits = n, have_m = 1;
            else f->bias = n, have_bias = 1;
        } else if (!strcmp(key, "inf")) {
            if (!strcmp(val, "no") || !strcmp(val, "none")) f->inf = FPEMU_INF_NONE;
            else if (!strcmp(val, "yes") || !strcmp(val, "ieee")) f->inf = FPEMU_INF_IEEE;
            else if (!strcmp(val, "top")) f->inf = FPEMU_INF_TOP;
            else { errf(err, errlen, "custom format '%s': inf= takes ieee|top|no (yes = ieee, none = no)", spec); return -1; }
        } else if (!strcmp(key, "nan")) {
            if (!strcmp(val, "ieee")) f->nan = FPEMU_NANS_IEEE;
            else if (!strcmp(val, "fn")) f->nan = FPEMU_NANS_FN;
            else if (!strcmp(val, "uz")) f->nan = FPEMU_NANS_UZ;
            else if (!strcmp(val, "no") || !strcmp(val, "none")) f->nan = FPEMU_NANS_NONE;
            else if (!strcmp(val, "allones")) f->nan = FPEMU_NANS_ALLONES;
            else { errf(err, errlen, "custom format '%s': nan= takes ieee|fn|uz|allones|none", spec); return -1; }
        } else if (!strcmp(key, "negzero") || !strcmp(key, "signed") || !strcmp(key, "subnormals")) {
            int yes = !strcmp(val, "yes");
            if (!yes && strcmp(val, "no")) { errf(err, errlen, "custom format '%s': expected yes or no", spec); return -1; }
            if (key[0] == 'n') f->has_negzero = yes;
            else if (key[0] == 's' && key[1] == 'i') f->is_signed = yes;
            else f->has_subnormals = yes;
        } else {
            errf(err, errlen, "custom format '%s': unknown key (expected e, m, bias, inf, nan, negzero, signed, subnormals)", spec);
            return -1;
        }
    }
    if (!have_e || !have_m) { errf(err, errlen, "custom format '%s': e= and m= are required", spec); return -1; }
    if (f->ebits < 1 || f->ebits > 8) { errf(err, errlen, "custom format '%s': need 1 <= e <= 8", spec); return -1; }
    if (!have_bias) f->bias = (1 << (f->ebits - 1)) - 1;
    return 0;
}

/* Do two descriptors define the same format (whatever their names)? The
 * defining fields; fpemu_format_finish derives the rest from them. */
static int same_format(const fpemu_format *a, const fpemu_format *b) {
    return a->ebits == b->ebits && a->mbits == b->mbits && a->bias == b->bias && a->is_signed == b->is_signed &&
           a->has_negzero == b->has_negzero && a->has_subnormals == b->has_subnormals && a->inf == b->inf &&
           a->nan == b->nan;
}

/* One descriptor per custom format, however it was spelled ("E5M10FN",
 * "e5m10fn", a custom: spec with its keys in another order): a spelling
 * seen later gets the first one's descriptor and name, and a program that
 * names the same format many ways builds its tables (512 KiB for a 16-bit
 * format) once. */
static const fpemu_format *intern(const fpemu_format *f) {
    pthread_mutex_lock(&custom_lock);
    for (custom_node *n = customs; n; n = n->next)
        if (same_format(&n->f, f)) { pthread_mutex_unlock(&custom_lock); return &n->f; }
    custom_node *n = calloc(1, sizeof *n);
    if (!n) { pthread_mutex_unlock(&custom_lock); return NULL; }
    n->f = *f;
    build_tables(&n->f);
    n->next = customs;
    customs = n;
    pthread_mutex_unlock(&custom_lock);
    return &n->f;
}

const fpemu_format *fpemu_format_get(const char *name, char *err, size_t errlen) {
    pthread_once(&registry_once, registry_init);
    if (!name || !*name) { errf(err, errlen, "empty format name%s", ""); return NULL; }
    for (int i = 0; i < NROWS; i++)
        if (lower_eq(rows[i].name, name) || alias_match(rows[i].aliases, name)) return &registry[i];
    if (lower_eq("float8_e4m3", name)) {
        /* not an alias of e4m3: the name means another format elsewhere */
        errf(err, errlen,
             "format name '%s' is ambiguous: ml_dtypes, JAX and MLIR use it for the IEEE-style E4M3 with infinities "
             "(max 240: custom:e=4,m=3,bias=7,inf=ieee,nan=ieee); OCP's E4M3 (PyTorch's float8_e4m3fn, max 448) is e4m3",
             name);
        return NULL;
    }
    fpemu_format f;
    memset(&f, 0, sizeof f);
    if (strlen(name) >= sizeof f.name) { errf(err, errlen, "format name too long (at most 127 characters): '%.40s...'", name); return NULL; }
    snprintf(f.name, sizeof f.name, "%s", name);
    int rc;
    if (!strncmp(name, "custom:", 7)) {
        if (parse_custom(name, &f, err, errlen)) return NULL;
    } else if ((rc = parse_exmy(name, &f)) != 0) {
        if (rc == -2) errf(err, errlen, "format '%s': need 1 <= e <= 8 in eXmY", name);
        else errf(err, errlen, "unknown format '%s' (see `fpemu formats`; custom: eXmY, eXmYfn, eXmYfnuz, custom:e=..,m=..,bias=..,inf=..,nan=..)", name);
        return NULL;
    }
    if (fpemu_format_finish(&f, err, errlen)) return NULL;
    const fpemu_format *r = intern(&f);
    if (!r) errf(err, errlen, "out of memory interning format '%s'", name);
    return r;
}

/* ---- code arrays ------------------------------------------------------- */

uint64_t fpemu_code_load(const fpemu_format *f, const void *arr, size_t i) {
    switch (f->container) {
    case 8: return ((const uint8_t *)arr)[i];
    case 16: return ((const uint16_t *)arr)[i];
    case 32: return ((const uint32_t *)arr)[i];
    default: return ((const uint64_t *)arr)[i];
    }
}

void fpemu_code_store(const fpemu_format *f, void *arr, size_t i, uint64_t code) {
    switch (f->container) {
    case 8: ((uint8_t *)arr)[i] = (uint8_t)code; break;
    case 16: ((uint16_t *)arr)[i] = (uint16_t)code; break;
    case 32: ((uint32_t *)arr)[i] = (uint32_t)code; break;
    default: ((uint64_t *)arr)[i] = code; break;
    }
}

int emu__errf(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
