# SPDX-License-Identifier: MIT
"""Record the epilogue order of torch._scaled_mm with rowwise and tensorwise scales (docs/scaling.md).

torchao's rowwise recipe hands _scaled_mm one f32 factor per row of A (scale_a, M x 1) and
per column of B (scale_b, 1 x N). With power-of-two factors every order of the two
multiplies gives the same bits, so a recording with such factors cannot say which order the
library uses. This probe gives it factors that are not powers of two and records, per call,
the plain accumulator (the same call with factors 1), the scaled output and the factors, so
that the order can be read off on a CPU (gpu/probes/rowwise_order.py).

Needs PyTorch with CUDA and NumPy; no network. From the repository root on a lent machine:

    OUT=/path/to/out python3 gpu/probes/rowwise_epilogue.py

Each shape is also called with tensorwise factors (one scalar each: the first row's and the
first column's factor; keys ending in _tensor, sa/sb stored broadcast, no codes kept).
Writes OUT/rowwise.npz (keys per case C: acc_C, out_C (f32 values; bf16 outputs widened
exactly), sa_C, sb_C, a_C, b_C (the e4m3 codes, A row-major M x K, B as K x N)) and
OUT/rowwise.json (versions, the cases, what torch refused and why).
"""
import json
import os
import sys
import traceback

import numpy as np
import torch

CASES = [  # M, N, K
    (64, 64, 16), (64, 64, 32), (64, 64, 128), (128, 128, 512), (64, 128, 4096),
]


def main():
    out = os.environ.get("OUT", "out")
    os.makedirs(out, exist_ok=True)
    dev = "cuda"
    rng = np.random.default_rng(20261127)
    arrays, meta = {}, {"torch": torch.__version__, "cuda": torch.version.cuda,
                        "device": torch.cuda.get_device_name(0), "cases": {}, "refused": {}}
    for (m, n, k) in CASES:
        a = torch.from_numpy(rng.standard_normal((m, k), dtype=np.float32)).to(dev).to(torch.float8_e4m3fn)
        b = torch.from_numpy(rng.standard_normal((n, k), dtype=np.float32)).to(dev).to(torch.float8_e4m3fn)
        bt = b.t()  # K x N, column-major as _scaled_mm wants
        # factors in [0.5, 2): not powers of two, f32
        sa = torch.from_numpy(rng.uniform(0.5, 2.0, (m, 1)).astype(np.float32)).to(dev)
        sb = torch.from_numpy(rng.uniform(0.5, 2.0, (1, n)).astype(np.float32)).to(dev)
        ones_a = torch.ones((m, 1), dtype=torch.float32, device=dev)
        ones_b = torch.ones((1, n), dtype=torch.float32, device=dev)
        for od_name, od in (("f32", torch.float32), ("bf16", torch.bfloat16)):
            for fast in (False, True):
                # tensorwise: one scalar factor each (the first row's and column's)
                key = "%dx%dx%d_%s_fast%d_tensor" % (m, n, k, od_name, int(fast))
                try:
                    acc = torch._scaled_mm(a, bt, scale_a=ones_a[:1, 0].reshape(()), scale_b=ones_b[0, :1].reshape(()),
                                           out_dtype=torch.float32, use_fast_accum=fast)
                    res = torch._scaled_mm(a, bt, scale_a=sa[:1, 0].reshape(()), scale_b=sb[0, :1].reshape(()), out_dtype=od,
                                           use_fast_accum=fast)
                    torch.cuda.synchronize()
                    arrays["acc_" + key] = acc.float().cpu().numpy()
                    arrays["out_" + key] = res.float().cpu().numpy()
                    arrays["sa_" + key] = np.full((m, 1), sa[0, 0].item(), dtype=np.float32)
                    arrays["sb_" + key] = np.full((1, n), sb[0, 0].item(), dtype=np.float32)
                    meta["cases"][key] = {"m": m, "n": n, "k": k, "out": od_name, "fast_accum": fast, "scales": "tensor"}
                    print(key, "recorded", flush=True)
                except Exception as e:
                    meta["refused"][key] = "".join(traceback.format_exception_only(type(e), e)).strip()[:400]
                key = "%dx%dx%d_%s_fast%d" % (m, n, k, od_name, int(fast))
                try:
                    acc = torch._scaled_mm(a, bt, scale_a=ones_a, scale_b=ones_b, out_dtype=torch.float32,
                                           use_fast_accum=fast)
                    res = torch._scaled_mm(a, bt, scale_a=sa, scale_b=sb, out_dtype=od, use_fast_accum=fast)
                    torch.cuda.synchronize()
                except Exception as e:  # what this torch refuses is part of the answer
                    meta["refused"][key] = "".join(traceback.format_exception_only(type(e), e)).strip()[:400]
                    continue
                arrays["acc_" + key] = acc.float().cpu().numpy()
                arrays["out_" + key] = res.float().cpu().numpy()
                arrays["sa_" + key] = sa.cpu().numpy()
                arrays["sb_" + key] = sb.cpu().numpy()
                arrays["a_" + key] = a.view(torch.uint8).cpu().numpy()
                arrays["b_" + key] = bt.contiguous().view(torch.uint8).cpu().numpy()
                meta["cases"][key] = {"m": m, "n": n, "k": k, "out": od_name, "fast_accum": fast}
                print(key, "recorded", flush=True)
    np.savez_compressed(os.path.join(out, "rowwise.npz"), **arrays)
    with open(os.path.join(out, "rowwise.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("cases", len(meta["cases"]), "refused", len(meta["refused"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
