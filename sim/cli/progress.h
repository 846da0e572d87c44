/* progress.h: progress lines on stderr for long runs and sweeps (progress.c).
 *
 * Only when stderr is not a terminal (a Slurm or CI log), every `every_s`
 * seconds of wall time (0: never):
 *   hetsim run: progress 12/40 rounds (30.0%), 1.93 rounds/s, ETA 14 s
 * The clock is CLOCK_MONOTONIC; nothing here touches an output file, so a run
 * writes the same bytes with or without progress. Not thread-safe: the sweep
 * reports from its done callback, which runs under the pool's mutex. */
#ifndef HS_CLI_PROGRESS_H
#define HS_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CLI_PROGRESS_DEFAULT_S 10.0

typedef struct cli_progress {
  FILE *out;          /* stderr, or NULL when off */
  const char *cmd;    /* "run", "sweep" */
  const char *unit;   /* "rounds", "rows" */
  double every_s, t0, last;
  size_t total, base; /* base: done before this process started (sweep --resume) */
} cli_progress;

/* every_s < 0: the default; 0: off. force_tty: report even on a terminal
 * (tests). */
void cli_progress_init(cli_progress *p, const char *cmd, const char *unit, size_t total,
                       size_t base, double every_s, bool force_tty);
/* done items so far (base included); prints when a period has passed. */
void cli_progress_tick(cli_progress *p, size_t done);
/* One line for the rate-limited printer: exposed for tests. */
void cli_progress_format(char *buf, size_t cap, const char *cmd, const char *unit, size_t done,
                         size_t total, size_t base, double elapsed_s);

#endif
