/* test_probe_sampler.c: the sampling thread, throttle and temperature (sampler.c).
 * The cases live in devices/probe/cases/sampler.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_sampler::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_sampler, "sampler")
