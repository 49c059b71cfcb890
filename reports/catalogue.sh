#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# catalogue.sh FPEMU OUTDIR: the "catalogue" section of the report
# (mk/experiments.mk): the format table (catalogue.md, catalogue.html,
# formats.csv) and, per format, the relative rounding error
# |round(x)-x|/|x| against |x| from `fpemu formats --error-curve`, plotted
# log-log with gnuplot (err_FMT.png and .svg), plus an overview of the main
# formats; fragment.html and fragment.md describe every plot, brief.html
# and brief.md are the short form the report's main page shows (the whole
# fragment goes on a page of its own, reports/assemble.sh).
set -euo pipefail
bin=$1
out=$2
command -v gnuplot >/dev/null || { echo "catalogue.sh: gnuplot not found (make deps installs gnuplot-nox)" >&2; exit 2; }
gnuplot -e 'set terminal pngcairo' 2>/dev/null || { echo "catalogue.sh: this gnuplot has no pngcairo terminal (Debian's gnuplot-nox has it)" >&2; exit 2; }
mkdir -p "$out"
cd "$out"

"$bin" formats --md >catalogue.md.tmp && mv catalogue.md.tmp catalogue.md
"$bin" formats --html >table.html
"$bin" formats --csv >formats.csv
{
    echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>fpemu format catalogue</title>'
    echo '<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}</style></head><body>'
    echo '<h1>fpemu format catalogue</h1>'
    cat table.html
    echo '</body></html>'
} >catalogue.html

# Common gnuplot settings for one log-log error plot.
gp_head() { # TITLE
    cat <<EOF
set logscale xy
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "|x|"
set ylabel "relative error |round(x) - x| / |x|"
set title "$1"
set grid xtics ytics lc rgb "#dddddd"
set key outside right top Left reverse samplen 2 font ",9"
EOF
}

# Render one gnuplot body to NAME.png and NAME.svg.
render() { # NAME BODY
    { echo 'set terminal pngcairo size 900,480 enhanced font "sans,10"'
      echo "set output \"$1.png\""
      printf '%s\n' "$2"
      echo 'set terminal svg size 900,480 enhanced font "sans,10" dynamic'
      echo "set output \"$1.svg\""
      echo 'replot'
      echo 'unset output'; } >"$1.gp"
    gnuplot "$1.gp" 2>"$1.gp.log" || { cat "$1.gp.log" >&2; exit 1; }
    # gnuplot warns (and carries on) on empty series; keep the log only if it said something.
    [ -s "$1.gp.log" ] || rm -f "$1.gp.log"
}

tail -n +2 formats.csv | while IFS=, read -r name bits container digits e m bias p maxf minn mins infc nanc negz signed rest; do
    [ "$bits" -ge 64 ] && continue # f64: the inputs are doubles already
    "$bin" formats --error-curve "$name" --points 3000 >"err_$name.dat"
    u=$(awk -v p="$p" 'BEGIN { printf "%.17g", 2 ^ -p }')
    lo=$(awk -v a="${mins:-$minn}" 'BEGIN { printf "%.17g", a / 8 }')
    hi=$(awk -v a="$maxf" 'BEGIN { printf "%.17g", a * 8 }')
    # What the data show: the largest error in the normal range, where values
    # start rounding to zero, and where overflow starts.
    read -r emax_norm zero_below ovf_from <<<"$(awk -v mn="$minn" -v mx="$maxf" '!/^#/ {
        if ($1 >= mn && $1 <= mx && $2 != "NaN" && $2 + 0 > em) em = $2 + 0
        if ($2 != "NaN" && $2 + 0 == 1) z = $1
        if ($3 == 1 && of == "") of = $1 }
        END { printf "%.4g %s %s\n", em, (z == "" ? "-" : sprintf("%.4g", z)), (of == "" ? "-" : sprintf("%.4g", of)) }' "err_$name.dat")"
    has_ovf=$([ "$ovf_from" != "-" ] && echo 1 || echo 0)
    body="$(gp_head "$name (e=$e, m=$m, bias $bias): relative error of round-to-nearest-even")
set xrange [$lo:$hi]
set yrange [$u/4096.0:4]
set arrow from graph 0, first $u to graph 1, first $u nohead dt 2 lc rgb \"#555555\"
set label \"u = 2^{-$p}\" at graph 0.01, first $u*1.5 font \",9\"
$( [ -z "$mins" ] || echo "set arrow from first $mins, graph 0 to first $mins, graph 1 nohead dt 3 lc rgb \"#999999\"" )
set arrow from first $minn, graph 0 to first $minn, graph 1 nohead dt 3 lc rgb \"#2a9d8f\"
set arrow from first $maxf, graph 0 to first $maxf, graph 1 nohead dt 3 lc rgb \"#e76f51\"
set label \"min normal\" at first $minn, graph 0.04 offset 0.5,0 font \",8\" tc rgb \"#2a9d8f\"
set label \"max finite\" at first $maxf, graph 0.04 right offset -0.5,0 font \",8\" tc rgb \"#e76f51\"
$( [ -z "$mins" ] || echo "set label \"min subnormal\" at first $mins, graph 0.10 right offset -0.5,0 font \",8\" tc rgb \"#777777\"" )
plot \"err_$name.dat\" using 1:4 with points pt 7 ps 0.25 lc rgb \"#f4a261\" title \"saturating (--sat)\", \\
     \"err_$name.dat\" using 1:2 with points pt 7 ps 0.25 lc rgb \"#264653\" title \"rne\"$( [ "$has_ovf" != 1 ] || printf '%s' ", \\
     \"err_$name.dat\" using 1:(\$3 * 2) with points pt 7 ps 0.3 lc rgb \"#d62828\" title \"overflow to inf/NaN\"" )"
    render "err_$name" "$body"
    # One sentence per plot: what it shows, and what was expected.
    s="<b>$name</b>: in the normal range [$(printf %.4g "$minn"), $(printf %.4g "$maxf")] the largest error seen is $emax_norm, expected at most u = 2^-$p = $(printf %.4g "$u")."
    if [ -n "$mins" ]; then
        s="$s Below min normal the spacing stays fixed at the min subnormal $(printf %.4g "$mins"), so the error grows as |x| falls"
        s="$s; below $zero_below values round to zero (error 1), expected below half the min subnormal."
    else
        s="$s No subnormals: below min normal values round to the min normal or stay there (error grows above 1)."
    fi
    if [ "$has_ovf" = 1 ]; then
        s="$s Above $ovf_from the non-saturating result is inf or NaN (red markers at 2), expected above max finite plus half an ulp; with saturation the error instead rises as (|x| - max)/|x|."
    else
        s="$s The format never overflows to inf/NaN: it saturates at max finite, error (|x| - max)/|x|."
    fi
    printf '%s\t%s\n' "$name" "$s" >>sentences.tsv
done

# Overviews: the upper envelope (largest error per binade, with saturation,
# from a dense 60000-point curve) of the main formats on one plot:
# precision against range; then the same zoomed on the narrow formats.
colors=("#000000" "#1982c4" "#8ac926" "#ff595e" "#6a4c93" "#f4a261" "#2a9d8f" "#e9c46a" "#d62828")
overview() { # NAME TITLE XRANGE YRANGE FORMATS...
    local name=$1 title=$2 xr=$3 yr=$4 plots="" i=0 f
    shift 4
    for f in "$@"; do
        [ -f "err_$f.dat" ] || continue
        [ -f "env_$f.dat" ] || "$bin" formats --error-curve "$f" --points 60000 |
            awk '!/^#/ && $4 != "NaN" { b = int(log($1) / log(2) + 100000); if (!(b in m) || $4 + 0 > m[b]) m[b] = $4 + 0 }
                END { for (b in m) printf "%.9g %.9g\n", 2 ^ (b - 100000 + 0.5), m[b] }' | sort -g >"env_$f.dat"
        plots="$plots${plots:+, \\
     }\"env_$f.dat\" using 1:2 with linespoints pt 7 ps 0.4 lw 2 dt $((i % 3 + 1)) lc rgb \"${colors[$i]}\" title \"$f\""
        i=$((i + 1))
    done
    [ -n "$plots" ] || return 0
    render "$name" "$(gp_head "$title")
set key outside right top Left reverse samplen 3 font \",9\" spacing 1.1
set ylabel \"largest relative error in the binade\"
set yrange [$yr]
set xrange [$xr]
plot $plots"
}
overview overview "Largest relative rounding error per binade (rne, saturating)" "1e-50:1e40" "1e-9:4" \
    f32 tf32 bf16 f16 e5m2 e4m3 e3m2 e2m3 e2m1
overview overview_narrow "Largest relative rounding error per binade: 16-, 8-, 6- and 4-bit formats" "1e-9:1e6" "1e-4:4" \
    bf16 f16 e5m2 e4m3 e3m2 e2m3 e2m1

# fragment.html and fragment.md
{
    echo '<h2 id="catalogue">Format catalogue and rounding error</h2>'
    echo '<p>Every format in the registry (<code>fpemu formats</code>; Markdown in <a href="catalogue.md">catalogue.md</a>, CSV in <a href="formats.csv">formats.csv</a>). Hex codes are code words as vector lines write them.</p>'
    cat table.html
    echo '<p>The plots show |round(x) - x| / |x| for x sampled log-uniformly (3000 points) from min subnormal / 8 to 8 &times; max finite, rounded with <code>fpemu_from_double</code> (round to nearest even). The dashed line is the unit roundoff u = 2<sup>-p</sup>, the bound expected in the normal range; dotted lines mark min subnormal, min normal and max finite. Click a plot for its SVG.</p>'
    if [ -f overview.png ]; then
        echo '<figure><a href="overview.svg"><img src="overview.png" alt="largest error per binade of the main formats" width="900"></a>'
        echo '<figcaption>Overview: the largest error in each binade (saturating) for the main formats: the flat part is the precision (expected just under u = 2<sup>-p</sup>: 2<sup>-24</sup> for f32, 2<sup>-11</sup> for tf32 and f16, 2<sup>-8</sup> for bf16), its width the dynamic range (expected: f32, tf32 and bf16 share the range of f32; f16 and e5m2 share about 10<sup>-7</sup> to 6&times;10<sup>4</sup>); the slope on the left is the subnormal range, the rise on the right saturation.</figcaption></figure>'
    fi
    if [ -f overview_narrow.png ]; then
        echo '<figure><a href="overview_narrow.svg"><img src="overview_narrow.png" alt="largest error per binade of the narrow formats" width="900"></a>'
        echo '<figcaption>The same for the 16-, 8-, 6- and 4-bit formats, zoomed: expected plateaus just under u: 2<sup>-3</sup> (e5m2, e3m2), 2<sup>-4</sup> (e4m3, e2m3) and 2<sup>-2</sup> (e2m1), and ranges from a few binades (e2m1: 0.5 to 6) to 32 (e5m2).</figcaption></figure>'
    fi
    while IFS=$'\t' read -r name s; do
        echo "<figure><a href=\"err_$name.svg\"><img src=\"err_$name.png\" alt=\"relative error of $name\" width=\"900\"></a>"
        echo "<figcaption>$s</figcaption></figure>"
    done <sentences.tsv
} >fragment.html
{
    echo '## Format catalogue and rounding error'
    echo
    echo 'Every format in the registry (`fpemu formats`; CSV in [formats.csv](formats.csv)):'
    echo
    cat catalogue.md
    echo
    echo 'Relative error |round(x) - x| / |x| (round to nearest even) over each format'"'"'s range and a factor 8 beyond both ends; the dashed line is u = 2^-p.'
    echo
    [ -f overview.png ] && { echo '![overview](overview.png)'; echo; echo 'Largest error per binade of the main formats: precision (plateau, about u) against range (its width).'; echo; }
    [ -f overview_narrow.png ] && { echo '![overview of the narrow formats](overview_narrow.png)'; echo; }
    while IFS=$'\t' read -r name s; do
        echo "![$name](err_$name.png)"
        echo
        echo "$s" | sed -e 's#</\?b>#**#g'
        echo
    done <sentences.tsv
} >fragment.md
# brief.html and brief.md: the catalogue in a few lines and its overview
# plot, for the main page of the report; reports/assemble.sh puts the whole
# fragment on a page of its own (catalogue.html) and links it.
nfmt=$(($(wc -l <formats.csv) - 1))
nplots=$(wc -l <sentences.tsv)
{
    echo '<h2 id="catalogue">Format catalogue and rounding error</h2>'
    echo "<p>$nfmt formats in the registry (<code>fpemu formats</code>): their widths, bias, range, inf and NaN encodings and aliases (CSV in <a href=\"formats.csv\">formats.csv</a>), and for each of the $nplots below 64 bits the relative rounding error |round(x) - x| / |x| over its whole range. The overview below puts the main formats side by side: the plateau is the precision (expected just under u = 2<sup>-p</sup>), its width the range.</p>"
    if [ -f overview.png ]; then
        echo '<figure><a href="overview.svg"><img src="overview.png" alt="largest error per binade of the main formats" width="900"></a>'
        echo '<figcaption>The largest relative rounding error in each binade (round to nearest even, saturating) of f32, tf32, bf16, f16 and the 8-, 6- and 4-bit formats.</figcaption></figure>'
    fi
} >brief.html
{
    echo '## Format catalogue and rounding error'
    echo
    echo "$nfmt formats in the registry (\`fpemu formats\`; CSV in [formats.csv](formats.csv)), with the relative rounding error of each of the $nplots below 64 bits over its whole range."
    echo
    [ -f overview.png ] && { echo '![overview](overview.png)'; echo; echo 'Largest error per binade of the main formats: precision (plateau, about u) against range (its width).'; echo; }
} >brief.md
rm -f table.html sentences.tsv
