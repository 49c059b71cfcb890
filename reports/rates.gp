# SPDX-License-Identifier: MIT
# rates.gp: overflow and underflow fractions per tensor class over steps,
# log scale. The file has the step, then for each class its underflow and
# overflow fractions (zeros written as "?": a log axis cannot show them).
# gnuplot -e "out='rates_x'; file='rates_x.dat'; names='activation weight ...'; ttl='...'; ymin=1e-7; xmin=1; xmax=300; none=0" rates.gp
# (none=1: nothing to draw; the axes and a note are drawn instead)
load dir."common.gp"
n = words(names)
if (!exists("ymin")) ymin = 1e-7
if (!exists("none")) none = 0
do for [fmt in "png svg"] {
    eval set_out(fmt)
    set title ttl noenhanced
    set xlabel "step"
    set ylabel "fraction of the class's elements"
    set logscale y
    set format y "10^{%L}"
    set yrange [ymin:1.5]
    if (exists("xmax")) { set xrange [xmin:xmax] }
    if (none) { set label 1 "no element of any class overflowed or underflowed" at graph 0.5, graph 0.5 center font ",12" } else { unset label 1 }
    set key title "solid: underflow to 0, dashed: overflow" font ",9"
    plot for [i=1:n] file using 1:(column(2*i)) with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb color(i+1) title word(names, i)." under" noenhanced, \
         for [i=1:n] file using 1:(column(2*i+1)) with linespoints pt 6 ps 0.5 lw 1.5 dt 2 lc rgb color(i+1) title word(names, i)." over" noenhanced
    unset output
}
