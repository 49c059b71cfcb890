#!/bin/sh
# SPDX-License-Identifier: MIT
# gpu/f16acc-job.sh: the device run that added the three wgmma kinds with
# f16 accumulators (wgmma.m64n8k16.f16.f16.f16, m64n8k32.f16.e4m3.e4m3,
# m64n8k32.f16.e5m2.e5m2), re-running every other kind as a regression
# check. From the repository root, with bin/fpemu and bin/fpemu-gpu built
# (`make`; they are rebuilt here when the carried ones do not start):
#
#   OUT=/path/to/out sh gpu/f16acc-job.sh [new]
#
# `new` runs only the three new kinds (steps new-s1 and new-seed2: the
# second run, after the fp8 zero-c family was added to gpu/host/gen.c).
#
# Writes at most 8 files into $OUT (docs/gpu.md, "Results"):
#   info.txt          nvidia-smi, fpemu-gpu info, each step's command, exit
#                     status and seconds, tests/t_gpu_device.sh
#   s1.md             validate, seed 1, 100,000 random cases per kind, all kinds
#   rec-s1.bin        its recording (every kind: compared with the H100's)
#   rec-f16acc-s1.bin the same run restricted to the three new kinds
#                     (the recording kept in reports/gpu/)
#   probe.txt, probe.rec  fpemu-gpu probe (every floating-point MMA kind)
#   seed2.md          validate, seed 2, 1,000,000 per kind, all kinds
#   chain16.md        validate, seed 3, --chain 16, 200,000 per kind, the
#                     seven wgmma kinds
# and with `new`: info.txt, rec-f16acc-s1.bin, f16acc-s1.md (its report) and
# f16acc-seed2.md (seed 2, 1,000,000 per kind).
set -u
OUT=${OUT:?set OUT to the folder that comes back}
mkdir -p "$OUT" || exit 2
INFO=$OUT/info.txt
T0=$(date +%s)
NEW="--kind wgmma.m64n8k16.f16.f16.f16 --kind wgmma.m64n8k32.f16.e4m3.e4m3 --kind wgmma.m64n8k32.f16.e5m2.e5m2"
WG="--kind wgmma.m64n8k16.f32.f16.f16 --kind wgmma.m64n8k16.f32.bf16.bf16 --kind wgmma.m64n8k32.f32.e4m3.e4m3"
WG="$WG --kind wgmma.m64n8k32.f32.e5m2.e5m2 $NEW"
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
    echo "## the carried binaries do not start here: building" >>"$INFO"
    step build 150 make -j16 bin/fpemu bin/fpemu-gpu >>"$INFO" 2>&1
fi
"$G" info >>"$INFO" 2>&1 || { echo "## fpemu-gpu info: no usable device" >>"$INFO"; exit 2; }
if [ "${1:-all}" = new ]; then
    step new-s1 40 sh -c "$G validate $NEW --cases 100000 --seed 1 --stdout --max-lines 3000 --record $OUT/rec-f16acc-s1.bin >$OUT/f16acc-s1.md 2>>$INFO"
    step new-seed2 60 sh -c "$G validate $NEW --cases 1000000 --seed 2 --stdout --max-lines 200 >$OUT/f16acc-seed2.md 2>>$INFO"
    step device 30 sh -c "FPEMU_BIN=bin/fpemu sh tests/t_gpu_device.sh >>$INFO 2>&1"
    echo "## total $(($(date +%s) - T0)) s" >>"$INFO"
    grep -h '^instruction=' "$OUT/f16acc-s1.md" "$OUT/f16acc-seed2.md" 2>/dev/null
    awk '/^wgmma.m64n8k32.f16.e5m2.e5m2:/,/^## /' "$OUT/f16acc-s1.md"
    grep '^## step' "$INFO"
    exit 0
fi
step s1 50 sh -c "$G validate --cases 100000 --seed 1 --stdout --max-lines 3000 --record $OUT/rec-s1.bin >$OUT/s1.md 2>>$INFO"
step new-s1 25 sh -c "$G validate $NEW --cases 100000 --seed 1 --stdout --max-lines 3000 --record $OUT/rec-f16acc-s1.bin >/dev/null 2>>$INFO"
step probe 25 sh -c "$G probe --record $OUT/probe.rec >$OUT/probe.txt 2>>$INFO"
step seed2 100 sh -c "$G validate --cases 1000000 --seed 2 --stdout --max-lines 200 >$OUT/seed2.md 2>>$INFO"
step chain16 30 sh -c "$G validate $WG --cases 200000 --seed 3 --chain 16 --stdout --max-lines 200 >$OUT/chain16.md 2>>$INFO"
step device 30 sh -c "FPEMU_BIN=bin/fpemu sh tests/t_gpu_device.sh >>$INFO 2>&1"
echo "## total $(($(date +%s) - T0)) s" >>"$INFO"
grep -h '^instruction=' "$OUT/s1.md" "$OUT/seed2.md" "$OUT/chain16.md" 2>/dev/null
grep -E '^(==|verdict|block=|nfrac=|out_round=|out_mant=)' "$OUT/probe.txt" 2>/dev/null | tail -30
grep '^## step' "$INFO"
