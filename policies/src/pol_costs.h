/* pol_costs.h: smoothed per-sample costs (costs.c), the measurement state that
 * adaptive, static, oort and round-time share: EMA observation of tau = t/n and eps = e/n,
 * and the inverse-cost split. A module of its own so that no policy calls into
 * another policy or into the controller. */
#ifndef POL_COSTS_H
#define POL_COSTS_H

#include <stddef.h>

#include "pol_policy.h"

typedef struct pol_costs {
  double *tau;         /* n: smoothed seconds per sample */
  double *eps;         /* n: smoothed joules per sample */
  unsigned char *have; /* n: 1 once participant i reported samples */
  double *gmed;        /* 2 per group: a split's medians (scratch) */
} pol_costs;

/* Bytes per participant of the estimates above (tau, eps, have). */
#define POL_COSTS_BYTES (2 * sizeof(double) + 1)

void pol_costs_init(pol_costs *k, size_t n, size_t ngroups);
void pol_costs_fini(pol_costs *k);

/* EMA of the per-sample costs from the records with samples > 0:
 * x <- ema*x + (1-ema)*obs; the first observation is taken as is. O(n). */
void pol_costs_observe(pol_costs *k, const hs_telemetry *t, size_t n, double ema);

/* The same observation for the records idx[0..m) only (each with samples
 * > 0, ascending), for a caller that listed them already: a selecting policy,
 * where whether a record carries samples is a coin toss per participant. */
void pol_costs_observe_list(pol_costs *k, const hs_telemetry *t, const uint32_t *idx, size_t m,
                            double ema);

/* The inverse-cost split of hs_policy.h into out (NULL: into c->w, as exact
 * integers), group by group: c_i = w_t*tau_i/median(tau) +
 * w_e*eps_i/median(eps) over the group's measured members, neutral 1 for the
 * unmeasured, clamped to >= 1e-12; shares 1/c_i with floor min_samples. Uses
 * c->w and c->scratch (the policy's create makes them: pol_make_scratch).
 * O(n) expected. */
void pol_costs_split(hs_controller *c, pol_costs *k, double w_e, uint64_t min_samples,
                     uint64_t *out);

/* The saved state of k (hs_controller_save): tau, eps (finite, >= 0) and have
 * (0/1), three fields written to f. Returns 3. */
size_t pol_costs_state(pol_costs *k, size_t n, pol_state_field *f);

#endif
