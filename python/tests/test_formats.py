# SPDX-License-Identifier: MIT
"""Versions, the format catalogue against `fpemu formats --csv`, and the
ml_dtypes types against the formats they are said to hold, code for code."""
import csv
import io
import math
import re

import ml_dtypes
import numpy as np
import pytest

import fpemu
from conftest import ROOT, run_cli


def test_versions():
    want = re.search(r'#define FPEMU_VERSION "([^"]+)"', (ROOT / "emu" / "fpemu.h").read_text()).group(1)
    assert fpemu.version() == want == fpemu.__version__
    assert fpemu.api_version() == 1
    assert run_cli("--version").stdout.strip() == "fpemu " + want


def test_formats_match_the_cli_catalogue():
    got = fpemu.formats()
    rows = list(csv.DictReader(io.StringIO(run_cli("formats", "--csv").stdout)))
    assert list(got) == [r["name"] for r in rows]
    for r in rows:
        f = got[r["name"]]
        assert f["name"] == r["name"]
        for key, col in (("bits", "bits"), ("container", "container"), ("ebits", "e"), ("mbits", "m"), ("bias", "bias"),
                         ("p", "p")):
            assert f[key] == int(r[col]), (r["name"], key)
        for key in ("max_finite", "min_normal"):
            assert f[key] == float(r[key]), (r["name"], key)
        ms = float(r["min_subnormal"]) if r["min_subnormal"] not in ("", "none") else 0.0
        assert f["min_subnormal"] == ms or (not f["subnormals"]), (r["name"], f["min_subnormal"], r["min_subnormal"])
        assert f["aliases"] == [a for a in r["aliases"].split(",") if a]
        assert f["signed"] == (r["signed"] == "1")


def test_format_info_of_aliases_and_custom_specs():
    e4 = fpemu.format_info("float8_e4m3fn")
    assert e4["name"] == "e4m3" and e4["max_finite"] == 448 and e4["inf"] == "none" and e4["nan"] == "fn"
    assert "float8_e4m3fn" in e4["aliases"]
    c = fpemu.format_info("e3m4")
    assert (c["ebits"], c["mbits"], c["max_finite"], c["aliases"]) == (3, 4, 15.5, [])
    tf = fpemu.format_info("tf32")
    assert (tf["bits"], tf["pad"], tf["container"]) == (19, 13, 32)
    assert fpemu.format_info("e8m0")["signed"] is False


@pytest.mark.parametrize("name", sorted(fpemu.ML_DTYPES_FORMATS))
def test_ml_dtypes_types_hold_their_formats_codes(name):
    """Every code of the format decodes (fpemu) to the value ml_dtypes gives
    the same bits, and ml_dtype() maps the format back to the type."""
    fmt = fpemu.ML_DTYPES_FORMATS[name]
    dt = np.dtype(getattr(ml_dtypes, name))
    info = fpemu.format_info(fmt)
    assert fpemu.ml_dtype(fmt) == dt
    codes = np.arange(1 << info["bits"], dtype=np.uint8 if dt.itemsize == 1 else np.uint16)
    want = codes.view(dt).astype(np.float32)
    got = fpemu.cast(codes, "f32", src=fmt)  # decoding is exact: every value is an f32
    assert np.array_equal(got, want, equal_nan=True), np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))))[:8]
    assert math.isclose(info["max_finite"], float(ml_dtypes.finfo(dt).max))


def test_ml_dtype_of_plain_formats():
    assert fpemu.ml_dtype("f16") == np.float16 and fpemu.ml_dtype("binary32") == np.float32
    assert fpemu.ml_dtype("f64") == np.float64
    assert fpemu.ml_dtype("tf32") is None and fpemu.ml_dtype("binary8p3f") is None
