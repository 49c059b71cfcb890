#!/bin/sh
# SPDX-License-Identifier: MIT
# t_gpu_cli.sh: bin/fpemu-gpu's command line on a machine without a GPU:
# usage errors, `info` without a device, and whole validate/probe runs
# against --fake (an emu model behind the GPU interface; never a GPU result).
bindir=$(dirname "${FPEMU_BIN:-bin/fpemu}")
bin="$bindir/fpemu-gpu"
if [ ! -x "$bin" ]; then
    echo "1..0 # SKIP $bin not built (no nvcc)"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
check() { # check DESCRIPTION COMMAND...: ok when the command succeeds
    d=$1
    shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $d"; else echo "not ok $n - $d"; fail=1; fi
}
status() { # status WANT CMD...: run, keep stdout/stderr in $tmp, compare the exit status
    want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq "$want" ] || { echo "# exit $rc, wanted $want: $*"; sed 's/^/#   /' "$tmp/err" | head -5; return 1; }
}
has() { grep -q -- "$1" "$2" || { echo "# '$1' not in $2:"; sed 's/^/#   /' "$2" | head -5; return 1; }; }

echo "1..24"
check "no command: usage, exit 2" status 2 "$bin"
check "unknown command: exit 2" status 2 "$bin" frobnicate
check "unknown command named in the error" has "unknown command 'frobnicate'" "$tmp/err"
status 0 "$bin" kinds
check "kinds: 3 targets for each of the 30 kernels" test "$(grep -vc '^#' "$tmp/out")" -eq 90

"$bin" info >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ]; then
    check "info without a device: exit 2, says no CUDA device" has "no CUDA device" "$tmp/err"
else
    check "info with a device: exit 0, names it" has "compute capability" "$tmp/out"
fi
check "info --fake h100 lists wgmma as runnable" sh -c "'$bin' info --fake h100 | grep -q 'wgmma.m64n8k16.f32.f16.f16 *yes'"
check "info --fake a100: fp8 mma.sync needs 8.9" sh -c "'$bin' info --fake a100 | grep -q 'mma.m16n8k32.f32.e4m3.e4m3.f32 *no *needs at least compute capability 8.9'"

check "validate --cases abc: exit 2, names the option" sh -c "'$bin' validate --fake h100 --cases abc 2>&1 | grep -q -- \"--cases 'abc': expected an integer\""
check "validate --kind nope: exit 2" status 2 "$bin" validate --fake h100 --kind nope
check "validate --fake nope: exit 2" status 2 "$bin" validate --fake nope

check "validate --fake h100 writes the report, exit 0" status 0 "$bin" validate --fake h100 --cases 256 --seed 7 --out "$tmp/rep"
rep=$(ls "$tmp"/rep/FAKE-emu-model-h100-no-GPU-*.md 2>/dev/null | head -1)
check "report named DEVICE-DATE.md, no temporary file left" sh -c "[ -f '$rep' ] && [ \$(ls '$tmp/rep' | wc -l) -eq 1 ]"
check "report: 30 instruction lines, all with 0 mismatches" sh -c \
    "[ \$(grep -c '^instruction=.* cases=[1-9][0-9]* mismatches=0\$' '$rep') -eq 30 ]"
check "validate --record and --replay together: exit 2" status 2 "$bin" validate --fake h100 --record "$tmp/r1" --replay "$tmp/r1"
check "validate --replay of a missing file: exit 2, names it" sh -c \
    "'$bin' validate --replay '$tmp/none.rec' 2>&1 >/dev/null | grep -q \"none.rec': cannot open\"; [ \$? -eq 0 ]"
check "validate --set without '=': exit 2" status 2 "$bin" validate --fake h100 --set emax_floor
"$bin" validate --fake h100 --cases 256 --seed 3 --stdout --record "$tmp/fake.rec" >/dev/null 2>&1
check "validate --replay of its own recording: exit 0, same 30 lines" sh -c \
    "'$bin' validate --replay '$tmp/fake.rec' --cases 256 --seed 3 --stdout 2>/dev/null | grep -c '^instruction=.* mismatches=0\$' | grep -qx 30"
head -c 20000 "$tmp/fake.rec" >"$tmp/short.rec"
"$bin" validate --replay "$tmp/short.rec" --cases 256 --seed 3 --stdout >"$tmp/out" 2>"$tmp/err"
check "a truncated recording: exit 2, one error naming the call, later kinds not run" sh -c \
    "[ $? -eq 2 ] && [ \$(grep -c 'replay:' '$tmp/err') -eq 1 ] && grep -q 'ends inside call' '$tmp/err' && grep -q 'the replay stopped at an earlier kind' '$tmp/out'"
check "validate --set unknown key: exit 2, names it" sh -c \
    "'$bin' validate --fake h100 --cases 64 --set frob=1 --stdout 2>&1 >/dev/null | grep -q \"unknown model option 'frob'\""
check "report: header names device, compute capability, driver, runtime" sh -c \
    "grep -q '^- compute capability: 9.0' '$rep' && grep -q '^- driver: none, CUDA runtime: none' '$rep'"

check "validate --fake ada: wgmma not run, with the reason" sh -c \
    "'$bin' validate --fake ada --cases 64 --kind wgmma.m64n8k16.f32.f16.f16 --stdout | grep -q 'wgmma.m64n8k16.f32.f16.f16: needs exactly compute capability 9.0'"
mkdir -p "$tmp/ro" && chmod 500 "$tmp/ro"
if [ "$(id -u)" -ne 0 ]; then
    check "unwritable --out: exit 2, nothing left behind" sh -c \
        "'$bin' validate --fake h100 --cases 64 --kind cvt.rn.f16.f32 --out '$tmp/ro' 2>/dev/null; [ \$? -eq 2 ] && [ -z \"\$(ls '$tmp/ro')\" ]"
else
    check "unwritable --out: exit 2 (a path under a regular file)" sh -c \
        "touch '$tmp/file'; '$bin' validate --fake h100 --cases 64 --kind cvt.rn.f16.f32 --out '$tmp/file/sub' 2>/dev/null; [ \$? -eq 2 ]"
fi
check "probe --fake ada on fp8 mma.sync recovers the ada preset" sh -c \
    "'$bin' probe --fake ada --kind mma.m16n8k32.f32.e4m3.e4m3.f32 | grep -q 'verdict: agrees with preset ada'"
check "probe --kmax 3: exit 2" status 2 "$bin" probe --fake h100 --kmax 3
exit $fail
