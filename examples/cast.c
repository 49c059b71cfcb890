/* SPDX-License-Identifier: MIT */
/* cast.c: what casting a tensor to e4m3 does to it, with libfpemu.
 *
 * The tensor: 100,000 values spread evenly over the binades 2^-20 .. 2^2 in
 * magnitude, as a gradient's often are (made with exact float arithmetic
 * from the library's counter-based generator, so every machine gets the
 * same bits). It is cast to e4m3 as it is, to e4m3 after scaling by
 * 448 / amax (per-tensor current scaling, as TransformerEngine and torchao
 * do), and to e5m2 as it is. For each: the counts that fpemu_round_f32
 * keeps (fpemu_cast_stats) and the RMS relative error of the values that
 * neither overflow nor flush to zero.
 *
 *   cc -O2 -ffp-contract=off -o cast examples/cast.c $(pkg-config --cflags --libs fpemu) -lm && ./cast
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <fpemu.h>

enum { N = 100000 };

static void cast_and_report(const char *how, const fpemu_format *f, const float *x, float scale) {
    static float xs[N], y[N];
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    for (int i = 0; i < N; i++) xs[i] = x[i] * scale;
    fpemu_cast_stats st = {0};
    fpemu_round_f32(f, y, xs, N, &ctx, &st);
    double se = 0;
    long kept = 0;
    for (int i = 0; i < N; i++) {
        if (!isfinite(y[i]) || y[i] == 0) continue;
        double r = ((double)y[i] - xs[i]) / xs[i];
        se += r * r;
        kept++;
    }
    printf("%-22s overflow %5.2f%%  zero %5.2f%%  subnormal %5.2f%%  rms rel err %.4f\n",
           how, 100.0 * (double)st.overflow / N, 100.0 * (double)st.underflow / N,
           100.0 * (double)st.subnormal / N, kept ? sqrt(se / (double)kept) : 0.0);
}

int main(void) {
    char err[200];
    const fpemu_format *e4m3 = fpemu_format_get("float8_e4m3fn", err, sizeof err);
    const fpemu_format *e5m2 = e4m3 ? fpemu_format_get("float8_e5m2", err, sizeof err) : NULL;
    if (!e5m2) { fprintf(stderr, "cast: %s\n", err); return 1; }
    static float x[N];
    float amax = 0;
    for (int i = 0; i < N; i++) { /* sign, binade -20..1 and significand from the counter-based generator */
        uint64_t r = fpemu_random64(42, (uint64_t)i);
        float m = 1.0f + (float)(r >> 41) * 0x1p-23f;
        x[i] = ldexpf(r & 1 ? -m : m, (int)((r >> 1) % 22) - 20);
        if (fabsf(x[i]) > amax) amax = fabsf(x[i]);
    }
    printf("%d values, amax %g (zero: became zero; rms rel err: of the values that stay nonzero and finite)\n",
           N, amax);
    cast_and_report("e4m3", e4m3, x, 1.0f);
    cast_and_report("e4m3, scaled 448/amax", e4m3, x, 448.0f / amax);
    cast_and_report("e5m2", e5m2, x, 1.0f);
    return 0;
}
