/* test_run_outputs.c: the run's outputs that scale (issue 13, split from
 * test_run.c): device_profiles.csv against devices.csv of the same run
 * (counts, sums and nearest-rank percentiles agree exactly, since every
 * number round-trips), the automatic threshold and the removal of the other
 * kind of file, and --trace-devices. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "traces/hs_outfile.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "base/hs_util.h"
#include "test_run_helpers.h"

/* --- outputs that scale (issue 13): device_profiles.csv against devices.csv
 * of the same run (counts, sums and nearest-rank percentiles agree exactly,
 * since every number round-trips), the automatic threshold and the removal of
 * the other kind of file, and --trace-devices. */

#define SCEN HS_SOURCE_DIR "/scenarios/testbed-mnist-pma.json"

/* The testbed (11 devices, 8 profiles) with 40 rpi4 of spread speeds and
 * 3 rounds: a profile with many devices, others with one or two. */
static hs_scenario *testbed(void) {
  hs_override ovr[4];
  static char kv[4][64] = {"devices[0].count=40", "devices[0].speed_spread=0.3", "rounds=3",
                           "policy.kind=time-only"}; /* parsed in place, kept for the scenario */
  hs_error err = {0};
  for (size_t i = 0; i < 4; i++) cr_assert_eq(hs_override_parse(kv[i], &ovr[i], &err), HS_OK);
  hs_scenario *sc = hs_scenario_load(SCEN, ovr, 4, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}

static bool exists(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

static void run_opts_to(const hs_scenario *sc, const char *dir, hs_run_opts o) {
  o.out_dir = dir;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, &o, NULL, &err), HS_OK, "%s", err.msg);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Nearest rank of sorted x[0..n): p0 the minimum. */
static double rank(const double *x, size_t n, unsigned pct) {
  size_t k = pct == 0 ? 0 : (pct * n + 99) / 100 - 1;
  return x[k];
}

Test(run_outputs, profiles_agree_with_the_per_device_rows) {
  hs_scenario *sc = testbed();
  char *a = tmpdir(), *b = tmpdir();
  run_opts_to(sc, a, (hs_run_opts){.devices = HS_DEVICES_FULL});
  run_opts_to(sc, b, (hs_run_opts){.devices = HS_DEVICES_PROFILES});
  cr_expect(!exists(b, "devices.csv") && exists(b, "device_profiles.csv"));
  char *dev = slurp(a, "devices.csv"), *agg = slurp(b, "device_profiles.csv");
  /* Same run: rounds.csv and summary.json figures are the same. */
  char *ra = slurp(a, "rounds.csv"), *rb = slurp(b, "rounds.csv");
  cr_expect_str_eq(ra, rb);
  size_t nrows = 0, ndev_rows = 0;
  char *save = NULL;
  char *line = strtok_r(agg, "\n", &save); /* header */
  cr_assert(strstr(line, "round,profile,count,samples,compute_s_p0,compute_s_p50") == line);
  while ((line = strtok_r(NULL, "\n", &save))) {
    unsigned round;
    char prof[64];
    unsigned long long count, samples;
    double v[3][5], energy;
    int got = sscanf(line,
                     "%u,%63[^,],%llu,%llu,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,"
                     "%lf,%lf,%lf",
                     &round, prof, &count, &samples, &v[0][0], &v[0][1], &v[0][2], &v[0][3],
                     &v[0][4], &v[1][0], &v[1][1], &v[1][2], &v[1][3], &v[1][4], &v[2][0],
                     &v[2][1], &v[2][2], &v[2][3], &v[2][4], &energy);
    cr_assert_eq(got, 20, "bad row %s", line);
    nrows++;
    /* The same (round, profile) in devices.csv, in file order. */
    double *x[3];
    for (int w = 0; w < 3; w++) x[w] = hs_calloc(64, sizeof(double));
    size_t n = 0;
    unsigned long long s_sum = 0;
    double e_sum = 0;
    char *copy = hs_strdup(dev), *s2 = NULL;
    strtok_r(copy, "\n", &s2);
    for (char *l = strtok_r(NULL, "\n", &s2); l; l = strtok_r(NULL, "\n", &s2)) {
      unsigned r;
      char name[64], p[64];
      unsigned long long smp;
      double c, m, wt, e;
      cr_assert_eq(sscanf(l, "%u,%63[^,],%llu,%lf,%lf,%lf,%lf,%63s", &r, name, &smp, &c, &m, &wt,
                          &e, p),
                   8, "bad row %s", l);
      if (r != round || strcmp(p, prof)) continue;
      cr_assert_lt(n, 64);
      x[0][n] = c;
      x[1][n] = m;
      x[2][n] = wt;
      n++;
      s_sum += smp;
      e_sum += e;
    }
    hs_free(copy);
    ndev_rows += n;
    cr_expect_eq(count, n, "round %u %s: count", round, prof);
    cr_expect_eq(samples, s_sum, "round %u %s: samples", round, prof);
    cr_expect_eq(energy, e_sum, "round %u %s: energy %.17g vs %.17g", round, prof, energy, e_sum);
    static const unsigned pct[5] = {0, 50, 90, 99, 100};
    for (int w = 0; w < 3; w++) {
      qsort(x[w], n, sizeof(double), cmp);
      for (int k = 0; k < 5; k++)
        cr_expect_eq(v[w][k], rank(x[w], n, pct[k]), "round %u %s: what %d p%u: %.17g vs %.17g",
                     round, prof, w, pct[k], v[w][k], rank(x[w], n, pct[k]));
      hs_free(x[w]);
    }
  }
  cr_expect_eq(nrows, 3 * 8, "3 rounds x 8 profiles");
  cr_expect_eq(ndev_rows, 3 * 49, "every device row is in one profile row");
  hs_free(dev);
  hs_free(agg);
  hs_free(ra);
  hs_free(rb);
  hs_free(a);
  hs_free(b);
  hs_scenario_destroy(sc);
}

Test(run_outputs, the_threshold_chooses_the_file_and_removes_the_other) {
  hs_scenario *sc = testbed(); /* 49 devices */
  char *d = tmpdir();
  run_opts_to(sc, d, (hs_run_opts){.devices_threshold = 48});
  cr_expect(exists(d, "device_profiles.csv") && !exists(d, "devices.csv"), "49 > 48");
  run_opts_to(sc, d, (hs_run_opts){.devices_threshold = 49});
  cr_expect(exists(d, "devices.csv") && !exists(d, "device_profiles.csv"),
            "49 <= 49, and the earlier device_profiles.csv is gone");
  run_opts_to(sc, d, (hs_run_opts){0});
  cr_expect(exists(d, "devices.csv"), "default threshold %d", HS_DEVICES_THRESHOLD);
  hs_free(d);
  hs_scenario_destroy(sc);
}

Test(run_outputs, trace_devices_traces_only_those) {
  hs_scenario *sc = testbed();
  char *d = tmpdir();
  run_opts_to(sc, d, (hs_run_opts){.trace_devices = "rpi4-3,ryzen"});
  char *t = slurp(d, "trace.json");
  size_t tracks = 0;
  for (const char *p = t; (p = strstr(p, "\"thread_name\"")); p++) tracks++;
  cr_expect_eq(tracks, 2);
  cr_expect(strstr(t, "{\"name\":\"rpi4-3\"}") && strstr(t, "{\"name\":\"ryzen\"}"));
  cr_expect(strstr(t, "\"ph\":\"X\""), "spans were written");
  hs_free(t);
  hs_run_opts o = {.out_dir = d, .trace_devices = "rpi4-3,nope"};
  hs_error err = {0};
  cr_expect_eq(hs_run(sc, &o, NULL, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "--trace-devices: no device \"nope\""), "%s", err.msg);
  o.trace_devices = "rpi4-3,,ryzen";
  cr_expect_eq(hs_run(sc, &o, NULL, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "empty item"), "%s", err.msg);
  hs_free(d);
  hs_scenario_destroy(sc);
}

/* --- the controller's communication telemetry (issue 24) ----------------------- */

/* Field k (0-based) of a CSV line without quotes, as a double. */
static double field(const char *line, int k) {
  const char *p = line;
  for (int j = 0; j < k && p; j++) p = strchr(p, ','), p = p ? p + 1 : NULL;
  cr_assert_not_null(p, "field %d of %s", k, line);
  return strtod(p, NULL);
}

/* Each device's comm_s of telemetry.csv per row (round, device order), and
 * the devices.csv comm_s beside it: the rows of both files match one to one. */
static size_t comm_rows(const char *dir, double *tele, double *dev, size_t cap) {
  char *t = slurp(dir, "telemetry.csv"), *d = slurp(dir, "devices.csv");
  char *st = NULL, *sd = NULL;
  char *lt = strtok_r(t, "\n", &st), *ld = strtok_r(d, "\n", &sd);
  cr_assert_str_eq(lt, "round,device,time_s,energy_j,samples,comm_s");
  cr_assert(strstr(ld, "round,device,samples,compute_s,comm_s,") == ld, "%s", ld);
  size_t n = 0;
  while ((lt = strtok_r(NULL, "\n", &st)) && (ld = strtok_r(NULL, "\n", &sd)) && n < cap) {
    tele[n] = field(lt, 5);
    dev[n] = field(ld, 4);
    n++;
  }
  free(t);
  free(d);
  return n;
}

/* PMA: the controller sees what the ledger saw, the download plus the upload
 * (devices.csv's comm_s), every round and device; a 20 Mbit/s board's is the
 * model's two transfers at that rate at least. */
Test(run_outputs, telemetry_comm_is_the_devices_comm) {
  hs_error err = {0};
  hs_override o;
  static char kv[] = "rounds=3";
  cr_assert_eq(hs_override_parse(kv, &o, &err), HS_OK);
  hs_scenario *sc =
      hs_scenario_load(HS_SOURCE_DIR "/devices/probe/bench/box-mnist-pma-5.json", &o, 1, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char *dir = tmpdir();
  run_opts_to(sc, dir, (hs_run_opts){0});
  double tele[64], dev[64];
  size_t n = comm_rows(dir, tele, dev, 64);
  cr_assert_eq(n, 15);
  for (size_t k = 0; k < n; k++) cr_expect_eq(tele[k], dev[k], "row %zu", k);
  /* b06 on l20: 2 x 407080 B at 20 Mbit/s = 0.3257 s, plus latencies */
  cr_expect_geq(tele[0], 2 * 407080 * 8 / 20e6, "%g", tele[0]);
  hs_scenario_destroy(sc);
}

/* hfl-ddp: a rank's round is its silo's lockstep, so every rank reports the
 * silo's communication, the leader's (its download and upload are waited for
 * by all); the leader's is its own devices.csv comm_s. Silos of the testbed:
 * rpi4-0..odroid (rows 0-4), jetson..lpi4a (5-8), n100, ryzen (9-10). */
Test(run_outputs, telemetry_comm_of_a_silo_is_the_leaders) {
  hs_error err = {0};
  hs_override o;
  static char kv[] = "rounds=3";
  cr_assert_eq(hs_override_parse(kv, &o, &err), HS_OK);
  hs_scenario *sc =
      hs_scenario_load(HS_SOURCE_DIR "/scenarios/testbed-mnist-hfl-ddp.json", &o, 1, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char *dir = tmpdir();
  run_opts_to(sc, dir, (hs_run_opts){0});
  double tele[64], dev[64];
  size_t n = comm_rows(dir, tele, dev, 64);
  cr_assert_eq(n, 33);
  static const size_t leader_of[11] = {0, 0, 0, 0, 0, 5, 5, 5, 5, 9, 9};
  for (size_t k = 0; k < n; k++) {
    size_t r = k / 11, lead = r * 11 + leader_of[k % 11];
    cr_expect_eq(tele[lead], dev[lead], "row %zu", lead);
    cr_expect(fabs(tele[k] - tele[lead]) <= 1e-9 * tele[lead], "row %zu: %.17g, leader %.17g", k,
              tele[k], tele[lead]);
    if (k != lead) cr_expect_gt(tele[k], dev[k], "row %zu: the silo's transfers added", k);
  }
  hs_scenario_destroy(sc);
}

/* fedasync: comm_s is per update (the mean download plus upload of the
 * updates that arrived in the window), so a board that trained reports at
 * least its two transfers at its access link's rate, and a board on a faster
 * link reports less than b06 on 20 Mbit/s. */
Test(run_outputs, telemetry_comm_in_fedasync_is_per_update) {
  hs_error err = {0};
  hs_override o[2];
  static char kv[2][64] = {"rounds=4", "regime={\"kind\": \"fedasync\"}"};
  for (size_t k = 0; k < 2; k++) cr_assert_eq(hs_override_parse(kv[k], &o[k], &err), HS_OK);
  hs_scenario *sc =
      hs_scenario_load(HS_SOURCE_DIR "/devices/probe/bench/box-mnist-pma-5.json", o, 2, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char *dir = tmpdir();
  run_opts_to(sc, dir, (hs_run_opts){0});
  char *t = slurp(dir, "telemetry.csv");
  static const double mbps[5] = {20, 50, 100, 150, 200};
  char *save = NULL, *line = strtok_r(t, "\n", &save);
  size_t rows = 0;
  while ((line = strtok_r(NULL, "\n", &save))) {
    size_t i = rows++ % 5;
    double samples = field(line, 4), comm = field(line, 5);
    if (samples == 0) continue;
    double floor_s = 2 * 407080 * 8 / (mbps[i] * 1e6);
    cr_expect_geq(comm, floor_s, "row %zu: %g", rows, comm);
    cr_expect_lt(comm, 3 * floor_s + 0.1, "row %zu: %g is more than one update's", rows, comm);
  }
  cr_expect_eq(rows, 20);
  free(t);
  hs_scenario_destroy(sc);
}
