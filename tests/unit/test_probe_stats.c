/* test_probe_stats.c: median, MAD, cv, trapezoid (stats.c).
 * The cases live in devices/probe/cases/stats.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_stats::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_stats, "stats")
