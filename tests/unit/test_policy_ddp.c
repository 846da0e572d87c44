/* test_policy_ddp.c: the DDP per-step batch schedule and gradient weights, and
 * the ema-batch baseline (per-step global batch conserved, throughput-
 * proportional split, EMA with the first observation as is). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "policies/hs_policy.h"
#include "base/hs_rng.h"

Test(policy_ddp, schedule_known_answer) {
  uint64_t n[3] = {10, 3, 0}, b[12];
  hs_ddp_schedule(n, 3, 4, b);
  uint64_t want[12] = {3, 3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0};
  for (int i = 0; i < 12; i++) cr_expect_eq(b[i], want[i], "b[%d]", i);
  double w[12];
  hs_ddp_grad_weights(b, 3, 4, w);
  /* step 0: 3,1,0 of 4; step 3: 2,0,0 of 2 */
  cr_expect_eq(w[0], 0.75);
  cr_expect_eq(w[4], 0.25);
  cr_expect_eq(w[3], 1.0);
  cr_expect_eq(w[7], 0.0);
  cr_expect_eq(w[11], 0.0);
}

Test(policy_ddp, schedule_properties) {
  hs_rng r;
  hs_rng_init(&r, 21, 0, HS_RNG_BENCH);
  for (int trial = 0; trial < 500; trial++) {
    size_t ranks = 1 + hs_rng_below(&r, 12);
    uint32_t steps = 1 + (uint32_t)hs_rng_below(&r, 16);
    uint64_t *n = hs_malloc(ranks * sizeof *n), *b = hs_malloc(ranks * steps * sizeof *b);
    double *w = hs_malloc(ranks * steps * sizeof *w);
    for (size_t i = 0; i < ranks; i++) n[i] = hs_rng_below(&r, 100);
    hs_ddp_schedule(n, ranks, steps, b);
    hs_ddp_grad_weights(b, ranks, steps, w);
    for (size_t i = 0; i < ranks; i++) {
      uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
      for (uint32_t s = 0; s < steps; s++) {
        uint64_t v = b[i * steps + s];
        sum += v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      cr_assert_eq(sum, n[i]);
      cr_assert_leq(hi - lo, 1);
      if (n[i] >= steps) cr_assert_geq(lo, 1);
    }
    for (uint32_t s = 0; s < steps; s++) {
      double ws = 0;
      uint64_t bs = 0;
      for (size_t i = 0; i < ranks; i++) {
        ws += w[i * steps + s];
        bs += b[i * steps + s];
      }
      if (bs)
        cr_assert_float_eq(ws, 1.0, 1e-12);
      else
        cr_assert_eq(ws, 0.0);
    }
    hs_free(n);
    hs_free(b);
    hs_free(w);
  }
}

Test(policy_ddp, weights_recover_the_sample_mean_gradient) {
  /* rank i's samples all have gradient g_i; the step gradient with weights
   * b_is / sum_j b_js is the mean over the step's samples */
  uint64_t n[3] = {7, 2, 5}, b[9];
  double w[9], g[3] = {1.0, 10.0, 100.0};
  hs_ddp_schedule(n, 3, 3, b);
  hs_ddp_grad_weights(b, 3, 3, w);
  for (int s = 0; s < 3; s++) {
    double est = 0, num = 0;
    uint64_t den = 0;
    for (int i = 0; i < 3; i++) {
      est += w[i * 3 + s] * g[i];
      num += (double)b[i * 3 + s] * g[i];
      den += b[i * 3 + s];
    }
    cr_expect_float_eq(est, num / (double)den, 1e-12, "step %d", s);
  }
}

static hs_controller *make_eb(size_t n, uint64_t budget, const char *steps, const char *beta,
                              const uint32_t *groups) {
  hs_policy_config cfg;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&cfg, "ema-batch", &err), HS_OK);
  cr_assert_eq(hs_policy_config_set(&cfg, "steps_per_round", steps, &err), HS_OK);
  if (beta) cr_assert_eq(hs_policy_config_set(&cfg, "ema_batch_beta", beta, &err), HS_OK);
  hs_controller *c = hs_controller_create(&cfg, n, groups, budget, &err);
  cr_assert_not_null(c, "%s", err.msg);
  return c;
}

Test(policy_ema_batch, steps_follow_throughput_and_keep_the_global_batch) {
  hs_controller *c = make_eb(3, 12, "2", "0.5", NULL);
  const uint64_t *b = hs_controller_step_batches(c);
  cr_expect(b[0] == 2 && b[1] == 2 && b[2] == 2);
  /* throughputs 1, 2, 3 samples/s: times 2, 1, 0.667 s */
  double t1[3] = {2.0, 1.0, 2.0 / 3.0};
  hs_error err = {0};
  cr_assert_eq(hs_controller_step_update(c, t1, 3, &err), HS_OK, "%s", err.msg);
  b = hs_controller_step_batches(c);
  cr_expect(b[0] == 1 && b[1] == 2 && b[2] == 3, "%llu %llu %llu", (unsigned long long)b[0],
            (unsigned long long)b[1], (unsigned long long)b[2]);
  /* rank 2 now measures 1 sample/s: EMA .5*3 + .5*1 = 2 -> weights 1:2:2 of 6
   * -> 1.2, 2.4, 2.4 -> 1, 2, 2 + one extra to the larger remainder (rank 1) */
  double t2[3] = {1.0, 1.0, 3.0};
  cr_assert_eq(hs_controller_step_update(c, t2, 3, &err), HS_OK, "%s", err.msg);
  b = hs_controller_step_batches(c);
  cr_expect(b[0] == 1 && b[1] == 3 && b[2] == 2, "%llu %llu %llu", (unsigned long long)b[0],
            (unsigned long long)b[1], (unsigned long long)b[2]);
  /* the round allocation (for telemetry) is the same split of the whole 12 */
  hs_telemetry tel[3] = {{4, 1, 3}, {2, 1, 4}, {3, 1, 5}};
  cr_assert_eq(hs_controller_update(c, tel, 3, &err), HS_OK, "%s", err.msg);
  const uint64_t *a = hs_controller_allocation(c);
  /* weights 1,2,2 (round telemetry not used after step updates): 2.4 4.8 4.8 -> 2,5,5 */
  cr_expect(a[0] == 2 && a[1] == 5 && a[2] == 5, "%llu %llu %llu", (unsigned long long)a[0],
            (unsigned long long)a[1], (unsigned long long)a[2]);
  hs_controller_destroy(c);
}

Test(policy_ema_batch, odd_budget_spreads_over_steps_exactly) {
  uint32_t g[4] = {0, 0, 1, 1};
  hs_controller *c = make_eb(4, 27, "4", NULL, g);
  hs_rng r;
  hs_rng_init(&r, 5, 0, HS_RNG_BENCH);
  hs_error err = {0};
  for (int round = 0; round < 5; round++) {
    uint64_t group_round[2] = {0, 0};
    for (int s = 0; s < 4; s++) {
      const uint64_t *b = hs_controller_step_batches(c);
      group_round[0] += b[0] + b[1];
      group_round[1] += b[2] + b[3];
      double t[4];
      for (int i = 0; i < 4; i++) t[i] = b[i] ? (double)b[i] * (0.1 + hs_rng_uniform(&r)) : 0;
      cr_assert_eq(hs_controller_step_update(c, t, 4, &err), HS_OK, "%s", err.msg);
    }
    /* 27 over 2 equal groups: 14 and 13; each group's steps sum to it */
    cr_expect_eq(group_round[0], 14);
    cr_expect_eq(group_round[1], 13);
    hs_telemetry tel[4] = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
    cr_assert_eq(hs_controller_update(c, tel, 4, &err), HS_OK);
    const uint64_t *a = hs_controller_allocation(c);
    cr_expect_eq(a[0] + a[1], 14);
    cr_expect_eq(a[2] + a[3], 13);
  }
  hs_controller_destroy(c);
}

Test(policy_ema_batch, round_telemetry_feeds_it_without_step_updates) {
  hs_controller *c = make_eb(2, 30, "1", "0", NULL);
  hs_telemetry tel[2] = {{1.5, 1, 15}, {0.75, 1, 15}}; /* 10 and 20 samples/s */
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(c, tel, 2, &err), HS_OK);
  const uint64_t *a = hs_controller_allocation(c);
  cr_expect(a[0] == 10 && a[1] == 20);
  const uint64_t *b = hs_controller_step_batches(c);
  cr_expect(b[0] == 10 && b[1] == 20);
  cr_expect(hs_controller_reallocated(c));
  hs_controller_destroy(c);
}

Test(policy_ema_batch, bad_step_times_name_the_rank) {
  hs_controller *c = make_eb(2, 10, "2", NULL, NULL);
  hs_error err = {0};
  double bad[2] = {0.5, NAN};
  cr_expect_eq(hs_controller_step_update(c, bad, 2, &err), HS_EINVAL);
  cr_expect(strncmp(err.msg, "rank 1: step_time_s", 19) == 0, "%s", err.msg);
  double zero[2] = {0.5, 0};
  cr_expect_eq(hs_controller_step_update(c, zero, 2, &err), HS_EINVAL);
  cr_expect_eq(hs_controller_step_update(c, zero, 1, &err), HS_EINVAL);
  const uint64_t *b = hs_controller_step_batches(c);
  cr_expect(b[0] == 3 && b[1] == 2); /* unchanged: 5 per step */
  hs_controller_destroy(c);
}

Test(policy_ema_batch, rounding_does_not_pile_up_over_a_round) {
  /* equal throughput, 20 samples in 4 steps of 5 over 3 ranks: per step
   * 2,2,1 every time would give 8,8,4; carried rounding keeps each rank
   * within one sample of 20/3 */
  hs_controller *c = make_eb(3, 20, "4", NULL, NULL);
  hs_error err = {0};
  for (int round = 0; round < 3; round++) {
    uint64_t total[3] = {0, 0, 0};
    for (int s = 0; s < 4; s++) {
      const uint64_t *b = hs_controller_step_batches(c);
      cr_assert_eq(b[0] + b[1] + b[2], 5);
      double t[3];
      for (int i = 0; i < 3; i++) {
        total[i] += b[i];
        t[i] = 0.1 * (double)b[i]; /* 10 samples/s each */
      }
      cr_assert_eq(hs_controller_step_update(c, t, 3, &err), HS_OK, "%s", err.msg);
    }
    for (int i = 0; i < 3; i++)
      cr_expect(total[i] == 6 || total[i] == 7, "round %d rank %d: %llu", round, i,
                (unsigned long long)total[i]);
    hs_telemetry tel[3] = {{0.7, 1, 7}, {0.7, 1, 7}, {0.6, 1, 6}};
    cr_assert_eq(hs_controller_update(c, tel, 3, &err), HS_OK);
  }
  hs_controller_destroy(c);
}

Test(policy_ema_batch, tiny_times_do_not_overflow_the_throughput) {
  /* 10^6 samples in 1e-305 s is 1e311 samples/s: more than a double holds.
   * The rank must still win nearly everything, and the split must stay exact
   * (the weights once summed to inf and the apportionment broke) */
  hs_controller *c = make_eb(3, 3000, "3", "0", NULL);
  hs_telemetry tel[3] = {{1e-305, 0, 1000000}, {1, 0, 1000000}, {2, 0, 1000000}};
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(c, tel, 3, &err), HS_OK, "%s", err.msg);
  const uint64_t *a = hs_controller_allocation(c);
  cr_expect(a[0] == 2998 && a[1] == 1 && a[2] == 1, "%llu %llu %llu", (unsigned long long)a[0],
            (unsigned long long)a[1], (unsigned long long)a[2]);
  const uint64_t *b = hs_controller_step_batches(c);
  cr_expect(b[0] == 998 && b[1] == 1 && b[2] == 1, "%llu %llu %llu", (unsigned long long)b[0],
            (unsigned long long)b[1], (unsigned long long)b[2]);
  /* the same through a step: 998 samples in 1e-308 s */
  double t[3] = {1e-308, 1, 1};
  cr_assert_eq(hs_controller_step_update(c, t, 3, &err), HS_OK, "%s", err.msg);
  b = hs_controller_step_batches(c);
  cr_expect_eq(b[0] + b[1] + b[2], 1000);
  cr_expect(b[1] >= 1 && b[2] >= 1 && b[0] >= 990, "%llu %llu %llu", (unsigned long long)b[0],
            (unsigned long long)b[1], (unsigned long long)b[2]);
  hs_controller_destroy(c);
}

Test(policy_ema_batch, huge_times_do_not_underflow_the_throughput) {
  /* 1 sample in 1e300 s: a weight of 1e-300, and budget / weight sum = inf
   * made every quota inf (an assertion in debug builds, garbage otherwise) */
  uint32_t g[3] = {0, 1, 1};
  hs_controller *c = make_eb(3, (uint64_t)1 << 40, "2", NULL, g);
  hs_telemetry tel[3] = {{1e300, 0, 1}, {1e300, 0, 1}, {1, 0, 1}};
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(c, tel, 3, &err), HS_OK, "%s", err.msg);
  const uint64_t *a = hs_controller_allocation(c);
  /* groups by size: 2^40/3 (rounded down) and the rest, which rank 2 takes
   * but one sample */
  uint64_t g0 = ((uint64_t)1 << 40) / 3;
  cr_expect_eq(a[0], g0);
  cr_expect(a[1] == 1 && a[2] == ((uint64_t)1 << 40) - g0 - 1, "%llu %llu",
            (unsigned long long)a[1], (unsigned long long)a[2]);
  const uint64_t *b = hs_controller_step_batches(c);
  cr_expect_eq(b[0], g0 / 2 + g0 % 2);
  cr_expect_eq(b[1], 1);
  hs_controller_destroy(c);
}
