/* scn_dynamics.h (sim/scenario/iface): what the scenario's optional
 * "dynamics" block holds, as the loader (scenario_dynamics.c) fills it and
 * the run's dynamics (sim/run/dynamics, dyn.h) reads it. The data of a block
 * belongs to the room that parses it, so that the loader needs nothing of
 * the rooms above it. */
#ifndef SIM_SCN_DYNAMICS_H
#define SIM_SCN_DYNAMICS_H

#include <stdbool.h>
#include <stddef.h>

#include "devices/hs_profile.h"

typedef struct dyn_dev_spec {
  const hs_thermal_profile *thermal; /* NULL: no throttling */
  double cot_slowdown;               /* speed factor while a co-tenant runs (0: none) */
  double cot_free_s, cot_loaded_s;   /* mean sojourns */
  double av_on_s, av_off_s;          /* availability process (0: none) */
  double *av_iv;                     /* trace: on intervals, 2 x av_n */
  size_t av_n;
  bool av_trace;                     /* named in the availability trace */
} dyn_dev_spec;

struct hs_dynamics {
  dyn_dev_spec *dev; /* total_devices */
  size_t ndev;
  double start_c;    /* NAN: each board starts at its idle steady state */
  double deadline_s; /* round deadline (a regime that takes absences: pma); 0: none */
  void *json;        /* the block as written (cJSON), printed back by hetsim validate */
};

#endif
