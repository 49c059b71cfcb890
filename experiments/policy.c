/* SPDX-License-Identifier: MIT */
/* policy.c: the precision policies (docs/training.md) and the settings
 * table (names as the frameworks spell them). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mma.h"
#include "train_internal.h"

const char *const trn_model_names[] = {"mlp-digits", "tiny-transformer", "deep-mlp", NULL};

/*  name, param, hi, lo, recipe, fp8_format, m, v, gw, m_scaled, sr, scaler, int8, msamp, doc:
 * the one table of policies; trn_policy_names[] is its first column. */
#define POLICY_TABLE(X) \
    X("64-true", "f64", "f64", "f64", RECIPE_NONE, "HYBRID", "f64", "f64", NULL, 0, 0, "none", 0, 0, \
      "everything f64") \
    X("32-true", "f32", "f32", "f32", RECIPE_NONE, "HYBRID", "f32", "f32", NULL, 0, 0, "none", 0, 0, \
      "everything f32 (GEMMs: f32 FMA chain, as CUDA cores without TF32)") \
    X("16-mixed", "f32", "f32", "f16", RECIPE_NONE, "HYBRID", "f32", "f32", NULL, 0, 0, "dynamic", 0, 0, \
      "f32 master weights, autocast to f16, GradScaler") \
    X("bf16-mixed", "f32", "f32", "bf16", RECIPE_NONE, "HYBRID", "f32", "f32", NULL, 0, 0, "none", 0, 0, \
      "f32 master weights, autocast to bf16") \
    X("16-true", "f16", "f16", "f16", RECIPE_NONE, "HYBRID", "f16", "f16", NULL, 0, 0, "none", 0, 0, \
      "f16 parameters, activations, gradients and optimiser state") \
    X("bf16-true", "bf16", "bf16", "bf16", RECIPE_NONE, "HYBRID", "bf16", "bf16", NULL, 0, 0, "none", 0, 0, \
      "bf16 parameters, activations, gradients and optimiser state") \
    X("transformer-engine", "bf16", "bf16", "bf16", RECIPE_DELAYED, "HYBRID", "bf16", "bf16", NULL, 0, 0, "none", 0, 0, \
      "bf16 parameters, fp8 Linear GEMMs with DelayedScaling") \
    X("transformer-engine-float16", "f16", "f16", "f16", RECIPE_DELAYED, "HYBRID", "f16", "f16", NULL, 0, 0, "none", 0, 0, \
      "f16 parameters, fp8 Linear GEMMs with DelayedScaling") \
    X("fp8-delayed", "f32", "f32", "bf16", RECIPE_DELAYED, "HYBRID", "f32", "f32", NULL, 0, 0, "none", 0, 0, \
      "f32 master, bf16 autocast, fp8 Linear GEMMs with delayed per-tensor scaling") \
    X("fp8-current", "f32", "f32", "bf16", RECIPE_CURRENT, "HYBRID", "f32", "f32", NULL, 0, 0, "none", 0, 0, \
      "f32 master, bf16 autocast, fp8 Linear GEMMs with current per-tensor scaling (torchao tensorwise)") \
    X("fp8-rowwise", "f32", "f32", "bf16", RECIPE_ROWWISE, "E4M3", "f32", "f32", NULL, 0, 0, "none", 0, 0, \
      "f32 master, bf16 autocast, e4m3 GEMMs with one power-of-two scale per row along K (torchao rowwise)") \
    X("fp8-blockwise", "f32", "f32", "bf16", RECIPE_BLOCKWISE, "E4M3", "bf16", "bf16", NULL, 0, 0, "none", 0, 0, \
      "DeepSeek-V3: 1x128 / 128x128 e4m3 blocks, f32 promotion every 128, bf16 Adam moments") \
    X("mxfp8", "f32", "f32", "bf16", RECIPE_MX, "E4M3", "f32", "f32", NULL, 0, 0, "none", 0, 0, \
      "OCP MX: blocks of 32 along K with an e8m0 scale") \
    X("msamp-o1", "f16", "f32", "f16", RECIPE_CURRENT, "HYBRID", "f32", "f32", "e4m3", 0, 0, "dynamic", 0, 1, \
      "MS-AMP O1: fp8 GEMMs, fp8 weight gradients, f16 weights, f32 Adam states") \
    X("msamp-o2", "f16", "f32", "f16", RECIPE_CURRENT, "HYBRID", "e4m3", "f16", "e4m3", 1, 0, "dynamic", 0, 1, \
      "MS-AMP O2: O1 with Adam's first moment in fp8 and second moment in f16, both with a per-tensor scale") \
    X("bf16-true-sr", "bf16", "bf16", "bf16", RECIPE_NONE, "HYBRID", "bf16", "bf16", NULL, 0, 1, "none", 0, 0, \
      "bf16-true with stochastic rounding of the parameter update") \
    X("int8-dynamic", "f32", "f32", "f32", RECIPE_NONE, "HYBRID", "f32", "f32", NULL, 0, 0, "none", 1, 0, \
      "trains as 32-true; evaluation with quantize_dynamic int8 Linear layers")

#define POL_ROW(name, ...) {name, __VA_ARGS__},
static const pol_def policies[] = {POLICY_TABLE(POL_ROW)};
#define NPOL (sizeof policies / sizeof policies[0])

#define POL_NAME(name, ...) name,
const char *const trn_policy_names[] = {POLICY_TABLE(POL_NAME) NULL};

const pol_def *trn__policy_find(const char *name) {
    for (size_t i = 0; i < NPOL; i++)
        if (!strcmp(policies[i].name, name)) return &policies[i];
    return NULL;
}

/* ---- settings table ---- */
typedef enum { K_DOUBLE, K_LONG, K_BOOL, K_ENUM } kind;
typedef struct {
    const char *key;
    kind k;
    size_t off;
    double lo, hi;           /* range (inclusive) for numbers */
    const char *choices;     /* for K_ENUM: '|'-separated */
    const char *doc;
} key_def;

#define OFF(f) offsetof(trn_settings, f)
static const key_def keys[] = {
    {"optimizer", K_ENUM, OFF(optimizer), 0, 0, "adamw|sgd", "optimiser (PyTorch semantics)"},
    {"lr", K_DOUBLE, OFF(lr), 0, 1e6, NULL, "learning rate"},
    {"momentum", K_DOUBLE, OFF(momentum), 0, 1, NULL, "SGD momentum"},
    {"dampening", K_DOUBLE, OFF(dampening), 0, 1, NULL, "SGD dampening"},
    {"nesterov", K_BOOL, OFF(nesterov), 0, 1, NULL, "SGD Nesterov momentum"},
    {"weight_decay", K_DOUBLE, OFF(weight_decay), 0, 1e6, NULL, "weight decay (AdamW: decoupled)"},
    {"beta1", K_DOUBLE, OFF(beta1), 0, 0.999999, NULL, "AdamW beta1"},
    {"beta2", K_DOUBLE, OFF(beta2), 0, 0.999999999, NULL, "AdamW beta2"},
    {"eps", K_DOUBLE, OFF(eps), 0, 1, NULL, "AdamW eps"},
    {"batch_size", K_LONG, OFF(batch_size), 1, 4096, NULL, "examples per step"},
    {"eval_every", K_LONG, OFF(eval_every), 0, 1e9, NULL, "evaluate every N steps (0: only at the end)"},
    {"tensors_every", K_LONG, OFF(tensors_every), 0, 1e9, NULL, "tensors.csv rows every N steps (0: never)"},
    {"checkpoint_every", K_LONG, OFF(checkpoint_every), 0, 1e9, NULL, "checkpoint every N steps (0: never)"},
    /* choices NULL: validated by the library (a preset of emu/mma.c's table, or a preset file) */
    {"mma", K_ENUM, OFF(mma), 0, 0, NULL, "tensor-core model of the low-precision GEMMs (a preset or a preset file)"},
    {"mma_algo", K_ENUM, OFF(mma_algo), 0, 0, "plain|cublas",
     "the tensor-core GEMMs' summation over K: plain (one chain) or cublas (the tree PyTorch's cuBLAS call used, "
     "emu/cublas-h200.txt; the plain model for shapes not listed)"},
    {"scaler", K_ENUM, OFF(scaler), 0, 0, "dynamic|static|none", "loss scaling"},
    {"init_scale", K_DOUBLE, OFF(init_scale), 1e-30, 3.4e38, NULL, "GradScaler init_scale"},
    {"growth_factor", K_DOUBLE, OFF(growth_factor), 1, 1e6, NULL, "GradScaler growth_factor"},
    {"backoff_factor", K_DOUBLE, OFF(backoff_factor), 1e-6, 1, NULL, "GradScaler backoff_factor"},
    {"growth_interval", K_LONG, OFF(growth_interval), 1, 1e12, NULL, "GradScaler growth_interval"},
    {"loss_scale", K_DOUBLE, OFF(loss_scale), 1e-30, 3.4e38, NULL, "static loss scale (sets scaler=static)"},
    {"fp8_format", K_ENUM, OFF(fp8_format), 0, 0, "HYBRID|E4M3", "HYBRID: e4m3 forward, e5m2 gradients"},
    {"margin", K_LONG, OFF(margin), 0, 64, NULL, "DelayedScaling margin"},
    {"amax_history_len", K_LONG, OFF(amax_history_len), 1, 65536, NULL, "DelayedScaling amax_history_len"},
    {"amax_compute_algo", K_ENUM, OFF(amax_compute_algo), 0, 0, "max|most_recent", "DelayedScaling amax_compute_algo"},
    {"power_2_scale", K_BOOL, OFF(power_2_scale), 0, 1, NULL, "round scales down to powers of two"},
    {"fp8_head", K_BOOL, OFF(fp8_head), 0, 1, NULL,
     "fp8 policies: the output head (the last Linear) through the recipe; 0 keeps it in the autocast type (DeepSeek-V3)"},
    {"mx_scale_rule", K_ENUM, OFF(mx_scale_rule), 0, 0, "floor|rceil", "MX shared exponent rule (OCP floor, cuBLAS rceil)"},
    {"promotion_interval", K_LONG, OFF(promotion_interval), 0, 1e9, NULL,
     "blockwise: f32 promotion every N of K, N a divisor of block_size (0: once per block)"},
    {"block_size", K_LONG, OFF(block_size), 1, 4096, NULL, "blockwise block length along K (MX: 32, fixed by OCP)"},
    {"fp8_scaling", K_ENUM, OFF(fp8_scaling), 0, 0, "recipe|none", "fp8 policies: the recipe's scales, or none (scale 1)"},
    {"reduce_range", K_BOOL, OFF(reduce_range), 0, 1, NULL, "int8-dynamic: 7-bit activation range"},
    {"hidden", K_LONG, OFF(hidden), 1, 4096, NULL, "MLP hidden width"},
    {"depth", K_LONG, OFF(depth), 1, 256, NULL, "MLP hidden layers / transformer blocks"},
    {"d_model", K_LONG, OFF(d_model), 2, 1024, NULL, "transformer width"},
    {"heads", K_LONG, OFF(heads), 1, 64, NULL, "attention heads"},
    {"d_ff", K_LONG, OFF(d_ff), 1, 8192, NULL, "transformer MLP width"},
    {"seq_digits", K_LONG, OFF(seq_digits), 1, 64, NULL, "tiny-transformer: digits per sequence"},
    {"vocab", K_LONG, OFF(vocab), 2, 1000, NULL, "tiny-transformer: symbols (plus a separator)"},
    {"task", K_ENUM, OFF(task), 0, 0, "reverse|copy|sum", "tiny-transformer task"},
    {"init_gain", K_DOUBLE, OFF(init_gain), 0, 1e6, NULL, "deep-mlp: weight std = init_gain/sqrt(fan_in)"},
    {"input_scale", K_DOUBLE, OFF(input_scale), 0, 1e30, NULL, "multiplier applied to the pixel values"},
    {"numerics", K_ENUM, OFF(numerics), 0, 0, "fpemu|torch-cuda",
     "fpemu: each op in f64 rounded to its tensor's format; torch-cuda: PyTorch's CUDA ops, op for op (MLP models)"},
    {"adamw_impl", K_ENUM, OFF(adamw_impl), 0, 0, "single|foreach", "torch-cuda: AdamW(foreach=False) or foreach=True"},
};
#define NKEYS (sizeof keys / sizeof keys[0])

int trn_settings_count(void) { return (int)NKEYS; }
const char *trn_settings_key(int i) { return i >= 0 && i < (int)NKEYS ? keys[i].key : NULL; }
int trn_settings_is_string(int i) { return keys[i].k == K_ENUM; }

void trn_settings_value(const trn_settings *s, int i, char *buf, size_t n) {
    const key_def *k = &keys[i];
    const char *p = (const char *)s + k->off;
    switch (k->k) {
    case K_DOUBLE: snprintf(buf, n, "%.17g", *(const double *)p); break;
    case K_LONG: snprintf(buf, n, "%ld", *(const long *)p); break;
    case K_BOOL: snprintf(buf, n, "%d", *(const int *)p); break;
    case K_ENUM: snprintf(buf, n, "%s", p); break;
    }
}

static void list_names(char *buf, size_t n, const char *const *names) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; names[i] && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", names[i]);
}

int trn_settings_init(trn_settings *s, const char *model, const char *policy, char *err, size_t errlen) {
    char names[1024];
    int mi = -1;
    for (int i = 0; trn_model_names[i]; i++) if (!strcmp(model, trn_model_names[i])) mi = i;
    if (mi < 0) {
        list_names(names, sizeof names, trn_model_names);
        snprintf(err, errlen, "unknown model '%s' (expected one of: %s)", model, names);
        return -1;
    }
    const pol_def *pol = trn__policy_find(policy);
    if (!pol) {
        list_names(names, sizeof names, trn_policy_names);
        snprintf(err, errlen, "unknown policy '%s' (expected one of: %s)", policy, names);
        return -1;
    }
    memset(s, 0, sizeof *s);
    snprintf(s->model, sizeof s->model, "%s", model);
    snprintf(s->policy, sizeof s->policy, "%s", policy);
    strcpy(s->optimizer, "adamw");
    s->lr = 3e-3; s->momentum = 0.9; s->dampening = 0; s->nesterov = 0; s->weight_decay = 0;
    s->beta1 = 0.9; s->beta2 = 0.999; s->eps = 1e-8;
    s->batch_size = 32;
    s->eval_every = 50; s->tensors_every = 10; s->checkpoint_every = 0;
    /* MX block scaling exists on Blackwell (sm_100) */
    strcpy(s->mma, pol->recipe == RECIPE_MX ? "b200" : "h100");
    strcpy(s->mma_algo, "plain");
    snprintf(s->scaler, sizeof s->scaler, "%s", pol->scaler);
    s->init_scale = 65536.0; s->growth_factor = 2.0; s->backoff_factor = 0.5; s->growth_interval = 2000;
    s->loss_scale = 1.0;
    snprintf(s->fp8_format, sizeof s->fp8_format, "%s", pol->fp8_format);
    s->margin = 0; s->amax_history_len = 1024; strcpy(s->amax_compute_algo, "max");
    s->power_2_scale = pol->recipe == RECIPE_ROWWISE;
    s->fp8_head = pol->recipe != RECIPE_BLOCKWISE; /* DeepSeek-V3 keeps its output head in high precision */
    strcpy(s->mx_scale_rule, "floor");
    s->promotion_interval = 0; /* once per block of block_size (128): DeepGEMM */
    s->block_size = pol->recipe == RECIPE_MX ? 32 : 128;
    s->reduce_range = 0;
    strcpy(s->fp8_scaling, "recipe");
    s->hidden = 64; s->depth = 2; s->d_model = 32; s->heads = 2; s->d_ff = 64; s->seq_digits = 6; s->vocab = 10;
    strcpy(s->task, "sum");
    strcpy(s->numerics, "fpemu");
    strcpy(s->adamw_impl, "single");
    s->init_gain = 1.0; s->input_scale = 1.0 / 16;
    if (mi == 1) { s->batch_size = 16; s->lr = 3e-3; s->depth = 2; }
    if (mi == 2) {
        /* Deep, narrow, unnormalised, raw pixel inputs: big forward values
         * and tiny backward ones (docs/training.md). */
        s->hidden = 32; s->depth = 16; s->init_gain = 1.0; s->input_scale = 256.0; s->lr = 1e-3;
    }
    return 0;
}

static int parse_double(const char *v, double *out) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || *end || errno == ERANGE || isnan(d) || isinf(d)) return -1;
    *out = d;
    return 0;
}

int trn_settings_set(trn_settings *s, const char *key, const char *value, char *err, size_t errlen) {
    const key_def *k = NULL;
    for (size_t i = 0; i < NKEYS; i++) if (!strcmp(keys[i].key, key)) k = &keys[i];
    if (!k) {
        snprintf(err, errlen, "unknown key '%s' (see `fpemu train --help` for the keys)", key);
        return -1;
    }
    char *p = (char *)s + k->off;
    double d;
    switch (k->k) {
    case K_DOUBLE:
        if (parse_double(value, &d)) { snprintf(err, errlen, "%s: expected a number, got '%s'", key, value); return -1; }
        if (d < k->lo || d > k->hi) { snprintf(err, errlen, "%s: %s is out of range [%g, %g]", key, value, k->lo, k->hi); return -1; }
        *(double *)p = d;
        if (!strcmp(key, "loss_scale")) strcpy(s->scaler, "static");
        break;
    case K_LONG: {
        char *end;
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (!*value || *end || errno) { snprintf(err, errlen, "%s: expected an integer, got '%s'", key, value); return -1; }
        if ((double)v < k->lo || (double)v > k->hi) { snprintf(err, errlen, "%s: %s is out of range [%.0f, %.0f]", key, value, k->lo, k->hi); return -1; }
        *(long *)p = (long)v;
        break;
    }
    case K_BOOL:
        if (!strcmp(value, "1") || !strcmp(value, "true") || !strcmp(value, "yes")) *(int *)p = 1;
        else if (!strcmp(value, "0") || !strcmp(value, "false") || !strcmp(value, "no")) *(int *)p = 0;
        else { snprintf(err, errlen, "%s: expected 0/1/true/false, got '%s'", key, value); return -1; }
        break;
    case K_ENUM: {
        if (!k->choices) { /* mma: the preset table (emu/mma.c) decides */
            char e2[400];
            if (strlen(value) >= TRN_NAME_MAX) {
                snprintf(err, errlen, "%s: '%s' is longer than %d characters (a preset file's path too)", key, value,
                         TRN_NAME_MAX - 1);
                return -1;
            }
            if (fpemu_mma_model_check_name(value, e2, sizeof e2)) {
                snprintf(err, errlen, "%s: %s", key, e2);
                return -1;
            }
            snprintf(p, TRN_NAME_MAX, "%s", value);
            break;
        }
        const char *c = k->choices;
        size_t vl = strlen(value);
        int found = 0;
        while (*c) {
            const char *bar = strchr(c, '|');
            size_t l = bar ? (size_t)(bar - c) : strlen(c);
            if (l == vl && !strncmp(c, value, l)) found = 1;
            c += l + (bar ? 1 : 0);
        }
        if (!found || vl >= TRN_NAME_MAX) {
            snprintf(err, errlen, "%s: expected one of %s, got '%s'", key, k->choices, value);
            return -1;
        }
        snprintf(p, TRN_NAME_MAX, "%s", value);
        break;
    }
    }
    return 0;
}

/* The policies numerics=torch-cuda models (experiments/torch_cuda.c): f32
 * master weights, optimiser state and losses, Linear inputs cast to the
 * autocast type (f32, f16 or bf16) with no scaling recipe, nothing else. */
static int torch_cuda_models(const pol_def *p) {
    /* the torch.amp policies, and fp8-current as gpu/torch/record_runs.py
     * records it (bf16 autocast, Linear layers through torch._scaled_mm) */
    int amp = (!strcmp(p->lo, "f32") || !strcmp(p->lo, "f16") || !strcmp(p->lo, "bf16")) && p->recipe == RECIPE_NONE;
    int fp8 = !strcmp(p->lo, "bf16") && p->recipe == RECIPE_CURRENT;
    return !strcmp(p->param, "f32") && !strcmp(p->hi, "f32") && !strcmp(p->m_fmt, "f32") && !strcmp(p->v_fmt, "f32") &&
           (amp || fp8) && !p->gw_fmt && !p->m_scaled && !p->sr_update && !p->int8_eval && !p->msamp;
}

int trn_settings_check(const trn_settings *s, char *err, size_t errlen) {
    const pol_def *pol = trn__policy_find(s->policy);
    if (!pol) { snprintf(err, errlen, "unknown policy '%s'", s->policy); return -1; }
    /* the block's scales apply when its partial sums are promoted, so a
     * promotion cannot span blocks */
    if (pol->recipe == RECIPE_BLOCKWISE && s->promotion_interval > 0 && s->block_size % s->promotion_interval) {
        snprintf(err, errlen, "promotion_interval (%ld) must divide block_size (%ld): each block's scales apply when its "
                 "partial sums are promoted", s->promotion_interval, s->block_size);
        return -1;
    }
    if (pol->recipe == RECIPE_MX && s->block_size != 32) {
        snprintf(err, errlen, "block_size (%ld): MX blocks are 32 elements (OCP MX; the MMA takes one e8m0 scale per 32)",
                 s->block_size);
        return -1;
    }
    if (pol->msamp && !s->fp8_head) {
        snprintf(err, errlen, "fp8_head=0 with %s: MS-AMP converts every Linear layer, the head included (its weights, "
                 "gradients and GEMMs are all scaled tensors)", pol->name);
        return -1;
    }
    if (!strcmp(s->numerics, "torch-cuda") && !strcmp(s->mma_algo, "cublas")) {
        snprintf(err, errlen, "mma_algo=cublas goes with numerics=fpemu (numerics=torch-cuda models its GEMMs itself)");
        return -1;
    }
    if (!strcmp(s->numerics, "torch-cuda")) {
        /* experiments/torch_cuda.c models these ops only */
        if (strcmp(s->model, "mlp-digits") && strcmp(s->model, "deep-mlp")) {
            snprintf(err, errlen, "numerics=torch-cuda: model %s is not modelled (expected mlp-digits or deep-mlp)", s->model);
            return -1;
        }
        if (!torch_cuda_models(pol)) {
            char names[256] = "";
            for (size_t i = 0, used = 0; i < NPOL; i++)
                if (torch_cuda_models(&policies[i]) && used < sizeof names)
                    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", policies[i].name);
            snprintf(err, errlen, "numerics=torch-cuda: policy %s is not modelled (expected one of: %s)", s->policy, names);
            return -1;
        }
        if (strcmp(s->optimizer, "adamw")) {
            snprintf(err, errlen, "numerics=torch-cuda: optimizer %s is not modelled (expected adamw)", s->optimizer);
            return -1;
        }
        if (!strcmp(s->scaler, "static")) {
            snprintf(err, errlen, "numerics=torch-cuda: scaler=static is not modelled (expected dynamic or none)");
            return -1;
        }
        if (pol->recipe == RECIPE_CURRENT && (s->power_2_scale || !strcmp(s->fp8_scaling, "none"))) {
            snprintf(err, errlen, "numerics=torch-cuda: %s is not modelled with %s (the recorded recipe: fmax/amax scales, "
                     "power_2_scale=0, fp8_scaling=recipe)", s->policy, s->power_2_scale ? "power_2_scale=1" : "fp8_scaling=none");
            return -1;
        }
    }
    if (!strcmp(s->model, "tiny-transformer")) {
        if (s->d_model % s->heads) {
            snprintf(err, errlen, "d_model (%ld) must be a multiple of heads (%ld)", s->d_model, s->heads);
            return -1;
        }
        if (!strcmp(s->task, "sum") && s->vocab < 2) { snprintf(err, errlen, "vocab must be >= 2"); return -1; }
    }
    return 0;
}

/* The fp8 formats a run trains with: the ones the `mma` preset's row lists
 * (emu/mma.c: e4m3/e5m2 on NVIDIA, e4m3fnuz/e5m2fnuz on AMD CDNA3, as
 * AMD's training stacks use), e4m3/e5m2 when the preset has none (the run
 * is then refused by the GEMM check, naming the formats). */
void trn__fp8_formats(const trn_settings *s, const char **fwd, const char **bwd) {
    const char *e4 = NULL, *e5 = NULL;
    if (fpemu_mma_preset_fp8(s->mma, &e4, &e5, NULL, 0) || !e4) e4 = "e4m3", e5 = "e5m2";
    if (!e5) e5 = "e5m2";
    *fwd = e4;
    *bwd = !strcmp(s->fp8_format, "HYBRID") ? e5 : e4;
}
