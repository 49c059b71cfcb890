/* SPDX-License-Identifier: MIT */
/* run.c: a training run: open, step, evaluate, telemetry rows, checkpoint
 * state. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train_internal.h"
#include "gemm_backend.h"
#include "mma.h"
#include "sumtree.h"

static const fpemu_format *fmt(const char *name) { return fpemu_format_get(name, NULL, 0); }

/* mma_algo=cublas: the library's built-in tree table, whose trees must be
 * of this run's tensor-core model (the rows' leaves are the device the
 * table was fitted on; a reference leaf such as fma-seq goes with any). */
static int cublas_open(trn_run *r, char *err, size_t errlen) {
    char e[400];
    fpemu_sumtree_table *t = calloc(1, sizeof *t);
    if (!t) { snprintf(err, errlen, "out of memory"); return -1; }
    if (fpemu_sumtree_table_builtin(t, e, sizeof e)) {
        snprintf(err, errlen, "mma_algo=cublas: %s", e);
        free(t);
        return -1;
    }
    for (int i = 0; i < t->nrows; i++) {
        const char *leaf = t->rows[i].tree.leaf;
        const fpemu_mma_preset_info *pi = fpemu_mma_preset_find(leaf);
        if (strcmp(leaf, r->cfg.mma) && pi && !pi->reference) {
            snprintf(err, errlen, "mma_algo=cublas: the table %s holds trees of %s's tensor cores (line %d); mma is %s "
                     "(expected mma=%s)", t->name, leaf, t->rows[i].line, r->cfg.mma, leaf);
            fpemu_sumtree_table_free(t);
            free(t);
            return -1;
        }
    }
    r->cublas_tab = t;
    return 0;
}

int trn_open(trn_run **out, const trn_settings *s, uint64_t seed, char *err, size_t errlen) {
    *out = NULL;
    if (trn_settings_check(s, err, errlen)) return -1;
    trn_run *r = calloc(1, sizeof *r);
    if (!r) { snprintf(err, errlen, "out of memory"); return -1; }
    r->cfg = *s;
    r->seed = seed;
    r->pol = trn__policy_find(s->policy);
    r->threads = 1;
    r->tel_on = 1;
    const pol_def *p = r->pol;
    r->f_param = fmt(p->param); r->f_hi = fmt(p->hi); r->f_lo = fmt(p->lo);
    r->f_m = fmt(p->m_fmt); r->f_v = fmt(p->v_fmt);
    r->f_gw = p->gw_fmt ? fmt(p->gw_fmt) : NULL;
    r->f_f32 = fmt("f32");
    const char *f8f, *f8b; /* e4m3/e5m2, or the fnuz pair on AMD CDNA3 (the mma preset's row) */
    trn__fp8_formats(s, &f8f, &f8b);
    r->f8_fwd = fmt(f8f);
    r->f8_bwd = fmt(f8b);
    if (!r->f_param || !r->f_hi || !r->f_lo || !r->f_m || !r->f_v || !r->f_f32 || !r->f8_fwd || !r->f8_bwd ||
        (p->gw_fmt && !r->f_gw)) {
        snprintf(err, errlen, "policy %s: a format is missing from the emulator's registry", p->name);
        free(r);
        return -1;
    }
    /* the tensor-core model must have an MMA for every input pair the policy uses */
    {
        const fpemu_format *pairs[3][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
        if (trn__is_low(r->f_lo)) { pairs[0][0] = r->f_lo; pairs[0][1] = r->f_lo; }
        if (p->recipe != RECIPE_NONE) {
            pairs[1][0] = r->f8_fwd; pairs[1][1] = r->f8_fwd;
            pairs[2][0] = r->f8_bwd; pairs[2][1] = r->f8_fwd;
        }
        for (int i = 0; i < 3; i++)
            if (pairs[i][0] && trn__gemm_supported(s->mma, pairs[i][0], pairs[i][1], err, errlen)) {
                free(r);
                return -1;
            }
    }
    if (!strcmp(s->mma_algo, "cublas") && cublas_open(r, err, errlen)) { free(r); return -1; }
    if (trn__model_build(r, err, errlen)) {
        trn__model_free(r);
        free(r->layer_names); free(r->tel);
        if (r->cublas_tab) fpemu_sumtree_table_free(r->cublas_tab);
        free(r->cublas_tab); free(r);
        return -1;
    }
    r->params = calloc(r->nparams, sizeof(double));
    r->grads = calloc(r->nparams, sizeof(double));
    r->opt_m = calloc(r->nparams, sizeof(double));
    r->opt_v = calloc(r->nparams, sizeof(double));
    r->opt_d = calloc(2 * r->nparams + 1, sizeof(double)); /* the optimiser's scratch: two values per parameter */
    r->recs = calloc((size_t)r->nlayers * TEL_PER_LAYER, sizeof *r->recs);
    if (!r->params || !r->grads || !r->opt_m || !r->opt_v || !r->opt_d || !r->recs) {
        snprintf(err, errlen, "out of memory");
        trn_close(r);
        return -1;
    }
    trn__model_init_params(r);
    if (r->oom) { /* the build sized every scratch buffer: not reached */
        snprintf(err, errlen, "out of memory");
        trn_close(r);
        return -1;
    }
    r->fp8_unscaled = !strcmp(s->fp8_scaling, "none") && p->recipe != RECIPE_NONE;
    if (p->recipe == RECIPE_MX && !r->fp8_unscaled) {
        float a = 1, b = 1, c;
        r->mx_native = trn__gemm_lowp_mx(s->mma, 0, r->f8_fwd, r->f8_fwd, 1, 1, 1, &a, &b, &c, NULL, NULL) == 0;
        /* a configuration the GEMM takes fails a 1 x 1 x 1 product only
         * when the GEMM cannot allocate: not a reason to run without MX */
        if (!r->mx_native && trn__gemm_mx_valid(s->mma, 0, r->f8_fwd, r->f8_fwd)) {
            snprintf(err, errlen, "out of memory");
            trn_close(r);
            return -1;
        }
    }
    int en = strcmp(s->scaler, "none") != 0;
    int dyn = !strcmp(s->scaler, "dynamic");
    trn_scaler_init(&r->scaler, en, dyn, dyn ? s->init_scale : s->loss_scale, s->growth_factor, s->backoff_factor,
                    s->growth_interval);
    *out = r;
    return 0;
}

void trn_close(trn_run *r) {
    if (!r) return;
    trn__model_free(r);
    free(r->params); free(r->grads); free(r->opt_m); free(r->opt_v); free(r->opt_d);
    free(r->layer_names); free(r->tel); free(r->recs); free(r->fscratch);
    free(r->param_set); free(r->init_params); free(r->order);
    free(r->src_path[0]); free(r->src_path[1]);
    if (r->cublas_tab) fpemu_sumtree_table_free(r->cublas_tab);
    free(r->cublas_tab);
    free(r);
}

void trn_set_threads(trn_run *r, int threads) { r->threads = threads < 1 ? 1 : threads; }
long trn_steps_done(const trn_run *r) { return r->step; }
const trn_settings *trn_run_settings(const trn_run *r) { return &r->cfg; }
uint64_t trn_run_seed(const trn_run *r) { return r->seed; }
size_t trn_param_count(const trn_run *r) { return r->nparams; }
double trn_loss_scale(const trn_run *r) { return r->scaler.scale; }
const char *trn_gemm_backend(void) { return trn__gemm_backend_name(); }
const char *trn_gemm_table_name(const trn_run *r) { return r->cublas_tab ? r->cublas_tab->name : NULL; }

int trn_gemm_call_groups(const trn_run *r, trn_gemm_calls *out, int max, long *table, long *plain) {
    if (!r->cublas_tab) return -1;
    for (int i = 0; i < r->ncalls && i < max; i++) out[i] = r->calls[i];
    if (table) *table = r->calls_table;
    if (plain) *plain = r->calls_plain;
    return r->ncalls;
}

static void build_recs(trn_run *r) {
    r->rec_count = 0;
    for (int l = 0; l < r->nlayers; l++)
        for (int c = 0; c < TEL_PER_LAYER; c++) {
            const tel_slot *t = &r->tel[(size_t)l * TEL_PER_LAYER + c];
            if (!t->st.n) continue;
            trn_tensor_rec *x = &r->recs[r->rec_count++];
            x->layer = r->layer_names[l];
            x->cls = trn__cls_names[c / TEL_FMTS];
            x->format = t->fmt ? t->fmt->name : "?";
            x->n = t->st.n; x->overflow = t->st.overflow; x->underflow = t->st.underflow;
            x->saturated = t->st.saturated; x->subnormal = t->st.subnormal; x->nonfinite_in = t->st.nonfinite_in;
            x->amax = t->amax; x->scale = t->scale_min;
        }
}

int trn_step(trn_run *r, trn_step_rec *rec, char *err, size_t errlen) {
    trn__tel_reset(r);
    r->tel_on = 1;
    double scale = r->scaler.enabled ? (double)r->scaler.scale : 1.0;
    double loss;
    /* an allocation that failed (r->oom) ends the run: the model's build
     * sized every scratch buffer a step uses, so this is not expected */
    if (r->oom) { snprintf(err, errlen, "out of memory"); return -1; }
    if (r->order && (size_t)(r->step + 1) * (size_t)r->cfg.batch_size > r->norder) {
        snprintf(err, errlen, "the order holds %zu indices: step %ld needs %zu (batch_size %ld per step)", r->norder, r->step + 1,
                 (size_t)(r->step + 1) * (size_t)r->cfg.batch_size, r->cfg.batch_size);
        return -1;
    }
    if (r->param_set) { snprintf(err, errlen, "parameters were set without trn_init_finish"); return -1; }
    trn__model_train_batch(r, r->step, scale, &loss);
    if (r->oom) { snprintf(err, errlen, "out of memory"); return -1; }
    for (int i = 0; i < r->ninject_inf; i++)
        if (r->inject_inf[i] == r->step + 1 && r->nparams) r->grads[0] = INFINITY;
    int cast_nonfinite = trn__grad_cast(r);
    float inv = r->scaler.enabled ? trn_scaler_inv_scale(&r->scaler) : 1.0f;
    double norm;
    int found = trn__unscale_check(r, inv, &norm);
    if (cast_nonfinite && !found) found = 1, norm = INFINITY; /* an inf the fp8 cast saturated */
    int skip = trn_scaler_update(&r->scaler, found);
    if (!skip) {
        if (r->tc) trn__tc_optim_step(r);
        else trn__optim_step(r);
    }
    trn__model_step_end(r);
    if (r->oom) { snprintf(err, errlen, "out of memory"); return -1; }
    if (r->gemm_failed) {
        snprintf(err, errlen, "a GEMM could not run (mma=%s, policy %s)", r->cfg.mma, r->cfg.policy);
        return -1;
    }
    r->step++;
    memset(rec, 0, sizeof *rec);
    rec->step = r->step;
    rec->loss = loss;
    rec->grad_norm = norm;
    rec->loss_scale = scale;
    rec->skipped = skip;
    rec->casts = r->step_casts;
    rec->overflow = r->step_casts ? (double)r->step_overflow / (double)r->step_casts : 0;
    rec->underflow = r->step_casts ? (double)r->step_underflow / (double)r->step_casts : 0;
    rec->lr = r->cfg.lr;
    build_recs(r);
    return 0;
}

int trn_eval(trn_run *r, double *loss, double *accuracy) {
    int save = r->tel_on;
    r->tel_on = 0;
    r->in_eval = 1;
    int rc = r->oom ? -1 : trn__model_eval(r, loss, accuracy);
    r->in_eval = 0;
    r->tel_on = save;
    return rc || r->oom ? -1 : 0;
}

int trn_tensor_count(const trn_run *r) { return r->rec_count; }
void trn_tensor_get(const trn_run *r, int i, trn_tensor_rec *rec) { *rec = r->recs[i]; }

/* ---- state blob ------------------------------------------------------------------
 * "FPEMUSTATE 1\n", model and policy lines, every setting as key=value,
 * "end\n", then little-endian binary: seed, step, opt_step, nparams, the
 * parameters and both optimiser states (f64), the scaler, and every Linear's
 * delayed-scaling histories and scales.
 * A run with given initial parameters or a given order (trn_set_param,
 * trn_set_order) writes "FPEMUSTATE 2\n" and the same, then: u64 has_init,
 * u64 has_order (each 0 or 1, not both 0); for the init's source, then the
 * order's: u64 path length (0: none), the path, u32 CRC-32; the initial
 * parameters (nparams f64) if has_init; u64 n and n i32 indices if
 * has_order. A run without them writes version 1, as before. */
typedef struct { unsigned char *p; size_t n, cap; int failed; } wbuf;

/* Append n bytes; after a failed allocation the buffer is freed and every
 * later put does nothing (b->p NULL), so no blob with a hole is returned. */
static void wput(wbuf *b, const void *d, size_t n) {
    if (b->failed) return;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + n) nc *= 2;
        unsigned char *np = realloc(b->p, nc);
        if (!np) { free(b->p); b->p = NULL; b->failed = 1; return; }
        b->p = np; b->cap = nc;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void wstr(wbuf *b, const char *s) { wput(b, s, strlen(s)); }

/* Every Linear layer of the model (*nl of them, in trn__model_linears'
 * order), in an array the caller frees; NULL when out of memory. */
static lin_state **all_linears(trn_run *r, int *nl) {
    *nl = trn__model_linears(r, NULL, 0);
    lin_state **lins = malloc((size_t)*nl * sizeof *lins + 1); /* + 1: never malloc(0) */
    if (lins) trn__model_linears(r, lins, *nl);
    return lins;
}

/* Where entry j of a state's amax history (len doubles, the newest first)
 * lives in the library's fpemu_scaling_delayed between steps: slot len - 1
 * holds the newest, slot 1 the oldest, and slot 0 (this step's, empty) is
 * the state's last entry. */
static size_t hist_slot(size_t j, size_t len) { return j + 1 < len ? len - 1 - j : 0; }

int trn_state_save(const trn_run *r, unsigned char **buf, size_t *len) {
    wbuf b = {0};
    char line[512], val[256];
    int v2 = r->init_params || r->order;
    wstr(&b, v2 ? "FPEMUSTATE 2\n" : "FPEMUSTATE 1\n");
    snprintf(line, sizeof line, "model=%s\npolicy=%s\n", r->cfg.model, r->cfg.policy);
    wstr(&b, line);
    for (int i = 0; i < trn_settings_count(); i++) {
        trn_settings_value(&r->cfg, i, val, sizeof val);
        snprintf(line, sizeof line, "%s=%s\n", trn_settings_key(i), val);
        wstr(&b, line);
    }
    wstr(&b, "end\n");
    uint64_t u[4] = {r->seed, (uint64_t)r->step, (uint64_t)r->opt_step, (uint64_t)r->nparams};
    wput(&b, u, sizeof u);
    wput(&b, r->params, r->nparams * sizeof(double));
    wput(&b, r->opt_m, r->nparams * sizeof(double));
    wput(&b, r->opt_v, r->nparams * sizeof(double));
    float sc = r->scaler.scale;
    int64_t gt = r->scaler.growth_tracker;
    wput(&b, &sc, sizeof sc);
    wput(&b, &gt, sizeof gt);
    int nl;
    lin_state **lins = all_linears((trn_run *)r, &nl);
    if (!lins) { free(b.p); return -1; }
    /* delayed scaling's histories as doubles, the newest first (hist_slot) */
    for (int i = 0; i < nl; i++)
        for (int k = 0; k < ROLE_COUNT; k++) {
            const fpemu_scaling_delayed *d = &lins[i]->ds[k].d;
            for (int j = 0; j < d->len; j++) {
                double h = d->history[hist_slot((size_t)j, (size_t)d->len)];
                wput(&b, &h, sizeof h);
            }
            wput(&b, &d->scale, sizeof(float));
        }
    free(lins);
    if (v2) {
        uint64_t h[2] = {r->init_params != NULL, r->order != NULL};
        wput(&b, h, sizeof h);
        for (int w = 0; w < 2; w++) {
            uint64_t l = r->src_path[w] ? strlen(r->src_path[w]) : 0;
            uint32_t c = r->src_path[w] ? r->src_crc[w] : 0;
            wput(&b, &l, sizeof l);
            if (l) wput(&b, r->src_path[w], (size_t)l);
            wput(&b, &c, sizeof c);
        }
        if (r->init_params) wput(&b, r->init_params, r->nparams * sizeof(double));
        if (r->order) {
            uint64_t n = r->norder;
            wput(&b, &n, sizeof n);
            wput(&b, r->order, r->norder * sizeof(int32_t));
        }
    }
    if (!b.p) return -1;
    *buf = b.p; *len = b.n;
    return 0;
}

static int order_check(const trn_settings *s, const int64_t *idx, const int32_t *idx32, size_t n, char *err, size_t errlen);

/* Version 2's given start (see trn_state_save), from pos to the end: every
 * length checked against the bytes left before it is used; the has_ flags
 * 0 or 1 and not both 0; a source path only for what was given, 1..4095
 * bytes without NUL; the order as trn_set_order checks it (a digits model,
 * every index a training row) and long enough for the steps already done;
 * nothing after it. */
static int state_load_start(trn_run *r, const unsigned char *buf, size_t len, size_t pos, char *err, size_t errlen) {
    uint64_t h[2];
#define TAKE(dst, n, what) do { \
        if (len - pos < (size_t)(n)) { snprintf(err, errlen, "truncated state (%s of the given start)", what); return -1; } \
        memcpy((dst), buf + pos, (size_t)(n)); pos += (size_t)(n); } while (0)
    TAKE(h, sizeof h, "the flags");
    if (h[0] > 1 || h[1] > 1 || (!h[0] && !h[1])) {
        snprintf(err, errlen, "a version 2 state with flags %llu, %llu (expected 0 or 1 each, not both 0)", (unsigned long long)h[0],
                 (unsigned long long)h[1]);
        return -1;
    }
    /* what is read goes into r at once: trn_close frees it if a later check fails */
    for (int w = 0; w < 2; w++) {
        uint64_t l;
        TAKE(&l, sizeof l, "a source's length");
        if (l > 4095 || (l && !h[w]) || len - pos < l) {
            snprintf(err, errlen, "the %s's source path of %llu bytes is impossible here", w ? "order" : "initial state",
                     (unsigned long long)l);
            return -1;
        }
        if (l) {
            if (memchr(buf + pos, 0, (size_t)l)) { snprintf(err, errlen, "a source path holds a NUL byte"); return -1; }
            r->src_path[w] = malloc((size_t)l + 1);
            if (!r->src_path[w]) { snprintf(err, errlen, "out of memory"); return -1; }
            memcpy(r->src_path[w], buf + pos, (size_t)l);
            r->src_path[w][l] = 0;
            pos += (size_t)l;
        }
        TAKE(&r->src_crc[w], sizeof r->src_crc[w], "a source's CRC");
    }
    if (h[0]) {
        if (len - pos < r->nparams * sizeof(double)) { snprintf(err, errlen, "truncated state (the initial parameters)"); return -1; }
        r->init_params = malloc(r->nparams * sizeof(double) + 1);
        if (!r->init_params) { snprintf(err, errlen, "out of memory"); return -1; }
        memcpy(r->init_params, buf + pos, r->nparams * sizeof(double));
        pos += r->nparams * sizeof(double);
    }
    if (h[1]) {
        uint64_t n;
        TAKE(&n, sizeof n, "the order's length");
        if (n == 0 || n > (len - pos) / sizeof(int32_t) || n * sizeof(int32_t) != len - pos) {
            snprintf(err, errlen, "an order of %llu indices in %zu bytes", (unsigned long long)n, len - pos);
            return -1;
        }
        r->order = malloc((size_t)n * sizeof(int32_t));
        if (!r->order) { snprintf(err, errlen, "out of memory"); return -1; }
        memcpy(r->order, buf + pos, (size_t)n * sizeof(int32_t));
        pos += (size_t)n * sizeof(int32_t);
        r->norder = (size_t)n;
        if (order_check(&r->cfg, NULL, r->order, r->norder, err, errlen)) return -1;
        if ((uint64_t)r->step * (uint64_t)r->cfg.batch_size > n) {
            snprintf(err, errlen, "the order holds %llu indices, fewer than the %ld steps done used (batch_size %ld)",
                     (unsigned long long)n, r->step, r->cfg.batch_size);
            return -1;
        }
    }
#undef TAKE
    if (pos != len) { snprintf(err, errlen, "%zu bytes after the given start", len - pos); return -1; }
    return 0;
}

/* A loaded state is validated as strictly as the command line validates a
 * new run, and each field against the rest of the state: the magic; a model
 * and a policy line, first, each valid; every setting exactly once, each
 * value in the range `--set` allows, then trn_settings_check (in trn_open);
 * the step within --steps' range (0..TRN_STEPS_MAX); the optimiser's step
 * count within the steps; the parameter count and the byte count equal to
 * what this model, policy and settings need; the loss scale and growth
 * tracker possible for the scaler (none: 1; static: loss_scale; dynamic: a
 * finite, non-negative f32 and a tracker below growth_interval); Adam's
 * second moments never negative; each delayed-scaling history holding no
 * negative amax and each scale a finite, non-negative f32 (what
 * trn__linear_step_end can compute). Every field is read
 * through a bounds check first. */
int trn_state_load(trn_run **out, const unsigned char *buf, size_t len, char *err, size_t errlen) {
    *out = NULL;
    const char *magic = "FPEMUSTATE 1\n", *magic2 = "FPEMUSTATE 2\n";
    size_t pos = strlen(magic);
    int version = 1;
    if (buf && len >= pos && !memcmp(buf, magic2, pos)) version = 2;
    else if (!buf || len < pos || memcmp(buf, magic, pos)) { snprintf(err, errlen, "not an fpemu training state (bad magic)"); return -1; }
    char scaler[64] = "", model[TRN_NAME_MAX] = "";
    trn_settings s;
    int nkeys = trn_settings_count(), line_no = 1;
    unsigned char seen[128] = {0};
    if (nkeys > (int)sizeof seen) { snprintf(err, errlen, "internal: too many settings keys"); return -1; }
    for (;;) {
        line_no++;
        const unsigned char *nl = pos < len ? memchr(buf + pos, '\n', len - pos) : NULL;
        if (!nl) { snprintf(err, errlen, "truncated settings (line %d has no end)", line_no); return -1; }
        size_t ll = (size_t)(nl - (buf + pos));
        if (ll >= 512) { snprintf(err, errlen, "settings line %d is longer than 511 bytes", line_no); return -1; }
        char line[512];
        memcpy(line, buf + pos, ll);
        line[ll] = 0;
        pos += ll + 1;
        if (memchr(line, 0, ll)) { snprintf(err, errlen, "settings line %d holds a NUL byte", line_no); return -1; }
        if (line_no == 2 || line_no == 3) {
            /* "model=NAME", then "policy=NAME" */
            const char *want = line_no == 2 ? "model=" : "policy=";
            if (strncmp(line, want, strlen(want))) {
                snprintf(err, errlen, "settings line %d: expected '%sNAME', got '%.80s'", line_no, want, line);
                return -1;
            }
            if (line_no == 2) {
                if (strlen(line + 6) >= TRN_NAME_MAX) { snprintf(err, errlen, "model name too long: '%.80s'", line + 6); return -1; }
                snprintf(model, sizeof model, "%s", line + 6);
            } else if (trn_settings_init(&s, model, line + 7, err, errlen)) {
                return -1;
            }
            continue;
        }
        if (!strcmp(line, "end")) break;
        char *eq = strchr(line, '=');
        if (!eq) { snprintf(err, errlen, "settings line %d: expected 'key=value', got '%.80s'", line_no, line); return -1; }
        *eq = 0;
        int ki = -1;
        for (int i = 0; i < nkeys; i++) if (!strcmp(trn_settings_key(i), line)) ki = i;
        if (ki < 0) { snprintf(err, errlen, "settings line %d: unknown key '%.64s'", line_no, line); return -1; }
        if (seen[ki]) { snprintf(err, errlen, "settings line %d: key '%s' given twice", line_no, line); return -1; }
        seen[ki] = 1;
        if (trn_settings_set(&s, line, eq + 1, err, errlen)) return -1;
        if (!strcmp(line, "scaler")) snprintf(scaler, sizeof scaler, "%s", eq + 1);
    }
    if (line_no <= 3) { snprintf(err, errlen, "no model/policy lines"); return -1; }
    /* a key left out takes its default, as on the command line (a state of
     * an engine before that key existed) */
    /* setting loss_scale implies scaler=static: restore the saved scaler */
    if (scaler[0] && trn_settings_set(&s, "scaler", scaler, err, errlen)) return -1;
    uint64_t u[4];
    if (len - pos < sizeof u) { snprintf(err, errlen, "truncated state (no seed, step and sizes)"); return -1; }
    memcpy(u, buf + pos, sizeof u);
    pos += sizeof u;
    if (u[1] > TRN_STEPS_MAX) {
        snprintf(err, errlen, "step %lld is out of range [0, %d]", (long long)u[1], TRN_STEPS_MAX);
        return -1;
    }
    if (u[2] > u[1]) {
        snprintf(err, errlen, "optimizer step %lld is beyond the run's step %llu", (long long)u[2], (unsigned long long)u[1]);
        return -1;
    }
    trn_run *r;
    if (trn_open(&r, &s, u[0], err, errlen)) return -1;
    size_t np = r->nparams;
    if (u[3] != np) {
        snprintf(err, errlen, "the state holds %llu parameters, model %s with these settings has %zu",
                 (unsigned long long)u[3], s.model, np);
        trn_close(r);
        return -1;
    }
    int nl;
    lin_state **lins = all_linears(r, &nl);
    if (!lins) { snprintf(err, errlen, "out of memory"); trn_close(r); return -1; }
    size_t hl = (size_t)s.amax_history_len;
    size_t need = 3 * np * sizeof(double) + sizeof(float) + sizeof(int64_t) +
                  (size_t)nl * ROLE_COUNT * (hl * sizeof(double) + sizeof(float));
    if (version == 1 ? len - pos != need : len - pos < need) {
        snprintf(err, errlen, "state size does not match the model (%zu bytes of state, expected %zu%s)", len - pos, need,
                 version == 1 ? "" : " and the given start");
        goto bad;
    }
    r->step = (long)u[1];
    r->opt_step = (long)u[2];
    memcpy(r->params, buf + pos, np * sizeof(double)); pos += np * sizeof(double);
    memcpy(r->opt_m, buf + pos, np * sizeof(double)); pos += np * sizeof(double);
    memcpy(r->opt_v, buf + pos, np * sizeof(double)); pos += np * sizeof(double);
    for (size_t i = 0; i < np; i++)
        if (r->opt_v[i] < 0) { snprintf(err, errlen, "optimizer second moment %zu is negative (%g)", i, r->opt_v[i]); goto bad; }
    float sc;
    int64_t gt;
    memcpy(&sc, buf + pos, sizeof sc); pos += sizeof sc;
    memcpy(&gt, buf + pos, sizeof gt); pos += sizeof gt;
    if (!r->scaler.enabled ? sc != 1.0f || gt != 0
        : !r->scaler.dynamic ? sc != (float)s.loss_scale || gt != 0
        : !(sc >= 0 && isfinite(sc)) || gt < 0 || gt >= s.growth_interval) {
        snprintf(err, errlen, "loss scale %g with growth tracker %lld is impossible for scaler=%s (init_scale %g, loss_scale %g, "
                 "growth_interval %ld)", (double)sc, (long long)gt, s.scaler, s.init_scale, s.loss_scale, s.growth_interval);
        goto bad;
    }
    r->scaler.scale = sc;
    r->scaler.growth_tracker = (long)gt;
    for (int i = 0; i < nl; i++)
        for (int k = 0; k < ROLE_COUNT; k++) {
            fpemu_scaling_delayed *d = &lins[i]->ds[k].d;
            float fs;
            if (!d->history || (size_t)d->len != hl) { snprintf(err, errlen, "out of memory"); goto bad; }
            for (size_t j = 0; j < hl; j++) { /* the newest first, into slots len - 1 .. 1 */
                double h;
                memcpy(&h, buf + pos + j * sizeof h, sizeof h);
                if (h < 0) { snprintf(err, errlen, "Linear %d: amax history entry %zu is negative (%g)", i, j, h); goto bad; }
                /* the last entry is slot 0, this step's, empty between steps (states
                 * written before 2026-11-27 hold there an amax no later step read) */
                d->history[hist_slot(j, hl)] = j + 1 < hl ? (float)h : 0.0f;
            }
            pos += hl * sizeof(double);
            memcpy(&fs, buf + pos, sizeof(float));
            pos += sizeof(float);
            /* 0 is possible: an amax near DBL_MAX gives fp8_max / amax below the least f32 */
            if (!(fs >= 0 && isfinite(fs))) {
                snprintf(err, errlen, "Linear %d: delayed scale %g is not a finite non-negative number", i, (double)fs);
                goto bad;
            }
            d->scale = fs;
        }
    if (version == 2 && state_load_start(r, buf, len, pos, err, errlen)) goto bad;
    free(lins);
    *out = r;
    return 0;
bad:
    free(lins);
    trn_close(r);
    return -1;
}

/* ---- a given start: parameters, order, sources ----------------------------------- */

int trn_param_keys(const trn_run *r, const trn_param_key **keys) { return trn__model_twin_keys(r, keys); }

const double *trn_param_values(const trn_run *r, int i, size_t *n) {
    size_t off;
    int layer;
    trn__model_param(r, i, &off, n, &layer);
    return r->params + off;
}

const char *trn_param_format(const trn_run *r) { return r->pol->msamp ? NULL : r->f_param->name; }

static void shape_text(char *buf, size_t n, const long *shape, int ndim) {
    if (ndim == 1) snprintf(buf, n, "(%ld,)", shape[0]);
    else if (ndim == 2) snprintf(buf, n, "(%ld, %ld)", shape[0], shape[1]);
    else {
        size_t u = (size_t)snprintf(buf, n, "(");
        for (int i = 0; i < ndim && u < n; i++) u += (size_t)snprintf(buf + u, n - u, "%s%ld", i ? ", " : "", shape[i]);
        if (u < n) snprintf(buf + u, n - u, ")");
    }
}

/* trn_set_param's checks: the key's index, or -1 with a message. */
static int param_check(trn_run *r, const char *key, const long *shape, int ndim, char *err, size_t n) {
    const trn_param_key *keys;
    int nk = trn__model_twin_keys(r, &keys), ki = -1;
    if (r->step || r->init_params) {
        snprintf(err, n, "%s: %s", key, r->step ? "the parameters can be given only before the first step"
                                                : "the initial parameters are already given (trn_init_finish)");
        return -1;
    }
    for (int i = 0; i < nk; i++) if (!strcmp(keys[i].key, key)) ki = i;
    if (ki < 0) {
        char list[600];
        size_t u = 0;
        list[0] = 0;
        for (int i = 0; i < nk && u < sizeof list - 40; i++) u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", keys[i].key);
        if (u >= sizeof list - 40) snprintf(list + u, sizeof list - u, ", ...");
        snprintf(err, n, "unknown key '%s': model %s's parameters (its PyTorch twin's state_dict) are %s", key, r->cfg.model, list);
        return -1;
    }
    const trn_param_key *k = &keys[ki];
    int same = ndim == k->ndim;
    for (int i = 0; same && i < ndim; i++) same = shape[i] == k->shape[i];
    if (!same) {
        char want[64], got[200];
        shape_text(want, sizeof want, k->shape, k->ndim);
        shape_text(got, sizeof got, shape, ndim < 0 ? 0 : ndim > 8 ? 8 : ndim);
        snprintf(err, n, "%s: shape %s, expected %s (PyTorch's layout%s)", key, got, want,
                 k->ndim == 2 && strstr(key, "weight") && strncmp(key, "wte", 3) && strncmp(key, "wpe", 3)
                     ? ": a Linear weight is (out_features, in_features)" : "");
        return -1;
    }
    if (!r->param_set) {
        r->param_set = calloc((size_t)nk, 1);
        if (!r->param_set) { snprintf(err, n, "out of memory"); return -1; }
    }
    if (r->param_set[ki]) { snprintf(err, n, "%s: given twice", key); return -1; }
    return ki;
}

/* Round parameter tensor p to the parameters' format, without telemetry
 * (as trn__model_init_params rounds the drawn ones). */
static void param_round_quiet(trn_run *r, int p) {
    int save = r->tel_on;
    r->tel_on = 0;
    trn__param_round(r, p);
    r->tel_on = save;
}

int trn_set_param(trn_run *r, const char *key, const float *v, const long *shape, int ndim, char *err, size_t n) {
    int ki = param_check(r, key, shape, ndim, err, n);
    if (ki < 0) return -1;
    size_t off, cnt; int layer;
    trn__model_param(r, ki, &off, &cnt, &layer);
    for (size_t i = 0; i < cnt; i++) r->params[off + i] = (double)v[i];
    param_round_quiet(r, ki);
    r->param_set[ki] = 1;
    return 0;
}

int trn_set_param_f64(trn_run *r, const char *key, const double *v, const long *shape, int ndim, char *err, size_t n) {
    int ki = param_check(r, key, shape, ndim, err, n);
    if (ki < 0) return -1;
    size_t off, cnt; int layer;
    trn__model_param(r, ki, &off, &cnt, &layer);
    memcpy(r->params + off, v, cnt * sizeof(double));
    param_round_quiet(r, ki);
    r->param_set[ki] = 1;
    return 0;
}

int trn_init_finish(trn_run *r, char *err, size_t n) {
    const trn_param_key *keys;
    int nk = trn__model_twin_keys(r, &keys);
    if (r->init_params) { snprintf(err, n, "the initial parameters are already given"); return -1; }
    for (int i = 0; i < nk; i++)
        if (!r->param_set || !r->param_set[i]) {
            char want[64];
            shape_text(want, sizeof want, keys[i].shape, keys[i].ndim);
            snprintf(err, n, "missing key '%s' (shape %s): every parameter of model %s must be given (%d keys)", keys[i].key, want,
                     r->cfg.model, nk);
            return -1;
        }
    r->init_params = malloc(r->nparams * sizeof(double) + 1);
    if (!r->init_params) { snprintf(err, n, "out of memory"); return -1; }
    memcpy(r->init_params, r->params, r->nparams * sizeof(double));
    free(r->param_set);
    r->param_set = NULL;
    return 0;
}

/* The rows an order may name: the digits' training rows (data.c). */
enum { ORDER_ROWS = 1500 };

static int order_check(const trn_settings *s, const int64_t *idx, const int32_t *idx32, size_t n, char *err, size_t errlen) {
    if (!strcmp(s->model, "tiny-transformer")) {
        snprintf(err, errlen, "an order is for the digits models (mlp-digits, deep-mlp): tiny-transformer trains on sequences "
                 "generated from the seed, there are no data rows to order");
        return -1;
    }
    if (!n) { snprintf(err, errlen, "the order is empty"); return -1; }
    for (size_t i = 0; i < n; i++) {
        int64_t v = idx ? idx[i] : idx32[i];
        if (v < 0 || v >= ORDER_ROWS) {
            snprintf(err, errlen, "index %lld at entry %zu (step %zu, batch_size %ld) is out of range: the training rows are 0..%d",
                     (long long)v, i, i / (size_t)s->batch_size + 1, s->batch_size, ORDER_ROWS - 1);
            return -1;
        }
    }
    return 0;
}

int trn_set_order(trn_run *r, const int64_t *idx, size_t n, char *err, size_t errlen) {
    if (r->step || r->order) { snprintf(err, errlen, "the order can be given once, before the first step"); return -1; }
    if (order_check(&r->cfg, idx, NULL, n, err, errlen)) return -1;
    if (n > SIZE_MAX / sizeof(int32_t) - 1) { snprintf(err, errlen, "out of memory"); return -1; }
    r->order = malloc(n * sizeof(int32_t));
    if (!r->order) { snprintf(err, errlen, "out of memory"); return -1; }
    for (size_t i = 0; i < n; i++) r->order[i] = (int32_t)idx[i];
    r->norder = n;
    return 0;
}

size_t trn_order_len(const trn_run *r) { return r->order ? r->norder : 0; }

int trn_set_source(trn_run *r, int which, const char *path, uint32_t crc) {
    if (which != TRN_SRC_INIT && which != TRN_SRC_ORDER) return -1;
    if (which == TRN_SRC_INIT ? !r->init_params : !r->order) return -1;
    size_t l = strlen(path);
    if (!l || l > 4095) return -1;
    char *p = malloc(l + 1);
    if (!p) return -1;
    memcpy(p, path, l + 1);
    free(r->src_path[which]);
    r->src_path[which] = p;
    r->src_crc[which] = crc;
    return 0;
}

int trn_get_source(const trn_run *r, int which, const char **path, uint32_t *crc) {
    if ((which != TRN_SRC_INIT && which != TRN_SRC_ORDER) || !r->src_path[which]) return -1;
    *path = r->src_path[which];
    *crc = r->src_crc[which];
    return 0;
}

int trn_open_initial(trn_run **out, const trn_run *r, char *err, size_t errlen) {
    trn_run *n;
    if (trn_open(&n, &r->cfg, r->seed, err, errlen)) return -1;
    int bad = 0;
    if (r->init_params) {
        n->init_params = malloc(r->nparams * sizeof(double) + 1);
        if (n->init_params) {
            memcpy(n->init_params, r->init_params, r->nparams * sizeof(double));
            memcpy(n->params, r->init_params, r->nparams * sizeof(double));
        } else bad = 1;
    }
    if (!bad && r->order) {
        n->order = malloc(r->norder * sizeof(int32_t) + 1);
        if (n->order) { memcpy(n->order, r->order, r->norder * sizeof(int32_t)); n->norder = r->norder; }
        else bad = 1;
    }
    for (int w = 0; w < 2 && !bad; w++)
        if (r->src_path[w] && trn_set_source(n, w, r->src_path[w], r->src_crc[w])) bad = 1;
    if (bad) { snprintf(err, errlen, "out of memory"); trn_close(n); return -1; }
    *out = n;
    return 0;
}
