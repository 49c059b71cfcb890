/* SPDX-License-Identifier: MIT */
/* mma.h: models of tensor-core (MMA) dot products, and the black-box probe
 * that infers such a model's parameters from outputs alone.
 *
 * The model (docs/tensor-cores.md; Fasi, Higham, Mikaitis & Pranesh 2021;
 * Khattak & Mikaitis; MMA-Sim) computes d = c + sum_{i<k} a[i]*b[i] as:
 *   1. exact products sig_a*sig_b * 2^(ea+eb), not normalised (significand
 *      in [0,4)); subnormal inputs kept (or flushed, an option);
 *   2. emax = the largest exponent among the products and c (a zero or
 *      subnormal operand counts with its format's minimum exponent);
 *      optionally clamped from below (emax_floor);
 *   3. every term, c included, truncated to nfrac fraction bits below
 *      2^emax: toward zero in sign-magnitude (NVIDIA) or toward -inf (AMD);
 *   4. the truncated terms summed exactly;
 *   5. one normalisation and rounding (out_round, out_mant bits, the output
 *      format's exponent range with gradual underflow);
 *   6. K > B: blocks of B products in sequence, each block's rounded output
 *      is the next block's c;
 *   7. NaN anywhere, or +inf with -inf: canonical NaN; otherwise inf.
 *
 * Codes are uint64_t bit patterns of the model's formats (fa, fb for the
 * inputs, fc for c, fd for d), as everywhere in fpemu. The library never
 * prints; errors come back as -1 with a message in a caller buffer.
 *
 * Presets (the rows of one table in mma.c: "v100", "t4", "a100", "ada",
 * "h100", "b200", "mi250", "mi300", "exact", "fma-seq", "pairwise"; see
 * fpemu_mma_preset_names and fpemu_mma_preset_info) are bound to formats by
 * fpemu_mma_model_preset(): the input formats select the instruction entry of
 * the device's row; a format the device does not support is an error. Open
 * points of that model are options (fpemu_mma_model_set): emax_floor,
 * overflow (RZ overflow -> inf or max finite), block (e.g. T4's block size).
 * Defaults are documented in docs/tensor-cores.md. A preset file (the
 * key = value text of fpemu_mma_model_format, docs/tensor-cores.md) is
 * accepted wherever a preset name is (fpemu_mma_is_preset_file).
 */
#ifndef FPEMU_MMA_H
#define FPEMU_MMA_H

#include <stddef.h>
#include <stdint.h>
#include "fpemu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpemu_mma_kind {
    FPEMU_MMA_KIND_BLOCK = 0, /* the block-FMA algorithm above */
    FPEMU_MMA_KIND_EXACT,     /* one rounding of the exact sum c + sum a*b */
    FPEMU_MMA_KIND_FMA_SEQ,   /* d = fma(a_i, b_i, d) for i = 0..k-1, each rounded in fd */
    FPEMU_MMA_KIND_PAIRWISE,  /* pairwise tree over the exact products, each add
                               * rounded in fd; c added last */
    FPEMU_MMA_KIND_INT        /* s8/u8 inputs, exact int32 accumulation */
} fpemu_mma_kind;

typedef enum fpemu_mma_align { FPEMU_MMA_ALIGN_RZ = 0, FPEMU_MMA_ALIGN_RD } fpemu_mma_align;
/* Where the sum is normalised: once per block (all known NVIDIA parts), or
 * after every addition (a hypothetical design the probe can tell apart). */
typedef enum fpemu_mma_norm { FPEMU_MMA_NORM_END = 0, FPEMU_MMA_NORM_EACH } fpemu_mma_norm;
/* How blocks are chained when K > B. */
typedef enum fpemu_mma_chain {
    FPEMU_MMA_CHAIN_ROUNDED = 0, /* the rounded block output is the next block's c */
    FPEMU_MMA_CHAIN_F32_ADD      /* each block starts from 0; its rounded output is
                                  * added to the running sum with an fd add (out_round) */
} fpemu_mma_chain;

typedef struct fpemu_mma_model {
    char name[32];             /* preset name, e.g. "h100" */
    char device[48];           /* e.g. "H100/H200 (sm_90) e4m3/e5m2" */
    fpemu_mma_kind kind;
    const fpemu_format *fa, *fb, *fc, *fd; /* bound formats (NULL for int models) */
    int block;                 /* B: products per block; 0 = one block for all k */
    int nfrac;                 /* fraction bits kept below 2^emax */
    fpemu_mma_align align;
    fpemu_mma_norm norm;
    fpemu_mma_chain chain;
    fpemu_round out_round;     /* rounding of each block's result */
    int out_mant;              /* mantissa bits of each block's result (<= fd's) */
    int flush_subnormals;      /* subnormal inputs read as zero */
    int tf32_truncate;         /* f32 inputs are first truncated (RZ) to tf32 */
    int has_emax_floor;        /* clamp emax from below at emax_floor */
    int emax_floor;
    int overflow_inf;          /* a finite result beyond fd's range gives inf
                                * even under RZ (1), or max finite (0) */
    int zero_c;                /* 1: a zero c counts with its format's minimum
                                * exponent (docs/tensor-cores.md); 0: it takes no part in emax */
    int zero_product;          /* 1: a zero product counts with ea+eb (the zero
                                * operand at its format's minimum exponent);
                                * 0: it takes no part in emax (MMA-Sim) */
    int zero_plus;             /* 1: every zero result is +0 (H100, measured:
                                * reports/gpu); 0: IEEE signs (-0 + -0 = -0,
                                * a negative result rounded to zero is -0) */
    int nan_allones;           /* NaN results are the positive all-ones pattern
                                * (0x7FFFFFFF, 0x7FFF: what NVIDIA parts return);
                                * 0: the core's canonical quiet NaN */
    /* block-scaled e2m1 x e2m1 (Blackwell kind::mxf4 / mxf4nvf4, MMA-Sim):
     * groups of `group` products summed exactly, times both scales, each
     * group's exponent = the scale exponents; fused with c at group_nfrac
     * bits, group_block products per chained block. group = 0: off (the
     * scale exponents join the product exponents, as for MX fp8). */
    int group, group_nfrac, group_block;
    /* FPEMU_MMA_KIND_INT */
    int a_signed, b_signed, int_sat;
    /* two-stage fusion (AMD CDNA3, MMA-Sim's TR/GTR-FDPA): fuse_nfrac > 0
     * sums the block's products first (their own emax, nfrac bits, align;
     * c takes no part), then cuts that sum to fuse_nfrac bits and c to
     * nfrac bits below E = max(the products' emax, c's exponent), both
     * rounded by fuse_align, and adds them. split = 2: the products are
     * first summed as two interleaved halves (even and odd i), each at its
     * own emax, and the halves aligned (align) to the larger (CDNA3 fp8).
     * 0, 0: off (one stage, c among the terms). */
    int fuse_nfrac, split;
    fpemu_mma_align fuse_align;
    /* FPEMU_MMA_KIND_PAIRWISE: block > 0 sums each block of products as a
     * pairwise tree and adds it to the running d (AMD CDNA2; block = 0:
     * one tree, c added last). ftz = 1: subnormal inputs read as zero and
     * every rounded product and sum below fd's normal range is flushed to
     * zero, keeping its sign (CDNA2's FTZ, MMA-Sim). */
    int ftz;
    /* where the parameters come from: "measured ...", "from the literature,
     * not measured here", or a preset file's status; and its sources */
    char status[64];
    char source[256];
    /* derived by fpemu_mma_model_finish(): the block-result format (fd's exponent
     * range and codes with out_mant mantissa bits; equals *fd when out_mant
     * is fd's) */
    fpemu_format outf;
} fpemu_mma_model;

/* Names of the presets, NULL-terminated: the rows of the preset table in
 * mma.c, in its order (filled from the table when the library loads). */
extern const char *fpemu_mma_preset_names[];

/* What a preset row says, for lists, help texts and GPU mappings: every list
 * of presets outside mma.c is derived from these. */
typedef struct fpemu_mma_preset_info {
    const char *name;       /* "h100" */
    const char *device;     /* "H100/H200 (sm_90)" */
    const char *family;     /* "sm_90", "gfx942 (CDNA3)", "reference" */
    int cc_min, cc_max;     /* NVIDIA compute capabilities it models (x10: 90);
                             * 0, 0 for none */
    int measured;           /* 1: measured on hardware (reports/gpu) */
    const char *status;     /* "measured on ..." or "from the literature, not measured here" */
    const char *sources;    /* where its parameters come from */
    const char *inputs;     /* every input format it takes, space-separated
                             * ("any" for the reference kinds) */
    const char *instructions; /* the instructions it stands for */
    const char *fp8_e4m3, *fp8_e5m2; /* its fp8 formats (training policies'
                             * forward / gradient format), NULL if none */
    int reference;          /* 1: exact, fma-seq, pairwise (no device) */
    const char *errk;       /* the configurations `fpemu errk` studies with it:
                             * "POS:INPUT[:PROMOTE] ..." (POS orders the study's
                             * rows); NULL: none */
    const char *errk_note;  /* appended to its errk labels */
} fpemu_mma_preset_info;

/* Number of presets, and the row i (0 <= i < count); NULL past the end. */
int fpemu_mma_preset_count(void);
const fpemu_mma_preset_info *fpemu_mma_preset_get(int i);
/* The row of a preset name, or NULL. */
const fpemu_mma_preset_info *fpemu_mma_preset_find(const char *name);
/* The device preset whose row lists NVIDIA compute capability cc (x10), or NULL. */
const char *fpemu_mma_preset_for_cc(int cc);
/* The preset names, joined by sep, into buf (truncated; returns buf). */
const char *fpemu_mma_preset_list(char *buf, size_t len, const char *sep);
/* 1 if s names a preset file rather than a preset: it contains a '/' or
 * ends in ".preset". */
int fpemu_mma_is_preset_file(const char *s);
/* Check a model argument without binding formats: a preset name, or a
 * preset file that loads. 0, or -1 with a message. */
int fpemu_mma_model_check_name(const char *name, char *err, size_t errlen);
/* The fp8 formats of a preset or preset file (training's forward and
 * gradient formats: e4m3/e5m2 on NVIDIA, e4m3fnuz/e5m2fnuz on CDNA3): 0 with
 * *e4m3 and *e5m2 set (NULL where the device has none), -1 with a message. */
int fpemu_mma_preset_fp8(const char *name, const char **e4m3, const char **e5m2, char *err,
                         size_t errlen);

/* ---- preset files (docs/tensor-cores.md, "Preset files") ---------------- */

/* Write m as a preset file's text into buf (snprintf semantics: returns
 * the length the whole text needs). The text binds exactly m's formats. */
int fpemu_mma_model_format(const fpemu_mma_model *m, char *buf, size_t len);
/* Write every binding of preset `name` (every input/accumulator format
 * combination its row takes) as one preset file's text. Returns the
 * length needed (snprintf semantics), or -1 with a message. */
int fpemu_mma_preset_format(const char *name, char *buf, size_t len, char *err, size_t errlen);
/* Bind a preset file's text to formats (as fpemu_mma_model_preset; fc, fd
 * may be NULL for f32). what names the text in messages ("FILE:LINE: ...").
 * Returns 0, or -1 with a message naming the file and line. */
int fpemu_mma_model_parse(fpemu_mma_model *m, const char *text, const char *what,
                          const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc,
                          const fpemu_format *fd, char *err, size_t errlen);
/* The same for integer MMA (the file's int_block / int_inputs keys). */
int fpemu_mma_model_parse_int(fpemu_mma_model *m, const char *text, const char *what, int a_signed,
                              int b_signed, int saturate, char *err, size_t errlen);
/* Read a preset file (at most 1 MiB) into a NUL-terminated malloc'ed
 * buffer: 0, or -1 with a message naming the file. */
int fpemu_mma_preset_read(const char *path, char **text, char *err, size_t errlen);

/* Bind a preset to formats. fc and fd may be NULL (f32). Returns 0, or -1
 * with a message naming what is supported when the device has no MMA for
 * these formats. int models: pass fa = fb = NULL and set int_formats. */
int fpemu_mma_model_preset(fpemu_mma_model *m, const char *name, const fpemu_format *fa,
                           const fpemu_format *fb, const fpemu_format *fc,
                           const fpemu_format *fd, char *err, size_t errlen);
/* Integer MMA (s8/u8 x s8/u8 -> s32): exact int32 accumulation, wrapping or
 * saturating (.satfinite). name is a device preset or "exact". */
int fpemu_mma_model_preset_int(fpemu_mma_model *m, const char *name, int a_signed, int b_signed,
                               int saturate, char *err, size_t errlen);

/* Override one parameter: key is one of block, nfrac, align (rz|rd),
 * normalize (end|each), chain (rounded|f32-add), out_round (rne|rtz|...),
 * out_mant, subnormals (keep|flush), tf32_truncate (0|1), emax_floor
 * (none|N), overflow (inf|max), zero_c / zero_product (emin|ignore),
 * zero_sign (ieee|plus), nan (allones|canonical), group. int models take
 * block only (products per instruction: .satfinite clamps each one's
 * result); any other key is refused. Returns 0, or -1 with a message and
 * *m unchanged (the edited model is validated by fpemu_mma_model_finish before
 * it replaces *m). */
int fpemu_mma_model_set(fpemu_mma_model *m, const char *key, const char *value, char *err,
                        size_t errlen);
/* Check the parameters and recompute derived fields after editing the
 * struct by hand: kind, align, normalize, chain and out_round (rne, rna,
 * rtz, rup, rdn, rto) must be values of their enums, out_mant lie in
 * [0, fd's mantissa bits], nfrac in [1, 60] (block kind), block >= 0, and,
 * with group > 0, group <= 64, group_nfrac in [1, 60], group_block >= 1.
 * Returns 0, or -1 with a message and *m unchanged. */
int fpemu_mma_model_finish(fpemu_mma_model *m, char *err, size_t errlen);
/* One line describing the parameters ("block=32 nfrac=13 ..."). */
int fpemu_mma_model_describe(const fpemu_mma_model *m, char *buf, size_t len);

/* d = c + sum_{i<k} a[i]*b[i] (codes in fa/fb/fc, result in fd). k may be
 * any size >= 0. If flags is not NULL, the IEEE flags of the final
 * rounding(s) are OR-ed into it. */
uint64_t fpemu_mma_dot(const fpemu_mma_model *m, const uint64_t *a, const uint64_t *b, size_t k,
                       uint64_t c, unsigned *flags);

/* Block-scaled inputs (MX: sfmt = e8m0, sblock = 32; NVFP4: sfmt = e4m3,
 * sblock = 16): element i of a is scaled by sa[i / sblock], of b by
 * sb[i / sblock]. For MX the scale exponents join the product exponents
 * (Blackwell); e2m1 x e2m1 on a model with group > 0 sums groups exactly
 * first (see fpemu_mma_model.group). */
uint64_t fpemu_mma_dot_scaled(const fpemu_mma_model *m, const uint64_t *a, const uint64_t *b,
                              size_t k, uint64_t c, const fpemu_format *sfmt, const uint64_t *sa,
                              const uint64_t *sb, int sblock, unsigned *flags);

/* Integer models: a/b hold s8/u8 values, c and the result int32. */
int32_t fpemu_mma_dot_int(const fpemu_mma_model *m, const int32_t *a, const int32_t *b, size_t k,
                          int32_t c);

/* ---- black boxes and the probe ------------------------------------------ */

/* One dot product d = c + sum_{i<k} a[i]*b[i], codes in the box's a/b/c/d
 * formats. Returns 0 on success, nonzero if it cannot evaluate (e.g. k too
 * large for the box). */
typedef int (*fpemu_mma_blackbox)(void *user, const uint64_t *a, const uint64_t *b, int k,
                                  uint64_t c, uint64_t *d);

/* Adapter: a model as a black box (user = const fpemu_mma_model *). */
int fpemu_mma_model_blackbox(void *user, const uint64_t *a, const uint64_t *b, int k, uint64_t c,
                             uint64_t *d);

typedef struct fpemu_mma_probe_result {
    int ok;                 /* 1: every parameter was inferred */
    int block;              /* B; 0 = no block boundary seen below kmax */
    int nfrac;              /* fraction bits at alignment; -1 = no truncation
                             * seen up to nfrac_limit (exact alignment) */
    int nfrac_limit;        /* largest nfrac the probe could have detected */
    char align_round[8];    /* "rz", "rd", "rn", "ru", "none" (exact), "?" */
    char out_round[8];      /* "rz", "rne", "rna", "ru", "rd", "rto", "?" */
    int out_mant;           /* mantissa bits of the block result */
    char normalize[8];      /* "end", "each", "?" */
    char subnormals[8];     /* "kept", "flushed", "?" */
    int carry_bits;         /* carry bits verified (>= this many) */
    int guard;              /* nfrac - out_mant: extra alignment bits (-1 if nfrac unbounded) */
    int monotonic;          /* 0: the non-monotonic-accumulation vector showed it */
    int chain_rounded;      /* 1: a block's output is rounded before the next block */
    char matches[160];      /* comma-separated presets with these parameters, or "none" */
    int queries;            /* dot products asked of the box */
    int kmax;               /* longest vector the probe asked for */
    char note[256];         /* why something is "?", if anything is */
} fpemu_mma_probe_result;

/* Run the probe vectors (Fasi et al. 2021 and Khattak & Mikaitis' block-FMA
 * tests, docs/tensor-cores.md; generalised to any output precision) against bb. kmax bounds the vector length asked (>= 8; 64 is
 * enough for every known part). fc/fd may be NULL (f32). Returns 0 if the
 * box answered (out->ok says whether everything was inferred), -1 if it
 * refused the basic vectors or the formats cannot express them. */
int fpemu_mma_probe(fpemu_mma_blackbox bb, void *user, const fpemu_format *fa,
                    const fpemu_format *fb, const fpemu_format *fc, const fpemu_format *fd,
                    int kmax, fpemu_mma_probe_result *out);

/* Format the result as key=value lines (block=, nfrac=, align_round=,
 * out_round=, out_mant=, normalize=, subnormals=, carry_bits=, guard=,
 * monotonic=, chain=, emax_floor=, matches=, queries=). Returns the length
 * (as snprintf). */
int fpemu_mma_probe_format(const fpemu_mma_probe_result *r, char *buf, size_t len);

/* The presets whose parameters for these formats equal the result's
 * (comma-separated into buf, "none" if there is none; truncated to len
 * bytes, nothing written when len is 0). Returns buf. Also
 * fills r->matches when called by fpemu_mma_probe. */
const char *fpemu_mma_probe_match(const fpemu_mma_probe_result *r, const fpemu_format *fa,
                                  const fpemu_format *fb, const fpemu_format *fc,
                                  const fpemu_format *fd, char *buf, size_t len);

/* The parameters a probe of model m must recover (what the test compares). */
void fpemu_mma_probe_expected(const fpemu_mma_model *m, int kmax, fpemu_mma_probe_result *out);

#ifdef __cplusplus
}
#endif
#endif
