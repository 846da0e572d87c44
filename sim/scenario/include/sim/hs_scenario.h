/* [sim/scenario/include/sim -> hetsim::sim; not installed]
 * hs_scenario.h: a scenario, loaded and validated from JSON (every key, type,
 * default and range: sim/doc/reference/scenario-keys.md, printed by
 * `hetsim reference scenario-keys` from the loader's tables), with --set
 * overrides applied to the JSON tree before validation.
 *
 * The struct is open: regimes read it directly. It is immutable after load;
 * everything in it is owned by the scenario and freed by hs_scenario_destroy.
 * Every error names the file, the JSON path and the reason, e.g.
 *   scenarios/x.json: devices[3].profile: no profile "rpi9"
 *
 * Defaults (what a missing key means; hs_scenario_to_json prints them all):
 *   name: the file name without ".json"      seed: 1
 *   task: "mnist"                            batch_size: 32
 *   regime.kind: "pma"                       policy.kind: "equal" (+ its defaults)
 *   regime options: each regime's table of keys, defaults and ranges (its
 *     regime_*.c; e.g. ddp's steps_per_round: max(1, samples_per_round /
 *     (batch_size * total_devices)), so the mean per-rank batch is batch_size)
 *   devices[i].count: 1; speed_spread, power_spread: 0; link: the only link
 *     when network.links has exactly one (required otherwise)
 *   network.server: the only link when there is exactly one (required otherwise)
 *   network.links.<name>.latency_ms: 0
 *   network.duplex: "half"; network.links.<name>.duplex: network.duplex
 *   telemetry.time_noise, telemetry.energy_noise: 0;  switch_off_unselected: false
 *   report.meter_scopes: false
 * Required: model_bytes, rounds, samples_per_round, devices, network.links. */
#ifndef HS_SCENARIO_H
#define HS_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policies/hs_policy.h"
#include "base/hs_status.h"

typedef struct hs_profile hs_profile;         /* devices/hs_profile.h */
typedef struct hs_speed_trace hs_speed_trace; /* traces/hs_speed_trace.h */

typedef struct hs_link_spec {
  char *name;
  double bandwidth_mbps; /* > 0, megabits per second (1e6 bit/s) */
  double latency_ms;     /* >= 0, one-way */
  /* links.<name>.duplex, else network.duplex: "full" (true) gives each
   * direction its own bandwidth where the link is shared (the server's link,
   * an aggregator's); "half" (false, the default) one capacity for both. */
  bool full_duplex;
} hs_link_spec;

/* One entry of "devices": `count` identical-profile devices (count 1 by default).
 * Expanded devices are named "<name>" when count is 1, else "<name>-<k>" (k from 0).
 * Count 0 excludes the entry: it is validated and printed back (hs_scenario_to_json,
 * with "excluded": true) but gives no device and is not in hs_scenario.devices, so a
 * run equals the run of the scenario with the entry deleted. */
typedef struct hs_device_spec {
  char *name;
  char *profile_name;          /* as written in the scenario */
  const hs_profile *profile;   /* resolved and loaded (owned by the scenario) */
  char *link;                  /* name in network.links */
  uint32_t count;              /* >= 1 in hs_scenario.devices (0: excluded, see above) */
  double speed_spread;         /* lognormal sigma of a per-device speed factor (0: none) */
  double power_spread;         /* lognormal sigma of a per-device power factor (0: none) */
  char *speed_trace_path;      /* optional CSV time_s,speed (resolved path), or NULL */
  const hs_speed_trace *speed_trace; /* loaded, or NULL */
  char *owner;                 /* optional, informational (who owns the board), or NULL */
  char *speed_trace_name;      /* "speed_trace" as written in the scenario, or NULL */
  size_t first;                /* index of its first expanded device (see hs_scenario_device) */
  /* "cpu" (issue 24; absent: cpu_share 0, no CPU limit on its transfers): the
   * device's CPU is a quota of cpu_share of one core per cpu_period_ms, and
   * moving 1 MB (10^6 bytes) costs cpu_send_ms_per_mb of CPU at full speed.
   * See sim/doc/engine-and-network.md "CPU-bound transfers". */
  double cpu_share;            /* (0, 1], or 0 when absent */
  double cpu_period_ms;        /* > 0 (default 100: the CFS period) */
  double cpu_send_ms_per_mb;   /* > 0 */
} hs_device_spec;

/* The regime: its kind and its options, which belong to the regime (each
 * regime_*.c declares its options struct and its table of keys, defaults and
 * ranges; sim/scenario/iface/sim_regime.h is the regime API). */
typedef struct hs_regime_spec {
  char *kind;               /* a registered regime: pma | ddp | hfl-ddp | fedasync | ... */
  void *opts;               /* the regime's options (owned by the scenario) */
  uint32_t steps_per_round; /* optimiser steps per round the policy plans for (0: none) */
} hs_regime_spec;

/* The "learning" block (scenario_learning.c; NULL in hs_scenario when mode is
 * off, the default: a run without it writes what it wrote before). */
typedef struct hs_learning_spec {
  char *mode;              /* "real" | "curve" */
  char *data;              /* real: data path (resolved), NULL = the task default */
  char *partition;         /* "iid" | "dirichlet" | "counts" */
  double alpha;            /* dirichlet: concentration > 0 */
  size_t *counts;          /* counts: one size per expanded device */
  char *optimizer;         /* "sgd" | "momentum" | "adam" */
  double lr;               /* > 0; 0 = the task's default rate */
  uint32_t eval_every;     /* evaluate every k rounds (and after the last) */
  uint32_t eval_samples;   /* held-out samples per evaluation (0: all there are) */
  uint32_t max_samples;    /* training samples loaded (0: the task default) */
  double target_loss;      /* NAN: none */
  double target_accuracy;  /* NAN: none */
  uint32_t threads;        /* learner threads; 0 = the machine's cores */
  char *curve_profile;     /* curve: profile whose loss_curve is used (NULL: the
                              first device entry whose profile has one) */
  const double *curve_samples, *curve_loss; /* curve: resolved (owned by a profile) */
  size_t curve_points;
  /* Training options (issue 25; real mode only, sim/doc/findings/learning.md). */
  char *weights;           /* FedAvg weights: "samples" | "data" | "uniform" */
  char *last_batch;        /* a short last local batch: "keep" | "drop" | "merge" */
  char *lr_schedule;       /* "constant" | "step" | "cosine" (by round) */
  uint32_t lr_step_rounds; /* step: rounds between drops */
  double lr_gamma;         /* step: factor per drop */
  double lr_min;           /* cosine: the rate it ends at */
  uint32_t lr_warmup_rounds; /* linear warm-up rounds (0: none) */
  char *lr_scaling;        /* DDP steps: "none" | "linear" (lr x union batch / batch_size) */
  double weight_decay;     /* coupled L2 (0: off) */
  double clip_norm;        /* gradient clipping by global norm (0: off) */
  char *server_optimizer;  /* FedAvg rounds: "none" | "fedavgm" | "fedadam" */
  double server_lr;        /* its rate (eta) */
  double server_momentum;  /* fedavgm: mu; fedadam: beta1 */
  char *utility;           /* what the controller is told (oort): "loss" (each
                              device's loss statistic) | "samples" (none: the
                              samples it trained, what a meter alone sees) */
} hs_learning_spec;

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
  size_t ndevices;          /* included entries (count >= 1), before count expansion */
  size_t total_devices;     /* after count expansion */
  char *server_link;        /* network.server: the server's / aggregator's link */
  hs_link_spec *links;
  size_t nlinks;
  double telemetry_time_noise;   /* relative sd of reported time (0: exact) */
  double telemetry_energy_noise; /* relative sd of reported energy (0: exact) */
  bool switch_off_unselected;    /* oort: unselected devices switch off for the round */
  bool report_meter_scopes;      /* report.meter_scopes: the "meter" metric group (hs_metrics.h) */
  struct hs_dynamics *dynamics;  /* the "dynamics" block (sim/run/iface/dyn.h); NULL: none */
  hs_learning_spec *learning;    /* NULL: learning off */
} hs_scenario;

/* A --set key=value override: key is a dotted JSON path ("policy.w_e",
 * "devices[2].count", "network.links.wan.bandwidth_mbps"), value is JSON text
 * or a bare string. */
typedef struct hs_override {
  const char *key;
  const char *value;
} hs_override;

/* Split a command-line "key=value" (the text after --set) at its first '=',
 * which becomes '\0': out->key and out->value point into arg. HS_EINVAL,
 * naming arg, when there is no '=' or the key is empty (arg unchanged). */
hs_status hs_override_parse(char *arg, hs_override *out, hs_error *err);

/* Read, override, validate. Overrides apply in order, except that every
 * "policy.kind" override applies first: it replaces the whole policy object with
 * {"kind": NEW}, so the new kind starts from its own defaults and the file's
 * other policy keys (written for the old kind) are dropped; the other policy.*
 * overrides then apply on top. A value that parses as JSON is used as JSON,
 * anything else as a string; the value null removes the key (its default
 * applies). The parent of the key must exist (a missing top-level "regime",
 * "policy", "network" or "telemetry" object counts as an empty one).
 * Returns NULL with *err set on any error. The caller owns the result. */
hs_scenario *hs_scenario_load(const char *path, const hs_override *ovr, size_t novr,
                              hs_error *err);
/* The same from JSON text. origin names the text in errors (and is sc->path);
 * base_dir is the folder relative profile and speed-trace paths start from. */
hs_scenario *hs_scenario_parse(const char *json_text, const char *origin, const char *base_dir,
                               const hs_override *ovr, size_t novr, hs_error *err);
void hs_scenario_destroy(hs_scenario *sc);

/* The built-in default scenario: scenarios/testbed-mnist-pma.json under the
 * shipped data beside the program (hs_share_path: <bin>/../share/hetsim, which
 * the build tree links to the source folders). Static string. */
const char *hs_scenario_default_path(void);
/* What a command's SCENARIO argument names, as the Python package resolves
 * it: arg itself when it exists, else the shipped scenario
 * <share>/scenarios/arg, else <share>/scenarios/arg.json (hs_share_path).
 * Heap string (hs_free), or NULL with HS_ENOENT and a message naming the
 * folder and the nearest shipped name. hs_scenario_load calls it. */
char *hs_scenario_find(const char *arg, hs_error *err);

/* Find a link by name; NULL when absent. */
const hs_link_spec *hs_scenario_link(const hs_scenario *sc, const char *name);

/* One expanded device. */
typedef struct hs_device_ref {
  const char *name; /* "<entry>" when count is 1, else "<entry>-<k>" (owned by the scenario) */
  size_t spec;      /* index in sc->devices */
  uint32_t k;       /* index within that entry, 0 <= k < count */
} hs_device_ref;

/* The sc->total_devices expanded devices, in a stable order: entry order,
 * then k; devices[j].first is the position of entry j's first device. Nothing
 * is stored per device: the entry is found by binary search over the entries
 * (O(log entries)), the name in a name arena made on the first name asked. */
hs_device_ref hs_scenario_device(const hs_scenario *sc, size_t i);
/* Its entry (index in sc->devices). O(log entries). */
size_t hs_scenario_device_entry(const hs_scenario *sc, size_t i);
/* Its name (owned by the scenario; the first call makes every name, once,
 * under a lock: threads that share one scenario may call it). */
const char *hs_scenario_device_name(const hs_scenario *sc, size_t i);
/* Its name written into buf (cap >= HS_DEVICE_NAME_MAX), without making the
 * names; returns the length. */
#define HS_DEVICE_NAME_MAX 80
size_t hs_scenario_device_name_into(const hs_scenario *sc, size_t i, char *buf, size_t cap);
/* Position (in hs_scenario_device order) of the device with this expanded
 * name, or SIZE_MAX. O(log entries): "<entry>-<k>" is parsed. */
size_t hs_scenario_find_device(const hs_scenario *sc, const char *name);
/* The same for any name the scenario gives devices: an expanded device
 * (*n = 1), an entry with count > 1 (*n = count, from *first) or an excluded
 * entry (count 0: *n = 0, a name with no device). False when no device or
 * entry has the name. O(log entries). */
bool hs_scenario_find_name(const hs_scenario *sc, const char *name, size_t *first, size_t *n);
/* The regime's participant groups (hfl-ddp: the silo of each expanded device):
 * sc->total_devices ids in hs_scenario_device order, ready to pass as
 * hs_controller_create's groups. NULL when the regime has one group. Owned by sc. */
const uint32_t *hs_scenario_groups(const hs_scenario *sc);
/* The optional CSV column groups the scenario asks for (HS_COL_* bits of
 * traces/hs_columns.h; report.meter_scopes: HS_COL_METER): what every writer
 * of its run's tables (report.c, a regime's own table) passes. */
unsigned hs_scenario_columns(const hs_scenario *sc);

/* The scenario as JSON with every default filled in (heap string, hs_free).
 * Devices are written as entries (with count), not expanded, excluded ones too
 * (count 0 and "excluded": true); paths as written.
 * Deterministic: the same scenario gives the same bytes. Loading the output
 * again (from the same folder) gives the same scenario. */
char *hs_scenario_to_json(const hs_scenario *sc);

/* The scenario-key reference as Markdown (sim/doc/reference/scenario-keys.md):
 * the top-level keys, each regime's options and each policy's keys, printed
 * from the tables the loader reads (scenario_reference.c). */
void hs_scenario_reference(FILE *out);

#endif
