/* fig_heatmap.c: heatmap.{png,svg} of a sweep, drawn by sweep_heatmap.gp:
 * --z COLUMN of RESULTS.points.csv (default energy_j_mean) over the grid
 * keys --x and --y (default policy.w_e and policy.deadband, else the first
 * keys with several values, else any two). A cell averages the points that
 * differ in the other keys only; a cell no point reaches is NaN (drawn
 * empty). Skipped, with a note, when the sweep has fewer than two keys.
 * O(points + nx * ny). Rejected: gnuplot's own averaging (`smooth unique`
 * works on one axis only), and interpolating empty cells (a value no point
 * produced would pass for a result). */
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "plot_core.h"

typedef struct heatmap_state {
  long kx, ky; /* grid key indexes, -1: none */
  long cz;     /* column of z */
  const char *zname;
} heatmap_state;

static int check(plot_ctx *c, void *state) {
  heatmap_state *st = state;
  const plot_sweep_in *s = &c->sweep;
  const hs_plot_args *a = c->a;
  char **keys = s->t.col + 1;
  long kx = -1, ky = -1;
  if (a->x && (kx = plot_col(keys, s->nkeys, a->x)) < 0)
    return plot_bad(c, "--x %s: not a grid key of this sweep (keys: %s)", a->x, s->keys);
  if (a->y && (ky = plot_col(keys, s->nkeys, a->y)) < 0)
    return plot_bad(c, "--y %s: not a grid key of this sweep (keys: %s)", a->y, s->keys);
  if (kx < 0) {
    kx = plot_col(keys, s->nkeys, "policy.w_e");
    for (size_t k = 0; kx < 0 && k < s->nkeys; k++)
      if (s->kc[k].n > 1 && (long)k != ky) kx = (long)k;
    for (size_t k = 0; kx < 0 && k < s->nkeys; k++)
      if ((long)k != ky) kx = (long)k;
  }
  if (ky < 0) {
    if (kx != plot_col(keys, s->nkeys, "policy.deadband"))
      ky = plot_col(keys, s->nkeys, "policy.deadband");
    for (size_t k = 0; ky < 0 && k < s->nkeys; k++)
      if (s->kc[k].n > 1 && (long)k != kx) ky = (long)k;
    for (size_t k = 0; ky < 0 && k < s->nkeys; k++)
      if ((long)k != kx) ky = (long)k;
  }
  if (kx >= 0 && kx == ky) return plot_bad(c, "--x and --y: the same key %s", keys[kx]);
  st->kx = kx;
  st->ky = ky;
  st->zname = a->z ? a->z : "energy_j_mean";
  st->cz = plot_col(s->t.col, s->t.ncol, st->zname);
  if (st->cz <= s->ci_seeds || st->cz == s->ci_front)
    return plot_bad(c, "--z %s: not a metric column of %s (e.g. energy_j_mean, makespan_s_median)",
                    st->zname, a->points);
  return 0;
}

/* Axis title: the column with its unit, known from the metric's name. */
static const char *unit_label(const char *col, char *buf, size_t cap) {
  const char *u = "";
  if (strstr(col, "makespan_s")) u = " (s)";
  else if (strstr(col, "_j_") || strstr(col, "energy_j")) u = " (J)";
  else if (strstr(col, "compute_cv")) u = " (dimensionless)";
  else if (strstr(col, "wait_fraction")) u = " (fraction of device-time)";
  snprintf(buf, cap, "%s%s", col, u);
  return buf;
}

static int draw(plot_ctx *c, void *state, const plot_figure *fig) {
  const heatmap_state *st = state;
  plot_sweep_in *s = &c->sweep;
  const plot_table *t = &s->t;
  long kx = st->kx, ky = st->ky;
  if (kx < 0 || ky < 0) {
    if (!c->a->quiet)
      printf("heatmap skipped: the sweep has fewer than two grid keys (%s)\n", s->keys);
    return 0;
  }
  int rc = 0;
  size_t nx = s->kc[kx].n, ny = s->kc[ky].n;
  double *sum = hs_calloc(nx * ny, sizeof *sum);
  size_t *cnt = hs_calloc(nx * ny, sizeof *cnt);
  for (size_t r = 0; r < t->nrow; r++) {
    size_t ix = plot_cat_index(&s->kc[kx], t->row[r][1 + kx]);
    size_t iy = plot_cat_index(&s->kc[ky], t->row[r][1 + ky]);
    sum[ix * ny + iy] += strtod(t->row[r][st->cz], NULL);
    cnt[ix * ny + iy]++;
  }
  FILE *d = plot_tmp_file(c, "data.dat");
  for (size_t ix = 0; d && ix < nx; ix++) {
    for (size_t iy = 0; iy < ny; iy++) {
      if (cnt[ix * ny + iy])
        fprintf(d, "%zu %zu %.10g\n", ix, iy, sum[ix * ny + iy] / (double)cnt[ix * ny + iy]);
      else
        fprintf(d, "%zu %zu NaN\n", ix, iy);
    }
    fputc('\n', d);
  }
  hs_free(sum);
  hs_free(cnt);
  if (!plot_close_data(c, d, NULL, false)) {
    rc = 1;
  } else {
    plot_vars v;
    char zl[200], ht[800];
    bool averaged = s->nkeys > 2;
    snprintf(ht, sizeof ht, "%s: %s%s", s->title, st->zname,
             averaged ? " (cells average the other grid keys)" : "");
    plot_vars_open(c, &v, ht);
    fputs("\nxlabel_text = ", v.f);
    plot_gp_str(v.f, t->col[1 + kx]);
    fputs("\nylabel_text = ", v.f);
    plot_gp_str(v.f, t->col[1 + ky]);
    fputs("\nzlabel_text = ", v.f);
    plot_gp_str(v.f, unit_label(st->zname, zl, sizeof zl));
    fprintf(v.f, "\nnx = %zu\nny = %zu\nshow_labels = %d\nzfmt = '%%.4g'\n", nx, ny,
            nx * ny <= 120);
    plot_gp_tics(v.f, "xtics_cmd", "xtics", s->kc[kx].v, nx);
    plot_gp_tics(v.f, "ytics_cmd", "ytics", s->kc[ky].v, ny);
    rc = plot_render(c, &v, fig);
  }
  return rc;
}

const plot_figure plot_fig_heatmap = {"heatmap", "sweep_heatmap.gp", HS_PLOT_SWEEP,
                                      sizeof(heatmap_state), check, draw, NULL};
