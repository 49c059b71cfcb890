#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_cublas_linear.sh: `fpemu gemm --algo cublas --op OP` replays the three GEMMs
# of every Linear layer of the replayed runs as PyTorch's autograd called them
# on an NVIDIA H200 (tests/data/cublas-h200-linear/: rows {0, 1, M/2, M-1} and
# columns {0, 1, N/2, N-1} of each of the 90 recorded calls: forward F.linear
# with its bias (op linear), weight gradient mm(dY.t(), X) (mm-ta), input
# gradient mm(dY, W) (mm); f32, f16, bf16; batch 32 and 297; docs/cublas.md):
# every one of the 16 outputs of each call bit for bit, each call resolved to
# its row of the built-in table (the two op=mm-ta bf16 m=10 k=297 calls the
# table leaves out: the plain model, said so). Also: the fit of `--pairs` on
# three recorded pair probes (an f32 split the plain model misses, the f16
# chunks of 8, and --outfmt bf16). Needs NumPy ($FPEMU_PYTHON). Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
PY=${FPEMU_PYTHON:-$ROOT/build/venv/bin/python}
. "$HERE/lib/tap.sh"
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
if ! "$PY" -c "import numpy" 2>/dev/null; then
    echo "1..1"; echo "not ok 1 - $PY lacks numpy (make deps-py; make test sets FPEMU_PYTHON)"; exit 1
fi
cd "$ROOT" || exit 1
unset FPEMU_CUBLAS_TABLE
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_cublas_linear.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
D=tests/data/cublas-h200-linear

# one line per call: form dtype shape got/16 plain/16 resolved(table|plain) [stderr on failure];
# plain: a table with no rows, the plain model every call fell back to before
# these rows were fitted
printf 'fpemu_sumtree_table = 1\nname = empty\n' >"$TMP/empty.txt"
"$PY" - "$BIN" "$D/linear-slice.npz" "$TMP" >"$TMP/calls" 2>"$TMP/py.err" <<'PYEOF'
import subprocess, sys
import numpy as np
fp, path, tmp = sys.argv[1:4]
z = np.load(path)
ops = {"fwd": "linear", "wgrad": "mm-ta", "dgrad": "mm"}
def vals(c, dt):
    if dt == "f32": return c.view(np.float32)
    if dt == "f16": return c.view(np.float16).astype(np.float32)
    return (c.astype(np.uint32) << 16).view(np.float32)
for key in sorted(k[:-2] for k in z.files if k.endswith("_A")):
    form, dt, shape = key.split("_")
    A, B, Dr = z[key + "_A"], z[key + "_B"], z[key + "_D"]
    if dt == "f32": A, B = A.view(np.float32), B.view(np.float32)
    np.save(tmp + "/A.npy", A); np.save(tmp + "/B.npy", B)
    base = [fp, "gemm", "--model", "h100", "--afmt", dt, "--a", tmp + "/A.npy", "--b", tmp + "/B.npy", "--out", tmp + "/O.npy"]
    if dt != "f32": base += ["--outfmt", dt]
    if form == "fwd":
        np.save(tmp + "/C.npy", np.broadcast_to(vals(z[key + "_bias"], dt)[None, :], (A.shape[0], B.shape[1])).astype(np.float32))
        base += ["--c", tmp + "/C.npy"]
    want = vals(Dr, dt).view(np.uint32)
    r = subprocess.run(base + ["--algo", "cublas", "--op", ops[form], "--call-shape", shape], capture_output=True, text=True)
    if r.returncode:
        print(form, dt, shape, "-", "-", "error", r.stderr.strip().replace("\n", " ")); continue
    got = int((np.load(tmp + "/O.npy").view(np.uint32) == want).sum())
    res = "table" if " algo cublas: table cublas-h200 line " in r.stderr and "(checked: gemm)" in r.stderr else \
          "plain" if "is not in the table" in r.stderr else "unknown"
    p = subprocess.run(base + ["--algo", "cublas", "--op", ops[form], "--call-shape", shape, "--table", tmp + "/empty.txt"],
                       capture_output=True, text=True)
    plain = int((np.load(tmp + "/O.npy").view(np.uint32) == want).sum()) if p.returncode == 0 else -1
    print(form, dt, shape, got, plain, res, r.stderr.strip().replace("\n", " ") if got != want.size else "")
PYEOF
if [ ! -s "$TMP/calls" ]; then fail "the slice's calls replay" "$(cat "$TMP/py.err")"; tap_end; exit; fi
# per dtype and form: every call 16/16 and from its row (the two bf16 mm-ta k=297 m=10 calls: the plain model)
for dt in f32 f16 bf16; do
    for form in fwd wgrad dgrad; do
        awk -v dt="$dt" -v f="$form" '$1 == f && $2 == dt' "$TMP/calls" >"$TMP/sel"
        ncalls=$(wc -l <"$TMP/sel")
        bad=$(awk '{ split($3, s, "x"); ex = ($2 == "bf16" && $1 == "wgrad" && s[1] == 10 && s[3] == 297) ? "plain" : "table";
                     if ($4 != 16 || $6 != ex) print }' "$TMP/sel")
        sums=$(awk '{ g += $4; p += $5 } END { print g + 0, p + 0 }' "$TMP/sel")
        set -- $sums
        if [ "$ncalls" = 10 ] && [ -z "$bad" ]; then
            pass "$dt $form: 10 calls, $1/160 outputs bit for bit from the table's rows (the plain model: $2/160)"
        else fail "$dt $form: 10 calls, 160/160 outputs bit for bit from the table's rows" "calls: $ncalls" "$bad"; fi
    done
done

# the fit: f32 F.linear 32x64x64 (K cut in 4 partitions of 16: the pair answers
# leave 8 trees, the random outputs above decide), f16 mm-ta 10x64x297 (chunks
# of 8 the fitter's family does not try: unresolved), bf16 64x64x297 answers
# of a bf16 output: unresolved as f32, the plain tree with --outfmt bf16
P=$D/pairs-slice.npz
"$BIN" gemm --model h100 --afmt f32 --pairs "$P" >"$TMP/f32.fit" 2>&1
if grep -q "^fits leaf=fma-seq block=0 chain=preset chunk=0 split=4 unit=16 layout=contiguous reduce=seq reduce_fmt=f32 " "$TMP/f32.fit" \
    && grep -q "^status=ambiguous" "$TMP/f32.fit"; then pass "--pairs: f32 32x64x64 (F.linear): the table's split=4 unit=16 among the trees that fit"
else fail "--pairs: f32 32x64x64 fits split=4 unit=16" "$(cat "$TMP/f32.fit")"; fi
"$BIN" gemm --model h100 --afmt bf16 --pairs "$P" >"$TMP/bf.fit" 2>&1
"$BIN" gemm --model h100 --afmt bf16 --outfmt bf16 --pairs "$P" >"$TMP/bfo.fit" 2>&1
if grep -q "^status=unresolved" "$TMP/bf.fit" && grep -q "^status=resolved" "$TMP/bfo.fit" \
    && grep -q "^fits leaf=h100 block=0 chain=preset chunk=0 split=1 .* out=bf16$" "$TMP/bfo.fit"; then
    pass "--pairs --outfmt bf16: answers of a bf16 output fit the plain tree, printed with out=bf16 (as f32 answers: unresolved)"
else fail "--pairs --outfmt bf16 fits the plain tree" "$(cat "$TMP/bf.fit" "$TMP/bfo.fit")"; fi
"$BIN" gemm --model h100 --afmt bf16 --outfmt e4m3 --pairs "$P" >"$TMP/bad.fit" 2>&1
if [ $? != 0 ] && grep -q "is not a e4m3 value (--outfmt e4m3)" "$TMP/bad.fit"; then pass "--pairs --outfmt: an answer that is not a value of the format is refused, named"
else fail "--pairs --outfmt refuses answers outside the format" "$(cat "$TMP/bad.fit")"; fi

# --op: errors name the input
"$BIN" gemm --model h100 --afmt f16 --a x --b y --op linear --out "$TMP/o.npy" >"$TMP/e1" 2>&1
if [ $? != 0 ] && grep -q -- "--op goes with --algo cublas" "$TMP/e1"; then pass "--op without --algo cublas is refused"
else fail "--op without --algo cublas is refused" "$(cat "$TMP/e1")"; fi
"$PY" -c "import numpy as np; np.save('$TMP/a.npy', np.ones((2, 4), np.float32)); np.save('$TMP/b.npy', np.ones((4, 2), np.float32))"
"$BIN" gemm --model h100 --afmt f32 --a "$TMP/a.npy" --b "$TMP/b.npy" --algo cublas --op addmm --out "$TMP/o.npy" >"$TMP/e2" 2>&1
if [ $? != 0 ] && grep -q "call op 'addmm': expected one of mm mm-ta linear" "$TMP/e2"; then pass "--op: an unknown call is refused, with the choices"
else fail "--op: an unknown call is refused" "$(cat "$TMP/e2")"; fi
tap_end
