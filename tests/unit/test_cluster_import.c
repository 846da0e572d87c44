/* test_cluster_import.c: hetsim-probe import's fits with known answers:
 * overhead_s from the round/start_s columns (rounds of one size; sizes that
 * vary; a negative intercept written as 0 with tau through the origin; no
 * change without the columns), and the split of a shared per-round factor
 * from each board's own noise across several boards' logs. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

static void table(lrn_table *t, const char *text) {
  hs_error err = {HS_OK, ""};
  cr_assert_eq(lrn_csv_parse(text, strlen(text), t, &err), HS_OK, "%s", err.msg);
}

Test(cluster_import, overhead_rounds_of_one_size) {
  /* round 0: batches at 10 and 11.5, 1 s each: span 2.5, busy 2 -> gap 0.5;
   * round 1: at 20 and 21.2: span 2.2, busy 2 -> gap 0.2; mean 0.35 */
  lrn_table t;
  table(&t, "round,samples,time_s,start_s\n0,50,1,10\n0,50,1,11.5\n1,50,1,20\n1,50,1,21.2\n");
  probe_import_result r;
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_import_compute(&t, NULL, &r, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(r.overhead_fit, 1);
  cr_expect_float_eq(r.overhead_s, 0.35, 1e-12);
  cr_expect_float_eq(r.tau_s, 4.0 / 200, 1e-15, "tau_s stays the batches' time over their samples");
  lrn_table_fini(&t);
}

Test(cluster_import, overhead_rounds_of_varying_size) {
  /* spans exactly 0.3 + 0.01 n for n = 100, 200, 400 (one batch, then the round's tail) */
  lrn_table t;
  table(&t, "round,samples,time_s,start_s\n"
            "0,100,1.0,0\n0,0.0001,0.3,1.0\n"
            "1,200,2.0,10\n1,0.0001,0.3,12.0\n"
            "2,400,4.0,20\n2,0.0001,0.3,24.0\n");
  probe_import_result r;
  hs_error err = {HS_OK, ""};
  /* samples must be whole: refused; use whole batches instead */
  cr_expect_neq(probe_import_compute(&t, NULL, &r, &err), HS_OK);
  lrn_table_fini(&t);
  /* the span: first batch start to last batch end = 0.3 + 0.01 n, batch sizes n-1 and 1 */
  table(&t, "round,samples,time_s,start_s\n"
            "0,99,0.99,0\n0,1,0.01,1.29\n"
            "1,199,1.99,10\n1,1,0.01,12.29\n"
            "2,399,3.99,20\n2,1,0.01,24.29\n");
  cr_assert_eq(probe_import_compute(&t, NULL, &r, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(r.overhead_fit, 2);
  cr_expect_float_eq(r.overhead_raw, 0.3, 1e-9);
  cr_expect_float_eq(r.overhead_s, 0.3, 1e-9);
  cr_expect_float_eq(r.tau_s, 0.01, 1e-12, "the slope");
  lrn_table_fini(&t);
}

Test(cluster_import, negative_intercept_is_said_and_clamped) {
  /* spans 0.012 n - 0.2: a board faster on short rounds */
  lrn_table t;
  table(&t, "round,samples,time_s,start_s\n0,100,1.0,0\n1,200,2.2,10\n2,400,4.6,20\n");
  probe_import_result r;
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_import_compute(&t, NULL, &r, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(r.overhead_fit, 2);
  cr_expect_float_eq(r.overhead_raw, -0.2, 1e-9);
  cr_expect_eq(r.overhead_s, 0);
  /* through the origin: sum(T n) / sum(n^2) = (100 + 440 + 1840) / 210000 */
  cr_expect_float_eq(r.tau_s, 2380.0 / 210000, 1e-12);
  lrn_table_fini(&t);
}

Test(cluster_import, unchanged_without_both_columns) {
  lrn_table t;
  table(&t, "round,samples,time_s\n0,100,1.0\n1,100,1.2\n");
  probe_import_result r;
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_import_compute(&t, NULL, &r, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(r.overhead_fit, 0);
  cr_expect_eq(r.overhead_s, 0);
  cr_expect_float_eq(r.tau_s, 2.2 / 200, 1e-15);
  lrn_table_fini(&t);
  table(&t, "samples,time_s,start_s\n100,1.0,0\n100,1.2,5\n");
  cr_assert_eq(probe_import_compute(&t, NULL, &r, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(r.overhead_fit, 0);
  lrn_table_fini(&t);
}

/* 3 boards x 4 rounds: log x = log tau_b + c_r + e_br with mean(c) = 0 and the
 * e's rows and columns summing to 0, so the decomposition recovers them exactly. */
Test(cluster_import, shared_factor_split) {
  const double tau[3] = {1e-3, 2e-3, 3e-3}, c[4] = {0.1, -0.1, 0.2, -0.2}, d = 0.05;
  const double e[3][4] = {{d, -d, d, -d}, {-d, d, -d, d}, {0, 0, 0, 0}};
  lrn_table t[3];
  for (int b = 0; b < 3; b++) {
    char text[1024] = "round,samples,time_s\n";
    for (int r = 0; r < 4; r++)
      snprintf(text + strlen(text), sizeof text - strlen(text), "%d,100,%.17g\n", r + 7,
               100 * tau[b] * exp(c[r] + e[b][r]));
    table(&t[b], text);
  }
  const lrn_table *logs[3] = {&t[0], &t[1], &t[2]};
  probe_shared_result s;
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_import_shared(logs, 3, &s, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(s.boards, 3);
  cr_expect_eq(s.rounds, 4);
  /* own: sum e^2 / ((R-1)(B-1)/B) = 4 d^2 / 2 */
  cr_expect_float_eq(s.own_cv[0], sqrt(expm1(2 * d * d)), 1e-12);
  cr_expect_float_eq(s.own_cv[1], sqrt(expm1(2 * d * d)), 1e-12);
  cr_expect_float_eq(s.own_cv[2], 0, 1e-7);
  /* shared: var(c) = 0.1 / 3, less a third of the mean own variance (4 d^2 / 3) */
  cr_expect_float_eq(s.shared_cv, sqrt(expm1(0.1 / 3 - 4 * d * d / 9)), 1e-12);
  cr_expect_float_eq(s.factor_max, exp(0.2), 1e-12);
  cr_expect_float_eq(s.factor_min, exp(-0.2), 1e-12);
  /* too few shared rounds */
  lrn_table few;
  table(&few, "round,samples,time_s\n7,100,0.1\n8,100,0.1\n");
  const lrn_table *two[2] = {&t[0], &few};
  cr_expect_eq(probe_import_shared(two, 2, &s, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "share 2 rounds"), "%s", err.msg);
  lrn_table_fini(&few);
  for (int b = 0; b < 3; b++) lrn_table_fini(&t[b]);
}

/* --shared loadings, known answers: 4 boards x 4 rounds, log x = log tau_b +
 * l_b z_r + e_br with loadings 1, 0.5, 0.25 on one factor z and board 3
 * taking none of it, only noise of its own orthogonal to z. The factor
 * model gives the loadings back exactly (relative to the largest), no own
 * noise to boards 0-2, board 3 its own variance, and the factor's CV for the
 * board that takes it most; the two-way decomposition would spread z over
 * every board's own noise. */
Test(cluster_import, shared_factor_loadings) {
  const double tau[4] = {1e-3, 2e-3, 3e-3, 4e-3}, l[4] = {1, 0.5, 0.25, 0};
  const double z[4] = {0.2, -0.2, 0.2, -0.2}, e3[4] = {0.05, 0.05, -0.05, -0.05};
  lrn_table t[4];
  for (int b = 0; b < 4; b++) {
    char text[1024] = "round,samples,time_s\n";
    for (int r = 0; r < 4; r++)
      snprintf(text + strlen(text), sizeof text - strlen(text), "%d,100,%.17g\n", r,
               100 * tau[b] * exp(l[b] * z[r] + (b == 3 ? e3[r] : 0)));
    table(&t[b], text);
  }
  const lrn_table *logs[4] = {&t[0], &t[1], &t[2], &t[3]};
  probe_shared_result s;
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_import_shared_model(logs, 4, true, &s, &err), HS_OK, "%s", err.msg);
  for (int b = 0; b < 4; b++) cr_expect_float_eq(s.loading[b], l[b], 1e-9, "loading %d: %g", b, s.loading[b]);
  for (int b = 0; b < 3; b++) cr_expect_float_eq(s.own_cv[b], 0, 1e-6, "own %d: %g", b, s.own_cv[b]);
  cr_expect_float_eq(s.own_cv[3], sqrt(expm1(4 * 0.05 * 0.05 / 3)), 1e-9, "own 3: %g", s.own_cv[3]);
  cr_expect_float_eq(s.shared_cv, sqrt(expm1(4 * 0.2 * 0.2 / 3)), 1e-9, "shared %g", s.shared_cv);
  cr_expect_float_eq(s.factor_max, exp(0.2), 1e-9);
  cr_expect_float_eq(s.factor_min, exp(-0.2), 1e-9);
  /* equal loadings (the two-way decomposition) cannot say this: board 0's own noise is not 0 */
  cr_assert_eq(probe_import_shared(logs, 4, &s, &err), HS_OK, "%s", err.msg);
  cr_expect_gt(s.own_cv[0], 0.01);
  /* two boards cannot tell a loading from own noise */
  cr_expect_eq(probe_import_shared_model(logs, 2, true, &s, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "3 or more boards"), "%s", err.msg);
  for (int b = 0; b < 4; b++) lrn_table_fini(&t[b]);
}
