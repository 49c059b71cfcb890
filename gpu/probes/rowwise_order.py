# SPDX-License-Identifier: MIT
"""Read the rowwise epilogue order off a recording of gpu/probes/rowwise_epilogue.py.

    python3 gpu/probes/rowwise_order.py RECORDING.npz

For each recorded case, counts the outputs each candidate epilogue reproduces bit for bit
from the recorded accumulator acc (the same call with factors 1) and the factors sa_i, sb_j:

  a_then_b   fl(fl(acc * sa_i) * sb_j)
  b_then_a   fl(fl(acc * sb_j) * sa_i)        (fpemu's rowwise epilogue, docs/scaling.md)
  ab_first   fl(acc * fl(sa_i * sb_j))        (fpemu's per-tensor epilogue)
  exact      fl(acc * sa_i * sb_j), the product taken exactly, rounded once

fl is f32 round-to-nearest-even; for bf16 outputs the f32 result is then rounded to bf16
(RNE), and exact_bf16 rounds the exact value to bf16 once (-1: not an output in bf16). A case
answers only if its accumulator is the scaled call's own, which the counts show (a different
kernel would leave every candidate short). NumPy only.
"""
import sys

import numpy as np


def f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def bf16(x32):
    """f32 -> bf16 (RNE), returned as f32 values (the inputs here are finite)."""
    u = np.asarray(x32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


def two_prod(x, y):
    """x * y = hi + lo exactly (f64 arrays; Dekker's product with Veltkamp's split)."""
    def split(v):
        t = v * 134217729.0  # 2^27 + 1
        h = t - (t - v)
        return h, v - h
    hi = x * y
    xh, xl = split(x)
    yh, yl = split(y)
    lo = ((xh * yh - hi) + xh * yl + xl * yh) + xl * yl
    return hi, lo


def round_once(hi, lo, p):
    """hi + lo (|lo| <= half an ulp of hi) rounded once to p significant bits, RNE; finite, normal."""
    s = np.sign(hi)
    a, l = np.abs(hi), lo * s
    m, e = np.frexp(a)
    q = m * 2.0 ** p  # exact: 53 bits at most
    fl = np.floor(q)
    rem = q - fl
    up = (rem > 0.5) | ((rem == 0.5) & ((l > 0) | ((l == 0) & (fl % 2 == 1))))
    up &= ~((rem == 0.5) & (l < 0))
    return (s * np.ldexp(fl + up, e - p)).astype(np.float32)


def main(argv):
    if len(argv) != 2:
        print("usage: rowwise_order.py RECORDING.npz", file=sys.stderr)
        return 2
    z = np.load(argv[1])
    keys = sorted(k[4:] for k in z.files if k.startswith("out_"))
    if not keys:
        print("%s: no out_* arrays (expected gpu/probes/rowwise_epilogue.py's keys)" % argv[1], file=sys.stderr)
        return 2
    names = ["a_then_b", "b_then_a", "ab_first", "exact", "exact_bf16"]
    print("%-24s %6s  %s" % ("case", "outs", "  ".join("%9s" % n for n in names)))
    for key in keys:
        acc = z["acc_" + key].astype(np.float32)
        out = z["out_" + key].astype(np.float32)
        sa = z["sa_" + key].astype(np.float32)  # M x 1
        sb = z["sb_" + key].astype(np.float32)  # 1 x N
        accd, sad, sbd = acc.astype(np.float64), sa.astype(np.float64), sb.astype(np.float64)
        hi, lo = two_prod(accd * sad, np.broadcast_to(sbd, acc.shape))  # acc * sa is exact in f64
        is_bf16 = "_bf16_" in key
        c = {
            "a_then_b": f32(f32(accd * sad).astype(np.float64) * sbd),
            "b_then_a": f32(f32(accd * sbd).astype(np.float64) * sad),
            "ab_first": f32(accd * f32(sad * sbd).astype(np.float64)),
            "exact": round_once(hi, lo, 24),
        }
        if is_bf16:
            c = {n: bf16(v) for n, v in c.items()}
            c["exact_bf16"] = round_once(hi, lo, 8)
        counts = []
        for n in names:
            v = c.get(n)
            if v is None:
                counts.append(-1)
                continue
            counts.append(int(np.sum(v.view(np.uint32) == out.view(np.uint32))))
        print("%-24s %6d  %s" % (key, out.size, "  ".join("%9d" % x for x in counts)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
