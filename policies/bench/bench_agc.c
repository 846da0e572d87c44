/* bench_agc.c: hs-bench-agc, the AGC planner's allocators: running time
 * against k at Z_res = 5k, the low-complexity (lag) allocator's gap to the
 * exact DP, and the residual error n^2/sum c^-1 against Z_res per allocator.
 *
 * Workload, the spec's (specs/agc.md sections 1-2): p_i = exp(-0.1 mu_i),
 * mu_i ~ U(0.01, 2) from a seeded hs_agc_rng stream (so p_i in [0.819, 0.999]),
 * n = k partitions, and D the public code's tuned constant for an average of
 * 5 residual bits: D = mean(p) (2^(7-1) - 1)^2 * 0.005 (omega at the average
 * 7 wire bits is 0.005 mean(p)), unless --d is given. Each timing is the
 * allocator call alone (CLOCK_MONOTONIC), repeated --reps times: min and
 * median of the wall clock, and the least process CPU time (the machine the
 * figures come from may be shared). Clocks are read here, never in the library. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policies/hs_agc.h"
#include "base/hs_alloc.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void usage(FILE *out) {
  fputs("usage: hs-bench-agc [--reps N] [--kmax K] [--full-dp] [--d D] [--errors-only]\n"
        "\n"
        "Times the AGC bit allocators at Z_res = 5k for k = 10, 100, 1000 (dp, and\n"
        "the unpruned O(k Z^2) dp with --full-dp) and up to 10^4 (lag, greedy,\n"
        "equal), min and median of N runs (default 3), with lag's gap to the DP in\n"
        "the objective F and in the residual error. Then prints the residual error\n"
        "n^2/sum c^-1 (units of ||g_bar||^2, offset 1) against Z_res for k = 50.\n"
        "p_i follow the spec's model; D is the public code's tuned constant unless\n"
        "--d is given.\n"
        "\n"
        "example:\n"
        "  hs-bench-agc --reps 3 --kmax 10000\n",
        out);
}

static void spec_p(size_t k, double *p) {
  hs_agc_rng r;
  hs_agc_rng_init(&r, 2026, k);
  for (size_t i = 0; i < k; i++) p[i] = exp(-0.1 * (0.01 + 1.99 * hs_agc_rng_uniform(&r)));
}

static double tuned_d(const double *p, size_t k) {
  double mean = 0.0;
  for (size_t i = 0; i < k; i++) mean += p[i];
  mean /= (double)k;
  return mean * 63.0 * 63.0 * 0.005;
}

/* R = n^2 / S with n = k and offset 1 */
static double residual(const double *p, size_t k, double d, const int64_t *b) {
  double S = 0.0;
  for (size_t i = 0; i < k; i++) {
    double om = hs_agc_omega(d, b[i] + 1);
    if (!isinf(om)) S += (1.0 - p[i]) / (p[i] + om);
  }
  return (double)k * (double)k / S;
}

typedef struct timing {
  double min_s, med_s, cpu_min_s, f, r;
  int ok;
} timing;

static timing run(int which, bool full, const double *p, size_t k, double d, int64_t z, int reps,
                  int64_t *b) {
  timing t = {0};
  double *ts = hs_malloc((size_t)reps * sizeof *ts);
  hs_error err = {0};
  for (int rep = 0; rep < reps; rep++) {
    double t0 = now_s(), c0 = cpu_s();
    hs_status st = full ? hs_agc_dp(p, k, d, z, false, b, &err)
                        : hs_agc_allocate((hs_agc_allocator)which, p, k, d, z, b, &err);
    ts[rep] = now_s() - t0;
    double c = cpu_s() - c0;
    if (rep == 0 || c < t.cpu_min_s) t.cpu_min_s = c;
    if (st != HS_OK) {
      fprintf(stderr, "hs-bench-agc: %s\n", err.msg);
      hs_free(ts);
      return t;
    }
  }
  qsort(ts, (size_t)reps, sizeof *ts, cmp_d);
  t.min_s = ts[0];
  t.med_s = ts[reps / 2];
  t.f = hs_agc_objective(p, k, d, b);
  t.r = residual(p, k, d, b);
  t.ok = 1;
  hs_free(ts);
  return t;
}

int main(int argc, char **argv) {
  int reps = 3;
  size_t kmax = 10000;
  bool full = false, errors_only = false;
  double dset = 0.0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--kmax") && i + 1 < argc) {
      kmax = (size_t)strtoull(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--d") && i + 1 < argc) {
      dset = strtod(argv[++i], NULL);
    } else if (!strcmp(argv[i], "--full-dp")) {
      full = true;
    } else if (!strcmp(argv[i], "--errors-only")) {
      errors_only = true;
    } else {
      fprintf(stderr, "hs-bench-agc: %s: unknown option (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (reps < 1 || reps > 100 || kmax < 10) {
    fputs("hs-bench-agc: --reps must be in [1, 100] and --kmax >= 10\n", stderr);
    return 2;
  }

  if (!errors_only) {
    printf("# allocator times at Z_res = 5k (p_i: spec model; D: %s), %d runs each\n",
           dset > 0 ? "--d" : "tuned", reps);
    printf("%-7s %-8s %-9s %12s %12s %12s %16s %14s\n", "k", "z_res", "allocator", "min_s",
           "median_s", "cpu_min_s", "objective_F", "residual_R");
    for (size_t k = 10; k <= kmax; k *= 10) {
      double *p = hs_malloc(k * sizeof *p);
      int64_t *b = hs_malloc(k * sizeof *b);
      spec_p(k, p);
      double d = dset > 0 ? dset : tuned_d(p, k);
      int64_t z = 5 * (int64_t)k;
      timing dp = {0};
      for (int which = -1; which < HS_AGC_NALLOCATORS; which++) {
        bool fulldp = which == -1;
        if (fulldp && !full) continue;
        if ((which == HS_AGC_DP || fulldp) && k > 1000) continue;
        timing t = run(fulldp ? 0 : which, fulldp, p, k, d, z, reps, b);
        if (!t.ok) continue;
        if (which == HS_AGC_DP) dp = t;
        printf("%-7zu %-8lld %-9s %12.6f %12.6f %12.6f %16.10g %14.8g", k, (long long)z,
               fulldp ? "dp-full" : hs_agc_allocator_name((hs_agc_allocator)which), t.min_s, t.med_s,
               t.cpu_min_s, t.f, t.r);
        if (dp.ok && which > HS_AGC_DP)
          printf("   gap to dp: F %.3g, R %.3g", (dp.f - t.f) / dp.f, (t.r - dp.r) / dp.r);
        printf("\n");
        fflush(stdout);
      }
      hs_free(p);
      hs_free(b);
    }
  }

  /* residual error against Z_res, k = 50 (the spec's experiment), fixed D */
  size_t k = 50;
  double p[50];
  int64_t b[50];
  spec_p(k, p);
  double d = dset > 0 ? dset : tuned_d(p, k);
  printf("\n# residual error n^2/sum c^-1 (units of ||g_bar||^2), k = n = 50, offset 1, D = %.6g\n", d);
  printf("%-8s", "z_res");
  for (int a = 0; a < HS_AGC_NALLOCATORS; a++) printf(" %14s", hs_agc_allocator_name((hs_agc_allocator)a));
  printf(" %14s\n", "lag_gap_R");
  const int64_t zs[] = {10, 25, 50, 100, 250, 500, 1000};
  for (size_t zi = 0; zi < sizeof zs / sizeof zs[0]; zi++) {
    printf("%-8lld", (long long)zs[zi]);
    double r[HS_AGC_NALLOCATORS];
    for (int a = 0; a < HS_AGC_NALLOCATORS; a++) {
      hs_error err = {0};
      if (hs_agc_allocate((hs_agc_allocator)a, p, k, d, zs[zi], b, &err) != HS_OK) {
        fprintf(stderr, "hs-bench-agc: %s\n", err.msg);
        return 1;
      }
      r[a] = residual(p, k, d, b);
      printf(" %14.8g", r[a]);
    }
    printf(" %14.3g\n", (r[HS_AGC_LAG] - r[HS_AGC_DP]) / r[HS_AGC_DP]);
  }

  /* lag's gap to the DP over random instances: spec p model with a random
   * seed per instance, D tuned or drawn log-uniform in [0.1, 1000] */
  printf("\n# lag's relative gap to the DP in R = n^2/sum c^-1, 100 instances per row\n");
  printf("%-6s %-10s %-12s %14s %14s %14s\n", "k", "z_res", "D", "lag_eq_dp", "mean_gap", "max_gap");
  const size_t ks[] = {10, 50, 200};
  hs_agc_rng g;
  hs_agc_rng_init(&g, 99, 0);
  for (size_t ki = 0; ki < 3; ki++) {
    size_t kk = ks[ki];
    double *pp = hs_malloc(kk * sizeof *pp);
    int64_t *bd = hs_malloc(kk * sizeof *bd), *bl = hs_malloc(kk * sizeof *bl);
    const double zf[] = {0.2, 1.0, 5.0};
    for (int zi = 0; zi < 3; zi++)
      for (int dmode = 0; dmode < 2; dmode++) {
        int64_t z = (int64_t)(zf[zi] * (double)kk);
        int same = 0;
        double mean = 0.0, mx = 0.0;
        for (int inst = 0; inst < 100; inst++) {
          for (size_t i = 0; i < kk; i++) pp[i] = exp(-0.1 * (0.01 + 1.99 * hs_agc_rng_uniform(&g)));
          double dd = dmode == 0 ? tuned_d(pp, kk) : exp(log(0.1) + log(1e4) * hs_agc_rng_uniform(&g));
          hs_error err = {0};
          if (hs_agc_allocate(HS_AGC_DP, pp, kk, dd, z, bd, &err) != HS_OK ||
              hs_agc_allocate(HS_AGC_LAG, pp, kk, dd, z, bl, &err) != HS_OK) {
            fprintf(stderr, "hs-bench-agc: %s\n", err.msg);
            return 1;
          }
          double rd = residual(pp, kk, dd, bd), rl = residual(pp, kk, dd, bl), gap = (rl - rd) / rd;
          same += memcmp(bd, bl, kk * sizeof *bd) == 0 || gap == 0.0;
          mean += gap / 100.0;
          if (gap > mx) mx = gap;
        }
        printf("%-6zu %-10lld %-12s %14d %14.3g %14.3g\n", kk, (long long)z,
               dmode == 0 ? "tuned" : "U_log[.1,1e3]", same, mean, mx);
      }
    hs_free(pp);
    hs_free(bd);
    hs_free(bl);
  }
  return 0;
}
