/* test_dyn_shared.c: the shared slowdown (sim/run/dynamics/dyn_shared.c,
 * dynamics.shared_slowdown): the factor's law (mean 1, var ln f = ln(1 +
 * cv^2)), its determinism and random access, the correlation it gives two
 * devices' compute times against the closed form, the devices' own draws
 * left as they were, the period (rounds, period_s), the default (CV 0 or no
 * key: the same bytes as without it) and the loader's refusals. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyn.h"
#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "devices/hs_profile.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "test_run_helpers.h"

#define DATA HS_SOURCE_DIR "/tests/data/dyn"
#define NOISY(n) "{\"name\": \"" n "\", \"profile\": \"profiles/det-noisy.json\"}"
#define THREE "[" NOISY("a") ", " NOISY("b") ", " NOISY("c") "]"
#define ROUNDS 2000
#define OWN_CV 0.05 /* det-noisy's tau_cv */

static hs_scenario *parse(const char *regime, const char *dynamics, uint32_t rounds,
                          hs_error *err) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"name\": \"shared\", \"seed\": 5, \"task\": \"mnist\", \"model_bytes\": 1,"
           " \"rounds\": %u, \"samples_per_round\": 3000, \"regime\": %s,"
           " \"policy\": {\"kind\": \"equal\"}, \"devices\": " THREE ", %s%s%s"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1e9, \"latency_ms\": 0}}}}",
           rounds, regime, dynamics ? "\"dynamics\": " : "", dynamics ? dynamics : "",
           dynamics ? "," : "");
  return hs_scenario_parse(text, "shared.json", DATA, NULL, 0, err);
}

static hs_scenario *scenario(const char *regime, const char *dynamics, uint32_t rounds) {
  hs_error err = {0};
  hs_scenario *sc = parse(regime, dynamics, rounds, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  return sc;
}

/* Runs sc into a new folder (returned). */
static char *run_into(const hs_scenario *sc) {
  char *dir = tmpdir();
  hs_run_opts o = {.out_dir = dir, .force = true};
  hs_summary s;
  hs_error err = {0};
  cr_assert_eq(hs_run(sc, &o, &s, &err), HS_OK, "%s", err.msg);
  return dir;
}

/* devices.csv's compute_s of devices a, b, c: t[3 * round + device]. */
static double *compute_times(const char *dir, uint32_t rounds) {
  char *text = slurp(dir, "devices.csv");
  double *t = hs_calloc(3 * (size_t)rounds, sizeof *t);
  size_t rows = 0;
  for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
    unsigned rd;
    char dev[16];
    unsigned long long n;
    double c;
    cr_assert_eq(sscanf(line + 1, "%u,%15[^,],%llu,%lf", &rd, dev, &n, &c), 4);
    cr_assert(rd < rounds && dev[0] >= 'a' && dev[0] <= 'c' && !dev[1]);
    t[3 * rd + (size_t)(dev[0] - 'a')] = c;
    rows++;
  }
  cr_assert_eq(rows, 3 * (size_t)rounds);
  hs_free(text);
  return t;
}

static double corr_log(const double *t, size_t rounds, size_t x, size_t y) {
  double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0;
  for (size_t r = 0; r < rounds; r++) mx += log(t[3 * r + x]), my += log(t[3 * r + y]);
  mx /= (double)rounds;
  my /= (double)rounds;
  for (size_t r = 0; r < rounds; r++) {
    double a = log(t[3 * r + x]) - mx, b = log(t[3 * r + y]) - my;
    sxx += a * a, syy += b * b, sxy += a * b;
  }
  return sxy / sqrt(sxx * syy);
}

static double lnv(double cv) { return log1p(cv * cv); } /* var ln f of a mean-1 lognormal */

Test(dyn_shared, the_factor_has_mean_1_and_its_log_variance) {
  hs_task_noise n;
  hs_task_noise_init(&n, 0.125);
  const size_t N = 40000;
  double sum = 0, sl = 0, sll = 0;
  for (size_t p = 0; p < N; p++) {
    double f = dyn_shared_draw(11, 42, DYN_RNG_SHARED_GROUP, p, &n);
    sum += f, sl += log(f), sll += log(f) * log(f);
  }
  double mean = sum / (double)N, vl = sll / (double)N - (sl / N) * (sl / N);
  /* sd of the mean: cv / sqrt(N) = 6.3e-4; of the log variance about 7e-5 */
  cr_expect_float_eq(mean, 1.0, 4 * 0.125 / sqrt((double)N), "mean %g", mean);
  cr_expect_float_eq(vl, lnv(0.125), 4 * lnv(0.125) * sqrt(2.0 / (double)N), "var ln f %g", vl);
  /* Random access and determinism: the same key, the same bits, in any order;
   * another period, group or seed, another factor. */
  double f7 = dyn_shared_draw(11, 42, DYN_RNG_SHARED_GROUP, 7, &n);
  cr_expect_eq(dyn_shared_draw(11, 42, DYN_RNG_SHARED_GROUP, 7, &n), f7);
  cr_expect_neq(dyn_shared_draw(11, 42, DYN_RNG_SHARED_GROUP, 8, &n), f7);
  cr_expect_neq(dyn_shared_draw(11, 43, DYN_RNG_SHARED_GROUP, 7, &n), f7);
  cr_expect_neq(dyn_shared_draw(12, 42, DYN_RNG_SHARED_GROUP, 7, &n), f7);
  cr_expect_neq(dyn_shared_draw(11, 42, DYN_RNG_SHARED_WIDE, 7, &n), f7);
  hs_task_noise none;
  hs_task_noise_init(&none, 0);
  cr_expect_eq(dyn_shared_draw(11, 42, DYN_RNG_SHARED_GROUP, 7, &none), 1.0);
}

/* a outside every group, b and c in group g: a and b share the scenario-wide
 * factor, b and c also the group's. On log times (overhead 0, equal
 * allocations) corr = shared variance / sqrt(product of the variances). */
Test(dyn_shared, two_devices_correlate_as_the_closed_form_says, .timeout = 60) {
  const double cw = 0.12, cg = 0.10;
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}",
                             "{\"shared_slowdown\": {\"cv\": 0.12, \"groups\":"
                             " {\"g\": {\"cv\": 0.1, \"devices\": [\"b\", \"c\"]}}}}",
                             ROUNDS);
  char *dir = run_into(sc);
  double *t = compute_times(dir, ROUNDS);
  double vo = lnv(OWN_CV), vw = lnv(cw), vg = lnv(cg);
  double want_ab = vw / sqrt((vw + vo) * (vw + vg + vo)), want_bc = (vw + vg) / (vw + vg + vo);
  double ab = corr_log(t, ROUNDS, 0, 1), bc = corr_log(t, ROUNDS, 1, 2);
  /* sampling sd of a correlation: (1 - rho^2) / sqrt(n) (0.012 and 0.004 here) */
  double n = ROUNDS;
  cr_expect_float_eq(ab, want_ab, 4 * (1 - want_ab * want_ab) / sqrt(n), "a-b %g, want %g", ab,
                     want_ab);
  cr_expect_float_eq(bc, want_bc, 4 * (1 - want_bc * want_bc) / sqrt(n), "b-c %g, want %g", bc,
                     want_bc);
  /* The mean compute time stays samples x tau_s (1000 x 1 ms): the factors have mean 1.
   * sd of the mean of a: sqrt(e^(vw + vo) - 1) / sqrt(n). */
  double ma = 0;
  for (size_t r = 0; r < ROUNDS; r++) ma += t[3 * r] / ROUNDS;
  cr_expect_float_eq(ma, 1.0, 4 * sqrt(expm1(vw + vo) / n), "mean of a %g", ma);

  /* The devices' own draws are untouched: against the run without the block,
   * b and c are scaled by the same factor each round (the product of both),
   * and a by the scenario-wide one alone. */
  hs_scenario *plain = scenario("{\"kind\": \"pma\"}", NULL, ROUNDS);
  char *pdir = run_into(plain);
  double *p = compute_times(pdir, ROUNDS);
  double gsum = 0;
  for (size_t r = 0; r < ROUNDS; r++) {
    double fb = t[3 * r + 1] / p[3 * r + 1], fc = t[3 * r + 2] / p[3 * r + 2];
    cr_assert_float_eq(fb, fc, 1e-12 * fb, "round %zu: b x %g, c x %g", r, fb, fc);
    gsum += log(fb / (t[3 * r] / p[3 * r])); /* the group's own factor */
  }
  cr_expect_float_eq(gsum / n, -vg / 2, 4 * sqrt(vg / n), "mean ln G %g", gsum / n);

  /* Determinism: the same scenario and seed, the same bytes. */
  char *again = run_into(sc);
  char *x = slurp(dir, "devices.csv"), *y = slurp(again, "devices.csv");
  cr_expect_str_eq(x, y);
  hs_free(x), hs_free(y), hs_free(t), hs_free(p);
  hs_free(dir), hs_free(pdir), hs_free(again);
  hs_scenario_destroy(sc);
  hs_scenario_destroy(plain);
}

static void expect_same(const char *dyn_a, const char *dyn_b, const char *regime) {
  hs_scenario *a = scenario(regime, dyn_a, 5), *b = scenario(regime, dyn_b, 5);
  char *da = run_into(a), *db = run_into(b);
  static const char *const files[] = {"rounds.csv", "devices.csv"};
  for (size_t k = 0; k < 2; k++) {
    char *x = slurp(da, files[k]), *y = slurp(db, files[k]);
    cr_expect_str_eq(x, y, "%s: %s against %s", files[k], dyn_a ? dyn_a : "none", dyn_b);
    hs_free(x), hs_free(y);
  }
  hs_free(da), hs_free(db);
  hs_scenario_destroy(a);
  hs_scenario_destroy(b);
}

Test(dyn_shared, cv_0_is_the_same_bytes_as_without_it) {
  const char *zero = "{\"shared_slowdown\": {\"cv\": 0, \"period_s\": 3, \"groups\":"
                     " {\"g\": {\"cv\": 0, \"devices\": [\"b\", \"c\"]}}}}";
  expect_same(zero, "{}", "{\"kind\": \"pma\"}");
  expect_same(zero, "{}", "{\"kind\": \"ddp\"}");
  expect_same(zero, "{}", "{\"kind\": \"fedasync\"}");
}

/* The period: every round by default (ddp: all steps of a round share it);
 * with period_s longer than the run, one factor for the whole run. */
Test(dyn_shared, one_factor_per_period) {
  const char *regimes[] = {"{\"kind\": \"pma\"}", "{\"kind\": \"ddp\", \"steps_per_round\": 4}"};
  for (size_t k = 0; k < 2; k++) {
    hs_scenario *plain = scenario(regimes[k], "{}", 6);
    hs_scenario *per_round = scenario(regimes[k], "{\"shared_slowdown\": {\"cv\": 0.3}}", 6);
    hs_scenario *one = scenario(regimes[k],
                                "{\"shared_slowdown\": {\"cv\": 0.3, \"period_s\": 1e9}}", 6);
    char *dp = run_into(plain), *dr = run_into(per_round), *d1 = run_into(one);
    double *p = compute_times(dp, 6), *r = compute_times(dr, 6), *o = compute_times(d1, 6);
    double f0 = o[0] / p[0];
    bool rounds_differ = false;
    for (size_t i = 0; i < 18; i++) {
      cr_expect_float_eq(o[i] / p[i], f0, 1e-12, "%s: period_s 1e9: one factor", regimes[k]);
      /* a round's devices share its factor (ddp: over its 4 steps) */
      cr_expect_float_eq(r[i] / p[i], r[i / 3 * 3] / p[i / 3 * 3], 1e-12, "%s, row %zu",
                         regimes[k], i);
      rounds_differ = rounds_differ || fabs(r[i] / p[i] - r[0] / p[0]) > 1e-9;
    }
    cr_expect(rounds_differ, "%s: a new factor every round", regimes[k]);
    hs_free(p), hs_free(r), hs_free(o), hs_free(dp), hs_free(dr), hs_free(d1);
    hs_scenario_destroy(plain);
    hs_scenario_destroy(per_round);
    hs_scenario_destroy(one);
  }
}

/* dynamics.devices.NAME.shared_loading b: the device's factor is F^b x
 * exp((b - b^2) s2 / 2), lognormal with mean 1 and log-variance b^2 s2. a at
 * b 0 is the run without the block exactly; b at 0.5 and c at 1 (the
 * default) take the same factor, b's as the square root, mean-corrected. */
Test(dyn_shared, a_loading_scales_the_factor_on_log_time, .timeout = 60) {
  const double cw = 0.3, lb = 0.5;
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}",
                             "{\"shared_slowdown\": {\"cv\": 0.3}, \"devices\":"
                             " {\"a\": {\"shared_loading\": 0}, \"b\": {\"shared_loading\": 0.5}}}",
                             ROUNDS);
  hs_scenario *plain = scenario("{\"kind\": \"pma\"}", NULL, ROUNDS);
  char *dir = run_into(sc), *pdir = run_into(plain);
  double *t = compute_times(dir, ROUNDS), *p = compute_times(pdir, ROUNDS);
  double s2 = lnv(cw), n = ROUNDS, mb = 0, lb_sum = 0, lb_sq = 0;
  for (size_t r = 0; r < ROUNDS; r++) {
    /* compute_s is an end minus a start on the run's clock, which other
     * devices' factors move: equal to the clock's rounding */
    cr_assert_float_eq(t[3 * r], p[3 * r], 1e-12 * p[3 * r], "round %zu: a at loading 0 moved: %.17g vs %.17g",
                       r, t[3 * r], p[3 * r]);
    double fb = t[3 * r + 1] / p[3 * r + 1], fc = t[3 * r + 2] / p[3 * r + 2];
    /* the same factor: ln fb = b ln fc + (b - b^2) s2 / 2 - b (-s2 / 2) ... exactly */
    double want = pow(fc, lb) * exp(0.5 * (lb - lb * lb) * s2);
    cr_assert_float_eq(fb, want, 1e-9 * want, "round %zu: b x %g, want %g", r, fb, want);
    mb += fb / n, lb_sum += log(fb), lb_sq += log(fb) * log(fb);
  }
  double vb = lb_sq / n - (lb_sum / n) * (lb_sum / n);
  cr_expect_float_eq(mb, 1.0, 4 * sqrt(expm1(lb * lb * s2) / n), "mean of b's factor %g", mb);
  cr_expect_float_eq(vb, lb * lb * s2, 4 * lb * lb * s2 * sqrt(2.0 / n), "var ln b's factor %g", vb);
  /* corr(b, c) on log times: b s2 / sqrt((b^2 s2 + vo)(s2 + vo)) */
  double vo = lnv(OWN_CV), want_bc = lb * s2 / sqrt((lb * lb * s2 + vo) * (s2 + vo));
  double bc = corr_log(t, ROUNDS, 1, 2);
  cr_expect_float_eq(bc, want_bc, 4 * (1 - want_bc * want_bc) / sqrt(n), "b-c %g, want %g", bc, want_bc);
  hs_free(t), hs_free(p), hs_free(dir), hs_free(pdir);
  hs_scenario_destroy(sc);
  hs_scenario_destroy(plain);
}

static void expect_refused(const char *dynamics, const char *needle) {
  hs_error err = {0};
  hs_scenario *sc = parse("{\"kind\": \"pma\"}", dynamics, 2, &err);
  cr_expect_null(sc, "%s loads", dynamics);
  if (sc) hs_scenario_destroy(sc);
  cr_expect(strstr(err.msg, needle) != NULL, "%s: %s (want %s)", dynamics, err.msg, needle);
  cr_expect(strchr(err.msg, '\n') == NULL, "one line: %s", err.msg);
}

Test(dyn_shared, bad_input_is_one_line_naming_the_field) {
  expect_refused("{\"shared_slowdown\": {\"cv\": -0.1}}", "dynamics.shared_slowdown.cv");
  expect_refused("{\"shared_slowdown\": {\"cv\": 11}}", "dynamics.shared_slowdown.cv");
  expect_refused("{\"shared_slowdown\": {\"cvv\": 0.1}}", "cvv");
  expect_refused("{\"shared_slowdown\": {\"period_s\": -1}}", "period_s");
  expect_refused("{\"shared_slowdown\": {\"groups\": {\"g\": {\"devices\": [\"a\"]}}}}",
                 "dynamics.shared_slowdown.groups.g.cv: required key is missing");
  expect_refused("{\"shared_slowdown\": {\"groups\": {\"g\": {\"cv\": 0.1, \"devices\": [\"z\"]}}}}",
                 "no device or entry \"z\"");
  expect_refused("{\"shared_slowdown\": {\"groups\": {\"g\": {\"cv\": 0.1, \"devices\": [\"aa\"]}}}}",
                 "groups.g.devices[0]: no device or entry \"aa\"; did you mean \"a\"?");
  expect_refused("{\"shared_slowdown\": {\"groups\": {\"g\": {\"cv\": 0.1, \"devices\": []}}}}",
                 "groups.g.devices");
  expect_refused("{\"shared_slowdown\": {\"groups\": {\"g\": {\"cv\": 0.1, \"devices\": [\"a\"]},"
                 " \"h\": {\"cv\": 0.1, \"devices\": [\"b\", \"a\"]}}}}",
                 "device \"a\" is in group \"g\" already");
  expect_refused("{\"devices\": {\"a\": {\"shared_loading\": 0.5}}}",
                 "dynamics.devices.a.shared_loading: there is no dynamics.shared_slowdown");
  expect_refused("{\"shared_slowdown\": {\"cv\": 0.1}, \"devices\": {\"a\": {\"shared_loading\": -1}}}",
                 "dynamics.devices.a.shared_loading");
}

/* --- the round trip through hetsim-probe import ------------------------------ */
#ifdef PROBE_BIN
/* Simulated boards' logs (round, samples, time_s from devices.csv) given to
 * hetsim-probe import --run-times give back the scenario's shared CV and the
 * boards' own tau_cv, within sampling error, and the snippet to paste. */
Test(dyn_shared, probe_import_recovers_the_split, .timeout = 60) {
  const uint32_t R = 1000;
  hs_scenario *sc = scenario("{\"kind\": \"pma\"}", "{\"shared_slowdown\": {\"cv\": 0.12}}", R);
  char *dir = run_into(sc);
  double *t = compute_times(dir, R);
  char path[3][600];
  for (size_t b = 0; b < 3; b++) {
    snprintf(path[b], sizeof path[b], "%s/log-%c.csv", dir, (char)('a' + b));
    FILE *f = fopen(path[b], "w");
    cr_assert_not_null(f);
    fprintf(f, "round,samples,time_s\n");
    for (uint32_t r = 0; r < R; r++) fprintf(f, "%u,1000,%.17g\n", r, t[3 * r + b]);
    cr_assert_eq(fclose(f), 0);
  }
  char cmd[3000], line[512];
  snprintf(cmd, sizeof cmd,
           "%s import --task mnist --times %s --run-times %s --run-times %s --threads 1 --out %s/p.json"
           " --busy-w 9 --busy-w-source 'test figure' --idle-w 3 --idle-w-source 'test figure'",
           PROBE_BIN, path[0], path[1], path[2], dir);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  double cv = -1;
  while (fgets(line, sizeof line, p))
    if (!strncmp(line, "scenario: ", 10))
      cr_assert_eq(sscanf(line, "scenario: \"dynamics\": {\"shared_slowdown\": {\"cv\": %lf}}", &cv), 1,
                   "%s", line);
  cr_assert_eq(pclose(p), 0);
  /* sd of a CV from n degrees of freedom: about cv / sqrt(2 n) */
  cr_expect_float_eq(cv, 0.12, 4 * 0.12 / sqrt(2.0 * R), "shared cv %g", cv);
  hs_error err = {0};
  char out[700];
  snprintf(out, sizeof out, "%s/p.json", dir);
  hs_profile *pr = hs_profile_load(out, &err);
  cr_assert_not_null(pr, "%s", err.msg);
  double own = hs_profile_task(pr, "mnist")->tau_cv;
  cr_expect_float_eq(own, OWN_CV, 4 * OWN_CV / sqrt(2.0 * R * 2 / 3), "own tau_cv %g", own);
  hs_profile_destroy(pr);
  char *text = slurp(dir, "p.json");
  cr_expect(strstr(text, "dynamics.shared_slowdown.cv") != NULL, "the provenance names the key");
  hs_free(text);
  hs_free(t);
  hs_free(dir);
  hs_scenario_destroy(sc);
}
#endif
