#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_cublas.sh: `fpemu gemm --algo cublas` replays what PyTorch's GEMMs returned
# on an NVIDIA H200 (tests/data/cublas-h200/: rows 0-3 and columns 0-3 of the
# 64 x 64 x K recordings, K = 16 ... 4096; docs/cublas.md): for f16 and bf16
# with f32 and native outputs, and e4m3 with and without fast accumulation and
# with a bf16 output, at least as many outputs bit for bit as when this test
# was written (a regression fails; more passes). The grid of 2026-11-27: one
# row and four columns of 24 calls (grid-* files), one per class of its rows,
# all 4/4 from a status=gemm row (two of them also with reduced-precision
# reduction off, which changes them); and tf32's input rounding on ties
# (tf32in-*). Also: shapes not in the table fall back to the plain model and
# say so; the fit of `--pairs` on the recorded
# pair probes (with and without recorded outputs); the options' errors. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
. "$HERE/lib/tap.sh"
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
cd "$ROOT" || exit 1
export FPEMU_ROOT=$ROOT
unset FPEMU_CUBLAS_TABLE
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_cublas.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
D=tests/data/cublas-h200

# words FILE: the 4-byte words of an .npy's data (version 1 header), one a line
words() {
    local h
    h=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
    od -An -v -tx4 -w4 -j$((10 + h)) "$1" | tr -d ' '
}
# same A B: how many words of the two .npy files are equal
same() { paste -d' ' <(words "$1") <(words "$2") | awk '$1 == $2 { n++ } END { print n + 0 }'; }
unz() { zcat "$D/$1.npy.gz" >"$TMP/$1.npy"; }

# dtype K output want-cublas (outputs of 16 equal bit for bit), options
while read -r dt k out want opts; do
    unz "${dt}_K${k}_A"; unz "${dt}_K${k}_B"; unz "${dt}_K${k}_D_${out}"
    base=(--model h100 --afmt "$dt" --a "$TMP/${dt}_K${k}_A.npy" --b "$TMP/${dt}_K${k}_B.npy")
    # shellcheck disable=SC2086
    if ! "$BIN" gemm "${base[@]}" --algo cublas --call-shape "64x64x$k" $opts --out "$TMP/c.npy" 2>"$TMP/c.err"; then
        fail "$dt K=$k $out: fpemu gemm --algo cublas runs" "$(cat "$TMP/c.err")"
        continue
    fi
    # shellcheck disable=SC2086
    "$BIN" gemm "${base[@]}" $(echo "$opts" | sed 's/--fast-accum//') --out "$TMP/p.npy" 2>/dev/null
    got=$(same "$TMP/c.npy" "$TMP/${dt}_K${k}_D_${out}.npy")
    plain=$(same "$TMP/p.npy" "$TMP/${dt}_K${k}_D_${out}.npy")
    if [ "$got" -ge "$want" ] && grep -q "table cublas-h200 line [0-9]* (checked: gemm)" "$TMP/c.err"; then
        pass "$dt K=$k $out: $got/16 outputs bit for bit (at least $want; the plain model: $plain/16)"
    else fail "$dt K=$k $out: $got/16 outputs bit for bit (at least $want)" "$(cat "$TMP/c.err")"; fi
done <<'EOF'
f16 16 f32out 16
f16 16 f16out 16 --outfmt f16
bf16 16 f32out 16
bf16 16 bf16out 16 --outfmt bf16
e4m3 16 fast0 16
e4m3 16 fast1 16 --fast-accum
e4m3 16 bf16out 16 --outfmt bf16
f16 32 f32out 16
f16 32 f16out 16 --outfmt f16
bf16 32 f32out 16
bf16 32 bf16out 16 --outfmt bf16
e4m3 32 fast0 16
e4m3 32 fast1 16 --fast-accum
e4m3 32 bf16out 16 --outfmt bf16
f16 128 f32out 16
f16 128 f16out 16 --outfmt f16
bf16 128 f32out 16
bf16 128 bf16out 16 --outfmt bf16
e4m3 128 fast0 16
e4m3 128 fast1 16 --fast-accum
e4m3 128 bf16out 16 --outfmt bf16
f16 512 f32out 16
f16 512 f16out 16 --outfmt f16
bf16 512 f32out 16
bf16 512 bf16out 16 --outfmt bf16
e4m3 512 fast0 16
e4m3 512 fast1 16 --fast-accum
e4m3 512 bf16out 16 --outfmt bf16
f16 4096 f32out 16
f16 4096 f16out 16 --outfmt f16
bf16 4096 f32out 16
bf16 4096 bf16out 16 --outfmt bf16
e4m3 4096 fast0 16
e4m3 4096 fast1 16 --fast-accum
e4m3 4096 bf16out 16 --outfmt bf16
EOF

# the split-K rows matter: at K = 4096 the plain model misses most f32 outputs
A=$TMP/f16_K4096_A.npy B=$TMP/f16_K4096_B.npy
"$BIN" gemm --model h100 --afmt f16 --a "$A" --b "$B" --out "$TMP/p.npy" 2>/dev/null
plain=$(same "$TMP/p.npy" "$TMP/f16_K4096_D_f32out.npy")
if [ "$plain" -lt 8 ]; then pass "f16 K=4096 f32out: the plain model gives $plain/16 (split-K is what explains the rest)"
else fail "f16 K=4096 f32out: the plain model gives $plain/16, expected few"; fi

# a shape not in the table: the plain model, and the command says so
"$BIN" gemm --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --out "$TMP/c.npy" 2>"$TMP/c.err"
if grep -q "this shape is not in the table cublas-h200 (.*): the plain model" "$TMP/c.err" && cmp -s "$TMP/c.npy" "$TMP/p.npy"; then
    pass "4 x 4 x 4096 (not in the table): the plain model's bits, and stderr says so"
else fail "4 x 4 x 4096 (not in the table): the plain model, said" "$(cat "$TMP/c.err")"; fi
"$BIN" gemm --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --call-shape 64x64x4096 --out "$TMP/c.npy" 2>"$TMP/c.err"
if grep -q "split=3 unit=64" "$TMP/c.err" && grep -q "stands for PyTorch 2.11.0 with CUDA 13.0" "$TMP/c.err"; then
    pass "the row used is named with its tree and what the table stands for"
else fail "the row used is named with its tree and what the table stands for" "$(cat "$TMP/c.err")"; fi

# values in ('<f2': the same codes read as f16 values, cast to f16 exactly): the same bits
asf2() { # the '<u2' file $1 as '<f2' values in $2 (the header's descr rewritten)
    local h
    h=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
    { head -c $((10 + h)) "$1" | sed "s/'<u2'/'<f2'/"; tail -c +$((11 + h)) "$1"; } >"$2"
}
asf2 "$A" "$TMP/Af.npy"; asf2 "$B" "$TMP/Bf.npy"
"$BIN" gemm --model h100 --afmt f16 --a "$TMP/Af.npy" --b "$TMP/Bf.npy" --algo cublas --call-shape 64x64x4096 --out "$TMP/x.npy" 2>"$TMP/x.err"
if [ "$(same "$TMP/x.npy" "$TMP/f16_K4096_D_f32out.npy")" = 16 ]; then pass "values in (f16 '<f2'), not codes: 16/16"
else fail "values in (f16 '<f2'), not codes: 16/16" "$(cat "$TMP/x.err")"; fi

# the fit on the recorded pair probes: the reading, and what fits
P=$D/pairprobe-slice.npz
"$BIN" gemm --model h100 --afmt f16 --pairs "$P" --shape 64x64x4096 >"$TMP/fit" 2>&1
if grep -q "^reading i=0: j=1..15: 16 lost; j=16..1407: 87 runs of 16, lost 32 to 1408; j=1408..2815" "$TMP/fit" &&
    grep -q "^status=ambiguous" "$TMP/fit" && grep -q "^fits leaf=h100 .* split=3 unit=64 .* reduce=seq reduce_fmt=f32" "$TMP/fit"; then
    pass "--pairs f16 64x64x4096: blocks of 16, a partition boundary at 1408; split 3 fits, the reduction's precision open (ambiguous)"
else fail "--pairs f16 64x64x4096" "$(cat "$TMP/fit")"; fi
"$BIN" gemm --model h100 --afmt f16 --pairs "$P" --shape 64x64x4096 --a "$A" --b "$B" --answers "$TMP/f16_K4096_D_f32out.npy" >"$TMP/fit" 2>&1
if grep -q "^status=resolved" "$TMP/fit" && [ "$(grep -c '^fits' "$TMP/fit")" = 1 ] &&
    grep -q "^fits leaf=h100 .* split=3 unit=64 layout=contiguous reduce=seq reduce_fmt=f32" "$TMP/fit"; then
    pass "--pairs with 16 recorded outputs: resolved, split 3 of tiles of 64 reduced in order in f32"
else fail "--pairs with 16 recorded outputs: resolved" "$(cat "$TMP/fit")"; fi
"$BIN" gemm --model h100 --afmt tf32 --pairs "$P" >"$TMP/fit" 2>&1
if grep -q "^shape=64x64x512 dtype=tf32" "$TMP/fit" && grep -q "^fits leaf=h100 .* split=8 unit=64 .* reduce=seq reduce_fmt=f32" "$TMP/fit"; then
    pass "--pairs tf32 64x64x512: 8 partitions of 64 fit"
else fail "--pairs tf32 64x64x512" "$(cat "$TMP/fit")"; fi

# grid small, 2026-11-27 (record_cublas.py): one row and four columns of a
# call per row class (tests/data/cublas-h200/README.md); every output bit for
# bit, from a row checked against the recording's random outputs
# replay LABEL WANT DT SHAPE P D [OPTS...]: fpemu gemm --algo cublas on
# $TMP/P_A.npy and $TMP/P_B.npy, rows and columns of a SHAPE call; all WANT
# outputs of the .npy D bit for bit, from a status=gemm row
replay() {
    local label=$1 want=$2 dt=$3 shape=$4 p=$5 d=$6 got row
    shift 6
    if ! "$BIN" gemm --model h100 --afmt "$dt" --a "$TMP/${p}_A.npy" --b "$TMP/${p}_B.npy" --algo cublas --call-shape "$shape" "$@" \
        --out "$TMP/c.npy" 2>"$TMP/c.err"; then
        fail "$label: fpemu gemm --algo cublas runs" "$(cat "$TMP/c.err")"
        return
    fi
    got=$(same "$TMP/c.npy" "$d")
    row=$(grep -o "line [0-9]* (checked: gemm): [^;]*" "$TMP/c.err" | sed 's/ c=epilogue alpha=1 beta=1//')
    if [ "$got" = "$want" ] && [ -n "$row" ]; then pass "$label: $want/$want outputs bit for bit ($row)"
    else fail "$label: $got/$want outputs bit for bit" "$(cat "$TMP/c.err")"; fi
}

while read -r dt shape kind opts; do
    [ -z "$dt" ] && continue
    g=grid-${dt}_${shape}
    unz "${g}_A"; unz "${g}_B"; unz "${g}_D_${kind}"
    # shellcheck disable=SC2086
    replay "grid $dt $shape $kind" 4 "$dt" "$shape" "$g" "$TMP/${g}_D_${kind}.npy" $opts
done <<'EOF2'
f16 64x64x130 f32out
f16 64x64x130 native --outfmt f16
f16 33x65x1000 f32out
f16 33x65x1000 native --outfmt f16
f16 127x255x1000 f32out
f16 64x64x8192 f32out
f16 64x64x8192 native --outfmt f16
bf16 256x256x130 f32out
bf16 256x256x130 native --outfmt bf16
bf16 33x65x512 f32out
bf16 33x65x512 native --outfmt bf16
bf16 16x16x4096 f32out
bf16 16x16x4096 native --outfmt bf16
bf16 127x255x130 f32out
bf16 127x255x130 native --outfmt bf16
f16 33x65x512 f32out
f16 33x65x512 native --outfmt f16
bf16 16x16x130 f32out
bf16 16x16x130 native --outfmt bf16
f16 33x65x512 red0 --outfmt f16 --no-reduced-precision-reduction
bf16 16x16x130 red0 --outfmt bf16 --no-reduced-precision-reduction
e4m3 16x16x48 bf16out --outfmt bf16
e4m3 16x16x48 fast0
e4m3 16x16x48 fast1 --fast-accum
e4m3 64x64x8192 bf16out --outfmt bf16
e4m3 64x64x8192 fast0
e4m3 64x64x8192 fast1 --fast-accum
tf32 33x65x48 f32
tf32 1024x1024x130 f32
tf32 256x256x1000 f32
tf32 16x16x16 f32
tf32 64x64x48 f32
tf32 511x1024x130 f32
tf32 16x16x1000 f32
tf32 127x255x1000 f32
tf32 511x1024x8192 f32
f32 1024x1024x48 f32
f32 511x1024x512 f32
f32 16x16x1000 f32
EOF2

# reduced-precision reduction off changes these two calls' outputs (their
# rows' f16/bf16 split-K partials): without the flag the red0 slice differs
for g in "f16 33x65x512" "bf16 16x16x130"; do
    set -- $g
    "$BIN" gemm --model h100 --afmt "$1" --a "$TMP/grid-${1}_${2}_A.npy" --b "$TMP/grid-${1}_${2}_B.npy" --algo cublas \
        --call-shape "$2" --outfmt "$1" --out "$TMP/c.npy" 2>"$TMP/c.err"
    got=$(same "$TMP/c.npy" "$TMP/grid-${1}_${2}_D_red0.npy")
    if [ "$got" -lt 4 ]; then pass "grid $1 $2 red0: without --no-reduced-precision-reduction $got/4 (partial_fmt matters)"
    else fail "grid $1 $2 red0: the flag changed nothing" "$(cat "$TMP/c.err")"; fi
done

# tf32 inputs (gpu/probes/tf32_inputs.py, 2026-11-28): f32 data whose 13 low
# bits are 0x1000, a tie for every element, where rounding to nearest even,
# away from zero and toward zero all differ; the kernels rounded to nearest
# even, as fpemu's tf32 cast does. 511 x 1024 x 130 ran an f32 SIMT kernel on
# the data as given (operands=f32). Every recorded output (16 x 16) bit for
# bit, from a status=gemm row.
while read -r shape v; do
    [ -z "$shape" ] && continue
    g=tf32in-${shape}-${v}
    unz "${g}_A"; unz "${g}_B"; unz "${g}_D"
    replay "tf32 inputs $shape $v" 256 tf32 "$shape" "$g" "$TMP/${g}_D.npy"
done <<'EOF3'
33x65x48 tie
16x16x16 tie
1024x1024x130 tie
511x1024x130 raw
EOF3

# errors: a message and exit status 2
err() {
    local what=$1 msg=$2; shift 2
    "$BIN" gemm "$@" >"$TMP/e.out" 2>&1
    local rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$msg" "$TMP/e.out"; then pass "error: $what"
    else fail "error: $what (exit $rc)" "$(cat "$TMP/e.out")"; fi
}
err "--fast-accum without fp8" "fp8 inputs" --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --fast-accum --out "$TMP/z.npy"
err "--fast-accum without --algo cublas" "goes with --algo cublas" --model h100 --afmt e4m3 --a "$A" --b "$B" --fast-accum --out "$TMP/z.npy"
err "--no-reduced-precision-reduction without --algo cublas" "goes with --algo cublas" --model h100 --afmt f16 --a "$A" --b "$B" \
    --no-reduced-precision-reduction --out "$TMP/z.npy"
err "--algo unknown" "plain or cublas" --model h100 --afmt f16 --a "$A" --b "$B" --algo fast --out "$TMP/z.npy"
err "--algo cublas with --promote" "no --scaling, --promote or --set" --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --promote 128 --out "$TMP/z.npy"
err "--table missing" "nosuch.txt" --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --table "$TMP/nosuch.txt" --out "$TMP/z.npy"
printf 'fpemu_sumtree_table = 1\na=f16 m=64 n=64 k=4096 split=none\n' >"$TMP/bad.txt"
err "a bad table row names the file and line" "bad.txt:2: split=none" --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --table "$TMP/bad.txt" --out "$TMP/z.npy"
err "--call-shape with another K" "the same K" --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --call-shape 64x64x512 --out "$TMP/z.npy"
err "--call-shape malformed" "MxNxK" --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --call-shape 64x64 --out "$TMP/z.npy"
err "--pairs for a dtype never recorded" "f16, bf16, f32, tf32 or e4m3" --model h100 --afmt e5m2 --pairs "$P"
err "--pairs: no arrays of the dtype in the file" "no out_bf16_" --model h100 --afmt bf16 --pairs "$P"
err "--pairs with --out" "no --out or --algo" --model h100 --afmt f16 --pairs "$P" --out "$TMP/z.npy"
printf 'fpemu_sumtree_table = 1\na=f16 m=64 n=64 k=4096 leaf=v100 split=3 unit=64\n' >"$TMP/v100.txt"
err "a row for another device" "models v100" --model h100 --afmt f16 --a "$A" --b "$B" --algo cublas --table "$TMP/v100.txt" --call-shape 64x64x4096 --out "$TMP/z.npy"
tap_end
