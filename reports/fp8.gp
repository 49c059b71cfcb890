# SPDX-License-Identifier: MIT
# fp8.gp: amax and scale histories of one layer's fp8 tensors over steps
# (two panels). The file has the step, then for each class its amax and
# its scale (NaN when the class was not cast at that step).
# gnuplot -e "out='fp8_x'; file='fp8_x.dat'; names='activation weight grad_output'; ttl='...'; amin=1e-3; amax=448; azero=0" fp8.gp
# amin, amax: the smallest positive and the largest amax; azero=1: some amax is exactly 0 (every
# element of the tensor zero), drawn on a row labelled 0 (common.gp's zero_axis).
load dir."common.gp"
n = words(names)
height = 640
if (!exists("amin")) amin = 1e-3
if (!exists("amax")) amax = 1e3
if (!exists("azero")) azero = 0
do for [fmt in "png svg"] {
    eval set_out(fmt)
    set multiplot layout 2,1 title ttl noenhanced
    set xlabel ""
    set ylabel "amax (largest |x|)"
    set logscale y
    set format y "10^{%L}"
    if (azero) {
        eval zero_axis(amin, amax * 2)
        plot for [i=1:n] file using 1:(pos(column(2*i))) with lines lw 1.8 dt 1 lc rgb color(i+1) title word(names, i) noenhanced, \
             for [i=1:n] file using 1:(zer(column(2*i))) with points pt 7 ps 0.5 lc rgb color(i+1) notitle
        unset arrow 9
        set ytics autofreq
        set autoscale y
    } else {
        plot for [i=1:n] file using 1:(column(2*i)) with lines lw 1.8 dt 1 lc rgb color(i+1) title word(names, i) noenhanced
    }
    set xlabel "step"
    set ylabel "scale (x is multiplied by it)"
    plot for [i=1:n] file using 1:(column(2*i+1)) with lines lw 1.8 dt 1 lc rgb color(i+1) title word(names, i) noenhanced
    unset multiplot
    unset output
}
