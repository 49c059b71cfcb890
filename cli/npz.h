/* SPDX-License-Identifier: MIT */
/* npz.h: a reader for NumPy's .npz files (np.savez, np.savez_compressed):
 * a zip archive of .npy members, each stored or deflated. The whole file is
 * read (at most NPZ_FILE_MAX bytes) and checked before any member is used:
 * the end-of-central-directory record (one disk, no zip64 end record), each
 * central-directory entry (no encryption, method 0 or 8, sizes within
 * bounds and not the zip64 marker 0xFFFFFFFF, a plain member name ending in
 * .npy, no name twice), each local header (its name equal to the central
 * one; its sizes are ignored, as NumPy writes the zip64 form there), and
 * each member's data: inflated with zlib's raw inflate to exactly its
 * declared size (at most NPZ_MEMBER_MAX bytes, NPZ_TOTAL_MAX in all) and
 * its CRC-32 equal to the declared one. Errors name the file, the member
 * and what was wrong. */
#ifndef FPEMU_CLI_NPZ_H
#define FPEMU_CLI_NPZ_H
#include <stddef.h>
#include <stdint.h>

#define NPZ_FILE_MAX ((size_t)256 << 20)
#define NPZ_MEMBER_MAX ((size_t)256 << 20)
#define NPZ_TOTAL_MAX ((size_t)1 << 30)
#define NPZ_MEMBERS_MAX 65535

typedef struct npz_member {
    char *name;           /* as in the archive, e.g. "0.weight.npy" */
    unsigned char *data;  /* the member's bytes (a whole .npy file) */
    size_t n;
} npz_member;

typedef struct npz_file {
    int count;
    npz_member *m;
    uint32_t crc;         /* CRC-32 of the whole file's bytes */
    size_t bytes;         /* the file's size */
} npz_file;

/* Read and check PATH. 0, or -1 with a message in err (nothing to free). */
int npz_read(const char *path, npz_file *z, char *err, size_t errlen);
void npz_free(npz_file *z);
/* Is the file at PATH a zip archive (starts with "PK\3\4" or is an empty
 * archive "PK\5\6")? 1, 0, or -1 if it cannot be read. */
int npz_is_zip(const char *path);
#endif
