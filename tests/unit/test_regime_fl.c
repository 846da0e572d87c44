/* test_regime_fl.c: regime "fl" (issue 17) in closed form, for every
 * topology: DVFS levels and whole-system energy.
 *
 * Three deterministic devices (tests/data/run/profiles: tau_cv 0, busy 10 W,
 * comm 3 W, idle 2 W; mnist tau 1/2/4 ms, overhead 0.5/0.25/0 s), the equal
 * policy (1000 samples each), a 1-byte model on an instant link: a device's
 * nominal training is 1.5, 2.25 and 4.0 s, and transfers take ~0 s, so
 *   a device at a fixed level (speed s, power p) trains work / s seconds
 *   and spends p x 10 W x that time;
 *   energy_system_j = devices + server + aggregators + network, each part
 *   in closed form: server idle_w x makespan (aggregation 0 s), network
 *   j_per_byte x bytes x links crossed + port_w x endpoints x makespan.
 * Topologies: star, threshold (K = N), hierarchical (one aggregator for the
 * three), ring (the all-reduce of 1 byte takes ~0 s). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "test_tmpdir.h"

#define DATA HS_SOURCE_DIR "/tests/data/run"
#define ROUNDS 3

static const char *const topo[] = {
    "\"topology\": \"star\"",
    "\"topology\": \"threshold\", \"k\": 3",
    "\"topology\": \"hierarchical\", \"levels\": [{\"fanout\": 3, \"link\": \"lan\","
    " \"aggregator\": {\"idle_w\": 4, \"busy_w\": 9}}]",
    "\"topology\": \"ring\"",
};
enum { STAR, THRESHOLD, TREE, RING, NTOPO };

/* nominal training of fast, mid, slow (s) */
static const double nominal[3] = {1.5, 2.25, 4.0};

/* The scenario of topology t with `extra` regime members ("" for none), or
 * NULL with the loader's message in *err. */
static hs_scenario *parse_fl(int t, const char *extra, hs_error *err) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"name\": \"fl-closed-form\", \"seed\": 5, \"task\": \"mnist\", \"model_bytes\": 1,"
           " \"rounds\": %d, \"samples_per_round\": 3000,"
           " \"regime\": {\"kind\": \"fl\", %s%s}, \"policy\": {\"kind\": \"equal\"},"
           " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\"},"
           "  {\"name\": \"mid\", \"profile\": \"profiles/det-mid.json\"},"
           "  {\"name\": \"slow\", \"profile\": \"profiles/det-slow.json\"}],"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0}}}}",
           ROUNDS, topo[t], extra);
  return hs_scenario_parse(text, "fl-closed-form.json", DATA, NULL, 0, err);
}

static hs_scenario *fl_scenario(int t, const char *extra) {
  hs_error err = {0};
  hs_scenario *sc = parse_fl(t, extra, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}

/* Every devices.csv row's compute_s is nominal / speed. */
static void check_compute_rows(const char *dir, double speed, const char *what) {
  char path[512], line[256];
  snprintf(path, sizeof path, "%s/devices.csv", dir);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  size_t rows = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned round;
    char dev[32];
    double compute_s;
    if (sscanf(line, "%u,%31[^,],%*u,%lf", &round, dev, &compute_s) != 3) continue; /* header */
    double want = nominal[!strcmp(dev, "fast") ? 0 : !strcmp(dev, "mid") ? 1 : 2] / speed;
    cr_expect_float_eq(compute_s, want, 1e-9, "%s: round %u %s trains %.12g s", what, round, dev,
                       compute_s);
    rows++;
  }
  fclose(f);
  cr_assert_eq(rows, 3 * ROUNDS, "%s: %zu rows", what, rows);
}

/* Run topology t with `extra` regime members into dir (NULL: no files). */
static hs_summary run_fl(int t, const char *extra, const char *dir) {
  hs_scenario *sc = fl_scenario(t, extra);
  hs_run_opts o = {.out_dir = dir};
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, dir ? &o : NULL, &s, &err), HS_OK, "%s: %s", topo[t], err.msg);
  hs_scenario_destroy(sc);
  return s;
}

/* One level (speed 0.5, power 0.4) forced by the powersave governor: time =
 * work / speed and compute energy = power x busy_w x time, per topology. */
Test(regime_fl, dvfs_fixed_level_is_work_over_speed_and_power_times_time) {
  static const char *dv = ", \"dvfs\": {\"levels\": [{\"speed\": 1, \"power\": 1},"
                          " {\"speed\": 0.5, \"power\": 0.4}], \"governor\": \"powersave\"}";
  double sum = nominal[0] + nominal[1] + nominal[2];
  for (int t = 0; t < NTOPO; t++) {
    char dir[64];
    cr_assert_not_null(test_mkdtemp(dir, "hs-fl"));
    hs_summary s = run_fl(t, dv, dir);
    check_compute_rows(dir, 0.5, topo[t]);
    cr_expect_float_eq(s.compute_j, ROUNDS * 0.4 * 10.0 * sum / 0.5, 1e-6, "%s: compute %.12g J",
                       topo[t], s.compute_j);
    /* each round ends with the slow device: 4.0 / 0.5 s */
    cr_expect_float_eq(s.makespan_s, ROUNDS * nominal[2] / 0.5, 1e-6, "%s: makespan %.12g s",
                       topo[t], s.makespan_s);
  }
}

/* performance is levels[0] (here speed 0.8, power 0.7) for every training;
 * with a nominal first level the run is the run without dvfs. */
Test(regime_fl, dvfs_performance_runs_the_first_level) {
  static const char *dv = ", \"dvfs\": {\"levels\": [{\"speed\": 0.8, \"power\": 0.7},"
                          " {\"speed\": 0.5, \"power\": 0.4}]}";
  double sum = nominal[0] + nominal[1] + nominal[2];
  for (int t = 0; t < NTOPO; t++) {
    hs_summary s = run_fl(t, dv, NULL), p = run_fl(t, "", NULL);
    cr_expect_float_eq(s.compute_j, ROUNDS * 0.7 * 10.0 * sum / 0.8, 1e-6, "%s", topo[t]);
    cr_expect_float_eq(p.compute_j, ROUNDS * 10.0 * sum, 1e-6, "%s", topo[t]);
    cr_expect_float_eq(s.makespan_s, ROUNDS * nominal[2] / 0.8, 1e-6, "%s", topo[t]);
  }
}

/* slack: round 0 at full speed; from round 1 each device takes the
 * lowest-power level whose time fits the last round's pace (4.0 s): fast
 * 1.5 / 0.5 = 3.0 fits, mid 2.25 / 0.5 = 4.5 does not (0.8: 2.8125 fits),
 * slow stays at speed 1. The makespan is unchanged. */
Test(regime_fl, dvfs_slack_fills_the_pace_in_every_topology) {
  static const char *dv = ", \"dvfs\": {\"levels\": [{\"speed\": 1, \"power\": 1},"
                          " {\"speed\": 0.8, \"power\": 0.6}, {\"speed\": 0.5, \"power\": 0.3}],"
                          " \"governor\": \"slack\"}";
  double r0 = 10.0 * (nominal[0] + nominal[1] + nominal[2]);
  double later = 10.0 * (0.3 * nominal[0] / 0.5 + 0.6 * nominal[1] / 0.8 + nominal[2]);
  for (int t = 0; t < NTOPO; t++) {
    hs_summary s = run_fl(t, dv, NULL);
    cr_expect_float_eq(s.compute_j, r0 + (ROUNDS - 1) * later, 1e-6, "%s: %.12g J", topo[t],
                       s.compute_j);
    cr_expect_float_eq(s.makespan_s, ROUNDS * nominal[2], 1e-6, "%s", topo[t]);
  }
}

/* With the shipped defaults (server-r740: 52.3 W idle, aggregation 0 s; 1e-6
 * J per byte per link; 1 W per port), every part in closed form and the sum. */
Test(regime_fl, system_energy_parts_add_up_in_every_topology) {
  /* bytes x links per round: a hop moves 1 byte over 2 links, both ways */
  static const double hops[NTOPO] = {3 * 2, 3 * 2, 3 * 2 + 2, 0};
  static const double ports[NTOPO] = {4, 4, 5, 3};
  for (int t = 0; t < NTOPO; t++) {
    hs_summary s = run_fl(t, "", NULL);
    double ms = s.makespan_s;
    double bytes_links = t == RING ? ROUNDS * 2.0 * 2.0 * (3 - 1) : ROUNDS * 2.0 * hops[t];
    double server = t == RING ? 0 : 52.3 * ms;
    double aggs = t == TREE ? 4.0 * ms : 0;
    double net = 1e-6 * bytes_links + 1.0 * ports[t] * ms;
    cr_expect_float_eq(s.energy_server_j, server, 1e-9 * server + 1e-12, "%s: server %.12g",
                       topo[t], s.energy_server_j);
    cr_expect_float_eq(s.energy_aggregators_j, aggs, 1e-9 * aggs + 1e-12, "%s", topo[t]);
    cr_expect_float_eq(s.energy_network_j, net, 1e-9 * net, "%s: network %.12g", topo[t],
                       s.energy_network_j);
    double sum = s.energy_j + s.energy_server_j + s.energy_aggregators_j + s.energy_network_j;
    cr_expect_float_eq(s.energy_system_j, sum, 1e-12 * sum, "%s: system %.17g vs parts %.17g",
                       topo[t], s.energy_system_j, sum);
    cr_expect_float_eq(s.energy_j, s.compute_j + s.comm_j + s.idle_j, 1e-9 * s.energy_j, "%s",
                       topo[t]);
  }
}

/* A host block: a profile name, an override of the default, and the errors
 * a profile file can hold (one line naming the file and the field). */
Test(regime_fl, host_profiles_resolve_override_and_refuse_bad_files) {
  hs_summary s = run_fl(STAR, ", \"server\": {\"busy_w\": 100, \"s_per_update\": 0.5}", NULL);
  /* 3 updates x 0.5 s each round, busy at 100 W; idle 52.3 W from the profile */
  double busy = ROUNDS * 3 * 0.5;
  cr_expect_float_eq(s.makespan_s, ROUNDS * nominal[2] + busy, 1e-6);
  cr_expect_float_eq(s.energy_server_j, 100 * busy + 52.3 * (s.makespan_s - busy), 1e-6);

  char dir[64];
  cr_assert_not_null(test_mkdtemp(dir, "hs-fl-host"));
  static const char *const bad[][2] = {
      {"{\"format\": \"hetsim-server/1\", \"name\": \"x\", \"host\": \"h\", \"idle_w\": 1,"
       " \"s_per_update\": 0, \"s_per_mb\": 0, \"provenance\": {\"kind\": \"estimated\","
       " \"sources\": [\"s\"]}}",
       "busy_w: required key is missing"},
      {"{\"format\": \"hetsim-server/1\", \"name\": \"x\", \"host\": \"h\", \"idle_w\": 5,"
       " \"busy_w\": 1, \"s_per_update\": 0, \"s_per_mb\": 0, \"provenance\": {\"kind\":"
       " \"estimated\", \"sources\": [\"s\"]}}",
       "below idle_w"},
      {"{\"format\": \"hetsim-server/1\", \"name\": \"x\", \"host\": \"h\", \"idle_w\": 1,"
       " \"busy_w\": 2, \"s_per_update\": 0, \"s_per_mb\": 0, \"provenance\": {\"kind\":"
       " \"estimated\", \"sources\": []}}",
       "provenance: an estimate needs sources"},
      {"{\"format\": \"hetsim-profile/1\"}", "format: expected \"hetsim-server/1\""},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char path[256], extra[400];
    snprintf(path, sizeof path, "%s/host%zu.json", dir, i);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(bad[i][0], f);
    fclose(f);
    snprintf(extra, sizeof extra, ", \"server\": \"%s\"", path);
    hs_error e = {0};
    hs_scenario *b = parse_fl(STAR, extra, &e);
    cr_expect_null(b, "case %zu loaded", i);
    hs_scenario_destroy(b);
    cr_expect(e.status != HS_OK);
    cr_expect(strstr(e.msg, "fl-closed-form.json: regime.server: ") && strstr(e.msg, path) &&
                  strstr(e.msg, bad[i][1]) && !strchr(e.msg, '\n'),
              "case %zu: %s", i, e.msg);
  }
}

/* pma takes fl's regime.server (issue 24, task B): tau_cv 0, so the
 * makespan grows by rounds x updates x (s_per_update + s_per_mb x model MB)
 * exactly; without the key nothing changes (0 s, nothing printed). The
 * hierarchical root aggregates its one top-level update the same way. */
Test(regime_fl, pma_server_time_is_rounds_x_updates_x_cost) {
  char text[4096];
#define PMA_FMT \
      "{\"name\": \"pma-server\", \"seed\": 5, \"task\": \"mnist\", \"model_bytes\": 1," \
      " \"rounds\": %d, \"samples_per_round\": 3000, \"regime\": {\"kind\": \"pma\"%s}," \
      " \"policy\": {\"kind\": \"equal\"}," \
      " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\"}," \
      "  {\"name\": \"mid\", \"profile\": \"profiles/det-mid.json\"}," \
      "  {\"name\": \"slow\", \"profile\": \"profiles/det-slow.json\"}]," \
      " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0}}}}"
  double ms[2];
  const char *server[2] = {"", ", \"server\": {\"s_per_update\": 0.25, \"s_per_mb\": 0.5}"};
  for (int k = 0; k < 2; k++) {
    snprintf(text, sizeof text, PMA_FMT, ROUNDS, server[k]);
    hs_error err = {0};
    hs_scenario *sc = hs_scenario_parse(text, "pma-server.json", DATA, NULL, 0, &err);
    cr_assert_not_null(sc, "%s", err.msg);
    hs_summary s;
    cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
    ms[k] = s.makespan_s;
    char *printed = hs_scenario_to_json(sc);
    cr_assert_not_null(printed);
    cr_expect_eq(strstr(printed, "\"s_per_update\"") != NULL, k == 1, "pma prints regime.server only "
                 "when written: %s", printed);
    free(printed);
    hs_scenario_destroy(sc);
  }
  double per_update = 0.25 + 0.5 * 1e-6; /* a 1-byte model is 1e-6 MB */
  cr_expect_float_eq(ms[0], ROUNDS * nominal[2], 1e-6, "pma without a server: %g s", ms[0]);
  cr_expect_float_eq(ms[1] - ms[0], ROUNDS * 3 * per_update, 1e-9, "pma: +%.12g s", ms[1] - ms[0]);
  /* hierarchical: the root's one update per round */
  hs_summary t0 = run_fl(TREE, ", \"server\": {\"s_per_update\": 0, \"s_per_mb\": 0}", NULL);
  hs_summary t1 = run_fl(TREE, ", \"server\": {\"s_per_update\": 0.25, \"s_per_mb\": 0.5}", NULL);
  cr_expect_float_eq(t1.makespan_s - t0.makespan_s, ROUNDS * 1 * per_update, 1e-9,
                     "hierarchical: +%.12g s", t1.makespan_s - t0.makespan_s);
}

/* network.duplex (issue 24) on a tiny PMA round, in closed form. Server link
 * 8 Mbit/s (1 MB/s), model 1 MB, no latency but the slow device's access
 * link: fast (8 Mbit/s, 0 ms, trains 1.5 s) and slow (4.8 Mbit/s = 0.6 MB/s,
 * 1000 ms, trains 4.0 s).
 *   [0, 1]   fast downloads alone at 1 MB/s; slow's download waits its 1 s;
 *   [1, 2.5] slow downloads at its cap 0.6 (0.9 MB), fast trains;
 *   at 2.5   fast uploads while slow has 0.1 MB left to download:
 *     half: one capacity, 0.5 MB/s each: slow's download ends at 2.7;
 *     full: slow keeps 0.6 down, fast 1.0 up: slow's ends at 2.5 + 1/6;
 *   then slow trains 4 s, waits its 1 s and uploads 1 MB at 0.6 MB/s alone.
 * Makespan: half 2.7 + 4 + 1 + 5/3, full 2.5 + 1/6 + 4 + 1 + 5/3. Star runs
 * the one-pass round, threshold (k = 2) the general one; a per-link duplex
 * overrides network.duplex, and leaving the key out is half duplex. */
static double duplex_makespan(const char *topology, const char *net_duplex,
                              const char *link_duplex) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"name\": \"duplex\", \"seed\": 5, \"task\": \"mnist\", \"model_bytes\": 1e6,"
           " \"rounds\": 1, \"samples_per_round\": 2000,"
           " \"regime\": {\"kind\": \"fl\", %s}, \"policy\": {\"kind\": \"equal\"},"
           " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\","
           "   \"link\": \"f\"},"
           "  {\"name\": \"slow\", \"profile\": \"profiles/det-slow.json\", \"link\": \"s\"}],"
           " \"network\": {%s \"server\": \"srv\", \"links\": {"
           "  \"srv\": {\"bandwidth_mbps\": 8 %s},"
           "  \"f\": {\"bandwidth_mbps\": 8},"
           "  \"s\": {\"bandwidth_mbps\": 4.8, \"latency_ms\": 1000}}}}",
           topology, net_duplex, link_duplex);
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "duplex.json", DATA, NULL, 0, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  hs_summary s;
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  hs_scenario_destroy(sc);
  return s.makespan_s;
}

Test(regime_fl, full_duplex_lets_an_upload_pass_a_download_in_closed_form) {
  const double half = 2.7 + 4.0 + 1.0 + 5.0 / 3.0, full = 2.5 + 1.0 / 6.0 + 4.0 + 1.0 + 5.0 / 3.0;
  const char *topos[] = {"\"topology\": \"star\"", "\"topology\": \"threshold\", \"k\": 2"};
  for (int t = 0; t < 2; t++) {
    cr_expect_float_eq(duplex_makespan(topos[t], "", ""), half, 1e-9, "%s: default", topos[t]);
    cr_expect_float_eq(duplex_makespan(topos[t], "\"duplex\": \"half\",", ""), half, 1e-9, "%s",
                       topos[t]);
    cr_expect_float_eq(duplex_makespan(topos[t], "\"duplex\": \"full\",", ""), full, 1e-9, "%s",
                       topos[t]);
    cr_expect_float_eq(duplex_makespan(topos[t], "", ", \"duplex\": \"full\""), full, 1e-9, "%s",
                       topos[t]);
    cr_expect_float_eq(duplex_makespan(topos[t], "\"duplex\": \"full\",", ", \"duplex\": \"half\""),
                       half, 1e-9, "%s: the link's own key wins", topos[t]);
  }
}

Test(regime_fl, a_wrong_duplex_names_the_field_and_the_nearest_value) {
  const char *bad[][2] = {{"\"duplex\": \"ful\",", ""}, {"", ", \"duplex\": \"halff\""}};
  const char *want[] = {"duplex.json: network.duplex: unknown value \"ful\" (one of: half, full); "
                        "did you mean \"full\"?",
                        "duplex.json: network.links.srv.duplex: unknown value \"halff\""};
  for (int k = 0; k < 2; k++) {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\": \"duplex\", \"task\": \"mnist\", \"model_bytes\": 1, \"rounds\": 1,"
             " \"samples_per_round\": 10, \"regime\": {\"kind\": \"pma\"},"
             " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\"}],"
             " \"network\": {%s \"links\": {\"srv\": {\"bandwidth_mbps\": 8 %s}}}}",
             bad[k][0], bad[k][1]);
    hs_error err = {0};
    hs_scenario *sc = hs_scenario_parse(text, "duplex.json", DATA, NULL, 0, &err);
    cr_expect_null(sc);
    cr_expect(strstr(err.msg, want[k]) != NULL, "got: %s", err.msg);
    cr_expect_eq(err.status, HS_EINVAL);
    hs_scenario_destroy(sc);
  }
}

/* devices[].cpu (issue 24) in closed form: one det-fast device (1000 samples:
 * 1.5 s), a 1 MB model, its link 80 Mbit/s (10 MB/s), a server link of 8000
 * Mbit/s, a quota of share 0.5 per 100 ms.
 *  - send_ms_per_mb 100: the CPU moves 0.5 / 0.1 s = 5 MB/s (40 Mbit/s, below
 *    the link), so each way takes 0.2 s (+ 1 MB / 1000 MB/s on the server
 *    link's own share: none, the device's cap binds); the send needs 100 ms of
 *    CPU, more than the 50 ms a period has, so every upload waits
 *    (1 - 0.5) x 100 ms = 50 ms: a round is 0.2 + 1.5 + 0.05 + 0.2 = 1.95 s.
 *  - send_ms_per_mb 10: the CPU's 50 MB/s is above the link (0.1 s each way);
 *    an upload stalls with probability 10 ms / 50 ms = 0.2: a round is 1.7 s,
 *    plus 0.05 s for each stalled one.
 *  - no "cpu": 1.7 s a round, exactly as before. */
static double cpu_makespan(const char *topology, unsigned rounds, const char *cpu) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"name\": \"cpu\", \"seed\": 7, \"task\": \"mnist\", \"model_bytes\": 1e6,"
           " \"rounds\": %u, \"samples_per_round\": 1000,"
           " \"regime\": {\"kind\": \"fl\", %s}, \"policy\": {\"kind\": \"equal\"},"
           " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\","
           "   \"link\": \"f\" %s}],"
           " \"network\": {\"server\": \"srv\", \"links\": {"
           "  \"srv\": {\"bandwidth_mbps\": 8000}, \"f\": {\"bandwidth_mbps\": 80}}}}",
           rounds, topology, cpu);
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "cpu.json", DATA, NULL, 0, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  hs_summary s;
  cr_assert_eq(hs_run(sc, NULL, &s, &err), HS_OK, "%s", err.msg);
  hs_scenario_destroy(sc);
  return s.makespan_s;
}

Test(regime_fl, a_cpu_quota_caps_the_rate_and_stalls_the_send_in_closed_form) {
  const char *topos[] = {"\"topology\": \"star\"", "\"topology\": \"threshold\", \"k\": 1",
                         "\"topology\": \"hierarchical\", \"levels\": [{\"fanout\": 1,"
                         " \"link\": \"srv\", \"aggregator\": {\"idle_w\": 4, \"busy_w\": 9}}]"};
  /* The tree adds one aggregator hop each way (1 MB over 8000 Mbit/s, 1 ms). */
  const double hop[] = {0, 0, 2 * 0.001};
  for (int t = 0; t < 3; t++) {
    cr_expect_float_eq(cpu_makespan(topos[t], 2, ""), 2 * (1.7 + hop[t]), 1e-9, "%s", topos[t]);
    cr_expect_float_eq(cpu_makespan(topos[t], 2,
                                    ", \"cpu\": {\"share\": 0.5, \"send_ms_per_mb\": 100}"),
                       2 * (1.95 + hop[t]), 1e-9, "%s", topos[t]);
    /* share 1: no throttled part, so no stall; the CPU's 10 MB/s = the link's */
    cr_expect_float_eq(cpu_makespan(topos[t], 2,
                                    ", \"cpu\": {\"share\": 1, \"send_ms_per_mb\": 100}"),
                       2 * (1.7 + hop[t]), 1e-9, "%s", topos[t]);
  }
  /* p = 0.2 over 400 rounds: the stalls are whole multiples of 50 ms, and
   * their count is within 4 standard deviations (8) of 80. */
  enum { N = 400 };
  double extra = cpu_makespan(topos[0], N,
                              ", \"cpu\": {\"share\": 0.5, \"period_ms\": 100,"
                              " \"send_ms_per_mb\": 10}") - N * 1.7;
  double k = extra / 0.05;
  cr_expect_float_eq(k, round(k), 1e-6, "whole stalls: %.9g", k);
  cr_expect(fabs(k - 0.2 * N) <= 32, "%.0f stalls in %d rounds, want about %g", k, N, 0.2 * N);
}

Test(regime_fl, a_bad_cpu_block_names_the_field) {
  const char *bad[] = {"{\"share\": 0, \"send_ms_per_mb\": 1}", "{\"share\": 0.5}",
                       "{\"share\": 0.5, \"send_ms_per_mb\": 1, \"period\": 100}",
                       "{\"share\": 1.5, \"send_ms_per_mb\": 1}", "0.5"};
  const char *want[] = {"cpu.json: devices[0].cpu.share: ",
                        "cpu.json: devices[0].cpu.send_ms_per_mb: required key is missing",
                        "cpu.json: devices[0].cpu.period: unknown key (allowed here: share, "
                        "period_ms, send_ms_per_mb); did you mean \"period_ms\"?",
                        "cpu.json: devices[0].cpu.share: ",
                        "cpu.json: devices[0].cpu: "};
  for (int k = 0; k < 5; k++) {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\": \"cpu\", \"task\": \"mnist\", \"model_bytes\": 1, \"rounds\": 1,"
             " \"samples_per_round\": 10, \"regime\": {\"kind\": \"pma\"},"
             " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\","
             " \"cpu\": %s}],"
             " \"network\": {\"links\": {\"srv\": {\"bandwidth_mbps\": 8}}}}",
             bad[k]);
    hs_error err = {0};
    hs_scenario *sc = hs_scenario_parse(text, "cpu.json", DATA, NULL, 0, &err);
    cr_expect_null(sc, "%s", bad[k]);
    cr_expect(strstr(err.msg, want[k]) == err.msg, "%s: got: %s", bad[k], err.msg);
    hs_scenario_destroy(sc);
  }
}
