/* SPDX-License-Identifier: MIT */
/* cmd_gemm.c: `fpemu gemm`: D = A x B (+ C) from .npy files through the
 * emulated low-precision GEMM (emu/gemm.h).
 *
 *   fpemu gemm --model M --a A.npy --b B.npy [--c C.npy] --afmt F [--bfmt F]
 *              [--scaling RECIPE] [--promote N] [--outfmt F] [--threads N]
 *              [--ta] [--tb] [--set KEY=VALUE]... [--algo plain|cublas]
 *              [--fast-accum] [--no-reduced-precision-reduction] [--call-shape MxNxK] [--table FILE] --out D.npy
 *   fpemu gemm --model M --afmt F --pairs PAIRS.npz [--shape MxNxK [--a A.npy
 *              --b B.npy --answers D.npy]]
 * A and B hold values ('<f4', '<f2'), quantised per the recipe, or raw
 * codes ('|u1', '<u2') of --afmt/--bfmt, used as they are. --algo cublas
 * takes the summation tree of the call's formats and shape from a table
 * (emu/cublas-h200.txt, emu/sumtree.h, docs/cublas.md); --pairs fits a tree
 * to recorded pair-probe answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "gemm.h"
#include "mma.h"
#include "npy.h"
#include "npz.h"
#include "sumtree.h"

static void usage(FILE *out) {
    char names[400];
    fpemu_mma_preset_list(names, sizeof names, ", ");
    fprintf(out,
            "usage: fpemu gemm --model M --a A.npy --b B.npy [--c C.npy] --afmt F [--bfmt F] [--scaling R]\n"
            "                  [--promote N] [--outfmt F] [--threads N] [--ta] [--tb] [--set K=V]...\n"
            "                  [--algo plain|cublas] [--fast-accum] [--no-reduced-precision-reduction] [--call-shape MxNxK]\n"
            "                  [--table FILE] --out D.npy\n"
            "       fpemu gemm --model M --afmt F --pairs PAIRS.npz [--shape MxNxK [--a A.npy --b B.npy --answers D.npy]]\n"
            "\n"
            "D = A x B (+ C) under the MMA model M (a preset: %s; or a preset file,\n"
            "docs/tensor-cores.md) with element formats --afmt/--bfmt (--bfmt defaults to --afmt), c and d in f32.\n"
            "A (M x K) and B (K x N): .npy matrices of values ('<f4', '<f2'; C or Fortran order),\n"
            "quantised per the recipe, or of raw codes ('|u1', '<u2') of the element formats (no\n"
            "scaling then). --ta/--tb: the file holds the transpose (K x M, N x K).\n"
            "  --scaling R   none (default), tensor (TE current), tensor-torchao, rowwise, blockwise\n"
            "                (1x128 / 128x128, promotion every 128), mx-floor, mx-rceil, nvfp4\n"
            "  --promote N   f32 promotion every N elements of K (0 = none)\n"
            "  --outfmt F    round D to F (rne) before writing it as f32\n"
            "  --set K=V     model parameter override (see fpemu mma --help)\n"
            "  --algo A      plain (default: one chain over K) or cublas: the summation tree PyTorch's cuBLAS\n"
            "                call used for these formats and shape (split-K, promotion, output rounding), from\n"
            "                the table (emu/cublas-h200.txt; shapes not in it: the plain model, said on stderr);\n"
            "                unscaled inputs, no --promote or --set\n"
            "  --fast-accum  with --algo cublas and fp8 inputs: torch._scaled_mm(use_fast_accum=True)\n"
            "  --no-reduced-precision-reduction  with --algo cublas: PyTorch's\n"
            "                allow_{fp16,bf16}_reduced_precision_reduction = False (split-K partials in f32)\n"
            "  --call-shape MxNxK  with --algo cublas: A and B are rows and columns of a call of this shape\n"
            "                (the tree is looked up for it; a slice of a recorded call replays exactly)\n"
            "  --op OP       with --algo cublas: the call the tree is looked up for: mm (default: torch.mm/matmul),\n"
            "                mm-ta (torch.mm(P.t(), Q), a Linear's weight gradient) or linear (F.linear(x, W, bias):\n"
            "                B is W^T, the bias is --c, an M x N broadcast of it)\n"
            "  --table FILE  the tree table (default $FPEMU_CUBLAS_TABLE, else the library's built-in copy\n"
            "                of emu/cublas-h200.txt)\n"
            "  --pairs FILE  fit a tree to pair-probe answers (an .npz of out_{f16,bf16,f32,tf32,e4m3}_MxNxK_iI arrays,\n"
            "                A all ones, B 2^-12 but +2^15 at i and -2^15 at j, or the file's pair_big_/pair_small_DTYPE)\n"
            "                for --afmt's dtype, every shape in the file or --shape MxNxK; prints the reading\n"
            "                and the trees that fit\n"
            "  --answers D   with --pairs, --shape, --a and --b (codes): D.npy, the recorded f32 outputs of A x B,\n"
            "                joins the evidence (up to 256 outputs)\n"
            "  --outfmt F    with --pairs: the answers are the call's F outputs (torch.mm in bf16 returns bf16):\n"
            "                the trees are fitted with that output rounding\n"
            "Codes must lie in the format's field (e2m1: 0..15 in a '|u1' byte; e3m2, e2m3: 0..63).\n"
            "D is written as '<f4' (C order): a regular file atomically, a symbolic link's target\n"
            "(the link stays), a device or FIFO in place. Bad input: a message and exit status 2.\n", names);
}

/* out[i * cols + j] = the code at (i, j) of X (at (j, i) when X holds the
 * transpose). A code must lie in its format's field (bits + pad), as `fpemu
 * run` and `fpemu mma` check: e2m1's codes are 0..15 in a '|u1' byte, not
 * 0..255 masked. The message names the element as stored in the file.
 * 0, or 2 after the message. */
static int load_codes(const char *sub, const npy_array *X, const char *path, const fpemu_format *f, size_t rows,
                      size_t cols, int trans, uint64_t *out) {
    int w = f->bits + f->pad;
    uint64_t max = cli_code_max(f);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            size_t r = trans ? j : i, q = trans ? i : j;
            uint64_t v = npy_code(X, r, q);
            if (v > max)
                return cli_error(sub, "%s: element [%zu, %zu] = %llu (0x%llX) is not a %s code (%d-bit codes, at most %llu)", path,
                                 r, q, (unsigned long long)v, (unsigned long long)v, f->name, w, (unsigned long long)max);
            out[i * cols + j] = v;
        }
    return 0;
}

/* The tree table: --table, else $FPEMU_CUBLAS_TABLE (a named file must
 * load), else the library's copy of emu/cublas-h200.txt, compiled in from
 * that file. 0, or 2 after a message. */
static int load_table(const char *sub, const char *given, fpemu_sumtree_table *tab, char *path, size_t plen) {
    char err[600];
    const char *env = getenv("FPEMU_CUBLAS_TABLE");
    const char *file = given ? given : env && *env ? env : NULL;
    if (file) {
        if (fpemu_sumtree_table_read(tab, file, err, sizeof err)) return cli_error(sub, "--algo cublas: %s", err);
        snprintf(path, plen, "%.4199s", file);
        return 0;
    }
    if (fpemu_sumtree_table_builtin(tab, err, sizeof err)) return cli_error(sub, "--algo cublas: %s", err);
    snprintf(path, plen, "built into the library");
    return 0;
}

static const char *pair_dtype(const fpemu_format *f) {
    static const char *const names[] = {"f16", "bf16", "f32", "tf32", "e4m3"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(f->name, names[i])) return names[i];
    return NULL;
}

/* A one-element f32 member NAME of the archive, or dflt. */
static double npz_scalar(const npz_file *z, const char *name, double dflt) {
    char want[80], err[300];
    snprintf(want, sizeof want, "%s.npy", name);
    for (int m = 0; m < z->count; m++) {
        if (strcmp(z->m[m].name, want)) continue;
        npy_array a;
        if (npy_parse(z->m[m].data, z->m[m].n, z->m[m].name, &a, err, sizeof err)) return dflt;
        double v = a.n == 1 && a.dtype == NPY_F4 ? npy_get(&a, 0, 0) : dflt;
        npy_free(&a);
        return v;
    }
    return dflt;
}

/* Recorded outputs of random inputs as more evidence for the fit: A and B
 * codes (M x K, K x N) and D (M x N, f32) of the shape; up to 256 outputs,
 * strided. 0, or 2 after a message. */
static int add_answers(const char *sub, fpemu_sumtree_evidence *e, const fpemu_format *fa, const fpemu_format *fo,
                       const char *pa, const char *pb, const char *pd, int M, int N, int K) {
    char err[600];
    npy_array A, B, D;
    int rc = 0;
    memset(&A, 0, sizeof A), memset(&B, 0, sizeof B), memset(&D, 0, sizeof D);
    uint64_t *a = malloc(sizeof(uint64_t) * (size_t)K), *b = malloc(sizeof(uint64_t) * (size_t)K);
    if (!a || !b) { rc = cli_error(sub, "out of memory"); goto out; }
    if (npy_read(pa, &A, err, sizeof err) || npy_read(pb, &B, err, sizeof err) || npy_read(pd, &D, err, sizeof err)) {
        rc = cli_error(sub, "%s", err);
        goto out;
    }
    /* A and B may be rows and columns of the call (a slice) */
    if ((A.dtype != NPY_U1 && A.dtype != NPY_U2) || A.dtype != B.dtype || D.dtype != NPY_F4 || A.rows > (size_t)M ||
        A.cols != (size_t)K || B.rows != (size_t)K || B.cols > (size_t)N || D.rows != A.rows || D.cols != B.cols) {
        rc = cli_error(sub, "--answers: A (at most %d x %d) and B (%d x at most %d) must hold codes of %s, D the f32 values of A x B",
                       M, K, K, N, fa->name);
        goto out;
    }
    size_t total = A.rows * B.cols, step = total > 256 ? total / 256 : 1;
    for (size_t t = 0; t < total; t += step) {
        size_t i = t / B.cols, j = t % B.cols;
        for (int k = 0; k < K; k++) a[k] = npy_code(&A, i, (size_t)k), b[k] = npy_code(&B, (size_t)k, j);
        uint64_t d = npy_code(&D, i, j);
        if (fo && strcmp(fo->name, "f32")) { /* the f32 value of an output of fo, as its code */
            fpemu_ctx ctx;
            fpemu_ctx_init(&ctx);
            d = fpemu_from_double(fo, npy_get(&D, i, j), &ctx);
        }
        if (fpemu_sumtree_evidence_add(e, a, b, 0, d, FPEMU_SUMTREE_Q_RANDOM)) { rc = cli_error(sub, "out of memory"); goto out; }
    }
out:
    npy_free(&A), npy_free(&B), npy_free(&D);
    free(a), free(b);
    return rc;
}

/* --pairs: the reading and the fit of every shape of --afmt's dtype in the
 * file (pairprobe.py's design: A all ones, B small but +big at i and -big
 * at j, answers in f32; big and small are 2^15 and 2^-12 unless the file
 * holds pair_big_DTYPE and pair_small_DTYPE, as record_cublas.py writes). */
static int run_pairs(const char *sub, const char *model, const fpemu_format *fa, const fpemu_format *fo, const char *path,
                     const char *shape, const char *pa, const char *pb, const char *pd) {
    char err[600];
    const char *dt = pair_dtype(fa);
    if (!dt) return cli_error(sub, "--pairs: --afmt must be f16, bf16, f32, tf32 or e4m3 (the recorded dtypes), not %s", fa->name);
    npz_file z;
    if (npz_read(path, &z, err, sizeof err)) return cli_error(sub, "%s", err);
    char nb[40], ns[40];
    snprintf(nb, sizeof nb, "pair_big_%s", dt);
    snprintf(ns, sizeof ns, "pair_small_%s", dt);
    double vbig = npz_scalar(&z, nb, 0x1p15), vsmall = npz_scalar(&z, ns, 0x1p-12);
    int rc = 0, shapes = 0;
    char done[64][48];
    int ndone = 0;
    for (int m = 0; m < z.count && !rc; m++) {
        char pre[24], shp[48];
        int M, N, K, I;
        snprintf(pre, sizeof pre, "out_%s_", dt);
        if (strncmp(z.m[m].name, pre, strlen(pre))) continue;
        if (sscanf(z.m[m].name + strlen(pre), "%dx%dx%d_i%d", &M, &N, &K, &I) != 4 || K < 2 || K > (1 << 20)) continue;
        snprintf(shp, sizeof shp, "%dx%dx%d", M, N, K);
        if (shape && strcmp(shape, shp)) continue;
        int seen = 0;
        for (int d = 0; d < ndone; d++) seen |= !strcmp(done[d], shp);
        if (seen || ndone == 64) continue;
        snprintf(done[ndone++], sizeof done[0], "%s", shp);
        shapes++;
        fpemu_ctx ctx;
        fpemu_ctx_init(&ctx);
        uint64_t one = fpemu_from_double(fa, 1.0, &ctx), sm = fpemu_from_double(fa, vsmall, &ctx);
        uint64_t big = fpemu_from_double(fa, vbig, &ctx), neg = fpemu_from_double(fa, -vbig, &ctx);
        if (fpemu_to_double(fa, sm) != vsmall || fpemu_to_double(fa, big) != vbig) {
            rc = cli_error(sub, "%s: the pair magnitudes %g and %g are not %s values", path, vbig, vsmall, fa->name);
            break;
        }
        fpemu_sumtree_evidence e;
        fpemu_sumtree_evidence_init(&e, fa, fa, fo, K);
        int anchors[32], na = 0;
        for (int q = 0; q < z.count && !rc; q++) {
            char pre2[80];
            snprintf(pre2, sizeof pre2, "out_%s_%s_i", dt, shp);
            if (strncmp(z.m[q].name, pre2, strlen(pre2))) continue;
            int i = atoi(z.m[q].name + strlen(pre2));
            npy_array a;
            if (npy_parse(z.m[q].data, z.m[q].n, z.m[q].name, &a, err, sizeof err)) { rc = cli_error(sub, "%s: %s", path, err); break; }
            if (a.dtype != NPY_F4 || a.n != (size_t)K || i < 0 || i >= K) {
                npy_free(&a);
                rc = cli_error(sub, "%s: %s: expected %d f32 answers for an anchor in [0, %d)", path, z.m[q].name, K, K);
                break;
            }
            for (int j = 0; j < K; j++) {
                if (j == i) continue;
                uint32_t u;
                memcpy(&u, (const char *)a.data + 4 * (size_t)j, 4);
                uint64_t d = u;
                if (fo && strcmp(fo->name, "f32")) { /* the answer as a code of the output format (exact, or refused) */
                    float v;
                    memcpy(&v, &u, 4);
                    d = fpemu_from_double(fo, v, &ctx);
                    if (fpemu_to_double(fo, d) != (double)v && v == v) {
                        rc = cli_error(sub, "%s: %s[%d] = %g is not a %s value (--outfmt %s)", path, z.m[q].name, j, (double)v, fo->name, fo->name);
                        break;
                    }
                }
                if (fpemu_sumtree_evidence_add_pair(&e, i, j, one, one, sm, big, neg, 0, d)) { rc = cli_error(sub, "out of memory"); break; }
            }
            npy_free(&a);
            if (na < 32) anchors[na++] = i;
        }
        int npairs = e.n;
        if (!rc && pd) rc = add_answers(sub, &e, fa, fo, pa, pb, pd, M, N, K);
        if (rc) { fpemu_sumtree_evidence_free(&e); break; }
        printf("shape=%s dtype=%s answers=%d anchors=%d outputs=%d\n", shp, dt, npairs, na, e.n - npairs);
        int *lost = malloc(sizeof(int) * (size_t)K);
        char text[512];
        for (int x = 0; x < na && lost; x++) {
            fpemu_sumtree_read_pairs(&e, anchors[x], 1.0, lost, text, sizeof text);
            printf("reading %s\n", text);
        }
        free(lost);
        char leaves[200];
        snprintf(leaves, sizeof leaves, "%s exact fma-seq pairwise add-seq", model);
        fpemu_sumtree_probe_opts o;
        fpemu_sumtree_probe_opts_init(&o);
        o.leaves = leaves;
        fpemu_sumtree_probe_result r;
        if (fpemu_sumtree_fit(&e, NULL, &o, &r, err, sizeof err)) {
            fpemu_sumtree_evidence_free(&e);
            rc = cli_error(sub, "%s", err);
            break;
        }
        char buf[400];
        printf("status=%s candidates=%ld survived=%d,%d,%d\n", fpemu_sumtree_status_name(r.status), r.candidates, r.survived[0],
               r.survived[1], r.survived[2]);
        for (int t = 0; t < r.nalt; t++) {
            fpemu_sumtree_format(&r.alt[t], buf, sizeof buf);
            printf("fits %s\n", buf);
        }
        if (r.note[0]) printf("note %s\n", r.note);
        fpemu_sumtree_evidence_free(&e);
    }
    npz_free(&z);
    if (!rc && !shapes) rc = cli_error(sub, "%s: no out_%s_%s_i* arrays", path, dt, shape ? shape : "MxNxK");
    return rc ? rc : cli_stdout_done(sub, 0);
}

int cmd_gemm(int argc, char **argv) {
    const char *sub = "gemm";
    const char *model = NULL, *pa = NULL, *pb = NULL, *pc = NULL, *afmt = NULL, *bfmt = NULL, *recipe = "none";
    const char *outfmt = NULL, *out = NULL, *sets[32], *algo = "plain", *table = NULL, *pairs = NULL, *shape = NULL;
    const char *answers = NULL, *call_shape = NULL, *op = NULL;
    int nsets = 0, ta = 0, tb = 0, fast_accum = 0, have_scaling = 0, no_rpr = 0;
    unsigned long long promote = 0, threads = 0;
    int have_promote = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char **dst = NULL;
        if (cli_is_help(s)) { usage(stdout); return cli_stdout_done(sub, 0); }
        if (!strcmp(s, "--model")) dst = &model;
        else if (!strcmp(s, "--a")) dst = &pa;
        else if (!strcmp(s, "--b")) dst = &pb;
        else if (!strcmp(s, "--c")) dst = &pc;
        else if (!strcmp(s, "--afmt")) dst = &afmt;
        else if (!strcmp(s, "--bfmt")) dst = &bfmt;
        else if (!strcmp(s, "--scaling")) dst = &recipe;
        else if (!strcmp(s, "--outfmt")) dst = &outfmt;
        else if (!strcmp(s, "--out")) dst = &out;
        else if (!strcmp(s, "--algo")) dst = &algo;
        else if (!strcmp(s, "--table")) dst = &table;
        else if (!strcmp(s, "--pairs")) dst = &pairs;
        else if (!strcmp(s, "--shape")) dst = &shape;
        else if (!strcmp(s, "--answers")) dst = &answers;
        else if (!strcmp(s, "--call-shape")) dst = &call_shape;
        else if (!strcmp(s, "--op")) dst = &op;
        if (dst == &recipe) have_scaling = 1;
        if (dst) {
            if (i + 1 >= argc) return cli_error(sub, "%s needs a value", s);
            *dst = argv[++i];
        } else if (!strcmp(s, "--set")) {
            if (i + 1 >= argc || !strchr(argv[i + 1], '=')) return cli_error(sub, "--set needs KEY=VALUE");
            if (nsets == 32) return cli_error(sub, "too many --set options");
            sets[nsets++] = argv[++i];
        } else if (!strcmp(s, "--promote")) {
            if (i + 1 >= argc || cli_parse_u64(argv[i + 1], &promote) || promote > 1u << 30)
                return cli_error(sub, "--promote needs a non-negative integer");
            have_promote = 1;
            i++;
        } else if (!strcmp(s, "--threads")) {
            if (i + 1 >= argc || cli_parse_u64(argv[i + 1], &threads) || threads > 64) return cli_error(sub, "--threads needs an integer in [0, 64]");
            i++;
        } else if (!strcmp(s, "--fast-accum")) fast_accum = 1;
        else if (!strcmp(s, "--no-reduced-precision-reduction")) no_rpr = 1;
        else if (!strcmp(s, "--ta")) ta = 1;
        else if (!strcmp(s, "--tb")) tb = 1;
        else return cli_error(sub, "unknown option '%s' (see fpemu gemm --help)", s);
    }
    if (!model) return cli_error(sub, "--model is required");
    int cublas = !strcmp(algo, "cublas");
    if (!cublas && strcmp(algo, "plain")) return cli_error(sub, "--algo %s: plain or cublas", algo);
    if (pairs) {
        if (!afmt) return cli_error(sub, "--pairs needs --afmt (the dtype of the recorded answers)");
        if (out || cublas) return cli_error(sub, "--pairs fits a tree: no --out or --algo");
        if ((pa || pb || answers) && !(pa && pb && answers && shape))
            return cli_error(sub, "--pairs with recorded outputs needs --a A.npy --b B.npy (codes) --answers D.npy (f32) and --shape");
        char e2[300];
        const fpemu_format *f = fpemu_format_get(afmt, e2, sizeof e2);
        if (!f) return cli_error(sub, "--afmt: %s", e2);
        if (fpemu_mma_model_check_name(model, e2, sizeof e2)) return cli_error(sub, "%s", e2);
        const fpemu_format *fo = NULL;
        if (outfmt && !(fo = fpemu_format_get(outfmt, e2, sizeof e2))) return cli_error(sub, "--outfmt: %s", e2);
        return run_pairs(sub, model, f, fo, pairs, shape, pa, pb, answers);
    }
    if (shape || answers) return cli_error(sub, "%s goes with --pairs", shape ? "--shape" : "--answers");
    if (!cublas && (fast_accum || table || call_shape || op || no_rpr))
        return cli_error(sub, "%s goes with --algo cublas",
                         fast_accum ? "--fast-accum" : table ? "--table" : call_shape ? "--call-shape" : op ? "--op"
                                                                                           : "--no-reduced-precision-reduction");
    int cM = 0, cN = 0, cK = 0;
    if (call_shape) {
        char extra;
        if (sscanf(call_shape, "%dx%dx%d%c", &cM, &cN, &cK, &extra) != 3 || cM < 1 || cN < 1 || cK < 1)
            return cli_error(sub, "--call-shape %s: MxNxK, e.g. 64x64x4096", call_shape);
    }
    if (cublas && (have_promote || nsets || (have_scaling && strcmp(recipe, "none"))))
        return cli_error(sub, "--algo cublas takes unscaled inputs and the table's tree: no --scaling, --promote or --set");
    if (!pa || !pb) return cli_error(sub, "--a A.npy and --b B.npy are required");
    if (!out) return cli_error(sub, "--out D.npy is required");
    if (!afmt) return cli_error(sub, "--afmt is required (the element format of A, e.g. e4m3)");
    if (!bfmt) bfmt = afmt;
    char err[512];
    fpemu_gemm_config cfg;
    if (fpemu_gemm_config_init(&cfg, model, afmt, bfmt, err, sizeof err)) return cli_error(sub, "%s", err);
    if (fpemu_gemm_config_set_scaling(&cfg, recipe, err, sizeof err)) return cli_error(sub, "--scaling %s: %s", recipe, err);
    if (have_promote) cfg.promote = (int)promote;
    cfg.nthreads = (int)threads;
    if (outfmt && !(cfg.outfmt = fpemu_format_get(outfmt, err, sizeof err))) return cli_error(sub, "--outfmt: %s", err);
    for (int i = 0; i < nsets; i++) {
        char key[64];
        const char *eq = strchr(sets[i], '=');
        size_t kl = (size_t)(eq - sets[i]);
        if (kl >= sizeof key) return cli_error(sub, "--set %s: key too long", sets[i]);
        memcpy(key, sets[i], kl);
        key[kl] = 0;
        if (fpemu_mma_model_set(&cfg.model, key, eq + 1, err, sizeof err)) return cli_error(sub, "--set %s: %s", sets[i], err);
    }
    fpemu_sumtree_table tab;
    char tpath[4200] = "";
    memset(&tab, 0, sizeof tab);
    if (cublas && load_table(sub, table, &tab, tpath, sizeof tpath)) return 2;
    npy_array A, B, C;
    memset(&C, 0, sizeof C);
    if (npy_read(pa, &A, err, sizeof err)) { fpemu_sumtree_table_free(&tab); return cli_error(sub, "%s", err); }
    if (npy_read(pb, &B, err, sizeof err)) { npy_free(&A); fpemu_sumtree_table_free(&tab); return cli_error(sub, "%s", err); }
    int rc = 0;
    float *Af = NULL, *Bf = NULL, *Cf = NULL, *D = NULL;
    uint64_t *Ac = NULL, *Bc = NULL;
    if (pc && npy_read(pc, &C, err, sizeof err)) { rc = cli_error(sub, "%s", err); goto done; }
    if (A.ndim != 2 || B.ndim != 2) { rc = cli_error(sub, "%s: A and B must be 2-D matrices", A.ndim != 2 ? pa : pb); goto done; }
    size_t M = ta ? A.cols : A.rows, K = ta ? A.rows : A.cols;
    size_t KB = tb ? B.cols : B.rows, N = tb ? B.rows : B.cols;
    if (K != KB) {
        rc = cli_error(sub, "shape mismatch: A is %zu x %zu and B is %zu x %zu (inner dimensions %zu != %zu)", M, K, KB, N, K, KB);
        goto done;
    }
    if (M > (1u << 24) || N > (1u << 24) || K > (1u << 24)) { rc = cli_error(sub, "matrices too large"); goto done; }
    if (pc && (C.ndim != 2 || C.rows != M || C.cols != N)) {
        rc = cli_error(sub, "%s: C must be %zu x %zu (got %zu x %zu)", pc, M, N, C.rows, C.cols);
        goto done;
    }
    if (pc && (C.dtype != NPY_F4 && C.dtype != NPY_F2)) { rc = cli_error(sub, "%s: C must hold values ('<f4' or '<f2')", pc); goto done; }
    int acodes = A.dtype == NPY_U1 || A.dtype == NPY_U2, bcodes = B.dtype == NPY_U1 || B.dtype == NPY_U2;
    if (acodes != bcodes) { rc = cli_error(sub, "A and B must both hold values or both hold codes"); goto done; }
    D = malloc(sizeof(float) * (M * N + 1));
    if (!D) { rc = cli_error(sub, "out of memory: D is %zu x %zu", M, N); goto done; }
    if (pc) {
        Cf = malloc(sizeof(float) * (M * N + 1));
        if (!Cf) { rc = cli_error(sub, "out of memory"); goto done; }
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) Cf[i * N + j] = (float)npy_get(&C, i, j);
    }
    fpemu_gemm_stats st;
    memset(&st, 0, sizeof st);
    if (cublas) {
        int fp8 = cfg.afmt->bits == 8 && cfg.bfmt->bits == 8;
        const char *dname = cfg.outfmt ? cfg.outfmt->name : "f32";
        if (fast_accum && !fp8) { rc = cli_error(sub, "--fast-accum is for fp8 inputs (torch._scaled_mm)"); goto done; }
        if (call_shape && ((size_t)cK != K || (size_t)cM < M || (size_t)cN < N)) {
            rc = cli_error(sub, "--call-shape %s: the matrices (%zu x %zu x %zu) must be rows and columns of that call (the same K)",
                           call_shape, M, N, K);
            goto done;
        }
        int tM = call_shape ? cM : (int)M, tN = call_shape ? cN : (int)N;
        /* the library resolves the call: the table's row, or the plain model */
        const fpemu_sumtree_row *row;
        fpemu_sumtree tree;
        fpemu_sumtree_bound bd;
        if (fpemu_sumtree_resolve_op(&tab, op, model, cfg.afmt, cfg.bfmt, cfg.outfmt, fast_accum, tM, tN, (int)K, &tree, &row,
                                     err, sizeof err)) {
            rc = cli_error(sub, "--algo cublas: %s", err);
            goto done;
        }
        if (no_rpr) fpemu_sumtree_no_reduced_precision(&tree);
        if (fpemu_sumtree_bind(&bd, &tree, cfg.afmt, cfg.bfmt, err, sizeof err)) { rc = cli_error(sub, "--algo cublas: %s", err); goto done; }
        Ac = malloc(sizeof(uint64_t) * (M * K + 1));
        Bc = malloc(sizeof(uint64_t) * (K * N + 1));
        if (!Ac || !Bc) { rc = cli_error(sub, "out of memory"); goto done; }
        /* the values are cast to the bound tree's operand formats (the
         * call's, or f32 where the row says the kernel reads tf32 calls'
         * f32 data as it is) */
        if (acodes) {
            if (bd.fa != cfg.afmt || bd.fb != cfg.bfmt) { rc = cli_error(sub, "--algo cublas: the row reads %s operands: give values, not codes", bd.fa->name); goto done; }
            if ((rc = load_codes(sub, &A, pa, cfg.afmt, M, K, ta, Ac)) || (rc = load_codes(sub, &B, pb, cfg.bfmt, K, N, tb, Bc))) goto done;
        } else {
            Af = malloc(sizeof(float) * (M * K + 1));
            Bf = malloc(sizeof(float) * (K * N + 1));
            if (!Af || !Bf) { rc = cli_error(sub, "out of memory"); goto done; }
            for (size_t i = 0; i < M; i++)
                for (size_t k = 0; k < K; k++) Af[i * K + k] = (float)(ta ? npy_get(&A, k, i) : npy_get(&A, i, k));
            for (size_t k = 0; k < K; k++)
                for (size_t j = 0; j < N; j++) Bf[k * N + j] = (float)(tb ? npy_get(&B, j, k) : npy_get(&B, k, j));
            if (fpemu_gemm_quantize_f32(&cfg.scaling, bd.fa, (int)M, (int)K, Af, 0, cfg.sat, NULL, Ac, NULL, NULL, NULL, NULL, &st.a,
                                        err, sizeof err) ||
                fpemu_gemm_quantize_f32(&cfg.scaling, bd.fb, (int)K, (int)N, Bf, 0, cfg.sat, NULL, Bc, NULL, NULL, NULL, NULL, &st.b,
                                        err, sizeof err)) {
                rc = cli_error(sub, "%s", err);
                goto done;
            }
        }
        if (fpemu_sumtree_gemm_codes(&bd, (int)M, (int)N, (int)K, Ac, Bc, Cf, (int)threads, D, err, sizeof err)) {
            rc = cli_error(sub, "%s", err);
            goto done;
        }
        if (npy_write_f32(out, D, M, N, err, sizeof err)) { rc = cli_error(sub, "%s", err); goto done; }
        char tb2[400];
        fpemu_sumtree_format(&tree, tb2, sizeof tb2);
        char as[160] = "";
        if (call_shape) snprintf(as, sizeof as, " (of a %d x %d x %zu call)", tM, tN, K);
        if (op && strcmp(op, "mm")) snprintf(as + strlen(as), sizeof as - strlen(as), ", op %s", op);
        if (no_rpr) snprintf(as + strlen(as), sizeof as - strlen(as), ", reduced-precision reduction off");
        if (row)
            fprintf(stderr, "fpemu gemm: %zu x %zu x %zu%s, model %s (%s x %s -> %s%s), algo cublas: table %s line %d (checked: %s): %s; "
                    "stands for %s\n", M, N, K, as, model, cfg.afmt->name, cfg.bfmt->name, dname, fp8 ? (fast_accum ? ", fast accum" : ", no fast accum") : "",
                    tab.name, row->line, row->status, tb2, tab.stands_for);
        else
            fprintf(stderr, "fpemu gemm: %zu x %zu x %zu%s, model %s (%s x %s -> %s%s), algo cublas: this shape is not in the table %s (%s): "
                    "the plain model, one chain over K: %s\n", M, N, K, as, model, cfg.afmt->name, cfg.bfmt->name, dname,
                    fp8 ? (fast_accum ? ", fast accum" : ", no fast accum") : "", tab.name, tpath, tb2);
        goto done;
    }
    if (acodes) {
        if (cfg.scaling.kind != FPEMU_GEMM_SCALING_NONE) { rc = cli_error(sub, "codes input: --scaling must be none (the codes are used as they are)"); goto done; }
        Ac = malloc(sizeof(uint64_t) * (M * K + 1));
        Bc = malloc(sizeof(uint64_t) * (K * N + 1));
        if (!Ac || !Bc || !D) { rc = cli_error(sub, "out of memory"); goto done; }
        if ((rc = load_codes(sub, &A, pa, cfg.afmt, M, K, ta, Ac)) || (rc = load_codes(sub, &B, pb, cfg.bfmt, K, N, tb, Bc)))
            goto done;
        if (fpemu_gemm_codes(&cfg, (int)M, (int)N, (int)K, Ac, Bc, Cf, NULL, NULL, NULL, 0, D, &st)) { rc = cli_error(sub, "gemm failed (out of memory?)"); goto done; }
    } else {
        Af = malloc(sizeof(float) * (M * K + 1));
        Bf = malloc(sizeof(float) * (K * N + 1));
        if (!Af || !Bf || !D) { rc = cli_error(sub, "out of memory"); goto done; }
        for (size_t i = 0; i < M; i++)
            for (size_t k = 0; k < K; k++) Af[i * K + k] = (float)(ta ? npy_get(&A, k, i) : npy_get(&A, i, k));
        for (size_t k = 0; k < K; k++)
            for (size_t j = 0; j < N; j++) Bf[k * N + j] = (float)(tb ? npy_get(&B, j, k) : npy_get(&B, k, j));
        if (fpemu_gemm_check(&cfg, (int)M, (int)N, (int)K, (int)K, 0, (int)N, 0, (int)N, (int)N, err, sizeof err)) { rc = cli_error(sub, "%s", err); goto done; }
        if (fpemu_gemm_f32(&cfg, (int)M, (int)N, (int)K, Af, (int)K, 0, Bf, (int)N, 0, Cf, (int)N, D, (int)N, &st)) { rc = cli_error(sub, "gemm failed (out of memory?)"); goto done; }
    }
    if (npy_write_f32(out, D, M, N, err, sizeof err)) { rc = cli_error(sub, "%s", err); goto done; }
    fprintf(stderr, "fpemu gemm: %zu x %zu x %zu, model %s (%s x %s), scaling %s%s: %llu outputs on the scalar model; "
            "A amax %g scale %g, B amax %g scale %g; %llu/%llu A and %llu/%llu B elements saturated\n",
            M, N, K, model, cfg.afmt->name, cfg.bfmt->name, recipe, acodes ? " (codes)" : "", (unsigned long long)st.slow_outputs,
            st.amax_a, st.scale_a, st.amax_b, st.scale_b, (unsigned long long)st.a.saturated, (unsigned long long)st.a.n,
            (unsigned long long)st.b.saturated, (unsigned long long)st.b.n);
done:
    npy_free(&A), npy_free(&B), npy_free(&C);
    free(Af), free(Bf), free(Cf), free(D), free(Ac), free(Bc);
    fpemu_sumtree_table_free(&tab);
    return rc;
}
