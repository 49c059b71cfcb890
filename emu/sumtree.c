/* SPDX-License-Identifier: MIT */
/* sumtree.c: summation trees above the tensor-core instruction (sumtree.h,
 * docs/cublas.md): the tree family and its evaluation (one output, or a
 * whole GEMM on top of fpemu_gemm_codes), tables of trees per shape, and the
 * probe that infers a tree from a black box by crafted questions and
 * simulation of every candidate tree of the family. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gemm.h"
#include "internal.h"
#include "sumtree.h"


static const fpemu_format *F(const char *name) { return fpemu_format_get(name, NULL, 0); }

/* ---- the description ------------------------------------------------------ */

void fpemu_sumtree_init(fpemu_sumtree *t) {
    memset(t, 0, sizeof *t);
    snprintf(t->leaf, sizeof t->leaf, "h100");
    t->chain = -1;
    t->split = 1;
    t->unit = 1;
    t->reduce = FPEMU_SUMTREE_SEQ;
    t->reduce_fmt = F("f32");
    t->alpha = t->beta = 1.0;
}

static int parse_int(const char *v, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) return -1;
    *out = (int)x;
    return 0;
}

static int parse_double(const char *v, double *out) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

/* One key=value of the tree; 1 if the key is not a tree key, 0 set, -1 bad value. */
static int tree_set(fpemu_sumtree *t, const char *key, const char *v, char *err, size_t errlen) {
    if (!strcmp(key, "leaf")) {
        if (!*v || strlen(v) >= sizeof t->leaf) { emu__errf(err, errlen, "leaf=%s: a preset name (at most 31 characters)", v); return -1; }
        snprintf(t->leaf, sizeof t->leaf, "%s", v);
    } else if (!strcmp(key, "block")) {
        if (parse_int(v, 0, 1 << 20, &t->block)) { emu__errf(err, errlen, "block=%s: an integer >= 0 (0: the preset's)", v); return -1; }
    } else if (!strcmp(key, "chain")) {
        if (!strcmp(v, "preset")) t->chain = -1;
        else if (!strcmp(v, "rounded")) t->chain = FPEMU_MMA_CHAIN_ROUNDED;
        else if (!strcmp(v, "f32-add")) t->chain = FPEMU_MMA_CHAIN_F32_ADD;
        else { emu__errf(err, errlen, "chain=%s: preset, rounded or f32-add", v); return -1; }
    } else if (!strcmp(key, "chunk")) {
        if (parse_int(v, 0, 1 << 24, &t->chunk)) { emu__errf(err, errlen, "chunk=%s: an integer >= 0", v); return -1; }
    } else if (!strcmp(key, "split")) {
        if (parse_int(v, 1, 1 << 16, &t->split)) { emu__errf(err, errlen, "split=%s: an integer in [1, 65536]", v); return -1; }
    } else if (!strcmp(key, "unit")) {
        if (parse_int(v, 1, 1 << 24, &t->unit)) { emu__errf(err, errlen, "unit=%s: an integer >= 1", v); return -1; }
    } else if (!strcmp(key, "layout")) {
        if (!strcmp(v, "contiguous")) t->interleaved = 0;
        else if (!strcmp(v, "interleaved")) t->interleaved = 1;
        else { emu__errf(err, errlen, "layout=%s: contiguous or interleaved", v); return -1; }
    } else if (!strcmp(key, "reduce")) {
        if (!strcmp(v, "seq")) t->reduce = FPEMU_SUMTREE_SEQ;
        else if (!strcmp(v, "pairwise")) t->reduce = FPEMU_SUMTREE_PAIRWISE;
        else { emu__errf(err, errlen, "reduce=%s: seq or pairwise", v); return -1; }
    } else if (!strcmp(key, "reduce_fmt")) {
        const fpemu_format *f = F(v);
        if (!f || (strcmp(f->name, "f32") && strcmp(f->name, "f16") && strcmp(f->name, "bf16") && strcmp(f->name, "f64"))) {
            emu__errf(err, errlen, "reduce_fmt=%s: f32, f16, bf16 or f64", v);
            return -1;
        }
        t->reduce_fmt = f;
    } else if (!strcmp(key, "partial_fmt")) {
        const fpemu_format *f = F(v);
        if (!f || (strcmp(f->name, "f32") && strcmp(f->name, "f16") && strcmp(f->name, "bf16"))) {
            emu__errf(err, errlen, "partial_fmt=%s: f32, f16 or bf16", v);
            return -1;
        }
        t->partial_fmt = strcmp(f->name, "f32") ? f : NULL;
    } else if (!strcmp(key, "c")) {
        if (!strcmp(v, "epilogue")) t->c_init = 0;
        else if (!strcmp(v, "init")) t->c_init = 1;
        else { emu__errf(err, errlen, "c=%s: epilogue or init", v); return -1; }
    } else if (!strcmp(key, "alpha")) {
        if (parse_double(v, &t->alpha)) { emu__errf(err, errlen, "alpha=%s: a finite number", v); return -1; }
    } else if (!strcmp(key, "beta")) {
        if (parse_double(v, &t->beta)) { emu__errf(err, errlen, "beta=%s: a finite number", v); return -1; }
    } else if (!strcmp(key, "kpad")) {
        if (parse_int(v, 0, 1 << 20, &t->kpad)) { emu__errf(err, errlen, "kpad=%s: an integer >= 0 (0: no padding)", v); return -1; }
    } else if (!strcmp(key, "kres")) {
        if (parse_int(v, 0, 1 << 20, &t->kres)) { emu__errf(err, errlen, "kres=%s: an integer >= 0 (0: no residue tile)", v); return -1; }
    } else if (!strcmp(key, "operands")) {
        /* the operands the kernel reads: the call's input formats (the
         * default, "input"), or f32 for a tf32 call that cuBLAS ran on an
         * f32 SIMT kernel (its f32 data not rounded to tf32) */
        if (!strcmp(v, "input")) t->operands = NULL;
        else if (!strcmp(v, "f32")) t->operands = F("f32");
        else { emu__errf(err, errlen, "operands=%s: input or f32", v); return -1; }
    } else if (!strcmp(key, "out")) {
        const fpemu_format *f = F(v);
        if (!f || f->bits > 32) { emu__errf(err, errlen, "out=%s: a format of at most 32 bits", v); return -1; }
        t->out = strcmp(f->name, "f32") ? f : NULL;
    } else
        return 1;
    return 0;
}

/* Split text into tokens and call fn(key, value) for each; -1 on a token
 * without '=' or too long. */
typedef int (*token_fn)(void *u, const char *key, const char *val, char *err, size_t errlen);
static int tokens(const char *text, token_fn fn, void *u, char *err, size_t errlen) {
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n') e++;
        char tok[128];
        size_t n = (size_t)(e - p);
        if (n >= sizeof tok) { emu__errf(err, errlen, "token '%.40s...' too long", p); return -1; }
        memcpy(tok, p, n);
        tok[n] = 0;
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) { emu__errf(err, errlen, "'%s': expected key=value", tok); return -1; }
        *eq = 0;
        if (fn(u, tok, eq + 1, err, errlen)) return -1;
        p = e;
    }
    return 0;
}

static int tree_token(void *u, const char *key, const char *val, char *err, size_t errlen) {
    int rc = tree_set(u, key, val, err, errlen);
    if (rc > 0) emu__errf(err, errlen, "unknown key '%s' (tree keys: leaf block chain chunk split unit layout reduce reduce_fmt partial_fmt c alpha beta out kpad kres operands)", key);
    return rc ? -1 : 0;
}

int fpemu_sumtree_parse(fpemu_sumtree *t, const char *text, char *err, size_t errlen) {
    fpemu_sumtree tmp = *t;
    if (tokens(text ? text : "", tree_token, &tmp, err, errlen)) return -1;
    *t = tmp;
    return 0;
}

int fpemu_sumtree_format(const fpemu_sumtree *t, char *buf, size_t len) {
    const char *chain = t->chain < 0 ? "preset" : t->chain == FPEMU_MMA_CHAIN_F32_ADD ? "f32-add" : "rounded";
    char pad[160] = "";
    /* kpad, kres, partial_fmt and operands are shown only when set */
    if (t->kpad > 1) snprintf(pad, sizeof pad, " kpad=%d", t->kpad);
    if (t->kres > 1) snprintf(pad + strlen(pad), sizeof pad - strlen(pad), " kres=%d", t->kres);
    if (t->partial_fmt) snprintf(pad + strlen(pad), sizeof pad - strlen(pad), " partial_fmt=%s", t->partial_fmt->name);
    if (t->operands) snprintf(pad + strlen(pad), sizeof pad - strlen(pad), " operands=%s", t->operands->name);
    return snprintf(buf, len,
                    "leaf=%s block=%d chain=%s chunk=%d split=%d unit=%d layout=%s reduce=%s reduce_fmt=%s c=%s "
                    "alpha=%.17g beta=%.17g out=%s%s",
                    t->leaf, t->block, chain, t->chunk, t->split, t->unit, t->interleaved ? "interleaved" : "contiguous",
                    t->reduce == FPEMU_SUMTREE_PAIRWISE ? "pairwise" : "seq", t->reduce_fmt ? t->reduce_fmt->name : "f32",
                    t->c_init ? "init" : "epilogue", t->alpha, t->beta, t->out ? t->out->name : "f32", pad);
}

int fpemu_sumtree_equal(const fpemu_sumtree *x, const fpemu_sumtree *y) {
    return !strcmp(x->leaf, y->leaf) && x->block == y->block && x->chain == y->chain && x->chunk == y->chunk &&
           x->split == y->split && x->unit == y->unit && x->interleaved == y->interleaved && x->reduce == y->reduce &&
           x->reduce_fmt == y->reduce_fmt && x->c_init == y->c_init && x->alpha == y->alpha && x->beta == y->beta &&
           x->out == y->out && (x->kpad > 1 ? x->kpad : 0) == (y->kpad > 1 ? y->kpad : 0) &&
           (x->kres > 1 ? x->kres : 0) == (y->kres > 1 ? y->kres : 0) && x->operands == y->operands &&
           x->partial_fmt == y->partial_fmt;
}

void fpemu_sumtree_no_reduced_precision(fpemu_sumtree *t) { t->partial_fmt = NULL; }

int fpemu_sumtree_partitions(const fpemu_sumtree *t, int K, int *part) {
    if (K <= 0) return 0;
    int S = t->split < 1 ? 1 : t->split, U = t->unit < 1 ? 1 : t->unit;
    long T = ((long)K + U - 1) / U;
    if (S == 1) {
        if (part) for (int i = 0; i < K; i++) part[i] = 0;
        return 1;
    }
    if (t->interleaved) {
        if (part) for (int i = 0; i < K; i++) part[i] = (int)((i / U) % S);
        return (int)(T < S ? T : S);
    }
    long per = (T + S - 1) / S;
    if (part) for (int i = 0; i < K; i++) part[i] = (int)((i / U) / per);
    return (int)((T + per - 1) / per);
}

/* ---- binding and evaluation ----------------------------------------------- */

int fpemu_sumtree_bind(fpemu_sumtree_bound *b, const fpemu_sumtree *t, const fpemu_format *fa, const fpemu_format *fb,
                       char *err, size_t errlen) {
    memset(b, 0, sizeof *b);
    b->t = *t;
    b->f32 = F("f32");
    if (t->operands) {
        /* an f32 kernel for a tf32 call: it reads the f32 data itself */
        if (!fa || !fb || strcmp(fa->name, "tf32") || strcmp(fb->name, "tf32")) {
            emu__errf(err, errlen, "tree: operands=%s is for tf32 calls (f32 data), not %s x %s", t->operands->name,
                      fa ? fa->name : "?", fb ? fb->name : "?");
            return -1;
        }
        fa = fb = t->operands;
    }
    b->fa = fa, b->fb = fb;
    if (!b->t.reduce_fmt) b->t.reduce_fmt = b->f32;
    if (t->split < 1 || t->unit < 1 || t->chunk < 0 || t->block < 0) {
        emu__errf(err, errlen, "tree: split and unit must be >= 1, chunk and block >= 0");
        return -1;
    }
    if (t->kpad > 1 && t->kres > 1) {
        emu__errf(err, errlen, "tree: kpad (zeros first) and kres (zeros after the residue) exclude each other");
        return -1;
    }
    if (t->c_init && t->beta != 1.0) {
        emu__errf(err, errlen, "tree: c=init adds C unscaled (beta must be 1)");
        return -1;
    }
    if (!strcmp(t->leaf, "add-seq")) {
        b->add_seq = 1;
        return 0;
    }
    char e2[400];
    if (fpemu_mma_model_preset(&b->leaf, t->leaf, fa, fb, NULL, NULL, e2, sizeof e2)) {
        emu__errf(err, errlen, "leaf %s: %s", t->leaf, e2);
        return -1;
    }
    if (b->leaf.kind == FPEMU_MMA_KIND_INT) { emu__errf(err, errlen, "leaf %s: integer models are not summation trees", t->leaf); return -1; }
    if (t->block > 0 && t->block != b->leaf.block) {
        char v[16];
        snprintf(v, sizeof v, "%d", t->block);
        if (fpemu_mma_model_set(&b->leaf, "block", v, e2, sizeof e2)) { emu__errf(err, errlen, "leaf %s: %s", t->leaf, e2); return -1; }
    }
    if (t->chain >= 0 && (int)b->leaf.chain != t->chain) {
        if (fpemu_mma_model_set(&b->leaf, "chain", t->chain == FPEMU_MMA_CHAIN_F32_ADD ? "f32-add" : "rounded", e2, sizeof e2)) {
            emu__errf(err, errlen, "leaf %s: %s", t->leaf, e2);
            return -1;
        }
    }
    return 0;
}

static void rne_ctx(fpemu_ctx *ctx) { fpemu_ctx_init(ctx); }

/* add-seq: every product rounded to f32 (rne), added in order to c. */
static uint64_t add_seq_dot(const fpemu_sumtree_bound *b, const uint64_t *a, const uint64_t *bv, int n, uint64_t c) {
    fpemu_ctx ctx;
    rne_ctx(&ctx);
    uint64_t acc = c;
    for (int i = 0; i < n; i++) {
        uint64_t x = fpemu_convert(b->f32, b->fa, a[i], &ctx), y = fpemu_convert(b->f32, b->fb, bv[i], &ctx);
        acc = fpemu_add(b->f32, acc, fpemu_mul(b->f32, x, y, &ctx), &ctx);
    }
    return acc;
}

static uint64_t chain_dot(const fpemu_sumtree_bound *b, const uint64_t *a, const uint64_t *bv, int n, uint64_t c) {
    if (b->add_seq) return add_seq_dot(b, a, bv, n, c);
    return fpemu_mma_dot(&b->leaf, a, bv, (size_t)n, c, NULL);
}

/* The f32 result of one partition's products (already gathered, in order). */
static uint64_t partition_value(const fpemu_sumtree_bound *b, const uint64_t *a, const uint64_t *bv, int n, uint64_t c0) {
    if (b->t.chunk <= 0) return chain_dot(b, a, bv, n, c0);
    fpemu_ctx ctx;
    rne_ctx(&ctx);
    uint64_t acc = 0; /* acc = 0 + p0, then acc + p1, ...: fmaf(p, 1, acc) of the GEMM's promotion */
    for (int s = 0; s == 0 || s < n; s += b->t.chunk) {
        int len = n - s < b->t.chunk ? n - s : b->t.chunk;
        acc = fpemu_add(b->f32, acc, chain_dot(b, a + s, bv + s, len, s == 0 ? c0 : 0), &ctx);
    }
    return acc;
}

/* A partition's f32 result as the reduction reads it: stored in
 * partial_fmt first when that is set (a split-K workspace in f16 or bf16),
 * then rounded to reduce_fmt. */
static uint64_t partial_in(const fpemu_sumtree_bound *b, uint64_t v, fpemu_ctx *ctx) {
    const fpemu_format *pf = b->t.partial_fmt;
    if (pf) v = fpemu_convert(b->f32, pf, fpemu_convert(pf, b->f32, v, ctx), ctx);
    return fpemu_convert(b->t.reduce_fmt, b->f32, v, ctx);
}

/* Reduce the partitions' f32 codes p[0..np-1] in the tree's order and format;
 * returns an f32 code. p is clobbered. */
static uint64_t reduce_parts(const fpemu_sumtree_bound *b, uint64_t *p, int np) {
    if (np == 1) return p[0];
    const fpemu_format *rf = b->t.reduce_fmt;
    fpemu_ctx ctx;
    rne_ctx(&ctx);
    for (int i = 0; i < np; i++) p[i] = partial_in(b, p[i], &ctx);
    if (b->t.reduce == FPEMU_SUMTREE_SEQ) {
        for (int i = 1; i < np; i++) p[0] = fpemu_add(rf, p[0], p[i], &ctx);
    } else {
        for (int n = np; n > 1;) {
            int m = 0;
            for (int i = 0; i + 1 < n; i += 2) p[m++] = fpemu_add(rf, p[i], p[i + 1], &ctx);
            if (n & 1) p[m++] = p[n - 1];
            n = m;
        }
    }
    return fpemu_convert(b->f32, rf, p[0], &ctx);
}

/* The epilogue: alpha, C, the output rounding. v and c are f32 codes. */
static uint64_t epilogue(const fpemu_sumtree_bound *b, uint64_t v, uint64_t c, int have_c) {
    fpemu_ctx ctx;
    rne_ctx(&ctx);
    const fpemu_format *f32 = b->f32;
    if (b->t.alpha != 1.0) v = fpemu_mul(f32, v, fpemu_from_double(f32, b->t.alpha, &ctx), &ctx);
    if (have_c && !b->t.c_init && b->t.beta != 0.0) {
        uint64_t bc = b->t.beta == 1.0 ? c : fpemu_mul(f32, c, fpemu_from_double(f32, b->t.beta, &ctx), &ctx);
        v = fpemu_add(f32, v, bc, &ctx);
    }
    if (b->t.out) v = fpemu_convert(b->t.out, f32, v, &ctx);
    return v;
}

/* kpad / kres: a partition of n products runs over padded(n) products, z =
 * padded(n) - n of them zeros, which start after the first *at products:
 * kpad, zeros first (at = 0); kres = T, the n mod T leftover products
 * first, then the zeros that fill their tile (at = n mod T). */
static int padded(const fpemu_sumtree_bound *b, int n, int *at) {
    int P = b->t.kpad > 1 ? b->t.kpad : b->t.kres > 1 ? b->t.kres : 0;
    *at = 0;
    if (P < 2 || n <= 0 || n % P == 0) return n;
    if (b->t.kres > 1) *at = n % P;
    return (int)(((long)n + P - 1) / P * P);
}

/* the pad a partition may need beyond K (the larger of kpad and kres) */
static size_t pad_cap(const fpemu_sumtree_bound *b) {
    int P = b->t.kpad > b->t.kres ? b->t.kpad : b->t.kres;
    return P > 1 ? (size_t)P : 0;
}

uint64_t fpemu_sumtree_dot(const fpemu_sumtree_bound *b, const uint64_t *a, const uint64_t *bv, int k, uint64_t c) {
    int np = fpemu_sumtree_partitions(&b->t, k, NULL);
    if (np < 1) np = 1;
    size_t cap = (size_t)k + pad_cap(b) + 1;
    uint64_t *ga = malloc(sizeof(uint64_t) * cap), *gb = malloc(sizeof(uint64_t) * cap);
    uint64_t *p = malloc(sizeof(uint64_t) * (size_t)np);
    int *part = malloc(sizeof(int) * ((size_t)k + 1));
    if (!ga || !gb || !p || !part) {
        free(ga), free(gb), free(p), free(part);
        fpemu_ctx ctx; /* out of memory: a NaN of the output format */
        fpemu_ctx_init(&ctx);
        return fpemu_from_double(b->t.out ? b->t.out : b->f32, NAN, &ctx);
    }
    fpemu_sumtree_partitions(&b->t, k, part);
    for (int q = 0; q < np; q++) {
        int n = 0;
        for (int i = 0; i < k; i++) n += part[i] == q;
        int at, z = padded(b, n, &at) - n; /* kpad, kres: z zero products (codes 0) after the first at */
        for (int i = 0, m = 0; i < k; i++)
            if (part[i] == q) ga[m] = a[i], gb[m] = bv[i], m++;
        memmove(ga + at + z, ga + at, sizeof(uint64_t) * (size_t)(n - at));
        memmove(gb + at + z, gb + at, sizeof(uint64_t) * (size_t)(n - at));
        for (int t = 0; t < z; t++) ga[at + t] = 0, gb[at + t] = 0;
        p[q] = partition_value(b, ga, gb, n + z, (q == 0 && b->t.c_init) ? c : 0);
    }
    uint64_t v = reduce_parts(b, p, np);
    free(ga), free(gb), free(p), free(part);
    return epilogue(b, v, c, 1);
}

int fpemu_sumtree_gemm_codes(const fpemu_sumtree_bound *b, int M, int N, int K, const uint64_t *A, const uint64_t *B,
                             const float *C, int nthreads, float *D, char *err, size_t errlen) {
    if (M < 0 || N < 0 || K < 0) { emu__errf(err, errlen, "sumtree gemm: negative size"); return -1; }
    size_t MN = (size_t)M * N;
    int np = K > 0 ? fpemu_sumtree_partitions(&b->t, K, NULL) : 1;
    int *part = malloc(sizeof(int) * ((size_t)K + 1));
    int *idx = malloc(sizeof(int) * ((size_t)K + pad_cap(b) + 1));
    /* a sequential reduction runs as the partitions come (R, and P for the
     * current one); a pairwise one keeps every partition's results */
    int stream = np > 1 && b->t.reduce == FPEMU_SUMTREE_SEQ;
    uint64_t *acc = malloc(sizeof(uint64_t) * (MN * (size_t)(stream ? 2 : np) + 1));
    size_t KP = (size_t)K + pad_cap(b);
    uint64_t *sa = malloc(sizeof(uint64_t) * ((size_t)M * KP + 1)), *sb = malloc(sizeof(uint64_t) * (KP * N + 1));
    float *tmp = malloc(sizeof(float) * (MN + 1));
    uint64_t *pp = malloc(sizeof(uint64_t) * (size_t)np);
    int rc = -1;
    fpemu_gemm_config cfg;
    if (!part || !idx || !acc || !sa || !sb || !tmp || !pp) { emu__errf(err, errlen, "sumtree gemm: out of memory"); goto out; }
    if (!b->add_seq) {
        if (fpemu_gemm_config_init(&cfg, "exact", b->fa->name, b->fb->name, err, errlen)) goto out;
        cfg.model = b->leaf;
        cfg.nthreads = nthreads;
    }
    if (K > 0) fpemu_sumtree_partitions(&b->t, K, part);
    fpemu_ctx ctx;
    rne_ctx(&ctx);
    for (int q = 0; q < np; q++) {
        int n = 0;
        for (int i = 0; i < K; i++)
            if (part[i] == q) n++;
        int at, z = padded(b, n, &at) - n; /* kpad, kres: z zero products (index -1) after the first at */
        for (int i = 0, m = 0; i < K; i++)
            if (part[i] == q) idx[m++] = i;
        memmove(idx + at + z, idx + at, sizeof(int) * (size_t)(n - at));
        for (int t = 0; t < z; t++) idx[at + t] = -1;
        n += z;
        int step = b->t.chunk > 0 ? b->t.chunk : (n > 0 ? n : 1);
        uint64_t *P = acc + MN * (size_t)(stream ? 1 : q);
        for (size_t e = 0; e < MN; e++) P[e] = 0;
        for (int s = 0; s < n || s == 0; s += step) {
            int len = n - s < step ? n - s : step;
            const float *c0 = (q == 0 && s == 0 && b->t.c_init) ? C : NULL;
            for (int i = 0; i < M; i++)
                for (int t = 0; t < len; t++) sa[(size_t)i * len + t] = idx[s + t] < 0 ? 0 : A[(size_t)i * K + idx[s + t]];
            for (int t = 0; t < len; t++)
                for (int j = 0; j < N; j++) sb[(size_t)t * N + j] = idx[s + t] < 0 ? 0 : B[(size_t)idx[s + t] * N + j];
            if (b->add_seq) {
                uint64_t *ra = malloc(sizeof(uint64_t) * ((size_t)len + 1)), *rb = malloc(sizeof(uint64_t) * ((size_t)len + 1));
                if (!ra || !rb) { free(ra), free(rb); emu__errf(err, errlen, "sumtree gemm: out of memory"); goto out; }
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++) {
                        for (int t = 0; t < len; t++) ra[t] = sa[(size_t)i * len + t], rb[t] = sb[(size_t)t * N + j];
                        uint64_t cc = 0;
                        if (c0) { float cf = c0[(size_t)i * N + j]; uint32_t u; memcpy(&u, &cf, 4); cc = u; }
                        uint32_t u = (uint32_t)add_seq_dot(b, ra, rb, len, cc);
                        memcpy(&tmp[(size_t)i * N + j], &u, 4);
                    }
                free(ra), free(rb);
            } else if (fpemu_gemm_codes(&cfg, M, N, len, sa, sb, c0, NULL, NULL, NULL, 0, tmp, NULL)) {
                emu__errf(err, errlen, "sumtree gemm: fpemu_gemm_codes failed (out of memory?)");
                goto out;
            }
            for (size_t e = 0; e < MN; e++) {
                uint32_t u;
                memcpy(&u, &tmp[e], 4);
                P[e] = b->t.chunk > 0 ? fpemu_add(b->f32, P[e], u, &ctx) : u;
            }
            if (n == 0) break;
        }
        if (stream) /* as reduce_parts: each partial rounded to reduce_fmt, added in order */
            for (size_t e = 0; e < MN; e++) {
                uint64_t x = partial_in(b, P[e], &ctx);
                acc[e] = q == 0 ? x : fpemu_add(b->t.reduce_fmt, acc[e], x, &ctx);
            }
    }
    for (size_t e = 0; e < MN; e++) {
        uint64_t v, cc = 0;
        if (stream) v = fpemu_convert(b->f32, b->t.reduce_fmt, acc[e], &ctx);
        else {
            for (int q = 0; q < np; q++) pp[q] = acc[MN * (size_t)q + e];
            v = reduce_parts(b, pp, np);
        }
        if (C) { uint32_t u; memcpy(&u, &C[e], 4); cc = u; }
        v = epilogue(b, v, cc, C != NULL);
        double x = b->t.out ? fpemu_to_double(b->t.out, v) : 0;
        if (b->t.out) D[e] = (float)x; /* exact: out has at most f32's precision and range */
        else { uint32_t u = (uint32_t)v; memcpy(&D[e], &u, 4); }
    }
    rc = 0;
out:
    free(part), free(idx), free(acc), free(sa), free(sb), free(tmp), free(pp);
    return rc;
}

/* ---- tables ---------------------------------------------------------------- */

/* one of FPEMU_SUMTREE_OPS */
static int valid_op(const char *op) {
    return !strcmp(op, "mm") || !strcmp(op, "mm-ta") || !strcmp(op, "linear");
}

typedef struct {
    fpemu_sumtree_row *row;
    int have_m, have_n, have_k, have_a;
} row_ctx;

static int row_token(void *u, const char *key, const char *v, char *err, size_t errlen) {
    row_ctx *rc = u;
    fpemu_sumtree_row *r = rc->row;
    if (!strcmp(key, "a") || !strcmp(key, "b") || !strcmp(key, "d")) {
        const fpemu_format *f = F(v);
        if (!f) { emu__errf(err, errlen, "%s=%s: unknown format", key, v); return -1; }
        char *dst = key[0] == 'a' ? r->a : key[0] == 'b' ? r->b : r->d;
        snprintf(dst, 16, "%.15s", f->name);
        if (key[0] == 'a') rc->have_a = 1;
        return 0;
    }
    if (!strcmp(key, "op")) {
        if (!valid_op(v)) { emu__errf(err, errlen, "op=%s: one of %s", v, FPEMU_SUMTREE_OPS); return -1; }
        snprintf(r->op, sizeof r->op, "%s", v);
        return 0;
    }
    if (!strcmp(key, "fast")) {
        if (parse_int(v, 0, 1, &r->fast)) { emu__errf(err, errlen, "fast=%s: 0 or 1", v); return -1; }
        return 0;
    }
    if (!strcmp(key, "m") || !strcmp(key, "n") || !strcmp(key, "k")) {
        int x;
        if (parse_int(v, 1, 1 << 24, &x)) { emu__errf(err, errlen, "%s=%s: an integer >= 1", key, v); return -1; }
        if (key[0] == 'm') r->M = x, rc->have_m = 1;
        else if (key[0] == 'n') r->N = x, rc->have_n = 1;
        else r->K = x, rc->have_k = 1;
        return 0;
    }
    if (!strcmp(key, "status")) {
        snprintf(r->status, sizeof r->status, "%s", v);
        return 0;
    }
    int t = tree_set(&r->tree, key, v, err, errlen);
    if (t > 0) emu__errf(err, errlen, "unknown key '%s'", key);
    return t ? -1 : 0;
}

int fpemu_sumtree_table_parse(fpemu_sumtree_table *tab, const char *text, const char *what, char *err, size_t errlen) {
    memset(tab, 0, sizeof *tab);
    int version = 0, line = 0, cap = 0;
    const char *p = text;
    char e2[300];
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        line++;
        char buf[1024];
        if (n >= sizeof buf) { emu__errf(err, errlen, "%s:%d: line too long", what, line); goto fail; }
        memcpy(buf, p, n);
        buf[n] = 0;
        p += n + (e ? 1 : 0);
        char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        size_t l = strlen(s);
        while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r')) s[--l] = 0;
        if (!*s || *s == '#') continue;
        /* header lines: "key = value" with spaces around '=' */
        char *eq = strstr(s, " = ");
        if (eq) {
            *eq = 0;
            const char *val = eq + 3;
            if (!strcmp(s, "fpemu_sumtree_table")) {
                if (strcmp(val, "1")) { emu__errf(err, errlen, "%s:%d: fpemu_sumtree_table = %s: this reader knows version 1", what, line, val); goto fail; }
                version = 1;
            } else if (!strcmp(s, "name")) snprintf(tab->name, sizeof tab->name, "%s", val);
            else if (!strcmp(s, "stands_for")) snprintf(tab->stands_for, sizeof tab->stands_for, "%s", val);
            else if (!strcmp(s, "source")) snprintf(tab->source, sizeof tab->source, "%s", val);
            else { emu__errf(err, errlen, "%s:%d: unknown header key '%s'", what, line, s); goto fail; }
            continue;
        }
        if (!version) { emu__errf(err, errlen, "%s:%d: a row before 'fpemu_sumtree_table = 1'", what, line); goto fail; }
        if (tab->nrows == cap) {
            cap = cap ? cap * 2 : 32;
            fpemu_sumtree_row *nr = realloc(tab->rows, sizeof *nr * (size_t)cap);
            if (!nr) { emu__errf(err, errlen, "%s: out of memory", what); goto fail; }
            tab->rows = nr;
        }
        fpemu_sumtree_row *r = &tab->rows[tab->nrows];
        memset(r, 0, sizeof *r);
        fpemu_sumtree_init(&r->tree);
        r->fast = -1;
        r->line = line;
        row_ctx rc = {r, 0, 0, 0, 0};
        if (tokens(s, row_token, &rc, e2, sizeof e2)) { emu__errf(err, errlen, "%s:%d: %s", what, line, e2); goto fail; }
        if (!rc.have_a || !rc.have_m || !rc.have_n || !rc.have_k) {
            emu__errf(err, errlen, "%s:%d: a row needs a=, m=, n= and k=", what, line);
            goto fail;
        }
        if (!r->b[0]) snprintf(r->b, sizeof r->b, "%s", r->a);
        if (!r->d[0]) snprintf(r->d, sizeof r->d, "f32");
        if (!r->op[0]) snprintf(r->op, sizeof r->op, "mm");
        if (!r->status[0]) snprintf(r->status, sizeof r->status, "unchecked");
        fpemu_sumtree_bound bd;
        if (fpemu_sumtree_bind(&bd, &r->tree, F(r->a), F(r->b), e2, sizeof e2)) { emu__errf(err, errlen, "%s:%d: %s", what, line, e2); goto fail; }
        for (int i = 0; i < tab->nrows; i++) {
            fpemu_sumtree_row *o = &tab->rows[i];
            if (!strcmp(o->op, r->op) && !strcmp(o->a, r->a) && !strcmp(o->b, r->b) && !strcmp(o->d, r->d) && o->fast == r->fast &&
                o->M == r->M && o->N == r->N && o->K == r->K) {
                emu__errf(err, errlen, "%s:%d: the same call, formats and shape as line %d", what, line, o->line);
                goto fail;
            }
        }
        tab->nrows++;
    }
    if (!version) { emu__errf(err, errlen, "%s: not a tree table (no 'fpemu_sumtree_table = 1' line)", what); goto fail; }
    return 0;
fail:
    fpemu_sumtree_table_free(tab);
    return -1;
}

int fpemu_sumtree_table_read(fpemu_sumtree_table *tab, const char *path, char *err, size_t errlen) {
    memset(tab, 0, sizeof *tab);
    FILE *f = fopen(path, "rb");
    if (!f) { emu__errf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) { fclose(f); emu__errf(err, errlen, "%s: out of memory", path); return -1; }
    n = fread(buf, 1, cap + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(buf); emu__errf(err, errlen, "%s: read error", path); return -1; }
    if (n > cap) { free(buf); emu__errf(err, errlen, "%s: larger than 1 MiB: not a tree table", path); return -1; }
    buf[n] = 0;
    if (memchr(buf, 0, n)) { free(buf); emu__errf(err, errlen, "%s: holds a NUL byte: not a tree table", path); return -1; }
    int rc = fpemu_sumtree_table_parse(tab, buf, path, err, errlen);
    free(buf);
    return rc;
}

void fpemu_sumtree_table_free(fpemu_sumtree_table *tab) {
    free(tab->rows);
    tab->rows = NULL;
    tab->nrows = 0;
}

const fpemu_sumtree_row *fpemu_sumtree_table_find(const fpemu_sumtree_table *tab, const char *a, const char *b,
                                                  const char *d, int fast, int M, int N, int K) {
    return fpemu_sumtree_table_find_op(tab, "mm", a, b, d, fast, M, N, K);
}

const fpemu_sumtree_row *fpemu_sumtree_table_find_op(const fpemu_sumtree_table *tab, const char *op, const char *a,
                                                     const char *b, const char *d, int fast, int M, int N, int K) {
    const fpemu_format *fa = F(a), *fb = F(b ? b : a), *fd = F(d ? d : "f32");
    if (!fa || !fb || !fd) return NULL;
    if (!op) op = "mm";
    for (int i = 0; i < tab->nrows; i++) {
        const fpemu_sumtree_row *r = &tab->rows[i];
        if (strcmp(r->op, op) || strcmp(r->a, fa->name) || strcmp(r->b, fb->name) || strcmp(r->d, fd->name)) continue;
        if (r->fast >= 0 && fast >= 0 && r->fast != fast) continue;
        if (r->fast >= 0 && fast < 0 && r->fast != 0) continue;
        if (r->M == M && r->N == N && r->K == K) return r;
    }
    return NULL;
}

/* The text of emu/cublas-h200.txt, compiled in by the Makefile
 * ($(BUILD)/gen/cublas_table.c). */
extern const char emu__cublas_table_text[];

const char *fpemu_sumtree_table_builtin_text(void) { return emu__cublas_table_text; }

int fpemu_sumtree_table_builtin(fpemu_sumtree_table *tab, char *err, size_t errlen) {
    return fpemu_sumtree_table_parse(tab, emu__cublas_table_text, "cublas-h200.txt (built in)", err, errlen);
}

static int is_fp8(const fpemu_format *f) { return f->bits == 8; }

int fpemu_sumtree_resolve(const fpemu_sumtree_table *tab, const char *model, const fpemu_format *fa,
                          const fpemu_format *fb, const fpemu_format *out, int fast_accum, int M, int N, int K,
                          fpemu_sumtree *tree, const fpemu_sumtree_row **row, char *err, size_t errlen) {
    return fpemu_sumtree_resolve_op(tab, "mm", model, fa, fb, out, fast_accum, M, N, K, tree, row, err, errlen);
}

int fpemu_sumtree_resolve_op(const fpemu_sumtree_table *tab, const char *op, const char *model, const fpemu_format *fa,
                             const fpemu_format *fb, const fpemu_format *out, int fast_accum, int M, int N, int K,
                             fpemu_sumtree *tree, const fpemu_sumtree_row **row, char *err, size_t errlen) {
    *row = NULL;
    if (!tab || !model || !fa || !fb || !tree) return emu__errf(err, errlen, "no table, model or format given");
    if (!op) op = "mm";
    if (!valid_op(op)) return emu__errf(err, errlen, "call op '%s': expected one of %s", op, FPEMU_SUMTREE_OPS);
    int fp8 = is_fp8(fa) && is_fp8(fb);
    if (fast_accum && !fp8)
        return emu__errf(err, errlen, "fast accumulation is for fp8 inputs (torch._scaled_mm), not %s x %s", fa->name, fb->name);
    const char *dname = out ? out->name : "f32";
    const fpemu_sumtree_row *r = fpemu_sumtree_table_find_op(tab, op, fa->name, fb->name, dname, fp8 ? fast_accum : -1, M, N, K);
    if (r) {
        *tree = r->tree;
        /* a row fitted to another device's tensor cores is not this model's call */
        const fpemu_mma_preset_info *pi = fpemu_mma_preset_find(tree->leaf);
        if (strcmp(tree->leaf, model) && pi && !pi->reference)
            return emu__errf(err, errlen, "the table %s models %s (line %d); the model is %s", tab->name, tree->leaf, r->line, model);
    } else {
        /* the plain model: one chain over K (SIMT fma for f32 inputs; fp8
         * without fast accumulation promotes every 128, as _scaled_mm did
         * at every recorded K) */
        fpemu_sumtree_init(tree);
        int f32in = !strcmp(fa->name, "f32") && !strcmp(fb->name, "f32");
        snprintf(tree->leaf, sizeof tree->leaf, "%s", f32in ? "fma-seq" : model);
        tree->chunk = fp8 && !fast_accum ? 128 : 0;
    }
    tree->out = out && strcmp(out->name, "f32") ? out : NULL;
    *row = r;
    return 0;
}

/* ---- evidence --------------------------------------------------------------- */

void fpemu_sumtree_evidence_init(fpemu_sumtree_evidence *e, const fpemu_format *fa, const fpemu_format *fb,
                                 const fpemu_format *fd, int k) {
    memset(e, 0, sizeof *e);
    e->fa = fa, e->fb = fb, e->fd = fd ? fd : F("f32"), e->k = k;
}

static fpemu_sumtree_query *evidence_slot(fpemu_sumtree_evidence *e) {
    if (e->n == e->cap) {
        int cap = e->cap ? e->cap * 2 : 256;
        fpemu_sumtree_query *nq = realloc(e->q, sizeof *nq * (size_t)cap);
        if (!nq) return NULL;
        e->q = nq, e->cap = cap;
    }
    fpemu_sumtree_query *q = &e->q[e->n];
    memset(q, 0, sizeof *q);
    q->i = q->j = -1;
    return q;
}

int fpemu_sumtree_evidence_add(fpemu_sumtree_evidence *e, const uint64_t *a, const uint64_t *b, uint64_t c, uint64_t d,
                               int kind) {
    fpemu_sumtree_query *q = evidence_slot(e);
    if (!q) return -1;
    q->a = malloc(sizeof(uint64_t) * ((size_t)e->k + 1));
    q->b = malloc(sizeof(uint64_t) * ((size_t)e->k + 1));
    if (!q->a || !q->b) { free(q->a), free(q->b); return -1; }
    memcpy(q->a, a, sizeof(uint64_t) * (size_t)e->k);
    memcpy(q->b, b, sizeof(uint64_t) * (size_t)e->k);
    q->c = c, q->d = d, q->kind = kind == FPEMU_SUMTREE_Q_PAIR ? FPEMU_SUMTREE_Q_RANDOM : kind;
    e->n++;
    return 0;
}

int fpemu_sumtree_evidence_add_pair(fpemu_sumtree_evidence *e, int i, int j, uint64_t a_small, uint64_t a_big,
                                    uint64_t b_small, uint64_t b_big, uint64_t b_neg, uint64_t c, uint64_t d) {
    if (i < 0 || i >= e->k || j < 0 || j >= e->k || i == j) return -1;
    fpemu_sumtree_query *q = evidence_slot(e);
    if (!q) return -1;
    q->kind = FPEMU_SUMTREE_Q_PAIR, q->i = i, q->j = j, q->c = c, q->d = d;
    q->a_small = a_small, q->a_big = a_big, q->b_small = b_small, q->b_big = b_big, q->b_neg = b_neg;
    e->n++;
    return 0;
}

void fpemu_sumtree_evidence_free(fpemu_sumtree_evidence *e) {
    for (int i = 0; i < e->n; i++) free(e->q[i].a), free(e->q[i].b);
    free(e->q);
    e->q = NULL;
    e->n = e->cap = 0;
}

void fpemu_sumtree_query_vectors(const fpemu_sumtree_evidence *e, const fpemu_sumtree_query *q, uint64_t *a, uint64_t *b) {
    if (q->a) {
        memcpy(a, q->a, sizeof(uint64_t) * (size_t)e->k);
        memcpy(b, q->b, sizeof(uint64_t) * (size_t)e->k);
        return;
    }
    fpemu_sumtree_pair_vectors(e->k, q->i, q->j, q->a_small, q->a_big, q->b_small, q->b_big, q->b_neg, a, b);
}

void fpemu_sumtree_pair_vectors(int k, int i, int j, uint64_t a_small, uint64_t a_big, uint64_t b_small, uint64_t b_big,
                                uint64_t b_neg, uint64_t *a, uint64_t *b) {
    for (int t = 0; t < k; t++) a[t] = a_small, b[t] = b_small;
    if (i >= 0 && i < k) a[i] = a_big, b[i] = b_big;
    if (j >= 0 && j < k) a[j] = a_big, b[j] = b_neg;
}

const char *fpemu_sumtree_status_name(fpemu_sumtree_status s) {
    switch (s) {
    case FPEMU_SUMTREE_RESOLVED: return "resolved";
    case FPEMU_SUMTREE_AMBIGUOUS: return "ambiguous";
    case FPEMU_SUMTREE_UNRESOLVED: return "unresolved";
    case FPEMU_SUMTREE_NONDETERMINISTIC: return "nondeterministic";
    case FPEMU_SUMTREE_PER_OUTPUT: return "per-output";
    }
    return "?";
}

void fpemu_sumtree_probe_opts_init(fpemu_sumtree_probe_opts *o) {
    memset(o, 0, sizeof *o);
    o->outputs = 1;
    o->nanchors = -1; /* default anchors */
    o->nrandom = 8;
    o->nvalidate = 64;
    o->seed = 1;
}

/* Same answer? NaNs of any payload are one answer. */
static int same_answer(const fpemu_format *f, uint64_t x, uint64_t y) {
    if (fpemu_is_nan(f, x) || fpemu_is_nan(f, y)) return fpemu_is_nan(f, x) && fpemu_is_nan(f, y);
    return x == y;
}

int fpemu_sumtree_read_pairs(const fpemu_sumtree_evidence *e, int i, double alpha, int *lost, char *text, size_t len) {
    int K = e->k, nread = 0;
    for (int j = 0; j < K; j++) lost[j] = -2; /* not asked */
    double small = 0;
    for (int n = 0; n < e->n; n++) {
        const fpemu_sumtree_query *q = &e->q[n];
        if (q->kind != FPEMU_SUMTREE_Q_PAIR || q->i != i || q->j < 0 || q->j >= K) continue;
        if (small == 0) small = fpemu_to_double(e->fa, q->a_small) * fpemu_to_double(e->fb, q->b_small);
        double v = fpemu_to_double(e->fd, q->d);
        double cnt = small != 0 && alpha != 0 ? v / (small * alpha) : NAN;
        if (isfinite(cnt) && cnt == floor(cnt) && cnt >= 0 && cnt <= K) lost[q->j] = K - (int)cnt;
        else lost[q->j] = -1;
        nread++;
    }
    if (text && len) {
        /* runs of equal lost values over consecutive j (j != i), merged into
         * progressions of equal-length runs with a constant step */
        size_t o = 0;
        text[0] = 0;
        o += (size_t)snprintf(text + o, len - o, "i=%d:", i);
        int j = 0, printed = 0;
        while (j < K && o < len) {
            if (j == i || lost[j] == -2) { j++; continue; }
            int s = j, v = lost[j];
            while (j < K && (j == i || lost[j] == v || lost[j] == -2)) j++;
            int rl = j - s; /* first run [s, j) */
            int n = 1, step = 0, e2 = j;
            if (j < K && v >= 0 && lost[j] >= 0) {
                step = lost[j] - v;
                int t = j;
                for (;;) {
                    int s2 = t, v2 = lost[t];
                    while (t < K && (t == i || lost[t] == v2 || lost[t] == -2)) t++;
                    if (t - s2 != rl || v2 != v + n * step) break;
                    n++, e2 = t;
                    if (t >= K || lost[t] < 0) break;
                }
            }
            if (printed++ < 12) {
                if (v < 0) o += (size_t)snprintf(text + o, len - o, " j=%d..%d: no whole count;", s, e2 - 1);
                else if (n == 1) o += (size_t)snprintf(text + o, len - o, " j=%d..%d: %d lost;", s, e2 - 1, v);
                else o += (size_t)snprintf(text + o, len - o, " j=%d..%d: %d runs of %d, lost %d to %d;", s, e2 - 1, n, rl, v, v + (n - 1) * step);
            }
            j = e2;
        }
        if (printed > 12 && o < len) snprintf(text + o, len - o, " ... (%d segments)", printed);
    }
    return nread;
}

/* ---- the fit --------------------------------------------------------------- */

typedef struct {
    fpemu_sumtree *c;
    int n, cap;
} cand_list;

static int cand_add(cand_list *L, const fpemu_sumtree *t) {
    for (int i = 0; i < L->n; i++)
        if (fpemu_sumtree_equal(&L->c[i], t)) return 0;
    if (L->n == L->cap) {
        int cap = L->cap ? L->cap * 2 : 256;
        fpemu_sumtree *nc = realloc(L->c, sizeof *nc * (size_t)cap);
        if (!nc) return -1;
        L->c = nc, L->cap = cap;
    }
    L->c[L->n++] = *t;
    return 0;
}

/* Structures that sum alike: chunks of C in f32 in order are partitions of
 * C reduced in order in f32; a pairwise reduction of at most 3 partitions
 * is the sequential one; one partition needs no reduction. Is y the same
 * structure as x? (px, py: K ints of scratch) */
static void effective(fpemu_sumtree *t, int K) {
    if (t->chunk > 0 && t->split == 1 && t->reduce_fmt == F("f32") && !t->partial_fmt) {
        t->split = (K + t->chunk - 1) / t->chunk, t->unit = t->chunk, t->interleaved = 0, t->chunk = 0;
        t->reduce = FPEMU_SUMTREE_SEQ;
    }
}
static int same_structure(const fpemu_sumtree *x0, const fpemu_sumtree *y0, int K, int *px, int *py) {
    fpemu_sumtree x = *x0, y = *y0;
    effective(&x, K), effective(&y, K);
    if (x.chunk != y.chunk) return 0;
    int nx = fpemu_sumtree_partitions(&x, K, px), ny = fpemu_sumtree_partitions(&y, K, py);
    if (nx != ny) return 0;
    for (int i = 0; i < K; i++) if (px[i] != py[i]) return 0;
    if (nx == 1) return 1;
    if (x.reduce_fmt != y.reduce_fmt || x.partial_fmt != y.partial_fmt) return 0;
    return nx <= 3 || x.reduce == y.reduce;
}
static void struct_add(cand_list *S, const fpemu_sumtree *t, int K, int *px, int *py) {
    for (int i = 0; i < S->n; i++)
        if (same_structure(&S->c[i], t, K, px, py)) return;
    cand_add(S, t);
}

/* Every leaf to try: the presets that bind these formats (opts->leaves if
 * given), and add-seq. */
static int leaf_names(const fpemu_sumtree_evidence *e, const fpemu_sumtree_probe_opts *o, char names[][32], int max) {
    int n = 0;
    if (o && o->leaves) {
        const char *p = o->leaves;
        while (*p && n < max) {
            while (*p == ' ') p++;
            size_t l = strcspn(p, " ");
            if (!l) break;
            snprintf(names[n], 32, "%.*s", (int)(l < 31 ? l : 31), p);
            n++;
            p += l;
        }
        return n;
    }
    for (int i = 0; i < fpemu_mma_preset_count() && n < max; i++) {
        const fpemu_mma_preset_info *info = fpemu_mma_preset_get(i);
        fpemu_mma_model m;
        if (fpemu_mma_model_preset(&m, info->name, e->fa, e->fb, NULL, NULL, NULL, 0)) continue;
        if (m.kind == FPEMU_MMA_KIND_INT) continue;
        snprintf(names[n++], 32, "%s", info->name);
    }
    if (n < max) snprintf(names[n++], 32, "add-seq");
    return n;
}

/* Hints from anchor i's reading: the first group (block) and the first
 * position where the growth of the lost count is not one block at a time. */
static void hints(const fpemu_sumtree_evidence *e, int i, double alpha, int *block, int *boundary, char *text, size_t len) {
    int K = e->k;
    int *lost = malloc(sizeof(int) * ((size_t)K + 1));
    *block = 0, *boundary = 0;
    if (!lost) return;
    fpemu_sumtree_read_pairs(e, i, alpha, lost, text, len);
    int l1 = 0;
    for (int j = i + 1; j < K; j++)
        if (lost[j] >= 2 && (!l1 || lost[j] < l1)) l1 = lost[j];
    *block = l1;
    int prev = -3;
    for (int j = i + 1; j < K; j++) {
        if (lost[j] == -2) continue;
        if (prev == -3) { prev = lost[j]; continue; }
        if (lost[j] == -1 && prev >= 0) { *boundary = j; break; }
        if (lost[j] >= 0 && prev >= 0) {
            int d = lost[j] - prev;
            if (d < 0 || d > (l1 > 1 ? l1 : 1)) { *boundary = j; break; }
        }
        prev = lost[j];
    }
    free(lost);
}

static void gen_candidates(const fpemu_sumtree_evidence *e, const fpemu_sumtree *base, const fpemu_sumtree_probe_opts *o,
                           int bhint, int boundary, cand_list *L) {
    int K = e->k;
    char leaves[40][32];
    int nl = leaf_names(e, o, leaves, 40);
    static const char *const rfmts[] = {"f32", "f16", "bf16", "f64"};
    static const int units[] = {64, 128, 32, 16, 256};   /* unit preference when several cut K alike */
    int *px = malloc(sizeof(int) * ((size_t)K + 1)), *py = malloc(sizeof(int) * ((size_t)K + 1));
    if (!px || !py) { free(px), free(py); return; }
    /* the structures over K (leaf left at the base's), simplest first */
    cand_list S = {0};
    fpemu_sumtree t = *base;
    t.split = 1, t.unit = 1, t.chunk = 0, t.interleaved = 0, t.reduce = FPEMU_SUMTREE_SEQ, t.reduce_fmt = F("f32");
    cand_add(&S, &t);
    if (boundary > 0 && boundary < K) {
        int b = boundary;
        /* contiguous splits whose first partition ends at b */
        for (int rf = 0; rf < 4; rf++)
            for (int ord = 0; ord < 2; ord++) {
                int nu = (int)(sizeof units / sizeof units[0]);
                for (int u = 0; u <= nu + 1; u++) {
                    int U = u < nu ? units[u] : u == nu ? (bhint > 0 ? bhint : 1) : b;
                    if (U < 1 || b % U) continue;
                    long T = ((long)K + U - 1) / U, per = b / U;
                    long Sn = (T + per - 1) / per;
                    if (Sn < 2 || Sn > 4096) continue;
                    if (ord == 1 && Sn < 3) continue; /* pairwise of 2 is seq */
                    fpemu_sumtree s = t;
                    s.split = (int)Sn, s.unit = U, s.reduce = ord ? FPEMU_SUMTREE_PAIRWISE : FPEMU_SUMTREE_SEQ;
                    s.reduce_fmt = F(rfmts[rf]);
                    struct_add(&S, &s, K, px, py);
                }
            }
        /* promotion in chunks of b */
        fpemu_sumtree c = t;
        c.chunk = b;
        struct_add(&S, &c, K, px, py);
        /* interleaved tiles of b */
        for (int rf = 0; rf < 4; rf++)
            for (int ord = 0; ord < 2; ord++)
                for (int Sn = 2; Sn <= 16; Sn++) {
                    if ((long)Sn * b > 2L * K + b) break;
                    if (ord == 1 && Sn < 3) continue;
                    fpemu_sumtree s = t;
                    s.split = Sn, s.unit = b, s.interleaved = 1;
                    s.reduce = ord ? FPEMU_SUMTREE_PAIRWISE : FPEMU_SUMTREE_SEQ;
                    s.reduce_fmt = F(rfmts[rf]);
                    struct_add(&S, &s, K, px, py);
                }
    }
    /* leaves x structures; c placement */
    int any_c = 0; /* C placement matters only if some question has a C */
    for (int n = 0; n < e->n; n++) any_c |= e->q[n].c != 0;
    for (int c_init = 0; c_init < 2; c_init++) {
        if (c_init && (base->beta != 1.0 || !any_c)) break;
        for (int st = 0; st < S.n; st++)
            for (int l = 0; l < nl; l++) {
                fpemu_mma_model m;
                int add_seq = !strcmp(leaves[l], "add-seq");
                if (!add_seq && fpemu_mma_model_preset(&m, leaves[l], e->fa, e->fb, NULL, NULL, NULL, 0)) continue;
                int blocks[2] = {0, 0}, nb = 1, chains = 1;
                if (!add_seq && m.kind == FPEMU_MMA_KIND_BLOCK) {
                    if (bhint >= 2 && bhint != m.block && bhint <= 256) blocks[nb++] = bhint;
                    chains = 2;
                }
                for (int bi = 0; bi < nb; bi++)
                    for (int ch = 0; ch < chains; ch++) {
                        fpemu_sumtree x = S.c[st];
                        snprintf(x.leaf, sizeof x.leaf, "%.31s", leaves[l]);
                        x.block = blocks[bi];
                        x.chain = ch == 0 ? -1 : (m.chain == FPEMU_MMA_CHAIN_ROUNDED ? FPEMU_MMA_CHAIN_F32_ADD : FPEMU_MMA_CHAIN_ROUNDED);
                        x.c_init = c_init;
                        cand_add(L, &x);
                    }
            }
    }
    free(S.c);
    free(px), free(py);
}

/* Random inputs for a question: values ~ +-(1 + u) 2^(e), e in [-w, w],
 * rounded to the formats; a few zeros. */
static void random_vector(const fpemu_format *fa, const fpemu_format *fb, int k, uint64_t seed, uint64_t stream, int w,
                          uint64_t *a, uint64_t *b) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.sat = 1;
    for (int t = 0; t < k; t++) {
        for (int s = 0; s < 2; s++) {
            uint64_t r = fpemu_random64(seed, stream * 4000037u + (uint64_t)t * 2 + (uint64_t)s);
            double mant = 1.0 + (double)(r >> 40) / (double)(1ull << 24);
            int ex = (int)((r >> 8) % (uint64_t)(2 * w + 1)) - w;
            double v = ldexp(mant, ex) * ((r & 1) ? -1 : 1);
            if ((r >> 4 & 15) == 0) v = 0;
            if (s == 0) a[t] = fpemu_from_double(fa, v, &ctx);
            else b[t] = fpemu_from_double(fb, v, &ctx);
        }
    }
}

/* Does bound candidate x give every answer of the evidence? Visits the
 * evidence in `order`. */
static int explains(const fpemu_sumtree_bound *x, const fpemu_sumtree_evidence *e, const int *order, int n, uint64_t *sa,
                    uint64_t *sb) {
    for (int t = 0; t < n; t++) {
        const fpemu_sumtree_query *q = &e->q[order[t]];
        const uint64_t *a = q->a, *b = q->b;
        if (!a) fpemu_sumtree_query_vectors(e, q, sa, sb), a = sa, b = sb;
        uint64_t d = fpemu_sumtree_dot(x, a, b, e->k, q->c);
        if (!same_answer(e->fd, d, q->d)) return 0;
    }
    return 1;
}

/* tree t as the evidence's call runs it: its answers rounded to the call's
 * output format (none for f32) */
static fpemu_sumtree as_called(const fpemu_sumtree *t, const fpemu_sumtree_evidence *e) {
    fpemu_sumtree u = *t;
    u.out = strcmp(e->fd->name, "f32") ? e->fd : NULL;
    return u;
}

static int bind_for(fpemu_sumtree_bound *b, const fpemu_sumtree *t, const fpemu_sumtree_evidence *e) {
    fpemu_sumtree u = as_called(t, e);
    return fpemu_sumtree_bind(b, &u, e->fa, e->fb, NULL, 0);
}

/* The fit proper. box may be NULL (offline). */
static int fit(fpemu_sumtree_evidence *e, const fpemu_sumtree *base, const fpemu_sumtree_probe_opts *o, fpemu_sumtree_box box,
               void *user, fpemu_sumtree_probe_result *out, char *err, size_t errlen) {
    int K = e->k;
    fpemu_sumtree_probe_opts dflt;
    if (!o) { fpemu_sumtree_probe_opts_init(&dflt); o = &dflt; }
    /* the reading: the smallest anchor with pair answers */
    int anchor = -1;
    for (int n = 0; n < e->n; n++)
        if (e->q[n].kind == FPEMU_SUMTREE_Q_PAIR && (anchor < 0 || e->q[n].i < anchor)) anchor = e->q[n].i;
    int bh = 0, bd = 0;
    if (anchor >= 0) hints(e, anchor, base->alpha, &bh, &bd, out->reading, sizeof out->reading);
    out->block_hint = bh, out->boundary = bd;
    cand_list L = {0};
    gen_candidates(e, base, o, bh, bd, &L);
    out->candidates = L.n;
    /* evidence order: random and epilogue questions first, then pairs with a stride */
    int *order = malloc(sizeof(int) * ((size_t)e->n + 1));
    int *alive = malloc(sizeof(int) * ((size_t)L.n + 1));
    if (!order || !alive) { free(order), free(alive), free(L.c); emu__errf(err, errlen, "sumtree fit: out of memory"); return -1; }
    int no = 0;
    for (int n = 0; n < e->n; n++)
        if (e->q[n].kind != FPEMU_SUMTREE_Q_PAIR) order[no++] = n;
    int np = e->n - no, *pairs = order + no;
    if (np > 0) {
        /* the pairs in a strided order, so that a wrong tree meets a
         * question it gets wrong early */
        int *pidx = malloc(sizeof(int) * (size_t)np), m = 0;
        if (!pidx) { free(order), free(alive), free(L.c); emu__errf(err, errlen, "sumtree fit: out of memory"); return -1; }
        for (int n = 0; n < e->n; n++)
            if (e->q[n].kind == FPEMU_SUMTREE_Q_PAIR) pidx[m++] = n;
        int stride = 97;
        for (;;) { /* coprime with np: every pair is visited once */
            int x = stride, y = np;
            while (y) { int r = x % y; x = y; y = r; }
            if (x == 1) break;
            stride++;
        }
        for (int t = 0, at = 0; t < np; t++, at = (at + stride) % np) pairs[t] = pidx[at];
        free(pidx);
    }
    /* phase 1: every candidate against the core of the evidence (the
     * non-pair questions and up to 64 pairs, strided) */
    int ncore = no + (np < 64 ? np : 64), nalive = 0;
    uint64_t *sa = malloc(sizeof(uint64_t) * ((size_t)K + 1)), *sb = malloc(sizeof(uint64_t) * ((size_t)K + 1));
    if (!sa || !sb) { free(order), free(alive), free(L.c), free(sa), free(sb); emu__errf(err, errlen, "sumtree fit: out of memory"); return -1; }
    for (int c = 0; c < L.n; c++) {
        fpemu_sumtree_bound b;
        if (bind_for(&b, &L.c[c], e)) continue;
        if (explains(&b, e, order, ncore, sa, sb)) alive[nalive++] = c;
    }
    out->survived[0] = nalive;
    /* phase 2: tell the survivors apart on random vectors; ask the box
     * when there is one */
    uint64_t *va = malloc(sizeof(uint64_t) * ((size_t)K + 1)), *vb = malloc(sizeof(uint64_t) * ((size_t)K + 1));
    uint64_t *ans = malloc(sizeof(uint64_t) * ((size_t)L.n + 1));
    if (!va || !vb || !ans) { emu__errf(err, errlen, "sumtree fit: out of memory"); goto fail; }
    int differ_seen = 0;
    for (int v = 0; v < o->nvalidate && nalive > 1; v++) {
        random_vector(e->fa, e->fb, K, o->seed ^ 0x5EEDu, 1000 + (uint64_t)v, v % 2 ? 12 : 3, va, vb);
        int differ = 0;
        for (int t = 0; t < nalive; t++) {
            fpemu_sumtree_bound b;
            bind_for(&b, &L.c[alive[t]], e);
            ans[t] = fpemu_sumtree_dot(&b, va, vb, K, 0);
            if (t && !same_answer(e->fd, ans[t], ans[0])) differ = 1;
        }
        if (!differ) continue;
        if (!box) { differ_seen = 1; break; } /* offline: ambiguous; phase 3 lists who explains every answer */
        uint64_t d;
        out->queries++;
        if (box(user, 0, va, vb, K, 0, &d)) { emu__errf(err, errlen, "the box refused a validation question"); goto fail; }
        if (fpemu_sumtree_evidence_add(e, va, vb, 0, d, FPEMU_SUMTREE_Q_RANDOM)) { emu__errf(err, errlen, "out of memory"); goto fail; }
        int m = 0;
        for (int t = 0; t < nalive; t++)
            if (same_answer(e->fd, ans[t], d)) alive[m++] = alive[t];
        nalive = m;
    }
    out->survived[1] = nalive;
    /* phase 3: the survivors against every answer, in order. Online the
     * first that gives every answer is the tree, and the others (which
     * agree with it on every validation vector) stay listed unchecked;
     * offline each is checked (at most 64 kept) */
    {
        int m = 0, passed = 0;
        for (int t = 0; t < nalive; t++) {
            if (box && passed) { alive[m++] = alive[t]; continue; }
            fpemu_sumtree_bound b;
            bind_for(&b, &L.c[alive[t]], e);
            if (explains(&b, e, order + ncore, no + np - ncore, sa, sb)) {
                alive[m++] = alive[t];
                if (++passed >= 64) break;
            }
        }
        if (!passed) m = 0;
        nalive = m;
    }
    out->survived[2] = nalive;
    out->nalt = 0;
    for (int t = 0; t < nalive && out->nalt < FPEMU_SUMTREE_MAXALT; t++) out->alt[out->nalt++] = as_called(&L.c[alive[t]], e);
    if (nalive == 0) {
        out->status = FPEMU_SUMTREE_UNRESOLVED;
        snprintf(out->note, sizeof out->note,
                 "no tree of the family (%ld tried: every leaf preset for these formats, splits and chunks from the reading) gives every answer",
                 out->candidates);
    } else if (box ? 0 : differ_seen) {
        out->status = FPEMU_SUMTREE_AMBIGUOUS;
        snprintf(out->note, sizeof out->note,
                 "%d trees give every recorded answer but differ on random inputs: more questions are needed", nalive);
        out->tree = L.c[alive[0]];
    } else {
        out->status = FPEMU_SUMTREE_RESOLVED;
        out->tree = L.c[alive[0]];
        if (nalive > 1)
            snprintf(out->note, sizeof out->note, "%d trees give every answer and agree on %d random vectors: the first is written",
                     nalive, o->nvalidate);
    }
    free(order), free(alive), free(L.c), free(va), free(vb), free(ans), free(sa), free(sb);
    return 0;
fail:
    free(order), free(alive), free(L.c), free(va), free(vb), free(ans), free(sa), free(sb);
    return -1;
}

int fpemu_sumtree_fit(const fpemu_sumtree_evidence *e, const fpemu_sumtree *base, const fpemu_sumtree_probe_opts *opts,
                      fpemu_sumtree_probe_result *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    fpemu_sumtree b;
    if (base) b = *base;
    else fpemu_sumtree_init(&b);
    if (!e || e->k < 1 || !e->fa || !e->fb) { emu__errf(err, errlen, "sumtree fit: empty evidence"); return -1; }
    return fit((fpemu_sumtree_evidence *)e, &b, opts, NULL, NULL, out, err, errlen);
}

/* ---- the probe -------------------------------------------------------------- */

/* A power of two 2^x as a code of f (normal), or -1. */
static int pow2_code(const fpemu_format *f, int x, uint64_t *code) {
    if (x < f->emin || x > f->emax) return -1;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    *code = fpemu_from_double(f, ldexp(1.0, x), &ctx);
    return fpemu_to_double(f, *code) == ldexp(1.0, x) ? 0 : -1;
}

typedef struct {
    fpemu_sumtree_box box;
    void *user;
    long queries;
} asker;

static int ask(asker *A, long out, const uint64_t *a, const uint64_t *b, int k, uint64_t c, uint64_t *d) {
    A->queries++;
    return A->box(A->user, out, a, b, k, c, d);
}

int fpemu_sumtree_probe(fpemu_sumtree_box box, void *user, const fpemu_format *fa, const fpemu_format *fb,
                        const fpemu_format *fd, int k, const fpemu_sumtree_probe_opts *opts,
                        fpemu_sumtree_probe_result *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    fpemu_sumtree_probe_opts o;
    if (opts) o = *opts;
    else fpemu_sumtree_probe_opts_init(&o);
    if (!box || !fa || !fb || k < 2) { emu__errf(err, errlen, "sumtree probe: a box, formats and K >= 2 are required"); return -1; }
    const fpemu_format *f32 = F("f32");
    if (!fd) fd = f32;
    asker A = {box, user, 0};
    fpemu_sumtree_evidence e;
    fpemu_sumtree_evidence_init(&e, fa, fb, fd, k);
    uint64_t *a = malloc(sizeof(uint64_t) * (size_t)k), *b = malloc(sizeof(uint64_t) * (size_t)k);
    int rc = -1;
    uint64_t d, d2;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    if (!a || !b) { emu__errf(err, errlen, "sumtree probe: out of memory"); goto done; }
#define ASK(o_, c_, dst)                                                                                  \
    do {                                                                                                  \
        if (ask(&A, (o_), a, b, k, (c_), (dst))) { emu__errf(err, errlen, "the box refused a question"); goto done; } \
    } while (0)
    /* 1. determinism and the outputs: one random question three times on
     * output 0, and on output 1 and the last */
    random_vector(fa, fb, k, o.seed, 1, 3, a, b);
    ASK(0, 0, &d);
    for (int r = 0; r < 2; r++) {
        ASK(0, 0, &d2);
        if (!same_answer(fd, d, d2)) {
            out->status = FPEMU_SUMTREE_NONDETERMINISTIC;
            snprintf(out->note, sizeof out->note, "the same question on output 0 gave %#llx, then %#llx: the order is not fixed",
                     (unsigned long long)d, (unsigned long long)d2);
            rc = 0;
            goto done;
        }
    }
    if (fpemu_sumtree_evidence_add(&e, a, b, 0, d, FPEMU_SUMTREE_Q_RANDOM)) goto oom;
    for (int w = 0; w < 2 && o.outputs > 1; w++) {
        long ot = w == 0 ? 1 : o.outputs - 1;
        ASK(ot, 0, &d2);
        if (!same_answer(fd, d, d2)) {
            out->status = FPEMU_SUMTREE_PER_OUTPUT;
            snprintf(out->note, sizeof out->note, "the same question gave %#llx on output 0 and %#llx on output %ld: the outputs do not share one tree",
                     (unsigned long long)d, (unsigned long long)d2, ot);
            rc = 0;
            goto done;
        }
    }
    /* 2. the epilogue: alpha (one product 1), beta (no products, c = 1) */
    uint64_t one_a, one_b, one32;
    if (pow2_code(fa, 0, &one_a) || pow2_code(fb, 0, &one_b) || pow2_code(f32, 0, &one32)) {
        emu__errf(err, errlen, "sumtree probe: the formats cannot hold 1");
        goto done;
    }
    for (int t = 0; t < k; t++) a[t] = 0, b[t] = 0;
    a[0] = one_a, b[0] = one_b;
    ASK(0, 0, &d);
    if (fpemu_sumtree_evidence_add(&e, a, b, 0, d, FPEMU_SUMTREE_Q_EPILOGUE)) goto oom;
    fpemu_sumtree base;
    fpemu_sumtree_init(&base);
    base.alpha = fpemu_to_double(fd, d);
    if (!isfinite(base.alpha)) base.alpha = 1;
    a[0] = 0, b[0] = 0;
    ASK(0, one32, &d);
    if (fpemu_sumtree_evidence_add(&e, a, b, one32, d, FPEMU_SUMTREE_Q_EPILOGUE)) goto oom;
    base.beta = fpemu_to_double(fd, d);
    if (!isfinite(base.beta)) base.beta = 1;
    /* 3. pair questions: big products +-2^pb at i and j, small 2^ps
     * elsewhere; a varies so that the products span as much as the formats
     * allow, up to what swamps every sum of small terms in f32 */
    int lg = 0;
    while ((1L << lg) < k) lg++;
    int pmax = fa->emax + fb->emax, pmin = fa->emin + fb->emin;
    if (pmax > 60) pmax = 60;
    int pb = pmax, ps = pb - (27 + lg);
    if (ps < pmin) ps = pmin;
    if (ps < -100) ps = -100;
    /* the count must fit the output: K * 2^ps representable with room */
    int ea_b = pb / 2, eb_b = pb - ea_b;
    while (ea_b > fa->emax) ea_b--, eb_b++;
    while (eb_b > fb->emax) eb_b--, ea_b++;
    int ea_s = ps / 2, eb_s = ps - ea_s;
    while (ea_s < fa->emin) ea_s++, eb_s--;
    while (eb_s < fb->emin) eb_s++, ea_s--;
    uint64_t abig, bbig, bneg, asml, bsml;
    if (pow2_code(fa, ea_b, &abig) || pow2_code(fb, eb_b, &bbig) || pow2_code(fa, ea_s, &asml) || pow2_code(fb, eb_s, &bsml)) {
        emu__errf(err, errlen, "sumtree probe: no pair magnitudes fit these formats");
        goto done;
    }
    bneg = bbig | fb->sign_bit << fb->pad;
    int anchors[8], na = 0;
    if (o.nanchors >= 0) {
        for (int t = 0; t < o.nanchors && t < 8; t++)
            if (o.anchors[t] >= 0 && o.anchors[t] < k) anchors[na++] = o.anchors[t];
    } else {
        int dflt[4] = {0, 1, k / 2, k - 1};
        for (int t = 0; t < 4; t++) {
            int dup = 0;
            for (int u = 0; u < na; u++) dup |= anchors[u] == dflt[t];
            if (!dup) anchors[na++] = dflt[t];
        }
    }
    int pstep = o.pair_step > 0 ? o.pair_step : (k <= 1024 ? 1 : k / 512);
    for (int x = 0; x < na; x++) {
        int i = anchors[x];
        for (int j = 0; j < k; j++) {
            if (j == i) continue;
            if (x > 0 && j % pstep && (j < i - 16 || j > i + 16) && j != k - 1) continue;
            fpemu_sumtree_pair_vectors(k, i, j, asml, abig, bsml, bbig, bneg, a, b);
            ASK(0, 0, &d);
            if (fpemu_sumtree_evidence_add_pair(&e, i, j, asml, abig, bsml, bbig, bneg, 0, d)) goto oom;
        }
    }
    /* 4. c against the first and the last product (where C enters) */
    {
        uint64_t cbig = fpemu_from_double(f32, ldexp(1.0, pb), &ctx);
        for (int w = 0; w < 2 && base.beta == 1.0; w++) {
            int j = w ? k - 1 : 0;
            for (int t = 0; t < k; t++) a[t] = asml, b[t] = bsml;
            a[j] = abig, b[j] = bneg;
            ASK(0, cbig, &d);
            if (fpemu_sumtree_evidence_add(&e, a, b, cbig, d, FPEMU_SUMTREE_Q_EPILOGUE)) goto oom;
        }
    }
    /* 5. random questions, narrow (w 3) and wide (w 12) exponent spreads */
    for (int r = 0; r < o.nrandom; r++) {
        random_vector(fa, fb, k, o.seed, 10 + (uint64_t)r, r % 2 ? 12 : 3, a, b);
        ASK(0, 0, &d);
        if (fpemu_sumtree_evidence_add(&e, a, b, 0, d, FPEMU_SUMTREE_Q_RANDOM)) goto oom;
    }
    /* 6. the fit; validation questions are asked as needed */
    {
        long before = A.queries;
        rc = fit(&e, &base, &o, box, user, out, err, errlen);
        out->queries += before;
    }
    goto done;
oom:
    emu__errf(err, errlen, "sumtree probe: out of memory");
    rc = -1;
done:
#undef ASK
    if (out->queries < A.queries) out->queries = A.queries;
    fpemu_sumtree_evidence_free(&e);
    free(a), free(b);
    return rc;
}
