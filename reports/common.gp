# SPDX-License-Identifier: MIT
# common.gp: settings shared by the report's plots (loaded by each script).
# Series colours: the baseline (series 1) black, then a palette that stays
# readable in print; dash types repeat every 4 series.
palette = "#000000 #1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #17becf #bcbd22 #7f7f7f #393b79"
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
