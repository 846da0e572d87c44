# run_learning.gp: held-out loss and accuracy of runs that learned, against
# simulated time and against energy (2 x 2 panels), one line per run.
# `hetsim plot` sets: plot_title, datafile (one block per run, evaluated rounds
# only: time_s, energy_j, test_loss, test_accuracy; 'nan' where there is no
# accuracy), names (the runs, space-separated), acc_sets (the 1-based numbers
# of the runs that have an accuracy) and has_acc (0 when none has, as in curve
# mode: the accuracy panels then say so instead of plotting a set without points).
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set key top right noenhanced font ',9'
colors = '#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #000000 #a6761d'
set multiplot layout 2,2 title plot_title noenhanced font ',13'
set xlabel 'simulated time (s)'
set ylabel 'held-out loss'
plot for [i=1:words(names)] datafile index (i - 1) using 1:3 with linespoints \
     lc rgb word(colors, (i - 1) % 12 + 1) dt int(1 + (i - 1) / 12) pt 7 ps 0.5 lw 1.5 title word(names, i)
set xlabel 'energy (kJ)'
plot for [i=1:words(names)] datafile index (i - 1) using ($2/1000):3 with linespoints \
     lc rgb word(colors, (i - 1) % 12 + 1) dt int(1 + (i - 1) / 12) pt 7 ps 0.5 lw 1.5 title word(names, i)
if (has_acc) {
  set xlabel 'simulated time (s)'
  set ylabel 'held-out accuracy'
  plot for [s in acc_sets] datafile index (int(s) - 1) using 1:4 with linespoints \
       lc rgb word(colors, (int(s) - 1) % 12 + 1) dt int(1 + (int(s) - 1) / 12) pt 7 ps 0.5 lw 1.5 \
       title word(names, int(s))
  set xlabel 'energy (kJ)'
  plot for [s in acc_sets] datafile index (int(s) - 1) using ($2/1000):4 with linespoints \
       lc rgb word(colors, (int(s) - 1) % 12 + 1) dt int(1 + (int(s) - 1) / 12) pt 7 ps 0.5 lw 1.5 \
       title word(names, int(s))
} else {
  unset key
  set label 1 'no accuracy (curve mode has loss only)' at graph 0.5, graph 0.5 center
  set xlabel 'simulated time (s)'
  set ylabel 'held-out accuracy'
  plot [0:1] [0:1] 2 notitle
  set xlabel 'energy (kJ)'
  plot [0:1] [0:1] 2 notitle
  unset label 1
}
unset multiplot
