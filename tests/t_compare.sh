#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_compare.sh: `fpemu compare RUN TRACE` (docs/replay.md): identical runs
# exit 0; a loss that differs at a known step by a known number of f32 ulps,
# a loss-scale or skip sequence that differs, an evaluation that differs
# exit 1 and say where; --steps, --grad-norm, --json; a traces.json with
# Python's Infinity (--key); every bad input exits 2 naming the file and
# line. --as-run writes a trace as a run folder: every f32 of the committed
# H200 traces survives metrics.csv's %.9g (the folder compares identical
# with its trace), and `fpemu report` draws it beside an fpemu run. The
# recording scripts compile (python3). Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
. "$HERE/lib/tap.sh"
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
cd "$ROOT" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_compare.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
D=tests/data/real-runs/h200-2026-11-26
PY=$(command -v python3 || true)
export PYTHONDONTWRITEBYTECODE=1

# cmp_rc DESC WANT_RC PATTERN ARGS...: `fpemu compare ARGS` exits WANT_RC and prints PATTERN (stdout or stderr)
cmp_rc() {
    local desc=$1 want=$2 pat=$3; shift 3
    "$BIN" compare "$@" >"$TMP/out" 2>&1
    local rc=$?
    if [ "$rc" = "$want" ] && grep -qF -- "$pat" "$TMP/out"; then pass "$desc"
    else fail "$desc" "exit $rc (expected $want), expected '$pat' in:" "$(cat "$TMP/out")"; fi
}
# trace_of RUN > CSV: an fpemu run folder as a trace (metrics.csv's columns, eval.csv's last row)
trace_of() {
    printf '# fpemu-trace 1\n# model: %s\n# policy: %s\n' "$2" "$3"
    tail -1 "$1/eval.csv" | awk -F, '{ printf "# eval_loss: %s\n# eval_accuracy: %s\n", $2, $3 }'
    echo "step,loss,scale,skipped,grad_norm"
    awk -F, 'NR > 1 { print $1 "," $2 "," $4 "," $5 "," $3 }' "$1/metrics.csv"
}

# ---- an fpemu run against itself as a trace ---------------------------------------------------
"$BIN" train --quiet --model deep-mlp --policy 16-mixed --steps 40 --init $D/init-deep-mlp.npz --order $D/order-deep-mlp.npy --out "$TMP/run"
trace_of "$TMP/run" deep-mlp 16-mixed >"$TMP/self.csv"
cmp_rc "a run against its own trace: exit 0, identical" 0 "result: identical" "$TMP/run" "$TMP/self.csv" --json "$TMP/self.json"
grep -q "skipped: equal at every step ([1-9][0-9]* skipped)" "$TMP/out" && grep -q "loss scale: equal at every step" "$TMP/out" \
    && pass "the scale and skip sequences (16-mixed, skipped steps) are compared and equal" || fail "scale and skip sequences" "$(cat "$TMP/out")"
grep -q '"identical":[[:space:]]*true' "$TMP/self.json" && pass "--json: identical true" || fail "--json identical" "$(cat "$TMP/self.json")"
awk -F, 'BEGIN { OFS = "," } /^7,/ { $2 = $2 * 1.5 } { print }' "$TMP/self.csv" >"$TMP/s7.csv"
cmp_rc "a loss changed at step 7: exit 1, first difference at step 7" 1 "loss: first difference at step 7: run " "$TMP/run" "$TMP/s7.csv"
cmp_rc "--steps 6: the steps before it compare identical" 0 "steps compared: 6" "$TMP/run" "$TMP/s7.csv" --steps 6

# ---- a synthetic run and trace: known ulps, scale, skip, eval -------------------------------------
mkdir -p "$TMP/syn"
printf 'step,loss,grad_norm,loss_scale,skipped\n1,1,0.5,65536,1\n2,2,0.25,32768,0\n3,1,0.125,32768,0\n4,3,nan,32768,0\n' >"$TMP/syn/metrics.csv"
printf 'step,eval_loss,eval_accuracy\n0,2.5,0.1\n4,0.75,0.5\n' >"$TMP/syn/eval.csv"
tr_head='# fpemu-trace 1\n# model: mlp-digits\n# policy: 16-mixed\n# device: a test\n# eval_loss: 0.75\n# eval_accuracy: 0.5\nstep,loss,scale,skipped,grad_norm\n'
printf "$tr_head"'1,1.0,65536.0,1,0.5\n2,2.0,32768.0,0,0.25\n3,1.0,32768.0,0,0.125\n4,3.0,32768.0,0,nan\n' >"$TMP/t0.csv"
cmp_rc "synthetic: identical" 0 "result: identical" "$TMP/syn" "$TMP/t0.csv"
printf "$tr_head"'1,1.0,65536.0,1,0.5\n2,2.00000048,32768.0,0,0.25\n3,1.00000012,32768.0,0,0.125\n4,3.0,32768.0,0,nan\n' >"$TMP/t1.csv"
cmp_rc "2 and 2.00000048: 2 ulps at step 2, both values exact" 1 \
    "loss: first difference at step 2: run 2 (0x40000000), trace 2.00000048 (0x40000002): 2 ulps" "$TMP/syn" "$TMP/t1.csv" --json "$TMP/t1.json"
grep -qF "loss: 2 of 4 steps equal; largest difference 2 ulps at step 2; largest absolute difference" "$TMP/out" \
    && pass "the largest difference (ulps, absolute, step)" || fail "the largest difference" "$(cat "$TMP/out")"
grep -q '"ulps":[[:space:]]*2' "$TMP/t1.json" && grep -q '"bits":[[:space:]]*"0x40000002"' "$TMP/t1.json" && grep -q '"identical":[[:space:]]*false' "$TMP/t1.json" \
    && pass "--json: the ulps, the bits, identical false" || fail "--json of a difference" "$(cat "$TMP/t1.json")"
printf "$tr_head"'1,1.0,65536.0,1,0.5\n2,2.0,32768.0,0,0.25\n3,1.0,16384.0,0,0.125\n4,3.0,32768.0,0,nan\n' >"$TMP/t2.csv"
cmp_rc "a loss scale that differs at step 3" 1 "loss scale: first difference at step 3: run 32768, trace 16384" "$TMP/syn" "$TMP/t2.csv"
grep -qF "loss: identical at every step" "$TMP/out" && pass "... while the loss is identical" || fail "loss identical beside a scale difference"
printf "$tr_head"'1,1.0,65536.0,1,0.5\n2,2.0,32768.0,1,0.25\n3,1.0,32768.0,0,0.125\n4,3.0,32768.0,0,nan\n' >"$TMP/t3.csv"
cmp_rc "a skip that differs at step 2" 1 "skipped: first difference at step 2: run 0, trace 1 (1 and 2 skipped)" "$TMP/syn" "$TMP/t3.csv"
printf '# fpemu-trace 1\n# model: mlp-digits\n# eval_loss: 0.75000006\n# eval_accuracy: 0.5\nstep,loss,scale,skipped,grad_norm\n1,1.0,65536.0,1,0.5\n2,2.0,32768.0,0,0.25\n3,1.0,32768.0,0,0.125\n4,3.0,32768.0,0,nan\n' >"$TMP/t4.csv"
cmp_rc "an eval loss that differs: 1 ulp" 1 "eval_loss: run 0.75 (0x3f400000), trace 0.75000006 (0x3f400001): differ by 1 ulp" "$TMP/syn" "$TMP/t4.csv"
printf "$tr_head"'1,1.0,65536.0,1,0.5\n2,2.0,32768.0,0,0.2500001\n3,1.0,32768.0,0,0.125\n4,3.0,32768.0,0,nan\n' >"$TMP/t5.csv"
cmp_rc "a gradient norm that differs is reported, not a difference" 0 "grad_norm: 3 of 4 equal (as f32); largest relative difference" "$TMP/syn" "$TMP/t5.csv"
cmp_rc "... with --grad-norm it is" 1 "result: differ" "$TMP/syn" "$TMP/t5.csv" --grad-norm
printf "$tr_head"'1,1.0,65536.0,1,0.5\n2,2.0,32768.0,0,0.25\n3,1.0,32768.0,0,0.125\n' >"$TMP/t6.csv"
cmp_rc "a trace shorter than the run: exit 1, said" 1 "steps compared: 3 (the run and the trace differ in length)" "$TMP/syn" "$TMP/t6.csv"

# ---- traces.json (--key) ----------------------------------------------------------------------------
cat >"$TMP/traces.json" <<'EOF'
{"mlp-digits/16-mixed/rep0": {"loss": [1.0, 2.0, 1.0, 3.0], "scale": [65536.0, 32768.0, 32768.0, 32768.0], "skipped": [1, 0, 0, 0],
  "grad_norm": [0.5, 0.25, 0.125, NaN], "eval_loss": 0.75, "eval_acc": 0.5},
 "mlp-digits/16-mixed/rep1": {"loss": [1.0, 2.0, 1.0, 3.0], "scale": [65536.0, 32768.0, 32768.0, 32768.0], "skipped": [1, 0, 0, 0],
  "grad_norm": [Infinity, 0.25, 0.125, NaN], "eval_loss": 0.75, "eval_acc": 0.5}}
EOF
cmp_rc "traces.json --key (NaN in it): identical" 0 "result: identical" "$TMP/syn" "$TMP/traces.json" --key mlp-digits/16-mixed/rep0
cmp_rc "traces.json --key (Infinity in it): read" 0 "grad_norm: 3 of 4 equal" "$TMP/syn" "$TMP/traces.json" --key mlp-digits/16-mixed/rep1
cmp_rc "traces.json without --key: exit 2, its keys listed" 2 "name one with --key (it has: mlp-digits/16-mixed/rep0 mlp-digits/16-mixed/rep1)" "$TMP/syn" "$TMP/traces.json"
cmp_rc "traces.json, a key it does not have" 2 "no run 'deep-mlp/16-mixed/rep0'" "$TMP/syn" "$TMP/traces.json" --key deep-mlp/16-mixed/rep0

# ---- bad input ------------------------------------------------------------------------------------------
printf 'step,loss\n1,2\n' >"$TMP/b1.csv"
cmp_rc "no version line: file and line named" 2 "b1.csv:1: expected '# fpemu-trace 1'" "$TMP/syn" "$TMP/b1.csv"
printf '# fpemu-trace 2\nstep,loss\n1,2\n' >"$TMP/b2.csv"
cmp_rc "an unknown version" 2 "b2.csv:1: trace format version '2', this fpemu reads version 1" "$TMP/syn" "$TMP/b2.csv"
printf "$tr_head"'1,1.0,65536.0,1,0.5\n2,abc,32768.0,0,0.25\n' >"$TMP/b3.csv"
cmp_rc "a loss that is not a number: its line" 2 "b3.csv:9: loss 'abc' is not a number" "$TMP/syn" "$TMP/b3.csv"
printf "$tr_head"'1,1.0,65536.0,1,0.5\n3,2.0,32768.0,0,0.25\n' >"$TMP/b4.csv"
cmp_rc "steps out of order" 2 "b4.csv:9: step '3', expected 2" "$TMP/syn" "$TMP/b4.csv"
printf "$tr_head"'1,1.0,65536.0,1\n' >"$TMP/b5.csv"
cmp_rc "a row with too few fields" 2 "b5.csv:8: 4 fields, the header has 5" "$TMP/syn" "$TMP/b5.csv"
printf '# fpemu-trace 1\nstep,loss,bogus\n1,2,3\n' >"$TMP/b6.csv"
cmp_rc "an unknown column" 2 "b6.csv:2: unknown column 'bogus'" "$TMP/syn" "$TMP/b6.csv"
printf "$tr_head" >"$TMP/b7.csv"
cmp_rc "no rows" 2 "no steps" "$TMP/syn" "$TMP/b7.csv"
printf "$tr_head"'1,1.0,65536.0,2,0.5\n' >"$TMP/b8.csv"
cmp_rc "skipped neither 0 nor 1" 2 "b8.csv:8: skipped '2', expected 0 or 1" "$TMP/syn" "$TMP/b8.csv"
cmp_rc "a run folder that is not there" 2 "not a run folder" "$TMP/nothere" "$TMP/t0.csv"
cmp_rc "a trace that is not there" 2 "cannot read" "$TMP/syn" "$TMP/nothere.csv"
cmp_rc "the run's model is not the trace's" 2 "the run is of model deep-mlp, the trace of mlp-digits" "$TMP/run" "$TMP/t0.csv"
cp -r "$TMP/run" "$TMP/mixed" && printf '41,1,1,1,0,0,0,0.001,0\n' >>"$TMP/mixed/metrics.csv"
cmp_rc "a run folder whose files do not belong together (summary.json's CRCs)" 2 "does not belong" "$TMP/mixed" "$TMP/self.csv"
cmp_rc "--steps beyond both" 2 "--steps 9: the run has 4 steps, the trace 4" "$TMP/syn" "$TMP/t0.csv" --steps 9
cmp_rc "--key on a CSV trace" 2 "is not a traces.json" "$TMP/syn" "$TMP/t0.csv" --key a/b/c
cmp_rc "no arguments" 2 "expected RUN TRACE" 
cmp_rc "an unknown option" 2 "unknown option '--bogus'" "$TMP/syn" "$TMP/t0.csv" --bogus

# ---- the committed H200 traces: as run folders, round trip, report ------------------------------------
ok=0; bad=""
for t in $D/*.csv; do
    nm=$(basename "$t" .csv)
    if "$BIN" compare --as-run "$TMP/h200-$nm" "$t" >/dev/null 2>"$TMP/as.err" && "$BIN" compare "$TMP/h200-$nm" "$t" >"$TMP/as.out" 2>&1; then ok=$((ok + 1))
    else bad="$bad $nm: $(cat "$TMP/as.err" "$TMP/as.out" | tail -3)"; fi
done
[ "$ok" = 6 ] && pass "the 6 H200 traces as run folders compare identical with themselves (every f32 survives %.9g)" || fail "H200 traces round trip" "$bad"
grep -q '"source": "real"' "$TMP/h200-deep-mlp-16-mixed/summary.json" && grep -q '"device": "NVIDIA H200"' "$TMP/h200-deep-mlp-16-mixed/summary.json" \
    && grep -q '"skipped_steps": 13' "$TMP/h200-deep-mlp-16-mixed/summary.json" && pass "--as-run's summary.json: source real, device, 13 skipped steps" \
    || fail "--as-run's summary.json" "$(cat "$TMP/h200-deep-mlp-16-mixed/summary.json")"
"$BIN" train --quiet --model deep-mlp --policy 16-mixed --steps 200 --set weight_decay=0.01 --init $D/init-deep-mlp.npz --order $D/order-deep-mlp.npy --out "$TMP/fpemu-16-mixed"
"$BIN" compare "$TMP/fpemu-16-mixed" $D/deep-mlp-16-mixed.csv >"$TMP/real.out" 2>&1
rc=$?
{ [ $rc = 0 ] || [ $rc = 1 ]; } && grep -q "steps compared: 200$" "$TMP/real.out" && grep -q "^result: " "$TMP/real.out" \
    && pass "fpemu's deep-mlp 16-mixed against the H200's: compared (exit $rc)" || fail "the real comparison" "$(cat "$TMP/real.out")"
cmp_rc "--as-run beside a comparison; a run folder of train refused as --as-run target" 2 "holds tensors.csv" "$TMP/syn" "$TMP/t0.csv" --as-run "$TMP/fpemu-16-mixed"
"$BIN" report --out "$TMP/rep" "$TMP/fpemu-16-mixed" "$TMP/h200-deep-mlp-16-mixed" >"$TMP/rep.out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "^runs,fpemu-16-mixed,16-mixed," "$TMP/rep/summary.csv" && grep -q "^runs,h200-deep-mlp-16-mixed,16-mixed," "$TMP/rep/summary.csv" \
    && pass "fpemu report takes an --as-run folder beside fpemu's run" || fail "fpemu report with an --as-run folder" "$(cat "$TMP/rep.out")" "$(cat "$TMP/rep/summary.csv" 2>/dev/null)"
if command -v gnuplot >/dev/null 2>&1; then
    [ -s "$TMP/rep/runs/loss.png" ] && grep -q "h200-deep-mlp-16-mixed" "$TMP/rep/runs/loss.dat" && pass "... and draws both loss curves" || fail "the overlay plot"
else
    skip "the overlay plot (no gnuplot)"
fi

# ---- the recording scripts ---------------------------------------------------------------------------------
if [ -n "$PY" ]; then
    for f in python/fpemu/twins.py gpu/torch/record_runs.py gpu/torch/from_recording.py; do
        "$PY" -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' "$f" "$TMP/c.pyc" 2>"$TMP/pc.err" \
            && pass "$f compiles" || fail "$f compiles" "$(cat "$TMP/pc.err")"
    done
    # from_recording.py: the committed slices are its output for a recording of them
    mkdir -p "$TMP/rec"
    "$PY" - "$TMP/rec" $D <<'EOF' 2>"$TMP/rec.err"
import json, os, sys, zipfile
out, d = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(os.path.join(out, "rest.npz"), "w", zipfile.ZIP_DEFLATED) as z:
    for k in sorted(os.listdir(os.path.join(d, "init-mlp-digits"))):
        z.writestr("init_mlp-digits_" + k, open(os.path.join(d, "init-mlp-digits", k), "rb").read())
    z.writestr("order_mlp-digits.npy", open(os.path.join(d, "order-mlp-digits.npy"), "rb").read())
rec = {"loss": [], "scale": [], "skipped": [], "grad_norm": []}
for line in open(os.path.join(d, "mlp-digits-16-mixed.csv")):
    if line.startswith("# eval_loss: "): rec["eval_loss"] = float(line.split(": ")[1])
    elif line.startswith("# eval_accuracy: "): rec["eval_acc"] = float(line.split(": ")[1])
    elif line[0].isdigit():
        s, l, sc, sk, g = line.strip().split(",")
        rec["loss"].append(float(l)); rec["scale"].append(float(sc)); rec["skipped"].append(int(sk)); rec["grad_norm"].append(float(g))
json.dump({"mlp-digits/16-mixed/rep0": rec, "mlp-digits/16-mixed/rep1": rec}, open(os.path.join(out, "traces.json"), "w"))
EOF
    "$PY" gpu/torch/from_recording.py "$TMP/rec" "$TMP/rec/out" --folder mlp-digits --meta "device=NVIDIA H200" \
        --meta "software=PyTorch 2.11.0, CUDA 13.0" 2>>"$TMP/rec.err" && cmp -s "$TMP/rec/out/mlp-digits-16-mixed.csv" $D/mlp-digits-16-mixed.csv \
        && cmp -s "$TMP/rec/out/order-mlp-digits.npy" $D/order-mlp-digits.npy && diff -r "$TMP/rec/out/init-mlp-digits" $D/init-mlp-digits >/dev/null \
        && "$BIN" train --quiet --model mlp-digits --policy 32-true --steps 3 --init "$TMP/rec/out/init-mlp-digits.npz" --out "$TMP/rec/run" \
        && pass "gpu/torch/from_recording.py writes the committed slices from a recording of them (and an .npz --init reads)" \
        || fail "from_recording.py" "$(cat "$TMP/rec.err")"
else
    skip "the recording scripts compile (no python3)"
fi

tap_end
