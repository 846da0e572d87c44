/* fig_pareto.c: pareto.{png,svg} of a sweep, drawn by sweep_pareto.gp:
 * energy against makespan (means over seeds), one point per sweep point with
 * its 95 % confidence intervals over seeds as error bars (both axes; none
 * for one seed or an older points file),
 * coloured by --color KEY (default policy.w_e, else the first grid key with
 * several values) and shaped by the first other grid key with several values
 * (a w_e x deadband sweep: one marker per deadband, named in the key; colour
 * alone could not tell them apart), with the makespan-energy Pareto front as
 * flagged in RESULTS.points.csv. Rejected: a --shape option (the second key
 * is the only sensible default, and a heatmap already picks its axes). O(points) to write, plus an insertion sort of the
 * front by makespan (the front is small; rejected: qsort for a handful). */
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "plot_core.h"

typedef struct pareto_state {
  long kcol;   /* colour key (index among the grid keys), -1: none */
  long kshape; /* shape key: the first other key with several values, -1: none */
} pareto_state;

static int check(plot_ctx *c, void *state) {
  pareto_state *st = state;
  const plot_sweep_in *s = &c->sweep;
  const char *color = c->a->color;
  if (color) {
    st->kcol = plot_col(s->t.col + 1, s->nkeys, color);
    if (st->kcol < 0)
      return plot_bad(c, "--color %s: not a grid key of this sweep (keys: %s)", color, s->keys);
  } else {
    st->kcol = plot_col(s->t.col + 1, s->nkeys, "policy.w_e");
    for (size_t k = 0; st->kcol < 0 && k < s->nkeys; k++)
      if (s->kc[k].n > 1) st->kcol = (long)k;
  }
  st->kshape = -1;
  for (size_t k = 0; st->kshape < 0 && k < s->nkeys; k++)
    if (s->kc[k].n > 1 && (long)k != st->kcol) st->kshape = (long)k;
  return 0;
}

static int draw(plot_ctx *c, void *state, const plot_figure *fig) {
  const pareto_state *st = state;
  const plot_sweep_in *s = &c->sweep;
  const plot_table *t = &s->t;
  int rc = 0;
  FILE *d = plot_tmp_file(c, "data.dat"), *fr = plot_tmp_file(c, "front.dat");
  plot_cats ccol = {0}, cshape = {0};
  double *fx = hs_malloc(t->nrow * sizeof *fx), *fy = hs_malloc(t->nrow * sizeof *fy);
  size_t nf = 0;
  for (size_t r = 0; d && r < t->nrow; r++) {
    size_t ci = st->kcol >= 0 ? plot_cat_index(&ccol, t->row[r][1 + st->kcol]) : 0;
    size_t si = st->kshape >= 0 ? plot_cat_index(&cshape, t->row[r][1 + st->kshape]) : 0;
    bool on = atoi(t->row[r][s->ci_front]) != 0;
    double mk = strtod(t->row[r][s->ci_mk], NULL), e = strtod(t->row[r][s->ci_e], NULL);
    fprintf(d, "%s %s %zu %d %.10g %.10g %.10g %.10g %zu\n", t->row[r][s->ci_mk],
            t->row[r][s->ci_e], ci, on, plot_num_or(t->row[r], s->ci_mk_lo, mk),
            plot_num_or(t->row[r], s->ci_mk_hi, mk), plot_num_or(t->row[r], s->ci_e_lo, e),
            plot_num_or(t->row[r], s->ci_e_hi, e), si);
    if (on) {
      double x = strtod(t->row[r][s->ci_mk], NULL), y = strtod(t->row[r][s->ci_e], NULL);
      size_t i = nf++;
      while (i > 0 && (fx[i - 1] > x || (fx[i - 1] == x && fy[i - 1] > y))) {
        fx[i] = fx[i - 1];
        fy[i] = fy[i - 1];
        i--;
      }
      fx[i] = x;
      fy[i] = y;
    }
  }
  for (size_t i = 0; fr && i < nf; i++) fprintf(fr, "%.10g %.10g\n", fx[i], fy[i]);
  hs_free(fx);
  hs_free(fy);
  if (!plot_close_data(c, d, fr, true)) {
    rc = 1;
  } else {
    plot_vars v;
    plot_vars_open(c, &v, s->title);
    char *fp = plot_tmp_path(c, "front.dat");
    fputs("\nfrontfile = ", v.f);
    plot_gp_str(v.f, fp);
    fputs("\ncolorlabel = ", v.f);
    plot_gp_str(v.f, st->kcol >= 0 ? t->col[1 + st->kcol] : "");
    bool categorical = false;
    for (size_t k = 0; k < ccol.n; k++) {
      char *end;
      strtod(ccol.v[k], &end);
      if (end == ccol.v[k] || *end) categorical = true;
    }
    fprintf(v.f, "\nncolors = %zu\ncategorical = %d\n", ccol.n ? ccol.n : 1, categorical);
    if (ccol.n) plot_gp_tics(v.f, "cbtics_cmd", "cbtics", ccol.v, ccol.n);
    else fputs("cbtics_cmd = ''\n", v.f);
    fputs("shapelabel = ", v.f);
    plot_gp_str(v.f, st->kshape >= 0 ? t->col[1 + st->kshape] : "");
    fprintf(v.f, "\nnshapes = %zu\narray shapename[%zu]\n", cshape.n, cshape.n ? cshape.n : 1);
    for (size_t k = 0; k < cshape.n; k++) {
      fprintf(v.f, "shapename[%zu] = ", k + 1);
      plot_gp_str(v.f, cshape.v[k]);
      fputc('\n', v.f);
    }
    rc = plot_render(c, &v, fig);
    hs_free(fp);
  }
  plot_cats_free(&ccol);
  plot_cats_free(&cshape);
  return rc;
}

const plot_figure plot_fig_pareto = {"pareto", "sweep_pareto.gp", HS_PLOT_SWEEP,
                                     sizeof(pareto_state), check, draw, NULL};
