/* collective.c: the registry of alpha-beta collective cost models.
 *
 * Each kind is a descriptor {name, formula, time function} in one static table,
 * found by a linear scan over six names (a hash was rejected: nothing to gain).
 * Time functions are pure arithmetic on validated parameters, O(1), so a DDP
 * regime can call one per optimiser step. The formulas, their variants and the
 * heterogeneity rule (slowest bandwidth, largest latency) are documented in
 * hs_collective.h; each has a closed-form test in tests/unit/test_collective.c.
 * Bits = 8 * bytes everywhere: beta is in bit/s, n in bytes. */
#include "sim/hs_collective.h"

#include <math.h>
#include <string.h>

#include "base/hs_assert.h"

/* ceil(log2 p) for p >= 1, by integer shifts so no rounding can bite. */
static double ceil_log2(uint32_t p) {
  uint32_t k = 0;
  while (k < 32 && ((uint64_t)1 << k) < p) k++;
  return (double)k;
}

/* (p-1) alpha + (p-1)/p * 8n/beta: one pass around a ring. */
static double ring_pass(uint32_t p, double bytes, double alpha, double beta) {
  if (p <= 1) return 0;
  double q = (double)p;
  return (q - 1) * alpha + (q - 1) / q * (8.0 * bytes / beta);
}

static double ring_time(const hs_coll_params *c) {
  return 2.0 * ring_pass(c->ranks, c->bytes, c->alpha_s, c->beta_bps);
}

static double tree_time(const hs_coll_params *c) {
  if (c->ranks <= 1) return 0;
  return 2.0 * ceil_log2(c->ranks) * (c->alpha_s + 8.0 * c->bytes / c->beta_bps);
}

static double hier_time(const hs_coll_params *c) {
  uint32_t g = c->ranks_per_node, m = c->ranks / g;
  HS_ASSERT(g >= 1 && c->ranks % g == 0, "checked by hs_collective_check");
  double intra = ring_pass(g, c->bytes, c->alpha_s, c->beta_bps);
  double inter = 2.0 * ring_pass(m, c->bytes / (double)g, c->inter_alpha_s, c->inter_beta_bps);
  return intra + inter + intra;
}

static double pass_time(const hs_coll_params *c) {
  return ring_pass(c->ranks, c->bytes, c->alpha_s, c->beta_bps);
}

static double star_time(const hs_coll_params *c) {
  double bits = 8.0 * c->bytes;
  double shared = (double)c->ranks * bits / c->server_beta_bps;
  double own = bits / c->beta_bps;
  return 2.0 * (c->alpha_s + (shared > own ? shared : own));
}

static const hs_collective_type types[] = {
    {"ring", "2(p-1)a + 2(p-1)/p * 8n/b", ring_time, 0, 0},
    {"tree", "2 ceil(log2 p) (a + 8n/b)", tree_time, 0, 0},
    {"hierarchical",
     "2[(g-1)a + (g-1)/g * 8n/b] + 2(m-1)a' + 2(m-1)/m * 8(n/g)/b', m = p/g", hier_time, 1, 0},
    {"allgather", "(p-1)a + (p-1)/p * 8n/b", pass_time, 0, 0},
    {"reducescatter", "(p-1)a + (p-1)/p * 8n/b", pass_time, 0, 0},
    {"star", "2(a + max(p * 8n/b_server, 8n/b))", star_time, 0, 1},
};
#define NTYPES (sizeof types / sizeof types[0])

const hs_collective_type *hs_collective_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < NTYPES; i++)
    if (!strcmp(types[i].name, name)) return &types[i];
  return NULL;
}

size_t hs_collective_count(void) { return NTYPES; }

const hs_collective_type *hs_collective_at(size_t i) {
  HS_ASSERT(i < NTYPES, "i < hs_collective_count()");
  return &types[i];
}

static hs_status bad(hs_error *err, const char *field, const char *rule, double got) {
  return hs_error_set(err, HS_EINVAL, "%s: must be %s (got %g)", field, rule, got);
}

hs_status hs_collective_check(const hs_collective_type *type, const hs_coll_params *c,
                              hs_error *err) {
  HS_ASSERT(type && c, "a collective and its parameters");
  if (!(c->bytes >= 0) || !isfinite(c->bytes)) return bad(err, "bytes", "finite and >= 0", c->bytes);
  if (c->ranks < 1) return bad(err, "ranks", ">= 1", (double)c->ranks);
  if (!(c->alpha_s >= 0) || !isfinite(c->alpha_s))
    return bad(err, "alpha_s", "finite and >= 0", c->alpha_s);
  if (!(c->beta_bps > 0)) return bad(err, "beta_bps", "> 0", c->beta_bps);
  if (type->uses_inter_tier) {
    if (c->ranks_per_node < 1) return bad(err, "ranks_per_node", ">= 1", (double)c->ranks_per_node);
    if (c->ranks % c->ranks_per_node)
      return hs_error_set(err, HS_EINVAL, "ranks_per_node: %u does not divide ranks %u",
                          c->ranks_per_node, c->ranks);
    if (!(c->inter_alpha_s >= 0) || !isfinite(c->inter_alpha_s))
      return bad(err, "inter_alpha_s", "finite and >= 0", c->inter_alpha_s);
    if (!(c->inter_beta_bps > 0)) return bad(err, "inter_beta_bps", "> 0", c->inter_beta_bps);
  }
  if (type->uses_server && !(c->server_beta_bps > 0))
    return bad(err, "server_beta_bps", "> 0", c->server_beta_bps);
  return HS_OK;
}

hs_status hs_collective_time(const hs_collective_type *type, const hs_coll_params *c,
                             double *time_s, hs_error *err) {
  hs_status st = hs_collective_check(type, c, err);
  if (st != HS_OK) return st;
  *time_s = type->time_s(c);
  return HS_OK;
}

void hs_collective_slowest(const double *alpha_s, const double *beta_bps, size_t n,
                           double *alpha_out_s, double *beta_out_bps) {
  double a = 0, b = INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (alpha_s[i] > a) a = alpha_s[i];
    if (beta_bps[i] < b) b = beta_bps[i];
  }
  *alpha_out_s = a;
  *beta_out_bps = b;
}
