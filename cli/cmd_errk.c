/* SPDX-License-Identifier: MIT */
/* cmd_errk.c: `fpemu errk`, the error of tensor-core accumulation against
 * K (DeepSeek-V3 technical report, sections 3.3.2 and 3.5.2: Hopper fp8
 * accumulation error grows with K, about 2% worst-case relative error near
 * K = 4096, and promotion to f32 every 128 elements removes it; see
 * docs/experiments.md).
 *
 * For each input kind, K and configuration, `dots` random dot products
 * a.b (a, b of length K) are quantised to the input format (e4m3: per-tensor
 * current scaling over the whole batch, TE's rule; f16/bf16: rne), computed
 * by the model, and compared with the exact dot product of the same
 * quantised values (MPFR, ref_dot): relative error |d - exact| / |exact|,
 * max and mean over the dots. Two input distributions: "normal" (a, b ~
 * N(0, 1): sums cancel, so |exact| is sometimes small) and "shifted" (a, b ~
 * N(0.5, 1): sums grow with K, like post-activation inputs).
 * CSV to --out (cli_atomic: a regular file atomically, a link's target, a
 * device or FIFO in place) or standard output; a failed write is exit 2. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "mma.h"
#include "ref_dot.h"
#include "scaling.h"

typedef struct { const char *label, *model, *input; int promote; } errk_cfg;

/* The configurations: every preset row's `errk` list (emu/mma.c's table,
 * fpemu_mma_preset_info.errk: "POS:INPUT[:PROMOTE] ..."), in POS order. */
#define ERRK_MAXCFG 64
typedef struct { char label[96], input[16]; const char *model; int promote, pos; } errk_row;
static errk_cfg cfgs[ERRK_MAXCFG];
static errk_row cfg_rows[ERRK_MAXCFG];
static int NCFG;

static void errk_configs(void) {
    NCFG = 0;
    for (int i = 0; i < fpemu_mma_preset_count(); i++) {
        const fpemu_mma_preset_info *p = fpemu_mma_preset_get(i);
        for (const char *s = p->errk; s && *s && NCFG < ERRK_MAXCFG;) {
            errk_row *r = &cfg_rows[NCFG];
            int used = 0, promote = 0;
            char input[16];
            if (sscanf(s, "%d:%15[^: ]%n", &r->pos, input, &used) != 2) break;
            s += used;
            if (*s == ':') {
                int u2 = 0;
                if (sscanf(s, ":%d%n", &promote, &u2) != 1) break;
                s += u2;
            }
            while (*s == ' ') s++;
            snprintf(r->input, sizeof r->input, "%s", input);
            r->model = p->name, r->promote = promote;
            char pr[32] = "";
            if (promote) snprintf(pr, sizeof pr, " + promote %d", promote);
            snprintf(r->label, sizeof r->label, "%s %s%s%s", p->name, input, pr, p->errk_note ? p->errk_note : "");
            NCFG++;
        }
    }
    /* insertion sort by POS (stable) */
    for (int i = 1; i < NCFG; i++)
        for (int j = i; j > 0 && cfg_rows[j - 1].pos > cfg_rows[j].pos; j--) {
            errk_row t = cfg_rows[j];
            cfg_rows[j] = cfg_rows[j - 1], cfg_rows[j - 1] = t;
        }
    for (int i = 0; i < NCFG; i++)
        cfgs[i] = (errk_cfg){cfg_rows[i].label, cfg_rows[i].model, cfg_rows[i].input, cfg_rows[i].promote};
}

/* Limits: K up to 2^20, up to 100000 dots per K, and at most 2^24 elements
 * (dots x kmax, 24 bytes each: 384 MiB) held at once; the default run is
 * 64 x 16384 = 2^20. */
#define ERRK_KMAX (1 << 20)
#define ERRK_DOTS 100000
#define ERRK_ELEMS (1ULL << 24)
#define ERRK_BYTES (2 * sizeof(uint64_t) + 2 * sizeof(float))

static uint64_t rng;
static double urand(void) {
    rng = fpemu_random64(rng, 0x5EED);
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double nrand(void) { return sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand()); }

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu errk [--kmin N] [--kmax N] [--dots N] [--seed N] [--out FILE.csv]\n"
            "\n"
            "Relative error of tensor-core models' dot products against the exact dot product\n"
            "(MPFR) for K = kmin, 2 kmin, ..., kmax (default 64..16384, 64 dots per K), inputs\n"
            "e4m3 (per-tensor current scaling), f16 and bf16, distributions normal and shifted.\n"
            "Writes CSV: dist,config,model,input,promote,K,max_rel_err,mean_rel_err,dots.\n"
            "Limits: kmax <= 2^20, dots <= 100000, dots x kmax <= 2^24 (the inputs held at once,\n"
            "24 bytes an element). --out: a regular file is replaced atomically, a symbolic link's\n"
            "target is written (the link stays), a device or FIFO is written in place. A failed\n"
            "write or allocation: a message, exit status 2, no file or NAME.tmp.PID left.\n");
}

int cmd_errk(int argc, char **argv) {
    const char *sub = "errk";
    unsigned long long kmin = 64, kmax = 16384, dots = 64, seed = 20241226;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        unsigned long long *dst = NULL;
        if (cli_is_help(s)) { usage(stdout); return cli_stdout_done(sub, 0); }
        if (!strcmp(s, "--kmin")) dst = &kmin;
        else if (!strcmp(s, "--kmax")) dst = &kmax;
        else if (!strcmp(s, "--dots")) dst = &dots;
        else if (!strcmp(s, "--seed")) dst = &seed;
        else if (!strcmp(s, "--out")) {
            if (i + 1 >= argc) return cli_error(sub, "--out needs a file name");
            out = argv[++i];
            continue;
        } else return cli_error(sub, "unknown option '%s' (see fpemu errk --help)", s);
        if (i + 1 >= argc || cli_parse_u64(argv[i + 1], dst)) return cli_error(sub, "%s needs a non-negative integer", s);
        i++;
    }
    if (kmin < 1 || kmax < kmin || kmax > ERRK_KMAX)
        return cli_error(sub, "--kmin %llu --kmax %llu: need 1 <= kmin <= kmax <= %d", kmin, kmax, ERRK_KMAX);
    if (dots < 1 || dots > ERRK_DOTS) return cli_error(sub, "--dots %llu: expected 1 to %d", dots, ERRK_DOTS);
    /* the largest K's batch is held at once: 24 bytes per element (two f32
     * inputs, two 64-bit code arrays) */
    if (dots * kmax > ERRK_ELEMS)
        return cli_error(sub, "--dots %llu x --kmax %llu = %llu elements: expected at most %llu (%llu MiB of inputs; "
                              "fewer dots or a smaller kmax)", dots, kmax, dots * kmax, (unsigned long long)ERRK_ELEMS,
                         (unsigned long long)ERRK_ELEMS * ERRK_BYTES >> 20);
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0);
    errk_configs();
    fpemu_mma_model models[ERRK_MAXCFG];
    for (int c = 0; c < NCFG; c++) {
        char err[256];
        const fpemu_format *fi = fpemu_format_get(cfgs[c].input, NULL, 0);
        if (fpemu_mma_model_preset(&models[c], cfgs[c].model, fi, fi, f32, f32, err, sizeof err)) return cli_error(sub, "%s", err);
    }
    static const char *inputs[] = {"e4m3", "f16", "bf16"};
    static const char *dists[] = {"normal", "shifted"};
    size_t nd = (size_t)dots, ne = nd * (size_t)kmax;
    /* everything is allocated before the output is opened: running out of
     * memory leaves no file (and no NAME.tmp.PID) behind */
    uint64_t *A = malloc(sizeof(uint64_t) * ne), *B = malloc(sizeof(uint64_t) * ne);
    float *xa = malloc(sizeof(float) * ne), *xb = malloc(sizeof(float) * ne);
    double *exact = malloc(sizeof(double) * nd);
    int status = 0, opened = 0;
    cli_atomic at;
    FILE *fp = stdout;
    if (!A || !B || !xa || !xb || !exact) {
        status = cli_error(sub, "out of memory: --dots %llu x --kmax %llu needs %llu MiB", dots, kmax,
                           (unsigned long long)(ne * ERRK_BYTES + nd * sizeof(double)) >> 20);
        goto done;
    }
    if (out) {
        if (cli_atomic_open(&at, out, "w")) {
            status = cli_error(sub, "--out %s: cannot write: %s", out, strerror(errno));
            goto done;
        }
        fp = at.f;
        opened = 1;
    }
    fprintf(fp, "dist,config,model,input,promote,K,max_rel_err,mean_rel_err,dots\n");
    for (int di = 0; di < 2; di++)
        for (int ii = 0; ii < 3; ii++) {
            const fpemu_format *fi = fpemu_format_get(inputs[ii], NULL, 0);
            for (unsigned long long K = kmin; K <= kmax; K *= 2) {
                rng = seed ^ (uint64_t)K * 1315423911u ^ (uint64_t)(di * 3 + ii) << 40;
                size_t n = nd * (size_t)K;
                double mu = di ? 0.5 : 0.0;
                for (size_t i = 0; i < n; i++) xa[i] = (float)(nrand() + mu), xb[i] = (float)(nrand() + mu);
                fpemu_ctx ctx;
                fpemu_ctx_init(&ctx);
                ctx.sat = 1;
                float sa = 1, sb = 1;
                if (!strcmp(inputs[ii], "e4m3")) { /* per-tensor current scaling (TE) */
                    fpemu_scaling_current_opts o;
                    fpemu_scaling_current_opts_te(&o);
                    sa = fpemu_scaling_current_scale(&o, fpemu_scaling_amax_f32(xa, n, 1), fi->max_finite);
                    sb = fpemu_scaling_current_scale(&o, fpemu_scaling_amax_f32(xb, n, 1), fi->max_finite);
                }
                for (size_t i = 0; i < n; i++) {
                    A[i] = fpemu_from_float(fi, xa[i] * sa, &ctx);
                    B[i] = fpemu_from_float(fi, xb[i] * sb, &ctx);
                }
                for (size_t d = 0; d < nd; d++)
                    exact[d] = ref_dot_double(fi, fi, f32, A + d * K, B + d * K, (size_t)K, 0);
                for (int c = 0; c < NCFG; c++) {
                    if (strcmp(cfgs[c].input, inputs[ii])) continue;
                    const fpemu_mma_model *m = &models[c];
                    double mx = 0, sum = 0;
                    size_t cnt = 0;
                    for (size_t d = 0; d < nd; d++) {
                        const uint64_t *a = A + d * K, *b = B + d * K;
                        double v;
                        if (cfgs[c].promote) { /* DeepGEMM: each chunk from 0, added on the CUDA cores in f32 */
                            float acc = 0;
                            for (size_t i0 = 0; i0 < K; i0 += (size_t)cfgs[c].promote) {
                                size_t len = K - i0 < (size_t)cfgs[c].promote ? K - i0 : (size_t)cfgs[c].promote;
                                float part = (float)fpemu_to_double(f32, fpemu_mma_dot(m, a + i0, b + i0, len, 0, NULL));
                                acc = fmaf(part, 1.0f, acc);
                            }
                            v = acc;
                        } else {
                            v = fpemu_to_double(f32, fpemu_mma_dot(m, a, b, (size_t)K, 0, NULL));
                        }
                        if (exact[d] == 0 || !isfinite(exact[d])) continue;
                        double e = fabs(v - exact[d]) / fabs(exact[d]);
                        if (e > mx) mx = e;
                        sum += e;
                        cnt++;
                    }
                    fprintf(fp, "%s,%s,%s,%s,%d,%llu,%.6g,%.6g,%zu\n", dists[di], cfgs[c].label, cfgs[c].model, inputs[ii],
                            cfgs[c].promote, K, mx, cnt ? sum / (double)cnt : 0.0, cnt);
                }
                if (ferror(fp)) goto written; /* a failed write: stop here, say so below */
            }
        }
written:
    if (opened) {
        int e = ferror(fp) ? errno : 0;
        if (cli_atomic_close(&at, !ferror(fp))) status = cli_error(sub, "--out %s: cannot write: %s", out, strerror(e ? e : errno));
    } else {
        status = cli_stdout_done(sub, status);
    }
done:
    free(A), free(B), free(xa), free(xb), free(exact);
    return status;
}
