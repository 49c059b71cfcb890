# SPDX-License-Identifier: MIT
"""The package's functions over libfpemu's binding interface (fpemu_api.h).

Every array goes to the library whole (one call per cast, GEMM or batch
of dot products); NumPy does the conversions around it, so nothing loops
over elements in Python."""
import ctypes
import json
import numbers
import warnings

import numpy as np

from . import _native as N


class FpemuError(ValueError):
    """A refused argument or input; the message is the library's, with the
    option it came from named in front where there is one."""


class CublasFallbackWarning(UserWarning):
    """gemm(algo="cublas"): the call's formats and shape are not in the tree
    table, so the plain model (one chain over K) computed it, as `fpemu gemm
    --algo cublas` says on standard error."""


def _b(s):
    return s.encode() if isinstance(s, str) else s


def _errbuf():
    return ctypes.create_string_buffer(1024)


def _text(v):
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    return str(v)


# ---- versions and the library ----------------------------------------------------


def version():
    """The libfpemu version string (FPEMU_VERSION of the loaded library)."""
    return N.fpemu_version().decode()


def api_version():
    """The binding interface version the loaded library implements."""
    return N.fpemu_api_version()


def library_path():
    """The path (or name) the shared library was loaded from."""
    return N.path


# ---- formats -------------------------------------------------------------------------

_INT_KEYS = {"bits", "container", "pad", "ebits", "mbits", "bias", "p", "emin", "emax"}
_BOOL_KEYS = {"signed", "negzero", "subnormals"}


def _keys(fn):
    out, i = [], 0
    while True:
        k = fn(i)
        if k is None:
            return out
        out.append(k.decode())
        i += 1


_format_cache = {}


def format_info(fmt):
    """Properties of one format (a registry name, an alias or a custom spec):
    name, bits, container, pad, ebits, mbits, bias, p, emin, emax, signed,
    negzero, subnormals, inf, nan, max_finite, min_normal, min_subnormal,
    aliases (a list)."""
    if not isinstance(fmt, str):
        raise FpemuError("format: expected a name, got %r" % (fmt,))
    hit = _format_cache.get(fmt)
    if hit is not None:
        return dict(hit, aliases=list(hit["aliases"]))
    out = {}
    for key in _keys(N.format_key):
        v = ctypes.c_double()
        t = ctypes.c_char_p()
        err = _errbuf()
        if N.format_prop(_b(fmt), _b(key), ctypes.byref(v), ctypes.byref(t), err, len(err)):
            raise FpemuError(err.value.decode())
        if key == "aliases":
            out[key] = [a for a in (t.value or b"").decode().split(",") if a]
        elif t.value is not None:
            out[key] = t.value.decode()
        elif key in _INT_KEYS:
            out[key] = int(v.value)
        elif key in _BOOL_KEYS:
            out[key] = bool(v.value)
        else:
            out[key] = v.value
    _format_cache[fmt] = out
    return dict(out, aliases=list(out["aliases"]))


def formats():
    """Every registry format: {name: format_info(name)}, in the registry's order."""
    names = [N.format_name(i).decode() for i in range(N.format_count())]
    return {n: format_info(n) for n in names}


def _canon(fmt):
    return format_info(fmt)["name"]


_CONTAINER = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _code_dtype(fmt):
    return np.dtype(_CONTAINER[format_info(fmt)["container"]])


# ---- ml_dtypes -------------------------------------------------------------------------

# ml_dtypes type -> the fpemu format of its codes (tests/ check every pair
# code for code against ml_dtypes)
ML_DTYPES_FORMATS = {
    "bfloat16": "bf16",
    "float8_e5m2": "e5m2",
    "float8_e4m3fn": "e4m3",
    "float8_e4m3fnuz": "e4m3fnuz",
    "float8_e5m2fnuz": "e5m2fnuz",
    "float8_e4m3": "custom:e=4,m=3,bias=7,inf=ieee,nan=ieee",
    "float8_e3m4": "e3m4",
    "float8_e4m3b11fnuz": "custom:e=4,m=3,bias=11,inf=no,nan=uz",
    "float8_e8m0fnu": "e8m0",
    "float6_e2m3fn": "e2m3",
    "float6_e3m2fn": "e3m2",
    "float4_e2m1fn": "e2m1",
}
_NUMPY_FORMATS = {"float16": "f16", "float32": "f32", "float64": "f64"}


def _ml():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes


def _dtype_format(dt):
    """The fpemu format whose codes an array of dtype dt holds bit for bit
    (float16 and the ml_dtypes types), or None."""
    dt = np.dtype(dt)
    if dt == np.float16:
        return "f16"
    ml = _ml()
    if ml is not None and dt.name in ML_DTYPES_FORMATS and getattr(ml, dt.name, None) is dt.type:
        return ML_DTYPES_FORMATS[dt.name]
    return None


def ml_dtype(fmt):
    """The NumPy or ml_dtypes dtype whose bit patterns are fmt's codes
    (float16/32/64, bfloat16, float8_*, float6_*, float4_e2m1fn), or None if
    there is none (or ml_dtypes is not installed)."""
    name = _canon(fmt)
    for np_name, f in _NUMPY_FORMATS.items():
        if _canon(f) == name:
            return np.dtype(np_name)
    ml = _ml()
    if ml is None:
        return None
    for ml_name, f in ML_DTYPES_FORMATS.items():
        if hasattr(ml, ml_name) and _canon(f) == name:
            return np.dtype(getattr(ml, ml_name))
    return None


def _native_order(x):
    """x in the machine's byte order and C order (0-d arrays stay 0-d)."""
    if x.dtype.byteorder not in "=|":
        x = x.astype(x.dtype.newbyteorder("="))
    return x if x.flags.c_contiguous else x.copy(order="C")


def _as_array(x, ints_are_values=True):
    """x as an ndarray. Python numbers, lists and tuples are values (an
    integer among them becomes float64 when ints_are_values); NumPy arrays
    and scalars keep their dtype (an integer one holds codes)."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic):
        return np.asarray(x)
    x = np.asarray(x)
    if ints_are_values and x.dtype.kind in "iub":
        x = x.astype(np.float64)
    return x


def _int_codes(x, fmt, what):
    """An integer array as codes of fmt (checked against the field), uint64."""
    info = format_info(fmt)
    w = info["bits"] + info["pad"]
    cmax = (1 << w) - 1
    if x.size:
        lo, hi = int(x.min()), int(x.max())
        if lo < 0 or hi > cmax:
            bad = lo if lo < 0 else hi
            raise FpemuError("%s: %d is not a %s code (%d-bit codes, 0 to %d)" % (what, bad, info["name"], w, cmax))
    return x.astype(np.uint64)


# ---- cast ------------------------------------------------------------------------------


class _Handle:
    """An owned library handle, freed with the object."""

    _free = None
    h = None

    def __init__(self, h):
        self.h = h

    def __del__(self):
        if self.h and self._free:
            type(self)._free(self.h)
            self.h = None


class _Caster(_Handle):
    _free = staticmethod(N.caster_free)

    def __init__(self, fmt, round="rne", sat=False, seed=None, scaling=None, axis=-1, nan="canonical"):
        if not isinstance(fmt, str):
            raise FpemuError("format: expected a name, got %r" % (fmt,))
        err = _errbuf()
        h = N.caster_new(_b(fmt), err, len(err))
        if not h:
            raise FpemuError(err.value.decode())  # it names the format
        super().__init__(h)
        if isinstance(seed, bool) or (seed is not None and not isinstance(seed, numbers.Integral)):
            raise FpemuError("seed %r: expected a non-negative integer below 2^64" % (seed,))
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise FpemuError("axis %r: expected an integer" % (axis,))
        opts = [("round", round), ("nan", nan), ("sat", bool(sat)), ("seed", 0 if seed is None else int(seed)),
                ("scaling", "none" if scaling is None else scaling), ("axis", int(axis))]
        for key, value in opts:
            if not isinstance(value, (str, bool, numbers.Integral)):
                raise FpemuError("%s %r: expected a name" % (key, value))
            if N.caster_set(self.h, _b(key), _b(_text(value))):
                raise FpemuError("%s %r: %s" % (key, value, N.caster_error(self.h).decode()))
        if N.caster_check(self.h):
            raise FpemuError(N.caster_error(self.h).decode())

    def get(self, key):
        buf = ctypes.create_string_buffer(256)
        N.caster_get(self.h, _b(key), buf, len(buf))
        return buf.value.decode()

    def run(self, kind, in_fmt, x, values, codes):
        shape = (ctypes.c_size_t * x.ndim)(*x.shape)
        rc = N.caster_run(self.h, kind, _b(in_fmt) if in_fmt else None, x.ctypes.data, x.ndim, shape,
                          values.ctypes.data if values is not None else None,
                          codes.ctypes.data if codes is not None else None, None)
        if rc:
            raise FpemuError(N.caster_error(self.h).decode())

    def scales(self, shape):
        """The last run's scales for an input of this shape, as decode factors:
        {"scale": float32 array, "scale_2": float32 (nvfp4 only)}, or None
        without a recipe."""
        if N.caster_scales is None:
            raise FpemuError("return_scales needs libfpemu with fpemu_caster_scales (the loaded one is older)")
        dims = (ctypes.c_size_t * len(shape))(*shape)
        sdims, snd = (ctypes.c_size_t * len(shape))(), ctypes.c_int()
        kind = N.caster_scale_layout(self.h, len(shape), dims, ctypes.byref(snd), sdims)
        if kind < 0:
            raise FpemuError(N.caster_error(self.h).decode())
        if kind == 0:
            return None
        fac, tf = ctypes.POINTER(ctypes.c_float)(), ctypes.c_float()
        if N.caster_scales(self.h, ctypes.byref(fac), ctypes.byref(tf)):
            raise FpemuError(N.caster_error(self.h).decode())
        sshape = tuple(sdims[:snd.value])
        n = int(np.prod(sshape, dtype=np.int64))
        out = {"scale": np.ctypeslib.as_array(fac, (n,)).reshape(sshape).copy() if n else np.empty(sshape, np.float32)}
        if self.get("recipe") == "nvfp4":
            out["scale_2"] = np.float32(tf.value)
        return out

    def stats(self):
        n = N.caster_stats_json(self.h, None, 0)
        if n < 0:
            raise FpemuError(N.caster_error(self.h).decode())
        buf = ctypes.create_string_buffer(n + 1)
        N.caster_stats_json(self.h, buf, n + 1)
        return json.loads(buf.value.decode())


def _cast_input(x, src):
    """(input type, codes format, C-contiguous native array) for the caster."""
    x = _native_order(_as_array(x, src is None))
    dt = x.dtype
    own = _dtype_format(dt)
    if src is not None:
        if not isinstance(src, str):
            raise FpemuError("src: expected a format name, got %r" % (src,))
        cdt = _code_dtype(src)
        if dt.kind in "iu":
            return N.CODES, src, _int_codes(x, src, "src %s" % src).astype(cdt)
        if own is not None and dt.itemsize == cdt.itemsize:
            return N.CODES, src, x.view(cdt)  # ml_dtypes bytes read as src's codes, as `fpemu cast --from`
        raise FpemuError("src=%r is for arrays of codes (integers, or %d-byte ml_dtypes arrays); x holds %s"
                         % (src, cdt.itemsize, dt))
    if dt == np.float64:
        return N.F64, None, x
    if dt == np.float32:
        return N.F32, None, x
    if own is not None:
        return N.CODES, own, x.view(np.dtype("u%d" % dt.itemsize))
    if dt.kind in "iub":
        raise FpemuError("an array of %s holds codes: say whose with src=FMT (or pass float values)" % dt)
    raise FpemuError("unsupported dtype %s (expected float64, float32, float16, an ml_dtypes type, "
                     "or integer codes with src=FMT)" % dt)


def _cast(x, fmt, round, sat, seed, scaling, axis, nan, src, want_values, want_codes, counts_only=False):
    c = _Caster(fmt, round=round, sat=sat, seed=seed, scaling=scaling, axis=axis, nan=nan)
    if counts_only:  # no error figures wanted: an unscaled f32 cast is then one array rounding
        N.caster_set(c.h, b"stats", b"counts")
    kind, in_fmt, arr = _cast_input(x, src)
    shape = arr.shape
    if arr.ndim == 0:
        arr = arr.reshape(1)
    values = np.empty(arr.shape, np.float64 if kind == N.F64 else np.float32) if want_values else None
    codes = np.empty(arr.shape, _code_dtype(fmt)) if want_codes else None
    c.run(kind, in_fmt, arr, values, codes)
    if values is not None:
        values = values.reshape(shape)
    if codes is not None:
        codes = codes.reshape(shape)
    return c, values, codes


def cast(x, fmt, round="rne", sat=False, seed=None, scaling=None, axis=-1, codes=False, nan="canonical",
         src=None, out=None, return_stats=False, return_scales=False):
    """Cast every element of x to fmt, as `fpemu cast` does.

    x: float64 (cast in one rounding), float32, float16 or ml_dtypes arrays
    (their values), integer arrays of codes with src=FMT, or Python numbers.
    Returns an array of x's shape: the values after the cast (float64 for a
    float64 input, else float32; dequantised under a scaling recipe), or
    with codes=True the raw codes (uint8/16/32/64 by fmt's container), or
    with out="ml_dtypes" those codes as the ml_dtypes (or NumPy) type of fmt.
    return_stats=True returns (array, cast_stats dict) from the one cast.
    return_scales=True appends the recipe's scales as decode factors (None
    without a recipe): {"scale": float32 array, and for nvfp4 "scale_2"},
    as `fpemu cast --codes` writes NAME_scale and NAME_scale_2 (a code's
    value times its factor, rounded to float32, is the dequantised value;
    docs/cast.md)."""
    if out not in (None, "numpy", "ml_dtypes"):
        raise FpemuError("out %r: expected None, 'numpy' or 'ml_dtypes'" % (out,))
    want_codes = bool(codes) or out == "ml_dtypes"
    c, values, code_arr = _cast(x, fmt, round, sat, seed, scaling, axis, nan, src, not want_codes, want_codes,
                                counts_only=not return_stats)
    if out == "ml_dtypes":
        dt = ml_dtype(fmt)
        if dt is None:
            raise FpemuError("out='ml_dtypes': no NumPy or ml_dtypes type holds %s codes%s"
                             % (format_info(fmt)["name"], "" if _ml() else " (ml_dtypes is not installed)"))
        result = code_arr.view(dt)
    else:
        result = code_arr if want_codes else values
    more = ()
    if return_stats:
        more += (c.stats(),)
    if return_scales:
        shp = np.shape(x) if np.ndim(x) else (1,)
        more += (c.scales(shp),)
    return (result,) + more if more else result


def cast_stats(x, fmt, round="rne", sat=False, seed=None, scaling=None, axis=-1, nan="canonical", src=None):
    """The figures of the cast (the arguments as cast's), exactly as
    `fpemu cast --stats-json` writes them: a dict with format, scaling, n,
    amax, scale, block_scales ({count, min, max} or None), tensor_scale,
    overflow, saturated, flushed, subnormal, nonfinite_in (each with its
    _frac), compared, max_abs_err, max_rel_err, rms_err, sqnr_db. None
    where the JSON has null (not applicable, or not finite: sqnr_db of an
    exact cast)."""
    c, _, _ = _cast(x, fmt, round, sat, seed, scaling, axis, nan, src, False, False)
    return c.stats()


# ---- GEMM ------------------------------------------------------------------------------


class _Gemmer(_Handle):
    _free = staticmethod(N.gemmer_free)

    def __init__(self, model, afmt, bfmt):
        for what, v in (("model", model), ("afmt", afmt), ("bfmt", bfmt)):
            if not isinstance(v, str):
                raise FpemuError("%s: expected a name, got %r" % (what, v))
        err = _errbuf()
        h = N.gemmer_new(_b(model), _b(afmt), _b(bfmt), err, len(err))
        if not h:
            raise FpemuError(err.value.decode())
        super().__init__(h)

    def set(self, key, value):
        if N.gemmer_set(self.h, _b(key), _b(_text(value))):
            raise FpemuError("%s %r: %s" % (key, value, N.gemmer_error(self.h).decode()))

    def get(self, key):
        buf = ctypes.create_string_buffer(1024)
        n = N.gemmer_get(self.h, _b(key), buf, len(buf))
        if n < 0:
            raise FpemuError("gemmer: unknown key %r" % (key,))
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            N.gemmer_get(self.h, _b(key), buf, len(buf))
        return buf.value.decode()

    def stats(self):
        out = {}
        for k in _keys(N.gemmer_stat_key):
            v = ctypes.c_double()
            if N.gemmer_stat(self.h, _b(k), ctypes.byref(v)) == 0:
                out[k] = v.value if k.startswith(("amax_", "scale_")) else int(v.value)
        return out


def _operand(x, name, transposed_ok=False):
    """(kind, array, format of its codes or None): kind 'int' (integer codes),
    'own' (float16 / ml_dtypes: codes of their own format), 'float'. The
    array in C order, or with transposed_ok also a 2-D one whose transpose
    is (numpy's a.T: GEMM operands the library reads as they lie)."""
    x = _as_array(x)
    if not (transposed_ok and x.ndim == 2 and x.T.flags.c_contiguous and x.dtype.byteorder in "=|"):
        x = _native_order(x)
    own = _dtype_format(x.dtype)
    if own is not None:
        return "own", x, own
    if x.dtype.kind in "iu":
        return "int", x, None
    if x.dtype.kind == "f":
        return "float", x, None
    raise FpemuError("%s: unsupported dtype %s" % (name, x.dtype))


def _own_codes(x, own):
    return x.view(np.dtype("u%d" % x.dtype.itemsize)).astype(np.uint64)


def _call_shape(v):
    """call_shape as the library spells it: 'MxNxK' from a string or (M, N, K)."""
    if isinstance(v, str):
        return v
    try:
        m, n, k = v
        if all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in (m, n, k)):
            return "%dx%dx%d" % (m, n, k)
    except (TypeError, ValueError):
        pass
    raise FpemuError("call_shape: expected 'MxNxK' or (M, N, K), got %r" % (v,))


def gemm(a, b, model="h100", afmt=None, bfmt=None, scaling=None, promote=None, outfmt=None, c=None, threads=0,
         sat=True, set=None, return_stats=False, algo="plain", fast_accum=False, call_shape=None, table=None,
         op=None, reduced_precision_reduction=True):
    """D = A x B (+ C) through the emulated GEMM, as `fpemu gemm` computes it.

    a (M x K) and b (K x N): float arrays of values (float64 is rounded to
    float32 first: the GEMM takes f32), quantised to afmt/bfmt per the
    scaling recipe; or integer arrays of codes of afmt/bfmt (used as they
    are, scaling none); float16 and ml_dtypes arrays are codes of their own
    format (afmt/bfmt default to it), taken as values where that is not the
    operand's format. afmt defaults to a's float16/ml_dtypes format and then
    bfmt to b's; a given afmt is bfmt's default, as in `fpemu gemm`.
    promote=None keeps the recipe's (blockwise: 128). set: model parameters
    ({"nfrac": 25}, `fpemu gemm --set`). Returns D as float32 (M x N), with
    return_stats=True (D, telemetry dict).

    algo="cublas": the summation tree PyTorch's cuBLAS call used for these
    formats, outfmt (f32 when None) and shape, from the tree table (table: a
    file; None: the library's built-in copy of emu/cublas-h200.txt), as
    `fpemu gemm --algo cublas` (docs/cublas.md): unscaled inputs, no promote
    or set. fast_accum: fp8 inputs, torch._scaled_mm(use_fast_accum=True).
    reduced_precision_reduction=False: PyTorch's
    allow_{fp16,bf16}_reduced_precision_reduction = False (the split-K
    partials of f16/bf16 outputs stay f32).
    call_shape 'MxNxK' or (M, N, K): a and b are rows and columns of a call
    of that shape (the same K), whose tree is used. op: the call the tree is
    looked up for: "mm" (None: torch.mm/matmul), "mm-ta" (torch.mm(P.t(), Q))
    or "linear" (F.linear(x, W, bias): b is W^T, c the bias broadcast over
    rows). A shape the table does
    not list gets the plain model and a CublasFallbackWarning; the telemetry
    dict (return_stats=True) says which under "cublas": {"resolved":
    "table" or "plain", "table", "table_line", "row_status", "tree"}."""
    ka, A, fa_own = _operand(a, "a", True)
    kb, B, fb_own = _operand(b, "b", True)
    if A.ndim != 2 or B.ndim != 2:
        raise FpemuError("gemm: a and b must be 2-D matrices (got %d-D and %d-D)" % (A.ndim, B.ndim))
    if afmt is None:  # from the dtypes; an afmt given is bfmt's default, as `fpemu gemm --afmt`
        afmt, bfmt = fa_own, bfmt or fb_own or fa_own
        if afmt is None:
            raise FpemuError("gemm: afmt is required (the element format of A, e.g. 'e4m3')")
    bfmt = bfmt or afmt
    M, K = A.shape
    KB, Nn = B.shape
    if K != KB:
        raise FpemuError("gemm: shape mismatch: a is %d x %d and b is %d x %d (inner dimensions %d != %d)"
                         % (M, K, KB, Nn, K, KB))
    lim = (1 << 31) - 65
    if max(M, Nn, K) > lim:
        raise FpemuError("gemm: matrices too large")
    if algo not in ("plain", "cublas"):
        raise FpemuError("algo %r: expected 'plain' or 'cublas'" % (algo,))
    cublas = algo == "cublas"
    if not cublas and (fast_accum or call_shape is not None or table is not None or op is not None
                       or not reduced_precision_reduction):
        raise FpemuError("gemm: %s goes with algo='cublas'"
                         % ("fast_accum" if fast_accum else "call_shape" if call_shape is not None
                            else "table" if table is not None else "op" if op is not None
                            else "reduced_precision_reduction=False"))
    if cublas and N.gemmer_get is None:
        raise FpemuError("gemm: algo='cublas' needs a libfpemu with fpemu_gemmer_get (the loaded %s is older)" % N.path)
    g = _Gemmer(model, afmt, bfmt)
    if scaling is not None:
        g.set("scaling", scaling)
    if promote is not None:
        g.set("promote", promote)
    g.set("threads", threads)
    g.set("sat", bool(sat))
    if outfmt is not None:
        g.set("outfmt", outfmt)
    for k, v in (set or {}).items():
        g.set(k, v)
    if cublas:
        if table is not None:
            g.set("table", str(table))
        g.set("algo", "cublas")
        g.set("fast_accum", bool(fast_accum))
        g.set("reduced_precision_reduction", bool(reduced_precision_reduction))
        if call_shape is not None:
            g.set("call_shape", _call_shape(call_shape))
        if op is not None:
            g.set("op", op)
    a_match = ka == "own" and _canon(fa_own) == _canon(afmt)
    b_match = kb == "own" and _canon(fb_own) == _canon(bfmt)
    use_codes = "int" in (ka, kb) or (a_match and b_match and scaling in (None, "none"))
    Cm = None
    if c is not None:
        Cm = np.ascontiguousarray(np.asarray(c, dtype=np.float32))
        if Cm.shape != (M, Nn):
            raise FpemuError("gemm: c must be %d x %d (got %s)" % (M, Nn, "x".join(map(str, Cm.shape))))
    D = np.empty((M, Nn), np.float32)
    cp = Cm.ctypes.data if Cm is not None else None
    if use_codes:
        ops = []
        for kind, X, own, fmt, nm in ((ka, A, fa_own, afmt, "a"), (kb, B, fb_own, bfmt, "b")):
            if kind == "int":
                ops.append(np.ascontiguousarray(_int_codes(X, fmt, nm)))
            elif kind == "own" and _canon(own) == _canon(fmt):
                ops.append(np.ascontiguousarray(_own_codes(X, own)))
            else:
                raise FpemuError("gemm: a and b must both hold values or both hold codes (%s holds %s values, "
                                 "the other integer codes)" % (nm, X.dtype))
        rc = N.gemmer_run_codes(g.h, M, Nn, K, ops[0].ctypes.data, ops[1].ctypes.data, cp, D.ctypes.data)
    else:
        Af, ta = _laid(A)
        Bf, tb = _laid(B)
        if ta:
            g.set("trans_a", 1)
        if tb:
            g.set("trans_b", 1)
        rc = N.gemmer_run_f32(g.h, M, Nn, K, Af.ctypes.data, Bf.ctypes.data, cp, D.ctypes.data)
    if rc:
        raise FpemuError(N.gemmer_error(g.h).decode())
    info = None
    if cublas:
        info = {k: g.get(k) for k in ("resolved", "table", "table_name", "table_line", "row_status", "tree")}
        info["table_line"] = int(info["table_line"]) if info["table_line"] else None
        if info["resolved"] != "table":
            shape = g.get("call_shape") or "%dx%dx%d" % (M, Nn, K)
            warnings.warn("gemm: algo='cublas': the call %s (%s x %s -> %s%s) is not in the table %s: the plain model, "
                          "one chain over K: %s" % (shape, _canon(afmt), _canon(bfmt), _canon(outfmt) if outfmt else "f32",
                                                    ", fast accum" if fast_accum else "", info["table_name"], info["tree"]),
                          CublasFallbackWarning, stacklevel=2)
    if return_stats:
        st = g.stats()
        if info is not None:
            st["cublas"] = info
        return D, st
    return D


# ---- tensor-core dot products ------------------------------------------------------------

_INT_FORMATS = {"s8": True, "int8": True, "u8": False, "uint8": False}


class _Dotter(_Handle):
    _free = staticmethod(N.dotter_free)

    def __init__(self, model, afmt, bfmt, cfmt, dfmt):
        for what, v in (("model", model), ("afmt", afmt), ("bfmt", bfmt), ("cfmt", cfmt), ("dfmt", dfmt)):
            if v is not None and not isinstance(v, str):
                raise FpemuError("%s: expected a name, got %r" % (what, v))
        err = _errbuf()
        h = N.dotter_new(_b(model), _b(afmt), _b(bfmt), _b(cfmt), _b(dfmt), err, len(err))
        if not h:
            raise FpemuError(err.value.decode())
        super().__init__(h)

    def set(self, key, value):
        if N.dotter_set(self.h, _b(key), _b(_text(value))):
            raise FpemuError("%s %r: %s" % (key, value, N.dotter_error(self.h).decode()))

    def fmt(self, which):
        return N.dotter_format(self.h, _b(which)).decode()


def _dot_codes(x, fmt, what, int_signed=None, width=8):
    """An operand of mma_dot as uint64 codes of fmt."""
    kind, X, own = _operand(x, what)
    if int_signed is not None:  # integer models: s8/u8 values (c: s32)
        if kind != "int":
            raise FpemuError("%s: an integer model takes integer arrays (got %s)" % (what, X.dtype))
        lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if int_signed else (0, (1 << width) - 1)
        if X.size and (int(X.min()) < lo or int(X.max()) > hi):
            raise FpemuError("%s: values must lie in [%d, %d]" % (what, lo, hi))
        return X.astype(np.int64).astype(np.uint64) & np.uint64((1 << width) - 1)
    if kind == "int":
        return _int_codes(X, fmt, what)
    if kind == "own" and _canon(own) == _canon(fmt):
        return _own_codes(X, own)
    if kind == "own":
        X = X.astype(np.float32)
    return cast(X, fmt, codes=True).astype(np.uint64)


def mma_dot(a, b, c=None, model="h100", afmt=None, bfmt=None, cfmt=None, dfmt=None, promote=0, sat=False, set=None,
            codes=False):
    """Tensor-core dot products d = c + sum_i a[..., i] b[..., i] under an MMA
    model, as `fpemu mma` computes them, over the leading (batch) axes of a
    and b (broadcast together with c's shape).

    a, b: float16 / ml_dtypes arrays (codes of their format; without afmt,
    afmt and bfmt default to their formats), integer NumPy arrays (codes of
    afmt/bfmt), or float arrays and Python numbers (cast to afmt/bfmt with
    rne first). c: None (+0), values (cast to cfmt, rne), integer codes of
    cfmt, or an ml_dtypes array. cfmt and dfmt default to each other where
    one is given, else f32 (as `fpemu mma --c --d`). afmt "s8"/"u8" selects
    the integer model: a and b integer values, c and d int32 (sat=True:
    .satfinite). promote: f32 promotion
    every N products. set: model parameters ({"nfrac": 25}). Returns the
    d values (float32 for an f32 d, else float64; int32 for integer
    models), or with codes=True dfmt's codes."""
    A, B = _as_array(a, False), _as_array(b, False)
    fa_own, fb_own = _dtype_format(A.dtype), _dtype_format(B.dtype)
    if afmt is None:  # from the dtypes; an afmt given is bfmt's default, as `fpemu mma --a`
        afmt, bfmt = fa_own, bfmt or fb_own or fa_own
        if afmt is None:
            raise FpemuError("mma_dot: afmt is required (the input format, e.g. 'e4m3')")
    bfmt = bfmt or afmt
    int_model = afmt in _INT_FORMATS
    if not int_model:  # Python numbers are values (an integer NumPy array holds codes)
        A, B = _as_array(a), _as_array(b)
    if A.ndim < 1 or B.ndim < 1:
        raise FpemuError("mma_dot: a and b need at least one axis (the products')")
    if A.shape[-1] != B.shape[-1]:
        raise FpemuError("mma_dot: a and b have %d and %d products" % (A.shape[-1], B.shape[-1]))
    d = _Dotter(model, afmt, bfmt, cfmt, dfmt)
    if sat:
        d.set("sat", True)
    if promote:
        d.set("promote", promote)
    for k, v in (set or {}).items():
        d.set(k, v)
    if int_model:
        ca = _dot_codes(A, None, "a", _INT_FORMATS[afmt])
        cb = _dot_codes(B, None, "b", _INT_FORMATS.get(bfmt, True))
    else:
        ca = _dot_codes(A, d.fmt("a"), "a")
        cb = _dot_codes(B, d.fmt("b"), "b")
    cc = None
    if c is not None:
        c = _as_array(c, not int_model)
        cc = _dot_codes(c, None if int_model else d.fmt("c"), "c", True if int_model else None, 32)
    k = A.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-1], B.shape[:-1], cc.shape if cc is not None else ())
    ca = np.ascontiguousarray(np.broadcast_to(ca, batch + (k,)), dtype=np.uint64)
    cb = np.ascontiguousarray(np.broadcast_to(cb, batch + (k,)), dtype=np.uint64)
    if cc is not None:
        cc = np.ascontiguousarray(np.broadcast_to(cc, batch), dtype=np.uint64)
    nb = int(np.prod(batch, dtype=np.int64))
    out = np.empty(batch, np.uint64)
    rc = N.dotter_run(d.h, nb, k, ca.ctypes.data, cb.ctypes.data, cc.ctypes.data if cc is not None else None,
                      out.ctypes.data)
    if rc:
        raise FpemuError(N.dotter_error(d.h).decode())
    if int_model:
        res = out.astype(np.uint32) if codes else out.astype(np.uint32).view(np.int32)
    elif codes:
        res = out.astype(_code_dtype(d.fmt("d")))
    else:
        res = np.empty(batch, np.float64)
        err = _errbuf()
        if N.decode_f64(_b(d.fmt("d")), out.ctypes.data, nb, res.ctypes.data, err, len(err)):
            raise FpemuError(err.value.decode())
        if _canon(d.fmt("d")) == "f32":
            res = res.astype(np.float32)
    return res[()] if res.ndim == 0 else res


# ---- internals of fpemu.torch (not part of the package's API) ---------------------------
# The bridge calls the library once per GEMM and per cast with arrays it
# already holds as C-contiguous float32: no copies, no checks per call
# beyond the library's, configured handles reused across calls.

_GEMM_STAT_KEYS = ("a_n", "a_overflow", "a_saturated", "a_flushed", "a_subnormal", "a_nonfinite_in", "amax_a",
                   "scale_a", "b_n", "b_overflow", "b_saturated", "b_flushed", "b_subnormal", "b_nonfinite_in",
                   "amax_b", "scale_b", "scale_min_a", "scale_min_b")
_GEMM_STAT_KEYS_B = tuple((k, k.encode()) for k in _GEMM_STAT_KEYS)


class _GemmPlan:
    """A gemmer configured once (model, formats, then options in order) and
    run many times on float32 arrays: D (M x N) = A (M x K) x B (K x N)."""

    def __init__(self, model, afmt, bfmt, options=()):
        self.g = _Gemmer(model, afmt, bfmt)
        for key, value in options:
            self.g.set(key, value)

    def set(self, key, value):
        self.g.set(key, value)

    def run(self, A, B, ta=False, tb=False):
        """D = op(A) op(B): A is M x K, or with ta its transpose stored K x M;
        B is K x N, or with tb stored N x K (the library reads them as they
        lie: gemmer options trans_a and trans_b, which a library without
        them refuses)."""
        M, K = A.shape[::-1] if ta else A.shape
        KB, Nn = B.shape[::-1] if tb else B.shape
        if K != KB or A.dtype != np.float32 or B.dtype != np.float32 or not (
                A.flags.c_contiguous and B.flags.c_contiguous):
            raise FpemuError("gemm: expected C-contiguous float32 A (M x K) and B (K x N), or their transposes "
                             "with ta / tb")
        for key, want in (("trans_a", ta), ("trans_b", tb)):
            if getattr(self, key, False) != want:
                self.g.set(key, int(want))
                setattr(self, key, want)
        D = np.empty((M, Nn), np.float32)
        if N.gemmer_run_f32(self.g.h, M, Nn, K, A.ctypes.data, B.ctypes.data, None, D.ctypes.data):
            raise FpemuError(N.gemmer_error(self.g.h).decode())
        return D

    def stats(self):
        out, v = {}, ctypes.c_double()
        ref = ctypes.byref(v)
        for k, kb in _GEMM_STAT_KEYS_B:
            if N.gemmer_stat(self.g.h, kb, ref) == 0:
                out[k] = v.value
        return out


def _laid(X):
    """A 2-D operand as float32 the library reads without a copy: (X, False)
    when it is C-contiguous, (X.T, True) when it is the transpose of a
    C-contiguous array (numpy's a.T, a Fortran-ordered array) and the
    library's gemmer takes trans_a/trans_b, else a C-contiguous copy."""
    X = np.asarray(X, dtype=np.float32)
    if X.flags.c_contiguous:
        return X, False
    if X.T.flags.c_contiguous and _gemmer_trans():
        return X.T, True
    return np.ascontiguousarray(X), False


_TRANS = None


def _gemmer_trans():
    """Whether the loaded library's gemmer takes trans_a and trans_b."""
    global _TRANS
    if _TRANS is None:
        _TRANS = _gemmer_accepts("trans_a", "1", "none")
    return _TRANS


def _gemmer_accepts(key, value, scaling="given"):
    """Whether the loaded library's gemmer takes option key (after scaling)."""
    try:
        g = _Gemmer("h100", "e4m3", "e4m3")
        g.set("scaling", scaling)
        g.set(key, value)
        return True
    except FpemuError:
        return False


_CAST_STAT_KEYS_B = tuple((k, k.encode()) for k in ("n", "amax", "overflow", "saturated", "flushed", "subnormal",
                                                     "nonfinite_in"))


class _RoundPlan:
    """A caster to fmt (rne, no scaling) configured once and run many times
    on float32 arrays (one handle per thread: handles are not locked)."""

    def __init__(self, fmt, sat=False):
        self.c = _Caster(fmt, sat=sat)
        # the counts alone (a library from before the option computes every figure)
        N.caster_set(self.c.h, b"stats", b"counts")

    def run(self, x):
        """x (C-contiguous float32, any shape) rounded: (values float32,
        {n, amax, overflow, saturated, flushed, subnormal, nonfinite_in})."""
        flat = x.reshape(-1)
        vals = np.empty(flat.shape, np.float32)
        st = dict.fromkeys(("n", "amax", "overflow", "saturated", "flushed", "subnormal", "nonfinite_in"), 0.0)
        if flat.size:
            shape = (ctypes.c_size_t * 1)(flat.size)
            if N.caster_run(self.c.h, N.F32, None, flat.ctypes.data, 1, shape, vals.ctypes.data, None, None):
                raise FpemuError(N.caster_error(self.c.h).decode())
            v = ctypes.c_double()
            ref = ctypes.byref(v)
            for k, kb in _CAST_STAT_KEYS_B:
                if N.caster_stat(self.c.h, kb, ref) >= 0:
                    st[k] = v.value
        return vals.reshape(x.shape), st


def _cast_f32(x, fmt, sat=False):
    """x (C-contiguous float32, any shape) rounded to fmt (rne, no scaling):
    (values float32, {n, amax, overflow, saturated, flushed, subnormal,
    nonfinite_in}) from one library cast."""
    return _RoundPlan(fmt, sat).run(x)


def _delayed_scale(fmt, amax, margin, prev):
    """TransformerEngine DelayedScaling's scale from the amax a history
    reduces to (the library's; None where the loaded library lacks
    fpemu_api_delayed_scale)."""
    if N.delayed_scale is None:
        return None
    out = ctypes.c_double()
    err = _errbuf()
    if N.delayed_scale(_b(fmt), float(amax), float(margin), float(prev), ctypes.byref(out), err, len(err)):
        raise FpemuError(err.value.decode())
    return out.value
