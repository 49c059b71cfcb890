# SPDX-License-Identifier: MIT
# common.gp: settings shared by the report's plots (loaded by each script,
# and by errk.sh). Series colours: the baseline (series 1) black, then 19
# colours that stay apart on screen and in print (no two series of a plot
# share one up to 20 series); dash types repeat every 4 series on top.
palette = "#000000 #1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #17becf #bcbd22 #7f7f7f #393b79 #637939 #8c6d31 #843c39 #7b4173 #3182bd #e6550d #31a354 #756bb1"
color(i) = word(palette, (i - 1) % words(palette) + 1)
dash(i) = (i == 1) ? 1 : ((i - 2) % 4) + 1
set datafile missing "?"
set grid xtics ytics lc rgb "#e0e0e0"
set border lc rgb "#444444"
set key outside right top Left reverse samplen 2.5 spacing 1.1 font ",9"
# Open the output for format fmt ("png" or "svg"); out is the base name.
set_out(fmt) = (fmt eq "png") ? \
    sprintf('set terminal pngcairo size %d,%d enhanced font "sans,10"; set output "%s.png"', width, height, out) : \
    sprintf('set terminal svg size %d,%d enhanced font "sans,10" dynamic; set output "%s.svg"', width, height, out)
if (!exists("width")) width = 900
if (!exists("height")) height = 450
# Zeros on a log y axis: `eval zero_axis(lo, hi)` makes the axis run from
# the decade at or below lo (the smallest positive value shown) to hi, with
# a labelled tic every decade (every 10^k decades when the span is wide),
# and adds a row below it, labelled 0, under a dotted line. Plot pos(v) for
# the values on the axis and zer(v) for the markers on the row: a zero is
# never dropped, and a line never joins two points across a zero or a
# missing value (NaN breaks a line; "?" would not).
pos(v) = (v > 0) ? v : NaN
zer(v) = (v == 0) ? zrow : NaN
zero_axis(lo, hi) = sprintf('zlo = 10**floor(log10(%.6g) + 1e-9); zrow = zlo / 10.0; ' . \
    'zinc = ceil((log10(%.6g) - log10(zlo)) / 10.0); zinc = (zinc < 1) ? 1 : zinc; ' . \
    'set yrange [zlo / 10**1.5:%.6g]; set ytics zlo, 10**zinc; set ytics add ("0" zrow); set mytics default; ' . \
    'set arrow 9 from graph 0, first zlo / 10**0.5 to graph 1, first zlo / 10**0.5 nohead dt 3 lw 1.5 lc rgb "#666666"', lo, hi, hi)
