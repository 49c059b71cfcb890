#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Train your own PyTorch model under emulated low precision with fpemu.torch.

A 4-layer transformer classifies the 8x8 digits (each image a sequence of 8
rows of 8 pixels), trained four times from the same initial weights and
batch order: in fp32 (PyTorch's own Linear layers: the baseline), and with
every Linear layer's three GEMMs through libfpemu under bf16-mixed,
fp8-current (torchao tensorwise on an H100's tensor cores) and mxfp8 (OCP MX
on a B200's). Each run writes a run folder (metrics.csv, tensors.csv,
eval.csv, summary.json); `fpemu report` then plots them against fp32.

    pip install ./python torch          # or: make test-torch (a venv with both)
    python examples/torch_bridge.py --out runs-torch
    fpemu report --out report-torch runs-torch/32-true runs-torch/bf16-mixed \\
        runs-torch/fp8-current runs-torch/mxfp8

Copy it and change the model, the data and the policies: convert() swaps
every nn.Linear, the rest of the loop is plain PyTorch (docs/torch.md).
"""
import argparse
import gzip
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if os.path.isdir(os.path.join(ROOT, "python", "fpemu")):  # run from a clone without pip install
    sys.path.insert(0, os.path.join(ROOT, "python"))
import fpemu.torch as ft  # noqa: E402


# ---- the model: a small pre-LN transformer, every projection an nn.Linear -------------------------


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v)  # attention's matmuls stay PyTorch's, as in torchao/TE
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class DigitsTransformer(nn.Module):
    """8 tokens (the image rows) of 8 pixels -> 10 classes."""

    def __init__(self, d=64, heads=4, ff=128, depth=4):
        super().__init__()
        self.embed = nn.Linear(8, d)
        self.pos = nn.Parameter(torch.zeros(8, d))
        self.blocks = nn.ModuleList(Block(d, heads, ff) for _ in range(depth))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, 10)

    def forward(self, img):
        x = self.embed(img.view(-1, 8, 8)) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x).mean(dim=1))


# ---- data: the digits (experiments/data/digits.csv.gz, 1797 rows; 1500 train, 297 evaluate) ----------


def load_digits(path):
    with gzip.open(path, "rt") as f:
        a = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x, y = torch.from_numpy(a[:, :64] / 16), torch.from_numpy(a[:, 64].astype(np.int64))
    return (x[:1500], y[:1500]), (x[1500:], y[1500:])


def train(policy, out, data, steps, batch, seed, lr, eval_every, log=print):
    (xt, yt), (xe, ye) = data
    torch.manual_seed(seed)
    model = DigitsTransformer()                       # the same initial weights for every policy
    model = ft.convert(model, policy=policy)          # 32-true keeps PyTorch's Linear: the baseline
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    order = torch.Generator().manual_seed(seed)       # the same batches for every policy
    logger = ft.RunLogger(out, model=model, name="digits-transformer", seed=seed)

    def evaluate():
        model.eval()
        with torch.no_grad():
            out = model(xe)
            loss, acc = F.cross_entropy(out, ye).item(), (out.argmax(1) == ye).float().mean().item()
        model.train()
        return loss, acc

    logger.log_eval(*evaluate())
    t0 = time.time()
    for step in range(1, steps + 1):
        idx = torch.randint(0, len(xt), (batch,), generator=order)
        loss = F.cross_entropy(model(xt[idx]), yt[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = ft.grad_norm(model.parameters())
        opt.step()
        logger.log_step(loss.item(), grad_norm=gn, lr=lr)
        if step % eval_every == 0 or step == steps:
            logger.log_eval(*evaluate())
    logger.close()
    el, ea = logger.eval_last
    log("%-12s %4d steps in %5.1f s: train loss %.4f, eval loss %.4f, eval accuracy %.3f  -> %s"
        % (policy, steps, time.time() - t0, loss.item(), el, ea, out))


def find_fpemu():
    for p in (os.environ.get("FPEMU_BIN"), shutil.which("fpemu"), os.path.join(ROOT, "bin", "fpemu")):
        if p and os.access(p, os.X_OK):
            return p
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs-torch", help="folder of the run folders (default runs-torch)")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--policies", default="bf16-mixed,fp8-current,mxfp8",
                    help="comma-separated fpemu policies besides the 32-true baseline")
    ap.add_argument("--data", default=os.environ.get("FPEMU_DATA") or os.path.join(ROOT, "experiments", "data", "digits.csv.gz"))
    ap.add_argument("--report", default=None, help="write `fpemu report` here (default OUT/report)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)  # a small model: one thread each for PyTorch and the library GEMMs is fastest
    data = load_digits(a.data)
    os.makedirs(a.out, exist_ok=True)
    runs = []
    for policy in ["32-true"] + [p for p in a.policies.split(",") if p]:
        runs.append(os.path.join(a.out, policy))
        train(policy, runs[-1], data, a.steps, a.batch, a.seed, a.lr, a.eval_every)
    fpemu = find_fpemu()
    if fpemu is None:
        print("fpemu (the program) not found: build it (make) and run: fpemu report --out REPORT " + " ".join(runs))
        return 0
    report = a.report or os.path.join(a.out, "report")
    env = dict(os.environ)
    env.setdefault("FPEMU_ROOT", ROOT)  # the report's gnuplot scripts
    r = subprocess.run([fpemu, "report", "--out", report] + runs, env=env, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0 and "unknown model" in r.stderr:
        print("this fpemu report reads only run folders of the models fpemu train has (docs/torch.md, 'Limits'); "
              "fpemu drift reads these: fpemu drift %s %s" % (runs[0], runs[-1]), file=sys.stderr)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
