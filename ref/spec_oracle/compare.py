#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compare.py: fpemu's `run` against the spec oracle (oracle.py), vector by vector.

oracle.py is an exact reference written independently from the specification
text of the rounding contract (IEEE 754-2019 and the OCP and P3109 format
specifications, as docs/semantics.md and docs/formats.md restate them; the
vector interface of docs/cli.md); it deliberately shares no
code with emu/ or with the MPFR reference in ref/ (C). This script generates operand
vectors (special values, every code of the <= 8-bit formats, boundaries of
rounding, overflow and underflow, seeded random ones), feeds them to
`fpemu run OP --round MODE [--sat] [--tininess before] [--ftz] [--daz]`, and
compares each result code and flag byte with the oracle's. In sr, each
vector line gets its own 64-bit draw through `--sr-draws` (R cycling through
0 = 64, 1, 8, 13, 23): extremes, uniform draws, and on 40% of the lines one
of the two draws either side of the line's decision (the top R bits T - 1 or
T, T = ceil(frac x 2^R) from the oracle's exact fraction).

Usage:
  python3 ref/spec_oracle/compare.py [--smoke | --quick | --full] [options]

  --smoke     the default: every format family, every op, a few conversions,
              all seven modes, each option set (plain, sat, tininess before, ftz,
              daz, all four), specials plus a small seeded random sample;
              about 30 s on 2 cores. tests/t_spec_oracle.sh runs it.
  --quick     the base set of --full, with a third of its random vectors:
              about 12 million vectors, roughly a third of --full's time.
  --full      the base set (every binary op of the <= 6-bit formats and
              every fma of the 4-bit ones exhaustively; every 8-bit op in
              plain rne exhaustively; conversions from every code of the
              8-bit formats), the extended set (8-bit binary ops exhaustively
              in every mode, plain and with every option; MX fma exhaustively;
              tf32 operands with junk low bits) and the extra set (structured
              fma, f32/f64 in every mode and option set, e8m0 conversions,
              three more custom formats), sr included: 42,558,405
              vectors, 18 min on 2 busy cores (`make oracle`).
  --only S    only the ops whose name contains S (e.g. f16_mul, _to_e8m0).
  --seed N    random vectors from seed N (default 1); a vector set depends
              only on the seed, the level and its position in the plan, not
              on --only, so a disagreement found in a long run can be re-run
              alone with --only.
  --jobs N    worker processes (default: every CPU).
  --out DIR   where summary.txt and mismatches.txt go (default: $RESDIR, else
              a new temporary directory; never inside the source tree).
  --ftz-literal
              read ftz literally ("a subnormal result" becomes zero: only
              results that round to a subnormal), instead of the
              project's documented reading (docs/semantics.md: a result
              that is tiny per the tininess setting is flushed, as x86's
              MXCSR.FTZ does). fpemu follows the latter, so this option shows
              the difference: disagreements tagged ftz-tiny-but-normal.

The program is $FPEMU_BIN, else ../../bin/fpemu relative to this script.
Python 3 standard library only.

Output: one line per format family (configs, vectors, disagreements), a
TOTAL line, and up to 10 example disagreements. A disagreement is counted as
MISMATCH, as ambiguous:TAG where the oracle's result rests on a choice of docs/semantics.md
(TAG names it), or as nan-payload (both NaN, flags equal, codes differ).
Exit status: 0 when every vector agrees, 1 on any disagreement, 2 when fpemu
could not be run or rejected its input.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict, Counter
from fractions import Fraction
from multiprocessing import Pool

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import oracle as O

HERE = os.path.dirname(os.path.abspath(__file__))

VARIANTS = [dict(), dict(sat=True), dict(tin='before'), dict(ftz=True), dict(daz=True),
            dict(sat=True, tin='before', ftz=True, daz=True)]


def fpemu_bin():
    """$FPEMU_BIN, else bin/fpemu of the checkout this script is in"""
    return os.environ.get('FPEMU_BIN') or os.path.normpath(os.path.join(HERE, '..', '..', 'bin', 'fpemu'))


def hexs(f, c):
    return '%0*X' % (f.hexw, c)


# ------------------------------------------------------------ code sets
def neg(f, c):
    return c | (f.signbit << f.shift)


def code_of(f, v_bits):
    return v_bits << f.shift


def interesting(f):
    """structured codes for a format"""
    if f.vbits <= 8:
        return f.all_codes()
    out = set()
    mag = []
    one = f.enc_fin(0, Fraction(1)) >> f.shift
    minn = f.enc_fin(0, f.min_normal) >> f.shift
    mx = f.max_code
    for b in (0, 1, 2, 3, minn - 2, minn - 1, minn, minn + 1, minn + 2, 2 * minn, mx, mx - 1, mx - 2,
              mx - (1 << f.m), mx - (1 << f.m) + 1, one - 1, one, one + 1, one + 2, one + (1 << (f.m - 1)),
              one + (1 << f.m), one + (1 << f.m) + (1 << (f.m - 1)), one - (1 << f.m), (1 << (f.m - 1)),
              (1 << f.m) - 1, one + ((1 << f.m) - 1)):
        if 0 <= b <= mx:
            mag.append(b)
    if f.inf != 'none':
        mag.append(f.enc_inf(0) >> f.shift)
    for b in mag:
        out.add(code_of(f, b))
        out.add(neg(f, code_of(f, b)))
    if f.nan != 'none':
        out.add(f.enc_nan())
        if f.nan == 'ieee':
            e = f.expmask << f.m
            out.add(code_of(f, e | 1))                       # sNaN
            out.add(neg(f, code_of(f, e | (1 << (f.m - 1)) | 5)))  # negative qNaN with payload
    return sorted(out)


def rand_code(f, rng):
    """random code, biased to finite values with exponents spread"""
    r = rng.random()
    if r < 0.1:
        return rng.randrange(1 << f.vbits) << f.shift
    ex = rng.randrange(0, f.expmask + 1)
    mt = rng.randrange(0, 1 << f.m)
    s = rng.randrange(2)
    return ((s << (f.vbits - 1)) | (ex << f.m) | mt) << f.shift


def rand_near(f, c, rng, spread=None):
    """a code with exponent near that of c"""
    v = c >> f.shift
    ex = (v >> f.m) & f.expmask
    spread = spread if spread is not None else f.p + 3
    ex2 = min(f.expmask, max(0, ex + rng.randint(-spread, spread)))
    mt = rng.randrange(0, 1 << f.m)
    s = rng.randrange(2)
    return ((s << (f.vbits - 1)) | (ex2 << f.m) | mt) << f.shift


def rand_code_exp(f, lo, hi, rng):
    lo, hi = min(max(0, lo), f.expmask), max(0, min(f.expmask, hi))
    if lo > hi:
        lo, hi = hi, lo
    ex = rng.randint(lo, hi)
    return ((rng.randrange(2) << (f.vbits - 1)) | (ex << f.m) | rng.randrange(1 << f.m)) << f.shift


def gen_binary(f, rng, n_rand, exhaustive=False):
    if exhaustive:
        cs = f.all_codes()
        return [(a, b) for a in cs for b in cs]
    spec = interesting(f)
    if f.vbits <= 8:
        # a denser "boundary" subset of codes
        mn = f.enc_fin(0, f.min_normal) >> f.shift
        keys = set()
        for b in [0, 1, 2, mn - 1, mn, mn + 1, f.max_code, f.max_code - 1, f.max_code - 2,
                  f.enc_fin(0, Fraction(1)) >> f.shift]:
            if 0 <= b < f.signbit:
                keys.add(b)
                keys.add(b | f.signbit)
        for c in f.all_codes():
            if f.decode(c)[0] != 'fin':
                keys.add(c >> f.shift)
        spec = sorted(k << f.shift for k in keys)
    return [(a, b) for a in spec for b in spec] + rand_pairs(f, rng, n_rand)


def rand_pairs(f, rng, n_rand):
    """random operand pairs: near each other, independent, or placed so that
    a*b or a/b lands near overflow or underflow"""
    out = []
    for _ in range(n_rand):
        a = rand_code(f, rng)
        t = rng.random()
        if t < 0.4:
            b = rand_near(f, a, rng)
        elif t < 0.7:
            b = rand_code(f, rng)
        else:
            # exponent chosen so that a*b or a/b lands near overflow / underflow
            ea = ((a >> f.shift) >> f.m) & f.expmask
            tgt = rng.choice([f.expmask - 1 + f.bias, 1 + f.bias, f.bias + 1 - f.m, f.bias + 2 * f.bias])
            b = rand_code_exp(f, tgt - ea - 2, tgt - ea + 2, rng) if rng.random() < 0.5 else \
                rand_code_exp(f, ea - (tgt - f.bias) - 2, ea - (tgt - f.bias) + 2, rng)
        out.append((a, b))
    return out


def gen_unary(f, rng, n_rand, exhaustive=False):
    if exhaustive or f.vbits <= 8:
        return [(c,) for c in f.all_codes()]
    out = [(c,) for c in interesting(f)]
    out += [(rand_code(f, rng),) for _ in range(n_rand)]
    return out


def gen_fma(f, rng, n_rand, exhaustive=False):
    if exhaustive:
        cs = f.all_codes()
        return [(a, b, c) for a in cs for b in cs for c in cs]
    spec = interesting(f) if f.vbits > 8 else None
    out = []
    if f.vbits <= 8:
        cs = f.all_codes()
        pick = lambda: rng.choice(cs)
    else:
        pick = lambda: rng.choice(spec)
    for _ in range(n_rand // 3):
        out.append((pick(), pick(), pick()))
    for _ in range(n_rand - n_rand // 3):
        a = rand_code(f, rng)
        b = rand_code(f, rng)
        # c near a*b (cancellation, ties)
        va, vb = f.decode(a), f.decode(b)
        if va[0] == 'fin' and vb[0] == 'fin' and va[2] * vb[2] != 0:
            P = va[2] * vb[2]
            E = O.ilog2(P.numerator, P.denominator)
            cex = E + f.bias + rng.randint(-f.p - 2, 2)
            c = rand_code_exp(f, cex, cex, rng) if 0 <= cex <= f.expmask else rand_code(f, rng)
        else:
            c = rand_code(f, rng)
        out.append((a, b, c))
    return out


def gen_fma2(f, rng, n):
    """structured fma: exact cancellation, c = -(a*b) +- 1 code, tiny products
    against large c (sticky decides directed rounding), products near overflow"""
    out = []
    spec = interesting(f)
    tries = 0
    while len(out) < n and tries < 50 * n:
        tries += 1
        a, b = rand_code(f, rng), rand_code(f, rng)
        t = rng.random()
        if t < 0.3:
            # small significands so that a*b is representable
            a &= ~((1 << (f.m // 2 + 1 if f.m > 2 else 1)) - 1) << f.shift if f.m > 2 else a
            b &= ~((1 << (f.m // 2 + 1 if f.m > 2 else 1)) - 1) << f.shift if f.m > 2 else b
            va, vb = f.decode(a), f.decode(b)
            if va[0] != 'fin' or vb[0] != 'fin':
                continue
            P = va[2] * vb[2]
            if P == 0 or P > f.maxf or P < f.min_sub:
                continue
            try:
                cp = f.enc_fin(0, P)
            except AssertionError:
                continue
            s = 1 - (va[1] ^ vb[1])
            for d in (-1, 0, 1):
                c = cp + (d << f.shift)
                if 0 <= (c >> f.shift) <= f.max_code:
                    out.append((a, b, neg(f, c) if s else c))
        elif t < 0.6:
            # tiny product, any c
            a = rand_code_exp(f, 0, 3, rng)
            b = rand_code_exp(f, 0, f.bias, rng)
            out.append((a, b, rng.choice(spec)))
        else:
            # product near overflow, c near max
            ea = rng.randint(f.bias, f.expmask - 1)
            a = rand_code_exp(f, ea, ea, rng)
            eb = f.expmask - 1 - ea + f.bias + rng.randint(-1, 1)
            b = rand_code_exp(f, eb, eb, rng)
            c = rand_code_exp(f, f.expmask - 1 - rng.randint(0, f.p + 1), f.expmask - 1, rng)
            out.append((a, b, c))
    return out


def gen_conv(src, dst, rng, n_rand):
    """sources around every dst value (or a sample), midpoints, thresholds"""
    out = set()
    out.update(interesting(src))
    dcodes = [c for c in dst.all_codes() if dst.decode(c)[0] == 'fin' and dst.decode(c)[1] == 0] \
        if dst.vbits <= 16 else None
    if dcodes is None or len(dcodes) > 400:
        base = dcodes if dcodes else None
        sample = []
        if base:
            sample = rng.sample(base, 300)
            mn = dst.enc_fin(0, dst.min_normal)
            sample += [c for c in base if abs((c >> dst.shift) - (mn >> dst.shift)) < 4 or
                       (c >> dst.shift) < 4 or (c >> dst.shift) > dst.max_code - 4]
        else:
            for _ in range(300):
                sample.append(rand_code(dst, rng) & ~(dst.signbit << dst.shift))
            for b in list(range(4)) + [dst.max_code - i for i in range(4)]:
                sample.append(b << dst.shift)
        dcodes = [c for c in sample if dst.decode(c)[0] == 'fin']
    vals = sorted(set(dst.decode(c)[2] for c in dcodes))
    extra = []
    for i, v in enumerate(vals):
        extra.append(v)
        # midpoint to the next representable (or to max + half ulp at the top)
        c = dst.enc_fin(0, v) >> dst.shift
        nxt = dst._decode_raw(c + 1) if c + 1 < dst.signbit else ('x',)
        if nxt[0] == 'fin':
            extra.append((v + nxt[2]) / 2)
            extra.append((3 * v + nxt[2]) / 4)
        elif v > 0:
            # top: overflow threshold, ulp of the top binade
            E = O.ilog2(v.numerator, v.denominator)
            ulp = Fraction(2) ** (E - dst.m)
            extra += [v + ulp / 2, v + ulp, v + ulp * 3 / 2, v * 2, v + ulp / 4]
    extra += [dst.min_sub / 2, dst.min_sub / 4, dst.min_sub * 3 / 4, dst.min_sub * 3 / 2,
              dst.maxf * 4, dst.min_sub / 1024]
    for v in extra:
        if v <= 0:
            continue
        try:
            c = src.enc_fin(0, v)
        except (AssertionError, ZeroDivisionError):
            continue
        if v > src.maxf or v < src.min_sub:
            continue
        b = c >> src.shift
        for d in (-1, 0, 1):
            bb = b + d
            if 0 <= bb <= src.max_code:
                out.add(bb << src.shift)
                out.add(neg(src, bb << src.shift))
    out = sorted(out)
    for _ in range(n_rand):
        if rng.random() < 0.3:
            out.append(rand_code(src, rng))
        else:
            # random in dst's exponent range
            dv = rng.choice(vals) if vals else Fraction(1)
            if dv == 0:
                continue
            E = O.ilog2(dv.numerator, dv.denominator)
            ex = E + src.bias
            if 1 <= ex <= src.expmask - 1:
                out.append(((rng.randrange(2) << (src.vbits - 1)) | (ex << src.m) | rng.randrange(1 << src.m)) << src.shift)
    return [(c,) for c in out]


# ------------------------------------------------------------ smoke sets
def smoke_codes(f):
    """a few codes of each kind, both signs: zero, least and largest
    subnormal, least normal, 1, 1 + ulp, largest finite; inf and NaN (and an
    sNaN) where the format has them"""
    mn = f.enc_fin(0, f.min_normal) >> f.shift
    one = f.enc_fin(0, Fraction(1)) >> f.shift
    out = set()
    for b in (0, 1, mn - 1, mn, one, one + 1, f.max_code):
        if 0 <= b <= f.max_code:
            out.add(code_of(f, b))
            out.add(neg(f, code_of(f, b)))
    if f.inf != 'none':
        out.add(f.enc_inf(0))
        out.add(f.enc_inf(1))
    if f.nan != 'none':
        out.add(f.enc_nan())
        if f.nan == 'ieee':
            out.add(code_of(f, (f.expmask << f.m) | 1))
    return sorted(out)


def smoke_binary(f, rng, n_rand):
    spec = smoke_codes(f)
    return [(a, b) for a in spec for b in spec] + rand_pairs(f, rng, n_rand)


def smoke_unary(f, rng, n_rand):
    if f.vbits <= 8:
        return [(c,) for c in f.all_codes()]
    return [(c,) for c in smoke_codes(f)] + [(rand_code(f, rng),) for _ in range(n_rand)]


def smoke_fma(f, rng, n_rand):
    spec = smoke_codes(f)
    out = [(rng.choice(spec), rng.choice(spec), rng.choice(spec)) for _ in range(n_rand // 4)]
    return out + gen_fma(f, rng, n_rand // 2) + gen_fma2(f, rng, n_rand // 4)


def smoke_conv(src, dst, rng, n_rand):
    if src.vbits <= 8:
        return [(c,) for c in src.all_codes()]
    vecs = gen_conv(src, dst, rng, n_rand // 4)
    return rng.sample(vecs, min(n_rand, len(vecs)))


# ------------------------------------------------------------ vector plans
def _tf32_junk(F, rng):
    """tf32 operands with junk in the low 13 bits (decoding must ignore them)"""
    return [tuple(c | rng.randrange(1 << 13) for c in v) for v in gen_binary(F, rng, 1000)[-1500:]]


# name -> function(formats of the op, rng, *args) -> list of operand tuples
GENERATORS = {
    'binary': lambda fs, rng, n, ex=False: gen_binary(fs[0], rng, n, ex),
    'unary': lambda fs, rng, n, ex=False: gen_unary(fs[0], rng, n, ex),
    'fma': lambda fs, rng, n, ex=False: gen_fma(fs[0], rng, n, ex),
    'fma2': lambda fs, rng, n: gen_fma2(fs[0], rng, n),
    'conv': lambda fs, rng, n: gen_conv(fs[0], fs[1], rng, n),
    'allcodes': lambda fs, rng: [(c,) for c in fs[0].all_codes()],
    'tf32junk': lambda fs, rng: _tf32_junk(fs[0], rng),
    'tf32junk1': lambda fs, rng: [(v[0],) for v in _tf32_junk(O.get_format('tf32'), rng)],
    'smoke_binary': lambda fs, rng, n: smoke_binary(fs[0], rng, n),
    'smoke_unary': lambda fs, rng, n: smoke_unary(fs[0], rng, n),
    'smoke_fma': lambda fs, rng, n: smoke_fma(fs[0], rng, n),
    'smoke_conv': lambda fs, rng, n: smoke_conv(fs[0], fs[1], rng, n),
}

FAMILIES = [  # (group, test on a format name), first match wins
    ('OCP 8-bit', lambda n: n in ('e4m3', 'e5m2')),
    ('fnuz', lambda n: n.endswith('fnuz')),
    ('P3109', lambda n: n.startswith('binary8p')),
    ('MX 6/4-bit', lambda n: n in ('e3m2', 'e2m3', 'e2m1')),
    ('custom', lambda n: n.startswith('custom:')),
    ('f16', lambda n: n == 'f16'),
    ('bf16', lambda n: n == 'bf16'),
    ('tf32', lambda n: n == 'tf32'),
    ('f32', lambda n: n == 'f32'),
    ('f64', lambda n: n == 'f64'),
    ('other 8-bit', lambda n: True),
]


def group_of(op):
    """the summary line an op is counted in"""
    opname, fmts = O.parse_op(op)
    if opname == 'to':
        return 'e8m0 conversions' if any(f.name == 'e8m0' for f in fmts) else 'conversions'
    return next(g for g, test in FAMILIES if test(fmts[0].name))


def build_jobs(level, only=None, seed=1, ftz_literal=False):
    """the plan of a level (smoke, quick or full): a list of jobs
    (op, fpemu options, generator name, generator arguments, seed key)"""
    jobs = []
    count = [0]
    modes = O.MODES + ['sr']  # sr with the caller's draws (`--sr-draws`), R cycling through O.SR_BITS
    allvars = [(m, v) for m in modes for v in VARIANTS]

    def add(op, okw, gen, *args):
        count[0] += 1
        if only and only not in op:
            return
        okw = dict(okw, ftz_literal=True) if ftz_literal else okw
        if okw.get('mode') == 'sr' and 'srbits' not in okw:
            okw = dict(okw, srbits=O.SR_BITS[count[0] % len(O.SR_BITS)])
        jobs.append((op, okw, gen, args, '%d:%s:%d' % (seed, level, count[0])))

    if level == 'smoke':
        # Every op of every format in each mode, twice: with the option sets
        # (i + j) % 6 and (i + j + 3) % 6 for op i and mode j, so every op
        # meets each mode with two option sets and every format meets each
        # (mode, option set) pair twice.
        for f in ['e4m3', 'e5m2', 'e4m3fnuz', 'e5m2fnuz', 'binary8p1e', 'binary8p3f', 'binary8p4e',
                  'binary8p5f', 'e6m1', 'e3m2', 'e2m3', 'e2m1', 'custom:e=4,m=3,bias=7,inf=ieee,nan=ieee',
                  'custom:e=5,m=2,bias=12,inf=no,nan=fn', 'f16', 'bf16', 'tf32', 'f32', 'f64']:
            for i, (opn, gen, n) in enumerate([('add', 'smoke_binary', 300), ('sub', 'smoke_binary', 300),
                                               ('mul', 'smoke_binary', 300), ('div', 'smoke_binary', 300),
                                               ('sqrt', 'smoke_unary', 400), ('mulAdd', 'smoke_fma', 600)]):
                for j, m in enumerate(modes):
                    for r in (0, 3):
                        add('%s_%s' % (f, opn), dict(VARIANTS[(i + j + r) % 6], mode=m), gen, n)
        convs = [('f32', 'e4m3'), ('f32', 'e2m1'), ('f32', 'binary8p3f'), ('f64', 'bf16'), ('f64', 'f16'),
                 ('f16', 'e5m2'), ('bf16', 'e4m3fnuz'), ('e5m2', 'e4m3'), ('e4m3', 'bf16'), ('tf32', 'bf16'),
                 ('f32', 'custom:e=4,m=3,bias=7,inf=ieee,nan=ieee'),
                 ('f32', 'e8m0'), ('bf16', 'e8m0'), ('f64', 'e8m0'), ('e8m0', 'f32'), ('e8m0', 'e4m3'),
                 ('e4m3', 'e8m0')]
        for i, (s, d) in enumerate(convs):
            for j, m in enumerate(modes):
                for r in (0, 3):
                    add('%s_to_%s' % (s, d), dict(VARIANTS[(i + j + r) % 6], mode=m), 'smoke_conv', 400)
        return jobs

    K = 0.3 if level == 'quick' else 1.0
    small8 = ['e4m3', 'e5m2', 'e4m3fnuz', 'e5m2fnuz', 'binary8p4e', 'binary8p3f', 'binary8p1e',
              'binary8p5f', 'e6m1', 'custom:e=4,m=3,bias=7,inf=ieee,nan=ieee', 'e3m4fn']
    tiny6 = ['e3m2', 'e2m3', 'e2m1']
    wide = ['f16', 'bf16', 'tf32']
    for f in small8 + tiny6 + wide:
        F = O.get_format(f)
        for opn in ['add', 'sub', 'mul', 'div']:
            for (m, v) in allvars:
                kw = dict(v, mode=m)
                if F.vbits <= 6 or (F.vbits <= 8 and m == 'rne' and not v):
                    add('%s_%s' % (f, opn), kw, 'binary', 0, True)
                else:
                    add('%s_%s' % (f, opn), kw, 'binary', int((1500 if F.vbits <= 8 else 2500) * K))
        for (m, v) in allvars:
            kw = dict(v, mode=m)
            add('%s_sqrt' % f, kw, 'unary', int(3000 * K), F.vbits <= 8)
            if F.vbits <= 4:
                add('%s_mulAdd' % f, kw, 'fma', 0, True)
            else:
                add('%s_mulAdd' % f, kw, 'fma', int((2500 if F.vbits <= 8 else 3000) * K))
    # f16/bf16 sqrt exhaustive in rne
    for f in ['f16', 'bf16']:
        add('%s_sqrt' % f, dict(mode='rne'), 'unary', 0, True)
    convs = []
    for d in ['e4m3', 'e5m2', 'e4m3fnuz', 'e5m2fnuz', 'e3m2', 'e2m3', 'e2m1', 'f16', 'bf16', 'tf32',
              'binary8p4e', 'binary8p3f', 'binary8p1e', 'binary8p5f', 'e6m1',
              'custom:e=4,m=3,bias=7,inf=ieee,nan=ieee']:
        convs.append(('f32', d))
    for d in ['f32', 'f16', 'bf16', 'e4m3', 'e5m2', 'e2m1', 'binary8p5f', 'e3m2', 'tf32']:
        convs.append(('f64', d))
    convs += [('bf16', 'e5m2'), ('bf16', 'e4m3'), ('f16', 'e4m3fnuz'), ('f16', 'e4m3'), ('f16', 'e5m2'),
              ('e5m2', 'e4m3'), ('e4m3', 'e5m2'), ('e2m1', 'f32'), ('e3m2', 'f16'), ('e4m3', 'bf16'),
              ('e5m2fnuz', 'f16'), ('binary8p4e', 'e4m3'), ('e4m3', 'e2m1'), ('e5m2', 'e2m1'),
              ('f16', 'e2m3'), ('tf32', 'bf16'), ('e4m3fnuz', 'e5m2fnuz'), ('e4m3fnuz', 'f32'),
              ('e5m2', 'e4m3fnuz'), ('e5m2', 'f16'), ('bf16', 'f16'), ('f16', 'bf16'), ('e4m3', 'e4m3fnuz'),
              ('e5m2fnuz', 'e5m2'), ('binary8p3f', 'binary8p4e'), ('f32', 'f64'), ('e2m3', 'e2m1'),
              ('binary8p1e', 'f32'), ('f32', 'binary8p2e'), ('e5m2', 'binary8p3e')]
    for s, d in convs:
        small = O.get_format(s).vbits <= 8
        for (m, v) in allvars:
            if small:
                add('%s_to_%s' % (s, d), dict(v, mode=m), 'allcodes')
            else:
                add('%s_to_%s' % (s, d), dict(v, mode=m), 'conv', int(800 * K))
    if level != 'full':
        return jobs

    # extended set
    full = dict(sat=True, tin='before', ftz=True, daz=True)
    for f in ['e4m3', 'e5m2', 'binary8p3f', 'e4m3fnuz', 'e3m4fnuz']:
        for opn in ['add', 'sub', 'mul', 'div']:
            for m in modes:
                for v in ([dict(), full] if f != 'e3m4fnuz' else [dict()]):
                    if m == 'rne' and not v and f != 'e3m4fnuz':
                        continue  # already in the base set
                    add('%s_%s' % (f, opn), dict(v, mode=m), 'binary', 0, True)
    for f in ['e2m3', 'e3m2']:
        for m in ['rne', 'rdn', 'rto']:
            add('%s_mulAdd' % f, dict(mode=m), 'fma', 0, True)
    for m in modes:
        add('tf32_add', dict(mode=m), 'tf32junk')
        add('tf32_mul', dict(mode=m), 'tf32junk')
        add('tf32_to_f32', dict(mode=m), 'tf32junk1')

    # extra set
    for f in ['f16', 'bf16', 'tf32', 'f32', 'f64', 'e4m3', 'e5m2', 'binary8p4e', 'e2m3']:
        for (m, v) in allvars:
            add('%s_mulAdd' % f, dict(v, mode=m), 'fma2', 600)
    for f in ['f32', 'f64']:
        for opn in ['add', 'sub', 'mul', 'div']:
            for (m, v) in allvars:
                add('%s_%s' % (f, opn), dict(v, mode=m), 'binary', 800)
        for (m, v) in allvars:
            add('%s_sqrt' % f, dict(v, mode=m), 'unary', 800)
            add('%s_mulAdd' % f, dict(v, mode=m), 'fma', 800)
    for s, d in [('f32', 'e8m0'), ('bf16', 'e8m0'), ('f64', 'e8m0'), ('e8m0', 'f32'), ('e8m0', 'bf16'),
                 ('e8m0', 'e4m3'), ('e8m0', 'f16'), ('e4m3', 'e8m0')]:
        small = O.get_format(s).vbits <= 8
        for (m, v) in allvars:
            if small:
                add('%s_to_%s' % (s, d), dict(v, mode=m), 'allcodes')
            else:
                add('%s_to_%s' % (s, d), dict(v, mode=m), 'conv', 500)
    for f in ['custom:e=4,m=3,bias=8,inf=no,nan=uz', 'custom:e=3,m=4,bias=3,inf=ieee,nan=ieee',
              'custom:e=5,m=2,bias=12,inf=no,nan=fn']:
        for opn in ['add', 'mul', 'div']:
            for m in modes:
                add('%s_%s' % (f, opn), dict(mode=m), 'binary', 0, True)
        for (m, v) in allvars:
            add('%s_sqrt' % f, dict(v, mode=m), 'unary', 0)
            add('%s_mulAdd' % f, dict(v, mode=m), 'fma', 1000)
            add('f32_to_%s' % f, dict(v, mode=m), 'conv', 300)
    return jobs


# ------------------------------------------------------------ running
def run_fpemu(fpemu, op, opts, vecs, fmts_in, draws=None):
    """`fpemu run`; in sr, vector line i takes draws[i] (`--sr-draws`)"""
    lines = [' '.join(hexs(fmts_in[i], c) for i, c in enumerate(v)) for v in vecs]
    inp = '\n'.join(lines) + '\n'
    extra, tmp = [], None
    if draws is not None:
        fd, tmp = tempfile.mkstemp(prefix='spec_oracle_draws.')
        with os.fdopen(fd, 'w') as fh:
            fh.write(''.join('%016X\n' % d for d in draws))
        extra = ['--sr-draws', tmp]
    try:
        p = subprocess.run([fpemu, 'run', op] + opts.args() + extra, input=inp, capture_output=True, text=True)
    finally:
        if tmp:
            os.unlink(tmp)
    if p.returncode != 0:
        raise RuntimeError('%s run %s %s: exit %d: %s' % (fpemu, op, opts, p.returncode, p.stderr[:500]))
    outl = [l for l in p.stdout.split('\n') if l.strip()]
    if len(outl) != len(vecs):
        raise RuntimeError('%s run %s %s: %d lines for %d vectors' % (fpemu, op, opts, len(outl), len(vecs)))
    return lines, outl


def check_config(job):
    """run one job; returns (op, options, vectors, {class: count}, {class: examples})"""
    fpemu, (op, okw, gen, args, seedkey) = job
    opname, fmts = O.parse_op(op)
    vecs = GENERATORS[gen](fmts, random.Random(seedkey), *args)
    o = O.Opts(**okw)
    dst = fmts[-1]
    src_fmts = [fmts[0]] * len(vecs[0])
    draws = None
    if o.mode == 'sr':
        # one draw per line: 0 and all ones (the extremes), 2^63 and its
        # neighbours (half an ulp, under every R), uniform ones, and on 40%
        # of the lines one of the two draws on either side of the line's
        # decision: r = T - 1 (up) or T (down) in the top R bits, T =
        # ceil(frac x 2^R), frac from the oracle's own last sr rounding
        rd = random.Random(seedkey + ':draws')
        pick = [0, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, (1 << 63) + 1]
        R = o.srbits if 1 <= o.srbits <= 64 else 64
        draws = []
        for v in vecs:
            t = rd.random()
            if t < 0.4:
                o.draw, o.probe = 0, []
                O.compute(opname, fmts, v, o)
                o.probe, probe = None, o.probe
                if probe:
                    r, d = probe[-1]
                    T = -((-r << R) // d)  # ceil(r / d x 2^R)
                    top = T - 1 if (t < 0.2 or T >= 1 << R) and T > 0 else T
                    draws.append(top << (64 - R) | rd.getrandbits(64 - R))
                    continue
            draws.append(rd.choice(pick) if t > 0.85 else rd.getrandbits(64))
    lines, outl = run_fpemu(fpemu, op, o, vecs, src_fmts, draws)
    res = Counter()
    examples = defaultdict(list)
    for i, (v, inl, ol) in enumerate(zip(vecs, lines, outl)):
        if draws is not None:
            o.draw = draws[i]
        parts = ol.split()
        got_c = int(parts[-2], 16)
        got_f = int(parts[-1], 16)
        exp_c, exp_f, tags = O.compute(opname, fmts, v, o)
        if got_c == exp_c and got_f == exp_f:
            res['ok'] += 1
            for t in set(tags):
                res['ok-tagged:' + t] += 1
            continue
        both_nan = dst.nan != 'none' and dst.is_nan_code(got_c) and dst.is_nan_code(exp_c)
        if both_nan and got_f == exp_f:
            key = 'nan-payload'
        elif tags:
            key = 'ambiguous:' + ','.join(sorted(set(tags)))
        else:
            key = 'MISMATCH'
        res[key] += 1
        if len(examples[key]) < 3:
            examples[key].append('%s => got %s %02X, oracle %s %02X%s' % (
                inl, hexs(dst, got_c), got_f, hexs(dst, exp_c), exp_f,
                ' (draw %016X)' % o.draw if draws is not None else ''))
    return op, repr(o), len(vecs), dict(res), dict(examples)


def bad_count(c):
    """disagreements in a Counter of classes"""
    return sum(n for k, n in c.items() if k != 'vectors' and k != 'configs' and not k.startswith('ok'))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    lv = ap.add_mutually_exclusive_group()
    lv.add_argument('--smoke', dest='level', action='store_const', const='smoke')
    lv.add_argument('--quick', dest='level', action='store_const', const='quick')
    lv.add_argument('--full', dest='level', action='store_const', const='full')
    ap.add_argument('--only', default=None)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--out', default=os.environ.get('RESDIR'))
    ap.add_argument('--ftz-literal', action='store_true')
    a = ap.parse_args(argv)
    level = a.level or 'smoke'
    fpemu = fpemu_bin()
    if not os.access(fpemu, os.X_OK):
        print('compare.py: %s is not an executable (set FPEMU_BIN or build bin/fpemu)' % fpemu, file=sys.stderr)
        return 2
    out = a.out or tempfile.mkdtemp(prefix='spec_oracle.')
    os.makedirs(out, exist_ok=True)

    jobs = build_jobs(level, a.only, a.seed, a.ftz_literal)
    if not jobs:
        print('compare.py: no op matches --only %s' % a.only, file=sys.stderr)
        return 2
    print('%s: %d configs, %s, ftz read as %s' % (level, len(jobs), fpemu,
          'flush subnormal results only (--ftz-literal)' if a.ftz_literal else 'flush tiny results'), flush=True)
    t0 = time.time()
    per_op = defaultdict(Counter)
    per_group = defaultdict(Counter)
    group_fmts = defaultdict(set)
    mism = []
    try:
        with Pool(a.jobs) as pool:
            for op, o, n, res, ex in pool.imap_unordered(check_config, [(fpemu, j) for j in jobs], chunksize=1):
                g = group_of(op)
                if '_to_' not in op:
                    group_fmts[g].add(O.parse_op(op)[1][0].name)
                for c in (per_op[op], per_group[g]):
                    c['configs'] += 1
                    c['vectors'] += n
                    c.update(res)
                for k, lst in ex.items():
                    for e in lst:
                        mism.append('%s\t%s\t%s\t%s' % (k, op, o, e))
    except RuntimeError as e:
        print('compare.py: %s' % e, file=sys.stderr)
        return 2
    secs = time.time() - t0

    tot = Counter()
    with open(os.path.join(out, 'summary.txt'), 'w') as fh:
        for op in sorted(per_op):
            c = per_op[op]
            tot.update(c)
            fh.write('%-60s %s\n' % (op, ' '.join('%s=%d' % kv for kv in sorted(c.items()))))
        fh.write('TOTAL %s\n' % ' '.join('%s=%d' % kv for kv in sorted(tot.items())))
    with open(os.path.join(out, 'mismatches.txt'), 'w') as fh:
        fh.write(''.join(m + '\n' for m in sorted(mism)))

    order = [g for g, _ in FAMILIES] + ['conversions', 'e8m0 conversions']
    for g in sorted(per_group, key=order.index):
        c = per_group[g]
        names = sorted(group_fmts[g])
        print('%-17s %5d configs %10d vectors, %d disagreements%s' % (
            g + ':', c['configs'], c['vectors'], bad_count(c), ('  (' + ' '.join(names) + ')') if names else ''))
    bad = bad_count(tot)
    print('TOTAL: %d configs, %d vectors, %d disagreements in %.1fs' % (tot['configs'], tot['vectors'], bad, secs))
    if bad:
        kinds = Counter()
        for k, n in tot.items():
            if k not in ('vectors', 'configs') and not k.startswith('ok'):
                kinds[k] += n
        print('by class: ' + ', '.join('%s=%d' % kv for kv in sorted(kinds.items())))
        for m in sorted(mism)[:10]:
            print('  ' + m.replace('\t', '  '))
    print('details: %s/summary.txt, %s/mismatches.txt' % (out, out))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
