#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_npy.sh: the .npy reader behind `fpemu gemm` (cli/npy.c) on bad input:
# wrong magic, bad header, unsupported dtype or version, 0-d/3-d shapes,
# truncated or trailing data, shape mismatch: exit 2, a message naming the
# file and the problem, and no output file. Good variants (v1/v2/v3,
# Fortran order, '<f2', 1-D) are accepted. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu) (make test builds it; make deps installs the tools)"; exit 1; fi
if ! command -v python3 >/dev/null; then echo "1..1"; echo "not ok 1 - python3 not found (writes the test files) (make test builds it; make deps installs the tools)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_npy.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib/tap.sh"
python3 - "$TMP" <<'PY'
import struct, sys
d = sys.argv[1]
def raw(path, header, data=b"", version=1, magic=b"\x93NUMPY", hl=None):
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(header) + 1) % 64) % 64
    h = (header + " " * pad + "\n").encode()
    n = len(h) if hl is None else hl
    with open(path, "wb") as f:
        f.write(magic + bytes([version, 0]) + struct.pack("<H" if version == 1 else "<I", n) + h + data)
def f4(*x): return struct.pack("<%df" % len(x), *x)
good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"
raw(d + "/B.npy", good, f4(1, 0, 0, 1))
raw(d + "/good_v1.npy", good, f4(1, 2, 3, 4))
raw(d + "/good_v2.npy", good, f4(1, 2, 3, 4), version=2)
raw(d + "/good_v3.npy", good, f4(1, 2, 3, 4), version=3)
raw(d + "/good_fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", f4(1, 3, 2, 4))
raw(d + "/good_f2.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", struct.pack("<4e", 1, 2, 3, 4))
raw(d + "/bad_magic.npy", good, f4(1, 2, 3, 4), magic=b"\x93NUMPZ")
open(d + "/bad_empty.npy", "wb").close()
raw(d + "/bad_version.npy", good, f4(1, 2, 3, 4), version=9)
raw(d + "/bad_dtype.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", struct.pack("<4d", 1, 2, 3, 4))
raw(d + "/bad_bigendian.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", f4(1, 2, 3, 4))
raw(d + "/bad_nodescr.npy", "{'fortran_order': False, 'shape': (2, 2), }", f4(1, 2, 3, 4))
raw(d + "/bad_notdict.npy", "descr: <f4", f4(1, 2, 3, 4))
raw(d + "/bad_fortran.npy", "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 2), }", f4(1, 2, 3, 4))
raw(d + "/bad_shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", f4(1, 2, 3, 4))
raw(d + "/bad_0d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f4(1))
raw(d + "/bad_3d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", f4(1, 2, 3, 4))
raw(d + "/bad_truncated.npy", good, f4(1, 2, 3))
raw(d + "/bad_trailing.npy", good, f4(1, 2, 3, 4, 5))
raw(d + "/bad_hlen.npy", good, f4(1, 2, 3, 4), hl=5000)
raw(d + "/shape23.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f4(1, 2, 3, 4, 5, 6))
raw(d + "/vec.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4(1, 2))
PY
gemm() { "$BIN" gemm --model exact --afmt f32 "$@" --out "$TMP/D.npy" >"$TMP/out" 2>"$TMP/err"; }
for f in good_v1 good_v2 good_v3 good_fortran good_f2; do
    rm -f "$TMP/D.npy"
    gemm --a "$TMP/$f.npy" --b "$TMP/B.npy"; rc=$?
    if [ $rc = 0 ] && [ -s "$TMP/D.npy" ]; then pass "$f accepted"; else fail "$f accepted" "exit $rc" "$(cat "$TMP/err")"; fi
done
# Fortran order and f16 give the same D as C order f32
if cmp -s <(gemm --a "$TMP/good_fortran.npy" --b "$TMP/B.npy"; cat "$TMP/D.npy") <(gemm --a "$TMP/good_v1.npy" --b "$TMP/B.npy"; cat "$TMP/D.npy"); then
    pass "Fortran order read as the same matrix"; else fail "Fortran order read as the same matrix"; fi
bad() {
    local f=$1 pat=$2 rc
    rm -f "$TMP/D.npy"
    gemm --a "$TMP/$f.npy" --b "$TMP/B.npy"; rc=$?
    if [ $rc = 2 ] && grep -q -- "$f.npy: .*$pat" "$TMP/err" && [ ! -e "$TMP/D.npy" ] && [ "$(wc -l <"$TMP/err")" = 1 ]; then
        pass "$f: exit 2: $(cat "$TMP/err")"
    else fail "$f: exit 2 with '$pat'" "exit $rc" "stderr: $(cat "$TMP/err")"; fi
}
bad bad_magic "wrong magic"
bad bad_empty "wrong magic"
bad bad_version "unsupported .npy format version 9"
bad bad_dtype "unsupported dtype '<f8'"
bad bad_bigendian "unsupported dtype '>f4'"
bad bad_nodescr "no 'descr'"
bad bad_notdict "expected a dict"
bad bad_fortran "fortran_order must be True or False"
bad bad_shape "shape must be a tuple"
bad bad_0d "0-d arrays"
bad bad_3d "more than 2 dimensions\|3 dimensions"
bad bad_truncated "truncated data: 12 of 16 bytes"
bad bad_trailing "trailing data"
bad bad_hlen "truncated\|bad header"
rm -f "$TMP/D.npy"
gemm --a "$TMP/shape23.npy" --b "$TMP/B.npy"; rc=$?
if [ $rc = 2 ] && grep -q "shape mismatch: A is 2 x 3 and B is 2 x 2" "$TMP/err" && [ ! -e "$TMP/D.npy" ]; then pass "shape mismatch: $(cat "$TMP/err")"
else fail "shape mismatch" "exit $rc" "$(cat "$TMP/err")"; fi
gemm --a "$TMP/vec.npy" --b "$TMP/B.npy"; rc=$?
if [ $rc = 2 ] && grep -q "2-D" "$TMP/err"; then pass "1-D A refused for gemm: $(cat "$TMP/err")"; else fail "1-D A" "exit $rc" "$(cat "$TMP/err")"; fi
gemm --a "$TMP/nonexistent.npy" --b "$TMP/B.npy"; rc=$?
if [ $rc = 2 ] && grep -q "nonexistent.npy: cannot open" "$TMP/err"; then pass "missing file: $(cat "$TMP/err")"; else fail "missing file" "exit $rc" "$(cat "$TMP/err")"; fi
"$BIN" gemm --model exact --afmt f32 --a "$TMP/good_v1.npy" --b "$TMP/B.npy" --out "$TMP/nodir/D.npy" 2>"$TMP/err"; rc=$?
if [ $rc = 2 ] && grep -q "cannot write" "$TMP/err"; then pass "unwritable output: $(cat "$TMP/err")"; else fail "unwritable output" "exit $rc" "$(cat "$TMP/err")"; fi
tap_end
