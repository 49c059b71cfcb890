#!/bin/sh
# SPDX-License-Identifier: MIT
# parallel.sh SUITE CACHE [GNU parallel options]: run a sweep's runs as
# independent shards with GNU parallel, then `fpemu report --suite SUITE
# --runs CACHE` merges them. Examples:
#   examples/sweep/parallel.sh experiments/suite runs -j2
#   examples/sweep/parallel.sh experiments/suite /shared/runs --sshlogin 8/host1,8/host2
# With --sshlogin every machine must see CACHE at the same path and have
# fpemu at $FPEMU (default: fpemu on PATH). A run whose folder already
# holds a summary.json is not run again, so a sweep that stopped resumes.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 SUITE CACHE [parallel options]" >&2; exit 2; }
command -v parallel >/dev/null || { echo "$0: GNU parallel is not installed (apt-get install parallel)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
suite=$1 cache=$2
shift 2
sh "$here/plan.sh" "$suite" "$cache" >/dev/null
cache=$(cd "$cache" && pwd)
FPEMU=${FPEMU:-fpemu}
# --halt now,fail=1: the first failed run stops the sweep (its log is printed)
parallel --halt now,fail=1 "$@" make -s -C "$cache" -f plan.mk SUITE_FPEMU="$FPEMU" '{}' :::: "$cache/runs.txt"
