# sweep_pareto.gp: energy against makespan, one point per sweep point (means
# over seeds), coloured by one grid key and shaped by another, with the makespan-energy Pareto front
# (both minimised) drawn as the staircase that bounds what is attainable.
# `hetsim plot` sets, before loading this: plot_title, datafile (makespan_s,
# energy_j, colour index, pareto flag, makespan 95 % CI low, high, energy
# low, high: the mean itself when there is no interval, shape index), frontfile
# (the front, by makespan), colorlabel, ncolors, cbtics_cmd (a `set cbtics (...)`
# naming each colour), categorical (1: the colour key's values are names, not
# numbers), shapelabel, nshapes and shapename[1..nshapes] (the shape key's
# values; nshapes <= 1: one marker for every point).
set title plot_title noenhanced font ',13'
set xlabel 'makespan (s), mean over seeds'
set ylabel 'energy (kJ), mean over seeds'
set grid lc rgb '#dddddd'
set key outside top center horizontal noenhanced
set offsets graph 0.04, graph 0.04, graph 0.06, graph 0.06
set cblabel colorlabel noenhanced
# Numbers (w_e): an ordered palette, dark blue to dark gold, every colour
# visible on white. Names (policies): one distinct hue per name, each as a
# flat step of the palette (repeated positions make the steps sharp).
if (categorical) {
  qual = '#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf'
  pal = 'set palette defined ('
  do for [k=0:(ncolors > 1 ? ncolors : 1) - 1] {
    c = word(qual, k % 10 + 1)
    pal = pal . sprintf("%s%d '%s', %d '%s'", (k ? ', ' : ''), k, c, k + 1, c)
  }
  eval pal . ')'
} else {
  set palette defined (0 '#0d0887', 0.3 '#7e03a8', 0.55 '#cc4778', 0.8 '#f0742f', 1 '#c99a00')
}
set rmargin 18
set cbrange [-0.5:(ncolors > 1 ? ncolors - 0.5 : 0.5)]
set palette maxcolors (ncolors > 1 ? ncolors : 2)
eval cbtics_cmd
if (ncolors <= 1) { unset colorbox }
# All points at one makespan or one energy (a single point, a grid with one
# value): give that axis a width, as gnuplot would after a warning.
stats datafile using 1 nooutput name 'MX'
stats datafile using ($2/1000) nooutput name 'MY'
if (MX_min == MX_max) {
  xpad = MX_min != 0 ? abs(MX_min) * 0.01 : 1
  set xrange [MX_min - xpad:MX_max + xpad]
}
if (MY_min == MY_max) {
  ypad = MY_min != 0 ? abs(MY_min) * 0.01 : 1
  set yrange [MY_min - ypad:MY_max + ypad]
}
# One marker per value of the shape key, each named in the key (filled
# circle, square, triangle, diamond, inverted triangle, pentagon, then again).
ptypes = '7 5 9 13 11 15'
if (nshapes > 1) {
  points = "for [k=1:nshapes] datafile using 1:($9 == k - 1 ? $2/1000 : NaN):3 with points pt int(word(ptypes, (k - 1) % 6 + 1)) ps 1.6 lc palette title sprintf('%s = %s', shapelabel, shapename[k])"
} else {
  points = "datafile using 1:($2/1000):3 with points pt 7 ps 1.6 lc palette title 'grid point'"
}
plot frontfile using 1:($2/1000) with steps lw 2 lc rgb '#222222' title 'Pareto front', \
     datafile using 1:($2/1000):5:6:($7/1000):($8/1000) with xyerrorbars pt -1 lw 1 \
       lc rgb '#999999' title '95 % CI over seeds', \
     @points, \
     frontfile using 1:($2/1000) with points pt 6 ps 2.4 lw 2 lc rgb '#222222' title 'on the front'
