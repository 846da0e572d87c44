/* run_devagg.h: device_profiles.csv (run_devagg.c), private to the run room:
 * create after the devices are expanded; add each device's round figures in
 * device order, then flush the round. Only run.c calls it, so it is not part
 * of the run as a regime sees it (iface/sim_run.h). */
#ifndef SIM_RUN_DEVAGG_H
#define SIM_RUN_DEVAGG_H

#include <stddef.h>
#include <stdint.h>

#include "sim_run.h"

sim_devagg *sim_devagg_create(const sim_run *r);
void sim_devagg_add(sim_devagg *a, size_t i, uint64_t samples, double compute_s, double comm_s,
                    double wait_s, double energy_j);
/* With report.meter_scopes: device i's idle baseline and training-only energy
 * of the round (the rest of its meter.csv row), summed per profile. */
void sim_devagg_scopes(sim_devagg *a, size_t i, double idle_baseline_j, double training_j);
void sim_devagg_flush(sim_devagg *a, uint32_t round, hs_report *rep);
void sim_devagg_destroy(sim_devagg *a);

#endif
