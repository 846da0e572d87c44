/* fig_allocation.c: allocation.{png,svg} of a run folder, drawn by
 * run_allocation.gp: samples per device per round, from devices.csv (one
 * line per device, one gnuplot block per device in order of first
 * appearance). The legend names devices only up to MAX_DEV_LEGEND of them.
 * O(rows x devices) to group the rows. Rejected: a hash of device names
 * (devices.csv is written round by round, and a figure with thousands of
 * lines is unreadable anyway). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hs_alloc.h"
#include "hs_util.h"
#include "plot_core.h"

#define MAX_DEV_LEGEND 24

typedef struct alloc_state {
  plot_table t;
  long cr, cd, cs; /* round, device, samples */
} alloc_state;

static int check(plot_ctx *c, void *state) {
  alloc_state *st = state;
  char *p = hs_path_join(c->a->source, "devices.csv");
  int rc = access(p, R_OK) ? plot_bad(c, "%s: cannot read (is %s a folder written by hetsim run "
                                         "--out?)", p, c->a->source)
                           : plot_table_read(c, p, &st->t);
  if (!rc) {
    st->cr = plot_col(st->t.col, st->t.ncol, "round");
    st->cd = plot_col(st->t.col, st->t.ncol, "device");
    st->cs = plot_col(st->t.col, st->t.ncol, "samples");
    if (st->cr < 0 || st->cd < 0 || st->cs < 0)
      rc = plot_bad(c, "%s: line 1: expected the columns round, device, samples", p);
  }
  hs_free(p);
  return rc;
}

static int draw(plot_ctx *c, void *state, const plot_figure *fig) {
  const alloc_state *st = state;
  const plot_table *t = &st->t;
  long cr = st->cr, cd = st->cd, cs = st->cs;
  int rc = 0;
  plot_cats dev = {0};
  long maxround = 0;
  for (size_t r = 0; r < t->nrow; r++) {
    plot_cat_index(&dev, t->row[r][cd]);
    long rr = atol(t->row[r][cr]);
    if (rr > maxround) maxround = rr;
  }
  FILE *d = plot_tmp_file(c, "data.dat");
  for (size_t k = 0; d && k < dev.n; k++) {
    for (size_t r = 0; r < t->nrow; r++)
      if (!strcmp(t->row[r][cd], dev.v[k])) fprintf(d, "%s %s\n", t->row[r][cr], t->row[r][cs]);
    fputs("\n\n", d);
  }
  if (!plot_close_data(c, d, NULL, false)) {
    rc = 1;
  } else {
    plot_vars v;
    char tt[700];
    snprintf(tt, sizeof tt, "allocation per device: %s", c->run_title);
    plot_vars_open(c, &v, tt);
    fputs("\nnames = '", v.f);
    for (size_t k = 0; k < dev.n; k++) {
      for (const char *s = dev.v[k]; *s; s++) fputc(*s == '\'' || *s == ' ' ? '_' : *s, v.f);
      fputc(k + 1 < dev.n ? ' ' : '\'', v.f);
    }
    if (!dev.n) fputc('\'', v.f);
    fprintf(v.f, "\nshow_titles = %d\nnrounds = %ld\n", dev.n <= MAX_DEV_LEGEND, maxround + 1);
    rc = plot_render(c, &v, fig);
  }
  plot_cats_free(&dev);
  return rc;
}

static void fini(void *state) {
  alloc_state *st = state;
  plot_table_free(&st->t);
}

const plot_figure plot_fig_allocation = {"allocation", "run_allocation.gp", HS_PLOT_RUN,
                                         sizeof(alloc_state), check, draw, fini};
