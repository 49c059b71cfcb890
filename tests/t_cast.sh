#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_cast.sh: `fpemu cast` (cli/cmd_cast.c, docs/cast.md): every input dtype
# (f64, f32, f16, ml_dtypes bfloat16 / float8 as np.save writes them),
# values and --codes, every scaling recipe against hand-computed scales,
# --axis on 1-d, 2-d and 3-d arrays, the stats against a recomputation in
# NumPy, values against ml_dtypes (e4m3, e5m2, bf16, rne), the torch NaN
# policy against the H200 slice in tests/data/real-runs/, bad input (exit
# 2, named, no output), a cast's files put in place together (a failing one
# leaves every existing file as it was), --plot. Needs NumPy and ml_dtypes ($FPEMU_PYTHON,
# the build/venv interpreter under make test). Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
PY=${FPEMU_PYTHON:-$ROOT/build/venv/bin/python}
DATA=$ROOT/tests/data/real-runs
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu)"; exit 1; fi
if ! "$PY" -c 'import numpy, ml_dtypes' 2>/dev/null; then
    echo "1..1"; echo "not ok 1 - $PY lacks numpy/ml_dtypes (make deps-py; make test sets FPEMU_PYTHON)"; exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_cast.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib/tap.sh"

# check NAME PYTHON...: run the python (which may read $TMP files as T), pass if it prints OK
check() {
    local name=$1; shift
    local out
    out=$(cd "$TMP" && "$PY" -c "import numpy as np, ml_dtypes, json, sys, math; T='$TMP'
$*" 2>&1)
    if [ "$out" = OK ]; then pass "$name"; else fail "$name" "$out"; fi
}
cast() { "$BIN" cast "$@" 2>"$TMP/err"; }

# ---- inputs ----
(cd "$TMP" && "$PY" - <<'PY'
import numpy as np, ml_dtypes
rng = np.random.default_rng(1)
x = (rng.standard_normal(4096) * 2.0 ** rng.integers(-24, 12, 4096)).astype(np.float32)
x[:8] = [0, -0.0, 1e-30, -1e-30, 1000, -1000, 448, -464]
np.save("f32.npy", x)
sp = np.array([np.nan, -np.nan, np.inf, -np.inf, 1.0, 3e38, -1e-40], np.float32)
np.save("special.npy", sp)
np.save("f64.npy", x.astype(np.float64))
np.save("f64_dr.npy", np.array([1 + 2.0**-4 + 2.0**-40, -(1 + 2.0**-4 + 2.0**-40)]))   # double rounding via f32 would give 1
np.save("f16.npy", x.astype(np.float16))
np.save("bf16.npy", x.astype(ml_dtypes.bfloat16))
np.save("e4m3_in.npy", x.astype(ml_dtypes.float8_e4m3fn))
np.save("e5m2_in.npy", x.astype(ml_dtypes.float8_e5m2))
m = (rng.standard_normal((6, 256)) * np.exp(rng.standard_normal((6, 1)) * 3)).astype(np.float32)
m[2, 40:70] *= 1e-3
np.save("m.npy", m)
np.save("mT.npy", np.ascontiguousarray(m.T))
t3 = rng.standard_normal((3, 64, 5)).astype(np.float32)
np.save("t3.npy", t3)
np.save("t3m.npy", np.ascontiguousarray(np.moveaxis(t3, 1, 2)))
np.save("i4.npy", np.arange(4, dtype=np.int32))
PY
) || { echo "1..1"; echo "not ok 1 - writing the inputs failed"; exit 1; }

# ---- values and codes against ml_dtypes (rne, no scaling) ----
for f in e4m3:float8_e4m3fn e5m2:float8_e5m2 bf16:bfloat16; do
    fmt=${f%%:*}; md=${f#*:}
    if cast --to $fmt --in "$TMP/f32.npy" --out "$TMP/v_$fmt.npy" && cast --to $fmt --in "$TMP/f32.npy" --out "$TMP/c_$fmt.npy" --codes; then
        check "cast --to $fmt: values and codes equal ml_dtypes' $md" "
x = np.load(T + '/f32.npy'); ref = x.astype(ml_dtypes.$md)
v = np.load(T + '/v_$fmt.npy'); c = np.load(T + '/c_$fmt.npy')
rc = ref.view(np.uint8 if ref.itemsize == 1 else np.uint16)
assert v.dtype == np.float32 and v.shape == x.shape, v.dtype
assert c.dtype == rc.dtype, (c.dtype, rc.dtype)
assert np.array_equal(v, ref.astype(np.float32), equal_nan=True), np.flatnonzero(v != ref.astype(np.float32))[:5]
nan = np.isnan(v)   # ml_dtypes' NaN keeps the input's sign (-1000 -> 0xFF); canonical is positive
assert np.array_equal(c[~nan], rc[~nan]), np.flatnonzero((c != rc) & ~nan)[:5]
print('OK')"
    else fail "cast --to $fmt" "$(cat "$TMP/err")"; fi
done

# ---- every input dtype ----
for d in f64 f16 bf16 e4m3_in e5m2_in; do
    extra=""; [ $d = e4m3_in ] && extra="--from e4m3"
    if cast --to e5m2 --in "$TMP/$d.npy" --out "$TMP/o_$d.npy" $extra; then
        check "input $d: read and cast (output dtype, values = the cast of its values)" "
import ml_dtypes as m
src = {'f64': lambda: np.load(T+'/f64.npy'), 'f16': lambda: np.load(T+'/f16.npy'),
       'bf16': lambda: np.load(T+'/bf16.npy').view(m.bfloat16), 'e4m3_in': lambda: np.load(T+'/e4m3_in.npy').view(m.float8_e4m3fn),
       'e5m2_in': lambda: np.load(T+'/f32.npy').astype(m.float8_e5m2)}['$d']()   # NumPy cannot read back its own '<f1'
o = np.load(T + '/o_$d.npy')
want = np.float64 if '$d' == 'f64' else np.float32
assert o.dtype == want, o.dtype
ref = src.astype(np.float32).astype(m.float8_e5m2).astype(want) if '$d' != 'f64' else src.astype(m.float8_e5m2).astype(np.float64)
assert np.array_equal(o, ref, equal_nan=True), np.flatnonzero(o != ref)[:5]
print('OK')"
    else fail "input $d" "$(cat "$TMP/err")"; fi
done
if cast --to e4m3 --in "$TMP/f64_dr.npy" --out "$TMP/o_dr.npy"; then
    check "f64 input is rounded once (1 + 2^-4 + 2^-40 -> 1.125 in e4m3, not 1 through f32)" "
o = np.load(T + '/o_dr.npy'); assert o.dtype == np.float64 and list(o) == [1.125, -1.125], o; print('OK')"
else fail "f64 double rounding" "$(cat "$TMP/err")"; fi
cast --to e4m3 --in "$TMP/e4m3_in.npy" --out "$TMP/x.npy"
rc=$?
if [ $rc = 2 ] && grep -q "e4m3_in.npy.*--from" "$TMP/err" && [ ! -e "$TMP/x.npy" ]; then pass "one-byte '<V1' input without --from: exit 2, asks for --from"
else fail "'<V1' without --from" "rc=$rc" "$(cat "$TMP/err")"; fi

# ---- stats against NumPy ----
cat "$TMP/f32.npy" >/dev/null
(cd "$TMP" && "$PY" -c "
import numpy as np
x = np.concatenate([np.load('f32.npy'), np.load('special.npy')]); np.save('st.npy', x)")
for sat in "" "--sat"; do
    if cast --to e4m3 --in "$TMP/st.npy" --out "$TMP/st_o.npy" $sat --stats "$TMP/st.txt" --stats-json "$TMP/st.json"; then
        check "stats ${sat:-non-saturating} e4m3: counts, amax and errors equal a NumPy recomputation" "
x = np.load(T+'/st.npy').astype(np.float64); y = np.load(T+'/st_o.npy').astype(np.float64); j = json.load(open(T+'/st.json'))
fin = np.isfinite(x); sat = '$sat' != ''
big = fin & (np.abs(x) > 464)   # e4m3: max 448, halfway to the next binade step 480 is 464
ok = fin & np.isfinite(y)
e = np.abs(y[ok] - x[ok]); nz = ok & (x != 0)
want = {'n': len(x), 'nonfinite_in': int((~fin).sum()), 'overflow': int(big.sum()), 'saturated': int(big.sum()) if sat else 0,
        'flushed': int((fin & (x != 0) & (y == 0)).sum()), 'subnormal': int((fin & (x != 0) & (y != 0) & (np.abs(y) < 2.0**-6)).sum())}
for k, v in want.items(): assert j[k] == v, (k, j[k], v)
assert j['amax'] == np.abs(x[fin]).max()
assert j['compared'] == ok.sum()
assert math.isclose(j['max_abs_err'], e.max(), rel_tol=1e-15), (j['max_abs_err'], e.max())
assert math.isclose(j['max_rel_err'], (np.abs(y[nz] - x[nz]) / np.abs(x[nz])).max(), rel_tol=1e-12)
assert math.isclose(j['rms_err'], math.sqrt((e**2).mean()), rel_tol=1e-9)
assert math.isclose(j['sqnr_db'], 10 * math.log10((x[ok]**2).sum() / (e**2).sum()), rel_tol=1e-9)
assert math.isclose(j['flushed_frac'], want['flushed'] / len(x))
t = open(T+'/st.txt').read(); assert ('n             %d' % len(x)) in t and 'sqnr_db' in t, t
print('OK')"
    else fail "stats $sat" "$(cat "$TMP/err")"; fi
done
out=$("$BIN" cast --to bf16 --in "$TMP/f32.npy" --out "$TMP/o.npy" --stats - 2>&1)
if printf '%s\n' "$out" | grep -q '^flushed ' && printf '%s\n' "$out" | grep -q '^sqnr_db '; then pass "--stats - prints the figures on standard output"
else fail "--stats -" "$out"; fi

# ---- scaling recipes against hand-computed scales ----
for r in tensor tensor-torchao rowwise blockwise mx-floor mx-rceil; do
    if cast --to e4m3 --in "$TMP/m.npy" --out "$TMP/s_$r.npy" --codes --scaling $r --stats-json "$TMP/s_$r.json" &&
       cast --to e4m3 --in "$TMP/m.npy" --out "$TMP/sv_$r.npy" --scaling $r; then
        check "--scaling $r: codes and values equal the recipe computed by hand" "
m8 = ml_dtypes.float8_e4m3fn; f32 = np.float32
X = np.load(T+'/m.npy'); C = np.load(T+'/s_$r.npy'); V = np.load(T+'/sv_$r.npy'); j = json.load(open(T+'/s_$r.json'))
def q(a): return np.clip(a, -448, 448).astype(f32).astype(m8)
codes = np.empty(X.shape, np.uint8); vals = np.empty(X.shape, f32)
r = '$r'
if r in ('tensor', 'tensor-torchao'):
    am = np.abs(X).max()
    s = f32(448) / f32(am) if r == 'tensor' else f32(448.0 / max(float(am), 1e-12))
    y = q(X * s); codes[:] = y.view(np.uint8); vals[:] = y.astype(f32) * (f32(1) / s)
    assert j['scale'] == float(s), (j['scale'], s)
elif r == 'rowwise':
    for i in range(X.shape[0]):
        s = f32(448.0 / float(np.abs(X[i]).max())); s = f32(2.0 ** math.floor(math.log2(s)))
        y = q(X[i] * s); codes[i] = y.view(np.uint8); vals[i] = y.astype(f32) * (f32(1) / s)
    assert j['block_scales']['count'] == X.shape[0]
elif r == 'blockwise':
    for i in range(X.shape[0]):
        for k0 in range(0, X.shape[1], 128):
            b = X[i, k0:k0+128]; am = max(f32(np.abs(b).max()), f32(1e-4))
            enc = f32(448) / am; dec = am / f32(448)
            y = q(b * enc); codes[i, k0:k0+128] = y.view(np.uint8); vals[i, k0:k0+128] = y.astype(f32) * dec
    assert j['block_scales']['count'] == X.shape[0] * 2
else:
    for i in range(X.shape[0]):
        for k0 in range(0, X.shape[1], 32):
            b = X[i, k0:k0+32]; am = f32(np.abs(b).max())
            E = math.floor(math.log2(am)) - 8 if r == 'mx-floor' else math.ceil(math.log2(f32(am * f32(f32(1) / f32(448)))))
            y = q(b.astype(np.float64) / 2.0**E); codes[i, k0:k0+32] = y.view(np.uint8); vals[i, k0:k0+32] = (y.astype(np.float64) * 2.0**E).astype(f32)
    assert j['block_scales']['count'] == X.shape[0] * 8
assert np.array_equal(C, codes), np.argwhere(C != codes)[:5]
assert np.array_equal(V, vals), np.argwhere(V != vals)[:5]
print('OK')"
    else fail "--scaling $r" "$(cat "$TMP/err")"; fi
done
if cast --to e2m1 --in "$TMP/m.npy" --out "$TMP/s_nv.npy" --codes --scaling nvfp4 --stats-json "$TMP/s_nv.json"; then
    check "--scaling nvfp4: e2m1 codes and the tensor scale equal the recipe computed by hand" "
f32 = np.float32; X = np.load(T+'/m.npy'); C = np.load(T+'/s_nv.npy'); j = json.load(open(T+'/s_nv.json'))
ts = f32(448 * 6) / f32(np.abs(X).max()); assert j['tensor_scale'] == float(ts), (j['tensor_scale'], ts)
codes = np.empty(X.shape, np.uint8)
for i in range(X.shape[0]):
    for k0 in range(0, X.shape[1], 16):
        b = X[i, k0:k0+16]; bs = np.clip(f32(f32(np.abs(b).max()) / f32(6)) * ts, -448, 448).astype(ml_dtypes.float8_e4m3fn)
        f = f32(ts / f32(bs.astype(f32))) if bs.astype(f32) != 0 else f32(0)
        codes[i, k0:k0+16] = np.clip(b * f, -6, 6).astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 15
assert np.array_equal(C, codes), np.argwhere(C != codes)[:5]
print('OK')"
else fail "--scaling nvfp4" "$(cat "$TMP/err")"; fi
# ---- --scales: the decode factors beside the codes ----
# (t3.npy is 3 x 64 x 5: --axis 1 puts the blocks in the middle; mx and nvfp4 take 2 and 4 blocks there,
# blockwise one short tile; m.npy with the default axis: 8 and 16 blocks a row)
for c in "tensor e4m3 t3 1 0" "rowwise e4m3 t3 1 0" "blockwise e4m3 t3 1 128" "mx-rceil e4m3 t3 1 32" "mx-floor e2m1 m -1 32" \
         "nvfp4 e2m1 t3 1 16" "nvfp4 e2m1 m -1 16"; do
    set -- $c
    rm -f "$TMP/sc.npy" "$TMP/sc_2.npy"
    if cast --to $2 --in "$TMP/$3.npy" --out "$TMP/scc.npy" --codes --scaling $1 --axis $4 --scales "$TMP/sc.npy" &&
       cast --to $2 --in "$TMP/$3.npy" --out "$TMP/scv.npy" --scaling $1 --axis $4; then
        check "--scales, $1 on $3.npy along axis $4: codes x factors (x the tensor factor) == the values, bit for bit" "
f32 = np.float32; import os
dt = {'e4m3': ml_dtypes.float8_e4m3fn, 'e2m1': ml_dtypes.float4_e2m1fn}['$2']
C = np.load(T+'/scc.npy'); V = np.load(T+'/scv.npy'); S = np.load(T+'/sc.npy')
assert S.dtype == f32, S.dtype
cv = np.moveaxis(C.view(dt).astype(f32), $4, -1)
bs = $5 or cv.shape[-1]
nb = -(-cv.shape[-1] // bs) if '$1' != 'tensor' else 0
want = cv.shape[:-1] + (nb,) if nb else ()
assert S.shape == want, (S.shape, want)
F = np.repeat(S, bs, axis=-1)[..., :cv.shape[-1]] if nb else S
D = np.moveaxis((cv * F).astype(f32), -1, $4)
two = os.path.exists(T+'/sc_2.npy'); assert two == ('$1' == 'nvfp4'), two
if two:
    S2 = np.load(T+'/sc_2.npy'); assert S2.shape == () and S2.dtype == f32; D = (D * S2).astype(f32)
assert np.array_equal(D.view(np.uint32), V.view(np.uint32)), np.argwhere(D != V)[:5]
print('OK')"
    else fail "--scales $1" "$(cat "$TMP/err")"; fi
done
# the recipe is the library's: tensor scaling of A in fpemu gemm (B = I, no scaling of B is possible, so
# compare the per-tensor scale it reports with the one cast reports)
if (cd "$TMP" && "$PY" -c "import numpy as np; np.save('I.npy', np.eye(256, dtype=np.float32))") &&
   "$BIN" gemm --model h100 --a "$TMP/m.npy" --b "$TMP/I.npy" --afmt e4m3 --scaling tensor --out "$TMP/g.npy" 2>"$TMP/gerr"; then
    check "--scaling tensor: the same scale fpemu gemm reports for A" "
j = json.load(open(T+'/s_tensor.json')); line = open(T+'/gerr').read()
import re; s = float(re.search(r'A amax \S+ scale (\S+),', line).group(1))
assert abs(s - j['scale']) <= 1e-5 * j['scale'], (s, j['scale']); print('OK')"
else fail "gemm for comparison" "$(cat "$TMP/gerr")"; fi

# ---- --axis ----
if cast --to e4m3 --in "$TMP/m.npy" --out "$TMP/ax0.npy" --scaling mx-floor --axis 0 &&
   cast --to e4m3 --in "$TMP/mT.npy" --out "$TMP/axT.npy" --scaling mx-floor --axis -1 &&
   cast --to e4m3 --in "$TMP/t3.npy" --out "$TMP/t3a1.npy" --scaling rowwise --axis 1 &&
   cast --to e4m3 --in "$TMP/t3m.npy" --out "$TMP/t3m2.npy" --scaling rowwise --axis 2 &&
   cast --to e4m3 --in "$TMP/f32.npy" --out "$TMP/v1a.npy" --scaling blockwise --axis 0 &&
   cast --to e4m3 --in "$TMP/f32.npy" --out "$TMP/v1b.npy" --scaling blockwise; then
    check "--axis: 2-d axis 0 = the transpose's axis -1; 3-d axis 1 = moveaxis; 1-d axis 0 = -1" "
a = np.load(T+'/ax0.npy'); b = np.load(T+'/axT.npy'); assert np.array_equal(a, b.T, equal_nan=True)
c = np.load(T+'/t3a1.npy'); d = np.load(T+'/t3m2.npy'); assert c.shape == (3, 64, 5); assert np.array_equal(np.moveaxis(c, 1, 2), d, equal_nan=True)
assert np.array_equal(np.load(T+'/v1a.npy'), np.load(T+'/v1b.npy'), equal_nan=True)
print('OK')"
else fail "--axis" "$(cat "$TMP/err")"; fi

# ---- stochastic rounding ----
if cast --to e4m3 --in "$TMP/f32.npy" --out "$TMP/sr1.npy" --round sr --seed 7 && cast --to e4m3 --in "$TMP/f32.npy" --out "$TMP/sr2.npy" --round sr --seed 7 &&
   cast --to e4m3 --in "$TMP/f32.npy" --out "$TMP/sr3.npy" --round sr --seed 8 && cast --to e4m3 --in "$TMP/f32.npy" --out "$TMP/rtz.npy" --round rtz; then
    check "--round sr --seed: repeatable, seed-dependent, each result a neighbour; --round rtz truncates" "
x = np.load(T+'/f32.npy'); a, b, c, z = (np.load(T+'/%s.npy' % n) for n in ('sr1', 'sr2', 'sr3', 'rtz'))
assert np.array_equal(a, b, equal_nan=True) and not np.array_equal(a, c, equal_nan=True)
m = np.isfinite(z) & (np.abs(x) < 448); assert (np.abs(z[m]) <= np.abs(x[m])).all()
print('OK')"
else fail "--round" "$(cat "$TMP/err")"; fi

# ---- the torch NaN policy against the H200 slice ----
ok=1
for fmt in e4m3 e5m2 f16 bf16; do
    for pol in torch canonical cuda; do
        cast --to $fmt --in "$DATA/cast_in.npy" --out "$TMP/h_${fmt}_$pol.npy" --codes --nan $pol || { ok=0; fail "cast of the slice ($fmt, $pol)" "$(cat "$TMP/err")"; }
    done
done
if [ $ok = 1 ]; then
    check "--nan torch reproduces PyTorch's .to(e4m3fn/e5m2/f16/bf16) on the H200 slice bit for bit; canonical and cuda differ as recorded" "
D = '$DATA'
want = {'torch': [0, 0, 0, 0], 'canonical': [2522, 1063, 1063, 1063], 'cuda': [2522, 521, 0, 0]}
for pol, w in want.items():
    got = [int((np.load(T+'/h_%s_%s.npy' % (f, pol)) != np.load(D+'/cast_%s.npy' % f)).sum()) for f in ('e4m3', 'e5m2', 'f16', 'bf16')]
    assert got == w, (pol, got, w)
print('OK')"
fi
out=$(printf 'C3FA0000\nFFC00000\n7FC00000\n' | "$BIN" run f32_to_e4m3 --nan torch 2>&1)
if [ "$out" = "$(printf 'C3FA0000 FF 05\nFFC00000 FF 00\n7FC00000 7F 00')" ]; then pass "fpemu run --nan torch: -500 and -NaN give 0xFF in e4m3"
else fail "fpemu run --nan torch" "$out"; fi
# A recipe's values are its codes decoded, and a NaN code decodes to f32 as
# the policy gives it (docs/semantics.md), not with the code's own sign:
# canonical 7FC00000, cuda and torch (f32 is wider than 8 bits) 7FFFFFFF,
# x86 the code's sign (e4m3fnuz's one NaN, 0x80, is negative). Inputs -NaN
# and +NaN under tensor scaling.
(cd "$TMP" && "$PY" -c "import numpy as np; np.save('nan2.npy', np.array([-np.nan, np.nan, 1, -3], np.float32))")
got="" names=""
for fmt in e4m3 e4m3fnuz e5m2 tf32; do
    for pol in canonical cuda torch x86; do
        names="$names $fmt/$pol"
        cast --to $fmt --in "$TMP/nan2.npy" --out "$TMP/nan2_$fmt$pol.npy" --scaling tensor --nan $pol ||
            got="$got $fmt/$pol:$(head -c 100 "$TMP/err")"
    done
done
# (no message: each value's first two elements' bits, read in one go)
[ -z "$got" ] && got=$(cd "$TMP" && "$PY" -c "import sys, numpy as np
print(''.join(' %s:%s' % (k, ','.join('%08X' % v for v in np.load('nan2_%s.npy' % k.replace('/', '')).view(np.uint32)[:2]))
              for k in sys.argv[1:]))" $names 2>&1)
want=""
for fmt in e4m3 e4m3fnuz e5m2 tf32; do
    x86=FFC00000,7FC00000; [ $fmt = e4m3fnuz ] && x86=FFC00000,FFC00000
    want="$want $fmt/canonical:7FC00000,7FC00000 $fmt/cuda:7FFFFFFF,7FFFFFFF $fmt/torch:7FFFFFFF,7FFFFFFF $fmt/x86:$x86"
done
if [ "$got" = "$want" ]; then pass "a recipe's NaN values follow --nan (canonical, cuda, torch, x86; e4m3, e4m3fnuz, e5m2, tf32)"
else fail "a recipe's NaN values against --nan" "got:$got
want:$want"; fi

# ---- bad input: exit 2, named, no output ----
bad() { # DESC PATTERN ARGS...
    local desc=$1 pat=$2; shift 2
    rm -f "$TMP/bad.npy"
    "$BIN" cast "$@" 2>"$TMP/err" >/dev/null
    local rc=$?
    if [ $rc = 2 ] && grep -q -- "$pat" "$TMP/err" && [ ! -e "$TMP/bad.npy" ]; then pass "$desc"
    else fail "$desc" "rc=$rc" "$(cat "$TMP/err")"; fi
}
bad "wrong dtype ('<i4'): exit 2 naming the file and the dtype" "i4.npy.*<i4" --to e4m3 --in "$TMP/i4.npy" --out "$TMP/bad.npy"
bad "3-d input with --axis 3: exit 2 naming the axis" "axis 3" --to e4m3 --in "$TMP/t3.npy" --out "$TMP/bad.npy" --scaling rowwise --axis 3
bad "unknown format: exit 2 naming it" "--to e9m9x" --to e9m9x --in "$TMP/f32.npy" --out "$TMP/bad.npy"
bad "unknown recipe: exit 2 naming it" "--scaling bogus" --to e4m3 --in "$TMP/f32.npy" --out "$TMP/bad.npy" --scaling bogus
bad "unknown NaN policy: exit 2 naming it" "--nan bogus" --to e4m3 --in "$TMP/f32.npy" --out "$TMP/bad.npy" --nan bogus
bad "mx with --round sr: refused" "rne only" --to e4m3 --in "$TMP/f32.npy" --out "$TMP/bad.npy" --scaling mx-floor --round sr
bad "nvfp4 to e4m3: refused" "nvfp4 needs --to e2m1" --to e4m3 --in "$TMP/f32.npy" --out "$TMP/bad.npy" --scaling nvfp4
bad "missing input: exit 2 naming it" "nothere.npy" --to e4m3 --in "$TMP/nothere.npy" --out "$TMP/bad.npy"
bad "unwritable --out: exit 2 naming it" "--out $TMP/no/such/dir/y.npy" --to e4m3 --in "$TMP/f32.npy" --out "$TMP/no/such/dir/y.npy"
bad "--scales without --codes: refused" "--scales .*only with --codes" --to e4m3 --in "$TMP/m.npy" --out "$TMP/bad.npy" --scaling tensor --scales "$TMP/bad.npy"
bad "--scales without a recipe: refused" "--scales .*only with --codes and a --scaling" --to e4m3 --in "$TMP/m.npy" --out "$TMP/bad.npy" --codes --scales "$TMP/bs.npy"
bad "--scales not a .npy name: refused" "--scales .*expected a file name ending in .npy" --to e4m3 --in "$TMP/m.npy" --out "$TMP/bad.npy" --codes --scaling tensor --scales "$TMP/bs.bin"
bad "--scales the same file as --out: refused" "the same file as --out" --to e4m3 --in "$TMP/m.npy" --out "$TMP/bad.npy" --codes --scaling tensor --scales "$TMP/bad.npy"
bad "--scales whose S_2.npy is --out (nvfp4): refused" "S_2.npy" --to e2m1 --in "$TMP/m.npy" --out "$TMP/bad_2.npy" --codes --scaling nvfp4 --scales "$TMP/bad.npy"
(cd "$TMP" && "$PY" -c "import json, struct; h = json.dumps({'w': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]}}).encode()
open('w.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h + bytes(8))")
bad "--scales with a safetensors input: refused, naming NAME_scale" "NAME_scale" --to e4m3 --in "$TMP/w.safetensors" --out "$TMP/bad.npy" --codes --scaling tensor --scales "$TMP/bs.npy"

# ---- the array casts against the scalar conversions ----
# An f32 input with no recipe takes the library's array casts:
# fpemu_round_f32 for the values, fpemu_encode_f32 for --codes, the figures
# from the rounded values. The same values as an f64 input are rounded to
# odd to f32 and take the same array casts, or, in sr and to f64, the
# scalar conversion element by element (fpemu_from_double, then a decode
# to double; t_cast_f64 holds the odd path to it on doubles no float
# holds). The two must agree bit for bit in every mode (sr: element i
# takes draw i in both), with and without --sat: the codes, every figure
# of --stats-json, and the values,
# the f64 output rounded to f32 against the f32 one (exact where every
# value of the format is a float; f64's largest is inf in f32 as in the f32
# output), NaNs by their sign. f64 itself takes the library's general path
# from an f32 input, and is held to the same. (Before the array casts took
# --stats too, this compared them with that general path.) Inputs of
# codes (bf16, f16, e4m3 as ml_dtypes writes them) are decoded to f32 and
# cast as those floats: each against its values saved as f32.
(cd "$TMP" && "$PY" -c "import numpy as np, ml_dtypes
for n in ('f32', 'special'): np.save(n + '_as64.npy', np.load(n + '.npy').astype(np.float64))
np.save('bf16_as32.npy', np.load('bf16.npy').view(ml_dtypes.bfloat16).astype(np.float32))
np.save('f16_as32.npy', np.load('f16.npy').astype(np.float32))
np.save('e4m3_as32.npy', np.load('e4m3_in.npy').view(ml_dtypes.float8_e4m3fn).astype(np.float32))")
mkdir -p "$TMP/ac"
# pair KEY FMT "A ARGS" "B ARGS" OPTS...: the casts of input A (its own --from) and of B
pair() {
    local k=$1 fmt=$2 a=$3 b=$4 w src
    shift 4
    for w in A B; do
        if [ $w = A ]; then src=$a; else src=$b; fi
        # (src unquoted: a file name and, for A, its --from)
        cast --to $fmt --in $src --out "$TMP/ac/$k.v$w.npy" "$@" --stats-json "$TMP/ac/$k.s$w.json" &&
            cast --to $fmt --in $src --out "$TMP/ac/$k.c$w.npy" --codes "$@" ||
            echo "$k from $w: $(head -c 200 "$TMP/err")" >> "$TMP/ac/failed"
    done
}
ac_fmts="e4m3 e5m2 bf16 f16 e2m1 e3m2 e2m3 e8m0 e4m3fnuz tf32 f64"
for fmt in $ac_fmts; do
    for rnd in rne rna rtz rup rdn rto sr; do
        seed=""; [ $rnd = sr ] && seed="--seed 7"
        for sat in "" --sat; do
            for inp in f32 special; do
                pair "$fmt.$rnd${sat:+.sat}.$inp" $fmt "$TMP/$inp.npy" "$TMP/${inp}_as64.npy" --round $rnd $seed $sat
            done
        done
    done
    for sat in "" --sat; do
        pair "in_bf16.$fmt${sat:+.sat}" $fmt "$TMP/bf16.npy" "$TMP/bf16_as32.npy" $sat
        pair "in_f16.$fmt${sat:+.sat}" $fmt "$TMP/f16.npy" "$TMP/f16_as32.npy" $sat
        pair "in_e4m3.$fmt${sat:+.sat}" $fmt "$TMP/e4m3_in.npy --from e4m3" "$TMP/e4m3_as32.npy" $sat
    done
done
ac_out=$(cd "$TMP/ac" && "$PY" - 2>&1 <<'PY'
import glob, json, numpy as np, os
bad = {}
if os.path.exists('failed'): bad['runs'] = open('failed').read().split('\n')[:3]
for sa in sorted(glob.glob('*.sA.json')):
    k = sa[:-len('.sA.json')]
    group = k.split('.')[0]
    why = []
    if json.load(open(sa)) != json.load(open(k + '.sB.json')): why.append('figures')
    ca, cb = np.load(k + '.cA.npy'), np.load(k + '.cB.npy')
    if ca.dtype != cb.dtype or not np.array_equal(ca, cb): why.append('codes')
    va, vb = np.load(k + '.vA.npy'), np.load(k + '.vB.npy')
    with np.errstate(over='ignore'): w = vb.astype(np.float32)
    same = (w.view(np.uint32) == va.view(np.uint32)) | (np.isnan(w) & np.isnan(va) & (np.signbit(w) == np.signbit(va)))
    if va.dtype != np.float32 or vb.dtype.kind != 'f' or not same.all(): why.append('values')
    if why: bad.setdefault(group, []).append(k + ': ' + ' '.join(why))
for group in sorted({s[:s.index('.')] for s in glob.glob('*.sA.json')}):
    print(group, 'OK' if not bad.get(group) and 'runs' not in bad else 'BAD %s %s' % (bad.get(group, [])[:3], bad.get('runs', '')))
PY
)
ac_check() { # GROUP DESCRIPTION
    case "$(printf '%s\n' "$ac_out" | grep "^$1 ")" in
    "$1 OK") pass "$2" ;;
    *) fail "$2" "$(printf '%s\n' "$ac_out" | grep -v " OK$")" ;;
    esac
}
for fmt in $ac_fmts; do
    ac_check $fmt "$fmt: an f32 input's codes, values and figures == the same values' as f64 (the scalar conversions), rne rna rtz rup rdn rto sr, with and without --sat"
done
for src in bf16 f16 e4m3; do
    ac_check in_$src "$src codes in: codes, values and figures == those of the same values as f32, to each of the eleven formats, with and without --sat"
done

# ---- one result: a failing output leaves every file as it was ----
# (Y, S and S_2 hold "old" before each run; nothing may replace them, and no
# temporary may stay beside them. Before the outputs were staged together,
# Y was replaced when a later file failed.)
kept() { # DESC PATTERN ARGS...: exit 2 naming PATTERN, the old files intact, no temporaries
    local desc=$1 pat=$2; shift 2
    local f
    for f in y.npy s.npy s_2.npy st.txt; do echo old > "$TMP/keep/$f"; done
    $PRE "$BIN" cast "$@" 2>"$TMP/err" >/dev/null
    local rc=$? same=1
    for f in y.npy s.npy s_2.npy st.txt; do [ "$(cat "$TMP/keep/$f")" = old ] || same=0; done
    if [ $rc = 2 ] && grep -q -- "$pat" "$TMP/err" && [ $same = 1 ] && [ -z "$(ls "$TMP/keep" | grep -v '^\(y\|s\|s_2\|ylink\)\.npy$\|^st\.txt$')" ]
    then pass "$desc"
    else fail "$desc" "rc=$rc same=$same" "$(ls "$TMP/keep")" "$(cat "$TMP/err")"; fi
}
mkdir -p "$TMP/keep" "$TMP/keep_dir.txt"
K=$TMP/keep PRE=
kept "--scales into a missing folder: Y as it was" "--scales $TMP/no/s.npy" \
    --to e2m1 --in "$TMP/m.npy" --out "$K/y.npy" --codes --scaling nvfp4 --scales "$TMP/no/s.npy"
kept "--stats a folder: Y, S and S_2 as they were" "--stats $TMP/keep_dir.txt" \
    --to e2m1 --in "$TMP/m.npy" --out "$K/y.npy" --codes --scaling nvfp4 --scales "$K/s.npy" --stats "$TMP/keep_dir.txt"
kept "--stats-json into a missing folder: Y, S, S_2 and --stats as they were" "--stats-json" \
    --to e2m1 --in "$TMP/m.npy" --out "$K/y.npy" --codes --scaling nvfp4 --scales "$K/s.npy" --stats "$K/st.txt" \
    --stats-json "$TMP/no/st.json"
# gnuplot not found (no PATH): the picture fails last, after every other file is complete
PRE="env PATH=/nonexistent"
kept "--plot without gnuplot: exit 2, Y, S, S_2 and --stats as they were" "gnuplot not found" \
    --to e2m1 --in "$TMP/m.npy" --out "$K/y.npy" --codes --scaling nvfp4 --scales "$K/s.npy" \
    --stats "$K/st.txt" --plot "$K/p.png"
PRE=
(cd "$TMP" && "$PY" -c "
from safetensors.numpy import save_file; import numpy as np
save_file({'w': np.ones((4, 32), np.float32)}, 'keep/w.safetensors')" 2>/dev/null) && cp "$K/w.safetensors" "$TMP/w_in.safetensors" &&
    echo old > "$K/w.safetensors" || echo old > "$K/w.safetensors"
if [ -s "$TMP/w_in.safetensors" ]; then
    "$BIN" cast --to e4m3 --in "$TMP/w_in.safetensors" --out "$K/w.safetensors" --stats "$TMP/no/st.txt" 2>"$TMP/err" >/dev/null
    rc=$?
    if [ $rc = 2 ] && [ "$(cat "$K/w.safetensors")" = old ] && ! ls "$K"/w.safetensors.tmp.* >/dev/null 2>&1; then
        pass "safetensors: --stats into a missing folder leaves --out as it was"
    else fail "safetensors --out kept" "rc=$rc" "$(ls "$K")" "$(cat "$TMP/err")"; fi
else skip "safetensors --out kept: the safetensors package is missing"; fi
if [ -s "$TMP/w_in.safetensors" ]; then
    echo old > "$K/w.safetensors"
    "$BIN" cast --to e4m3 --in "$TMP/w_in.safetensors" --out "$K/w.safetensors" --stats "$K/./w.safetensors" 2>"$TMP/err" >/dev/null
    rc=$?
    if [ $rc = 2 ] && grep -q "the same file as --out" "$TMP/err" && [ "$(cat "$K/w.safetensors")" = old ] &&
       ! ls "$K"/w.safetensors.tmp.* >/dev/null 2>&1; then
        pass "safetensors: --stats the same file as --out: refused, --out as it was"
    else fail "safetensors --stats = --out" "rc=$rc" "$(ls "$K")" "$(cat "$TMP/err")"; fi
else skip "safetensors --stats = --out: the safetensors package is missing"; fi
rm -f "$K/w.safetensors"
kept "--stats the same file as --out (another spelling): refused, Y as it was" "--stats $K/../keep/y.npy: the same file as --out" \
    --to e4m3 --in "$TMP/m.npy" --out "$K/y.npy" --stats "$K/../keep/y.npy"
ln -s y.npy "$K/ylink.npy"
kept "--plot a link to --out: refused, Y as it was" "--plot $K/ylink.npy: the same file as --out" \
    --to e4m3 --in "$TMP/m.npy" --out "$K/y.npy" --plot "$K/ylink.npy"
rm -f "$K/ylink.npy"
if "$BIN" cast --to e2m1 --in "$TMP/m.npy" --out "$K/y.npy" --codes --scaling nvfp4 --scales "$K/s.npy" --stats "$K/st.txt" 2>"$TMP/err" &&
   [ "$(head -c 6 "$K/y.npy" | tail -c 5)" = NUMPY ] && [ "$(head -c 6 "$K/s.npy" | tail -c 5)" = NUMPY ] &&
   [ "$(head -c 6 "$K/s_2.npy" | tail -c 5)" = NUMPY ] && grep -q "^format" "$K/st.txt" &&
   [ -z "$(ls "$K" | grep tmp)" ]; then pass "the same cast with good paths writes all four files, no temporaries"
else fail "the same cast, good paths" "$(ls "$K")" "$(cat "$TMP/err")"; fi

# ---- --plot ----
if command -v gnuplot >/dev/null; then
    if cast --to e4m3 --in "$TMP/m.npy" --out "$TMP/p.npy" --scaling tensor --plot "$TMP/h.png" &&
       [ "$(head -c 8 "$TMP/h.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && ! ls "$TMP"/h.png.tmp.* >/dev/null 2>&1; then
        pass "--plot writes a PNG (and no temporaries)"
    else fail "--plot" "$(cat "$TMP/err")"; fi
    if cast --to e4m3 --in "$TMP/m.npy" --out "$TMP/p.npy" --scaling tensor --plot "$TMP/it's.png" &&
       [ "$(head -c 8 "$TMP/it's.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
        pass "--plot to a name with a single quote"
    else fail "--plot it's.png" "$(cat "$TMP/err")"; fi
else skip "--plot: gnuplot not installed"; fi

tap_end
