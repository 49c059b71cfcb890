#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_atomic.sh: crash-safe outputs. Every file fpemu writes appears whole or
# not at all. Writes are made to fail part-way with a file size limit
# (`ulimit -f`, SIGXFSZ ignored, so write() fails with EFBIG as on a full
# disk, at a different point for each limit) in `fpemu report` (CSV copies,
# plot data, gnuplot's PNG and SVG, the pages) and `fpemu train` (checkpoint
# and CSVs); each case must exit 2 with a "cannot write" message, leave no
# NAME.tmp.PID file, and every file it leaves must be byte-identical to the
# one an unlimited run writes (or, for the report's pages, which leave out
# a figure that could not be drawn, must not stop at the limit). A file
# written in place by a plain fopen would stop exactly at the limit.
# Then: temporaries of a killed `fpemu train` (SIGKILL at random moments)
# are removed by the next run into the same folder when their PID is gone,
# and kept when it is alive. Prints TAP.
. "$(cd "$(dirname "$0")" && pwd)/lib/report_env.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_atomic.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
export FPEMU_ROOT=$ROOT
SEED=${FPEMU_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "# seed $SEED (FPEMU_SEED=$SEED replays the kill times)"

n=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
    n=$((n + 1)); echo "not ok $n - $1"; shift
    for d in "$@"; do printf '%s\n' "$d" | head -12 | sed 's/^/#   /'; done
}
check() { if eval "$2"; then pass "$1"; else fail "$1" "${3:-}"; fi; }

# limited KB CMD...: run CMD with files limited to KB kilobytes; status in $rc
limited() {
    local kb=$1; shift
    (ulimit -f "$kb"; trap '' XFSZ; exec "$@") >"$TMP/stdout" 2>"$TMP/stderr"
    rc=$?
}

# whole GOOD DIR KB [PAGES]: empty if every file of DIR is byte-identical to
# GOOD's (PAGES: names that may differ, but must not end at the limit);
# else what is wrong
whole() {
    local good=$1 dir=$2 kb=$3 pages=${4:-} f rel bad=""
    while IFS= read -r f; do
        rel=${f#"$dir"/}
        case $rel in *.tmp.*) bad="$bad temporary:$rel"; continue ;; esac
        if [ "$(stat -c %s "$f")" = $((kb * 1024)) ]; then bad="$bad at-limit:$rel"; continue; fi
        case " $pages " in *" $rel "*) continue ;; esac
        cmp -s "$f" "$good/$rel" || bad="$bad differs:$rel"
    done < <(find "$dir" -type f 2>/dev/null | sort)
    printf '%s' "$bad"
}

# ---- fpemu report ---------------------------------------------------------
if [ -d "$FIX/demo" ]; then
    noplots=
    command -v gnuplot >/dev/null 2>&1 || noplots=--no-plots
    PAGES="index.html summary.md summary.csv fragment.html fragment.md"
    "$BIN" report --out "$TMP/good" $noplots "$FIX/demo" >/dev/null 2>"$TMP/stderr"; rc=$?
    check "report: unlimited run exits 0" '[ $rc = 0 ]' "$(cat "$TMP/stderr")"
    "$BIN" report --out "$TMP/good2" $noplots "$FIX/demo" >/dev/null 2>&1
    check "report: two unlimited runs write the same files" 'diff -r "$TMP/good" "$TMP/good2" >/dev/null' \
        "$(diff -rq "$TMP/good" "$TMP/good2" | head -5)"
    # limits below, inside and above the plot data, the images and the pages
    for kb in 1 2 5 12 40; do
        # a fresh folder: the CSV copies, then everything else
        limited $kb "$BIN" report --out "$TMP/f$kb" $noplots "$FIX/demo"
        w=$(whole "$TMP/good" "$TMP/f$kb" $kb "$PAGES")
        check "report --out NEW, files limited to ${kb} KB: exit 2, says 'cannot write', no folder at all" \
            '[ $rc = 2 ] && grep -qE "cannot (write|copy)" "$TMP/stderr" && [ -z "$w" ] && [ ! -e "$TMP/f$kb" ]' \
            "exit $rc; wrong files:${w:- none}; stderr: $(head -c 400 "$TMP/stderr")"
        # in place over a complete report (the CSVs are not copied again)
        rm -rf "$TMP/p$kb" && cp -r "$TMP/good" "$TMP/p$kb"
        limited $kb "$BIN" report --out "$TMP/p$kb" $noplots "$TMP/p$kb/demo"
        w=$(whole "$TMP/good" "$TMP/p$kb" $kb "$PAGES")
        check "report in place, files limited to ${kb} KB: exit 2, says 'cannot write', no partial file" \
            '[ $rc = 2 ] && grep -qE "cannot (write|copy)" "$TMP/stderr" && [ -z "$w" ]' \
            "exit $rc; wrong files:${w:- none}; stderr: $(head -c 400 "$TMP/stderr")"
    done
else
    echo "# no report fixture in $FIX: report cases skipped"
fi

# ---- fpemu train ----------------------------------------------------------
RUN=(train --model mlp-digits --policy 16-mixed --seed 7 --quiet
     --set hidden=24 --set depth=2 --set checkpoint_every=1 --set tensors_every=5 --set eval_every=10)
"$BIN" "${RUN[@]}" --steps 12 --out "$TMP/tgood" 2>"$TMP/stderr"; rc=$?
check "train: unlimited run exits 0" '[ $rc = 0 ]' "$(cat "$TMP/stderr")"
for kb in 1 4 40 100; do
    limited $kb "$BIN" "${RUN[@]}" --steps 12 --out "$TMP/t$kb"
    bad=$(find "$TMP/t$kb" -name '*.tmp.*' 2>/dev/null
          find "$TMP/t$kb" -type f -exec stat -c '%s %n' {} + 2>/dev/null | awk -v l=$((kb * 1024)) '$1 == l { print $2 }')
    resumes=1
    if [ -f "$TMP/t$kb/checkpoint.bin" ]; then
        "$BIN" train --resume "$TMP/t$kb" --quiet >/dev/null 2>&1 || resumes=0
    fi
    check "train, files limited to ${kb} KB: exit 2, says 'cannot write', no partial file or temporary" \
        '[ $rc = 2 ] && grep -q "cannot write" "$TMP/stderr" && [ -z "$bad" ] && [ $resumes = 1 ]' \
        "exit $rc; left: ${bad:-nothing}; resumes from what is left: $resumes; stderr: $(head -c 300 "$TMP/stderr")"
done

# Temporaries of dead writers go, a live writer's stay, other files stay.
D=$TMP/stale
mkdir -p "$D"
sh -c 'echo $$' >"$TMP/deadpid"; dead=$(cat "$TMP/deadpid")
sleep 30 & live=$!
for f in checkpoint.bin metrics.csv summary.json; do echo partial >"$D/$f.tmp.$dead"; done
echo partial >"$D/eval.csv.tmp.$live"
echo mine >"$D/notes.txt.tmp.$dead"
echo mine >"$D/metrics.csv.tmp.$dead.bak"
"$BIN" "${RUN[@]}" --steps 12 --out "$D" 2>"$TMP/stderr"; rc=$?
left=$(cd "$D" && ls | grep '\.tmp\.' | sort | tr '\n' ' ')
want=$(printf '%s\n' "eval.csv.tmp.$live" "metrics.csv.tmp.$dead.bak" "notes.txt.tmp.$dead" | sort | tr '\n' ' ')
check "train removes its outputs' temporaries of a dead PID, keeps a live PID's and other files" \
    '[ $rc = 0 ] && [ "$left" = "$want" ]' "exit $rc; left: $left; expected: $want"
kill $live 2>/dev/null; wait $live 2>/dev/null

# SIGKILL at random moments, then resume: every round ends with no
# temporary and the uninterrupted run's files (summary.json without timing).
"$BIN" "${RUN[@]}" --steps 60 --out "$TMP/k0" 2>/dev/null
ROUNDS=${FPEMU_ATOMIC_ROUNDS:-3}
for r in $(seq 1 "$ROUNDS"); do
    K=$TMP/k$r
    rm -rf "$K"
    "$BIN" "${RUN[@]}" --steps 60 --out "$K" 2>/dev/null &
    pid=$!
    sleep "0.$(printf '%03d' $((RANDOM % 400)))"
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    before=$(ls "$K" 2>/dev/null | grep -c '\.tmp\.')
    if [ -f "$K/checkpoint.bin" ]; then
        "$BIN" train --resume "$K" --quiet 2>"$TMP/stderr"; rc=$?
    else
        "$BIN" "${RUN[@]}" --steps 60 --out "$K" 2>"$TMP/stderr"; rc=$?
    fi
    left=$(ls "$K" | grep '\.tmp\.' | tr '\n' ' ')
    diffs=""
    for f in metrics.csv tensors.csv eval.csv checkpoint.bin; do cmp -s "$TMP/k0/$f" "$K/$f" || diffs="$diffs $f"; done
    cmp -s <(grep -v '"timing"' "$TMP/k0/summary.json") <(grep -v '"timing"' "$K/summary.json") || diffs="$diffs summary.json"
    check "kill -9 round $r ($before temporaries left by the kill): the next run removes them and ends identical" \
        '[ $rc = 0 ] && [ -z "$left" ] && [ -z "$diffs" ]' "exit $rc; temporaries: ${left:-none}; differ:${diffs:- none}"
done
echo "1..$n"
