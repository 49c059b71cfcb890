#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""alternate.py: compare builds of bench/one_op on a noisy machine.

Usage: bench/alternate.py K BIN [BIN ...] -- "FMT MODE OP" ["FMT MODE OP" ...]

Runs every BIN on each operation K times, the binaries alternated, each run
the best of 400 passes, and prints the best ns per call of each BIN. On a
shared VM a run's best moves by up to 2x from one minute to the next, so
builds are only compared when they take turns within the same minutes.
"""
import re
import subprocess
import sys


def main(argv):
    if '--' not in argv or len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    sep = argv.index('--')
    try:
        k = int(argv[0])
    except ValueError:
        k = 0
    bins, specs = argv[1:sep], argv[sep + 1:]
    if k < 1 or not bins or not specs:
        sys.stderr.write('alternate.py: need K >= 1, at least one BIN and one "FMT MODE OP"\n')
        return 2
    for spec in specs:
        best = [float('inf')] * len(bins)
        for _ in range(k):
            for j, b in enumerate(bins):
                p = subprocess.run([b] + spec.split() + ['400'], capture_output=True, text=True)
                m = re.search(r': ([0-9.]+) ns per call', p.stdout)
                if p.returncode != 0 or not m:
                    sys.stderr.write(f'alternate.py: {b} {spec}: {p.stderr.strip() or "no timing in its output"}\n')
                    return 1
                best[j] = min(best[j], float(m.group(1)))
        print(f'{spec:16s} ' + '  '.join(f'{x:7.2f}' for x in best), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
