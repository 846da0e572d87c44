/* test_regime_testonly.c: a regime added the way every regime is added (one
 * file, tests/regimes/regime_testonly.c, and one registry line,
 * tests/regimes/registry_testonly.c) is loaded, validated, printed and run by
 * the shared code, which never names it.
 *
 * Profiles: tests/data/run/profiles (tau_cv = 0): det-fast 1 ms + 0.5 s
 * overhead, det-mid 2 ms + 0.25 s, det-slow 4 ms + 0 s; busy 10 W, idle 2 W. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "traces/hs_outfile.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "sim_regime.h"
#include "test_tmpdir.h"

#define DATA HS_SOURCE_DIR "/tests/data/run"

static hs_scenario *load(const char *regime, const char *policy, hs_error *err) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"t\", \"model_bytes\": 1, \"rounds\": 3, \"samples_per_round\": 300,"
           " \"regime\": %s, \"policy\": %s,"
           " \"devices\": [{\"name\": \"fast\", \"profile\": \"profiles/det-fast.json\"},"
           "  {\"name\": \"mid\", \"profile\": \"profiles/det-mid.json\"},"
           "  {\"name\": \"slow\", \"profile\": \"profiles/det-slow.json\"}],"
           " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 1000}}}}",
           regime, policy);
  return hs_scenario_parse(text, "t.json", DATA, NULL, 0, err);
}

static void expect_error(const char *regime, const char *policy, const char *msg) {
  hs_error err = {0};
  hs_scenario *sc = load(regime, policy, &err);
  cr_expect_null(sc, "%s should not load", regime);
  cr_expect_str_eq(err.msg, msg);
  hs_scenario_destroy(sc);
}

Test(regime_testonly, registered_after_the_shipped_regimes) {
  /* The test registry is the shipped list plus one line: testonly comes last. */
  size_t last = sim_regime_count() - 1;
  cr_assert_gt(sim_regime_count(), 4);
  cr_expect_str_eq(sim_regime_at(0)->name, "pma", "the first regime stays the default");
  cr_expect_str_eq(sim_regime_at(last)->name, "testonly");
  cr_expect_eq(sim_regime_find("testonly"), sim_regime_at(last));
  cr_expect_null(sim_regime_find("nope"));
  cr_expect(sim_regime_runs_policy(sim_regime_at(last), "time-only"));
  cr_expect_not(sim_regime_runs_policy(sim_regime_at(last), "oort"), "refuses selection");
  cr_expect_not(sim_regime_runs_policy(sim_regime_at(last), "ema-batch"), "refuses step-level");
}

/* Every registered regime's table is well formed: keys unique within the
 * regime, a doc line, static defaults inside their range, choices present. */
Test(regime_testonly, every_option_table_is_well_formed) {
  for (size_t k = 0; k < sim_regime_count(); k++) {
    const sim_regime *rg = sim_regime_at(k);
    cr_expect(rg->start_round != NULL, "%s schedules rounds", rg->name);
    cr_expect(rg->nopts == 0 || rg->opts_size > 0, "%s has an options struct", rg->name);
    for (size_t i = 0; i < rg->nopts; i++) {
      const sim_regime_opt *o = &rg->opts[i];
      cr_expect(o->doc && o->doc[0], "%s.%s has a doc line", rg->name, o->key);
      cr_expect_eq(sim_regime_opt_find(rg, o->key), o, "%s.%s appears once", rg->name, o->key);
      cr_expect(o->offset < rg->opts_size, "%s.%s lies in the struct", rg->name, o->key);
      if (o->type == SIM_OPT_UINT || o->type == SIM_OPT_NUM)
        cr_expect(o->def >= o->lo && o->def <= o->hi, "%s.%s default in range", rg->name, o->key);
      if (o->type == SIM_OPT_CHOICE)
        cr_expect(o->choices && o->choices[0], "%s.%s has choices", rg->name, o->key);
      if (o->type == SIM_OPT_CUSTOM)
        cr_expect(rg->opt_parse && rg->opt_print && rg->opts_free, "%s.%s has hooks", rg->name,
                  o->key);
    }
  }
}

Test(regime_testonly, options_are_parsed_defaulted_and_printed) {
  hs_error err = {0};
  hs_scenario *sc = load("{\"kind\": \"testonly\", \"pause_s\": 0.5}", "{\"kind\": \"equal\"}",
                         &err);
  cr_assert_not_null(sc, "%s", err.msg);
  cr_expect_eq(sc->regime.steps_per_round, 0);
  cr_expect_null(hs_scenario_groups(sc));
  char *text = hs_scenario_to_json(sc);
  cr_expect(strstr(text, "\"regime\":\t{\n\t\t\"kind\":\t\"testonly\",\n\t\t\"pause_s\":\t0.5,\n"
                         "\t\t\"label\":\t\"x\"\n\t}") != NULL,
            "kind, then the options in table order, label_weight left out: %s", text);
  /* What validate prints loads back to the same scenario. */
  hs_scenario *again = hs_scenario_parse(text, "t.json", DATA, NULL, 0, &err);
  cr_assert_not_null(again, "%s", err.msg);
  char *text2 = hs_scenario_to_json(again);
  cr_expect_str_eq(text2, text);
  hs_free(text2);
  hs_free(text);
  hs_scenario_destroy(again);
  hs_scenario_destroy(sc);

  sc = load("{\"kind\": \"testonly\", \"label\": \"y\"}", "{}", &err);
  cr_assert_not_null(sc, "%s", err.msg);
  text = hs_scenario_to_json(sc);
  cr_expect(strstr(text, "\"label_weight\":\t1\n") != NULL, "its default, once it applies");
  hs_free(text);
  hs_scenario_destroy(sc);
}

Test(regime_testonly, bad_options_name_the_path_and_the_reason) {
  expect_error("{\"kind\": \"testonly\", \"pause_s\": -1}", "{}",
               "t.json: regime.pause_s: expected a finite number >= 0, got -1");
  expect_error("{\"kind\": \"testonly\", \"label\": \"z\"}", "{}",
               "t.json: regime.label: unknown value \"z\" (one of: x, y); did you mean \"x\"?");
  expect_error("{\"kind\": \"testonly\", \"label_weight\": 0.5}", "{}",
               "t.json: regime.label_weight: applies only to label \"y\"");
  expect_error("{\"kind\": \"testonly\", \"steps_per_round\": 2}", "{}",
               "t.json: regime.steps_per_round: does not apply to regime \"testonly\" (only to: "
               "ddp, hfl-ddp, fsdp, hsdp, fl-fsdp, fl-hsdp)");
  expect_error("{\"kind\": \"pma\", \"pause_s\": 2}", "{}",
               "t.json: regime.pause_s: does not apply to regime \"pma\" (only to: testonly)");
  expect_error("{\"kind\": \"testonly\", \"pause\": 2}", "{}",
               "t.json: regime.pause: unknown key (allowed here: kind, pause_s, label, label_weight); "
               "did you mean \"pause_s\"?");
  expect_error("{\"kind\": \"lockstep\"}", "{}",
               "t.json: regime.kind: unknown value \"lockstep\" (one of: pma, ddp, hfl-ddp, "
               "fedasync, fsdp, hsdp, fl-fsdp, fl-hsdp, agc, fl, testonly)");
  expect_error("{\"kind\": \"testonly\"}", "{\"kind\": \"oort\"}",
               "t.json: policy.kind: policy \"oort\" does not apply to regime testonly");
}

/* Round = pause + the slowest participant: equal split, 100 samples each:
 * fast 0.5 + 0.1 = 0.6 s, mid 0.25 + 0.2, slow 0.4; so 3 x (0.5 + 0.6) s. */
Test(regime_testonly, runs_to_its_closed_form_and_adds_its_summary_field) {
  hs_error err = {0};
  hs_scenario *sc = load("{\"kind\": \"testonly\", \"pause_s\": 0.5}", "{}", &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char dir[] = "/tmp/hs-testonly-XXXXXX";
  cr_assert_not_null(test_mkdtemp_at(dir));
  hs_run_opts opts = {0};
  opts.out_dir = dir;
  hs_summary sum = {0};
  cr_assert_eq(hs_run(sc, &opts, &sum, &err), HS_OK, "%s", err.msg);
  cr_expect_float_eq(sum.makespan_s, 3 * 1.1, 1e-9);
  cr_expect_eq(sum.samples, 900);
  /* Energy: busy 10 W while training, idle 2 W otherwise, 3 devices. */
  double busy_s = 3 * (0.6 + 0.45 + 0.4);
  cr_expect_float_eq(sum.energy_j, 10 * busy_s + 2 * (3 * sum.makespan_s - busy_s), 1e-6);
  char path[128];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  char *text = hs_read_file(path, NULL, &err);
  cr_assert_not_null(text, "%s", err.msg);
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root);
  const cJSON *paused = cJSON_GetObjectItemCaseSensitive(root, "paused_s");
  cr_assert(cJSON_IsNumber(paused), "the regime's summary field is written");
  cr_expect_float_eq(paused->valuedouble, 1.5, 1e-12);
  cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(root, "regime")->valuestring, "testonly");
  cJSON_Delete(root);
  hs_free(text);
  const char *files[] = {"summary.json", "rounds.csv", "devices.csv"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
  hs_scenario_destroy(sc);
}
