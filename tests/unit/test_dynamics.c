/* test_dynamics.c: devices that change (sim/run/dynamics/dyn*.c, regime_fl_round.c's
 * deadline): the thermal closed forms, hysteresis, a throttle in the middle
 * of a computation, availability intervals on the timeline, a deadline round
 * with a lost participant, compute_cv_adapted, the thermal profile block. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dyn.h"
#include "base/hs_alloc.h"
#include "devices/hs_profile.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "base/hs_util.h"
#include "test_tmpdir.h"

#define DATA HS_SOURCE_DIR "/tests/data/dyn"

/* The synthetic board of tests/data/dyn/profiles/det-hot.json. */
static const double speed[] = {1, 0.5}, busy[] = {1, 0.5}, trip[] = {NAN, 60}, rec[] = {NAN, 50};
static const hs_thermal_profile hot = {20, 5, 2, 2, speed, busy, trip, rec, 0, NULL};

Test(dynamics, constant_power_is_an_exponential_approach) {
  /* T_inf = 20 + 5 * 10 = 70, tau = 10 s */
  for (double t = 0; t <= 50; t += 7.5)
    cr_expect_float_eq(dyn_thermal_temp_after(&hot, 30, 10, t), 70 - 40 * exp(-t / 10), 1e-12);
  cr_expect_float_eq(dyn_thermal_cross_s(&hot, 30, 10, 60), 10 * log(4.0), 1e-12);
  cr_expect_float_eq(dyn_thermal_temp_after(&hot, 30, 10, 10 * log(4.0)), 60, 1e-12);
  /* Never: beyond T_inf, or on the wrong side. */
  cr_expect(isinf(dyn_thermal_cross_s(&hot, 30, 10, 75)));
  cr_expect(isinf(dyn_thermal_cross_s(&hot, 30, 10, 25)));
  cr_expect(isinf(dyn_thermal_cross_s(&hot, 30, 2, 60)));
}

Test(dynamics, trip_time_and_hysteresis) {
  dyn_thermal s = {30, 0};
  uint32_t to;
  cr_expect_float_eq(dyn_thermal_next_switch_s(&hot, &s, 10, &to), 10 * log(4.0), 1e-12);
  cr_expect_eq(to, 1);
  /* Busy power follows the level: 10 W at 0, 5 W at 1 (T_inf 45 < recover 50). */
  const double p[] = {10, 5};
  double cycle_up = 10 * log(2.0), cycle_down = 10 * log(3.0);
  dyn_thermal_advance(&hot, &s, p, 10 * log(4.0));
  cr_expect_eq(s.level, 1);
  cr_expect_float_eq(s.temp_c, 60, 1e-9);
  /* Between the thresholds nothing switches: at level 1 it cools to 50 in
   * 10 ln 3 s, then heats from 50 to 60 in 10 ln 2 s at level 0. */
  dyn_thermal_advance(&hot, &s, p, cycle_down - 1e-6);
  cr_expect_eq(s.level, 1);
  dyn_thermal_advance(&hot, &s, p, 2e-6);
  cr_expect_eq(s.level, 0);
  cr_expect_float_eq(s.temp_c, 70 - 20 * exp(-1e-6 / 10), 1e-9);
  dyn_thermal_advance(&hot, &s, p, cycle_up - 1e-6 - 1e-9);
  cr_expect_eq(s.level, 0);
  /* Idle (2 W everywhere): from level 1 at 60 it recovers at 50 and stays. */
  dyn_thermal h = {60, 1};
  const double idle[] = {2, 2};
  cr_expect_float_eq(dyn_thermal_next_switch_s(&hot, &h, 2, &to), 10 * log(30.0 / 20.0), 1e-12);
  dyn_thermal_advance(&hot, &h, idle, 1000);
  cr_expect_eq(h.level, 0);
  cr_expect_float_eq(h.temp_c, 30, 1e-9);
}

Test(dynamics, intervals_and_markov_paths) {
  dyn_pw p;
  const double on[] = {0, 2, 5, 7, 7, 9};
  dyn_pw_intervals(&p, on, 3);
  cr_expect_eq(dyn_pw_at(&p, 0), 1);
  cr_expect_eq(dyn_pw_at(&p, 1.999999), 1);
  cr_expect_eq(dyn_pw_at(&p, 2), 0);
  cr_expect_eq(dyn_pw_next(&p, 2), 5);
  cr_expect_eq(dyn_pw_next(&p, 5), 9); /* [5,7) and [7,9) touch: one interval */
  cr_expect_eq(dyn_pw_at(&p, 9), 0);
  cr_expect(isinf(dyn_pw_next(&p, 9)));
  dyn_pw_fini(&p);
  /* The same seed draws the same path whatever is asked first. */
  dyn_pw a, b;
  dyn_pw_markov(&a, 1, 42, DYN_RNG_COTENANT, 1, 10, 0.5, 5);
  dyn_pw_markov(&b, 1, 42, DYN_RNG_COTENANT, 1, 10, 0.5, 5);
  double late = dyn_pw_at(&b, 1000);
  double share = 0, t = 0;
  while (t < 1e5) {
    double n = dyn_pw_next(&a, t);
    if (dyn_pw_at(&a, t) < 1) share += fmin(n, 1e5) - t;
    t = n;
  }
  cr_expect_eq(dyn_pw_at(&a, 1000), late);
  cr_expect_eq(dyn_pw_next(&a, 1000), dyn_pw_next(&b, 1000));
  /* Loaded a third of the time (5 / (10 + 5)), within sampling error. */
  cr_expect_float_eq(share / 1e5, 1.0 / 3, 0.03);
  dyn_pw_fini(&a);
  dyn_pw_fini(&b);
}

static hs_scenario *scenario(const char *regime, const char *policy, const char *devices,
                             const char *dynamics, uint32_t rounds, uint64_t budget) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"name\": \"dyn\", \"seed\": 3, \"task\": \"mnist\", \"model_bytes\": 1,"
           " \"rounds\": %u, \"samples_per_round\": %llu, \"regime\": %s, \"policy\": %s,"
           " \"devices\": %s, %s%s"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0}}}}",
           rounds, (unsigned long long)budget, regime, policy, devices,
           dynamics ? "\"dynamics\": " : "", dynamics ? dynamics : "");
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "dyn.json", DATA, NULL, 0, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}

static hs_summary run(const hs_scenario *sc, const char *dir) {
  hs_run_opts o = {.out_dir = dir};
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, dir ? &o : NULL, &s, &err), HS_OK, "%s", err.msg);
  return s;
}

#define HOT "{\"name\": \"a\", \"profile\": \"profiles/det-hot.json\"}"

Test(dynamics, a_throttle_mid_computation_moves_its_end) {
  /* 20000 samples = 20 s of work at level 0, from the idle steady state 30 C:
   * level 0 until 60 C (10 ln 4 s), level 1 (half speed, 5 W) until 50 C
   * (10 ln 3 s, 5 ln 3 s of work), then level 0 for the rest. */
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}", "[" HOT "]",
                             "{\"thermal\": true},", 1, 20000);
  hs_summary s = run(sc, NULL);
  double t1 = 10 * log(4.0), t2 = 10 * log(3.0), rest = 20 - t1 - t2 / 2;
  cr_expect_float_eq(s.makespan_s, t1 + t2 + rest, 1e-9);
  cr_expect_float_eq(s.compute_j, 10 * t1 + 5 * t2 + 10 * rest, 1e-9);
  hs_scenario_destroy(sc);
  /* Without the block: 20 s at 10 W, as before. */
  sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}", "[" HOT "]", NULL, 1, 20000);
  s = run(sc, NULL);
  cr_expect_float_eq(s.makespan_s, 20, 1e-9);
  cr_expect_float_eq(s.compute_j, 200, 1e-9);
  cr_expect(isnan(s.compute_cv_adapted));
  hs_scenario_destroy(sc);
}

/* devices.csv rows of one device, by round: compute_s, wait_s, samples. */
static size_t rows_of(const char *dir, const char *dev, double *compute, double *wait,
                      unsigned long long *samples, size_t cap) {
  char path[512];
  snprintf(path, sizeof path, "%s/devices.csv", dir);
  hs_error err = {0};
  char *t = hs_read_file(path, NULL, &err);
  cr_assert_not_null(t, "%s", err.msg);
  size_t n = 0;
  char *save = NULL;
  for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned r;
    char name[32];
    unsigned long long k;
    double c, cm, w, e;
    if (sscanf(line, "%u,%31[^,],%llu,%lf,%lf,%lf,%lf", &r, name, &k, &c, &cm, &w, &e) != 7 ||
        strcmp(name, dev) || n == cap)
      continue;
    compute[n] = c;
    wait[n] = w;
    samples[n] = k;
    n++;
  }
  hs_free(t);
  return n;
}

static char *tmpdir(void) {
  char *d = hs_strdup("/tmp/hs-dyn-XXXXXX");
  cr_assert_not_null(test_mkdtemp_at(d));
  return d;
}

static void rmdir_all(const char *d) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
  cr_expect_eq(system(cmd), 0);
}

/* Writes csv as dir/away.csv and the "dynamics" block naming it into dyn. */
static void avail_block(const char *dir, const char *csv, char *dyn, size_t cap) {
  char trace[600];
  snprintf(trace, sizeof trace, "%s/away.csv", dir);
  FILE *f = fopen(trace, "w");
  cr_assert_not_null(f);
  fputs(csv, f);
  fclose(f);
  snprintf(dyn, cap, "{\"availability_trace\": \"%s\"},", trace);
}

Test(dynamics, availability_intervals_are_honoured_exactly) {
  /* b is on [0, 1.5) and [5, inf): it vanishes from round 0 at 1.5 s (its
   * work lost, 1.5 s of compute spent), sits out rounds 1 and 2 (off), and a
   * trains alone: 2 s per round. */
  char *dir = tmpdir();
  char dyn[700];
  avail_block(dir, "device,start_s,end_s\nb,0,1.5\nb,5,1e9\n", dyn, sizeof dyn);
  hs_scenario *sc = scenario(
      "{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}",
      "[" HOT ", {\"name\": \"b\", \"profile\": \"profiles/det-hot.json\"}]", dyn, 3, 4000);
  hs_summary s = run(sc, dir);
  cr_expect_float_eq(s.makespan_s, 6, 1e-9);
  cr_expect_eq(s.samples, 6000);
  double c[4], w[4];
  unsigned long long k[4];
  cr_assert_eq(rows_of(dir, "b", c, w, k, 4), 3);
  cr_expect_float_eq(c[0], 1.5, 1e-9);
  cr_expect_eq(k[0], 0);
  cr_expect_eq(c[1] + w[1] + c[2], 0); /* off, not waiting */
  cr_expect_float_eq(w[2], 1.0, 1e-9);  /* back at 5 s, idle until the round ends at 6 */
  cr_expect_float_eq(s.compute_cv_adapted, 0, 1e-12);
  hs_scenario_destroy(sc);
  rmdir_all(dir);
  hs_free(dir);
}

Test(dynamics, a_round_with_everyone_away_opens_when_one_returns) {
  /* a alone, on [0, 0.5) and [3, inf): it vanishes from round 0 at 0.5 s
   * (round over, nothing trained), round 1 finds it away and opens when it
   * returns at 3 s, then trains its 1000 samples (1 s). */
  char *dir = tmpdir();
  char dyn[700];
  avail_block(dir, "device,start_s,end_s\na,0,0.5\na,3,1e9\n", dyn, sizeof dyn);
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"kind\": \"equal\"}", "[" HOT "]", dyn, 2, 1000);
  hs_summary s = run(sc, dir);
  cr_expect_float_eq(s.makespan_s, 4, 1e-9);
  cr_expect_eq(s.samples, 1000);
  cr_expect_float_eq(s.compute_j, 10 * 0.5 + 10 * 1, 1e-9);
  hs_scenario_destroy(sc);
  rmdir_all(dir);
  hs_free(dir);
}

Test(dynamics, deadline_round_loses_the_late_participant) {
  /* slow needs 4 s for its 1000 samples; the server closes at 2.5 s. Its work
   * is lost and its 2.5 s of compute energy spent; it reports nothing, so the
   * time-only controller never sees it and keeps the equal split. */
  char *dir = tmpdir();
  hs_scenario *sc = scenario(
      "{\"kind\": \"pma\"}", "{\"kind\": \"time-only\"}",
      "[" HOT ", {\"name\": \"slow\", \"profile\": \"../run/profiles/det-slow.json\"}]",
      "{\"deadline_s\": 2.5},", 2, 2000);
  hs_summary s = run(sc, dir);
  cr_expect_float_eq(s.makespan_s, 5, 1e-9);
  cr_expect_eq(s.samples, 2000);
  double c[4], w[4];
  unsigned long long k[4];
  cr_assert_eq(rows_of(dir, "slow", c, w, k, 4), 2);
  cr_expect_float_eq(c[0], 2.5, 1e-9);
  cr_expect_eq(k[0], 0);
  cr_assert_eq(rows_of(dir, "a", c, w, k, 4), 2);
  cr_expect_eq(k[1], 1000);
  hs_scenario_destroy(sc);
  rmdir_all(dir);
  hs_free(dir);
  /* A regime without a deadline refuses the key at load: one line naming
   * the key and the regime. */
  const char *text =
      "{\"name\": \"dyn\", \"model_bytes\": 1, \"rounds\": 1, \"samples_per_round\": 1000,"
      " \"regime\": {\"kind\": \"ddp\"}, \"devices\": [" HOT "], \"dynamics\": {\"deadline_s\": 2.5},"
      " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0}}}}";
  hs_error err = {0};
  cr_expect_null(hs_scenario_parse(text, "dyn.json", DATA, NULL, 0, &err));
  cr_expect_eq(err.status, HS_EINVAL);
  cr_expect(strstr(err.msg, "dynamics.deadline_s: regime ddp has no round deadline") != NULL,
            "%s", err.msg);
  cr_expect(strchr(err.msg, '\n') == NULL, "one line: %s", err.msg);
}

Test(dynamics, compute_cv_adapted_is_the_mean_after_the_first_round) {
  char *dir = tmpdir();
  hs_scenario *sc = scenario(
      "{\"kind\": \"pma\"}", "{\"kind\": \"time-only\"}",
      "[{\"name\": \"f\", \"profile\": \"../run/profiles/det-fast.json\"},"
      " {\"name\": \"m\", \"profile\": \"../run/profiles/det-mid.json\"},"
      " {\"name\": \"s\", \"profile\": \"../run/profiles/det-slow.json\"}]",
      "{},", 4, 3000);
  hs_summary s = run(sc, dir);
  char path[512];
  snprintf(path, sizeof path, "%s/rounds.csv", dir);
  hs_error err = {0};
  char *t = hs_read_file(path, NULL, &err);
  cr_assert_not_null(t, "%s", err.msg);
  double cv[8], sum = 0;
  size_t n = 0;
  char *save = NULL;
  for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned r;
    double a, b, d, e, x;
    if (sscanf(line, "%u,%lf,%lf,%lf,%lf,%lf", &r, &a, &b, &d, &e, &x) == 6 && n < 8) cv[n++] = x;
  }
  hs_free(t);
  cr_assert_eq(n, 4);
  for (size_t i = 1; i < n; i++) sum += cv[i];
  cr_expect_float_eq(s.compute_cv_adapted, sum / 3, 1e-9);
  cr_expect_float_eq(s.compute_cv, (sum + cv[0]) / 4, 1e-9);
  cr_expect_gt(cv[0], 2 * s.compute_cv_adapted); /* the measured round is the uneven one */
  char *sj = NULL;
  snprintf(path, sizeof path, "%s/summary.json", dir);
  sj = hs_read_file(path, NULL, &err);
  cr_assert_not_null(sj);
  cr_expect(strstr(sj, "\"compute_cv_adapted\"") != NULL);
  hs_free(sj);
  hs_scenario_destroy(sc);
  rmdir_all(dir);
  hs_free(dir);
}

Test(dynamics, thermal_profile_block) {
  hs_error err = {0};
  char *path = hs_profile_find("rpi4", NULL, &err);
  cr_assert_not_null(path, "%s", err.msg);
  hs_profile *p = hs_profile_load(path, &err);
  hs_free(path);
  cr_assert_not_null(p, "%s", err.msg);
  const hs_thermal_profile *th = hs_profile_thermal(p);
  cr_assert_not_null(th);
  cr_expect_eq(th->nlevels, 3);
  cr_expect_eq(th->trip_c[1], 80);
  cr_expect_eq(th->trip_c[2], 85);
  hs_profile_destroy(p);
  static const char bad[] =
      "{\"format\": \"hetsim-profile/1\", \"name\": \"x\", \"board\": \"b\", \"arch\": "
      "\"x86_64\", \"cpu\": \"c\", \"idle_w\": 1, \"comm_w\": 1, \"provenance\": {\"kind\": "
      "\"estimated\", \"sources\": [\"s\"]}, \"tasks\": {\"mnist\": {\"tau_s\": 1, \"tau_cv\": 0, "
      "\"busy_w\": 2, \"overhead_s\": 0}}, \"thermal\": {\"ambient_c\": 20, \"r_c_per_w\": 1, "
      "\"c_j_per_c\": 1, \"levels\": [{\"speed\": 1, \"busy_factor\": 1}, {\"speed\": 0.5, "
      "\"busy_factor\": 0.5, \"trip_c\": 60, \"recover_c\": 60}], \"sources\": [\"s\"]}}";
  cr_expect_null(hs_profile_parse(bad, "x.json", &err));
  cr_expect(strstr(err.msg, "x.json: thermal.levels[1].recover_c: must be below") != NULL, "%s",
            err.msg);
}

/* --- HFL-DDP silos: their own deadband decision and data budget ------------ */

#include "policies/hs_policy.h"

/* Two silos {0,1} and {2,3}, time-only, deadband 0.05, 1000 samples each.
 * Silo A's times call for 1500/500 (a 50 % change); silo B's for 1029/971
 * (2.9 %, inside the band). */
static hs_controller *two_silos(bool per_silo) {
  hs_policy_config cfg;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&cfg, "time-only", &err), HS_OK, "%s", err.msg);
  cr_assert_eq(hs_policy_config_set(&cfg, "deadband", "0.05", &err), HS_OK, "%s", err.msg);
  static const uint32_t groups[] = {0, 0, 1, 1};
  hs_controller *c = hs_controller_create(&cfg, 4, groups, 4000, &err);
  cr_assert_not_null(c, "%s", err.msg);
  static const double policy_band[] = {-1, -1};
  if (per_silo)
    cr_assert_eq(hs_controller_set_group_rules(c, NULL, policy_band, 2, &err), HS_OK, "%s",
                 err.msg);
  const hs_telemetry t[] = {{1.0, 1, 1000}, {3.0, 3, 1000}, {1.0, 1, 1000}, {1.06, 1, 1000}};
  cr_assert_eq(hs_controller_update(c, t, 4, &err), HS_OK, "%s", err.msg);
  return c;
}

Test(dynamics, per_silo_deadband_rule) {
  /* Default: one decision for all: silo A crossed the band, so B moves too. */
  hs_controller *c = two_silos(false);
  const uint64_t *a = hs_controller_allocation(c);
  cr_expect_eq(a[0], 1500);
  cr_expect_eq(a[1], 500);
  cr_expect_eq(a[2], 1029);
  cr_expect_eq(a[3], 971);
  hs_controller_destroy(c);
  /* Per silo: A changes, B keeps its split. */
  c = two_silos(true);
  a = hs_controller_allocation(c);
  cr_expect_eq(a[0], 1500);
  cr_expect_eq(a[1], 500);
  cr_expect_eq(a[2], 1000);
  cr_expect_eq(a[3], 1000);
  cr_expect(hs_controller_reallocated(c));
  /* Rules are for before the first update. */
  hs_error err = {0};
  cr_expect_eq(hs_controller_set_group_rules(c, NULL, NULL, 2, &err), HS_EINVAL);
  hs_controller_destroy(c);
}

Test(dynamics, per_silo_data_budgets) {
  hs_policy_config cfg;
  hs_error err = {0};
  cr_assert_eq(hs_policy_config_init(&cfg, "time-only", &err), HS_OK, "%s", err.msg);
  static const uint32_t groups[] = {0, 0, 1, 1};
  hs_controller *c = hs_controller_create(&cfg, 4, groups, 4000, &err);
  cr_assert_not_null(c, "%s", err.msg);
  const uint64_t bad[] = {3000, 999};
  cr_expect_eq(hs_controller_set_group_rules(c, bad, NULL, 2, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "sum to 3999, not 4000") != NULL, "%s", err.msg);
  const uint64_t b[] = {3000, 1000};
  cr_assert_eq(hs_controller_set_group_rules(c, b, NULL, 2, &err), HS_OK, "%s", err.msg);
  const uint64_t *a = hs_controller_allocation(c);
  cr_expect(a[0] == 1500 && a[1] == 1500 && a[2] == 500 && a[3] == 500);
  const hs_telemetry t[] = {{1.0, 1, 1500}, {3.0, 3, 1500}, {1.0, 1, 500}, {2.0, 1, 500}};
  cr_assert_eq(hs_controller_update(c, t, 4, &err), HS_OK, "%s", err.msg);
  a = hs_controller_allocation(c);
  cr_expect_eq(a[0] + a[1], 3000); /* budgets never cross a silo */
  cr_expect_eq(a[2] + a[3], 1000);
  hs_controller_destroy(c);
  /* Whole run: the silos' budgets reach the devices. */
  char *dir = tmpdir();
  hs_scenario *sc = scenario(
      "{\"kind\": \"hfl-ddp\", \"steps_per_round\": 1, \"silos\": ["
      "{\"name\": \"A\", \"members\": [\"f\", \"m\"], \"samples\": 3000},"
      "{\"name\": \"B\", \"members\": [\"s\", \"a\"], \"samples\": 1000, \"deadband\": 0.7}]}",
      "{\"kind\": \"time-only\"}",
      "[{\"name\": \"f\", \"profile\": \"../run/profiles/det-fast.json\"},"
      " {\"name\": \"m\", \"profile\": \"../run/profiles/det-mid.json\"},"
      " {\"name\": \"s\", \"profile\": \"../run/profiles/det-slow.json\"}, " HOT "]",
      NULL, 2, 4000);
  hs_summary s = run(sc, dir);
  cr_expect_eq(s.samples, 8000);
  double cs[4], w[4];
  unsigned long long k[4];
  cr_assert_eq(rows_of(dir, "f", cs, w, k, 4), 2);
  cr_expect_eq(k[0], 1500);
  cr_expect_gt(k[1], 1500); /* silo A reallocates (policy deadband 0.05) */
  cr_assert_eq(rows_of(dir, "s", cs, w, k, 4), 2);
  cr_expect_eq(k[0], 500);
  cr_expect_eq(k[1], 500); /* silo B's own band (70 %) keeps its split (time-only: 200) */
  hs_scenario_destroy(sc);
  rmdir_all(dir);
  hs_free(dir);
}

/* --- hetsim-probe import ----------------------------------------------------- */
#ifdef PROBE_BIN
#include "probe.h"

#define FIX HS_SOURCE_DIR "/tests/data/probe-import"

Test(dynamics, probe_import_on_a_fixture_log) {
  hs_error err = {0};
  lrn_table t, p;
  cr_assert_eq(lrn_csv_load(FIX "/times.csv", &t, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(lrn_csv_load(FIX "/power.csv", &p, &err), HS_OK, "%s", err.msg);
  probe_import_result r;
  cr_assert_eq(probe_import_compute(&t, &p, &r, &err), HS_OK, "%s", err.msg);
  /* 6.2 s for 600 samples; rounds 0.010, 0.012, 0.009 s/sample */
  cr_expect_float_eq(r.tau_s, 6.2 / 600, 1e-15);
  double m = 6.2 / 600, d0 = 0.01 - m, d1 = 0.012 - m, d2 = 0.009 - m;
  cr_expect_float_eq(r.tau_cv, sqrt((d0 * d0 + d1 * d1 + d2 * d2) / 2) / m, 1e-12);
  cr_expect_eq(r.rounds, 3);
  cr_expect_float_eq(r.busy_w, 8, 1e-12);  /* every batch inside the 8 W plateau */
  cr_expect_float_eq(r.idle_w, 2, 1e-12);  /* the 11 readings before and after */
  cr_expect_eq(r.idle_readings, 11);
  cr_expect_eq(r.batch, 100);
  /* A batch outside the power log names both ranges. */
  t.v[5 * t.cols + (size_t)lrn_table_col(&t, "start_s")] = 30;
  cr_expect_neq(probe_import_compute(&t, &p, &r, &err), HS_OK);
  cr_expect(strstr(err.msg, "line 7") && strstr(err.msg, "power log covers"), "%s", err.msg);
  lrn_table_fini(&t);
  lrn_table_fini(&p);

  /* The command writes a profile the simulator loads. */
  char *dir = tmpdir();
  char cmd[1400], out[600];
  snprintf(out, sizeof out, "%s/myboard.json", dir);
  snprintf(cmd, sizeof cmd,
           "%s import --task mnist --times %s/times.csv --power %s/power.csv --threads 4 --board "
           "'my board' --out %s > /dev/null",
           PROBE_BIN, FIX, FIX, out);
  cr_assert_eq(system(cmd), 0);
  hs_profile *pr = hs_profile_load(out, &err);
  cr_assert_not_null(pr, "%s", err.msg);
  const hs_task_profile *tp = hs_profile_task(pr, "mnist");
  cr_assert_not_null(tp);
  cr_expect_float_eq(tp->tau_s, 6.2 / 600, 1e-7); /* the probe writes 6 significant digits */
  cr_expect_float_eq(tp->busy_w, 8, 1e-9);
  cr_expect(tp->energy_measured);
  cr_expect_float_eq(hs_profile_idle_w(pr), 2, 1e-9);
  hs_profile_destroy(pr);
  /* Without a power log and without estimates: refused, nothing written. */
  snprintf(out, sizeof out, "%s/none.json", dir);
  snprintf(cmd, sizeof cmd, "%s import --task mnist --times %s/times.csv --threads 1 --out %s 2>/dev/null",
           PROBE_BIN, FIX, out);
  int rc = system(cmd);
  cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
  cr_expect_neq(access(out, F_OK), 0);
  /* With estimates instead of a power log: a mixed profile. */
  snprintf(cmd, sizeof cmd,
           "%s import --task mnist --times %s/times.csv --threads 1 --out %s --busy-w 9 "
           "--busy-w-source 'vendor figure' --idle-w 3 --idle-w-source 'wall meter reading' > /dev/null",
           PROBE_BIN, FIX, out);
  cr_assert_eq(system(cmd), 0);
  pr = hs_profile_load(out, &err);
  cr_assert_not_null(pr, "%s", err.msg);
  cr_expect_float_eq(hs_profile_task(pr, "mnist")->busy_w, 9, 1e-9);
  cr_expect(!hs_profile_task(pr, "mnist")->energy_measured);
  hs_profile_destroy(pr);
  rmdir_all(dir);
  hs_free(dir);
}
/* The shipped rpi4 profile as text (hs_free). */
static char *rpi4_text(size_t *len) {
  hs_error err = {0};
  char *path = hs_profile_find("rpi4", NULL, &err);
  cr_assert_not_null(path, "%s", err.msg);
  char *text = hs_read_file(path, len, &err);
  hs_free(path);
  cr_assert_not_null(text, "%s", err.msg);
  return text;
}

/* The probe's checks accept a thermal block, and merging a new task into a
 * shipped profile keeps it. */
Test(dynamics, probe_merge_keeps_the_thermal_block) {
  hs_error err = {0};
  size_t len = 0;
  char *text = rpi4_text(&len);
  probe_json *j = probe_json_parse(text, len, &err);
  cr_assert_not_null(j, "%s", err.msg);
  cr_expect_eq(probe_profile_check(j, &err), HS_OK, "%s", err.msg);
  probe_json_destroy(j);
  probe_task_result res;
  memset(&res, 0, sizeof res);
  res.task = "extra";
  res.tau_s = 0.001;
  res.busy_w = 7;
  res.batch = 32;
  res.threads = 4;
  res.runs = res.runs_kept = 1;
  const char *src[] = {"synthetic", NULL};
  probe_profile_in in = {"rpi4", "Raspberry Pi 4 Model B (4 GB), BCM2711 rev C0 at its 1.8 GHz default",
                         "aarch64", "cpu", "k", "2026-12-01", 2.7, 3.83, "mixed", NULL, NULL, 0, src,
                         NULL, &res};
  char *out = probe_profile_render(&in, text, len, &err);
  hs_free(text);
  cr_assert_not_null(out, "%s", err.msg);
  hs_profile *p = hs_profile_parse(out, "merged.json", &err);
  free(out);
  cr_assert_not_null(p, "%s", err.msg);
  cr_expect_not_null(hs_profile_task(p, "extra"));
  const hs_thermal_profile *th = hs_profile_thermal(p);
  cr_assert_not_null(th);
  cr_expect_eq(th->trip_c[2], 85);
  hs_profile_destroy(p);
}
/* --sustain-s: a record drawn from the closed form (the synthetic board of
 * det-hot.json, sampled every 0.05 s while busy) gives back its RC, its
 * level and its trip and recover points. */
Test(dynamics, thermal_fit_recovers_the_board) {
  enum { N = 1200 };
  static double t[N], temp[N], freq[N], rate[N];
  dyn_thermal st = {30, 0}; /* idle steady state: 20 + 5 x 2 W */
  const double p[] = {10, 5};
  for (size_t i = 0; i < N; i++) {
    dyn_thermal_advance(&hot, &st, p, 0.05);
    t[i] = 0.05 * (double)(i + 1);
    temp[i] = st.temp_c;
    freq[i] = st.level ? 900000 : 1800000;
    rate[i] = st.level ? 500 : 1000;
  }
  probe_thermal_series s = {N, t, temp, freq, rate};
  probe_thermal_out th;
  hs_error err = {0};
  cr_assert_eq(probe_thermal_fit(&s, 30, 2, 10, &th, &err), HS_OK, "%s", err.msg);
  cr_expect_float_eq(th.r_c_per_w, 5, 0.05);
  cr_expect_float_eq(th.c_j_per_c, 2, 0.05);
  cr_expect_float_eq(th.ambient_c, 20, 0.2);
  cr_assert_eq(th.nlevels, 2);
  cr_expect_float_eq(th.speed[1], 0.5, 1e-12);
  cr_expect_float_eq(th.trip_c[1], 60, 0.2);
  cr_expect_float_eq(th.recover_c[1], 50, 0.2);
  cr_expect(th.recover_seen[1]);
  cr_expect_float_eq(th.busy_factor[1], 0.2 + 0.8 * 0.5, 1e-12); /* the stated assumption */
  /* Attached to a profile, the simulator loads the block. */
  size_t len = 0;
  char *z = rpi4_text(&len);
  char *out = probe_thermal_attach(z, &th, "synthetic", &err);
  hs_free(z);
  cr_assert_not_null(out, "%s", err.msg);
  hs_profile *pr = hs_profile_parse(out, "fitted.json", &err);
  free(out);
  cr_assert_not_null(pr, "%s", err.msg);
  cr_expect_float_eq(hs_profile_thermal(pr)->trip_c[1], 60, 0.2);
  hs_profile_destroy(pr);
  /* Too short a record is refused with the reason. */
  s.n = 4;
  cr_expect_neq(probe_thermal_fit(&s, 30, 2, 10, &th, &err), HS_OK);
  cr_expect(strstr(err.msg, "run longer") != NULL, "%s", err.msg);
}

/* cpufreq from a recorded sysfs tree. */
Test(dynamics, cpufreq_from_a_sysfs_fixture) {
  char *dir = tmpdir();
  char cmd[700];
  snprintf(cmd, sizeof cmd,
           "mkdir -p %s/sys/devices/system/cpu/cpu0/cpufreq && echo 1500000 > "
           "%s/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
           dir, dir);
  cr_assert_eq(system(cmd), 0);
  cr_expect_eq(probe_cpufreq_khz(dir), 1500000);
  cr_expect(isnan(probe_cpufreq_khz("/nonexistent-root")));
  rmdir_all(dir);
  hs_free(dir);
}
#endif
