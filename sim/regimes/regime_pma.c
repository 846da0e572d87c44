/* regime_pma.c: periodic model averaging.
 *
 * A round: the server sends the model to every participant (a flow through the
 * server's shared link, capped by the device's access link), each trains its
 * allocation locally, uploads its model the same way, and waits; the round ends
 * at the last arrival (averaging on the server is taken as instantaneous).
 * A participant with 0 samples (not selected by oort) takes no part: it stays
 * idle, or is off for the round when the scenario says switch_off_unselected.
 * Events per participant and round: download done, compute done, upload done.
 *
 * Deadline and absences (scenario "dynamics": deadline_s, availability): with a
 * deadline the server closes the round deadline_s after it opened; a
 * participant whose upload has not arrived is lost: its work is dropped, the
 * energy it spent stays spent, and it reports nothing (0/0/0: the controller
 * keeps its last estimates, as a real server would have no telemetry). A
 * participant that becomes unavailable mid-round vanishes the same way (it is
 * off until it returns), and the server stops waiting for it. A device that is
 * unavailable when the round opens sits it out. Events of a lost participant
 * still in flight carry the round's epoch and do nothing.
 *
 * The one-pass round (issue 13). At 10^6 devices the events of a round reach
 * the devices in random order, and every per-device record an event reads is
 * a cache miss that stalls it. Without dynamics, deadline and traces nothing
 * can drop a participant or read the ledger before the round closes, so:
 * - each participant's compute work is drawn at the round start, in device
 *   order (one sequential pass over the cold records), and kept in its
 *   sim_hot; its stream gives the same draw it would have given at the
 *   download's end, since every participant reaches that point exactly once;
 * - the three switches of the round (busy at the download's end, comm at the
 *   compute's end, idle at the upload's end) are not made when they happen:
 *   their times are written to the device's sim_hot (stores, which do not
 *   stall; it shares the ledger's line of the device) and the ledger gets
 *   them at the round close in device order, one sequential pass. The ledger
 *   keeps nothing across devices, so each device sees the same switches at
 *   the same times in the same order: bit-identical results;
 * - the compute's end needs only the device's link, which its event argument
 *   carries (the entry's index), so it touches no per-device record at all.
 * Downloads start together in device order and finish per link class in that
 * order, so the download's end reads sim_hot nearly sequentially. With
 * dynamics, a deadline or traces the round runs event by event (above).
 * Sweeps over the devices (issue 13, second pass): the round's start is one
 * pass, entry by entry (start_one_pass: participation, the switch off of the
 * unselected, the draw, the download); the close replays a device's switches
 * just before the run's measure reads its figures (r->settle), so the replay,
 * the measure and the return of switched-off devices are one pass; the
 * participation byte is in the device's ledger line (sim_dev_part), not an
 * array of its own. Before, at 10^6 devices (perf, hs-bench-pma): the
 * replay's pass 1.4 %, the mark's 1.1 % (now lazy: ledger.c), the pass for
 * switched-off devices 0.4 % of the run's CPU time. */
#include <math.h>

#include "base/hs_alloc.h"
#include "sim_run.h"

#include "dyn.h"

typedef struct pma_state {
  size_t pending;
  uint32_t epoch;     /* bumps when a round opens */
  bool waiting;       /* no device available: the round opens when one returns */
  bool can_one_pass;  /* no dynamics, no deadline */
  bool one_pass;      /* this round is run in one pass (see above): also no traces */
} pma_state;


/* Device i's participation: 1 participating, 2 uploaded, 0 out or lost (a
 * byte in the device's ledger line, after its sim_hot: sim_dev_part). */
#define IN(r, i) (*sim_dev_part(r, i))
#define ARG(r, i) ((uint64_t)((pma_state *)(r)->rs)->epoch << 32 | (uint64_t)(i))
/* The device of an event of this round; SIZE_MAX for a stale one. */
static size_t dev_of(sim_run *r, uint64_t arg) {
  pma_state *ps = r->rs;
  size_t i = (size_t)(arg & 0xffffffffu);
  return (uint32_t)(arg >> 32) == ps->epoch && IN(r, i) == 1 ? i : SIZE_MAX;
}

/* One pass: the round's switches reach the ledger, device by device in
 * device order, each just before the round's measure reads it (r->settle:
 * one pass over the devices for both); every participant has uploaded (the
 * round closes after the last upload), so every other device has allocation
 * 0 already; an unselected device that was switched off comes back now
 * (round_close's last loop, in the same pass: the ledger keeps nothing
 * across devices, and there are no spans). */
static void replay(sim_run *r, size_t i) {
  if (IN(r, i) != 1) {
    if (hs_ledger_state(r->ledger, i) == HS_POWER_OFF) sim_dev_state(r, i, HS_POWER_IDLE);
    return;
  }
  IN(r, i) = 2;
  const sim_hot *h = sim_dev_hot(r, i);
  hs_ledger_switch(r->ledger, i, HS_POWER_BUSY, h->work_s);
  hs_ledger_switch(r->ledger, i, HS_POWER_COMM, h->t2);
  hs_ledger_switch(r->ledger, i, HS_POWER_IDLE, h->t3);
}

static void round_close(sim_run *r) {
  pma_state *ps = r->rs;
  bool one_pass = ps->one_pass;
  ps->epoch++; /* whatever is still in flight belongs to a closed round */
  /* Lost, vanished and absent participants bring no update: the round's
   * FedAvg (learning), rows and telemetry see 0 samples for them. */
  for (size_t i = 0; i < r->ndev && !one_pass; i++)
    if (IN(r, i) != 2 && r->alloc[i]) sim_run_set_alloc(r, i, 0);
  if (!sim_learn_round_fedavg(r)) return; /* learning: FedAvg of the participants */
  /* Unselected devices that were switched off come back for the next round. */
  for (size_t k = 0; k < r->ndev && !one_pass; k++)
    if (hs_ledger_state(r->ledger, k) == HS_POWER_OFF && sim_dev_available(r, k))
      sim_dev_state(r, k, HS_POWER_IDLE);
  /* One pass: the replay, which also does the two loops above (every
   * participant uploaded: the allocation needs no change; FedAvg reads only
   * the allocation), device by device inside the measure. */
  if (one_pass) r->settle = replay;
  sim_round_end(r);
}

static void on_uploaded(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  sim_run *r = subject;
  pma_state *ps = r->rs;
  size_t i = dev_of(r, arg);
  if (i == SIZE_MAX) return;
  IN(r, i) = 2;
  sim_dev_state(r, i, HS_POWER_IDLE);
  if (--ps->pending == 0) round_close(r);
}

static void on_computed(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  sim_run *r = subject;
  size_t i = dev_of(r, arg);
  if (i != SIZE_MAX) sim_dev_model_transfer(r, i, on_uploaded, arg);
}

static void on_downloaded(hs_engine *eng, void *subject, uint64_t arg) {
  sim_run *r = subject;
  size_t i = dev_of(r, arg);
  if (i == SIZE_MAX) return;
  sim_dev_state(r, i, HS_POWER_BUSY);
  double t = sim_dev_compute_s(r, i, r->alloc[i], true, 0);
  hs_engine_post_in(eng, t, 0, on_computed, r, arg);
}

/* The one-pass round's events: argument (entry << 32 | device); none is ever
 * stale (no participant can drop out, the round closes after the last), so
 * they do not read the participation bytes (a cache miss at 10^6: 70 % of
 * the upload's handler); the replay marks the participants uploaded. */
static void on_uploaded_1p(hs_engine *eng, void *subject, uint64_t arg) {
  sim_run *r = subject;
  pma_state *ps = r->rs;
  size_t i = (size_t)(arg & 0xffffffffu);
  sim_dev_hot(r, i)->t3 = hs_engine_now(eng);
  if (--ps->pending == 0) round_close(r);
}

static void on_computed_1p(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  sim_run *r = subject;
  const sim_spec *sp = &r->spec_tab[arg >> 32];
  hs_net_transfer(r->net, r->sc->model_bytes, sp->access_bps, sp->access_latency_s,
                  &r->server_link, 1, on_uploaded_1p, r, arg);
}

static void on_downloaded_1p(hs_engine *eng, void *subject, uint64_t arg) {
  sim_run *r = subject;
  size_t i = (size_t)(arg & 0xffffffffu);
  sim_hot *h = sim_dev_hot(r, i);
  double now = hs_engine_now(eng);
  /* Without a speed trace the stretch is the work itself (no dynamics here);
   * a trace, or a time past the largest double, takes the full path. */
  double t2 = now + h->work_s;
  if (r->spec_tab[arg >> 32].trace || !isfinite(t2))
    t2 = now + sim_dev_stretch_s(r, i, h->work_s, 0);
  h->work_s = now; /* the download's end, from now on */
  h->t2 = t2;
  /* Posted: the one-pass round never cancels or moves a compute's end, so it
   * needs no event slot or id; the round's burst of them is sorted into one
   * run instead of passing through the calendar (see hs_engine_post). */
  hs_engine_post(eng, t2, 0, on_computed_1p, r, arg);
}

/* The server closes the round: whoever has not uploaded is lost. */
static void on_deadline(hs_engine *eng, void *subject, uint64_t epoch) {
  (void)eng;
  sim_run *r = subject;
  pma_state *ps = r->rs;
  if (epoch != ps->epoch) return;
  for (size_t i = 0; i < r->ndev; i++)
    if (IN(r, i) == 1) {
      IN(r, i) = 0;
      sim_dev_state(r, i, HS_POWER_IDLE);
    }
  ps->pending = 0;
  round_close(r);
}

/* The one-pass round's start: one pass over the devices, entry by entry (no
 * per-device lookup of the entry): pma_start_round's two loops (no device
 * is away without dynamics, and the switches of different devices commute:
 * no spans), with sim_dev_model_transfer's state switch made directly. */
static void start_one_pass(sim_run *r) {
  pma_state *ps = r->rs;
  double now = hs_engine_now(r->eng);
  for (size_t s = 0, i = 0; s < r->nspec; s++) {
    const sim_spec *sp = &r->spec_tab[s];
    for (; i < r->spec_end[s]; i++) {
      uint64_t n = r->alloc[i];
      IN(r, i) = n ? 1 : 0;
      if (n == 0) {
        if (r->sc->switch_off_unselected) hs_ledger_switch(r->ledger, i, HS_POWER_OFF, now);
        continue;
      }
      ps->pending++;
      sim_dev_hot(r, i)->work_s = sim_dev_draw_work_sp(r, i, sp, n, true);
      hs_ledger_switch(r->ledger, i, HS_POWER_COMM, now);
      hs_net_transfer(r->net, r->sc->model_bytes, sp->access_bps, sp->access_latency_s,
                      &r->server_link, 1, on_downloaded_1p, r, (uint64_t)s << 32 | i);
    }
  }
  if (ps->pending == 0) {
    sim_fail(r, HS_EINVAL, "the policy selected no participant");
    ps->waiting = true;
  }
}

static void pma_start_round(sim_run *r) {
  pma_state *ps = r->rs;
  double deadline = r->sc->dynamics ? r->sc->dynamics->deadline_s : 0;
  ps->pending = 0;
  ps->waiting = false;
  ps->one_pass = ps->can_one_pass && !r->span;
  if (ps->one_pass) {
    start_one_pass(r);
    return;
  }
  for (size_t i = 0; i < r->ndev; i++) {
    IN(r, i) = 0;
    if (r->alloc[i] == 0) {
      if (r->sc->switch_off_unselected) sim_dev_state(r, i, HS_POWER_OFF);
      continue;
    }
    if (!sim_dev_available(r, i)) continue;
    IN(r, i) = 1;
    ps->pending++;
  }
  if (ps->pending == 0) {
    bool any = false;
    for (size_t i = 0; i < r->ndev; i++) any |= r->alloc[i] > 0;
    if (!any) sim_fail(r, HS_EINVAL, "the policy selected no participant");
    ps->waiting = true; /* every participant is away: open when one returns */
    return;
  }
  for (size_t i = 0; i < r->ndev; i++)
    if (IN(r, i) == 1) sim_dev_model_transfer(r, i, on_downloaded, ARG(r, i));
  if (deadline > 0) hs_engine_schedule_in(r->eng, deadline, 0, on_deadline, r, ps->epoch);
}

/* Absences: a participant still at work vanishes; the others pause (dyn.c). */
static bool pma_on_avail(sim_run *r, size_t i, bool on) {
  pma_state *ps = r->rs;
  if (on && ps->waiting) {
    sim_dev_state(r, i, HS_POWER_IDLE);
    r->round_start_s = hs_engine_now(r->eng);
    pma_start_round(r);
    return true;
  }
  if (on || IN(r, i) != 1) return false;
  IN(r, i) = 0;
  sim_dev_state(r, i, HS_POWER_OFF);
  if (--ps->pending == 0) round_close(r);
  return true;
}

static hs_status pma_setup(sim_run *r, hs_error *err) {
  (void)err;
  pma_state *ps = hs_calloc(1, sizeof(pma_state));
  ps->can_one_pass = r->ndyn == 0 && !(r->sc->dynamics && r->sc->dynamics->deadline_s > 0);
  r->rs = ps;
  r->on_avail = pma_on_avail;
  return HS_OK;
}

static void pma_teardown(sim_run *r) {
  pma_state *ps = r->rs;
  hs_free(ps);
}

/* Every round-level policy, selection included; a step-level one (ema-batch)
 * sizes optimiser steps, which local training does not synchronise. No
 * telemetry hook: a participant reports the run's default, its allocation
 * and the busy time and energy the ledger saw in the round (a lost one's
 * allocation is 0 by then, so it reports 0/0/0). */
const sim_regime sim_regime_pma = {
    .name = "pma",
    .summary = "periodic model averaging: local training, sync at round end",
    .caps_refused = HS_POLICY_CAP_STEP_LEVEL,
    .can = SIM_CAN_FEDAVG | SIM_CAN_DEADLINE | SIM_CAN_AVAIL,
    .dev_bytes = 1, /* the participation byte */
    .setup = pma_setup,
    .start_round = pma_start_round,
    .teardown = pma_teardown,
};
