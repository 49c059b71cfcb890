# SPDX-License-Identifier: MIT
# tests/lib/tap.sh: TAP output for the shell tests that source it.
# pass DESC / fail DESC [DETAIL...] / skip DESC number the test lines (fail
# prints each DETAIL, 20 lines at most, as # comments); tap_end prints the
# plan and returns non-zero if any test failed.
n=0
failed=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
    n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift
    for d in "$@"; do printf '%s\n' "$d" | head -20 | sed 's/^/#   /'; done
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
tap_end() { echo "1..$n"; [ "$failed" = 0 ]; }
