/* controller.c: the controller object: creation (config check, groups, the
 * equal split), telemetry validation, dispatch to the policy's hooks through
 * its descriptor, the deadband rule and the swap. It knows no policy by name:
 * adaptive.c, equal.c, static.c, oort.c, ema_batch.c and round_time.c are
 * reached only through registry.c.
 *
 * Invariants after every call: sum(alloc over a group) == that group's budget;
 * alloc >= the policy's floor (except a selecting policy's unselected, which
 * are 0); a failed update changed nothing (validation runs to completion before
 * any hook runs, and hooks cannot fail). Everything an update needs is
 * allocated in hs_controller_create: an update allocates nothing. Cost of an
 * update: the policy's (O(n) expected for all of them) plus one O(n) pass
 * comparing old and new (none when the policy keeps the split), and a copy
 * when a candidate left in c->w is taken (the policies that do so need no
 * candidate array: 8 B per participant). Rejected: a policy "family" switch
 * here (every new policy then edited this file in four places). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "pol_policy.h"

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
  if (groups && !(t->caps & HS_POLICY_CAP_GROUPS)) {
    hs_error_set(err, HS_EUNSUP,
                 "groups: policy \"%s\" does not support groups (silos): it lacks "
                 "HS_POLICY_CAP_GROUPS",
                 t->name);
    return NULL;
  }
  hs_controller *c = hs_calloc(1, sizeof *c);
  c->cfg = *cfg;
  c->type = t;
  c->n = n;
  c->budget = budget;
  c->deadband = -1.0; /* none unless the policy sets one */
  pol_groups_build(c, groups);
  c->alloc = hs_calloc(n, sizeof *c->alloc);
  /* c->w, c->scratch and c->sd: only the policies that use them make them
   * (pol_make_scratch; equal needs none of them) */
  pol_equal_split(c, c->alloc);
  if (t->create(c, err) != HS_OK) goto fail;
  /* the candidate's own array, unless the policy leaves it in c->w */
  if (!c->cand_w) c->next = hs_calloc(n, sizeof *c->next);
  return c;
fail:
  hs_controller_destroy(c);
  return NULL;
}

void hs_controller_destroy(hs_controller *c) {
  if (!c) return;
  c->type->destroy(c);
  hs_free(c->alloc);
  hs_free(c->next);
  hs_free(c->gid);
  hs_free(c->order);
  hs_free(c->gstart);
  hs_free(c->gbudget);
  hs_free(c->gdeadband);
  hs_free(c->w);
  hs_free(c->sd);
  hs_free(c->utility);
  hs_free(c->comm);
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
    /* one test of both, as arithmetic (a plain && or & compiles to a branch
     * on "samples > 0" first, a coin toss per record with a selecting
     * policy: half of them mispredicted); the pair is almost never true */
    if ((int64_t)(t[i].time_s == 0) * t[i].samples > 0)
      return hs_error_set(err, HS_EINVAL,
                          "participant %zu: time_s: 0 for %lld samples (must be > 0)", i,
                          (long long)t[i].samples);
  }
  return HS_OK;
}

/* The candidate count of participant i: in c->next, or in c->w as an exact
 * integer (<= 2^53) when the policy set c->cand_w (cw non-NULL). */
static inline uint64_t cand_at(const uint64_t *cn, const double *cw, size_t i) {
  return cw ? (uint64_t)(int64_t)cw[i] : cn[i];
}

/* One pass over old and candidate: *changed when they differ anywhere; the
 * return value is the deadband rule of hs_policy.h (true: keep the old split):
 * keep unless some participant's share moved by more than the deadband
 * relative to its old share (d = |new - old| / old, in doubles), or moved off
 * 0. Whether the largest d is within the band is whether every d is, so the
 * pass stops at the first that is not (blocks of 1024, branch-free inside:
 * "did it grow or shrink" is a coin toss). Shares are <= 2^53, so the signed
 * conversions below are exact. */
static bool within_deadband(const hs_controller *c, bool *changed) {
  const uint64_t *old = c->alloc, *cn = c->next;
  const double *cw = c->cand_w ? c->w : NULL;
  size_t n = c->n;
  if (c->deadband < 0) { /* only "did it change" matters */
    if (!cw) {
      *changed = memcmp(old, cn, n * sizeof *old) != 0;
      return false;
    }
    unsigned diff = 0;
    for (size_t i = 0; i < n; i++) diff |= old[i] != cand_at(cn, cw, i);
    *changed = diff;
    return false;
  }
  double band = c->deadband;
  unsigned diff = 0;
  for (size_t b = 0; b < n; b += 1024) {
    size_t e = n - b < 1024 ? n : b + 1024;
    unsigned out = 0;
    for (size_t i = b; i < e; i++) {
      uint64_t o = old[i], v = cand_at(cn, cw, i);
      uint64_t delta = v > o ? v - o : o - v;
      double d = (double)(int64_t)delta / (double)(int64_t)(o + (o == 0)); /* o = 0: see below */
      unsigned moved = o != v;
      diff |= moved;
      out |= moved & ((o == 0) | (d > band));
    }
    if (out) {
      *changed = true;
      return false;
    }
  }
  *changed = diff;
  return true;
}

hs_status hs_controller_set_group_rules(hs_controller *c, const uint64_t *budgets,
                                        const double *deadbands, size_t ngroups, hs_error *err) {
  if (c->rounds > 0)
    return hs_error_set(err, HS_EINVAL, "group rules: set before the first update");
  if (ngroups != c->ngroups)
    return hs_error_set(err, HS_EINVAL, "group rules: %zu entries for %zu groups", ngroups,
                        c->ngroups);
  if (budgets) {
    uint64_t sum = 0, floor = hs_policy_config_min_samples(&c->cfg);
    for (size_t g = 0; g < ngroups; g++) {
      size_t m = c->gstart[g + 1] - c->gstart[g];
      if (budgets[g] / (floor ? floor : 1) < m)
        return hs_error_set(err, HS_ERANGE,
                            "group rules: group %zu gets %llu samples, below its %zu "
                            "participants x min_samples %llu",
                            g, (unsigned long long)budgets[g], m, (unsigned long long)floor);
      sum += budgets[g];
    }
    if (sum != c->budget)
      return hs_error_set(err, HS_EINVAL, "group rules: group budgets sum to %llu, not %llu",
                          (unsigned long long)sum, (unsigned long long)c->budget);
    memcpy(c->gbudget, budgets, ngroups * sizeof *budgets);
    pol_equal_split(c, c->alloc);
  }
  if (deadbands) {
    if (!c->gdeadband) c->gdeadband = hs_calloc(ngroups, sizeof *c->gdeadband);
    for (size_t g = 0; g < ngroups; g++)
      c->gdeadband[g] = deadbands[g] >= 0 ? deadbands[g] : c->deadband;
  }
  return HS_OK;
}

/* The deadband rule group by group: a group within its band keeps its split
 * (copied back into the candidate). True when any group changes. */
static bool per_group_deadband(hs_controller *c) {
  const uint64_t *cn = c->next;
  const double *cw = c->cand_w ? c->w : NULL;
  bool any = false;
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m;
    const uint32_t *idx = pol_group(c, g, &m);
    double worst = 0;
    bool diff = false, inf = false;
    for (size_t j = 0; j < m; j++) {
      uint64_t o = c->alloc[idx[j]], v = cand_at(cn, cw, idx[j]);
      if (o == v) continue;
      diff = true;
      if (o == 0) inf = true;
      else if ((double)(v > o ? v - o : o - v) / (double)o > worst)
        worst = (double)(v > o ? v - o : o - v) / (double)o;
    }
    if (diff && (inf || worst > c->gdeadband[g])) {
      any = true;
      continue;
    }
    for (size_t j = 0; j < m; j++) {
      uint32_t i = idx[j];
      if (cw)
        c->w[i] = (double)(int64_t)c->alloc[i];
      else
        c->next[i] = c->alloc[i];
    }
  }
  return any;
}

hs_status hs_controller_update(hs_controller *c, const hs_telemetry *t, size_t n, hs_error *err) {
  hs_status st = check_telemetry(t, n, c->n, err);
  if (st != HS_OK) return st;
  c->keep = c->moved = false;
  c->type->update(c, t); /* writes every entry of the candidate, or sets keep */
  c->utility_set = c->comm_set = false;
  bool changed = false;
  if (c->keep) { /* c->alloc is already the split: nothing to compare or take */
    changed = c->moved;
    assert(!changed || c->deadband < 0);
  } else {
    if (c->gdeadband && c->deadband >= 0) {
      changed = per_group_deadband(c);
    } else {
      bool keep = within_deadband(c, &changed);
      if (changed && c->deadband >= 0 && keep) changed = false;
    }
    if (changed && c->cand_w) {
      /* locals: a store through uint64_t * could be c->n (size_t) */
      uint64_t *alloc = c->alloc;
      const double *cw = c->w;
      for (size_t i = 0, nn = c->n; i < nn; i++) alloc[i] = (uint64_t)(int64_t)cw[i];
    } else if (changed) {
      uint64_t *tmp = c->alloc;
      c->alloc = c->next;
      c->next = tmp;
    }
  }
  c->reallocated = changed;
  c->rounds++;
  return HS_OK;
}

hs_status hs_controller_set_utility(hs_controller *c, const double *utility, size_t n,
                                    hs_error *err) {
  if (n != c->n)
    return hs_error_set(err, HS_ERANGE, "utility: %zu values for %zu participants", n, c->n);
  for (size_t i = 0; i < n; i++)
    if (!isfinite(utility[i]) || utility[i] < 0)
      return hs_error_set(err, HS_EINVAL, "participant %zu: utility: %g is not a finite number >= 0",
                          i, utility[i]);
  if (!c->utility) c->utility = hs_calloc(n, sizeof *c->utility);
  memcpy(c->utility, utility, n * sizeof *utility);
  c->utility_set = true;
  return HS_OK;
}

hs_status hs_controller_set_comm(hs_controller *c, const double *comm_s, size_t n,
                                 hs_error *err) {
  if (n != c->n)
    return hs_error_set(err, HS_ERANGE, "comm_s: %zu values for %zu participants", n, c->n);
  if (!comm_s) return hs_error_set(err, HS_EINVAL, "comm_s: no values");
  for (size_t i = 0; i < n; i++)
    if (!isfinite(comm_s[i]) || comm_s[i] < 0)
      return hs_error_set(err, HS_EINVAL, "participant %zu: comm_s: %g is not a finite number >= 0",
                          i, comm_s[i]);
  if (!c->type->reads_comm) return HS_OK; /* checked, and of no use to this policy */
  if (!c->comm) c->comm = hs_calloc(n, sizeof *c->comm);
  memcpy(c->comm, comm_s, n * sizeof *comm_s);
  c->comm_set = true;
  return HS_OK;
}

/* --- step level ------------------------------------------------------------- */

const uint64_t *hs_controller_step_batches(const hs_controller *c) {
  assert(c->type->step_batches && "hs_controller_step_batches: policy has no step level");
  return c->type->step_batches(c);
}

hs_status hs_controller_step_update(hs_controller *c, const double *step_time_s, size_t n,
                                    hs_error *err) {
  assert(c->type->step_update && "hs_controller_step_update: policy has no step level");
  return c->type->step_update(c, step_time_s, n, err);
}
