/* SPDX-License-Identifier: MIT */
/* fpemu_api.h (installed as <fpemu/fpemu_api.h>): the stable interface of
 * libfpemu for language bindings (the Python package in python/, ctypes,
 * cffi, FFI of any language) and for C programs that would rather not
 * depend on a struct layout.
 *
 * No struct crosses this interface: formats are named by strings, the
 * cast, the GEMM and the dot product are opaque handles (fpemu_caster,
 * fpemu_gemmer, fpemu_dotter) configured by setters, arrays are plain C
 * arrays, and results come back in caller arrays, as JSON or text, or by
 * name. A binding never mirrors fpemu_ctx, fpemu_gemm_config,
 * fpemu_cast_stats or any other struct of fpemu.h, gemm.h or mma.h, so a
 * new field there changes nothing here; FPEMU_API_VERSION (what
 * fpemu_api_version() returns) changes only when a declaration below
 * changes incompatibly.
 *
 * Errors: a call that can fail returns -1 (or NULL for a constructor) and
 * leaves a message: constructors write it to the caller's err buffer (if
 * not NULL, errlen bytes), the other calls keep it in the handle, where
 * fpemu_*_error() returns it until the next call on that handle. A
 * setter's message is the reason only ("unknown rounding mode ..."): the
 * caller names the option it came from. The library never prints and
 * never exits.
 *
 * Threads: a handle is not locked; use one per thread (the calls on
 * different handles, and the format queries, may run concurrently).
 * Every array is C order (row-major) and every code array uses its
 * format's container (uint8_t for formats of at most 8 bits, uint16_t up
 * to 16, uint32_t up to 32, else uint64_t), as fpemu.h's array API does;
 * the GEMM and dot-product calls take codes as uint64_t.
 */
#ifndef FPEMU_API_H
#define FPEMU_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FPEMU_API_VERSION 1

/* The library's version string (FPEMU_VERSION of the library that runs,
 * "0.1.0"), and the version of this interface it implements
 * (FPEMU_API_VERSION of the header it was built with). A binding checks
 * the latter when it loads the library. */
const char *fpemu_version(void);
int fpemu_api_version(void);

/* ---- formats ------------------------------------------------------------
 * fmt is anything fpemu_format_get takes: a registry name, an alias, a
 * custom spec ("e3m4", "custom:e=4,m=3,bias=7,inf=no,nan=fn"). */

/* Number of registry formats (fpemu_format_count), and the name of the
 * i-th (NULL past the end). */
int fpemu_api_format_count(void);
const char *fpemu_api_format_name(int i);
/* Property `key` of fmt. Numbers come back in *value: bits, container, pad,
 * ebits, mbits, bias, p, emin, emax, signed, negzero, subnormals (0 or 1),
 * max_finite, min_normal, min_subnormal; text in *text (a string that
 * lives as long as the process): name (the registry name, for an alias
 * too), inf (none, ieee, top), nan (none, ieee, fn, uz, allones), aliases
 * (comma-separated, "" for none or a custom format). The other output is
 * set to NaN or NULL; either pointer may be NULL. Returns 0, or -1 with a
 * message (unknown format, unknown key). */
int fpemu_api_format_prop(const char *fmt, const char *key, double *value, const char **text, char *err,
                          size_t errlen);
/* The i-th property key, in the order above (NULL past the end). */
const char *fpemu_api_format_key(int i);
/* Decode n codes of fmt (uint64_t each, bits outside the field ignored) to
 * their exact values in double (fpemu_to_double). 0, or -1 with a message. */
int fpemu_api_decode_f64(const char *fmt, const uint64_t *codes, size_t n, double *out, char *err, size_t errlen);

/* ---- casting a tensor (what `fpemu cast` does) --------------------------- */

typedef struct fpemu_caster fpemu_caster;

/* A caster to format fmt: rne, no saturation, seed 0, scaling none, axis
 * -1, NaN policy canonical. NULL with a message in err if fmt is unknown
 * (or out of memory). */
fpemu_caster *fpemu_caster_new(const char *fmt, char *err, size_t errlen);
void fpemu_caster_free(fpemu_caster *c);
/* The message of the last failed call on c ("" if none). */
const char *fpemu_caster_error(const fpemu_caster *c);

/* Set one option by name, value as text, as `fpemu cast` spells it:
 *   round    rne, rna, rtz, rup, rdn, rto, sr (and fpemu_round_parse's spellings)
 *   sat      0 or 1: overflow saturates to max finite (scaling none only;
 *            every recipe saturates)
 *   seed     an integer in [0, 2^64), decimal or 0x hex: sr's stream (element i takes draw i)
 *   scaling  none, tensor, tensor-torchao, rowwise, blockwise, mx-floor,
 *            mx-rceil, nvfp4 (fpemu_gemm_config_set_scaling's recipes, A's
 *            side; given and delayed need a previous step's scales and are
 *            refused)
 *   axis     an integer: the axis the rowwise, blockwise, MX and NVFP4
 *            blocks run along (checked against each input's ndim)
 *   nan      canonical, x86, cuda, torch
 *   stats    full (default): every figure; counts: the counts and amax
 *            only (n, amax, overflow, saturated, flushed, subnormal,
 *            nonfinite_in and their _frac), without the error figures'
 *            pass over the values: the same values and counts; the error
 *            figures (compared, max_abs_err, max_rel_err, rms_err, sqnr_db)
 *            are then refused by fpemu_caster_stat and null in the JSON,
 *            and left out of the text. (Either way a cast of f32 values,
 *            or of codes of a format of floats, with scaling none to a
 *            format of floats is one array rounding, fpemu_round_f32.)
 * Returns 0, or -1 with a message (the option keeps its value). */
int fpemu_caster_set(fpemu_caster *c, const char *key, const char *value);
/* The current value of an option as text (the keys above, plus format:
 * the target's registry name, and recipe: the scaling kind, one of none,
 * tensor, rowwise, blockwise, mx, nvfp4). snprintf semantics: returns the
 * length of the value, or -1 for an unknown key. */
int fpemu_caster_get(const fpemu_caster *c, const char *key, char *buf, size_t len);
/* Whether the options go together (mx-* and nvfp4 cast with rne only;
 * nvfp4 needs e2m1): 0, or -1 with a message. Every run checks it. */
int fpemu_caster_check(fpemu_caster *c);

/* Input and output element types of fpemu_caster_run. */
enum {
    FPEMU_API_F64 = 1,  /* double values: cast in one rounding (to f32 first under a recipe) */
    FPEMU_API_F32 = 2,  /* float values */
    FPEMU_API_CODES = 3 /* codes of the format in_fmt names (container-sized), as values */
};

/* Cast the tensor x (ndim >= 1 dimensions of the given shape, C order,
 * in_type elements; in_fmt names the codes' format for FPEMU_API_CODES and
 * is ignored otherwise) and compute the figures. Outputs, each may be
 * NULL, each with x's number of elements:
 *   values  the values after the cast (dequantised under a recipe): double
 *           for an FPEMU_API_F64 input, float otherwise;
 *   codes   the target's codes (of the scaled values under a recipe), in
 *           its container;
 *   scaled  (double) the value each element's cast saw: x over its decode
 *           factor under a recipe, x as read without one.
 * Element i of an sr cast takes draw i of the seed's stream (in the blocks'
 * layout, the axis moved last, under a block recipe); every run starts the
 * stream anew, so equal calls give equal results. A code outside in_fmt's
 * field is refused. The caller's floating-point environment (x86's MXCSR:
 * rounding mode, FTZ, DAZ) does not change a result, and the call raises
 * no flag in it. Returns 0, or -1 with a message (and no figures; the
 * outputs may then be partly written). */
int fpemu_caster_run(fpemu_caster *c, int in_type, const char *in_fmt, const void *x, int ndim,
                     const size_t *shape, void *values, void *codes, double *scaled);
/* The same for float and double values. */
int fpemu_caster_run_f32(fpemu_caster *c, const float *x, int ndim, const size_t *shape, float *values,
                         void *codes);
int fpemu_caster_run_f64(fpemu_caster *c, const double *x, int ndim, const size_t *shape, double *values,
                         void *codes);

/* The recipe's scales, as decode factors: a code's value times its factor,
 * rounded to f32, is the dequantised value (nvfp4: that times the tensor
 * factor, rounded to f32 again; docs/cast.md). fpemu_caster_scale_layout
 * says what a run on an input of this shape makes, and its shape in
 * sndim and sshape (room for ndim sizes): 0 none (scaling none); 1 one
 * factor for the tensor (the tensor recipes: fl32(1 / scale)), a scalar
 * (sndim 0); 2 one per block, shaped as the input without the axis
 * dimension, in order, then the blocks along the axis (1 for rowwise),
 * row-major; -1 with a message (the axis does not fit).
 * fpemu_caster_scales gives the last successful run's factors (one, or as
 * many as that shape holds) and nvfp4's tensor factor fl32(1 / tensor
 * scale) (1 for the other recipes); the pointer stays valid until the next
 * run or free. 0, or -1 with a message (no run with a recipe). */
int fpemu_caster_scale_layout(fpemu_caster *c, int ndim, const size_t *shape, int *sndim, size_t *sshape);
int fpemu_caster_scales(fpemu_caster *c, const float **factors, float *tensor_factor);

/* The figures of the last successful run, exactly as `fpemu cast --stats`
 * (text) and `--stats-json` (one JSON object and a newline) write them
 * (docs/cast.md, "The figures"). snprintf semantics: the length of the
 * whole text is returned; -1 with a message if there was no run. */
int fpemu_caster_stats_text(fpemu_caster *c, char *buf, size_t len);
int fpemu_caster_stats_json(fpemu_caster *c, char *buf, size_t len);
/* One figure by its JSON key (n, amax, scale, tensor_scale, overflow,
 * overflow_frac, saturated, ..., nonfinite_in_frac, compared, max_abs_err,
 * max_rel_err, rms_err, sqnr_db; block_scales.count, .min and .max).
 * Returns 0 with *value set, 1 where the JSON has null (*value NaN; for
 * sqnr_db of an exact cast, +inf), -1 for an unknown key or no run. */
int fpemu_caster_stat(fpemu_caster *c, const char *key, double *value);
/* The i-th figure key, in the JSON's order (NULL past the end). */
const char *fpemu_caster_stat_key(int i);

/* ---- GEMM (what `fpemu gemm` does) --------------------------------------- */

typedef struct fpemu_gemmer fpemu_gemmer;

/* D = A x B (+ C) under MMA model `model` (a preset or a preset file) with
 * element formats afmt and bfmt (NULL: afmt), c and d in f32, scaling none,
 * the recipe's promotion, all threads: fpemu_gemm_config_init. NULL with a
 * message in err. */
fpemu_gemmer *fpemu_gemmer_new(const char *model, const char *afmt, const char *bfmt, char *err, size_t errlen);
void fpemu_gemmer_free(fpemu_gemmer *g);
const char *fpemu_gemmer_error(const fpemu_gemmer *g);
/* Options, as `fpemu gemm` spells them:
 *   scaling  a recipe of fpemu_gemm_config_set_scaling (blockwise also sets
 *            promote 128: set promote after scaling to change it)
 *   promote  f32 promotion every N elements of K (0: none)
 *   outfmt   round D to this format (rne) before returning it as f32;
 *            "" or "none": D as computed
 *   threads  0 (every online CPU) to 64; results never depend on it
 *   sat      0 or 1: saturating casts under scaling none (default 1)
 *   trans_a, trans_b  0 (default) or 1: the run's A is given as its
 *            transpose (K x M, row-major), B as its (N x K): numpy's a.T,
 *            torch's W of F.linear. run_f32 under algo plain reads them as
 *            they lie (no copy; every recipe: the same bits and telemetry
 *            as the untransposed arrays); algo cublas and run_codes copy
 *            them first (a bad code is named by its place in A or B)
 *   algo     plain (default: the model, one chain over K) or cublas: the
 *            summation tree PyTorch's cuBLAS call used for these formats,
 *            output format (outfmt, f32 when unset) and shape, from the
 *            table; a shape the table does not list gets the plain model
 *            (fpemu_gemmer_get's "resolved" says which). What `fpemu gemm
 *            --algo cublas` computes, bit for bit (docs/cublas.md). Takes
 *            scaling none and no promote or model parameter.
 *   fast_accum  0 or 1: fp8 inputs, torch._scaled_mm's use_fast_accum
 *   reduced_precision_reduction  1 (default) or 0: PyTorch's
 *               allow_fp16/bf16_reduced_precision_reduction; 0 keeps the
 *               split-K partials of f16/bf16 outputs in f32
 *   call_shape  MxNxK: A and B are rows and columns of a call of that shape
 *            (the same K), whose tree is used; "" or "none": the matrices
 *            are the call
 *   op       the call the tree is looked up for: mm (default: torch.mm),
 *            mm-ta (torch.mm(P.t(), Q)) or linear (F.linear(x, W, bias): B
 *            is W^T, C the bias broadcast over rows; docs/cublas.md)
 *   table    a table file (read when set: its errors name the file and
 *            line); "" or "builtin": the library's copy of
 *            emu/cublas-h200.txt (the default)
 *   anything else: a model parameter (fpemu_mma_model_set, `--set K=V`)
 * fast_accum, call_shape, op (other than mm) and table go with algo
 * cublas: a run under algo plain with one of them set is refused.
 * 0, or -1 with a message (the configuration unchanged). */
int fpemu_gemmer_set(fpemu_gemmer *g, const char *key, const char *value);
/* The value of an option, or what the last run used, as text (snprintf
 * semantics: the length of the value; -1 for an unknown key):
 *   algo, fast_accum, call_shape ("" when unset), op, table ("builtin", a
 *   path, or "" before algo cublas is set), table_name and stands_for (the
 *   table's header lines);
 *   resolved    after a run under algo cublas: "table" (a row gave the
 *               tree) or "plain" (the shape is not listed: the plain
 *               model); "" otherwise
 *   table_line, row_status  the row's line in the table and what it was
 *               checked against ("" unless resolved is "table")
 *   tree        the tree the run used, in sumtree.h's text form. */
int fpemu_gemmer_get(const fpemu_gemmer *g, const char *key, char *buf, size_t len);
/* D (M x N) = A (M x K) x B (K x N) (+ C, M x N, may be NULL), all
 * row-major f32 (A and B transposed with trans_a, trans_b); A and B are
 * quantised per the recipe. 0, or -1 with a
 * message (fpemu_gemm_check's, or out of memory). */
int fpemu_gemmer_run_f32(fpemu_gemmer *g, int M, int N, int K, const float *A, const float *B, const float *C,
                         float *D);
/* The same from codes of afmt (A, M x K) and bfmt (B, K x N), used as they
 * are (scaling must be none); C (f32, may be NULL) is the MMA's c. A code
 * outside its format's field is refused. */
int fpemu_gemmer_run_codes(fpemu_gemmer *g, int M, int N, int K, const uint64_t *A, const uint64_t *B,
                           const float *C, float *D);
/* Telemetry of the last run by name: a_n, a_overflow, a_saturated,
 * a_flushed, a_subnormal, a_nonfinite_in, amax_a, scale_a, the same for b,
 * slow_outputs, kernel, lanes; scale_min_a and scale_min_b, the operand's
 * smallest encode scale as `fpemu train`'s telemetry writes it (1 without
 * scaling; the per-tensor scale; the least of the rows', tiles' or
 * blocks' for rowwise, blockwise, MX (a zero block counting as 1, NaN if a
 * block held inf or NaN) and NVFP4 (fl32(tensor scale / block scale), 0
 * for a zero block)). 0, or -1 (unknown key, no run). */
int fpemu_gemmer_stat(fpemu_gemmer *g, const char *key, double *value);
const char *fpemu_gemmer_stat_key(int i);

/* TransformerEngine DelayedScaling's scale from the amax its history
 * reduces to: fl32(max_finite(fmt) * 2^-margin) / amax in f32 when amax is
 * finite and > 0, else prev; an infinite scale becomes FLT_MAX. 0, or -1
 * with a message (unknown format). */
int fpemu_api_delayed_scale(const char *fmt, double amax, double margin, double prev, double *scale, char *err,
                            size_t errlen);

/* ---- tensor-core dot products (what `fpemu mma` does) -------------------- */

typedef struct fpemu_dotter fpemu_dotter;

/* d = c + sum a[i] b[i] under MMA model `model` with input formats afmt and
 * bfmt (NULL: afmt) and accumulator formats cfmt and dfmt (NULL: the
 * other one, both NULL: f32, as fpemu_mma_model_preset);
 * afmt and bfmt "s8"/"int8" or "u8"/"uint8" give the integer model (c and
 * d s32). NULL with a message in err. */
fpemu_dotter *fpemu_dotter_new(const char *model, const char *afmt, const char *bfmt, const char *cfmt,
                               const char *dfmt, char *err, size_t errlen);
void fpemu_dotter_free(fpemu_dotter *d);
const char *fpemu_dotter_error(const fpemu_dotter *d);
/* Options: promote (f32 promotion every N products: each chunk starts from
 * 0 and is added to the running d with a dfmt add, as `fpemu mma
 * --promote`), sat (integer models: 0 or 1, .satfinite; it rebuilds the
 * model from its preset, so set it before any parameter), and the model
 * parameters of fpemu_mma_model_set. 0, or -1 with a message. */
int fpemu_dotter_set(fpemu_dotter *d, const char *key, const char *value);
/* The registry name of the model's format: which = 'a', 'b', 'c' or 'd'
 * ("s8", "u8", "s32" for integer models); NULL for another letter. */
const char *fpemu_dotter_format(const fpemu_dotter *d, char which);
/* nbatch independent dot products of length k: a and b are nbatch x k
 * codes, c nbatch codes (NULL: +0), out nbatch codes of dfmt. Integer
 * models take the s8/u8 bytes as codes (0..255) and c and d as 32-bit
 * two's complement codes. A code outside its field is refused. 0, or -1
 * with a message. */
int fpemu_dotter_run(fpemu_dotter *d, size_t nbatch, size_t k, const uint64_t *a, const uint64_t *b,
                     const uint64_t *c, uint64_t *out);

#ifdef __cplusplus
}
#endif
#endif
