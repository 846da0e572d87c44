/* [sim/study/mpi/include/sim -> hetsim::sweep_mpi; not installed]
 * hs_optimize_mpi.h: `hetsim-mpi optimize`: batches of points evaluated
 * across MPI ranks (issue 17). Built into hetsim::sweep_mpi, only when CMake
 * finds MPI.
 *
 * Rank 0 runs the search (hs_opt_run in batch mode, hs_optimize.h) and calls
 * hs_opt_mpi_batch for each batch; every other rank sits in hs_opt_mpi_serve
 * until rank 0 calls hs_opt_mpi_stop. A batch is broadcast whole; point k
 * runs on rank k % size, on that rank's `jobs` threads; the results (nout
 * doubles a point, exact: the bits travel) are gathered back to rank 0. An
 * evaluation depends only on its point's text, never on the rank, so results
 * are the same bytes as a single process (same binary and libm on every node).
 * Only the thread that called MPI_Init_thread makes MPI calls (FUNNELED). */
#ifndef HS_OPTIMIZE_MPI_H
#define HS_OPTIMIZE_MPI_H

#include <stddef.h>

#include "base/hs_status.h"

/* MPI_Init_thread asking for MPI_THREAD_FUNNELED (call once, from main;
 * hs_sweep_mpi_fini finalises). */
void hs_opt_mpi_init(int *argc, char ***argv);

/* Root's v on every rank (collective; root: a rank number). */
int hs_opt_mpi_bcast_from(int v, int root);

/* Evaluate one point (text[0..nvars)) into out[0..nout); called on the
 * evaluating rank's threads, concurrently. */
typedef hs_status (*hs_opt_mpi_fn)(const char *const *text, double *out, void *ud, hs_error *err);

typedef struct hs_opt_mpi {
  size_t nvars, nout;
  unsigned jobs; /* threads per rank */
  hs_opt_mpi_fn eval;
  void *ud;
} hs_opt_mpi;

/* Rank 0, collective with hs_opt_mpi_serve: text[i * nvars + v] is value v
 * of point i (n points); out[i * nout + m] receives its results. On failure
 * (every point is still tried) *failed is the lowest failing point and *err
 * its evaluator's error. */
hs_status hs_opt_mpi_batch(const hs_opt_mpi *m, const char *const *text, size_t n, double *out,
                           size_t *failed, hs_error *err);
/* Rank 0: release the other ranks from hs_opt_mpi_serve. */
void hs_opt_mpi_stop(void);
/* Ranks > 0: evaluate their share of every batch until rank 0 stops. */
void hs_opt_mpi_serve(const hs_opt_mpi *m);

#endif
