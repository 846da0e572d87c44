/* test_meter.c: the meter scopes of a run's energy (issue 25; hs_run.h,
 * group "meter"): wall (energy_j), the idle baseline (each device's idle
 * power x its seconds on), above-idle (wall minus the baseline) and
 * training-only (what the devices' meters reported to the controller).
 *
 * Closed forms on the synthetic boards of tests/data/run/profiles (busy 10 W,
 * comm 3 W, idle 2 W; tau_cv 0; links fast enough to be negligible), then a
 * property over shipped testbed runs: per device, from devices.csv and the
 * profiles' idle powers, wall = above-idle + baseline, and training <= wall;
 * summed, the summary's figures. Per device training is known from outside
 * only where the regime's meter is the ledger's busy energy (pma, and the
 * boards that switch off); for the regimes with a meter hook of their own
 * (ddp, hfl-ddp, fedasync) the summary's training-only is checked against the
 * busy energy, which bounds every device's reading. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "devices/hs_profile.h"
#include "sim/hs_metrics.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "test_run_helpers.h"

#define DATA HS_SOURCE_DIR "/tests/data/run"

static hs_scenario *tiny(const char *policy, bool meter, bool off) {
  hs_override ovr[2];
  size_t n = 0;
  if (meter) ovr[n++] = (hs_override){"report", "{\"meter_scopes\": true}"};
  if (off) ovr[n++] = (hs_override){"switch_off_unselected", "true"};
  char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"meter\", \"seed\": 3, \"task\": \"mnist\", \"model_bytes\": 1,"
           " \"rounds\": 3, \"samples_per_round\": 3000, \"regime\": {\"kind\": \"pma\"},"
           " \"policy\": %s,"
           " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\"},"
           "  {\"name\": \"mid\", \"profile\": \"profiles/det-mid.json\"},"
           "  {\"name\": \"slow\", \"profile\": \"profiles/det-slow.json\"}],"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0}}}}",
           policy);
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "meter.json", DATA, ovr, n, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}

/* Equal PMA, 3 rounds of 1000 samples each: busy 1.5, 2.25 and 4.0 s per
 * round (tau x 1000 + overhead), every board on for the 12 s window. */
Test(meter, closed_form_of_each_scope) {
  hs_scenario *sc = tiny("{\"kind\": \"equal\"}", true, false);
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_assert(hs_metric_reported(&s, "meter"));
  double busy = 3 * (1.5 + 2.25 + 4.0);            /* 23.25 s */
  cr_assert_float_eq(s.makespan_s, 12.0, 1e-6);
  cr_expect_float_eq(s.energy_idle_baseline_j, 2.0 * 3 * 12.0, 1e-4); /* 72 J */
  /* (10 - 2) W over the busy seconds; comm (3 - 2) W over ~0 s */
  cr_expect_float_eq(s.energy_above_idle_j, 8.0 * busy, 1e-3);     /* 186 J */
  cr_expect_float_eq(s.energy_training_j, 10.0 * busy, 1e-4);      /* 232.5 J */
  cr_expect_float_eq(s.energy_j, s.energy_above_idle_j + s.energy_idle_baseline_j,
                     1e-9 * s.energy_j);
  cr_expect_leq(s.energy_training_j, s.energy_j);
  hs_scenario_destroy(sc);
}

/* Without report.meter_scopes the group is not reported: NAN figures, no
 * summary.json field (so every golden keeps its bytes). */
Test(meter, off_unless_asked) {
  hs_scenario *sc = tiny("{\"kind\": \"equal\"}", false, false);
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_expect(!hs_metric_reported(&s, "meter"));
  cr_expect(isnan(s.energy_above_idle_j) && isnan(s.energy_idle_baseline_j) &&
            isnan(s.energy_training_j));
  hs_report_field f[HS_METRIC_MAX];
  size_t n = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  for (size_t i = 0; i < n; i++) cr_expect(strncmp(f[i].key, "energy_above", 12), "%s", f[i].key);
  char needs[160];
  cr_assert_gt(hs_metric_needs(hs_metric_find("energy_training_j"), needs, sizeof needs), 0);
  cr_expect(strstr(needs, "report.meter_scopes") != NULL, "%s", needs);
  hs_scenario_destroy(sc);
}

/* --- per device, from devices.csv --------------------------------------------- */

typedef struct dev_sum {
  double on_s, compute_s, wall_j;
} dev_sum;

/* Per device (rows come in device order each round): seconds on, busy
 * seconds and joules, summed over rounds. */
static void per_device(const char *dir, dev_sum *d, size_t ndev) {
  char *t = slurp(dir, "devices.csv");
  char *save = NULL;
  char *line = strtok_r(t, "\n", &save); /* header */
  cr_assert_str_eq(line, "round,device,samples,compute_s,comm_s,wait_s,energy_j,profile");
  size_t row = 0;
  while ((line = strtok_r(NULL, "\n", &save))) {
    unsigned round;
    unsigned long long n;
    char name[80];
    double c, m, w, e;
    cr_assert_eq(sscanf(line, "%u,%79[^,],%llu,%lf,%lf,%lf,%lf", &round, name, &n, &c, &m, &w, &e),
                 7, "bad row %s", line);
    dev_sum *x = &d[row++ % ndev];
    x->on_s += c + m + w;
    x->compute_s += c;
    x->wall_j += e;
  }
  hs_free(t);
}

/* The scenario entry of expanded device k. */
static const hs_device_spec *entry_of(const hs_scenario *sc, size_t k) {
  for (size_t s = 0; s < sc->ndevices; s++)
    if (k >= sc->devices[s].first && k < sc->devices[s].first + sc->devices[s].count)
      return &sc->devices[s];
  cr_assert_fail("device %zu in no entry", k);
  return NULL;
}

/* A run's scopes against its devices.csv: per device, wall = above-idle +
 * baseline, and (when the meter is the ledger's busy energy) training <=
 * wall; summed, the summary's figures. Returns the summary. */
static hs_summary check_run(hs_scenario *sc, bool busy_meter) {
  char *dir = tmpdir();
  hs_run_opts o = {.out_dir = dir, .devices = HS_DEVICES_FULL};
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, &o, &s, &err), HS_OK, "%s", err.msg);
  cr_assert(hs_metric_reported(&s, "meter"));
  size_t ndev = sc->total_devices;
  dev_sum *d = hs_calloc(ndev, sizeof *d);
  per_device(dir, d, ndev);
  double base = 0, above = 0, wall = 0, train = 0;
  for (size_t k = 0; k < ndev; k++) {
    const hs_device_spec *e = entry_of(sc, k);
    double idle_w = hs_profile_idle_w(e->profile);
    double b = idle_w * d[k].on_s, a = d[k].wall_j - b;
    cr_expect_geq(a, -1e-6 * d[k].wall_j, "device %zu: above-idle %g < 0", k, a);
    if (busy_meter) {
      double t = hs_profile_task(e->profile, sc->task)->busy_w * d[k].compute_s;
      cr_expect_leq(t, d[k].wall_j * (1 + 1e-9), "device %zu: training %g > wall %g", k, t,
                    d[k].wall_j);
      train += t;
    }
    base += b;
    above += a;
    wall += d[k].wall_j;
  }
  /* devices.csv prints %.10g: sums agree to its digits */
  cr_expect_float_eq(s.energy_idle_baseline_j, base, 1e-7 * s.energy_j);
  cr_expect_float_eq(s.energy_above_idle_j, above, 1e-7 * s.energy_j);
  cr_expect_float_eq(s.energy_j, wall, 1e-7 * s.energy_j);
  cr_expect_float_eq(s.energy_j, s.energy_above_idle_j + s.energy_idle_baseline_j,
                     1e-9 * s.energy_j);
  if (busy_meter) cr_expect_float_eq(s.energy_training_j, train, 1e-7 * s.energy_j);
  cr_expect_leq(s.energy_training_j, s.compute_j * (1 + 1e-12), "training <= busy energy");
  cr_expect_leq(s.energy_training_j, s.energy_j);
  cr_expect_gt(s.energy_training_j, 0);
  hs_free(d);
  hs_free(dir);
  return s;
}

/* Boards that switch off are on for less than the window: their baseline
 * counts the seconds on only. */
Test(meter, switched_off_boards_count_their_seconds_on) {
  hs_scenario *sc = tiny("{\"kind\": \"oort\", \"oort_k\": 1}", true, true);
  hs_summary s = check_run(sc, true);
  cr_expect_lt(s.energy_idle_baseline_j, 2.0 * 3 * s.makespan_s - 1, "some board was off");
  hs_scenario_destroy(sc);
}

static hs_scenario *shipped(const char *file, const char *policy) {
  char path[512];
  snprintf(path, sizeof path, "%s/scenarios/%s", HS_SOURCE_DIR, file);
  hs_override ovr[] = {{"report", "{\"meter_scopes\": true}"}, {"policy.kind", policy}};
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_load(path, ovr, 2, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}

Test(meter, testbed_pma_per_device, .timeout = 120) {
  static const char *const policies[] = {"equal", "time-only", "balanced", "energy-only"};
  for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
    hs_scenario *sc = shipped("testbed-mnist-pma.json", policies[p]);
    check_run(sc, true);
    hs_scenario_destroy(sc);
  }
}

/* Regimes whose meter is a hook of their own: training-only <= busy <= wall. */
Test(meter, testbed_other_regimes, .timeout = 120) {
  static const char *const files[] = {"testbed-mnist-ddp.json", "testbed-era5-hfl-ddp.json",
                                      "testbed-mnist-pma-dynamic.json"};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    hs_scenario *sc = shipped(files[f], "time-only");
    check_run(sc, false);
    hs_scenario_destroy(sc);
  }
}
