#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_harden_train.sh: `fpemu train` against the defects of issue 26 that it
# owns: a checkpoint file of 3 GB under a 2 GB address-space limit (class
# 1: bounded reads, checked allocations); a bad steps/seed in --config
# (class 2: the message is formatted from freed memory; under valgrind when
# it is installed); duplicate config keys and --set keys (class 9); and the
# run folder as a whole (class 4): a second writer of the same --out is
# locked out, naming the folder; FPEMU_DATA and the gzip loader's bounds
# (class 9); --out onto another run's folder or a kill at
# any moment never leaves files of two runs side by side; a full disk leaves
# the old folder as it was and names the file; summary.json's "files" lists
# each other file with its size and zlib CRC-32; no temporary or lock is
# left. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
. "$HERE/lib/tap.sh"
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
export FPEMU_ROOT=$ROOT
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_harden_train.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
SEED=${FPEMU_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "# seed $SEED (FPEMU_SEED=$SEED replays the kill times)"

RUN=(train --model mlp-digits --policy 16-mixed --quiet --set hidden=24 --set depth=2 --set tensors_every=5 --set eval_every=10)

# ---- class 1: a 3 GB checkpoint under a 2 GB address-space limit -----------------
mkdir -p big1 big2
truncate -s 3G big1/checkpoint.bin
truncate -s 3G big2/checkpoint.bin
printf 'FPEMUCKPT 1\n' | dd of=big2/checkpoint.bin conv=notrunc 2>/dev/null
# An ASan build cannot start under ulimit -v (its shadow memory): there its
# allocator is told to return NULL above 2000 MB instead.
for d in big1 big2; do
    if grep -q __asan_init "$BIN" 2>/dev/null; then
        how="ASan, max_allocation_size_mb=2000"
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=2000 \
            "$BIN" train --resume "$d" --quiet >/dev/null 2>err.txt; rc=$?
    else
        how="ulimit -v 2000000"
        (ulimit -v 2000000; exec "$BIN" train --resume "$d" --quiet) >/dev/null 2>err.txt; rc=$?
    fi
    if [ $rc = 2 ] && grep -q "$d/checkpoint.bin" err.txt; then pass "3 GB $d/checkpoint.bin under $how: exit 2, names the file ($(head -c 160 err.txt))"
    else fail "3 GB $d/checkpoint.bin under $how: exit 2, names the file" "exit $rc" "$(head -c 300 err.txt)"; fi
done
rm -rf big1 big2

# ---- class 2: steps/seed in --config (message from freed memory) --------------------
# under valgrind where it is installed; an ASan build (make test-asan)
# checks the same read itself, and valgrind cannot run it
VG=
command -v valgrind >/dev/null 2>&1 && ! grep -q __asan_init "$BIN" 2>/dev/null && VG="valgrind -q --error-exitcode=99"
for kv in "steps = -5" "seed = x"; do
    printf '%s\n' "$kv" >bad.cfg
    $VG "$BIN" train --model mlp-digits --policy 32-true --out uaf --config bad.cfg >/dev/null 2>err.txt; rc=$?
    k=${kv%% *}; v=${kv##* }
    if [ $rc = 2 ] && grep -q "bad.cfg:1: $k: expected .*'$v'" err.txt && [ ! -e uaf ]; then
        pass "config '$kv': exit 2, 'bad.cfg:1: $k: ... got '$v''${VG:+, valgrind clean}"
    else fail "config '$kv': exit 2, 'bad.cfg:1: $k: ... got '$v''${VG:+, valgrind clean}" "exit $rc" "$(head -c 600 err.txt)"; fi
done

# ---- class 9: duplicate keys ----------------------------------------------------------
printf 'model = mlp-digits\npolicy = 32-true\nsteps = 1\n# again\nsteps = 2\n' >dup.cfg
"$BIN" train --config dup.cfg --out dup >/dev/null 2>err.txt; rc=$?
if [ $rc = 2 ] && grep -q "dup.cfg:5: duplicate key 'steps' (lines 3 and 5" err.txt && [ ! -e dup ]; then pass "duplicate config key: exit 2, names the key and both lines"
else fail "duplicate config key: exit 2, names the key and both lines" "exit $rc" "$(head -c 300 err.txt)"; fi
"$BIN" train --model mlp-digits --policy 32-true --steps 1 --set lr=0.1 --set lr=0.2 --out dup >/dev/null 2>err.txt; rc=$?
if [ $rc = 2 ] && grep -q "lr=0.1" err.txt && grep -q "lr=0.2" err.txt && [ ! -e dup ]; then pass "--set of one key twice: exit 2, names both"
else fail "--set of one key twice: exit 2, names both" "exit $rc" "$(head -c 300 err.txt)"; fi
"$BIN" train --model mlp-digits --policy 32-true --steps 1 --steps 2 --out dup >/dev/null 2>err.txt; rc=$?
if [ $rc = 2 ] && grep -q -- "--steps given twice" err.txt && [ ! -e dup ]; then pass "--steps twice: exit 2"
else fail "--steps twice: exit 2" "exit $rc" "$(head -c 300 err.txt)"; fi

# ---- class 4: the run folder ------------------------------------------------------------
# files_ok DIR: empty when DIR holds summary.json and exactly the files its
# "files" lists, each of the size and zlib CRC-32 given (gzip's trailer
# carries the CRC-32 of its input); else what is wrong
files_ok() {
    local d=$1 out="" f bytes crc want got
    [ -f "$d/summary.json" ] || { printf 'no summary.json'; return; }
    grep -q '"files": {' "$d/summary.json" || { printf 'no "files" in summary.json'; return; }
    local listed
    listed=$(sed -n '/"files": {/,/^  }/p' "$d/summary.json" | grep -o '"[a-z.]*": {"bytes"' | cut -d'"' -f2 | sort | tr '\n' ' ')
    got=$(cd "$d" && ls | grep -v -x summary.json | sort | tr '\n' ' ')
    [ "$listed" = "$got" ] || out="$out listed: $listed, present: $got;"
    for f in $listed; do
        bytes=$(grep -o "\"$f\": {\"bytes\": [0-9]*" "$d/summary.json" | grep -o '[0-9]*$')
        crc=$(grep -o "\"$f\": {[^}]*\"crc32\": \"[0-9a-f]*\"" "$d/summary.json" | grep -o '[0-9a-f]\{8\}"$' | tr -d '"')
        want="$bytes $crc"
        got="$(stat -c %s "$d/$f") $(gzip -c <"$d/$f" | tail -c 8 | head -c 4 | od -An -tx4 | tr -d ' \n')"
        [ "$want" = "$got" ] || out="$out $f: summary says $want, file is $got;"
    done
    printf '%s' "$out"
}
"$BIN" "${RUN[@]}" --steps 12 --seed 1 --set checkpoint_every=4 --out a >/dev/null 2>err.txt; rc=$?
w=$(files_ok a)
if [ $rc = 0 ] && [ -z "$w" ]; then pass "summary.json \"files\" lists every other file with its size and CRC-32"
else fail "summary.json \"files\" lists every other file with its size and CRC-32" "exit $rc: $w" "$(head -c 300 err.txt)"; fi
left=$(ls -A | grep -E '^\.a\.' | tr '\n' ' ')
if [ -z "$left" ]; then pass "no temporary folder or lock file left beside the run folder"; else fail "no temporary folder or lock file left" "$left"; fi

# --out onto another run's folder: nothing of the old run stays
cp -r a a0
"$BIN" "${RUN[@]}" --steps 12 --seed 2 --out a >/dev/null 2>err.txt; rc=$?
w=$(files_ok a)
if [ $rc = 0 ] && [ -z "$w" ] && [ ! -e a/checkpoint.bin ]; then pass "--out onto another run's folder: only the new run's files (the old checkpoint.bin is gone)"
else fail "--out onto another run's folder: only the new run's files" "exit $rc: $w" "$(ls a)"; fi

# a file fpemu did not write stays
echo mine >a/notes.txt
"$BIN" "${RUN[@]}" --steps 3 --seed 3 --out a >/dev/null 2>err.txt; rc=$?
if [ $rc = 0 ] && [ "$(cat a/notes.txt 2>/dev/null)" = mine ]; then pass "a file in the folder that fpemu did not write is kept"
else fail "a file in the folder that fpemu did not write is kept" "exit $rc" "$(ls a)"; fi
rm -f a/notes.txt

# full disk over a complete run folder: exit 2, the message names the file, the folder is as it was
rm -rf a && cp -r a0 a
(ulimit -f 4; trap '' XFSZ; exec "$BIN" "${RUN[@]}" --steps 40 --seed 2 --out a) >/dev/null 2>err.txt; rc=$?
if [ $rc = 2 ] && grep -qE "a/(metrics|tensors|eval|checkpoint|summary)[a-z.]*: cannot write" err.txt && diff -r a0 a >/dev/null; then
    pass "files limited to 4 KB over a complete run: exit 2, names the file, the old folder is unchanged"
else fail "files limited to 4 KB over a complete run: exit 2, names the file, the old folder is unchanged" "exit $rc" \
    "$(head -c 300 err.txt)" "$(diff -rq a0 a | head -5)"; fi

# a second writer of the same --out is locked out
"$BIN" "${RUN[@]}" --steps 100000 --seed 4 --out lk >/dev/null 2>/dev/null &
pid=$!
for _ in $(seq 1 600); do [ -e .lk.lock ] && break; sleep 0.05; done # (up to 30 s: other test files run beside this one)
"$BIN" "${RUN[@]}" --steps 2 --seed 5 --out lk >/dev/null 2>err.txt; rc=$?
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
if [ $rc = 2 ] && grep -q "\-\-out lk: another fpemu train" err.txt; then pass "a second writer of the same --out: exit 2, names the folder ($(head -c 200 err.txt))"
else fail "a second writer of the same --out: exit 2, names the folder" "exit $rc" "$(head -c 300 err.txt)"; fi
# the killed writer's lock is stale: the next writer goes ahead
"$BIN" "${RUN[@]}" --steps 2 --seed 5 --out lk >/dev/null 2>err.txt; rc=$?
if [ $rc = 0 ] && [ -z "$(files_ok lk)" ]; then pass "after the writer is killed (SIGKILL), the next run into its folder succeeds"
else fail "after the writer is killed (SIGKILL), the next run into its folder succeeds" "exit $rc" "$(head -c 300 err.txt)"; fi

# SIGKILL at random moments of a checkpointing run over another run's folder:
# the folder holds one run at every kill (the old one complete, or the new
# run's checkpoint alone), and resuming ends identical to the uninterrupted run
"$BIN" "${RUN[@]}" --steps 40 --seed 6 --set checkpoint_every=1 --out ref >/dev/null 2>&1
t0=$(date +%s%N); "$BIN" "${RUN[@]}" --steps 40 --seed 6 --set checkpoint_every=1 --out ref2 >/dev/null 2>&1; t1=$(date +%s%N)
dur=$(( (t1 - t0) / 1000000 )); [ "$dur" -lt 50 ] && dur=50
ROUNDS=${FPEMU_HARDEN_ROUNDS:-5}
for r in $(seq 1 "$ROUNDS"); do
    rm -rf k && cp -r a0 k
    "$BIN" "${RUN[@]}" --steps 40 --seed 6 --set checkpoint_every=1 --out k >/dev/null 2>&1 &
    pid=$!
    d=$(( dur * (RANDOM % 100) / 100 ))
    sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    state=""
    if [ -f k/summary.json ]; then
        w=$(files_ok k); [ -n "$w" ] && state="mixed: $w"
    else
        [ "$(ls k | tr '\n' ' ')" = "checkpoint.bin " ] || state="mixed: $(ls k | tr '\n' ' ')"
    fi
    if [ -f k/checkpoint.bin ] && [ ! -f k/summary.json ]; then "$BIN" train --resume k --quiet 2>err.txt; rc=$?
    else "$BIN" "${RUN[@]}" --steps 40 --seed 6 --set checkpoint_every=1 --out k 2>err.txt; rc=$?; fi
    same=1
    for f in metrics.csv tensors.csv eval.csv checkpoint.bin; do cmp -s ref/$f k/$f || same=0; done
    cmp -s <(grep -v '"timing"' ref/summary.json) <(grep -v '"timing"' k/summary.json) || same=0
    if [ -z "$state" ] && [ $rc = 0 ] && [ $same = 1 ]; then pass "kill round $r at ${d} ms: one run in the folder, then identical"
    else fail "kill round $r at ${d} ms: one run in the folder, then identical" "${state:-not mixed}; exit $rc; same $same" "$(head -c 300 err.txt)"; fi
done
# ---- class 9: the data file -------------------------------------------------
# FPEMU_DATA, when set, is the only file read: a wrong one is an error that
# names it (it fell back to the bundled data without a word); a gzip bomb is
# stopped at the loader's bound (a 4 MB file inflated to 985 MB); bytes after
# the gzip member are refused
FPEMU_DATA=$TMP/no-such-digits.csv.gz "$BIN" train --model mlp-digits --policy 32-true --steps 2 --quiet --out d1 2>err.txt; rc=$?
if [ $rc = 2 ] && grep -q "no-such-digits.csv.gz" err.txt && [ ! -e d1 ]; then pass "FPEMU_DATA naming a missing file: exit 2, names it, no run ($(head -c 120 err.txt))"
else fail "FPEMU_DATA naming a missing file: exit 2, names it, no run" "exit $rc" "$(head -c 300 err.txt)"; fi
head -c 100000000 /dev/zero | gzip -1 >bomb.gz
FPEMU_DATA=$TMP/bomb.gz "$BIN" train --model mlp-digits --policy 32-true --steps 2 --quiet --out d2 2>err.txt; rc=$?
if [ $rc = 2 ] && grep -q "bomb.gz: expands past" err.txt && [ ! -e d2 ]; then pass "a gzip file expanding to 100 MB of zeros ($(stat -c %s bomb.gz) bytes) is stopped at the bound: $(head -c 120 err.txt)"
else fail "a gzip file expanding to 100 MB is stopped at the loader's bound" "exit $rc" "$(head -c 300 err.txt)"; fi
cp "$ROOT/experiments/data/digits.csv.gz" tail.gz && printf 'junk' >>tail.gz
FPEMU_DATA=$TMP/tail.gz "$BIN" train --model mlp-digits --policy 32-true --steps 2 --quiet --out d3 2>err.txt; rc=$?
if [ $rc = 2 ] && grep -q "tail.gz: not a valid gzip file" err.txt && [ ! -e d3 ]; then pass "bytes after the gzip member are refused: $(head -c 120 err.txt)"
else fail "bytes after the gzip member are refused" "exit $rc" "$(head -c 300 err.txt)"; fi

left=$(ls -A | grep -E '^\.(k|a|lk)\.' | tr '\n' ' ')
if [ -z "$left" ]; then pass "no temporary folder or lock file left beside the run folders"; else fail "no temporary folder or lock file left beside the run folders" "$left"; fi
tap_end
