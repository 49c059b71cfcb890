#!/usr/bin/env bash
# t_xcheck.sh: ref/xcheck.py's quick form, bin/fpemu against ml_dtypes and
# NumPy in rne (every format they share: decode, casts from f32 and f64,
# add, sub, mul, div, sqrt). Then the checker's own test: a planted fault
# (fpemu run forced to rtz) must be reported as mismatches. Skips where
# python3 lacks numpy or ml_dtypes (make deps does not install them;
# python3 -m pip install numpy ml_dtypes). Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..0 # SKIP $BIN is not built (make bin/fpemu)"; exit 0; fi
if ! python3 -c 'import numpy, ml_dtypes; ml_dtypes.float8_e3m4, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e8m0fnu' 2>/dev/null; then
    echo "1..0 # SKIP python3 with numpy and ml_dtypes >= 0.5 not found (python3 -m pip install numpy ml_dtypes)"; exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_xcheck.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
echo "1..3"
FPEMU_BIN=$BIN python3 "$ROOT/ref/xcheck.py" --quick >"$TMP/out" 2>&1
rc=$?
tail -1 "$TMP/out" | sed 's/^/# /'
if [ $rc -eq 0 ] && grep -q ', 0 mismatches$' "$TMP/out"; then echo "ok 1 - every format agrees with ml_dtypes/NumPy (rne)"
else echo "not ok 1 - mismatches against ml_dtypes/NumPy (exit $rc)"; grep -m 20 MISMATCH "$TMP/out" | sed 's/^/#   /'; fi
# where it finds the reference wrong (fpemu's result the exact nearest,
# the reference's not), that is only ml_dtypes' known errors: float64
# sources rounded twice (through float32), e8m0 from f32 subnormals
odd=$(awk -F' *[|] *' '$7 ~ /^[0-9]+$/ && $7 > 0 && $4 != "from f64" && !($2 == "e8m0" && $4 == "from f32")' "$TMP/out")
if [ -z "$odd" ] && grep -q '^| bf16 .* from f64 ' "$TMP/out"; then
    echo "ok 2 - reference errors only where ml_dtypes rounds float64 twice or e8m0's subnormal inputs up"
else echo "not ok 2 - reference errors elsewhere"; printf '%s\n' "$odd" | sed 's/^/#   /'; fi
# planted fault: every fpemu run in rtz instead of rne
printf '#!/bin/sh\nexec "%s" "$@" --round rtz\n' "$BIN" >"$TMP/fpemu_rtz"
chmod +x "$TMP/fpemu_rtz"
FPEMU_BIN=$TMP/fpemu_rtz python3 "$ROOT/ref/xcheck.py" --quick e4m3 >"$TMP/bad" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q MISMATCH "$TMP/bad"; then echo "ok 3 - a planted fault (rtz for rne) is caught: $(tail -1 "$TMP/bad")"
else echo "not ok 3 - the planted fault (rtz for rne) was not caught (exit $rc)"; fi
