/* equal.c: the equal policy, the baseline every other is measured against:
 * each group's budget split as evenly as integers allow, extras to the lower
 * indices, whatever the telemetry says (it is validated and ignored).
 *
 * No state and no keys of its own. O(1) per update beyond the validation of
 * the telemetry (the split never changes: the update says so, c->keep, and
 * hs_controller_reallocated stays false); no candidate array. The floor is
 * one sample per participant, checked at creation as for the adaptive
 * policies. */
#include "pol_policy.h"

static hs_status equal_create(hs_controller *c, hs_error *err) {
  c->cand_w = true; /* it never makes a candidate: no candidate array */
  return pol_check_floor(c, 1, err);
}

static void equal_destroy(hs_controller *c) { (void)c; }

static void equal_update(hs_controller *c, const hs_telemetry *t) {
  (void)t;
  c->keep = true;
}

static size_t equal_state(const hs_controller *c, pol_state_field *f) {
  (void)c, (void)f;
  return 0; /* nothing but the allocation, which the controller saves */
}

const pol_type pol_equal = {
    .name = "equal",
    .summary = "the budget split as evenly as integers allow",
    .caps = HS_POLICY_CAP_GROUPS,
    .keys = NULL,
    .nkeys = 0,
    .create = equal_create,
    .destroy = equal_destroy,
    .update = equal_update,
    .state = equal_state,
};
