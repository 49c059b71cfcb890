/* SPDX-License-Identifier: MIT */
/* ref.h: the MPFR reference, an implementation of every scalar operation of
 * the emulator (add, sub, mul, div, sqrt, fma, conversion between any two
 * formats) that shares no rounding code with emu/. It reads the format
 * descriptor (fpemu_format) as data and decodes and encodes codes with its
 * own code; every rounding is done by GNU MPFR (docs/verification.md).
 *
 * Semantics: IEEE 754-2019 clauses 4 and 7, extended to the small formats
 * as docs/semantics.md describes, implemented independently. The recipe:
 *   1. special operands (NaN, inf, x/0, 0*inf, ...) are settled by rules;
 *   2. the finite operation is computed by MPFR at the target precision p in
 *      a practically unbounded exponent range: that gives the result rounded
 *      with unbounded exponent range and its ternary value, from which
 *      overflow, tininess (before or after rounding) and inexact follow;
 *   3. only when that result is below the min normal, the exponent range is
 *      narrowed to the target's (mpfr_set_emin(emin - p + 2)) and
 *      mpfr_check_range + mpfr_subnormalize give the gradually underflowed
 *      value, without double rounding;
 *   4. the overflow mapping (inf, max finite, NaN for formats without inf,
 *      satfinite) and ftz are applied on top.
 * rna and rto are not MPFR modes: rna is computed as a truncation to p+1
 * bits whose last bit decides (one more bit on the subnormal grid too); rto
 * as a truncation whose last bit is set when inexact; sr (with the caller's
 * draw, ref_ctx.sr_draw) from a truncation to p + 66 bits and its ternary
 * value, compared with the draw in exact integer arithmetic.
 *
 * A ref_ctx holds MPFR variables initialised once (no allocation per
 * case); use one per thread. MPFR's exponent range is thread-local when
 * MPFR is built thread-safe (ref_thread_safe()); ref_op restores the
 * range it expects on entry, so other MPFR code in the same thread is safe
 * between calls. Library code: never prints, never exits. */
#ifndef FPEMU_REF_H
#define FPEMU_REF_H

#include <stddef.h>
#include <stdint.h>
#include <mpfr.h>
#include "fpemu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ref_opcode {
    REF_ADD = 0,
    REF_SUB,
    REF_MUL,
    REF_DIV,
    REF_SQRT,
    REF_FMA,      /* a * b + c, one rounding */
    REF_CONVERT,  /* operand in the src format, result in the target format */
    REF_OP_COUNT
} ref_opcode;

/* Operands an opcode takes (1, 2 or 3). */
int ref_op_arity(ref_opcode op);
/* "add", "sub", "mul", "div", "sqrt", "mulAdd", "to". */
const char *ref_op_name(ref_opcode op);

/* What the reference knows about a format, derived from the descriptor's
 * fields (bits, pad, ebits, mbits, bias, is_signed, has_negzero,
 * has_subnormals, inf, nan, p, emin, emax, maxmant). */
typedef struct ref_format {
    const fpemu_format *desc;
    int bits, pad, ebits, mbits, bias, p, emin, emax;
    int is_signed, has_negzero, has_zero, has_inf, has_nan;
    fpemu_inf_style inf;
    fpemu_nan_style nan;
    uint64_t ef_max;      /* all-ones exponent field */
    uint64_t mmask;       /* mantissa field mask */
    uint64_t sign;        /* sign bit (before the pad shift), 0 if unsigned */
    uint64_t maxmant;
    uint64_t code_max;    /* +max finite (after the pad shift) */
    uint64_t code_inf;    /* +inf, or 0 if none */
    uint64_t code_nan;    /* canonical quiet NaN, or 0 if none */
} ref_format;

/* Decoded value: |v| = sig * 2^exp for finite nonzero values. */
typedef enum ref_class { REF_ZERO = 0, REF_FINITE, REF_INF, REF_QNAN, REF_SNAN } ref_class;
typedef struct ref_value {
    ref_class cls;
    int sign;
    uint64_t sig;
    int exp;
} ref_value;

/* Fill *rf from a descriptor. Returns 0, or -1 for a descriptor the
 * reference cannot handle (p > 53, exponents out of double range). */
int ref_format_init(ref_format *rf, const fpemu_format *f);
/* The reference's own decoder (daz: subnormals read as zeros of their
 * sign). Codes of tf32 ignore their low pad bits. */
void ref_decode(const ref_format *rf, uint64_t code, int daz, ref_value *v);
int ref_is_nan(const ref_format *rf, uint64_t code);
/* Exact value as a double (NaN: a quiet NaN). Every format's values are
 * doubles. For diagnostics. */
double ref_to_double(const ref_format *rf, uint64_t code);

typedef struct ref_ctx {
    /* policies, as in fpemu_ctx */
    fpemu_round round;
    int sat;
    int ftz;
    int daz;
    int tininess_before;
    /* sr: the operation's 64-bit draw and R (sr_bits outside 1..64: 64).
     * Each rounding goes up in magnitude iff the draw's top R bits, as an
     * integer, are below frac x 2^R, frac the exact distance to the lower
     * neighbour in ulps (MPFR gives the exact result truncated to p + 66
     * bits and whether anything was dropped). The same draw decides the
     * rounding with unbounded exponent range (overflow, tininess after
     * rounding) and, for a tiny result, the one on the subnormal grid. */
    uint64_t sr_draw;
    int sr_bits;
    /* set by ref_op in sr: sr_took is 1 iff the operation takes a draw (its
     * exact result is finite and nonzero: docs/semantics.md). sr_ndec: the
     * roundings with a nonzero fraction the result depends on, whatever the
     * draw: the one with unbounded exponent range, then for an exact value
     * below the min normal in a format with subnormals the one on the
     * subnormal grid (0, 1 or 2; 0 for a negative result in an unsigned
     * format, which is NaN whatever the draw).
     * Decision i goes up iff the top R bits are <= sr_lastup[i]: the draws
     * with top bits sr_lastup[i] and sr_lastup[i] + 1 straddle it. */
    int sr_took, sr_ndec;
    uint64_t sr_lastup[2];

    /* private */
    const fpemu_format *cur_dst, *cur_src;
    ref_format dst, src;
    ref_opcode op;
    struct ref__dec *dtab;         /* decode table of the operand format (<= 16 bits) */
    const fpemu_format *dtab_fmt, *dtab_want;
    unsigned long dtab_calls;      /* consecutive operations with dtab_want's operands */
    __mpfr_struct opnd[3]; /* operands: custom-allocated, pointing at limb[] */
    mp_limb_t limb[3];
    mpfr_t r;              /* result at p bits (directed/nearest/odd) */
    mpfr_t u;              /* rounded with unbounded exponent range */
    mpfr_t y;              /* rna: truncation at p + 1 bits */
    mpfr_t t;              /* scratch */
    mpfr_t w;              /* sr: the exact result truncated to p + 66 bits */
    mpfr_t maxv, minnorm;  /* of the target */
    mpfr_exp_t emin_sub;   /* mpfr emin giving the target's subnormal grid */
    int init;
} ref_ctx;

/* Initialise (rne, no sat/ftz/daz, tininess after). Returns 0, -1 if
 * MPFR cannot be used. Free with ref_ctx_clear. */
int ref_ctx_init(ref_ctx *r);
void ref_ctx_clear(ref_ctx *r);

/* One operation. operands: ref_op_arity(op) codes, of format f, or of src
 * for REF_CONVERT (src is ignored otherwise and may be NULL). The result
 * code is of format f; *flags receives the operation's flags (FPEMU_FLAG_*),
 * not OR-ed. Descriptors must not change while a ref_ctx has seen them
 * (registry and interned custom formats never do). */
uint64_t ref_op(ref_ctx *r, const fpemu_format *f, ref_opcode op, const uint64_t *operands,
                const fpemu_format *src, unsigned *flags);

/* n operations of one kind: case i's operands are operands[i * arity ...
 * i * arity + arity - 1] (arity = ref_op_arity(op)); res[i] and flags[i]
 * are what ref_op would return for them, in every mode and policy (sr: each
 * case takes r->sr_draw; sr_took, sr_ndec and sr_lastup are the last
 * case's). Faster than n calls: the formats, the exponent range and the
 * decode table are set up once for the batch (no other MPFR code runs in
 * between, so the range every case leaves in place is the one the next
 * expects). Returns 0, or -1 (every res and flags 0) where ref_op would
 * return 0 for an unusable format or opcode. */
int ref_op_n(ref_ctx *r, const fpemu_format *f, ref_opcode op, const uint64_t *operands, size_t n,
             const fpemu_format *src, uint64_t *res, unsigned *flags);

/* Convenience forms. */
uint64_t ref_add(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, unsigned *flags);
uint64_t ref_sub(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, unsigned *flags);
uint64_t ref_mul(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, unsigned *flags);
uint64_t ref_div(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, unsigned *flags);
uint64_t ref_sqrt(ref_ctx *r, const fpemu_format *f, uint64_t a, unsigned *flags);
uint64_t ref_fma(ref_ctx *r, const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, unsigned *flags);
uint64_t ref_convert(ref_ctx *r, const fpemu_format *dst, const fpemu_format *src, uint64_t a,
                     unsigned *flags);

/* sr: a draw that straddles one of the operation's decisions. Runs ref_op
 * once (draw 0, R = r->sr_bits) to learn them; then decision which % ndec,
 * and the draw whose top R bits are its sr_lastup (above = 0: the last
 * that rounds up) or one more (above = 1: the first that does not), with
 * fill's bits below the top R. Returns fill itself when the result is
 * exact (no decision) or when no draw lies above the last that rounds up
 * (sr_lastup = 2^R - 1: every draw rounds up). Leaves r->sr_draw at 0. */
uint64_t ref_sr_straddle(ref_ctx *r, const fpemu_format *f, ref_opcode op, const uint64_t *operands,
                         const fpemu_format *src, unsigned which, int above, uint64_t fill);

/* 1 if MPFR keeps its exponent range per thread (safe to use one ref_ctx
 * per thread concurrently). */
int ref_thread_safe(void);

#ifdef __cplusplus
}
#endif
#endif
