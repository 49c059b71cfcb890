#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/valgrind.sh (make valgrind-check): every subcommand of bin/fpemu on
# small sample inputs, good and bad, under valgrind memcheck. A case fails
# on any memcheck error (invalid read/write, uninitialised value used,
# definite leak) or on a crash; the subcommand's own exit status (0, 1, 2)
# is only printed. $FPEMU_BIN, $VALGRIND (default valgrind).
set -u
BIN=${FPEMU_BIN:-bin/fpemu}
VG=${VALGRIND:-valgrind}
FIX=tests/fixtures/bad
command -v "${VG%% *}" >/dev/null || { echo "valgrind-check: valgrind not found"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/vg.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
fails=0 cases=0
# vg STDIN ARGS...
vg() {
    in=$1; shift
    cases=$((cases + 1))
    $VG -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
        "$BIN" "$@" <"$in" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc = 99 ] || [ $rc -ge 128 ]; then
        fails=$((fails + 1)); echo "FAIL (exit $rc) fpemu $*"; grep -E '^==[0-9]+==' "$TMP/err" | head -20
    else
        echo "clean (exit $rc) fpemu $*"
    fi
}
printf '3C00 3C00\n7BFF 7BFF\n0001 8001\n7E00 3C00\n' >"$TMP/f16.vec"
"$BIN" run f16_add <"$TMP/f16.vec" >"$TMP/f16.full" 2>/dev/null
printf '43E80000\n43F00000\n7F800000\n00000001\n' >"$TMP/f32.vec"
vg /dev/null formats
vg /dev/null formats e4m3
vg /dev/null formats 'custom:e=4,m=3,bias=7,inf=no,nan=fn'
vg /dev/null formats --csv
vg /dev/null formats --error-curve e4m3 --points 200
vg /dev/null formats nosuch
vg "$TMP/f16.vec" run f16_add
printf "3C00 3C00 3C00\n7BFF 7BFF 0001\n" >"$TMP/f16.fma"
vg "$TMP/f16.fma" run f16_mulAdd
vg "$TMP/f16.vec" run f16_add --round sr --seed 3
vg "$TMP/f32.vec" run f32_to_e4m3 --sat
vg "$TMP/f16.full" verify f16_add
vg "$FIX/binary.vec" run f16_add
vg "$FIX/nul-byte.vec" verify f16_add
vg /dev/null check --format e4m3,f16 --op add,mul,fma --random 300 --threads 2 --quiet
vg /dev/null check --format e2m1 --op all --exhaustive --threads 1 --quiet
vg /dev/null check --format nope --op add
vg /dev/null train --model mlp-digits --policy fp8-current --steps 3 --quiet --set hidden=8 --set checkpoint_every=2 --out "$TMP/tr"
vg /dev/null train --resume "$TMP/tr" --steps 4 --quiet
vg /dev/null train --model mlp-digits --policy 16-mixed --steps 2 --quiet --set hidden=8 --threads 2 --out "$TMP/tr2"
vg /dev/null train --model mlp-digits --policy bf16-mixed --out "$TMP/tr3" --config "$FIX/missing-equals.cfg"
vg /dev/null drift "$TMP/tr/metrics.csv" "$TMP/tr/metrics.csv"
vg /dev/null drift "$TMP/tr" "$TMP/tr2"
vg /dev/null report --no-plots --out "$TMP/rep" "$TMP/tr" "$TMP/tr2"
vg /dev/null report --out "$TMP/rep2" /nonexist
if "$BIN" mma --help >/dev/null 2>&1; then
    printf '3F800000 3C00 3C00 4000 4000\n00000000 7BFF 7BFF 7BFF 7BFF\n' >"$TMP/mma.in"
    vg "$TMP/mma.in" mma --model h100 --a f16
    vg "$TMP/mma.in" mma --model exact --a f16
    vg /dev/null probe --model a100 --a f16
    vg "$FIX/binary.vec" mma --model h100 --a f16
fi
if "$BIN" gemm --help >/dev/null 2>&1 && command -v python3 >/dev/null; then
    python3 -c "
import struct
def npy(p, shape, data):
    h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }\" % shape
    h += ' ' * (64 - (10 + len(h) + 1) % 64) + '\n'
    open(p, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + struct.pack('<%df' % len(data), *data))
npy('$TMP/A.npy', (4, 40), [((i * 7) % 13 - 6) / 4 for i in range(160)])
npy('$TMP/B.npy', (40, 3), [((i * 5) % 11 - 5) / 8 for i in range(120)])
"
    vg /dev/null gemm --model h100 --afmt e4m3 --scaling tensor --a "$TMP/A.npy" --b "$TMP/B.npy" --out "$TMP/D.npy"
    vg /dev/null gemm --model b200 --afmt e4m3 --scaling mx --a "$TMP/A.npy" --b "$TMP/B.npy" --threads 2 --out "$TMP/D2.npy"
    vg /dev/null gemm --model h100 --afmt e4m3 --a "$FIX/ragged.csv" --b "$TMP/B.npy" --out "$TMP/D3.npy"
fi
if "$BIN" errk --help >/dev/null 2>&1; then
    vg /dev/null errk --kmin 16 --kmax 64 --dots 4 --seed 1 --out "$TMP/errk.csv"
fi
echo "valgrind-check: $cases cases, $fails with memcheck errors or crashes"
[ $fails = 0 ]
