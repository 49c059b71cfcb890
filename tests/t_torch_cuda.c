/* SPDX-License-Identifier: MIT */
/* t_torch_cuda.c: CUDA's logf and expf as numerics=torch-cuda computes them
 * (experiments/torch_cuda.c, libdevice's __nv_logf / __nv_expf). CUDA
 * documents logf within 1 ulp and expf within 2 ulps of the exact result;
 * the transcription must keep both bounds, against MPFR, on every
 * 997th f32 of the domains the training ops use (logf: (0, inf); expf:
 * [-104, 0], the arguments of log_softmax's exp(x - max) and of its
 * backward's exp(log p)) and at the special values. A wrong coefficient or
 * range reduction moves results by far more than an ulp. */
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>
#include "tap.h"
#include "torch_cuda.h"

static float fb(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t ub(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
/* distance in f32 ulps between two finite floats of the same sign */
static long ulps(float a, float b) { long d = (long)ub(a) - (long)ub(b); return d < 0 ? -d : d; }

/* the exact function rounded to f32 (MPFR, round to nearest) */
static float exact(int isexp, float x) {
    mpfr_t m;
    mpfr_init2(m, 24);
    mpfr_set_emin(-148);
    mpfr_set_emax(128);
    mpfr_set_flt(m, x, MPFR_RNDN);
    int t = isexp ? mpfr_exp(m, m, MPFR_RNDN) : mpfr_log(m, m, MPFR_RNDN);
    t = mpfr_subnormalize(m, t, MPFR_RNDN);
    float r = mpfr_get_flt(m, MPFR_RNDN);
    mpfr_clear(m);
    return r;
}

int main(void) {
    long worst = 0, n = 0;
    float at = 0;
    for (uint32_t u = 1; u < 0x7F800000u; u += 997) {
        float x = fb(u), r = tc_logf(x), e = exact(0, x);
        long d = ulps(r, e);
        n++;
        if (d > worst) worst = d, at = x;
    }
    ok(worst <= 1, "logf: %ld positive floats within 1 ulp of MPFR (worst %ld at %a)", n, worst, (double)at);
    worst = 0, n = 0;
    for (uint32_t u = 0x80000000u; u <= ub(-104.0f); u += 997) {
        float x = fb(u), r = tc_expf(x), e = exact(1, x);
        long d = (e == 0 || r == 0) ? (r == e ? 0 : ulps(r, e)) : ulps(r, e);
        n++;
        if (d > worst) worst = d, at = x;
    }
    ok(worst <= 2, "expf: %ld floats in [-104, 0] within 2 ulps of MPFR (worst %ld at %a)", n, worst, (double)at);
    ok(tc_logf(1.0f) == 0.0f && tc_logf(0.0f) == -INFINITY && isinf(tc_logf(INFINITY)) && isnan(tc_logf(-1.0f)) &&
               isnan(tc_logf(NAN)),
           "logf(1) = 0, logf(0) = -inf, logf(inf) = inf, logf(-1) and logf(NaN) are NaN");
    ok(tc_expf(0.0f) == 1.0f && tc_expf(-INFINITY) == 0.0f && tc_expf(-104.0f) == 0.0f && isnan(tc_expf(NAN)),
           "expf(0) = 1, expf(-inf) = 0, expf(-104) = 0 (below the smallest subnormal), expf(NaN) is NaN");
    return done_testing();
}
