/* test_probe_sysinfo.c: board, CPU and architecture detection (sysinfo.c).
 * The cases live in devices/probe/cases/sysinfo.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_sysinfo::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_sysinfo, "sysinfo")
