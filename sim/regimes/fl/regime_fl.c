/* regime_fl.c: federated averaging with an aggregation topology (issue 17):
 * regime "fl", option topology:
 *   star       as pma: the round ends at the last of the N updates;
 *   threshold  K-of-N: the server aggregates once K updates of the round have
 *              arrived (K = min(regime.k, participants)) and starts the next
 *              round; the N-K late devices finish the work in flight (their
 *              energy counts), and their update is dropped (late "drop") or
 *              folded into the aggregation of the round it lands in (late
 *              "fold": counted in folded_updates, never toward that round's
 *              K). A late device joins the new round when its late upload is
 *              done.
 * Per round and participant: download, local training, upload (the PMA
 * model: one flow through the device's access link and the server link each
 * way). Summary fields: late_updates (participants - K, summed over rounds),
 * folded_updates (late updates that landed in a later round and were folded).
 *
 * Invariants: a device has at most one update in flight (busy[i]); tag[i] is
 * the round that update belongs to; the round ends exactly when `arrived`
 * reaches `need`. Cost: O(1) per event, O(N) per round start.
 *   hierarchical  clients -> aggregators (any number of levels) -> server:
 *              regime_fl_tree.c;
 *   ring       decentralised averaging: the participants train from the model
 *              they hold, then average it by a ring all-reduce among
 *              themselves (the hs_collective "ring" closed form, paced by
 *              the slowest access link and the longest latency); no server.
 * Rejected: editing regime_pma.c (others are adding hooks there now); a
 * threshold in the controller (K-of-N is when the server moves on, which is
 * the regime's business); a ring of hs_net flows hop by hop (2(p-1) steps
 * of p flows: at 1,000 clients 2,000 rate updates a round for what the
 * collective's closed form gives exactly when the links are not shared). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "sim/hs_collective.h"
#include "regime_fl.h"
#include "dyn.h"
#include "sim_run.h"

typedef struct fl_state {
  bool threshold, fold, ring;
  size_t ring_pending; /* ring: participants still training */
  fl_tree *tree; /* topology hierarchical (regime_fl_tree.c) */
  fl_energy_acc energy;
  bool closing; /* the server is aggregating: arrivals now are late */
  double pace_prev, pace_now; /* slowest nominal training, previous / this round (dvfs) */
  size_t need, arrived, participants;
  uint8_t *busy, *want;
  uint32_t *tag;
  uint64_t late_updates, folded_updates;
} fl_state;

static void fl_begin(sim_run *r, size_t i);

static void on_uploaded(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  fl_state *fs = r->rs;
  sim_dev_state(r, i, HS_POWER_IDLE);
  fs->busy[i] = 0;
  if (fs->tag[i] != r->round || fs->closing) { /* late: its round is over */
    if (fs->fold) fs->folded_updates++;
    if (fs->want[i]) {
      fs->want[i] = 0;
      fl_begin(r, i);
    }
    return;
  }
  if (++fs->arrived == fs->need) {
    fs->late_updates += fs->participants - fs->arrived;
    fl_close_round(r, fs->arrived);
  }
}

static void on_aggregated(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng, (void)arg;
  sim_run *r = subject;
  fl_state *fs = r->rs;
  fs->closing = false;
  for (size_t k = 0; k < r->ndev; k++)
    if (hs_ledger_state(r->ledger, k) == HS_POWER_OFF) sim_dev_state(r, k, HS_POWER_IDLE);
  sim_round_end(r);
}

/* The server aggregates (regime.server; 0 s by default), then the round ends. */
void fl_close_round(sim_run *r, size_t updates) {
  fl_state *fs = r->rs;
  double s = fl_server_agg_s(r, updates);
  fs->energy.server_busy_s += s;
  fs->closing = true;
  if (s > 0) hs_engine_schedule_in(r->eng, s, 0, on_aggregated, r, 0);
  else on_aggregated(r->eng, r, 0);
}

fl_energy_acc *fl_state_energy(sim_run *r) { return &((fl_state *)r->rs)->energy; }

/* A model exchange between device i and the server (the pma hop). */
static void transfer(sim_run *r, size_t i, hs_event_fn done) {
  ((fl_state *)r->rs)->energy.bytes_hops += 2.0 * (double)r->sc->model_bytes;
  sim_dev_model_transfer(r, i, done, i);
}

static void on_computed(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  transfer(r, i, on_uploaded);
}

/* Device i's local training of this round, at its DVFS level (every
 * topology): its nominal time joins the round's pace, the governor's level
 * sets its busy power; returns the time at that level. */
double fl_train_s(sim_run *r, size_t i) {
  fl_state *fs = r->rs;
  double t = sim_dev_compute_s(r, i, r->alloc[i], true, 0);
  if (t > fs->pace_now) fs->pace_now = t;
  return fl_dvfs_train(r, i, t, fs->pace_prev);
}

static void on_downloaded(hs_engine *eng, void *subject, uint64_t i) {
  sim_run *r = subject;
  double t = fl_train_s(r, i); /* sets the level's power before BUSY */
  sim_dev_state(r, i, HS_POWER_BUSY);
  hs_engine_post_in(eng, t, 0, on_computed, r, i);
}

static void fl_begin(sim_run *r, size_t i) {
  fl_state *fs = r->rs;
  fs->busy[i] = 1;
  fs->tag[i] = r->round;
  transfer(r, i, on_downloaded);
}

fl_tree *fl_state_tree(sim_run *r) { return ((fl_state *)r->rs)->tree; }
void fl_state_set_tree(sim_run *r, fl_tree *t) { ((fl_state *)r->rs)->tree = t; }

/* --- ring: local training, then a ring all-reduce among the participants --- */

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

static void ring_start_round(sim_run *r) {
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

static void fl_start_round(sim_run *r) {
  fl_state *fs = r->rs;
  const fl_opts *o = r->sc->regime.opts;
  fs->pace_prev = fs->pace_now; /* the slack governor's target: the last round's pace */
  fs->pace_now = 0;
  if (fs->tree) {
    fl_tree_start_round(r);
    return;
  }
  if (fs->ring) {
    ring_start_round(r);
    return;
  }
  fs->arrived = 0;
  fs->participants = 0;
  for (size_t i = 0; i < r->ndev; i++) {
    fs->want[i] = 0;
    if (r->alloc[i] == 0) {
      if (r->sc->switch_off_unselected && !fs->busy[i]) sim_dev_state(r, i, HS_POWER_OFF);
      continue;
    }
    fs->participants++;
    if (fs->busy[i]) fs->want[i] = 1; /* still on a late update: joins when it lands */
    else fl_begin(r, i);
  }
  if (fs->participants == 0) {
    sim_fail(r, HS_EINVAL, "the policy selected no participant");
    return;
  }
  fs->need = fs->threshold && o->k < fs->participants ? o->k : fs->participants;
}

static hs_status fl_setup(sim_run *r, hs_error *err) {
  const fl_opts *fo = r->sc->regime.opts;
  const struct hs_dynamics *dy = r->sc->dynamics;
  for (size_t i = 0; fo->ndvfs + fo->dvfs_profile && dy && i < dy->ndev; i++)
    if (dy->dev[i].thermal)
      return hs_error_set(err, HS_EINVAL,
                          "%s: regime.dvfs: the thermal model (dynamics.thermal) already sets "
                          "the frequency level of device \"%s\"; use one or the other",
                          r->sc->path, sim_dev_name(r, i));
  const fl_opts *o = r->sc->regime.opts;
  fl_state *fs = hs_calloc(1, sizeof *fs);
  fs->threshold = !strcmp(o->topology, "threshold");
  fs->fold = fs->threshold && !strcmp(o->late, "fold");
  fs->ring = !strcmp(o->topology, "ring");
  fs->busy = hs_calloc(r->ndev, 1);
  fs->want = hs_calloc(r->ndev, 1);
  fs->tag = hs_calloc(r->ndev, sizeof *fs->tag);
  r->rs = fs;
  fs->energy.ports = r->ndev + !fs->ring; /* a ring has no server */
  if (!strcmp(o->topology, "hierarchical")) {
    hs_status st = fl_tree_setup(r, err);
    if (st == HS_OK) fs->energy.ports += fl_tree_nodes(r);
    return st;
  }
  return HS_OK;
}

static void fl_teardown(sim_run *r) {
  fl_state *fs = r->rs;
  if (!fs) return;
  fl_tree_free(fs->tree);
  hs_free(fs->busy);
  hs_free(fs->want);
  hs_free(fs->tag);
  hs_free(fs);
}

static size_t fl_summary(sim_run *r, hs_report_field *out, size_t cap) {
  const fl_state *fs = r->rs;
  double agg_j = 0;
  size_t k = 0;
  if (fs->tree) k = fl_tree_summary(r, hs_engine_now(r->eng), out, cap, &agg_j);
  if (fs->threshold && cap >= k + 2) {
    out[k++] = (hs_report_field){"late_updates", (double)fs->late_updates};
    out[k++] = (hs_report_field){"folded_updates", (double)fs->folded_updates};
  }
  return k;
}

/* The energy metrics (s->energy_j, the devices', is set already). */
static void fl_system_energy(sim_run *r, hs_summary *s) {
  const fl_state *fs = r->rs;
  double ms = hs_engine_now(r->eng), agg_j = 0;
  if (fs->tree) fl_tree_summary(r, ms, NULL, 0, &agg_j);
  fl_energy_summary(r, &fs->energy, ms, agg_j, s);
}

/* --- options ---------------------------------------------------------------- */

static const char *fl_prepare(const hs_scenario *sc, const void *opts, const sim_regime_opt *o,
                              double *def) {
  (void)sc, (void)def;
  const fl_opts *fo = opts;
  if ((!strcmp(o->key, "k") || !strcmp(o->key, "late")) &&
      (!fo->topology || strcmp(fo->topology, "threshold")))
    return "applies to topology \"threshold\" only";
  if (!strcmp(o->key, "levels") && (!fo->topology || strcmp(fo->topology, "hierarchical")))
    return "applies to topology \"hierarchical\" only";
  if (!strcmp(o->key, "server") && fo->topology && !strcmp(fo->topology, "ring"))
    return "does not apply to topology \"ring\" (no server: the devices average among themselves)";
  return NULL;
}

/* k: a whole number in [1, N], N the scenario's devices. */
static hs_status fl_parse(sim_opt_ctx *c, const cJSON *node, void *opts,
                          const sim_regime_opt *opt) {
  fl_opts *o = opts;
  const hs_scenario *sc = sim_opt_scenario(c);
  if (!strcmp(opt->key, "levels")) return fl_levels_parse(c, node, o);
  if (!strcmp(opt->key, "server") || !strcmp(opt->key, "network"))
    return fl_energy_parse(c, node, o, opt->key);
  if (!strcmp(opt->key, "dvfs")) return fl_dvfs_parse(c, node, o);
  if (!node) return sim_opt_missing(c, opt->key);
  size_t m = sim_opt_key(c, opt->key);
  static const sim_opt_range updates = {.lo = 1, .hi = 4294967295.0, .status = HS_EINVAL,
                                        .want = "expected a whole number K >= 1 (updates to wait for)"};
  double v;
  hs_status st = sim_opt_uint(c, node, &updates, &v);
  if (st) return st;
  size_t ex = sim_opt_excluded(c); /* say so: the user may not see why N is small */
  if (v > (double)sc->total_devices && ex)
    return sim_opt_fail(c, HS_EINVAL,
                        "K = %.0f > N = %zu devices (%zu entr%s excluded by count 0): the round "
                        "could never end", v, sc->total_devices, ex, ex == 1 ? "y" : "ies");
  if (v > (double)sc->total_devices)
    return sim_opt_fail(c, HS_EINVAL, "K = %.0f > N = %zu devices: the round could never end", v,
                        sc->total_devices);
  o->k = (uint32_t)v;
  sim_opt_pop(c, m);
  return HS_OK;
}

static void fl_print(cJSON *reg, const void *opts, const sim_regime_opt *opt) {
  const fl_opts *o = opts;
  if (!strcmp(opt->key, "levels")) fl_levels_print(reg, o);
  else if (!strcmp(opt->key, "server") || !strcmp(opt->key, "network"))
    fl_energy_print(reg, o, opt->key);
  else if (!strcmp(opt->key, "dvfs")) {
    if (o->ndvfs) fl_dvfs_print(reg, o);
  }
  else if (!cJSON_AddNumberToObject(reg, opt->key, o->k)) abort();
}

static void fl_opts_free(void *opts) {
  fl_levels_free(opts);
  fl_host_free(&((fl_opts *)opts)->srv);
  hs_free(((fl_opts *)opts)->dvfs);
}

static const uint32_t *fl_groups(const void *opts) { return ((const fl_opts *)opts)->group_of; }

static const char *const topologies[] = {"star", "threshold", "hierarchical", "ring", NULL};
static const char *const lates[] = {"drop", "fold", NULL};

static const sim_regime_opt fl_table[] = {
    {"topology", SIM_OPT_CHOICE, offsetof(fl_opts, topology), 0, 0, 0, 0, topologies, NULL,
     "star (wait for every update) or threshold (move on after K of N)"},
    {"k", SIM_OPT_CUSTOM, offsetof(fl_opts, k), 0, 0, 0, 0, NULL, NULL,
     "threshold: updates K the server waits for, 1 <= K <= devices"},
    {"late", SIM_OPT_CHOICE, offsetof(fl_opts, late), 0, 0, 0, 0, lates, NULL,
     "threshold: a late update is dropped, or folded into the next aggregation"},
    {"levels", SIM_OPT_CUSTOM, offsetof(fl_opts, levels), 0, 0, 0, 0, NULL, NULL,
     "hierarchical: [{fanout, link, aggregator: a host profile name or {profile, s_per_update, "
     "s_per_mb, idle_w, busy_w}}], leaves first"},
    {"server", SIM_OPT_CUSTOM, offsetof(fl_opts, srv), 0, 0, 0, 0, NULL, NULL,
     "the server host: a profile name, or {profile, idle_w, busy_w, s_per_update, s_per_mb} "
     "overriding it (default profile " FL_DEFAULT_SERVER ": an estimate)"},
    {"network", SIM_OPT_CUSTOM, offsetof(fl_opts, j_per_byte), 0, 0, 0, 0, NULL, NULL,
     "network energy: {j_per_byte per link crossed (default 1e-6: a Wi-Fi estimate), port_w per "
     "endpoint (default 1: a switch-port estimate)}"},
    {"dvfs", SIM_OPT_CUSTOM, offsetof(fl_opts, dvfs), 0, 0, 0, 0, NULL, NULL,
     "device DVFS, every topology: {levels: [{speed, power}] fastest first or \"profile\", "
     "governor: performance, powersave or slack} (default: none)"},
};

const sim_regime sim_regime_fl = {
    .name = "fl",
    .summary = "federated averaging with a topology: star, threshold K-of-N, hierarchical, ring",
    .opts = fl_table,
    .nopts = sizeof fl_table / sizeof fl_table[0],
    .opts_size = sizeof(fl_opts),
    .opt_prepare = fl_prepare,
    .opt_parse = fl_parse,
    .opt_print = fl_print,
    .opts_free = fl_opts_free,
    .groups = fl_groups,
    .caps_refused = HS_POLICY_CAP_STEP_LEVEL,
    /* No learning yet: its rounds never call the FedAvg (refused at load). */
    .can = SIM_CAN_AVAIL,
    .dev_bytes = sizeof(double), /* the run's scratch */
    .setup = fl_setup,
    .start_round = fl_start_round,
    .teardown = fl_teardown,
    .summary_fields = fl_summary,
    .system_energy = fl_system_energy,
    .metric_group = "system",
};
