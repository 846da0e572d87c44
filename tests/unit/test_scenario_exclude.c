/* test_scenario_exclude.c: "count": 0 excludes a devices[] entry (issue 17).
 * The loader keeps the entry (validated, printed back with "excluded": true,
 * its name known) but gives it no device: hs_scenario.devices, the expanded
 * table, groups and every count a regime reads are those of the scenario
 * with the entry deleted. Whole runs against the deleted scenario, regime by
 * regime, are tests/cli/exclude_equiv.sh. */
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "base/hs_alloc.h"
#include "sim/hs_scenario.h"
#include "test_scenario_util.h"

/* Three entries: a (1), b (3, excluded below), c (2). */
#define THREE                                                                             \
  "{\"model_bytes\": 1000, \"rounds\": 2, \"samples_per_round\": 100,\n"                   \
  " \"devices\": [{\"name\": \"a\", \"profile\": \"profiles/fast.json\"},\n"              \
  "               {\"name\": \"b\", \"profile\": \"profiles/slow.json\", \"count\": 3},\n" \
  "               {\"name\": \"c\", \"profile\": \"profiles/slow.json\", \"count\": 2}],\n" \
  " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 100}}}}"

Test(scenario_exclude, entry_gives_no_device) {
  hs_override o[] = {SET("devices[1].count", "0")};
  hs_scenario *sc = parse_ok(THREE, o, 1);
  cr_expect_eq(sc->ndevices, 2, "only the included entries are in devices[]");
  cr_expect_eq(sc->total_devices, 3);
  cr_expect_str_eq(sc->devices[0].name, "a");
  cr_expect_str_eq(sc->devices[1].name, "c");
  cr_expect_eq(sc->devices[1].count, 2);
  cr_expect_eq(sc->devices[1].first, 1, "c follows a directly");
  hs_device_ref d[3];
  for (size_t i = 0; i < 3; i++) d[i] = hs_scenario_device(sc, i);
  cr_expect_str_eq(d[0].name, "a");
  cr_expect_eq(d[0].spec, 0);
  cr_expect_str_eq(d[1].name, "c-0");
  cr_expect_eq(d[1].spec, 1, "spec indexes devices[], which has no excluded entry");
  cr_expect_str_eq(d[2].name, "c-1");
  cr_expect_eq(d[2].k, 1);
  size_t first = 99, n = 99;
  cr_expect(hs_scenario_find_name(sc, "b", &first, &n), "an excluded entry's name is known");
  cr_expect_eq(n, 0, "and names no device");
  cr_expect_eq(hs_scenario_find_device(sc, "b"), SIZE_MAX);
  cr_expect_not(hs_scenario_find_name(sc, "b-0", &first, &n), "no expanded names");
  cr_expect_eq(hs_scenario_find_device(sc, "c-1"), 2);
  hs_scenario_destroy(sc);
}

Test(scenario_exclude, same_as_deleted) {
  /* Every field a run reads equals the scenario without the entry. */
  hs_override o[] = {SET("devices[0].count", "0")};
  hs_override del[] = {SET("devices[0]", "null")};
  hs_scenario *x = parse_ok(THREE, o, 1), *y = parse_ok(THREE, del, 1);
  cr_assert_eq(x->ndevices, y->ndevices);
  cr_assert_eq(x->total_devices, y->total_devices);
  for (size_t i = 0; i < x->ndevices; i++) {
    cr_expect_str_eq(x->devices[i].name, y->devices[i].name);
    cr_expect_eq(x->devices[i].count, y->devices[i].count);
    cr_expect_eq(x->devices[i].first, y->devices[i].first);
    cr_expect_eq(x->devices[i].profile != NULL, 1);
  }
  for (size_t k = 0; k < x->total_devices; k++) {
    hs_device_ref dx = hs_scenario_device(x, k), dy = hs_scenario_device(y, k);
    cr_expect_str_eq(dx.name, dy.name);
    cr_expect_eq(dx.spec, dy.spec);
    cr_expect_eq(dx.k, dy.k);
  }
  hs_scenario_destroy(x);
  hs_scenario_destroy(y);
}

Test(scenario_exclude, printed_marked_and_reloads) {
  hs_override o[] = {SET("devices[1].count", "0")};
  hs_scenario *sc = parse_ok(THREE, o, 1);
  cJSON *d = printed_section(sc, "devices");
  cr_assert_eq(cJSON_GetArraySize(d), 3, "the excluded entry is kept, in place");
  const cJSON *b = cJSON_GetArrayItem(d, 1);
  cr_expect_str_eq(cJSON_GetObjectItem(b, "name")->valuestring, "b");
  cr_expect_eq(cJSON_GetObjectItem(b, "count")->valuedouble, 0);
  cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(b, "excluded")), "marked excluded");
  cr_expect_null(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "excluded"),
                 "only excluded entries carry the mark");
  cJSON_Delete(d);
  /* Loading the printed scenario gives the same scenario (same text again). */
  char *t1 = hs_scenario_to_json(sc);
  hs_scenario *again = parse_ok(t1, NULL, 0);
  char *t2 = hs_scenario_to_json(again);
  cr_expect_str_eq(t1, t2);
  cr_expect_eq(again->ndevices, 2);
  hs_free(t1);
  hs_free(t2);
  hs_scenario_destroy(again);
  hs_scenario_destroy(sc);
}

Test(scenario_exclude, excluded_key_only_repeats_count) {
  hs_override ok[] = {SET("devices[1].count", "0"), SET("devices[1].excluded", "true")};
  hs_scenario *sc = parse_ok(THREE, ok, 2);
  cr_expect_eq(sc->total_devices, 3);
  hs_scenario_destroy(sc);
  hs_override ok2[] = {SET("devices[1].excluded", "false")};
  sc = parse_ok(THREE, ok2, 1);
  cr_expect_eq(sc->total_devices, 6);
  hs_scenario_destroy(sc);
  hs_override a[] = {SET("devices[1].excluded", "true")};
  expect_fail(THREE, a, 1, HS_EINVAL, "t.json: devices[1].excluded: true, but count is 3",
              "count 0 is what excludes an entry");
  hs_override b[] = {SET("devices[2].count", "0"), SET("devices[2].excluded", "false")};
  expect_fail(THREE, b, 2, HS_EINVAL, "devices[2].excluded: false, but count is 0", NULL);
  hs_override c[] = {SET("devices[0].excluded", "1")};
  expect_fail(THREE, c, 1, HS_ETYPE, "devices[0].excluded: expected true or false", NULL);
}

Test(scenario_exclude, every_entry_excluded_is_refused) {
  hs_override o[] = {SET("devices[0].count", "0"), SET("devices[1].count", "0"),
                     SET("devices[2].count", "0")};
  expect_fail(THREE, o, 3, HS_EINVAL,
              "t.json: devices: every entry has count 0: no device to simulate", NULL);
  hs_override neg[] = {SET("devices[1].count", "-1")};
  expect_fail(THREE, neg, 1, HS_ERANGE, "devices[1].count: expected an integer in [0,", NULL);
}

Test(scenario_exclude, entry_still_validated_and_named) {
  /* An excluded entry is checked like any other: a missing profile, an
   * unknown link or a clashing name are still errors. */
  hs_override a[] = {SET("devices[1].count", "0"), SET("devices[1].profile", "nope.json")};
  expect_fail(THREE, a, 2, HS_ENOENT, "devices[1].profile", NULL);
  hs_override b[] = {SET("devices[1].count", "0"), SET("devices[1].link", "wan")};
  expect_fail(THREE, b, 2, HS_ENOENT, "devices[1].link: no link \"wan\"", NULL);
  hs_override c[] = {SET("devices[1].count", "0"), SET("devices[2].name", "b")};
  expect_fail(THREE, c, 2, HS_EINVAL, "devices[2].name: \"b\" is already the name of devices[1]",
              "(excluded, count 0)");
  hs_override d[] = {SET("devices[1].count", "0"), SET("devices[1].name", "c-1")};
  expect_fail(THREE, d, 2, HS_EINVAL, "\"c-1\" is already the name of", NULL);
}

Test(scenario_exclude, budget_floor_counts_included_devices) {
  /* 3 devices left x min_samples 30 = 90 <= 100: fine; with b it would be 180. */
  hs_override o[] = {SET("devices[1].count", "0"), SET("policy.kind", "adaptive"),
                     SET("policy.min_samples", "30")};
  hs_scenario *sc = parse_ok(THREE, o, 3);
  hs_scenario_destroy(sc);
  hs_override p[] = {SET("policy.kind", "adaptive"), SET("policy.min_samples", "30")};
  expect_fail(THREE, p, 2, HS_ERANGE, "6 devices", NULL);
}

Test(scenario_exclude, silo_members_of_excluded_entries) {
  hs_override o[] = {SET("devices[1].count", "0"),
                     SET("regime", HFL_SILOS("[\"a\", \"b\"]", "[\"c\"]"))};
  hs_scenario *sc = parse_ok(THREE, o, 2);
  const uint32_t *g = hs_scenario_groups(sc), want[] = {0, 1, 1}; /* a | c-0 c-1 */
  cr_assert_not_null(g);
  for (size_t k = 0; k < 3; k++) cr_expect_eq(g[k], want[k], "device %zu", k);
  /* The member stays as written (validate shows the scenario as given). */
  char *text = hs_scenario_to_json(sc);
  cr_expect_not_null(strstr(text, "\"b\""));
  hs_free(text);
  hs_scenario_destroy(sc);
  hs_override e[] = {SET("devices[2].count", "0"),
                     SET("regime", HFL_SILOS("[\"a\", \"b\"]", "[\"c\"]"))};
  expect_fail(THREE, e, 2, HS_EINVAL,
              "regime.silos[1].members: every member is an excluded entry (count 0)", NULL);
  /* An expanded name of an entry now excluded names nothing. */
  hs_override f[] = {SET("devices[1].count", "0"),
                     SET("regime", HFL_SILOS("[\"a\", \"b-0\"]", "[\"c\"]"))};
  expect_fail(THREE, f, 2, HS_ENOENT, "regime.silos[0].members[1]: no device \"b-0\"", NULL);
}

Test(scenario_exclude, k_of_n_counts_devices_left) {
  hs_override ok[] = {SET("regime", "{\"kind\": \"fl\", \"topology\": \"threshold\", \"k\": 3}"),
                      SET("devices[1].count", "0")};
  hs_scenario *sc = parse_ok(THREE, ok, 2);
  hs_scenario_destroy(sc);
  hs_override bad[] = {SET("regime", "{\"kind\": \"fl\", \"topology\": \"threshold\", \"k\": 4}"),
                       SET("devices[1].count", "0")};
  expect_fail(THREE, bad, 2, HS_EINVAL, "regime.k: K = 4 > N = 3 devices", NULL);
}

#define CURVE_COUNTS(list)                                                                \
  "{\"mode\": \"curve\", \"curve_profile\": \"x86-fc-vm-epyc-2vcpu\", "               \
  "\"partition\": \"counts\", \"counts\": " list "}"

Test(scenario_exclude, learning_counts_are_per_device_left) {
  hs_override ok[] = {SET("devices[1].count", "0"), SET("learning", CURVE_COUNTS("[10, 20, 30]"))};
  hs_scenario *sc = parse_ok(THREE, ok, 2);
  cr_assert_not_null(sc->learning);
  cr_expect_eq(sc->learning->counts[2], 30);
  hs_scenario_destroy(sc);
  hs_override bad[] = {SET("devices[1].count", "0"),
                       SET("learning", CURVE_COUNTS("[1, 2, 3, 4, 5, 6]"))};
  expect_fail(THREE, bad, 2, HS_EINVAL, "learning.counts: expected an array of 3 sizes", NULL);
}

Test(scenario_exclude, dynamics_may_name_an_excluded_entry) {
  hs_override o[] = {SET("devices[1].count", "0"),
                     SET("dynamics", "{\"devices\": {\"b\": {\"availability\": "
                                     "{\"mean_on_s\": 10, \"mean_off_s\": 5}}}}")};
  hs_error err = {0};
  hs_scenario *sc = parse(THREE, o, 2, &err);
  cr_expect_not_null(sc, "a dynamics block on an excluded entry applies to no device: %s",
                     err.msg);
  hs_scenario_destroy(sc);
}
