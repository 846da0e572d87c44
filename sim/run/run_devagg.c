/* run_devagg.c: device_profiles.csv, the per-round, per-profile summary that
 * replaces devices.csv above a device count (hs_run_opts.devices, issue 13):
 * at 10^6 devices one row per device and round is 60 MB a round and most of a
 * run's time, while a user reads distributions. A row per (round, profile):
 * device count, samples and energy summed, and the nearest-rank percentiles
 * p0 p50 p90 p99 p100 of compute, comm and wait seconds (hs_report.h); with
 * report.meter_scopes, the energy under the other meter scopes summed too.
 *
 * Invariants: devices are grouped by profile name (profiles in order of first
 * appearance in the scenario's device list); within a profile the values sit
 * in device order, and the sums are accumulated in device order, so the sums
 * equal devices.csv's figures added in file order (tests/unit/test_run.c).
 *
 * Complexity: O(devices) per round: the percentiles by three quickselects
 * (hs_select: p99 over the group, p90 left of it, p50 left of that; min and max by a
 * scan), not a sort; the order they leave in v[] is never read (every
 * device's slot is written again before the next flush). Memory 3 doubles
 * + two u32 per device, only in this mode.
 * Rejected: a t-digest or histogram (approximate; these are exact), sorting
 * (n log n per round for five ranks). */
#include <stddef.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "base/hs_select.h"
#include "run_devagg.h"
#include "sim_run.h"

struct sim_devagg {
  size_t nprof;
  const char **name; /* per profile */
  size_t *off, *cnt; /* per profile: first slot, devices */
  uint64_t *samples; /* per profile, this round */
  double *energy;
  double *base, *train; /* per profile, this round: meter scopes (report.meter_scopes) */
  uint32_t *slot;    /* per device: its slot in v[] */
  uint32_t *prof;    /* per device: its profile */
  size_t *fill;      /* per profile, while adding */
  double *v[3];      /* compute, comm, wait by slot */
};

sim_devagg *sim_devagg_create(const sim_run *r) {
  const hs_scenario *sc = r->sc;
  sim_devagg *a = hs_calloc(1, sizeof *a);
  size_t nspec = sc->ndevices;
  a->name = hs_calloc(nspec + 1, sizeof *a->name);
  size_t *prof_of_spec = hs_calloc(nspec + 1, sizeof *prof_of_spec);
  for (size_t s = 0; s < nspec; s++) {
    const char *nm = hs_profile_name(sc->devices[s].profile);
    size_t p = 0;
    while (p < a->nprof && strcmp(a->name[p], nm)) p++;
    if (p == a->nprof) a->name[a->nprof++] = nm;
    prof_of_spec[s] = p;
  }
  a->off = hs_calloc(a->nprof + 1, sizeof *a->off);
  a->cnt = hs_calloc(a->nprof + 1, sizeof *a->cnt);
  a->fill = hs_calloc(a->nprof + 1, sizeof *a->fill);
  a->samples = hs_calloc(a->nprof + 1, sizeof *a->samples);
  a->energy = hs_calloc(a->nprof + 1, sizeof *a->energy);
  a->base = hs_calloc(a->nprof + 1, sizeof *a->base);
  a->train = hs_calloc(a->nprof + 1, sizeof *a->train);
  for (size_t i = 0; i < r->ndev; i++) a->cnt[prof_of_spec[sim_dev_spec(r, i)]]++;
  for (size_t p = 1; p < a->nprof; p++) a->off[p] = a->off[p - 1] + a->cnt[p - 1];
  a->slot = hs_calloc(r->ndev + 1, sizeof *a->slot);
  a->prof = hs_calloc(r->ndev + 1, sizeof *a->prof);
  for (size_t i = 0; i < r->ndev; i++) {
    size_t p = prof_of_spec[sim_dev_spec(r, i)];
    a->prof[i] = (uint32_t)p;
    a->slot[i] = (uint32_t)(a->off[p] + a->fill[p]++);
  }
  for (size_t w = 0; w < 3; w++) a->v[w] = hs_calloc(r->ndev + 1, sizeof *a->v[w]);
  hs_free(prof_of_spec);
  return a;
}

void sim_devagg_destroy(sim_devagg *a) {
  if (!a) return;
  for (size_t w = 0; w < 3; w++) hs_free(a->v[w]);
  hs_free(a->slot);
  hs_free(a->prof);
  hs_free(a->name);
  hs_free(a->off);
  hs_free(a->cnt);
  hs_free(a->fill);
  hs_free(a->samples);
  hs_free(a->energy);
  hs_free(a->base);
  hs_free(a->train);
  hs_free(a);
}

void sim_devagg_add(sim_devagg *a, size_t i, uint64_t samples, double compute_s, double comm_s,
                    double wait_s, double energy_j) {
  uint32_t s = a->slot[i], p = a->prof[i];
  a->v[0][s] = compute_s;
  a->v[1][s] = comm_s;
  a->v[2][s] = wait_s;
  a->samples[p] += samples;
  a->energy[p] += energy_j;
}

void sim_devagg_scopes(sim_devagg *a, size_t i, double idle_baseline_j, double training_j) {
  uint32_t p = a->prof[i];
  a->base[p] += idle_baseline_j;
  a->train[p] += training_j;
}

/* Nearest-rank percentiles p0 p50 p90 p99 p100 of x[0..n), n >= 1 (reorders x). */
static void percentiles(double *x, size_t n, double out[HS_REPORT_NPCT]) {
  double mn = x[0], mx = x[0];
  for (size_t i = 1; i < n; i++) {
    if (x[i] < mn) mn = x[i];
    if (x[i] > mx) mx = x[i];
  }
  size_t k99 = (99 * n + 99) / 100 - 1, k90 = (90 * n + 99) / 100 - 1, k50 = (50 * n + 99) / 100 - 1;
  /* each selection leaves the ranks below k left of it (hs_select.h), so the
   * next one looks only there */
  hs_select(x, n, k99);
  hs_select(x, k99 + 1, k90);
  hs_select(x, k90 + 1, k50);
  out[0] = mn;
  out[1] = x[k50];
  out[2] = x[k90];
  out[3] = x[k99];
  out[4] = mx;
}

void sim_devagg_flush(sim_devagg *a, uint32_t round, hs_report *rep) {
  for (size_t p = 0; p < a->nprof; p++) {
    if (a->cnt[p] == 0) continue;
    hs_profile_row row = {round,       a->name[p], a->cnt[p], a->samples[p], {0}, {0}, {0},
                          a->energy[p], a->base[p], a->energy[p] - a->base[p], a->train[p]};
    double *out[3] = {row.compute_s, row.comm_s, row.wait_s};
    for (size_t w = 0; w < 3; w++) percentiles(a->v[w] + a->off[p], a->cnt[p], out[w]);
    hs_report_profile(rep, &row);
    a->samples[p] = 0;
    a->energy[p] = a->base[p] = a->train[p] = 0;
  }
}
