/* test_run_memory.c: run_memory.c's estimate, through hs_run_check_memory
 * under an address-space limit just above the process's size (each test runs
 * in its own process, so the limit is the test's alone, and is lifted again
 * before any assertion). Known answers: the parts that depend on the scenario
 * (device names, the policy's arrays) move the per-device figure by exactly
 * their bytes; the bench's scenario is estimated at or above the peak RSS per
 * device hs-bench-pma measured at 10^6 (286 B on 1 December 2026, after the
 * network's 40-byte flows and 8-byte FIFO entries, the engine's 32-byte slots
 * and posted runs, the run's telemetry in the ledger's mark and the
 * controller's shared scratch; it was 474 before). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sim/hs_run.h"
#include "sim/hs_scenario.h"

#define DATA HS_SOURCE_DIR "/tests/data/run"

/* One entry of `count` devices named `name` under `policy`. */
#define FORMAT \
    "{\"model_bytes\": 1, \"rounds\": 1, %s \"samples_per_round\": %lu," \
    " \"policy\": {\"kind\": \"%s\"}, \"devices\": [{\"name\": \"%s\"," \
    " \"profile\": \"profiles/det-fast.json\", \"count\": %lu}]," \
    " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 100}}}}"

static unsigned long vm_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  cr_assert_not_null(f);
  unsigned long pages = 0;
  cr_assert_eq(fscanf(f, "%lu", &pages), 1);
  fclose(f);
  return pages * (unsigned long)sysconf(_SC_PAGESIZE);
}

/* A refused run's "(N bytes each)"; extra: more top-level keys, each
 * followed by a comma. */
static size_t per_device_with(const char *extra, const char *name, unsigned long count,
                              const char *policy) {
  char text[1024];
  hs_error err = {0};
  snprintf(text, sizeof text, FORMAT, extra, count, policy, name, count);
  hs_scenario *sc = hs_scenario_parse(text, "m.json", DATA, NULL, 0, &err);
  cr_assert(sc != NULL, "%s", err.msg);
  struct rlimit old, low;
  cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
  low = old;
  /* 1 GiB above this process's size (AddressSanitizer's reservations
   * included): below what 10^7 devices need (GBs) */
  low.rlim_cur = (rlim_t)(vm_bytes() + (1ul << 30));
  if (old.rlim_max != RLIM_INFINITY && low.rlim_cur > old.rlim_max)
    cr_skip_test("RLIMIT_AS hard limit too low to set");
  cr_assert_eq(setrlimit(RLIMIT_AS, &low), 0);
  hs_status st = hs_run_check_memory(sc, &err);
  cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);
  hs_scenario_destroy(sc);
  cr_assert_eq(st, HS_ENOMEM, "%s", err.msg);
  const char *p = strstr(err.msg, "bytes each");
  cr_assert_not_null(p, "%s", err.msg);
  while (p > err.msg && p[-1] != '(') p--;
  size_t per = 0;
  cr_assert_eq(sscanf(p, "%zu bytes each", &per), 1, "%s", err.msg);
  cr_assert(strstr(err.msg, "10000000 devices") != NULL, "%s", err.msg);
  return per;
}

static size_t per_device(const char *name, unsigned long count, const char *policy) {
  return per_device_with("", name, count, policy);
}

Test(run_memory, names_count_their_bytes) {
  /* "<name>-<k>", k < 10^7: strlen(name) + '-' + 7 digits + NUL */
  size_t a = per_device("a", 10000000, "time-only");
  size_t b = per_device("abcdefghij", 10000000, "time-only");
  cr_expect_eq(b - a, 9, "%zu vs %zu", a, b);
}

Test(run_memory, the_cost_policies_arrays_count) {
  size_t eq = per_device("a", 10000000, "equal");
  size_t to = per_device("a", 10000000, "time-only");
  cr_expect_eq(to - eq, 17, "tau, eps, have: %zu vs %zu", eq, to);
}

Test(run_memory, not_below_the_measured_peak) {
  size_t per = per_device("jetson", 10000000, "time-only");
  cr_expect_geq(per, 286, "estimate %zu B/device", per);
}

/* The allocation in force is the controller's; only a run whose regime
 * changes it keeps a copy (PMA with a deadline: lost participants; 8 B on
 * top of dynamics' map and stored powers and mark joules, 8 + 48 B). */
Test(run_memory, the_runs_own_allocation_counts_only_where_it_exists) {
  size_t plain = per_device("a", 10000000, "equal");
  size_t dyn = per_device_with("\"dynamics\": {\"deadline_s\": 100},", "a", 10000000, "equal");
  cr_expect_eq(dyn - plain, 8 + 48 + 8, "%zu vs %zu", plain, dyn);
}
