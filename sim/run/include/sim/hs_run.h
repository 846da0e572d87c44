/* [sim/run/include/sim -> hetsim::sim; not installed]
 * hs_run.h: run one scenario to completion and (optionally) write its outputs.
 *
 * hs_run is re-entrant: no globals, so a sweep may run several scenarios at once
 * on different threads. Same scenario (incl. seed) => byte-identical outputs. */
#ifndef HS_RUN_H
#define HS_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/hs_scenario.h"
#include "base/hs_status.h"

typedef struct hs_run_device_round hs_run_device_round; /* below */

typedef struct hs_run_opts {
  const char *out_dir;   /* NULL: write nothing; else summary.json, rounds.csv, devices.csv */
  bool trace;            /* also trace.json (Chrome trace event format) */
  bool measure_overhead; /* time the controller with the wall clock (output then not reproducible) */
  const hs_override *sets; /* the --set list, recorded in summary.json (may be NULL) */
  size_t nsets;
  bool force;            /* replace out_dir even when it holds another run */
  /* Called after each round (done of total; from the thread that runs),
   * e.g. for progress lines; NULL: none. Never changes any output. */
  void (*on_round)(void *userdata, uint32_t done, uint32_t total);
  void *userdata;
  /* Per-device output: HS_DEVICES_AUTO writes devices.csv (one row per device
   * and round) up to devices_threshold devices (0: HS_DEVICES_THRESHOLD, 10^4)
   * and device_profiles.csv (per round and profile: count, samples, energy,
   * compute/comm/wait percentiles; hs_report.h) above it; FULL and PROFILES
   * choose one whatever the size. */
  int devices;
  size_t devices_threshold;
  /* Comma-separated device names: trace only these (implies trace); NULL: all. */
  const char *trace_devices;
  /* A fixed allocation schedule (hetsim check: the allocations a real run
   * used): round r's allocation is schedule[r * devices + i] for the
   * expanded devices in hs_scenario_device_name order, in place of the
   * controller's decision. The controller is still created and fed the
   * telemetry; only its decisions are set aside (hfl-ddp's per-silo step
   * controllers under ema-batch still size their own steps). schedule_rounds must be at
   * least the scenario's rounds (HS_EINVAL otherwise). NULL: the controller
   * decides. Borrowed for the run. Not with out_dir (HS_EINVAL): a run
   * folder's run_identity names the scenario, seed and --set list, not a
   * schedule, so its outputs would claim a run they are not. */
  const uint64_t *schedule;
  uint32_t schedule_rounds;
  /* The expectation of the compute times: every task's tau_cv taken as 0, so
   * a computation of n samples takes overhead_s + n tau_s (the mean of the
   * lognormal draw), and no shared slowdown (its factors have mean 1). The
   * streams still draw (they stay aligned); the population spread and the
   * other dynamics are kept. */
  bool no_compute_noise;
  /* Observers of the rounds as they end, from the thread that runs (NULL:
   * none; they never change an output): each device's round, then the
   * round's span. */
  void (*on_device_round)(void *userdata, const hs_run_device_round *d);
  void (*on_round_end)(void *userdata, uint32_t round, double start_s, double end_s);
} hs_run_opts;

/* One device's round as the run measured it: what devices.csv holds, and
 * what its meter reported for training before telemetry noise. compute_s +
 * comm_s + wait_s is the device's time on in the round (the round's span
 * unless it was off for part of it). */
struct hs_run_device_round {
  uint32_t round;
  size_t device;       /* index in hs_scenario_device_name order */
  const char *name;    /* valid during the call */
  uint64_t samples;    /* trained this round */
  double compute_s;    /* busy: training, the profile's overhead_s included */
  double comm_s;       /* exchanging models with the server (download + upload) */
  double wait_s;       /* idle while on: after its upload until the round closed */
  double energy_j;     /* all of its energy in the round */
  double train_j;      /* its meter's training energy (0 when it trained nothing) */
};

enum { HS_DEVICES_AUTO = 0, HS_DEVICES_FULL = 1, HS_DEVICES_PROFILES = 2 };
#define HS_DEVICES_THRESHOLD 10000

/* The version of this build: "X.Y.Z" (CMake project VERSION), followed by
 * " (git describe)" when configured from a git checkout. Static string. */
const char *hs_version(void);

/* Room for the metric table's lines in hs_summary.reported (asserted in
 * metrics.c). */
#define HS_SUMMARY_REPORTED_MAX 80

/* The figures of a run. Which of them summary.json, a sweep and compare show,
 * under which names, is the metric table (hs_metrics.h, sim/run/metrics.c). */
typedef struct hs_summary {
  uint64_t seed;               /* the master seed */
  uint64_t devices;            /* devices in the run, groups expanded */
  uint32_t rounds;
  uint64_t samples;            /* samples trained in total */
  double makespan_s;
  double energy_j;             /* total = compute + comm + idle */
  double compute_j;
  double comm_j;
  double idle_j;               /* idle-wait while on */
  double compute_cv;           /* mean over rounds of the CV of per-device compute time */
  double wait_fraction;        /* idle-wait seconds / (devices * makespan) */
  double controller_overhead_fraction; /* NAN unless measured */
  double compute_cv_adapted;   /* compute_cv of the rounds after the first (measured) one;
                                  NAN without a "dynamics" block or with one round */
  /* The optional metric groups this run reports (hs_metrics.h:
   * hs_metric_reported(s, "learning")); the figures of a group it does not
   * report are NAN. */
  unsigned metric_groups;
  /* Learning in the loop (issue 10), group "learning": when the scenario's
   * learning mode is not off; NAN when not reached or not evaluated. */
  double time_to_target_s, energy_to_target_j, rounds_to_target;
  double final_test_loss, final_test_accuracy;
  /* ...and the first evaluation after which every evaluation met the target
   * (NAN when the last one missed it): accuracy stays above from there. */
  double time_to_stable_target_s, energy_to_stable_target_j, rounds_to_stable_target;
  /* Whole-system energy (issue 17), group "system": when the regime reports
   * it (regime "fl"). system = energy_j + server + aggregators + network. */
  double energy_server_j, energy_network_j, energy_aggregators_j, energy_system_j;
  /* Meter scopes (issue 25), group "meter": when the scenario asks
   * (report.meter_scopes). Wall is energy_j; idle_baseline = sum over devices
   * of idle power x seconds on; above_idle = energy_j - idle_baseline (to
   * rounding); training = what the devices' meters reported to the
   * controller (before telemetry noise), <= energy_j per device. */
  double energy_above_idle_j, energy_idle_baseline_j, energy_training_j;
  /* A regime's own figures, reported by name (its summary_fields hook) and
   * kept by metric: reported[i] is the value of metric table line i when that
   * line is a reported one (HS_METRIC_REPORTED, hs_metrics.h); NAN when the
   * run did not report it. */
  double reported[HS_SUMMARY_REPORTED_MAX];
} hs_summary;

/* Runs sc. With opts->out_dir: refuses (HS_ESTATE) a folder whose
 * summary.json records another run_identity, or that holds run files without
 * a summary.json, unless opts->force; the same run again overwrites. */
hs_status hs_run(const hs_scenario *sc, const hs_run_opts *opts, hs_summary *out, hs_error *err);

/* HS_ENOMEM, with one line naming the device count and the estimated bytes,
 * when sc's run would not fit in the memory available to the process (the
 * address-space limit, else MemAvailable); HS_OK otherwise or when unknown.
 * hs_run calls it before its first per-device allocation (run_memory.c). */
hs_status hs_run_check_memory(const hs_scenario *sc, hs_error *err);

/* Every file a run may write in its output folder, in a fixed order:
 * summary.json, trace.json, the report's CSV tables (rounds.csv,
 * devices.csv, device_profiles.csv, learning.csv, telemetry.csv) and each
 * regime's own (agc.csv). Static names; returns how many there are and
 * writes up to cap of them. A committed run folder holds exactly the ones
 * this run wrote (hs_run removes an earlier run's others), so a caller lists
 * what was written by asking which of these exist. */
size_t hs_run_output_files(const char **names, size_t cap);

#endif
