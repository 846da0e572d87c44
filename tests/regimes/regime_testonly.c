/* regime_testonly.c: a regime that exists only in tests, to prove that a
 * regime is one file plus one registry line (registry_testonly.c) and that
 * the scenario loader, hetsim validate's printing and the run treat it like
 * the shipped ones without naming it.
 *
 * "testonly" (lock-step local training, no network): every round each
 * participant idles pause_s seconds, then trains its allocation; the round ends
 * when the last one finishes. With deterministic profiles a round lasts
 * pause_s + max_i(overhead_i + n_i tau_i), a closed form the test checks.
 * Options: pause_s (a number >= 0), label (a word, only printed), and
 * label_weight, which applies only to label "y" (exercises opt_prepare).
 * Its summary adds paused_s, the pause time of one device over the run.
 * Events per participant and round: pause over, compute done.
 * Policies: no participant selection, no step-level sizing. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "sim_run.h"

typedef struct testonly_opts {
  double pause_s;
  char *label;
  double label_weight;
} testonly_opts;

typedef struct testonly_state {
  size_t pending;
  double paused_s;
} testonly_state;

static void on_computed(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  testonly_state *ts = r->rs;
  sim_dev_state(r, i, HS_POWER_IDLE);
  if (--ts->pending == 0) sim_round_end(r);
}

static void on_paused(hs_engine *eng, void *subject, uint64_t i) {
  sim_run *r = subject;
  sim_dev_state(r, i, HS_POWER_BUSY);
  hs_engine_schedule_in(eng, sim_dev_compute_s(r, i, r->alloc[i], true, 0), 0, on_computed, r, i);
}

static void testonly_start_round(sim_run *r) {
  testonly_state *ts = r->rs;
  const testonly_opts *o = r->sc->regime.opts;
  ts->pending = 0;
  ts->paused_s += o->pause_s;
  for (size_t i = 0; i < r->ndev; i++) {
    if (r->alloc[i] == 0) continue;
    ts->pending++;
    hs_engine_schedule_in(r->eng, o->pause_s, 0, on_paused, r, i);
  }
  if (ts->pending == 0) sim_fail(r, HS_EINVAL, "the policy selected no participant");
}

static hs_status testonly_setup(sim_run *r, hs_error *err) {
  (void)err;
  r->rs = hs_calloc(1, sizeof(testonly_state));
  return HS_OK;
}

static void testonly_teardown(sim_run *r) { hs_free(r->rs); }

static size_t testonly_summary(sim_run *r, hs_report_field *out, size_t cap) {
  if (cap < 1) return 0;
  out[0] = (hs_report_field){"paused_s", ((const testonly_state *)r->rs)->paused_s};
  return 1;
}

static const char *testonly_prepare(const hs_scenario *sc, const void *opts,
                                    const sim_regime_opt *o, double *def) {
  (void)sc;
  (void)def;
  const char *label = ((const testonly_opts *)opts)->label;
  if (!strcmp(o->key, "label_weight") && strcmp(label, "y"))
    return "applies only to label \"y\"";
  return NULL;
}

static const char *const labels[] = {"x", "y", NULL};

static const sim_regime_opt testonly_table[] = {
    {"pause_s", SIM_OPT_NUM, offsetof(testonly_opts, pause_s), 0, 0, INFINITY, 0, NULL, NULL,
     "seconds every participant idles before training, each round"},
    {"label", SIM_OPT_CHOICE, offsetof(testonly_opts, label), 0, 0, 0, 0, labels, NULL,
     "a word that is only printed back"},
    {"label_weight", SIM_OPT_NUM, offsetof(testonly_opts, label_weight), 1, 0, 1,
     SIM_OPT_LO_OPEN, NULL, NULL, "label \"y\" only: a weight in (0, 1]"},
};

const sim_regime sim_regime_testonly = {
    .name = "testonly",
    .summary = "lock-step local training without a network (tests only)",
    .opts = testonly_table,
    .nopts = sizeof testonly_table / sizeof testonly_table[0],
    .opts_size = sizeof(testonly_opts),
    .opt_prepare = testonly_prepare,
    .caps_refused = HS_POLICY_CAP_SELECTS | HS_POLICY_CAP_STEP_LEVEL,
    .setup = testonly_setup,
    .start_round = testonly_start_round,
    .teardown = testonly_teardown,
    .summary_fields = testonly_summary,
};
