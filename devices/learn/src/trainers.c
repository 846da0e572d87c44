/* trainers.c: the registry of trainers (task name -> function table) and the
 * three tasks the scenarios use:
 *   mnist  MLP 784-128-10, softmax, on IDX images (Fashion-MNIST from Debian);
 *   era5   MLP (24 past hours x all variables)-32-1, squared error, predicting
 *          the next hour's target variable (default t2m) from a CSV extract;
 *   imdb   embedding bag (65536 hashed unigrams x 32) + logistic output on the
 *          aclImdb review layout.
 * Each batch is split into contiguous slices, one per pool thread; each thread
 * writes only its own gradient record, and the caller sums them in thread
 * order, so a run is deterministic for a given thread count.
 * Held-out loss comes from a separate split (t10k / test/ when present, else
 * the tail of the training data) and is what the loss curve records.
 * The learner's hooks (hs_learn_parts.h, used by learner.c) read the same
 * data and run the same forward pass on a flat parameter vector the caller
 * owns, with gradients summed in double; they never touch the state's own
 * model, so several threads may call them at once (one scratch each). The
 * embedding bag's row gradients are summed as one coefficient per row and
 * expanded once per batch (imdb_finish). Over 600 lines because each task's
 * loader, harness path and learner hooks read best side by side.
 * Adding a task is adding its functions and a registry line.
 * lrn_rows_touch (declared in hs_learn_parts.h) lives here, not in learner.c:
 * the embedding bag's hooks call it, and this layer must not depend on the
 * learner above it (learner.c -> trainers.c, never back). */
#include "learn/hs_learn_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRAIN_MAX_THREADS 64
/* Default learning rates (the harness's SGD and the learner's optimisers). */
#define MNIST_LR 0.1
#define ERA5_LR 0.01
#define IMDB_LR 0.5

/* ----------------------------------------------------- shared MLP driver */
typedef struct mlp_task mlp_task;
struct mlp_task {
  lrn_mlp m;
  lrn_mlp_grad g[TRAIN_MAX_THREADS];
  unsigned ng;                       /* gradient records allocated */
  float *x[TRAIN_MAX_THREADS];       /* per-thread input scratch */
  size_t ntrain, nheld;
  float lr;
  /* Fill input x and target (cls or y) of training sample i (held: held-out). */
  void (*fill)(const mlp_task *t, bool held, size_t i, float *x, int *cls, float *y);
  const void *data;
  const unsigned char *labels; /* classification: class of training sample i */
  char describe[512];
};

typedef struct {
  mlp_task *t;
  const uint32_t *idx;
  size_t n;
} mlp_job;

static void mlp_batch_fn(void *ctx, unsigned tid, unsigned nth) {
  mlp_job *j = ctx;
  mlp_task *t = j->t;
  size_t lo = j->n * tid / nth, hi = j->n * (tid + 1) / nth;
  for (size_t k = lo; k < hi; k++) {
    int cls = 0;
    float y = 0;
    t->fill(t, false, j->idx[k], t->x[tid], &cls, &y);
    lrn_mlp_sample(&t->m, &t->g[tid], t->x[tid], cls, y, t->g[tid].h, t->g[tid].o);
  }
}

static void mlp_ensure(mlp_task *t, unsigned nth) {
  if (nth > TRAIN_MAX_THREADS) nth = TRAIN_MAX_THREADS;
  for (; t->ng < nth; t->ng++) {
    lrn_mlp_grad_init(&t->g[t->ng], &t->m);
    t->x[t->ng] = hs_calloc((size_t)t->m.nin, sizeof(float));
  }
}

static double mlp_train(void *state, const uint32_t *idx, size_t n, size_t batch, lrn_pool *pool) {
  mlp_task *t = state;
  unsigned nth = lrn_pool_size(pool);
  mlp_ensure(t, nth);
  double loss = 0;
  for (size_t b = 0; b < n; b += batch) {
    mlp_job j = {t, idx + b, n - b < batch ? n - b : batch};
    lrn_pool_run(pool, mlp_batch_fn, &j);
    for (unsigned k = 0; k < nth; k++) loss += t->g[k].loss;
    lrn_mlp_apply(&t->m, t->g, nth, t->lr / (float)j.n);
  }
  return n ? loss / (double)n : 0.0;
}

static double mlp_eval(void *state) {
  mlp_task *t = state;
  mlp_ensure(t, 1);
  double loss = 0;
  for (size_t i = 0; i < t->nheld; i++) {
    int cls = 0;
    float y = 0;
    t->fill(t, true, i, t->x[0], &cls, &y);
    loss += lrn_mlp_sample(&t->m, NULL, t->x[0], cls, y, t->g[0].h, t->g[0].o);
  }
  return t->nheld ? loss / (double)t->nheld : NAN;
}

static size_t mlp_count(const void *state) { return ((const mlp_task *)state)->ntrain; }
static const char *mlp_describe(const void *state) { return ((const mlp_task *)state)->describe; }

static void mlp_task_free(mlp_task *t) {
  for (unsigned k = 0; k < t->ng; k++) {
    lrn_mlp_grad_fini(&t->g[k]);
    free(t->x[k]);
  }
  lrn_mlp_fini(&t->m);
}

/* --- the learner's hooks (flat parameters, double gradients; learner.c) */
/* A row's first touch lists it (first-touch order) and marks it; later
 * touches of the same row are free. */
void lrn_rows_touch(lrn_rows *r, uint32_t row) {
  if (!r || !r->mark || r->mark[row]) return;
  r->mark[row] = 1;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 256;
    r->list = hs_realloc(r->list, r->cap * sizeof *r->list);
  }
  r->list[r->n++] = row;
}

typedef struct {
  float *x, *h, *o;
} mlp_scratch;

static void mlp_model(const void *state, lrn_model *md) {
  const mlp_task *t = state;
  md->rows = md->row_dim = 0;
  md->dense = lrn_mlp_nparams(t->m.nin, t->m.nhid, t->m.nout);
  md->classes = t->m.nout > 1 ? t->m.nout : 0;
}

static void mlp_params(const void *state, float *p) { lrn_mlp_flatten(&((const mlp_task *)state)->m, p); }

static int mlp_label(const void *state, size_t i) {
  const mlp_task *t = state;
  if (t->m.nout == 1) return -1;
  return t->labels[i];
}

static size_t mlp_held(const void *state) { return ((const mlp_task *)state)->nheld; }

static void *mlp_scratch_create(const void *state) {
  const mlp_task *t = state;
  mlp_scratch *sc = hs_malloc(sizeof *sc);
  sc->x = hs_calloc((size_t)t->m.nin + (size_t)t->m.nhid + (size_t)t->m.nout, sizeof(float));
  sc->h = sc->x + t->m.nin;
  sc->o = sc->h + t->m.nhid;
  return sc;
}

static void mlp_scratch_free(void *scratch) {
  mlp_scratch *sc = scratch;
  if (sc) free(sc->x);
  free(sc);
}

static double mlp_grad(const void *state, void *scratch, const float *p, size_t i, double *g, lrn_rows *rows) {
  const mlp_task *t = state;
  mlp_scratch *sc = scratch;
  (void)rows;
  lrn_mlp v;
  lrn_mlp_view(&v, t->m.nin, t->m.nhid, t->m.nout, p);
  int cls = 0;
  float y = 0;
  t->fill(t, false, i, sc->x, &cls, &y);
  return lrn_mlp_sample_d(&v, g, sc->x, cls, y, sc->h, sc->o, NULL);
}

static double mlp_eval1(const void *state, void *scratch, const float *p, size_t i, int *correct) {
  const mlp_task *t = state;
  mlp_scratch *sc = scratch;
  lrn_mlp v;
  lrn_mlp_view(&v, t->m.nin, t->m.nhid, t->m.nout, p);
  int cls = 0, pred = 0;
  float y = 0;
  t->fill(t, true, i, sc->x, &cls, &y);
  double loss = lrn_mlp_sample_d(&v, NULL, sc->x, cls, y, sc->h, sc->o, &pred);
  *correct = t->m.nout > 1 && pred == cls;
  return loss;
}

/* Marker files written by `hetsim-probe synth`: synthetic content must say so. */
static bool train_synthetic(const char *path) {
  char *a = lrn_xasprintf("%s.synthetic", path), *b = lrn_xasprintf("%s/SYNTHETIC", path);
  bool yes = lrn_exists(a) || lrn_exists(b);
  free(a);
  free(b);
  return yes;
}

/* ------------------------------------------------------------------ mnist */
typedef struct {
  mlp_task t;
  lrn_idx img, lab, himg, hlab;
  bool held_is_tail;
} mnist_state;

static void mnist_fill(const mlp_task *t, bool held, size_t i, float *x, int *cls, float *y) {
  const mnist_state *s = (const mnist_state *)t;
  (void)y;
  const lrn_idx *img = &s->img, *lab = &s->lab;
  if (held) {
    if (s->held_is_tail) i += t->ntrain;
    else {
      img = &s->himg;
      lab = &s->hlab;
    }
  }
  const unsigned char *p = img->data + i * img->item_size;
  for (size_t j = 0; j < img->item_size; j++) x[j] = (float)p[j] * (1.0f / 255.0f);
  *cls = lab->data[i];
}

static void mnist_destroy(void *state) {
  mnist_state *s = state;
  if (!s) return;
  mlp_task_free(&s->t);
  lrn_idx_fini(&s->img);
  lrn_idx_fini(&s->lab);
  lrn_idx_fini(&s->himg);
  lrn_idx_fini(&s->hlab);
  free(s);
}

/* dir/<base>.gz or dir/<base>; NULL when neither exists. */
static char *mnist_file(const char *dir, const char *base) {
  char *p = lrn_xasprintf("%s/%s.gz", dir, base);
  if (lrn_exists(p)) return p;
  free(p);
  p = lrn_xasprintf("%s/%s", dir, base);
  if (lrn_exists(p)) return p;
  free(p);
  return NULL;
}

static hs_status mnist_check(const lrn_idx *img, const lrn_idx *lab, const char *ipath, const char *lpath,
                                hs_error *err) {
  if (img->ndims != 3)
    return hs_error_set(err, HS_EPARSE, "%s: offset 3: %d dimensions, images need 3", ipath, img->ndims);
  if (lab->ndims != 1)
    return hs_error_set(err, HS_EPARSE, "%s: offset 3: %d dimensions, labels need 1", lpath, lab->ndims);
  if (img->dims[0] != lab->dims[0])
    return hs_error_set(err, HS_EPARSE, "%s: offset 4: %u labels for %u images in %s", lpath, lab->dims[0],
                         img->dims[0], ipath);
  for (size_t i = 0; i < lab->count; i++)
    if (lab->data[i] > 9)
      return hs_error_set(err, HS_EPARSE, "%s: offset %zu: label %u is not a class 0..9", lpath, 8 + i,
                           lab->data[i]);
  return HS_OK;
}

static hs_status mnist_load(const lrn_train_cfg *cfg, void **state, hs_error *err) {
  const char *dir = cfg->data ? cfg->data : "/usr/share/datasets/fashion-mnist";
  mnist_state *s = hs_calloc(1, sizeof *s);
  *state = NULL;
  char *ip = mnist_file(dir, "train-images-idx3-ubyte"), *lp = mnist_file(dir, "train-labels-idx1-ubyte");
  hs_status st = HS_OK;
  if (!ip || !lp) {
    st = hs_error_set(err, HS_ENOENT,
                       "%s/%s: not found (nor without .gz): install the Debian package dataset-fashion-mnist, "
                       "or pass --data DIR holding the IDX files",
                       dir, ip ? "train-labels-idx1-ubyte.gz" : "train-images-idx3-ubyte.gz");
  }
  size_t cap = cfg->max_samples ? cfg->max_samples : 20000;
  if (st == HS_OK) st = lrn_idx_load(ip, cap, &s->img, err);
  if (st == HS_OK) st = lrn_idx_load(lp, cap, &s->lab, err);
  if (st == HS_OK) st = mnist_check(&s->img, &s->lab, ip, lp, err);
  char *tip = st == HS_OK ? mnist_file(dir, "t10k-images-idx3-ubyte") : NULL;
  char *tlp = st == HS_OK ? mnist_file(dir, "t10k-labels-idx1-ubyte") : NULL;
  if (st == HS_OK && tip && tlp) {
    size_t hcap = cfg->max_held ? cfg->max_held : 1000;
    st = lrn_idx_load(tip, hcap, &s->himg, err);
    if (st == HS_OK) st = lrn_idx_load(tlp, hcap, &s->hlab, err);
    if (st == HS_OK) st = mnist_check(&s->himg, &s->hlab, tip, tlp, err);
    if (st == HS_OK && s->himg.item_size != s->img.item_size)
      st = hs_error_set(err, HS_EPARSE, "%s: offset 8: image size differs from %s", tip, ip);
  }
  if (st == HS_OK) {
    s->held_is_tail = !(tip && tlp);
    size_t n = s->img.count;
    if (s->held_is_tail && n < 10) st = hs_error_set(err, HS_EPARSE, "%s: only %zu images", ip, n);
    s->t.nheld = s->held_is_tail ? n / 10 : s->himg.count;
    s->t.ntrain = s->held_is_tail ? n - n / 10 : n;
    lrn_mlp_init(&s->t.m, (int)s->img.item_size, 128, 10, cfg->seed);
    s->t.lr = cfg->lr > 0 ? (float)cfg->lr : (float)MNIST_LR;
    s->t.fill = mnist_fill;
    s->t.labels = s->lab.data;
    snprintf(s->t.describe, sizeof s->t.describe,
             "mnist: MLP %zu-128-10 on %zu training images (%ux%u) from %s, held-out loss on %zu %s images",
             s->img.item_size, s->t.ntrain, s->img.dims[1], s->img.dims[2], ip, s->t.nheld,
             s->held_is_tail ? "tail" : "t10k");
  }
  free(ip);
  free(lp);
  free(tip);
  free(tlp);
  if (st != HS_OK) {
    mnist_destroy(s);
    return st;
  }
  *state = s;
  return HS_OK;
}

/* ------------------------------------------------------------------- era5 */
#define ERA5_WINDOW 24

typedef struct {
  mlp_task t;
  lrn_table tab;
  int target;
} era5_state;

static void era5_fill(const mlp_task *t, bool held, size_t i, float *x, int *cls, float *y) {
  const era5_state *s = (const era5_state *)t;
  (void)cls;
  size_t row = ERA5_WINDOW + (held ? t->ntrain + i : i); /* predicted row */
  size_t c = s->tab.cols;
  const double *w = s->tab.v + (row - ERA5_WINDOW) * c;
  for (size_t k = 0; k < ERA5_WINDOW * c; k++) x[k] = (float)w[k];
  *y = (float)s->tab.v[row * c + (size_t)s->target];
}

static void era5_destroy(void *state) {
  era5_state *s = state;
  if (!s) return;
  mlp_task_free(&s->t);
  lrn_table_fini(&s->tab);
  free(s);
}

static hs_status era5_load(const lrn_train_cfg *cfg, void **state, hs_error *err) {
  *state = NULL;
  if (!cfg->data)
    return hs_error_set(err, HS_ENOENT,
                         "--data: era5 needs a CSV extract (header `time,t2m,...`, see README section probe); "
                         "`hetsim-probe synth era5 FILE.csv` writes a synthetic one in that layout");
  era5_state *s = hs_calloc(1, sizeof *s);
  hs_status st = lrn_csv_load(cfg->data, &s->tab, err);
  if (st == HS_OK) {
    s->target = lrn_table_col(&s->tab, "t2m");
    if (s->target < 0)
      st = hs_error_set(err, HS_EMISSING, "%s: line 1: no column `t2m` (the regression target)", cfg->data);
  }
  size_t windows = st == HS_OK && s->tab.rows > ERA5_WINDOW ? s->tab.rows - ERA5_WINDOW : 0;
  if (st == HS_OK && windows < 20)
    st = hs_error_set(err, HS_EPARSE, "%s: %zu rows; need at least %d (a %d-hour window and 20 targets)",
                       cfg->data, s->tab.rows, ERA5_WINDOW + 20, ERA5_WINDOW);
  if (st != HS_OK) {
    era5_destroy(s);
    return st;
  }
  /* Standardise every column (mean 0, sd 1) so one learning rate fits all. */
  size_t r = s->tab.rows, c = s->tab.cols;
  for (size_t k = 0; k < c; k++) {
    double m = 0, v = 0;
    for (size_t i = 0; i < r; i++) m += s->tab.v[i * c + k];
    m /= (double)r;
    for (size_t i = 0; i < r; i++) v += (s->tab.v[i * c + k] - m) * (s->tab.v[i * c + k] - m);
    double sd = sqrt(v / (double)r);
    if (sd <= 0) sd = 1;
    for (size_t i = 0; i < r; i++) s->tab.v[i * c + k] = (s->tab.v[i * c + k] - m) / sd;
  }
  if (cfg->max_samples && windows > cfg->max_samples) windows = cfg->max_samples;
  s->t.nheld = windows / 10;
  s->t.ntrain = windows - s->t.nheld;
  lrn_mlp_init(&s->t.m, (int)(ERA5_WINDOW * c), 32, 1, cfg->seed);
  s->t.lr = cfg->lr > 0 ? (float)cfg->lr : (float)ERA5_LR;
  s->t.fill = era5_fill;
  snprintf(s->t.describe, sizeof s->t.describe,
           "era5: MLP (%d h x %zu variables)-32-1 predicting next-hour t2m on %zu windows from %s%s", ERA5_WINDOW, c,
           s->t.ntrain, cfg->data,
           train_synthetic(cfg->data) ? " (SYNTHETIC content in the real ERA5 CSV layout, written by hetsim-probe synth)"
                                      : "");
  *state = s;
  return HS_OK;
}

/* ------------------------------------------------------------------- imdb */
#define IMDB_DIM 32

typedef struct {
  uint32_t tok;
  float coef;
} imdb_touch;

typedef struct {
  double loss;
  float gw[IMDB_DIM], gb;
  imdb_touch *touch;
  size_t nt, cap;
} imdb_grad;

typedef struct {
  lrn_docs train, held;
  bool held_is_tail;
  size_t ntrain, nheld;
  float *emb;            /* LRN_IMDB_BUCKETS x IMDB_DIM */
  float w[IMDB_DIM], b, lr;
  imdb_grad g[TRAIN_MAX_THREADS];
  char describe[512];
} imdb_state;

/* Forward pass of one review: mean embedding h, logit *z, logistic loss. */
static double imdb_forward(const float *emb, const float *w, float b, const uint32_t *tok, uint32_t len, int label,
                           float *h, float *zo) {
  for (int d = 0; d < IMDB_DIM; d++) h[d] = 0;
  for (uint32_t k = 0; k < len; k++) {
    const float *e = emb + (size_t)tok[k] * IMDB_DIM;
    for (int d = 0; d < IMDB_DIM; d++) h[d] += e[d];
  }
  float inv = 1.0f / (float)len, z = b;
  for (int d = 0; d < IMDB_DIM; d++) {
    h[d] *= inv;
    z += w[d] * h[d];
  }
  *zo = z;
  /* log(1 + e^-|z|) form: no overflow for large |z|. */
  return log1p(exp(-fabs((double)z))) + (z > 0 ? (label ? 0.0 : (double)z) : (label ? -(double)z : 0.0));
}

/* Forward (and backward into g when non-NULL) of one review. */
static double imdb_sample(imdb_state *s, imdb_grad *g, const uint32_t *tok, uint32_t len, int label) {
  float h[IMDB_DIM], z;
  double loss = imdb_forward(s->emb, s->w, s->b, tok, len, label, h, &z);
  if (!g) return loss;
  float inv = 1.0f / (float)len;
  float p = (float)(1.0 / (1.0 + exp(-(double)z)));
  float dz = p - (float)label;
  g->loss += loss;
  for (int d = 0; d < IMDB_DIM; d++) g->gw[d] += dz * h[d];
  g->gb += dz;
  if (g->nt + len > g->cap) {
    g->cap = (g->nt + len) * 2;
    g->touch = hs_realloc(g->touch, g->cap * sizeof *g->touch);
  }
  for (uint32_t k = 0; k < len; k++) g->touch[g->nt++] = (imdb_touch){tok[k], dz * inv};
  return loss;
}

typedef struct {
  imdb_state *s;
  const uint32_t *idx;
  size_t n;
} imdb_job;

static void imdb_batch_fn(void *ctx, unsigned tid, unsigned nth) {
  imdb_job *j = ctx;
  size_t lo = j->n * tid / nth, hi = j->n * (tid + 1) / nth;
  for (size_t k = lo; k < hi; k++) {
    uint32_t i = j->idx[k];
    imdb_sample(j->s, &j->s->g[tid], j->s->train.tok[i], j->s->train.len[i], j->s->train.label[i]);
  }
}

static double imdb_train(void *state, const uint32_t *idx, size_t n, size_t batch, lrn_pool *pool) {
  imdb_state *s = state;
  unsigned nth = lrn_pool_size(pool);
  if (nth > TRAIN_MAX_THREADS) nth = TRAIN_MAX_THREADS;
  double loss = 0;
  for (size_t b = 0; b < n; b += batch) {
    imdb_job j = {s, idx + b, n - b < batch ? n - b : batch};
    lrn_pool_run(pool, imdb_batch_fn, &j);
    float lr = s->lr / (float)j.n, w_old[IMDB_DIM];
    memcpy(w_old, s->w, sizeof w_old);
    for (unsigned t = 0; t < nth; t++) {
      imdb_grad *g = &s->g[t];
      loss += g->loss;
      /* Embedding rows first, with the output weights the gradient was taken at. */
      for (size_t k = 0; k < g->nt; k++) {
        float *e = s->emb + (size_t)g->touch[k].tok * IMDB_DIM, c = lr * g->touch[k].coef;
        for (int d = 0; d < IMDB_DIM; d++) e[d] -= c * w_old[d];
      }
      for (int d = 0; d < IMDB_DIM; d++) s->w[d] -= lr * g->gw[d];
      s->b -= lr * g->gb;
      memset(g->gw, 0, sizeof g->gw);
      g->gb = 0;
      g->nt = 0;
      g->loss = 0;
    }
  }
  return n ? loss / (double)n : 0.0;
}

static double imdb_eval(void *state) {
  imdb_state *s = state;
  const lrn_docs *d = s->held_is_tail ? &s->train : &s->held;
  size_t off = s->held_is_tail ? s->ntrain : 0;
  double loss = 0;
  for (size_t i = 0; i < s->nheld; i++) loss += imdb_sample(s, NULL, d->tok[off + i], d->len[off + i], d->label[off + i]);
  return s->nheld ? loss / (double)s->nheld : NAN;
}

/* --- the learner's hooks. Flat layout: emb (buckets x IMDB_DIM) | w | b. */
#define IMDB_NEMB ((size_t)LRN_IMDB_BUCKETS * IMDB_DIM)

static void imdb_model(const void *state, lrn_model *md) {
  (void)state;
  md->rows = LRN_IMDB_BUCKETS;
  md->row_dim = IMDB_DIM;
  md->dense = IMDB_DIM + 1;
  md->classes = 2;
}

static void imdb_params(const void *state, float *p) {
  const imdb_state *s = state;
  memcpy(p, s->emb, IMDB_NEMB * sizeof *p);
  memcpy(p + IMDB_NEMB, s->w, sizeof s->w);
  p[IMDB_NEMB + IMDB_DIM] = s->b;
}

static int imdb_label(const void *state, size_t i) { return ((const imdb_state *)state)->train.label[i]; }
static size_t imdb_held(const void *state) { return ((const imdb_state *)state)->nheld; }
static void *imdb_scratch_create(const void *state) {
  (void)state;
  return NULL;
}
static void imdb_scratch_free(void *scratch) { (void)scratch; }

static double imdb_grad_d(const void *state, void *scratch, const float *p, size_t i, double *g, lrn_rows *rows) {
  const imdb_state *s = state;
  (void)scratch;
  const uint32_t *tok = s->train.tok[i];
  uint32_t len = s->train.len[i];
  int label = s->train.label[i];
  const float *w = p + IMDB_NEMB;
  float h[IMDB_DIM], z;
  double loss = imdb_forward(p, w, w[IMDB_DIM], tok, len, label, h, &z);
  float inv = 1.0f / (float)len;
  float pr = (float)(1.0 / (1.0 + exp(-(double)z)));
  float dz = pr - (float)label, coef = dz * inv;
  double *gw = g + IMDB_NEMB;
  for (int d = 0; d < IMDB_DIM; d++) gw[d] += (double)(dz * h[d]);
  gw[IMDB_DIM] += (double)dz;
  /* d loss / d emb[tok] = coef * w per occurrence; w is fixed for the batch,
   * so only the coefficients are summed here and imdb_finish multiplies once
   * per row (one add per token instead of IMDB_DIM). */
  for (uint32_t k = 0; k < len; k++) {
    lrn_rows_touch(rows, tok[k]);
    rows->coef[tok[k]] += (double)coef;
  }
  return loss;
}

static void imdb_finish(const void *state, const float *p, double *g, lrn_rows *rows) {
  (void)state;
  const float *w = p + IMDB_NEMB;
  for (size_t r = 0; r < rows->n; r++) {
    uint32_t row = rows->list[r];
    double c = rows->coef[row], *ge = g + (size_t)row * IMDB_DIM;
    for (int d = 0; d < IMDB_DIM; d++) ge[d] = c * (double)w[d];
    rows->coef[row] = 0;
  }
}

static double imdb_eval1(const void *state, void *scratch, const float *p, size_t i, int *correct) {
  const imdb_state *s = state;
  (void)scratch;
  const lrn_docs *d = s->held_is_tail ? &s->train : &s->held;
  size_t k = (s->held_is_tail ? s->ntrain : 0) + i;
  const float *w = p + IMDB_NEMB;
  float h[IMDB_DIM], z;
  double loss = imdb_forward(p, w, w[IMDB_DIM], d->tok[k], d->len[k], d->label[k], h, &z);
  *correct = (z > 0) == (d->label[k] != 0);
  return loss;
}

static size_t imdb_count(const void *state) { return ((const imdb_state *)state)->ntrain; }
static const char *imdb_describe(const void *state) { return ((const imdb_state *)state)->describe; }

static void imdb_destroy(void *state) {
  imdb_state *s = state;
  if (!s) return;
  lrn_docs_fini(&s->train);
  lrn_docs_fini(&s->held);
  for (int t = 0; t < TRAIN_MAX_THREADS; t++) free(s->g[t].touch);
  free(s->emb);
  free(s);
}

static hs_status imdb_load(const lrn_train_cfg *cfg, void **state, hs_error *err) {
  *state = NULL;
  if (!cfg->data)
    return hs_error_set(err, HS_ENOENT,
                         "--data: imdb needs the aclImdb folder (aclImdb/train/{pos,neg}/*.txt, from "
                         "ai.stanford.edu/~amaas/data/sentiment); `hetsim-probe synth imdb DIR` writes a "
                         "synthetic one in that layout");
  imdb_state *s = hs_calloc(1, sizeof *s);
  char *tr = lrn_xasprintf("%s/train", cfg->data), *te = lrn_xasprintf("%s/test", cfg->data);
  size_t cap = cfg->max_samples ? cfg->max_samples : 5000;
  hs_status st = lrn_docs_load(tr, cap, &s->train, err);
  if (st == HS_OK) {
    char *tp = lrn_xasprintf("%s/pos", te);
    s->held_is_tail = !lrn_exists(tp);
    free(tp);
    if (!s->held_is_tail) st = lrn_docs_load(te, cfg->max_held ? cfg->max_held : 500, &s->held, err);
  }
  if (st == HS_OK && s->held_is_tail && s->train.n < 10)
    st = hs_error_set(err, HS_EPARSE, "%s: only %zu reviews; need at least 10", tr, s->train.n);
  if (st != HS_OK) {
    free(tr);
    free(te);
    imdb_destroy(s);
    return st;
  }
  s->nheld = s->held_is_tail ? s->train.n / 10 : s->held.n;
  s->ntrain = s->held_is_tail ? s->train.n - s->nheld : s->train.n;
  s->emb = hs_malloc((size_t)LRN_IMDB_BUCKETS * IMDB_DIM * sizeof *s->emb);
  uint64_t x = cfg->seed ^ 0x1d8bULL;
  for (size_t i = 0; i < (size_t)LRN_IMDB_BUCKETS * IMDB_DIM; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull; /* LCG: init only */
    s->emb[i] = (float)((double)(x >> 40) * 0x1p-24 - 0.5) * 0.2f;
  }
  s->lr = cfg->lr > 0 ? (float)cfg->lr : (float)IMDB_LR;
  snprintf(s->describe, sizeof s->describe,
           "imdb: embedding bag (%u hashed unigrams x %d) + logistic output on %zu reviews from %s, held-out loss on "
           "%zu %s reviews%s",
           LRN_IMDB_BUCKETS, IMDB_DIM, s->ntrain, tr, s->nheld, s->held_is_tail ? "tail" : "test",
           train_synthetic(cfg->data) ? " (SYNTHETIC reviews in the real aclImdb layout, written by hetsim-probe synth)"
                                      : "");
  free(tr);
  free(te);
  *state = s;
  return HS_OK;
}

/* --------------------------------------------------------------- registry */
#define MLP_HOOKS \
  mlp_model, mlp_params, mlp_label, mlp_held, mlp_scratch_create, mlp_scratch_free, mlp_grad, NULL, mlp_eval1

static const lrn_trainer_type TRAINERS[] = {
    {"mnist", "/usr/share/datasets/fashion-mnist",
     "Fashion-MNIST IDX files (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], optional t10k-*): "
     "Debian package dataset-fashion-mnist",
     mnist_load, mlp_count, mlp_train, mlp_eval, mlp_describe, mnist_destroy, MLP_HOOKS, MNIST_LR},
    {"era5", NULL, "CSV extract of one ERA5 grid point: header time,t2m,<more variables>, hourly rows", era5_load,
     mlp_count, mlp_train, mlp_eval, mlp_describe, era5_destroy, MLP_HOOKS, ERA5_LR},
    {"imdb", NULL, "aclImdb folder: train/{pos,neg}/<id>_<rating>.txt (test/ optional)", imdb_load, imdb_count,
     imdb_train, imdb_eval, imdb_describe, imdb_destroy, imdb_model, imdb_params, imdb_label, imdb_held,
     imdb_scratch_create, imdb_scratch_free, imdb_grad_d, imdb_finish, imdb_eval1, IMDB_LR},
};

const lrn_trainer_type *lrn_trainer_at(size_t i) {
  return i < sizeof TRAINERS / sizeof TRAINERS[0] ? &TRAINERS[i] : NULL;
}

const lrn_trainer_type *lrn_trainer_find(const char *name) {
  for (size_t i = 0; lrn_trainer_at(i); i++)
    if (strcmp(TRAINERS[i].name, name) == 0) return &TRAINERS[i];
  return NULL;
}
