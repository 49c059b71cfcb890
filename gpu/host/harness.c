/* SPDX-License-Identifier: MIT */
/* harness.c: run kinds on a backend, compare every output bit with the
 * emu/ reference, collect replayable mismatch lines (see harness.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "mma.h"
#include "outfile.h"

/* The preset table's compute-capability ranges (emu/mma.c, cc_min..cc_max). */
const char *gpu_preset_for_cc(int cc) { return fpemu_mma_preset_for_cc(cc); }

static void errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    if (!err || !errlen) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- reference ------------------------------------------------------------------ */

int gpu_reference_init(gpu_reference *r, const gpu_kind *k, const char *preset, int cc, char *err,
                       size_t errlen) {
    char e2[256];
    memset(r, 0, sizeof *r);
    r->kind = k;
    if (gpu_kind_formats(k, &r->f, err, errlen)) return -1;
    if (k->op == GPU_OP_CVT) {
        snprintf(r->model_name, sizeof r->model_name, "fpemu_convert %s%s nan=cuda",
                 fpemu_round_name((fpemu_round)k->round), k->satfinite ? " sat" : "");
        snprintf(r->replay, sizeof r->replay, "fpemu run f32_to_%s --round %s%s --nan cuda", r->f.d->name,
                 fpemu_round_name((fpemu_round)k->round), k->satfinite ? " --sat" : "");
        return 0;
    }
    if (!preset) {
        errf(err, errlen, "no emu preset for compute capability %d.%d", cc / 10, cc % 10);
        return -1;
    }
    if (r->f.is_int) {
        if (fpemu_mma_model_preset_int(&r->model, preset, r->f.a_signed, r->f.b_signed, k->satfinite, e2, sizeof e2)) {
            errf(err, errlen, "preset %s for %s: %s", preset, k->name, e2);
            return -1;
        }
        snprintf(r->model_name, sizeof r->model_name, "%s", preset);
        snprintf(r->replay, sizeof r->replay, "fpemu mma --model %.32s --a %s --b %s --c s32 --d s32%s", preset,
                 k->a, k->b, k->satfinite ? " --sat" : "");
        return 0;
    }
    if (fpemu_mma_model_preset(&r->model, preset, r->f.a, r->f.b, r->f.c, r->f.d, e2, sizeof e2)) {
        errf(err, errlen, "preset %s for %s: %s", preset, k->name, e2);
        return -1;
    }
    snprintf(r->model_name, sizeof r->model_name, "%s", preset);
    snprintf(r->replay, sizeof r->replay, "fpemu mma --model %.32s --a %s --b %s --c %s --d %s", preset,
             r->f.a->name, r->f.b->name, r->f.c->name, r->f.d->name);
    if (k->op == GPU_OP_MMA && r->f.a->bits == 8 && cc / 10 == 9) {
        r->fp8_via_f16 = 1;
        r->f16 = fpemu_format_get("f16", NULL, 0);
        r->f32 = r->f.c;
        if (!r->f16 || fpemu_mma_model_preset(&r->f16model, preset, r->f16, r->f16, r->f32, r->f32, e2, sizeof e2)) {
            errf(err, errlen, "preset %s for f16 (sm_90 fp8 mma.sync path): %s", preset, e2);
            return -1;
        }
        snprintf(r->model_name, sizeof r->model_name, "%.32s f16 x2 + %.8s add (sm_90 fp8 mma.sync)", preset, r->f32->name);
    }
    return 0;
}

int gpu_reference_set(gpu_reference *r, const char *key, const char *value, char *err, size_t errlen) {
    char e2[256];
    if (r->kind->op == GPU_OP_CVT || r->f.is_int) return 0; /* the MMA model's parameters only */
    if (fpemu_mma_model_set(&r->model, key, value, e2, sizeof e2) ||
        (r->fp8_via_f16 && fpemu_mma_model_set(&r->f16model, key, value, e2, sizeof e2))) {
        errf(err, errlen, "--set %s=%s: %s", key, value, e2);
        return -1;
    }
    size_t ml = strlen(r->model_name), rl = strlen(r->replay);
    snprintf(r->model_name + ml, sizeof r->model_name - ml, " %s=%s", key, value);
    snprintf(r->replay + rl, sizeof r->replay - rl, " --set %s=%s", key, value);
    if (strlen(r->model_name) + 1 >= sizeof r->model_name || strlen(r->replay) + 1 >= sizeof r->replay) {
        errf(err, errlen, "--set %s=%s: too many model options", key, value);
        return -1;
    }
    return 0;
}

/* sm_90's fp8 mma.sync, per instruction (K = 32): the inputs become f16
 * exactly; one HMMA.16816 sums the products with k%4 < 2 from +0, a second
 * adds those with k%4 >= 2 to it (a chained f16 block of the preset, with the
 * accumulator's format), and an FADD (f32 accumulators) or HADD2 (f16),
 * round to nearest even, adds the result to the accumulator. */
static uint64_t dot_fp8_via_f16(const gpu_reference *r, const uint64_t *a, const uint64_t *b, int kk, uint64_t c) {
    const int K = r->kind->k;
    uint64_t acc = c, pa[32], pb[32];
    fpemu_ctx ctx;
    for (int s = 0; s * K < kk; s++) {
        int n = 0;
        fpemu_ctx_init(&ctx);
        for (int half = 0; half < 2; half++)
            for (int i = 0; i < K; i++)
                if (((i % 4) >= 2) == half) {
                    pa[n] = fpemu_convert(r->f16, r->f.a, a[s * K + i], &ctx);
                    pb[n] = fpemu_convert(r->f16, r->f.b, b[s * K + i], &ctx);
                    n++;
                }
        uint64_t t = fpemu_mma_dot(&r->f16model, pa, pb, (size_t)n, 0, NULL);
        fpemu_ctx_init(&ctx);
        ctx.nan_policy = FPEMU_NAN_CUDA; /* FADD's NaN: 0x7FFFFFFF; HADD2's assumed alike (0x7FFF) */
        acc = fpemu_add(r->f32, acc, t, &ctx);
    }
    return acc;
}

uint64_t gpu_reference_dot(const gpu_reference *r, const uint64_t *a, const uint64_t *b, int kk, uint64_t c) {
    if (r->f.is_int) {
        int32_t ia[GPU_MAX_STEPS * 32], ib[GPU_MAX_STEPS * 32];
        for (int i = 0; i < kk; i++) {
            ia[i] = r->f.a_signed ? (int8_t)(uint8_t)a[i] : (uint8_t)a[i];
            ib[i] = r->f.b_signed ? (int8_t)(uint8_t)b[i] : (uint8_t)b[i];
        }
        return (uint32_t)fpemu_mma_dot_int(&r->model, ia, ib, (size_t)kk, (int32_t)(uint32_t)c);
    }
    if (r->fp8_via_f16) return dot_fp8_via_f16(r, a, b, kk, c);
    return fpemu_mma_dot(&r->model, a, b, (size_t)kk, c, NULL);
}

uint64_t gpu_reference_cvt(const gpu_reference *r, uint32_t x) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = (fpemu_round)r->kind->round;
    ctx.sat = r->kind->satfinite;
    ctx.nan_policy = FPEMU_NAN_CUDA; /* measured: every NaN result is the all-ones one (reports/gpu) */
    return fpemu_convert(r->f.d, r->f.a, x, &ctx);
}

/* ---- lines ------------------------------------------------------------------------ */

static int hexw(const gpu_reference *r, int which) {
    /* which: 0 a, 1 b, 2 c, 3 d */
    if (r->f.is_int) return which < 2 ? 2 : 8;
    const fpemu_format *f = which == 0 ? r->f.a : which == 1 ? r->f.b : which == 2 ? r->f.c : r->f.d;
    return fpemu_format_hex_digits(f);
}

/* Append to buf at *pos, never past len. */
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...) {
    va_list ap;
    if (*pos >= len) return;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n > 0) *pos += (size_t)n;
    if (*pos >= len) *pos = len - 1;
}

int gpu_format_mma_line(const gpu_reference *r, const uint64_t *a, const uint64_t *b, int kk, uint64_t c,
                        uint64_t gpu_d, uint64_t model_d, const char *what, char *buf, size_t len) {
    size_t pos = 0;
    int wa = hexw(r, 0), wb = hexw(r, 1), wc = hexw(r, 2), wd = hexw(r, 3);
    buf[0] = 0;
    put(buf, len, &pos, "echo '%0*llX", wc, (unsigned long long)c);
    for (int i = 0; i < kk; i++)
        put(buf, len, &pos, " %0*llX %0*llX", wa, (unsigned long long)a[i], wb, (unsigned long long)b[i]);
    put(buf, len, &pos, "' | %s   # => gpu %0*llX, model %0*llX", r->replay, wd, (unsigned long long)gpu_d, wd,
        (unsigned long long)model_d);
    if (r->fp8_via_f16)
        put(buf, len, &pos, " (model: the sm_90 path, per instruction: f16 block of k%%4<2 products, then k%%4>=2, then + C)");
    if (what && *what) put(buf, len, &pos, " [%s]", what);
    return (int)pos;
}

int gpu_format_cvt_line(const gpu_reference *r, uint32_t x, uint64_t gpu_y, uint64_t model_y, const char *what,
                        char *buf, size_t len) {
    size_t pos = 0;
    int wd = fpemu_format_hex_digits(r->f.d);
    buf[0] = 0;
    put(buf, len, &pos, "echo '%08X' | %s   # => gpu %0*llX, model %0*llX", x, r->replay, wd,
        (unsigned long long)gpu_y, wd, (unsigned long long)model_y);
    if (what && *what) put(buf, len, &pos, " [%s]", what);
    return (int)pos;
}

/* ---- validation ------------------------------------------------------------------- */

void gpu_validate_opts_init(gpu_validate_opts *o) {
    o->seed = 1;
    o->cases = 8192;
    o->chain_steps = 4;
    o->max_lines = 20;
}

void gpu_kind_result_free(gpu_kind_result *res) {
    for (int i = 0; i < res->nlines; i++) free(res->lines[i]);
    free(res->lines);
    res->lines = NULL;
    res->nlines = 0;
    for (int i = 0; i < res->nopen; i++) free(res->open[i]);
    free(res->open);
    res->open = NULL;
    res->nopen = 0;
}

/* Append a copy of line to the list (*v, *n); -1 when out of memory. */
static int push_line(char ***v, int *n, const char *line) {
    char **nl = realloc(*v, sizeof *nl * (size_t)(*n + 1));
    if (!nl) return -1;
    *v = nl;
    if (!(nl[*n] = strdup(line))) return -1;
    (*n)++;
    return 0;
}

/* A floor-family case whose lowest bits, at 2^j, were kept or cut. */
static void floor_mark(gpu_kind_result *res, int j, int kept) {
    if (!res->floor_seen) {
        res->floor_kept = INT_MAX;
        res->floor_cut = INT_MIN;
    }
    res->floor_seen = 1;
    if (kept && j < res->floor_kept) res->floor_kept = j;
    if (!kept && j > res->floor_cut) res->floor_cut = j;
}

/* One open-point case: what the device gave, read against the exact sum
 * rounded toward zero (the f32 floor family: exact, or cut below the
 * alignment quantum), against the f16 tie (2^-24 or 0), or as inf/max
 * finite (overflow) or a zero's sign. */
static int open_point(const gpu_reference *ref, gpu_kind_result *res, const char *what, const uint64_t *a,
                      const uint64_t *b, int kk, uint64_t c, uint64_t got, uint64_t want) {
    const fpemu_format *fd = ref->f.d;
    char line[400], meaning[160] = "";
    double g = fpemu_to_double(fd, got);
    int j;
    if (sscanf(what, "open point f16 floor j=%d", &j) == 1) {
        /* the tie 2^-25 + 2^j in f16: 2^-24 when the 2^j product is kept */
        int kept = fabs(g) == 0x1p-24;
        snprintf(meaning, sizeof meaning, "%s: the product 2^%d %s", kept ? "2^-24" : g == 0 ? "0" : "other", j,
                 kept ? "kept" : "cut");
        floor_mark(res, j, kept);
    } else if (sscanf(what, "open point emax floor j=%d", &j) == 1) {
        fpemu_mma_model ex;
        if (fpemu_mma_model_preset(&ex, "exact", ref->f.a, ref->f.b, ref->f.c, fd, NULL, 0) ||
            fpemu_mma_model_set(&ex, "out_round", "rtz", NULL, 0))
            return -1;
        uint64_t e = fpemu_mma_dot(&ex, a, b, (size_t)kk, c, NULL);
        int kept = got == e;
        snprintf(meaning, sizeof meaning, "%s (exact sum, RZ: %08llX): bits at 2^%d %s", kept ? "exact" : "low",
                 (unsigned long long)e, j, kept ? "kept" : "cut");
        if (!strstr(what, "negated")) floor_mark(res, j, kept);
    } else if (strstr(what, "2^-25 + 2^-48")) {
        snprintf(meaning, sizeof meaning, "%s", fabs(g) == 0x1p-24 ? "2^-24: the 2^-48 product kept"
                                                : g == 0 ? "0: the 2^-48 product cut (the tie went to even)"
                                                         : "neither 2^-24 nor 0");
    } else if (strstr(what, "overflow") || strstr(what, "FLT_MAX") || strstr(what, "65504")) {
        snprintf(meaning, sizeof meaning, "%s", isinf(g) ? "inf" : fabs(g) == fd->max_finite ? "max finite" : "finite");
    } else if (strstr(what, "zero sign")) {
        snprintf(meaning, sizeof meaning, "%s", g != 0 ? "not zero" : signbit(g) ? "-0" : "+0");
    }
    snprintf(line, sizeof line, "- %s: gpu %08llX (%a)%s%s; model %08llX%s", what + strlen("open point "),
             (unsigned long long)got, g, *meaning ? ", " : "", meaning, (unsigned long long)want,
             got == want ? "" : " (MISMATCH)");
    return push_line(&res->open, &res->nopen, line);
}

static int keep_line(gpu_kind_result *res, int max_lines, const char *line) {
    if (res->nlines >= max_lines) {
        res->dropped++;
        return 0;
    }
    return push_line(&res->lines, &res->nlines, line);
}

static void tally(gpu_tally *t, int mismatch, int nan_only) {
    t->cases++;
    t->mismatches += mismatch != 0;
    t->nan_only += nan_only != 0;
}

typedef struct batch {
    int ntiles, steps, row;      /* row: distribution, probe or adversarial */
    uint64_t *A, *B, *C, *D;     /* per tile: M*kk, kk*N, M*N, M*N */
    uint32_t *ia, *ib, *ic, *id;
    const char **what;           /* per tile and output, or NULL */
} batch;

static void batch_free(batch *b) {
    free(b->A), free(b->B), free(b->C), free(b->D);
    free(b->ia), free(b->ib), free(b->ic), free(b->id);
    memset(b, 0, sizeof *b);
}

static int batch_alloc(batch *b, const gpu_kind *k, int ntiles, int steps) {
    size_t kk = (size_t)k->k * steps, M = (size_t)k->m, N = (size_t)k->n, T = (size_t)ntiles;
    memset(b, 0, sizeof *b);
    b->ntiles = ntiles, b->steps = steps;
    b->A = calloc(T * M * kk, sizeof *b->A);
    b->B = calloc(T * kk * N, sizeof *b->B);
    b->C = calloc(T * M * N, sizeof *b->C);
    b->D = calloc(T * M * N, sizeof *b->D);
    b->ia = calloc(T * steps * gpu_a_words(k), sizeof *b->ia);
    b->ib = calloc(T * steps * gpu_b_words(k), sizeof *b->ib);
    b->ic = calloc(T * gpu_cd_words(k), sizeof *b->ic);
    b->id = calloc(T * gpu_cd_words(k), sizeof *b->id);
    if (!b->A || !b->B || !b->C || !b->D || !b->ia || !b->ib || !b->ic || !b->id) {
        batch_free(b);
        return -1;
    }
    return 0;
}

/* Pack, run, unpack, compare one batch of tiles. */
static int run_batch(const gpu_backend *be, const gpu_reference *ref, const gpu_validate_opts *o, batch *bt,
                     const gpu_case *cases, gpu_kind_result *res, char *err, size_t errlen) {
    const gpu_kind *k = ref->kind;
    const int M = k->m, N = k->n, kk = k->k * bt->steps;
    uint64_t va[GPU_MAX_STEPS * 32], vb[GPU_MAX_STEPS * 32];
    char line[4096];
    for (int t = 0; t < bt->ntiles; t++) {
        gpu_pack_a(k, bt->steps, bt->A + (size_t)t * M * kk, bt->ia + (size_t)t * bt->steps * gpu_a_words(k));
        gpu_pack_b(k, bt->steps, bt->B + (size_t)t * kk * N, bt->ib + (size_t)t * bt->steps * gpu_b_words(k));
        gpu_pack_cd(k, bt->C + (size_t)t * M * N, bt->ic + (size_t)t * gpu_cd_words(k));
    }
    if (be->run_mma(be->user, k, bt->ntiles, bt->steps, bt->ia, bt->ib, bt->ic, bt->id, err, errlen)) return -1;
    for (int t = 0; t < bt->ntiles; t++) {
        const uint64_t *A = bt->A + (size_t)t * M * kk, *B = bt->B + (size_t)t * kk * N, *C = bt->C + (size_t)t * M * N;
        uint64_t *D = bt->D + (size_t)t * M * N;
        gpu_unpack_cd(k, bt->id + (size_t)t * gpu_cd_words(k), D);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                for (int x = 0; x < kk; x++) va[x] = A[(size_t)i * kk + x], vb[x] = B[(size_t)x * N + j];
                uint64_t want = gpu_reference_dot(ref, va, vb, kk, C[i * N + j]);
                uint64_t got = D[i * N + j];
                int mis = got != want;
                int nan_only = mis && !ref->f.is_int && fpemu_is_nan(ref->f.d, got) && fpemu_is_nan(ref->f.d, want);
                tally(&res->rows[bt->row], mis, nan_only);
                if (bt->steps > 1) tally(&res->rows[GPU_ROW_CHAINED], mis, nan_only);
                tally(&res->total, mis, nan_only);
                if (cases && i == j && i < N && !strncmp(cases[t * N + i].what, "open point ", 11) &&
                    open_point(ref, res, cases[t * N + i].what, va, vb, kk, C[i * N + j], got, want)) {
                    errf(err, errlen, "out of memory");
                    return -1;
                }
                if (mis) {
                    char what[96];
                    if (cases && i == j && i < N) snprintf(what, sizeof what, "%s", cases[t * N + i].what);
                    else if (cases) snprintf(what, sizeof what, "%s row %d x col %d",
                                             bt->row == GPU_ROW_PROBE ? "probe" : "adversarial", i, j);
                    else snprintf(what, sizeof what, "%s%s tile %d (%d,%d)", gpu_dist_name(k, bt->row),
                                  bt->steps > 1 ? " chained" : "", t, i, j);
                    gpu_format_mma_line(ref, va, vb, kk, C[i * N + j], got, want, what, line, sizeof line);
                    if (keep_line(res, o->max_lines, line)) {
                        errf(err, errlen, "out of memory");
                        return -1;
                    }
                }
            }
    }
    return 0;
}

static int validate_mma(const gpu_backend *be, const gpu_reference *ref, const gpu_validate_opts *o,
                        gpu_kind_result *res, char *err, size_t errlen) {
    const gpu_kind *k = ref->kind;
    const int per_tile = k->m * k->n;
    uint64_t per_dist = (o->cases + GPU_DIST_COUNT - 1) / GPU_DIST_COUNT;
    int tiles = (int)((per_dist + per_tile - 1) / per_tile);
    int chain = o->chain_steps < 2 ? 0 : o->chain_steps > GPU_MAX_STEPS ? GPU_MAX_STEPS : o->chain_steps;
    batch bt;
    res->chain_steps = chain;
    for (int d = 0; d < GPU_DIST_COUNT; d++)
        for (int pass = 0; pass < 2; pass++) {
            int steps = pass ? chain : 1, nt = pass ? (tiles / 4 > 1 ? tiles / 4 : 1) : tiles;
            if (pass && !chain) continue;
            if (o->cases == 0) continue;
            if (batch_alloc(&bt, k, nt, steps)) {
                errf(err, errlen, "out of memory");
                return -1;
            }
            bt.row = d;
            for (int t = 0; t < nt; t++) {
                size_t kk = (size_t)k->k * steps;
                gpu_gen_tile(k, &ref->f, d, o->seed, (uint64_t)(pass ? 1000000 + t : t), steps,
                             bt.A + (size_t)t * k->m * kk, bt.B + (size_t)t * kk * k->n, bt.C + (size_t)t * per_tile);
            }
            int rc = run_batch(be, ref, o, &bt, NULL, res, err, errlen);
            batch_free(&bt);
            if (rc) return -1;
        }
    /* designed cases: N per tile on the diagonal */
    for (int set = 0; set < 2; set++) {
        gpu_case *cases = calloc(256, sizeof *cases);
        if (!cases) {
            errf(err, errlen, "out of memory");
            return -1;
        }
        int n = gpu_designed_cases(k, &ref->f, set, cases, 256);
        int nt = (n + k->n - 1) / k->n;
        if (n > 0) {
            /* pad to whole tiles with zero cases */
            if (batch_alloc(&bt, k, nt, 1)) {
                free(cases);
                errf(err, errlen, "out of memory");
                return -1;
            }
            bt.row = set == GPU_CASES_PROBE ? GPU_ROW_PROBE : GPU_ROW_ADVERSARIAL;
            for (int t = 0; t < nt; t++) {
                int m = n - t * k->n < k->n ? n - t * k->n : k->n;
                gpu_place_cases(k, cases + t * k->n, m, bt.A + (size_t)t * k->m * k->k, bt.B + (size_t)t * k->k * k->n,
                                bt.C + (size_t)t * per_tile);
            }
            int rc = run_batch(be, ref, o, &bt, cases, res, err, errlen);
            batch_free(&bt);
            if (rc) {
                free(cases);
                return -1;
            }
        }
        free(cases);
    }
    return 0;
}

static int validate_cvt(const gpu_backend *be, const gpu_reference *ref, const gpu_validate_opts *o,
                        gpu_kind_result *res, char *err, size_t errlen) {
    const gpu_kind *k = ref->kind;
    size_t per_dist = (size_t)((o->cases + GPU_DIST_COUNT - 1) / GPU_DIST_COUNT);
    char line[512];
    for (int d = 0; d <= GPU_DIST_COUNT; d++) {
        size_t n = d < GPU_DIST_COUNT ? per_dist : 64;
        if (n == 0) continue;
        uint32_t *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
        if (!x || !y) {
            free(x), free(y);
            errf(err, errlen, "out of memory");
            return -1;
        }
        if (d < GPU_DIST_COUNT) gpu_gen_cvt(k, &ref->f, d, o->seed, n, x);
        else n = (size_t)gpu_cvt_adversarial(k, &ref->f, x, 64);
        int rc = be->run_cvt(be->user, k, n, x, y, err, errlen);
        for (size_t i = 0; i < n && !rc; i++) {
            uint64_t want = gpu_reference_cvt(ref, x[i]), got = y[i];
            int mis = got != want;
            int nan_only = mis && fpemu_is_nan(ref->f.d, got) && fpemu_is_nan(ref->f.d, want);
            int row = d < GPU_DIST_COUNT ? d : GPU_ROW_ADVERSARIAL;
            tally(&res->rows[row], mis, nan_only);
            tally(&res->total, mis, nan_only);
            if (mis) {
                gpu_format_cvt_line(ref, x[i], got, want, d < GPU_DIST_COUNT ? gpu_dist_name(k, d) : "adversarial",
                                    line, sizeof line);
                if (keep_line(res, o->max_lines, line)) {
                    errf(err, errlen, "out of memory");
                    rc = -1;
                }
            }
        }
        free(x), free(y);
        if (rc) return -1;
    }
    return 0;
}

int gpu_validate_kind(const gpu_backend *be, const gpu_reference *ref, const gpu_validate_opts *o,
                      gpu_kind_result *res, char *err, size_t errlen) {
    const gpu_kind *k = ref->kind;
    memset(res->rows, 0, sizeof res->rows);
    memset(&res->total, 0, sizeof res->total);
    res->kind = k;
    snprintf(res->model, sizeof res->model, "%s", ref->model_name);
    res->nfrac = ref->model.nfrac;
    snprintf(res->replay, sizeof res->replay, "%s", ref->replay);
    return k->op == GPU_OP_CVT ? validate_cvt(be, ref, o, res, err, errlen) : validate_mma(be, ref, o, res, err, errlen);
}

/* ---- report ----------------------------------------------------------------------- */

void gpu_report_filename(const gpu_report_info *info, char *buf, size_t len) {
    size_t pos = 0;
    int dash = 1;
    for (const char *p = info->device; *p && pos + 1 < len; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
        if (ok) buf[pos++] = *p, dash = 0;
        else if (!dash) buf[pos++] = '-', dash = 1;
    }
    while (pos > 0 && buf[pos - 1] == '-') pos--;
    if (pos == 0 && len > 8) pos = (size_t)snprintf(buf, len, "unknown");
    snprintf(buf + pos, len - pos, "-%.10s.md", info->date);
}

static void version_str(int v, char *buf, size_t len) {
    if (v <= 0) snprintf(buf, len, "none");
    else snprintf(buf, len, "%d.%d (%d)", v / 1000, (v % 1000) / 10, v);
}

int gpu_report_write(FILE *f, const gpu_report_info *info, const gpu_kind_result *res, int n) {
    char drv[32], rt[32];
    version_str(info->driver_version, drv, sizeof drv);
    version_str(info->runtime_version, rt, sizeof rt);
    fprintf(f, "# GPU validation: %s\n\n", info->device);
    fprintf(f, "- device: %s%s%s\n", info->device, *info->uuid ? ", uuid " : "", info->uuid);
    fprintf(f, "- compute capability: %d.%d\n", info->cc / 10, info->cc % 10);
    fprintf(f, "- driver: %s, CUDA runtime: %s\n", drv, rt);
    fprintf(f, "- backend: %s, emu preset: %s, fpemu %s\n", info->backend, info->preset, FPEMU_VERSION);
    fprintf(f, "- date: %s\n", info->date);
    fprintf(f, "- seed: %llu, random cases per instruction: %llu (plus probe vectors and adversarial cases)\n",
            (unsigned long long)info->seed, (unsigned long long)info->cases);
    if (*info->command) fprintf(f, "- command: `%s`\n", info->command);
    fprintf(f, "\nEvery output is compared bit for bit with the emu/ model; a case is one output element "
               "(one dot product, or one converted value). NaN-only mismatches (both sides NaN, different "
               "encodings) are counted as mismatches and also listed separately.\n");
    fprintf(f, "\n## Summary\n\n```\n");
    for (int i = 0; i < n; i++)
        if (!res[i].skipped[0])
            fprintf(f, "instruction=%s cases=%llu mismatches=%llu\n", res[i].kind->name,
                    (unsigned long long)res[i].total.cases, (unsigned long long)res[i].total.mismatches);
    fprintf(f, "```\n");
    int nopen = 0;
    for (int i = 0; i < n; i++) nopen += res[i].nopen;
    if (nopen) {
        fprintf(f, "\n## Tensor-core model open points (docs/tensor-cores.md)\n\nCases built to settle them (gpu/host/gen.c, "
                   "open_point_cases), as the device answered. The emax floor family: c = 0 and products near "
                   "2^(j+14) whose exact sum is a multiple of f32's quantum 2^-149 and whose lowest bits are at "
                   "2^j; the output is exact iff the alignment quantum 2^(floor - nfrac) is at most 2^j.\n");
        for (int i = 0; i < n; i++) {
            const gpu_kind_result *r = &res[i];
            if (!r->nopen) continue;
            fprintf(f, "\n%s:\n\n", r->kind->name);
            for (int l = 0; l < r->nopen; l++) fprintf(f, "%s\n", r->open[l]);
            if (r->floor_seen && r->floor_cut != INT_MIN && r->floor_kept != INT_MAX &&
                r->floor_cut + 1 == r->floor_kept)
                fprintf(f, "\nemax floor: bits at 2^%d cut, at 2^%d kept: with nfrac %d the floor is %d.\n",
                        r->floor_cut, r->floor_kept, r->nfrac, r->floor_kept + r->nfrac);
            else if (r->floor_seen && r->floor_cut == INT_MIN)
                fprintf(f, "\nemax floor: not placed by these cases (lowest kept 2^%d, none cut).\n",
                        r->floor_kept == INT_MAX ? 0 : r->floor_kept);
            else if (r->floor_seen)
                fprintf(f, "\nemax floor: not placed by these cases (lowest kept 2^%d, highest cut 2^%d).\n",
                        r->floor_kept == INT_MAX ? 0 : r->floor_kept, r->floor_cut);
        }
    }
    int nskip = 0;
    for (int i = 0; i < n; i++) nskip += res[i].skipped[0] != 0;
    if (nskip) {
        fprintf(f, "\nNot run on this device:\n\n");
        for (int i = 0; i < n; i++)
            if (res[i].skipped[0]) fprintf(f, "- %s: %s\n", res[i].kind->name, res[i].skipped);
    }
    for (int i = 0; i < n; i++) {
        const gpu_kind_result *r = &res[i];
        const gpu_kind *k = r->kind;
        if (r->skipped[0]) continue;
        fprintf(f, "\n## %s\n\n", k->name);
        fprintf(f, "- PTX: `%s`, kernel `%s`%s%s\n", k->ptx, k->kernel, *r->image ? ", image " : "", r->image);
        fprintf(f, "- model: %s; replay: `%s`\n", r->model, r->replay);
        if (k->note) fprintf(f, "- SASS note: %s\n", k->note);
        fprintf(f, "\n| inputs | cases | mismatches | NaN-only |\n| --- | ---: | ---: | ---: |\n");
        for (int row = 0; row < GPU_ROW_COUNT; row++) {
            const gpu_tally *t = &r->rows[row];
            char label[64];
            if (row < GPU_DIST_COUNT) snprintf(label, sizeof label, "%s", gpu_dist_name(k, row));
            else if (row == GPU_ROW_PROBE) snprintf(label, sizeof label, "probe vectors");
            else if (row == GPU_ROW_ADVERSARIAL) snprintf(label, sizeof label, "adversarial");
            else snprintf(label, sizeof label, "of which chained (%d instructions)", r->chain_steps);
            if (row == GPU_ROW_CHAINED && !t->cases) continue;
            if (row == GPU_ROW_PROBE && k->op == GPU_OP_CVT) continue;
            fprintf(f, "| %s | %llu | %llu | %llu |\n", label, (unsigned long long)t->cases,
                    (unsigned long long)t->mismatches, (unsigned long long)t->nan_only);
        }
        fprintf(f, "| **total** | %llu | %llu | %llu |\n", (unsigned long long)r->total.cases,
                (unsigned long long)r->total.mismatches, (unsigned long long)r->total.nan_only);
        if (r->nlines) {
            fprintf(f, "\nMismatches (%d shown%s):\n\n```\n", r->nlines, r->dropped ? ", more left out" : "");
            for (int l = 0; l < r->nlines; l++) fprintf(f, "%s\n", r->lines[l]);
            fprintf(f, "```\n");
            if (r->dropped) fprintf(f, "\n%llu more mismatching cases left out.\n", (unsigned long long)r->dropped);
        }
    }
    fflush(f);
    return ferror(f) ? -1 : 0;
}

/* ---- probe black box ---------------------------------------------------------------- */

int gpu_probe_blackbox(void *user, const uint64_t *a, const uint64_t *b, int k, uint64_t c, uint64_t *d) {
    gpu_probe_box *box = user;
    const gpu_kind *kd = box->kind;
    int K = kd->k, M = kd->m, N = kd->n;
    int steps = k <= 0 ? 1 : (k + K - 1) / K;
    int rc = -1;
    if (k < 0 || steps > box->max_steps || steps > GPU_MAX_STEPS) return 1;
    size_t kk = (size_t)K * steps;
    uint64_t *A = calloc((size_t)M * kk, sizeof *A), *B = calloc(kk * N, sizeof *B);
    uint64_t *C = calloc((size_t)M * N, sizeof *C), *D = calloc((size_t)M * N, sizeof *D);
    uint32_t *ia = calloc(gpu_a_words(kd) * steps, 4), *ib = calloc(gpu_b_words(kd) * steps, 4);
    uint32_t *ic = calloc(gpu_cd_words(kd), 4), *id = calloc(gpu_cd_words(kd), 4);
    if (A && B && C && D && ia && ib && ic && id) {
        for (int i = 0; i < k; i++) A[i] = a[i], B[(size_t)i * N] = b[i];
        C[0] = c;
        gpu_pack_a(kd, steps, A, ia);
        gpu_pack_b(kd, steps, B, ib);
        gpu_pack_cd(kd, C, ic);
        box->calls++;
        if (!box->be->run_mma(box->be->user, kd, 1, steps, ia, ib, ic, id, box->err, sizeof box->err)) {
            gpu_unpack_cd(kd, id, D);
            *d = D[0];
            rc = 0;
        }
    } else {
        snprintf(box->err, sizeof box->err, "out of memory");
    }
    free(A), free(B), free(C), free(D), free(ia), free(ib), free(ic), free(id);
    return rc;
}

/* ---- files -------------------------------------------------------------------------- */

int gpu_write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen) {
    /* outfile.h: the rule bin/fpemu's writer follows too (a link is
     * followed, a device or FIFO written in place, never replaced) */
    if (fpemu_out_write_file(path, data, len)) {
        errf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
