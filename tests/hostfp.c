/* SPDX-License-Identifier: MIT */
/* hostfp.c: one operation on the host FPU with its flags (hostfp.h). The
 * operands and results pass through volatile variables so the compiler
 * neither folds nor reorders them across the fenv calls. */
#include <fenv.h>
#include <math.h>
#include <string.h>
#include "fpemu.h"
#include "hostfp.h"

#if defined(__x86_64__) && defined(__SSE2_MATH__)
#include <xmmintrin.h>
static unsigned flush_bits; /* MXCSR: FTZ bit 15, DAZ bit 6 */
int hostfp_set_flush(int ftz, int daz) {
    flush_bits = (ftz ? 0x8000u : 0) | (daz ? 0x40u : 0);
    return 1;
}
static void flush_on(void) { if (flush_bits) _mm_setcsr(_mm_getcsr() | flush_bits); }
static void flush_off(void) { if (flush_bits) _mm_setcsr(_mm_getcsr() & ~0x8040u); }
#else
int hostfp_set_flush(int ftz, int daz) { return !ftz && !daz; }
static void flush_on(void) {}
static void flush_off(void) {}
#endif

unsigned hostfp_flags(void) {
    unsigned f = 0;
    if (fetestexcept(FE_INEXACT)) f |= FPEMU_FLAG_INEXACT;
    if (fetestexcept(FE_UNDERFLOW)) f |= FPEMU_FLAG_UNDERFLOW;
    if (fetestexcept(FE_OVERFLOW)) f |= FPEMU_FLAG_OVERFLOW;
    if (fetestexcept(FE_DIVBYZERO)) f |= FPEMU_FLAG_INFINITE;
    if (fetestexcept(FE_INVALID)) f |= FPEMU_FLAG_INVALID;
    return f;
}

uint64_t hostfp_op(int wide, int op, int mode, uint64_t a, uint64_t b, uint64_t c, unsigned *flags) {
    static const int fe[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
    uint64_t out = 0;
    if (wide || op == 6) {
        volatile double x, y, z, r;
        memcpy((void *)&x, &a, 8), memcpy((void *)&y, &b, 8), memcpy((void *)&z, &c, 8);
        volatile float rf;
        feclearexcept(FE_ALL_EXCEPT);
        fesetround(fe[mode]);
        flush_on();
        switch (op) {
        case 0: r = x + y; break;
        case 1: r = x - y; break;
        case 2: r = x * y; break;
        case 3: r = x / y; break;
        case 4: r = sqrt(x); break;
        case 5: r = fma(x, y, z); break;
        default: rf = (float)x; r = 0; break;
        }
        flush_off();
        *flags = hostfp_flags();
        fesetround(FE_TONEAREST);
        if (op == 6) {
            uint32_t u;
            float t = rf;
            memcpy(&u, &t, 4);
            out = u;
        } else {
            double t = r;
            memcpy(&out, &t, 8);
        }
    } else {
        uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b, c32 = (uint32_t)c;
        volatile float x, y, z, r;
        memcpy((void *)&x, &a32, 4), memcpy((void *)&y, &b32, 4), memcpy((void *)&z, &c32, 4);
        feclearexcept(FE_ALL_EXCEPT);
        fesetround(fe[mode]);
        flush_on();
        switch (op) {
        case 0: r = x + y; break;
        case 1: r = x - y; break;
        case 2: r = x * y; break;
        case 3: r = x / y; break;
        case 4: r = sqrtf(x); break;
        default: r = fmaf(x, y, z); break;
        }
        flush_off();
        *flags = hostfp_flags();
        fesetround(FE_TONEAREST);
        float t = r;
        uint32_t u;
        memcpy(&u, &t, 4);
        out = u;
    }
    return out;
}

/* gcc 12 declares the AVX512-FP16 intrinsics for target attributes; clang
 * only under -mavx512fp16 (as in emu/fast.c) */
#if (defined(__x86_64__) || defined(__i386__)) && \
    ((defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12) || (defined(__clang__) && defined(__AVX512FP16__)))
#include <cpuid.h>
#include <immintrin.h>
/* CPUID.7.0:EDX AVX512-FP16 (23), EBX AVX512F/BW/VL (16, 30, 31), and the
 * OS saving the opmask and ZMM state (XCR0 bits 5-7, with SSE/AVX) */
int hostfp_have_f16(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1)) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    if (!(d >> 23 & 1) || !(b >> 16 & 1) || !(b >> 30 & 1) || !(b >> 31 & 1)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 0xE6) == 0xE6;
}
__attribute__((target("avx512fp16,avx512vl,avx512bw,avx512f"))) uint64_t hostfp_op_f16(int op, int mode, uint64_t a,
                                                                                       uint64_t b, uint64_t c,
                                                                                       unsigned *flags) {
    static const int fe[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
    volatile int x = (int)(a & 0xFFFF), y = (int)(b & 0xFFFF), z = (int)(c & 0xFFFF), r;
    feclearexcept(FE_ALL_EXCEPT);
    fesetround(fe[mode]);
    __m128h hx = _mm_castsi128_ph(_mm_cvtsi32_si128(x)), hy = _mm_castsi128_ph(_mm_cvtsi32_si128(y)),
            hz = _mm_castsi128_ph(_mm_cvtsi32_si128(z)), hr;
    switch (op) { /* MXCSR's rounding mode and flags, as the SSE operations */
    case 0: hr = _mm_add_sh(hx, hy); break;
    case 1: hr = _mm_sub_sh(hx, hy); break;
    case 2: hr = _mm_mul_sh(hx, hy); break;
    case 3: hr = _mm_div_sh(hx, hy); break;
    case 4: hr = _mm_sqrt_sh(hx, hx); break;
    default: hr = _mm_fmadd_sh(hx, hy, hz); break;
    }
    r = _mm_cvtsi128_si32(_mm_castph_si128(hr));
    *flags = hostfp_flags();
    fesetround(FE_TONEAREST);
    return (uint64_t)(r & 0xFFFF);
}
#else
int hostfp_have_f16(void) { return 0; }
uint64_t hostfp_op_f16(int op, int mode, uint64_t a, uint64_t b, uint64_t c, unsigned *flags) {
    (void)op, (void)mode, (void)a, (void)b, (void)c;
    *flags = 0;
    return 0;
}
#endif
