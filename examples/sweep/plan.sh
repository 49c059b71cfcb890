#!/bin/sh
# SPDX-License-Identifier: MIT
# plan.sh SUITE CACHE: the plan of a sweep (fpemu report --plan) and its
# runs, one make target per line, in CACHE/plan.mk and CACHE/runs.txt. The
# shards (parallel.sh, slurm.sh) each run one line; any machine that sees
# CACHE at the same path (a shared file system) can run any of them.
# $FPEMU names the program (default: fpemu on PATH).
set -eu
[ $# = 2 ] || { echo "usage: $0 SUITE CACHE" >&2; exit 2; }
FPEMU=${FPEMU:-fpemu}
suite=$1
mkdir -p "$2"
cache=$(cd "$2" && pwd)
"$FPEMU" report --plan --suite "$suite" --runs "$cache" >"$cache/plan.mk.tmp"
mv "$cache/plan.mk.tmp" "$cache/plan.mk"
make -s -C "$cache" -f plan.mk suite-list >"$cache/runs.txt.tmp"
mv "$cache/runs.txt.tmp" "$cache/runs.txt"
echo "$(wc -l <"$cache/runs.txt") runs in $cache/runs.txt"
