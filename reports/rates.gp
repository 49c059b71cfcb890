# SPDX-License-Identifier: MIT
# rates.gp: overflow and underflow fractions per tensor class over steps,
# log scale with a row for zeros (common.gp's zero_axis). The file has the
# step, then for each class its underflow and overflow fractions (0 when
# none, NaN when the class was not cast at that step).
# gnuplot -e "out='rates_x'; file='rates_x.dat'; names='activation weight ...'; useries='1 3'; oseries='3'; ttl='...'; ymin=1e-7; xmin=1; xmax=300" rates.gp
# useries and oseries: the classes (1-based, in names) whose underflow and
# overflow are drawn (the caller leaves out a series that is zero at every
# step and names it in the caption). Colours follow the class.
load dir."common.gp"
if (!exists("ymin")) ymin = 1e-7
if (!exists("useries")) useries = ""
if (!exists("oseries")) oseries = ""
nu = words(useries)
no = words(oseries)
uc(j) = (j <= nu) ? int(word(useries, j) + 0) : 1
oc(j) = (j <= no) ? int(word(oseries, j) + 0) : 1
# On the zero row each series gets its own height (underflow series first),
# so that markers of different series at one step do not hide each other.
zstep = (nu + no > 8) ? 0.8 / (nu + no) : 0.1
zk(k, v) = (v == 0) ? zrow * 10**((k - (nu + no + 1) / 2.0) * zstep) : NaN
do for [fmt in "png svg"] {
    eval set_out(fmt)
    set title ttl noenhanced
    set xlabel "step"
    set ylabel "fraction of the class's elements"
    set logscale y
    set format y "10^{%L}"
    eval zero_axis(ymin, 1.5)
    if (exists("xmax")) { pad = (xmax - xmin) * 0.015; set xrange [xmin - pad:xmax + pad] }
    set key title "solid: underflow to 0, dashed: overflow\nrow 0: exactly 0 at that step" font ",9"
    plot for [j=1:nu] file using 1:(pos(column(2*uc(j)))) with linespoints pt 7 ps 0.4 lw 1.5 dt 1 \
             lc rgb color(uc(j) + 1) title word(names, uc(j))." under" noenhanced, \
         for [j=1:no] file using 1:(pos(column(2*oc(j) + 1))) with linespoints pt 6 ps 0.5 lw 1.5 dt 2 \
             lc rgb color(oc(j) + 1) title word(names, oc(j))." over" noenhanced, \
         for [j=1:nu] file using 1:(zk(j, column(2*uc(j)))) with points pt 7 ps 0.4 \
             lc rgb color(uc(j) + 1) notitle, \
         for [j=1:no] file using 1:(zk(nu + j, column(2*oc(j) + 1))) with points pt 6 ps 0.5 \
             lc rgb color(oc(j) + 1) notitle
    unset output
}
