/* SPDX-License-Identifier: MIT */
/* optim.c: the optimisers with PyTorch's semantics (torch.optim.AdamW and
 * SGD, single-tensor form), the GradScaler's unscale, the MS-AMP fp8
 * gradient and moment casts. Each update is computed in f64 from the stored
 * values and rounded once to each state's format (round to nearest, or
 * stochastically for bf16-true-sr). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "scaling.h"
#include "train_internal.h"

/* x (n values) -> fmt with MS-AMP's per-tensor power-of-two scale, back to
 * the f64 (dequantised, exact) values: a ScalingTensor cast and its
 * float(). Returns 1 if a value was inf or NaN before the (saturating) cast.
 * The scale comes from the finite values' amax (MS-AMP's would be 1/previous
 * for an inf, the previous one for a NaN), and the previous scale is taken
 * as 1: a tensor with an inf or NaN occurs only on a step the scaler skips,
 * and an all-zero one casts to zeros whatever its scale. */
static int scaled_cast(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n) {
    double amax = 0;
    int nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) nonfinite = 1;
        else if (fabs(x[i]) > amax) amax = fabs(x[i]);
    }
    float s = fpemu_scaling_msamp_scale((float)amax, fmt->max_finite, 1.0f);
    trn__round_scaled(r, layer, cls, fmt, x, n, s, 1, amax);
    float inv = 1.0f / s;
    for (size_t i = 0; i < n; i++) x[i] = (float)x[i] * inv;
    return nonfinite;
}

/* MS-AMP casts each Linear weight's gradient to e4m3 with its own scale
 * (msamp/nn/functional.py: wgrad.cast(kfloat8_e4m3)); other gradients stay
 * as computed. It checks the amax, taken before the saturating cast, for
 * inf/NaN (msamp/common/utils/amp.py: grad.meta.amax), so an infinite
 * gradient still skips the step although its cast is finite. */
int trn__grad_cast(trn_run *r) {
    if (!r->f_gw) return 0;
    int np = trn__model_param_count(r), nonfinite = 0;
    for (int p = 0; p < np; p++) {
        size_t off, n; int layer;
        trn__model_param(r, p, &off, &n, &layer);
        if (trn__model_param_is_linear_weight(r, p)) nonfinite |= scaled_cast(r, layer, CLS_GRAD_W, r->f_gw, r->grads + off, n);
        else
            for (size_t i = 0; i < n; i++) nonfinite |= !isfinite(r->grads[off + i]);
    }
    return nonfinite;
}

void trn__param_round(trn_run *r, int p) {
    size_t off, n; int layer;
    trn__model_param(r, p, &off, &n, &layer);
    double *w = r->params + off;
    if (r->pol->msamp && trn__model_param_is_linear_weight(r, p)) scaled_cast(r, layer, CLS_PARAM, r->f_param, w, n);
    else trn__round(r, layer, CLS_PARAM, r->f_param, w, n);
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
    /* g * inv: one product, rounded to the gradients' format; MS-AMP's
     * fp8 gradients are ScalingTensors, unscaled in f32 by their scale_inv
     * (msamp/common/utils/amp.py: grad.mul_(inv_scale)) */
    int save = r->tel_on;
    r->tel_on = 0;
    if (inv != 1.0f)
        for (int p = 0, np = trn__model_param_count(r); p < np; p++) {
            size_t off, n; int layer;
            trn__model_param(r, p, &off, &n, &layer);
            int fp8 = r->f_gw && trn__model_param_is_linear_weight(r, p); /* trn__grad_cast cast it */
            trn__round(r, -1, CLS_GRAD_W, fp8 ? r->f_f32 : r->f_param, r->grads + off, n);
        }
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
            /* Three ways to keep low-precision states:
             * - per_op: parameters and states in one low-precision format
             *   (bf16-true, 16-true, transformer-engine): PyTorch's AdamW
             *   rounds each tensor op to its tensor's format:
             *   param.mul_(1 - lr*wd), m.lerp_(g, 1-beta1), v.mul_(beta2)
             *   then .addcmul_(g, g, 1-beta2), denom = sqrt(v), / bc2_sqrt
             *   (foreach's true division, the CUDA default), + eps (a
             *   Python scalar: fl32(eps), not rounded to the state format;
             *   0 + 1e-8 is still 0 in f16, so 0/0 gives NaN as on a GPU),
             *   then param.addcdiv_. Each op computed in f64 (PyTorch: f32
             *   opmath).
             * - hp_copy: low-precision states with a wider computation
             *   (torchao's AdamW with bf16 states, bf16-true-sr; MS-AMP's
             *   LBAdamW, msamp-o2; fp8-blockwise's bf16 moments under f32
             *   master weights): the new moments are computed from the
             *   stored ones, stored rounded (or as scaled tensors), and the
             *   update uses the unrounded values ("keep high precision
             *   copy for param update").
             * - otherwise (f32 states): one f64 computation, each state
             *   rounded once, the update from the stored values. */
            int lowm = trn__is_low(r->f_m), lowv = trn__is_low(r->f_v);
            int per_op = lowv && r->f_v == r->f_param && r->f_m == r->f_param && !r->pol->m_scaled && !r->pol->sr_update;
            int hp_copy = !per_op && (lowm || lowv);
            double *hm = r->opt_d + off, *hv = r->opt_d + r->nparams + off; /* hp_copy's unrounded moments */
            if (per_op && wd != 0) {
                for (size_t i = 0; i < n; i++) w[i] *= 1.0 - lr * wd;
                trn__round(r, -1, CLS_PARAM, r->f_param, w, n);
            }
            for (size_t i = 0; i < n; i++) m[i] = m[i] + (g[i] - m[i]) * (1.0 - s->beta1); /* lerp */
            if (hp_copy) memcpy(hm, m, n * sizeof *m);
            if (r->pol->m_scaled) scaled_cast(r, layer, CLS_OPT_M, r->f_m, m, n);
            else trn__round(r, layer, CLS_OPT_M, r->f_m, m, n);
            if (per_op) {
                for (size_t i = 0; i < n; i++) v[i] *= s->beta2;
                trn__round(r, -1, CLS_OPT_V, r->f_v, v, n);
                for (size_t i = 0; i < n; i++) v[i] += (1.0 - s->beta2) * g[i] * g[i];
            } else {
                for (size_t i = 0; i < n; i++) v[i] = v[i] * s->beta2 + (1.0 - s->beta2) * g[i] * g[i];
            }
            if (hp_copy) memcpy(hv, v, n * sizeof *v);
            if (r->pol->m_scaled) scaled_cast(r, layer, CLS_OPT_V, r->f_v, v, n);
            else trn__round(r, layer, CLS_OPT_V, r->f_v, v, n);
            if (per_op) {
                double eps = (float)s->eps, *d = hm; /* hm is free here: a scratch */
                for (size_t i = 0; i < n; i++) d[i] = sqrt(v[i]);
                trn__round(r, -1, CLS_OPT_V, r->f_v, d, n);
                for (size_t i = 0; i < n; i++) d[i] /= bc2_sqrt;
                trn__round(r, -1, CLS_OPT_V, r->f_v, d, n);
                for (size_t i = 0; i < n; i++) d[i] += eps;
                trn__round(r, -1, CLS_OPT_V, r->f_v, d, n);
                for (size_t i = 0; i < n; i++) w[i] -= step_size * (m[i] / d[i]);
            } else {
                const double *um = hp_copy ? hm : m, *uv = hp_copy ? hv : v;
                for (size_t i = 0; i < n; i++) {
                    double denom = sqrt(uv[i]) / bc2_sqrt + s->eps;
                    w[i] = w[i] * (1.0 - lr * wd) - step_size * um[i] / denom;
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
            trn__param_round(r, p);
    }
}
