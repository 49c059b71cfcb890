# SPDX-License-Identifier: MIT
"""fpemu: bit-exact low-precision number formats, casts, GEMMs and
tensor-core dot products, from Python.

A ctypes binding of libfpemu's stable binding interface (emu/fpemu_api.h):
every result is the one the library, and so the `fpemu` program, computes.
docs/python.md in the fpemu repository describes each function and where
the shared library is found.
"""
from ._core import (
    ML_DTYPES_FORMATS,
    CublasFallbackWarning,
    FpemuError,
    api_version,
    cast,
    cast_stats,
    format_info,
    formats,
    gemm,
    library_path,
    ml_dtype,
    mma_dot,
    version,
)

__version__ = version()

__all__ = [
    "FpemuError", "CublasFallbackWarning", "version", "api_version", "library_path", "formats", "format_info", "ml_dtype",
    "ML_DTYPES_FORMATS", "cast", "cast_stats", "gemm", "mma_dot", "__version__",
]
