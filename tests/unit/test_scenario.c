/* test_scenario.c: the scenario loader: defaults, every validation rule,
 * --set semantics, count expansion, and a deterministic, reloadable to_json.
 * Fixture profiles (tests/data/scenario/profiles) are referenced by path so the
 * tests do not move when the shipped profiles are re-measured. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "base/hs_alloc.h"
#include "devices/hs_profile.h"
#include "sim/hs_scenario.h"
#include "test_scenario_util.h"

/* Two entries (a: fast, b: slow x3), one link. */
#define BASE "{" BASE_BODY
#define BASE_BODY                                                                  \
  "\"model_bytes\": 1000, \"rounds\": 2, \"samples_per_round\": 100,\n"             \
  " \"devices\": [{\"name\": \"a\", \"profile\": \"profiles/fast.json\"},\n"       \
  "               {\"name\": \"b\", \"profile\": \"profiles/slow.json\", \"count\": 3}],\n" \
  " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 100}}}}"

#define TWO_LINKS                                                                   \
  "{\"model_bytes\": 1000, \"rounds\": 2, \"samples_per_round\": 100,\n"            \
  " \"devices\": [{\"name\": \"a\", \"profile\": \"profiles/fast.json\", \"link\": \"lan\"},\n" \
  "               {\"name\": \"b\", \"profile\": \"profiles/slow.json\", \"count\": 3, " \
  "\"link\": \"wifi\"}],\n"                                                         \
  " \"network\": {\"server\": \"lan\", \"links\": {\"lan\": {\"bandwidth_mbps\": 100},\n" \
  "             \"wifi\": {\"bandwidth_mbps\": 20, \"latency_ms\": 3}}}}"

/* The regime object as hetsim validate prints it (the options belong to the
 * regime, so tests read them the way a user sees them). Caller deletes. */
static cJSON *regime_json(const hs_scenario *sc) { return printed_section(sc, "regime"); }

static const cJSON *opt(const cJSON *reg, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(reg, key);
}

/* --- defaults and expansion ------------------------------------------------------ */

Test(scenario, defaults_filled) {
  hs_scenario *sc = parse_ok(BASE, NULL, 0);
  cr_expect_str_eq(sc->name, "t");
  cr_expect_eq(sc->seed, 1);
  cr_expect_str_eq(sc->task, "mnist");
  cr_expect_eq(sc->batch_size, 32);
  cr_expect_str_eq(sc->regime.kind, "pma");
  cJSON *reg = regime_json(sc);
  cr_expect_eq(cJSON_GetArraySize(reg), 1, "pma has no options: only its kind is printed");
  cJSON_Delete(reg);
  cr_expect_eq(sc->regime.steps_per_round, 0, "pma has no optimiser steps");
  cr_expect_str_eq(sc->policy.kind, "equal");
  cr_expect_eq(sc->policy.seed, 1, "policy seed follows the scenario seed");
  cr_expect_eq(sc->ndevices, 2);
  cr_expect_eq(sc->total_devices, 4);
  cr_expect_eq(sc->devices[0].count, 1);
  cr_expect_str_eq(sc->devices[0].link, "lan");
  cr_expect_eq(sc->devices[0].speed_spread, 0.0);
  cr_expect_eq(sc->devices[0].power_spread, 0.0);
  cr_expect_null(sc->devices[0].speed_trace);
  cr_expect_null(sc->devices[0].owner);
  cr_expect_str_eq(sc->server_link, "lan");
  cr_expect_eq(sc->nlinks, 1);
  cr_expect_eq(sc->links[0].latency_ms, 0.0);
  cr_expect_eq(sc->links[0].bandwidth_mbps, 100.0);
  cr_expect_eq(sc->telemetry_time_noise, 0.0);
  cr_expect_eq(sc->telemetry_energy_noise, 0.0);
  cr_expect_not(sc->switch_off_unselected);
  cr_expect_not_null(sc->devices[1].profile);
  cr_expect_str_eq(hs_profile_name(sc->devices[1].profile), "test-slow");
  hs_scenario_destroy(sc);
}

Test(scenario, count_expansion_and_names) {
  hs_override o[] = {SET("devices[1].count", "12")};
  hs_scenario *sc = parse_ok(BASE, o, 1);
  cr_assert_eq(sc->total_devices, 13);
  hs_device_ref d[13];
  for (size_t i = 0; i < 13; i++) d[i] = hs_scenario_device(sc, i);
  cr_expect_str_eq(d[0].name, "a");
  cr_expect_eq(d[0].spec, 0);
  cr_expect_str_eq(d[1].name, "b-0");
  cr_expect_str_eq(d[12].name, "b-11");
  cr_expect_eq(d[12].spec, 1);
  cr_expect_eq(d[12].k, 11);
  cr_expect_eq(sc->devices[1].first, 1);
  cr_expect_eq(hs_scenario_find_device(sc, "b-10"), 11);
  cr_expect_eq(hs_scenario_find_device(sc, "a"), 0);
  cr_expect_eq(hs_scenario_find_device(sc, "b"), SIZE_MAX, "an entry name is not a device");
  cr_expect_eq(hs_scenario_find_device(sc, "b-12"), SIZE_MAX);
  cr_expect_null(hs_scenario_groups(sc));
  hs_scenario_destroy(sc);
}

Test(scenario, large_population_expands) {
  hs_override o[] = {SET("devices[1].count", "200000"), SET("samples_per_round", "1000000")};
  hs_scenario *sc = parse_ok(BASE, o, 2);
  cr_expect_eq(sc->total_devices, 200001);
  cr_expect_str_eq(hs_scenario_device_name(sc, 200000), "b-199999");
  char buf[HS_DEVICE_NAME_MAX];
  for (size_t i = 0; i < sc->total_devices; i += 997) { /* the arena and the writer agree */
    hs_scenario_device_name_into(sc, i, buf, sizeof buf);
    cr_expect_str_eq(buf, hs_scenario_device_name(sc, i));
    cr_expect_eq(hs_scenario_find_device(sc, buf), i);
  }
  cr_expect_eq(hs_scenario_find_device(sc, "b-0123"), SIZE_MAX, "not a generated name");
  cr_expect_eq(hs_scenario_find_device(sc, "b-200000"), SIZE_MAX);
  cr_expect_eq(hs_scenario_find_device(sc, "b-"), SIZE_MAX);
  cr_expect_eq(hs_scenario_find_device(sc, "-1"), SIZE_MAX);
  cr_expect_eq(hs_scenario_find_device(sc, "b-123456"), 123457);
  hs_scenario_destroy(sc);
}

/* Names are made on first use; runs that share one loaded scenario may ask
 * at once. Four threads start together on a fresh scenario: every name they
 * read equals the writer's, whichever thread built the arena. Without the
 * lock two threads build two arenas and one leaks (LeakSanitizer) or a name is
 * read from a half-built arena. */
typedef struct {
  const hs_scenario *sc;
  size_t start;
  int bad;
} names_job;

static void *names_worker(void *arg) {
  names_job *j = arg;
  char buf[HS_DEVICE_NAME_MAX];
  for (size_t i = j->start; i < j->sc->total_devices; i += 101) {
    hs_scenario_device_name_into(j->sc, i, buf, sizeof buf);
    if (strcmp(buf, hs_scenario_device_name(j->sc, i))) j->bad++;
  }
  return NULL;
}

Test(scenario, names_made_once_under_concurrent_first_use) {
  for (int round = 0; round < 8; round++) {
    hs_override o[] = {SET("devices[1].count", "50000"), SET("samples_per_round", "1000000")};
    hs_scenario *sc = parse_ok(BASE, o, 2);
    pthread_t t[4];
    names_job j[4];
    for (int k = 0; k < 4; k++) {
      j[k] = (names_job){sc, (size_t)k * 7, 0};
      cr_assert_eq(pthread_create(&t[k], NULL, names_worker, &j[k]), 0);
    }
    for (int k = 0; k < 4; k++) {
      pthread_join(t[k], NULL);
      cr_expect_eq(j[k].bad, 0, "thread %d read %d wrong names", k, j[k].bad);
    }
    hs_scenario_destroy(sc);
  }
}

Test(scenario, load_from_file_resolves_relative_paths) {
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_load(DATA "/unit-base.json", NULL, 0, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  cr_expect_str_eq(sc->name, "unit-base", "name defaults to the file name");
  cr_expect_not_null(sc->devices[0].speed_trace);
  cr_expect_str_eq(sc->devices[0].speed_trace_name, "throttle.csv");
  cr_expect_str_eq(sc->devices[0].speed_trace_path, DATA "/throttle.csv");
  hs_scenario_destroy(sc);
}

Test(scenario, file_not_found) {
  hs_error err = {0};
  cr_expect_null(hs_scenario_load(DATA "/no-such.json", NULL, 0, &err));
  cr_expect_eq(err.status, HS_ENOENT);
  cr_expect_not_null(strstr(err.msg, "no-such.json: cannot open"), "%s", err.msg);
}

Test(scenario, default_path_is_the_testbed) {
  const char *p = hs_scenario_default_path();
  size_t n = strlen(p);
  cr_expect(n > 23 && !strcmp(p + n - 23, "/testbed-mnist-pma.json"), "%s", p);
}

/* --- validation ------------------------------------------------------------------ */

Test(scenario, unknown_keys_rejected_everywhere) {
  hs_override top[] = {SET("colour", "1")};
  expect_fail(BASE, top, 1, HS_EKEY, "t.json: colour: unknown key", "--set colour");
  hs_override reg[] = {SET("regime.stepz", "4")};
  expect_fail(BASE, reg, 1, HS_EKEY, "regime.stepz: unknown key", NULL);
  hs_override dev[] = {SET("devices[1].colour", "\"red\"")};
  expect_fail(BASE, dev, 1, HS_EKEY, "devices[1].colour: unknown key", NULL);
  hs_override link[] = {SET("network.links.lan.jitter_ms", "1")};
  expect_fail(BASE, link, 1, HS_EKEY, "network.links.lan.jitter_ms: unknown key", NULL);
  hs_override tel[] = {SET("telemetry.noise", "0.1")};
  expect_fail(BASE, tel, 1, HS_EKEY, "telemetry.noise: unknown key", NULL);
  hs_override pol[] = {SET("policy.colour", "1")};
  expect_fail(BASE, pol, 1, HS_EKEY, "policy.colour: unknown policy key", NULL);
}

Test(scenario, duplicate_key_rejected) {
  expect_fail("{\"rounds\": 1, \"rounds\": 2}", NULL, 0, HS_EKEY, "t.json: rounds: key appears twice",
              NULL);
}

Test(scenario, wrong_types) {
  hs_override a[] = {SET("rounds", "many")};
  expect_fail(BASE, a, 1, HS_ETYPE, "rounds: expected an integer", "got a string");
  hs_override b[] = {SET("devices", "{}")};
  expect_fail(BASE, b, 1, HS_ETYPE, "devices: expected an array", NULL);
  hs_override c[] = {SET("switch_off_unselected", "1")};
  expect_fail(BASE, c, 1, HS_ETYPE, "switch_off_unselected: expected true or false", NULL);
  hs_override d[] = {SET("devices[0].profile", "4")};
  expect_fail(BASE, d, 1, HS_ETYPE, "devices[0].profile: expected a string", NULL);
  expect_fail("[1, 2]", NULL, 0, HS_ETYPE, "t.json: (top level): expected an object", NULL);
  hs_override e[] = {SET("policy.ema", "{\"x\": 1}")};
  expect_fail(BASE, e, 1, HS_ETYPE, "policy.ema: expected a number, got an object", NULL);
  hs_override f[] = {SET("name", "\"two\\nlines\"")};
  expect_fail(BASE, f, 1, HS_EINVAL, "t.json: name: control character", NULL);
}

Test(scenario, numbers_out_of_range) {
  hs_override a[] = {SET("rounds", "0")};
  expect_fail(BASE, a, 1, HS_ERANGE, "rounds: expected an integer in [1,", "got 0");
  hs_override b[] = {SET("network.links.lan.bandwidth_mbps", "-100")};
  expect_fail(BASE, b, 1, HS_ERANGE, "network.links.lan.bandwidth_mbps: expected a finite number > 0",
              "got -100");
  hs_override c[] = {SET("model_bytes", "1e999")};
  expect_fail(BASE, c, 1, HS_ERANGE, "model_bytes: expected a finite number", NULL);
  hs_override d[] = {SET("rounds", "2.5")};
  expect_fail(BASE, d, 1, HS_ERANGE, "rounds: expected an integer", "got 2.5");
  hs_override e[] = {SET("devices[1].count", "-1")}; /* 0 excludes the entry (issue 17) */
  expect_fail(BASE, e, 1, HS_ERANGE, "devices[1].count", NULL);
  hs_override f[] = {SET("telemetry.time_noise", "-0.1")};
  expect_fail(BASE, f, 1, HS_ERANGE, "telemetry.time_noise", NULL);
  hs_override g[] = {SET("network.links.lan.latency_ms", "-1")};
  expect_fail(BASE, g, 1, HS_ERANGE, "network.links.lan.latency_ms", NULL);
}

Test(scenario, required_keys) {
  hs_override a[] = {SET("model_bytes", "null")};
  expect_fail(BASE, a, 1, HS_EMISSING, "t.json: model_bytes: required key is missing", NULL);
  hs_override b[] = {SET("devices[0].profile", "null")};
  expect_fail(BASE, b, 1, HS_EMISSING, "devices[0].profile: required key is missing", NULL);
}

Test(scenario, unknown_regime_and_policy_kinds) {
  hs_override a[] = {SET("regime.kind", "ring-allreduce")};
  expect_fail(BASE, a, 1, HS_EINVAL, "regime.kind: unknown value \"ring-allreduce\"", "pma, ddp");
  hs_override b[] = {SET("policy.kind", "fastest")};
  expect_fail(BASE, b, 1, HS_ENOENT, "policy.kind: no policy \"fastest\"", NULL);
}

Test(scenario, policy_values_go_through_the_policies_library) {
  hs_override a[] = {SET("policy.kind", "adaptive"), SET("policy.w_e", "2")};
  expect_fail(BASE, a, 2, HS_ERANGE, "t.json: policy.w_e: 2 is outside [0, 1]", NULL);
  hs_override b[] = {SET("policy.oort_k", "3")};
  expect_fail(BASE, b, 1, HS_EKEY, "policy.oort_k: does not apply to policy \"equal\"", NULL);
  hs_override c[] = {SET("policy.steps_per_round", "3")};
  expect_fail(BASE, c, 1, HS_EKEY, "policy.steps_per_round: set regime.steps_per_round", NULL);
  hs_override d[] = {SET("policy.kind", "adaptive"), SET("policy.w_e", "[1]")};
  expect_fail(BASE, d, 2, HS_ETYPE, "policy.w_e: expected a number", NULL);
  /* Numbers only, as for every other numeric key ("rounds": "3" is refused). */
  hs_override q[] = {SET("policy.kind", "adaptive"), SET("policy.w_e", "\"0.5\"")};
  expect_fail(BASE, q, 2, HS_ETYPE, "policy.w_e: expected a number, got a string", NULL);
  hs_override x[] = {SET("policy.kind", "adaptive"), SET("policy.w_e", "0x1p-1")};
  expect_fail(BASE, x, 2, HS_ETYPE, "policy.w_e: expected a number, got a string", NULL);
  /* A whole number beyond 2^53 that a double holds exactly reaches the
   * policies library as an integer, not as 1.152921504606847e+18. */
  hs_override big[] = {SET("policy.seed", "1152921504606846976")};
  hs_scenario *sc = parse_ok(BASE, big, 1);
  cr_expect_eq(sc->policy.seed, 1152921504606846976ULL);
  hs_scenario_destroy(sc);
  /* A very long policy key: the reason still fits in the message. */
  char key[3100] = "policy.";
  memset(key + 7, 'k', 3000);
  key[3007] = '\0';
  hs_override e[] = {SET(key, "1")};
  expect_fail(BASE, e, 1, HS_EKEY, "unknown policy key (keys of \"equal\"", NULL);
  /* Quoted text is cut before a character, never inside one ("é" is 2 bytes). */
  char ukey[400] = "x";
  for (int i = 0; i < 150; i++) strcat(ukey, "\xc3\xa9");
  hs_override u[] = {SET(ukey, "1")};
  hs_error uerr = {0};
  cr_assert_null(parse(BASE, u, 1, &uerr));
  cr_expect(strstr(uerr.msg, "\xc3\xa9...") != NULL, "cut inside a character: %s", uerr.msg);
}

Test(scenario, profiles_resolved_and_checked) {
  hs_override a[] = {SET("devices[1].profile", "rpi9-does-not-exist")};
  expect_fail(BASE, a, 1, HS_ENOENT, "t.json: devices[1].profile: no profile \"rpi9-does-not-exist\"",
              NULL);
  hs_override b[] = {SET("task", "era5")};
  expect_fail(BASE, b, 1, HS_ENOENT,
              "devices[1].profile: profile \"test-slow\" has no task \"era5\"", "(it has: mnist)");
  hs_override c[] = {SET("devices[1].profile", "\"profiles/fast.json\"")};
  hs_scenario *sc = parse_ok(BASE, c, 1);
  cr_expect_eq(sc->devices[0].profile, sc->devices[1].profile, "one file, loaded once");
  hs_scenario_destroy(sc);
}

Test(scenario, speed_trace_loaded_relative_to_the_scenario) {
  hs_override a[] = {SET("devices[1].speed_trace", "throttle.csv")};
  hs_scenario *sc = parse_ok(BASE, a, 1);
  cr_expect_not_null(sc->devices[1].speed_trace);
  hs_scenario_destroy(sc);
  hs_override b[] = {SET("devices[1].speed_trace", "missing.csv")};
  expect_fail(BASE, b, 1, HS_ENOENT, "devices[1].speed_trace: ", "missing.csv");
}

Test(scenario, links_must_exist) {
  hs_override a[] = {SET("devices[0].link", "wan")};
  expect_fail(BASE, a, 1, HS_ENOENT, "devices[0].link: no link \"wan\"", NULL);
  hs_override b[] = {SET("network.server", "wan")};
  expect_fail(BASE, b, 1, HS_ENOENT, "network.server: no link \"wan\"", NULL);
  hs_override c[] = {SET("network.server", "null")};
  expect_fail(TWO_LINKS, c, 1, HS_EMISSING, "t.json: network: \"server\" is required", NULL);
  hs_override d[] = {SET("devices[0].link", "null")};
  expect_fail(TWO_LINKS, d, 1, HS_EMISSING, "devices[0]: \"link\" is required", NULL);
  hs_override e[] = {SET("network.links", "{}")};
  expect_fail(BASE, e, 1, HS_EINVAL, "network.links: no links", NULL);
}

Test(scenario, device_names_unique_after_expansion) {
  hs_override a[] = {SET("devices[1].name", "a")};
  expect_fail(BASE, a, 1, HS_EINVAL, "devices[1].name: \"a\" is already the name of devices[0]", NULL);
  hs_override b[] = {SET("devices[0].name", "b-1")};
  expect_fail(BASE, b, 1, HS_EINVAL,
              "devices[1].name: expanded name \"b-1\" is already the name of devices[0]", NULL);
  hs_override b2[] = {SET("devices[0].count", "2"), SET("devices[1].name", "a-1"),
                      SET("devices[1].count", "1")};
  expect_fail(BASE, b2, 3, HS_EINVAL, "devices[1].name: \"a-1\" is already the name of device 1 "
              "of devices[0] (\"a\", count 2)", NULL);
  hs_override c[] = {SET("devices[0].name", "a b")};
  expect_fail(BASE, c, 1, HS_EINVAL, "devices[0].name: \"a b\" is not a valid name", NULL);
}

Test(scenario, silos_resolve_entries_and_expanded_names) {
  hs_override a[] = {SET("regime", HFL_SILOS("[\"a\", \"b-2\"]", "[\"b-0\", \"b-1\"]"))};
  hs_scenario *sc = parse_ok(BASE, a, 1);
  const uint32_t *g = hs_scenario_groups(sc);
  cr_assert_not_null(g);
  cr_expect_eq(g[0], 0);
  cr_expect_eq(g[1], 1);
  cr_expect_eq(g[2], 1);
  cr_expect_eq(g[3], 0);
  cJSON *reg = regime_json(sc);
  const cJSON *s0 = cJSON_GetArrayItem(opt(reg, "silos"), 0);
  cr_expect_str_eq(opt(s0, "fabric")->valuestring, "lan", "fabric defaults to the members' link");
  cr_expect_eq(sc->regime.steps_per_round, 2);
  cr_expect_eq(sc->policy.steps_per_round, 2, "the regime's S reaches the policy");
  cr_expect_str_eq(opt(reg, "collective")->valuestring, "ring");
  cJSON_Delete(reg);
  hs_scenario_destroy(sc);
  hs_override b[] = {SET("regime", HFL_SILOS("[\"a\"]", "[\"b\"]"))};
  sc = parse_ok(BASE, b, 1);
  cr_expect_eq(hs_scenario_groups(sc)[3], 1, "an entry name takes all its devices");
  hs_scenario_destroy(sc);
}

Test(scenario, silo_errors) {
  hs_override a[] = {SET("regime", HFL_SILOS("[\"a\"]", "[\"b\", \"jetson\"]"))};
  expect_fail(BASE, a, 1, HS_ENOENT, "regime.silos[1].members[1]: no device \"jetson\"", NULL);
  hs_override b[] = {SET("regime", HFL_SILOS("[\"a\", \"b-1\"]", "[\"b\"]"))};
  expect_fail(BASE, b, 1, HS_EINVAL,
              "regime.silos[1].members[0]: device \"b-1\" is already in silo \"s1\"", NULL);
  hs_override c[] = {SET("regime", HFL_SILOS("[\"a\"]", "[\"b-0\"]"))};
  expect_fail(BASE, c, 1, HS_EINVAL, "regime.silos: device \"b-1\" is in no silo", NULL);
  hs_override d[] = {SET("regime", HFL_SILOS("[\"a\"]", "[\"b\"]")),
                     SET("regime.silos[0].fabric", "wan")};
  expect_fail(BASE, d, 2, HS_ENOENT, "regime.silos[0].fabric: no link \"wan\"", NULL);
  hs_override f[] = {SET("regime", HFL_SILOS("[\"a\", \"b\"]", "[]"))};
  expect_fail(BASE, f, 1, HS_EINVAL, "regime.silos[1].members: a silo needs at least one member",
              NULL);
  hs_override g[] = {SET("regime", HFL_SILOS("[\"a\", \"b\"]", "[]")),
                     SET("regime.silos[1]", "null")};
  hs_scenario_destroy(parse_ok(TWO_LINKS, NULL, 0));
  expect_fail(TWO_LINKS, g, 2, HS_EMISSING, "regime.silos[0]: \"fabric\" is required", NULL);
  hs_override h[] = {SET("regime.kind", "hfl-ddp")};
  expect_fail(BASE, h, 1, HS_EMISSING, "regime.silos: required key is missing", NULL);
}

Test(scenario, regime_options_must_apply_to_the_kind) {
  hs_override a[] = {SET("regime.steps_per_round", "4")};
  expect_fail(BASE, a, 1, HS_EINVAL, "regime.steps_per_round: does not apply to regime \"pma\"",
              "ddp, hfl-ddp");
  hs_override b[] = {SET("regime.kind", "ddp"), SET("regime.mixing_alpha", "0.5")};
  expect_fail(BASE, b, 2, HS_EINVAL, "regime.mixing_alpha: does not apply to regime \"ddp\"",
              NULL);
  hs_override c[] = {SET("regime.kind", "ddp"), SET("regime.silos", "[]")};
  expect_fail(BASE, c, 2, HS_EINVAL, "regime.silos: does not apply", NULL);
  hs_override d[] = {SET("regime.kind", "fedasync"), SET("regime.staleness_b", "3")};
  expect_fail(BASE, d, 2, HS_EINVAL, "regime.staleness_b: applies only to staleness \"hinge\"",
              NULL);
  hs_override e[] = {SET("regime.kind", "ddp"), SET("regime.collective", "butterfly")};
  expect_fail(BASE, e, 2, HS_EINVAL, "regime.collective: unknown value \"butterfly\"",
              "(one of: ring, tree, star)");
}

Test(scenario, policy_must_apply_to_the_regime) {
  hs_override a[] = {SET("policy.kind", "ema-batch")};
  expect_fail(BASE, a, 1, HS_EINVAL,
              "t.json: policy.kind: policy \"ema-batch\" does not apply to regime pma",
              "(from --set policy.kind)");
  hs_override b[] = {SET("policy.kind", "oort"), SET("regime.kind", "ddp")};
  expect_fail(BASE, b, 2, HS_EINVAL, "policy.kind: policy \"oort\" does not apply to regime ddp",
              NULL);
  hs_override c[] = {SET("policy.kind", "ema-batch"), SET("regime.kind", "ddp")};
  hs_scenario_destroy(parse_ok(BASE, c, 2));
}

Test(scenario, ddp_steps_default_from_budget) {
  hs_override a[] = {SET("regime.kind", "ddp")};
  hs_scenario *sc = parse_ok(BASE, a, 1);
  cr_expect_eq(sc->regime.steps_per_round, 1, "100 / (32 x 4) rounds down, at least 1");
  hs_scenario_destroy(sc);
  hs_override b[] = {SET("regime.kind", "ddp"), SET("samples_per_round", "1280")};
  sc = parse_ok(BASE, b, 2);
  cr_expect_eq(sc->regime.steps_per_round, 10, "1280 / (32 x 4)");
  cr_expect_eq(sc->policy.steps_per_round, 10);
  hs_scenario_destroy(sc);
}

Test(scenario, fedasync_defaults) {
  hs_override a[] = {SET("regime.kind", "fedasync")};
  hs_scenario *sc = parse_ok(BASE, a, 1);
  cJSON *reg = regime_json(sc);
  cr_expect_str_eq(opt(reg, "staleness")->valuestring, "polynomial");
  cr_expect_eq(opt(reg, "staleness_a")->valuedouble, 0.5);
  cr_expect_null(opt(reg, "staleness_b"), "staleness_b applies to hinge only");
  cr_expect_eq(opt(reg, "mixing_alpha")->valuedouble, 0.6);
  cJSON_Delete(reg);
  hs_scenario_destroy(sc);
  hs_override b[] = {SET("regime.kind", "fedasync"), SET("regime.staleness", "hinge")};
  sc = parse_ok(BASE, b, 2);
  reg = regime_json(sc);
  cr_expect_eq(opt(reg, "staleness_a")->valuedouble, 10.0);
  cr_expect_eq(opt(reg, "staleness_b")->valuedouble, 4.0);
  cJSON_Delete(reg);
  hs_scenario_destroy(sc);
  hs_override c[] = {SET("regime.kind", "fedasync"), SET("regime.staleness", "constant")};
  sc = parse_ok(BASE, c, 2);
  reg = regime_json(sc);
  cr_expect_null(opt(reg, "staleness_a"), "constant has no exponent");
  cJSON_Delete(reg);
  hs_scenario_destroy(sc);
}

Test(scenario, budget_below_floor) {
  hs_override a[] = {SET("samples_per_round", "3")};
  expect_fail(BASE, a, 1, HS_ERANGE,
              "t.json: samples_per_round: 3 is below the floor: 4 devices x policy.min_samples 1",
              NULL);
  hs_override b[] = {SET("policy.kind", "adaptive"), SET("policy.min_samples", "26")};
  expect_fail(BASE, b, 2, HS_ERANGE, "samples_per_round: 100 is below the floor", "= 104");
  hs_override c[] = {SET("policy.kind", "adaptive"), SET("policy.min_samples", "25")};
  hs_scenario_destroy(parse_ok(BASE, c, 2));
}

Test(scenario, malformed_json_names_line_and_column) {
  expect_fail("{\n  \"rounds\": 3\n  \"seed\": 1\n}", NULL, 0, HS_EPARSE,
              "t.json: line 3, column 3: malformed JSON", "near \"\"seed\"");
  expect_fail("{\"rounds\": ", NULL, 0, HS_EPARSE, "malformed JSON", NULL);
}

/* --- overrides ------------------------------------------------------------------- */

Test(scenario, override_values_and_indexes) {
  hs_override o[] = {SET("devices[1].count", "5"), SET("network.links.lan.bandwidth_mbps", "2.5"),
                     SET("name", "renamed"), SET("seed", "42"), SET("devices[0].owner", "lab")};
  hs_scenario *sc = parse_ok(BASE, o, 5);
  cr_expect_eq(sc->total_devices, 6);
  cr_expect_eq(sc->links[0].bandwidth_mbps, 2.5);
  cr_expect_str_eq(sc->name, "renamed", "a value that is not JSON is a string");
  cr_expect_eq(sc->seed, 42);
  cr_expect_str_eq(sc->devices[0].owner, "lab");
  hs_scenario_destroy(sc);
}

Test(scenario, override_null_restores_the_default) {
  hs_override o[] = {SET("seed", "null"), SET("devices[1].count", "null")};
  hs_scenario *sc = parse_ok("{\"seed\": 9," BASE_BODY, o, 2);
  cr_expect_eq(sc->seed, 1);
  cr_expect_eq(sc->total_devices, 2);
  hs_scenario_destroy(sc);
}

Test(scenario, override_parent_must_exist) {
  hs_override a[] = {SET("devices[5].count", "2")};
  expect_fail(BASE, a, 1, HS_ENOENT, "t.json: --set devices[5].count: devices[5] does not exist",
              "(it has 2 entries)");
  hs_override b[] = {SET("network.links.wan.bandwidth_mbps", "10")};
  expect_fail(BASE, b, 1, HS_ENOENT, "--set network.links.wan.bandwidth_mbps: network.links.wan "
              "does not exist", NULL);
  hs_override srv[] = {SET("regime.server.s_per_update", "0.001")};
  expect_fail(BASE, srv, 1, HS_ENOENT, "--set regime.server.s_per_update: regime.server does not exist; "
              "to add it, set it whole: --set 'regime.server={\"s_per_update\": 0.001}'", NULL);
  hs_override c[] = {SET("rounds.x", "1")};
  expect_fail(BASE, c, 1, HS_ETYPE, "--set rounds.x: rounds is a number, not an object", NULL);
  hs_override d[] = {SET("devices[x].count", "1")};
  expect_fail(BASE, d, 1, HS_EINVAL, "--set devices[x].count: bad array index", NULL);
  hs_override e[] = {SET("policy..w_e", "1")};
  expect_fail(BASE, e, 1, HS_EINVAL, "--set policy..w_e: empty name", NULL);
}

Test(scenario, override_append_to_array) {
  hs_override o[] = {SET("devices[2]", "{\"name\": \"c\", \"profile\": \"profiles/fast.json\"}")};
  hs_scenario *sc = parse_ok(BASE, o, 1);
  cr_expect_eq(sc->ndevices, 3);
  cr_expect_eq(hs_scenario_find_device(sc, "c"), 4);
  hs_scenario_destroy(sc);
}

/* A policy key's value (the config stores keys by name, not as fields). */
static double policy_key(const hs_policy_config *p, const char *key) {
  double v = NAN;
  cr_assert_eq(hs_policy_config_get(p, key, &v, NULL), HS_OK, "policy.%s", key);
  return v;
}

Test(scenario, override_creates_implicit_sections) {
  /* BASE has no regime or policy object; they exist implicitly. */
  hs_override o[] = {SET("regime.kind", "ddp"), SET("regime.steps_per_round", "7"),
                     SET("policy.kind", "balanced"), SET("telemetry.time_noise", "0.05")};
  hs_scenario *sc = parse_ok(BASE, o, 4);
  cr_expect_eq(sc->regime.steps_per_round, 7);
  cr_expect_str_eq(sc->policy.kind, "balanced");
  cr_expect_eq(policy_key(&sc->policy, "w_e"), 0.5);
  cr_expect_eq(sc->telemetry_time_noise, 0.05);
  hs_scenario_destroy(sc);
}

#define WITH_ADAPTIVE_POLICY                                                           \
  "{\"policy\": {\"kind\": \"adaptive\", \"w_e\": 0.3, \"deadband\": 0.2, \"ema\": 0.9}," BASE_BODY

Test(scenario, policy_kind_override_reinitialises_defaults) {
  hs_policy_config def;
  cr_assert_eq(hs_policy_config_init(&def, "energy-only", NULL), HS_OK);
  /* The file's w_e 0.3 would contradict energy-only: the new kind starts fresh,
   * and the other policy overrides apply after it whatever their order. */
  hs_override o[] = {SET("policy.ema", "0.7"), SET("policy.kind", "energy-only")};
  hs_scenario *sc = parse_ok(WITH_ADAPTIVE_POLICY, o, 2);
  cr_expect_str_eq(sc->policy.kind, "energy-only");
  cr_expect_eq(policy_key(&sc->policy, "w_e"), 1.0);
  cr_expect_eq(policy_key(&sc->policy, "deadband"), policy_key(&def, "deadband"),
               "the file's deadband was for the old kind");
  cr_expect_eq(policy_key(&sc->policy, "ema"), 0.7);
  hs_scenario_destroy(sc);
  /* Without a kind override the file's keys stay. */
  sc = parse_ok(WITH_ADAPTIVE_POLICY, NULL, 0);
  cr_expect_eq(policy_key(&sc->policy, "w_e"), 0.3);
  cr_expect_eq(policy_key(&sc->policy, "deadband"), 0.2);
  hs_scenario_destroy(sc);
}

Test(scenario, override_parse) {
  char a[] = "policy.w_e=0.25", b[] = "k=", c[] = "=1", d[] = "novalue", e[] = "x=a=b";
  hs_override o;
  hs_error err = {0};
  cr_assert_eq(hs_override_parse(a, &o, &err), HS_OK);
  cr_expect_str_eq(o.key, "policy.w_e");
  cr_expect_str_eq(o.value, "0.25");
  cr_assert_eq(hs_override_parse(b, &o, &err), HS_OK);
  cr_expect_str_eq(o.value, "");
  cr_expect_eq(hs_override_parse(c, &o, &err), HS_EINVAL);
  cr_expect_eq(hs_override_parse(d, &o, &err), HS_EINVAL);
  cr_expect_not_null(strstr(err.msg, "--set novalue: expected key=value"), "%s", err.msg);
  cr_assert_eq(hs_override_parse(e, &o, &err), HS_OK);
  cr_expect_str_eq(o.value, "a=b");
}

/* --- printing -------------------------------------------------------------------- */

static double num_at(cJSON *root, const char *a, const char *b) {
  cJSON *n = cJSON_GetObjectItemCaseSensitive(root, a);
  if (b) n = cJSON_GetObjectItemCaseSensitive(n, b);
  cr_assert(cJSON_IsNumber(n), "%s.%s is not a number", a, b ? b : "");
  return n->valuedouble;
}

Test(scenario, to_json_fills_defaults) {
  hs_override o[] = {SET("policy.kind", "time-only"), SET("regime.kind", "ddp")};
  hs_scenario *sc = parse_ok(BASE, o, 2);
  char *text = hs_scenario_to_json(sc);
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root, "%s", text);
  cr_expect_eq(num_at(root, "seed", NULL), 1);
  cr_expect_eq(num_at(root, "batch_size", NULL), 32);
  cr_expect_eq(num_at(root, "regime", "steps_per_round"), 1);
  cr_expect_eq(num_at(root, "policy", "w_e"), 0);
  cr_expect_eq(num_at(root, "policy", "min_samples"), policy_key(&sc->policy, "min_samples"));
  cr_expect_eq(num_at(root, "telemetry", "time_noise"), 0);
  cJSON *d1 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "devices"), 1);
  cr_expect_eq(cJSON_GetObjectItemCaseSensitive(d1, "count")->valuedouble, 3);
  cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(d1, "link")->valuestring, "lan");
  cJSON *lan = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "network"), "links"),
      "lan");
  cr_expect_eq(cJSON_GetObjectItemCaseSensitive(lan, "latency_ms")->valuedouble, 0);
  cJSON_Delete(root);
  hs_free(text);
  hs_scenario_destroy(sc);
}

Test(scenario, to_json_is_deterministic_and_reloads_to_itself) {
  hs_override o[] = {SET("regime", HFL_SILOS("[\"a\", \"b-2\"]", "[\"b-0\", \"b-1\"]")),
                     SET("policy.kind", "adaptive"), SET("policy.w_e", "0.3"),
                     SET("policy.seed", "5"), SET("devices[0].speed_trace", "throttle.csv")};
  hs_scenario *s1 = parse_ok(BASE, o, 5), *s2 = parse_ok(BASE, o, 5);
  char *t1 = hs_scenario_to_json(s1), *t2 = hs_scenario_to_json(s2);
  cr_expect_str_eq(t1, t2);
  hs_scenario *s3 = parse_ok(t1, NULL, 0);
  char *t3 = hs_scenario_to_json(s3);
  cr_expect_str_eq(t1, t3, "reloading the printed scenario changes it");
  cr_expect_eq(s3->policy.seed, 5);
  cr_expect_not_null(s3->devices[0].speed_trace);
  hs_free(t1);
  hs_free(t2);
  hs_free(t3);
  hs_scenario_destroy(s1);
  hs_scenario_destroy(s2);
  hs_scenario_destroy(s3);
}
