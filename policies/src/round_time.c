/* round_time.c: the round-time controller: balances each participant's whole
 * round, communication included, where time-only balances the compute only
 * (issue 24: a board on a slow link stays the straggler under time-only, its
 * transfers being a fixed part of its round that no split of the samples
 * shrinks).
 *
 * Model: participant i's round takes c_i + a_i*n_i, a_i its smoothed
 * per-sample time (costs.c's tau, the estimate time-only uses) and c_i its
 * smoothed communication time (hs_controller_set_comm, the same EMA, first
 * observation as is). The split ends every round of a group together: the
 * time T with sum_i max(floor, (T - c_i)/a_i) = the group's budget. That sum
 * is piecewise linear and increasing in T with a breakpoint at b_i = c_i +
 * a_i*floor (below it i is floored), so T is found exactly: participants in
 * ascending (b_i, i), the first k unfloored, T_k = (B - floor*(m-k) +
 * sum_{j<k} c_j/a_j) / sum_{j<k} 1/a_j, the first k whose T_k does not pass
 * the next breakpoint. The real shares max(floor, (T - c_i)/a_i) go to the
 * shared largest-remainder apportionment (select.c) as weights, so the
 * integers follow the rules of hs_policy.h like every policy's.
 *
 * Units: a and c are divided by the group's median a (unmeasured participants
 * take that median: time-only's neutral cost), a clamped to >= 1e-12 of it as
 * time-only clamps its costs. Without any communication estimate above 0 the
 * update IS time-only's (pol_costs_split with w_e = 0): the same allocations,
 * bit for bit, which the tests hold it to.
 *
 * State: the cost estimates (costs.c), comm and have_comm per participant, and
 * the (b_i, i) pairs a split sorts (scratch). A participant that ran 0 samples
 * keeps its estimates, as in costs.c. One update: O(n) for the estimates and,
 * with communication, O(m log m) per group for the sort. Rejected: bisection
 * on T (inexact, and its iteration count depends on the numbers); solving
 * without the floor and clamping after (the budget is then not met). */
#include <math.h>
#include <stdlib.h>

#include "base/hs_alloc.h"
#include "pol_costs.h"

/* Slots in the key table (and in hs_policy_config.value). */
enum { K_EMA, K_DEADBAND, K_MIN_SAMPLES };

static const pol_key round_time_keys[] = {
    [K_EMA] = {"ema", POL_REAL, 0.5, 0, 1, false, true, NULL,
               "smoothing of the per-sample and communication times: x <- ema*x + (1-ema)*obs"},
    [K_DEADBAND] = {"deadband", POL_REAL, 0.05, 0, INFINITY, false, false, NULL,
                    "keep the split when the largest relative change is at most this"},
    [K_MIN_SAMPLES] = {"min_samples", POL_UINT64, 1, 0, 0, false, false, NULL,
                       "per-participant floor"},
};

#define A_MIN 1e-12    /* the smallest a, relative to the group's median */
#define C_MAX 1e280    /* c relative to the median a: c/a stays finite */
#define W_MIN 1e-300   /* a floored share of 0 (floor 0) as a weight > 0 */

typedef struct rt_pair {
  double b;   /* breakpoint c_i + a_i*floor (normalised) */
  uint32_t i; /* participant */
} rt_pair;

typedef struct round_time {
  pol_costs costs;
  double *comm;           /* n: smoothed communication seconds per round */
  unsigned char *have_c;  /* n: 1 once a communication time was observed */
  rt_pair *pairs;         /* n: scratch for one group's sort */
  double ema;
  uint64_t min_samples;
} round_time;

/* the estimates, comm and have_c, the pairs, and the controller's copy of
 * the communication times (c->comm: reads_comm) */
#define RT_BYTES (POL_COSTS_BYTES + 2 * sizeof(double) + 1 + sizeof(rt_pair))

static hs_status rt_create(hs_controller *c, hs_error *err) {
  uint64_t floor = pol_uint(c, K_MIN_SAMPLES);
  hs_status st = pol_check_floor(c, floor, err);
  if (st != HS_OK) return st;
  round_time *s = hs_calloc(1, sizeof *s);
  c->state = s;
  pol_costs_init(&s->costs, c->n, c->ngroups);
  s->comm = hs_calloc(c->n, sizeof *s->comm);
  s->have_c = hs_calloc(c->n, sizeof *s->have_c);
  s->pairs = hs_calloc(c->n, sizeof *s->pairs);
  pol_make_scratch(c);
  s->ema = pol_real(c, K_EMA);
  s->min_samples = floor;
  c->deadband = pol_real(c, K_DEADBAND);
  c->cand_w = true;
  return HS_OK;
}

static void rt_destroy(hs_controller *c) {
  round_time *s = c->state;
  if (!s) return;
  pol_costs_fini(&s->costs);
  hs_free(s->comm);
  hs_free(s->have_c);
  hs_free(s->pairs);
  hs_free(s);
  c->state = NULL;
}

/* The communication times of the participants that trained this round; true
 * when any participant has an estimate above 0 afterwards. */
static bool observe_comm(hs_controller *c, round_time *s, const hs_telemetry *t) {
  bool any = false;
  for (size_t i = 0; i < c->n; i++) {
    if (c->comm_set && t[i].samples > 0) {
      double x = c->comm[i];
      s->comm[i] = s->have_c[i] ? s->ema * s->comm[i] + (1.0 - s->ema) * x : x;
      s->have_c[i] = 1;
    }
    any |= s->have_c[i] && s->comm[i] > 0;
  }
  return any;
}

static int pair_cmp(const void *x, const void *y) {
  const rt_pair *p = x, *q = y;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return (p->i > q->i) - (p->i < q->i);
}

/* One group's normalised a_i and c_i (med: the group's median a, > 0; the
 * group's median slot of the costs' scratch, gmed[2g], holds it). */
static inline double a_of(const round_time *s, uint32_t i, double med) {
  double a = s->costs.have[i] ? s->costs.tau[i] / med : 1.0;
  return a < A_MIN ? A_MIN : a;
}
static inline double c_of(const round_time *s, uint32_t i, double med) {
  double x = s->have_c[i] ? s->comm[i] / med : 0.0;
  return x < C_MAX ? x : C_MAX;
}

/* The water-filling split of one group into c->w as weights (the real shares,
 * summing to the budget), then the apportionment into c->w as counts. */
static void split_group(hs_controller *c, round_time *s, const uint32_t *idx, size_t m,
                        uint64_t budget, double med) {
  double fl = (double)s->min_samples, B = (double)budget;
  rt_pair *p = s->pairs;
  for (size_t j = 0; j < m; j++) {
    uint32_t i = idx[j];
    p[j] = (rt_pair){c_of(s, i, med) + a_of(s, i, med) * fl, i};
  }
  qsort(p, m, sizeof *p, pair_cmp);
  /* the first k unfloored: T_k = (B - fl*(m-k) + S2) / S1 */
  double s1 = 0, s2 = 0, T = 0;
  size_t k = 0;
  while (k < m) {
    uint32_t i = p[k].i;
    double a = a_of(s, i, med);
    s1 += 1.0 / a;
    s2 += c_of(s, i, med) / a;
    k++;
    T = (B - fl * (double)(m - k) + s2) / s1;
    if (k == m || T <= p[k].b) break;
  }
  bool ok = isfinite(T);
  for (size_t j = 0; j < m && ok; j++) {
    uint32_t i = p[j].i;
    double x = j < k ? (T - c_of(s, i, med)) / a_of(s, i, med) : fl;
    if (x < fl) x = fl;
    ok = isfinite(x);
    c->w[i] = x > W_MIN ? x : W_MIN;
  }
  /* Times so far apart that T or a share overflows a double (telemetry
   * spanning hundreds of orders of magnitude): the group falls back to
   * time-only's weights 1/a (an update cannot fail). */
  for (size_t j = 0; j < m && !ok; j++) c->w[idx[j]] = 1.0 / a_of(s, idx[j], med);
  pol_apportion(idx, m, c->w, budget, s->min_samples, NULL, &c->scratch);
}

static void rt_update(hs_controller *c, const hs_telemetry *t) {
  round_time *s = c->state;
  pol_costs_observe(&s->costs, t, c->n, s->ema);
  if (!observe_comm(c, s, t)) { /* no communication known: time-only, exactly */
    pol_costs_split(c, &s->costs, 0.0, s->min_samples, NULL);
    return;
  }
  /* every group's median a first: the selection works in c->w, where the
   * groups' counts go (as in costs.c) */
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m, cnt;
    const uint32_t *idx = pol_group(c, g, &m);
    double med = pol_median_of(s->costs.tau, idx, m, s->costs.have, c->w, &cnt);
    s->costs.gmed[2 * g] = med > 0 ? med : 1.0; /* nobody measured: every a is 1 */
  }
  for (size_t g = 0; g < c->ngroups; g++) {
    size_t m;
    const uint32_t *idx = pol_group(c, g, &m);
    split_group(c, s, idx, m, c->gbudget[g], s->costs.gmed[2 * g]);
  }
}

static size_t rt_state(const hs_controller *c, pol_state_field *f) {
  round_time *s = c->state;
  size_t m = pol_costs_state(&s->costs, c->n, f);
  f[m++] = (pol_state_field){.name = "comm", .type = POL_S_REAL, .ptr = s->comm, .count = c->n,
                             .lo = 0, .hi = HUGE_VAL};
  f[m++] = (pol_state_field){.name = "have_comm", .type = POL_S_FLAG, .ptr = s->have_c,
                             .count = c->n, .lo = 0, .hi = 1};
  return m;
}

const pol_type pol_round_time = {
    .name = "round-time",
    .summary = "time-only over whole rounds: training plus communication end together",
    .caps = HS_POLICY_CAP_GROUPS,
    .bytes_per_participant = RT_BYTES,
    .reads_comm = true,
    .keys = round_time_keys,
    .nkeys = POL_NKEYS(round_time_keys),
    .create = rt_create,
    .destroy = rt_destroy,
    .update = rt_update,
    .state = rt_state,
};
