#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lib/prove.sh [PROVE OPTIONS] TEST...: `make test`'s runner. Runs prove
# ($PROVE, default prove) on the tests, then lists every test file that
# skipped as a whole, one line each with its reason (prove's own summary
# only says "skipped" beside the file, among the other lines), and exits
# with prove's status.
log=$(mktemp "${TMPDIR:-/tmp}/fpemu-prove.XXXXXX") || exit 2
trap 'rm -f "$log"' EXIT INT TERM
# prove's output goes to the terminal as it comes and to the log
{ ${PROVE:-prove} "$@"; echo $? >"$log.rc"; } | tee "$log"
rc=$(cat "$log.rc" 2>/dev/null || echo 2)
rm -f "$log.rc"
# (a line may start with the time, under prove --timer)
skipped=$(sed -n 's/^\(\[[0-9:]*\] \)\{0,1\}\([^ ]*\) *\.\.* *skipped: *\(.*\)$/\2: \3/p' "$log")
if [ -n "$skipped" ]; then
    echo "Skipped test files ($(printf '%s\n' "$skipped" | wc -l)):"
    printf '%s\n' "$skipped" | sed 's/^/  /'
else
    echo "Skipped test files: none"
fi
exit "$rc"
