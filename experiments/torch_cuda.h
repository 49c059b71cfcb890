/* SPDX-License-Identifier: MIT */
/* torch_cuda.h: PyTorch's CUDA numerics, op for op, for the MLP models
 * (`fpemu train --set numerics=torch-cuda`, docs/replay.md).
 *
 * Every tensor is an f32 array holding values of its dtype (f32, or f16 /
 * bf16 under autocast); every op rounds as the CUDA kernel PyTorch runs for
 * it: the cuBLASLt GEMM with its bias epilogue, the warp log_softmax and its
 * backward, the NLL loss's block reduction, the column sums of the bias
 * gradients and AdamW's single-tensor and foreach forms; optionally fp8
 * Linear layers (torch._scaled_mm with per-tensor current scales).
 * Parameters are laid out as the engine's MLP: per Linear layer its weight
 * (out x in, PyTorch's layout) then its bias. */
#ifndef FPEMU_TORCH_CUDA_H
#define FPEMU_TORCH_CUDA_H
#include <stddef.h>
#include <stdint.h>
#include "fpemu.h"
#include "gemm.h"
#include "sumtree.h"

enum { TC_ADAMW_SINGLE = 0, TC_ADAMW_FOREACH }; /* torch.optim.AdamW(foreach=False / True) */

typedef struct tc_mlp {
    int nlin;               /* Linear layers */
    int dims[260];          /* dims[0] inputs ... dims[nlin] outputs */
    int Bmax;
    const fpemu_format *lo; /* the autocast format (NULL: f32, no autocast) */
    /* the GEMMs: each call's summation tree from the library's built-in
     * cuBLAS table (fpemu_sumtree_resolve_op: op linear, mm-ta or mm, its
     * formats and shape), else the plain model; leaves of device `mma` */
    fpemu_sumtree_table tab;
    char mma[32];
    const fpemu_format *f32;
    uint64_t *ca, *cb;      /* the operands' codes */
    float *cc;              /* the forward's bias, broadcast over rows (the call's C) */
    size_t ccap;            /* elements of ca, cb and cc */
    size_t nparams;
    /* per layer: input activations a[i] (Bmax x dims[i]) and outputs h[i]
     * (Bmax x dims[i+1]); low-precision copies of the weights and biases */
    float **a, **h, *wlo, *logp, *g1, *g2, *tmp;
    int *tgt;
    /* telemetry (NULL: none): called after every cast (to the autocast
     * type, or to fp8) with the Linear layer's index (nlin: the loss), the
     * tensor's class (the engine's CLS_* of train_internal.h), the format,
     * the cast's statistics, the largest finite |x| before it and the
     * scale it was multiplied by (1: none) */
    void (*note)(void *ctx, int lin, int cls, const fpemu_format *fmt, const fpemu_cast_stats *st, double amax,
                 double scale);
    void *note_ctx;
    /* fp8 Linear layers (tc_mlp_fp8; NULL: none): the recorder's
     * fp8-current recipe, gpu/torch/record_runs.py's Fp8LinearFn */
    const fpemu_format *f8_fwd, *f8_bwd; /* activations and weights; gradients */
    int fp8_head;                        /* the last Linear in fp8 too */
    float **x8, *w8, *g8;                /* the fp8 operands a backward needs: per layer, and the weights */
    float *sx, *sw;                      /* their per-tensor scales, per layer */
    size_t *woff;                        /* each layer's weight in the parameters (and in w8) */
    float *tmp8;                         /* scaled_mm's padded operands and result: 3 x ccap */
} tc_mlp;

/* 0, or -1 with a message (out of memory, bad sizes, unknown mma model, a
 * table whose trees are another device's). */
/* lo: the autocast format (f16, bf16), NULL for f32; mma: the tensor-core
 * model of its GEMMs (the device the table's trees must be of). */
int tc_mlp_init(tc_mlp *m, int nlin, const int *dims, const fpemu_format *lo, const char *mma, int Bmax, char *err,
                size_t errlen);
void tc_mlp_free(tc_mlp *m);
/* After tc_mlp_init: the Linear layers in fp8 as gpu/torch/record_runs.py's
 * Fp8LinearFn computes them (torch._scaled_mm with per-tensor current
 * scales: x to the autocast type, x and the f32 weight each cast to fwd
 * with the scale fmax/amax; y = _scaled_mm(fast accumulation) + the f32
 * bias, rounded to the autocast type; the output gradient cast to bwd; the
 * input and weight gradients from _scaled_mm without fast accumulation, the
 * weight's and the bias's kept in f32). head: the last Linear too, else it
 * stays in the autocast type. 0, or -1 with a message (no autocast type,
 * out of memory). */
int tc_mlp_fp8(tc_mlp *m, const fpemu_format *fwd, const fpemu_format *bwd, int head, char *err, size_t errlen);
/* Forward on B rows of x (B x dims[0], f32) with targets tgt: the f32
 * cross-entropy loss of the f32 logits (mean over rows). Keeps what the
 * backward needs. Returns 0, or -1 if the GEMM model failed. */
int tc_mlp_forward(tc_mlp *m, const float *params, const float *x, const int *tgt, int B, float *loss);
/* Backward of loss * scale after tc_mlp_forward: writes every parameter's
 * f32 gradient (as PyTorch's .grad holds it) to grads. */
int tc_mlp_backward(tc_mlp *m, const float *params, float *grads, int B, float scale);
/* Evaluation on N rows: mean loss and accuracy as PyTorch's
 * cross_entropy(...) and (argmax == y).float().mean() give them. */
int tc_mlp_eval(tc_mlp *m, const float *params, const float *x, const int *y, int N, float *loss, float *acc);

/* One AdamW step (torch.optim.AdamW, decoupled weight decay) on n elements
 * of one parameter tensor, `step` being the optimizer's step count after
 * its increment (1 on the first step). */
void tc_adamw(int impl, float *p, const float *g, float *m, float *v, size_t n, double step, double lr, double beta1,
              double beta2, double eps, double weight_decay);

/* CUDA's expf and logf (libdevice), exposed for tests/t_torch_cuda.c, and
 * the SFU's ex2.approx.ftz.f32 inside expf, as an H200 computes it
 * (torch_cuda.c), for tests/t_ex2_approx.c. */
float tc_expf(float a);
float tc_ex2_approx(float x);
float tc_logf(float a);
#endif
