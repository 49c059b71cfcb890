/* gemm_backend.c: the low-precision GEMM behind trn__gemm, through emu's
 * tensor-core models (emu/mma.h): each output element is mma_dot of the
 * encoded row of A and row of B under the preset `mma` bound to the input
 * formats (c = d = f32). Models are bound once per (preset, formats) and
 * cached. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gemm_backend.h"
#include "mma.h"

typedef struct { char name[32]; const fpemu_format *fa, *fb; mma_model m; int ok; } model_slot;
static model_slot g_models[32];
static int g_nmodels;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static const mma_model *get_model(const char *name, const fpemu_format *fa, const fpemu_format *fb) {
    pthread_mutex_lock(&g_lock);
    const mma_model *res = NULL;
    for (int i = 0; i < g_nmodels; i++)
        if (g_models[i].fa == fa && g_models[i].fb == fb && !strcmp(g_models[i].name, name)) {
            res = g_models[i].ok ? &g_models[i].m : NULL;
            pthread_mutex_unlock(&g_lock);
            return res;
        }
    if (g_nmodels < 32) {
        model_slot *s = &g_models[g_nmodels++];
        snprintf(s->name, sizeof s->name, "%s", name);
        s->fa = fa; s->fb = fb;
        char err[256];
        s->ok = mma_model_preset(&s->m, name, fa, fb, NULL, NULL, err, sizeof err) == 0;
        res = s->ok ? &s->m : NULL;
    }
    pthread_mutex_unlock(&g_lock);
    return res;
}

int trn__gemm_lowp(const char *mma, const fpemu_format *fa, const fpemu_format *fb, int M, int N, int K,
                   const double *A, const double *B, double *C) {
    const mma_model *m = get_model(mma, fa, fb);
    if (!m) m = get_model("exact", fa, fb); /* a device without this MMA: one rounding of the exact sum */
    if (!m) return -1;
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0);
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    uint64_t *ca = malloc((size_t)M * K * sizeof *ca), *cb = malloc((size_t)N * K * sizeof *cb);
    float *tmp = malloc((size_t)(K > 0 ? K : 1) * sizeof *tmp);
    if (!ca || !cb || !tmp) { free(ca); free(cb); free(tmp); return -1; }
    /* inputs hold values of fa / fb already: encoding is exact */
    for (int i = 0; i < M; i++) {
        for (int k = 0; k < K; k++) tmp[k] = (float)A[(size_t)i * K + k];
        for (int k = 0; k < K; k++) ca[(size_t)i * K + k] = fpemu_from_float(fa, tmp[k], &ctx);
    }
    for (int j = 0; j < N; j++) {
        for (int k = 0; k < K; k++) tmp[k] = (float)B[(size_t)j * K + k];
        for (int k = 0; k < K; k++) cb[(size_t)j * K + k] = fpemu_from_float(fb, tmp[k], &ctx);
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            uint64_t d = mma_dot(m, ca + (size_t)i * K, cb + (size_t)j * K, (size_t)K, 0, NULL);
            C[(size_t)i * N + j] = fpemu_to_double(f32, d);
        }
    free(ca); free(cb); free(tmp);
    return 0;
}

int trn__gemm_lowp_mx(const char *mma, int rceil, const fpemu_format *fa, const fpemu_format *fb, int M, int N,
                      int K, const double *A, const double *B, double *C, fpemu_cast_stats *sa,
                      fpemu_cast_stats *sb) {
    (void)mma; (void)rceil; (void)fa; (void)fb; (void)M; (void)N; (void)K; (void)A; (void)B; (void)C;
    (void)sa; (void)sb;
    return -2;
}

const char *trn__gemm_backend_name(void) { return "mma_dot (emu/mma.h tensor-core models, scalar)"; }
