/* fast.c: fast paths for the hot array casts (filled in after the generic
 * path is verified; each is checked against it bit for bit by the tests). */
#include "internal.h"

int emu__encode_fast(const fpemu_format *fmt, void *dst, const float *src, size_t n, fpemu_ctx *ctx,
                     fpemu_cast_stats *stats) {
    (void)fmt; (void)dst; (void)src; (void)n; (void)ctx; (void)stats;
    return 0;
}
