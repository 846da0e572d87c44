/* ddp_schedule.c: the DDP per-step batch schedule and its gradient weights, the
 * two pure functions a DDP trainer needs whatever the policy.
 *
 * Schedule: b_{i,s} = floor(n_i/S) + (s < n_i mod S). The extras sit on the
 * first steps of every rank, so sum_s b_{i,s} = n_i, max-min <= 1 per rank, and
 * every step has >= 1 sample when n_i >= S; O(ranks*S). Rejected: padding short
 * ranks to a common batch (dummy samples change the gradient) and one batch size
 * for all steps (cannot sum to n_i). The sample-mean gradient over the round's
 * step s is sum_i (b_{i,s}/sum_j b_{j,s}) g_{i,s} where g_{i,s} is rank i's mean
 * gradient over its batch; those weights are what hs_ddp_grad_weights returns. */
#include <assert.h>

#include "policies/hs_policy.h"

void hs_ddp_schedule(const uint64_t *n, size_t ranks, uint32_t steps, uint64_t *b) {
  assert(steps >= 1);
  for (size_t i = 0; i < ranks; i++) {
    uint64_t each = n[i] / steps, extra = n[i] % steps;
    for (uint32_t s = 0; s < steps; s++) b[i * steps + s] = each + (s < extra ? 1 : 0);
  }
}

void hs_ddp_grad_weights(const uint64_t *b, size_t ranks, uint32_t steps, double *w) {
  assert(steps >= 1);
  for (uint32_t s = 0; s < steps; s++) {
    uint64_t total = 0;
    for (size_t i = 0; i < ranks; i++) total += b[i * steps + s];
    for (size_t i = 0; i < ranks; i++)
      w[i * steps + s] = total ? (double)b[i * steps + s] / (double)total : 0.0;
  }
}
