#!/bin/sh
# SPDX-License-Identifier: MIT
# t_check_verify.sh: `make verify` as a TAP test: the emulator against the
# MPFR reference (fpemu check). Every <= 8-bit format exhaustively in every
# mode, sr included (sat and not, both tininess settings where tininess can matter, ftz
# and daz), fma on the 8-bit formats and the 16/32/64-bit formats sampled
# (TestFloat-style structured grid and seeded random cases), conversions
# from f32/f64 to every format. A mismatch prints its replayable lines.
#
# Uses $FPEMU_CHECK_BIN (the statically linked checker of mk/verify.mk), else
# $FPEMU_BIN, else bin/fpemu. Seed: $FPEMU_SEED (default 1).
BIN=${FPEMU_CHECK_BIN:-${FPEMU_BIN:-bin/fpemu}}
if [ ! -x "$BIN" ]; then
    echo "1..1"; echo "not ok 1 - no fpemu binary at $BIN (run through make test or make verify)"; exit 1
fi
SEED=${FPEMU_SEED:-1}
echo "# seed $SEED (set FPEMU_SEED to replay); checker $BIN"
n=0
failed=0
start=$(date +%s)

check() {
    desc=$1
    shift
    n=$((n + 1))
    t0=$(date +%s)
    out=$("$BIN" check --quiet --max-print 10 --seed "$SEED" "$@" 2>&1)
    rc=$?
    t1=$(date +%s)
    last=$(printf '%s\n' "$out" | tail -n 1)
    if [ "$rc" -eq 0 ] && printf '%s\n' "$last" | grep -q '^[0-9][0-9]* cases, 0 mismatches$'; then
        echo "ok $n - $desc: $last ($((t1 - t0)) s)"
    else
        echo "not ok $n - $desc: $last (exit $rc)"
        echo "#   fpemu check $*"
        printf '%s\n' "$out" | head -n 40 | sed 's/^/#   /'
        failed=1
    fi
}

ALL8=small
# 1. <= 8-bit formats: every input, pair and conversion (to and from each
#    other and f32/f64 where the inputs are <= 8-bit), every mode.
check "<= 8-bit exhaustive, add sub mul div sqrt conversions, all modes" \
    --format $ALL8 --op add,sub,mul,div,sqrt,conv --round all --exhaustive
check "<= 8-bit exhaustive, same with --sat" \
    --format $ALL8 --op add,sub,mul,div,sqrt,conv --round all --exhaustive --sat
# Tininess only matters where a result can be tiny and inexact: products,
# quotients, conversions (sums that are tiny are exact; square roots grow).
check "<= 8-bit exhaustive, mul div conversions, --tininess before" \
    --format $ALL8 --op mul,div,conv --round all --exhaustive --tininess before
check "<= 8-bit exhaustive, every op, --ftz --daz" \
    --format $ALL8 --op add,sub,mul,div,sqrt,conv --round rne,rtz,rup,rto,sr --exhaustive --ftz --daz
check "<= 8-bit exhaustive, mul div conversions, --ftz --tininess before --sat" \
    --format $ALL8 --op mul,div,conv --round rne,rna,rdn,sr --exhaustive --ftz --tininess before --sat
# 2. fma on the 8-bit formats: sampled (the 2^24 triples are in verify-full).
check "e4m3 e5m2 e2m1 fma, structured (core triples + grid sample), rne rtz rto sr" \
    --format e4m3,e5m2,e2m1 --op fma --round rne,rtz,rto,sr --structured
check "<= 8-bit fma, random, all modes" \
    --format $ALL8 --op fma --round all --random 30000
check "<= 8-bit fma, random, all modes, --sat --tininess before" \
    --format $ALL8 --op fma --round all --random 10000 --sat --tininess before
# 3. 16-bit formats: structured grid and random, every op and mode.
check "f16 bf16 structured, every op, all modes" \
    --format f16,bf16 --op arith --round all --structured
check "f16 bf16 random, every op, all modes, --sat" \
    --format f16,bf16 --op arith --round all --random 100000 --sat
check "f16 bf16 random, every op, rne rtz sr, --ftz --daz --tininess before" \
    --format f16,bf16 --op arith --round rne,rtz,sr --random 100000 --ftz --daz --tininess before
# 4. conversions from f32 and f64 to every format (boundaries, midpoints and
#    their neighbours in every target binade), and between the wide formats.
check "f32/f64 -> every format, structured, all modes" \
    --format all --op from_f32,from_f64 --round all --structured
check "f32/f64 -> every format, random, all modes, --sat" \
    --format all --op from_f32,from_f64 --round all --random 20000 --sat
check "16/32/64-bit formats to each other, random, all modes, --tininess before" \
    --format wide --op conv --round all --random 20000 --tininess before
# 5. f32, tf32, f64 arithmetic: structured in rne and rtz, random everywhere.
check "f32 tf32 f64 structured, every op, rne rtz sr" \
    --format f32,tf32,f64 --op arith --round rne,rtz,sr --structured
check "f32 tf32 f64 random, every op, all modes" \
    --format f32,tf32,f64 --op arith --round all --random 50000

echo "1..$n"
echo "# verify: $(($(date +%s) - start)) s"
exit $failed
