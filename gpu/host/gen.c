/* SPDX-License-Identifier: MIT */
/* gen.c: inputs for the validation harness (see gen.h). Everything is a
 * pure function of (seed, kind, distribution, tile), using only exact
 * double arithmetic (no libm), so a run replays bit for bit. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "gen.h"

/* ---- generator ---------------------------------------------------------- */

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void gpu_rng_init(gpu_rng *r, uint64_t seed, uint64_t stream) {
    r->seed = seed;
    r->stream = mix64(stream + UINT64_C(0x9E3779B97F4A7C15));
    r->ctr = 0;
}

uint64_t gpu_rng_next(gpu_rng *r) {
    return mix64(r->seed ^ mix64(r->stream + UINT64_C(0x9E3779B97F4A7C15) * ++r->ctr));
}

uint64_t gpu_rng_below(gpu_rng *r, uint64_t n) {
    if (n <= 1) return 0;
    uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;
    do x = gpu_rng_next(r); while (x >= lim);
    return x % n;
}

static double rng_unit(gpu_rng *r) { return (double)(gpu_rng_next(r) >> 11) * 0x1p-53; }
static int rng_range(gpu_rng *r, int lo, int hi) { return lo + (int)gpu_rng_below(r, (uint64_t)(hi - lo + 1)); }
/* Irwin-Hall approximation of N(0,1): exact IEEE operations only. */
static double rng_normal(gpu_rng *r) {
    double s = 0;
    for (int i = 0; i < 12; i++) s += rng_unit(r);
    return s - 6.0;
}

/* Streams: one per (kind, distribution, tile) so tiles are independent of
 * how many are drawn. */
static uint64_t stream_of(const gpu_kind *k, int dist, uint64_t tile, int tag) {
    return ((uint64_t)k->id << 56) ^ ((uint64_t)dist << 48) ^ ((uint64_t)tag << 40) ^ tile;
}

const char *gpu_dist_name(const gpu_kind *k, int dist) {
    static const char *const mma[] = {"uniform-bits", "normal", "wide-exponent", "cancellation"};
    static const char *const cvt[] = {"uniform-bits", "normal", "wide-exponent", "ties"};
    if (dist < 0 || dist >= GPU_DIST_COUNT) return "?";
    return (k && k->op == GPU_OP_CVT ? cvt : mma)[dist];
}

int gpu_kind_formats(const gpu_kind *k, gpu_fmts *f, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    if (gpu_kind_is_int(k)) {
        f->is_int = 1;
        f->a_signed = !strcmp(k->a, "s8");
        f->b_signed = !strcmp(k->b, "s8");
        return 0;
    }
    const char *names[4] = {k->a, k->op == GPU_OP_CVT ? k->a : k->b, k->op == GPU_OP_CVT ? k->a : k->c, k->d};
    const fpemu_format **dst[4] = {&f->a, &f->b, &f->c, &f->d};
    for (int i = 0; i < 4; i++) {
        *dst[i] = fpemu_format_get(names[i], err, errlen);
        if (!*dst[i]) return -1;
    }
    return 0;
}

/* ---- codes and values ----------------------------------------------------- */

static uint64_t bits_mask(int bits) { return bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1; }

/* Round x to nearest even into F; *exact (if given) says whether the code
 * holds x exactly (sign of zero included). */
static uint64_t enc(const fpemu_format *F, double x, int *exact) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    uint64_t c = fpemu_from_double(F, x, &ctx);
    if (exact) {
        double back = fpemu_to_double(F, c);
        *exact = !isnan(x) && back == x && signbit(back) == signbit(x);
    }
    return c;
}
static double dec(const fpemu_format *F, uint64_t c) { return fpemu_to_double(F, c); }
static int is_finite_code(const fpemu_format *F, uint64_t c) { return fpemu_classify(F, c) <= FPEMU_CLASS_NORMAL; }

/* Uniform finite bit pattern; a special value (inf/NaN) once in 256. */
static uint64_t rand_code(gpu_rng *r, const fpemu_format *F) {
    for (;;) {
        uint64_t c = (gpu_rng_next(r) & bits_mask(F->bits)) << F->pad;
        if (is_finite_code(F, c) || gpu_rng_below(r, 256) == 0) return c;
    }
}

/* A value with its exponent uniform over [lo, hi] and a random mantissa of
 * the format's width, random sign, rounded into F. */
static uint64_t rand_wide(gpu_rng *r, const fpemu_format *F, int lo, int hi) {
    int e = rng_range(r, lo, hi);
    double m = 1.0 + (double)(gpu_rng_next(r) & bits_mask(F->mbits)) * ldexp(1.0, -F->mbits);
    double x = ldexp(m, e);
    return enc(F, (gpu_rng_next(r) & 1) ? -x : x, NULL);
}

/* The code next to c in magnitude (+1 or -1 ulp), staying finite. */
static uint64_t neighbour(const fpemu_format *F, uint64_t c, int up) {
    uint64_t mag = (c >> F->pad) & ~(F->sign_bit >> F->pad), s = (c >> F->pad) & (F->sign_bit >> F->pad);
    uint64_t n = up ? mag + 1 : (mag ? mag - 1 : mag + 1);
    uint64_t out = (s | n) << F->pad;
    return is_finite_code(F, out) ? out : c;
}
static uint64_t negate(const fpemu_format *F, uint64_t c) {
    if (!F->has_negzero && (c >> F->pad) == 0) return c;
    return c ^ F->sign_bit;
}

/* ---- random tiles ---------------------------------------------------------- */

static int32_t clamp_i(int64_t v, int64_t lo, int64_t hi) { return (int32_t)(v < lo ? lo : v > hi ? hi : v); }

static uint64_t int_code(int32_t v, int is_signed) { return is_signed ? (uint8_t)(int8_t)v : (uint8_t)v; }
static int32_t int_val(uint64_t code, int is_signed) { return is_signed ? (int8_t)(uint8_t)code : (uint8_t)code; }

static uint64_t rand_int_elem(gpu_rng *r, int is_signed, int dist) {
    int lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    switch (dist) {
    case GPU_DIST_NORMAL: {
        double x = rng_normal(r) * (is_signed ? 32.0 : 64.0);
        if (!is_signed) x = fabs(x);
        return int_code(clamp_i((int64_t)llround(x), lo, hi), is_signed);
    }
    case GPU_DIST_WIDE: {
        static const int picks_s[] = {-128, 127, -127, 0, 1, -1};
        static const int picks_u[] = {255, 254, 0, 1, 128, 127};
        int w = (int)gpu_rng_below(r, 8);
        if (w < 6) return int_code(is_signed ? picks_s[w] : picks_u[w], is_signed);
        return gpu_rng_next(r) & 0xFF;
    }
    default: return gpu_rng_next(r) & 0xFF;
    }
}

static void gen_tile_int(const gpu_kind *k, const gpu_fmts *f, int dist, gpu_rng *r, int steps,
                         uint64_t *A, uint64_t *B, uint64_t *C) {
    int M = k->m, N = k->n, KK = k->k * steps;
    for (int i = 0; i < M * KK; i++) A[i] = rand_int_elem(r, f->a_signed, dist);
    for (int i = 0; i < KK * N; i++) B[i] = rand_int_elem(r, f->b_signed, dist);
    if (dist == GPU_DIST_CANCEL) {
        /* products cancel in pairs: a equal, b negated (signed b), or c
         * cancels the whole sum (unsigned b). */
        int half = KK / 2;
        for (int i = 0; i < M; i++)
            for (int t = 0; t < half; t++) A[i * KK + half + t] = A[i * KK + t];
        for (int j = 0; j < N; j++)
            for (int t = 0; t < half; t++) {
                int32_t v = int_val(B[t * N + j], f->b_signed);
                B[(half + t) * N + j] = f->b_signed ? int_code(clamp_i(-(int64_t)v, -128, 127), 1) : B[t * N + j];
            }
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int64_t c;
            switch (dist) {
            case GPU_DIST_NORMAL: c = llround(rng_normal(r) * 4096.0); break;
            case GPU_DIST_WIDE: {
                int64_t off = (int64_t)gpu_rng_below(r, 1 << 20);
                int w = (int)gpu_rng_below(r, 3);
                c = w == 0 ? INT32_MAX - off : w == 1 ? INT32_MIN + off : (int32_t)(uint32_t)gpu_rng_next(r);
                break;
            }
            case GPU_DIST_CANCEL: {
                int64_t s = 0;
                for (int t = 0; t < KK; t++)
                    s += (int64_t)int_val(A[i * KK + t], f->a_signed) * int_val(B[t * N + j], f->b_signed);
                c = f->b_signed ? rng_range(r, -16, 16) : -s + rng_range(r, -16, 16);
                break;
            }
            default: c = (int32_t)(uint32_t)gpu_rng_next(r); break;
            }
            C[i * N + j] = (uint32_t)clamp_i(c, INT32_MIN, INT32_MAX);
        }
}

static uint64_t rand_elem(gpu_rng *r, const fpemu_format *F, int dist) {
    switch (dist) {
    case GPU_DIST_NORMAL: return enc(F, rng_normal(r), NULL);
    case GPU_DIST_WIDE: return rand_wide(r, F, F->emin - F->mbits, F->emax);
    default: return rand_code(r, F);
    }
}

/* Exponent of |x| (x finite nonzero), as frexp's minus one. */
static int expo(double x) { int e; frexp(x, &e); return e - 1; }

static void gen_tile_float(const gpu_kind *k, const gpu_fmts *f, int dist, gpu_rng *r, int steps,
                           uint64_t *A, uint64_t *B, uint64_t *C) {
    int M = k->m, N = k->n, KK = k->k * steps;
    const fpemu_format *FA = f->a, *FB = f->b, *FC = f->c;
    if (dist == GPU_DIST_CANCEL) {
        /* One pairing of the K positions per tile, shared by every row of A
         * and column of B, so every output sums pairs x*y + x'*(-y) with x'
         * equal to x or one ulp off: massive cancellation. */
        int perm[GPU_MAX_STEPS * 32];
        for (int t = 0; t < KK; t++) perm[t] = t;
        for (int t = KK - 1; t > 0; t--) {
            int u = (int)gpu_rng_below(r, (uint64_t)t + 1), tmp = perm[t];
            perm[t] = perm[u], perm[u] = tmp;
        }
        for (int i = 0; i < M; i++)
            for (int t = 0; t + 1 < KK; t += 2) {
                uint64_t x = enc(FA, ldexp(rng_normal(r), rng_range(r, -6, 6)), NULL);
                if (!is_finite_code(FA, x)) x = 0;
                A[i * KK + perm[t]] = x;
                A[i * KK + perm[t + 1]] = (gpu_rng_next(r) & 1) ? neighbour(FA, x, (int)(gpu_rng_next(r) & 1)) : x;
            }
        for (int j = 0; j < N; j++)
            for (int t = 0; t + 1 < KK; t += 2) {
                uint64_t y = enc(FB, ldexp(rng_normal(r), rng_range(r, -6, 6)), NULL);
                if (!is_finite_code(FB, y)) y = 0;
                uint64_t ny = negate(FB, y);
                B[perm[t] * N + j] = y;
                B[perm[t + 1] * N + j] = gpu_rng_below(r, 4) == 0 ? neighbour(FB, ny, (int)(gpu_rng_next(r) & 1)) : ny;
            }
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double p = dec(FA, A[i * KK]) * dec(FB, B[j]);
                int w = (int)gpu_rng_below(r, 3);
                double c = w == 0 ? 0.0 : w == 1 ? ldexp(rng_normal(r), p != 0 ? expo(p) - 20 : -20) : -p;
                C[i * N + j] = enc(FC, c, NULL);
            }
        return;
    }
    for (int i = 0; i < M * KK; i++) A[i] = rand_elem(r, FA, dist);
    for (int i = 0; i < KK * N; i++) B[i] = rand_elem(r, FB, dist);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            uint64_t c;
            if (dist == GPU_DIST_NORMAL) {
                c = enc(FC, rng_normal(r) * 4.0, NULL);
            } else if (dist == GPU_DIST_WIDE) {
                /* c within reach of one of this output's products */
                int t = (int)gpu_rng_below(r, (uint64_t)KK);
                double p = dec(FA, A[i * KK + t]) * dec(FB, B[t * N + j]);
                int e = (p != 0 && isfinite(p)) ? expo(p) : 0;
                e += rng_range(r, -30, 10);
                if (e > FC->emax) e = FC->emax;
                if (e < FC->emin - FC->mbits) e = FC->emin - FC->mbits;
                c = rand_wide(r, FC, e, e);
            } else {
                /* uniform bits over the exponents products can reach */
                int lo = 2 * (FA->emin - FA->mbits) - 2, hi = 2 * FA->emax + 2;
                if (lo < FC->emin - FC->mbits) lo = FC->emin - FC->mbits;
                if (hi > FC->emax) hi = FC->emax;
                c = rand_wide(r, FC, lo, hi);
                if (gpu_rng_below(r, 16) == 0) c = rand_code(r, FC);
            }
            C[i * N + j] = c;
        }
}

void gpu_gen_tile(const gpu_kind *k, const gpu_fmts *f, int dist, uint64_t seed, uint64_t tile,
                  int steps, uint64_t *A, uint64_t *B, uint64_t *C) {
    gpu_rng r;
    gpu_rng_init(&r, seed, stream_of(k, dist, tile, 1));
    if (f->is_int) gen_tile_int(k, f, dist, &r, steps, A, B, C);
    else gen_tile_float(k, f, dist, &r, steps, A, B, C);
}

/* ---- designed cases -------------------------------------------------------- */

/* a*b == p exactly, with b a power of two near sqrt|p|. */
static int make_prod(const gpu_fmts *f, double p, uint64_t *a, uint64_t *b) {
    int ea, eb;
    if (p == 0 || !isfinite(p)) {
        if (p == 0) {
            *a = enc(f->a, signbit(p) ? -0.0 : 0.0, NULL), *b = enc(f->b, 0.0, NULL);
            return 1;
        }
        return 0;
    }
    int e = expo(p);
    for (int d = 0; d <= 80; d++) {
        int cand = e / 2 + ((d & 1) ? (d + 1) / 2 : -(d / 2));
        *b = enc(f->b, ldexp(1.0, cand), &eb);
        *a = enc(f->a, ldexp(p, -cand), &ea);
        if (ea && eb) return 1;
    }
    return 0;
}

typedef struct builder { const gpu_kind *k; const gpu_fmts *f; gpu_case *out; int n, max; } builder;

/* c + sum p[i] (as products a*b found by make_prod), tried unscaled then
 * scaled by 2^8, 2^16, 2^-8 (all terms alike) until the formats hold every
 * value exactly. */
static void add_prod_case(builder *bd, const char *what, double c, const double *p, int np) {
    static const int scales[] = {0, 8, 16, -8};
    if (bd->n >= bd->max || np > bd->k->k || np > GPU_CASE_KMAX) return;
    for (int s = 0; s < 4; s++) {
        gpu_case *cs = &bd->out[bd->n];
        int ok = 1, ex;
        memset(cs, 0, sizeof *cs);
        cs->k = np;
        for (int i = 0; i < np && ok; i++) ok = make_prod(bd->f, ldexp(p[i], scales[s]), &cs->a[i], &cs->b[i]);
        cs->c = enc(bd->f->c, ldexp(c, scales[s]), &ex);
        if (ok && ex) {
            snprintf(cs->what, sizeof cs->what, "%s%s", what, scales[s] ? (scales[s] == 8 ? " x2^8" : scales[s] == 16 ? " x2^16" : " x2^-8") : "");
            bd->n++;
            return;
        }
    }
}

/* A case given as codes directly. */
static void add_code_case(builder *bd, const char *what, uint64_t c, const uint64_t *a, const uint64_t *b, int k) {
    if (bd->n >= bd->max || k > bd->k->k || k > GPU_CASE_KMAX) return;
    gpu_case *cs = &bd->out[bd->n++];
    memset(cs, 0, sizeof *cs);
    cs->k = k;
    memcpy(cs->a, a, sizeof *a * (size_t)k);
    memcpy(cs->b, b, sizeof *b * (size_t)k);
    cs->c = c;
    snprintf(cs->what, sizeof cs->what, "%s", what);
}

static void probe_cases(builder *bd) {
    int K = bd->k->k;
    double p[GPU_CASE_KMAX];
    const double u23 = 0x1p-23, u24 = 0x1p-24;
    char what[48];
    /* extra alignment bits */
    p[0] = u24, p[1] = u24;
    add_prod_case(bd, "probe extra bits 1", 1.0, p, 2);
    p[0] = u24, p[1] = 0x1p-25, p[2] = 0x1p-25;
    add_prod_case(bd, "probe extra bits 2", 1.0, p, 3);
    /* block size: p[0] = 1, p[j] = 2^-23, both signs */
    for (int j = 1; j < K; j++)
        for (int sg = 0; sg < 2; sg++) {
            double s = sg ? -1.0 : 1.0;
            memset(p, 0, sizeof p);
            p[0] = s, p[j] = s * u23;
            snprintf(what, sizeof what, "probe block j=%d%s", j, sg ? " neg" : "");
            add_prod_case(bd, what, s * (1 + u23), p, j + 1);
        }
    /* normalisation placement */
    p[0] = p[1] = 0x1p-21 + u24;
    add_prod_case(bd, "probe normalisation", 1 - 0x1p-21, p, 2);
    /* output rounding, both signs */
    p[0] = p[1] = p[2] = 1;
    add_prod_case(bd, "probe output rounding", 1 + u23 + 0x1p-22, p, 3);
    p[0] = p[1] = p[2] = -1;
    add_prod_case(bd, "probe output rounding neg", -(1 + u23 + 0x1p-22), p, 3);
    /* rounding at alignment */
    for (int n = 0; n < 4; n++) {
        p[0] = p[1] = u24 * (ldexp(1.0, -n) + ldexp(1.0, -n - 1));
        snprintf(what, sizeof what, "probe align rounding n=%d", n);
        add_prod_case(bd, what, 1.0, p, 2);
    }
    /* rounding between blocks: one product 1.5*2^-24 at index j */
    for (int j = 0; j < K; j++) {
        memset(p, 0, sizeof p);
        p[j] = 1.5 * u24;
        snprintf(what, sizeof what, "probe block rounding j=%d", j);
        add_prod_case(bd, what, 1 + u23, p, j + 1);
    }
    /* guard bits, carry bits, monotonicity */
    p[0] = 1;
    add_prod_case(bd, "probe guard bits", -(1 - u24), p, 1);
    p[0] = 1, p[1] = 1.5, p[2] = 1.75, p[3] = 1.875;
    add_prod_case(bd, "probe carry bits", 1.875, p, 4);
    p[0] = p[1] = p[2] = p[3] = u24;
    add_prod_case(bd, "probe monotonic c=1-2^-24", 1 - u24, p, 4);
    add_prod_case(bd, "probe monotonic c=1", 1.0, p, 4);
    /* boundary: all ones, c = 2^s */
    for (int s = 8; s <= 30; s += 2) {
        for (int i = 0; i < K; i++) p[i] = 1;
        snprintf(what, sizeof what, "probe boundary c=2^%d", s);
        add_prod_case(bd, what, ldexp(1.0, s), p, K);
    }
}

/* A case given as exact values; dropped unless every one is a value of
 * its format (so only the kinds whose formats reach it get it). */
static void add_value_case(builder *bd, const char *what, double c, const double *a, const double *b, int k) {
    uint64_t ca[GPU_CASE_KMAX], cb[GPU_CASE_KMAX], cc;
    int ex;
    if (k > GPU_CASE_KMAX) return;
    for (int i = 0; i < k; i++) {
        ca[i] = enc(bd->f->a, a[i], &ex);
        if (!ex) return;
        cb[i] = enc(bd->f->b, b[i], &ex);
        if (!ex) return;
    }
    cc = enc(bd->f->c, c, &ex);
    if (ex) add_code_case(bd, what, cc, ca, cb, k);
}

/* The open points of the tensor-core model (docs/tensor-cores.md) that
 * random inputs rarely settle, each case with both signs. Only bf16 and
 * tf32 inputs reach them (their products span the f32 range and beyond).
 * - the emax floor: c = 0 and two positive products, (1 + 2^-7)^2 *
 *   2^(j+14) and n1 * n2 * 2^j (odd, 8-bit factors), whose exact sum is a
 *   multiple of f32's quantum 2^-149 and whose lowest bits are 2^j. With emax clamped
 *   at F (nfrac 25: terms truncated to multiples of 2^(F-25)), the RZ
 *   output is exact iff F - 25 <= j, and one quantum lower otherwise; a
 *   zero c counted at f32's emin (-126) clamps like F = -126. So j = -159
 *   .. -153 place F (or its absence: all exact);
 * - f32 overflow under RZ: exact sums 2^128 (FLT_MAX + 2^104; 2^127 * 2,
 *   c = 0) give FLT_MAX or inf; FLT_MAX + 2^103 stays below 2^128;
 * - the sign of zero: -0 + (-2^-75 * 2^-75) and +0 + that (a negative
 *   sum below f32's range: IEEE RZ gives -0), and -0 + K products -0 * 1. */
static void open_point_cases(builder *bd) {
    static const struct { int j, n1, n2; } fl[] = {{-159, 13, 59}, {-158, 1, 255}, {-157, 1, 255}, {-156, 1, 127},
                                                    {-155, 1, 63}, {-154, 1, 31}, {-153, 1, 15}};
    const double h = 1 + 0x1p-7;
    const double ov_a[3] = {0x1p104, 0x1p103, 0x1p127}, one[1] = {1}, two[1] = {2};
    for (int sg = 0; sg < 2; sg++) {
        double s = sg ? -1 : 1, na[2], nb[2];
        const char *neg = sg ? ", negated" : "";
        char what[64];
        for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
            int e0 = fl[i].j + 14, lo = fl[i].j;
            na[0] = s * h * ldexp(1.0, e0 / 2), nb[0] = h * ldexp(1.0, e0 - e0 / 2);
            na[1] = s * ldexp(fl[i].n1, lo / 2), nb[1] = ldexp(fl[i].n2, lo - lo / 2); /* n1 n2 2^j */
            snprintf(what, sizeof what, "open point emax floor j=%d%s", lo, neg);
            add_value_case(bd, what, s * 0.0, na, nb, 2);
        }
        na[0] = s * ov_a[0];
        snprintf(what, sizeof what, "open point RZ overflow FLT_MAX+2^104%s", neg);
        add_value_case(bd, what, s * 0x1.fffffep127, na, one, 1);
        na[0] = s * ov_a[1];
        snprintf(what, sizeof what, "open point RZ FLT_MAX+2^103%s", neg);
        add_value_case(bd, what, s * 0x1.fffffep127, na, one, 1);
        na[0] = s * ov_a[2];
        snprintf(what, sizeof what, "open point RZ overflow 2^127*2%s", neg);
        add_value_case(bd, what, s * 0.0, na, two, 1);
        na[0] = -0x1p-75, nb[0] = 0x1p-75;
        snprintf(what, sizeof what, "open point zero sign: %s0 - 2^-150", sg ? "-" : "+");
        add_value_case(bd, what, s * 0.0, na, nb, 1);
    }
    double za[GPU_CASE_KMAX], ones[GPU_CASE_KMAX]; /* every product -0 (zero operands pad the others with +0) */
    for (int i = 0; i < GPU_CASE_KMAX; i++) za[i] = -0.0, ones[i] = 1;
    add_value_case(bd, "open point zero sign: -0 + K x (-0)*1", -0.0, za, ones, bd->k->k);
    if (strcmp(bd->f->d->name, "f16")) return;
    /* f16 accumulators only (the other kinds' case sets, which recordings
     * hold, stay as they were): the emax-floor vector of docs/tensor-cores.md,
     * a = [2^-14, 2^-24], b = [2^-11, 2^-24], c = 0: products 2^-25 (half
     * f16's least subnormal) and 2^-48; RNE gives 2^-24 if the 2^-48 term
     * survives alignment, 0 (the tie to even) if it is cut; and overflow
     * under RNE: 65504 + 16 is the midpoint to 2^16 (inf), 65504 + 15
     * rounds down to 65504 */
    double fa[2] = {0x1p-14, 0x1p-24}, fb[2] = {0x1p-11, 0x1p-24}, sixteen[1] = {16}, fifteen[1] = {15};
    add_value_case(bd, "open point f16 output: 2^-25 + 2^-48", 0.0, fa, fb, 2);
    fa[0] = -fa[0], fa[1] = -fa[1];
    add_value_case(bd, "open point f16 output: 2^-25 + 2^-48, negated", -0.0, fa, fb, 2);
    /* the same tie with the small product at 2^j, j = -47 .. -36: kept
     * (2^-24) iff j >= F - nfrac, F the clamp on emax (the product 2^-25
     * alone gives emax -25) */
    fa[0] = 0x1p-14, fa[1] = 0x1p-24;
    for (int j = -47; j <= -36; j++) {
        char what[64];
        fb[1] = ldexp(1.0, j + 24);
        snprintf(what, sizeof what, "open point f16 floor j=%d", j);
        add_value_case(bd, what, 0.0, fa, fb, 2);
    }
    add_value_case(bd, "open point f16 output overflow: 65504 + 16", 65504, sixteen, ones, 1);
    add_value_case(bd, "open point f16 output: 65504 + 15", 65504, fifteen, ones, 1);
    if (bd->f->a->bits != 8) return;
    /* fp8 inputs with f16 accumulators only (the f16 kinds' case sets stay
     * as they were): the same tie, 2^-25 + 2^j, from factors an 8-bit
     * format holds (2^-13 x 2^-12, and 2^j as two powers of two no smaller
     * than 2^-16: e5m2 only; e4m3's least product, 2^-18, is too big for
     * the tie). With a zero c ignored, emax is -25 and every 2^j with
     * j >= -25 - nfrac (-38 for nfrac 13) is kept, whatever a floor up to
     * -19 does; a zero c counted at f16's emin (-14) cuts j <= -28. */
    for (int j = -32; j <= -26; j++) {
        char what[64];
        double pa[2] = {0x1p-13, ldexp(1.0, j - j / 2)}, pb[2] = {0x1p-12, ldexp(1.0, j / 2)};
        snprintf(what, sizeof what, "open point f16 floor j=%d", j);
        add_value_case(bd, what, 0.0, pa, pb, 2);
    }
}

static void adversarial_float(builder *bd) {
    const gpu_fmts *f = bd->f;
    const fpemu_format *FA = f->a, *FB = f->b, *FC = f->c;
    int K = bd->k->k;
    uint64_t a[GPU_CASE_KMAX] = {0}, b[GPU_CASE_KMAX] = {0};
    uint64_t one_a = enc(FA, 1, NULL), one_b = enc(FB, 1, NULL), mone_b = enc(FB, -1, NULL);
    uint64_t zero_a = enc(FA, 0, NULL), zero_b = enc(FB, 0, NULL);
    uint64_t nan_a = enc(FA, NAN, NULL), inf_a = enc(FA, INFINITY, NULL);
    uint64_t maxa = FA->max_code << FA->pad, maxb = FB->max_code << FB->pad;
    uint64_t suba = UINT64_C(1) << FA->pad, subb = UINT64_C(1) << FB->pad;
    uint64_t c_one = enc(FC, 1, NULL), c_zero = enc(FC, 0, NULL), c_mzero = enc(FC, -0.0, NULL);
    uint64_t c_inf = enc(FC, INFINITY, NULL), c_max = FC->max_code << FC->pad;
    uint64_t c_qnan = enc(FC, NAN, NULL), c_snan = (FC->nan == FPEMU_NANS_IEEE) ? ((c_inf | 1)) : c_qnan;
    int has_inf = FA->inf != FPEMU_INF_NONE;
    double p[3];

    a[0] = nan_a, b[0] = one_b;
    if (fpemu_is_nan(FA, nan_a)) add_code_case(bd, "adv NaN in a", c_one, a, b, 1);
    a[0] = one_a, b[0] = one_b;
    add_code_case(bd, "adv quiet NaN c", c_qnan, a, b, 1);
    if (c_snan != c_qnan) add_code_case(bd, "adv signalling NaN c", c_snan, a, b, 1);
    add_code_case(bd, "adv +inf c", c_inf, a, b, 1);
    if (has_inf) {
        a[0] = inf_a, b[0] = zero_b;
        add_code_case(bd, "adv inf*0", c_zero, a, b, 1);
        a[0] = inf_a, b[0] = one_b, a[1] = inf_a, b[1] = mone_b;
        add_code_case(bd, "adv inf-inf", c_zero, a, b, 2);
        a[0] = inf_a, b[0] = mone_b;
        add_code_case(bd, "adv +inf c, -inf product", c_inf, a, b, 1);
    }
    for (int i = 0; i < K; i++) a[i] = maxa, b[i] = maxb;
    add_code_case(bd, "adv max products", c_zero, a, b, K);
    add_code_case(bd, "adv max products, c=FLT_MAX", c_max, a, b, K);
    for (int i = 0; i < K; i++) b[i] = negate(FB, maxb);
    add_code_case(bd, "adv -max products, c=-FLT_MAX", negate(FC, c_max), a, b, K);
    for (int i = 0; i < K; i++) a[i] = (i & 1) ? maxa : negate(FA, maxa), b[i] = maxb;
    add_code_case(bd, "adv alternating max products", c_one, a, b, K);
    for (int i = 0; i < K; i++) a[i] = suba, b[i] = subb;
    add_code_case(bd, "adv subnormal*subnormal", c_zero, a, b, K);
    for (int i = 0; i < K; i++) a[i] = suba, b[i] = one_b;
    add_code_case(bd, "adv subnormal*1", c_zero, a, b, K);
    add_code_case(bd, "adv subnormal*1, c=-0", c_mzero, a, b, K);
    a[0] = zero_a, b[0] = zero_b;
    add_code_case(bd, "adv c=f32 min subnormal", (uint64_t)1 << FC->pad, a, b, 1);
    a[0] = suba, b[0] = one_b;
    add_code_case(bd, "adv c=f32 min subnormal + subnormal", (uint64_t)1 << FC->pad, a, b, 1);
    for (int i = 0; i < K; i++) a[i] = negate(FA, zero_a), b[i] = zero_b;
    add_code_case(bd, "adv (-0)*(+0) products, c=-0", c_mzero, a, b, K);
    for (int i = 0; i < K; i++) a[i] = zero_a, b[i] = zero_b;
    add_code_case(bd, "adv +0 products, c=-0", c_mzero, a, b, K);
    a[0] = one_a, b[0] = one_b, a[1] = one_a, b[1] = mone_b;
    add_code_case(bd, "adv exact cancel, c=-0", c_mzero, a, b, 2);
    a[0] = one_a, b[0] = one_b;
    add_code_case(bd, "adv product cancels c", enc(FC, -1, NULL), a, b, 1);
    p[0] = 0x1p10, p[1] = -0x1p10, p[2] = 0x1p-10;
    add_prod_case(bd, "adv big cancel, small survivor", 0, p, 3);
    a[0] = zero_a, b[0] = zero_b;
    add_code_case(bd, "adv c only (23-bit mantissa)", enc(FC, 1.2345678806304932, NULL), a, b, 1);
    p[0] = 1;
    add_prod_case(bd, "adv c=2^20, product 1", 0x1p20, p, 1);
    p[0] = 0x1p-30;
    add_prod_case(bd, "adv c=1, product 2^-30", 1, p, 1);
    open_point_cases(bd);
}

static void adversarial_int(builder *bd) {
    const gpu_fmts *f = bd->f;
    int K = bd->k->k;
    uint64_t a[GPU_CASE_KMAX] = {0}, b[GPU_CASE_KMAX] = {0};
    int32_t amax = f->a_signed ? -128 : 255, bmax = f->b_signed ? -128 : 255;
    for (int i = 0; i < K; i++) a[i] = int_code(amax, f->a_signed), b[i] = int_code(bmax, f->b_signed);
    add_code_case(bd, "adv largest products, c=INT32_MAX-1000", (uint32_t)(INT32_MAX - 1000), a, b, K);
    add_code_case(bd, "adv largest products, c=INT32_MIN", (uint32_t)INT32_MIN, a, b, K);
    if (f->a_signed || f->b_signed) {
        for (int i = 0; i < K; i++) {
            a[i] = int_code(f->a_signed ? -128 : 255, f->a_signed);
            b[i] = int_code(f->b_signed ? 127 : 255, f->b_signed);
        }
        if (!f->a_signed) for (int i = 0; i < K; i++) b[i] = int_code(-128, 1);
        add_code_case(bd, "adv most negative products, c=INT32_MIN+1000", (uint32_t)(INT32_MIN + 1000), a, b, K);
    }
    a[0] = int_code(1, f->a_signed), b[0] = int_code(1, f->b_signed);
    add_code_case(bd, "adv c=INT32_MAX, +1", (uint32_t)INT32_MAX, a, b, 1);
    if (f->b_signed) {
        b[0] = int_code(-1, 1);
        add_code_case(bd, "adv c=INT32_MIN, -1", (uint32_t)INT32_MIN, a, b, 1);
    }
    a[0] = 0, b[0] = 0;
    add_code_case(bd, "adv zero products, c=-1", 0xFFFFFFFFu, a, b, 1);
}

int gpu_designed_cases(const gpu_kind *k, const gpu_fmts *f, int set, gpu_case *out, int max) {
    builder bd = {k, f, out, 0, max};
    if (k->op == GPU_OP_CVT) return 0;
    if (set == GPU_CASES_PROBE) {
        if (!f->is_int) probe_cases(&bd);
    } else if (f->is_int) {
        adversarial_int(&bd);
    } else {
        adversarial_float(&bd);
    }
    return bd.n;
}

void gpu_place_cases(const gpu_kind *k, const gpu_case *cases, int n, uint64_t *A, uint64_t *B, uint64_t *C) {
    int M = k->m, N = k->n, K = k->k;
    memset(A, 0, sizeof *A * (size_t)M * K);
    memset(B, 0, sizeof *B * (size_t)K * N);
    memset(C, 0, sizeof *C * (size_t)M * N);
    for (int r = 0; r < n && r < N && r < M; r++) {
        for (int i = 0; i < cases[r].k; i++) {
            A[r * K + i] = cases[r].a[i];
            B[i * N + r] = cases[r].b[i];
        }
        C[r * N + r] = cases[r].c;
    }
}

/* ---- conversions ------------------------------------------------------------ */

static uint32_t f32_bits(double x) {
    float v = (float)x; /* callers pass values exact in f32 */
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

void gpu_gen_cvt(const gpu_kind *k, const gpu_fmts *f, int dist, uint64_t seed, size_t n, uint32_t *x) {
    gpu_rng r;
    const fpemu_format *D = f->d, *S = f->a;
    gpu_rng_init(&r, seed, stream_of(k, dist, 0, 2));
    for (size_t i = 0; i < n; i++) {
        switch (dist) {
        case GPU_DIST_NORMAL: x[i] = (uint32_t)enc(S, rng_normal(&r) * 8.0, NULL); break;
        case GPU_DIST_WIDE: x[i] = (uint32_t)rand_wide(&r, S, D->emin - D->mbits - 4, D->emax + 3); break;
        case GPU_DIST_CANCEL: {
            /* midpoints between neighbouring finite codes of the destination
             * (the overflow threshold included), and one f32 ulp either side */
            uint64_t v = gpu_rng_next(&r) & bits_mask(D->bits) & ~D->sign_bit;
            if (v >= D->max_code) v = D->max_code;
            double lo = dec(D, v << D->pad), hi;
            if (v == D->max_code) hi = D->max_finite + (D->max_finite - dec(D, (v - 1) << D->pad));
            else hi = dec(D, (v + 1) << D->pad);
            uint32_t m = f32_bits((lo + hi) / 2);
            int w = (int)gpu_rng_below(&r, 3);
            if (w == 1 && (m & 0x7FFFFFFF) != 0) m -= 1;
            if (w == 2) m += 1;
            if (gpu_rng_next(&r) & 1) m ^= 0x80000000u;
            x[i] = m;
            break;
        }
        default: x[i] = (uint32_t)gpu_rng_next(&r); break;
        }
    }
}

int gpu_cvt_adversarial(const gpu_kind *k, const gpu_fmts *f, uint32_t *x, int max) {
    const fpemu_format *D = f->d;
    uint32_t v[64];
    int n = 0;
    double mx = D->max_finite, ms = D->min_subnormal, mn = D->min_normal;
    double ulp_max = mx - dec(D, (D->max_code - 1) << D->pad);
    (void)k;
    v[n++] = 0x00000000, v[n++] = 0x80000000, v[n++] = 0x7F800000, v[n++] = 0xFF800000;
    v[n++] = 0x7FC00000, v[n++] = 0xFFC00000, v[n++] = 0x7F800001, v[n++] = 0x7FBFFFFF;
    v[n++] = 0x7F7FFFFF, v[n++] = 0xFF7FFFFF, v[n++] = 0x00000001, v[n++] = 0x80000001;
    v[n++] = 0x00800000, v[n++] = 0x3F800000;
    v[n++] = f32_bits(mx), v[n++] = f32_bits(-mx);
    uint32_t thr = f32_bits(mx + ulp_max / 2); /* overflow threshold (rne) */
    v[n++] = thr, v[n++] = thr - 1, v[n++] = thr + 1, v[n++] = thr ^ 0x80000000u;
    v[n++] = f32_bits(mx) + 1, v[n++] = f32_bits(mx + ulp_max);
    v[n++] = f32_bits(ms), v[n++] = f32_bits(-ms);
    uint32_t half = f32_bits(ms / 2);
    v[n++] = half, v[n++] = half - 1, v[n++] = half + 1, v[n++] = half ^ 0x80000000u;
    v[n++] = f32_bits(ms * 1.5), v[n++] = f32_bits(ms * 0.75);
    v[n++] = f32_bits(mn), v[n++] = f32_bits(mn) - 1, v[n++] = f32_bits(mn) + 1;
    v[n++] = f32_bits(mn - ms / 2); /* tie between largest subnormal and min normal */
    double u1 = ldexp(1.0, -D->mbits);
    v[n++] = f32_bits(1 + u1 / 2), v[n++] = f32_bits(1 + 3 * u1 / 2), v[n++] = f32_bits(-(1 + u1 / 2));
    v[n++] = f32_bits(1 + u1 / 2) + 1, v[n++] = f32_bits(1 + u1 / 2) - 1;
    if (n > max) n = max;
    memcpy(x, v, sizeof *x * (size_t)n);
    return n;
}
