#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_python.sh: the Python package (python/, docs/python.md): pytest runs
# python/tests in the build's virtual environment ($FPEMU_PYTHON, build/venv
# under make test) on the in-tree package with this build's libfpemu.so
# ($FPEMU_BUILD/libfpemu.so.0 through $FPEMU_LIBRARY): casts against
# ml_dtypes and `fpemu cast`, the figures against `fpemu cast --stats-json`,
# GEMMs and dot products against `fpemu gemm` and `fpemu mma` bit for bit,
# refusals, and a real `pip install ./python` into a fresh virtual
# environment. Each pytest test is one TAP line (from pytest's JUnit XML).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
BUILD=${FPEMU_BUILD:-$ROOT/build}
PY=${FPEMU_PYTHON:-$BUILD/venv/bin/python}
LIB=$BUILD/libfpemu.so.0
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make)"; exit 1; fi
if [ ! -f "$LIB" ]; then echo "1..1"; echo "not ok 1 - $LIB is not built (make)"; exit 1; fi
if ! "$PY" -c 'import numpy, ml_dtypes, pytest' 2>/dev/null; then
    echo "1..1"; echo "not ok 1 - $PY lacks numpy/ml_dtypes/pytest (make deps-py; make test sets FPEMU_PYTHON)"; exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_python.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
# under make test-asan the library carries ASan and UBSan: their runtime must
# be loaded before Python (which is not instrumented), and Python's own
# allocations at exit are not leaks of the library's
if [ -n "${FPEMU_HARDEN_ASAN:-}" ]; then
    asan=$(${CC:-cc} -print-file-name=libasan.so)
    export LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi

FPEMU_LIBRARY=$LIB FPEMU_BIN=$BIN FPEMU_BUILD=$BUILD FPEMU_ROOT=$ROOT PYTHONDONTWRITEBYTECODE=1 \
    "$PY" -m pytest -q -p no:cacheprovider --basetemp="$TMP/pytest" --junitxml="$TMP/junit.xml" \
    -o junit_family=xunit1 "$ROOT/python/tests" >"$TMP/log" 2>&1
rc=$?
env -u LD_PRELOAD "$PY" "$HERE/lib/junit_tap.py" "$TMP/junit.xml" "$TMP/log" "$rc"
[ $? = 0 ] && [ "$rc" = 0 ]
