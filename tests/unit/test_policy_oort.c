/* test_policy_oort.c: Oort-style selection: K selected every round, the
 * budget split over them, zeros for the rest (and 0/0/0 telemetry for them
 * accepted), determinism from the seed, and the straggler penalty at work:
 * fast participants are chosen far more often once exploration has decayed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "policies/hs_policy.h"

static hs_controller *make_oort(size_t n, uint64_t budget, const char *k, const char *seed,
                                hs_error *err) {
  hs_policy_config cfg;
  cr_assert_eq(hs_policy_config_init(&cfg, "oort", err), HS_OK);
  if (k) cr_assert_eq(hs_policy_config_set(&cfg, "oort_k", k, err), HS_OK);
  if (seed) cr_assert_eq(hs_policy_config_set(&cfg, "seed", seed, err), HS_OK);
  return hs_controller_create(&cfg, n, NULL, budget, err);
}

/* telemetry for the current allocation: participant i takes tau[i] s/sample */
static void run_round(hs_controller *c, const double *tau, size_t n, unsigned *count) {
  const uint64_t *a = hs_controller_allocation(c);
  hs_telemetry *t = hs_calloc(n, sizeof *t);
  for (size_t i = 0; i < n; i++) {
    t[i].samples = (int64_t)a[i];
    t[i].time_s = a[i] ? tau[i] * (double)a[i] : 0; /* 0/0/0 for the unselected */
    t[i].energy_j = t[i].time_s * 5;
    if (count && a[i]) count[i]++;
  }
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(c, t, n, &err), HS_OK, "%s", err.msg);
  hs_free(t);
}

Test(policy_oort, selects_k_and_splits_the_budget_over_them) {
  hs_error err = {0};
  size_t n = 20;
  hs_controller *c = make_oort(n, 1003, "6", "5", &err);
  cr_assert_not_null(c, "%s", err.msg);
  /* before telemetry: the equal split over everyone */
  const uint64_t *a = hs_controller_allocation(c);
  for (size_t i = 0; i < n; i++) cr_expect_eq(a[i], i < 3 ? 51 : 50);
  double tau[20];
  for (size_t i = 0; i < n; i++) tau[i] = 0.01 * (double)(1 + i % 5);
  for (int round = 0; round < 30; round++) {
    run_round(c, tau, n, NULL);
    a = hs_controller_allocation(c);
    size_t sel = 0;
    uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
      sum += a[i];
      if (!a[i]) continue;
      sel++;
      lo = a[i] < lo ? a[i] : lo;
      hi = a[i] > hi ? a[i] : hi;
    }
    cr_assert_eq(sel, 6, "round %d: %zu selected", round, sel);
    cr_assert_eq(sum, 1003);
    cr_assert_leq(hi - lo, 1); /* 1003 over 6: one 168, five 167 */
  }
  hs_controller_destroy(c);
}

Test(policy_oort, default_k_is_half) {
  hs_error err = {0};
  hs_controller *c = make_oort(9, 90, NULL, NULL, &err);
  double tau[9] = {.1, .1, .1, .1, .1, .1, .1, .1, .1};
  run_round(c, tau, 9, NULL);
  size_t sel = 0;
  for (size_t i = 0; i < 9; i++) sel += hs_controller_allocation(c)[i] > 0;
  cr_expect_eq(sel, 4);
  hs_controller_destroy(c);
}

Test(policy_oort, same_seed_same_run_other_seed_other_run) {
  hs_error err = {0};
  size_t n = 50;
  double tau[50];
  for (size_t i = 0; i < n; i++) tau[i] = 0.005 * (double)(1 + (i * 7) % 13);
  hs_controller *a = make_oort(n, 5000, "10", "42", &err);
  hs_controller *b = make_oort(n, 5000, "10", "42", &err);
  hs_controller *d = make_oort(n, 5000, "10", "43", &err);
  bool differs = false;
  for (int round = 0; round < 15; round++) {
    run_round(a, tau, n, NULL);
    run_round(b, tau, n, NULL);
    run_round(d, tau, n, NULL);
    cr_assert(memcmp(hs_controller_allocation(a), hs_controller_allocation(b),
                     n * sizeof(uint64_t)) == 0,
              "round %d: same seed, different selection", round);
    differs |= memcmp(hs_controller_allocation(a), hs_controller_allocation(d),
                      n * sizeof(uint64_t)) != 0;
  }
  cr_expect(differs, "seeds 42 and 43 chose identically for 15 rounds");
  hs_controller_destroy(a);
  hs_controller_destroy(b);
  hs_controller_destroy(d);
}

Test(policy_oort, stragglers_are_selected_less) {
  /* 0..9 take 10 ms/sample, 10..19 take 100 ms/sample; K = 5, exploration
   * decays from 0.9 to 0.3. Over 150 rounds the straggler penalty (alpha 2)
   * must show: fast devices chosen well over twice as often in total. */
  hs_error err = {0};
  size_t n = 20;
  hs_policy_config cfg;
  hs_policy_config_init(&cfg, "oort", &err);
  hs_policy_config_set(&cfg, "oort_k", "5", &err);
  hs_policy_config_set(&cfg, "seed", "9", &err);
  hs_controller *c = hs_controller_create(&cfg, n, NULL, 500, &err);
  cr_assert_not_null(c, "%s", err.msg);
  double tau[20];
  for (size_t i = 0; i < n; i++) tau[i] = i < 10 ? 0.01 : 0.1;
  unsigned count[20] = {0};
  for (int round = 0; round < 150; round++) run_round(c, tau, n, count);
  unsigned fast = 0, slow = 0;
  for (size_t i = 0; i < n; i++) *(i < 10 ? &fast : &slow) += count[i];
  cr_expect_gt(fast, 2 * slow, "fast %u, slow %u", fast, slow);
  hs_controller_destroy(c);
}

Test(policy_oort, rejects_groups_and_a_budget_below_k_floors) {
  hs_error err = {0};
  hs_policy_config cfg;
  hs_policy_config_init(&cfg, "oort", &err);
  uint32_t g[4] = {0, 0, 1, 1};
  cr_expect_null(hs_controller_create(&cfg, 4, g, 100, &err));
  cr_expect(strncmp(err.msg, "groups: ", 8) == 0, "%s", err.msg);
  hs_policy_config_set(&cfg, "oort_k", "3", &err);
  hs_policy_config_set(&cfg, "min_samples", "10", &err);
  cr_expect_null(hs_controller_create(&cfg, 4, NULL, 29, &err));
  cr_expect(strncmp(err.msg, "budget: 29", 10) == 0, "%s", err.msg);
  hs_controller *ok = hs_controller_create(&cfg, 4, NULL, 30, &err);
  cr_expect_not_null(ok, "%s", err.msg);
  hs_controller_destroy(ok);
}

Test(policy_oort, a_huge_pacer_window_costs_no_memory_up_front) {
  /* oort_pacer_window accepts any uint32 >= 1; the ring of 2W utilities was
   * allocated whole at creation: 64 GiB for 2^32-1, an out-of-memory abort
   * for a value the config accepts. It now grows with the rounds run. */
  hs_policy_config cfg;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&cfg, "oort", &err), HS_OK);
  cr_assert_eq(hs_policy_config_set(&cfg, "oort_pacer_window", "4294967295", &err), HS_OK);
  cr_assert_eq(hs_policy_config_set(&cfg, "oort_k", "2", &err), HS_OK);
  hs_controller *c = hs_controller_create(&cfg, 4, NULL, 100, &err);
  cr_assert_not_null(c, "%s", err.msg);
  double tau[4] = {0.01, 0.02, 0.04, 0.08};
  for (int r = 0; r < 50; r++) run_round(c, tau, 4, NULL);
  const uint64_t *a = hs_controller_allocation(c);
  cr_expect_eq(a[0] + a[1] + a[2] + a[3], 100);
  hs_controller_destroy(c);
}
