/* plot_sources.c: the inputs that all figures of one kind share.
 *
 * Sweep: the per-point file (RESULTS.points.csv) read once into a table, its
 * header checked (point,<keys>,seeds,...,pareto_front), the distinct values of
 * every grid key in order of first appearance (O(rows x keys x values)), and
 * the title, and the optional 95 % interval columns (older points files
 * lack them: the figures then draw no bars). Run: the title, from summary.json when it can be read (a run
 * folder without one is still drawn, titled by its path). Rejected: each
 * sweep figure reading the points file itself (two reads, two places that
 * check the header and could disagree). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "plot_core.h"

int plot_sweep_open(plot_ctx *c) {
  plot_sweep_in *s = &c->sweep;
  const char *pp = c->a->points;
  if (access(pp, R_OK) != 0)
    return plot_bad(c, "%s: cannot read (%s; a sweep writes it when every row is done: run it "
                       "again with --resume)", pp, strerror(errno));
  int rc = plot_table_read(c, pp, &s->t);
  if (rc) return rc;
  plot_table *t = &s->t;
  s->ci_seeds = plot_col(t->col, t->ncol, "seeds");
  s->ci_mk = plot_col(t->col, t->ncol, "makespan_s_mean");
  s->ci_e = plot_col(t->col, t->ncol, "energy_j_mean");
  s->ci_front = plot_col(t->col, t->ncol, "pareto_front");
  s->ci_mk_lo = plot_col(t->col, t->ncol, "makespan_s_ci95_lo");
  s->ci_mk_hi = plot_col(t->col, t->ncol, "makespan_s_ci95_hi");
  s->ci_e_lo = plot_col(t->col, t->ncol, "energy_j_ci95_lo");
  s->ci_e_hi = plot_col(t->col, t->ncol, "energy_j_ci95_hi");
  if (s->ci_seeds < 1 || s->ci_mk < 0 || s->ci_e < 0 || s->ci_front < 0 ||
      strcmp(t->col[0], "point"))
    return plot_bad(c, "%s: line 2: not a hetsim sweep points header (point,<keys>,seeds,...)",
                    pp);
  s->nkeys = (size_t)s->ci_seeds - 1;
  s->kc = hs_calloc(s->nkeys + 1, sizeof *s->kc);
  for (size_t r = 0; r < t->nrow; r++)
    for (size_t k = 0; k < s->nkeys; k++) plot_cat_index(&s->kc[k], t->row[r][1 + k]);
  s->keys[0] = '\0';
  for (size_t k = 0; k < s->nkeys; k++)
    snprintf(s->keys + strlen(s->keys), sizeof s->keys - strlen(s->keys), "%s%s", k ? ", " : "",
             t->col[1 + k]);
  snprintf(s->title, sizeof s->title, "sweep of %s", t->title ? t->title : pp);
  return 0;
}

double plot_num_or(char **row, long ci, double fallback) {
  if (ci < 0) return fallback;
  char *end;
  double v = strtod(row[ci], &end);
  return *row[ci] && !*end && isfinite(v) ? v : fallback;
}

void plot_sweep_close(plot_sweep_in *s) {
  for (size_t k = 0; s->kc && k < s->nkeys; k++) plot_cats_free(&s->kc[k]);
  hs_free(s->kc);
  plot_table_free(&s->t);
  memset(s, 0, sizeof *s);
}

char *plot_run_title(const char *dir) {
  char *p = hs_path_join(dir, "summary.json");
  char *text = hs_read_file(p, NULL, &(hs_error){0});
  hs_free(p);
  char buf[512];
  snprintf(buf, sizeof buf, "%s", dir);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  if (j) {
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scenario");
    const cJSON *po = cJSON_GetObjectItemCaseSensitive(j, "policy");
    const cJSON *re = cJSON_GetObjectItemCaseSensitive(j, "regime");
    if (cJSON_IsString(sc) && cJSON_IsString(po))
      snprintf(buf, sizeof buf, "%s, %s, policy %s", sc->valuestring,
               cJSON_IsString(re) ? re->valuestring : "?", po->valuestring);
  }
  cJSON_Delete(j);
  hs_free(text);
  return hs_strdup(buf);
}
