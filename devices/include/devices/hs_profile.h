/* [devices/include/devices -> hetsim::devices; not installed]
 * hs_profile.h: device profiles: load, validate, look up, sample.
 *
 * A profile describes one board type (format, field by field, in
 * devices/profiles/README.md): device-wide idle and communication power, and
 * per task (mnist, era5, imdb, ...) the mean per-sample training time tau_s,
 * its coefficient of variation tau_cv, the busy power busy_w while training and
 * a fixed per-round overhead_s, plus provenance (measured with which sensor, or
 * estimated from which public figures). Watts are whole-device power.
 *
 * Loading is strict: unknown keys, missing fields, wrong types, non-finite or
 * out-of-range numbers and unsorted loss curves are rejected, and the message
 * names the file, the JSON path and the reason, e.g.
 *   devices/profiles/rpi4.json: tasks.mnist.tau_s: must be a number > 0
 *
 * Ownership: a loaded profile is immutable, and everything reachable from it
 * (task records, strings, loss curves) is owned by it and lives until
 * hs_profile_destroy. This module knows nothing of the simulator. */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_rng.h"
#include "base/hs_status.h"

/* The "format" string this loader reads. */
#define HS_PROFILE_FORMAT "hetsim-profile/1"
/* Environment variable: colon-separated folders searched for <name>.json. */
#define HS_PROFILE_PATH_ENV "HETSIM_PROFILE_PATH"

/* One task of a profile (open, read-only; owned by the profile). */
typedef struct hs_task_profile {
  const char *task;                   /* "mnist", "era5", "imdb", ... */
  double tau_s, tau_cv, busy_w, overhead_s;
  /* tau_s > 0: mean training seconds per sample; tau_cv in [0, 10]: coefficient
   * of variation of a round's samples*tau_s term; busy_w > 0: whole-device
   * watts while training; overhead_s >= 0: fixed seconds per round. */
  uint32_t batch_size, threads;       /* 0 when absent */
  bool energy_measured;               /* busy_w came from a sensor (default false) */
  size_t loss_points;                 /* 0 when absent */
  const double *loss_samples, *loss_values; /* loss after loss_samples[i] samples seen;
                                               samples strictly ascending, >= 0 */
} hs_task_profile;
typedef struct hs_profile hs_profile; /* opaque */

/* Optional thermal block of a profile (open, read-only; owned by the profile).
 * A first-order RC: dT/dt = (ambient_c + r_c_per_w * P - T) / (r_c_per_w *
 * c_j_per_c), P the whole-device power being dissipated. Frequency levels
 * 0..nlevels-1: level k runs at speed[k] (x the profile's speed; speed[0] = 1,
 * non-increasing) drawing busy_factor[k] x the task's busy_w while training
 * (busy_factor[0] = 1). From level k-1 the board steps down to level k when T
 * reaches trip_c[k]; from level k it steps back up to k-1 when T falls to
 * recover_c[k] (< trip_c[k]); trip_c and recover_c strictly ascend with k
 * (index 0 unused, NAN). Idle and communication power do not depend on the
 * level. */
typedef struct hs_thermal_profile {
  double ambient_c, r_c_per_w, c_j_per_c;
  size_t nlevels;                     /* >= 1 */
  const double *speed, *busy_factor, *trip_c, *recover_c;
  size_t nsources;
  const char *const *sources;         /* provenance of the figures, as written */
} hs_thermal_profile;

/* Read, parse and validate a profile file. NULL on error (err names the file,
 * the JSON path and the reason). The caller owns the result. */
hs_profile *hs_profile_load(const char *path, hs_error *err);
/* Same from NUL-terminated JSON text; `origin` names it in messages (e.g. the
 * path the board harness is about to write). */
hs_profile *hs_profile_parse(const char *json_text, const char *origin, hs_error *err);
void hs_profile_destroy(hs_profile *p); /* NULL is fine */

const char *hs_profile_name(const hs_profile *p);  /* id scenarios use: [a-z0-9._-]+ */
const char *hs_profile_board(const hs_profile *p); /* human-readable board */
const char *hs_profile_arch(const hs_profile *p);  /* uname -m: aarch64, riscv64, x86_64, ... */
const char *hs_profile_cpu(const hs_profile *p);   /* "cpu" */
const char *hs_profile_origin(const hs_profile *p); /* the path (or origin) it was loaded from */
/* "estimated" | "measured" | "mixed" | "hypothetical" (the top-level
 * provenance; hypothetical: a made-up board for a what-if scenario). */
const char *hs_profile_provenance_kind(const hs_profile *p);
/* Provenance kind in force for one task: its own when it has one, else the
 * profile's. NULL when the profile does not carry `task`. */
const char *hs_profile_task_provenance_kind(const hs_profile *p, const char *task);
double hs_profile_idle_w(const hs_profile *p); /* > 0: on, waiting */
double hs_profile_comm_w(const hs_profile *p); /* > 0: sending or receiving */
/* Optional "gpu" block: HBM bytes and optimiser seconds per local parameter
 * (0 when the profile has no such block). */
double hs_profile_hbm_bytes(const hs_profile *p);
double hs_profile_opt_s_per_param(const hs_profile *p);
size_t hs_profile_task_count(const hs_profile *p);
/* Tasks in file order; i < hs_profile_task_count(p). */
const hs_task_profile *hs_profile_task_at(const hs_profile *p, size_t i);
const hs_task_profile *hs_profile_task(const hs_profile *p, const char *task); /* NULL when absent */
/* The thermal block; NULL when the profile has none. */
const hs_thermal_profile *hs_profile_thermal(const hs_profile *p);

/* Resolve a scenario's "profile" value to a file path (heap string, hs_free).
 * A value containing '/' or ending in ".json" is a path; a relative one is taken
 * relative to base_dir (when base_dir is non-NULL; else to the working folder),
 * and it must exist. Otherwise the value is a name ([a-z0-9._-]+, not starting
 * with '.', so it can never climb out of a folder) and "<name>.json" is searched
 * in: each folder of $HETSIM_PROFILE_PATH (colon-separated, left to right, empty
 * entries skipped), then the shipped profiles (<bin>/../share/hetsim/profiles, hs_share_path).
 * The first existing file wins. HS_ENOENT with a message listing where it looked
 * when not found; HS_EINVAL for a malformed name. The caller prefixes its file
 * and JSON path. */
char *hs_profile_find(const char *name, const char *base_dir, hs_error *err);
/* hs_profile_find, then hs_profile_load. */
hs_profile *hs_profile_open(const char *name, const char *base_dir, hs_error *err);
/* The folder of shipped profiles, beside the program (static string). */
const char *hs_profile_builtin_dir(void);

/* Compute time of one round of `samples` samples at speed factor 1:
 * overhead_s + samples * tau_s * f, where f is lognormal with mean 1 and
 * coefficient of variation tau_cv, drawn from r (always exactly one draw from r,
 * even when tau_cv == 0, so streams stay aligned).
 * Exactly: u = ((hs_rng_next(r) >> 11) + 0.5) * 2^-53, always in (0, 1);
 * z = gsl_cdf_ugaussian_Pinv(u); s2 = log1p(tau_cv^2);
 * f = exp(sqrt(s2) * z - s2 / 2). With tau_cv == 0, f == 1 exactly. The mean
 * is overhead_s + samples * tau_s and the time is never negative. Speed traces
 * are applied by the caller on top of this (hs_speed_trace_finish). */
double hs_task_compute_time(const hs_task_profile *t, uint64_t samples, hs_rng *r);

/* The same draw for a caller that samples many devices of one task (a
 * population: the same tau_cv for all): the parts of f that depend on tau_cv
 * alone, computed once (hs_task_noise_init: sigma = sqrt(s2), half_s2 =
 * 0.5 * s2, the operands the formula above computes per draw), then
 * hs_task_compute_time_with(n, tau_s, overhead_s, samples, r) returns the
 * bits hs_task_compute_time returns for a task with that tau_cv, tau_s and
 * overhead_s, from the same one draw of r. */
typedef struct hs_task_noise {
  double sigma, half_s2; /* 0 and 0 when tau_cv == 0 (f == 1, no exp) */
  bool lognormal;        /* tau_cv > 0 */
} hs_task_noise;
void hs_task_noise_init(hs_task_noise *n, double tau_cv);
double hs_task_compute_time_with(const hs_task_noise *n, double tau_s, double overhead_s,
                                 uint64_t samples, hs_rng *r);

#endif
