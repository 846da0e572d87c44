/* test_run_schedule.c: the run options `hetsim check` stands on (hs_run.h):
 * a fixed allocation schedule in place of the controller, the expectation of
 * the compute times (no_compute_noise) and the per-device-round observer.
 *
 * Closed forms on the deterministic synthetic profiles of tests/data/run
 * (tau_cv = 0; det-fast: tau 1 ms, overhead 0.5 s; det-mid: 2 ms, 0.25 s;
 * det-slow: 4 ms, 0 s) behind a link so fast that a 1-byte model's transfer
 * is below 1e-12 s: a device's compute is overhead_s + n tau_s, its round's
 * comm ~ 0, the round lasts as long as its slowest participant, and each
 * device waits the rest. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/hs_run.h"
#include "sim/hs_scenario.h"

#define DATA HS_SOURCE_DIR "/tests/data/run"

static hs_scenario *scenario(const char *fast_profile, uint32_t rounds) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"schedule\", \"seed\": 3, \"task\": \"mnist\", \"model_bytes\": 1,"
           " \"rounds\": %u, \"samples_per_round\": 300, \"regime\": {\"kind\": \"pma\"},"
           " \"policy\": {\"kind\": \"equal\"},"
           " \"devices\": [{\"name\": \"fast\", \"profile\": \"%s\"},"
           "  {\"name\": \"mid\", \"profile\": \"profiles/det-mid.json\"},"
           "  {\"name\": \"slow\", \"profile\": \"profiles/det-slow.json\"}],"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0}}}}",
           rounds, fast_profile);
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "schedule.json", DATA, NULL, 0, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}

typedef struct seen {
  hs_run_device_round d[16];
  size_t n;
  double start[4], end[4];
  uint32_t rounds;
} seen;

static void on_device(void *ud, const hs_run_device_round *d) {
  seen *s = ud;
  cr_assert_lt(s->n, 16);
  s->d[s->n++] = *d;
}

static void on_round(void *ud, uint32_t round, double start_s, double end_s) {
  seen *s = ud;
  cr_assert_eq(round, s->rounds, "rounds end in order");
  s->start[round] = start_s;
  s->end[round] = end_s;
  s->rounds++;
}

Test(run_schedule, replaces_the_controller_round_by_round) {
  hs_scenario *sc = scenario("profiles/det-fast.json", 2);
  static const uint64_t sched[] = {100, 50, 150, /* round 1: */ 10, 20, 30};
  seen s = {0};
  hs_run_opts o = {.schedule = sched,
                   .schedule_rounds = 2,
                   .on_device_round = on_device,
                   .on_round_end = on_round,
                   .userdata = &s};
  hs_summary sum;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, &o, &sum, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(s.n, 6);
  cr_assert_eq(s.rounds, 2);
  /* compute = overhead + n tau; the round = the slowest participant */
  static const double want[] = {0.5 + 100 * 0.001, 0.25 + 50 * 0.002, 150 * 0.004,
                                0.5 + 10 * 0.001,  0.25 + 20 * 0.002, 30 * 0.004};
  static const char *const names[] = {"fast", "mid", "slow"};
  double round_s[2] = {0.6, 0.51};
  for (size_t k = 0; k < 6; k++) {
    const hs_run_device_round *d = &s.d[k];
    cr_assert_eq(d->round, k / 3);
    cr_assert_eq(d->device, k % 3);
    cr_assert_str_eq(d->name, names[k % 3]);
    cr_assert_eq(d->samples, sched[k], "the schedule's allocation, not equal's 100");
    cr_expect(fabs(d->compute_s - want[k]) < 1e-12, "%zu: compute %.15g, want %.15g", k,
              d->compute_s, want[k]);
    cr_expect(d->comm_s >= 0 && d->comm_s < 1e-9, "comm %g", d->comm_s);
    /* every device is on through the round: its three parts are the round */
    double span = s.end[d->round] - s.start[d->round];
    cr_expect(fabs(d->compute_s + d->comm_s + d->wait_s - span) < 1e-12);
    cr_expect(fabs(d->wait_s - (round_s[d->round] - d->compute_s - d->comm_s)) < 1e-9);
    cr_expect(fabs(d->train_j - 10.0 * d->compute_s) < 1e-9, "busy 10 W x compute");
  }
  for (int r = 0; r < 2; r++)
    cr_expect(fabs(s.end[r] - s.start[r] - round_s[r]) < 1e-9, "round %d: %.15g", r,
              s.end[r] - s.start[r]);
  cr_expect(fabs(sum.makespan_s - 1.11) < 1e-9, "makespan %.15g", sum.makespan_s);
  cr_expect_eq(sum.samples, 360);
  hs_scenario_destroy(sc);
}

Test(run_schedule, without_it_the_controller_decides) {
  hs_scenario *sc = scenario("profiles/det-fast.json", 1);
  seen s = {0};
  hs_run_opts o = {.on_device_round = on_device, .userdata = &s};
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, &o, NULL, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(s.n, 3);
  for (size_t k = 0; k < 3; k++) cr_expect_eq(s.d[k].samples, 100, "equal splits 300");
  hs_scenario_destroy(sc);
}

Test(run_schedule, too_short_or_with_a_run_folder_is_refused) {
  hs_scenario *sc = scenario("profiles/det-fast.json", 2);
  static const uint64_t sched[] = {100, 100, 100, 100, 100, 100};
  hs_run_opts o = {.schedule = sched, .schedule_rounds = 1};
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, &o, NULL, &err), HS_EINVAL);
  cr_expect(strstr(err.msg,
                   "schedule.json: rounds: the allocation schedule has 1 rounds, the "
                   "scenario runs 2"),
            "%s", err.msg);
  o.schedule_rounds = 2;
  o.out_dir = "/nonexistent/never-made";
  cr_assert_eq(hs_run(sc, &o, NULL, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "writes no run folder"), "%s", err.msg);
  hs_scenario_destroy(sc);
}

/* rpi4 has tau_cv 0.05 on mnist: the expectation is overhead_s + n tau_s
 * exactly (1.0 + 100 x 0.000514); the scenario's noise draws around it. */
Test(run_schedule, no_compute_noise_gives_the_expectation) {
  hs_scenario *sc = scenario("rpi4", 1);
  static const uint64_t sched[] = {100, 100, 100};
  seen quiet = {0}, noisy = {0};
  hs_run_opts o = {.schedule = sched,
                   .schedule_rounds = 1,
                   .no_compute_noise = true,
                   .on_device_round = on_device,
                   .userdata = &quiet};
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, &o, NULL, &err), HS_OK, "%s", err.msg);
  cr_expect(fabs(quiet.d[0].compute_s - (1.0 + 100 * 0.000514)) < 1e-12, "%.15g",
            quiet.d[0].compute_s);
  o.no_compute_noise = false;
  o.userdata = &noisy;
  cr_assert_eq(hs_run(sc, &o, NULL, &err), HS_OK, "%s", err.msg);
  double dev = fabs(noisy.d[0].compute_s - quiet.d[0].compute_s);
  cr_expect(dev > 1e-9 && dev < 0.05, "the noise moves the draw a little: %g", dev);
  /* the deterministic devices are the same either way */
  cr_expect_eq(noisy.d[1].compute_s, quiet.d[1].compute_s);
  hs_scenario_destroy(sc);
}
