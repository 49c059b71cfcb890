# SPDX-License-Identifier: MIT
"""oracle.py: an exact reference for fpemu's scalar arithmetic ("spec oracle").

Written independently from the specification text of the rounding contract
(IEEE 754-2019 clauses 4 and 7, the OCP 8-bit FP spec rev 1.0, the OCP MX
spec v1.0 and the IEEE P3109 interim report, as docs/formats.md and
docs/semantics.md restate them: the format table, rounding, overflow,
tininess, ftz/daz, the five flags; Berkeley TestFloat's line format, as
docs/cli.md describes it: the CLI vector interface), and from the project's
choices in docs/semantics.md where that text leaves one open.
Every result that rests on such a choice carries a tag naming it, so
that a disagreement there is reported as "ambiguous:TAG" rather than as a
plain MISMATCH. It deliberately shares no code with emu/ or with the MPFR
reference in ref/ (C): values are Python Fractions, decoded and encoded from
the format parameters alone, and every result is rounded exactly.

Covered: decoding of every format fpemu names (IEEE-like, OCP fn, fnuz,
P3109 binary8pP, MX e3m2/e2m3/e2m1, e8m0, tf32, custom:...), add, sub, mul,
div, sqrt, mulAdd and conversions, the modes rne rna rtz rup rdn rto, sr
(with the caller's draw of each line, `fpemu run --sr-draws`: the rule of
docs/semantics.md, r < frac x 2^R on the exact fraction, neighbours by
magnitude), sat,
tininess before/after rounding, ftz, daz, and the flags NX UF OF DZ NV.

ftz: the contract's wording, "ftz turns a subnormal result into a zero", read
literally flushes only results that round to a subnormal; docs/semantics.md
fixes the project's reading: a result that is tiny (per the tininess setting)
is flushed, as x86's MXCSR.FTZ does (tests/t_emu_host.c checks that). That
reading is the default here. Opts(ftz_literal=True) (compare.py --ftz-literal)
flushes only results that round to a subnormal; the two differ only where
the exact result is tiny but rounds up to the least normal (tag
'ftz-tiny-but-normal').

Used by compare.py and cli_checks.py; not a program by itself. Python 3
standard library only.

Values: ('nan', snan) | ('inf', sign) | ('fin', sign, Fraction >= 0).
"""
import math
import re
from fractions import Fraction

NX, UF, OF, DZ, NV = 0x01, 0x02, 0x04, 0x08, 0x10
MODES = ['rne', 'rna', 'rtz', 'rup', 'rdn', 'rto']
SR_BITS = [0, 1, 8, 13, 23]  # the R values compare.py cycles through in sr (0: 64)


class Fmt:
    def __init__(self, name, e, m, bias, inf, nan, negzero=True, codebits=None,
                 shift=0, hexw=None):
        self.name, self.e, self.m, self.bias = name, e, m, bias
        self.inf, self.nan, self.negzero = inf, nan, negzero  # inf: ieee|top|none ; nan: ieee|fn|uz|none
        self.vbits = 1 + e + m            # value bits (sign, exp, mant)
        self.shift = shift                # tf32: value bits live in the top 19 bits of 32
        self.codebits = codebits or self.vbits
        if hexw is None:
            hexw = 2 if self.codebits <= 8 else (4 if self.codebits <= 16 else (8 if self.codebits <= 32 else 16))
        self.hexw = hexw
        self.p = m + 1
        self.emin = 1 - bias
        self.signbit = 1 << (self.vbits - 1)
        self.expmask = (1 << e) - 1
        self.mantmask = (1 << m) - 1
        self._cache = {}
        # largest finite magnitude code
        c = self.signbit - 1
        if self.nan == 'ieee':
            c = self.expmask << self.m
        while self._decode_raw(c)[0] != 'fin':
            c -= 1
        self.max_code = c
        self.maxf = self._decode_raw(c)[2]
        self.min_normal = Fraction(2) ** self.emin
        self.min_sub = Fraction(2) ** (self.emin - m)

    # ---- decoding -------------------------------------------------------
    def _decode_raw(self, v):  # v: value bits (no tf32 shift)
        s = 1 if v & self.signbit else 0
        mag = v & (self.signbit - 1)
        ex = mag >> self.m
        mt = mag & self.mantmask
        if self.nan == 'uz' and v == self.signbit:
            return ('nan', False)
        if self.nan == 'fn' and ex == self.expmask and mt == self.mantmask:
            return ('nan', False)
        if self.nan == 'ieee' and ex == self.expmask and mt != 0:
            return ('nan', not (mt >> (self.m - 1)) & 1)
        if self.inf == 'ieee' and ex == self.expmask and mt == 0:
            return ('inf', s)
        if self.inf == 'top' and mag == self.signbit - 1:
            return ('inf', s)
        if ex == 0:
            val = Fraction(mt) * Fraction(2) ** (self.emin - self.m)
        else:
            val = Fraction((1 << self.m) | mt) * Fraction(2) ** (ex - self.bias - self.m)
        return ('fin', s, val)

    def is_sub_code(self, code):
        v = code >> self.shift
        mag = v & (self.signbit - 1)
        return (mag >> self.m) == 0 and mag != 0 and self._decode_raw(v)[0] == 'fin'

    def decode(self, code, daz=False):
        key = (code, daz)
        r = self._cache.get(key)
        if r is not None:
            return r
        v = code >> self.shift
        r = self._decode_raw(v)
        if daz and r[0] == 'fin' and self.is_sub_code(code):
            r = ('fin', r[1], Fraction(0))
        if self.vbits <= 16:
            self._cache[key] = r
        return r

    # ---- encoding -------------------------------------------------------
    def enc_zero(self, s):
        return ((self.signbit if (s and self.negzero) else 0) << self.shift)

    def enc_inf(self, s):
        if self.inf == 'ieee':
            v = self.expmask << self.m
        else:
            v = self.signbit - 1
        return ((self.signbit if s else 0) | v) << self.shift

    def enc_nan(self):
        if self.nan == 'ieee':
            v = (self.expmask << self.m) | (1 << (self.m - 1))
        elif self.nan == 'fn':
            v = self.signbit - 1
        elif self.nan == 'uz':
            v = self.signbit
        else:
            raise ValueError('no NaN')
        return v << self.shift

    def enc_max(self, s):
        return ((self.signbit if s else 0) | self.max_code) << self.shift

    def enc_fin(self, s, val):
        if val == 0:
            return self.enc_zero(s)
        n, d = val.numerator, val.denominator
        E = ilog2(n, d)
        if E < self.emin:
            mt = val / Fraction(2) ** (self.emin - self.m)
            assert mt.denominator == 1
            v = int(mt)
        else:
            sig = val / Fraction(2) ** (E - self.m)
            assert sig.denominator == 1
            v = ((E + self.bias) << self.m) | (int(sig) - (1 << self.m))
        if s:
            v |= self.signbit
        assert (v & (self.signbit - 1)) <= self.max_code
        return v << self.shift

    def is_nan_code(self, code):
        return self.decode(code)[0] == 'nan'

    def all_codes(self):
        step = 1 << self.shift
        return [i * step for i in range(1 << self.vbits)]


def ilog2(n, d):
    """floor(log2(n/d)) for n, d > 0"""
    e = n.bit_length() - d.bit_length()
    if e >= 0:
        if n < (d << e):
            e -= 1
    else:
        if (n << -e) < d:
            e -= 1
    return e


# ---------------------------------------------------------------- formats
_FIXED = {
    'f64': (11, 52, 1023, 'ieee', 'ieee', True),
    'f32': (8, 23, 127, 'ieee', 'ieee', True),
    'f16': (5, 10, 15, 'ieee', 'ieee', True),
    'bf16': (8, 7, 127, 'ieee', 'ieee', True),
    'e5m2': (5, 2, 15, 'ieee', 'ieee', True),
    'e4m3': (4, 3, 7, 'none', 'fn', True),
    'e4m3fnuz': (4, 3, 8, 'none', 'uz', False),
    'e5m2fnuz': (5, 2, 16, 'none', 'uz', False),
    'e3m2': (3, 2, 3, 'none', 'none', True),
    'e2m3': (2, 3, 1, 'none', 'none', True),
    'e2m1': (2, 1, 1, 'none', 'none', True),
}
_FMTS = {}


def get_format(name):
    if name in _FMTS:
        return _FMTS[name]
    f = _make(name)
    _FMTS[name] = f
    return f


def _make(name):
    if name in ('e8m0', 'e8m0fnu', 'ue8m0'):
        return E8M0()
    if name == 'tf32':
        return Fmt('tf32', 8, 10, 127, 'ieee', 'ieee', True, codebits=32, shift=13, hexw=8)
    if name in _FIXED:
        e, m, b, i, n, z = _FIXED[name]
        return Fmt(name, e, m, b, i, n, z)
    mm = re.fullmatch(r'binary8p([1-7])([ef]?)', name)
    if mm:
        P = int(mm.group(1))
        dom = mm.group(2) or 'e'
        return Fmt(name, 8 - P, P - 1, 2 ** (7 - P), 'top' if dom == 'e' else 'none', 'uz', False)
    mm = re.fullmatch(r'e(\d+)m(\d+)(fn|fnuz)?', name)
    if mm:
        e, m, sfx = int(mm.group(1)), int(mm.group(2)), mm.group(3)
        if sfx is None:
            return Fmt(name, e, m, 2 ** (e - 1) - 1, 'ieee', 'ieee', True)
        if sfx == 'fn':
            return Fmt(name, e, m, 2 ** (e - 1) - 1, 'none', 'fn', True)
        return Fmt(name, e, m, 2 ** (e - 1), 'none', 'uz', False)
    if name.startswith('custom:'):
        kv = dict(x.split('=') for x in name[7:].split(','))
        e, m = int(kv['e']), int(kv['m'])
        bias = int(kv.get('bias', 2 ** (e - 1) - 1))
        inf = kv.get('inf', 'ieee')
        nan = kv.get('nan', 'ieee')
        if inf == 'no':
            inf = 'none'
        negzero = kv.get('negzero', 'no' if nan == 'uz' else 'yes') == 'yes'
        return Fmt(name, e, m, bias, inf, nan, negzero)
    raise KeyError(name)


# ---------------------------------------------------------------- rounding
class Opts:
    """One `fpemu run` option set. ftz_literal is not an fpemu option: it
    selects the oracle's literal reading of ftz (see the module docstring)."""

    def __init__(self, mode='rne', sat=False, tin='after', ftz=False, daz=False,
                 ftz_literal=False, srbits=0, draw=0):
        self.mode, self.sat, self.tin, self.ftz, self.daz = mode, sat, tin, ftz, daz
        self.ftz_literal = ftz_literal
        # sr (docs/semantics.md): the upper neighbour iff r < frac * 2^R,
        # r = the top R bits of the line's 64-bit draw (`--sr-draws`), R =
        # srbits (0: 64), frac the exact distance to the lower neighbour in
        # ulps; neighbours by magnitude (docs/semantics.md: sr rounds the magnitude)
        self.srbits, self.draw = srbits, draw
        self.probe = None  # a list: sr roundings append (r, d), their fraction r/d of an ulp

    def args(self):
        a = ['--round', self.mode]
        if self.mode == 'sr':
            a += ['--sr-bits', str(self.srbits)]
        if self.sat:
            a.append('--sat')
        if self.tin == 'before':
            a += ['--tininess', 'before']
        if self.ftz:
            a.append('--ftz')
        if self.daz:
            a.append('--daz')
        return a

    def __repr__(self):
        return ' '.join(self.args())


def _round_int(n, d, o, s):
    """round n/d (n >= 0, d > 0) to an integer under o; returns (k, inexact)"""
    mode = o.mode
    k, r = divmod(n, d)
    if r == 0:
        return k, False
    if mode == 'rne':
        up = 2 * r > d or (2 * r == d and (k & 1))
    elif mode == 'rna':
        up = 2 * r >= d
    elif mode == 'rtz':
        up = False
    elif mode == 'rup':
        up = (s == 0)
    elif mode == 'rdn':
        up = (s == 1)
    elif mode == 'rto':
        up = (k & 1) == 0
    elif mode == 'sr':
        if o.probe is not None:
            o.probe.append((r, d))
        R = o.srbits if 1 <= o.srbits <= 64 else 64
        up = (o.draw >> (64 - R)) * d < r << R  # r_R < (r/d) * 2^R, exactly
    else:
        raise ValueError(mode)
    return k + (1 if up else 0), True


def _round_at(n, d, qe, o, s):
    """round n/d to a multiple of 2^qe under o; returns (Fraction, inexact)"""
    if qe >= 0:
        k, ix = _round_int(n, d << qe, o, s)
        return Fraction(k << qe), ix
    k, ix = _round_int(n << -qe, d, o, s)
    return Fraction(k, 1 << -qe), ix


def round_fin(f, s, x, o):
    """x: exact Fraction > 0, s: sign. Returns (code, flags, tags)"""
    tags = []
    n, d = x.numerator, x.denominator
    E = ilog2(n, d)
    r_unb, ix_unb = _round_at(n, d, E - f.m, o, s)
    if E >= f.emin:
        r, ix = r_unb, ix_unb
    else:
        r, ix = _round_at(n, d, f.emin - f.m, o, s)
    # overflow
    if r_unb > f.maxf:
        flags = OF | NX
        mode = o.mode
        if mode in ('rne', 'rna', 'sr'):  # sr: it rounded up past max (docs/semantics.md: then as rne)
            to_inf = True
        elif mode in ('rtz', 'rto'):
            to_inf = False
        elif mode == 'rup':
            to_inf = (s == 0)
        else:
            to_inf = (s == 1)
        if not to_inf:
            return f.enc_max(s), flags, tags
        if f.inf != 'none' and not o.sat:
            return f.enc_inf(s), flags, tags
        if o.sat or f.nan == 'none':
            if o.sat and f.inf != 'none':
                tags.append('sat-on-inf-format')  # docs/semantics.md: under --sat no op delivers inf
            return f.enc_max(s), flags, tags
        return f.enc_nan(), flags, tags
    if f.p == 1 and o.mode == 'rto' and ix and E >= f.emin:
        tags.append('p1-rto')
    if f.p == 1 and o.mode in ('rne', 'rto') and ix and E >= f.emin and x == Fraction(3, 2) * Fraction(2) ** E:
        tags.append('p1-rne-tie')
    tiny = (x < f.min_normal) if o.tin == 'before' else (r_unb < f.min_normal)
    flags = 0
    if ix:
        flags |= NX
        if tiny:
            flags |= UF
    if o.ftz:
        is_sub = (r != 0 and r < f.min_normal)
        if tiny and r != 0 and not is_sub:
            # tiny before rounding but rounded up to the least normal
            tags.append('ftz-tiny-but-normal')
            if not o.ftz_literal:
                is_sub = True
        if is_sub:
            return f.enc_zero(s), UF | NX, tags
    if r == 0:
        return f.enc_zero(s), flags, tags
    return f.enc_fin(s, r), flags, tags


def finalize(f, res, o, flags=0):
    """res: ('nan',) | ('inf', s) | ('zero', s) | ('fin', s, x). Returns (code, flags, tags)"""
    if isinstance(f, E8M0):
        return finalize_e8m0(f, res, o, flags)
    tags = []
    k = res[0]
    if k == 'nan':
        if f.nan == 'none':
            if not (flags & NV):
                tags.append('nan-to-nonan-flag')
            return f.enc_max(0), flags | NV, tags
        return f.enc_nan(), flags, tags
    if k == 'inf':
        s = res[1]
        if f.inf != 'none' and not o.sat:
            return f.enc_inf(s), flags, tags
        if o.sat:
            tags.append('exact-inf-sat')
            return f.enc_max(s), flags | OF | NX, tags
        if f.nan != 'none':
            tags.append('exact-inf-to-nan')
            if flags & DZ:
                tags.append('dz-noinf')
            return f.enc_nan(), flags | NV, tags
        tags.append('exact-inf-nonan')
        if flags & DZ:
            tags.append('dz-noinf')
        return f.enc_max(s), flags | OF | NX, tags
    if k == 'zero':
        return f.enc_zero(res[1]), flags, tags
    c, fl, t = round_fin(f, res[1], res[2], o)
    return c, flags | fl, tags + t


# ---------------------------------------------------------------- operations
def _nan_check(*vals):
    fl = 0
    for v in vals:
        if v[0] == 'nan' and v[1]:
            fl |= NV
    return fl


def _sum(sa, va, sb, vb, mode):
    """exact signed sum of two finite values; returns result tuple"""
    A = -va if sa else va
    B = -vb if sb else vb
    S = A + B
    if S == 0:
        if va == 0 and vb == 0 and sa == sb:
            return ('zero', sa)
        return ('zero', 1 if mode == 'rdn' else 0)
    return ('fin', 1 if S < 0 else 0, abs(S))


def op_add(a, b, o, neg_b=False):
    if neg_b and b[0] != 'nan':
        b = (b[0], 1 - b[1]) + tuple(b[2:])
    if a[0] == 'nan' or b[0] == 'nan':
        return ('nan',), _nan_check(a, b)
    if a[0] == 'inf' and b[0] == 'inf':
        if a[1] != b[1]:
            return ('nan',), NV
        return ('inf', a[1]), 0
    if a[0] == 'inf':
        return ('inf', a[1]), 0
    if b[0] == 'inf':
        return ('inf', b[1]), 0
    return _sum(a[1], a[2], b[1], b[2], o.mode), 0


def op_mul(a, b, o):
    if a[0] == 'nan' or b[0] == 'nan':
        return ('nan',), _nan_check(a, b)
    s = a[1] ^ b[1]
    if a[0] == 'inf' or b[0] == 'inf':
        if (a[0] == 'fin' and a[2] == 0) or (b[0] == 'fin' and b[2] == 0):
            return ('nan',), NV
        return ('inf', s), 0
    P = a[2] * b[2]
    if P == 0:
        return ('zero', s), 0
    return ('fin', s, P), 0


def op_div(a, b, o):
    if a[0] == 'nan' or b[0] == 'nan':
        return ('nan',), _nan_check(a, b)
    s = a[1] ^ b[1]
    if a[0] == 'inf':
        if b[0] == 'inf':
            return ('nan',), NV
        return ('inf', s), 0
    if b[0] == 'inf':
        return ('zero', s), 0
    if b[2] == 0:
        if a[2] == 0:
            return ('nan',), NV
        return ('inf', s), DZ
    if a[2] == 0:
        return ('zero', s), 0
    return ('fin', s, a[2] / b[2]), 0


def exact_sqrt(x):
    """x: a dyadic Fraction > 0. Returns a Fraction
    equal to sqrt(x) if exact, else (r + 1/2) * 2^-k with r = floor(sqrt(x) * 2^k)
    of about 200 bits. sqrt(x) is then irrational and lies in the same open
    interval (r, r + 1) * 2^-k, which holds no rounding boundary of a format
    with at most 53 significant bits, so both round alike."""
    n, d = x.numerator, x.denominator
    if d & (d - 1):
        raise ValueError('non dyadic')
    M, E = n, -(d.bit_length() - 1)
    if E & 1:
        M <<= 1
        E -= 1
    # sqrt(M) * 2^(E/2); scale by 2^k with plenty of bits
    k = max(0, 200 - M.bit_length() // 2)
    N = M << (2 * k)
    r = math.isqrt(N)
    if r * r == N:
        return Fraction(r) * Fraction(2) ** (E // 2 - k)
    return Fraction(2 * r + 1) * Fraction(2) ** (E // 2 - k - 1)


def op_sqrt(a, o):
    if a[0] == 'nan':
        return ('nan',), _nan_check(a)
    if a[0] == 'inf':
        if a[1]:
            return ('nan',), NV
        return ('inf', 0), 0
    if a[2] == 0:
        return ('zero', a[1]), 0
    if a[1]:
        return ('nan',), NV
    return ('fin', 0, exact_sqrt(a[2])), 0


def op_fma(a, b, c, o):
    fl = _nan_check(a, b, c)
    def is_zero(v):
        return v[0] == 'fin' and v[2] == 0
    if (is_zero(a) and b[0] == 'inf') or (a[0] == 'inf' and is_zero(b)):
        return ('nan',), NV
    if a[0] == 'nan' or b[0] == 'nan' or c[0] == 'nan':
        return ('nan',), fl
    ps = a[1] ^ b[1]
    if a[0] == 'inf' or b[0] == 'inf':
        if c[0] == 'inf' and c[1] != ps:
            return ('nan',), NV
        return ('inf', ps), 0
    if c[0] == 'inf':
        return ('inf', c[1]), 0
    P = a[2] * b[2]
    return _sum(ps, P, c[1], c[2], o.mode), 0


def compute(opname, fmts, codes, o):
    """opname: add|sub|mul|div|sqrt|mulAdd|to ; fmts: (src..., dst).
    Returns (code, flags, tags)"""
    if opname == 'to':
        src, dst = fmts
        a = src.decode(codes[0], o.daz)
        if a[0] == 'nan':
            res, fl = ('nan',), _nan_check(a)
        elif a[0] == 'inf':
            res, fl = ('inf', a[1]), 0
        elif a[2] == 0:
            res, fl = ('zero', a[1]), 0
            if o.daz and a[1] == 1 and not src.negzero and dst.negzero and codes[0] != 0:
                return dst.enc_zero(1), 0, ['daz-sign-nonegzero']
        else:
            res, fl = ('fin', a[1], a[2]), 0
        return finalize(dst, res, o, fl)
    f = fmts[0]
    vals = [f.decode(c, o.daz) for c in codes]
    if opname == 'add':
        res, fl = op_add(vals[0], vals[1], o)
    elif opname == 'sub':
        res, fl = op_add(vals[0], vals[1], o, neg_b=True)
    elif opname == 'mul':
        res, fl = op_mul(vals[0], vals[1], o)
    elif opname == 'div':
        res, fl = op_div(vals[0], vals[1], o)
    elif opname == 'sqrt':
        res, fl = op_sqrt(vals[0], o)
    elif opname in ('mulAdd', 'fma'):
        res, fl = op_fma(vals[0], vals[1], vals[2], o)
    else:
        raise ValueError(opname)
    code, flags, tags = finalize(f, res, o, fl)
    if o.daz and not f.negzero and res[0] == 'zero':
        # a negative subnormal read as zero in a format without -0: sign of
        # that zero is not specified (only matters for zero results)
        if any(f.is_sub_code(c) and (c >> f.shift) & f.signbit for c in codes):
            tags.append('daz-sign-nonegzero')
    return code, flags, tags


def parse_op(op):
    """'f16_add' -> ('add', [f16]); 'f32_to_e4m3' -> ('to', [f32, e4m3])"""
    if '_to_' in op:
        s, d = op.split('_to_')
        return 'to', [get_format(s), get_format(d)]
    fmt, name = op.rsplit('_', 1)
    return name, [get_format(fmt)]


# ---------------------------------------------------------------- e8m0 (docs/semantics.md)
class E8M0(Fmt):
    """unsigned, 2^(c-127), 0xFF NaN, no zero, no sign.  The format table
    (docs/formats.md, after the OCP MX spec v1.0) gives only the encoding;
    docs/semantics.md fixes the rest (zero/negatives -> NaN + invalid, below
    2^-127 -> 0x00 with underflow)."""
    def __init__(self):
        self.name, self.e, self.m, self.bias = 'e8m0', 8, 0, 127
        self.inf, self.nan, self.negzero = 'none', 'e8m0', False
        self.vbits = self.codebits = 8
        self.shift = 0
        self.hexw = 2
        self.p = 1
        self.emin = -127
        self.signbit = 0x100  # no sign bit inside the code
        self.expmask, self.mantmask = 0xFF, 0
        self._cache = {}
        self.max_code = 0xFE
        self.maxf = Fraction(2) ** 127
        self.min_normal = self.min_sub = Fraction(2) ** -127

    def _decode_raw(self, v):
        if v == 0xFF:
            return ('nan', False)
        return ('fin', 0, Fraction(2) ** (v - 127))

    def is_sub_code(self, code):
        return False

    def decode(self, code, daz=False):
        return self._decode_raw(code)

    def enc_nan(self):
        return 0xFF

    def enc_max(self, s):
        return 0xFE

    def enc_fin(self, s, val):
        E = ilog2(val.numerator, val.denominator)
        assert val == Fraction(2) ** E and -127 <= E <= 127
        return E + 127

    def all_codes(self):
        return list(range(256))


def finalize_e8m0(f, res, o, flags=0):
    """finalize() for e8m0"""
    tags = ['e8m0-readme']
    k = res[0]
    if k == 'nan':
        return 0xFF, flags, tags
    if k == 'zero' or res[1] == 1:
        return 0xFF, flags | NV, tags
    if k == 'inf':
        if o.sat:
            return 0xFE, flags | OF | NX, tags
        return 0xFF, flags | NV, tags
    x = res[2]
    if x < f.min_normal:
        # docs/semantics.md: "values below 2^-127 give 0x00 with underflow"; fpemu applies
        # the usual tininess rule (after rounding by default), so do we.
        n, d = x.numerator, x.denominator
        E = ilog2(n, d)
        r_unb, _ = _round_at(n, d, E, o, 0)
        tiny = True if o.tin == 'before' else r_unb < f.min_normal
        return 0x00, flags | NX | (UF if tiny else 0), tags
    c, fl, t = round_fin(f, 0, x, o)
    return c, flags | fl, tags + t
