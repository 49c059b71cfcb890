#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_drift_user.sh: the drift gate on users' files. First the shell form of
# the CI example, examples/ci/gate.sh, on its committed files (a PyTorch
# loss curve recorded on an H200, its CPU replay, three seeds and a
# bf16-autocast run): the pass case, a drift case, a missing-key case (and
# --allow-missing), the seed-band case, --json and the GitHub Actions
# outputs. Then `fpemu drift --key` itself: every kind of bad input (header
# only, ragged rows, non-numeric cells, duplicate keys, a missing key
# column, old Mac line ends) exits 2 naming the file and line; a BOM and
# CRLF are read; the NaN/inf/empty rule with one baseline and with seeds;
# extra keys never fail; keys compare as numbers; --k and --margin; seeds
# from a folder of run folders; folders with --key. Prints TAP.
. "$(cd "$(dirname "$0")" && pwd)/lib/report_env.sh"
CI=$ROOT/examples/ci
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_drift_user.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
export FPEMU=$BIN

n=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
    n=$((n + 1)); echo "not ok $n - $1"; shift
    for d in "$@"; do printf '%s\n' "$d" | head -30 | sed 's/^/#   /'; done
}
# expect NAME RC PATTERN...: the last run exited RC and printed every PATTERN (grep -E).
expect() {
    local name=$1 want=$2; shift 2
    local p miss=""
    for p in "$@"; do grep -Eq -- "$p" "$TMP/out" || miss="$miss [$p]"; done
    if [ "$rc" = "$want" ] && [ -z "$miss" ]; then pass "$name"
    else fail "$name" "exit $rc (expected $want); missing:$miss" "$(cat "$TMP/out")"; fi
}
# expect_not NAME PATTERN: the last run did not print PATTERN.
expect_not() {
    if grep -Eq -- "$2" "$TMP/out"; then fail "$1" "printed [$2]" "$(cat "$TMP/out")"; else pass "$1"; fi
}
gate() { sh "$CI/gate.sh" "$@" >"$TMP/out" 2>&1; rc=$?; }
drift() { "$BIN" drift "$@" >"$TMP/out" 2>&1; rc=$?; }
# scale FILE FROM FACTOR ADD: column 2 (loss) times FACTOR plus ADD from step FROM on.
scale() {
    awk -F, -v OFS=, -v s="$2" -v f="$3" -v a="$4" 'NR > 1 && $1 >= s { $2 = sprintf("%.9g", $2 * f + a) } { print }' "$1"
}

for f in gate.sh fpemu-drift.yml tolerances.txt baseline/loss.csv sample/loss.csv sample/loss-bf16.csv \
    seeds/seed1.csv seeds/seed2.csv seeds/seed3.csv README.md; do
    [ -f "$CI/$f" ] || { echo "1..1"; echo "not ok 1 - examples/ci/$f is missing (it ships in the repository)"; exit 1; }
done

# ---- the shell form of the CI example ---------------------------------------

# 1. pass: the CPU replay of the recorded PyTorch run against the recording
gate "$CI/sample/loss.csv"
expect "gate.sh: a rerun within the fixed bands passes" 0 "^band +loss.csv \\(key step: 300 in the baseline, 300 in the results, 300 matched, 0 missing, 0 extra\\)" \
    "column loss \\(\\|d\\| <= 0.005 \\+ 0.01 x \\|baseline\\| on 20-row trailing means\\): 0 of 300 outside" \
    "600 values compared, 0 outside" "^gate: PASS"

# 2. drift: the loss 10% higher from step 150
scale "$CI/sample/loss.csv" 150 1.10 0 >"$TMP/drift.csv"
gate --max-print 3 "$TMP/drift.csv"
expect "gate.sh: a loss curve 10% higher from step 150 fails, naming the first steps in a table" 1 \
    "^DRIFT +loss.csv" "column loss .*: [0-9]+ of 300 outside, [0-9]+ moved within; furthest out at step=" \
    "^ +key +column +baseline +band +value" "^ +step=1[5-9][0-9] +loss +mean [0-9.]+ +\\[[0-9.]+, [0-9.]+\\] +mean [0-9.]+ +above by" \
    "more outside \\(--max-print; --json lists them all\\)" "FAIL: numeric drift \\(exit 1\\)" "^gate: DRIFT"
expect_not "...and the unchanged gradient norms are not listed as outside" "step=[0-9]+ +grad_norm"

# 3. missing keys: a run cut short at step 250
head -n 251 "$CI/sample/loss.csv" >"$TMP/short.csv"
gate "$TMP/short.csv"
expect "gate.sh: steps missing from the results fail, listed as a range" 1 \
    "300 in the baseline, 250 in the results, 250 matched, 50 missing, 0 extra" \
    "missing keys: 50 \\(in the baseline, not in the results; drift unless --allow-missing\\): step=251\\.\\.300" \
    "keys: 50 missing from the results \\(drift; --allow-missing accepts them\\)" "^gate: DRIFT"
gate --allow-missing "$TMP/short.csv"
expect "...and pass with --allow-missing, still reported" 0 "accepted by --allow-missing\\): step=251\\.\\.300" "^gate: PASS"

# 4. the seed band: bf16 autocast on seed 1 moves the curve by more than 1%
#    but less than seed-to-seed noise
gate --seeds "$CI/seeds" "$CI/sample/loss-bf16.csv"
expect "gate.sh --seeds: a run inside the three seeds' band passes" 0 \
    "baseline 3 seeds \\(.*seed1.csv, .*seed2.csv, .*seed3.csv\\)" "band: seeds' min/max widened by 1 x range" \
    "column loss \\(seeds' min - 1 x range \\.\\. max \\+ 1 x range, widened by 0.005 \\+ 0.01 x \\|mean\\|, on 20-row trailing means\\): 0 of 300 outside" \
    "^gate: PASS"
gate --baseline "$CI/seeds/seed1.csv" "$CI/sample/loss-bf16.csv"
expect "...while the fixed band against seed 1 alone calls the same run drift" 1 "column loss .*: [0-9]+ of 300 outside" "^gate: DRIFT"
scale "$CI/sample/loss-bf16.csv" 150 1 0.02 >"$TMP/stalled.csv"
gate --seeds "$CI/seeds" "$TMP/stalled.csv"
expect "gate.sh --seeds: a loss 0.02 higher from step 150 is outside the seeds' band" 1 \
    "^ +key +column +seeds' mean +band +value" "step=2[0-9][0-9] +loss +mean [0-9.]+ +\\[[0-9.]+, [0-9.]+\\] +mean [0-9.]+ +above by" "^gate: DRIFT"
gate --seeds "$CI/seeds" --margin 5 "$TMP/stalled.csv"
expect "...and --margin widens the band (5 x the range lets it pass)" 0 "widened by 5 x range" "^gate: PASS"

# 5. --json
gate --json "$TMP/v.json" --max-print 1 "$TMP/drift.csv"
if [ "$rc" = 1 ] && python3 - "$TMP/v.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"][0]
assert d["verdict"] == "drift" and d["exit"] == 1, d["verdict"]
assert d["band"]["from"] == "fixed"
assert f["keys"]["columns"] == ["step"] and f["keys"]["matched"] == 300, f["keys"]
assert f["outside"] == d["summary"]["outside"] > 1
fl = f["failures"]
assert len(fl) == f["outside"], (len(fl), f["outside"])  # all of them, not only --max-print
assert all(x["column"] == "loss" and x["why"] == "band" and x["value"] > x["high"] for x in fl), fl[0]
assert [c["column"] for c in f["columns"]] == ["loss", "grad_norm"]
EOF
then pass "--json: the verdict, the keys and every failure (not only the first --max-print)"
else fail "--json: the verdict, the keys and every failure" "exit $rc" "$(head -40 "$TMP/v.json" 2>&1)"; fi
gate --json "$TMP/m.json" "$TMP/short.csv"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); k=d["files"][0]["keys"]; assert k["missing"]==50 and k["missing_keys"][0]=="step=251" and len(k["missing_keys"])==50 and not k["missing_allowed"]' "$TMP/m.json"; then
    pass "--json lists every missing key"
else fail "--json lists every missing key" "$(cat "$TMP/m.json")"; fi

# 6. under GitHub Actions: the job summary and an error annotation
: >"$TMP/summary.md"
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$TMP/summary.md gate "$TMP/drift.csv"
if [ "$rc" = 1 ] && grep -q '^::error title=fpemu drift::DRIFT' "$TMP/out" && grep -q '^### fpemu drift: DRIFT' "$TMP/summary.md" &&
    grep -q 'column loss' "$TMP/summary.md"; then
    pass "gate.sh under GitHub Actions: an error annotation and the report in the job summary"
else fail "gate.sh under GitHub Actions" "exit $rc" "$(cat "$TMP/out")" "$(cat "$TMP/summary.md")"; fi

# 7. bad usage and bad input through the gate
gate
expect "gate.sh without a results file exits 2 with its usage" 2 "no RESULTS file" "sh gate.sh"
gate "$TMP/nonexistent.csv"
expect "gate.sh on a missing results file exits 2" 2 "nonexistent.csv" "^gate: ERROR"
gate --margin 2 "$CI/sample/loss.csv"
expect "gate.sh --margin without --seeds exits 2" 2 "--margin: only with --baseline-seeds"

# ---- fpemu drift --key on users' files ----------------------------------------
B=$TMP/b.csv
printf 'step,loss,grad_norm\n1,0.5,1.5\n2,0.4,1.25\n3,0.3,1\n' >"$B"
badcase() { # NAME CONTENT PATTERN... (CONTENT is a printf format: \n, \r)
    local name=$1
    # shellcheck disable=SC2059
    printf "$2" >"$TMP/r.csv"
    shift 2
    drift --key step "$B" "$TMP/r.csv"
    expect "$name" 2 "$@" "ERROR: bad input \\(exit 2\\)"
}
badcase "a header-only file exits 2 naming file and line 1" 'step,loss,grad_norm\n' "r.csv: line 1: a header and no data rows"
badcase "a ragged row exits 2 naming its line" 'step,loss,grad_norm\n1,0.5,1.5\n2,0.4\n' "r.csv: line 3: 2 fields, expected 3"
badcase "a non-numeric cell exits 2 naming line, column and cell" 'step,loss,grad_norm\n1,0.5,1.5\n2,n/a,1\n' \
    "r.csv: line 3: column 'loss': 'n/a' is not a number"
badcase "a duplicate key exits 2 naming both lines" 'step,loss,grad_norm\n1,0.5,1.5\n2,0.4,1\n2.0,0.3,1\n' \
    "r.csv: line 4: key step=2.0 repeats line 3 \\(a duplicate key\\)"
badcase "a missing key column exits 2 listing the header" 'iter,loss,grad_norm\n1,0.5,1.5\n' \
    "r.csv: line 1: no key column 'step' \\(--key\\), the header has: iter, loss, grad_norm"
badcase "an empty key cell exits 2" 'step,loss,grad_norm\n1,0.5,1.5\n,0.4,1\n' "r.csv: line 3: the key column 'step' is empty"
badcase "old Mac line ends (a lone CR) exit 2 naming the line" 'step,loss,grad_norm\r1,0.5,1.5\r' \
    "r.csv: line 1: a carriage return \\(CR\\) that does not end a CRLF line"
printf '\357\273\277step, loss ,grad_norm\r\n1,0.5,1.5\r\n2,0.4,1.25\r\n3,0.3,1\r\n' >"$TMP/bom.csv"
drift --key step "$B" "$TMP/bom.csv"
expect "a UTF-8 BOM, CRLF line ends and spaces around names are read: identical" 0 "^same +b.csv" "6 values compared, 0 outside"
drift --key step --columns loss,lr "$B" "$B"
expect "--columns naming a column the baseline lacks exits 2" 2 "b.csv: line 1: no column 'lr' \\(--columns\\), the header has: step, loss, grad_norm"
drift --key step --columns step "$B" "$B"
expect "--columns naming the key exits 2" 2 "'step' is a key column"

# default columns: every numeric column both have; the rest are named
printf 'step,loss,grad_norm,phase,lr\n1,0.5,1.5,warmup,0.1\n2,0.4,1.25,main,0.1\n3,0.3,1,main,0.1\n' >"$TMP/b2.csv"
printf 'step,loss,phase,lr,new\n1,0.5,warmup,0.1,7\n2,0.4,main,0.1,7\n3,0.3,main,0.1,7\n' >"$TMP/r2.csv"
drift --key step "$TMP/b2.csv" "$TMP/r2.csv"
expect "without --columns: numeric columns both have; text and one-sided columns are named, not compared" 0 \
    "not compared: grad_norm \\(only in the baseline\\), phase \\(text: .*b2.csv line 2 has 'warmup'\\), new \\(only in the results\\)" \
    "6 values compared"
drift --key step --columns loss,grad_norm "$TMP/b2.csv" "$TMP/r2.csv"
expect "...but a column named by --columns that the results lack is drift" 1 "column grad_norm: missing from the results" \
    "1 compared column missing from the results \\(drift\\)"

# keys compare as numbers; rows are matched whatever their order; extra keys never fail
printf 'step,loss,grad_norm\n3.0,0.3,1\n1e0,0.5,1.5\n2,0.4,1.25\n4,0.2,1\n5,0.1,1\n' >"$TMP/r.csv"
drift --key step "$B" "$TMP/r.csv"
expect "keys match as numbers (1e0 = 1, 3.0 = 3) in any row order; extra keys are listed and never fail" 0 \
    "^band +b.csv \\(key step: 3 in the baseline, 5 in the results, 3 matched, 0 missing, 2 extra\\)" \
    "extra keys: 2 \\(in the results only; not compared, they never fail\\): step=4\\.\\.5" "PASS"

# NaN, inf and empty cells: one rule
printf 'step,loss,grad_norm\n1,nan,inf\n2,0.4,-inf\n3,,1\n4,-nan,Infinity\n' >"$TMP/c1.csv"
printf 'step,loss,grad_norm\n1,0.5,-inf\n2,nan,inf\n3,0.2,\n4,NaN,inf\n' >"$TMP/c2.csv"
drift --key step --abs 1e9 --max-print 20 "$TMP/c1.csv" "$TMP/c2.csv"
expect "a change of class (NaN, +inf, -inf, empty, finite) is drift whatever the band; equal classes are equal" 1 \
    "step=1 +loss +nan +class: NaN +0.5 +a finite value where the baseline has NaN" \
    "step=1 +grad_norm +inf +class: \\+inf +-inf +-inf where the baseline has \\+inf" \
    "step=2 +loss +0.4 +class: finite +nan +NaN where the baseline has a finite value" \
    "step=3 +loss +\\(empty\\) +class: empty +0.2 +a finite value where the baseline has an empty cell" \
    "step=3 +grad_norm +1 +class: finite +\\(empty\\) +an empty cell where the baseline has a finite value" \
    "8 values compared, 6 outside"
expect_not "...-nan equals NaN and Infinity equals inf (step 4 passes)" "step=4"

# seeds: the result's class must be one that a seed has at that key
printf 'step,loss\n1,0.5\n2,nan\n3,0.3\n4,0.2\n' >"$TMP/s1.csv"
printf 'step,loss\n1,0.6\n2,0.4\n3,0.35\n4,0.25\n' >"$TMP/s2.csv"
printf 'step,loss\n1,0.55\n2,nan\n3,inf\n4,0.26\n' >"$TMP/r.csv"
drift --key step --baseline-seeds "$TMP/s1.csv" "$TMP/s2.csv" "$TMP/r.csv"
expect "with seeds: NaN passes where a seed is NaN, +inf fails where every seed is finite" 1 \
    "step=3 +loss +finite +class: finite +inf +\\+inf where the seeds have finite" "4 values compared, 1 outside"
expect_not "...and finite values inside [min - range, max + range] pass" "step=[124] "
# the band, exactly: seeds 0.5 and 0.6 at step 1, margin 1: [0.4, 0.7]
printf 'step,loss\n1,0.71\n2,0.4\n3,0.3\n4,0.2\n' >"$TMP/r.csv"
drift --key step --baseline-seeds "$TMP/s1.csv" "$TMP/s2.csv" "$TMP/r.csv"
expect "the seed band is [min - margin x range, max + margin x range]: 0.71 is above [0.4, 0.7]" 1 \
    "step=1 +loss +0.55 +\\[0.4, 0.7\\] +0.71 +above by 0.01"
printf 'step,loss\n1,0.69\n2,0.4\n3,0.3\n4,0.2\n' >"$TMP/r.csv"
drift --key step --baseline-seeds "$TMP/s1.csv" "$TMP/s2.csv" "$TMP/r.csv"
expect "...and 0.69 is inside" 0 "4 values compared, 0 outside"
drift --key step --baseline-seeds --abs 0.02 "$TMP/s1.csv" "$TMP/s2.csv" "$TMP/r.csv"
expect "--abs adds a floor to the seeds' band" 0 "widened by 0.02 \\+ 0 x \\|mean\\|"

# --k: mean +- k x std, only with 5 seeds or more
drift --key step --baseline-seeds --k 3 "$TMP/s1.csv" "$TMP/s2.csv" "$CI/sample/loss.csv"
expect "--k with fewer than 5 seeds exits 2, saying why" 2 "--k: mean \\+- k x std needs at least 5 seeds, got 2"
for i in 1 2 3 4 5; do printf 'step,loss\n1,%s\n2,1\n' "$(awk -v i=$i 'BEGIN { print 1 + i / 10 }')" >"$TMP/k$i.csv"; done
printf 'step,loss\n1,1.6\n2,1\n' >"$TMP/rk.csv"
# step 1: 1.1 .. 1.5, mean 1.3, std 0.158: k=1 gives [1.142, 1.458]; k=2 [0.984, 1.616]
drift --key step --baseline-seeds --k 1 "$TMP"/k?.csv "$TMP/rk.csv"
expect "--k 1 with 5 seeds: mean +- 1 std, 1.6 is outside" 1 "seeds' mean \\+- 1 x std" "step=1 +loss +1.3 +\\[1.14189, 1.45811\\] +1.6"
drift --key step --baseline-seeds --k 2 "$TMP"/k?.csv "$TMP/rk.csv"
expect "--k 2: inside" 0 "PASS"
drift --key step --baseline-seeds --k 2 --margin 1 "$TMP"/k?.csv "$TMP/rk.csv"
expect "--k and --margin together exit 2" 2 "--k and --margin: give one"
drift --key step --margin 1 "$B" "$B"
expect "--margin without --baseline-seeds exits 2" 2 "--margin: only with --baseline-seeds"
drift --key step --baseline-seeds "$TMP/s1.csv" "$TMP/r.csv"
expect "one seed exits 2" 2 "--baseline-seeds: 1 seed, expected at least 2"
printf 'step,loss\n1,0.6\n2,0.4\n3,0.35\n' >"$TMP/s3.csv"
drift --key step --baseline-seeds "$TMP/s1.csv" "$TMP/s3.csv" "$TMP/r.csv"
expect "seeds that do not hold the same keys exit 2" 2 "s3.csv: no row for key step=4, which .*s1.csv has \\(line 5\\)"

# seeds from a folder of run folders (fpemu train --out), each holding the results' file name
mkdir -p "$TMP/runs"
for s in 1 2 3; do
    FPEMU_ROOT=$ROOT "$BIN" train --model mlp-digits --policy 32-true --steps 30 --seed $s --quiet --out "$TMP/runs/seed$s" >/dev/null 2>&1
done
FPEMU_ROOT=$ROOT "$BIN" train --model mlp-digits --policy bf16-mixed --steps 30 --seed 1 --quiet --out "$TMP/new" >/dev/null 2>&1
drift --key step --columns loss --baseline-seeds "$TMP/runs" "$TMP/new/metrics.csv"
expect "--baseline-seeds FOLDER of run folders: FOLDER/*/metrics.csv, the results' name" 0 \
    "baseline 3 seeds \\(.*runs/seed1/metrics.csv, .*runs/seed2/metrics.csv, .*runs/seed3/metrics.csv\\)" \
    "^band +metrics.csv \\(3 seeds, key step: 30 in the baseline" "PASS"
echo "x" >>"$TMP/runs/seed2/metrics.csv"
drift --key step --columns loss --baseline-seeds "$TMP/runs" "$TMP/new/metrics.csv"
expect "...whose files must belong to their run (summary.json), as everywhere" 2 "seed2: metrics.csv has [0-9]+ bytes, summary.json says"

# rows by position when there is no --key (the row number is the key)
printf 'loss\n0.5\n0.4\n' >"$TMP/p1.csv"; printf 'loss\n0.5\n0.41\n0.3\n' >"$TMP/p2.csv"
drift --abs 0.001 "$TMP/p1.csv" "$TMP/p2.csv"
expect "without --key rows match by position (row N), the extra row is listed" 1 \
    "rows by position: 2 in the baseline, 3 in the results, 2 matched, 0 missing, 1 extra" "row 2 +loss +0.4 +\\[0.399, 0.401\\] +0.41"

# folders with --key: every CSV file keyed, other files line by line
mkdir -p "$TMP/fb/run" "$TMP/fr/run"
cp "$CI/baseline/loss.csv" "$TMP/fb/run/loss.csv"; cp "$CI/sample/loss.csv" "$TMP/fr/run/loss.csv"
echo "notes" >"$TMP/fb/run/notes.txt"; echo "other notes" >"$TMP/fr/run/notes.txt"
drift --key step --tolerances "$CI/tolerances.txt" "$TMP/fb" "$TMP/fr"
expect "folders with --key: the CSV keyed within its bands, a text file line by line" 1 "^band +run/loss.csv \\(key step" \
    "^DRIFT +run/notes.txt" "2 files compared: 0 identical, 1 within tolerance, 1 drifted"

echo "1..$n"
