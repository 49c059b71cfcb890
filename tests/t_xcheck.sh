#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_xcheck.sh: bin/fpemu against references outside this repository, the
# quick forms of
#   1-3  ref/xcheck.py: ml_dtypes and NumPy in rne (every format they share:
#        decode, casts from f32 and f64, add, sub, mul, div, sqrt);
#   4-7  ref/xcheck_gfloat.py: Graphcore's gfloat, conversions from binary64
#        in rne, rna, rtz, rup, rdn (with and without --sat) and sr, and
#        add, sub, mul in the same modes, for f16, bf16, the OCP formats
#        and the P3109 binary8pP formats;
# each with the checker's own test: planted faults (fpemu run forced to
# rtz; the sr stream of another seed) must be reported as mismatches. The
# Python is $FPEMU_PYTHON: the virtual environment `make deps` fills from
# ref/requirements.txt (make test exports it); missing modules fail the
# part that needs them. The full forms are `make xcheck`. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
PY=${FPEMU_PYTHON:-python3}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu) (make test builds it; make deps installs the tools)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_xcheck.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
echo "1..7"
printf '#!/bin/sh\nexec "%s" "$@" --round rtz\n' "$BIN" >"$TMP/fpemu_rtz"
printf '#!/bin/sh\nexec "%s" "$@" --seed 1\n' "$BIN" >"$TMP/fpemu_seed"
chmod +x "$TMP/fpemu_rtz" "$TMP/fpemu_seed"

# quick N SCRIPT WHAT: test N, the script's quick form agrees everywhere
quick() {
    FPEMU_BIN=$BIN "$PY" "$ROOT/ref/$2" --quick >"$TMP/out" 2>&1
    local rc=$?
    tail -1 "$TMP/out" | sed 's/^/# /'
    if [ $rc -eq 0 ] && grep -q ', 0 mismatches$' "$TMP/out"; then echo "ok $1 - $3"
    else echo "not ok $1 - mismatches: $3 (exit $rc)"; grep -m 20 MISMATCH "$TMP/out" | sed 's/^/#   /'; fi
}
# referr N AWK-FILTER WHAT: test N, the rows where the reference is found
# wrong (fpemu's result exact, the reference's not) are only those the
# filter allows (the known errors)
referr() {
    local odd
    odd=$(awk -F' *[|] *' "\$7 ~ /^[0-9]+\$/ && \$7 > 0 && !($2)" "$TMP/out")
    if [ -z "$odd" ]; then echo "ok $1 - $3"
    else echo "not ok $1 - reference errors elsewhere than $3"; printf '%s\n' "$odd" | sed 's/^/#   /'; fi
}
# planted N WRAPPER SCRIPT FORMAT ROWS WANT WHAT: test N, a planted fault
# gives mismatches in the WANT rows whose check matches ROWS
planted() {
    FPEMU_BIN=$TMP/$2 "$PY" "$ROOT/ref/$3" --quick "$4" >"$TMP/bad" 2>&1
    local rc=$? n
    n=$(awk -F' *[|] *' -v re="$5" '$4 ~ re && $8 > 0' "$TMP/bad" | wc -l)
    if [ $rc -eq 1 ] && [ "$n" -eq "$6" ]; then echo "ok $1 - a planted fault ($7) is caught in the $6 rows it changes: $(tail -1 "$TMP/bad")"
    else echo "not ok $1 - the planted fault ($7) was not caught in every row it changes (exit $rc, $n of $6 rows)"; fi
}
missing() { local n; for n in $(seq "$1" "$2"); do echo "not ok $n - $3"; done; }

if "$PY" -c 'import numpy, ml_dtypes; ml_dtypes.float8_e3m4, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e8m0fnu' 2>/dev/null; then
    quick 1 xcheck.py "every format agrees with ml_dtypes/NumPy (rne)"
    # ml_dtypes' known errors: float64 sources rounded twice (through
    # float32), e8m0 from f32 subnormals rounded up
    referr 2 '$4 == "from f64" || ($2 == "e8m0" && $4 == "from f32")' \
        "where ml_dtypes rounds float64 twice or e8m0's subnormal inputs up"
    planted 3 fpemu_rtz xcheck.py e4m3 '^(from|add|sub|mul|div|sqrt)' 7 "rtz for rne"
else
    missing 1 3 "$PY has no numpy and ml_dtypes >= 0.5 (make deps installs ref/requirements.txt into build/venv)"
fi

if "$PY" -c 'import numpy, gfloat; from gfloat import round_ndarray; from gfloat.formats import format_info_p3109, format_info_ocp_e8m0' 2>/dev/null; then
    quick 4 xcheck_gfloat.py "every format agrees with gfloat in every mode, sat and sr (conversions, add, sub, mul, fma)"
    # gfloat's two known differences: below e8m0's least value it returns
    # values that are not in the format (no clamp to 2^-127); at precision
    # 1 (e8m0, binary8p1) it breaks ties to the even code, where IEEE
    # 754-2019 4.3.1 (both significands being 1) takes the larger
    referr 5 '$2 == "e8m0" || ($2 ~ /^binary8p1[ef]$/ && $4 ~ /rne/)' \
        "below e8m0's least value and on precision-1 ties"
    planted 6 fpemu_rtz xcheck_gfloat.py e4m3 '^(rne|rna|rup|rdn|sr)' 12 "rtz for every mode"
    planted 7 fpemu_seed xcheck_gfloat.py binary8p3e '^sr' 4 "another sr seed"
else
    missing 4 7 "$PY has no numpy and gfloat >= 0.5 (make deps installs ref/requirements.txt into build/venv)"
fi
