/* controller.c: the controller object, telemetry validation, the groups, and
 * the equal / static / adaptive policies (oort.c and ddp.c hold the other two).
 *
 * Data: per participant the smoothed per-sample time and energy (tau, eps) and
 * whether it has an estimate; the current allocation and a candidate buffer.
 * Groups are a permutation `order` of the participants sorted by (group id,
 * index) with offsets per group, so each group is a contiguous index list and a
 * group's split is one call to pol_apportion. Invariants after every call:
 * sum(alloc over a group) == that group's budget; alloc >= min_samples (except
 * oort's unselected, which are 0); a failed update changed nothing (validation
 * runs to completion before any state is written).
 *
 * Cost of one adaptive update: O(n) expected: one pass for the EMA, two
 * quickselect medians per group, one apportionment (O(n) with a quickselect for
 * the k largest remainders). Rejected: sorting for medians or remainders
 * (O(n log n)), and per-group heap allocations during updates (everything is
 * allocated once in hs_controller_create). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hs_alloc.h"
#include "pol_internal.h"

#define COST_MIN 1e-12

/* --- groups ----------------------------------------------------------------- */

typedef struct gkey {
  uint32_t gid;
  uint32_t idx;
} gkey;

static int gkey_cmp(const void *a, const void *b) {
  const gkey *x = a, *y = b;
  if (x->gid != y->gid) return x->gid < y->gid ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Sort once at creation (O(n log n), never again). */
static void build_groups(hs_controller *c, const uint32_t *groups) {
  size_t n = c->n;
  c->order = hs_calloc(n, sizeof *c->order);
  if (!groups) {
    for (size_t i = 0; i < n; i++) c->order[i] = (uint32_t)i;
    c->ngroups = 1;
    c->gstart = hs_calloc(2, sizeof *c->gstart);
    c->gstart[1] = n;
    return;
  }
  gkey *k = hs_calloc(n, sizeof *k);
  for (size_t i = 0; i < n; i++) k[i] = (gkey){groups[i], (uint32_t)i};
  qsort(k, n, sizeof *k, gkey_cmp);
  size_t ng = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || k[i].gid != k[i - 1].gid) ng++;
  c->ngroups = ng;
  c->gstart = hs_calloc(ng + 1, sizeof *c->gstart);
  size_t g = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && k[i].gid != k[i - 1].gid) c->gstart[++g] = i;
    c->order[i] = k[i].idx;
  }
  c->gstart[ng] = n;
  hs_free(k);
}

/* Group budgets in proportion to group size, largest remainder, ties to the
 * earlier group (smaller id). Exact: the remainders (budget*size mod n < 2^32)
 * are integers, held in doubles only to reuse pol_top_k. */
static void split_group_budgets(hs_controller *c) {
  size_t ng = c->ngroups;
  c->gbudget = hs_calloc(ng, sizeof *c->gbudget);
  if (ng == 1) {
    c->gbudget[0] = c->budget;
    return;
  }
  /* budget*size/n without 128-bit products: budget = q*n + r, r < n, size <= n */
  uint64_t q = c->budget / c->n, r = c->budget % c->n;
  uint64_t given = 0;
  pol_rem *rem = hs_calloc(ng, sizeof *rem);
  for (size_t g = 0; g < ng; g++) {
    uint64_t size = c->gstart[g + 1] - c->gstart[g];
    uint64_t rs = r * size; /* < n^2 < 2^64 since n < 2^32 */
    c->gbudget[g] = q * size + rs / c->n;
    rem[g].frac = (double)(rs % c->n); /* exact: < 2^32 */
    rem[g].idx = (uint32_t)g;
    given += c->gbudget[g];
  }
  uint64_t left = c->budget - given; /* < ng */
  pol_top_k(rem, ng, (size_t)left);
  for (size_t j = 0; j < (size_t)left; j++) c->gbudget[rem[j].idx]++;
  hs_free(rem);
}

void pol_equal_split(hs_controller *c, uint64_t *out) {
  for (size_t g = 0; g < c->ngroups; g++) {
    const uint32_t *idx = c->order + c->gstart[g];
    size_t m = c->gstart[g + 1] - c->gstart[g];
    uint64_t each = c->gbudget[g] / m, extra = c->gbudget[g] % m;
    /* idx is ascending within a group, so the extras go to the lower indices */
    for (size_t j = 0; j < m; j++) out[idx[j]] = each + (j < extra ? 1 : 0);
  }
}

/* --- lifecycle -------------------------------------------------------------- */

hs_controller *hs_controller_create(const hs_policy_config *cfg, size_t n,
                                    const uint32_t *groups, uint64_t budget, hs_error *err) {
  if (hs_policy_config_check(cfg, err) != HS_OK) return NULL;
  if (n == 0) {
    hs_error_set(err, HS_EINVAL, "participants: need at least one");
    return NULL;
  }
  if (budget > HS_POLICY_BUDGET_MAX) {
    /* shares are computed in doubles: exact integers only up to 2^53 */
    hs_error_set(err, HS_ERANGE, "budget: %llu samples is more than 2^53 = %llu",
                 (unsigned long long)budget, (unsigned long long)HS_POLICY_BUDGET_MAX);
    return NULL;
  }
  if (n >= UINT32_MAX) {
    hs_error_set(err, HS_ERANGE, "participants: %zu is more than this controller supports", n);
    return NULL;
  }
  const pol_type *t = pol_lookup(cfg->kind);
  if (t->family == POL_OORT && groups) {
    hs_error_set(err, HS_EUNSUP, "groups: policy \"oort\" selects across the whole population "
                                 "and does not support groups (silos)");
    return NULL;
  }
  hs_controller *c = hs_calloc(1, sizeof *c);
  c->cfg = *cfg;
  c->type = t;
  c->n = n;
  c->budget = budget;
  build_groups(c, groups);
  split_group_budgets(c);
  /* the floor must fit (oort checks its own: K participants, not n) */
  if (t->family != POL_OORT && t->family != POL_EMA_BATCH && cfg->min_samples > 0) {
    for (size_t g = 0; g < c->ngroups; g++) {
      size_t m = c->gstart[g + 1] - c->gstart[g];
      if (c->gbudget[g] / cfg->min_samples < m) {
        if (c->ngroups == 1)
          hs_error_set(err, HS_ERANGE,
                       "budget: %llu samples is below %zu participants x min_samples %llu",
                       (unsigned long long)budget, n, (unsigned long long)cfg->min_samples);
        else
          hs_error_set(err, HS_ERANGE,
                       "budget: group %u gets %llu samples, below its %zu participants x "
                       "min_samples %llu",
                       (unsigned)groups[c->order[c->gstart[g]]],
                       (unsigned long long)c->gbudget[g], m,
                       (unsigned long long)cfg->min_samples);
        goto fail;
      }
    }
  }
  c->alloc = hs_calloc(n, sizeof *c->alloc);
  c->next = hs_calloc(n, sizeof *c->next);
  c->tau = hs_calloc(n, sizeof *c->tau);
  c->eps = hs_calloc(n, sizeof *c->eps);
  c->have = hs_calloc(n, sizeof *c->have);
  c->w = hs_calloc(n, sizeof *c->w);
  c->sd = hs_calloc(n, sizeof *c->sd);
  pol_scratch_init(&c->scratch, n);
  pol_equal_split(c, c->alloc);
  if (t->family == POL_OORT && pol_oort_create(c, err) != HS_OK) goto fail;
  if (t->family == POL_EMA_BATCH) pol_ebatch_create(c);
  return c;
fail:
  hs_controller_destroy(c);
  return NULL;
}

void hs_controller_destroy(hs_controller *c) {
  if (!c) return;
  pol_oort_destroy(c);
  pol_ebatch_destroy(c);
  hs_free(c->alloc);
  hs_free(c->next);
  hs_free(c->order);
  hs_free(c->gstart);
  hs_free(c->gbudget);
  hs_free(c->tau);
  hs_free(c->eps);
  hs_free(c->have);
  hs_free(c->w);
  hs_free(c->sd);
  pol_scratch_fini(&c->scratch);
  hs_free(c);
}

const uint64_t *hs_controller_allocation(const hs_controller *c) { return c->alloc; }
bool hs_controller_reallocated(const hs_controller *c) { return c->reallocated; }
size_t hs_controller_size(const hs_controller *c) { return c->n; }
uint64_t hs_controller_budget(const hs_controller *c) { return c->budget; }
const hs_policy_config *hs_controller_config(const hs_controller *c) { return &c->cfg; }
uint64_t hs_controller_rounds(const hs_controller *c) { return c->rounds; }

/* --- update ----------------------------------------------------------------- */

static hs_status check_telemetry(const hs_telemetry *t, size_t n, size_t want, hs_error *err) {
  if (n != want)
    return hs_error_set(err, HS_EINVAL, "telemetry: %zu records for %zu participants", n, want);
  if (!t) return hs_error_set(err, HS_EINVAL, "telemetry: no records");
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(t[i].time_s) || t[i].time_s < 0)
      return hs_error_set(err, HS_EINVAL, "participant %zu: time_s: %g is not a finite number >= 0",
                          i, t[i].time_s);
    if (!isfinite(t[i].energy_j) || t[i].energy_j < 0)
      return hs_error_set(err, HS_EINVAL,
                          "participant %zu: energy_j: %g is not a finite number >= 0", i,
                          t[i].energy_j);
    if (t[i].samples < 0)
      return hs_error_set(err, HS_EINVAL, "participant %zu: samples: %lld is negative", i,
                          (long long)t[i].samples);
    if (t[i].samples > 0 && t[i].time_s == 0)
      return hs_error_set(err, HS_EINVAL,
                          "participant %zu: time_s: 0 for %lld samples (must be > 0)", i,
                          (long long)t[i].samples);
  }
  return HS_OK;
}

/* Median over the group members with an estimate; 0 when none. */
static double group_median(hs_controller *c, const uint32_t *idx, size_t m, const double *x) {
  size_t k = 0;
  for (size_t j = 0; j < m; j++)
    if (c->have[idx[j]]) c->sd[k++] = x[idx[j]];
  return k ? pol_median(c->sd, k) : 0.0;
}

/* Inverse-cost weights for one group; w_e is the energy weight. */
static void inverse_cost_weights(hs_controller *c, const uint32_t *idx, size_t m, double w_e) {
  double w_t = 1.0 - w_e;
  double mt = w_t > 0 ? group_median(c, idx, m, c->tau) : 0.0;
  double me = w_e > 0 ? group_median(c, idx, m, c->eps) : 0.0;
  for (size_t j = 0; j < m; j++) {
    uint32_t i = idx[j];
    double cost;
    if (!c->have[i]) {
      cost = 1.0; /* neutral until measured */
    } else {
      cost = 0.0;
      if (mt > 0) cost += w_t * c->tau[i] / mt;
      if (me > 0) cost += w_e * c->eps[i] / me;
      if (mt <= 0 && me <= 0) cost = 1.0;
    }
    if (cost < COST_MIN) cost = COST_MIN;
    c->w[i] = 1.0 / cost;
  }
}

static void inverse_cost_split(hs_controller *c, double w_e, uint64_t *out) {
  for (size_t g = 0; g < c->ngroups; g++) {
    const uint32_t *idx = c->order + c->gstart[g];
    size_t m = c->gstart[g + 1] - c->gstart[g];
    inverse_cost_weights(c, idx, m, w_e);
    pol_apportion(idx, m, c->w, c->gbudget[g], c->cfg.min_samples, out, &c->scratch);
  }
}

void pol_observe(hs_controller *c, const hs_telemetry *t, double ema) {
  for (size_t i = 0; i < c->n; i++) {
    if (t[i].samples <= 0) continue;
    double n = (double)t[i].samples;
    double tau = t[i].time_s / n, eps = t[i].energy_j / n;
    if (!c->have[i]) {
      c->tau[i] = tau;
      c->eps[i] = eps;
      c->have[i] = 1;
    } else {
      c->tau[i] = ema * c->tau[i] + (1.0 - ema) * tau;
      c->eps[i] = ema * c->eps[i] + (1.0 - ema) * eps;
    }
  }
}

/* One pass over old and candidate: *changed when they differ anywhere; the
 * return value is the deadband rule of hs_policy.h (true: keep the old split). */
static bool within_deadband(const hs_controller *c, bool *changed) {
  double worst = 0.0;
  bool diff = false, inf = false;
  for (size_t i = 0; i < c->n; i++) {
    uint64_t o = c->alloc[i], v = c->next[i];
    if (o == v) continue;
    diff = true;
    if (!c->type->deadband) break; /* only "did it change" matters */
    if (o == 0) {
      inf = true;
      continue;
    }
    double d = (double)(v > o ? v - o : o - v) / (double)o;
    if (d > worst) worst = d;
  }
  *changed = diff;
  return !inf && worst <= c->cfg.deadband;
}

hs_status hs_controller_update(hs_controller *c, const hs_telemetry *t, size_t n, hs_error *err) {
  hs_status st = check_telemetry(t, n, c->n, err);
  if (st != HS_OK) return st;
  /* adaptive, oort and ema-batch write every entry of next; the others may not */
  pol_family fam = c->type->family;
  if (fam == POL_EQUAL || fam == POL_STATIC) memcpy(c->next, c->alloc, c->n * sizeof *c->next);
  switch (fam) {
  case POL_EQUAL:
    break;
  case POL_STATIC:
    if (!c->frozen) {
      bool any = false;
      for (size_t i = 0; i < n; i++) any |= t[i].samples > 0;
      if (any) {
        pol_observe(c, t, 0.0);
        inverse_cost_split(c, 0.0, c->next);
        c->frozen = true;
      }
    }
    break;
  case POL_ADAPTIVE:
    pol_observe(c, t, c->cfg.ema);
    inverse_cost_split(c, c->cfg.w_e, c->next);
    break;
  case POL_OORT:
    pol_oort_update(c, t);
    break;
  case POL_EMA_BATCH:
    pol_ebatch_update(c, t);
    break;
  }
  bool changed;
  bool keep = within_deadband(c, &changed);
  if (changed && c->type->deadband && keep) changed = false;
  if (changed) {
    uint64_t *tmp = c->alloc;
    c->alloc = c->next;
    c->next = tmp;
  }
  c->reallocated = changed;
  c->rounds++;
  return HS_OK;
}
