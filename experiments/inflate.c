/* SPDX-License-Identifier: MIT */
/* inflate.c: a small gzip (RFC 1952) / deflate (RFC 1951) decoder, so the
 * engine reads experiments/data/digits.csv.gz without linking zlib. Follows
 * the structure of Mark Adler's puff.c: canonical Huffman tables decoded one
 * bit at a time (the data sets are tens of kilobytes). Checks the CRC-32 and
 * length in the gzip trailer. */
#include <stdlib.h>
#include <string.h>
#include "train.h"

typedef struct {
    const unsigned char *in; size_t inlen, pos;
    unsigned bitbuf; int bitcnt;
    unsigned char *out; size_t outlen, outcap;
    int err;
} inf_state;

typedef struct { short count[16]; short symbol[320]; } huff;

static int getbits(inf_state *s, int need) {
    long val = s->bitbuf;
    while (s->bitcnt < need) {
        if (s->pos >= s->inlen) { s->err = 1; return 0; }
        val |= (long)s->in[s->pos++] << s->bitcnt;
        s->bitcnt += 8;
    }
    s->bitbuf = (unsigned)(val >> need);
    s->bitcnt -= need;
    return (int)(val & ((1L << need) - 1));
}

static int put(inf_state *s, unsigned char c) {
    if (s->outlen == s->outcap) {
        size_t nc = s->outcap ? 2 * s->outcap : 65536;
        unsigned char *p = realloc(s->out, nc);
        if (!p) { s->err = 2; return -1; }
        s->out = p; s->outcap = nc;
    }
    s->out[s->outlen++] = c;
    return 0;
}

static int decode(inf_state *s, const huff *h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len < 16; len++) {
        code |= getbits(s, 1);
        if (s->err) return -1;
        int count = h->count[len];
        if (code - count < first) return h->symbol[index + (code - first)];
        index += count; first += count; first <<= 1; code <<= 1;
    }
    s->err = 3;
    return -1;
}

/* Returns 0 for a complete code, >0 incomplete, <0 over-subscribed. */
static int construct(huff *h, const short *length, int n) {
    short offs[16];
    memset(h->count, 0, sizeof h->count);
    for (int sym = 0; sym < n; sym++) h->count[length[sym]]++;
    if (h->count[0] == n) return 0;
    int left = 1;
    for (int len = 1; len < 16; len++) {
        left <<= 1; left -= h->count[len];
        if (left < 0) return left;
    }
    offs[1] = 0;
    for (int len = 1; len < 15; len++) offs[len + 1] = offs[len] + h->count[len];
    for (int sym = 0; sym < n; sym++)
        if (length[sym] != 0) h->symbol[offs[length[sym]]++] = (short)sym;
    return left;
}

static int codes(inf_state *s, const huff *lencode, const huff *distcode) {
    static const short lbase[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                    35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const short lext[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                   3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static const short dbase[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                    257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
                                    8193, 12289, 16385, 24577};
    static const short dext[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                   7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    for (;;) {
        int symbol = decode(s, lencode);
        if (symbol < 0) return -1;
        if (symbol < 256) { if (put(s, (unsigned char)symbol)) return -1; }
        else if (symbol == 256) return 0;
        else {
            symbol -= 257;
            if (symbol >= 29) { s->err = 4; return -1; }
            int len = lbase[symbol] + getbits(s, lext[symbol]);
            int ds = decode(s, distcode);
            if (ds < 0 || ds >= 30) { s->err = 4; return -1; }
            size_t dist = (size_t)dbase[ds] + (size_t)getbits(s, dext[ds]);
            if (s->err) return -1;
            if (dist > s->outlen) { s->err = 5; return -1; }
            while (len--) if (put(s, s->out[s->outlen - dist])) return -1;
        }
    }
}

static int fixed(inf_state *s) {
    static huff lencode, distcode;
    static int built;
    if (!built) {
        short lengths[288];
        int sym = 0;
        for (; sym < 144; sym++) lengths[sym] = 8;
        for (; sym < 256; sym++) lengths[sym] = 9;
        for (; sym < 280; sym++) lengths[sym] = 7;
        for (; sym < 288; sym++) lengths[sym] = 8;
        construct(&lencode, lengths, 288);
        for (sym = 0; sym < 30; sym++) lengths[sym] = 5;
        construct(&distcode, lengths, 30);
        built = 1;
    }
    return codes(s, &lencode, &distcode);
}

static int dynamic(inf_state *s) {
    static const short order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    short lengths[320];
    huff lencode, distcode;
    int nlen = getbits(s, 5) + 257, ndist = getbits(s, 5) + 1, ncode = getbits(s, 4) + 4;
    if (s->err || nlen > 286 || ndist > 30) return -1;
    int index;
    for (index = 0; index < ncode; index++) lengths[order[index]] = (short)getbits(s, 3);
    for (; index < 19; index++) lengths[order[index]] = 0;
    if (s->err || construct(&lencode, lengths, 19) != 0) return -1;
    index = 0;
    while (index < nlen + ndist) {
        int symbol = decode(s, &lencode);
        if (symbol < 0) return -1;
        if (symbol < 16) lengths[index++] = (short)symbol;
        else {
            int len = 0;
            if (symbol == 16) { if (index == 0) return -1; len = lengths[index - 1]; symbol = 3 + getbits(s, 2); }
            else if (symbol == 17) symbol = 3 + getbits(s, 3);
            else symbol = 11 + getbits(s, 7);
            if (s->err || index + symbol > nlen + ndist) return -1;
            while (symbol--) lengths[index++] = (short)len;
        }
    }
    if (lengths[256] == 0) return -1;
    int err = construct(&lencode, lengths, nlen);
    if (err && (err < 0 || nlen != lencode.count[0] + lencode.count[1])) return -1;
    err = construct(&distcode, lengths + nlen, ndist);
    if (err && (err < 0 || ndist != distcode.count[0] + distcode.count[1])) return -1;
    return codes(s, &lencode, &distcode);
}

static uint32_t crc32_buf(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

uint32_t trn_crc32(const void *p, size_t n) { return crc32_buf(p, n); }

int trn_gunzip(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen) {
    *out = NULL; *outlen = 0;
    if (inlen < 18 || in[0] != 0x1f || in[1] != 0x8b || in[2] != 8) return -1;
    int flg = in[3];
    size_t pos = 10;
    if (flg & 4) { if (pos + 2 > inlen) return -1; pos += 2 + (size_t)(in[pos] | in[pos + 1] << 8); }
    if (flg & 8) { while (pos < inlen && in[pos]) pos++; pos++; }
    if (flg & 16) { while (pos < inlen && in[pos]) pos++; pos++; }
    if (flg & 2) pos += 2;
    if (pos + 8 > inlen) return -1;
    inf_state s = {in, inlen - 8, pos, 0, 0, NULL, 0, 0, 0};
    int last;
    do {
        last = getbits(&s, 1);
        int type = getbits(&s, 2);
        if (s.err) break;
        if (type == 0) {
            s.bitbuf = 0; s.bitcnt = 0;
            if (s.pos + 4 > s.inlen) { s.err = 1; break; }
            unsigned len = s.in[s.pos] | s.in[s.pos + 1] << 8, nlen = s.in[s.pos + 2] | s.in[s.pos + 3] << 8;
            s.pos += 4;
            if (len != (~nlen & 0xffff) || s.pos + len > s.inlen) { s.err = 1; break; }
            for (unsigned i = 0; i < len; i++) if (put(&s, s.in[s.pos++])) break;
        } else if (type == 1) { if (fixed(&s)) s.err = s.err ? s.err : 6; }
        else if (type == 2) { if (dynamic(&s)) s.err = s.err ? s.err : 6; }
        else s.err = 7;
    } while (!last && !s.err);
    const unsigned char *t = in + inlen - 8;
    uint32_t crc = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
    uint32_t isz = (uint32_t)t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 | (uint32_t)t[7] << 24;
    if (s.err || crc != crc32_buf(s.out, s.outlen) || isz != (uint32_t)s.outlen) { free(s.out); return -1; }
    *out = s.out; *outlen = s.outlen;
    return 0;
}
