/* optimize_ranks.h (private to sim/study): batches of optimiser points
 * evaluated across the ranks of a transport (hs_transport.h), for the search
 * of optimize_search.c.
 *
 * Rank 0 runs the search (hs_opt_run in batch mode, hs_optimize.h) and calls
 * opt_ranks_batch for each batch; every other rank sits in opt_ranks_serve
 * until rank 0 calls opt_ranks_stop. A batch is broadcast whole; point k
 * runs on rank k % size, on that rank's `jobs` threads; the results (nout
 * doubles a point, exact: the bits travel) are gathered back to rank 0. An
 * evaluation depends only on its point's text, never on the rank, so results
 * are the same bytes as a single process. */
#ifndef HS_OPTIMIZE_RANKS_H
#define HS_OPTIMIZE_RANKS_H

#include <stddef.h>

#include "base/hs_status.h"
#include "sim/hs_transport.h"

/* Evaluate one point (text[0..nvars)) into out[0..nout); called on the
 * evaluating rank's threads, concurrently. */
typedef hs_status (*opt_ranks_fn)(const char *const *text, double *out, void *ud, hs_error *err);

typedef struct opt_ranks {
  const hs_transport *t;
  size_t nvars, nout;
  unsigned jobs; /* threads per rank */
  opt_ranks_fn eval;
  void *ud;
} opt_ranks;

/* Rank 0, collective with opt_ranks_serve: text[i * nvars + v] is value v
 * of point i (n points); out[i * nout + m] receives its results. On failure
 * (every point is still tried) *failed is the lowest failing point and *err
 * its evaluator's error. */
hs_status opt_ranks_batch(const opt_ranks *m, const char *const *text, size_t n, double *out,
                          size_t *failed, hs_error *err);
/* Rank 0: release the other ranks from opt_ranks_serve. */
void opt_ranks_stop(const opt_ranks *m);
/* Ranks > 0: evaluate their share of every batch until rank 0 stops. */
void opt_ranks_serve(const opt_ranks *m);

#endif
