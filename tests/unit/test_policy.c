/* test_policy.c: the policy vocabulary (names, keys, presets) and known answers
 * of the controller: equal split, groups, each adaptive preset, EMA, floor,
 * deadband, static, bad telemetry. Expected numbers are worked out by hand in
 * the comments (exact shares, then largest remainder). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/hs_policy.h"
#include "test_policy_helpers.h"

/* per-sample time (1, 2, 4) x 10 ms and energy (5, 6, 9) x 10 mJ at 100 samples */
static const hs_telemetry base3[3] = {{1.0, 5.0, 100}, {2.0, 6.0, 100}, {4.0, 9.0, 100}};

/* --- vocabulary --------------------------------------------------------------- */

Test(policy_config, lists_every_policy_name) {
  const char *want[] = {"equal",      "static",   "adaptive", "time-only", "low-energy",
                        "balanced", "energy-only", "oort",     "ema-batch", "round-time"};
  cr_assert_eq(hs_policy_count(), 10);
  for (size_t i = 0; i < 10; i++) {
    cr_expect_str_eq(hs_policy_name(i), want[i]);
    cr_expect_not_null(hs_policy_summary(i));
  }
  cr_expect_null(hs_policy_name(10));
}

Test(policy_config, unknown_kind_lists_the_names) {
  hs_policy_config c;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&c, "fastest", &err), HS_ENOENT);
  cr_expect(strstr(err.msg, "\"fastest\"") && strstr(err.msg, "energy-only"), "%s", err.msg);
}

Test(policy_config, presets_fix_w_e) {
  {
    hs_policy_config p = cfg_of("time-only");
    cr_expect_eq(get(&p, "w_e"), 0.0);
  }
  {
    hs_policy_config p = cfg_of("low-energy");
    cr_expect_eq(get(&p, "w_e"), 0.25);
  }
  {
    hs_policy_config p = cfg_of("balanced");
    cr_expect_eq(get(&p, "w_e"), 0.5);
  }
  {
    hs_policy_config p = cfg_of("energy-only");
    cr_expect_eq(get(&p, "w_e"), 1.0);
  }
  hs_policy_config c = cfg_of("low-energy");
  set(&c, "w_e", "0.25"); /* its own value is fine */
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_set(&c, "w_e", "0.3", &err), HS_EINVAL);
  cr_expect(strncmp(err.msg, "w_e: ", 5) == 0 && strstr(err.msg, "\"adaptive\""), "%s", err.msg);
  cr_expect_eq(get(&c, "w_e"), 0.25);
  hs_policy_config a = cfg_of("adaptive");
  set(&a, "w_e", "0.3");
  cr_expect_eq(get(&a, "w_e"), 0.3);
}

Test(policy_config, inapplicable_and_unknown_keys_are_named) {
  hs_policy_config c = cfg_of("equal");
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_set(&c, "oort_k", "3", &err), HS_EKEY);
  cr_expect(strncmp(err.msg, "oort_k: ", 8) == 0 && strstr(err.msg, "\"equal\""), "%s", err.msg);
  cr_assert_eq(hs_policy_config_set(&c, "w_e", "0.5", &err), HS_EKEY);
  cr_assert_eq(hs_policy_config_set(&c, "wE", "0.5", &err), HS_EKEY);
  cr_expect(strncmp(err.msg, "wE: unknown", 11) == 0, "%s", err.msg);
  /* every kind takes seed and steps_per_round (the simulator sets them) */
  for (size_t i = 0; i < hs_policy_count(); i++) {
    hs_policy_config k = cfg_of(hs_policy_name(i));
    set(&k, "seed", "7");
    set(&k, "steps_per_round", "4");
    cr_expect_eq(k.seed, 7);
    cr_expect_eq(k.steps_per_round, 4);
  }
  hs_policy_config o = cfg_of("oort");
  set(&o, "oort_k", "3");
  cr_expect_eq(get(&o, "oort_k"), 3.0);
}

Test(policy_config, bad_values_leave_the_config_unchanged) {
  struct {
    const char *key, *value;
    hs_status st;
  } bad[] = {
      {"ema", "abc", HS_EINVAL},       {"ema", "nan", HS_EINVAL},     {"ema", "1", HS_ERANGE},
      {"w_e", "1.5", HS_ERANGE},       {"w_e", "-0.1", HS_ERANGE},    {"deadband", "-1", HS_ERANGE},
      {"min_samples", "-1", HS_EINVAL}, {"min_samples", "1.5", HS_EINVAL},
      {"min_samples", "", HS_EINVAL},  {"steps_per_round", "0", HS_ERANGE},
      {"ema", "0.5x", HS_EINVAL},      {"seed", "99999999999999999999999", HS_ERANGE},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_policy_config c = cfg_of("adaptive"), before = c;
    hs_error err = {0};
    cr_expect_eq(hs_policy_config_set(&c, bad[i].key, bad[i].value, &err), bad[i].st, "%s=%s: %s",
                 bad[i].key, bad[i].value, err.msg);
    cr_expect(strncmp(err.msg, bad[i].key, strlen(bad[i].key)) == 0, "%s", err.msg);
    cr_expect(memcmp(&c, &before, sizeof c) == 0, "%s=%s changed the config", bad[i].key,
              bad[i].value);
  }
  hs_policy_config c = cfg_of("adaptive");
  set(&c, "ema", " \"0.25\" "); /* JSON string form and blanks */
  cr_expect_eq(get(&c, "ema"), 0.25);
}

typedef struct seen {
  char keys[20][32];
  char values[20][64];
  size_t n;
} seen;

static void collect(const char *k, const char *v, void *ud) {
  seen *s = ud;
  cr_assert_lt(s->n, 20);
  snprintf(s->keys[s->n], 32, "%s", k);
  snprintf(s->values[s->n], 64, "%s", v);
  s->n++;
}

Test(policy_config, foreach_visits_applicable_keys_and_round_trips) {
  seen s = {0};
  hs_policy_config e = cfg_of("equal");
  cr_expect_eq(hs_policy_config_foreach(&e, collect, &s), 2);
  cr_expect_str_eq(s.keys[0], "seed");
  cr_expect_str_eq(s.keys[1], "steps_per_round");
  for (size_t i = 0; i < hs_policy_count(); i++) {
    hs_policy_config c = cfg_of(hs_policy_name(i));
    if (!strcmp(c.kind, "adaptive")) set(&c, "w_e", "0.1"); /* not exactly representable */
    if (!strcmp(c.kind, "oort")) set(&c, "oort_alpha", "0.3333333333333333");
    memset(&s, 0, sizeof s);
    size_t k = hs_policy_config_foreach(&c, collect, &s);
    cr_expect_eq(k, s.n);
    hs_policy_config back = cfg_of(c.kind);
    for (size_t j = 0; j < s.n; j++) set(&back, s.keys[j], s.values[j]);
    cr_expect(memcmp(&back, &c, sizeof c) == 0, "%s: values do not read back", c.kind);
  }
  memset(&s, 0, sizeof s);
  hs_policy_config a = cfg_of("balanced");
  cr_expect_eq(hs_policy_config_foreach(&a, collect, &s), 6); /* w_e ema deadband min_samples seed steps */
}

Test(policy_config, getters_and_floor) {
  hs_error err = {0};
  hs_policy_config a = cfg_of("adaptive");
  set(&a, "min_samples", "5");
  set(&a, "seed", "18446744073709551615"); /* 2^64-1: exact through get_uint only */
  uint64_t u = 0;
  cr_expect_eq(hs_policy_config_get_uint(&a, "seed", &u, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(u, UINT64_MAX);
  cr_expect_eq(hs_policy_config_get_uint(&a, "min_samples", &u, &err), HS_OK);
  cr_expect_eq(u, 5);
  cr_expect_eq(get(&a, "steps_per_round"), 1.0);
  cr_expect_eq(hs_policy_config_get_uint(&a, "w_e", &u, &err), HS_ETYPE);
  cr_expect(strncmp(err.msg, "w_e: ", 5) == 0, "%s", err.msg);
  double d = -1;
  cr_expect_eq(hs_policy_config_get(&a, "oort_k", &d, &err), HS_EKEY);
  cr_expect_str_eq(err.msg, "oort_k: does not apply to policy \"adaptive\" (its keys: w_e, ema, "
                            "deadband, min_samples, seed, steps_per_round); kind \"oort\" has it");
  cr_expect_eq(hs_policy_config_get(&a, "wE", &d, &err), HS_EKEY);
  cr_expect(strncmp(err.msg, "wE: unknown policy key", 22) == 0, "%s", err.msg);
  cr_expect(strstr(err.msg, "; did you mean \"w_e\"?") != NULL, "the nearest key: %s", err.msg);
  cr_expect_eq(d, -1, "a failed get writes nothing");
  /* the floor: min_samples where the kind has it, else 1 */
  cr_expect_eq(hs_policy_config_min_samples(&a), 5);
  hs_policy_config e = cfg_of("equal"), b = cfg_of("ema-batch"), o = cfg_of("oort");
  cr_expect_eq(hs_policy_config_min_samples(&e), 1);
  cr_expect_eq(hs_policy_config_min_samples(&b), 1);
  set(&o, "min_samples", "0");
  cr_expect_eq(hs_policy_config_min_samples(&o), 0);
  hs_policy_config z = {0};
  cr_expect_eq(hs_policy_config_min_samples(&z), 0, "no kind");
  cr_expect_eq(hs_policy_config_get(&z, "w_e", &d, &err), HS_ESTATE);
  /* docs exist for every key of every kind, common keys included */
  cr_expect_not_null(hs_policy_key_doc("balanced", "deadband"));
  cr_expect_not_null(hs_policy_key_doc("equal", "steps_per_round"));
  cr_expect_null(hs_policy_key_doc("equal", "deadband"));
  cr_expect_null(hs_policy_key_doc("nope", "seed"));
}

Test(policy_config, check_catches_direct_writes) {
  hs_policy_config c = cfg_of("balanced");
  hs_error err = {0};
  cr_expect_eq(hs_policy_config_check(&c, &err), HS_OK);
  c.value[0].real = 0.4; /* w_e: the first key foreach visits */
  cr_expect_eq(hs_policy_config_check(&c, &err), HS_EINVAL);
  cr_expect_str_eq(err.msg, "w_e: policy \"balanced\" fixes w_e = 0.5, got 0.4; use kind "
                            "\"adaptive\" to choose w_e");
  c = cfg_of("adaptive");
  c.value[1].real = NAN; /* ema */
  cr_expect_eq(hs_policy_config_check(&c, &err), HS_EINVAL);
  cr_expect(strncmp(err.msg, "ema: ", 5) == 0, "%s", err.msg);
  c = cfg_of("adaptive");
  c.steps_per_round = 0;
  cr_expect_eq(hs_policy_config_check(&c, &err), HS_ERANGE);
  cr_expect_null(hs_controller_create(&c, 3, NULL, 30, &err));
}

/* --- controller known answers ------------------------------------------------- */

Test(policy, equal_split_ties_to_lower_index) {
  hs_policy_config c = cfg_of("equal");
  hs_controller *ctl = make(&c, 3, NULL, 10);
  expect_alloc(ctl, (uint64_t[]){4, 3, 3}, 3);
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){4, 3, 3}, 3);
  cr_expect_not(hs_controller_reallocated(ctl));
  cr_expect_eq(hs_controller_rounds(ctl), 1);
  hs_controller_destroy(ctl);
}

Test(policy, group_budgets_by_size_then_equal_inside) {
  /* groups 3 = {1,3,4}, 7 = {0,2}; 11*3/5 = 6.6, 11*2/5 = 4.4: group 3 gets the
   * extra (7), group 7 gets 4; 7 over 3 -> 3,2,2 and 4 over 2 -> 2,2 */
  hs_policy_config c = cfg_of("equal");
  uint32_t g[5] = {7, 3, 7, 3, 3};
  hs_controller *ctl = make(&c, 5, g, 11);
  expect_alloc(ctl, (uint64_t[]){2, 3, 2, 2, 2}, 5);
  hs_controller_destroy(ctl);
}

Test(policy, presets_known_answers) {
  /* tau = (1,2,4)/100, median 0.02 -> 0.5,1,2; eps = (5,6,9)/100, median 0.06 ->
   * 0.833,1,1.5. time-only: w = 2,1,0.5 -> 171.43 85.71 42.86 -> 171,86,43.
   * low-energy: c = .75*tau' + .25*eps' -> 158.36 92.38 49.27 -> 158,93,49.
   * balanced: c = .667,1,1.75 -> 146.51 97.67 55.81 -> 146,98,56.
   * energy-only: w = 1.2,1,.667 -> 125.58 104.65 69.77 -> 125,105,70. */
  struct {
    const char *kind;
    uint64_t want[3];
  } cases[] = {{"time-only", {171, 86, 43}},
               {"low-energy", {158, 93, 49}},
               {"balanced", {146, 98, 56}},
               {"energy-only", {125, 105, 70}}};
  for (size_t k = 0; k < 4; k++) {
    hs_policy_config c = cfg_of(cases[k].kind);
    hs_controller *ctl = make(&c, 3, NULL, 300);
    expect_alloc(ctl, (uint64_t[]){100, 100, 100}, 3);
    hs_error err = {0};
    cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK, "%s", err.msg);
    expect_alloc(ctl, cases[k].want, 3);
    cr_expect(hs_controller_reallocated(ctl));
    hs_controller_destroy(ctl);
  }
}

Test(policy, ema_takes_first_observation_then_smooths) {
  hs_policy_config c = cfg_of("time-only");
  set(&c, "deadband", "0");
  hs_controller *ctl = make(&c, 3, NULL, 300);
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){171, 86, 43}, 3);
  /* participant 2 now measures 0.08 s/sample: 0.5*0.04 + 0.5*0.08 = 0.06;
   * tau = .01,.02,.06 -> c = .5,1,3 -> w = 2,1,1/3 -> exactly 180, 90, 30 */
  hs_telemetry t[3] = {{1.71, 1, 171}, {1.72, 1, 86}, {3.44, 1, 43}};
  cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){180, 90, 30}, 3);
  hs_controller_destroy(ctl);
}

Test(policy, zero_samples_keep_the_estimate) {
  hs_policy_config c = cfg_of("time-only");
  set(&c, "deadband", "0");
  hs_controller *ctl = make(&c, 3, NULL, 300);
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  hs_telemetry t[3] = {{1.71, 1, 171}, {1.72, 1, 86}, {0, 0, 0}};
  cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK, "%s", err.msg);
  expect_alloc(ctl, (uint64_t[]){171, 86, 43}, 3);
  cr_expect_not(hs_controller_reallocated(ctl));
  hs_controller_destroy(ctl);
}

Test(policy, unmeasured_participant_gets_the_neutral_cost) {
  /* budget 2 over 3, no floor: equal gives 1,1,0. Only 0 and 1 report:
   * tau .01,.02, median .015 -> c = .667, 1.333, and 1 for the unmeasured ->
   * w = 1.5,.75,1 -> shares .923 .462 .615 -> 1, 0, 1 */
  hs_policy_config c = cfg_of("time-only");
  set(&c, "min_samples", "0");
  set(&c, "deadband", "0");
  hs_controller *ctl = make(&c, 3, NULL, 2);
  expect_alloc(ctl, (uint64_t[]){1, 1, 0}, 3);
  hs_telemetry t[3] = {{0.01, 0, 1}, {0.02, 0, 1}, {0, 0, 0}};
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK, "%s", err.msg);
  expect_alloc(ctl, (uint64_t[]){1, 0, 1}, 3);
  hs_controller_destroy(ctl);
}

Test(policy, floor_is_water_filled) {
  /* exact shares 171.4, 85.7, 42.9; floor 60 pins participant 2, the other 240
   * go 2:1 -> 160, 80, 60 */
  hs_policy_config c = cfg_of("time-only");
  set(&c, "min_samples", "60");
  hs_controller *ctl = make(&c, 3, NULL, 300);
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){160, 80, 60}, 3);
  hs_controller_destroy(ctl);
  /* a floor equal to the whole budget over n pins everyone */
  set(&c, "min_samples", "100");
  ctl = make(&c, 3, NULL, 300);
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){100, 100, 100}, 3);
  hs_controller_destroy(ctl);
}

Test(policy, deadband_keeps_small_changes) {
  hs_policy_config c = cfg_of("time-only");
  set(&c, "deadband", "0.05");
  set(&c, "ema", "0");
  hs_controller *ctl = make(&c, 3, NULL, 300);
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){171, 86, 43}, 3);
  /* participant 2 a little faster: 0.038 s/sample -> split 169.6/84.8/44.6 ->
   * 170,85,45: |45-43|/43 = 4.7 % <= 5 %: kept */
  hs_telemetry t[3] = {{1.71, 1, 171}, {1.72, 1, 86}, {43 * 0.038, 1, 43}};
  cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){171, 86, 43}, 3);
  cr_expect_not(hs_controller_reallocated(ctl));
  /* 0.036 s/sample -> 167.5/83.7/46.5 -> 47 vs 43 = 9.3 %: moves */
  t[2].time_s = 43 * 0.036;
  cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK);
  cr_expect(hs_controller_reallocated(ctl));
  const uint64_t *a = hs_controller_allocation(ctl);
  cr_expect_eq(a[0] + a[1] + a[2], 300);
  cr_expect_gt(a[2], 45);
  hs_controller_destroy(ctl);
}

/* The deadband rule where the pass runs in blocks (1024 participants) and
 * stops at the first share outside the band: the one that moves is the last
 * participant, in the last block; the shares that shift by one elsewhere
 * (1 %) stay inside the band. */
Test(policy, deadband_decided_by_the_last_participant_of_many) {
  size_t n = 3000;
  hs_policy_config c = cfg_of("time-only");
  set(&c, "deadband", "0.05");
  set(&c, "ema", "0");
  hs_controller *ctl = make(&c, n, NULL, 100 * (uint64_t)n);
  hs_telemetry *t = calloc(n, sizeof *t);
  hs_error err = {0};
  for (size_t i = 0; i < n; i++) t[i] = (hs_telemetry){1.0, 1.0, 100};
  cr_assert_eq(hs_controller_update(ctl, t, n, &err), HS_OK);
  cr_expect_not(hs_controller_reallocated(ctl)); /* all equal: the equal split */
  /* the last one 4 % faster: its share 104 (4 % more), the others 100 or 99 */
  t[n - 1].time_s = 1.0 / 1.04;
  cr_assert_eq(hs_controller_update(ctl, t, n, &err), HS_OK);
  cr_expect_not(hs_controller_reallocated(ctl), "a 4 %% change moved the split");
  cr_expect_eq(hs_controller_allocation(ctl)[n - 1], 100);
  /* 9 % faster: 108.997 -> 108 or 109 vs 100, outside the band */
  t[n - 1].time_s = 1.0 / 1.09;
  cr_assert_eq(hs_controller_update(ctl, t, n, &err), HS_OK);
  cr_expect(hs_controller_reallocated(ctl));
  cr_expect_geq(hs_controller_allocation(ctl)[n - 1], 108);
  hs_controller_destroy(ctl);
  free(t);
}

/* Telemetry is checked in one pass without branches, then the first bad
 * record is named: the lowest index, whatever its fault. */
Test(policy, the_first_bad_record_is_named_among_many) {
  size_t n = 5000;
  hs_policy_config c = cfg_of("oort");
  hs_controller *ctl = make(&c, n, NULL, 10 * (uint64_t)n);
  hs_telemetry *t = calloc(n, sizeof *t);
  for (size_t i = 0; i < n; i += 2) t[i] = (hs_telemetry){0.5, 2.0, 10}; /* odd ones: 0/0/0 */
  hs_error err = {0};
  const uint64_t *a = hs_controller_allocation(ctl);
  uint64_t before = a[0];
  t[4200].samples = -3;
  t[3100].energy_j = NAN;
  t[2601].time_s = 0; /* unselected, 0 samples: fine */
  t[2600].time_s = 0; /* 10 samples in 0 s */
  cr_assert_eq(hs_controller_update(ctl, t, n, &err), HS_EINVAL);
  cr_expect_str_eq(err.msg, "participant 2600: time_s: 0 for 10 samples (must be > 0)");
  t[2600].time_s = 0.5;
  cr_assert_eq(hs_controller_update(ctl, t, n, &err), HS_EINVAL);
  cr_expect_str_eq(err.msg, "participant 3100: energy_j: nan is not a finite number >= 0");
  t[3100].energy_j = -0.0; /* -0 is >= 0 */
  cr_assert_eq(hs_controller_update(ctl, t, n, &err), HS_EINVAL);
  cr_expect_str_eq(err.msg, "participant 4200: samples: -3 is negative");
  t[4200].time_s = INFINITY;
  cr_assert_eq(hs_controller_update(ctl, t, n, &err), HS_EINVAL);
  cr_expect_str_eq(err.msg, "participant 4200: time_s: inf is not a finite number >= 0");
  cr_expect_eq(hs_controller_allocation(ctl)[0], before);
  cr_expect_eq(hs_controller_rounds(ctl), 0);
  t[4200] = (hs_telemetry){0.5, 2.0, 10};
  cr_assert_eq(hs_controller_update(ctl, t, n, &err), HS_OK, "%s", err.msg);
  hs_controller_destroy(ctl);
  free(t);
}

Test(policy, static_measures_once_then_freezes) {
  hs_policy_config c = cfg_of("static");
  hs_controller *ctl = make(&c, 3, NULL, 300);
  hs_telemetry zeros[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, zeros, 3, &err), HS_OK); /* nothing measured yet */
  expect_alloc(ctl, (uint64_t[]){100, 100, 100}, 3);
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){171, 86, 43}, 3);
  hs_telemetry flipped[3] = {{4, 1, 100}, {2, 1, 100}, {1, 1, 100}};
  cr_assert_eq(hs_controller_update(ctl, flipped, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){171, 86, 43}, 3);
  cr_expect_not(hs_controller_reallocated(ctl));
  hs_controller_destroy(ctl);
}

Test(policy, bad_telemetry_names_participant_and_field_and_changes_nothing) {
  hs_policy_config c = cfg_of("balanced");
  hs_controller *ctl = make(&c, 3, NULL, 300);
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  struct {
    hs_telemetry t;
    const char *msg;
  } bad[] = {
      {{NAN, 1, 10}, "participant 1: time_s"},   {{INFINITY, 1, 10}, "participant 1: time_s"},
      {{-1, 1, 10}, "participant 1: time_s"},    {{1, NAN, 10}, "participant 1: energy_j"},
      {{1, -0.5, 10}, "participant 1: energy_j"}, {{1, 1, -3}, "participant 1: samples"},
      {{0, 1, 10}, "participant 1: time_s"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    hs_telemetry t[3] = {base3[0], bad[k].t, {0.1, 0.1, 10}};
    cr_expect_eq(hs_controller_update(ctl, t, 3, &err), HS_EINVAL);
    cr_expect(strncmp(err.msg, bad[k].msg, strlen(bad[k].msg)) == 0, "%s", err.msg);
    expect_alloc(ctl, (uint64_t[]){146, 98, 56}, 3);
    cr_expect_eq(hs_controller_rounds(ctl), 1);
  }
  cr_expect_eq(hs_controller_update(ctl, base3, 2, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "2 records for 3 participants"), "%s", err.msg);
  /* the estimates did not move either: the same telemetry gives the same split */
  cr_assert_eq(hs_controller_update(ctl, base3, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){146, 98, 56}, 3);
  hs_controller_destroy(ctl);
}

Test(policy, budget_below_floor_is_an_error) {
  hs_policy_config c = cfg_of("adaptive");
  set(&c, "min_samples", "4");
  hs_error err = {0};
  cr_expect_null(hs_controller_create(&c, 3, NULL, 11, &err));
  cr_expect(strncmp(err.msg, "budget: 11", 10) == 0, "%s", err.msg);
  uint32_t g[3] = {0, 0, 1}; /* group 0 gets 8 of 13 >= 2*4, group 1 gets 5 >= 4 */
  hs_controller *ok = hs_controller_create(&c, 3, g, 13, &err);
  cr_expect_not_null(ok, "%s", err.msg);
  hs_controller_destroy(ok);
  uint32_t g2[3] = {0, 1, 1}; /* 12: group 1 gets 8 >= 8, group 0 gets 4: fine; 11: 7 < 8 */
  cr_expect_null(hs_controller_create(&c, 3, g2, 11, &err));
  cr_expect(strstr(err.msg, "group 1"), "%s", err.msg);
  cr_expect_null(hs_controller_create(&c, 0, NULL, 11, &err));
}

Test(policy, groups_never_exchange_samples) {
  /* the fast participants all sit in group 5; group 9 keeps its 150 anyway */
  hs_policy_config c = cfg_of("time-only");
  uint32_t g[4] = {5, 9, 5, 9};
  hs_controller *ctl = make(&c, 4, g, 300);
  expect_alloc(ctl, (uint64_t[]){75, 75, 75, 75}, 4);
  hs_telemetry t[4] = {{0.75, 1, 75}, {7.5, 1, 75}, {1.5, 1, 75}, {15, 1, 75}};
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, t, 4, &err), HS_OK);
  /* group 5: tau .01,.02 -> 100, 50; group 9: tau .1,.2 -> 100, 50 */
  expect_alloc(ctl, (uint64_t[]){100, 100, 50, 50}, 4);
  hs_controller_destroy(ctl);
}

Test(policy, budget_above_2_53_is_an_error_and_2_53_is_exact) {
  /* splits run in doubles: above 2^53 samples a share is no longer exact, and
   * near 2^64 an equal-cost round once gave 0 and 2^64-1 (floor broken, the
   * integer sum wrapped) */
  hs_policy_config c = cfg_of("time-only");
  hs_error err = {0};
  uint64_t top = (uint64_t)1 << 53;
  cr_expect_null(hs_controller_create(&c, 2, NULL, top + 1, &err));
  cr_expect_eq(err.status, HS_ERANGE);
  cr_expect(strncmp(err.msg, "budget: 9007199254740993 samples", 32) == 0, "%s", err.msg);
  cr_expect_null(hs_controller_create(&c, 2, NULL, UINT64_MAX, &err));
  hs_controller *ctl = make(&c, 3, NULL, top);
  hs_telemetry t[3] = {{1, 1, 1}, {3, 1, 1}, {7, 1, 1}};
  cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK, "%s", err.msg);
  const uint64_t *a = hs_controller_allocation(ctl);
  cr_expect_eq(a[0] + a[1] + a[2], top);
  /* shares 21/31, 7/31, 3/31 of 2^53 */
  cr_expect(a[0] >= 6101651108050348 && a[0] <= 6101651108050350, "%llu", (unsigned long long)a[0]);
  cr_expect(a[2] >= 871664444007192 && a[2] <= 871664444007194, "%llu", (unsigned long long)a[2]);
  hs_controller_destroy(ctl);
}

Test(policy, median_of_two_huge_costs_does_not_overflow) {
  /* per-sample times 1.7e308 (three) and 1: the median of four is
   * (1.7e308 + 1.7e308)/2, which overflowed to inf; every tau/median became 0,
   * every cost the clamp, and the split equal, as if nothing was measured.
   * With 1.7e300 the same shape gives the fast participant everything but the
   * floor, and so must 1.7e308. */
  hs_policy_config c = cfg_of("time-only");
  hs_controller *ctl = make(&c, 4, NULL, 400);
  hs_telemetry t[4] = {{1.7e308, 0, 1}, {1.7e308, 0, 1}, {1.7e308, 0, 1}, {1, 0, 1}};
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(ctl, t, 4, &err), HS_OK, "%s", err.msg);
  expect_alloc(ctl, (uint64_t[]){1, 1, 1, 397}, 4);
  hs_controller_destroy(ctl);
}

Test(policy_config, subnormal_values_are_numbers) {
  /* strtod reports ERANGE for 1e-310 though it is a finite number; the key
   * was refused as "not a finite number" */
  hs_policy_config c = cfg_of("adaptive");
  hs_error err = {0};
  cr_expect_eq(hs_policy_config_set(&c, "deadband", "1e-310", &err), HS_OK, "%s", err.msg);
  cr_expect_eq(get(&c, "deadband"), 1e-310);
  cr_expect_eq(hs_policy_config_set(&c, "w_e", "4.9e-324", &err), HS_OK, "%s", err.msg);
  cr_expect_eq(get(&c, "w_e"), 4.9e-324);
  cr_expect_eq(hs_policy_config_set(&c, "deadband", "1e999", &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "deadband: \"1e999\" is not a finite number"), "%s", err.msg);
}
