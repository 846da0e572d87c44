/* bench_controller.c: hs-bench-controller, the cost of one controller update
 * for 11, 10^3, 10^5 and 10^6 participants (the target: 10^6 in <= 25 ms of
 * CPU for every policy, issue 13).
 *
 * For each size: a controller with budget 100 samples per participant, then
 * `reps` rounds of synthetic telemetry (per-sample time uniform in [5, 25] ms,
 * power uniform in [5, 15] W, 5 % noise per round, drawn from hs_rng streams so
 * the workload is the same on every run). Only hs_controller_update is timed
 * (CLOCK_MONOTONIC); the telemetry is built outside the timed region. The median
 * is reported because the first rounds (EMA warm-up, bigger reallocation) and
 * page faults make the mean misleading. The wall clock is read here, in the
 * benchmark, never in the library. --cpu-time reads the thread's CPU clock
 * instead (CLOCK_THREAD_CPUTIME_ID): on a machine shared with other jobs the
 * wall clock also counts the time this thread waited for a core. --digest
 * adds a column: a 64-bit FNV-1a hash of every allocation after every update
 * of that size, so two builds can be shown to decide identically (compare the
 * column of an old and a new build). --participants, --budget, --groups,
 * --telemetry-seed and (for a step-level kind) the step updates it then
 * makes and hashes widen what such a comparison covers: one size, a tight
 * budget (floors pin participants), silos, other workloads. */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hs_alloc.h"
#include "policies/hs_policy.h"
#include "base/hs_rng.h"

static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(bench_clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* FNV-1a over the bytes of n allocations, continuing from h */
static uint64_t fnv1a(uint64_t h, const uint64_t *a, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (int b = 0; b < 64; b += 8) {
      h ^= (a[i] >> b) & 0xff;
      h *= 0x100000001b3ULL;
    }
  return h;
}

static bool parse_u64(const char *opt, const char *arg, uint64_t *v) {
  char *end;
  *v = strtoull(arg, &end, 10);
  if (*end || end == arg || *arg == '-') {
    fprintf(stderr, "hs-bench-controller: %s: \"%s\" is not a number\n", opt, arg);
    return false;
  }
  return true;
}

static void usage(FILE *out) {
  fputs("usage: hs-bench-controller [--policy NAME] [--max-participants N] [--cpu-time]\n"
        "                           [--set KEY=VALUE]... [--digest] [--participants N]\n"
        "                           [--budget B] [--groups G] [--telemetry-seed S]\n"
        "\n"
        "Times one controller update (hs_controller_update) for 11, 10^3, 10^5 and\n"
        "10^6 participants and prints one row per size: participants, rounds timed,\n"
        "median/min/max update time in ms, median ns per participant, and the median\n"
        "as a fraction of a 60 s round. Default policy: balanced. --cpu-time times\n"
        "with the thread's CPU clock instead of the wall clock (a shared machine).\n"
        "--set sets a key of the policy (e.g. --set oort_k=100), as a scenario would.\n"
        "--digest adds a column: a hash of every allocation of every timed update\n"
        "(equal digests: two builds decided identically); for a step-level kind\n"
        "with steps_per_round S > 1 it also makes S-1 step updates per round and\n"
        "hashes every step's batches. --participants N times that one size only;\n"
        "--budget B gives B samples per participant (100); --groups G puts\n"
        "participant i in silo i mod G (0: no groups); --telemetry-seed S draws\n"
        "another workload (42).\n"
        "\n"
        "example:\n"
        "  hs-bench-controller --policy time-only\n",
        out);
}

int main(int argc, char **argv) {
  const char *policy = "balanced";
  bool digest = false;
  enum { MAX_SETS = 16 };
  const char *sets[MAX_SETS];
  size_t nsets = 0;
  size_t maxn = 1000000;
  uint64_t only_n = 0, per = 100, ngroups = 0, tseed = 42;
  static const struct option longs[] = {
      {"help", no_argument, NULL, 'h'},
      {"policy", required_argument, NULL, 'p'},
      {"max-participants", required_argument, NULL, 'm'},
      {"cpu-time", no_argument, NULL, 'c'},
      {"digest", no_argument, NULL, 'd'},
      {"set", required_argument, NULL, 's'},
      {"participants", required_argument, NULL, 'n'},
      {"budget", required_argument, NULL, 'b'},
      {"groups", required_argument, NULL, 'g'},
      {"telemetry-seed", required_argument, NULL, 't'},
      {NULL, 0, NULL, 0},
  };
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
    if (ch == 'h') {
      usage(stdout);
      return 0;
    } else if (ch == 's') {
      if (nsets == MAX_SETS || !strchr(optarg, '=')) {
        fprintf(stderr, "hs-bench-controller: --set: \"%s\" is not KEY=VALUE (at most %d)\n",
                optarg, MAX_SETS);
        return 2;
      }
      sets[nsets++] = optarg;
    } else if (ch == 'n' || ch == 'b' || ch == 'g' || ch == 't') {
      uint64_t *dst = ch == 'n' ? &only_n : ch == 'b' ? &per : ch == 'g' ? &ngroups : &tseed;
      if (!parse_u64(argv[optind - 1], optarg, dst)) return 2;
      if (ch == 'n' && only_n == 0) {
        fprintf(stderr, "hs-bench-controller: --participants: need at least 1\n");
        return 2;
      }
    } else if (ch == 'd') {
      digest = true;
    } else if (ch == 'c') {
      bench_clock = CLOCK_THREAD_CPUTIME_ID;
    } else if (ch == 'p') {
      policy = optarg;
    } else if (ch == 'm') {
      char *end;
      maxn = strtoull(optarg, &end, 10);
      if (*end || end == optarg) {
        fprintf(stderr, "hs-bench-controller: --max-participants: \"%s\" is not a number\n",
                optarg);
        return 2;
      }
    } else {
      fprintf(stderr, "hs-bench-controller: %s: %s (see --help)\n", argv[optind - 1],
              ch == ':' ? "missing value" : "unknown option");
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "hs-bench-controller: %s: unexpected argument (see --help)\n", argv[optind]);
    return 2;
  }
  hs_error cerr = {0};
  hs_policy_config cfg;
  if (hs_policy_config_init(&cfg, policy, &cerr) != HS_OK) {
    fprintf(stderr, "hs-bench-controller: --policy: %s\n", cerr.msg);
    return 2;
  }
  for (size_t q = 0; q < nsets; q++) {
    char key[64];
    size_t kl = (size_t)(strchr(sets[q], '=') - sets[q]);
    snprintf(key, sizeof key, "%.*s", (int)kl, sets[q]);
    if (hs_policy_config_set(&cfg, key, sets[q] + kl + 1, &cerr) != HS_OK) {
      fprintf(stderr, "hs-bench-controller: --set %s: %s\n", sets[q], cerr.msg);
      return 2;
    }
  }
  size_t sizes[] = {11, 1000, 100000, 1000000};
  int reps[] = {2001, 501, 41, 21};
  size_t nsizes = sizeof sizes / sizeof sizes[0];
  if (only_n) {
    reps[0] = only_n <= 11 ? 2001 : only_n <= 1000 ? 501 : only_n <= 100000 ? 41 : 21;
    sizes[0] = (size_t)only_n;
    nsizes = 1;
    maxn = (size_t)only_n;
  }
  bool steps = (hs_policy_caps(policy) & HS_POLICY_CAP_STEP_LEVEL) && cfg.steps_per_round > 1;
  printf("policy %s\n", policy);
  printf("%12s %6s %16s %13s %13s %22s %24s", "participants", "rounds", "update_median_ms",
         "update_min_ms", "update_max_ms", "median_ns_per_participant", "median_fraction_of_60s_round");
  if (digest) printf("%17s", "digest");
  printf("\n");
  for (size_t s = 0; s < nsizes; s++) {
    size_t n = sizes[s];
    if (n > maxn) break;
    hs_error err = {0};
    uint32_t *gid = NULL;
    if (ngroups) {
      gid = hs_calloc(n, sizeof *gid);
      for (size_t i = 0; i < n; i++) gid[i] = (uint32_t)(i % ngroups);
    }
    hs_controller *c = hs_controller_create(&cfg, n, gid, per * (uint64_t)n, &err);
    hs_free(gid);
    if (!c) {
      fprintf(stderr, "hs-bench-controller: %s\n", err.msg);
      return 2;
    }
    double *tau = hs_calloc(n, sizeof *tau), *pw = hs_calloc(n, sizeof *pw);
    hs_rng r;
    hs_rng_init(&r, tseed, 0, HS_RNG_BENCH);
    for (size_t i = 0; i < n; i++) {
      tau[i] = 0.005 + 0.020 * hs_rng_uniform(&r);
      pw[i] = 5.0 + 10.0 * hs_rng_uniform(&r);
    }
    hs_telemetry *t = hs_calloc(n, sizeof *t);
    double *sdt = steps && digest ? hs_calloc(n, sizeof *sdt) : NULL;
    double *dt = hs_calloc((size_t)reps[s], sizeof *dt);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int k = 0; k < reps[s]; k++) {
      const uint64_t *a = hs_controller_allocation(c);
      for (size_t i = 0; i < n; i++) {
        double noise = 1.0 + 0.05 * (2.0 * hs_rng_uniform(&r) - 1.0);
        t[i].samples = (int64_t)a[i];
        t[i].time_s = a[i] ? (double)a[i] * tau[i] * noise : 0.0;
        t[i].energy_j = t[i].time_s * pw[i];
      }
      double t0 = now_s();
      if (hs_controller_update(c, t, n, &err) != HS_OK) {
        fprintf(stderr, "hs-bench-controller: %s\n", err.msg);
        return 1;
      }
      dt[k] = now_s() - t0;
      if (digest) h = fnv1a(h, hs_controller_allocation(c), n);
      for (uint32_t st = 1; steps && digest && st < cfg.steps_per_round; st++) {
        const uint64_t *b = hs_controller_step_batches(c);
        h = fnv1a(h, b, n);
        for (size_t i = 0; i < n; i++) {
          double noise = 1.0 + 0.05 * (2.0 * hs_rng_uniform(&r) - 1.0);
          sdt[i] = (double)b[i] * tau[i] * noise;
        }
        if (hs_controller_step_update(c, sdt, n, &err) != HS_OK) {
          fprintf(stderr, "hs-bench-controller: %s\n", err.msg);
          return 1;
        }
      }
    }
    qsort(dt, (size_t)reps[s], sizeof *dt, cmp_d);
    double med = dt[reps[s] / 2];
    printf("%12zu %6d %16.4f %13.4f %13.4f %22.1f %24.3e", n, reps[s], 1e3 * med, 1e3 * dt[0],
           1e3 * dt[reps[s] - 1], 1e9 * med / (double)n, med / 60.0);
    if (digest) printf(" %016llx", (unsigned long long)h);
    printf("\n");
    fflush(stdout);
    hs_free(dt);
    hs_free(t);
    hs_free(sdt);
    hs_free(tau);
    hs_free(pw);
    hs_controller_destroy(c);
  }
  return 0;
}
