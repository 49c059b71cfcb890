/* SPDX-License-Identifier: MIT */
/* scaler.c: torch.amp.GradScaler's update rule, exactly (torch/amp/grad_scaler.py;
 * aten/src/ATen/native/cuda/AmpKernels.cu, _amp_update_scale_cuda_kernel):
 * the scale is an f32; the products scale*backoff and scale*growth are
 * formed in f64 (the factors are doubles) and stored back as f32; growth
 * happens only if the new f32 scale is finite. A static scaler keeps its
 * scale but still skips steps with inf/NaN gradients (as Megatron's
 * ConstantGradScaler). */
#include <math.h>
#include "train_internal.h"

void trn_scaler_init(trn_scaler *sc, int enabled, int dynamic, double init_scale, double growth_factor,
                     double backoff_factor, long growth_interval) {
    sc->enabled = enabled;
    sc->dynamic = dynamic;
    sc->scale = enabled ? (float)init_scale : 1.0f;
    sc->growth_factor = growth_factor;
    sc->backoff_factor = backoff_factor;
    sc->growth_interval = growth_interval;
    sc->growth_tracker = 0;
}

float trn_scaler_inv_scale(const trn_scaler *sc) { return (float)(1.0 / (double)sc->scale); }

int trn_scaler_update(trn_scaler *sc, int found_inf) {
    if (!sc->enabled) return 0;
    if (!sc->dynamic) return found_inf;
    if (found_inf) {
        sc->scale = (float)((double)sc->scale * sc->backoff_factor);
        sc->growth_tracker = 0;
        return 1;
    }
    long successful = sc->growth_tracker + 1;
    if (successful == sc->growth_interval) {
        float ns = (float)((double)sc->scale * sc->growth_factor);
        if (isfinite(ns)) sc->scale = ns;
        sc->growth_tracker = 0;
    } else {
        sc->growth_tracker = successful;
    }
    return 0;
}
