# SPDX-License-Identifier: MIT
"""fpemu.gemm(algo="cublas") against `fpemu gemm --algo cublas`, bit for bit,
on the committed slices of the H200 recording (tests/data/cublas-h200, the
ones tests/t_cublas.sh replays): every slice is also checked against the
recorded outputs. Then the fallback to the plain model for a shape the
table does not list (a warning and the telemetry say so), a table file in
place of the built-in copy (which must be the file's text), and refusals."""
import ctypes
import gzip
import warnings

import numpy as np
import pytest

import fpemu
from fpemu import _native
from conftest import ROOT, load_npy, run_cli

DATA = ROOT / "tests" / "data" / "cublas-h200"
TABLE = ROOT / "emu" / "cublas-h200.txt"

# dtype, K, recorded output, options (as tests/t_cublas.sh)
CASES = [(dt, k, out, opts) for k in (16, 32, 128, 512, 4096) for dt, out, opts in (
    ("f16", "f32out", {}), ("f16", "f16out", {"outfmt": "f16"}),
    ("bf16", "f32out", {}), ("bf16", "bf16out", {"outfmt": "bf16"}),
    ("e4m3", "fast0", {}), ("e4m3", "fast1", {"fast_accum": True}), ("e4m3", "bf16out", {"outfmt": "bf16"}))]


def unz(name, tmp_path):
    """tests/data/cublas-h200/NAME.npy.gz as an array, and as a .npy file in tmp_path."""
    with gzip.open(DATA / (name + ".npy.gz")) as f:
        raw = f.read()
    path = tmp_path / (name + ".npy")
    path.write_bytes(raw)
    return load_npy(path), path


def cli_cublas(tmp_path, dt, pa, pb, opts, call_shape=None, table=None):
    args = ["gemm", "--model", "h100", "--afmt", dt, "--a", pa, "--b", pb, "--algo", "cublas", "--out", tmp_path / "D.npy"]
    if call_shape:
        args += ["--call-shape", call_shape]
    if table:
        args += ["--table", table]
    if opts.get("outfmt"):
        args += ["--outfmt", opts["outfmt"]]
    if opts.get("fast_accum"):
        args += ["--fast-accum"]
    r = run_cli(*args)
    return load_npy(tmp_path / "D.npy"), r.stderr


@pytest.mark.parametrize("dt,k,out,opts", CASES, ids=["%s-K%d-%s" % c[:3] for c in CASES])
def test_slices_equal_the_program_and_the_recording(tmp_path, dt, k, out, opts):
    A, pa = unz("%s_K%d_A" % (dt, k), tmp_path)
    B, pb = unz("%s_K%d_B" % (dt, k), tmp_path)
    R, _ = unz("%s_K%d_D_%s" % (dt, k, out), tmp_path)
    want, err = cli_cublas(tmp_path, dt, pa, pb, opts, call_shape="64x64x%d" % k)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fpemu.CublasFallbackWarning)
        D, st = fpemu.gemm(A, B, afmt=dt, algo="cublas", call_shape=(64, 64, k), return_stats=True, **opts)
    assert D.dtype == np.float32 and np.array_equal(D.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(D.view(np.uint32), R.view(np.uint32))  # 16/16, as t_cublas.sh
    info = st["cublas"]
    assert info["resolved"] == "table" and info["row_status"] == "gemm" and info["table_name"] == "cublas-h200"
    assert "table cublas-h200 line %d (checked: gemm): %s;" % (info["table_line"], info["tree"]) in err


def test_split_k_row_and_values_in(tmp_path):
    """f16 K = 4096: the split-K row (3 partitions of tiles of 64) is what
    matches; the plain model misses most outputs. f16 values (not codes)
    give the same bits."""
    A, _ = unz("f16_K4096_A", tmp_path)
    B, _ = unz("f16_K4096_B", tmp_path)
    R, _ = unz("f16_K4096_D_f32out", tmp_path)
    D, st = fpemu.gemm(A.view(np.float16), B.view(np.float16), algo="cublas", call_shape="64x64x4096", return_stats=True)
    assert np.array_equal(D.view(np.uint32), R.view(np.uint32))
    assert "split=3 unit=64" in st["cublas"]["tree"] and st["cublas"]["table_line"] == 24
    P = fpemu.gemm(A, B, afmt="f16")
    assert (P.view(np.uint32) == R.view(np.uint32)).sum() < 8


@pytest.mark.parametrize("shape,v", [("511x1024x130", "raw"), ("16x16x16", "tie")])
def test_tf32_operands(tmp_path, shape, v):
    """tf32 calls (tests/t_cublas.sh's tf32in-* slices): 511 x 1024 x 130 ran
    an f32 SIMT kernel on the f32 data (the row's operands=f32, so the library
    casts to f32, not tf32); 16 x 16 x 16 rounded ties to even. Both bit for
    bit, as the program gives them."""
    g = "tf32in-%s-%s" % (shape, v)
    A, pa = unz(g + "_A", tmp_path)
    B, pb = unz(g + "_B", tmp_path)
    R, _ = unz(g + "_D", tmp_path)
    want, _ = cli_cublas(tmp_path, "tf32", pa, pb, {}, call_shape=shape)
    D, st = fpemu.gemm(A, B, afmt="tf32", algo="cublas", call_shape=shape, return_stats=True)
    assert np.array_equal(D.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(D.view(np.uint32), R.view(np.uint32))
    assert ("operands=f32" in st["cublas"]["tree"]) == (shape == "511x1024x130")
    if shape == "511x1024x130":  # the same data rounded to tf32 first is another answer
        T = fpemu.gemm(fpemu.cast(A, "tf32"), fpemu.cast(B, "tf32"), afmt="tf32", algo="cublas", call_shape=shape)
        assert (T.view(np.uint32) == R.view(np.uint32)).sum() < 16


def test_reduced_precision_reduction_off(tmp_path):
    """f16 33 x 65 x 512 (grid slice): PyTorch's default keeps the split-K
    partials in f16 (the row's partial_fmt), reduced-precision reduction off
    in f32; each as recorded and as the program gives it."""
    A, pa = unz("grid-f16_33x65x512_A", tmp_path)
    B, pb = unz("grid-f16_33x65x512_B", tmp_path)
    for kind, rpr, opts in (("native", True, {"outfmt": "f16"}), ("red0", False, {"outfmt": "f16"})):
        R, _ = unz("grid-f16_33x65x512_D_" + kind, tmp_path)
        D, st = fpemu.gemm(A, B, afmt="f16", outfmt="f16", algo="cublas", call_shape="33x65x512", return_stats=True,
                           reduced_precision_reduction=rpr)
        assert np.array_equal(D.view(np.uint32), R.view(np.uint32)), kind
        assert ("partial_fmt=f16" in st["cublas"]["tree"]) == rpr
        if not rpr:
            want, err = cli_cublas(tmp_path, "f16", pa, pb, opts, call_shape="33x65x512")
            assert not np.array_equal(want.view(np.uint32), R.view(np.uint32))  # the default differs here
    with pytest.raises(fpemu.FpemuError, match="reduced_precision_reduction=False goes with algo='cublas'"):
        fpemu.gemm(A, B, afmt="f16", reduced_precision_reduction=False)


def test_shape_not_in_the_table_falls_back_to_the_plain_model(tmp_path):
    A, pa = unz("f16_K4096_A", tmp_path)
    B, pb = unz("f16_K4096_B", tmp_path)
    want, err = cli_cublas(tmp_path, "f16", pa, pb, {})
    assert "this shape is not in the table cublas-h200" in err
    with pytest.warns(fpemu.CublasFallbackWarning, match=r"the call 4x4x4096 \(f16 x f16 -> f32\) is not in the table cublas-h200"):
        D, st = fpemu.gemm(A, B, afmt="f16", algo="cublas", return_stats=True)
    assert np.array_equal(D.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(D.view(np.uint32), fpemu.gemm(A, B, afmt="f16").view(np.uint32))
    info = st["cublas"]
    assert info["resolved"] == "plain" and info["table_line"] is None and info["row_status"] == ""
    assert info["tree"].startswith("leaf=h100 ") and " split=1 " in info["tree"]
    # fp8 without fast accumulation: the plain model promotes every 128 (as _scaled_mm did)
    A8, _ = unz("e4m3_K512_A", tmp_path)
    B8, _ = unz("e4m3_K512_B", tmp_path)
    with pytest.warns(fpemu.CublasFallbackWarning):
        D8, st8 = fpemu.gemm(A8, B8, afmt="e4m3", algo="cublas", return_stats=True)
    assert " chunk=128 " in st8["cublas"]["tree"]
    assert np.array_equal(D8.view(np.uint32), fpemu.gemm(A8, B8, afmt="e4m3", promote=128).view(np.uint32))


def test_a_table_file_and_the_built_in_copy(tmp_path):
    """The library's built-in table is emu/cublas-h200.txt as built; a table
    file given as table= replaces it."""
    f = _native.lib.fpemu_sumtree_table_builtin_text
    f.restype = ctypes.c_char_p
    f.argtypes = []
    assert f() == TABLE.read_bytes()
    A, pa = unz("bf16_K4096_A", tmp_path)
    B, pb = unz("bf16_K4096_B", tmp_path)
    D1, st = fpemu.gemm(A, B, afmt="bf16", algo="cublas", call_shape="64x64x4096", table=TABLE, return_stats=True)
    D2 = fpemu.gemm(A, B, afmt="bf16", algo="cublas", call_shape="64x64x4096")
    want, _ = cli_cublas(tmp_path, "bf16", pa, pb, {}, call_shape="64x64x4096", table=TABLE)
    assert np.array_equal(D1.view(np.uint32), D2.view(np.uint32)) and np.array_equal(D1.view(np.uint32), want.view(np.uint32))
    assert st["cublas"]["table"] == str(TABLE)
    # a table of one row with another tree: the row is used
    t = tmp_path / "one.txt"
    t.write_text("fpemu_sumtree_table = 1\nname = one\na=bf16 m=64 n=64 k=4096 status=mine leaf=h100 split=2 unit=128\n")
    D3, st3 = fpemu.gemm(A, B, afmt="bf16", algo="cublas", call_shape="64x64x4096", table=t, return_stats=True)
    want3, _ = cli_cublas(tmp_path, "bf16", pa, pb, {}, call_shape="64x64x4096", table=t)
    assert np.array_equal(D3.view(np.uint32), want3.view(np.uint32))
    assert st3["cublas"]["table_line"] == 3 and st3["cublas"]["row_status"] == "mine" and "split=2 unit=128" in st3["cublas"]["tree"]


A16 = np.ones((4, 64), np.float16)
B16 = np.ones((64, 4), np.float16)


@pytest.mark.parametrize("kw,pattern", [
    ({"algo": "fast"}, r"algo 'fast': expected 'plain' or 'cublas'"),
    ({"algo": "cublas", "fast_accum": True}, r"fast accumulation is for fp8 inputs"),
    ({"fast_accum": True}, r"fast_accum goes with algo='cublas'"),
    ({"call_shape": "64x64x64"}, r"call_shape goes with algo='cublas'"),
    ({"algo": "cublas", "call_shape": "64x64x512"}, r"must be rows and columns of that call \(the same K\)"),
    ({"algo": "cublas", "call_shape": "2x64x64"}, r"must be rows and columns of that call"),
    ({"algo": "cublas", "call_shape": "64x64"}, r"call_shape '64x64': expected MxNxK"),
    ({"algo": "cublas", "call_shape": (64, 64)}, r"call_shape: expected 'MxNxK' or \(M, N, K\)"),
    ({"algo": "cublas", "promote": 128}, r"no scaling, promote or model parameters"),
    ({"algo": "cublas", "scaling": "tensor"}, r"no scaling, promote or model parameters"),
    ({"algo": "cublas", "set": {"nfrac": 30}}, r"no scaling, promote or model parameters"),
    ({"op": "linear"}, r"op goes with algo='cublas'"),
    ({"algo": "cublas", "op": "addmm"}, r"expected one of mm mm-ta linear"),
    ({"algo": "cublas", "table": "/nonexistent/nosuch.txt"}, r"table '/nonexistent/nosuch.txt': /nonexistent/nosuch.txt: No such file"),
])
def test_refused(kw, pattern):
    with pytest.raises(fpemu.FpemuError, match=pattern):
        fpemu.gemm(A16, B16, **kw)


def test_refused_tables(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("fpemu_sumtree_table = 1\na=f16 m=64 n=64 k=64 split=none\n")
    with pytest.raises(fpemu.FpemuError, match=r"bad.txt:2: split=none"):
        fpemu.gemm(A16, B16, algo="cublas", table=bad)
    v100 = tmp_path / "v100.txt"
    v100.write_text("fpemu_sumtree_table = 1\nname = v\na=f16 m=4 n=4 k=64 leaf=v100 split=2 unit=32\n")
    with pytest.raises(fpemu.FpemuError, match=r"the table v models v100 \(line 3\); the model is h100"):
        fpemu.gemm(A16, B16, algo="cublas", table=v100)


def test_op_linear_rows(tmp_path):
    """The rows of a call (op): F.linear's f32 32 x 64 x 64 (4 partitions of
    16) is not torch.mm's at the same shape (2 of 32); the slice of the
    recorded F.linear call (tests/data/cublas-h200-linear, its bias as c)
    replays bit for bit with op="linear", as `fpemu gemm --op linear`."""
    z = np.load(ROOT / "tests" / "data" / "cublas-h200-linear" / "linear-slice.npz")
    key = "fwd_f32_32x64x64_"
    A, B = z[key + "A"].view(np.float32), z[key + "B"].view(np.float32)
    C = np.broadcast_to(z[key + "bias"].view(np.float32)[None, :], (4, 4)).copy()
    R = z[key + "D"]
    D, st = fpemu.gemm(A, B, afmt="f32", c=C, algo="cublas", op="linear", call_shape=(32, 64, 64), return_stats=True)
    assert np.array_equal(D.view(np.uint32), R) and "split=4 unit=16" in st["cublas"]["tree"]
    np.save(tmp_path / "A.npy", A), np.save(tmp_path / "B.npy", B), np.save(tmp_path / "C.npy", C)
    run_cli("gemm", "--model", "h100", "--afmt", "f32", "--a", tmp_path / "A.npy", "--b", tmp_path / "B.npy", "--c",
            tmp_path / "C.npy", "--algo", "cublas", "--op", "linear", "--call-shape", "32x64x64", "--out", tmp_path / "D.npy")
    assert np.array_equal(load_npy(tmp_path / "D.npy").view(np.uint32), R)
    Dm, stm = fpemu.gemm(A, B, afmt="f32", c=C, algo="cublas", call_shape=(32, 64, 64), return_stats=True)
    assert "split=2 unit=32" in stm["cublas"]["tree"] and not np.array_equal(Dm.view(np.uint32), R)
