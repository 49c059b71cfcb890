#!/bin/sh
# SPDX-License-Identifier: MIT
# t_gpu_device.sh: on a machine with a CUDA device, run every applicable
# kernel through `fpemu-gpu validate` and `fpemu-gpu probe` (small sizes)
# and check the report is complete. Mismatches against the emu model are
# findings, reported as diagnostics, not failures; a kernel that cannot run
# or a malformed report is a failure. Without a device: SKIP.
bindir=$(dirname "${FPEMU_BIN:-bin/fpemu}")
bin="$bindir/fpemu-gpu"
if [ ! -x "$bin" ]; then
    echo "1..0 # SKIP $bin not built (no nvcc)"
    exit 0
fi
if ! "$bin" info >/dev/null 2>&1; then
    echo "1..0 # SKIP no CUDA device"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..4"
"$bin" info >"$tmp/info" 2>&1
sed 's/^/# /' "$tmp/info"
runnable=$(grep -c '^  [a-z].* yes ' "$tmp/info")
"$bin" validate --cases 2048 --out "$tmp/rep" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 1 ]; then echo "ok 1 - validate ran (exit $rc)"; else echo "not ok 1 - validate exit $rc"; sed 's/^/# /' "$tmp/err"; fi
rep=$(cat "$tmp/out")
lines=$(grep -c '^instruction=.* cases=[1-9][0-9]* mismatches=[0-9]*$' "$rep" 2>/dev/null)
if [ "${lines:-0}" -eq "$runnable" ] && [ "$runnable" -gt 0 ]; then
    echo "ok 2 - report $rep has a line for each of the $runnable runnable kernels"
else
    echo "not ok 2 - report has ${lines:-0} instruction lines, info lists $runnable runnable kernels"
fi
grep '^instruction=' "$rep" 2>/dev/null | sed 's/^/# /'
if grep -q '^- .*: failed:' "$rep" 2>/dev/null; then
    echo "not ok 3 - a kernel failed to run"; grep 'failed:' "$rep" | sed 's/^/# /'
else
    echo "ok 3 - no kernel failed to run"
fi
if "$bin" probe >"$tmp/probe" 2>&1; then echo "ok 4 - probe ran"; else echo "not ok 4 - probe failed"; fi
grep -E '^(==|verdict|expected|matches)' "$tmp/probe" | sed 's/^/# /'
