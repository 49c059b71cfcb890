/* SPDX-License-Identifier: MIT */
/* gunzip.c: gzip data (RFC 1952) and CRC-32 through zlib. One gzip member,
 * checked to its trailer (zlib verifies the CRC-32 and the length); bytes
 * after the member, a truncated stream or more output than the caller's
 * bound are errors, so a small hostile file cannot expand without limit. */
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>
#include "train.h"

int trn_gunzip(const unsigned char *in, size_t inlen, size_t maxout, unsigned char **out, size_t *outlen) {
    *out = NULL;
    *outlen = 0;
    z_stream z = {0};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return TRN_GUNZIP_NOMEM; /* 16: gzip header only */
    size_t cap = 1 << 16, n = 0;
    if (cap > maxout + 1) cap = maxout + 1;
    unsigned char *b = malloc(cap);
    int rc = b ? TRN_GUNZIP_BAD : TRN_GUNZIP_NOMEM, zr = Z_OK;
    const unsigned char *p = in;
    size_t left = inlen;
    while (b) {
        if (z.avail_in == 0 && left) {
            z.avail_in = left > UINT_MAX ? UINT_MAX : (unsigned)left;
            z.next_in = (unsigned char *)p;
            p += z.avail_in;
            left -= z.avail_in;
        }
        if (n == cap) { /* one byte past maxout tells "too large" from "exactly maxout" */
            if (n > maxout) { rc = TRN_GUNZIP_TOOBIG; break; }
            size_t nc = cap > (maxout + 1) / 2 ? maxout + 1 : 2 * cap;
            unsigned char *nb = realloc(b, nc);
            if (!nb) { rc = TRN_GUNZIP_NOMEM; break; }
            b = nb;
            cap = nc;
        }
        size_t room = cap - n > UINT_MAX ? UINT_MAX : cap - n;
        z.next_out = b + n;
        z.avail_out = (unsigned)room;
        zr = inflate(&z, Z_NO_FLUSH);
        n += room - z.avail_out;
        if (zr == Z_STREAM_END) {
            if (n > maxout) rc = TRN_GUNZIP_TOOBIG;
            else if (z.avail_in || left) rc = TRN_GUNZIP_BAD; /* bytes after the member */
            else rc = 0;
            break;
        }
        if (zr == Z_MEM_ERROR) { rc = TRN_GUNZIP_NOMEM; break; }
        if (zr != Z_OK && !(zr == Z_BUF_ERROR && z.avail_out == 0)) break; /* bad data, or input ran out */
        if (zr == Z_OK && z.avail_in == 0 && !left && z.avail_out) break;   /* truncated */
    }
    inflateEnd(&z);
    if (rc) { free(b); return rc; }
    *out = b;
    *outlen = n;
    return 0;
}

uint32_t trn_crc32(const void *p, size_t n) { return trn_crc32_update(0, p, n); }

uint32_t trn_crc32_update(uint32_t crc, const void *p, size_t n) {
    uLong c = crc;
    const unsigned char *q = p;
    while (n) {
        unsigned k = n > UINT_MAX ? UINT_MAX : (unsigned)n;
        c = crc32(c, q, k);
        q += k;
        n -= k;
    }
    return (uint32_t)c;
}
