/* t_emu_fast.c: the fast paths against the generic path, bit for bit with
 * flags, in every rounding mode (sr included: both take one draw per
 * rounding). Three layers meet here:
 *   - the specialised paths of the hot registry formats (f16, bf16, e5m2, f32);
 *   - their custom-spec twins, which have no specialised path and take the
 *     generic fast decode/pack;
 *   - the same twins with daz set on operands that are not subnormal (daz
 *     changes nothing for them but turns every fast path off).
 * Plus the vectorised f32 -> small-format array kernel against scalar
 * conversion over a sweep of f32 bit patterns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fpemu.h"
#include "tap.h"

static uint64_t rs;
static uint64_t rnd(void) { return rs = fpemu_random64(rs, 11); }

static uint64_t operand(const fpemu_format *f) {
    uint64_t r = rnd(), mask = f->bits == 32 ? 0xFFFFFFFFu : (UINT64_C(1) << f->bits) - 1;
    uint64_t c = r & mask;
    if ((r >> 40) % 4 == 0) c = (c & ~((UINT64_C(1) << f->mbits) - 1)) | (((UINT64_C(1) << f->mbits) - 1) >> ((r >> 50) % 4)); /* runs of ones */
    return c;
}

typedef uint64_t (*op3)(const fpemu_format *, uint64_t, uint64_t, uint64_t, fpemu_ctx *);
static uint64_t do_op(int op, const fpemu_format *f, uint64_t a, uint64_t b, uint64_t c, fpemu_ctx *x) {
    switch (op) {
    case 0: return fpemu_add(f, a, b, x);
    case 1: return fpemu_sub(f, a, b, x);
    case 2: return fpemu_mul(f, a, b, x);
    case 3: return fpemu_div(f, a, b, x);
    case 4: return fpemu_sqrt(f, a, x);
    default: return fpemu_fma(f, a, b, c, x);
    }
}
static const char *opn[6] = {"add", "sub", "mul", "div", "sqrt", "fma"};

int main(void) {
    rs = tap_seed(5);
    const char *pairs[][2] = {{"f16", "custom:e=5,m=10"}, {"bf16", "custom:e=8,m=7"}, {"e5m2", "custom:e=5,m=2"},
                              {"f32", "custom:e=8,m=23"}, {"e4m3", "custom:e=4,m=3,bias=7,inf=no,nan=fn"}};
    for (size_t pi = 0; pi < sizeof pairs / sizeof pairs[0]; pi++) {
        const fpemu_format *f = fpemu_format_get(pairs[pi][0], NULL, 0), *g = fpemu_format_get(pairs[pi][1], NULL, 0);
        if (!g) bail("twin %s", pairs[pi][1]);
        long cases = 0, bad = 0;
        for (int op = 0; op < 6; op++)
            for (int mode = 0; mode < FPEMU_ROUND_COUNT; mode++)
                for (int i = 0; i < 6000; i++) {
                    uint64_t a = operand(f), b = operand(f), c = operand(f);
                    fpemu_ctx x, y, z;
                    fpemu_ctx_init(&x);
                    x.round = (fpemu_round)mode;
                    x.seed = 99;
                    x.counter = (uint64_t)i;
                    x.sat = i & 1;
                    y = x;
                    z = x;
                    uint64_t rf = do_op(op, f, a, b, c, &x), rg = do_op(op, g, a, b, c, &y);
                    int sub = fpemu_classify(f, a) == FPEMU_CLASS_SUBNORMAL || fpemu_classify(f, b) == FPEMU_CLASS_SUBNORMAL ||
                              fpemu_classify(f, c) == FPEMU_CLASS_SUBNORMAL;
                    uint64_t rz = rg;
                    unsigned zf = y.flags;
                    if (!sub) {
                        z.daz = 1;
                        rz = do_op(op, g, a, b, c, &z);
                        zf = z.flags;
                    }
                    cases++;
                    int nan = fpemu_is_nan(f, rf) && fpemu_is_nan(g, rg) && fpemu_is_nan(g, rz);
                    if ((rf != rg || rg != rz) && !nan) bad++;
                    else if (x.flags != y.flags || y.flags != zf || x.counter != y.counter) bad++;
                    else continue;
                    if (bad <= 5)
                        diag("%s_%s %s sat=%d: %llX %llX %llX => fast %llX %02X, twin %llX %02X, generic %llX %02X", f->name, opn[op],
                             fpemu_round_name(mode), x.sat, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
                             (unsigned long long)rf, x.flags, (unsigned long long)rg, y.flags, (unsigned long long)rz, zf);
                }
        ok(bad == 0, "%s: specialised, generic-fast and generic paths agree on %ld cases (6 ops x 7 modes x sat)", f->name, cases);
    }

    /* the array kernel (rne) against scalar conversion, every 1021st f32 pattern */
    const char *af[] = {"bf16", "f16", "e4m3", "e5m2", "e3m2", "e2m1", "binary8p4e"};
    for (size_t k = 0; k < sizeof af / sizeof af[0]; k++) {
        const fpemu_format *f = fpemu_format_get(af[k], NULL, 0);
        enum { N = 1 << 16 };
        static float in[N];
        static uint16_t out[N];
        long bad = 0, cases = 0;
        for (uint64_t base = 0; base < (UINT64_C(1) << 32); base += (uint64_t)N * 1021) {
            for (int i = 0; i < N; i++) {
                uint32_t u = (uint32_t)(base + (uint64_t)i * 1021);
                memcpy(&in[i], &u, 4);
            }
            fpemu_ctx c;
            fpemu_ctx_init(&c);
            fpemu_cast_stats st = {0};
            fpemu_encode_f32(f, out, in, N, &c, &st);
            unsigned all = 0;
            fpemu_cast_stats want = {0};
            for (int i = 0; i < N; i++) {
                fpemu_ctx d;
                fpemu_ctx_init(&d);
                uint32_t u;
                memcpy(&u, &in[i], 4);
                uint64_t w = fpemu_convert(f, fpemu_format_get("f32", NULL, 0), u, &d);
                all |= d.flags;
                cases++;
                if (fpemu_code_load(f, out, i) != w && !(fpemu_is_nan(f, w) && fpemu_is_nan(f, fpemu_code_load(f, out, i)))) {
                    if (++bad <= 3) diag("%s: f32 %08X -> kernel %llX, scalar %llX", f->name, u,
                                         (unsigned long long)fpemu_code_load(f, out, i), (unsigned long long)w);
                }
                want.n++;
                if (!isfinite(in[i])) { want.nonfinite_in++; continue; }
                if (fabsf(in[i]) > want.amax) want.amax = fabsf(in[i]);
                fpemu_class kc = fpemu_classify(f, w);
                if (d.flags & FPEMU_FLAG_OVERFLOW) {
                    want.overflow++;
                    if (kc != FPEMU_CLASS_INF && kc != FPEMU_CLASS_QNAN) want.saturated++;
                } else if (in[i] != 0 && kc == FPEMU_CLASS_ZERO) want.underflow++;
                else if (in[i] != 0 && kc == FPEMU_CLASS_SUBNORMAL) want.subnormal++;
            }
            if (all != c.flags || memcmp(&st, &want, sizeof st)) {
                if (++bad <= 3) diag("%s: flags %02X vs %02X or counters differ at base %llu", f->name, c.flags, all, (unsigned long long)base);
            }
        }
        ok(bad == 0, "%s: array kernel equals scalar conversion on %ld f32 patterns, flags and counters included", f->name, cases);
        /* round_f32 (fused kernel), in place, against encode + decode per element */
        long rbad = 0;
        for (uint64_t base = 12345; base < (UINT64_C(1) << 32); base += (uint64_t)N * 1021) {
            static float work[N];
            for (int i = 0; i < N; i++) {
                uint32_t u = (uint32_t)(base + (uint64_t)i * 1021);
                memcpy(&in[i], &u, 4);
                work[i] = in[i];
            }
            fpemu_ctx c;
            fpemu_ctx_init(&c);
            fpemu_cast_stats st = {0}, st2 = {0};
            fpemu_round_f32(f, work, work, N, &c, &st);
            fpemu_ctx c2;
            fpemu_ctx_init(&c2);
            fpemu_encode_f32(f, out, in, N, &c2, &st2);
            for (int i = 0; i < N; i++) {
                float w = fpemu_to_float(f, fpemu_code_load(f, out, i), &c2);
                uint32_t a, b;
                memcpy(&a, &w, 4);
                memcpy(&b, &work[i], 4);
                if (a != b && !(isnan(w) && isnan(work[i])) && ++rbad <= 3)
                    diag("%s: round_f32(%08X) = %08X, encode+decode %08X", f->name, (uint32_t)(base + (uint64_t)i * 1021), b, a);
            }
            if (c.flags != c2.flags || memcmp(&st, &st2, sizeof st)) rbad++;
        }
        ok(rbad == 0, "%s: round_f32 in place equals encode + decode, flags and counters included", f->name);
    }
    return done_testing();
}
