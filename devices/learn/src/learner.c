/* learner.c: the learner interface (hs_learn.h) over the harness's trainers.
 *
 * Data structures: the trainer's loaded state (data and the seeded initial
 * model, never trained here); the partition; one worker record per pool
 * thread (model scratch, a gradient, an index buffer, an optimiser state for
 * jobs that bring none). A gradient is a dense double vector with the rows it
 * touched listed (the embedding bag touches a few hundred of 65536 rows), so
 * zeroing and SGD cost what a batch touches, not the model size.
 * Invariants: entries of a gradient outside its touched rows and its dense
 * tail are zero; a job, a rank's gradient and an evaluation chunk are each
 * computed by one thread start to end, and every sum across them is taken in
 * index order, so no result depends on the thread count or on timing.
 * Work is handed out by a shared counter (jobs differ in size: n_i samples).
 * Complexity: a job costs samples x (forward + backward) plus one optimiser
 * pass per batch (SGD: touched parameters; momentum/Adam: all of them).
 * A job's batches follow cfg.last_batch (keep, drop or merge the short last
 * batch: job_batches); its steps use the job's rate when it brings one (the
 * schedule lives with the caller, who knows the round).
 * Rejected: splitting one job's batch over threads (the harness does that;
 * here participants are the parallel unit, and a per-thread split would make
 * the floating-point sums depend on the thread count).
 * Layering: this file sits above trainers.c and only calls down into it
 * (hs_learn_parts.h); lrn_rows_touch, which both use, is defined down there
 * with the hooks that touch rows, so no arrow points back up. */
#include "learn_internal.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_CHUNK 64

struct hs_learn_grad {
  size_t n, row_dim, dense0;
  double *g;
  lrn_rows rows;
};

typedef struct {
  void *scratch;
  hs_learn_grad *g;
  uint32_t *idx;
  size_t idxcap;
  hs_learn_optstate *opt;
} learn_worker;

struct hs_learner {
  const lrn_trainer_type *type;
  void *state;
  lrn_model md;
  size_t np, dense0, ntrain, nheld;
  hs_learn_opt opt;
  size_t batch;
  hs_learn_last_batch last_batch;
  uint64_t seed;
  int *labels;           /* NULL for regression */
  lrn_partition part;
  lrn_pool *pool;
  unsigned nth;
  learn_worker *w;
};

/* ------------------------------------------------------------- gradients */
hs_learn_grad *hs_learn_grad_create(const hs_learner *l) {
  hs_learn_grad *g = hs_calloc(1, sizeof *g);
  g->n = l->np;
  g->row_dim = l->md.row_dim;
  g->dense0 = l->dense0;
  g->g = hs_calloc(l->np, sizeof *g->g);
  if (l->md.rows) {
    g->rows.mark = hs_calloc(l->md.rows, 1);
    g->rows.coef = hs_calloc(l->md.rows, sizeof *g->rows.coef);
  }
  return g;
}

void hs_learn_grad_destroy(hs_learn_grad *g) {
  if (!g) return;
  free(g->g);
  free(g->rows.list);
  free(g->rows.mark);
  free(g->rows.coef);
  free(g);
}

const double *hs_learn_grad_values(const hs_learn_grad *g) { return g->g; }

static void grad_zero(hs_learn_grad *g) {
  for (size_t r = 0; r < g->rows.n; r++) {
    uint32_t row = g->rows.list[r];
    memset(g->g + (size_t)row * g->row_dim, 0, g->row_dim * sizeof *g->g);
    g->rows.mark[row] = 0;
  }
  g->rows.n = 0;
  memset(g->g + g->dense0, 0, (g->n - g->dense0) * sizeof *g->g);
}

/* After a step that zeroed the values it used: only the row list is left. */
static void grad_forget_rows(hs_learn_grad *g) {
  for (size_t r = 0; r < g->rows.n; r++) g->rows.mark[g->rows.list[r]] = 0;
  g->rows.n = 0;
}

/* Apply f(x) = x / d to the live entries. */
static void grad_div(hs_learn_grad *g, double d) {
  for (size_t r = 0; r < g->rows.n; r++) {
    double *x = g->g + (size_t)g->rows.list[r] * g->row_dim;
    for (size_t k = 0; k < g->row_dim; k++) x[k] /= d;
  }
  for (size_t i = g->dense0; i < g->n; i++) g->g[i] /= d;
}

/* g = SUM of the gradients of idx[0..n) at p (g zero on entry); returns the
 * loss sum (and squares). */
static double grad_sum(hs_learner *l, void *scratch, const float *p, const uint32_t *idx, size_t n,
                       hs_learn_grad *g, double *sq) {
  double loss = 0, s2 = 0;
  for (size_t k = 0; k < n; k++) {
    double li = l->type->grad(l->state, scratch, p, idx[k], g->g, &g->rows);
    loss += li;
    s2 += li * li;
  }
  if (l->type->finish) l->type->finish(l->state, p, g->g, &g->rows);
  if (sq) *sq = s2;
  return loss;
}

/* g = mean gradient of idx[0..n) at p; returns the loss sum (and squares). */
static double grad_batch(hs_learner *l, void *scratch, const float *p, const uint32_t *idx, size_t n,
                         hs_learn_grad *g, double *sq) {
  grad_zero(g);
  double loss = grad_sum(l, scratch, p, idx, n, g, sq);
  grad_div(g, (double)n);
  return loss;
}

void hs_learn_grad_combine(hs_learn_grad *out, const hs_learn_grad *const *g, const double *w, size_t n) {
  grad_zero(out);
  for (size_t i = 0; i < n; i++)
    for (size_t r = 0; r < g[i]->rows.n; r++) lrn_rows_touch(&out->rows, g[i]->rows.list[r]);
  for (size_t r = 0; r < out->rows.n; r++) {
    size_t lo = (size_t)out->rows.list[r] * out->row_dim;
    for (size_t e = lo; e < lo + out->row_dim; e++) {
      double acc = 0;
      for (size_t i = 0; i < n; i++) acc += w[i] * g[i]->g[e];
      out->g[e] = acc;
    }
  }
  for (size_t e = out->dense0; e < out->n; e++) {
    double acc = 0;
    for (size_t i = 0; i < n; i++) acc += w[i] * g[i]->g[e];
    out->g[e] = acc;
  }
}

void hs_learn_step(const hs_learner *l, hs_learn_optstate *s, float *params, const hs_learn_grad *g) {
  assert(s->n == l->np);
  lrn_opt_step(s, params, g->g, 1.0, l->md.rows ? &g->rows : NULL, l->md.row_dim, l->dense0,
               false);
}

hs_learn_optstate *hs_learn_optstate_for(const hs_learner *l) { return hs_learn_optstate_create(&l->opt, l->np); }

/* ------------------------------------------------------------ dispatching */
typedef struct {
  hs_learner *l;
  pthread_mutex_t mu;
  size_t next, n;
  void (*one)(void *ctx, size_t k, learn_worker *w);
  void *ctx;
} dispatch;

static void dispatch_fn(void *c, unsigned tid, unsigned nth) {
  dispatch *d = c;
  (void)nth;
  for (;;) {
    pthread_mutex_lock(&d->mu);
    size_t k = d->next++;
    pthread_mutex_unlock(&d->mu);
    if (k >= d->n) break;
    d->one(d->ctx, k, &d->l->w[tid]);
  }
}

static void run_all(hs_learner *l, size_t n, void (*one)(void *, size_t, learn_worker *), void *ctx) {
  dispatch d = {l, PTHREAD_MUTEX_INITIALIZER, 0, n, one, ctx};
  if (l->nth == 1 || n == 1) {
    for (size_t k = 0; k < n; k++) one(ctx, k, &l->w[0]);
  } else {
    lrn_pool_run(l->pool, dispatch_fn, &d);
  }
  pthread_mutex_destroy(&d.mu);
}

/* ----------------------------------------------------------------- create */
hs_status hs_learn_create(const hs_learn_cfg *cfg, hs_learner **out, hs_error *err) {
  *out = NULL;
  const lrn_trainer_type *t = cfg->task ? lrn_trainer_find(cfg->task) : NULL;
  if (!t)
    return hs_error_set(err, HS_EINVAL, "task: %s%s%s is not a task (mnist, era5, imdb)", cfg->task ? "\"" : "",
                        cfg->task ? cfg->task : "(none)", cfg->task ? "\"" : "");
  if (cfg->batch < 1) return hs_error_set(err, HS_ERANGE, "batch: 0; the local minibatch needs at least 1 sample");
  hs_status st = hs_learn_opt_check(&cfg->opt, err);
  if (st != HS_OK) return st;
  if (!cfg->data && !t->default_data)
    return hs_error_set(err, HS_EMISSING, "data: task %s has no default data; give a path to a %s", t->name,
                        t->data_help);
  if ((unsigned)cfg->last_batch > HS_LEARN_LAST_MERGE)
    return hs_error_set(err, HS_EINVAL, "last_batch: %d is not keep, drop or merge", (int)cfg->last_batch);
  /* The harness's 0 means its own small default; the learner's means all. */
  lrn_train_cfg tc = {cfg->data, cfg->max_samples, cfg->seed, 0, cfg->max_held ? cfg->max_held : SIZE_MAX};
  void *state = NULL;
  st = t->load(&tc, &state, err);
  if (st != HS_OK) return st;
  hs_learner *l = hs_calloc(1, sizeof *l);
  l->type = t;
  l->state = state;
  t->model(state, &l->md);
  l->dense0 = l->md.rows * l->md.row_dim;
  l->np = l->dense0 + l->md.dense;
  l->ntrain = t->train_count(state);
  l->nheld = t->held_count(state);
  l->opt = cfg->opt;
  lrn_opt_resolve(&l->opt, t->default_lr);
  l->batch = cfg->batch;
  l->last_batch = cfg->last_batch;
  l->seed = cfg->seed;
  if (l->md.classes > 0) {
    l->labels = hs_malloc(l->ntrain * sizeof *l->labels);
    for (size_t i = 0; i < l->ntrain; i++) l->labels[i] = t->label(state, i);
  }
  l->pool = lrn_pool_create(cfg->threads ? cfg->threads : 1);
  l->nth = lrn_pool_size(l->pool);
  l->w = hs_calloc(l->nth, sizeof *l->w);
  for (unsigned k = 0; k < l->nth; k++) {
    l->w[k].scratch = t->scratch_create(state);
    l->w[k].g = hs_learn_grad_create(l);
    l->w[k].opt = hs_learn_optstate_for(l);
  }
  *out = l;
  return HS_OK;
}

void hs_learn_destroy(hs_learner *l) {
  if (!l) return;
  for (unsigned k = 0; k < l->nth; k++) {
    l->type->scratch_free(l->w[k].scratch);
    hs_learn_grad_destroy(l->w[k].g);
    hs_learn_optstate_destroy(l->w[k].opt);
    free(l->w[k].idx);
  }
  free(l->w);
  lrn_pool_destroy(l->pool);
  lrn_partition_fini(&l->part);
  free(l->labels);
  l->type->destroy(l->state);
  free(l);
}

size_t hs_learn_nparams(const hs_learner *l) { return l->np; }
size_t hs_learn_train_count(const hs_learner *l) { return l->ntrain; }
size_t hs_learn_held_count(const hs_learner *l) { return l->nheld; }
int hs_learn_classes(const hs_learner *l) { return l->md.classes; }
int hs_learn_label(const hs_learner *l, size_t i) { return l->labels ? l->labels[i] : -1; }
const char *hs_learn_describe(const hs_learner *l) { return l->type->describe(l->state); }
const hs_learn_opt *hs_learn_optimiser(const hs_learner *l) { return &l->opt; }
void hs_learn_init_params(const hs_learner *l, float *params) { l->type->params(l->state, params); }

/* -------------------------------------------------------------- partition */
hs_status hs_learn_partition(hs_learner *l, const hs_learn_part_cfg *pc, hs_error *err) {
  lrn_partition_fini(&l->part);
  return lrn_partition_make(pc, l->seed, l->ntrain, l->labels, l->md.classes, &l->part, err);
}

unsigned hs_learn_participants(const hs_learner *l) { return l->part.P; }
size_t hs_learn_part_size(const hs_learner *l, unsigned p) { return p < l->part.P ? l->part.size[p] : 0; }
const uint32_t *hs_learn_part_samples(const hs_learner *l, unsigned p) {
  return p < l->part.P ? l->part.idx[p] : NULL;
}

size_t hs_learn_draw(const hs_learner *l, unsigned p, uint64_t draw, size_t n, uint32_t *idx) {
  size_t m = hs_learn_part_size(l, p);
  if (m == 0) return 0;
  uint32_t *perm = hs_malloc(m * sizeof *perm);
  memcpy(perm, l->part.idx[p], m * sizeof *perm);
  lrn_rng r;
  lrn_rng_key(&r, l->seed, p, LRN_PURPOSE_DRAW, draw);
  /* Passes of a partial Fisher-Yates: each pass is a uniform permutation of
   * the part (continuing from the last is still uniform). */
  for (size_t done = 0; done < n;) {
    size_t c = n - done < m ? n - done : m;
    for (size_t i = 0; i < c; i++) {
      size_t j = i + lrn_rng_below(&r, m - i);
      uint32_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      idx[done + i] = perm[i];
    }
    done += c;
  }
  free(perm);
  return n;
}

/* --------------------------------------------------------------- training */
static hs_status job_check(const hs_learner *l, const hs_learn_job *j, size_t k, hs_error *err) {
  if (l->part.P == 0)
    return hs_error_set(err, HS_ESTATE, "jobs[%zu]: no partition yet (call hs_learn_partition first)", k);
  if (j->participant >= l->part.P)
    return hs_error_set(err, HS_ERANGE, "jobs[%zu].participant: %u; the partition has %u participants", k,
                        j->participant, l->part.P);
  if (!j->start || !j->out || j->start == j->out)
    return hs_error_set(err, HS_EINVAL, "jobs[%zu]: start and out must be two separate models", k);
  if (j->opt && j->opt->n != l->np)
    return hs_error_set(err, HS_EINVAL, "jobs[%zu].opt: state for %zu parameters, the model has %zu", k,
                        j->opt->n, l->np);
  return HS_OK;
}

int hs_learn_last_batch_find(const char *name) {
  static const char *const names[] = {"keep", "drop", "merge"};
  for (int i = 0; i < 3; i++)
    if (name && strcmp(name, names[i]) == 0) return i;
  return -1;
}

/* The samples a job of n trains (*used) and the size of its last batch
 * (*tail; every other batch has l->batch samples). */
static void job_batches(const hs_learner *l, size_t n, size_t *used, size_t *tail) {
  size_t B = l->batch, q = n / B, r = n % B;
  *used = n;
  *tail = r ? r : B;
  if (r == 0 || q == 0) {
    if (l->last_batch == HS_LEARN_LAST_DROP && q == 0) *used = 0; /* nothing but a short batch */
    return;
  }
  if (l->last_batch == HS_LEARN_LAST_DROP) {
    *used = q * B;
    *tail = B;
  } else if (l->last_batch == HS_LEARN_LAST_MERGE) {
    *tail = B + r;
  }
}

static void job_run(hs_learner *l, learn_worker *w, hs_learn_job *j) {
  memcpy(j->out, j->start, l->np * sizeof *j->out);
  size_t used, tail;
  job_batches(l, j->samples, &used, &tail);
  if (w->idxcap < used) {
    w->idxcap = used;
    w->idx = hs_realloc(w->idx, w->idxcap * sizeof *w->idx);
  }
  /* A draw's first k samples do not depend on its length, so the kept
   * batches of a dropped tail see what they would have seen anyway. */
  if (used) hs_learn_draw(l, j->participant, j->draw, used, w->idx);
  hs_learn_optstate *os = j->opt;
  if (!os) {
    os = w->opt;
    hs_learn_optstate_reset(os);
  }
  if (j->lr > 0) hs_learn_optstate_set_lr(os, j->lr);
  else if (!j->opt) hs_learn_optstate_set_lr(os, l->opt.lr);
  double loss = 0, sq = 0;
  for (size_t b = 0; b < used;) {
    size_t nb = used - b == tail ? tail : l->batch;
    double s2 = 0;
    /* The mean's division is folded into the step (one pass less over the
     * touched entries; g / n / 1 and g / n round the same). */
    loss += grad_sum(l, w->scratch, j->out, w->idx + b, nb, w->g, &s2);
    sq += s2;
    lrn_opt_step(os, j->out, w->g->g, (double)nb, l->md.rows ? &w->g->rows : NULL, l->md.row_dim, l->dense0, true);
    grad_forget_rows(w->g);
    b += nb;
  }
  j->trained = used;
  j->loss_sum = loss;
  j->loss_sq_sum = sq;
}

hs_status hs_learn_train(hs_learner *l, hs_learn_job *job, hs_error *err) {
  hs_status st = job_check(l, job, 0, err);
  if (st == HS_OK) job_run(l, &l->w[0], job);
  return st;
}

static void train_one(void *ctx, size_t k, learn_worker *w) {
  hs_learn_job *jobs = ((void **)ctx)[1];
  job_run(((void **)ctx)[0], w, &jobs[k]);
}

hs_status hs_learn_train_many(hs_learner *l, hs_learn_job *jobs, size_t n, hs_error *err) {
  for (size_t k = 0; k < n; k++) {
    hs_status st = job_check(l, &jobs[k], k, err);
    if (st != HS_OK) return st;
  }
  void *ctx[2] = {l, jobs};
  run_all(l, n, train_one, ctx);
  return HS_OK;
}

/* ----------------------------------------------------------- aggregation */
void hs_learn_aggregate(const hs_learner *l, const float *const *models, const double *w, size_t n, float *out) {
  double W = 0;
  for (size_t i = 0; i < n; i++) {
    assert(w[i] >= 0);
    W += w[i];
  }
  assert(n > 0 && W > 0);
  double *q = hs_malloc(n * sizeof *q);
  for (size_t i = 0; i < n; i++) q[i] = w[i] / W;
  for (size_t e = 0; e < l->np; e++) {
    double acc = 0;
    for (size_t i = 0; i < n; i++) acc += q[i] * (double)models[i][e];
    out[e] = (float)acc;
  }
  free(q);
}

int hs_learn_weighting_find(const char *name) {
  static const char *const names[] = {"samples", "data", "uniform"};
  for (int i = 0; i < 3; i++)
    if (name && strcmp(name, names[i]) == 0) return i;
  return -1;
}

void hs_learn_fedavg_weights(const hs_learner *l, hs_learn_weighting kind, const hs_learn_job *jobs, size_t n,
                             double *w) {
  for (size_t k = 0; k < n; k++)
    w[k] = kind == HS_LEARN_W_SAMPLES ? (double)jobs[k].trained
           : kind == HS_LEARN_W_DATA  ? (double)hs_learn_part_size(l, jobs[k].participant)
                                      : 1.0;
}

void hs_learn_server_step(hs_learn_optstate *s, float *global, const float *aggregate, size_t n, double *scratch) {
  for (size_t e = 0; e < n; e++) scratch[e] = (double)global[e] - (double)aggregate[e];
  hs_learn_opt_apply(s, global, scratch, n);
}

void hs_learn_mix(const hs_learner *l, float *global, const float *model, double a) {
  assert(a >= 0 && a <= 1);
  for (size_t e = 0; e < l->np; e++) global[e] = (float)((1 - a) * (double)global[e] + a * (double)model[e]);
}

/* ------------------------------------------------------------------- DDP */
double hs_learn_batch_grad(hs_learner *l, const float *params, const uint32_t *idx, size_t n, hs_learn_grad *g) {
  assert(n >= 1);
  return grad_batch(l, l->w[0].scratch, params, idx, n, g, NULL) / (double)n;
}

typedef struct {
  hs_learner *l;
  const float *params;
  const uint32_t *const *idx;
  const size_t *n;
  hs_learn_grad *const *g;
  double *mean_loss;
} grads_ctx;

static void grad_one(void *c, size_t k, learn_worker *w) {
  grads_ctx *x = c;
  double loss = grad_batch(x->l, w->scratch, x->params, x->idx[k], x->n[k], x->g[k], NULL);
  if (x->mean_loss) x->mean_loss[k] = loss / (double)x->n[k];
}

void hs_learn_batch_grad_many(hs_learner *l, const float *params, const uint32_t *const *idx, const size_t *n,
                              hs_learn_grad *const *g, double *mean_loss, size_t ranks) {
  grads_ctx c = {l, params, idx, n, g, mean_loss};
  run_all(l, ranks, grad_one, &c);
}

/* ------------------------------------------------------------- evaluation */
typedef struct {
  hs_learner *l;
  const float *params;
  size_t n;
  double *loss;
  size_t *correct;
} eval_ctx;

static void eval_one(void *c, size_t k, learn_worker *w) {
  eval_ctx *x = c;
  size_t lo = k * EVAL_CHUNK, hi = lo + EVAL_CHUNK < x->n ? lo + EVAL_CHUNK : x->n, ok = 0;
  double loss = 0;
  for (size_t i = lo; i < hi; i++) {
    int right = 0;
    loss += x->l->type->eval1(x->l->state, w->scratch, x->params, i, &right);
    ok += (size_t)right;
  }
  x->loss[k] = loss;
  x->correct[k] = ok;
}

void hs_learn_eval(hs_learner *l, const float *params, size_t n, double *loss, double *accuracy) {
  assert(n <= l->nheld);
  if (n == 0) n = l->nheld;
  if (n == 0) {
    *loss = *accuracy = NAN;
    return;
  }
  size_t chunks = (n + EVAL_CHUNK - 1) / EVAL_CHUNK;
  eval_ctx c = {l, params, n, hs_malloc(chunks * sizeof(double)), hs_malloc(chunks * sizeof(size_t))};
  run_all(l, chunks, eval_one, &c);
  double sum = 0;
  size_t ok = 0;
  for (size_t k = 0; k < chunks; k++) {
    sum += c.loss[k];
    ok += c.correct[k];
  }
  free(c.loss);
  free(c.correct);
  *loss = sum / (double)n;
  *accuracy = l->md.classes > 0 ? (double)ok / (double)n : NAN;
}
