#!/bin/sh
# SPDX-License-Identifier: MIT
# t_check.sh: `fpemu check` itself: passes on the emulator, catches planted
# faults (the --inject-bug test hook: ties-away instead of ties-to-even, a
# dropped underflow flag) with exit status 1 and replayable lines that
# `fpemu run` reproduces, splits work into disjoint shards, gives the same
# answer for any thread count, refuses bad usage with status 2.
BIN=${FPEMU_BIN:-bin/fpemu}
if [ ! -x "$BIN" ]; then
    echo "1..1"; echo "not ok 1 - no fpemu binary at $BIN"; exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/t_check.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; failed=1; [ -f "$T/out" ] && sed 's/^/#   /' "$T/out" | head -n 20; }
check_rc() { # want desc cmd...
    want=$1 desc=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -eq "$want" ]; then ok "$desc (exit $rc)"; else nok "$desc: exit $rc, expected $want"; sed 's/^/#   /' "$T/err" | head -n 5; fi
}

# 1. correct code passes
check_rc 0 "e4m3 add, exhaustive, rne" "$BIN" check --format e4m3 --op add --round rne --exhaustive --quiet
if [ "$(tail -n 1 "$T/out")" = "65536 cases, 0 mismatches" ]; then ok "final line: 65536 cases, 0 mismatches"; else nok "final line: $(tail -n 1 "$T/out")"; fi
check_rc 0 "e2m1 and e3m2, every op and mode, exhaustive, sat" "$BIN" check --format e2m1,e3m2 --op add,sub,mul,div,sqrt,fma,to_f32,to_e4m3 --round all --exhaustive --sat --quiet

# 2. a planted wrong rounding is caught and printed as replayable lines
check_rc 1 "planted fault (ties away in rne) is caught" "$BIN" check --format e4m3 --op add --round rne --exhaustive --inject-bug ties --max-print 5 --quiet
cp "$T/out" "$T/ties"
nl=$(grep -c '^e4m3_add rne: [0-9A-F][0-9A-F] [0-9A-F][0-9A-F] => emu [0-9A-F][0-9A-F] [0-9A-F][0-9A-F] ref [0-9A-F][0-9A-F] [0-9A-F][0-9A-F]$' "$T/ties")
if [ "$nl" -eq 5 ]; then ok "5 vector lines printed (--max-print 5)"; else nok "expected 5 vector lines, got $nl"; fi
last=$(tail -n 1 "$T/ties")
case "$last" in
"65536 cases, "*" mismatches") m=${last#65536 cases, }; m=${m% mismatches}
    if [ "$m" -gt 0 ]; then ok "final line counts the mismatches ($last)"; else nok "no mismatches counted: $last"; fi ;;
*) nok "final line: $last" ;;
esac
# replay the first line through `fpemu run`: the correct emulator gives the
# reference's result and flags, the planted fault does not
line=$(grep -m 1 '^e4m3_add' "$T/ties")
ops=$(echo "$line" | sed 's/^[^:]*: \(.*\) => .*/\1/')
ref=$(echo "$line" | sed 's/.* ref //')
emu=$(echo "$line" | sed 's/.* emu \(.*\) ref .*/\1/')
got=$(echo "$ops" | "$BIN" run e4m3_add --round rne | sed "s/^$ops //")
if [ "$got" = "$ref" ] && [ "$got" != "$emu" ]; then ok "replay '$ops' through fpemu run gives ref's '$ref'"; else nok "replay '$ops': fpemu run says '$got', line says ref '$ref' emu '$emu'"; fi
if grep -q "^# replay: echo '$ops' | fpemu run e4m3_add --round rne$" "$T/ties"; then ok "replay hint printed"; else nok "no replay hint"; fi
check_rc 1 "planted fault (dropped underflow flag) is caught" "$BIN" check --format f16 --op mul --round rne --structured --inject-bug underflow --max-print 3 --quiet
if grep -q '^f16_mul rne: [0-9A-F]\{4\} [0-9A-F]\{4\} => emu [0-9A-F]\{4\} 01 ref [0-9A-F]\{4\} 03$' "$T/out"; then ok "f16 line shows ref 03 vs emu 01"; else nok "f16 underflow line"; fi
check_rc 1 "--max-print 0: no lines, still exit 1" "$BIN" check --format e4m3 --op add --round rne --exhaustive --inject-bug ties --max-print 0 --quiet
# a source format without mantissa bits in the conversion grid (fuzz_args
# found a shift by -1 there: fuzz/regress/fuzz_args/crash-236667ce...; an
# UBSan build, make test-asan, stops on it)
check_rc 0 "conversions from e8m0fn (no mantissa bits), structured grid" "$BIN" check --format e8m0fn --op to_f16,to_e4m3 --structured --quiet
if [ "$(grep -c '^e4m3_add' "$T/out")" -eq 0 ]; then ok "no vector lines with --max-print 0"; else nok "lines printed with --max-print 0"; fi

# 2b. sr: the reference rounds with each case's draw; an off-by-one in the
#     comparison (up iff r <= frac x 2^R) and a draw taken by an exact
#     result are caught, and the first line replays through --sr-draws
check_rc 0 "e4m3 e2m1 add mul div, exhaustive, sr (draws straddling the decisions)" "$BIN" check --format e4m3,e2m1 --op add,mul,div --round sr --exhaustive --quiet
check_rc 0 "f16 bf16 f64 every op, random, sr, R = 8" "$BIN" check --format f16,bf16,f64 --op arith --round sr --sr-bits 8 --random 4000 --quiet
check_rc 1 "planted fault (sr up iff r <= frac x 2^R) is caught" "$BIN" check --format e4m3 --op add --round sr --exhaustive --inject-bug sr --max-print 3 --quiet
cp "$T/out" "$T/sr"
if [ "$(grep -c '^e4m3_add sr R=[0-9]* draw=[0-9A-F]\{16\}: [0-9A-F][0-9A-F] [0-9A-F][0-9A-F] => emu [0-9A-F][0-9A-F] [0-9A-F][0-9A-F] ref [0-9A-F][0-9A-F] [0-9A-F][0-9A-F]$' "$T/sr")" -eq 3 ]; then
    ok "sr lines carry R and the draw"; else nok "sr lines: $(head -n 3 "$T/sr")"; fi
if command -v bash >/dev/null 2>&1; then
    line=$(grep -m 1 '^e4m3_add sr' "$T/sr")
    R=$(echo "$line" | sed 's/.* R=\([0-9]*\) .*/\1/')
    draw=$(echo "$line" | sed 's/.* draw=\([0-9A-F]*\):.*/\1/')
    ops=$(echo "$line" | sed 's/^[^:]*: \(.*\) => .*/\1/')
    ref=$(echo "$line" | sed 's/.* ref //')
    got=$(bash -c "echo '$ops' | '$BIN' run e4m3_add --round sr --sr-bits $R --sr-draws <(echo $draw)" | sed "s/^$ops //")
    if [ "$got" = "$ref" ]; then ok "sr replay '$ops' R=$R draw=$draw through fpemu run --sr-draws gives ref's '$ref'"; else nok "sr replay: got '$got', ref '$ref'"; fi
    # the hint repeats the case's route: the seed's stream at a counter, or the draw as a caller stream
    hint=$(sed -n 's/^# replay: //p' "$T/sr")
    case $hint in
    "echo '$ops' | fpemu run e4m3_add --round sr --sr-bits $R --seed "[0-9]*" --counter "[0-9]*|\
    "echo '$ops' | fpemu run e4m3_add --round sr --sr-bits $R --sr-draws <(echo $draw)")
        got=$(bash -c "${hint%%fpemu run*}'$BIN' run${hint#*fpemu run}" | sed "s/^$ops //")
        if [ "$got" = "$ref" ]; then ok "sr replay hint runs and gives ref's '$ref' ($hint)"; else nok "sr replay hint gave '$got', ref '$ref' ($hint)"; fi ;;
    *) nok "sr replay hint: $hint" ;;
    esac
else
    ok "# SKIP no bash for the sr replay"; ok "# SKIP no bash"
fi
check_rc 1 "planted fault (a draw for every result, zeros included) is caught" "$BIN" check --format e5m2 --op sub --round sr --exhaustive --inject-bug srdraw --max-print 2 --quiet
if grep -q '^e5m2_sub sr .* draws emu 1 ref 0$' "$T/out"; then ok "the line says which draws were taken"; else nok "srdraw line: $(head -n 2 "$T/out")"; fi

# 3. shards are disjoint and cover the run; threads do not change the answer
total=0 mism=0
for i in 0 1 2; do
    "$BIN" check --format e4m3 --op add --round rne --exhaustive --inject-bug ties --shard $i/3 --max-print 100000 --quiet >"$T/s$i"
    l=$(tail -n 1 "$T/s$i")
    total=$((total + ${l%% cases*}))
    x=${l#* cases, }
    mism=$((mism + ${x% mismatches}))
done
if [ "$total" -eq 65536 ] && [ "$mism" -eq "$m" ]; then ok "3 shards: $total cases, $mism mismatches, as unsharded"; else nok "3 shards: $total cases, $mism mismatches (want 65536, $m)"; fi
"$BIN" check --format e4m3 --op add --round rne --exhaustive --inject-bug ties --max-print 100000 --quiet | grep '^e4m3' >"$T/all"
cat "$T/s0" "$T/s1" "$T/s2" | grep '^e4m3' >"$T/sh"
if cmp -s "$T/all" "$T/sh"; then ok "the shards' lines, in order, are the unsharded lines"; else nok "shard lines differ"; fi
"$BIN" check --format f16,e5m2 --op add,fma --round rne,rup --random 3000 --seed 9 --inject-bug ties --threads 1 --max-print 50 --quiet >"$T/t1"
"$BIN" check --format f16,e5m2 --op add,fma --round rne,rup --random 3000 --seed 9 --inject-bug ties --threads 3 --max-print 50 --quiet >"$T/t3"
if cmp -s "$T/t1" "$T/t3" && [ -s "$T/t1" ]; then ok "--threads 1 and --threads 3 print the same"; else nok "thread count changed the output"; fi
"$BIN" check --format f16 --op add --round rne --random 1000 --seed 10 --inject-bug ties --max-print 50 --quiet >"$T/r10"
if ! cmp -s "$T/t1" "$T/r10"; then ok "another seed, other cases"; else nok "seed ignored"; fi
"$BIN" check --format f16,e4m3 --op add,div --round sr --random 3000 --seed 9 --inject-bug sr --threads 1 --max-print 50 --quiet >"$T/q1"
"$BIN" check --format f16,e4m3 --op add,div --round sr --random 3000 --seed 9 --inject-bug sr --threads 3 --max-print 50 --quiet >"$T/q3"
if cmp -s "$T/q1" "$T/q3" && grep -q ' draw=' "$T/q1"; then ok "sr: --threads 1 and --threads 3 print the same cases and draws"; else nok "sr: thread count changed the output"; fi
check_rc 0 "--list prints the plan" "$BIN" check --format e4m3,f16 --op add,to_f32 --round rne,rtz --exhaustive --list
if grep -q '^e4m3_add rtz 65536$' "$T/out" && grep -q "^f16_add rtz 4294967296$" "$T/out" && grep -q "^f16_to_f32 rne 65536$" "$T/out" && [ "$(tail -n 1 "$T/out")" = "8 jobs, 8590197248 cases" ]; then
    ok "--list: jobs and counts"; else nok "--list output"; fi

# 4. bad usage: exit 2 with a message
check_rc 2 "no --format" "$BIN" check --op add
check_rc 2 "unknown format" "$BIN" check --format e9m9x --op add
if grep -q "e9m9x" "$T/err"; then ok "the message names the bad format"; else nok "message: $(cat "$T/err")"; fi
check_rc 2 "unknown op" "$BIN" check --format f16 --op addd
check_rc 2 "--sr-bits 0" "$BIN" check --format f16 --op add --round sr --sr-bits 0
check_rc 2 "--sr-bits 65" "$BIN" check --format f16 --op add --round sr --sr-bits 65
check_rc 2 "bad shard 3/3" "$BIN" check --format f16 --op add --shard 3/3
check_rc 2 "bad shard x" "$BIN" check --format f16 --op add --shard x
check_rc 2 "--random 0" "$BIN" check --format f16 --op add --random 0
check_rc 2 "two case kinds" "$BIN" check --format f16 --op add --exhaustive --random 5
check_rc 2 "exhaustive f32 add (2^64 pairs)" "$BIN" check --format f32 --op add --exhaustive
if grep -q "2^64" "$T/err"; then ok "the message says why"; else nok "message: $(cat "$T/err")"; fi
check_rc 2 "unknown option" "$BIN" check --format f16 --op add --frobnicate
check_rc 2 "bad --threads" "$BIN" check --format f16 --op add --threads 0
check_rc 0 "--help" "$BIN" check --help

echo "1..$n"
exit $failed
