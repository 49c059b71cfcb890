# SPDX-License-Identifier: MIT
"""Write the slices of a record_cublas.py grid recording that tests/t_cublas.sh replays.

    python3 tools/cublas_grid_slice.py REC_DIR OUT_DIR DTYPE:MxNxK ...

For each DTYPE:MxNxK, from REC_DIR/cublas-DTYPE.npz: the first recorded row of A (1 x K) and
the recorded columns of B (K x 4), and every recorded output kind at that row and those columns
(1 x 4), as gzip'ed .npy files (np.save into gzip.GzipFile(mtime=0, compresslevel=9)):

    grid-{dt}_{M}x{N}x{K}_A.npy.gz, _B.npy.gz   codes ('<u2' f16/bf16, '|u1' e4m3) or, for
                                                f32 and tf32, the f32 values ('<f4')
    grid-{dt}_{M}x{N}x{K}_D_{kind}.npy.gz       the call's outputs as f32 values ('<f4'; the
                                                f16/bf16 native outputs converted exactly)
"""
import gzip
import os
import sys

import numpy as np


def save(path, arr):
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9, filename="") as f:
        np.save(f, np.ascontiguousarray(arr))


def as_f32(d, dt, kind):
    if kind in ("native", "red0") and dt == "f16":
        return d.view(np.float16).astype(np.float32)
    if kind in ("native", "red0", "bf16out"):
        return (d.astype(np.uint32) << 16).view(np.float32)
    return d.view(np.float32)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rec, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for spec in sys.argv[3:]:
        dt, shape = spec.split(":")
        z = np.load(os.path.join(rec, "cublas-%s.npz" % dt))
        A, B = z["A_%s_%s" % (dt, shape)][:1], z["B_%s_%s" % (dt, shape)]
        if dt in ("f32", "tf32"):
            A, B = A.view(np.float32), B.view(np.float32)
        pre = os.path.join(out, "grid-%s_%s" % (dt, shape))
        save(pre + "_A.npy.gz", A)
        save(pre + "_B.npy.gz", B)
        for key in z.files:
            if key.startswith("D_%s_" % dt) and key.endswith("_" + shape):
                kind = key[len("D_%s_" % dt):-len("_" + shape)]
                save(pre + "_D_%s.npy.gz" % kind, as_f32(z[key][:1], dt, kind))


if __name__ == "__main__":
    main()
