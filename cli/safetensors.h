/* SPDX-License-Identifier: MIT */
/* safetensors.h: a reader and writer for safetensors files (Hugging Face's
 * tensor container, github.com/huggingface/safetensors; docs/cast.md):
 *
 *   8 bytes   N, the header's length (little-endian unsigned 64-bit)
 *   N bytes   the header: one JSON object (UTF-8), optionally padded with
 *             spaces: "__metadata__" (an object of string values, optional)
 *             and, per tensor, NAME: {"dtype": D, "shape": [d0, ...],
 *             "data_offsets": [BEGIN, END]}
 *   the rest  the tensors' bytes, little-endian, C order; BEGIN and END are
 *             offsets into this part
 *
 * The reader checks what the reference implementation checks (its
 * tensor.rs, `Metadata::validate` and `read_metadata`): N at most 100,000,000
 * and within the file, the header valid UTF-8 and a JSON object, every
 * tensor's fields of the right kinds, a known dtype, END - BEGIN equal to
 * the bytes its shape and dtype need (no overflow), and the tensors' ranges,
 * taken in order of BEGIN, tiling the data part exactly: no gap, no
 * overlap, nothing after the last one. It also refuses what would make a
 * name ambiguous: a name given twice, and a \u0000 escape in the header.
 * Only the header is held in memory; tensors are read one at a time
 * (st_read_tensor). Errors name the file (and the tensor) and what was
 * wrong. */
#ifndef FPEMU_CLI_SAFETENSORS_H
#define FPEMU_CLI_SAFETENSORS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ST_HEADER_MAX 100000000u /* the reference implementation's limit */
#define ST_MAXDIM 16

/* The dtypes the format names (safetensors 0.8), in the reference's order. */
typedef enum st_dtype {
    ST_BOOL, ST_U8, ST_I8, ST_F8_E5M2, ST_F8_E4M3, ST_F8_E8M0, ST_F8_E4M3FNUZ, ST_F8_E5M2FNUZ, ST_F4, ST_F6_E2M3,
    ST_F6_E3M2, ST_I16, ST_U16, ST_F16, ST_BF16, ST_I32, ST_U32, ST_F32, ST_F64, ST_I64, ST_U64, ST_C64, ST_NDTYPE
} st_dtype;

/* One dtype: its name in the header, its bits per element, and the fpemu
 * format whose codes (or, for F32 and F64, values) it holds: NULL for the
 * integers, BOOL and C64. F4 holds two e2m1 codes per byte, element 2i in
 * the low four bits (PyTorch's float4_e2m1fn_x2). F6_E2M3 and F6_E3M2 pack
 * four codes in three bytes in an order no framework defines: their format
 * is given, but st_cast_ok refuses them. */
typedef struct st_dtype_info {
    const char *name;
    int bits;
    const char *format;
} st_dtype_info;
const st_dtype_info *st_dtype_get(st_dtype d);
/* The dtype whose codes are the format's (the registry name: "e4m3" ->
 * F8_E4M3, "f32" -> F32, "e2m1" -> F4), or -1 if the format has none. */
int st_dtype_of_format(const char *format);
/* Whether fpemu can read this dtype's elements as a format (every dtype with
 * a format, but the 6-bit ones). */
int st_cast_ok(st_dtype d);

typedef struct st_tensor {
    char *name;
    st_dtype dtype;
    int ndim;                    /* 0 (a scalar) .. ST_MAXDIM */
    uint64_t shape[ST_MAXDIM];
    uint64_t n;                  /* elements: the product of the shape (1 for a scalar) */
    uint64_t begin, end;         /* the bytes [begin, end) of the data part */
} st_tensor;

typedef struct st_file {
    int count;
    st_tensor *t;                /* in the order of their offsets */
    int nmeta;
    char **meta_key, **meta_val; /* "__metadata__", in the header's order */
    uint64_t header_len;         /* N */
    uint64_t data_len;           /* the data part's bytes */
    FILE *f;                     /* st_open's file (NULL after st_parse) */
    char *path;
} st_file;

/* Check a whole file's prefix and header: buf holds its first n bytes (at
 * least 8 + N of them) and the file has file_size bytes in all. NAME names
 * it in messages. 0, or -1 with a message in err (nothing to free). */
int st_parse(const unsigned char *buf, size_t n, uint64_t file_size, const char *name, st_file *s, char *err,
             size_t errlen);
/* Open PATH and check it (st_parse); the file stays open for
 * st_read_tensor. 0, or -1 with a message. */
int st_open(const char *path, st_file *s, char *err, size_t errlen);
/* Read tensor i's bytes (end - begin of them) into buf. 0, or -1 with a
 * message (a short read: the file changed). */
int st_read_tensor(st_file *s, int i, void *buf, char *err, size_t errlen);
void st_free(st_file *s);
/* Do these first n bytes look like the start of a safetensors file (eight
 * bytes, then '{' after optional white space)? 1 or 0: st_parse says
 * whether it is one. */
int st_sniff(const unsigned char *buf, size_t n);

/* ---- writing ---------------------------------------------------------------- */

typedef struct st_out {
    const char *name;
    st_dtype dtype;
    int ndim;
    const uint64_t *shape;
} st_out;

/* Bytes of n elements of a dtype (n * bits / 8), or -1 if n * bits is not a
 * whole number of bytes or overflows. */
int64_t st_nbytes(st_dtype d, uint64_t n);
/* Write the prefix and header of a file of these tensors, in this order,
 * each taking st_nbytes of its shape right after the previous one, with the
 * metadata pairs (NULL, 0 for none), padded with spaces to a multiple of 8
 * bytes as the reference writes it. The tensors' bytes follow, written by
 * the caller. 0, or -1 with a message. */
int st_write_header(FILE *f, const st_out *t, int count, char *const *meta_key, char *const *meta_val, int nmeta,
                    char *err, size_t errlen);
#endif
