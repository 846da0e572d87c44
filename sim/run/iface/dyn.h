/* dyn.h: devices that change during a run: thermal throttling (dyn_thermal.c),
 * co-tenant load and availability (dyn_process.c), and their place on the
 * run's timeline (dyn.c), and a slowdown that devices share (dyn_shared.c). Parsed from the scenario's optional "dynamics"
 * block (scenario_dynamics.c); a scenario without it runs exactly as before.
 *
 * Thermal model (closed form, hs_profile.h: hs_thermal_profile): with power P
 * constant over an interval, T(t) = T_inf + (T0 - T_inf) exp(-t / tau),
 * T_inf = ambient + R P, tau = R C; the time to reach a threshold X between
 * T0 and T_inf is tau ln((T0 - T_inf) / (X - T_inf)) (never, when X is not
 * strictly between them on T_inf's side). Hysteresis: from level k the board
 * steps down to k+1 at trip_c[k+1] and back up to k-1 at recover_c[k]; at a
 * switch T is snapped to the threshold, so a switch never repeats at once.
 *
 * Speed of a device at time t: speed[level] x co-tenant factor x speed trace,
 * and 0 while it is unavailable (off). Power: busy_w x busy_factor[level]
 * while computing, comm_w, idle_w, 0 when off. */
#ifndef SIM_DYN_H
#define SIM_DYN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/hs_profile.h"
#include "sim/hs_ledger.h"
#include "scn_dynamics.h"
#include "base/hs_rng.h"
#include "base/hs_status.h"

/* --- thermal closed forms (dyn_thermal.c) ---------------------------------- */

typedef struct dyn_thermal {
  double temp_c;  /* now */
  uint32_t level; /* 0: unthrottled */
} dyn_thermal;

/* T after dt seconds at constant power p_w. */
double dyn_thermal_temp_after(const hs_thermal_profile *th, double t0_c, double p_w, double dt);
/* Seconds until T reaches x_c from t0_c at constant power; INFINITY when never. */
double dyn_thermal_cross_s(const hs_thermal_profile *th, double t0_c, double p_w, double x_c);
/* Seconds until the next level switch at constant power (0 when one is due
 * now; INFINITY when none); *to gets the level it switches to. */
double dyn_thermal_next_switch_s(const hs_thermal_profile *th, const dyn_thermal *s, double p_w,
                                 uint32_t *to);
/* Advance s by dt seconds; power is p_of_level[level] (so busy power follows
 * the level); switches on the way are taken in closed form. */
void dyn_thermal_advance(const hs_thermal_profile *th, dyn_thermal *s, const double *p_of_level,
                         double dt);

/* --- piecewise-constant processes (dyn_process.c) -------------------------- */

/* A value over time that changes at t[1] < t[2] < ...; v[k] holds on
 * [t[k], t[k+1]), t[0] = 0. Either fixed (from a trace: the last value holds
 * forever) or a seeded two-state Markov process extended lazily as queries
 * reach further (deterministic: the draws come in time order from its own
 * stream, whatever the query order). */
typedef struct dyn_pw {
  double *t, *v;
  size_t n, cap;
  bool markov;
  hs_rng rng;
  double mean_s[2], val[2]; /* Markov: mean sojourn and value of states 0 and 1 */
  uint8_t cur;              /* Markov: state of the last piece */
} dyn_pw;

/* A two-state Markov process: state 0 (value val0, mean sojourn mean0_s) and
 * state 1; the initial state is drawn from the stationary law. */
void dyn_pw_markov(dyn_pw *p, uint64_t seed, uint64_t entity, uint64_t purpose, double val0,
                   double mean0_s, double val1, double mean1_s);
/* On/off intervals: value 1 on [on[2j], on[2j+1]), 0 elsewhere (sorted,
 * disjoint, checked by the caller). */
void dyn_pw_intervals(dyn_pw *p, const double *on, size_t n_intervals);
void dyn_pw_fini(dyn_pw *p);
double dyn_pw_at(dyn_pw *p, double t);
/* The first change strictly after t; INFINITY when none. */
double dyn_pw_next(dyn_pw *p, double t);

/* Purposes of the random streams (hs_rng_init), beyond hs_rng.h's. */
enum {
  DYN_RNG_COTENANT = 0x44594e31,
  DYN_RNG_AVAIL = 0x44594e32,
  DYN_RNG_SHARED_WIDE = 0x44594e33, /* shared_slowdown: the scenario-wide factor */
  DYN_RNG_SHARED_GROUP = 0x44594e34 /* shared_slowdown: a group's factor */
};

/* --- shared slowdown (dyn_shared.c) ------------------------------------------ */

/* The factor of one (entity, period): one draw from the stream (seed,
 * entity, purpose mixed with period) through n's lognormal (mean 1). */
double dyn_shared_draw(uint64_t seed, uint64_t entity, uint64_t purpose, uint64_t period,
                       const hs_task_noise *n);

/* --- on the run's timeline (dyn.c), called by the run (run.c) ------------ */
/* Set-up after the devices are expanded; start once every device is idle at
 * t = 0; the state hook sim_dev_state calls; a computation's end (seconds
 * from now) through levels, co-tenant load, speed trace and absences; free.
 * Declared here, with the model, and not in sim_run.h: the run includes the
 * dynamics, the dynamics include the run's state, and no arrow points back. */
typedef struct sim_run sim_run;
void sim_dyn_setup(sim_run *r);
void sim_dyn_start(sim_run *r);
void sim_dyn_state(sim_run *r, size_t i, hs_power_state st);
double sim_dyn_finish(sim_run *r, size_t i, double work_s, double after_s);
double sim_dyn_last_j(const sim_run *r, size_t i);
void sim_dyn_free(sim_run *r);
/* The shared slowdown's state (r->shared; NULL when every CV is 0), made and
 * freed by sim_dyn_setup and sim_dyn_free. */
void sim_shared_setup(sim_run *r);
void sim_shared_free(sim_run *r);

#endif
