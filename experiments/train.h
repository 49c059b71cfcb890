/* SPDX-License-Identifier: MIT */
/* train.h: the mixed-precision training engine (libfpemutrain.a).
 *
 * A run = a model, a precision policy (docs/training.md, Lightning's
 * names), settings (key = value, the frameworks' own names) and a seed.
 * The engine keeps every tensor as f64 storage holding values of the
 * tensor's format: a policy says which format each tensor is in, and every
 * change of format goes through emu's array rounding (fpemu_round_f32) with
 * fpemu_cast_stats, gathered per layer and tensor class (the telemetry).
 * Every GEMM goes through one function (experiments/gemm_policy.c) that
 * applies the policy's scaling recipe and tensor-core model.
 *
 * The library never prints and never exits: errors come back as a status
 * and a message in the caller's buffer. Results depend only on the model,
 * policy, settings and seed: not on the thread count.
 */
#ifndef FPEMU_TRAIN_H
#define FPEMU_TRAIN_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRN_NAME_MAX 32
/* The most steps a run may have (`fpemu train --steps`, a checkpoint's step). */
#define TRN_STEPS_MAX 100000000

/* ---- settings ------------------------------------------------------------ */

/* Every knob of a run. Defaults depend on the model and the policy
 * (trn_settings_init); trn_settings_set overrides one by name. */
typedef struct trn_settings {
    char model[TRN_NAME_MAX], policy[TRN_NAME_MAX];
    /* optimisation */
    char optimizer[TRN_NAME_MAX];     /* adamw | sgd */
    double lr, momentum, dampening, weight_decay, beta1, beta2, eps;
    int nesterov;
    long batch_size;
    /* schedule of outputs */
    long eval_every, tensors_every, checkpoint_every;
    /* tensor-core model for low-precision GEMMs */
    char mma[TRN_NAME_MAX];
    /* plain (one chain over K) | cublas: the tree PyTorch's cuBLAS call used
     * for the GEMM's formats and shape (emu/cublas-h200.txt), the plain
     * model for shapes it does not list */
    char mma_algo[TRN_NAME_MAX];
    /* loss scaling (torch.amp.GradScaler names) */
    char scaler[TRN_NAME_MAX];        /* dynamic | static | none */
    double init_scale, growth_factor, backoff_factor, loss_scale;
    long growth_interval;
    /* fp8 (TransformerEngine / torchao names) */
    char fp8_format[TRN_NAME_MAX];    /* HYBRID | E4M3 */
    long margin, amax_history_len;
    char amax_compute_algo[TRN_NAME_MAX]; /* max | most_recent */
    int power_2_scale;                /* round per-tensor/row scales down to powers of two */
    int fp8_head;                     /* the output head (last Linear) through the fp8 recipe (0: autocast type) */
    char mx_scale_rule[TRN_NAME_MAX]; /* floor (OCP) | rceil (TE/cuBLAS) */
    long promotion_interval;          /* f32 promotion every N elements of K (blockwise) */
    long block_size;                  /* 1xN tiles (blockwise 128, mx 32) */
    char fp8_scaling[TRN_NAME_MAX];   /* recipe | none (fp8 casts with scale 1: "fp8 without scaling") */
    /* int8 dynamic quantisation (evaluation) */
    int reduce_range;
    /* models */
    long hidden, depth, d_model, heads, d_ff, seq_digits, vocab;
    double init_gain, input_scale;
    char task[TRN_NAME_MAX];          /* tiny-transformer: reverse | copy | sum */
    /* arithmetic: fpemu (each op in f64, rounded to its tensor's format) |
     * torch-cuda (PyTorch's CUDA kernels op for op, experiments/torch_cuda.c) */
    char numerics[TRN_NAME_MAX];
    char adamw_impl[TRN_NAME_MAX];    /* torch-cuda: single (foreach=False) | foreach */
} trn_settings;

/* Defaults for a model and a policy. Returns 0, or -1 with a message naming
 * the bad name and the valid ones. */
int trn_settings_init(trn_settings *s, const char *model, const char *policy, char *err, size_t errlen);
/* Set one key from its text value. Returns 0, or -1 with a message naming
 * the key and what was expected (unknown key, wrong type, out of range). */
int trn_settings_set(trn_settings *s, const char *key, const char *value, char *err, size_t errlen);
/* Check cross-key constraints (called by trn_open too). */
int trn_settings_check(const trn_settings *s, char *err, size_t errlen);
/* Iterate the keys (for summary.json): count, i-th name, its value as text,
 * and whether it is a string (else a number). */
int trn_settings_count(void);
const char *trn_settings_key(int i);
void trn_settings_value(const trn_settings *s, int i, char *buf, size_t n);
int trn_settings_is_string(int i);

/* Names, for usage messages and loops (NULL-terminated). */
extern const char *const trn_model_names[];
extern const char *const trn_policy_names[];

/* ---- runs ------------------------------------------------------------------ */

typedef struct trn_run trn_run;

/* One training step's figures (a metrics.csv row). */
typedef struct trn_step_rec {
    long step;            /* 1-based */
    double loss;          /* the unscaled loss of the batch (in the loss's format) */
    double grad_norm;     /* L2 norm of the unscaled gradients (inf/NaN if any is) */
    double loss_scale;    /* scale applied to this step's loss (1 without scaler) */
    int skipped;          /* 1 if the optimizer step was skipped (inf/NaN gradients) */
    double overflow;      /* fraction of this step's low-precision cast elements that overflowed */
    double underflow;     /* ... that became zero */
    double lr;
    uint64_t casts;       /* low-precision cast elements this step */
} trn_step_rec;

/* One telemetry row (tensors.csv): a tensor class in a layer, over one step. */
typedef struct trn_tensor_rec {
    const char *layer, *cls, *format;
    uint64_t n, overflow, underflow, saturated, subnormal, nonfinite_in;
    double amax;          /* max |finite input| */
    double scale;         /* recipe scale (per-tensor; smallest of per-row/block); 1 if none */
} trn_tensor_rec;

/* Build a run (model, data, initial parameters) from settings and a seed. */
int trn_open(trn_run **out, const trn_settings *s, uint64_t seed, char *err, size_t errlen);
void trn_close(trn_run *r);
/* Threads used by the GEMMs (results do not depend on it). */
void trn_set_threads(trn_run *r, int threads);
/* Run one training step. Returns 0, or -1 on an internal failure (message:
 * a GEMM that could not run, "out of memory"). A step allocates nothing:
 * trn_open sizes every buffer a step or an evaluation uses. */
int trn_step(trn_run *r, trn_step_rec *rec, char *err, size_t errlen);
/* Evaluate on the held-out set (the policy's forward; int8-dynamic: the
 * quantize_dynamic model). Does not change the run's state. Returns 0, or
 * -1 out of memory (not expected: see trn_step). */
int trn_eval(trn_run *r, double *loss, double *accuracy);
/* The telemetry rows of the last step (valid until the next step). */
int trn_tensor_count(const trn_run *r);
void trn_tensor_get(const trn_run *r, int i, trn_tensor_rec *rec);
long trn_steps_done(const trn_run *r);
const trn_settings *trn_run_settings(const trn_run *r);
uint64_t trn_run_seed(const trn_run *r);
size_t trn_param_count(const trn_run *r);
/* Which GEMM runs the low-precision products (for summary.json). */
const char *trn_gemm_backend(void);
/* mma_algo=cublas: the tensor-core GEMM calls of this process's run so far
 * (training and evaluation; a resumed run counts from where it resumed),
 * grouped by input formats and shape: table_line is the tree table's row
 * that gave the call's tree, 0 when the shape is not in the table (the
 * plain model ran). Fills up to max groups, in order of first call, and
 * returns how many there are (at most TRN_GEMM_CALLS_MAX; calls of further
 * groups count in *table and *plain only). *table and *plain: all calls
 * from the table and all that fell back. Returns -1 (nothing counted)
 * under mma_algo=plain. */
#define TRN_GEMM_CALLS_MAX 64
typedef struct trn_gemm_calls {
    const char *a, *b;                /* input formats (registry names) */
    int M, N, K;                      /* C[M][N] = A[M][K] B[N][K]^T: torch.mm's m, n, k */
    int table_line;                   /* 0: not in the table (the plain model) */
    long calls;
} trn_gemm_calls;
int trn_gemm_call_groups(const trn_run *r, trn_gemm_calls *out, int max, long *table, long *plain);
/* The tree table's name under mma_algo=cublas (NULL under plain). */
const char *trn_gemm_table_name(const trn_run *r);
/* Current loss scale / growth tracker (GradScaler state). */
double trn_loss_scale(const trn_run *r);

/* Checkpoints: the whole state (settings, seed, step, parameters, optimiser,
 * scaler, fp8 histories) as a byte blob (malloc'ed; caller frees). */
int trn_state_save(const trn_run *r, unsigned char **buf, size_t *len);
/* Rebuild a run from a blob; -1 with a message if it is not a valid state:
 * every field is checked as strictly as a new run's settings are, and
 * against the rest of the state (run.c lists the checks). */
int trn_state_load(trn_run **out, const unsigned char *buf, size_t len, char *err, size_t errlen);

/* ---- starting from a given state (docs/replay.md) ---------------------------
 * A run may start from parameters given by the caller (a PyTorch state_dict,
 * `fpemu train --init`) instead of the ones drawn from the seed, and, for the
 * digits models, take its training rows in an order given by the caller
 * (`--order`) instead of the seed's shuffle. Both are set between trn_open
 * and the first trn_step, and both are kept in the state blob (a run resumed
 * from a checkpoint goes on with them). */

/* One parameter tensor as the model's PyTorch twin (python/fpemu/twins.py)
 * names it: its state_dict key and its shape in PyTorch's layout (a Linear
 * weight is (out, in), a bias (out,), an embedding (rows, width)). */
#define TRN_KEY_MAX 48
typedef struct trn_param_key {
    char key[TRN_KEY_MAX];
    int ndim;           /* 1 or 2 */
    long shape[2];
} trn_param_key;

/* The twin's keys of the run's model, in state_dict order: the count, and
 * the array (owned by the run) in *keys. */
int trn_param_keys(const trn_run *r, const trn_param_key **keys);
/* Set the parameter tensor KEY from v (C order, PyTorch's layout, shape[0..ndim)),
 * rounded to the policy's parameter format as PyTorch's load_state_dict
 * copies into a parameter of that dtype. Only before the first step. 0, or
 * -1 with a message naming the key and what was expected (an unknown key
 * lists the model's keys; a shape mismatch gives both shapes; a key set
 * twice). */
/* The current values of parameter tensor i (trn_param_keys' order), C order
 * in PyTorch's layout, as doubles holding values of trn_param_format's
 * format; the element count in *n. */
const double *trn_param_values(const trn_run *r, int i, size_t *n);
/* The registry name of the format the parameters are kept in (f32 under the
 * mixed policies, f16, bf16 or f64 under the true ones), or NULL where they
 * are not one format's values (MS-AMP's scaled fp8 weights). */
const char *trn_param_format(const trn_run *r);
int trn_set_param(trn_run *r, const char *key, const float *v, const long *shape, int ndim, char *err, size_t n);
int trn_set_param_f64(trn_run *r, const char *key, const double *v, const long *shape, int ndim, char *err, size_t n);
/* After the trn_set_param calls: every key must have been set (there is no
 * partial initialisation); the parameters then become the run's initial
 * state. 0, or -1 naming the first key missing and its shape. */
int trn_init_finish(trn_run *r, char *err, size_t n);
/* The order of the training rows: step s (0-based) trains on rows idx[s*B ..
 * (s+1)*B) (B = batch_size), each an index 0..1499 into the digits
 * training rows. Only before the first step; refused for tiny-transformer
 * (its sequences are generated from the seed: there are no rows to order).
 * 0, or -1 naming the first index out of range. A step beyond the order's
 * end fails (trn_step returns -1 with a message). */
int trn_set_order(trn_run *r, const int64_t *idx, size_t n, char *err, size_t errlen);
/* Entries of the run's order (0: the seed's shuffle). */
size_t trn_order_len(const trn_run *r);
/* Where the initial parameters (TRN_SRC_INIT) and the order (TRN_SRC_ORDER)
 * came from, for summary.json: a path and the CRC-32 of the bytes read.
 * Kept in the state blob. set: 0, or -1 (out of memory, or nothing of that
 * kind was given: trn_init_finish / trn_set_order come first); get: 0, or
 * -1 if there is none. */
enum { TRN_SRC_INIT = 0, TRN_SRC_ORDER = 1 };
int trn_set_source(trn_run *r, int which, const char *path, uint32_t crc);
int trn_get_source(const trn_run *r, int which, const char **path, uint32_t *crc);
/* A new run at step 0 of the run r started from: r's settings and seed,
 * and its given initial parameters, order and sources, if any. */
int trn_open_initial(trn_run **out, const trn_run *r, char *err, size_t errlen);

/* ---- pieces exposed for tests --------------------------------------------- */

/* torch.amp.GradScaler, exactly (torch/amp/grad_scaler.py). */
typedef struct trn_scaler {
    int enabled;        /* 0: scale 1, never skips */
    int dynamic;        /* 0: static loss scale */
    float scale;        /* the scale, an f32 as in PyTorch */
    double growth_factor, backoff_factor;
    long growth_interval, growth_tracker;
} trn_scaler;
void trn_scaler_init(trn_scaler *sc, int enabled, int dynamic, double init_scale, double growth_factor,
                     double backoff_factor, long growth_interval);
/* 1/scale: computed in f64, rounded to f32 (torch: scaler._scale.double().reciprocal().float()). */
float trn_scaler_inv_scale(const trn_scaler *sc);
/* After a step's unscale: found_inf says whether any gradient was inf/NaN.
 * Returns 1 if the optimizer step must be skipped; updates the scale. */
int trn_scaler_update(trn_scaler *sc, int found_inf);

/* Decompress the bytes of a gzip file (one member) into a new buffer of at
 * most maxout bytes (zlib). 0, or one of TRN_GUNZIP_* (nothing allocated). */
enum { TRN_GUNZIP_BAD = -1, TRN_GUNZIP_TOOBIG = -2, TRN_GUNZIP_NOMEM = -3 };
int trn_gunzip(const unsigned char *in, size_t inlen, size_t maxout, unsigned char **out, size_t *outlen);
/* CRC-32 (ISO 3309 / ITU-T V.42, as gzip and PNG use; zlib's crc32) of n
 * bytes; _update continues crc (0 to start) over n more bytes, so
 * trn_crc32(p, n) == trn_crc32_update(0, p, n) and a file may be fed in pieces */
uint32_t trn_crc32(const void *p, size_t n);
uint32_t trn_crc32_update(uint32_t crc, const void *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
