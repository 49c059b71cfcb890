#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_drift.sh: `fpemu drift`, the numeric regression gate, on the committed
# fixture runs (tests/fixtures/report/, no training needed): identical data
# passes; a change beyond its band fails and names the file, column and step;
# in-band changes pass (smoothed bands too); exact columns, missing columns,
# row counts and text files are caught; bad input (missing files, malformed
# CSV, a bad tolerance file) exits 2. The keyed comparison (--key and its
# kin, tests/t_drift_user.sh) leaves this form's output alone, and works on
# report folders too. Prints TAP.
. "$(cd "$(dirname "$0")" && pwd)/lib/report_env.sh"
if [ ! -d "$FIX/demo" ]; then echo "1..1"; echo "not ok 1 - the fixture $FIX/demo is missing (it ships in the repository)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_drift.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

n=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
    n=$((n + 1)); echo "not ok $n - $1"; shift
    for d in "$@"; do printf '%s\n' "$d" | head -20 | sed 's/^/#   /'; done
}
# expect NAME RC PATTERN...: the last drift run exited RC and printed every PATTERN (grep -E).
expect() {
    local name=$1 want=$2; shift 2
    local p miss=""
    for p in "$@"; do grep -Eq -- "$p" "$TMP/out" || miss="$miss [$p]"; done
    if [ "$rc" = "$want" ] && [ -z "$miss" ]; then pass "$name"
    else fail "$name" "exit $rc (expected $want); missing:$miss" "$(cat "$TMP/out")"; fi
}
drift() { "$BIN" drift "$@" >"$TMP/out" 2>&1; rc=$?; }

# The baseline: the fixture experiment laid out as a report section.
BASE=$TMP/base
mkdir -p "$BASE/training"
cp -r "$FIX/demo" "$BASE/training/demo"
rm -f "$BASE/training/demo/"*/summary.json
TOL=$TMP/tol.txt
cat >"$TOL" <<'EOF'
# FILE-GLOB                 COLUMN      RULE
training/*/*/metrics.csv    loss        abs=0.001 rel=0.01 smooth=5
training/*/*/metrics.csv    grad_norm   rel=0.05
training/*/*/metrics.csv    lr          ignore
training/*/*/eval.csv       eval_*      abs=0.01
EOF
fresh() { rm -rf "$TMP/res"; cp -r "$BASE" "$TMP/res"; }
M=training/demo/f16/metrics.csv
# setcell FILE STEP COLUMN VALUE: change one cell (row whose first field is STEP).
setcell() {
    awk -F, -v OFS=, -v s="$2" -v c="$3" -v v="$4" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; print; next }
        $1 == s { $k = v } { print }' "$TMP/res/$1" >"$TMP/x" && mv "$TMP/x" "$TMP/res/$1"
}
getcell() { awk -F, -v s="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } $1 == s { print $k }' "$TMP/res/$1"; }

# 1. identical
fresh
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "identical results pass" 0 "PASS" "0 drifted"

# 2. a planted change far outside the band: which file, column, step
fresh
setcell "$M" 20 loss 9.5
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "a loss moved beyond its band fails, naming run, file, column and step" 1 \
    "^DRIFT +training/demo/f16/metrics.csv" "column loss: .* rows outside .*first at step 20" "FAIL"

# 3. in-band: every loss 0.1% higher (the band is 1% of the value + 0.001)
fresh
awk -F, -v OFS=, 'NR > 1 { $2 = sprintf("%.9g", $2 * 1.001) } { print }' "$TMP/res/$M" >"$TMP/x" && mv "$TMP/x" "$TMP/res/$M"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "in-band differences pass and are reported as such" 0 "^band +training/demo/f16/metrics.csv" "column loss: .* all within" "PASS"

# 4. smoothing: one step +2% and the next -2% cancel in the 5-step mean
fresh
a=$(getcell "$M" 10 loss); b=$(getcell "$M" 11 loss)
setcell "$M" 10 loss "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.9g", a + 0.02 * b }')"
setcell "$M" 11 loss "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.9g", b - 0.02 * b }')"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "a noisy pair of steps within the smoothed band passes" 0 "PASS"
drift "$BASE" "$TMP/res"
expect "...and fails without the tolerance file (everything exact)" 1 "column loss: 2 of [0-9]+ rows outside \\(exact\\); first at step 10"

# 5. an exact column (skipped) moves by one
fresh
v=$(getcell "$M" 30 skipped)
setcell "$M" 30 skipped $((1 - v))
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "an exact column (skipped) that moves fails" 1 "column skipped: 1 of [0-9]+ rows outside \\(exact\\); first at step 30"

# 6. numbers compare as numbers; ignored columns are ignored
fresh
setcell "$M" 5 lr 12345
v=$(getcell "$M" 6 casts)
setcell "$M" 6 casts "$(awk -v v="$v" 'BEGIN { printf "%.6e", v }')"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "an ignored column and a number written differently pass" 0 "PASS" "0 drifted"

# 7. a column missing from the results
fresh
cut -d, -f1-2,4- "$TMP/res/$M" >"$TMP/x" && mv "$TMP/x" "$TMP/res/$M"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "a column missing from the results fails" 1 "column grad_norm: missing from the results"

# 8. fewer rows
fresh
head -n -3 "$TMP/res/$M" >"$TMP/x" && mv "$TMP/x" "$TMP/res/$M"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "a different row count fails" 1 "rows: baseline has [0-9]+, results [0-9]+"

# 9. a text file (the experiment definition) changes
fresh
echo "run extra: 32-true" >>"$TMP/res/training/demo/experiment.txt"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "a changed text file fails, naming the line" 1 "^DRIFT +training/demo/experiment.txt" "first at line [0-9]+"

# 10. bad input: a file missing from the results
fresh
rm "$TMP/res/training/demo/fp8/tensors.csv"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "a file missing from the results exits 2" 2 "^MISSING training/demo/fp8/tensors.csv"

# 11. bad input: a malformed CSV (a short row), named with its line
fresh
awk -F, -v OFS=, 'NR == 12 { NF = 3 } { print }' "$TMP/res/$M" >"$TMP/x" && mv "$TMP/x" "$TMP/res/$M"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "a malformed CSV exits 2 naming the file and line" 2 "metrics.csv: line 12: 3 fields, expected [0-9]+"

# 12. bad input: an unterminated quote, binary data
fresh
printf 'step,loss\n1,"0.5\n' >"$TMP/res/$M"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "an unterminated quote exits 2" 2 "line 2: a quoted field runs to the end"
fresh
printf 'step,loss\n1,\0\n' >"$TMP/res/$M"
drift --tolerances "$TOL" "$BASE" "$TMP/res"
expect "binary data exits 2" 2 "binary data"

# 13. bad input: missing folders, a bad tolerance file, bad usage
drift "$TMP/nonexistent" "$BASE"
expect "a missing baseline folder exits 2" 2 "baseline .*nonexistent"
drift "$BASE" "$TMP/nonexistent"
expect "a missing results folder exits 2" 2 "results .*nonexistent"
printf 'training/* loss abs=x\n' >"$TMP/badtol"
drift --tolerances "$TMP/badtol" "$BASE" "$BASE"
expect "a malformed tolerance file exits 2 naming the line" 2 "badtol: line 1: 'abs=x'"
printf '# ok\n\ntraining/*\n' >"$TMP/badtol"
drift --tolerances "$TMP/badtol" "$BASE" "$BASE"
expect "a tolerance line with too few fields exits 2" 2 "badtol: line 3: expected .FILE-GLOB COLUMN-GLOB RULE"
drift "$BASE"
expect "one path is bad usage (exit 2)" 2 "expected two paths"
mkdir -p "$TMP/empty"
drift "$TMP/empty" "$BASE"
expect "an empty baseline folder exits 2" 2 "no files to compare"

# 14. two files directly
fresh
setcell "$M" 3 grad_norm 1e9
drift --tolerances "$TOL" "$BASE/$M" "$TMP/res/$M"
expect "two files compare directly (rules match the file's base name)" 1 "column grad_norm: 1 of [0-9]+ rows outside.*step 3"

# 15. files the baseline does not cover are listed (not compared), even next
#     to folders whose names sort differently as paths (b, b-c)
mkdir -p "$TMP/nb/a/b" "$TMP/nb/a/b-c"
printf 'step,loss\n1,0.5\n' >"$TMP/nb/a/b/metrics.csv"
printf 'step,loss\n1,0.5\n' >"$TMP/nb/a/b-c/metrics.csv"
rm -rf "$TMP/nr"; cp -r "$TMP/nb" "$TMP/nr"
mkdir -p "$TMP/nr/a/new"
printf 'step,loss\n1,0.5\n' >"$TMP/nr/a/new/metrics.csv"
drift --verbose "$TMP/nb" "$TMP/nr"
if [ "$rc" = 0 ] && [ "$(grep -c '^new ' "$TMP/out")" = 1 ] && grep -Eq '^new +a/new/metrics.csv' "$TMP/out"; then
    pass "a results file outside the baseline is listed as new, and only it"
else fail "a results file outside the baseline is listed as new, and only it" "exit $rc" "$(cat "$TMP/out")"; fi

# 16. a whole file can be ignored by the tolerance file
rm "$TMP/nr/a/b-c/metrics.csv"; printf 'notes\n' >"$TMP/nb/a/NOTES.txt"
printf 'a/NOTES.txt * ignore\na/b-c/* * ignore\n' >"$TMP/ign"
drift --tolerances "$TMP/ign" "$TMP/nb" "$TMP/nr"
expect "an ignored text file may be missing; an ignored CSV's columns are skipped but the file must exist" 2 "MISSING a/b-c/metrics.csv"

# 17. the suite's form is untouched by the keyed comparison: no key lines
fresh
drift --tolerances "$TOL" "$BASE" "$TMP/res"
if [ "$rc" = 0 ] && ! grep -Eq 'key step|values compared|rows by position' "$TMP/out" &&
    [ "$(grep -c '^fpemu drift:' "$TMP/out")" = 3 ]; then pass "without the keyed options the output is the suite's (header, summary, verdict)"
else fail "without the keyed options the output is the suite's" "exit $rc" "$(cat "$TMP/out")"; fi

# 18. --key on folders: every CSV keyed; tensors.csv (several rows per step)
#     is a duplicate key, named with both lines
fresh
setcell "$M" 20 loss 9.5
drift --key step --tolerances "$TOL" "$BASE" "$TMP/res"
expect "--key on report folders: a moved loss is drift by key, a file with several rows per key is bad input" 2 \
    "^DRIFT +training/demo/f16/metrics.csv \\(key step: [0-9]+ in the baseline" "step=20 +loss" \
    "^BAD +training/demo/f16/tensors.csv: .*tensors.csv: line 3: key step=1 repeats line 2 \\(a duplicate key\\)"

echo "1..$n"
