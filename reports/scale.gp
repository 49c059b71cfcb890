# SPDX-License-Identifier: MIT
# scale.gp: the loss scale over steps for each run with a loss scaler,
# log2 axis, with the skipped steps (inf/NaN gradients) marked by crosses.
# The file has the step, then for each run its scale and a column holding
# the scale at skipped steps only ("?" elsewhere).
# gnuplot -e "out='scale'; file='scale.dat'; names='f16-dynamic ...'; ttl='...'" scale.gp
load dir."common.gp"
n = words(names)
do for [fmt in "png svg"] {
    eval set_out(fmt)
    set title ttl noenhanced
    set xlabel "step"
    set ylabel "loss scale"
    set logscale y 2
    set format y "2^{%L}"
    plot for [i=1:n] file using 1:(column(2*i)) with steps lw 2 dt dash(i+1) lc rgb color(i+1) title word(names, i) noenhanced, \
         for [i=1:n] file using 1:(column(2*i+1)) with points pt 2 ps 1.2 lw 2 lc rgb color(i+1) title word(names, i)." skipped step" noenhanced
    unset output
}
