/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_speed_trace.h: per-device speed traces: a piecewise-constant speed factor
 * over simulated time (thermal throttling, background load, DVFS caps).
 *
 * File format (CSV): a header line "time_s,speed", then one row per change,
 * "time_s,speed", time_s finite, >= 0 and strictly ascending, speed finite and
 * > 0. Each row's speed holds from its time_s until the next row's; the last
 * one holds forever; before the first row the speed is 1. Blank lines and lines
 * starting with '#' are skipped; CRLF line ends are accepted. At least one row.
 * Read by hs_csv (RFC 4180): the two columns are found by header name (any
 * order, other columns ignored), spaces and tabs around fields are dropped,
 * and a NUL byte is refused with its line.
 * Errors name the file and the line, e.g.
 *   traces/pi.csv: line 7: time_s: must be strictly ascending (previous row 30)
 *
 * A speed factor s means one second of wall time does s seconds of speed-1 work,
 * so a computation of work_s seconds (the sampled compute time at speed 1)
 * started at t0 finishes at the t with integral_{t0}^{t} speed(u) du = work_s:
 * a speed change in the middle of a computation moves its completion. For a
 * piecewise-constant speed this is computed in closed form, segment by segment.
 *
 * Ownership: the caller owns a loaded trace (hs_speed_trace_destroy); it is
 * immutable and may be shared by any number of devices and threads. */
#ifndef HS_SPEED_TRACE_H
#define HS_SPEED_TRACE_H

#include <stddef.h>

#include "base/hs_status.h"

typedef struct hs_speed_trace hs_speed_trace;  /* piecewise-constant speed factor over simulated time */
hs_speed_trace *hs_speed_trace_load(const char *path, hs_error *err); /* CSV header "time_s,speed", time ascending from 0, speed > 0 */
/* Same from len bytes of CSV text (a NUL byte among them is an error);
 * `origin` names it in messages. */
hs_speed_trace *hs_speed_trace_parse_n(const char *csv_text, size_t len, const char *origin,
                                       hs_error *err);
/* Same from NUL-terminated text (which therefore cannot show a NUL byte). */
hs_speed_trace *hs_speed_trace_parse(const char *csv_text, const char *origin, hs_error *err);
void hs_speed_trace_destroy(hs_speed_trace *t); /* NULL is fine */
size_t hs_speed_trace_rows(const hs_speed_trace *t); /* rows in the file (>= 1) */
double hs_speed_trace_at(const hs_speed_trace *t, double time_s);      /* factor in force at time_s (1 before the first row) */
/* Speed-1 work done between t0 and t1 >= t0: integral_{t0}^{t1} speed(u) du.
 * A NULL trace means speed 1. */
double hs_speed_trace_work(const hs_speed_trace *t, double t0, double t1);
/* Time at which `work_s` seconds of speed-1 work started at t0 completes: the
 * t with integral_{t0}^{t} speed(u) du = work_s. A NULL trace means speed 1.
 * work_s >= 0 and t0 finite (asserted). O(log rows). */
double hs_speed_trace_finish(const hs_speed_trace *t, double t0, double work_s);

#endif
