#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""xcheck.py: bin/fpemu against two references outside this repository,
ml_dtypes (JAX's float8/6/4, bfloat16 and e8m0 types) and NumPy (float16),
in round-to-nearest-even, the one mode they have; and min/max/compare
against IEEE 754-2019's rules, which the MPFR reference does not cover.

What is compared (results only: neither library has flags):
  decode   every code -> binary32                       (FMT_to_f32)
  f32      binary32 -> the format: every value, every midpoint between
           neighbours and the binary32 numbers either side of each, the
           overflow threshold and its neighbours, specials, and random bit
           patterns                                           (f32_to_FMT)
  f64      the same from binary64 (NumPy rounds float64 once; ml_dtypes
           rounds it twice, through float32: those cases are counted as the
           reference's errors, see compare())
  add, sub, mul, div   every pair of codes (8 bits and fewer), random and
           near pairs (16 bits)                               (FMT_op)
  sqrt     every code                                          (FMT_sqrt)
  min, max, minimumNumber, maximumNumber, eq, le, lt, eq_signaling,
  le_quiet, lt_quiet: the same pairs (and, for 16 bits, every pair of
  specials: zeros, subnormals, one, max, inf, quiet and signalling NaNs of
  both signs) against IEEE 754-2019's rules written out here (results and
  the invalid flag; NaN results compare as any NaN)

The reference for an operation is the binary32 result (correctly rounded
by NumPy on the host's IEEE hardware) cast to the format by the library.
That is the correctly rounded result: rounding twice to nearest is
innocuous when the first precision is at least 2p + 2 (p <= 11 here:
f16's 11 needs 24, binary32 has 24), for +, -, *, / and sqrt.

Conventions where the libraries differ by design are counted apart and
not compared (they are listed in the report): a NaN operand or result in a
format without NaN (fpemu: the largest finite value, as CUDA's cuda_fp6.h
and cuda_fp4.h deliver, and the invalid flag: docs/semantics.md; ml_dtypes:
the code with only the sign bit set).

Usage: python3 ref/xcheck.py [--quick] [FORMAT...]
Needs numpy and ml_dtypes (pip install numpy ml_dtypes). Exit status 0 when
every compared case agrees, 1 on any mismatch (the first ones are printed),
2 on bad usage or a missing module.
"""
import math
import os
from fractions import Fraction
import sys

try:
    import numpy as np
    import ml_dtypes as md
except ImportError as e:
    sys.stderr.write("xcheck.py: %s; install with: python3 -m pip install numpy ml_dtypes\n" % e)
    sys.exit(2)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xcheck_run import FPEMU, digits, run_fpemu  # noqa: E402


NEEDED = ("bfloat16", "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz", "float6_e3m2fn",
          "float6_e2m3fn", "float4_e2m1fn", "float8_e8m0fnu", "float8_e4m3", "float8_e3m4", "float8_e4m3b11fnuz")
if not all(hasattr(md, t) for t in NEEDED):
    sys.stderr.write("xcheck.py: ml_dtypes %s lacks %s (0.5 or later has them): python3 -m pip install -U ml_dtypes\n" %
                     (md.__version__, ", ".join(t for t in NEEDED if not hasattr(md, t))))
    sys.exit(2)
# fpemu format name or spec, the reference type, code width in bits, whether
# the format has a NaN (when not: NaN cases are a convention, not compared)
FORMATS = [
    ("f16", np.float16, 16, True),
    ("bf16", md.bfloat16, 16, True),
    ("e5m2", md.float8_e5m2, 8, True),
    ("e4m3", md.float8_e4m3fn, 8, True),
    ("e4m3fnuz", md.float8_e4m3fnuz, 8, True),
    ("e5m2fnuz", md.float8_e5m2fnuz, 8, True),
    ("e3m2", md.float6_e3m2fn, 6, False),
    ("e2m3", md.float6_e2m3fn, 6, False),
    ("e2m1", md.float4_e2m1fn, 4, False),
    ("e8m0", md.float8_e8m0fnu, 8, True),
    # ml_dtypes types that are not registry formats: custom specs
    ("custom:e=4,m=3,bias=7,inf=ieee,nan=ieee", md.float8_e4m3, 8, True),
    ("custom:e=3,m=4,bias=3,inf=ieee,nan=ieee", md.float8_e3m4, 8, True),
    ("custom:e=4,m=3,bias=11,inf=no,nan=uz,negzero=no", md.float8_e4m3b11fnuz, 8, True),
]
ARITH_SKIP = {"e8m0"}  # e8m0 arithmetic: fpemu's rules (docs/semantics.md), no counterpart


def ieee_snan(bits, mbits):
    """signalling NaNs of an IEEE-style format: exponent all ones, fraction
    nonzero with its top bit clear"""
    emask = ((1 << (bits - 1 - mbits)) - 1) << mbits
    q, fmask = 1 << (mbits - 1), (1 << mbits) - 1
    return lambda x: ((x & emask) == emask) & ((x & fmask) != 0) & ((x & q) == 0)


# formats with signalling NaNs (the fn/fnuz/e8m0 NaNs are quiet)
SNAN = {"f16": ieee_snan(16, 10), "bf16": ieee_snan(16, 7), "e5m2": ieee_snan(8, 2),
        "custom:e=4,m=3,bias=7,inf=ieee,nan=ieee": ieee_snan(8, 3),
        "custom:e=3,m=4,bias=3,inf=ieee,nan=ieee": ieee_snan(8, 4)}
OVERFLOW = object()  # Check.nearest: beyond the overflow threshold


class Check:
    def __init__(self, name, T, bits, has_nan):
        self.name, self.T, self.bits, self.has_nan = name, T, bits, has_nan
        self.utype = np.uint16 if bits == 16 else np.uint8
        self.ncodes = 1 << bits
        self.rows = []  # (what, compared, not compared, reference wrong, mismatches)
        self.bad = 0

    def decode(self, codes):
        return np.asarray(codes, dtype=self.utype).view(self.T).astype(np.float32)

    def convention(self, nan):
        """the cases not compared: NaN ones (nan, a mask) in a format without NaN"""
        return nan if not self.has_nan else np.zeros(len(nan), bool)

    def encode(self, x):
        return np.asarray(x).astype(self.T).view(self.utype).astype(np.uint64)

    def compare(self, what, got, want, skip, shown=None, exact=None):
        """got, want: codes of the format; NaN codes compare as any NaN.
        exact: a conversion's input values; where the two differ and
        fpemu's result is the input rounded to nearest by exact rational
        arithmetic (or overflows where that overflows) and the reference's
        is not, the reference is wrong (counted and listed apart, not as a
        mismatch)."""
        gv, wv = self.decode(got), self.decode(want)
        gn, wn = np.isnan(gv), np.isnan(wv)
        same = np.where(gn | wn, gn & wn, got == want)
        bad = ~same & ~skip
        referr = np.zeros(len(bad), bool)
        if exact is not None:
            for i in np.flatnonzero(bad):
                r, g, w = self.nearest(exact[i]), float(gv[i]), float(wv[i])
                if r is OVERFLOW:  # fpemu overflowed (inf, NaN, or max without either); the reference did not
                    over = not math.isfinite(g) or (not self.has_nan and abs(g) == self.values()[-1])
                    referr[i] = over and math.isfinite(w) and (self.has_nan or abs(w) != self.values()[-1])
                else:
                    referr[i] = r is not None and g == r and w != r
            for i in np.flatnonzero(referr)[:3]:
                print("  REFERENCE ERROR %s %s: %s (%r) -> fpemu %X (%r), reference %X (%r): fpemu is nearer" %
                      (self.name, what, shown(i) if shown else i, exact[i], int(got[i]), float(gv[i]),
                       int(want[i]), float(wv[i])))
        bad &= ~referr
        nbad = int(bad.sum())
        self.rows.append((what, int((~skip).sum()), int(skip.sum()), int(referr.sum()), nbad))
        if nbad:
            self.bad += nbad
            for i in np.flatnonzero(bad)[:5]:
                print("  MISMATCH %s %s: %s -> fpemu %X, reference %X" %
                      (self.name, what, shown(i) if shown else i, int(got[i]), int(want[i])))

    def nearest(self, x):
        """x rounded to nearest by exact rational arithmetic: the value, or
        None when x is not finite, overflows, or is a tie (not judged)."""
        if not math.isfinite(x):
            return None
        v = self.values()
        if not hasattr(self, "_grid"):
            g = [Fraction(0)] if self.decode([0])[0] == 0 else []
            self._grid = g + [Fraction(t) for t in v]
            self._top = Fraction(v[-1]) + (Fraction(v[-1]) - Fraction(v[-2])) / 2
            self._gridf = np.array([float(t) for t in self._grid])
        ax, g = abs(Fraction(x)), self._grid
        if ax > self._top:
            return OVERFLOW
        if ax == self._top:
            return None
        k = int(np.searchsorted(self._gridf, abs(x), side="right"))  # exact: every grid value is a double
        if k == 0:  # below the least value of a format without zero
            return float(g[0]) if x >= 0 else -float(g[0])
        lo, hi = g[k - 1], g[min(k, len(g) - 1)]
        if ax - lo == hi - ax and lo != hi:
            return None
        r = lo if ax - lo < hi - ax else hi
        return float(r) if x >= 0 else -float(r)

    def values(self):
        """the format's positive finite values, ascending (float64)"""
        if not hasattr(self, "_values"):
            v = self.decode(np.arange(self.ncodes)).astype(np.float64)
            self._values = np.unique(v[np.isfinite(v) & (v > 0)])
        return self._values


# The source types of the casts: numpy type, its bits' integer type, hex
# digits, and the specials added to every format's grid.
SOURCES = (("f32", np.float32, np.uint32, 8, (0, np.inf, np.nan, np.finfo(np.float32).max, np.finfo(np.float32).tiny, 1e-45)),
           ("f64", np.float64, np.uint64, 16, (0, np.inf, np.nan, 1e300, 1e-300)))


def cast_inputs(c, rng, quick, ftype, utype, specials):
    """every value of the format, every midpoint, the overflow threshold and
    a few below the least value, each with its ftype neighbours; specials;
    both signs; random bit patterns"""
    v = c.values()
    mids = (v[:-1] + v[1:]) / 2
    top = v[-1] + (v[-1] - v[-2]) / 2  # overflow threshold (rne)
    x = np.concatenate([v, mids, [top, 2 * v[-1], v[0] / 2, v[0] / 4, 3 * v[0] / 4]]).astype(ftype)
    x = np.concatenate([x, np.nextafter(x, ftype(np.inf)), np.nextafter(x, ftype(0)), np.array(specials, dtype=ftype)])
    x = np.concatenate([x, -x])
    nbits = np.dtype(utype).itemsize * 8
    r = rng.integers(0, 1 << nbits, size=20000 if quick else 200000, dtype=np.uint64).astype(utype).view(ftype)
    return np.concatenate([x, r])


def pairs(c, rng, quick):
    if c.bits <= 8:
        a, b = np.meshgrid(np.arange(c.ncodes), np.arange(c.ncodes), indexing="ij")
        return a.ravel().astype(np.uint64), b.ravel().astype(np.uint64)
    n = 30000 if quick else 300000
    a = rng.integers(0, c.ncodes, size=n, dtype=np.uint64)
    b = rng.integers(0, c.ncodes, size=n, dtype=np.uint64)
    # near pairs: exponents close (cancellation, carries, ties)
    a2 = rng.integers(0, c.ncodes, size=n, dtype=np.uint64)
    b2 = (a2 ^ (rng.integers(0, 1 << 10, size=n, dtype=np.uint64) | (rng.integers(0, 2, size=n, dtype=np.uint64) << 15))) & (c.ncodes - 1)
    # specials crossed: zeros, subnormals, the least normal, one, the
    # largest finite, inf, quiet and signalling NaNs, of both signs
    m = 10 if c.T is np.float16 else 7
    e = (c.ncodes // 2 - 1) >> m << m
    sp = [0, 1, 2, 1 << m, (e >> 1) & e, e - 1, e, e | 1, e | 1 << (m - 1), e | 1 << (m - 1) | 1]
    sp = np.array(sp + [x | c.ncodes // 2 for x in sp], dtype=np.uint64)
    a3, b3 = (x.ravel() for x in np.meshgrid(sp, sp, indexing="ij"))
    return np.concatenate([a, a2, a3]), np.concatenate([b, b2, b3])


INVALID = 0x10


def check_minmax_compare(c, a, b, snan):
    """minimum, maximum, minimumNumber, maximumNumber and the six TestFloat
    comparisons of every given pair against IEEE 754-2019 (sections 5.11 and
    9.6) written out here: results and flags (invalid is the only one)."""
    va, vb = c.decode(a).astype(np.float64), c.decode(b).astype(np.float64)
    na, nb = np.isnan(va), np.isnan(vb)
    sa, sb = snan(a), snan(b)
    neg = lambda code, v: (v < 0) | ((v == 0) & (c.decode(code).view(np.uint32) >> 31 == 1))
    a_first = (va < vb) | ((va == vb) & neg(a, va))  # a below b, -0 below +0
    b_first = (vb < va) | ((va == vb) & neg(b, vb) & ~neg(a, va))
    nanv = np.full(len(a), -1, dtype=np.int64)  # any NaN
    ai, bi = a.astype(np.int64), b.astype(np.int64)
    anynan, anysnan = na | nb, sa | sb
    want = {
        "min": (np.where(anynan, nanv, np.where(b_first, bi, ai)), anysnan),
        "max": (np.where(anynan, nanv, np.where(a_first, bi, ai)), anysnan),
        "minimumNumber": (np.where(na & nb, nanv, np.where(na, bi, np.where(nb, ai, np.where(b_first, bi, ai)))), anysnan),
        "maximumNumber": (np.where(na & nb, nanv, np.where(na, bi, np.where(nb, ai, np.where(a_first, bi, ai)))), anysnan),
        "eq": ((va == vb).astype(np.int64), anysnan),
        "le_quiet": ((va <= vb).astype(np.int64), anysnan),
        "lt_quiet": ((va < vb).astype(np.int64), anysnan),
        "eq_signaling": ((va == vb).astype(np.int64), anynan),
        "le": ((va <= vb).astype(np.int64), anynan),
        "lt": ((va < vb).astype(np.int64), anynan),
    }
    w = digits(c.bits)
    for op, (res, inv) in want.items():
        got, fl = run_fpemu("%s_%s" % (c.name, op), [a, b], [w, w], with_flags=True)
        gi = got.astype(np.int64)
        if op in ("min", "max", "minimumNumber", "maximumNumber"):
            gnan = np.isnan(c.decode(got))
            ok = np.where(res < 0, gnan, gi == res)
        else:
            ok = gi == res
        ok &= fl == np.where(inv, INVALID, 0)
        nbad = int((~ok).sum())
        c.rows.append((op + " (IEEE 754 rules)", len(a), 0, 0, nbad))
        c.bad += nbad
        for i in np.flatnonzero(~ok)[:5]:
            print("  MISMATCH %s %s: %X %X -> fpemu %X flags %02X, IEEE 754 %s flags %02X" %
                  (c.name, op, a[i], b[i], got[i], fl[i], "NaN" if res[i] < 0 else "%X" % res[i],
                   INVALID if inv[i] else 0))


def check_format(name, T, bits, has_nan, quick, rng):
    c = Check(name, T, bits, has_nan)
    w = digits(bits)
    codes = np.arange(c.ncodes, dtype=np.uint64)

    # decode: binary32 bits, NaN as any NaN
    got = run_fpemu("%s_to_f32" % name, [codes], [w]).astype(np.uint32).view(np.float32)
    want = c.decode(codes)
    gn, wn = np.isnan(got), np.isnan(want)
    same = np.where(gn | wn, gn & wn, got.view(np.uint32) == want.view(np.uint32))
    c.rows.append(("decode", len(codes), 0, 0, int((~same).sum())))
    c.bad += int((~same).sum())
    for i in np.flatnonzero(~same)[:5]:
        print("  MISMATCH %s decode: %X -> fpemu %r, reference %r" % (name, i, got[i], want[i]))

    with np.errstate(all="ignore"):
        for src, ftype, utype, wd, specials in SOURCES:
            x = cast_inputs(c, rng, quick, ftype, utype, specials)
            xb = x.view(utype)
            got = run_fpemu("%s_to_%s" % (src, name), [xb.astype(np.uint64)], [wd])
            c.compare("from " + src, got, c.encode(x), c.convention(np.isnan(x)),
                      lambda i: "%0*X" % (wd, xb[i]), x.astype(np.float64))

        if name in ARITH_SKIP:
            return c
        a, b = pairs(c, rng, quick)
        fa, fb = c.decode(a), c.decode(b)
        for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)):
            r = f(fa, fb)  # binary32, correctly rounded
            skip = c.convention(np.isnan(r) | np.isnan(fa) | np.isnan(fb))
            c.compare(op, run_fpemu("%s_%s" % (name, op), [a, b], [w, w]), c.encode(r), skip,
                      lambda i: "%X %X" % (a[i], b[i]))
        if quick and len(a) > 20000:  # a sample of the pairs, all of them in the full run
            k = rng.choice(len(a), 20000, replace=False)
            a, b = a[k], b[k]
        check_minmax_compare(c, a, b, SNAN.get(name, lambda x: np.zeros(len(x), bool)))
        r = np.sqrt(c.decode(codes))
        c.compare("sqrt", run_fpemu("%s_sqrt" % name, [codes], [w]), c.encode(r), c.convention(np.isnan(r)),
                  lambda i: "%X" % i)
    return c


def main(argv):
    quick = "--quick" in argv
    names = [a for a in argv if not a.startswith("--")]
    unknown = [n for n in names if n not in [f[0] for f in FORMATS]]
    if unknown or any(a.startswith("--") and a != "--quick" for a in argv):
        sys.stderr.write("usage: xcheck.py [--quick] [FORMAT...]; FORMAT one of: %s\n" %
                         ", ".join(f[0] for f in FORMATS))
        return 2
    if not os.access(FPEMU, os.X_OK):
        sys.stderr.write("xcheck.py: %s is missing (run make)\n" % FPEMU)
        return 2
    rng = np.random.default_rng(20261122)
    print("fpemu against ml_dtypes %s and NumPy %s, rne%s" % (md.__version__, np.__version__, " (quick)" if quick else ""))
    print("| format | reference | check | compared | not compared (convention) | reference wrong | mismatches |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    total = bad = referr = 0
    for name, T, bits, has_nan in FORMATS:
        if names and name not in names:
            continue
        c = check_format(name, T, bits, has_nan, quick, rng)
        ref = "numpy.float16" if T is np.float16 else "ml_dtypes." + T.__name__
        for what, n, s, re, nb in c.rows:
            print("| %s | %s | %s | %d | %d | %d | %d |" % (name, ref, what, n, s, re, nb))
            total += n
            referr += re
        bad += c.bad
    print("total: %d cases compared, %d where the reference is wrong (fpemu nearer), %d mismatches" % (total, referr, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
