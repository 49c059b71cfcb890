#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""xcheck_gfloat.py: bin/fpemu's conversions against Graphcore's gfloat
(https://github.com/graphcore-research/gfloat), a reference outside this
repository that has what ml_dtypes lacks: every rounding mode, saturation,
stochastic rounding and the IEEE P3109 binary8pP formats (the fnuz formats
too, which are P3109's finite-domain binary8p4 and binary8p3).

What is compared (values: neither side's flags):
  decode   every code -> binary64                          (FMT_to_f64)
  modes    binary64 -> the format in rne, rna, rtz, rup, rdn, with and
           without --sat: every value of the format, every midpoint between
           neighbours (zero included) and the doubles either side of each,
           the overflow threshold, the largest finite value plus one ulp and
           their neighbours, values under half the least one, specials, and
           random doubles over the whole range; both signs  (f64_to_FMT)
  arith    add, sub, mul in the same modes, with and without --sat: every
           pair of finite codes (8 bits; e8m0 aside, whose arithmetic has
           fpemu's own rules), 200,000 random and 200,000 near pairs (16
           bits); fma (mulAdd) on 200,000 random triples; where the exact
           result is a double (every product; sums where TwoSum leaves no
           error), gfloat rounding that exact value (an exact zero sum of
           opposite signs being -0 in rdn)                (FMT_op)
  sr       binary64 -> the format in sr with R = 3 and 8 random bits, on
           values whose fraction of an ulp has at most R bits (the two
           libraries' rules agree exactly there: gfloat rounds the fraction to
           R bits first, fpemu compares the draw with it rounded up). fpemu's
           draw for line i is fpemu_random64(seed, i) (computed here, as
           emu/internal.h defines it; docs/semantics.md); gfloat's srbits
           is its top R bits complemented (gfloat rounds away iff
           frac x 2^R + srbits >= 2^R,
           fpemu iff r < frac x 2^R).

gfloat is used through its vectorised round_ndarray: its scalar round_float
rounds ties-to-away wrongly just below a midpoint (it tests delta + 0.5 >=
1.0 in binary64, which rounds up for delta = 0.5 - 2^-54).

Where the two differ, the input rounded by exact rational arithmetic under
the rules of docs/semantics.md (IEEE 754-2019 clause 4 rounding extended
to the small formats; written out in exact_round below) decides: if
fpemu's result is that and gfloat's is not, gfloat is counted wrong (listed
apart, not as a mismatch). exact_round is checked in turn on a sample of
the cases where the libraries agree (300 a row, 20,000 in the full run; 100
and 2,000 for the arithmetic rows).

Not compared, by convention: NaN inputs (both give a NaN; payloads differ
by design), negative inputs to the unsigned e8m0, for formats with neither
infinity nor NaN (FP6, FP4) without --sat, inputs that overflow (gfloat
raises an error; fpemu saturates, as CUDA's cuda_fp6.h/cuda_fp4.h do:
docs/semantics.md), and sums whose
exact value is not a double (there is no input to give gfloat).

Usage: python3 ref/xcheck_gfloat.py [--quick] [FORMAT...]
Needs numpy and gfloat >= 0.5 (python3 -m pip install numpy gfloat). Exit
status 0 when every compared case agrees, 1 on any mismatch (the first ones
are printed), 2 on bad usage or a missing module.
"""
import math
import os
import sys
from fractions import Fraction

try:
    import numpy as np
    import gfloat
    from gfloat import RoundMode, decode_float, round_ndarray
    from gfloat import formats as gf
    from gfloat.types import Domain, Signedness
except ImportError as e:
    sys.stderr.write("xcheck_gfloat.py: %s; install with: python3 -m pip install numpy gfloat\n" % e)
    sys.exit(2)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xcheck_run import FPEMU, digits, run_fpemu  # noqa: E402

FORMATS = [("f16", gf.format_info_binary16), ("bf16", gf.format_info_bfloat16),
           ("e5m2", gf.format_info_ocp_e5m2), ("e4m3", gf.format_info_ocp_e4m3),
           ("e3m2", gf.format_info_ocp_e3m2), ("e2m3", gf.format_info_ocp_e2m3),
           ("e2m1", gf.format_info_ocp_e2m1), ("e8m0", gf.format_info_ocp_e8m0)]
for _p in range(1, 8):
    FORMATS.append(("binary8p%de" % _p, gf.format_info_p3109(8, _p, Signedness.Signed, Domain.Extended)))
    FORMATS.append(("binary8p%df" % _p, gf.format_info_p3109(8, _p, Signedness.Signed, Domain.Finite)))
# gfloat has no fnuz formats by name; they are P3109's finite-domain
# binary8p4 and binary8p3 (bias 8 and 16, NaN 0x80, no -0, no inf)
FORMATS.append(("e4m3fnuz", gf.format_info_p3109(8, 4, Signedness.Signed, Domain.Finite)))
FORMATS.append(("e5m2fnuz", gf.format_info_p3109(8, 3, Signedness.Signed, Domain.Finite)))

MODES = (("rne", RoundMode.TiesToEven), ("rna", RoundMode.TiesToAway), ("rtz", RoundMode.TowardZero),
         ("rup", RoundMode.TowardPositive), ("rdn", RoundMode.TowardNegative))
SR_BITS = (3, 8)
SR_SEED = 20261122
U64 = (1 << 64) - 1


def random64(seed, counters):
    """fpemu_random64(seed, counter) for an array of counters
    (docs/semantics.md; emu/internal.h): two rounds of SplitMix64-style mixing."""
    with np.errstate(over="ignore"):
        c = np.asarray(counters, dtype=np.uint64)
        s = np.full(c.shape, seed & U64, dtype=np.uint64)
        z = s * np.uint64(0x9E3779B97F4A7C15) + (c + np.uint64(1)) * np.uint64(0xD1B54A32D192ED03)
        z ^= z >> np.uint64(31)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
        z += s ^ np.uint64(0x2545F4914F6CDD1D)
        z ^= z >> np.uint64(29)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        return z ^ (z >> np.uint64(32))


class Fmt:
    def __init__(self, name, fi):
        self.name, self.fi, self.bits = name, fi, fi.bits
        self.w = digits(self.bits)
        self.ncodes = 1 << self.bits
        self.vals = np.array([decode_float(fi, c).fval for c in range(self.ncodes)], dtype=np.float64)
        fin = np.isfinite(self.vals)
        self.has_inf = bool(np.isinf(self.vals).any())
        self.has_nan = bool(np.isnan(self.vals).any())
        self.has_nz = bool(((self.vals == 0) & np.signbit(self.vals)).any())
        self.signed = bool((self.vals[fin] < 0).any())
        # the grid: non-negative finite values ascending, with a code's parity each
        pos = sorted({float(v) for v in self.vals[fin] if v >= 0})
        self.grid = [Fraction(v) for v in pos]
        self.gridf = np.array(pos)
        code_of = {}
        for c in range(self.ncodes):
            v = float(self.vals[c])
            if math.isfinite(v) and v >= 0 and not (v == 0 and math.copysign(1, v) < 0):
                code_of.setdefault(v, c)
        self.parity = [code_of[v] & 1 for v in pos]
        self.max = self.grid[-1]
        # the next value past max with the exponent range unbounded above
        e = math.frexp(pos[-1])[1] - 1
        self.virtual = self.max + Fraction(2) ** (e - (fi.precision - 1))

    def same(self, a, b):
        """values a, b (float64 arrays) equal, NaN as any NaN, zeros' signs
        compared where the format has -0"""
        an, bn = np.isnan(a), np.isnan(b)
        eq = (a == b) & (~self.has_nz | (np.signbit(a) == np.signbit(b)) | (a != 0))
        return np.where(an | bn, an & bn, eq)

    def overflow_value(self, neg, sat):
        if sat:
            m = float(self.max)
        elif self.has_inf:
            m = math.inf
        elif self.has_nan:
            return math.nan
        else:
            m = float(self.max)  # no inf, no NaN: fpemu saturates (not compared)
        return -m if neg else m

    def exact_round(self, x, mode, sat):
        """x (a finite double or +-inf) rounded to the format by exact rational
        arithmetic, IEEE 754-2019 clause 4 as docs/semantics.md extends it:
        round with the exponent range unbounded
        above (so past max lies self.virtual), then overflow; ties to even
        to the even significand, and at precision 1, where both are 1, to
        the larger (IEEE 754-2019 4.3.1; docs/semantics.md); below the least
        value of a format without zero (e8m0), that value in every mode. None
        for negative inputs to an unsigned format (not judged)."""
        neg = math.copysign(1, x) < 0
        if neg and not self.signed:
            return None
        if math.isinf(x):
            return self.overflow_value(neg, sat) if (sat or not self.has_inf) else x
        a = abs(Fraction(x))
        g = self.grid
        if a >= self.virtual:  # rounds past max whatever the mode, but toward zero
            toward_zero = mode == "rtz" or mode == ("rup" if neg else "rdn")
            return (-float(self.max) if neg else float(self.max)) if toward_zero else self.overflow_value(neg, sat)
        if a >= self.max:
            lo, hi, plo = self.max, self.virtual, self.parity[-1]
        else:
            k = int(np.searchsorted(self.gridf, abs(x), side="right"))  # exact: grid values are doubles
            if k == 0:  # below the least value of a format without zero (e8m0): that value (docs/semantics.md)
                return float(g[0])
            lo, plo = g[k - 1], self.parity[k - 1]
            hi = g[k] if g[k - 1] != a else g[k - 1]
        if a == lo:
            r = lo
        else:
            up_mag = {"rtz": False, "rup": not neg, "rdn": neg}.get(mode)
            if up_mag is None:  # nearest
                d_lo, d_hi = a - lo, hi - a
                if d_lo < d_hi:
                    up_mag = False
                elif d_lo > d_hi:
                    up_mag = True
                elif mode == "rna":
                    up_mag = True
                elif self.fi.precision == 1:  # both significands are 1: IEEE 754-2019 4.3.1 takes the larger
                    up_mag = lo != 0
                else:
                    up_mag = plo == 1  # to the even significand: lo's last bit is its code's
            r = hi if up_mag else lo
        if r == self.virtual:
            return self.overflow_value(neg, sat)
        v = float(r)
        if v == 0:
            return -0.0 if neg and self.has_nz else 0.0
        return -v if neg else v


def inputs(f, rng, quick):
    """binary64 inputs of the mode checks (non-negative; the caller adds -x)"""
    g = f.gridf
    if quick and len(g) > 3000:
        g = np.unique(np.concatenate([g[:500], g[-500:], rng.choice(g, 2000, replace=False)]))
    mids = (g[:-1] + g[1:]) / 2
    top = float(f.max) + float(f.virtual - f.max) / 2
    pts = [g, mids, np.nextafter(mids, 0), np.nextafter(mids, np.inf), np.nextafter(g, 0), np.nextafter(g, np.inf),
           np.array([top, np.nextafter(top, 0), np.nextafter(top, np.inf), float(f.virtual), 2 * float(f.virtual),
                     1e300, np.finfo(np.float64).max, np.inf, 5e-324])]
    least = g[g > 0][0]
    pts.append(least * np.array([0.5, 0.25, 0.75, 1.5]))
    pts.append(np.nextafter(least / 2, np.array([0.0, np.inf])))
    n = 2000 if quick else 200000
    lo, hi = math.frexp(least)[1] - 4, math.frexp(float(f.virtual))[1] + 2
    pts.append(np.ldexp(1 + rng.random(n), rng.integers(lo, hi, n)))
    x = np.unique(np.concatenate(pts))
    return x[x >= 0]


def sr_inputs(f, R, rng, quick):
    """non-negative doubles with at most R bits of fraction of an ulp:
    lo + (hi - lo) j / 2^R between neighbours, the last pair being (max,
    the value past it)"""
    g = [float(v) for v in f.grid] + [float(f.virtual)]
    idx = np.arange(len(g) - 1)
    if quick and len(idx) > 2000:
        idx = np.unique(np.concatenate([idx[:200], idx[-200:], rng.choice(idx, 1600, replace=False)]))
    reps = 4 if quick else 16
    lo = np.repeat(np.array(g)[idx], reps)
    hi = np.repeat(np.array(g)[idx + 1], reps)
    j = rng.integers(0, 1 << R, len(lo))
    x = lo + (hi - lo) * j / float(1 << R)  # exact: p + R <= 53 bits, quanta far above 2^-1074
    return x[x > 0]


class Report:
    def __init__(self):
        self.rows, self.bad, self.total, self.referr = [], 0, 0, 0

    def add(self, f, what, compared, skipped, referr, bad):
        self.rows.append((f.name, what, compared, skipped, referr, bad))
        self.total += compared
        self.referr += referr
        self.bad += bad


def compare(rep, f, what, x, got, want, skip, mode=None, sat=False, rng=None, sample=0):
    """got, want: values; where they differ, exact_round (deterministic
    modes) decides whether gfloat is wrong. exact_round is itself checked
    against both libraries on a sample of the cases where they agree: a
    difference there is counted as a mismatch (the rules written here would
    be wrong, or both libraries)."""
    bad = ~f.same(got, want) & ~skip
    referr = np.zeros(len(x), bool)
    if mode is not None and sample:
        agree = np.flatnonzero(~bad & ~skip)
        for i in (rng.choice(agree, sample, replace=False) if len(agree) > sample else agree):
            r = f.exact_round(float(x[i]), mode, sat)
            if r is not None and not f.same(got[i:i + 1], np.array([r]))[0]:
                bad[i] = True
                print("  EXACT RULES DIFFER %s %s: %r -> both %r, exact_round %r" % (f.name, what, float(x[i]), float(got[i]), r))
    if mode is not None:
        for i in np.flatnonzero(bad):
            r = f.exact_round(float(x[i]), mode, sat)
            if r is not None:
                rr = np.array([r])
                referr[i] = f.same(got[i:i + 1], rr)[0] and not f.same(want[i:i + 1], rr)[0]
        for i in np.flatnonzero(referr)[:3]:
            alien = math.isfinite(want[i]) and not (f.vals == want[i]).any()
            print("  REFERENCE ERROR %s %s: %r -> fpemu %r, gfloat %r (exact: fpemu's%s)" %
                  (f.name, what, float(x[i]), float(got[i]), float(want[i]),
                   "; gfloat's is not a value of the format" if alien else ""))
    bad &= ~referr
    for i in np.flatnonzero(bad)[:5]:
        print("  MISMATCH %s %s: %r (%016X) -> fpemu %r, gfloat %r" %
              (f.name, what, float(x[i]), int(np.float64(x[i]).view(np.uint64)), float(got[i]), float(want[i])))
    rep.add(f, what, int((~skip).sum()), int(skip.sum()), int(referr.sum()), int(bad.sum()))


def gfloat_round(f, x, rm, sat, srbits=None, srnumbits=0):
    """round_ndarray, which raises for the whole array when any element
    overflows in a format without inf and NaN (not sat): then NaN for the
    elements that raise. Those at or past the value after max (inf
    included) raise unless the mode rounds them toward zero, where gfloat
    gives max (its sat result); the few between max and it go one by one."""
    try:
        return round_ndarray(f.fi, x, rm, sat, srbits, srnumbits)
    except ValueError:
        pass
    sr = (lambda m: None) if srbits is None else (lambda m: srbits[m])
    out = np.full(len(x), np.nan)
    inside = np.abs(x) <= float(f.max)
    out[inside] = round_ndarray(f.fi, x[inside], rm, sat, sr(inside), srnumbits)
    far = np.abs(x) >= float(f.virtual)
    tz = {RoundMode.TowardZero: np.ones(len(x), bool), RoundMode.TowardPositive: np.signbit(x),
          RoundMode.TowardNegative: ~np.signbit(x)}.get(rm, np.zeros(len(x), bool))
    keep = far & tz & np.isfinite(x)
    out[keep] = round_ndarray(f.fi, x[keep], rm, True, sr(keep), srnumbits)
    for i in np.flatnonzero(~inside & ~far):
        try:
            out[i] = round_ndarray(f.fi, x[i:i + 1], rm, sat, None if srbits is None else srbits[i:i + 1], srnumbits)[0]
        except ValueError:
            pass
    return out


def row(rep, f, what, op, operands, widths, args, gx, rm, sat, skip, mode=None, srbits=None, R=0, rng=None, sample=0):
    """one row: fpemu run OP over the operands (options args, --sat with
    sat) against gfloat rounding gx in rm; a format with neither inf nor
    NaN skips, without sat, what gfloat raises for (NaN from gfloat_round)"""
    gcodes = run_fpemu(op, operands, widths, extra=args + (["--sat"] if sat else [])).astype(np.int64)
    got = f.vals[gcodes]
    with np.errstate(all="ignore"):
        want = gfloat_round(f, gx, rm, sat, srbits, R)
    if not f.has_inf and not f.has_nan and not sat:
        skip = skip | np.isnan(want)  # gfloat raises: no inf, no NaN (convention)
    compare(rep, f, what + (" sat" if sat else ""), gx, got, want, skip, mode, sat, rng, sample)


def check_format(f, rng, quick, rep):
    codes = np.arange(f.ncodes, dtype=np.uint64)
    got = run_fpemu("%s_to_f64" % f.name, [codes], [f.w]).view(np.float64)
    compare(rep, f, "decode", got, got, f.vals, np.zeros(f.ncodes, bool))

    xp = inputs(f, rng, quick)
    x = np.concatenate([xp, -xp, [np.nan]])
    skip = np.isnan(x) | ((x < 0) & (not f.signed))
    for mname, rm in MODES:
        for sat in (False, True):  # (an inf input that gfloat raises for gives NaN there too)
            row(rep, f, mname, "f64_to_%s" % f.name, [x.view(np.uint64)], [16], ["--round", mname], x, rm, sat, skip,
                mname, rng=rng, sample=300 if quick else 20000)

    for R in SR_BITS:
        if f.fi.precision + R > 53:
            continue
        xp = sr_inputs(f, R, rng, quick)
        x = np.concatenate([xp, -xp]) if f.signed else xp
        draws = random64(SR_SEED, np.arange(len(x), dtype=np.uint64)) >> np.uint64(64 - R)
        srbits = ((1 << R) - 1 - draws.astype(np.int64)).astype(np.int64)
        args = ["--round", "sr", "--sr-bits", str(R), "--seed", str(SR_SEED)]
        for sat in (False, True):
            row(rep, f, "sr R=%d" % R, "f64_to_%s" % f.name, [x.view(np.uint64)], [16], args, x, RoundMode.Stochastic,
                sat, np.zeros(len(x), bool), srbits=srbits, R=R)


def arith_pairs(f, rng, quick):
    """operand codes: every pair of finite codes (8 bits and fewer; 4,000
    of them in the quick form), or 200,000 random pairs and as many near
    ones (16 bits; 1,000 each in the quick form)"""
    fin = np.flatnonzero(np.isfinite(f.vals)).astype(np.uint64)
    if f.bits <= 8:
        a, b = np.repeat(fin, len(fin)), np.tile(fin, len(fin))
        if quick and len(a) > 4000:
            k = rng.choice(len(a), 4000, replace=False)
            a, b = a[k], b[k]
        return a, b
    n = 1000 if quick else 200000
    a = rng.choice(fin, n)
    near = (a.astype(np.int64) + rng.integers(-40, 41, n)) % f.ncodes
    near = near.astype(np.uint64)
    near = np.where(np.isfinite(f.vals[near]), near, a)
    return np.concatenate([a, a]), np.concatenate([rng.choice(fin, n), near ^ np.uint64(rng.integers(0, 2) << (f.bits - 1))])


def two_sum_exact(x, y, s):
    """s = x + y (binary64) is the exact sum: finite, TwoSum's error zero"""
    bv = s - x
    return np.isfinite(s) & ((x - (s - bv)) + (y - bv) == 0)


def check_arith(f, rng, quick, rep):
    """add, sub, mul and fma (mulAdd) of finite operands whose exact result
    is a double (every product here; sums where TwoSum leaves no error),
    which gfloat then rounds: the correctly rounded result in every mode"""
    a, b = arith_pairs(f, rng, quick)
    fin = np.flatnonzero(np.isfinite(f.vals)).astype(np.uint64)
    nt = 2000 if quick else 200000
    t3 = [rng.choice(fin, nt) for _ in range(3)]
    for op in ("add", "sub", "mul", "mulAdd"):
        ops = t3 if op == "mulAdd" else [a, b]
        x, y = f.vals[ops[0]], f.vals[ops[1]]
        yy = -y if op == "sub" else y
        with np.errstate(all="ignore"):
            if op == "mul":
                r = x * y
                exact = np.isfinite(r)
            elif op == "mulAdd":
                p, z = x * y, f.vals[ops[2]]  # the product is exact
                r = p + z
                exact = np.isfinite(p) & two_sum_exact(p, z, r)
                x, yy = p, z  # the sum's operands, for the zero sign below
            else:
                r = x + yy
                exact = two_sum_exact(x, yy, r)
        for mname, rm in MODES:
            # an exact zero sum of operands of opposite signs is +0, -0 in
            # rdn (IEEE 754-2019 6.3); the host's sum is +0
            rr = np.where((r == 0) & (np.signbit(x) != np.signbit(yy)), -0.0, r) if mname == "rdn" and op != "mul" else r
            for sat in (False, True):
                row(rep, f, "%s %s" % (op, mname), "%s_%s" % (f.name, op), ops, [f.w] * len(ops), ["--round", mname],
                    np.where(exact, rr, 0.0), rm, sat, ~exact, mname, rng=rng, sample=100 if quick else 2000)


def main(argv):
    quick = "--quick" in argv
    names = [a for a in argv if not a.startswith("--")]
    known = [n for n, _ in FORMATS]
    if any(n not in known for n in names) or any(a.startswith("--") and a != "--quick" for a in argv):
        sys.stderr.write("usage: xcheck_gfloat.py [--quick] [FORMAT...]; FORMAT one of: %s\n" % ", ".join(known))
        return 2
    if not os.access(FPEMU, os.X_OK):
        sys.stderr.write("xcheck_gfloat.py: %s is missing (run make)\n" % FPEMU)
        return 2
    rng = np.random.default_rng(20261122)
    try:
        from importlib.metadata import version
        gver = version("gfloat")
    except Exception:  # not installed as a distribution (a source tree on the path)
        gver = "?"
    print("fpemu against gfloat %s (NumPy %s): conversions from binary64 in every mode%s" %
          (gver, np.__version__, " (quick)" if quick else ""))
    print("| format | gfloat format | check | compared | not compared (convention) | reference wrong | mismatches |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rep = Report()
    for name, fi in FORMATS:
        if names and name not in names:
            continue
        f = Fmt(name, fi)
        start = len(rep.rows)
        check_format(f, rng, quick, rep)
        if f.signed:  # e8m0's arithmetic has fpemu's own rules (negative results are NaN)
            check_arith(f, rng, quick, rep)
        for row in rep.rows[start:]:
            print("| %s | %s | %s | %d | %d | %d | %d |" % (row[0], fi.name, row[1], row[2], row[3], row[4], row[5]))
    print("total: %d cases compared, %d where the reference is wrong (fpemu exact), %d mismatches" %
          (rep.total, rep.referr, rep.bad))
    return 1 if rep.bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
