/* scn_dynamics.h (sim/scenario/iface): what the scenario's optional
 * "dynamics" block holds, as the loader (scenario_dynamics.c) fills it and
 * the run's dynamics (sim/run/dynamics, dyn.h) reads it. The data of a block
 * belongs to the room that parses it, so that the loader needs nothing of
 * the rooms above it. */
#ifndef SIM_SCN_DYNAMICS_H
#define SIM_SCN_DYNAMICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/hs_profile.h"

typedef struct dyn_dev_spec {
  const hs_thermal_profile *thermal; /* NULL: no throttling */
  double cot_slowdown;               /* speed factor while a co-tenant runs (0: none) */
  double cot_free_s, cot_loaded_s;   /* mean sojourns */
  double av_on_s, av_off_s;          /* availability process (0: none) */
  double *av_iv;                     /* trace: on intervals, 2 x av_n */
  size_t av_n;
  bool av_trace;                     /* named in the availability trace */
  uint32_t shared_group;             /* shared_slowdown: 1 + its group's index; 0: in none */
  double shared_loading;             /* shared_slowdown: how strongly it takes its factor
                                        (the exponent on log time; 1 by default, 0: not at all) */
} dyn_dev_spec;

/* One group of dynamics.shared_slowdown.groups: its devices' common factor. */
typedef struct dyn_shared_group {
  char *name; /* as written: the key of its factor's random stream */
  double cv;  /* CV of its factor (mean 1, lognormal) */
} dyn_shared_group;

struct hs_dynamics {
  dyn_dev_spec *dev; /* total_devices */
  size_t ndev;
  double start_c;    /* NAN: each board starts at its idle steady state */
  double deadline_s; /* round deadline (a regime that takes absences: pma); 0: none */
  /* shared_slowdown: the scenario-wide factor every device takes, and each
   * group's on top of it; a new factor every period_s seconds (0: every round) */
  double shared_cv, shared_period_s;
  dyn_shared_group *shared_groups;
  size_t nshared_groups;
  void *json;        /* the block as written (cJSON), printed back by hetsim validate */
};

#endif
