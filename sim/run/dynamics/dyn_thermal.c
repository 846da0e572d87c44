/* dyn_thermal.c: the first-order thermal RC of a board and its throttle
 * levels, in closed form (formulas in dyn.h).
 *
 * State is (temperature, level); power is constant between the run's events
 * (a device's power state only changes at events, and a level switch while
 * computing is itself an event: dyn.c), so every interval is an exponential
 * approach and every trip or recover instant is one logarithm. Invariant: at
 * a switch the temperature is snapped to the threshold it crossed, so the
 * next query starts exactly on it and rounding cannot fire it twice.
 * Complexity: O(1) per query, O(switches) per advance.
 * Rejected: stepping an ODE solver (inexact, and a trip instant would be
 * found only to the step size), and a lookup table of throttle times (the
 * power changes with the level and with the run's schedule). */
#include <math.h>

#include "dyn.h"

static double t_inf(const hs_thermal_profile *th, double p_w) {
  return th->ambient_c + th->r_c_per_w * p_w;
}

static double tau_s(const hs_thermal_profile *th) { return th->r_c_per_w * th->c_j_per_c; }

double dyn_thermal_temp_after(const hs_thermal_profile *th, double t0_c, double p_w, double dt) {
  double ti = t_inf(th, p_w);
  return ti + (t0_c - ti) * exp(-dt / tau_s(th));
}

double dyn_thermal_cross_s(const hs_thermal_profile *th, double t0_c, double p_w, double x_c) {
  double ti = t_inf(th, p_w);
  if (x_c == t0_c) return 0;
  /* x must lie strictly between t0 and T_inf: the approach never reaches T_inf. */
  if ((x_c - t0_c) * (ti - t0_c) <= 0 || fabs(x_c - t0_c) >= fabs(ti - t0_c)) return INFINITY;
  return tau_s(th) * log((t0_c - ti) / (x_c - ti));
}

double dyn_thermal_next_switch_s(const hs_thermal_profile *th, const dyn_thermal *s, double p_w,
                                 uint32_t *to) {
  double best = INFINITY;
  *to = s->level;
  if (s->level + 1 < th->nlevels) {
    double x = th->trip_c[s->level + 1];
    double t = s->temp_c >= x ? 0 : dyn_thermal_cross_s(th, s->temp_c, p_w, x);
    if (t < best) {
      best = t;
      *to = s->level + 1;
    }
  }
  if (s->level > 0) {
    double x = th->recover_c[s->level];
    double t = s->temp_c <= x ? 0 : dyn_thermal_cross_s(th, s->temp_c, p_w, x);
    if (t < best) {
      best = t;
      *to = s->level - 1;
    }
  }
  return best;
}

void dyn_thermal_advance(const hs_thermal_profile *th, dyn_thermal *s, const double *p_of_level,
                         double dt) {
  for (;;) {
    uint32_t to;
    double p = p_of_level[s->level];
    double sw = dyn_thermal_next_switch_s(th, s, p, &to);
    if (!(sw <= dt)) {
      s->temp_c = dyn_thermal_temp_after(th, s->temp_c, p, dt);
      return;
    }
    s->temp_c = to > s->level ? th->trip_c[to] : th->recover_c[s->level];
    s->level = to;
    dt -= sw;
  }
}
