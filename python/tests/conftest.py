# SPDX-License-Identifier: MIT
"""Shared helpers of the package's tests: the in-tree package first on the
path, the fpemu program (the CLI every result is checked against), .npy
files and runs of it."""
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

PYDIR = Path(__file__).resolve().parents[1]
ROOT = PYDIR.parent
sys.path.insert(0, str(PYDIR))

BIN = os.environ.get("FPEMU_BIN") or str(ROOT / "bin" / "fpemu")


def run_cli(*args, stdin=None, check=True):
    """Run `fpemu ARGS...`; returns the CompletedProcess (text)."""
    if not os.access(BIN, os.X_OK):
        pytest.fail("%s is not built (make; make test sets FPEMU_BIN)" % BIN)
    r = subprocess.run([BIN] + [str(a) for a in args], input=stdin, capture_output=True, text=True)
    if check and r.returncode != 0:
        pytest.fail("fpemu %s: exit %d: %s" % (" ".join(map(str, args)), r.returncode, r.stderr))
    return r


def load_npy(path):
    return np.load(path, allow_pickle=False)


@pytest.fixture
def cli():
    return run_cli


# ---- tensors for the casts (saved as .npy for the program) -------------------------------------

@pytest.fixture(scope="session")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(5000) * 2.0 ** rng.integers(-30, 20, 5000)).astype(np.float32)
    x[:9] = [0, -0.0, np.nan, np.inf, -np.inf, 1e-40, 448, -464, 3e38]
    m = (rng.standard_normal((5, 3, 100)) * np.exp(rng.standard_normal((5, 3, 1)) * 3)).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        arrays = make_arrays(x, m)
    for k, v in arrays.items():
        np.save(d / (k + ".npy"), v)
    return d, arrays


def make_arrays(x, m):
    return {
        "f32": x, "f64": x.astype(np.float64) * (1 + 2.0 ** -30), "f16": x.astype(np.float16),
        "bf16": x.astype(ml_dtypes.bfloat16), "e4m3": x.astype(ml_dtypes.float8_e4m3fn),
        "e5m2": x.astype(ml_dtypes.float8_e5m2), "e2m1": x.astype(ml_dtypes.float4_e2m1fn),
        "m": m, "m64": m.astype(np.float64),
    }


FROM = {"e4m3": "e4m3", "e2m1": "e2m1"}  # one-byte ml_dtypes files the program needs --from for


def cli_args(name, d, fmt, opts):
    a = ["cast", "--to", fmt, "--in", d / (name + ".npy")]
    if name in FROM:
        a += ["--from", FROM[name]]
    for k, v in opts.items():
        a += ["--sat"] if k == "sat" else ["--" + k, v]
    return a
