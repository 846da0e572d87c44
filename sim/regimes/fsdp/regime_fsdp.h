/* regime_fsdp.h: what regime_fsdp.c (the run) and regime_fsdp_opts.c (the
 * options and descriptors) of the sharded regimes share. */
#ifndef SIM_REGIME_FSDP_H
#define SIM_REGIME_FSDP_H

#include <stdint.h>

#include "fsdp_cost.h"
#include "sim_regime.h"

typedef enum fsdp_kind { FSDP_FSDP, FSDP_HSDP, FSDP_FL_FSDP, FSDP_FL_HSDP } fsdp_kind;

typedef struct fsdp_opts {
  uint32_t shard;           /* S (hsdp, fl-hsdp) */
  uint32_t group;           /* G (fl-*) */
  uint32_t period;          /* H (fl-*) */
  uint32_t final_average;   /* fl-*: average after the last step too */
  uint32_t replica_overlap; /* hsdp, fl-hsdp */
  uint32_t fwd_prefetch;
  char *bwd_prefetch; /* "pre" (default) | "post" | "none" */
  uint32_t barriers;
  double jitter;
  double other_s;
  uint32_t micro_batch; /* samples per GPU per step (0: from the allocation) */
  double steps_to_target;
  uint32_t steps_per_round;
} fsdp_opts;

/* The kind of a descriptor of this family (r->regime). */
fsdp_kind fsdp_kind_of(const sim_regime *rg);

/* regime_fsdp.c */
hs_status fsdp_setup(sim_run *r, hs_error *err);
void fsdp_start_round(sim_run *r);
void fsdp_telemetry(sim_run *r, size_t i, sim_meter *m);
void fsdp_teardown(sim_run *r);
size_t fsdp_summary_fields(sim_run *r, hs_report_field *out, size_t cap);

#endif
