/* test_probe_csv.c: the ERA5 CSV extract reader (data_csv.c).
 * The cases live in devices/probe/cases/csv.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_csv::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_csv, "csv")
