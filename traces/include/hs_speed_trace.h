/* hs_speed_trace.h: per-device speed traces (CONTRACT SKETCH: the devices
 * engineer implements exactly this API and may extend it). */
#ifndef HS_SPEED_TRACE_H
#define HS_SPEED_TRACE_H

#include "hs_status.h"

typedef struct hs_speed_trace hs_speed_trace;  /* piecewise-constant speed factor over simulated time */
hs_speed_trace *hs_speed_trace_load(const char *path, hs_error *err); /* CSV header "time_s,speed", time ascending from 0, speed > 0 */
void hs_speed_trace_destroy(hs_speed_trace *t);
double hs_speed_trace_at(const hs_speed_trace *t, double time_s);      /* factor in force at time_s (1 before the first row) */
/* Time at which `work_s` seconds of speed-1 work started at t0 completes: the
 * t with integral_{t0}^{t} speed(u) du = work_s. A NULL trace means speed 1. */
double hs_speed_trace_finish(const hs_speed_trace *t, double t0, double work_s);

#endif
