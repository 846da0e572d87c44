# run_allocation.gp: the samples each device was given, round by round (what
# the controller decided). `hetsim plot` sets: plot_title, datafile (one
# block per device: round, samples), names (device names, space-separated),
# show_titles (0 when there are too many devices for a legend), grouped (1:
# the blocks are profiles, "<profile>(xN)", each the mean per device).
set title plot_title noenhanced font ',13'
set xlabel 'round'
set ylabel 'samples allocated (samples per round)'
if (grouped) { set ylabel 'mean samples allocated per device of the profile (per round)' }
set grid lc rgb '#dddddd'
set key outside right top noenhanced
set xtics 1
if (nrounds > 25) { set xtics autofreq }
# One round, or one share for everyone (the equal policy on equal budgets):
# give that axis a width, as gnuplot would after a warning.
if (nrounds <= 1) { set xrange [-0.5:0.5] }
stats datafile using 2 nooutput name 'S'
if (S_min == S_max) {
  spad = S_min != 0 ? abs(S_min) * 0.01 : 1
  set yrange [S_min - spad:S_max + spad]
}
# 12 distinct colours, then the same colours dashed, so no two legend entries
# of up to 24 devices look alike.
colors = '#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #000000 #a6761d'
plot for [i=1:words(names)] datafile index (i - 1) using 1:2 with linespoints \
     lc rgb word(colors, (i - 1) % 12 + 1) dt int(1 + (i - 1) / 12) pt int(6 + (i - 1) / 12) \
     ps 0.7 lw 1.5 title (show_titles ? word(names, i) : '')
