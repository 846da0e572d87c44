/* regime_fl_ring.c: topology "ring" of the fl round machine: decentralised
 * averaging. The participants train from the model they hold, then average
 * it by a ring all-reduce among themselves (the hs_collective "ring" closed
 * form, paced by the slowest access link and the longest latency); there is
 * no server, so no aggregation time and no deadline (the descriptor refuses
 * one). Learning: the all-reduce's mean is the FedAvg of the participants
 * (fl_close_round).
 *
 * Invariant: ring_pending counts the participants still training. Cost: O(N)
 * per round start and once when the last participant is done.
 * Rejected: a ring of hs_net flows hop by hop (2(p-1) steps of p flows: at
 * 1,000 clients 2,000 rate updates a round for what the collective's closed
 * form gives exactly when the links are not shared). */
#include <math.h>

#include "regime_fl.h"
#include "sim/hs_collective.h"
#include "sim_run.h"

static void on_ring_done(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng, (void)arg;
  sim_run *r = subject;
  for (size_t i = 0; i < r->ndev; i++)
    if (r->alloc[i]) sim_dev_state(r, i, HS_POWER_IDLE);
  fl_close_round(r, 0);
}

static void on_ring_computed(hs_engine *eng, void *subject, uint64_t i) {
  sim_run *r = subject;
  fl_state *fs = r->rs;
  sim_dev_state(r, i, HS_POWER_IDLE);
  if (--fs->ring_pending) return;
  /* Every participant has its update: reduce-scatter + all-gather around the
   * ring, paced by the slowest access link and the longest latency
   * (hs_collective.h: 2(p-1) alpha + 2 (p-1)/p 8B/beta). */
  hs_coll_params cp = {.bytes = (double)r->sc->model_bytes, .beta_bps = INFINITY};
  for (size_t k = 0; k < r->ndev; k++) {
    if (!r->alloc[k]) continue;
    cp.ranks++;
    if (sim_dev_sp(r, k)->access_bps < cp.beta_bps) cp.beta_bps = sim_dev_sp(r, k)->access_bps;
    double lat = sim_dev_sp(r, k)->access_latency_s;
    if (lat > cp.alpha_s) cp.alpha_s = lat;
    sim_dev_state(r, k, HS_POWER_COMM);
  }
  double t = hs_collective_find("ring")->time_s(&cp);
  /* each rank sends 2 (p-1)/p B; a byte crosses the sender's and the receiver's link */
  fs->energy.bytes_hops += 2.0 * 2.0 * (double)(cp.ranks - 1) * (double)r->sc->model_bytes;
  hs_engine_schedule_in(eng, t, 0, on_ring_done, r, 0);
}

void fl_ring_start(sim_run *r) {
  fl_state *fs = r->rs;
  fs->ring_pending = 0;
  for (size_t i = 0; i < r->ndev; i++) {
    if (r->alloc[i] == 0) {
      if (r->sc->switch_off_unselected) sim_dev_state(r, i, HS_POWER_OFF);
      continue;
    }
    fs->ring_pending++;
  }
  if (!fs->ring_pending) {
    sim_fail(r, HS_EINVAL, "the policy selected no participant");
    return;
  }
  for (size_t i = 0; i < r->ndev; i++) {
    if (!r->alloc[i]) continue;
    double t = fl_train_s(r, i); /* sets the level's power before BUSY */
    sim_dev_state(r, i, HS_POWER_BUSY);
    hs_engine_post_in(r->eng, t, 0, on_ring_computed, r, i);
  }
}
