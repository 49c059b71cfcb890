/* SPDX-License-Identifier: MIT */
/* sumtree.h: summation trees of library dot products and GEMMs (what a
 * cuBLAS call does above the tensor-core instruction), a probe that infers
 * one from a black box, and tables of trees per shape (docs/cublas.md).
 *
 * A tree description (fpemu_sumtree) is a small family of trees over K:
 *
 *   K is cut into `split` partitions of whole tiles of `unit` products:
 *   contiguous (T = ceil(K / unit) tiles, ceil(T / split) tiles each, the
 *   last partition shorter) or interleaved (tile t to partition t mod split).
 *   Each partition is a chain of leaf blocks: the MMA model `leaf` (a preset:
 *   a device's tensor-core blocks of `block` products, chained `chain`; or a
 *   reference kind: fma-seq, pairwise, exact; or `add-seq`, products rounded
 *   to f32 and then added in order) over its products in K order; with
 *   chunk = C > 0 the partition is summed in chunks of C products, each a
 *   chain from 0 added to an f32 accumulator (acc = 0 + p0, acc + p1, ...:
 *   promotion, DeepGEMM's and CUTLASS's f32 accumulation on the CUDA cores).
 *   With split > 1 the partitions' f32 results are rounded (rne) to
 *   reduce_fmt and combined in reduce_fmt, in order (seq: ((P0 + P1) + P2)
 *   ...) or as a pairwise tree over the partitions in order; with
 *   partial_fmt (f16 or bf16) each result is first rounded to that format
 *   (a split-K workspace of the output's type, summed in f32).
 *   Epilogue: v = result (in f32); alpha != 1: v = fl32(alpha * v); C (if
 *   given) enters as the c of partition 0's first chain (c=init) or in the
 *   epilogue as v = fl32(v + fl32(beta * C)) (c=epilogue); the output is v
 *   rounded (rne) to `out` (NULL: f32).
 *   kpad = P > 1: each partition's n products are preceded by zero products
 *   (codes 0) up to a multiple of P, so that its first leaf block (and chunk)
 *   holds the n mod P leftover products (a residue-first mainloop in every
 *   split). kres = T > 1: each partition's first k-tile of T holds its
 *   n mod T leftover products and then zero products up to T (the partial
 *   tile first, its missing elements at its end: CUTLASS 2.x's residue-first
 *   mainloop with tiles of T longer than the leaf block); kpad and kres
 *   exclude each other. operands = f32: the kernel reads the call's f32 data as it is,
 *   not rounded to tf32 (cuBLAS runs some tf32 calls on an f32 SIMT kernel);
 *   only for tf32 inputs. The text form shows kpad, kres, partial_fmt and
 *   operands only when they are set.
 *
 * Text form (fpemu_sumtree_format / fpemu_sumtree_parse): space-separated
 * key=value tokens, e.g.
 *   leaf=h100 block=16 chain=rounded chunk=0 split=3 unit=64 layout=contiguous
 *   reduce=seq reduce_fmt=f32 c=epilogue alpha=1 beta=1 out=f32
 * Keys left out take the defaults of fpemu_sumtree_init (one partition, the
 * preset's block and chain, f32 everywhere, c in the epilogue, alpha = beta
 * = 1). A table (fpemu_sumtree_table) holds one tree per (formats, shape):
 * docs/cublas.md describes the file.
 *
 * The library never prints; errors come back as -1 with a message. */
#ifndef FPEMU_SUMTREE_H
#define FPEMU_SUMTREE_H

#include <stddef.h>
#include <stdint.h>
#include "fpemu.h"
#include "mma.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpemu_sumtree_order { FPEMU_SUMTREE_SEQ = 0, FPEMU_SUMTREE_PAIRWISE } fpemu_sumtree_order;

typedef struct fpemu_sumtree {
    char leaf[32];              /* MMA preset name, or "add-seq" */
    int block;                  /* products per leaf block; 0 = the preset's */
    int chain;                  /* -1 = the preset's; else fpemu_mma_chain */
    int chunk;                  /* 0, or products per f32-accumulated chunk */
    int split;                  /* partitions of K, >= 1 */
    int unit;                   /* products per tile of the split, >= 1 */
    int interleaved;            /* 0 contiguous, 1 interleaved tiles */
    fpemu_sumtree_order reduce; /* order of the partitions' reduction */
    const fpemu_format *reduce_fmt; /* partials and their sums (f32 default) */
    const fpemu_format *partial_fmt; /* NULL (f32); f16, bf16: each partial stored so, then read into reduce_fmt */
    int c_init;                 /* 1: C is the first chain's c; 0: epilogue */
    double alpha, beta;
    const fpemu_format *out;    /* output rounding (rne); NULL = f32 */
    int kpad;                   /* 0; or P > 1: each partition starts with zero products, to a multiple of P */
    int kres;                   /* 0; or T > 1: each partition's n mod T leftover products first, then zeros to T */
    const fpemu_format *operands; /* NULL: the call's input formats; f32: a tf32 call's f32 data as it is */
} fpemu_sumtree;

/* Defaults: leaf "h100", one partition, unit 1, seq, f32, c in the
 * epilogue, alpha = beta = 1, out = NULL (f32). */
void fpemu_sumtree_init(fpemu_sumtree *t);
/* Parse the key=value text into *t (starting from its current values).
 * Unknown keys and bad values: -1 with a message naming the token. */
int fpemu_sumtree_parse(fpemu_sumtree *t, const char *text, char *err, size_t errlen);
/* The text form of *t (every key; snprintf semantics). */
int fpemu_sumtree_format(const fpemu_sumtree *t, char *buf, size_t len);
/* Are two descriptions the same tree (every field equal)? */
int fpemu_sumtree_equal(const fpemu_sumtree *x, const fpemu_sumtree *y);

/* The partitions of K: fills part[i] (the partition of product i, for
 * i < K) when part is not NULL and returns the number of non-empty
 * partitions (partitions are numbered 0.. in order). */
int fpemu_sumtree_partitions(const fpemu_sumtree *t, int K, int *part);

/* A bound tree: the leaf model bound to input formats (c = d = f32), and
 * the output format. */
typedef struct fpemu_sumtree_bound {
    fpemu_sumtree t;
    fpemu_mma_model leaf;       /* bound leaf model (unused for add-seq) */
    int add_seq;
    const fpemu_format *fa, *fb, *f32;
} fpemu_sumtree_bound;

/* PyTorch's allow_fp16_reduced_precision_reduction /
 * allow_bf16_reduced_precision_reduction = False on a table's tree: the
 * split-K partials stay f32 (partial_fmt cleared). On the H200's recorded
 * grid the setting changed exactly the calls whose rows have partial_fmt,
 * and those as this says (docs/cublas.md). */
void fpemu_sumtree_no_reduced_precision(fpemu_sumtree *t);

/* Bind t to input formats: the leaf preset (its block and chain overridden
 * when given). With t->operands set the leaf is bound to those formats
 * instead, and b->fa, b->fb are what the caller casts its values to (the
 * codes fpemu_sumtree_dot and fpemu_sumtree_gemm_codes take are always
 * b->fa's and b->fb's). 0, or -1 with a message (no such preset, formats
 * the device has no MMA for, a bad block, operands on inputs that are not
 * tf32). */
int fpemu_sumtree_bind(fpemu_sumtree_bound *b, const fpemu_sumtree *t, const fpemu_format *fa,
                       const fpemu_format *fb, char *err, size_t errlen);

/* One output: d = the tree over a[0..k-1] * b[0..k-1] with c (an f32 code;
 * ignored when beta == 0 and c is in the epilogue), as a code of t.out (f32
 * when NULL). k is the shape's K. */
uint64_t fpemu_sumtree_dot(const fpemu_sumtree_bound *b, const uint64_t *a, const uint64_t *bv, int k,
                           uint64_t c);

/* D (M x N, f32 values of t.out) = the tree for every output, from codes
 * (A M x K row-major in fa, B K x N row-major in fb; C f32 M x N or NULL).
 * Runs fpemu_gemm_codes per partition and chunk (the vectorised kernel) and
 * reduces per element as fpemu_sumtree_dot does, bit for bit. nthreads as
 * fpemu_gemm_config. 0, or -1 with a message. */
int fpemu_sumtree_gemm_codes(const fpemu_sumtree_bound *b, int M, int N, int K, const uint64_t *A,
                             const uint64_t *B, const float *C, int nthreads, float *D, char *err,
                             size_t errlen);

/* ---- tables ---------------------------------------------------------------- */

typedef struct fpemu_sumtree_row {
    char op[16];              /* the call (FPEMU_SUMTREE_OPS): "mm" (default), "mm-ta", "linear" */
    char a[16], b[16], d[16]; /* input formats and the call's output format */
    int fast;                 /* fp8: use_fast_accum (0/1); -1 = any */
    int M, N, K;
    char status[24];          /* what the row was checked against: "gemm", "pairprobe", ... */
    fpemu_sumtree tree;
    int line;                 /* line in the table file */
} fpemu_sumtree_row;

typedef struct fpemu_sumtree_table {
    char name[64];
    char stands_for[256];     /* the software and device the table stands for */
    char source[256];
    int nrows;
    fpemu_sumtree_row *rows;
} fpemu_sumtree_table;

/* Parse a table's text ("fpemu_sumtree_table = 1", name, stands_for,
 * source, then one row per line: `a=F b=F d=F [fast=0|1] m=M n=N k=K
 * status=S` and the tree's keys). what names the text in messages. 0, or -1
 * with "what:LINE: ..." */
int fpemu_sumtree_table_parse(fpemu_sumtree_table *tab, const char *text, const char *what, char *err,
                              size_t errlen);
/* Read and parse a table file (at most 1 MiB). */
int fpemu_sumtree_table_read(fpemu_sumtree_table *tab, const char *path, char *err, size_t errlen);
void fpemu_sumtree_table_free(fpemu_sumtree_table *tab);
/* The calls a row can stand for (its `op` key; cuBLAS may pick another
 * kernel for each at the same M x N x K):
 *   mm      torch.mm / torch.matmul / torch._scaled_mm of row-major A (M x K)
 *           and B (K x N) (the default; the rows written before the key);
 *   mm-ta   torch.mm(P.t(), Q): A is the transposed view of a row-major K x M
 *           tensor (autograd's weight gradient of a Linear, dY^T X);
 *   linear  F.linear(x, W, bias): A = x (M x K), B = W^T with W a row-major
 *           N x K tensor, the 1-d bias added by cuBLASLt's BIAS epilogue: it
 *           is the call's C (broadcast over rows, beta 1), entering as the
 *           tree's c key says. */
#define FPEMU_SUMTREE_OPS "mm mm-ta linear"
/* The row for these formats and shape (fast: -1 when not an fp8 call) of
 * a torch.mm call (op "mm"), or NULL: shapes not in the table are the
 * caller's fallback. */
const fpemu_sumtree_row *fpemu_sumtree_table_find(const fpemu_sumtree_table *tab, const char *a, const char *b,
                                                  const char *d, int fast, int M, int N, int K);
/* The same for the call op (one of FPEMU_SUMTREE_OPS; NULL = "mm"). */
const fpemu_sumtree_row *fpemu_sumtree_table_find_op(const fpemu_sumtree_table *tab, const char *op, const char *a,
                                                     const char *b, const char *d, int fast, int M, int N, int K);
/* The table built into the library: the text of emu/cublas-h200.txt when
 * the library was built (the Makefile compiles it in), so a program, the
 * shared library and the Python package need no file. Parsed into *tab as
 * fpemu_sumtree_table_parse does ("cublas-h200.txt (built in)" in
 * messages); free it with fpemu_sumtree_table_free. */
int fpemu_sumtree_table_builtin(fpemu_sumtree_table *tab, char *err, size_t errlen);
const char *fpemu_sumtree_table_builtin_text(void);

/* The tree of one library call, what `fpemu gemm --algo cublas` computes
 * (docs/cublas.md): the table's row for the input formats fa, fb, the
 * call's output format out (NULL: f32), fast_accum (fp8 inputs:
 * torch._scaled_mm's use_fast_accum; 0 otherwise) and the call's shape
 * M x N x K; or, for a shape the table does not list, the plain model: one
 * chain over K of `model` (fma-seq for f32 x f32 inputs; fp8 without fast
 * accumulation promoted every 128 products, as _scaled_mm did at every
 * recorded K). The tree's out is `out` (NULL when f32).
 * Returns 0 with *row the row used, or NULL when the shape is not listed
 * (the caller may say that it fell back); -1 with a message: fast_accum
 * with inputs that are not fp8, or a row whose leaf is another device's
 * preset than `model`. */
int fpemu_sumtree_resolve(const fpemu_sumtree_table *tab, const char *model, const fpemu_format *fa,
                          const fpemu_format *fb, const fpemu_format *out, int fast_accum, int M, int N, int K,
                          fpemu_sumtree *tree, const fpemu_sumtree_row **row, char *err, size_t errlen);
/* fpemu_sumtree_resolve for the call op (one of FPEMU_SUMTREE_OPS; NULL =
 * "mm", what fpemu_sumtree_resolve looks up): the row of that op, else the
 * same plain model. An unknown op: -1 with a message naming it. */
int fpemu_sumtree_resolve_op(const fpemu_sumtree_table *tab, const char *op, const char *model, const fpemu_format *fa,
                             const fpemu_format *fb, const fpemu_format *out, int fast_accum, int M, int N, int K,
                             fpemu_sumtree *tree, const fpemu_sumtree_row **row, char *err, size_t errlen);

/* ---- the probe ------------------------------------------------------------- */

/* One output of a black-box GEMM or dot product of length k (the shape's
 * K): d = the box's result for output `out` (0 .. outputs - 1, e.g.
 * row * N + col) with A's row a and B's column b (codes of fa, fb) and C's
 * element c (an f32 code). 0, or nonzero if it cannot evaluate. */
typedef int (*fpemu_sumtree_box)(void *user, long out, const uint64_t *a, const uint64_t *b, int k,
                                 uint64_t c, uint64_t *d);

/* One recorded question and answer (the evidence the fit compares). A pair
 * question keeps only its pattern: A's row a_small everywhere but a_big at
 * i and j, B's column b_small everywhere but b_big at i and b_neg at j. */
typedef struct fpemu_sumtree_query {
    uint64_t *a, *b;            /* k codes each (owned by the evidence); NULL for a pair */
    uint64_t c, d;              /* c (f32) and the box's answer (fd) */
    int kind;                   /* what the query is (FPEMU_SUMTREE_Q_*) */
    int i, j;                   /* pair questions: the positions of +big and -big */
    uint64_t a_small, a_big, b_small, b_big, b_neg;
} fpemu_sumtree_query;

enum { FPEMU_SUMTREE_Q_PAIR = 1, FPEMU_SUMTREE_Q_RANDOM, FPEMU_SUMTREE_Q_EPILOGUE };

typedef struct fpemu_sumtree_evidence {
    const fpemu_format *fa, *fb, *fd;
    int k;
    int n, cap;
    fpemu_sumtree_query *q;
} fpemu_sumtree_evidence;

void fpemu_sumtree_evidence_init(fpemu_sumtree_evidence *e, const fpemu_format *fa, const fpemu_format *fb,
                                 const fpemu_format *fd, int k);
/* Append a copy of the question (a, b: k codes) and its answer. 0 or -1 (memory). */
int fpemu_sumtree_evidence_add(fpemu_sumtree_evidence *e, const uint64_t *a, const uint64_t *b, uint64_t c, uint64_t d,
                               int kind);
/* Append a pair question (its pattern, see fpemu_sumtree_query) with c and its answer d. */
int fpemu_sumtree_evidence_add_pair(fpemu_sumtree_evidence *e, int i, int j, uint64_t a_small, uint64_t a_big,
                                    uint64_t b_small, uint64_t b_big, uint64_t b_neg, uint64_t c, uint64_t d);
void fpemu_sumtree_evidence_free(fpemu_sumtree_evidence *e);
/* The pair question's vectors: a all a_small but a_big at i and j; b all
 * b_small but b_big at i and b_neg at j (the recorded design has a_small =
 * a_big = 1). */
void fpemu_sumtree_pair_vectors(int k, int i, int j, uint64_t a_small, uint64_t a_big, uint64_t b_small, uint64_t b_big,
                                uint64_t b_neg, uint64_t *a, uint64_t *b);
/* The question's vectors (k codes each) into a and b. */
void fpemu_sumtree_query_vectors(const fpemu_sumtree_evidence *e, const fpemu_sumtree_query *q, uint64_t *a, uint64_t *b);

typedef enum fpemu_sumtree_status {
    FPEMU_SUMTREE_RESOLVED = 0,   /* one tree (up to trees that agree on everything tried) */
    FPEMU_SUMTREE_AMBIGUOUS,      /* several trees explain every answer but differ elsewhere */
    FPEMU_SUMTREE_UNRESOLVED,     /* no tree of the family explains the answers */
    FPEMU_SUMTREE_NONDETERMINISTIC, /* the same question got different answers */
    FPEMU_SUMTREE_PER_OUTPUT      /* outputs of one call do not share a tree */
} fpemu_sumtree_status;

const char *fpemu_sumtree_status_name(fpemu_sumtree_status s);

typedef struct fpemu_sumtree_probe_opts {
    long outputs;               /* outputs of the box (>= 1); the probe asks output 0,
                                 * and 1 and outputs - 1 for the per-output check */
    int anchors[8], nanchors;   /* pair anchors i (default: 0, 1, K/2, K-1) */
    int pair_step;              /* anchors after the first ask every pair_step-th j
                                 * (and the 16 around i); 0 = 1 up to K = 1024, else K / 512 */
    int nrandom;                /* random questions in the evidence (default 8) */
    int nvalidate;              /* random vectors to tell candidates apart (default 64) */
    uint64_t seed;              /* default 1 */
    const char *leaves;         /* space-separated leaf presets to try; NULL = every
                                 * preset that takes the formats, and add-seq */
} fpemu_sumtree_probe_opts;

void fpemu_sumtree_probe_opts_init(fpemu_sumtree_probe_opts *o);

#define FPEMU_SUMTREE_MAXALT 8
typedef struct fpemu_sumtree_probe_result {
    fpemu_sumtree_status status;
    fpemu_sumtree tree;         /* RESOLVED: the tree (the first of its equivalents) */
    int nalt;                   /* trees that explain every answer (RESOLVED: equivalent ones) */
    fpemu_sumtree alt[FPEMU_SUMTREE_MAXALT];
    long candidates;            /* trees of the family tried */
    int survived[3];            /* candidates left after the core of the evidence, after
                                 * telling them apart on random vectors, after every answer */
    long queries;               /* questions asked of the box */
    int block_hint, boundary;   /* the reading: first group along anchor 0's path, first
                                 * position where its growth is not one group per block */
    char reading[512];          /* which j meet anchor 0 first (groups, as text) */
    char note[512];             /* why, when not RESOLVED */
} fpemu_sumtree_probe_result;

/* Ask the box: determinism, outputs sharing one tree, the epilogue (alpha,
 * beta), pair questions for every anchor and all j, random questions; then
 * fit. fd: the box's output format (NULL: f32). 0 (see out->status), or -1
 * with a message (bad arguments, the box refused, out of memory). */
int fpemu_sumtree_probe(fpemu_sumtree_box box, void *user, const fpemu_format *fa, const fpemu_format *fb,
                        const fpemu_format *fd, int k, const fpemu_sumtree_probe_opts *opts,
                        fpemu_sumtree_probe_result *out, char *err, size_t errlen);

/* The fit alone, on recorded evidence (the offline form: no box to ask
 * more, so trees that explain every answer but differ on random inputs
 * come back AMBIGUOUS). alpha and beta are taken as given in base (or 1, 1). */
int fpemu_sumtree_fit(const fpemu_sumtree_evidence *e, const fpemu_sumtree *base, const fpemu_sumtree_probe_opts *opts,
                      fpemu_sumtree_probe_result *out, char *err, size_t errlen);

/* The reading of anchor i's pair answers (pair queries of the evidence with
 * that i; small is the product at a position other than i and j, alpha the
 * box's factor, 1 for none): lost[j] = K - answer / (alpha small) for j != i (-1 where the answer is not a
 * whole count, -2 where j was not asked), and a text summary of the runs of
 * equal counts into text (len bytes). Returns the number of j read. */
int fpemu_sumtree_read_pairs(const fpemu_sumtree_evidence *e, int i, double alpha, int *lost, char *text, size_t len);

#ifdef __cplusplus
}
#endif
#endif
