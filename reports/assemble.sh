#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# assemble.sh REPORT_DIR SECTION...: build REPORT_DIR/index.html and
# REPORT_DIR/summary.md from the sections' fragments, in the order given
# (mk/experiments.mk has the contract). The page opens with its verdict:
# the README's paragraph on what fpemu shows, then every section's
# headline.html (what it ran and found, in a few lines) and keyplots.html
# (the figures that matter, side by side), then the contents, then each
# section's fragment.html. A section that also wrote brief.html gets its
# own page, REPORT_DIR/SECTION.html (and SECTION.md from fragment.md): the
# main page shows the brief and links to it. Relative paths in a section's
# files are relative to its folder; they are prefixed with SECTION/ here
# so the report opens from disk.
set -euo pipefail
dir=$1
shift
[ -d "$dir" ] || { echo "assemble.sh: $dir: no such folder (run make experiments)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
when=$(date -u '+%Y-%m-%d %H:%M UTC')
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$rev" != unknown ] && [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then rev="$rev (with uncommitted changes)"; fi
host="$(uname -sm), $(nproc 2>/dev/null || echo '?') cores"
# What fpemu shows: the README's opening paragraph (its one owner), at the
# top of both pages, so the report and the README say the same thing.
intro=$(sed -n '/^<!-- what-fpemu-shows/,/^<!-- \/what-fpemu-shows -->/p' "$root/README.md" | sed '1d;$d')
[ -n "$intro" ] || { echo "assemble.sh: $root/README.md: no what-fpemu-shows paragraph" >&2; exit 2; }
intro_html=$(printf '%s\n' "$intro" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g')
for s in "$@"; do
    case $s in index | summary) [ ! -f "$dir/$s/brief.html" ] || { echo "assemble.sh: section $s cannot have a page of its own ($s.html is the report)" >&2; exit 2; };; esac
done

# Prefix SECTION/ to relative src/href values (not absolute, not a URL
# scheme, not an #anchor) and to relative Markdown link targets.
html_fix() { sed -E "s#(src|href)=\"([^\"/\#:][^\":]*)\"#\\1=\"$1/\\2\"#g"; }
md_fix() { sed -E "s#\\]\\(([^)/\#:][^):]*)\\)#](${1}/\\1)#g"; }
# A section's heading: the first <h2> of its brief or fragment, as text.
heading() { # SECTION
    local f=$dir/$1/brief.html
    [ -f "$f" ] || f=$dir/$1/fragment.html
    grep -m1 -o '<h2[^>]*>.*</h2>' "$f" 2>/dev/null | sed -E 's/<[^>]*>//g' || true
}

style='<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1100px; line-height: 1.4; padding: 0 1em; }
h1 { margin-bottom: 0.2em; }
.intro { font-size: 95%; color: #222; margin: 0.4em 0; }
.meta { font-size: 85%; color: #555; margin: 0.3em 0 0.8em; }
table { border-collapse: collapse; font-size: 90%; margin: 1em 0; }
td, th { border: 1px solid #bbb; padding: 2px 6px; text-align: left; }
td:first-child { white-space: nowrap; }
th { background: #f0f0f0; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 92%; color: #333; max-width: 900px; }
.verdict { background: #f7f9fc; border: 1px solid #d0d7e2; padding: 0.1em 1em 0.8em; margin: 1em 0; }
.verdict h2 { margin: 0.5em 0 0.3em; }
.verdict p { margin: 0.4em 0; }
.verdict ul.failed { margin: 0.3em 0; padding-left: 1.4em; }
.keyplots { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 0.8em; margin-top: 0.6em; }
.keyplots figure { margin: 0; }
.keyplots figcaption { font-size: 88%; }
.bad { color: #b00; font-weight: bold; }
.warn { color: #b60; font-weight: bold; }
.good { color: #080; }
.note { color: #555; }
.missing { color: #a00; }
code { background: #f6f6f6; padding: 0 2px; }
</style>'

tmp_html=$dir/index.html.tmp.$$
tmp_md=$dir/summary.md.tmp.$$
pages=()
trap 'rm -f "$tmp_html" "$tmp_md" "${pages[@]/%/.tmp.$$}"' EXIT

# The own pages of sections with a brief: SECTION.html and SECTION.md.
for s in "$@"; do
    [ -f "$dir/$s/brief.html" ] || continue
    h=$(heading "$s")
    pages+=("$dir/$s.html" "$dir/$s.md")
    {
        cat <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>fpemu experiments report: ${h:-$s}</title>
$style</head><body>
<p class="meta"><a href="index.html">&larr; fpemu experiments report</a> (generated $when from commit $rev)</p>
<section id="section-$s">
EOF
        if [ -f "$dir/$s/fragment.html" ]; then html_fix "$s" <"$dir/$s/fragment.html"
        else echo "<h2>$s</h2><p class=\"missing\">Section $s wrote no fragment.html.</p>"; fi
        echo '</section>'
        echo '</body></html>'
    } >"$dir/$s.html.tmp.$$"
    {
        echo "[← fpemu experiments report](summary.md)"
        echo
        if [ -f "$dir/$s/fragment.md" ]; then md_fix "$s" <"$dir/$s/fragment.md"
        else echo "## $s"; echo; echo "(no fragment.md; see $s.html)"; fi
    } >"$dir/$s.md.tmp.$$"
done

{
    cat <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>fpemu experiments report</title>
$style</head><body>
<h1>fpemu experiments report</h1>
<p class="intro">$intro_html</p>
<p class="meta">Generated $when from commit $rev on $host by <code>make experiments</code>.</p>
EOF
    # the verdict: every section's headline, then the plots that matter
    verdict=0
    for s in "$@"; do [ -f "$dir/$s/headline.html" ] || [ -f "$dir/$s/keyplots.html" ] && verdict=1; done
    if [ $verdict = 1 ]; then
        echo '<section class="verdict" id="verdict">'
        echo '<h2>Verdict</h2>'
        for s in "$@"; do [ ! -f "$dir/$s/headline.html" ] || html_fix "$s" <"$dir/$s/headline.html"; done
        keys=0
        for s in "$@"; do [ ! -s "$dir/$s/keyplots.html" ] || keys=1; done
        if [ $keys = 1 ]; then
            echo '<p class="note">The plots that matter (click one for its section):</p>'
            echo '<div class="keyplots">'
            for s in "$@"; do [ ! -f "$dir/$s/keyplots.html" ] || html_fix "$s" <"$dir/$s/keyplots.html"; done
            echo '</div>'
        fi
        echo '</section>'
    fi
    echo '<h2 id="contents">Contents</h2>'
    echo '<ul>'
    for s in "$@"; do
        h=$(heading "$s")
        if [ -f "$dir/$s/brief.html" ]; then
            echo "<li><a href=\"#section-$s\">${h:-$s}</a> (in full on its own page: <a href=\"$s.html\">$s.html</a>)</li>"
        else
            echo "<li><a href=\"#section-$s\">${h:-$s}</a></li>"
        fi
    done
    echo '</ul>'
    for s in "$@"; do
        echo "<section id=\"section-$s\">"
        if [ -f "$dir/$s/brief.html" ]; then
            html_fix "$s" <"$dir/$s/brief.html"
            echo "<p><b><a href=\"$s.html\">The whole section, with every table and plot, is on its own page: $s.html</a></b></p>"
        elif [ -f "$dir/$s/fragment.html" ]; then
            html_fix "$s" <"$dir/$s/fragment.html"
        else
            echo "<h2>$s</h2><p class=\"missing\">Section $s wrote no fragment.html.</p>"
        fi
        echo '</section>'
    done
    echo '</body></html>'
} >"$tmp_html"
{
    echo '# fpemu experiments report'
    echo
    printf '%s\n\n' "$intro"
    echo "Generated $when from commit $rev on $host by \`make experiments\`; the full report with every plot is index.html."
    echo
    verdict=0
    for s in "$@"; do [ -f "$dir/$s/headline.md" ] || [ -f "$dir/$s/keyplots.md" ] && verdict=1; done
    if [ $verdict = 1 ]; then
        echo '## Verdict'
        echo
        for s in "$@"; do [ ! -f "$dir/$s/headline.md" ] || md_fix "$s" <"$dir/$s/headline.md"; done
        for s in "$@"; do [ ! -f "$dir/$s/keyplots.md" ] || md_fix "$s" <"$dir/$s/keyplots.md"; done
    fi
    for s in "$@"; do
        if [ -f "$dir/$s/brief.md" ]; then
            md_fix "$s" <"$dir/$s/brief.md"
            echo
            echo "The whole section is on its own page: [$s.md]($s.md)."
        elif [ -f "$dir/$s/fragment.md" ]; then
            md_fix "$s" <"$dir/$s/fragment.md"
        else
            echo "## $s"; echo; echo "(no fragment.md; see index.html)"
        fi
        echo
    done
} >"$tmp_md"
for s in "$@"; do
    [ -f "$dir/$s/brief.html" ] || continue
    mv "$dir/$s.html.tmp.$$" "$dir/$s.html"
    mv "$dir/$s.md.tmp.$$" "$dir/$s.md"
done
mv "$tmp_html" "$dir/index.html"
mv "$tmp_md" "$dir/summary.md"
