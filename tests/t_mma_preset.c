/* SPDX-License-Identifier: MIT */
/* t_mma_preset.c: the preset table and preset files (emu/mma.c,
 * emu/mma_preset.c; docs/tensor-cores.md, "Preset files", "AMD presets"):
 *   - every built-in device preset saved as one file (fpemu_mma_preset_format)
 *     and every binding (fpemu_mma_model_format) reloads to the same
 *     parameters and the same results, bit for bit, on random vectors;
 *   - the loader's messages name the file and line;
 *   - the derived lists (names, cc mapping, fp8 formats);
 *   - the AMD presets on hand-worked vectors that follow from MMA-Sim's
 *     description of CDNA2 and CDNA3. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mma.h"
#include "tap.h"

static const fpemu_format *F(const char *n) {
    const fpemu_format *f = fpemu_format_get(n, NULL, 0);
    if (!f) tap_bail("no format %s", n);
    return f;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A random code of f: mostly values near 1 (exponents spread), some
 * specials and raw codes. */
static uint64_t rcode(const fpemu_format *f) {
    uint64_t r = rnd();
    int w = f->bits + f->pad;
    uint64_t mask = w >= 64 ? ~0ull : (1ull << w) - 1;
    if (r % 16 == 0) return (r >> 8) & mask; /* any code */
    double x = ldexp(1.0 + (double)(r >> 40) / 16777216.0, (int)((r >> 8) % 9) - 4);
    if (r & 0x10) x = -x;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    return fpemu_from_double(f, x, &ctx);
}

static int same_results(const fpemu_mma_model *x, const fpemu_mma_model *y, int trials) {
    uint64_t a[80], b[80];
    for (int t = 0; t < trials; t++) {
        size_t k = rnd() % 70;
        for (size_t i = 0; i < k; i++) a[i] = rcode(x->fa), b[i] = rcode(x->fb);
        uint64_t c = rcode(x->fc);
        if (fpemu_mma_dot(x, a, b, k, c, NULL) != fpemu_mma_dot(y, a, b, k, c, NULL)) return 0;
    }
    return 1;
}

static const char *const fmts[] = {"f16", "bf16", "tf32", "f32", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e3m2",
                                   "e2m3", "e2m1", "f64", NULL};
static const char *const accs[] = {"f32", "f16", "f64", NULL};

int main(void) {
    char err[512], d1[1024], d2[1024];
    /* ---- every built-in preset through a file ---- */
    int bindings = 0, bad = 0;
    for (int i = 0; i < fpemu_mma_preset_count(); i++) {
        const fpemu_mma_preset_info *p = fpemu_mma_preset_get(i);
        char *whole = NULL;
        if (!p->reference) {
            int n = fpemu_mma_preset_format(p->name, NULL, 0, err, sizeof err);
            if (!ok(n > 0, "%s: fpemu_mma_preset_format (%s)", p->name, n > 0 ? "ok" : err)) continue;
            whole = malloc((size_t)n + 1);
            fpemu_mma_preset_format(p->name, whole, (size_t)n + 1, err, sizeof err);
        }
        int nb = 0, nbad = 0;
        for (int a = 0; fmts[a]; a++)
            for (int b = 0; fmts[b]; b++)
                for (int c = 0; accs[c]; c++)
                    for (int d = 0; accs[d]; d++) {
                        fpemu_mma_model m, l1, l2;
                        if (fpemu_mma_model_preset(&m, p->name, F(fmts[a]), F(fmts[b]), F(accs[c]), F(accs[d]), NULL, 0)) {
                            /* the whole file must refuse what the preset refuses */
                            if (whole && !fpemu_mma_model_parse(&l1, whole, p->name, F(fmts[a]), F(fmts[b]), F(accs[c]),
                                                                F(accs[d]), NULL, 0)) {
                                nbad++;
                                diag("%s: the file binds %s x %s -> %s (c %s), the preset does not", p->name, fmts[a],
                                     fmts[b], accs[d], accs[c]);
                            }
                            continue;
                        }
                        nb++;
                        int n = fpemu_mma_model_format(&m, NULL, 0);
                        char *one = malloc((size_t)n + 1);
                        fpemu_mma_model_format(&m, one, (size_t)n + 1);
                        int r1 = fpemu_mma_model_parse(&l1, one, "one", m.fa, m.fb, m.fc, m.fd, err, sizeof err);
                        int r2 = whole ? fpemu_mma_model_parse(&l2, whole, "whole", m.fa, m.fb, m.fc, m.fd, err, sizeof err)
                                       : (l2 = l1, r1);
                        free(one);
                        fpemu_mma_model_describe(&m, d1, sizeof d1);
                        int ok1 = !r1 && !r2;
                        if (ok1) {
                            fpemu_mma_model_describe(&l1, d2, sizeof d2);
                            ok1 = !strcmp(d1, d2) && l1.nan_allones == m.nan_allones && l1.group_nfrac == m.group_nfrac &&
                                  l1.group_block == m.group_block && !strcmp(l1.device, m.device);
                            fpemu_mma_model_describe(&l2, d2, sizeof d2);
                            ok1 = ok1 && !strcmp(d1, d2) && l2.nan_allones == m.nan_allones;
                            ok1 = ok1 && same_results(&m, &l1, 40) && same_results(&m, &l2, 40);
                        }
                        if (!ok1) {
                            nbad++;
                            diag("%s: %s x %s -> %s (c %s) differs after the round trip: %s", p->name, fmts[a], fmts[b],
                                 accs[d], accs[c], r1 || r2 ? err : d1);
                        }
                    }
        /* integer MMA through the file */
        fpemu_mma_model im, il;
        for (int sg = 0; sg < 2 && whole; sg++)
            if (!fpemu_mma_model_preset_int(&im, p->name, sg, sg, 0, NULL, 0)) {
                nb++;
                if (fpemu_mma_model_parse_int(&il, whole, "whole", sg, sg, 0, err, sizeof err) || il.block != im.block ||
                    il.kind != FPEMU_MMA_KIND_INT) {
                    nbad++;
                    diag("%s: integer MMA after the round trip: %s", p->name, err);
                }
            }
        ok(nb > 0 && nbad == 0, "%s: %d bindings saved, reloaded, same parameters and results", p->name, nb);
        bindings += nb, bad += nbad;
        free(whole);
    }
    diag("%d bindings round-tripped, %d differences", bindings, bad);
    /* a model changed by --set keeps its changes in the file */
    {
        fpemu_mma_model m, l;
        fpemu_mma_model_preset(&m, "h100", F("e4m3"), F("e5m2"), NULL, NULL, NULL, 0);
        fpemu_mma_model_set(&m, "nfrac", "17", NULL, 0);
        fpemu_mma_model_set(&m, "align", "rd", NULL, 0);
        fpemu_mma_model_set(&m, "chain", "f32-add", NULL, 0);
        char buf[4096];
        fpemu_mma_model_format(&m, buf, sizeof buf);
        is_int(fpemu_mma_model_parse(&l, buf, "x", m.fa, m.fb, m.fc, m.fd, err, sizeof err), 0, "a --set model reloads");
        ok(l.nfrac == 17 && l.align == FPEMU_MMA_ALIGN_RD && l.chain == FPEMU_MMA_CHAIN_F32_ADD && same_results(&m, &l, 200),
           "its changed parameters and results survive");
        is_int(fpemu_mma_model_parse(&l, buf, "x", F("e4m3"), F("e4m3"), NULL, NULL, err, sizeof err), -1,
               "the file binds only the formats it names");
        ok(strstr(err, "x: no binding for e4m3 x e4m3") != NULL, "message: %s", err);
    }
    /* ---- the loader's messages ---- */
    {
        fpemu_mma_model m;
        const char *t1 = "fpemu_mma_preset = 1\nname = dev\na = f16\nnfrac = 24\nblock = x\n";
        is_int(fpemu_mma_model_parse(&m, t1, "dev.preset", F("f16"), F("f16"), NULL, NULL, err, sizeof err), -1, "bad value refused");
        ok(strstr(err, "dev.preset:5: option block") != NULL, "names file and line: %s", err);
        const char *t2 = "fpemu_mma_preset = 1\nname = dev\na = f16\nnfrac = 24\ncolour = red\n";
        fpemu_mma_model_parse(&m, t2, "dev.preset", F("f16"), F("f16"), NULL, NULL, err, sizeof err);
        ok(strstr(err, "dev.preset:5: unknown key 'colour'") != NULL, "unknown key: %s", err);
        const char *t3 = "name = dev\na = f16\nnfrac = 24\n";
        fpemu_mma_model_parse(&m, t3, "dev.preset", F("f16"), F("f16"), NULL, NULL, err, sizeof err);
        ok(strstr(err, "not a preset file") != NULL, "no version line: %s", err);
        const char *t4 = "fpemu_mma_preset = 1\nname = dev\nblock = 4\na = f16\nnfrac = 24\n";
        fpemu_mma_model_parse(&m, t4, "dev.preset", F("f16"), F("f16"), NULL, NULL, err, sizeof err);
        ok(strstr(err, "dev.preset:3: block belongs to a binding") != NULL, "parameter before a binding: %s", err);
        const char *t5 = "fpemu_mma_preset = 1\nname = dev\na = f16\nblock = 4\n";
        fpemu_mma_model_parse(&m, t5, "dev.preset", F("f16"), F("f16"), NULL, NULL, err, sizeof err);
        ok(strstr(err, "dev.preset:3: a block-fma binding needs nfrac") != NULL, "nfrac required: %s", err);
        is_int(fpemu_mma_model_preset(&m, "/nonexistent/x.preset", F("f16"), F("f16"), NULL, NULL, err, sizeof err), -1,
               "a missing file");
        ok(strstr(err, "/nonexistent/x.preset") != NULL, "names the file: %s", err);
        /* a hand-written file: defaults for the keys left out */
        const char *t6 = "# a planted device\nfpemu_mma_preset = 1\nname = planted\nsource = t_mma_preset.c\n"
                         "a = f16 bf16\nb = f16\nnfrac = 20\nblock = 6\nalign = rd\n";
        is_int(fpemu_mma_model_parse(&m, t6, "planted.preset", F("bf16"), F("f16"), NULL, NULL, err, sizeof err), 0,
               "a hand-written file loads (%s)", err);
        ok(m.nfrac == 20 && m.block == 6 && m.align == FPEMU_MMA_ALIGN_RD && m.out_round == FPEMU_RNE && m.zero_c == 1 &&
           !strcmp(m.source, "t_mma_preset.c"), "its keys and the documented defaults");
    }
    /* ---- derived lists ---- */
    {
        int n = 0;
        while (fpemu_mma_preset_names[n]) n++;
        is_int(n, fpemu_mma_preset_count(), "fpemu_mma_preset_names has every row");
        is_str(fpemu_mma_preset_for_cc(90), "h100", "cc 9.0 -> h100");
        is_str(fpemu_mma_preset_for_cc(89), "ada", "cc 8.9 -> ada");
        is_str(fpemu_mma_preset_for_cc(86), "a100", "cc 8.6 -> a100");
        is_str(fpemu_mma_preset_for_cc(120), "b200", "cc 12.0 -> b200");
        ok(fpemu_mma_preset_for_cc(60) == NULL, "cc 6.0: no preset");
        const char *e4, *e5;
        fpemu_mma_preset_fp8("mi300", &e4, &e5, NULL, 0);
        ok(e4 && e5 && !strcmp(e4, "e4m3fnuz") && !strcmp(e5, "e5m2fnuz"), "mi300 trains with e4m3fnuz/e5m2fnuz");
        fpemu_mma_preset_fp8("h100", &e4, &e5, NULL, 0);
        ok(e4 && e5 && !strcmp(e4, "e4m3") && !strcmp(e5, "e5m2"), "h100 trains with e4m3/e5m2");
        fpemu_mma_preset_fp8("mi250", &e4, &e5, NULL, 0);
        ok(!e4 && !e5, "mi250 has no fp8");
        for (int i = 0; i < fpemu_mma_preset_count(); i++) {
            const fpemu_mma_preset_info *p = fpemu_mma_preset_get(i);
            if (!strncmp(p->name, "mi", 2))
                ok(!p->measured && !strcmp(p->status, "from the literature, not measured here") && strstr(p->sources, "MMA-Sim"),
                   "%s is labelled from the literature, with its sources", p->name);
        }
    }
    /* ---- AMD CDNA3 (mi300), MMA-Sim's TR-FDPA ---- */
    {
        fpemu_mma_model m;
        is_int(fpemu_mma_model_preset(&m, "mi300", F("f16"), F("f16"), NULL, NULL, err, sizeof err), 0, "mi300 f16");
        /* c is cut to 24 bits below E = 2^4 toward -inf: -(1 + 2^-23) -> -(1 + 2^-20) (asymmetric) */
        uint64_t a1[1] = {0x4C00}, b1[1] = {0x3C00};
        is_hex(fpemu_mma_dot(&m, a1, b1, 1, 0xBF800001, NULL), 0x416FFFFF, "mi300 f16: 16 - (1 + 2^-23) = 15 - 2^-20 (c cut toward -inf)");
        is_hex(fpemu_mma_dot(&m, a1, b1, 1, 0x3F800001, NULL), 0x41880000, "mi300 f16: 16 + (1 + 2^-23) = 17 (cut toward -inf)");
        /* the products among themselves: cut toward zero at their own emax (c takes no part) */
        uint64_t a2[2] = {0x3C00, 0x8800}, b2[2] = {0x3C00, 0x0800};
        is_hex(fpemu_mma_dot(&m, a2, b2, 2, 0, NULL), 0x3F800000, "mi300 f16: 1 - 2^-26 -> 1 (products cut toward zero)");
        /* output rounded to nearest even */
        uint64_t a3[1] = {0x3C00}, b3[1] = {0x3C00};
        is_hex(fpemu_mma_dot(&m, a3, b3, 1, 0x4B800001, NULL), 0x4B800002, "mi300 f16: 2^24 + 2 + 1 -> 2^24 + 4 (rne)");
        /* blocks of 8: a boundary between products 7 and 8, none between 3 and 4 */
        uint64_t a4[9] = {0}, b4[9];
        for (int i = 0; i < 9; i++) b4[i] = 0x3C00;
        a4[7] = a4[8] = 0x3C00;
        is_hex(fpemu_mma_dot(&m, a4, b4, 9, 0x4B800000, NULL), 0x4B800000, "mi300 f16: 2^24 + 1 (block 1) + 1 (block 2) -> 2^24");
        a4[7] = a4[8] = 0, a4[3] = a4[4] = 0x3C00;
        is_hex(fpemu_mma_dot(&m, a4, b4, 9, 0x4B800000, NULL), 0x4B800001, "mi300 f16: 2^24 + 2 in one block");
        is_int(fpemu_mma_model_preset(&m, "mi300", F("e4m3"), F("e4m3"), NULL, NULL, err, sizeof err), -1,
               "mi300 takes the fnuz fp8 formats, not OCP e4m3");
        is_int(fpemu_mma_model_preset(&m, "mi300", F("e4m3fnuz"), F("e5m2fnuz"), NULL, NULL, err, sizeof err), 0,
               "mi300 fp8 x bf8 (mixed)");
        ok(m.block == 16 && m.split == 2 && m.fuse_nfrac == 31, "mi300 fp8: 16 products, even/odd halves, 31 bits");
        is_int(fpemu_mma_model_preset(&m, "mi300", F("f16"), F("f16"), F("f16"), F("f16"), err, sizeof err), -1,
               "mi300: MFMA accumulates in f32 only");
        is_int(fpemu_mma_model_preset(&m, "mi300", F("f32"), F("f32"), NULL, NULL, err, sizeof err), 0, "mi300 xf32");
        ok(m.tf32_truncate && m.block == 4, "mi300 xf32: inputs truncated to tf32, 4 products");
        fpemu_mma_model im;
        is_int(fpemu_mma_model_preset_int(&im, "mi300", 1, 1, 0, err, sizeof err), 0, "mi300 s8 x s8");
        is_int(fpemu_mma_model_preset_int(&im, "mi300", 0, 1, 0, err, sizeof err), -1, "mi300: no u8 integer MFMA");
    }
    /* ---- AMD CDNA2 (mi250), MMA-Sim's FTZ-MUL-ADD ---- */
    {
        fpemu_mma_model m;
        is_int(fpemu_mma_model_preset(&m, "mi250", F("f16"), F("f16"), NULL, NULL, err, sizeof err), 0, "mi250 f16");
        uint64_t a1[1] = {0x0001}, b1[1] = {0x7800};
        is_hex(fpemu_mma_dot(&m, a1, b1, 1, 0, NULL), 0, "mi250 f16: a subnormal input is flushed (2^-24 x 2^15 -> 0)");
        /* (p0 + p1) + (p2 + p3), each rounded in f32: (2^24 + 1) + (1 + 0) -> 2^24 */
        uint64_t a2[4] = {0x6C00, 0x3C00, 0x3C00, 0}, b2[4] = {0x6C00, 0x3C00, 0x3C00, 0x3C00};
        is_hex(fpemu_mma_dot(&m, a2, b2, 4, 0, NULL), 0x4B800000, "mi250 f16: pairwise sums rounded (2^24 + 1 + 1 -> 2^24)");
        is_int(fpemu_mma_model_preset(&m, "mi250", F("bf16"), F("bf16"), NULL, NULL, err, sizeof err), 0, "mi250 bf16");
        uint64_t a3[1] = {0x0D80}, b3[1] = {0xB080};
        is_hex(fpemu_mma_dot(&m, a3, b3, 1, 0x80000000, NULL), 0x80000000,
               "mi250 bf16: -0 + 2^-100 x -2^-30: the f32-subnormal product is flushed to -0");
        is_int(fpemu_mma_model_preset(&m, "mi250", F("f32"), F("f32"), NULL, NULL, err, sizeof err), -1,
               "mi250 has no xf32 (CDNA3 only)");
    }
    tap_done();
    return tap_exit_status();
}
