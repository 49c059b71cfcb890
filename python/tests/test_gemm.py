# SPDX-License-Identifier: MIT
"""fpemu.gemm against `fpemu gemm` on the same .npy inputs, bit for bit:
values (f32, f16) under every recipe, codes, ml_dtypes arrays, C,
promotion, outfmt and model parameters; and fpemu.mma_dot against
`fpemu mma` lines."""
import ml_dtypes
import numpy as np
import pytest

import fpemu
from conftest import load_npy, run_cli


def bits_equal(a, b):
    return a.dtype == b.dtype == np.float32 and a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.fixture(scope="module")
def mats(tmp_path_factory):
    d = tmp_path_factory.mktemp("gemm")
    rng = np.random.default_rng(11)
    M, K, N = 9, 300, 7
    A = (rng.standard_normal((M, K)) * np.exp(rng.standard_normal((M, 1)) * 2)).astype(np.float32)
    B = (rng.standard_normal((K, N)) * 4).astype(np.float32)
    A[0, :5] = [1e5, -1e-9, 0, 3e-5, 600]
    C = rng.standard_normal((M, N)).astype(np.float32)
    arrays = {"A": A, "B": B, "C": C, "A16": (A / 8).astype(np.float16), "B16": B.astype(np.float16),
              "Ae4": rng.integers(0, 256, (M, K), dtype=np.uint8), "Be4": rng.integers(0, 256, (K, N), dtype=np.uint8),
              "Abf": rng.integers(0, 1 << 16, (M, K), dtype=np.uint16)}
    arrays["Bbf"] = rng.integers(0, 1 << 16, (K, N), dtype=np.uint16)
    arrays["Ae4"][arrays["Ae4"] & 0x7F == 0x7F] = 0x38  # NaN codes out: finite sums, more to compare
    arrays["Be4"][arrays["Be4"] & 0x7F == 0x7F] = 0x40
    for k, v in arrays.items():
        np.save(d / (k + ".npy"), v)
    return d, arrays


VALUE_CASES = [
    ("h100", "e4m3", None, {}), ("h100", "e4m3", "e5m2", {"scaling": "tensor"}),
    ("h100", "e5m2", None, {"scaling": "tensor-torchao", "outfmt": "bf16"}),
    ("h100", "e4m3", None, {"scaling": "rowwise"}), ("h100", "e4m3", None, {"scaling": "blockwise"}),
    ("b200", "e4m3", None, {"scaling": "mx-floor"}), ("b200", "e5m2", None, {"scaling": "mx-rceil", "promote": 64}),
    ("b200", "e2m1", None, {"scaling": "nvfp4"}), ("h100", "e4m3", None, {"promote": 128, "c": True}),
    ("exact", "e4m3", None, {"c": True}), ("a100", "bf16", None, {}), ("a100", "f16", None, {"set": {"nfrac": 30}}),
    ("mi300", "e4m3fnuz", None, {"scaling": "tensor"}), ("fma-seq", "f16", None, {"outfmt": "f16"}),
]


def gemm_cli(d, tmp_path, a, b, model, afmt, bfmt, opts):
    args = ["gemm", "--model", model, "--a", d / (a + ".npy"), "--b", d / (b + ".npy"), "--afmt", afmt,
            "--out", tmp_path / "D.npy"]
    if bfmt:
        args += ["--bfmt", bfmt]
    for k, v in opts.items():
        if k == "c":
            args += ["--c", d / "C.npy"]
        elif k == "set":
            for kk, vv in v.items():
                args += ["--set", "%s=%s" % (kk, vv)]
        else:
            args += ["--" + k, v]
    run_cli(*args)
    return load_npy(tmp_path / "D.npy")


def py_opts(opts, arrays):
    o = dict(opts)
    if o.pop("c", None):
        o["c"] = arrays["C"]
    return o


@pytest.mark.parametrize("model,afmt,bfmt,opts", VALUE_CASES,
                         ids=["%s-%s-%s-%s" % (m, a, b, "-".join(map(str, o))) for m, a, b, o in VALUE_CASES])
def test_values_equal_the_program(mats, tmp_path, model, afmt, bfmt, opts):
    d, arrays = mats
    want = gemm_cli(d, tmp_path, "A", "B", model, afmt, bfmt, opts)
    got = fpemu.gemm(arrays["A"], arrays["B"], model=model, afmt=afmt, bfmt=bfmt, **py_opts(opts, arrays))
    assert bits_equal(got, want)


def test_f16_values_equal_the_program(mats, tmp_path):
    d, arrays = mats
    want = gemm_cli(d, tmp_path, "A16", "B16", "h100", "e4m3", None, {"scaling": "tensor"})
    got = fpemu.gemm(arrays["A16"], arrays["B16"], afmt="e4m3", scaling="tensor")
    assert bits_equal(got, want)
    # float64 values are rounded to float32 first, as the GEMM takes f32
    assert bits_equal(fpemu.gemm(arrays["A16"].astype(np.float64), arrays["B16"].astype(np.float64), afmt="e4m3",
                                 scaling="tensor"), want)


@pytest.mark.parametrize("model,fmt,a,b", [("h100", "e4m3", "Ae4", "Be4"), ("exact", "e4m3", "Ae4", "Be4"),
                                           ("a100", "bf16", "Abf", "Bbf"), ("h100", "bf16", "Abf", "Bbf")])
def test_codes_equal_the_program(mats, tmp_path, model, fmt, a, b):
    d, arrays = mats
    want = gemm_cli(d, tmp_path, a, b, model, fmt, None, {})
    got = fpemu.gemm(arrays[a], arrays[b], model=model, afmt=fmt)
    assert bits_equal(got, want)
    assert bits_equal(fpemu.gemm(arrays[a].astype(np.int64), arrays[b].astype(np.int32), model=model, afmt=fmt), want)
    # the same codes as ml_dtypes arrays: their format is the default afmt
    dt = fpemu.ml_dtype(fmt)
    assert bits_equal(fpemu.gemm(arrays[a].view(dt), arrays[b].view(dt), model=model), want)


def transposed_view(X):
    """X's values as the transpose of a C-contiguous array (numpy's .T: Fortran order)."""
    return np.ascontiguousarray(X.T).T


@pytest.mark.parametrize("model,afmt,bfmt,opts", VALUE_CASES,
                         ids=["%s-%s-%s-%s" % (m, a, b, "-".join(map(str, o))) for m, a, b, o in VALUE_CASES])
def test_transposed_operands_read_as_they_lie(mats, model, afmt, bfmt, opts):
    """Transposed views (a.T of a C-contiguous array) go to the library
    without copies (gemmer options trans_a / trans_b) and give the bits and
    telemetry of the C-contiguous operands, under every recipe."""
    _, arrays = mats
    A, B = arrays["A"], arrays["B"]
    o = py_opts(opts, arrays)
    want, st0 = fpemu.gemm(A, B, model=model, afmt=afmt, bfmt=bfmt, return_stats=True, **o)
    At, Bt = transposed_view(A), transposed_view(B)
    assert fpemu._core._laid(At)[1] and fpemu._core._laid(Bt)[1]  # this library takes them as they lie
    for a, b in ((At, B), (A, Bt), (At, Bt)):
        got, st = fpemu.gemm(a, b, model=model, afmt=afmt, bfmt=bfmt, return_stats=True, **o)
        assert bits_equal(got, want)
        assert st == st0


def test_gemmer_trans_options(mats):
    """The gemmer's trans_a / trans_b on every path: values (plain and
    algo cublas, which copies), codes (copied), the option's value, its
    refusals, and a bad code in a transposed A named by its place in A."""
    from fpemu import _core
    _, arrays = mats
    N = _core.N
    A, B = arrays["A"], arrays["B"]
    M, K = A.shape
    Nn = B.shape[1]

    def run(g, fn, a, b, ta, tb):
        g.set("trans_a", int(ta))
        g.set("trans_b", int(tb))
        a = np.ascontiguousarray(a.T if ta else a)
        b = np.ascontiguousarray(b.T if tb else b)
        D = np.empty((M, Nn), np.float32)
        rc = fn(g.h, M, Nn, K, a.ctypes.data, b.ctypes.data, None, D.ctypes.data)
        return rc, D

    for cublas in (0, 1):
        g = _core._Gemmer("h100", "f16", "f16")
        if cublas:
            g.set("algo", "cublas")
        rc, want = run(g, N.gemmer_run_f32, A, B, 0, 0)
        assert rc == 0
        for ta, tb in ((1, 0), (0, 1), (1, 1)):
            rc, D = run(g, N.gemmer_run_f32, A, B, ta, tb)
            assert rc == 0 and bits_equal(D, want)
            assert g.get("trans_a") == str(ta) and g.get("trans_b") == str(tb)
    g = _core._Gemmer("h100", "e4m3", "e4m3")
    Ac, Bc = arrays["Ae4"].astype(np.uint64), arrays["Be4"].astype(np.uint64)
    rc, want = run(g, N.gemmer_run_codes, Ac, Bc, 0, 0)
    assert rc == 0
    for ta, tb in ((1, 0), (0, 1), (1, 1)):
        rc, D = run(g, N.gemmer_run_codes, Ac, Bc, ta, tb)
        assert rc == 0 and bits_equal(D, want)
    bad = Ac.copy()
    bad[2, 5] = 300
    rc, _ = run(g, N.gemmer_run_codes, bad, Bc, 1, 0)
    assert rc != 0 and "A: element [2, 5] = 300" in N.gemmer_error(g.h).decode()
    for v in ("2", "-1", "yes", ""):
        with pytest.raises(fpemu.FpemuError, match="trans_a .*expected 0 or 1"):
            g.set("trans_a", v)


def test_ml_dtypes_arrays_as_values_under_a_recipe(mats):
    _, arrays = mats
    a8 = arrays["A"].astype(ml_dtypes.float8_e4m3fn)
    b8 = arrays["B"].astype(ml_dtypes.float8_e5m2)
    got = fpemu.gemm(a8, b8, scaling="tensor")  # afmt e4m3, bfmt e5m2 from the dtypes
    want = fpemu.gemm(a8.astype(np.float32), b8.astype(np.float32), afmt="e4m3", bfmt="e5m2", scaling="tensor")
    assert bits_equal(got, want)


def test_gemm_telemetry(mats):
    _, arrays = mats
    D, st = fpemu.gemm(arrays["A"], arrays["B"], afmt="e4m3", return_stats=True)
    assert st["a_n"] == arrays["A"].size and st["b_n"] == arrays["B"].size
    assert st["a_saturated"] == int((np.abs(arrays["A"]) > 464).sum())
    assert st["amax_a"] == np.abs(arrays["A"]).max()


# ---- mma_dot -----------------------------------------------------------------------------


def mma_cli(model, afmt, lines, *extra):
    out = run_cli("mma", "--model", model, "--a", afmt, *extra, stdin="".join(l + "\n" for l in lines)).stdout
    return [int(l.split()[-1], 16) for l in out.splitlines()]


def test_readme_examples():
    a = np.full(4, 0x38, np.uint8)  # e4m3 1.0
    c = np.uint32(0x46800000)       # f32 2^14
    assert fpemu.mma_dot(a, a, c, model="h100", afmt="e4m3", codes=True) == 0x46800000
    assert fpemu.mma_dot(a, a, c, model="exact", afmt="e4m3", codes=True) == 0x46800800
    assert fpemu.mma_dot(a, a, c, model="h100", afmt="e4m3", promote=2, codes=True) == 0x46800800
    assert fpemu.mma_dot([1.0] * 4, [1.0] * 4, 2.0 ** 14, afmt="e4m3") == np.float32(2.0 ** 14)
    a8 = np.ones(4, ml_dtypes.float8_e4m3fn)
    assert fpemu.mma_dot(a8, a8, 2.0 ** 14, model="exact") == np.float32(2.0 ** 14 + 4)


@pytest.mark.parametrize("model,afmt,extra,opts", [
    ("h100", "e4m3", [], {}), ("h100", "e5m2", ["--promote", "4"], {"promote": 4}), ("b200", "e2m1", [], {}),
    ("a100", "bf16", ["--set", "nfrac=20"], {"set": {"nfrac": 20}}), ("mi300", "e4m3fnuz", [], {}),
    ("exact", "f16", ["--c", "bf16", "--d", "bf16"], {"cfmt": "bf16", "dfmt": "bf16"}),
])
def test_mma_dot_equals_the_program(model, afmt, extra, opts):
    rng = np.random.default_rng(5)
    info = fpemu.format_info(afmt)
    nb, k = 64, 40
    cmax = (1 << info["bits"]) - 1
    a = rng.integers(0, cmax + 1, (nb, k), dtype=np.uint64)
    b = rng.integers(0, cmax + 1, (nb, k), dtype=np.uint64)
    cfmt = opts.get("cfmt", "f32")
    c = fpemu.cast(rng.standard_normal(nb).astype(np.float32), cfmt, codes=True)
    dg, dc = info["container"] // 4, fpemu.format_info(cfmt)["container"] // 4
    lines = ["%0*X " % (dc, c[i]) + " ".join("%0*X %0*X" % (dg, a[i, j], dg, b[i, j]) for j in range(k)) for i in range(nb)]
    want = mma_cli(model, afmt, lines, *extra)
    got = fpemu.mma_dot(a, b, c, model=model, afmt=afmt, codes=True, **opts)
    assert got.shape == (nb,) and [int(v) for v in got] == want


def test_mma_dot_integer_model():
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (16, 64))
    b = rng.integers(-128, 128, (16, 64))
    c = rng.integers(-(1 << 31), 1 << 31, 16)
    want = ((a * b).sum(axis=1) + c + (1 << 31)) % (1 << 32) - (1 << 31)  # exact, wrapping
    got = fpemu.mma_dot(a, b, c, model="h100", afmt="s8")
    assert got.dtype == np.int32 and np.array_equal(got, want)
    lines = ["%08X " % (int(c[i]) & 0xFFFFFFFF) + " ".join("%02X %02X" % (a[i, j] & 0xFF, b[i, j] & 0xFF) for j in range(64))
             for i in range(16)]
    assert [int(v) & 0xFFFFFFFF for v in got] == mma_cli("h100", "s8", lines)
    sat = fpemu.mma_dot(np.full(64, 127), np.full(64, 127), 2 ** 31 - 1, model="h100", afmt="s8", sat=True)
    assert sat == 2 ** 31 - 1


def test_mma_dot_broadcasts():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    b = np.ones(4, np.float32)
    got = fpemu.mma_dot(a, b, np.zeros((2, 1)), model="exact", afmt="bf16")
    assert got.shape == (2, 3) and np.array_equal(got[0], a.sum(axis=1)) and np.array_equal(got[1], got[0])
