/* train.c: the trainers' cases (pool, mnist, era5, imdb on small synthetic
 * data in the real formats) and the learner interface over them. */
#include "cases.h"

/* ---------------------------------------------------------------- trainers */
static bool cs_train(const char *task, const char *data, char *why, size_t cap) {
  const lrn_trainer_type *t = lrn_trainer_find(task);
  CHECK(t, "no trainer %s", task);
  lrn_train_cfg cfg = {data, 0, 7, 0, 0};
  void *st = NULL;
  hs_error e = {HS_OK, ""};
  CHECK(t->load(&cfg, &st, &e) == HS_OK, "%s load: %s", task, e.msg);
  size_t n = t->train_count(st);
  uint32_t idx[64];
  for (size_t i = 0; i < 64; i++) idx[i] = (uint32_t)(i % n);
  lrn_pool *p1 = lrn_pool_create(1), *p3 = lrn_pool_create(3);
  double l0 = t->eval_loss(st);
  double tl1 = t->train(st, idx, 64, 8, p1);
  double tl3 = t->train(st, idx, 64, 8, p3);
  for (int k = 0; k < 20; k++) t->train(st, idx, 64, 8, p3);
  double l1 = t->eval_loss(st);
  lrn_pool_destroy(p1);
  lrn_pool_destroy(p3);
  bool syn = strstr(t->describe(st), "SYNTHETIC") != NULL;
  t->destroy(st);
  CHECK(isfinite(l0) && isfinite(l1) && isfinite(tl1) && isfinite(tl3), "%s: non-finite loss", task);
  CHECK(tl3 < tl1 * 1.5, "%s: training loss exploded %g -> %g", task, tl1, tl3);
  CHECK(strcmp(task, "era5") != 0 || syn, "era5: synthetic marker not reported");
  return true;
}

PROBE_CASE_FN(train, mnist) {
  uint32_t di[3] = {40, 6, 6}, dl[1] = {40};
  size_t li = 0, ll = 0, gl = 0;
  unsigned char *im = probe_cs_idx(3, di, 5, &li), *lb = probe_cs_idx(1, dl, 2, &ll);
  unsigned char *g = probe_cs_gzip_stored(im, li, &gl);
  bool w = probe_put_bin(tmp, "fm/train-images-idx3-ubyte.gz", g, gl) &&
           probe_put_bin(tmp, "fm/train-labels-idx1-ubyte", lb, ll);
  free(im);
  free(g);
  free(lb);
  CHECK(w, "cannot write IDX files");
  char *d = probe_cs_path(tmp, "fm");
  bool ok = cs_train("mnist", d, why, cap);
  /* a missing dataset names the path and the Debian package */
  const lrn_trainer_type *t = lrn_trainer_find("mnist");
  char *none = probe_cs_path(tmp, "empty");
  lrn_train_cfg cfg = {none, 0, 1, 0, 0};
  void *st = NULL;
  hs_error e = {HS_OK, ""};
  hs_status s = t->load(&cfg, &st, &e);
  free(none);
  free(d);
  if (!ok) return false;
  CHECK(s == HS_ENOENT && strstr(e.msg, "dataset-fashion-mnist") && strstr(e.msg, "empty/train-images"),
        "missing dataset: \"%s\"", e.msg);
  /* labels that do not match the images */
  uint32_t dl2[1] = {39};
  lb = probe_cs_idx(1, dl2, 2, &ll);
  probe_put_bin(tmp, "fm/train-labels-idx1-ubyte", lb, ll);
  free(lb);
  d = probe_cs_path(tmp, "fm");
  cfg.data = d;
  s = t->load(&cfg, &st, &e);
  free(d);
  CHECK(s == HS_EPARSE && strstr(e.msg, "39 labels for 40 images"), "label count: \"%s\"", e.msg);
  return true;
}

PROBE_CASE_FN(train, era5) {
  char *p = probe_cs_path(tmp, "era5.csv");
  hs_error e = {HS_OK, ""};
  hs_status st = lrn_synth_era5(p, 80, 3, &e);
  bool ok = st == HS_OK && cs_train("era5", p, why, cap);
  free(p);
  CHECK(st == HS_OK, "synth era5: %s", e.msg);
  return ok;
}

PROBE_CASE_FN(train, imdb) {
  char *p = probe_cs_path(tmp, "aclImdb");
  hs_error e = {HS_OK, ""};
  hs_status st = lrn_synth_imdb(p, 40, 3, &e);
  bool ok = st == HS_OK && cs_train("imdb", p, why, cap);
  free(p);
  CHECK(st == HS_OK, "synth imdb: %s", e.msg);
  return ok;
}

typedef struct {
  int sum[4];
} pool_ctx;
static void cs_pool_fn(void *ctx, unsigned tid, unsigned n) {
  pool_ctx *c = ctx;
  c->sum[tid] += (int)(tid + 1) * (int)n;
}

PROBE_CASE_FN(train, pool) {
  (void)tmp;
  lrn_pool *p = lrn_pool_create(4);
  pool_ctx c = {{0, 0, 0, 0}};
  for (int k = 0; k < 100; k++) lrn_pool_run(p, cs_pool_fn, &c);
  lrn_pool_destroy(p);
  CHECK(c.sum[0] == 400 && c.sum[3] == 1600, "pool: %d %d (want 400 1600)", c.sum[0], c.sum[3]);
  return true;
}

/* The learner library (hs_learn.h) on the board too: rounds of two
 * participants are bitwise the same on 1 and 2 threads, and one DDP step's
 * gradient (ranks of 3 and 5 samples, weights 3/8 and 5/8) is the union
 * batch's to 1e-12, for the embedding bag (imdb) and the regressor (era5,
 * whose held-out loss must also fall: the embedding bag learns too slowly on
 * 40 synthetic reviews for that to be a fair check). */
static bool cs_learn_round(const char *task, const char *data, unsigned threads, float **model, size_t *npo,
                           double *loss0, double *loss1, char *why, size_t cap) {
  hs_learn_cfg c = {task, data, 0, 0, 3, 4, {HS_LEARN_SGD, 0, 0, 0, 0, 0, 0, 0}, threads, HS_LEARN_LAST_KEEP};
  hs_learner *l = NULL;
  hs_error e = {HS_OK, ""};
  CHECK(hs_learn_create(&c, &l, &e) == HS_OK, "learner: %s", e.msg);
  hs_learn_part_cfg pc = {HS_LEARN_IID, 2, 0, NULL};
  CHECK(hs_learn_partition(l, &pc, &e) == HS_OK, "partition: %s", e.msg);
  size_t np = hs_learn_nparams(l);
  float *g = hs_malloc(np * sizeof *g), *o = hs_malloc(2 * np * sizeof *o);
  hs_learn_init_params(l, g);
  double acc;
  hs_learn_eval(l, g, 0, loss0, &acc);
  for (int r = 0; r < 8; r++) {
    hs_learn_job j[2] = {{0, (uint64_t)r, 12, g, o, NULL, 0, 0, 0, 0},
                         {1, (uint64_t)r, 20, g, o + np, NULL, 0, 0, 0, 0}};
    CHECK(hs_learn_train_many(l, j, 2, &e) == HS_OK, "train: %s", e.msg);
    const float *ms[2] = {o, o + np};
    double w[2] = {12, 20};
    hs_learn_aggregate(l, ms, w, 2, g);
  }
  hs_learn_eval(l, g, 0, loss1, &acc);
  uint32_t uni[8] = {0, 3, 5, 7, 9, 11, 13, 15}, *rk[2] = {uni, uni + 3};
  size_t b[2] = {3, 5};
  hs_learn_grad *gu = hs_learn_grad_create(l), *gd = hs_learn_grad_create(l);
  hs_learn_grad *gr[2] = {hs_learn_grad_create(l), hs_learn_grad_create(l)};
  hs_learn_batch_grad(l, g, uni, 8, gu);
  hs_learn_batch_grad_many(l, g, (const uint32_t *const *)rk, b, gr, NULL, 2);
  double wr[2] = {3.0 / 8, 5.0 / 8}, worst = 0, scale = 0;
  hs_learn_grad_combine(gd, (const hs_learn_grad *const *)gr, wr, 2);
  const double *vu = hs_learn_grad_values(gu), *vd = hs_learn_grad_values(gd);
  for (size_t i = 0; i < np; i++) {
    scale = fabs(vu[i]) > scale ? fabs(vu[i]) : scale;
    worst = fabs(vu[i] - vd[i]) > worst ? fabs(vu[i] - vd[i]) : worst;
  }
  for (int i = 0; i < 2; i++) hs_learn_grad_destroy(gr[i]);
  hs_learn_grad_destroy(gu);
  hs_learn_grad_destroy(gd);
  free(o);
  hs_learn_destroy(l);
  *model = g;
  *npo = np;
  CHECK(scale > 0 && worst <= 1e-12 * scale, "DDP gradient off by %g (scale %g)", worst, scale);
  return true;
}

PROBE_CASE_FN(train, learner) {
  char *acl = probe_cs_path(tmp, "aclImdb"), *csv = probe_cs_path(tmp, "era5.csv");
  hs_error e = {HS_OK, ""};
  bool made = lrn_synth_imdb(acl, 40, 3, &e) == HS_OK && lrn_synth_era5(csv, 200, 3, &e) == HS_OK;
  const char *task[2] = {"imdb", "era5"}, *data[2] = {acl, csv};
  bool ok = made;
  for (int k = 0; k < 2 && ok; k++) {
    float *m1 = NULL, *m2 = NULL;
    size_t np = 0;
    double a0, a1, b0, b1;
    ok = cs_learn_round(task[k], data[k], 1, &m1, &np, &a0, &a1, why, cap) &&
         cs_learn_round(task[k], data[k], 2, &m2, &np, &b0, &b1, why, cap);
    bool same = ok && memcmp(m1, m2, np * sizeof *m1) == 0 && a1 == b1;
    free(m1);
    free(m2);
    if (ok && !same) ok = snprintf(why, cap, "%s: 1 and 2 threads give different models", task[k]) < 0;
    if (ok && k == 1 && !(isfinite(a0) && a1 < a0))
      ok = snprintf(why, cap, "era5: held-out loss %g -> %g", a0, a1) < 0;
  }
  free(acl);
  free(csv);
  CHECK(made, "synth: %s", e.msg);
  return ok;
}
