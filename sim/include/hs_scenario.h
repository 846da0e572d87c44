/* hs_scenario.h: a scenario, loaded and validated from JSON (see DESIGN.md,
 * "Formats"), with --set overrides applied before validation.
 *
 * The struct is open: regimes read it directly. It is immutable after load;
 * everything in it is owned by the scenario and freed by hs_scenario_destroy.
 * Every error names the file, the JSON path and the reason, e.g.
 *   scenarios/x.json: devices[3].profile: no profile "rpi9" */
#ifndef HS_SCENARIO_H
#define HS_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hs_policy.h"
#include "hs_status.h"

typedef struct hs_profile hs_profile;         /* devices/hs_profile.h */
typedef struct hs_speed_trace hs_speed_trace; /* traces/hs_speed_trace.h */

typedef struct hs_link_spec {
  char *name;
  double bandwidth_mbps; /* > 0, megabits per second (1e6 bit/s) */
  double latency_ms;     /* >= 0, one-way */
} hs_link_spec;

/* One entry of "devices": `count` identical-profile devices (count 1 by default).
 * Expanded devices are named "<name>" when count is 1, else "<name>-<k>" (k from 0). */
typedef struct hs_device_spec {
  char *name;
  char *profile_name;          /* as written in the scenario */
  const hs_profile *profile;   /* resolved and loaded (owned by the scenario) */
  char *link;                  /* name in network.links */
  uint32_t count;              /* >= 1 */
  double speed_spread;         /* lognormal sigma of a per-device speed factor (0: none) */
  double power_spread;         /* lognormal sigma of a per-device power factor (0: none) */
  char *speed_trace_path;      /* optional CSV time_s,speed (resolved path) */
  const hs_speed_trace *speed_trace; /* loaded, or NULL */
  char *owner;                 /* optional, informational (who owns the board) */
} hs_device_spec;

typedef struct hs_silo_spec {
  char *name;
  char **members;     /* device names (expanded names or entry names) */
  size_t nmembers;
  char *fabric;       /* link name used for the intra-silo all-reduce */
} hs_silo_spec;

typedef struct hs_regime_spec {
  char *kind;               /* pma | ddp | hfl-ddp | fedasync */
  uint32_t steps_per_round; /* ddp, hfl-ddp: optimiser steps S per round */
  char *collective;         /* ddp: ring | tree | hierarchical (default ring) */
  hs_silo_spec *silos;      /* hfl-ddp */
  size_t nsilos;
  /* fedasync */
  char *staleness;          /* constant | polynomial | hinge */
  double staleness_a;       /* polynomial exponent / hinge slope */
  double staleness_b;       /* hinge threshold (versions) */
  double mixing_alpha;      /* base mixing weight in (0,1] */
} hs_regime_spec;

typedef struct hs_scenario {
  char *path;               /* file it was loaded from ("<default>" for built-ins) */
  char *dir;                /* its folder, for relative paths */
  char *name;
  uint64_t seed;
  char *task;               /* mnist | era5 | imdb | any task the profiles carry */
  double model_bytes;       /* bytes exchanged per model transfer */
  uint32_t rounds;
  uint64_t samples_per_round;
  uint32_t batch_size;
  hs_regime_spec regime;
  hs_policy_config policy;
  hs_device_spec *devices;
  size_t ndevices;          /* entries, before count expansion */
  size_t total_devices;     /* after count expansion */
  char *server_link;        /* network.server: the server's / aggregator's link */
  hs_link_spec *links;
  size_t nlinks;
  double telemetry_time_noise;   /* relative sd of reported time (0: exact) */
  double telemetry_energy_noise; /* relative sd of reported energy (0: exact) */
  bool switch_off_unselected;    /* oort: unselected devices switch off for the round */
} hs_scenario;

/* A --set key=value override: key is a dotted JSON path ("policy.w_e",
 * "devices[2].count", "network.links.wan.bandwidth_mbps"), value is JSON text
 * or a bare string. */
typedef struct hs_override {
  const char *key;
  const char *value;
} hs_override;

hs_scenario *hs_scenario_load(const char *path, const hs_override *ovr, size_t novr,
                              hs_error *err);
void hs_scenario_destroy(hs_scenario *sc);

/* Find a link by name; NULL when absent. */
const hs_link_spec *hs_scenario_link(const hs_scenario *sc, const char *name);

/* The scenario as JSON with every default filled in (heap string, hs_free). */
char *hs_scenario_to_json(const hs_scenario *sc);

#endif
