/* run_describe.h: summary.json's self-description of a run and the guard
 * against replacing another run's folder (run_describe.c). Internal to sim. */
#ifndef SIM_RUN_DESCRIBE_H
#define SIM_RUN_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "base/hs_status.h"

#define SIM_DESC_MAX 8

/* Members for summary.json: key (static) and its value as one line of JSON
 * (heap, freed by sim_description_fini), in the order they are written. */
typedef struct sim_description {
  const char *key[SIM_DESC_MAX];
  char *json[SIM_DESC_MAX];
  size_t n;
  uint64_t identity; /* the run_identity member, as a number */
} sim_description;

void sim_run_describe(const hs_scenario *sc, const hs_run_opts *o, sim_description *d);
void sim_description_fini(sim_description *d);

/* HS_OK when dir does not hold another run (no summary.json naming another
 * identity, no run files without one); HS_ESTATE with one line otherwise. */
hs_status sim_run_check_folder(const char *dir, uint64_t identity, hs_error *err);

#endif
