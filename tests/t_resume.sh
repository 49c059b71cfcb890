#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_resume.sh: kill-and-resume. A training run (`fpemu train`, checkpoints
# every few steps) is killed with SIGKILL at a random moment, then resumed
# with `--resume DIR` (or started again if it died before its first
# checkpoint), possibly killed again while resuming, and must end with
# files byte-identical to an uninterrupted run: metrics.csv, tensors.csv,
# eval.csv, checkpoint.bin, and summary.json except its "timing" line. No
# half-written file may be left under a final name.
# FPEMU_RESUME_ROUNDS (default 3; `make harden-long` runs 20), FPEMU_SEED
# (the kill times; printed). Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make test builds it; make deps installs the tools)"; exit 1; fi
cd "$ROOT" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_resume.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
ROUNDS=${FPEMU_RESUME_ROUNDS:-3}
SEED=${FPEMU_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "# seed $SEED (FPEMU_SEED=$SEED replays the kill times), $ROUNDS rounds"

# Small and quick, but with what a checkpoint must carry: Adam moments, a
# dynamic GradScaler (16-mixed), shuffling state, telemetry rows.
RUN=(train --model mlp-digits --policy 16-mixed --steps 36 --seed 7 --quiet
     --set hidden=24 --set depth=2 --set checkpoint_every=2 --set tensors_every=5 --set eval_every=10)
FILES="metrics.csv tensors.csv eval.csv checkpoint.bin summary.json"

n=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
    n=$((n + 1)); echo "not ok $n - $1"; shift
    for d in "$@"; do printf '%s\n' "$d" | head -12 | sed 's/^/#   /'; done
}

# same DIR_A DIR_B: empty if the runs' files agree, else what differs
same() {
    local f out=""
    for f in $FILES; do
        if [ ! -f "$2/$f" ]; then out="$out $f missing;"; continue; fi
        if [ "$f" = summary.json ]; then
            cmp -s <(grep -v '"timing"' "$1/$f") <(grep -v '"timing"' "$2/$f") || out="$out $f differs;"
        else
            cmp -s "$1/$f" "$2/$f" || out="$out $f differs;"
        fi
    done
    printf '%s' "$out"
}

now_ms() { date +%s%3N; }

# the uninterrupted run
t0=$(now_ms)
if ! "$BIN" "${RUN[@]}" --out "$TMP/ref" 2>"$TMP/ref.err"; then
    echo "1..1"; fail "the uninterrupted run" "$(tail -5 "$TMP/ref.err")"; exit 0
fi
t1=$(now_ms)
dur=$(( t1 - t0 )); [ "$dur" -lt 50 ] && dur=50
echo "# uninterrupted run: $dur ms"
if [ -z "$(same "$TMP/ref" "$TMP/ref")" ]; then pass "uninterrupted run wrote $FILES"
else fail "uninterrupted run wrote $FILES" "$(ls "$TMP/ref")"; fi

# start_kill DELAY_MS CMD...: run CMD in the background, SIGKILL it after
# DELAY_MS; prints "killed" if it was still running, else its exit status.
start_kill() {
    local d=$1; shift
    "$BIN" "$@" 2>>"$TMP/round.err" &
    local pid=$!
    sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
    if kill -9 "$pid" 2>/dev/null; then wait "$pid" 2>/dev/null; echo killed
    else wait "$pid"; echo "exit $?"; fi
}

for r in $(seq 1 "$ROUNDS"); do
    dir=$TMP/r$r
    : >"$TMP/round.err"
    log=""
    # first kill anywhere in [3%, 100%] of the run's length (near the end it may have finished)
    d=$(( dur * (3 + RANDOM % 98) / 100 ))
    st=$(start_kill "$d" "${RUN[@]}" --out "$dir"); log="run killed at ${d}ms: $st"
    # every other round: kill the resumed run too
    tries=0
    while :; do
        tries=$((tries + 1))
        if [ -f "$dir/checkpoint.bin" ]; then cmd=(train --resume "$dir" --quiet); else cmd=("${RUN[@]}" --out "$dir"); fi
        if [ $((r % 2)) = 0 ] && [ "$tries" = 1 ]; then
            d2=$(( dur * (5 + RANDOM % 60) / 100 ))
            st=$(start_kill "$d2" "${cmd[@]}"); log="$log; ${cmd[1]} ${cmd[2]} killed at ${d2}ms: $st"
            [ "$st" = killed ] && continue
        else
            "$BIN" "${cmd[@]}" 2>>"$TMP/round.err"; st="exit $?"; log="$log; ${cmd[1]} ${cmd[2]}: $st"
        fi
        break
    done
    diffs=$(same "$TMP/ref" "$dir")
    # no half-written file under a final name; temporary files of a killed writer are listed
    litter=$(cd "$dir" 2>/dev/null && ls | grep -v -x -E 'metrics.csv|tensors.csv|eval.csv|checkpoint.bin|summary.json' | tr '\n' ' ')
    if [ "$st" = "exit 0" ] && [ -z "$diffs" ]; then
        pass "round $r: byte-identical after kill and resume ($log)${litter:+; left by the killed writer: $litter}"
    else
        fail "round $r: byte-identical after kill and resume" "$log" "differences:${diffs:- none}" "$(tail -5 "$TMP/round.err")"
        for f in metrics.csv eval.csv; do
            [ -f "$dir/$f" ] && diff "$TMP/ref/$f" "$dir/$f" | head -6 | sed 's/^/#   /'
        done
    fi
done

# a finished run resumed again changes nothing
cp -r "$TMP/ref" "$TMP/ref0"
if "$BIN" train --resume "$TMP/ref" --quiet 2>"$TMP/again.err" && [ -z "$(same "$TMP/ref0" "$TMP/ref")" ]; then
    pass "resuming a finished run leaves its files as they were"
else
    fail "resuming a finished run leaves its files as they were" "$(tail -3 "$TMP/again.err")" "$(same "$TMP/ref0" "$TMP/ref")"
fi
# the last step as a checkpoint step, and --resume --steps other than the run's
BASE=(train --model mlp-digits --policy 16-mixed --seed 7 --quiet --set hidden=24 --set depth=2 --set tensors_every=5 --set eval_every=10)
plain() { "$BIN" "${BASE[@]}" --steps "$1" --set checkpoint_every="$2" --out "$3" 2>>"$TMP/more.err"; }
: >"$TMP/more.err"
# checkpoint_every = steps: the finished run keeps its last step's state, so it can be extended
plain 12 12 "$TMP/e12" && plain 16 12 "$TMP/e16" && "$BIN" train --resume "$TMP/e12" --steps 16 --quiet 2>>"$TMP/more.err"
d=$(same "$TMP/e16" "$TMP/e12")
if [ -f "$TMP/e16/checkpoint.bin" ] && [ -z "$d" ]; then
    pass "checkpoint_every = steps keeps a checkpoint; --resume --steps 16 of that 12-step run = a 16-step run, checkpoint.bin included"
else fail "checkpoint_every = steps: extended = a 16-step run" "differences:${d:- none}" "$(tail -3 "$TMP/more.err")"; fi
# --resume --steps equal to the checkpoint's step: the run that long, with its final evaluation row
plain 16 12 "$TMP/s16" && "$BIN" train --resume "$TMP/s16" --steps 12 --out "$TMP/s12" --quiet 2>>"$TMP/more.err"
plain 12 12 "$TMP/p12"
d=$(same "$TMP/p12" "$TMP/s12")
if [ -z "$d" ] && grep -q '^12,' "$TMP/s12/eval.csv"; then
    pass "--resume --steps 12 from a step-12 checkpoint of a 16-step run = a 12-step run (its step-12 evaluation row too)"
else fail "--resume --steps = the checkpoint's step = a run that long" "differences:${d:- none}" "$(cat "$TMP/s12/eval.csv" 2>&1)"; fi
# a checkpoint kept across --resume --steps names the new length: resuming again goes on to it
plain 20 10 "$TMP/k20" && "$BIN" train --resume "$TMP/k20" --steps 24 --quiet 2>>"$TMP/more.err" \
    && "$BIN" train --resume "$TMP/k20" --quiet 2>>"$TMP/more.err"
plain 24 10 "$TMP/k24"
d=$(same "$TMP/k24" "$TMP/k20")
if [ -z "$d" ]; then pass "a 20-step run extended to 24 and resumed again without --steps = a 24-step run (the kept checkpoint names 24)"
else fail "a kept checkpoint names the extended length" "differences:${d:- none}" "$(tail -3 "$TMP/more.err")"; fi

echo "1..$n"
