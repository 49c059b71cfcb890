# SPDX-License-Identifier: MIT
"""Refused arguments come back as FpemuError (a ValueError) carrying the
library's message, and nothing is printed: the library never writes to
standard output or error."""
import numpy as np
import pytest

import fpemu

X = np.linspace(-3, 3, 64, dtype=np.float32)
M = np.ones((4, 64), np.float32)


@pytest.mark.parametrize("call,pattern", [
    (lambda: fpemu.cast(X, "nope"), "unknown format 'nope' (see `fpemu formats`"),
    (lambda: fpemu.cast(X, "float8_e4m3"), "ambiguous"),
    (lambda: fpemu.cast(X, "custom:e=9,m=3"), "need 1 <= e <= 8"),
    (lambda: fpemu.cast(X, 8), "format: expected a name, got 8"),
    (lambda: fpemu.cast(X, "e4m3", round="zz"), "round 'zz': unknown rounding mode"),
    (lambda: fpemu.cast(X, "e4m3", nan="zz"), "nan 'zz': unknown NaN policy"),
    (lambda: fpemu.cast(X, "e4m3", scaling="bogus"), "scaling 'bogus': unknown scaling recipe"),
    (lambda: fpemu.cast(X, "e4m3", scaling="given"), "needs scales from a previous step"),
    (lambda: fpemu.cast(X, "e4m3", scaling="mx-floor", round="sr"), "the mx-floor recipe casts with rne only"),
    (lambda: fpemu.cast(X, "e4m3", scaling="nvfp4"), "nvfp4 needs the e2m1 format"),
    (lambda: fpemu.cast(M, "e4m3", scaling="rowwise", axis=2), "axis 2: the input is 2-d"),
    (lambda: fpemu.cast(X, "e4m3", seed=-1), "seed -1"),
    (lambda: fpemu.cast(X, "e4m3", seed=1.5), "seed 1.5"),
    (lambda: fpemu.cast(np.arange(4), "e4m3"), "holds codes: say whose with src=FMT"),
    (lambda: fpemu.cast(np.arange(300), "e4m3", src="e5m2"), "299 is not a e5m2 code"),
    (lambda: fpemu.cast(np.arange(17, dtype=np.uint8), "e4m3", src="e2m1"), "16 is not a e2m1 code"),
    (lambda: fpemu.cast(X, "e4m3", src="e5m2"), "src='e5m2' is for arrays of codes"),
    (lambda: fpemu.cast(X.astype(np.complex64), "e4m3"), "unsupported dtype complex64"),
    (lambda: fpemu.cast(X, "tf32", out="ml_dtypes"), "no NumPy or ml_dtypes type holds tf32 codes"),
    (lambda: fpemu.cast(X, "e4m3", out="torch"), "out 'torch'"),
    (lambda: fpemu.cast_stats(X, "e4m3", round="zz"), "unknown rounding mode"),
    (lambda: fpemu.gemm(M, M, afmt="e4m3"), "shape mismatch: a is 4 x 64 and b is 4 x 64"),
    (lambda: fpemu.gemm(M, M.T), "afmt is required"),
    (lambda: fpemu.gemm(M, M.T, model="h900", afmt="e4m3"), "h900"),
    (lambda: fpemu.gemm(M, M.T, model="a100", afmt="e4m3"), "model a100 has no MMA for e4m3"),
    (lambda: fpemu.gemm(M, M.T, afmt="e4m3", scaling="bogus"), "scaling 'bogus': unknown scaling recipe"),
    (lambda: fpemu.gemm(M, M.T, afmt="e4m3", set={"nfrac": "lots"}), "nfrac 'lots'"),
    (lambda: fpemu.gemm(M, M.T, afmt="e4m3", outfmt="nope"), "outfmt 'nope': unknown format"),
    (lambda: fpemu.gemm(M, M.T, afmt="e4m3", c=np.ones((3, 3))), "c must be 4 x 4"),
    (lambda: fpemu.gemm(np.ones((4, 8), np.uint8), np.ones((8, 4), np.float32), afmt="e4m3"),
     "must both hold values or both hold codes"),
    (lambda: fpemu.gemm(np.ones((4, 8), np.uint8), np.ones((8, 4), np.uint8), afmt="e4m3", scaling="tensor"),
     "scaling must be none"),
    (lambda: fpemu.gemm(np.full((4, 8), 16, np.uint8), np.ones((8, 4), np.uint8), afmt="e2m1", model="b200"),
     "16 is not a e2m1 code"),
    (lambda: fpemu.gemm(np.ones(8), np.ones(8), afmt="e4m3"), "must be 2-D"),
    (lambda: fpemu.gemm(M, M.T, afmt="e4m3", scaling="blockwise", promote=32), "promot"),
    (lambda: fpemu.mma_dot(X, X), "afmt is required"),
    (lambda: fpemu.mma_dot(X, X[:5], afmt="e4m3"), "64 and 5 products"),
    (lambda: fpemu.mma_dot(np.full(4, 300), np.ones(4, np.uint8), afmt="e4m3"), "300 is not a e4m3 code"),
    (lambda: fpemu.mma_dot([1, 2], [1, 2], afmt="s8", bfmt="e4m3"), "integer and floating-point inputs do not mix"),
    (lambda: fpemu.mma_dot([1, 200], [1, 2], afmt="s8"), "values must lie in [-128, 127]"),
    (lambda: fpemu.mma_dot([1.5], [1.0], afmt="s8"), "integer model takes integer arrays"),
    (lambda: fpemu.mma_dot([1.0], [1.0], afmt="e4m3", set={"bogus": 1}), "bogus"),
    (lambda: fpemu.mma_dot([1.0], [1.0], afmt="e4m3", sat=True), "sat is for integer models"),
    (lambda: fpemu.format_info("nope"), "unknown format 'nope'"),
])
def test_refused_with_the_library_message(call, pattern):
    with pytest.raises(fpemu.FpemuError) as e:
        call()
    assert pattern in str(e.value), str(e.value)
    assert isinstance(e.value, ValueError)


def test_the_library_never_prints(capfd):
    """Work and refusals through every handle: nothing reaches file
    descriptors 1 and 2 (capfd sees what C writes there)."""
    fpemu.cast(X, "e4m3", scaling="mx-floor")
    fpemu.cast_stats(M, "e2m1", scaling="nvfp4")
    fpemu.gemm(M, M.T, afmt="e4m3", scaling="blockwise")
    fpemu.mma_dot(X, X, afmt="bf16", promote=8)
    for call in (lambda: fpemu.cast(X, "nope"), lambda: fpemu.cast(M, "e4m3", axis=5),
                 lambda: fpemu.gemm(M, M, afmt="e4m3"), lambda: fpemu.gemm(M, M.T, model="h900", afmt="e4m3"),
                 lambda: fpemu.mma_dot(np.array([300]), np.array([1]), afmt="e4m3")):
        with pytest.raises(fpemu.FpemuError):
            call()
    out, err = capfd.readouterr()
    assert out == "" and err == ""
