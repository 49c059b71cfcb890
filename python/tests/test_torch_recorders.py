# SPDX-License-Identifier: MIT
"""The GPU recorders of gpu/torch/, dry-run on the CPU (`--device cpu`): what a lent GPU's one
prepared run (gpu/session.sh) will write is checked here, before a device is spent on it.
record_cublas.py --linear: the three GEMMs of a Linear layer with autograd's layouts, each
random case equal to the product it claims (the CPU BLAS's answers, within f32 rounding), the
pair probes in the form `fpemu gemm --pairs` reads. Runs where torch is installed
(tests/t_torch.sh, make test-torch)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = os.environ.get("FPEMU_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("FPEMU_BIN", os.path.join(ROOT, "bin", "fpemu"))
REC = os.path.join(ROOT, "gpu", "torch", "record_cublas.py")


def record(tmp_path, *args):
    env = dict(os.environ, OUT=str(tmp_path))
    return subprocess.run([sys.executable, REC, "--device", "cpu", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def f32(a):
    return np.asarray(a).view(np.float32).astype(np.float64)


@pytest.fixture(scope="module")
def linear(tmp_path_factory):
    out = tmp_path_factory.mktemp("linear")
    r = record(out, "--linear", "32x10x64,32x32x32", "--dtypes", "f32,bf16", "--budget-s", "120")
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("form,shape", [("fwd", "32x10x64"), ("wgrad", "10x64x32"), ("dgrad", "32x64x10"),
                                        ("fwd", "32x32x32"), ("wgrad", "32x32x32"), ("dgrad", "32x32x32")])
def test_linear_random_case_is_the_product(linear, form, shape):
    z = np.load(os.path.join(linear, "cublas-linear-%s-f32.npz" % form))
    M, N, K = (int(v) for v in shape.split("x"))
    A, B, D = f32(z["A_f32_" + shape]), f32(z["B_f32_" + shape]), f32(z["D_f32_native_" + shape])
    assert A.shape == (M, K) and B.shape == (K, N) and D.shape == (M, N)
    ref = A @ B + (f32(z["bias_f32_" + shape]) if form == "fwd" else 0)
    # f32 accumulation over K terms: well within K ulps of the largest partial sum
    tol = K * 2.0 ** -23 * (np.abs(A) @ np.abs(B) + 1)
    assert (np.abs(D - ref) <= tol).all()


def test_linear_bf16_codes_are_bf16(linear):
    z = np.load(os.path.join(linear, "cublas-linear-fwd-bf16.npz"))
    assert z["A_bf16_32x10x64"].dtype == np.uint16 and z["D_bf16_native_32x10x64"].dtype == np.uint16


def test_linear_pairs_read_by_fpemu(linear):
    """fpemu gemm --pairs reads each form's probes (every anchor, every j) and fits a tree."""
    for form, shape in (("fwd", "32x10x64"), ("wgrad", "10x64x32"), ("dgrad", "32x64x10")):
        z = np.load(os.path.join(linear, "cublas-linear-%s-f32.npz" % form))
        K = int(shape.split("x")[2])
        anchors = [k for k in z.files if k.startswith("out_f32_%s_i" % shape)]
        assert len(anchors) == len({0, 1, 37 % K, K // 2, K - 1})
        r = subprocess.run([BIN, "gemm", "--model", "fma-seq", "--afmt", "f32", "--shape", shape, "--pairs",
                            os.path.join(linear, "cublas-linear-%s-f32.npz" % form)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "shape=%s dtype=f32 answers=%d anchors=%d" % (shape, len(anchors) * (K - 1), len(anchors)) in r.stdout
        assert "status=" in r.stdout


def test_linear_env_says_dry_run(linear):
    env = json.load(open(os.path.join(linear, "env.json")))
    assert env["device"].startswith("cpu") and "not cuBLAS" in env["device"]
    assert not env["skipped"]
    assert sorted(env["parts"]) == sorted("linear-%s-%s" % (f, d) for f in ("fwd", "wgrad", "dgrad") for d in ("f32", "bf16"))


def test_linear_bad_shape(tmp_path):
    r = record(tmp_path, "--linear", "32x10")
    assert r.returncode != 0 and "--linear 32x10: expected BxOUTxIN" in r.stderr
