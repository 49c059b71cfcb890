/* SPDX-License-Identifier: MIT */
/* t_sumtree.c: summation trees (emu/sumtree.h). The probe, run against fake
 * black boxes built from emu with known trees, recovers each tree (sequential
 * fma and add, pairwise, split-K 2/4/8 contiguous and interleaved, reduced
 * in f32, f16 and f64, tensor-core blocks of 16 and 32 with an f32 sum
 * across blocks, promotion, the epilogue's alpha, beta, C and output
 * rounding), and says it cannot resolve the boxes whose order is not a
 * fixed tree: nondeterministic, a different order per output, an order
 * that depends on the data, and a fixed order outside the family. Also:
 * the GEMM evaluation equals the per-output evaluation bit for bit, the
 * text form round-trips, tables load and refuse bad rows, the built-in
 * table and a call's resolution, and the offline fit on pair answers alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sumtree.h"
#include "tap.h"

static const fpemu_format *F(const char *n) {
    const fpemu_format *f = fpemu_format_get(n, NULL, 0);
    if (!f) bail("format %s missing", n);
    return f;
}

enum { BOX_TREE, BOX_NONDET, BOX_PEROUT, BOX_SORTED, BOX_REVERSED };

typedef struct {
    int kind;
    fpemu_sumtree_bound b;
    const fpemu_format *fa, *fb, *fd;
    unsigned long calls;
} fake;

/* a permutation of 0..k-1 from a seed */
static void perm(int *p, int k, uint64_t seed) {
    for (int i = 0; i < k; i++) p[i] = i;
    for (int i = k - 1; i > 0; i--) {
        int j = (int)(fpemu_random64(seed, (uint64_t)i) % (uint64_t)(i + 1));
        int t = p[i]; p[i] = p[j]; p[j] = t;
    }
}

static double prod(const fake *f, const uint64_t *a, const uint64_t *b, int t) {
    return fpemu_to_double(f->fa, a[t]) * fpemu_to_double(f->fb, b[t]);
}

/* f32 fma chain over the products in the order p (the products of these
 * formats are exact in double; fmaf of f32 values would need f32 inputs) */
static uint64_t seq_in_order(const fake *f, const uint64_t *a, const uint64_t *b, const int *p, int k, uint64_t c) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    const fpemu_format *f32 = F("f32");
    uint64_t acc = c;
    for (int t = 0; t < k; t++) {
        double x = prod(f, a, b, p[t]) + fpemu_to_double(f32, acc); /* exact: both fit in double here */
        acc = fpemu_from_double(f32, x, &ctx);
    }
    return f->fd == f32 ? acc : fpemu_convert(f->fd, f32, acc, &ctx);
}

static int box(void *user, long out, const uint64_t *a, const uint64_t *b, int k, uint64_t c, uint64_t *d) {
    fake *f = user;
    f->calls++;
    int *p = malloc(sizeof(int) * (size_t)k);
    if (!p) return -1;
    switch (f->kind) {
    case BOX_TREE: free(p); *d = fpemu_sumtree_dot(&f->b, a, b, k, c); return 0;
    case BOX_NONDET: perm(p, k, 7777 + f->calls); break;
    case BOX_PEROUT: perm(p, k, 4242 + (uint64_t)out); break;
    case BOX_REVERSED: for (int i = 0; i < k; i++) p[i] = k - 1 - i; break;
    case BOX_SORTED: {
        /* ascending magnitude: a data-dependent order (insertion sort, stable) */
        for (int i = 0; i < k; i++) {
            int j = i;
            double v = fabs(prod(f, a, b, i));
            while (j > 0 && fabs(prod(f, a, b, p[j - 1])) > v) { p[j] = p[j - 1]; j--; }
            p[j] = i;
        }
        break;
    }
    }
    *d = seq_in_order(f, a, b, p, k, c);
    free(p);
    return 0;
}

static void mkfake(fake *f, int kind, const char *tree, const char *fa, const char *fd) {
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->fa = F(fa), f->fb = F(fa), f->fd = F(fd ? fd : "f32");
    fpemu_sumtree t;
    char err[300];
    fpemu_sumtree_init(&t);
    if (fpemu_sumtree_parse(&t, tree, err, sizeof err)) bail("tree '%s': %s", tree, err);
    if (fd && strcmp(fd, "f32")) t.out = F(fd);
    if (fpemu_sumtree_bind(&f->b, &t, f->fa, f->fb, err, sizeof err)) bail("bind '%s': %s", tree, err);
}

/* Does the probe's tree give the box's answers on fresh questions (random
 * vectors of three spreads, pair vectors, with and without C)? */
static int agrees(fake *f, const fpemu_sumtree *t, int k, char *why, size_t len) {
    fpemu_sumtree_bound b;
    fpemu_sumtree u = *t;
    char err[300];
    u.out = strcmp(f->fd->name, "f32") ? f->fd : NULL;
    if (fpemu_sumtree_bind(&b, &u, f->fa, f->fb, err, sizeof err)) { snprintf(why, len, "bind: %.200s", err); return 0; }
    uint64_t *a = malloc(sizeof(uint64_t) * (size_t)k), *v = malloc(sizeof(uint64_t) * (size_t)k);
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    int good = 1;
    for (int r = 0; r < 120 && good; r++) {
        int w = r % 3 == 0 ? 2 : r % 3 == 1 ? 6 : 14;
        for (int t2 = 0; t2 < k; t2++) {
            uint64_t x = fpemu_random64(99, (uint64_t)r * 100003 + (uint64_t)t2);
            double va = ldexp(1.0 + (double)(x >> 44) / 1048576.0, (int)((x >> 8) % (uint64_t)(2 * w + 1)) - w) * ((x & 1) ? -1 : 1);
            double vb = ldexp(1.0 + (double)(x >> 24 & 0xFFFFF) / 1048576.0, (int)((x >> 16) % 5) - 2) * ((x & 2) ? -1 : 1);
            a[t2] = fpemu_from_double(f->fa, va, &ctx);
            v[t2] = fpemu_from_double(f->fb, vb, &ctx);
        }
        uint64_t c = r % 4 == 3 ? fpemu_from_double(F("f32"), 0.375 * r, &ctx) : 0;
        uint64_t want, got = fpemu_sumtree_dot(&b, a, v, k, c);
        box(f, 0, a, v, k, c, &want);
        int nan = fpemu_is_nan(f->fd, want) && fpemu_is_nan(f->fd, got);
        if (want != got && !nan) {
            snprintf(why, len, "random vector %d: box %#llx, tree %#llx", r, (unsigned long long)want, (unsigned long long)got);
            good = 0;
        }
    }
    free(a), free(v);
    return good;
}

static void show(const fpemu_sumtree_probe_result *r) {
    char buf[400];
    fpemu_sumtree_format(&r->tree, buf, sizeof buf);
    diag("status=%s candidates=%ld queries=%ld block_hint=%d boundary=%d", fpemu_sumtree_status_name(r->status), r->candidates,
         r->queries, r->block_hint, r->boundary);
    diag("tree: %s", buf);
    diag("reading: %.300s", r->reading);
    if (r->note[0]) diag("note: %s", r->note);
    for (int i = 0; i < r->nalt && i < 4; i++) {
        fpemu_sumtree_format(&r->alt[i], buf, sizeof buf);
        diag("alt %d: %s", i, buf);
    }
}

/* Probe a fake box with a known tree: resolved, the tree agrees with the box
 * on fresh questions, and the fields `want` names (key=value) are as given. */
static void resolves(const char *label, const char *tree, const char *fa, const char *fd, int k, const char *want) {
    fake f;
    mkfake(&f, BOX_TREE, tree, fa, fd);
    fpemu_sumtree_probe_opts o;
    fpemu_sumtree_probe_opts_init(&o);
    o.outputs = 64;
    fpemu_sumtree_probe_result r;
    char err[300], why[300] = "";
    clock_t t0 = clock();
    int rc = fpemu_sumtree_probe(box, &f, f.fa, f.fb, f.fd, k, &o, &r, err, sizeof err);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (rc) { ok(0, "%s: probe runs (%s)", label, err); return; }
    int good = r.status == FPEMU_SUMTREE_RESOLVED;
    if (!ok(good, "%s: resolved", label)) show(&r);
    if (!good) return;
    if (!ok(agrees(&f, &r.tree, k, why, sizeof why), "%s: the probe's tree gives the box's answers on fresh questions", label)) {
        diag("%s", why);
        show(&r);
    }
    /* the named fields */
    fpemu_sumtree w = r.tree;
    if (want && *want) {
        if (fpemu_sumtree_parse(&w, want, err, sizeof err)) bail("want '%s': %s", want, err);
        char g1[400], g2[400];
        fpemu_sumtree_format(&r.tree, g1, sizeof g1);
        fpemu_sumtree_format(&w, g2, sizeof g2);
        /* compare partitions rather than (split, unit) spelling */
        int *p1 = malloc(sizeof(int) * (size_t)k), *p2 = malloc(sizeof(int) * (size_t)k);
        fpemu_sumtree ct = r.tree, cw = w; /* chunks of C in f32, in order = partitions of C reduced so */
        if (ct.chunk > 0 && ct.split == 1) ct.split = (k + ct.chunk - 1) / ct.chunk, ct.unit = ct.chunk;
        if (cw.chunk > 0 && cw.split == 1) cw.split = (k + cw.chunk - 1) / cw.chunk, cw.unit = cw.chunk;
        int n1 = fpemu_sumtree_partitions(&ct, k, p1), n2 = fpemu_sumtree_partitions(&cw, k, p2), same = n1 == n2;
        for (int i = 0; i < k && same; i++) same = p1[i] == p2[i];
        free(p1), free(p2);
        fpemu_sumtree x = r.tree, y = w;
        x.split = y.split = 1, x.unit = y.unit = 1, x.interleaved = y.interleaved = 0, x.chunk = y.chunk = 0;
        if (!strstr(want, "leaf=")) snprintf(x.leaf, sizeof x.leaf, "%s", y.leaf), x.block = y.block, x.chain = y.chain;
        int eq = same && fpemu_sumtree_equal(&x, &y);
        if (!ok(eq, "%s: %s", label, want)) {
            diag("got  %s", g1);
            diag("want %s", g2);
        }
    }
    diag("%s: %ld candidates (%d, %d, %d left), %ld questions, %.2f s", label, r.candidates, r.survived[0], r.survived[1],
         r.survived[2], r.queries, secs);
}

static void refuses(const char *label, int kind, int k, fpemu_sumtree_status want) {
    fake f;
    mkfake(&f, kind, "leaf=fma-seq", "f16", NULL);
    fpemu_sumtree_probe_opts o;
    fpemu_sumtree_probe_opts_init(&o);
    o.outputs = 64;
    fpemu_sumtree_probe_result r;
    char err[300];
    int rc = fpemu_sumtree_probe(box, &f, f.fa, f.fb, f.fd, k, &o, &r, err, sizeof err);
    if (!ok(rc == 0 && r.status == want, "%s: %s (%s)", label, fpemu_sumtree_status_name(want), rc ? err : r.note)) show(&r);
}

/* fpemu_sumtree_gemm_codes equals fpemu_sumtree_dot on every output */
static void gemm_equals_dot(const char *tree, const char *fa, const char *fd, int M, int N, int K, int withc) {
    fake f;
    mkfake(&f, BOX_TREE, tree, fa, fd);
    uint64_t *A = malloc(sizeof(uint64_t) * (size_t)M * K), *B = malloc(sizeof(uint64_t) * (size_t)K * N);
    uint64_t *ra = malloc(sizeof(uint64_t) * (size_t)K), *rb = malloc(sizeof(uint64_t) * (size_t)K);
    float *C = malloc(sizeof(float) * (size_t)M * N), *D = malloc(sizeof(float) * (size_t)M * N);
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    for (int i = 0; i < M * K; i++) {
        uint64_t x = fpemu_random64(5, (uint64_t)i);
        A[i] = fpemu_from_double(f.fa, ldexp((double)(x >> 40) / 16777216.0, (int)(x % 9) - 4) * ((x >> 9 & 1) ? -1 : 1), &ctx);
    }
    for (int i = 0; i < K * N; i++) {
        uint64_t x = fpemu_random64(6, (uint64_t)i);
        B[i] = fpemu_from_double(f.fb, ldexp((double)(x >> 40) / 16777216.0, (int)(x % 9) - 4) * ((x >> 9 & 1) ? -1 : 1), &ctx);
    }
    for (int i = 0; i < M * N; i++) C[i] = (float)(0.25 * (i % 7) - 0.5);
    char err[300];
    int rc = fpemu_sumtree_gemm_codes(&f.b, M, N, K, A, B, withc ? C : NULL, 2, D, err, sizeof err);
    int bad = 0;
    for (int i = 0; i < M && !rc; i++)
        for (int j = 0; j < N; j++) {
            for (int t = 0; t < K; t++) ra[t] = A[(size_t)i * K + t], rb[t] = B[(size_t)t * N + j];
            uint32_t cu;
            memcpy(&cu, &C[i * N + j], 4);
            uint64_t d = fpemu_sumtree_dot(&f.b, ra, rb, K, withc ? cu : 0);
            double want = strcmp(f.fd->name, "f32") ? fpemu_to_double(f.fd, d) : fpemu_to_double(F("f32"), d);
            if (!(D[i * N + j] == (float)want || (isnan(D[i * N + j]) && isnan(want)))) {
                if (bad++ < 3) diag("(%d, %d): gemm %a, dot %a", i, j, (double)D[i * N + j], want);
            }
        }
    ok(rc == 0 && bad == 0, "gemm = dot on every output: %s, %s -> %s, %dx%dx%d%s (%s)", tree, fa, fd ? fd : "f32", M, N, K,
       withc ? ", with C" : "", rc ? err : "ok");
    free(A), free(B), free(ra), free(rb), free(C), free(D);
}

static void text_and_tables(void) {
    fpemu_sumtree t, u;
    char buf[512], err[300];
    fpemu_sumtree_init(&t);
    ok(fpemu_sumtree_parse(&t, "leaf=h100 block=32 chain=f32-add chunk=128 split=4 unit=64 layout=interleaved reduce=pairwise "
                               "reduce_fmt=f16 c=init alpha=2 beta=1 out=bf16", err, sizeof err) == 0, "parse every key (%s)", err);
    fpemu_sumtree_format(&t, buf, sizeof buf);
    fpemu_sumtree_init(&u);
    ok(fpemu_sumtree_parse(&u, buf, err, sizeof err) == 0 && fpemu_sumtree_equal(&t, &u), "format -> parse round-trips: %s", buf);
    u = t;
    ok(fpemu_sumtree_parse(&u, "split=0", err, sizeof err) == -1 && fpemu_sumtree_equal(&t, &u), "split=0 refused, tree unchanged: %s", err);
    ok(fpemu_sumtree_parse(&u, "colour=red", err, sizeof err) == -1 && strstr(err, "colour"), "unknown key named: %s", err);
    ok(fpemu_sumtree_parse(&u, "reduce_fmt=e4m3", err, sizeof err) == -1, "reduce_fmt e4m3 refused: %s", err);
    ok(fpemu_sumtree_parse(&u, "split", err, sizeof err) == -1, "a token without '=' refused: %s", err);
    /* kpad: shown only when set; round-trips; refused when negative */
    ok(!strstr(buf, "kpad"), "no kpad in the text form when it is not set: %s", buf);
    u = t;
    ok(fpemu_sumtree_parse(&u, "kpad=16", err, sizeof err) == 0 && u.kpad == 16 && !fpemu_sumtree_equal(&t, &u), "kpad=16 parses");
    fpemu_sumtree_format(&u, buf, sizeof buf);
    fpemu_sumtree_init(&t);
    ok(fpemu_sumtree_parse(&t, buf, err, sizeof err) == 0 && fpemu_sumtree_equal(&t, &u) && strstr(buf, " kpad=16"),
       "kpad round-trips: %s", buf);
    ok(fpemu_sumtree_parse(&u, "kpad=-1", err, sizeof err) == -1 && strstr(err, "kpad=-1"), "kpad=-1 refused: %s", err);
    /* partitions: 4096 in tiles of 64, 3 ways: 1408, 1408, 1280 */
    fpemu_sumtree_init(&t);
    fpemu_sumtree_parse(&t, "split=3 unit=64", err, sizeof err);
    int part[4096], n = fpemu_sumtree_partitions(&t, 4096, part), c0 = 0, c2 = 0;
    for (int i = 0; i < 4096; i++) c0 += part[i] == 0, c2 += part[i] == 2;
    ok(n == 3 && c0 == 1408 && c2 == 1280 && part[1407] == 0 && part[1408] == 1, "split=3 unit=64 of K=4096: 1408, 1408, 1280");
    fpemu_sumtree_parse(&t, "split=4 unit=32 layout=interleaved", err, sizeof err);
    n = fpemu_sumtree_partitions(&t, 512, part);
    ok(n == 4 && part[0] == 0 && part[32] == 1 && part[128] == 0 && part[511] == 3, "interleaved tiles of 32, 4 ways");
    /* tables */
    const char *good = "# a table\nfpemu_sumtree_table = 1\nname = test\nstands_for = nothing in particular\n"
                       "a=f16 d=f32 m=64 n=64 k=4096 status=gemm leaf=h100 split=3 unit=64\n"
                       "a=e4m3 b=e4m3 d=f32 fast=0 m=64 n=64 k=512 status=gemm leaf=h100 chunk=128\n"
                       "a=e4m3 b=e4m3 d=f32 fast=1 m=64 n=64 k=512 status=gemm leaf=h100\n";
    fpemu_sumtree_table tab;
    int rc = fpemu_sumtree_table_parse(&tab, good, "good.txt", err, sizeof err);
    ok(rc == 0 && tab.nrows == 3 && !strcmp(tab.name, "test"), "a table loads (%s)", rc ? err : "3 rows");
    if (!rc) {
        const fpemu_sumtree_row *r = fpemu_sumtree_table_find(&tab, "f16", "f16", "f32", -1, 64, 64, 4096);
        ok(r && r->tree.split == 3 && !strcmp(r->status, "gemm"), "find f16 64x64x4096");
        ok(fpemu_sumtree_table_find(&tab, "f16", "f16", "f32", -1, 64, 64, 4095) == NULL, "a shape not in the table: NULL (the caller falls back)");
        ok(fpemu_sumtree_table_find(&tab, "f16", "f16", "f16", -1, 64, 64, 4096) == NULL, "another output format: NULL");
        r = fpemu_sumtree_table_find(&tab, "e4m3", "e4m3", "f32", 0, 64, 64, 512);
        const fpemu_sumtree_row *r1 = fpemu_sumtree_table_find(&tab, "e4m3", "e4m3", "f32", 1, 64, 64, 512);
        ok(r && r1 && r->tree.chunk == 128 && r1->tree.chunk == 0, "fast=0 and fast=1 rows are told apart");
        fpemu_sumtree_table_free(&tab);
    }
    /* the call (op): the same formats and shape, one row per call */
    const char *ops = "fpemu_sumtree_table = 1\n"
                      "a=f32 m=32 n=64 k=64 leaf=fma-seq split=2 unit=32\n"
                      "op=linear a=f32 m=32 n=64 k=64 leaf=fma-seq split=4 unit=16\n"
                      "op=mm-ta a=f32 m=32 n=64 k=64 leaf=fma-seq\n";
    rc = fpemu_sumtree_table_parse(&tab, ops, "ops.txt", err, sizeof err);
    ok(rc == 0 && tab.nrows == 3, "rows of three calls at one shape load (%s)", rc ? err : "3 rows");
    if (!rc) {
        const fpemu_sumtree_row *rm = fpemu_sumtree_table_find(&tab, "f32", "f32", "f32", -1, 32, 64, 64);
        const fpemu_sumtree_row *rm2 = fpemu_sumtree_table_find_op(&tab, NULL, "f32", "f32", "f32", -1, 32, 64, 64);
        const fpemu_sumtree_row *rl = fpemu_sumtree_table_find_op(&tab, "linear", "f32", "f32", "f32", -1, 32, 64, 64);
        const fpemu_sumtree_row *rt = fpemu_sumtree_table_find_op(&tab, "mm-ta", "f32", "f32", "f32", -1, 32, 64, 64);
        ok(rm && rm == rm2 && !strcmp(rm->op, "mm") && rm->tree.split == 2 && rl && rl->tree.split == 4 && rt && rt->tree.split == 1,
           "op mm (the default), linear and mm-ta rows are told apart");
        const fpemu_sumtree_row *row;
        fpemu_sumtree ot;
        rc = fpemu_sumtree_resolve_op(&tab, "linear", "h100", F("f32"), F("f32"), NULL, 0, 32, 64, 64, &ot, &row, err, sizeof err);
        ok(rc == 0 && row == rl && ot.split == 4 && ot.unit == 16, "resolve_op linear: its row");
        rc = fpemu_sumtree_resolve_op(&tab, "linear", "h100", F("f32"), F("f32"), NULL, 0, 32, 10, 64, &ot, &row, err, sizeof err);
        ok(rc == 0 && !row && !strcmp(ot.leaf, "fma-seq") && ot.split == 1, "resolve_op linear, a shape not listed: the plain model");
        rc = fpemu_sumtree_resolve_op(&tab, "addmm", "h100", F("f32"), F("f32"), NULL, 0, 32, 64, 64, &ot, &row, err, sizeof err);
        ok(rc == -1 && strstr(err, "addmm") && strstr(err, FPEMU_SUMTREE_OPS), "resolve_op: an unknown call refused: %s", err);
        fpemu_sumtree_table_free(&tab);
    }
    static const struct { const char *text, *msg; } bad[] = {
        {"a=f16 m=1 n=1 k=1\n", "before"},
        {"fpemu_sumtree_table = 2\n", "version 1"},
        {"fpemu_sumtree_table = 1\na=f16 m=1 n=1\n", "k="},
        {"fpemu_sumtree_table = 1\na=f16 m=1 n=1 k=1 leaf=nosuch\n", "nosuch"},
        {"fpemu_sumtree_table = 1\na=f16 m=1 n=1 k=1 leaf=v100 block=0\na=f16 m=1 n=1 k=1\n", "line 2"},
        {"fpemu_sumtree_table = 1\na=f16 m=1 n=1 k=1 leaf=mi250 split=x\n", "split=x"},
        {"fpemu_sumtree_table = 1\ncolour = red\n", "colour"},
        {"fpemu_sumtree_table = 1\na=f16 m=1 n=1 k=1 c=init beta=2\n", "beta"},
        {"", "no 'fpemu_sumtree_table"},
        {"fpemu_sumtree_table = 1\nop=addmm a=f16 m=1 n=1 k=1\n", "op=addmm"},
        {"fpemu_sumtree_table = 1\nop=linear a=f16 m=1 n=1 k=1\nop=linear a=f16 m=1 n=1 k=1 leaf=h100\n", "line 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = fpemu_sumtree_table_parse(&tab, bad[i].text, "bad.txt", err, sizeof err);
        ok(rc == -1 && strstr(err, bad[i].msg) && strstr(err, "bad.txt"), "bad table %zu refused: %s", i, err);
    }
}

/* The library's built-in table is emu/cublas-h200.txt (when $FPEMU_ROOT
 * names the repository), and fpemu_sumtree_resolve picks a call's tree from
 * a table: the row, or the plain model for a shape not listed, as `fpemu
 * gemm --algo cublas` does. */
static void builtin_and_resolve(void) {
    char err[600], buf[400];
    fpemu_sumtree_table tab;
    int rc = fpemu_sumtree_table_builtin(&tab, err, sizeof err);
    ok(rc == 0 && !strcmp(tab.name, "cublas-h200") && tab.nrows > 30, "the built-in table loads (%s)", rc ? err : tab.name);
    if (rc) return;
    const char *root = getenv("FPEMU_ROOT");
    char path[4200];
    snprintf(path, sizeof path, "%s/emu/cublas-h200.txt", root && *root ? root : ".");
    FILE *f = fopen(path, "rb");
    if (!f) ok(0, "%s: not found (run in the repository, or set FPEMU_ROOT)", path);
    else {
        static char text[1 << 20];
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = 0;
        ok(!strcmp(text, fpemu_sumtree_table_builtin_text()), "the built-in table is %s, byte for byte (%zu bytes)", path, n);
    }
    const fpemu_sumtree_row *row;
    fpemu_sumtree t;
    rc = fpemu_sumtree_resolve(&tab, "h100", F("f16"), F("f16"), NULL, 0, 64, 64, 4096, &t, &row, err, sizeof err);
    fpemu_sumtree_format(&t, buf, sizeof buf);
    ok(rc == 0 && row && !strcmp(row->status, "gemm") && t.split == 3 && t.unit == 64 && !t.out, "f16 64x64x4096 -> f32: line %d, %s",
       row ? row->line : 0, buf);
    rc = fpemu_sumtree_resolve(&tab, "h100", F("f16"), F("f16"), F("f16"), 0, 64, 64, 4096, &t, &row, err, sizeof err);
    ok(rc == 0 && row && !strcmp(row->d, "f16") && t.out == F("f16"), "f16 output: the d=f16 row, rounded to f16");
    rc = fpemu_sumtree_resolve(&tab, "h100", F("f16"), F("f16"), NULL, 0, 4, 4, 4096, &t, &row, err, sizeof err);
    ok(rc == 0 && !row && !strcmp(t.leaf, "h100") && t.split == 1 && t.chunk == 0, "a shape not listed: the plain model, one chain");
    rc = fpemu_sumtree_resolve(&tab, "h100", F("e4m3"), F("e4m3"), NULL, 0, 4, 4, 512, &t, &row, err, sizeof err);
    ok(rc == 0 && !row && t.chunk == 128, "fp8 not listed, no fast accumulation: promotion every 128");
    rc = fpemu_sumtree_resolve(&tab, "h100", F("e4m3"), F("e4m3"), NULL, 1, 4, 4, 512, &t, &row, err, sizeof err);
    ok(rc == 0 && !row && t.chunk == 0, "fp8 not listed, fast accumulation: one chain");
    rc = fpemu_sumtree_resolve(&tab, "h100", F("e4m3"), F("e4m3"), NULL, 1, 64, 64, 4096, &t, &row, err, sizeof err);
    ok(rc == 0 && row && row->fast == 1 && t.chunk == 0, "fp8 listed with fast accumulation: the fast=1 row");
    rc = fpemu_sumtree_resolve(&tab, "h100", F("f32"), F("f32"), NULL, 0, 4, 4, 512, &t, &row, err, sizeof err);
    ok(rc == 0 && !row && !strcmp(t.leaf, "fma-seq"), "f32 inputs not listed: fma-seq (SIMT)");
    rc = fpemu_sumtree_resolve(&tab, "h100", F("f16"), F("f16"), NULL, 1, 64, 64, 4096, &t, &row, err, sizeof err);
    ok(rc == -1 && strstr(err, "fp8 inputs"), "fast accumulation with f16 inputs refused: %s", err);
    rc = fpemu_sumtree_resolve(&tab, "a100", F("f16"), F("f16"), NULL, 0, 64, 64, 4096, &t, &row, err, sizeof err);
    ok(rc == -1 && strstr(err, "models h100") && strstr(err, "a100"), "a row of another device refused: %s", err);
    rc = fpemu_sumtree_resolve(&tab, "a100", F("f16"), F("f16"), NULL, 0, 4, 4, 4096, &t, &row, err, sizeof err);
    ok(rc == 0 && !row && !strcmp(t.leaf, "a100"), "a shape not listed: the plain model of the model given");
    fpemu_sumtree_table_free(&tab);
}

/* The offline fit on pair answers alone, in the recorded design (A all ones,
 * B 2^-12 with +-2^15): the known tree is among the trees that explain every
 * answer, and the fit says whether the pairs alone pin it down. */
static void offline(const char *tree, int k, const char *label) {
    fake f;
    mkfake(&f, BOX_TREE, tree, "f16", NULL);
    fpemu_sumtree_evidence e;
    fpemu_sumtree_evidence_init(&e, f.fa, f.fb, f.fd, k);
    uint64_t *a = malloc(sizeof(uint64_t) * (size_t)k), *b = malloc(sizeof(uint64_t) * (size_t)k), d;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    uint64_t one = fpemu_from_double(f.fa, 1, &ctx), sm = fpemu_from_double(f.fb, ldexp(1, -12), &ctx);
    uint64_t big = fpemu_from_double(f.fb, ldexp(1, 15), &ctx), neg = fpemu_from_double(f.fb, -ldexp(1, 15), &ctx);
    int anchors[] = {0, 1, 37, k / 2, k - 1};
    for (int x = 0; x < 5; x++)
        for (int j = 0; j < k; j++) {
            if (j == anchors[x]) continue;
            fpemu_sumtree_pair_vectors(k, anchors[x], j, one, one, sm, big, neg, a, b);
            box(&f, 0, a, b, k, 0, &d);
            fpemu_sumtree_evidence_add_pair(&e, anchors[x], j, one, one, sm, big, neg, 0, d);
        }
    fpemu_sumtree_probe_opts o;
    fpemu_sumtree_probe_opts_init(&o);
    o.leaves = "h100 a100 fma-seq pairwise";
    fpemu_sumtree_probe_result r;
    char err[300];
    clock_t t0 = clock();
    int rc = fpemu_sumtree_fit(&e, NULL, &o, &r, err, sizeof err);
    diag("%s: fit %.2f s, %ld candidates, %d explain every answer", label, (double)(clock() - t0) / CLOCKS_PER_SEC, r.candidates, r.nalt);
    int found = 0;
    char why[300] = "";
    for (int i = 0; i < r.nalt && !rc; i++) found |= agrees(&f, &r.alt[i], k, why, sizeof why);
    if (!ok(rc == 0 && (r.status == FPEMU_SUMTREE_RESOLVED || r.status == FPEMU_SUMTREE_AMBIGUOUS) && found,
            "offline fit, %s: the known tree is among those that give every pair answer (%s)", label,
            rc ? err : fpemu_sumtree_status_name(r.status)))
        show(&r);
    /* the reading names the first group and the partition boundary */
    int *lost = malloc(sizeof(int) * (size_t)k);
    char text[512];
    fpemu_sumtree_read_pairs(&e, 0, 1.0, lost, text, sizeof text);
    diag("%s: %s", label, text);
    free(lost);
    fpemu_sumtree_evidence_free(&e);
    free(a), free(b);
}

/* kpad=P is the tree without padding over zero products first: K = 130,
 * P = 16 is 14 zeros and then the 130 products (the first block of 16 holds
 * products 0 and 1); and it differs from the unpadded tree on these inputs */
static void kpad_is_zeros_first(void) {
    enum { K = 130, KP = 144 };
    fpemu_sumtree t, u;
    fpemu_sumtree_bound bt, bu, bn;
    char err[300];
    fpemu_sumtree_init(&t), fpemu_sumtree_init(&u);
    fpemu_sumtree_parse(&t, "leaf=h100 kpad=16", err, sizeof err);
    fpemu_sumtree_parse(&u, "leaf=h100", err, sizeof err);
    const fpemu_format *f16 = F("f16");
    int b1 = fpemu_sumtree_bind(&bt, &t, f16, f16, err, sizeof err), b2 = fpemu_sumtree_bind(&bu, &u, f16, f16, err, sizeof err);
    bn = bu;
    uint64_t a[KP] = {0}, b[KP] = {0};
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    int same = 0, differ = 0;
    for (int r = 0; r < 32; r++) {
        for (int i = 0; i < K; i++) {
            uint64_t x = fpemu_random64(77 + (uint64_t)r, (uint64_t)i);
            a[KP - K + i] = fpemu_from_double(f16, ldexp(1.0 + (double)(x >> 40) / 16777216.0, (int)(x % 13) - 6) * ((x >> 9 & 1) ? -1 : 1), &ctx);
            b[KP - K + i] = fpemu_from_double(f16, ldexp(1.0 + (double)(x >> 20 & 0xFFFFF) / 1048576.0, (int)(x >> 5 & 7) - 3), &ctx);
        }
        uint64_t padded = fpemu_sumtree_dot(&bt, a + (KP - K), b + (KP - K), K, 0);
        same += padded == fpemu_sumtree_dot(&bu, a, b, KP, 0);
        differ += padded != fpemu_sumtree_dot(&bn, a + (KP - K), b + (KP - K), K, 0);
    }
    ok(!b1 && !b2 && same == 32 && differ > 0, "kpad=16 at K = 130: the unpadded tree over 14 zeros and the products (32/32: %d), "
       "not the unpadded tree over the products (%d/32 differ)", same, differ);
}

/* operands=f32: a tf32 call that cuBLAS ran on an f32 SIMT kernel. The text
 * form shows it only when set; it binds for tf32 inputs only, and then to
 * f32 operands: the tree over the f32 data is the f32 tree, not the tf32
 * tree over the data rounded to tf32. */
static void operands_f32(void) {
    enum { K = 130 };
    fpemu_sumtree t, u;
    fpemu_sumtree_bound bt, bf, br;
    char buf[512], err[300];
    fpemu_sumtree_init(&t), fpemu_sumtree_init(&u);
    ok(fpemu_sumtree_parse(&t, "leaf=fma-seq operands=f32", err, sizeof err) == 0 && t.operands == F("f32"), "operands=f32 parses");
    fpemu_sumtree_format(&t, buf, sizeof buf);
    ok(fpemu_sumtree_parse(&u, buf, err, sizeof err) == 0 && fpemu_sumtree_equal(&t, &u) && strstr(buf, " operands=f32"),
       "operands round-trips: %s", buf);
    u.operands = NULL;
    fpemu_sumtree_format(&u, buf, sizeof buf);
    ok(!fpemu_sumtree_equal(&t, &u) && !strstr(buf, "operands"), "without it the tree differs and its text has no operands: %s", buf);
    ok(fpemu_sumtree_parse(&u, "operands=input", err, sizeof err) == 0 && !u.operands, "operands=input is the default");
    ok(fpemu_sumtree_parse(&u, "operands=f16", err, sizeof err) == -1 && strstr(err, "operands=f16"), "operands=f16 refused: %s", err);
    ok(fpemu_sumtree_bind(&bt, &t, F("f16"), F("f16"), err, sizeof err) == -1 && strstr(err, "tf32"),
       "operands=f32 on f16 inputs refused: %s", err);
    int rc = fpemu_sumtree_bind(&bt, &t, F("tf32"), F("tf32"), err, sizeof err);
    ok(rc == 0 && bt.fa == F("f32") && bt.fb == F("f32"), "on tf32 inputs it binds to f32 operands (%s)", rc ? err : "ok");
    fpemu_sumtree_parse(&u, "leaf=fma-seq", err, sizeof err);
    fpemu_sumtree_bind(&bf, &u, F("f32"), F("f32"), err, sizeof err);
    fpemu_sumtree_bind(&br, &u, F("tf32"), F("tf32"), err, sizeof err);
    uint64_t a[K], b[K], ar[K], brr[K];
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    int same = 0, differ = 0;
    for (int r = 0; r < 16; r++) {
        for (int i = 0; i < K; i++) {
            uint64_t x = fpemu_random64(91 + (uint64_t)r, (uint64_t)i), y = fpemu_random64(191 + (uint64_t)r, (uint64_t)i);
            double va = ldexp(1.0 + (double)(x >> 41) / 8388608.0, (int)(x % 9) - 4) * ((x >> 7 & 1) ? -1 : 1);
            double vb = ldexp(1.0 + (double)(y >> 41) / 8388608.0, (int)(y % 7) - 3);
            a[i] = fpemu_from_double(F("f32"), va, &ctx), b[i] = fpemu_from_double(F("f32"), vb, &ctx);
            ar[i] = fpemu_from_double(F("tf32"), va, &ctx), brr[i] = fpemu_from_double(F("tf32"), vb, &ctx);
        }
        uint64_t d = fpemu_sumtree_dot(&bt, a, b, K, 0);
        same += d == fpemu_sumtree_dot(&bf, a, b, K, 0);
        differ += d != fpemu_sumtree_dot(&br, ar, brr, K, 0);
    }
    ok(same == 16 && differ == 16, "operands=f32 on tf32 is the f32 tree on the f32 data (%d/16), not the tf32 tree (%d/16 differ)", same,
       differ);
    fpemu_sumtree_table tab;
    const char *bad = "fpemu_sumtree_table = 1\na=f16 d=f32 m=4 n=4 k=8 status=gemm leaf=fma-seq operands=f32\n";
    ok(fpemu_sumtree_table_parse(&tab, bad, "bad.txt", err, sizeof err) == -1 && strstr(err, "bad.txt:2") && strstr(err, "tf32"),
       "a table row with operands=f32 on f16 is refused: %s", err);
}

/* kres=T: the partition's n mod T leftover products first, then zeros to T,
 * then the rest: K = 44, T = 16 is products 0-11, 4 zeros, products 12-43
 * under the unpadded tree; with tf32's blocks of 8 that is not kpad=16
 * (zeros first). Text form, and kres with kpad refused. */
static void kres_is_residue_first(void) {
    enum { K = 44, KP = 48 };
    fpemu_sumtree t, u, v;
    fpemu_sumtree_bound bt, bu, bv;
    char buf[512], err[300];
    fpemu_sumtree_init(&t), fpemu_sumtree_init(&u), fpemu_sumtree_init(&v);
    ok(fpemu_sumtree_parse(&t, "leaf=h100 kres=16", err, sizeof err) == 0 && t.kres == 16, "kres=16 parses");
    fpemu_sumtree_format(&t, buf, sizeof buf);
    fpemu_sumtree_parse(&v, buf, err, sizeof err);
    ok(fpemu_sumtree_equal(&t, &v) && strstr(buf, " kres=16") && !strstr(buf, "kpad"), "kres round-trips: %s", buf);
    ok(fpemu_sumtree_parse(&v, "kres=-2", err, sizeof err) == -1 && strstr(err, "kres=-2"), "kres=-2 refused: %s", err);
    fpemu_sumtree_parse(&v, "kpad=8", err, sizeof err);
    ok(fpemu_sumtree_bind(&bv, &v, F("tf32"), F("tf32"), err, sizeof err) == -1 && strstr(err, "kpad") && strstr(err, "kres"),
       "kpad with kres refused: %s", err);
    fpemu_sumtree_init(&v);
    fpemu_sumtree_parse(&u, "leaf=h100", err, sizeof err);
    fpemu_sumtree_parse(&v, "leaf=h100 kpad=16", err, sizeof err);
    const fpemu_format *f = F("tf32");
    int b1 = fpemu_sumtree_bind(&bt, &t, f, f, err, sizeof err), b2 = fpemu_sumtree_bind(&bu, &u, f, f, err, sizeof err);
    int b3 = fpemu_sumtree_bind(&bv, &v, f, f, err, sizeof err);
    uint64_t a[K], b[K], ap[KP], bp[KP];
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    int same = 0, differ = 0;
    for (int r = 0; r < 32; r++) {
        for (int i = 0; i < K; i++) {
            uint64_t x = fpemu_random64(301 + (uint64_t)r, (uint64_t)i);
            a[i] = fpemu_from_double(f, ldexp(1.0 + (double)(x >> 40) / 16777216.0, (int)(x % 61) - 30) * ((x >> 9 & 1) ? -1 : 1), &ctx);
            b[i] = fpemu_from_double(f, ldexp(1.0 + (double)(x >> 20 & 0xFFFFF) / 1048576.0, (int)(x >> 5 & 7) - 3), &ctx);
        }
        for (int i = 0, m = 0; i < KP; i++) /* 0-11, four zeros, 12-43 */
            if (i >= 12 && i < 16) ap[i] = bp[i] = 0;
            else ap[i] = a[m], bp[i] = b[m], m++;
        uint64_t d = fpemu_sumtree_dot(&bt, a, b, K, 0);
        same += d == fpemu_sumtree_dot(&bu, ap, bp, KP, 0);
        differ += d != fpemu_sumtree_dot(&bv, a, b, K, 0);
    }
    ok(!b1 && !b2 && !b3 && same == 32 && differ > 0, "kres=16 at K = 44: the unpadded tree over 0-11, 4 zeros, 12-43 (32/32: %d), "
       "not kpad=16 (%d/32 differ)", same, differ);
}

/* partial_fmt=f16: each partition's f32 result rounded to f16 (a split-K
 * workspace in f16), then summed in f32: the tree over three thirds is
 * fl16(fl32(fl32(h0 + h1) + h2)), hq = fl16(Pq) with Pq the thirds'
 * one-partition trees; not the f32 partials' sum, nor the sum in f16
 * (reduce_fmt=f16), which differ from it. */
static void partial_fmt_f16(void) {
    enum { K = 96 };
    fpemu_sumtree t, u, h, r;
    fpemu_sumtree_bound bt, bu, bh, br;
    char buf[512], err[300];
    fpemu_sumtree_init(&t), fpemu_sumtree_init(&u), fpemu_sumtree_init(&h), fpemu_sumtree_init(&r);
    ok(fpemu_sumtree_parse(&t, "leaf=h100 split=3 unit=32 partial_fmt=f16 out=f16", err, sizeof err) == 0 && t.partial_fmt == F("f16"),
       "partial_fmt=f16 parses");
    fpemu_sumtree_format(&t, buf, sizeof buf);
    fpemu_sumtree_parse(&u, buf, err, sizeof err);
    ok(fpemu_sumtree_equal(&t, &u) && strstr(buf, " partial_fmt=f16"), "partial_fmt round-trips: %s", buf);
    ok(fpemu_sumtree_parse(&u, "partial_fmt=e4m3", err, sizeof err) == -1 && strstr(err, "partial_fmt=e4m3"), "partial_fmt=e4m3 refused: %s",
       err);
    ok(fpemu_sumtree_parse(&u, "partial_fmt=f32", err, sizeof err) == 0 && !u.partial_fmt && !fpemu_sumtree_equal(&t, &u),
       "partial_fmt=f32 is the default, another tree");
    fpemu_sumtree_parse(&u, "leaf=h100 split=3 unit=32 out=f16", err, sizeof err);
    fpemu_sumtree_parse(&r, "leaf=h100 split=3 unit=32 reduce_fmt=f16 out=f16", err, sizeof err);
    fpemu_sumtree_parse(&h, "leaf=h100", err, sizeof err);
    const fpemu_format *f16 = F("f16"), *f32 = F("f32");
    int rc = fpemu_sumtree_bind(&bt, &t, f16, f16, err, sizeof err) | fpemu_sumtree_bind(&bu, &u, f16, f16, err, sizeof err) |
             fpemu_sumtree_bind(&bh, &h, f16, f16, err, sizeof err) | fpemu_sumtree_bind(&br, &r, f16, f16, err, sizeof err);
    uint64_t a[K], b[K];
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    int same = 0, not_f32 = 0, not_f16sum = 0;
    for (int q = 0; q < 64; q++) {
        for (int i = 0; i < K; i++) {
            uint64_t x = fpemu_random64(401 + (uint64_t)q, (uint64_t)i);
            a[i] = fpemu_from_double(f16, ldexp(1.0 + (double)(x >> 40) / 16777216.0, (int)(x % 7) - 3) * ((x >> 9 & 1) ? -1 : 1), &ctx);
            b[i] = fpemu_from_double(f16, ldexp(1.0 + (double)(x >> 20 & 0xFFFFF) / 1048576.0, (int)(x >> 5 & 3)), &ctx);
        }
        uint64_t sum = 0;
        for (int p = 0; p < 3; p++) {
            uint64_t pq = fpemu_sumtree_dot(&bh, a + p * K / 3, b + p * K / 3, K / 3, 0);
            uint64_t hq = fpemu_convert(f32, f16, fpemu_convert(f16, f32, pq, &ctx), &ctx);
            sum = p ? fpemu_add(f32, sum, hq, &ctx) : hq;
        }
        uint64_t want = fpemu_convert(f16, f32, sum, &ctx);
        uint64_t d = fpemu_sumtree_dot(&bt, a, b, K, 0);
        same += d == want;
        not_f32 += d != fpemu_sumtree_dot(&bu, a, b, K, 0);
        not_f16sum += d != fpemu_sumtree_dot(&br, a, b, K, 0);
    }
    ok(!rc && same == 64 && not_f32 > 0 && not_f16sum > 0,
       "partial_fmt=f16: fl16(fl32(fl32(h0 + h1) + h2)) (64/64: %d), not the f32 partials' sum (%d/64 differ), not reduce_fmt=f16 (%d/64 differ)",
       same, not_f32, not_f16sum);
}

int main(void) {
    text_and_tables();
    operands_f32();
    builtin_and_resolve();

    /* the GEMM path against the per-output path */
    gemm_equals_dot("leaf=h100 split=3 unit=64", "f16", NULL, 7, 5, 300, 0);
    gemm_equals_dot("leaf=h100 split=4 unit=32 layout=interleaved reduce=pairwise reduce_fmt=f16", "bf16", NULL, 5, 6, 256, 1);
    gemm_equals_dot("leaf=h100 chunk=128", "e4m3", "bf16", 4, 9, 520, 1);
    gemm_equals_dot("leaf=fma-seq chunk=64 c=init", "f32", NULL, 3, 4, 200, 1);
    gemm_equals_dot("leaf=add-seq split=2 unit=16 alpha=0.5 beta=2", "f16", "f16", 3, 3, 64, 1);
    gemm_equals_dot("leaf=h100 block=32 chain=f32-add split=8 unit=16 reduce_fmt=f64", "f16", NULL, 4, 4, 256, 0);
    gemm_equals_dot("leaf=h100 kpad=16", "f16", "f16", 3, 5, 130, 1);
    gemm_equals_dot("leaf=h100 split=2 unit=64 kpad=64", "bf16", NULL, 4, 3, 1000, 0);
    kpad_is_zeros_first();
    gemm_equals_dot("leaf=h100 block=8 split=3 unit=4 kres=16", "f16", NULL, 4, 5, 1000, 1);
    gemm_equals_dot("leaf=h100 split=2 unit=16 kres=32", "bf16", "bf16", 3, 4, 200, 0);
    kres_is_residue_first();
    gemm_equals_dot("leaf=h100 split=5 unit=16 partial_fmt=f16 out=f16", "f16", "f16", 4, 5, 300, 1);
    gemm_equals_dot("leaf=h100 split=6 unit=8 reduce=pairwise partial_fmt=bf16", "bf16", NULL, 3, 4, 200, 0);
    partial_fmt_f16();

    /* trees the probe must resolve */
    resolves("sequential fma (f16)", "leaf=fma-seq", "f16", NULL, 256, "leaf=fma-seq");
    resolves("sequential fma (f32 inputs)", "leaf=fma-seq", "f32", NULL, 128, "leaf=fma-seq");
    resolves("sequential add: products rounded first (f32 inputs)", "leaf=add-seq", "f32", NULL, 128, "leaf=add-seq");
    resolves("pairwise", "leaf=pairwise", "f16", NULL, 256, "leaf=pairwise");
    resolves("h100 chain (plain model)", "leaf=h100", "f16", NULL, 512, "leaf=h100");
    resolves("tensor-core blocks of 16, f32 sum across blocks", "leaf=h100 chain=f32-add", "f16", NULL, 256,
             "leaf=h100 chain=f32-add");
    resolves("tensor-core blocks of 32, f32 sum across blocks", "leaf=h100 block=32 chain=f32-add", "f16", NULL, 256,
             "leaf=h100 block=32 chain=f32-add");
    resolves("split-K 2, contiguous", "leaf=h100 split=2 unit=64", "f16", NULL, 512, "split=2 unit=64");
    resolves("split-K 4, contiguous", "leaf=h100 split=4 unit=64", "f16", NULL, 512, "split=4 unit=64");
    resolves("split-K 8, contiguous", "leaf=h100 split=8 unit=32", "f16", NULL, 512, "split=8 unit=32");
    resolves("split-K 8, contiguous, pairwise reduction", "leaf=h100 split=8 unit=32 reduce=pairwise", "f16", NULL, 512,
             "split=8 unit=32 reduce=pairwise");
    resolves("split-K 2, interleaved", "leaf=h100 split=2 unit=32 layout=interleaved", "f16", NULL, 512,
             "split=2 unit=32 layout=interleaved");
    resolves("split-K 4, interleaved", "leaf=h100 split=4 unit=32 layout=interleaved", "bf16", NULL, 512,
             "leaf=h100 split=4 unit=32 layout=interleaved");
    resolves("split-K 8, interleaved", "leaf=h100 split=8 unit=16 layout=interleaved", "f16", NULL, 512,
             "split=8 unit=16 layout=interleaved");
    resolves("split-K 4 with f16 reduction", "leaf=h100 split=4 unit=64 reduce_fmt=f16", "f16", NULL, 512,
             "split=4 unit=64 reduce_fmt=f16");
    /* (a bf16 reduction hides the leaves' low bits: the leaf written may be
     * another preset that agrees on every question) */
    resolves("split-K 4 with bf16 reduction", "leaf=h100 split=4 unit=64 reduce_fmt=bf16", "bf16", NULL, 512,
             "split=4 unit=64 reduce_fmt=bf16");
    resolves("split-K 3 with a wider (f64) reduction", "leaf=h100 split=3 unit=64 reduce_fmt=f64", "bf16", NULL, 512,
             "leaf=h100 split=3 unit=64 reduce_fmt=f64");
    /* (chunks of 128 summed in order in f32 are the same tree as 4 partitions
     * of 128 reduced in order in f32; ada's fp8 entry with blocks of 32 gives
     * h100's answers but for the emax floor, out of these vectors' reach) */
    resolves("promotion every 128 (fp8)", "leaf=h100 chunk=128", "e4m3", NULL, 512, "chunk=128");
    resolves("cuBLAS-like: split-K 3 of tiles of 64, K = 4096", "leaf=h100 split=3 unit=64", "f16", NULL, 4096,
             "leaf=h100 split=3 unit=64");
    resolves("epilogue: alpha 2, beta 0.5, f16 output", "leaf=h100 split=2 unit=64 alpha=2 beta=0.5", "f16", "f16", 256,
             "split=2 unit=64 alpha=2 beta=0.5");
    resolves("epilogue: C as the first chain's c", "leaf=h100 c=init", "f16", NULL, 256, "leaf=h100 c=init");

    /* boxes the probe must refuse to describe */
    refuses("a new random order on every call", BOX_NONDET, 128, FPEMU_SUMTREE_NONDETERMINISTIC);
    refuses("a random order per output", BOX_PEROUT, 128, FPEMU_SUMTREE_PER_OUTPUT);
    refuses("an order that depends on the data (ascending magnitude)", BOX_SORTED, 128, FPEMU_SUMTREE_UNRESOLVED);
    refuses("a fixed order outside the family (fma from the last product)", BOX_REVERSED, 128, FPEMU_SUMTREE_UNRESOLVED);

    offline("leaf=h100 split=3 unit=64", 1024, "split-K 3 (pairs only)");
    offline("leaf=h100 chunk=64", 512, "chunks of 64 (pairs only)");
    return done_testing();
}
