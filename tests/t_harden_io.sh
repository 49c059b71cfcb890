#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_harden_io.sh: issue 26, classes 5, 8 and 9 (docs/hardening.md, "Output
# files and inputs (issue 26)").
#   - The output writer (gpu/host/outfile.h, behind cli_atomic_* and
#     gpu_write_file_atomic) never replaces what it did not create: for
#     `fpemu errk --out`, `fpemu gemm --out` and `fpemu-gpu validate
#     --record`, a symbolic link stays a link and its target gets the
#     content (a dangling link's target is created), a device or FIFO is
#     written in place and stays what it was, a directory or a link loop is
#     refused; a replaced regular file keeps its mode; no NAME.tmp.PID left.
#   - Standard output: a failed write (a full device) is exit 2 with a
#     message, in fpemu-gpu (kinds, info, probe, validate --stdout, help) and
#     in fpemu errk, mma, probe.
#   - errk: requests beyond its limits are refused before anything is
#     allocated; running out of memory is exit 2 and leaves no file.
#   - Codes outside a 4- or 6-bit format's field are refused in `fpemu mma`
#     lines (line and field named) and in `fpemu gemm` '|u1' input (the
#     file's element index named), as `fpemu run` refuses them.
# Device nodes: as root, scratch nodes made with mknod in a temporary folder
# (null: 1,3; full: 1,7); never the machine's /dev/null or /dev/full, which
# a broken writer running as root would replace. Otherwise /dev/null and
# /dev/full, which a non-root writer cannot replace. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make bin/fpemu)"; exit 1; fi
GPU=$(dirname "$BIN")/fpemu-gpu
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_harden_io.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib/tap.sh"

# ---- the device nodes -----------------------------------------------------
NULLDEV= FULLDEV=
if [ "$(id -u)" = 0 ]; then
    mkdir "$TMP/dev"
    if mknod "$TMP/dev/null" c 1 3 2>/dev/null && mknod "$TMP/dev/full" c 1 7 2>/dev/null; then
        NULLDEV=$TMP/dev/null FULLDEV=$TMP/dev/full
    else
        echo "# root, but mknod failed: the device cases skip (the real /dev nodes are not used as root)"
    fi
else
    [ -c /dev/null ] && NULLDEV=/dev/null
    [ -c /dev/full ] && FULLDEV=/dev/full
fi
echo "# devices: null=${NULLDEV:-none} full=${FULLDEV:-none}"

# .npy inputs for gemm (python3 writes them)
HAVE_NPY=0
if command -v python3 >/dev/null && python3 - "$TMP" <<'PY'
import struct, sys
d = sys.argv[1]
def npy(path, descr, shape, data, fmt):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ", ".join(str(s) for s in shape))
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h = h + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
        f.write(struct.pack("<%d%s" % (len(data), fmt), *data))
npy(d + "/A.npy", "<f4", (2, 3), [1, 2, 3, 4, 5, 6], "f")
npy(d + "/B.npy", "<f4", (3, 2), [1, 0, 0, 1, 1, 1], "f")
# e2m1 codes (1.0 = 0x2, 2.0 = 0x4): valid, then 0x1F at [1, 1] of A, at [2, 0] of B
npy(d + "/Ac.npy", "|u1", (2, 3), [2, 4, 2, 2, 2, 2], "B")
npy(d + "/Bc.npy", "|u1", (3, 2), [2, 2, 2, 2, 2, 2], "B")
npy(d + "/Abad.npy", "|u1", (2, 3), [2, 4, 2, 2, 0x1F, 2], "B")
npy(d + "/Bbad.npy", "|u1", (3, 2), [2, 2, 2, 2, 0x1F, 2], "B")
# the transpose of Abad as stored (--ta): 0x1F at file index [1, 1] -> store A^T (3 x 2) with 0x1F at [2, 0]
npy(d + "/ATbad.npy", "|u1", (3, 2), [2, 2, 4, 2, 0x1F, 2], "B")
# e3m2 codes: 0x40 is outside the 6-bit field
npy(d + "/A6bad.npy", "|u1", (2, 3), [0x3C, 0x3C, 0x3C, 0x40, 0x3C, 0x3C], "B")
npy(d + "/B6.npy", "|u1", (3, 2), [0x3C] * 6, "B")
PY
then HAVE_NPY=1; else echo "# python3 missing or failed: gemm cases skip"; fi

# ---- the writers ----------------------------------------------------------
# write W TARGET: run writer W with its output at TARGET; exit status in $rc,
# stderr in $TMP/err
write() {
    local w=$1 t=$2
    case $w in
    errk) timeout 60 "$BIN" errk --kmin 64 --kmax 64 --dots 2 --out "$t" >/dev/null 2>"$TMP/err" ;;
    gemm) timeout 60 "$BIN" gemm --model exact --afmt f32 --a "$TMP/A.npy" --b "$TMP/B.npy" --out "$t" >/dev/null 2>"$TMP/err" ;;
    record) timeout 60 "$GPU" validate --fake h100 --cases 16 --seed 3 --kind mma.m16n8k16.f32.f16.f16.f32 --stdout \
        --record "$t" >/dev/null 2>"$TMP/err" ;;
    esac
    rc=$?
}
# the content a writer puts in a file: the recording holds its date, so
# compare without the command/date header lines
content() { case $1 in record) grep -av '^\(date\|command\)=' "$2" ;; *) cat "$2" ;; esac; }
same() { cmp -s <(content "$1" "$2") <(content "$1" "$3"); }
temps() { find "$@" -name '*.tmp.*' 2>/dev/null | tr '\n' ' '; }

WRITERS="errk"
[ $HAVE_NPY = 1 ] && WRITERS="$WRITERS gemm"
if [ -x "$GPU" ]; then WRITERS="$WRITERS record"; else echo "# $GPU not built: its cases skip"; fi

for w in $WRITERS; do
    D=$TMP/$w; mkdir -p "$D/out" "$D/elsewhere"
    write $w "$D/ref"
    if [ $rc != 0 ]; then fail "$w: a plain run exits 0" "exit $rc" "$(head -c 300 "$TMP/err")"; continue; fi

    # a regular file: replaced whole, its mode kept
    echo old >"$D/out/reg"; chmod 600 "$D/out/reg"
    write $w "$D/out/reg"
    mode=$(stat -c %a "$D/out/reg")
    if [ $rc = 0 ] && [ -f "$D/out/reg" ] && [ ! -L "$D/out/reg" ] && same $w "$D/ref" "$D/out/reg" && [ "$mode" = 600 ] \
        && [ -z "$(temps "$D/out")" ]; then pass "$w: a regular file (mode 600) is replaced whole and keeps its mode"
    else fail "$w: a regular file (mode 600) is replaced whole and keeps its mode" "exit $rc, mode $mode, temporaries: $(temps "$D/out")"; fi

    # a symbolic link to a file in another folder: followed, the link stays
    echo old >"$D/elsewhere/target"
    ln -s ../elsewhere/target "$D/out/link"
    write $w "$D/out/link"
    if [ $rc = 0 ] && [ -L "$D/out/link" ] && [ "$(readlink "$D/out/link")" = ../elsewhere/target ] \
        && same $w "$D/ref" "$D/elsewhere/target" && [ -z "$(temps "$D/out" "$D/elsewhere")" ]; then
        pass "$w: a symbolic link stays a link; its target (another folder) gets the content"
    else fail "$w: a symbolic link stays a link; its target (another folder) gets the content" \
        "exit $rc; link: $(ls -l "$D/out/link" 2>&1)" "temporaries: $(temps "$D/out" "$D/elsewhere")" "$(head -c 300 "$TMP/err")"; fi

    # a link to a link (absolute) to a file: the chain is followed
    ln -s "$D/out/link" "$D/out/link2"
    echo old >"$D/elsewhere/target"
    write $w "$D/out/link2"
    if [ $rc = 0 ] && [ -L "$D/out/link2" ] && [ -L "$D/out/link" ] && same $w "$D/ref" "$D/elsewhere/target"; then
        pass "$w: a chain of links is followed to its file, every link stays"
    else fail "$w: a chain of links is followed to its file, every link stays" "exit $rc; $(ls -l "$D/out" 2>&1)"; fi

    # a dangling link: its target is created (as the shell's '>' does)
    ln -s ../elsewhere/new "$D/out/dangling"
    write $w "$D/out/dangling"
    if [ $rc = 0 ] && [ -L "$D/out/dangling" ] && [ -f "$D/elsewhere/new" ] && same $w "$D/ref" "$D/elsewhere/new" \
        && [ -z "$(temps "$D/out" "$D/elsewhere")" ]; then pass "$w: a dangling link stays a link; its target is created"
    else fail "$w: a dangling link stays a link; its target is created" "exit $rc; $(ls -l "$D/out/dangling" "$D/elsewhere" 2>&1)" "$(head -c 300 "$TMP/err")"; fi

    # a link loop and a directory: refused, nothing created
    ln -s loop1 "$D/out/loop2"; ln -s loop2 "$D/out/loop1"
    write $w "$D/out/loop1"
    if [ $rc = 2 ] && [ -L "$D/out/loop1" ] && [ -z "$(temps "$D/out")" ] && grep -qi "symbolic links" "$TMP/err"; then
        pass "$w: a link loop: exit 2, says so, the links stay"
    else fail "$w: a link loop: exit 2, says so, the links stay" "exit $rc; $(head -c 300 "$TMP/err")"; fi
    mkdir "$D/out/dir"
    write $w "$D/out/dir"
    if [ $rc = 2 ] && [ -d "$D/out/dir" ] && [ -z "$(temps "$D/out")" ]; then pass "$w: a directory: exit 2, left as it was"
    else fail "$w: a directory: exit 2, left as it was" "exit $rc; $(head -c 300 "$TMP/err")"; fi

    # a FIFO: written in place (a reader gets the content), stays a FIFO
    mkfifo "$D/out/fifo"
    timeout 10 cat "$D/out/fifo" >"$D/fifo.got" 2>/dev/null &
    reader=$!
    write $w "$D/out/fifo"
    wait $reader 2>/dev/null
    if [ $rc = 0 ] && [ -p "$D/out/fifo" ] && same $w "$D/ref" "$D/fifo.got" && [ -z "$(temps "$D/out")" ]; then
        pass "$w: a FIFO is written in place and stays a FIFO"
    else fail "$w: a FIFO is written in place and stays a FIFO" "exit $rc; $(ls -l "$D/out/fifo" 2>&1)" "$(head -c 300 "$TMP/err")"; fi

    if [ -n "$NULLDEV" ]; then
        write $w "$NULLDEV"
        if [ $rc = 0 ] && [ -c "$NULLDEV" ] && [ -z "$(temps "$(dirname "$NULLDEV")")" ]; then
            pass "$w: a null device is written in place, exit 0, stays a device"
        else fail "$w: a null device is written in place, exit 0, stays a device" "exit $rc; $(ls -l "$NULLDEV" 2>&1)" "$(head -c 300 "$TMP/err")"; fi
        # a link to the device: the device is written, the link stays
        ln -s "$NULLDEV" "$D/out/tonull"
        write $w "$D/out/tonull"
        if [ $rc = 0 ] && [ -L "$D/out/tonull" ] && [ -c "$NULLDEV" ]; then pass "$w: a link to a device: the device is written, the link stays"
        else fail "$w: a link to a device: the device is written, the link stays" "exit $rc; $(ls -l "$D/out/tonull" "$NULLDEV" 2>&1)"; fi
    else skip "$w: null device (none usable)"; skip "$w: link to a device (none usable)"; fi
    if [ -n "$FULLDEV" ]; then
        write $w "$FULLDEV"
        if [ $rc = 2 ] && [ -c "$FULLDEV" ] && grep -q "No space left" "$TMP/err" && [ -z "$(temps "$(dirname "$FULLDEV")")" ]; then
            pass "$w: a full device: exit 2, 'No space left', stays a device"
        else fail "$w: a full device: exit 2, 'No space left', stays a device" "exit $rc; $(ls -l "$FULLDEV" 2>&1)" "$(head -c 300 "$TMP/err")"; fi
    else skip "$w: full device (none usable)"; fi
    # tidy the scratch folder of devices (a broken writer might have replaced one)
    if [ -n "$NULLDEV" ] && [ "$NULLDEV" != /dev/null ] && [ ! -c "$NULLDEV" ]; then rm -f "$NULLDEV"; mknod "$NULLDEV" c 1 3; fi
    if [ -n "$FULLDEV" ] && [ "$FULLDEV" != /dev/full ] && [ ! -c "$FULLDEV" ]; then rm -f "$FULLDEV"; mknod "$FULLDEV" c 1 7; fi
done

# ---- standard output ------------------------------------------------------
# out_fails DESC CMD...: CMD with stdout on the full device: exit 2, a message
out_fails() {
    local d=$1; shift
    "$@" >"$FULLDEV" 2>"$TMP/err" </dev/null; rc=$?
    if [ $rc = 2 ] && grep -q "cannot write standard output" "$TMP/err"; then pass "$d > full device: exit 2, says 'cannot write standard output'"
    else fail "$d > full device: exit 2, says 'cannot write standard output'" "exit $rc; stderr: $(head -c 300 "$TMP/err")"; fi
}
if [ -n "$FULLDEV" ]; then
    if [ -x "$GPU" ]; then
        out_fails "fpemu-gpu kinds" "$GPU" kinds
        out_fails "fpemu-gpu info --fake h100" "$GPU" info --fake h100
        out_fails "fpemu-gpu --help" "$GPU" --help
        out_fails "fpemu-gpu probe --fake h100" "$GPU" probe --fake h100 --kind mma.m16n8k16.f32.f16.f16.f32
        out_fails "fpemu-gpu validate --stdout" "$GPU" validate --fake h100 --cases 16 --kind mma.m16n8k16.f32.f16.f16.f32 --stdout
        out_fails "fpemu-gpu validate --out DIR (the path it prints)" "$GPU" validate --fake h100 --cases 16 \
            --kind mma.m16n8k16.f32.f16.f16.f32 --out "$TMP/gpurep"
    fi
    out_fails "fpemu errk" "$BIN" errk --kmin 64 --kmax 64 --dots 2
    out_fails "fpemu errk --help" "$BIN" errk --help
    out_fails "fpemu mma --describe" "$BIN" mma --model h100 --a f16 --describe
    out_fails "fpemu probe" "$BIN" probe --model h100 --a f16
    # every other command too, through bin/fpemu's dispatch (cli/main.c)
    out_fails "fpemu --version" "$BIN" --version
    out_fails "fpemu --help" "$BIN" --help
    out_fails "fpemu formats" "$BIN" formats
    out_fails "fpemu run --help" "$BIN" run --help
    out_fails "fpemu train --help" "$BIN" train --help
    out_fails "fpemu drift --help" "$BIN" drift --help
    printf '3F800000 3C00 3C00\n' >"$TMP/mma.in"
    "$BIN" mma --model h100 --a f16 <"$TMP/mma.in" >"$FULLDEV" 2>"$TMP/err"; rc=$?
    if [ $rc = 2 ] && grep -q "cannot write standard output" "$TMP/err"; then pass "fpemu mma lines > full device: exit 2, says so"
    else fail "fpemu mma lines > full device: exit 2, says so" "exit $rc; $(head -c 300 "$TMP/err")"; fi
else
    skip "standard output to a full device (none usable)"
fi

# ---- errk's limits ----------------------------------------------------------
timeout 20 "$BIN" errk --kmax 1048576 --dots 100000 --out "$TMP/huge.csv" >/dev/null 2>"$TMP/err"; rc=$?
if [ $rc = 2 ] && grep -q "at most" "$TMP/err" && [ -z "$(ls "$TMP" | grep '^huge\.csv')" ]; then
    pass "errk: a request of terabytes (--dots 100000 --kmax 2^20) is refused with its limit, no file: $(head -c 160 "$TMP/err")"
else fail "errk: a request of terabytes is refused with its limit, no file" "exit $rc; $(head -c 300 "$TMP/err")" "left: $(ls "$TMP" | grep huge)"; fi
# within the limits, more than the address space allows: exit 2, no file, no
# temporary. An ASan build cannot start under ulimit -v (its shadow memory):
# there ASan's allocator is told to return NULL above 100 MB instead.
if grep -q __asan_init "$BIN" 2>/dev/null; then
    how="ASan, max_allocation_size_mb=100"
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=100 \
        timeout 60 "$BIN" errk --kmin 1048576 --kmax 1048576 --dots 16 --out "$TMP/oom.csv" >/dev/null 2>"$TMP/err"; rc=$?
else
    how="ulimit -v 300000"
    (ulimit -v 300000; exec timeout 60 "$BIN" errk --kmin 1048576 --kmax 1048576 --dots 16 --out "$TMP/oom.csv") >/dev/null 2>"$TMP/err"; rc=$?
fi
if [ $rc = 2 ] && grep -q "out of memory" "$TMP/err" && [ -z "$(ls "$TMP" | grep '^oom\.csv')" ]; then
    pass "errk: out of memory ($how): exit 2, says so, no file and no NAME.tmp.PID"
else fail "errk: out of memory ($how): exit 2, says so, no file and no NAME.tmp.PID" "exit $rc; $(head -c 300 "$TMP/err")" "left: $(ls "$TMP" | grep oom)"; fi

# ---- codes outside the field --------------------------------------------------
# mma_bad OPTS LINE PATTERN
mma_bad() {
    local opts=$1 in=$2 pat=$3
    printf '%s\n' "$in" | "$BIN" mma $opts >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ $rc = 2 ] && grep -q -- "$pat" "$TMP/err" && [ ! -s "$TMP/out" ]; then pass "mma $opts '$in': exit 2: $(head -c 160 "$TMP/err")"
    else fail "mma $opts '$in': exit 2, names the field" "exit $rc; out: $(head -c 100 "$TMP/out")" "stderr: $(head -c 300 "$TMP/err")"; fi
}
mma_bad "--model b200 --a e2m1" "3F800000 1F 01" "line 1: field 2 (A0) '1F': out of range for e2m1"
mma_bad "--model b200 --a e2m1" "3F800000 01 10" "line 1: field 3 (B0) '10': out of range for e2m1"
mma_bad "--model b200 --a e3m2" "3F800000 3C 3C 40 3C" "line 1: field 4 (A1) '40': out of range for e3m2"
mma_bad "--model b200 --a e2m3" "3F800000 3C 80" "field 3 (B0) '80': out of range for e2m3"
got=$(printf '3F800000 0F 01\n' | "$BIN" mma --model b200 --a e2m1 2>"$TMP/err"); rc=$?
if [ $rc = 0 ] && [ "$got" = "3F800000 0F 01 C0000000" ]; then pass "mma e2m1: the largest code 0F is still accepted"
else fail "mma e2m1: the largest code 0F is still accepted" "exit $rc: $got" "$(head -c 200 "$TMP/err")"; fi
# run refuses the same code: mma agrees
printf '1F 01\n' | "$BIN" run e2m1_add >/dev/null 2>&1; rc=$?
if [ $rc = 2 ]; then pass "run e2m1_add refuses 1F too (exit 2)"; else fail "run e2m1_add refuses 1F too" "exit $rc"; fi

if [ $HAVE_NPY = 1 ]; then
    # gemm_bad DESC PATTERN ARGS...
    gemm_bad() {
        local d=$1 pat=$2; shift 2
        rm -f "$TMP/D.npy"
        "$BIN" gemm --model b200 --out "$TMP/D.npy" "$@" >/dev/null 2>"$TMP/err"; rc=$?
        if [ $rc = 2 ] && grep -q -- "$pat" "$TMP/err" && [ ! -e "$TMP/D.npy" ]; then pass "gemm $d: exit 2, no D: $(head -c 160 "$TMP/err")"
        else fail "gemm $d: exit 2, names the element, no D" "exit $rc; $(head -c 300 "$TMP/err")"; fi
    }
    gemm_bad "e2m1 |u1 A with 0x1F" "Abad.npy: element \[1, 1\] = 31 (0x1F) is not a e2m1 code" \
        --afmt e2m1 --a "$TMP/Abad.npy" --b "$TMP/Bc.npy"
    gemm_bad "e2m1 |u1 B with 0x1F" "Bbad.npy: element \[2, 0\] = 31" --afmt e2m1 --a "$TMP/Ac.npy" --b "$TMP/Bbad.npy"
    gemm_bad "e2m1 |u1 A stored transposed (--ta): the file's index" "ATbad.npy: element \[2, 0\] = 31" \
        --afmt e2m1 --ta --a "$TMP/ATbad.npy" --b "$TMP/Bc.npy"
    gemm_bad "e3m2 |u1 A with 0x40" "A6bad.npy: element \[1, 0\] = 64 (0x40) is not a e3m2 code" \
        --afmt e3m2 --a "$TMP/A6bad.npy" --b "$TMP/B6.npy"
    "$BIN" gemm --model b200 --afmt e2m1 --a "$TMP/Ac.npy" --b "$TMP/Bc.npy" --out "$TMP/D.npy" >/dev/null 2>"$TMP/err"; rc=$?
    if [ $rc = 0 ] && [ -f "$TMP/D.npy" ]; then pass "gemm e2m1 codes 0..F are still accepted"
    else fail "gemm e2m1 codes 0..F are still accepted" "exit $rc; $(head -c 300 "$TMP/err")"; fi
fi
tap_end
