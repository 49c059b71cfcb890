/* SPDX-License-Identifier: MIT */
/* cmd_gemm.c: `fpemu gemm`: D = A x B (+ C) from .npy files through the
 * emulated low-precision GEMM (emu/gemm.h).
 *
 *   fpemu gemm --model M --a A.npy --b B.npy [--c C.npy] --afmt F [--bfmt F]
 *              [--scaling RECIPE] [--promote N] [--outfmt F] [--threads N]
 *              [--ta] [--tb] [--set KEY=VALUE]... --out D.npy
 * A and B hold values ('<f4', '<f2'), quantised per the recipe, or raw
 * codes ('|u1', '<u2') of --afmt/--bfmt, used as they are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "gemm.h"
#include "mma.h"
#include "npy.h"

static void usage(FILE *out) {
    char names[400];
    fpemu_mma_preset_list(names, sizeof names, ", ");
    fprintf(out,
            "usage: fpemu gemm --model M --a A.npy --b B.npy [--c C.npy] --afmt F [--bfmt F] [--scaling R]\n"
            "                  [--promote N] [--outfmt F] [--threads N] [--ta] [--tb] [--set K=V]... --out D.npy\n"
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

int cmd_gemm(int argc, char **argv) {
    const char *sub = "gemm";
    const char *model = NULL, *pa = NULL, *pb = NULL, *pc = NULL, *afmt = NULL, *bfmt = NULL, *recipe = "none";
    const char *outfmt = NULL, *out = NULL, *sets[32];
    int nsets = 0, ta = 0, tb = 0;
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
        } else if (!strcmp(s, "--ta")) ta = 1;
        else if (!strcmp(s, "--tb")) tb = 1;
        else return cli_error(sub, "unknown option '%s' (see fpemu gemm --help)", s);
    }
    if (!model) return cli_error(sub, "--model is required");
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
    npy_array A, B, C;
    memset(&C, 0, sizeof C);
    if (npy_read(pa, &A, err, sizeof err)) return cli_error(sub, "%s", err);
    if (npy_read(pb, &B, err, sizeof err)) { npy_free(&A); return cli_error(sub, "%s", err); }
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
    return rc;
}
