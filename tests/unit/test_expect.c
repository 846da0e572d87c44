/* test_expect.c: golden comparison (traces/src/expect.c) and the run-folder
 * guard and self-description (sim/run/run_describe.c through hs_run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/hs_alloc.h"
#include "traces/hs_expect.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "base/hs_util.h"
#include "test_tmpdir.h"

static int csv(const char *g, const char *o, double rtol, hs_expect_diff *d, hs_error *err) {
  return hs_expect_csv(g, strlen(g), "gold.csv", o, strlen(o), rtol, d, err);
}

Test(expect, csv_equal_and_first_difference) {
  hs_expect_diff d;
  hs_error err = {0};
  const char *g = "a,b,c\n1,x,3.5\n2,y,4\n";
  cr_expect_eq(csv(g, g, 0, &d, &err), HS_EXPECT_SAME);
  cr_expect_eq(csv(g, "a,b,c\n1,x,3.5\n2,y,4.25\n", 0, &d, &err), HS_EXPECT_DIFF);
  cr_expect_eq(d.line, 3);
  cr_expect_eq(d.record, 2);
  cr_expect_str_eq(d.where, "c");
  cr_expect_str_eq(d.want, "4");
  cr_expect_str_eq(d.got, "4.25");
  /* The header is compared as text: a renamed column is a difference there. */
  cr_expect_eq(csv(g, "a,B,c\n1,x,3.5\n2,y,4\n", 0.5, &d, &err), HS_EXPECT_DIFF);
  cr_expect_eq(d.record, 0);
  cr_expect_str_eq(d.where, "column 2");
  /* A missing column and an extra column. */
  cr_expect_eq(csv(g, "a,b,c\n1,x\n2,y,4\n", 0, &d, &err), HS_EXPECT_DIFF);
  cr_expect_str_eq(d.where, "c");
  cr_expect_str_eq(d.got, "(none)");
  cr_expect_eq(csv(g, "a,b,c\n1,x,3.5,9\n2,y,4\n", 0, &d, &err), HS_EXPECT_DIFF);
  cr_expect_str_eq(d.where, "column 4");
  cr_expect_str_eq(d.want, "(none)");
}

Test(expect, csv_lengths_differ) {
  hs_expect_diff d;
  hs_error err = {0};
  cr_expect_eq(csv("a\n1\n2\n", "a\n1\n", 0, &d, &err), HS_EXPECT_DIFF);
  cr_expect_eq(d.line, 3);
  cr_expect_str_eq(d.want, "2");
  cr_expect_str_eq(d.got, "(none: the file ends)");
  cr_expect_eq(csv("a\n1\n", "a\n1\n2\n", 0, &d, &err), HS_EXPECT_DIFF);
  cr_expect_eq(d.line, 0, "past the golden's end");
  cr_expect_eq(d.record, 2);
  cr_expect_str_eq(d.got, "2");
}

Test(expect, csv_rtol) {
  hs_expect_diff d;
  hs_error err = {0};
  const char *g = "x,name\n100,a\nnan,b\n";
  cr_expect_eq(csv(g, "x,name\n100.00001,a\nnan,b\n", 0, &d, &err), HS_EXPECT_DIFF);
  cr_expect_eq(csv(g, "x,name\n100.00001,a\nnan,b\n", 1e-6, &d, &err), HS_EXPECT_SAME);
  cr_expect_eq(csv(g, "x,name\n100.001,a\nnan,b\n", 1e-6, &d, &err), HS_EXPECT_DIFF);
  /* Text never matches by tolerance; a number never matches a word. */
  cr_expect_eq(csv(g, "x,name\n100,a\n1,b\n", 1, &d, &err), HS_EXPECT_DIFF);
  cr_expect_eq(hs_expect_cell_eq("1e3", "1000", 1e-12), 1);
  cr_expect_eq(hs_expect_cell_eq("1e3", "1000", 0), 0, "exact means the same text");
  cr_expect_eq(hs_expect_cell_eq("-0", "0", 1e-9), 1);
  cr_expect_eq(hs_expect_cell_eq("inf", "inf", 0.1), 1);
  cr_expect_eq(hs_expect_cell_eq("inf", "1e308", 0.1), 0);
  cr_expect_eq(hs_expect_cell_eq("abc", "abd", 1), 0);
}

Test(expect, csv_malformed_golden) {
  hs_expect_diff d;
  hs_error err = {0};
  /* A golden row with another field count than its header, and an empty golden. */
  cr_expect_eq(csv("a,b\n1,2\n3\n", "a,b\n1,2\n3,4\n", 0, &d, &err), HS_EXPECT_BAD);
  cr_expect_str_eq(err.msg, "gold.csv: line 3: 1 fields where its header has 2 (a malformed golden)");
  cr_expect_eq(csv("", "a,b\n", 0, &d, &err), HS_EXPECT_BAD);
  cr_expect(strstr(err.msg, "gold.csv: empty") != NULL, "%s", err.msg);
  cr_expect_eq(csv("a,b\n1,\"open\n", "a,b\n1,2\n", 0, &d, &err), HS_EXPECT_BAD);
  cr_expect(strstr(err.msg, "gold.csv: line 2") != NULL, "%s", err.msg);
  const char nul[] = "a\n1\0\n";
  cr_expect_eq(hs_expect_csv(nul, sizeof nul - 1, "gold.csv", "a\n1\n", 4, 0, &d, &err),
               HS_EXPECT_BAD);
  cr_expect(strstr(err.msg, "NUL") != NULL, "%s", err.msg);
  /* A broken output is a difference, not a broken golden. */
  cr_expect_eq(csv("a,b\n1,2\n", "a,b\n1,\"open\n", 0, &d, &err), HS_EXPECT_DIFF);
}

Test(expect, json_paths_and_skip) {
  hs_expect_diff d;
  hs_error err = {0};
  const char *skip[] = {"hetsim_version"};
  const char *g = "{\"v\": \"1\", \"a\": {\"b\": [1, 2, {\"c\": 3.5}]}, \"n\": null, \"t\": true}";
  cr_expect_eq(hs_expect_json(g, "g.json", g, 0, skip, 1, &d, &err), HS_EXPECT_SAME);
  cr_expect_eq(hs_expect_json(g, "g.json",
                              "{\"v\": \"1\", \"a\": {\"b\": [1, 2, {\"c\": 3.75}]}, \"n\": null, "
                              "\"t\": true}",
                              0, skip, 1, &d, &err),
               HS_EXPECT_DIFF);
  cr_expect_str_eq(d.where, "a.b[2].c");
  cr_expect_str_eq(d.want, "3.5");
  cr_expect_str_eq(d.got, "3.75");
  cr_expect_eq(hs_expect_json(g, "g.json",
                              "{\"v\": \"1\", \"a\": {\"b\": [1, 2, {\"c\": 3.5000001}]}, "
                              "\"n\": null, \"t\": true}",
                              1e-6, skip, 1, &d, &err),
               HS_EXPECT_SAME);
  /* Type changes, missing and extra keys, array lengths. */
  cr_expect_eq(hs_expect_json("{\"t\": true}", "g", "{\"t\": false}", 0, NULL, 0, &d, &err),
               HS_EXPECT_DIFF);
  cr_expect_eq(hs_expect_json("{\"a\": 1}", "g", "{\"a\": 1, \"b\": 2}", 0, NULL, 0, &d, &err),
               HS_EXPECT_DIFF);
  cr_expect_str_eq(d.where, "b");
  cr_expect_str_eq(d.want, "(none)");
  cr_expect_eq(hs_expect_json("{\"a\": [1]}", "g", "{\"a\": [1, 2]}", 0, NULL, 0, &d, &err),
               HS_EXPECT_DIFF);
  cr_expect_str_eq(d.where, "a[1]");
  /* Skipped keys are skipped at the top level only. */
  cr_expect_eq(hs_expect_json("{\"hetsim_version\": \"0.1\"}", "g", "{\"hetsim_version\": \"0.2\"}",
                              0, skip, 1, &d, &err),
               HS_EXPECT_SAME);
  cr_expect_eq(hs_expect_json("{\"x\": {\"hetsim_version\": 1}}", "g",
                              "{\"x\": {\"hetsim_version\": 2}}", 0, skip, 1, &d, &err),
               HS_EXPECT_DIFF);
  cr_expect_eq(hs_expect_json("{\"a\": 1,\n \"b\": }", "g.json", "{}", 0, NULL, 0, &d, &err),
               HS_EXPECT_BAD);
  cr_expect(strstr(err.msg, "g.json: line 2: not valid JSON") != NULL, "%s", err.msg);
}

/* --- runs that describe themselves and guard their folder ------------------- */

#define SCEN HS_SOURCE_DIR "/scenarios/testbed-mnist-pma.json"

static hs_scenario *load(const char *policy, const char *rounds) {
  hs_override ovr[] = {{"policy.kind", policy}, {"rounds", rounds}};
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_load(SCEN, ovr, 2, &err);
  cr_assert(sc, "%s", err.msg);
  return sc;
}

static char *tmpdir(void) {
  char tmpl[] = "/tmp/hs-expect-XXXXXX";
  cr_assert(test_mkdtemp_at(tmpl));
  return hs_strdup(tmpl);
}

static char *slurp(const char *dir, const char *name) {
  char *p = hs_path_join(dir, name);
  hs_error err = {0};
  char *t = hs_read_file(p, NULL, &err);
  hs_free(p);
  return t;
}

static void cleanup(const char *dir) {
  const char *files[] = {"summary.json", "rounds.csv", "devices.csv", "trace.json"};
  for (size_t i = 0; i < 4; i++) {
    char *p = hs_path_join(dir, files[i]);
    unlink(p);
    hs_free(p);
  }
  rmdir(dir);
}

Test(run_folder, another_run_is_refused_the_same_run_overwrites) {
  hs_scenario *a = load("equal", "2"), *b = load("time-only", "2");
  char *dir = tmpdir();
  hs_override sets[] = {{"rounds", "2"}};
  hs_run_opts o = {.out_dir = dir, .sets = sets, .nsets = 1};
  hs_error err = {0};
  cr_assert_eq(hs_run(a, &o, NULL, &err), HS_OK, "%s", err.msg);
  char *first = slurp(dir, "summary.json");
  cr_assert(first);
  cr_expect_eq(hs_run(a, &o, NULL, &err), HS_OK, "the same run again: %s", err.msg);
  char *again = slurp(dir, "summary.json");
  cr_expect_str_eq(again, first, "the same run writes the same bytes");
  cr_expect_eq(hs_run(b, &o, NULL, &err), HS_ESTATE);
  cr_expect(strstr(err.msg, "holds another run (scenario testbed-mnist-pma, policy equal, seed 1"),
            "%s", err.msg);
  char *kept = slurp(dir, "summary.json");
  cr_expect_str_eq(kept, first, "a refused run writes nothing");
  /* Another --set list is another run, even with the same scenario. */
  hs_run_opts o2 = {.out_dir = dir};
  cr_expect_eq(hs_run(a, &o2, NULL, &err), HS_ESTATE);
  o.force = true;
  cr_expect_eq(hs_run(b, &o, NULL, &err), HS_OK, "--force: %s", err.msg);
  char *forced = slurp(dir, "summary.json");
  cr_expect(strstr(forced, "\"policy\": \"time-only\""), "%s", forced);
  hs_free(first);
  hs_free(again);
  hs_free(kept);
  hs_free(forced);
  cleanup(dir);
  hs_free(dir);
  hs_scenario_destroy(a);
  hs_scenario_destroy(b);
}

Test(run_folder, run_files_without_a_summary_are_refused) {
  hs_scenario *a = load("equal", "1");
  char *dir = tmpdir();
  char *p = hs_path_join(dir, "rounds.csv");
  FILE *f = fopen(p, "w");
  cr_assert(f);
  fputs("round\n", f);
  fclose(f);
  hs_run_opts o = {.out_dir = dir};
  hs_error err = {0};
  cr_expect_eq(hs_run(a, &o, NULL, &err), HS_ESTATE);
  cr_expect(strstr(err.msg, "without a summary.json"), "%s", err.msg);
  /* Other files do not make a run: a folder of notes is written into. */
  unlink(p);
  char *q = hs_path_join(dir, "notes.txt");
  f = fopen(q, "w");
  cr_assert(f);
  fclose(f);
  cr_expect_eq(hs_run(a, &o, NULL, &err), HS_OK, "%s", err.msg);
  unlink(q);
  hs_free(p);
  hs_free(q);
  cleanup(dir);
  hs_free(dir);
  hs_scenario_destroy(a);
}

Test(run_folder, summary_describes_the_run) {
  hs_scenario *a = load("adaptive", "2");
  char *dir = tmpdir();
  hs_override sets[] = {{"policy.w_e", "0.25"}, {"rounds", "2"}};
  hs_run_opts o = {.out_dir = dir, .sets = sets, .nsets = 2};
  hs_error err = {0};
  cr_assert_eq(hs_run(a, &o, NULL, &err), HS_OK, "%s", err.msg);
  char *s = slurp(dir, "summary.json");
  cr_assert(s);
  char want[128];
  snprintf(want, sizeof want, "\"hetsim_version\": \"%s\"", hs_version());
  cr_expect(strstr(s, want), "%s", s);
  cr_expect(strstr(s, "\"sets\": [\"policy.w_e=0.25\",\"rounds=2\"]"), "%s", s);
  cr_expect(strstr(s, "\"policy_config\": {\"kind\":\"adaptive\",\"w_e\":"), "%s", s);
  cr_expect(strstr(s, "\"scenario_resolved\": {\"name\":\"testbed-mnist-pma\""), "%s", s);
  /* The scenario's hash is FNV-1a 64 of its bytes. */
  size_t len;
  char *text = hs_read_file(SCEN, &len, &err);
  cr_assert(text);
  snprintf(want, sizeof want, "\"scenario:testbed-mnist-pma.json\":\"%016llx\"",
           (unsigned long long)hs_fnv1a64(HS_FNV1A64_INIT, text, len));
  cr_expect(strstr(s, want), "%s in %s", want, s);
  cr_expect(strstr(s, "\"profile:rpi4\":\""), "%s", s);
  char *d = slurp(dir, "devices.csv");
  cr_expect(strstr(d, "round,device,samples,compute_s,comm_s,wait_s,energy_j,profile\n"));
  cr_expect(strstr(d, ",rpi4\n") && strstr(d, ",visionfive2\n"), "%s", d);
  hs_free(d);
  hs_free(text);
  hs_free(s);
  cleanup(dir);
  hs_free(dir);
  hs_scenario_destroy(a);
}

/* What makes two run identities differ: the first listed key whose value does. */
Test(expect, json_cause_names_the_first_key_that_differs) {
  hs_expect_diff d;
  const char *const keys[] = {"sets", "scenario_resolved"};
  const char *g = "{\"id\": \"a\", \"sets\": [\"rounds=3\"], \"scenario_resolved\": {\"policy\": {\"deadband\": 0}}}";
  cr_expect_eq(hs_expect_json_cause(g, g, keys, 2, &d), HS_EXPECT_SAME);
  cr_expect_eq(hs_expect_json_cause(g, "{\"sets\": [\"rounds=3\"], \"scenario_resolved\": {\"policy\": "
                                       "{\"deadband\": 0.1}}}", keys, 2, &d), HS_EXPECT_DIFF);
  cr_expect_str_eq(d.where, "scenario_resolved.policy.deadband");
  cr_expect_str_eq(d.want, "0");
  cr_expect_str_eq(d.got, "0.1");
  cr_expect_eq(hs_expect_json_cause(g, "{\"sets\": [\"rounds=3\", \"x=1\"]}", keys, 2, &d), HS_EXPECT_DIFF);
  cr_expect_str_eq(d.where, "sets[1]");
  cr_expect_str_eq(d.want, "(none)");
  cr_expect_eq(hs_expect_json_cause(g, "{", keys, 2, &d), HS_EXPECT_BAD);
}
