# SPDX-License-Identifier: MIT
"""xcheck_run.py: running bin/fpemu over vectors, for ref/xcheck.py and
ref/xcheck_gfloat.py (the references outside this repository)."""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FPEMU = os.environ.get("FPEMU_BIN", os.path.join(ROOT, "bin", "fpemu"))


def digits(bits):
    """hex digits of a code word as fpemu run reads and writes it"""
    return 2 if bits <= 8 else bits // 4


def run_fpemu(op, operands, widths, with_flags=False, extra=()):
    """fpemu run OP [extra options] over operands (a list of uint64 arrays,
    one per operand, printed in widths hex digits); returns the result
    codes (and the flags, with_flags). Exits 2 when fpemu fails or its
    output has the wrong shape."""
    fmt = " ".join("{:0%dX}" % w for w in widths).format
    text = "\n".join(fmt(*t) for t in zip(*(np.asarray(arr, dtype=np.uint64).tolist() for arr in operands))) + "\n"
    p = subprocess.run([FPEMU, "run", op, *extra], input=text.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    what = " ".join([op, *extra])
    if p.returncode != 0:
        sys.stderr.write("%s: fpemu run %s failed: %s\n" % (os.path.basename(sys.argv[0]), what, p.stderr.decode().strip()))
        sys.exit(2)
    n, k = len(operands[0]), len(operands) + 2
    tok = p.stdout.split()
    if len(tok) != n * k or p.stdout.count(b"\n") != n:
        sys.stderr.write("%s: fpemu run %s: expected %d lines of %d fields\n" % (os.path.basename(sys.argv[0]), what, n, k))
        sys.exit(2)
    res = np.array([int(t, 16) for t in tok[k - 2::k]], dtype=np.uint64)
    if with_flags:
        return res, np.array([int(t, 16) for t in tok[k - 1::k]], dtype=np.uint64)
    return res
