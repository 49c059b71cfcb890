/* SPDX-License-Identifier: MIT */
/* cmd_cast.c: `fpemu cast`: cast a tensor (.npy) to a format, with or
 * without a scaling recipe, and say what it did to it (docs/cast.md).
 *
 *   fpemu cast --to FMT --in X.npy --out Y.npy [--from FMT] [--round MODE] [--sat]
 *              [--seed S] [--scaling RECIPE] [--axis N] [--codes] [--nan POLICY]
 *              [--stats FILE|-] [--stats-json FILE|-] [--plot FILE.png]
 *
 * The recipes are the library's (fpemu_gemm_quantize_f32, the one
 * implementation `fpemu gemm` uses); this file only moves data, counts
 * errors and draws. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "gemm.h"
#include "npy.h"

#define SUB "cast"
#define MAXDIM 16

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu cast --to FMT --in X.npy --out Y.npy [--from FMT] [--round MODE] [--sat] [--seed S]\n"
            "                  [--scaling R] [--axis N] [--codes] [--nan POLICY]\n"
            "                  [--stats FILE|-] [--stats-json FILE|-] [--plot FILE.png]\n"
            "\n"
            "Cast every element of X to FMT (fpemu formats) and write Y of X's shape: the values\n"
            "('<f4', or '<f8' for an '<f8' input), or with --codes the raw codes ('|u1', '<u2', '<u4',\n"
            "'<u8' by the format's container).\n"
            "X: '<f8', '<f4', '<f2', or ml_dtypes arrays as np.save writes them: bfloat16 ('<V2'),\n"
            "float8_e5m2 ('<f1'), and the other one-byte types ('<V1', '|V1'), which need --from NAME\n"
            "(e4m3, e4m3fnuz, e5m2fnuz, e3m4, e8m0, e2m1, ...: the file does not say which); C order.\n"
            "  --round MODE   rne (default), rna, rtz, rup, rdn, rto, sr (--seed S for sr's stream)\n"
            "  --sat          overflow saturates to max finite (without --scaling; the recipes saturate)\n"
            "  --scaling R    none (default), tensor (TE current), tensor-torchao, rowwise (torchao,\n"
            "                 pow2 scales), blockwise (1 x 128 tiles, DeepSeek-V3), mx-floor, mx-rceil\n"
            "                 (blocks of 32, e8m0 scales), nvfp4 (e2m1, blocks of 16, e4m3 scales):\n"
            "                 the recipes of fpemu gemm, A's side; mx and nvfp4 cast with rne only\n"
            "  --axis N       the axis the rowwise/blockwise/MX/NVFP4 blocks run along (amax over it):\n"
            "                 -ndim..ndim-1, default -1 (a 2-D X: one rowwise scale per row)\n"
            "  --nan POLICY   canonical (default), x86, cuda, torch (PyTorch's own .to(float8_*))\n"
            "  --stats F      figures as text (- for standard output); --stats-json F as JSON\n"
            "  --plot F.png   histogram of log2|x| before and after scaling, the format's range marked\n"
            "                 (needs gnuplot)\n"
            "Outputs are written whole or not at all. Bad input: a message naming it, exit status 2.\n");
}

/* ---- .npy reading (N-d, C order) ---------------------------------------- */

typedef enum { IN_F8, IN_F4, IN_F2, IN_B1, IN_B2 } in_kind; /* B1/B2: codes of a --from format */

typedef struct {
    in_kind kind;
    int ndim;
    size_t shape[MAXDIM];
    size_t n;
    unsigned char *data;
    char descr[32];
} tensor;

static int rd_fail(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rd_fail(const char *path, const char *fmt, ...) {
    char m[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return cli_error(SUB, "%s: %s", path, m);
}

static int read_npy(const char *path, tensor *t) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) return rd_fail(path, "cannot open: %s", strerror(errno));
    unsigned char pre[12];
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6)) { fclose(f); return rd_fail(path, "not a .npy file (bad magic)"); }
    size_t hl;
    if (pre[6] == 1) {
        if (fread(pre + 8, 1, 2, f) != 2) { fclose(f); return rd_fail(path, "truncated header"); }
        hl = pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 8, 1, 4, f) != 4) { fclose(f); return rd_fail(path, "truncated header"); }
        hl = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        if (hl > 1 << 20) { fclose(f); return rd_fail(path, "header too long"); }
    } else {
        fclose(f);
        return rd_fail(path, "unsupported .npy version %d", pre[6]);
    }
    char *h = malloc(hl + 1);
    if (!h || fread(h, 1, hl, f) != hl) { free(h), fclose(f); return rd_fail(path, "truncated header"); }
    h[hl] = 0;
    const char *d = npy_header_key(h, "descr");
    if (!d || (*d != '\'' && *d != '"')) { free(h), fclose(f); return rd_fail(path, "bad header: no 'descr' string"); }
    char q = *d++;
    size_t n = 0;
    while (*d && *d != q && n < sizeof t->descr - 1) t->descr[n++] = *d++;
    t->descr[n] = 0;
    const char *ds = t->descr;
    size_t isz;
    if (!strcmp(ds, "<f8")) t->kind = IN_F8, isz = 8;
    else if (!strcmp(ds, "<f4")) t->kind = IN_F4, isz = 4;
    else if (!strcmp(ds, "<f2")) t->kind = IN_F2, isz = 2;
    else if (!strcmp(ds, "<V2") || !strcmp(ds, "|V2")) t->kind = IN_B2, isz = 2;
    else if (!strcmp(ds, "<V1") || !strcmp(ds, "|V1") || !strcmp(ds, "<f1") || !strcmp(ds, "|f1")) t->kind = IN_B1, isz = 1;
    else {
        free(h), fclose(f);
        return rd_fail(path, "unsupported dtype '%s' (expected '<f8', '<f4', '<f2', or an ml_dtypes type: bfloat16 '<V2', "
                             "float8_* '<V1' / '<f1')", ds);
    }
    const char *fo = npy_header_key(h, "fortran_order");
    if (!fo) { free(h), fclose(f); return rd_fail(path, "bad header: no 'fortran_order'"); }
    const char *s = npy_header_key(h, "shape");
    if (!s || *s != '(') { free(h), fclose(f); return rd_fail(path, "bad header: no 'shape' tuple"); }
    s++;
    t->n = 1;
    for (;;) {
        while (*s == ' ') s++;
        if (*s == ')') break;
        char *e;
        errno = 0;
        unsigned long long v = strtoull(s, &e, 10);
        if (e == s || errno || v > (1ULL << 40)) { free(h), fclose(f); return rd_fail(path, "bad header: malformed shape"); }
        if (t->ndim == MAXDIM) { free(h), fclose(f); return rd_fail(path, "more than %d dimensions", MAXDIM); }
        t->shape[t->ndim++] = (size_t)v;
        t->n *= (size_t)v;
        if (t->n > (1ULL << 31) - 1) { free(h), fclose(f); return rd_fail(path, "too many elements (at most 2^31 - 1)"); }
        s = e;
        while (*s == ' ') s++;
        if (*s == ',') s++;
        else if (*s != ')') { free(h), fclose(f); return rd_fail(path, "bad header: malformed shape"); }
    }
    int fortran = !strncmp(fo, "True", 4);
    free(h);
    if (fortran && t->ndim > 1) { fclose(f); return rd_fail(path, "Fortran-order arrays are not supported (save np.ascontiguousarray(x))"); }
    if (t->ndim == 0) { fclose(f); return rd_fail(path, "a 0-d array (save at least a 1-d array)"); }
    t->data = malloc(t->n * isz + 1);
    if (!t->data) { fclose(f); return rd_fail(path, "out of memory"); }
    if (fread(t->data, 1, t->n * isz, f) != t->n * isz) { fclose(f); return rd_fail(path, "truncated data (shape does not match the file size)"); }
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (extra) return rd_fail(path, "trailing data after the array (shape does not match the file size)");
    return 0;
}

/* ---- output ------------------------------------------------------------- */

static int write_npy(const char *path, const tensor *t, const char *descr, const void *data, size_t isz) {
    cli_atomic at;
    if (cli_atomic_open(&at, path, "wb")) return cli_error(SUB, "--out %s: cannot write: %s", path, strerror(errno));
    int ok = npy_write_header(at.f, descr, t->shape, t->ndim) == 0;
    ok = ok && (t->n == 0 || fwrite(data, isz, t->n, at.f) == t->n); /* little-endian host (Makefile checks) */
    if (cli_atomic_close(&at, ok) || !ok) return cli_error(SUB, "--out %s: write failed: %s", path, strerror(errno));
    return 0;
}

/* Text to FILE or "-" (standard output), whole or not at all. */
static int write_text(const char *opt, const char *path, const char *text) {
    if (!strcmp(path, "-")) { fputs(text, stdout); return 0; }
    cli_atomic at;
    if (cli_atomic_open(&at, path, "w")) return cli_error(SUB, "%s %s: cannot write: %s", opt, path, strerror(errno));
    int ok = fputs(text, at.f) >= 0;
    if (cli_atomic_close(&at, ok) || !ok) return cli_error(SUB, "%s %s: write failed: %s", opt, path, strerror(errno));
    return 0;
}

/* ---- growing text buffer ------------------------------------------------ */

typedef struct { char *s; size_t n, cap; int oom; } sbuf;
static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { b->oom = 1; return; }
        if (b->s && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
        size_t cap = (b->cap + (size_t)k + 1) * 2;
        char *p = realloc(b->s, cap);
        if (!p) { b->oom = 1; return; }
        b->s = p, b->cap = cap;
    }
}

/* JSON number (finite) or null (inf/NaN). */
static void sb_num(sbuf *b, double v) {
    if (isfinite(v)) sb_printf(b, "%.17g", v);
    else sb_printf(b, "null");
}

/* ---- the figures ---------------------------------------------------------- */

typedef struct {
    size_t n, overflow, saturated, underflow, subnormal, nonfinite_in, compared;
    double amax, max_abs, max_rel, sum_e2, sum_x2;
    int have_scale;     /* per-tensor scale */
    double scale;       /* encode scale */
    size_t nscales;     /* per-block decode factors */
    double smin, smax;
    double tensor_scale; /* nvfp4 */
} figures;

static void errors(figures *F, const double *x, const double *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        double e = fabs(y[i] - x[i]);
        F->compared++;
        if (e > F->max_abs) F->max_abs = e;
        if (x[i] != 0 && e / fabs(x[i]) > F->max_rel) F->max_rel = e / fabs(x[i]);
        F->sum_e2 += e * e;
        F->sum_x2 += x[i] * x[i];
    }
}

static double frac(size_t k, size_t n) { return n ? (double)k / (double)n : 0.0; }

static void stats_text(sbuf *b, const figures *F, const char *fmt, const char *recipe) {
    double rms = F->compared ? sqrt(F->sum_e2 / (double)F->compared) : 0;
    double sqnr = F->sum_e2 > 0 ? 10 * log10(F->sum_x2 / F->sum_e2) : INFINITY;
    sb_printf(b, "format        %s\nscaling       %s\nn             %zu\namax          %.9g\n", fmt, recipe, F->n, F->amax);
    if (F->have_scale) sb_printf(b, "scale         %.9g\n", F->scale);
    if (F->nscales) sb_printf(b, "block scales  %zu (decode factors, min %.9g, max %.9g)\n", F->nscales, F->smin, F->smax);
    if (F->tensor_scale) sb_printf(b, "tensor scale  %.9g\n", F->tensor_scale);
    const char *nm[] = {"overflow", "saturated", "flushed", "subnormal", "nonfinite_in"};
    size_t v[] = {F->overflow, F->saturated, F->underflow, F->subnormal, F->nonfinite_in};
    for (int i = 0; i < 5; i++) sb_printf(b, "%-13s %zu (%.6g%%)\n", nm[i], v[i], 100 * frac(v[i], F->n));
    sb_printf(b, "max_abs_err   %.9g\nmax_rel_err   %.9g\nrms_err       %.9g\nsqnr_db       %.6g\n", F->max_abs, F->max_rel, rms, sqnr);
}

static void stats_json(sbuf *b, const figures *F, const char *fmt, const char *recipe) {
    double rms = F->compared ? sqrt(F->sum_e2 / (double)F->compared) : 0;
    double sqnr = F->sum_e2 > 0 ? 10 * log10(F->sum_x2 / F->sum_e2) : INFINITY;
    sb_printf(b, "{\"format\": \"%s\", \"scaling\": \"%s\", \"n\": %zu, \"amax\": ", fmt, recipe, F->n);
    sb_num(b, F->amax);
    sb_printf(b, ", \"scale\": ");
    if (F->have_scale) sb_num(b, F->scale);
    else sb_printf(b, "null");
    sb_printf(b, ", \"block_scales\": ");
    if (F->nscales) {
        sb_printf(b, "{\"count\": %zu, \"min\": ", F->nscales);
        sb_num(b, F->smin);
        sb_printf(b, ", \"max\": ");
        sb_num(b, F->smax);
        sb_printf(b, "}");
    } else sb_printf(b, "null");
    sb_printf(b, ", \"tensor_scale\": ");
    if (F->tensor_scale) sb_num(b, F->tensor_scale);
    else sb_printf(b, "null");
    const char *nm[] = {"overflow", "saturated", "flushed", "subnormal", "nonfinite_in"};
    size_t v[] = {F->overflow, F->saturated, F->underflow, F->subnormal, F->nonfinite_in};
    for (int i = 0; i < 5; i++) {
        sb_printf(b, ", \"%s\": %zu, \"%s_frac\": ", nm[i], v[i], nm[i]);
        sb_num(b, frac(v[i], F->n));
    }
    sb_printf(b, ", \"compared\": %zu, \"max_abs_err\": ", F->compared);
    sb_num(b, F->max_abs);
    sb_printf(b, ", \"max_rel_err\": ");
    sb_num(b, F->max_rel);
    sb_printf(b, ", \"rms_err\": ");
    sb_num(b, rms);
    sb_printf(b, ", \"sqnr_db\": ");
    sb_num(b, sqnr);
    sb_printf(b, "}\n");
}

/* ---- plot ---------------------------------------------------------------- */

/* Histogram of floor(log2|v|) of the finite nonzero values, before (x) and
 * after scaling (s), drawn by gnuplot into PATH (a temporary beside it,
 * renamed when complete). */
static int plot(const char *path, const double *x, const double *s, size_t n, const fpemu_format *f, const char *recipe) {
    enum { LO = -1100, HI = 1100 };
    size_t *hx = calloc(HI - LO + 1, sizeof *hx), *hs = calloc(HI - LO + 1, sizeof *hs);
    if (!hx || !hs) { free(hx), free(hs); return cli_error(SUB, "--plot: out of memory"); }
    int lo = HI, hi = LO;
    for (size_t i = 0; i < n; i++)
        for (int w = 0; w < 2; w++) {
            double v = w ? s[i] : x[i];
            if (!isfinite(v) || v == 0) continue;
            int e;
            frexp(v, &e);
            e -= 1;
            (w ? hs : hx)[e - LO]++;
            if (e < lo) lo = e;
            if (e > hi) hi = e;
        }
    char dat[4200], gp[4200], tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.png", path, (long)getpid());
    snprintf(dat, sizeof dat, "%s.tmp.%ld.dat", path, (long)getpid());
    snprintf(gp, sizeof gp, "%s.tmp.%ld.gp", path, (long)getpid());
    FILE *d = fopen(dat, "w"), *g = d ? fopen(gp, "w") : NULL;
    if (!d || !g) {
        int e = errno;
        if (d) fclose(d), unlink(dat);
        free(hx), free(hs);
        return cli_error(SUB, "--plot %s: cannot write: %s", path, strerror(e));
    }
    if (lo > hi) lo = hi = 0;
    for (int e = lo; e <= hi; e++) fprintf(d, "%d %zu %zu\n", e, hx[e - LO], hs[e - LO]);
    free(hx), free(hs);
    double lsub = log2(f->min_subnormal > 0 ? f->min_subnormal : f->min_normal), lnorm = log2(f->min_normal), lmax = log2(f->max_finite);
    fprintf(g,
            "set terminal pngcairo size 900,450 enhanced font 'sans,10'\nset output '%s'\n"
            "set title 'fpemu cast to %s, scaling %s: where the tensor sits' noenhanced\n"
            "set xlabel 'floor(log2 |x|)'\nset ylabel 'elements'\nset style fill transparent solid 0.45 noborder\n"
            "set boxwidth 0.9\nset grid ytics lc rgb '#e0e0e0'\nset key outside right top\n"
            "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lc rgb '#2ca02c' dt 2 lw 2\n"
            "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lc rgb '#1f77b4' dt 2 lw 2\n"
            "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lc rgb '#d62728' dt 2 lw 2\n"
            "set xrange [%d:%d]\n"
            "plot '%s' using 1:2 with boxes lc rgb '#7f7f7f' title 'before scaling', "
            "'' using 1:3 with boxes lc rgb '#ff7f0e' title 'after scaling (cast input)', "
            "NaN with lines lc rgb '#2ca02c' dt 2 lw 2 title sprintf('min subnormal 2^{%%g}', %.17g), "
            "NaN with lines lc rgb '#1f77b4' dt 2 lw 2 title sprintf('min normal 2^{%%g}', %.17g), "
            "NaN with lines lc rgb '#d62728' dt 2 lw 2 title sprintf('max %%.4g', %.17g)\n"
            "unset output\n",
            tmp, f->name, recipe, lsub, lsub, lnorm, lnorm, lmax, lmax, (int)fmin(lo, lsub) - 2, (int)fmax(hi, lmax) + 2, dat, lsub, lnorm,
            f->max_finite);
    int okw = !ferror(d) && !ferror(g);
    okw &= fclose(d) == 0;
    okw &= fclose(g) == 0;
    int st = 0x7f00;
    if (okw) {
        fflush(stdout), fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stdout)) _exit(126);
            execlp("gnuplot", "gnuplot", gp, (char *)NULL);
            _exit(127);
        }
        if (pid > 0)
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    }
    unlink(dat), unlink(gp);
    int ok = okw && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (ok) { /* a complete PNG ends with the IEND chunk */
        FILE *p = fopen(tmp, "rb");
        unsigned char b[8];
        ok = p && fseek(p, -8, SEEK_END) == 0 && fread(b, 1, 8, p) == 8 && !memcmp(b, "IEND\xae\x42\x60\x82", 8);
        if (p) fclose(p);
        ok = ok && rename(tmp, path) == 0;
    }
    if (!ok) {
        unlink(tmp);
        if (okw && WIFEXITED(st) && WEXITSTATUS(st) == 127) return cli_error(SUB, "--plot %s: gnuplot not found (install gnuplot)", path);
        return cli_error(SUB, "--plot %s: gnuplot failed or the image could not be written", path);
    }
    return 0;
}

/* ---- the command ----------------------------------------------------------- */

int cmd_cast(int argc, char **argv) {
    const char *to = NULL, *in = NULL, *out = NULL, *from = NULL, *round = "rne", *recipe = "none", *nanp = "canonical";
    const char *stats_path = NULL, *json_path = NULL, *plot_path = NULL, *axis_s = NULL, *seed_s = NULL;
    int sat = 0, codes_out = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char **dst = NULL;
        if (cli_is_help(s)) { usage(stdout); return cli_stdout_done(SUB, 0); }
        if (!strcmp(s, "--to")) dst = &to;
        else if (!strcmp(s, "--in")) dst = &in;
        else if (!strcmp(s, "--out")) dst = &out;
        else if (!strcmp(s, "--from")) dst = &from;
        else if (!strcmp(s, "--round")) dst = &round;
        else if (!strcmp(s, "--scaling")) dst = &recipe;
        else if (!strcmp(s, "--axis")) dst = &axis_s;
        else if (!strcmp(s, "--seed")) dst = &seed_s;
        else if (!strcmp(s, "--nan")) dst = &nanp;
        else if (!strcmp(s, "--stats")) dst = &stats_path;
        else if (!strcmp(s, "--stats-json")) dst = &json_path;
        else if (!strcmp(s, "--plot")) dst = &plot_path;
        if (dst) {
            if (i + 1 >= argc) return cli_error(SUB, "%s needs a value", s);
            *dst = argv[++i];
        } else if (!strcmp(s, "--sat")) sat = 1;
        else if (!strcmp(s, "--codes")) codes_out = 1;
        else return cli_error(SUB, "unknown option '%s' (see fpemu cast --help)", s);
    }
    if (plot_path && strchr(plot_path, '\''))
        return cli_error(SUB, "--plot %s: a path with a single quote is not supported (gnuplot's quoting)", plot_path);
    if (!to) return cli_error(SUB, "--to FMT is required");
    if (!in) return cli_error(SUB, "--in X.npy is required");
    if (!out) return cli_error(SUB, "--out Y.npy is required");
    char err[512];
    const fpemu_format *f = fpemu_format_get(to, err, sizeof err);
    if (!f) return cli_error(SUB, "--to %s: %s", to, err);
    int rm = fpemu_round_parse(round);
    if (rm < 0) return cli_error(SUB, "--round %s: unknown rounding mode (expected rne, rna, rtz, rup, rdn, rto, sr)", round);
    int np = fpemu_nan_policy_parse(nanp);
    if (np < 0) return cli_error(SUB, "--nan %s: unknown NaN policy (expected canonical, x86, cuda, torch)", nanp);
    unsigned long long seed = 0;
    if (seed_s && cli_parse_u64(seed_s, &seed)) return cli_error(SUB, "--seed needs a non-negative integer");
    fpemu_gemm_scaling sc;
    {
        fpemu_gemm_config cfg; /* the recipe's settings, as fpemu gemm sets them */
        memset(&cfg, 0, sizeof cfg);
        if (!strcmp(recipe, "given") || !strcmp(recipe, "delayed"))
            return cli_error(SUB, "--scaling %s: needs scales from a previous step; not supported by cast (expected none, tensor, tensor-torchao, rowwise, blockwise, mx-floor, mx-rceil, nvfp4)", recipe);
        cfg.scaling.block_a_rows = 1, cfg.scaling.block_b_cols = 128, cfg.scaling.block_k = 128, cfg.scaling.block_eps = 1e-4f;
        fpemu_scaling_current_opts_te(&cfg.scaling.cur);
        if (fpemu_gemm_config_set_scaling(&cfg, recipe, err, sizeof err)) return cli_error(SUB, "--scaling %s: %s", recipe, err);
        sc = cfg.scaling;
    }
    int scaled = sc.kind != FPEMU_GEMM_SCALING_NONE;
    if ((sc.kind == FPEMU_GEMM_SCALING_MX || sc.kind == FPEMU_GEMM_SCALING_NVFP4) && rm != FPEMU_RNE)
        return cli_error(SUB, "--round %s: the %s recipe casts with rne only", round, recipe);
    if (sc.kind == FPEMU_GEMM_SCALING_NVFP4 && strcmp(f->name, "e2m1"))
        return cli_error(SUB, "--scaling nvfp4 needs --to e2m1 (got %s)", f->name);

    tensor X;
    if (read_npy(in, &X)) return 2;
    int rc = 2;
    double *xd = NULL, *yd = NULL, *xs = NULL;
    float *xf = NULL, *deq = NULL, *dec = NULL;
    uint64_t *codes = NULL;
    void *obuf = NULL;
    sbuf tb = {0}, jb = {0};
    const fpemu_format *ff = NULL;
    if (X.kind == IN_B1 || X.kind == IN_B2) {
        const char *name = from ? from : X.kind == IN_B2 ? "bf16" : (!strcmp(X.descr, "<f1") || !strcmp(X.descr, "|f1")) ? "e5m2" : NULL;
        if (!name) {
            cli_error(SUB, "%s: one-byte elements ('%s') do not say which ml_dtypes type they are: give --from "
                      "(e4m3, e4m3fnuz, e5m2fnuz, e4m3b11fnuz, e3m4, e8m0, e2m1, e2m3, e3m2, ...)", in, X.descr);
            goto done;
        }
        if (!(ff = fpemu_format_get(name, err, sizeof err))) { cli_error(SUB, "--from %s: %s", name, err); goto done; }
        if (ff->container != (X.kind == IN_B2 ? 16 : 8) || ff->pad) {
            cli_error(SUB, "--from %s: %s holds %d-byte elements ('%s'), %s codes are %d bits", name, in, X.kind == IN_B2 ? 2 : 1,
                      X.descr, ff->name, ff->container);
            goto done;
        }
    } else if (from) {
        cli_error(SUB, "--from is for ml_dtypes inputs ('<V1', '<V2', '<f1'); %s holds '%s'", in, X.descr);
        goto done;
    }
    const int nd = X.ndim;
    long axis = nd - 1;
    if (axis_s) {
        char *e;
        errno = 0;
        long a = strtol(axis_s, &e, 10);
        if (e == axis_s || *e || errno) { cli_error(SUB, "--axis needs an integer"); goto done; }
        if (a < -nd || a >= nd) {
            cli_error(SUB, "--axis %ld: %s is %d-d: the axis must lie in [%d, %d]", a, in, nd, -nd, nd - 1);
            goto done;
        }
        axis = a < 0 ? a + nd : a;
    }
    const size_t n = X.n;
    xd = malloc(sizeof(double) * (n + 1));
    yd = malloc(sizeof(double) * (n + 1));
    xs = malloc(sizeof(double) * (n + 1));
    xf = malloc(sizeof(float) * (n + 1));
    deq = malloc(sizeof(float) * (n + 1));
    codes = malloc(sizeof(uint64_t) * (n + 1));
    if (!xd || !yd || !xs || !xf || !deq || !codes) { cli_error(SUB, "out of memory (%zu elements)", n); goto done; }
    const fpemu_format *f16 = fpemu_format_get("f16", NULL, 0);
    for (size_t i = 0; i < n; i++) {
        double v;
        switch (X.kind) {
        case IN_F8: memcpy(&v, X.data + 8 * i, 8); break;
        case IN_F4: { float g; memcpy(&g, X.data + 4 * i, 4); v = g; break; }
        case IN_F2: { uint16_t c; memcpy(&c, X.data + 2 * i, 2); v = fpemu_to_double(f16, c); break; }
        case IN_B2: { uint16_t c; memcpy(&c, X.data + 2 * i, 2); v = fpemu_to_double(ff, c); break; }
        default: {
            uint64_t c = X.data[i];
            if (c >> ff->bits) {
                cli_error(SUB, "%s: element %zu = 0x%02llX is not a %s code (%d-bit codes)", in, i, (unsigned long long)c, ff->name, ff->bits);
                goto done;
            }
            v = fpemu_to_double(ff, c);
        }
        }
        xd[i] = v;
        xf[i] = (float)v; /* scaling works in f32 (the frameworks' arithmetic): an f64 input is rounded first */
    }
    /* the blocks' layout: element (o, l, i) of (outer, L, inner) as row o*inner+i, column l */
    size_t L = X.shape[axis], inner = 1, outer = 1;
    for (int k = 0; k < nd; k++) {
        if (k < axis) outer *= X.shape[k];
        else if (k > axis) inner *= X.shape[k];
    }
    int blocky = sc.kind == FPEMU_GEMM_SCALING_ROWWISE || sc.kind == FPEMU_GEMM_SCALING_BLOCKWISE || sc.kind == FPEMU_GEMM_SCALING_MX ||
                 sc.kind == FPEMU_GEMM_SCALING_NVFP4;
    size_t rows = blocky ? outer * inner : 1, cols = blocky ? L : n;
    if (blocky && n == 0) rows = cols = 0;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = (fpemu_round)rm;
    ctx.nan_policy = (fpemu_nan_policy)np;
    ctx.seed = seed;
    fpemu_cast_stats cs;
    memset(&cs, 0, sizeof cs);
    figures F;
    memset(&F, 0, sizeof F);
    F.n = n;
    for (size_t i = 0; i < n; i++)
        if (isfinite(xd[i]) && fabs(xd[i]) > F.amax) F.amax = fabs(xd[i]);
    if (X.kind == IN_F8 && !scaled) {
        /* f64 straight to the format (one rounding), element i taking draw i */
        for (size_t i = 0; i < n; i++) {
            fpemu_ctx probe;
            fpemu_ctx_init(&probe);
            probe.round = ctx.round, probe.sat = sat, probe.nan_policy = ctx.nan_policy, probe.seed = seed, probe.counter = i;
            uint64_t c = fpemu_from_double(f, xd[i], &probe);
            codes[i] = c;
            if (!isfinite(xd[i])) { cs.nonfinite_in++; continue; }
            fpemu_class k = fpemu_classify(f, c);
            if (probe.flags & FPEMU_FLAG_OVERFLOW) {
                cs.overflow++;
                if (k != FPEMU_CLASS_INF && k != FPEMU_CLASS_QNAN && k != FPEMU_CLASS_SNAN) cs.saturated++;
            } else if (xd[i] != 0 && k == FPEMU_CLASS_ZERO) cs.underflow++;
            else if (xd[i] != 0 && k == FPEMU_CLASS_SUBNORMAL) cs.subnormal++;
        }
        for (size_t i = 0; i < n; i++) yd[i] = fpemu_to_double(f, codes[i]), xs[i] = xd[i];
    } else {
        /* gather into the blocks' layout, quantise with the library's recipe, scatter back */
        float *xb = xf;
        uint64_t *cb = codes;
        float *db = deq;
        if (blocky && axis != nd - 1) {
            xb = malloc(sizeof(float) * (n + 1));
            cb = malloc(sizeof(uint64_t) * (n + 1));
            db = malloc(sizeof(float) * (n + 1));
            if (!xb || !cb || !db) { cli_error(SUB, "out of memory"); goto gdone; }
            for (size_t o = 0; o < outer; o++)
                for (size_t l = 0; l < L; l++)
                    for (size_t q = 0; q < inner; q++) xb[(o * inner + q) * L + l] = xf[(o * L + l) * inner + q];
        }
        if (rows > (size_t)1 << 31 || cols > ((size_t)1 << 31) - 1) { cli_error(SUB, "%s: too large for one cast", in); goto gdone; }
        size_t ns = fpemu_gemm_quantize_nscales(&sc, (int)rows, (int)cols, 1);
        dec = malloc(sizeof(float) * (ns + 1));
        if (!dec) { cli_error(SUB, "out of memory"); goto gdone; }
        float enc = 1;
        if (fpemu_gemm_quantize_f32(&sc, f, (int)rows, (int)cols, xb, 1, sat, &ctx, cb, &enc, dec, NULL, db, &cs, err, sizeof err)) {
            cli_error(SUB, "%s", err);
            goto gdone;
        }
        if (sc.kind == FPEMU_GEMM_SCALING_TENSOR) F.have_scale = 1, F.scale = enc;
        if (sc.kind == FPEMU_GEMM_SCALING_NVFP4) F.tensor_scale = enc;
        if (blocky) {
            F.nscales = ns;
            F.smin = INFINITY, F.smax = -INFINITY;
            for (size_t k = 0; k < ns; k++) {
                if (dec[k] < F.smin) F.smin = dec[k];
                if (dec[k] > F.smax) F.smax = dec[k];
            }
            if (!ns) F.smin = F.smax = 0;
        }
        /* the scaled value each element's cast saw (for the plot): x over its decode factor */
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t i = r * cols + c;
                double dq = 1;
                switch (sc.kind) {
                case FPEMU_GEMM_SCALING_TENSOR: dq = 1.0 / enc; break;
                case FPEMU_GEMM_SCALING_ROWWISE: dq = dec[r]; break;
                case FPEMU_GEMM_SCALING_BLOCKWISE: dq = dec[r * ((cols + sc.block_k - 1) / sc.block_k) + c / sc.block_k]; break;
                case FPEMU_GEMM_SCALING_MX: dq = dec[r * ((cols + 31) / 32) + c / 32]; break;
                case FPEMU_GEMM_SCALING_NVFP4: dq = dec[r * ((cols + 15) / 16) + c / 16] / (double)enc; break;
                default: break;
                }
                size_t dst = i;
                if (blocky && axis != nd - 1) {
                    size_t o = r / inner, q = r % inner;
                    dst = (o * L + c) * inner + q;
                    codes[dst] = cb[i];
                    deq[dst] = db[i];
                }
                xs[dst] = (double)xf[dst] / dq;
            }
        for (size_t i = 0; i < n; i++) yd[i] = deq[i];
        rc = 0;
    gdone:
        if (xb != xf) free(xb), free(cb), free(db);
        if (rc) goto done;
        rc = 2;
    }
    F.overflow = cs.overflow, F.saturated = cs.saturated, F.underflow = cs.underflow, F.subnormal = cs.subnormal;
    F.nonfinite_in = cs.nonfinite_in;
    errors(&F, xd, yd, n);
    /* the outputs: Y, then the figures, then the picture */
    if (codes_out) {
        size_t isz = (size_t)f->container / 8;
        obuf = malloc(isz * (n + 1));
        if (!obuf) { cli_error(SUB, "out of memory"); goto done; }
        for (size_t i = 0; i < n; i++) fpemu_code_store(f, obuf, i, codes[i]);
        const char *descr = isz == 1 ? "|u1" : isz == 2 ? "<u2" : isz == 4 ? "<u4" : "<u8";
        if (write_npy(out, &X, descr, obuf, isz)) goto done;
    } else if (X.kind == IN_F8) {
        if (write_npy(out, &X, "<f8", yd, 8)) goto done;
    } else {
        if (write_npy(out, &X, "<f4", deq, 4)) goto done;
    }
    if (stats_path) {
        stats_text(&tb, &F, f->name, recipe);
        if (tb.oom) { cli_error(SUB, "out of memory"); goto done; }
        if (write_text("--stats", stats_path, tb.s)) goto done;
    }
    if (json_path) {
        stats_json(&jb, &F, f->name, recipe);
        if (jb.oom) { cli_error(SUB, "out of memory"); goto done; }
        if (write_text("--stats-json", json_path, jb.s)) goto done;
    }
    if (plot_path && plot(plot_path, xd, scaled ? xs : xd, n, f, recipe)) goto done;
    rc = 0;
done:
    free(X.data), free(xd), free(yd), free(xs), free(xf), free(deq), free(dec), free(codes), free(obuf);
    free(tb.s), free(jb.s);
    return rc;
}
