/* SPDX-License-Identifier: MIT */
/* t_policy.c: every precision policy keeps its tensors in the formats it
 * promises (parameters, master weights, optimiser state, GEMM inputs per the
 * telemetry), and a short run of every policy learns. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gemm.h"
#include "scaling.h"
#include "tap.h"
#include "train_internal.h"

static int representable(const fpemu_format *f, const double *x, size_t n, size_t *first_bad) {
    if (!f || f->bits == 64) return 1;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) continue;
        float v = (float)x[i], w;
        if ((double)v != x[i]) { *first_bad = i; return 0; }
        fpemu_round_f32(f, &w, &v, 1, &ctx, NULL);
        if (w != v) { *first_bad = i; return 0; }
    }
    return 1;
}

/* MS-AMP's parameters: each Linear weight an f16 ScalingTensor (one
 * power-of-two scale per tensor, the largest that keeps its amax within
 * 65504, under which every value is an f16 value), every other parameter a
 * plain f16 value. *scaled_only counts Linear weights that are not plain
 * f16 values (below f16's normal range, where the scale keeps bits). */
static int msamp_params_ok(trn_run *r, size_t *first_bad, long *scaled_only) {
    lin_state *lins[64];
    int nl = trn__model_linears(r, lins, 64);
    if (nl > 64) nl = 64; /* the test models have fewer */
    *scaled_only = 0;
    for (int p = 0; p < trn__model_param_count(r); p++) {
        size_t off, n, bi;
        int layer, lin = 0;
        trn__model_param(r, p, &off, &n, &layer);
        for (int i = 0; i < nl; i++) lin |= lins[i]->w_off == off;
        if (!lin) {
            if (!representable(r->f_param, r->params + off, n, &bi)) { *first_bad = off + bi; return 0; }
            continue;
        }
        double amax = 0, *y = malloc(n * sizeof *y);
        for (size_t i = 0; i < n; i++) amax = fmax(amax, fabs(r->params[off + i]));
        int e;
        frexp(65504.0 / amax, &e); /* 65504 / amax in [2^(e-1), 2^e) */
        for (size_t i = 0; i < n; i++) y[i] = ldexp(r->params[off + i], e - 1);
        int good = representable(r->f_param, y, n, &bi);
        for (size_t i = 0; i < n; i++) *scaled_only += !representable(r->f_param, r->params + off + i, 1, &bi);
        free(y);
        if (!good) { *first_bad = off + bi; return 0; }
    }
    return 1;
}

/* x rounded to bf16 as the engine's casts take it (through f32, rne). */
static double bf16r(double x) {
    float a = (float)x, o;
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    fpemu_round_f32(fpemu_format_get("bf16", NULL, 0), &o, &a, 1, &c, NULL);
    return o;
}

/* MS-AMP's ScalingTensor cast and back, in place: the power-of-two scale
 * of the amax, the scaled f32 values cast (saturating) to f, times the f32
 * inverse of the scale. */
static void msamp_cast(const fpemu_format *f, double *x, size_t n) {
    double amax = 0;
    for (size_t i = 0; i < n; i++) amax = fmax(amax, fabs(x[i]));
    float sc = fpemu_scaling_msamp_scale((float)amax, f->max_finite, 1.0f), inv = 1.0f / sc;
    fpemu_ctx c;
    fpemu_ctx_init(&c);
    c.sat = 1;
    for (size_t i = 0; i < n; i++) {
        float a = (float)(x[i] * sc), o;
        fpemu_round_f32(f, &o, &a, 1, &c, NULL);
        x[i] = o * inv;
    }
}

/* A run of model under policy with the NULL-ended key/value pairs kv set
 * (bails on any error); *out, if not NULL, receives its settings. */
static trn_run *open_run(const char *model, const char *policy, const char *const *kv, uint64_t seed, trn_settings *out) {
    trn_settings s;
    char err[512];
    if (trn_settings_init(&s, model, policy, err, sizeof err)) bail("%s", err);
    for (int i = 0; kv && kv[i]; i += 2)
        if (trn_settings_set(&s, kv[i], kv[i + 1], err, sizeof err)) bail("%s", err);
    trn_run *r;
    if (trn_open(&r, &s, seed, err, sizeof err)) bail("%s %s: %s", model, policy, err);
    if (out) *out = s;
    return r;
}

/* The format of a (layer, class) row: want if one of its rows has it (a class
 * cast twice, as autocast's bf16 then the recipe's e4m3, has a row for each),
 * else the first row's, else "-". */
static const char *fmt_of(trn_run *r, const char *layer, const char *cls, const char *want) {
    trn_tensor_rec t;
    const char *first = "-";
    for (int i = 0; i < trn_tensor_count(r); i++) {
        trn_tensor_get(r, i, &t);
        if (strcmp(t.layer, layer) || strcmp(t.cls, cls)) continue;
        if (!strcmp(t.format, want)) return t.format;
        if (!strcmp(first, "-")) first = t.format;
    }
    return first;
}

/* Run the first Linear of r forward on 4 rows, row 1 holding an inf and,
 * with nan, row 2 a NaN. Returns how many rows come out as expected: all NaN
 * where bit i of nan_rows is set, else all finite. */
static int linear_nonfinite_rows(trn_run *r, int nan, unsigned nan_rows) {
    lin_state *ls[8];
    trn__model_linears(r, ls, 8);
    lin_state *L = ls[0];
    const int BT = 4;
    double *in = calloc((size_t)BT * L->in, sizeof *in), *out = calloc((size_t)BT * L->out, sizeof *out);
    if (!in || !out) bail("out of memory");
    for (int i = 0; i < BT * L->in; i++) in[i] = (double)((i % 13) - 6) / 8;
    in[(size_t)1 * L->in + 40] = INFINITY;
    if (nan) in[(size_t)2 * L->in + 7] = NAN;
    trn__linear_fwd(r, L, out, in, r->f_lo, BT, r->f_lo);
    int good = 0;
    for (int i = 0; i < BT; i++) {
        int all_nan = 1, all_finite = 1;
        for (int j = 0; j < L->out; j++) {
            all_nan &= isnan(out[(size_t)i * L->out + j]) != 0;
            all_finite &= isfinite(out[(size_t)i * L->out + j]) != 0;
        }
        good += (nan_rows >> i & 1) ? all_nan : all_finite;
    }
    free(in); free(out);
    return good;
}

int main(void) {
    uint64_t seed = tap_seed(11);
    char err[512];
    for (int p = 0; trn_policy_names[p]; p++) {
        const char *pol = trn_policy_names[p];
        const pol_def *d = trn__policy_find(pol);
        trn_settings s;
        if (trn_settings_init(&s, "mlp-digits", pol, err, sizeof err)) bail("%s", err);
        const char *kv[] = {"hidden", "16", "batch_size", "16", "lr", "0.01", NULL};
        for (int i = 0; kv[i]; i += 2)
            if (trn_settings_set(&s, kv[i], kv[i + 1], err, sizeof err)) bail("%s", err);
        /* AdamW's eps=1e-8 is 0 in f16: f16 optimiser states need a larger one (as in PyTorch) */
        if (!strcmp(d->v_fmt, "f16") && !d->m_scaled) trn_settings_set(&s, "eps", "1e-4", err, sizeof err);
        trn_run *r;
        if (trn_open(&r, &s, seed, err, sizeof err)) bail("%s: %s", pol, err);
        double first = 0, last = 0;
        int steps = 40, nan = 0;
        trn_step_rec rec;
        for (int i = 0; i < steps; i++) {
            trn_step(r, &rec, err, sizeof err);
            if (i < 5) first += rec.loss / 5;
            if (i >= steps - 5) last += rec.loss / 5;
            if (isnan(rec.loss)) nan = 1;
            if (i == 2) {
                /* formats after a few steps */
                size_t bi = 0;
                if (d->msamp) {
                    long scaled_only = 0;
                    int okp = msamp_params_ok(r, &bi, &scaled_only);
                    ok(okp && scaled_only > 0,
                       "%s: Linear weights are f16 values times one power of two per tensor (%ld of them not plain f16 "
                       "values), other parameters f16 values%s", pol, scaled_only, okp ? "" : " (one is not)");
                    if (!okp) diag("param %zu = %.17g", bi, r->params[bi]);
                } else {
                    int okp = representable(r->f_param, r->params, r->nparams, &bi);
                    ok(okp, "%s: every parameter is a %s value%s", pol, r->f_param->name, okp ? "" : " (one is not)");
                    if (!okp) diag("param %zu = %.17g", bi, r->params[bi]);
                }
                if (!d->m_scaled) {
                    int okm = representable(r->f_m, r->opt_m, r->nparams, &bi) && representable(r->f_v, r->opt_v, r->nparams, &bi);
                    ok(okm, "%s: optimiser states are %s / %s values", pol, r->f_m->name, r->f_v->name);
                } else {
                    ok(1, "%s: optimiser states are scaled %s / %s tensors (dequantised values)", pol, r->f_m->name, r->f_v->name);
                }
                if (strcmp(d->param, d->lo) && !strcmp(d->param, "f32")) {
                    size_t b2;
                    ok(!representable(r->f_lo, r->params, r->nparams, &b2), "%s: master weights are f32 (not all %s values)", pol, d->lo);
                }
                const char *want_act = d->recipe != RECIPE_NONE ? "e4m3" : trn__is_low(r->f_lo) ? d->lo : "-";
                const char *want_gout = d->recipe != RECIPE_NONE ? (!strcmp(s.fp8_format, "HYBRID") ? "e5m2" : "e4m3") : "-";
                const char *act = fmt_of(r, "fc1", "activation", want_act), *gout = fmt_of(r, "fc2", "grad_output", want_gout);
                ok(!strcmp(act, want_act) && !strcmp(gout, want_gout),
                   "%s: GEMM inputs: fc1 activations %s (want %s), fc2 grad_output %s (want %s)", pol, act, want_act, gout, want_gout);
                /* fc1's weight rows: under an fp8 recipe the weight is cast to e4m3 with a scale of its own
                 * and the bias, rounded to the policy's 16-bit format, has a row of its own (one slot used
                 * to hold both: the row said bf16 with the bias's scale 1) */
                trn_tensor_rec t, w8 = {0}, wlo = {0};
                int n8 = 0, nlo = 0, nother = 0;
                for (int k = 0; k < trn_tensor_count(r); k++) {
                    trn_tensor_get(r, k, &t);
                    if (strcmp(t.layer, "fc1") || strcmp(t.cls, "weight")) continue;
                    if (d->recipe != RECIPE_NONE && !strcmp(t.format, r->f8_fwd->name)) w8 = t, n8++;
                    else if (!strcmp(t.format, r->f_lo->name)) wlo = t, nlo++;
                    else nother++;
                }
                if (d->recipe != RECIPE_NONE)
                    ok(n8 == 1 && nother == 0 && nlo <= 1 && w8.scale != 1 && w8.scale > 0 && (!nlo || (wlo.n < w8.n && wlo.scale == 1)),
                       "%s: fc1 weight: a %s row (n %llu, scale %g) and %d %s bias row (n %llu), %d others", pol,
                       r->f8_fwd->name, (unsigned long long)w8.n, w8.scale, nlo, r->f_lo->name, (unsigned long long)wlo.n, nother);
                else
                    ok(nother == 0 && nlo == (trn__is_low(r->f_lo) && r->f_lo != r->f_param),
                       "%s: fc1 weight: %d %s row(s) (one where 16-bit weights are cast from wider parameters), %d others",
                       pol, nlo, r->f_lo->name, nother);
                if (d->recipe == RECIPE_BLOCKWISE) {
                    /* DeepSeek-V3's Wgrad GEMM writes f32 weight gradients: not rounded to bf16 */
                    lin_state *l1[8];
                    size_t b3;
                    trn__model_linears(r, l1, 8);
                    ok(!representable(r->f_lo, r->grads + l1[0]->w_off, (size_t)l1[0]->in * l1[0]->out, &b3),
                       "%s: fc1's weight gradients are f32 (not all %s values)", pol, r->f_lo->name);
                }
                if (d->msamp) {
                    /* MS-AMP: power-of-two scales; the weight gradient (only
                     * the weight's: fc1 has 16 x 64 of them) cast to e4m3 */
                    trn_tensor_rec g = {0};
                    int ng = 0, e;
                    for (int k = 0; k < trn_tensor_count(r); k++) {
                        trn_tensor_get(r, k, &t);
                        if (!strcmp(t.layer, "fc1") && !strcmp(t.cls, "grad_weight") && !strcmp(t.format, "e4m3")) g = t, ng++;
                    }
                    /* the weight gradients after unscaling: e4m3 values times one power of two
                     * (unscaled exactly, through the scale; deep-mlp below checks that this keeps
                     * values f16 would not) */
                    lin_state *l1[8];
                    trn__model_linears(r, l1, 8);
                    size_t ngw = (size_t)l1[0]->in * l1[0]->out, b4;
                    const double *gw = r->grads + l1[0]->w_off;
                    double gmax = 0;
                    for (size_t k = 0; k < ngw; k++) gmax = fmax(gmax, fabs(gw[k]));
                    int ge;
                    frexp(448 / gmax, &ge);
                    double *gs = malloc(ngw * sizeof *gs);
                    for (size_t k = 0; k < ngw; k++) gs[k] = ldexp(gw[k], ge - 1);
                    int e4 = gmax > 0 && representable(fpemu_format_get("e4m3", NULL, 0), gs, ngw, &b4);
                    size_t not16 = 0;
                    for (size_t k = 0; k < ngw; k++) not16 += !representable(r->f_param, gw + k, 1, &b4);
                    free(gs);
                    ok(e4, "%s: fc1's unscaled weight gradients are e4m3 values times 2^%d (%s; %zu of %zu not f16 values)",
                       pol, ge - 1, e4 ? "all" : "not all", not16, ngw);
                    ok(frexp(w8.scale, &e) == 0.5 && ng == 1 && !strcmp(g.format, "e4m3") && g.n == 16 * 64 &&
                           frexp(g.scale, &e) == 0.5,
                       "%s: fc1 weight scale %g a power of two; %d e4m3 grad_weight row(s): %s, n %llu, scale %g", pol, w8.scale,
                       ng, g.format ? g.format : "-", (unsigned long long)g.n, g.scale);
                }
            }
        }
        double el, ea;
        trn_eval(r, &el, &ea);
        ok(!nan && last < 0.8 * first && isfinite(el) && ea > 0.5,
           "%s: learns in %d steps (loss %.3f -> %.3f; eval loss %.3f, accuracy %.3f)", pol, steps, first, last, el, ea);
        trn_close(r);
    }
    /* fp8-blockwise: promotion_interval divides each 128-block into chunks
     * accumulated from zero and promoted to f32 (0 = once per block); a
     * non-divisor is refused, as is an MX block other than 32. (On
     * mlp-digits, whose inputs are multiples of 1/16, every split gives the
     * same bits: the model's accumulation is exact there.) */
    {
        uint64_t h[3];
        const char *promo[3] = {"0", "128", "32"};
        for (int k = 0; k < 3; k++) {
            const char *kv[] = {"promotion_interval", promo[k], NULL};
            trn_run *r = open_run("deep-mlp", "fp8-blockwise", kv, seed, NULL);
            trn_step_rec rec;
            for (int j = 0; j < 3; j++) trn_step(r, &rec, err, sizeof err);
            h[k] = 1469598103934665603u;
            for (size_t j = 0; j < r->nparams; j++) {
                uint64_t b;
                memcpy(&b, &r->params[j], 8);
                h[k] = (h[k] ^ b) * 1099511628211u;
            }
            trn_close(r);
        }
        if (!(h[0] == h[1] && h[0] != h[2])) diag("hashes %016llx %016llx %016llx", (unsigned long long)h[0], (unsigned long long)h[1], (unsigned long long)h[2]);
        ok(h[0] == h[1] && h[0] != h[2],
           "fp8-blockwise, deep-mlp, 3 steps: promotion_interval 0 and 128 (= block_size) train the same bits, 32 (promotions "
           "every 32 of K) others");
        trn_settings s;
        char e1[256] = "", e2[256] = "";
        trn_settings_init(&s, "mlp-digits", "fp8-blockwise", err, sizeof err);
        trn_settings_set(&s, "promotion_interval", "48", err, sizeof err);
        int r1 = trn_settings_check(&s, e1, sizeof e1);
        trn_settings_init(&s, "mlp-digits", "mxfp8", err, sizeof err);
        trn_settings_set(&s, "block_size", "16", err, sizeof err);
        int r2 = trn_settings_check(&s, e2, sizeof e2);
        ok(r1 && strstr(e1, "must divide block_size") && r2 && strstr(e2, "MX blocks are 32"),
           "promotion_interval 48 with block_size 128 and mxfp8 block_size 16 are refused ('%s'; '%s')", e1, e2);
        char e3[256] = "";
        trn_settings_init(&s, "mlp-digits", "msamp-o2", err, sizeof err);
        trn_settings_set(&s, "fp8_head", "0", err, sizeof err);
        int r3 = trn_settings_check(&s, e3, sizeof e3);
        ok(r3 && strstr(e3, "MS-AMP converts every Linear"), "msamp-o2 with fp8_head=0 is refused ('%s')", e3);
    }
    {
        /* MS-AMP unscales a weight gradient through its scale, exactly
         * (ScalingTensor.mul_ multiplies scale_inv): fc1's weight gradient
         * and bias gradient set to the same loss-scaled values, then the
         * fp8 cast and an unscale by 2^-27 that takes them below f16's
         * subnormals: the weight's stay nonzero e4m3 values times a power
         * of two, the bias's are rounded to f16 (zeros) */
        const char *kv[] = {"hidden", "16", NULL};
        trn_run *r = open_run("mlp-digits", "msamp-o1", kv, seed, NULL);
        lin_state *ls[8];
        trn__model_linears(r, ls, 8);
        size_t nw = (size_t)ls[0]->in * ls[0]->out, nb = (size_t)ls[0]->out, b6;
        memset(r->grads, 0, r->nparams * sizeof *r->grads);
        for (size_t k = 0; k < nw; k++) r->grads[ls[0]->w_off + k] = (double)(float)(((double)(k % 97) - 48) / 64);
        for (size_t k = 0; k < nb; k++) r->grads[ls[0]->b_off + k] = (double)(float)(((double)(k % 97) - 48) / 64);
        double norm;
        int nonfinite = trn__grad_cast(r), found = trn__unscale_check(r, 0x1p-27f, &norm);
        double *gs = malloc(nw * sizeof *gs);
        size_t zero_w = 0, nonzero_b = 0;
        for (size_t k = 0; k < nw; k++) {
            gs[k] = ldexp(r->grads[ls[0]->w_off + k], 27 + 8); /* undo the unscale and MS-AMP's 2^floor(log2(448/0.75)) = 2^9 / 2 */
            zero_w += r->grads[ls[0]->w_off + k] == 0 && (k % 97) != 48;
        }
        for (size_t k = 0; k < nb; k++) nonzero_b += r->grads[ls[0]->b_off + k] != 0;
        int e4 = representable(fpemu_format_get("e4m3", NULL, 0), gs, nw, &b6);
        free(gs);
        ok(!nonfinite && !found && zero_w == 0 && e4 && nonzero_b == 0,
           "msamp-o1: unscaled by 2^-27, fc1's weight gradients stay e4m3 values times 2^-35 (%zu became zero; %s), its bias "
           "gradients are rounded to f16 (%zu nonzero)", zero_w, e4 ? "all on the grid" : "not all on the grid", nonzero_b);
        trn_close(r);
    }
    {
        /* A checkpoint keeps every Linear's scaling state: a 256-deep MLP
         * has 257 Linear layers (the state blob held 256 of them before) */
        const char *kv[] = {"depth", "256", "hidden", "4", "batch_size", "4", "amax_history_len", "4", NULL};
        trn_run *r = open_run("deep-mlp", "fp8-delayed", kv, seed, NULL), *r2 = NULL;
        trn_step_rec rec;
        for (int i = 0; i < 2; i++) trn_step(r, &rec, err, sizeof err);
        unsigned char *buf = NULL;
        size_t len = 0;
        int saved = trn_state_save(r, &buf, &len), loaded = saved ? -1 : trn_state_load(&r2, buf, len, err, sizeof err);
        int nl = trn__model_linears(r, NULL, 0), same = 0;
        if (!loaded) {
            lin_state **a = malloc((size_t)nl * sizeof *a), **b = malloc((size_t)nl * sizeof *b);
            trn__model_linears(r, a, nl);
            trn__model_linears(r2, b, nl);
            for (int l = 0; l < nl; l++) {
                int eq = 1;
                for (int k = 0; k < ROLE_COUNT; k++)
                    eq &= a[l]->ds[k].d.scale == b[l]->ds[k].d.scale && a[l]->ds[k].d.len == b[l]->ds[k].d.len &&
                          !memcmp(a[l]->ds[k].d.history, b[l]->ds[k].d.history, (size_t)a[l]->ds[k].d.len * sizeof(float));
                same += eq;
            }
            free(a); free(b);
        }
        ok(!saved && !loaded && nl == 257 && same == nl, "deep-mlp depth 256: %d Linear layers, %d with their scaling state "
           "restored from a checkpoint", nl, same);
        free(buf);
        if (r2) trn_close(r2);
        trn_close(r);
    }
    {
        /* MS-AMP casts each GEMM operand once and keeps the fp8 tensor for
         * the backward: the engine's recomputation of a cast reuses the
         * scale the cast used. With an inf in the output gradient the cast's
         * scale is 1/previous (compute_scaling_factor); a second
         * computation would invert it back */
        const char *kv[] = {"hidden", "16", NULL};
        trn_run *r = open_run("mlp-digits", "msamp-o1", kv, seed, NULL);
        lin_state *ls[8];
        trn__model_linears(r, ls, 8);
        lin_state *L = ls[0];
        const int BT = 4;
        double *in = calloc((size_t)BT * L->in, sizeof *in), *out = calloc((size_t)BT * L->out, sizeof *out);
        double *dout = calloc((size_t)BT * L->out, sizeof *dout), *dinp = calloc((size_t)BT * L->in, sizeof *dinp);
        for (int i = 0; i < BT * L->in; i++) in[i] = (double)((i % 13) - 6) / 8;
        for (int i = 0; i < BT * L->out; i++) dout[i] = (double)((i % 11) - 5) / 16;
        dout[3] = INFINITY;
        trn__linear_fwd(r, L, out, in, r->f_lo, BT, r->f_lo);
        L->ds[ROLE_DY].d.scale = 4;
        trn__linear_bwd(r, L, dinp, r->f_lo, dout, in, BT, r->f_lo);
        ok(L->ds[ROLE_DY].d.scale == 0.25f, "msamp-o1: an inf in grad_output gives its cast scale 1/previous (4 -> %g), which the "
           "weight-gradient GEMM's recomputation reuses", (double)L->ds[ROLE_DY].d.scale);
        free(in); free(out); free(dout); free(dinp);
        trn_close(r);
    }
    for (int pi = 0; pi < 3; pi++) {
        /* torchao's scales with an inf or a NaN in a Linear's input:
         * tensorwise (fp8-current) 448 / inf = 0 turns every output NaN;
         * rowwise only the rows holding them (row 1 an inf, row 2 a NaN).
         * With scale 1 (TE's rule) the inf saturated to 448 and its rows
         * came out finite. fp8-blockwise (DeepGEMM's 1x128 tiles): as
         * rowwise here (K = 64, one tile per row). */
        const char *pol = pi == 2 ? "fp8-blockwise" : pi ? "fp8-rowwise" : "fp8-current";
        const char *kv[] = {"hidden", "16", NULL};
        trn_run *r = open_run("mlp-digits", pol, kv, seed, NULL);
        int good = linear_nonfinite_rows(r, pi != 0, pi ? 0x6 : 0xF);
        ok(good == 4, "%s: an inf%s in a Linear's input gives NaN outputs as %s (%s): %d of 4 rows as expected", pol,
           pi ? " and a NaN" : "", pi == 2 ? "DeepGEMM" : "torchao", pi ? "their rows" : "all of them", good);
        trn_close(r);
    }
    for (int native = 0; native < 2; native++) {
        /* MX (OCP 1.0): a block whose amax is inf or NaN takes the NaN
         * scale (e8m0 0xFF), under which all its values are NaN. Both MX
         * paths: the scales inside the MMA (the library's GEMM) and the
         * engine's own blocks (taken when the MMA has no MX; every model
         * with e4m3 has it today, so the test forces that path). Row 1
         * holds an inf, row 2 a NaN: their outputs are NaN (with scale 1,
         * the inf saturated to 448 and row 1 came out finite); rows 0 and 3
         * stay finite; the telemetry reports the NaN scale. */
        const char *kv[] = {"hidden", "16", NULL};
        trn_run *r = open_run("mlp-digits", "mxfp8", kv, seed, NULL);
        int had_native = r->mx_native;
        r->mx_native = native;
        r->tel_on = 1;
        int good = linear_nonfinite_rows(r, 1, 0x6);
        ok(had_native && good == 4, "mxfp8 (%s): the rows with an inf or a NaN give NaN outputs, the others finite: %d of 4 rows",
           native ? "scales in the MMA" : "engine-side blocks", good);
        lin_state *ls[8];
        trn__model_linears(r, ls, 8);
        lin_state *L = ls[0];
        int nan_scale = 0;
        for (int k = 0; k < TEL_FMTS; k++) {
            const tel_slot *t = &r->tel[(size_t)L->layer * TEL_PER_LAYER + (size_t)CLS_ACT * TEL_FMTS + k];
            nan_scale += t->st.n && t->fmt == r->f8_fwd && isnan(t->scale_min);
        }
        ok(nan_scale == 1, "mxfp8 (%s): the activation's telemetry reports the NaN scale",
           native ? "scales in the MMA" : "engine-side blocks");
        trn_close(r);
    }
    for (int mode = 0; mode < 4; mode++) {
        /* AdamW with low-precision states, one step of fc1's weight from
         * chosen values (lr 0.01, weight_decay 1: the decay moves bf16
         * weights; every 7th v zero and others tiny, so eps matters),
         * written out here against trn__optim_step.
         * mode 0, bf16-true: PyTorch's AdamW rounds every tensor op to
         * bf16: param.mul_(1 - lr wd); m.lerp_(g, 1 - beta1);
         * v.mul_(beta2).addcmul_(g, g, 1 - beta2); denom = (v.sqrt() /
         * bc2_sqrt).add_(eps) with eps an f32 scalar; param.addcdiv_(m,
         * denom, -lr / bc1).
         * modes 1-3, the new moments stored rounded and the update from
         * them unrounded: 1, fp8-blockwise (f32 weights, bf16 moments); 2,
         * bf16-true-sr as torchao (the f32 weight rounded stochastically to
         * one of its bf16 neighbours); 3, msamp-o2 as LBAdamW (m an e4m3 and
         * v an f16 ScalingTensor, the weight an f16 one). */
        static const char *const pols[4] = {"bf16-true", "fp8-blockwise", "bf16-true-sr", "msamp-o2"};
        static const char *const how[4] = {"PyTorch's per-op bf16 roundings", "torchao's bf16-state AdamW",
                                           "torchao's bf16-state AdamW with a stochastic weight", "MS-AMP's LBAdamW (O2)"};
        trn_settings s;
        const char *kv[] = {"hidden", "16", "lr", "0.01", "weight_decay", "1", "eps", "1e-4", NULL};
        trn_run *r = open_run("mlp-digits", pols[mode], kv, seed, &s);
        size_t off, n;
        int layer;
        trn__model_param(r, 0, &off, &n, &layer);
        double *w = malloc(n * sizeof *w), *m = malloc(n * sizeof *m), *v = malloc(n * sizeof *v), *g = malloc(n * sizeof *g);
        double *hm = malloc(n * sizeof *hm), *hv = malloc(n * sizeof *hv), *wf = malloc(n * sizeof *wf);
        uint64_t z = seed ^ 0xADA3;
        for (size_t i = 0; i < n; i++) {
            double u[4];
            for (int k = 0; k < 4; k++) u[k] = (double)(fpemu_random64(z, 4 * i + k) >> 11) * 0x1p-53;
            w[i] = mode == 1 ? (double)(float)(u[0] - 0.5) : bf16r(u[0] - 0.5);
            g[i] = bf16r((u[1] - 0.5) * ldexp(1, -(int)(i % 12)));
            m[i] = bf16r((u[2] - 0.5) * 1e-2);
            v[i] = i % 7 == 0 ? 0 : bf16r(u[3] * ldexp(1, -(int)(i % 30)));
        }
        memcpy(r->params + off, w, n * sizeof *w); memcpy(r->grads + off, g, n * sizeof *g);
        memcpy(r->opt_m + off, m, n * sizeof *m); memcpy(r->opt_v + off, v, n * sizeof *v);
        r->opt_step = 4; /* this step is t = 5 */
        trn__optim_step(r);
        double lr = 0.01, wd = 1, b1 = s.beta1, b2 = s.beta2, bc1 = 1 - pow(b1, 5), bc2s = sqrt(1 - pow(b2, 5));
        double eps = (float)1e-4;
        for (size_t i = 0; i < n; i++) {
            hm[i] = m[i] + (g[i] - m[i]) * (1 - b1);
            hv[i] = v[i] * b2 + (1 - b2) * g[i] * g[i];
            wf[i] = w[i] * (1 - lr * wd) - lr / bc1 * hm[i] / (sqrt(hv[i]) / bc2s + 1e-4);
        }
        double *ms = malloc(n * sizeof *ms), *vs = malloc(n * sizeof *vs), *ws = malloc(n * sizeof *ws);
        if (mode == 3) {
            memcpy(ms, hm, n * sizeof *ms); memcpy(vs, hv, n * sizeof *vs); memcpy(ws, wf, n * sizeof *ws);
            msamp_cast(fpemu_format_get("e4m3", NULL, 0), ms, n);
            msamp_cast(fpemu_format_get("f16", NULL, 0), vs, n);
            msamp_cast(fpemu_format_get("f16", NULL, 0), ws, n);
        }
        size_t bad = n, changed = 0;
        for (size_t i = 0; i < n && bad == n; i++) {
            double wi, mi, vi;
            int wok;
            if (mode == 0) {
                wi = bf16r(w[i] * (1 - lr * wd));
                changed += wi != w[i];
                mi = bf16r(m[i] + (g[i] - m[i]) * (1 - b1));
                vi = bf16r(bf16r(v[i] * b2) + (1 - b2) * g[i] * g[i]);
                double d = bf16r(bf16r(bf16r(sqrt(vi)) / bc2s) + eps);
                wi = bf16r(wi - lr / bc1 * (mi / d));
                wok = wi == r->params[off + i];
            } else if (mode == 3) {
                mi = ms[i]; vi = vs[i];
                changed += mi != hm[i] || vi != hv[i];
                wok = ws[i] == r->params[off + i];
            } else {
                mi = bf16r(hm[i]); vi = bf16r(hv[i]);
                changed += mi != hm[i] || vi != hv[i];
                double f = (float)wf[i], got = r->params[off + i];
                if (mode == 1) wok = got == f;
                else wok = got == bf16r(got) && fabs(got - f) < ldexp(1, ilogb(f) - 7); /* a bf16 neighbour of f */
            }
            if (!wok || mi != r->opt_m[off + i] || vi != r->opt_v[off + i]) bad = i;
        }
        ok(bad == n && changed > n / 2, "%s AdamW (lr 0.01, weight_decay 1, t = 5): %zu weights and moments as %s%s (%zu of them %s)",
           pols[mode], n, how[mode], bad == n ? "" : " (not all)", changed,
           mode ? "with moments that their cast changed" : "moved by the decay alone");
        if (bad < n) diag("element %zu: w %.9g m %.9g v %.9g", bad, r->params[off + bad], r->opt_m[off + bad], r->opt_v[off + bad]);
        free(w); free(m); free(v); free(g); free(hm); free(hv); free(wf); free(ms); free(vs); free(ws);
        trn_close(r);
    }
    {
        /* fp8-blockwise keeps the output head (the MLP's last Linear, the
         * transformer's head) out of the recipe, in bf16 as autocast casts
         * it (DeepSeek-V3); fp8_head=1 sends it through e4m3 like the rest */
        const char *models[2][2] = {{"mlp-digits", "fc3"}, {"tiny-transformer", "head"}};
        for (int mi = 0; mi < 2; mi++) {
            const char *got[2], *first = "-";
            for (int fh = 0; fh < 2; fh++) {
                const char *kv[] = {"fp8_head", "1", NULL};
                trn_run *r = open_run(models[mi][0], "fp8-blockwise", fh ? kv : NULL, seed, NULL);
                trn_step_rec rec;
                trn_step(r, &rec, err, sizeof err);
                got[fh] = fmt_of(r, models[mi][1], "weight", "e4m3");
                if (!fh) first = fmt_of(r, mi ? "h0.qkv" : "fc1", "weight", "e4m3");
                trn_close(r);
            }
            ok(!strcmp(got[0], "bf16") && !strcmp(got[1], "e4m3") && !strcmp(first, "e4m3"),
               "fp8-blockwise %s: head %s weights cast to %s (fp8_head=1: %s), the first Linear's to %s", models[mi][0],
               models[mi][1], got[0], got[1], first);
        }
    }
    {
        /* fp8-blockwise's Linear forward is the library's blockwise GEMM
         * (emu/gemm.h, DeepGEMM's casts: amax clamped at 1e-4, encode
         * fl32(448 / amax), decode fl32(amax / 448), f32 promotion per
         * 128-block) bit for bit: an fc layer with K = 300 (two full 128
         * blocks and a partial one), tiles of very different magnitudes, one
         * below the 1e-4 clamp (its elements land on e4m3 subnormals) and one
         * all zero; the layer's bias set to zero */
        const char *kv[] = {"hidden", "300", NULL};
        trn_run *r = open_run("mlp-digits", "fp8-blockwise", kv, seed, NULL);
        lin_state *lins[8];
        int nl = trn__model_linears(r, lins, 8), li = 0;
        if (nl > 8) nl = 8;
        while (li < nl && lins[li]->in <= 256) li++;
        if (li == nl) bail("no Linear layer with K > 256");
        lin_state *L = lins[li];
        const int BT = 5, K = L->in, N = L->out;
        if (L->b_off != (size_t)-1) memset(r->params + L->b_off, 0, (size_t)N * sizeof(double));
        L->wq_valid = 0;
        double *in = malloc((size_t)BT * K * sizeof *in), *out = malloc((size_t)BT * N * sizeof *out);
        float *A = malloc((size_t)BT * K * sizeof *A), *W = malloc((size_t)N * K * sizeof *W), *D = malloc((size_t)BT * N * sizeof *D);
        uint64_t z = seed;
        for (int i = 0; i < BT * K; i++) {
            int row = i / K, blk = (i % K) / 128;
            double mag = row == 1 && blk == 0 ? 3e-9 : row == 2 && blk == 1 ? 0 : ldexp(1.0, (row * 7 + blk * 5) % 23 - 11);
            z = fpemu_random64(z, (uint64_t)i);
            double u = (double)(z >> 11) * 0x1p-53 * 2 - 1;
            A[i] = (float)(u * mag);
            fpemu_ctx c;
            fpemu_ctx_init(&c);
            fpemu_round_f32(fpemu_format_get("bf16", NULL, 0), &A[i], &A[i], 1, &c, NULL); /* bf16 activations */
            in[i] = A[i];
        }
        for (int i = 0; i < N * K; i++) W[i] = (float)r->params[L->w_off + (size_t)i];
        trn__linear_fwd(r, L, out, in, r->f_lo, BT, NULL);
        fpemu_gemm_config cfg;
        if (fpemu_gemm_config_init(&cfg, "h100", "e4m3", "e4m3", err, sizeof err) ||
            fpemu_gemm_config_set_scaling(&cfg, "blockwise", err, sizeof err))
            bail("%s", err);
        cfg.nthreads = 1;
        if (fpemu_gemm_f32(&cfg, BT, N, K, A, K, 0, W, K, 1, NULL, N, D, N, NULL)) bail("fpemu_gemm_f32 failed");
        int same = 0, bad = -1;
        for (int i = 0; i < BT * N; i++) {
            if ((double)D[i] == out[i]) same++;
            else if (bad < 0) bad = i;
        }
        ok(same == BT * N, "fp8-blockwise Linear (K = %d, N = %d) equals the library's blockwise GEMM: %d of %d outputs", K, N,
           same, BT * N);
        if (bad >= 0) diag("output %d: trainer %.9g, library %.9g", bad, out[bad], (double)D[bad]);
        free(in); free(out); free(A); free(W); free(D);
        trn_close(r);
    }
    return done_testing();
}
