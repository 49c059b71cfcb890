#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_mma_algo.sh: `fpemu train --set mma_algo=cublas` (docs/cublas.md,
# docs/training.md): the engine's tensor-core GEMMs take the cuBLAS tree of
# the library's built-in table (emu/cublas-h200.txt) for the shapes it
# lists, the plain model otherwise, and summary.json counts which. With
# batch_size=4096 the weight gradient of mlp-digits' 64 x 64 layer is a
# 64 x 64 x 4096 f16 GEMM, the table's split-K row (3 partitions), so the
# gradients change; the same run under mma_algo=plain, and the default,
# are bit for bit the run without the key. Also: threads change nothing,
# a checkpoint keeps the key, and bad values are refused by name. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
. "$HERE/lib/tap.sh"
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
cd "$ROOT" || exit 1
export FPEMU_ROOT=$ROOT
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_mma_algo.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

run() { # DIR, then fpemu train options
    local d=$1; shift
    "$BIN" train --model mlp-digits --policy 16-mixed --steps 3 --set eval_every=3 --out "$TMP/$d" --quiet "$@" \
        >"$TMP/$d.log" 2>&1
}
same_outputs() { # the numbers of two run folders, byte for byte
    cmp -s "$TMP/$1/metrics.csv" "$TMP/$2/metrics.csv" && cmp -s "$TMP/$1/tensors.csv" "$TMP/$2/tensors.csv" &&
        cmp -s "$TMP/$1/eval.csv" "$TMP/$2/eval.csv"
}

# the default, mma_algo=plain named, and cublas, at batch 4096 (a listed split-K shape) and batch 32
run def --set batch_size=4096
run plain --set batch_size=4096 --set mma_algo=plain
run cub --set batch_size=4096 --set mma_algo=cublas --set checkpoint_every=2
run cub2 --set batch_size=4096 --set mma_algo=cublas --threads 2
run small --set mma_algo=cublas
run small_def
if same_outputs def plain && ! grep -q '"gemm_algo"' "$TMP/def/summary.json" &&
    grep -q '"mma_algo": "plain"' "$TMP/def/summary.json"; then
    pass "mma_algo=plain is the default: the same numbers, settings say plain, no gemm_algo record"
else fail "mma_algo=plain is the default" "$(cat "$TMP/def.log" "$TMP/plain.log")"; fi

S=$TMP/cub/summary.json
# the 64 x 64 x 4096 weight gradient, from line 24 of the table (f16 -> f32, split=3)
if grep -q '"mma_algo": "cublas"' "$S" && grep -q '"table": "cublas-h200"' "$S" &&
    grep -q '{"a": "f16", "b": "f16", "m": 64, "n": 64, "k": 4096, "table_line": 24, "calls": [1-9]' "$S" &&
    grep -q '{"a": "f16", "b": "f16", "m": 4096, "n": 64, "k": 64, "table_line": null, "calls": [1-9]' "$S"; then
    pass "summary.json: 64x64x4096 from the table's line 24, the shapes it does not list from the plain model"
else fail "summary.json names the calls from the table and the plain ones" "$(cat "$TMP/cub.log" "$S")"; fi
ft=$(sed -n 's/.*"calls_from_table": \([0-9]*\).*/\1/p' "$S"); fp=$(sed -n 's/.*"calls_plain": \([0-9]*\).*/\1/p' "$S")
sum=$(sed -n 's/.*"table_line": \(null\|[0-9]*\), "calls": \([0-9]*\).*/\1 \2/p' "$S" |
    awk '{ if ($1 == "null") p += $2; else t += $2 } END { print t + 0, p + 0 }')
if [ -n "$ft" ] && [ "$ft" -gt 0 ] && [ "$fp" -gt 0 ] && [ "$sum" = "$ft $fp" ]; then
    pass "calls_from_table ($ft) and calls_plain ($fp) add up over the shapes"
else fail "calls_from_table and calls_plain add up (got $ft, $fp; shapes: $sum)" "$(cat "$S")"; fi
if ! cmp -s "$TMP/def/metrics.csv" "$TMP/cub/metrics.csv" &&
    [ "$(sed -n 2p "$TMP/def/metrics.csv" | cut -d, -f3)" != "$(sed -n 2p "$TMP/cub/metrics.csv" | cut -d, -f3)" ]; then
    pass "the split-K tree changes the run: step 1's gradient norm differs from the plain model's"
else fail "mma_algo=cublas changes a GEMM the table covers" "$(cat "$TMP/def/metrics.csv" "$TMP/cub/metrics.csv")"; fi
if same_outputs cub cub2; then pass "mma_algo=cublas: --threads 2 gives the same bits as one thread"
else fail "mma_algo=cublas: --threads 2 gives the same bits" "$(cat "$TMP/cub2.log")"; fi
# batch 32: the only listed shape, 64 x 64 x 32, has the plain tree, so nothing changes
if same_outputs small small_def && grep -q '"m": 64, "n": 64, "k": 32, "table_line": 21' "$TMP/small/summary.json"; then
    pass "batch 32: 64x64x32 is listed with the plain tree (line 21): the same bits as mma_algo=plain"
else fail "batch 32: the same bits as mma_algo=plain" "$(cat "$TMP/small.log" "$TMP/small/summary.json")"; fi
if [ -f "$TMP/cub/checkpoint.bin" ] && grep -a -q '^mma_algo=cublas$' "$TMP/cub/checkpoint.bin"; then
    pass "the checkpoint keeps mma_algo=cublas"
else fail "the checkpoint keeps mma_algo=cublas" "$(ls "$TMP/cub")"; fi

# refusals: a message naming the key and what it takes, exit status 2
err() {
    local what=$1 msg=$2; shift 2
    "$BIN" train --model mlp-digits --policy 16-mixed --steps 1 --out "$TMP/e" --quiet "$@" >"$TMP/e.out" 2>&1
    local rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$msg" "$TMP/e.out"; then pass "refused: $what"
    else fail "refused: $what (exit $rc)" "$(cat "$TMP/e.out")"; fi
}
err "an unknown value" "mma_algo: expected one of plain|cublas, got 'fast'" --set mma_algo=fast
err "a device the table was not fitted on" "mma_algo=cublas: the table cublas-h200 holds trees of h100's tensor cores (line [0-9]*); mma is a100" \
    --set mma_algo=cublas --set mma=a100
err "numerics=torch-cuda" "mma_algo=cublas goes with numerics=fpemu" --set mma_algo=cublas --set numerics=torch-cuda
tap_end
