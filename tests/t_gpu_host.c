/* SPDX-License-Identifier: MIT */
/* t_gpu_host.c: the host side of the GPU harness, on the CPU: the kind
 * table, the lane/register and shared-memory layouts against the PTX ISA
 * formulas (restated here independently), input generation, and a whole
 * validation run against a stand-in device built from an emu preset, with
 * and without a planted wrong bit, down to the report lines. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "../gpu/host/harness.h"

static uint64_t seed;

/* ---- kind table ----------------------------------------------------------------- */

static void test_table(void) {
    int bad = 0;
    for (int i = 0; i < GPU_KIND_COUNT; i++) {
        const gpu_kind *k = gpu_kind_get(i);
        if (!k || (int)k->id != i || !k->name || !k->kernel || !k->ptx) { bad++; continue; }
        for (int j = 0; j < i; j++)
            if (!strcmp(gpu_kind_get(j)->name, k->name) || !strcmp(gpu_kind_get(j)->kernel, k->kernel)) bad++;
        if (gpu_kind_find(k->name) != k || gpu_kind_find(k->kernel) != k) bad++;
        if (k->op != GPU_OP_CVT && (k->m * k->n > 64 * 8 || k->k > 32)) bad++;
    }
    is_int(bad, 0, "kind table: ids in order, names and kernels unique and findable");
    ok(gpu_kind_get(GPU_KIND_COUNT) == NULL && gpu_kind_get(-1) == NULL && gpu_kind_find("nope") == NULL,
       "kind table: out-of-range lookups give NULL");
    const gpu_kind *e4 = gpu_kind_get(GPU_MMA_E4M3), *wg = gpu_kind_get(GPU_WGMMA_F16);
    ok(!gpu_kind_supported(e4, 80) && gpu_kind_supported(e4, 89) && gpu_kind_supported(e4, 90),
       "fp8 mma.sync needs sm_89+");
    ok(!gpu_kind_supported(wg, 89) && gpu_kind_supported(wg, 90) && !gpu_kind_supported(wg, 100),
       "wgmma runs on exactly sm_90 (sm_90a code)");
    is_int(gpu_kind_elem_bits(gpu_kind_get(GPU_MMA_TF32)), 32, "tf32 elements are 32-bit");
    is_int(gpu_kind_elem_bits(gpu_kind_get(GPU_MMA_BF16)), 16, "bf16 elements are 16-bit");
    is_int(gpu_kind_elem_bits(gpu_kind_get(GPU_MMA_U8S8)), 8, "u8 elements are 8-bit");
    ok(gpu_kind_is_int(gpu_kind_get(GPU_MMA_S8_SAT)) && !gpu_kind_is_int(e4), "integer kinds are recognised");
}

/* ---- layouts -------------------------------------------------------------------- */

/* The PTX ISA's fragment tables, written out again element by element
 * (independently of layout.c's closed forms). */
static void ptx_a(int bits, int lane, int i, int *r, int *c) {
    int g = lane >> 2, t = lane % 4;
    if (bits == 16) {
        *r = ((i >= 0 && i < 2) || (i >= 4 && i < 6)) ? g : g + 8;
        *c = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
    } else if (bits == 32) {
        *r = (i == 0 || i == 2) ? g : g + 8;
        *c = (i == 0 || i == 1) ? t : t + 4;
    } else {
        *r = ((i >= 0 && i < 4) || (i >= 8 && i < 12)) ? g : g + 8;
        *c = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
    }
}
static void ptx_b(int bits, int lane, int i, int *r, int *c) {
    int g = lane >> 2, t = lane % 4;
    *c = g;
    if (bits == 16) *r = i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
    else if (bits == 32) *r = i == 0 ? t : t + 4;
    else *r = i < 4 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
}

static void test_mma_layout(void) {
    for (int id = 0; id < GPU_KIND_COUNT; id++) {
        const gpu_kind *k = gpu_kind_get(id);
        if (k->op != GPU_OP_MMA) continue;
        int bits = gpu_kind_elem_bits(k), per = 32 / bits, bad = 0;
        int seen_a[16 * 32] = {0}, seen_b[32 * 8] = {0}, seen_c[16 * 8] = {0};
        for (int lane = 0; lane < 32; lane++) {
            for (int i = 0; i < 4 * per; i++) {
                int r, c, r2, c2;
                gpu_mma_a_pos(k, lane, i, &r, &c);
                ptx_a(bits, lane, i, &r2, &c2);
                bad += r != r2 || c != c2 || r < 0 || r >= 16 || c < 0 || c >= k->k;
                if (!bad) seen_a[r * k->k + c]++;
            }
            for (int i = 0; i < 2 * per; i++) {
                int r, c, r2, c2;
                gpu_mma_b_pos(k, lane, i, &r, &c);
                ptx_b(bits, lane, i, &r2, &c2);
                bad += r != r2 || c != c2 || r < 0 || r >= k->k || c < 0 || c >= 8;
                if (!bad) seen_b[r * 8 + c]++;
            }
            for (int i = 0; i < 4; i++) {
                int r, c;
                gpu_mma_cd_pos(lane, i, &r, &c);
                bad += r != (lane >> 2) + (i < 2 ? 0 : 8) || c != (lane % 4) * 2 + (i & 1);
                if (!bad) seen_c[r * 8 + c]++;
            }
        }
        for (int i = 0; i < 16 * k->k; i++) bad += seen_a[i] != 1;
        for (int i = 0; i < k->k * 8; i++) bad += seen_b[i] != 1;
        for (int i = 0; i < 16 * 8; i++) bad += seen_c[i] != 1;
        is_int(bad, 0, "%s: A/B/C fragments follow the PTX formulas and cover each element once", k->name);
    }
    /* a concrete register: m16n8k16 f16, lane 5 (groupID 1, threadID_in_group 1)
     * holds A[1][2], A[1][3] in a0/a1 (register 0) and A[9][10], A[9][11] in
     * a6/a7 (register 3). */
    const gpu_kind *k = gpu_kind_get(GPU_MMA_F16);
    uint64_t A[16 * 16];
    uint32_t img[128];
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++) A[r * 16 + c] = (uint64_t)(r * 16 + c);
    gpu_pack_a(k, 1, A, img);
    is_hex(img[5 * 4 + 0], (uint64_t)((1 * 16 + 3) << 16 | (1 * 16 + 2)), "f16 lane 5 a0/a1 = A[1][2], A[1][3] (low half first)");
    is_hex(img[5 * 4 + 3], (uint64_t)((9 * 16 + 11) << 16 | (9 * 16 + 10)), "f16 lane 5 a6/a7 = A[9][10], A[9][11]");
    /* m16n8k32 8-bit, lane 6 (g 1, t 2): b4..b7 (register 1) = B[24..27][1] */
    const gpu_kind *k8 = gpu_kind_get(GPU_MMA_E4M3);
    uint64_t B[32 * 8];
    uint32_t bimg[64];
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 8; c++) B[r * 8 + c] = (uint64_t)(r * 8 + c) & 0xFF;
    gpu_pack_b(k8, 1, B, bimg);
    is_hex(bimg[6 * 2 + 1], (uint64_t)((27u * 8 + 1) << 24 | (26u * 8 + 1) << 16 | (25u * 8 + 1) << 8 | (24u * 8 + 1)),
           "m16n8k32 lane 6 b4..b7 = B[24..27][1]");
}

static void test_wgmma_layout(void) {
    for (int id = GPU_WGMMA_F16; id <= GPU_WGMMA_E5M2; id++) {
        const gpu_kind *k = gpu_kind_get(id);
        int esize = gpu_kind_elem_bits(k) / 8, T = 16 / esize, bad = 0;
        static unsigned char seen[GPU_WGMMA_A_BYTES];
        memset(seen, 0, sizeof seen);
        for (int m = 0; m < 64; m++)
            for (int kk = 0; kk < k->k; kk++) {
                size_t off = gpu_wgmma_smem_offset(k, m, kk);
                /* core matrices of 8 rows x 16 bytes; LBO along K, SBO along M */
                size_t want = (size_t)(kk / T) * 128 + (size_t)(m / 8) * 256 + (size_t)(m % 8) * 16 + (size_t)(kk % T) * esize;
                bad += off != want || off + esize > GPU_WGMMA_A_BYTES;
                if (off + esize <= GPU_WGMMA_A_BYTES)
                    for (int b = 0; b < esize; b++) seen[off + b]++;
            }
        for (int i = 0; i < GPU_WGMMA_A_BYTES; i++) bad += seen[i] != 1;
        is_int(bad, 0, "%s: K-major no-swizzle smem layout (LBO 128 along K, SBO 256 per 8 rows) covers A exactly", k->name);
    }
    is_hex(gpu_wgmma_desc(0x400), (uint64_t)0x40 | (uint64_t)8 << 16 | (uint64_t)16 << 32,
           "descriptor: address>>4, LBO>>4 at bit 16, SBO>>4 at bit 32, no swizzle");
    int seen[64 * 8] = {0}, bad = 0;
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < 4; i++) {
            int r, c;
            gpu_wgmma_d_pos(t, i, &r, &c);
            if (r < 0 || r >= 64 || c < 0 || c >= 8) bad++;
            else seen[r * 8 + c]++;
        }
    for (int i = 0; i < 64 * 8; i++) bad += seen[i] != 1;
    int r, c;
    gpu_wgmma_d_pos(32 + 5, 3, &r, &c); /* warp 1, lane 5: row 16+1+8, col 2+1 */
    is_int(bad + (r != 25) + (c != 3), 0, "wgmma m64n8 D fragment: warp w owns rows 16w..16w+15, covers 64x8 once");
}

static void test_roundtrip(void) {
    gpu_rng rng;
    gpu_rng_init(&rng, seed, 7);
    for (int id = 0; id < GPU_KIND_COUNT; id++) {
        const gpu_kind *k = gpu_kind_get(id);
        if (k->op == GPU_OP_CVT) continue;
        for (int steps = 1; steps <= 3; steps += 2) {
            size_t kk = (size_t)k->k * steps, bits = (size_t)gpu_kind_elem_bits(k);
            uint64_t mask = bits == 32 ? 0xFFFFFFFFu : (UINT64_C(1) << bits) - 1;
            uint64_t *A = malloc(8 * k->m * kk), *A2 = malloc(8 * k->m * kk), *B = malloc(8 * kk * k->n),
                     *B2 = malloc(8 * kk * k->n), C[64 * 8], C2[64 * 8];
            uint32_t *ia = malloc(4 * gpu_a_words(k) * steps), *ib = malloc(4 * gpu_b_words(k) * steps), ic[512];
            for (size_t i = 0; i < k->m * kk; i++) A[i] = gpu_rng_next(&rng) & mask;
            for (size_t i = 0; i < kk * k->n; i++) B[i] = gpu_rng_next(&rng) & mask;
            for (int i = 0; i < k->m * k->n; i++) C[i] = gpu_rng_next(&rng) & 0xFFFFFFFFu;
            gpu_pack_a(k, steps, A, ia), gpu_unpack_a(k, steps, ia, A2);
            gpu_pack_b(k, steps, B, ib), gpu_unpack_b(k, steps, ib, B2);
            gpu_pack_cd(k, C, ic), gpu_unpack_cd(k, ic, C2);
            ok(!memcmp(A, A2, 8 * k->m * kk) && !memcmp(B, B2, 8 * kk * k->n) && !memcmp(C, C2, 8 * k->m * k->n),
               "%s: pack/unpack round trip of A, B, C (%d step%s)", k->name, steps, steps > 1 ? "s" : "");
            free(A), free(A2), free(B), free(B2), free(ia), free(ib);
        }
    }
}

/* ---- generation -------------------------------------------------------------------- */

static void test_gen(void) {
    const gpu_kind *kinds[] = {gpu_kind_get(GPU_MMA_F16), gpu_kind_get(GPU_MMA_TF32), gpu_kind_get(GPU_WGMMA_E4M3),
                               gpu_kind_get(GPU_MMA_U8S8)};
    char err[256];
    for (size_t q = 0; q < sizeof kinds / sizeof kinds[0]; q++) {
        const gpu_kind *k = kinds[q];
        gpu_fmts f;
        if (gpu_kind_formats(k, &f, err, sizeof err)) {
            ok(0, "%s: formats: %s", k->name, err);
            continue;
        }
        size_t na = (size_t)k->m * k->k * 2, nb = (size_t)k->k * 2 * k->n, nc = (size_t)k->m * k->n;
        for (int d = 0; d < GPU_DIST_COUNT; d++) {
            uint64_t *A1 = calloc(na, 8), *A2 = calloc(na, 8), *B1 = calloc(nb, 8), *B2 = calloc(nb, 8);
            uint64_t *C1 = calloc(nc, 8), *C2 = calloc(nc, 8), *A3 = calloc(na, 8), *B3 = calloc(nb, 8), *C3 = calloc(nc, 8);
            gpu_gen_tile(k, &f, d, seed, 3, 2, A1, B1, C1);
            gpu_gen_tile(k, &f, d, seed, 3, 2, A2, B2, C2);
            gpu_gen_tile(k, &f, d, seed + 1, 3, 2, A3, B3, C3);
            int same = !memcmp(A1, A2, na * 8) && !memcmp(B1, B2, nb * 8) && !memcmp(C1, C2, nc * 8);
            int differ = memcmp(A1, A3, na * 8) || memcmp(B1, B3, nb * 8);
            int valid = 1, zeros = 0;
            for (size_t i = 0; i < na; i++) {
                if (f.is_int) valid &= A1[i] <= 0xFF;
                else valid &= (A1[i] >> f.a->pad << f.a->pad) == A1[i] && A1[i] <= (UINT64_C(1) << f.a->container) - 1;
                zeros += A1[i] == 0;
            }
            ok(same && differ && valid && zeros < (int)na,
               "%s %s: deterministic in the seed, changes with it, codes valid for the format", k->name,
               gpu_dist_name(k, d));
            free(A1), free(A2), free(A3), free(B1), free(B2), free(B3), free(C1), free(C2), free(C3);
        }
    }
    /* cancellation tiles really cancel: |sum| much smaller than sum |products| */
    const gpu_kind *k = gpu_kind_get(GPU_MMA_F16);
    gpu_fmts f;
    gpu_kind_formats(k, &f, err, sizeof err);
    uint64_t A[16 * 16], B[16 * 8], C[16 * 8];
    gpu_gen_tile(k, &f, GPU_DIST_CANCEL, seed, 0, 1, A, B, C);
    double s = 0, sa = 0;
    for (int t = 0; t < 16; t++) {
        double p = fpemu_to_double(f.a, A[t]) * fpemu_to_double(f.b, B[t * 8]);
        s += p, sa += p < 0 ? -p : p;
    }
    ok(sa > 0 && (s < 0 ? -s : s) < sa / 8, "cancellation tile: |sum| %g << sum|p| %g", s, sa);
    gpu_case cs[256];
    int n = gpu_designed_cases(k, &f, GPU_CASES_PROBE, cs, 256);
    ok(n >= 40, "f16 probe vectors: %d cases", n);
    int exact = n > 0 && !strcmp(cs[0].what, "probe extra bits 1") &&
                fpemu_to_double(f.a, cs[0].a[0]) * fpemu_to_double(f.b, cs[0].b[0]) == 0x1p-24 &&
                fpemu_to_double(f.c, cs[0].c) == 1.0;
    ok(exact, "probe 'extra bits 1' is c=1 plus products 2^-24 exactly");
    const gpu_kind *k8 = gpu_kind_get(GPU_MMA_E4M3);
    gpu_kind_formats(k8, &f, err, sizeof err);
    n = gpu_designed_cases(k8, &f, GPU_CASES_PROBE, cs, 256);
    int scaled = 0;
    for (int i = 0; i < n; i++) scaled += strstr(cs[i].what, "x2^") != NULL;
    ok(n > 20 && scaled > 0, "e4m3 probe vectors: %d cases, %d scaled to fit the format", n, scaled);
    n = gpu_designed_cases(k8, &f, GPU_CASES_ADVERSARIAL, cs, 256);
    ok(n >= 15, "e4m3 adversarial cases: %d", n);
    gpu_kind_formats(gpu_kind_get(GPU_MMA_S8_SAT), &f, err, sizeof err);
    n = gpu_designed_cases(gpu_kind_get(GPU_MMA_S8_SAT), &f, GPU_CASES_ADVERSARIAL, cs, 256);
    ok(n >= 4 && cs[0].k == 32 && (int8_t)cs[0].a[0] == -128, "s8 adversarial cases: %d, the first overflows int32", n);
}

/* ---- validation against a stand-in device ---------------------------------------------- */

/* The planted difference: the output whose a[0] is the f16 code 0x3C00 (1.0)
 * and whose c is the f32 code of 1 + 2^-23 + 2^-22 (the output rounding
 * probe vector, positive). */
static int plant_rounding_probe(const gpu_kind *k, const uint64_t *a, const uint64_t *b, int kk, uint64_t c) {
    (void)k, (void)b, (void)kk;
    return a[0] == 0x3C00 && c == 0x3F800003;
}
static int plant_cvt(const gpu_kind *k, const uint64_t *a, const uint64_t *b, int kk, uint64_t c) {
    (void)k, (void)b, (void)kk, (void)c;
    return a[0] == 0x3F800000; /* 1.0f */
}

static char *report_text(const gpu_kind_result *res, int n) {
    gpu_report_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.device, sizeof info.device, "FAKE (emu model h100, no GPU)");
    info.cc = 90;
    snprintf(info.backend, sizeof info.backend, "fake");
    snprintf(info.preset, sizeof info.preset, "h100");
    snprintf(info.date, sizeof info.date, "2026-01-02T03:04:05Z");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int rc = gpu_report_write(f, &info, res, n);
    fclose(f);
    if (rc) { free(buf); return NULL; }
    return buf;
}

static void test_fake_validation(void) {
    gpu_backend be;
    gpu_fake fk = {"h100", 90, -1, NULL};
    gpu_validate_opts o;
    gpu_reference ref;
    gpu_kind_result res[2];
    char err[512];
    gpu_fake_backend(&be, &fk);
    gpu_validate_opts_init(&o);
    o.seed = seed, o.cases = 512;
    memset(res, 0, sizeof res);

    const gpu_kind *k = gpu_kind_get(GPU_MMA_F16);
    if (gpu_reference_init(&ref, k, "h100", 90, err, sizeof err)) {
        ok(0, "reference h100 f16: %s", err);
        return;
    }
    int rc = gpu_validate_kind(&be, &ref, &o, &res[0], err, sizeof err);
    ok(rc == 0 && res[0].total.cases > 512 && res[0].total.mismatches == 0 && res[0].nlines == 0,
       "fake h100 vs h100 model, f16 mma: %llu cases, %llu mismatches", (unsigned long long)res[0].total.cases,
       (unsigned long long)res[0].total.mismatches);
    uint64_t rows = 0;
    for (int r = 0; r < GPU_ROW_CHAINED; r++) rows += res[0].rows[r].cases;
    ok(rows == res[0].total.cases && res[0].rows[GPU_ROW_CHAINED].cases > 0 && res[0].rows[GPU_ROW_PROBE].cases > 0 &&
           res[0].rows[GPU_ROW_ADVERSARIAL].cases > 0,
       "cases split over distributions, probe and adversarial rows; chained tiles ran");
    gpu_kind_result_free(&res[0]);

    fk.plant_kind = GPU_MMA_F16, fk.plant_match = plant_rounding_probe;
    memset(&res[0], 0, sizeof res[0]);
    rc = gpu_validate_kind(&be, &ref, &o, &res[0], err, sizeof err);
    ok(rc == 0 && res[0].total.mismatches == 1 && res[0].rows[GPU_ROW_PROBE].mismatches == 1 && res[0].nlines == 1,
       "planted wrong bit found: %llu mismatch(es), in the probe row", (unsigned long long)res[0].total.mismatches);

    /* a conversion kind, with a planted difference at x = 1.0f */
    const gpu_kind *kc = gpu_kind_get(GPU_CVT_F16_RN);
    gpu_reference refc;
    fk.plant_kind = GPU_CVT_F16_RN, fk.plant_match = plant_cvt;
    memset(&res[1], 0, sizeof res[1]);
    if (gpu_reference_init(&refc, kc, "h100", 90, err, sizeof err) ||
        gpu_validate_kind(&be, &refc, &o, &res[1], err, sizeof err)) {
        ok(0, "cvt validation: %s", err);
    } else {
        ok(res[1].total.mismatches == 1 && res[1].rows[GPU_ROW_ADVERSARIAL].mismatches == 1,
           "cvt.rn.f16.f32: %llu cases, the planted 1.0f is the one mismatch", (unsigned long long)res[1].total.cases);
    }

    char *rep = report_text(res, 2);
    ok(rep != NULL, "report written");
    if (rep) {
        char want[256];
        snprintf(want, sizeof want, "\ninstruction=mma.m16n8k16.f32.f16.f16.f32 cases=%llu mismatches=1\n",
                 (unsigned long long)res[0].total.cases);
        ok(strstr(rep, want) != NULL, "report has the summary line for the MMA kind");
        snprintf(want, sizeof want, "\ninstruction=cvt.rn.f16.f32 cases=%llu mismatches=1\n",
                 (unsigned long long)res[1].total.cases);
        ok(strstr(rep, want) != NULL, "report has the summary line for the conversion");
        /* the replay line: c, then a0 b0 a1 b1 a2 b2 (products 1*1), zeros after;
         * the fake flipped the low bit of the model's 0x40400001... whatever
         * the model says, gpu and model differ in bit 0 */
        const char *l = strstr(rep, "echo '3F800003 3C00 3C00 3C00 3C00 3C00 3C00 0000 0000");
        ok(l != NULL, "report has the replayable probe line (C A0 B0 ...)");
        if (l) {
            const char *e = strchr(l, '\n');
            char line[2048];
            snprintf(line, sizeof line, "%.*s", (int)(e ? e - l : 200), l);
            unsigned gd = 0, md = 0;
            const char *g = strstr(line, "# => gpu ");
            int parsed = g && sscanf(g, "# => gpu %X, model %X", &gd, &md) == 2;
            ok(parsed && (gd ^ md) == 1 && strstr(line, "| fpemu mma --model h100 --a f16 --b f16 --c f32 --d f32") &&
                   strstr(line, "[probe output rounding]"),
               "the line replays through fpemu mma and shows gpu/model differing in the planted bit: %s", line);
            /* and the model value is the probe's RZ answer, 4.0f (0x40800000) */
            is_hex(md, 0x40800000, "h100 model: c = 1+2^-23+2^-22 plus 3 x 1 rounds toward zero to 4");
        }
        ok(strstr(rep, "echo '3F800000' | fpemu run f32_to_f16 --round rne --nan cuda   # => gpu 3C01, model 3C00") != NULL,
           "report has the replayable conversion line");
        free(rep);
    }
    gpu_kind_result_free(&res[0]);
    gpu_kind_result_free(&res[1]);

    gpu_report_info info;
    char name[300];
    memset(&info, 0, sizeof info);
    snprintf(info.device, sizeof info.device, "NVIDIA H100 80GB HBM3");
    snprintf(info.date, sizeof info.date, "2026-11-22T05:00:00Z");
    gpu_report_filename(&info, name, sizeof name);
    is_str(name, "NVIDIA-H100-80GB-HBM3-2026-11-22.md", "report file name: DEVICE-DATE.md");
}

/* Every kind validates cleanly against a fake of its own device. */
static void test_all_kinds_fake(void) {
    static const struct { const char *preset; int cc; } devs[] = {{"a100", 80}, {"ada", 89}, {"h100", 90}};
    for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
        gpu_backend be;
        gpu_fake fk = {devs[d].preset, devs[d].cc, -1, NULL};
        gpu_validate_opts o;
        char err[512];
        int bad = 0, ran = 0;
        gpu_fake_backend(&be, &fk);
        gpu_validate_opts_init(&o);
        o.seed = seed, o.cases = 128, o.chain_steps = 2;
        for (int i = 0; i < GPU_KIND_COUNT; i++) {
            const gpu_kind *k = gpu_kind_get(i);
            gpu_reference ref;
            gpu_kind_result r;
            if (!gpu_kind_supported(k, devs[d].cc)) continue;
            memset(&r, 0, sizeof r);
            if (gpu_reference_init(&ref, k, devs[d].preset, devs[d].cc, err, sizeof err) ||
                gpu_validate_kind(&be, &ref, &o, &r, err, sizeof err)) {
                diag("%s on %s: %s", k->name, devs[d].preset, err);
                bad++;
                continue;
            }
            ran++;
            if (r.total.mismatches) {
                diag("%s on %s: %llu mismatches against itself", k->name, devs[d].preset,
                     (unsigned long long)r.total.mismatches);
                bad++;
            }
            gpu_kind_result_free(&r);
        }
        ok(bad == 0 && ran > 0, "fake %s: every supported kind (%d) runs through the harness with 0 mismatches",
           devs[d].preset, ran);
    }
}

/* The sm_90 fp8 mma.sync reference (f16 HMMA x2 + f32 add) on exact cases. */
static void test_fp8_sm90_path(void) {
    gpu_reference ref;
    char err[512];
    const gpu_kind *k = gpu_kind_get(GPU_MMA_E4M3);
    if (gpu_reference_init(&ref, k, "h100", 90, err, sizeof err)) {
        ok(0, "h100 e4m3 mma.sync reference: %s", err);
        return;
    }
    ok(ref.fp8_via_f16, "sm_90 fp8 mma.sync is modelled as the f16 path the SASS shows");
    uint64_t a[32], b[32];
    for (int i = 0; i < 32; i++) a[i] = 0x38, b[i] = 0x38; /* e4m3 1.0 */
    is_hex(gpu_reference_dot(&ref, a, b, 32, 0x3F800000), 0x42040000, "32 x 1*1 + 1 = 33");
    /* c = 2^24, products 1: the f16 blocks give 16 + 16 exactly, the FADD
     * rounds 2^24 + 32 exactly too; with c = 2^24 + 2 and products 0.5
     * (0x30) x 1 in every slot: 16 exactly, then RN add 2^24 + 18 -> even */
    for (int i = 0; i < 32; i++) a[i] = 0x30;
    is_hex(gpu_reference_dot(&ref, a, b, 32, 0x4B800001), 0x4B800009, "2^24+2 + 16 = 2^24+18 (f32 add, exact)");
    gpu_reference ada;
    if (!gpu_reference_init(&ada, k, "ada", 89, err, sizeof err)) ok(!ada.fp8_via_f16, "sm_89 uses the fp8 model");
}

/* The probe through the black-box adapter recovers the preset. */
static void test_probe(void) {
    gpu_backend be;
    gpu_fake fk = {"h100", 90, -1, NULL};
    gpu_fake_backend(&be, &fk);
    static const int ids[] = {GPU_MMA_F16, GPU_WGMMA_E4M3};
    for (size_t q = 0; q < sizeof ids / sizeof ids[0]; q++) {
        const gpu_kind *k = gpu_kind_get(ids[q]);
        gpu_probe_box box = {&be, k, GPU_MAX_STEPS, 0, {0}};
        gpu_reference ref;
        fpemu_mma_probe_result got, want;
        char err[256];
        if (gpu_reference_init(&ref, k, "h100", 90, err, sizeof err)) {
            ok(0, "%s: %s", k->name, err);
            continue;
        }
        int rc = fpemu_mma_probe(gpu_probe_blackbox, &box, ref.f.a, ref.f.b, ref.f.c, ref.f.d, 64, &got);
        fpemu_mma_probe_expected(&ref.model, 64, &want);
        ok(rc == 0 && box.calls > 0 && got.block == want.block && got.nfrac == want.nfrac &&
               got.out_mant == want.out_mant && !strcmp(got.out_round, want.out_round),
           "%s: probe through the image interface finds block=%d nfrac=%d out_mant=%d out_round=%s (%d queries)",
           k->name, got.block, got.nfrac, got.out_mant, got.out_round, box.calls);
    }
}


/* A recording replays the device's answers bit for bit, refuses a call it
 * does not hold, and --set changes the model compared with. */
static void test_record_replay(void) {
    gpu_backend fake, rec, rep;
    gpu_fake fk = {"h100", 90, -1, NULL};
    gpu_recording r, q;
    gpu_validate_opts o;
    gpu_reference ref;
    gpu_kind_result a, b;
    char err[512], path[] = "/tmp/t_gpu_host_recXXXXXX", v[64];
    int fd = mkstemp(path);
    if (fd < 0) bail("mkstemp");
    close(fd);
    gpu_fake_backend(&fake, &fk);
    gpu_validate_opts_init(&o);
    o.seed = seed, o.cases = 256;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    gpu_record_backend(&rec, &r, &fake);
    const gpu_kind *k = gpu_kind_get(GPU_MMA_BF16), *kc = gpu_kind_get(GPU_CVT_F16_RN);
    int rc = gpu_record_header(&r, "cc", "90", err, sizeof err) || gpu_reference_init(&ref, k, "h100", 90, err, sizeof err) ||
             gpu_validate_kind(&rec, &ref, &o, &a, err, sizeof err) || gpu_record_write(&r, path, err, sizeof err);
    ok(!rc && r.calls > 0, "recorded %llu calls of the fake bf16 mma: %s", (unsigned long long)r.calls, rc ? err : "ok");
    uint64_t calls = r.calls;
    gpu_recording_free(&r);
    ok(a.nopen >= 20 && a.floor_seen && a.floor_cut + 1 == a.floor_kept && a.floor_kept + a.nfrac == -133,
       "the open-point cases are reported (%d lines) and the floor family places the fake h100's floor at %d",
       a.nopen, a.floor_kept + a.nfrac);
    rc = gpu_replay_open(&rep, &q, path, err, sizeof err) || gpu_replay_header(&q, "cc", v, sizeof v) ||
         gpu_validate_kind(&rep, &ref, &o, &b, err, sizeof err);
    ok(!rc && !strcmp(v, "90") && gpu_replay_done(&q) && q.calls == calls && b.total.cases == a.total.cases &&
           b.total.mismatches == 0,
       "replayed: header cc=%s, %llu calls, %llu cases, 0 mismatches", v, (unsigned long long)q.calls,
       (unsigned long long)b.total.cases);
    gpu_kind_result_free(&b);
    gpu_recording_free(&q);
    /* another model over the same answers: zero_c counted at emin moves some tiny bf16 sums */
    memset(&b, 0, sizeof b);
    rc = gpu_replay_open(&rep, &q, path, err, sizeof err) || gpu_reference_set(&ref, "emax_floor", "none", err, sizeof err) ||
         gpu_reference_set(&ref, "zero_c", "emin", err, sizeof err) || gpu_validate_kind(&rep, &ref, &o, &b, err, sizeof err);
    ok(!rc && b.total.mismatches > 0 && strstr(ref.replay, "--set zero_c=emin") && strstr(ref.model_name, "zero_c=emin"),
       "--set zero_c=emin over the recording: %llu mismatches, replay line '%s'", (unsigned long long)b.total.mismatches,
       ref.replay);
    gpu_kind_result_free(&b);
    gpu_recording_free(&q);
    is_int(gpu_reference_set(&ref, "zero_c", "sometimes", err, sizeof err), -1, "--set with a bad value: %s", err);
    /* a call the recording does not hold (another seed, another kind) */
    memset(&b, 0, sizeof b);
    o.seed = seed + 1;
    rc = gpu_replay_open(&rep, &q, path, err, sizeof err) || gpu_reference_init(&ref, k, "h100", 90, err, sizeof err);
    ok(!rc && gpu_validate_kind(&rep, &ref, &o, &b, err, sizeof err) == -1 && strstr(err, "differs from the recorded"),
       "replay with another seed is refused: %.120s", err);
    gpu_kind_result_free(&b);
    gpu_recording_free(&q);
    memset(&b, 0, sizeof b);
    o.seed = seed;
    rc = gpu_replay_open(&rep, &q, path, err, sizeof err) || gpu_reference_init(&ref, kc, "h100", 90, err, sizeof err);
    ok(!rc && gpu_validate_kind(&rep, &ref, &o, &b, err, sizeof err) == -1, "replay of another kind is refused");
    gpu_kind_result_free(&b);
    gpu_recording_free(&q);
    /* not a recording */
    FILE *f = fopen(path, "w");
    if (f) fputs("hello\n", f), fclose(f);
    ok(gpu_replay_open(&rep, &q, path, err, sizeof err) == -1 && strstr(err, "not a recording"), "garbage file: %s", err);
    unlink(path);
    ok(gpu_replay_open(&rep, &q, path, err, sizeof err) == -1 && strstr(err, "cannot open"), "missing file: %s", err);
    gpu_kind_result_free(&a);
}

/* What the H100 showed outside the MMA model: every NaN from cvt and from
 * sm_90's f32 add of the fp8 mma.sync path is 0x7FFF / 0x7FFFFFFF. */
static void test_cuda_nans(void) {
    gpu_reference ref;
    char err[256];
    if (gpu_reference_init(&ref, gpu_kind_get(GPU_CVT_F16_RN), "h100", 90, err, sizeof err)) bail("%s", err);
    is_hex(gpu_reference_cvt(&ref, 0xFF8154B1), 0x7FFF, "cvt.rn.f16.f32 of a negative sNaN: the H100's 7FFF");
    if (gpu_reference_init(&ref, gpu_kind_get(GPU_MMA_E4M3), "h100", 90, err, sizeof err)) bail("%s", err);
    uint64_t a[32] = {0x7F}, b[32] = {0x38};
    is_hex(gpu_reference_dot(&ref, a, b, 32, 0x3F800000), 0x7FFFFFFF, "sm_90 e4m3 mma.sync with a NaN input: 7FFFFFFF");
}

int main(void) {
    seed = tap_seed(20261122);
    test_table();
    test_mma_layout();
    test_wgmma_layout();
    test_roundtrip();
    test_gen();
    test_fake_validation();
    test_all_kinds_fake();
    test_fp8_sm90_path();
    test_probe();
    test_record_replay();
    test_cuda_nans();
    return done_testing();
}
