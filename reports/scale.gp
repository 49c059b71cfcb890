# SPDX-License-Identifier: MIT
# scale.gp: the loss scale over steps for each run with a loss scaler,
# log2 axis, with the skipped steps (inf/NaN gradients) marked by crosses.
# The file has the step, then for each run its scale and a column holding
# the scale at skipped steps only ("?" elsewhere).
# gnuplot -e "out='scale'; file='scale.dat'; names='f16-dynamic ...'; ci='2 3'; ttl='...'" scale.gp
# ci: each run's series number in the loss plot, so that a run keeps its
# colour and dash from plot to plot (default 2, 3, ...).
load dir."common.gp"
n = words(names)
if (!exists("ci")) ci = ""
cix(i) = (words(ci) >= i) ? word(ci, i) + 0 : i + 1
do for [fmt in "png svg"] {
    eval set_out(fmt)
    set title ttl noenhanced
    set xlabel "step"
    set ylabel "loss scale"
    set logscale y 2
    set format y "2^{%L}"
    plot for [i=1:n] file using 1:(column(2*i)) with steps lw 2 dt dash(cix(i)) lc rgb color(cix(i)) title word(names, i) noenhanced, \
         for [i=1:n] file using 1:(column(2*i+1)) with points pt 2 ps 1.2 lw 2 lc rgb color(cix(i)) title word(names, i)." skipped step" noenhanced
    unset output
}
