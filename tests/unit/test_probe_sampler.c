/* test_probe_sampler.c: the sampling thread, throttle and temperature (sampler.c).
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

Test(probe_sampler, power) { run_case("sampler", "power"); }

Test(probe_sampler, counter) { run_case("sampler", "counter"); }

Test(probe_sampler, rpi_throttle) { run_case("sampler", "rpi_throttle"); }
