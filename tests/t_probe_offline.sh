#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_probe_offline.sh: the offline probe (`fpemu probe --plan/--answers/--state/
# --save`) through the real binary, with `fpemu mma` as the device that runs
# each round's plan: on every preset and input format it takes, the offline
# probe infers what the online probe (`fpemu probe --model P`) infers, in one
# round; on planted devices no preset describes it infers the planted
# parameters, and the preset file it saves gives the planted device's
# answers bit for bit on random vectors; plans are deterministic; bad
# answers files are refused (exit 2, FILE:LINE). Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu) (make test builds it; make deps installs the tools)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_probe_offline.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib/tap.sh"

KEYS='^(block|nfrac|nfrac_limit|align_round|out_round|out_mant|normalize|subnormals|carry_bits|guard|monotonic|chain|matches|queries|ok|note)='

# offline DIR "PROBE OPTIONS" "DEVICE OPTIONS" [SAVE]: rounds of plan ->
# `fpemu mma DEVICE OPTIONS` -> answers until status=done (at most 20).
# Leaves the last output in DIR/out and the number of rounds in DIR/rounds.
offline() {
    local d=$1 popts=$2 dopts=$3 save=${4:-} r=1 out
    rm -rf "$d"; mkdir -p "$d"
    "$BIN" probe $popts --state "$d/st" >"$d/out" 2>"$d/err" || return 1
    while [ "$r" -le 20 ]; do
        "$BIN" mma $dopts <"$d/st/plan-$r.txt" >"$d/ans-$r.txt" 2>>"$d/err" || return 1
        "$BIN" probe --state "$d/st" --answers "$d/ans-$r.txt" ${save:+--save "$save"} >"$d/out" 2>>"$d/err" || return 1
        if grep -q '^status=done' "$d/out"; then echo "$r" >"$d/rounds"; return 0; fi
        grep -q '^status=plan' "$d/out" || return 1
        r=$((r + 1))
    done
    return 1
}

# ---- every preset and input format: offline == online, in one round --------
presets="v100 t4 a100 ada h100 b200 exact fma-seq pairwise"
for extra in mi250 mi300; do
    "$BIN" mma --model "$extra" --a f16 --describe >/dev/null 2>&1 && presets="$presets $extra"
done
combos=("--a f16" "--a f16 --c f16 --d f16" "--a bf16" "--a tf32" "--a f32" "--a e4m3" "--a e5m2" "--a e4m3 --b e5m2"
        "--a e3m2" "--a e2m3" "--a e2m1" "--a f64 --c f64 --d f64" "--a e4m3fnuz" "--a e5m2fnuz")
# the reference kinds take any format: a few suffice
refcombos=("--a f16" "--a f16 --c f16 --d f16" "--a bf16" "--a e4m3" "--a e2m1" "--a f64 --c f64 --d f64")
ncombo=0
for p in $presets; do
    seen=0
    case $p in exact|fma-seq|pairwise) list=("${refcombos[@]}") ;; *) list=("${combos[@]}") ;; esac
    for f in "${list[@]}"; do
        "$BIN" probe --model "$p" $f >"$TMP/online" 2>/dev/null || continue
        ncombo=$((ncombo + 1))
        grep -E "$KEYS" "$TMP/online" >"$TMP/want"
        # with the preset as the prior (--model P) on its first format only
        priors=(""); [ "$seen" = 0 ] && priors=("" "--model $p")
        seen=1
        for prior in "${priors[@]}"; do
            what="offline probe ${prior:-(formats only)} $f of device $p"
            if ! offline "$TMP/o" "$prior $f" "--model $p $f"; then
                fail "$what: the rounds did not finish" "$(tail -5 "$TMP/o/err")" "$(cat "$TMP/o/out")"; continue
            fi
            grep -E "$KEYS" "$TMP/o/out" >"$TMP/got"
            rounds=$(cat "$TMP/o/rounds")
            # where the result names the device, the model it stands for gives every
            # recorded answer (pairwise probes like exact: with the prior only)
            agrees=1
            if grep -q "^matches=\(.*,\)\?$p\(,.*\)\?$" "$TMP/got" && { [ -n "$prior" ] || [ "$p" != pairwise ]; }; then
                grep -q '^preset_agrees=\([0-9]*\)/\1$' "$TMP/o/out" || agrees=0
            fi
            if cmp -s "$TMP/want" "$TMP/got" && [ "$rounds" = 1 ] && [ "$agrees" = 1 ]; then
                pass "$what: $(grep -E '^(block|nfrac|out_round|matches)=' "$TMP/got" | tr '\n' ' ')in $rounds round, $(grep '^preset_agrees=' "$TMP/o/out" || echo 'no preset')"
            else
                fail "$what" "rounds: $rounds" "$(diff "$TMP/want" "$TMP/got")" "$(grep preset_ "$TMP/o/out")"
            fi
        done
    done
    [ "$seen" = 1 ] || fail "preset $p: no input format probed"
done
[ "$ncombo" -ge 40 ] && pass "$ncombo preset/format combinations compared" || fail "only $ncombo preset/format combinations"

# ---- determinism: the same plans from the same answers, with and without --state
"$BIN" probe --a e4m3 --plan "$TMP/p1a" >/dev/null 2>&1
"$BIN" probe --a e4m3 --plan "$TMP/p1b" >/dev/null 2>&1
dev="--model h100 --a e4m3 --set nfrac=17 --set block=8"
"$BIN" mma $dev <"$TMP/p1a" >"$TMP/a1" 2>/dev/null
"$BIN" probe --a e4m3 --answers "$TMP/a1" --plan "$TMP/p2a" >"$TMP/s2" 2>/dev/null
offline "$TMP/det" "--a e4m3" "$dev"
if cmp -s "$TMP/p1a" "$TMP/p1b" && grep -q '^status=plan' "$TMP/s2" &&
   cmp -s <(grep -v '^#' "$TMP/p2a") <(grep -v '^#' "$TMP/det/st/plan-2.txt") && [ -s "$TMP/p2a" ]; then
    pass "plans are deterministic: round 1 twice, round 2 stateless (--answers) = with --state ($(grep -vc '^#' "$TMP/p2a") lines)"
else
    fail "plans are not deterministic" "$(diff "$TMP/p1a" "$TMP/p1b" | head -5)" "$(cat "$TMP/s2")"
fi

# ---- planted devices no preset describes ----------------------------------------
# random vectors: awk's generator, seeded; codes of every value (NaN, inf and
# subnormals included), k from 0 to 80
randvec() { # FMT-digits: c a b, max codes
    awk -v seed="$1" -v cd="$2" -v ad="$3" -v cm="$4" -v am="$5" -v n="$6" 'BEGIN {
        srand(seed)
        for (l = 0; l < n; l++) {
            k = int(rand() * 81); line = sprintf("%0" cd "X", int(rand() * cm))
            for (i = 0; i < k; i++) line = line sprintf(" %0" ad "X %0" ad "X", int(rand() * am), int(rand() * am))
            print line
        }
    }'
}
# preset_args FILE: the file as --model BASE --a .. --set KEY=VALUE (for a
# build without preset-file loading)
preset_args() {
    awk -F' *= *' '/^#/ || NF < 2 { next }
        $1 == "preset" { m = "--model " $2; next }
        $1 ~ /^[abcd]$/ { f = f " --" $1 " " $2; next }
        { s = s " --set " $1 "=" $2 }
        END { print m f s }' "$1"
}
planted() { # NAME "FORMATS" "SETS" PRIOR "PROBE OPTIONS" RANDOM-ARGS
    local name=$1 fmts=$2 sets=$3 prior=$4 popts=$5 what
    local dev="--model $prior $fmts $sets"
    "$BIN" probe $dev $popts >"$TMP/pl_online" 2>/dev/null
    grep -E "$KEYS" "$TMP/pl_online" >"$TMP/want"
    if ! grep -q '^matches=none$' "$TMP/want"; then fail "planted $name: a preset describes it ($(grep matches "$TMP/want"))"; fi
    for p in "" "--model $prior"; do
        what="planted $name ($dev), probed ${p:-(formats only)} $fmts"
        if ! offline "$TMP/pl" "$p $fmts $popts" "$dev" "$TMP/pl.preset"; then
            fail "$what: the rounds did not finish" "$(tail -5 "$TMP/pl/err")"; continue
        fi
        grep -E "$KEYS" "$TMP/pl/out" >"$TMP/got"
        if cmp -s "$TMP/want" "$TMP/got" && grep -q '^preset_agrees=\([0-9]*\)/\1$' "$TMP/pl/out"; then
            pass "$what: $(grep -E '^(block|nfrac|align_round|out_round|out_mant|subnormals)=' "$TMP/got" | tr '\n' ' ')in $(cat "$TMP/pl/rounds") rounds, $(grep preset_agrees "$TMP/pl/out")"
        else
            fail "$what" "$(diff "$TMP/want" "$TMP/got")" "$(grep preset_ "$TMP/pl/out")"
        fi
    done
    # the preset saved with the prior as base (whose unprobed keys - NaN
    # pattern, zero signs, overflow, emax floor - the device shares) gives
    # the planted device's answers on random vectors
    shift 5
    randvec "$@" >"$TMP/rv"
    "$BIN" mma $dev <"$TMP/rv" >"$TMP/rv_dev" 2>"$TMP/err"
    local via="--model FILE"
    if ! "$BIN" mma --model "$TMP/pl.preset" $fmts <"$TMP/rv" >"$TMP/rv_file" 2>"$TMP/err2"; then
        via="$(preset_args "$TMP/pl.preset") (this build loads no preset file: $(head -c 100 "$TMP/err2"))"
        "$BIN" mma $(preset_args "$TMP/pl.preset") <"$TMP/rv" >"$TMP/rv_file" 2>"$TMP/err2"
    fi
    if [ -s "$TMP/rv_dev" ] && cmp -s "$TMP/rv_dev" "$TMP/rv_file"; then
        pass "planted $name: the saved preset ($via) gives the device's answers on $(wc -l <"$TMP/rv") random vectors"
    else
        fail "planted $name: the saved preset differs from the device" "via $via" "$(diff "$TMP/rv_dev" "$TMP/rv_file" | head -6)" \
            "$(cat "$TMP/err" "$TMP/err2")" "$(cat "$TMP/pl.preset")"
    fi
}
planted "fp8 nfrac 17 block 8" "--a e4m3" "--set nfrac=17 --set block=8" h100 "" 1 8 2 4294967296 256 300
planted "f16 rd alignment, rne output, block 2, nfrac 30" "--a f16" "--set nfrac=30 --set block=2 --set align=rd --set out_round=rne" a100 "" 2 8 4 4294967296 65536 300
# block 64: seen only by vectors longer than 64 (--kmax 128; the random vectors reach k = 80)
planted "bf16 out_mant 19, nfrac 21, flushed subnormals, block 64" "--a bf16" "--set out_mant=19 --set nfrac=21 --set block=64 --set subnormals=flush" ada "--kmax 128" 3 8 4 4294967296 65536 300
planted "e5m2 x e4m3 into f16, block 4, nfrac 12, rna" "--a e5m2 --b e4m3 --c f16 --d f16" "--set block=4 --set nfrac=12 --set out_round=rna" h100 "" 4 4 2 65536 256 300

# ---- partial answers: the missing lines are asked again --------------------------
"$BIN" probe --a f16 --plan "$TMP/q1" >/dev/null 2>&1
"$BIN" mma --model a100 --a f16 <"$TMP/q1" | head -n 100 >"$TMP/qa1"
"$BIN" probe --a f16 --answers "$TMP/qa1" --plan "$TMP/q2" >"$TMP/qs" 2>/dev/null
"$BIN" mma --model a100 --a f16 <"$TMP/q2" >"$TMP/qa2"
"$BIN" probe --a f16 --answers "$TMP/qa1" --answers "$TMP/qa2" >"$TMP/qs2" 2>/dev/null
"$BIN" probe --model a100 --a f16 2>/dev/null | grep -E "$KEYS" >"$TMP/want"
if grep -q '^status=plan' "$TMP/qs" && grep -q '^status=done' "$TMP/qs2" && cmp -s "$TMP/want" <(grep -E "$KEYS" "$TMP/qs2"); then
    pass "a device that answered 100 lines of the plan: the rest asked in round 2, then the online result"
else
    fail "partial answers" "$(cat "$TMP/qs" "$TMP/qs2")"
fi

# ---- bad input: exit 2, the file and line named ------------------------------------
bad() { # DESC PATTERN ARGS...
    local desc=$1 pat=$2 rc; shift 2
    "$BIN" probe "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$pat" "$TMP/err"; then pass "$desc: $(head -c 150 "$TMP/err")"
    else fail "$desc" "exit $rc" "stderr: $(head -c 300 "$TMP/err")"; fi
}
printf '3F800000 3C00 3C00 40000000\n3F80000G 3C00 3C00 40000000\n' >"$TMP/b1"
bad "a malformed answer" "b1:2: field 1" --a f16 --answers "$TMP/b1" --plan "$TMP/x"
bad "the plan given as answers" "q1:3: .*without its answer D" --a f16 --answers "$TMP/q1" --plan "$TMP/x"
printf '3F800000 3C00 3C00 40000000\n3F800000 3C00 3C00 40000001\n' >"$TMP/b2"
bad "two answers to one question" "b2:2: D = 40000001, but .*b2:1" --a f16 --answers "$TMP/b2" --plan "$TMP/x"
printf '3F800000 3C00 3C00 1FFFFFFFF\n' >"$TMP/b3"
bad "a D out of the format's range" "b3:1: field 4 (D)" --a f16 --answers "$TMP/b3" --plan "$TMP/x"
bad "a missing answers file" "nonexistent: cannot read" --a f16 --answers "$TMP/nonexistent" --plan "$TMP/x"
"$BIN" probe --a f16 --state "$TMP/st2" >/dev/null 2>&1
bad "--state with other options" "st2/options: this probe was started with '--a f16'" --a bf16 --state "$TMP/st2"
bad "answers not covering the probe, no --plan" "give --plan FILE" --a f16 --answers "$TMP/qa1"
[ ! -e "$TMP/st2/answers-1.txt" ] && "$BIN" probe --state "$TMP/st2" --answers "$TMP/b2" >/dev/null 2>&1
if [ ! -e "$TMP/st2/answers-1.txt" ]; then pass "refused answers do not join the state folder"
else fail "refused answers joined the state folder"; fi

tap_end
