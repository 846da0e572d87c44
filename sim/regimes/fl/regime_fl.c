/* regime_fl.c: federated averaging with an aggregation topology (issue 17,
 * issue 22): the descriptors of regime "fl" and of regime "pma" (the name of
 * {fl, topology: star} with every option at its default: its scenarios,
 * outputs and printed form are pma's), the run's set-up, the topology
 * dispatch, the summary fields and the options. One round machine serves
 * every topology:
 *   star          regime_fl_round.c: the round ends at the last of the N updates;
 *                 deadlines, absences taken by the regime, the one-pass
 *                 fast path;
 *   threshold     regime_fl_round.c: K-of-N, late updates dropped or folded;
 *   hierarchical  regime_fl_tree.c: clients -> aggregators -> server;
 *   ring          regime_fl_ring.c: a ring all-reduce among the participants.
 * Every topology: learning (the FedAvg of the round's updates, at the close
 * in regime_fl_round.c), DVFS (regime_fl_dvfs.c), the server's aggregation time and
 * whole-system energy (regime_fl_energy.c; no server on a ring). What does
 * not make sense is refused at load by the descriptor's cannot hook (a
 * deadline off star, learning with late "fold").
 * Summary fields: late_updates (participants - K, summed over rounds),
 * folded_updates (late updates that landed in a later round and were
 * folded); hierarchical: the bytes on each level's links.
 * Rejected: pma and fl as two machines (they were, and drifted: issue 22's
 * learning.csv with samples = 0 under fl); pma as an fl option preset
 * printed with fl's options (its scenarios' printed form and identity hash
 * would change). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "sim/hs_collective.h"
#include "regime_fl.h"
#include "dyn.h"
#include "sim_run.h"

fl_energy_acc *fl_state_energy(sim_run *r) { return &((fl_state *)r->rs)->energy; }
fl_tree *fl_state_tree(sim_run *r) { return ((fl_state *)r->rs)->tree; }
void fl_state_set_tree(sim_run *r, fl_tree *t) { ((fl_state *)r->rs)->tree = t; }

/* Device i's local training of this round, at its DVFS level (every
 * topology): its nominal time joins the round's pace, the governor's level
 * sets its busy power; returns the time at that level. */
double fl_train_s(sim_run *r, size_t i) {
  fl_state *fs = r->rs;
  double t = sim_dev_compute_s(r, i, r->alloc[i], true, 0);
  if (t > fs->pace_now) fs->pace_now = t;
  return fl_dvfs_train(r, i, t, fs->pace_prev);
}

static void fl_start_round(sim_run *r) {
  fl_state *fs = r->rs;
  fs->pace_prev = fs->pace_now; /* the slack governor's target: the last round's pace */
  fs->pace_now = 0;
  if (fs->tree) fl_tree_start_round(r);
  else if (fs->ring) fl_ring_start(r);
  else fl_round_start(r);
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
  fl_topology topo = fl_topology_of(o);
  fs->threshold = topo == FL_THRESHOLD;
  fs->fold = fs->threshold && !strcmp(o->late, "fold");
  fs->ring = topo == FL_RING;
  r->rs = fs;
  fs->energy.ports = r->ndev + !fs->ring; /* a ring has no server */
  if (topo == FL_HIERARCHICAL) {
    hs_status st = fl_tree_setup(r, err);
    if (st == HS_OK) fs->energy.ports += fl_tree_nodes(r);
    return st;
  }
  if (topo == FL_STAR || topo == FL_THRESHOLD) fl_round_setup(r);
  return HS_OK;
}

fl_topology fl_topology_of(const fl_opts *o) {
  static const char *const names[] = {"star", "threshold", "hierarchical", "ring"};
  for (int k = 0; o->topology && k < 4; k++)
    if (!strcmp(o->topology, names[k])) return (fl_topology)k;
  return FL_STAR; /* regime pma: no options */
}

static void fl_teardown(sim_run *r) {
  fl_state *fs = r->rs;
  if (!fs) return;
  fl_tree_free(fs->tree);
  hs_free(fs->arrived_n);
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

/* What a topology cannot do (sim_regime.cannot). */
static const char *fl_cannot(const void *opts, unsigned what) {
  const fl_opts *o = opts;
  fl_topology t = fl_topology_of(o);
  if (what & SIM_CAN_DEADLINE) {
    if (t == FL_THRESHOLD)
      return "topology \"threshold\" closes its round at the K-th update, not at a deadline";
    if (t == FL_HIERARCHICAL)
      return "topology \"hierarchical\" has no round deadline (its aggregators wait for "
             "every child)";
    if (t == FL_RING) return "topology \"ring\" has no round deadline (no server closes the round)";
  }
  if ((what & SIM_CAN_LEARN) && t == FL_THRESHOLD && o->late && !strcmp(o->late, "fold"))
    return "late \"fold\" folds updates trained from an older model, which a FedAvg round "
           "cannot express (use late \"drop\")";
  return NULL;
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
    .can = SIM_CAN_FEDAVG | SIM_CAN_DEADLINE | SIM_CAN_AVAIL | SIM_CAN_SHARED,
    .cannot = fl_cannot,
    /* the participation byte; hierarchical: the leaves' two counts */
    .dev_bytes = 1 + 2 * sizeof(uint32_t),
    .setup = fl_setup,
    .start_round = fl_start_round,
    .teardown = fl_teardown,
    .summary_fields = fl_summary,
    .system_energy = fl_system_energy,
    .metric_group = "system",
};

/* pma's one option, regime.server, read by fl's host reader: absent, the
 * server aggregates in 0 s and nothing is printed (pma's defaults and
 * outputs as before); present, the same forms and defaults as fl's. */
static hs_status pma_parse(sim_opt_ctx *c, const cJSON *node, void *opts,
                           const sim_regime_opt *opt) {
  fl_opts *o = opts;
  if (!node) return HS_OK;
  o->srv_given = true;
  return fl_energy_parse(c, node, o, opt->key);
}

static void pma_print(cJSON *reg, const void *opts, const sim_regime_opt *opt) {
  const fl_opts *o = opts;
  if (o->srv_given) fl_energy_print(reg, o, opt->key);
}

static void pma_opts_free(void *opts) { fl_host_free(&((fl_opts *)opts)->srv); }

static const sim_regime_opt pma_table[] = {
    {"server", SIM_OPT_CUSTOM, offsetof(fl_opts, srv), 0, 0, 0, 0, NULL, NULL,
     "the server's aggregation time, as fl's regime.server: a profile name, or {profile, "
     "s_per_update, s_per_mb, idle_w, busy_w} (default: none, 0 s; pma reports no server "
     "energy, fl does)"},
};

/* Every round-level policy, selection included; a step-level one (ema-batch)
 * sizes optimiser steps, which local training does not synchronise. No
 * telemetry hook: a participant reports the run's default, its allocation
 * and the busy time and energy the ledger saw in the round (a lost one's
 * allocation is 0 by then, so it reports 0/0/0). Options: fl's, zeroed
 * (topology star, no DVFS), but for regime.server: the server's aggregation
 * time (fl_close_round), 0 s unless written; no system energy metrics (its
 * powers are read and printed, unused: regime fl reports them). */
const sim_regime sim_regime_pma = {
    .name = "pma",
    .summary = "periodic model averaging: local training, sync at round end",
    .opts = pma_table,
    .nopts = sizeof pma_table / sizeof pma_table[0],
    .opt_parse = pma_parse,
    .opt_print = pma_print,
    .opts_free = pma_opts_free,
    .opts_size = sizeof(fl_opts),
    .caps_refused = HS_POLICY_CAP_STEP_LEVEL,
    .can = SIM_CAN_FEDAVG | SIM_CAN_DEADLINE | SIM_CAN_AVAIL | SIM_CAN_SHARED,
    .dev_bytes = 1, /* the participation byte */
    .setup = fl_setup,
    .start_round = fl_start_round,
    .teardown = fl_teardown,
};
