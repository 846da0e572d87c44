/* costs.c: the per-sample cost estimates shared by adaptive, static, oort and round-time
 * (EMA of tau = t/n and eps = e/n per participant) and the inverse-cost split.
 *
 * Invariant: tau/eps of i are meaningful only once have[i]; a participant that
 * ran 0 samples keeps its last estimates. Cost of a split: O(n) expected, two
 * quickselect medians per group and one apportionment. Rejected: sorting for
 * the medians (O(n log n)); keeping these arrays in the controller (every
 * policy that reads them then called back into controller.c, and oort.c and
 * controller.c formed a circle). */
#include "pol_costs.h"

#include <math.h>

#include "base/hs_alloc.h"

#define COST_MIN 1e-12

void pol_costs_init(pol_costs *k, size_t n, size_t ngroups) {
  k->gmed = hs_calloc(2 * ngroups, sizeof *k->gmed);
  k->tau = hs_calloc(n, sizeof *k->tau);
  k->eps = hs_calloc(n, sizeof *k->eps);
  k->have = hs_calloc(n, sizeof *k->have);
}

void pol_costs_fini(pol_costs *k) {
  hs_free(k->tau);
  hs_free(k->eps);
  hs_free(k->have);
  hs_free(k->gmed);
  k->tau = k->eps = k->gmed = NULL;
  k->have = NULL;
}

/* One record with samples > 0: the first observation as is, then the EMA. */
static inline void observe_one(pol_costs *k, const hs_telemetry *t, size_t i, double ema) {
  double s = (double)t[i].samples;
  double tau = t[i].time_s / s, eps = t[i].energy_j / s;
  if (!k->have[i]) {
    k->tau[i] = tau;
    k->eps[i] = eps;
    k->have[i] = 1;
  } else {
    k->tau[i] = ema * k->tau[i] + (1.0 - ema) * tau;
    k->eps[i] = ema * k->eps[i] + (1.0 - ema) * eps;
  }
}

void pol_costs_observe(pol_costs *k, const hs_telemetry *t, size_t n, double ema) {
  for (size_t i = 0; i < n; i++)
    if (t[i].samples > 0) observe_one(k, t, i, ema);
}

void pol_costs_observe_list(pol_costs *k, const hs_telemetry *t, const uint32_t *idx, size_t m,
                            double ema) {
  for (size_t j = 0; j < m; j++) observe_one(k, t, idx[j], ema);
}

/* Median over the group members with an estimate; 0 when none. Works in
 * c->w: pol_costs_split takes every group's medians before any group's
 * weights are written there (and with the counts going to c->w, before any
 * group's counts are), so these policies need no other n-double scratch. */
static double group_median(hs_controller *c, const pol_costs *k, const uint32_t *idx, size_t m,
                           const double *x) {
  size_t cnt;
  return pol_median_of(x, idx, m, k->have, c->w, &cnt); /* 0 when none */
}

/* Inverse-cost weights for one group into c->w, from its medians mt (of
 * tau) and me (of eps); w_e is the energy weight. Their sum in index order
 * and their minimum come out of the same pass, for pol_apportion_sum. */
static void inverse_cost_weights(hs_controller *c, const pol_costs *k, const uint32_t *idx,
                                 size_t m, double w_e, double mt, double me, double *sum_out,
                                 double *lo_out) {
  double w_t = 1.0 - w_e;
  double sum = 0.0, lo = INFINITY;
  for (size_t j = 0; j < m; j++) {
    uint32_t i = idx[j];
    double cost;
    if (!k->have[i]) {
      cost = 1.0; /* neutral until measured */
    } else {
      cost = 0.0;
      if (mt > 0) cost += w_t * k->tau[i] / mt;
      if (me > 0) cost += w_e * k->eps[i] / me;
      if (mt <= 0 && me <= 0) cost = 1.0;
    }
    if (cost < COST_MIN) cost = COST_MIN;
    double v = 1.0 / cost;
    c->w[i] = v;
    sum += v;
    lo = v < lo ? v : lo;
  }
  *sum_out = sum;
  *lo_out = lo;
}

void pol_costs_split(hs_controller *c, pol_costs *k, double w_e, uint64_t min_samples,
                     uint64_t *out) {
  double w_t = 1.0 - w_e;
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m;
    const uint32_t *idx = pol_group(c, g, &m);
    k->gmed[2 * g] = w_t > 0 ? group_median(c, k, idx, m, k->tau) : 0.0;
    k->gmed[2 * g + 1] = w_e > 0 ? group_median(c, k, idx, m, k->eps) : 0.0;
  }
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m;
    const uint32_t *idx = pol_group(c, g, &m);
    double sum, lo;
    inverse_cost_weights(c, k, idx, m, w_e, k->gmed[2 * g], k->gmed[2 * g + 1], &sum, &lo);
    pol_apportion_sum(idx, m, c->w, sum, lo, c->gbudget[g], min_samples, out, &c->scratch);
  }
}

size_t pol_costs_state(pol_costs *k, size_t n, pol_state_field *f) {
  f[0] = (pol_state_field){.name = "tau", .type = POL_S_REAL, .ptr = k->tau, .count = n,
                           .lo = 0, .hi = HUGE_VAL};
  f[1] = (pol_state_field){.name = "eps", .type = POL_S_REAL, .ptr = k->eps, .count = n,
                           .lo = 0, .hi = HUGE_VAL};
  f[2] = (pol_state_field){.name = "have", .type = POL_S_FLAG, .ptr = k->have, .count = n,
                           .lo = 0, .hi = 1};
  return 3;
}
