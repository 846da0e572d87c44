/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_cluster_run.h: the records of a real cluster run, as the runtime of
 * devices/probe (`hetsim-probe serve`, `board`, `box`) writes them in its
 * --out folder (devices/probe/README.md, "Records"): the one reader of that
 * format on the simulator's side (`hetsim check`, sim/doc/check.md).
 *
 * Files read: rounds.csv (one row per round and board), allocations.csv
 * (round,device,samples: must agree with rounds.csv's samples), server.csv
 * (one row per round: round_s, server_s) and run.json (rounds, makespan_s).
 * Columns are found by header name; extra columns are allowed.
 *
 * Rules (each broken one is one message "<dir>/<file>: line N: <field>:
 * <reason>", or "<dir>/<file>: round R: ..." for what is missing):
 * - rounds are numbered 0, 1, ... in blocks, none skipped;
 * - round 0's rows name the boards; every later round names each of them
 *   exactly once, in any order (a name round 0 lacks is refused with the
 *   nearest one);
 * - times are finite numbers >= 0; samples whole numbers; energy is
 *   measured, stated or none;
 * - server.csv has one row per round, run.json's rounds is the rounds'
 *   count and its makespan_s a finite number >= 0.
 * Statuses: HS_ENOENT for a missing file, HS_EIO/HS_EPERM when one cannot be
 * read, HS_EPARSE/HS_EINVAL/HS_EMISSING for bad content. O(rows x boards). */
#ifndef HS_CLUSTER_RUN_H
#define HS_CLUSTER_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_status.h"

typedef enum hs_energy_source {
  HS_ENERGY_NONE = 0, /* no profile: 0 J */
  HS_ENERGY_STATED,   /* the profile's busy_w x train_s: not a measurement */
  HS_ENERGY_MEASURED  /* a power sensor over the training window */
} hs_energy_source;

/* "none", "stated", "measured" (static). */
const char *hs_energy_source_name(hs_energy_source s);

/* One board's round, from its rounds.csv row (seconds, joules). */
typedef struct hs_cluster_row {
  uint64_t samples;
  double start_s, download_s, setup_s, train_s, pack_s, upload_s, wait_s, round_s;
  double energy_j;
  hs_energy_source energy;
  size_t line; /* its line in rounds.csv, for messages */
} hs_cluster_row;

typedef struct hs_cluster_run {
  char *dir;
  size_t nboards;
  char **boards; /* names, in round 0's order; owned */
  uint32_t rounds;
  hs_cluster_row *rows; /* rounds x nboards: rows[r * nboards + b] */
  double *round_s;      /* per round (server.csv): round open to close */
  double *server_s;     /* per round (server.csv): close to the next open */
  double makespan_s;    /* run.json: first open to the end of the last server work */
} hs_cluster_run;

/* Reads the records in dir. NULL with err set (the status says which kind
 * of failure) when a file is missing, unreadable or breaks a rule above. */
hs_cluster_run *hs_cluster_run_read(const char *dir, hs_error *err);
void hs_cluster_run_destroy(hs_cluster_run *c); /* NULL is fine */

/* Board b's row of round r. */
static inline const hs_cluster_row *hs_cluster_run_row(const hs_cluster_run *c, uint32_t r,
                                                       size_t b) {
  return &c->rows[(size_t)r * c->nboards + b];
}

#endif
