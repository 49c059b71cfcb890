# SPDX-License-Identifier: MIT
"""fpemu.cast_stats is `fpemu cast --stats-json`: the same dict, key for key
and number for number, on the same .npy (the figures have one owner,
libfpemu's fpemu_caster); and a recomputation of a few figures in NumPy."""
import ctypes
import json
import math

import numpy as np
import pytest

import fpemu
from conftest import cli_args, run_cli
from fpemu import _native as N

CASES = [
    ("f32", "e4m3", {}), ("f32", "e4m3", {"sat": True}), ("f32", "e5m2", {"round": "sr", "seed": 3}),
    ("f32", "bf16", {}), ("f32", "f16", {"round": "rtz"}), ("f32", "e2m1", {}), ("f32", "e8m0", {}),
    ("f32", "f32", {}), ("f32", "e4m3", {"nan": "torch"}),
    ("f64", "e4m3", {}), ("f64", "f64", {}), ("f16", "e5m2", {}), ("bf16", "e4m3", {"sat": True}),
    ("e4m3", "e2m1", {}), ("e5m2", "e4m3", {}),
    ("m", "e4m3", {"scaling": "tensor"}), ("m", "e4m3", {"scaling": "tensor-torchao"}),
    ("m", "e4m3", {"scaling": "rowwise"}), ("m", "e5m2", {"scaling": "rowwise", "axis": 0}),
    ("m", "e4m3", {"scaling": "blockwise", "axis": 1}), ("m", "e4m3", {"scaling": "mx-floor"}),
    ("m", "e4m3", {"scaling": "mx-rceil", "axis": -2}), ("m", "e2m1", {"scaling": "nvfp4"}),
    ("m64", "e4m3", {"scaling": "tensor", "round": "sr", "seed": 9}),
]


@pytest.mark.parametrize("name,fmt,opts", CASES, ids=["%s-%s-%s" % (n, f, "-".join("%s=%s" % kv for kv in o.items()))
                                                      for n, f, o in CASES])
def test_cast_stats_equal_the_program_json(inputs, tmp_path, name, fmt, opts):
    d, arrays = inputs
    r = run_cli(*cli_args(name, d, fmt, opts), "--out", tmp_path / "y.npy", "--stats-json", "-")
    want = json.loads(r.stdout)
    got = fpemu.cast_stats(arrays[name], fmt, **opts)
    assert list(got) == list(want)
    assert got == want


def test_keys_are_the_documented_figures(inputs):
    got = fpemu.cast_stats(inputs[1]["m"], "e4m3", scaling="mx-floor")
    assert list(got) == ["format", "scaling", "n", "amax", "scale", "block_scales", "tensor_scale", "overflow",
                         "overflow_frac", "saturated", "saturated_frac", "flushed", "flushed_frac", "subnormal",
                         "subnormal_frac", "nonfinite_in", "nonfinite_in_frac", "compared", "max_abs_err",
                         "max_rel_err", "rms_err", "sqnr_db"]
    assert set(got["block_scales"]) == {"count", "min", "max"} and got["block_scales"]["count"] == 5 * 3 * 4
    assert got["scale"] is None and got["tensor_scale"] is None


def test_figures_against_numpy():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(20000) * 2.0 ** rng.integers(-24, 12, 20000)).astype(np.float32)
    x[:6] = [np.nan, np.inf, 1000, -1000, 0, 1e-30]
    st = fpemu.cast_stats(x, "e4m3", sat=True)
    y = fpemu.cast(x, "e4m3", sat=True).astype(np.float64)
    xd = x.astype(np.float64)
    fin = np.isfinite(xd)
    ok = fin & np.isfinite(y)
    e = np.abs(y[ok] - xd[ok])
    nz = ok & (xd != 0)
    assert st["n"] == x.size and st["nonfinite_in"] == 2 and st["compared"] == ok.sum()
    assert st["overflow"] == st["saturated"] == int((fin & (np.abs(xd) > 464)).sum())
    assert st["flushed"] == int((fin & (xd != 0) & (y == 0)).sum())
    assert st["subnormal"] == int((fin & (xd != 0) & (y != 0) & (np.abs(y) < 2.0 ** -6)).sum())
    assert st["amax"] == np.abs(xd[fin]).max()
    assert math.isclose(st["max_abs_err"], e.max(), rel_tol=1e-15)
    assert math.isclose(st["max_rel_err"], (np.abs(y[nz] - xd[nz]) / np.abs(xd[nz])).max(), rel_tol=1e-12)
    assert math.isclose(st["rms_err"], math.sqrt((e ** 2).mean()), rel_tol=1e-9)
    assert math.isclose(st["sqnr_db"], 10 * math.log10((xd[ok] ** 2).sum() / (e ** 2).sum()), rel_tol=1e-9)


def test_an_exact_cast_has_no_sqnr():
    st = fpemu.cast_stats(np.array([1.0, 2.0, -0.5], np.float32), "bf16")
    assert st["max_abs_err"] == 0 and st["sqnr_db"] is None


def test_the_c_interface_figures_by_name_and_as_text(inputs, tmp_path):
    """The C calls the package does not use itself: fpemu_caster_stat by
    key (every key of fpemu_caster_stat_key, against the JSON) and
    fpemu_caster_stats_text (against `fpemu cast --stats`), through ctypes."""
    import ctypes

    from fpemu import _native as N

    d, arrays = inputs
    for name, fmt, opts in [("m", "e4m3", {"scaling": "mx-rceil"}), ("m", "e4m3", {"scaling": "tensor"}),
                            ("f32", "bf16", {}), ("m", "e2m1", {"scaling": "nvfp4", "axis": 1})]:
        want_text = run_cli(*cli_args(name, d, fmt, opts), "--out", tmp_path / "y.npy", "--stats", "-").stdout
        want = fpemu.cast_stats(arrays[name], fmt, **opts)
        c = fpemu._core._Caster(fmt, **opts)
        x = np.ascontiguousarray(arrays[name])
        shape = (ctypes.c_size_t * x.ndim)(*x.shape)
        scaled = np.empty(x.shape, np.float64)
        assert N.caster_run(c.h, N.F32, None, x.ctypes.data, x.ndim, shape, None, None, scaled.ctypes.data) == 0
        assert c.get("scaling") == opts.get("scaling", "none") and c.get("format") == fpemu.format_info(fmt)["name"]
        n = N.caster_stats_text(c.h, None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        assert N.caster_stats_text(c.h, buf, n + 1) == n and buf.value.decode() == want_text
        i = 0
        while N.caster_stat_key(i) is not None:
            key = N.caster_stat_key(i).decode()
            v = ctypes.c_double()
            rc = N.caster_stat(c.h, key.encode(), ctypes.byref(v))
            top, _, sub = key.partition(".")
            w = want[top] if not sub else (want[top] or {}).get(sub)
            if w is None:
                assert rc == 1, key
            else:
                assert rc == 0 and v.value == w, (key, v.value, w)
            i += 1
        assert i == len(want)  # all but format and scaling (text), with block_scales as three keys
        assert N.caster_stat(c.h, b"nope", None) == -1 and b"unknown figure" in N.caster_error(c.h)
        if opts.get("scaling") in (None, "none"):
            assert np.array_equal(scaled, x.astype(np.float64), equal_nan=True)


def _run_f32(c, x):
    """(values, figures by key or None where refused) of one caster run on float32 x."""
    vals = np.empty_like(x)
    shape = (ctypes.c_size_t * 1)(x.size)
    assert N.caster_run(c.h, N.F32, None, x.ctypes.data, 1, shape, vals.ctypes.data, None, None) == 0, \
        N.caster_error(c.h).decode()
    figs, i = {}, 0
    v = ctypes.c_double()
    while N.caster_stat_key(i) is not None:
        key = N.caster_stat_key(i)
        rc = N.caster_stat(c.h, key, ctypes.byref(v))
        figs[key.decode()] = None if rc < 0 else v.value
        i += 1
    return vals, figs


ERROR_FIGURES = ("compared", "max_abs_err", "max_rel_err", "rms_err", "sqnr_db")


@pytest.mark.parametrize("fmt", ["f16", "bf16", "e4m3", "e5m2", "e2m1", "e3m2", "tf32"])
@pytest.mark.parametrize("round,sat,nan", [("rne", 0, "canonical"), ("rtz", 1, "canonical"), ("rna", 0, "torch"),
                                           ("rup", 1, "x86"), ("rdn", 0, "cuda"), ("rto", 1, "canonical")])
def test_stats_counts_equals_full(fmt, round, sat, nan):
    """stats=counts (one array rounding) gives the values, counts and amax of the full cast, bit for bit,
    over every special: zeros, subnormals, overflow, inf, NaN with payloads, the formats' edges."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(3000) * s for s in (1e-9, 1e-5, 1e-2, 1, 1e2, 1e5, 1e9)]).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65520, 448, 464, 57344, 6, 7, 1e-45, -1e-40,
                         3.4e38, -3.4e38], np.float32)
    x = np.concatenate([x, specials, np.array([0x7FC01234, 0xFFA00001, 0x7F800001], np.uint32).view(np.float32)])
    full = fpemu._core._Caster(fmt, round=round, sat=bool(sat), nan=nan)
    cnt = fpemu._core._Caster(fmt, round=round, sat=bool(sat), nan=nan)
    assert N.caster_set(cnt.h, b"stats", b"counts") == 0 and cnt.get("stats") == "counts" and full.get("stats") == "full"
    v1, f1 = _run_f32(full, x)
    v2, f2 = _run_f32(cnt, x)
    assert np.array_equal(v1.view(np.uint32), v2.view(np.uint32))
    for k in f1:
        if k in ERROR_FIGURES:
            assert f2[k] is None and f1[k] is not None
        elif f1[k] is None or np.isnan(f1[k]):
            assert f2[k] is None or np.isnan(f2[k]), k
        else:
            assert f1[k] == f2[k], k
    assert f1["overflow"] + f1["flushed"] + f1["subnormal"] + f1["nonfinite_in"] > 0  # the specials reached the counts


def test_stats_counts_refusals_and_outputs():
    x = np.array([1.0, 70000.0, 1e-8, np.nan], np.float32)
    c = fpemu._core._Caster("f16")
    assert N.caster_set(c.h, b"stats", b"some") == -1 and b"expected full or counts" in N.caster_error(c.h)
    assert N.caster_set(c.h, b"stats", b"counts") == 0
    _run_f32(c, x)
    assert N.caster_stat(c.h, b"rms_err", None) == -1
    assert b"stats=full" in N.caster_error(c.h)
    n = N.caster_stats_json(c.h, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    N.caster_stats_json(c.h, buf, n + 1)
    j = json.loads(buf.value.decode())
    assert j["compared"] is None and j["rms_err"] is None and j["overflow"] == 1 and j["flushed"] == 1 and j["n"] == 4
    n = N.caster_stats_text(c.h, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    N.caster_stats_text(c.h, buf, n + 1)
    assert "overflow" in buf.value.decode() and "rms_err" not in buf.value.decode()
    # codes wanted, or an sr cast: the general path, still counts only
    c2 = fpemu._core._Caster("f16", round="sr", seed=5)
    N.caster_set(c2.h, b"stats", b"counts")
    full = fpemu._core._Caster("f16", round="sr", seed=5)
    v1, f1 = _run_f32(full, x)
    v2, f2 = _run_f32(c2, x)
    assert np.array_equal(v1.view(np.uint32), v2.view(np.uint32)) and f2["rms_err"] is None and f1["overflow"] == f2["overflow"]
