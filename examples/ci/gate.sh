#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/ci/gate.sh: gate a training run's loss-curve CSV against a
# committed baseline with `fpemu drift`, in any CI (or by hand). Copy this
# folder into your repository (say ci/fpemu/) and commit your baseline in it.
#
#   sh gate.sh [--baseline FILE | --seeds DIR] [--tolerances FILE] [--key COLS]
#              [--columns COLS] [--margin M] [--allow-missing] [--json FILE]
#              [--max-print N] RESULTS.csv
#
# Defaults, relative to this script's folder:
#   --baseline   baseline/loss.csv   one committed run; fixed bands from --tolerances
#   --seeds DIR  instead: several runs (seeds); per step the band is the seeds'
#                min/max widened by --margin (default 1) x their range, plus
#                the fixed band of --tolerances as a floor
#   --tolerances tolerances.txt
#   --key        step                rows are matched by this column
#   --columns    loss,grad_norm      what is compared
# --allow-missing: steps of the baseline that RESULTS lacks (a shorter run)
# do not fail. --json FILE: the verdict and every failing step, for tools.
# --max-print N: the failing steps listed (default 10).
#
# The program: $FPEMU if set, else `fpemu` on PATH (make install), else the
# bin/fpemu of the fpemu checkout this script sits in.
# Exit status (fpemu drift's): 0 pass, 1 drift, 2 bad input or bad usage.
# Under GitHub Actions the verdict also goes to the job summary and, on
# failure, to an error annotation.
set -u
here=$(cd "$(dirname "$0")" && pwd)
baseline=$here/baseline/loss.csv
seeds=
tol=$here/tolerances.txt
key=step
columns=loss,grad_norm
extra=
results=

usage() {
    sed -n '7,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
        --baseline) [ $# -ge 2 ] || usage; baseline=$2; seeds=; shift 2 ;;
        --seeds) [ $# -ge 2 ] || usage; seeds=$2; shift 2 ;;
        --tolerances) [ $# -ge 2 ] || usage; tol=$2; shift 2 ;;
        --key) [ $# -ge 2 ] || usage; key=$2; shift 2 ;;
        --columns) [ $# -ge 2 ] || usage; columns=$2; shift 2 ;;
        --margin|--max-print)
            [ $# -ge 2 ] || usage
            case $2 in *[!0-9.eE+-]*|'') echo "gate.sh: $1: expected a number, got '$2'" >&2; exit 2 ;; esac
            extra="$extra $1 $2"; shift 2 ;;
        --json) [ $# -ge 2 ] || usage; json=$2; shift 2 ;;
        --allow-missing) extra="$extra --allow-missing"; shift ;;
        -h|--help) sed -n '3,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "gate.sh: unknown option '$1'" >&2; usage ;;
        *) [ -z "$results" ] || { echo "gate.sh: one RESULTS file, got '$results' and '$1'" >&2; usage; }
           results=$1; shift ;;
    esac
done
[ -n "$results" ] || { echo "gate.sh: no RESULTS file" >&2; usage; }

if [ -n "${FPEMU:-}" ]; then fpemu=$FPEMU
elif command -v fpemu >/dev/null 2>&1; then fpemu=fpemu
elif [ -x "$here/../../bin/fpemu" ]; then fpemu=$here/../../bin/fpemu
else echo "gate.sh: no fpemu: set FPEMU, install it (make install), or build it (make bin/fpemu)" >&2; exit 2
fi

# the baseline: one file (fixed bands), or a folder of seeds
if [ -n "$seeds" ]; then set -- --baseline-seeds "$seeds"
else set -- "$baseline"
fi
[ -z "${json:-}" ] || set -- --json "$json" "$@"
# $extra holds only our own option words, never a path: split on purpose
out=$(mktemp "${TMPDIR:-/tmp}/gate.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086
"$fpemu" drift --key "$key" --columns "$columns" --tolerances "$tol" $extra "$@" "$results" >"$out" 2>&1
rc=$?
cat "$out"
case $rc in
    0) verdict="PASS: $results is within the bands of ${seeds:-$baseline}" ;;
    1) verdict="DRIFT: $results moved outside the bands of ${seeds:-$baseline}" ;;
    *) verdict="ERROR: bad input (exit $rc)" ;;
esac
echo "gate: $verdict"
if [ "${GITHUB_ACTIONS:-}" = true ]; then
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        { echo "### fpemu drift: $verdict"; echo; echo '```'; head -60 "$out"; echo '```'; } >>"$GITHUB_STEP_SUMMARY"
    fi
    [ "$rc" = 0 ] || echo "::error title=fpemu drift::$verdict"
fi
exit "$rc"
