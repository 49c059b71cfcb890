/* SPDX-License-Identifier: MIT */
/* t_layers_grad.c: gradient checks in f64 (central finite differences) for
 * every layer of the training engine, then for whole models under 64-true
 * (Linear, attention, embedding, residual adds as the models use them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "train_internal.h"

static uint64_t g_seed;
static double rnd(uint64_t *c) { return (double)(fpemu_random64(g_seed, (*c)++) >> 11) * 0x1p-53 * 2 - 1; }

static double relerr(double a, double n) { return fabs(a - n) / fmax(fabs(a) + fabs(n), 1e-3); }

/* L = sum(out * R): checks d/d(inp) of a layer given as forward(out, inp). */
typedef void (*fwd_fn)(double *out, const double *inp, size_t n);
typedef void (*bwd_fn)(double *dinp, const double *dout, const double *inp, size_t n);

static double dot(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static void check_elementwise(const char *name, fwd_fn f, bwd_fn b) {
    enum { N = 64 };
    double x[N], R[N], out[N], dx[N];
    uint64_t c = 0;
    for (int i = 0; i < N; i++) { x[i] = 3 * rnd(&c); R[i] = rnd(&c); }
    b(dx, R, x, N);
    double worst = 0, h = 1e-6;
    for (int i = 0; i < N; i++) {
        if (fabs(x[i]) < 1e-3) continue; /* kink of ReLU */
        double s = x[i];
        x[i] = s + h; f(out, x, N); double lp = dot(out, R, N);
        x[i] = s - h; f(out, x, N); double lm = dot(out, R, N);
        x[i] = s;
        double e = relerr(dx[i], (lp - lm) / (2 * h));
        if (e > worst) worst = e;
    }
    ok(worst < 1e-6, "%s backward matches finite differences (max rel err %.2e)", name, worst);
}

/* ReLU on special values as torch.relu and its autograd: NaN stays NaN
 * (clamp_min propagates it) and passes its gradient through (the backward
 * zeroes only where the output is <= 0); -0 and -inf give 0, inf stays. */
static void check_relu_special(void) {
    enum { N = 6 };
    const double x[N] = {NAN, -NAN, INFINITY, -INFINITY, -0.0, 0x1p-1074};
    const double dout[N] = {3, 5, 7, 11, 13, 17};
    const double want_dx[N] = {3, 5, 7, 0, 0, 17};
    double out[N], dx[N];
    trn__relu_fwd(out, x, N);
    trn__relu_bwd(dx, dout, x, N);
    ok(isnan(out[0]) && isnan(out[1]), "relu(NaN) is NaN, as torch.relu (got %g, %g)", out[0], out[1]);
    ok(out[2] == INFINITY && out[3] == 0 && out[4] == 0 && out[5] == 0x1p-1074,
       "relu(inf) = inf, relu(-inf) = relu(-0) = 0, relu(min subnormal) = itself (got %g %g %g %g)", out[2], out[3],
       out[4], out[5]);
    int same = 1;
    for (int i = 0; i < N; i++) same &= dx[i] == want_dx[i];
    ok(same, "relu backward passes the gradient at NaN, inf and x > 0 and zeroes it at -inf and -0");
}

static void check_layernorm(void) {
    enum { N = 3, C = 8 };
    double x[N * C], w[C], bb[C], R[N * C], out[N * C], mean[N], rstd[N], dx[N * C], dw[C], db[C];
    uint64_t c = 100;
    for (int i = 0; i < N * C; i++) { x[i] = rnd(&c) * 2; R[i] = rnd(&c); }
    for (int i = 0; i < C; i++) { w[i] = 1 + rnd(&c) * 0.5; bb[i] = rnd(&c) * 0.1; }
    trn__layernorm_fwd(out, mean, rstd, x, w, bb, N, C);
    trn__layernorm_bwd(dx, dw, db, R, x, w, mean, rstd, N, C);
    double worst = 0, h = 1e-6;
    double *targets[3] = {x, w, bb}, *grads[3] = {dx, dw, db};
    int sizes[3] = {N * C, C, C};
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < sizes[t]; i++) {
            double s = targets[t][i];
            targets[t][i] = s + h; trn__layernorm_fwd(out, mean, rstd, x, w, bb, N, C); double lp = dot(out, R, N * C);
            targets[t][i] = s - h; trn__layernorm_fwd(out, mean, rstd, x, w, bb, N, C); double lm = dot(out, R, N * C);
            targets[t][i] = s;
            double e = relerr(grads[t][i], (lp - lm) / (2 * h));
            if (e > worst) worst = e;
        }
    ok(worst < 1e-6, "layernorm backward (input, weight, bias) matches finite differences (max rel err %.2e)", worst);
}

static void check_ce(void) {
    enum { N = 5, V = 7 };
    double l[N * V], p[N * V], dl[N * V];
    int tg[N] = {0, 3, -1, 6, 2}, cnt;
    uint64_t c = 200;
    for (int i = 0; i < N * V; i++) l[i] = rnd(&c) * 3;
    trn__softmax_ce_fwd(p, l, tg, N, V, &cnt);
    trn__softmax_ce_bwd(dl, p, tg, N, V, 1.0);
    double worst = 0, h = 1e-6;
    for (int i = 0; i < N * V; i++) {
        double s = l[i];
        l[i] = s + h; double lp = trn__softmax_ce_fwd(p, l, tg, N, V, &cnt);
        l[i] = s - h; double lm = trn__softmax_ce_fwd(p, l, tg, N, V, &cnt);
        l[i] = s;
        double e = fabs(dl[i] - (lp - lm) / (2 * h));
        if (e > worst) worst = e;
    }
    ok(worst < 1e-8 && cnt == 4, "softmax cross-entropy (with an ignored row) backward matches (max abs err %.2e)", worst);
}

static void check_causal_softmax(void) {
    enum { T = 5 };
    double s[T * T], a[T * T], R[T * T], ds[T * T];
    uint64_t c = 300;
    for (int i = 0; i < T * T; i++) { s[i] = rnd(&c) * 2; R[i] = rnd(&c); }
    trn__causal_softmax_fwd(a, s, T);
    trn__causal_softmax_bwd(ds, R, a, T);
    double worst = 0, h = 1e-6;
    int masked_zero = 1;
    for (int i = 0; i < T * T; i++) {
        double v = s[i];
        s[i] = v + h; trn__causal_softmax_fwd(a, s, T); double lp = dot(a, R, T * T);
        s[i] = v - h; trn__causal_softmax_fwd(a, s, T); double lm = dot(a, R, T * T);
        s[i] = v;
        double e = fabs(ds[i] - (lp - lm) / (2 * h));
        if (e > worst) worst = e;
        if (i % T > i / T && ds[i] != 0) masked_zero = 0;
    }
    ok(worst < 1e-8 && masked_zero, "causal softmax backward matches; masked positions get no gradient (max abs err %.2e)", worst);
}

static void check_embedding(void) {
    enum { B = 2, T = 3, C = 4, V = 5 };
    int tok[B * T] = {1, 4, 1, 0, 2, 4};
    double wte[V * C], wpe[T * C], out[B * T * C], R[B * T * C], dwte[V * C] = {0}, dwpe[T * C] = {0};
    uint64_t c = 400;
    for (int i = 0; i < V * C; i++) wte[i] = rnd(&c);
    for (int i = 0; i < T * C; i++) wpe[i] = rnd(&c);
    for (int i = 0; i < B * T * C; i++) R[i] = rnd(&c);
    trn__embedding_bwd(dwte, dwpe, R, tok, B, T, C);
    double worst = 0, h = 1e-6;
    double *ts[2] = {wte, wpe}, *gs[2] = {dwte, dwpe};
    int ns[2] = {V * C, T * C};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < ns[t]; i++) {
            double v = ts[t][i];
            ts[t][i] = v + h; trn__embedding_fwd(out, tok, wte, wpe, B, T, C); double lp = dot(out, R, B * T * C);
            ts[t][i] = v - h; trn__embedding_fwd(out, tok, wte, wpe, B, T, C); double lm = dot(out, R, B * T * C);
            ts[t][i] = v;
            double e = fabs(gs[t][i] - (lp - lm) / (2 * h));
            if (e > worst) worst = e;
        }
    ok(worst < 1e-8, "embedding (token + position) backward matches, repeated tokens accumulate (max abs err %.2e)", worst);
}

static void check_residual(void) {
    double a[3] = {1, 2, 3}, b[3] = {0.5, -2, 1e-3}, o[3];
    trn__residual_fwd(o, a, b, 3);
    ok(o[0] == 1.5 && o[1] == 0 && o[2] == 3.001, "residual add forward (its backward is the identity on both inputs)");
}

/* Whole model under 64-true: every parameter tensor, a few entries each. */
static void check_model(const char *model, const char *const *kv) {
    trn_settings s;
    char err[512];
    if (trn_settings_init(&s, model, "64-true", err, sizeof err)) bail("%s", err);
    for (int i = 0; kv[i]; i += 2)
        if (trn_settings_set(&s, kv[i], kv[i + 1], err, sizeof err)) bail("%s", err);
    trn_run *r;
    if (trn_open(&r, &s, g_seed, err, sizeof err)) bail("%s", err);
    double loss;
    trn__model_train_batch(r, 3, 1.0, &loss);
    double *g = malloc(r->nparams * sizeof *g);
    memcpy(g, r->grads, r->nparams * sizeof *g);
    int np = trn__model_param_count(r);
    for (int p = 0; p < np; p++) {
        size_t off, n; int layer;
        trn__model_param(r, p, &off, &n, &layer);
        double worst = 0, h = 1e-5;
        int checked = 0;
        for (int k = 0; k < 4; k++) {
            size_t i = off + (size_t)(fpemu_random64(g_seed, (uint64_t)(p * 16 + k)) % n);
            double v = r->params[i], lp, lm;
            r->params[i] = v + h; trn__model_step_end(r); trn__model_train_batch(r, 3, 1.0, &lp);
            r->params[i] = v - h; trn__model_step_end(r); trn__model_train_batch(r, 3, 1.0, &lm);
            r->params[i] = v; trn__model_step_end(r);
            double num = (lp - lm) / (2 * h);
            double e = fabs(g[i] - num) / fmax(fabs(g[i]) + fabs(num), 1e-6);
            if (e > worst) worst = e;
            checked++;
        }
        ok(worst < 2e-5, "%s: gradient of %s (tensor %d, %zu values, %d checked) matches (max rel err %.2e)", model,
           r->layer_names[layer], p, n, checked, worst);
    }
    free(g);
    trn_close(r);
}

int main(void) {
    g_seed = tap_seed(20240611);
    check_elementwise("relu", trn__relu_fwd, trn__relu_bwd);
    check_relu_special();
    check_elementwise("gelu", trn__gelu_fwd, trn__gelu_bwd);
    check_layernorm();
    check_ce();
    check_causal_softmax();
    check_embedding();
    check_residual();
    static const char *const mlp[] = {"hidden", "12", "depth", "2", "batch_size", "6", NULL};
    check_model("mlp-digits", mlp);
    static const char *const deep[] = {"hidden", "6", "depth", "5", "batch_size", "4", "input_scale", "0.1", NULL};
    check_model("deep-mlp", deep);
    static const char *const tf[] = {"d_model", "8", "heads", "2", "d_ff", "12", "seq_digits", "3", "batch_size", "3",
                                     "depth", "2", NULL};
    check_model("tiny-transformer", tf);
    return done_testing();
}
