#!/usr/bin/env bash
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
    mma_model m;
    if (mma_model_preset(&m, "h100", e4m3, e4m3, NULL, NULL, err, sizeof err)) return snprintf(out, len, "%s", err), 1;
    uint64_t a[2] = {x, x}, b[2] = {one, one};
    uint64_t d = mma_dot(&m, a, b, 2, 0, NULL);
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

got=$("$stage$prefix/bin/fpemu" formats e4m3 2>&1 | head -1)
check "the installed program runs (fpemu formats e4m3: '${got:0:40}')" [ -n "$got" ]

if mk uninstall >"$tmp/uninstall.log" 2>&1; then pass "make uninstall"; else fail "make uninstall" "$(tail -5 "$tmp/uninstall.log")"; fi
left=$(cd "$stage" && find . -type f | sort | tr '\n' ' ')
check "make uninstall removes every installed file${left:+ (left: $left)}" [ -z "$left" ]

tap_end
