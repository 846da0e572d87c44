/* test_regime_agc.c: the agc regime against closed forms and its codes'
 * invariants.
 *
 * Boards (tests/data/agc, tau_cv = 0): fast 1 ms/sample + 0.5 s overhead,
 * mid 2 ms + 0.25 s, slow 4 ms + 0 s; busy 10 W, comm 3 W, idle 2 W. One
 * 1 Gbit/s link with no latency is both access and server link. n = 3
 * partitions of 100 samples. With p = (0.1, 0.2, 0.3), D = 1, Z_res = 12 the
 * planner gives z = (6, 5, 4) and the S-shared rows {0,1}, {0,2}, {0}: the
 * workers compute 200, 200, 100 samples in 0.7, 0.65 and 0.4 s and send
 * 6064, 5064, 4064 bits (1000 coordinates and a 64-bit norm), 6.064 us,
 * 5.064 us and 4.064 us on the wire; the uploads never overlap. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "base/hs_util.h"
#include "regime_agc.h"
#include "test_tmpdir.h"

#define DATA HS_SOURCE_DIR "/tests/data/agc"
#define MAXROWS 64
/* The regime options of the closed forms: given p, 1000 coordinates. */
#define GIVEN_P ", \"p_rule\": \"given\", \"p\": [0.1, 0.2, 0.3], \"dim\": 1000"
#define GIVEN ", \"z_res\": 12" GIVEN_P

typedef struct row {
  double start, end, dur;
  int active, arrived, stragglers;
  double sent, in, energy, cum_bits, cum_energy, pmean, pred, meas, meas_rel;
} row;

/* --set overrides for the next load (one test sets them, then clears them). */
static const hs_override *load_ovr;
static size_t load_novr;

static hs_scenario *load(const char *regime_extra, uint32_t rounds, hs_error *err) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"name\": \"t\", \"seed\": 7, \"task\": \"mnist\", \"model_bytes\": "
           "4000,"
           " \"rounds\": %u, \"samples_per_round\": 300,"
           " \"regime\": {\"kind\": \"agc\", \"d_rule\": \"given\", \"d\": 1"
           " %s},"
           " \"policy\": {\"kind\": \"equal\"},"
           " \"devices\": [{\"name\": \"fast\", \"profile\": \"det-fast.json\", "
           "\"link\": \"lan\"},"
           "  {\"name\": \"mid\", \"profile\": \"det-mid.json\", \"link\": \"lan\"},"
           "  {\"name\": \"slow\", \"profile\": \"det-slow.json\", \"link\": "
           "\"lan\"}],"
           " \"network\": {\"server\": \"lan\", \"links\": {\"lan\": "
           "{\"bandwidth_mbps\": 1000}}}}",
           rounds, regime_extra);
  return hs_scenario_parse(text, "t.json", DATA, load_ovr, load_novr, err);
}

static double field(char **p) {
  char *s = *p, *e = strchr(s, ',');
  if (e) *e = 0;
  *p = e ? e + 1 : s + strlen(s);
  return *s && *s != '\n' ? strtod(s, NULL) : NAN;
}

/* Runs the regime options `extra` into a fresh folder; returns the rows of
 * agc.csv (and the whole file in *csv when asked). */
static size_t run_rows(const char *extra, uint32_t rounds, row *rows, hs_summary *sum, char **csv) {
  hs_error err = {0};
  hs_scenario *sc = load(extra, rounds, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char dir[] = "/tmp/hs-agc-XXXXXX";
  cr_assert_not_null(test_mkdtemp_at(dir));
  hs_run_opts ro = {.out_dir = dir};
  hs_status st = hs_run(sc, &ro, sum, &err);
  cr_assert_eq(st, HS_OK, "%s", err.msg);
  hs_scenario_destroy(sc);
  char path[256];
  snprintf(path, sizeof path, "%s/agc.csv", dir);
  size_t len = 0;
  char *text = hs_read_file(path, &len, &err);
  cr_assert_not_null(text, "%s", err.msg);
  size_t n = 0;
  char *save = NULL, *copy = hs_strdup(text);
  for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "iteration", 9)) continue;
    cr_assert_lt(n, MAXROWS);
    char *p = line;
    row *r = &rows[n++];
    field(&p);
    r->start = field(&p);
    r->end = field(&p);
    r->dur = field(&p);
    r->active = (int)field(&p);
    r->arrived = (int)field(&p);
    r->stragglers = (int)field(&p);
    r->sent = field(&p);
    r->in = field(&p);
    r->energy = field(&p);
    r->cum_bits = field(&p);
    r->cum_energy = field(&p);
    r->pmean = field(&p);
    r->pred = field(&p);
    r->meas = field(&p);
    r->meas_rel = field(&p);
  }
  hs_free(copy);
  if (csv)
    *csv = text;
  else
    hs_free(text);
  const char *names[] = {"agc.csv", "summary.json", "rounds.csv", "devices.csv"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
  return n;
}

#define T_FAST (0.7 + 6.064e-6)
#define T_MID (0.65 + 5.064e-6)
#define T_SLOW (0.4 + 4.064e-6)

Test(regime_agc, iteration_lasts_until_the_last_arrival_before_the_deadline) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(GIVEN ", \"deadline_s\": 10", 4, rows, &s, NULL);
  cr_assert_eq(n, 4);
  double e_fast = 0.7 * 10 + 6.064e-6 * 3;
  double e_mid = 0.65 * 10 + 5.064e-6 * 3 + (T_FAST - T_MID) * 2;
  double e_slow = 0.4 * 10 + 4.064e-6 * 3 + (T_FAST - T_SLOW) * 2;
  for (size_t i = 0; i < n; i++) {
    cr_expect_float_eq(rows[i].dur, T_FAST, 1e-12);
    cr_expect_eq(rows[i].active, 3);
    cr_expect_eq(rows[i].arrived, 3);
    cr_expect_eq(rows[i].stragglers, 0);
    cr_expect_float_eq(rows[i].sent, 6064 + 5064 + 4064, 1e-9, "sum z_i d + norms");
    cr_expect_float_eq(rows[i].in, rows[i].sent, 1e-9);
    cr_expect_float_eq(rows[i].energy, e_fast + e_mid + e_slow, 1e-7, "%.10g digits");
    cr_expect_float_eq(rows[i].pred, 0.599797312354, 1e-10, "the planner's n^2 / sum c^-1");
  }
  cr_expect_float_eq(s.makespan_s, 4 * T_FAST, 1e-12);
  cr_expect_float_eq(s.energy_j, 4 * (e_fast + e_mid + e_slow), 1e-9);
}

Test(regime_agc, a_straggler_cut_while_computing_spends_its_energy) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(GIVEN ", \"deadline_s\": 0.68", 3, rows, &s, NULL);
  cr_assert_eq(n, 3);
  double e_fast = 0.68 * 10; /* busy up to the deadline, message dropped */
  double e_mid = 0.65 * 10 + 5.064e-6 * 3 + (0.68 - T_MID) * 2;
  double e_slow = 0.4 * 10 + 4.064e-6 * 3 + (0.68 - T_SLOW) * 2;
  for (size_t i = 0; i < n; i++) {
    cr_expect_float_eq(rows[i].dur, 0.68, 1e-12, "the deadline");
    cr_expect_eq(rows[i].stragglers, 1);
    cr_expect_eq(rows[i].arrived, 2);
    cr_expect_float_eq(rows[i].sent, 5064 + 4064, 1e-9);
    cr_expect_float_eq(rows[i].energy, e_fast + e_mid + e_slow, 1e-7, "%.10g digits");
  }
  cr_expect_float_eq(s.compute_j, 3 * (6.8 + 6.5 + 4.0), 1e-9);
}

Test(regime_agc, a_straggler_cut_while_sending_counts_the_bits_it_sent) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(GIVEN ", \"deadline_s\": 0.700003", 2, rows, &s, NULL);
  cr_assert_eq(n, 2);
  for (size_t i = 0; i < n; i++) {
    cr_expect_eq(rows[i].stragglers, 1);
    cr_expect_float_eq(rows[i].in, 5064 + 4064, 1e-9);
    cr_expect_float_eq(rows[i].sent - rows[i].in, 3000, 1e-4, "3 us at 1 Gbit/s");
  }
}

Test(regime_agc, first_k_decodes_at_the_kth_arrival) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(GIVEN ", \"deadline_s\": 10, \"first_k\": 2", 2, rows, &s, NULL);
  cr_assert_eq(n, 2);
  cr_expect_float_eq(rows[0].dur, T_MID, 1e-12);
  cr_expect_eq(rows[0].stragglers, 1);
  cr_expect_float_eq(rows[0].sent, 5064 + 4064, 1e-9);
}

/* devices[].cpu (issue 24) on a coded message: fast's 4008-byte message at
 * 12500 ms of CPU per MB needs 50.1 ms of CPU, more than the 50 ms its quota
 * (share 0.5 of 100 ms) has, so it always waits 50 ms; its CPU moves
 * 8 x 0.5 / 12.5e-6 = 320 kbit/s, so the 32064 bits take 0.1002 s. */
Test(regime_agc, a_cpu_quota_stalls_and_slows_the_coded_message) {
  static const hs_override cpu = {"devices[0].cpu", "{\"share\": 0.5, \"send_ms_per_mb\": 12500}"};
  load_ovr = &cpu;
  load_novr = 1;
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(GIVEN_P ", \"scheme\": \"gd\", \"deadline_s\": 0.1", 2, rows, &s, NULL);
  load_ovr = NULL;
  load_novr = 0;
  cr_assert_eq(n, 2);
  for (size_t i = 0; i < n; i++)
    cr_expect_float_eq(rows[i].dur, 0.6 + 0.05 + 32064 / 320e3, 1e-12, "%.15g", rows[i].dur);
}

Test(regime_agc, gd_sends_full_precision_and_waits_for_all) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(GIVEN ", \"scheme\": \"gd\", \"deadline_s\": 0.1", 2, rows, &s, NULL);
  cr_assert_eq(n, 2);
  /* One partition each: 100 samples, 0.6 / 0.45 / 0.4 s; 32064 bits each. */
  cr_expect_float_eq(rows[0].dur, 0.6 + 32.064e-6, 1e-12, "no deadline");
  cr_expect_eq(rows[0].stragglers, 0);
  cr_expect_float_eq(rows[0].sent, 3 * 32064, 1e-9);
  cr_expect_float_eq(rows[0].pred, 0, 0);
}

Test(regime_agc, a_worker_without_bits_is_off_and_idles) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(GIVEN_P ", \"z_res\": 6, \"deadline_s\": 10", 1, rows, &s, NULL);
  cr_assert_eq(n, 1);
  /* Z_res = 6 gives b = (4, 2, 0): slow is off; fast holds 3 partitions. */
  cr_expect_eq(rows[0].active, 2);
  cr_expect_float_eq(rows[0].dur, 0.8 + 5.064e-6, 1e-12);
  cr_expect_float_eq(rows[0].sent, 5064 + 3064, 1e-9);
}

Test(regime_agc, stragglers_are_the_messages_that_missed_the_deadline) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(", \"z_res\": 12, \"dim\": 1000, \"p_rule\": \"model\", \"z_th\": 2", 40,
                      rows, &s, NULL);
  cr_assert_eq(n, 40);
  size_t total = 0, cut = 0;
  double deadline = 0;
  for (size_t i = 0; i < n; i++) deadline = fmax(deadline, rows[i].dur);
  for (size_t i = 0; i < n; i++) {
    cr_expect_eq(rows[i].arrived + rows[i].stragglers, rows[i].active);
    if (rows[i].stragglers > 0) {
      cr_expect_float_eq(rows[i].dur, deadline, 1e-12,
                         "a round with stragglers ends at the deadline");
      cut++;
    } else {
      cr_expect_leq(rows[i].dur, deadline);
    }
    cr_expect_leq(rows[i].in, rows[i].sent);
    total += (size_t)rows[i].stragglers;
  }
  cr_expect_gt(cut, 0, "the model's lags make stragglers");
  cr_expect_lt(cut, n, "and some rounds end early");
}

Test(regime_agc, p_from_profiles_against_the_deadline) {
  row rows[MAXROWS];
  hs_summary s;
  /* Deterministic boards: fast cannot finish by 0.68 s (p = p_max), the
   * others always can (p = 0). */
  size_t n = run_rows(
      ", \"dim\": 1000, \"p_rule\": \"profile\", "
      "\"deadline_s\": 0.68, \"p_min\": 0, \"p_max\": 0.9",
      1, rows, &s, NULL);
  cr_assert_eq(n, 1);
  cr_expect_float_eq(rows[0].pmean, 0.9 / 3, 1e-12);
}

/* first_k with p from the profiles, on a code whose loads do not depend on p
 * (issgd: one partition each, 4 bits each): the deterministic fast board is
 * always the third arrival (0.6 s against 0.45 and 0.4), so P(not among the
 * first 2) = 1 (clamped to p_max); the others always make it (p_min). */
Test(regime_agc, p_from_profiles_under_first_k) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(
      ", \"z_res\": 12, \"dim\": 1000, \"p_rule\": \"profile\", "
      "\"deadline_s\": 10, \"first_k\": 2, \"p_min\": 0, \"p_max\": 0.9, "
      "\"scheme\": \"issgd\"",
      1, rows, &s, NULL);
  cr_assert_eq(n, 1);
  cr_expect_float_eq(rows[0].pmean, 0.9 / 3, 1e-12);
  cr_expect_float_eq(rows[0].dur, 0.45 + 5.064e-6, 1e-12, "ends at the second arrival");
}

/* The automatic deadline is z_th times the slowest nominal arrival with the
 * load most workers carry: the shared layout's ceil((n + k - 1)/k) = 2
 * partitions (200 samples) for n = k = 3, the mean bits 12/3 + 1 = 5 (5064
 * bits, uploaded alone under the model's lags). The slow board needs 0.8 s, not
 * the 0.6 s of the fast board with one partition (the rounded-down load). An
 * iteration with stragglers lasts exactly the deadline. */
Test(regime_agc, automatic_deadline_uses_the_load_workers_carry) {
  row rows[MAXROWS];
  hs_summary s;
  size_t n = run_rows(", \"z_res\": 12, \"dim\": 1000, \"p_rule\": \"model\"", 6, rows, &s,
                      NULL);
  double deadline = 1.1 * (0.8 + 5064.0 / 1e9);
  size_t seen = 0;
  for (size_t i = 0; i < n; i++) {
    cr_expect_leq(rows[i].dur, deadline * (1 + 1e-12));
    if (rows[i].stragglers == 0) continue;
    cr_expect_float_eq(rows[i].dur, deadline, 1e-12, "iteration %zu", i);
    seen++;
  }
  cr_expect_gt(seen, 0, "some iteration had stragglers");
}

/* model_load plans each p_i from what its load leaves of the deadline, so the
 * straggle rate on the timeline matches the planned mean p (within 4
 * standard errors of 64 iterations x 3 workers); the model's p ignores the
 * load and, with the fast and mid boards finishing their 200 samples (the
 * shared layout's rows {0,1}, {0,2}) well before the slow board's nominal
 * 0.8 s, overstates it. */
Test(regime_agc, model_load_plans_the_straggling_the_timeline_shows) {
  enum { R = 64 };
  row rows[MAXROWS];
  hs_summary s;
  double rate[2], pm[2];
  const char *rules[] = {"model", "model_load"};
  for (int k = 0; k < 2; k++) {
    char extra[256];
    snprintf(extra, sizeof extra,
             ", \"z_res\": 12, \"dim\": 1000, \"layout\": \"shared\", \"p_rule\": \"%s\"",
             rules[k]);
    size_t n = run_rows(extra, R, rows, &s, NULL);
    cr_assert_eq(n, R);
    double strag = 0, act = 0;
    for (size_t i = 0; i < n; i++) {
      strag += rows[i].stragglers;
      act += rows[i].active;
    }
    rate[k] = strag / act;
    pm[k] = rows[0].pmean;
  }
  double se = sqrt(pm[1] * (1 - pm[1]) / (3.0 * R));
  cr_expect_leq(fabs(rate[1] - pm[1]), 4 * se, "model_load: rate %g, planned %g", rate[1], pm[1]);
  cr_expect_gt(pm[0] - rate[0], 4 * se, "model: rate %g, planned %g", rate[0], pm[0]);
}

Test(regime_agc, reestimating_from_lateness_is_deterministic) {
  row a[MAXROWS], b[MAXROWS];
  hs_summary s;
  char *ca = NULL, *cb = NULL;
  const char *opt = GIVEN ", \"deadline_s\": 0.68, \"reestimate_every\": 2, \"prior_weight\": 2";
  size_t n = run_rows(opt, 6, a, &s, &ca);
  run_rows(opt, 6, b, &s, &cb);
  cr_assert_eq(n, 6);
  cr_expect_str_eq(ca, cb);
  /* fast misses every round: after 2 rounds p_fast = (2 x 0.1 + 2) / 4 = 0.55
   */
  cr_expect_float_eq(a[1].pmean, 0.2, 1e-9);
  cr_expect_float_eq(a[2].pmean, (0.55 + (2 * 0.2) / 4 + (2 * 0.3) / 4) / 3, 1e-9);
  hs_free(ca);
  hs_free(cb);
}

/* --- codes ------------------------------------------------------------------
 */

static agc_opts opts_for(uint32_t z_res, uint32_t offset) {
  static char scheme[] = "proposed", alloc[] = "lag";
  agc_opts o = {0};
  o.scheme = scheme;
  o.allocator = alloc;
  o.z_res = z_res;
  o.offset = offset;
  o.lambda = 1;
  return o;
}

static void column_sums(const agc_code *c, double *col) {
  memset(col, 0, c->n * sizeof *col);
  for (size_t e = 0; e < c->L.nnz; e++) col[c->L.col[e]] += c->L.coef[e];
}

Test(regime_agc, proposed_code_matches_the_planner_and_the_general_error) {
  double p[] = {0.1, 0.2, 0.3, 0.4};
  agc_opts o = opts_for(16, 1);
  agc_code c;
  hs_error err = {0};
  cr_assert_eq(agc_code_build(&c, AGC_PROPOSED, &o, p, 4, 4, 1.20125, 1, &err), HS_OK, "%s",
               err.msg);
  cr_expect_float_eq(c.predicted, 0.97023802851, 1e-10, "spec case A");
  cr_expect_float_eq(agc_code_predicted(&c, p), c.predicted, 1e-12 * c.predicted);
  double col[4];
  column_sums(&c, col);
  for (size_t j = 0; j < 4; j++) cr_expect_float_eq(col[j], 1.0, 1e-12);
  agc_code_free(&c);
}

Test(regime_agc, osgc_known_answer) {
  double p[] = {0.1, 0.2, 0.3, 0.4};
  agc_opts o = opts_for(16, 2);
  agc_code c;
  hs_error err = {0};
  cr_assert_eq(agc_code_build(&c, AGC_OSGC, &o, p, 4, 4, 1.20125, 1, &err), HS_OK, "%s", err.msg);
  cr_expect_float_eq(c.predicted, 0.959072640, 1e-9, "spec: OSGC's true R at b+2, equal bits");
  cr_expect_float_eq(agc_code_predicted(&c, p), c.predicted, 1e-12);
  const double y[] = {2.138613861, 0.95049505, 0.554455446, 0.356435644};
  for (size_t i = 0; i < 4; i++) {
    double r = 0;
    for (size_t e = c.L.row[i]; e < c.L.row[i + 1]; e++) r += c.L.coef[e];
    cr_expect_float_eq(r, y[i], 1e-8);
    cr_expect_eq(c.z[i], 6, "equal bits 4 + offset 2");
  }
  agc_code_free(&c);
}

Test(regime_agc, baseline_layouts) {
  enum { K = 50 };
  double p[K];
  for (size_t i = 0; i < K; i++) p[i] = 0.82 + 0.0036 * (double)i;
  agc_opts o = opts_for(250, 1);
  hs_error err = {0};
  agc_code c;
  double col[K];
  /* sgc: each partition's held copies sum to 1 in expectation (or are dropped)
   */
  cr_assert_eq(agc_code_build(&c, AGC_SGC, &o, p, K, K, 18, 1, &err), HS_OK, "%s", err.msg);
  size_t held = 0;
  for (size_t j = 0; j < K; j++) {
    double e = 0;
    size_t d = 0;
    for (size_t x = 0; x < c.L.nnz; x++)
      if (c.L.col[x] == j) {
        size_t i = 0;
        while (!(x >= c.L.row[i] && x < c.L.row[i + 1])) i++;
        e += (1 - p[i]) * c.L.coef[x];
        d++;
      }
    if (d) cr_expect_float_eq(e, 1.0, 1e-12);
    held += d;
  }
  cr_expect(held > 1.9 * K && held < 2.05 * K, "mean replication %zu/50", held);
  for (size_t i = 0; i < K; i++) cr_expect_eq(c.w[i], 1.0);
  agc_code_free(&c);
  /* ehd: pairs hold the same block; every partition twice */
  cr_assert_eq(agc_code_build(&c, AGC_EHD, &o, p, K, K, 18, 1, &err), HS_OK);
  for (size_t i = 0; i < K; i += 2) {
    size_t a = c.L.row[i], b = c.L.row[i + 1];
    cr_expect_eq(b - a, c.L.row[i + 2] - b);
    for (size_t e = 0; e < b - a; e++) cr_expect_eq(c.L.col[a + e], c.L.col[b + e]);
  }
  column_sums(&c, col);
  for (size_t j = 0; j < K; j++) cr_expect_float_eq(col[j], 2.0, 0);
  agc_code_free(&c);
  /* issgd and gd: one partition each, coefficient 1 */
  for (int s = AGC_ISSGD; s <= AGC_GD; s++) {
    cr_assert_eq(agc_code_build(&c, (agc_scheme)s, &o, p, K, K, 18, 1, &err), HS_OK);
    column_sums(&c, col);
    for (size_t j = 0; j < K; j++) cr_expect_float_eq(col[j], 1.0, 0);
    for (size_t i = 0; i < K; i++) cr_expect_eq(c.L.row[i + 1] - c.L.row[i], 1);
    cr_expect_eq(c.z[0], s == AGC_GD ? 32 : 6);
    cr_expect_eq(c.wait_all, s == AGC_GD);
    agc_code_free(&c);
  }
  /* bgc: coefficients 1, about 2 per partition, the same support every build */
  agc_code c2;
  cr_assert_eq(agc_code_build(&c, AGC_BGC, &o, p, K, K, 18, 1, &err), HS_OK);
  cr_assert_eq(agc_code_build(&c2, AGC_BGC, &o, p, K, K, 18, 1, &err), HS_OK);
  cr_expect_eq(c.L.nnz, c2.L.nnz);
  cr_expect(c.L.nnz > K && c.L.nnz < 3 * K);
  for (size_t e = 0; e < c.L.nnz; e++) {
    cr_expect_eq(c.L.coef[e], 1.0);
    cr_expect_eq(c.L.col[e], c2.L.col[e]);
  }
  agc_code_free(&c);
  agc_code_free(&c2);
  /* an equal split below k bits turns workers off (offset 1) */
  o.z_res = 10;
  cr_assert_eq(agc_code_build(&c, AGC_ISSGD, &o, p, K, K, 18, 1, &err), HS_OK);
  size_t on = 0;
  for (size_t i = 0; i < K; i++) on += c.z[i] > 0;
  cr_expect_eq(on, 10);
  agc_code_free(&c);
}

/* Learning in the loop: real gradients; the same bytes whatever the learner's
 * thread count. Needs Fashion-MNIST (Debian dataset-fashion-mnist). */
Test(regime_agc, learning_is_deterministic_across_thread_counts) {
  if (access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) &&
      access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte", R_OK)) {
    cr_skip_test("Fashion-MNIST is not installed");
  }
  row a[MAXROWS], b[MAXROWS];
  hs_summary s;
  char *ca = NULL, *cb = NULL;
  const char *o1 =
      ", \"z_res\": 12, \"p_rule\": \"given\", \"p\": [0.1, 0.2, 0.3], "
      "\"deadline_s\": 0.68, \"learn\": \"mnist\", \"max_samples\": 600, "
      "\"eval_every\": 2, \"eval_samples\": 100, \"threads\": 1";
  const char *o2 =
      ", \"z_res\": 12, \"p_rule\": \"given\", \"p\": [0.1, 0.2, 0.3], "
      "\"deadline_s\": 0.68, \"learn\": \"mnist\", \"max_samples\": 600, "
      "\"eval_every\": 2, \"eval_samples\": 100, \"threads\": 3";
  size_t n = run_rows(o1, 3, a, &s, &ca);
  run_rows(o2, 3, b, &s, &cb);
  cr_assert_eq(n, 3);
  cr_expect_str_eq(ca, cb);
  for (size_t i = 0; i < n; i++) {
    cr_expect(isfinite(a[i].meas) && a[i].meas > 0, "a measured residual error");
    cr_expect(isfinite(a[i].meas_rel));
  }
  /* dim 0 with learning: messages carry the MLP's 101,770 parameters */
  cr_expect_float_eq(a[0].sent, (5 + 4) * 101770.0 + 128, 1e-9);
  hs_free(ca);
  hs_free(cb);
}

/* gd decodes the exact gradient: the measured residual error is 0; the
 * two-lane Adam path runs and keeps the model finite. */
Test(regime_agc, gd_measures_no_residual_and_adam2_runs) {
  if (access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) &&
      access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte", R_OK)) {
    cr_skip_test("Fashion-MNIST is not installed");
  }
  row a[MAXROWS];
  hs_summary s;
  size_t n = run_rows(GIVEN
                      ", \"scheme\": \"gd\", \"learn\": \"mnist\", \"max_samples\": 600, "
                      "\"eval_every\": 1, \"eval_samples\": 100",
                      2, a, &s, NULL);
  cr_assert_eq(n, 2);
  for (size_t i = 0; i < n; i++) cr_expect_eq(a[i].meas, 0.0, "ghat = g exactly");
  n = run_rows(GIVEN
               ", \"learn\": \"mnist\", \"optimizer\": \"adam2\", \"max_samples\": 600, "
               "\"eval_every\": 1, \"eval_samples\": 100",
               3, a, &s, NULL);
  cr_assert_eq(n, 3);
  for (size_t i = 0; i < n; i++) cr_expect(isfinite(a[i].meas) && a[i].meas > 0);
}
