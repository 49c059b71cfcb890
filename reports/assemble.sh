#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# assemble.sh REPORT_DIR SECTION...: build REPORT_DIR/index.html and
# REPORT_DIR/summary.md from each REPORT_DIR/SECTION/fragment.html and
# fragment.md, in the order given (mk/experiments.mk has the contract).
# Relative paths in a fragment are relative to its section folder; they are
# prefixed with SECTION/ here so the report opens from disk.
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

# Prefix SECTION/ to relative src/href values (not absolute, not a URL
# scheme, not an #anchor) and to relative Markdown link targets.
html_fix() { sed -E "s#(src|href)=\"([^\"/\#:][^\":]*)\"#\\1=\"$1/\\2\"#g"; }
md_fix() { sed -E "s#\\]\\(([^)/\#:][^):]*)\\)#](${1}/\\1)#g"; }

tmp_html=$dir/index.html.tmp.$$
tmp_md=$dir/summary.md.tmp.$$
trap 'rm -f "$tmp_html" "$tmp_md"' EXIT
{
    cat <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>fpemu experiments report</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; line-height: 1.4; padding: 0 1em; }
table { border-collapse: collapse; font-size: 90%; margin: 1em 0; }
td, th { border: 1px solid #bbb; padding: 2px 6px; text-align: left; }
th { background: #f0f0f0; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 92%; color: #333; max-width: 900px; }
.missing { color: #a00; }
code { background: #f6f6f6; padding: 0 2px; }
</style></head><body>
<h1>fpemu experiments report</h1>
<p>$intro_html</p>
<p>Generated $when from commit $rev on $host by <code>make experiments</code>.</p>
<ul>
EOF
    for s in "$@"; do
        h=$(grep -m1 -o '<h2[^>]*>.*</h2>' "$dir/$s/fragment.html" 2>/dev/null | sed -E 's/<[^>]*>//g' || true)
        echo "<li><a href=\"#section-$s\">${h:-$s}</a></li>"
    done
    echo '</ul>'
    for s in "$@"; do
        echo "<section id=\"section-$s\">"
        if [ -f "$dir/$s/fragment.html" ]; then
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
    for s in "$@"; do
        if [ -f "$dir/$s/fragment.md" ]; then
            md_fix "$s" <"$dir/$s/fragment.md"
        else
            echo "## $s"; echo; echo "(no fragment.md; see index.html)"
        fi
        echo
    done
} >"$tmp_md"
mv "$tmp_html" "$dir/index.html"
mv "$tmp_md" "$dir/summary.md"
