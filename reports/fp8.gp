# SPDX-License-Identifier: MIT
# fp8.gp: amax and scale histories of one layer's fp8 tensors over steps
# (two panels). The file has the step, then for each class its amax and
# its scale.
# gnuplot -e "out='fp8_x'; file='fp8_x.dat'; names='activation weight grad_output'; ttl='...'" fp8.gp
load dir."common.gp"
n = words(names)
height = 640
do for [fmt in "png svg"] {
    eval set_out(fmt)
    set multiplot layout 2,1 title ttl noenhanced
    set xlabel ""
    set ylabel "amax (largest |x|)"
    set logscale y
    set format y "10^{%L}"
    plot for [i=1:n] file using 1:(column(2*i)) with lines lw 1.8 dt 1 lc rgb color(i+1) title word(names, i) noenhanced
    set xlabel "step"
    set ylabel "scale (x is multiplied by it)"
    plot for [i=1:n] file using 1:(column(2*i+1)) with lines lw 1.8 dt 1 lc rgb color(i+1) title word(names, i) noenhanced
    unset multiplot
    unset output
}
