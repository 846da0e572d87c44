/* test_probe_train.c: the trainers and the thread pool (trainers.c, mlp.c, pool.c).
 * The cases live in devices/probe/cases.c and are shared with the plain-C
 * self-test that runs under qemu for aarch64 and riscv64; here each one is a
 * Criterion test of its own. */
#include <criterion/criterion.h>

#include "probe_cases.h"

static void run_case(const char *module, const char *name) {
  const probe_case *c = probe_case_find(module, name);
  cr_assert_not_null(c, "no case %s.%s", module, name);
  char why[1024];
  cr_assert(probe_case_run(c, why, sizeof why), "%s.%s: %s", module, name, why);
}

Test(probe_train, pool) { run_case("train", "pool"); }

Test(probe_train, mnist) { run_case("train", "mnist"); }

Test(probe_train, era5) { run_case("train", "era5"); }

Test(probe_train, imdb) { run_case("train", "imdb"); }

Test(probe_train, learner) { run_case("train", "learner"); }
