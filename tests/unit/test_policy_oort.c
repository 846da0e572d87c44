/* test_policy_oort.c: Oort-style selection: K selected every round, the
 * budget split over them, zeros for the rest (and 0/0/0 telemetry for them
 * accepted), determinism from the seed, and the straggler penalty at work:
 * fast participants are chosen far more often once exploration has decayed;
 * and every selection equal, round by round, to a plain sorting reference of
 * the algorithm (ties, cut-offs, the pacer, utilities, dropouts included). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_rng.h"
#include "policies/hs_policy.h"

static hs_controller *make_oort(size_t n, uint64_t budget, const char *k, const char *seed,
                                hs_error *err) {
  hs_policy_config cfg;
  cr_assert_eq(hs_policy_config_init(&cfg, "oort", err), HS_OK);
  if (k) cr_assert_eq(hs_policy_config_set(&cfg, "oort_k", k, err), HS_OK);
  if (seed) cr_assert_eq(hs_policy_config_set(&cfg, "seed", seed, err), HS_OK);
  return hs_controller_create(&cfg, n, NULL, budget, err);
}

/* telemetry for the current allocation: participant i takes tau[i] s/sample */
static void run_round(hs_controller *c, const double *tau, size_t n, unsigned *count) {
  const uint64_t *a = hs_controller_allocation(c);
  hs_telemetry *t = hs_calloc(n, sizeof *t);
  for (size_t i = 0; i < n; i++) {
    t[i].samples = (int64_t)a[i];
    t[i].time_s = a[i] ? tau[i] * (double)a[i] : 0; /* 0/0/0 for the unselected */
    t[i].energy_j = t[i].time_s * 5;
    if (count && a[i]) count[i]++;
  }
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(c, t, n, &err), HS_OK, "%s", err.msg);
  hs_free(t);
}

Test(policy_oort, selects_k_and_splits_the_budget_over_them) {
  hs_error err = {0};
  size_t n = 20;
  hs_controller *c = make_oort(n, 1003, "6", "5", &err);
  cr_assert_not_null(c, "%s", err.msg);
  /* before telemetry: the equal split over everyone */
  const uint64_t *a = hs_controller_allocation(c);
  for (size_t i = 0; i < n; i++) cr_expect_eq(a[i], i < 3 ? 51 : 50);
  double tau[20];
  for (size_t i = 0; i < n; i++) tau[i] = 0.01 * (double)(1 + i % 5);
  for (int round = 0; round < 30; round++) {
    run_round(c, tau, n, NULL);
    a = hs_controller_allocation(c);
    size_t sel = 0;
    uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
      sum += a[i];
      if (!a[i]) continue;
      sel++;
      lo = a[i] < lo ? a[i] : lo;
      hi = a[i] > hi ? a[i] : hi;
    }
    cr_assert_eq(sel, 6, "round %d: %zu selected", round, sel);
    cr_assert_eq(sum, 1003);
    cr_assert_leq(hi - lo, 1); /* 1003 over 6: one 168, five 167 */
  }
  hs_controller_destroy(c);
}

Test(policy_oort, default_k_is_half) {
  hs_error err = {0};
  hs_controller *c = make_oort(9, 90, NULL, NULL, &err);
  double tau[9] = {.1, .1, .1, .1, .1, .1, .1, .1, .1};
  run_round(c, tau, 9, NULL);
  size_t sel = 0;
  for (size_t i = 0; i < 9; i++) sel += hs_controller_allocation(c)[i] > 0;
  cr_expect_eq(sel, 4);
  hs_controller_destroy(c);
}

Test(policy_oort, same_seed_same_run_other_seed_other_run) {
  hs_error err = {0};
  size_t n = 50;
  double tau[50];
  for (size_t i = 0; i < n; i++) tau[i] = 0.005 * (double)(1 + (i * 7) % 13);
  hs_controller *a = make_oort(n, 5000, "10", "42", &err);
  hs_controller *b = make_oort(n, 5000, "10", "42", &err);
  hs_controller *d = make_oort(n, 5000, "10", "43", &err);
  bool differs = false;
  for (int round = 0; round < 15; round++) {
    run_round(a, tau, n, NULL);
    run_round(b, tau, n, NULL);
    run_round(d, tau, n, NULL);
    cr_assert(memcmp(hs_controller_allocation(a), hs_controller_allocation(b),
                     n * sizeof(uint64_t)) == 0,
              "round %d: same seed, different selection", round);
    differs |= memcmp(hs_controller_allocation(a), hs_controller_allocation(d),
                      n * sizeof(uint64_t)) != 0;
  }
  cr_expect(differs, "seeds 42 and 43 chose identically for 15 rounds");
  hs_controller_destroy(a);
  hs_controller_destroy(b);
  hs_controller_destroy(d);
}

Test(policy_oort, stragglers_are_selected_less) {
  /* 0..9 take 10 ms/sample, 10..19 take 100 ms/sample; K = 5, exploration
   * decays from 0.9 to 0.3. Over 150 rounds the straggler penalty (alpha 2)
   * must show: fast devices chosen well over twice as often in total. */
  hs_error err = {0};
  size_t n = 20;
  hs_policy_config cfg;
  hs_policy_config_init(&cfg, "oort", &err);
  hs_policy_config_set(&cfg, "oort_k", "5", &err);
  hs_policy_config_set(&cfg, "seed", "9", &err);
  hs_controller *c = hs_controller_create(&cfg, n, NULL, 500, &err);
  cr_assert_not_null(c, "%s", err.msg);
  double tau[20];
  for (size_t i = 0; i < n; i++) tau[i] = i < 10 ? 0.01 : 0.1;
  unsigned count[20] = {0};
  for (int round = 0; round < 150; round++) run_round(c, tau, n, count);
  unsigned fast = 0, slow = 0;
  for (size_t i = 0; i < n; i++) *(i < 10 ? &fast : &slow) += count[i];
  cr_expect_gt(fast, 2 * slow, "fast %u, slow %u", fast, slow);
  hs_controller_destroy(c);
}

Test(policy_oort, rejects_groups_and_a_budget_below_k_floors) {
  hs_error err = {0};
  hs_policy_config cfg;
  hs_policy_config_init(&cfg, "oort", &err);
  uint32_t g[4] = {0, 0, 1, 1};
  cr_expect_null(hs_controller_create(&cfg, 4, g, 100, &err));
  cr_expect(strncmp(err.msg, "groups: ", 8) == 0, "%s", err.msg);
  hs_policy_config_set(&cfg, "oort_k", "3", &err);
  hs_policy_config_set(&cfg, "min_samples", "10", &err);
  cr_expect_null(hs_controller_create(&cfg, 4, NULL, 29, &err));
  cr_expect(strncmp(err.msg, "budget: 29", 10) == 0, "%s", err.msg);
  hs_controller *ok = hs_controller_create(&cfg, 4, NULL, 30, &err);
  cr_expect_not_null(ok, "%s", err.msg);
  hs_controller_destroy(ok);
}

Test(policy_oort, a_huge_pacer_window_costs_no_memory_up_front) {
  /* oort_pacer_window accepts any uint32 >= 1; the ring of 2W utilities was
   * allocated whole at creation: 64 GiB for 2^32-1, an out-of-memory abort
   * for a value the config accepts. It now grows with the rounds run. */
  hs_policy_config cfg;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&cfg, "oort", &err), HS_OK);
  cr_assert_eq(hs_policy_config_set(&cfg, "oort_pacer_window", "4294967295", &err), HS_OK);
  cr_assert_eq(hs_policy_config_set(&cfg, "oort_k", "2", &err), HS_OK);
  hs_controller *c = hs_controller_create(&cfg, 4, NULL, 100, &err);
  cr_assert_not_null(c, "%s", err.msg);
  double tau[4] = {0.01, 0.02, 0.04, 0.08};
  for (int r = 0; r < 50; r++) run_round(c, tau, 4, NULL);
  const uint64_t *a = hs_controller_allocation(c);
  cr_expect_eq(a[0] + a[1] + a[2] + a[3], 100);
  hs_controller_destroy(c);
}

/* --- a reference: the selection of oort.c's header, by sorting ------------ */

/* What oort.c promises (its header, steps 1-6), written the plain way: every
 * selection a full sort by (key desc, index asc), the temporal-uncertainty
 * term recomputed per participant, the utility history kept whole. Same
 * floating-point expressions in the same order, so the controller must match
 * it exactly, ties included: this is the proof that oort's selections
 * (thresholds, bracketed top-k, branch-free passes) changed no decision. */
typedef struct ref_oort {
  size_t n, k;
  uint64_t budget, window, round;
  double ema, alpha, explore, decay, explore_min, step_cfg, t_pref, step;
  double *tau, *util, *hist;
  uint64_t *last, *next;
  unsigned char *have, *exploited, *picked;
  uint64_t seed;
} ref_oort;

typedef struct ref_key {
  double key;
  size_t idx;
} ref_key;

static int ref_desc(const void *a, const void *b) {
  const ref_key *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static int ref_asc_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double ref_penalty(double x, double alpha) {
  if (alpha == 2.0) return x * x;
  if (alpha == 1.0) return x;
  if (alpha == 3.0) return x * x * x;
  return pow(x, alpha);
}

static void ref_update(ref_oort *o, const hs_telemetry *t, const double *utility) {
  size_t n = o->n;
  uint64_t r = ++o->round, w = o->window;
  for (size_t i = 0; i < n; i++) {
    if (t[i].samples <= 0) continue;
    double s = (double)t[i].samples, tau = t[i].time_s / s;
    o->tau[i] = o->have[i] ? o->ema * o->tau[i] + (1.0 - o->ema) * tau : tau;
    o->have[i] = 1;
  }
  double exploit_util = 0, usum = 0;
  size_t nexp = 0;
  for (size_t i = 0; i < n; i++) {
    if (t[i].samples > 0) {
      o->util[i] = utility ? utility[i] : (double)t[i].samples;
      o->last[i] = r;
      if (o->exploited[i]) exploit_util += o->util[i];
    }
    if (o->have[i]) nexp++, usum += o->util[i];
  }
  o->hist = hs_reallocarray(o->hist, (size_t)r, sizeof *o->hist);
  o->hist[r - 1] = exploit_util;
  double share = (double)o->budget / (double)o->k;
  double *d = hs_malloc((n + 1) * sizeof *d);
  if (o->t_pref <= 0 && nexp > 0) {
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
      if (o->have[i]) d[j++] = o->tau[i] * share;
    qsort(d, nexp, sizeof *d, ref_asc_d);
    o->t_pref = d[(o->k <= nexp ? o->k : nexp) - 1];
    o->step = o->step_cfg > 0 ? o->step_cfg : 0.1 * o->t_pref;
  }
  if (r >= 2 * w && r % w == 0 && o->t_pref > 0) {
    double prev = 0, cur = 0;
    for (uint64_t j = r - 2 * w; j < r - w; j++) prev += o->hist[j];
    for (uint64_t j = r - w; j < r; j++) cur += o->hist[j];
    double change = fabs(cur - prev);
    if (change <= 0.1 * prev)
      o->t_pref += o->step;
    else if (change >= 5.0 * prev)
      o->t_pref = fmax(o->step, o->t_pref - o->step);
  }
  o->explore = fmax(o->explore * o->decay, o->explore_min);
  size_t nexploit = (size_t)floor((double)o->k * (1.0 - o->explore));
  if (nexploit > nexp) nexploit = nexp;
  double umean = nexp ? usum / (double)nexp : 1.0;
  if (!(umean > 0)) umean = 1.0;
  double lr = log((double)r + 1.0);
  hs_rng rng;
  hs_rng_init(&rng, o->seed, r, HS_RNG_POLICY);
  double *ue = hs_malloc((n + 1) * sizeof *ue), *ux = hs_malloc((n + 1) * sizeof *ux);
  ref_key *cand = hs_malloc((n + 1) * sizeof *cand);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    ue[i] = hs_rng_uniform_pos(&rng);
    ux[i] = hs_rng_uniform(&rng);
    if (!o->have[i]) continue;
    double di = o->tau[i] * share;
    double sc = o->util[i] / umean + sqrt(0.1 * lr / (double)(o->last[i] ? o->last[i] : 1));
    if (o->t_pref > 0 && di > o->t_pref) sc *= ref_penalty(o->t_pref / di, o->alpha);
    cand[m++] = (ref_key){sc > 1e-300 ? sc : 1e-300, i};
  }
  memset(o->picked, 0, n);
  memset(o->exploited, 0, n);
  if (nexploit > 0) {
    size_t want = 10 * nexploit + 1;
    if (want < m) {
      for (size_t j = 0; j < m; j++) d[j] = cand[j].key;
      qsort(d, m, sizeof *d, ref_asc_d);
      double cut = 0.95 * d[m - nexploit];
      size_t above = 0;
      for (size_t j = 0; j < m; j++) above += cand[j].key >= cut;
      qsort(cand, m, sizeof *cand, ref_desc);
      m = above > want ? above : want;
    }
    for (size_t j = 0; j < m; j++) cand[j].key = log(ue[cand[j].idx]) / cand[j].key;
    qsort(cand, m, sizeof *cand, ref_desc);
    for (size_t j = 0; j < nexploit; j++) o->picked[cand[j].idx] = o->exploited[cand[j].idx] = 1;
  }
  m = 0;
  for (size_t i = 0; i < n; i++)
    if (!o->picked[i]) cand[m++] = (ref_key){(o->have[i] ? 0.0 : 1.0) + ux[i], i};
  qsort(cand, m, sizeof *cand, ref_desc);
  for (size_t j = 0; j < o->k - nexploit; j++) o->picked[cand[j].idx] = 1;
  uint64_t each = o->budget / o->k, extra = o->budget % o->k;
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    o->next[i] = o->picked[i] ? each + (j < extra) : 0;
    j += o->picked[i];
  }
  hs_free(d);
  hs_free(ue);
  hs_free(ux);
  hs_free(cand);
}

typedef struct ref_case {
  size_t n;
  const char *k, *alpha, *window, *explore, *decay, *step;
  unsigned speeds; /* distinct per-sample times: few means many tied scores */
  int rounds;
  bool utility;    /* hs_controller_set_utility on two rounds out of three */
  unsigned alias;  /* > 0: every alias-th participant 50x faster (a pattern a
                      strided sample sees whole: its bounds then miss) */
  double dropout;  /* chance that a selected participant reports nothing
                      (0: 3 %); high: most stay unexplored for many rounds */
} ref_case;

static void check_against_reference(const ref_case *rc, uint64_t seed) {
  hs_error err = {0};
  hs_policy_config cfg;
  cr_assert_eq(hs_policy_config_init(&cfg, "oort", &err), HS_OK);
  const char *keys[] = {"oort_k", "oort_alpha", "oort_pacer_window", "oort_explore",
                        "oort_explore_decay", "oort_pacer_step"};
  const char *vals[] = {rc->k, rc->alpha, rc->window, rc->explore, rc->decay, rc->step};
  for (size_t q = 0; q < 6; q++)
    if (vals[q]) cr_assert_eq(hs_policy_config_set(&cfg, keys[q], vals[q], &err), HS_OK, "%s", err.msg);
  char sd[32];
  snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
  cr_assert_eq(hs_policy_config_set(&cfg, "seed", sd, &err), HS_OK);
  size_t n = rc->n;
  uint64_t budget = 37 * (uint64_t)n + 11;
  hs_controller *c = hs_controller_create(&cfg, n, NULL, budget, &err);
  cr_assert_not_null(c, "%s", err.msg);
  ref_oort o = {.n = n, .budget = budget, .seed = seed};
  o.k = rc->k ? strtoull(rc->k, NULL, 10) : n / 2;
  o.window = rc->window ? strtoull(rc->window, NULL, 10) : 20;
  o.alpha = rc->alpha ? strtod(rc->alpha, NULL) : 2;
  o.explore = rc->explore ? strtod(rc->explore, NULL) : 0.9;
  o.decay = rc->decay ? strtod(rc->decay, NULL) : 0.98;
  o.step_cfg = rc->step ? strtod(rc->step, NULL) : 0;
  o.ema = 0.5;
  o.explore_min = 0.3;
  o.tau = hs_calloc(n, sizeof *o.tau);
  o.util = hs_calloc(n, sizeof *o.util);
  o.last = hs_calloc(n, sizeof *o.last);
  o.next = hs_calloc(n, sizeof *o.next);
  o.have = hs_calloc(n, 1);
  o.exploited = hs_calloc(n, 1);
  o.picked = hs_calloc(n, 1);
  hs_rng rng;
  hs_rng_init(&rng, seed, 77, HS_RNG_BENCH);
  double *speed = hs_malloc(n * sizeof *speed), *utility = hs_malloc(n * sizeof *utility);
  for (size_t i = 0; i < n; i++) {
    speed[i] = 0.001 * (double)(1 + hs_rng_below(&rng, rc->speeds));
    if (rc->alias && i % rc->alias == 0) speed[i] /= 50;
  }
  hs_telemetry *t = hs_calloc(n, sizeof *t);
  for (int round = 0; round < rc->rounds; round++) {
    const uint64_t *a = hs_controller_allocation(c);
    for (size_t i = 0; i < n; i++) {
      /* now and then a selected participant drops out (0 samples) */
      bool drop = hs_rng_uniform(&rng) < (rc->dropout > 0 ? rc->dropout : 0.03);
      t[i].samples = drop ? 0 : (int64_t)a[i];
      t[i].time_s = t[i].samples ? speed[i] * (double)a[i] : 0;
      t[i].energy_j = t[i].time_s * 4;
      utility[i] = floor(hs_rng_uniform(&rng) * 4) * 0.5; /* ties, and zeros */
    }
    bool use_u = rc->utility && round % 3 != 2;
    if (use_u) cr_assert_eq(hs_controller_set_utility(c, utility, n, &err), HS_OK);
    cr_assert_eq(hs_controller_update(c, t, n, &err), HS_OK, "%s", err.msg);
    ref_update(&o, t, use_u ? utility : NULL);
    a = hs_controller_allocation(c);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(a[i], o.next[i], "n=%zu K=%s seed=%llu round %d: participant %zu gets %llu, "
                   "the reference %llu", n, rc->k ? rc->k : "n/2", (unsigned long long)seed,
                   round + 1, i, (unsigned long long)a[i], (unsigned long long)o.next[i]);
  }
  hs_controller_destroy(c);
  hs_free(t);
  hs_free(speed);
  hs_free(utility);
  hs_free(o.tau);
  hs_free(o.util);
  hs_free(o.hist);
  hs_free(o.last);
  hs_free(o.next);
  hs_free(o.have);
  hs_free(o.exploited);
  hs_free(o.picked);
}

/* Small populations (every path of the selections) and populations above
 * the sample bracket's threshold (2^15 participants), with few distinct
 * speeds (tied scores), integer and fractional exponents, a short pacer
 * window (the pacer moves T_pref), a cut-off of the exploitation candidates
 * (small K) and none (K = n/2), dropouts and the learner's utilities. */
Test(policy_oort, same_selections_as_the_sorting_reference, .timeout = 120) {
  const ref_case cases[] = {
      {.n = 20, .k = "6", .speeds = 3, .rounds = 60},
      {.n = 50, .k = "10", .alpha = "1.5", .window = "2", .speeds = 5, .rounds = 60, .utility = true},
      {.n = 300, .k = "7", .window = "3", .step = "0.01", .speeds = 2, .rounds = 40},
      {.n = 1000, .alpha = "1", .decay = "0.8", .speeds = 4, .rounds = 30, .utility = true},
      {.n = 1000, .k = "40", .alpha = "3", .explore = "0.2", .speeds = 1000, .rounds = 30},
      {.n = 40000, .speeds = 3, .rounds = 12},
      {.n = 40000, .k = "300", .window = "2", .speeds = 7, .rounds = 12, .utility = true},
      {.n = 40000, .k = "39000", .decay = "0.5", .speeds = 50, .rounds = 8},
      {.n = 40000, .k = "20000", .decay = "0.9", .speeds = 5, .rounds = 10, .alias = 4},
      {.n = 40000, .k = "400", .decay = "0.9", .speeds = 5, .rounds = 10, .alias = 4},
      {.n = 40000, .k = "2000", .decay = "0.8", .speeds = 5, .rounds = 10, .dropout = 0.95},
      {.n = 40000, .decay = "0.8", .speeds = 9, .rounds = 10, .dropout = 0.6, .utility = true},
  };
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++)
    for (uint64_t seed = 1; seed <= (cases[j].n > 5000 ? 1u : 3u); seed++)
      check_against_reference(&cases[j], seed);
}
