/* test_agc.c: the AGC planner against the spec's known answers (specs/agc.md
 * section 8, cases A and B: k = 4) and its allocator properties over random
 * inputs: sum b = Z_res, the DP beats every other allocator and every
 * allocation of a brute-force enumeration, pruned DP = unpruned DP. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "policies/hs_agc.h"

static const double P4[4] = {0.1, 0.2, 0.3, 0.4};
#define DA 1.20125 /* case A: the public code's tuned D for this p and Z = 16 */

static void expect_bits(const int64_t *got, const int64_t *want, size_t k, const char *what) {
  for (size_t i = 0; i < k; i++)
    cr_expect_eq(got[i], want[i], "%s: bits[%zu] = %lld, expected %lld", what, i, (long long)got[i],
                 (long long)want[i]);
}

static void expect_near(double got, double want, double tol, const char *what) {
  cr_expect(fabs(got - want) <= tol, "%s: %.12g, expected %.12g (tol %g)", what, got, want, tol);
}

static void expect_vec(const double *got, const double *want, size_t k, double tol, const char *what) {
  for (size_t i = 0; i < k; i++) {
    cr_expect(fabs(got[i] - want[i]) <= tol, "%s[%zu]: %.12g, expected %.12g", what, i, got[i],
              want[i]);
  }
}

static hs_agc_plan *plan4(double d, hs_agc_allocator a, int offset) {
  hs_agc_params pr;
  hs_agc_params_init(&pr);
  pr.p = P4;
  pr.k = 4;
  pr.d = d;
  pr.z_res = 16;
  pr.allocator = a;
  pr.offset = offset;
  hs_error err = {0};
  hs_agc_plan *P = hs_agc_plan_create(&pr, &err);
  cr_assert(P, "plan: %s", err.msg);
  return P;
}

Test(agc_kat, case_a_allocators) {
  const int64_t want[4] = {5, 4, 4, 3}, eq[4] = {4, 4, 4, 4};
  int64_t b[4];
  hs_error err = {0};
  for (int a = 0; a < HS_AGC_NALLOCATORS; a++) {
    cr_assert_eq(hs_agc_allocate((hs_agc_allocator)a, P4, 4, DA, 16, b, &err), HS_OK, "%s", err.msg);
    expect_bits(b, a == HS_AGC_EQUAL ? eq : want, 4, hs_agc_allocator_name((hs_agc_allocator)a));
  }
  expect_near(hs_agc_objective(P4, 4, DA, want), 16.490798680, 1e-9, "F(dp)");
  expect_near(hs_agc_objective(P4, 4, DA, eq), 16.212629233, 1e-9, "F(equal)");
}

Test(agc_kat, case_a_lag_trace) {
  double f[4];
  int64_t b[4];
  hs_error err = {0};
  cr_assert_eq(hs_agc_lag(P4, 4, DA, 16, b, f, &err), HS_OK, "%s", err.msg);
  const double want[4] = {9.0, 12.998097, 15.271650, 16.490799};
  for (int m = 0; m < 4; m++) expect_near(f[m], want[m], 1e-6, "F by m");
  /* the m = 2 and m = 3 candidates themselves */
  const int64_t b2[4] = {9, 7, 0, 0}, b3[4] = {6, 5, 5, 0};
  expect_near(hs_agc_objective(P4, 4, DA, b2), f[1], 1e-12, "F([9,7,0,0])");
  expect_near(hs_agc_objective(P4, 4, DA, b3), f[2], 1e-12, "F([6,5,5,0])");
}

/* the code of case A for one bit convention: wire bits, omega, c^-1, Y, R, kappa */
typedef struct kat_code {
  int64_t z[4];
  double om[4], ci[4], y[4], r, kappa;
} kat_code;

static void expect_code(const hs_agc_plan *P, const kat_code *w) {
  expect_bits(P->wire_bits, w->z, 4, "wire bits");
  expect_vec(P->omega, w->om, 4, 1e-9, "omega");
  expect_vec(P->c_inv, w->ci, 4, 1e-8, "c_inv");
  expect_vec(P->shares, w->y, 4, 1e-9, "Y");
  expect_near(P->predicted_error, w->r, 1e-9, "R");
  expect_near(P->kappa, w->kappa, 1e-9, "kappa");
}

Test(agc_kat, case_a_paper_consistent) {
  hs_agc_plan *P = plan4(DA, HS_AGC_DP, 1);
  const kat_code want = {{6, 5, 5, 4},
                         {0.00125, 0.005338889, 0.005338889, 0.024515306},
                         {8.888888889, 3.895998485, 2.292534706, 1.4133766},
                         {2.156084508, 0.945011472, 0.556076088, 0.342827931},
                         0.970238029,
                         0.942827082};
  expect_code(P, &want);
  expect_near(P->objective, 16.490798680, 1e-9, "F");
  cr_expect_eq(P->active, 4);
  hs_agc_plan_destroy(P);
}

/* the dense k x n matrix of a layout */
static void dense(const hs_agc_layout *L, size_t k, size_t n, double *A) {
  memset(A, 0, k * n * sizeof *A);
  for (size_t i = 0; i < k; i++)
    for (size_t e = L->row[i]; e < L->row[i + 1]; e++) A[i * n + L->col[e]] = L->coef[e];
}

Test(agc_kat, case_a_repo_as_run) {
  hs_agc_plan *P = plan4(DA, HS_AGC_LAG, 2);
  const kat_code want = {{7, 6, 6, 5},
                         {0.000302658, 0.00125, 0.00125, 0.005338889},
                         {8.972842964, 3.97515528, 2.323651452, 1.480242869},
                         {2.142526387, 0.949183566, 0.554839149, 0.353450898},
                         0.955115963,
                         0.943667978};
  expect_code(P, &want);
  expect_near(P->sum_c_inv, 16.751892565, 1e-8, "sum c_inv");
  const double w1[4] = {1.111111111, 1.25, 1.428571429, 1.666666667};
  const double w2[4] = {1.048519976, 1.179584973, 1.348097112, 1.572779964};
  expect_vec(P->weights, w1, 4, 1e-9, "lane-1 weight");
  expect_vec(P->weights_lane2, w2, 4, 1e-9, "lane-2 weight");
  double A[16];
  const double sh[16] = {1.142526387, 1, 0, 0, -0.050816434, 0, 1, 0,
                         -0.445160851, 0, 0, 1, 0.353450898, 0, 0, 0};
  const double st[16] = {1, 1.142526387, 0, 0, 0, -0.142526387, 1.091709953, 0,
                         0, 0, -0.091709953, 0.646549102, 0, 0, 0, 0.353450898};
  dense(&P->shared, 4, 4, A);
  expect_vec(A, sh, 16, 1e-9, "shared alpha");
  dense(&P->stair, 4, 4, A);
  expect_vec(A, st, 16, 1e-9, "stair alpha");
  cr_expect_eq(P->shared.nnz, 7);
  cr_expect_eq(P->stair.nnz, 7);
  hs_agc_plan_destroy(P);
}

Test(agc_kat, case_a_equal_bits_repo_as_run) {
  hs_agc_params pr;
  hs_agc_params_init(&pr);
  pr.p = P4, pr.k = 4, pr.d = DA, pr.z_res = 16, pr.offset = 2;
  const int64_t eq[4] = {4, 4, 4, 4};
  hs_error err = {0};
  hs_agc_plan *P = hs_agc_plan_from_bits(&pr, eq, &err);
  cr_assert(P, "%s", err.msg);
  expect_near(P->predicted_error, 0.959058815, 1e-9, "R with equal bits");
  hs_agc_plan_destroy(P);
}

Test(agc_kat, case_b) {
  const int64_t want[4] = {5, 4, 4, 3};
  int64_t b[4];
  hs_error err = {0};
  for (int a = 0; a < HS_AGC_EQUAL; a++) {
    cr_assert_eq(hs_agc_allocate((hs_agc_allocator)a, P4, 4, 1.0, 16, b, &err), HS_OK);
    expect_bits(b, want, 4, hs_agc_allocator_name((hs_agc_allocator)a));
  }
  expect_near(hs_agc_objective(P4, 4, 1.0, want), 16.546810067, 1e-9, "F");
  hs_agc_plan *P = plan4(1.0, HS_AGC_DP, 1);
  expect_near(P->predicted_error, 0.966953747, 1e-9, "R paper-consistent");
  hs_agc_plan_destroy(P);
  P = plan4(1.0, HS_AGC_EQUAL, 1);
  expect_near(P->objective, 16.312851311, 1e-9, "F(equal)");
  hs_agc_plan_destroy(P);
  P = plan4(1.0, HS_AGC_DP, 2);
  const double y[4] = {2.141875104, 0.949403277, 0.554775748, 0.353945871};
  expect_vec(P->shares, y, 4, 1e-9, "Y repo-as-run");
  expect_near(P->predicted_error, 0.954342940, 1e-9, "R repo-as-run");
  hs_agc_plan_destroy(P);
}

/* --- properties over random inputs ------------------------------------------ */

static void random_case(hs_agc_rng *r, size_t kmax, int64_t zmax, double *p, size_t *k, double *d,
                        int64_t *z) {
  *k = 1 + (size_t)(hs_agc_rng_next(r) % kmax);
  for (size_t i = 0; i < *k; i++) {
    double u = hs_agc_rng_uniform(r);
    /* some exact ties and some p = 0 */
    p[i] = u < 0.05 ? 0.0 : u < 0.15 ? 0.5 : 0.99 * hs_agc_rng_uniform(r);
  }
  *d = exp(log(0.01) + hs_agc_rng_uniform(r) * log(1e4)); /* 0.01 .. 100 */
  *z = 1 + (int64_t)(hs_agc_rng_next(r) % (uint64_t)zmax);
}

Test(agc_props, sums_and_dp_dominates) {
  hs_agc_rng r;
  hs_agc_rng_init(&r, 11, 1);
  double p[30];
  int64_t b[HS_AGC_NALLOCATORS][30], nb[30];
  for (int trial = 0; trial < 300; trial++) {
    size_t k;
    double d;
    int64_t z;
    random_case(&r, 30, 150, p, &k, &d, &z);
    hs_error err = {0};
    double f[HS_AGC_NALLOCATORS];
    for (int a = 0; a < HS_AGC_NALLOCATORS; a++) {
      cr_assert_eq(hs_agc_allocate((hs_agc_allocator)a, p, k, d, z, b[a], &err), HS_OK, "%s", err.msg);
      int64_t s = 0;
      for (size_t i = 0; i < k; i++) {
        cr_assert(b[a][i] >= 0);
        s += b[a][i];
      }
      cr_assert_eq(s, z, "trial %d: %s: sum %lld != %lld", trial,
                   hs_agc_allocator_name((hs_agc_allocator)a), (long long)s, (long long)z);
      f[a] = hs_agc_objective(p, k, d, b[a]);
    }
    for (int a = 1; a < HS_AGC_NALLOCATORS; a++)
      cr_assert(f[HS_AGC_DP] >= f[a] - 1e-12 * fabs(f[a]), "trial %d: dp %.15g < %s %.15g", trial,
                f[HS_AGC_DP], hs_agc_allocator_name((hs_agc_allocator)a), f[a]);
    cr_assert_eq(hs_agc_dp(p, k, d, z, false, nb, &err), HS_OK);
    for (size_t i = 0; i < k; i++)
      cr_assert_eq(nb[i], b[HS_AGC_DP][i], "trial %d: pruned DP differs at %zu", trial, i);
  }
}

/* all compositions of z into k parts: the DP's F is their maximum */
static double brute(const double *p, size_t k, double d, int64_t z, int64_t *b, size_t i) {
  if (i + 1 == k) {
    b[i] = z;
    return hs_agc_objective(p, k, d, b);
  }
  double best = -INFINITY;
  for (int64_t t = 0; t <= z; t++) {
    b[i] = t;
    double f = brute(p, k, d, z - t, b, i + 1);
    if (f > best) best = f;
  }
  return best;
}

Test(agc_props, dp_is_optimal_by_enumeration) {
  hs_agc_rng r;
  hs_agc_rng_init(&r, 12, 1);
  double p[5];
  int64_t b[5], tmp[5];
  for (int trial = 0; trial < 200; trial++) {
    size_t k;
    double d;
    int64_t z;
    random_case(&r, 5, 12, p, &k, &d, &z);
    hs_error err = {0};
    cr_assert_eq(hs_agc_allocate(HS_AGC_DP, p, k, d, z, b, &err), HS_OK);
    double best = brute(p, k, d, z, tmp, 0), f = hs_agc_objective(p, k, d, b);
    cr_assert(fabs(f - best) <= 1e-12 * best, "trial %d: dp %.15g, best %.15g", trial, f, best);
  }
}

Test(agc_props, lag_close_to_dp) {
  /* not a theorem: a regression guard on the heuristic's quality (spec: LAG =
   * DP on the known answers); within 1 % of the optimum on these inputs */
  hs_agc_rng r;
  hs_agc_rng_init(&r, 13, 1);
  double p[30];
  int64_t b[30];
  for (int trial = 0; trial < 100; trial++) {
    size_t k = 30;
    for (size_t i = 0; i < k; i++) p[i] = exp(-0.1 * (0.01 + 1.99 * hs_agc_rng_uniform(&r)));
    int64_t z = 1 + (int64_t)(hs_agc_rng_next(&r) % 150);
    hs_error err = {0};
    cr_assert_eq(hs_agc_allocate(HS_AGC_DP, p, k, 1.0, z, b, &err), HS_OK);
    double fdp = hs_agc_objective(p, k, 1.0, b);
    cr_assert_eq(hs_agc_allocate(HS_AGC_LAG, p, k, 1.0, z, b, &err), HS_OK);
    double flag = hs_agc_objective(p, k, 1.0, b);
    cr_expect(flag >= 0.99 * fdp, "trial %d (z %lld): lag %.12g vs dp %.12g", trial, (long long)z,
              flag, fdp);
  }
}

Test(agc_props, allocators_deterministic_and_named) {
  hs_agc_allocator a;
  hs_error err = {0};
  for (int i = 0; i < HS_AGC_NALLOCATORS; i++) {
    cr_assert_eq(hs_agc_allocator_lookup(hs_agc_allocator_name((hs_agc_allocator)i), &a, &err), HS_OK);
    cr_assert_eq((int)a, i);
  }
  cr_assert_eq(hs_agc_allocator_lookup("kkt", &a, &err), HS_EINVAL);
  cr_assert_str_eq(err.msg, "allocator: no allocator \"kkt\" (dp, lag, greedy, equal)");
  const double p[6] = {0.9, 0.5, 0.5, 0.2, 0.9, 0.0};
  int64_t b1[6], b2[6];
  for (int i = 0; i < HS_AGC_NALLOCATORS; i++) {
    hs_agc_allocate((hs_agc_allocator)i, p, 6, 3.0, 23, b1, &err);
    hs_agc_allocate((hs_agc_allocator)i, p, 6, 3.0, 23, b2, &err);
    cr_assert_arr_eq(b1, b2, sizeof b1);
  }
  /* equal: remainder to the most reliable, ties by index: 23 = 6*3 + 5 */
  hs_agc_allocate(HS_AGC_EQUAL, p, 6, 3.0, 23, b1, &err);
  const int64_t want[6] = {4, 4, 4, 4, 3, 4};
  expect_bits(b1, want, 6, "equal");
}

Test(agc_props, dp_refuses_tables_too_large) {
  static double p[10000];
  static int64_t b[10000];
  for (size_t i = 0; i < 10000; i++) p[i] = 0.5;
  hs_error err = {0};
  cr_assert_eq(hs_agc_allocate(HS_AGC_DP, p, 10000, 1.0, 50000, b, &err), HS_ERANGE);
  cr_assert(strstr(err.msg, "allocator: dp needs k*(z_res+1) = 10000*50001") == err.msg, "%s", err.msg);
  cr_assert(strstr(err.msg, "use lag"), "%s", err.msg);
}
