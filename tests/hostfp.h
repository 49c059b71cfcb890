/* SPDX-License-Identifier: MIT */
/* hostfp.h: one operation on the host FPU, with its IEEE flags, for the
 * tests that compare an implementation against the hardware (t_emu_host,
 * t_ref_host). */
#ifndef FPEMU_TESTS_HOSTFP_H
#define FPEMU_TESTS_HOSTFP_H
#include <stdint.h>

/* Whether the host detects tininess before rounding (the underflow flag of a
 * result that rounds to the least normal): ARM does (AArch64 and AArch32
 * VFP), x86 (SSE, AVX, x87) detects it after rounding, as do fpemu's and
 * the reference's defaults. The tests set the same on their side. */
#if defined(__aarch64__) || defined(__arm__)
#define HOSTFP_TININESS_BEFORE 1
#else
#define HOSTFP_TININESS_BEFORE 0
#endif

/* Flush modes for the following hostfp_op calls: ftz (results that are tiny
 * become zero) and daz (subnormal operands read as zero), set only around
 * the host's operation. Returns 1 where the host has them (x86 SSE: MXCSR's
 * FTZ and DAZ bits), 0 otherwise (nothing is set). */
int hostfp_set_flush(int ftz, int daz);

/* The host's raised exceptions in fpemu's flag layout. */
unsigned hostfp_flags(void);

/* op on f32 (wide = 0) or f64 (wide = 1) bit patterns: 0 add, 1 sub, 2 mul,
 * 3 div, 4 sqrt (of a), 5 fma (a * b + c); 6 converts the f64 a to f32.
 * mode: 0 rne, 1 rtz, 2 rup, 3 rdn. The result's bit pattern; *flags the
 * flags the operation raised. The rounding mode is back to nearest after. */
uint64_t hostfp_op(int wide, int op, int mode, uint64_t a, uint64_t b, uint64_t c, unsigned *flags);

/* The same on binary16 through AVX512-FP16 (vaddsh, vsubsh, vmulsh,
 * vdivsh, vsqrtsh, vfmadd213sh; op 0-5), where the CPU and the compiler
 * have it: hostfp_have_f16() says whether (0: the build or the CPU lacks
 * it, and hostfp_op_f16 must not be called). */
int hostfp_have_f16(void);
uint64_t hostfp_op_f16(int op, int mode, uint64_t a, uint64_t b, uint64_t c, unsigned *flags);
#endif
