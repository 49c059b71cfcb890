#!/bin/sh
# SPDX-License-Identifier: MIT
# t_gpu_probes.sh: the parts of gpu/session.sh (a lent GPU's one prepared
# run) that can be checked without a GPU: gpu/probes/ex2_approx.cu builds
# with nvcc and its SASS uses the special function unit's MUFU.EX2; its
# --fake mode (the host's 2^x rounded to nearest in place of the GPU) goes
# through gpu/probes/pack_ex2.py into an .npz whose grid restores exactly;
# session.sh refuses a bad budget and, with no GPU, logs every step's
# failure and still runs the next. Prints TAP; skips without nvcc.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BUILD=${FPEMU_BUILD:-$ROOT/build}
. "$HERE/lib/tap.sh"
cd "$ROOT" || exit 1
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)}
if [ -z "$NVCC" ]; then echo "1..0 # SKIP no nvcc (the CUDA toolkit)"; exit 0; fi
PY=${FPEMU_PYTHON:-$BUILD/venv/bin/python}
if ! "$PY" -c 'import numpy' 2>/dev/null; then echo "1..0 # SKIP $PY has no numpy (make deps; make test sets FPEMU_PYTHON)"; exit 0; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_gpu_probes.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

if "$NVCC" -O2 -arch=sm_90 gpu/probes/ex2_approx.cu -o "$TMP/ex2" >"$TMP/nvcc.out" 2>&1; then
    pass "gpu/probes/ex2_approx.cu builds for sm_90"
else fail "gpu/probes/ex2_approx.cu builds for sm_90" "$(cat "$TMP/nvcc.out")"; fi
# cuobjdump (and the nvdisasm it runs): $CUOBJDUMP, PATH, next to nvcc, or the
# PyPI wheels `make gpu-tools` unpacks ($FPEMU_GPU_TOOLS, as t_gpu_sass.sh)
for d in "${FPEMU_GPU_TOOLS:-}" "$BUILD/gpu-tools/nvidia/cu13/bin" "$(dirname "$NVCC")"; do
    [ -n "$d" ] && [ -d "$d" ] && PATH="$PATH:$d"
done
export PATH
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || true)}
if [ -n "$CUOBJDUMP" ] && "$CUOBJDUMP" -sass "$TMP/ex2" >"$TMP/sass" 2>&1; then
    if grep -q "MUFU.EX2" "$TMP/sass"; then pass "its kernels run ex2.approx on the SFU (MUFU.EX2 in the SASS)"
    else fail "its kernels run ex2.approx on the SFU" "$(grep -c . "$TMP/sass") SASS lines, no MUFU.EX2"; fi
else skip "no cuobjdump: the SASS is not checked"; fi

mkdir "$TMP/raw"
if "$TMP/ex2" "$TMP/raw" --fake >"$TMP/fake.out" 2>&1 && grep -q "grid: 16777217 points, sample: 262144 inputs" "$TMP/fake.out" \
    && [ "$(stat -c %s "$TMP/raw/grid_out.bin")" = $((4 * 16777217)) ]; then
    pass "--fake: every grid point and sample written"
else fail "--fake: every grid point written" "$(cat "$TMP/fake.out")"; fi
"$TMP/ex2" >"$TMP/usage.out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "usage: ex2_approx DIR" "$TMP/usage.out" && pass "no folder: usage, exit 2" || fail "no folder: usage, exit 2" "exit $rc"

if "$PY" gpu/probes/pack_ex2.py "$TMP/raw" "$TMP/ex2.npz" >"$TMP/pack.out" 2>&1 \
    && grep -q "grid: 16777217 of 16777217 results equal 2^x rounded to nearest; diffs int8" "$TMP/pack.out" \
    && grep -q "sample: 262144 of 262144 equal" "$TMP/pack.out"; then
    pass "pack_ex2.py packs the raw arrays (int8 differences) and reads back the model's agreement"
else fail "pack_ex2.py packs the raw arrays" "$(cat "$TMP/pack.out")"; fi
if "$PY" - "$TMP/ex2.npz" "$TMP/raw/grid_out.bin" <<'EOF'
import sys
import numpy as np
z = np.load(sys.argv[1])
g = np.fromfile(sys.argv[2], dtype="<u4")
back = np.concatenate([z["grid_first"].astype(np.int64), z["grid_first"][0] + np.cumsum(z["grid_diff"].astype(np.int64))])
sys.exit(0 if (back == g).all() and z["sample_in"].size == 1 << 18 else 1)
EOF
then pass "the .npz restores every grid result bit for bit (cumulative sum of the differences)"
else fail "the .npz restores every grid result bit for bit"; fi
head -c 1000 "$TMP/raw/grid_out.bin" >"$TMP/short.bin" && mv "$TMP/short.bin" "$TMP/raw/grid_out.bin"
"$PY" gpu/probes/pack_ex2.py "$TMP/raw" "$TMP/bad.npz" >"$TMP/bad.out" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q "grid_out.bin holds 250 values, expected 16777217" "$TMP/bad.out" && [ ! -e "$TMP/bad.npz" ]; then
    pass "a short grid file is refused by name, and nothing is written"
else fail "a short grid file is refused by name" "exit $rc" "$(cat "$TMP/bad.out")"; fi

OUT="$TMP/s" sh gpu/session.sh 5x >"$TMP/s.out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "SECONDS must be a whole number, got '5x'" "$TMP/s.out" && pass "session.sh: a bad budget exits 2" \
    || fail "session.sh: a bad budget exits 2" "exit $rc" "$(cat "$TMP/s.out")"
# no GPU here: the ex2 run, and the steps that need one, fail; each is logged and the next runs
if ! nvidia-smi >/dev/null 2>&1; then
    OUT="$TMP/s" NVCC="$NVCC" PYTHON="$PY" sh gpu/session.sh 60 >"$TMP/s.out" 2>&1
    rc=$?
    nsteps=$(grep -c "^== [a-z0-9-]*: exit [0-9]*, [0-9]* s$" "$TMP/s/session.log" 2>/dev/null)
    if [ "$rc" = 1 ] && grep -q "^== ex2-build: exit 0" "$TMP/s/session.log" && grep -q "^== ex2-run: exit 1" "$TMP/s/session.log" \
        && [ "$nsteps" -ge 5 ] && grep -q "^== done in" "$TMP/s/session.log" && [ -s "$TMP/s/env.txt" ]; then
        pass "session.sh without a GPU: the build passes, the GPU steps fail, each logged ($nsteps steps), exit 1"
    else fail "session.sh without a GPU: each step logged" "exit $rc, $nsteps steps" "$(cat "$TMP/s/session.log" 2>&1 | grep '^==')"; fi
else skip "a GPU is present: the no-GPU run of session.sh is not checked"; fi
tap_end
