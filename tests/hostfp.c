/* hostfp.c: one operation on the host FPU with its flags (hostfp.h). The
 * operands and results pass through volatile variables so the compiler
 * neither folds nor reorders them across the fenv calls. */
#include <fenv.h>
#include <math.h>
#include <string.h>
#include "fpemu.h"
#include "hostfp.h"

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
        switch (op) {
        case 0: r = x + y; break;
        case 1: r = x - y; break;
        case 2: r = x * y; break;
        case 3: r = x / y; break;
        case 4: r = sqrt(x); break;
        case 5: r = fma(x, y, z); break;
        default: rf = (float)x; r = 0; break;
        }
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
        switch (op) {
        case 0: r = x + y; break;
        case 1: r = x - y; break;
        case 2: r = x * y; break;
        case 3: r = x / y; break;
        case 4: r = sqrtf(x); break;
        default: r = fmaf(x, y, z); break;
        }
        *flags = hostfp_flags();
        fesetround(FE_TONEAREST);
        float t = r;
        uint32_t u;
        memcpy(&u, &t, 4);
        out = u;
    }
    return out;
}
