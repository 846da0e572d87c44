/* test_learn_options.c: the training options of the learner library (issue
 * 25): FedAvg weightings, the short last batch, the per-job rate and the
 * schedules, gradient clipping and weight decay, the server optimisers, and
 * the whole held-out set by default. Known answers worked out by hand on a
 * two-parameter vector, or the same computation rebuilt from the library's
 * lower-level calls on a tiny MLP (test_learn_data.h), compared bitwise.
 * Each test also checks that the option changes the result, so it fails
 * when the option is ignored. */
#include <criterion/criterion.h>
#include <math.h>

#include "learn/hs_learn.h"
/* The shared data header's learner helpers are not called here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "test_learn_data.h"
#pragma GCC diagnostic pop

/* ---------------------------------------------------------- optimiser */

static hs_learn_optstate *state(hs_learn_opt_kind k, double lr, double wd, double clip) {
  hs_learn_opt o = {.kind = k, .lr = lr, .momentum = 0.9, .weight_decay = wd, .clip_norm = clip};
  return hs_learn_optstate_create(&o, 2);
}

Test(learn_options, clipping_by_global_norm) {
  /* g = (3, 4), |g| = 5 > 1: clipped to (0.6, 0.8); SGD lr 1 from (0, 0). */
  hs_learn_optstate *s = state(HS_LEARN_SGD, 1, 0, 1);
  float p[2] = {0, 0};
  double g[2] = {3, 4};
  hs_learn_opt_apply(s, p, g, 2);
  cr_expect_float_eq(p[0], -0.6, 1e-7);
  cr_expect_float_eq(p[1], -0.8, 1e-7);
  /* under the norm: untouched, bitwise the plain step */
  double h[2] = {0.3, 0.4};
  hs_learn_opt_apply(s, p, h, 2);
  cr_expect_eq(p[0], (float)((double)(float)-0.6 - 0.3));
  cr_expect_eq(p[1], (float)((double)(float)-0.8 - 0.4));
  hs_learn_optstate_destroy(s);
}

Test(learn_options, coupled_weight_decay) {
  /* SGD lr 0.1, wd 0.5, p = (2, -1), g = (1, 0): g' = g + 0.5 p = (2, -0.5),
   * p = (1.8, -0.95). */
  hs_learn_optstate *s = state(HS_LEARN_SGD, 0.1, 0.5, 0);
  float p[2] = {2, -1};
  double g[2] = {1, 0};
  hs_learn_opt_apply(s, p, g, 2);
  cr_expect_float_eq(p[0], 1.8, 1e-7);
  cr_expect_float_eq(p[1], -0.95, 1e-7);
  hs_learn_optstate_destroy(s);
  /* momentum sees the decayed gradient: v1 = (2, -0.5), p1 = (1.8, -0.95);
   * g1' = (1, 0) + 0.5 p1 = (1.9, -0.475), v2 = 0.9 v1 + g1' = (3.7, -0.925),
   * p2 = p1 - 0.1 v2 = (1.43, -0.8575). */
  s = state(HS_LEARN_MOMENTUM, 0.1, 0.5, 0);
  float q[2] = {2, -1};
  hs_learn_opt_apply(s, q, g, 2);
  hs_learn_opt_apply(s, q, g, 2);
  cr_expect_float_eq(q[0], 1.43, 1e-6);
  cr_expect_float_eq(q[1], -0.8575, 1e-6);
  hs_learn_optstate_destroy(s);
  hs_learn_opt bad = {.kind = HS_LEARN_SGD, .weight_decay = -1};
  hs_error e = {0};
  cr_expect_eq(hs_learn_opt_check(&bad, &e), HS_ERANGE);
  cr_expect(strstr(e.msg, "opt.weight_decay") != NULL, "%s", e.msg);
  hs_learn_opt bad2 = {.kind = HS_LEARN_SGD, .clip_norm = NAN};
  cr_expect_eq(hs_learn_opt_check(&bad2, &e), HS_ERANGE);
  cr_expect(strstr(e.msg, "opt.clip_norm") != NULL, "%s", e.msg);
}

Test(learn_options, schedules_known_answers) {
  hs_learn_sched c = {.kind = HS_LEARN_LR_CONSTANT};
  cr_expect_eq(hs_learn_sched_lr(&c, 0.1, 7, 10), 0.1);
  hs_learn_sched st = {.kind = HS_LEARN_LR_STEP, .step_rounds = 2, .gamma = 0.5};
  cr_expect_float_eq(hs_learn_sched_lr(&st, 0.1, 0, 10), 0.1, 1e-15);
  cr_expect_float_eq(hs_learn_sched_lr(&st, 0.1, 1, 10), 0.1, 1e-15);
  cr_expect_float_eq(hs_learn_sched_lr(&st, 0.1, 2, 10), 0.05, 1e-15);
  cr_expect_float_eq(hs_learn_sched_lr(&st, 0.1, 5, 10), 0.025, 1e-15);
  hs_learn_sched co = {.kind = HS_LEARN_LR_COSINE, .min_lr = 0.01};
  cr_expect_float_eq(hs_learn_sched_lr(&co, 0.1, 0, 4), 0.1, 1e-15);
  cr_expect_float_eq(hs_learn_sched_lr(&co, 0.1, 2, 4), 0.055, 1e-15);
  cr_expect_float_eq(hs_learn_sched_lr(&co, 0.1, 1, 4), 0.01 + 0.09 * (1 + sqrt(0.5)) / 2, 1e-15);
  hs_learn_sched w = {.kind = HS_LEARN_LR_CONSTANT, .warmup_rounds = 4};
  cr_expect_float_eq(hs_learn_sched_lr(&w, 0.1, 0, 10), 0.025, 1e-15);
  cr_expect_float_eq(hs_learn_sched_lr(&w, 0.1, 3, 10), 0.1, 1e-15);
  cr_expect_float_eq(hs_learn_sched_lr(&w, 0.1, 4, 10), 0.1, 1e-15);
  cr_expect_eq(hs_learn_sched_kind_find("cosine"), HS_LEARN_LR_COSINE);
  cr_expect_eq(hs_learn_sched_kind_find("linear"), -1);
}

Test(learn_options, server_optimisers) {
  /* FedAvgM, eta 1, mu 0.9: the first step lands on the aggregate bitwise;
   * the second moves by 0.9 d1 + d2. */
  hs_learn_opt m = {.kind = HS_LEARN_MOMENTUM, .lr = 1, .momentum = 0.9};
  hs_learn_optstate *s = hs_learn_optstate_create(&m, 2);
  float x[2] = {1.0f, -2.0f}, a1[2] = {0.75f, -1.5f}, a2[2] = {0.5f, -1.25f};
  double scratch[2];
  hs_learn_server_step(s, x, a1, 2, scratch);
  cr_expect_eq(memcmp(x, a1, sizeof x), 0, "the first FedAvgM step is the aggregate");
  /* d2 = x - a2 = (0.25, -0.25); v2 = 0.9 (0.25, -0.5) + d2 = (0.475, -0.7) */
  hs_learn_server_step(s, x, a2, 2, scratch);
  cr_expect_float_eq(x[0], 0.75 - 0.475, 1e-7);
  cr_expect_float_eq(x[1], -1.5 + 0.7, 1e-7);
  hs_learn_optstate_destroy(s);
  /* FedAdam, eta 0.01, beta1 0.9, beta2 0.99, tau 1e-3, bias-corrected: the
   * first step is eta d / (|d| + tau) per parameter. */
  hs_learn_opt ad = {.kind = HS_LEARN_ADAM, .lr = 0.01, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-3};
  s = hs_learn_optstate_create(&ad, 2);
  float y[2] = {1.0f, -2.0f};
  hs_learn_server_step(s, y, a1, 2, scratch);
  cr_expect_float_eq(y[0], 1.0 - 0.01 * 0.25 / (0.25 + 1e-3), 1e-7);
  cr_expect_float_eq(y[1], -2.0 + 0.01 * 0.5 / (0.5 + 1e-3), 1e-7);
  hs_learn_optstate_destroy(s);
}

/* -------------------------------------------------- learner-level options */

/* An SGD learner (batch 4) at rate lr on two IID parts. */
static hs_learner *learner_at(const char *dir, hs_learn_last_batch lb, double lr) {
  hs_learn_cfg c = {.task = "mnist", .data = dir, .seed = 5, .batch = 4,
                    .opt = {.kind = HS_LEARN_SGD, .lr = lr}, .threads = 1, .last_batch = lb};
  hs_learner *l = NULL;
  hs_error e = {0};
  cr_assert_eq(hs_learn_create(&c, &l, &e), HS_OK, "%s", e.msg);
  hs_learn_part_cfg pc = {HS_LEARN_IID, 2, 0, NULL};
  cr_assert_eq(hs_learn_partition(l, &pc, &e), HS_OK, "%s", e.msg);
  return l;
}

static hs_learner *learner(const char *dir, hs_learn_last_batch lb) { return learner_at(dir, lb, 0.1); }

/* The job of n samples rebuilt as batches of the sizes given, bitwise. */
static void rebuild(hs_learner *l, const float *start, size_t n, const size_t *sizes, size_t nb, float *out) {
  size_t np = hs_learn_nparams(l);
  uint32_t idx[64];
  cr_assert(n <= 64);
  hs_learn_draw(l, 0, 3, n, idx);
  memcpy(out, start, np * sizeof *out);
  hs_learn_grad *g = hs_learn_grad_create(l);
  hs_learn_optstate *s = hs_learn_optstate_for(l);
  size_t at = 0;
  for (size_t k = 0; k < nb; k++) {
    hs_learn_batch_grad(l, out, idx + at, sizes[k], g);
    hs_learn_step(l, s, out, g);
    at += sizes[k];
  }
  hs_learn_optstate_destroy(s);
  hs_learn_grad_destroy(g);
}

Test(learn_options, last_batch_keep_drop_merge) {
  char *dir = tl_mnist(120, 8, 1);
  cr_assert_not_null(dir);
  static const hs_learn_last_batch kinds[3] = {HS_LEARN_LAST_KEEP, HS_LEARN_LAST_DROP, HS_LEARN_LAST_MERGE};
  /* n = 9, batch 4: keep 4+4+1, drop 4+4, merge 4+5 */
  static const size_t sizes[3][3] = {{4, 4, 1}, {4, 4, 0}, {4, 5, 0}};
  static const size_t nbat[3] = {3, 2, 2}, trained[3] = {9, 8, 9};
  float *res[3];
  for (int k = 0; k < 3; k++) {
    hs_learner *l = learner(dir, kinds[k]);
    size_t np = hs_learn_nparams(l);
    float *start = malloc(np * sizeof *start), *want = malloc(np * sizeof *want);
    res[k] = malloc(np * sizeof *res[k]);
    hs_learn_init_params(l, start);
    hs_learn_job j = {.participant = 0, .draw = 3, .samples = 9, .start = start, .out = res[k]};
    hs_error e = {0};
    cr_assert_eq(hs_learn_train(l, &j, &e), HS_OK, "%s", e.msg);
    cr_expect_eq(j.trained, trained[k], "kind %d trained %zu", k, j.trained);
    rebuild(l, start, 9, sizes[k], nbat[k], want);
    cr_expect_eq(memcmp(want, res[k], np * sizeof *want), 0, "kind %d: not the batches it promises", k);
    /* shorter than a batch: drop trains nothing, merge and keep one batch */
    hs_learn_job s = {.participant = 0, .draw = 3, .samples = 3, .start = start, .out = want};
    cr_assert_eq(hs_learn_train(l, &s, &e), HS_OK, "%s", e.msg);
    cr_expect_eq(s.trained, kinds[k] == HS_LEARN_LAST_DROP ? 0u : 3u);
    cr_expect_eq(memcmp(want, start, np * sizeof *want) == 0, kinds[k] == HS_LEARN_LAST_DROP);
    if (k == 2) {
      cr_expect_neq(memcmp(res[0], res[1], np * sizeof *want), 0, "keep and drop should differ");
      cr_expect_neq(memcmp(res[0], res[2], np * sizeof *want), 0, "keep and merge should differ");
    }
    free(start);
    free(want);
    hs_learn_destroy(l);
  }
  for (int k = 0; k < 3; k++) free(res[k]);
  cr_expect_eq(hs_learn_last_batch_find("merge"), HS_LEARN_LAST_MERGE);
  cr_expect_eq(hs_learn_last_batch_find("pad"), -1);
  tl_rmrf(dir);
  free(dir);
}

Test(learn_options, job_rate_is_the_optimisers_rate) {
  char *dir = tl_mnist(120, 8, 1);
  cr_assert_not_null(dir);
  hs_learner *l = learner(dir, HS_LEARN_LAST_KEEP);
  hs_learner *m = learner_at(dir, HS_LEARN_LAST_KEEP, 0.03);
  hs_error e = {0};
  size_t np = hs_learn_nparams(l);
  float *p = malloc(np * 4), *a = malloc(np * 4), *b = malloc(np * 4), *d = malloc(np * 4);
  hs_learn_init_params(l, p);
  hs_learn_job ja = {.participant = 1, .draw = 1, .samples = 10, .start = p, .out = a, .lr = 0.03};
  hs_learn_job jb = {.participant = 1, .draw = 1, .samples = 10, .start = p, .out = b};
  hs_learn_job jd = {.participant = 1, .draw = 1, .samples = 10, .start = p, .out = d};
  cr_assert_eq(hs_learn_train(l, &ja, &e), HS_OK);
  cr_assert_eq(hs_learn_train(m, &jb, &e), HS_OK);
  cr_assert_eq(hs_learn_train(l, &jd, &e), HS_OK); /* the worker's state back at 0.1 */
  cr_expect_eq(memcmp(a, b, np * 4), 0, "a job at 0.03 is a learner at 0.03");
  cr_expect_neq(memcmp(a, d, np * 4), 0, "and differs from one at 0.1");
  free(p);
  free(a);
  free(b);
  free(d);
  hs_learn_destroy(l);
  hs_learn_destroy(m);
  tl_rmrf(dir);
  free(dir);
}

Test(learn_options, fedavg_weightings) {
  char *dir = tl_mnist(120, 8, 1);
  cr_assert_not_null(dir);
  hs_learner *l = learner(dir, HS_LEARN_LAST_KEEP);
  size_t counts[3] = {10, 30, 60};
  hs_learn_part_cfg pc = {HS_LEARN_COUNTS, 3, 0, counts};
  hs_error e = {0};
  cr_assert_eq(hs_learn_partition(l, &pc, &e), HS_OK, "%s", e.msg);
  hs_learn_job j[2] = {{.participant = 2, .trained = 7}, {.participant = 0, .trained = 50}};
  double w[2];
  hs_learn_fedavg_weights(l, HS_LEARN_W_SAMPLES, j, 2, w);
  cr_expect(w[0] == 7 && w[1] == 50);
  hs_learn_fedavg_weights(l, HS_LEARN_W_DATA, j, 2, w);
  cr_expect(w[0] == 60 && w[1] == 10, "data sizes: %g %g", w[0], w[1]);
  hs_learn_fedavg_weights(l, HS_LEARN_W_UNIFORM, j, 2, w);
  cr_expect(w[0] == 1 && w[1] == 1);
  cr_expect_eq(hs_learn_weighting_find("data"), HS_LEARN_W_DATA);
  cr_expect_eq(hs_learn_weighting_find("size"), -1);
  hs_learn_destroy(l);
  tl_rmrf(dir);
  free(dir);
}

/* The default loads every held-out image: 1100 t10k images, more than the
 * 1000 the harness's default (and the learner's, before) kept. */
Test(learn_options, whole_held_out_set_by_default) {
  char *dir = tl_mnist(4400, 4, 1);
  cr_assert_not_null(dir);
  hs_learner *l = learner(dir, HS_LEARN_LAST_KEEP);
  cr_expect_eq(hs_learn_held_count(l), 1100);
  hs_learn_destroy(l);
  hs_learn_cfg c = {.task = "mnist", .data = dir, .seed = 5, .batch = 4, .max_held = 300,
                    .opt = {.kind = HS_LEARN_SGD}, .threads = 1};
  hs_error e = {0};
  cr_assert_eq(hs_learn_create(&c, &l, &e), HS_OK, "%s", e.msg);
  cr_expect_eq(hs_learn_held_count(l), 300);
  hs_learn_destroy(l);
  tl_rmrf(dir);
  free(dir);
}
