/* ema_batch.c: the ema-batch baseline, DDP step-level throughput batch sizing.
 *
 * State: a smoothed throughput (samples/s) per rank, the step index within the
 * round, and the per-rank batch of the next step. The global batch of step s
 * (per group) is G_s = B_g/S + (s < B_g mod S), so the steps of a round train
 * exactly B_g. Each step's split is pol_apportion over the group (O(n)
 * expected) of the exact throughput share plus the rounding carried from the
 * round's earlier steps, so the realised sum over the round stays within about
 * one sample of the exact round share while throughput holds. The round-level
 * allocation is the apportionment of the whole group budget by the same
 * weights. Rejected: deriving steps from the round plan with hs_ddp_schedule
 * (ddp_schedule.c; per-step global batches would then vary with the
 * remainders, which ema-batch promises not to do), and rounding each step on
 * its own (the same ranks win the remainder at every step). */
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "pol_policy.h"

/* --- ema-batch ---------------------------------------------------------------- */

enum { K_BETA };
static const pol_key ebatch_keys[] = {
    [K_BETA] = {"ema_batch_beta", POL_REAL, 0.5, 0, 1, false, true, NULL,
                "EMA factor on per-rank throughput"},
};

typedef struct ebatch {
  double *thr;          /* smoothed samples/s */
  unsigned char *have;  /* thr[i] valid */
  uint64_t *step;       /* per-rank batch of the next step */
  double *carry;        /* this round: sum over its steps of (exact share - batch) */
  uint32_t s;           /* index of the next step within the round */
  uint32_t steps_seen;  /* step updates since the last round update */
  double beta;          /* ema_batch_beta */
  double *gwsum;        /* ngroups: the last round update's weight sum per group */
} ebatch;

/* Weights for a group into c->w (and into also[], when not NULL):
 * throughput; unmeasured ranks get the group median of the measured ones (1
 * when none is measured, i.e. the equal split). The median works in c->w
 * before the weights are written: nothing else lives there by then (an
 * earlier group's weights were consumed by its apportionment). Their sum in
 * index order and their minimum come out of the same pass. */
static void ebatch_weights(hs_controller *c, const uint32_t *idx, size_t m, double *also,
                           double *sum_out, double *lo_out) {
  ebatch *e = c->state;
  size_t k;
  double neutral = pol_median_of(e->thr, idx, m, e->have, c->w, &k);
  if (k == 0) neutral = 1.0;
  if (!(neutral > 0)) neutral = 1.0;
  double sum = 0.0, lo = INFINITY;
  for (size_t j = 0; j < m; j++) {
    uint32_t i = idx[j];
    double v = e->have[i] ? e->thr[i] : neutral;
    v = v > 1e-300 ? v : 1e-300;
    c->w[i] = v;
    if (also) also[i] = v;
    sum += v;
    lo = v < lo ? v : lo;
  }
  *sum_out = sum;
  *lo_out = lo;
}

static uint64_t step_global(uint64_t group_budget, uint32_t steps, uint32_t s) {
  return group_budget / steps + (s < group_budget % steps ? 1 : 0);
}

/* The next step's batches. Rounding error is carried from step to step within
 * a round (the quota of a step is its exact share plus the carry), so a rank's
 * batches over the round stay within about one sample of its exact share
 * instead of collecting the same rounding S times (equal ranks, 5 samples over
 * 3 would otherwise get 2,2,1 at every step). weights_ready: a round update
 * (step 0, whose carry is 0) left the weights in e->carry. The quota waits in
 * e->carry while the apportionment consumes c->w, so no other n-double
 * scratch is needed. */
static void plan_step(hs_controller *c, bool weights_ready) {
  ebatch *e = c->state;
  uint32_t steps = c->cfg.steps_per_round;
  assert(!weights_ready || e->s == 0);
  if (e->s == 0 && !weights_ready) memset(e->carry, 0, c->n * sizeof *e->carry);
  const double *wt = weights_ready ? e->carry : c->w;
  for (size_t g = 0; g < c->ngroups; g++) {
    const uint32_t *idx = c->order + c->gstart[g];
    size_t m = c->gstart[g + 1] - c->gstart[g];
    uint64_t gs = step_global(c->gbudget[g], steps, e->s);
    double wsum = e->gwsum[g], lo; /* the weights' sum in index order */
    if (!weights_ready) ebatch_weights(c, idx, m, NULL, &wsum, &lo);
    double scale = (double)gs / wsum, qsum = 0.0, qlo = INFINITY;
    for (size_t j = 0; j < m; j++) {
      uint32_t i = idx[j];
      /* step 0's carry is 0: weight*scale + 0.0 is that product exactly */
      double quota = wt[i] * scale + (weights_ready ? 0.0 : e->carry[i]);
      e->carry[i] = quota;
      double v = quota > 1e-12 ? quota : 1e-12;
      c->w[i] = v;
      qsum += v;
      qlo = v < qlo ? v : qlo;
    }
    pol_apportion_sum(idx, m, c->w, qsum, qlo, gs, gs >= m ? 1 : 0, e->step, &c->scratch);
    for (size_t j = 0; j < m; j++) e->carry[idx[j]] -= (double)e->step[idx[j]];
  }
}

/* Round allocation from the current estimates into out; the weights are
 * also left in e->carry for plan_step (step 0: its carry is free), their
 * sums in e->gwsum. */
static void ebatch_plan(hs_controller *c, uint64_t *out) {
  ebatch *e = c->state;
  for (size_t g = 0; g < c->ngroups; g++) {
    const uint32_t *idx = c->order + c->gstart[g];
    size_t m = c->gstart[g + 1] - c->gstart[g];
    double lo;
    ebatch_weights(c, idx, m, e->carry, &e->gwsum[g], &lo);
    uint64_t fl = c->gbudget[g] >= m ? 1 : 0;
    pol_apportion_sum(idx, m, c->w, e->gwsum[g], lo, c->gbudget[g], fl, out, &c->scratch);
  }
}

static hs_status ebatch_create(hs_controller *c, hs_error *err) {
  (void)err;
  ebatch *e = hs_calloc(1, sizeof *e);
  pol_make_scratch(c);
  e->beta = pol_real(c, K_BETA);
  e->thr = hs_calloc(c->n, sizeof *e->thr);
  e->have = hs_calloc(c->n, sizeof *e->have);
  e->step = hs_calloc(c->n, sizeof *e->step);
  e->carry = hs_calloc(c->n, sizeof *e->carry);
  e->gwsum = hs_calloc(c->ngroups, sizeof *e->gwsum);
  c->state = e;
  plan_step(c, false);
  return HS_OK;
}

static void ebatch_destroy(hs_controller *c) {
  ebatch *e = c->state;
  if (!e) return;
  hs_free(e->thr);
  hs_free(e->have);
  hs_free(e->step);
  hs_free(e->carry);
  hs_free(e->gwsum);
  hs_free(e);
  c->state = NULL;
}

/* Throughputs are kept in [THR_MIN, THR_MAX] samples/s. n/t overflows to inf
 * for a tiny reported time (10^6 samples in 1e-305 s), and an inf weight breaks
 * the apportionment, whose weights must sum to a finite number (2^32 ranks x
 * 1e290 still do); at the other end, a budget (<= 2^53) divided by a group's
 * weight sum must stay finite (1 sample in 1e300 s). */
#define THR_MAX 1e290
#define THR_MIN 1e-290

static void observe_thr(ebatch *e, size_t i, double thr, double beta) {
  if (!(thr <= THR_MAX)) thr = THR_MAX;
  if (thr < THR_MIN) thr = THR_MIN;
  if (!e->have[i]) {
    e->thr[i] = thr;
    e->have[i] = 1;
  } else {
    e->thr[i] = beta * e->thr[i] + (1.0 - beta) * thr;
  }
}

static void ebatch_update(hs_controller *c, const hs_telemetry *t) {
  ebatch *e = c->state;
  if (e->steps_seen == 0)
    for (size_t i = 0; i < c->n; i++)
      if (t[i].samples > 0)
        observe_thr(e, i, (double)t[i].samples / t[i].time_s, e->beta);
  e->steps_seen = 0;
  e->s = 0;
  ebatch_plan(c, c->next);
  plan_step(c, true);
}

static const uint64_t *ebatch_step_batches(const hs_controller *c) {
  const ebatch *e = c->state;
  return e->step;
}

static hs_status ebatch_step_update(hs_controller *c, const double *step_time_s, size_t n,
                                    hs_error *err) {
  ebatch *e = c->state;
  if (n != c->n)
    return hs_error_set(err, HS_EINVAL, "step times: %zu values for %zu ranks", n, c->n);
  if (!step_time_s) return hs_error_set(err, HS_EINVAL, "step times: no values");
  for (size_t i = 0; i < n; i++) {
    double t = step_time_s[i];
    if (!isfinite(t) || t < 0)
      return hs_error_set(err, HS_EINVAL, "rank %zu: step_time_s: %g is not a finite number >= 0",
                          i, t);
    if (e->step[i] > 0 && t == 0)
      return hs_error_set(err, HS_EINVAL,
                          "rank %zu: step_time_s: 0 for a batch of %llu (must be > 0)", i,
                          (unsigned long long)e->step[i]);
  }
  for (size_t i = 0; i < n; i++)
    if (e->step[i] > 0)
      observe_thr(e, i, (double)e->step[i] / step_time_s[i], e->beta);
  e->steps_seen++;
  e->s = (e->s + 1) % c->cfg.steps_per_round;
  plan_step(c, false);
  return HS_OK;
}

static size_t ebatch_state(const hs_controller *c, pol_state_field *f) {
  ebatch *e = c->state;
  size_t n = c->n;
  double steps = (double)c->cfg.steps_per_round;
  f[0] = (pol_state_field){"thr", POL_S_REAL, e->thr, n, NULL, 0, 0, HUGE_VAL};
  f[1] = (pol_state_field){"have", POL_S_FLAG, e->have, n, NULL, 0, 0, 1};
  f[2] = (pol_state_field){"step", POL_S_U64, e->step, n, NULL, 0, 0, (double)c->budget};
  f[3] = (pol_state_field){"carry", POL_S_REAL, e->carry, n, NULL, 0, -HUGE_VAL, HUGE_VAL};
  f[4] = (pol_state_field){"s", POL_S_U32, &e->s, 1, NULL, 0, 0, steps - 1};
  f[5] = (pol_state_field){"steps_seen", POL_S_U32, &e->steps_seen, 1, NULL, 0, 0, steps};
  return 6;
}

/* The next step's batches sum to each group's step budget (the ranges cannot
 * say that). */
static hs_status ebatch_state_check(const hs_controller *c, hs_error *err) {
  const ebatch *e = c->state;
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m;
    const uint32_t *idx = pol_group(c, g, &m);
    uint64_t sum = 0, want = step_global(c->gbudget[g], c->cfg.steps_per_round, e->s);
    for (size_t j = 0; j < m; j++) sum += e->step[idx[j]];
    if (sum != want)
      return hs_error_set(err, HS_EINVAL, "state.step: group %zu: batches sum to %llu, not %llu",
                          g, (unsigned long long)sum, (unsigned long long)want);
  }
  return HS_OK;
}

const pol_type pol_ema_batch = {
    .name = "ema-batch",
    .summary = "DDP per-step batches in proportion to EMA throughput",
    .caps = HS_POLICY_CAP_STEP_LEVEL | HS_POLICY_CAP_GROUPS,
    .bytes_per_participant = 8 + 1 + 8 + 8 + 8, /* thr, have, step, carry, c->sd */
    .keys = ebatch_keys,
    .nkeys = POL_NKEYS(ebatch_keys),
    .create = ebatch_create,
    .destroy = ebatch_destroy,
    .update = ebatch_update,
    .step_batches = ebatch_step_batches,
    .step_update = ebatch_step_update,
    .state = ebatch_state,
    .state_check = ebatch_state_check,
};
