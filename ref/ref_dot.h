/* SPDX-License-Identifier: MIT */
/* ref_dot.h: exact dot products on MPFR, independent of emu/'s rounding.
 *
 * d = c + sum_{i<k} a[i]*b[i] is computed exactly (MPFR at a precision
 * large enough to hold every product and the sum without rounding: the
 * span of the terms' exponents plus the significands plus carry bits, ~600
 * bits for f32 operands), then rounded once to the output format by MPFR
 * (target precision, unbounded exponent range, then mpfr_subnormalize on
 * the output's subnormal grid; the overflow mapping of docs/semantics.md).
 * Operands are decoded by the reference's own decoder (ref_decode).
 * Special values: a NaN operand, 0 * inf, or infinities of both signs give
 * the output's canonical NaN; otherwise an infinity gives inf. Library
 * code: never prints. */
#ifndef FPEMU_REF_DOT_H
#define FPEMU_REF_DOT_H

#include <stddef.h>
#include <stdint.h>
#include <mpfr.h>
#include "fpemu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exact value of c + sum a[i]*b[i] (c in fc; fc may be NULL for c = 0)
 * into rop, whose precision is raised as needed. Optional block scales:
 * element i of a is multiplied by the decoded sa[i / sblock] (sfmt), of b by
 * sb[i / sblock]; pass sfmt = NULL for none. Returns 1 for a finite exact
 * value, 0 for NaN (rop set to NaN), 2 for an infinity (rop set to it), -1
 * for a format the reference cannot decode. */
int ref_dot_exact(mpfr_t rop, const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc,
                  const uint64_t *a, const uint64_t *b, size_t k, uint64_t c, const fpemu_format *sfmt,
                  const uint64_t *sa, const uint64_t *sb, int sblock);

/* The exact sum rounded once to fd in mode rnd (rne, rtz, rup, rdn).
 * Returns 0 with *d set, or -1 (unsupported format or mode). */
int ref_dot(const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc, const fpemu_format *fd,
            fpemu_round rnd, const uint64_t *a, const uint64_t *b, size_t k, uint64_t c, uint64_t *d);

/* The exact sum rounded to double (rne), for error measurements: relative
 * errors of 2^-53 are far below what they measure. NaN for NaN results. */
double ref_dot_double(const fpemu_format *fa, const fpemu_format *fb, const fpemu_format *fc,
                      const uint64_t *a, const uint64_t *b, size_t k, uint64_t c);

/* Round an exact MPFR value (any precision) once to format f in mode rnd,
 * with gradual underflow and the overflow mapping; returns the code, or
 * sets *ok = 0 for an unsupported format/mode. */
uint64_t ref_round_to_format(mpfr_srcptr x, const fpemu_format *f, fpemu_round rnd, int *ok);

#ifdef __cplusplus
}
#endif
#endif
