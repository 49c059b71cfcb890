/* SPDX-License-Identifier: MIT */
/* model.c: the three models, forward and backward with the policy's
 * formats (PyTorch autocast's op classes, CUDA lists; docs/training.md):
 *   - GEMM-like ops (Linear, attention bmm) produce `lo` (the autocast type);
 *   - softmax, layer_norm, the loss produce `hi` (f32 under autocast);
 *   - elementwise ops keep their input's format; an add of two formats
 *     produces the wider one; an embedding produces its weight's format;
 *   - the gradient of a tensor is in that tensor's format (autograd), so
 *     every backward result is rounded to its forward tensor's format.
 * Models:
 *   mlp-digits       64 -> hidden x depth (ReLU) -> 10 on the digits data;
 *   deep-mlp         the same shape, deep and narrow, raw scaled pixels,
 *                    no normalisation, large init (f16 overflows/underflows);
 *   tiny-transformer a GPT-2 style pre-LN decoder on a synthetic task.
 * Each parameter tensor carries its state_dict key and shape in the model's
 * PyTorch twin (python/fpemu/twins.py), for `fpemu train --init`; the
 * digits batches follow a given order when the run has one (--order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train_internal.h"

enum { M_MLP = 0, M_TRANSFORMER = 1, M_DEEP = 2 };
enum { INIT_UNIFORM_FANIN, INIT_NORMAL_GAIN, INIT_NORMAL, INIT_ZERO, INIT_ONE };

typedef struct pdesc {
    size_t off, n;
    int layer, init, fan_in;
    double std;
    int linear_w; /* a Linear layer's weight (set once the model is built) */
} pdesc;

typedef struct tblock {
    lin_state qkv, proj, fc, fcproj;
    int ln1_l, ln2_l, attn;       /* telemetry layers */
    size_t ln1w, ln1b, ln2w, ln2b;
    /* activations: [B*T][...] */
    double *res_in, *ln1, *ln1_mean, *ln1_rstd, *qkv_out, *scores, *att, *atty, *proj_out, *res2;
    double *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_gelu, *fcproj_out, *res3;
} tblock;

struct trn_model {
    int kind;
    int np; pdesc *pd;
    trn_param_key *tkeys;            /* the PyTorch twin's state_dict key of each pd (trn__model_twin_keys) */
    /* MLP */
    int nlin; lin_state *lins; int *dims;
    double **mh, **ma;               /* pre-activations h[i], inputs a[i] */
    int *perm; long perm_epoch;
    float *dx; int *dy; int dn;      /* digits */
    /* transformer */
    int T, C, NH, FF, V, NL, Bmax, ndig;
    size_t wte, wpe, lnfw, lnfb;
    int emb_layer, lnf_layer, misc_layer;
    tblock *blk;
    lin_state head;
    double *enc, *lnf, *lnf_mean, *lnf_rstd, *logits, *probs;
    int *tok, *tgt;
    int *eval_tok, *eval_tgt, neval;
    /* shared scratch for backward */
    double *g1, *g2, *g3, *g4;
    double *dres, *dtmp, *dbig, *dbig2, *dlog, *attw; /* the transformer's backward (tf_backward, tf_attention_bwd) */
    const fpemu_format *f_res;       /* residual stream format */
};

/* ---- random numbers: counter based, so runs and resumes are reproducible ---- */
static double urand(uint64_t seed, uint64_t i) { return (double)(fpemu_random64(seed, i) >> 11) * 0x1p-53; }
static double nrand(uint64_t seed, uint64_t i) {
    double u1 = urand(seed, 2 * i), u2 = urand(seed, 2 * i + 1);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Building a model: every allocation is checked; a failed one sets r->oom,
 * the build goes on without dereferencing what failed, and
 * trn__model_build reports "out of memory" (trn__model_free takes a model
 * built in part). */
/* A parameter tensor of n values at *off, named as its PyTorch twin's
 * state_dict names it (key, and its shape d0 x d1, d1 = 0 for a vector). */
static size_t add_param(trn_run *r, trn_model *m, size_t *off, size_t n, int layer, int init, int fan_in, double std,
                        const char *key, long d0, long d1) {
    pdesc *pd = realloc(m->pd, (size_t)(m->np + 1) * sizeof *m->pd);
    if (pd) m->pd = pd;
    trn_param_key *tk = pd ? realloc(m->tkeys, (size_t)(m->np + 1) * sizeof *m->tkeys) : NULL;
    if (tk) m->tkeys = tk;
    if (pd && tk) {
        m->pd[m->np] = (pdesc){*off, n, layer, init, fan_in, std, 0};
        trn_param_key *k = &m->tkeys[m->np++];
        memset(k, 0, sizeof *k);
        snprintf(k->key, sizeof k->key, "%s", key);
        k->ndim = d1 ? 2 : 1;
        k->shape[0] = d0;
        k->shape[1] = d1;
    } else {
        r->oom = 1;
    }
    size_t o = *off;
    *off += n;
    return o;
}

static double *dalloc(trn_run *r, size_t n) {
    double *p = calloc(n ? n : 1, sizeof(double));
    if (!p) r->oom = 1;
    return p;
}
static void *alloc_chk(trn_run *r, size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) r->oom = 1;
    return p;
}

static int mlp_build(trn_run *r, trn_model *m, char *err, size_t errlen) {
    const trn_settings *s = &r->cfg;
    if (trn__digits_load(&m->dx, &m->dy, &m->dn, err, errlen)) return -1;
    int nlin = (int)s->depth + 1;
    m->dims = alloc_chk(r, (size_t)(nlin + 1) * sizeof *m->dims);
    m->lins = calloc((size_t)nlin, sizeof *m->lins);
    m->mh = calloc((size_t)nlin, sizeof *m->mh);
    m->ma = calloc((size_t)nlin, sizeof *m->ma);
    if (!m->dims || !m->lins || !m->mh || !m->ma) { r->oom = 1; return 0; } /* nlin stays 0 */
    m->nlin = nlin;
    m->dims[0] = 64;
    for (int i = 1; i < m->nlin; i++) m->dims[i] = (int)s->hidden;
    m->dims[m->nlin] = 10;
    size_t off = 0;
    int B = (int)(s->batch_size > 64 ? s->batch_size : 64);
    m->Bmax = B;
    for (int i = 0; i < m->nlin; i++) {
        char name[40];
        snprintf(name, sizeof name, "fc%d", i + 1);
        int layer = trn__layer_add(r, name);
        int in = m->dims[i], out = m->dims[i + 1];
        int winit = m->kind == M_DEEP ? INIT_NORMAL_GAIN : INIT_UNIFORM_FANIN;
        /* the twin: nn.Sequential(Linear, ReLU, Linear, ..., Linear), so Linear i is module 2i */
        char kw[TRN_KEY_MAX], kb[TRN_KEY_MAX];
        snprintf(kw, sizeof kw, "%d.weight", 2 * i);
        snprintf(kb, sizeof kb, "%d.bias", 2 * i);
        size_t w = add_param(r, m, &off, (size_t)in * out, layer, winit, in, s->init_gain, kw, out, in);
        size_t b = add_param(r, m, &off, (size_t)out, layer, m->kind == M_DEEP ? INIT_ZERO : INIT_UNIFORM_FANIN, in, 0,
                             kb, out, 0);
        if (trn__linear_init(r, &m->lins[i], layer, in, out, w, b) || trn__linear_reserve(r, &m->lins[i], B)) return 0;
        m->mh[i] = dalloc(r, (size_t)B * out);
        m->ma[i] = dalloc(r, (size_t)B * in);
    }
    r->nparams = off;
    int wmax = 64 > s->hidden ? 64 : (int)s->hidden;
    m->g1 = dalloc(r, (size_t)B * wmax); m->g2 = dalloc(r, (size_t)B * wmax);
    m->probs = dalloc(r, (size_t)B * 10);
    m->tgt = alloc_chk(r, (size_t)B * sizeof(int));
    m->misc_layer = trn__layer_add(r, "loss");
    m->perm = alloc_chk(r, 1500 * sizeof(int));
    m->perm_epoch = -1;
    if (!strcmp(s->numerics, "torch-cuda") && !r->oom) {
        int neval = m->dn - 1500, layers[257];
        if (m->nlin > 256) { snprintf(err, errlen, "torch-cuda: at most 256 Linear layers"); return -1; }
        for (int i = 0; i < m->nlin; i++) layers[i] = m->lins[i].layer;
        layers[m->nlin] = m->misc_layer;
        if (trn__tc_open(r, m->nlin, m->dims, layers, B > neval ? B : neval, err, errlen)) return r->oom ? 0 : -1;
    }
    return 0;
}

static int tf_build(trn_run *r, trn_model *m) {
    const trn_settings *s = &r->cfg;
    m->ndig = (int)s->seq_digits;
    m->T = 2 * m->ndig;
    m->C = (int)s->d_model; m->NH = (int)s->heads; m->FF = (int)s->d_ff;
    m->V = (int)s->vocab + 1; /* + separator */
    m->NL = (int)s->depth;
    int B = (int)(s->batch_size > 64 ? s->batch_size : 64);
    m->Bmax = B;
    int T = m->T, C = m->C, FF = m->FF, V = m->V;
    size_t BT = (size_t)B * T;
    size_t off = 0;
    m->emb_layer = trn__layer_add(r, "embed");
    m->wte = add_param(r, m, &off, (size_t)V * C, m->emb_layer, INIT_NORMAL, C, 0.1, "wte.weight", V, C);
    m->wpe = add_param(r, m, &off, (size_t)T * C, m->emb_layer, INIT_NORMAL, C, 0.1, "wpe.weight", T, C);
    m->blk = calloc((size_t)m->NL + 1, sizeof *m->blk);
    if (!m->blk) { m->NL = 0; r->oom = 1; return 0; }
    for (int l = 0; l < m->NL; l++) {
        tblock *b = &m->blk[l];
        char name[40];
        /* the twin's keys (nanoGPT's names): h.L.ln_1, h.L.attn.c_attn, h.L.attn.c_proj, h.L.ln_2, h.L.mlp.c_fc, h.L.mlp.c_proj */
        static const char *const kn[6] = {"ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"};
        char kw[TRN_KEY_MAX], kb[TRN_KEY_MAX];
#define KEYS(j) (snprintf(kw, sizeof kw, "h.%d.%s.weight", l, kn[j]), snprintf(kb, sizeof kb, "h.%d.%s.bias", l, kn[j]))
        snprintf(name, sizeof name, "h%d.ln1", l); b->ln1_l = trn__layer_add(r, name);
        KEYS(0);
        b->ln1w = add_param(r, m, &off, (size_t)C, b->ln1_l, INIT_ONE, C, 0, kw, C, 0);
        b->ln1b = add_param(r, m, &off, (size_t)C, b->ln1_l, INIT_ZERO, C, 0, kb, C, 0);
        snprintf(name, sizeof name, "h%d.qkv", l); b->qkv.layer = trn__layer_add(r, name);
        KEYS(1);
        b->qkv.w_off = add_param(r, m, &off, (size_t)3 * C * C, b->qkv.layer, INIT_UNIFORM_FANIN, C, 0, kw, 3 * C, C);
        b->qkv.b_off = add_param(r, m, &off, (size_t)3 * C, b->qkv.layer, INIT_ZERO, C, 0, kb, 3 * C, 0);
        snprintf(name, sizeof name, "h%d.attn", l); b->attn = trn__layer_add(r, name);
        snprintf(name, sizeof name, "h%d.proj", l); b->proj.layer = trn__layer_add(r, name);
        KEYS(2);
        b->proj.w_off = add_param(r, m, &off, (size_t)C * C, b->proj.layer, INIT_UNIFORM_FANIN, C, 0, kw, C, C);
        b->proj.b_off = add_param(r, m, &off, (size_t)C, b->proj.layer, INIT_ZERO, C, 0, kb, C, 0);
        snprintf(name, sizeof name, "h%d.ln2", l); b->ln2_l = trn__layer_add(r, name);
        KEYS(3);
        b->ln2w = add_param(r, m, &off, (size_t)C, b->ln2_l, INIT_ONE, C, 0, kw, C, 0);
        b->ln2b = add_param(r, m, &off, (size_t)C, b->ln2_l, INIT_ZERO, C, 0, kb, C, 0);
        snprintf(name, sizeof name, "h%d.fc", l); b->fc.layer = trn__layer_add(r, name);
        KEYS(4);
        b->fc.w_off = add_param(r, m, &off, (size_t)FF * C, b->fc.layer, INIT_UNIFORM_FANIN, C, 0, kw, FF, C);
        b->fc.b_off = add_param(r, m, &off, (size_t)FF, b->fc.layer, INIT_ZERO, C, 0, kb, FF, 0);
        snprintf(name, sizeof name, "h%d.fcproj", l); b->fcproj.layer = trn__layer_add(r, name);
        KEYS(5);
        b->fcproj.w_off = add_param(r, m, &off, (size_t)C * FF, b->fcproj.layer, INIT_UNIFORM_FANIN, FF, 0, kw, C, FF);
        b->fcproj.b_off = add_param(r, m, &off, (size_t)C, b->fcproj.layer, INIT_ZERO, FF, 0, kb, C, 0);
#undef KEYS
        b->res_in = dalloc(r, BT * C); b->ln1 = dalloc(r, BT * C); b->ln1_mean = dalloc(r, BT); b->ln1_rstd = dalloc(r, BT);
        b->qkv_out = dalloc(r, BT * 3 * C);
        b->scores = dalloc(r, (size_t)B * m->NH * T * T); b->att = dalloc(r, (size_t)B * m->NH * T * T);
        b->atty = dalloc(r, BT * C); b->proj_out = dalloc(r, BT * C); b->res2 = dalloc(r, BT * C);
        b->ln2 = dalloc(r, BT * C); b->ln2_mean = dalloc(r, BT); b->ln2_rstd = dalloc(r, BT);
        b->fch = dalloc(r, BT * FF); b->fch_gelu = dalloc(r, BT * FF); b->fcproj_out = dalloc(r, BT * C);
        b->res3 = dalloc(r, BT * C);
        lin_state *ls[4] = {&b->qkv, &b->proj, &b->fc, &b->fcproj};
        int io[4][2] = {{C, 3 * C}, {C, C}, {C, FF}, {FF, C}};
        for (int k = 0; k < 4; k++)
            if (trn__linear_init(r, ls[k], ls[k]->layer, io[k][0], io[k][1], ls[k]->w_off, ls[k]->b_off) ||
                trn__linear_reserve(r, ls[k], (int)BT))
                return 0;
    }
    m->lnf_layer = trn__layer_add(r, "lnf");
    m->lnfw = add_param(r, m, &off, (size_t)C, m->lnf_layer, INIT_ONE, C, 0, "ln_f.weight", C, 0);
    m->lnfb = add_param(r, m, &off, (size_t)C, m->lnf_layer, INIT_ZERO, C, 0, "ln_f.bias", C, 0);
    m->head.layer = trn__layer_add(r, "head");
    m->head.w_off = add_param(r, m, &off, (size_t)V * C, m->head.layer, INIT_UNIFORM_FANIN, C, 0, "lm_head.weight", V, C);
    m->head.b_off = add_param(r, m, &off, (size_t)V, m->head.layer, INIT_ZERO, C, 0, "lm_head.bias", V, 0);
    m->misc_layer = trn__layer_add(r, "loss");
    r->nparams = off;
    if (trn__linear_init(r, &m->head, m->head.layer, C, V, m->head.w_off, m->head.b_off) ||
        trn__linear_reserve(r, &m->head, (int)BT))
        return 0;
    /* attention: the bmm shapes of tf_attention_fwd / tf_attention_bwd */
    int hs = C / m->NH;
    if (trn__bmm_reserve(r, T, T, hs) || trn__bmm_reserve(r, T, hs, T) || !trn__fscratch(r, (size_t)T * T)) return 0;
    m->enc = dalloc(r, BT * C); m->lnf = dalloc(r, BT * C); m->lnf_mean = dalloc(r, BT); m->lnf_rstd = dalloc(r, BT);
    m->logits = dalloc(r, BT * V); m->probs = dalloc(r, BT * V);
    size_t gmax = BT * (FF > 3 * C ? FF : 3 * C);
    if (BT * V > gmax) gmax = BT * V;
    m->g1 = dalloc(r, gmax); m->g2 = dalloc(r, gmax); m->g3 = dalloc(r, gmax); m->g4 = dalloc(r, gmax);
    m->tok = alloc_chk(r, BT * sizeof(int)); m->tgt = alloc_chk(r, BT * sizeof(int));
    /* the backward's scratch */
    size_t wide = BT * (size_t)(FF > 3 * C ? FF : 3 * C);
    m->dres = dalloc(r, BT * C); m->dtmp = dalloc(r, BT * C);
    m->dbig = dalloc(r, wide); m->dbig2 = dalloc(r, wide);
    m->dlog = dalloc(r, BT * V);
    m->attw = dalloc(r, (size_t)T * T * 4 + (size_t)T * hs * 10);
    return 0;
}

/* The synthetic task: digits a_1..a_n, a separator, then the answer
 * b_1..b_n; the loss covers the answer positions only. */
static void tf_make_seq(const trn_model *m, const char *task, uint64_t seed, uint64_t idx, int *tok, int *tgt) {
    int n = m->ndig, T = m->T, sep = m->V - 1, vs = m->V - 1;
    int a[128], bb[128];
    for (int j = 0; j < n; j++) a[j] = (int)(fpemu_random64(seed, idx * (uint64_t)n + (uint64_t)j) % (uint64_t)vs);
    int acc = 0;
    for (int j = 0; j < n; j++) {
        if (!strcmp(task, "copy")) bb[j] = a[j];
        else if (!strcmp(task, "sum")) { acc = (acc + a[j]) % vs; bb[j] = acc; }
        else bb[j] = a[n - 1 - j];
    }
    for (int t = 0; t < n; t++) tok[t] = a[t];
    tok[n] = sep;
    for (int j = 1; j < n; j++) tok[n + j] = bb[j - 1];
    for (int t = 0; t < T; t++) tgt[t] = t >= n ? bb[t - n] : -1;
}

/* Is the parameter tensor at off a Linear layer's weight? */
static int is_linear_weight(const trn_model *m, size_t off) {
    if (m->kind == M_TRANSFORMER) {
        for (int l = 0; l < m->NL; l++) {
            const tblock *b = &m->blk[l];
            if (b->qkv.w_off == off || b->proj.w_off == off || b->fc.w_off == off || b->fcproj.w_off == off) return 1;
        }
        return m->head.w_off == off;
    }
    for (int i = 0; i < m->nlin; i++)
        if (m->lins[i].w_off == off) return 1;
    return 0;
}

int trn__model_build(trn_run *r, char *err, size_t errlen) {
    trn_model *m = calloc(1, sizeof *m);
    r->model = m;
    if (!m) { snprintf(err, errlen, "out of memory"); return -1; }
    if (!strcmp(r->cfg.model, "tiny-transformer")) {
        m->kind = M_TRANSFORMER;
        tf_build(r, m);
        m->neval = 256;
        m->eval_tok = alloc_chk(r, (size_t)m->neval * m->T * sizeof(int));
        m->eval_tgt = alloc_chk(r, (size_t)m->neval * m->T * sizeof(int));
        if (r->oom) { snprintf(err, errlen, "out of memory"); return -1; }
        for (int i = 0; i < m->neval; i++)
            tf_make_seq(m, r->cfg.task, 0x4556414cu /* fixed: the same eval set for every seed */, (uint64_t)i,
                        m->eval_tok + (size_t)i * m->T, m->eval_tgt + (size_t)i * m->T);
    } else {
        m->kind = !strcmp(r->cfg.model, "deep-mlp") ? M_DEEP : M_MLP;
        if (mlp_build(r, m, err, errlen)) return -1;
    }
    /* the rounding scratch: the parameters are cast whole (trn__model_init_params) */
    if (!r->oom) trn__fscratch(r, r->nparams);
    if (r->oom) { snprintf(err, errlen, "out of memory"); return -1; }
    for (int p = 0; p < m->np; p++) m->pd[p].linear_w = is_linear_weight(m, m->pd[p].off);
    return 0;
}

void trn__model_init_params(trn_run *r) {
    trn_model *m = r->model;
    uint64_t seed = fpemu_random64(r->seed, 0x494e4954u); /* "INIT" */
    for (int p = 0; p < m->np; p++) {
        const pdesc *d = &m->pd[p];
        double *w = r->params + d->off;
        for (size_t i = 0; i < d->n; i++) {
            uint64_t k = (uint64_t)(d->off + i);
            double bound = 1.0 / sqrt((double)d->fan_in);
            switch (d->init) {
            case INIT_UNIFORM_FANIN: w[i] = (2.0 * urand(seed, k) - 1.0) * bound; break; /* PyTorch Linear */
            case INIT_NORMAL_GAIN: w[i] = nrand(seed, k) * d->std * bound; break;
            case INIT_NORMAL: w[i] = nrand(seed, k) * d->std; break;
            case INIT_ZERO: w[i] = 0; break;
            case INIT_ONE: w[i] = 1; break;
            }
        }
    }
    int save = r->tel_on;
    r->tel_on = 0;
    if (!r->pol->msamp) trn__round(r, -1, CLS_PARAM, r->f_param, r->params, r->nparams);
    else
        for (int p = 0; p < m->np; p++) trn__param_round(r, p);
    r->tel_on = save;
    /* the Linear states (trn__linear_init, in the build) */
    if (m->kind == M_TRANSFORMER) m->head.hp = !r->cfg.fp8_head;
    else m->lins[m->nlin - 1].hp = !r->cfg.fp8_head; /* the classifier is the MLP's output head */
}

static void free_lin(lin_state *L) { trn__linear_free(L); }

void trn__model_free(trn_run *r) {
    trn_model *m = r->model;
    trn__tc_close(r);
    if (!m) return;
    if (m->kind == M_TRANSFORMER) {
        for (int l = 0; m->blk && l < m->NL; l++) {
            tblock *b = &m->blk[l];
            free_lin(&b->qkv); free_lin(&b->proj); free_lin(&b->fc); free_lin(&b->fcproj);
            double *bufs[] = {b->res_in, b->ln1, b->ln1_mean, b->ln1_rstd, b->qkv_out, b->scores, b->att, b->atty,
                              b->proj_out, b->res2, b->ln2, b->ln2_mean, b->ln2_rstd, b->fch, b->fch_gelu,
                              b->fcproj_out, b->res3};
            for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
        }
        free(m->blk);
        free_lin(&m->head);
        free(m->enc); free(m->lnf); free(m->lnf_mean); free(m->lnf_rstd); free(m->logits);
        free(m->tok); free(m->eval_tok); free(m->eval_tgt);
        free(m->g3); free(m->g4);
        free(m->dres); free(m->dtmp); free(m->dbig); free(m->dbig2); free(m->dlog); free(m->attw);
    } else {
        for (int i = 0; i < m->nlin; i++) { free_lin(&m->lins[i]); free(m->mh[i]); free(m->ma[i]); }
        free(m->lins); free(m->mh); free(m->ma); free(m->dims); free(m->perm);
    }
    free(m->probs); free(m->tgt); free(m->g1); free(m->g2); free(m->pd); free(m->tkeys);
    free(m);
    r->model = NULL;
    /* the run's scratch, sized by the build */
    trn__ws_free(r);
    free(r->fscratch); r->fscratch = NULL; r->fscratch_n = 0;
}

/* ---- MLP ----------------------------------------------------------------------- */

static void mlp_batch(trn_run *r, long step, int B) {
    trn_model *m = r->model;
    const double scale = r->cfg.input_scale;
    uint64_t seed = fpemu_random64(r->seed, 0x44415441u); /* "DATA" */
    for (int b = 0; b < B; b++) {
        long pos = step * B + b;
        if (r->order) { /* the caller's order (trn_set_order; trn_step checked its length) */
            int row = r->order[pos];
            for (int c = 0; c < 64; c++) m->ma[0][(size_t)b * 64 + c] = m->dx[(size_t)row * 64 + c] * scale;
            m->tgt[b] = m->dy[row];
            continue;
        }
        long epoch = pos / 1500;
        if (epoch != m->perm_epoch) {
            /* Fisher-Yates with a counter-based stream per epoch */
            for (int i = 0; i < 1500; i++) m->perm[i] = i;
            for (int i = 1499; i > 0; i--) {
                int j = (int)(fpemu_random64(seed, (uint64_t)epoch * 1500u + (uint64_t)i) % (uint64_t)(i + 1));
                int t = m->perm[i]; m->perm[i] = m->perm[j]; m->perm[j] = t;
            }
            m->perm_epoch = epoch;
        }
        int row = m->perm[pos % 1500];
        for (int c = 0; c < 64; c++) m->ma[0][(size_t)b * 64 + c] = m->dx[(size_t)row * 64 + c] * scale;
        m->tgt[b] = m->dy[row];
    }
}

/* forward over B rows already in ma[0]; returns the loss (in hi) */
static double mlp_forward(trn_run *r, int B, int int8) {
    trn_model *m = r->model;
    trn__round(r, m->lins[0].layer, CLS_ACT, r->f_param, m->ma[0], (size_t)B * 64); /* inputs cast before use */
    for (int i = 0; i < m->nlin; i++) {
        lin_state *L = &m->lins[i];
        const fpemu_format *in_fmt = i == 0 ? r->f_param : r->f_lo;
        if (int8) trn__linear_int8(r, L, m->mh[i], m->ma[i], B);
        else trn__linear_fwd(r, L, m->mh[i], m->ma[i], in_fmt, B, r->f_lo);
        if (i + 1 < m->nlin) trn__relu_fwd(m->ma[i + 1], m->mh[i], (size_t)B * m->dims[i + 1]);
    }
    int cnt;
    double *logits = m->mh[m->nlin - 1];
    double loss = trn__softmax_ce_fwd(m->probs, logits, m->tgt, B, 10, &cnt);
    trn__round(r, m->misc_layer, CLS_OUT, r->f_hi, m->probs, (size_t)B * 10);
    trn__round(r, m->misc_layer, CLS_OUT, r->f_hi, &loss, 1);
    return loss;
}

static void mlp_backward(trn_run *r, int B, double dloss) {
    trn_model *m = r->model;
    double *dh = m->g1, *da = m->g2;
    trn__softmax_ce_bwd(dh, m->probs, m->tgt, B, 10, dloss);
    trn__round(r, m->misc_layer, CLS_GRAD_IN, r->f_hi, dh, (size_t)B * 10);
    trn__round(r, m->misc_layer, CLS_GRAD_IN, r->f_lo, dh, (size_t)B * 10);
    for (int i = m->nlin - 1; i >= 0; i--) {
        lin_state *L = &m->lins[i];
        const fpemu_format *in_fmt = i == 0 ? r->f_param : r->f_lo;
        trn__linear_bwd(r, L, i ? da : NULL, in_fmt, dh, m->ma[i], B, r->f_lo);
        if (i) trn__relu_bwd(dh, da, m->mh[i - 1], (size_t)B * m->dims[i]);
    }
}

/* ---- transformer ------------------------------------------------------------------ */

static void tf_attention_fwd(trn_run *r, tblock *b, int B) {
    trn_model *m = r->model;
    int T = m->T, C = m->C, NH = m->NH, hs = C / NH;
    double *Q = m->g1, *K = m->g2, *Vt = m->g3, *attq = m->g4;
    double sc = 1.0 / sqrt((double)hs);
    for (int bb = 0; bb < B; bb++)
        for (int h = 0; h < NH; h++) {
            for (int t = 0; t < T; t++)
                for (int j = 0; j < hs; j++) {
                    const double *row = b->qkv_out + ((size_t)bb * T + t) * 3 * C;
                    Q[t * hs + j] = row[h * hs + j];
                    K[t * hs + j] = row[C + h * hs + j];
                    Vt[j * T + t] = row[2 * C + h * hs + j];
                }
            double *S = b->scores + ((size_t)bb * NH + h) * T * T, *A = b->att + ((size_t)bb * NH + h) * T * T;
            trn__bmm(r, b->attn, T, T, hs, Q, K, S, r->f_lo, r->f_lo, r->f_lo);
            for (int i = 0; i < T * T; i++) S[i] *= sc;
            trn__round(r, b->attn, CLS_OUT, r->f_lo, S, (size_t)T * T);
            trn__causal_softmax_fwd(A, S, T);
            trn__round(r, b->attn, CLS_OUT, r->f_hi, A, (size_t)T * T);
            /* y = att . v : A = att [T][T], B = v^T [hs][T] */
            memcpy(attq, A, (size_t)T * T * sizeof *attq);
            double *y = m->g1 + (size_t)T * hs; /* after Q: free space */
            trn__bmm(r, b->attn, T, hs, T, attq, Vt, y, r->f_hi, r->f_lo, r->f_lo);
            for (int t = 0; t < T; t++)
                for (int j = 0; j < hs; j++) b->atty[((size_t)bb * T + t) * C + h * hs + j] = y[t * hs + j];
        }
}

static void transpose_d(double *dst, const double *src, int rows, int cols) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) dst[(size_t)j * rows + i] = src[(size_t)i * cols + j];
}

/* datty [B*T][C] -> dqkv [B*T][3C] */
static void tf_attention_bwd(trn_run *r, tblock *b, int B, const double *datty, double *dqkv) {
    trn_model *m = r->model;
    int T = m->T, C = m->C, NH = m->NH, hs = C / NH;
    double sc = 1.0 / sqrt((double)hs);
    size_t TT = (size_t)T * T, Th = (size_t)T * hs;
    double *w = m->attw; /* TT * 4 + Th * 10 values (tf_build) */
    double *dy = w, *V = dy + Th, *Q = V + Th, *K = Q + Th, *dyT = K + Th, *QT = dyT + Th, *KT = QT + Th;
    double *attlo = KT + Th, *attT = attlo + TT, *datt = attT + TT, *dS = datt + TT;
    double *dq = dS + TT, *dk = dq + Th, *dv = dk + Th;
    for (int bb = 0; bb < B; bb++)
        for (int h = 0; h < NH; h++) {
            for (int t = 0; t < T; t++)
                for (int j = 0; j < hs; j++) {
                    const double *row = b->qkv_out + ((size_t)bb * T + t) * 3 * C;
                    Q[t * hs + j] = row[h * hs + j];
                    K[t * hs + j] = row[C + h * hs + j];
                    V[t * hs + j] = row[2 * C + h * hs + j];
                    dy[t * hs + j] = datty[((size_t)bb * T + t) * C + h * hs + j];
                }
            const double *A = b->att + ((size_t)bb * NH + h) * TT;
            /* datt = dy . V^T (NT: A = dy, B = V); grad of the lo cast, then to att's format */
            trn__bmm(r, b->attn, T, T, hs, dy, V, datt, r->f_lo, r->f_lo, r->f_lo);
            trn__round(r, b->attn, CLS_GRAD_IN, r->f_hi, datt, TT);
            /* dV = att^T . dy: A = (att in lo)^T [T][T], B = dy^T [hs][T] */
            memcpy(attlo, A, TT * sizeof *attlo);
            trn__round(r, -1, CLS_ACT, r->f_lo, attlo, TT);
            transpose_d(attT, attlo, T, T);
            transpose_d(dyT, dy, T, hs);
            trn__bmm(r, b->attn, T, hs, T, attT, dyT, dv, r->f_lo, r->f_lo, r->f_lo);
            /* softmax backward in hi, then to the scores' format, then the scale */
            trn__causal_softmax_bwd(dS, datt, A, T);
            trn__round(r, b->attn, CLS_GRAD_IN, r->f_hi, dS, TT);
            trn__round(r, b->attn, CLS_GRAD_IN, r->f_lo, dS, TT);
            for (size_t i = 0; i < TT; i++) dS[i] *= sc;
            trn__round(r, b->attn, CLS_GRAD_IN, r->f_lo, dS, TT);
            /* dQ = dS . K: B = K^T [hs][T]; dK = dS^T . Q: A = dS^T, B = Q^T */
            transpose_d(KT, K, T, hs);
            trn__bmm(r, b->attn, T, hs, T, dS, KT, dq, r->f_lo, r->f_lo, r->f_lo);
            transpose_d(attT, dS, T, T);
            transpose_d(QT, Q, T, hs);
            trn__bmm(r, b->attn, T, hs, T, attT, QT, dk, r->f_lo, r->f_lo, r->f_lo);
            for (int t = 0; t < T; t++)
                for (int j = 0; j < hs; j++) {
                    double *row = dqkv + ((size_t)bb * T + t) * 3 * C;
                    row[h * hs + j] = dq[t * hs + j];
                    row[C + h * hs + j] = dk[t * hs + j];
                    row[2 * C + h * hs + j] = dv[t * hs + j];
                }
        }
}

static double tf_forward(trn_run *r, int B, int int8) {
    trn_model *m = r->model;
    int T = m->T, C = m->C, FF = m->FF, V = m->V;
    size_t BT = (size_t)B * T;
    const double *P = r->params;
    const fpemu_format *fres = trn__widest(r->f_param, r->f_lo);
    m->f_res = fres;
    trn__embedding_fwd(m->enc, m->tok, P + m->wte, P + m->wpe, B, T, C);
    trn__round(r, m->emb_layer, CLS_OUT, r->f_param, m->enc, BT * C);
    const double *res = m->enc;
    for (int l = 0; l < m->NL; l++) {
        tblock *b = &m->blk[l];
        memcpy(b->res_in, res, BT * C * sizeof(double));
        trn__layernorm_fwd(b->ln1, b->ln1_mean, b->ln1_rstd, b->res_in, P + b->ln1w, P + b->ln1b, (int)BT, C);
        trn__round(r, b->ln1_l, CLS_OUT, r->f_hi, b->ln1, BT * C);
        if (int8) trn__linear_int8(r, &b->qkv, b->qkv_out, b->ln1, (int)BT);
        else trn__linear_fwd(r, &b->qkv, b->qkv_out, b->ln1, r->f_hi, (int)BT, r->f_lo);
        tf_attention_fwd(r, b, B);
        if (int8) trn__linear_int8(r, &b->proj, b->proj_out, b->atty, (int)BT);
        else trn__linear_fwd(r, &b->proj, b->proj_out, b->atty, r->f_lo, (int)BT, r->f_lo);
        trn__residual_fwd(b->res2, b->res_in, b->proj_out, BT * C);
        trn__round(r, b->ln1_l, CLS_OUT, fres, b->res2, BT * C);
        trn__layernorm_fwd(b->ln2, b->ln2_mean, b->ln2_rstd, b->res2, P + b->ln2w, P + b->ln2b, (int)BT, C);
        trn__round(r, b->ln2_l, CLS_OUT, r->f_hi, b->ln2, BT * C);
        if (int8) trn__linear_int8(r, &b->fc, b->fch, b->ln2, (int)BT);
        else trn__linear_fwd(r, &b->fc, b->fch, b->ln2, r->f_hi, (int)BT, r->f_lo);
        trn__gelu_fwd(b->fch_gelu, b->fch, BT * FF);
        trn__round(r, b->fc.layer, CLS_OUT, r->f_lo, b->fch_gelu, BT * FF);
        if (int8) trn__linear_int8(r, &b->fcproj, b->fcproj_out, b->fch_gelu, (int)BT);
        else trn__linear_fwd(r, &b->fcproj, b->fcproj_out, b->fch_gelu, r->f_lo, (int)BT, r->f_lo);
        trn__residual_fwd(b->res3, b->res2, b->fcproj_out, BT * C);
        trn__round(r, b->ln2_l, CLS_OUT, fres, b->res3, BT * C);
        res = b->res3;
    }
    trn__layernorm_fwd(m->lnf, m->lnf_mean, m->lnf_rstd, res, P + m->lnfw, P + m->lnfb, (int)BT, C);
    trn__round(r, m->lnf_layer, CLS_OUT, r->f_hi, m->lnf, BT * C);
    if (int8) trn__linear_int8(r, &m->head, m->logits, m->lnf, (int)BT);
    else trn__linear_fwd(r, &m->head, m->logits, m->lnf, r->f_hi, (int)BT, r->f_lo);
    int cnt;
    double loss = trn__softmax_ce_fwd(m->probs, m->logits, m->tgt, (int)BT, V, &cnt);
    trn__round(r, m->misc_layer, CLS_OUT, r->f_hi, m->probs, BT * V);
    trn__round(r, m->misc_layer, CLS_OUT, r->f_hi, &loss, 1);
    return loss;
}

/* grads of a LayerNorm: dinp to in_fmt, dw/db to the parameter-gradient format */
static void ln_bwd(trn_run *r, int layer, double *dinp, size_t w, size_t bo, const double *dout, const double *inp,
                   const double *mean, const double *rstd, int N, int C, const fpemu_format *in_fmt) {
    trn__layernorm_bwd(dinp, r->grads + w, r->grads + bo, dout, inp, r->params + w, mean, rstd, N, C);
    trn__round(r, layer, CLS_GRAD_IN, r->f_hi, dinp, (size_t)N * C);
    trn__round(r, layer, CLS_GRAD_IN, in_fmt, dinp, (size_t)N * C);
    trn__round(r, layer, CLS_GRAD_W, r->f_param, r->grads + w, (size_t)C);
    trn__round(r, layer, CLS_GRAD_W, r->f_param, r->grads + bo, (size_t)C);
}

static void tf_backward(trn_run *r, int B, double dloss) {
    trn_model *m = r->model;
    int T = m->T, C = m->C, FF = m->FF, V = m->V;
    size_t BT = (size_t)B * T;
    const fpemu_format *fres = m->f_res;
    /* the build's scratch, sized for Bmax rows */
    double *dres = m->dres, *dtmp = m->dtmp, *dbig = m->dbig, *dbig2 = m->dbig2, *dlog = m->dlog;
    trn__softmax_ce_bwd(dlog, m->probs, m->tgt, (int)BT, V, dloss);
    trn__round(r, m->misc_layer, CLS_GRAD_IN, r->f_hi, dlog, BT * V);
    trn__round(r, m->misc_layer, CLS_GRAD_IN, r->f_lo, dlog, BT * V);
    trn__linear_bwd(r, &m->head, dtmp, r->f_hi, dlog, m->lnf, (int)BT, r->f_lo);
    const double *res_last = m->NL ? m->blk[m->NL - 1].res3 : m->enc;
    ln_bwd(r, m->lnf_layer, dres, m->lnfw, m->lnfb, dtmp, res_last, m->lnf_mean, m->lnf_rstd, (int)BT, C, fres);
    for (int l = m->NL - 1; l >= 0; l--) {
        tblock *b = &m->blk[l];
        /* res3 = res2 + fcproj: both get dres (the fcproj branch in its format) */
        memcpy(dtmp, dres, BT * C * sizeof(double));
        trn__round(r, b->fcproj.layer, CLS_GRAD_IN, r->f_lo, dtmp, BT * C);
        trn__linear_bwd(r, &b->fcproj, dbig, r->f_lo, dtmp, b->fch_gelu, (int)BT, r->f_lo);
        trn__gelu_bwd(dbig2, dbig, b->fch, BT * FF);
        trn__round(r, b->fc.layer, CLS_GRAD_IN, r->f_lo, dbig2, BT * FF);
        trn__linear_bwd(r, &b->fc, dtmp, r->f_hi, dbig2, b->ln2, (int)BT, r->f_lo);
        ln_bwd(r, b->ln2_l, dbig, b->ln2w, b->ln2b, dtmp, b->res2, b->ln2_mean, b->ln2_rstd, (int)BT, C, fres);
        for (size_t i = 0; i < BT * C; i++) dres[i] += dbig[i];
        trn__round(r, b->ln2_l, CLS_GRAD_IN, fres, dres, BT * C);
        /* res2 = res_in + proj */
        memcpy(dtmp, dres, BT * C * sizeof(double));
        trn__round(r, b->proj.layer, CLS_GRAD_IN, r->f_lo, dtmp, BT * C);
        trn__linear_bwd(r, &b->proj, dbig, r->f_lo, dtmp, b->atty, (int)BT, r->f_lo);
        tf_attention_bwd(r, b, B, dbig, dbig2);
        trn__linear_bwd(r, &b->qkv, dtmp, r->f_hi, dbig2, b->ln1, (int)BT, r->f_lo);
        ln_bwd(r, b->ln1_l, dbig, b->ln1w, b->ln1b, dtmp, b->res_in, b->ln1_mean, b->ln1_rstd, (int)BT, C, fres);
        for (size_t i = 0; i < BT * C; i++) dres[i] += dbig[i];
        trn__round(r, b->ln1_l, CLS_GRAD_IN, fres, dres, BT * C);
    }
    /* the embedding's output is in the parameters' format */
    trn__round(r, m->emb_layer, CLS_GRAD_IN, r->f_param, dres, BT * C);
    memset(r->grads + m->wte, 0, (size_t)V * C * sizeof(double));
    memset(r->grads + m->wpe, 0, (size_t)T * C * sizeof(double));
    trn__embedding_bwd(r->grads + m->wte, r->grads + m->wpe, dres, m->tok, B, T, C);
    trn__round(r, m->emb_layer, CLS_GRAD_W, r->f_param, r->grads + m->wte, (size_t)V * C);
    trn__round(r, m->emb_layer, CLS_GRAD_W, r->f_param, r->grads + m->wpe, (size_t)T * C);
}

/* ---- entry points ------------------------------------------------------------------- */

static void invalidate(trn_model *m) {
    if (m->kind == M_TRANSFORMER) {
        for (int l = 0; l < m->NL; l++) {
            m->blk[l].qkv.wq_valid = m->blk[l].proj.wq_valid = 0;
            m->blk[l].fc.wq_valid = m->blk[l].fcproj.wq_valid = 0;
        }
        m->head.wq_valid = 0;
    } else {
        for (int i = 0; i < m->nlin; i++) m->lins[i].wq_valid = 0;
    }
}

int trn__model_train_batch(trn_run *r, long step, double dloss, double *loss) {
    trn_model *m = r->model;
    int B = (int)r->cfg.batch_size;
    memset(r->grads, 0, r->nparams * sizeof(double));
    if (m->kind == M_TRANSFORMER) {
        uint64_t seed = fpemu_random64(r->seed, 0x44415441u);
        for (int b = 0; b < B; b++)
            tf_make_seq(m, r->cfg.task, seed, (uint64_t)(step * B + b), m->tok + (size_t)b * m->T, m->tgt + (size_t)b * m->T);
        *loss = tf_forward(r, B, 0);
        tf_backward(r, B, dloss);
    } else if (r->tc) {
        mlp_batch(r, step, B);
        return trn__tc_train_batch(r, m->ma[0], m->tgt, B, dloss, loss);
    } else {
        mlp_batch(r, step, B);
        *loss = mlp_forward(r, B, 0);
        mlp_backward(r, B, dloss);
    }
    return 0;
}

void trn__model_step_end(trn_run *r) {
    trn_model *m = r->model;
    if (m->kind == M_TRANSFORMER) {
        for (int l = 0; l < m->NL; l++) {
            trn__linear_step_end(r, &m->blk[l].qkv); trn__linear_step_end(r, &m->blk[l].proj);
            trn__linear_step_end(r, &m->blk[l].fc); trn__linear_step_end(r, &m->blk[l].fcproj);
        }
        trn__linear_step_end(r, &m->head);
    } else {
        for (int i = 0; i < m->nlin; i++) trn__linear_step_end(r, &m->lins[i]);
    }
}

int trn__model_eval(trn_run *r, double *loss, double *acc) {
    trn_model *m = r->model;
    int int8 = r->pol->int8_eval;
    int EB = 64;
    double lsum = 0;
    long correct = 0, total = 0, nb = 0;
    if (r->tc) return trn__tc_eval(r, m->dx + (size_t)1500 * 64, r->cfg.input_scale, m->dy + 1500, m->dn - 1500, loss, acc);
    invalidate(m);
    if (m->kind == M_TRANSFORMER) {
        int T = m->T, V = m->V;
        for (int s = 0; s < m->neval; s += EB) {
            int B = m->neval - s < EB ? m->neval - s : EB;
            memcpy(m->tok, m->eval_tok + (size_t)s * T, (size_t)B * T * sizeof(int));
            memcpy(m->tgt, m->eval_tgt + (size_t)s * T, (size_t)B * T * sizeof(int));
            lsum += tf_forward(r, B, int8) * B;
            nb += B;
            for (int i = 0; i < B * T; i++) {
                if (m->tgt[i] < 0) continue;
                const double *l = m->logits + (size_t)i * V;
                int best = 0;
                for (int v = 1; v < V; v++) if (l[v] > l[best]) best = v;
                correct += best == m->tgt[i];
                total++;
            }
        }
    } else {
        for (int s = 1500; s < m->dn; s += EB) {
            int B = m->dn - s < EB ? m->dn - s : EB;
            for (int b = 0; b < B; b++) {
                for (int c = 0; c < 64; c++) m->ma[0][(size_t)b * 64 + c] = m->dx[(size_t)(s + b) * 64 + c] * r->cfg.input_scale;
                m->tgt[b] = m->dy[s + b];
            }
            lsum += mlp_forward(r, B, int8) * B;
            nb += B;
            const double *logits = m->mh[m->nlin - 1];
            for (int b = 0; b < B; b++) {
                int best = 0;
                for (int v = 1; v < 10; v++) if (logits[b * 10 + v] > logits[b * 10 + best]) best = v;
                correct += best == m->tgt[b];
                total++;
            }
        }
    }
    invalidate(m);
    *loss = lsum / (double)nb;
    *acc = total ? (double)correct / (double)total : 0;
    return 0;
}

/* Parameter tensors, for the optimiser's telemetry and the tests. */
int trn__model_param_count(const trn_run *r) { return r->model->np; }
void trn__model_param(const trn_run *r, int i, size_t *off, size_t *n, int *layer) {
    *off = r->model->pd[i].off; *n = r->model->pd[i].n; *layer = r->model->pd[i].layer;
}

int trn__model_param_is_linear_weight(const trn_run *r, int i) { return r->model->pd[i].linear_w; }

int trn__model_twin_keys(const trn_run *r, const trn_param_key **keys) {
    *keys = r->model->tkeys;
    return r->model->np;
}

int trn__model_linears(trn_run *r, lin_state **out, int max) {
    trn_model *m = r->model;
    int n = 0;
#define PUT(L) do { if (n < max) out[n] = (L); n++; } while (0)
    if (m->kind == M_TRANSFORMER) {
        for (int l = 0; l < m->NL; l++) {
            PUT(&m->blk[l].qkv); PUT(&m->blk[l].proj); PUT(&m->blk[l].fc); PUT(&m->blk[l].fcproj);
        }
        PUT(&m->head);
    } else {
        for (int i = 0; i < m->nlin; i++) PUT(&m->lins[i]);
    }
#undef PUT
    return n;
}
