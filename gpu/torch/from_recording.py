# SPDX-License-Identifier: MIT
"""Convert a recording made by the earlier recipe (a folder holding rest.npz and
traces.json, as real-runs/h200-2026-11-26/record.py writes them) into the files
`fpemu train --init/--order` and `fpemu compare` read (gpu/torch/README.md):

    OUT/init-MODEL.npz        the initial state, one KEY.npy member per state_dict key
    OUT/init-MODEL/KEY.npy    the same as a folder (--folder MODEL, repeatable)
    OUT/order-MODEL.npy       the sample indices (int32)
    OUT/MODEL-POLICY.csv      the trace of MODEL/POLICY/rep0 (fpemu-trace 1)

Python's standard library only (no NumPy): the .npy members are copied byte
for byte, and the floats of traces.json are written with repr, so they read
back bit for bit.

    python3 gpu/torch/from_recording.py RECORDING_DIR OUT_DIR [--folder mlp-digits] [--meta KEY=VALUE ...]
"""
import argparse
import json
import os
import zipfile

# record.py's runs: model -> (steps, lr, input scale); AdamW(foreach=False) otherwise PyTorch's defaults
RUNS = {"mlp-digits": (300, 3e-3, "pixels/16"), "deep-mlp": (200, 1e-3, "pixels*256")}
POLICIES = ("32-true", "16-mixed", "bf16-mixed")


def member_key(name, model):
    """'init_mlp-digits_0.weight.npy' -> '0.weight' (None if not an init member of model)."""
    pre = "init_%s_" % model
    if not name.startswith(pre) or not name.endswith(".npy"):
        return None
    return name[len(pre):-4]


def write_npz(path, members):
    """members: [(name, bytes)], deflated, written as NumPy's savez_compressed writes them."""
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            with z.open(name, "w", force_zip64=True) as f:  # numpy.lib.npyio._savez does the same
                f.write(data)
    os.replace(tmp, path)


def trace_csv(path, model, policy, rec, meta):
    n = len(rec["loss"])
    for k in ("scale", "skipped", "grad_norm"):
        if len(rec[k]) != n:
            raise SystemExit("%s/%s: %s has %d entries, loss %d" % (model, policy, k, len(rec[k]), n))
    steps, lr, scale = RUNS.get(model, (n, None, None))
    lines = ["# fpemu-trace 1", "# model: %s" % model, "# policy: %s" % policy]
    for k, v in meta:
        lines.append("# %s: %s" % (k, v))
    if lr is not None:
        lines.append("# optimizer: adamw lr=%r weight_decay=0.01 betas=0.9,0.999 eps=1e-08 foreach=False" % lr)
        lines.append("# data: digits rows 0..1499, %s, batch 32 in the recorded order" % scale)
    lines.append("# eval_loss: %r" % float(rec["eval_loss"]))
    lines.append("# eval_accuracy: %r" % float(rec["eval_acc"]))
    lines.append("step,loss,scale,skipped,grad_norm")
    for i in range(n):
        lines.append("%d,%r,%r,%d,%r" % (i + 1, float(rec["loss"][i]), float(rec["scale"][i]), int(rec["skipped"][i]),
                                         float(rec["grad_norm"][i])))
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording")
    ap.add_argument("out")
    ap.add_argument("--folder", action="append", default=[], help="also write MODEL's init as a folder of KEY.npy")
    ap.add_argument("--meta", action="append", default=[], help="KEY=VALUE: a metadata line for every trace")
    ap.add_argument("--rep", default="rep0")
    a = ap.parse_args()
    meta = [tuple(m.split("=", 1)) for m in a.meta]
    os.makedirs(a.out, exist_ok=True)
    with zipfile.ZipFile(os.path.join(a.recording, "rest.npz")) as z:
        names = z.namelist()
        for model in RUNS:
            members = [(member_key(n, model) + ".npy", z.read(n)) for n in names if member_key(n, model)]
            if not members:
                continue
            write_npz(os.path.join(a.out, "init-%s.npz" % model), members)
            if model in a.folder:
                d = os.path.join(a.out, "init-%s" % model)
                os.makedirs(d, exist_ok=True)
                for name, data in members:
                    with open(os.path.join(d, name), "wb") as f:
                        f.write(data)
            order = "order_%s.npy" % model
            if order in names:
                with open(os.path.join(a.out, "order-%s.npy" % model), "wb") as f:
                    f.write(z.read(order))
    with open(os.path.join(a.recording, "traces.json")) as f:
        traces = json.load(f)  # Infinity and NaN are Python's json extensions: float('inf'), float('nan')
    for key, rec in sorted(traces.items()):
        model, policy, rep = key.split("/")
        if rep == a.rep:
            trace_csv(os.path.join(a.out, "%s-%s.csv" % (model, policy)), model, policy, rec, meta)


if __name__ == "__main__":
    main()
