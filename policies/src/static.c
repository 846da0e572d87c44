/* static.c: the static baseline: measure one round, then the time-only
 * inverse-cost split of that round's per-sample times, frozen for the rest of
 * the run (ema and deadband do not apply).
 *
 * State: the cost estimates (costs.c) and whether the split is frozen. Before
 * the first update that carries a sample, the equal split stands. One update:
 * O(1) once frozen (the split stays: no candidate, nothing to compare), the
 * O(n) expected split on the measuring round. */
#include <stdbool.h>

#include "base/hs_alloc.h"
#include "pol_costs.h"

enum { K_MIN_SAMPLES };
static const pol_key static_keys[] = {
    [K_MIN_SAMPLES] = {"min_samples", POL_UINT64, 1, 0, 0, false, false, NULL,
                       "per-participant floor"},
};

typedef struct static_split {
  pol_costs costs;
  uint64_t min_samples;
  bool frozen;
} static_split;

static hs_status static_create(hs_controller *c, hs_error *err) {
  uint64_t floor = pol_uint(c, K_MIN_SAMPLES);
  hs_status st = pol_check_floor(c, floor, err);
  if (st != HS_OK) return st;
  static_split *s = hs_calloc(1, sizeof *s);
  pol_costs_init(&s->costs, c->n, c->ngroups);
  pol_make_scratch(c);
  s->min_samples = floor;
  c->cand_w = true;
  c->state = s;
  return HS_OK;
}

static void static_destroy(hs_controller *c) {
  static_split *s = c->state;
  if (!s) return;
  pol_costs_fini(&s->costs);
  hs_free(s);
  c->state = NULL;
}

static void static_update(hs_controller *c, const hs_telemetry *t) {
  static_split *s = c->state;
  c->keep = true; /* frozen, or nothing measured yet: the split stays */
  if (s->frozen) return;
  bool any = false;
  for (size_t i = 0; i < c->n; i++) any |= t[i].samples > 0;
  if (!any) return;
  c->keep = false;
  pol_costs_observe(&s->costs, t, c->n, 0.0);
  pol_costs_split(c, &s->costs, 0.0, s->min_samples, NULL); /* into c->w */
  s->frozen = true;
}

static size_t static_state(const hs_controller *c, pol_state_field *f) {
  static_split *s = c->state;
  size_t m = pol_costs_state(&s->costs, c->n, f);
  f[m++] = (pol_state_field){.name = "frozen", .type = POL_S_FLAG, .ptr = &s->frozen,
                             .count = 1, .lo = 0, .hi = 1};
  return m;
}

const pol_type pol_static = {
    .name = "static",
    .summary = "measure one round, then the time-only split, frozen",
    .caps = HS_POLICY_CAP_GROUPS,
    .bytes_per_participant = POL_COSTS_BYTES,
    .keys = static_keys,
    .nkeys = POL_NKEYS(static_keys),
    .create = static_create,
    .destroy = static_destroy,
    .update = static_update,
    .state = static_state,
};
