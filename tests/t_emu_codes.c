/* SPDX-License-Identifier: MIT */
/* t_emu_codes.c: bits of a code outside the format's field (above its
 * width, or in tf32's padding) are ignored by every operation: each
 * scalar call (add, sub, mul, div, sqrt, fma, min, max, min_num,
 * max_num, compare, convert to f32, to_float) on codes with random junk there gives the result and flags
 * of the same call on the clean codes, in every format and mode, sr with
 * the same draws; fpemu_decode_f32 on containers with junk around the
 * field, the same floats. Before the fix, fma, div and sqrt of the formats
 * narrower than 8 bits indexed their 2^bits-entry tables with the low 8
 * bits of the code (out of bounds; ASan: heap-buffer-overflow), and min
 * and max returned the chosen operand with its junk; decode_f32's table
 * path indexed with the whole container (found by fuzz/fuzz_ctx.c). */
#include <stdio.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"

enum { CASES = 300, NOPS = 13 };

int main(void) {
    uint64_t seed = tap_seed(20261122);
    char err[256];
    const fpemu_format *f32 = fpemu_format_get("f32", err, sizeof err);
    if (!f32) bail("f32: %s", err);
    for (int fi = 0; fi < fpemu_format_count(); fi++) {
        const fpemu_format *f = fpemu_format_at(fi);
        uint64_t field = (f->bits == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << f->bits) - 1)) << f->pad;
        if (field == ~UINT64_C(0)) continue; /* f64: no bit outside */
        for (int m = 0; m < FPEMU_ROUND_COUNT; m++) {
            long bad = 0;
            char first[200] = "";
            for (int i = 0; i < CASES; i++) {
                uint64_t r[3], j[3];
                for (int k = 0; k < 3; k++) {
                    r[k] = fpemu_random64(seed, (uint64_t)(fi * 100000 + m * 10000 + i * 6 + k)) & field;
                    j[k] = r[k] | (fpemu_random64(seed ^ 1, (uint64_t)(fi * 100000 + m * 10000 + i * 6 + k)) & ~field);
                }
                for (int op = 0; op < NOPS; op++) {
                    uint64_t res[2];
                    unsigned fl[2];
                    for (int v = 0; v < 2; v++) {
                        const uint64_t *x = v ? j : r;
                        fpemu_ctx c;
                        fpemu_ctx_init(&c);
                        c.round = (fpemu_round)m;
                        c.seed = 7, c.counter = (uint64_t)i;
                        switch (op) {
                        case 0: res[v] = fpemu_add(f, x[0], x[1], &c); break;
                        case 1: res[v] = fpemu_sub(f, x[0], x[1], &c); break;
                        case 2: res[v] = fpemu_mul(f, x[0], x[1], &c); break;
                        case 3: res[v] = fpemu_div(f, x[0], x[1], &c); break;
                        case 4: res[v] = fpemu_sqrt(f, x[0], &c); break;
                        case 5: res[v] = fpemu_fma(f, x[0], x[1], x[2], &c); break;
                        case 6: res[v] = fpemu_min(f, x[0], x[1], &c); break;
                        case 7: res[v] = fpemu_max(f, x[0], x[1], &c); break;
                        case 8: res[v] = fpemu_min_num(f, x[0], x[1], &c); break;
                        case 9: res[v] = fpemu_max_num(f, x[0], x[1], &c); break;
                        case 10: res[v] = (uint64_t)fpemu_compare(f, x[0], x[1], i & 1, &c); break;
                        case 11: res[v] = fpemu_convert(f32, f, x[0], &c); break;
                        default: {
                            float y = fpemu_to_float(f, x[0], &c);
                            uint32_t u;
                            memcpy(&u, &y, sizeof u);
                            res[v] = u;
                            break;
                        }
                        }
                        fl[v] = c.flags;
                    }
                    if (res[0] != res[1] || fl[0] != fl[1]) {
                        if (!bad++)
                            snprintf(first, sizeof first, "op %d on %llx %llx %llx: %llx %02x, with junk %llx %02x", op,
                                     (unsigned long long)r[0], (unsigned long long)r[1], (unsigned long long)r[2],
                                     (unsigned long long)res[0], fl[0], (unsigned long long)res[1], fl[1]);
                    }
                }
            }
            if (!ok(bad == 0, "%s %s: %d cases x %d operations, junk outside the field ignored", f->name,
                    fpemu_round_name((fpemu_round)m), CASES, NOPS))
                diag("%ld differ; first: %s", bad, first);
        }
    }
    /* arrays: fpemu_decode_f32 reads its codes from containers whose bits
     * outside the field are junk; the same floats and flags as clean codes */
    for (int fi = 0; fi < fpemu_format_count(); fi++) {
        const fpemu_format *f = fpemu_format_at(fi);
        if (f->container > 32) continue;
        uint64_t field = ((UINT64_C(1) << f->bits) - 1) << f->pad, cmask = (UINT64_C(1) << f->container) - 1;
        if (field == cmask) continue; /* no container bit outside the field */
        enum { N = 512 };
        uint32_t clean[N], junk[N]; /* wide enough for every container up to 32 bits */
        float a[N], b[N];
        for (int i = 0; i < N; i++) {
            uint64_t r = fpemu_random64(seed ^ 2, (uint64_t)(fi * N + i));
            fpemu_code_store(f, clean, (size_t)i, r & field);
            fpemu_code_store(f, junk, (size_t)i, r & cmask);
        }
        fpemu_ctx c0, c1;
        fpemu_ctx_init(&c0), fpemu_ctx_init(&c1);
        fpemu_decode_f32(f, a, clean, N, &c0);
        fpemu_decode_f32(f, b, junk, N, &c1);
        int same = c0.flags == c1.flags && !memcmp(a, b, sizeof a);
        ok(same, "%s: fpemu_decode_f32 of %d codes with junk in the container's other bits", f->name, N);
    }
    return done_testing();
}
