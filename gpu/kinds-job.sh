#!/bin/sh
# SPDX-License-Identifier: MIT
# gpu/kinds-job.sh: the device run that validates some instruction kinds of
# bin/fpemu-gpu (new ones, and old ones beside them) and probes them. From
# the repository root, with bin/fpemu-gpu built (`make gpu`; rebuilt here when
# the carried one does not start):
#
#   OUT=/path/to/out sh gpu/kinds-job.sh KIND...
#
# (2026-11-28: `wgmma.m64n8k8.f32.tf32.tf32 mma.m16n8k8.f32.tf32.tf32.f32`,
# and `mma.m16n8k32.f16.e4m3.e4m3.f16 mma.m16n8k32.f16.e5m2.e5m2.f16
# mma.m16n8k16.f16.f16.f16.f16 mma.m16n8k32.f32.e4m3.e4m3.f32`.)
# Writes into $OUT (docs/gpu.md, "Results"):
#   info.txt     nvidia-smi, fpemu-gpu info, each step's command, exit status
#                and seconds, tests/t_gpu_device.sh
#   s1.md        validate, seed 1, 100,000 random cases per kind
#   rec-s1.bin   its recording (make test replays it)
#   seed2.md     validate, seed 2, 1,000,000 per kind
#   chain16.md   validate, seed 3, --chain 16, 200,000 per kind
#   probe.txt, probe.rec   fpemu-gpu probe of the kinds, and its recording
set -u
OUT=${OUT:?set OUT to the folder that comes back}
mkdir -p "$OUT" || exit 2
INFO=$OUT/info.txt
T0=$(date +%s)
[ $# -gt 0 ] || { echo "gpu/kinds-job.sh: name the kinds (fpemu-gpu kinds)" >&2; exit 2; }
K=
for k in "$@"; do K="$K --kind $k"; done
G=bin/fpemu-gpu

step() { # NAME SECONDS CMD...: run CMD under timeout, log command, status and seconds
    name=$1 secs=$2
    shift 2
    t=$(date +%s)
    echo "## step $name: $*" >>"$INFO"
    timeout "$secs" "$@"
    rc=$?
    echo "## step $name: exit $rc, $(($(date +%s) - t)) s" >>"$INFO"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,uuid \
    --format=csv >"$INFO" 2>&1
if ! "$G" kinds >/dev/null 2>&1; then
    echo "## the carried binary does not start here: building" >>"$INFO"
    step build 150 make -j16 bin/fpemu-gpu >>"$INFO" 2>&1
fi
"$G" info >>"$INFO" 2>&1 || { echo "## fpemu-gpu info: no usable device" >>"$INFO"; exit 2; }
step s1 40 sh -c "$G validate $K --cases 100000 --seed 1 --stdout --max-lines 3000 --record $OUT/rec-s1.bin >$OUT/s1.md 2>>$INFO"
step probe 40 sh -c "$G probe $K --record $OUT/probe.rec >$OUT/probe.txt 2>>$INFO"
step seed2 60 sh -c "$G validate $K --cases 1000000 --seed 2 --stdout --max-lines 200 >$OUT/seed2.md 2>>$INFO"
step chain16 40 sh -c "$G validate $K --cases 200000 --seed 3 --chain 16 --stdout --max-lines 200 >$OUT/chain16.md 2>>$INFO"
[ -x bin/fpemu ] && step device 30 sh -c "FPEMU_BIN=bin/fpemu sh tests/t_gpu_device.sh >>$INFO 2>&1"
echo "## total $(($(date +%s) - T0)) s" >>"$INFO"
grep -h '^instruction=' "$OUT/s1.md" "$OUT/seed2.md" "$OUT/chain16.md" 2>/dev/null
grep -E '^(==|verdict|block=|nfrac=|out_round=|out_mant=|kind|inferred)' "$OUT/probe.txt" 2>/dev/null | tail -40
grep '^## step' "$INFO"
