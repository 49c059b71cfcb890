/* SPDX-License-Identifier: MIT */
/* t_mma_bigk.c: MMA dot products far longer than memory would hold, against
 * the exact sum computed in integers.
 *
 * a and b are one 2 MiB page of f16 codes (PERIOD elements), mapped again
 * and again into one long read-only range (a memfd mapped PERIOD elements
 * at a time), so k can pass 2^31 and 2^32 with 4 MiB of memory. Every
 * product (1 + m/1024)(1 + n/1024) is an integer times 2^-20, so the exact
 * sum is an integer S times 2^-20, known in int64 for any k below 2^33.
 *
 * Checked: the exact kind (rtz and rne; rtz only at k = 2^32 + 1) and a100
 * with block = 0 (one block for all k: the exact sum truncated once) give
 * S x 2^-20 correctly rounded to f32. Built against the tree before
 * 424a7eb, k = 2^31 + 3 fails: the exact kind returns NaN and block = 0
 * overflows a stack buffer (SEGV); k = 2^32 + 1 made blocks of one product.
 *
 * make test runs k = 3 x 2^20 + 1 (49 of the model's 65536-term pieces, a
 * second). FPEMU_BIGK=1 adds k = 2^31 + 3, FPEMU_BIGK=2 also k = 2^32 + 1
 * (minutes each): `make verify-full PARTS=mma_bigk`. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mma.h"
#include "tap.h"

#define PERIOD ((size_t)1 << 18) /* elements of 8 bytes: 2 MiB */

/* A read-only range of n elements repeating page[0..PERIOD), or NULL. */
static const uint64_t *repeat_map(const uint64_t *page, size_t n, size_t *maplen) {
    int fd = memfd_create("t_mma_bigk", 0);
    if (fd < 0) return NULL;
    size_t bytes = PERIOD * 8, chunks = (n + PERIOD - 1) / PERIOD;
    uint8_t *base = MAP_FAILED;
    if (write(fd, page, bytes) == (ssize_t)bytes)
        base = mmap(NULL, chunks * bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    for (size_t i = 0; base != MAP_FAILED && i < chunks; i++)
        if (mmap(base + i * bytes, bytes, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
            munmap(base, chunks * bytes);
            base = MAP_FAILED;
        }
    close(fd);
    *maplen = chunks * bytes;
    return base == MAP_FAILED ? NULL : (const uint64_t *)base;
}

/* f16 code of +-(1 + m/1024) and its integer 1024 + m. */
static uint64_t h16(uint64_t r, int neg, int64_t *v) {
    *v = (1024 + (int64_t)(r & 0x3FF)) * (neg ? -1 : 1);
    return 0x3C00 | (r & 0x3FF) | (neg ? 0x8000 : 0);
}

/* S x 2^-20 rounded to f32 (rtz or rne): |S| < 2^63, so the result is a
 * normal float. */
static uint64_t f32_of(int64_t S, int rne) {
    uint64_t mag = S < 0 ? (uint64_t)-S : (uint64_t)S;
    if (mag == 0) return S < 0 ? 0x80000000u : 0;
    int len = 64 - __builtin_clzll(mag), sh = len > 24 ? len - 24 : 0;
    uint64_t q = mag >> sh, rem = mag - (q << sh), half = sh ? UINT64_C(1) << (sh - 1) : 0;
    if (rne && sh && (rem > half || (rem == half && (q & 1)))) q++;
    if (q >> 24) q >>= 1, sh++; /* carried to 2^24 */
    int e = sh - 20 + 23;       /* value = q x 2^(sh - 20), q in [2^23, 2^24) */
    uint32_t bits = (uint32_t)(e + 127) << 23 | (uint32_t)(q & 0x7FFFFF);
    return bits | (S < 0 ? 0x80000000u : 0);
}

static fpemu_mma_model model(const char *name, const char *key, const char *val) {
    const fpemu_format *h = fpemu_format_get("f16", NULL, 0), *s = fpemu_format_get("f32", NULL, 0);
    fpemu_mma_model m;
    char err[256];
    if (fpemu_mma_model_preset(&m, name, h, h, s, s, err, sizeof err)) bail("%s", err);
    if (key && fpemu_mma_model_set(&m, key, val, err, sizeof err)) bail("%s", err);
    return m;
}

int main(void) {
    const char *env = getenv("FPEMU_BIGK");
    int level = env ? atoi(env) : 0;
    static uint64_t pa[PERIOD], pb[PERIOD];
    static int64_t va[PERIOD], vb[PERIOD];
    for (size_t i = 0; i < PERIOD; i++) {
        uint64_t r = fpemu_random64(7, i);
        pa[i] = h16(r, (int)(r >> 40 & 1), &va[i]);
        pb[i] = h16(r >> 10, 0, &vb[i]);
    }
    /* the page's sum and its prefix sums, for any k */
    static int64_t prefix[PERIOD + 1];
    for (size_t i = 0; i < PERIOD; i++) prefix[i + 1] = prefix[i] + va[i] * vb[i];

    size_t ks[3] = {((size_t)3 << 20) + 1, 0, 0}, nk = 1; /* ascending: the last is mapped */
    if (level >= 1) ks[nk++] = ((size_t)1 << 31) + 3;
    if (level >= 2) ks[nk++] = ((size_t)1 << 32) + 1;
    if (sizeof(size_t) < 8) skip_all("needs a 64-bit size_t");
    size_t maplen = 0;
    const uint64_t *a = repeat_map(pa, ks[nk - 1], &maplen), *b = NULL;
    size_t maplen_b = 0;
    if (a) b = repeat_map(pb, ks[nk - 1], &maplen_b);
    if (!a || !b) {
        char why[128];
        snprintf(why, sizeof why, "cannot map the repeated operands (%s)", strerror(errno));
        skip_all(why);
    }
    if (level == 0) diag("FPEMU_BIGK=1 adds k = 2^31 + 3, FPEMU_BIGK=2 k = 2^32 + 1 (minutes each)");

    fpemu_mma_model exact_z = model("exact", "out_round", "rtz"), exact_n = model("exact", NULL, NULL),
              a100 = model("a100", "block", "0");
    const uint64_t c = 0x3F800000; /* c = 1: 2^20 in units of 2^-20 */
    for (size_t j = 0; j < nk; j++) {
        size_t k = ks[j];
        int64_t S = (int64_t)(k / PERIOD) * prefix[PERIOD] + prefix[k % PERIOD] + ((int64_t)1 << 20);
        uint64_t wz = f32_of(S, 0), wn = f32_of(S, 1);
        diag("k = %zu: exact sum %lld x 2^-20 (rtz %08llx, rne %08llx)", k, (long long)S, (unsigned long long)wz,
             (unsigned long long)wn);
        is_hex(fpemu_mma_dot(&exact_z, a, b, k, c, NULL), wz, "exact kind, rtz, k = %zu", k);
        if (k >> 32 == 0) /* (the 2^32 + 1 run checks two models, not three: minutes each) */
            is_hex(fpemu_mma_dot(&exact_n, a, b, k, c, NULL), wn, "exact kind, rne, k = %zu", k);
        is_hex(fpemu_mma_dot(&a100, a, b, k, c, NULL), wz, "a100 block = 0 (one block), k = %zu: the exact sum truncated", k);
    }
    munmap((void *)a, maplen), munmap((void *)b, maplen_b);
    return done_testing();
}
