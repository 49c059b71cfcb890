/* SPDX-License-Identifier: MIT */
/* npy.h: the CLI's one reader/writer for NumPy .npy files (format versions
 * 1, 2 and 3): vectors and matrices of little-endian f4 ('<f4'), f2
 * ('<f2'), u1 ('|u1') and u2 ('<u2'), C or Fortran order (npy_read; a few
 * more dtypes from a buffer: npy_parse), and N-d arrays for fpemu cast
 * (npy_read_nd). Errors name the file and what was wrong (wrong magic, bad
 * header, unsupported dtype, truncated or trailing data). */
#ifndef FPEMU_CLI_NPY_H
#define FPEMU_CLI_NPY_H
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* NPY_F8, NPY_I4, NPY_I8, NPY_U4 and NPY_I1 ('<f8', '<i4', '<i8', '<u4',
 * '|i1') come only from npy_parse (and NPY_F8 from npy_read_nd), NPY_V1
 * and NPY_V2 only from npy_read_nd. */
typedef enum npy_dtype { NPY_F4 = 0, NPY_F2, NPY_U1, NPY_U2, NPY_F8, NPY_I4, NPY_I8, NPY_U4, NPY_I1, NPY_V1, NPY_V2 } npy_dtype;

typedef struct npy_array {
    npy_dtype dtype;
    int fortran;       /* fortran_order: True */
    int ndim;          /* 1 or 2 */
    size_t rows, cols; /* a 1-D array of n is 1 x n */
    size_t n;          /* rows * cols elements */
    void *data;        /* n elements of the dtype, in file order */
} npy_array;

/* Read PATH. Returns 0, or -1 with a message in err. */
int npy_read(const char *path, npy_array *a, char *err, size_t errlen);

/* An N-d array (npy_read_nd, for fpemu cast): C order, 1 to NPY_MAXDIM
 * dimensions, at most 2^31 - 1 elements, of '<f8', '<f4', '<f2', or the
 * bytes of an ml_dtypes type: NPY_V2 ('<V2', '|V2': bfloat16) or NPY_V1
 * ('<V1', '|V1', '<f1', '|f1': the float8 and float4 types); descr is the
 * header's. */
#define NPY_MAXDIM 16
typedef struct npy_nd {
    npy_dtype dtype;
    int ndim;
    size_t shape[NPY_MAXDIM];
    size_t n;
    void *data; /* malloc'ed: npy_nd_free */
    char descr[32];
} npy_nd;
#define NPY_NOT_NPY (-2) /* npy_read_nd: PATH does not start with the .npy magic */
/* Read PATH. Returns 0, NPY_NOT_NPY, or -1; a message in err either way. */
int npy_read_nd(const char *path, npy_nd *t, char *err, size_t errlen);
void npy_nd_free(npy_nd *t);
/* Parse the n bytes of a whole .npy file in memory (a member of an .npz):
 * the dtypes above and '<f8', '<i4', '<i8', '<u4', '|i1'; exactly the header's data, no
 * byte after it. NAME is the file's name in messages. Returns 0 (a->data
 * malloc'ed: npy_free), or -1 with a message in err. */
int npy_parse(const void *buf, size_t n, const char *name, npy_array *a, char *err, size_t errlen);
/* Bytes per element of a dtype. */
size_t npy_itemsize(npy_dtype t);
/* Element (i, j) of an integer array ('<i4', '<i8', '|i1'; u1/u2/u4 as codes). */
int64_t npy_int(const npy_array *a, size_t i, size_t j);
void npy_free(npy_array *a);
/* Element (i, j) of a 2-D array as a double (f2 decoded exactly; u1/u2 as
 * the integer code; f8 as it is; i4/i8 converted). */
double npy_get(const npy_array *a, size_t i, size_t j);
/* Raw code of element (i, j) (u1/u2 arrays; f2/f4 give their bit pattern). */
uint64_t npy_code(const npy_array *a, size_t i, size_t j);
/* Write a rows x cols f32 matrix (row-major) atomically as a version 1 .npy.
 * Returns 0, or -1 with a message. */
int npy_write_f32(const char *path, const float *x, size_t rows, size_t cols, char *err, size_t errlen);
const char *npy_dtype_name(npy_dtype t);
/* In a .npy header dict, the value of 'key' (or "key"): a pointer just past
 * its ':' and the spaces after it, or NULL. */
const char *npy_header_key(const char *h, const char *key);
/* Write a version 1.0 .npy header to f for a C-order array of descr and
 * shape (a 1-d shape is written (n, )): magic, length, the dict padded with
 * spaces so that the data starts at a multiple of 64. 0, or -1 (a write
 * failed, or the dict does not fit: errno EOVERFLOW). */
int npy_write_header(FILE *f, const char *descr, const size_t *shape, int ndim);
#endif
