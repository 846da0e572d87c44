/* test_agc_residual.c: the residual error of small codes (k = 4 workers)
 * against closed forms.
 *
 * Three figures of the same quantity E||ghat - g||^2 must agree:
 *   enumeration  all 2^k straggler patterns, each weighted by its
 *                probability, with the quantiser's exact variance V(m_i)
 *                added for every worker that arrives (the quantisers are
 *                independent and unbiased, so given a pattern the error is
 *                ||sum_arrived w_i m_i - g||^2 + sum_arrived w_i^2 V(m_i));
 *   closed form  agc_code_expected (bias + straggle + quant), the figure the
 *                regime writes as residual_exp;
 *   simulation   the mean of ||ghat - g||^2 over DRAWS draws of the regime's
 *                own decode (agc_code_decode: arrivals drawn at p, each
 *                message quantised from its own stream); it must lie within
 *                4 standard errors of the enumeration (the standard error
 *                from the draws' sample variance: a false alarm has
 *                probability about 6e-5 under the normal approximation, and
 *                the draws are seeded, so the verdict never changes).
 * The planner's prediction n^2 / S (units of ||g_bar||^2) is exact when every
 * partition gradient equals g_bar and D matches the quantiser's variance at
 * the transmitted bits (d_rule measured with equal bits); with differing
 * partition gradients it bounds the error of the nonnegative interval layout
 * (in units of max_j ||g_j||^2) but not that of the shared layout, whose
 * negative coefficients enlarge the messages of unreliable workers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_rng.h"
#include "base/hs_util.h"
#include "regime_agc.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "test_tmpdir.h"

#define K 4
#define DIM 6
#define DRAWS 20000

static const double P[K] = {0.1, 0.2, 0.3, 0.4};
/* g_bar, and four partition gradients that differ (same order of size). */
static const double GBAR[DIM] = {3.0, -4.0, 1.5, 0.25, -0.75, 2.0};
static const double GHET[K][DIM] = {{3.0, -4.0, 1.5, 0.25, -0.75, 2.0},
                                    {-1.0, 2.0, 3.5, -2.0, 1.0, 0.5},
                                    {2.5, 1.0, -3.0, 1.5, 2.0, -1.0},
                                    {0.5, -2.5, 0.0, 3.0, -1.5, 2.5}};

static agc_opts opts(uint32_t z_res, char *alloc, char *layout) {
  static char scheme[] = "proposed";
  agc_opts o = {0};
  o.scheme = scheme;
  o.allocator = alloc;
  o.layout = layout;
  o.z_res = z_res;
  o.offset = 1;
  o.lambda = 1;
  return o;
}

static double sq_norm(const double *x) {
  double s = 0;
  for (size_t q = 0; q < DIM; q++) s += x[q] * x[q];
  return s;
}

/* E||ghat - g||^2 by enumerating the 2^k arrival patterns. */
static double enumerate(const agc_code *c, const double *const *g) {
  double m[K][DIM], var[K], gsum[DIM] = {0}, e = 0;
  for (size_t j = 0; j < c->n; j++)
    for (size_t q = 0; q < DIM; q++) gsum[q] += g[j][q];
  for (size_t i = 0; i < K; i++) {
    agc_code_message(c, i, g, DIM, m[i]);
    var[i] = c->z[i] ? hs_agc_quant_variance(m[i], DIM, c->z[i]) : 0;
  }
  for (unsigned pat = 0; pat < (1u << K); pat++) {
    double pr = 1, d[DIM], v = 0;
    for (size_t q = 0; q < DIM; q++) d[q] = -gsum[q];
    for (size_t i = 0; i < K; i++) {
      bool in = pat >> i & 1u;
      pr *= in ? 1 - P[i] : P[i];
      if (!in || !c->z[i]) continue;
      for (size_t q = 0; q < DIM; q++) d[q] += c->w[i] * m[i][q];
      v += c->w[i] * c->w[i] * var[i];
    }
    e += pr * (sq_norm(d) + v);
  }
  return e;
}

static double closed_form(const agc_code *c, const double *const *g, agc_residual *r) {
  double msg[DIM], mean[DIM];
  agc_code_expected(c, P, g, DIM, msg, mean, r);
  return r->bias + r->straggle + r->quant;
}

/* Mean and standard error of ||ghat - g||^2 over DRAWS decodes. */
static void simulate(const agc_code *c, const double *const *g, double *mean, double *se) {
  hs_rng st;
  hs_rng_init(&st, 11, 0x7465, 1);
  double gsum[DIM] = {0}, msg[DIM], gh[DIM], s = 0, s2 = 0;
  for (size_t j = 0; j < c->n; j++)
    for (size_t q = 0; q < DIM; q++) gsum[q] += g[j][q];
  for (uint32_t t = 0; t < DRAWS; t++) {
    bool arrived[K];
    for (size_t i = 0; i < K; i++) arrived[i] = hs_rng_uniform(&st) >= P[i];
    agc_code_decode(c, g, DIM, arrived, 5, t, msg, gh, NULL);
    for (size_t q = 0; q < DIM; q++) gh[q] -= gsum[q];
    double e = sq_norm(gh);
    s += e;
    s2 += e * e;
  }
  *mean = s / DRAWS;
  *se = sqrt((s2 / DRAWS - *mean * *mean) / (DRAWS - 1));
}

static void three_agree(const agc_code *c, const double *const *g, const char *what) {
  agc_residual r;
  double en = enumerate(c, g), cf = closed_form(c, g, &r), mean, se;
  cr_expect_float_eq(cf, en, 1e-12 * en, "%s: closed form %.12g, enumeration %.12g", what, cf, en);
  simulate(c, g, &mean, &se);
  cr_expect(fabs(mean - en) <= 4 * se, "%s: simulated %.6g +- %.3g, exact %.6g", what, mean, se,
            en);
}

static const double *const *equal_grads(void) {
  static const double *g[K] = {GBAR, GBAR, GBAR, GBAR};
  return g;
}

static const double *const *differing_grads(void) {
  static const double *g[K] = {GHET[0], GHET[1], GHET[2], GHET[3]};
  return g;
}

Test(agc_residual, enumeration_closed_form_and_simulation_agree) {
  static char lag[] = "lag", shared[] = "shared", interval[] = "interval";
  char *layouts[] = {shared, interval};
  for (size_t l = 0; l < 2; l++) {
    agc_opts o = opts(16, lag, layouts[l]);
    for (int s = AGC_PROPOSED; s <= AGC_EHD; s++) {
      agc_code c;
      hs_error err = {0};
      cr_assert_eq(agc_code_build(&c, (agc_scheme)s, &o, P, K, K, 1.20125, 3, &err), HS_OK,
                   "%s", err.msg);
      char what[64];
      snprintf(what, sizeof what, "%s/%s equal g", agc_scheme_names[s], layouts[l]);
      three_agree(&c, equal_grads(), what);
      snprintf(what, sizeof what, "%s/%s differing g", agc_scheme_names[s], layouts[l]);
      three_agree(&c, differing_grads(), what);
      agc_code_free(&c);
    }
  }
}

/* Equal bits (z = 5 for all) and D = the quantiser's relative variance on
 * g_bar at z = 5 times M^2 = 15^2: the planner's n^2/S x ||g_bar||^2 is the
 * exact error, for either layout (with equal g_j only row sums matter). */
Test(agc_residual, planner_is_exact_with_equal_gradients_and_measured_d) {
  static char eq[] = "equal", shared[] = "shared", interval[] = "interval";
  double d = hs_agc_quant_variance(GBAR, DIM, 5) / sq_norm(GBAR) * 15.0 * 15.0;
  char *layouts[] = {shared, interval};
  for (size_t l = 0; l < 2; l++) {
    agc_opts o = opts(16, eq, layouts[l]);
    agc_code c;
    hs_error err = {0};
    cr_assert_eq(agc_code_build(&c, AGC_PROPOSED, &o, P, K, K, d, 3, &err), HS_OK, "%s", err.msg);
    for (size_t i = 0; i < K; i++) cr_assert_eq(c.z[i], 5);
    double en = enumerate(&c, equal_grads()), pred = c.predicted * sq_norm(GBAR);
    cr_expect_float_eq(pred, en, 1e-12 * en, "%s: planner %.12g, enumeration %.12g", layouts[l],
                       pred, en);
    agc_residual r;
    closed_form(&c, equal_grads(), &r);
    cr_expect_float_eq(r.quant_model, r.quant, 1e-12 * r.quant, "omega model = exact variance");
    agc_code_free(&c);
  }
}

/* Orthogonal g_j of equal norm (the extreme of partition gradients that
 * differ): the planner's bound n^2/S x max_j ||g_j||^2 (model quantiser)
 * holds for the interval layout and fails for the shared one, whose workers
 * 1 and 2 send (Y_i - 1) g_0 + g_(i+1), of squared norm (Y_i - 1)^2 + 1
 * instead of Y_i^2 (1.003 for 0.893, 1.197 for 0.309). */
Test(agc_residual, only_the_interval_layout_keeps_the_planner_bound) {
  static char lag[] = "lag", shared[] = "shared", interval[] = "interval";
  static double orth[K][DIM];
  static const double *g[K] = {orth[0], orth[1], orth[2], orth[3]};
  for (size_t j = 0; j < K; j++) orth[j][j] = 2.0;
  double gmax = 4.0;
  double model[2];
  char *layouts[] = {shared, interval};
  for (size_t l = 0; l < 2; l++) {
    agc_opts o = opts(16, lag, layouts[l]);
    agc_code c;
    hs_error err = {0};
    cr_assert_eq(agc_code_build(&c, AGC_PROPOSED, &o, P, K, K, 1.20125, 3, &err), HS_OK, "%s",
                 err.msg);
    agc_residual r;
    closed_form(&c, g, &r);
    model[l] = (r.bias + r.straggle + r.quant_model) / (c.predicted * gmax);
    agc_code_free(&c);
  }
  cr_expect_gt(model[0], 1.0, "shared exceeds the bound: %g", model[0]);
  cr_expect_leq(model[1], 1.0, "interval keeps it: %g", model[1]);
}

/* The interval layout of spec case A (paper-consistent, lag bits): shares
 * Y = (2.156084508, 0.945011472, 0.556076088, 0.342827931) laid end to end. */
Test(agc_residual, interval_layout_known_answer) {
  static char lag[] = "lag", interval[] = "interval";
  agc_opts o = opts(16, lag, interval);
  agc_code c;
  hs_error err = {0};
  cr_assert_eq(agc_code_build(&c, AGC_PROPOSED, &o, P, K, K, 1.20125, 3, &err), HS_OK, "%s",
               err.msg);
  const size_t row[] = {0, 3, 5, 6, 7}, col[] = {0, 1, 2, 2, 3, 3, 3};
  const double coef[] = {1, 1, 0.156084508, 0.843915492, 0.10109598, 0.556076088, 0.342827931};
  cr_assert_eq(c.L.nnz, 7);
  for (size_t i = 0; i <= K; i++) cr_expect_eq(c.L.row[i], row[i]);
  for (size_t e = 0; e < 7; e++) {
    cr_expect_eq(c.L.col[e], col[e]);
    cr_expect_float_eq(c.L.coef[e], coef[e], 1e-8, "entry %zu: %.10f", e, c.L.coef[e]);
  }
  agc_code_free(&c);
}

/* d_rule measured without learning: D is the quantiser's relative variance on
 * the seeded normal vector at the equal split's bits (Z_res / k + offset = 5,
 * M = 15) times M^2, and the run plans with it: its residual_pred is the
 * planner's prediction for that D. Scenario: tests/data/agc's three boards. */
Test(agc_residual, measured_d_plans_with_the_quantisers_variance) {
  const char *text =
      "{\"name\": \"t\", \"seed\": 7, \"task\": \"mnist\", \"model_bytes\": 4000,"
      " \"rounds\": 1, \"samples_per_round\": 300,"
      " \"regime\": {\"kind\": \"agc\", \"d_rule\": \"measured\", \"z_res\": 12,"
      "  \"p_rule\": \"given\", \"p\": [0.1, 0.2, 0.3], \"dim\": 1000},"
      " \"policy\": {\"kind\": \"equal\"},"
      " \"devices\": [{\"name\": \"fast\", \"profile\": \"det-fast.json\", \"link\": \"lan\"},"
      "  {\"name\": \"mid\", \"profile\": \"det-mid.json\", \"link\": \"lan\"},"
      "  {\"name\": \"slow\", \"profile\": \"det-slow.json\", \"link\": \"lan\"}],"
      " \"network\": {\"server\": \"lan\", \"links\": {\"lan\": {\"bandwidth_mbps\": 1000}}}}";
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "t.json", HS_SOURCE_DIR "/tests/data/agc", NULL, 0, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char dir[] = "/tmp/hs-agc-res-XXXXXX";
  cr_assert_not_null(test_mkdtemp_at(dir));
  hs_run_opts ro = {.out_dir = dir};
  hs_summary sum;
  cr_assert_eq(hs_run(sc, &ro, &sum, &err), HS_OK, "%s", err.msg);
  hs_scenario_destroy(sc);
  char path[256];
  snprintf(path, sizeof path, "%s/agc.csv", dir);
  char *csv = hs_read_file(path, NULL, &err);
  cr_assert_not_null(csv, "%s", err.msg);
  /* the 14th field of the first data row is residual_pred */
  char *line = strchr(csv, '\n') + 1, *f = line;
  for (int c = 0; c < 13; c++) f = strchr(f, ',') + 1;
  double pred = strtod(f, NULL);
  hs_free(csv);
  const double p3[] = {0.1, 0.2, 0.3};
  double d = agc_omega_gaussian(1000, 5, 7) * 15.0 * 15.0;
  static char lag[] = "lag";
  agc_opts o = opts(12, lag, NULL);
  agc_code c;
  cr_assert_eq(agc_code_build(&c, AGC_PROPOSED, &o, p3, 3, 3, d, 7, &err), HS_OK, "%s", err.msg);
  cr_expect_float_eq(pred, c.predicted, 1e-12 * c.predicted, "run %.12g, planner %.12g", pred,
                     c.predicted);
  /* and it is not the theory's dim/4 nor a constant of the vector's size */
  cr_expect(fabs(d - 250.0) > 1.0, "D = %g", d);
  agc_code_free(&c);
}
