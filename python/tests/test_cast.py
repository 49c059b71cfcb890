# SPDX-License-Identifier: MIT
"""fpemu.cast against ml_dtypes (every f16 and bf16 input to each 8-bit
and smaller format; a large f32 sample to bf16 and f16) and against the
fpemu program on the same .npy files (every input type, the recipes,
--axis, sr), bit for bit."""
import ml_dtypes
import numpy as np
import pytest

import fpemu
from conftest import FROM, cli_args, load_npy, run_cli

ALL16 = np.arange(1 << 16, dtype=np.uint16)
INPUTS16 = {"f16": ALL16.view(np.float16), "bf16": ALL16.view(ml_dtypes.bfloat16)}
SMALL = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3", "float8_e3m4",
         "float8_e4m3b11fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]


def same(got, want):
    return np.array_equal(got, want, equal_nan=True)


def where_differ(got, want):
    return np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))))[:8]


@pytest.mark.parametrize("src", sorted(INPUTS16))
@pytest.mark.parametrize("name", SMALL)
def test_every_16bit_input_to_small_formats_equals_ml_dtypes(src, name):
    x = INPUTS16[src]
    dt = np.dtype(getattr(ml_dtypes, name))
    fmt = fpemu.ML_DTYPES_FORMATS[name]
    xf = x.astype(np.float32)  # exact widening
    with np.errstate(invalid="ignore", over="ignore"):
        ref = xf.astype(dt)  # ml_dtypes' rne cast
    got = fpemu.cast(x, fmt)
    assert got.dtype == np.float32 and got.shape == x.shape
    want = ref.astype(np.float32)
    # where the two differ by design, each side is checked on its own:
    cmp = np.ones(x.shape, bool)
    if fpemu.format_info(fmt)["nan"] == "none":
        # a NaN input to a format without NaN: fpemu gives +max finite
        # (docs/semantics.md), ml_dtypes a zero
        nan = np.isnan(xf)
        assert (got[nan] == fpemu.format_info(fmt)["max_finite"]).all()
        cmp &= ~nan
    if name == "float8_e8m0fnu":
        # positive f32 subnormals in [2^-127, 2^-126) (bf16 has them):
        # ml_dtypes takes every one to 2^-126; fpemu to the nearer of 2^-127
        # and 2^-126, the tie 1.5 x 2^-127 up, as both round 1.5 x 2^k to
        # 2^(k+1) for normal inputs
        low = (xf >= 2.0 ** -127) & (xf < 2.0 ** -126)
        assert low.sum() == (64 if src == "bf16" else 0)
        assert (got[low] == np.where(xf[low] < 1.5 * 2.0 ** -127, 2.0 ** -127, 2.0 ** -126)).all()
        cmp &= ~low
    g, w = got[cmp], want[cmp]
    assert same(g, w), (x[cmp][where_differ(g, w)], g[where_differ(g, w)], w[where_differ(g, w)])
    codes = fpemu.cast(x, fmt, codes=True)
    assert codes.dtype == np.uint8
    keep = cmp & ~np.isnan(want)  # NaN codes: ml_dtypes keeps the input's sign, fpemu's canonical NaN is positive
    assert np.array_equal(codes[keep], ref.view(np.uint8)[keep])
    as_ml = fpemu.cast(x, fmt, out="ml_dtypes")
    assert as_ml.dtype == dt and np.array_equal(as_ml.view(np.uint8), codes)


def f32_sample(n=1 << 20, seed=0):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    # and values at and around the halfway points of bf16 and f16
    ties = (rng.integers(0, 1 << 16, n // 8, dtype=np.uint64).astype(np.uint32) << 16) | 0x8000
    near = ties + rng.integers(-2, 3, ties.size).astype(np.uint32)
    h = rng.integers(0, 1 << 16, n // 8, dtype=np.uint64).astype(np.uint16).view(np.float16).astype(np.float32)
    h_ties = h.view(np.uint32) | np.uint32(0x1000)
    return np.concatenate([bits, ties, near, h_ties]).view(np.float32)


@pytest.mark.parametrize("fmt,dt", [("bf16", ml_dtypes.bfloat16), ("f16", np.float16)])
def test_large_f32_sample_to_bf16_f16_equals_ml_dtypes(fmt, dt):
    x = f32_sample()
    with np.errstate(over="ignore", invalid="ignore"):
        ref = x.astype(dt)
    want = ref.astype(np.float32)
    got = fpemu.cast(x, fmt)
    assert same(got, want), where_differ(got, want)
    codes = fpemu.cast(x, fmt, codes=True)
    keep = ~np.isnan(want)
    assert codes.dtype == np.uint16 and np.array_equal(codes[keep], ref.view(np.uint16)[keep])


def test_f64_input_is_rounded_once_and_stays_f64():
    x = np.array([1 + 2.0 ** -4 + 2.0 ** -40, -(1 + 2.0 ** -4 + 2.0 ** -40)])
    y = fpemu.cast(x, "e4m3")
    assert y.dtype == np.float64 and list(y) == [1.125, -1.125]
    assert fpemu.cast(x.astype(np.float32), "e4m3").tolist() == [1.0, -1.0]


def test_shapes_orders_and_python_numbers():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    flat = fpemu.cast(x.ravel(), "e5m2")
    assert np.array_equal(fpemu.cast(x, "e5m2"), flat.reshape(x.shape))
    xf = np.asfortranarray(x)
    assert np.array_equal(fpemu.cast(xf, "e5m2"), flat.reshape(x.shape))
    assert np.array_equal(fpemu.cast(x.astype(">f4"), "e5m2"), flat.reshape(x.shape))
    assert np.array_equal(fpemu.cast(x[:, ::2, 1:], "e5m2"), flat.reshape(x.shape)[:, ::2, 1:])
    s = fpemu.cast(3.3, "e5m2")
    assert s.shape == () and s.dtype == np.float64 and float(s) == 3.5
    assert fpemu.cast([1, 464, 1000], "e4m3", sat=True).tolist() == [1.0, 448.0, 448.0]
    assert fpemu.cast(np.zeros((0, 3), np.float32), "e4m3").shape == (0, 3)
    assert fpemu.cast(np.zeros((0, 3), np.float32), "e4m3", scaling="mx-floor").shape == (0, 3)


def test_codes_in_with_src():
    codes = np.arange(256, dtype=np.uint8)
    want = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32).astype(ml_dtypes.float8_e5m2).astype(np.float32)
    assert same(fpemu.cast(codes, "e5m2", src="e4m3"), want)
    assert same(fpemu.cast(codes.astype(np.int64), "e5m2", src="e4m3"), want)
    assert same(fpemu.cast(codes.view(ml_dtypes.float8_e4m3fn), "e5m2"), want)


def test_return_stats_is_the_cast_stats():
    x = np.linspace(-600, 600, 1001, dtype=np.float32)
    y, st = fpemu.cast(x, "e4m3", sat=True, return_stats=True)
    assert np.array_equal(y, fpemu.cast(x, "e4m3", sat=True))
    assert st == fpemu.cast_stats(x, "e4m3", sat=True)
    assert st["saturated"] == int((np.abs(x) > 464).sum())


# ---- against the fpemu program -------------------------------------------------------


CASES = [
    ("f32", "e4m3", {}), ("f32", "e4m3", {"sat": True}), ("f32", "e5m2", {"round": "rtz"}),
    ("f32", "e4m3", {"nan": "torch"}), ("f32", "bf16", {"round": "sr", "seed": 11}), ("f32", "f16", {"round": "rup"}),
    ("f32", "e8m0", {}), ("f32", "e2m1", {"round": "rna"}), ("f32", "tf32", {}),
    ("f64", "e4m3", {}), ("f64", "bf16", {"round": "sr", "seed": 5}), ("f64", "f32", {"round": "rdn"}),
    ("f16", "e4m3", {}), ("bf16", "e5m2", {"sat": True}), ("e4m3", "e5m2", {}), ("e5m2", "e4m3", {}),
    ("e2m1", "e3m2", {}),
    ("m", "e4m3", {"scaling": "tensor"}), ("m", "e4m3", {"scaling": "tensor-torchao", "round": "sr", "seed": 2}),
    ("m", "e5m2", {"scaling": "rowwise", "axis": 1}), ("m", "e4m3", {"scaling": "blockwise", "axis": 0}),
    ("m", "e4m3", {"scaling": "mx-floor", "axis": -1}), ("m", "e5m2", {"scaling": "mx-rceil", "axis": 1}),
    ("m", "e2m1", {"scaling": "nvfp4"}), ("m", "e2m1", {"scaling": "nvfp4", "axis": 0}),
    ("m64", "e4m3", {"scaling": "rowwise", "axis": 0}), ("m64", "e4m3", {}),
]


@pytest.mark.parametrize("name,fmt,opts", CASES, ids=["%s-%s-%s" % (n, f, "-".join("%s=%s" % kv for kv in o.items()))
                                                      for n, f, o in CASES])
def test_values_and_codes_equal_the_program(inputs, tmp_path, name, fmt, opts):
    d, arrays = inputs
    x = arrays[name]
    run_cli(*cli_args(name, d, fmt, opts), "--out", tmp_path / "v.npy")
    run_cli(*cli_args(name, d, fmt, opts), "--codes", "--out", tmp_path / "c.npy")
    want_v, want_c = load_npy(tmp_path / "v.npy"), load_npy(tmp_path / "c.npy")
    got_v = fpemu.cast(x, fmt, **opts)  # an ml_dtypes array says its format itself
    got_c = fpemu.cast(x, fmt, codes=True, **opts)
    assert got_v.dtype == want_v.dtype and got_v.shape == want_v.shape
    assert np.array_equal(got_v.view(np.uint8), want_v.view(np.uint8)), "values differ"
    assert got_c.dtype == want_c.dtype and np.array_equal(got_c, want_c), "codes differ"


def test_threads_give_the_serial_results():
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((64, 96)).astype(np.float32) * 2.0 ** i for i in range(-8, 8)]
    serial = [fpemu.cast(x, "e4m3", round="sr", seed=i, scaling="rowwise") for i, x in enumerate(xs)]
    with ThreadPoolExecutor(4) as ex:
        par = list(ex.map(lambda ix: fpemu.cast(ix[1], "e4m3", round="sr", seed=ix[0], scaling="rowwise"), enumerate(xs)))
    assert all(np.array_equal(a, b) for a, b in zip(serial, par))


@pytest.mark.parametrize("fmt,scaling,axis,block", [
    ("e4m3", "tensor", -1, None), ("e5m2", "tensor-torchao", -1, None), ("e4m3", "rowwise", 0, "all"),
    ("e4m3", "blockwise", -1, 128), ("e4m3", "mx-floor", -1, 32), ("e5m2", "mx-rceil", 1, 32),
    ("e2m1", "nvfp4", -1, 16), ("e2m1", "nvfp4", 0, 16)])
def test_return_scales_dequantise_the_codes(fmt, scaling, axis, block):
    """cast(..., codes=True, return_scales=True): the codes times the decode
    factors (broadcast over their blocks along the axis; nvfp4 then times
    scale_2), rounded to float32, are cast's values, bit for bit."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 40, 5)) * 2.0 ** rng.integers(-6, 6, (3, 1, 5))).astype(np.float32)
    vals = fpemu.cast(x, fmt, scaling=scaling, axis=axis)
    codes, sc = fpemu.cast(x, fmt, scaling=scaling, axis=axis, out="ml_dtypes", return_scales=True)
    f = sc["scale"]
    ax = axis % x.ndim
    if block is None:
        assert f.shape == () and f.dtype == np.float32
    else:
        L = x.shape[ax]
        b = L if block == "all" else block
        assert f.shape == tuple(d for i, d in enumerate(x.shape) if i != ax) + (-(-L // b),)
        f = np.moveaxis(np.repeat(f, b, axis=-1)[..., :L], -1, ax)
    deq = (codes.astype(np.float32) * f).astype(np.float32)
    if scaling == "nvfp4":
        deq = (deq * sc["scale_2"]).astype(np.float32)
    else:
        assert "scale_2" not in sc
    assert np.array_equal(deq.view(np.uint32), vals.view(np.uint32))


def test_return_scales_none_without_a_recipe():
    v, sc = fpemu.cast(np.ones(4, np.float32), "e4m3", return_scales=True)
    assert sc is None and v.shape == (4,)
    v, st, sc = fpemu.cast(np.ones(4, np.float32), "e4m3", scaling="tensor", return_stats=True, return_scales=True)
    assert st["scale"] == 448 and sc["scale"] == np.float32(1 / 448)
