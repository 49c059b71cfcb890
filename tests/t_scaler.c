/* SPDX-License-Identifier: MIT */
/* t_scaler.c: torch.amp.GradScaler's rules, exactly: a scripted run of
 * skips, halvings and doublings, first on the scaler alone, then through
 * the engine with inf gradients injected at chosen steps. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "train_internal.h"

int main(void) {
    uint64_t seed = tap_seed(5);
    /* growth_interval 3; inf at steps 4, 6, 7 (1-based) */
    static const int inf_at[13] = {0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0};
    static const double want_scale[13] = {65536, 65536, 65536, 131072, 65536, 65536, 32768,
                                          16384, 16384, 16384, 32768, 32768, 32768};
    trn_scaler sc;
    trn_scaler_init(&sc, 1, 1, 65536.0, 2.0, 0.5, 3);
    int bad = 0;
    for (int i = 0; i < 13; i++) {
        double s = sc.scale;
        int skip = trn_scaler_update(&sc, inf_at[i]);
        if (s != want_scale[i] || skip != inf_at[i]) {
            if (bad++ < 5) diag("step %d: scale %g skip %d, want %g %d", i + 1, s, skip, want_scale[i], inf_at[i]);
        }
    }
    ok(!bad && sc.scale == 65536.0f && sc.growth_tracker == 0, "scripted skips, halvings and doublings (13 steps)");

    trn_scaler_init(&sc, 1, 1, 65536.0, 2.0, 0.3, 2000);
    trn_scaler_update(&sc, 1);
    ok(sc.scale == (float)(65536.0 * 0.3), "backoff 0.3: scale = f32(f64(scale) * 0.3) = %.9g", (double)sc.scale);
    ok(trn_scaler_inv_scale(&sc) == (float)(1.0 / (double)(float)(65536.0 * 0.3)),
       "inv_scale is the f64 reciprocal rounded to f32");
    trn_scaler_init(&sc, 1, 1, 1.0, 2.0, 0.5, 2000);
    for (int i = 0; i < 3; i++) trn_scaler_update(&sc, 1);
    ok(sc.scale == 0.125f, "the scale may fall below 1 (1 -> 0.125 after three skips)");
    trn_scaler_init(&sc, 1, 1, (double)FLT_MAX, 2.0, 0.5, 1);
    trn_scaler_update(&sc, 0);
    ok(sc.scale == FLT_MAX && sc.growth_tracker == 0, "growth that would overflow f32 is not applied; the counter resets");
    trn_scaler_init(&sc, 1, 0, 1024.0, 2.0, 0.5, 1);
    int s1 = trn_scaler_update(&sc, 1), s2 = trn_scaler_update(&sc, 0);
    ok(s1 == 1 && s2 == 0 && sc.scale == 1024.0f, "static loss scale: constant, inf steps skipped");
    trn_scaler_init(&sc, 0, 1, 65536.0, 2.0, 0.5, 1);
    ok(sc.scale == 1.0f && trn_scaler_update(&sc, 1) == 0, "disabled scaler: scale 1, never skips");

    /* Through the engine: growth_interval=3, inf injected at 4, 6, 7; the
     * MS-AMP policies cast the gradients to fp8 (saturating) before the
     * check, which must still see the inf (MS-AMP checks the amax taken
     * before the cast) */
    const char *pols[] = {"16-mixed", "msamp-o1", "msamp-o2"};
    for (int pi = 0; pi < 3; pi++) {
        trn_settings s;
        char err[512];
        if (trn_settings_init(&s, "mlp-digits", pols[pi], err, sizeof err)) bail("%s", err);
        const char *kv[] = {"hidden", "16", "batch_size", "8", "growth_interval", "3", NULL};
        for (int i = 0; kv[i]; i += 2)
            if (trn_settings_set(&s, kv[i], kv[i + 1], err, sizeof err)) bail("%s", err);
        trn_run *r;
        if (trn_open(&r, &s, seed, err, sizeof err)) bail("%s", err);
        static const long inj[3] = {4, 6, 7};
        r->inject_inf = inj;
        r->ninject_inf = 3;
        bad = 0;
        int frozen = 1;
        double *before = malloc(r->nparams * sizeof *before);
        for (int i = 0; i < 13; i++) {
            trn_step_rec rec;
            memcpy(before, r->params, r->nparams * sizeof *before);
            trn_step(r, &rec, err, sizeof err);
            if (rec.loss_scale != want_scale[i] || rec.skipped != inf_at[i]) {
                if (bad++ < 5)
                    diag("%s step %d: scale %g skipped %d, want %g %d", pols[pi], i + 1, rec.loss_scale, rec.skipped,
                         want_scale[i], inf_at[i]);
            }
            int same = !memcmp(before, r->params, r->nparams * sizeof *before);
            if (rec.skipped && !same) frozen = 0;
            if (!rec.skipped && same) frozen = 0;
            if (rec.skipped && !isinf(rec.grad_norm)) bad++;
        }
        ok(!bad, "engine, %s: loss_scale and skipped columns follow the script exactly", pols[pi]);
        ok(frozen, "engine, %s: parameters unchanged on skipped steps, changed on the others", pols[pi]);
        free(before);
        trn_close(r);
    }
    return done_testing();
}
