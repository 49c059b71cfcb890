/* SPDX-License-Identifier: MIT */
/* t_gemm_sweep.c: fpemu_gemm_f32 against its scalar model
 * (fpemu_gemm_f32_reference) over random configurations, bit for bit:
 * the presets (block FMA, AMD's pairwise blocks, and the exact, fma-seq
 * and pairwise references) with random model options (nfrac, block, align,
 * zero_c, zero_product, emax_floor, out_mant, out_round, subnormals,
 * overflow, zero_sign, nan, tf32_truncate, ftz, normalize, chain, the
 * two-stage sum's fuse_nfrac, fuse_align and split, the group rule's
 * group, group_nfrac and group_block: every option the model takes),
 * promotion, scaling recipes and element formats (custom ones among them:
 * random widths, biases, infinity, NaN and subnormal rules), on
 * data made to find the kernels' edges: exponents spread over the
 * formats' ranges, zero rows and columns, -0, c near the thresholds the
 * kernels test (tiny, huge, subnormal), and now and then an inf or a NaN.
 * The kernels get A and B transposed or not, with leading dimensions up
 * to 3 wider (the reference takes them plain); a quarter of the unscaled
 * configurations give codes instead (every code of the formats, some with
 * MX scale codes), against the codes call on the scalar model. Each configuration runs on
 * every kernel level (the best, AVX2, SSE2) and on 1 and 3 threads. t_gemm covers the presets' own parameters case
 * by case; this finds what a configuration nobody wrote a case for does.
 * Its first runs found three such bugs, each now a case of t_gemm: the
 * fused kernel's fast path below 23 fraction bits (about once in 300
 * configurations), the f64 kernel's -0 under an emax floor (once in 4000)
 * and the floor's check skipped for an all-zero operand (once in 7000).
 * The seed is printed: FPEMU_SEED replays a run; FPEMU_SWEEP=N runs N
 * configurations (default 3000, about 4 s). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpemu.h"
#include "gemm.h"
#include "mma.h"
#include "tap.h"

static uint64_t rs;
static double urand(void) { rs = fpemu_random64(rs, 7); return (double)(rs >> 11) / 9007199254740992.0; }
static int irand(int n) { return (int)(urand() * n); }
static float nrand(void) { return (float)(sqrt(-2 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand())); }

/* a value whose exponent lies anywhere in [lo, hi], either sign */
static float spread(int lo, int hi) { return ldexpf(1.0f + (float)urand(), lo + irand(hi - lo + 1)) * (urand() < 0.5f ? -1 : 1); }

/* the data: mostly values within the element format's range (e the
 * exponent bound), with the edges mixed in */
static void fill(float *x, int n, int e, int rows, int cols, int colmajor_zero) {
    const int mode = irand(4); /* 0: N(0,1); 1: a wide spread; 2: narrow around 1; 3: tiny */
    for (int i = 0; i < n; i++) {
        float v = mode == 0 ? nrand() : mode == 1 ? spread(-e, e) : mode == 2 ? spread(-2, 2) : spread(-e, -e / 2);
        const double u = urand();
        if (u < 0.05) v = 0.0f;
        else if (u < 0.07) v = -0.0f;
        else if (u < 0.075) v = spread(e, e + 3);    /* at and above the format's top */
        else if (u < 0.08) v = spread(-e - 12, -e);  /* its subnormals and below */
        x[i] = v;
    }
    if (rows > 1 && urand() < 0.5) { /* a zero row (or column), whole */
        const int r = irand(colmajor_zero ? cols : rows);
        for (int i = 0; i < (colmajor_zero ? rows : cols); i++) x[colmajor_zero ? (size_t)i * cols + r : (size_t)r * cols + i] = 0.0f;
    }
}

/* c near what the kernels test: tiny (below 2^-100, subnormal), huge, -0 */
static void fill_c(float *c, int n) {
    const int mode = irand(3);
    for (int i = 0; i < n; i++) {
        float v = nrand() * 4;
        const double u = urand();
        if (mode && u < 0.15) v = spread(-126, -100);
        else if (mode && u < 0.2) v = ldexpf((float)urand(), -126);  /* subnormal */
        else if (mode && u < 0.25) v = spread(60, 127);
        else if (u < 0.3) v = 0.0f;
        else if (u < 0.32) v = -0.0f;
        c[i] = v;
    }
}

static int same(const float *d, const float *r, int n, char *first, size_t len) {
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (memcmp(&d[i], &r[i], 4) && !(isnan(d[i]) && isnan(r[i])))
            if (bad++ == 0) snprintf(first, len, "element %d: %a, the model %a", i, d[i], r[i]);
    return bad;
}

/* One call of either entry: fpemu_gemm_f32 on the operands as passed, or
 * fpemu_gemm_codes on codes (with scale codes where sf is set). */
typedef struct {
    int M, N, K;
    const float *A, *B, *C;
    int lda, ta, ldb, tb;
    const uint64_t *Ac, *Bc, *Sa, *Sb;
    const fpemu_format *sf;
} gemm_call;
static int call(const fpemu_gemm_config *cfg, const gemm_call *c, float *D, fpemu_gemm_stats *st) {
    if (c->Ac) return fpemu_gemm_codes(cfg, c->M, c->N, c->K, c->Ac, c->Bc, c->C, c->sf, c->Sa, c->Sb, 32, D, st);
    return fpemu_gemm_f32(cfg, c->M, c->N, c->K, c->A, c->lda, c->ta, c->B, c->ldb, c->tb, c->C, c->N, D, c->N, st);
}

/* The call on every kernel level (the best, SSE2, AVX2; the best again on
 * 3 threads) against R: nonzero at the first level that fails or differs
 * (first says where), the best level's lanes in *lanes. */
static int every_level(fpemu_gemm_config *cfg, const gemm_call *c, const float *R, float *D, int *lanes, char *first,
                       size_t len) {
    int bad = 0;
    for (int level = 0; level <= 3 && !bad; level++) {
        fpemu_gemm_stats st;
        cfg->isa = level < 3 ? level : 0, cfg->nthreads = level == 3 ? 3 : 1;
        if (call(cfg, c, D, &st)) {
            snprintf(first, len, "failed at level %d", level);
            bad = 1;
            break;
        }
        if (level == 0) *lanes = st.lanes;
        bad = same(D, R, c->M * c->N, first, len);
        if (bad) snprintf(first + strlen(first), len - strlen(first), " (level %d)", level);
    }
    cfg->isa = 0;
    return bad;
}

/* A quarter of the unscaled configurations take codes instead
 * (fpemu_gemm_codes): uniform over each format's field, so that every code
 * appears (NaN payloads, infinities, -0, subnormals), one in three with MX
 * scales (e8m0 codes of either side, blocks of 32: NaN scales and extreme
 * powers among them), against the same call on the scalar model. Returns 0
 * where the configuration is not one of them, else 1 with its line out. */
static int codes_mode(fpemu_gemm_config *cfg, const char *desc, int M, int N, int K, const float *C, uint64_t *Ac,
                      uint64_t *Bc, uint64_t *Sa, uint64_t *Sb, float *D, float *R) {
    if (cfg->scaling.kind != FPEMU_GEMM_SCALING_NONE || urand() > 0.25) return 0;
    const fpemu_format *fa = cfg->model.fa, *fb = cfg->model.fb, *e8m0 = fpemu_format_get("e8m0", NULL, 0);
    const uint64_t ma = fa->bits >= 64 ? ~0ull : (1ull << fa->bits) - 1, mb = fb->bits >= 64 ? ~0ull : (1ull << fb->bits) - 1;
    for (int i = 0; i < M * K; i++) Ac[i] = fpemu_random64(rs += 0x9E3779B97F4A7C15ull, 3) & ma;
    for (int i = 0; i < K * N; i++) Bc[i] = fpemu_random64(rs += 0x9E3779B97F4A7C15ull, 3) & mb;
    const int scaled = urand() < 0.33 && (cfg->promote == 0 || cfg->promote % 32 == 0), nsb = (K + 31) / 32;
    for (int i = 0; scaled && i < M * nsb; i++) Sa[i] = (uint64_t)(urand() < 0.05 ? 0xFF : 127 - 20 + irand(41));
    for (int i = 0; scaled && i < nsb * N; i++) Sb[i] = (uint64_t)(urand() < 0.05 ? 0xFF : 127 - 20 + irand(41));
    const gemm_call c = {.M = M, .N = N, .K = K, .C = C, .Ac = Ac, .Bc = Bc, .Sa = scaled ? Sa : NULL,
                         .Sb = scaled ? Sb : NULL, .sf = scaled ? e8m0 : NULL};
    cfg->scalar_only = 1, cfg->nthreads = 1;
    int rc = call(cfg, &c, R, NULL);
    cfg->scalar_only = 0;
    if (rc) return 0; /* (the model refused the scale codes: not this mode) */
    int lanes = 0;
    char first[160] = "";
    const int bad = every_level(cfg, &c, R, D, &lanes, first, sizeof first);
    ok(!bad, "%s, codes%s: == the scalar model on every level (%d lanes)%s%s", desc, scaled ? " with MX scales" : "", lanes,
       bad ? "; " : "", first);
    return 1;
}

int main(void) {
    rs = tap_seed(20261127);
    const char *ns = getenv("FPEMU_SWEEP");
    const int nconf = ns && atoi(ns) > 0 ? atoi(ns) : 3000;
    const int nmodels = fpemu_mma_preset_count(); /* every preset of the table, as it grows */
    static const char *const fmts[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "e4m3fnuz", "e5m2fnuz"};
    static const char *const recipes[] = {"none", "none", "none", "tensor", "rowwise", "blockwise", "mx-rceil", "nvfp4"};
    static const char *const rounds[] = {"rtz", "rne", "rdn", "rup"};
    enum { MMAX = 21, NMAX = 40, KMAX = 140 };
    static float A[MMAX * KMAX], B[KMAX * NMAX], C[MMAX * NMAX], D[MMAX * NMAX], R[MMAX * NMAX];
    static uint64_t Ac[MMAX * KMAX], Bc[KMAX * NMAX], Sa[MMAX * KMAX], Sb[KMAX * NMAX];
    /* the operands as passed: transposed or not, leading dimensions 0-3 wider */
    static float As[(MMAX + 3) * (KMAX + 3)], Bs[(KMAX + 3) * (NMAX + 3)];
    int run = 0, tries = 0;
    while (run < nconf && tries < 50 * nconf) {
        tries++;
        fpemu_gemm_config cfg;
        char desc[400], err[256];
        const char *model = fpemu_mma_preset_get(irand(nmodels))->name, *fa = fmts[irand(10)], *fb = urand() < 0.7 ? fa : fmts[irand(10)];
        /* now and then a custom format (the references take any): exponent
         * and mantissa widths, bias, infinities, NaNs, subnormals */
        char cust[2][96];
        for (int side = 0; side < 2; side++) {
            if (urand() > 0.15) continue;
            static const char *const inan[] = {"inf=ieee,nan=ieee", "inf=no,nan=fn", "inf=no,nan=none", "inf=top,nan=uz"};
            const int e = 2 + irand(7), m = irand(11);
            snprintf(cust[side], sizeof cust[side], "custom:e=%d,m=%d,bias=%d,%s%s", e, m, (1 << (e - 1)) - 1 + irand(41) - 20,
                     inan[irand(4)], urand() < 0.2 ? ",subnormals=no" : "");
            *(side ? &fb : &fa) = cust[side];
        }
        if (fpemu_gemm_config_init(&cfg, model, fa, fb, NULL, 0)) continue; /* no MMA for these formats */
        if (cfg.model.kind == FPEMU_MMA_KIND_INT) continue;
        int n = snprintf(desc, sizeof desc, "%s %s x %s", model, fa, fb);
        /* a few random options (a set the model refuses is skipped) */
        int refused = 0, nopt = irand(4);
        for (int o = 0; o < nopt && !refused; o++) {
            char key[32], val[32];
            switch (irand(22)) {
            case 0: snprintf(key, sizeof key, "nfrac"), snprintf(val, sizeof val, "%d", 3 + irand(30)); break;
            case 1: snprintf(key, sizeof key, "block"), snprintf(val, sizeof val, "%d", (int[]){1, 2, 3, 4, 6, 8, 16, 32}[irand(8)]); break;
            case 2: snprintf(key, sizeof key, "align"), snprintf(val, sizeof val, "%s", urand() < 0.5 ? "rz" : "rd"); break;
            case 3: snprintf(key, sizeof key, "zero_c"), snprintf(val, sizeof val, "%s", urand() < 0.5 ? "emin" : "ignore"); break;
            case 4: snprintf(key, sizeof key, "zero_product"), snprintf(val, sizeof val, "%s", urand() < 0.5 ? "emin" : "ignore"); break;
            case 5: snprintf(key, sizeof key, "emax_floor"), snprintf(val, sizeof val, "%d", -140 + irand(130)); break;
            case 6: snprintf(key, sizeof key, "out_mant"), snprintf(val, sizeof val, "%d", 10 + irand(14)); break;
            case 7: snprintf(key, sizeof key, "out_round"), snprintf(val, sizeof val, "%s", rounds[irand(4)]); break;
            case 8: snprintf(key, sizeof key, "subnormals"), snprintf(val, sizeof val, "%s", urand() < 0.5 ? "keep" : "flush"); break;
            case 9: snprintf(key, sizeof key, "overflow"), snprintf(val, sizeof val, "%s", urand() < 0.5 ? "inf" : "max"); break;
            case 10: snprintf(key, sizeof key, "zero_sign"), snprintf(val, sizeof val, "%s", urand() < 0.5 ? "ieee" : "plus"); break;
            case 11: snprintf(key, sizeof key, "nan"), snprintf(val, sizeof val, "%s", urand() < 0.5 ? "allones" : "canonical"); break;
            case 12: snprintf(key, sizeof key, "tf32_truncate"), snprintf(val, sizeof val, "%d", irand(2)); break;
            case 13: snprintf(key, sizeof key, "fuse_nfrac"), snprintf(val, sizeof val, "%d", cfg.model.nfrac + irand(22)); break;
            case 14: snprintf(key, sizeof key, "fuse_align"), snprintf(val, sizeof val, "%s", urand() < 0.5 ? "rz" : "rd"); break;
            case 15: snprintf(key, sizeof key, "split"), snprintf(val, sizeof val, "%d", 1 + irand(2)); break;
            case 16: snprintf(key, sizeof key, "group"), snprintf(val, sizeof val, "%d", (int[]){0, 8, 16, 32}[irand(4)]); break;
            case 17: snprintf(key, sizeof key, "group_nfrac"), snprintf(val, sizeof val, "%d", 20 + irand(20)); break;
            case 18: snprintf(key, sizeof key, "group_block"), snprintf(val, sizeof val, "%d", (int[]){16, 32, 64, 128}[irand(4)]); break;
            case 19: snprintf(key, sizeof key, "ftz"), snprintf(val, sizeof val, "%d", irand(2)); break;
            case 20: snprintf(key, sizeof key, "normalize"), snprintf(val, sizeof val, "%s", urand() < 0.7 ? "end" : "each"); break;
            default: snprintf(key, sizeof key, "chain"), snprintf(val, sizeof val, "%s", urand() < 0.7 ? "rounded" : "f32-add"); break;
            }
            if (fpemu_mma_model_set(&cfg.model, key, val, NULL, 0)) refused = 1;
            else n += snprintf(desc + n, sizeof desc - (size_t)n, " %s=%s", key, val);
        }
        if (refused) continue;
        const char *rec = recipes[irand(8)];
        if (fpemu_gemm_config_set_scaling(&cfg, rec, NULL, 0)) continue;
        if (strcmp(rec, "none")) n += snprintf(desc + n, sizeof desc - (size_t)n, " scaling=%s", rec);
        if (strcmp(rec, "blockwise") && urand() < 0.25) {
            const int bl = cfg.model.block > 0 ? cfg.model.block : 1;
            cfg.promote = bl * (1 + irand(4));
            n += snprintf(desc + n, sizeof desc - (size_t)n, " promote=%d", cfg.promote);
        }
        cfg.sat = urand() < 0.8;
        const int M = 1 + irand(MMAX), N = 1 + irand(NMAX), K = 1 + irand(KMAX), withc = urand() < 0.7;
        if (fpemu_gemm_check(&cfg, M, N, K, K, 0, N, 0, N, N, err, sizeof err)) continue; /* (MX: K a multiple of its block, ...) */
        snprintf(desc + n, sizeof desc - (size_t)n, "%s, %d x %d x %d%s", cfg.sat ? "" : " sat=0", M, N, K, withc ? " +C" : "");
        const int ea = cfg.model.fa->emax < 120 ? cfg.model.fa->emax : 120, eb = cfg.model.fb->emax < 120 ? cfg.model.fb->emax : 120;
        fill(A, M * K, ea, M, K, 0);
        fill(B, K * N, eb, K, N, 1);
        fill_c(C, M * N);
        if (urand() < 0.1) A[irand(M * K)] = urand() < 0.5 ? INFINITY : NAN;
        if (urand() < 0.1) C[irand(M * N)] = urand() < 0.5 ? -INFINITY : NAN;
        if (codes_mode(&cfg, desc, M, N, K, withc ? C : NULL, Ac, Bc, Sa, Sb, D, R)) {
            run++;
            continue;
        }
        const int ta = urand() < 0.3, tb = urand() < 0.3, lda = (ta ? M : K) + irand(4), ldb = (tb ? K : N) + irand(4);
        for (int i = 0; i < (int)(sizeof As / sizeof As[0]); i++) As[i] = NAN; /* (padding: never read) */
        for (int i = 0; i < (int)(sizeof Bs / sizeof Bs[0]); i++) Bs[i] = NAN;
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++) As[ta ? (size_t)k * lda + i : (size_t)i * lda + k] = A[(size_t)i * K + k];
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++) Bs[tb ? (size_t)j * ldb + k : (size_t)k * ldb + j] = B[(size_t)k * N + j];
        if (ta || tb || lda != (ta ? M : K) || ldb != (tb ? K : N))
            snprintf(desc + strlen(desc), sizeof desc - strlen(desc), ", A%s lda %d, B%s ldb %d", ta ? "^T" : "", lda, tb ? "^T" : "", ldb);
        if (fpemu_gemm_f32_reference(&cfg, M, N, K, A, K, 0, B, N, 0, withc ? C : NULL, N, R, N, NULL)) {
            ok(0, "%s: the scalar model refused a configuration fpemu_gemm_check took", desc);
            run++;
            continue;
        }
        char first[160] = "";
        int lanes = 0;
        const gemm_call c = {.M = M, .N = N, .K = K, .A = As, .B = Bs, .C = withc ? C : NULL, .lda = lda, .ta = ta, .ldb = ldb, .tb = tb};
        const int bad = every_level(&cfg, &c, R, D, &lanes, first, sizeof first);
        ok(!bad, "%s: == the scalar model on every level (%d lanes)%s%s", desc, lanes, bad ? "; " : "", first);
        run++;
    }
    if (run < nconf) diag("%d of %d configurations drawn in %d tries", run, nconf, tries);
    return done_testing();
}
