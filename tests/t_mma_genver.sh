#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_mma_genver.sh: `fpemu mma --gen` and `fpemu mma --verify` (test vectors
# for a matrix unit, docs/tensor-cores.md): determinism, every vector class
# present and doing what it says, D equal to what `fpemu mma` appends, a
# clean verify of every preset and supported format, planted faults caught
# at exactly the right lines, and bad input (exit 2 naming the line).
# Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_mma_genver.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib/tap.sh"

FCLASSES="random cancel align floor overflow random nan-inf zero align subnormal chain random"
ICLASSES="random cancel overflow zero chain random"

# strip FILE: the vector lines without their last field (D)
strip() { grep -v '^#' "$1" | awk '{ $NF = ""; sub(/ $/, ""); print }'; }

# ---- determinism -----------------------------------------------------------
"$BIN" mma --gen 240 --seed 7 --model h100 --a e4m3 >"$TMP/g1" 2>"$TMP/err"; rc1=$?
"$BIN" mma --gen 240 --seed 7 --model h100 --a e4m3 >"$TMP/g2" 2>>"$TMP/err"; rc2=$?
"$BIN" mma --gen 240 --seed 8 --model h100 --a e4m3 >"$TMP/g3" 2>>"$TMP/err"
"$BIN" mma --gen 100 --seed 7 --model h100 --a e4m3 >"$TMP/g4" 2>>"$TMP/err"
if [ "$rc1$rc2" = 00 ] && [ "$(grep -vc '^#' "$TMP/g1")" = 240 ] && cmp -s "$TMP/g1" "$TMP/g2"; then pass "gen: same seed, same file (240 lines)"
else fail "gen: same seed, same file" "exit $rc1 $rc2" "$(head -c 300 "$TMP/err")"; fi
if ! cmp -s <(grep -v '^#' "$TMP/g1") <(grep -v '^#' "$TMP/g3"); then pass "gen: another seed, other lines"
else fail "gen: seeds 7 and 8 gave the same lines"; fi
if cmp -s <(grep -v '^#' "$TMP/g4") <(grep -v '^#' "$TMP/g1" | head -100); then pass "gen: the 100-line file is the first 100 lines of the 240-line one"
else fail "gen: prefix property"; fi

# ---- D is what `fpemu mma` appends ----------------------------------------------
for spec in "h100 --a e4m3" "a100 --a f32" "b200 --a e2m1 --c f16 --d f16" "v100 --a f16" "h100 --a e5m2 --promote 8" \
            "fma-seq --a bf16" "a100 --a s8 --sat" "h100 --a u8 --b s8" "exact --a e4m3fnuz"; do
    "$BIN" mma --gen 120 --seed 3 --model $spec | grep -v '^#' >"$TMP/gen"
    awk '{ $NF = ""; sub(/ $/, ""); print }' "$TMP/gen" | "$BIN" mma --model $spec >"$TMP/run" 2>"$TMP/err"
    if [ -s "$TMP/gen" ] && cmp -s "$TMP/gen" "$TMP/run"; then pass "gen --model $spec: D equals fpemu mma's"
    else fail "gen --model $spec: D differs from fpemu mma's" "$(diff "$TMP/gen" "$TMP/run" | head -4)" "$(head -c 300 "$TMP/err")"; fi
done

# ---- every class appears, and does what it says -----------------------------------
# check_classes FILE CYCLE PRED...: line i's class is CYCLE[i mod len]; each
# PRED "class:awk-condition" must hold on at least one line of its class
check_class() {
    local file=$1 cycle=$2 cls=$3 cond=$4 got
    got=$(grep -v '^#' "$file" | awk -v L="$cycle" -v C="$cls" '
        function hexv(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789ABCDEF", substr(s, i, 1)) - 1; return v }
        function flip(s) { return substr("89ABCDEF01234567", index("0123456789ABCDEF", substr(s, 1, 1)), 1) substr(s, 2) }
        # a product and its negation in one line (x, -x)
        function pairs(   j, k) { for (j = 2; j < NF; j += 2) for (k = j + 2; k < NF; k += 2) if ($k == flip($j) && $(k+1) == $(j+1) && hexv($j) % 32768 != 0) return 1; return 0 }
        # a subnormal 16-bit operand (exponent field 0, mantissa not 0; bf16)
        function subn(   j, v) { for (j = 2; j < NF; j++) { v = hexv($j) % 32768; if (v > 0 && v < 128) return 1 } return 0 }
        BEGIN { n = split(L, c, " ") }
        { i = NR - 1; if (c[i % n + 1] != C) next; seen++; if ('"$cond"') hit++ }
        END { printf "%d %d\n", seen, hit }')
    set -- $got 0 0
    if [ "$1" -gt 0 ] && [ "$2" -gt 0 ]; then pass "class $cls: $1 lines, $2 with the property"
    else fail "class $cls in $file: $1 lines, $2 with the property ($cond)"; fi
}
"$BIN" mma --gen 600 --seed 11 --model h100 --a bf16 >"$TMP/bf" 2>"$TMP/err"
B=16
check_class "$TMP/bf" "$FCLASSES" random "NF == 2 * $B + 2"
check_class "$TMP/bf" "$FCLASSES" cancel "pairs()"
check_class "$TMP/bf" "$FCLASSES" align "NF == 2 * $B + 2"
# every term tiny: D below 2^-100 in magnitude (f32 exponent field < 27)
check_class "$TMP/bf" "$FCLASSES" floor "int(hexv(\$NF) / 8388608) % 256 < 27"
# D = ±inf or ±max
check_class "$TMP/bf" "$FCLASSES" overflow "\$NF ~ /^(7F800000|FF800000|7F7FFFFF|FF7FFFFF)\$/"
check_class "$TMP/bf" "$FCLASSES" nan-inf "\$NF == \"7FFFFFFF\""
check_class "$TMP/bf" "$FCLASSES" zero "\$NF == \"00000000\""
check_class "$TMP/bf" "$FCLASSES" subnormal "subn()"
check_class "$TMP/bf" "$FCLASSES" chain "NF == 2 * 3 * $B + 2"
# IEEE zero signs: an all-zero line with c = -0 gives -0 on a zero_sign=ieee model
"$BIN" mma --gen 600 --seed 11 --model a100 --a f16 >"$TMP/zs" 2>"$TMP/err"
check_class "$TMP/zs" "$FCLASSES" zero "\$NF == \"80000000\""
"$BIN" mma --gen 300 --seed 11 --model a100 --a s8 --sat >"$TMP/int" 2>"$TMP/err"
check_class "$TMP/int" "$ICLASSES" overflow "\$NF == \"7FFFFFFF\" || \$NF == \"80000000\""
check_class "$TMP/int" "$ICLASSES" chain "NF == 2 * 96 + 2"
check_class "$TMP/int" "$ICLASSES" zero "\$NF == \"00000000\""
check_class "$TMP/int" "$ICLASSES" cancel "NF == 2 * 32 + 2"

# ---- verify: clean, planted faults ---------------------------------------------
"$BIN" mma --gen 600 --seed 5 --model a100 --a f16 >"$TMP/a100"
out=$("$BIN" mma --verify --model a100 --a f16 <"$TMP/a100" 2>&1); rc=$?
if [ "$rc" = 0 ] && [ "$out" = "600 lines, 0 mismatches" ]; then pass "verify: a gen file against its own model: $out"
else fail "verify: a gen file against its own model" "exit $rc: $out"; fi

# the same file against v100 (no extra alignment bit, blocks of 4): the expected
# mismatches are the lines where fpemu mma --model v100 gives another D
strip "$TMP/a100" | "$BIN" mma --model v100 --a f16 | awk '{ print $NF }' >"$TMP/v100d"
grep -v '^#' "$TMP/a100" | awk '{ print $NF }' >"$TMP/a100d"
hdr=$(grep -c '^#' "$TMP/a100")
want=$(paste -d' ' "$TMP/a100d" "$TMP/v100d" | awk -v h="$hdr" '$1 != $2 { print NR + h }')
nwant=$(printf '%s\n' "$want" | grep -c .)
"$BIN" mma --verify --max-print 100000 --model v100 --a f16 <"$TMP/a100" >"$TMP/vo" 2>&1; rc=$?
got=$(sed -n 's/^line \([0-9]*\): .*/\1/p' "$TMP/vo")
if [ "$rc" = 1 ] && [ "$nwant" -gt 10 ] && [ "$got" = "$want" ] && [ "$(tail -1 "$TMP/vo")" = "600 lines, $nwant mismatches" ]; then
    pass "verify: a100's file against v100: exactly the $nwant lines where the models differ"
else fail "verify: a100's file against v100" "exit $rc, want $nwant lines" "$(tail -3 "$TMP/vo")"; fi
# each mismatch line replays: the part before => through fpemu mma gives GOT
bad=$(head -5 "$TMP/vo" | while IFS= read -r l; do
    in=${l#line *: }; in=${in% => *}; gotd=${l##* => }; gotd=${gotd%%,*}
    d=$(printf '%s\n' "$in" | "$BIN" mma --model v100 --a f16 | awk '{ print $NF }')
    [ "$d" = "$gotd" ] || echo "$l (replay: $d)"
done)
if [ -z "$bad" ] && [ -n "$want" ]; then pass "verify: mismatch lines replay through fpemu mma"; else fail "verify: replay" "$bad"; fi
# --max-print
"$BIN" mma --verify --max-print 3 --model v100 --a f16 <"$TMP/a100" >"$TMP/vo3"; rc=$?
if [ "$rc" = 1 ] && [ "$(grep -c '^line ' "$TMP/vo3")" = 3 ] && grep -q "($((nwant - 3)) more mismatches not printed" "$TMP/vo3" &&
   [ "$(tail -1 "$TMP/vo3")" = "600 lines, $nwant mismatches" ]; then pass "verify --max-print 3: 3 printed, the count complete"
else fail "verify --max-print 3" "exit $rc" "$(cat "$TMP/vo3")"; fi

# one changed digit of D at file line 40
L=40
awk -v L=$L 'NR == L { d = $NF; c = substr(d, 8, 1); r = (c == "0") ? "1" : "0"; $NF = substr(d, 1, 7) r } { print }' "$TMP/a100" >"$TMP/planted"
orig=$(sed -n "${L}p" "$TMP/a100" | awk '{ print $NF }'); planted=$(sed -n "${L}p" "$TMP/planted" | awk '{ print $NF }')
out=$("$BIN" mma --verify --model a100 --a f16 <"$TMP/planted" 2>&1); rc=$?
if [ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | grep -c '^line ')" = 1 ] &&
   printf '%s\n' "$out" | grep -q "^line $L: .* => $orig, expected $planted\$" && [ "$(printf '%s\n' "$out" | tail -1)" = "600 lines, 1 mismatches" ]; then
    pass "verify: one changed D digit at line $L is the one mismatch"
else fail "verify: planted D at line $L ($orig -> $planted)" "exit $rc" "$out"; fi

# NaN: any NaN matches any NaN unless --exact-nan
"$BIN" mma --gen 120 --seed 2 --model h100 --a f16 >"$TMP/n"
nl=$(awk '!/^#/ && $NF == "7FFFFFFF" { print NR; exit }' "$TMP/n")
sed "${nl}s/7FFFFFFF\$/7FC00000/" "$TMP/n" >"$TMP/n2"
o1=$("$BIN" mma --verify --model h100 --a f16 <"$TMP/n2" 2>&1); r1=$?
o2=$("$BIN" mma --verify --exact-nan --model h100 --a f16 <"$TMP/n2" 2>&1); r2=$?
if [ -n "$nl" ] && [ "$r1" = 0 ] && [ "$r2" = 1 ] && printf '%s\n' "$o2" | grep -q "^line $nl: .* => 7FFFFFFF, expected 7FC00000"; then
    pass "verify: a different NaN passes, and fails under --exact-nan (line $nl)"
else fail "verify: NaN rule (line $nl)" "$r1: $o1" "$r2: $o2"; fi

# ---- bad input -----------------------------------------------------------------
# vbad OPTIONS INPUT PATTERN: exit 2 and a message matching PATTERN
vbad() {
    local opts=$1 in=$2 pat=$3 rc
    printf '%b' "$in" | "$BIN" mma --verify $opts >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$pat" "$TMP/err"; then pass "verify bad input: $(head -c 140 "$TMP/err")"
    else fail "verify $opts bad input '$in'" "exit $rc" "stderr: $(head -c 300 "$TMP/err")" "stdout: $(head -c 200 "$TMP/out")"; fi
}
vbad "--model a100 --a f16" '# c\n3F800000 3C00 3C00 40000000\n3F800000\n' "line 3: 1 field"
vbad "--model a100 --a f16" '3F800000 3C00 3C00 40000000\n3F800000 3C00 3C00 3C00 40000000\n' "line 2: 5 fields: .*odd number of operands"
vbad "--model b200 --a e2m1" '00000000 02 02 3F800000\n00000000 1F 02 3F800000\n' "line 2: field 2 (A0) '1F': out of range for e2m1"
vbad "--model h100 --a e4m3" '00000000 038 38 3F800000\n' "line 1: field 2 (A0) '038': expected at most 2 hex digits"
vbad "--model h100 --a e4m3" '00000000 38 38 3F8G0000\n' "line 1: field 4 (D) '3F8G0000'"
vbad "--model h100 --a e4m3 --c f16 --d f16" '0000 38 38 3F800000\n' "line 1: field 4 (D) '3F800000'"
vbad "--model a100 --a s8" '00000000 80 80 100000000\n' "line 1: field 4 (D)"
vbad "--model a100 --a f16" '' "no vector lines"
vbad "--model a100 --a f16 --seed 3" '' "--seed and --k go with --gen"
out=$("$BIN" mma --gen 5 --verify --model a100 --a f16 2>&1); rc=$?
if [ "$rc" = 2 ] && printf '%s' "$out" | grep -q "exclude"; then pass "--gen with --verify: exit 2"; else fail "--gen with --verify" "$rc $out"; fi
out=$("$BIN" mma --gen 0 --model a100 --a f16 2>&1); rc=$?
if [ "$rc" = 2 ]; then pass "--gen 0: exit 2"; else fail "--gen 0" "$rc $out"; fi

# ---- every preset and supported format: a gen file verifies clean -------------------
presets=$("$BIN" mma --model '?' --a f16 2>&1 | sed -n 's/.*expected one of: \([^)]*\)).*/\1/p' | sed 's/, or .*//' | tr -d ',')
[ -n "$presets" ] || presets="v100 t4 a100 ada h100 b200 exact fma-seq pairwise"
combos=0 badc=""
for m in $presets; do
    for a in f16 bf16 tf32 f32 e4m3 e5m2 e3m2 e2m3 e2m1 e4m3fnuz e5m2fnuz f64 s8 u8; do
        for acc in "" "--c f16 --d f16" "--c f64 --d f64"; do
            opts="--model $m --a $a $acc"
            "$BIN" mma $opts --describe >/dev/null 2>&1 || continue
            combos=$((combos + 1))
            "$BIN" mma --gen 48 --seed $combos $opts >"$TMP/c" 2>"$TMP/err" || { badc="$badc; $opts: gen failed $(head -c 200 "$TMP/err")"; continue; }
            out=$("$BIN" mma --verify $opts <"$TMP/c" 2>&1)
            [ "$out" = "48 lines, 0 mismatches" ] || badc="$badc; $opts: $out"
        done
    done
done
# mixed inputs
for opts in "--model h100 --a e4m3 --b e5m2" "--model b200 --a e2m1 --b e4m3" "--model b200 --a e3m2 --b e2m3 --c f16 --d f16" "--model a100 --a u8 --b s8 --sat"; do
    combos=$((combos + 1))
    "$BIN" mma --gen 48 --seed $combos $opts >"$TMP/c" 2>"$TMP/err" || { badc="$badc; $opts: gen failed"; continue; }
    out=$("$BIN" mma --verify $opts <"$TMP/c" 2>&1)
    [ "$out" = "48 lines, 0 mismatches" ] || badc="$badc; $opts: $out"
done
if [ "$combos" -ge 60 ] && [ -z "$badc" ]; then pass "every preset and supported format ($combos combinations): gen verifies clean"
else fail "preset/format combinations ($combos)" "$badc"; fi

tap_end
