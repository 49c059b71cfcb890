#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cli_checks.py: fpemu's vector interface (Berkeley TestFloat's line format,
docs/cli.md) against its text.

Part of the spec oracle (see oracle.py): written independently from the
specification text (docs/cli.md, docs/semantics.md), sharing
no code with emu/, cli/ or ref/ (C). Checks, in sections:
  synonyms  TestFloat's option spellings (-rnear_even ... -rodd,
            -tininessbefore/-tininessafter) give the same output as --round
            and --tininess; f16_fma is f16_mulAdd
  verify    `fpemu verify` passes the oracle's own result lines, matches any
            NaN unless --exact-nan, catches a one-bit flag error, rejects
            empty input, and prints docs/cli.md's example line
  input     `fpemu run` input rules: field widths, code ranges, field
            counts, comments and blank lines, flag bytes
  examples  the worked conversion examples of docs/semantics.md (f32 to
            e4m3/e5m2, OCP 8-bit FP spec rev 1.0)
  nan       the NaN policies canonical, x86 and cuda (docs/semantics.md)

Usage: python3 ref/spec_oracle/cli_checks.py [--quiet]   (about 1 s)
The program is $FPEMU_BIN, else ../../bin/fpemu relative to this script.
Prints a PASS or FAIL line per check (--quiet: FAIL lines only), then one line per section
("section NAME: N checks, M failures") and a total; exit status 1 when a
check fails, 0 otherwise. Python 3 standard library only.
"""
import random
import subprocess
import sys
from collections import Counter

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import oracle as O
import compare as C

FPEMU = C.fpemu_bin()
QUIET = '--quiet' in sys.argv[1:]
section = None
checks, fails = Counter(), Counter()


def run(args, inp):
    p = subprocess.run([FPEMU] + args, input=inp, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=''):
    checks[section] += 1
    if not (cond and QUIET):
        print('%s [%s] %s %s' % ('PASS' if cond else 'FAIL', section, name, detail if not cond else ''))
    if not cond:
        fails[section] += 1


rng = random.Random(7)
F = O.get_format('f16')
vecs = C.gen_binary(F, rng, 2000)
inp = '\n'.join(' '.join('%04X' % c for c in v) for v in vecs) + '\n'

section = 'synonyms'
syn = [('-rnear_even', 'rne'), ('-rnear_maxMag', 'rna'), ('-rminMag', 'rtz'), ('-rmax', 'rup'),
       ('-rmin', 'rdn'), ('-rodd', 'rto')]
for s, m in syn:
    for op in ['f16_add', 'f16_mul', 'f16_div']:
        a = run(['run', op, s], inp)
        b = run(['run', op, '--round', m], inp)
        check('synonym %s %s' % (op, s), a[0] == 0 and a[1] == b[1], a[2][:200])
for s, t in [('-tininessbefore', ['--tininess', 'before']), ('-tininessafter', ['--tininess', 'after'])]:
    a = run(['run', 'f16_mul', '--ftz', s], inp)
    b = run(['run', 'f16_mul', '--ftz'] + t, inp)
    check('synonym %s' % s, a[0] == 0 and a[1] == b[1], a[2][:200])
a = run(['run', 'f16_mulAdd'], '3C00 3C00 3C00\n')
b = run(['run', 'f16_fma'], '3C00 3C00 3C00\n')
check('fma alias', a[0] == 0 and a[1] == b[1] and a[1].split()[-2:] == ['4000', '00'], a)

section = 'verify'
o = O.Opts('rne')
lines = []
for v in vecs:
    c, fl, _ = O.compute('div', [F], v, o)
    lines.append(' '.join('%04X' % x for x in v) + ' %04X %02X' % (c, fl))
good = '\n'.join(lines) + '\n'
rc, out, err = run(['verify', 'f16_div'], good)
check('verify clean', rc == 0 and '0 mismatches' in out, out[-300:])
# replace canonical NaN results by another NaN: must still match, but not under --exact-nan
alt = []
nn = 0
for l in lines:
    p = l.split()
    if p[2] == '7E00':
        p[2] = 'FE01'
        nn += 1
    alt.append(' '.join(p))
alt = '\n'.join(alt) + '\n'
rc, out, err = run(['verify', 'f16_div'], alt)
check('verify any-NaN matches (%d NaN lines)' % nn, rc == 0, out[-300:])
rc, out, err = run(['verify', 'f16_div', '--exact-nan'], alt)
check('verify --exact-nan catches payloads', rc == 1 and ('%d mismatches' % nn) in out, out[-200:])
bad = lines[:]
p = bad[5].split()
p[3] = '%02X' % (int(p[3], 16) ^ 1)
bad[5] = ' '.join(p)
rc, out, err = run(['verify', 'f16_div'], '\n'.join(bad) + '\n')
check('verify catches a flag error', rc == 1 and 'line 6:' in out and '1 mismatches' in out, out[-300:])
rc, out, err = run(['verify', 'f16_div'], '')
check('verify empty input exit 2', rc == 2, (rc, out, err))
# docs/cli.md's example
rc, out, err = run(['verify', 'f16_add'], '3C00 0001 3C01 01\n')
check('docs/cli.md verify example', rc == 1 and 'line 1: 3C00 0001 => 3C00 01, expected 3C01 01' in out, out)

section = 'input'  # docs/cli.md (TestFloat's line format): "upper-case hex of its format's width"
rc, out, err = run(['run', 'f16_add'], '3C00 3C00 4000 00\n')
check('run accepts complete lines', rc == 0 and out == '3C00 3C00 4000 00\n', (out, err))
rc, out, err = run(['run', 'f16_add'], '3C0 3C00\n')
check('run rejects wrong width', rc == 2, (rc, out, err))
rc, out, err = run(['run', 'e2m1_add'], '1F 01\n')
check('run rejects out-of-range e2m1 code', rc == 2, (rc, out, err))
rc, out, err = run(['run', 'e3m2_add'], '40 01\n')
check('run rejects out-of-range e3m2 code', rc == 2, (rc, out, err))
rc, out, err = run(['run', 'f16_add'], '3C00\n')
check('run rejects wrong field count', rc == 2, (rc, out, err))
rc, out, err = run(['run', 'f16_sqrt'], '# c\n\n3C00\n')
check('run skips comments/blank', rc == 0 and out.split() == ['3C00', '3C00', '00'], (out, err))
rc, out, err = run(['run', 'f16_add'], '3C00 3C00 4000 20\n')
check('run rejects flags > 1F', rc == 2, (rc, out, err))

section = 'examples'  # docs/semantics.md's worked conversions (OCP 8-bit FP rev 1.0)
ex = [(['run', 'f32_to_e4m3'], '43E80000\n', '43E80000 7E 01'),
      (['run', 'f32_to_e4m3'], '43F00000\n', '43F00000 7F 05'),
      (['run', 'f32_to_e4m3', '--sat'], '43F00000\n', '43F00000 7E 05'),
      (['run', 'f32_to_e4m3', '--sat'], '7F800000\n', '7F800000 7E'),
      (['run', 'f32_to_e4m3'], '3A800000\n', '3A800000 00 03'),
      (['run', 'f32_to_e5m2'], '47700000\n', '47700000 7C 05'),
      (['run', 'f16_add'], '3C00 3C00\n', '3C00 3C00 4000 00')]
for args, i, want in ex:
    rc, out, err = run(args, i)
    check('example %s %s' % (' '.join(args), i.strip()), out.startswith(want), (out, err))

section = 'nan'  # docs/semantics.md: canonical, x86, cuda
for op, line, pol, want in [('f16_add', '7C00 FC00', 'canonical', '7E00'),
                            ('f16_add', '7C00 FC00', 'cuda', '7FFF'),
                            ('f16_add', '7C00 FC00', 'x86', 'FE00'),
                            ('f16_add', '7D01 7E05', 'x86', '7F01'),
                            ('f16_add', '3C00 7E05', 'x86', '7E05'),
                            ('bf16_mul', '7F80 0000', 'canonical', '7FC0'),
                            ('bf16_mul', '7F80 0000', 'cuda', '7FFF'),
                            ('f32_sqrt', 'BF800000', 'canonical', '7FC00000'),
                            ('e5m2_div', '00 00', 'canonical', '7E'),
                            ('e5m2_div', '00 00', 'cuda', '7F'),
                            ('e4m3_div', '00 00', 'canonical', '7F'),
                            ('e4m3fnuz_div', '00 00', 'canonical', '80'),
                            ('f64_add', '7FF0000000000000 FFF0000000000000', 'canonical', '7FF8000000000000')]:
    rc, out, err = run(['run', op, '--nan', pol], line + '\n')
    check('nan policy %s %s %s' % (pol, op, line), rc == 0 and out.split()[-2] == want, (out, err))

for sec in checks:
    print('section %s: %d checks, %d failures' % (sec, checks[sec], fails[sec]))
print('TOTAL: %d checks, %d failures' % (sum(checks.values()), sum(fails.values())))
sys.exit(1 if sum(fails.values()) else 0)
