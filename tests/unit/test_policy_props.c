/* test_policy_props.c: properties of the adaptive controller over many random
 * telemetry sets (seeded hs_rng streams, so a failure reproduces): budget
 * conserved overall and per group, non-negative, floor respected, deadband
 * holds, a failed update changes nothing, two controllers agree, and with no
 * floor binding each allocation is within one sample of the exact inverse-cost
 * share (recomputed here independently, medians by sorting). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "policies/hs_policy.h"
#include "base/hs_rng.h"

#define TRIALS 1500
#define ROUNDS 6

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_sorted(double *v, size_t m) {
  qsort(v, m, sizeof *v, cmp_d);
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static const char *kinds[] = {"adaptive", "time-only", "low-energy", "balanced", "energy-only",
                              "static", "equal"};

Test(policy_props, invariants_over_random_telemetry) {
  hs_rng r;
  hs_rng_init(&r, 11, 0, HS_RNG_BENCH);
  for (int trial = 0; trial < TRIALS; trial++) {
    size_t n = 1 + hs_rng_below(&r, 40);
    const char *kind = kinds[hs_rng_below(&r, sizeof kinds / sizeof kinds[0])];
    hs_policy_config cfg;
    hs_error err = {0};
    cr_assert_eq(hs_policy_config_init(&cfg, kind, &err), HS_OK);
    char v[32];
    if (!strcmp(kind, "adaptive")) {
      snprintf(v, sizeof v, "%.3f", hs_rng_uniform(&r));
      cr_assert_eq(hs_policy_config_set(&cfg, "w_e", v, &err), HS_OK);
    }
    if (strcmp(kind, "equal") && strcmp(kind, "static") == 0) {
      /* static has no ema/deadband keys */
    } else if (strcmp(kind, "equal")) {
      snprintf(v, sizeof v, "%.3f", 0.9 * hs_rng_uniform(&r));
      cr_assert_eq(hs_policy_config_set(&cfg, "ema", v, &err), HS_OK);
      snprintf(v, sizeof v, "%.3f", 0.2 * hs_rng_uniform(&r));
      cr_assert_eq(hs_policy_config_set(&cfg, "deadband", v, &err), HS_OK);
    }
    uint64_t fl = hs_rng_below(&r, 4);
    if (strcmp(kind, "equal")) {
      snprintf(v, sizeof v, "%llu", (unsigned long long)fl);
      cr_assert_eq(hs_policy_config_set(&cfg, "min_samples", v, &err), HS_OK);
    } else {
      fl = 0;
    }
    double db = 0; /* equal and static have no deadband key: db stays 0 */
    hs_policy_config_get(&cfg, "deadband", &db, NULL);
    int ngroups = (int)hs_rng_below(&r, 4); /* 0: no groups */
    uint32_t *g = NULL;
    if (ngroups) {
      g = hs_malloc(n * sizeof *g);
      for (size_t i = 0; i < n; i++) g[i] = (uint32_t)(100 + hs_rng_below(&r, (uint64_t)ngroups));
    }
    uint64_t budget = (fl + 1) * n * 3 + hs_rng_below(&r, 500);
    hs_controller *c = hs_controller_create(&cfg, n, g, budget, &err);
    cr_assert_not_null(c, "%s", err.msg);
    hs_controller *twin = hs_controller_create(&cfg, n, g, budget, &err);
    /* group budgets as fixed at creation */
    uint64_t gb[4] = {0};
    const uint64_t *a0 = hs_controller_allocation(c);
    for (size_t i = 0; i < n; i++) gb[g ? g[i] - 100 : 0] += a0[i];

    double *tau = hs_malloc(n * sizeof *tau), *pw = hs_malloc(n * sizeof *pw);
    for (size_t i = 0; i < n; i++) {
      tau[i] = 0.001 * exp(4 * hs_rng_uniform(&r));
      pw[i] = 2 + 30 * hs_rng_uniform(&r);
    }
    hs_telemetry *t = hs_malloc(n * sizeof *t);
    uint64_t *before = hs_malloc(n * sizeof *before);
    for (int round = 0; round < ROUNDS; round++) {
      const uint64_t *a = hs_controller_allocation(c);
      for (size_t i = 0; i < n; i++) {
        double noise = 0.8 + 0.4 * hs_rng_uniform(&r);
        bool skip = hs_rng_below(&r, 10) == 0; /* did not run this round */
        t[i].samples = skip ? 0 : (int64_t)a[i];
        t[i].time_s = t[i].samples ? (double)a[i] * tau[i] * noise + 0.01 : 0;
        t[i].energy_j = t[i].time_s * pw[i];
      }
      memcpy(before, a, n * sizeof *before);
      /* a corrupted copy must be rejected and change nothing */
      size_t victim = hs_rng_below(&r, n);
      hs_telemetry saved = t[victim];
      t[victim].energy_j = -1;
      cr_assert_eq(hs_controller_update(c, t, n, &err), HS_EINVAL);
      cr_assert(memcmp(before, hs_controller_allocation(c), n * sizeof *before) == 0);
      t[victim] = saved;

      cr_assert_eq(hs_controller_update(c, t, n, &err), HS_OK, "%s", err.msg);
      cr_assert_eq(hs_controller_update(twin, t, n, &err), HS_OK);
      a = hs_controller_allocation(c);
      cr_assert(memcmp(a, hs_controller_allocation(twin), n * sizeof *a) == 0, "twins differ");
      uint64_t sums[4] = {0}, total = 0;
      double worst = 0;
      bool inf = false;
      for (size_t i = 0; i < n; i++) {
        cr_assert_geq(a[i], fl, "%s: participant %zu below the floor", kind, i);
        sums[g ? g[i] - 100 : 0] += a[i];
        total += a[i];
        if (a[i] != before[i]) {
          if (!before[i])
            inf = true;
          else
            worst = fmax(worst, fabs((double)a[i] - (double)before[i]) / (double)before[i]);
        }
      }
      cr_assert_eq(total, budget, "%s: budget not conserved", kind);
      for (int k = 0; k < 4; k++) cr_assert_eq(sums[k], gb[k], "%s: group %d budget moved", kind, k);
      if (hs_controller_reallocated(c)) {
        cr_assert(memcmp(before, a, n * sizeof *a) != 0);
        if (strcmp(kind, "static")) cr_assert(inf || worst > db, "%s: moved inside the deadband", kind);
      } else {
        cr_assert(memcmp(before, a, n * sizeof *a) == 0);
      }
    }
    hs_free(t);
    hs_free(before);
    hs_free(tau);
    hs_free(pw);
    hs_free(g);
    hs_controller_destroy(c);
    hs_controller_destroy(twin);
  }
}

Test(policy_props, within_one_sample_of_the_exact_share) {
  /* ema 0 (the estimate is the last observation), deadband 0: when the floor
   * binds nobody, the allocation must be floor or ceil of B * (1/c_i) / sum(1/c) */
  size_t checked = 0;
  hs_rng r;
  hs_rng_init(&r, 12, 0, HS_RNG_BENCH);
  for (int trial = 0; trial < TRIALS; trial++) {
    size_t n = 1 + hs_rng_below(&r, 60);
    double w_e = floor(hs_rng_uniform(&r) * 5) / 4; /* 0, .25, .5, .75, 1 */
    hs_policy_config cfg;
    hs_error err = {0};
    hs_policy_config_init(&cfg, "adaptive", &err);
    char v[32];
    snprintf(v, sizeof v, "%g", w_e);
    cr_assert_eq(hs_policy_config_set(&cfg, "w_e", v, &err), HS_OK);
    cr_assert_eq(hs_policy_config_set(&cfg, "ema", "0", &err), HS_OK);
    cr_assert_eq(hs_policy_config_set(&cfg, "deadband", "0", &err), HS_OK);
    uint64_t fl = hs_rng_below(&r, 4);
    snprintf(v, sizeof v, "%llu", (unsigned long long)fl);
    cr_assert_eq(hs_policy_config_set(&cfg, "min_samples", v, &err), HS_OK);
    uint64_t budget = fl * n + 1 + hs_rng_below(&r, 100000);
    hs_controller *c = hs_controller_create(&cfg, n, NULL, budget, &err);
    cr_assert_not_null(c, "%s", err.msg);
    hs_telemetry *t = hs_malloc(n * sizeof *t);
    double *tau = hs_malloc(n * sizeof *tau), *eps = hs_malloc(n * sizeof *eps);
    double *s1 = hs_malloc(n * sizeof *s1), *s2 = hs_malloc(n * sizeof *s2);
    for (size_t i = 0; i < n; i++) {
      int64_t samples = 1 + (int64_t)hs_rng_below(&r, 500);
      tau[i] = 0.001 * exp(3 * hs_rng_uniform(&r));
      eps[i] = 0.01 * exp(3 * hs_rng_uniform(&r));
      t[i] = (hs_telemetry){tau[i] * (double)samples, eps[i] * (double)samples, samples};
      tau[i] = t[i].time_s / (double)samples; /* as the controller derives them */
      eps[i] = t[i].energy_j / (double)samples;
      s1[i] = tau[i];
      s2[i] = eps[i];
    }
    cr_assert_eq(hs_controller_update(c, t, n, &err), HS_OK, "%s", err.msg);
    double mt = median_sorted(s1, n), me = median_sorted(s2, n), wsum = 0;
    for (size_t i = 0; i < n; i++) {
      s1[i] = 1.0 / ((1 - w_e) * tau[i] / mt + w_e * eps[i] / me);
      wsum += s1[i];
    }
    const uint64_t *a = hs_controller_allocation(c);
    bool binds = false;
    for (size_t i = 0; i < n; i++) binds |= (double)budget * s1[i] / wsum < (double)fl;
    for (size_t i = 0; i < n; i++) {
      double exact = (double)budget * s1[i] / wsum;
      cr_assert_geq(a[i], fl);
      if (!binds)
        cr_assert_lt(fabs((double)a[i] - exact), 1.0 + 1e-9, "n=%zu i=%zu got %llu exact %.6f",
                     n, i, (unsigned long long)a[i], exact);
      else if (exact >= (double)fl)
        cr_assert_leq((double)a[i], exact + 1.0 + 1e-9); /* the floor only takes away */
    }
    checked += !binds;
    hs_free(t);
    hs_free(tau);
    hs_free(eps);
    hs_free(s1);
    hs_free(s2);
    hs_controller_destroy(c);
  }
  cr_expect_gt(checked, TRIALS / 4, "only %zu sets without a binding floor", checked);
}

/* The controller's scratch (c->w: weights, then remainders; medians; the
 * pair buffer; ema-batch's quotas in its carry) is shared by the groups of a
 * silo controller, one after another. Whatever one group leaves there must
 * not reach the next: a controller over interleaved silos decides exactly
 * as separate controllers, one per silo, given the silo budgets and
 * per-silo deadbands. One silo is past the remainder histogram's size,
 * the others small; tight budgets make floors pin. ema-batch: every step's
 * batches too. */
static void one_silo_vs_separate(const char *kind, uint64_t per, const char *floor_key) {
  enum { NG = 3, ROUNDS_S = 5 };
  const size_t sizes[NG] = {20000, 37, 1500}; /* silo g holds these many */
  size_t n = sizes[0] + sizes[1] + sizes[2];
  uint32_t *gid = hs_malloc(n * sizeof *gid);
  size_t *pos = hs_malloc(n * sizeof *pos), fill[NG] = {0};
  hs_rng r;
  hs_rng_init(&r, 77, 0, HS_RNG_BENCH);
  for (size_t i = 0; i < n; i++) { /* interleaved at random, sizes exact */
    size_t g;
    do g = hs_rng_below(&r, NG); while (fill[g] == sizes[g]);
    gid[i] = (uint32_t)(10 * g + 3);
    pos[i] = fill[g]++;
  }
  hs_policy_config cfg;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&cfg, kind, &err), HS_OK, "%s", err.msg);
  if (floor_key) cr_assert_eq(hs_policy_config_set(&cfg, "min_samples", floor_key, &err), HS_OK);
  bool steps = strcmp(kind, "ema-batch") == 0;
  if (steps) cfg.steps_per_round = 3;
  uint64_t budgets[NG], total = 0;
  double bands[NG];
  for (size_t g = 0; g < NG; g++) {
    budgets[g] = per * sizes[g] + g; /* not the proportional split */
    total += budgets[g];
    bands[g] = 0.02 * (double)(g + 1);
  }
  hs_controller *whole = hs_controller_create(&cfg, n, gid, total, &err);
  cr_assert_not_null(whole, "%s", err.msg);
  bool band = hs_policy_config_get(&cfg, "deadband", &(double){0}, &err) == HS_OK;
  cr_assert_eq(hs_controller_set_group_rules(whole, budgets, band ? bands : NULL, NG, &err), HS_OK,
               "%s", err.msg);
  hs_controller *part[NG];
  for (size_t g = 0; g < NG; g++) {
    hs_policy_config pc = cfg;
    if (band) {
      char v[32];
      snprintf(v, sizeof v, "%.17g", bands[g]);
      cr_assert_eq(hs_policy_config_set(&pc, "deadband", v, &err), HS_OK, "%s", err.msg);
    }
    part[g] = hs_controller_create(&pc, sizes[g], NULL, budgets[g], &err);
    cr_assert_not_null(part[g], "%s", err.msg);
  }
  double *tau = hs_malloc(n * sizeof *tau), *st = hs_malloc(n * sizeof *st);
  for (size_t i = 0; i < n; i++) tau[i] = 0.005 + 0.02 * hs_rng_uniform(&r);
  hs_telemetry *t = hs_calloc(n, sizeof *t), *tp[NG];
  double *sp[NG];
  for (size_t g = 0; g < NG; g++) {
    tp[g] = hs_calloc(sizes[g], sizeof *tp[g]);
    sp[g] = hs_calloc(sizes[g], sizeof *sp[g]);
  }
  for (int round = 0; round < ROUNDS_S; round++) {
    const uint64_t *a = hs_controller_allocation(whole);
    for (size_t i = 0; i < n; i++) {
      double noise = 1.0 + 0.1 * (2.0 * hs_rng_uniform(&r) - 1.0);
      t[i].samples = (int64_t)a[i];
      t[i].time_s = a[i] ? (double)a[i] * tau[i] * noise : 0.0;
      t[i].energy_j = t[i].time_s * (5.0 + (double)(i % 7));
      tp[gid[i] / 10][pos[i]] = t[i];
    }
    cr_assert_eq(hs_controller_update(whole, t, n, &err), HS_OK, "%s", err.msg);
    for (size_t g = 0; g < NG; g++)
      cr_assert_eq(hs_controller_update(part[g], tp[g], sizes[g], &err), HS_OK, "%s", err.msg);
    for (uint32_t s = 0; s < (steps ? cfg.steps_per_round : 1); s++) {
      const uint64_t *w =
          steps ? hs_controller_step_batches(whole) : hs_controller_allocation(whole);
      for (size_t i = 0; i < n; i++) {
        size_t g = gid[i] / 10;
        const uint64_t *pa = steps ? hs_controller_step_batches(part[g])
                                   : hs_controller_allocation(part[g]);
        cr_assert_eq(w[i], pa[pos[i]], "%s round %d step %u: participant %zu (silo %zu #%zu)",
                     kind, round, s, i, g, pos[i]);
      }
      if (!steps || s + 1 == cfg.steps_per_round) break;
      for (size_t i = 0; i < n; i++) {
        st[i] = (double)w[i] * tau[i] * (1.0 + 0.1 * hs_rng_uniform(&r));
        sp[gid[i] / 10][pos[i]] = st[i];
      }
      cr_assert_eq(hs_controller_step_update(whole, st, n, &err), HS_OK, "%s", err.msg);
      for (size_t g = 0; g < NG; g++)
        cr_assert_eq(hs_controller_step_update(part[g], sp[g], sizes[g], &err), HS_OK, "%s",
                     err.msg);
    }
  }
  for (size_t g = 0; g < NG; g++) {
    hs_controller_destroy(part[g]);
    hs_free(tp[g]);
    hs_free(sp[g]);
  }
  hs_controller_destroy(whole);
  hs_free(t);
  hs_free(tau);
  hs_free(st);
  hs_free(gid);
  hs_free(pos);
}

Test(policy_props, silos_decide_as_separate_controllers) {
  const char *kinds_s[] = {"adaptive", "time-only", "energy-only", "balanced", "static",
                           "ema-batch", "equal"};
  for (size_t k = 0; k < sizeof kinds_s / sizeof kinds_s[0]; k++) {
    one_silo_vs_separate(kinds_s[k], 100, NULL);
    one_silo_vs_separate(kinds_s[k], 3, NULL); /* ema-batch: a step of ~1 per rank */
    if (strcmp(kinds_s[k], "ema-batch") && strcmp(kinds_s[k], "equal"))
      one_silo_vs_separate(kinds_s[k], 3, "2"); /* floors pin the slow */
  }
}

/* Whatever way a policy hands over its split (a candidate array, a
 * candidate in the weights array, the allocation written in place, or no
 * candidate at all), hs_controller_reallocated says exactly whether the
 * allocation moved, and the allocation keeps the budget. Every kind, sizes
 * below and past the remainder histogram, rounds with and without samples
 * (an idle round: static waits, oort's utilities stand). */
Test(policy_props, reallocated_is_whether_the_allocation_moved) {
  const char *kinds_r[] = {"equal", "static", "adaptive", "time-only", "low-energy", "balanced",
                           "energy-only", "ema-batch", "oort"};
  size_t sizes[] = {9, 20000};
  hs_rng r;
  hs_rng_init(&r, 78, 0, HS_RNG_BENCH);
  for (size_t k = 0; k < sizeof kinds_r / sizeof kinds_r[0]; k++)
    for (size_t si = 0; si < 2; si++) {
      size_t n = sizes[si];
      uint64_t budget = 40 * (uint64_t)n + 3;
      hs_policy_config cfg;
      hs_error err = {0};
      cr_assert_eq(hs_policy_config_init(&cfg, kinds_r[k], &err), HS_OK, "%s", err.msg);
      hs_controller *c = hs_controller_create(&cfg, n, NULL, budget, &err);
      cr_assert_not_null(c, "%s", err.msg);
      uint64_t *prev = hs_malloc(n * sizeof *prev);
      hs_telemetry *t = hs_calloc(n, sizeof *t);
      bool moved_once = false;
      for (int round = 0; round < 8; round++) {
        const uint64_t *a = hs_controller_allocation(c);
        memcpy(prev, a, n * sizeof *prev);
        bool idle = round == 1;
        for (size_t i = 0; i < n; i++) {
          double tau = 0.01 * (1.0 + (double)(i % 5)) * (1.0 + 0.3 * hs_rng_uniform(&r));
          t[i].samples = idle ? 0 : (int64_t)a[i];
          t[i].time_s = t[i].samples ? (double)t[i].samples * tau : 0.0;
          t[i].energy_j = t[i].time_s * 3.0;
        }
        cr_assert_eq(hs_controller_update(c, t, n, &err), HS_OK, "%s", err.msg);
        a = hs_controller_allocation(c);
        bool differs = memcmp(prev, a, n * sizeof *prev) != 0;
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++) sum += a[i];
        cr_assert_eq(sum, budget, "%s n=%zu round %d", kinds_r[k], n, round);
        cr_assert_eq(hs_controller_reallocated(c), differs, "%s n=%zu round %d: reallocated %d",
                     kinds_r[k], n, round, hs_controller_reallocated(c));
        moved_once |= differs;
      }
      /* the test would pass vacuously if nothing ever moved */
      cr_assert_eq(moved_once, strcmp(kinds_r[k], "equal") != 0, "%s n=%zu", kinds_r[k], n);
      hs_free(prev);
      hs_free(t);
      hs_controller_destroy(c);
    }
}
