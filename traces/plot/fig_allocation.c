/* fig_allocation.c: allocation.{png,svg} of a run folder, drawn by
 * run_allocation.gp: samples per device per round, from devices.csv (one
 * line per device, one gnuplot block per device in order of first
 * appearance). Above MAX_DEV_LEGEND devices, when devices.csv names profiles,
 * one line per profile instead: the mean samples per device of that profile
 * in each round, labelled "<profile>(xN)" (a thousand lines cannot be told
 * apart; a dozen profiles can). Without a profile column (older folders) the
 * lines stay per device and the legend is dropped.
 * O(rows x devices) to group the rows. Rejected: a hash of device names
 * (devices.csv is written round by round, and a figure with thousands of
 * lines is unreadable anyway). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "plot_core.h"

#define MAX_DEV_LEGEND 24

typedef struct alloc_state {
  plot_table t;
  long cr, cd, cs; /* round, device, samples */
  long cp;         /* profile, -1 when absent */
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
    st->cp = plot_col(st->t.col, st->t.ncol, "profile");
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
  bool grouped = dev.n > MAX_DEV_LEGEND && st->cp >= 0;
  plot_cats lines = {0}; /* what each line is: a device, or a profile */
  size_t *members = NULL;
  if (grouped) {
    /* A device's profile from its first row; members per profile. */
    plot_cats seen = {0};
    for (size_t r = 0; r < t->nrow; r++) {
      size_t n0 = seen.n;
      plot_cat_index(&seen, t->row[r][cd]);
      if (seen.n == n0) continue;
      size_t nl = lines.n, p = plot_cat_index(&lines, t->row[r][st->cp]);
      if (lines.n > nl) { /* a new profile */
        members = hs_reallocarray(members, lines.n, sizeof *members);
        members[p] = 0;
      }
      members[p]++;
    }
    plot_cats_free(&seen);
    double *sum = hs_calloc((size_t)maxround + 1, sizeof *sum);
    size_t *cnt = hs_calloc((size_t)maxround + 1, sizeof *cnt);
    for (size_t k = 0; d && k < lines.n; k++) {
      memset(sum, 0, ((size_t)maxround + 1) * sizeof *sum);
      memset(cnt, 0, ((size_t)maxround + 1) * sizeof *cnt);
      for (size_t r = 0; r < t->nrow; r++) {
        long rr = atol(t->row[r][cr]);
        if (rr < 0 || strcmp(t->row[r][st->cp], lines.v[k])) continue;
        sum[rr] += strtod(t->row[r][cs], NULL);
        cnt[rr]++;
      }
      for (long rr = 0; rr <= maxround; rr++)
        if (cnt[rr]) fprintf(d, "%ld %.10g\n", rr, sum[rr] / (double)cnt[rr]);
      fputs("\n\n", d);
    }
    hs_free(sum);
    hs_free(cnt);
  } else {
    for (size_t k = 0; k < dev.n; k++) plot_cat_index(&lines, dev.v[k]);
    for (size_t k = 0; d && k < dev.n; k++) {
      for (size_t r = 0; r < t->nrow; r++)
        if (!strcmp(t->row[r][cd], dev.v[k])) fprintf(d, "%s %s\n", t->row[r][cr], t->row[r][cs]);
      fputs("\n\n", d);
    }
  }
  if (!plot_close_data(c, d, NULL, false)) {
    rc = 1;
  } else {
    plot_vars v;
    char tt[700];
    snprintf(tt, sizeof tt, "allocation per %s: %s", grouped ? "profile" : "device",
             c->run_title);
    plot_vars_open(c, &v, tt);
    fputs("\nnames = '", v.f);
    for (size_t k = 0; k < lines.n; k++) {
      for (const char *s = lines.v[k]; *s; s++) fputc(*s == '\'' || *s == ' ' ? '_' : *s, v.f);
      if (grouped) fprintf(v.f, "(x%zu)", members[k]);
      fputc(k + 1 < lines.n ? ' ' : '\'', v.f);
    }
    if (!lines.n) fputc('\'', v.f);
    fprintf(v.f, "\nshow_titles = %d\nnrounds = %ld\ngrouped = %d\n", lines.n <= MAX_DEV_LEGEND,
            maxround + 1, grouped);
    rc = plot_render(c, &v, fig);
  }
  plot_cats_free(&dev);
  plot_cats_free(&lines);
  hs_free(members);
  return rc;
}

static void fini(void *state) {
  alloc_state *st = state;
  plot_table_free(&st->t);
}

const plot_figure plot_fig_allocation = {"allocation", "run_allocation.gp", HS_PLOT_RUN,
                                         sizeof(alloc_state), check, draw, fini};
