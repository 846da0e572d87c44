/* policy_testonly.c: test-rotate, a policy that exists only in the test build,
 * to prove that a policy is one file plus one registry line: it is written
 * against policies/src/pol_policy.h exactly as the real ones are, registered by
 * one POL_REGISTER line (tests/policies/registry.def), and driven by
 * tests/unit/test_policy_registry.c through the public API only.
 *
 * What it does (worked out by hand in the tests): each group's budget split as
 * evenly as integers allow, like equal, but after the r-th update the e extra
 * samples of a group of m go to the members at positions (r*stride + j) mod m,
 * j < e, instead of the lowest ones. Keys: stride (integer >= 1, default 1)
 * and tilt (a real in [0,1) that it only stores, to exercise real keys).
 * State: the stride and the update count. O(n) per update. */
#include <string.h>

#include "base/hs_alloc.h"
#include "pol_policy.h"

enum { K_STRIDE, K_TILT };
static const pol_key rotate_keys[] = {
    [K_STRIDE] = {"stride", POL_UINT32, 1, 1, 0, false, false, NULL,
                  "positions the extras move by per update"},
    [K_TILT] = {"tilt", POL_REAL, 0.25, 0, 1, false, true, NULL, "stored, never used"},
};

typedef struct rotate {
  uint64_t stride;
  uint64_t round;
} rotate;

static hs_status rotate_create(hs_controller *c, hs_error *err) {
  hs_status st = pol_check_floor(c, 1, err);
  if (st != HS_OK) return st;
  rotate *r = hs_calloc(1, sizeof *r);
  r->stride = pol_uint(c, K_STRIDE);
  c->state = r;
  return HS_OK;
}

static void rotate_destroy(hs_controller *c) {
  hs_free(c->state);
  c->state = NULL;
}

static void rotate_update(hs_controller *c, const hs_telemetry *t) {
  (void)t;
  rotate *r = c->state;
  r->round++;
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m;
    const uint32_t *idx = pol_group(c, g, &m);
    uint64_t each = c->gbudget[g] / m, extra = c->gbudget[g] % m;
    size_t first = (size_t)((r->round * r->stride) % m);
    for (size_t j = 0; j < m; j++) c->next[idx[j]] = each;
    for (uint64_t j = 0; j < extra; j++) c->next[idx[(first + j) % m]]++;
  }
}

const pol_type pol_test_rotate = {
    .name = "test-rotate",
    .summary = "test only: the equal split with the extras rotating",
    .caps = HS_POLICY_CAP_GROUPS,
    .keys = rotate_keys,
    .nkeys = POL_NKEYS(rotate_keys),
    .create = rotate_create,
    .destroy = rotate_destroy,
    .update = rotate_update,
};
