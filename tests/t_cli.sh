#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_cli.sh: `fpemu formats`, `fpemu run` and `fpemu verify` through the real
# binary ($FPEMU_BIN, exported by the Makefile): known vector lines, option
# spellings, every kind of bad input (exit 2, message naming the line), and
# verify against Berkeley TestFloat's vectors in tests/data/testfloat (a
# missing file fails). Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu) (make test builds it; make deps installs the tools)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_cli.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

. "$HERE/lib/tap.sh"

# run_is OP INPUT EXPECTED [OPTIONS...]: `fpemu run` prints exactly EXPECTED, exit 0.
run_is() {
    local op=$1 in=$2 want=$3; shift 3
    local got rc
    got=$(printf '%s\n' "$in" | "$BIN" run "$op" "$@" 2>"$TMP/err"); rc=$?
    if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then pass "run $op $* : $in -> ${want##*$'\n'}"
    else fail "run $op $* : $in" "got (exit $rc): $(echo $got)" "expected: $(echo $want)" "stderr: $(head -c 300 "$TMP/err")"; fi
}

# bad SUB OP INPUT LINE [OPTIONS...]: exit 2, one message naming line LINE.
bad() {
    local sub=$1 op=$2 in=$3 line=$4; shift 4
    local rc
    printf '%b' "$in" | "$BIN" "$sub" "$op" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" = 2 ] && grep -q "line $line:" "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ]; then
        pass "$sub $op bad input at line $line: $(head -c 150 "$TMP/err")"
    else fail "$sub $op bad input at line $line" "exit $rc" "stderr: $(head -c 300 "$TMP/err")"; fi
}

# bad_usage SUB ARGS...: exit 2 with a message, nothing on stdout.
bad_usage() {
    local rc
    "$BIN" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" = 2 ] && [ -s "$TMP/err" ] && [ ! -s "$TMP/out" ]; then pass "fpemu $* -> exit 2: $(head -1 "$TMP/err" | head -c 150)"
    else fail "fpemu $* -> exit 2" "exit $rc" "stderr: $(head -c 300 "$TMP/err")"; fi
}

# ---- run: known lines -------------------------------------------------------
run_is f16_add "3C00 3C00" "3C00 3C00 4000 00"
run_is f16_add "3c00 3c00" "3C00 3C00 4000 00"                  # lower case in, upper case out
run_is f16_add "3C00 3C00 1234 1F" "3C00 3C00 4000 00"          # a complete line is recomputed
run_is f16_sub "3C00 3C00" "3C00 3C00 0000 00"
run_is f16_sub "3C00 3C00" "3C00 3C00 8000 00" --round rdn      # x - x = -0 under rdn
run_is f16_mul "7BFF 4000" "7BFF 4000 7C00 05"                  # overflow -> inf
run_is f16_div "3C00 0000" "3C00 0000 7C00 08"                  # divide by zero
run_is f16_div "0000 0000" "0000 0000 7E00 10"                  # 0/0 invalid, canonical NaN
run_is f16_sqrt "BC00" "BC00 7E00 10"
run_is f16_sqrt "BC00" "BC00 FE00 10" --nan x86                 # x86 default NaN is negative
run_is f16_sqrt "4400" "4400 4000 00"
run_is f16_mulAdd "3C00 3C00 3C00" "3C00 3C00 3C00 4000 00"
run_is f16_fma "0000 7C00 7E00" "0000 7C00 7E00 7E00 10"        # fma(0, inf, qNaN) is invalid
run_is fp16_add "3C00 3C00" "3C00 3C00 4000 00"                 # alias
run_is f32_add "3F800000 3F800000" "3F800000 3F800000 40000000 00"
run_is f64_mul "3FF0000000000000 4000000000000000" "3FF0000000000000 4000000000000000 4000000000000000 00"
run_is f32_to_f16 "387FF000" "387FF000 0400 01"                 # rounds up to min normal: not tiny after
run_is f32_to_f16 "387FF000" "387FF000 0400 03" --tininess before
run_is f32_to_f16 "387FF000" "387FF000 0400 03" -tininessbefore
run_is f32_to_f16 "387FF000" "387FF000 0400 01" --tininessafter
run_is f16_to_f32 "7BFF" "7BFF 477FE000 00"
run_is f16_mul "0400 3800" "0400 3800 0200 00"                  # exact subnormal: no flags
run_is f16_mul "0400 3400" "0400 3400 0100 00"
run_is f16_mul "0401 3800" "0401 3800 0200 03"                  # inexact subnormal: underflow
run_is f16_mul "0401 3800" "0401 3800 0000 03" --ftz
run_is f16_add "0001 0000" "0001 0000 0001 00"
run_is f16_add "0001 0000" "0001 0000 0000 00" --daz
# e4m3 (OCP 8-bit FP spec rev 1.0; docs/semantics.md): 464 ties to 448; 480 overflows to NaN, or 448 with --sat
run_is f32_to_e4m3 "43E80000" "43E80000 7E 01"
run_is f32_to_e4m3 "43F00000" "43F00000 7F 05"
run_is f32_to_e4m3 "43F00000" "43F00000 7E 05" --sat
run_is f32_to_e4m3 "7F800000" "7F800000 7F 10"                  # exact inf -> NaN, invalid
run_is f32_to_e4m3 "7F800000" "7F800000 7E 05" --sat
run_is f32_to_e4m3 "3A800000" "3A800000 00 03"                  # 2^-10 -> 0
run_is f32_to_e4m3 "3F800000" "3F800000 38 00"
run_is float8_e4m3fn_to_f32 "7E" "7E 43E00000 00"
run_is e4m3_add "7E 7E" "7E 7E 7F 05"
run_is e4m3_add "7E 7E" "7E 7E 7E 05" --satfinite
run_is e5m2_add "7B 7B" "7B 7B 7C 05"                           # e5m2 has inf
run_is e4m3_mul "38 38" "38 38 38 00"
# e2m1 (fp4): 1.0 = 02, 6.0 = 07 (max), no inf or NaN: always saturates
run_is f32_to_e2m1 "3F800000" "3F800000 02 00"
run_is f32_to_e2m1 "40C00000" "40C00000 07 00"
run_is f32_to_e2m1 "40E00000" "40E00000 07 05"                  # 7 ties up past max: overflow
run_is f32_to_e2m1 "7F800000" "7F800000 07 05"
run_is f32_to_e2m1 "FF800000" "FF800000 0F 05"
run_is f32_to_e2m1 "7FC00000" "7FC00000 07 10"                  # NaN -> +max, invalid
run_is f32_to_e2m1 "3E800000" "3E800000 00 03"                  # 0.25 ties to 0
run_is f32_to_e2m1 "3F400000" "3F400000 02 03"                  # 0.75 ties to 1.0; tiny after rounding
run_is e2m1_to_f32 "01" "01 3F000000 00"
run_is e2m1_to_f32 "0F" "0F C0C00000 00"
run_is e2m1_to_f32 "08" "08 80000000 00"
run_is e2m1_add "07 07" "07 07 07 05"
# bf16
run_is f32_to_bf16 "3F808000" "3F808000 3F80 01"                # tie to even
run_is f32_to_bf16 "3F818000" "3F818000 3F82 01"
run_is f32_to_bf16 "3F808000" "3F808000 3F81 01" --round rna
run_is bf16_add "3F80 3F80" "3F80 3F80 4000 00"
run_is bf16_mul "7F7F 4000" "7F7F 4000 7F80 05"
run_is bf16_mul "7F7F 4000" "7F7F 4000 7F7F 05" --round rtz
run_is bfloat16_to_f32 "3F80" "3F80 3F800000 00"

# ---- rounding option spellings -------------------------------------------------
for m in "--round rne" "--round=rne" "-rnear_even" "--rnear_even" "--round near_even"; do
    run_is f16_add "3C00 0001" "3C00 0001 3C00 01" $m; done
for m in "--round rup" "-rmax" "--rmax"; do run_is f16_add "3C00 0001" "3C00 0001 3C01 01" $m; done
for m in "--round rdn" "-rmin" "--rmin"; do run_is f16_add "BC00 8001" "BC00 8001 BC01 01" $m; done
for m in "--round rtz" "-rminMag" "--rminMag"; do run_is f16_add "BC00 8001" "BC00 8001 BC00 01" $m; done
for m in "--round rna" "-rnear_maxMag"; do run_is f16_add "3C00 1000" "3C00 1000 3C01 01" $m; done
run_is f16_add "3C00 1000" "3C00 1000 3C00 01"                   # the same tie under rne
for m in "--round rto" "-rodd"; do run_is f16_add "3C00 0001" "3C00 0001 3C01 01" $m; done

# ---- comparisons and min/max -------------------------------------------------
run_is f16_eq "3C00 3C00" "3C00 3C00 1 00"
run_is f16_eq "0000 8000" "0000 8000 1 00"
run_is f16_lt "3C00 4000" "3C00 4000 1 00"
run_is f16_le "4000 3C00" "4000 3C00 0 00"
run_is f16_eq "7E00 3C00" "7E00 3C00 0 00"                      # quiet
run_is f16_lt "7E00 3C00" "7E00 3C00 0 10"                      # signaling
run_is f16_lt_quiet "7E00 3C00" "7E00 3C00 0 00"
run_is f16_eq_signaling "7E00 3C00" "7E00 3C00 0 10"
run_is f16_eq "7D00 3C00" "7D00 3C00 0 10"                      # sNaN signals even when quiet
run_is f16_min "3C00 4000" "3C00 4000 3C00 00"
run_is f16_max "8000 0000" "8000 0000 0000 00"

# ---- stochastic rounding: reproducible, and both neighbours occur ---------------
for i in $(seq 1 200); do echo "3C00 1000"; done >"$TMP/sr.in"   # 1 + ulp/2: up with probability 1/2
"$BIN" run f16_add --round sr --seed 7 <"$TMP/sr.in" >"$TMP/sr1"
"$BIN" run f16_add --round sr --seed 7 <"$TMP/sr.in" >"$TMP/sr2"
"$BIN" run f16_add --round sr --seed 8 <"$TMP/sr.in" >"$TMP/sr3"
if cmp -s "$TMP/sr1" "$TMP/sr2"; then pass "sr: same seed, same lines"; else fail "sr: same seed, same lines"; fi
if ! cmp -s "$TMP/sr1" "$TMP/sr3"; then pass "sr: another seed, other lines"; else fail "sr: another seed, other lines"; fi
if [ "$(cut -d' ' -f3 "$TMP/sr1" | sort -u | tr '\n' ' ')" = "3C00 3C01 " ]; then pass "sr: results are the two neighbours"
else fail "sr: results are the two neighbours" "got: $(cut -d' ' -f3 "$TMP/sr1" | sort | uniq -c | tr '\n' ' ')"; fi
if "$BIN" verify f16_add --round sr --seed 7 <"$TMP/sr1" >/dev/null; then pass "sr: verify replays run's lines"; else fail "sr: verify replays run's lines"; fi

# --sr-draws: the caller's random bits, vector line i takes line i's draw.
# f16 1 + 2^-24 is 2^-14 of an ulp above 1: up iff the draw < 2^50.
printf '0\nFFFFFFFFFFFFFFFF\n# a comment\n\n3ffffffffffff\n4000000000000\n5\n' >"$TMP/draws"
# draws_is NAME EXPECTED_RESULTS OPTIONS...: the four lines 1 + 2^-24 and
# one 0 + 0 (it takes no draw; its draw goes unused) give these results.
draws_is() {
    local name=$1 want=$2; shift 2
    local got
    got=$(printf '3C00 0001\n3C00 0001\n3C00 0001\n3C00 0001\n0000 0000\n' | "$BIN" run f16_add "$@" 2>"$TMP/err" | cut -d' ' -f3 | tr '\n' ' ')
    if [ "$got" = "$want" ]; then pass "--sr-draws: $name: $want"; else fail "--sr-draws: $name" "got: $got" "expected: $want" "stderr: $(head -c 300 "$TMP/err")"; fi
}
draws_is "draws 0, all ones, 2^50 - 1, 2^50" "3C01 3C00 3C01 3C00 0000 " --round sr --sr-draws "$TMP/draws"
# with R = 8 only the draw's top byte decides: 0x00 < ceil(2^50 / 2^56)
draws_is "the same with --sr-bits 8" "3C01 3C00 3C01 3C01 0000 " --round sr --sr-bits 8 --sr-draws "$TMP/draws"
printf '3C00 0001\n3C00 0001\n' | "$BIN" run f16_add --round sr --sr-draws "$TMP/draws" >"$TMP/sd1"
sed '1s/3C01 01/3C00 01/' "$TMP/sd1" >"$TMP/sd2"
if "$BIN" verify f16_add --round sr --sr-draws "$TMP/draws" <"$TMP/sd1" >/dev/null; then pass "--sr-draws: verify replays run's lines"
else fail "--sr-draws: verify replays run's lines"; fi
"$BIN" verify f16_add --round sr --sr-draws "$TMP/draws" <"$TMP/sd2" >"$TMP/out"; rc=$?
if [ "$rc" = 1 ] && grep -q "^line 1: " "$TMP/out"; then pass "--sr-draws: verify fails a line whose draw says otherwise"
else fail "--sr-draws: verify fails a changed line" "exit $rc: $(head -2 "$TMP/out")"; fi
printf '0\n' >"$TMP/draws1"; printf '0\nxyz\n' >"$TMP/draws2"; printf '00000000000000000\n' >"$TMP/draws3"
bad run f16_add '3C00 0001\n3C00 0001\n' 2 --round sr --sr-draws "$TMP/draws1"
bad run f16_add '3C00 0001\n3C00 0001\n' 2 --round sr --sr-draws "$TMP/draws2"
bad verify f16_add '3C00 0001 3C01 01\n' 1 --round sr --sr-draws "$TMP/draws3"
bad_usage run f16_add --sr-draws "$TMP/draws"
bad_usage run f16_add --round sr --seed 3 --sr-draws "$TMP/draws"
bad_usage run f16_add --round sr --sr-draws "$TMP/no-such-file"
bad_usage run f16_add --round sr --sr-draws
# --counter C: the first line's draw is fpemu_random64(seed, C); each line
# here takes one, so line k of a run from counter 0 is line 1 from counter k - 1
printf '3C00 0001\n3C00 0003\n3C00 0005\n3C00 0007\n' >"$TMP/cin"
"$BIN" run f16_add --round sr --sr-bits 1 --seed 77 <"$TMP/cin" >"$TMP/c0"
ok_counter=1
for k in 1 2 3; do
    sed -n "$((k + 1))p" "$TMP/cin" | "$BIN" run f16_add --round sr --sr-bits 1 --seed 77 --counter $k >"$TMP/ck"
    [ "$(cat "$TMP/ck")" = "$(sed -n "$((k + 1))p" "$TMP/c0")" ] || ok_counter=0
done
# and a run from counter 0 differs somewhere from one started at 0x10 (hex accepted)
"$BIN" run f16_add --round sr --sr-bits 1 --seed 77 --counter 0x10 <"$TMP/cin" >"$TMP/c16"
if [ "$ok_counter" = 1 ] && ! cmp -s "$TMP/c0" "$TMP/c16"; then pass "--counter: the first line draws at counter C"
else fail "--counter" "$(cat "$TMP/c0" "$TMP/c16")"; fi
# lines that take no draw (0 + 0, inf + 1, NaN) and comments do not shift
# later lines: line i (from 0, comments not counted) draws at counter C + i
printf '0000 0000\n# comment\n7C00 3C00\n3C00 0001\n7E00 3C00\n3C00 0003\n' >"$TMP/cz"
ok_lines=1
for seed in 2 3 6 7 9 10; do
    "$BIN" run f16_add --round sr --sr-bits 1 --seed $seed --counter 5 <"$TMP/cz" >"$TMP/czo"
    a=$(echo '3C00 0001' | "$BIN" run f16_add --round sr --sr-bits 1 --seed $seed --counter 7)
    b=$(echo '3C00 0003' | "$BIN" run f16_add --round sr --sr-bits 1 --seed $seed --counter 9)
    [ "$(sed -n 3p "$TMP/czo")" = "$a" ] && [ "$(sed -n 5p "$TMP/czo")" = "$b" ] || ok_lines=0
    "$BIN" verify f16_add --round sr --sr-bits 1 --seed $seed --counter 5 <"$TMP/czo" >/dev/null || ok_lines=0
done
if [ "$ok_lines" = 1 ]; then pass "--counter C + i replays line i alone, after lines that take no draw (run and verify)"
else fail "--counter C + i replays line i" "$(cat "$TMP/czo")"; fi
bad_usage run f16_add --round sr --counter 3 --sr-draws "$TMP/draws"
bad_usage run f16_add --round sr --counter -1
bad_usage run f16_add --round sr --counter x

# ---- verify ------------------------------------------------------------------------
printf '3C00 3C00 4000 00\n# a comment\n\n3C00 0001 3C00 01\n' >"$TMP/good"
out=$("$BIN" verify f16_add <"$TMP/good"); rc=$?
if [ "$rc" = 0 ] && [ "$out" = "2 lines, 0 mismatches" ]; then pass "verify: good lines, comments and blank lines"
else fail "verify: good lines" "exit $rc: $out"; fi
printf '3C00 3C00 4000 00\n3C00 0001 3C01 01\n3C00 0001 3C00 00\n' >"$TMP/badv"
out=$("$BIN" verify f16_add <"$TMP/badv"); rc=$?
want=$'line 2: 3C00 0001 => 3C00 01, expected 3C01 01\nline 3: 3C00 0001 => 3C00 01, expected 3C00 00\n3 lines, 2 mismatches'
if [ "$rc" = 1 ] && [ "$out" = "$want" ]; then pass "verify: a changed result and a changed flag are reported, exit 1"
else fail "verify: mismatches" "exit $rc: $(echo $out)"; fi
out=$("$BIN" verify f16_add --max-print 1 <"$TMP/badv"); rc=$?
if [ "$rc" = 1 ] && [ "$(grep -c '^line ' <<<"$out")" = 1 ] && grep -q "1 more" <<<"$out" && grep -q "^3 lines, 2 mismatches$" <<<"$out"
then pass "verify --max-print 1 caps the report"; else fail "verify --max-print 1" "exit $rc: $(echo $out)"; fi
printf '0000 0000 7E01 10\n0000 0000 FE00 10\n' >"$TMP/nan"
if "$BIN" verify f16_div <"$TMP/nan" >/dev/null; then pass "verify: any NaN matches any NaN"; else fail "verify: any NaN matches any NaN"; fi
"$BIN" verify f16_div --exact-nan <"$TMP/nan" >"$TMP/out"; rc=$?
if [ "$rc" = 1 ] && grep -q "^2 lines, 2 mismatches$" "$TMP/out"; then pass "verify --exact-nan compares NaN bits"
else fail "verify --exact-nan" "exit $rc: $(cat "$TMP/out")"; fi
printf '3C00 3C00 1 00\n3C00 4000 0 00\n3C00 4000 1 00\n' >"$TMP/eq"
"$BIN" verify f16_eq <"$TMP/eq" >"$TMP/out"; rc=$?
if [ "$rc" = 1 ] && [ "$(cat "$TMP/out")" = $'line 3: 3C00 4000 => 0 00, expected 1 00\n3 lines, 1 mismatches' ]
then pass "verify f16_eq: one-digit results"; else fail "verify f16_eq" "exit $rc: $(cat "$TMP/out")"; fi

# ---- bad input: exit 2, one message naming the line --------------------------------
bad run f16_add '3C00 3C0G\n' 1
bad run f16_add '3C00 3C00\n3C00\n' 2                          # short line
bad run f16_add '3C00 3C00\n3C00 13C00\n' 2                    # over-wide operand
bad run f16_add '3C00 3C00\n3C00 C00\n' 2                      # narrow operand
bad run f16_add '3C00 3C00 4000\n' 1                           # result without flags
bad run f16_add '3C00 3C00 4000 00 00\n' 1                     # too many fields
bad run f16_add '3C00 3C00 4000 20\n' 1                        # flags out of range
bad run f16_add '3C00 3C00\n\x00\x01\xff\xfe\n' 2              # garbage bytes
bad run f16_add '3C00 3C00\n3C\x0000 3C00\n' 2                 # a NUL inside a field
bad run f16_add '3C00,3C00\n' 1
bad run e2m1_add '01 1F\n' 1                                    # 1F is not a 4-bit code
bad run f32_to_f16 '3F800000 3C0\n' 1
bad verify f16_add '3C00 3C00 4000 00\n3C00 3C00\n' 2          # verify needs complete lines
bad verify f16_add '3C00 3C00 4000 0\n' 1
bad verify f16_eq '3C00 3C00 2 00\n' 1
head -c 100000 /dev/zero | tr '\0' '3' >"$TMP/long"; printf '\n' >>"$TMP/long"
bad run f16_add "3C00 3C00\n$(cat "$TMP/long")" 2              # over-long line
"$BIN" verify f16_add </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ "$rc" = 2 ] && grep -q "no vector lines" "$TMP/err"; then pass "verify: empty input is an error"; else fail "verify: empty input" "exit $rc: $(cat "$TMP/err")"; fi
printf '' | "$BIN" run f16_add >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ "$rc" = 0 ] && [ ! -s "$TMP/out" ]; then pass "run: empty input, empty output"; else fail "run: empty input" "exit $rc"; fi
bad_usage run f17_add
bad_usage run f16_foo
bad_usage run f16_to_f99
bad_usage run f16_add --round nearest
bad_usage run f16_add --tininess sometimes
bad_usage run f16_add --nan quiet
bad_usage run f16_add --seed -1
bad_usage run f16_add --sr-bits 65
bad_usage run f16_add --frobnicate
bad_usage run
bad_usage run f16_add f16_mul
bad_usage verify f16_add --max-print many

# ---- formats --------------------------------------------------------------------
"$BIN" formats >"$TMP/fmt" 2>&1; rc=$?
missing=""
for f in f64 f32 tf32 f16 bf16 e5m2 e4m3 e4m3fnuz e5m2fnuz e3m2 e2m3 e2m1 e8m0; do
    grep -q "^$f " "$TMP/fmt" || missing="$missing $f"; done
if [ "$rc" = 0 ] && [ -z "$missing" ]; then pass "formats lists every docs/formats.md format"; else fail "formats table" "exit $rc, missing:$missing"; fi
row=$(grep '^e4m3 ' "$TMP/fmt" | tr -s ' ')
if [[ "$row" == "e4m3 8 4 3 7 448 2^-6 2^-9 none 7F FF yes"* ]]; then pass "formats: e4m3 row"; else fail "formats: e4m3 row" "got: $row"; fi
row=$(grep '^f16 ' "$TMP/fmt" | tr -s ' ')
if [[ "$row" == "f16 16 5 10 15 65504 2^-14 2^-24 7C00 FC00 7C01-7FFF FC01-FFFF yes"* ]]; then pass "formats: f16 row"; else fail "formats: f16 row" "got: $row"; fi
"$BIN" formats --csv >"$TMP/csv"; rc=$?
rows=$(awk 'NR > 1 && /^$/ { exit } NR > 1 { n++ } END { print n + 0 }' "$TMP/fmt")
if [ "$rc" = 0 ] && [ "$(($(wc -l <"$TMP/csv") - 1))" = "$rows" ] \
    && grep -q '^e5m2,8,8,2,5,2,15,3,57344,6.103515625e-05,1.52587890625e-05,7C FC,' "$TMP/csv"
then pass "formats --csv: one row per format, exact values"; else fail "formats --csv" "exit $rc" "$(grep '^e5m2,' "$TMP/csv")"; fi
"$BIN" formats e4m3 >"$TMP/one"; rc=$?
if [ "$rc" = 0 ] && grep -Eq "max finite +7E += 448$" "$TMP/one" && grep -Eq "^ +1\.0 +38 += 1$" "$TMP/one" \
    && grep -Eq "min subnormal +01 " "$TMP/one" && grep -Eq "canonical NaN +7F " "$TMP/one"
then pass "formats e4m3: details and example encodings"; else fail "formats e4m3" "exit $rc" "$(cat "$TMP/one")"; fi
"$BIN" formats float8_e4m3fn >"$TMP/one2"; rc=$?
if [ "$rc" = 0 ] && cmp -s "$TMP/one" "$TMP/one2"; then pass "formats: alias float8_e4m3fn shows e4m3"; else fail "formats alias" "exit $rc"; fi
"$BIN" formats bf16 >"$TMP/one"
if grep -Eq "^ +1\.0 +3F80 " "$TMP/one" && grep -Eq "canonical NaN +7FC0 " "$TMP/one" && grep -Eq "max finite +7F7F " "$TMP/one"
then pass "formats bf16"; else fail "formats bf16" "$(cat "$TMP/one")"; fi
"$BIN" formats e2m1 >"$TMP/one"
if grep -Eq "max finite +07 += 6$" "$TMP/one" && grep -Eq "min subnormal +01 += 0.5$" "$TMP/one" && grep -q "canonical NaN *none" "$TMP/one"
then pass "formats e2m1"; else fail "formats e2m1" "$(cat "$TMP/one")"; fi
"$BIN" formats e6m1 >"$TMP/one"; rc=$?
if [ "$rc" = 0 ] && grep -q "custom" "$TMP/one" && grep -q "e=6 exponent bits, m=1 mantissa bits" "$TMP/one"
then pass "formats e6m1 (custom spec)"; else fail "formats e6m1" "exit $rc" "$(head -3 "$TMP/one")"; fi
"$BIN" formats nosuchfmt >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ "$rc" = 2 ] && grep -q "nosuchfmt" "$TMP/err" && grep -q "bf16" "$TMP/err" && grep -q "e4m3" "$TMP/err"
then pass "formats: unknown name -> exit 2, names it and lists valid names"; else fail "formats unknown" "exit $rc: $(cat "$TMP/err")"; fi
if "$BIN" formats --help | grep -q "usage: fpemu formats"; then pass "formats --help"; else fail "formats --help"; fi
"$BIN" formats --md >"$TMP/md"; "$BIN" formats --html >"$TMP/html"
if grep -q '^| `e4m3` | 8 | 4 | 3 | 7 | 448 |' "$TMP/md" && grep -q '<td><code>e4m3</code></td><td>8</td>' "$TMP/html"
then pass "formats --md / --html"; else fail "formats --md / --html"; fi
# error curve: e4m3's relative error stays below 2^-4 from min normal to max,
# reaches 1 below half the min subnormal, and overflow is marked above 464.
"$BIN" formats --error-curve e4m3 --points 2000 >"$TMP/curve"; rc=$?
chk=$(awk '!/^#/ { n++; x=$1;
    if (x >= 0.015625 && x <= 448 && $2 != "NaN" && $2 > 0.0625) bad++;
    if (x < 0.0009765625 && $2 != 1) bad++;
    if (x > 464.01 && $3 != 1) bad++;
    if (x < 464 && $3 == 1) bad++;
    if (x > 464.01 && ($4 - (x - 448) / x > 1e-6 || $4 - (x - 448) / x < -1e-6)) bad++ }
    END { print n + 0, bad + 0 }' "$TMP/curve")
if [ "$rc" = 0 ] && [ "$chk" = "2000 0" ]; then pass "formats --error-curve e4m3: bounds, underflow, overflow, saturation"
else fail "formats --error-curve e4m3" "exit $rc, points and violations: $chk"; fi

# ---- Berkeley TestFloat vectors (tests/data/testfloat) ---------------------------------
TF=${FPEMU_TESTFLOAT:-$ROOT/tests/data/testfloat}
for base in f16_add_rnear_even f16_add_rminMag f16_mul_rnear_even f16_mul_rminMag f16_div_rnear_even \
    f16_div_rminMag f16_sqrt_rnear_even f16_sqrt_rminMag f32_to_f16_rnear_even f32_to_bf16_rnear_even; do
    f=$TF/${base}_L1.txt.gz
    op=${base%_r*}; mode=-r${base##*_r}
    if [ ! -f "$f" ]; then fail "TestFloat $base: $f is missing (the vectors ship in tests/data/testfloat)"; continue; fi
    out=$(gzip -dc "$f" | "$BIN" verify "$op" "$mode" 2>&1); rc=$?
    if [ "$rc" = 0 ]; then pass "TestFloat $base: $(tail -1 <<<"$out")"
    else fail "TestFloat $base (fpemu verify $op $mode)" "exit $rc" "$(head -5 <<<"$out")"; fi
done
f=$TF/f16_add_rnear_even_L1.txt.gz
if [ -f "$f" ]; then
    gzip -dc "$f" >"$TMP/tf"
    # A copy with one changed result (line 3), and one with one changed flag (line 5).
    awk 'NR == 3 { $3 = ($3 == "0000" ? "0001" : "0000") } { print }' "$TMP/tf" >"$TMP/tf_res"
    awk 'NR == 5 { $4 = ($4 == "00" ? "01" : "00") } { print }' "$TMP/tf" >"$TMP/tf_flag"
    "$BIN" verify f16_add -rnear_even <"$TMP/tf_res" >"$TMP/out"; rc=$?
    if [ "$rc" = 1 ] && grep -q "^line 3: " "$TMP/out" && grep -q " 1 mismatches$" "$TMP/out"
    then pass "TestFloat copy with one changed result fails at line 3"; else fail "changed result" "exit $rc: $(head -3 "$TMP/out")"; fi
    "$BIN" verify f16_add -rnear_even <"$TMP/tf_flag" >"$TMP/out"; rc=$?
    if [ "$rc" = 1 ] && grep -q "^line 5: " "$TMP/out" && grep -q " 1 mismatches$" "$TMP/out"
    then pass "TestFloat copy with one changed flag fails at line 5"; else fail "changed flag" "exit $rc: $(head -3 "$TMP/out")"; fi
    # run recomputes the complete lines; only NaN encodings may differ
    # (TestFloat's reference delivers x86's FE00, fpemu the canonical 7E00).
    "$BIN" run f16_add -rnear_even <"$TMP/tf" >"$TMP/regen"; rc=$?
    diffs=$(paste -d' ' "$TMP/tf" "$TMP/regen" | awk '$1 != $5 || $2 != $6 || $4 != $8 { bad++ }
        $3 != $7 && !($3 ~ /^[7F][C-F]/ && $3 !~ /^[7F]C00$/ && $7 ~ /^[7F][C-F]/ && $7 !~ /^[7F]C00$/) { bad++ }
        END { print NR, bad + 0 }')
    if [ "$rc" = 0 ] && [ "$diffs" = "$(wc -l <"$TMP/tf") 0" ]; then pass "run recomputes TestFloat's f16_add lines"
    else fail "run recomputes TestFloat's f16_add lines" "exit $rc, lines and differences: $diffs"; fi
fi

tap_end
