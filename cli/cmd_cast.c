/* SPDX-License-Identifier: MIT */
/* cmd_cast.c: `fpemu cast`: cast a tensor (.npy), or every tensor of a
 * safetensors checkpoint, to a format, with or without a scaling recipe,
 * and say what it did to it (docs/cast.md).
 *
 *   fpemu cast --to FMT --in X.npy --out Y.npy [--from FMT] [--round MODE] [--sat]
 *              [--seed S] [--scaling RECIPE] [--axis N] [--codes [--scales S.npy]] [--nan POLICY]
 *              [--stats FILE|-] [--stats-json FILE|-] [--plot FILE.png]
 *   fpemu cast --to FMT --in W.safetensors --out Y.safetensors [--only GLOB]... [--skip GLOB]...
 *              [the same options but --from and --plot]
 *   fpemu cast --to FMT --in DIR/M.safetensors.index.json --out NEWDIR [as for W.safetensors]
 *
 * The cast and its figures are the library's (fpemu_caster in
 * fpemu_api.h, emu/caststats.c, which the Python package calls too; its
 * recipes are fpemu_gemm_quantize_f32, the one implementation `fpemu gemm`
 * uses); this file only reads and writes files, checks the options and
 * draws. */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "cli.h"
#include "csv.h"
#include "fpemu_api.h"
#include "npy.h"
#include "safetensors.h"

#define SUB "cast"

static void usage(FILE *out) {
    fprintf(out,
            "usage: fpemu cast --to FMT --in X.npy --out Y.npy [--from FMT] [--round MODE] [--sat] [--seed S]\n"
            "                  [--scaling R] [--axis N] [--codes [--scales S.npy]] [--nan POLICY]\n"
            "                  [--stats FILE|-] [--stats-json FILE|-] [--plot FILE.png]\n"
            "       fpemu cast --to FMT --in W.safetensors --out Y.safetensors [--only GLOB]... [--skip GLOB]...\n"
            "                  [--round MODE] [--sat] [--seed S] [--scaling R] [--axis N] [--codes] [--nan POLICY]\n"
            "                  [--stats FILE|-] [--stats-json FILE|-]\n"
            "       fpemu cast --to FMT --in DIR/M.safetensors.index.json --out NEWDIR [as for W.safetensors]\n"
            "\n"
            "Cast every element of X to FMT (fpemu formats) and write Y of X's shape: the values\n"
            "('<f4', or '<f8' for an '<f8' input), or with --codes the raw codes ('|u1', '<u2', '<u4',\n"
            "'<u8' by the format's container; under a recipe, of the scaled values).\n"
            "X: '<f8', '<f4', '<f2', or ml_dtypes arrays as np.save writes them: bfloat16 ('<V2'),\n"
            "float8_e5m2 ('<f1'), and the other one-byte types ('<V1', '|V1'), which need --from NAME\n"
            "(e4m3, e4m3fnuz, e5m2fnuz, e3m4, e8m0, e2m1, ...: the file does not say which); C order.\n"
            "A safetensors file (a checkpoint): every floating-point tensor is cast, each on its own (its own\n"
            "scales under a recipe), into a safetensors file of the same names and shapes, in the same order:\n"
            "values F32 (F64 for F64), or with --codes the format's own dtype (F8_E4M3, F8_E5M2, F8_E8M0, F4,\n"
            "F16, BF16, ...; U8..U64 where it has none). Other tensors (integers, BOOL, C64) are copied as they\n"
            "are; the figures are per tensor and in total. A sharded checkpoint (its .safetensors.index.json):\n"
            "every shard into the new folder NEWDIR under its own name, with the index (total_size updated).\n"
            "  --only GLOB    cast only the tensors whose names match (fnmatch; repeatable: any of them;\n"
            "                 each must match some tensor)\n"
            "  --skip GLOB    copy the tensors whose names match unchanged (repeatable)\n"
            "  --round MODE   rne (default), rna, rtz, rup, rdn, rto, sr (--seed S for sr's stream)\n"
            "  --sat          overflow saturates to max finite (without --scaling; the recipes saturate)\n"
            "  --scaling R    none (default), tensor (TE current), tensor-torchao, rowwise (torchao,\n"
            "                 pow2 scales), blockwise (1 x 128 tiles, DeepSeek-V3), mx-floor, mx-rceil\n"
            "                 (blocks of 32, e8m0 scales), nvfp4 (e2m1, blocks of 16, e4m3 scales):\n"
            "                 the recipes of fpemu gemm, A's side; mx and nvfp4 cast with rne only\n"
            "  --axis N       the axis the rowwise/blockwise/MX/NVFP4 blocks run along (amax over it):\n"
            "                 -ndim..ndim-1, default -1 (a 2-D X: one rowwise scale per row)\n"
            "  --scales S.npy with --codes under a recipe (a .npy X): the codes' decode factors, '<f4': X's\n"
            "                 shape without the axis, then the blocks along it (a scalar for the tensor\n"
            "                 recipes); nvfp4's tensor factor in S_2.npy. Value = fl32(code x factor)\n"
            "                 (nvfp4: times the tensor factor, to f32 again): the cast's values, bit for bit\n"
            "  --nan POLICY   canonical (default), x86, cuda, torch (PyTorch's own .to(float8_*))\n"
            "  --stats F      figures as text (- for standard output); --stats-json F as JSON\n"
            "  --plot F.png   histogram of log2|x| before and after scaling, the format's range marked\n"
            "                 (needs gnuplot)\n"
            "Outputs are written whole or not at all. Bad input: a message naming it, exit status 2.\n");
}

/* ---- .npy reading: cli/npy.c's npy_read_nd (N-d, C order) --------------- */

typedef npy_nd tensor;

static int read_npy(const char *path, tensor *t) {
    char err[600];
    int rc = npy_read_nd(path, t, err, sizeof err);
    if (rc == NPY_NOT_NPY) return cli_error(SUB, "%s: neither a .npy file (bad magic) nor a safetensors file", path);
    return rc ? cli_error(SUB, "%s", err) : 0;
}

/* ---- output ------------------------------------------------------------- */

/* The files of one cast, as one result: each is staged (complete and
 * fsync'ed beside its target, gpu/host/outfile.h), and they are put in
 * place together once every one is staged; a failure before that removes
 * the staged ones and leaves every target as it was. */
enum { OUTSET_MAX = 8 };
typedef struct outset {
    cli_atomic o[OUTSET_MAX];
    const char *opt[OUTSET_MAX]; /* the option each came from, for messages */
    dev_t dev[OUTSET_MAX];       /* the folder each target lies in (ino 0: unknown), and its name there */
    ino_t ino[OUTSET_MAX];
    char base[OUTSET_MAX][256];
    int n;
} outset;

/* A slot for the next file, after a check that no earlier file of W is
 * the same target (the same name in the same folder, links followed; a
 * device or FIFO may be named twice). NULL after a message. */
static cli_atomic *outset_next(outset *W, const char *opt, const char *path) {
    const int i = W->n;
    if (i == OUTSET_MAX) {
        cli_error(SUB, "%s %s: more than %d output files", opt, path, OUTSET_MAX);
        return NULL;
    }
    char r[4096];
    struct stat st;
    int exists;
    W->ino[i] = 0;
    if (fpemu_out_resolve(path, r, sizeof r, &st, &exists) == 0 && (!exists || S_ISREG(st.st_mode))) { /* (a device may repeat) */
        char *sl = strrchr(r, '/');
        const char *name = sl ? sl + 1 : r;
        size_t nl = strlen(name); /* (a name longer than the field is longer than any file's: creating it fails) */
        if (nl >= sizeof W->base[i]) nl = sizeof W->base[i] - 1;
        memcpy(W->base[i], name, nl);
        W->base[i][nl] = 0;
        if (sl) *(sl == r ? sl + 1 : sl) = 0; /* r: the folder */
        if (stat(sl ? r : ".", &st) == 0) W->dev[i] = st.st_dev, W->ino[i] = st.st_ino;
    }
    for (int k = 0; k < i && W->ino[i]; k++)
        if (W->ino[k] == W->ino[i] && W->dev[k] == W->dev[i] && !strcmp(W->base[k], W->base[i])) {
            cli_error(SUB, "%s %s: the same file as %s", opt, path, W->opt[k]);
            return NULL;
        }
    W->opt[i] = opt;
    return &W->o[i];
}

/* Every staged file given up */
static void outset_abort(outset *W) {
    for (int i = 0; i < W->n; i++) fpemu_out_abort(&W->o[i]);
    W->n = 0;
}

/* Every staged file into place, in order. 0, or 2 after a message (the
 * files not yet renamed are given up; those before stay in place). */
static int outset_commit(outset *W) {
    for (int i = 0; i < W->n; i++)
        if (fpemu_out_commit(&W->o[i])) {
            cli_error(SUB, "%s %s: cannot put the file in place: %s", W->opt[i], W->o[i].path, strerror(errno));
            for (int k = i + 1; k < W->n; k++) fpemu_out_abort(&W->o[k]);
            W->n = 0;
            return 2;
        }
    W->n = 0;
    return 0;
}

/* T's shape and data as PATH, staged in W (OPT names it in errors) */
static int write_npy(outset *W, const char *opt, const char *path, const tensor *t, const char *descr, const void *data, size_t isz) {
    cli_atomic *at = outset_next(W, opt, path);
    if (!at) return 2;
    if (cli_atomic_open(at, path, "wb")) return cli_error(SUB, "%s %s: cannot write: %s", opt, path, strerror(errno));
    int ok = npy_write_header(at->f, descr, t->shape, t->ndim) == 0;
    ok = ok && (t->n == 0 || fwrite(data, isz, t->n, at->f) == t->n); /* little-endian host (Makefile checks) */
    if (fpemu_out_stage(at, ok) || !ok) return cli_error(SUB, "%s %s: write failed: %s", opt, path, strerror(errno));
    W->n++;
    return 0;
}

/* --scales S.npy: the last run's decode factors as '<f4' in the layout
 * fpemu_caster_scale_layout gives for X (a scalar for the tensor recipes),
 * and for nvfp4 the tensor factor, a scalar, as S2 */
static int write_scales(outset *W, fpemu_caster *c, const tensor *X, const char *path, const char *path2) {
    tensor S = {0};
    const float *fac;
    float tf;
    if (fpemu_caster_scale_layout(c, X->ndim, X->shape, &S.ndim, S.shape) < 1 || fpemu_caster_scales(c, &fac, &tf))
        return cli_error(SUB, "--scales %s: %s", path, fpemu_caster_error(c));
    S.n = 1;
    for (int k = 0; k < S.ndim; k++) S.n *= S.shape[k];
    if (write_npy(W, "--scales", path, &S, "<f4", fac, 4)) return 2;
    if (!path2) return 0;
    const tensor T = {.ndim = 0, .n = 1};
    return write_npy(W, "--scales", path2, &T, "<f4", &tf, 4);
}

/* Text to FILE, staged in W, or to "-" (standard output, at once). */
static int write_text(outset *W, const char *opt, const char *path, const char *text) {
    if (!strcmp(path, "-")) { fputs(text, stdout); return 0; }
    cli_atomic *at = outset_next(W, opt, path);
    if (!at) return 2;
    if (cli_atomic_open(at, path, "w")) return cli_error(SUB, "%s %s: cannot write: %s", opt, path, strerror(errno));
    int ok = fputs(text, at->f) >= 0;
    if (fpemu_out_stage(at, ok) || !ok) return cli_error(SUB, "%s %s: write failed: %s", opt, path, strerror(errno));
    W->n++;
    return 0;
}

/* ---- plot ---------------------------------------------------------------- */

/* S into the gnuplot script as a single-quoted string ('' for each ') */
static void gp_quoted(FILE *g, const char *s) {
    fputc('\'', g);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', g);
        fputc(*s, g);
    }
    fputc('\'', g);
}

/* A scratch file in $TMPDIR (or /tmp), made exclusively: its name into
 * NAME, open for writing. NULL with errno on failure. */
static FILE *scratch_file(char *name, size_t len) {
    const char *d = getenv("TMPDIR");
    if (!d || !*d) d = "/tmp";
    if (snprintf(name, len, "%s/fpemu-plot.XXXXXX", d) >= (int)len) { errno = ENAMETOOLONG; return NULL; }
    int fd = mkstemp(name);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) { int e = errno; close(fd), unlink(name); errno = e; }
    return f;
}

/* Histogram of floor(log2|v|) of the finite nonzero values, before (x) and
 * after scaling (s), drawn by gnuplot into PATH, staged in W (gnuplot writes
 * the staged file; a device or FIFO it writes in place). Its data and
 * script are scratch files in $TMPDIR. */
static int plot(outset *W, const char *path, const double *x, const double *s, size_t n, const fpemu_format *f, const char *recipe) {
    enum { LO = -1100, HI = 1100 };
    cli_atomic *o = outset_next(W, "--plot", path);
    if (!o) return 2;
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
    char dat[4200], gp[4200];
    FILE *d = scratch_file(dat, sizeof dat), *g = d ? scratch_file(gp, sizeof gp) : NULL;
    if (!d || !g) {
        int e = errno;
        if (d) fclose(d), unlink(dat);
        free(hx), free(hs);
        return cli_error(SUB, "--plot %s: cannot write its scratch files in %s: %s", path, getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                         strerror(e));
    }
    /* the image's file: made (empty) and staged, for gnuplot to fill */
    if (cli_atomic_open(o, path, "wb") || fpemu_out_stage(o, 1)) {
        int e = errno;
        fclose(d), fclose(g), unlink(dat), unlink(gp), free(hx), free(hs);
        return cli_error(SUB, "--plot %s: cannot write: %s", path, strerror(e));
    }
    const char *img = o->direct ? o->path : o->tmp;
    if (lo > hi) lo = hi = 0;
    for (int e = lo; e <= hi; e++) fprintf(d, "%d %zu %zu\n", e, hx[e - LO], hs[e - LO]);
    free(hx), free(hs);
    double lsub = log2(f->min_subnormal > 0 ? f->min_subnormal : f->min_normal), lnorm = log2(f->min_normal), lmax = log2(f->max_finite);
    fprintf(g, "set terminal pngcairo size 900,450 enhanced font 'sans,10'\nset output ");
    gp_quoted(g, img);
    fprintf(g,
            "\nset title 'fpemu cast to %s, scaling %s: where the tensor sits' noenhanced\n"
            "set xlabel 'floor(log2 |x|)'\nset ylabel 'elements'\nset style fill transparent solid 0.45 noborder\n"
            "set boxwidth 0.9\nset grid ytics lc rgb '#e0e0e0'\nset key outside right top\n"
            "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lc rgb '#2ca02c' dt 2 lw 2\n"
            "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lc rgb '#1f77b4' dt 2 lw 2\n"
            "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lc rgb '#d62728' dt 2 lw 2\n"
            "set xrange [%d:%d]\nplot ",
            f->name, recipe, lsub, lsub, lnorm, lnorm, lmax, lmax, (int)fmin(lo, lsub) - 2, (int)fmax(hi, lmax) + 2);
    gp_quoted(g, dat);
    fprintf(g,
            " using 1:2 with boxes lc rgb '#7f7f7f' title 'before scaling', "
            "'' using 1:3 with boxes lc rgb '#ff7f0e' title 'after scaling (cast input)', "
            "NaN with lines lc rgb '#2ca02c' dt 2 lw 2 title sprintf('min subnormal 2^{%%g}', %.17g), "
            "NaN with lines lc rgb '#1f77b4' dt 2 lw 2 title sprintf('min normal 2^{%%g}', %.17g), "
            "NaN with lines lc rgb '#d62728' dt 2 lw 2 title sprintf('max %%.4g', %.17g)\n"
            "unset output\n",
            lsub, lnorm, f->max_finite);
    int okw = !ferror(d) && !ferror(g);
    okw &= fclose(d) == 0;
    okw &= fclose(g) == 0;
    const int st = okw ? cli_gnuplot(NULL, NULL, NULL, gp, NULL) : 0x7f00;
    unlink(dat), unlink(gp);
    int ok = okw && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (ok && !o->direct) ok = cli_image_done(img, 1);
    if (!ok) {
        fpemu_out_abort(o);
        if (okw && WIFEXITED(st) && WEXITSTATUS(st) == 127) return cli_error(SUB, "--plot %s: gnuplot not found (install gnuplot)", path);
        return cli_error(SUB, "--plot %s: gnuplot failed or the image could not be written", path);
    }
    W->n++;
    return 0;
}

/* ---- the command ----------------------------------------------------------- */

/* The input's values as read (f64 for an f64 input), for the picture. */
static void input_values(const tensor *X, const fpemu_format *ff, double *xd) {
    const fpemu_format *f16 = fpemu_format_get("f16", NULL, 0);
    for (size_t i = 0; i < X->n; i++) {
        const unsigned char *b = X->data;
        switch (X->dtype) {
        case NPY_F8: memcpy(&xd[i], b + 8 * i, 8); break;
        case NPY_F4: { float g; memcpy(&g, b + 4 * i, 4); xd[i] = g; break; }
        case NPY_F2: { uint16_t c; memcpy(&c, b + 2 * i, 2); xd[i] = fpemu_to_double(f16, c); break; }
        case NPY_V2: { uint16_t c; memcpy(&c, b + 2 * i, 2); xd[i] = fpemu_to_double(ff, c); break; }
        default: xd[i] = fpemu_to_double(ff, b[i]); break;
        }
    }
}

/* The figures as text or JSON (the library writes them), to FILE or "-". */
static int write_figures(outset *W, fpemu_caster *c, int json, const char *opt, const char *path) {
    int len = json ? fpemu_caster_stats_json(c, NULL, 0) : fpemu_caster_stats_text(c, NULL, 0);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!text) return cli_error(SUB, "out of memory");
    if (json) fpemu_caster_stats_json(c, text, (size_t)len + 1);
    else fpemu_caster_stats_text(c, text, (size_t)len + 1);
    int rc = write_text(W, opt, path, text);
    free(text);
    return rc;
}

/* ---- safetensors: every tensor of a checkpoint ----------------------------- */

typedef struct {
    const char *in, *out, *argline;
    const char *const *only, *const *skip;
    int nonly, nskip;
    int codes_out, figures, axis_given;
    long axis;
    const char *stats_path, *json_path;
} st_job;

static int name_in(const char *name, const char *const *globs, int n) {
    for (int i = 0; i < n; i++)
        if (!fnmatch(globs[i], name, 0)) return 1;
    return 0;
}

/* Why tensor t is copied unchanged (NULL: it is cast), or a refusal in *bad. */
static const char *kept_why(const st_job *J, const st_tensor *t, int *bad) {
    *bad = 0;
    const st_dtype_info *di = st_dtype_get(t->dtype);
    if (!di->format) return "not a floating-point dtype";
    if ((J->nonly && !name_in(t->name, J->only, J->nonly)) || name_in(t->name, J->skip, J->nskip)) return "not selected";
    if (!st_cast_ok(t->dtype)) *bad = 1;
    return NULL;
}

/* The dtype a cast tensor is written in. */
static st_dtype out_dtype(const st_job *J, const st_tensor *t, const fpemu_format *f) {
    if (!J->codes_out) return t->dtype == ST_F64 ? ST_F64 : ST_F32;
    int d = st_dtype_of_format(f->name);
    if (d >= 0 && st_cast_ok((st_dtype)d) && (d != ST_F4 || (t->ndim && t->shape[t->ndim - 1] % 2 == 0))) return (st_dtype)d;
    return f->container == 8 ? ST_U8 : f->container == 16 ? ST_U16 : f->container == 32 ? ST_U32 : ST_U64;
}

static void json_shape(FILE *m, const st_tensor *t) {
    fputc('[', m);
    for (int k = 0; k < t->ndim; k++) fprintf(m, "%s%llu", k ? ", " : "", (unsigned long long)t->shape[k]);
    fputc(']', m);
}

/* What the casts of one file or of a sharded checkpoint's files add up to:
 * the figures' rows and JSON objects, the totals, the smallest SQNR. */
typedef struct {
    FILE *R, *JS;
    char *rows, *js;
    size_t rows_n, js_n;
    int ncast, nkept, nobj, namew;
    double tot[6];
    double worst;
    char *worst_name;
} st_acc;
static const char *const tot_keys[6] = {"n", "overflow", "saturated", "flushed", "subnormal", "nonfinite_in"};

/* A sharded checkpoint's weight map, sorted by tensor name. */
typedef struct {
    const char *name, *shard;
} st_map;
static int map_cmp(const void *a, const void *b) { return strcmp(((const st_map *)a)->name, ((const st_map *)b)->name); }

/* The tensors a cast tensor's scales go in (--codes under a recipe): NAME_scale
 * (the decode factors: F32, F8_E8M0 for MX, F8_E4M3 for NVFP4's blocks) and,
 * for NVFP4, NAME_scale_2 (the tensor factor, F32, a scalar). */
typedef struct {
    int comp;               /* 0: a tensor of the input; 1: its factors; 2: NVFP4's tensor factor */
    char *name;             /* the companion's (malloc'ed) */
    uint64_t shape[ST_MAXDIM];
} st_plan;

/* Is NAME taken by a tensor of S (or, for a shard, of the index's map)? */
static int name_taken(const st_file *S, const st_map *map, int nmap, const char *name) {
    if (map) {
        st_map key = {name, NULL};
        return bsearch(&key, map, (size_t)nmap, sizeof *map, map_cmp) != NULL;
    }
    for (int i = 0; i < S->count; i++)
        if (!strcmp(S->t[i].name, name)) return 1;
    return 0;
}

/* Cast the open safetensors file S into OUT (whole or not at all; with W,
 * staged there for the caller to put in place with the rest), adding its
 * tensors' figures to A and the bytes of its data part to *data_bytes.
 * For a shard (SHARD its name in the index, MAP the index's weight map of
 * NMAP entries) every tensor must be one the map places in this shard; it
 * is marked in SEEN, and the scales' tensors are added to WMAP (the new
 * index's weight_map).
 * Every tensor is checked before anything is written. 0, or 2 after a
 * message. */
static int cast_file(outset *W, fpemu_caster *c, const st_job *J, st_file *S, const char *out, const char *shard, const st_map *map,
                     int nmap, unsigned char *seen, cJSON *wmap, st_acc *A, uint64_t *data_bytes) {
    char err[1024];
    const char *in = S->path;
    char rk[16];
    fpemu_caster_get(c, "recipe", rk, sizeof rk);
    const int with_scales = J->codes_out && strcmp(rk, "none");
    const st_dtype sdt = !strcmp(rk, "mx") ? ST_F8_E8M0 : !strcmp(rk, "nvfp4") ? ST_F8_E4M3 : ST_F32;
    const fpemu_format *sfmt = fpemu_format_get(st_dtype_get(sdt)->format, NULL, 0); /* (the dtype table's) */
    char fname[64];
    fpemu_caster_get(c, "format", fname, sizeof fname);
    const fpemu_format *f = fpemu_format_get(fname, NULL, 0);
    int rc = 2;
    st_out *O = calloc(3 * (size_t)S->count + 1, sizeof *O); /* each tensor, then its scales' tensors */
    st_plan *P = calloc(3 * (size_t)S->count + 1, sizeof *P);
    int *oix = calloc((size_t)S->count + 1, sizeof *oix); /* tensor i's entry in O */
    int no = 0;
    const char **why = calloc((size_t)S->count + 1, sizeof *why); /* why each tensor is kept (NULL: cast) */
    char **mk = calloc((size_t)S->nmeta + 2, sizeof *mk), **mv = calloc((size_t)S->nmeta + 2, sizeof *mv);
    unsigned char *ib = NULL, *ob = NULL, *cb = NULL;
    cli_atomic at;
    int at_open = 0;
    if (!O || !P || !oix || !why || !mk || !mv) { cli_error(SUB, "out of memory"); goto done; }
    /* which tensors are cast, and what each becomes */
    for (int i = 0; i < S->count; i++) {
        const st_tensor *t = &S->t[i];
        if (shard) {
            st_map key = {t->name, NULL};
            const st_map *m = bsearch(&key, map, (size_t)nmap, sizeof *map, map_cmp);
            if (!m || strcmp(m->shard, shard)) {
                cli_error(SUB, "%s: tensor '%s' %s%s", in, t->name, m ? "is placed by the index in " : "is not in the index's weight_map",
                          m ? m->shard : "");
                goto done;
            }
            seen[m - map] = 1;
        }
        int bad;
        why[i] = kept_why(J, t, &bad);
        if (bad) {
            cli_error(SUB, "%s: tensor '%s': %s elements are packed in an order no framework defines, so they are not read: "
                      "leave it out (--skip '%s')", in, t->name, st_dtype_get(t->dtype)->name, t->name);
            goto done;
        }
        if (!why[i] && t->n > (1ULL << 31) - 1) {
            cli_error(SUB, "%s: tensor '%s': %llu elements, at most 2^31 - 1 are cast (--skip it)", in, t->name,
                      (unsigned long long)t->n);
            goto done;
        }
        int nd = t->ndim ? t->ndim : 1;
        if (!why[i] && J->axis_given && (J->axis < -nd || J->axis >= nd)) {
            cli_error(SUB, "--axis %ld: tensor '%s' of %s is %d-d: the axis must lie in [%d, %d] (--skip it, or cast it apart)",
                      J->axis, t->name, in, nd, -nd, nd - 1);
            goto done;
        }
        oix[i] = no;
        O[no++] = (st_out){t->name, why[i] ? t->dtype : out_dtype(J, t, f), t->ndim, t->shape};
        if (why[i] || !with_scales || !t->n) continue;
        /* the scales' tensors: the factors (a scalar, or the dimensions
         * other than the axis and the blocks along it), NVFP4's tensor factor */
        size_t shape[ST_MAXDIM] = {1}, sshape[ST_MAXDIM];
        for (int k = 0; k < t->ndim; k++) shape[k] = (size_t)t->shape[k];
        int snd;
        if (fpemu_caster_scale_layout(c, nd, shape, &snd, sshape) < 0) {
            cli_error(SUB, "%s: tensor '%s': %s", in, t->name, fpemu_caster_error(c));
            goto done;
        }
        for (int q = 1; q <= (!strcmp(rk, "nvfp4") ? 2 : 1); q++) {
            st_plan *pl = &P[no];
            pl->comp = q;
            size_t ln = strlen(t->name) + 9;
            if (!(pl->name = malloc(ln))) { cli_error(SUB, "out of memory"); goto done; }
            snprintf(pl->name, ln, "%s%s", t->name, q == 1 ? "_scale" : "_scale_2");
            if (name_taken(S, map, nmap, pl->name)) {
                cli_error(SUB, "%s: tensor '%s': its scales would go in '%s', which the %s holds already (--codes under a recipe "
                          "writes NAME_scale%s; --skip one of them)", in, t->name, pl->name, map ? "index" : "file",
                          !strcmp(rk, "nvfp4") ? " and NAME_scale_2" : "");
                no++;
                goto done;
            }
            for (int k = 0; q == 1 && k < snd; k++) pl->shape[k] = sshape[k];
            O[no++] = (st_out){pl->name, q == 1 ? sdt : ST_F32, q == 1 ? snd : 0, pl->shape};
            if (wmap && !cJSON_AddStringToObject(wmap, pl->name, shard)) { cli_error(SUB, "out of memory"); goto done; }
        }
    }
    if (!shard) /* a typo in --only would cast nothing and say nothing (a sharded checkpoint: checked on its index) */
        for (int g = 0; g < J->nonly; g++) {
            int hit = 0;
            for (int i = 0; i < S->count && !hit; i++) hit = !fnmatch(J->only[g], S->t[i].name, 0);
            if (!hit) { cli_error(SUB, "--only '%s': no tensor of %s has a name that matches", J->only[g], in); goto done; }
        }
    /* the metadata: the input's, and how this file was made */
    int nm = 0;
    for (int i = 0; i < S->nmeta; i++)
        if (strcmp(S->meta_key[i], "fpemu_cast")) mk[nm] = S->meta_key[i], mv[nm++] = S->meta_val[i];
    mk[nm] = "fpemu_cast", mv[nm++] = (char *)J->argline;
    cli_atomic *slot = W ? outset_next(W, "--out", out) : NULL; /* (W: the file is staged there) */
    if (W && !slot) goto done;
    if (cli_atomic_open(&at, out, "wb")) { cli_error(SUB, "--out %s: cannot write: %s", out, strerror(errno)); goto done; }
    at_open = 1;
    if (st_write_header(at.f, O, no, mk, mv, nm, err, sizeof err)) { cli_error(SUB, "--out %s: %s", out, err); goto done; }
    uint64_t written = 0;
    for (int i = 0; i < S->count; i++) {
        const st_tensor *t = &S->t[i];
        const st_dtype_info *di = st_dtype_get(t->dtype);
        uint64_t nb = t->end - t->begin;
        free(ib);
        if (!(ib = malloc(nb + 8))) { cli_error(SUB, "%s: tensor '%s': out of memory (%llu bytes)", in, t->name, (unsigned long long)nb); goto done; }
        if (st_read_tensor(S, i, ib, err, sizeof err)) { cli_error(SUB, "%s", err); goto done; }
        char shp[200];
        int sp = snprintf(shp, sizeof shp, "%s", t->ndim ? "" : "()");
        for (int k = 0; k < t->ndim && sp < (int)sizeof shp; k++)
            sp += snprintf(shp + sp, sizeof shp - (size_t)sp, "%s%llu", k ? "x" : "", (unsigned long long)t->shape[k]);
        fprintf(A->JS, "%s\n  {\"name\": ", A->nobj++ ? "," : "");
        cli_json_str(A->JS, t->name);
        if (shard) {
            fprintf(A->JS, ", \"file\": ");
            cli_json_str(A->JS, shard);
        }
        fprintf(A->JS, ", \"dtype\": \"%s\", \"shape\": ", di->name);
        json_shape(A->JS, t);
        fprintf(A->JS, ", \"out_dtype\": \"%s\", ", st_dtype_get(O[oix[i]].dtype)->name);
        if (why[i]) { /* copied as it is */
            if (nb && fwrite(ib, 1, nb, at.f) != nb) { cli_error(SUB, "--out %s: write failed: %s", out, strerror(errno)); goto done; }
            written += nb;
            fprintf(A->R, "%-*s %-11s %-16s %12llu kept: %s\n", A->namew, t->name, di->name, shp, (unsigned long long)t->n, why[i]);
            fprintf(A->JS, "\"cast\": false, \"why\": \"%s\"}", why[i]);
            A->nkept++;
            continue;
        }
        A->ncast++;
        /* the caster's input: values (F32, F64) or codes in their container */
        const fpemu_format *inf = fpemu_format_get(di->format, NULL, 0);
        int in_type = t->dtype == ST_F64 ? FPEMU_API_F64 : t->dtype == ST_F32 ? FPEMU_API_F32 : FPEMU_API_CODES;
        const void *x = ib;
        if (t->dtype == ST_F4) { /* two codes a byte, element 2i low */
            free(cb);
            if (!(cb = malloc(t->n + 1))) { cli_error(SUB, "out of memory"); goto done; }
            for (uint64_t k = 0; k < t->n; k++) cb[k] = (ib[k / 2] >> (k % 2 ? 4 : 0)) & 0xF;
            x = cb;
        }
        size_t shape[ST_MAXDIM] = {1};
        int nd = t->ndim ? t->ndim : 1;
        for (int k = 0; k < t->ndim; k++) shape[k] = (size_t)t->shape[k];
        st_dtype od = O[oix[i]].dtype;
        size_t osz = J->codes_out ? (size_t)f->container / 8 : od == ST_F64 ? 8 : 4;
        free(ob);
        if (!(ob = malloc(t->n * osz + 8))) { cli_error(SUB, "%s: tensor '%s': out of memory", in, t->name); goto done; }
        if (t->n == 0) { /* nothing to cast, nothing to count */
            fprintf(A->R, "%-*s %-11s %-16s %12llu (empty)\n", A->namew, t->name, di->name, shp, 0ULL);
            fprintf(A->JS, "\"cast\": true, \"figures\": null}");
            continue;
        }
        if (fpemu_caster_run(c, in_type, inf->name, x, nd, shape, J->codes_out ? NULL : ob, J->codes_out ? ob : NULL, NULL)) {
            cli_error(SUB, "%s: tensor '%s': %s", in, t->name, fpemu_caster_error(c));
            goto done;
        }
        uint64_t wn = t->n * osz;
        if (od == ST_F4) { /* pack the codes back, two a byte */
            for (uint64_t k = 0; k < t->n; k += 2) ob[k / 2] = (unsigned char)((ob[k] & 0xF) | (ob[k + 1] & 0xF) << 4);
            wn = t->n / 2;
        }
        if (fwrite(ob, 1, wn, at.f) != wn) { cli_error(SUB, "--out %s: write failed: %s", out, strerror(errno)); goto done; }
        written += wn;
        /* its scales' tensors, as planned: the factors in their dtype (exact:
         * MX's are powers of two, NVFP4's block factors e4m3 values), NVFP4's
         * tensor factor */
        for (int e = oix[i] + 1; e < no && P[e].comp; e++) {
            const float *fac;
            float tf;
            if (fpemu_caster_scales(c, &fac, &tf)) { cli_error(SUB, "%s: tensor '%s': %s", in, t->name, fpemu_caster_error(c)); goto done; }
            uint64_t sn = 1;
            for (int k = 0; k < O[e].ndim; k++) sn *= O[e].shape[k];
            const int one = O[e].dtype == ST_F32;
            unsigned char *sb = malloc(sn * (one ? 4 : 1) + 8);
            if (!sb) { cli_error(SUB, "out of memory"); goto done; }
            fpemu_ctx sctx; /* (exact conversions: its flags are not read) */
            fpemu_ctx_init(&sctx);
            for (uint64_t k = 0; k < sn; k++) {
                const float fx = P[e].comp == 2 ? tf : fac[k];
                if (one) memcpy(sb + 4 * k, &fx, 4); /* (little-endian host: Makefile checks) */
                else {
                    const uint64_t code = fpemu_from_double(sfmt, fx, &sctx);
                    const double back = fpemu_to_double(sfmt, code); /* (a NaN factor: a block with a NaN or inf) */
                    if (back != fx && !(isnan(back) && isnan(fx))) { /* (a factor the dtype cannot hold: never, but not silently) */
                        free(sb);
                        cli_error(SUB, "%s: tensor '%s': scale %.9g is not a %s value", in, t->name, fx, sfmt->name);
                        goto done;
                    }
                    sb[k] = (unsigned char)code;
                }
            }
            const size_t sw = (size_t)sn * (one ? 4 : 1);
            int wok = fwrite(sb, 1, sw, at.f) == sw;
            free(sb);
            if (!wok) { cli_error(SUB, "--out %s: write failed: %s", out, strerror(errno)); goto done; }
            written += sw;
        }
        double v[6], amax = NAN, sq = NAN, mr = NAN;
        for (int k = 0; k < 6; k++) {
            fpemu_caster_stat(c, tot_keys[k], &v[k]);
            A->tot[k] += v[k];
        }
        fpemu_caster_stat(c, "amax", &amax);
        int have_sq = J->figures && fpemu_caster_stat(c, "sqnr_db", &sq) >= 0 && !isnan(sq);
        if (J->figures) fpemu_caster_stat(c, "max_rel_err", &mr);
        if (have_sq && (!A->worst_name || sq < A->worst)) {
            free(A->worst_name);
            if (!(A->worst_name = strdup(t->name))) { cli_error(SUB, "out of memory"); goto done; }
            A->worst = sq;
        }
        char cnt[5][40];
        for (int k = 0; k < 5; k++) snprintf(cnt[k], sizeof cnt[k], "%.0f", v[k + 1]);
        fprintf(A->R, "%-*s %-11s %-16s %12llu %-14.9g %-11s %-11s %-11s %-11s %-12s %-9.6g %.9g\n", A->namew, t->name, di->name, shp,
                (unsigned long long)t->n, amax, cnt[0], cnt[1], cnt[2], cnt[3], cnt[4], sq, mr);
        int len = fpemu_caster_stats_json(c, NULL, 0);
        char *fj = len > 0 ? malloc((size_t)len + 1) : NULL;
        if (!fj) { cli_error(SUB, "out of memory"); goto done; }
        fpemu_caster_stats_json(c, fj, (size_t)len + 1);
        if (len && fj[len - 1] == '\n') fj[len - 1] = 0;
        fprintf(A->JS, "\"cast\": true, \"figures\": %s}", fj);
        free(fj);
    }
    at_open = 0;
    if (W ? fpemu_out_stage(&at, 1) : cli_atomic_close(&at, 1)) { cli_error(SUB, "--out %s: write failed: %s", out, strerror(errno)); goto done; }
    if (W) *slot = at, W->n++;
    *data_bytes += written;
    rc = 0;
done:
    if (at_open) cli_atomic_close(&at, 0);
    for (int e = 0; P && e < no; e++) free(P[e].name);
    free(ib), free(ob), free(cb), free(O), free(P), free(oix), free(why), free(mk), free(mv);
    return rc;
}

static int acc_open(st_acc *A, int namew) {
    memset(A, 0, sizeof *A);
    A->namew = namew > 60 ? 60 : namew < 6 ? 6 : namew;
    A->worst = INFINITY;
    A->R = open_memstream(&A->rows, &A->rows_n);
    A->JS = open_memstream(&A->js, &A->js_n);
    if (!A->R || !A->JS) return cli_error(SUB, "out of memory");
    fprintf(A->R, "%-*s %-11s %-16s %12s %-14s %-11s %-11s %-11s %-11s %-12s %-9s %s\n", A->namew, "tensor", "dtype", "shape", "n",
            "amax", "overflow", "saturated", "flushed", "subnormal", "nonfinite_in", "sqnr_db", "max_rel_err");
    return 0;
}
static void acc_free(st_acc *A) {
    if (A->R) fclose(A->R);
    if (A->JS) fclose(A->JS);
    free(A->rows), free(A->js), free(A->worst_name);
    memset(A, 0, sizeof *A);
}

/* The figures of A, as --stats and --stats-json ask (FILES: how many
 * files the tensors came from, 0 for one file). 0, or 2 after a message. */
static int acc_write(outset *W, st_acc *A, fpemu_caster *c, const st_job *J, int files) {
    char fname[64], recipe[32];
    fpemu_caster_get(c, "format", fname, sizeof fname);
    fpemu_caster_get(c, "scaling", recipe, sizeof recipe);
    int worst = A->worst_name && isfinite(A->worst);
    fprintf(A->JS, "\n], \"total\": {\"cast\": %d, \"kept\": %d", A->ncast, A->nkept);
    if (files) fprintf(A->JS, ", \"files\": %d", files);
    for (int k = 0; k < 6; k++) fprintf(A->JS, ", \"%s\": %.0f", tot_keys[k], A->tot[k]);
    fprintf(A->JS, ", \"worst_sqnr_db\": ");
    if (worst) fprintf(A->JS, "%.9g", A->worst);
    else fprintf(A->JS, "null");
    fprintf(A->JS, ", \"worst_sqnr_tensor\": ");
    if (worst) cli_json_str(A->JS, A->worst_name);
    else fprintf(A->JS, "null");
    fprintf(A->JS, "}}\n");
    int e = fclose(A->R) | fclose(A->JS);
    A->R = A->JS = NULL;
    if (e) return cli_error(SUB, "out of memory");
    if (J->stats_path) {
        char *text = NULL;
        size_t tn = 0;
        FILE *T = open_memstream(&text, &tn);
        if (!T) return cli_error(SUB, "out of memory");
        fprintf(T, "format        %s\nscaling       %s\n", fname, recipe);
        if (files) fprintf(T, "files         %d\n", files);
        fprintf(T, "tensors       %d cast, %d kept\nn             %.0f\n", A->ncast, A->nkept, A->tot[0]);
        for (int k = 1; k < 6; k++)
            fprintf(T, "%-13s %.0f (%.6g%%)\n", tot_keys[k], A->tot[k], A->tot[0] ? 100 * A->tot[k] / A->tot[0] : 0.0);
        if (worst) fprintf(T, "worst_sqnr_db %.6g (%s)\n", A->worst, A->worst_name);
        else if (J->figures && A->ncast) fprintf(T, "worst_sqnr_db inf (every cast tensor exact)\n");
        fprintf(T, "\n%s", A->rows);
        int w = fclose(T) ? cli_error(SUB, "out of memory") : write_text(W, "--stats", J->stats_path, text);
        free(text);
        if (w) return w;
    }
    if (J->json_path) {
        /* the head, then the tensors' objects as they were written */
        char *head = NULL;
        size_t hn = 0;
        FILE *H = open_memstream(&head, &hn);
        if (!H) return cli_error(SUB, "out of memory");
        fprintf(H, "{\"format\": \"%s\", \"scaling\": \"%s\", \"tensors\": [%s", fname, recipe, A->js);
        int w = fclose(H) ? cli_error(SUB, "out of memory") : write_text(W, "--stats-json", J->json_path, head);
        free(head);
        if (w) return w;
    }
    return 0;
}

/* One safetensors file into another, the file and its figures staged in W. */
static int cast_safetensors(outset *W, fpemu_caster *c, const st_job *J) {
    if (!cli_has_suffix(J->out, ".safetensors"))
        return cli_error(SUB, "--out %s: %s is a safetensors file, so is the output: give a name ending in .safetensors", J->out, J->in);
    char err[1024];
    st_file S;
    if (st_open(J->in, &S, err, sizeof err)) return cli_error(SUB, "%s", err);
    int namew = 0; /* the names' column: the longest name */
    for (int i = 0; i < S.count; i++)
        if ((int)strlen(S.t[i].name) > namew) namew = (int)strlen(S.t[i].name);
    st_acc A;
    uint64_t bytes = 0;
    int rc = acc_open(&A, namew);
    if (!rc) rc = cast_file(W, c, J, &S, J->out, NULL, NULL, 0, NULL, NULL, &A, &bytes);
    if (!rc) rc = acc_write(W, &A, c, J, 0);
    acc_free(&A);
    st_free(&S);
    return rc;
}

/* "A/B", malloc'ed (NULL: out of memory). */
static char *join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* A sharded checkpoint: the index J->in (MODEL.safetensors.index.json, as
 * Hugging Face writes it: {"metadata": {"total_size": ...}, "weight_map":
 * {tensor: shard file}}) and its shards beside it, into the new folder
 * J->out: each shard cast under its own name, and the index with
 * metadata.total_size the new data bytes. The folder is made under a
 * temporary name and renamed when every file is in it, after the figures
 * are staged in W; on an error it is removed. */
static int cast_index(outset *W, fpemu_caster *c, const st_job *J) {
    const char *in = J->in;
    char out[4096];
    if (snprintf(out, sizeof out, "%s", J->out) >= (int)sizeof out) return cli_error(SUB, "--out: path too long");
    for (size_t l = strlen(out); l > 1 && out[l - 1] == '/'; l--) out[l - 1] = 0; /* NEWDIR/ is NEWDIR */
    struct stat st;
    if (!lstat(out, &st) || errno != ENOENT)
        return cli_error(SUB, "--out %s: exists; a sharded checkpoint is written into a new folder", out);
    size_t n;
    char *text = csv_slurp_max(in, (size_t)64 << 20, &n);
    if (!text && errno == EFBIG) return cli_error(SUB, "%s: an index of more than 64 MiB", in);
    if (!text) return cli_error(SUB, "%s: cannot read: %s", in, strerror(errno));
    cJSON *doc = cJSON_ParseWithLength(text, n);
    free(text);
    int rc = 2, nmap = 0, nshard = 0, made = 0;
    st_map *map = NULL;
    const char **shards = NULL;
    unsigned char *seen = NULL;
    const char *slash = strrchr(in, '/'), *iname = slash ? slash + 1 : in;
    char *dir = NULL, *tmp = NULL;
    st_acc A = {0};
    cJSON *wm = cJSON_GetObjectItemCaseSensitive(doc, "weight_map"); /* (the scales' tensors join it: cast_file) */
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    if (!cJSON_IsObject(doc) || !cJSON_IsObject(wm)) {
        cli_error(SUB, "%s: not a safetensors index (expected a JSON object with a \"weight_map\" object)", in);
        goto done;
    }
    if (meta && !cJSON_IsObject(meta)) { cli_error(SUB, "%s: \"metadata\" is not an object", in); goto done; }
    int cap = cJSON_GetArraySize(wm);
    map = calloc((size_t)cap + 1, sizeof *map);
    shards = calloc((size_t)cap + 2, sizeof *shards);
    seen = calloc((size_t)cap + 1, 1);
    if (!map || !shards || !seen) { cli_error(SUB, "out of memory"); goto done; }
    int namew = 0;
    for (const cJSON *e = wm->child; e; e = e->next) {
        const char *sh = cJSON_IsString(e) ? e->valuestring : NULL;
        if (!sh || strchr(sh, '/') || sh[0] == '.' || !cli_has_suffix(sh, ".safetensors") || !strcmp(sh, iname)) {
            cli_error(SUB, "%s: weight_map['%s'] is not the name of a .safetensors file beside the index", in, e->string);
            goto done;
        }
        map[nmap++] = (st_map){e->string, sh};
        if ((int)strlen(e->string) > namew) namew = (int)strlen(e->string);
        int known = 0;
        for (int i = 0; i < nshard && !known; i++) known = !strcmp(shards[i], sh);
        if (!known) shards[nshard++] = sh;
    }
    qsort(map, (size_t)nmap, sizeof *map, map_cmp);
    for (int i = 1; i < nmap; i++)
        if (!strcmp(map[i - 1].name, map[i].name)) { cli_error(SUB, "%s: weight_map names '%s' twice", in, map[i].name); goto done; }
    for (int g = 0; g < J->nonly; g++) {
        int hit = 0;
        for (int i = 0; i < nmap && !hit; i++) hit = !fnmatch(J->only[g], map[i].name, 0);
        if (!hit) { cli_error(SUB, "--only '%s': no tensor of %s has a name that matches", J->only[g], in); goto done; }
    }
    /* the shards beside the index; the folder under a temporary name */
    if (!(dir = slash ? strndup(in, (size_t)(slash - in)) : strdup(".")) || !(tmp = malloc(strlen(out) + 32))) {
        cli_error(SUB, "out of memory");
        goto done;
    }
    if (!*dir) strcpy(dir, "/"); /* an index in / */
    sprintf(tmp, "%s.tmp.%ld", out, (long)getpid());
    if (mkdir(tmp, 0777)) { cli_error(SUB, "--out %s: cannot make the folder: %s", out, strerror(errno)); goto done; }
    made = 1;
    if ((rc = acc_open(&A, namew)) != 0) goto done;
    rc = 2;
    uint64_t bytes = 0;
    for (int i = 0; i < nshard; i++) {
        char *sin = join(dir, shards[i]), *sout = join(tmp, shards[i]), err[1024];
        st_file S;
        int r = !sin || !sout ? cli_error(SUB, "out of memory")
                : st_open(sin, &S, err, sizeof err) ? cli_error(SUB, "%s", err)
                : cast_file(NULL, c, J, &S, sout, shards[i], map, nmap, seen, wm, &A, &bytes);
        if (sin && sout) st_free(&S);
        free(sin), free(sout);
        if (r) goto done;
    }
    for (int i = 0; i < nmap; i++)
        if (!seen[i]) { cli_error(SUB, "%s: weight_map places '%s' in %s, which does not hold it", in, map[i].name, map[i].shard); goto done; }
    /* the index: the input's, with the new total size and how it was made */
    if (!meta && !(meta = cJSON_AddObjectToObject(doc, "metadata"))) { cli_error(SUB, "out of memory"); goto done; }
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "total_size");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "fpemu_cast");
    char *js = cJSON_AddNumberToObject(meta, "total_size", (double)bytes) && cJSON_AddStringToObject(meta, "fpemu_cast", J->argline)
                   ? cJSON_Print(doc) : NULL;
    char *ip = join(tmp, iname);
    cli_atomic at;
    int ok = js && ip && !cli_atomic_open(&at, ip, "w");
    if (ok) {
        ok = fputs(js, at.f) >= 0 && fputc('\n', at.f) != EOF;
        ok = !cli_atomic_close(&at, ok) && ok;
    }
    free(js), free(ip);
    if (!ok) { cli_error(SUB, "--out %s: cannot write the index: %s", out, strerror(errno)); goto done; }
    /* the figures staged (the caller puts them in place), then the folder */
    if ((rc = acc_write(W, &A, c, J, nshard)) != 0) goto done;
    rc = 2;
    if (rename(tmp, out)) { cli_error(SUB, "--out %s: cannot put the folder in place: %s", out, strerror(errno)); goto done; }
    made = 0;
    rc = 0;
done:
    if (made) { /* what this run put in the folder, then the folder */
        shards[nshard] = iname;
        for (int i = 0; i <= nshard; i++) {
            char *p = join(tmp, shards[i]);
            if (p) unlink(p);
            free(p);
        }
        rmdir(tmp);
    }
    acc_free(&A);
    free(map), free(shards), free(seen), free(tmp), free(dir);
    cJSON_Delete(doc);
    return rc;
}

int cmd_cast(int argc, char **argv) {
#if defined(__GLIBC__)
    /* A checkpoint's tensors take work arrays of like sizes one after
     * another: glibc maps each large one and unmaps it when freed, so every
     * tensor faulted its pages in afresh (a third of a cast's time). Kept
     * in the heap instead, the pages are reused; the peak grows a little
     * where sizes differ (docs/cast.md, "Cost"). */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    const char *to = NULL, *in = NULL, *out = NULL, *from = NULL, *round = "rne", *recipe = "none", *nanp = "canonical";
    const char *stats_path = NULL, *json_path = NULL, *plot_path = NULL, *axis_s = NULL, *seed_s = NULL;
    const char *scales_path = NULL;
    char *scales2 = NULL; /* nvfp4: S_2.npy */
    int sat = 0, codes_out = 0, nonly = 0, nskip = 0;
    const char **only = calloc((size_t)argc + 1, sizeof *only), **skip = calloc((size_t)argc + 1, sizeof *skip);
    if (!only || !skip) { free(only), free(skip); return cli_error(SUB, "out of memory"); }
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char **dst = NULL;
        if (cli_is_help(s)) { free(only), free(skip); usage(stdout); return cli_stdout_done(SUB, 0); }
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
        else if (!strcmp(s, "--scales")) dst = &scales_path;
        else if (!strcmp(s, "--only")) dst = &only[nonly++];
        else if (!strcmp(s, "--skip")) dst = &skip[nskip++];
        if (dst) {
            if (i + 1 >= argc) { free(only), free(skip); return cli_error(SUB, "%s needs a value", s); }
            *dst = argv[++i];
        } else if (!strcmp(s, "--sat")) sat = 1;
        else if (!strcmp(s, "--codes")) codes_out = 1;
        else { free(only), free(skip); return cli_error(SUB, "unknown option '%s' (see fpemu cast --help)", s); }
    }
    int rc = 2;
    static outset W; /* every file this cast writes (about 66 KiB: not on the stack) */
    W.n = 0;
    fpemu_caster *c = NULL;
    char *argline = NULL;
    tensor X;
    memset(&X, 0, sizeof X);
    void *vals = NULL, *obuf = NULL;
    double *xd = NULL, *xs = NULL;
    if (!to) { cli_error(SUB, "--to FMT is required"); goto done; }
    if (!in) { cli_error(SUB, "--in X.npy (or W.safetensors) is required"); goto done; }
    if (!out) { cli_error(SUB, "--out Y.npy (or Y.safetensors) is required"); goto done; }
    /* the cast and its figures are the library's (fpemu_caster, fpemu_api.h) */
    char err[512];
    if (!(c = fpemu_caster_new(to, err, sizeof err))) { cli_error(SUB, "--to %s: %s", to, err); goto done; }
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

    /* a safetensors file (cast_safetensors), or the index of a sharded checkpoint (cast_index) */
    unsigned char head[64];
    size_t hn = 0;
    FILE *hf = fopen(in, "rb");
    if (hf) hn = fread(head, 1, sizeof head, hf), fclose(hf);
    int index = cli_has_suffix(in, ".safetensors.index.json");
    if (index || st_sniff(head, hn)) {
        if (from) { cli_error(SUB, "--from is for .npy inputs; %s is a safetensors file, whose dtypes say what they hold", in); goto done; }
        if (plot_path) { cli_error(SUB, "--plot draws one tensor: cast a tensor of %s saved as .npy to see it", in); goto done; }
        if (scales_path) {
            cli_error(SUB, "--scales is for a .npy input; a safetensors cast with --codes writes each tensor's scales into the "
                      "output as NAME_scale (docs/cast.md)");
            goto done;
        }
        st_job J = {in, out, NULL, only, skip, nonly, nskip, codes_out, stats_path || json_path, axis_s != NULL, -1, stats_path, json_path};
        if (axis_s) {
            char *e;
            errno = 0;
            J.axis = strtol(axis_s, &e, 10);
            if (e == axis_s || *e || errno) { cli_error(SUB, "--axis needs an integer"); goto done; }
            snprintf(num, sizeof num, "%ld", J.axis);
            if (fpemu_caster_set(c, "axis", num)) { cli_error(SUB, "--axis %s: %s", axis_s, fpemu_caster_error(c)); goto done; }
        }
        if (!stats_path && !json_path) fpemu_caster_set(c, "stats", "counts");
        /* how the file was made, for its metadata */
        size_t al = 16;
        for (int i = 0; i < argc; i++) al += strlen(argv[i]) + 1;
        if (!(argline = malloc(al))) { cli_error(SUB, "out of memory"); goto done; }
        strcpy(argline, "fpemu");
        for (int i = 0; i < argc; i++) strcat(strcat(argline, " "), argv[i]);
        J.argline = argline;
        rc = index ? cast_index(&W, c, &J) : cast_safetensors(&W, c, &J);
        if (!rc) rc = outset_commit(&W);
        goto done;
    }
    if (nonly || nskip) { cli_error(SUB, "--only and --skip choose tensors of a safetensors file; %s is not one", in); goto done; }
    if (scales_path) { /* checked before anything is written */
        const size_t sl = strlen(scales_path);
        if (!codes_out || !scaled) {
            cli_error(SUB, "--scales %s: only with --codes and a --scaling recipe (the values of a cast without --codes are "
                      "dequantised already)", scales_path);
            goto done;
        }
        if (!cli_has_suffix(scales_path, ".npy") || sl == 4) {
            cli_error(SUB, "--scales %s: expected a file name ending in .npy", scales_path);
            goto done;
        }
        if (!strcmp(kind, "nvfp4")) {
            if (!(scales2 = malloc(sl + 3))) { cli_error(SUB, "out of memory"); goto done; }
            snprintf(scales2, sl + 3, "%.*s_2.npy", (int)(sl - 4), scales_path);
        }
        if (!strcmp(scales_path, out) || (scales2 && !strcmp(scales2, out))) {
            cli_error(SUB, "--scales %s: the same file as --out%s", scales_path, scales2 ? " (or, with nvfp4, as its S_2.npy)" : "");
            goto done;
        }
    }
    if (read_npy(in, &X)) goto done;
    const fpemu_format *ff = NULL;
    const char *name = NULL;
    if (X.dtype == NPY_V1 || X.dtype == NPY_V2) {
        name = from ? from : X.dtype == NPY_V2 ? "bf16" : (!strcmp(X.descr, "<f1") || !strcmp(X.descr, "|f1")) ? "e5m2" : NULL;
        if (!name) {
            cli_error(SUB, "%s: one-byte elements ('%s') do not say which ml_dtypes type they are: give --from "
                      "(e4m3, e4m3fnuz, e5m2fnuz, e4m3b11fnuz, e3m4, e8m0, e2m1, e2m3, e3m2, ...)", in, X.descr);
            goto done;
        }
        if (!(ff = fpemu_format_get(name, err, sizeof err))) { cli_error(SUB, "--from %s: %s", name, err); goto done; }
        if (ff->container != (X.dtype == NPY_V2 ? 16 : 8) || ff->pad) {
            cli_error(SUB, "--from %s: %s holds %d-byte elements ('%s'), %s codes are %d bits", name, in, X.dtype == NPY_V2 ? 2 : 1,
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
    int in_type = X.dtype == NPY_F8 ? FPEMU_API_F64 : X.dtype == NPY_F4 ? FPEMU_API_F32 : FPEMU_API_CODES;
    const char *in_fmt = X.dtype == NPY_F2 ? "f16" : name;
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
    /* the outputs: Y, its scales, then the figures, then the picture */
    if (codes_out) {
        const char *descr = isz == 1 ? "|u1" : isz == 2 ? "<u2" : isz == 4 ? "<u4" : "<u8";
        if (write_npy(&W, "--out", out, &X, descr, obuf, isz)) goto done;
    } else if (X.dtype == NPY_F8) {
        if (write_npy(&W, "--out", out, &X, "<f8", vals, 8)) goto done;
    } else {
        if (write_npy(&W, "--out", out, &X, "<f4", vals, 4)) goto done;
    }
    if (scales_path && write_scales(&W, c, &X, scales_path, scales2)) goto done;
    if (stats_path && write_figures(&W, c, 0, "--stats", stats_path)) goto done;
    if (json_path && write_figures(&W, c, 1, "--stats-json", json_path)) goto done;
    if (plot_path) {
        input_values(&X, ff, xd);
        if (plot(&W, plot_path, xd, scaled ? xs : xd, n, f, recipe)) goto done;
    }
    rc = outset_commit(&W);
done:
    outset_abort(&W);
    fpemu_caster_free(c);
    npy_nd_free(&X), free(vals), free(obuf), free(xd), free(xs), free(argline), free(only), free(skip), free(scales2);
    return rc;
}
