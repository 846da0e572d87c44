/* test_learn.c: the learner interface (learner.c) on small data sets in the
 * real layouts (test_learn_data.h; lrn_synth_imdb for aclImdb).
 *
 * Tolerances, stated once:
 *  - DDP: the weighted mean of the ranks' mean batch gradients (weights
 *    b_i / sum b) equals the union batch's mean gradient to 1e-12 relative to
 *    the largest component (both are double sums of the same float terms, in
 *    a different order). The float parameters after one step agree to one
 *    float ulp (a rounding of nearly equal doubles may fall either side);
 *    on these data sets they are bitwise equal, which is asserted too.
 *  - FedAvg with one participant, thread counts, repeated runs: bitwise. */
#include <criterion/criterion.h>
#include <math.h>

#include "learn/hs_learn.h"
#include "learn/hs_learn_parts.h"
#include "test_learn_data.h"

static float *model(const hs_learner *l) { return calloc(hs_learn_nparams(l), sizeof(float)); }

static double max_abs(const double *g, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fabs(g[i]) > m ? fabs(g[i]) : m;
  return m;
}

/* One DDP step against one single-process step on the union batch. */
static void ddp_check(hs_learner *l) {
  size_t np = hs_learn_nparams(l), ntrain = hs_learn_train_count(l);
  float *p0 = model(l), *pa = model(l), *pb = model(l);
  hs_learn_init_params(l, p0);
  /* three ranks with batches of 3, 5 and 8 samples */
  size_t b[3] = {3, 5, 8}, B = 16;
  uint32_t uni[16], *rk[3];
  for (size_t k = 0; k < B; k++) uni[k] = (uint32_t)((k * 37 + 11) % ntrain);
  rk[0] = uni;
  rk[1] = uni + 3;
  rk[2] = uni + 8;
  hs_learn_grad *gu = hs_learn_grad_create(l), *gr[3], *gd = hs_learn_grad_create(l);
  for (int i = 0; i < 3; i++) gr[i] = hs_learn_grad_create(l);
  double lu = hs_learn_batch_grad(l, p0, uni, B, gu), lr[3];
  hs_learn_batch_grad_many(l, p0, (const uint32_t *const *)rk, b, gr, lr, 3);
  double w[3] = {3.0 / 16, 5.0 / 16, 8.0 / 16};
  hs_learn_grad_combine(gd, (const hs_learn_grad *const *)gr, w, 3);
  cr_assert(fabs(lu - (3 * lr[0] + 5 * lr[1] + 8 * lr[2]) / 16) < 1e-12 * fabs(lu), "losses");
  const double *vu = hs_learn_grad_values(gu), *vd = hs_learn_grad_values(gd);
  double scale = max_abs(vu, np), worst = 0;
  cr_assert(scale > 0, "zero gradient: the test would prove nothing");
  for (size_t i = 0; i < np; i++) worst = fabs(vu[i] - vd[i]) > worst ? fabs(vu[i] - vd[i]) : worst;
  cr_assert(worst <= 1e-12 * scale, "DDP gradient off by %g (scale %g)", worst, scale);
  /* one step each from the same model with fresh optimiser states */
  memcpy(pa, p0, np * sizeof *pa);
  memcpy(pb, p0, np * sizeof *pb);
  hs_learn_optstate *sa = hs_learn_optstate_for(l), *sb = hs_learn_optstate_for(l);
  hs_learn_step(l, sa, pa, gu);
  hs_learn_step(l, sb, pb, gd);
  size_t moved = 0, differ = 0;
  for (size_t i = 0; i < np; i++) {
    moved += pa[i] != p0[i];
    if (pa[i] != pb[i]) {
      differ++;
      cr_assert(nextafterf(pa[i], pb[i]) == pb[i], "parameter %zu: %a vs %a, more than one ulp", i, (double)pa[i],
                (double)pb[i]);
    }
  }
  cr_assert(moved > 0, "the step moved nothing");
  cr_expect_eq(differ, 0, "%zu parameters one ulp apart", differ);
  hs_learn_optstate_destroy(sa);
  hs_learn_optstate_destroy(sb);
  for (int i = 0; i < 3; i++) hs_learn_grad_destroy(gr[i]);
  hs_learn_grad_destroy(gu);
  hs_learn_grad_destroy(gd);
  free(p0);
  free(pa);
  free(pb);
}

Test(learn, ddp_step_equals_union_batch_mlp) {
  char *dir = tl_mnist(120, 8, 1);
  cr_assert_not_null(dir);
  hs_learn_opt_kind kinds[3] = {HS_LEARN_SGD, HS_LEARN_MOMENTUM, HS_LEARN_ADAM};
  for (int k = 0; k < 3; k++) {
    hs_learner *l = NULL;
    hs_error e = {HS_OK, ""};
    cr_assert_eq(tl_learner(dir, kinds[k], 0.05, 4, 2, &l, &e), HS_OK, "%s", e.msg);
    ddp_check(l);
    hs_learn_destroy(l);
  }
  tl_rmrf(dir);
  free(dir);
}

Test(learn, ddp_step_equals_union_batch_embedding_bag) {
  char *dir = NULL;
  hs_learner *l = NULL;
  hs_error e = {HS_OK, ""};
  cr_assert_eq(tl_synth_learner("imdb", 40, 2, 2, &dir, &l, &e), HS_OK, "%s", e.msg);
  cr_assert_eq(hs_learn_classes(l), 2);
  cr_assert(strstr(hs_learn_describe(l), "SYNTHETIC"));
  ddp_check(l);
  hs_learn_destroy(l);
  tl_rmrf(dir);
  free(dir);
}

/* Plain local training by hand: the participant's draws, batch by batch,
 * with a fresh optimiser state. */
static void local_by_hand(hs_learner *l, unsigned p, uint64_t draw, size_t n, size_t batch, float *m) {
  uint32_t *idx = malloc(n * sizeof *idx);
  cr_assert_eq(hs_learn_draw(l, p, draw, n, idx), n);
  hs_learn_grad *g = hs_learn_grad_create(l);
  hs_learn_optstate *s = hs_learn_optstate_for(l);
  for (size_t b = 0; b < n; b += batch) {
    size_t nb = n - b < batch ? n - b : batch;
    hs_learn_batch_grad(l, m, idx + b, nb, g);
    hs_learn_step(l, s, m, g);
  }
  hs_learn_optstate_destroy(s);
  hs_learn_grad_destroy(g);
  free(idx);
}

Test(learn, fedavg_with_one_participant_is_local_training) {
  char *dir = tl_mnist(150, 8, 1);
  cr_assert_not_null(dir);
  hs_learn_opt_kind kinds[2] = {HS_LEARN_SGD, HS_LEARN_ADAM};
  for (int k = 0; k < 2; k++) {
    hs_learner *l = NULL;
    hs_error e = {HS_OK, ""};
    cr_assert_eq(tl_learner(dir, kinds[k], kinds[k] == HS_LEARN_ADAM ? 0.01 : 0.1, 8, 1, &l, &e), HS_OK);
    hs_learn_part_cfg pc = {HS_LEARN_IID, 1, 0, NULL};
    cr_assert_eq(hs_learn_partition(l, &pc, &e), HS_OK);
    size_t np = hs_learn_nparams(l);
    float *g0 = model(l), *out = model(l), *agg = model(l), *hand = model(l);
    hs_learn_init_params(l, g0);
    memcpy(hand, g0, np * sizeof *hand);
    /* 45 samples: five full batches of 8 and one of 5 */
    hs_learn_job j = {0, 7, 45, g0, out, NULL, 0, 0, 0, 0};
    cr_assert_eq(hs_learn_train_many(l, &j, 1, &e), HS_OK, "%s", e.msg);
    double w = 45;
    const float *ms[1] = {out};
    hs_learn_aggregate(l, ms, &w, 1, agg);
    local_by_hand(l, 0, 7, 45, 8, hand);
    cr_assert(memcmp(agg, hand, np * sizeof *agg) == 0, "FedAvg of one != local training (opt %d)", kinds[k]);
    cr_assert(memcmp(agg, g0, np * sizeof *agg) != 0, "training moved nothing");
    cr_assert_eq(j.trained, 45);
    cr_assert(j.loss_sum > 0 && j.loss_sq_sum > 0);
    free(g0);
    free(out);
    free(agg);
    free(hand);
    hs_learn_destroy(l);
  }
  tl_rmrf(dir);
  free(dir);
}

/* A FedAvg round of five participants and an evaluation with `threads`. */
static void round_with(const char *dir, unsigned threads, float *agg, double *loss, double *acc, double *tl) {
  hs_learner *l = NULL;
  hs_error e = {HS_OK, ""};
  cr_assert_eq(tl_learner(dir, HS_LEARN_MOMENTUM, 0.05, 8, threads, &l, &e), HS_OK, "%s", e.msg);
  hs_learn_part_cfg pc = {HS_LEARN_DIRICHLET, 5, 1.0, NULL};
  cr_assert_eq(hs_learn_partition(l, &pc, &e), HS_OK, "%s", e.msg);
  size_t np = hs_learn_nparams(l);
  float *g = model(l), *outs = calloc(5 * np, sizeof(float));
  hs_learn_init_params(l, g);
  hs_learn_job jobs[5];
  double w[5];
  const float *ms[5];
  for (int round = 0; round < 3; round++) {
    for (unsigned p = 0; p < 5; p++) {
      jobs[p] = (hs_learn_job){p, (uint64_t)round, 10 + 7 * p, g, outs + p * np, NULL, 0, 0, 0, 0};
      w[p] = (double)jobs[p].samples;
      ms[p] = outs + p * np;
    }
    cr_assert_eq(hs_learn_train_many(l, jobs, 5, &e), HS_OK, "%s", e.msg);
    hs_learn_aggregate(l, ms, w, 5, g);
  }
  *tl = 0;
  for (unsigned p = 0; p < 5; p++) *tl += jobs[p].loss_sum;
  memcpy(agg, g, np * sizeof *agg);
  hs_learn_eval(l, g, 0, loss, acc);
  free(g);
  free(outs);
  hs_learn_destroy(l);
}

Test(learn, thread_count_does_not_change_results) {
  char *dir = tl_mnist(200, 8, 1);
  cr_assert_not_null(dir);
  size_t np = lrn_mlp_nparams(64, 128, 10);
  float *a = calloc(np, sizeof *a), *b = calloc(np, sizeof *b), *c = calloc(np, sizeof *c);
  double la, aa, ta, lb, ab, tb, lc, ac, tc;
  round_with(dir, 1, a, &la, &aa, &ta);
  round_with(dir, 2, b, &lb, &ab, &tb);
  round_with(dir, 5, c, &lc, &ac, &tc);
  cr_assert(memcmp(a, b, np * sizeof *a) == 0 && memcmp(a, c, np * sizeof *a) == 0, "models differ");
  cr_assert(la == lb && la == lc && aa == ab && aa == ac && ta == tb && ta == tc, "losses differ");
  cr_assert(isfinite(la) && aa >= 0 && aa <= 1);
  free(a);
  free(b);
  free(c);
  tl_rmrf(dir);
  free(dir);
}

Test(learn, training_learns_and_uses_the_harness_model) {
  /* The learner's double gradient is the harness's float one (same forward
   * and backward code): compare per parameter to 1e-5 relative. */
  char *dir = tl_mnist(300, 8, 1);
  cr_assert_not_null(dir);
  hs_learner *l = NULL;
  hs_error e = {HS_OK, ""};
  cr_assert_eq(tl_learner(dir, HS_LEARN_SGD, 0.1, 16, 2, &l, &e), HS_OK, "%s", e.msg);
  cr_assert_eq(hs_learn_held_count(l), 75, "t10k images: %zu", hs_learn_held_count(l));
  size_t np = hs_learn_nparams(l);
  cr_assert_eq(np, lrn_mlp_nparams(64, 128, 10));
  float *p = model(l);
  hs_learn_init_params(l, p);
  uint32_t idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  hs_learn_grad *g = hs_learn_grad_create(l);
  hs_learn_batch_grad(l, p, idx, 8, g);
  lrn_mlp m;
  lrn_mlp_view(&m, 64, 128, 10, p);
  lrn_mlp_grad fg;
  lrn_mlp_grad_init(&fg, &m);
  float x[64], h[128], o[10];
  /* inputs as the mnist reader scales them: pixel / 255 */
  char path[512];
  snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
  lrn_idx img;
  cr_assert_eq(lrn_idx_load(path, 0, &img, &e), HS_OK, "%s", e.msg);
  for (int k = 0; k < 8; k++) {
    for (int j = 0; j < 64; j++) x[j] = (float)img.data[(size_t)k * 64 + (size_t)j] * (1.0f / 255.0f);
    lrn_mlp_sample(&m, &fg, x, hs_learn_label(l, (size_t)k), 0, h, o);
  }
  lrn_idx_fini(&img);
  const double *gv = hs_learn_grad_values(g);
  double scale = max_abs(gv, np), worst = 0;
  const float *parts[4] = {fg.w1, fg.b1, fg.w2, fg.b2};
  size_t lens[4] = {64 * 128, 128, 128 * 10, 10}, off = 0;
  for (int q = 0; q < 4; q++)
    for (size_t i = 0; i < lens[q]; i++, off++) {
      double d = fabs((double)parts[q][i] / 8 - gv[off]);
      worst = d > worst ? d : worst;
    }
  cr_assert_eq(off, np);
  cr_assert(scale > 0 && worst <= 1e-5 * scale, "learner vs harness gradient: %g (scale %g)", worst, scale);
  lrn_mlp_grad_fini(&fg);
  /* Training on 4 participants for a few rounds lowers the held-out loss and
   * beats chance (10 %) clearly on this learnable set. */
  hs_learn_part_cfg pc = {HS_LEARN_IID, 4, 0, NULL};
  cr_assert_eq(hs_learn_partition(l, &pc, &e), HS_OK);
  double l0, a0, l1, a1;
  hs_learn_eval(l, p, 0, &l0, &a0);
  float *outs = calloc(4 * np, sizeof(float));
  for (int r = 0; r < 8; r++) {
    hs_learn_job j[4];
    double w[4];
    const float *ms[4];
    for (unsigned q = 0; q < 4; q++) {
      j[q] = (hs_learn_job){q, (uint64_t)r, 64, p, outs + q * np, NULL, 0, 0, 0, 0};
      w[q] = 64;
      ms[q] = outs + q * np;
    }
    cr_assert_eq(hs_learn_train_many(l, j, 4, &e), HS_OK);
    hs_learn_aggregate(l, ms, w, 4, p);
  }
  hs_learn_eval(l, p, 0, &l1, &a1);
  cr_assert(l1 < l0 * 0.7, "held-out loss %g -> %g", l0, l1);
  cr_assert(a1 > 0.5 && a1 > a0, "accuracy %g -> %g", a0, a1);
  free(outs);
  hs_learn_grad_destroy(g);
  free(p);
  hs_learn_destroy(l);
  tl_rmrf(dir);
  free(dir);
}

Test(learn, aggregate_and_mix_closed_forms) {
  char *dir = tl_mnist(40, 4, 0);
  cr_assert_not_null(dir);
  hs_learner *l = NULL;
  hs_error e = {HS_OK, ""};
  cr_assert_eq(tl_learner(dir, HS_LEARN_SGD, 0.1, 4, 1, &l, &e), HS_OK, "%s", e.msg);
  size_t np = hs_learn_nparams(l);
  float *a = model(l), *b = model(l), *out = model(l);
  for (size_t i = 0; i < np; i++) {
    a[i] = 1.0f;
    b[i] = 4.0f;
  }
  /* weights 1 and 3: (1 * 1 + 3 * 4) / 4 = 3.25, exactly */
  const float *ms[2] = {a, b};
  double w[2] = {1, 3};
  hs_learn_aggregate(l, ms, w, 2, out);
  for (size_t i = 0; i < np; i++) cr_assert_eq(out[i], 3.25f);
  /* mix a = 0.25: 0.75 * 3.25 + 0.25 * 1 = 2.6875, exactly */
  hs_learn_mix(l, out, a, 0.25);
  for (size_t i = 0; i < np; i++) cr_assert_eq(out[i], 2.6875f);
  free(a);
  free(b);
  free(out);
  hs_learn_destroy(l);
  tl_rmrf(dir);
  free(dir);
}

Test(learn, bad_input_is_one_line) {
  hs_error e = {HS_OK, ""};
  hs_learner *l = NULL;
  hs_learn_cfg c = {"mnist", "/nonexistent/fm", 0, 0, 1, 8, {HS_LEARN_SGD, 0, 0, 0, 0, 0, 0, 0}, 1, HS_LEARN_LAST_KEEP};
  cr_assert_eq(hs_learn_create(&c, &l, &e), HS_ENOENT);
  cr_assert(strstr(e.msg, "/nonexistent/fm/train-images-idx3-ubyte") && strstr(e.msg, "dataset-fashion-mnist"), "%s",
            e.msg);
  cr_assert_null(l);
  c.task = "cifar";
  cr_assert_eq(hs_learn_create(&c, &l, &e), HS_EINVAL);
  cr_assert_str_eq(e.msg, "task: \"cifar\" is not a task (mnist, era5, imdb)");
  c.task = "mnist";
  c.batch = 0;
  cr_assert_eq(hs_learn_create(&c, &l, &e), HS_ERANGE);
  cr_assert(strstr(e.msg, "batch: 0"), "%s", e.msg);
  c.batch = 8;
  c.opt.lr = -0.5;
  cr_assert_eq(hs_learn_create(&c, &l, &e), HS_ERANGE);
  cr_assert_str_eq(e.msg, "opt.lr: -0.5 is not > 0");
  c.task = "imdb";
  c.data = NULL;
  c.opt.lr = 0;
  cr_assert_eq(hs_learn_create(&c, &l, &e), HS_EMISSING);
  cr_assert(strstr(e.msg, "data: task imdb has no default data") && strstr(e.msg, "aclImdb"), "%s", e.msg);
  /* jobs before a partition, and for a participant outside it */
  char *dir = tl_mnist(40, 4, 0);
  cr_assert_not_null(dir);
  cr_assert_eq(tl_learner(dir, HS_LEARN_SGD, 0.1, 4, 1, &l, &e), HS_OK, "%s", e.msg);
  float *s = model(l), *o = model(l);
  hs_learn_job j = {0, 0, 4, s, o, NULL, 0, 0, 0, 0};
  cr_assert_eq(hs_learn_train(l, &j, &e), HS_ESTATE);
  cr_assert(strstr(e.msg, "no partition"), "%s", e.msg);
  hs_learn_part_cfg pc = {HS_LEARN_IID, 2, 0, NULL};
  cr_assert_eq(hs_learn_partition(l, &pc, &e), HS_OK);
  hs_learn_job js[2] = {{0, 0, 4, s, o, NULL, 0, 0, 0, 0}, {2, 0, 4, s, o, NULL, 0, 0, 0, 0}};
  cr_assert_eq(hs_learn_train_many(l, js, 2, &e), HS_ERANGE);
  cr_assert_str_eq(e.msg, "jobs[1].participant: 2; the partition has 2 participants");
  free(s);
  free(o);
  hs_learn_destroy(l);
  tl_rmrf(dir);
  free(dir);
}

Test(learn, embedding_bag_gradient_matches_finite_differences) {
  /* At a point where the output weights are not zero (at the initial model
   * they are, and so is every embedding gradient), central differences of
   * the batch's mean loss with a step of 0.05 (the loss comes from a float
   * logit, so smaller steps drown in rounding) agree with the gradient to
   * 1e-3 relative + 2e-6: embedding rows (the sparse,
   * coefficient-then-expand path) and the dense output weights. */
  char *dir = NULL;
  hs_learner *l = NULL;
  hs_error e = {HS_OK, ""};
  cr_assert_eq(tl_synth_learner("imdb", 20, 4, 1, &dir, &l, &e), HS_OK, "%s", e.msg);
  size_t np = hs_learn_nparams(l);
  float *p = model(l);
  hs_learn_init_params(l, p);
  for (size_t i = np - 33; i < np; i++) p[i] = 0.3f * (float)((int)(i % 7) - 3);
  uint32_t idx[4] = {0, 1, 2, 3};
  hs_learn_grad *g = hs_learn_grad_create(l), *g2 = hs_learn_grad_create(l);
  hs_learn_batch_grad(l, p, idx, 4, g);
  const double *v = hs_learn_grad_values(g);
  size_t rows = 0, dense = 0;
  for (size_t i = 0; i < np && (rows < 8 || dense < 8); i++) {
    bool is_dense = i >= np - 33;
    if (v[i] == 0 || (is_dense ? dense >= 8 : rows >= 8 || i % 3 != 0)) continue;
    float o = p[i], h = 0.05f;
    p[i] = o + h;
    double lp = hs_learn_batch_grad(l, p, idx, 4, g2);
    p[i] = o - h;
    double lm = hs_learn_batch_grad(l, p, idx, 4, g2);
    p[i] = o;
    double fd = (lp - lm) / (2 * (double)h);
    cr_assert(fabs(fd - v[i]) <= 1e-3 * fabs(v[i]) + 2e-6, "parameter %zu: gradient %g, differences %g", i, v[i], fd);
    if (is_dense) dense++;
    else rows++;
  }
  cr_assert(rows == 8 && dense == 8, "checked %zu rows' and %zu dense entries", rows, dense);
  hs_learn_grad_destroy(g);
  hs_learn_grad_destroy(g2);
  free(p);
  hs_learn_destroy(l);
  tl_rmrf(dir);
  free(dir);
}
