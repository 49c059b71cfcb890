# SPDX-License-Identifier: MIT
"""Record the pair-probe answers of PyTorch's large tf32 GEMMs per output tile (docs/cublas.md,
"Not fitted"): the calls cuBLAS runs on Hopper's sm90_..._segment_k kernels give different pair
answers in different rows of one call, so record_cublas.py, which keeps one row, cannot fit them.

Needs PyTorch with CUDA and NumPy; no network. From the repository root on a lent machine:

    OUT=/path/to/out python3 gpu/probes/tf32_tiles.py [--device cpu]

For each shape S = MxNxK (the five tf32 calls the table has no row for) and anchor i in
{0, 1, K/2, K-1}: A all ones (M x K) and B (K x N) whose column c is 2^-12 everywhere but +2^15
at row i and -2^15 at row j_c, the j != i taken N at a time in order (as record_cublas.py's pair
probes); the answers of the rows R = 0, 64, 128, ... (and M-1), for every j:

  ans_S_i{i}   float32 (len(R) x K): entry [r, j] is row R[r]'s answer to the pair (i, j); the
               column it came from is j's position among the j != i, modulo N
  rows_S       R

and one random case (A, B drawn N(0, 1) in f32, seed per shape): a_S (rows R of A, f32 bits),
b_S (columns C = 0, 64, 128, ... of B), d_S (D at R x C, f32 bits), cols_S. Writes
OUT/tf32_tiles.npz and OUT/tf32_tiles.json (versions, kernels torch.profiler saw, seconds).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
from record_cublas import kernel_names, save_record  # noqa: E402

SHAPES = [(1024, 1024, 4096), (1024, 1024, 8192), (511, 1024, 8192), (511, 1024, 16384), (1024, 1024, 16384)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--shapes", default="", help="MxNxK,...: these instead (a dry run's small ones)")
    args = ap.parse_args()
    import torch
    out = os.environ.get("OUT")
    if not out:
        print("tf32_tiles.py: set OUT to the folder that comes back", file=sys.stderr)
        return 2
    dev = args.device
    if dev == "cuda" and not torch.cuda.is_available():
        print("tf32_tiles.py: no CUDA device (use --device cpu for a dry run)", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = True
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
    meta = {"torch": torch.__version__, "cuda": torch.version.cuda, "argv": sys.argv,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu (dry run)", "shapes": {}}
    R = {}
    t0 = time.time()
    big, small = 2.0 ** 15, 2.0 ** -12
    for (M, N, K) in shapes:
        s = "%dx%dx%d" % (M, N, K)
        t = time.time()
        rows = sorted(set(range(0, M, 64)) | {M - 1})
        cols = list(range(0, N, 64))
        R["rows_" + s], R["cols_" + s] = np.array(rows, np.int32), np.array(cols, np.int32)
        ones = torch.ones((M, K), device=dev, dtype=torch.float32)
        same = True
        for i in sorted({0, 1, K // 2, K - 1}):
            ans = np.zeros((len(rows), K), np.float32)
            js = [j for j in range(K) if j != i]
            for c0 in range(0, len(js), N):
                chunk = js[c0:c0 + N]
                V = torch.full((K, N), small, device=dev, dtype=torch.float32)
                cc = torch.arange(len(chunk), device=dev)
                V[i, cc] = big
                V[torch.tensor(chunk, device=dev), cc] = -big
                d = torch.matmul(ones, V).cpu().numpy()
                same &= bool((d == d[0:1]).all())
                ans[:, chunk] = d[rows, :len(chunk)]
            R["ans_%s_i%d" % (s, i)] = ans
        rng = np.random.default_rng(20261128 + M * 7 + N * 13 + K)
        A = rng.standard_normal((M, K), dtype=np.float32)
        B = rng.standard_normal((K, N), dtype=np.float32)
        At, Bt = torch.from_numpy(A).to(dev), torch.from_numpy(B).to(dev)
        D = torch.matmul(At, Bt).cpu().numpy()
        R["a_" + s] = A[rows].view(np.uint32)
        R["b_" + s] = np.ascontiguousarray(B[:, cols]).view(np.uint32)
        R["d_" + s] = np.ascontiguousarray(D[np.ix_(rows, cols)]).view(np.uint32)
        try:
            kn = kernel_names(torch, lambda: torch.matmul(At, Bt))
        except Exception as e:  # a clue, not the record
            kn = "profiler failed: %s" % e
        meta["shapes"][s] = {"rows_all_equal": same, "kernels": kn, "seconds": round(time.time() - t, 1)}
        print(s, json.dumps(meta["shapes"][s])[:300], flush=True)
        del ones, At, Bt
    meta["seconds"] = round(time.time() - t0, 1)
    save_record(out, "tf32_tiles", R, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
