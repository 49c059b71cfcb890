#!/bin/sh
# SPDX-License-Identifier: MIT
# t_ex2_fit.sh: experiments/sfu_ex2_table.h, the SFU's ex2 table that
# numerics=torch-cuda's tc_ex2_approx uses, is what gpu/probes/fit_ex2.py
# derives from the recording (tests/data/ex2-approx/ex2-approx.npz, its one
# source): regenerated, it is byte-identical. (tests/t_ex2_approx.c checks
# the model against every recorded result.) Prints TAP; skips without
# NumPy.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BUILD=${FPEMU_BUILD:-$ROOT/build}
. "$HERE/lib/tap.sh"
cd "$ROOT" || exit 1
PY=${FPEMU_PYTHON:-$BUILD/venv/bin/python}
if ! "$PY" -c 'import numpy' 2>/dev/null; then echo "1..0 # SKIP $PY has no numpy (make deps; make test sets FPEMU_PYTHON)"; exit 0; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_ex2_fit.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
if "$PY" gpu/probes/fit_ex2.py tests/data/ex2-approx/ex2-approx.npz >"$TMP/table.h" 2>"$TMP/err" \
    && cmp -s "$TMP/table.h" experiments/sfu_ex2_table.h; then
    pass "fit_ex2.py regenerates experiments/sfu_ex2_table.h from the recording, byte for byte"
else fail "fit_ex2.py regenerates experiments/sfu_ex2_table.h from the recording" "$(cat "$TMP/err")" \
    "$(diff "$TMP/table.h" experiments/sfu_ex2_table.h | head -10)"; fi
# a recording that is not ex2's: refused with a message naming it
"$PY" - "$TMP/bad.npz" <<'PY'
import sys
import numpy as np
np.savez(sys.argv[1], grid_first=np.array([0x3F000000], np.uint32), grid_diff=np.zeros(1 << 24, np.int8))
PY
"$PY" gpu/probes/fit_ex2.py "$TMP/bad.npz" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" != 0 ] && grep -q "bad.npz: .*not an ex2 recording" "$TMP/err" && [ ! -s "$TMP/out" ]; then
    pass "a constant grid is refused (not an ex2 recording), nothing written"
else fail "a constant grid is refused" "exit $rc" "$(cat "$TMP/err")"; fi
tap_end
