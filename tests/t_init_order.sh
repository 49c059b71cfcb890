#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_init_order.sh: `fpemu train --init PATH --order FILE.npy` (docs/replay.md).
# Starting from a PyTorch state (a folder of KEY.npy files and an .npz, the
# slices of the H200 recording in tests/data/real-runs/h200-2026-11-26), in
# a given batch order: recorded in summary.json, kept through a checkpoint
# and --resume, reproducible; the given weights are the run's weights bit
# for bit; python/fpemu/twins.py's keys, initial parameters and batch order
# are the engine's (a run started from them equals the seed's own run);
# every bad input (missing, extra, misshapen or mistyped key, a truncated,
# corrupt or unsupported .npz, an order too short or out of range, --order
# on tiny-transformer) exits 2 with a message naming it and writes nothing.
# The python3 checks (standard library only) skip without python3. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
. "$HERE/lib/tap.sh"
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
cd "$ROOT" || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_init_order.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
D=tests/data/real-runs/h200-2026-11-26
PY=$(command -v python3 || true)
export PYTHONDONTWRITEBYTECODE=1

train() { "$BIN" train --quiet "$@"; }
# same DIR_A DIR_B: the run folders' files agree (summary.json but its timing)
same() {
    local f
    for f in metrics.csv tensors.csv eval.csv checkpoint.bin; do
        [ -f "$1/$f" ] || [ ! -f "$2/$f" ] || return 1
        [ ! -f "$1/$f" ] || cmp -s "$1/$f" "$2/$f" || return 1
    done
    cmp -s <(grep -v '"timing"' "$1/summary.json") <(grep -v '"timing"' "$2/summary.json")
}
# mk_i4 FILE V...: a 1-d '<i4' .npy written by the shell
mk_i4() {
    local f=$1; shift
    local h="{'descr': '<i4', 'fortran_order': False, 'shape': ($#,), }"
    local pad=$(( (64 - (10 + ${#h} + 1) % 64) % 64 ))
    local hl=$(( ${#h} + pad + 1 )) v
    {
        printf '\223NUMPY\001\000'
        printf "\\$(printf %03o $((hl & 255)))\\$(printf %03o $((hl >> 8)))"
        printf '%s' "$h"; printf "%${pad}s" ""; printf '\n'
        for v in "$@"; do
            v=$((v & 0xFFFFFFFF))
            printf "\\$(printf %03o $((v & 255)))\\$(printf %03o $(((v >> 8) & 255)))\\$(printf %03o $(((v >> 16) & 255)))\\$(printf %03o $(((v >> 24) & 255)))"
        done
    } >"$f"
}
# bad DESC PATTERN ARGS...: `fpemu train ARGS` exits 2, says PATTERN, writes no --out folder
bad() {
    local desc=$1 pat=$2; shift 2
    rm -rf "$TMP/o"
    "$BIN" train --quiet --out "$TMP/o" "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
    local rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$pat" "$TMP/bad.err" && [ ! -e "$TMP/o" ]; then pass "$desc"
    else fail "$desc" "exit $rc (expected 2), expected '$pat' in: $(cat "$TMP/bad.err")" "$(ls -d "$TMP/o" 2>/dev/null)"; fi
}

MLP=(--model mlp-digits --policy 32-true --set weight_decay=0.01)
DEEP=(--model deep-mlp --policy 16-mixed --set weight_decay=0.01)

# ---- a folder init, an .npz init, the order; summary.json -----------------------------
train "${MLP[@]}" --steps 20 --init $D/init-mlp-digits --order $D/order-mlp-digits.npy --out "$TMP/a" 2>"$TMP/a.err"
rc=$?
[ "$rc" = 0 ] && pass "--init FOLDER --order FILE.npy (mlp-digits) runs" || fail "--init FOLDER --order FILE.npy (mlp-digits) runs" "$(cat "$TMP/a.err")"
grep -q "\"init\": {\"path\": \"$D/init-mlp-digits\", \"crc32\": \"[0-9a-f]\{8\}\"}" "$TMP/a/summary.json" \
    && pass "summary.json records the init folder and a CRC-32" || fail "summary.json records the init folder" "$(grep -A1 '"parameters"' "$TMP/a/summary.json")"
grep -q "\"order\": {\"path\": \"$D/order-mlp-digits.npy\", \"crc32\": \"[0-9a-f]\{8\}\", \"indices\": 9600}" "$TMP/a/summary.json" \
    && pass "summary.json records the order file, its CRC-32 and its 9600 indices" || fail "summary.json records the order" "$(grep '"order"' "$TMP/a/summary.json")"
train "${DEEP[@]}" --steps 20 --init $D/init-deep-mlp.npz --order $D/order-deep-mlp.npy --out "$TMP/b" 2>"$TMP/b.err" \
    && pass "--init FILE.npz (deep-mlp, NumPy's zip64-form local headers, deflated) runs" || fail "--init FILE.npz runs" "$(cat "$TMP/b.err")"
if [ -n "$PY" ]; then
    want=$("$PY" -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' $D/init-deep-mlp.npz)
    grep -q "\"crc32\": \"$want\"" "$TMP/b/summary.json" && pass "the .npz's CRC-32 is that of its bytes" || fail "the .npz's CRC-32" "want $want"
else
    skip "the .npz's CRC-32 (no python3)"
fi
train "${MLP[@]}" --steps 20 --init $D/init-mlp-digits --order $D/order-mlp-digits.npy --out "$TMP/a2" \
    && same "$TMP/a" "$TMP/a2" && pass "the same run from the same init and order twice: identical files" \
    || fail "the same run twice is identical"
train "${MLP[@]}" --steps 20 --out "$TMP/seedrun"
cmp -s "$TMP/a/metrics.csv" "$TMP/seedrun/metrics.csv" && fail "the given start changes the run" || pass "the given start changes the run"
# the settings of the recorded runs are all settable (record.py: AdamW, GradScaler defaults)
train --model deep-mlp --policy 16-mixed --steps 1 --out "$TMP/set" --set lr=1e-3 --set weight_decay=0.01 --set beta1=0.9 \
    --set beta2=0.999 --set eps=1e-8 --set batch_size=32 --set growth_interval=2000 --set init_scale=65536 --set input_scale=256 \
    && grep -q '"weight_decay": 0.01,' "$TMP/set/summary.json" && pass "lr, weight_decay, betas, eps, batch_size, growth_interval, init_scale are --set keys" \
    || fail "the recorded runs' settings are --set keys"

# ---- checkpoints keep the init and the order --------------------------------------------------
train "${DEEP[@]}" --steps 30 --set checkpoint_every=10 --init $D/init-deep-mlp.npz --order $D/order-deep-mlp.npy --out "$TMP/c1"
grep -aq "FPEMUSTATE 2" "$TMP/c1/checkpoint.bin" && pass "a run with --init/--order checkpoints a version 2 state" || fail "version 2 state"
cp -r "$TMP/c1" "$TMP/c2"
train --resume "$TMP/c2" 2>"$TMP/c2.err" && same "$TMP/c1" "$TMP/c2" \
    && pass "--resume of a run with --init/--order ends identical to the uninterrupted run" || fail "--resume keeps init and order" "$(cat "$TMP/c2.err")"
train --resume "$TMP/c2" --steps 60 --out "$TMP/c3" && train "${DEEP[@]}" --steps 60 --init $D/init-deep-mlp.npz \
    --order $D/order-deep-mlp.npy --out "$TMP/c4" && cmp -s "$TMP/c3/metrics.csv" "$TMP/c4/metrics.csv" \
    && grep -q '"order": {' "$TMP/c3/summary.json" && pass "--resume --steps 60 goes on in the order (equal to a 60-step run)" || fail "--resume extends in the order"
"$BIN" train --quiet --resume "$TMP/c2" --steps 201 --out "$TMP/c5" 2>"$TMP/c5.err"
[ $? = 2 ] && grep -q "holds 6400 indices, but 201 steps at batch_size 32 need 6432" "$TMP/c5.err" && [ ! -e "$TMP/c5" ] \
    && pass "--resume --steps past the order's end: exit 2, counts named" || fail "--resume past the order" "$(cat "$TMP/c5.err")"
train "${MLP[@]}" --steps 20 --set checkpoint_every=5 --out "$TMP/v1"
grep -aq "FPEMUSTATE 1" "$TMP/v1/checkpoint.bin" && pass "a run without them still checkpoints version 1" || fail "version 1 state"

# ---- the given weights are the run's weights ----------------------------------------------------
# lr 0 and no decay: the steps leave the weights as given; checkpoint.bin after step 2 (the last) holds them
if [ -n "$PY" ]; then
    train --model mlp-digits --policy 32-true --steps 2 --set lr=0 --set checkpoint_every=1 --init $D/init-mlp-digits --out "$TMP/w"
    "$PY" - "$TMP/w/checkpoint.bin" $D/init-mlp-digits >"$TMP/w.out" 2>&1 <<'EOF'
import struct, sys, os, ast
ck, d = open(sys.argv[1], "rb").read(), sys.argv[2]
st = ck[12 + 8 + 8:]
pos = st.index(b"\nend\n") + 5
seed, step, opt_step, n = struct.unpack_from("<4Q", st, pos)
params = struct.unpack_from("<%dd" % n, st, pos + 32)
want = []
for k in ("0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"):
    b = open(os.path.join(d, k + ".npy"), "rb").read()
    hl = struct.unpack_from("<H", b, 8)[0]
    h = ast.literal_eval(b[10:10 + hl].decode())
    assert h["descr"] == "<f4" and not h["fortran_order"], h
    cnt = 1
    for s in h["shape"]:
        cnt *= s
    want += struct.unpack_from("<%df" % cnt, b, 10 + hl)
assert step == 2 and n == len(want), (step, n, len(want))
bad = [i for i in range(n) if struct.pack("<d", params[i]) != struct.pack("<d", want[i])]
print("%d parameters, %d differ" % (n, len(bad)))
sys.exit(1 if bad else 0)
EOF
    [ $? = 0 ] && pass "the given weights are the run's, bit for bit ($(cat "$TMP/w.out"))" || fail "the given weights are the run's" "$(cat "$TMP/w.out")"
else
    skip "the given weights are the run's (no python3)"
fi

# ---- python/fpemu/twins.py: keys, initial parameters and order are the engine's ------------------
if [ -n "$PY" ]; then
    cat >"$TMP/twin.py" <<'EOF'
import importlib.util, struct, sys, zipfile
spec = importlib.util.spec_from_file_location("twins", sys.argv[1])
tw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tw)
CODE = {"<f8": "d", "<f2": "e", "<f4": "f", "<i8": "q"}
def npy(descr, shape, data):
    sh = "(%s)" % ", ".join(str(d) for d in shape) if len(shape) > 1 else "(%d,)" % shape[0]
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, sh)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack("<%d%s" % (len(data), CODE[descr]), *data)
model, seed, steps, out, descr = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
with zipfile.ZipFile(out + ".npz", "w", zipfile.ZIP_DEFLATED) as z:
    for k, (shape, v) in tw.fpemu_init(model, seed).items():
        z.writestr(k + ".npy", npy(descr, shape, v))
assert [k for k, _ in tw.state_keys(model)] == list(tw.fpemu_init(model, seed))
if model != "tiny-transformer":
    open(out + ".order.npy", "wb").write(npy("<i8", (steps * 32,), tw.digits_order(seed, steps, 32)))
EOF
    for m in mlp-digits deep-mlp tiny-transformer; do
        steps=25; [ $m = tiny-transformer ] && steps=4
        extra=(); [ $m != tiny-transformer ] && extra=(--order "$TMP/tw-$m.order.npy")
        if "$PY" "$TMP/twin.py" "$ROOT/python/fpemu/twins.py" $m 5 $steps "$TMP/tw-$m" '<f8' 2>"$TMP/tw.err" &&
            train --model $m --policy bf16-mixed --seed 5 --steps $steps --out "$TMP/tw-$m-seed" &&
            train --model $m --policy bf16-mixed --seed 5 --steps $steps --init "$TMP/tw-$m.npz" "${extra[@]}" --out "$TMP/tw-$m-given" 2>>"$TMP/tw.err" &&
            cmp -s "$TMP/tw-$m-seed/metrics.csv" "$TMP/tw-$m-given/metrics.csv" && cmp -s "$TMP/tw-$m-seed/eval.csv" "$TMP/tw-$m-given/eval.csv" &&
            cmp -s "$TMP/tw-$m-seed/tensors.csv" "$TMP/tw-$m-given/tensors.csv"; then
            pass "$m: twins.py's keys and fpemu_init (as '<f8'${extra:+, digits_order as '<i8'}) give the seed's own run"
        else
            fail "$m: twins.py's start is the engine's" "$(cat "$TMP/tw.err")"
        fi
    done
    "$PY" "$TMP/twin.py" "$ROOT/python/fpemu/twins.py" mlp-digits 5 1 "$TMP/tw16" '<f2' &&
        train --model mlp-digits --policy 32-true --steps 2 --init "$TMP/tw16.npz" --out "$TMP/tw16-run" \
        && pass "an '<f2' init is read" || fail "an '<f2' init is read"
else
    skip "twins.py checks (no python3)"
fi

# ---- bad input: nothing written, a message naming what ------------------------------------------
mkdir -p "$TMP/bad"
cp -r $D/init-mlp-digits "$TMP/bad/miss" && rm "$TMP/bad/miss/4.bias.npy"
bad "missing key: named with its shape" "missing key '4.bias' (shape (10,)): every parameter of model mlp-digits must be given" \
    "${MLP[@]}" --steps 2 --init "$TMP/bad/miss"
cp -r $D/init-mlp-digits "$TMP/bad/extra" && cp $D/init-mlp-digits/4.bias.npy "$TMP/bad/extra/6.bias.npy"
bad "extra key: named" "6.bias.npy: unknown key '6.bias'" "${MLP[@]}" --steps 2 --init "$TMP/bad/extra"
cp -r $D/init-mlp-digits "$TMP/bad/shape" && cp $D/init-mlp-digits/4.weight.npy "$TMP/bad/shape/2.weight.npy"
bad "wrong shape: key, found and expected shapes" "2.weight: shape (10, 64), expected (64, 64)" "${MLP[@]}" --steps 2 --init "$TMP/bad/shape"
cp -r $D/init-mlp-digits "$TMP/bad/dtype" && cp $D/order-mlp-digits.npy "$TMP/bad/dtype/0.bias.npy"
bad "wrong dtype: key, found and expected dtypes" "0.bias: dtype '<i4', expected float32" "${MLP[@]}" --steps 2 --init "$TMP/bad/dtype"
bad "another model's state: the first shape that differs" "0.weight: shape (32, 64), expected (64, 64)" "${MLP[@]}" --steps 2 --init $D/init-deep-mlp.npz
head -c 40000 $D/init-deep-mlp.npz >"$TMP/bad/trunc.npz"
bad "truncated .npz" "truncated or corrupt zip archive" "${DEEP[@]}" --steps 2 --init "$TMP/bad/trunc.npz"
cp $D/init-deep-mlp.npz "$TMP/bad/corrupt.npz" && chmod u+w "$TMP/bad/corrupt.npz"
printf 'XXXXXXXX' | dd of="$TMP/bad/corrupt.npz" bs=1 seek=3000 conv=notrunc 2>/dev/null
bad "corrupt .npz member: named" "member '0.weight.npy'" "${DEEP[@]}" --steps 2 --init "$TMP/bad/corrupt.npz"
bad "neither an .npz nor a safetensors file" "neither an .npz (a zip archive), a safetensors file nor a folder" "${MLP[@]}" --steps 2 --init $D/mlp-digits-32-true.csv
bad "--init of a path that is not there" "cannot open" "${MLP[@]}" --steps 2 --init "$TMP/nothere"
if [ -n "$PY" ]; then
    "$PY" - "$TMP/bad" $D/init-mlp-digits <<'EOF'
import os, struct, sys, zipfile
out, d = sys.argv[1], sys.argv[2]
m = {k: open(os.path.join(d, k), "rb").read() for k in sorted(os.listdir(d))}
def z(name, members, method=zipfile.ZIP_STORED):
    with zipfile.ZipFile(os.path.join(out, name), "w", method) as f:
        for k, v in members:
            f.writestr(k, v)
good = list(m.items())
z("good.npz", good)
z("good-deflated.npz", good, zipfile.ZIP_DEFLATED)
z("extra.npz", good + [("6.weight.npy", m["4.weight.npy"])])
z("notnpy.npz", good + [("README.txt", b"hello")])
z("folder.npz", good + [("sub/0.weight.npy", m["0.weight.npy"])])
import warnings
warnings.simplefilter("ignore")
z("twice.npz", good + [("0.bias.npy", m["0.bias.npy"])])
def patch(src, dst, fn):
    b = bytearray(open(os.path.join(out, src), "rb").read())
    fn(b)
    open(os.path.join(out, dst), "wb").write(bytes(b))
def central(b):
    i = b.index(b"PK\x01\x02")
    return i
def enc(b):
    i = central(b); b[i + 8] |= 1
patch("good.npz", "encrypted.npz", enc)
def meth(b):
    i = central(b); b[i + 10] = 12
patch("good.npz", "bzip2.npz", meth)
def z64(b):
    e = b.rindex(b"PK\x05\x06"); b[e + 8:e + 12] = b"\xff\xff\xff\xff"
patch("good.npz", "zip64.npz", z64)
def flip(b):
    i = b.index(b"\x93NUMPY") + 200; b[i] ^= 0x40
patch("good.npz", "crc.npz", flip)
EOF
    train "${MLP[@]}" --steps 2 --init "$TMP/bad/good.npz" --out "$TMP/good1" && train "${MLP[@]}" --steps 2 --init "$TMP/bad/good-deflated.npz" --out "$TMP/good2" \
        && train "${MLP[@]}" --steps 2 --init $D/init-mlp-digits --out "$TMP/good3" && cmp -s "$TMP/good1/metrics.csv" "$TMP/good3/metrics.csv" \
        && cmp -s "$TMP/good2/metrics.csv" "$TMP/good3/metrics.csv" && pass "stored and deflated .npz of a folder's arrays: the folder's run" \
        || fail "stored and deflated .npz give the folder's run"
    bad "extra key in an .npz" "unknown key '6.weight': model mlp-digits's parameters" "${MLP[@]}" --steps 2 --init "$TMP/bad/extra.npz"
    bad "a member that is not .npy" "member 'README.txt' is not a .npy array" "${MLP[@]}" --steps 2 --init "$TMP/bad/notnpy.npz"
    bad "a member in a folder" "'sub/0.weight.npy' is not a plain file name" "${MLP[@]}" --steps 2 --init "$TMP/bad/folder.npz"
    bad "a member twice" "member '0.bias.npy' is there twice" "${MLP[@]}" --steps 2 --init "$TMP/bad/twice.npz"
    bad "an encrypted member" "is encrypted (not supported)" "${MLP[@]}" --steps 2 --init "$TMP/bad/encrypted.npz"
    bad "an unsupported compression method" "compression method 12 (expected 0, stored, or 8, deflated)" "${MLP[@]}" --steps 2 --init "$TMP/bad/bzip2.npz"
    bad "a zip64 archive" "a zip64 archive (not supported" "${MLP[@]}" --steps 2 --init "$TMP/bad/zip64.npz"
    bad "a stored member whose CRC-32 is wrong" "CRC-32 mismatch" "${MLP[@]}" --steps 2 --init "$TMP/bad/crc.npz"
else
    skip "crafted .npz cases (no python3)"
fi
bad "order too short: both counts named" "holds 9600 indices, but 301 steps at batch_size 32 need 9632" \
    "${MLP[@]}" --steps 301 --order $D/order-mlp-digits.npy
bad "order too short for a larger batch" "holds 9600 indices, but 151 steps at batch_size 64 need 9664" \
    "${MLP[@]}" --steps 151 --set batch_size=64 --order $D/order-mlp-digits.npy
vals=(); for i in $(seq 0 63); do vals+=($i); done
vals[40]=1500; mk_i4 "$TMP/bad/range.npy" "${vals[@]}"
bad "an index out of range: the first one, its entry and step" "index 1500 at entry 40 (step 2, batch_size 32) is out of range: the training rows are 0..1499" \
    "${MLP[@]}" --steps 2 --order "$TMP/bad/range.npy"
vals[40]=7; vals[50]=-1; mk_i4 "$TMP/bad/neg.npy" "${vals[@]}"
bad "a negative index" "index -1 at entry 50" "${MLP[@]}" --steps 2 --order "$TMP/bad/neg.npy"
vals[50]=9; mk_i4 "$TMP/bad/ok.npy" "${vals[@]}"
train "${MLP[@]}" --steps 2 --order "$TMP/bad/ok.npy" --out "$TMP/ok" && pass "an order written by hand (64 indices, 2 steps) is read" || fail "a hand-written order"
bad "an order of floats" "dtype '<f4', expected int32 ('<i4') or int64 ('<i8')" "${MLP[@]}" --steps 2 --order $D/init-mlp-digits/0.bias.npy
bad "--order on tiny-transformer is refused" "tiny-transformer trains on sequences generated from the seed" \
    --model tiny-transformer --policy 32-true --steps 2 --order "$TMP/bad/ok.npy"
bad "--init with --resume is refused" "the checkpoint keeps a run's --init and --order" --resume "$TMP/c1" --init $D/init-mlp-digits

tap_end
