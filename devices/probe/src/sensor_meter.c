/* sensor_meter.c: an external meter's log (USB power meter, smart plug, PDU)
 * as CSV with a header naming `time_s` (Unix time, seconds, the board's
 * CLOCK_REALTIME clock after --meter-offset-s is added) and `power_w`; other
 * columns are ignored. The meter logs on its own; after the runs, the energy
 * of each run is the trapezoid integral of the log over the run's wall-clock
 * window, with the power linearly interpolated at the window's ends.
 * Invariant: timestamps strictly increase (checked, with the line). The log
 * must cover the window: a gap at either end is an error that tells how far
 * off the clocks are, never a silent extrapolation. The file is re-read per
 * window because the meter may still be appending to it, so a last line
 * without its newline is one the logger has not finished writing and is left
 * out (a cut "4.53" would read as 4, a cut time as going backwards). O(rows)
 * per window. */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *path;
  double offset;
  char id[300], covers[128];
} meter_state;

static hs_status meter_load(const meter_state *s, lrn_table *t, int *ct, int *cp, hs_error *err) {
  unsigned char *buf = NULL;
  size_t len = 0;
  memset(t, 0, sizeof *t);
  hs_status st = probe_read_file(s->path, &buf, &len, err);
  if (st != HS_OK) return st;
  size_t keep = len;
  while (keep > 0 && buf[keep - 1] != '\n') keep--;
  if (keep > 0) len = keep; /* drop a line still being written (the header alone is never cut) */
  st = lrn_csv_parse((const char *)buf, len, t, err);
  free(buf);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s", s->path);
    return st;
  }
  *ct = lrn_table_col(t, "time_s");
  *cp = lrn_table_col(t, "power_w");
  if (*ct < 0 || *cp < 0) {
    lrn_table_fini(t);
    return hs_error_set(err, HS_EMISSING, "%s: line 1: the header needs columns time_s and power_w", s->path);
  }
  for (size_t i = 1; i < t->rows; i++)
    if (!(t->v[i * t->cols + (size_t)*ct] > t->v[(i - 1) * t->cols + (size_t)*ct])) {
      lrn_table_fini(t);
      return hs_error_set(err, HS_EPARSE, "%s: line %zu, column time_s: time does not increase", s->path, i + 2);
    }
  return HS_OK;
}

static hs_status meter_window(void *state, double t0, double t1, double *joules, hs_error *err) {
  meter_state *s = state;
  lrn_table t;
  int ct = 0, cp = 0;
  hs_status st = meter_load(s, &t, &ct, &cp, err);
  if (st != HS_OK) return st;
  size_t n = t.rows, c = t.cols;
#define MT(i) (t.v[(i) * c + (size_t)ct] + s->offset)
#define MP(i) (t.v[(i) * c + (size_t)cp])
  if (n < 2 || MT(0) > t0 || MT(n - 1) < t1) {
    double a = n ? MT(0) : 0, b = n ? MT(n - 1) : 0;
    lrn_table_fini(&t);
    return hs_error_set(err, HS_ERANGE,
                         "%s: the log covers [%.3f, %.3f] s but the run was [%.3f, %.3f] s (Unix time): check the "
                         "meter's clock or --meter-offset-s",
                         s->path, a, b, t0, t1);
  }
  double e = 0;
  for (size_t i = 1; i < n; i++) {
    double a = MT(i - 1), b = MT(i);
    if (b <= t0 || a >= t1) continue;
    double lo = a < t0 ? t0 : a, hi = b > t1 ? t1 : b;
    double pa = MP(i - 1), pb = MP(i);
    double plo = pa + (pb - pa) * (lo - a) / (b - a), phi = pa + (pb - pa) * (hi - a) / (b - a);
    e += 0.5 * (plo + phi) * (hi - lo);
  }
#undef MT
#undef MP
  lrn_table_fini(&t);
  *joules = e;
  return HS_OK;
}

static void meter_close(void *state) {
  meter_state *s = state;
  free(s->path);
  free(s);
}

static hs_status meter_open(const probe_sensor_cfg *cfg, void **state, hs_error *err) {
  if (!cfg->arg || !cfg->arg[0]) return hs_error_set(err, HS_EINVAL, "meter: needs a file: meter:FILE.csv");
  meter_state *s = hs_calloc(1, sizeof *s);
  s->path = hs_strdup(cfg->arg);
  s->offset = cfg->meter_offset_s;
  if (!probe_exists(s->path)) {
    hs_status st = hs_error_set(err, HS_ENOENT, "%s: meter log not found (start the meter's logger first)", s->path);
    meter_close(s);
    return st;
  }
  snprintf(s->id, sizeof s->id, "meter:%s", s->path);
  snprintf(s->covers, sizeof s->covers, "whatever the external meter is wired to (usually the whole board at the wall or USB input)");
  *state = s;
  return HS_OK;
}

static const char *meter_id(const void *state) { return ((const meter_state *)state)->id; }
static const char *meter_covers(const void *state) { return ((const meter_state *)state)->covers; }

const probe_sensor_type probe_sensor_meter = {"meter", PROBE_POWER_W, meter_open, NULL, meter_window,
                                              meter_id, meter_covers, meter_close};
