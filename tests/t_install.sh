#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_install.sh: `make install` into a staging DESTDIR, then use it as a user
# would: a program built only through `pkg-config --cflags --libs fpemu`
# against the installed headers and the shared library libfpemu.so (soname
# libfpemu.so.MAJOR), the same program linked with the static libfpemu.a,
# a plugin carrying libfpemu.a, the installed program (its version, the man
# page, `fpemu train` finding the installed data from another folder); one
# version everywhere (fpemu.h, --version, fpemu.pc, the soname, CHANGELOG.md);
# then `make uninstall` removes every installed file. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
CC=${CC:-cc}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built (make test builds it; make deps installs the tools)"; exit 1; fi
command -v pkg-config >/dev/null || { echo "1..1"; echo "not ok 1 - pkg-config is not installed (make test builds it; make deps installs the tools)"; exit 1; }
command -v "$CC" >/dev/null || { echo "1..1"; echo "not ok 1 - no C compiler ($CC) (make test builds it; make deps installs the tools)"; exit 1; }
# under make test-asan the installed libraries carry ASan and UBSan: a
# program linked with them must be too
[ -n "${FPEMU_HARDEN_ASAN:-}" ] && CC="$CC -fsanitize=address,undefined"
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
version=$(sed -n 's/^#define FPEMU_VERSION "\(.*\)"/\1/p' "$ROOT/emu/fpemu.h")
major=${version%%.*}
files="bin/fpemu lib/libfpemu.a lib/libfpemu.so.$version lib/libfpemu.so.$major lib/libfpemu.so include/fpemu.h
  include/fpemu/mma.h include/fpemu/gemm.h include/fpemu/scaling.h lib/pkgconfig/fpemu.pc share/man/man1/fpemu.1
  share/fpemu/digits.csv.gz share/fpemu/reports/curves.gp share/doc/fpemu/LICENSE share/doc/fpemu/README.md share/doc/fpemu/CHANGELOG.md
  share/doc/fpemu/digits-README.md"
missing=
for f in $files; do [ -f "$stage$prefix/$f" ] || missing="$missing $f"; done
if [ -z "$missing" ]; then pass "installed: $(echo $files)"; else fail "installed files" "missing:$missing"; fi
check "lib/libfpemu.so -> libfpemu.so.$major -> libfpemu.so.$version (symbolic links)" \
    [ "$(readlink "$stage$prefix/lib/libfpemu.so")" = "libfpemu.so.$major" -a \
      "$(readlink "$stage$prefix/lib/libfpemu.so.$major")" = "libfpemu.so.$version" ]
if command -v readelf >/dev/null; then
    soname=$(readelf -d "$stage$prefix/lib/libfpemu.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
    check "the shared library's soname is libfpemu.so.$major: '$soname'" [ "$soname" = "libfpemu.so.$major" ]
    bad=$(nm -D --defined-only "$stage$prefix/lib/libfpemu.so.$version" | awk 'NF == 3 { print $3 }' | grep -v '^fpemu_' | head -5 | tr '\n' ' ')
    check "the shared library exports only fpemu_* names${bad:+ (also: $bad)}" [ -z "$bad" ]
else fail "readelf is not installed (binutils; make deps installs build-essential)"; fi

export PKG_CONFIG_PATH="$stage$prefix/lib/pkgconfig" PKG_CONFIG_LIBDIR="$stage$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
if cflags=$(pkg-config --cflags fpemu 2>"$tmp/pc.log") && libs=$(pkg-config --libs fpemu 2>>"$tmp/pc.log") \
    && slibs=$(pkg-config --static --libs fpemu 2>>"$tmp/pc.log"); then
    pass "pkg-config fpemu: cflags '$cflags', libs '$libs', static '$slibs'"
else
    fail "pkg-config fpemu" "$(cat "$tmp/pc.log")"; cflags= libs= slibs=
fi

# one version source: fpemu.h's FPEMU_VERSION is what --version, fpemu.pc,
# the library's file name and CHANGELOG.md's newest entry say
pcver=$(pkg-config --modversion fpemu 2>/dev/null)
progver=$("$stage$prefix/bin/fpemu" --version 2>&1)
logver=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' "$stage$prefix/share/doc/fpemu/CHANGELOG.md" | head -1)
check "one version: fpemu.h $version, fpemu --version '$progver', fpemu.pc $pcver, CHANGELOG.md $logver" \
    [ -n "$version" -a "$progver" = "fpemu $version" -a "$pcver" = "$version" -a "$logver" = "$version" ]

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
# with the shared library: `cc ... $(pkg-config --cflags --libs fpemu)`
# shellcheck disable=SC2086
if $CC -std=c99 -Wall -Wextra -pedantic -Werror $cflags -o "$tmp/prog" "$tmp/use.c" "$tmp/main.c" $libs 2>"$tmp/cc.log"; then
    pass "a C99 program compiles against the installed headers (-Wall -Wextra -pedantic -Werror) and links with pkg-config's flags"
else fail "a C99 program against the installed headers" "$(cat "$tmp/cc.log")"; fi
needed=$(readelf -d "$tmp/prog" 2>/dev/null | sed -n 's/.*Shared library: \[\(libfpemu[^]]*\)\].*/\1/p')
check "the program needs the shared library by its soname: '$needed'" [ "$needed" = "libfpemu.so.$major" ]
got=$(LD_LIBRARY_PATH="$stage$prefix/lib" "$tmp/prog" 2>&1)
check "the program on libfpemu.so: e4m3(464) = 7E, inexact; h100 dot 448 + 448 = 896 (f32 44600000): got '$got'" [ "$got" = "$want" ]
got=$(LD_LIBRARY_PATH= "$tmp/prog" 2>&1)
check "without the library on its path the program does not run (it really uses the shared library)" [ "$got" != "$want" ]

# the same program with the static library
# shellcheck disable=SC2086
if $CC -std=c99 -Wall -Wextra -pedantic -Werror $cflags -o "$tmp/prog_static" "$tmp/use.c" "$tmp/main.c" \
    "$stage$prefix/lib/libfpemu.a" $(printf '%s\n' $slibs | grep -v '^-lfpemu$') 2>"$tmp/ccs.log"; then
    got=$("$tmp/prog_static" 2>&1)
    check "the same program linked with libfpemu.a: got '$got'" [ "$got" = "$want" ]
else fail "the same program linked with libfpemu.a" "$(cat "$tmp/ccs.log")"; fi

# a shared object carrying libfpemu.a inside it (the library's objects are PIC)
# shellcheck disable=SC2086
if $CC -shared -fPIC $cflags -o "$tmp/libplug.so" "$tmp/use.c" "$stage$prefix/lib/libfpemu.a" -lm -pthread 2>"$tmp/so.log"; then
    pass "a shared object links libfpemu.a in (position-independent objects)"
else fail "a shared object links libfpemu.a in" "$(cat "$tmp/so.log")"; fi
$CC -o "$tmp/prog2" "$tmp/main.c" -L"$tmp" -lplug 2>"$tmp/so2.log"
got=$(LD_LIBRARY_PATH="$tmp" "$tmp/prog2" 2>&1)
check "a program through that shared object gives the same: got '$got'" [ "$got" = "$want" ]

# the GEMM's worker threads go with the library: dlopen libfpemu.so (and
# a plugin that carries all of libfpemu.a), a GEMM on two threads, dlclose,
# three times over; a worker left running would execute unmapped code.
# Under make test-asan without LeakSanitizer: the formats' tables stay
# behind each dlclose, by design (docs/library.md, "Threads")
cat >"$tmp/dl.c" <<'EOF'
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <fpemu/gemm.h>
typedef int (*init_fn)(fpemu_gemm_config *, const char *, const char *, const char *, char *, size_t);
typedef int (*gemm_fn)(const fpemu_gemm_config *, int, int, int, const float *, int, int, const float *, int, int,
                       const float *, int, float *, int, fpemu_gemm_stats *);
static float A[64 * 1024], B[1024 * 64], D[64 * 64];
int main(int argc, char **argv) {
    (void)argc;
    for (int i = 0; i < 64 * 1024; i++) A[i] = (float)(i % 7) - 3.0f, B[i] = (float)(i % 5) * 0.25f;
    for (int round = 0; round < 3; round++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
        init_fn init;
        gemm_fn gemm;
        void *pi = dlsym(h, "fpemu_gemm_config_init"), *pg = dlsym(h, "fpemu_gemm_f32");
        memcpy(&init, &pi, sizeof init), memcpy(&gemm, &pg, sizeof gemm);
        fpemu_gemm_config cfg;
        char err[200];
        if (!pi || !pg || init(&cfg, "h100", "e4m3", "e4m3", err, sizeof err)) { puts("no gemm"); return 1; }
        cfg.nthreads = 2;
        if (gemm(&cfg, 64, 64, 1024, A, 1024, 0, B, 64, 0, NULL, 64, D, 64, NULL)) { puts("gemm failed"); return 1; }
        if (dlclose(h)) { puts("dlclose failed"); return 1; }
        struct timespec t = {0, 20000000L};
        nanosleep(&t, NULL);
    }
    printf("ok %g\n", (double)D[0]);
    return 0;
}
EOF
# shellcheck disable=SC2086
if $CC -std=c99 $cflags -o "$tmp/dl" "$tmp/dl.c" -ldl 2>"$tmp/dl.log"; then
    got=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$tmp/dl" "$stage$prefix/lib/libfpemu.so.$major" 2>&1)
    check "dlopen libfpemu.so, a GEMM on 2 threads, dlclose, three times: the workers stop with the library: got '$got'" \
        [ "${got%% *}" = ok ]
    if $CC -shared -fPIC -o "$tmp/libwhole.so" -Wl,--whole-archive "$stage$prefix/lib/libfpemu.a" -Wl,--no-whole-archive \
        -lm -pthread 2>"$tmp/whole.log"; then
        got=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$tmp/dl" "$tmp/libwhole.so" 2>&1)
        check "the same through a plugin that carries all of libfpemu.a: got '$got'" [ "${got%% *}" = ok ]
    else fail "a plugin that carries all of libfpemu.a" "$(cat "$tmp/whole.log")"; fi
else fail "a program that dlopens libfpemu.so" "$(cat "$tmp/dl.log")"; fi

# the library's names stay in its namespace: every global symbol of the
# installed libfpemu.a is fpemu_* or emu__* (internal; an ASan build adds
# its __odr_asan.NAME indicators), and a program with
# its own gemm_f32, mma_dot, scaling_amax_f32, mma_model, ... (the library's
# names before they took the prefix) builds against every installed header
if command -v nm >/dev/null; then
    syms=$(nm -g --defined-only "$stage$prefix/lib/libfpemu.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
    nsym=$(printf '%s\n' "$syms" | grep -c .)
    bad=$(printf '%s\n' "$syms" | grep -v -E '^(fpemu_|emu__|__odr_asan[.])' | head -10 | tr '\n' ' ')
    check "every global symbol of libfpemu.a ($nsym) starts with fpemu_ or emu__${bad:+ (not: $bad)}" [ "$nsym" -gt 0 -a -z "$bad" ]
else fail "every global symbol of libfpemu.a starts with fpemu_ or emu__ (nm is not installed)"; fi
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
    got=$(LD_LIBRARY_PATH="$stage$prefix/lib" "$tmp/own" 2>&1)
    check "a program defining the unprefixed names (gemm_f32, mma_dot, mma_model, MMA_KIND_BLOCK, ...) builds against every installed header and libfpemu.a: '$got'" [ "$got" = "2 4 3 5 5 24 0" ]
else fail "a program defining the unprefixed names builds against the installed headers and libfpemu.a" "$(head -5 "$tmp/own.log")"; fi

got=$("$stage$prefix/bin/fpemu" formats e4m3 2>&1 | head -1)
check "the installed program runs (fpemu formats e4m3: '${got:0:40}')" [ -n "$got" ]
# from another folder, with no source tree to find: the data installed in share/fpemu
mkdir -p "$tmp/elsewhere"
if (cd "$tmp/elsewhere" && env -u FPEMU_ROOT -u FPEMU_DATA "$stage$prefix/bin/fpemu" train --model mlp-digits \
        --policy 32-true --steps 2 --quiet --out run) >"$tmp/train.log" 2>&1 && [ -f "$tmp/elsewhere/run/metrics.csv" ]; then
    pass "the installed fpemu train finds the installed digits data from another folder"
else fail "the installed fpemu train finds the installed digits data" "$(tail -3 "$tmp/train.log")"; fi
if (cd "$tmp/elsewhere" && env -u FPEMU_ROOT "$stage$prefix/bin/fpemu" report --out rep run) >"$tmp/report.log" 2>&1 \
    && [ -f "$tmp/elsewhere/rep/runs/loss.png" ]; then
    pass "the installed fpemu report finds the installed gnuplot scripts and draws the plots"
else fail "the installed fpemu report finds the installed gnuplot scripts" "$(tail -3 "$tmp/report.log")"; fi
man=$(grep '^\.TH' "$stage$prefix/share/man/man1/fpemu.1")
case $man in *"fpemu $version"*) pass "the man page carries the version: '$man'" ;;
    *) fail "the man page carries the version" "got '$man'" ;; esac
if command -v man >/dev/null; then
    nsec=$(MANWIDTH=80 man -l "$stage$prefix/share/man/man1/fpemu.1" 2>"$tmp/man.log" | grep -c 'EXIT STATUS')
    check "man -l renders fpemu(1) with its sections, no warnings" [ "$nsec" = 1 -a ! -s "$tmp/man.log" ]
fi

if mk uninstall >"$tmp/uninstall.log" 2>&1; then pass "make uninstall"; else fail "make uninstall" "$(tail -5 "$tmp/uninstall.log")"; fi
left=$(cd "$stage" && find . -type f | sort | tr '\n' ' ')
check "make uninstall removes every installed file${left:+ (left: $left)}" [ -z "$left" ]

tap_end
