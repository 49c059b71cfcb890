#!/bin/sh
# SPDX-License-Identifier: MIT
# verify_full.sh: `make verify-full`, the long exhaustive runs of fpemu check
# (hours on 2 cores). Usage:
#   verify_full.sh FPEMU SHARD THREADS [PART...]
# SHARD is I/N (0-based part I of N; 0/1 = everything), THREADS 0 = every
# CPU. PARTs (default: all, in this order):
#   f32_to_f16 f32_to_bf16 f32_to_e4m3 f32_to_e5m2   all 2^32 f32 inputs, rne
#   f16_add bf16_mul                                 all 2^32 pairs, rne
#   fma8                                             all 2^24 e4m3/e5m2 triples, every mode
#   f32_to_e4m3_sat f32_to_e5m2_sat                  all 2^32 inputs, rne, --sat
#   f32_to_bf16_sr f32_to_e4m3_sr                    all 2^32 inputs, sr (each its own
#                                                    draw, 40% straddling the decision)
#   mma_bigk                                         MMA dot products of k = 2^31 + 3 and
#                                                    2^32 + 1 against their exact sums
#                                                    (tests/t_mma_bigk.c at FPEMU_BIGK=2;
#                                                    program $FPEMU_BIGK_BIN; shard 0 only)
# Each part prints its own `N cases, M mismatches` line (and the mismatches);
# the exit status is 1 if any part found a mismatch, 2 on bad usage.
BIN=$1
SHARD=${2:-0/1}
THREADS=${3:-0}
[ $# -ge 3 ] && shift 3 || shift $#
PARTS=${*:-"f32_to_f16 f32_to_bf16 f32_to_e4m3 f32_to_e5m2 f16_add bf16_mul fma8 f32_to_e4m3_sat f32_to_e5m2_sat f32_to_bf16_sr f32_to_e4m3_sr mma_bigk"}
if [ ! -x "$BIN" ]; then echo "verify-full: no checker binary at '$BIN'" >&2; exit 2; fi
case $THREADS in ''|*[!0-9]*) echo "verify-full: VERIFY_THREADS must be a number, got '$THREADS'" >&2; exit 2 ;; esac
TOPT=
[ "$THREADS" -gt 0 ] && TOPT="--threads $THREADS"

status=0
for part in $PARTS; do
    if [ "$part" = mma_bigk ]; then
        BIGK=${FPEMU_BIGK_BIN:-build/tests/t_mma_bigk}
        if [ ! -x "$BIGK" ]; then echo "verify-full: no t_mma_bigk program at '$BIGK' (set FPEMU_BIGK_BIN)" >&2; exit 2; fi
        case $SHARD in 0/*) ;; *) echo "== mma_bigk: not sharded, runs in shard 0/N only"; continue ;; esac
        echo "== mma_bigk: FPEMU_BIGK=2 $BIGK"
        t0=$(date +%s)
        FPEMU_BIGK=2 "$BIGK" >"${TMPDIR:-/tmp}/verify_full_bigk.$$" 2>&1
        rc=$?
        cat "${TMPDIR:-/tmp}/verify_full_bigk.$$"
        grep -q '^not ok' "${TMPDIR:-/tmp}/verify_full_bigk.$$" && rc=1
        rm -f "${TMPDIR:-/tmp}/verify_full_bigk.$$"
        echo "== mma_bigk: exit $rc, $(($(date +%s) - t0)) s"
        [ "$rc" -ne 0 ] && status=1
        continue
    fi
    case $part in
    f32_to_f16) args="--format f16 --op from_f32 --round rne" ;;
    f32_to_bf16) args="--format bf16 --op from_f32 --round rne" ;;
    f32_to_e4m3) args="--format e4m3 --op from_f32 --round rne" ;;
    f32_to_e5m2) args="--format e5m2 --op from_f32 --round rne" ;;
    f32_to_e4m3_sat) args="--format e4m3 --op from_f32 --round rne --sat" ;;
    f32_to_e5m2_sat) args="--format e5m2 --op from_f32 --round rne --sat" ;;
    f32_to_bf16_sr) args="--format bf16 --op from_f32 --round sr" ;;
    f32_to_e4m3_sr) args="--format e4m3 --op from_f32 --round sr" ;;
    f16_add) args="--format f16 --op add --round rne" ;;
    bf16_mul) args="--format bf16 --op mul --round rne" ;;
    fma8) args="--format e4m3,e5m2 --op fma --round all" ;;
    *) echo "verify-full: unknown part '$part' (expected f32_to_f16, f32_to_bf16, f32_to_e4m3, f32_to_e5m2," \
            "f32_to_e4m3_sat, f32_to_e5m2_sat, f32_to_bf16_sr, f32_to_e4m3_sr, f16_add, bf16_mul, fma8 or mma_bigk)" >&2; exit 2 ;;
    esac
    echo "== $part: fpemu check $args --exhaustive --shard $SHARD $TOPT"
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$BIN" check $args --exhaustive --shard "$SHARD" $TOPT
    rc=$?
    echo "== $part: exit $rc, $(($(date +%s) - t0)) s"
    [ "$rc" -eq 2 ] && exit 2
    [ "$rc" -ne 0 ] && status=1
done
exit $status
