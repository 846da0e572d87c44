/* progress.c: rate-limited progress lines (see progress.h). O(1) per tick: a
 * clock read and a comparison; a line at most every every_s seconds.
 * The rate counts only the items done by this process (a resumed sweep's
 * earlier rows took no time here), so the ETA is what remains at that rate.
 * Rejected: a line per item (a 10^6-row sweep would flood the log) and
 * carriage-return redraws (they garble log files, the only place this shows). */
#include "progress.h"

#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_init(cli_progress *p, const char *cmd, const char *unit, size_t total,
                       size_t base, double every_s, bool force_tty) {
  double every = every_s < 0 ? CLI_PROGRESS_DEFAULT_S : every_s;
  bool on = every > 0 && (force_tty || !isatty(STDERR_FILENO));
  *p = (cli_progress){on ? stderr : NULL, cmd, unit, every, now_s(), 0, total, base};
  p->last = p->t0;
}

void cli_progress_format(char *buf, size_t cap, const char *cmd, const char *unit, size_t done,
                         size_t total, size_t base, double elapsed_s) {
  double pct = total ? 100.0 * (double)done / (double)total : 100.0;
  double rate = elapsed_s > 0 && done > base ? (double)(done - base) / elapsed_s : 0;
  int n = snprintf(buf, cap, "hetsim %s: progress %zu/%zu %s (%.1f%%), %.3g %s/s", cmd, done,
                   total, unit, pct, rate, unit);
  if (n < 0 || (size_t)n >= cap) return;
  if (rate > 0)
    snprintf(buf + n, cap - (size_t)n, ", ETA %.0f s", (double)(total - done) / rate);
  else
    snprintf(buf + n, cap - (size_t)n, ", ETA unknown");
}

void cli_progress_tick(cli_progress *p, size_t done) {
  if (!p->out) return;
  double t = now_s();
  if (t - p->last < p->every_s) return;
  p->last = t;
  char line[256];
  cli_progress_format(line, sizeof line, p->cmd, p->unit, done, p->total, p->base, t - p->t0);
  fprintf(p->out, "%s\n", line);
  fflush(p->out);
}
