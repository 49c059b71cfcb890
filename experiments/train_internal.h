/* SPDX-License-Identifier: MIT */
/* train_internal.h: shared between the engine's files (not installed). */
#ifndef FPEMU_TRAIN_INTERNAL_H
#define FPEMU_TRAIN_INTERNAL_H
#include "fpemu.h"
#include "scaling.h"
#include "train.h"

/* Telemetry classes (tensors.csv `class` column). */
enum {
    CLS_ACT = 0,   /* GEMM input activations cast to the GEMM format */
    CLS_WEIGHT,    /* weights (and biases) cast for a GEMM, once per step */
    CLS_OUT,       /* outputs rounded to their format (GEMM outputs, autocast ops) */
    CLS_GRAD_OUT,  /* incoming gradients cast for the backward GEMMs */
    CLS_GRAD_IN,   /* gradients of activations rounded to their format */
    CLS_GRAD_W,    /* weight gradients rounded to their format */
    CLS_PARAM,     /* parameters rounded after the update */
    CLS_OPT_M,     /* optimiser state: first moment / momentum */
    CLS_OPT_V,     /* optimiser state: second moment */
    CLS_COUNT
};
extern const char *const trn__cls_names[CLS_COUNT];

typedef enum { RECIPE_NONE = 0, RECIPE_DELAYED, RECIPE_CURRENT, RECIPE_ROWWISE, RECIPE_BLOCKWISE, RECIPE_MX } trn_recipe;

/* A precision policy (docs/training.md): which format each tensor is in.
 * Format names; "f64" means the engine's f64 storage, untouched. */
typedef struct pol_def {
    const char *name;
    const char *param;  /* parameters the optimiser updates (master weights) */
    const char *hi;     /* results of ops autocast keeps in f32 (softmax, layer_norm, losses) */
    const char *lo;     /* results of GEMM-like ops and of the elementwise ops after them */
    trn_recipe recipe;  /* how Linear GEMM inputs are quantised (NONE: cast to lo) */
    const char *fp8_format;      /* default fp8_format */
    const char *m_fmt, *v_fmt;   /* optimiser state storage */
    const char *gw_fmt;          /* weight gradients cast to this (with a per-tensor scale), or NULL */
    int m_scaled;                /* both Adam moments stored with a per-tensor scale (MS-AMP O2) */
    int sr_update;               /* stochastic rounding of the parameter update */
    const char *scaler;          /* default scaler */
    int int8_eval;               /* evaluation through quantize_dynamic int8 Linear layers */
    int msamp;                   /* MS-AMP ScalingTensors: power-of-two scales (fpemu_scaling_msamp_scale)
                                  * for the GEMM inputs, gw, the scaled moments and the Linear
                                  * weights (f16 with a scale); gw for Linear weights only */
    const char *doc;
} pol_def;
const pol_def *trn__policy_find(const char *name);
/* The fp8 forward and gradient formats of a run (policy.c: from the mma preset's row). */
void trn__fp8_formats(const trn_settings *s, const char **fwd, const char **bwd);

/* One telemetry slot: a class in a layer, cast to one format, over a step.
 * A class may be cast to two formats in one layer (an fp8 policy's weight
 * goes to e4m3 while its bias is rounded to bf16), so each (layer, class)
 * has TEL_FMTS slots, filled in the order the formats first appear: each
 * format keeps its own counts, amax and scale, and gets its own row. */
#define TEL_FMTS 2
#define TEL_PER_LAYER (CLS_COUNT * TEL_FMTS)
typedef struct tel_slot {
    fpemu_cast_stats st;
    double amax, scale_min;
    const fpemu_format *fmt;
} tel_slot;

/* The per-tensor scale of one GEMM operand: delayed scaling's history and
 * scale (TransformerEngine; the library's fpemu_scaling_delayed, emu/scaling.c,
 * slot 0 collecting this step's amax), or MS-AMP's scale alone (d.scale). */
typedef struct dscale {
    fpemu_scaling_delayed d;
} dscale;

enum { ROLE_X = 0, ROLE_W, ROLE_DY, ROLE_COUNT };

/* A Linear layer's per-step state. */
typedef struct lin_state {
    int layer;                 /* telemetry layer index */
    int in, out;               /* features */
    size_t w_off, b_off;       /* parameter offsets (b_off = (size_t)-1: no bias) */
    double *wq;                /* weights as used by the GEMM this step (cast/quantised) */
    double *wq_scale;          /* per-row/block dequantisation factors for wq (NULL: none); points into wq_scale_buf */
    double *wq_scale_buf; size_t wq_scale_cap; /* its storage (doubles), sized by trn__linear_init */
    int wq_valid;
    double *bq;                /* bias cast to the output format */
    dscale ds[ROLE_COUNT];
    int hp;                    /* left out of the fp8 recipe: runs in the autocast type (fp8_head=0) */
} lin_state;

typedef struct trn_model trn_model;

/* Scratch buffers of the GEMM path, one per use (gemm_policy.c), owned by
 * the run: trn__model_build sizes each for the largest call the model
 * makes (trn__linear_reserve, trn__bmm_reserve), so a step allocates
 * nothing; a call that needs more grows its buffer (checked, as below). */
enum {
    WS_GEMM = 0,            /* f32 copies of a GEMM's operands and result */
    WS_SG_A,                /* a quantised operand's per-block decode and encode factors and block amax */
    WS_SG_B,                /* scaled_gemm's f32 decode factors of A and B per K block */
    WS_XQ, WS_DQ0,          /* Linear forward: quantised input and its scales */
    WS_T1, WS_T2, WS_Q1, WS_Q2, WS_DQ1, WS_DQ2, /* Linear backward: transposes, quantised operands, scales */
    WS_BMM_A, WS_BMM_B,     /* attention bmm: operands cast to the autocast type */
    WS_I8,                  /* int8 Linear: weights, a row of activations, a row of weights */
    WS_COUNT
};
typedef struct trn_buf { void *p; size_t cap; } trn_buf;

struct trn_run {
    trn_settings cfg;
    uint64_t seed;
    const pol_def *pol;
    const fpemu_format *f_param, *f_hi, *f_lo, *f_m, *f_v, *f_gw;
    const fpemu_format *f8_fwd, *f8_bwd;   /* fp8 element formats */
    const fpemu_format *f_f32;
    int threads;
    /* parameters: one allocation each (llm.c) */
    size_t nparams;
    double *params, *grads, *opt_m, *opt_v, *opt_d;
    long opt_step;                 /* optimizer steps taken (not counting skipped) */
    long step;                     /* steps done */
    trn_scaler scaler;
    int scaler_enabled;
    trn_model *model;
    /* telemetry */
    int nlayers;
    char (*layer_names)[40];
    tel_slot *tel;                 /* nlayers * TEL_PER_LAYER */
    int tel_on;                    /* 0 during evaluation */
    uint64_t step_casts, step_overflow, step_underflow;
    int rec_count;
    trn_tensor_rec *recs;
    /* scratch */
    float *fscratch; size_t fscratch_n;
    trn_buf ws[WS_COUNT];
    unsigned long ws_grows;        /* times a scratch buffer grew (tests: none after trn_open) */
    int in_eval;
    int gemm_failed;               /* set by a GEMM that could not run */
    int oom;                       /* set by an allocation that failed (trn_open, trn_step, trn_eval report it) */
    int mx_native;                 /* the GEMM backend scales MX blocks inside the MMA */
    int fp8_unscaled;              /* fp8_scaling=none: fp8 casts with scale 1 */
    /* mma_algo=cublas: the tree table (emu's built-in copy), and the
     * tensor-core GEMM calls by formats and shape (trn_gemm_call_groups) */
    struct fpemu_sumtree_table *cublas_tab;
    trn_gemm_calls calls[TRN_GEMM_CALLS_MAX];
    int ncalls;
    long calls_table, calls_plain;
    /* tests: steps (1-based) whose gradients get an inf injected after backward */
    const long *inject_inf; int ninject_inf;
    /* numerics=torch-cuda: PyTorch's CUDA ops for the MLP models (torch_cuda.c) */
    struct trn_tc *tc;
    /* a given start (trn_set_param, trn_set_order; kept in the state blob) */
    unsigned char *param_set;      /* per twin key: set by trn_set_param (until trn_init_finish) */
    double *init_params;           /* the given initial parameters (after rounding); NULL: drawn from the seed */
    int32_t *order; size_t norder; /* training rows in order; NULL: the seed's shuffle */
    char *src_path[2]; uint32_t src_crc[2]; /* TRN_SRC_INIT, TRN_SRC_ORDER */
};

/* ---- casting with telemetry (tensorops.c) ---- */
/* Round x[0..n) to fmt in place (NULL or f64: nothing; f32: native). Low
 * precision casts go through fpemu_round_f32 and count in slot (layer, cls). */
void trn__round(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n);
/* Same, with saturation and a multiplication by scale before the cast. */
void trn__round_scaled(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n,
                       double scale, int sat, double unscaled_amax);
/* Stochastic rounding to fmt with the run's counter stream at `counter`. */
void trn__round_sr(trn_run *r, int layer, int cls, const fpemu_format *fmt, double *x, size_t n, uint64_t counter);
const fpemu_format *trn__widest(const fpemu_format *a, const fpemu_format *b);
int trn__is_low(const fpemu_format *f);
/* The rounding scratch, at least n floats; NULL (and r->oom set) if it
 * cannot grow. */
float *trn__fscratch(trn_run *r, size_t n);
/* Scratch buffer `slot` (WS_*) of at least bytes; NULL (and r->oom set) if
 * it cannot grow. Its contents are not kept across calls. */
void *trn__ws(trn_run *r, int slot, size_t bytes);
void trn__ws_free(trn_run *r);
/* Add a cast's statistics to slot (layer, cls) and the step totals. */
void trn__account(trn_run *r, int layer, int cls, const fpemu_format *fmt, const fpemu_cast_stats *st,
                  double amax, double scale);
void trn__tel_reset(trn_run *r);
/* A telemetry layer: its index, or -1 (and r->oom set) out of memory. */
int trn__layer_add(trn_run *r, const char *name);

/* ---- GEMMs (gemm_policy.c) ---- */
/* C[M][N] = sum_k A[m][k] B[n][k], inputs already in fmt_in (values as f64),
 * through the tensor-core model of the run's mma for that input format;
 * the f32 (f64 for f64 inputs) accumulator result is written to C. */
void trn__gemm(trn_run *r, int M, int N, int K, const double *A, const double *B, double *C,
               const fpemu_format *fmt_a, const fpemu_format *fmt_b);
/* Linear layer through the policy: forward out[BT][OC] = in[BT][C] W^T + b. */
void trn__linear_fwd(trn_run *r, lin_state *L, double *out, const double *in, const fpemu_format *in_fmt,
                     int BT, const fpemu_format *out_fmt);
/* Backward: dinp (may be NULL) and accumulates weight/bias grads into r->grads
 * (already rounded to the parameter-gradient format). */
void trn__linear_bwd(trn_run *r, lin_state *L, double *dinp, const fpemu_format *in_fmt, const double *dout,
                     const double *in, int BT, const fpemu_format *out_fmt);
/* 0, or -1 out of memory (L is then still freeable by trn__linear_free). */
int trn__linear_init(trn_run *r, lin_state *L, int layer, int in, int out, size_t w_off, size_t b_off);
void trn__linear_free(lin_state *L);
/* Size the run's scratch for every call this Linear makes with up to BT
 * rows (forward, backward, int8 evaluation), and for an attention bmm of
 * M x N x K: 0, or -1 out of memory (r->oom set). */
int trn__linear_reserve(trn_run *r, const lin_state *L, int BT);
int trn__bmm_reserve(trn_run *r, int M, int N, int K);
void trn__linear_step_end(trn_run *r, lin_state *L);  /* delayed scaling update, cache invalidation */
/* int8 quantize_dynamic Linear (evaluation). */
void trn__linear_int8(trn_run *r, lin_state *L, double *out, const double *in, int BT);
/* A batched matmul of attention (GEMM-like under autocast, not fp8). */
void trn__bmm(trn_run *r, int layer, int M, int N, int K, const double *A, const double *B, double *C,
              const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *out_fmt);

/* ---- layers (layers.c): f64 kernels, pairs forward/backward ---- */
void trn__relu_fwd(double *out, const double *inp, size_t n);
void trn__relu_bwd(double *dinp, const double *dout, const double *inp, size_t n);
void trn__gelu_fwd(double *out, const double *inp, size_t n);
void trn__gelu_bwd(double *dinp, const double *dout, const double *inp, size_t n);
void trn__layernorm_fwd(double *out, double *mean, double *rstd, const double *inp, const double *w,
                        const double *b, int N, int C);
void trn__layernorm_bwd(double *dinp, double *dw, double *db, const double *dout, const double *inp,
                        const double *w, const double *mean, const double *rstd, int N, int C);
/* Mean cross-entropy over rows with target >= 0; probs[N][V]. Returns the loss. */
double trn__softmax_ce_fwd(double *probs, const double *logits, const int *targets, int N, int V, int *count);
void trn__softmax_ce_bwd(double *dlogits, const double *probs, const int *targets, int N, int V, double dloss);
void trn__embedding_fwd(double *out, const int *tok, const double *wte, const double *wpe, int B, int T, int C);
void trn__embedding_bwd(double *dwte, double *dwpe, const double *dout, const int *tok, int B, int T, int C);
void trn__residual_fwd(double *out, const double *a, const double *b, size_t n);
/* softmax over rows with a causal mask: att[T][T] row t uses 0..t. */
void trn__causal_softmax_fwd(double *att, const double *scores, int T);
void trn__causal_softmax_bwd(double *dscores, const double *datt, const double *att, int T);

/* ---- models (model.c) ---- */
int trn__model_build(trn_run *r, char *err, size_t errlen);
void trn__model_free(trn_run *r);
void trn__model_init_params(trn_run *r);
/* Forward + backward on training batch `step` (0-based), dloss = loss scale.
 * Fills *loss (unscaled). grads are set (not accumulated). */
int trn__model_train_batch(trn_run *r, long step, double dloss, double *loss);
int trn__model_eval(trn_run *r, double *loss, double *acc);
void trn__model_step_end(trn_run *r);
int trn__model_param_count(const trn_run *r);
void trn__model_param(const trn_run *r, int i, size_t *off, size_t *n, int *layer);
/* Every Linear layer of the model, in a fixed order (checkpoints): the
 * first max of them in out (out may be NULL when max is 0); returns how
 * many there are (4 x depth + 1 for the transformer, depth + 1 for an MLP). */
int trn__model_linears(trn_run *r, lin_state **out, int max);
/* Is parameter tensor i (as trn__model_param) a Linear layer's weight? */
int trn__model_param_is_linear_weight(const trn_run *r, int i);
/* The PyTorch twin's state_dict keys (python/fpemu/twins.py): one for each
 * parameter tensor, key i being tensor i of trn__model_param. Returns the
 * count; *keys points into the model. */
int trn__model_twin_keys(const trn_run *r, const trn_param_key **keys);
/* Forward + backward on given inputs for tests: see t_layers. */

/* ---- optimiser (optim.c) ---- */
void trn__optim_step(trn_run *r);
/* Unscale grads by inv (rounding to the grad format), returns 1 if any is inf/NaN. */
int trn__unscale_check(trn_run *r, float inv, double *norm);
int trn__grad_cast(trn_run *r); /* 1 if a gradient was inf or NaN before its fp8 cast */
/* Round parameter tensor p (as trn__model_param) to the parameters' format
 * (MS-AMP: a Linear weight is an f16 ScalingTensor, cast with its own scale). */
void trn__param_round(trn_run *r, int p);

/* ---- numerics=torch-cuda (torch_cuda.c) ----
 * The run's parameters, gradients and AdamW moments stay in its f64 arrays,
 * each holding an f32 value; these calls compute as PyTorch's CUDA kernels
 * do. trn__tc_open: 0, or -1 with a message (r->oom set out of memory);
 * layers: the engine's layer of each Linear, then the loss's (nlin + 1), whose
 * telemetry slots receive the casts to the autocast type. */
int trn__tc_open(trn_run *r, int nlin, const int *dims, const int *layers, int Bmax, char *err, size_t errlen);
void trn__tc_close(trn_run *r);
/* Forward and backward on B rows (x: B x dims[0], values as PyTorch's f32
 * inputs): r->grads set, *loss the f32 loss. 0, or -1 (GEMM failure). */
int trn__tc_train_batch(trn_run *r, const double *x, const int *tgt, int B, double dloss, double *loss);
/* Loss and accuracy over N rows in one batch, as PyTorch's evaluation
 * (the rows' pixels times scale, as the f32 inputs). */
int trn__tc_eval(trn_run *r, const float *pixels, double scale, const int *y, int N, double *loss, double *acc);
/* One AdamW step in adamw_impl's op order. */
void trn__tc_optim_step(trn_run *r);

/* ---- data (data.c) ---- */
int trn__digits_load(float **x, int **y, int *n, char *err, size_t errlen);
#endif
