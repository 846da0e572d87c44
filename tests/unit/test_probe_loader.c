/* test_probe_loader.c: what hetsim-probe writes loads unchanged with the
 * simulator's loader (hs_profile_load, hetsim::devices): a rendered profile,
 * a merged two-task profile, the real CLI's output, and the profile shipped
 * for the build machine. Figures must survive the trip exactly as written. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/hs_profile.h"
#include "probe.h"
#include "probe_cases.h"

static char tmp[256];

static void setup(void) {
  const char *b = getenv("TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/hsprobe-load-XXXXXX", b && b[0] ? b : "/tmp");
  cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(probe_loader, .init = setup, .fini = teardown);

static hs_profile *load_text(const char *text) {
  char *p = probe_xasprintf("%s/rt.json", tmp);
  hs_error pe;
  cr_assert_eq(probe_write_atomic(p, text, strlen(text), &pe), HS_OK);
  hs_error err = {HS_OK, ""};
  hs_profile *prof = hs_profile_load(p, &err);
  cr_assert_not_null(prof, "the simulator's loader rejected the harness output: %s", err.msg);
  free(p);
  return prof;
}

Test(probe_loader, rendered_profile_round_trips) {
  char *text = probe_case_profile_text(tmp, "mnist", "Test Board");
  cr_assert_not_null(text);
  hs_profile *p = load_text(text);
  cr_assert_str_eq(hs_profile_name(p), "testboard");
  cr_assert_str_eq(hs_profile_board(p), "Test Board");
  cr_assert_str_eq(hs_profile_arch(p), "aarch64");
  cr_assert_str_eq(hs_profile_provenance_kind(p), "mixed");
  cr_assert_eq(hs_profile_idle_w(p), 2.7);
  const hs_task_profile *t = hs_profile_task(p, "mnist");
  cr_assert_not_null(t);
  cr_assert_eq(t->tau_s, 0.00042);
  cr_assert_eq(t->tau_cv, 0.03);
  cr_assert_eq(t->busy_w, 6.5);
  cr_assert_eq(t->overhead_s, 0.2);
  cr_assert_eq(t->batch_size, 32);
  cr_assert_eq(t->threads, 2);
  cr_assert(t->energy_measured);
  cr_assert_eq(t->loss_points, 3);
  cr_assert_eq(t->loss_samples[1], 640);
  cr_assert_eq(t->loss_values[2], 0.8);
  hs_profile_destroy(p);
  free(text);
}

Test(probe_loader, cli_output_and_merge_load) {
  char *csv = probe_xasprintf("%s/e.csv", tmp), *acl = probe_xasprintf("%s/acl", tmp);
  hs_error e;
  cr_assert_eq(probe_synth_era5(csv, 120, 1, &e), HS_OK);
  cr_assert_eq(probe_synth_imdb(acl, 30, 1, &e), HS_OK);
  for (int k = 0; k < 2; k++) {
    char *cmd = probe_xasprintf("'%s' calibrate --task %s --data '%s' --out '%s/rt.json' --root '%s' --sensor none "
                                "--busy-w 7.25 --busy-w-source 'test figure' --idle-w 2.5 --idle-w-source 'test idle' "
                                "--runs 2 --samples 32 --warmup 32 --quiet >/dev/null 2>&1",
                                PROBE_BIN, k ? "imdb" : "era5", k ? acl : csv, tmp, tmp);
    int rc = system(cmd);
    free(cmd);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "hetsim-probe failed (%d)", rc);
  }
  char *path = probe_xasprintf("%s/rt.json", tmp);
  hs_error err = {HS_OK, ""};
  hs_profile *p = hs_profile_load(path, &err);
  cr_assert_not_null(p, "%s", err.msg);
  cr_assert_eq(hs_profile_task_count(p), 2);
  cr_assert_str_eq(hs_profile_provenance_kind(p), "mixed");
  const hs_task_profile *t = hs_profile_task(p, "imdb");
  cr_assert_not_null(t);
  cr_assert(!t->energy_measured);
  cr_assert_eq(t->busy_w, 7.25);
  cr_assert(t->tau_s > 0 && t->loss_points == 4);
  cr_assert_eq(hs_profile_idle_w(p), 2.5);
  cr_assert_eq(hs_profile_comm_w(p), 2.5);
  hs_profile_destroy(p);
  free(path);
  free(csv);
  free(acl);
}

/* The profile measured on the build machine ships in devices/profiles. */
Test(probe_loader, shipped_build_machine_profile_loads) {
  char *path = probe_xasprintf("%s/devices/profiles/x86-fc-vm-epyc-2vcpu.json", HS_SOURCE_DIR);
  hs_error err = {HS_OK, ""};
  hs_profile *p = hs_profile_load(path, &err);
  cr_assert_not_null(p, "%s", err.msg);
  cr_assert_str_eq(hs_profile_arch(p), "x86_64");
  cr_assert_str_eq(hs_profile_provenance_kind(p), "mixed"); /* no sensor on that VM */
  static const char *const tasks[] = {"mnist", "era5", "imdb"};
  for (int k = 0; k < 3; k++) {
    const hs_task_profile *t = hs_profile_task(p, tasks[k]);
    cr_assert_not_null(t, "task %s missing", tasks[k]);
    cr_assert(!t->energy_measured, "%s: no sensor there, energy cannot be measured", tasks[k]);
    cr_assert(t->tau_s > 0 && t->loss_points >= 3);
  }
  hs_profile_destroy(p);
  free(path);
}

/* Whatever the harness's own check accepts, the simulator's loader must load:
 * the harness refuses to write (or merge into) anything else. Each mutation
 * below is out of the loader's range; the check once let all of them through
 * (it bounded watts and seconds at 1e300 and never asked for whole counts), so
 * `--busy-w 200000` or a hand-edited batch_size of 1.5 gave a file hetsim
 * refused. */
Test(probe_loader, what_the_harness_check_accepts_the_loader_loads) {
  static const struct {
    const char *from, *to, *want;
  } muts[] = {
      {"\"busy_w\": 6.5", "\"busy_w\": 200000", "tasks.mnist.busy_w"},
      {"\"idle_w\": 2.7", "\"idle_w\": 100001", "idle_w"},
      {"\"comm_w\": 2.7", "\"comm_w\": 1e6", "comm_w"},
      {"\"tau_s\": 0.00042", "\"tau_s\": 90000", "tasks.mnist.tau_s"},
      {"\"overhead_s\": 0.2", "\"overhead_s\": 86401", "tasks.mnist.overhead_s"},
      {"\"batch_size\": 32", "\"batch_size\": 1.5", "tasks.mnist.batch_size"},
      {"\"threads\": 2", "\"threads\": 4294967296", "tasks.mnist.threads"},
      {"\"runs\": 5", "\"runs\": 2.5", "provenance.runs"},
      {"\"sample_hz\": 10", "\"sample_hz\": 2e9", "provenance.sample_hz"},
      /* training below idle power: the loader calls it a units mix-up */
      {"\"busy_w\": 6.5", "\"busy_w\": 2.5", "tasks.mnist.busy_w"},
      {"\"board\": \"Test Board\"", "\"board\": \"\"", "board"},
      {"\"cpu\": \"4x Cortex-A72\"", "\"cpu\": \"\"", "cpu"},
      {"\"arch\": \"aarch64\"", "\"arch\": \"ARM 64\"", "arch"},
      {"\"mnist\": {", "\"\": {", "tasks."},
      {"\"date\": \"2026-", "\"date\": \"+026-", "provenance.date"},
  };
  char *a = probe_case_profile_text(tmp, "mnist", "Test Board");
  cr_assert_not_null(a);
  char *path = probe_xasprintf("%s/mut.json", tmp);
  for (size_t k = 0; k < sizeof muts / sizeof *muts; k++) {
    char *p = strstr(a, muts[k].from);
    cr_assert_not_null(p, "\"%s\" not in the rendered profile", muts[k].from);
    char *m = probe_xasprintf("%.*s%s%s", (int)(p - a), a, muts[k].to, p + strlen(muts[k].from));
    hs_error e = {HS_OK, ""};
    cr_assert_eq(probe_write_atomic(path, m, strlen(m), &e), HS_OK);
    hs_profile *prof = hs_profile_load(path, &e);
    cr_expect_null(prof, "mutation %zu: the loader accepts it (the test is wrong)", k);
    hs_profile_destroy(prof);
    e = (hs_error){HS_OK, ""};
    probe_json *j = probe_json_parse(m, strlen(m), &e);
    cr_assert_not_null(j, "%s", e.msg);
    hs_status st = probe_profile_check(j, &e);
    cr_expect(st != HS_OK && strstr(e.msg, muts[k].want), "mutation %zu (%s): check says \"%s\"", k,
              muts[k].to, st == HS_OK ? "OK" : e.msg);
    probe_json_destroy(j);
    free(m);
  }
  free(path);
  free(a);
}
