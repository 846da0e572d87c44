/* optimize_search.c: `hetsim optimize` as a library (hs_opt_search.h):
 * the job validated, its objectives looked up in the metric table, every
 * evaluation a one-point sweep, the search run on rank 0 with its batches
 * spread over the transport's ranks (optimize_ranks.c). The files are
 * optimize_files.c.
 *
 * Objectives: a name resolves to a sweep metric of the table (exactly, or
 * with the unit suffix left out), or to one of the named pairs below; which
 * runs report an optional metric is the table's and the regime
 * descriptors' business (hs_metric_needs words it), never a regime name
 * here. Rejected: a list of objective names beside the table (what this
 * replaces: every new metric needed a second edit to be searched).
 *
 * Evaluations create a one-point sweep each: hs_sweep_create sets the metric
 * table's process-wide sweep groups (the same value for every point of one
 * search), so creations are serialised; the runs themselves are not. */
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "optimize_files.h"
#include "sim/hs_metrics.h"
#include "sim/hs_sweep.h"

/* Pareto pairs, by name: both metrics minimised. */
static const struct {
  const char *name, *m0, *m1;
} pairs[] = {{"pareto", "makespan_s", "energy_j"}, {"pareto_system", "makespan_s", "energy_system_j"}};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

/* The sweep metric that objective name stands for, or NULL: its name, or
 * its name without "_<unit>" (makespan for makespan_s, energy for energy_j;
 * a dimensionless metric has no suffix to leave out). */
static const hs_metric *objective_metric(const char *name) {
  size_t n = strlen(name);
  for (size_t k = 0; k < hs_metric_count(); k++) {
    const hs_metric *m = hs_metric_at(k);
    if (!(m->in & HS_METRIC_SWEEP)) continue;
    if (!strcmp(m->name, name)) return m;
    if (!strcmp(m->unit, "1") || strncmp(m->name, name, n) || m->name[n] != '_') continue;
    const char *suffix = m->name + n + 1, *u = m->unit;
    while (*u && *suffix == tolower((unsigned char)*u)) suffix++, u++;
    if (!*u && !*suffix) return m;
  }
  return NULL;
}

/* The job's objectives as metrics; HS_EINVAL naming the choices. */
static hs_status resolve_objective(const char *name, const hs_metric *m[2], bool *pareto,
                                   hs_error *err) {
  *pareto = false;
  for (size_t i = 0; i < NPAIRS; i++)
    if (!strcmp(pairs[i].name, name)) {
      *pareto = true;
      m[0] = hs_metric_find(pairs[i].m0);
      m[1] = hs_metric_find(pairs[i].m1);
      return HS_OK;
    }
  m[0] = m[1] = objective_metric(name);
  if (m[0]) return HS_OK;
  char list[360] = ""; /* every sweep metric of the table fits, with room for the rest */
  size_t off = 0;
  for (size_t k = 0; k < hs_metric_count() && off < sizeof list; k++)
    if (hs_metric_at(k)->in & HS_METRIC_SWEEP)
      off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", off ? ", " : "",
                              hs_metric_at(k)->name);
  return hs_error_set(err, HS_EINVAL,
                      "--objective: expected pareto, pareto_system or a sweep metric (%s; the "
                      "unit suffix may be left out: makespan) (got \"%.40s\")",
                      list, name);
}

static hs_sweep *point_sweep(const hs_opt_search *s, char **grids, hs_error *err) {
  hs_sweep_spec spec = {.scenario = s->a->scenario, .set = s->a->set, .nset = s->a->nset,
                        .grids = (const char *const *)grids, .ngrids = s->nvars,
                        .seeds = s->a->seed};
  return hs_sweep_create(&spec, err);
}

static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;

/* One point: its sweep metrics in extra (f: the objectives, signed). */
static hs_status eval_fn(const char *const *text, double *f, double *extra, void *ud,
                         hs_error *err) {
  hs_opt_search *s = ud;
  char **grids = hs_calloc(s->nvars, sizeof *grids);
  for (size_t v = 0; v < s->nvars; v++) {
    size_t len = strlen(s->vars[v].key) + strlen(text[v]) + 2;
    grids[v] = hs_malloc(len);
    snprintf(grids[v], len, "%s=%s", s->vars[v].key, text[v]);
  }
  pthread_mutex_lock(&create_mu);
  hs_sweep *sw = point_sweep(s, grids, err);
  pthread_mutex_unlock(&create_mu);
  hs_status st = sw ? HS_OK : err->status;
  hs_sweep_result r;
  if (sw) st = hs_sweep_run_row(sw, 0, &r, err);
  if (st == HS_OK) {
    for (size_t k = 0; k < 2; k++) f[k] = s->sign[k] * r.m[s->obj[k]];
    for (size_t m = 0; m < hs_metric_sweep_count(); m++) extra[m] = r.m[m];
  }
  hs_sweep_destroy(sw);
  for (size_t v = 0; v < s->nvars; v++) hs_free(grids[v]);
  hs_free(grids);
  return st;
}

static bool record_fn(const hs_opt_eval *e, void *ud) {
  hs_opt_search *s = ud;
  char buf[4096];
  size_t len = opt_format_eval(s, e, buf, sizeof buf);
  if (len >= sizeof buf || write(s->fd, buf, len) != (ssize_t)len) return false;
  s->appended++;
  if (s->a->appended) s->a->appended(s->appended, s->a->ud);
  return true;
}

/* One point on an evaluating rank: the metrics in out. */
static hs_status rank_point(const char *const *text, double *out, void *ud, hs_error *err) {
  double f[HS_OPT_MAXF];
  return eval_fn(text, f, out, ud, err);
}

/* Rank 0, batch mode: the batch across the ranks, f from the metrics. */
static hs_status rank_batch(hs_opt_eval *const *pts, size_t n, size_t *failed, void *ud,
                            hs_error *err) {
  hs_opt_search *s = ud;
  size_t nm = hs_metric_sweep_count();
  const char **text = hs_calloc(n * s->nvars + 1, sizeof *text);
  double *out = hs_calloc(n * nm + 1, sizeof *out);
  for (size_t i = 0; i < n; i++)
    for (size_t v = 0; v < s->nvars; v++) text[i * s->nvars + v] = pts[i]->text[v];
  size_t size = (size_t)s->ranks.t->size();
  for (size_t i = 0; i < n; i++) s->per_rank[i % size]++;
  hs_status st = opt_ranks_batch(&s->ranks, text, n, out, failed, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    memcpy(pts[i]->extra, out + i * nm, nm * sizeof *out);
    for (size_t k = 0; k < 2; k++) pts[i]->f[k] = s->sign[k] * out[i * nm + s->obj[k]];
  }
  hs_free(text);
  hs_free(out);
  return st;
}

/* The sweep column of metric m, or SIZE_MAX. */
static size_t sweep_column(const hs_metric *m) {
  for (size_t k = 0; k < hs_metric_sweep_count(); k++)
    if (hs_metric_sweep_at(k) == m) return k;
  return SIZE_MAX;
}

static hs_opt_spec spec_of(const hs_opt_search *s) {
  const hs_opt_job *a = s->a;
  return (hs_opt_spec){.vars = s->vars, .nvars = s->nvars, .pareto = s->pareto,
                       .budget = a->budget, .weights = a->weights, .algorithm = a->algorithm,
                       .seed = a->seed ? strtoul(a->seed, NULL, 10) : 0, .jobs = a->jobs,
                       .nextra = hs_metric_sweep_count()};
}

/* "KEY=lo,hi" (or every value of a set): the validation grid of var v. */
static char *ends_grid(const hs_opt_var *v) {
  size_t cap = strlen(v->key) + 2 + 512;
  for (size_t i = 0; v->kind == HS_OPT_SET && i < v->n; i++) cap += strlen(v->values[i]) + 1;
  char *g = hs_malloc(cap);
  size_t off = (size_t)snprintf(g, cap, "%s=", v->key);
  if (v->kind == HS_OPT_SET) {
    for (size_t i = 0; i < v->n; i++)
      off += (size_t)snprintf(g + off, cap - off, "%s%s", i ? "," : "", v->values[i]);
  } else {
    char t0[256], t1[256];
    hs_opt_var_text(v, 0, t0, sizeof t0);
    hs_opt_var_text(v, 1, t1, sizeof t1);
    snprintf(g + off, cap - off, "%s,%s", t0, t1);
  }
  return g;
}

/* Every key at both ends (and every value of a set) in one sweep, before any
 * run; then the objectives' sweep columns (optional metrics are columns only
 * when some point's run reports their group). */
static hs_status check(hs_opt_search *s, const hs_metric *m[2], hs_error *err) {
  hs_opt_spec sp = spec_of(s);
  if (hs_opt_check(&sp, err) != HS_OK) return HS_EINVAL;
  char **grids = hs_calloc(s->nvars, sizeof *grids);
  for (size_t v = 0; v < s->nvars; v++) grids[v] = ends_grid(&s->vars[v]);
  hs_sweep *sw = point_sweep(s, grids, err);
  for (size_t v = 0; v < s->nvars; v++) hs_free(grids[v]);
  hs_free(grids);
  if (!sw) {
    /* the sweep words it "--grid KEY=<both ends>: ...": name the --vary spec */
    const char *g = strstr(err->msg, "--grid "), *rest = g ? strstr(g, ": ") : NULL;
    const hs_opt_var *hit = NULL;
    for (size_t v = 0; rest && v < s->nvars && !hit; v++) {
      size_t kl = strlen(s->vars[v].key);
      if (!strncmp(g + 7, s->vars[v].key, kl) && g[7 + kl] == '=') hit = &s->vars[v];
    }
    hs_status st = err->status == HS_EIO || err->status == HS_ENOENT ? HS_EIO : HS_EINVAL;
    if (hit) {
      char msg[HS_ERROR_MSG_MAX];
      snprintf(msg, sizeof msg, "%s", err->msg);
      hs_error_set(err, st, "%.*s--vary %s%s", (int)(g - err->msg), msg, hit->spec,
                   msg + (rest - err->msg));
    }
    err->status = st;
    return st;
  }
  hs_sweep_destroy(sw);
  for (size_t k = 0; k < 2; k++) {
    s->obj[k] = sweep_column(m[k]);
    s->sign[k] = m[k]->in & HS_METRIC_HIGHER_BETTER ? -1 : 1;
  }
  for (size_t k = 0; k < 2; k++)
    if (s->obj[k] == SIZE_MAX) {
      char needs[HS_ERROR_MSG_MAX / 2];
      if (!hs_metric_needs(m[k], needs, sizeof needs)) snprintf(needs, sizeof needs, "%s", "?");
      return hs_error_set(err, HS_EINVAL, "--objective %s: no metric %s in this search (it needs %s)",
                          s->a->objective, m[k]->name, needs);
    }
  /* The history's columns: the pair, or (one objective) makespan and energy. */
  s->hist[0] = s->pareto ? s->obj[0] : hs_metric_sweep_index("makespan_s");
  s->hist[1] = s->pareto ? s->obj[1] : hs_metric_sweep_index("energy_j");
  return HS_OK;
}

hs_opt_search *hs_opt_search_create(const hs_opt_job *job, hs_error *err) {
  hs_opt_search *s = hs_calloc(1, sizeof *s);
  s->a = job;
  s->fd = -1;
  s->vars = hs_calloc(job->nvary + 1, sizeof *s->vars);
  const hs_metric *m[2];
  if (resolve_objective(job->objective, m, &s->pareto, err) != HS_OK) goto fail;
  for (size_t i = 0; i < job->nvary; i++) {
    if (hs_opt_var_parse(job->vary[i], &s->vars[s->nvars], err) != HS_OK) goto fail;
    for (size_t j = 0; j < s->nvars; j++)
      if (!strcmp(s->vars[j].key, s->vars[s->nvars].key)) {
        hs_error_set(err, HS_EINVAL, "--vary %.80s: key %s is already varied", job->vary[i],
                     s->vars[s->nvars].key);
        s->nvars++;
        goto fail;
      }
    s->nvars++;
  }
  if (check(s, m, err) != HS_OK) goto fail;
  return s;
fail:
  hs_opt_search_destroy(s);
  return NULL;
}

void hs_opt_search_destroy(hs_opt_search *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nvars; i++) hs_opt_var_fini(&s->vars[i]);
  hs_free(s->vars);
  if (s->fd >= 0) close(s->fd);
  hs_free(s);
}

hs_status hs_opt_search_run(hs_opt_search *s, const hs_transport *t, hs_opt_report *rep,
                            hs_error *err) {
  memset(rep, 0, sizeof *rep);
  int rank = t->rank(), size = t->size();
  char *hdr = opt_header(s);
  hs_opt_eval *prior = NULL;
  size_t nprior = 0;
  hs_status st = rank == 0 ? opt_open_file(s, hdr, &prior, &nprior, err) : HS_OK;
  st = (hs_status)hs_transport_bcast_int(t, (int)st, 0);
  bool batches = size > 1 || t->ranks;
  s->ranks = (opt_ranks){.t = t, .nvars = s->nvars, .nout = hs_metric_sweep_count(),
                         .jobs = s->a->jobs, .eval = rank_point, .ud = s};
  if (st == HS_OK && rank != 0) opt_ranks_serve(&s->ranks);
  if (st == HS_OK && rank == 0) {
    hs_opt_spec sp = spec_of(s);
    sp.prior = prior;
    sp.nprior = nprior;
    if (batches) { /* ranks x -j sub-problems at once: a batch can fill every thread */
      sp.jobs = s->a->jobs * (unsigned)size;
      sp.batch = rank_batch;
      s->per_rank = hs_calloc((size_t)size, sizeof *s->per_rank);
    }
    hs_opt_eval *ev = NULL;
    size_t nev = 0;
    st = hs_opt_run(&sp, eval_fn, record_fn, s, &ev, &nev, err);
    if (batches) opt_ranks_stop(&s->ranks);
    close(s->fd);
    s->fd = -1;
    if (st != HS_OK && st != HS_EIO) err->status = st = HS_EINVAL;
    if (st == HS_OK) st = opt_write_outputs(s, &sp, hdr, ev, nev, rep, err);
    if (st == HS_OK && batches) {
      rep->per_rank = s->per_rank;
      rep->nranks = (size_t)size;
    } else {
      hs_free(s->per_rank);
    }
    s->per_rank = NULL;
    hs_opt_evals_free(ev, nev, s->nvars);
  }
  st = (hs_status)hs_transport_bcast_int(t, (int)st, 0);
  if (rank != 0) hs_error_clear(err); /* rank 0 says why */
  if (st != HS_OK) err->status = st;
  hs_opt_evals_free(prior, nprior, s->nvars);
  hs_free(hdr);
  return st;
}

void hs_opt_report_fini(hs_opt_report *rep) {
  hs_free(rep->front_path);
  hs_free(rep->history_path);
  hs_free(rep->per_rank);
  memset(rep, 0, sizeof *rep);
}
