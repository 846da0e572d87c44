/* test_sim_learning.c: learning in the loop on the simulated timeline
 * (sim/run/learning/learning*.c, scenario_learning.c), issue 10.
 *
 * Data: small IDX sets in the Fashion-MNIST layout written by
 * test_learn_data.h (no dependence on the Debian package). Devices: the
 * deterministic test profiles of tests/data/run.
 *
 * Tolerances (stated): the DDP step is compared with one single-process step
 * on the union batch to 1e-6 relative on every float parameter (the combined
 * gradient agrees to ~1e-12 in double; the float rounding after the step may
 * differ by an ulp); FedAvg with one device and FedAsync's stale mixing are
 * compared bitwise; thread counts are compared byte for byte on learning.csv
 * and summary.json. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "learn/hs_learn.h"
#include "sim/hs_metrics.h"
#include "policies/hs_policy.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "base/hs_util.h"
#include "sim_learning.h"
/* The shared data header's learner helpers are not called here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "test_learn_data.h"
#include "test_tmpdir.h"
#pragma GCC diagnostic pop

#define DATA HS_SOURCE_DIR "/tests/data/run"

static char *g_dir; /* the IDX folder of this process */

static void data_up(void) {
  g_dir = tl_mnist(400, 28, 1);
  cr_assert_not_null(g_dir);
}
static void data_down(void) {
  tl_rmrf(g_dir);
  free(g_dir);
}

/* A scenario of `ndev` det-fast devices with a real-mode learning block
 * (extra: more keys of the block, may be ""). */
static hs_scenario *scenario(unsigned ndev, const char *regime, const char *extra,
                             hs_error *err) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"name\": \"learn\", \"seed\": 7, \"task\": \"mnist\", \"model_bytes\": 1000,"
           " \"rounds\": 3, \"samples_per_round\": %u, \"batch_size\": 8, \"regime\": %s,"
           " \"devices\": [{\"name\": \"d\", \"profile\": \"profiles/det-fast.json\","
           "   \"count\": %u}],"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 100, \"latency_ms\": 1}}},"
           " \"learning\": {\"mode\": \"real\", \"data\": \"%s\", \"eval_samples\": 50 %s}}",
           40 * ndev, regime, ndev, g_dir, extra);
  return hs_scenario_parse(text, "learn.json", DATA, NULL, 0, err);
}

static hs_learner *own_learner(const hs_scenario *sc) {
  hs_learn_cfg cfg;
  hs_error e = {0};
  cr_assert_eq(sim_learning_learner_cfg(sc, &cfg, &e), HS_OK, "%s", e.msg);
  hs_learner *l = NULL;
  cr_assert_eq(hs_learn_create(&cfg, &l, &e), HS_OK, "%s", e.msg);
  hs_learn_part_cfg pc;
  sim_learning_partition_cfg(sc, &pc);
  cr_assert_eq(hs_learn_partition(l, &pc, &e), HS_OK, "%s", e.msg);
  return l;
}

/* The scenario and its sim_learn (asserts both). */
static hs_scenario *with_learner(unsigned ndev, const char *regime, const char *extra,
                                 sim_learn **L) {
  hs_error e = {0};
  hs_scenario *sc = scenario(ndev, regime, extra, &e);
  cr_assert_not_null(sc, "%s", e.msg);
  cr_assert_eq(sim_learn_create(sc, ndev, L, &e), HS_OK, "%s", e.msg);
  return sc;
}

TestSuite(sim_learning, .init = data_up, .fini = data_down);

/* One DDP step through the simulator = one single-process step on the union
 * of the ranks' batches (same draws, same optimiser), for SGD and Adam. */
static void ddp_case(const char *opt) {
  char extra[128];
  snprintf(extra, sizeof extra, ", \"optimizer\": \"%s\"", opt);
  sim_learn *L;
  hs_scenario *sc = with_learner(3, "{\"kind\": \"ddp\"}", extra, &L);
  sim_learn_groups(L, 1);
  sim_learn_group_begin(L, 0);
  size_t ranks[3] = {0, 1, 2};
  uint64_t b[3] = {3, 5, 0}; /* rank 2 trains nothing this step */
  sim_learn_ddp_step(L, 0, ranks, b, 1, 3, 42);
  double w = 1;
  sim_learn_groups_end(L, &w);

  hs_learner *l = own_learner(sc);
  size_t np = hs_learn_nparams(l);
  float *p = hs_malloc(np * sizeof *p);
  hs_learn_init_params(l, p);
  uint32_t idx[8];
  hs_learn_draw(l, 0, 42, 3, idx);
  hs_learn_draw(l, 1, 42, 5, idx + 3);
  hs_learn_grad *g = hs_learn_grad_create(l);
  hs_learn_batch_grad(l, p, idx, 8, g);
  hs_learn_optstate *s = hs_learn_optstate_for(l);
  hs_learn_step(l, s, p, g);
  const float *q = sim_learn_global(L);
  size_t differ = 0;
  for (size_t i = 0; i < np; i++)
    if (fabsf(p[i] - q[i]) > 1e-6f * fmaxf(1.0f, fabsf(p[i]))) differ++;
  cr_expect_eq(differ, 0, "%zu of %zu parameters differ beyond 1e-6 (%s)", differ, np, opt);
  hs_learn_optstate_destroy(s);
  hs_learn_grad_destroy(g);
  hs_free(p);
  hs_learn_destroy(l);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

Test(sim_learning, ddp_step_is_union_batch_step_sgd) { ddp_case("sgd"); }
Test(sim_learning, ddp_step_is_union_batch_step_adam) { ddp_case("adam"); }

/* PMA with one device: the round's FedAvg is plain local training, bitwise. */
Test(sim_learning, fedavg_one_device_is_local_training) {
  hs_error e = {0};
  sim_learn *L;
  hs_scenario *sc = with_learner(1, "{\"kind\": \"pma\"}", "", &L);
  uint64_t n = 37;
  cr_assert_eq(sim_learn_fedavg(L, 0, &n, 1, &e), HS_OK, "%s", e.msg);
  cr_assert_eq(sim_learn_fedavg(L, 1, &n, 1, &e), HS_OK, "%s", e.msg);

  hs_learner *l = own_learner(sc);
  size_t np = hs_learn_nparams(l);
  float *a = hs_malloc(np * sizeof *a), *b = hs_malloc(np * sizeof *b);
  hs_learn_init_params(l, a);
  for (uint64_t round = 0; round < 2; round++) {
    hs_learn_job j = {.participant = 0, .draw = round, .samples = 37, .start = a, .out = b};
    cr_assert_eq(hs_learn_train(l, &j, &e), HS_OK, "%s", e.msg);
    memcpy(a, b, np * sizeof *a);
  }
  cr_expect_eq(memcmp(a, sim_learn_global(L), np * sizeof *a), 0,
               "FedAvg of one device differs from local training");
  uint64_t trained;
  double sq;
  sim_learn_participant_loss(L, 0, &trained, &sq);
  cr_expect_eq(trained, 37);
  cr_expect_gt(sq, 0);
  hs_free(a);
  hs_free(b);
  hs_learn_destroy(l);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

/* FedAsync: device 0 downloads version 0, device 1 then completes two
 * updates (versions 1 and 2), and device 0's update, 2 versions stale, is
 * trained from version 0 and mixed into version 2. */
Test(sim_learning, fedasync_stale_update_trains_from_old_version) {
  hs_error e = {0};
  sim_learn *L;
  hs_scenario *sc = with_learner(2, "{\"kind\": \"fedasync\"}", "", &L);
  sim_learn_async_download(L, 0);
  for (int k = 0; k < 2; k++) {
    sim_learn_async_download(L, 1);
    cr_assert_eq(sim_learn_async_arrival(L, 1, 16, 0.6, &e), HS_OK, "%s", e.msg);
  }
  cr_assert_eq(sim_learn_async_arrival(L, 0, 24, 0.25, &e), HS_OK, "%s", e.msg);

  hs_learner *l = own_learner(sc);
  size_t np = hs_learn_nparams(l);
  float *v0 = hs_malloc(np * 4), *g = hs_malloc(np * 4), *m = hs_malloc(np * 4);
  hs_learn_init_params(l, v0);
  memcpy(g, v0, np * 4);
  for (uint64_t k = 0; k < 2; k++) {
    hs_learn_job j = {.participant = 1, .draw = k, .samples = 16, .start = g, .out = m};
    cr_assert_eq(hs_learn_train(l, &j, &e), HS_OK, "%s", e.msg);
    hs_learn_mix(l, g, m, 0.6);
  }
  hs_learn_job j = {.participant = 0, .draw = 0, .samples = 24, .start = v0, .out = m};
  cr_assert_eq(hs_learn_train(l, &j, &e), HS_OK, "%s", e.msg);
  hs_learn_mix(l, g, m, 0.25);
  cr_expect_eq(memcmp(g, sim_learn_global(L), np * 4), 0, "not mixed from version 0");
  hs_free(v0);
  hs_free(g);
  hs_free(m);
  hs_learn_destroy(l);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

static char *slurp(const char *dir, const char *name) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t n;
  hs_error e = {0};
  char *t = hs_read_file(path, &n, &e);
  cr_assert_not_null(t, "%s", e.msg);
  return t;
}

/* A whole run in real mode: the same bytes with 1 and 3 learner threads, for
 * every regime shape; and learning.csv has a row per evaluation. */
static void threads_case(const char *regime, unsigned ndev) {
  char out1[] = "/tmp/hs-sl-XXXXXX", out3[] = "/tmp/hs-sl-XXXXXX";
  cr_assert_not_null(test_mkdtemp_at(out1));
  cr_assert_not_null(test_mkdtemp_at(out3));
  char *files[2][2];
  for (int t = 0; t < 2; t++) {
    char extra[160];
    snprintf(extra, sizeof extra,
             ", \"threads\": %d, \"partition\": \"dirichlet\", \"alpha\": 0.5,"
             " \"target_accuracy\": 0.05",
             t ? 3 : 1);
    hs_error e = {0};
    hs_scenario *sc = scenario(ndev, regime, extra, &e);
    cr_assert_not_null(sc, "%s", e.msg);
    hs_run_opts o = {.out_dir = t ? out3 : out1};
    hs_summary s;
    cr_assert_eq(hs_run(sc, &o, &s, &e), HS_OK, "%s", e.msg);
    cr_expect(hs_metric_reported(&s, "learning"));
    cr_expect(isfinite(s.final_test_loss));
    cr_expect_eq(s.rounds_to_target, 1, "accuracy 0.05 is met at the first evaluation");
    files[t][0] = slurp(o.out_dir, "learning.csv");
    files[t][1] = slurp(o.out_dir, "summary.json");
    hs_scenario_destroy(sc);
  }
  cr_expect_str_eq(files[0][0], files[1][0], "%s: learning.csv differs with threads", regime);
  /* summary.json: every figure; its provenance after them (the resolved
   * scenario, which records learning.threads) differs on purpose. */
  for (int t = 0; t < 2; t++) {
    char *prov = strstr(files[t][1], "\"hetsim_version\"");
    if (prov) *prov = '\0';
  }
  cr_expect_str_eq(files[0][1], files[1][1], "%s: summary.json differs with threads", regime);
  size_t lines = 0;
  for (const char *p = files[0][0]; *p; p++) lines += *p == '\n';
  cr_expect_eq(lines, 4, "%s: header + 3 evaluations", regime);
  cr_expect(strstr(files[0][1], "\"time_to_target_s\""));
  for (int t = 0; t < 2; t++)
    for (int k = 0; k < 2; k++) hs_free(files[t][k]);
  tl_rmrf(out1);
  tl_rmrf(out3);
}

Test(sim_learning, threads_do_not_change_pma) { threads_case("{\"kind\": \"pma\"}", 4); }
Test(sim_learning, threads_do_not_change_ddp) { threads_case("{\"kind\": \"ddp\"}", 4); }
Test(sim_learning, threads_do_not_change_fedasync) {
  threads_case("{\"kind\": \"fedasync\"}", 4);
}

/* Bad input is one line at load, naming the file and the key. */
Test(sim_learning, bad_input) {
  static const struct {
    const char *extra, *want;
    unsigned ndev;
  } cases[] = {
      {", \"partition\": \"dirichlet\", \"alpha\": 0", "learning.alpha: expected a finite number > 0", 0},
      {", \"target_accuracy\": \"high\"", "learning.target_accuracy: expected a number", 0},
      {", \"alpha\": 1", "learning.alpha: applies only to partition \"dirichlet\"", 0},
      {", \"partition\": \"counts\", \"counts\": [10, 0]", "learning.counts[1]: expected an integer", 0},
      {", \"partition\": \"counts\", \"counts\": [10]", "learning.counts: expected an array of 2", 0},
      {", \"partition\": \"dirichlet\", \"alpha\": 0.0001", "with no data", 40},
      {", \"partition\": \"counts\", \"counts\": [300, 300]", "learning.counts: ", 0},
      {", \"optimizer\": \"rmsprop\"", "learning.optimizer: unknown value \"rmsprop\"", 0},
      {", \"bogus\": 1", "learning.bogus: unknown key", 0},
      {", \"weights\": \"size\"", "learning.weights: unknown value \"size\"", 0},
      {", \"last_batch\": \"pad\"", "learning.last_batch: unknown value \"pad\"", 0},
      {", \"lr_gamma\": 0.5", "learning.lr_gamma: applies only to lr_schedule \"step\"", 0},
      {", \"lr_schedule\": \"step\", \"lr_gamma\": 0", "learning.lr_gamma: expected a number in (0, 1]", 0},
      {", \"lr_min\": 0.01", "learning.lr_min: applies only to lr_schedule \"cosine\"", 0},
      {", \"server_lr\": 1", "learning.server_lr: applies only with a server_optimizer", 0},
      {", \"server_optimizer\": \"fedavgm\", \"server_momentum\": 1",
       "learning.server_momentum: expected a number in (0, 1)", 0},
      {", \"weight_decay\": -1", "learning.weight_decay: expected a finite number >= 0", 0},
      {", \"clip_norm\": \"big\"", "learning.clip_norm: expected a finite number", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hs_error e = {0};
    unsigned n = cases[i].ndev ? cases[i].ndev : 2;
    hs_scenario *sc = scenario(n, "{\"kind\": \"pma\"}", cases[i].extra, &e);
    cr_expect_null(sc, "case %zu loaded", i);
    cr_expect(strstr(e.msg, cases[i].want), "case %zu: %s", i, e.msg);
    cr_expect(strstr(e.msg, "learn.json: "), "case %zu names the file: %s", i, e.msg);
    cr_expect_null(strchr(e.msg, '\n'));
    hs_scenario_destroy(sc);
  }
  /* A missing data folder. */
  char text[2048];
  snprintf(text, sizeof text,
           "{\"task\": \"mnist\", \"model_bytes\": 1, \"rounds\": 1, \"samples_per_round\": 10,"
           " \"devices\": [{\"name\": \"d\", \"profile\": \"profiles/det-fast.json\"}],"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1}}},"
           " \"learning\": {\"mode\": \"real\", \"data\": \"/nonexistent-hs\"}}");
  hs_error e = {0};
  hs_scenario *sc = hs_scenario_parse(text, "x.json", DATA, NULL, 0, &e);
  cr_expect_null(sc);
  cr_expect(strstr(e.msg, "x.json: learning.data: /nonexistent-hs"), "%s", e.msg);
  /* More held-out samples than the data has (t10k: 100): one line naming
   * the key and the maximum, never a silent clamp; all 100 load. */
  for (int want = 100; want <= 101; want++) {
    snprintf(text, sizeof text,
             "{\"task\": \"mnist\", \"model_bytes\": 1, \"rounds\": 1, \"samples_per_round\": 10,"
             " \"devices\": [{\"name\": \"d\", \"profile\": \"profiles/det-fast.json\"}],"
             " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1}}},"
             " \"learning\": {\"mode\": \"real\", \"data\": \"%s\", \"eval_samples\": %d}}",
             g_dir, want);
    sc = hs_scenario_parse(text, "x.json", DATA, NULL, 0, &e);
    if (want == 100) {
      cr_expect_not_null(sc, "all 100 may be asked for: %s", e.msg);
      hs_scenario_destroy(sc);
      continue;
    }
    cr_expect_null(sc);
    cr_expect(strstr(e.msg, "x.json: learning.eval_samples: 101 held-out samples asked, the data has 100"),
              "%s", e.msg);
  }
}

/* Curve mode: known answers of the interpolation, and the rules. */
Test(sim_learning, curve_interpolation) {
  double x[] = {0, 100, 300}, y[] = {2.0, 1.0, 0.5};
  hs_learning_spec s = {0};
  s.curve_samples = x;
  s.curve_loss = y;
  s.curve_points = 3;
  cr_expect_eq(sim_learn_curve_loss(&s, -5), 2.0);
  cr_expect_eq(sim_learn_curve_loss(&s, 0), 2.0);
  cr_expect_eq(sim_learn_curve_loss(&s, 50), 1.5);
  cr_expect_eq(sim_learn_curve_loss(&s, 100), 1.0);
  cr_expect_eq(sim_learn_curve_loss(&s, 200), 0.75);
  cr_expect_eq(sim_learn_curve_loss(&s, 1e9), 0.5);
}

/* The oort utility path (hs_controller_set_utility): checked input, ignored by
 * a policy without use for it, and for oort the sample count passed as the
 * utility gives exactly the allocations of no utility at all (the stand-in it
 * replaces), while a different utility is taken. */
static hs_controller *oort(size_t n, hs_error *e) {
  hs_policy_config cfg;
  cr_assert_eq(hs_policy_config_init(&cfg, "oort", e), HS_OK, "%s", e->msg);
  return hs_controller_create(&cfg, n, NULL, 1000, e);
}

Test(sim_learning, oort_utility_path) {
  enum { N = 12 };
  hs_error e = {0};
  hs_controller *a = oort(N, &e), *b = oort(N, &e), *c = oort(N, &e);
  cr_assert(a && b && c, "%s", e.msg);
  double bad[N] = {0};
  bad[3] = -1;
  cr_expect_eq(hs_controller_set_utility(a, bad, N, &e), HS_EINVAL);
  cr_expect(strstr(e.msg, "participant 3: utility"), "%s", e.msg);
  cr_expect_eq(hs_controller_set_utility(a, bad, N - 1, &e), HS_ERANGE);
  bool differ = false;
  for (int round = 0; round < 8; round++) {
    const uint64_t *al = hs_controller_allocation(a);
    hs_telemetry t[N];
    double u[N], v[N];
    for (size_t i = 0; i < N; i++) {
      t[i] = (hs_telemetry){al[i] ? 0.01 * (double)al[i] * (1 + (double)i) : 0, 0,
                            (int64_t)al[i]};
      u[i] = (double)al[i];
      v[i] = al[i] ? (double)al[i] * (double)(i % 3 == 0 ? 9 : 1) : 0;
    }
    cr_assert_eq(hs_controller_set_utility(b, u, N, &e), HS_OK, "%s", e.msg);
    cr_assert_eq(hs_controller_update(a, t, N, &e), HS_OK, "%s", e.msg);
    cr_assert_eq(hs_controller_update(b, t, N, &e), HS_OK, "%s", e.msg);
    cr_expect_eq(memcmp(hs_controller_allocation(a), hs_controller_allocation(b), sizeof(uint64_t) * N),
                 0, "round %d: utility = samples must change nothing", round);
    /* c sees its own allocation's telemetry with a skewed utility */
    const uint64_t *cl = hs_controller_allocation(c);
    hs_telemetry tc[N];
    for (size_t i = 0; i < N; i++) {
      tc[i] = (hs_telemetry){cl[i] ? 0.01 * (double)cl[i] * (1 + (double)i) : 0, 0, (int64_t)cl[i]};
      v[i] = cl[i] ? (double)cl[i] * (double)(i % 3 == 0 ? 9 : 1) : 0;
    }
    cr_assert_eq(hs_controller_set_utility(c, v, N, &e), HS_OK, "%s", e.msg);
    cr_assert_eq(hs_controller_update(c, tc, N, &e), HS_OK, "%s", e.msg);
    differ = differ || memcmp(hs_controller_allocation(a), hs_controller_allocation(c),
                              sizeof(uint64_t) * N) != 0;
  }
  cr_expect(differ, "a skewed utility never changed oort's selection");
  hs_controller_destroy(a);
  hs_controller_destroy(b);
  hs_controller_destroy(c);
}

/* Learning observes the timeline, it does not move it: with a policy that
 * does not read losses, rounds.csv and devices.csv are the bytes of the same
 * run without learning (PMA and DDP). */
static void timeline_case(const char *regime) {
  char on[] = "/tmp/hs-sl-XXXXXX", off[] = "/tmp/hs-sl-XXXXXX";
  cr_assert_not_null(test_mkdtemp_at(on));
  cr_assert_not_null(test_mkdtemp_at(off));
  hs_error e = {0};
  hs_scenario *sc = scenario(3, regime, ", \"threads\": 2", &e);
  cr_assert_not_null(sc, "%s", e.msg);
  hs_run_opts o = {.out_dir = on};
  cr_assert_eq(hs_run(sc, &o, NULL, &e), HS_OK, "%s", e.msg);
  hs_learning_spec *keep = sc->learning;
  sc->learning = NULL; /* the same scenario, learning off */
  o.out_dir = off;
  cr_assert_eq(hs_run(sc, &o, NULL, &e), HS_OK, "%s", e.msg);
  sc->learning = keep;
  static const char *const files[] = {"rounds.csv", "devices.csv"};
  for (int k = 0; k < 2; k++) {
    char *a = slurp(on, files[k]), *b = slurp(off, files[k]);
    cr_expect_str_eq(a, b, "%s: %s differs with learning on", regime, files[k]);
    hs_free(a);
    hs_free(b);
  }
  char p[600];
  snprintf(p, sizeof p, "%s/learning.csv", off);
  cr_expect_neq(access(p, F_OK), 0, "no learning.csv without learning");
  hs_scenario_destroy(sc);
  tl_rmrf(on);
  tl_rmrf(off);
}

Test(sim_learning, timeline_unchanged_pma) { timeline_case("{\"kind\": \"pma\"}"); }
Test(sim_learning, timeline_unchanged_ddp) { timeline_case("{\"kind\": \"ddp\"}"); }

/* Curve mode's rules through the hooks (learning_curve.c), on a profile whose
 * loss_curve is (0, 2), (100, 1), (300, 0.5). */
/* A curve-mode scenario of two det-fast devices whose profile `name` has the
 * loss curve given (JSON pairs), target loss 0.95, and its sim_learn. */
static hs_scenario *curve_scenario(const char *name, const char *curve, unsigned rounds, sim_learn **L) {
  char prof[600];
  snprintf(prof, sizeof prof, "%s/%s.json", g_dir, name);
  FILE *f = fopen(prof, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "{\"format\": \"hetsim-profile/1\", \"name\": \"curve\", \"board\": \"test\","
          " \"arch\": \"x86_64\", \"cpu\": \"none\", \"idle_w\": 1, \"comm_w\": 1,"
          " \"provenance\": {\"kind\": \"estimated\", \"sources\": [\"test\"]},"
          " \"tasks\": {\"mnist\": {\"tau_s\": 0.001, \"tau_cv\": 0, \"busy_w\": 2,"
          " \"overhead_s\": 0, \"loss_curve\": %s}}}",
          curve);
  cr_assert_eq(fclose(f), 0);
  char text[2048];
  snprintf(text, sizeof text,
           "{\"task\": \"mnist\", \"model_bytes\": 1, \"rounds\": %u, \"samples_per_round\": 100,"
           " \"devices\": [{\"name\": \"d\", \"profile\": \"profiles/det-fast.json\", \"count\": 2}],"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1}}},"
           " \"learning\": {\"mode\": \"curve\", \"curve_profile\": \"%s\", \"target_loss\": 0.95}}",
           rounds, prof);
  hs_error e = {0};
  hs_scenario *sc = hs_scenario_parse(text, "c.json", DATA, NULL, 0, &e);
  cr_assert_not_null(sc, "%s", e.msg);
  cr_assert_eq(sim_learn_create(sc, 2, L, &e), HS_OK, "%s", e.msg);
  return sc;
}

Test(sim_learning, curve_rules) {
  hs_error e = {0};
  sim_learn *L;
  hs_scenario *sc = curve_scenario("curve", "[[0, 2], [100, 1], [300, 0.5]]", 3, &L);
  sim_learn_result res;
  /* pma: a round is worth its union, 40 + 60 = 100 samples -> loss 1 */
  uint64_t n[2] = {40, 60};
  cr_assert_eq(sim_learn_fedavg(L, 0, n, 2, &e), HS_OK);
  sim_learn_round_end(L, 0, false, 10.0, 5.0, NULL);
  sim_learn_result_get(L, &res);
  cr_expect_float_eq(res.final_test_loss, 1.0, 1e-12);
  cr_expect(isnan(res.final_test_accuracy));
  cr_expect(isnan(res.time_to_target_s), "0.95 is not reached at loss 1");
  /* fedasync: device 0 downloads at S = 100; device 1's fresh update of 100
   * mixed at 0.5: S = 150; device 0's update of 20, stale, mixed at 0.5:
   * S = 0.5 * 150 + 0.5 * (100 + 20) = 135 -> loss 1 - 35/200 * 0.5 */
  sim_learn_async_download(L, 0);
  sim_learn_async_download(L, 1);
  cr_assert_eq(sim_learn_async_arrival(L, 1, 100, 0.5, &e), HS_OK);
  cr_assert_eq(sim_learn_async_arrival(L, 0, 20, 0.5, &e), HS_OK);
  sim_learn_round_end(L, 1, false, 20.0, 9.0, NULL);
  sim_learn_result_get(L, &res);
  cr_expect_float_eq(res.final_test_loss, 1.0 - 35.0 / 200.0 * 0.5, 1e-12);
  cr_expect_float_eq(res.time_to_target_s, 20.0, 0, "the target is met at this evaluation");
  cr_expect_float_eq(res.energy_to_target_j, 9.0, 0);
  cr_expect_float_eq(res.rounds_to_target, 2.0, 0);
  /* ddp: each step adds its union batch: 135 + 3 + 5 = 143 */
  sim_learn_groups(L, 1);
  size_t ranks[2] = {0, 1};
  uint64_t b[2] = {3, 5};
  sim_learn_ddp_step(L, 0, ranks, b, 1, 2, 0);
  sim_learn_round_end(L, 2, true, 30.0, 12.0, NULL);
  sim_learn_result_get(L, &res);
  cr_expect_float_eq(res.final_test_loss, 1.0 - 43.0 / 200.0 * 0.5, 1e-12);
  cr_expect_float_eq(res.time_to_target_s, 20.0, 0, "the first time counts");
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

/* Learning metrics: in summary.json only for runs that learn, sweep columns
 * only in a sweep that learns (appended after the others: the columns of a
 * sweep without learning keep their order and bytes). */
Test(sim_learning, learning_metrics_are_conditional) {
  static const char *const names[] = {"time_to_target_s", "energy_to_target_j",
                                      "rounds_to_target", "final_test_loss",
                                      "final_test_accuracy", "time_to_stable_target_s",
                                      "energy_to_stable_target_j", "rounds_to_stable_target"};
  const size_t nl = sizeof names / sizeof names[0];
  hs_metric_sweep_groups(0);
  size_t base = hs_metric_sweep_count();
  for (size_t k = 0; k < base; k++) cr_expect_null(hs_metric_sweep_at(k)->group);
  hs_metric_sweep_groups(hs_metric_group("learning"));
  cr_expect_eq(hs_metric_sweep_count(), base + nl);
  for (size_t k = 0; k < nl; k++)
    cr_expect_str_eq(hs_metric_sweep_at(base + k)->name, names[k]);
  hs_metric_sweep_groups(0);
  hs_summary s = {0};
  hs_report_field f[HS_METRIC_MAX];
  size_t off = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  s.metric_groups = hs_metric_group("learning");
  size_t on = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  cr_expect_eq(on, off + nl);
  cr_expect_str_eq(f[on - nl].key, "time_to_target_s");
}

/* --- training options (issue 25) ---------------------------------------------- */

/* Two devices with parts of 30 and 60 samples train 8 and 24: the global is
 * the FedAvg of their models with the weighting's weights, bitwise. */
static void weights_case(const char *name, double w0, double w1, float *out, size_t np) {
  char extra[160];
  snprintf(extra, sizeof extra,
           ", \"partition\": \"counts\", \"counts\": [30, 60], \"weights\": \"%s\"", name);
  sim_learn *L;
  hs_scenario *sc = with_learner(2, "{\"kind\": \"pma\"}", extra, &L);
  hs_error e = {0};
  uint64_t n[2] = {8, 24};
  cr_assert_eq(sim_learn_fedavg(L, 0, n, 2, &e), HS_OK, "%s", e.msg);
  hs_learner *l = own_learner(sc);
  cr_assert_eq(hs_learn_nparams(l), np);
  float *g = hs_malloc(np * sizeof *g), *m[2];
  hs_learn_init_params(l, g);
  for (unsigned i = 0; i < 2; i++) {
    m[i] = hs_malloc(np * sizeof(float));
    hs_learn_job j = {.participant = i, .draw = 0, .samples = n[i], .start = g, .out = m[i]};
    cr_assert_eq(hs_learn_train(l, &j, &e), HS_OK, "%s", e.msg);
  }
  double w[2] = {w0, w1};
  hs_learn_aggregate(l, (const float *const *)m, w, 2, out);
  cr_expect_eq(memcmp(out, sim_learn_global(L), np * sizeof *out), 0, "weights %s", name);
  for (int i = 0; i < 2; i++) hs_free(m[i]);
  hs_free(g);
  hs_learn_destroy(l);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

Test(sim_learning, fedavg_weightings) {
  sim_learn *L;
  hs_scenario *sc = with_learner(1, "{\"kind\": \"pma\"}", "", &L);
  size_t np = hs_learn_nparams(sim_learn_learner(L));
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
  float *a = hs_malloc(np * 4), *b = hs_malloc(np * 4), *c = hs_malloc(np * 4);
  weights_case("samples", 8, 24, a, np);
  weights_case("data", 30, 60, b, np);
  weights_case("uniform", 1, 1, c, np);
  cr_expect_neq(memcmp(a, b, np * 4), 0, "samples and data weights gave the same model");
  cr_expect_neq(memcmp(b, c, np * 4), 0, "data and uniform weights gave the same model");
  hs_free(a);
  hs_free(b);
  hs_free(c);
}

/* FedAvgM at eta 1: round 0 lands on the FedAvg model bitwise, round 1 is
 * one momentum step along old - aggregate (v = 0.9 d0 + d1). */
Test(sim_learning, server_fedavgm) {
  sim_learn *L;
  hs_scenario *sc = with_learner(2, "{\"kind\": \"pma\"}", ", \"server_optimizer\": \"fedavgm\"", &L);
  hs_error e = {0};
  hs_learner *l = own_learner(sc);
  size_t np = hs_learn_nparams(l);
  float *g = hs_malloc(np * 4), *m[2] = {hs_malloc(np * 4), hs_malloc(np * 4)}, *agg = hs_malloc(np * 4);
  double *d = hs_malloc(np * sizeof *d);
  hs_learn_init_params(l, g);
  hs_learn_opt o = {.kind = HS_LEARN_MOMENTUM, .lr = 1, .momentum = 0.9};
  hs_learn_optstate *srv = hs_learn_optstate_create(&o, np);
  uint64_t n[2] = {16, 16};
  for (uint32_t round = 0; round < 2; round++) {
    cr_assert_eq(sim_learn_fedavg(L, round, n, 2, &e), HS_OK, "%s", e.msg);
    for (unsigned i = 0; i < 2; i++) {
      hs_learn_job j = {.participant = i, .draw = round, .samples = 16, .start = g, .out = m[i]};
      cr_assert_eq(hs_learn_train(l, &j, &e), HS_OK, "%s", e.msg);
    }
    double w[2] = {(double)hs_learn_part_size(l, 0), (double)hs_learn_part_size(l, 1)};
    hs_learn_aggregate(l, (const float *const *)m, w, 2, agg);
    if (round == 0) cr_expect_eq(memcmp(agg, sim_learn_global(L), np * 4), 0, "round 0 is FedAvg");
    else cr_expect_neq(memcmp(agg, sim_learn_global(L), np * 4), 0, "round 1 has momentum");
    hs_learn_server_step(srv, g, agg, np, d);
    cr_expect_eq(memcmp(g, sim_learn_global(L), np * 4), 0, "round %u: not the FedAvgM step", round);
  }
  hs_learn_optstate_destroy(srv);
  hs_free(d);
  hs_free(agg);
  hs_free(m[0]);
  hs_free(m[1]);
  hs_free(g);
  hs_learn_destroy(l);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

/* A step schedule halving every round: round 1's local training runs at
 * half the task's rate (mnist 0.1), bitwise a job at 0.05; learning.csv's
 * lr column is not needed for that, the model is. */
Test(sim_learning, lr_schedule_by_round) {
  sim_learn *L;
  hs_scenario *sc = with_learner(
      1, "{\"kind\": \"pma\"}",
      ", \"lr_schedule\": \"step\", \"lr_step_rounds\": 1, \"lr_gamma\": 0.5", &L);
  hs_error e = {0};
  uint64_t n = 20;
  cr_assert_eq(sim_learn_fedavg(L, 0, &n, 1, &e), HS_OK, "%s", e.msg);
  sim_learn_round_end(L, 0, false, 1.0, 1.0, NULL);
  cr_assert_eq(sim_learn_fedavg(L, 1, &n, 1, &e), HS_OK, "%s", e.msg);
  hs_learner *l = own_learner(sc);
  size_t np = hs_learn_nparams(l);
  float *a = hs_malloc(np * 4), *b = hs_malloc(np * 4), *c = hs_malloc(np * 4);
  hs_learn_init_params(l, a);
  hs_learn_job j0 = {.participant = 0, .draw = 0, .samples = 20, .start = a, .out = b};
  cr_assert_eq(hs_learn_train(l, &j0, &e), HS_OK);
  hs_learn_job j1 = {.participant = 0, .draw = 1, .samples = 20, .start = b, .out = a, .lr = 0.05};
  hs_learn_job k1 = {.participant = 0, .draw = 1, .samples = 20, .start = b, .out = c};
  cr_assert_eq(hs_learn_train(l, &j1, &e), HS_OK);
  cr_assert_eq(hs_learn_train(l, &k1, &e), HS_OK);
  cr_expect_eq(memcmp(a, sim_learn_global(L), np * 4), 0, "round 1 did not run at 0.05");
  cr_expect_neq(memcmp(c, sim_learn_global(L), np * 4), 0, "the schedule changed nothing");
  hs_free(a);
  hs_free(b);
  hs_free(c);
  hs_learn_destroy(l);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

/* lr_scaling linear: a DDP step on a union batch of 16 with batch_size 8
 * runs at twice the rate: one single-process step at 0.2 on the union. */
Test(sim_learning, ddp_linear_scaling) {
  sim_learn *L;
  hs_scenario *sc = with_learner(3, "{\"kind\": \"ddp\"}", ", \"lr_scaling\": \"linear\"", &L);
  sim_learn_groups(L, 1);
  sim_learn_group_begin(L, 0);
  size_t ranks[3] = {0, 1, 2};
  uint64_t b[3] = {6, 10, 0};
  sim_learn_ddp_step(L, 0, ranks, b, 1, 3, 9);
  double w = 1;
  sim_learn_groups_end(L, &w);
  hs_learner *l = own_learner(sc);
  size_t np = hs_learn_nparams(l);
  float *p = hs_malloc(np * 4), *q = hs_malloc(np * 4);
  hs_learn_init_params(l, p);
  memcpy(q, p, np * 4);
  uint32_t idx[16];
  hs_learn_draw(l, 0, 9, 6, idx);
  hs_learn_draw(l, 1, 9, 10, idx + 6);
  hs_learn_grad *g = hs_learn_grad_create(l);
  hs_learn_batch_grad(l, p, idx, 16, g);
  hs_learn_optstate *s = hs_learn_optstate_for(l), *u = hs_learn_optstate_for(l);
  hs_learn_optstate_set_lr(s, 0.2);
  hs_learn_step(l, s, p, g);
  hs_learn_step(l, u, q, g);
  const float *r = sim_learn_global(L);
  size_t differ = 0, unscaled = 0;
  for (size_t i = 0; i < np; i++) {
    if (fabsf(p[i] - r[i]) > 1e-6f * fmaxf(1.0f, fabsf(p[i]))) differ++;
    if (fabsf(q[i] - r[i]) > 1e-6f * fmaxf(1.0f, fabsf(q[i]))) unscaled++;
  }
  cr_expect_eq(differ, 0, "%zu of %zu parameters differ from the step at 0.2", differ, np);
  cr_expect_gt(unscaled, 0, "the step at 0.1 is the same: scaling did nothing");
  hs_learn_optstate_destroy(s);
  hs_learn_optstate_destroy(u);
  hs_learn_grad_destroy(g);
  hs_free(p);
  hs_free(q);
  hs_learn_destroy(l);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

/* Time to a stable target: loss 1, 0.75 (met), 0.9875 (a stale update pulls
 * the curve back: missed), 0.4875 (met, last). First crossing at the second
 * evaluation; stable from the fourth; NaN while the last one misses. */
Test(sim_learning, stable_target) {
  hs_error e = {0};
  sim_learn *L;
  hs_scenario *sc = curve_scenario("curve2", "[[0, 2], [100, 1], [300, 0.5], [400, 0.45]]", 4, &L);
  sim_learn_result res;
  sim_learn_async_download(L, 0); /* device 0 holds the model at S = 0 */
  uint64_t n[2] = {40, 60};
  cr_assert_eq(sim_learn_fedavg(L, 0, n, 2, &e), HS_OK); /* S = 100, loss 1 */
  sim_learn_round_end(L, 0, false, 10.0, 1.0, NULL);
  uint64_t m[2] = {100, 0};
  cr_assert_eq(sim_learn_fedavg(L, 1, m, 2, &e), HS_OK); /* S = 200, loss 0.75 */
  sim_learn_round_end(L, 1, false, 20.0, 2.0, NULL);
  sim_learn_result_get(L, &res);
  cr_expect_float_eq(res.time_to_target_s, 20.0, 0);
  cr_expect_float_eq(res.time_to_stable_target_s, 20.0, 0, "met since the second evaluation");
  /* S = 0.5 * 200 + 0.5 * (0 + 10) = 105: loss 0.9875, missed */
  cr_assert_eq(sim_learn_async_arrival(L, 0, 10, 0.5, &e), HS_OK);
  sim_learn_round_end(L, 2, false, 30.0, 3.0, NULL);
  sim_learn_result_get(L, &res);
  cr_expect_float_eq(res.final_test_loss, 0.9875, 1e-12);
  cr_expect(isnan(res.time_to_stable_target_s), "the last evaluation missed the target");
  cr_expect_float_eq(res.time_to_target_s, 20.0, 0, "the first crossing stays");
  uint64_t k[2] = {100, 100}; /* S = 305 */
  cr_assert_eq(sim_learn_fedavg(L, 3, k, 2, &e), HS_OK);
  sim_learn_round_end(L, 3, true, 40.0, 4.0, NULL);
  sim_learn_result_get(L, &res);
  cr_expect_float_eq(res.time_to_stable_target_s, 40.0, 0);
  cr_expect_float_eq(res.energy_to_stable_target_j, 4.0, 0);
  cr_expect_float_eq(res.rounds_to_stable_target, 4.0, 0);
  cr_expect_float_eq(res.time_to_target_s, 20.0, 0);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}

/* utility "samples": the controller is not told the losses (Oort then ranks
 * by the samples it measured); "loss", the default, tells it. */
Test(sim_learning, utility_choice) {
  for (int k = 0; k < 2; k++) {
    sim_learn *L;
    hs_scenario *sc = with_learner(2, "{\"kind\": \"pma\"}",
                                   k ? ", \"utility\": \"samples\"" : "", &L);
    hs_error e = {0};
    uint64_t n[2] = {8, 8};
    cr_assert_eq(sim_learn_fedavg(L, 0, n, 2, &e), HS_OK, "%s", e.msg);
    double u[2] = {-1, -1};
    cr_expect_eq(sim_learn_utilities(L, u, 2), k == 0, "utility %s", k ? "samples" : "loss");
    cr_expect(k ? u[0] == -1 : u[0] > 0, "u[0] = %g", u[0]);
    sim_learn_destroy(L);
    hs_scenario_destroy(sc);
  }
}

/* last_batch drop: a device given fewer samples than a batch trains nothing
 * and is left out of the average (its data weight would pull the global
 * back to the old model): the round is the other device's model, bitwise. */
Test(sim_learning, dropped_job_is_not_averaged) {
  sim_learn *L;
  hs_scenario *sc = with_learner(2, "{\"kind\": \"pma\"}", ", \"last_batch\": \"drop\"", &L);
  hs_error e = {0};
  uint64_t n[2] = {3, 19}; /* batch_size 8: device 0 trains 0, device 1 16 */
  cr_assert_eq(sim_learn_fedavg(L, 0, n, 2, &e), HS_OK, "%s", e.msg);
  uint64_t trained;
  double sq;
  sim_learn_participant_loss(L, 0, &trained, &sq);
  cr_expect_eq(trained, 0);
  sim_learn_participant_loss(L, 1, &trained, &sq);
  cr_expect_eq(trained, 16);
  hs_learner *l = own_learner(sc);
  size_t np = hs_learn_nparams(l);
  float *a = hs_malloc(np * 4), *b = hs_malloc(np * 4);
  hs_learn_init_params(l, a);
  hs_learn_job j = {.participant = 1, .draw = 0, .samples = 16, .start = a, .out = b};
  cr_assert_eq(hs_learn_train(l, &j, &e), HS_OK, "%s", e.msg);
  cr_expect_eq(memcmp(b, sim_learn_global(L), np * 4), 0, "device 0's untrained copy was averaged in");
  hs_free(a);
  hs_free(b);
  hs_learn_destroy(l);
  sim_learn_destroy(L);
  hs_scenario_destroy(sc);
}
