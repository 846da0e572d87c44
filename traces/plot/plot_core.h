/* plot_core.h: what the figures of `hetsim plot` share (internal to
 * traces/plot): the context, a figure's descriptor and the registry, CSV
 * tables, categories, gnuplot quoting, temporary data files and rendering. */
#ifndef HS_PLOT_CORE_H
#define HS_PLOT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hs_plot.h"

/* A CSV file in memory (read with hs_csv.h): an optional leading '#' line,
 * a header, rows of exactly ncol fields; blank lines are skipped. Columns are
 * found by header name (plot_col). */
typedef struct plot_table {
  char **col;    /* column names (one block) */
  size_t ncol;
  char ***row;   /* row[r][c] (one block per row) */
  size_t nrow;
  char *title;   /* from a "# hetsim sweep" line: the scenario; else NULL */
} plot_table;

/* Distinct values in order of first appearance. */
typedef struct plot_cats {
  char **v;
  size_t n;
} plot_cats;

/* The sweep's points table and its grid keys (plot_sources.c). */
typedef struct plot_sweep_in {
  plot_table t;
  long ci_seeds, ci_mk, ci_e, ci_front; /* columns */
  long ci_mk_lo, ci_mk_hi, ci_e_lo, ci_e_hi; /* 95 % intervals; -1 in older files */
  size_t nkeys;                         /* grid keys are columns 1..nkeys */
  plot_cats *kc;                        /* kc[k]: the values of key k */
  char keys[512];                       /* "a, b" for messages */
  char title[600];                      /* "sweep of <scenario>" */
} plot_sweep_in;

typedef struct plot_ctx {
  const hs_plot_args *a;
  hs_plot_error *err;
  char tmp[512];      /* temporary folder for data and script */
  bool keep;          /* gnuplot failed: leave the script for inspection */
  plot_sweep_in sweep; /* HS_PLOT_SWEEP */
  char *run_title;     /* HS_PLOT_RUN: "<scenario>, <regime>, policy <p>" */
  void *fig_state[8];  /* per figure (registry index): what check found, for draw */
} plot_ctx;

/* A figure. check reads and checks everything it needs into its state
 * (state_size bytes, zeroed; bad input is reported here, before any output
 * exists); draw writes its data files and renders; fini (may be NULL) frees
 * what the state holds, whether or not check succeeded. check and draw
 * return 0 or an exit status with the context's error set. */
typedef struct plot_figure {
  const char *name;   /* output stem: <out>/<name>.png, .svg */
  const char *script; /* gnuplot file in the script folder */
  hs_plot_kind kind;
  size_t state_size;
  int (*check)(plot_ctx *c, void *state);
  int (*draw)(plot_ctx *c, void *state, const struct plot_figure *self);
  void (*fini)(void *state);
} plot_figure;

/* The registry (figures.c), in drawing order. */
extern const plot_figure *const plot_figures[];
extern const size_t plot_nfigures;

/* Errors: record the exit code (2 bad input, 1 tool or file) and the
 * message, and return the code. */
int plot_error(plot_ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define plot_bad(c, ...) plot_error((c), 2, __VA_ARGS__)
#define plot_fail(c, ...) plot_error((c), 1, __VA_ARGS__)

/* Tables. plot_table_read: 0 or 2 (message names the file and line). */
int plot_table_read(plot_ctx *c, const char *path, plot_table *t);
void plot_table_free(plot_table *t);
long plot_col(char **names, size_t n, const char *name); /* -1 when absent */

size_t plot_cat_index(plot_cats *c, const char *s); /* adds s when new */
void plot_cats_free(plot_cats *c);

/* gnuplot text: a single-quoted string; `VAR = 'set AXIS ("v0" 0, ...)'`. */
void plot_gp_str(FILE *f, const char *s);
void plot_gp_tics(FILE *f, const char *var, const char *axis, char **labels, size_t n);

/* A data file in the temporary folder (heap path: plot_tmp_path). */
char *plot_tmp_path(const plot_ctx *c, const char *name);
FILE *plot_tmp_file(const plot_ctx *c, const char *name);
/* Close a figure's data files: `a`, and `b` when `two` (NULL: failed to
 * open). False, with the error set, when any open or close failed. */
bool plot_close_data(plot_ctx *c, FILE *a, FILE *b, bool two);

/* The variables part of a script, built in memory; it opens with every
 * figure's two: plot_title (title) and datafile (the temporary data.dat).
 * A figure writes the rest to v->f, starting with a newline. */
typedef struct plot_vars {
  char *s;
  size_t len;
  FILE *f;
} plot_vars;
void plot_vars_open(const plot_ctx *c, plot_vars *v, const char *title);

/* Write script.gp (vars, then PNG, load the figure's script, SVG, replot),
 * run gnuplot on it and close vars. 0, or 1 with the error set. */
int plot_render(plot_ctx *c, plot_vars *vars, const plot_figure *fig);

/* A cell of column ci as a number, or fallback when ci < 0 or the cell is
 * not a finite number ("nan" when one seed gives no interval). */
double plot_num_or(char **row, long ci, double fallback);

/* Inputs shared by the figures of one kind (plot_sources.c): 0 or the code. */
int plot_sweep_open(plot_ctx *c);
void plot_sweep_close(plot_sweep_in *s);
char *plot_run_title(const char *dir);

#endif
