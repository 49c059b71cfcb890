# SPDX-License-Identifier: MIT
"""Loading libfpemu and declaring its binding interface (emu/fpemu_api.h).

Only the functions of fpemu_api.h are used: opaque handles, strings and
plain arrays, never a struct layout. Where the library comes from, first
match wins:

1. ``$FPEMU_LIBRARY``: the path of a libfpemu shared library (nothing else
   is tried when it is set);
2. the copy bundled into the installed package (``fpemu/_lib/libfpemu.so``,
   put there by ``pip install``, setup.py);
3. in a source checkout (this file under ``<repo>/python/fpemu``), the
   build's ``$FPEMU_BUILD/libfpemu.so.0``, else ``<repo>/build/libfpemu.so.0``;
4. ``libfpemu.so.0`` on the loader's search path (``make install``).
"""
import ctypes
import os
from pathlib import Path

API_VERSION = 1
SONAME = "libfpemu.so.0"

_here = Path(__file__).resolve().parent


def _candidates():
    env = os.environ.get("FPEMU_LIBRARY")
    if env:
        return [(env, "$FPEMU_LIBRARY")]
    out = []
    bundled = _here / "_lib" / "libfpemu.so"
    if bundled.exists():
        out.append((str(bundled), "bundled with the package"))
    root = _here.parent.parent
    if (root / "emu" / "fpemu_api.h").exists() and (root / "Makefile").exists():
        builds = [os.environ.get("FPEMU_BUILD"), str(root / "build")]
        for b in builds:
            if b and (Path(b) / SONAME).exists():
                out.append((str(Path(b) / SONAME), "the source checkout's build"))
                break
    out.append((SONAME, "the loader's search path"))
    return out


def _load():
    tried = []
    for path, where in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s): %s" % (path, where, e))
            continue
        if not hasattr(lib, "fpemu_api_version"):
            tried.append("%s (%s): no fpemu_api_version (a libfpemu older than the binding interface)" % (path, where))
            continue
        lib.fpemu_api_version.restype = ctypes.c_int
        got = lib.fpemu_api_version()
        if got != API_VERSION:
            tried.append("%s (%s): binding interface version %d, this package needs %d" % (path, where, got, API_VERSION))
            continue
        return lib, path
    raise ImportError(
        "fpemu: cannot load libfpemu; tried:\n  " + "\n  ".join(tried) +
        "\nBuild it with `make` in the fpemu repository and `pip install ./python`, "
        "or point $FPEMU_LIBRARY at a libfpemu.so (docs/python.md)")


lib, path = _load()

_c = ctypes
P = _c.c_void_p
S = _c.c_char_p
SZ = _c.c_size_t
I = _c.c_int
D = _c.c_double


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


fpemu_version = _proto("fpemu_version", S)
fpemu_api_version = _proto("fpemu_api_version", I)
format_count = _proto("fpemu_api_format_count", I)
format_name = _proto("fpemu_api_format_name", S, I)
format_prop = _proto("fpemu_api_format_prop", I, S, S, _c.POINTER(D), _c.POINTER(S), _c.c_char_p, SZ)
format_key = _proto("fpemu_api_format_key", S, I)
decode_f64 = _proto("fpemu_api_decode_f64", I, S, P, SZ, P, _c.c_char_p, SZ)

caster_new = _proto("fpemu_caster_new", P, S, _c.c_char_p, SZ)
caster_free = _proto("fpemu_caster_free", None, P)
caster_error = _proto("fpemu_caster_error", S, P)
caster_set = _proto("fpemu_caster_set", I, P, S, S)
caster_get = _proto("fpemu_caster_get", I, P, S, _c.c_char_p, SZ)
caster_check = _proto("fpemu_caster_check", I, P)
caster_run = _proto("fpemu_caster_run", I, P, I, S, P, I, P, P, P, P)
caster_stats_json = _proto("fpemu_caster_stats_json", I, P, _c.c_char_p, SZ)
caster_stats_text = _proto("fpemu_caster_stats_text", I, P, _c.c_char_p, SZ)
caster_stat = _proto("fpemu_caster_stat", I, P, S, _c.POINTER(D))
caster_stat_key = _proto("fpemu_caster_stat_key", S, I)

gemmer_new = _proto("fpemu_gemmer_new", P, S, S, S, _c.c_char_p, SZ)
gemmer_free = _proto("fpemu_gemmer_free", None, P)
gemmer_error = _proto("fpemu_gemmer_error", S, P)
gemmer_set = _proto("fpemu_gemmer_set", I, P, S, S)
gemmer_run_f32 = _proto("fpemu_gemmer_run_f32", I, P, I, I, I, P, P, P, P)
gemmer_run_codes = _proto("fpemu_gemmer_run_codes", I, P, I, I, I, P, P, P, P)
gemmer_stat = _proto("fpemu_gemmer_stat", I, P, S, _c.POINTER(D))
gemmer_stat_key = _proto("fpemu_gemmer_stat_key", S, I)

dotter_new = _proto("fpemu_dotter_new", P, S, S, S, S, S, _c.c_char_p, SZ)
dotter_free = _proto("fpemu_dotter_free", None, P)
dotter_error = _proto("fpemu_dotter_error", S, P)
dotter_set = _proto("fpemu_dotter_set", I, P, S, S)
dotter_format = _proto("fpemu_dotter_format", S, P, _c.c_char)
dotter_run = _proto("fpemu_dotter_run", I, P, SZ, SZ, P, P, P, P)

# fpemu_caster_run's input types
F64, F32, CODES = 1, 2, 3


# ---- optional entry points (newer libraries) ------------------------------------------
# Looked up by name and None where the loaded library lacks them, so that the
# package still loads an older libfpemu; fpemu.torch says what needs them.


def _optional(name, restype, *argtypes):
    try:
        return _proto(name, restype, *argtypes)
    except AttributeError:
        return None


# TE DelayedScaling's scale from an amax (fmt, amax, margin, prev, *scale, err, errlen)
delayed_scale = _optional("fpemu_api_delayed_scale", I, S, D, D, D, _c.POINTER(D), _c.c_char_p, SZ)
# a gemmer's options and what its last run used, as text (algo=cublas: the table row or the fallback)
gemmer_get = _optional("fpemu_gemmer_get", I, P, S, _c.c_char_p, SZ)
# a caster's scales as decode factors: the layout a shape takes, the last run's factors
caster_scale_layout = _optional("fpemu_caster_scale_layout", I, P, I, P, _c.POINTER(I), P)
caster_scales = _optional("fpemu_caster_scales", I, P, _c.POINTER(_c.POINTER(_c.c_float)), _c.POINTER(_c.c_float))
