# SPDX-License-Identifier: MIT
"""Record what PyTorch's GEMMs (cuBLAS/cuBLASLt) return on a CUDA GPU, for the summation-tree
tables of `fpemu gemm --algo cublas` (docs/cublas.md). Not run in this repository's tests: it
needs a GPU. Run from the repository root on a lent machine:

    OUT=/path/to/out python3 gpu/torch/record_cublas.py [--grid small|full] [--dtypes f16,bf16,...]
                                                       [--budget-s 600] [--rows 4]

For a grid of shapes (M, N in 16..1024 with odd sizes, K in 16..16384, the shapes where cuBLAS
splits K among them) and the dtypes f32 (TF32 off), tf32 (allow_tf32), f16, bf16 (PyTorch's
default allow_*_reduced_precision_reduction, and off) and e4m3 (torch._scaled_mm, scales 1,
use_fast_accum False and True, f32 and bf16 outputs; e4m3 x e5m2 where torch allows it), it
writes per dtype and shape:

1. pair-probe answers (the probe's questions, as pairprobe.py asked them): A all ones; in
   column c of B every element is `small` except +big at row i and -big at row j_c; the output
   counts the small terms that survive. Anchors i in {0, 1, 37, K/2, K-1}, every j. Keys
   out_{dtype}_{M}x{N}x{K}_i{i} (f32, length K, entry j), and pair_big_{dtype},
   pair_small_{dtype} (the magnitudes: 2^15 and 2^-12, as pairprobe.py; 2^8 and 2^-6 for
   e4m3, whose range is narrower). `fpemu gemm --pairs FILE` reads them.
2. random cases: A (M x K) and B (K x N) drawn N(0, 1) in f32 with a seed per shape, converted
   on the GPU; the call's outputs at rows R = {0, 1, M/2, M-1} and columns C = {0, 1, N/2, N-1}
   (--rows 4; the whole output of a call depends only on its shape, so a slice replays with
   `fpemu gemm --call-shape MxNxK`). Keys A_{dtype}_{shape} (the codes of rows R, K wide),
   B_{dtype}_{shape} (the codes of columns C), D_{dtype}_{out}_{shape} with out in f32out
   (mm out_dtype=float32), native (matmul; f16/bf16), red0 (matmul with reduced-precision
   reduction off), fast0, fast1, bf16out (fp8), f32 (f32, tf32).

Files: OUT/cublas-{dtype}.npz (np.savez_compressed) and OUT/env.json (torch, CUDA, cuBLAS,
driver, device, flags, grid, what was skipped and why, seconds per part; with --kernels, the
kernels torch.profiler saw for each random call, "dtype kind MxNxK": [names]). The budget stops the
grid early (the last shape finished is recorded), so a short lease still gives a usable file;
each dtype gets an equal share of what is left when it starts.

--linear BxOUTxIN,... records instead the three GEMMs of a Linear layer as autograd runs them,
for the shapes of a training run (the replays of docs/replay.md): forward F.linear(x, W, b)
(cuBLASLt's bias epilogue; M=B, N=OUT, K=IN), the weight gradient torch.mm(dY.t(), X) (M=OUT,
N=IN, K=B) and the input gradient torch.mm(dY, W) (M=B, N=IN, K=OUT), with the operands laid
out as autograd has them (W is OUT x IN and used transposed). Per form, the same pair probes
and random cases, in OUT/cublas-linear-{form}-{dtype}.npz with the keys above (M x N x K of
the form), so `fpemu gemm --pairs` reads them unchanged. dtypes f32, f16 and bf16 (autocast's).

Needs PyTorch with CUDA and NumPy; no network.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

SMALL_GRID = {
    "mn": [(16, 16), (33, 65), (64, 64), (64, 128), (127, 255), (256, 256), (511, 1024), (1024, 1024)],
    "k": [16, 48, 130, 512, 1000, 4096, 8192, 16384],
}
FULL_GRID = {
    "mn": [(m, n) for m in (16, 33, 64, 127, 256, 511, 1024) for n in (16, 65, 128, 255, 512, 1024)],
    "k": [16, 32, 48, 64, 100, 128, 130, 256, 512, 1000, 1024, 2048, 3000, 4096, 6144, 8192, 12288, 16384],
}
DTYPES = ("f32", "tf32", "f16", "bf16", "e4m3")


def env_info(torch, dev):
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "argv": sys.argv,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if dev == "cpu":
        info["device"] = "cpu (--device cpu: the CPU BLAS's answers, a dry run of the recorder, not cuBLAS)"
        return info
    info["device"] = torch.cuda.get_device_name(0)
    info["capability"] = list(torch.cuda.get_device_capability(0))
    try:
        info["cublas"] = torch._C._cuda_getCompiledVersion()
    except Exception as e:  # not every build has it
        info["cublas"] = "unknown: %s" % e
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        info["nvidia_smi"] = out.stdout.strip()
    except Exception as e:
        info["nvidia_smi"] = "unavailable: %s" % e
    return info


def kernel_names(torch, fn):
    """The GPU kernels torch.profiler sees while fn() runs, in order, each once (an empty list
    on the CPU)."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=acts) as prof:
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    names = []
    for e in prof.events():
        dt = getattr(e, "device_type", None)
        if dt is not None and "CUDA" in str(dt) and e.name not in names:
            names.append(e.name)
    return names


def save_record(out, stem, arrays, meta):
    """OUT/STEM.npz (np.savez_compressed, written to STEM.npz.part and renamed, so a killed run
    leaves no half file) and OUT/STEM.json (meta): what the probes in gpu/probes/ bring back."""
    tmp = os.path.join(out, stem + ".npz.part")
    with open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
    os.replace(tmp, os.path.join(out, stem + ".npz"))
    with open(os.path.join(out, stem + ".json"), "w") as f:
        json.dump(meta, f, indent=1)


def codes(t, torch):
    """The bit patterns of a tensor as a NumPy array (uint8 / uint16 / uint32)."""
    if t.dtype in (torch.float16, torch.bfloat16):
        return t.view(torch.int16).cpu().numpy().view(np.uint16)
    if t.dtype == torch.float32:
        return t.view(torch.int32).cpu().numpy().view(np.uint32)
    return t.view(torch.uint8).cpu().numpy()


class Recorder:
    def __init__(self, torch, out, rows, budget, dev="cuda", kernels=False):
        self.torch, self.out, self.nrows, self.budget = torch, out, rows, budget
        self.t0 = time.time()
        self.dev = dev
        self.kernels = {} if kernels else None  # --kernels: "dtype kind MxNxK" -> kernel names

    def sync(self):
        if self.dev == "cuda":
            self.torch.cuda.synchronize()

    def left(self):
        return self.budget - (time.time() - self.t0)

    def flags(self, dname, red=True):
        tb = self.torch.backends.cuda.matmul
        tb.allow_tf32 = dname == "tf32"
        tb.allow_fp16_reduced_precision_reduction = red
        tb.allow_bf16_reduced_precision_reduction = red

    def call(self, dname, a, b, kind):
        """One GEMM as PyTorch users call it; returns the output tensor."""
        torch = self.torch
        if dname in ("f32", "tf32"):
            return torch.matmul(a, b)
        if dname in ("f16", "bf16"):
            if kind == "f32out":
                return torch.mm(a, b, out_dtype=torch.float32)
            return torch.matmul(a, b)
        one = torch.tensor(1.0, device=self.dev)
        bcol = b.t().contiguous().t()
        if kind == "bf16out":
            return torch._scaled_mm(a, bcol, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        return torch._scaled_mm(a, bcol, scale_a=one, scale_b=one, out_dtype=torch.float32,
                                use_fast_accum=(kind == "fast1"))

    def tdtype(self, dname):
        torch = self.torch
        return {"f16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn}.get(dname, torch.float32)

    def pair_answers(self, what, dname, M, N, K, R, gemm):
        """Pair-probe answers of one M x N x K call: gemm(V) runs it with V (K x N, f32) as the
        operand that carries the pairs and the other all ones; output column c answers pair
        (i, j_c): in V's column c every element is `small` except +big at row i and -big at j_c."""
        torch = self.torch
        big, small = (2.0 ** 8, 2.0 ** -6) if dname == "e4m3" else (2.0 ** 15, 2.0 ** -12)
        R["pair_big_" + dname] = np.array([big], np.float32)
        R["pair_small_" + dname] = np.array([small], np.float32)
        self.flags(dname)
        for i in sorted({0, 1, 37 % K, K // 2, K - 1}):
            res = np.zeros(K, np.float32)
            js = [j for j in range(K) if j != i]
            for s in range(0, len(js), N):
                chunk = js[s:s + N]
                V = torch.full((K, N), small, device=self.dev, dtype=torch.float32)
                cols = torch.arange(len(chunk), device=self.dev)
                V[i, cols] = big
                V[torch.tensor(chunk, device=self.dev), cols] = -big
                d = gemm(V).float().cpu().numpy()
                if not (d == d[0:1]).all():
                    raise RuntimeError("%s pair probe %s %dx%dx%d i=%d: rows differ" % (what, dname, M, N, K, i))
                res[chunk] = d[0, :len(chunk)]
            R["out_%s_%dx%dx%d_i%d" % (dname, M, N, K, i)] = res

    def pairs(self, dname, M, N, K, R):
        """Pair-probe answers of one shape of the grid: A all ones, B carries the pairs."""
        dt = self.tdtype(dname)
        A = self.torch.ones(M, K, device=self.dev, dtype=self.torch.float32).to(dt)
        kind = "f32out" if dname in ("f16", "bf16") else "fast0" if dname == "e4m3" else "f32"
        self.pair_answers("grid", dname, M, N, K, R, lambda V: self.call(dname, A, V.to(dt), kind))

    def linear_call(self, form, dname, P, Q, bias):
        """One of the Linear layer's GEMMs: fwd F.linear(P, Q, bias) (Q is OUT x IN), wgrad
        mm(P.t(), Q) (P is dY, B x OUT; Q is X, B x IN), dgrad mm(P, Q) (P is dY, Q is W)."""
        torch = self.torch
        F = torch.nn.functional
        if form == "fwd":
            return F.linear(P, Q, bias)
        if form == "wgrad":
            return torch.mm(P.t(), Q)
        return torch.mm(P, Q)

    def linear_pairs(self, form, dname, Bt, OUT, IN, R):
        """Pair probes of one Linear GEMM form, the pairs in the operand laid out as autograd has it:
        fwd x (B x IN) ones, W (OUT x IN) = V^T, bias 0 (the same epilogue); wgrad dY (B x OUT) ones,
        X (B x IN) = V; dgrad dY (B x OUT) ones, W (OUT x IN) = V."""
        torch = self.torch
        dt = self.tdtype(dname)
        M, N, K = {"fwd": (Bt, OUT, IN), "wgrad": (OUT, IN, Bt), "dgrad": (Bt, IN, OUT)}[form]
        ones = torch.ones((K, M) if form == "wgrad" else (M, K), device=self.dev, dtype=torch.float32).to(dt)
        bias = torch.zeros(N, device=self.dev, dtype=torch.float32).to(dt) if form == "fwd" else None

        def gemm(V):
            Q = V.t().contiguous().to(dt) if form == "fwd" else V.contiguous().to(dt)
            return self.linear_call(form, dname, ones, Q, bias)

        self.pair_answers("linear " + form, dname, M, N, K, R, gemm)

    def linear_random(self, form, dname, Bt, OUT, IN, R, seed):
        """A random case of one Linear GEMM form: the whole operands' codes and the output's."""
        torch = self.torch
        rng = np.random.default_rng(seed)
        dt = self.tdtype(dname)
        self.flags(dname)
        M, N, K = {"fwd": (Bt, OUT, IN), "wgrad": (OUT, IN, Bt), "dgrad": (Bt, IN, OUT)}[form]
        shape = "%dx%dx%d" % (M, N, K)
        bias = None
        if form == "fwd":
            P = torch.from_numpy(rng.standard_normal((Bt, IN)).astype(np.float32)).to(self.dev).to(dt)
            Q = torch.from_numpy(rng.standard_normal((OUT, IN)).astype(np.float32) / 8).to(self.dev).to(dt)
            bias = torch.from_numpy(rng.standard_normal(OUT).astype(np.float32) / 8).to(self.dev).to(dt)
            R["bias_%s_%s" % (dname, shape)] = codes(bias, torch)
            a, b = P, Q.t()
        elif form == "wgrad":
            P = torch.from_numpy(rng.standard_normal((Bt, OUT)).astype(np.float32)).to(self.dev).to(dt)
            Q = torch.from_numpy(rng.standard_normal((Bt, IN)).astype(np.float32)).to(self.dev).to(dt)
            a, b = P.t(), Q
        else:
            P = torch.from_numpy(rng.standard_normal((Bt, OUT)).astype(np.float32)).to(self.dev).to(dt)
            Q = torch.from_numpy(rng.standard_normal((OUT, IN)).astype(np.float32) / 8).to(self.dev).to(dt)
            a, b = P, Q
        d = self.linear_call(form, dname, P, Q, bias)
        self.sync()
        R["A_%s_%s" % (dname, shape)] = codes(a.contiguous(), torch)  # M x K
        R["B_%s_%s" % (dname, shape)] = codes(b.contiguous(), torch)  # K x N
        R["D_%s_%s_%s" % (dname, "native", shape)] = codes(d.contiguous(), torch)

    def random_case(self, dname, M, N, K, R, seed):
        torch = self.torch
        rng = np.random.default_rng(seed)
        A32 = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32)).to(self.dev)
        B32 = torch.from_numpy(rng.standard_normal((K, N)).astype(np.float32)).to(self.dev)
        dt = self.tdtype(dname)
        a, b = A32.to(dt), B32.to(dt)
        rows = sorted({0, 1, M // 2, M - 1})[: self.nrows]
        cols = sorted({0, 1, N // 2, N - 1})[: self.nrows]
        shape = "%dx%dx%d" % (M, N, K)
        R["A_%s_%s" % (dname, shape)] = codes(a[rows].contiguous(), torch)
        R["B_%s_%s" % (dname, shape)] = codes(b[:, cols].contiguous(), torch)
        R["rows_%s_%s" % (dname, shape)] = np.array(rows, np.int32)
        R["cols_%s_%s" % (dname, shape)] = np.array(cols, np.int32)
        kinds = {"f32": ["f32"], "tf32": ["f32"], "f16": ["f32out", "native", "red0"], "bf16": ["f32out", "native", "red0"],
                 "e4m3": ["fast0", "fast1", "bf16out"]}[dname]
        for kind in kinds:
            self.flags(dname, red=(kind != "red0"))
            d = self.call(dname, a, b, "native" if kind == "red0" else kind)
            self.sync()
            R["D_%s_%s_%s" % (dname, kind, shape)] = codes(d[rows][:, cols].contiguous(), torch)
            if self.kernels is not None:
                try:
                    self.kernels["%s %s %s" % (dname, kind, shape)] = kernel_names(
                        torch, lambda: self.call(dname, a, b, "native" if kind == "red0" else kind))
                except Exception as e:  # a clue, not the record
                    self.kernels["%s %s %s" % (dname, kind, shape)] = "profiler failed: %s" % str(e)[:200]
        if dname == "e4m3":  # mixed e4m3 x e5m2, where torch allows it
            try:
                b5 = B32.to(torch.float8_e5m2)
                d = self.call("e4m3", a, b5, "fast0")
                R["B_e5m2_%s" % shape] = codes(b5[:, cols].contiguous(), torch)
                R["D_e4m3xe5m2_fast0_%s" % shape] = codes(d[rows][:, cols].contiguous(), torch)
            except Exception as e:
                R.setdefault("_notes", []).append("e4m3 x e5m2 %s: %s" % (shape, str(e)[:200]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", choices=("small", "full"), default="small")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--budget-s", type=float, default=600.0, help="stop starting new shapes after this many seconds")
    ap.add_argument("--rows", type=int, default=4, help="rows and columns of each random output kept")
    ap.add_argument("--no-pairs", action="store_true", help="random cases only")
    ap.add_argument("--linear", default="", help="BxOUTxIN,...: a Linear layer's three GEMMs at these shapes instead of the grid")
    ap.add_argument("--kernels", action="store_true",
                    help="also name the kernels each grid call ran (torch.profiler; env.json's kernels)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: a dry run on the CPU (its BLAS's answers, not cuBLAS's), to test the recorder without a GPU")
    args = ap.parse_args()
    linear = []
    for w in filter(None, args.linear.split(",")):
        try:
            b, o, i = (int(v) for v in w.lower().split("x"))
            if min(b, o, i) < 1:
                raise ValueError
        except ValueError:
            raise SystemExit("record_cublas.py: --linear %s: expected BxOUTxIN, positive whole numbers" % w)
        linear.append((b, o, i))
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("record_cublas.py: no CUDA device (--device cpu for a dry run)")
    out = os.environ.get("OUT", "out")
    os.makedirs(out, exist_ok=True)
    grid = SMALL_GRID if args.grid == "small" else FULL_GRID
    env = env_info(torch, args.device)
    env.update({"grid": grid, "dtypes": args.dtypes, "parts": {}, "skipped": []})
    rec = Recorder(torch, out, args.rows, args.budget_s, args.device, kernels=args.kernels)
    if linear:
        env.update({"linear": args.linear, "grid": None})
        dnames = [d for d in args.dtypes.split(",") if d in ("f32", "f16", "bf16")]
        forms = ("fwd", "wgrad", "dgrad")
        for n, dname in enumerate(dnames):
            share = rec.left() / (len(dnames) - n)
            t = time.time()
            for form in forms:
                R, done = {}, []
                for (Bt, OUT, IN) in linear:
                    if time.time() - t > share:
                        env["skipped"].append("%s %s %dx%dx%d: budget spent" % (form, dname, Bt, OUT, IN))
                        continue
                    try:
                        rec.linear_random(form, dname, Bt, OUT, IN, R, seed=(Bt * 1000003 + OUT * 1009 + IN) & 0x7FFFFFFF)
                        if not args.no_pairs:
                            rec.linear_pairs(form, dname, Bt, OUT, IN, R)
                        done.append("%dx%dx%d" % (Bt, OUT, IN))
                    except Exception as e:
                        env["skipped"].append("%s %s %dx%dx%d: %s" % (form, dname, Bt, OUT, IN, str(e)[:300]))
                np.savez_compressed(os.path.join(out, "cublas-linear-%s-%s.npz" % (form, dname)), **R)
                env["parts"]["linear-%s-%s" % (form, dname)] = {"shapes": done, "s": round(time.time() - t, 1)}
                print("linear", form, dname, len(done), "shapes", flush=True)
        torch.backends.cuda.matmul.allow_tf32 = False
        with open(os.path.join(out, "env.json"), "w") as f:
            json.dump(env, f, indent=1)
        return
    dlist = args.dtypes.split(",")
    for n, dname in enumerate(dlist):
        share_end = time.time() + rec.left() / (len(dlist) - n)
        if dname not in DTYPES:
            raise SystemExit("unknown dtype %s (expected %s)" % (dname, ", ".join(DTYPES)))
        R, t = {}, time.time()
        done = []
        for (M, N) in grid["mn"]:
            for K in grid["k"]:
                if rec.left() <= 0 or time.time() > share_end:
                    env["skipped"].append("%s %dx%dx%d: budget spent" % (dname, M, N, K))
                    continue
                if dname == "e4m3" and (K % 16 or M % 16 or N % 16):
                    env["skipped"].append("%s %dx%dx%d: _scaled_mm needs multiples of 16" % (dname, M, N, K))
                    continue
                try:
                    rec.random_case(dname, M, N, K, R, seed=(M * 1000003 + N * 1009 + K) & 0x7FFFFFFF)
                    if not args.no_pairs:
                        rec.pairs(dname, M, N, K, R)
                    done.append("%dx%dx%d" % (M, N, K))
                except Exception as e:
                    env["skipped"].append("%s %dx%dx%d: %s" % (dname, M, N, K, str(e)[:300]))
        notes = R.pop("_notes", [])
        np.savez_compressed(os.path.join(out, "cublas-%s.npz" % dname), **R)
        env["parts"][dname] = {"shapes": done, "s": round(time.time() - t, 1), "notes": notes}
        print(dname, len(done), "shapes", round(time.time() - t, 1), "s", flush=True)
    if rec.kernels is not None:
        env["kernels"] = rec.kernels
    torch.backends.cuda.matmul.allow_tf32 = False
    with open(os.path.join(out, "env.json"), "w") as f:
        json.dump(env, f, indent=1)


if __name__ == "__main__":
    main()
