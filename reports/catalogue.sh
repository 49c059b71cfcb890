#!/usr/bin/env bash
# catalogue.sh FPEMU OUTDIR: the "catalogue" section of the report
# (mk/experiments.mk): the format table (catalogue.md, catalogue.html,
# formats.csv) and, per format, the relative rounding error
# |round(x)-x|/|x| against |x| from `fpemu formats --error-curve`, plotted
# log-log with gnuplot (err_FMT.png and .svg), plus an overview of the main
# formats; fragment.html and fragment.md describe every plot.
set -euo pipefail
bin=$1
out=$2
command -v gnuplot >/dev/null || { echo "catalogue.sh: gnuplot not found (make deps installs gnuplot-nox)" >&2; exit 2; }
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
    "$bin" formats --error-curve "$name" --points 6000 >"err_$name.dat"
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
$( [ -n "$mins" ] && echo "set arrow from first $mins, graph 0 to first $mins, graph 1 nohead dt 3 lc rgb \"#999999\"" )
set arrow from first $minn, graph 0 to first $minn, graph 1 nohead dt 3 lc rgb \"#2a9d8f\"
set arrow from first $maxf, graph 0 to first $maxf, graph 1 nohead dt 3 lc rgb \"#e76f51\"
set label \"min normal\" at first $minn, graph 0.04 offset 0.5,0 font \",8\" tc rgb \"#2a9d8f\"
set label \"max finite\" at first $maxf, graph 0.04 right offset -0.5,0 font \",8\" tc rgb \"#e76f51\"
$( [ -n "$mins" ] && echo "set label \"min subnormal\" at first $mins, graph 0.10 right offset -0.5,0 font \",8\" tc rgb \"#777777\"" )
plot \"err_$name.dat\" using 1:4 with points pt 7 ps 0.25 lc rgb \"#f4a261\" title \"saturating (--sat)\", \\
     \"err_$name.dat\" using 1:2 with points pt 7 ps 0.25 lc rgb \"#264653\" title \"rne\"$( [ "$has_ovf" = 1 ] && printf '%s' ", \\
     \"err_$name.dat\" using 1:(\$3 * 2) with points pt 7 ps 0.3 lc rgb \"#d62828\" title \"overflow to inf/NaN\"" )"
    render "err_$name" "$body"
    # One sentence per plot: what it shows, and what was expected.
    s="<b>$name</b>: in the normal range [$minn, $maxf] the largest error seen is $emax_norm, expected at most u = 2^-$p = $u."
    if [ -n "$mins" ]; then
        s="$s Below min normal the spacing stays fixed at the min subnormal $mins, so the error grows as |x| falls"
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

# Overview: the main formats' saturating error curves on one plot.
over=""
colors=("#264653" "#2a9d8f" "#e9c46a" "#f4a261" "#e76f51" "#6a4c93" "#1982c4" "#8ac926" "#ff595e")
i=0
for f in f32 tf32 bf16 f16 e5m2 e4m3 e3m2 e2m3 e2m1; do
    [ -f "err_$f.dat" ] || continue
    over="$over${over:+, \\
     }\"err_$f.dat\" using 1:4 with points pt 7 ps 0.15 lc rgb \"${colors[$i]}\" title \"$f\""
    i=$((i + 1))
done
if [ -n "$over" ]; then
    render overview "$(gp_head "Relative rounding error (rne, saturating) of the main formats")
set key outside right top Left reverse samplen 1 font \",9\" spacing 1.1
set yrange [1e-9:4]
set xrange [1e-50:1e40]
plot $over"
fi

# fragment.html and fragment.md
{
    echo '<h2 id="catalogue">Format catalogue and rounding error</h2>'
    echo '<p>Every format in the registry (<code>fpemu formats</code>; Markdown in <a href="catalogue.md">catalogue.md</a>, CSV in <a href="formats.csv">formats.csv</a>). Hex codes are code words as vector lines write them.</p>'
    cat table.html
    echo '<p>The plots show |round(x) - x| / |x| for x sampled log-uniformly (6000 points) from min subnormal / 8 to 8 &times; max finite, rounded with <code>fpemu_from_double</code> (round to nearest even). The dashed line is the unit roundoff u = 2<sup>-p</sup>, the bound expected in the normal range; dotted lines mark min subnormal, min normal and max finite. Click a plot for its SVG.</p>'
    if [ -f overview.png ]; then
        echo '<figure><a href="overview.svg"><img src="overview.png" alt="error of the main formats" width="900"></a>'
        echo '<figcaption>Overview: precision (height of the flat part: u) against dynamic range (its width) for the main formats, with saturation. Expected: f32 and tf32/bf16 share the range of f32, bf16 trades precision for it against f16; e5m2 has the range of f16 with 2 mantissa bits; the 6- and 4-bit MX formats cover a few binades.</figcaption></figure>'
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
    [ -f overview.png ] && { echo '![overview](overview.png)'; echo; }
    while IFS=$'\t' read -r name s; do
        echo "![$name](err_$name.png)"
        echo
        echo "$s" | sed -e 's#</\?b>#**#g'
        echo
    done <sentences.tsv
} >fragment.md
rm -f table.html sentences.tsv
