#!/bin/sh
# SPDX-License-Identifier: MIT
# t_gpu_sass.sh: every kernel of bin/fpemu-gpu uses the unit it claims. For
# each kernel and each cubin (sm_80, sm_89, sm_90a), the SASS from
# `cuobjdump -sass` must contain the instruction `fpemu-gpu kinds` names
# (HMMA, IMMA, QMMA, HGMMA, QGMMA, F2F...), and a kernel whose target lacks
# the instruction must hold no matrix instruction at all. Needs no GPU.
# FPEMU_SASS_VERBOSE=1 (make gpu-sass) prints the matching SASS lines.

bindir=$(dirname "${FPEMU_BIN:-bin/fpemu}")
bin="$bindir/fpemu-gpu"
if [ ! -x "$bin" ]; then
    echo "1..0 # SKIP $bin not built (no nvcc)"
    exit 0
fi

# cuobjdump (and the nvdisasm it runs): $CUOBJDUMP, PATH, next to nvcc, or
# the PyPI wheels `make gpu-tools` unpacks.
nvcc_dir=$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/nvcc)")
for d in "${FPEMU_GPU_TOOLS:-}" "$nvcc_dir" /usr/local/cuda/bin; do
    [ -n "$d" ] && [ -d "$d" ] && PATH="$PATH:$d"
done
export PATH
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump)}
if [ -z "$cuobjdump" ]; then
    echo "1..0 # SKIP cuobjdump not found (make gpu-tools installs it)"
    exit 0
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! "$cuobjdump" -sass "$bin" >"$tmp/sass" 2>"$tmp/err"; then
    echo "1..0 # SKIP cuobjdump -sass failed: $(head -c 200 "$tmp/err" | tr '\n' ' ')"
    exit 0
fi
"$bin" kinds | grep -v '^#' >"$tmp/kinds" || { echo "1..0 # SKIP fpemu-gpu kinds failed"; exit 0; }

# (target, function, opcode) for every instruction line: "arch = sm_90a",
# "Function : NAME", then "/*0380*/  [@P0] OPCODE operands ;"
awk '
    /arch = sm_/ { arch = $3; next }
    /Function : / { fn = $3; next }
    $1 ~ /^\/\*[0-9a-f]+\*\/$/ {
        op = $2; dst = $3
        if (op ~ /^@/) { op = $3; dst = $4 }
        sub(/;$/, "", op)
        print arch, fn, op, dst
    }
' "$tmp/sass" >"$tmp/ops"

n=$(wc -l <"$tmp/kinds")
echo "1..$n"
i=0
fail=0
while read -r kernel target want name; do
    i=$((i + 1))
    have_fn=$(awk -v a="$target" -v f="$kernel" '$1 == a && $2 == f { n++ } END { print n + 0 }' "$tmp/ops")
    if [ "$have_fn" -eq 0 ]; then
        echo "not ok $i - $kernel $target: no SASS for this function in $bin"
        fail=1
        continue
    fi
    if [ "$want" = "-" ]; then
        mma=$(awk -v a="$target" -v f="$kernel" '$1 == a && $2 == f && $3 ~ /^[HIQD]G?MMA/ { print $3 }' "$tmp/ops" | sort -u | tr '\n' ' ')
        if [ -z "$mma" ]; then
            echo "ok $i - $kernel $target: no matrix instruction (the target lacks $name)"
        else
            echo "not ok $i - $kernel $target: expected no matrix instruction, found $mma"
            fail=1
        fi
        continue
    fi
    # (an instruction writing RZ is not counted: ptxas puts a dummy
    # `HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ` at every wgmma kernel's
    # commit_group, which would otherwise pass for the f16 wgmma kind)
    count=$(awk -v a="$target" -v f="$kernel" -v w="$want" '$1 == a && $2 == f && $3 == w && $4 != "RZ," { n++ } END { print n + 0 }' "$tmp/ops")
    # fp8 inputs on an f16 unit: the harness models this lowering (e4m3/e5m2
    # -> f16 unpack, HMMA, then an FADD of the accumulator, HADD2 for f16
    # accumulators); check all of it
    extra=""
    case "$name:$want" in
    *e4m3*:HMMA* | *e5m2*:HMMA*)
        for op in F2FP.F16.E4M3.UNPACK_B F2FP.F16.E5M2.UNPACK_B; do
            case "$name" in *$(echo "$op" | cut -d. -f3 | tr 'A-Z' 'a-z')*) unpack=$op ;; esac
        done
        add=FADD
        case "$want" in *.F16) add=HADD2 ;; esac
        for op in "$unpack" "$add"; do
            c=$(awk -v a="$target" -v f="$kernel" -v w="$op" '$1 == a && $2 == f && $3 == w { n++ } END { print n + 0 }' "$tmp/ops")
            [ "$c" -gt 0 ] || extra="$extra no $op;"
        done
        q=$(awk -v a="$target" -v f="$kernel" '$1 == a && $2 == f && $3 ~ /^QG?MMA/ { n++ } END { print n + 0 }' "$tmp/ops")
        [ "$q" -eq 0 ] || extra="$extra fp8 MMA present;"
        ;;
    esac
    if [ "$count" -gt 0 ] && [ -z "$extra" ]; then
        echo "ok $i - $kernel $target: $want x$count ($name)"
    elif [ "$count" -gt 0 ]; then
        echo "not ok $i - $kernel $target: $want found, but the f16 lowering the model assumes differs:$extra"
        fail=1
    else
        got=$(awk -v a="$target" -v f="$kernel" '$1 == a && $2 == f && $3 ~ /^([HIQD]G?MMA|F2F)/ { print $3 }' "$tmp/ops" | sort -u | tr '\n' ' ')
        echo "not ok $i - $kernel $target: expected $want, found: ${got:-nothing}"
        fail=1
    fi
    if [ -n "${FPEMU_SASS_VERBOSE:-}" ]; then
        awk -v a="$target" -v f="$kernel" '
            /arch = sm_/ { arch = $3 } /Function : / { fn = $3 }
            arch == a && fn == f && /[ \t]([HIQD]G?MMA|F2F|FADD|HADD2)/ { sub(/\/\* 0x[0-9a-f]+ \*\//, ""); sub(/[ \t]+$/, ""); print "#   " $0 }
        ' "$tmp/sass" | head -12
    fi
done <"$tmp/kinds"
exit $fail
