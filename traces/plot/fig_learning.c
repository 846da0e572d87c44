/* fig_learning.c: learning.{png,svg} of a run folder whose run learned
 * (issue 10), drawn by run_learning.gp: held-out loss and accuracy against
 * simulated time and against energy, one line per run.
 *
 * Lines: the run folder itself; with --siblings also every sibling folder
 * (the same parent) that holds a learning.csv: `hetsim compare --out DIR`
 * writes DIR/<policy>/, so plotting one of them with --siblings draws every
 * policy of that comparison; the legend is the folder name (the policy,
 * under compare). Folders in name order. Siblings are asked for, never
 * assumed: runs kept side by side under one folder are often unrelated (a
 * 15 ms GPU run beside a 100k-device curve run), and one figure of both
 * squashes one of them at x = 0. A run folder without learning.csv
 * (learning off) skips the figure with a note. Each learning.csv is checked
 * (columns by name) before anything is drawn. Rows with no evaluation (an
 * empty or nan test loss) are left out of the data; the accuracy panels are
 * show only the runs that have an accuracy (curve mode has none), and none
 * at all when no run has one, so gnuplot never meets a data set without
 * points. O(rows) per folder.
 * Rejected: a new source kind for comparison folders (every other run figure
 * would then need to say what it does with one). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "plot_core.h"

#define MAX_LINES 24

typedef struct learn_state {
  plot_table t[MAX_LINES];
  char *name[MAX_LINES];
  size_t n;
  bool skip;
} learn_state;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *const cols[] = {"time_s", "energy_j", "test_loss", "test_accuracy"};

static int add(plot_ctx *c, learn_state *st, const char *dir, const char *name) {
  char *p = hs_path_join(dir, "learning.csv");
  int rc = plot_table_read(c, p, &st->t[st->n]);
  for (size_t k = 0; !rc && k < 4; k++)
    if (plot_col(st->t[st->n].col, st->t[st->n].ncol, cols[k]) < 0)
      rc = plot_bad(c, "%s: line 1: expected the column %s", p, cols[k]);
  hs_free(p);
  st->name[st->n++] = hs_strdup(name);
  return rc;
}

static int check(plot_ctx *c, void *state) {
  learn_state *st = state;
  const char *src = c->a->source;
  char *own = hs_path_join(src, "learning.csv");
  bool have = access(own, R_OK) == 0;
  hs_free(own);
  if (!have) {
    st->skip = true;
    return 0;
  }
  /* the parent folder and this folder's own name */
  char *copy = hs_strdup(src);
  size_t len = strlen(copy);
  while (len > 1 && copy[len - 1] == '/') copy[--len] = '\0';
  char *slash = strrchr(copy, '/');
  const char *base = slash ? slash + 1 : copy;
  char *parent = slash ? (slash == copy ? hs_strdup("/") : hs_strdup(copy)) : hs_strdup(".");
  if (slash && slash != copy) parent[slash - copy] = '\0';
  char *names[MAX_LINES];
  size_t nn = 0;
  DIR *d = c->a->siblings ? opendir(parent) : NULL;
  for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, base) || nn + 1 >= MAX_LINES) continue;
    char *sub = hs_path_join(parent, e->d_name);
    char *f = hs_path_join(sub, "learning.csv");
    if (access(f, R_OK) == 0) names[nn++] = hs_strdup(e->d_name);
    hs_free(f);
    hs_free(sub);
  }
  if (d) closedir(d);
  names[nn++] = hs_strdup(base);
  qsort(names, nn, sizeof *names, cmp_str);
  int rc = 0;
  for (size_t k = 0; k < nn; k++) {
    char *sub = strcmp(names[k], base) ? hs_path_join(parent, names[k]) : hs_strdup(src);
    if (!rc) rc = add(c, st, sub, names[k]);
    hs_free(sub);
    hs_free(names[k]);
  }
  hs_free(parent);
  hs_free(copy);
  return rc;
}

static int draw(plot_ctx *c, void *state, const plot_figure *fig) {
  learn_state *st = state;
  if (st->skip) {
    if (!c->a->quiet) printf("learning skipped: no learning.csv (the run did not learn)\n");
    return 0;
  }
  /* Only the runs with at least one evaluated row get a data block and a
   * legend entry, in the same order. */
  bool drawn[MAX_LINES] = {false}, acc_of[MAX_LINES] = {false};
  bool has_acc = false;
  size_t ndrawn = 0;
  FILE *d = plot_tmp_file(c, "data.dat");
  for (size_t k = 0; d && k < st->n; k++) {
    const plot_table *t = &st->t[k];
    long ci[4];
    for (size_t j = 0; j < 4; j++) ci[j] = plot_col(t->col, t->ncol, cols[j]);
    for (size_t r = 0; r < t->nrow; r++) {
      char **row = t->row[r];
      if (isnan(plot_num_or(row, ci[2], NAN))) continue; /* not evaluated this round */
      bool acc = !isnan(plot_num_or(row, ci[3], NAN));
      has_acc = has_acc || acc;
      acc_of[k] = acc_of[k] || acc;
      fprintf(d, "%s %s %s %s\n", row[ci[0]], row[ci[1]], row[ci[2]], acc ? row[ci[3]] : "nan");
      drawn[k] = true;
    }
    if (drawn[k]) {
      fputs("\n\n", d);
      ndrawn++;
    } else if (!c->a->quiet) {
      printf("learning: %s left out (no evaluated round)\n", st->name[k]);
    }
  }
  if (d && !ndrawn) {
    fclose(d);
    if (!c->a->quiet) printf("learning skipped: no evaluated round in learning.csv\n");
    return 0;
  }
  if (!plot_close_data(c, d, NULL, false)) return 1;
  plot_vars v;
  char tt[700];
  /* Several runs: the title names the scenario and regime, the legend
   * the runs (the policies, under compare). */
  const char *cut = ndrawn > 1 ? strstr(c->run_title, ", policy ") : NULL;
  int keep = cut ? (int)(cut - c->run_title) : (int)strlen(c->run_title);
  snprintf(tt, sizeof tt, "learning: %.*s", keep, c->run_title);
  plot_vars_open(c, &v, tt);
  fputs("\nnames = '", v.f);
  size_t written = 0;
  for (size_t k = 0; k < st->n; k++) {
    if (!drawn[k]) continue;
    for (const char *s = st->name[k]; *s; s++) fputc(*s == '\'' || *s == ' ' ? '_' : *s, v.f);
    fputc(++written < ndrawn ? ' ' : '\'', v.f);
  }
  fputc('\n', v.f);
  fprintf(v.f, "has_acc = %d\nacc_sets = '", has_acc ? 1 : 0);
  for (size_t k = 0, i = 0, first = 1; k < st->n; k++) {
    if (!drawn[k]) continue;
    i++;
    if (!acc_of[k]) continue;
    fprintf(v.f, "%s%zu", first ? "" : " ", i);
    first = 0;
  }
  fputs("'\n", v.f);
  return plot_render(c, &v, fig);
}

static void fini(void *state) {
  learn_state *st = state;
  for (size_t k = 0; k < st->n; k++) {
    plot_table_free(&st->t[k]);
    hs_free(st->name[k]);
  }
}

const plot_figure plot_fig_learning = {"learning", "run_learning.gp", HS_PLOT_RUN,
                                       sizeof(learn_state), check, draw, fini};
