#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_install.sh: `make install` into a staging DESTDIR, then use it as a user
# would: a program and a shared object (a plugin) built only through
# pkg-config against the installed headers (fpemu.h, fpemu/gemm.h) and
# libfpemu.a; then `make uninstall` removes every installed file. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
CC=${CC:-cc}
if [ ! -x "$BIN" ]; then echo "1..0 # SKIP $BIN is not built"; exit 0; fi
command -v pkg-config >/dev/null || { echo "1..0 # SKIP pkg-config is not installed"; exit 0; }
command -v "$CC" >/dev/null || { echo "1..0 # SKIP no C compiler ($CC)"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$HERE/lib/tap.sh"
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

stage=$tmp/stage
prefix=/opt/fpemu-test
# this run's build folder and program (make test exports them)
mk() {
    make -s -C "$ROOT" ${FPEMU_BUILD:+BUILD="$FPEMU_BUILD"} BINDIR="$(dirname "$BIN")" NVCC= \
        PREFIX=$prefix DESTDIR="$stage" "$@"
}

if mk install >"$tmp/install.log" 2>&1; then pass "make install PREFIX=$prefix DESTDIR=..."
else fail "make install PREFIX=$prefix DESTDIR=..." "$(tail -5 "$tmp/install.log")"; fi
files="bin/fpemu lib/libfpemu.a include/fpemu.h include/fpemu/mma.h include/fpemu/gemm.h include/fpemu/scaling.h lib/pkgconfig/fpemu.pc"
missing=
for f in $files; do [ -f "$stage$prefix/$f" ] || missing="$missing $f"; done
if [ -z "$missing" ]; then pass "installed: $files"; else fail "installed files" "missing:$missing"; fi

export PKG_CONFIG_PATH="$stage$prefix/lib/pkgconfig" PKG_CONFIG_LIBDIR="$stage$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
if cflags=$(pkg-config --cflags fpemu 2>"$tmp/pc.log") && libs=$(pkg-config --libs fpemu 2>>"$tmp/pc.log"); then
    pass "pkg-config fpemu: cflags '$cflags', libs '$libs'"
else
    fail "pkg-config fpemu" "$(cat "$tmp/pc.log")"; cflags= libs=
fi

cat >"$tmp/use.c" <<'EOF'
#include <stdio.h>
#include <fpemu.h>
#include <fpemu/gemm.h>
/* e4m3: 464 rounds to 448 (inexact); the h100 fp8 model's dot product of
 * two 448 x 1 products is 896 in f32 */
int use(char *out, size_t len) {
    char err[256];
    const fpemu_format *e4m3 = fpemu_format_get("float8_e4m3fn", err, sizeof err);
    if (!e4m3) return snprintf(out, len, "%s", err), 1;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    uint64_t x = fpemu_from_float(e4m3, 464.0f, &ctx), one = fpemu_from_float(e4m3, 1.0f, &ctx);
    fpemu_mma_model m;
    if (fpemu_mma_model_preset(&m, "h100", e4m3, e4m3, NULL, NULL, err, sizeof err)) return snprintf(out, len, "%s", err), 1;
    uint64_t a[2] = {x, x}, b[2] = {one, one};
    uint64_t d = fpemu_mma_dot(&m, a, b, 2, 0, NULL);
    snprintf(out, len, "%02llX %02X %08llX", (unsigned long long)x, ctx.flags, (unsigned long long)d);
    return 0;
}
EOF
cat >"$tmp/main.c" <<'EOF'
#include <stdio.h>
int use(char *out, size_t len);
int main(void) { char s[300]; int r = use(s, sizeof s); puts(s); return r; }
EOF
want="7E 01 44600000"
# shellcheck disable=SC2086
if $CC -std=c99 -Wall -Wextra -pedantic -Werror $cflags -o "$tmp/prog" "$tmp/use.c" "$tmp/main.c" $libs 2>"$tmp/cc.log"; then
    pass "a C99 program compiles against the installed headers (-Wall -Wextra -pedantic -Werror) and links libfpemu.a"
else fail "a C99 program against the installed headers" "$(cat "$tmp/cc.log")"; fi
got=$("$tmp/prog" 2>&1)
check "the program: e4m3(464) = 7E, inexact; h100 dot 448 + 448 = 896 (f32 44600000): got '$got'" [ "$got" = "$want" ]

# a shared object carrying libfpemu.a inside it (the library's objects are PIC)
# shellcheck disable=SC2086
if $CC -shared -fPIC $cflags -o "$tmp/libplug.so" "$tmp/use.c" $libs 2>"$tmp/so.log"; then
    pass "a shared object links libfpemu.a in (position-independent objects)"
else fail "a shared object links libfpemu.a in" "$(cat "$tmp/so.log")"; fi
$CC -o "$tmp/prog2" "$tmp/main.c" -L"$tmp" -lplug 2>"$tmp/so2.log"
got=$(LD_LIBRARY_PATH="$tmp" "$tmp/prog2" 2>&1)
check "a program through that shared object gives the same: got '$got'" [ "$got" = "$want" ]

# the library's names stay in its namespace: every global symbol of the
# installed libfpemu.a is fpemu_* or emu__* (internal), and a program with
# its own gemm_f32, mma_dot, scaling_amax_f32, mma_model, ... (the library's
# names before they took the prefix) builds against every installed header
if command -v nm >/dev/null; then
    syms=$(nm -g --defined-only "$stage$prefix/lib/libfpemu.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
    nsym=$(printf '%s\n' "$syms" | grep -c .)
    bad=$(printf '%s\n' "$syms" | grep -v -E '^(fpemu_|emu__)' | head -10 | tr '\n' ' ')
    check "every global symbol of libfpemu.a ($nsym) starts with fpemu_ or emu__${bad:+ (not: $bad)}" [ "$nsym" -gt 0 -a -z "$bad" ]
else skip "every global symbol of libfpemu.a starts with fpemu_ or emu__ (nm is not installed)"; fi
cat >"$tmp/own.c" <<'EOF'
#include <stdio.h>
#include <fpemu.h>
#include <fpemu/mma.h>
#include <fpemu/gemm.h>
#include <fpemu/scaling.h>
typedef struct mma_model { int x; } mma_model;
typedef struct gemm_config { int y; } gemm_config;
enum { MMA_KIND_BLOCK = 7, GEMM_SCALING_MX = 8, SCALING_MX_FLOOR = 9 };
int gemm_f32(int a) { return a + 1; }
int mma_dot(int a) { return a + 2; }
int mma_probe(int a) { return a + 3; }
float scaling_amax_f32(float a) { return a + 4.0f; }
int scaling_delayed_update(int a) { return a + 5; }
int main(void) {
    mma_model m = {1};
    gemm_config c = {2};
    fpemu_mma_model fm;
    char err[200];
    const fpemu_format *f16 = fpemu_format_get("f16", err, sizeof err);
    int r = fpemu_mma_model_preset(&fm, "exact", f16, f16, NULL, NULL, err, sizeof err);
    printf("%d %d %d %d %g %d %d\n", gemm_f32(m.x), mma_dot(c.y), mma_probe(0), scaling_delayed_update(0),
           (double)scaling_amax_f32(1.0f), MMA_KIND_BLOCK + GEMM_SCALING_MX + SCALING_MX_FLOOR, r);
    return 0;
}
EOF
# shellcheck disable=SC2086
if $CC -std=c99 -Wall -Wextra -Werror $cflags -o "$tmp/own" "$tmp/own.c" $libs 2>"$tmp/own.log"; then
    got=$("$tmp/own" 2>&1)
    check "a program defining the unprefixed names (gemm_f32, mma_dot, mma_model, MMA_KIND_BLOCK, ...) builds against every installed header and libfpemu.a: '$got'" [ "$got" = "2 4 3 5 5 24 0" ]
else fail "a program defining the unprefixed names builds against the installed headers and libfpemu.a" "$(head -5 "$tmp/own.log")"; fi

got=$("$stage$prefix/bin/fpemu" formats e4m3 2>&1 | head -1)
check "the installed program runs (fpemu formats e4m3: '${got:0:40}')" [ -n "$got" ]

if mk uninstall >"$tmp/uninstall.log" 2>&1; then pass "make uninstall"; else fail "make uninstall" "$(tail -5 "$tmp/uninstall.log")"; fi
left=$(cd "$stage" && find . -type f | sort | tr '\n' ' ')
check "make uninstall removes every installed file${left:+ (left: $left)}" [ -z "$left" ]

tap_end
