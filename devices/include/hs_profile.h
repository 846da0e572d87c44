/* hs_profile.h: device profiles (CONTRACT SKETCH: the devices engineer implements
 * exactly this API and may extend it; the format is in devices/profiles/README.md).
 * Arguments are the ones the simulator and the board harness code against. */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hs_rng.h"
#include "hs_status.h"

typedef struct hs_task_profile {
  const char *task;
  double tau_s, tau_cv, busy_w, overhead_s;
  uint32_t batch_size, threads;       /* 0 when absent */
  bool energy_measured;
  size_t loss_points;                 /* 0 when absent */
  const double *loss_samples, *loss_values;
} hs_task_profile;
typedef struct hs_profile hs_profile;                         /* opaque */
hs_profile *hs_profile_load(const char *path, hs_error *err); /* reads, parses, validates */
hs_profile *hs_profile_parse(const char *json_text, const char *origin, hs_error *err); /* origin names the file in errors */
void hs_profile_destroy(hs_profile *p);
const char *hs_profile_name(const hs_profile *p);
const char *hs_profile_board(const hs_profile *p);
const char *hs_profile_arch(const hs_profile *p);
const char *hs_profile_provenance_kind(const hs_profile *p);  /* "estimated" | "measured" | "mixed" */
double hs_profile_idle_w(const hs_profile *p);
double hs_profile_comm_w(const hs_profile *p);
size_t hs_profile_task_count(const hs_profile *p);
const hs_task_profile *hs_profile_task_at(const hs_profile *p, size_t i);
const hs_task_profile *hs_profile_task(const hs_profile *p, const char *task); /* NULL when absent */
/* Resolve a scenario's "profile" value to a file path (heap string, hs_free).
 * A value containing '/' or ending in ".json" is a path relative to base_dir.
 * Otherwise "<name>.json" is searched in: each folder of $HETSIM_PROFILE_PATH
 * (colon-separated), then the compiled-in HS_PROFILE_DIR (= <source>/devices/profiles).
 * HS_ENOENT with a message listing where it looked when not found. */
char *hs_profile_find(const char *name, const char *base_dir, hs_error *err);
/* Compute time of one round of `samples` samples at speed factor 1:
 * overhead_s + samples * tau_s * f, where f is lognormal with mean 1 and
 * coefficient of variation tau_cv, drawn from r (always exactly one draw from r,
 * even when tau_cv == 0, so streams stay aligned). */
double hs_task_compute_time(const hs_task_profile *t, uint64_t samples, hs_rng *r);

#endif
