/* SPDX-License-Identifier: MIT */
/* npz.c: NumPy .npz archives (see npz.h). The zip layout (PKWARE's
 * APPNOTE.TXT): local file header "PK\3\4" + name + extra + data for each
 * member, then the central directory ("PK\1\2" entries), then the end of
 * central directory record "PK\5\6". The central directory is the
 * authority for each member's sizes, CRC and method; NumPy writes its
 * local headers in the zip64 form (sizes 0xFFFFFFFF, the real ones in an
 * extra field), so the local sizes are not read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include "npz.h"
#include "train.h"

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

void npz_free(npz_file *z) {
    for (int i = 0; i < z->count; i++) { free(z->m[i].name); free(z->m[i].data); }
    free(z->m);
    z->m = NULL;
    z->count = 0;
}

int npz_is_zip(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char b[4];
    size_t got = fread(b, 1, 4, f);
    fclose(f);
    return got == 4 && b[0] == 'P' && b[1] == 'K' && ((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6));
}

/* Inflate csize bytes of raw deflate data into exactly usize bytes. */
static int inflate_exact(const unsigned char *in, size_t csize, unsigned char *out, size_t usize, const char **why) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK) { *why = "out of memory (zlib)"; return -1; }
    zs.next_in = (unsigned char *)in;
    zs.avail_in = (uInt)csize;
    zs.next_out = out;
    zs.avail_out = (uInt)usize;
    int rc = inflate(&zs, Z_FINISH);
    int ok = rc == Z_STREAM_END && zs.total_out == usize && zs.avail_in == 0;
    if (!ok) {
        if (rc == Z_STREAM_END && zs.avail_in) *why = "bytes after the end of its deflate stream";
        else if (rc == Z_STREAM_END) *why = "inflates to fewer bytes than its declared size";
        else if (rc == Z_BUF_ERROR && zs.avail_out == 0) *why = "inflates to more bytes than its declared size";
        else if (rc == Z_BUF_ERROR) *why = "its deflate stream is cut short";
        else *why = "corrupt deflate data";
    }
    inflateEnd(&zs);
    return ok ? 0 : -1;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto bad; } while (0)

int npz_read(const char *path, npz_file *z, char *err, size_t errlen) {
    memset(z, 0, sizeof *z);
    unsigned char *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno)); return -1; }
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        snprintf(err, errlen, "%s: not a regular file", path);
        return -1;
    }
    if ((uint64_t)st.st_size > NPZ_FILE_MAX) {
        fclose(f);
        snprintf(err, errlen, "%s: %lld bytes, larger than the %zu MiB an .npz may have here", path, (long long)st.st_size,
                 NPZ_FILE_MAX >> 20);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    buf = malloc(size ? size : 1);
    if (!buf) { fclose(f); snprintf(err, errlen, "%s: out of memory", path); return -1; }
    if (fread(buf, 1, size, f) != size || fgetc(f) != EOF) {
        fclose(f);
        free(buf);
        snprintf(err, errlen, "%s: changed while it was read", path);
        return -1;
    }
    fclose(f);
    z->bytes = size;
    z->crc = trn_crc32(buf, size);
    /* the end of central directory record: 22 bytes and a comment of up to
     * 65535 bytes, which must reach the end of the file exactly */
    if (size < 22) FAIL("%s: not a zip archive (%zu bytes, too short for one)", path, size);
    size_t eo = (size_t)-1;
    for (size_t back = 22; back <= size && back <= 22 + 65535; back++) {
        const unsigned char *p = buf + size - back;
        if (p[0] == 'P' && p[1] == 'K' && p[2] == 5 && p[3] == 6 && rd16(p + 20) == back - 22) { eo = size - back; break; }
    }
    if (eo == (size_t)-1) {
        if (size >= 4 && buf[0] == 'P' && buf[1] == 'K')
            FAIL("%s: truncated or corrupt zip archive (no end of central directory record)", path);
        FAIL("%s: not a zip archive (an .npz is one: expected \"PK\" and an end of central directory record)", path);
    }
    const unsigned char *e = buf + eo;
    uint32_t disk = rd16(e + 4), cddisk = rd16(e + 6), nthis = rd16(e + 8), ntot = rd16(e + 10), cdsize = rd32(e + 12),
             cdoff = rd32(e + 16);
    if (nthis == 0xFFFF || ntot == 0xFFFF || cdsize == 0xFFFFFFFFu || cdoff == 0xFFFFFFFFu ||
        (eo >= 20 && rd32(buf + eo - 20) == 0x07064b50u))
        FAIL("%s: a zip64 archive (not supported: an .npz here holds less than 4 GiB)", path);
    if (disk || cddisk || nthis != ntot) FAIL("%s: a multi-disk (split) zip archive (not supported)", path);
    if ((size_t)cdoff > eo || (size_t)cdsize > eo - cdoff) FAIL("%s: corrupt zip archive (the central directory lies outside the file)", path);
    if (ntot == 0) FAIL("%s: an empty zip archive (no arrays)", path);
    z->m = calloc(ntot, sizeof *z->m);
    if (!z->m) FAIL("%s: out of memory", path);
    size_t q = cdoff, total = 0;
    for (uint32_t i = 0; i < ntot; i++) {
        if (eo - q < 46 || rd32(buf + q) != 0x02014b50u)
            FAIL("%s: corrupt zip archive (central directory entry %u of %u is missing or bad)", path, i + 1, ntot);
        const unsigned char *c = buf + q;
        uint32_t flags = rd16(c + 8), method = rd16(c + 10), crc = rd32(c + 16), csize = rd32(c + 20), usize = rd32(c + 24),
                 nlen = rd16(c + 28), elen = rd16(c + 30), clen = rd16(c + 32), dstart = rd16(c + 34), loff = rd32(c + 42);
        if (eo - q - 46 < (size_t)nlen + elen + clen) FAIL("%s: corrupt zip archive (central directory entry %u runs past its end)", path, i + 1);
        char name[300];
        size_t nl = nlen < sizeof name - 1 ? nlen : sizeof name - 1;
        memcpy(name, c + 46, nl);
        name[nl] = 0;
        for (size_t k = 0; k < nl; k++)
            if ((unsigned char)name[k] < 0x20) name[k] = '?';
        if (!nlen || nlen > 255 || memchr(c + 46, 0, nlen) || memchr(c + 46, '/', nlen) || memchr(c + 46, '\\', nlen))
            FAIL("%s: member %u: '%s' is not a plain file name (an .npz holds NAME.npy members, no folders)", path, i + 1, name);
        if (nlen < 5 || memcmp(c + 46 + nlen - 4, ".npy", 4)) FAIL("%s: member '%s' is not a .npy array (an .npz holds NAME.npy members)", path, name);
        if (flags & 0x2041) FAIL("%s: member '%s' is encrypted (not supported)", path, name);
        if (method != 0 && method != 8) FAIL("%s: member '%s': compression method %u (expected 0, stored, or 8, deflated)", path, name, method);
        if (csize == 0xFFFFFFFFu || usize == 0xFFFFFFFFu || loff == 0xFFFFFFFFu || dstart == 0xFFFF)
            FAIL("%s: member '%s' uses zip64 sizes (not supported)", path, name);
        if (dstart) FAIL("%s: member '%s' is on another disk (split archives are not supported)", path, name);
        if (usize > NPZ_MEMBER_MAX) FAIL("%s: member '%s' declares %u bytes, more than the %zu MiB a member may have here", path, name, usize, NPZ_MEMBER_MAX >> 20);
        if (usize > NPZ_TOTAL_MAX - total) FAIL("%s: the members declare more than %zu MiB in all", path, NPZ_TOTAL_MAX >> 20);
        if (method == 0 && csize != usize) FAIL("%s: member '%s' is stored but its sizes differ (%u and %u bytes)", path, name, csize, usize);
        for (uint32_t k = 0; k < i; k++)
            if (strlen(z->m[k].name) == nlen && !memcmp(z->m[k].name, c + 46, nlen)) FAIL("%s: member '%s' is there twice", path, name);
        /* the local header: its name must be the central one */
        if ((size_t)loff > cdoff || cdoff - loff < 30 || rd32(buf + loff) != 0x04034b50u)
            FAIL("%s: member '%s': corrupt zip archive (no local header where the central directory says)", path, name);
        const unsigned char *l = buf + loff;
        uint32_t lflags = rd16(l + 6), lnlen = rd16(l + 26), lelen = rd16(l + 28);
        if (lflags & 0x41) FAIL("%s: member '%s' is encrypted (not supported)", path, name);
        size_t dat = (size_t)loff + 30 + lnlen + lelen;
        if (lnlen != nlen || dat > cdoff || memcmp(l + 30, c + 46, nlen))
            FAIL("%s: member '%s': corrupt zip archive (its local header does not match the central directory)", path, name);
        if ((size_t)csize > cdoff - dat) FAIL("%s: member '%s': truncated (its %u bytes of data run into the central directory)", path, name, csize);
        npz_member *m = &z->m[i];
        m->name = malloc(nlen + 1);
        m->data = malloc(usize ? usize : 1);
        z->count = (int)i + 1;
        if (!m->name || !m->data) FAIL("%s: out of memory", path);
        memcpy(m->name, c + 46, nlen);
        m->name[nlen] = 0;
        m->n = usize;
        const char *why = NULL;
        if (method == 0) memcpy(m->data, buf + dat, usize);
        else if (inflate_exact(buf + dat, csize, m->data, usize, &why)) FAIL("%s: member '%s': %s", path, name, why);
        if (trn_crc32(m->data, usize) != crc)
            FAIL("%s: member '%s': CRC-32 mismatch (the data is corrupt)", path, name);
        total += usize;
        q += 46 + (size_t)nlen + elen + clen;
    }
    if (q != (size_t)cdoff + cdsize) FAIL("%s: corrupt zip archive (the central directory's size does not match its entries)", path);
    free(buf);
    return 0;
bad:
    free(buf);
    npz_free(z);
    return -1;
}
