/* test_run.c: whole runs of the regimes against closed forms and invariants.
 *
 * Deterministic synthetic profiles (tests/data/run/profiles, tau_cv = 0) and
 * links fast enough to be negligible make every figure computable by hand:
 *   det-fast: tau 1 ms, overhead 0.5 s;  det-mid: 2 ms, 0.25 s;  det-slow: 4 ms, 0 s
 *   busy 10 W, comm 3 W, idle 2 W for all three.
 * The outputs that scale (device_profiles.csv, the threshold, --trace-devices)
 * are in test_run_outputs.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "traces/hs_outfile.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "base/hs_util.h"
#include "test_run_helpers.h"

#define DATA HS_SOURCE_DIR "/tests/data/run"

/* A 3-device scenario, with overrides (`extra`: "key=value", or NULL). */
static hs_scenario *scenario(const char *regime, const char *policy, const char *extra,
                             uint32_t rounds, uint64_t budget) {
  hs_override ovr[4];
  size_t novr = 0;
  char buf[256];
  if (extra) {
    snprintf(buf, sizeof buf, "%s", extra);
    for (char *save = NULL, *kv = strtok_r(buf, " ", &save); kv && novr < 4;
         kv = strtok_r(NULL, " ", &save)) {
      hs_error perr = {0};
      cr_assert_eq(hs_override_parse(kv, &ovr[novr++], &perr), HS_OK, "%s", perr.msg);
    }
  }
  char text[4096];
  snprintf(text, sizeof text,
           "{\"name\": \"closed-form\", \"seed\": 3, \"task\": \"mnist\", \"model_bytes\": 1,"
           " \"rounds\": %u, \"samples_per_round\": %llu, \"regime\": %s, \"policy\": %s,"
           " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\"},"
           "  {\"name\": \"mid\", \"profile\": \"profiles/det-mid.json\"},"
           "  {\"name\": \"slow\", \"profile\": \"profiles/det-slow.json\"}],"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0}}}}",
           rounds, (unsigned long long)budget, regime, policy);
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "closed-form.json", DATA, ovr, novr, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}


/* devices.csv parsed: up to 64 rows. */
typedef struct drow {
  unsigned round;
  char device[32];
  unsigned long long samples;
  double compute_s, comm_s, wait_s, energy_j;
} drow;

static size_t read_devices(const char *dir, drow *rows, size_t cap) {
  char *t = slurp(dir, "devices.csv");
  size_t n = 0;
  char *save = NULL;
  char *line = strtok_r(t, "\n", &save); /* header */
  cr_assert_str_eq(line, "round,device,samples,compute_s,comm_s,wait_s,energy_j,profile");
  while ((line = strtok_r(NULL, "\n", &save)) && n < cap) {
    drow *r = &rows[n++];
    cr_assert_eq(sscanf(line, "%u,%31[^,],%llu,%lf,%lf,%lf,%lf", &r->round, r->device, &r->samples,
                        &r->compute_s, &r->comm_s, &r->wait_s, &r->energy_j),
                 7, "bad row %s", line);
  }
  hs_free(t);
  return n;
}

/* Run sc into dir (a trace too when asked); the summary, when out is given. */
static void run_to(const hs_scenario *sc, const char *dir, bool trace, hs_summary *out) {
  hs_run_opts o = {.out_dir = dir, .trace = trace};
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, &o, out, &err), HS_OK, "%s", err.msg);
}

static double device_power(const char *name, int which) {
  (void)name;
  static const double w[3] = {10.0, 3.0, 2.0}; /* busy, comm, idle */
  return w[which];
}

Test(run, equal_pma_makespan_is_the_slowest_share_plus_overhead) {
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}", NULL, 3, 3000);
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  /* 1000 samples each: fast 0.5 + 1.0, mid 0.25 + 2.0, slow 0 + 4.0 -> 4.0 s per round */
  cr_assert_float_eq(s.makespan_s, 12.0, 1e-6);
  double busy = 3 * (1.5 + 2.25 + 4.0);
  cr_assert_float_eq(s.compute_j, 10.0 * busy, 1e-4);
  cr_assert_float_eq(s.idle_j, 2.0 * (3 * 12.0 - busy), 1e-3);
  cr_assert_lt(s.comm_j, 1e-3);
  cr_assert_float_eq(s.energy_j, s.compute_j + s.comm_j + s.idle_j, 1e-9);
  cr_assert_eq(s.samples, 9000);
  /* CV of (1.5, 2.25, 4.0) */
  double m = 7.75 / 3, v = (1.5 * 1.5 + 2.25 * 2.25 + 16.0) / 3 - m * m;
  cr_assert_float_eq(s.compute_cv, sqrt(v) / m, 1e-9);
  cr_assert(isnan(s.controller_overhead_fraction), "not measured unless asked");
  hs_scenario_destroy(sc);
}

Test(run, time_only_converges_to_inverse_tau_shares) {
  /* overhead 0 everywhere (task era5 of the synthetic profiles) */
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"time-only\"}",
                             "task=era5", 4, 3000);
  char *dir = tmpdir();
  hs_summary s;
  run_to(sc, dir, false, &s);
  drow rows[64];
  size_t n = read_devices(dir, rows, 64);
  cr_assert_eq(n, 12);
  /* exact shares 3000 * (4, 2, 1)/7 = 1714.29, 857.14, 428.57 */
  double want[3] = {3000 * 4.0 / 7, 3000 * 2.0 / 7, 3000 * 1.0 / 7};
  for (size_t k = 9; k < 12; k++) {
    cr_assert_eq(rows[k].round, 3);
    cr_expect_leq(fabs((double)rows[k].samples - want[k - 9]), 1.0, "%s: %llu", rows[k].device,
                  rows[k].samples);
  }
  /* round 0 (equal, 1000 each) ends with the slow device at 4.0 s; the three
   * converged rounds end with it again at 429 * 4 ms = 1.716 s */
  cr_assert_float_eq(s.makespan_s, 4.0 + 3 * 1.716, 1e-6);
  hs_free(dir);
  hs_scenario_destroy(sc);
}

Test(run, energy_rows_match_power_times_time_and_the_ledger_totals) {
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"balanced\"}",
                             "network.links.lan.bandwidth_mbps=10 network.links.lan.latency_ms=5", 5, 3000);
  char *dir = tmpdir();
  hs_summary s;
  run_to(sc, dir, false, &s);
  drow rows[64];
  size_t n = read_devices(dir, rows, 64);
  cr_assert_eq(n, 15);
  double sum = 0, comm = 0;
  for (size_t k = 0; k < n; k++) {
    double e = device_power(rows[k].device, 0) * rows[k].compute_s +
               device_power(rows[k].device, 1) * rows[k].comm_s +
               device_power(rows[k].device, 2) * rows[k].wait_s;
    cr_expect_float_eq(rows[k].energy_j, e, 1e-6 * e + 1e-6, "row %zu", k);
    sum += rows[k].energy_j;
    comm += rows[k].comm_s;
  }
  cr_assert_gt(comm, 0.0, "the 10 Mbit/s link makes transfers visible");
  cr_assert_float_eq(s.energy_j, sum, 1e-6 * sum);
  char *summary = slurp(dir, "summary.json");
  cr_assert(strstr(summary, "\"policy\": \"balanced\""));
  cr_assert(strstr(summary, "\"makespan_s\": "));
  hs_free(summary);
  hs_free(dir);
  hs_scenario_destroy(sc);
}

Test(run, same_scenario_and_seed_give_byte_identical_outputs) {
  hs_error err = {0};
  hs_scenario *sc =
      hs_scenario_load(HS_SOURCE_DIR "/scenarios/testbed-mnist-pma.json", NULL, 0, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char *a = tmpdir(), *b = tmpdir();
  run_to(sc, a, true, NULL);
  run_to(sc, b, true, NULL);
  const char *files[] = {"summary.json", "rounds.csv", "devices.csv", "trace.json"};
  for (int i = 0; i < 4; i++) {
    char *x = slurp(a, files[i]), *y = slurp(b, files[i]);
    cr_expect_str_eq(x, y, "%s differs", files[i]);
    hs_free(x);
    hs_free(y);
  }
  /* a different seed changes the noise, hence the figures */
  hs_override ovr = {"seed", "2"};
  hs_scenario *sc2 =
      hs_scenario_load(HS_SOURCE_DIR "/scenarios/testbed-mnist-pma.json", &ovr, 1, &err);
  char *c = tmpdir();
  run_to(sc2, c, false, NULL);
  char *x = slurp(a, "rounds.csv"), *z = slurp(c, "rounds.csv");
  cr_expect_str_neq(x, z);
  hs_free(x);
  hs_free(z);
  hs_free(a);
  hs_free(b);
  hs_free(c);
  hs_scenario_destroy(sc);
  hs_scenario_destroy(sc2);
}

static double ddp_cv(const char *policy) {
  hs_override ovr[2] = {{"policy.kind", policy}, {"rounds", "4"}};
  hs_error err = {0};
  hs_scenario *sc =
      hs_scenario_load(HS_SOURCE_DIR "/scenarios/testbed-mnist-ddp.json", ovr, 2, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char *dir = tmpdir();
  run_to(sc, dir, false, NULL);
  /* the CV of the last round, once the controller has converged */
  char *t = slurp(dir, "rounds.csv");
  char *last = strrchr(t, '\n');
  *last = '\0';
  last = strrchr(t, '\n') + 1;
  unsigned round;
  double start, end, dur, e, cv;
  cr_assert_eq(sscanf(last, "%u,%lf,%lf,%lf,%lf,%lf", &round, &start, &end, &dur, &e, &cv), 6);
  hs_free(t);
  hs_free(dir);
  hs_scenario_destroy(sc);
  return cv;
}

Test(run, ddp_forward_time_cv_falls_under_the_adaptive_controller) {
  double equal = ddp_cv("equal"), adaptive = ddp_cv("time-only"), emab = ddp_cv("ema-batch");
  cr_expect_gt(equal, 0.8, "equal: %g", equal);
  cr_expect_lt(adaptive, 0.2, "time-only: %g", adaptive);
  cr_expect_lt(emab, 0.2, "ema-batch: %g", emab);
}

Test(run, hfl_ddp_never_moves_samples_between_silos) {
  hs_override ovr[2] = {{"policy.kind", "time-only"}, {"rounds", "3"}};
  hs_error err = {0};
  hs_scenario *sc =
      hs_scenario_load(HS_SOURCE_DIR "/scenarios/testbed-mnist-hfl-ddp.json", ovr, 2, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char *dir = tmpdir();
  run_to(sc, dir, false, NULL);
  drow rows[64];
  size_t n = read_devices(dir, rows, 64);
  cr_assert_eq(n, 33);
  const uint32_t *silo = hs_scenario_groups(sc);
  unsigned long long per[3][3] = {{0}};
  for (size_t k = 0; k < n; k++) per[rows[k].round][silo[k % 11]] += rows[k].samples;
  for (int s = 0; s < 3; s++) {
    cr_expect_eq(per[1][s], per[0][s], "silo %d round 1", s);
    cr_expect_eq(per[2][s], per[0][s], "silo %d round 2", s);
  }
  cr_assert_eq(per[0][0] + per[0][1] + per[0][2], 60000);
  hs_free(dir);
  hs_scenario_destroy(sc);
}

Test(run, fedasync_processes_the_whole_budget) {
  hs_scenario *sc = scenario("{\"kind\": \"fedasync\"}", "{\"kind\": \"equal\"}", NULL, 4, 300);
  char *dir = tmpdir();
  hs_summary s;
  run_to(sc, dir, false, &s);
  cr_assert_geq(s.samples, 4 * 300);
  cr_assert_lt(s.samples, 4 * 300 + 3 * 100);
  /* equal: 100 samples per update; the fast device (0.6 s/update) laps the slow
   * one (0.4 s) ... all three loop, so the run ends before 4 slow updates */
  cr_assert_gt(s.makespan_s, 0);
  char *sum = slurp(dir, "summary.json");
  cr_assert(strstr(sum, "mean_staleness_versions"));
  hs_free(sum);
  hs_free(dir);
  hs_scenario_destroy(sc);
}

Test(run, oort_leaves_unselected_devices_idle_or_off) {
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"oort\", \"oort_k\": 1}",
                             "switch_off_unselected=true", 3, 3000);
  char *dir = tmpdir();
  run_to(sc, dir, false, NULL);
  drow rows[64];
  size_t n = read_devices(dir, rows, 64);
  for (size_t k = 0; k < n; k++) {
    if (rows[k].samples == 0) {
      cr_expect_eq(rows[k].compute_s, 0.0);
      cr_expect_eq(rows[k].energy_j, 0.0, "switched off for the round");
    }
  }
  unsigned long long per_round[3] = {0};
  for (size_t k = 0; k < n; k++) per_round[rows[k].round] += rows[k].samples;
  for (int r = 0; r < 3; r++) cr_expect_eq(per_round[r], 3000);
  hs_free(dir);
  hs_scenario_destroy(sc);
}

Test(run, a_policy_that_does_not_apply_is_an_input_error) {
  /* The loader asks the regime registry, so validate and run agree. */
  const char *text =
      "{\"model_bytes\": 1, \"rounds\": 2, \"samples_per_round\": 300,"
      " \"policy\": {\"kind\": \"ema-batch\"},"
      " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\"}],"
      " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 100}}}}";
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "x.json", DATA, NULL, 0, &err);
  cr_assert_null(sc);
  cr_assert(strstr(err.msg, "policy.kind") != NULL, "%s", err.msg);
  cr_assert(strstr(err.msg, "does not apply to regime pma") != NULL, "%s", err.msg);
}

Test(run, a_speed_change_mid_computation_moves_its_completion) {
  /* slow: 1000 samples x 4 ms = 4 s of work; speed halves at t = 2 s, so the
   * last 2 s of work take 4 s: the round ends at 6 s, not 4 s. */
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}",
                             "devices[2].speed_trace=half-at-2s.csv", 1, 3000);
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_assert_float_eq(s.makespan_s, 6.0, 1e-6);
  hs_scenario_destroy(sc);
}

Test(run, telemetry_noise_changes_the_allocation_but_stays_reproducible) {
  char *a = tmpdir(), *b = tmpdir(), *c = tmpdir();
  hs_scenario *clean = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"time-only\", \"deadband\": 0}",
                                "task=era5", 3, 3000);
  hs_scenario *noisy = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"time-only\", \"deadband\": 0}",
                                "task=era5 telemetry.time_noise=0.2", 3, 3000);
  run_to(clean, a, false, NULL);
  run_to(noisy, b, false, NULL);
  run_to(noisy, c, false, NULL);
  char *x = slurp(a, "devices.csv"), *y = slurp(b, "devices.csv"), *z = slurp(c, "devices.csv");
  cr_expect_str_neq(x, y, "20 %% time noise must move the split");
  cr_expect_str_eq(y, z, "noise comes from seeded streams");
  hs_free(x);
  hs_free(y);
  hs_free(z);
  hs_free(a);
  hs_free(b);
  hs_free(c);
  hs_scenario_destroy(clean);
  hs_scenario_destroy(noisy);
}

Test(run, a_second_run_into_the_same_folder_leaves_no_stale_trace) {
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}", NULL, 1, 300);
  char *dir = tmpdir();
  char path[600];
  snprintf(path, sizeof path, "%s/trace.json", dir);
  run_to(sc, dir, true, NULL);
  cr_assert_eq(access(path, F_OK), 0);
  run_to(sc, dir, false, NULL);
  cr_assert_neq(access(path, F_OK), 0, "trace.json of the first run removed");
  hs_free(dir);
  hs_scenario_destroy(sc);
}

Test(run, large_telemetry_noise_never_reports_a_zero_time) {
  /* cv = 1 on every reading for 30 rounds x 3 devices: with a normal factor
   * some reading would be <= 0 and the controller would reject the round. */
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"time-only\"}",
                             "telemetry.time_noise=1 telemetry.energy_noise=1", 30, 3000);
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(s.rounds, 30);
  hs_scenario_destroy(sc);
}

Test(run, ddp_trains_the_round_overhead_before_the_first_step_under_a_speed_trace) {
  /* mid (mnist): overhead 0.25 s, then 1000 x 2 ms = 2 s of forward-backward;
   * the speed halves at t = 2 s. The overhead runs first, [0, 0.25] at speed 1;
   * the steps' 2 s of work then get 1.75 s at speed 1 and 0.25 s at half speed:
   * busy until 2.5 s, not 2.25 s (the work timed from t = 0, overhead added). */
  hs_scenario *sc = scenario("{\"kind\": \"ddp\", \"steps_per_round\": 1}",
                             "{\"kind\": \"equal\"}", "devices[1].speed_trace=half-at-2s.csv", 1,
                             3000);
  char *dir = tmpdir();
  run_to(sc, dir, false, NULL);
  drow rows[8];
  size_t n = read_devices(dir, rows, 8);
  cr_assert_eq(n, 3);
  cr_assert_str_eq(rows[1].device, "mid");
  cr_expect_float_eq(rows[1].compute_s, 2.5, 1e-9, "mid busy %.12g s", rows[1].compute_s);
  hs_free(dir);
  hs_scenario_destroy(sc);
}

/* Three devices on a negligible access link `lan`, and a server link `srv`
 * of 10 ms latency, under the given regime. */
static hs_scenario *with_server(const char *regime, const char *srv_mbps, const char *model_bytes,
                                const char *task) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"srv\", \"seed\": 3, \"task\": \"%s\", \"model_bytes\": %s,"
           " \"rounds\": 1, \"samples_per_round\": 3000, \"regime\": %s,"
           " \"policy\": {\"kind\": \"equal\"},"
           " \"devices\": ["
           "  {\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\", \"link\": \"lan\"},"
           "  {\"name\": \"mid\", \"profile\": \"profiles/det-mid.json\", \"link\": \"lan\"},"
           "  {\"name\": \"slow\", \"profile\": \"profiles/det-slow.json\", \"link\": \"lan\"}],"
           " \"network\": {\"server\": \"srv\", \"links\": {"
           "  \"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0},"
           "  \"srv\": {\"bandwidth_mbps\": %s, \"latency_ms\": 10}}}}",
           task, model_bytes, regime, srv_mbps);
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "srv.json", DATA, NULL, 0, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}

Test(run, ddp_star_all_reduce_pays_the_server_links_latency) {
  /* One step: the slow device computes 4 s, then a star all-reduce through the
   * server link: 2 (alpha + max(3 * 8n/b_srv, 8n/b_lan)) with alpha = the
   * access latency (0) + the server link's (10 ms), as a fluid upload and
   * download through that link would take: 4 + 0.02 s (the bits are negligible). */
  hs_scenario *sc =
      with_server("{\"kind\": \"ddp\", \"steps_per_round\": 1, \"collective\": \"star\"}", "1e9",
                  "1", "mnist");
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_expect_float_eq(s.makespan_s, 4.02, 1e-9, "makespan %.12g", s.makespan_s);
  hs_scenario_destroy(sc);
}

Test(run, hfl_ddp_star_all_reduce_runs_over_the_silo_fabric_not_the_wan) {
  /* Silos {fast, mid} and {slow} on the fabric `lan` (negligible); the server
   * link (8 Mbit/s, 10 ms) only carries the silo models: 1 MB = 1 s each.
   * Both leaders download at once: 2 s + 10 ms. Silo a steps 2 s (mid) and
   * uploads alone: done at 4.01 + 1.01 = 5.02. Silo b steps 4 s and uploads
   * alone: 6.01 + 1.01 = 7.02. Through the WAN, each star all-reduce would
   * have cost seconds. */
  hs_scenario *sc = with_server(
      "{\"kind\": \"hfl-ddp\", \"steps_per_round\": 1, \"collective\": \"star\", \"silos\": ["
      "{\"name\": \"a\", \"members\": [\"fast\", \"mid\"], \"fabric\": \"lan\"},"
      "{\"name\": \"b\", \"members\": [\"slow\"], \"fabric\": \"lan\"}]}",
      "8", "1e6", "era5");
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_expect_float_eq(s.makespan_s, 7.02, 1e-6, "makespan %.12g", s.makespan_s);
  hs_scenario_destroy(sc);
}

/* hfl-ddp's regime.server: the same round as above (one round: 7.02 s), then
 * the server aggregates the 2 silo models: 2 x (0.25 + 0.5 x 1 MB) = 1.5 s
 * before the round ends. Without the key nothing is added or printed. */
Test(run, hfl_ddp_server_aggregation_is_silos_x_cost) {
  const char *silos = "\"silos\": ["
                      "{\"name\": \"a\", \"members\": [\"fast\", \"mid\"], \"fabric\": \"lan\"},"
                      "{\"name\": \"b\", \"members\": [\"slow\"], \"fabric\": \"lan\"}]";
  char reg[1024];
  snprintf(reg, sizeof reg,
           "{\"kind\": \"hfl-ddp\", \"steps_per_round\": 1, \"collective\": \"star\", %s,"
           " \"server\": {\"s_per_update\": 0.25, \"s_per_mb\": 0.5}}",
           silos);
  hs_scenario *sc = with_server(reg, "8", "1e6", "era5");
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_expect_float_eq(s.makespan_s, 7.02 + 1.5, 1e-6, "makespan %.12g", s.makespan_s);
  char *printed = hs_scenario_to_json(sc);
  cr_expect(strstr(printed, "\"s_per_mb\"") != NULL, "%s", printed);
  free(printed);
  hs_scenario_destroy(sc);
  snprintf(reg, sizeof reg, "{\"kind\": \"hfl-ddp\", \"steps_per_round\": 1, \"collective\": \"star\", %s}",
           silos);
  sc = with_server(reg, "8", "1e6", "era5");
  printed = hs_scenario_to_json(sc);
  cr_expect(strstr(printed, "s_per_update") == NULL, "printed only when written: %s", printed);
  free(printed);
  hs_scenario_destroy(sc);
}

Test(run, a_model_too_large_for_the_links_is_an_input_error_not_a_crash) {
  /* 1e308 bytes: 8 x 1e308 bits overflow a double, so no transfer would ever
   * end; PMA used to abort on a broken invariant and DDP to "succeed" with
   * inf and nan figures. */
  const char *regimes[] = {"{\"kind\": \"pma\"}", "{\"kind\": \"ddp\"}",
                           "{\"kind\": \"fedasync\"}"};
  for (int k = 0; k < 3; k++) {
    hs_scenario *sc = scenario(regimes[k], "{\"kind\": \"equal\"}", "model_bytes=1e308", 2, 3000);
    char *dir = tmpdir();
    hs_run_opts o = {.out_dir = dir};
    hs_summary s;
    hs_error err = {0};
    cr_expect_eq(hs_run(sc, &o, &s, &err), HS_EINVAL, "%s", regimes[k]);
    cr_expect(strstr(err.msg, "model_bytes") != NULL, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cr_expect_neq(access(path, F_OK), 0, "no outputs");
    hs_free(dir);
    hs_scenario_destroy(sc);
  }
  /* Each step's all-reduce finite (1e10 bytes over 1e-300 Mbit/s: ~1e305 s),
   * but 2000 of them overflow within the first round: an error, not inf. */
  hs_scenario *sc = scenario("{\"kind\": \"ddp\", \"steps_per_round\": 2000}",
                             "{\"kind\": \"equal\"}",
                             "model_bytes=1e10 network.links.lan.bandwidth_mbps=1e-300", 2, 3000);
  hs_summary s;
  hs_error err = {0};
  cr_expect_eq(hs_run(sc, NULL, &s, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "largest representable time") != NULL, "%s", err.msg);
  hs_scenario_destroy(sc);
}

Test(run, simulated_time_running_past_the_largest_double_is_an_input_error) {
  /* Each computation or transfer is finite, but they add up past DBL_MAX
   * after some rounds. A computation that would end at inf, or a transfer the
   * network can never schedule, used to abort the run on a broken invariant.
   * (ddp and fedasync report the durations they timed, so their telemetry
   * stays valid up to the overflow.) */
  const char *regime[] = {"{\"kind\": \"ddp\"}", "{\"kind\": \"fedasync\"}"};
  const char *extra[] = {"devices[2].speed_trace=crawl.csv",
                         "model_bytes=1e10 network.links.lan.bandwidth_mbps=1e-300"};
  const char *what[] = {"a computation on slow", "a model transfer"};
  for (int k = 0; k < 2; k++) {
    hs_scenario *sc = scenario(regime[k], "{\"kind\": \"equal\"}", extra[k], 2000, 3000);
    hs_summary s;
    hs_error err = {0};
    cr_expect_eq(hs_run(sc, NULL, &s, &err), HS_EINVAL, "%s", extra[k]);
    cr_expect(strstr(err.msg, what[k]) != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "largest representable time") != NULL, "%s", err.msg);
    hs_scenario_destroy(sc);
  }
}

Test(run, a_clock_too_large_to_resolve_training_says_so) {
  /* PMA measures training as a difference of ledger times: at t ~ 4e305 s
   * (the slow board crawls: 4e305 s a round) the fast board's 1.5 s round vanishes. That is
   * a precision limit of the scenario, not a controller error. */
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}",
                             "devices[2].speed_trace=crawl.csv", 3, 3000);
  hs_summary s;
  hs_error err = {0};
  cr_expect_eq(hs_run(sc, NULL, &s, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "round 1: fast trained 1000 samples in 0 s") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "a double cannot resolve its training time") != NULL, "%s", err.msg);
  hs_scenario_destroy(sc);
}

Test(run, summary_json_writes_the_largest_seed_in_full) {
  hs_scenario *sc =
      scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}", "seed=9007199254740992", 1, 300);
  char *dir = tmpdir();
  run_to(sc, dir, false, NULL);
  char *t = slurp(dir, "summary.json");
  cr_expect(strstr(t, "\"seed\": 9007199254740992,") != NULL, "%s", t);
  hs_free(t);
  hs_free(dir);
  hs_scenario_destroy(sc);
}

Test(run, ddp_compute_cv_leaves_out_steps_in_which_no_rank_trained) {
  /* 2 samples per rank over 4 steps: steps 0 and 1 train one sample on every
   * rank (forward times 1, 2, 4 ms), steps 2 and 3 train nothing (only the
   * all-reduce). The forward-time CV is that of (1, 2, 4) in both steps that
   * had any; an empty step has no forward time to vary and must not halve it. */
  hs_scenario *sc = scenario("{\"kind\": \"ddp\", \"steps_per_round\": 4}",
                             "{\"kind\": \"equal\"}", "task=era5", 2, 6);
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  double m = 7.0 / 3, v = (1.0 + 4.0 + 16.0) / 3 - m * m;
  cr_expect_float_eq(s.compute_cv, sqrt(v) / m, 1e-9, "compute_cv %.12g", s.compute_cv);
  hs_scenario_destroy(sc);
}

Test(run, telemetry_noise_reaches_ema_batch_step_sizing) {
  /* ema-batch sizes every step from the ranks' step times: those are
   * telemetry too, so time noise must move its split (it had no effect at all:
   * the step times went to the controller exact). */
  char *a = tmpdir(), *b = tmpdir(), *c = tmpdir();
  const char *ddp = "{\"kind\": \"ddp\", \"steps_per_round\": 4}";
  hs_scenario *clean = scenario(ddp, "{\"kind\": \"ema-batch\"}", "task=era5", 3, 3000);
  hs_scenario *noisy =
      scenario(ddp, "{\"kind\": \"ema-batch\"}", "task=era5 telemetry.time_noise=0.3", 3, 3000);
  run_to(clean, a, false, NULL);
  run_to(noisy, b, false, NULL);
  run_to(noisy, c, false, NULL);
  char *x = slurp(a, "devices.csv"), *y = slurp(b, "devices.csv"), *z = slurp(c, "devices.csv");
  cr_expect_str_neq(x, y, "30 %% time noise must move ema-batch's split");
  cr_expect_str_eq(y, z, "noise comes from seeded streams");
  hs_free(x);
  hs_free(y);
  hs_free(z);
  hs_free(a);
  hs_free(b);
  hs_free(c);
  hs_scenario_destroy(clean);
  hs_scenario_destroy(noisy);
}

Test(run, a_write_that_fails_leaves_the_previous_outputs_whole) {
  /* A first run leaves its three files. A second run into the same folder
   * runs out of space for devices.csv (a 4 KiB file-size limit, as a full
   * disk would): it must fail and leave the first run's files, not its own
   * rounds.csv beside the first run's devices.csv and summary.json. */
  hs_scenario *first = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}", NULL, 24, 3000);
  hs_scenario *second = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}", NULL, 36, 3000);
  char *dir = tmpdir();
  run_to(first, dir, false, NULL);
  char *rounds = slurp(dir, "rounds.csv"), *summary = slurp(dir, "summary.json");
  cr_assert_lt(strlen(rounds) * 36 / 24, 4096, "the new rounds.csv alone would fit");
  signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
  struct rlimit old, lim = {4096, 4096};
  cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim.rlim_max = old.rlim_max;
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
  hs_run_opts o = {.out_dir = dir, .force = true}; /* replace the first run on purpose */
  hs_error err = {0};
  hs_status st = hs_run(second, &o, NULL, &err);
  setrlimit(RLIMIT_FSIZE, &old);
  cr_expect_eq(st, HS_EIO, "%s", err.msg);
  cr_expect(strstr(err.msg, "devices.csv") != NULL, "%s", err.msg);
  char *r2 = slurp(dir, "rounds.csv"), *s2 = slurp(dir, "summary.json");
  cr_expect_str_eq(r2, rounds, "rounds.csv is the first run's");
  cr_expect_str_eq(s2, summary, "summary.json is the first run's");
  hs_free(r2);
  hs_free(s2);
  hs_free(rounds);
  hs_free(summary);
  hs_free(dir);
  hs_scenario_destroy(first);
  hs_scenario_destroy(second);
}

/* PMA runs a round in one pass (switch times written, the ledger fed at the
 * round close in device order) unless dynamics, a deadline or a trace need it
 * event by event (sim/regimes/fl/regime_fl_round.c). Both must give the same bytes: the traced
 * run takes the event-by-event path, the untraced one the one-pass path. */
static void pma_paths_agree(const char *scenario_file, const hs_override *ovr, size_t novr) {
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_load(scenario_file, ovr, novr, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char *a = tmpdir(), *b = tmpdir();
  hs_summary sa, sb;
  run_to(sc, a, false, &sa);
  run_to(sc, b, true, &sb);
  const char *files[] = {"rounds.csv", "devices.csv"};
  for (int i = 0; i < 2; i++) {
    char *x = slurp(a, files[i]), *y = slurp(b, files[i]);
    cr_expect_str_eq(x, y, "%s: %s differs between the one-pass and the event-by-event round",
                     scenario_file, files[i]);
    hs_free(x);
    hs_free(y);
  }
  const double fa[] = {sa.makespan_s, sa.energy_j, sa.compute_j, sa.comm_j,
                       sa.idle_j,     sa.compute_cv, sa.wait_fraction};
  const double fb[] = {sb.makespan_s, sb.energy_j, sb.compute_j, sb.comm_j,
                       sb.idle_j,     sb.compute_cv, sb.wait_fraction};
  for (size_t k = 0; k < sizeof fa / sizeof fa[0]; k++)
    cr_expect(memcmp(&fa[k], &fb[k], sizeof fa[k]) == 0, "%s: summary figure %zu: %.17g vs %.17g",
              scenario_file, k, fa[k], fb[k]);
  cr_expect_eq(sa.samples, sb.samples);
  hs_free(a);
  hs_free(b);
  hs_scenario_destroy(sc);
}

Test(run, pma_one_pass_round_equals_the_event_by_event_round) {
  /* contention on the server link, spread, equal shares */
  hs_override pop[] = {{"rounds", "3"}};
  pma_paths_agree(HS_SOURCE_DIR "/scenarios/population-1k-mnist-pma.json", pop, 1);
  /* selection with devices switched off, telemetry noise, adaptive shares */
  hs_override sel[] = {{"rounds", "4"},
                       {"policy.kind", "oort"},
                       {"switch_off_unselected", "true"},
                       {"telemetry.time_noise", "0.2"}};
  pma_paths_agree(HS_SOURCE_DIR "/scenarios/population-1k-mnist-pma.json", sel, 4);
  /* the board test bed, time-only */
  pma_paths_agree(HS_SOURCE_DIR "/scenarios/testbed-mnist-pma.json", NULL, 0);
}
