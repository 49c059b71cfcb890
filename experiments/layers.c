/* SPDX-License-Identifier: MIT */
/* layers.c: the layers' arithmetic, as forward/backward pairs in the style
 * of llm.c (shapes in comments). Kernels compute in f64; the model code
 * rounds their results to each tensor's format (the policy), so a kernel is
 * "an op whose result is rounded once", like a fused GPU kernel. GEMMs are
 * not here: they go through gemm_policy.c. */
#include <math.h>
#include <string.h>
#include "train_internal.h"

/* ReLU as PyTorch's: a NaN input gives NaN (torch.relu is clamp_min(x, 0),
 * which propagates NaN), and its backward (threshold_backward on the
 * output) zeroes the gradient only where the output is <= 0, so a NaN
 * input passes its gradient through. `x <= 0` is false for NaN. */
void trn__relu_fwd(double *out, const double *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = inp[i] <= 0 ? 0.0 : inp[i];
}

void trn__relu_bwd(double *dinp, const double *dout, const double *inp, size_t n) {
    for (size_t i = 0; i < n; i++) dinp[i] = inp[i] <= 0 ? 0.0 : dout[i];
}

/* GELU, exact (erf) form: PyTorch's nn.GELU() default. */
void trn__gelu_fwd(double *out, const double *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = 0.5 * inp[i] * (1.0 + erf(inp[i] * M_SQRT1_2));
}

void trn__gelu_bwd(double *dinp, const double *dout, const double *inp, size_t n) {
    const double k = 0.3989422804014327; /* 1/sqrt(2 pi) */
    for (size_t i = 0; i < n; i++) {
        double x = inp[i];
        double cdf = 0.5 * (1.0 + erf(x * M_SQRT1_2));
        dinp[i] = dout[i] * (cdf + x * k * exp(-0.5 * x * x));
    }
}

/* inp, out: [N][C]; mean, rstd: [N]; w, b: [C]. eps = 1e-5 (PyTorch default). */
void trn__layernorm_fwd(double *out, double *mean, double *rstd, const double *inp, const double *w,
                        const double *b, int N, int C) {
    for (int i = 0; i < N; i++) {
        const double *x = inp + (size_t)i * C;
        double m = 0, v = 0;
        for (int c = 0; c < C; c++) m += x[c];
        m /= C;
        for (int c = 0; c < C; c++) v += (x[c] - m) * (x[c] - m);
        v /= C;
        double s = 1.0 / sqrt(v + 1e-5);
        for (int c = 0; c < C; c++) out[(size_t)i * C + c] = (x[c] - m) * s * w[c] + b[c];
        mean[i] = m; rstd[i] = s;
    }
}

/* dinp = (set), dw/db (set). */
void trn__layernorm_bwd(double *dinp, double *dw, double *db, const double *dout, const double *inp,
                        const double *w, const double *mean, const double *rstd, int N, int C) {
    memset(dw, 0, (size_t)C * sizeof *dw);
    memset(db, 0, (size_t)C * sizeof *db);
    for (int i = 0; i < N; i++) {
        const double *x = inp + (size_t)i * C, *dy = dout + (size_t)i * C;
        double m = mean[i], s = rstd[i];
        double dnorm_mean = 0, dnorm_norm_mean = 0;
        for (int c = 0; c < C; c++) {
            double norm = (x[c] - m) * s, dn = w[c] * dy[c];
            dnorm_mean += dn; dnorm_norm_mean += dn * norm;
        }
        dnorm_mean /= C; dnorm_norm_mean /= C;
        for (int c = 0; c < C; c++) {
            double norm = (x[c] - m) * s, dn = w[c] * dy[c];
            db[c] += dy[c];
            dw[c] += norm * dy[c];
            dinp[(size_t)i * C + c] = (dn - dnorm_mean - norm * dnorm_norm_mean) * s;
        }
    }
}

/* logits, probs: [N][V]; targets: [N], < 0 = ignored. Mean over counted rows. */
double trn__softmax_ce_fwd(double *probs, const double *logits, const int *targets, int N, int V, int *count) {
    double loss = 0;
    int cnt = 0;
    for (int i = 0; i < N; i++) {
        const double *l = logits + (size_t)i * V;
        double *p = probs + (size_t)i * V;
        double mx = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++) if (l[v] > mx) mx = l[v];
        for (int v = 0; v < V; v++) { p[v] = exp(l[v] - mx); sum += p[v]; }
        for (int v = 0; v < V; v++) p[v] /= sum;
        if (targets[i] >= 0) {
            /* log-softmax form: stays finite when a probability rounds to 0 */
            loss += -(l[targets[i]] - mx - log(sum));
            cnt++;
        }
    }
    *count = cnt;
    return cnt ? loss / cnt : 0.0;
}

/* dlogits = dloss * (probs - onehot) / count (set). */
void trn__softmax_ce_bwd(double *dlogits, const double *probs, const int *targets, int N, int V, double dloss) {
    int cnt = 0;
    for (int i = 0; i < N; i++) cnt += targets[i] >= 0;
    double k = cnt ? dloss / cnt : 0;
    for (int i = 0; i < N; i++)
        for (int v = 0; v < V; v++) {
            double g = 0;
            if (targets[i] >= 0) g = k * (probs[(size_t)i * V + v] - (v == targets[i] ? 1.0 : 0.0));
            dlogits[(size_t)i * V + v] = g;
        }
}

/* out[B][T][C] = wte[tok[b][t]] + wpe[t]. */
void trn__embedding_fwd(double *out, const int *tok, const double *wte, const double *wpe, int B, int T, int C) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            double *o = out + ((size_t)b * T + t) * C;
            const double *e = wte + (size_t)tok[b * T + t] * C, *p = wpe + (size_t)t * C;
            for (int c = 0; c < C; c++) o[c] = e[c] + p[c];
        }
}

/* dwte, dwpe accumulated (+=); the caller zeroes them. */
void trn__embedding_bwd(double *dwte, double *dwpe, const double *dout, const int *tok, int B, int T, int C) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const double *d = dout + ((size_t)b * T + t) * C;
            double *e = dwte + (size_t)tok[b * T + t] * C, *p = dwpe + (size_t)t * C;
            for (int c = 0; c < C; c++) { e[c] += d[c]; p[c] += d[c]; }
        }
}

void trn__residual_fwd(double *out, const double *a, const double *b, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* scores, att: [T][T]; row t attends to 0..t (the rest is 0). */
void trn__causal_softmax_fwd(double *att, const double *scores, int T) {
    for (int t = 0; t < T; t++) {
        const double *s = scores + (size_t)t * T;
        double *a = att + (size_t)t * T;
        double mx = -INFINITY, sum = 0;
        for (int u = 0; u <= t; u++) if (s[u] > mx) mx = s[u];
        for (int u = 0; u <= t; u++) { a[u] = exp(s[u] - mx); sum += a[u]; }
        for (int u = 0; u < T; u++) a[u] = u <= t ? a[u] / sum : 0.0;
    }
}

void trn__causal_softmax_bwd(double *dscores, const double *datt, const double *att, int T) {
    for (int t = 0; t < T; t++) {
        const double *a = att + (size_t)t * T, *da = datt + (size_t)t * T;
        double dot = 0;
        for (int u = 0; u <= t; u++) dot += a[u] * da[u];
        for (int u = 0; u < T; u++) dscores[(size_t)t * T + u] = u <= t ? a[u] * (da[u] - dot) : 0.0;
    }
}
