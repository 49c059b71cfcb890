#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An emulated Linear against PyTorch's own f32 CPU Linear, side by side.

    python bench/torch_linear.py [--policy fp8-current] [--pairs 15] [--m 256 --k 1024 --n 1024]

One forward and one backward (grad_input, grad_weight, grad_bias) of a
Linear(K, N) on a batch of M rows: A is torch.nn.Linear in f32, B the same
layer converted by fpemu.torch (three library GEMMs under the policy, its
casts and telemetry). The two run interleaved, A B A B ..., after a warm-up
of each, so that load on the machine falls on both alike. Printed per side:
the median and the minimum over the pairs of the wall time, of the calling
thread's CPU time (time.thread_time) and of the process's CPU time
(time.process_time: every thread, the library's GEMM threads and PyTorch's
included), and the ratios B / A. Both sides use the machine's CPUs: PyTorch
its intra-op threads (torch.get_num_threads()), the library its GEMM
threads (fpemu.torch's threads=0: every CPU).

--profile adds where B's time goes: each library GEMM and cast, timed in
the bridge (cProfile over --pairs steps).

--baseline copies makes A the same emulated layer with the bridge's
transposed copies (as from a library without the gemmer's trans_a and
trans_b: PyTorch transposes W and dy, the library reads them as given)
instead of PyTorch's Linear: what handing transposed operands to the
library saves, measured the same way."""
import argparse
import os
import platform
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if os.path.isdir(os.path.join(ROOT, "python", "fpemu")):
    sys.path.insert(0, os.path.join(ROOT, "python"))
import fpemu  # noqa: E402
import fpemu.torch as ft  # noqa: E402


def clocks():
    return time.perf_counter(), time.thread_time(), time.process_time()


def step(layer, x, gy):
    layer.weight.grad = layer.bias.grad = None
    x.grad = None
    y = layer(x)
    y.backward(gy)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="fp8-current")
    ap.add_argument("--mma", default=None)
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--threads", type=int, default=0, help="library GEMM threads (0: every CPU)")
    ap.add_argument("--torch-threads", type=int, default=0, help="PyTorch intra-op threads (0: its default)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--baseline", choices=("torch", "copies"), default="torch",
                    help="A: PyTorch's f32 Linear, or the emulated layer with transposed copies")
    a = ap.parse_args(argv)
    if a.torch_threads:
        torch.set_num_threads(a.torch_threads)
    torch.manual_seed(0)
    ref = torch.nn.Linear(a.k, a.n)
    emu = torch.nn.Linear(a.k, a.n)
    emu.load_state_dict(ref.state_dict())
    emu = ft.convert(emu, policy=a.policy, mma=a.mma, threads=a.threads)
    x = torch.randn(a.m, a.k, requires_grad=True)
    gy = torch.randn(a.m, a.n)
    trans = fpemu._core._gemmer_trans  # the library's answer (cached)
    copies = a.baseline == "copies"

    def run_side(side):
        fpemu._core._gemmer_trans = (lambda: False) if side == "A" and copies else trans
        step(emu if side == "B" or copies else ref, x, gy)
        fpemu._core._gemmer_trans = trans

    for side in ("A", "B", "A", "B"):  # warm-up: handles, caches, page faults
        run_side(side)
    ft.telemetry(emu).clear()
    t = {"A": [], "B": []}
    for p in range(a.pairs):
        for side in (("A", "B") if p % 2 == 0 else ("B", "A")):  # the order alternating
            c0 = clocks()
            run_side(side)
            c1 = clocks()
            t[side].append(tuple(e - s for s, e in zip(c0, c1)))
        ft.telemetry(emu).clear()
    print("fpemu.torch Linear(%d, %d) on %d rows, forward + backward, %d interleaved pairs" % (a.k, a.n, a.m, a.pairs))
    print("machine: %s, %d CPUs (os.cpu_count), load average %s" % (
        cpu_name(), os.cpu_count() or 0, " ".join("%.2f" % v for v in os.getloadavg())))
    print("torch %s (%d intra-op threads), fpemu %s (%s), library GEMM threads %s" % (
        torch.__version__, torch.get_num_threads(), fpemu.version(), fpemu.library_path(), a.threads or "every CPU"))
    print("A: %s    B: fpemu.torch %s (mma %s)" % (
        "fpemu.torch, transposed copies" if copies else "torch.nn.Linear f32", a.policy, ft.settings_of(emu)[1]["mma"]))
    print("%-22s %12s %12s %12s %12s %9s %9s" % ("seconds", "A median", "A min", "B median", "B min", "B/A med", "B/A min"))
    for i, what in enumerate(("wall", "thread CPU", "process CPU")):
        av = [r[i] for r in t["A"]]
        bv = [r[i] for r in t["B"]]
        am, bm = statistics.median(av), statistics.median(bv)
        print("%-22s %12.4f %12.4f %12.4f %12.4f %9.2f %9.2f" % (
            what, am, min(av), bm, min(bv), bm / am if am else float("nan"), min(bv) / min(av) if min(av) else float("nan")))
    if a.profile:
        import cProfile
        import pstats
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(a.pairs):
            step(emu, x, gy)
        pr.disable()
        print("\nwhere B's time goes (cProfile, %d steps, by own time):" % a.pairs)
        pstats.Stats(pr, stream=sys.stdout).sort_stats("tottime").print_stats(12)
    return 0


if __name__ == "__main__":
    sys.exit(main())
