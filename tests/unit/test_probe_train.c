/* test_probe_train.c: the trainers and the thread pool (trainers.c, mlp.c, pool.c).
 * The cases live in devices/probe/cases/train.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_train::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_train, "train")
