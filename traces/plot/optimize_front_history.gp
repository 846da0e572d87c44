# optimize_front_history.gp: the makespan-energy front `hetsim optimize` held
# after each quarter of its budget, one staircase per stage (later stages
# darker), so the reader sees where the search still found better points.
# `hetsim plot` sets: plot_title, datafile (makespan_s energy_j; one data
# block per stage, in stage order), nstages, stage_labels (percent of the
# budget per stage: "25 50 75 100"), stage_evals (distinct points by then),
# energy_label (device or whole-system energy, from the history's column).
set title plot_title noenhanced font ',12'
set xlabel 'makespan (s)'
set ylabel energy_label
set grid lc rgb '#dddddd'
set key outside top center horizontal noenhanced
set offsets graph 0.05, graph 0.05, graph 0.08, graph 0.08
shades = '#c6dbef #6baed6 #2171b5 #08306b'
plot for [i=0:nstages-1] datafile index i using 1:($2/1000) with steps lw 2 \
       lc rgb word(shades, (i % 4) + 1) notitle, \
     for [i=0:nstages-1] datafile index i using 1:($2/1000) with points pt 7 ps 1.2 \
       lc rgb word(shades, (i % 4) + 1) title sprintf('after %s %% of the budget (%s points)', \
       word(stage_labels, i + 1), word(stage_evals, i + 1))
