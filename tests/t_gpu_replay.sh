#!/bin/sh
# SPDX-License-Identifier: MIT
# t_gpu_replay.sh: the H100's recorded outputs (reports/gpu/*.rec.xz, from
# `fpemu-gpu validate --record` on the device) replayed against the current
# emu models, on any machine: every instruction kind must still agree bit
# for bit, the recorded probe must still match the h100 preset, and the
# model parameters fitted to the hardware must each matter (changing one
# brings mismatches back), so a model change that the silicon contradicts
# fails here, without a GPU. The H200's recordings of 2026-11-27 (the three
# wgmma kinds with f16 accumulators, and a probe of every floating-point
# kind) and of 2026-11-28 (wgmma with tf32 inputs, mma.sync with fp8 inputs
# and f16 accumulators) are replayed the same way.
bindir=$(dirname "${FPEMU_BIN:-bin/fpemu}")
bin="$bindir/fpemu-gpu"
rec=reports/gpu/NVIDIA-H100-80GB-HBM3-2026-11-22.rec.xz
prec=reports/gpu/NVIDIA-H100-80GB-HBM3-2026-11-22.probe.rec.xz
if [ ! -x "$bin" ]; then
    echo "1..0 # SKIP $bin not built (no nvcc)"
    exit 0
fi
if ! command -v xz >/dev/null 2>&1; then
    echo "1..1"; echo "not ok 1 - xz is not installed (the recordings are xz-compressed; make deps installs xz-utils)"
    exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/tap.sh"
xz -dc "$rec" >"$tmp/rec" && xz -dc "$prec" >"$tmp/prec"

# replay with the options of the recorded run (its header says them)
replay() {
    "$bin" validate --replay "$tmp/rec" --cases 100000 --seed 1 --stdout "$@" >"$tmp/out" 2>"$tmp/err"
}

replay
rc=$?
lines=$(grep -c '^instruction=.* mismatches=0$' "$tmp/out")
if [ $rc -eq 0 ] && [ "$lines" -eq 24 ]; then
    pass "the H100 recording: 24 instruction kinds, 0 mismatches against today's models"
else
    fail "the H100 recording: exit $rc, $lines of 24 kinds without mismatches" \
        "$(grep '^instruction=' "$tmp/out" | grep -v 'mismatches=0$')" "$(head -5 "$tmp/err")"
fi
floors=$(grep -c '^emax floor: bits at 2^-159 cut, at 2^-158 kept: with nfrac 25 the floor is -133[.]$' "$tmp/out")
f16floor=$(grep -c '^emax floor: bits at 2^-47 cut, at 2^-46 kept: with nfrac 25 the floor is -21[.]$' "$tmp/out")
if grep -q '^- backend: replay, emu preset: h100' "$tmp/out" && grep -q '^- device: NVIDIA H100 80GB HBM3' "$tmp/out" &&
    [ "$floors" -eq 3 ] && [ "$f16floor" -eq 1 ]; then
    pass "the replayed report names the recorded device, says replay, and places the floor at -133 (3 kinds) and -21 (f16 accumulators)"
else
    fail "replayed report header or open points ($floors f32 and $f16floor f16 floor lines)" "$(head -8 "$tmp/out")"
fi

# each fitted parameter, set back to the value the preset had before the
# hardware run, brings mismatches back in the kinds it concerns
# setcheck REPLAY WHAT OPT KINDS [OTHERS]: REPLAY (a function running one
# recording) with --set OPT exits 1, every kind whose line KINDS matches
# (grep -E) mismatches, and none whose line OTHERS matches does
setcheck() {
    fn=$1 what=$2 opt=$3 kinds=$4 others=${5:-^\$}
    "$fn" --set "$opt"
    rc=$?
    bad=$(grep '^instruction=' "$tmp/out" | grep -v 'mismatches=0$' | sed 's/^instruction=\([^ ]*\).*/\1/' | tr '\n' ' ')
    want=$(grep '^instruction=' "$tmp/out" | grep -E "$kinds" | grep -c -v 'mismatches=0$')
    all=$(grep '^instruction=' "$tmp/out" | grep -c -E "$kinds")
    clean=$(grep '^instruction=' "$tmp/out" | grep -E "$others" | grep -c -v 'mismatches=0$')
    if [ $rc -eq 1 ] && [ "$want" -eq "$all" ] && [ "$all" -gt 0 ] && [ "$clean" -eq 0 ]; then pass "$what (--set $opt): mismatches in $bad"
    else fail "$what (--set $opt): exit $rc, mismatching kinds: $bad"; fi
}
check() { setcheck replay "$@"; } # what, set option, kinds that must now mismatch
check "emax floor one lower" emax_floor=-134 '^instruction=(mma|wgmma)[.][^ ]*(bf16|tf32)|f16[.]f16[.]f16[.]f16'
check "a zero c counted at emin" zero_c=emin '^instruction=(mma|wgmma)[.][^ ]*(bf16|tf32)'
check "IEEE signs of zero" zero_sign=ieee '^instruction=(mma[.]m16n8k16|mma[.]m16n8k8|wgmma)[.]'

# the H200's recording of the three wgmma kinds with f16 accumulators
# (reports/gpu/NVIDIA-H200-2026-11-27.f16acc.*: `gpu/f16acc-job.sh new` of
# commit d810f06, whose steps gpu/kinds-job.sh now runs for the kinds named)
frec=reports/gpu/NVIDIA-H200-2026-11-27.f16acc.rec.xz
xz -dc "$frec" >"$tmp/frec"
freplay() {
    "$bin" validate --replay "$tmp/frec" --kind wgmma.m64n8k16.f16.f16.f16 --kind wgmma.m64n8k32.f16.e4m3.e4m3 \
        --kind wgmma.m64n8k32.f16.e5m2.e5m2 --cases 100000 --seed 1 --stdout "$@" >"$tmp/out" 2>"$tmp/err"
}
freplay
rc=$?
lines=$(grep -c '^instruction=wgmma[.][^ ]*[.]f16[.].* mismatches=0$' "$tmp/out")
f16floor=$(grep -c '^emax floor: bits at 2^-47 cut, at 2^-46 kept: with nfrac 25 the floor is -21[.]$' "$tmp/out")
fp8zero=$(grep -c '^- f16 floor j=-3[0-2]: gpu 00000001 .*kept; model 00000001$' "$tmp/out")
if [ $rc -eq 0 ] && [ "$lines" -eq 3 ] && [ "$f16floor" -eq 1 ] && [ "$fp8zero" -eq 3 ] &&
    grep -q '^- device: NVIDIA H200' "$tmp/out"; then
    pass "the H200 f16-accumulator wgmma recording: 3 kinds, 0 mismatches; floor -21 for f16 inputs; e5m2 keeps 2^-32 beside 2^-25 with c = 0"
else
    fail "the H200 f16-accumulator wgmma recording: exit $rc, $lines of 3 kinds without mismatches, $f16floor floor lines, $fp8zero e5m2 tie lines" \
        "$(grep '^instruction=' "$tmp/out")" "$(head -5 "$tmp/err")"
fi
fcheck() { setcheck freplay "f16 accumulators, $1" "$2" "$3" "$4"; } # what, set option, kinds that must mismatch, that must not
fcheck "nfrac 24" nfrac=24 '.' '^$'
fcheck "fp8 at nfrac 14" nfrac=14 '.' '^$'
fcheck "blocks of 16 for fp8" block=16 'e4m3|e5m2' 'f16[.]f16[.]f16 '
fcheck "round to nearest, ties away" out_round=rna '.' '^$'
fcheck "a zero c counted at emin" zero_c=emin 'f16[.]f16[.]f16 |e5m2' 'e4m3'
fcheck "emax floor one lower" emax_floor=-22 'f16[.]f16[.]f16 ' 'e4m3|e5m2'
fcheck "IEEE signs of zero" zero_sign=ieee '.' '^$'

# the H200's recording of wgmma with tf32 inputs, beside mma.sync's tf32 kind
# (reports/gpu/NVIDIA-H200-2026-11-28.wgmma-tf32.*: gpu/kinds-job.sh with the two kinds)
xz -dc reports/gpu/NVIDIA-H200-2026-11-28.wgmma-tf32.rec.xz >"$tmp/trec"
treplay() {
    "$bin" validate --replay "$tmp/trec" --kind wgmma.m64n8k8.f32.tf32.tf32 --kind mma.m16n8k8.f32.tf32.tf32.f32 \
        --cases 100000 --seed 1 --stdout "$@" >"$tmp/out" 2>"$tmp/err"
}
treplay
rc=$?
lines=$(grep -c '^instruction=[^ ]*tf32[^ ]* .* mismatches=0$' "$tmp/out")
floors=$(grep -c '^emax floor: bits at 2^-159 cut, at 2^-158 kept: with nfrac 25 the floor is -133[.]$' "$tmp/out")
if [ $rc -eq 0 ] && [ "$lines" -eq 2 ] && [ "$floors" -eq 2 ] && grep -q '^- device: NVIDIA H200' "$tmp/out"; then
    pass "the H200 tf32 recording: wgmma and mma.sync, 0 mismatches; floor -133 for both"
else
    fail "the H200 tf32 recording: exit $rc, $lines of 2 kinds without mismatches, $floors floor lines" \
        "$(grep '^instruction=' "$tmp/out")" "$(head -5 "$tmp/err")"
fi
for opt in nfrac=24 block=4 out_round=rne emax_floor=-134 zero_c=emin zero_sign=ieee; do
    setcheck treplay "tf32, both kinds" "$opt" '.'
done
xz -dc reports/gpu/NVIDIA-H200-2026-11-28.wgmma-tf32.probe.rec.xz >"$tmp/prec3"
"$bin" probe --kind wgmma.m64n8k8.f32.tf32.tf32 --kind mma.m16n8k8.f32.tf32.tf32.f32 --replay "$tmp/prec3" >"$tmp/probe" 2>"$tmp/perr"
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^verdict: agrees with preset h100' "$tmp/probe")" -eq 2 ] &&
    grep -q '^== wgmma.m64n8k8.f32.tf32.tf32 ' "$tmp/probe"; then
    pass "the H200 tf32 probe: wgmma and mma.sync agree with preset h100 (block 8, nfrac 25, rz)"
else
    fail "the H200 tf32 probe: exit $rc" "$(grep -E '^(==|verdict)' "$tmp/probe")" "$(head -5 "$tmp/perr")"
fi

# the H200's recording of mma.sync with fp8 inputs and f16 accumulators
# (sm_90a lowers it to an f16 unpack, two HMMA.16816.F16 and an HADD2),
# beside the f16-accumulator and f32 fp8 kinds (gpu/kinds-job.sh)
xz -dc reports/gpu/NVIDIA-H200-2026-11-28.fp8-f16acc.rec.xz >"$tmp/qrec"
qreplay() {
    "$bin" validate --replay "$tmp/qrec" --kind mma.m16n8k32.f16.e4m3.e4m3.f16 --kind mma.m16n8k32.f16.e5m2.e5m2.f16 \
        --kind mma.m16n8k16.f16.f16.f16.f16 --kind mma.m16n8k32.f32.e4m3.e4m3.f32 --cases 100000 --seed 1 --stdout "$@" \
        >"$tmp/out" 2>"$tmp/err"
}
qreplay
rc=$?
lines=$(grep -c '^instruction=mma[.].* mismatches=0$' "$tmp/out")
if [ $rc -eq 0 ] && [ "$lines" -eq 4 ] && grep -q '^- device: NVIDIA H200' "$tmp/out"; then
    pass "the H200 fp8 mma.sync recording with f16 accumulators: 4 kinds, 0 mismatches"
else
    fail "the H200 fp8 mma.sync recording with f16 accumulators: exit $rc, $lines of 4 kinds without mismatches" \
        "$(grep '^instruction=' "$tmp/out")" "$(head -5 "$tmp/err")"
fi
for opt in nfrac=24 block=8 out_round=rtz; do
    setcheck qreplay "fp8 with f16 accumulators" "$opt" 'm16n8k32[.]f16[.]'
done

# the recorded probe: every kind the preset models agrees with it
"$bin" probe --replay "$tmp/prec" >"$tmp/probe" 2>"$tmp/perr"
rc=$?
agree=$(grep -c '^verdict: agrees with preset h100' "$tmp/probe")
if [ $rc -eq 0 ] && [ "$agree" -eq 8 ]; then
    pass "the recorded probe: 8 kinds agree with preset h100 (the 2 fp8 mma.sync kinds have no preset)"
else
    fail "the recorded probe: exit $rc, $agree of 8 agree" "$(grep -E '^(==|verdict)' "$tmp/probe")" "$(head -5 "$tmp/perr")"
fi
# the H200's probe of 2026-11-27 (every floating-point kind, the three
# f16-accumulator wgmma kinds included)
xz -dc reports/gpu/NVIDIA-H200-2026-11-27.probe.rec.xz >"$tmp/prec2"
"$bin" probe --replay "$tmp/prec2" >"$tmp/probe" 2>"$tmp/perr"
rc=$?
agree=$(grep -c '^verdict: agrees with preset h100' "$tmp/probe")
if [ $rc -eq 0 ] && [ "$agree" -eq 11 ] && grep -q '^== wgmma.m64n8k32.f16.e5m2.e5m2 ' "$tmp/probe"; then
    pass "the H200 probe: 11 kinds agree with preset h100, the 3 f16-accumulator wgmma kinds among them"
else
    fail "the H200 probe: exit $rc, $agree of 11 agree" "$(grep -E '^(==|verdict)' "$tmp/probe")" "$(head -5 "$tmp/perr")"
fi
tap_end
