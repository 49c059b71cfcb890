#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_sweep.sh: a sweep run as independent shards (examples/sweep/, docs/
# experiments.md) gives the report a single machine gives. A two-experiment
# suite (three distinct runs, one shared) runs four ways:
#   A  make -f plan.mk suite-runs, one job (the reference);
#   B  examples/sweep/parallel.sh with GNU parallel, 2 workers;
#   C  examples/sweep/slurm.sh as the tasks of a job array, run by hand in
#      reverse order (SLURM_ARRAY_TASK_ID set as Slurm sets it);
#   D  two "machines" with their own run caches, each running half of the
#      runs, merged by copying their folders into one cache.
# `fpemu report --suite --runs` of each must equal A's byte for byte, the
# runs' timing lines aside. Also: the scripts' usage errors. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
. "$HERE/lib/tap.sh"
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_sweep.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
SW=$ROOT/examples/sweep
export FPEMU=$BIN FPEMU_ROOT=$ROOT

mkdir suite
for e in a:bf16:bf16-mixed b:f16:16-mixed; do
    IFS=: read -r name run pol <<EOF
$e
EOF
    cat >"suite/0-$name.txt" <<EOF
title: $name
about: sweep test $name
expected: $run trains
model: mlp-digits
steps: 20
seed: 1
set: hidden=16 tensors_every=5 eval_every=10
baseline: fp32
run fp32: 32-true
run $run: $pol
claim $run: $run trains.
expect $run: final_loss($run) < 10
EOF
done

# same REPORT: REPORT's files equal rA's, summary.json's timing line aside
same() {
    local d=$1
    diff -r -I '"timing":' rA "$d" >"$TMP/diff" 2>&1
}
report() { "$BIN" report --suite suite --runs "$1" --out "$2" >"$TMP/report.out" 2>&1; }

if sh "$SW/plan.sh" suite A >/dev/null && make -s -C A -f plan.mk SUITE_FPEMU="$BIN" suite-runs >/dev/null 2>&1 && report A rA; then
    pass "one machine: plan, make, report"
else fail "one machine: plan, make, report" "$(cat "$TMP/report.out")"; fi
nruns=$(wc -l <A/runs.txt)
if [ "$nruns" = 3 ]; then pass "the plan lists 3 distinct runs (the shared fp32 once)"
else fail "the plan lists 3 distinct runs" "$(cat A/runs.txt)"; fi

if ! command -v parallel >/dev/null; then
    skip "GNU parallel is not installed (make deps installs it)"
elif sh "$SW/parallel.sh" suite B -j2 >"$TMP/par.out" 2>&1 && report B rB && same rB; then
    pass "GNU parallel, 2 workers: the report equals one machine's"
else fail "GNU parallel, 2 workers: the report equals one machine's" "$(cat "$TMP/par.out" "$TMP/report.out" "$TMP/diff" 2>/dev/null)"; fi

ok=1
sh "$SW/plan.sh" suite C >/dev/null || ok=0
for i in $(seq "$nruns" -1 1); do SLURM_ARRAY_TASK_ID=$i sh "$SW/slurm.sh" C >/dev/null 2>&1 || ok=0; done
if [ $ok = 1 ] && report C rC && same rC; then
    pass "Slurm job array (tasks in reverse order): the report equals one machine's"
else fail "Slurm job array: the report equals one machine's" "$(cat "$TMP/report.out" "$TMP/diff" 2>/dev/null)"; fi

ok=1
for m in D1 D2; do sh "$SW/plan.sh" suite "$m" >/dev/null || ok=0; done
i=0
while read -r t; do
    i=$((i + 1))
    m=D$(( i % 2 + 1 ))
    make -s -C "$m" -f plan.mk SUITE_FPEMU="$BIN" "$t" >/dev/null 2>&1 || ok=0
done <D1/runs.txt
mkdir D && cp -R D1/. D/ && for d in D2/*/; do [ -f "$d/summary.json" ] && cp -R "$d" D/; done
if [ $ok = 1 ] && report D rD && same rD; then
    pass "two machines' caches merged: the report equals one machine's"
else fail "two machines' caches merged: the report equals one machine's" "$(cat "$TMP/report.out" "$TMP/diff" 2>/dev/null)"; fi

# usage errors
if SLURM_ARRAY_TASK_ID=9 sh "$SW/slurm.sh" A >"$TMP/u" 2>&1; then fail "slurm.sh refuses a task beyond the runs" "$(cat "$TMP/u")"
elif grep -q "no run 9" "$TMP/u"; then pass "slurm.sh refuses a task beyond the runs"
else fail "slurm.sh refuses a task beyond the runs" "$(cat "$TMP/u")"; fi
if (unset SLURM_ARRAY_TASK_ID; sh "$SW/slurm.sh" A) >"$TMP/u" 2>&1; then fail "slurm.sh outside a job array is refused" "$(cat "$TMP/u")"
elif grep -q "SLURM_ARRAY_TASK_ID" "$TMP/u"; then pass "slurm.sh outside a job array is refused"
else fail "slurm.sh outside a job array is refused" "$(cat "$TMP/u")"; fi
if sh "$SW/plan.sh" suite >"$TMP/u" 2>&1; then fail "plan.sh without a cache is refused" "$(cat "$TMP/u")"
else pass "plan.sh without a cache is refused"; fi
tap_end
