/* SPDX-License-Identifier: MIT */
/* t_ref_batch.c: ref_op_n, the batched reference the checker uses, gives
 * ref_op's result and flags for every case: each format family below, every
 * operation (conversions from f32), all seven modes (sr with a draw), four
 * policy sets, exhaustively where the operand tuples fit in 2^16 and on
 * seeded operands otherwise (half of them near the first operand's
 * exponent, for cancellation and ties), in batches of uneven sizes that
 * mix the fast path (two finite operands) with special operands. */
#include <stdio.h>
#include <string.h>
#include "ref.h"
#include "tap.h"

static const char *const formats[] = {"e4m3", "e5m2", "e2m1", "e8m0", "e4m3fnuz", "f16", "bf16",
                                      "custom:e=4,m=3,signed=no,inf=no,nan=allones",
                                      "custom:e=5,m=2,bias=15,subnormals=no", "tf32", "f32"};
static const int policies[][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 1, 1}, {1, 0, 1, 0}}; /* sat ftz daz before */

static uint64_t state = UINT64_C(0x243F6A8885A308D3);
static uint64_t next64(void) { /* SplitMix64 */
    uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

#define NMAX 65536
static uint64_t x[3 * NMAX], want[NMAX], got[NMAX];
static unsigned wfl[NMAX], gfl[NMAX];

int main(void) {
    plan((int)(sizeof formats / sizeof formats[0]) + 2);
    printf("# seed %016llX\n", (unsigned long long)state);
    const fpemu_format *f32 = fpemu_format_get("f32", NULL, 0);
    ref_ctx r;
    if (!f32 || ref_ctx_init(&r)) bail("set-up");
    for (size_t fi = 0; fi < sizeof formats / sizeof formats[0]; fi++) {
        const fpemu_format *f = fpemu_format_get(formats[fi], NULL, 0);
        if (!f) bail("no format %s", formats[fi]);
        unsigned long long cases = 0, differ = 0;
        char first[200] = "";
        for (int op = 0; op < REF_OP_COUNT; op++) {
            const fpemu_format *src = op == REF_CONVERT ? f32 : f;
            const int a = ref_op_arity((ref_opcode)op), bits = src->bits;
            const uint64_t mask = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
            size_t n;
            if (op != REF_CONVERT && bits * a <= 16) {
                n = (size_t)1 << (bits * a);
                for (size_t i = 0; i < n; i++)
                    for (int k = 0; k < a; k++) x[i * a + k] = ((i >> (bits * (a - 1 - k))) & mask) << src->pad;
            } else {
                n = 8192;
                for (size_t i = 0; i < n; i++)
                    for (int k = 0; k < a; k++) {
                        uint64_t v = next64() & mask;
                        if (k && (next64() & 1)) v = ((x[i * a] >> src->pad) ^ (next64() & ((UINT64_C(1) << (src->mbits + 2)) - 1))) & mask;
                        x[i * a + k] = v << src->pad;
                    }
            }
            for (int m = 0; m < FPEMU_ROUND_COUNT; m++)
                for (size_t pi = 0; pi < sizeof policies / sizeof policies[0]; pi++) {
                    r.round = (fpemu_round)m;
                    r.sat = policies[pi][0], r.ftz = policies[pi][1], r.daz = policies[pi][2], r.tininess_before = policies[pi][3];
                    r.sr_bits = 13, r.sr_draw = next64();
                    for (size_t i = 0; i < n; i++) want[i] = ref_op(&r, f, (ref_opcode)op, x + i * a, src, &wfl[i]);
                    size_t i = 0, s = 1 + (size_t)(next64() % 7);
                    while (i < n) {
                        size_t k = s < n - i ? s : n - i;
                        if (ref_op_n(&r, f, (ref_opcode)op, x + i * a, k, src, got + i, gfl + i)) bail("ref_op_n failed");
                        i += k;
                        s = s * 3 % 1021 + 1;
                    }
                    for (i = 0; i < n; i++) {
                        cases++;
                        if (got[i] == want[i] && gfl[i] == wfl[i]) continue;
                        if (!differ++)
                            snprintf(first, sizeof first, "%s %s pol %zu: %llX %llX => %llX %02X, ref_op %llX %02X",
                                     ref_op_name((ref_opcode)op), fpemu_round_name((fpemu_round)m), pi,
                                     (unsigned long long)x[i * a], (unsigned long long)(a > 1 ? x[i * a + 1] : 0),
                                     (unsigned long long)got[i], gfl[i], (unsigned long long)want[i], wfl[i]);
                    }
                }
        }
        ok(differ == 0, "%s: ref_op_n = ref_op on %llu cases%s%s", formats[fi], cases, differ ? "; first: " : "", first);
    }
    /* a batch leaves the wide exponent range in place, as ref_op does */
    mpfr_set_emin(-100);
    r.round = FPEMU_RNE, r.sat = r.ftz = r.daz = r.tininess_before = 0;
    const fpemu_format *f16 = fpemu_format_get("f16", NULL, 0);
    uint64_t ops[4] = {0x0001, 0x3800, 0x3C00, 0x3C00};
    ref_op_n(&r, f16, REF_MUL, ops, 2, NULL, got, gfl);
    ok(got[0] == 0 && gfl[0] == (FPEMU_FLAG_UNDERFLOW | FPEMU_FLAG_INEXACT) && got[1] == 0x3C00 && gfl[1] == 0 &&
           mpfr_get_emin() < -10000,
       "ref_op_n resets a range changed behind its back and leaves the wide one (got %llX %02X, %llX %02X)",
       (unsigned long long)got[0], gfl[0], (unsigned long long)got[1], gfl[1]);
    got[0] = got[1] = 1, gfl[0] = gfl[1] = 1;
    ok(ref_op_n(&r, f16, REF_OP_COUNT, ops, 2, NULL, got, gfl) == -1 && !got[0] && !got[1] && !gfl[0] && !gfl[1],
       "a bad opcode: -1, results and flags 0");
    ref_ctx_clear(&r);
    return done_testing();
}
