#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_mma_cli.sh: `fpemu mma`, `fpemu probe` and `fpemu gemm` through the real
# binary: known lines (Fasi et al. vectors), integer MMA, promotion, the
# probe's key=value report, GEMM on .npy files (values, codes, Fortran
# order, C), and bad input (exit 2 and a message). Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu) (make test builds it; make deps installs the tools)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_mma_cli.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib/tap.sh"

# mma_is "OPTIONS" INPUT EXPECTED
mma_is() {
    local opts=$1 in=$2 want=$3 got rc
    got=$(printf '%s\n' "$in" | "$BIN" mma $opts 2>"$TMP/err"); rc=$?
    if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then pass "mma $opts: ${want##* }"
    else fail "mma $opts: $in" "got (exit $rc): $got" "expected: $want" "stderr: $(head -c 300 "$TMP/err")"; fi
}
# mma_bad "OPTIONS" INPUT PATTERN: exit 2, stderr matches PATTERN
mma_bad() {
    local opts=$1 in=$2 pat=$3 rc
    printf '%b' "$in" | "$BIN" mma $opts >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$pat" "$TMP/err"; then pass "mma $opts bad input: $(head -c 120 "$TMP/err")"
    else fail "mma $opts bad input '$in'" "exit $rc" "stderr: $(head -c 300 "$TMP/err")"; fi
}

# V100 (f16 in, f32 c/d): c = 1, p = {2^-24, 2^-24}: no extra alignment bit -> 1
mma_is "--model v100 --a f16" "3F800000 0C00 0C00 0C00 0C00" "3F800000 0C00 0C00 0C00 0C00 3F800000"
# A100: one extra bit -> 1 + 2^-23
mma_is "--model a100 --a f16" "3F800000 0C00 0C00 0C00 0C00" "3F800000 0C00 0C00 0C00 0C00 3F800001"
# output rounding RZ: c = 1 + 3*2^-23, p = 3 x 1 -> 4
mma_is "--model h100 --a f16" "3F800003 3C00 3C00 3C00 3C00 3C00 3C00" "3F800003 3C00 3C00 3C00 3C00 3C00 3C00 40800000"
# block size 4 on V100: p[4] outside the first block -> 2
mma_is "--model v100 --a f16" "3F800001 3C00 3C00 0000 0000 0000 0000 0000 0000 0C00 1000" \
    "3F800001 3C00 3C00 0000 0000 0000 0000 0000 0000 0C00 1000 40000000"
mma_is "--model v100 --a f16" "3F800001 3C00 3C00 0000 0000 0000 0000 0C00 1000" \
    "3F800001 3C00 3C00 0000 0000 0000 0000 0C00 1000 40000001"
# guard bits: c = -(1 - 2^-24), p = {1}: V100 2^-23, A100 2^-24
mma_is "--model v100 --a f16" "BF7FFFFF 3C00 3C00" "BF7FFFFF 3C00 3C00 34000000"
mma_is "--model a100 --a f16" "BF7FFFFF 3C00 3C00" "BF7FFFFF 3C00 3C00 33800000"
# Hopper fp8: 13-bit output: 1 + (1 + 2^-13) truncates to 2 (e4m3 1.0 = 38); 1 + (1 + 2^-11) keeps its bit
mma_is "--model h100 --a e4m3" "3F800400 38 38" "3F800400 38 38 40000000"
mma_is "--model h100 --a e4m3" "3F801000 38 38" "3F801000 38 38 40000800"
# f16 accumulation rounds to nearest even
mma_is "--model v100 --a f16 --c f16 --d f16" "3C03 3C00 3C00 3C00 3C00 3C00 3C00" "3C03 3C00 3C00 3C00 3C00 3C00 3C00 4401"
# exact, k = 0, lower-case hex and short fields accepted
mma_is "--model exact --a e5m2 --c f32 --d f16" "3f800000 3c 3c" "3f800000 3c 3c 4000"
mma_is "--model exact --a f16" "40000000" "40000000 40000000"
# integer MMA: (-128)^2 + 127^2 = 32513; wrap and satfinite
mma_is "--model a100 --a s8 --c s32 --d s32" "00000000 80 80 7F 7F" "00000000 80 80 7F 7F 00007F01"
mma_is "--model a100 --a s8" "7FFFFFFF 80 80" "7FFFFFFF 80 80 80003FFF"
mma_is "--model a100 --a s8 --sat" "7FFFFFFF 80 80" "7FFFFFFF 80 80 7FFFFFFF"
mma_is "--model a100 --a u8 --b s8" "00000000 FF 80" "00000000 FF 80 FFFF8080"
# promotion: c = 2^14 and 4 products of 1 on Hopper fp8 (nfrac 13): the products are lost
# at alignment; promoted every 2 (chunks from c = 0, f32 adds) they add up to 2^14 + 4
mma_is "--model h100 --a e4m3" "46800000 38 38 38 38 38 38 38 38" "46800000 38 38 38 38 38 38 38 38 46800000"
mma_is "--model h100 --a e4m3 --promote 2" "46800000 38 38 38 38 38 38 38 38" "46800000 38 38 38 38 38 38 38 38 46800800"
# comments and blank lines pass through
got=$(printf '# a comment\n\n3F800000 3C00 3C00\n' | "$BIN" mma --model exact --a f16 2>&1)
if [ "$got" = "$(printf '# a comment\n\n3F800000 3C00 3C00 40000000')" ]; then pass "comments and blank lines pass through"
else fail "comments and blank lines pass through" "$got"; fi
# --describe
got=$("$BIN" mma --model h100 --a e4m3 --describe 2>&1)
case $got in *"block=32 nfrac=13"*"out_mant=13"*) pass "mma --describe: $(echo $got | head -c 80)";; *) fail "mma --describe" "$got";; esac

mma_bad "--model v100 --a f16" "3F800000 3C00\n" "line 1: expected C followed by pairs A B"
mma_bad "--model v100 --a f16" "3F800000 3C00 3C00\n3F800000 3C00 3C00 3C00\n" "line 2:.*odd number"
mma_bad "--model v100 --a f16" "3F800000 3CG0 3C00\n" "line 1: field 2 (A0)"
mma_bad "--model v100 --a f16" "3F800000 13C00 3C00\n" "at most 4 hex digits"
mma_bad "--model v100 --a f16" "1FF800000 3C00 3C00\n" "line 1: field 1 (C)"
mma_bad "--model x9000 --a f16" "" "unknown model 'x9000'"
mma_bad "--model v100 --a bf16" "" "model v100 has no MMA for bf16 x bf16"
mma_bad "--model h100 --a e4m3 --c f64" "" "accumulate into"
mma_bad "--model h100 --a nosuchfmt" "" "nosuchfmt"
mma_bad "--model h100 --a e4m3 --set colour=red" "" "unknown model option"
mma_bad "--model h100" "" "--a FMT is required"
mma_bad "--model h100 --a f16 --frobnicate" "" "unknown option"
# issue 26: a code outside a 4- or 6-bit field is refused (as `fpemu run` does), not masked
mma_bad "--model b200 --a e2m1" "3F800000 1F 01\n" "field 2 (A0) '1F': out of range for e2m1"
mma_bad "--model b200 --a e3m2" "3F800000 3C 40\n" "field 3 (B0) '40': out of range for e3m2"

# probe: key=value lines; recovers a100 f16; sees a changed nfrac
"$BIN" probe --model a100 --a f16 >"$TMP/p" 2>"$TMP/err"; rc=$?
if [ $rc = 0 ] && grep -qx "block=8" "$TMP/p" && grep -qx "nfrac=24" "$TMP/p" && grep -qx "align_round=rz" "$TMP/p" &&
    grep -qx "out_round=rz" "$TMP/p" && grep -qx "out_mant=23" "$TMP/p" && grep -qx "normalize=end" "$TMP/p" &&
    grep -qx "subnormals=kept" "$TMP/p" && grep -qx "matches=t4,a100,ada" "$TMP/p" && grep -q "^carry_bits=" "$TMP/p" &&
    grep -q "^guard=1" "$TMP/p" && grep -q "block size 8" "$TMP/err"; then pass "probe a100 f16: key=value lines and summary"
else fail "probe a100 f16" "exit $rc" "$(cat "$TMP/p")" "$(cat "$TMP/err")"; fi
"$BIN" probe --model h100 --a e5m2 --b e4m3 --set nfrac=20 >"$TMP/p" 2>/dev/null
if grep -qx "nfrac=20" "$TMP/p" && grep -qx "matches=none" "$TMP/p" && grep -qx "out_mant=13" "$TMP/p"; then pass "probe sees --set nfrac=20, matches none"
else fail "probe with --set nfrac=20" "$(cat "$TMP/p")"; fi
"$BIN" probe --model fma-seq --a f16 >"$TMP/p" 2>/dev/null
if grep -qx "block=1" "$TMP/p" && grep -qx "nfrac=inf" "$TMP/p" && grep -qx "normalize=each" "$TMP/p" && grep -qx "matches=fma-seq" "$TMP/p"; then
    pass "probe fma-seq: block 1, exact alignment, rounding after each add"
else fail "probe fma-seq" "$(cat "$TMP/p")"; fi
"$BIN" probe --model a100 --a s8 >/dev/null 2>"$TMP/err"; rc=$?
if [ $rc = 2 ]; then pass "probe of integer MMA refused: $(cat "$TMP/err")"; else fail "probe s8" "exit $rc"; fi

# gemm on .npy files (python3 writes the inputs)
if ! command -v python3 >/dev/null; then
    fail "python3 not found (gemm .npy tests; make deps installs it)"
else
    python3 - "$TMP" <<'PY'
import struct, sys
d = sys.argv[1]
def npy(path, descr, shape, data, fmt, fortran=False, version=1):
    h = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, "True" if fortran else "False",
        ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(h) + 1) % 64) % 64
    h = h + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]))
        f.write(struct.pack("<H" if version == 1 else "<I", len(h)))
        f.write(h.encode())
        f.write(struct.pack("<%d%s" % (len(data), fmt), *data))
A = [1, 2, 3, 4, 5, 6]          # 2 x 3
B = [1, 0, 0, 1, 1, 1]          # 3 x 2
npy(d + "/A.npy", "<f4", (2, 3), A, "f")
npy(d + "/B.npy", "<f4", (3, 2), B, "f")
npy(d + "/C.npy", "<f4", (2, 2), [0.5, 0.5, 0.5, 0.5], "f")
# the same A in Fortran order, version 2 header, f16 data
AF = [A[0], A[3], A[1], A[4], A[2], A[5]]
def f16(x): return struct.unpack("<H", struct.pack("<e", x))[0]
npy(d + "/AF.npy", "<f2", (2, 3), [f16(x) for x in AF], "H", fortran=True, version=2)
# e4m3 codes: 1.0 = 0x38, 2.0 = 0x40
npy(d + "/Ac.npy", "|u1", (2, 3), [0x38, 0x40, 0x38, 0x38, 0x38, 0x38], "B")
npy(d + "/Bc.npy", "|u1", (3, 2), [0x38, 0x38, 0x38, 0x38, 0x38, 0x38], "B")
PY
    readnpy() { python3 -c "
import struct,sys
b=open(sys.argv[1],'rb').read(); hl=struct.unpack('<H',b[8:10])[0]; h=b[10:10+hl].decode(); x=struct.unpack('<%df'%((len(b)-10-hl)//4),b[10+hl:])
print(h.strip()); print(' '.join('%g'%v for v in x))" "$1"; }
    # A x B = [[1+3, 2+3], [4+6, 5+6]] = [[4, 5], [10, 11]]
    "$BIN" gemm --model exact --afmt f32 --a "$TMP/A.npy" --b "$TMP/B.npy" --out "$TMP/D.npy" 2>"$TMP/err"; rc=$?
    got=$(readnpy "$TMP/D.npy" 2>&1)
    if [ $rc = 0 ] && [ "$got" = "$(printf "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n4 5 10 11")" ]; then pass "gemm exact f32: D = A x B written as <f4"
    else fail "gemm exact f32" "exit $rc: $got" "$(cat "$TMP/err")"; fi
    "$BIN" gemm --model h100 --afmt e4m3 --a "$TMP/AF.npy" --b "$TMP/B.npy" --c "$TMP/C.npy" --out "$TMP/D2.npy" 2>"$TMP/err"; rc=$?
    got=$(readnpy "$TMP/D2.npy" 2>&1 | tail -1)
    if [ $rc = 0 ] && [ "$got" = "4.5 5.5 10.5 11.5" ]; then pass "gemm h100 e4m3, Fortran-order f16 A (v2 header), + C"
    else fail "gemm h100 e4m3 + C" "exit $rc: $got" "$(cat "$TMP/err")"; fi
    "$BIN" gemm --model h100 --afmt e4m3 --scaling tensor --a "$TMP/A.npy" --b "$TMP/B.npy" --out "$TMP/D8.npy" 2>"$TMP/err"; rc=$?
    got=$(readnpy "$TMP/D8.npy" 2>&1 | tail -1)
    # A * 448/6 in e4m3 loses bits: 74.67 -> 72, 149.3 -> 144, 298.7 -> 288, 373.3 -> 384, so
    # D = [[(72+224), (144+224)], [(288+448), (384+448)]] / 74.667 (B * 448 is exact)
    if [ $rc = 0 ] && grep -q "A amax 6 scale 74.6667, B amax 1 scale 448" "$TMP/err" && [ "$got" = "3.96429 4.92857 9.85714 11.1429" ]; then pass "gemm tensor scaling: scales and dequantised D ($got)"
    else fail "gemm tensor scaling" "exit $rc: $got" "$(cat "$TMP/err")"; fi
    "$BIN" gemm --model h100 --afmt e4m3 --a "$TMP/Ac.npy" --b "$TMP/Bc.npy" --out "$TMP/D3.npy" 2>"$TMP/err"; rc=$?
    got=$(readnpy "$TMP/D3.npy" 2>&1 | tail -1)
    if [ $rc = 0 ] && [ "$got" = "4 4 3 3" ]; then pass "gemm from e4m3 codes (|u1)"
    else fail "gemm from codes" "exit $rc: $got" "$(cat "$TMP/err")"; fi
    "$BIN" gemm --model h100 --afmt e4m3 --a "$TMP/A.npy" --b "$TMP/B.npy" --ta --out "$TMP/D4.npy" 2>"$TMP/err"; rc=$?
    if [ $rc = 2 ] && grep -q "shape mismatch" "$TMP/err" && [ ! -e "$TMP/D4.npy" ]; then pass "gemm shape mismatch: exit 2, no output file: $(cat "$TMP/err")"
    else fail "gemm shape mismatch" "exit $rc" "$(cat "$TMP/err")"; fi
    "$BIN" gemm --model h100 --afmt e4m3 --scaling tensor --a "$TMP/Ac.npy" --b "$TMP/Bc.npy" --out "$TMP/D5.npy" 2>"$TMP/err"; rc=$?
    if [ $rc = 2 ] && grep -q "scaling must be none" "$TMP/err"; then pass "gemm codes with a scaling recipe refused"; else fail "gemm codes + scaling" "exit $rc" "$(cat "$TMP/err")"; fi
    "$BIN" gemm --model v100 --afmt e4m3 --a "$TMP/A.npy" --b "$TMP/B.npy" --out "$TMP/D6.npy" 2>"$TMP/err"; rc=$?
    if [ $rc = 2 ] && grep -q "no MMA for e4m3" "$TMP/err"; then pass "gemm v100 e4m3 refused: $(cat "$TMP/err")"; else fail "gemm v100 e4m3" "exit $rc" "$(cat "$TMP/err")"; fi
    "$BIN" gemm --model h100 --afmt e4m3 --scaling bogus --a "$TMP/A.npy" --b "$TMP/B.npy" --out "$TMP/D7.npy" 2>"$TMP/err"; rc=$?
    if [ $rc = 2 ] && grep -q "unknown scaling recipe" "$TMP/err"; then pass "gemm unknown recipe refused"; else fail "gemm bogus recipe" "exit $rc" "$(cat "$TMP/err")"; fi
    ls "$TMP" | grep -q '\.tmp\.' && fail "no temporary files left behind" "$(ls "$TMP")" || pass "no temporary files left behind"
fi
tap_end
