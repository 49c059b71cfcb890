#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_cli_report.sh: reports/assemble.sh, the `make experiments` report
# assembler: sections in the order given, relative links in fragments
# prefixed with the section folder (absolute URLs and #anchors untouched),
# a note for a section without a fragment, no temporary files left, the
# README's paragraph on what fpemu shows at the top. Prints TAP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/t_cli_report.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
n=0
failed=0
check() { # DESCRIPTION COMMAND...
    local d=$1; shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $d"; else echo "not ok $n - $d"; failed=$((failed + 1)); fi
}

R=$TMP/latest
mkdir -p "$R/beta" "$R/alpha" "$R/empty"
printf '<h2>Beta plots</h2>\n<p><a href="b.svg"><img src="b.png"></a> <a href="#top">top</a> <a href="https://example.org/x.png">ext</a> <img src="/abs/p.png"></p>\n' >"$R/beta/fragment.html"
printf '## Beta plots\n\n![b](b.png) [data](sub/b.dat) [ext](https://example.org/y)\n' >"$R/beta/fragment.md"
printf '<h2>Alpha</h2>\n<img src="a.png">\n' >"$R/alpha/fragment.html"
"$ROOT/reports/assemble.sh" "$R" beta alpha empty >"$TMP/out" 2>&1
rc=$?
check "assemble.sh exits 0" [ "$rc" = 0 ]
check "index.html and summary.md written" [ -s "$R/index.html" -a -s "$R/summary.md" ]
check "no temporary files left" [ -z "$(ls "$R" | grep tmp)" ]
check "relative img src prefixed" grep -q '<img src="beta/b.png">' "$R/index.html"
check "relative href prefixed" grep -q '<a href="beta/b.svg">' "$R/index.html"
check "#anchor untouched" grep -q '<a href="#top">' "$R/index.html"
check "absolute URL untouched" grep -q '<a href="https://example.org/x.png">' "$R/index.html"
check "absolute path untouched" grep -q '<img src="/abs/p.png">' "$R/index.html"
check "second section prefixed with its own folder" grep -q '<img src="alpha/a.png">' "$R/index.html"
order=$(grep -o 'id="section-[a-z]*"' "$R/index.html" | tr '\n' ' ')
check "sections in the order given" [ "$order" = 'id="section-beta" id="section-alpha" id="section-empty" ' ]
check "table of contents uses the fragment headings" grep -q '<a href="#section-beta">Beta plots</a>' "$R/index.html"
check "a section without fragment.html is reported" grep -q 'Section empty wrote no fragment.html' "$R/index.html"
# the first screen says what the README's opening says (its paragraph, one owner)
first=$(sed -n '/^<!-- what-fpemu-shows/{n;p;q}' "$ROOT/README.md")
check "the report opens with the README's paragraph on what fpemu shows ('${first:0:40}...')" \
    sh -c '[ -n "$1" ] && grep -qF "$1" "$2" && grep -qF "$1" "$3"' - "$first" "$R/index.html" "$R/summary.md"
check "markdown image prefixed" grep -q '!\[b\](beta/b.png)' "$R/summary.md"
check "markdown link prefixed" grep -q '\[data\](beta/sub/b.dat)' "$R/summary.md"
check "markdown URL untouched" grep -q '\[ext\](https://example.org/y)' "$R/summary.md"
check "summary notes a section without fragment.md" grep -q '(no fragment.md; see index.html)' "$R/summary.md"
"$ROOT/reports/assemble.sh" "$TMP/nonexistent" beta >/dev/null 2>"$TMP/err"
rc=$?
check "missing report folder: exit 2 with a message" [ "$rc" = 2 -a -s "$TMP/err" ]

echo "1..$n"
[ "$failed" = 0 ]
