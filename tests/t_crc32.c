/* SPDX-License-Identifier: MIT */
/* t_crc32.c: the engine's one CRC-32 (trn_crc32, trn_crc32_update), which
 * checkpoints, .npz members, --init and --order records and run-folder
 * checks use: the standard check value, and a buffer fed in pieces of every
 * split gives the CRC of the whole. */
#include <stdint.h>
#include <string.h>
#include "tap.h"
#include "train.h"

int main(void) {
    uint64_t seed = tap_seed(7);
    ok(trn_crc32("123456789", 9) == 0xCBF43926u, "CRC-32 of \"123456789\" is the check value 0xCBF43926");
    ok(trn_crc32("", 0) == 0 && trn_crc32_update(0x12345678u, "", 0) == 0x12345678u, "no bytes: 0, and an update by nothing keeps the CRC");
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++) { /* splitmix64 */
        uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        buf[i] = (unsigned char)((z ^ (z >> 31)) >> 56);
    }
    uint32_t whole = trn_crc32(buf, sizeof buf);
    int bad = 0;
    for (size_t a = 0; a <= sizeof buf; a += 7)
        for (size_t b = a; b <= sizeof buf; b += 61) {
            uint32_t c = trn_crc32_update(trn_crc32_update(trn_crc32_update(0, buf, a), buf + a, b - a), buf + b, sizeof buf - b);
            if (c != whole && bad++ < 3) diag("split at %zu and %zu: %08x, whole %08x", a, b, (unsigned)c, (unsigned)whole);
        }
    ok(!bad, "1,000 random bytes fed in three pieces (every split at multiples of 7 and 61) give the CRC of the whole");
    buf[500] ^= 1;
    ok(trn_crc32(buf, sizeof buf) != whole, "one flipped bit changes it");
    return done_testing();
}
