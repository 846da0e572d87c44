/* profile.c: the profile writer's cases (render, merge, the checks that
 * reject, the atomic write); probe_case_profile_text (probe_cases.h) gives
 * the Criterion suites a valid profile too. */
#include "cases.h"

/* ---------------------------------------------------------------- profile */
static probe_task_result cs_result(const char *task) {
  static double ls[3] = {0, 640, 3000}, lv[3] = {2.3, 1.1, 0.8};
  probe_task_result r;
  memset(&r, 0, sizeof r);
  r.task = task;
  r.tau_s = 0.00042;
  r.tau_cv = 0.03;
  r.busy_w = 6.5;
  r.overhead_s = 0.2;
  r.batch = 32;
  r.threads = 2;
  r.runs = 5;
  r.energy_measured = true;
  r.loss_n = 3;
  r.loss_samples = ls;
  r.loss_values = lv;
  snprintf(r.notes, sizeof r.notes, "test run");
  return r;
}

char *probe_case_profile_text(const char *tmpdir, const char *task, const char *board) {
  (void)tmpdir;
  probe_task_result r = cs_result(task);
  const char *src[] = {"comm_w = idle_w: assumption", NULL};
  probe_profile_in in = {"testboard", board, "aarch64", "4x Cortex-A72", "6.1.0", "2026-11-29", 2.7, 2.7, "mixed",
                         "hwmon:ina226:1 on test", "board input", 10, src, "notes", &r};
  hs_error e;
  return probe_profile_render(&in, NULL, 0, &e);
}

PROBE_CASE_FN(profile, render_merge) {
  (void)tmp;
  char *a = probe_case_profile_text(tmp, "mnist", "Test Board");
  CHECK(a, "render failed");
  hs_error e = {HS_OK, ""};
  probe_json *j = probe_json_parse(a, strlen(a), &e);
  bool ok = j && probe_profile_check(j, &e) == HS_OK &&
            probe_json_get(probe_json_get(probe_json_get(j, "tasks"), "mnist"), "energy_measured")->b;
  probe_json_destroy(j);
  CHECK(ok, "rendered profile invalid: %s", e.msg);
  /* merge a second task */
  probe_task_result r = cs_result("era5");
  r.energy_measured = false;
  r.busy_w = 9;
  const char *src[] = {"busy_w 9 W: estimate, vendor TDP", NULL};
  probe_profile_in in = {"testboard", "Test Board", "aarch64", "4x Cortex-A72", "6.1.0", "2026-11-30", 2.5, 2.5,
                         "mixed", NULL, NULL, 0, src, NULL, &r};
  char *b = probe_profile_render(&in, a, strlen(a), &e);
  CHECK(b, "merge failed: %s", e.msg);
  j = probe_json_parse(b, strlen(b), &e);
  probe_json *tasks = j ? probe_json_get(j, "tasks") : NULL;
  ok = tasks && tasks->n == 2 && strcmp(tasks->keys[0], "mnist") == 0 && strcmp(tasks->keys[1], "era5") == 0 &&
       probe_json_get(j, "idle_w")->num == 2.5 &&
       strcmp(probe_json_get(probe_json_get(tasks->kids[0], "provenance"), "sensor")->str, "hwmon:ina226:1 on test") == 0 &&
       !probe_json_get(tasks->kids[1], "energy_measured")->b;
  probe_json_destroy(j);
  /* merging the same task again replaces it */
  char *c = probe_profile_render(&in, b, strlen(b), &e);
  j = c ? probe_json_parse(c, strlen(c), &e) : NULL;
  bool replaced = j && probe_json_get(j, "tasks")->n == 2;
  probe_json_destroy(j);
  /* another board is refused */
  in.board = "Other Board";
  char *d = probe_profile_render(&in, b, strlen(b), &e);
  bool refused = d == NULL && strstr(e.msg, "board") && strstr(e.msg, "Other Board");
  free(d);
  free(c);
  free(b);
  free(a);
  CHECK(ok, "merged profile wrong");
  CHECK(replaced, "re-merge of the same task duplicated it");
  CHECK(refused, "other board not refused: \"%s\"", e.msg);
  return true;
}

PROBE_CASE_FN(profile, check_rejects) {
  (void)tmp;
  static const struct {
    const char *from, *to, *want;
  } muts[] = {{"\"tau_s\": 0.00042", "\"tau_s\": 0", "tasks.mnist.tau_s"},
              {"\"idle_w\": 2.7", "\"idle_w\": -1", "idle_w"},
              {"\"batch_size\": 32", "\"batch_sz\": 32", "tasks.mnist.batch_sz: unknown key"},
              {"\"kind\": \"mixed\"", "\"kind\": \"guessed\"", "provenance.kind"},
              {"[640, 1.1]", "[0, 1.1]", "loss_curve[1]"}};
  char *a = probe_case_profile_text(tmp, "mnist", "Test Board");
  CHECK(a, "render failed");
  for (size_t k = 0; k < sizeof muts / sizeof *muts; k++) {
    char *p = strstr(a, muts[k].from);
    if (!p) {
      free(a);
      FAIL("text \"%s\" not in the rendered profile", muts[k].from);
    }
    char *m = probe_xasprintf("%.*s%s%s", (int)(p - a), a, muts[k].to, p + strlen(muts[k].from));
    hs_error e = {HS_OK, ""};
    probe_json *j = probe_json_parse(m, strlen(m), &e);
    hs_status st = j ? probe_profile_check(j, &e) : HS_EPARSE;
    probe_json_destroy(j);
    free(m);
    if (st == HS_OK || !strstr(e.msg, muts[k].want)) {
      free(a);
      FAIL("mutation %zu accepted or message \"%s\" lacks \"%s\"", k, e.msg, muts[k].want);
    }
  }
  free(a);
  return true;
}

PROBE_CASE_FN(profile, write_atomic) {
  char *p = probe_cs_path(tmp, "out.json");
  hs_error e = {HS_OK, ""};
  CHECK(probe_write_atomic(p, "{}\n", 3, &e) == HS_OK, "write: %s", e.msg);
  unsigned char *d = NULL;
  size_t n = 0;
  probe_read_file(p, &d, &n, &e);
  bool ok = n == 3 && memcmp(d, "{}\n", 3) == 0;
  free(d);
  free(p);
  p = probe_cs_path(tmp, "no/such/dir/out.json");
  hs_status st = probe_write_atomic(p, "{}", 2, &e);
  free(p);
  CHECK(ok, "content wrong");
  CHECK(st != HS_OK && strstr(e.msg, "no/such/dir/out.json"), "bad folder: \"%s\"", e.msg);
  return true;
}
