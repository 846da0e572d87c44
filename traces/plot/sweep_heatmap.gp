# sweep_heatmap.gp: one metric over two grid keys (cells at value indexes, so
# uneven or non-numeric values such as policy names tile evenly; tics name
# the values). `hetsim plot` sets: plot_title, datafile (x index, y index,
# value), xlabel_text, ylabel_text, zlabel_text, nx, ny, xtics_cmd,
# ytics_cmd, show_labels (1: print each cell's value), zfmt.
set title plot_title noenhanced font ',13'
set xlabel xlabel_text noenhanced
set ylabel ylabel_text noenhanced
set cblabel zlabel_text noenhanced
set xrange [-0.5:nx - 0.5]
set yrange [-0.5:ny - 0.5]
eval xtics_cmd
eval ytics_cmd
set tics out nomirror
set palette defined (0 '#fff5eb', 0.35 '#fdae6b', 0.7 '#f16913', 1 '#a63603')
unset key
if (show_labels) {
  plot datafile using 1:2:3 with image, \
       datafile using 1:2:(sprintf(zfmt, $3)) with labels font ',9' tc rgb '#111111'
} else {
  plot datafile using 1:2:3 with image
}
