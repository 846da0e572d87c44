/* test_progress.c: the progress line of hetsim run and sweep
 * (sim/cli/progress.c): known answers for done/total, percent, rate and ETA,
 * the rate of a resumed sweep (only this process's rows), and the switches
 * (0 seconds: off; a terminal: off unless forced). */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "progress.h"

Test(progress, line_known_answer) {
  char b[256];
  cli_progress_format(b, sizeof b, "run", "rounds", 12, 40, 0, 6.0);
  cr_expect_str_eq(b, "hetsim run: progress 12/40 rounds (30.0%), 2 rounds/s, ETA 14 s");
  /* Resumed: 30 of 40 done, 10 of them before this process; 20 in 10 s. */
  cli_progress_format(b, sizeof b, "sweep", "rows", 30, 40, 10, 10.0);
  cr_expect_str_eq(b, "hetsim sweep: progress 30/40 rows (75.0%), 2 rows/s, ETA 5 s");
  cli_progress_format(b, sizeof b, "sweep", "rows", 10, 40, 10, 3.0);
  cr_expect_str_eq(b, "hetsim sweep: progress 10/40 rows (25.0%), 0 rows/s, ETA unknown");
  cli_progress_format(b, sizeof b, "run", "rounds", 0, 0, 0, 0);
  cr_expect(strstr(b, "(100.0%)"), "%s", b);
}

Test(progress, switches) {
  cli_progress p;
  cli_progress_init(&p, "run", "rounds", 10, 0, 0, true);
  cr_expect_null(p.out, "0 seconds: off");
  cli_progress_tick(&p, 5); /* a no-op when off */
  cli_progress_init(&p, "run", "rounds", 10, 0, -1, true);
  cr_expect_not_null(p.out);
  cr_expect_eq(p.every_s, CLI_PROGRESS_DEFAULT_S);
  cli_progress_init(&p, "run", "rounds", 10, 0, 2.5, true);
  cr_expect_eq(p.every_s, 2.5);
}
