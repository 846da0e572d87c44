/* test_probe_idx.c: IDX files, plain and gzip (data_idx.c).
 * The cases live in devices/probe/cases/idx.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_idx::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_idx, "idx")
