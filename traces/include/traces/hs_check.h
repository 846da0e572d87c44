/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_check.h: a simulation of a real run held against that run's records
 * (`hetsim check`, sim/doc/check.md): the arithmetic of the comparison, the
 * verdict against the tolerances, and its two files (check.csv from a column
 * table, check.json), written all-or-nothing through hs_outfile.
 *
 * What is compared, for the boards of the records (hs_cluster_run.h), per
 * round and device, per round, per device and in total:
 *   makespan  round open to the next round's open: measured round_s +
 *             server_s (server.csv), in total run.json's makespan_s;
 *             predicted: the simulated round's end - start, the run's
 *             makespan (round and total levels only)
 *   compute   measured train_s; predicted the device's busy seconds
 *   comm      measured download_s + upload_s; predicted its model exchanges
 *   wait      measured wait_s + server_s (its upload to the next open: the
 *             simulated device idles through the server's aggregation too);
 *             predicted its idle seconds while on
 *   energy    the training energy, only where the records say `measured`
 *             (and `stated` rows too when asked; the label says which)
 * setup_s, pack_s and start_s (the runtime's own steps, which a simulated
 * round does not have) are in no figure but the makespan; they are kept as
 * other_meas_s, so that per device compute + comm + wait + other = the
 * round's makespan on both sides (predicted other is 0).
 * A round's or the total's compute, comm, wait and energy are sums over its
 * devices (device-seconds, joules). error = predicted / measured - 1, signed;
 * NAN when measured is 0 and predicted is not (0 when both are), or when the
 * figure is not compared. The worst device of a figure is the one with the
 * largest |error| (the first of equals). */
#ifndef HS_CHECK_H
#define HS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_status.h"
#include "traces/hs_cluster_run.h"

enum {
  HS_CHECK_MAKESPAN,
  HS_CHECK_COMPUTE,
  HS_CHECK_COMM,
  HS_CHECK_WAIT,
  HS_CHECK_ENERGY,
  HS_CHECK_NFIG
};
/* "makespan", "compute", "comm", "wait", "energy". */
extern const char *const hs_check_fig_names[HS_CHECK_NFIG];

/* error = pred / meas - 1 (see above). */
double hs_check_error(double pred, double meas);

typedef struct hs_check_fig {
  double pred, meas, err; /* NAN, NAN, NAN: not compared at this level */
  size_t worst;           /* board with the largest |err| below this level; SIZE_MAX: none */
  double worst_err;
} hs_check_fig;

/* What the energy figure of a level compares. */
typedef enum hs_check_energy {
  HS_CHECK_ENERGY_OFF = 0, /* nothing (no measured rows, or none asked) */
  HS_CHECK_ENERGY_MEASURED,
  HS_CHECK_ENERGY_STATED, /* the profile's busy_w x train_s: not a measurement */
  HS_CHECK_ENERGY_MIXED   /* a sum over measured and stated rows */
} hs_check_energy;
/* "", "measured", "stated", "measured+stated". */
const char *hs_check_energy_label(hs_check_energy e);

typedef struct hs_check_cell {
  uint64_t samples;
  hs_check_fig fig[HS_CHECK_NFIG];
  double other_meas_s; /* start_s + setup_s + pack_s (summed at the upper levels) */
  hs_check_energy energy;
} hs_check_cell;

/* The prediction, aligned with the records' boards (run->boards). */
typedef struct hs_check_input {
  const double *compute_s, *comm_s, *wait_s, *train_j; /* rounds x nboards, [r * nboards + b] */
  const double *round_s;                               /* per round: end - start */
  double makespan_s;
  bool stated_energy; /* compare `stated` rows' energy too (labelled stated) */
} hs_check_input;

typedef struct hs_check {
  const hs_cluster_run *run; /* borrowed */
  hs_check_cell *cell;       /* rounds x nboards */
  hs_check_cell *round;      /* per round, its devices summed */
  hs_check_cell *board;      /* per board, its rounds summed */
  hs_check_cell total;
  bool stated_energy;
} hs_check;

/* Compares; run must outlive the result. Free with hs_check_destroy. */
hs_check *hs_check_create(const hs_cluster_run *run, const hs_check_input *in);
void hs_check_destroy(hs_check *c);

/* The verdict: tolerance < 0 means not given. Fails when the total
 * makespan's |error| > tolerance, or (tolerance_round >= 0) some round's
 * makespan |error| > tolerance_round, or the error that is judged is NAN.
 * line: one line saying which figure broke it, or that all held. */
typedef struct hs_check_verdict {
  bool judged, pass;
  double tolerance, tolerance_round;
  char line[320];
} hs_check_verdict;
void hs_check_judge(const hs_check *c, double tolerance, double tolerance_round,
                    hs_check_verdict *v);

/* check.csv: one row per round and device, a row per round (device empty),
 * one per device over all rounds (round "all") and the total (round "all",
 * device empty); columns from hs_check_table(). */
const struct hs_csv_table *hs_check_table(void);
hs_status hs_check_write_csv(const hs_check *c, const char *path, hs_error *err);

/* check.json: what was checked (scenario, run folder, seed, noise), the
 * tolerances and the verdict, then total, rounds[] and devices[], each
 * figure as {"predicted", "measured", "error", "worst_device",
 * "worst_error"} (null where not compared). */
typedef struct hs_check_meta {
  const char *scenario, *run_dir;
  uint64_t seed;
  bool noise;
} hs_check_meta;
hs_status hs_check_write_json(const hs_check *c, const hs_check_meta *m, const hs_check_verdict *v,
                              const char *path, hs_error *err);

#endif
