/* test_regime_can.c: every registered regime x {learning block, round
 * deadline, device availability, shared slowdown}: the run works and the block has an effect,
 * or the scenario is refused at load with one line naming the key and the
 * regime (HS_EINVAL: exit 2) -- never silently ignored (issue 22).
 *
 * The regimes come from the registry (sim_regime_at), so a new regime is
 * covered without an edit here. Its runs: tests/data/regimes/<kind>.json when
 * present, else tests/data/sweep/tiny.json with regime.kind set (a regime that
 * runs on neither fails here: add its file); plus every variant
 * tests/data/regimes/<kind>@<variant>.json (fl's topologies).
 * Effects: learning (curve mode): learning.csv's last row has samples > 0; a deadline of
 * half the mean round drops a late participant (fewer samples in total);
 * a device that is away most of the time changes the makespan, the energy
 * or the samples; a shared slowdown (dynamics.shared_slowdown) of CV 1
 * changes the makespan or the energy. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "sim_regime.h"
#include "test_tmpdir.h"

#define TINY HS_SOURCE_DIR "/tests/data/sweep/tiny.json"
#define REGIMES HS_SOURCE_DIR "/tests/data/regimes"

/* A learning block: curve mode moves along a profile's measured loss curve
 * by the samples the regime's learning hooks report (sim_learning.h), so a
 * regime that never calls them shows 0 samples, as real mode would, without
 * the cost of training (x86-fc-vm-epyc-2vcpu has curves for every task). */
#define LEARNING "learning={\"mode\": \"curve\", \"curve_profile\": \"x86-fc-vm-epyc-2vcpu\"}"

/* path with regime.kind=kind (NULL: the file's), rounds=2 and extra (may be NULL). */
static hs_scenario *load(const char *path, const char *kind, const char *extra, hs_error *err) {
  char a[64], b[512], c[] = "rounds=2";
  hs_override ovr[3];
  size_t n = 0;
  cr_assert_eq(hs_override_parse(c, &ovr[n++], err), HS_OK);
  if (kind) {
    snprintf(a, sizeof a, "regime.kind=%s", kind);
    cr_assert_eq(hs_override_parse(a, &ovr[n++], err), HS_OK);
  }
  if (extra) {
    snprintf(b, sizeof b, "%s", extra);
    cr_assert_eq(hs_override_parse(b, &ovr[n++], err), HS_OK);
  }
  return hs_scenario_load(path, ovr, n, err);
}

/* The samples column (4th) of learning.csv's last row; -1 without one. */
static double last_samples(const char *dir) {
  char path[512], line[1024];
  snprintf(path, sizeof path, "%s/learning.csv", dir);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  double v = -1;
  while (fgets(line, sizeof line, f)) {
    double s;
    if (sscanf(line, "%*[^,],%*[^,],%*[^,],%lf", &s) == 1) v = s;
  }
  fclose(f);
  return v;
}

typedef struct base_run {
  const char *path, *kind; /* kind: NULL when the file names it */
  char name[128];          /* for messages */
  hs_summary s;
  char dev0[64];
} base_run;

/* A refusal: one line, HS_EINVAL, naming the key and the regime. */
static void expect_refusal(const base_run *b, const char *key, const char *kind,
                           const hs_error *err) {
  char regime[96];
  snprintf(regime, sizeof regime, "regime %s", kind);
  cr_expect_eq(err->status, HS_EINVAL, "%s, %s: refused with status %d: %s", b->name, key,
               err->status, err->msg);
  cr_expect(strstr(err->msg, key) != NULL, "%s: the refusal names %s: %s", b->name, key, err->msg);
  cr_expect(strstr(err->msg, regime) != NULL, "%s: the refusal names the regime: %s", b->name,
            err->msg);
  cr_expect(strchr(err->msg, '\n') == NULL, "%s: one line: %s", b->name, err->msg);
}

/* Load b with `extra`; NULL when refused (checked as a refusal of `key`). */
static hs_scenario *load_or_refused(const base_run *b, const char *key, const char *kind,
                                    const char *extra) {
  hs_error err = {0};
  hs_scenario *sc = load(b->path, b->kind, extra, &err);
  if (!sc) expect_refusal(b, key, kind, &err);
  return sc;
}

static hs_summary run_ok(const base_run *b, const hs_scenario *sc, const char *dir,
                         const char *what) {
  hs_run_opts o = {.out_dir = dir, .force = true};
  hs_summary s = {0};
  hs_error err = {0};
  cr_expect_eq(hs_run(sc, dir ? &o : NULL, &s, &err), HS_OK, "%s, %s: the run fails: %s",
               b->name, what, err.msg);
  return s;
}

static void check_learning(const base_run *b, const char *kind) {
  hs_scenario *sc = load_or_refused(b, "learning", kind, LEARNING);
  if (!sc) return;
  char dir[64];
  cr_assert_not_null(test_mkdtemp(dir, "regime-can"));
  run_ok(b, sc, dir, "learning");
  double n = last_samples(dir);
  cr_expect(n > 0, "%s: learning accepted but learning.csv shows %g samples", b->name, n);
  hs_scenario_destroy(sc);
}

static void check_deadline(const base_run *b, const char *kind) {
  char set[128];
  double round_s = b->s.makespan_s / (double)b->s.rounds;
  snprintf(set, sizeof set, "dynamics={\"deadline_s\": %.17g}", round_s / 2);
  hs_scenario *sc = load_or_refused(b, "dynamics.deadline_s", kind, set);
  if (!sc) return;
  hs_summary s = run_ok(b, sc, NULL, "deadline");
  cr_expect_lt(s.samples, b->s.samples, "%s: a deadline of half a round drops nobody", b->name);
  hs_scenario_destroy(sc);
}

static void check_availability(const base_run *b, const char *kind) {
  char set[256], key[128];
  double round_s = b->s.makespan_s / (double)b->s.rounds;
  snprintf(set, sizeof set,
           "dynamics={\"devices\": {\"%s\": {\"availability\": {\"mean_on_s\": %.17g, "
           "\"mean_off_s\": %.17g}}}}",
           b->dev0, round_s / 10, round_s * 3);
  snprintf(key, sizeof key, "dynamics.devices.%s.availability", b->dev0);
  hs_scenario *sc = load_or_refused(b, key, kind, set);
  if (!sc) return;
  hs_summary s = run_ok(b, sc, NULL, "availability");
  cr_expect(s.makespan_s != b->s.makespan_s || s.energy_j != b->s.energy_j ||
                s.samples != b->s.samples,
            "%s: device %s away most of the time changes nothing", b->name, b->dev0);
  hs_scenario_destroy(sc);
}

/* A shared slowdown of CV 1: every compute time moves with its round's factor. */
static void check_shared(const base_run *b, const char *kind) {
  hs_scenario *sc = load_or_refused(b, "dynamics.shared_slowdown", kind,
                                    "dynamics={\"shared_slowdown\": {\"cv\": 1}}");
  if (!sc) return;
  hs_summary s = run_ok(b, sc, NULL, "shared_slowdown");
  cr_expect(s.makespan_s != b->s.makespan_s || s.energy_j != b->s.energy_j,
            "%s: a shared slowdown of CV 1 changes nothing", b->name);
  hs_scenario_destroy(sc);
}

/* The base run of one scenario, then the four blocks on top of it. */
static void check_all(const char *path, const char *kind_set, const char *kind, const char *label) {
  base_run b = {.path = path, .kind = kind_set};
  snprintf(b.name, sizeof b.name, "regime %s (%s)", kind, label);
  hs_error err = {0};
  hs_scenario *sc = load(path, kind_set, NULL, &err);
  cr_assert_not_null(sc, "%s: does not load: %s", b.name, err.msg);
  cr_assert_str_eq(sc->regime.kind, kind, "%s names regime %s", path, sc->regime.kind);
  snprintf(b.dev0, sizeof b.dev0, "%s", sc->devices[0].name);
  b.s = run_ok(&b, sc, NULL, "base");
  hs_scenario_destroy(sc);
  check_learning(&b, kind);
  check_deadline(&b, kind);
  check_availability(&b, kind);
  check_shared(&b, kind);
}

/* The variants tests/data/regimes/<kind>@*.json. */
static size_t check_variants(const char *kind) {
  DIR *d = opendir(REGIMES);
  cr_assert_not_null(d);
  size_t n = 0, len = strlen(kind);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, kind, len) || e->d_name[len] != '@') continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", REGIMES, e->d_name);
    check_all(path, NULL, kind, e->d_name);
    n++;
  }
  closedir(d);
  return n;
}

Test(regime_can, every_regime_runs_or_refuses_each_block, .timeout = 120) {
  cr_assert_gt(sim_regime_count(), 0);
  for (size_t k = 0; k < sim_regime_count(); k++) {
    const char *kind = sim_regime_at(k)->name;
    char own[512];
    snprintf(own, sizeof own, "%s/%s.json", REGIMES, kind);
    FILE *f = fopen(own, "r");
    if (f) {
      fclose(f);
      check_all(own, NULL, kind, own + strlen(REGIMES) + 1);
    } else {
      hs_error err = {0};
      hs_scenario *sc = load(TINY, kind, NULL, &err);
      cr_assert_not_null(sc, "regime %s does not run on %s (%s): add %s", kind, TINY, err.msg,
                         own);
      hs_scenario_destroy(sc);
      check_all(TINY, kind, kind, "tiny.json");
    }
    check_variants(kind);
  }
}
