/* test_policy_round_time.c: the round-time policy and hs_controller_set_comm
 * (issue 24). Known answers worked out by hand: the water-filling T with
 * sum max(floor, (T - c_i)/a_i) = B for two and three participants, a floor
 * that binds, the largest remainder's tie; that without communication it is
 * time-only bit for bit (groups too); that a round without set_comm keeps the
 * estimates; the checks of set_comm; and a save/restore round trip. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "policies/hs_policy.h"
#include "test_policy_helpers.h"

static void feed(hs_controller *c, const hs_telemetry *t, const double *comm, size_t n) {
  hs_error err = {0};
  if (comm) cr_assert_eq(hs_controller_set_comm(c, comm, n, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(hs_controller_update(c, t, n, &err), HS_OK, "%s", err.msg);
}

/* a = (1, 2) s/sample, c = (0, 50) s, B = 200: T/1 + (T-50)/2 = 200, T = 150,
 * n = (150, 50): both rounds take 150 s. time-only gives 133/67 (2:1). */
Test(round_time, two_participants_end_together) {
  hs_policy_config cfg = cfg_of("round-time");
  hs_controller *c = make(&cfg, 2, NULL, 200);
  const hs_telemetry t[2] = {{100, 1, 100}, {200, 1, 100}};
  const double comm[2] = {0, 50};
  feed(c, t, comm, 2);
  expect_alloc(c, (uint64_t[]){150, 50}, 2);
  cr_expect(hs_controller_reallocated(c));
  hs_controller_destroy(c);

  hs_policy_config to = cfg_of("time-only");
  c = make(&to, 2, NULL, 200);
  feed(c, t, comm, 2); /* time-only ignores the communication */
  expect_alloc(c, (uint64_t[]){133, 67}, 2);
  hs_controller_destroy(c);
}

/* a = (1, 2, 4), c = (0, 10, 20), B = 95: sum 1/a_i = 1.75, sum c_i/a_i =
 * 0 + 5 + 5 = 10, so 1.75 T - 10 = 95, T = 60 and n = (60, 25, 10). */
Test(round_time, three_participants_closed_form) {
  hs_policy_config cfg = cfg_of("round-time");
  hs_controller *c = make(&cfg, 3, NULL, 95);
  const hs_telemetry t[3] = {{10, 1, 10}, {20, 1, 10}, {40, 1, 10}};
  const double comm[3] = {0, 10, 20};
  feed(c, t, comm, 3);
  expect_alloc(c, (uint64_t[]){60, 25, 10}, 3);
  hs_controller_destroy(c);
}

/* a = (1, 1, 1), c = (0, 0, 90), B = 100, floor 5: unfloored T = 63.3 would
 * give the third -26.7, so it is floored at 5; 2T = 95, T = 47.5 (its round,
 * 95 s, is longer whatever it gets). 47.5/47.5/5: the tied half goes to the
 * lower index: (48, 47, 5). */
Test(round_time, floor_binds_and_ties_go_low) {
  hs_policy_config cfg = cfg_of("round-time");
  set(&cfg, "min_samples", "5");
  hs_controller *c = make(&cfg, 3, NULL, 100);
  const hs_telemetry t[3] = {{10, 1, 10}, {10, 1, 10}, {10, 1, 10}};
  const double comm[3] = {0, 0, 90};
  feed(c, t, comm, 3);
  expect_alloc(c, (uint64_t[]){48, 47, 5}, 3);
  hs_controller_destroy(c);
}

/* Floor 0: a participant whose communication alone outlasts the round gets
 * nothing. a = (1, 1), c = (0, 500), B = 100: T = 100 < 500, n = (100, 0). */
Test(round_time, floor_zero_can_leave_one_out) {
  hs_policy_config cfg = cfg_of("round-time");
  set(&cfg, "min_samples", "0");
  hs_controller *c = make(&cfg, 2, NULL, 100);
  const hs_telemetry t[2] = {{50, 1, 50}, {50, 1, 50}};
  feed(c, t, (double[]){0, 500}, 2);
  expect_alloc(c, (uint64_t[]){100, 0}, 2);
  hs_controller_destroy(c);
}

/* The EMA of the communication time: 0.5*40 + 0.5*80 = 60 after two rounds;
 * a = (1, 1), c = (0, 60), B = 100: 2T - 60 = 100, T = 80, n = (80, 20).
 * A third round without set_comm keeps c = 60 (not 0): the same split. */
Test(round_time, comm_is_smoothed_and_kept) {
  hs_policy_config cfg = cfg_of("round-time");
  set(&cfg, "deadband", "0");
  hs_controller *c = make(&cfg, 2, NULL, 100);
  const hs_telemetry t[2] = {{50, 1, 50}, {50, 1, 50}};
  feed(c, t, (double[]){0, 40}, 2); /* T = 70: (70, 30) */
  expect_alloc(c, (uint64_t[]){70, 30}, 2);
  const hs_telemetry t2[2] = {{70, 1, 70}, {30, 1, 30}};
  feed(c, t2, (double[]){0, 80}, 2);
  expect_alloc(c, (uint64_t[]){80, 20}, 2);
  const hs_telemetry t3[2] = {{80, 1, 80}, {20, 1, 20}};
  feed(c, t3, NULL, 2);
  expect_alloc(c, (uint64_t[]){80, 20}, 2);
  cr_expect_not(hs_controller_reallocated(c));
  hs_controller_destroy(c);
}

/* Without communication (no set_comm, or only zeros) round-time is time-only:
 * the same allocations and reallocated flags every round, with groups and a
 * participant that sits out. */
static void same_as_time_only(const uint32_t *groups, bool zeros) {
  enum { N = 7, R = 12 };
  hs_policy_config a = cfg_of("round-time"), b = cfg_of("time-only");
  set(&a, "ema", "0.3");
  set(&b, "ema", "0.3");
  set(&a, "min_samples", "3");
  set(&b, "min_samples", "3");
  hs_controller *x = make(&a, N, groups, 1000), *y = make(&b, N, groups, 1000);
  double zero[N] = {0};
  for (int r = 0; r < R; r++) {
    hs_telemetry t[N];
    const uint64_t *al = hs_controller_allocation(x);
    for (size_t i = 0; i < N; i++) {
      double tau = 0.01 * (double)(1 + (i * 7 + (size_t)r * 3) % 11);
      int64_t n = (int64_t)al[i];
      if (i == 4 && r % 3 == 1) n = 0; /* sits out: 0/0/0 */
      t[i] = (hs_telemetry){n ? tau * (double)n : 0, n ? 2.0 * (double)n : 0, n};
    }
    feed(x, t, zeros ? zero : NULL, N);
    feed(y, t, NULL, N);
    expect_alloc(x, hs_controller_allocation(y), N);
    cr_expect_eq(hs_controller_reallocated(x), hs_controller_reallocated(y), "round %d", r);
  }
  hs_controller_destroy(x);
  hs_controller_destroy(y);
}

Test(round_time, without_comm_is_time_only) { same_as_time_only(NULL, false); }
Test(round_time, zero_comm_is_time_only) { same_as_time_only(NULL, true); }
Test(round_time, without_comm_is_time_only_in_groups) {
  const uint32_t g[7] = {2, 1, 2, 1, 2, 1, 2};
  same_as_time_only(g, false);
}

/* Groups keep their budgets: group 1 = {0, 1} with 200, group 2 = {2, 3} with
 * 200 (split by size); each group is the two-participant case. */
Test(round_time, groups_are_split_apart) {
  hs_policy_config cfg = cfg_of("round-time");
  const uint32_t g[4] = {1, 1, 2, 2};
  hs_controller *c = make(&cfg, 4, g, 400);
  const hs_telemetry t[4] = {{100, 1, 100}, {200, 1, 100}, {100, 1, 100}, {100, 1, 100}};
  feed(c, t, (double[]){0, 50, 0, 0}, 4);
  expect_alloc(c, (uint64_t[]){150, 50, 100, 100}, 4);
  hs_controller_destroy(c);
}

Test(round_time, set_comm_checks_and_changes_nothing_on_error) {
  hs_policy_config cfg = cfg_of("round-time");
  hs_controller *c = make(&cfg, 2, NULL, 200);
  hs_error err = {0};
  cr_expect_eq(hs_controller_set_comm(c, (double[]){0, 1, 2}, 3, &err), HS_ERANGE);
  cr_expect(strstr(err.msg, "comm_s: 3 values for 2 participants"), "%s", err.msg);
  cr_expect_eq(hs_controller_set_comm(c, (double[]){0, NAN}, 2, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "participant 1: comm_s"), "%s", err.msg);
  cr_expect_eq(hs_controller_set_comm(c, (double[]){-1, 0}, 2, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "participant 0: comm_s"), "%s", err.msg);
  /* none of them applied: the update sees no communication (time-only) */
  const hs_telemetry t[2] = {{100, 1, 100}, {200, 1, 100}};
  feed(c, t, NULL, 2);
  expect_alloc(c, (uint64_t[]){133, 67}, 2);
  hs_controller_destroy(c);
}

/* The estimates survive a save and a restore: the next round's split is the
 * same as the saved controller's, and the saved text names comm. */
Test(round_time, save_restore_keeps_the_comm_estimate) {
  hs_policy_config cfg = cfg_of("round-time");
  set(&cfg, "deadband", "0");
  hs_controller *c = make(&cfg, 2, NULL, 100);
  const hs_telemetry t[2] = {{50, 1, 50}, {50, 1, 50}};
  feed(c, t, (double[]){0, 40}, 2);
  hs_error err = {0};
  char *text = hs_controller_save(c, &err);
  cr_assert_not_null(text, "%s", err.msg);
  cr_expect(strstr(text, "\"comm\"") && strstr(text, "\"have_comm\""), "%s", text);
  hs_controller *d = make(&cfg, 2, NULL, 100);
  cr_assert_eq(hs_controller_restore(d, text, &err), HS_OK, "%s", err.msg);
  const hs_telemetry t2[2] = {{70, 1, 70}, {30, 1, 30}};
  feed(c, t2, NULL, 2);
  feed(d, t2, NULL, 2);
  expect_alloc(d, hs_controller_allocation(c), 2);
  expect_alloc(d, (uint64_t[]){70, 30}, 2);
  hs_free(text);
  hs_controller_destroy(c);
  hs_controller_destroy(d);
}

/* A policy that does not read the communication times still has them
 * checked (one contract for every policy), and keeps no copy of them. */
Test(round_time, other_policies_check_comm_too) {
  hs_policy_config cfg = cfg_of("time-only");
  hs_controller *c = make(&cfg, 2, NULL, 200);
  hs_error err = {0};
  cr_expect_eq(hs_controller_set_comm(c, (double[]){INFINITY, 0}, 2, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "participant 0: comm_s"), "%s", err.msg);
  cr_expect_eq(hs_controller_set_comm(c, (double[]){1}, 1, &err), HS_ERANGE);
  cr_expect_eq(hs_controller_set_comm(c, (double[]){1, 2}, 2, &err), HS_OK, "%s", err.msg);
  hs_controller_destroy(c);
}

/* Telemetry hundreds of orders of magnitude apart (what a fuzzer would send):
 * the split still conserves the budget and keeps the floor. */
Test(round_time, extreme_times_still_split_the_budget) {
  hs_policy_config cfg = cfg_of("round-time");
  set(&cfg, "deadband", "0");
  hs_controller *c = make(&cfg, 4, NULL, 1000);
  const hs_telemetry t[4] = {{1e-300, 1, 250}, {1e300, 1, 250}, {1, 1, 250}, {1e-200, 1, 250}};
  const double comms[][4] = {{0, 1e308, 1e-300, 1e300}, {1e308, 1e308, 1e308, 1e308},
                             {0, 0, 0, 1e-320}};
  for (size_t r = 0; r < 3; r++) {
    feed(c, t, comms[r], 4);
    const uint64_t *a = hs_controller_allocation(c);
    uint64_t sum = 0;
    for (size_t i = 0; i < 4; i++) {
      cr_expect_geq(a[i], 1, "round %zu, participant %zu", r, i);
      sum += a[i];
    }
    cr_expect_eq(sum, 1000, "round %zu", r);
  }
  hs_controller_destroy(c);
}
