# sweep_line.gp: a sweep over one grid key: mean makespan (left axis) and mean
# energy (right axis) against the key's values, with 95 % confidence
# intervals over seeds as error bars. `hetsim plot` sets: plot_title,
# datafile (x, makespan mean, low, high, energy mean, low, high; x is the
# value, or 0, 1, ... for names), xlabel, categorical, nx, xtics_cmd.
set title plot_title noenhanced font ',13'
set xlabel xlabel noenhanced
set ylabel 'makespan (s), mean over seeds'
set y2label 'energy (kJ), mean over seeds'
set ytics nomirror tc rgb '#1f77b4'
set y2tics tc rgb '#d62728'
set grid lc rgb '#dddddd'
set key outside top center horizontal
set offsets graph 0.04, graph 0.04, graph 0.08, graph 0.08
if (categorical) { eval xtics_cmd; set xrange [-0.5:nx - 0.5] }
# Constant columns (one value, equal means): give that axis a width, as
# gnuplot would after a warning. Every stats runs before any range is set
# (stats honours the current ranges).
stats datafile using 1 nooutput name 'X'
stats datafile using 2 nooutput name 'M'
stats datafile using ($5/1000) nooutput name 'E'
if (!categorical && X_min == X_max) {
  xpad = X_min != 0 ? abs(X_min) * 0.1 : 1
  set xrange [X_min - xpad:X_max + xpad]
}
if (M_min == M_max) {
  mpad = M_min != 0 ? abs(M_min) * 0.01 : 1
  set yrange [M_min - mpad:M_max + mpad]
}
if (E_min == E_max) {
  epad = E_min != 0 ? abs(E_min) * 0.01 : 1
  set y2range [E_min - epad:E_max + epad]
}
plot datafile using 1:2:3:4 with yerrorlines axes x1y1 lw 2 pt 7 lc rgb '#1f77b4' \
       title 'makespan (95 % CI)', \
     datafile using 1:($5/1000):($6/1000):($7/1000) with yerrorlines axes x1y2 lw 2 pt 5 \
       dt 2 lc rgb '#d62728' title 'energy (95 % CI)'
