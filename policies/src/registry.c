/* registry.c: the table of policy descriptors, built from registry.def (plus
 * the file named by POL_REGISTRY_EXTRA when a test target compiles its own
 * registry), the lookup by kind, and the public name/summary/caps queries.
 *
 * Invariants: names are unique and shorter than HS_POLICY_NAME_MAX, every
 * descriptor has an update hook, step hooks exactly when it claims
 * HS_POLICY_CAP_STEP_LEVEL, and at most HS_POLICY_VALUES_MAX own keys (all
 * asserted by test_policy_registry over every registered descriptor). Lookup
 * is linear: ten names, called when a configuration is read or a controller
 * created, never per round. Rejected: registration at run time (a global,
 * mutable list whose order would depend on who called first), and a
 * CMake-generated table (a registry a reader cannot open in the source tree). */
#include <string.h>

#include "pol_policy.h"

#define POL_REGISTER(sym) extern const pol_type sym;
#include "registry.def"
#ifdef POL_REGISTRY_EXTRA
#include POL_REGISTRY_EXTRA
#endif
#undef POL_REGISTER

#define POL_REGISTER(sym) &sym,
static const pol_type *const registry[] = {
#include "registry.def"
#ifdef POL_REGISTRY_EXTRA
#include POL_REGISTRY_EXTRA
#endif
};
#undef POL_REGISTER
#define NPOLICIES (sizeof registry / sizeof registry[0])

size_t pol_type_count(void) { return NPOLICIES; }
const pol_type *pol_type_at(size_t i) { return i < NPOLICIES ? registry[i] : NULL; }

const pol_type *pol_lookup(const char *kind) {
  if (!kind) return NULL;
  for (size_t i = 0; i < NPOLICIES; i++)
    if (!strcmp(registry[i]->name, kind)) return registry[i];
  return NULL;
}

size_t hs_policy_count(void) { return NPOLICIES; }
const char *hs_policy_name(size_t i) { return i < NPOLICIES ? registry[i]->name : NULL; }
const char *hs_policy_summary(size_t i) { return i < NPOLICIES ? registry[i]->summary : NULL; }

size_t hs_policy_bytes_per_participant(const char *kind) {
  const pol_type *t = pol_lookup(kind);
  return t ? t->bytes_per_participant : 0;
}

unsigned hs_policy_caps(const char *kind) {
  const pol_type *t = pol_lookup(kind);
  return t ? t->caps : 0;
}
