/* sweep_ranks.c: a sweep's rows across the ranks of a transport
 * (hs_sweep_run_ranks, hs_sweep.h; hs_transport.h): a broadcast of the rows
 * to run, then waves of gathers. One rank runs hs_sweep_run_rows directly
 * (no wave to wait for).
 *
 * A wave is size * 4 * jobs consecutive rows of the to-do list; position k of
 * the wave runs on rank k % size (round-robin, so the ranks get neighbouring
 * rows of similar cost), on that rank's `jobs` threads. Every rank then sends
 * a fixed-size block of doubles (per slot: row, ok flag, the sweep metrics
 * of the table (sim/run/metrics.c); plus one failure flag) to rank 0, which
 * walks the wave in position order and passes each result to the callback,
 * which appends it; then rank 0 broadcasts whether to go on. Fixed-size
 * blocks keep this one gather (no counts to exchange first); the row index
 * travels as a double, exact below 2^53.
 *
 * Rejected: a master-worker loop with point-to-point messages (balances
 * better when rows differ wildly in cost, but is a scheduler to maintain, and
 * rank 0 would sit idle); one gather at the end (a killed job would lose every
 * row, where waves lose at most the wave in flight). Cost: a wave waits for
 * its slowest rank; 4 * jobs rows per rank per wave keep that wait small. */
#include <stdint.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "sim/hs_sweep.h"
#include "sim/hs_transport.h"

#define REC (2 + HS_SWEEP_NMETRICS) /* row, ok, metrics */
#define CHUNK ((size_t)1 << 24)     /* rows broadcast in pieces */

typedef struct slots {
  double *rec; /* this rank's block */
} slots;

static bool store(size_t j, const hs_sweep_result *r, void *ud) {
  slots *s = ud;
  double *d = &s->rec[j * REC];
  d[0] = (double)r->row;
  d[1] = 1;
  memcpy(&d[2], r->m, sizeof r->m);
  return true;
}

hs_status hs_sweep_run_ranks(const hs_transport *t, const hs_sweep *sw, const size_t *rows,
                             size_t n, unsigned jobs, hs_sweep_done_fn fn, void *userdata,
                             hs_error *err) {
  int rank = t->rank(), size = t->size();
  if (size == 1) return hs_sweep_run_rows(sw, rows, n, jobs, fn, userdata, err);
  uint64_t n64 = n;
  t->bcast(&n64, sizeof n64, 0);
  uint64_t *all_rows = hs_calloc(n64 ? (size_t)n64 : 1, sizeof *all_rows);
  if (rank == 0)
    for (size_t i = 0; i < n; i++) all_rows[i] = rows[i];
  for (uint64_t off = 0; off < n64; off += CHUNK) {
    uint64_t len = n64 - off < CHUNK ? n64 - off : CHUNK;
    t->bcast(all_rows + off, (size_t)len * sizeof *all_rows, 0);
  }
  size_t per = 4 * (size_t)jobs, wave = per * (size_t)size, block = per * REC + 1;
  double *mine = hs_malloc(block * sizeof *mine);
  double *gathered = rank == 0 ? hs_malloc(block * (size_t)size * sizeof *gathered) : NULL;
  size_t *my_rows = hs_malloc(per * sizeof *my_rows);
  hs_status st = HS_OK;
  hs_error my_err = {0};
  bool i_failed = false;
  for (uint64_t w = 0; w < n64; w += wave) {
    size_t count = n64 - w < wave ? (size_t)(n64 - w) : wave, nmine = 0;
    for (size_t k = (size_t)rank; k < count; k += (size_t)size)
      my_rows[nmine++] = (size_t)all_rows[w + k];
    for (size_t j = 0; j < per; j++) {
      mine[j * REC] = -1;
      mine[j * REC + 1] = 0;
      memset(&mine[j * REC + 2], 0, HS_SWEEP_NMETRICS * sizeof *mine);
    }
    slots s = {mine};
    hs_status rst = hs_sweep_run_rows(sw, my_rows, nmine, jobs, store, &s, &my_err);
    if (rst != HS_OK) i_failed = true;
    mine[per * REC] = rst != HS_OK;
    t->gather(mine, block * sizeof *mine, gathered, 0);
    int stop = 0; /* 1: a rank's row failed; 2: fn asked to stop */
    if (rank == 0) {
      for (int r = 0; r < size; r++) stop |= gathered[(size_t)r * block + per * REC] != 0;
      for (size_t k = 0; k < count; k++) {
        const double *d = &gathered[(k % (size_t)size) * block + (k / (size_t)size) * REC];
        if (d[1] == 0) continue; /* not run: its rank failed first */
        hs_sweep_result res;
        res.row = (size_t)d[0];
        HS_ASSERT(res.row == all_rows[w + k], "gathered slot holds the row sent there");
        memcpy(res.m, &d[2], sizeof res.m);
        if (!fn((size_t)(w + k), &res, userdata)) stop |= 2;
      }
    }
    stop = hs_transport_bcast_int(t, stop, 0);
    if (stop == 2) break;
    if (stop) {
      st = i_failed ? my_err.status : HS_ESTATE;
      if (i_failed && err) {
        *err = my_err;
      } else if (err) {
        hs_error_clear(err);
        err->status = HS_ESTATE;
      }
      break;
    }
  }
  hs_free(my_rows);
  hs_free(gathered);
  hs_free(mine);
  hs_free(all_rows);
  return st;
}
