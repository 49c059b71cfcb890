/* SPDX-License-Identifier: MIT */
/* tensorops.c: every change of format of an engine tensor, with telemetry
 * (docs/training.md). Tensors are f64 arrays holding values of their
 * format; a cast to a low-precision format goes through emu's array API
 * (fpemu_round_f32), whose fpemu_cast_stats are gathered per layer and
 * tensor class. Inputs of a cast are f32 values (every non-f64 tensor holds
 * f32-representable values), so the f64 -> f32 step is exact. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train_internal.h"

const char *const trn__cls_names[CLS_COUNT] = {
    "activation", "weight", "output", "grad_output", "grad_input", "grad_weight", "param", "optim_m", "optim_v"};

int trn__is_low(const fpemu_format *f) { return f && f->bits < 32 && f->container <= 32 && f->bits != 32; }

const fpemu_format *trn__widest(const fpemu_format *a, const fpemu_format *b) {
    if (!a || a->bits == 64) return a;
    if (!b || b->bits == 64) return b;
    if (a->mbits != b->mbits) return a->mbits > b->mbits ? a : b;
    return a->ebits >= b->ebits ? a : b;
}

/* Grow *p to at least bytes (its contents are not kept): 0, or -1 with
 * r->oom set and the buffer gone. */
static int grow(trn_run *r, void **p, size_t *cap, size_t bytes) {
    if (bytes == 0) bytes = 1;
    if (*p && bytes <= *cap) return 0;
    free(*p);
    *p = malloc(bytes);
    *cap = *p ? bytes : 0;
    r->ws_grows++;
    if (!*p) { r->oom = 1; return -1; }
    return 0;
}

float *trn__fscratch(trn_run *r, size_t n) {
    size_t cap = r->fscratch_n * sizeof(float);
    void *p = r->fscratch;
    if (n > SIZE_MAX / sizeof(float)) { r->oom = 1; return NULL; }
    int rc = grow(r, &p, &cap, n * sizeof(float));
    r->fscratch = p;
    r->fscratch_n = cap / sizeof(float);
    return rc ? NULL : r->fscratch;
}

void *trn__ws(trn_run *r, int slot, size_t bytes) {
    trn_buf *b = &r->ws[slot];
    return grow(r, &b->p, &b->cap, bytes) ? NULL : b->p;
}

void trn__ws_free(trn_run *r) {
    for (int i = 0; i < WS_COUNT; i++) { free(r->ws[i].p); r->ws[i].p = NULL; r->ws[i].cap = 0; }
}

int trn__layer_add(trn_run *r, const char *name) {
    int i = r->nlayers;
    char (*names)[40] = realloc(r->layer_names, (size_t)(i + 1) * sizeof *r->layer_names);
    if (!names) { r->oom = 1; return -1; }
    r->layer_names = names;
    tel_slot *tel = realloc(r->tel, (size_t)(i + 1) * TEL_PER_LAYER * sizeof *r->tel);
    if (!tel) { r->oom = 1; return -1; }
    r->tel = tel;
    r->nlayers = i + 1;
    snprintf(r->layer_names[i], sizeof r->layer_names[i], "%s", name);
    memset(&r->tel[(size_t)i * TEL_PER_LAYER], 0, TEL_PER_LAYER * sizeof *r->tel);
    return i;
}

void trn__tel_reset(trn_run *r) {
    memset(r->tel, 0, (size_t)r->nlayers * TEL_PER_LAYER * sizeof *r->tel);
    r->step_casts = r->step_overflow = r->step_underflow = 0;
}

void trn__account(trn_run *r, int layer, int cls, const fpemu_format *fmt, const fpemu_cast_stats *st,
                  double amax, double scale) {
    if (!r->tel_on || layer < 0) return;
    /* the slot of this format, else the first free one; a third format
     * would share the last slot (no policy casts a class to three) */
    tel_slot *t = &r->tel[(size_t)layer * TEL_PER_LAYER + (size_t)cls * TEL_FMTS];
    for (int k = 0; k < TEL_FMTS - 1 && t->fmt && t->fmt != fmt; k++) t++;
    if (t->st.n == 0) { t->scale_min = scale; t->amax = 0; }
    t->st.n += st->n; t->st.overflow += st->overflow; t->st.saturated += st->saturated;
    t->st.underflow += st->underflow; t->st.subnormal += st->subnormal; t->st.nonfinite_in += st->nonfinite_in;
    if (amax > t->amax) t->amax = amax;
    if (scale < t->scale_min || isnan(scale)) t->scale_min = scale; /* a NaN scale (MX) sticks */
    t->fmt = fmt;
    r->step_casts += st->n; r->step_overflow += st->overflow; r->step_underflow += st->underflow;
}

static void to_f32(double *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = (double)(float)x[i];
}

static void round_low(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n,
                      double scale, int sat, double amax_in, fpemu_ctx *ctx) {
    float *f = trn__fscratch(r, n);
    if (!f) return; /* r->oom: reported by trn_step / trn_eval */
    double amax = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (amax_in < 0 && fabs(v) > amax && isfinite(v)) amax = fabs(v);
        f[i] = (float)(scale == 1.0 ? v : v * scale);
    }
    if (amax_in >= 0) amax = amax_in;
    fpemu_cast_stats st;
    memset(&st, 0, sizeof st);
    ctx->sat = sat;
    fpemu_round_f32(fmt, f, f, n, ctx, r->tel_on ? &st : NULL);
    for (size_t i = 0; i < n; i++) x[i] = f[i];
    trn__account(r, layer, cls, fmt, &st, amax, scale);
}

void trn__round(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n) {
    if (!fmt || fmt->bits == 64) return;
    if (fmt->bits == 32 && fmt->pad == 0) { to_f32(x, n); return; }
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    round_low(r, layer, cls, fmt, x, n, 1.0, 0, -1, &ctx);
}

void trn__round_scaled(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n,
                       double scale, int sat, double unscaled_amax) {
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    round_low(r, layer, cls, fmt, x, n, scale, sat, unscaled_amax, &ctx);
}

void trn__round_sr(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n, uint64_t counter) {
    if (!fmt || fmt->bits == 64) return;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    ctx.round = FPEMU_SR;
    ctx.seed = r->seed ^ 0x5352u; /* "SR": a stream of its own */
    ctx.counter = counter;
    /* Values are f32 here only if the f64 update is first rounded to f32,
     * as PyTorch computes the update in f32 before the stochastic cast. */
    to_f32(x, n);
    round_low(r, layer, cls, fmt, x, n, 1.0, 0, -1, &ctx);
}
