/* selftest.c: hetsim-probe's own test runner in plain C (Criterion is not
 * packaged for the cross targets). Runs every case of probe_cases.h, or those
 * of the modules named on the command line, and ends with "N passed, N failed"
 * - the line the qemu ctest entries check. Exit status 0 only when none failed. */
#include <stdio.h>

#include "probe_cases.h"

int main(int argc, char **argv) {
  int passed = 0, failed = 0;
  if (argc < 2) {
    failed = probe_cases_run_module(NULL, &passed);
  } else {
    for (int i = 1; i < argc; i++) failed += probe_cases_run_module(argv[i], &passed);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
