/* test_scenario_util.h: what the scenario loader's Criterion files share
 * (test_scenario.c, test_scenario_exclude.c): parse text from the fixture
 * folder tests/data/scenario (origin "t.json"), expect a load to work, or to
 * fail with a status and a one-line message holding given pieces; read a
 * section of the scenario as printed back. */
#ifndef TEST_SCENARIO_UTIL_H
#define TEST_SCENARIO_UTIL_H

#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "base/hs_alloc.h"
#include "sim/hs_scenario.h"

#define DATA HS_SOURCE_DIR "/tests/data/scenario"

#define SET(k, v) ((hs_override){(k), (v)})

/* An hfl-ddp regime with silos s1 and s2 (members: JSON arrays). */
#define HFL_SILOS(members_a, members_b)                                                  \
  "{\"kind\": \"hfl-ddp\", \"steps_per_round\": 2, \"silos\": [{\"name\": \"s1\", \"members\": " \
  members_a "}, {\"name\": \"s2\", \"members\": " members_b "}]}"

static inline hs_scenario *parse(const char *json, const hs_override *o, size_t n,
                                 hs_error *err) {
  return hs_scenario_parse(json, "t.json", DATA, o, n, err);
}

static inline hs_scenario *parse_ok(const char *json, const hs_override *o, size_t n) {
  hs_error err = {0};
  hs_scenario *sc = parse(json, o, n, &err);
  cr_assert_not_null(sc, "unexpected error: %s", err.msg);
  return sc;
}

/* The load must fail with st and a message containing every given piece. */
static inline void expect_fail(const char *json, const hs_override *o, size_t n, hs_status st,
                               const char *piece1, const char *piece2) {
  hs_error err = {0};
  hs_scenario *sc = parse(json, o, n, &err);
  cr_assert_null(sc, "expected \"%s\" to fail", piece1);
  cr_expect_eq(err.status, st, "status %d (%s), expected %d; message: %s", err.status,
               hs_status_str(err.status), st, err.msg);
  cr_expect_not_null(strstr(err.msg, piece1), "\"%s\" not in: %s", piece1, err.msg);
  if (piece2) cr_expect_not_null(strstr(err.msg, piece2), "\"%s\" not in: %s", piece2, err.msg);
  cr_expect_null(strchr(err.msg, '\n'), "message spans lines: %s", err.msg);
}

/* One top-level member of the scenario as hetsim validate prints it
 * (hs_scenario_to_json), detached: the caller deletes it. */
static inline cJSON *printed_section(const hs_scenario *sc, const char *key) {
  char *text = hs_scenario_to_json(sc);
  cJSON *root = cJSON_Parse(text);
  hs_free(text);
  cr_assert_not_null(root);
  cJSON *sec = cJSON_DetachItemFromObject(root, key);
  cJSON_Delete(root);
  cr_assert_not_null(sec, "no \"%s\" in the printed scenario", key);
  return sec;
}

#endif
