# SPDX-License-Identifier: MIT
# curves.gp: several series against the step, one column each, from a
# whitespace-separated file (column 1 the step, "?" missing, NaN a gap).
# gnuplot -e "out='loss'; file='loss.dat'; names='fp32 f16'; ttl='...'; yl='...'; logy=1; zero=0; pts=0" curves.gp
# writes out.png and out.svg. pts=1 draws points too (sparse series).
# band=1: three columns per series (the seeds' mean, min, max): the min-max
# band shaded in the series' colour under its mean line (with pts=1, points
# on the mean).
load dir."common.gp"
if (!exists("logy")) logy = 0
if (!exists("zero")) zero = 0
if (!exists("pts")) pts = 0
if (!exists("band")) band = 0
if (!exists("xl")) xl = "step"
if (!exists("yr")) yr = ""
n = words(names)
do for [fmt in "png svg"] {
    eval set_out(fmt)
    set title ttl noenhanced
    set xlabel xl
    set ylabel yl
    if (logy) { set logscale y; set format y "%g" } else { unset logscale y; set format y "%g" }
    if (yr ne "") { eval "set yrange [".yr."]" } else { set autoscale y }
    if (zero) { set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb "#888888" dt 2 } else { unset arrow 1 }
    if (band) { if (pts) {
        plot for [i=1:n] file using 1:(column(3*i)):(column(3*i+1)) with filledcurves fs transparent solid 0.15 noborder lc rgb color(i) notitle, \
             for [i=1:n] file using 1:(column(3*i-1)) with linespoints pt 7 ps 0.5 lw 1.5 dt dash(i) lc rgb color(i) title word(names, i) noenhanced
    } else {
        plot for [i=1:n] file using 1:(column(3*i)):(column(3*i+1)) with filledcurves fs transparent solid 0.15 noborder lc rgb color(i) notitle, \
             for [i=1:n] file using 1:(column(3*i-1)) with lines lw (i == 1 ? 2.5 : 1.5) dt dash(i) lc rgb color(i) title word(names, i) noenhanced
    } } else { if (pts) {
        plot for [i=1:n] file using 1:(column(i+1)) with linespoints pt 7 ps 0.5 lw 1.5 dt dash(i) lc rgb color(i) title word(names, i) noenhanced
    } else {
        plot for [i=1:n] file using 1:(column(i+1)) with lines lw (i == 1 ? 2.5 : 1.5) dt dash(i) lc rgb color(i) title word(names, i) noenhanced
    } }
    unset output
}
