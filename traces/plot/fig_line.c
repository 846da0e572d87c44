/* fig_line.c: line.{png,svg} of a sweep over one grid key, drawn by
 * sweep_line.gp: mean makespan (left axis) and mean energy (right axis)
 * against the key's values, each with its 95 % confidence interval over seeds
 * as error bars (none for one seed or an older points file). Numeric values
 * are placed at their value; names (policies) at 0, 1, 2, ... with the names
 * as tics, in the sweep's order. The key is the one grid key with several
 * values (keys with one value, such as policy.kind under --policies
 * adaptive, do not count). Skipped, with a note, when several keys vary (the
 * heat map and the Pareto figure cover those).
 * O(points), plus an insertion sort of numeric values (a sweep's one key has
 * few). Rejected: one line per value of a second key (a figure with
 * two axes and several lines per axis is unreadable; the heat map shows it). */
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "plot_core.h"

typedef struct line_state {
  bool skip;
  size_t key;       /* the grid key drawn */
  size_t nvary;     /* keys with several values */
  bool categorical; /* the key's values are not all numbers */
} line_state;

static bool is_number(const char *s) {
  char *end;
  strtod(s, &end);
  return end != s && !*end;
}

static int check(plot_ctx *c, void *state) {
  line_state *st = state;
  const plot_sweep_in *s = &c->sweep;
  for (size_t k = 0; k < s->nkeys; k++)
    if (s->kc[k].n > 1) {
      st->key = k;
      st->nvary++;
    }
  st->skip = s->nkeys == 0 || st->nvary > 1;
  for (size_t v = 0; !st->skip && v < s->kc[st->key].n; v++)
    if (!is_number(s->kc[st->key].v[v])) st->categorical = true;
  return 0;
}

static int draw(plot_ctx *c, void *state, const plot_figure *fig) {
  const line_state *st = state;
  const plot_sweep_in *s = &c->sweep;
  const plot_table *t = &s->t;
  if (st->skip) {
    char vary[512] = ""; /* the keys that vary, not every grid key */
    for (size_t k = 0; k < s->nkeys; k++)
      if (s->kc[k].n > 1)
        snprintf(vary + strlen(vary), sizeof vary - strlen(vary), "%s%s", *vary ? ", " : "",
                 t->col[1 + k]);
    if (!c->a->quiet)
      printf("line skipped: %zu grid keys have several values (%s); a line needs one\n",
             st->nvary, vary);
    return 0;
  }
  FILE *d = plot_tmp_file(c, "data.dat");
  plot_cats xs = {0};
  /* Numbers in increasing order (a grid may list them in any order, and a
   * line through them in that order would zigzag); names as the sweep ran. */
  size_t *order = hs_malloc((t->nrow ? t->nrow : 1) * sizeof *order);
  for (size_t r = 0; r < t->nrow; r++) {
    size_t i = r;
    double x = st->categorical ? 0 : strtod(t->row[r][1 + st->key], NULL);
    while (!st->categorical && i > 0 && strtod(t->row[order[i - 1]][1 + st->key], NULL) > x) {
      order[i] = order[i - 1];
      i--;
    }
    order[i] = r;
  }
  for (size_t k = 0; d && k < t->nrow; k++) {
    size_t r = order[k];
    const char *x = t->row[r][1 + st->key];
    size_t xi = plot_cat_index(&xs, x);
    double mk = strtod(t->row[r][s->ci_mk], NULL), e = strtod(t->row[r][s->ci_e], NULL);
    if (st->categorical) fprintf(d, "%zu", xi);
    else fputs(x, d);
    fprintf(d, " %.10g %.10g %.10g %.10g %.10g %.10g\n", mk,
            plot_num_or(t->row[r], s->ci_mk_lo, mk), plot_num_or(t->row[r], s->ci_mk_hi, mk), e,
            plot_num_or(t->row[r], s->ci_e_lo, e), plot_num_or(t->row[r], s->ci_e_hi, e));
  }
  int rc = 0;
  if (!plot_close_data(c, d, NULL, false)) {
    rc = 1;
  } else {
    plot_vars v;
    plot_vars_open(c, &v, s->title);
    fputs("\nxlabel = ", v.f);
    plot_gp_str(v.f, t->col[1 + st->key]);
    fprintf(v.f, "\ncategorical = %d\nnx = %zu\n", st->categorical, xs.n);
    if (st->categorical) plot_gp_tics(v.f, "xtics_cmd", "xtics", xs.v, xs.n);
    else fputs("xtics_cmd = ''\n", v.f);
    rc = plot_render(c, &v, fig);
  }
  plot_cats_free(&xs);
  hs_free(order);
  return rc;
}

const plot_figure plot_fig_line = {"line", "sweep_line.gp", HS_PLOT_SWEEP, sizeof(line_state),
                                   check, draw, NULL};
