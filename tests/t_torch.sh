#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_torch.sh: the PyTorch bridge (python/fpemu/torch.py, docs/torch.md):
# pytest runs python/tests/test_torch*.py in a virtual environment with
# torch ($FPEMU_TORCH_PYTHON, else $FPEMU_BUILD/venv-torch, which `make
# test-torch` makes) on the in-tree package with this build's libfpemu.so:
# the converted Linear's GEMMs against fpemu.gemm bit for bit, delayed
# scaling, GradScaler, telemetry, RunLogger's folders read by `fpemu report`
# and `fpemu drift`, and examples/torch_bridge.py in 5 steps. Without such an
# environment it skips (torch is a 3 GB install). Each pytest test is one
# TAP line (from pytest's JUnit XML).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
BUILD=${FPEMU_BUILD:-$ROOT/build}
PY=${FPEMU_TORCH_PYTHON:-$BUILD/venv-torch/bin/python}
LIB=$BUILD/libfpemu.so.0
if [ ! -x "$PY" ] || ! "$PY" -c 'import torch, numpy, ml_dtypes, pytest' 2>/dev/null; then
    echo "1..0 # SKIP torch not installed (make test-torch installs it)"; exit 0
fi
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make)"; exit 1; fi
if [ ! -f "$LIB" ]; then echo "1..1"; echo "not ok 1 - $LIB is not built (make)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_torch.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

FPEMU_LIBRARY=$LIB FPEMU_BIN=$BIN FPEMU_BUILD=$BUILD FPEMU_ROOT=$ROOT PYTHONDONTWRITEBYTECODE=1 \
    "$PY" -m pytest -q -p no:cacheprovider --basetemp="$TMP/pytest" --junitxml="$TMP/junit.xml" \
    -o junit_family=xunit1 "$ROOT"/python/tests/test_torch*.py >"$TMP/log" 2>&1
rc=$?
"$PY" "$HERE/lib/junit_tap.py" "$TMP/junit.xml" "$TMP/log" "$rc"
[ $? = 0 ] && [ "$rc" = 0 ]
