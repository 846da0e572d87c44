/* test_policy_registry.c: the policy registry as an extension point. Links a
 * controller library whose registry carries the test-only policy test-rotate
 * (tests/policies/policy_testonly.c, one line in tests/policies/registry.def),
 * then: the invariants every registered descriptor must keep, capabilities
 * coming from the descriptors, the fixed config layout (THE ABI RULE in
 * hs_policy.h), and test-rotate driven through the public API only, with
 * known answers worked out by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "policies/hs_policy.h"
#include "pol_policy.h"
#include "test_policy_helpers.h"

/* --- the registry ------------------------------------------------------------- */

Test(policy_registry, test_policy_follows_the_real_ones) {
  const char *want[] = {"equal",    "static",      "adaptive", "time-only", "low-energy",
                        "balanced", "energy-only", "oort",     "ema-batch", "round-time",
                        "test-rotate"};
  cr_assert_eq(hs_policy_count(), 11);
  for (size_t i = 0; i < 11; i++) cr_expect_str_eq(hs_policy_name(i), want[i]);
  cr_expect_null(hs_policy_name(11));
  cr_expect_str_eq(hs_policy_summary(10), "test only: the equal split with the extras rotating");
  /* the unknown-kind message lists every registered name */
  hs_policy_config c;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&c, "nope", &err), HS_ENOENT);
  cr_expect(strstr(err.msg, "round-time, test-rotate)"), "%s", err.msg);
}

Test(policy_registry, every_descriptor_keeps_the_contract) {
  for (size_t i = 0; i < pol_type_count(); i++) {
    const pol_type *t = pol_type_at(i);
    cr_assert_not_null(t);
    cr_expect_lt(strlen(t->name), HS_POLICY_NAME_MAX, "%s", t->name);
    cr_expect(t->summary && t->summary[0], "%s: summary", t->name);
    cr_expect(t->create && t->destroy && t->update, "%s: hooks", t->name);
    bool step = (t->caps & HS_POLICY_CAP_STEP_LEVEL) != 0;
    cr_expect_eq(t->step_batches != NULL, step, "%s: step_batches vs caps", t->name);
    cr_expect_eq(t->step_update != NULL, step, "%s: step_update vs caps", t->name);
    cr_expect_leq(t->nkeys, HS_POLICY_VALUES_MAX, "%s", t->name);
    cr_expect_eq(pol_lookup(t->name), t, "%s: names are unique", t->name);
    for (size_t j = 0; j < t->nkeys; j++) {
      const pol_key *k = &t->keys[j];
      cr_expect(k->doc && k->doc[0], "%s.%s: doc", t->name, k->name);
      cr_expect(strcmp(k->name, "seed") && strcmp(k->name, "steps_per_round") &&
                    strcmp(k->name, "kind"),
                "%s.%s: a common key", t->name, k->name);
      for (size_t q = 0; q < j; q++)
        cr_expect(strcmp(k->name, t->keys[q].name), "%s.%s twice", t->name, k->name);
      cr_expect_str_eq(hs_policy_key_doc(t->name, k->name), k->doc);
    }
    /* the defaults pass the whole-config check and build a controller */
    hs_policy_config c = cfg_of(t->name);
    hs_error err = {0};
    cr_expect_eq(hs_policy_config_check(&c, &err), HS_OK, "%s: %s", t->name, err.msg);
    hs_controller *ctl = hs_controller_create(&c, 4, NULL, 400, &err);
    cr_expect_not_null(ctl, "%s: %s", t->name, err.msg);
    hs_controller_destroy(ctl);
  }
}

Test(policy_registry, capabilities_come_from_the_descriptor) {
  cr_expect_eq(hs_policy_caps("equal"), HS_POLICY_CAP_GROUPS);
  cr_expect_eq(hs_policy_caps("balanced"), HS_POLICY_CAP_GROUPS);
  cr_expect_eq(hs_policy_caps("static"), HS_POLICY_CAP_GROUPS);
  cr_expect_eq(hs_policy_caps("oort"), HS_POLICY_CAP_SELECTS);
  cr_expect_eq(hs_policy_caps("ema-batch"), HS_POLICY_CAP_STEP_LEVEL | HS_POLICY_CAP_GROUPS);
  cr_expect_eq(hs_policy_caps("test-rotate"), HS_POLICY_CAP_GROUPS);
  cr_expect_eq(hs_policy_caps("nope"), 0);
  cr_expect_eq(hs_policy_caps(NULL), 0);
  /* a policy without the groups capability refuses groups */
  hs_policy_config c = cfg_of("oort");
  hs_error err = {0};
  uint32_t g[4] = {1, 1, 2, 2};
  cr_expect_null(hs_controller_create(&c, 4, g, 40, &err));
  cr_expect_eq(err.status, HS_EUNSUP);
  cr_expect(strstr(err.msg, "groups: policy \"oort\""), "%s", err.msg);
}

Test(policy_registry, config_layout_is_fixed) {
  /* THE ABI RULE: kind, seed, steps_per_round, reserved, value[16]. A change
   * here is an ABI change for every linked trainer. */
  cr_expect_eq(offsetof(hs_policy_config, seed), HS_POLICY_NAME_MAX);
  cr_expect_eq(offsetof(hs_policy_config, steps_per_round), HS_POLICY_NAME_MAX + 8);
  cr_expect_eq(offsetof(hs_policy_config, value), HS_POLICY_NAME_MAX + 16);
  cr_expect_eq(sizeof(hs_policy_config), HS_POLICY_NAME_MAX + 16 + 8 * HS_POLICY_VALUES_MAX);
  /* value[j] is the j-th key foreach visits */
  hs_policy_config c = cfg_of("oort");
  set(&c, "oort_alpha", "3.5");
  set(&c, "oort_pacer_window", "7");
  cr_expect_eq(c.value[3].real, 3.5);
  cr_expect_eq(c.value[8].uint, 7);
  cr_expect_eq(c.value[9].uint, 0, "slots past the last key stay 0");
}

/* --- test-rotate through the public API ---------------------------------------- */

typedef struct seen {
  char text[256];
  size_t n;
} seen;

static void collect(const char *k, const char *v, void *ud) {
  seen *s = ud;
  size_t used = strlen(s->text);
  snprintf(s->text + used, sizeof s->text - used, "%s=%s;", k, v);
  s->n++;
}

Test(policy_registry, test_policy_keys_by_name) {
  hs_policy_config c = cfg_of("test-rotate");
  seen s = {0};
  cr_expect_eq(hs_policy_config_foreach(&c, collect, &s), 4);
  cr_expect_str_eq(s.text, "stride=1;tilt=0.25;seed=0;steps_per_round=1;");
  set(&c, "stride", "2");
  set(&c, "tilt", "\"0.5\"");
  uint64_t u = 0;
  double d = 0;
  hs_error err = {0};
  cr_expect_eq(hs_policy_config_get_uint(&c, "stride", &u, &err), HS_OK);
  cr_expect_eq(u, 2);
  cr_expect_eq(hs_policy_config_get(&c, "tilt", &d, &err), HS_OK);
  cr_expect_eq(d, 0.5);
  cr_expect_eq(hs_policy_config_get_uint(&c, "tilt", &u, &err), HS_ETYPE);
  cr_expect_eq(hs_policy_config_min_samples(&c), 1);

  hs_policy_config before = c;
  cr_expect_eq(hs_policy_config_set(&c, "stride", "0", &err), HS_ERANGE);
  cr_expect_str_eq(err.msg, "stride: 0 must be an integer >= 1");
  cr_expect_eq(hs_policy_config_set(&c, "tilt", "1", &err), HS_ERANGE);
  cr_expect_str_eq(err.msg, "tilt: 1 is outside [0, 1)");
  cr_expect_eq(hs_policy_config_set(&c, "w_e", "0.5", &err), HS_EKEY);
  cr_expect_str_eq(err.msg, "w_e: does not apply to policy \"test-rotate\" (its keys: stride, "
                            "tilt, seed, steps_per_round); kind \"adaptive\" has it");
  cr_expect(memcmp(&c, &before, sizeof c) == 0, "a refused key changed the config");

  /* its keys are part of the vocabulary: misplaced on another kind, not unknown */
  hs_policy_config e = cfg_of("equal");
  cr_expect_eq(hs_policy_config_set(&e, "stride", "2", &err), HS_EKEY);
  cr_expect_str_eq(err.msg, "stride: does not apply to policy \"equal\" (its keys: seed, "
                            "steps_per_round); kind \"test-rotate\" has it");
  cr_expect_eq(hs_policy_config_get(&e, "stride", &d, &err), HS_EKEY);
  cr_expect_null(hs_policy_key_doc("equal", "stride"));
  cr_expect_str_eq(hs_policy_key_doc("test-rotate", "seed"),
                   "seed of randomised policies (the simulator's by default)");

  /* direct writes to the store are caught by the whole-config check */
  c.value[0].uint = (uint64_t)1 << 33;
  cr_expect_eq(hs_policy_config_check(&c, &err), HS_ERANGE);
  cr_expect_str_eq(err.msg, "stride: 8589934592 is too large");
  c.value[0].uint = 1;
  c.value[1].real = NAN;
  cr_expect_eq(hs_policy_config_check(&c, &err), HS_EINVAL);
  cr_expect(strncmp(err.msg, "tilt: ", 6) == 0, "%s", err.msg);
}

Test(policy_registry, test_policy_known_answers) {
  /* 10 over 3: 4,3,3; the one extra then moves to position r*stride mod 3 */
  hs_policy_config c = cfg_of("test-rotate");
  hs_error err = {0};
  hs_controller *ctl = hs_controller_create(&c, 3, NULL, 10, &err);
  cr_assert_not_null(ctl, "%s", err.msg);
  expect_alloc(ctl, (uint64_t[]){4, 3, 3}, 3);
  const hs_telemetry t[3] = {{1, 1, 4}, {1, 1, 3}, {1, 1, 3}};
  const uint64_t want[3][3] = {{3, 4, 3}, {3, 3, 4}, {4, 3, 3}};
  for (int r = 0; r < 3; r++) {
    cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK, "%s", err.msg);
    expect_alloc(ctl, want[r], 3);
    cr_expect(hs_controller_reallocated(ctl));
  }
  cr_expect_eq(hs_controller_rounds(ctl), 3);
  /* bad telemetry is refused before the policy runs: nothing moves */
  const hs_telemetry bad[3] = {{1, 1, 4}, {-1, 1, 3}, {1, 1, 3}};
  cr_expect_eq(hs_controller_update(ctl, bad, 3, &err), HS_EINVAL);
  expect_alloc(ctl, want[2], 3);
  cr_expect_eq(hs_controller_rounds(ctl), 3);
  hs_controller_destroy(ctl);

  /* stride 2: round 1 puts the extra at position 2, round 2 at 4 mod 3 = 1 */
  set(&c, "stride", "2");
  ctl = hs_controller_create(&c, 3, NULL, 10, &err);
  cr_assert_not_null(ctl, "%s", err.msg);
  cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){3, 3, 4}, 3);
  cr_assert_eq(hs_controller_update(ctl, t, 3, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){3, 4, 3}, 3);
  hs_controller_destroy(ctl);
}

Test(policy_registry, test_policy_groups_and_floor) {
  /* groups 5 = {0,1}, 9 = {2,3,4}; 12*2/5 = 4.8 and 12*3/5 = 7.2: group 5 wins
   * the extra (5), group 9 gets 7; equal inside: 3,2 | 3,2,2; after round 1
   * each group's extra moves to its member at position 1: 2,3 | 2,3,2 */
  hs_policy_config c = cfg_of("test-rotate");
  hs_error err = {0};
  uint32_t g[5] = {5, 5, 9, 9, 9};
  hs_controller *ctl = hs_controller_create(&c, 5, g, 12, &err);
  cr_assert_not_null(ctl, "%s", err.msg);
  expect_alloc(ctl, (uint64_t[]){3, 2, 3, 2, 2}, 5);
  const hs_telemetry t[5] = {{1, 1, 3}, {1, 1, 2}, {1, 1, 3}, {1, 1, 2}, {1, 1, 2}};
  cr_assert_eq(hs_controller_update(ctl, t, 5, &err), HS_OK);
  expect_alloc(ctl, (uint64_t[]){2, 3, 2, 3, 2}, 5);
  hs_controller_destroy(ctl);
  /* the floor of one sample each is checked by its create hook */
  cr_expect_null(hs_controller_create(&c, 3, NULL, 2, &err));
  cr_expect_str_eq(err.msg, "budget: 2 samples is below 3 participants x min_samples 1");
}
