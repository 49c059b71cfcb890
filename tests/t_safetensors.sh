#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_safetensors.sh: safetensors files (cli/safetensors.c, docs/cast.md):
# `fpemu cast` of a whole checkpoint and `fpemu train --init` from one.
# The files are written and read back by the format's reference
# implementation (the `safetensors` package, Hugging Face's Rust core, in
# $FPEMU_PYTHON: make deps-py), never by fpemu's own writer alone:
# - every tensor of a checkpoint (F64, F32, F16, BF16, F8_E4M3, F8_E5M2,
#   F8_E4M3FNUZ, F8_E5M2FNUZ, F8_E8M0, F4, a scalar, an empty tensor)
#   cast under each option set gives the bytes and the figures that
#   `fpemu cast` gives for the same tensor saved alone as .npy; integer and
#   BOOL tensors come back byte for byte; names, order, shapes, dtypes and
#   the metadata are kept; a sharded checkpoint (an index and its shards)
#   gives the tensors of the one-file cast, shard by shard, and its index
#   with the new total_size; a bad index leaves no folder;
# - values and codes against ml_dtypes (rne), F4's nibble order against
#   PyTorch's float4_e2m1fn_x2 packing (element 2i in the low nibble);
# - --only / --skip, the totals of --stats against the per-tensor figures;
# - --codes under each recipe: the scales' tensors (NAME_scale, NVFP4's
#   NAME_scale_2) dequantise the codes to the values of the same cast
#   without --codes, bit for bit, along either axis;
# - bad files and options: exit 2, a message naming the file (and the
#   tensor), no output left behind;
# - `fpemu train --init W.safetensors` gives the run that the same state as
#   an .npz gives; `--save-state` writes the final parameters as the twin's
#   state_dict, which --init reads back to the same bits.
# Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
PY=${FPEMU_PYTHON:-$ROOT/build/venv/bin/python}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu)"; exit 1; fi
if ! "$PY" -c 'import numpy, ml_dtypes, safetensors' 2>/dev/null; then
    echo "1..1"; echo "not ok 1 - $PY lacks numpy/ml_dtypes/safetensors (make deps-py; make test sets FPEMU_PYTHON)"; exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_safetensors.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib/tap.sh"

# A module of helpers for the checks below: st_write(path, {name: array},
# metadata) through the reference writer (F4 from ml_dtypes float4_e2m1fn
# arrays, packed as PyTorch packs float4_e2m1fn_x2), st_read(path) through
# the reference reader, raw(path, header_dict, data) for hand-made files.
cat > "$TMP/sth.py" <<'PY'
import json, struct
import numpy as np, ml_dtypes as md
from safetensors import serialize, deserialize, TensorSpec
NAMES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64", np.dtype(np.float16): "float16",
         np.dtype(md.bfloat16): "bfloat16", np.dtype(md.float8_e4m3fn): "float8_e4m3fn",
         np.dtype(md.float8_e5m2): "float8_e5m2", np.dtype(md.float8_e4m3fnuz): "float8_e4m3fnuz",
         np.dtype(md.float8_e5m2fnuz): "float8_e5m2fnuz", np.dtype(md.float8_e8m0fnu): "float8_e8m0fnu",
         np.dtype(np.int64): "int64", np.dtype(np.int32): "int32", np.dtype(np.bool_): "bool", np.dtype(np.uint8): "uint8"}
def pack4(a):
    c = a.view(np.uint8).reshape(-1) & 0xF
    return (c[0::2] | (c[1::2] << 4)).astype(np.uint8)
def unpack4(b):
    c = np.frombuffer(b, np.uint8)
    return np.stack([c & 0xF, c >> 4], -1).reshape(-1).astype(np.uint8)
def st_write(path, arrs, meta=None):
    keep, specs = [], {}
    for k, a in arrs.items():
        if a.dtype == md.float4_e2m1fn:
            p = pack4(a); keep.append(p)
            specs[k] = TensorSpec(dtype="float4_e2m1fn_x2", shape=list(a.shape[:-1]) + [a.shape[-1] // 2],
                                  data_ptr=p.ctypes.data, data_len=p.nbytes)
        else:
            a = np.ascontiguousarray(a); keep.append(a)
            specs[k] = TensorSpec(dtype=NAMES[a.dtype], shape=list(a.shape), data_ptr=a.ctypes.data, data_len=a.nbytes)
    open(path, "wb").write(serialize(specs, meta))
def st_read(path):
    return dict(deserialize(open(path, "rb").read()))
def st_meta(path):
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), n
def raw(path, header, data, pad=True):
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad: h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
PY

# check NAME PYTHON...: run the python in $TMP (sth imported), pass if it prints OK
check() {
    local name=$1; shift
    local out
    out=$(cd "$TMP" && PYTHONPATH="$TMP" "$PY" -c "import numpy as np, ml_dtypes as md, json, sys, subprocess; from sth import *; BIN='$BIN'
$*" 2>&1)
    if [ "$out" = OK ]; then pass "$name"; else fail "$name" "$out"; fi
}

# ---- the checkpoint ----
(cd "$TMP" && PYTHONPATH="$TMP" "$PY" - <<'PY'
import numpy as np, ml_dtypes as md
from sth import st_write
rng = np.random.default_rng(7)
w = (rng.standard_normal((16, 64)) * 2.0 ** rng.integers(-12, 6, (16, 1))).astype(np.float32)
w[0, :6] = [0, -0.0, 1e-30, 600, -470, 3e38]
w[1, :3] = [np.nan, np.inf, -np.inf]
A = {
    "layers.0.weight": w,
    "layers.0.bias": rng.standard_normal(64).astype(np.float64),
    "layers.1.weight": rng.standard_normal((8, 32)).astype(np.float16),
    "layers.1.bias": rng.standard_normal(33).astype(md.bfloat16),      # odd: F4 codes go out as U8
    "fp8.a": rng.standard_normal((4, 32)).astype(md.float8_e4m3fn),
    "fp8.b": rng.standard_normal((4, 32)).astype(md.float8_e5m2),
    "fnuz.a": rng.standard_normal((2, 32)).astype(md.float8_e4m3fnuz),
    "fnuz.b": rng.standard_normal((2, 32)).astype(md.float8_e5m2fnuz),
    "scales": (2.0 ** rng.integers(-8, 8, 32)).astype(md.float8_e8m0fnu),
    "fp4": rng.standard_normal((4, 32)).astype(md.float4_e2m1fn),
    "empty": np.zeros((0, 4), np.float32),
    "step": np.array([300, 7], np.int64),
    "mask": np.array([True, False, True]),
}
st_write("ck.safetensors", A, {"format": "pt", "note": "t_safetensors"})
import pickle; pickle.dump(A, open("ck.pkl", "wb"))
PY
) || { echo "1..1"; echo "not ok 1 - writing the checkpoint failed"; exit 1; }

# Every option set: the safetensors cast against the .npy cast of each
# tensor alone (bytes and figures), the kept tensors byte for byte.
SAME='
import pickle
A = pickle.load(open("ck.pkl", "rb"))
opts = sys.argv[1:] if len(sys.argv) > 1 else OPTS
def run(args):
    r = subprocess.run([BIN, "cast"] + args, capture_output=True, text=True)
    if r.returncode: print(args, r.stderr); sys.exit(0)
run(["--in", "ck.safetensors", "--out", "o.safetensors", "--stats-json", "o.json"] + opts)
I, O = st_read("ck.safetensors"), st_read("o.safetensors")
J = {t["name"]: t for t in json.load(open("o.json"))["tensors"]}
bad = []
order = lambda h: [k for k, v in sorted(((k, v) for k, v in h.items() if k != "__metadata__"), key=lambda kv: kv[1]["data_offsets"])]
# --codes under a recipe: each cast tensor (not empty) followed by its scales (NAME_scale, NVFP4 NAME_scale_2)
rec = opts[opts.index("--scaling") + 1] if "--scaling" in opts else "none"
comp = ["_scale"] + (["_scale_2"] if rec == "nvfp4" else []) if "--codes" in opts and rec != "none" else []
want = [n for k in order(st_meta("ck.safetensors")[0]) for n in [k] + ([k + c for c in comp] if J[k]["cast"] and 0 not in I[k]["shape"] else [])]
if want != order(st_meta("o.safetensors")[0]): bad.append("names or order")
FROM = {"F8_E4M3": "e4m3", "F8_E5M2": "e5m2", "F8_E4M3FNUZ": "e4m3fnuz", "F8_E5M2FNUZ": "e5m2fnuz", "F8_E8M0": "e8m0", "F4": "e2m1"}
for k, v in I.items():
    o = O[k]
    if o["shape"] != v["shape"]: bad.append(k + " shape")
    if not J[k]["cast"]:
        if o["data"] != v["data"] or o["dtype"] != v["dtype"]: bad.append(k + " kept bytes")
        continue
    if v["shape"] and 0 in v["shape"]:
        if o["data"] != b"" or J[k]["figures"] is not None: bad.append(k + " empty")
        continue
    np.save(k + ".npy", A[k])
    frm = ["--from", FROM[v["dtype"]]] if v["dtype"] in FROM else []
    run(["--in", k + ".npy", "--out", "p.npy", "--stats-json", "p.json"] + frm + opts)
    p = np.load("p.npy")
    got = unpack4(o["data"]).tobytes() if o["dtype"] == "F4" else o["data"]
    if p.tobytes() != got: bad.append(k + " bytes (" + o["dtype"] + ")")
    if json.load(open("p.json")) != J[k]["figures"]: bad.append(k + " figures")
print("OK" if not bad else bad)
'
while read -r OPTS; do
    check "cast $OPTS: every tensor as cast alone, the rest kept" "OPTS='$OPTS'.split()
$SAME"
done <<'EOF'
--to e4m3
--to e4m3 --scaling tensor
--to e4m3 --codes --sat
--to e5m2 --scaling mx-rceil --codes
--to e4m3 --scaling mx-floor
--to e2m1 --codes --scaling nvfp4
--to e2m1 --codes
--to bf16 --codes --round rtz
--to f16 --round rdn
--to e8m0 --codes
--to e3m2 --codes
--to e4m3 --scaling rowwise --axis 0
--to e4m3 --scaling blockwise
--to e4m3 --round sr --seed 9
--to e4m3fnuz --codes --nan torch
--to f32 --codes
EOF

# ---- against ml_dtypes and PyTorch's packing ----
"$BIN" cast --to e4m3 --codes --in "$TMP/ck.safetensors" --out "$TMP/e4.safetensors" --only 'layers.*' 2>"$TMP/err"
check "--codes e4m3: F8_E4M3 bytes of ml_dtypes' float8_e4m3fn (rne, finite inputs in range)" '
O = st_read("e4.safetensors"); A = __import__("pickle").load(open("ck.pkl", "rb"))
w = A["layers.0.weight"].astype(np.float64); w16 = A["layers.1.weight"]
ok = np.isfinite(w) & (np.abs(w) < 464)
got = np.frombuffer(O["layers.0.weight"]["data"], np.uint8).reshape(w.shape)
ref = w.astype(md.float8_e4m3fn).view(np.uint8)
g16 = np.frombuffer(O["layers.1.weight"]["data"], np.uint8)
print("OK" if O["layers.0.weight"]["dtype"] == "F8_E4M3" and (got[ok] == ref[ok]).all() and ok.sum() > 1000
      and (g16 == w16.astype(md.float8_e4m3fn).view(np.uint8).reshape(-1)).all() else "differs")'
"$BIN" cast --to e2m1 --codes --in "$TMP/ck.safetensors" --out "$TMP/f4.safetensors" --only 'layers.1.*' --only fp8.a 2>"$TMP/err"
check "--codes e2m1: F4, two codes a byte, element 2i in the low nibble (float4_e2m1fn_x2); an odd last dimension as U8" '
O = st_read("f4.safetensors"); A = __import__("pickle").load(open("ck.pkl", "rb"))
a = A["layers.1.weight"].astype(np.float32)
ref = a.astype(md.float4_e2m1fn).view(np.uint8).reshape(-1) & 0xF
b = np.frombuffer(O["layers.1.weight"]["data"], np.uint8)
odd = O["layers.1.bias"]
r2 = A["layers.1.bias"].astype(np.float32).astype(md.float4_e2m1fn).view(np.uint8) & 0xF
print("OK" if O["layers.1.weight"]["dtype"] == "F4" and O["layers.1.weight"]["shape"] == [8, 32]
      and (b == (ref[0::2] | ref[1::2] << 4)).all() and odd["dtype"] == "U8" and odd["data"] == r2.tobytes()
      and O["fp8.a"]["dtype"] == "F4" else "differs")'
check "F4 input: read as PyTorch packs it (values equal ml_dtypes' float4_e2m1fn)" '
r = subprocess.run([BIN, "cast", "--to", "f32", "--in", "ck.safetensors", "--out", "v.safetensors", "--only", "fp4"], capture_output=True)
O = st_read("v.safetensors"); A = __import__("pickle").load(open("ck.pkl", "rb"))
v = np.frombuffer(O["fp4"]["data"], np.float32)
print("OK" if r.returncode == 0 and (v == A["fp4"].astype(np.float32).reshape(-1)).all() else "differs")' 2>/dev/null

# ---- selection, metadata, totals ----
"$BIN" cast --to e5m2 --in "$TMP/ck.safetensors" --out "$TMP/sel.safetensors" --only 'layers.*' --skip '*.bias' --stats "$TMP/sel.txt" --stats-json "$TMP/sel.json" 2>"$TMP/err"
check "--only / --skip: only the matching floating-point tensors are cast" '
I, O = st_read("ck.safetensors"), st_read("sel.safetensors"); J = json.load(open("sel.json"))
cast = sorted(t["name"] for t in J["tensors"] if t["cast"])
same = all(O[k]["data"] == I[k]["data"] for k in I if k not in cast)
print("OK" if cast == ["layers.0.weight", "layers.1.weight"] and same and O["layers.0.weight"]["dtype"] == "F32"
      and J["total"]["cast"] == 2 and J["total"]["kept"] == len(I) - 2 else (cast, same))'
check "metadata kept, and the command recorded under fpemu_cast; header padded to 8 bytes" '
m, n = st_meta("sel.safetensors")
print("OK" if m["__metadata__"]["format"] == "pt" and m["__metadata__"]["note"] == "t_safetensors"
      and m["__metadata__"]["fpemu_cast"].startswith("fpemu cast --to e5m2") and n % 8 == 0 else m["__metadata__"])'
check "--stats: the totals are the sums of the tensors' figures; the worst SQNR is the smallest" '
J = json.load(open("sel.json")); T = open("sel.txt").read()
fig = [t["figures"] for t in J["tensors"] if t["cast"]]
tot = J["total"]; ok = True
for k in ("n", "overflow", "saturated", "flushed", "subnormal", "nonfinite_in"):
    ok &= tot[k] == sum(f[k] for f in fig)
w = min(fig, key=lambda f: f["sqnr_db"])
ok &= abs(tot["worst_sqnr_db"] - w["sqnr_db"]) < 1e-6 * abs(w["sqnr_db"]) and "tensors       2 cast, 11 kept" in T
ok &= ("n             %d" % tot["n"]) in T and tot["overflow"] > 0
print("OK" if ok else (tot, T[:300]))'

# a scalar (shape []) and a file with nothing after its header
check "a 0-d tensor keeps its shape []; an empty file (no tensors) is cast to an empty file" '
raw("s.safetensors", {"s": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}}, np.float32([3.3]).tobytes())
raw("z.safetensors", {"__metadata__": {"a": "b"}}, b"")
r1 = subprocess.run([BIN, "cast", "--to", "e4m3", "--in", "s.safetensors", "--out", "s2.safetensors"], capture_output=True, text=True)
r2 = subprocess.run([BIN, "cast", "--to", "e4m3", "--in", "z.safetensors", "--out", "z2.safetensors"], capture_output=True, text=True)
S = st_read("s2.safetensors"); Z = st_read("z2.safetensors")
print("OK" if r1.returncode == 0 and r2.returncode == 0 and S["s"]["shape"] == [] and
      np.frombuffer(S["s"]["data"], np.float32)[0] == np.float32(3.25) and Z == {} else (r1.stderr, r2.stderr, S))'

# ---- bad files: exit 2, the file (and tensor) named, no output ----
(cd "$TMP" && PYTHONPATH="$TMP" "$PY" - <<'PY'
import struct, numpy as np
from sth import raw
f4 = np.float32([1, 2, 3, 4]).tobytes()
T = lambda d="F32", s=[4], o=[0, 16]: {"dtype": d, "shape": s, "data_offsets": o}
raw("b_trunc.safetensors", {"t": T()}, f4[:12])
raw("b_extra.safetensors", {"t": T()}, f4 + b"\0")
raw("b_gap.safetensors", {"t": T(o=[4, 20])}, b"\0" * 4 + f4)
raw("b_overlap.safetensors", {"a": T(o=[0, 16]), "b": T(o=[8, 24])}, f4 + f4[:8])
raw("b_size.safetensors", {"t": T(s=[5])}, f4)
raw("b_dtype.safetensors", {"t": T(d="F12")}, f4)
raw("b_shape.safetensors", {"t": T(s=[4.5])}, f4)
raw("b_neg.safetensors", {"t": T(o=[-1, 15])}, f4)
raw("b_meta.safetensors", {"__metadata__": {"a": 1}, "t": T()}, f4)
raw("b_f6.safetensors", {"t": T(d="F6_E2M3", s=[4], o=[0, 3])}, b"\0\0\0")
raw("b_odd4.safetensors", {"t": T(d="F4", s=[3], o=[0, 2])}, b"\0\0")
open("b_dup.safetensors", "wb").write(struct.pack("<Q", 120) + (b'{"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}').ljust(120) + f4)
h = b'{"__metadata__":{"a":"b"},"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"__metadata__":{"c":"d"}}'
open("b_dupmeta.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + f4)
h = b'{"t\\u0000x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'
open("b_nul.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + f4)
h = b'{"t\xff":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'
open("b_utf8.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + f4)
h = b'{"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}'
open("b_json.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + f4)
open("b_hlen.safetensors", "wb").write(struct.pack("<Q", 1000) + b"{}")
open("b_big.safetensors", "wb").write(struct.pack("<Q", 100000001) + b"{" + b" " * 64)
open("b_short.safetensors", "wb").write(b"\x02\0\0\0")
PY
) || fail "writing the bad files"
bad() {
    local name=$1 want=$2; shift 2
    rm -f "$TMP/bad_out.safetensors"
    "$BIN" "$@" 2>"$TMP/err" >/dev/null
    local rc=$?
    local left
    left=$(ls "$TMP" | grep -c '^bad_out' || true)
    if [ $rc -eq 2 ] && grep -q -- "$want" "$TMP/err" && [ "$left" = 0 ]; then pass "$name"
    else fail "$name" "rc $rc, left $left, stderr: $(cat "$TMP/err")"; fi
}
for c in "trunc:cover 16 bytes of data, the file holds 12" "extra:cover 16 bytes of data, the file holds 17" \
         "gap:starts at byte 4 of the data, where the data starts at 0" "overlap:tensor 'b' starts at byte 8" \
         "size:hold 16 bytes, its shape and dtype F32 need 20" "dtype:unknown dtype \"F12\"" \
         "shape:shape\[0\] is not a whole number" "neg:\"data_offsets\" is not \[BEGIN, END\]" \
         "meta:the value of 'a' is not a string" "dup:the name 't' is given twice" \
         "dupmeta:the name '__metadata__' is given twice" "nul:\\\\u0000 escape" \
         "utf8:not valid UTF-8" "json:not valid JSON" "hlen:runs past the end of the file" \
         "big:above the format's limit" "odd4:do not fill a whole number of bytes"; do
    f=${c%%:*}; want=${c#*:}
    bad "bad file ($f): refused, named, nothing written" "$want" cast --to e4m3 --in "$TMP/b_$f.safetensors" --out "$TMP/bad_out.safetensors"
done
bad "short file: neither .npy nor safetensors" "neither a .npy file" cast --to e4m3 --in "$TMP/b_short.safetensors" --out "$TMP/bad_out.safetensors"
bad "an F6 tensor to cast is refused and named (--skip)" "tensor 't': F6_E2M3 elements" cast --to e4m3 --in "$TMP/b_f6.safetensors" --out "$TMP/bad_out.safetensors"
"$BIN" cast --to e4m3 --in "$TMP/b_f6.safetensors" --out "$TMP/f6k.safetensors" --skip t 2>"$TMP/err"
check "an F6 tensor left out with --skip is copied as it is" '
print("OK" if st_read("f6k.safetensors")["t"]["data"] == b"\0\0\0" else "differs")'
bad "--out must be a .safetensors name" "give a name ending in .safetensors" cast --to e4m3 --in "$TMP/ck.safetensors" --out "$TMP/bad_out.npy"
bad "--from is refused for safetensors" "--from is for .npy inputs" cast --to e4m3 --from e4m3 --in "$TMP/ck.safetensors" --out "$TMP/bad_out.safetensors"
bad "--plot is refused for safetensors" "--plot draws one tensor" cast --to e4m3 --plot "$TMP/p.png" --in "$TMP/ck.safetensors" --out "$TMP/bad_out.safetensors"
bad "--axis outside a tensor's dimensions names the tensor" "tensor 'layers.0.bias'" cast --to e4m3 --scaling rowwise --axis 1 --in "$TMP/ck.safetensors" --out "$TMP/bad_out.safetensors"
bad "--only matching no tensor is refused, named" "--only 'layer.\*': no tensor" cast --to e4m3 --only 'layers.*' --only 'layer.*' --in "$TMP/ck.safetensors" --out "$TMP/bad_out.safetensors"
bad "--only with an .npy input" "--only and --skip choose tensors" cast --to e4m3 --only x --in "$TMP/layers.0.weight.npy" --out "$TMP/bad_out.npy"

# ---- --codes under a recipe: the scales beside the codes ----
# Each recipe, along each axis: the codes times their factors (NAME_scale,
# broadcast over its blocks; NVFP4 then times NAME_scale_2), rounded to f32,
# are bit for bit the values the same cast writes without --codes.
(cd "$TMP" && PYTHONPATH="$TMP" "$PY" - <<'PY'
import numpy as np
from sth import st_write
rng = np.random.default_rng(11)
st_write("sc.safetensors", {"a.weight": (rng.standard_normal((6, 70)) * 3).astype(np.float32),
                            "b.weight": (rng.standard_normal((3, 4, 40)) * 2.0 ** rng.integers(-9, 9, (3, 4, 1))).astype(np.float32),
                            "c.bias": rng.standard_normal(34).astype(np.float32), "d.step": np.array([3], np.int64)})
st_write("sc_clash.safetensors", {"w": np.ones((2, 4), np.float32), "w_scale": np.ones(1, np.float32)})
PY
) || fail "writing the scales checkpoint"
DEQ='
fmt, rec, axis = ARGS
B = {"rowwise": None, "blockwise": 128, "mx-floor": 32, "mx-rceil": 32, "nvfp4": 16}.get(rec)
args = ["cast", "--to", fmt, "--in", "sc.safetensors", "--scaling", rec, "--axis", axis]
r1 = subprocess.run([BIN] + args + ["--out", "sv.safetensors"], capture_output=True, text=True)
r2 = subprocess.run([BIN] + args + ["--out", "sq.safetensors", "--codes"], capture_output=True, text=True)
if r1.returncode or r2.returncode: print(r1.stderr, r2.stderr); sys.exit(0)
V, C = st_read("sv.safetensors"), st_read("sq.safetensors")
DT = {"F32": np.float32, "F8_E4M3": md.float8_e4m3fn, "F8_E5M2": md.float8_e5m2, "F8_E8M0": md.float8_e8m0fnu, "U8": np.uint8}
def arr(t):
    if t["dtype"] == "F4": return unpack4(t["data"]).view(md.float4_e2m1fn).reshape(t["shape"])
    a = np.frombuffer(t["data"], DT[t["dtype"]]).reshape(t["shape"])
    return a.view(md.float4_e2m1fn) if t["dtype"] == "U8" and fmt == "e2m1" else a
bad = []
sdt = {"mx-floor": "F8_E8M0", "mx-rceil": "F8_E8M0", "nvfp4": "F8_E4M3"}.get(rec, "F32")
if sorted(C) != sorted(["a.weight", "b.weight", "c.bias", "d.step"] + [k + s for k in ("a.weight", "b.weight", "c.bias") for s in ["_scale"] + (["_scale_2"] if rec == "nvfp4" else [])]):
    bad.append(sorted(C))
for k in ("a.weight", "b.weight", "c.bias"):
    v = np.frombuffer(V[k]["data"], np.float32).reshape(V[k]["shape"])
    code, sc = arr(C[k]).astype(np.float32), arr(C[k + "_scale"]).astype(np.float32)
    ax = int(axis) % v.ndim
    if C[k + "_scale"]["dtype"] != sdt: bad.append(k + " scale dtype " + C[k + "_scale"]["dtype"])
    if B is None and rec != "rowwise":
        if sc.shape != (): bad.append(k + " scale shape")
        f = sc
    else:
        L = v.shape[ax]; b = L if B is None else B
        if sc.shape != tuple(n for i, n in enumerate(v.shape) if i != ax) + (-(-L // b),): bad.append(k + " scale shape %s" % (sc.shape,))
        f = np.moveaxis(np.repeat(sc, b, axis=-1)[..., :L], -1, ax)
    d = (code * f).astype(np.float32)
    if rec == "nvfp4":
        s2 = C[k + "_scale_2"]
        if s2["dtype"] != "F32" or s2["shape"] != []: bad.append(k + " scale_2")
        d = (d * np.frombuffer(s2["data"], np.float32)[0]).astype(np.float32)
    if not np.array_equal(d.view(np.uint32), v.view(np.uint32)): bad.append(k + " values: %d differ" % np.sum(d != v))
if C["d.step"]["data"] != V["d.step"]["data"]: bad.append("kept")
print("OK" if not bad else bad)
'
while read -r A1 A2 A3; do
    check "--codes --scaling $A2 --axis $A3 to $A1: the codes times NAME_scale (and NAME_scale_2), rounded to f32, are the values without --codes" "ARGS=('$A1', '$A2', '$A3')
$DEQ"
done <<'EOF'
e4m3 tensor -1
e5m2 tensor-torchao -1
e4m3 rowwise -1
e4m3 rowwise 0
e4m3 blockwise -1
e4m3 mx-floor -1
e5m2 mx-rceil 0
e2m1 nvfp4 -1
e2m1 nvfp4 0
EOF
bad "--codes under a recipe: a tensor already named NAME_scale is refused, named" "its scales would go in 'w_scale'" \
    cast --to e4m3 --codes --scaling tensor --in "$TMP/sc_clash.safetensors" --out "$TMP/bad_out.safetensors"

# ---- a sharded checkpoint: MODEL.safetensors.index.json and its shards ----
(cd "$TMP" && PYTHONPATH="$TMP" "$PY" - <<'PY'
import os, json, pickle
from sth import st_write
A = pickle.load(open("ck.pkl", "rb"))
ks = list(A)
parts = {"model-00001-of-00002.safetensors": ks[:6], "model-00002-of-00002.safetensors": ks[6:]}
for d in ("sh", "sh_missing", "sh_extra", "sh_slash"):
    os.makedirs(d, exist_ok=True)
    for f, names in parts.items():
        st_write(d + "/" + f, {k: A[k] for k in names}, {"format": "pt"})
    wm = {k: f for f, names in parts.items() for k in names}
    if d == "sh_missing": wm["ghost.weight"] = "model-00001-of-00002.safetensors"
    if d == "sh_extra": del wm[ks[0]]
    if d == "sh_slash": wm[ks[0]] = "../ck.safetensors"
    json.dump({"metadata": {"total_size": 1, "other": "kept"}, "weight_map": wm}, open(d + "/model.safetensors.index.json", "w"), indent=2)
PY
) || fail "writing the sharded checkpoints"
"$BIN" cast --to e4m3 --scaling mx-rceil --codes --in "$TMP/sh/model.safetensors.index.json" --out "$TMP/sh8" --stats-json "$TMP/sh8.json" 2>"$TMP/err"
"$BIN" cast --to e4m3 --scaling mx-rceil --codes --in "$TMP/ck.safetensors" --out "$TMP/one8.safetensors" --stats-json "$TMP/one8.json" 2>>"$TMP/err"
check "a sharded checkpoint: each shard cast under its name, each tensor as in the one-file cast; the index's weight_map kept, total_size the new data bytes" '
import os
O = {}
for f in sorted(os.listdir("sh8")):
    if f.endswith(".safetensors"): O.update({k: dict(v, file=f) for k, v in st_read("sh8/" + f).items()})
one = st_read("one8.safetensors")
ix = json.load(open("sh8/model.safetensors.index.json")); ix0 = json.load(open("sh/model.safetensors.index.json"))
J = {t["name"]: t for t in json.load(open("sh8.json"))["tensors"]}; J1 = {t["name"]: t for t in json.load(open("one8.json"))["tensors"]}
ok = set(O) == set(one) and all(O[k]["data"] == one[k]["data"] and O[k]["dtype"] == one[k]["dtype"] for k in one)
# the index: every input entry kept, and each tensor the shards gained (the MX scales of --codes) in the shard of its tensor
ok &= ix["weight_map"] == {k: O[k]["file"] for k in O} and all(ix["weight_map"][k] == f for k, f in ix0["weight_map"].items())
ok &= all(O[k]["file"] == O[k[:-len("_scale")]]["file"] for k in set(O) - set(ix0["weight_map"])) and len(O) > len(ix0["weight_map"])
ok &= ix["metadata"]["total_size"] == sum(len(v["data"]) for v in O.values()) and ix["metadata"]["other"] == "kept"
ok &= ix["metadata"]["fpemu_cast"].startswith("fpemu cast --to e4m3")
ok &= all(J[k].get("figures") == J1[k].get("figures") and J[k]["file"] == O[k]["file"] for k in J1)
ok &= json.load(open("sh8.json"))["total"]["files"] == 2 and sorted(os.listdir("sh8")) == sorted(os.listdir("sh"))
print("OK" if ok else (sorted(O), ix["metadata"], open("err").read()))'
bad_dir() {
    local name=$1 want=$2 out=$3; shift 3
    "$BIN" "$@" 2>"$TMP/err" >/dev/null
    local rc=$?
    local left
    left=$(ls "$TMP" | grep -c "^$(basename "$out")" || true)
    if [ $rc -eq 2 ] && grep -q -- "$want" "$TMP/err" && [ "$left" = 0 ]; then pass "$name"
    else fail "$name" "rc $rc, left $left, stderr: $(cat "$TMP/err")"; fi
}
bad_dir "sharded: a weight_map entry no shard holds is named; no folder left" "places 'ghost.weight' in model-00001" "$TMP/bad_sh" \
    cast --to e4m3 --in "$TMP/sh_missing/model.safetensors.index.json" --out "$TMP/bad_sh"
bad_dir "sharded: a tensor the weight_map does not list is named; no folder left" "is not in the index's weight_map" "$TMP/bad_sh" \
    cast --to e4m3 --in "$TMP/sh_extra/model.safetensors.index.json" --out "$TMP/bad_sh"
bad_dir "sharded: a shard outside the index's folder is refused" "is not the name of a .safetensors file beside the index" "$TMP/bad_sh" \
    cast --to e4m3 --in "$TMP/sh_slash/model.safetensors.index.json" --out "$TMP/bad_sh"
bad_dir "sharded: --only matching no tensor is refused" "--only 'nothing\*': no tensor" "$TMP/bad_sh" \
    cast --to e4m3 --only 'nothing*' --in "$TMP/sh/model.safetensors.index.json" --out "$TMP/bad_sh"
mkdir -p "$TMP/exists"
"$BIN" cast --to e4m3 --in "$TMP/sh/model.safetensors.index.json" --out "$TMP/exists" 2>"$TMP/err"
if [ $? -eq 2 ] && grep -q "exists; a sharded checkpoint is written into a new folder" "$TMP/err" && [ -z "$(ls -A "$TMP/exists")" ]; then
    pass "sharded: an existing --out is refused and left alone"
else fail "sharded: an existing --out is refused and left alone" "$(cat "$TMP/err")"; fi

# ---- the committed checkpoint (tests/data/safetensors/, the README's tour) ----
check "tests/data/safetensors/: the tiny transformer's recorded state, tensor for tensor the .npz's; fpemu reads it back to the same bytes" "
R = '$ROOT/tests/data'
z = np.load(R + '/real-runs/h200-2026-11-27/tiny-transformer/init.npz')
S = st_read(R + '/safetensors/tiny-transformer-init.safetensors')
same = sorted(S) == sorted(z.files) and all(S[k]['dtype'] == 'F32' and S[k]['shape'] == list(z[k].shape) and S[k]['data'] == z[k].astype('<f4').tobytes() for k in z.files)
r = subprocess.run([BIN, 'cast', '--to', 'f32', '--in', R + '/safetensors/tiny-transformer-init.safetensors', '--out', 'tt.safetensors'], capture_output=True, text=True)
back = st_read('tt.safetensors') if r.returncode == 0 else {}
print('OK' if same and back and all(back[k]['data'] == S[k]['data'] for k in S) else (same, r.stderr))"

# ---- fpemu train --init W.safetensors ----
D=$ROOT/tests/data/real-runs/h200-2026-11-26
(cd "$TMP" && PYTHONPATH="$TMP" "$PY" - "$D/init-deep-mlp.npz" <<'PY'
import sys, numpy as np, ml_dtypes as md
from sth import st_write
z = np.load(sys.argv[1])
st_write("init.safetensors", {k: z[k] for k in z.files}, {"format": "pt"})
st_write("init_bf16.safetensors", {k: z[k].astype(md.bfloat16) for k in z.files})
np.savez("init_bf16.npz", **{k: z[k].astype(md.bfloat16).astype(np.float32) for k in z.files})
st_write("init_badkey.safetensors", {("x" + k if i == 0 else k): z[k] for i, k in enumerate(z.files)})
st_write("init_i64.safetensors", {k: (z[k].astype(np.int64) if i == 1 else z[k]) for i, k in enumerate(z.files)})
PY
) || fail "writing the --init files"
train() { "$BIN" train --model deep-mlp --policy 16-mixed --steps 12 --order "$D/order-deep-mlp.npy" --set numerics=torch-cuda \
          --set weight_decay=0.01 "$@" >/dev/null 2>"$TMP/err"; }
train --init "$D/init-deep-mlp.npz" --out "$TMP/r_npz" && train --init "$TMP/init.safetensors" --out "$TMP/r_st"
if cmp -s "$TMP/r_npz/metrics.csv" "$TMP/r_st/metrics.csv"; then pass "--init W.safetensors: the run of the same state as .npz"
else fail "--init W.safetensors: the run of the same state as .npz" "$(cat "$TMP/err")"; fi
train --init "$TMP/init_bf16.npz" --out "$TMP/r_bnpz" && train --init "$TMP/init_bf16.safetensors" --out "$TMP/r_bst"
if cmp -s "$TMP/r_bnpz/metrics.csv" "$TMP/r_bst/metrics.csv"; then pass "--init: BF16 tensors read exactly"
else fail "--init: BF16 tensors read exactly" "$(cat "$TMP/err")"; fi
check "--init: summary.json's init CRC-32 is the file's" "
import zlib; s = json.load(open('r_st/summary.json'))
c = '%08x' % zlib.crc32(open('init.safetensors', 'rb').read())
print('OK' if s['init']['crc32'] == c else (c, s['init']))"
bad_train() {
    local name=$1 want=$2; shift 2
    train "$@" --out "$TMP/bad_run"
    local rc=$?
    if [ $rc -eq 2 ] && grep -q -- "$want" "$TMP/err" && [ ! -e "$TMP/bad_run" ]; then pass "$name"
    else fail "$name" "rc $rc, stderr: $(cat "$TMP/err")"; fi
}
# --save-state: the final parameters as the twin's state_dict
train --init "$D/init-deep-mlp.npz" --save-state --out "$TMP/r_save" && \
    "$BIN" train --model deep-mlp --policy 16-mixed --steps 1 --order "$D/order-deep-mlp.npy" --set numerics=torch-cuda \
        --set weight_decay=0.01 --set lr=0 --init "$TMP/r_save/state.safetensors" --save-state --out "$TMP/r_back" --quiet 2>>"$TMP/err" && \
    "$BIN" train --model tiny-transformer --policy bf16-true --steps 2 --save-state --out "$TMP/r_tt" --quiet 2>>"$TMP/err" && \
    "$BIN" train --model mlp-digits --policy 64-true --steps 2 --save-state --out "$TMP/r_64" --quiet 2>>"$TMP/err"
check "--save-state: state.safetensors holds the twins' keys and shapes (twins.state_keys) in state_dict order, in the parameters' dtype (F32, BF16, F64), listed in summary.json" "
z = np.load('$D/init-deep-mlp.npz')
m, n = st_meta('r_save/state.safetensors')
order = [k for k, v in sorted(((k, v) for k, v in m.items() if k != '__metadata__'), key=lambda kv: kv[1]['data_offsets'])]
S = st_read('r_save/state.safetensors')
ok = order == list(z.files) and all(S[k]['dtype'] == 'F32' and S[k]['shape'] == list(z[k].shape) for k in z.files)
ok &= m['__metadata__']['fpemu_model'] == 'deep-mlp' and m['__metadata__']['fpemu_step'] == '12'
ok &= 'state.safetensors' in json.load(open('r_save/summary.json'))['files']
ok &= set(v['dtype'] for v in st_read('r_tt/state.safetensors').values()) == {'BF16'}
ok &= set(v['dtype'] for v in st_read('r_64/state.safetensors').values()) == {'F64'}
sys.path.insert(0, '$ROOT/python/fpemu')
import twins  # the twins' state_dict keys and shapes (python/fpemu/twins.py, without torch)
for run, model in (('r_save', 'deep-mlp'), ('r_tt', 'tiny-transformer'), ('r_64', 'mlp-digits')):
    h = st_meta(run + '/state.safetensors')[0]
    got = [(k, tuple(v['shape'])) for k, v in sorted(((k, v) for k, v in h.items() if k != '__metadata__'), key=lambda kv: kv[1]['data_offsets'])]
    ok &= got == [(k, tuple(sh)) for k, sh in twins.state_keys(model)]
print('OK' if ok else (order[:3], m['__metadata__'], open('err').read()))"
check "--save-state, then --init from it with lr 0: the same parameters, bit for bit, and the same evaluation" "
A, B = st_read('r_save/state.safetensors'), st_read('r_back/state.safetensors')
a, b = json.load(open('r_save/summary.json'))['final'], json.load(open('r_back/summary.json'))['final']
print('OK' if all(A[k]['data'] == B[k]['data'] for k in A) and a['eval_loss'] == b['eval_loss'] and a['eval_accuracy'] == b['eval_accuracy'] else (a, b))"
if [ ! -e "$TMP/r_st/state.safetensors" ]; then pass "without --save-state no state.safetensors"; else fail "without --save-state no state.safetensors"; fi
bad_train "--init: an unknown key is named" "x0.weight" --init "$TMP/init_badkey.safetensors"
bad_train "--init: an integer tensor is refused, named" "dtype I64, expected F32" --init "$TMP/init_i64.safetensors"
bad_train "--init: a bad safetensors file is refused, named" "cover 16 bytes of data" --init "$TMP/b_trunc.safetensors"
tap_end
