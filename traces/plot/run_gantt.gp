# run_gantt.gp: what each device did during the chosen rounds: computing,
# communicating, or waiting while on (the idle part of the synchronised
# window), from the Chrome trace of `hetsim run --trace`. `hetsim plot` sets:
# plot_title, datafile (blocks: compute, comm, wait; each line x_mid_s y
# half_width_s half_height), boundfile (round starts and the last end: t y0
# 0 height), ndev, ytics_cmd.
set title plot_title noenhanced font ',13'
set xlabel 'simulated time (s)'
set ylabel 'device'
set yrange [ndev - 0.4:-0.6]
eval ytics_cmd
set ytics noenhanced
set style fill solid 0.9 noborder
set key outside top center horizontal
set grid xtics lc rgb '#dddddd'
plot datafile index 0 using 1:2:3:4 with boxxyerror lc rgb '#1f77b4' title 'compute', \
     datafile index 1 using 1:2:3:4 with boxxyerror lc rgb '#ff7f0e' title 'communication', \
     datafile index 2 using 1:2:3:4 with boxxyerror lc rgb '#c7c7c7' title 'waiting (on, idle)', \
     boundfile using 1:2:3:4 with vectors nohead dt 2 lw 1.5 lc rgb '#222222' title 'round boundary'
