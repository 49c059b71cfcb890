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
env -u LD_PRELOAD "$PY" - "$TMP/junit.xml" "$TMP/log" "$rc" <<'PY'
import sys
import xml.etree.ElementTree as ET
path, log, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
def tail(n=40):
    try:
        return open(log, errors="replace").read().splitlines()[-n:]
    except OSError:
        return []
try:
    cases = list(ET.parse(path).getroot().iter("testcase"))
except (OSError, ET.ParseError) as e:
    cases = None
n = failed = 0
for c in cases or []:
    n += 1
    name = "%s::%s" % (c.get("classname", "").rsplit(".", 1)[-1], c.get("name"))
    bad = c.find("failure") if c.find("failure") is not None else c.find("error")
    skip = c.find("skipped")
    if bad is not None:
        failed += 1
        print("not ok %d - %s" % (n, name))
        for line in ((bad.get("message") or "") + "\n" + (bad.text or "")).strip().splitlines()[-20:]:
            print("#   " + line)
    elif skip is not None:
        print("ok %d # SKIP %s: %s" % (n, name, skip.get("message", "")))
    else:
        print("ok %d - %s" % (n, name))
if cases is None or (rc not in (0, 1)) or (rc == 1 and failed == 0) or n == 0:
    n += 1
    print("not ok %d - pytest ran (exit %d)" % (n, rc))
    for line in tail():
        print("#   " + line)
print("1..%d" % n)
PY
[ $? = 0 ] && [ "$rc" = 0 ]
