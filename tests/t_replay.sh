#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_replay.sh: `fpemu train --set numerics=torch-cuda` replays the six
# torch.amp runs recorded on an NVIDIA H200 (tests/data/real-runs/, docs/
# replay.md) from their initial weights and batch order, with AdamW
# foreach=False (h200-2026-11-26) and foreach=True (`--set
# adamw_impl=foreach`, h200-2026-11-27), and `fpemu compare` holds it to
# the recording: each run's loss is bit-identical to the H200's for at
# least the steps measured when this test was written (a longer agreement
# passes; a shorter one is a regression); a run pinned at every step must
# also match the H200's evaluation (compare's "result: identical"); and the
# loss-scale and skip sequences are equal over the whole run. Since the
# GEMMs take their trees from the cuBLAS table and expf the recorded
# ex2.approx model, all twelve runs are pinned at every step, and so are
# the four fp8-current runs (the recorder's torch._scaled_mm Linear layers,
# h200-2026-11-27's MODEL-fp8-current-foreach{0,1}.csv).
# Also: the same replay twice is identical, a replay resumed from a
# checkpoint equals the uninterrupted one, and the models and policies
# torch-cuda does not model are refused by name. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
. "$HERE/lib/tap.sh"
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
cd "$ROOT" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_replay.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
D=tests/data/real-runs/h200-2026-11-26
E=tests/data/real-runs/h200-2026-11-27

# replay MODEL POLICY OUT [ARGS...]: the recorded run's settings (record.py)
replay() {
    local m=$1 p=$2 out=$3; shift 3
    local init=$D/init-$m steps=300
    [ -e "$init" ] || init=$D/init-$m.npz
    [ "$m" = deep-mlp ] && steps=200
    "$BIN" train --model "$m" --policy "$p" --steps "$steps" --init "$init" --order "$D/order-$m.npy" \
        --set numerics=torch-cuda --set weight_decay=0.01 --out "$out" "$@" >"$TMP/train.out" 2>&1
}

# model policy AdamW-foreach steps-known-identical (measured at this commit)
while read -r m p fe k; do
    if [ "$fe" = 1 ]; then run=$TMP/$m-$p-foreach; trace=$E/$m-$p-foreach1.csv; set -- --set adamw_impl=foreach
    else run=$TMP/$m-$p; trace=$D/$m-$p.csv; set --; fi
    [ -e "$trace" ] || trace=$E/$m-$p-foreach$fe.csv # fp8-current: both traces are 2026-11-27's
    m_p="$m $p foreach=$([ "$fe" = 1 ] && echo True || echo False)"
    if ! replay "$m" "$p" "$run" "$@"; then fail "$m_p: replay runs" "$(cat "$TMP/train.out")"; continue; fi
    "$BIN" compare "$run" "$trace" >"$TMP/cmp" 2>&1
    rc=$?
    if [ "$rc" -gt 1 ]; then fail "$m_p: compare runs" "$(cat "$TMP/cmp")"; continue; fi
    steps=300; [ "$m" = deep-mlp ] && steps=200
    if [ "$k" = "$steps" ]; then
        if [ "$rc" = 0 ] && grep -q "^loss: identical at every step" "$TMP/cmp" && grep -q "^result: identical" "$TMP/cmp"; then
            pass "$m_p: loss bit-identical to the H200 at all $k steps, and the evaluation too"
        else fail "$m_p: loss bit-identical to the H200 at all $k steps, and the evaluation too" "$(cat "$TMP/cmp")"; fi
    else
        "$BIN" compare "$run" "$trace" --steps "$k" >"$TMP/cmpk" 2>&1
        if grep -q "^loss: identical at every step" "$TMP/cmpk"; then
            pass "$m_p: loss bit-identical to the H200 for the first $k steps"
        else fail "$m_p: loss bit-identical to the H200 for the first $k steps" "$(cat "$TMP/cmpk")"; fi
    fi
    if grep -q "loss scale: equal at every step" "$TMP/cmp" && grep -q "skipped: equal at every step" "$TMP/cmp"; then
        pass "$m_p: loss-scale and skip sequences equal the H200's"
    else fail "$m_p: loss-scale and skip sequences equal the H200's" "$(cat "$TMP/cmp")"; fi
done <<'EOF'
mlp-digits 32-true 0 300
mlp-digits 16-mixed 0 300
mlp-digits bf16-mixed 0 300
deep-mlp 32-true 0 200
deep-mlp 16-mixed 0 200
deep-mlp bf16-mixed 0 200
mlp-digits 32-true 1 300
mlp-digits 16-mixed 1 300
mlp-digits bf16-mixed 1 300
deep-mlp 32-true 1 200
deep-mlp 16-mixed 1 200
deep-mlp bf16-mixed 1 200
mlp-digits fp8-current 0 300
mlp-digits fp8-current 1 300
deep-mlp fp8-current 0 200
deep-mlp fp8-current 1 200
EOF

# the casts to the autocast type are counted (tensors.csv, metrics.csv's
# overflow and casts): every Linear's weight, output and weight gradient and
# the loss's input gradient at step 1, and GradScaler skips exactly the
# steps whose casts overflowed (13 of deep-mlp 16-mixed's, the H200's too)
run=$TMP/deep-mlp-16-mixed
rows=$(awk -F, '$1 == 1 && $4 == "f16" { print $2 "," $3 }' "$run/tensors.csv" 2>/dev/null | sort | tr '\n' ' ')
want=$(for l in $(seq 1 17); do printf 'fc%d,weight\nfc%d,output\nfc%d,grad_weight\n' $l $l $l; done; echo loss,grad_input)
missing=$(echo "$want" | while read -r x; do case " $rows " in *" $x "*) ;; *) echo "$x" ;; esac; done)
if [ -n "$rows" ] && [ -z "$missing" ]; then pass "deep-mlp 16-mixed replay: tensors.csv counts the f16 casts of all 17 Linear layers and the loss gradient's"
else fail "deep-mlp 16-mixed replay: tensors.csv counts every Linear's f16 casts" "missing: $missing" "$(head -5 "$run/tensors.csv" 2>&1)"; fi
sk=$(awk -F, 'NR > 1 { n++; s += $5; if (($5 == 1) != ($6 > 0) || $9 == 0) bad++ } END { print n + 0, s + 0, bad + 0 }' "$run/metrics.csv")
if [ "$sk" = "200 13 0" ]; then pass "deep-mlp 16-mixed replay: the 13 skipped steps are exactly those whose casts overflowed, and every step counts casts"
else fail "deep-mlp 16-mixed replay: skipped steps are those whose casts overflowed" "steps, skipped, disagreeing: $sk"; fi

# fp8-current: every Linear's activation and weight cast to e4m3 and its
# output gradient to e5m2 at step 1, each with its scale, beside the bf16 casts
run=$TMP/mlp-digits-fp8-current
rows=$(awk -F, '$1 == 1 && ($4 == "e4m3" || $4 == "e5m2") && $7 > 1 { print $2 "," $3 "," $4 }' "$run/tensors.csv" 2>/dev/null | sort | tr '\n' ' ')
want="fc1,activation,e4m3 fc1,grad_output,e5m2 fc1,weight,e4m3 fc2,activation,e4m3 fc2,grad_output,e5m2 fc2,weight,e4m3 fc3,activation,e4m3 fc3,grad_output,e5m2 fc3,weight,e4m3 "
if [ "$rows" = "$want" ]; then pass "mlp-digits fp8-current replay: tensors.csv counts each Linear's e4m3 and e5m2 casts with their scales"
else fail "mlp-digits fp8-current replay: tensors.csv counts the fp8 casts" "got: $rows" "want: $want"; fi

# the tiny transformer's recording (no torch-cuda model): the default engine
# from its init.npz, with the recorder's settings, gives the H200's first two
# 32-true losses bit for bit: the state, its keys and the batches line up
TT=$E/tiny-transformer
if "$BIN" train --quiet --model tiny-transformer --policy 32-true --steps 2 --init "$TT/init.npz" --set weight_decay=0.01 \
        --out "$TMP/tt" >"$TMP/train.out" 2>&1 \
    && "$BIN" compare "$TMP/tt" "$TT/32-true-foreach0.csv" --steps 2 >"$TMP/cmp" 2>&1 && grep -q "^loss: identical at every step" "$TMP/cmp"; then
    pass "tiny-transformer: the default engine from the recorded init.npz gives the H200's first 2 losses bit for bit"
else fail "tiny-transformer: the recorded init.npz lines up with the engine" "$(cat "$TMP/train.out" "$TMP/cmp" 2>/dev/null)"; fi

# deterministic, and resumable
if replay deep-mlp 16-mixed "$TMP/again" && cmp -s "$TMP/again/metrics.csv" "$TMP/deep-mlp-16-mixed/metrics.csv" \
    && cmp -s "$TMP/again/eval.csv" "$TMP/deep-mlp-16-mixed/eval.csv"; then
    pass "the same replay twice is identical"
else fail "the same replay twice is identical" "$(cat "$TMP/train.out")"; fi
if "$BIN" train --model mlp-digits --policy 16-mixed --steps 150 --init "$D/init-mlp-digits" \
        --order "$D/order-mlp-digits.npy" --set numerics=torch-cuda --set weight_decay=0.01 --set checkpoint_every=50 \
        --out "$TMP/half" >"$TMP/train.out" 2>&1 \
    && "$BIN" train --resume "$TMP/half" --steps 300 >"$TMP/resume.out" 2>&1 \
    && cmp -s "$TMP/half/metrics.csv" "$TMP/mlp-digits-16-mixed/metrics.csv" \
    && cmp -s "$TMP/half/tensors.csv" "$TMP/mlp-digits-16-mixed/tensors.csv"; then
    pass "a replay resumed from its checkpoint equals the uninterrupted one"
else fail "a replay resumed from its checkpoint equals the uninterrupted one" "$(cat "$TMP/train.out" "$TMP/resume.out" 2>/dev/null)" \
    "$(diff "$TMP/half/metrics.csv" "$TMP/mlp-digits-16-mixed/metrics.csv" 2>&1 | head -5)"; fi

# what torch-cuda does not model is refused, by name
refused() {
    local desc=$1 pat=$2; shift 2
    "$BIN" train "$@" --steps 1 --set numerics=torch-cuda --out "$TMP/refused" >"$TMP/ref.out" 2>&1
    local rc=$?
    if [ "$rc" != 0 ] && grep -qF -- "$pat" "$TMP/ref.out" && [ ! -e "$TMP/refused" ]; then pass "$desc"
    else fail "$desc" "exit $rc" "$(cat "$TMP/ref.out")"; fi
}
refused "torch-cuda refuses tiny-transformer" "model tiny-transformer is not modelled" --model tiny-transformer --policy 32-true
refused "torch-cuda refuses an fp8 policy other than fp8-current" "is not modelled" --model mlp-digits --policy fp8-delayed
refused "torch-cuda refuses fp8-current with power-of-two scales" "power_2_scale=1" --model mlp-digits --policy fp8-current \
    --set power_2_scale=1
refused "torch-cuda refuses fp8-current without scales" "fp8_scaling=none" --model mlp-digits --policy fp8-current \
    --set fp8_scaling=none
refused "torch-cuda refuses sgd" "optimizer sgd is not modelled" --model mlp-digits --policy 32-true --set optimizer=sgd
"$BIN" train --model mlp-digits --policy 32-true --steps 1 --set numerics=cuda --out "$TMP/bad" >"$TMP/bad.out" 2>&1
if [ $? != 0 ] && grep -q "fpemu|torch-cuda" "$TMP/bad.out"; then pass "an unknown numerics names the choices"
else fail "an unknown numerics names the choices" "$(cat "$TMP/bad.out")"; fi
tap_end
