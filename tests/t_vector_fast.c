/* SPDX-License-Identifier: MIT */
/* t_vector_fast.c: the registry's hot formats (f16, bf16, f32, e5m2, e4m3),
 * which take specialised fast paths, against custom copies of the same
 * formats (e5m10, e8m7, ...), which take the generic path: every scalar op
 * in every rounding mode and under sat/ftz/daz/tininess-before/x86 NaNs must
 * give the same code and flags, on random operands biased toward special
 * values and boundaries. A mismatch prints the replayable vector line. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"

#define NCASES 3000
#define MAXPRINT 5

static uint64_t rng_s;
static uint64_t rnd(void) {
    rng_s += 0x9E3779B97F4A7C15ULL;
    return fpemu_random64(rng_s, 0);
}

/* A random code: uniform bits, or a special exponent/mantissa mix, or a
 * neighbour of a given code (cancellation, ties, boundaries). */
static uint64_t operand(const fpemu_format *f, uint64_t near) {
    int e = f->ebits, m = f->mbits, bits = f->bits;
    uint64_t mask = bits >= 64 ? ~0ULL : ((1ULL << bits) - 1), r = rnd(), c;
    switch (r % 3) {
    case 0: c = rnd() & mask; break;
    case 1: {
        uint64_t top = (1ULL << e) - 1, mm = (1ULL << m) - 1;
        uint64_t ex[] = {0, 1, 2, top - 1, top, rnd() & top, top >> 1, (top >> 1) + 1};
        uint64_t ma[] = {0, 1, mm, 1ULL << (m - 1), rnd() & mm, mm - 1};
        c = ((rnd() & 1) << (bits - 1)) | (ex[(r >> 8) % 8] << m) | ma[(r >> 16) % 6];
        break;
    }
    default: c = ((near + (r >> 8) % 7 - 3) ^ ((r >> 20 & 1) << (bits - 1))) & mask; break;
    }
    return c << f->pad;
}

typedef struct { const char *name; void (*set)(fpemu_ctx *); } optset;
static void o_none(fpemu_ctx *c) { (void)c; }
static void o_sat(fpemu_ctx *c) { c->sat = 1; }
static void o_ftz(fpemu_ctx *c) { c->ftz = 1; }
static void o_daz(fpemu_ctx *c) { c->daz = 1; }
static void o_before(fpemu_ctx *c) { c->tininess_before = 1; }
static void o_x86(fpemu_ctx *c) { c->nan_policy = FPEMU_NAN_X86; }
static void o_sr8(fpemu_ctx *c) { c->sr_bits = 8; }
static void o_all(fpemu_ctx *c) { c->ftz = c->daz = c->tininess_before = c->sat = 1; }
static const optset optsets[] = {
    {"", o_none}, {" --sat", o_sat}, {" --ftz", o_ftz}, {" --daz", o_daz},
    {" --tininess before", o_before}, {" --nan x86", o_x86}, {" --sr-bits 8", o_sr8},
    {" --ftz --daz --tininess before --sat", o_all},
};

static const char *opn[] = {"add", "sub", "mul", "div", "sqrt", "mulAdd"};

static uint64_t apply(int op, const fpemu_format *f, const uint64_t *a, fpemu_ctx *c) {
    switch (op) {
    case 0: return fpemu_add(f, a[0], a[1], c);
    case 1: return fpemu_sub(f, a[0], a[1], c);
    case 2: return fpemu_mul(f, a[0], a[1], c);
    case 3: return fpemu_div(f, a[0], a[1], c);
    case 4: return fpemu_sqrt(f, a[0], c);
    default: return fpemu_fma(f, a[0], a[1], a[2], c);
    }
}

int main(void) {
    static const char *pairs[][2] = {
        {"f16", "e5m10"}, {"bf16", "e8m7"}, {"f32", "e8m23"},
        {"e5m2", "custom:e=5,m=2,bias=15,inf=yes,nan=ieee"}, {"e4m3", "custom:e=4,m=3,bias=7,inf=no,nan=fn"},
    };
    uint64_t seed = tap_seed(20241122);
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        char err[256];
        const fpemu_format *fast = fpemu_format_get(pairs[p][0], err, sizeof err);
        const fpemu_format *slow = fpemu_format_get(pairs[p][1], err, sizeof err);
        if (!fast || !slow) { ok(0, "formats %s and %s exist: %s", pairs[p][0], pairs[p][1], err); continue; }
        int digits = fpemu_format_hex_digits(fast);
        for (int op = 0; op < 6; op++) {
            int nargs = op == 4 ? 1 : op == 5 ? 3 : 2;
            for (int mode = 0; mode < FPEMU_ROUND_COUNT; mode++) {
                for (size_t o = 0; o < sizeof optsets / sizeof optsets[0]; o++) {
                    if (o == 6 && mode != FPEMU_SR) continue; /* --sr-bits only matters for sr */
                    fpemu_ctx cf, cs;
                    fpemu_ctx_init(&cf);
                    cf.round = (fpemu_round)mode;
                    cf.seed = seed;
                    optsets[o].set(&cf);
                    cs = cf;
                    rng_s = seed + p * 1000003 + op * 7919 + mode * 104729 + o;
                    int bad = 0;
                    for (int i = 0; i < NCASES; i++) {
                        uint64_t a[3];
                        a[0] = operand(fast, 0);
                        for (int k = 1; k < nargs; k++) a[k] = operand(fast, a[0] >> fast->pad);
                        cf.flags = cs.flags = 0;
                        uint64_t rf = apply(op, fast, a, &cf), rs = apply(op, slow, a, &cs);
                        if (rf == rs && cf.flags == cs.flags) continue;
                        if (bad++ < MAXPRINT) {
                            printf("# %s_%s --round %s%s:", fast->name, opn[op], fpemu_round_name((fpemu_round)mode), optsets[o].name);
                            for (int k = 0; k < nargs; k++) printf(" %0*" PRIX64, digits, a[k]);
                            printf(" => fast path %0*" PRIX64 " %02X, generic %0*" PRIX64 " %02X\n", digits, rf, cf.flags,
                                   digits, rs, cs.flags);
                        }
                    }
                    ok(bad == 0, "%s_%s --round %s%s: fast path = generic path (%s) on %d cases (%d differ)", fast->name,
                       opn[op], fpemu_round_name((fpemu_round)mode), optsets[o].name, slow->name, NCASES, bad);
                }
            }
        }
    }
    return done_testing();
}
