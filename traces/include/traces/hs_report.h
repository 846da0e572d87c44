/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_report.h: the run outputs in one folder (DESIGN.md "Run outputs").
 *
 *   summary.json  one object: scenario, policy, regime, seed and the figures,
 *                 then the members added with hs_report_add_json (hetsim run:
 *                 hetsim_version, run_identity, sets, policy_config, inputs,
 *                 scenario_resolved; see sim/run/run_describe.c)
 *   rounds.csv    round,start_s,end_s,duration_s,energy_j,compute_cv,max_wait_s,reallocated
 *                 (with the meter-scope group, HS_COL_METER: energy_idle_baseline_j,
 *                 energy_above_idle_j, energy_training_j after energy_j; so
 *                 learning.csv)
 *   devices.csv   round,device,samples,compute_s,comm_s,wait_s,energy_j,profile
 *                 (profile last, so readers by position of the older columns
 *                 keep working)
 *   trace.json    (on request) Chrome trace event format, one track per device
 *   learning.csv  (when the run learns) round,time_s,energy_j,samples,train_loss,
 *                 test_loss,test_accuracy,lr,target_met: one row per evaluation
 *
 * Rows stream to temporary files as the run produces them (memory does not grow
 * with rounds x devices); hs_report_commit renames every file into place only
 * at the end, hs_report_abort removes them: a failed run leaves no half-written
 * file. A trace.json from an earlier run in the same folder is removed when
 * this run writes none. Numbers are printed with hs_fmt_double (hs_fmt.h): the
 * shortest text that reads back to the same double, so every figure
 * round-trips exactly, and the same bytes for the same run. */
#ifndef HS_REPORT_H
#define HS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/hs_status.h"

typedef struct hs_report hs_report;

typedef struct hs_round_row {
  uint32_t round;
  double start_s, end_s;
  double energy_j;
  double compute_cv;
  double max_wait_s;
  bool reallocated;
  /* The meter scopes of the round, summed over devices (written with
   * report.meter_scopes only: the HS_COL_METER columns): wall (energy_j) =
   * above_idle + idle_baseline to rounding; training <= wall. */
  double idle_baseline_j, above_idle_j, training_j;
} hs_round_row;

typedef struct hs_device_row {
  uint32_t round;
  const char *device;
  uint64_t samples;
  double compute_s, comm_s, wait_s, energy_j;
  const char *profile; /* the device's profile name (hs_profile_name) */
} hs_device_row;

/* Per round and profile, what devices.csv would say of its devices, for runs
 * too large for one row per device (device_profiles.csv): the device count,
 * the samples and energy summed in device order, and the percentiles
 * p0, p50, p90, p99, p100 (nearest rank: the value at sorted index
 * ceil(q n) - 1, p0 the minimum) of compute, comm and wait seconds. */
#define HS_REPORT_NPCT 5
typedef struct hs_profile_row {
  uint32_t round;
  const char *profile;
  uint64_t count, samples;
  double compute_s[HS_REPORT_NPCT], comm_s[HS_REPORT_NPCT], wait_s[HS_REPORT_NPCT];
  double energy_j;
  /* The meter scopes, summed as energy_j (report.meter_scopes only). */
  double idle_baseline_j, above_idle_j, training_j;
} hs_profile_row;

/* One evaluation of a run that learns (issue 10): time and energy since t = 0,
 * samples trained so far, mean training loss since the previous row, held-out
 * loss and accuracy (NaN: none, e.g. regression or curve mode). */
typedef struct hs_learning_row {
  uint32_t round;
  double time_s, energy_j;
  uint64_t samples;
  double train_loss, test_loss, test_accuracy;
  double lr;          /* the learning rate of the round (schedule); NaN: curve mode */
  double target_met;  /* 1 when this evaluation meets the target, 0 not; NaN: no target */
  /* The meter scopes since t = 0, as hs_round_row's summed over the rounds
   * (report.meter_scopes only). */
  double idle_baseline_j, above_idle_j, training_j;
} hs_learning_row;

/* What the controller saw of one device in one round (telemetry.csv): the
 * input format of `hetsim replay`, so a run's own telemetry replays to the
 * run's allocations. */
typedef struct hs_telemetry_row {
  uint32_t round;
  const char *device;
  double time_s, energy_j; /* as the device's meter reported them (noise included) */
  uint64_t samples;
  double comm_s;           /* communication time of the round: download_s + upload_s */
} hs_telemetry_row;

/* One device's round under each meter scope (meter.csv, with
 * report.meter_scopes): wall = above_idle + idle_baseline (to rounding);
 * training is what its meter reported, <= wall. */
typedef struct hs_meter_row {
  uint32_t round;
  const char *device;
  double energy_j, idle_baseline_j, above_idle_j, training_j;
} hs_meter_row;

/* A named number for summary.json (key carries its unit, e.g. "makespan_s"). */
typedef struct hs_report_field {
  const char *key;
  double value; /* NaN is written as null */
} hs_report_field;

/* Creates `dir` (mkdir -p) and opens the files. The caller owns the report
 * until hs_report_commit or hs_report_abort. */
hs_report *hs_report_open(const char *dir, bool trace, hs_error *err);
/* As hs_report_open; with `profiles`, device_profiles.csv (hs_report_profile
 * rows) instead of devices.csv. Committing removes the other of the two files
 * left by an earlier run into the same folder. */
hs_report *hs_report_open_as(const char *dir, bool trace, bool profiles, hs_error *err);
/* As hs_report_open_as, with the optional columns of `groups` (HS_COL_* of
 * hs_columns.h: HS_COL_METER, the meter scopes) in rounds.csv,
 * device_profiles.csv and learning.csv. */
hs_report *hs_report_open_with(const char *dir, bool trace, bool profiles, unsigned groups,
                               hs_error *err);
void hs_report_profile(hs_report *r, const hs_profile_row *row);
void hs_report_round(hs_report *r, const hs_round_row *row);
void hs_report_device(hs_report *r, const hs_device_row *row);
/* Trace: name a track once, then add complete spans ("X" events) on it. */
void hs_report_track(hs_report *r, uint32_t track, const char *name);
void hs_report_span(hs_report *r, uint32_t track, const char *name, double start_s,
                    double end_s);
bool hs_report_tracing(const hs_report *r);
/* Open learning.csv (with its header) beside the other files; committed and
 * aborted with them. Without this call a learning.csv of an earlier run in
 * the folder is removed on commit. */
hs_status hs_report_learning_open(hs_report *r, hs_error *err);
void hs_report_learning(hs_report *r, const hs_learning_row *row); /* no-op unless opened */
/* Open telemetry.csv (with its header) beside the other files, an extra file
 * as learning.csv is: a run that does not open it removes an earlier run's. */
hs_status hs_report_telemetry_open(hs_report *r, hs_error *err);
void hs_report_telemetry(hs_report *r, const hs_telemetry_row *row); /* no-op unless opened */
/* meter.csv, the same kind of extra file, for runs that report the meter scopes. */
hs_status hs_report_meter_open(hs_report *r, hs_error *err);
void hs_report_meter(hs_report *r, const hs_meter_row *row); /* no-op unless opened */
/* An extra output file of the run (a regime's own table), `name` in the run
 * folder: streamed to a temporary name like the others, renamed into place
 * with them by hs_report_commit, removed by hs_report_abort. NULL with err set
 * when it cannot be opened, or past HS_REPORT_EXTRA_MAX files (learning.csv
 * is one of them). learning.csv, and the files declared with
 * hs_report_optional, of an earlier run in the folder are removed on commit
 * when this run did not write them. */
#define HS_REPORT_EXTRA_MAX 5
FILE *hs_report_extra(hs_report *r, const char *name, hs_error *err);
/* `name` is an extra file some runs write (a regime's own table): removed on
 * commit when this run did not write it (the caller lists every regime's). */
void hs_report_optional(hs_report *r, const char *name);
/* Append a member to summary.json, after the fields: key and its value as
 * JSON text (one line; both copied). Members are written in the order added. */
void hs_report_add_json(hs_report *r, const char *key, const char *json);
/* Write summary.json from (strings, fields) and rename every file into place.
 * Frees r whatever the outcome. */
hs_status hs_report_commit(hs_report *r, const char *const *str_keys, const char *const *str_vals,
                           size_t nstr, const hs_report_field *fields, size_t nfields,
                           hs_error *err);
void hs_report_abort(hs_report *r);

/* The column tables of the files above (hs_columns.h), in the order listed
 * there: rounds.csv, devices.csv, device_profiles.csv, learning.csv. */
typedef struct hs_csv_table hs_csv_table;
size_t hs_report_table_count(void);
const hs_csv_table *hs_report_table_at(size_t i);

/* Append a JSON string literal for s (quotes and escapes) to out. */
void hs_json_fputs(FILE *out, const char *s);

#endif
