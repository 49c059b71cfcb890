/* SPDX-License-Identifier: MIT */
/* fuzz_diff.c: differential fuzzing of the emulator (emu/) against the MPFR
 * reference (ref/ref.h). Each input is a sequence of 32-byte records:
 *   byte 0: format, byte 1: source format (conversions), byte 2: op,
 *   byte 3: rounding mode (rne..sr), byte 4: policy bits (sat, ftz, daz,
 *   tininess before), bytes 5..7: sr (byte 5: R - 1 in its low 6 bits, bit
 *   6 a draw straddling one of the reference's decisions, bit 7 the draw
 *   through a one-draw caller stream instead of the seed's stream at
 *   fpemu_random64_counter; bytes 6, 7 pick the draw), bytes 8..31: three
 *   operands. In sr the per-call form (fpemu_add_sr ...) with the same draw
 *   must agree with the reference too.
 * Operands are masked to the format's code bits. A result that differs
 * (NaNs match any NaN, as `fpemu check` does) or different flags abort
 * with a replayable vector line. FUZZ_DIFF_SKIP (a list of names separated
 * by ';') leaves formats out, to keep fuzzing past a known open bug.
 * FUZZ_DIFF_CASES=FILE: at exit, append the number of cases (records)
 * compared to FILE (an execution compares up to max_len / 32 of them). */
#include "fuzz_common.h"
#include "fpemu.h"
#include "ref.h"

static const char *const NAMES[] = {
    "f64", "f32", "tf32", "f16", "bf16", "e5m2", "e4m3", "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1",
    "e8m0", "binary8p1e", "binary8p1f", "binary8p2e", "binary8p3f", "binary8p4e", "binary8p5f", "binary8p6e",
    "binary8p7f", "e6m1", "e3m4fn", "e5m3fnuz", "e8m10", "e2m0", "e1m2", "custom:e=4,m=3,bias=5,inf=no,nan=fn",
    "custom:e=5,m=2,bias=15,subnormals=no", "e7m8", "e3m1fnuz", "e8m23fn", "custom:e=8,m=23,bias=100",
    "custom:e=5,m=10,bias=20", "custom:e=8,m=7,bias=120,inf=no,nan=fn", "custom:e=4,m=3,bias=3", "e5m10fnuz", "e8m5",
};
#define NF ((int)(sizeof NAMES / sizeof NAMES[0]))
static const fpemu_format *F[NF];
static ref_format RF[NF];
static int nf;
static ref_ctx R;
static unsigned long long ncases;
static const char *cases_file;

static void write_cases(void) {
    FILE *f = fopen(cases_file, "a");
    if (!f) return;
    fprintf(f, "%llu\n", ncases);
    fclose(f);
}

static uint64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static uint64_t mask_code(const fpemu_format *f, uint64_t x) {
    uint64_t m = f->bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->bits) - 1;
    return (x & m) << f->pad;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    char err[256];
    const char *skip = getenv("FUZZ_DIFF_SKIP");
    for (int i = 0; i < NF; i++) {
        if (skip) {
            size_t l = strlen(NAMES[i]);
            const char *p = skip;
            int found = 0;
            for (; (p = strstr(p, NAMES[i])) != NULL; p++)
                if ((p == skip || p[-1] == ';') && (p[l] == 0 || p[l] == ';')) found = 1;
            if (found) continue;
        }
        const fpemu_format *f = fpemu_format_get(NAMES[i], err, sizeof err);
        if (!f) continue; /* a spec the registry refuses is not a finding here (fuzz_format covers it) */
        if (ref_format_init(&RF[nf], f)) continue;
        F[nf++] = f;
    }
    if (ref_ctx_init(&R)) abort();
    cases_file = getenv("FUZZ_DIFF_CASES");
    if (cases_file && *cases_file) atexit(write_cases);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    for (; n >= 32; d += 32, n -= 32) {
        ncases++;
        int fi = d[0] % nf, si = d[1] % nf;
        ref_opcode op = (ref_opcode)(d[2] % REF_OP_COUNT);
        const fpemu_format *f = F[fi], *src = op == REF_CONVERT ? F[si] : f;
        fpemu_round mode = (fpemu_round)(d[3] % FPEMU_ROUND_COUNT);
        uint64_t o[3];
        for (int k = 0; k < 3; k++) o[k] = mask_code(src, rd64(d + 8 + 8 * k));
        fpemu_ctx c;
        fpemu_ctx_init(&c);
        c.round = mode;
        c.sat = d[4] & 1, c.ftz = d[4] >> 1 & 1, c.daz = d[4] >> 2 & 1, c.tininess_before = d[4] >> 3 & 1;
        R.round = mode, R.sat = c.sat, R.ftz = c.ftz, R.daz = c.daz, R.tininess_before = c.tininess_before;
        uint64_t draw = 0, c0 = 0;
        if (mode == FPEMU_SR) {
            int bits = (d[5] & 63) + 1;
            draw = fpemu_random64((uint64_t)d[6] | (uint64_t)d[7] << 8, o[0] ^ o[1] << 1 ^ o[2] << 2);
            R.sr_bits = c.sr_bits = bits;
            if (d[5] & 64) draw = ref_sr_straddle(&R, f, op, o, src, d[6], d[7] & 1, draw); /* top R bits T - 1 (up) or T */
            R.sr_draw = draw;
            c.seed = d[6];
            if (d[5] & 128) c.sr_stream = &draw, c.sr_len = 1;
            else c.counter = fpemu_random64_counter(c.seed, draw);
            c0 = c.counter;
        }
        uint64_t e;
        switch (op) {
        case REF_ADD: e = fpemu_add(f, o[0], o[1], &c); break;
        case REF_SUB: e = fpemu_sub(f, o[0], o[1], &c); break;
        case REF_MUL: e = fpemu_mul(f, o[0], o[1], &c); break;
        case REF_DIV: e = fpemu_div(f, o[0], o[1], &c); break;
        case REF_SQRT: e = fpemu_sqrt(f, o[0], &c); break;
        case REF_FMA: e = fpemu_fma(f, o[0], o[1], o[2], &c); break;
        default: e = fpemu_convert(f, src, o[0], &c); break;
        }
        unsigned rfl = 0;
        uint64_t r = ref_op(&R, f, op, o, src, &rfl);
        int same = (e == r || (ref_is_nan(&RF[fi], e) && ref_is_nan(&RF[fi], r))) && c.flags == rfl &&
                   (mode != FPEMU_SR || c.counter - c0 == (uint64_t)R.sr_took);
        if (!same) {
            int hd = fpemu_format_hex_digits(src), ho = fpemu_format_hex_digits(f);
            fprintf(stderr, "DIFFERENCE %s%s%s%s -r%s sat=%d ftz=%d daz=%d tininess=%s:",
                    op == REF_CONVERT ? src->name : f->name, op == REF_CONVERT ? "_to_" : "_",
                    op == REF_CONVERT ? f->name : ref_op_name(op), "", fpemu_round_name(mode), c.sat, c.ftz, c.daz,
                    c.tininess_before ? "before" : "after");
            for (int k = 0; k < ref_op_arity(op); k++) fprintf(stderr, " %0*llX", hd, (unsigned long long)o[k]);
            fprintf(stderr, " => emu %0*llX %02X, ref %0*llX %02X", ho, (unsigned long long)e, c.flags, ho,
                    (unsigned long long)r, rfl);
            if (mode == FPEMU_SR)
                fprintf(stderr, " (sr R=%d draw=%016llX via %s; draws emu %llu ref %d)", R.sr_bits,
                        (unsigned long long)draw, c.sr_stream ? "stream" : "seed", (unsigned long long)(c.counter - c0),
                        R.sr_took);
            fputc('\n', stderr);
            abort();
        }
        if (mode == FPEMU_SR) { /* the per-call form, on a context in another mode with a counter of its own */
            fpemu_ctx p;
            fpemu_ctx_init(&p);
            p.round = (fpemu_round)(d[6] % (FPEMU_ROUND_COUNT + 1));
            p.sat = c.sat, p.ftz = c.ftz, p.daz = c.daz, p.tininess_before = c.tininess_before, p.sr_bits = c.sr_bits;
            p.counter = 7;
            switch (op) {
            case REF_ADD: e = fpemu_add_sr(f, o[0], o[1], draw, &p); break;
            case REF_SUB: e = fpemu_sub_sr(f, o[0], o[1], draw, &p); break;
            case REF_MUL: e = fpemu_mul_sr(f, o[0], o[1], draw, &p); break;
            case REF_DIV: e = fpemu_div_sr(f, o[0], o[1], draw, &p); break;
            case REF_SQRT: e = fpemu_sqrt_sr(f, o[0], draw, &p); break;
            case REF_FMA: e = fpemu_fma_sr(f, o[0], o[1], o[2], draw, &p); break;
            default: e = fpemu_convert_sr(f, src, o[0], draw, &p); break;
            }
            if (!((e == r || (ref_is_nan(&RF[fi], e) && ref_is_nan(&RF[fi], r))) && p.flags == rfl && p.counter == 7)) {
                fprintf(stderr, "DIFFERENCE %s%s%s through the per-call sr form, R=%d draw=%016llX: operands",
                        op == REF_CONVERT ? src->name : f->name, op == REF_CONVERT ? "_to_" : "_",
                        op == REF_CONVERT ? f->name : ref_op_name(op), R.sr_bits, (unsigned long long)draw);
                for (int k = 0; k < ref_op_arity(op); k++) fprintf(stderr, " %llX", (unsigned long long)o[k]);
                fprintf(stderr, " => emu %llX %02X (counter %llu), ref %llX %02X\n", (unsigned long long)e, p.flags,
                        (unsigned long long)p.counter, (unsigned long long)r, rfl);
                abort();
            }
        }
    }
    return 0;
}
