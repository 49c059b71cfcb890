#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_report.sh: `fpemu report` on the committed fixture runs
# (tests/fixtures/report/demo: three short runs of mlp-digits written by
# `fpemu train`, no training needed): every plot (PNG and SVG) and page is
# produced, every image has its caption, verdicts follow the rules in the
# definition (one rule that holds, one that fails on purpose), run folders
# given directly form one experiment against their 32-true run, the plan
# makefile dedupes identical runs, and bad input exits 2 naming the file and
# line. The verdict block counts what the data says, names the claim that
# failed with its numbers and comes first; no overflow/underflow panel is
# empty; zeros on the log axes are kept and drawn on their own row. Prints
# TAP.
. "$(cd "$(dirname "$0")" && pwd)/lib/report_env.sh"
if [ ! -d "$FIX/demo" ]; then echo "1..1"; echo "not ok 1 - the fixture $FIX/demo is missing (it ships in the repository)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_report.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
export FPEMU_ROOT=$ROOT

n=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
    n=$((n + 1)); echo "not ok $n - $1"; shift
    for d in "$@"; do printf '%s\n' "$d" | head -20 | sed 's/^/#   /'; done
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
check() { if eval "$2"; then pass "$1"; else fail "$1" "${3:-}"; fi; }

plots=1
command -v gnuplot >/dev/null 2>&1 || plots=0
noplots=$([ $plots = 1 ] || echo --no-plots)

# 1. the fixture experiment
OUT=$TMP/out
"$BIN" report --out "$OUT" $noplots "$FIX/demo" >"$TMP/stdout" 2>"$TMP/stderr"; rc=$?
check "report on the fixture experiment exits 0" '[ $rc = 0 ]' "exit $rc: $(cat "$TMP/stderr")"
for f in index.html summary.md summary.csv fragment.html fragment.md demo/experiment.txt demo/fp32/metrics.csv \
         demo/f16/eval.csv demo/fp8/tensors.csv; do
    check "writes $f" "[ -s '$OUT/$f' ]"
done
if [ $plots = 1 ]; then
    want="loss loss_diff eval_acc scale rates_f16 rates_fp8 fp8_fp8"
    for p in $want; do
        png=$OUT/demo/$p.png
        check "plot $p: PNG and SVG" "[ -s '$png' ] && [ \"\$(head -c 8 '$png' | od -An -c | tr -d ' ')\" = '211PNG\r\n032\n' ] && grep -q '<svg' '$OUT/demo/$p.svg'" \
            "$(ls "$OUT/demo")"
    done
    # every image the page shows exists, and each has a caption
    imgs=$(grep -o 'src="[^"]*"' "$OUT/fragment.html" | sed 's/src="//; s/"$//')
    missing=""
    for i in $imgs; do [ -f "$OUT/$i" ] || missing="$missing $i"; done
    check "every <img> of the page exists" '[ -n "$imgs" ] && [ -z "$missing" ]' "missing:$missing"
    ni=$(grep -c '<img ' "$OUT/fragment.html"); nc=$(grep -c '<figcaption>[^<]' "$OUT/fragment.html")
    check "one caption per plot ($ni plots)" '[ "$ni" = "$nc" ] && [ "$ni" -ge 7 ]' "imgs $ni, captions $nc"
    nm=$(grep -c '^!\[' "$OUT/fragment.md")
    check "summary.md shows the same plots" '[ "$nm" = "$ni" ]' "md $nm, html $ni"
    check "no gnuplot error logs left" '[ -z "$(find "$OUT" -name "*.gp.log")" ]' "$(find "$OUT" -name '*.gp.log' -exec cat {} \;)"
else
    fail "gnuplot not installed: plot checks"
fi

# 2. verdicts come from the data by the definition's rules
row() { awk -F, -v r="$1" '$2 == r { print $NF }' "$OUT/summary.csv"; }
check "a claim whose rules hold is 'reproduced'" '[ "$(row f16)" = reproduced ]' "$(cat "$OUT/summary.csv")"
check "a claim with a failing rule is 'not reproduced'" '[ "$(row fp8)" = "not reproduced" ]' "$(cat "$OUT/summary.csv")"
check "the baseline has no verdict" '[ "$(row fp32)" = "-" ]'
check "the page shows each rule with its numbers" 'grep -q "skipped(f16) = [0-9]" "$OUT/fragment.html" && grep -q "fails" "$OUT/fragment.html"'
# the table's numbers are the runs' own: final loss = mean of the last max(5, steps/10) losses
want=$(awk -F, 'NR > 1 { l[NR] = $2; n = NR } END { w = int((n - 1) / 10); if (w < 5) w = 5; for (i = n - w + 1; i <= n; i++) s += l[i]; printf "%.6f", s / w }' "$FIX/demo/f16/metrics.csv")
got=$(awk -F, '$2 == "f16" { printf "%.6f", $6 }' "$OUT/summary.csv")
check "final loss in summary.csv is the mean of the last steps ($want)" '[ "$got" = "$want" ]' "got $got"
check "summary.md has the table header" 'grep -q "| experiment | run | policy | final loss | diff from baseline | eval accuracy | skipped steps | overflow rate | underflow rate | verdict |" "$OUT/summary.md"'

# 2b. the metrics the rules see are the data's: recompute four with awk
cp -r "$FIX/demo" "$TMP/m"
printf '%s\n' 'expect fp8: underflow.grad_output(fp8) >= 0' 'expect fp8: max_dev(f16, fp32) >= 0' \
    'expect fp8: eval_acc(fp8) >= 0' 'expect fp8: loss_diff(fp8, f16) < 1000' >>"$TMP/m/experiment.txt"
"$BIN" report --out "$TMP/mo" --no-plots "$TMP/m" >/dev/null 2>&1
D=$FIX/demo
uf=$(awk -F, 'NR > 1 && $3 == "grad_output" { n += $5; u += $9 } END { printf "%.4g", n ? u / n : 0 }' "$D/fp8/tensors.csv")
md=$(paste -d, "$D/f16/metrics.csv" "$D/fp32/metrics.csv" | awk -F, 'NR > 1 { d = $2 - $11; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.4g", m }')
ea=$(tail -1 "$D/fp8/eval.csv" | awk -F, '{ printf "%.4g", $3 }')
fl() { awk -F, 'NR > 1 { l[NR] = $2; n = NR } END { w = int((n - 1) / 10); if (w < 5) w = 5; for (i = n - w + 1; i <= n; i++) s += l[i]; printf "%.17g", s / w }' "$1"; }
ld=$(awk -v a="$(fl "$D/fp8/metrics.csv")" -v b="$(fl "$D/f16/metrics.csv")" 'BEGIN { printf "%.4g", a - b }')
for want in "underflow.grad_output(fp8) = $uf" "max_dev(f16, fp32) = $md" "eval_acc(fp8) = $ea" "loss_diff(fp8, f16) = $ld"; do
    check "rule metric $want (recomputed with awk)" 'grep -qF -- "$want" "$TMP/mo/fragment.md"' "$(grep -o 'expect[^`]*`: [^)]*)' "$TMP/mo/fragment.md" | tail -4)"
done

# 2c. the verdict block (headline.html/.md, keyplots.html/.md): its counts
# are the data's (summary.csv, experiment.txt), it names the claim that
# failed with its numbers, and the standalone page opens with it
H=$OUT/headline.md
nrep=$(awk -F, '$NF == "reproduced"' "$OUT/summary.csv" | wc -l)
nnot=$(awk -F, '$NF == "not reproduced"' "$OUT/summary.csv" | wc -l)
nmiss=$(awk -F, '$NF == "not run"' "$OUT/summary.csv" | wc -l)
nruns=$(($(wc -l <"$OUT/summary.csv") - 1))
npol=$(tail -n +2 "$OUT/summary.csv" | cut -d, -f3 | sort -u | wc -l)
seed=$(sed -n 's/^seed: //p' "$FIX/demo/experiment.txt")
steps=$(sed -n 's/^steps: //p' "$FIX/demo/experiment.txt")
check "verdict files written" '[ -s "$OUT/headline.html" ] && [ -s "$H" ] && [ -s "$OUT/keyplots.html" ] && [ -s "$OUT/keyplots.md" ]' "$(ls "$OUT")"
check "verdict counts the claims as summary.csv does ($nrep of $((nrep + nnot + nmiss)) reproduced, $nnot not, $nmiss not run)" \
    'grep -qF "**Training: $nrep of $((nrep + nnot + nmiss)) claims reproduced**, $nnot not reproduced, $nmiss not run." "$H" &&
     grep -qF "<b>Training: $nrep of $((nrep + nnot + nmiss)) claims reproduced</b>" "$OUT/headline.html"' "$(cat "$H")"
check "verdict says what was run ($nruns runs, $npol policies, seed $seed, $steps steps)" \
    'grep -qF "What was run: $nruns training runs in 1 experiment; model \`mlp-digits\`; $npol policies: \`32-true\`, \`16-mixed\` and \`fp8-delayed\`; seed $seed; $steps steps each; settings varied by run: \`init_scale\` and \`growth_interval\`." "$H"' \
    "$(cat "$H")"
check "verdict lists the failed claim with its rule and numbers" \
    'grep -qF -- "- not reproduced: demo / **fp8**" "$H" && grep -Eq -- "final_loss\(fp8\) > final_loss\(fp32\) \+ 100. fails: final_loss\(fp8\) = [0-9.]+, final_loss\(fp32\) = [0-9.]+; [0-9.]+ > [0-9.]+" "$H"' \
    "$(cat "$H")"
check "verdict leaves out the claims that held" '! grep -q "skipped(f16)" "$H"' "$(cat "$H")"
vl=$(grep -n 'id="verdict"' "$OUT/index.html" | head -1 | cut -d: -f1)
tl=$(grep -n '<h2 id="training"' "$OUT/index.html" | head -1 | cut -d: -f1)
check "the standalone page opens with the verdict (line ${vl:-none}, the section at ${tl:-none})" '[ -n "$vl" ] && [ -n "$tl" ] && [ "$vl" -lt "$tl" ]'
check "summary.md opens with the verdict" '[ "$(grep -m1 "^## " "$OUT/summary.md")" = "## Verdict" ] && grep -qF "$(head -1 "$H")" "$OUT/summary.md"'
if [ $plots = 1 ]; then
    kimgs=$(grep -o 'src="[^"]*"' "$OUT/keyplots.html" | sed 's/src="//; s/"$//')
    kmiss=""
    for i in $kimgs; do [ -f "$OUT/$i" ] || kmiss="$kmiss $i"; done
    check "the plots that matter: the failed experiment's loss, drawn at their own size" \
        '[ "$kimgs" = "demo/key_loss.png" ] && [ -z "$kmiss" ] && grep -q "A claim not reproduced: fp8" "$OUT/keyplots.html"' "imgs: $kimgs; missing:$kmiss"
    check "the key plot is not counted as a plot of its own (7 plots)" 'grep -q "1 experiment, 7 plots" "$TMP/stderr"' "$(cat "$TMP/stderr")"
fi

# 2d. no empty panel, zeros on the log axes: every overflow/underflow and fp8
# plot drawn has data on its log axis; a run whose casts never overflowed or
# underflowed gets no panel but a note; zeros are written as 0 (never
# dropped) and drawn on the row labelled 0
if [ $plots = 1 ]; then
    empty=""
    for png in "$OUT"/demo/rates_*.png; do
        d=${png%.png}.dat
        awk '!/^#/ { for (i = 2; i <= NF; i++) if ($i != "NaN" && $i + 0 > 0) f = 1 } END { exit !f }' "$d" || empty="$empty $d"
    done
    for png in "$OUT"/demo/fp8_*.png; do
        d=${png%.png}.dat
        awk '!/^#/ { for (i = 2; i <= NF; i += 2) if ($i != "NaN" && $i + 0 > 0) f = 1 } END { exit !f }' "$d" || empty="$empty $d"
    done
    check "every overflow/underflow and fp8 panel drawn has data" '[ -z "$empty" ]' "without data:$empty"
    # the fixture's f16 run, with every over- and underflow count set to 0 (and its files signed again)
    cp -r "$FIX/demo" "$TMP/quiet"
    awk -F, -v OFS=, 'NR > 1 { $8 = 0; $9 = 0 } { print }' "$FIX/demo/f16/tensors.csv" >"$TMP/quiet/f16/tensors.csv"
    crc() { gzip -c <"$1" | tail -c 8 | head -c 4 | od -An -tx1 | awk '{ printf "%s%s%s%s", $4, $3, $2, $1 }'; }
    q=$TMP/quiet/f16 ent="" sep=""
    for f in metrics.csv tensors.csv eval.csv; do
        ent="$ent$sep\"$f\": {\"bytes\": $(stat -c %s "$q/$f"), \"crc32\": \"$(crc "$q/$f")\"}"; sep=", "
    done
    printf '{\n  "model": "mlp-digits",\n  "policy": "16-mixed",\n  "files": {%s}\n}\n' "$ent" >"$q/summary.json"
    "$BIN" report --out "$TMP/qo" "$TMP/quiet" >/dev/null 2>"$TMP/qerr"; rc=$?
    check "a run with no overflow or underflow gets no empty panel, but a note" \
        '[ $rc = 0 ] && [ ! -e "$TMP/qo/quiet/rates_f16.png" ] && [ -f "$TMP/qo/quiet/rates_f16.dat" ] && [ -f "$TMP/qo/quiet/rates_fp8.png" ] &&
         ! grep -q "rates_f16.png" "$TMP/qo/fragment.html" "$TMP/qo/fragment.md" &&
         grep -q "No overflow and underflow plot for f16 (16-mixed, [0-9]* cast elements): none of its cast elements overflowed or became zero" "$TMP/qo/fragment.html" "$TMP/qo/fragment.md"' \
        "exit $rc: $(cat "$TMP/qerr")" "$(grep -o 'rates_[a-z0-9]*.png' "$TMP/qo/fragment.html")"
    # zeros: a class's fraction is 0 in the data (never "?", never left out) wherever tensors.csv counts none
    want=$(awk -F, 'NR > 1 { k = $1 SUBSEP $3; n[k] += $5; u[k] += $9 } END { for (k in n) if (n[k] > 0 && u[k] == 0) z++; print z + 0 }' "$FIX/demo/fp8/tensors.csv")
    got=$(awk '!/^#/ { for (i = 2; i <= NF; i += 2) if ($i == "0") z++ } END { print z + 0 }' "$OUT/demo/rates_fp8.dat")
    check "zeros on the log axis are in the data: $want zero underflow fractions in rates_fp8.dat" \
        '[ "$want" -gt 0 ] && [ "$got" = "$want" ] && ! grep -v "^#" "$OUT/demo/rates_fp8.dat" | grep -q "?"' "want $want, got $got"
    check "zeros on the log axis are drawn: the row labelled 0" \
        'grep -q "<tspan font-family=\"sans\" >0</tspan></text>" "$OUT/demo/rates_fp8.svg" && grep -q "row labelled 0" "$OUT/fragment.html"'
fi

# 3. regenerating in place (the report folder as input) gives the same tables
"$BIN" report --out "$OUT" --no-plots "$OUT/demo" >/dev/null 2>&1; rc=$?
cp "$OUT/summary.csv" "$TMP/s2"
"$BIN" report --out "$TMP/out3" --no-plots "$OUT" >/dev/null 2>&1; rc3=$?
check "report regenerates from its own output folder" '[ $rc = 0 ] && [ $rc3 = 0 ] && cmp -s "$TMP/s2" "$TMP/out3/summary.csv"'

# 4. plain run folders: one experiment against the 32-true run
"$BIN" report --out "$TMP/adhoc" --no-plots "$FIX/demo/f16" "$FIX/demo/fp32" >/dev/null 2>"$TMP/stderr"; rc=$?
check "plain run folders report against their 32-true run" \
    '[ $rc = 0 ] && grep -q "^baseline: fp32" "$TMP/adhoc/runs/experiment.txt" && grep -q "^runs,f16,16-mixed" "$TMP/adhoc/summary.csv"' \
    "exit $rc $(cat "$TMP/stderr")"

# 5. the plan: one target per distinct run, commands that `fpemu train` accepts
mkdir -p "$TMP/suite"
cat >"$TMP/suite/01-a.txt" <<'EOF'
title: a
model: mlp-digits
steps: 20
run fp32: 32-true
run bf: bf16-mixed lr=1e-3
expect bf: final_loss(bf) < final_loss(fp32) + 1
EOF
cat >"$TMP/suite/02-b.txt" <<'EOF'
model: mlp-digits
steps: 20
run base: 32-true
run other: 16-mixed scaler=none
EOF
"$BIN" report --plan --suite "$TMP/suite" --runs "$TMP/cache" >"$TMP/plan.mk" 2>"$TMP/stderr"; rc=$?
nt=$(grep -c 'TRAIN   \[' "$TMP/plan.mk")
check "the plan has one target per distinct run (3 of 4 runs)" '[ $rc = 0 ] && [ "$nt" = 3 ] && grep -q "a/fp32 b/base" "$TMP/plan.mk"' \
    "exit $rc, $nt targets: $(cat "$TMP/stderr")"
check "the plan's commands carry the settings" 'grep -q -- "--policy 16-mixed --steps 20 --seed 1 --set scaler=none" "$TMP/plan.mk"'
check "the plan is a valid makefile" 'make -n -f "$TMP/plan.mk" SUITE_FPEMU=true suite-runs >/dev/null 2>&1'

# 5b. seeds: `seeds: 1 2 3` plans one cache folder per run and seed (the
# key holds the seed), `seed: N` stays one seed, --seeds replaces them
mkdir -p "$TMP/ss"
printf 'model: mlp-digits\nsteps: 20\nseeds: 1 2 3\nrun fp32: 32-true\nrun b: bf16-mixed\n' >"$TMP/ss/01-s.txt"
"$BIN" report --plan --suite "$TMP/ss" --runs "$TMP/cache" >"$TMP/plan3.mk" 2>"$TMP/stderr"; rc=$?
nt=$(grep -c 'TRAIN   \[' "$TMP/plan3.mk")
keys=$(grep -o '^[A-Za-z0-9._+-]*/summary.json:' "$TMP/plan3.mk" | sort -u | wc -l)
check "seeds: 1 2 3: one target per run and seed (6), each its own cache folder" \
    '[ $rc = 0 ] && [ "$nt" = 6 ] && [ "$keys" = 6 ] && [ "$(grep -c "^mlp-digits-32-true-[0-9a-f]*/summary.json:" "$TMP/plan3.mk")" = 3 ]' \
    "exit $rc, $nt targets, $keys keys: $(cat "$TMP/stderr")"
check "each seed's command carries its --seed, into its own folder" 'for s in 1 2 3; do k=$(grep -B3 -- "--policy bf16-mixed --steps 20 --seed $s" "$TMP/plan3.mk" | grep -o "^mlp-digits-bf16-mixed-[0-9a-f]*/summary.json:") && [ -n "$k" ] && echo "$k"; done | sort -u | wc -l | grep -qx 3'
"$BIN" report --plan --suite "$TMP/ss" --runs "$TMP/cache" --seeds "1 2 3 4 5" >"$TMP/plan5.mk" 2>"$TMP/stderr"; rc=$?
check "--seeds \"1 2 3 4 5\" overrides the definition (10 targets)" '[ $rc = 0 ] && [ "$(grep -c "TRAIN   \[" "$TMP/plan5.mk")" = 10 ]' "$(cat "$TMP/stderr")"
k1=$(grep -B3 -- "--policy 32-true --steps 20 --seed 1 " "$TMP/plan3.mk" | grep -o '^mlp-digits-32-true-[0-9a-f]*'); k1b=$(grep -B3 -- "--policy 32-true --steps 20 --seed 1 " "$TMP/plan5.mk" | grep -o '^mlp-digits-32-true-[0-9a-f]*')
check "a run's seed 1 has the same cache folder under either seed list" '[ -n "$k1" ] && [ "$k1" = "$k1b" ]' "$k1 / $k1b"
printf 'model: mlp-digits\nsteps: 20\nseed: 4\nrun fp32: 32-true\n' >"$TMP/ss/01-s.txt"
"$BIN" report --plan --suite "$TMP/ss" --runs "$TMP/cache" >"$TMP/plan1.mk" 2>&1
check "seed: 4 stays a single seed" '[ "$(grep -c "TRAIN   \[" "$TMP/plan1.mk")" = 1 ] && grep -q -- "--seed 4" "$TMP/plan1.mk"'
printf 'model: mlp-digits\nseeds: 1 2 1\nrun fp32: 32-true\n' >"$TMP/ss/01-s.txt"
"$BIN" report --plan --suite "$TMP/ss" --runs "$TMP/cache" >/dev/null 2>"$TMP/stderr"; rc=$?
check "a seed given twice exits 2 with the line" '[ $rc = 2 ] && grep -q "01-s.txt:2: seeds: seed 1 is given twice" "$TMP/stderr"' "exit $rc: $(cat "$TMP/stderr")"
"$BIN" report --plan --suite "$TMP/ss" --runs "$TMP/cache" --seeds "1 x" >/dev/null 2>"$TMP/stderr"; rc=$?
check "--seeds with a word that is not a number exits 2" '[ $rc = 2 ] && grep -q "expected whole numbers" "$TMP/stderr"' "exit $rc"

# 5c. the claim statistic over seeds: a rule holds only when it holds on
# every seed and its mean margin exceeds 2 standard errors of the per-seed
# margins. Experiment folders of 3 seeds, written by hand (loss constant):
# "steady" wins by 0.5 on every seed; "spread" wins on every seed, by 0.9,
# 0.01, 0.02 (mean 0.31, but 2 std errors 0.58: within the spread); "oneseed"
# loses on seed 3 while it wins on the mean.
crc() { gzip -c <"$1" | tail -c 8 | head -c 4 | od -An -tx1 | awk '{ printf "%s%s%s%s", $4, $3, $2, $1 }'; }
mkrun() { # DIR LOSS: metrics.csv, eval.csv (accuracy 1 - LOSS at steps 10 and 20) and the summary.json that vouches for them
    mkdir -p "$1"; { echo "step,loss"; for i in $(seq 1 20); do echo "$i,$2"; done; } >"$1/metrics.csv"
    { echo "step,eval_loss,eval_accuracy"; for i in 10 20; do echo "$i,$2,$(awk -v l="$2" 'BEGIN { print 1 - l }')"; done; } >"$1/eval.csv"
    printf '{"model": "mlp-digits", "policy": "32-true", "files": {"metrics.csv": {"bytes": %s, "crc32": "%s"}, "eval.csv": {"bytes": %s, "crc32": "%s"}}}\n' \
        "$(stat -c %s "$1/metrics.csv")" "$(crc "$1/metrics.csv")" "$(stat -c %s "$1/eval.csv")" "$(crc "$1/eval.csv")" >"$1/summary.json"; }
S=$TMP/seeds/stat
mkdir -p "$S"
cat >"$S/experiment.txt" <<'EOF2'
title: seed statistic
model: mlp-digits
steps: 20
seeds: 1 2 3
baseline: ref
run ref: 32-true
run steady: bf16-mixed
run spread: bf16-mixed lr=1e-3
run oneseed: bf16-mixed lr=2e-3
claim steady: wins on every seed by the same margin
expect steady: final_loss(steady) < final_loss(ref)
claim spread: wins on every seed, by 0.9, 0.01 and 0.02
expect spread: final_loss(spread) < final_loss(ref)
claim oneseed: wins on the mean, loses on seed 3
expect oneseed: final_loss(oneseed) < final_loss(ref)
EOF2
for s in 1 2 3; do mkrun "$S/ref/seed-$s" 1; done
mkrun "$S/steady/seed-1" 0.5; mkrun "$S/steady/seed-2" 0.49; mkrun "$S/steady/seed-3" 0.51
mkrun "$S/spread/seed-1" 0.1; mkrun "$S/spread/seed-2" 0.99; mkrun "$S/spread/seed-3" 0.98
mkrun "$S/oneseed/seed-1" 0.2; mkrun "$S/oneseed/seed-2" 0.2; mkrun "$S/oneseed/seed-3" 1.1
"$BIN" report --out "$TMP/so" $noplots "$S" >/dev/null 2>"$TMP/stderr"; rc=$?
srow() { awk -F, -v r="$1" '$2 == r { print $NF }' "$TMP/so/summary.csv"; }
check "seeds: the report exits 0" '[ $rc = 0 ]' "exit $rc: $(cat "$TMP/stderr")"
check "a claim that holds on every seed beyond the spread is reproduced" '[ "$(srow steady)" = reproduced ]' "$(cat "$TMP/so/summary.csv")"
check "a claim that holds on every seed and on the mean, but not beyond the spread, is not reproduced" \
    '[ "$(srow spread)" = "not reproduced" ]' "$(cat "$TMP/so/summary.csv")"
check "a claim that fails on one seed is not reproduced" '[ "$(srow oneseed)" = "not reproduced" ]'
check "the report shows the per-seed values, the margins, their mean and spread" \
    'grep -q "seed 1: final_loss(spread) = 0.1, final_loss(ref) = 1; 0.1 < 1; seed 2: .*Margin by seed (right side clears < by): 0.9, 0.01, 0.02; mean 0.31, 2 x std error 0.5[0-9]*; holds on 3 of 3 seeds, within the spread: fails" "$TMP/so/fragment.md"' \
    "$(grep -m1 "spread" "$TMP/so/fragment.md")"
check "the table groups a run's seeds: mean [min, max]" 'grep -q "| spread | .* | 0.6900 \[0.1000, 0.9900\] | -0.3100 \[-0.9000, -0.0100\] |" "$TMP/so/fragment.md"' "$(grep "| spread |" "$TMP/so/fragment.md")"
check "the run folders are per seed in the report" '[ -s "$TMP/so/stat/spread/seed-3/metrics.csv" ]'
if [ $plots = 1 ]; then
    # the plot data: step, then per run mean, min, max over the seeds
    check "loss.dat holds each run's seed band (mean, min, max: 13 columns)" \
        'awk "!/^#/ { if (NF != 13) exit 1; for (k = 2; k < 13; k += 3) if (!(\$(k+1) <= \$k && \$k <= \$(k+2))) exit 1; n++ } END { exit !n }" "$TMP/so/stat/loss.dat"' \
        "$(head -3 "$TMP/so/stat/loss.dat")"
    check "the spread run's band spans its seeds (0.1 to 0.99)" \
        'awk "!/^#/ { if (\$9 != 0.1 || \$10 != 0.99) exit 1 }" "$TMP/so/stat/loss.dat"' "$(sed -n 2p "$TMP/so/stat/loss.dat")"
    check "the loss plot draws the bands (translucent filled areas in the SVG)" '[ -s "$TMP/so/stat/loss.png" ] && [ "$(grep -c "fill-opacity" "$TMP/so/stat/loss.svg")" -ge 4 ]'
    check "the caption says what the band is" 'grep -q "shaded band their smallest to largest value" "$TMP/so/fragment.html"'
    check "eval.dat holds each run's accuracy band over the seeds (mean, min, max: 13 columns at steps 10 and 20)" \
        'awk "!/^#/ { if (NF != 13) exit 1; for (k = 2; k < 13; k += 3) if (!(\$(k+1) <= \$k && \$k <= \$(k+2))) exit 1; n++ } END { exit n != 2 }" "$TMP/so/stat/eval.dat"' \
        "$(cat "$TMP/so/stat/eval.dat")"
    check "the spread run's accuracy band spans its seeds (0.01 to 0.9)" \
        'awk "!/^#/ { if (\$9 != 0.01 || \$10 != 0.9) exit 1 }" "$TMP/so/stat/eval.dat"' "$(sed -n 2p "$TMP/so/stat/eval.dat")"
    check "the accuracy caption gives each run's seed mean and range, and no 'first seed' note" \
        'grep -q "Final (mean over seeds, smallest to largest): ref 0 (0 to 0); steady 0.5 (0.49 to 0.51); spread 0.31 (0.01 to 0.9); oneseed 0.5 (-0.1 to 0.8)" "$TMP/so/fragment.html" && ! grep -q "held-out set at each evaluation[^<]*the first of 3 seeds" "$TMP/so/fragment.html"' \
        "$(grep -o "Final (mean[^<]*" "$TMP/so/fragment.html")"
fi

# 6. bad input exits 2 with the file and line
bad() { # NAME PATTERN ARGS...
    local name=$1 pat=$2; shift 2
    "$BIN" report "$@" >"$TMP/stdout" 2>"$TMP/stderr"; local r=$?
    if [ $r = 2 ] && grep -Eq -- "$pat" "$TMP/stderr"; then pass "bad input: $name"
    else fail "bad input: $name" "exit $r" "$(cat "$TMP/stderr")"; fi
}
cp -r "$FIX/demo" "$TMP/bad1"
awk 'NR == 9 { print "7,oops" ; next } { print }' "$FIX/demo/f16/metrics.csv" >"$TMP/bad1/f16/metrics.csv"
bad "a malformed metrics.csv" "f16/metrics.csv: line 9: 2 fields, expected" --out "$TMP/o1" --no-plots "$TMP/bad1"
cp -r "$FIX/demo" "$TMP/bad2"
echo "expect f16: final_los(f16) > 0" >>"$TMP/bad2/experiment.txt"
bad "an unknown metric in a rule" "experiment.txt:[0-9]+: expect f16: unknown metric 'final_los'" --out "$TMP/o2" --no-plots "$TMP/bad2"
cp -r "$FIX/demo" "$TMP/bad3"
echo "expect f16: final_loss(nosuch) > 0" >>"$TMP/bad3/experiment.txt"
bad "a rule naming a run that does not exist" "'nosuch' is not one of the runs" --out "$TMP/o3" --no-plots "$TMP/bad3"
cp -r "$FIX/demo" "$TMP/bad4"
echo "expect f16: final_loss(f16) 0" >>"$TMP/bad4/experiment.txt"
bad "a rule without a comparison" "expected a comparison" --out "$TMP/o4" --no-plots "$TMP/bad4"
printf 'model: mlp-digits\nrun a: 32-true\nrun b: 16-mixed nosuchkey=1\n' >"$TMP/suite/03-c.txt"
bad "an unknown training key in a definition" "03-c.txt:3: run b: unknown key 'nosuchkey'" --plan --suite "$TMP/suite" --runs "$TMP/cache"
printf 'model: mlp-digits\nrun a: 32-true\nrun b: no-such-policy\n' >"$TMP/suite/03-c.txt"
bad "an unknown policy in a definition" "03-c.txt:3: run b: unknown policy 'no-such-policy'" --plan --suite "$TMP/suite" --runs "$TMP/cache"
printf 'model: mlp-digits\nrun a 32-true\n' >"$TMP/suite/03-c.txt"
bad "a line without a colon" "03-c.txt:2: expected .key: value." --plan --suite "$TMP/suite" --runs "$TMP/cache"
rm "$TMP/suite/03-c.txt"
bad "a folder that is neither run nor experiment" "neither a run folder" --out "$TMP/o5" --no-plots "$TMP/suite"
bad "a missing folder" "no such folder" --out "$TMP/o6" --no-plots "$TMP/nonexistent"
bad "no --out" "--out DIR is required" "$FIX/demo"

echo "1..$n"
