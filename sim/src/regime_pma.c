/* regime_pma.c: periodic model averaging.
 *
 * A round: the server sends the model to every participant (a flow through the
 * server's shared link, capped by the device's access link), each trains its
 * allocation locally, uploads its model the same way, and waits; the round ends
 * at the last arrival (averaging on the server is taken as instantaneous).
 * A participant with 0 samples (not selected by oort) takes no part: it stays
 * idle, or is off for the round when the scenario says switch_off_unselected.
 * Events per participant and round: download done, compute done, upload done. */
#include "hs_alloc.h"
#include "run_internal.h"

typedef struct pma_state {
  size_t pending;
} pma_state;

static void on_uploaded(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  pma_state *ps = r->rs;
  sim_dev_state(r, i, HS_POWER_IDLE);
  if (--ps->pending == 0) {
    if (!sim_learn_round_fedavg(r)) return; /* learning: FedAvg of the participants */
    /* Unselected devices that were switched off come back for the next round. */
    for (size_t k = 0; k < r->ndev; k++)
      if (hs_ledger_state(r->ledger, k) == HS_POWER_OFF) sim_dev_state(r, k, HS_POWER_IDLE);
    sim_round_end(r);
  }
}

static void on_computed(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  sim_dev_model_transfer(r, i, on_uploaded, i);
}

static void on_downloaded(hs_engine *eng, void *subject, uint64_t i) {
  sim_run *r = subject;
  sim_dev_state(r, i, HS_POWER_BUSY);
  double t = sim_dev_compute_s(r, i, r->alloc[i], true, 0);
  hs_engine_schedule_in(eng, t, 0, on_computed, r, i);
}

static void pma_start_round(sim_run *r) {
  pma_state *ps = r->rs;
  ps->pending = 0;
  for (size_t i = 0; i < r->ndev; i++) {
    if (r->alloc[i] == 0) {
      if (r->sc->switch_off_unselected) sim_dev_state(r, i, HS_POWER_OFF);
      continue;
    }
    ps->pending++;
    sim_dev_model_transfer(r, i, on_downloaded, i);
  }
  if (ps->pending == 0) sim_fail(r, HS_EINVAL, "the policy selected no participant");
}

static hs_status pma_setup(sim_run *r, hs_error *err) {
  (void)err;
  r->rs = hs_calloc(1, sizeof(pma_state));
  return HS_OK;
}

static void pma_teardown(sim_run *r) { hs_free(r->rs); }

/* Every round-level policy, selection included; a step-level one (ema-batch)
 * sizes optimiser steps, which local training does not synchronise. */
const sim_regime sim_regime_pma = {
    .name = "pma",
    .summary = "periodic model averaging: local training, sync at round end",
    .caps_refused = HS_POLICY_CAP_STEP_LEVEL,
    .setup = pma_setup,
    .start_round = pma_start_round,
    .teardown = pma_teardown,
};
