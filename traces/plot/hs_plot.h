/* [traces/plot -> hetsim::plot; not installed]
 * hs_plot.h: `hetsim plot`'s figures (PNG and SVG, drawn by gnuplot) of a
 * sweep or of a run folder. The command (sim/cli/cmd_plot.c) parses options
 * into hs_plot_args; this module checks the inputs, draws every figure of the
 * source's kind (registry: traces/plot/figures.c) and reports one line.
 *
 * Folder traces/plot: one fig_<name>.c per figure beside the gnuplot script
 * that gives it its look (<kind>_<name>.gp), the shared core (plot_core.c:
 * tables, categories, gnuplot scripts and the child process) and the inputs
 * shared by the figures of one kind (plot_sources.c). */
#ifndef HS_PLOT_H
#define HS_PLOT_H

#include <stdbool.h>

typedef enum hs_plot_kind { HS_PLOT_SWEEP, HS_PLOT_RUN, HS_PLOT_OPTIMIZE } hs_plot_kind;

typedef struct hs_plot_args {
  hs_plot_kind kind;
  const char *source;     /* RESULTS.csv / RESULTS.points.csv, or a run folder */
  const char *points;     /* sweep: the RESULTS.points.csv to read; optimize:
                             FILE.history.csv */
  const char *out;        /* output folder, made once the inputs are checked */
  const char *x, *y, *z, *color; /* sweep figures; NULL: defaults */
  const char *rounds;     /* run figures: "A-B" or "A"; NULL: 0-2 */
  const char *devices;    /* gantt: "a,b,..." device names; NULL: the first 64 */
  const char *gnuplot;    /* program, found on PATH when it has no '/' */
  const char *script_dir; /* folder of the .gp scripts */
  bool quiet;             /* do not list the files written */
  bool siblings;          /* learning: also every sibling run folder's curves (the
                             policies of one `hetsim compare --out DIR`) */
} hs_plot_args;

/* The message of a failed hs_plot: `code` 2 for bad input, 1 for a tool or
 * file failure; msg without "hetsim plot: " and without a newline. */
typedef struct hs_plot_error {
  int code;
  char msg[1024];
} hs_plot_error;

/* Draw every figure of args->kind into args->out. Returns 0, or the exit
 * status (1 or 2) with *err filled: nothing is drawn after a failure, and bad
 * input found by any figure leaves no figure and no output folder behind.
 * Figures print their file names (and "skipped" notes) on stdout unless
 * quiet. Temporary files live in a fresh folder under $TMPDIR (or /tmp),
 * removed at the end unless gnuplot failed (kept for inspection). */
int hs_plot(const hs_plot_args *args, hs_plot_error *err);

#endif
