/* test_probe_sensor.c: the power sources: RAPL, hwmon, Pi 5 PMIC, meter logs (sensor*.c).
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

Test(probe_sensor, rapl_wrap) { run_case("sensor", "rapl_wrap"); }

Test(probe_sensor, rapl_missing_and_denied) { run_case("sensor", "rapl_missing_and_denied"); }

Test(probe_sensor, hwmon_by_name) { run_case("sensor", "hwmon_by_name"); }

Test(probe_sensor, hwmon_index_changed) { run_case("sensor", "hwmon_index_changed"); }

Test(probe_sensor, pmic) { run_case("sensor", "pmic"); }

Test(probe_sensor, meter_window) { run_case("sensor", "meter_window"); }

Test(probe_sensor, meter_log_being_written) { run_case("sensor", "meter_log_being_written"); }

Test(probe_sensor, spec) { run_case("sensor", "spec"); }
