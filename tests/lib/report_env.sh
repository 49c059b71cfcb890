# SPDX-License-Identifier: MIT
# tests/lib/report_env.sh: sourced by the report/drift/atomic shell tests.
# Sets HERE, ROOT, BIN (the fpemu under test) and FIX (the report
# fixtures), and skips the whole test when fpemu is not built.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
FIX=$ROOT/tests/fixtures/report
if [ ! -x "$BIN" ]; then echo "1..0 # SKIP $BIN is not built"; exit 0; fi
