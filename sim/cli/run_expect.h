/* run_expect.h: `hetsim run --expect DIR`: a run's outputs against a golden
 * run folder (run_expect.c, over traces/hs_expect.h). */
#ifndef HS_CLI_RUN_EXPECT_H
#define HS_CLI_RUN_EXPECT_H

/* 0 when golden is a folder holding summary.json, rounds.csv and devices.csv;
 * else 2 after one line on stderr (checked before the run starts). */
int run_expect_ready(const char *golden);

/* Compare out (just written) with golden: 0 equal (one line on stdout unless
 * quiet), 3 at the first difference (one line on stderr: file, line and
 * column or key, both values), 2 for a malformed golden, 1 when out cannot
 * be read. */
int run_expect_compare(const char *golden, const char *out, double rtol, int quiet);

#endif
