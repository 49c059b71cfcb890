/* SPDX-License-Identifier: MIT */
/* fuzz_format.c: format spec strings (fpemu_format_get: names, aliases,
 * eXmY[fn|fnuz], binary8pP[e|f], custom:k=v,...). A spec that parses must
 * give a consistent descriptor: decoding every code (or a sample) must not
 * crash, and the hex width must fit the container.
 *
 * Speed: the sweep depends only on the descriptor, and most specs the
 * fuzzer tries name a format it has already seen ("e4m3", "E4M3", an alias,
 * the same custom spec with other spacing or key order). A descriptor swept
 * once is not swept again; a later spec that gives the same format (same
 * defining fields) must give the same derived fields too (checked). */
#include "fuzz_common.h"
#include "fpemu.h"

/* The defining fields of a descriptor (what the sweep depends on). */
typedef struct { int bits, container, pad, ebits, mbits, bias, is_signed, has_negzero, has_subnormals, inf, nan, fast, tables; } fz_key;
typedef struct { fz_key k; const fpemu_format *f; int used; } fz_seen;
#define SEEN_N 65536 /* open addressing; when full, formats are swept every time (correct, slower) */
static fz_seen seen[SEEN_N];
static int nseen;

static fz_key key_of(const fpemu_format *f) {
    fz_key k;
    memset(&k, 0, sizeof k);
    k.bits = f->bits, k.container = f->container, k.pad = f->pad, k.ebits = f->ebits, k.mbits = f->mbits;
    k.bias = f->bias, k.is_signed = f->is_signed, k.has_negzero = f->has_negzero, k.has_subnormals = f->has_subnormals;
    k.inf = (int)f->inf, k.nan = (int)f->nan, k.fast = f->fast != NULL, k.tables = f->decode_table != NULL;
    return k;
}

/* The entry for f's key: *found = 1 if it was there, else it is claimed (NULL when full). */
static fz_seen *lookup(const fpemu_format *f, int *found) {
    fz_key k = key_of(f);
    uint64_t h = 1469598103934665603u;
    const unsigned char *b = (const unsigned char *)&k;
    for (size_t i = 0; i < sizeof k; i++) h = (h ^ b[i]) * 1099511628211u;
    *found = 0;
    for (size_t i = 0; i < SEEN_N; i++) {
        fz_seen *e = &seen[(h + i) & (SEEN_N - 1)];
        if (!e->used) {
            if (nseen >= SEEN_N / 2) return NULL;
            e->used = 1, e->k = k, e->f = f, nseen++;
            return e;
        }
        if (!memcmp(&e->k, &k, sizeof k)) { *found = 1; return e; }
    }
    return NULL;
}

/* Same defining fields, so the same derived ones. */
static void same_derived(const char *s, const fpemu_format *a, const fpemu_format *b) {
    if (a->p != b->p || a->emin != b->emin || a->emax != b->emax || a->maxmant != b->maxmant ||
        a->max_code != b->max_code || a->sign_bit != b->sign_bit || a->mag_mask != b->mag_mask ||
        memcmp(&a->max_finite, &b->max_finite, sizeof(double)) || memcmp(&a->min_normal, &b->min_normal, sizeof(double)) ||
        memcmp(&a->min_subnormal, &b->min_subnormal, sizeof(double))) {
        fprintf(stderr, "'%s' and '%s': same format, different derived fields\n", s, a->name);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 512) return 0;
    char *s = fz_str(d, n);
    char err[256];
    const fpemu_format *f = fpemu_format_get(s, err, sizeof err);
    if (!f) {
        if (!err[0]) { fprintf(stderr, "fpemu_format_get('%s') failed without a message\n", s); abort(); }
    } else {
        int hd = fpemu_format_hex_digits(f);
        if (f->bits < 1 || f->bits + f->pad > f->container || hd * 4 < f->bits + f->pad) {
            fprintf(stderr, "'%s': bits %d pad %d container %d hex %d\n", s, f->bits, f->pad, f->container, hd);
            abort();
        }
        int found;
        fz_seen *e = lookup(f, &found);
        if (found) {
            same_derived(s, e->f, f);
            free(s);
            return 0;
        }
        fpemu_ctx c;
        fpemu_ctx_init(&c);
        uint64_t ncodes = f->bits >= 12 ? 4096 : (uint64_t)1 << f->bits;
        for (uint64_t i = 0; i < ncodes; i++) {
            uint64_t mask = f->bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->bits) - 1;
            uint64_t code = (f->bits >= 12 ? fpemu_random64(1, i) & mask : i) << f->pad;
            double x = fpemu_to_double(f, code);
            uint64_t back = fpemu_from_double(f, x, &c);
            uint64_t y = fpemu_add(f, code, back, &c);
            (void)fpemu_mul(f, y, code, &c);
            (void)fpemu_classify(f, code);
        }
    }
    free(s);
    return 0;
}
