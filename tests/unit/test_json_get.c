/* test_json_get.c: hetsim::json (hs_json_get.h), the getters the scenario and
 * profile loaders share: the path builder (push, pop, the cut with and
 * without "..."), the number and integer getters (range ends, the classes of
 * a non-finite or non-number value, the hint above the range, ", got" with
 * either loader's words), objects and booleans. Known answers are the texts
 * each loader printed before the getters were shared. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "traces/hs_json_get.h"

/* The words each loader uses for the failures tested here (scenario_get.c,
 * profile.c); the rest of hs_json_words is not read by these getters. */
static const hs_json_words scn_like = {.top_level = "(top level)",
                                       .missing = "required key is missing",
                                       .not_object = "expected an object",
                                       .not_bool = "expected true or false",
                                       .show_got = true,
                                       .show_keys = true};

static const hs_json_words dev_like = {.missing = "missing required field",
                                       .not_object = "must be an object",
                                       .not_bool = "must be true or false",
                                       .mark_cut = true};

static hs_error err;

static hs_json_ctx ctx_of(const hs_json_words *w) {
  memset(&err, 0, sizeof err);
  hs_json_ctx c = {"f.json", &err, w, NULL, NULL};
  return c;
}

/* A cJSON value from JSON text (1e999 parses as inf). */
static cJSON *val(const char *text) {
  cJSON *v = cJSON_Parse(text);
  cr_assert(v, "parse %s", text);
  return v;
}

/* --- paths ---------------------------------------------------------------- */

Test(json_get, path_push_pop) {
  hs_json_path p;
  hs_json_path_init(&p, false, NULL);
  cr_expect_str_eq(hs_json_path_str(&p), "");
  size_t m0 = hs_json_path_key(&p, "devices");
  size_t m1 = hs_json_path_index(&p, 2);
  size_t m2 = hs_json_path_key(&p, "count");
  cr_expect_str_eq(hs_json_path_str(&p), "devices[2].count");
  hs_json_path_pop(&p, m2);
  cr_expect_str_eq(hs_json_path_str(&p), "devices[2]");
  hs_json_path_pop(&p, m1);
  cr_expect_str_eq(hs_json_path_str(&p), "devices");
  hs_json_path_pop(&p, m0);
  cr_expect_str_eq(hs_json_path_str(&p), "");
  hs_json_path_init(&p, true, "tasks.mnist");
  hs_json_path_key(&p, "tau_s");
  cr_expect_str_eq(hs_json_path_str(&p), "tasks.mnist.tau_s");
}

/* A path of exactly HS_JSON_PATH_MAX - 1 bytes is whole; one byte more is
 * cut: silently (scenario) or with "..." in its last three bytes (profile). */
static void long_key(char *k, size_t n) {
  memset(k, 'k', n);
  k[n] = '\0';
}

Test(json_get, path_cut_plain_and_marked) {
  char key[400];
  for (int marked = 0; marked < 2; marked++) {
    hs_json_path p;
    hs_json_path_init(&p, marked, NULL);
    long_key(key, HS_JSON_PATH_MAX - 1);
    size_t m = hs_json_path_key(&p, key);
    cr_expect_eq(strlen(hs_json_path_str(&p)), HS_JSON_PATH_MAX - 1);
    cr_expect_str_eq(hs_json_path_str(&p), key, "255 bytes fit");
    hs_json_path_key(&p, "x");
    const char *s = hs_json_path_str(&p);
    cr_expect_eq(strlen(s), HS_JSON_PATH_MAX - 1);
    if (marked)
      cr_expect_str_eq(s + HS_JSON_PATH_MAX - 4, "...", "marked: %s", s);
    else
      cr_expect_eq(s[HS_JSON_PATH_MAX - 2], 'k', "plain: cut, unmarked");
    hs_json_path_pop(&p, m + HS_JSON_PATH_MAX - 1);
    cr_expect_str_eq(hs_json_path_str(&p), key, "popping below the cut restores the text");
    hs_json_path_pop(&p, m);
    cr_expect_str_eq(hs_json_path_str(&p), "");
  }
}

/* Deep pushes past the cut and pops back through it, against the text the
 * profile loader used to write with snprintf (first 252 bytes + "..."). */
Test(json_get, path_marked_matches_snprintf_rule) {
  hs_json_path p;
  hs_json_path_init(&p, true, NULL);
  char whole[4096] = "";
  size_t marks[64];
  for (int i = 0; i < 60; i++) { /* about 400 bytes: well past the cut */
    char k[16];
    snprintf(k, sizeof k, "key%d", i);
    marks[i] = hs_json_path_key(&p, k);
    if (i) strcat(whole, ".");
    strcat(whole, k);
    char want[HS_JSON_PATH_MAX];
    int len = snprintf(want, sizeof want, "%s", whole);
    if (len >= HS_JSON_PATH_MAX) memcpy(want + HS_JSON_PATH_MAX - 4, "...", 4);
    cr_expect_str_eq(hs_json_path_str(&p), want, "depth %d", i);
  }
  for (int i = 59; i >= 0; i--) {
    hs_json_path_pop(&p, marks[i]);
    whole[marks[i]] = '\0';
    char want[HS_JSON_PATH_MAX];
    int len = snprintf(want, sizeof want, "%s", whole);
    if (len >= HS_JSON_PATH_MAX) memcpy(want + HS_JSON_PATH_MAX - 4, "...", 4);
    cr_expect_str_eq(hs_json_path_str(&p), want, "popped to %d", i);
  }
}

Test(json_get, join_from_text) {
  hs_json_ctx c = ctx_of(&dev_like);
  char out[HS_JSON_PATH_MAX], key[300];
  hs_json_join(&c, out, "", "name");
  cr_expect_str_eq(out, "name");
  hs_json_join_index(&c, out, "thermal.levels", 3);
  cr_expect_str_eq(out, "thermal.levels[3]");
  long_key(key, 260);
  hs_json_join(&c, out, "tasks", key);
  cr_expect_eq(strlen(out), HS_JSON_PATH_MAX - 1);
  cr_expect_str_eq(out + HS_JSON_PATH_MAX - 4, "...");
  char deeper[HS_JSON_PATH_MAX];
  hs_json_join(&c, deeper, out, "tau_s"); /* a cut parent stays cut the same way */
  cr_expect_str_eq(deeper, out);
  /* The scenario's words show keys (control characters as '?') and do not mark. */
  hs_json_ctx s = ctx_of(&scn_like);
  hs_json_join(&s, out, "network.links", "a\tb");
  cr_expect_str_eq(out, "network.links.a?b");
}

/* --- numbers -------------------------------------------------------------- */

/* One case: the JSON text, the status, and the message (NULL: not checked). */
typedef struct num_case {
  const char *text;
  hs_status st;
  const char *msg;
} num_case;

/* Every case through hs_json_number (whole: hs_json_integer) at path; a
 * value read is the text's, a failure leaves *out as it was. */
static void expect_cases(const hs_json_ctx *c, const char *path, const hs_json_num *spec,
                         bool whole, const num_case *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    cJSON *v = val(cases[i].text);
    double x = -12345;
    hs_status st = whole ? hs_json_integer(c, v, path, spec, &x)
                         : hs_json_number(c, v, path, spec, &x);
    cr_expect_eq(st, cases[i].st, "%s: status %d", cases[i].text, (int)st);
    if (st == HS_OK) cr_expect_eq(x, v->valuedouble, "%s", cases[i].text);
    else cr_expect_eq(x, -12345, "%s: untouched on failure", cases[i].text);
    if (cases[i].msg) cr_expect_str_eq(err.msg, cases[i].msg, "%s", cases[i].text);
    cJSON_Delete(v);
  }
}
#define N(a) (sizeof a / sizeof a[0])

/* The scenario's wording: "expected <range>, got <what>"; non-finite is a range error. */
Test(json_get, number_scenario_words) {
  hs_json_ctx c = ctx_of(&scn_like);
  hs_json_num spec = {.lo = 0.1, .lo_open = true, .hi = 1, .hi_open = true,
                      .want = "expected a number in (0.1, 1)", .non_finite = HS_ERANGE};
  static const num_case cases[] = {
      {"0.25", HS_OK, NULL},
      {"1", HS_ERANGE, "f.json: policy.w_e: expected a number in (0.1, 1), got 1"},
      {"0.1", HS_ERANGE, "f.json: policy.w_e: expected a number in (0.1, 1), got 0.10000000000000001"},
      {"1e999", HS_ERANGE, "f.json: policy.w_e: expected a number in (0.1, 1), got inf"},
      {"\"0.5\"", HS_ETYPE, "f.json: policy.w_e: expected a number in (0.1, 1), got a string"},
  };
  expect_cases(&c, "policy.w_e", &spec, false, cases, N(cases));
  static const num_case top[] = {{"2", HS_ERANGE, "f.json: (top level): expected a number in (0.1, 1), got 2"}};
  expect_cases(&c, "", &spec, false, top, N(top));
}

/* The profile's wording: no ", got"; non-finite is a type error; above the
 * range a units hint. */
Test(json_get, number_profile_words) {
  hs_json_ctx c = ctx_of(&dev_like);
  hs_json_num spec = {.lo = 0, .lo_open = true, .hi = 100000, .want = "must be a finite number > 0",
                      .above = "must be at most 100000 (check the units)", .non_finite = HS_ETYPE};
  static const num_case cases[] = {
      {"100000", HS_OK, NULL},
      {"1e-300", HS_OK, NULL},
      {"0", HS_ERANGE, "f.json: idle_w: must be a finite number > 0"},
      {"-1", HS_ERANGE, "f.json: idle_w: must be a finite number > 0"},
      {"100001", HS_ERANGE, "f.json: idle_w: must be at most 100000 (check the units)"},
      {"1e999", HS_ETYPE, "f.json: idle_w: must be a finite number > 0"},
      {"-1e999", HS_ETYPE, "f.json: idle_w: must be a finite number > 0"},
      {"null", HS_ETYPE, "f.json: idle_w: must be a finite number > 0"},
      {"[1]", HS_ETYPE, "f.json: idle_w: must be a finite number > 0"},
  };
  expect_cases(&c, "idle_w", &spec, false, cases, N(cases));
  /* A caller can class a non-number as a range error too (temperatures). */
  spec = (hs_json_num){.lo = -50, .hi = 200, .want = "must be a temperature in [-50, 200] deg C",
                       .not_number = HS_ERANGE, .non_finite = HS_ERANGE};
  static const num_case temp[] = {
      {"true", HS_ERANGE, "f.json: thermal.ambient_c: must be a temperature in [-50, 200] deg C"},
      {"-50", HS_OK, NULL},
      {"200.5", HS_ERANGE, NULL},
  };
  expect_cases(&c, "thermal.ambient_c", &spec, false, temp, N(temp));
}

Test(json_get, integer_whole_and_range) {
  hs_json_ctx c = ctx_of(&scn_like);
  hs_json_num spec = {.lo = 1, .hi = 1e9, .want = "expected an integer in [1, 1000000000]",
                      .non_finite = HS_ERANGE};
  static const num_case cases[] = {
      {"1000000000", HS_OK, NULL},
      {"1", HS_OK, NULL},
      {"2.5", HS_ERANGE, "f.json: rounds: expected an integer in [1, 1000000000], got 2.5"},
      {"0", HS_ERANGE, NULL},
      {"1000000001", HS_ERANGE, NULL},
      {"-1e999", HS_ERANGE, "f.json: rounds: expected an integer in [1, 1000000000], got -inf"},
      {"{}", HS_ETYPE, "f.json: rounds: expected an integer in [1, 1000000000], got an object"},
  };
  expect_cases(&c, "rounds", &spec, true, cases, N(cases));
  /* The profile's count: every failure but a non-number is a range error. */
  hs_json_ctx d = ctx_of(&dev_like);
  spec = (hs_json_num){.lo = 1, .hi = 4294967295.0, .want = "must be an integer >= 1",
                       .non_finite = HS_ERANGE};
  static const num_case count[] = {
      {"4294967295", HS_OK, NULL},
      {"4294967296", HS_ERANGE, "f.json: tasks.t.threads: must be an integer >= 1"},
      {"1e999", HS_ERANGE, "f.json: tasks.t.threads: must be an integer >= 1"},
      {"\"4\"", HS_ETYPE, "f.json: tasks.t.threads: must be an integer >= 1"},
  };
  expect_cases(&d, "tasks.t.threads", &spec, true, count, N(count));
}

/* One status for every failure (the regime options' sim_opt_num/uint): a
 * non-number, a non-finite value, a value out of range and a fraction all
 * get it, with the same reason. */
Test(json_get, one_status_for_every_failure) {
  hs_json_ctx d = ctx_of(&dev_like);
  hs_json_num spec = {.lo = 0, .lo_open = true, .hi = 1,
                      .want = "expected a factor in (0, 1] of the nominal",
                      .not_number = HS_EINVAL, .non_finite = HS_EINVAL, .out_of_range = HS_EINVAL};
  static const num_case factor[] = {
      {"1", HS_OK, NULL},
      {"1e-300", HS_OK, NULL},
      {"0", HS_EINVAL, "f.json: dvfs.speed: expected a factor in (0, 1] of the nominal"},
      {"1.5", HS_EINVAL, "f.json: dvfs.speed: expected a factor in (0, 1] of the nominal"},
      {"1e999", HS_EINVAL, NULL},
      {"\"1\"", HS_EINVAL, NULL},
  };
  expect_cases(&d, "dvfs.speed", &spec, false, factor, N(factor));
  spec = (hs_json_num){.lo = 1, .hi = 1e9, .want = "expected a whole number of children >= 1",
                       .not_number = HS_EINVAL, .non_finite = HS_EINVAL, .out_of_range = HS_EINVAL};
  static const num_case fanout[] = {
      {"1000000000", HS_OK, NULL},
      {"2.5", HS_EINVAL, "f.json: fanout: expected a whole number of children >= 1"},
      {"1000000001", HS_EINVAL, NULL},
      {"null", HS_EINVAL, NULL},
  };
  expect_cases(&d, "fanout", &spec, true, fanout, N(fanout));
}

/* --- objects, booleans, missing keys ------------------------------------- */

Test(json_get, object_bool_missing) {
  hs_json_ctx c = ctx_of(&scn_like);
  cJSON *v = val("[1]");
  bool b = false;
  cr_expect_eq(hs_json_object(&c, v, "network"), HS_ETYPE);
  cr_expect_str_eq(err.msg, "f.json: network: expected an object, got an array");
  cr_expect_eq(hs_json_bool(&c, v, "switch_off_unselected", &b), HS_ETYPE);
  cr_expect_str_eq(err.msg, "f.json: switch_off_unselected: expected true or false, got an array");
  cJSON_Delete(v);
  v = val("true");
  cr_expect_eq(hs_json_bool(&c, v, "x", &b), HS_OK);
  cr_expect(b);
  cJSON_Delete(v);
  hs_json_ctx d = ctx_of(&dev_like);
  v = val("1");
  cr_expect_eq(hs_json_object(&d, v, "(top level)"), HS_ETYPE);
  cr_expect_str_eq(err.msg, "f.json: (top level): must be an object");
  cr_expect_eq(hs_json_bool(&d, v, "tasks.t.energy_measured", &b), HS_ETYPE);
  cr_expect_str_eq(err.msg, "f.json: tasks.t.energy_measured: must be true or false");
  cJSON_Delete(v);
  cr_expect_eq(hs_json_missing(&d, "tasks.t", "tau_s"), HS_EMISSING);
  cr_expect_str_eq(err.msg, "f.json: tasks.t.tau_s: missing required field");
  cr_expect_eq(hs_json_missing(&c, "", "rounds"), HS_EMISSING);
  cr_expect_str_eq(err.msg, "f.json: rounds: required key is missing");
}
