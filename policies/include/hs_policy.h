/* hs_policy.h: the controller library. Telemetry in, allocation out.
 *
 * This is the code a training script on a real board links (libc + GSL only).
 * The simulator drives it through exactly this API.
 *
 * (Contract sketch written first; the controller work fills in and documents
 * the rules: EMA, median by selection, largest remainder with floor, deadband,
 * groups, presets, baselines.) */
#ifndef HS_POLICY_H
#define HS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hs_status.h"

#define HS_POLICY_NAME_MAX 32

/* Everything a policy can be configured with. Defaults come from
 * hs_policy_config_init; keys are set by name with hs_policy_config_set so that
 * scenario files, --set options and telemetry replay share one vocabulary. */
typedef struct hs_policy_config {
  char kind[HS_POLICY_NAME_MAX]; /* equal | static | adaptive | time-only | low-energy |
                                    balanced | energy-only | oort | ema-batch */
  double w_e;                    /* energy weight in [0,1]; w_t = 1 - w_e */
  double ema;                    /* smoothing factor in [0,1): x <- ema*x + (1-ema)*obs */
  double deadband;               /* >= 0: keep the split when max relative change <= this */
  uint64_t min_samples;          /* per-participant floor */
  /* oort (FedScale-style participant selection) */
  uint32_t oort_k;               /* participants per round (0: half, at least 1) */
  double oort_alpha;             /* straggler penalty exponent */
  double oort_explore;           /* initial exploration factor in [0,1] */
  double oort_explore_decay;     /* multiplicative decay per round */
  double oort_explore_min;       /* floor of the exploration factor */
  double oort_pacer_step;        /* seconds T_pref moves when utility stalls */
  uint32_t oort_pacer_window;    /* rounds per pacer decision */
  /* ema-batch (DDP step-level throughput batch sizing) */
  double ema_batch_beta;         /* EMA factor on per-rank throughput */
  uint64_t seed;                 /* for randomised policies */
} hs_policy_config;

/* Defaults for `kind`; HS_ENOENT for an unknown policy name. */
hs_status hs_policy_config_init(hs_policy_config *cfg, const char *kind, hs_error *err);
/* Set one option by key ("w_e", "ema", "deadband", "min_samples", "oort.k", ...)
 * from its text value; errors name the key and the reason. */
hs_status hs_policy_config_set(hs_policy_config *cfg, const char *key, const char *value,
                               hs_error *err);

/* One participant's report for one round: what a meter on that board sees. */
typedef struct hs_telemetry {
  double time_s;   /* training time of the round */
  double energy_j; /* training energy of the round */
  int64_t samples; /* samples trained in the round */
} hs_telemetry;

typedef struct hs_controller hs_controller;

/* n participants; groups[i] is participant i's group (silo) or NULL for one
 * group; budget is the samples per round (per the whole population). */
hs_controller *hs_controller_create(const hs_policy_config *cfg, size_t n,
                                    const uint32_t *groups, uint64_t budget, hs_error *err);
void hs_controller_destroy(hs_controller *c);

/* Current allocation (n counts, owned by the controller). */
const uint64_t *hs_controller_allocation(const hs_controller *c);
/* Feed one round of telemetry (n records); on error the allocation is unchanged. */
hs_status hs_controller_update(hs_controller *c, const hs_telemetry *t, size_t n, hs_error *err);
/* True when the last successful update changed the allocation. */
bool hs_controller_reallocated(const hs_controller *c);

#endif
