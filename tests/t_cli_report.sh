#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_cli_report.sh: reports/assemble.sh, the `make experiments` report
# assembler: sections in the order given, relative links in fragments
# prefixed with the section folder (absolute URLs and #anchors untouched),
# a note for a section without a fragment, no temporary files left, the
# README's paragraph on what fpemu shows at the top; the verdict block
# (every section's headline, then the plots that matter) before the
# contents; a section with a brief (the catalogue) on a page of its own,
# linked from the report. Prints TAP.
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
# the verdict first: every section's headline.html in order, then every
# section's keyplots.html in one grid, then the contents
V=$TMP/verdict
mkdir -p "$V/train" "$V/kern" "$V/plain"
printf '<h2>Train</h2>\n<p>train body</p>\n' >"$V/train/fragment.html"
printf '## Train\n\ntrain body\n' >"$V/train/fragment.md"
printf '<p class="verdict-line">Training: 7 of 9 claims reproduced</p>\n' >"$V/train/headline.html"
printf '<figure><img src="exp/key_loss.png"></figure>\n' >"$V/train/keyplots.html"
printf '**Training: 7 of 9 claims reproduced**\n\n' >"$V/train/headline.md"
printf '![k](exp/key_loss.png)\n\n' >"$V/train/keyplots.md"
printf '<h2>Kernels</h2>\n' >"$V/kern/fragment.html"
printf '<p>Tensor cores: 1%% at K = 4096</p>\n' >"$V/kern/headline.html"
printf '<figure><img src="k.png"></figure>\n' >"$V/kern/keyplots.html"
printf '<h2>Plain</h2>\n' >"$V/plain/fragment.html"
"$ROOT/reports/assemble.sh" "$V" train kern plain >"$TMP/out" 2>&1
rc=$?
I=$V/index.html
line() { grep -n -m1 -F -- "$1" "$I" | cut -d: -f1; }
lv=$(line 'id="verdict"'); l1=$(line 'Training: 7 of 9'); l2=$(line 'Tensor cores: 1%'); lk=$(line 'class="keyplots"')
lp1=$(line 'train/exp/key_loss.png'); lp2=$(line 'kern/k.png'); lc=$(line 'id="contents"'); ls=$(line 'id="section-train"')
check "verdict: exit 0, headlines in section order, then the key plots, then the contents ($lv $l1 $l2 $lk $lp1 $lp2 $lc $ls)" \
    sh -c '[ "$1" = 0 ] && shift && for a in "$@"; do [ -n "$a" ] || exit 1; done && [ "$1" -lt "$2" ] && [ "$2" -lt "$3" ] && [ "$3" -lt "$4" ] &&
           [ "$4" -lt "$5" ] && [ "$5" -lt "$6" ] && [ "$6" -lt "$7" ] && [ "$7" -lt "$8" ]' - "$rc" "$lv" "$l1" "$l2" "$lk" "$lp1" "$lp2" "$lc" "$ls"
check "verdict: below the README's paragraph" \
    sh -c '[ "$(grep -n -m1 "class=\"intro\"" "$1" | cut -d: -f1)" -lt "$2" ]' - "$I" "${lv:-0}"
check "verdict in summary.md: headline then key plots, before the sections" \
    sh -c 'awk "/^## Verdict/ { v = NR } /Training: 7 of 9/ { h = NR } /train\/exp\/key_loss.png/ { k = NR } /^## Train/ { t = NR } END { exit !(v && v < h && h < k && k < t) }" "$1"' - "$V/summary.md"
check "no verdict block when no section wrote one" sh -c '! grep -q "id=\"verdict\"" "$1"' - "$R/index.html"

# a section with a brief (the catalogue): the main page shows the brief and
# links its own page, which holds the whole fragment
C=$TMP/brief
mkdir -p "$C/cat" "$C/other"
printf '<h2 id="cat">Catalogue</h2>\n<p>FULLTABLE</p>\n<img src="err_f16.png">\n' >"$C/cat/fragment.html"
printf '## Catalogue\n\nFULLTABLE ![e](err_f16.png)\n' >"$C/cat/fragment.md"
printf '<h2 id="cat">Catalogue</h2>\n<p>BRIEF 27 formats</p>\n<img src="overview.png">\n' >"$C/cat/brief.html"
printf '## Catalogue\n\nBRIEF 27 formats ![o](overview.png)\n' >"$C/cat/brief.md"
printf '<h2>Other</h2>\n' >"$C/other/fragment.html"
"$ROOT/reports/assemble.sh" "$C" other cat >"$TMP/out" 2>&1
rc=$?
check "brief: exit 0, the section's own page and its Markdown twin written" [ "$rc" = 0 -a -s "$C/cat.html" -a -s "$C/cat.md" ]
check "brief: the main page shows the brief, not the whole fragment" \
    sh -c 'grep -q "BRIEF 27 formats" "$1" && grep -q "<img src=\"cat/overview.png\">" "$1" && ! grep -q FULLTABLE "$1"' - "$C/index.html"
check "brief: the main page links the own page (in the section and in the contents)" \
    sh -c '[ "$(grep -c "href=\"cat.html\"" "$1")" = 2 ]' - "$C/index.html"
check "brief: the own page holds the whole fragment, paths prefixed, and links back" \
    sh -c 'grep -q FULLTABLE "$1" && grep -q "<img src=\"cat/err_f16.png\">" "$1" && grep -q "href=\"index.html\"" "$1"' - "$C/cat.html"
check "brief: summary.md shows the brief and links cat.md, which holds the fragment" \
    sh -c 'grep -q "BRIEF 27 formats" "$1" && ! grep -q FULLTABLE "$1" && grep -qF "(cat.md)" "$1" && grep -q FULLTABLE "$2" && grep -qF "(cat/err_f16.png)" "$2"' \
    - "$C/summary.md" "$C/cat.md"
check "brief: no temporary files left" [ -z "$(ls "$C" | grep tmp)" ]

# the real catalogue writes a brief, so it gets a page of its own
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
if [ -x "$BIN" ] && command -v gnuplot >/dev/null 2>&1; then
    "$ROOT/reports/catalogue.sh" "$BIN" "$TMP/rep/catalogue" >"$TMP/out" 2>&1 && "$ROOT/reports/assemble.sh" "$TMP/rep" catalogue >>"$TMP/out" 2>&1
    rc=$?
    nf=$(($(wc -l <"$TMP/rep/catalogue/formats.csv") - 1))
    check "catalogue.sh: a brief naming the $nf formats, the catalogue on its own page (catalogue.html) linked from the report" \
        sh -c '[ "$1" = 0 ] && grep -q "^<p>$2 formats in the registry" "$3/catalogue/brief.html" && [ -s "$3/catalogue.html" ] &&
               grep -q "href=\"catalogue.html\"" "$3/index.html" && ! grep -q "err_f16.png" "$3/index.html" &&
               grep -q "<img src=\"catalogue/err_f16.png\"" "$3/catalogue.html"' - "$rc" "$nf" "$TMP/rep"
else
    n=$((n + 1)); echo "ok $n # SKIP catalogue.sh: $BIN or gnuplot missing"
fi

"$ROOT/reports/assemble.sh" "$TMP/nonexistent" beta >/dev/null 2>"$TMP/err"
rc=$?
check "missing report folder: exit 2 with a message" [ "$rc" = 2 -a -s "$TMP/err" ]

# make experiments SEEDS="..." reaches the planner and the report as --seeds
mk=$(make -s -n -C "$ROOT" suite-plan SEEDS="4 5" BUILD="$TMP/mkb" BINDIR="$TMP/mkbin" REPORT_ROOT="$TMP/mkr" 2>/dev/null | grep -- "report --plan")
check "make suite-plan SEEDS=\"4 5\" passes --seeds \"4 5\" to the planner" sh -c 'printf "%s" "$1" | grep -q -- "--seeds \"4 5\""' - "$mk"
mk=$(make -s -n -C "$ROOT" suite-plan BUILD="$TMP/mkb" BINDIR="$TMP/mkbin" REPORT_ROOT="$TMP/mkr" 2>/dev/null | grep -- "report --plan")
check "without SEEDS the definitions' seeds count (no --seeds)" sh -c '[ -n "$1" ] && ! printf "%s" "$1" | grep -q -- "--seeds"' - "$mk"
check "the report step of make experiments gets the same --seeds" grep -q 'fpemu report --suite $(SUITE_DIR) --runs $(SUITE_CACHE) $(suite_seeds)' "$ROOT/mk/suite.mk"
echo "1..$n"
[ "$failed" = 0 ]
