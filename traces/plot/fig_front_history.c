/* fig_front_history.c: front_history.{png,svg} of `hetsim optimize`, drawn
 * by optimize_front_history.gp: the makespan-energy front the search held
 * after 25, 50, 75 and 100 % of its budget (FILE.history.csv: stage,
 * evaluations,<keys>,makespan_s,energy_j[,tied_points]; one row per distinct
 * (makespan, energy), in increasing makespan within a stage; columns found by
 * name, so tied_points needs nothing here), one staircase per stage, so the reader sees
 * where the search still improved. A single-objective search has one point
 * per stage: the best so far. O(rows) to write; each stage becomes one
 * gnuplot data block (two blank lines between blocks). Rejected: a
 * hypervolume curve (needs a reference point the reader must trust; the
 * staircases show the same progress without one). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "plot_core.h"

typedef struct hist_state {
  plot_table t;
  long ci_stage, ci_ev, ci_mk, ci_e;
  bool sys; /* the energy column is energy_system_j */
} hist_state;

static int check(plot_ctx *c, void *state) {
  hist_state *st = state;
  int rc = plot_table_read(c, c->a->points, &st->t);
  if (rc) return rc;
  plot_table *t = &st->t;
  st->ci_stage = plot_col(t->col, t->ncol, "stage");
  st->ci_ev = plot_col(t->col, t->ncol, "evaluations");
  st->ci_mk = plot_col(t->col, t->ncol, "makespan_s");
  st->ci_e = plot_col(t->col, t->ncol, "energy_j");
  st->sys = st->ci_e < 0; /* --objective pareto_system: whole-system energy */
  if (st->sys) st->ci_e = plot_col(t->col, t->ncol, "energy_system_j");
  if (st->ci_stage != 0 || st->ci_ev != 1 || st->ci_mk < 0 || st->ci_e < 0)
    return plot_bad(c, "%s: line 2: not a hetsim optimize history header "
                       "(stage,evaluations,<keys>,makespan_s,energy_j or energy_system_j)",
                    c->a->points);
  if (t->nrow == 0) return plot_bad(c, "%s: no front points", c->a->points);
  return 0;
}

static int draw(plot_ctx *c, void *state, const plot_figure *fig) {
  hist_state *st = state;
  const plot_table *t = &st->t;
  FILE *d = plot_tmp_file(c, "data.dat");
  plot_cats stages = {0};
  char labels[1024] = "", evals[1024] = "";
  for (size_t r = 0; d && r < t->nrow; r++) {
    const char *s = t->row[r][st->ci_stage];
    size_t before = stages.n;
    plot_cat_index(&stages, s);
    if (stages.n != before) {
      if (before) fputs("\n\n", d);
      size_t l = strlen(labels), m = strlen(evals);
      snprintf(labels + l, sizeof labels - l, "%s%s", l ? " " : "", s);
      snprintf(evals + m, sizeof evals - m, "%s%s", m ? " " : "", t->row[r][st->ci_ev]);
    }
    fprintf(d, "%s %s\n", t->row[r][st->ci_mk], t->row[r][st->ci_e]);
  }
  int rc = 0;
  if (!plot_close_data(c, d, NULL, false)) {
    rc = 1;
  } else {
    plot_vars v;
    const char *title = t->title ? t->title : c->a->points;
    char buf[700];
    snprintf(buf, sizeof buf, "optimize: the front after each quarter of the budget, %s", title);
    plot_vars_open(c, &v, buf);
    fprintf(v.f, "\nnstages = %zu\nstage_labels = ", stages.n);
    plot_gp_str(v.f, labels);
    fputs("\nstage_evals = ", v.f);
    plot_gp_str(v.f, evals);
    fprintf(v.f, "\nenergy_label = '%s'\n",
            st->sys ? "whole-system energy (kJ)" : "device energy (kJ)");
    rc = plot_render(c, &v, fig);
  }
  plot_cats_free(&stages);
  return rc;
}

static void fini(void *state) { plot_table_free(&((hist_state *)state)->t); }

const plot_figure plot_fig_front_history = {"front_history", "optimize_front_history.gp",
                                            HS_PLOT_OPTIMIZE, sizeof(hist_state), check, draw,
                                            fini};
