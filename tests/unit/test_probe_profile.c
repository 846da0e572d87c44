/* test_probe_profile.c: profile rendering, merge and checks (profile.c, util.c).
 * The cases live in devices/probe/cases/profile.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_profile::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_profile, "profile")
