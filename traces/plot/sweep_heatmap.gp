# sweep_heatmap.gp: one metric over two grid keys (cells at value indexes, so
# uneven or non-numeric values such as policy names tile evenly; tics name
# the values). `hetsim plot` sets: plot_title, datafile (x index, y index,
# value), xlabel_text, ylabel_text, zlabel_text, nx, ny, xtics_cmd,
# ytics_cmd, show_labels (1: print each cell's value), zfmt.
set title plot_title noenhanced font ',13'
set xlabel xlabel_text noenhanced
set ylabel ylabel_text noenhanced
set cblabel zlabel_text noenhanced
# One value everywhere (one cell, or a metric that does not move): give the
# colour scale a width, as gnuplot would after a warning (before the x and y
# ranges are set: stats obeys them).
stats datafile using 3 nooutput name 'Z'
if (Z_min == Z_max) {
  zpad = Z_min != 0 ? abs(Z_min) * 0.01 : 1
  set cbrange [Z_min - zpad:Z_max + zpad]
}
set xrange [-0.5:nx - 0.5]
set yrange [-0.5:ny - 0.5]
eval xtics_cmd
eval ytics_cmd
set tics out nomirror
set palette defined (0 '#fff5eb', 0.35 '#fdae6b', 0.7 '#f16913', 1 '#a63603')
unset key
# Cells as filled boxes, not `with image`, which draws nothing for a grid
# with a single value on either key (it needs 2 x 2 cells); NaN cells (no
# point there) stay white.
if (show_labels) {
  plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette, \
       datafile using 1:2:(sprintf(zfmt, $3)) with labels font ',9' tc rgb '#111111'
} else {
  plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette
}
