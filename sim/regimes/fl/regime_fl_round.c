/* regime_fl_round.c: the round of federated averaging with a server that every
 * participant talks to directly, topologies "star" (regime pma, and fl's
 * default) and "threshold" (K-of-N), and the close of every topology's round
 * (fl_close_round: FedAvg, the server's aggregation time, the round's end).
 *
 * A round: the server sends the model to every participant (a flow through the
 * server's shared link, capped by the device's access link), each trains its
 * allocation locally (at its DVFS level: regime_fl_dvfs.c), uploads its model
 * the same way, and waits. Star closes the round at the last arrival;
 * threshold at the K-th (K = min(regime.k, participants)): the N-K late
 * participants finish the work in flight (their energy counts), and their
 * update is dropped (late "drop") or counted as folded into the aggregation of
 * the round it lands in (late "fold"); a late device joins the round after
 * when its late upload is done. Then the server aggregates (regime.server's
 * time, 0 s by default) and the round ends. A participant with 0 samples
 * (not selected by oort) takes no part: it stays idle, or is off for the
 * round when the scenario says switch_off_unselected.
 * Events per participant and round: download done, compute done, upload done.
 *
 * Deadline and absences (star only: the descriptor's cannot hook refuses
 * them elsewhere; threshold takes absences the default way, paused by dyn.c):
 * with a deadline the server closes the round deadline_s after it opened; a
 * participant whose upload has not arrived is lost: its work is dropped, the
 * energy it spent stays spent, and it reports nothing (0/0/0: the controller
 * keeps its last estimates, as a real server would have no telemetry). A
 * participant that becomes unavailable mid-round vanishes the same way (it is
 * off until it returns), and the server stops waiting for it. A device that is
 * unavailable when the round opens sits it out.
 *
 * Participation (a byte in the device's ledger line, after its sim_hot:
 * sim_dev_part): IN_OUT, IN_ROUND (participating, update in flight),
 * IN_DONE (uploaded), and for threshold IN_LATE (an update of an older round
 * in flight) and IN_LATE_WANTED (the same, and selected for this round: it
 * begins when it lands). Event arguments carry (epoch << 32 | device); the
 * epoch bumps when a round opens, and an upload of an older epoch, or one
 * that lands while the server aggregates, is late. Star ignores stale
 * events (a lost participant's); threshold's late work goes on.
 *
 * The one-pass round (issue 13; star without dynamics, deadline, DVFS and
 * traces). At 10^6 devices the events of a round reach the devices in random
 * order, and every per-device record an event reads is a cache miss that
 * stalls it. When nothing can drop a participant or read the ledger before
 * the round closes:
 * - each participant's compute work is drawn at the round start, in device
 *   order (one sequential pass over the cold records), and kept in its
 *   sim_hot; its stream gives the same draw it would have given at the
 *   download's end, since every participant reaches that point exactly once;
 * - the three switches of the round (busy at the download's end, comm at the
 *   compute's end, idle at the upload's end) are not made when they happen:
 *   their times are written to the device's sim_hot (stores, which do not
 *   stall; it shares the ledger's line of the device) and the ledger gets
 *   them when the round's measure reads the device (r->settle: the replay,
 *   the measure and the return of switched-off devices are one pass). The
 *   ledger keeps nothing across devices, so each device sees the same
 *   switches at the same times in the same order: bit-identical results;
 * - the compute's end needs only the device's link, which its event argument
 *   carries (the entry's index), so it touches no per-device record at all.
 * Threshold never runs in one pass: its late participants are still in
 * flight when the round closes, so their switches cannot be replayed then.
 * Rejected: one machine per regime (pma and fl star were this file twice and
 * drifted: only one had deadlines and learning, only the other DVFS and
 * server time); arrays of their own for threshold's in-flight and wanted
 * flags (the participation byte holds them, in a line the events touch). */
#include <math.h>

#include "base/hs_alloc.h"
#include "regime_fl.h"
#include "sim_run.h"

#include "dyn.h"

enum { IN_OUT = 0, IN_ROUND = 1, IN_DONE = 2, IN_LATE = 3, IN_LATE_WANTED = 4 };

#define IN(r, i) (*sim_dev_part(r, i))
#define DEV(arg) ((size_t)((arg) & 0xffffffffu))
static uint64_t arg_of(const fl_state *fs, size_t i) { return (uint64_t)fs->epoch << 32 | i; }

/* The device of a current event of this round; SIZE_MAX for a stale one. */
static size_t dev_of(sim_run *r, uint64_t arg) {
  fl_state *fs = r->rs;
  size_t i = DEV(arg);
  return (uint32_t)(arg >> 32) == fs->epoch && !fs->closing && IN(r, i) == IN_ROUND ? i
                                                                                    : SIZE_MAX;
}

/* A model exchange between device i and the server (down: from it). */
static void transfer(sim_run *r, size_t i, bool down, hs_event_fn done, uint64_t arg) {
  ((fl_state *)r->rs)->energy.bytes_hops += 2.0 * (double)r->sc->model_bytes;
  (down ? sim_dev_model_download : sim_dev_model_transfer)(r, i, done, arg);
}

/* --- the close of a round (every topology) ------------------------------------ */

/* One pass: the round's switches reach the ledger, device by device in
 * device order, each just before the round's measure reads it (r->settle);
 * every participant has uploaded (the round closes after the last upload),
 * so every other device has allocation 0 already; an unselected device that
 * was switched off comes back now (on_aggregated's loop, in the same pass:
 * the ledger keeps nothing across devices, and there are no spans). */
static void replay(sim_run *r, size_t i) {
  if (IN(r, i) != IN_ROUND) {
    if (hs_ledger_state(r->ledger, i) == HS_POWER_OFF) sim_dev_state(r, i, HS_POWER_IDLE);
    return;
  }
  IN(r, i) = IN_DONE;
  const sim_hot *h = sim_dev_hot(r, i);
  hs_ledger_switch(r->ledger, i, HS_POWER_BUSY, h->work_s);
  hs_ledger_switch(r->ledger, i, HS_POWER_COMM, h->t2);
  hs_ledger_switch(r->ledger, i, HS_POWER_IDLE, h->t3);
}

static void on_aggregated(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng, (void)arg;
  sim_run *r = subject;
  fl_state *fs = r->rs;
  fs->closing = false;
  /* Unselected devices that were switched off come back for the next round;
   * one pass: the replay does it, device by device inside the measure. */
  if (fs->one_pass) r->settle = replay;
  for (size_t k = 0; k < r->ndev && !fs->one_pass; k++)
    if (hs_ledger_state(r->ledger, k) == HS_POWER_OFF && sim_dev_available(r, k))
      sim_dev_state(r, k, HS_POWER_IDLE);
  sim_round_end(r);
}

/* The FedAvg of the round's updates (learning), the server's aggregation of
 * `updates` updates (regime.server; 0 s by default), then the round's end. */
void fl_close_round(sim_run *r, size_t updates) {
  fl_state *fs = r->rs;
  bool ok;
  if (fs->threshold && r->learn) { /* only the updates that arrived in time */
    for (size_t i = 0; i < r->ndev; i++) fs->arrived_n[i] = IN(r, i) == IN_DONE ? r->alloc[i] : 0;
    ok = sim_learn_round_fedavg_of(r, fs->arrived_n);
  } else {
    ok = sim_learn_round_fedavg(r);
  }
  if (!ok) return;
  double s = fl_server_agg_s(r, updates);
  fs->energy.server_busy_s += s;
  fs->closing = true;
  if (s > 0) hs_engine_schedule_in(r->eng, s, 0, on_aggregated, r, 0);
  else on_aggregated(r->eng, r, 0);
}

/* Star: the last arrival (or the deadline) closes the round. Lost, vanished
 * and absent participants bring no update: the round's FedAvg, rows and
 * telemetry see 0 samples for them. */
static void star_close(sim_run *r) {
  fl_state *fs = r->rs;
  size_t updates = 0;
  for (size_t i = 0; i < r->ndev && !fs->one_pass; i++) {
    if (IN(r, i) == IN_DONE) updates++;
    else if (r->alloc[i]) sim_run_set_alloc(r, i, 0);
  }
  fl_close_round(r, fs->one_pass ? fs->participants : updates);
}

/* --- events -------------------------------------------------------------------- */

static void begin(sim_run *r, size_t i);

static void on_uploaded(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  sim_run *r = subject;
  fl_state *fs = r->rs;
  size_t i = dev_of(r, arg);
  if (i == SIZE_MAX && fs->threshold) { /* late: its round is over */
    i = DEV(arg);
    sim_dev_state(r, i, HS_POWER_IDLE);
    if (fs->fold) fs->folded_updates++;
    if (IN(r, i) == IN_LATE_WANTED) begin(r, i);
    else IN(r, i) = IN_OUT;
    return;
  }
  if (i == SIZE_MAX) return;
  IN(r, i) = IN_DONE;
  sim_dev_state(r, i, HS_POWER_IDLE);
  if (--fs->pending) return;
  if (!fs->threshold) {
    star_close(r);
    return;
  }
  fs->late_updates += fs->participants - fs->need;
  fl_close_round(r, fs->need);
}

static void on_computed(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  sim_run *r = subject;
  fl_state *fs = r->rs;
  size_t i = fs->threshold ? DEV(arg) : dev_of(r, arg); /* threshold: late work goes on */
  if (i != SIZE_MAX) transfer(r, i, false, on_uploaded, arg);
}

static void on_downloaded(hs_engine *eng, void *subject, uint64_t arg) {
  sim_run *r = subject;
  fl_state *fs = r->rs;
  size_t i = fs->threshold ? DEV(arg) : dev_of(r, arg);
  if (i == SIZE_MAX) return;
  double t = fl_train_s(r, i); /* sets the level's power before BUSY */
  sim_dev_state(r, i, HS_POWER_BUSY);
  hs_engine_post_in(eng, t, 0, on_computed, r, arg);
}

static void begin(sim_run *r, size_t i) {
  IN(r, i) = IN_ROUND;
  transfer(r, i, true, on_downloaded, arg_of(r->rs, i));
}

/* The one-pass round's events: argument (entry << 32 | device); none is ever
 * stale (no participant can drop out, the round closes after the last), so
 * they do not read the participation bytes (a cache miss at 10^6: 70 % of
 * the upload's handler); the replay marks the participants uploaded. */
static void on_uploaded_1p(hs_engine *eng, void *subject, uint64_t arg) {
  sim_run *r = subject;
  fl_state *fs = r->rs;
  sim_dev_hot(r, DEV(arg))->t3 = hs_engine_now(eng);
  if (--fs->pending == 0) star_close(r);
}

static void on_computed_1p(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  sim_run *r = subject;
  const sim_spec *sp = &r->spec_tab[arg >> 32];
  ((fl_state *)r->rs)->energy.bytes_hops += 2.0 * (double)r->sc->model_bytes;
  double lat = sp->access_latency_s;
  if (sp->stall_s > 0) lat += sim_dev_send_stall_s(r, DEV(arg), r->sc->model_bytes);
  hs_net_transfer(r->net, r->sc->model_bytes, sp->access_bps, lat, &r->server_link, 1,
                  on_uploaded_1p, r, arg);
}

static void on_downloaded_1p(hs_engine *eng, void *subject, uint64_t arg) {
  sim_run *r = subject;
  size_t i = DEV(arg);
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
  fl_state *fs = r->rs;
  if (epoch != fs->epoch || fs->closing) return;
  for (size_t i = 0; i < r->ndev; i++)
    if (IN(r, i) == IN_ROUND) {
      IN(r, i) = IN_OUT;
      sim_dev_state(r, i, HS_POWER_IDLE);
    }
  fs->pending = 0;
  star_close(r);
}

/* --- the start of a round -------------------------------------------------------- */

/* The one-pass round's start: one pass over the devices, entry by entry (no
 * per-device lookup of the entry): star_start's two loops (no device is away
 * without dynamics, and the switches of different devices commute: no
 * spans), with sim_dev_model_transfer's state switch made directly. */
static void start_one_pass(sim_run *r) {
  fl_state *fs = r->rs;
  double now = hs_engine_now(r->eng);
  double bytes = 2.0 * (double)r->sc->model_bytes;
  for (size_t s = 0, i = 0; s < r->nspec; s++) {
    const sim_spec *sp = &r->spec_tab[s];
    for (; i < r->spec_end[s]; i++) {
      uint64_t n = r->alloc[i];
      IN(r, i) = n ? IN_ROUND : IN_OUT;
      if (n == 0) {
        if (r->sc->switch_off_unselected) hs_ledger_switch(r->ledger, i, HS_POWER_OFF, now);
        continue;
      }
      fs->pending++;
      fs->energy.bytes_hops += bytes;
      sim_dev_hot(r, i)->work_s = sim_dev_draw_work_sp(r, i, sp, n, true);
      hs_ledger_switch(r->ledger, i, HS_POWER_COMM, now);
      hs_net_transfer(r->net, r->sc->model_bytes, sp->access_bps, sp->access_latency_s,
                      &r->server_down, 1, on_downloaded_1p, r, (uint64_t)s << 32 | i);
    }
  }
  fs->participants = fs->pending;
  if (fs->pending == 0) {
    sim_fail(r, HS_EINVAL, "the policy selected no participant");
    fs->waiting = true;
  }
}

static void star_start(sim_run *r) {
  fl_state *fs = r->rs;
  double deadline = r->sc->dynamics ? r->sc->dynamics->deadline_s : 0;
  fs->one_pass = fs->can_one_pass && !r->span;
  if (fs->one_pass) {
    start_one_pass(r);
    return;
  }
  for (size_t i = 0; i < r->ndev; i++) {
    IN(r, i) = IN_OUT;
    if (r->alloc[i] == 0) {
      if (r->sc->switch_off_unselected) sim_dev_state(r, i, HS_POWER_OFF);
      continue;
    }
    if (!sim_dev_available(r, i)) continue;
    IN(r, i) = IN_ROUND;
    fs->pending++;
  }
  if (fs->pending == 0) {
    bool any = false;
    for (size_t i = 0; i < r->ndev; i++) any |= r->alloc[i] > 0;
    if (!any) sim_fail(r, HS_EINVAL, "the policy selected no participant");
    fs->waiting = true; /* every participant is away: open when one returns */
    return;
  }
  for (size_t i = 0; i < r->ndev; i++)
    if (IN(r, i) == IN_ROUND) transfer(r, i, true, on_downloaded, arg_of(fs, i));
  if (deadline > 0) hs_engine_schedule_in(r->eng, deadline, 0, on_deadline, r, fs->epoch);
}

/* Threshold: a device still on a late update joins when it lands. */
static void threshold_start(sim_run *r) {
  fl_state *fs = r->rs;
  const fl_opts *o = r->sc->regime.opts;
  for (size_t i = 0; i < r->ndev; i++) {
    unsigned char in = IN(r, i);
    bool busy = in == IN_ROUND || in == IN_LATE || in == IN_LATE_WANTED;
    if (r->alloc[i] == 0) {
      IN(r, i) = busy ? IN_LATE : IN_OUT;
      if (r->sc->switch_off_unselected && !busy) sim_dev_state(r, i, HS_POWER_OFF);
      continue;
    }
    fs->participants++;
    if (busy) IN(r, i) = IN_LATE_WANTED;
    else begin(r, i);
  }
  if (fs->participants == 0) {
    sim_fail(r, HS_EINVAL, "the policy selected no participant");
    return;
  }
  fs->need = o->k < fs->participants ? o->k : fs->participants;
  fs->pending = fs->need;
}

void fl_round_start(sim_run *r) {
  fl_state *fs = r->rs;
  fs->epoch++; /* whatever is still in flight belongs to an older round */
  fs->pending = fs->participants = 0;
  fs->waiting = false;
  if (fs->threshold) threshold_start(r);
  else star_start(r);
}

/* Absences (star): a participant still at work vanishes; the others pause
 * (dyn.c). */
static bool star_on_avail(sim_run *r, size_t i, bool on) {
  fl_state *fs = r->rs;
  if (on && fs->waiting) {
    sim_dev_state(r, i, HS_POWER_IDLE);
    r->round_start_s = hs_engine_now(r->eng);
    fl_round_start(r);
    return true;
  }
  if (on || IN(r, i) != IN_ROUND || fs->closing) return false;
  IN(r, i) = IN_OUT;
  sim_dev_state(r, i, HS_POWER_OFF);
  if (--fs->pending == 0) star_close(r);
  return true;
}

void fl_round_setup(sim_run *r) {
  fl_state *fs = r->rs;
  const fl_opts *o = r->sc->regime.opts;
  bool deadline = r->sc->dynamics && r->sc->dynamics->deadline_s > 0;
  if (fs->threshold) {
    if (r->learn) fs->arrived_n = hs_calloc(r->ndev ? r->ndev : 1, sizeof *fs->arrived_n);
    return;
  }
  fs->can_one_pass = r->ndyn == 0 && !deadline && !o->ndvfs && !o->dvfs_profile;
  r->on_avail = star_on_avail;
}
