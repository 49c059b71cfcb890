/* SPDX-License-Identifier: MIT */
/* internal.h: helpers shared by the files of libfpemu (not installed). */
#ifndef FPEMU_INTERNAL_H
#define FPEMU_INTERNAL_H

#include <string.h>
#include "fpemu.h"

/* Bit pattern of a double and back (memcpy is folded by the compiler). */
static inline uint64_t emu__dbits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
static inline double emu__bitsd(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }
static inline uint32_t emu__fbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float emu__bitsf(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

/* A finite double as sign and |x| = sig * 2^exp (sig has the implicit bit;
 * subnormals and zero have exp = -1074). */
typedef struct { int sign; uint64_t sig; int exp; } emu_split;
static inline emu_split emu__split_double(double x) {
    emu_split u;
    uint64_t b = emu__dbits(x);
    int be = (int)((b >> 52) & 0x7FF);
    u.sign = (int)(b >> 63);
    u.sig = b & ((UINT64_C(1) << 52) - 1);
    if (be) u.sig |= UINT64_C(1) << 52, u.exp = be - 1075;
    else u.exp = -1074;
    return u;
}

/* Codes with the container padding (tf32) removed, and put back. */
static inline uint64_t emu__strip(const fpemu_format *f, uint64_t code) {
    uint64_t c = code >> f->pad;
    return f->bits == 64 ? c : c & ((UINT64_C(1) << f->bits) - 1);
}
static inline uint64_t emu__unstrip(const fpemu_format *f, uint64_t c) { return c << f->pad; }
/* A code with every bit outside its field cleared, in place (fpemu.h: such
 * bits are ignored, and no result carries any). */
static inline uint64_t emu__field(const fpemu_format *f, uint64_t code) { return emu__unstrip(f, emu__strip(f, code)); }

/* The OCP e2m1 parameters: the formats whose block-scaled products take an
 * MMA model's group rule (mma.c's grouped path relies on its products
 * being multiples of 1/4 below 2^5; gemm.c sends the same formats to the
 * scalar model). Any other e2m1-shaped custom format is ungrouped. */
static inline int emu__is_ocp_e2m1(const fpemu_format *f) {
    return f->ebits == 2 && f->mbits == 1 && f->pad == 0 && f->bias == 1 && f->is_signed && f->has_subnormals &&
           f->inf == FPEMU_INF_NONE && f->nan == FPEMU_NANS_NONE;
}

/* An IEEE-style 16-bit layout with e exponent and m fraction bits and
 * this bias (f16: 5, 10, 15; bf16: 8, 7, 127): sign, -0, subnormals, IEEE
 * inf and NaN, no padding. The formats array.c's hardware converters and
 * gemm.c's vector decoding take. */
static inline int emu__ieee16(const fpemu_format *f, int e, int m, int bias) {
    return f->ebits == e && f->mbits == m && f->bias == bias && f->is_signed && f->has_negzero && f->has_subnormals &&
           f->inf == FPEMU_INF_IEEE && f->nan == FPEMU_NANS_IEEE && !f->pad && f->container == 16;
}

/* fn(args + i * size) for i in [0, n), item 0 on the calling thread and
 * up to 63 others on the library's worker threads (pool.c); returns when
 * every item has. Items beyond those, or that no thread could be started
 * for, run on the caller. Every item runs under the caller's
 * floating-point environment (emu__fpenv_get). */
void emu__parallel(int n, void *(*fn)(void *), void *args, size_t size);

/* The floating-point environment the GEMM's kernels and quantisation, and
 * array.c's hardware converters (which read their f16 flags back from it),
 * assume: x86's MXCSR with round to nearest, every exception masked and
 * neither FTZ nor DAZ (a caller's FTZ or DAZ would flush the subnormals
 * those paths rely on). emu__fpenv_enter sets it and returns the caller's,
 * which emu__fpenv_leave puts back (flags included: the library raises
 * none in the caller's); 0 and no effect off x86. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <xmmintrin.h>
static inline unsigned emu__fpenv_get(void) { return _mm_getcsr(); }
static inline void emu__fpenv_set(unsigned e) { _mm_setcsr(e); }
#else
static inline unsigned emu__fpenv_get(void) { return 0; }
static inline void emu__fpenv_set(unsigned e) { (void)e; }
#endif
#define EMU_FPENV_CLEAN 0x1F80u
static inline unsigned emu__fpenv_enter(void) {
    const unsigned e = emu__fpenv_get();
    emu__fpenv_set(EMU_FPENV_CLEAN);
    return e;
}
static inline void emu__fpenv_leave(unsigned e) { emu__fpenv_set(e); }
/* emu__fpenv_enter and _leave for calls too short to pay two MXCSR writes
 * (about 10 ns on the development VM, more than such a call): the
 * library's environment is set only where the caller's modes differ from
 * it, and the caller's put back only where the call changed it (a flag it
 * raised). */
static inline unsigned emu__fpenv_enter_lazy(void) {
    const unsigned e = emu__fpenv_get();
    if ((e & ~0x3Fu) != EMU_FPENV_CLEAN) emu__fpenv_set(EMU_FPENV_CLEAN);
    return e;
}
static inline void emu__fpenv_leave_lazy(unsigned e) {
    if (emu__fpenv_get() != e) emu__fpenv_set(e);
}
/* x through an empty asm the compiler must assume reads and writes it: a
 * value laundered after the switch to the library's environment and a
 * result laundered before the switch back keep the arithmetic between them
 * between the two MXCSR writes. (The compiler does not know that
 * floating-point operations depend on the MXCSR: it moved
 * fpemu_dequantize's product, a call it had found to be const, after the
 * switch back.) */
#define EMU_LAUNDER(x) __asm__ volatile("" : "+m"(x))

/* Classify a stripped code. */
fpemu_class emu__classify(const fpemu_format *f, uint64_t c);
/* Exact decode of a stripped finite code (class ZERO/SUBNORMAL/NORMAL). */
double emu__decode_finite(const fpemu_format *f, uint64_t c);

/* Special encodings (stripped codes). */
uint64_t emu__zero(const fpemu_format *f, int sign);
uint64_t emu__maxfinite(const fpemu_format *f, int sign);

/* The NaN a NaN-producing operation delivers (full code, padding added),
 * with INVALID raised where docs/semantics.md says so. nan_ops/nan_fmts list the
 * operands that are NaN candidates for propagation (x86 policy); a NaN
 * result in a format without NaN is +max finite with INVALID. */
uint64_t emu__nan_result(const fpemu_format *f, fpemu_ctx *ctx, int invalid,
                         int nops, const uint64_t *ops, const fpemu_format *const *fmts);
/* The NaN of a result with sign neg (an overflow, or a NaN operand): signed
 * under the torch policy in formats of at most 8 bits, else emu__nan_result's. */
uint64_t emu__nan_signed(const fpemu_format *f, fpemu_ctx *ctx, int invalid, int neg);
/* An exact infinity of the given sign, mapped for formats without inf
 * (docs/semantics.md); full code. */
uint64_t emu__inf_result(const fpemu_format *f, fpemu_ctx *ctx, int sign);

/* Round an exact nonzero value x + (tiny of sign rsign) given as a double
 * (rsign in {-1, 0, 1}); the path of every format with p <= 24. */
uint64_t emu__round_double(const fpemu_format *f, double x, int rsign, fpemu_ctx *ctx);
/* fpemu_round_pack with a significand of up to 128 bits: sr is exact when
 * sig carries the exact value down to 64 bits below the result's quantum
 * (nonzero bits further down: sticky). */
typedef unsigned __int128 u128;
static inline int emu__clz128(u128 x) {
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? __builtin_clzll(hi) : 64 + __builtin_clzll((uint64_t)x);
}
uint64_t emu__round_pack128(const fpemu_format *f, int sign, u128 sig, int exp, int sticky, fpemu_ctx *ctx);
/* floor(sa 2^117 / sb) for 53-bit significands with bit 52 set (116 or 117
 * bits), by two steps of long division; *sticky: a nonzero remainder. */
static inline u128 emu__div117(uint64_t sa, uint64_t sb, int *sticky) {
    u128 n1 = (u128)sa << 64, q1 = n1 / sb;
    u128 n2 = (n1 - q1 * sb) << 53, q2 = n2 / sb;
    *sticky = n2 - q2 * sb != 0;
    return q1 << 53 | q2;
}
/* fpemu_quantize's rounding of the exact quotient x / y (x finite and
 * nonzero, y > 0 finite, |x / y| < 2^40) to an integer, exact in sr too. */
int64_t emu__round_quotient(double x, double y, fpemu_ctx *ctx, int *inexact);

/* Round x + (tiny of sign rsign) to an integer per ctx->round (sr
 * included); |x| < 2^62. Sets *inexact. */
int64_t emu__round_to_int(double x, int rsign, fpemu_ctx *ctx, int *inexact);

/* Is every value of f exactly a float? */
int emu__fits_f32(const fpemu_format *f);

/* Position of a registry format, or -1 for custom formats. */
#define EMU_REGISTRY_MAX 64
extern fpemu_format emu__registry[];
extern const int emu__registry_n;
static inline int emu__registry_index(const fpemu_format *f) {
    return f >= emu__registry && f < emu__registry + emu__registry_n ? (int)(f - emu__registry) : -1;
}

/* f64 and f32 registry descriptors. */
const fpemu_format *emu__f64(void);
const fpemu_format *emu__f32(void);

/* fast.c: exact decode of finite codes (0 if not handled) and packing of
 * normal, non-overflowing results (EMU_FAST_FAIL otherwise, before any
 * change to ctx). */
#define EMU_FAST_FAIL UINT64_MAX
int emu__fast_decode(const fpemu_format *f, uint64_t code, double *v);
uint64_t emu__fast_pack(const fpemu_format *f, double d, int rsign, fpemu_ctx *ctx);

/* Scalar entry points of a registry format (fast.c, arith.c): fpemu_add,
 * _sub, _mul and _fma call these directly when the format has them. Each
 * computes the full result, falling back to the generic path itself; fma
 * may be NULL (generic). */
typedef uint64_t (*emu_add_fn)(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx, int negate_b);
typedef uint64_t (*emu_mul_fn)(const fpemu_format *f, uint64_t a, uint64_t b, fpemu_ctx *ctx);
typedef uint64_t (*emu_fma_fn)(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx);
/* sr with the caller's draw (fpemu_add_sr and friends), falling back to
 * the generic path (below) themselves. */
typedef uint64_t (*emu_add_rb_fn)(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx,
                                  int negate_b);
typedef uint64_t (*emu_mul_rb_fn)(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx);
typedef uint64_t (*emu_fma_rb_fn)(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits,
                                  fpemu_ctx *ctx);
/* the generic paths of those (arith.c): the definition, run on a copy of
 * ctx with a one-draw stream */
uint64_t emu__add_sr_generic(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx, int neg);
uint64_t emu__mul_sr_generic(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t rbits, fpemu_ctx *ctx);
uint64_t emu__fma_sr_generic(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, uint64_t rbits, fpemu_ctx *ctx);
/* f32 -> format (fpemu_from_float; fpemu_from_float_sr), and their generic
 * paths (convert.c; arith.c) */
typedef uint64_t (*emu_from_fn)(const fpemu_format *f, float x, fpemu_ctx *ctx);
typedef uint64_t (*emu_from_rb_fn)(const fpemu_format *f, float x, uint64_t rbits, fpemu_ctx *ctx);
uint64_t emu__from_float_generic(const fpemu_format *f, float x, fpemu_ctx *ctx);
uint64_t emu__from_float_sr_generic(const fpemu_format *f, float x, uint64_t rbits, fpemu_ctx *ctx);
enum { EMU_TAB_OPS = 5 }; /* add, sub, mul, div, sqrt */
typedef struct emu_fastops { /* indexed by rounding mode */
    /* 8-bit registry formats: the per-mode result tables [op][mode],
     * published on first use (arith.c), looked up inline by fpemu_add,
     * fpemu_sub and fpemu_mul; the sr slot stays NULL. All NULL for every
     * other format. First in the struct: one load from f->fast. */
    _Atomic(uint16_t *) tab8[EMU_TAB_OPS][FPEMU_ROUND_COUNT];
    /* and their sr tables of add, sub and mul (arith.c), NULL until used */
    _Atomic(uint32_t *) sr8[3];
    emu_add_fn add[FPEMU_ROUND_COUNT];
    emu_mul_fn mul[FPEMU_ROUND_COUNT];
    emu_fma_fn fma[FPEMU_ROUND_COUNT];
    emu_add_rb_fn add_rb; /* each NULL where none is specialised */
    emu_mul_rb_fn mul_rb;
    emu_fma_rb_fn fma_rb;
    emu_from_fn from_f32[FPEMU_ROUND_COUNT]; /* NULL: generic */
    emu_from_rb_fn from_f32_rb;
    void *tables;  /* the format's per-mode result table slots (tab8, or arith.c's for < 8 bits), or NULL */
    /* sr rounding constants of a tabulated format (arith.c tab_sr) */
    uint64_t sr_lo, sr_span, sr_maxr, sr_rebias, sr_signbit;
    int sr_sh, sr_ok, sr_sumexact;
} emu_fastops;
/* Called once per registry format, at registry initialisation. */
const emu_fastops *emu__fastops_for(const fpemu_format *f);
/* Fill *o with the result-table ops of a <= 8-bit registry format
 * (arith.c); o must be where the ops live (tables may point into it). */
void emu__tabops(const fpemu_format *f, emu_fastops *o);

/* The generic paths (arith.c), without tables or specialised ops. */
enum { EMU_OP_ADD, EMU_OP_SUB, EMU_OP_MUL, EMU_OP_DIV };
uint64_t emu__binary(const fpemu_format *f, int op, uint64_t a, uint64_t b, fpemu_ctx *ctx);
uint64_t emu__fma_generic(const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *ctx);

/* array.c: telemetry of one cast into *st (with_n_amax = 0: n and amax
 * already counted by the caller). */
void emu__count_cast(const fpemu_format *fmt, fpemu_cast_stats *st, float x, uint64_t code, unsigned fl, int with_n_amax);
/* array.c: fpemu_decode_f32 of codes held one per uint64_t (the recipes'
 * codes), through the same tables. */
void emu__decode_codes_f32(const fpemu_format *fmt, float *dst, const uint64_t *codes, size_t n, fpemu_ctx *ctx);

/* sr's cut of an f32 at a format's last place (array.c's sr32_for fills it;
 * ok = 0 where it does not apply): an f32 whose magnitude m has m - lo <
 * hi - lo (and is positive where signbit is 0) rounds to ((m >> sh) -
 * rebias) plus one if element i's draw falls below its low sh bits. */
typedef struct { int ok, sh; uint32_t lo, hi, rebias, lowmask; uint64_t signbit; } emu_sr_cut;
/* cast.c: that cut for 8 elements at a time (AVX-512DQ, at cast level 2),
 * over the first n - n % 8 elements of src, element i drawing (seed, base +
 * i): codes stored in dst (container 1 or 2 bytes) for the elements the cut
 * applies to, each marked in mask (bit i % 8 of byte i / 8); the others are
 * left to the caller. ORs FPEMU_FLAG_INEXACT into *flags; with stats, adds
 * n and amax of the marked elements. Returns how many elements it looked
 * at (0 where the CPU or the forced level lacks the kernel). */
size_t emu__sr_cut_fast(const emu_sr_cut *k, uint64_t seed, uint64_t base, int sr_bits, const float *src, size_t n,
                        void *dst, int bytes, uint8_t *mask, unsigned *flags, fpemu_cast_stats *stats);

/* A context whose round is not one of fpemu_round's values: every
 * operation that rounds gives the invalid operation's result instead
 * (docs/semantics.md). Checked on the generic paths only; the fast paths are
 * entered only for valid modes. */
static inline int emu__bad_mode(const fpemu_ctx *ctx) { return (unsigned)ctx->round >= FPEMU_ROUND_COUNT; }

/* One SR draw from the context (caller stream first, then the counter). */
uint64_t emu__draw(fpemu_ctx *ctx);
/* The stream position of element i of an array whose element 0 draws at
 * counter base and caller-stream position pos (element i takes draw i;
 * i = n: where the array leaves the stream). A position past the caller's
 * stream stops at its end: the counter draws there either way. */
static inline void emu__array_at(fpemu_ctx *ctx, uint64_t base, size_t pos, size_t i) {
    ctx->counter = base + i;
    ctx->sr_pos = ctx->sr_stream && pos + i > ctx->sr_len ? ctx->sr_len : pos + i;
}

/* fpemu_random64: SplitMix64 of seed and counter. Its constants are named
 * for cast.c's 8-lane copy (sr_cut512), which must give the same draws. */
#define EMU_MIX_SEED UINT64_C(0x9E3779B97F4A7C15)
#define EMU_MIX_CTR UINT64_C(0xD1B54A32D192ED03)
#define EMU_MIX_M1 UINT64_C(0xBF58476D1CE4E5B9)
#define EMU_MIX_M2 UINT64_C(0x94D049BB133111EB)
#define EMU_MIX_KEY UINT64_C(0x2545F4914F6CDD1D)
static inline uint64_t emu__mix(uint64_t seed, uint64_t counter) {
    uint64_t z = seed * EMU_MIX_SEED + (counter + 1) * EMU_MIX_CTR;
    z ^= z >> 31;
    z *= EMU_MIX_M1;
    z ^= z >> 27;
    z *= EMU_MIX_M2;
    z ^= z >> 31;
    z += seed ^ EMU_MIX_KEY;
    z ^= z >> 29;
    z *= EMU_MIX_M1;
    return z ^ (z >> 32);
}
/* sr's decision for a value whose bits below the kept ones form the 64-bit
 * binary fraction frac (nothing below it): up iff the draw's top R bits,
 * as an integer, are below frac * 2^R rounded up (R = sr_bits; 0 or >= 64
 * mean 64). round.c's round_at is the general case (bits below frac). */
static inline uint64_t emu__sr_up(uint64_t draw, uint64_t frac, int sr_bits) {
    if (sr_bits <= 0 || sr_bits >= 64) return draw < frac;
    return (draw >> (64 - sr_bits)) < (frac >> (64 - sr_bits)) + ((frac << sr_bits) != 0);
}

/* The same for a fraction of L bits, frac = low / 2^L (low < 2^L, 1 <= L
 * <= 63): with R = 0 or R >= L the draw's top L bits decide alone. */
static inline uint64_t emu__sr_up_low(uint64_t draw, uint64_t low, int L, int sr_bits) {
    if (__builtin_expect((unsigned)sr_bits - 1u >= (unsigned)L - 1u, 1)) return (draw >> (64 - L)) < low; /* unsigned: no overflow */
    int sh = L - sr_bits; /* R < L: up iff r < ceil(low / 2^(L - R)) */
    return (draw >> (64 - sr_bits)) < ((low + (UINT64_C(1) << sh) - 1) >> sh);
}

/* OR flag bits into ctx->flags, storing only when something changes: a
 * store on every call would chain successive operations through memory. */
static inline void emu__or_flags(fpemu_ctx *ctx, unsigned fl) {
    unsigned old = ctx->flags, nw = old | fl;
    if (__builtin_expect(nw != old, 0)) ctx->flags = nw;
}

/* emu__draw with the counter stream inline. */
static inline uint64_t emu__draw_inline(fpemu_ctx *ctx) {
    if (__builtin_expect(ctx->sr_stream != NULL, 0)) return emu__draw(ctx);
    return emu__mix(ctx->seed, ctx->counter++);
}

/* A message into the caller's buffer (vsnprintf; nothing when err is NULL
 * or errlen 0). Returns -1, so `return emu__errf(...)` fails a call. The
 * library's one message writer (api.c, caststats.c, sumtree.c). */
#if defined(__x86_64__) || defined(__i386__)
/* Whether the CPU has F16C and the OS saves the AVX state (fast.c) */
int emu__have_f16c(void);
#endif
int emu__errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Does the format's arithmetic take the double path (every value exactly a
 * double and products/sums of two exactly in double's range)? */
static inline int emu__small(const fpemu_format *f) { return f->p <= 24 && f->ebits <= 8; }

#endif
