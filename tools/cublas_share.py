# SPDX-License-Identifier: MIT
"""How many recorded cuBLAS outputs `fpemu gemm --algo cublas` reproduces bit for bit.

    python3 tools/cublas_share.py REC_DIR [--fpemu bin/fpemu] [--table FILE] [--dtypes f32,tf32,...]
                                  [--shape MxNxK] [--per-shape] [--json OUT.json]

REC_DIR holds what gpu/torch/record_cublas.py wrote: cublas-{f32,tf32,f16,bf16,e4m3}.npz. For
every random case in them (keys A_{dt}_{shape}, B_{dt}_{shape}: the codes of the recorded rows
and columns; D_{dt}_{kind}_{shape}: the call's outputs there) it runs

    fpemu gemm --model h100 --afmt F [--bfmt e5m2] --a A.npy --b B.npy --algo cublas
               --call-shape MxNxK [--outfmt f16|bf16] [--fast-accum] [--table FILE] --out D.npy

(A and B as codes, '<u2' / '|u1'; f32 and tf32 as '<f4' values, which the f32 codes are) and
counts the outputs whose f32 bits equal the recording's (native f16/bf16 outputs are compared
as their f32 values, exactly). A shape the table does not list gets the plain model, as
`fpemu gemm` says on stderr; the count says how many outputs came from a table row and how
many from the plain model. Prints one line per dtype and output kind:

    dtype kind: EQUAL/TOTAL outputs (PCT %); from rows: e/t; plain model: e/t; calls all equal: c/n

--per-shape adds a line per call (shape, row line or "plain", equal/total). Needs NumPy.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

# kind in the recording -> (fpemu options, the recorded output's code dtype)
KINDS = {
    "f32": {"f32": ([], "u4")},
    "tf32": {"f32": ([], "u4")},
    "f16": {"f32out": ([], "u4"), "native": (["--outfmt", "f16"], "f2"), "red0": (["--outfmt", "f16", "--no-reduced-precision-reduction"], "f2")},
    "bf16": {"f32out": ([], "u4"), "native": (["--outfmt", "bf16"], "bf2"), "red0": (["--outfmt", "bf16", "--no-reduced-precision-reduction"], "bf2")},
    "e4m3": {"fast0": ([], "u4"), "fast1": (["--fast-accum"], "u4"), "bf16out": (["--outfmt", "bf16"], "bf2")},
}


def as_f32_bits(codes, how):
    """The recorded outputs as f32 bit patterns (uint32)."""
    c = np.asarray(codes)
    if how == "u4":
        return c.astype(np.uint32)
    if how == "f2":
        return c.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    return c.astype(np.uint32) << 16  # bf16: the top half of an f32


def one_call(job):
    fpemu, table, tmp, dt, bfmt, kind, shape, A, B, D = job
    opts, how = KINDS[dt][kind]
    tag = "%s_%s_%s_%s" % (dt, bfmt or "", kind, shape)
    pa, pb, pd = (os.path.join(tmp, tag + s) for s in ("_A.npy", "_B.npy", "_D.npy"))
    if dt in ("f32", "tf32"):
        np.save(pa, np.ascontiguousarray(A).view(np.float32)), np.save(pb, np.ascontiguousarray(B).view(np.float32))
    else:
        np.save(pa, np.ascontiguousarray(A)), np.save(pb, np.ascontiguousarray(B))
    cmd = [fpemu, "gemm", "--model", "h100", "--afmt", dt, "--a", pa, "--b", pb, "--algo", "cublas",
           "--call-shape", shape, "--out", pd] + opts
    if bfmt:
        cmd += ["--bfmt", bfmt]
    if table:
        cmd += ["--table", table]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return tag, dt, kind, shape, None, 0, D.size, p.stderr.strip()
    got = np.load(pd).view(np.uint32)
    want = as_f32_bits(D, how)
    m = re.search(r"line (\d+) \(checked: (\w+)\)", p.stderr)
    src = "line %s %s" % m.groups() if m else "plain"
    return tag, dt, kind, shape, src, int((got == want).sum()), want.size, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rec")
    ap.add_argument("--fpemu", default="bin/fpemu")
    ap.add_argument("--table", default=None)
    ap.add_argument("--dtypes", default="f32,tf32,f16,bf16,e4m3")
    ap.add_argument("--shape", default=None, help="only this MxNxK")
    ap.add_argument("--per-shape", action="store_true")
    ap.add_argument("--json", default=None, help="write every call's result here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    res = []
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for dt in args.dtypes.split(","):
            path = os.path.join(args.rec, "cublas-%s.npz" % dt)
            if not os.path.exists(path):
                sys.exit("cublas_share.py: %s: no such file (expected record_cublas.py's cublas-%s.npz)" % (path, dt))
            z = np.load(path)
            for key in z.files:
                m = re.fullmatch(r"D_(\w+?)_(\w+)_(\d+x\d+x\d+)", key)
                if not m:
                    continue
                ddt, kind, shape = m.groups()
                if args.shape and shape != args.shape:
                    continue
                if ddt == dt:
                    jobs.append((args.fpemu, args.table, tmp, dt, None, kind, shape,
                                 z["A_%s_%s" % (dt, shape)], z["B_%s_%s" % (dt, shape)], z[key]))
                elif ddt == "e4m3xe5m2" and ("B_e5m2_" + shape) in z.files:
                    jobs.append((args.fpemu, args.table, tmp, "e4m3", "e5m2", kind, shape,
                                 z["A_e4m3_" + shape], z["B_e5m2_" + shape], z[key]))
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            res = list(ex.map(one_call, jobs))
    agg = {}
    for tag, dt, kind, shape, src, eq, tot, err in res:
        name = "%s%s %s" % (dt, "xe5m2" if "_e5m2_" in tag else "", kind)
        a = agg.setdefault(name, {"eq": 0, "tot": 0, "row": [0, 0], "plain": [0, 0], "calls": [0, 0], "errors": 0})
        a["tot"] += tot
        a["calls"][1] += 1
        if src is None:
            a["errors"] += 1
            print("error: %s %s: %s" % (name, shape, err), file=sys.stderr)
            continue
        a["eq"] += eq
        a["calls"][0] += eq == tot
        w = a["plain"] if src == "plain" else a["row"]
        w[0] += eq
        w[1] += tot
        if args.per_shape:
            print("  %-14s %-16s %-20s %d/%d" % (name, shape, src, eq, tot))
    teq = ttot = 0
    for name, a in agg.items():
        teq += a["eq"]
        ttot += a["tot"]
        print("%-14s: %5d/%-5d outputs (%5.1f %%); from rows: %d/%d; plain model: %d/%d; calls all equal: %d/%d%s" % (
            name, a["eq"], a["tot"], 100.0 * a["eq"] / max(a["tot"], 1), a["row"][0], a["row"][1], a["plain"][0],
            a["plain"][1], a["calls"][0], a["calls"][1], "; errors: %d" % a["errors"] if a["errors"] else ""))
    print("all           : %5d/%-5d outputs (%5.1f %%)" % (teq, ttot, 100.0 * teq / max(ttot, 1)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dict(zip(("tag", "dtype", "kind", "shape", "source", "equal", "total", "error"), r)) for r in res], f, indent=0)


if __name__ == "__main__":
    main()
