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
"$PY" - "$TMP/junit.xml" "$TMP/log" "$rc" <<'PY'
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
except (OSError, ET.ParseError):
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
        # pytest's xfail: a known gap, named (docs/torch.md); TODO lines do not fail the run
        if skip.get("type") == "pytest.xfail":
            print("not ok %d - %s # TODO %s" % (n, name, (skip.get("message") or "").splitlines()[0][:200]))
        else:
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
