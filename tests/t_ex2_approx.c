/* SPDX-License-Identifier: MIT */
/* t_ex2_approx.c: numerics=torch-cuda's model of ex2.approx.ftz.f32
 * (tc_ex2_approx, experiments/torch_cuda.c) against what an H200 returned
 * (tests/data/ex2-approx/ex2-approx.npz, its README): every one of the
 * 2^24 + 1 grid results x = k / 2^23 in [-1, 1] and every one of the 2^18
 * sample results (inputs just off the grid, and small inputs of exponent
 * -40 .. 0, either sign), bit for bit. That the recording is the one meant:
 * the packer's count of grid results equal to 2^x rounded to nearest. And
 * what the model does beyond the recording (|x| >= 2, inf, NaN). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "npy.h"
#include "npz.h"
#include "tap.h"
#include "torch_cuda.h"

#define GRID_N ((1L << 24) + 1)
#define SAMPLE_N (1L << 18)

static float fb(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t ub(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* member NAME of z parsed into a (1-d, n elements of dtype t), or a failed test */
static int member(const npz_file *z, const char *path, const char *name, npy_dtype t, size_t n, npy_array *a) {
    char err[512], want[64];
    snprintf(want, sizeof want, "%s.npy", name);
    for (int i = 0; i < z->count; i++) {
        if (strcmp(z->m[i].name, want)) continue;
        if (npy_parse(z->m[i].data, z->m[i].n, want, a, err, sizeof err)) {
            ok(0, "%s: %s", path, err);
            return -1;
        }
        if (a->dtype != t || a->ndim != 1 || a->n != n) {
            ok(0, "%s: %s: dtype '%s', %zu elements, expected 1-d '%s' of %zu", path, want, npy_dtype_name(a->dtype), a->n,
                 npy_dtype_name(t), n);
            npy_free(a);
            return -1;
        }
        return 0;
    }
    ok(0, "%s: no member %s", path, want);
    return -1;
}

int main(void) {
    const char *root = getenv("FPEMU_ROOT");
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/tests/data/ex2-approx/ex2-approx.npz", root ? root : ".");
    npz_file z;
    if (npz_read(path, &z, err, sizeof err)) {
        ok(0, "read the recording: %s", err);
        return done_testing();
    }
    npy_array first, diff, sin_, sout;
    if (member(&z, path, "grid_first", NPY_U4, 1, &first) || member(&z, path, "grid_diff", NPY_I1, GRID_N - 1, &diff) ||
        member(&z, path, "sample_in", NPY_U4, SAMPLE_N, &sin_) || member(&z, path, "sample_out", NPY_U4, SAMPLE_N, &sout)) {
        npz_free(&z);
        return done_testing();
    }
    npz_free(&z);

    /* the grid: result bits restored from the first and the differences */
    long bad = 0, rn = 0, neg_bad = 0;
    uint32_t want = (uint32_t)npy_code(&first, 0, 0);
    for (long i = 0; i < GRID_N; i++) {
        if (i) want += (uint32_t)npy_int(&diff, 0, (size_t)i - 1);
        float x = (float)(i - (1L << 23)) * 0x1p-23f;
        uint32_t got = ub(tc_ex2_approx(x));
        if (got != want) {
            if (bad < 5) diag("grid x = %a (k = %ld): model 0x%08x, recorded 0x%08x", (double)x, i - (1L << 23), got, want);
            bad++;
            neg_bad += x < 0;
        }
        rn += ub((float)exp2((double)x)) == want;
    }
    ok(rn == 8468811, "the recording: %ld of %ld grid results equal 2^x rounded to nearest (its packer: 8468811)", rn, GRID_N);
    ok(bad == 0, "grid: the model gives the recorded bits at all %ld points x = k / 2^23 in [-1, 1] (%ld differ, %ld of them x < 0)",
       GRID_N, bad, neg_bad);

    long sbad = 0, small = 0;
    for (long i = 0; i < SAMPLE_N; i++) {
        uint32_t xin = (uint32_t)npy_code(&sin_, 0, (size_t)i), w = (uint32_t)npy_code(&sout, 0, (size_t)i);
        uint32_t got = ub(tc_ex2_approx(fb(xin)));
        small += fabsf(fb(xin)) < 0x1p-23f;
        if (got != w) {
            if (sbad < 5) diag("sample %ld: x = %a (0x%08x): model 0x%08x, recorded 0x%08x", i, (double)fb(xin), xin, got, w);
            sbad++;
        }
    }
    ok(sbad == 0, "sample: the model gives the recorded bits for all %ld inputs off the grid or small (%ld below 2^-23; %ld differ)",
       SAMPLE_N, small, sbad);
    ok(ub(tc_ex2_approx(0x1p-30f)) == 0x3F800000u && ub(tc_ex2_approx(-0x1p-30f)) == 0x3F800000u &&
           ub(tc_ex2_approx(0.5f + 0x1p-25f)) == ub(tc_ex2_approx(0.5f)) &&
           ub(tc_ex2_approx(-0.5f - 0x1p-25f)) == ub(tc_ex2_approx(-0.5f)),
       "the bits below 2^-23 are dropped: 2^(+-2^-30) = 1, and 0.5 + 2^-25 gives 2^0.5's result, either sign");
    /* beyond the recording (|x| >= 2): the integer part goes to the exponent */
    int badint = 0;
    for (int k = -126; k <= 127; k++)
        if (tc_ex2_approx((float)k) != ldexpf(1.0f, k) && badint++ < 3) diag("2^%d: model %a", k, (double)tc_ex2_approx((float)k));
    ok(!badint && tc_ex2_approx(-127.0f) == 0.0f && isinf(tc_ex2_approx(128.0f)) && isinf(tc_ex2_approx(INFINITY)) &&
           tc_ex2_approx(-INFINITY) == 0.0f && isnan(tc_ex2_approx(NAN)) &&
           ub(tc_ex2_approx(5.25f)) == ub(tc_ex2_approx(0.25f)) + (5u << 23),
       "unrecorded |x| >= 2: 2^k exact for integers -126..127, 2^-127 flushed to 0, 2^128 and 2^inf inf, 2^-inf 0, NaN; "
       "2^5.25 = 2^5 * 2^0.25's result");
    npy_free(&first);
    npy_free(&diff);
    npy_free(&sin_);
    npy_free(&sout);
    return done_testing();
}
