#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_spec_oracle.sh: bin/fpemu against the spec oracle (ref/spec_oracle/), an
# exact Python reference written independently from the specification text
# of the rounding contract (IEEE 754-2019, the OCP and P3109 format
# specifications, as docs/semantics.md and docs/formats.md restate them)
# that shares no code with emu/ or ref/ (C):
#   - compare.py --smoke (about 30 s on 2 cores): every format family, every
#     op, conversions (e8m0's included), all seven modes (sr with a draw
#     per line, many on the decision's edge), each option set,
#     specials and a seeded random sample; one test per family and one for
#     the total, ok when every vector agrees (result code and flags);
#   - cli_checks.py (about 1 s): the vector interface of docs/cli.md,
#     one test per section;
#   - the comparison's own test: a wrapper that flips the low bit of the
#     result in the first line of every `fpemu run` must give exactly one
#     disagreement per config, and exit status 1.
# Skipped when python3 is missing. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
ORACLE=$ROOT/ref/spec_oracle
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu) (make test builds it; make deps installs the tools)"; exit 1; fi
if ! command -v python3 >/dev/null 2>&1; then echo "1..1"; echo "not ok 1 - python3 not found (make test builds it; make deps installs the tools)"; exit 1; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_spec_oracle.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

. "$HERE/lib/tap.sh"

# 1. the smoke run: one test per family line ("NAME: C configs V vectors, D
# disagreements"), then the total and the exit status
FPEMU_BIN=$BIN python3 "$ORACLE/compare.py" --smoke --out "$TMP/smoke" >"$TMP/smoke.out" 2>&1
rc=$?
groups=$(grep -E '^[^ ].*: +[0-9]+ configs +[0-9]+ vectors, [0-9]+ disagreements' "$TMP/smoke.out")
if [ -z "$groups" ]; then
    fail "compare.py --smoke printed no family lines (exit $rc)" "$(tail -20 "$TMP/smoke.out")"
else
    while IFS= read -r line; do
        name=${line%%:*}
        if [[ $line == *", 0 disagreements"* ]]; then pass "smoke $name: $(echo "${line#*:}" | sed 's/  */ /g; s/^ //')"
        else fail "smoke $name: $(echo "${line#*:}" | sed 's/  */ /g; s/^ //')" \
            "$(grep -F -- "$name" "$TMP/smoke/mismatches.txt" 2>/dev/null | head -10)"; fi
    done <<<"$groups"
fi
total=$(grep '^TOTAL:' "$TMP/smoke.out")
if [ "$rc" = 0 ] && [[ $total == *" 0 disagreements"* ]]; then pass "smoke ${total}"
else fail "smoke: exit $rc, ${total:-no TOTAL line}" "$(tail -14 "$TMP/smoke.out")"; fi

# 2. cli_checks.py: one test per section
FPEMU_BIN=$BIN python3 "$ORACLE/cli_checks.py" >"$TMP/cli.out" 2>&1
rc=$?
sections=$(grep '^section ' "$TMP/cli.out")
if [ -z "$sections" ]; then
    fail "cli_checks.py printed no section lines (exit $rc)" "$(tail -20 "$TMP/cli.out")"
else
    while IFS= read -r line; do
        sec=$(echo "$line" | sed 's/^section \([^:]*\):.*/\1/')
        if [[ $line == *", 0 failures" ]]; then pass "cli_checks $line"
        else fail "cli_checks $line" "$(grep "^FAIL \[$sec\]" "$TMP/cli.out")"; fi
    done <<<"$sections"
fi
if [ "$rc" = 0 ]; then pass "cli_checks.py exit 0: $(tail -1 "$TMP/cli.out")"
else fail "cli_checks.py exit $rc" "$(tail -3 "$TMP/cli.out")"; fi

# 3. a planted fault is caught: the wrapper flips bit 0 of the result code on
# the first output line of each `fpemu run`, so every config of e4m3_mul and
# e4m3_mulAdd must show exactly one disagreement
cat >"$TMP/fpemu_flip" <<PY
#!/usr/bin/env python3
import subprocess, sys
p = subprocess.run(['$BIN'] + sys.argv[1:], stdin=sys.stdin, capture_output=True, text=True)
lines = p.stdout.split('\n')
f = lines[0].split()
f[-2] = '%0*X' % (len(f[-2]), int(f[-2], 16) ^ 1)
lines[0] = ' '.join(f)
sys.stdout.write('\n'.join(lines))
sys.stderr.write(p.stderr)
sys.exit(p.returncode)
PY
chmod +x "$TMP/fpemu_flip"
FPEMU_BIN=$TMP/fpemu_flip python3 "$ORACLE/compare.py" --smoke --only e4m3_mul --out "$TMP/bad" >"$TMP/bad.out" 2>&1
rc=$?
total=$(grep '^TOTAL:' "$TMP/bad.out")
configs=$(echo "$total" | sed -n 's/^TOTAL: \([0-9]*\) configs.*/\1/p')
if [ "$rc" = 1 ] && [ -n "$configs" ] && [ "$configs" -gt 0 ] && [[ $total == *" $configs disagreements "* ]]; then
    pass "a planted one-bit fault in fpemu's output is caught once per config: $total; $(grep -m1 '^  ' "$TMP/bad.out" | sed 's/^ *//; s/  */ /g')"
else fail "the planted one-bit fault was not caught once per config (exit $rc)" "$(tail -14 "$TMP/bad.out")"; fi

tap_end
