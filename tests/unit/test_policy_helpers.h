/* test_policy_helpers.h: the assertions the controller's test files share
 * (build a config, set a key, read one back, build a controller, compare an
 * allocation), each failing the test with the library's message. */
#ifndef TEST_POLICY_HELPERS_H
#define TEST_POLICY_HELPERS_H

#include <criterion/criterion.h>
#include <math.h>

#include "policies/hs_policy.h"

static inline hs_policy_config cfg_of(const char *kind) {
  hs_policy_config c;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&c, kind, &err), HS_OK, "%s", err.msg);
  return c;
}

static inline void set(hs_policy_config *c, const char *k, const char *v) {
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_set(c, k, v, &err), HS_OK, "%s=%s: %s", k, v, err.msg);
}

/* A key's value read back through the public getter. */
static inline double get(const hs_policy_config *c, const char *k) {
  hs_error err = {0};
  double v = NAN;
  cr_assert_eq(hs_policy_config_get(c, k, &v, &err), HS_OK, "%s: %s", k, err.msg);
  return v;
}

static inline hs_controller *make(const hs_policy_config *c, size_t n, const uint32_t *g,
                                  uint64_t b) {
  hs_error err = {0};
  hs_controller *ctl = hs_controller_create(c, n, g, b, &err);
  cr_assert_not_null(ctl, "%s", err.msg);
  return ctl;
}

static inline void expect_alloc(const hs_controller *c, const uint64_t *want, size_t n) {
  const uint64_t *a = hs_controller_allocation(c);
  for (size_t i = 0; i < n; i++)
    cr_expect_eq(a[i], want[i], "participant %zu: got %llu, want %llu", i,
                 (unsigned long long)a[i], (unsigned long long)want[i]);
}

#endif
