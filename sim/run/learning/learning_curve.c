/* learning_curve.c: curve mode's loss, from a profile's measured loss_curve
 * (loss after S samples seen, measured by hetsim-probe on one board).
 *
 * Rules (what a timeline event is worth in samples seen, S; learning.c):
 *   PMA (FedAvg)  S += the round's samples, sum of n_i over participants; an
 *                 unselected device adds nothing; a partial round adds what
 *                 arrived.
 *   DDP, HFL-DDP  S += every step's union batch, sum of b_{i,s}: one DDP step
 *                 is one step on the union batch, silos add theirs.
 *   FedAsync      an update trained n samples from the version downloaded at
 *                 position S_d; mixed with weight a = alpha s(staleness):
 *                 S = (1 - a) S + a (S_d + n). A fresh update (S_d = S) adds
 *                 a n; a stale one adds less, and one from far enough behind
 *                 (S_d + n < S) pulls S back, as mixing an old model does.
 * loss(S): linear interpolation between the curve's points, the first
 * point's loss before it, the last point's after it (no extrapolation).
 * O(log points) per evaluation (binary search); evaluations happen once per
 * evaluated round, so curve mode costs a few additions per event.
 * Rejected: a fitted power law (extrapolates past what was measured) and an
 * accuracy model (the curve carries loss only: curve mode reports accuracy as
 * null and refuses target_accuracy at load). */
#include <stddef.h>

#include "sim_learning.h"

double sim_learn_curve_loss(const hs_learning_spec *l, double seen) {
  const double *x = l->curve_samples, *y = l->curve_loss;
  size_t n = l->curve_points;
  if (n == 0) return 0;
  if (!(seen > x[0])) return y[0];
  if (seen >= x[n - 1]) return y[n - 1];
  size_t lo = 0, hi = n - 1; /* x[lo] < seen < x[hi] */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (x[mid] <= seen) lo = mid;
    else hi = mid;
  }
  double t = (seen - x[lo]) / (x[hi] - x[lo]);
  return y[lo] + t * (y[hi] - y[lo]);
}
