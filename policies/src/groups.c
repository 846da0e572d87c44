/* groups.c: the controller's participant groups (HFL-DDP silos) and the helpers
 * every policy shares over them: the group budgets, the equal split, the floor
 * check.
 *
 * Groups are a permutation `order` of the participants sorted by (group id,
 * index) with offsets per group, so each group is a contiguous, ascending index
 * list and a group's split is one call to pol_apportion. Sorted once at
 * creation (O(n log n), never again). Group budgets are in proportion to group
 * size by largest remainder, ties to the smaller group id, computed exactly in
 * integers. Rejected: a group id per participant scanned at every update (each
 * policy would then filter n entries per group: O(n * groups)). */
#include <stdlib.h>

#include "base/hs_alloc.h"
#include "pol_policy.h"

typedef struct gkey {
  uint32_t gid;
  uint32_t idx;
} gkey;

static int gkey_cmp(const void *a, const void *b) {
  const gkey *x = a, *y = b;
  if (x->gid != y->gid) return x->gid < y->gid ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static void build_order(hs_controller *c, const uint32_t *groups) {
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
  c->gid = hs_calloc(ng, sizeof *c->gid);
  size_t g = 0;
  c->gid[0] = k[0].gid;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && k[i].gid != k[i - 1].gid) {
      c->gstart[++g] = i;
      c->gid[g] = k[i].gid;
    }
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

void pol_groups_build(hs_controller *c, const uint32_t *groups) {
  build_order(c, groups);
  split_group_budgets(c);
}

void pol_make_scratch(hs_controller *c) {
  c->w = hs_calloc(c->n, sizeof *c->w);
  pol_scratch_init(&c->scratch, c->n);
}

void pol_equal_split(const hs_controller *c, uint64_t *out) {
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m;
    const uint32_t *idx = pol_group(c, g, &m);
    uint64_t each = c->gbudget[g] / m, extra = c->gbudget[g] % m;
    /* idx is ascending within a group, so the extras go to the lower indices */
    for (size_t j = 0; j < m; j++) out[idx[j]] = each + (j < extra ? 1 : 0);
  }
}

hs_status pol_check_floor(const hs_controller *c, uint64_t floor, hs_error *err) {
  if (floor == 0) return HS_OK;
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m = c->gstart[g + 1] - c->gstart[g];
    if (c->gbudget[g] / floor >= m) continue;
    if (c->ngroups == 1)
      return hs_error_set(err, HS_ERANGE,
                          "budget: %llu samples is below %zu participants x min_samples %llu",
                          (unsigned long long)c->budget, c->n, (unsigned long long)floor);
    return hs_error_set(err, HS_ERANGE,
                        "budget: group %u gets %llu samples, below its %zu participants x "
                        "min_samples %llu",
                        (unsigned)c->gid[g], (unsigned long long)c->gbudget[g], m,
                        (unsigned long long)floor);
  }
  return HS_OK;
}
