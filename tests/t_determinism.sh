#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_determinism.sh: the same seed gives byte-identical outputs across thread
# counts and repeated runs, for `fpemu check`, `fpemu mma`, `fpemu gemm`,
# `fpemu errk` and `fpemu train` (summary.json compared without its
# "timing" line, the only field documented to differ). Small runs here;
# FPEMU_DET_LONG=1 (`make harden-long`) makes them larger and adds more
# thread counts. Subcommands not in bin/fpemu yet are skipped. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make test builds it; make deps installs the tools)"; exit 1; fi
cd "$ROOT" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_det.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
LONG=${FPEMU_DET_LONG:-0}
SEED=${FPEMU_SEED:-$(( $(date +%s) % 100000 ))}
echo "# seed $SEED (FPEMU_SEED=$SEED replays)"
THREADS="1 2"
[ "$LONG" = 1 ] && THREADS="1 2 3 4 7"

n=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
    n=$((n + 1)); echo "not ok $n - $1"; shift
    for d in "$@"; do printf '%s\n' "$d" | head -12 | sed 's/^/#   /'; done
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
has() { "$BIN" "$1" --help >/dev/null 2>&1; }

# same_runs DESC FILE...: all FILEs exist and are identical to the first
same_runs() {
    local desc=$1 first=$2 f bad=""; shift 2
    [ -s "$first" ] || { fail "$desc" "$first is empty or missing"; return; }
    for f in "$@"; do cmp -s "$first" "$f" || bad="$bad ${f##*/}"; done
    if [ -z "$bad" ]; then pass "$desc ($(wc -c <"$first") bytes each, $(( $# + 1 )) runs)"
    else fail "$desc" "differs from ${first##*/}:$bad" "$(diff "$first" "${1}" | head -6)"; fi
}

# ---- check ------------------------------------------------------------------------
N=2000; [ "$LONG" = 1 ] && N=200000
files=()
for t in $THREADS 2; do
    i=${#files[@]}
    "$BIN" check --format e4m3,f16,bf16,e2m1,e5m2fnuz --op add,mul,fma,div,to_f32 --round rne,rtz,rup \
        --random "$N" --seed "$SEED" --threads "$t" --quiet >"$TMP/check.$i" 2>"$TMP/check.$i.err"
    files+=("$TMP/check.$i")
done
same_runs "check --random $N --seed $SEED: same output with --threads $THREADS and a rerun" "${files[@]}"
# shards: the union of the shards' counts is the whole
tot=0
for s in 0 1 2; do
    "$BIN" check --format e4m3,f16 --op add,mul --random "$N" --seed "$SEED" --shard $s/3 --threads 2 --quiet >"$TMP/shard.$s" 2>&1
    c=$(sed -n 's/^\([0-9][0-9]*\) cases.*/\1/p' "$TMP/shard.$s" | tail -1); tot=$((tot + ${c:-0}))
done
"$BIN" check --format e4m3,f16 --op add,mul --random "$N" --seed "$SEED" --threads 1 --quiet >"$TMP/noshard" 2>&1
whole=$(sed -n 's/^\([0-9][0-9]*\) cases.*/\1/p' "$TMP/noshard" | tail -1)
if [ -n "$whole" ] && [ "$tot" = "$whole" ]; then pass "check --shard 0/3..2/3 cover the $whole cases of the unsharded run"
else fail "check --shard 0/3..2/3 cover the cases of the unsharded run" "shards: $tot, whole: ${whole:-?}" "$(tail -2 "$TMP/noshard")"; fi

# ---- mma --------------------------------------------------------------------------
# K=32 dot products of random f16 codes, C in f32 (awk LCG from the seed)
gen_mma() {
    awk -v seed="$1" -v lines="$2" 'BEGIN {
        s = seed % 2147483647; if (s <= 0) s += 1
        for (l = 0; l < lines; l++) {
            s = (s * 48271) % 2147483647; line = sprintf("%08X", (s % 32768) * 65536 % 2139095040)
            for (k = 0; k < 64; k++) { s = (s * 48271) % 2147483647; c = s % 65536; if (c % 32768 >= 31744) c -= 2048; line = line sprintf(" %04X", c) }
            print line
        }
    }'
}
if has mma; then
    L=300; [ "$LONG" = 1 ] && L=20000
    gen_mma "$SEED" "$L" >"$TMP/mma.in"
    files=()
    for m in h100 a100 b200; do
        for r in 1 2; do
            "$BIN" mma --model $m --a f16 <"$TMP/mma.in" >"$TMP/mma.$m.$r" 2>"$TMP/mma.err" || { fail "mma --model $m" "$(head -3 "$TMP/mma.err")"; continue 2; }
        done
        same_runs "mma --model $m --a f16: $L random K=32 lines, two runs" "$TMP/mma.$m.1" "$TMP/mma.$m.2"
    done
else fail "fpemu mma is not in bin/fpemu yet"; fi

# ---- gemm -------------------------------------------------------------------------
if has gemm && command -v python3 >/dev/null; then
    M=40 K=96 NN=36; [ "$LONG" = 1 ] && M=160 K=512 NN=144
    python3 - "$TMP" "$SEED" $M $K $NN <<'EOF'
import struct, random, sys
d, seed, M, K, N = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
def npy(path, shape, data):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % shape
    hdr += ' ' * (64 - (10 + len(hdr) + 1) % 64) + '\n'
    open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<%df' % len(data), *data))
npy(d + '/A.npy', (M, K), [rng.gauss(0, 1) * 2 ** rng.randint(-6, 6) for _ in range(M * K)])
npy(d + '/B.npy', (K, N), [rng.gauss(0, 1) for _ in range(K * N)])
EOF
    for spec in "h100 e4m3 tensor" "h100 e4m3 blockwise" "b200 e4m3 mx" "a100 bf16 none"; do
        set -- $spec
        files=()
        for t in $THREADS 2; do
            i=${#files[@]}
            "$BIN" gemm --model $1 --afmt $2 --scaling $3 --a "$TMP/A.npy" --b "$TMP/B.npy" --threads $t \
                --out "$TMP/D.$1.$2.$3.$i.npy" 2>"$TMP/gemm.err" || { fail "gemm --model $1 --afmt $2 --scaling $3" "$(head -3 "$TMP/gemm.err")"; continue 2; }
            files+=("$TMP/D.$1.$2.$3.$i.npy")
        done
        same_runs "gemm --model $1 --afmt $2 --scaling $3 ($M x $K x $NN): same D with --threads $THREADS and a rerun" "${files[@]}"
    done
else fail "fpemu gemm (or python3 for its .npy inputs) is not available"; fi

# ---- errk -------------------------------------------------------------------------
if has errk; then
    for r in 1 2; do
        "$BIN" errk --kmin 16 --kmax 256 --dots 20 --seed "$SEED" --out "$TMP/errk.$r.csv" >"$TMP/errk.$r.out" 2>"$TMP/errk.err" \
            || { fail "errk" "$(head -3 "$TMP/errk.err")"; break; }
    done
    [ -f "$TMP/errk.2.csv" ] && same_runs "errk --seed $SEED: two runs" "$TMP/errk.1.csv" "$TMP/errk.2.csv"
else fail "fpemu errk is not in bin/fpemu yet"; fi

# ---- train ------------------------------------------------------------------------
STEPS=12; [ "$LONG" = 1 ] && STEPS=60
for pol in fp8-current 16-mixed; do
    dirs=()
    for t in $THREADS 2; do
        d=$TMP/train.$pol.${#dirs[@]}
        "$BIN" train --model mlp-digits --policy $pol --steps $STEPS --seed "$SEED" --threads $t --quiet \
            --set hidden=32 --set tensors_every=3 --out "$d" 2>"$TMP/train.err" \
            || { fail "train --policy $pol --threads $t" "$(tail -3 "$TMP/train.err")"; continue 2; }
        grep -v '"timing"' "$d/summary.json" >"$d/summary.notiming"
        dirs+=("$d")
    done
    for f in metrics.csv tensors.csv eval.csv summary.notiming; do
        same_runs "train --policy $pol --seed $SEED $f: same with --threads $THREADS and a rerun" "${dirs[@]/%//$f}"
    done
done
if [ "$LONG" = 1 ]; then
    dirs=()
    for t in 1 2; do
        d=$TMP/tt.$t
        "$BIN" train --model tiny-transformer --policy bf16-mixed --steps 20 --seed "$SEED" --threads $t --quiet \
            --set d_model=16 --set d_ff=32 --out "$d" 2>"$TMP/train.err" || fail "tiny-transformer --threads $t" "$(tail -3 "$TMP/train.err")"
        dirs+=("$d")
    done
    same_runs "train tiny-transformer: metrics.csv with --threads 1 and 2" "${dirs[@]/%//metrics.csv}"
fi
echo "1..$n"
