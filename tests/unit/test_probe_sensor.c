/* test_probe_sensor.c: the power sources: RAPL, hwmon, Pi 5 PMIC, meter logs (sensor*.c).
 * The cases live in devices/probe/cases/sensor.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_sensor::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_sensor, "sensor")
