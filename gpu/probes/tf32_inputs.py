# SPDX-License-Identifier: MIT
"""Record how PyTorch's tf32 GEMMs (torch.matmul on f32 with allow_tf32) round their f32 inputs,
and what they return on inputs that are tf32 already (docs/cublas.md, "tf32 inputs").

A tensor-core tf32 product reads 19 bits of each f32 operand (sign, 8 exponent bits, 10
fraction bits). A kernel may round its operands to tf32 first (cvt.rna.tf32.f32: to nearest,
ties away from zero), or hand the f32 words to the instruction as they are, which then ignores
the 13 low bits (toward zero). The summation-tree table's tf32 rows assume one rounding for
every call; the calls it could not fit (small K, 511 x 1024 x 130) may use the other. This
probe answers the question without a model: per call, D(X) against D(r(X)) for X's inputs
rounded beforehand by r in {rz, rne, rna}. With random inputs rne and rna differ only at
ties, so each shape is also called with "tie" inputs, whose 13 low bits are exactly 0x1000 (a
tie for every element), where rz, rne and rna all differ.

Needs PyTorch with CUDA and NumPy; no network. From the repository root on a lent machine:

    OUT=/path/to/out python3 gpu/probes/tf32_inputs.py [--device cpu]

(--device cpu is a dry run of the script on the CPU's BLAS, not a recording.) Writes
OUT/tf32.npz and OUT/tf32.json. For each shape S = MxNxK and inputs V in {raw, tie} (A, B drawn
N(0, 1) in f32 with a seed per shape; `tie` is `raw` with its 13 low bits set to 0x1000):

  a_V_S, b_V_S      the f32 bits (uint32) of the recorded rows of A (R x K) and columns of B
                    (K x C); rows_S, cols_S name them (all rows and columns up to 16, else 16
                    spread over the shape, 0, 1, M/2 and M-1 among them; 4 at K >= 8192)
  d_V_S             D = A @ B at rows x cols (uint32 bits of the f32 outputs)
  d_V_r_S           the same call on r(A) @ r(B), r in rz, rne, rna (the inputs rounded to tf32
                    on the host, so the kernel's own rounding, whatever it is, is the identity)

and in tf32.json per shape and V: eq_r, the number of the M x N outputs where D(V) and
D(r(V)) have the same bits (all M x N: the kernel rounds as r does); repeat_same, whether a
second call of D(V) returned the same bits everywhere; and the cuBLAS kernel names that
torch.profiler saw for the call, where the profiler works.
"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
from record_cublas import kernel_names, save_record  # noqa: E402

SHAPES = [  # (M, N, K): the tf32 calls docs/cublas.md lists as not fitted, then fitted controls
    (16, 16, 16), (64, 64, 16), (64, 128, 16), (256, 256, 16), (16, 16, 48), (64, 64, 48),
    (16, 16, 1000), (33, 65, 1000), (127, 255, 1000), (511, 1024, 130),
    (16, 16, 16384), (64, 64, 16384), (1024, 1024, 4096),
    (33, 65, 48), (16, 16, 130), (64, 64, 512), (256, 256, 1000), (1024, 1024, 130),
]
ROUNDINGS = ("rz", "rne", "rna")
LOW = np.uint32(0x1FFF)


def tf32_round(u, how):
    """f32 bits u (uint32, finite) rounded to tf32's 10 fraction bits, as f32 bits."""
    u = u.astype(np.uint32)
    if how == "rz":
        return u & ~LOW
    if how == "rna":
        return (u + np.uint32(0x1000)) & ~LOW
    if how == "rne":
        return (u + np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))) & ~LOW
    raise ValueError(how)


def spread(n, k):
    if n <= 16:
        return list(range(n))
    want = 4 if k >= 8192 else 16
    pick = {0, 1, n // 2, n - 1}
    for i in range(want):
        if len(pick) >= want:
            break
        pick.add(round(i * (n - 1) / (want - 1)))
    return sorted(pick)[:want]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = ap.parse_args()
    import torch

    out = os.environ.get("OUT")
    if not out:
        print("tf32_inputs.py: set OUT to the folder that comes back", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    dev = args.device
    if dev == "cuda" and not torch.cuda.is_available():
        print("tf32_inputs.py: no CUDA device (use --device cpu for a dry run)", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = True
    meta = {"torch": torch.__version__, "cuda": torch.version.cuda, "argv": sys.argv,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu (dry run)",
            "allow_tf32": torch.backends.cuda.matmul.allow_tf32, "shapes": {}, "failed": {}}
    arrays = {}
    t0 = time.time()

    def to_dev(u):
        return torch.from_numpy(np.ascontiguousarray(u).view(np.float32)).to(dev)

    def bits(t):
        return t.contiguous().cpu().numpy().view(np.uint32)

    for (m, n, k) in SHAPES:
        s = "%dx%dx%d" % (m, n, k)
        try:
            rng = np.random.default_rng(20261128 + 7919 * m + 104729 * n + k)
            raw_a = rng.standard_normal((m, k), dtype=np.float32).view(np.uint32)
            raw_b = rng.standard_normal((k, n), dtype=np.float32).view(np.uint32)
            rows, cols = spread(m, k), spread(n, k)
            arrays["rows_" + s] = np.array(rows, dtype=np.int32)
            arrays["cols_" + s] = np.array(cols, dtype=np.int32)
            info = {}
            for v in ("raw", "tie"):
                ua = raw_a if v == "raw" else (raw_a & ~LOW) | np.uint32(0x1000)
                ub = raw_b if v == "raw" else (raw_b & ~LOW) | np.uint32(0x1000)
                A, B = to_dev(ua), to_dev(ub)
                D = torch.matmul(A, B)
                D2 = torch.matmul(A, B)
                dv = bits(D)
                vi = {"repeat_same": bool(np.array_equal(dv, bits(D2)))}
                arrays["a_%s_%s" % (v, s)] = ua[rows, :]
                arrays["b_%s_%s" % (v, s)] = ub[:, cols]
                arrays["d_%s_%s" % (v, s)] = dv[np.ix_(rows, cols)]
                for r in ROUNDINGS:
                    Dr = bits(torch.matmul(to_dev(tf32_round(ua, r)), to_dev(tf32_round(ub, r))))
                    vi["eq_" + r] = int((Dr == dv).sum())
                    arrays["d_%s_%s_%s" % (v, r, s)] = Dr[np.ix_(rows, cols)]
                if v == "raw":
                    try:
                        vi["kernels"] = kernel_names(torch, lambda: torch.matmul(A, B))
                    except Exception as e:  # the profiler is a clue, not the record
                        vi["kernels"] = "profiler failed: %s" % e
                info[v] = vi
                del A, B, D, D2
            info["outputs"] = m * n
            meta["shapes"][s] = info
            print("%s: %s" % (s, json.dumps(info)), flush=True)
        except Exception:
            meta["failed"][s] = traceback.format_exc()
            print("%s: failed\n%s" % (s, meta["failed"][s]), file=sys.stderr, flush=True)
    meta["seconds"] = round(time.time() - t0, 1)
    save_record(out, "tf32", arrays, meta)
    return 1 if meta["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
