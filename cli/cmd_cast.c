/* SPDX-License-Identifier: MIT */
/* cmd_cast.c: `fpemu cast`: cast a tensor (.npy) to a format, with or
 * without a scaling recipe, and say what it did to it (docs/cast.md).
 *
 *   fpemu cast --to FMT --in X.npy --out Y.npy [--from FMT] [--round MODE] [--sat]
 *              [--seed S] [--scaling RECIPE] [--axis N] [--codes] [--nan POLICY]
 *              [--stats FILE|-] [--stats-json FILE|-] [--plot FILE.png]
 *
 * The cast and its figures are the library's (fpemu_caster in
 * fpemu_api.h, emu/caststats.c, which the Python package calls too; its
 * recipes are fpemu_gemm_quantize_f32, the one implementation `fpemu gemm`
 * uses); this file only reads and writes files, checks the options and
 * draws. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "fpemu_api.h"
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

/* The input's values as read (f64 for an f64 input), for the picture. */
static void input_values(const tensor *X, const fpemu_format *ff, double *xd) {
    const fpemu_format *f16 = fpemu_format_get("f16", NULL, 0);
    for (size_t i = 0; i < X->n; i++) {
        switch (X->kind) {
        case IN_F8: memcpy(&xd[i], X->data + 8 * i, 8); break;
        case IN_F4: { float g; memcpy(&g, X->data + 4 * i, 4); xd[i] = g; break; }
        case IN_F2: { uint16_t c; memcpy(&c, X->data + 2 * i, 2); xd[i] = fpemu_to_double(f16, c); break; }
        case IN_B2: { uint16_t c; memcpy(&c, X->data + 2 * i, 2); xd[i] = fpemu_to_double(ff, c); break; }
        default: xd[i] = fpemu_to_double(ff, X->data[i]); break;
        }
    }
}

/* The figures as text or JSON (the library writes them), to FILE or "-". */
static int write_figures(fpemu_caster *c, int json, const char *opt, const char *path) {
    int len = json ? fpemu_caster_stats_json(c, NULL, 0) : fpemu_caster_stats_text(c, NULL, 0);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!text) return cli_error(SUB, "out of memory");
    if (json) fpemu_caster_stats_json(c, text, (size_t)len + 1);
    else fpemu_caster_stats_text(c, text, (size_t)len + 1);
    int rc = write_text(opt, path, text);
    free(text);
    return rc;
}

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
    /* the cast and its figures are the library's (fpemu_caster, fpemu_api.h) */
    char err[512];
    fpemu_caster *c = fpemu_caster_new(to, err, sizeof err);
    if (!c) return cli_error(SUB, "--to %s: %s", to, err);
    int rc = 2;
    tensor X;
    memset(&X, 0, sizeof X);
    void *vals = NULL, *obuf = NULL;
    double *xd = NULL, *xs = NULL;
    if (fpemu_caster_set(c, "round", round)) { cli_error(SUB, "--round %s: %s", round, fpemu_caster_error(c)); goto done; }
    if (fpemu_caster_set(c, "nan", nanp)) { cli_error(SUB, "--nan %s: %s", nanp, fpemu_caster_error(c)); goto done; }
    unsigned long long seed = 0;
    if (seed_s && cli_parse_u64(seed_s, &seed)) { cli_error(SUB, "--seed needs a non-negative integer"); goto done; }
    char num[32];
    snprintf(num, sizeof num, "%llu", seed);
    fpemu_caster_set(c, "seed", num);
    fpemu_caster_set(c, "sat", sat ? "1" : "0");
    if (fpemu_caster_set(c, "scaling", recipe)) { cli_error(SUB, "--scaling %s: %s", recipe, fpemu_caster_error(c)); goto done; }
    char kind[16], fname[64];
    fpemu_caster_get(c, "recipe", kind, sizeof kind);
    fpemu_caster_get(c, "format", fname, sizeof fname);
    int scaled = strcmp(kind, "none") != 0;
    if ((!strcmp(kind, "mx") || !strcmp(kind, "nvfp4")) && fpemu_round_parse(round) != FPEMU_RNE) {
        cli_error(SUB, "--round %s: the %s recipe casts with rne only", round, recipe);
        goto done;
    }
    if (!strcmp(kind, "nvfp4") && strcmp(fname, "e2m1")) { cli_error(SUB, "--scaling nvfp4 needs --to e2m1 (got %s)", fname); goto done; }
    const fpemu_format *f = fpemu_format_get(to, NULL, 0);

    if (read_npy(in, &X)) goto done;
    const fpemu_format *ff = NULL;
    const char *name = NULL;
    if (X.kind == IN_B1 || X.kind == IN_B2) {
        name = from ? from : X.kind == IN_B2 ? "bf16" : (!strcmp(X.descr, "<f1") || !strcmp(X.descr, "|f1")) ? "e5m2" : NULL;
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
    if (axis_s) {
        char *e;
        errno = 0;
        long a = strtol(axis_s, &e, 10);
        if (e == axis_s || *e || errno) { cli_error(SUB, "--axis needs an integer"); goto done; }
        if (a < -nd || a >= nd) {
            cli_error(SUB, "--axis %ld: %s is %d-d: the axis must lie in [%d, %d]", a, in, nd, -nd, nd - 1);
            goto done;
        }
        snprintf(num, sizeof num, "%ld", a);
        if (fpemu_caster_set(c, "axis", num)) { cli_error(SUB, "--axis %s: %s", axis_s, fpemu_caster_error(c)); goto done; }
    }
    const size_t n = X.n;
    int in_type = X.kind == IN_F8 ? FPEMU_API_F64 : X.kind == IN_F4 ? FPEMU_API_F32 : FPEMU_API_CODES;
    const char *in_fmt = X.kind == IN_F2 ? "f16" : name;
    size_t isz = (size_t)f->container / 8;
    vals = malloc((in_type == FPEMU_API_F64 ? sizeof(double) : sizeof(float)) * (n + 1));
    obuf = codes_out ? malloc(isz * (n + 1)) : NULL;
    xd = plot_path ? malloc(sizeof(double) * (n + 1)) : NULL;
    xs = plot_path ? malloc(sizeof(double) * (n + 1)) : NULL;
    if (!vals || (codes_out && !obuf) || (plot_path && (!xd || !xs))) { cli_error(SUB, "out of memory (%zu elements)", n); goto done; }
    /* no figures asked for: the counts alone (an unscaled f32 cast to values is then one array rounding) */
    if (!stats_path && !json_path) fpemu_caster_set(c, "stats", "counts");
    if (fpemu_caster_run(c, in_type, in_fmt, X.data, X.ndim, X.shape, vals, obuf, xs)) {
        cli_error(SUB, "%s: %s", in, fpemu_caster_error(c));
        goto done;
    }
    /* the outputs: Y, then the figures, then the picture */
    if (codes_out) {
        const char *descr = isz == 1 ? "|u1" : isz == 2 ? "<u2" : isz == 4 ? "<u4" : "<u8";
        if (write_npy(out, &X, descr, obuf, isz)) goto done;
    } else if (X.kind == IN_F8) {
        if (write_npy(out, &X, "<f8", vals, 8)) goto done;
    } else {
        if (write_npy(out, &X, "<f4", vals, 4)) goto done;
    }
    if (stats_path && write_figures(c, 0, "--stats", stats_path)) goto done;
    if (json_path && write_figures(c, 1, "--stats-json", json_path)) goto done;
    if (plot_path) {
        input_values(&X, ff, xd);
        if (plot(plot_path, xd, scaled ? xs : xd, n, f, recipe)) goto done;
    }
    rc = 0;
done:
    fpemu_caster_free(c);
    free(X.data), free(vals), free(obuf), free(xd), free(xs);
    return rc;
}
