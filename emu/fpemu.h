/* SPDX-License-Identifier: MIT */
/* fpemu.h: the public interface of libfpemu, a bit-exact emulator of
 * low-precision floating-point and integer formats.
 *
 * Everything is driven by two explicit objects:
 *   - fpemu_format: a format descriptor (data, not code). Named formats come
 *     from a registry; custom ones from a spec string.
 *   - fpemu_ctx: rounding mode, overflow/subnormal policies, NaN policy, the
 *     sticky IEEE flags and the stochastic-rounding stream. No global state.
 *
 * Encoded values ("codes") travel as uint64_t holding the format's bit
 * pattern in the low bits (tf32 codes are f32 bit patterns whose low 13 bits
 * are zero). The library never prints and never exits.
 *
 * Semantics: IEEE 754-2019 clauses 4 and 7 extended to the small formats,
 * and docs/semantics.md for every choice where the standards are silent.
 */
#ifndef FPEMU_H
#define FPEMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FPEMU_VERSION "0.1.0"

/* ---- rounding modes and flags ------------------------------------------ */

typedef enum fpemu_round {
    FPEMU_RNE = 0, /* nearest, ties to even */
    FPEMU_RNA,     /* nearest, ties away from zero */
    FPEMU_RTZ,     /* toward zero */
    FPEMU_RUP,     /* toward +inf */
    FPEMU_RDN,     /* toward -inf */
    FPEMU_RTO,     /* round to odd */
    FPEMU_SR,      /* stochastic */
    FPEMU_ROUND_COUNT
} fpemu_round;

/* IEEE exception flags, in SoftFloat's/TestFloat's bit layout. */
enum {
    FPEMU_FLAG_INEXACT = 0x01,
    FPEMU_FLAG_UNDERFLOW = 0x02,
    FPEMU_FLAG_OVERFLOW = 0x04,
    FPEMU_FLAG_INFINITE = 0x08, /* divide by zero */
    FPEMU_FLAG_INVALID = 0x10
};

/* Which NaN a NaN-producing operation delivers. */
typedef enum fpemu_nan_policy {
    FPEMU_NAN_CANONICAL = 0, /* positive canonical quiet NaN (0x7E00, 0x7FC0, 0x7FC00000, 0x7F e4m3, 0x80 fnuz) */
    FPEMU_NAN_X86,           /* x86 SSE: propagate the first NaN operand (quieted); default NaN is negative (0xFE00) */
    FPEMU_NAN_CUDA,          /* NVIDIA GPUs: the positive NaN with every significand bit set (0x7FFF f16/bf16,
                              * 0x7FFFFFFF f32, 0x7F e5m2/e4m3, 0x80 fnuz), whatever the operands */
    FPEMU_NAN_TORCH,         /* PyTorch's CUDA casts (.to(dtype), measured on an H200): in formats of at most
                              * 8 bits, the NaN keeps the sign of the NaN operand or of the overflowing value,
                              * with every magnitude bit set (0x7F/0xFF e4m3 and e5m2; 0x80 fnuz); in wider
                              * formats as cuda (0x7FFF f16/bf16, sign dropped). docs/semantics.md */
    FPEMU_NAN_POLICY_COUNT
} fpemu_nan_policy;

/* ---- format descriptors ------------------------------------------------ */

typedef enum fpemu_inf_style {
    FPEMU_INF_NONE = 0, /* no infinities */
    FPEMU_INF_IEEE,     /* exponent all ones, mantissa zero */
    FPEMU_INF_TOP       /* the top magnitude code (P3109 extended: 0x7F / 0xFF) */
} fpemu_inf_style;

typedef enum fpemu_nan_style {
    FPEMU_NANS_NONE = 0, /* no NaN (e2m1, e2m3, e3m2) */
    FPEMU_NANS_IEEE,     /* exponent all ones, mantissa nonzero; quiet bit = top mantissa bit */
    FPEMU_NANS_FN,       /* only S.111..1.111..1 (OCP e4m3, "fn") */
    FPEMU_NANS_UZ,       /* only the negative-zero pattern 0x80 ("fnuz", P3109) */
    FPEMU_NANS_ALLONES   /* unsigned, all ones (e8m0) */
} fpemu_nan_style;

typedef enum fpemu_class {
    FPEMU_CLASS_ZERO = 0,
    FPEMU_CLASS_SUBNORMAL,
    FPEMU_CLASS_NORMAL,
    FPEMU_CLASS_INF,
    FPEMU_CLASS_QNAN,
    FPEMU_CLASS_SNAN
} fpemu_class;

typedef struct fpemu_format {
    char name[128];        /* canonical name, e.g. "e4m3", or the custom spec as given */
    int bits;              /* bits of the encoding (19 for tf32) */
    int container;         /* bits of the code word: 8, 16, 32 or 64 */
    int pad;               /* low zero bits in the container (13 for tf32) */
    int ebits, mbits, bias;
    int is_signed;         /* 0 only for e8m0 */
    int has_negzero;       /* formats with a sign but no -0 use 0x80 for NaN */
    int has_subnormals;    /* 0 only for e8m0 */
    fpemu_inf_style inf;
    fpemu_nan_style nan;
    /* derived (fpemu_format_finish fills these) */
    int p;                 /* precision: mbits + 1 */
    int emin;              /* unbiased exponent of the smallest normal binade */
    int emax;              /* unbiased exponent of the largest finite value */
    uint64_t maxmant;      /* mantissa field of the largest finite value */
    /* The next three are in code units BEFORE the container padding: shift
     * left by pad for a code word (tf32: max_code 0x3FBFF is code 0x7F7FE000). */
    uint64_t max_code;     /* +max finite */
    uint64_t sign_bit;     /* 0 for unsigned formats */
    uint64_t mag_mask;     /* all magnitude bits */
    double max_finite, min_normal, min_subnormal;
    const double *decode_table; /* NULL, or 2^bits decoded values for <= 16-bit formats */
    const uint8_t *class_table; /* NULL, or 2^bits fpemu_class values */
    const void *fast;           /* internal: specialised fast paths of hot registry formats, or NULL */
} fpemu_format;

/* Look up a named format or alias ("fp16", "float8_e4m3fn", "binary8p4e",
 * ...) or parse a custom spec ("e6m1", "e3m4fn", "e4m3fnuz",
 * "custom:e=4,m=3,bias=7,inf=no,nan=fn"). Returns a pointer to a
 * descriptor that lives for the life of the process (registry formats are
 * shared; custom ones are interned), or NULL. On NULL, if err is not NULL, a
 * message saying what was expected is written to err (errlen bytes). */
const fpemu_format *fpemu_format_get(const char *name, char *err, size_t errlen);

/* Number of registry formats and the i-th one (for catalogues). Aliases are
 * not listed here; fpemu_format_aliases(i) returns a comma-separated list. */
int fpemu_format_count(void);
const fpemu_format *fpemu_format_at(int i);
const char *fpemu_format_aliases(int i);

/* Fill the derived fields of a hand-built descriptor; its tables and fast
 * paths are cleared (a modified copy of a registry descriptor is safe).
 * Returns 0, or -1 with a message in err if the fields are out of range. */
int fpemu_format_finish(fpemu_format *f, char *err, size_t errlen);

/* Hex digits used for a code of this format in vector lines. */
int fpemu_format_hex_digits(const fpemu_format *f);

/* Classification and decoding. fpemu_to_double is exact for every format
 * (NaN gives a quiet double NaN with the sign preserved). */
fpemu_class fpemu_classify(const fpemu_format *f, uint64_t code);
double fpemu_to_double(const fpemu_format *f, uint64_t code);
int fpemu_is_nan(const fpemu_format *f, uint64_t code);
/* Exact decomposition of a finite nonzero value: |v| = sig * 2^exp. */
void fpemu_unpack(const fpemu_format *f, uint64_t code, int *sign, uint64_t *sig, int *exp);

/* ---- context ----------------------------------------------------------- */

typedef struct fpemu_ctx {
    fpemu_round round;    /* outside fpemu_round: every rounding gives the invalid
                           * operation's result, NaN with FPEMU_FLAG_INVALID (docs/semantics.md) */
    int sat;              /* satfinite: overflow goes to max finite, never inf/NaN */
    int ftz;              /* flush tiny results to zero (underflow + inexact) */
    int daz;              /* read subnormal inputs as zero */
    int tininess_before;  /* detect tininess before rounding (default: after) */
    fpemu_nan_policy nan_policy;
    unsigned flags;       /* sticky flags, OR-ed by every operation */
    /* stochastic rounding: r is the top sr_bits bits of a 64-bit draw;
     * sr_bits = 0, or any value outside 1..64, means 64. Up iff r <
     * frac x 2^R with frac the exact fraction of an ulp, by magnitude:
     * every operation knows it to 64 bits and whether anything is below. */
    int sr_bits;
    uint64_t seed;        /* counter-based stream: draw = fpemu_random64(seed, counter) */
    uint64_t counter;     /* advances by one per draw, whichever source gave it (fpemu_add_sr
                           * and friends take theirs from the caller, not from here) */
    /* caller-supplied draws, used in order when set: a draw is
     * sr_stream[sr_pos++] while sr_pos < sr_len, else the counter stream's.
     * So draw k of a computation is sr_stream[sr_pos + k] while the stream
     * lasts, else fpemu_random64(seed, counter + k). */
    const uint64_t *sr_stream;
    size_t sr_len, sr_pos;
} fpemu_ctx;

/* rne, IEEE overflow, gradual underflow, tininess after, canonical NaN. */
void fpemu_ctx_init(fpemu_ctx *ctx);

/* Names of rounding modes and NaN policies: "rne", "rna", "rtz", "rup",
 * "rdn", "rto", "sr"; TestFloat spellings ("near_even", "minMag", "min",
 * "max", "near_maxMag", "odd", with or without a leading "-r") too; NaN
 * policies "canonical", "x86", "cuda", "torch". Case-insensitive, as format names.
 * Return -1 for an unknown name. */
int fpemu_round_parse(const char *name);
const char *fpemu_round_name(fpemu_round r);
int fpemu_nan_policy_parse(const char *name);
const char *fpemu_nan_policy_name(fpemu_nan_policy p);

/* The counter-based generator behind stochastic rounding (SplitMix64 of
 * seed and counter): the same (seed, counter) always gives the same draw. */
uint64_t fpemu_random64(uint64_t seed, uint64_t counter);
/* Its inverse: the counter at which seed's stream gives draw, so that
 * fpemu_random64(seed, fpemu_random64_counter(seed, draw)) == draw. For each
 * seed the stream is a permutation of the 2^64 values over the 2^64
 * counters (every step of the mix is a bijection). Puts a chosen draw
 * under a given seed (directed tests of sr, the checker's boundary draws). */
uint64_t fpemu_random64_counter(uint64_t seed, uint64_t draw);

/* ---- scalar arithmetic (codes in, code out; flags OR-ed into ctx) -----
 * A code's value is its format's field: the low `bits` bits above `pad`
 * (tf32's 13 padding bits). Every other bit of an operand is ignored, and
 * no result carries any. */

uint64_t fpemu_add(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);
uint64_t fpemu_sub(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);
uint64_t fpemu_mul(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);
uint64_t fpemu_div(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);
uint64_t fpemu_sqrt(const fpemu_format *f, uint64_t a, fpemu_ctx *ctx);
/* a * b + c with a single rounding. */
uint64_t fpemu_fma(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx);

/* Stochastic rounding with the caller's random bits, one call at a time
 * (the "random bits supplied by the caller" form, as hardware that takes an
 * rbits operand has it): the operation in sr, whatever ctx->round says,
 * with rbits as its draw (its top sr_bits bits are r). By definition the
 * result and flags are those of the operation on a copy of ctx with round
 * = sr and the one-draw caller stream {rbits}; ctx's counter, sr_stream and
 * sr_pos are neither read nor changed, and only its flags are OR-ed. An
 * operation whose result takes no rounding (inf, NaN, exact zero
 * operands...) ignores rbits, as it takes no draw. */
uint64_t fpemu_add_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx);
uint64_t fpemu_sub_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx);
uint64_t fpemu_mul_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx);
uint64_t fpemu_div_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx);
uint64_t fpemu_sqrt_sr(const fpemu_format *f, uint64_t a, uint64_t rbits, fpemu_ctx *ctx);
uint64_t fpemu_fma_sr(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits, fpemu_ctx *ctx);
uint64_t fpemu_convert_sr(const fpemu_format *dst, const fpemu_format *src, uint64_t a, uint64_t rbits,
                          fpemu_ctx *ctx);
uint64_t fpemu_from_float_sr(const fpemu_format *dst, float x, uint64_t rbits, fpemu_ctx *ctx);

/* IEEE 754-2019 minimum/maximum (NaN propagates, -0 < +0) and
 * minimumNumber/maximumNumber (a quiet NaN operand is ignored). */
uint64_t fpemu_min(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);
uint64_t fpemu_max(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);
uint64_t fpemu_min_num(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);
uint64_t fpemu_max_num(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);

typedef enum fpemu_cmp { FPEMU_LT = -1, FPEMU_EQ = 0, FPEMU_GT = 1, FPEMU_UN = 2 } fpemu_cmp;
/* Quiet comparison (invalid only for signalling NaNs); signaling=1 raises
 * invalid for any NaN (IEEE compareSignaling). */
fpemu_cmp fpemu_compare(const fpemu_format *f, uint64_t a, uint64_t b, int signaling, fpemu_ctx *ctx);

/* Conversion between any two formats. */
uint64_t fpemu_convert(const fpemu_format *dst, const fpemu_format *src, uint64_t a, fpemu_ctx *ctx);
/* From/to host binary32/binary64 values (exact decode, rounded encode). */
uint64_t fpemu_from_double(const fpemu_format *dst, double x, fpemu_ctx *ctx);
uint64_t fpemu_from_float(const fpemu_format *dst, float x, fpemu_ctx *ctx);
/* fpemu_to_float is exact, with no flags and no sr draw, for formats whose
 * every value is a float (p <= 24, below 2^128, no bit under 2^-149); others
 * (f64, custom formats past those bounds) round per ctx like fpemu_convert. */
float fpemu_to_float(const fpemu_format *f, uint64_t code, fpemu_ctx *ctx);

/* Round an exact value (-1)^sign * (sig + sticky) * 2^exp to the format,
 * where sticky != 0 means "a little more than sig" (strictly less than one
 * unit of sig's last bit). This is the single round-and-pack step every
 * operation ends in; models of hardware (MMA) use it too. sig may be 0 only
 * with sticky = 0 (an exact zero). */
uint64_t fpemu_round_pack(const fpemu_format *f, int sign, uint64_t sig, int exp, int sticky, fpemu_ctx *ctx);

/* ---- integer quantisation -------------------------------------------- */

typedef struct fpemu_qtype {
    const char *name; /* "int8", "uint8", "int4", "uint4", "int8s" / "int4s" (symmetric: [-127, 127], [-7, 7]) */
    int qmin, qmax;
} fpemu_qtype;
/* The integer type of that name (case-insensitive), or NULL. */
const fpemu_qtype *fpemu_qtype_get(const char *name);

/* q = clamp(zero_point + round(x / scale), qmin, qmax), the division exact
 * and the rounding per ctx->round (sr included). NaN x gives zero_point and
 * the invalid flag; clamping sets overflow + inexact. */
int32_t fpemu_quantize(double x, double scale, int32_t zero_point, int qmin, int qmax, fpemu_ctx *ctx);
/* (q - zero_point) * scale, computed in double and rounded to f32. */
float fpemu_dequantize(int32_t q, double scale, int32_t zero_point);
/* Array forms (int32 outputs so every qtype fits). Element i takes draw i
 * (sr_stream[sr_pos + i] while the caller's stream lasts, else counter +
 * i); the counter then advances by n and sr_pos by n (to at most sr_len),
 * as fpemu_encode_f32. */
void fpemu_quantize_array(int32_t *q, const float *x, size_t n, double scale, int32_t zero_point,
                          int qmin, int qmax, fpemu_ctx *ctx);

/* Integer dot products: exact accumulation of a[i] * b[i] plus c, then the
 * int32 result wraps (two's complement) or saturates. */
int32_t fpemu_dot_i8(const int8_t *a, const int8_t *b, size_t n, int32_t c, int saturate);
int32_t fpemu_dot_u8i8(const uint8_t *a, const int8_t *b, size_t n, int32_t c, int saturate);

/* ---- array API (the hot loop of emulated training) --------------------- */

/* Counters for telemetry over one array cast (docs/training.md). */
typedef struct fpemu_cast_stats {
    uint64_t n;              /* elements */
    uint64_t overflow;       /* finite inputs that became inf/NaN, or were clamped (sat) */
    uint64_t saturated;      /* of those, clamped to max finite */
    uint64_t underflow;      /* nonzero inputs that became zero */
    uint64_t subnormal;      /* nonzero inputs that became subnormal */
    uint64_t nonfinite_in;   /* inf/NaN inputs */
    double amax;             /* max |finite input| */
} fpemu_cast_stats;

/* Encode f32 values to codes of fmt. dst element size is the container
 * (uint8_t, uint16_t, uint32_t, uint64_t). stats may be NULL; when given it
 * is accumulated into (not reset). Element i takes draw i (sr_stream[sr_pos
 * + i] while the caller's stream lasts, else counter + i), so results do not
 * depend on how the array is split across threads, and an sr cast equals
 * the loop of fpemu_convert over its elements when none is zero, inf or NaN
 * (those take no draw in a scalar conversion). The counter then advances by
 * n and sr_pos by n (to at most sr_len) in EVERY mode, rne included (a
 * scalar operation in a deterministic mode takes no draw): the positions of
 * a training step's casts do not depend on their modes. */
void fpemu_encode_f32(const fpemu_format *fmt, void *dst, const float *src, size_t n,
                      fpemu_ctx *ctx, fpemu_cast_stats *stats);
/* Decode codes to f32: the loop of fpemu_to_float over the elements on
 * ctx (flags OR-ed). Exact, with no draw, where every value of fmt is a
 * float; otherwise (f64, ...) sr takes the draws of successive calls, not
 * draw i of the array rule above. */
void fpemu_decode_f32(const fpemu_format *fmt, float *dst, const void *src, size_t n, fpemu_ctx *ctx);
/* "Fake quantisation": dst[i] = decode(encode(src[i])); dst may equal src.
 * Where fmt holds every float exactly (f32 itself, f64) and no policy
 * changes an exact value (sat, daz, ftz: a float subnormal is flushed), the
 * values are copied, all but NaNs, which come out as the conversions give
 * them (the NaN policy; a signalling NaN raises invalid). */
void fpemu_round_f32(const fpemu_format *fmt, float *dst, const float *src, size_t n,
                     fpemu_ctx *ctx, fpemu_cast_stats *stats);
/* Generic code-array conversion between any two formats (draws, counter
 * and sr_pos as fpemu_encode_f32). */
void fpemu_convert_array(const fpemu_format *dst_fmt, void *dst, const fpemu_format *src_fmt,
                         const void *src, size_t n, fpemu_ctx *ctx);

/* Load/store one element of a code array of the format's container size. */
uint64_t fpemu_code_load(const fpemu_format *f, const void *arr, size_t i);
void fpemu_code_store(const fpemu_format *f, void *arr, size_t i, uint64_t code);

#ifdef __cplusplus
}
#endif
#endif
