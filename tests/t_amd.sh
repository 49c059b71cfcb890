#!/bin/sh
# SPDX-License-Identifier: MIT
# t_amd.sh: the AMD presets and preset files through bin/fpemu
# (docs/tensor-cores.md, "AMD presets", "Preset files"): the probe recovers
# mi300's parameters, --describe shows the literature label, a preset saved
# with --save is accepted by mma, probe, gemm and train (--model FILE, mma=FILE)
# and gives the same answers, and mma=mi300 trains with the fnuz fp8 formats.
# Prints TAP.
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
. "$HERE/lib/tap.sh"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

check() { # name, command (eval'd), expected-pattern
    got=$(eval "$2" 2>&1)
    case $got in $3) pass "$1";; *) fail "$1" "$got";; esac
}

# the probe recovers the preset's parameters (stage 1 of the two-stage sum)
for a in e4m3fnuz f16 bf16 f32; do
    case $a in e4m3fnuz) blk=16;; f32) blk=4;; *) blk=8;; esac
    check "probe --model mi300 --a $a: block $blk, nfrac 24, rz, rne, matches mi300" \
        "\"$BIN\" probe --model mi300 --a $a 2>/dev/null | tr '\n' ' '" \
        "*block=$blk nfrac=24 *align_round=rz out_round=rne out_mant=23 *matches=mi300 *ok=1*"
done
check "mma --describe: mi300 is from the literature, with sources" "\"$BIN\" mma --model mi300 --a e4m3fnuz --b e5m2fnuz --describe" \
    "*fuse_nfrac=31*split=2*status=from the literature, not measured here*source=MMA-Sim*"
check "mma --describe: mi250 (CDNA2) flushes" "\"$BIN\" mma --model mi250 --a f16 --describe" \
    "*kind=pairwise*block=4*subnormals=flush*ftz=1*from the literature, not measured here*"
check "mi300 refuses OCP e4m3" "\"$BIN\" mma --model mi300 --a e4m3" "*has no MMA for e4m3 x e4m3*e4m3fnuz/e5m2fnuz*"
# hand-worked: c = -(1 + 2^-23) is cut toward -inf to 24 bits below 2^4
check "mi300 f16: 16 - (1 + 2^-23) = 15 - 2^-20" "echo 'BF800001 4C00 3C00' | \"$BIN\" mma --model mi300 --a f16" "BF800001 4C00 3C00 416FFFFF"

# preset files: save, then every command takes the path
"$BIN" mma --model mi300 --save "$T/mi300.preset" && pass "mma --model mi300 --save FILE" || fail "mma --save" "exit $?"
"$BIN" mma --model h100 --a e4m3 --set nfrac=11 --save "$T/h100-nfrac11.preset" && pass "mma --set ... --save FILE" || fail "save --set" "exit $?"
printf '3F800001 4C00 3C00 0800 8800 3C00 3C00\nBF800001 4C00 3C00\n' > "$T/in.txt"
want=$("$BIN" mma --model mi300 --a f16 < "$T/in.txt")
check "mma --model FILE: the saved preset's answers" "\"$BIN\" mma --model \"$T/mi300.preset\" --a f16 < \"$T/in.txt\"" "$want"
want=$(echo '46800000 38 38 38 38 38 38 38 38' | "$BIN" mma --model h100 --a e4m3 --set nfrac=11)
check "mma --model FILE: a --set model keeps its change" "echo '46800000 38 38 38 38 38 38 38 38' | \"$BIN\" mma --model \"$T/h100-nfrac11.preset\" --a e4m3" "$want"
check "mma --model FILE: formats the file does not bind" "\"$BIN\" mma --model \"$T/h100-nfrac11.preset\" --a f16 --describe" "*no binding for f16 x f16*"
check "probe --model FILE" "\"$BIN\" probe --model \"$T/mi300.preset\" --a e5m2fnuz 2>/dev/null | tr '\n' ' '" "*block=16 nfrac=24*matches=mi300*"
printf 'fpemu_mma_preset = 1\nname = bad\na = f16\nnfrac = 99\n' > "$T/bad.preset"
check "a bad preset file: file and line" "\"$BIN\" mma --model \"$T/bad.preset\" --a f16 --describe" "*bad.preset:4: option nfrac*"
check "the model list is the table's" "\"$BIN\" mma --model nosuch --a f16 --describe" "*v100, t4, a100, ada, h100, b200, mi250, mi300, exact, fma-seq, pairwise*"
check "mma --help lists the table's presets" "\"$BIN\" mma --help" "*mi250, mi300*"
check "gemm --help lists the table's presets" "\"$BIN\" gemm --help" "*mi250, mi300*"

# train: mma names a preset or a file; an AMD device trains with fnuz fp8
cd "$T" || exit 1
"$BIN" mma --model mi300 --save m3.preset >/dev/null
if "$BIN" train --model mlp-digits --policy fp8-current --set mma=mi300 --steps 2 --out tr --quiet >/dev/null 2>"$T/err" &&
   grep -q e4m3fnuz tr/tensors.csv && grep -q e5m2fnuz tr/tensors.csv && ! grep -q ',e4m3,' tr/tensors.csv; then
    pass "train --set mma=mi300: fp8 GEMMs in e4m3fnuz / e5m2fnuz"
else fail "train mma=mi300 fnuz" "$(cat "$T/err")"; fi
if "$BIN" train --model mlp-digits --policy fp8-current --set mma=m3.preset --steps 2 --out tr2 --quiet >/dev/null 2>"$T/err" &&
   cmp -s tr/metrics.csv tr2/metrics.csv; then
    pass "train --set mma=FILE: the same run as mma=mi300"
else fail "train mma=FILE" "$(cat "$T/err")"; fi
check "train --set mma=mi250 with fp8: refused (CDNA2 has no fp8)" \
    "\"$BIN\" train --model mlp-digits --policy fp8-current --set mma=mi250 --steps 1 --out tr3 --quiet" "*mi250 has no MMA for e4m3 x e4m3*"
check "train --set mma=nosuch: the table's names" \
    "\"$BIN\" train --model mlp-digits --policy fp8-current --set mma=nosuch --steps 1 --out tr4" "*expected one of: v100*mi300*or a preset file*"
tap_end
