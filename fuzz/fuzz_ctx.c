/* SPDX-License-Identifier: MIT */
/* fuzz_ctx.c: every public scalar and array call of emu/ with a context
 * and operands straight from the input: any rounding mode, NaN policy and
 * sr_bits value (out-of-range ones included), any policy switches, seed,
 * counter, a caller stream of any length and position, and raw 64-bit
 * operand codes (bits outside the format's field included). Nothing may
 * crash or trip a sanitizer, and every call must keep these invariants:
 * a result code lies inside the format's field, flags stay within the five
 * IEEE bits, a scalar call advances the counter by at most one and an
 * array call by exactly n, and sr_pos never passes sr_len; through the
 * per-call sr API (fpemu_add_sr ...), neither moves.
 * Each input is a sequence of 64-byte records:
 *   byte 0: format (index into the registry), byte 1: second format,
 *   byte 2: call, byte 3: policy bits (sat, ftz, daz, tininess before),
 *   bytes 4..7: round, 8..11: nan_policy, 12..15: sr_bits (int32 each),
 *   16..23: seed, 24..31: counter, byte 32: stream length (0..15, 0: no
 *   stream), byte 33: stream position, byte 34 bit 0: the calls that have
 *   one go through their per-call sr form with the third operand as the
 *   draw, bytes 40..63: three operands. */
#include "fuzz_common.h"
#include "fpemu.h"

enum { REC = 64, NCALLS = 20, ARR = 24 };

static uint64_t rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static int32_t rd32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t field_of(const fpemu_format *f) {
    return (f->bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->bits) - 1) << f->pad;
}
static void check_code(const fpemu_format *f, uint64_t r, int call) {
    if (r & ~field_of(f)) {
        fprintf(stderr, "fuzz_ctx: call %d on %s: result %llx has bits outside the field\n", call, f->name,
                (unsigned long long)r);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    int nf = fpemu_format_count();
    for (size_t o = 0; o + REC <= n; o += REC) {
        const uint8_t *p = d + o;
        const fpemu_format *f = fpemu_format_at(p[0] % nf), *g = fpemu_format_at(p[1] % nf);
        int call = p[2] % NCALLS;
        uint64_t stream[15];
        for (int i = 0; i < 15; i++) stream[i] = fpemu_random64(p[32], (uint64_t)i);
        fpemu_ctx c;
        fpemu_ctx_init(&c);
        c.sat = p[3] & 1, c.ftz = p[3] >> 1 & 1, c.daz = p[3] >> 2 & 1, c.tininess_before = p[3] >> 3 & 1;
        c.round = (fpemu_round)rd32(p + 4);
        c.nan_policy = (fpemu_nan_policy)rd32(p + 8);
        c.sr_bits = rd32(p + 12);
        c.seed = rd64(p + 16), c.counter = rd64(p + 24);
        if (p[32] % 16) {
            c.sr_stream = stream;
            c.sr_len = p[32] % 16;
            c.sr_pos = p[33] % (c.sr_len + 1);
        }
        uint64_t a = rd64(p + 40), b = rd64(p + 48), z = rd64(p + 56), r = 0;
        uint64_t ctr0 = c.counter;
        int array = 0;
        float src[ARR], dst[ARR];
        uint64_t codes[ARR];
        int32_t q[ARR];
        for (int i = 0; i < ARR; i++) {
            uint32_t u = (uint32_t)fpemu_random64(a, (uint64_t)i);
            memcpy(&src[i], &u, 4);
        }
        size_t pos0 = c.sr_pos;
        int per_call = p[34] & 1 && (call <= 5 || call == 9 || call == 11);
        if (per_call) switch (call) {
            case 0: r = fpemu_add_sr(f, a, b, z, &c); break;
            case 1: r = fpemu_sub_sr(f, a, b, z, &c); break;
            case 2: r = fpemu_mul_sr(f, a, b, z, &c); break;
            case 3: r = fpemu_div_sr(f, a, b, z, &c); break;
            case 4: r = fpemu_sqrt_sr(f, a, z, &c); break;
            case 5: r = fpemu_fma_sr(f, a, b, b ^ z, z, &c); break;
            case 9: r = fpemu_convert_sr(f, g, a, z, &c); break;
            default: {
                float x;
                uint32_t u = (uint32_t)a;
                memcpy(&x, &u, 4);
                r = fpemu_from_float_sr(f, x, z, &c);
            }
            }
        else switch (call) {
        case 0: r = fpemu_add(f, a, b, &c); break;
        case 1: r = fpemu_sub(f, a, b, &c); break;
        case 2: r = fpemu_mul(f, a, b, &c); break;
        case 3: r = fpemu_div(f, a, b, &c); break;
        case 4: r = fpemu_sqrt(f, a, &c); break;
        case 5: r = fpemu_fma(f, a, b, z, &c); break;
        case 6: r = fpemu_min(f, a, b, &c); break;
        case 7: r = fpemu_max_num(f, a, b, &c); break;
        case 8: (void)fpemu_compare(f, a, b, (int)(z & 1), &c); break;
        case 9: r = fpemu_convert(f, g, a, &c); break;
        case 10: {
            double x;
            memcpy(&x, &a, 8);
            r = fpemu_from_double(f, x, &c);
            break;
        }
        case 11: {
            float x;
            uint32_t u = (uint32_t)a;
            memcpy(&x, &u, 4);
            r = fpemu_from_float(f, x, &c);
            break;
        }
        case 12: (void)fpemu_to_float(f, a, &c); break;
        case 13: r = fpemu_round_pack(f, (int)(z & 1), b, (int)(int16_t)(z >> 8), (int)(z >> 1 & 1), &c); break;
        case 14: {
            double x;
            memcpy(&x, &a, 8);
            (void)fpemu_quantize(x, (double)(b % 1000 + 1) / 64, (int32_t)(z % 256) - 128, -128, 127, &c);
            break;
        }
        case 15: fpemu_encode_f32(f, codes, src, ARR, &c, NULL), array = 1; break;
        case 16: {
            fpemu_cast_stats st;
            memset(&st, 0, sizeof st);
            fpemu_round_f32(f, dst, src, ARR, &c, &st);
            array = 1;
            break;
        }
        case 17: {
            uint64_t in[ARR];
            for (int i = 0; i < ARR; i++) fpemu_code_store(g, in, (size_t)i, fpemu_random64(b, (uint64_t)i));
            fpemu_convert_array(f, codes, g, in, ARR, &c);
            array = 1;
            break;
        }
        case 18: fpemu_quantize_array(q, src, ARR, (double)(b % 1000 + 1) / 64, 0, -128, 127, &c), array = 1; break;
        default:
            for (int i = 0; i < ARR; i++) fpemu_code_store(f, codes, (size_t)i, fpemu_random64(b, (uint64_t)i));
            fpemu_decode_f32(f, dst, codes, ARR, &c);
            break;
        }
        if (call <= 13 && call != 8 && call != 12) check_code(f, r, call);
        if (c.flags & ~0x1Fu) {
            fprintf(stderr, "fuzz_ctx: call %d on %s: flags %x outside the five IEEE bits\n", call, f->name, c.flags);
            abort();
        }
        uint64_t adv = c.counter - ctr0;
        if (per_call && (adv || c.sr_pos != pos0)) {
            fprintf(stderr, "fuzz_ctx: call %d on %s through its per-call sr form moved the counter by %llu, sr_pos %zu -> %zu\n",
                    call, f->name, (unsigned long long)adv, pos0, c.sr_pos);
            abort();
        }
        if (array ? adv != ARR : (call < 15 && adv > 1)) {
            fprintf(stderr, "fuzz_ctx: call %d on %s: the counter advanced by %llu\n", call, f->name, (unsigned long long)adv);
            abort();
        }
        if (c.sr_stream && c.sr_pos > c.sr_len) {
            fprintf(stderr, "fuzz_ctx: call %d on %s: sr_pos %zu past sr_len %zu\n", call, f->name, c.sr_pos, c.sr_len);
            abort();
        }
    }
    return 0;
}
