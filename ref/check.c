/* SPDX-License-Identifier: MIT */
/* check.c: the differential checker (see check.h). Plans (which cases),
 * case generation (exhaustive, structured, random), and the threaded run. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

struct check_set {
    const fpemu_format *src, *dst; /* dst: conversion target, NULL for arithmetic */
    uint64_t *v, *c;               /* the grid, and its core of special values */
    size_t nv, nc;
};

/* Structured plans: all tuples over a set when there are at most this many,
 * else all tuples over the core plus this many drawn from the grid. */
#define STRUCT_FULL_MAX (UINT64_C(1) << 17)
#define STRUCT_HASHED (UINT64_C(1) << 18)

/* ---- small helpers --------------------------------------------------- */

static uint64_t mix64(uint64_t z) { /* SplitMix64's finaliser */
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t hash_str(const char *s) {
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

static void errf(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t n, const char *fmt, ...) {
    if (!err || !n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

static uint64_t pow_sat(uint64_t b, int k) { /* b^k, saturating at 2^63 */
    uint64_t r = 1;
    for (int i = 0; i < k; i++) {
        if (b && r > (UINT64_C(1) << 63) / b) return UINT64_C(1) << 63;
        r *= b;
    }
    return r;
}

static uint64_t code_of(const ref_format *F, int sign, int64_t ef, uint64_t mf) {
    if (ef < 0) ef = 0;
    if ((uint64_t)ef > F->ef_max) ef = (int64_t)F->ef_max;
    return ((sign && F->is_signed ? F->sign : 0) | ((uint64_t)ef << F->mbits) | (mf & F->mmask)) << F->pad;
}

/* ---- operand sets ----------------------------------------------------- */

typedef struct vec64 { uint64_t *v; size_t n, cap; } vec64;

static int vpush(vec64 *a, uint64_t x) {
    if (a->n == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 256;
        uint64_t *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv) return -1;
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n++] = x;
    return 0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void vuniq(vec64 *a) {
    if (!a->n) return;
    qsort(a->v, a->n, sizeof *a->v, cmp_u64);
    size_t k = 1;
    for (size_t i = 1; i < a->n; i++)
        if (a->v[i] != a->v[k - 1]) a->v[k++] = a->v[i];
    a->n = k;
}

/* The core: zeros, subnormal and normal boundaries and their neighbours,
 * values around 1, max finite and its neighbours, infinities, NaNs. */
static int build_core(const ref_format *F, vec64 *c) {
    int rc = 0;
    uint64_t mm = F->mmask, top = F->mbits ? UINT64_C(1) << (F->mbits - 1) : 0;
    int64_t efn = F->emin + F->bias, ef1 = F->bias, efx = F->emax + F->bias;
    for (int s = 0; s <= (F->is_signed ? 1 : 0); s++) {
        if (F->has_zero) {
            rc |= vpush(c, code_of(F, s, 0, 0));
            if (F->mbits) {
                rc |= vpush(c, code_of(F, s, 0, 1));
                rc |= vpush(c, code_of(F, s, 0, 2));
                rc |= vpush(c, code_of(F, s, 0, top));
                rc |= vpush(c, code_of(F, s, 0, mm));
                rc |= vpush(c, code_of(F, s, 0, mm - 1));
            }
        }
        int64_t efs[] = {efn, efn + 1, ef1 - 1, ef1, ef1 + 1, ef1 + F->p, ef1 - F->p, efx - 1, efx};
        for (size_t k = 0; k < sizeof efs / sizeof efs[0]; k++) {
            rc |= vpush(c, code_of(F, s, efs[k], 0));
            rc |= vpush(c, code_of(F, s, efs[k], 1));
            rc |= vpush(c, code_of(F, s, efs[k], mm));
            rc |= vpush(c, code_of(F, s, efs[k], top));
        }
        rc |= vpush(c, F->code_max | (s ? F->sign << F->pad : 0));
        rc |= vpush(c, (F->code_max - (UINT64_C(1) << F->pad)) | (s ? F->sign << F->pad : 0));
        if (F->has_inf) rc |= vpush(c, F->code_inf | (s ? F->sign << F->pad : 0));
    }
    if (F->has_nan) {
        rc |= vpush(c, F->code_nan);
        if (F->nan == FPEMU_NANS_IEEE) {
            rc |= vpush(c, code_of(F, 0, (int64_t)F->ef_max, 1));             /* sNaN */
            rc |= vpush(c, code_of(F, 1, (int64_t)F->ef_max, top | 1));       /* -qNaN, payload */
            rc |= vpush(c, code_of(F, 1, (int64_t)F->ef_max, mm & ~top));     /* -sNaN */
        } else if (F->nan == FPEMU_NANS_FN) {
            rc |= vpush(c, F->code_nan | F->sign << F->pad);
        }
    }
    vuniq(c);
    return rc;
}

/* TestFloat-style grid: exponent fields crossed with significand patterns
 * (all zeros, all ones, walking ones and zeros, boundaries), both signs.
 * Formats of at most 8 bits: every code. */
static int build_grid(const ref_format *F, vec64 *v) {
    int rc = 0;
    if (F->bits <= 8) {
        for (uint64_t i = 0; i < (UINT64_C(1) << F->bits); i++) rc |= vpush(v, i << F->pad);
        return rc;
    }
    int64_t em = (int64_t)F->ef_max, b = F->bias, p = F->p;
    int64_t e[64];
    int ne = 0;
    int64_t cand[] = {0, 1, 2, 3, em, em - 1, em - 2, em - 3, b - 3, b - 2, b - 1, b, b + 1, b + 2, b + 3,
                      b - p, b + p, b - p - 1, b + p + 1, b - p + 1, b + p - 1, b - 2 * p, b + 2 * p,
                      p, p + 1, p + 2, em - p, em - p - 1, em - 2 * p,
                      em / 8, em / 4, 3 * em / 8, 5 * em / 8, 3 * em / 4, 7 * em / 8};
    for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++) {
        int64_t x = cand[k];
        if (x < 0 || x > em) continue;
        int dup = 0;
        for (int j = 0; j < ne; j++) dup |= e[j] == x;
        if (!dup && ne < 64) e[ne++] = x;
    }
    vec64 m = {0};
    uint64_t mm = F->mmask, top = F->mbits ? UINT64_C(1) << (F->mbits - 1) : 0; /* m = 0 (e8m0): no top bit */
    uint64_t pats[] = {0, 1, 2, 3, mm, mm - 1, mm - 2, top, top + 1, top - 1, top | 1, mm >> (F->mbits / 2),
                       mm & ~(mm >> (F->mbits / 2)), UINT64_C(0x5555555555555555) & mm, UINT64_C(0xAAAAAAAAAAAAAAAA) & mm};
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) rc |= vpush(&m, pats[k] & mm);
    for (int k = 0; k < F->mbits; k++) {
        rc |= vpush(&m, UINT64_C(1) << k);
        rc |= vpush(&m, mm ^ (UINT64_C(1) << k));
    }
    vuniq(&m);
    for (int s = 0; s <= (F->is_signed ? 1 : 0); s++)
        for (int i = 0; i < ne; i++)
            for (size_t k = 0; k < m.n; k++) rc |= vpush(v, code_of(F, s, e[i], m.v[k]));
    free(m.v);
    vec64 c = {0};
    rc |= build_core(F, &c);
    for (size_t k = 0; k < c.n; k++) rc |= vpush(v, c.v[k]);
    free(c.v);
    vuniq(v);
    return rc;
}

/* Conversions to a narrower format: source values placed on the target's
 * grid, at its midpoints, one source ulp either side of them, across every
 * target binade (subnormal ones included) and a few beyond both ends. */
static int build_conv_grid(const ref_format *S, const ref_format *D, vec64 *v) {
    int rc = 0;
    int64_t elo = (int64_t)D->emin - D->p - 2, ehi = (int64_t)D->emax + 2;
    if (elo < S->emin) elo = S->emin;
    if (ehi > S->emax) ehi = S->emax;
    for (int64_t e = elo; e <= ehi; e++) {
        int64_t ef = e + S->bias;
        if (ef < 1 || (uint64_t)ef >= S->ef_max + (S->has_inf || S->nan == FPEMU_NANS_IEEE ? 0 : 1)) continue;
        /* fraction bits the target keeps in this binade */
        int64_t dbits = D->mbits - (e < D->emin ? D->emin - e : 0);
        int64_t shift = S->mbits - dbits; /* source bits below the target's quantum */
        for (int s = 0; s <= (S->is_signed ? 1 : 0); s++) {
            if (shift <= 0) {
                rc |= vpush(v, code_of(S, s, ef, 0));
                rc |= vpush(v, code_of(S, s, ef, S->mmask));
                continue;
            }
            if (shift > S->mbits) { /* the whole binade lies below the target's quantum */
                uint64_t top = S->mbits ? UINT64_C(1) << (S->mbits - 1) : 0; /* m = 0 (e8m0): no top bit */
                uint64_t ms[] = {0, 1, S->mmask, top, top - 1, top + 1};
                for (size_t k = 0; k < 6; k++) rc |= vpush(v, code_of(S, s, ef, ms[k] & S->mmask));
                continue;
            }
            uint64_t dm = (UINT64_C(1) << dbits) - 1;
            uint64_t his[] = {0, 1, dm, dm - 1, dbits ? UINT64_C(1) << (dbits - 1) : 0};
            uint64_t half = UINT64_C(1) << (shift - 1), lm = (UINT64_C(1) << shift) - 1;
            uint64_t los[] = {0, 1, half, half - 1, half + 1, lm};
            for (size_t h = 0; h < 5; h++)
                for (size_t l = 0; l < 6; l++)
                    rc |= vpush(v, code_of(S, s, ef, ((his[h] & dm) << shift) | (los[l] & lm)));
        }
    }
    vec64 c = {0};
    rc |= build_core(S, &c);
    for (size_t k = 0; k < c.n; k++) rc |= vpush(v, c.v[k]);
    free(c.v);
    vuniq(v);
    return rc;
}

static check_set *get_set(check_plan *pl, const fpemu_format *src, const fpemu_format *dst) {
    for (int i = 0; i < pl->nsets; i++)
        if (pl->sets[i].src == src && pl->sets[i].dst == dst) return &pl->sets[i];
    check_set *ns = realloc(pl->sets, (size_t)(pl->nsets + 1) * sizeof *ns);
    if (!ns) return NULL;
    pl->sets = ns;
    check_set *s = &pl->sets[pl->nsets];
    memset(s, 0, sizeof *s);
    s->src = src;
    s->dst = dst;
    ref_format S, D;
    if (ref_format_init(&S, src) != 0) return NULL;
    vec64 v = {0}, c = {0};
    int rc = 0;
    if (dst && ref_format_init(&D, dst) == 0 && (S.p > D.p || S.emax > D.emax || S.emin < D.emin) && S.bits > 8)
        rc |= build_conv_grid(&S, &D, &v);
    else
        rc |= build_grid(&S, &v);
    rc |= build_core(&S, &c);
    if (rc) { free(v.v); free(c.v); return NULL; }
    s->v = v.v;
    s->nv = v.n;
    s->c = c.v;
    s->nc = c.n;
    pl->nsets++;
    return s;
}

/* ---- plans ------------------------------------------------------------- */

typedef struct fmt_list { const fpemu_format *f[256]; int n; } fmt_list;

static int fl_add(fmt_list *l, const fpemu_format *f) {
    for (int i = 0; i < l->n; i++)
        if (l->f[i] == f) return 0;
    if (l->n >= 256) return -1;
    l->f[l->n++] = f;
    return 0;
}

/* Split a comma list; a "custom:" spec keeps the key=value items after it. */
static int next_token(const char **pp, char *tok, size_t n) {
    const char *p = *pp;
    while (*p == ',' || *p == ' ') p++;
    if (!*p) return 0;
    size_t k = 0;
    int custom = !strncmp(p, "custom:", 7);
    for (;;) {
        while (*p && *p != ',') {
            if (k + 1 < n) tok[k++] = *p;
            p++;
        }
        if (custom && *p == ',') {
            const char *q = p + 1;
            const char *comma = strchr(q, ','), *eq = strchr(q, '=');
            const char *end = comma ? comma : q + strlen(q);
            if (eq && eq < end && strncmp(q, "custom:", 7)) {
                if (k + 1 < n) tok[k++] = ',';
                p = q;
                continue;
            }
        }
        break;
    }
    tok[k] = 0;
    *pp = p;
    return 1;
}

static int parse_formats(const char *s, fmt_list *l, char *err, size_t errlen) {
    char tok[256], e2[600];
    const char *p = s;
    l->n = 0;
    while (next_token(&p, tok, sizeof tok)) {
        if (!strcmp(tok, "all") || !strcmp(tok, "small") || !strcmp(tok, "wide")) {
            for (int i = 0; i < fpemu_format_count(); i++) {
                const fpemu_format *f = fpemu_format_at(i);
                if (!strcmp(tok, "all") || (tok[0] == 's') == (f->bits <= 8)) fl_add(l, f);
            }
            continue;
        }
        const fpemu_format *f = fpemu_format_get(tok, e2, sizeof e2);
        if (!f) { errf(err, errlen, "--format: %s", e2); return -1; }
        fl_add(l, f);
    }
    if (!l->n) { errf(err, errlen, "--format: empty list (expected format names, all, small or wide)"); return -1; }
    return 0;
}

static int parse_modes(const char *s, int *modes, int *n, char *err, size_t errlen) {
    char tok[64];
    const char *p = s;
    *n = 0;
    int seen[FPEMU_ROUND_COUNT] = {0};
    while (next_token(&p, tok, sizeof tok)) {
        if (!strcmp(tok, "all")) {
            for (int m = 0; m < FPEMU_ROUND_COUNT; m++)
                if (!seen[m]) seen[m] = 1, modes[(*n)++] = m;
            continue;
        }
        int m = fpemu_round_parse(tok);
        if (m < 0) {
            errf(err, errlen, "--round: unknown rounding mode '%s' (expected rne, rna, rtz, rup, rdn, rto, sr or all)", tok);
            return -1;
        }
        if (!seen[m]) seen[m] = 1, modes[(*n)++] = m;
    }
    if (!*n) { errf(err, errlen, "--round: empty list (expected rne, rna, rtz, rup, rdn, rto, sr or all)"); return -1; }
    return 0;
}

typedef struct op_item { ref_opcode op; const fpemu_format *other; int to; int group; } op_item;

static int push_job(check_plan *pl, int *cap, const check_job *j) {
    for (int i = 0; i < pl->njobs; i++) {
        const check_job *o = &pl->jobs[i];
        if (o->fmt == j->fmt && o->src == j->src && o->op == j->op && o->round == j->round) return 0;
    }
    if (pl->njobs == *cap) {
        int nc = *cap ? 2 * *cap : 64;
        check_job *nj = realloc(pl->jobs, (size_t)nc * sizeof *nj);
        if (!nj) return -1;
        pl->jobs = nj;
        *cap = nc;
    }
    pl->jobs[pl->njobs++] = *j;
    return 0;
}

int check_plan_build(check_plan *pl, const check_spec *spec, char *err, size_t errlen, char *note, size_t notelen) {
    memset(pl, 0, sizeof *pl);
    if (note && notelen) note[0] = 0;
    pl->kind = spec->kind;
    pl->random_n = spec->random_n;
    pl->seed = spec->seed;
    fmt_list fl;
    if (parse_formats(spec->formats ? spec->formats : "", &fl, err, errlen)) return -1;
    int modes[FPEMU_ROUND_COUNT], nmodes;
    if (parse_modes(spec->modes ? spec->modes : "", modes, &nmodes, err, errlen)) return -1;
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0), *f64 = fpemu_format_get("f64", NULL, 0);
    if (!f32 || !f64) { errf(err, errlen, "the format registry has no f32/f64"); return -1; }

    /* operations */
    op_item items[512];
    int ni = 0;
    char tok[256], e2[600];
    const char *p = spec->ops ? spec->ops : "";
    static const struct { const char *name; ref_opcode op; } arith[] = {
        {"add", REF_ADD}, {"sub", REF_SUB}, {"mul", REF_MUL}, {"div", REF_DIV},
        {"sqrt", REF_SQRT}, {"fma", REF_FMA}, {"mulAdd", REF_FMA}};
    while (next_token(&p, tok, sizeof tok)) {
        if (ni > 400) { errf(err, errlen, "--op: too many operations"); return -1; }
        int found = 0;
        for (size_t k = 0; k < sizeof arith / sizeof arith[0]; k++)
            if (!strcmp(tok, arith[k].name)) items[ni++] = (op_item){arith[k].op, NULL, 0, 0}, found = 1;
        if (found) continue;
        int group = !strcmp(tok, "arith") || !strcmp(tok, "all");
        if (group)
            for (int k = 0; k < 6; k++) items[ni++] = (op_item){arith[k].op, NULL, 0, 1};
        if (!strcmp(tok, "conv") || !strcmp(tok, "all")) {
            for (int i = 0; i < fl.n && ni < 400; i++) items[ni++] = (op_item){REF_CONVERT, fl.f[i], 1, 1};
            items[ni++] = (op_item){REF_CONVERT, f32, 1, 1};
            items[ni++] = (op_item){REF_CONVERT, f64, 1, 1};
            items[ni++] = (op_item){REF_CONVERT, f32, 0, 1};
            items[ni++] = (op_item){REF_CONVERT, f64, 0, 1};
            continue;
        }
        if (group) continue;
        if (!strcmp(tok, "convert")) {
            items[ni++] = (op_item){REF_CONVERT, f32, 1, 0};
            items[ni++] = (op_item){REF_CONVERT, f32, 0, 0};
            continue;
        }
        if (!strncmp(tok, "to_", 3) || !strncmp(tok, "from_", 5)) {
            int to = tok[0] == 't';
            const fpemu_format *o = fpemu_format_get(tok + (to ? 3 : 5), e2, sizeof e2);
            if (!o) { errf(err, errlen, "--op '%s': %s", tok, e2); return -1; }
            items[ni++] = (op_item){REF_CONVERT, o, to, 0};
            continue;
        }
        errf(err, errlen, "--op: unknown operation '%s' (expected add, sub, mul, div, sqrt, fma, to_FMT, from_FMT, "
             "convert, arith, conv or all)", tok);
        return -1;
    }
    if (!ni) { errf(err, errlen, "--op: empty list"); return -1; }

    int cap = 0;
    size_t notelen_used = 0;
    int skipped = 0;
    for (int fi = 0; fi < fl.n; fi++) {
        for (int ii = 0; ii < ni; ii++) {
            for (int mi = 0; mi < nmodes; mi++) {
                check_job j;
                memset(&j, 0, sizeof j);
                j.op = items[ii].op;
                j.round = (fpemu_round)modes[mi];
                j.arity = ref_op_arity(j.op);
                if (j.op == REF_CONVERT) {
                    j.fmt = items[ii].to ? items[ii].other : fl.f[fi];
                    j.src = items[ii].to ? fl.f[fi] : items[ii].other;
                    snprintf(j.name, sizeof j.name, "%s_to_%s", j.src->name, j.fmt->name);
                    j.from_f32 = !strcmp(j.src->name, "f32");
                } else {
                    j.fmt = j.src = fl.f[fi];
                    snprintf(j.name, sizeof j.name, "%s_%s", j.fmt->name, ref_op_name(j.op));
                }
                if (ref_format_init(&j.rsrc, j.src) || ref_format_init(&j.rfmt, j.fmt)) {
                    errf(err, errlen, "format '%s': not supported by the reference",
                         ref_format_init(&j.rsrc, j.src) ? j.src->name : j.fmt->name);
                    goto fail;
                }
                const ref_format S = j.rsrc;
                if (pl->kind == CHECK_EXHAUSTIVE) {
                    uint64_t d = UINT64_C(1) << (S.bits > 40 ? 40 : S.bits);
                    uint64_t cnt = pow_sat(d, j.arity);
                    if (S.bits > 40 || cnt > CHECK_EXHAUSTIVE_MAX) {
                        if (!items[ii].group) {
                            errf(err, errlen, "--exhaustive: %s has 2^%d cases, more than the 2^36 allowed "
                                 "(use --structured or --random N)", j.name, S.bits * j.arity);
                            goto fail;
                        }
                        cnt = 0;
                    }
                    if (items[ii].group && (cnt == 0 || cnt > CHECK_EXHAUSTIVE_GROUP_MAX)) {
                        if (mi == 0) {
                            if (skipped < 4 && note && notelen > notelen_used + 1) {
                                int w = snprintf(note + notelen_used, notelen - notelen_used, "%s%s (2^%d)",
                                                 skipped ? ", " : "", j.name, S.bits * j.arity);
                                if (w > 0) notelen_used += (size_t)w < notelen - notelen_used ? (size_t)w : notelen - notelen_used - 1;
                            }
                            skipped++;
                        }
                        continue;
                    }
                    j.count = cnt;
                } else if (pl->kind == CHECK_STRUCTURED) {
                    check_set *s = get_set(pl, j.src, j.op == REF_CONVERT ? j.fmt : NULL);
                    if (!s) { errf(err, errlen, "out of memory"); goto fail; }
                    uint64_t all = pow_sat(s->nv, j.arity);
                    if (all <= STRUCT_FULL_MAX || j.arity == 1) {
                        j.full = s->v, j.nfull = s->nv, j.nfull_tuples = all, j.nhash = 0;
                    } else {
                        j.full = s->c, j.nfull = s->nc, j.nfull_tuples = pow_sat(s->nc, j.arity);
                        j.set = s->v, j.nset = s->nv, j.nhash = STRUCT_HASHED;
                    }
                    j.count = j.nfull_tuples + j.nhash;
                } else {
                    check_set *s = get_set(pl, j.src, j.op == REF_CONVERT ? j.fmt : NULL);
                    if (!s) { errf(err, errlen, "out of memory"); goto fail; }
                    j.set = s->v, j.nset = s->nv;
                    j.count = pl->random_n;
                }
                if (push_job(pl, &cap, &j)) { errf(err, errlen, "out of memory"); goto fail; }
            }
        }
    }
    /* sets may have moved while growing: point the jobs at them again */
    for (int i = 0; i < pl->njobs; i++) {
        check_job *j = &pl->jobs[i];
        if (pl->kind == CHECK_EXHAUSTIVE) continue;
        check_set *s = get_set(pl, j->src, j->op == REF_CONVERT ? j->fmt : NULL);
        if (!s) { errf(err, errlen, "out of memory"); goto fail; }
        if (pl->kind == CHECK_STRUCTURED) {
            if (j->nhash) j->full = s->c, j->set = s->v;
            else j->full = s->v;
        } else {
            j->set = s->v;
        }
    }
    if (skipped && note && notelen) {
        char head[160];
        snprintf(head, sizeof head, "left out of --exhaustive: %d operation%s above 2^24 cases, in every mode "
                 "(name them with --op to run them): ", skipped, skipped > 1 ? "s" : "");
        size_t hl = strlen(head), nl = strlen(note);
        if (hl + nl + 8 < notelen) {
            memmove(note + hl, note, nl + 1);
            memcpy(note, head, hl);
            if (skipped > 4) strcat(note, ", ...");
        }
    }
    uint64_t start = 0;
    for (int i = 0; i < pl->njobs; i++) {
        check_job *j = &pl->jobs[i];
        char salt[320];
        snprintf(salt, sizeof salt, "%s/%s/%d", j->name, fpemu_round_name(j->round), (int)pl->kind);
        j->salt = mix64(hash_str(salt) ^ mix64(pl->seed));
        j->start = start;
        start += j->count;
    }
    pl->total = start;
    if (!pl->njobs) { errf(err, errlen, "nothing to check: every job was left out (%s)", note && *note ? note : "empty plan"); goto fail; }
    return 0;
fail:
    check_plan_free(pl);
    return -1;
}

void check_plan_free(check_plan *pl) {
    for (int i = 0; i < pl->nsets; i++) {
        free(pl->sets[i].v);
        free(pl->sets[i].c);
    }
    free(pl->sets);
    free(pl->jobs);
    memset(pl, 0, sizeof *pl);
}

/* ---- cases -------------------------------------------------------------- */

typedef struct rng { uint64_t s; } rng;
static uint64_t rnext(rng *r) { return mix64(r->s += UINT64_C(0x9E3779B97F4A7C15)); }
static uint64_t rbelow(rng *r, uint64_t n) { return n ? rnext(r) % n : 0; }

/* A finite operand's exponent field, or -1. */
static int64_t field_exp(const ref_format *F, uint64_t code) {
    ref_value v;
    ref_decode(F, code, 0, &v);
    if (v.cls != REF_FINITE) return -1;
    return (int64_t)(((code >> F->pad) & ~F->sign) >> F->mbits);
}

static uint64_t random_mant(const ref_format *F, rng *r) {
    uint64_t x = rnext(r);
    switch (x & 7) {
    case 0: return 0;
    case 1: return F->mmask;
    case 2: return (x >> 8) & F->mmask & -(x >> 8 & F->mmask); /* one bit */
    case 3: return F->mmask ^ ((x >> 8) & F->mmask & -(x >> 8 & F->mmask));
    default: return (x >> 8) & F->mmask;
    }
}

static uint64_t random_operand(const check_job *j, const ref_format *S, const ref_format *D, int k,
                               const uint64_t *prev, rng *r) {
    uint64_t x = rnext(r), kind = x % 100;
    uint64_t umask = (S->bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << S->bits) - 1);
    int sign = (int)(x >> 40) & 1;
    if (j->op == REF_CONVERT) {
        if (kind < 25 || S->bits <= 8 || (S->p <= D->p && S->emax <= D->emax && S->emin >= D->emin))
            return (rnext(r) & umask) << S->pad;
        if (kind < 85) { /* near the target's grid, midpoints and their neighbours */
            int64_t elo = (int64_t)D->emin - D->p - 2, ehi = (int64_t)D->emax + 2;
            if (elo < S->emin) elo = S->emin;
            if (ehi > S->emax) ehi = S->emax;
            int64_t e = elo + (int64_t)rbelow(r, (uint64_t)(ehi - elo + 1));
            int64_t dbits = D->mbits - (e < D->emin ? D->emin - e : 0);
            int64_t shift = S->mbits - dbits;
            uint64_t mf = rnext(r) & S->mmask;
            if (shift > 0 && shift <= S->mbits && (x >> 41) % 5 < 3) {
                uint64_t half = UINT64_C(1) << (shift - 1), lm = (UINT64_C(1) << shift) - 1;
                uint64_t los[] = {half, half - 1, half + 1, 0, 1, lm};
                mf = (mf & ~lm) | (los[rbelow(r, 6)] & lm);
            }
            return code_of(S, sign, e + S->bias, mf);
        }
        return j->nset ? j->set[rbelow(r, j->nset)] : (rnext(r) & umask) << S->pad;
    }
    int64_t emaxf = (int64_t)S->ef_max;
    if (kind < 40) return (rnext(r) & umask) << S->pad;
    if (kind < 65 && k > 0) { /* exponent close to the other operands': cancellation, alignment, ties */
        int64_t ea = field_exp(S, prev[0]), eb = k > 1 ? field_exp(S, prev[1]) : -1, e;
        if (ea < 0) ea = S->bias;
        if (k == 2 && eb >= 0) e = ea + eb - S->bias; /* fma: c near a*b */
        else e = ea;
        e += (int64_t)rbelow(r, 2 * (uint64_t)S->p + 7) - (S->p + 3);
        if (e < 0) e = 0;
        if (e > emaxf) e = emaxf;
        return code_of(S, sign, e, random_mant(S, r));
    }
    if (kind < 85) return code_of(S, sign, (int64_t)rbelow(r, (uint64_t)emaxf + 1), random_mant(S, r));
    return j->nset ? j->set[rbelow(r, j->nset)] : (rnext(r) & umask) << S->pad;
}

void check_case(const check_plan *pl, const check_job *j, uint64_t i, uint64_t ops[3]) {
    ops[0] = ops[1] = ops[2] = 0;
    switch (pl->kind) {
    case CHECK_EXHAUSTIVE: {
        int bits = j->src->bits, pad = j->src->pad;
        uint64_t m = (UINT64_C(1) << bits) - 1;
        for (int k = j->arity - 1; k >= 0; k--) {
            ops[k] = (i & m) << pad;
            i >>= bits;
        }
        return;
    }
    case CHECK_STRUCTURED:
        if (i < j->nfull_tuples) {
            for (int k = j->arity - 1; k >= 0; k--) {
                ops[k] = j->full[i % j->nfull];
                i /= j->nfull;
            }
        } else {
            rng r = {j->salt ^ mix64(i)};
            for (int k = 0; k < j->arity; k++) ops[k] = j->set[rbelow(&r, j->nset)];
        }
        return;
    case CHECK_RANDOM: {
        rng r = {j->salt ^ mix64(i + UINT64_C(0x5DEECE66D))};
        for (int k = 0; k < j->arity; k++) ops[k] = random_operand(j, &j->rsrc, &j->rfmt, k, ops, &r);
        return;
    }
    }
}

static float f32_of(uint64_t code) {
    uint32_t u = (uint32_t)code;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

uint64_t check_dut_emu(const check_job *j, const uint64_t *x, fpemu_ctx *ctx, void *arg) {
    (void)arg;
    switch (j->op) {
    case REF_ADD: return fpemu_add(j->fmt, x[0], x[1], ctx);
    case REF_SUB: return fpemu_sub(j->fmt, x[0], x[1], ctx);
    case REF_MUL: return fpemu_mul(j->fmt, x[0], x[1], ctx);
    case REF_DIV: return fpemu_div(j->fmt, x[0], x[1], ctx);
    case REF_SQRT: return fpemu_sqrt(j->fmt, x[0], ctx);
    case REF_FMA: return fpemu_fma(j->fmt, x[0], x[1], x[2], ctx);
    default: /* from f32 through fpemu_from_float, whose fast paths are its own */
        if (j->from_f32) return fpemu_from_float(j->fmt, f32_of(x[0]), ctx);
        return fpemu_convert(j->fmt, j->src, x[0], ctx);
    }
}

uint64_t check_dut_emu_sr(const check_job *j, const uint64_t *x, uint64_t draw, fpemu_ctx *ctx) {
    switch (j->op) {
    case REF_ADD: return fpemu_add_sr(j->fmt, x[0], x[1], draw, ctx);
    case REF_SUB: return fpemu_sub_sr(j->fmt, x[0], x[1], draw, ctx);
    case REF_MUL: return fpemu_mul_sr(j->fmt, x[0], x[1], draw, ctx);
    case REF_DIV: return fpemu_div_sr(j->fmt, x[0], x[1], draw, ctx);
    case REF_SQRT: return fpemu_sqrt_sr(j->fmt, x[0], draw, ctx);
    case REF_FMA: return fpemu_fma_sr(j->fmt, x[0], x[1], x[2], draw, ctx);
    default:
        if (j->from_f32) return fpemu_from_float_sr(j->fmt, f32_of(x[0]), draw, ctx);
        return fpemu_convert_sr(j->fmt, j->src, x[0], draw, ctx);
    }
}

/* ---- sr draws -------------------------------------------------------------- */

static const int sr_cycle[] = {64, 1, 8, 13, 23};

/* The draw of sr case i of job j (R = *R), a pure function of the case: a
 * uniform draw, or on CHECK_SR_EDGE percent of the cases one whose top R
 * bits are T - 1 or T for the threshold T of a decision of the reference
 * (ref_sr_straddle: ref_op lists every decision a draw can reach). The
 * bits below the top R stay random. */
static uint64_t sr_case_draw(const check_job *j, uint64_t i, const check_config *cfg, ref_ctx *rc,
                             const uint64_t *ops, int *R) {
    rng g = {j->salt ^ mix64(i ^ UINT64_C(0x5352445241573031))};
    *R = cfg->sr_bits >= 1 && cfg->sr_bits <= 64 ? cfg->sr_bits : sr_cycle[i % 5];
    uint64_t draw = rnext(&g), pick = rnext(&g);
    if (pick % 100 >= CHECK_SR_EDGE) return draw;
    rc->sr_bits = *R;
    return ref_sr_straddle(rc, j->fmt, j->op, ops, j->src, (unsigned)(pick >> 8), (int)(pick >> 16) & 1, draw);
}

/* ---- the run -------------------------------------------------------------- */

#define CHUNK 8192

typedef struct shared {
    const check_plan *pl;
    const check_config *cfg;
    uint64_t lo, hi;
    _Atomic uint64_t next, done, mism;
    _Atomic int finished;
} shared;

typedef struct worker {
    shared *sh;
    pthread_t th;
    uint64_t *job_mism;
    check_mismatch *kept;
    size_t nkept;
    int failed;
} worker;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int find_job(const check_plan *pl, uint64_t g) {
    int lo = 0, hi = pl->njobs - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (pl->jobs[mid].start <= g) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Count a mismatch of case g (job ji) and keep it while there is room. */
static void note_mismatch(worker *w, const check_config *cfg, uint64_t g, int ji, const uint64_t *ops, int arity,
                          const check_mismatch *m) {
    w->job_mism[ji]++;
    if (w->nkept >= cfg->keep) return;
    check_mismatch *k = &w->kept[w->nkept++];
    *k = *m;
    k->index = g;
    k->job = ji;
    memset(k->ops, 0, sizeof k->ops);
    memcpy(k->ops, ops, (size_t)arity * sizeof *ops);
}

/* Cases outside sr run in batches of up to BATCH within one job: the
 * batch's operands, the device under test on each, the reference on all of
 * them in one ref_op_n (one set-up per batch, not per case), then the
 * comparison, case by case as before. */
#define BATCH 512

/* The operands of cases i0 .. i0 + n - 1 of job j, arity a case, as
 * check_case gives them. Exhaustive: case i0's digits (the last operand
 * varies fastest), then counted up. */
static void check_cases(const check_plan *pl, const check_job *j, uint64_t i0, size_t n, uint64_t *ops) {
    const int a = j->arity;
    if (pl->kind == CHECK_EXHAUSTIVE) {
        const int bits = j->src->bits, pad = j->src->pad;
        const uint64_t m = (UINT64_C(1) << bits) - 1;
        uint64_t dg[3] = {0, 0, 0}, i = i0;
        for (int k = a - 1; k >= 0; k--) {
            dg[k] = i & m;
            i >>= bits;
        }
        if (a == 2) { /* the 2^32 jobs: kept in registers */
            uint64_t x = dg[0], y = dg[1];
            for (size_t c = 0; c < n; c++, ops += 2) {
                ops[0] = x << pad, ops[1] = y << pad;
                y = (y + 1) & m;
                if (!y) x = (x + 1) & m;
            }
            return;
        }
        for (size_t c = 0; c < n; c++, ops += a) {
            for (int k = 0; k < a; k++) ops[k] = dg[k] << pad;
            for (int k = a - 1; k >= 0 && (dg[k] = (dg[k] + 1) & m) == 0; k--) continue;
        }
        return;
    }
    for (size_t c = 0; c < n; c++, ops += a) {
        uint64_t t[3];
        check_case(pl, j, i0 + c, t);
        memcpy(ops, t, (size_t)a * sizeof *t);
    }
}

/* The device under test on n cases (operands as check_cases lays them
 * out): results in d, flags in fl. emu/ is called directly, the switch on
 * the operation taken once a batch. */
static void dut_cases(const check_job *j, const check_config *cfg, const uint64_t *x, size_t n, fpemu_ctx *ec,
                      uint64_t *d, unsigned *fl) {
    const fpemu_format *f = j->fmt;
    const int a = j->arity;
#define EACH(CALL)                                  \
    for (size_t c = 0; c < n; c++, x += a) {        \
        ec->flags = 0;                              \
        d[c] = (CALL);                              \
        fl[c] = ec->flags;                          \
    }                                               \
    return
    if (!cfg->dut) {
        switch (j->op) {
        case REF_ADD: EACH(fpemu_add(f, x[0], x[1], ec));
        case REF_SUB: EACH(fpemu_sub(f, x[0], x[1], ec));
        case REF_MUL: EACH(fpemu_mul(f, x[0], x[1], ec));
        case REF_DIV: EACH(fpemu_div(f, x[0], x[1], ec));
        case REF_SQRT: EACH(fpemu_sqrt(f, x[0], ec));
        case REF_FMA: EACH(fpemu_fma(f, x[0], x[1], x[2], ec));
        default: EACH(check_dut_emu(j, x, ec, NULL));
        }
    }
    EACH(cfg->dut(j, x, ec, cfg->dut_arg));
#undef EACH
}

/* Cases g0 .. g0 + n - 1 of job ji (not sr), in one batch. Returns the
 * mismatches. */
static uint64_t run_batch(worker *w, ref_ctx *rc, fpemu_ctx *ec, int ji, uint64_t g0, size_t n) {
    const check_plan *pl = w->sh->pl;
    const check_config *cfg = w->sh->cfg;
    const check_job *j = &pl->jobs[ji];
    uint64_t ops[BATCH * 3 + 3], d[BATCH], r[BATCH];
    unsigned dfl[BATCH], rfl[BATCH];
    const int a = j->arity;
    check_cases(pl, j, g0 - j->start, n, ops);
    ops[n * (size_t)a] = ops[n * (size_t)a + 1] = ops[n * (size_t)a + 2] = 0; /* a DUT reading 3 operands stays inside */
    ec->round = j->round;
    dut_cases(j, cfg, ops, n, ec, d, dfl);
    rc->round = j->round;
    ref_op_n(rc, j->fmt, j->op, ops, n, j->src, r, rfl);
    uint64_t mism = 0;
    for (size_t c = 0; c < n; c++) {
        if ((d[c] == r[c] || (ref_is_nan(&j->rfmt, d[c]) && ref_is_nan(&j->rfmt, r[c]))) && dfl[c] == rfl[c]) continue;
        mism++;
        check_mismatch m;
        memset(&m, 0, sizeof m);
        m.dut = d[c], m.ref = r[c], m.dut_flags = dfl[c], m.ref_flags = rfl[c];
        m.seed = ec->seed;
        note_mismatch(w, cfg, g0 + c, ji, ops + c * (size_t)a, a, &m);
    }
    return mism;
}

/* Case g of job ji in sr: its own draw, given to emu by one of three ways
 * in turn. Returns 1 on a mismatch. */
static int run_sr_case(worker *w, ref_ctx *rc, fpemu_ctx *ec, int ji, uint64_t g) {
    const check_plan *pl = w->sh->pl;
    const check_config *cfg = w->sh->cfg;
    const check_job *j = &pl->jobs[ji];
    check_dut_fn dut = cfg->dut ? cfg->dut : check_dut_emu;
    uint64_t ops[3];
    uint64_t i = g - j->start;
    check_case(pl, j, i, ops);
    ec->round = j->round;
    ec->flags = 0;
    rc->round = j->round;
    int R = 0;
    uint64_t draw = sr_case_draw(j, i, cfg, rc, ops, &R), c0;
    rc->sr_bits = ec->sr_bits = R;
    rc->sr_draw = draw;
    ec->seed = j->salt;
    /* the three ways a draw reaches emu in turn (a DUT other than emu: the
     * first two) */
    int via_stream = (int)(cfg->dut ? i & 1 : i % 3);
    if (via_stream == 2) { /* the per-call API: the counter must stay put */
        ec->sr_stream = NULL, ec->sr_len = ec->sr_pos = 0;
        ec->counter = c0 = i;
    } else if (via_stream) { /* a one-draw caller stream; the counter advances too */
        ec->sr_stream = &draw, ec->sr_len = 1, ec->sr_pos = 0;
        ec->counter = c0 = i;
    } else { /* the seed's own stream, where the fast paths draw */
        ec->sr_stream = NULL, ec->sr_len = ec->sr_pos = 0;
        ec->counter = c0 = fpemu_random64_counter(ec->seed, draw);
    }
    uint64_t d = via_stream == 2 ? check_dut_emu_sr(j, ops, draw, ec) : dut(j, ops, ec, cfg->dut_arg);
    unsigned rfl;
    uint64_t r = ref_op(rc, j->fmt, j->op, ops, j->src, &rfl);
    int ref_draws = rc->sr_took;
    int dut_draws = via_stream == 2 ? (ec->counter == c0 ? ref_draws : -1) : (int)(ec->counter - c0);
    ec->sr_stream = NULL, ec->sr_len = ec->sr_pos = 0;
    int same = (d == r || (ref_is_nan(&j->rfmt, d) && ref_is_nan(&j->rfmt, r))) && ec->flags == rfl &&
               dut_draws == ref_draws;
    if (same) return 0;
    check_mismatch m;
    memset(&m, 0, sizeof m);
    m.dut = d, m.ref = r, m.dut_flags = ec->flags, m.ref_flags = rfl;
    m.draw = draw, m.sr_bits = R, m.dut_draws = dut_draws, m.ref_draws = ref_draws;
    m.seed = ec->seed, m.counter = c0, m.sr_stream = via_stream;
    note_mismatch(w, cfg, g, ji, ops, j->arity, &m);
    return 1;
}

static void *work(void *arg) {
    worker *w = arg;
    shared *sh = w->sh;
    const check_plan *pl = sh->pl;
    const check_config *cfg = sh->cfg;
    ref_ctx rc;
    if (ref_ctx_init(&rc) != 0) { w->failed = 1; atomic_fetch_add(&sh->finished, 1); return NULL; }
    rc.sat = cfg->sat, rc.ftz = cfg->ftz, rc.daz = cfg->daz, rc.tininess_before = cfg->tininess_before;
    fpemu_ctx ec;
    fpemu_ctx_init(&ec);
    ec.sat = cfg->sat, ec.ftz = cfg->ftz, ec.daz = cfg->daz, ec.tininess_before = cfg->tininess_before;
    uint64_t span = sh->hi - sh->lo;
    for (;;) {
        uint64_t s = atomic_fetch_add(&sh->next, CHUNK);
        if (s >= span) break;
        uint64_t g0 = sh->lo + s, g1 = g0 + (span - s < CHUNK ? span - s : CHUNK);
        int ji = find_job(pl, g0);
        uint64_t local_mism = 0;
        for (uint64_t g = g0; g < g1;) {
            while (g >= pl->jobs[ji].start + pl->jobs[ji].count) ji++;
            const check_job *j = &pl->jobs[ji];
            uint64_t end = j->start + j->count < g1 ? j->start + j->count : g1;
            if (j->round == FPEMU_SR) {
                for (; g < end; g++) local_mism += (uint64_t)run_sr_case(w, &rc, &ec, ji, g);
                continue;
            }
            size_t n = end - g < BATCH ? (size_t)(end - g) : BATCH;
            local_mism += run_batch(w, &rc, &ec, ji, g, n);
            g += n;
        }
        if (local_mism) atomic_fetch_add(&sh->mism, local_mism);
        atomic_fetch_add(&sh->done, g1 - g0);
    }
    ref_ctx_clear(&rc);
    atomic_fetch_add(&sh->finished, 1);
    return NULL;
}

static int cmp_mismatch(const void *a, const void *b) {
    uint64_t x = ((const check_mismatch *)a)->index, y = ((const check_mismatch *)b)->index;
    return x < y ? -1 : x > y;
}

int check_run(const check_plan *pl, const check_config *cfg, check_result *res, char *err, size_t errlen) {
    memset(res, 0, sizeof *res);
    uint64_t sn = cfg->shard_n ? cfg->shard_n : 1, si = cfg->shard_i;
    if (si >= sn) { errf(err, errlen, "shard %llu/%llu: expected I < N", (unsigned long long)si, (unsigned long long)sn); return -1; }
    shared sh;
    memset(&sh, 0, sizeof sh);
    sh.pl = pl;
    sh.cfg = cfg;
    sh.lo = (uint64_t)((unsigned __int128)pl->total * si / sn);
    sh.hi = (uint64_t)((unsigned __int128)pl->total * (si + 1) / sn);
    int nt = cfg->threads;
    if (nt <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nt = c > 0 ? (int)c : 1;
    }
    if (nt > 256) nt = 256;
    if (!ref_thread_safe()) nt = 1; /* MPFR's exponent range is global then */
    uint64_t chunks = (sh.hi - sh.lo + CHUNK - 1) / CHUNK;
    if ((uint64_t)nt > chunks) nt = chunks ? (int)chunks : 1;
    worker *ws = calloc((size_t)nt, sizeof *ws);
    if (!ws) { errf(err, errlen, "out of memory"); return -1; }
    int started = 0, rc = 0;
    double t0 = now_s();
    for (int i = 0; i < nt; i++) {
        ws[i].sh = &sh;
        ws[i].kept = cfg->keep ? calloc(cfg->keep, sizeof *ws[i].kept) : NULL;
        ws[i].job_mism = calloc((size_t)pl->njobs, sizeof *ws[i].job_mism);
        if ((cfg->keep && !ws[i].kept) || !ws[i].job_mism) { errf(err, errlen, "out of memory"); rc = -1; break; }
        int e = pthread_create(&ws[i].th, NULL, work, &ws[i]);
        if (e) { errf(err, errlen, "cannot start a thread: %s", strerror(e)); rc = -1; break; }
        started++;
    }
    if (rc) atomic_store(&sh.next, sh.hi - sh.lo); /* tell the started ones to stop */
    double last = t0;
    while (atomic_load(&sh.finished) < started) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        double t = now_s();
        if (cfg->progress && cfg->progress_interval > 0 && t - last >= cfg->progress_interval) {
            check_progress p = {atomic_load(&sh.done), sh.hi - sh.lo, atomic_load(&sh.mism), t - t0};
            cfg->progress(&p, cfg->progress_arg);
            last = t;
        }
    }
    size_t total_kept = 0;
    res->job_mismatches = calloc((size_t)pl->njobs, sizeof *res->job_mismatches);
    if (!res->job_mismatches) { errf(err, errlen, "out of memory"); rc = -1; }
    for (int i = 0; i < started; i++) {
        pthread_join(ws[i].th, NULL);
        if (res->job_mismatches)
            for (int k = 0; k < pl->njobs; k++) res->job_mismatches[k] += ws[i].job_mism[k];
        if (ws[i].failed) { errf(err, errlen, "MPFR could not be set up in a worker thread"); rc = -1; }
        total_kept += ws[i].nkept;
    }
    res->seconds = now_s() - t0;
    res->threads = started;
    res->first = sh.lo;
    res->last = sh.hi;
    res->cases = atomic_load(&sh.done);
    res->mismatches = atomic_load(&sh.mism);
    if (cfg->progress) {
        check_progress p = {res->cases, sh.hi - sh.lo, res->mismatches, res->seconds};
        cfg->progress(&p, cfg->progress_arg);
    }
    if (total_kept) {
        res->kept = malloc(total_kept * sizeof *res->kept);
        if (res->kept) {
            for (int i = 0; i < started; i++) {
                memcpy(res->kept + res->nkept, ws[i].kept, ws[i].nkept * sizeof *res->kept);
                res->nkept += ws[i].nkept;
            }
            qsort(res->kept, res->nkept, sizeof *res->kept, cmp_mismatch);
            if (res->nkept > cfg->keep) res->nkept = cfg->keep;
        }
    }
    for (int i = 0; i < nt; i++) free(ws[i].kept), free(ws[i].job_mism);
    free(ws);
    return rc;
}

void check_result_free(check_result *res) {
    free(res->kept);
    free(res->job_mismatches);
    res->job_mismatches = NULL;
    res->kept = NULL;
    res->nkept = 0;
}

/* ---- lines -------------------------------------------------------------- */

static int hex_digits(const fpemu_format *f) { return f->container / 4; }

int check_format_options(char *buf, size_t n, fpemu_round round, const check_config *cfg) {
    return snprintf(buf, n, "%s%s%s%s%s", fpemu_round_name(round), cfg->sat ? " sat" : "", cfg->ftz ? " ftz" : "",
                    cfg->daz ? " daz" : "", cfg->tininess_before ? " tininess=before" : "");
}

int check_format_line(char *buf, size_t n, const check_plan *pl, const check_config *cfg, const check_mismatch *m) {
    const check_job *j = &pl->jobs[m->job];
    char opts[160], ops[80] = "", draws[48] = "";
    int o = check_format_options(opts, sizeof opts, j->round, cfg);
    if (j->round == FPEMU_SR && o > 0 && (size_t)o < sizeof opts)
        snprintf(opts + o, sizeof opts - (size_t)o, " R=%d draw=%016llX", m->sr_bits, (unsigned long long)m->draw);
    if (m->dut_draws != m->ref_draws) snprintf(draws, sizeof draws, " draws emu %d ref %d", m->dut_draws, m->ref_draws);
    int ds = hex_digits(j->src), dd = hex_digits(j->fmt);
    size_t k = 0;
    for (int i = 0; i < j->arity; i++)
        k += (size_t)snprintf(ops + k, sizeof ops - k, "%s%0*llX", i ? " " : "", ds, (unsigned long long)m->ops[i]);
    return snprintf(buf, n, "%s %s: %s => emu %0*llX %02X ref %0*llX %02X%s", j->name, opts, ops, dd,
                    (unsigned long long)m->dut, m->dut_flags, dd, (unsigned long long)m->ref, m->ref_flags, draws);
}
