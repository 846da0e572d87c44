/* test_learn_optim.c: the optimisers (optim.c) and the random streams
 * (rng.c) of the learner library, against values worked out by hand.
 * The optimisers run on f(p) = (2 p1^2 + 0.5 p2^2) / 2 from p = (1, -2), so
 * g = (2 p1, 0.5 p2); lr 0.1 throughout. */
#include <criterion/criterion.h>
#include <math.h>

#include "learn/hs_learn.h"
#include "learn_internal.h"

static void quad_grad(const float *p, double *g) {
  g[0] = 2.0 * (double)p[0];
  g[1] = 0.5 * (double)p[1];
}

static hs_learn_optstate *opt(hs_learn_opt_kind k) {
  hs_learn_opt o = {k, 0.1, 0.9, 0.9, 0.999, 1e-8, 0, 0};
  return hs_learn_optstate_create(&o, 2);
}

Test(learn_optim, sgd_two_steps) {
  /* p1 = p0 - 0.1 g0 = (1 - 0.2, -2 + 0.1) = (0.8, -1.9);
   * p2 = p1 - 0.1 (1.6, -0.95) = (0.64, -1.805). */
  hs_learn_optstate *s = opt(HS_LEARN_SGD);
  float p[2] = {1, -2};
  double g[2];
  quad_grad(p, g);
  hs_learn_opt_apply(s, p, g, 2);
  cr_assert_eq(p[0], (float)0.8);
  cr_assert_eq(p[1], (float)-1.9);
  quad_grad(p, g);
  hs_learn_opt_apply(s, p, g, 2);
  cr_assert_float_eq(p[0], 0.64, 1e-6);
  cr_assert_float_eq(p[1], -1.805, 1e-6);
  hs_learn_optstate_destroy(s);
}

Test(learn_optim, momentum_two_steps) {
  /* v1 = g0 = (2, -1): p1 = (0.8, -1.9);
   * v2 = 0.9 v1 + g1 = (1.8 + 1.6, -0.9 - 0.95) = (3.4, -1.85): p2 = (0.46, -1.715).
   * After reset the first step is again plain SGD. */
  hs_learn_optstate *s = opt(HS_LEARN_MOMENTUM);
  float p[2] = {1, -2};
  double g[2];
  for (int k = 0; k < 2; k++) {
    quad_grad(p, g);
    hs_learn_opt_apply(s, p, g, 2);
  }
  cr_assert_float_eq(p[0], 0.46, 1e-6);
  cr_assert_float_eq(p[1], -1.715, 1e-6);
  hs_learn_optstate_reset(s);
  float q[2] = {1, -2};
  quad_grad(q, g);
  hs_learn_opt_apply(s, q, g, 2);
  cr_assert_eq(q[0], (float)0.8);
  hs_learn_optstate_destroy(s);
}

Test(learn_optim, adam_two_steps) {
  /* Step 1: m = 0.1 g, v = 0.001 g^2, bias-corrected m/sqrt(v) = sign(g):
   * p1 = p0 - 0.1 sign(g0) = (0.9, -1.9) (eps moves it by < 1e-8).
   * Step 2, g1 = (1.8, -0.95):
   *   m = 0.9 * 0.2 + 0.1 * 1.8 = 0.36,  mhat = 0.36 / 0.19
   *   v = 0.999 * 0.004 + 0.001 * 3.24 = 0.007236,  vhat = v / 0.001999
   *   p1 = 0.9 - 0.1 mhat / sqrt(vhat) = 0.80041222819...
   *   likewise p2 = -1.80016648663... */
  hs_learn_optstate *s = opt(HS_LEARN_ADAM);
  float p[2] = {1, -2};
  double g[2];
  quad_grad(p, g);
  hs_learn_opt_apply(s, p, g, 2);
  cr_assert_float_eq(p[0], 0.9, 1e-7);
  cr_assert_float_eq(p[1], -1.9, 1e-7);
  quad_grad(p, g);
  hs_learn_opt_apply(s, p, g, 2);
  cr_assert_float_eq(p[0], 0.800412228194683, 1e-6);
  cr_assert_float_eq(p[1], -1.8001664866339195, 1e-6);
  hs_learn_optstate_destroy(s);
}

Test(learn_optim, names_defaults_and_checks) {
  cr_assert_eq(hs_learn_opt_kind_find("sgd"), HS_LEARN_SGD);
  cr_assert_eq(hs_learn_opt_kind_find("adam"), HS_LEARN_ADAM);
  cr_assert_eq(hs_learn_opt_kind_find("rmsprop"), -1);
  hs_learn_opt o = {HS_LEARN_ADAM, 0, 0, 0, 0, 0, 0, 0};
  lrn_opt_resolve(&o, 0.5);
  cr_assert(o.lr == 0.5 && o.beta1 == 0.9 && o.beta2 == 0.999 && o.eps == 1e-8 && o.momentum == 0.9);
  hs_error e = {HS_OK, ""};
  hs_learn_opt bad = {HS_LEARN_SGD, -1, 0, 0, 0, 0, 0, 0};
  cr_assert_eq(hs_learn_opt_check(&bad, &e), HS_ERANGE);
  cr_assert_str_eq(e.msg, "opt.lr: -1 is not > 0");
  hs_learn_opt bad2 = {HS_LEARN_MOMENTUM, 0.1, 1.0, 0, 0, 0, 0, 0};
  cr_assert_eq(hs_learn_opt_check(&bad2, &e), HS_ERANGE);
  cr_assert(strstr(e.msg, "opt.momentum") != NULL, "%s", e.msg);
}

Test(learn_optim, xoshiro_reference_and_keyed_streams) {
  /* xoshiro256** from state {1, 2, 3, 4}: the published first outputs (the
   * same reference values policies/base's test_rng.c checks). */
  lrn_rng r = {{1, 2, 3, 4}};
  uint64_t want[] = {11520ULL, 0ULL, 1509978240ULL, 1215971899390074240ULL, 1216172134540287360ULL};
  for (int i = 0; i < 5; i++) cr_expect_eq(lrn_rng_next(&r), want[i], "draw %d", i);
  /* Keyed streams: a pure function of the key; one field changed, another stream. */
  lrn_rng a, b, c;
  lrn_rng_key(&a, 1, 2, 3, 4);
  lrn_rng_key(&b, 1, 2, 3, 4);
  lrn_rng_key(&c, 1, 2, 3, 5);
  uint64_t xa = lrn_rng_next(&a), xb = lrn_rng_next(&b), xc = lrn_rng_next(&c);
  cr_assert_eq(xa, xb);
  cr_assert_neq(xa, xc);
  /* below(n) stays in range and hits every value of a small range */
  int seen[7] = {0};
  for (int i = 0; i < 700; i++) seen[lrn_rng_below(&a, 7)]++;
  for (int k = 0; k < 7; k++) cr_assert(seen[k] > 60 && seen[k] < 140, "value %d seen %d times", k, seen[k]);
}

Test(learn_optim, gamma_moments) {
  /* Gamma(k, 1) has mean k and variance k; 20000 draws: the sample mean is
   * within 4 standard errors (sqrt(k / 20000)). Shape 0.1 goes through the
   * log form (boost), shape 3 through Marsaglia-Tsang alone. */
  double shapes[] = {0.1, 0.5, 3.0};
  for (int s = 0; s < 3; s++) {
    lrn_rng r;
    lrn_rng_key(&r, 11, (uint64_t)s, 99, 0);
    double k = shapes[s], sum = 0, sq = 0;
    const int n = 20000;
    for (int i = 0; i < n; i++) {
      double x = exp(lrn_rng_log_gamma(&r, k));
      sum += x;
      sq += x * x;
    }
    double mean = sum / n, var = sq / n - mean * mean;
    cr_assert(fabs(mean - k) < 4 * sqrt(k / n), "shape %g: mean %g", k, mean);
    cr_assert(fabs(var - k) < 0.15 * k, "shape %g: variance %g", k, var);
  }
}
