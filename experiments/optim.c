/* optim.c: the optimisers with PyTorch's semantics (torch.optim.AdamW and
 * SGD, single-tensor form), the GradScaler's unscale, the MS-AMP fp8
 * gradient and moment casts. Each update is computed in f64 from the stored
 * values and rounded once to each state's format (round to nearest, or
 * stochastically for bf16-true-sr). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train_internal.h"

static float cur_scale(double amax, const fpemu_format *f) {
    if (!(amax > 0) || !isfinite(amax)) return 1.0f;
    float s = (float)(f->max_finite / amax);
    return isinf(s) ? FLT_MAX : s;
}

/* x (n values) -> fmt with a per-tensor current scale, back to the f64
 * (dequantised) values: a ScalingTensor of MS-AMP. Returns 1 if a value
 * was inf or NaN before the (saturating) cast. */
static int scaled_cast(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n) {
    double amax = 0;
    int nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) nonfinite = 1;
        else if (fabs(x[i]) > amax) amax = fabs(x[i]);
    }
    float s = cur_scale(amax, fmt);
    trn__round_scaled(r, layer, cls, fmt, x, n, s, 1, amax);
    float inv = 1.0f / s;
    for (size_t i = 0; i < n; i++) x[i] = (float)x[i] * inv;
    return nonfinite;
}

/* MS-AMP checks the gradients' amax, taken before the saturating fp8 cast,
 * for inf/NaN (msamp/common/utils: grad.meta.amax), so an infinite
 * gradient still skips the step although its cast is finite. */
int trn__grad_cast(trn_run *r) {
    if (!r->f_gw) return 0;
    int np = trn__model_param_count(r), nonfinite = 0;
    for (int p = 0; p < np; p++) {
        size_t off, n; int layer;
        trn__model_param(r, p, &off, &n, &layer);
        nonfinite |= scaled_cast(r, layer, CLS_GRAD_W, r->f_gw, r->grads + off, n);
    }
    return nonfinite;
}

int trn__unscale_check(trn_run *r, float inv, double *norm) {
    int found = 0;
    double ss = 0;
    for (size_t i = 0; i < r->nparams; i++) {
        double g = r->grads[i];
        if (inv != 1.0f) g = g * (double)inv;
        r->grads[i] = g;
        if (!isfinite(g)) found = 1;
        ss += g * g;
    }
    /* g * inv: one product, rounded to the gradients' format */
    int save = r->tel_on;
    r->tel_on = 0;
    if (inv != 1.0f) trn__round(r, -1, CLS_GRAD_W, r->f_param, r->grads, r->nparams);
    r->tel_on = save;
    *norm = found ? (double)INFINITY : sqrt(ss);
    if (found) {
        for (size_t i = 0; i < r->nparams; i++) if (isnan(r->grads[i])) { *norm = NAN; break; }
    }
    return found;
}

void trn__optim_step(trn_run *r) {
    const trn_settings *s = &r->cfg;
    long t = ++r->opt_step;
    int adam = !strcmp(s->optimizer, "adamw");
    double lr = s->lr, wd = s->weight_decay;
    double bc1 = 1.0 - pow(s->beta1, (double)t), bc2 = 1.0 - pow(s->beta2, (double)t);
    double step_size = lr / bc1, bc2_sqrt = sqrt(bc2);
    int np = trn__model_param_count(r);
    for (int p = 0; p < np; p++) {
        size_t off, n; int layer;
        trn__model_param(r, p, &off, &n, &layer);
        double *w = r->params + off, *g = r->grads + off, *m = r->opt_m + off, *v = r->opt_v + off;
        if (adam) {
            for (size_t i = 0; i < n; i++) m[i] = m[i] + (g[i] - m[i]) * (1.0 - s->beta1); /* lerp */
            if (r->pol->m_scaled) scaled_cast(r, layer, CLS_OPT_M, r->f_m, m, n);
            else trn__round(r, layer, CLS_OPT_M, r->f_m, m, n);
            for (size_t i = 0; i < n; i++) v[i] = v[i] * s->beta2 + (1.0 - s->beta2) * g[i] * g[i];
            if (r->pol->m_scaled) scaled_cast(r, layer, CLS_OPT_V, r->f_v, v, n);
            else trn__round(r, layer, CLS_OPT_V, r->f_v, v, n);
            if (trn__is_low(r->f_v) && !r->pol->m_scaled) {
                /* PyTorch's op order in the states' format: denom =
                 * (sqrt(v) / bc2_sqrt) + eps, each rounded; eps itself is
                 * rounded (1e-8 is 0 in f16: 0/0 gives NaN, as on a GPU) */
                double eps = s->eps, *d = r->opt_d;
                trn__round(r, -1, CLS_OPT_V, r->f_v, &eps, 1);
                for (size_t i = 0; i < n; i++) d[i] = sqrt(v[i]) / bc2_sqrt;
                trn__round(r, -1, CLS_OPT_V, r->f_v, d, n);
                for (size_t i = 0; i < n; i++) d[i] += eps;
                trn__round(r, -1, CLS_OPT_V, r->f_v, d, n);
                for (size_t i = 0; i < n; i++) w[i] = w[i] * (1.0 - lr * wd) - step_size * (m[i] / d[i]);
            } else {
                for (size_t i = 0; i < n; i++) {
                    double denom = sqrt(v[i]) / bc2_sqrt + s->eps;
                    w[i] = w[i] * (1.0 - lr * wd) - step_size * m[i] / denom;
                }
            }
        } else {
            for (size_t i = 0; i < n; i++) {
                double gi = g[i] + wd * w[i];
                if (s->momentum != 0) {
                    m[i] = t == 1 ? gi : s->momentum * m[i] + (1.0 - s->dampening) * gi;
                }
            }
            if (s->momentum != 0) trn__round(r, layer, CLS_OPT_M, r->f_m, m, n);
            for (size_t i = 0; i < n; i++) {
                double gi = g[i] + wd * w[i];
                if (s->momentum != 0) gi = s->nesterov ? gi + s->momentum * m[i] : m[i];
                w[i] = w[i] - lr * gi;
            }
        }
        if (r->pol->sr_update)
            trn__round_sr(r, layer, CLS_PARAM, r->f_param, w, n, (uint64_t)(t - 1) * r->nparams + off);
        else
            trn__round(r, layer, CLS_PARAM, r->f_param, w, n);
    }
}
