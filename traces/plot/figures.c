/* figures.c: the registry of `hetsim plot` figures, in drawing order. A new
 * figure is its fig_<name>.c (a plot_figure: name, gnuplot script, source
 * kind, check-and-draw function) beside its .gp script, one line here and one
 * in the CMake source list. Rejected: discovery by naming convention (a
 * linker-section table is not portable C11). */
#include "plot_core.h"

extern const plot_figure plot_fig_pareto, plot_fig_heatmap, plot_fig_line, plot_fig_allocation,
    plot_fig_gantt, plot_fig_learning;

const plot_figure *const plot_figures[] = {
    &plot_fig_pareto,     /* sweep: energy against makespan, the Pareto front */
    &plot_fig_heatmap,    /* sweep: a metric over two grid keys */
    &plot_fig_line,       /* sweep: makespan and energy over one grid key */
    &plot_fig_allocation, /* run: samples per device per round */
    &plot_fig_gantt,      /* run: compute, comm, wait per device over rounds A-B */
    &plot_fig_learning,   /* run: loss, accuracy against time and energy, per policy */
};
const size_t plot_nfigures = sizeof plot_figures / sizeof plot_figures[0];
