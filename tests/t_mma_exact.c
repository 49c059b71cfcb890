/* SPDX-License-Identifier: MIT */
/* t_mma_exact.c: the reference MMA presets against the MPFR reference.
 *   exact    == ref_dot (exact sum on MPFR, one MPFR rounding), random
 *               inputs of several distributions, formats, outputs and modes;
 *   fma-seq  == a chain of ref_fma in the output format;
 *   pairwise == a tree of ref_add over ref_mul products (exact here).
 * Also checks ref_dot itself on hand-computed cases. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "mma.h"
#include "ref.h"
#include "ref_dot.h"
#include "tap.h"

static uint64_t rng_state;
static uint64_t rnd64(void) { return rng_state = fpemu_random64(rng_state, 1); }

static const fpemu_format *F(const char *n) {
    const fpemu_format *f = fpemu_format_get(n, NULL, 0);
    if (!f) bail("format %s missing", n);
    return f;
}

/* A random finite code: uniform bits (specials rejected), or values near 1
 * with random signs (cancellation), or a wide exponent spread. */
static uint64_t rcode(const fpemu_format *f, int dist) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.sat = 1;
    for (;;) {
        uint64_t c;
        if (dist == 0) {
            c = (rnd64() & ((f->bits == 64 ? 0 : (UINT64_C(1) << f->bits)) - 1)) << f->pad;
        } else {
            double x = ldexp(1.0 + (double)(rnd64() >> 11) / 9007199254740992.0, dist == 1 ? (int)(rnd64() % 3) - 1 : (int)(rnd64() % 40) - 20);
            if (rnd64() & 1) x = -x;
            c = fpemu_from_double(f, x, &ctx);
        }
        fpemu_class k = fpemu_classify(f, c);
        if (k != FPEMU_CLASS_INF && k != FPEMU_CLASS_QNAN && k != FPEMU_CLASS_SNAN) return c;
    }
}

static const uint64_t *tree_p;
static ref_ctx *tree_rc;
static const fpemu_format *tree_f;
static uint64_t tree_sum(int lo, int hi) {
    if (hi - lo == 1) return tree_p[lo];
    int mid = lo + (hi - lo) / 2;
    uint64_t l = tree_sum(lo, mid), r = tree_sum(mid, hi);
    unsigned f2;
    return ref_add(tree_rc, tree_f, l, r, &f2);
}

int main(void) {
    rng_state = tap_seed(20240611);
    static const char *ins[] = {"f16", "bf16", "e4m3", "e5m2", "e2m1", "tf32", "e3m2", "e2m3", "e4m3fnuz", "e5m2fnuz", "binary8p3e"};
    static const char *outs[] = {"f32", "f16", "bf16"};
    static const fpemu_round modes[] = {FPEMU_RNE, FPEMU_RTZ, FPEMU_RUP, FPEMU_RDN};
    int printed = 0;
    for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++)
        for (size_t o = 0; o < 3; o++)
            for (size_t r = 0; r < 4; r++) {
                fpemu_mma_model m;
                char err[200];
                if (fpemu_mma_model_preset(&m, "exact", F(ins[i]), F(ins[i]), F(outs[o]), F(outs[o]), err, sizeof err)) bail("%s", err);
                m.out_round = modes[r];
                int bad = 0, n = 0;
                for (int t = 0; t < 300; t++) {
                    uint64_t a[40], b[40];
                    int k = 1 + (int)(rnd64() % 40), dist = t % 3;
                    for (int j = 0; j < k; j++) a[j] = rcode(m.fa, dist), b[j] = rcode(m.fb, dist);
                    uint64_t c = rcode(m.fc, dist), want, got = fpemu_mma_dot(&m, a, b, (size_t)k, c, NULL);
                    if (ref_dot(m.fa, m.fb, m.fc, m.fd, modes[r], a, b, (size_t)k, c, &want)) bail("ref_dot refused %s", ins[i]);
                    n++;
                    int same = got == want || (fpemu_is_nan(m.fd, got) && fpemu_is_nan(m.fd, want));
                    if (!same) {
                        bad++;
                        if (printed++ < 10) {
                            char line[4096];
                            size_t q = (size_t)snprintf(line, sizeof line, "%0*llX", fpemu_format_hex_digits(m.fc), (unsigned long long)c);
                            for (int j = 0; j < k && q < sizeof line - 40; j++)
                                q += (size_t)snprintf(line + q, sizeof line - q, " %0*llX %0*llX", fpemu_format_hex_digits(m.fa),
                                                      (unsigned long long)a[j], fpemu_format_hex_digits(m.fb), (unsigned long long)b[j]);
                            diag("exact %s->%s %s: got %llX want %llX: %s", ins[i], outs[o], fpemu_round_name(modes[r]),
                                 (unsigned long long)got, (unsigned long long)want, line);
                        }
                    }
                }
                is_int(bad, 0, "exact %s -> %s %s agrees with ref_dot (%d dots)", ins[i], outs[o], fpemu_round_name(modes[r]), n);
            }

    /* fma-seq (f16 inputs, f32 output) == chain of ref_fma in f32 */
    {
        ref_ctx rc;
        if (ref_ctx_init(&rc)) bail("ref_ctx_init");
        fpemu_mma_model m;
        fpemu_mma_model_preset(&m, "fma-seq", F("f16"), F("f16"), F("f32"), F("f32"), NULL, 0);
        const fpemu_format *f32 = F("f32");
        int bad = 0;
        unsigned fl;
        for (int t = 0; t < 500; t++) {
            uint64_t a[24], b[24];
            int k = 1 + (int)(rnd64() % 24), dist = t % 3;
            for (int j = 0; j < k; j++) a[j] = rcode(m.fa, dist), b[j] = rcode(m.fb, dist);
            uint64_t c = rcode(f32, dist), d = c;
            for (int j = 0; j < k; j++) {
                uint64_t a32 = ref_convert(&rc, f32, m.fa, a[j], &fl), b32 = ref_convert(&rc, f32, m.fb, b[j], &fl);
                d = ref_fma(&rc, f32, a32, b32, d, &fl);
            }
            uint64_t got = fpemu_mma_dot(&m, a, b, (size_t)k, c, NULL);
            if (got != d && !(fpemu_is_nan(f32, got) && fpemu_is_nan(f32, d))) {
                if (bad++ < 5) diag("fma-seq: got %llX want %llX (k=%d)", (unsigned long long)got, (unsigned long long)d, k);
            }
        }
        is_int(bad, 0, "fma-seq f16 -> f32 equals a chain of ref_fma (500 dots)");
        /* pairwise == tree of ref_add over exact ref_mul products, then + c */
        fpemu_mma_model_preset(&m, "pairwise", F("f16"), F("f16"), F("f32"), F("f32"), NULL, 0);
        bad = 0;
        for (int t = 0; t < 500; t++) {
            uint64_t a[24], b[24], p[24];
            int k = 1 + (int)(rnd64() % 24), dist = t % 3;
            for (int j = 0; j < k; j++) {
                a[j] = rcode(m.fa, dist), b[j] = rcode(m.fb, dist);
                uint64_t a32 = ref_convert(&rc, f32, m.fa, a[j], &fl), b32 = ref_convert(&rc, f32, m.fb, b[j], &fl);
                p[j] = ref_mul(&rc, f32, a32, b32, &fl); /* exact: 22-bit significands */
            }
            /* the same split as the model: [lo, mid) [mid, hi) with mid = lo + n/2 */
            tree_p = p, tree_rc = &rc, tree_f = f32;
            uint64_t tree = tree_sum(0, k);
            uint64_t c = rcode(f32, dist);
            uint64_t want = ref_add(&rc, f32, c, tree, &fl);
            uint64_t got = fpemu_mma_dot(&m, a, b, (size_t)k, c, NULL);
            if (got != want && !(fpemu_is_nan(f32, got) && fpemu_is_nan(f32, want))) {
                if (bad++ < 5) diag("pairwise: got %llX want %llX (k=%d)", (unsigned long long)got, (unsigned long long)want, k);
            }
        }
        is_int(bad, 0, "pairwise f16 -> f32 equals a tree of ref_add (500 dots)");
        ref_ctx_clear(&rc);
    }

    /* ref_dot on hand-computed cases */
    {
        const fpemu_format *h = F("f16"), *s = F("f32");
        uint64_t a[3] = {0x3C00, 0x3C00, 0x0001}, b[3] = {0x3C00, 0xBC00, 0x3C00}, d;
        ref_dot(h, h, s, s, FPEMU_RNE, a, b, 3, 0, &d);
        is_hex(d, 0x33800000, "ref_dot: 1 - 1 + 2^-24 = 2^-24 exactly");
        ref_dot(h, h, s, s, FPEMU_RDN, a, b, 2, 0, &d);
        is_hex(d, 0x80000000, "ref_dot: 1 - 1 = -0 under rdn");
        ref_dot(h, h, s, s, FPEMU_RNE, a, b, 2, 0, &d);
        is_hex(d, 0x00000000, "ref_dot: 1 - 1 = +0 under rne");
        uint64_t big[2] = {0x7BFF, 0x7BFF};
        ref_dot(h, h, h, h, FPEMU_RNE, big, big, 1, 0, &d);
        is_hex(d, 0x7C00, "ref_dot: 65504^2 overflows f16 to inf (rne)");
        ref_dot(h, h, h, h, FPEMU_RTZ, big, big, 1, 0, &d);
        is_hex(d, 0x7BFF, "ref_dot: ... to max finite (rtz)");
        uint64_t tiny[1] = {0x0001};
        ref_dot(h, h, h, h, FPEMU_RNE, tiny, tiny, 1, 0x0001, &d);
        is_hex(d, 0x0001, "ref_dot: 2^-24 + 2^-48 -> 2^-24 (f16 subnormal grid)");
        uint64_t inf[1] = {0x7C00}, z[1] = {0};
        ref_dot(h, h, s, s, FPEMU_RNE, inf, z, 1, 0, &d);
        ok(fpemu_is_nan(s, d), "ref_dot: 0 * inf is NaN");
    }
    return done_testing();
}
