# SPDX-License-Identifier: MIT
"""Pack the raw arrays of ex2_approx.cu into one compressed .npz, and say what they show.

    python3 gpu/probes/pack_ex2.py RAWDIR OUT.npz

OUT.npz holds: grid_first (uint32, the bits of ex2.approx(-1)), grid_diff (the differences of
consecutive result bits over the grid x = (i - 2^23) * 2^-23, i = 0 .. 2^24: small integers,
int8 when they fit, else int32; cumsum restores the bits exactly), sample_in and sample_out
(uint32 bits), info (the text of info.txt). Prints, for the grid and the sample, how many
results equal 2^x rounded to nearest (numerics=torch-cuda's model before the recording), and for the
sample points just off the grid how many equal the result at the grid point below them in
magnitude (the bits under 2^-23 ignored). NumPy only.
"""
import os
import sys

import numpy as np

GRID_N = (1 << 24) + 1
SAMPLE_N = 1 << 18


def load(path, n):
    a = np.fromfile(path, dtype="<u4")
    if a.size != n:
        raise SystemExit("pack_ex2.py: %s holds %d values, expected %d" % (path, a.size, n))
    return a


def rn_model(xbits):
    """2^x rounded to nearest, subnormal inputs flushed to zero (the earlier model)."""
    x = xbits.view(np.float32).astype(np.float64)
    x[np.abs(x) < 2.0 ** -126] = 0.0
    return np.exp2(x).astype(np.float32).view(np.uint32)


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: pack_ex2.py RAWDIR OUT.npz")
    raw, out = sys.argv[1], sys.argv[2]
    grid = load(raw + "/grid_out.bin", GRID_N)
    sin_ = load(raw + "/sample_in.bin", SAMPLE_N)
    sout = load(raw + "/sample_out.bin", SAMPLE_N)
    with open(raw + "/info.txt") as f:
        info = f.read()
    d = np.diff(grid.astype(np.int64))
    diff = d.astype(np.int8) if d.min() >= -128 and d.max() <= 127 else d.astype(np.int32)
    tmp = "%s.tmp.%d" % (out, os.getpid())  # written whole, then renamed: never a half-written file
    try:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, grid_first=grid[:1], grid_diff=diff, sample_in=sin_, sample_out=sout,
                                info=np.array(info))
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    back = np.concatenate([grid[:1].astype(np.int64), grid[0] + np.cumsum(diff.astype(np.int64))])
    assert (back == grid).all()
    gx = ((np.arange(GRID_N, dtype=np.int64) - (1 << 23)).astype(np.float32) * np.float32(2.0 ** -23)).view(np.uint32)
    g_eq = int((grid == rn_model(gx)).sum())
    s_eq = int((sout == rn_model(sin_)).sum())
    # the off-grid half: the grid point below in magnitude, and its recorded result
    x = sin_[0::2].view(np.float32).astype(np.float64)
    i = (np.trunc(x * 2.0 ** 23)).astype(np.int64) + (1 << 23)
    below = grid[i]
    t_eq = int((sout[0::2] == below).sum())
    print(info.strip())
    print("grid: %d of %d results equal 2^x rounded to nearest; diffs %s in [%d, %d]"
          % (g_eq, GRID_N, diff.dtype, int(d.min()), int(d.max())))
    print("sample: %d of %d equal 2^x rounded to nearest" % (s_eq, SAMPLE_N))
    print("off-grid half: %d of %d equal the result at the grid point below them in magnitude" % (t_eq, SAMPLE_N // 2))


if __name__ == "__main__":
    main()
