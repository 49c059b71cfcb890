#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_harden_report.sh: issue 26's report, plan and drift-gate classes.
#  6. `fpemu report --plan` writes no path into make or shell text: run
#     caches and definition folders named with spaces, quotes, $, a
#     newline, a leading dash, #, % and : give a plan that make runs into
#     exactly that folder, deletes nothing else and executes nothing.
#  7. drift and non-finite values: equal classes (both NaN, both +inf, both
#     -inf) compare equal, a change of class is drift, and neither hides its
#     finite neighbours in a smoothing window (the committed f16-dynamic
#     baseline with grad_norm=inf at step 55 and a 0.1% move at step 60).
#  4. a run folder whose files do not belong together (summary.json's
#     "files": sizes and CRC-32s) is refused by report (ad-hoc, experiment
#     and suite-cache folders) and drift; --out appears whole or not at all
#     (a write failure or SIGTERM leaves no --out, an earlier report is
#     replaced whole).
#  8. temporaries of a killed report (its staging folder, gnuplot's images)
#     are removed by the next run when their PID is gone, kept when alive.
#  9. a summary.json cut off mid-string, duplicated and out-of-order step
#     rows are refused, naming the file and the step.
# Prints TAP.
. "$(cd "$(dirname "$0")" && pwd)/lib/report_env.sh"
. "$HERE/lib/tap.sh"
if [ ! -d "$FIX/demo" ]; then echo "1..1"; echo "not ok 1 - the fixture $FIX/demo is missing (it ships in the repository)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_harden_report.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
export FPEMU_ROOT=$ROOT
check() { if eval "$2"; then pass "$1"; else fail "$1" "${3:-}"; fi; }
run() { "$BIN" "$@" >"$TMP/out" 2>&1; rc=$?; }
# A dead PID: a child that has exited.
sh -c 'exit 0' & DEAD=$!; wait $DEAD

# crc FILE: zlib's CRC-32 as 8 hex digits (gzip's trailer holds it, little-endian)
crc() { gzip -c <"$1" | tail -c 8 | head -c 4 | od -An -tx1 | awk '{ printf "%s%s%s%s", $4, $3, $2, $1 }'; }
# sign DIR: a summary.json listing DIR's files as they are now (model and policy kept)
sign() {
    local d=$1 f ent="" sep="" model policy
    model=$(sed -n 's/^ *"model": "\([^"]*\)".*/\1/p' "$d/summary.json" | head -1)
    policy=$(sed -n 's/^ *"policy": "\([^"]*\)".*/\1/p' "$d/summary.json" | head -1)
    for f in metrics.csv tensors.csv eval.csv checkpoint.bin; do
        [ -f "$d/$f" ] || continue
        ent="$ent$sep\"$f\": {\"bytes\": $(stat -c %s "$d/$f"), \"crc32\": \"$(crc "$d/$f")\"}"; sep=", "
    done
    printf '{\n  "model": "%s",\n  "policy": "%s",\n  "files": {%s}\n}\n' "$model" "$policy" "$ent" >"$d/summary.json"
}

# ---- 6. the plan: no path in make or shell text ------------------------------
mkdir -p "$TMP/suite" "$TMP/fake"
cat >"$TMP/suite/01-a.txt" <<'EOF'
model: mlp-digits
steps: 20
run fp32: 32-true
run bf: bf16-mixed lr=1e-3
EOF
# a stand-in for fpemu train: makes --out with a summary.json
cat >"$TMP/fake/train" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --out ] && o=$2; shift; done
mkdir -p "$o" && echo '{}' >"$o/summary.json"
EOF
chmod +x "$TMP/fake/train"
# plan_case DESC CACHE [SUITE]: plan, then make it as mk/suite.mk does (-C CACHE)
plan_case() {
    local desc=$1 cache=$2 suite=${3:-$TMP/suite} got=""
    mkdir -p "$TMP/victim" && : >"$TMP/victim/keep"
    rm -f "$TMP/PWNED" "$TMP/fake/PWNED"
    (cd "$TMP" && "$BIN" report --plan --suite "$suite" --runs "$cache" >"$TMP/plan.mk" 2>"$TMP/err"); local r=$?
    (cd "$TMP" && mkdir -p -- "$cache" && cp -- "$TMP/plan.mk" "$cache/plan.mk" &&
     make --no-print-directory -C "$cache" -f plan.mk SUITE_FPEMU="$TMP/fake/train" suite-runs) >"$TMP/mk" 2>&1; local m=$?
    got=$(cd "$TMP" && cd -- "$cache" && ls -d mlp-digits-*/summary.json 2>/dev/null | wc -l)
    local text=$(grep -v '^#' "$TMP/plan.mk" | grep -cF -- "$cache")
    check "plan, cache $desc: make runs every run into that folder, deletes and executes nothing else" \
        '[ $r = 0 ] && [ $m = 0 ] && [ "$got" = 2 ] && [ -f "$TMP/victim/keep" ] && [ ! -e "$TMP/PWNED" ] && [ ! -e "$TMP/fake/PWNED" ] && [ "$text" = 0 ]' \
        "plan exit $r, make exit $m, $got runs, victim: $(ls "$TMP/victim" 2>&1), PWNED: $(ls "$TMP"/PWNED "$TMP"/fake/PWNED 2>/dev/null), path in rules: $text" \
        "$(cat "$TMP/err" "$TMP/mk")"
}
plan_case "and a victim folder in one word (the issue's case)" "$TMP/victim $TMP/c"
plan_case "with spaces" "$TMP/with  two spaces"
plan_case "with quotes" "$TMP/q'uo\"te"
plan_case "with \$(...) and backquotes" "$TMP/d\$(touch PWNED)\`touch PWNED\`\$\$x"
plan_case "with a newline" "$TMP/nl
rm -rf $TMP/victim"
plan_case "with a leading dash (relative)" "-dash"
plan_case "with # % and :" "$TMP/h#a%b:c"
# a definition folder whose name would end the plan's comment line
S2="$TMP/s
\$(shell touch $TMP/PWNED)"
mkdir -p "$S2" && cp "$TMP/suite/01-a.txt" "$S2/"
plan_case "(definitions in a folder named with a newline and \$(shell ...))" "$TMP/c2" "$S2"

# ---- 7. drift: NaN and inf ----------------------------------------------------
mkcsv() { # FILE VALUES...: step,loss rows from step 1
    local f=$1 i=1; shift
    mkdir -p "$(dirname "$f")"
    { echo step,loss; for v in "$@"; do echo "$i,$v"; i=$((i + 1)); done; } >"$f"
}
TOL=$TMP/tol.txt
echo 'm/*.csv loss abs=0.005 rel=0.01 smooth=20' >"$TOL"
mkcsv "$TMP/d1/b/m/x.csv" 1.7 1.7 1.7 1.7 nan 1.7 1.7 1.7
mkcsv "$TMP/d1/r/m/x.csv" 1.7 1.7 1.7 1.7 nan 99 1.7 1.7
run drift --tolerances "$TOL" "$TMP/d1/b" "$TMP/d1/r"
check "drift: a NaN in both files at step 5 does not hide step 6 going from 1.7 to 99" \
    '[ $rc = 1 ] && grep -q "first at step 6" "$TMP/out"' "exit $rc: $(cat "$TMP/out")"
mkcsv "$TMP/d1/r/m/x.csv" 1.7 1.7 1.7 1.7 inf 99 1.7 1.7
mkcsv "$TMP/d1/b/m/x.csv" 1.7 1.7 1.7 1.7 inf 1.7 1.7 1.7
run drift --tolerances "$TOL" "$TMP/d1/b" "$TMP/d1/r"
check "drift: nor does an inf in both" '[ $rc = 1 ] && grep -q "first at step 6" "$TMP/out"' "exit $rc: $(cat "$TMP/out")"
# the committed f16-dynamic baseline: grad_norm=inf at step 55, a 0.1% move at step 60
F=training/f16-loss-scaling/f16-dynamic/seed-1/metrics.csv
mkdir -p "$TMP/d2/b/$(dirname $F)" "$TMP/d2/r/$(dirname $F)"
cp "$ROOT/experiments/baseline/$F" "$TMP/d2/b/$F"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "grad_norm") k = i } $1 == 60 { $k = sprintf("%.9g", $k * 1.001) } { print }' \
    "$TMP/d2/b/$F" >"$TMP/d2/r/$F"
run drift --tolerances "$ROOT/experiments/drift-tolerances.txt" "$TMP/d2/b" "$TMP/d2/r"
check "drift: committed f16-dynamic baseline (grad_norm=inf at step 55), a 0.1% move at step 60 is within the 5% band" \
    '[ $rc = 0 ] && grep -q "^band .*f16-dynamic/seed-1/metrics.csv" "$TMP/out"' "exit $rc: $(cat "$TMP/out")"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "grad_norm") k = i } $1 == 60 { $k = sprintf("%.9g", $k * 3) } { print }' \
    "$TMP/d2/b/$F" >"$TMP/d2/r/$F"
run drift --tolerances "$ROOT/experiments/drift-tolerances.txt" "$TMP/d2/b" "$TMP/d2/r"
check "...and a 3x move there is drift at step 60" '[ $rc = 1 ] && grep -q "column grad_norm: .*first at step 60" "$TMP/out"' "exit $rc: $(cat "$TMP/out")"
# a change of class is drift whatever the band; equal classes are equal
echo 'm/*.csv loss rel=1e9 smooth=3' >"$TOL"
for pair in "inf 5" "5 inf" "nan 5" "5 nan" "inf -inf" "nan inf" "-inf nan"; do
    set -- $pair
    mkcsv "$TMP/d3/b/m/x.csv" 1 2 "$1" 4
    mkcsv "$TMP/d3/r/m/x.csv" 1 2 "$2" 4
    run drift --tolerances "$TOL" "$TMP/d3/b" "$TMP/d3/r"
    check "drift: $1 -> $2 is drift under any band (a change of class)" '[ $rc = 1 ] && grep -q "first at step 3" "$TMP/out"' "exit $rc: $(cat "$TMP/out")"
done
for pair in "inf Infinity" "nan -nan" "-inf -INF"; do
    set -- $pair
    mkcsv "$TMP/d4/b/m/x.csv" 1 2 "$1" 4
    mkcsv "$TMP/d4/r/m/x.csv" 1 2 "$2" 4
    run drift "$TMP/d4/b" "$TMP/d4/r"
    check "drift: $1 and $2 compare equal (the same class), exact" '[ $rc = 0 ]' "exit $rc: $(cat "$TMP/out")"
done

# ---- 4. run folders whose files do not belong together --------------------------
R=$TMP/runs
fresh_runs() { rm -rf "$R"; mkdir -p "$R"; cp -r "$FIX/demo/f16" "$FIX/demo/fp32" "$R/"; }
report_bad() { # DESC PATTERN ARGS...: exit 2, stderr matches, --out not created
    local desc=$1 pat=$2; shift 2
    rm -rf "$TMP/rep"
    run report --no-plots --out "$TMP/rep" "$@"
    check "report: $desc: exit 2 naming it, no --out" '[ $rc = 2 ] && grep -Eq -- "$pat" "$TMP/out" && [ ! -e "$TMP/rep" ]' \
        "exit $rc: $(cat "$TMP/out")"
}
fresh_runs
run report --no-plots --out "$TMP/rep0" "$R/f16" "$R/fp32"
check "report: run folders whose files belong together pass" '[ $rc = 0 ]' "$(cat "$TMP/out")"
cp "$R/fp32/metrics.csv" "$R/f16/metrics.csv"
report_bad "a folder holding another run's metrics.csv" "f16: metrics.csv has [0-9]+ bytes, summary.json says" "$R/f16" "$R/fp32"
fresh_runs
awk -F, -v OFS=, 'NR == 2 { $2 = ($2 == "9" ? "8" : "9") substr($2, 2) } { print }' "$FIX/demo/f16/metrics.csv" >"$R/f16/metrics.csv"
report_bad "a metrics.csv of the same size, another CRC" "f16: metrics.csv has CRC-32 [0-9a-f]{8}, summary.json says" "$R/f16" "$R/fp32"
fresh_runs
rm "$R/f16/eval.csv"
report_bad "a listed file missing" "f16: eval.csv: No such file" "$R/f16" "$R/fp32"
fresh_runs
sed -i '/"files"/,$d' "$R/fp32/summary.json"; sed -i '$ s/,$//' "$R/fp32/summary.json"; echo '}' >>"$R/fp32/summary.json"
report_bad "a summary.json without \"files\" (an older fpemu train)" 'fp32/summary.json: no "files" list' "$R/f16" "$R/fp32"
fresh_runs
: >"$R/f16/checkpoint.bin"
report_bad "a file the summary does not list (a stale checkpoint.bin)" "f16: checkpoint.bin is there but .* does not list it" "$R/f16" "$R/fp32"
# in an experiment folder
rm -rf "$TMP/exp" && cp -r "$FIX/demo" "$TMP/exp"
cp "$FIX/demo/f16/tensors.csv" "$TMP/exp/fp8/tensors.csv"
report_bad "an experiment folder's run holding another run's tensors.csv" "fp8: tensors.csv has [0-9]+ bytes" "$TMP/exp"
# in the suite's run cache
mkdir -p "$TMP/st" && cp "$FIX/demo/experiment.txt" "$TMP/st/01-demo.txt"
"$BIN" report --plan --suite "$TMP/st" --runs "$TMP/cache" >"$TMP/st.mk" 2>&1
for name in fp32 f16 fp8; do
    pol=$(sed -n "s/^run $name: \([^ ]*\).*/\1/p" "$FIX/demo/experiment.txt")
    key=$(grep -o "^mlp-digits-$pol-[0-9a-f]*/summary.json" "$TMP/st.mk" | head -1)
    mkdir -p "$TMP/cache" && cp -r "$FIX/demo/$name" "$TMP/cache/${key%/summary.json}"
done
run report --no-plots --out "$TMP/rep1" --suite "$TMP/st" --runs "$TMP/cache"
check "report --suite: cache folders whose files belong together pass" '[ $rc = 0 ] && grep -q "^demo,f16" "$TMP/rep1/summary.csv"' "exit $rc: $(cat "$TMP/out")"
k=$(grep -o "^mlp-digits-16-mixed-[0-9a-f]*" "$TMP/st.mk" | head -1)
echo "99,1,0.5" >>"$TMP/cache/$k/eval.csv"
report_bad "a suite cache folder with an eval.csv changed after the run" "$k: eval.csv has [0-9]+ bytes" --suite "$TMP/st" --runs "$TMP/cache"
# drift: a results run folder (it has a summary.json) must be whole
rm -rf "$TMP/db" "$TMP/dr" && mkdir -p "$TMP/db/training" && cp -r "$FIX/demo" "$TMP/db/training/demo"
rm -f "$TMP/db/training/demo/"*/summary.json
cp -r "$FIX/demo" "$TMP/dr" && mkdir -p "$TMP/dr2/training" && mv "$TMP/dr" "$TMP/dr2/training/demo"
run drift "$TMP/db" "$TMP/dr2"
check "drift: results run folders whose files belong together pass" '[ $rc = 0 ]' "exit $rc: $(cat "$TMP/out")"
cp "$FIX/demo/fp8/eval.csv" "$TMP/dr2/training/demo/f16/eval.csv"
run drift "$TMP/db" "$TMP/dr2"
check "drift: a results run folder with another run's eval.csv: exit 2 naming folder and file" \
    '[ $rc = 2 ] && grep -q "demo/f16: eval.csv has 158 bytes, summary.json says 159" "$TMP/out"' "exit $rc: $(cat "$TMP/out")"

# ---- 4. --out appears whole or not at all; 8. no temporaries left -------------------
(ulimit -f 5; trap '' XFSZ; exec "$BIN" report --no-plots --out "$TMP/lim" "$FIX/demo") >/dev/null 2>"$TMP/err"; rc=$?
check "report --out NEW that cannot be written whole (files limited to 5 KB): exit 2, no --out, no staging folder" \
    '[ $rc = 2 ] && [ ! -e "$TMP/lim" ] && [ -z "$(ls -d "$TMP"/lim.* 2>/dev/null)" ]' "exit $rc; left: $(ls -d "$TMP"/lim* 2>&1); $(cat "$TMP/err")"
# an earlier report is replaced whole: litter of a killed HEAD-style run inside it goes
run report --no-plots --out "$TMP/old" "$FIX/demo"
: >"$TMP/old/demo/loss.tmp.$DEAD.png"; : >"$TMP/old/demo/loss.gp.log.tmp.$DEAD"; : >"$TMP/old/demo/loss.dat.tmp.$DEAD"
run report --no-plots --out "$TMP/old" "$TMP/old/demo"
check "report over an earlier report (its own input inside): replaced whole, temporaries of a dead run gone" \
    '[ $rc = 0 ] && [ -s "$TMP/old/summary.csv" ] && [ -z "$(find "$TMP/old" -name "*.tmp.*")" ]' "exit $rc: $(find "$TMP/old" -name '*.tmp.*'); $(cat "$TMP/out")"
# a staging folder left by a killed report (dead PID) is removed, a live one's kept
mkdir -p "$TMP/st1.tmp.$DEAD/demo" "$TMP/st1.tmp.$$"
: >"$TMP/st1.tmp.$DEAD/demo/loss.tmp.$DEAD.png"
run report --no-plots --out "$TMP/st1" "$FIX/demo"
check "a killed report's staging folder (PID gone, gnuplot temporaries in it) is removed by the next run" \
    '[ $rc = 0 ] && [ ! -e "$TMP/st1.tmp.$DEAD" ]' "exit $rc: $(ls -d "$TMP"/st1*)"
check "...and a running report's (this shell's PID) is kept" '[ -d "$TMP/st1.tmp.$$" ]'
rm -rf "$TMP/st1.tmp.$$"
# a folder that is not a report is not replaced
mkdir -p "$TMP/mine" && echo precious >"$TMP/mine/notes.txt"
run report --no-plots --out "$TMP/mine" "$FIX/demo"
check "report --out a folder of other files: exit 2, the files untouched" \
    '[ $rc = 2 ] && grep -q "no report" "$TMP/out" && [ "$(cat "$TMP/mine/notes.txt")" = precious ] && [ "$(ls "$TMP/mine")" = notes.txt ]' \
    "exit $rc: $(ls "$TMP/mine"); $(cat "$TMP/out")"
# SIGTERM while gnuplot runs: gnuplot is stopped, nothing is left
mkdir -p "$TMP/gp"
cat >"$TMP/gp/gnuplot" <<'EOF'
#!/bin/sh
o=$(printf '%s' "$2" | sed -n "s/.*out='\([^']*\)'.*/\1/p")
: >"$o.png"; : >"$o.svg"
exec sleep 3
EOF
chmod +x "$TMP/gp/gnuplot"
PATH="$TMP/gp:$PATH" "$BIN" report --out "$TMP/term" "$FIX/demo" >/dev/null 2>&1 &
pid=$!
# (up to 10 s for gnuplot to start: make test runs other test files beside this one)
for i in $(seq 1 50); do [ -n "$(find "$TMP" -maxdepth 3 -path "*term.tmp.*" -name '*.png' 2>/dev/null)" ] && break; sleep 0.2; done
kill -TERM $pid; wait $pid; rc=$?
sleep 0.3
check "SIGTERM while gnuplot draws: the report stops (signal exit), no --out, no staging folder, no gnuplot temporaries" \
    '[ $rc -gt 128 ] && [ ! -e "$TMP/term" ] && [ -z "$(ls -d "$TMP"/term.* 2>/dev/null)" ]' \
    "exit $rc; left: $(ls -d "$TMP"/term* 2>&1; find "$TMP"/term* -name '*.png' 2>/dev/null)"
# A gnuplot that fails: the report says so with gnuplot's own message (its
# log, kept beside the figure), exit 1, also for an --out given relative to
# the current folder (gnuplot runs in the figure's folder; its log was
# once opened from there, and lost)
cat >"$TMP/gp/gnuplot" <<'EOF'
#!/bin/sh
echo "gnuplot says: undefined variable zz" >&2
exit 1
EOF
(cd "$TMP" && PATH="$TMP/gp:$PATH" "$BIN" report --out relout "$FIX/demo" >"$TMP/out" 2>&1); rc=$?
check "a failing gnuplot, --out relative: exit 1, gnuplot's message in the report's error and in a .gp.log beside the figure" \
    '[ $rc = 1 ] && grep -q "loss failed (exit 1):" "$TMP/out" && grep -q "gnuplot says: undefined variable zz" "$TMP/out" &&
     grep -q "gnuplot says" "$TMP/relout/demo/loss.gp.log"' "exit $rc: $(head -c 600 "$TMP/out"); $(ls "$TMP/relout/demo" 2>&1 | head -5)"

# ---- 9. inputs silently reinterpreted ------------------------------------------------
fresh_runs
head -c 40 "$FIX/demo/f16/summary.json" >"$R/f16/summary.json"
report_bad "an ad-hoc run's summary.json cut off mid-string" "f16/summary.json" "$R/f16" "$R/fp32"
rm -rf "$TMP/exp" && cp -r "$FIX/demo" "$TMP/exp"
head -c 40 "$FIX/demo/fp8/summary.json" >"$TMP/exp/fp8/summary.json"
report_bad "an experiment run's summary.json cut off mid-string" "fp8/summary.json: not one whole JSON object" "$TMP/exp"
fresh_runs
awk 'NR == 6 { print; print; next } { print }' "$FIX/demo/f16/metrics.csv" >"$R/f16/metrics.csv"; sign "$R/f16"
s5=$(awk -F, 'NR == 6 { print $1 }' "$FIX/demo/f16/metrics.csv")
report_bad "a duplicated step row in metrics.csv" "f16/metrics.csv: line 7: step $s5 repeats the step of line 6" "$R/f16" "$R/fp32"
fresh_runs
awk 'NR == 6 { l = $0; next } NR == 7 { print; print l; next } { print }' "$FIX/demo/f16/metrics.csv" >"$R/f16/metrics.csv"; sign "$R/f16"
report_bad "steps out of order in metrics.csv" "f16/metrics.csv: line 7: step $s5 comes after step" "$R/f16" "$R/fp32"
fresh_runs
awk 'NR == 3 { print; print; next } { print }' "$FIX/demo/f16/eval.csv" >"$R/f16/eval.csv"; sign "$R/f16"
report_bad "a duplicated step row in eval.csv" "f16/eval.csv: line 4: step [0-9]+ repeats" "$R/f16" "$R/fp32"
fresh_runs
awk 'NR == 4 { print; print; next } { print }' "$FIX/demo/f16/tensors.csv" >"$R/f16/tensors.csv"; sign "$R/f16"
report_bad "a duplicated row in tensors.csv" "f16/tensors.csv: line 5: step [0-9]+, layer .* repeats line 4" "$R/f16" "$R/fp32"
fresh_runs
awk 'NR == 6 { print; print; next } { print }' "$FIX/demo/f16/metrics.csv" >"$R/f16/metrics.csv"; sign "$R/f16"
mkdir -p "$TMP/d5/b" "$TMP/d5/r" && cp "$FIX/demo/f16/metrics.csv" "$TMP/d5/b/" && cp "$R/f16/metrics.csv" "$TMP/d5/r/"
run drift "$TMP/d5/b" "$TMP/d5/r"
check "drift: a duplicated step row in the results' metrics.csv is bad input (exit 2) naming file and step" \
    '[ $rc = 2 ] && grep -q "metrics.csv: .*line 7: step $s5 repeats" "$TMP/out"' "exit $rc: $(cat "$TMP/out")"

tap_end
