#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_badinput_fuzz.sh: replays the fuzzers' findings through bin/fpemu, so
# they stay fixed without clang: every line of fuzz/regress/vectors.txt
# (OP [OPTIONS] | complete vector line with the MPFR reference's answer |
# [todo OWNER: why]) goes to `fpemu verify OP OPTIONS`. Lines marked todo
# are open bugs of their owner: reported as TAP TODO until they pass.
# The raw fuzzer inputs (fuzz/regress/NAME/) are replayed by
# `make fuzz-replay`. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
V=$ROOT/fuzz/regress/vectors.txt
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make test builds it; make deps installs the tools)"; exit 1; fi
if [ ! -f "$V" ]; then echo "1..1"; echo "not ok 1 - $V is missing (it ships in the repository)"; exit 1; fi
n=0
while IFS= read -r l; do
    case $l in ''|'#'*) continue;; esac
    op=$(printf '%s' "$l" | cut -d'|' -f1 | sed 's/ *$//')
    vec=$(printf '%s' "$l" | cut -d'|' -f2 | sed 's/^ *//; s/ *$//')
    todo=$(printf '%s' "$l" | cut -d'|' -f3 | sed 's/^ *//; s/ *$//; s/^todo //')
    n=$((n + 1))
    # shellcheck disable=SC2086
    out=$(printf '%s\n' "$vec" | "$BIN" verify $op 2>&1); rc=$?
    if [ "$rc" = 0 ]; then echo "ok $n - verify $op: $vec${todo:+ # TODO $todo}"
    else
        echo "not ok $n - verify $op: $vec (exit $rc)${todo:+ # TODO $todo}"
        printf '%s\n' "$out" | head -3 | sed 's/^/#   /'
    fi
done <"$V"
echo "1..$n"
