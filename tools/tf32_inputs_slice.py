# SPDX-License-Identifier: MIT
"""Write the slices of a gpu/probes/tf32_inputs.py recording that tests/t_cublas.sh replays.

    python3 tools/tf32_inputs_slice.py REC_DIR OUT_DIR MxNxK:VARIANT ...

For each MxNxK:VARIANT (VARIANT raw or tie), from REC_DIR/tf32.npz: the recorded rows of A
(R x K) and columns of B (K x C) as f32 values ('<f4': the f32 data the GPU was given, not
rounded to tf32) and the call's outputs there (R x C, '<f4'), as gzip'ed .npy files:

    tf32in-{M}x{N}x{K}-{VARIANT}_A.npy.gz, _B.npy.gz, _D.npy.gz

(tools/cublas_grid_slice.py's writer: np.save into gzip.GzipFile(mtime=0, compresslevel=9).)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cublas_grid_slice import save  # noqa: E402


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    rec, out = sys.argv[1], sys.argv[2]
    z = np.load(os.path.join(rec, "tf32.npz"))
    os.makedirs(out, exist_ok=True)
    for spec in sys.argv[3:]:
        shape, _, v = spec.partition(":")
        if v not in ("raw", "tie") or "a_%s_%s" % (v, shape) not in z.files:
            print("tf32_inputs_slice.py: %s: expected MxNxK:raw or MxNxK:tie of a recorded shape" % spec, file=sys.stderr)
            return 2
        base = os.path.join(out, "tf32in-%s-%s" % (shape, v))
        save(base + "_A.npy.gz", z["a_%s_%s" % (v, shape)].view(np.float32))
        save(base + "_B.npy.gz", z["b_%s_%s" % (v, shape)].view(np.float32))
        save(base + "_D.npy.gz", z["d_%s_%s" % (v, shape)].view(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
