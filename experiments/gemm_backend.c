/* SPDX-License-Identifier: MIT */
/* gemm_backend.c: the low-precision GEMMs behind the engine: emu's GEMM
 * (emu/gemm.h, fpemu_gemm_f32) with the tensor-core model of the preset `mma`
 * bound to the input formats (c = d = f32). The engine has already cast or
 * quantised the operands (with its telemetry), so trn__gemm_lowp uses
 * scaling NONE with inputs_prerounded: the GEMM takes the values exactly
 * and runs the MMA model (blocks, alignment, rounding, chaining) on them;
 * trn__gemm_lowp_scaled adds the recipes' dequantisation and promotion
 * (emu/recipe.h emu__gemm_scaled), trn__gemm_lowp_mx MX scaling inside the
 * MMA. Configurations are bound once per (preset, formats) and cached. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gemm_backend.h"
#include "gemm.h"
#include "recipe.h"

typedef struct { char name[32]; const fpemu_format *fa, *fb; fpemu_gemm_config cfg; int ok; } cfg_slot;
static cfg_slot g_cfgs[48];
static int g_ncfgs;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static const fpemu_gemm_config *get_cfg(const char *name, const fpemu_format *fa, const fpemu_format *fb) {
    const fpemu_gemm_config *res = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_ncfgs; i++)
        if (g_cfgs[i].fa == fa && g_cfgs[i].fb == fb && !strcmp(g_cfgs[i].name, name)) {
            res = g_cfgs[i].ok ? &g_cfgs[i].cfg : NULL;
            pthread_mutex_unlock(&g_lock);
            return res;
        }
    if (g_ncfgs < 48) {
        cfg_slot *s = &g_cfgs[g_ncfgs++];
        snprintf(s->name, sizeof s->name, "%s", name);
        s->fa = fa; s->fb = fb;
        char err[256];
        s->ok = fpemu_gemm_config_init(&s->cfg, name, fa->name, fb->name, err, sizeof err) == 0;
        if (s->ok) {
            s->cfg.inputs_prerounded = 1;
            s->cfg.nthreads = 1; /* the engine splits rows across its own threads */
        }
        res = s->ok ? &s->cfg : NULL;
    }
    pthread_mutex_unlock(&g_lock);
    return res;
}

int trn__gemm_lowp(const char *mma, const fpemu_format *fa, const fpemu_format *fb, int M, int N, int K,
                   const float *A, const float *B, float *D) {
    const fpemu_gemm_config *cfg = get_cfg(mma, fa, fb);
    if (!cfg) return -1; /* trn_open checked the pairs a policy uses */
    return fpemu_gemm_f32(cfg, M, N, K, A, K, 0, B, K, 1, NULL, N, D, N, NULL);
}

int trn__gemm_lowp_mx(const char *mma, int rceil, const fpemu_format *fa, const fpemu_format *fb, int M, int N,
                      int K, const float *A, const float *B, float *D, fpemu_cast_stats *sa, fpemu_cast_stats *sb) {
    const fpemu_gemm_config *base = get_cfg(mma, fa, fb);
    if (!base) return -1;
    fpemu_gemm_config cfg = *base;
    char err[256];
    cfg.inputs_prerounded = 0;
    if (fpemu_gemm_config_set_scaling(&cfg, rceil ? "mx-rceil" : "mx-floor", err, sizeof err)) return -1;
    fpemu_gemm_stats st;
    memset(&st, 0, sizeof st);
    int rc = fpemu_gemm_f32(&cfg, M, N, K, A, K, 0, B, K, 1, NULL, N, D, N, &st);
    if (sa) *sa = st.a;
    if (sb) *sb = st.b;
    return rc;
}

int trn__gemm_mx_valid(const char *mma, int rceil, const fpemu_format *fa, const fpemu_format *fb) {
    const fpemu_gemm_config *base = get_cfg(mma, fa, fb);
    if (!base) return 0;
    fpemu_gemm_config cfg = *base;
    char err[256];
    cfg.inputs_prerounded = 0;
    if (fpemu_gemm_config_set_scaling(&cfg, rceil ? "mx-rceil" : "mx-floor", err, sizeof err)) return 0;
    /* the arguments trn__gemm_lowp_mx passes for a 1 x 1 x 1 product */
    return fpemu_gemm_check(&cfg, 1, 1, 1, 1, 0, 1, 1, 1, 1, err, sizeof err) == 0;
}

int trn__gemm_lowp_scaled(const char *mma, const fpemu_format *fa, const fpemu_format *fb, int M, int N, int K,
                          const float *A, const float *B, const float *da, const float *db, int kb, int promote,
                          int nthreads, float *D) {
    const fpemu_gemm_config *base = get_cfg(mma, fa, fb);
    if (!base) return -1;
    fpemu_gemm_config cfg = *base;
    cfg.promote = promote;
    cfg.nthreads = nthreads;
    return emu__gemm_scaled(&cfg, M, N, K, A, B, da, db, kb, 0, D, NULL);
}

int trn__gemm_supported(const char *mma, const fpemu_format *fa, const fpemu_format *fb, char *err, size_t errlen) {
    fpemu_gemm_config cfg;
    char e[256];
    memset(&cfg, 0, sizeof cfg); /* fpemu_gemm_config_init reads fields of cfg: start from zeros */
    if (fpemu_gemm_config_init(&cfg, mma, fa->name, fb->name, e, sizeof e) == 0) return 0;
    snprintf(err, errlen, "mma=%s has no tensor-core MMA for %s x %s inputs (%s)", mma, fa->name, fb->name, e);
    return -1;
}

const char *trn__gemm_backend_name(void) { return "fpemu_gemm_f32 (emu/gemm.h: tensor-core model, prerounded inputs)"; }
