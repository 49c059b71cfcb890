#!/bin/sh
# SPDX-License-Identifier: MIT
#SBATCH --job-name=fpemu-sweep
#SBATCH --cpus-per-task=1
#SBATCH --output=fpemu-sweep-%A_%a.out
# slurm.sh CACHE: one run of a sweep as one task of a Slurm job array.
# Plan the sweep on a machine that sees CACHE (a shared file system), then
# submit one task per line of CACHE/runs.txt, then merge:
#   FPEMU=$PWD/bin/fpemu sh examples/sweep/plan.sh experiments/suite /shared/runs
#   sbatch --array=1-$(wc -l < /shared/runs/runs.txt) --export=ALL,FPEMU=$PWD/bin/fpemu examples/sweep/slurm.sh /shared/runs
#   bin/fpemu report --suite experiments/suite --runs /shared/runs --out report
# Task N runs line N (SLURM_ARRAY_TASK_ID, 1-based).
set -eu
[ $# = 1 ] || { echo "usage: $0 CACHE (as a task of sbatch --array=1-N)" >&2; exit 2; }
cache=$1
id=${SLURM_ARRAY_TASK_ID:?"$0: not a task of a Slurm job array (SLURM_ARRAY_TASK_ID is unset)"}
t=$(sed -n "${id}p" "$cache/runs.txt")
[ -n "$t" ] || { echo "$0: no run $id in $cache/runs.txt" >&2; exit 2; }
exec make -s -C "$cache" -f plan.mk SUITE_FPEMU="${FPEMU:-fpemu}" "$t"
