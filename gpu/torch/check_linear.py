# SPDX-License-Identifier: MIT
"""Replay a `record_cublas.py --linear` recording through `fpemu gemm --algo cublas` and count,
per dtype and form, the recorded outputs of the random cases predicted bit for bit
(docs/cublas.md, "Linear layers of the replayed runs"). Runs on the CPU; needs NumPy.

    python3 gpu/torch/check_linear.py REC [--fpemu bin/fpemu] [--table FILE] [--no-op]

REC holds cublas-linear-{fwd,wgrad,dgrad}-{f32,f16,bf16}.npz. Each call's whole A, B (and the
forward's bias, as --c broadcast over rows) go through `fpemu gemm --model h100 --algo cublas
--op OP` (fwd: linear, wgrad: mm-ta, dgrad: mm; --outfmt the dtype for f16/bf16) with the
built-in table, or --table FILE; --no-op leaves --op out (a table without op rows: every call
of the recording falls back to the plain model, as before those rows existed). Prints one line
per call that is not bit for bit and one per dtype and form:
`DTYPE FORM outputs EQUAL/TOTAL calls EXACT/CALLS`.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

OPS = {"fwd": "linear", "wgrad": "mm-ta", "dgrad": "mm"}


def vals(c, dt):
    if dt == "f32":
        return c.view(np.float32)
    if dt == "f16":
        return c.view(np.float16).astype(np.float32)
    return (c.astype(np.uint32) << 16).view(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rec")
    ap.add_argument("--fpemu", default="bin/fpemu")
    ap.add_argument("--table", default=None)
    ap.add_argument("--no-op", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="check_linear.")
    rc = 0
    for dt in ("f32", "f16", "bf16"):
        for form in ("fwd", "wgrad", "dgrad"):
            z = np.load(os.path.join(a.rec, "cublas-linear-%s-%s.npz" % (form, dt)))
            ok = n = exact = calls = 0
            for key in sorted(k for k in z.files if k.startswith("A_")):
                shape = key[len("A_%s_" % dt):]
                M, N, K = map(int, shape.split("x"))
                A, B, D = z[key], z["B_%s_%s" % (dt, shape)], z["D_%s_native_%s" % (dt, shape)]
                if dt == "f32":
                    A, B = A.view(np.float32), B.view(np.float32)
                np.save(tmp + "/A.npy", A)
                np.save(tmp + "/B.npy", B)
                cmd = [a.fpemu, "gemm", "--model", "h100", "--afmt", dt, "--a", tmp + "/A.npy", "--b", tmp + "/B.npy",
                       "--algo", "cublas", "--out", tmp + "/O.npy"]
                if dt != "f32":
                    cmd += ["--outfmt", dt]
                if form == "fwd":
                    bias = vals(z["bias_%s_%s" % (dt, shape)], dt)
                    np.save(tmp + "/C.npy", np.broadcast_to(bias[None, :], (M, N)).astype(np.float32))
                    cmd += ["--c", tmp + "/C.npy"]
                if not a.no_op:
                    cmd += ["--op", OPS[form]]
                if a.table:
                    cmd += ["--table", a.table]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode:
                    sys.stderr.write(r.stderr)
                    rc = 1
                    continue
                got = int((np.load(tmp + "/O.npy").view(np.uint32) == vals(D, dt).view(np.uint32)).sum())
                ok += got
                n += D.size
                calls += 1
                exact += got == D.size
                if got != D.size:
                    print("  %s %s %s: %d/%d" % (dt, form, shape, got, D.size))
            print("%s %s outputs %d/%d calls %d/%d" % (dt, form, ok, n, exact, calls), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
