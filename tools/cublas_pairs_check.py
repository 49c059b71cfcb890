# SPDX-License-Identifier: MIT
"""Check a table row against every recorded pair-probe answer of its shape, through `fpemu gemm`.

    python3 tools/cublas_pairs_check.py REC_DIR DTYPE MxNxK "TREE" [--fpemu bin/fpemu]

The pair questions of record_cublas.py (A all ones; in column c of B every element is `small`
except +big at row i and -big at row j_c; keys out_{dt}_{MxNxK}_i{i}, entry j) are rebuilt as
one row of A and K-1 columns of B per anchor i, and run as a slice of the M x N x K call:

    fpemu gemm --model h100 --afmt DT --a A.npy --b B.npy --algo cublas --call-shape 1xKxK
               --table ROW.txt --out D.npy

(the row is written for a 1 x K x K call, whose slices these are: the tree, not the lookup, is
what is checked; f16/bf16 answers are torch.mm(out_dtype=float32)'s, e4m3 _scaled_mm(use_fast_accum=False)'s,
so the row is written for d=f32, fast=0). Prints "pairs E/T" (answers equal bit for bit / all)
and exits 0 when all are equal, 1 otherwise. The GEMM path (fpemu_sumtree_gemm_codes) is the
one `--algo cublas` uses, so this checks what the table will compute; `fpemu gemm --pairs` fits
with the dot path, which the library keeps equal to it (tests/t_sumtree.c).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

SEL = {"f32": "a=f32 d=f32", "tf32": "a=tf32 d=f32", "f16": "a=f16 d=f32", "bf16": "a=bf16 d=f32",
       "e4m3": "a=e4m3 d=f32 fast=0"}


def codes(dt, v):
    """Element codes (or f32 values) of the exact powers of two v, as fpemu gemm reads them."""
    v = np.asarray(v, np.float32)
    if dt in ("f32", "tf32"):
        return v
    if dt == "f16":
        return v.astype(np.float16).view(np.uint16)
    if dt == "bf16":
        return (v.view(np.uint32) >> 16).astype(np.uint16)
    m, e = np.frexp(np.abs(v))  # e4m3, normal powers of two: (e - 1 + 7) << 3
    assert (m == 0.5).all()
    return (((e - 1 + 7) << 3) | np.where(v < 0, 0x80, 0)).astype(np.uint8)


def check(rec, dt, shape, tree, fpemu="bin/fpemu", chunk=None):
    z = np.load(os.path.join(rec, "cublas-%s.npz" % dt))
    keys = [k for k in z.files if re.fullmatch(r"out_%s_%s_i\d+" % (dt, shape), k)]
    if not keys:
        return None, None
    big = float(z["pair_big_" + dt][0]) if "pair_big_" + dt in z.files else 2.0 ** 15
    small = float(z["pair_small_" + dt][0]) if "pair_small_" + dt in z.files else 2.0 ** -12
    M, N, K = (int(x) for x in shape.split("x"))
    cb, cs, cn, one = codes(dt, [big, small, -big, 1.0])
    chunk = chunk or max(64, min(K, (64 << 20) // (K * 4)))
    eq = tot = 0
    with tempfile.TemporaryDirectory() as tmp:
        tab, pa, pb, pd = (os.path.join(tmp, x) for x in ("t.txt", "A.npy", "B.npy", "D.npy"))
        with open(tab, "w") as f:
            # the row under a shape wide enough for every column at once (the tree, not the lookup, is checked)
            f.write("fpemu_sumtree_table = 1\n%s m=1 n=%d k=%d status=pairprobe %s\n" % (SEL[dt], K, K, tree))
        np.save(pa, np.full((1, K), one, dtype=np.asarray(one).dtype))
        for key in keys:
            i = int(key.rsplit("_i", 1)[1])
            want = z[key].view(np.uint32)
            js = np.array([j for j in range(K) if j != i])
            for s in range(0, len(js), chunk):
                jc = js[s:s + chunk]
                B = np.full((K, len(jc)), cs, dtype=np.asarray(cs).dtype)
                B[i, :] = cb
                B[jc, np.arange(len(jc))] = cn
                np.save(pb, B)
                p = subprocess.run([fpemu, "gemm", "--model", "h100", "--afmt", dt, "--a", pa, "--b", pb, "--algo", "cublas",
                                    "--call-shape", "1x%dx%d" % (K, K), "--table", tab, "--out", pd], capture_output=True, text=True)
                if p.returncode:
                    raise RuntimeError("%s %s %s: %s" % (dt, shape, tree, p.stderr.strip()))
                got = np.load(pd).view(np.uint32)[0]
                eq += int((got == want[jc]).sum())
                tot += len(jc)
    return eq, tot


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rec")
    ap.add_argument("dtype", choices=sorted(SEL))
    ap.add_argument("shape")
    ap.add_argument("tree")
    ap.add_argument("--fpemu", default="bin/fpemu")
    args = ap.parse_args()
    eq, tot = check(args.rec, args.dtype, args.shape, args.tree, args.fpemu)
    if eq is None:
        sys.exit("cublas_pairs_check.py: %s/cublas-%s.npz: no out_%s_%s_i* arrays" % (args.rec, args.dtype, args.dtype, args.shape))
    print("pairs %d/%d" % (eq, tot))
    sys.exit(0 if eq == tot else 1)


if __name__ == "__main__":
    main()
