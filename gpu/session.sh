#!/bin/sh
# SPDX-License-Identifier: MIT
# gpu/session.sh: everything this repository still needs from a GPU, recorded
# in one prepared run (a lent machine has PyTorch, CUDA and nvcc and no
# network; docs/gpu.md). From the repository root:
#
#   OUT=/path/to/out sh gpu/session.sh [SECONDS]
#
# SECONDS (default 540) is the whole run's budget, shared among the steps
# below; each step runs under its own `timeout`, so a step that fails or
# hangs costs its share and the next one still runs. Writes into $OUT:
#   env.txt        nvidia-smi, nvcc, Python, PyTorch, NumPy
#   ex2/           gpu/probes/ex2_approx.cu: what ex2.approx.ftz.f32 returns on
#                  every multiple of 2^-23 in [-1, 1] and 2^18 sampled inputs
#                  (ex2-approx.npz, packed by gpu/probes/pack_ex2.py; info.txt)
#                  for numerics=torch-cuda's expf (docs/replay.md)
#   linear/        record_cublas.py --linear: the three GEMMs of each Linear layer
#                  of the replayed runs (batch 32 and the evaluation's 297 rows),
#                  f32 (TF32 off), f16 and bf16: pair probes and random cases
#                  (the f32 sgemm order of deep-mlp 32-true, docs/replay.md)
#   runs/          record_runs.py: mlp-digits and deep-mlp under every policy,
#                  AdamW foreach=False and True (docs/replay.md)
#   cublas/        record_cublas.py --grid small --kernels with the time left (docs/cublas.md)
#   session.log    each step's command, exit status and seconds
# The exit status is 0 when every step finished, 1 otherwise.
set -u
OUT=${OUT:?set OUT to the folder that comes back}
BUDGET=${1:-540}
case $BUDGET in '' | *[!0-9]*) echo "gpu/session.sh: SECONDS must be a whole number, got '$BUDGET'" >&2; exit 2 ;; esac
PY=${PYTHON:-python3}
NVCC=${NVCC:-nvcc}
mkdir -p "$OUT/ex2" "$OUT/linear" "$OUT/runs" "$OUT/cublas" || exit 2
LOG=$OUT/session.log
T0=$(date +%s)
status=0

# step NAME SECONDS CMD...: run CMD under timeout, log it
step() {
    name=$1 secs=$2
    shift 2
    left=$((BUDGET - ($(date +%s) - T0)))
    [ "$secs" -gt "$left" ] && secs=$left
    if [ "$secs" -le 5 ]; then
        echo "== $name: skipped, the budget is spent" | tee -a "$LOG"
        status=1
        return
    fi
    echo "== $name ($secs s): $*" | tee -a "$LOG"
    s=$(date +%s)
    timeout -k 10 "$secs" "$@" >>"$LOG" 2>&1
    rc=$?
    echo "== $name: exit $rc, $(($(date +%s) - s)) s" | tee -a "$LOG"
    [ "$rc" -ne 0 ] && status=1
}

{
    date -u +%FT%TZ
    nvidia-smi 2>&1 | head -20
    "$NVCC" --version 2>&1 | tail -2
    "$PY" -c 'import sys, numpy, torch; print(sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__,
              "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device")' 2>&1
} >"$OUT/env.txt"

# the shapes of the replayed runs' Linear layers (python/fpemu/twins.py): mlp-digits
# 64-64-64-10, deep-mlp 64-32 (x16)-10, batch 32; the evaluation's 297 rows
LINEAR=32x64x64,32x10x64,32x32x64,32x32x32,32x10x32,297x64x64,297x10x64,297x32x64,297x32x32,297x10x32

step ex2-build 120 "$NVCC" -O2 -arch=sm_90 gpu/probes/ex2_approx.cu -o "$OUT/ex2/ex2_approx.bin"
step ex2-run 60 "$OUT/ex2/ex2_approx.bin" "$OUT/ex2"
step ex2-pack 60 "$PY" gpu/probes/pack_ex2.py "$OUT/ex2" "$OUT/ex2/ex2-approx.npz"
rm -f "$OUT/ex2/grid_out.bin" "$OUT/ex2/sample_in.bin" "$OUT/ex2/sample_out.bin" "$OUT/ex2/ex2_approx.bin"
step linear 150 env OUT="$OUT/linear" "$PY" gpu/torch/record_cublas.py --linear "$LINEAR" --dtypes f32,f16,bf16 --budget-s 120
step runs 180 env OUT="$OUT/runs" "$PY" gpu/torch/record_runs.py
left=$((BUDGET - ($(date +%s) - T0) - 20))
[ "$left" -gt 30 ] && step cublas "$left" env OUT="$OUT/cublas" "$PY" gpu/torch/record_cublas.py --grid small --kernels --budget-s $((left - 30))
echo "== done in $(($(date +%s) - T0)) s, exit $status" | tee -a "$LOG"
exit $status
