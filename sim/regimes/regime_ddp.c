/* regime_ddp.c: synchronous data parallelism (ddp) and hierarchical federated
 * DDP (hfl-ddp), on one piece of machinery: a DDP group.
 *
 * A DDP group is a set of ranks that run S optimiser steps per round. In step s
 * every rank trains its per-step batch b_{i,s} (the controller's schedule, or
 * ema-batch's step-level sizing), then all ranks all-reduce the gradient; the
 * step ends when the all-reduce does. The all-reduce costs the alpha-beta time
 * of the scenario's collective (hs_collective), with the slowest rank's access
 * link (ddp) or the silo fabric (hfl-ddp); a star's parameter server sits
 * behind the server link (ddp: its latency counts, as for a fluid upload) or on
 * the silo fabric (hfl-ddp: the WAN only carries silo models). The per-round
 * overhead of a profile (data loading, evaluation) is trained before step 0
 * (a speed trace stretches it first, then the step) and not counted as
 * forward-pass time. The forward-pass time of each rank in each step is kept,
 * and the round's compute_cv is the mean, over the steps in which some rank
 * trained, of its coefficient of variation across the ranks that had samples
 * (a step that only all-reduces has no forward time to vary). The telemetry a rank reports is
 * the sum of its steps' forward-backward times (and that time at busy power):
 * what a DDP trainer times around its steps. The per-round overhead is left
 * out, because in DDP it does not stretch the steps that everyone waits on;
 * counting it would teach the controller to starve overhead-heavy ranks and
 * unbalance the steps.
 *
 * ddp: one group of all devices; the round ends after S steps.
 * hfl-ddp: one group per silo, stepping independently; after S steps each
 * silo's first member uploads the silo model to the server (a fluid flow
 * through the server link) and the silo waits; the round ends when every silo
 * has uploaded, and the server has aggregated them (regime.server:
 * silos x (s_per_update + s_per_mb x model MB) seconds, the same cost as a
 * PMA server's; default none). The next round starts with the server sending the average to
 * every silo leader, then the leader broadcasting it over the silo fabric.
 * Reallocation never crosses a silo: the controller runs with one group per silo.
 *
 * Events per step: one per rank (its compute ends) and one per group (the
 * all-reduce ends).
 *
 * Options (table below): steps_per_round, collective, and for hfl-ddp silos
 * (custom: each names its members by device or entry name and its fabric
 * link; every device in exactly one silo; optional "samples", the silo's data
 * budget per round (all silos or none, summing to samples_per_round), and
 * "deadband", the silo's own keep-or-change decision, both handed to the
 * controller with hs_controller_set_group_rules). A member that names an
 * excluded entry (count 0) stays in the silo as written and adds no rank; a
 * silo left with no rank is refused, not dropped (silo indices, budgets and
 * the printed scenario stay as written). The silos are the
 * participant groups of the controller; without per-silo deadbands one
 * decision covers all silos (the controller's default). Per-device state (the round's forward-backward
 * time and energy to report) lives in ddp_state, not in sim_dev.
 * A rank that becomes unavailable (scenario "dynamics") pauses: its step's
 * computation resumes when it returns and the all-reduce waits for it (a
 * DDP job cannot drop a rank mid-step without restarting); an absence
 * during an all-reduce only powers it off (the collective's time is not
 * stretched: a simplification). Under throttling a rank reports the energy
 * its steps drew at their levels.
 * Policies: no participant selection (a rank with no samples still all-reduces
 * every step, and oort has no meaning); a step-level policy (ema-batch) sizes
 * the steps; hfl-ddp needs a policy that takes groups. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "sim/hs_collective.h"
#include "jpath.h"
#include "sim_run.h"
#include "sim_learning.h"

typedef struct ddp_silo {
  char *name;
  char **members; /* device names as written (expanded names or entry names) */
  size_t nmembers;
  char *fabric;   /* link of the intra-silo all-reduce (default: the members' link) */
  double deadband;  /* this silo's own deadband decision (NAN: one decision for all) */
  uint64_t samples; /* this silo's data budget per round (0: in proportion to its size) */
} ddp_silo;

/* The options of ddp and hfl-ddp (hs_regime_spec.opts). */
typedef struct ddp_opts {
  uint32_t steps_per_round; /* optimiser steps S per round */
  char *collective;         /* ring | tree | star; hierarchical needs a per-node tier the
                               scenario does not describe yet */
  ddp_silo *silos;          /* hfl-ddp */
  size_t nsilos;
  uint32_t *silo_of;        /* hfl-ddp: silo of each expanded device */
  struct {                  /* hfl-ddp: regime.server, the aggregation of the silo models */
    double s_per_update, s_per_mb;
    bool given;
  } server;
} ddp_opts;

typedef struct ddp_group {
  size_t *ranks;        /* device indices */
  size_t nranks;
  uint32_t steps, step;
  uint64_t *batch;      /* nranks x steps, this round */
  double *fwd_s;        /* nranks: forward time of the current step */
  double *fwd_j;        /* nranks: its energy (throttle levels included); NAN: fwd_s x busy_w */
  size_t pending;
  double allreduce_s;
  double bcast_s;       /* hfl-ddp: leader -> members over the fabric */
  double xfer_t0;       /* hfl-ddp: when the leader's download or upload began */
  double xfer_s;        /* hfl-ddp: the leader's download plus upload this round (the
                           silo waits for both) */
  double cv_sum;
  uint32_t cv_steps;
  hs_controller *step_ctl; /* ema-batch: step-level sizing (not owned in ddp) */
  bool own_step_ctl;
} ddp_group;

typedef struct ddp_state {
  ddp_group *groups;
  size_t ngroups;
  size_t pending_groups;
  bool federated;        /* hfl-ddp */
  bool ema_batch;        /* a step-level policy sizes the steps */
  double *window_s;      /* per device: forward-backward time of the round's steps */
  double *window_j;      /* per device: that time at busy power */
} ddp_state;

static void step_start(sim_run *r, ddp_group *g);

/* CV of the forward times of the ranks that trained in this step; NAN when
 * none did (the step was only an all-reduce: nothing to vary). */
static double group_cv(const ddp_group *g) {
  double sum = 0, sq = 0;
  size_t n = 0;
  for (size_t k = 0; k < g->nranks; k++) {
    if (g->batch[k * g->steps + g->step] == 0) continue;
    sum += g->fwd_s[k];
    sq += g->fwd_s[k] * g->fwd_s[k];
    n++;
  }
  if (n == 0) return NAN;
  double mean = sum / (double)n, var = sq / (double)n - mean * mean;
  return mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
}

static void group_finished(sim_run *r, ddp_group *g);

static void on_allreduced(hs_engine *eng, void *subject, uint64_t gi) {
  (void)eng;
  sim_run *r = subject;
  ddp_state *ds = r->rs;
  ddp_group *g = &ds->groups[gi];
  for (size_t k = 0; k < g->nranks; k++) {
    size_t i = g->ranks[k];
    sim_dev_state(r, i, HS_POWER_IDLE);
    ds->window_s[i] += g->fwd_s[k];
    ds->window_j[i] += isnan(g->fwd_j[k]) ? g->fwd_s[k] * sim_dev_busy_w(r, i) : g->fwd_j[k];
  }
  double cv = group_cv(g);
  if (!isnan(cv)) {
    g->cv_sum += cv;
    g->cv_steps++;
  }
  if (ds->ema_batch) {
    /* Feed the step times, as the ranks' meters report them (with the
     * scenario's telemetry noise), to the step-level sizing; it plans the
     * next step. */
    size_t n = hs_controller_size(g->step_ctl);
    double *t = sim_run_scratch(r);
    if (!g->own_step_ctl)
      for (size_t k = 0; k < n; k++) t[k] = 0;
    for (size_t k = 0; k < g->nranks; k++)
      t[g->own_step_ctl ? k : g->ranks[k]] = sim_dev_reported_s(r, g->ranks[k], g->fwd_s[k]);
    hs_error err = {0};
    if (hs_controller_step_update(g->step_ctl, t, n, &err) != HS_OK) {
      sim_fail(r, err.status, err.msg);
      return;
    }
  }
  if (r->learn) /* learning: the step's all-reduced gradient, one optimiser step */
    sim_learn_ddp_step(r->learn, gi, g->ranks, g->batch + g->step, g->steps, g->nranks,
                       (uint64_t)r->round << 32 | g->step);
  if (++g->step < g->steps)
    step_start(r, g);
  else
    group_finished(r, g);
}

static void on_rank_done(hs_engine *eng, void *subject, uint64_t arg) {
  sim_run *r = subject;
  ddp_state *ds = r->rs;
  ddp_group *g = &ds->groups[arg >> 32];
  size_t k = (size_t)(arg & 0xffffffffu);
  sim_dev_state(r, g->ranks[k], HS_POWER_IDLE);
  if (--g->pending > 0) return;
  for (size_t j = 0; j < g->nranks; j++) sim_dev_state(r, g->ranks[j], HS_POWER_COMM);
  hs_engine_schedule_in(eng, g->allreduce_s, 0, on_allreduced, r, arg >> 32);
}

/* ema-batch: copy the planned batches of the next step into column `step`. */
static void take_step_batches(ddp_group *g) {
  const uint64_t *b = hs_controller_step_batches(g->step_ctl);
  for (size_t k = 0; k < g->nranks; k++)
    g->batch[k * g->steps + g->step] = g->own_step_ctl ? b[k] : b[g->ranks[k]];
}

static void step_start(sim_run *r, ddp_group *g) {
  ddp_state *ds = r->rs;
  uint64_t gi = (uint64_t)(g - ds->groups);
  if (ds->ema_batch) take_step_batches(g);
  g->pending = 0;
  for (size_t k = 0; k < g->nranks; k++) {
    size_t i = g->ranks[k];
    uint64_t b = g->batch[k * g->steps + g->step];
    /* The per-round overhead comes first, so a speed change times the step's
     * forward-backward from where the overhead ends. */
    double t = g->step == 0 ? sim_dev_stretch_s(r, i, sim_dev_sp(r, i)->overhead_s, 0) : 0;
    g->fwd_s[k] = 0;
    g->fwd_j[k] = NAN;
    if (b > 0) {
      g->fwd_s[k] = sim_dev_compute_s(r, i, b, false, t);
      g->fwd_j[k] = sim_dev_last_compute_j(r, i);
      t += g->fwd_s[k];
    }
    if (t <= 0) continue;
    g->pending++;
    sim_dev_state(r, i, HS_POWER_BUSY);
    hs_engine_schedule_in(r->eng, t, 0, on_rank_done, r, gi << 32 | k);
  }
  if (g->pending == 0) {
    for (size_t j = 0; j < g->nranks; j++) sim_dev_state(r, g->ranks[j], HS_POWER_COMM);
    hs_engine_schedule_in(r->eng, g->allreduce_s, 0, on_allreduced, r, gi);
  }
}

static void round_done(sim_run *r) {
  ddp_state *ds = r->rs;
  double cv = 0;
  uint32_t steps = 0;
  for (size_t gi = 0; gi < ds->ngroups; gi++) {
    ddp_group *g = &ds->groups[gi];
    cv += g->cv_sum;
    steps += g->cv_steps;
    if (ds->ema_batch) /* the samples actually trained, for telemetry and rows */
      for (size_t k = 0; k < g->nranks; k++) {
        uint64_t n = 0;
        for (uint32_t s = 0; s < g->steps; s++) n += g->batch[k * g->steps + s];
        sim_run_set_alloc(r, g->ranks[k], n);
      }
  }
  r->round_cv = steps ? cv / steps : 0;
  if (r->learn) { /* learning: silo models averaged, weighted by silo samples */
    for (size_t gi = 0; gi < ds->ngroups; gi++) {
      const ddp_group *g = &ds->groups[gi];
      double n = 0;
      for (size_t k = 0; k < g->nranks * g->steps; k++) n += (double)g->batch[k];
      sim_run_scratch(r)[gi] = n;
    }
    sim_learn_groups_end(r->learn, sim_run_scratch(r));
  }
  sim_round_end(r);
}

static void on_aggregated(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)arg;
  round_done(subject);
}

static void on_silo_uploaded(hs_engine *eng, void *subject, uint64_t gi) {
  sim_run *r = subject;
  ddp_state *ds = r->rs;
  ddp_group *g = &ds->groups[gi];
  g->xfer_s += hs_engine_now(eng) - g->xfer_t0;
  sim_dev_state(r, g->ranks[0], HS_POWER_IDLE);
  if (--ds->pending_groups) return;
  /* The server aggregates the silo models before the round ends (none by
   * default: the round ends with the last upload, as before the option). */
  const ddp_opts *o = r->sc->regime.opts;
  double agg = (double)ds->ngroups *
               (o->server.s_per_update + o->server.s_per_mb * (double)r->sc->model_bytes / 1e6);
  if (agg > 0) hs_engine_schedule_in(eng, agg, 0, on_aggregated, r, 0);
  else round_done(r);
}

static void group_finished(sim_run *r, ddp_group *g) {
  ddp_state *ds = r->rs;
  if (!ds->federated) {
    round_done(r);
    return;
  }
  g->xfer_t0 = hs_engine_now(r->eng);
  sim_dev_model_transfer(r, g->ranks[0], on_silo_uploaded, (uint64_t)(g - ds->groups));
}

static void group_begin(sim_run *r, ddp_group *g) {
  ddp_state *ds = r->rs;
  g->step = 0;
  g->cv_sum = 0;
  g->cv_steps = 0;
  if (r->learn) sim_learn_group_begin(r->learn, (size_t)(g - ds->groups));
  if (!ds->ema_batch) {
    /* The controller's n_i for this round, spread over S steps. */
    uint64_t *n = hs_malloc(g->nranks * sizeof *n);
    for (size_t k = 0; k < g->nranks; k++) n[k] = r->alloc[g->ranks[k]];
    hs_ddp_schedule(n, g->nranks, g->steps, g->batch);
    hs_free(n);
  }
  step_start(r, g);
}

static void on_silo_broadcast(hs_engine *eng, void *subject, uint64_t gi) {
  (void)eng;
  sim_run *r = subject;
  ddp_state *ds = r->rs;
  ddp_group *g = &ds->groups[gi];
  for (size_t k = 0; k < g->nranks; k++) sim_dev_state(r, g->ranks[k], HS_POWER_IDLE);
  group_begin(r, g);
}

static void on_silo_model(hs_engine *eng, void *subject, uint64_t gi) {
  sim_run *r = subject;
  ddp_state *ds = r->rs;
  ddp_group *g = &ds->groups[gi];
  g->xfer_s = hs_engine_now(eng) - g->xfer_t0;
  for (size_t k = 0; k < g->nranks; k++) sim_dev_state(r, g->ranks[k], HS_POWER_COMM);
  hs_engine_schedule_in(eng, g->bcast_s, 0, on_silo_broadcast, r, gi);
}

static void ddp_start_round(sim_run *r) {
  ddp_state *ds = r->rs;
  if (!ds->federated) {
    group_begin(r, &ds->groups[0]);
    return;
  }
  ds->pending_groups = ds->ngroups;
  for (size_t gi = 0; gi < ds->ngroups; gi++) {
    ds->groups[gi].xfer_t0 = hs_engine_now(r->eng);
    sim_dev_model_download(r, ds->groups[gi].ranks[0], on_silo_model, gi);
  }
}

/* --- set-up ----------------------------------------------------------------- */

/* The all-reduce of one step. alpha_s, beta_bps: the ranks' latency and
 * bandwidth. A star goes through a parameter server on the link (server_alpha_s,
 * server_beta_bps): its latency adds to alpha, as for a fluid upload. */
static hs_status allreduce_time(const sim_run *r, const ddp_group *g, const char *coll_name,
                                double alpha_s, double beta_bps, double server_alpha_s,
                                double server_beta_bps, double *out, hs_error *err) {
  const hs_collective_type *ct = hs_collective_find(coll_name);
  if (!ct || ct->uses_inter_tier)
    return hs_error_set(err, HS_EINVAL,
                        "%s: regime.collective: \"%s\" is not a flat all-reduce here "
                        "(use ring, tree or star)",
                        r->sc->path, coll_name);
  hs_coll_params p = {0};
  p.bytes = r->sc->model_bytes;
  p.ranks = (uint32_t)g->nranks;
  p.alpha_s = alpha_s + (ct->uses_server ? server_alpha_s : 0);
  p.beta_bps = beta_bps;
  p.ranks_per_node = 1;
  p.server_beta_bps = server_beta_bps;
  hs_error cerr = {0};
  if (hs_collective_time(ct, &p, out, &cerr) != HS_OK)
    return hs_error_set(err, cerr.status, "%s: regime.collective: %s", r->sc->path, cerr.msg);
  if (!isfinite(*out))
    return hs_error_set(err, HS_EINVAL,
                        "%s: model_bytes: a %s all-reduce of %g bytes takes no finite time",
                        r->sc->path, coll_name, r->sc->model_bytes);
  return HS_OK;
}

static void group_alloc(ddp_group *g, size_t nranks, uint32_t steps) {
  g->ranks = hs_malloc(nranks * sizeof *g->ranks);
  g->nranks = nranks;
  g->steps = steps;
  g->batch = hs_calloc(nranks * steps, sizeof *g->batch);
  g->fwd_s = hs_calloc(nranks, sizeof *g->fwd_s);
  g->fwd_j = hs_calloc(nranks, sizeof *g->fwd_j);
}

static void ddp_teardown(sim_run *r) {
  ddp_state *ds = r->rs;
  if (!ds) return;
  for (size_t gi = 0; gi < ds->ngroups; gi++) {
    hs_free(ds->groups[gi].ranks);
    hs_free(ds->groups[gi].batch);
    hs_free(ds->groups[gi].fwd_s);
    hs_free(ds->groups[gi].fwd_j);
    if (ds->groups[gi].own_step_ctl) hs_controller_destroy(ds->groups[gi].step_ctl);
  }
  hs_free(ds->groups);
  hs_free(ds->window_s);
  hs_free(ds->window_j);
  hs_free(ds);
  r->rs = NULL;
}

static const ddp_opts *opts_of(const hs_scenario *sc) { return sc->regime.opts; }

static uint32_t steps_of(const hs_scenario *sc) {
  return opts_of(sc)->steps_per_round ? opts_of(sc)->steps_per_round : 1;
}

static const char *collective_of(const hs_scenario *sc) {
  const char *c = opts_of(sc)->collective;
  return c && c[0] ? c : "ring";
}

static ddp_state *state_create(sim_run *r) {
  ddp_state *ds = hs_calloc(1, sizeof *ds);
  r->rs = ds;
  ds->ema_batch = (hs_policy_caps(r->sc->policy.kind) & HS_POLICY_CAP_STEP_LEVEL) != 0;
  ds->window_s = hs_calloc(r->ndev, sizeof *ds->window_s);
  ds->window_j = hs_calloc(r->ndev, sizeof *ds->window_j);
  return ds;
}

static hs_status ddp_setup(sim_run *r, hs_error *err) {
  ddp_state *ds = state_create(r);
  ds->ngroups = 1;
  ds->groups = hs_calloc(1, sizeof *ds->groups);
  ddp_group *g = &ds->groups[0];
  group_alloc(g, r->ndev, steps_of(r->sc));
  double alpha = 0, beta = INFINITY;
  for (size_t i = 0; i < r->ndev; i++) {
    g->ranks[i] = i;
    if (sim_dev_sp(r, i)->access_latency_s > alpha) alpha = sim_dev_sp(r, i)->access_latency_s;
    if (sim_dev_sp(r, i)->access_bps < beta) beta = sim_dev_sp(r, i)->access_bps;
  }
  if (r->learn) sim_learn_groups(r->learn, 1); /* learning: one model for the group */
  return allreduce_time(r, g, collective_of(r->sc), alpha, beta,
                        hs_net_link_latency_s(r->net, r->server_link),
                        hs_net_link_bandwidth_bps(r->net, r->server_link), &g->allreduce_s, err);
}

/* After the controller exists: ema-batch step sizing comes from it (ddp). */
static void ddp_bind_controller(sim_run *r) {
  ddp_state *ds = r->rs;
  if (ds->ema_batch && !ds->federated) ds->groups[0].step_ctl = r->ctl;
}

static hs_status hfl_setup(sim_run *r, hs_error *err) {
  const hs_scenario *sc = r->sc;
  const ddp_opts *o = opts_of(sc);
  ddp_state *ds = state_create(r);
  ds->federated = true;
  ds->ngroups = o->nsilos;
  ds->groups = hs_calloc(ds->ngroups ? ds->ngroups : 1, sizeof *ds->groups);
  if (ds->ngroups == 0)
    return hs_error_set(err, HS_EINVAL, "%s: regime.silos: hfl-ddp needs at least one silo",
                        sc->path);
  /* Members in device order; the first one is the silo's leader. */
  const uint32_t *silo_of = o->silo_of;
  HS_ASSERT(silo_of, "hfl-ddp scenarios carry a silo per device");
  size_t *size = hs_calloc(ds->ngroups, sizeof *size);
  for (size_t i = 0; i < r->ndev; i++) size[silo_of[i]]++;
  for (size_t s = 0; s < ds->ngroups; s++) {
    group_alloc(&ds->groups[s], size[s], steps_of(sc));
    size[s] = 0;
  }
  for (size_t i = 0; i < r->ndev; i++) {
    ddp_group *g = &ds->groups[silo_of[i]];
    g->ranks[size[silo_of[i]]++] = i;
  }
  hs_free(size);
  for (size_t s = 0; s < ds->ngroups; s++) {
    const ddp_silo *silo = &o->silos[s];
    ddp_group *g = &ds->groups[s];
    if (g->nranks == 0)
      return hs_error_set(err, HS_EINVAL, "%s: regime.silos[%zu]: silo \"%s\" has no device",
                          sc->path, s, silo->name);
    const hs_link_spec *fabric = hs_scenario_link(sc, silo->fabric);
    HS_ASSERT(fabric, "scenario validated: silo fabric link exists");
    double alpha = fabric->latency_ms * HS_NET_S_PER_MS;
    double beta = fabric->bandwidth_mbps * HS_NET_BPS_PER_MBPS;
    /* Inside a silo, a star's server sits on the fabric, not behind the WAN. */
    hs_status st =
        allreduce_time(r, g, collective_of(sc), alpha, beta, 0, beta, &g->allreduce_s, err);
    if (st != HS_OK) return st;
    g->bcast_s = g->nranks > 1 ? alpha + 8.0 * sc->model_bytes / beta : 0;
  }
  if (r->learn) sim_learn_groups(r->learn, ds->ngroups); /* learning: a model per silo */
  return HS_OK;
}

/* Per-silo data budgets and deadband decisions (silos[].samples, .deadband):
 * handed to the controller, whose groups are the silos in order. A silo
 * without its own deadband takes the policy's; with none at all the one
 * decision for all silos stays (the default). */
static hs_status silo_rules(sim_run *r, hs_error *err) {
  const ddp_opts *o = opts_of(r->sc);
  bool budgets = false, bands = false;
  for (size_t s = 0; s < o->nsilos; s++) {
    budgets |= o->silos[s].samples > 0;
    bands |= !isnan(o->silos[s].deadband);
  }
  if (!budgets && !bands) return HS_OK;
  uint64_t *b = hs_calloc(o->nsilos, sizeof *b);
  double *d = hs_calloc(o->nsilos, sizeof *d);
  for (size_t s = 0; s < o->nsilos; s++) {
    b[s] = o->silos[s].samples;
    d[s] = isnan(o->silos[s].deadband) ? -1 : o->silos[s].deadband;
  }
  hs_status st = hs_controller_set_group_rules(r->ctl, budgets ? b : NULL, bands ? d : NULL,
                                               o->nsilos, err);
  if (st != HS_OK) hs_error_prefix(err, "%s: regime.silos", r->sc->path);
  hs_free(b);
  hs_free(d);
  return st;
}

/* ema-batch in hfl-ddp: silos step independently, so each silo sizes its own
 * steps with its own step-level controller over its members and its budget. */
static hs_status hfl_bind_controller(sim_run *r, hs_error *err) {
  ddp_state *ds = r->rs;
  hs_status st = silo_rules(r, err);
  if (st != HS_OK || !ds->ema_batch) return st;
  const uint64_t *alloc = hs_controller_allocation(r->ctl);
  for (size_t s = 0; s < ds->ngroups; s++) {
    ddp_group *g = &ds->groups[s];
    uint64_t budget = 0;
    for (size_t k = 0; k < g->nranks; k++) budget += alloc[g->ranks[k]];
    hs_policy_config cfg = r->sc->policy;
    cfg.steps_per_round = g->steps;
    g->step_ctl = hs_controller_create(&cfg, g->nranks, NULL, budget, err);
    if (!g->step_ctl) return err ? err->status : HS_EINVAL;
    g->own_step_ctl = true;
  }
  return HS_OK;
}

static hs_status ddp_bind(sim_run *r, hs_error *err) {
  ddp_state *ds = r->rs;
  if (ds->federated) return hfl_bind_controller(r, err);
  ddp_bind_controller(r);
  return HS_OK;
}

/* What a DDP trainer times around its steps: the forward-backward time of the
 * round's steps (and that time at busy power), not the per-round overhead.
 * Its communication (comm_s): the group's, the same for every rank: the
 * all-reduces and the broadcast it took part in (the ledger's COMM time),
 * and in hfl-ddp the silo's download and upload, which only the leader's link
 * carries but every rank of the silo waits for. A rank's round is its group's lockstep,
 * so a controller that balances whole rounds (round-time) must not see the
 * leader's transfers as the leader's own: it would move samples off the leader
 * and stretch every step of the silo. */
static void ddp_telemetry(sim_run *r, size_t i, sim_meter *m) {
  ddp_state *ds = r->rs;
  if (ds->federated) {
    const ddp_group *g = &ds->groups[opts_of(r->sc)->silo_of[i]];
    if (g->ranks[0] != i) m->comm_s += g->xfer_s;
  }
  m->samples = r->alloc[i];
  m->train_s = ds->window_s[i];
  m->train_j = ds->window_j[i];
  ds->window_s[i] = 0;
  ds->window_j[i] = 0;
}

/* --- options ---------------------------------------------------------------- */

/* steps_per_round defaults to max(1, samples_per_round / (batch_size x
 * devices)): the mean per-rank batch is batch_size. */
static const char *ddp_prepare(const hs_scenario *sc, const void *opts, const sim_regime_opt *o,
                               double *def) {
  (void)opts;
  if (!strcmp(o->key, "steps_per_round")) {
    double per = (double)sc->batch_size * (double)sc->total_devices;
    *def = floor((double)sc->samples_per_round / per);
    if (*def < 1) *def = 1;
    if (*def > 1e7) *def = 1e7;
  }
  return NULL;
}

/* A silo's optional number: deadband (>= 0) or samples (an integer >= 1). */
static hs_status silo_number(sim_opt_ctx *c, const cJSON *e, const char *key, bool integer,
                             double *out) {
  static const sim_opt_range samples = {.lo = 1, .hi = 9007199254740992.0,
                                        .want = "expected a whole number of samples >= 1"};
  static const sim_opt_range nonneg = {.lo = 0, .hi = INFINITY, .want = "expected a number >= 0"};
  return integer ? sim_opt_get_uint(c, e, key, false, *out, &samples, out)
                 : sim_opt_get_num(c, e, key, false, *out, &nonneg, out);
}

static hs_status parse_silo(sim_opt_ctx *c, const cJSON *e, ddp_opts *o, size_t si) {
  const hs_scenario *sc = sim_opt_scenario(c);
  ddp_silo *silo = &o->silos[si];
  static const char *const keys[] = {"name", "members", "fabric", "deadband", "samples", NULL};
  hs_status st;
  if ((st = sim_opt_object(c, e, keys)) || (st = sim_opt_name(c, e, "name", true, &silo->name)))
    return st;
  double samples = 0;
  silo->deadband = NAN;
  if ((st = silo_number(c, e, "deadband", false, &silo->deadband)) ||
      (st = silo_number(c, e, "samples", true, &samples)))
    return st;
  silo->samples = (uint64_t)samples;
  for (size_t j = 0; j < si; j++)
    if (!strcmp(o->silos[j].name, silo->name)) {
      sim_opt_key(c, "name");
      return sim_opt_fail(c, HS_EINVAL, "silo \"%s\" is already regime.silos[%zu]", silo->name,
                          j);
    }
  const cJSON *mem = cJSON_GetObjectItemCaseSensitive(e, "members");
  if (!mem) return sim_opt_missing(c, "members");
  size_t m1 = sim_opt_key(c, "members");
  if (!cJSON_IsArray(mem))
    return sim_opt_fail(c, HS_ETYPE, "expected an array of device names, got %s",
                        sim_json_type(mem));
  size_t n = (size_t)cJSON_GetArraySize(mem);
  if (!n) return sim_opt_fail(c, HS_EINVAL, "a silo needs at least one member");
  silo->members = hs_calloc(n, sizeof *silo->members);
  const char *common = NULL;
  bool same = true;
  size_t j = 0, present = 0; /* members that name a device (not an excluded entry) */
  for (const cJSON *m = mem->child; m; m = m->next, j++) {
    size_t m2 = sim_opt_index(c, j);
    if (!cJSON_IsString(m))
      return sim_opt_fail(c, HS_ETYPE, "expected a device name, got %s", sim_json_type(m));
    silo->members[silo->nmembers++] = hs_strdup(m->valuestring);
    size_t first, count;
    char b[80];
    if (!hs_scenario_find_name(sc, m->valuestring, &first, &count))
      return sim_opt_fail(c, HS_ENOENT,
                          "no device \"%s\" (name an entry of devices, or \"<name>-<k>\" for one "
                          "device of an entry with count > 1)",
                          sim_opt_shown(m->valuestring, b, sizeof b));
    for (size_t k = first; k < first + count; k++) {
      if (o->silo_of[k] != UINT32_MAX)
        return sim_opt_fail(c, HS_EINVAL, "device \"%s\" is already in silo \"%s\"",
                            hs_scenario_device_name(sc, k), o->silos[o->silo_of[k]].name);
      o->silo_of[k] = (uint32_t)si;
    }
    if (count) { /* 0: an excluded entry (count 0), kept as written, no member */
      const char *link = sc->devices[hs_scenario_device_entry(sc, first)].link;
      if (!common) common = link;
      else if (strcmp(common, link)) same = false;
      present++;
    }
    sim_opt_pop(c, m2);
  }
  if (!present)
    return sim_opt_fail(c, HS_EINVAL,
                        "every member is an excluded entry (count 0): the silo would be "
                        "empty (include one, or remove the silo)");
  sim_opt_pop(c, m1);
  if (!cJSON_GetObjectItemCaseSensitive(e, "fabric") && !same)
    return sim_opt_fail(c, HS_EMISSING,
                        "\"fabric\" is required: the members attach by different links (name "
                        "the link of the intra-silo all-reduce)");
  if ((st = sim_opt_name(c, e, "fabric", false, &silo->fabric))) return st;
  if (!silo->fabric) silo->fabric = hs_strdup(common);
  if (!hs_scenario_link(sc, silo->fabric)) {
    sim_opt_key(c, "fabric");
    return sim_opt_fail(c, HS_ENOENT, "no link \"%s\" in network.links", silo->fabric);
  }
  return HS_OK;
}

static hs_status silos_parse(sim_opt_ctx *c, const cJSON *silos, void *opts,
                             const sim_regime_opt *opt) {
  ddp_opts *o = opts;
  const hs_scenario *sc = sim_opt_scenario(c);
  if (!silos) return sim_opt_missing(c, opt->key);
  size_t m1 = sim_opt_key(c, opt->key);
  if (!cJSON_IsArray(silos))
    return sim_opt_fail(c, HS_ETYPE, "expected an array of silos, got %s", sim_json_type(silos));
  size_t n = (size_t)cJSON_GetArraySize(silos);
  if (!n) return sim_opt_fail(c, HS_EINVAL, "hfl-ddp needs at least one silo");
  o->silos = hs_calloc(n, sizeof *o->silos);
  o->silo_of = hs_malloc(sc->total_devices * sizeof *o->silo_of);
  for (size_t k = 0; k < sc->total_devices; k++) o->silo_of[k] = UINT32_MAX;
  size_t i = 0;
  for (const cJSON *e = silos->child; e; e = e->next, i++) {
    o->nsilos = i + 1;
    size_t m2 = sim_opt_index(c, i);
    hs_status st = parse_silo(c, e, o, i);
    if (st) return st;
    sim_opt_pop(c, m2);
  }
  /* Data budgets: all silos or none, summing to samples_per_round. */
  uint64_t with = 0, sum = 0;
  for (size_t s = 0; s < o->nsilos; s++) {
    with += o->silos[s].samples > 0;
    sum += o->silos[s].samples;
  }
  if (with && (with != o->nsilos || sum != sc->samples_per_round))
    return sim_opt_fail(c, HS_EINVAL,
                        "\"samples\" must be given for every silo and sum to samples_per_round "
                        "(%llu); %llu of %zu silos give %llu",
                        (unsigned long long)sc->samples_per_round, (unsigned long long)with,
                        o->nsilos, (unsigned long long)sum);
  for (size_t k = 0; k < sc->total_devices; k++)
    if (o->silo_of[k] == UINT32_MAX)
      return sim_opt_fail(c, HS_EINVAL,
                          "device \"%s\" is in no silo (hfl-ddp puts every device in one)",
                          hs_scenario_device_name(sc, k));
  sim_opt_pop(c, m1);
  return HS_OK;
}

/* regime.server of hfl-ddp: {s_per_update, s_per_mb}, seconds per silo model
 * and per MB of it (the PMA server's keys; hfl-ddp has no server energy, so
 * a profile or powers are refused). */
static hs_status server_parse(sim_opt_ctx *c, const cJSON *node, ddp_opts *o, const sim_regime_opt *opt) {
  static const char *const keys[] = {"s_per_update", "s_per_mb", NULL};
  static const sim_opt_range nonneg = {.lo = 0, .hi = 1e6, .want = "expected seconds in [0, 1e6]"};
  if (!node) return HS_OK;
  size_t m = sim_opt_key(c, opt->key);
  hs_status st = sim_opt_object(c, node, keys);
  if (!st) st = sim_opt_get_num(c, node, "s_per_update", false, 0, &nonneg, &o->server.s_per_update);
  if (!st) st = sim_opt_get_num(c, node, "s_per_mb", false, 0, &nonneg, &o->server.s_per_mb);
  if (st) return st;
  o->server.given = true;
  sim_opt_pop(c, m);
  return HS_OK;
}

/* hfl-ddp's CUSTOM options, told apart by their field. */
static hs_status hfl_opt_parse(sim_opt_ctx *c, const cJSON *node, void *opts, const sim_regime_opt *opt) {
  if (opt->offset == offsetof(ddp_opts, server)) return server_parse(c, node, opts, opt);
  return silos_parse(c, node, opts, opt);
}

static void add_str(cJSON *o, const char *key, const char *v) {
  if (!cJSON_AddStringToObject(o, key, v)) abort();
}

static void silos_print(cJSON *reg, const void *opts, const sim_regime_opt *opt) {
  const ddp_opts *o = opts;
  cJSON *silos = cJSON_AddArrayToObject(reg, opt->key);
  if (!silos) abort();
  for (size_t i = 0; i < o->nsilos; i++) {
    cJSON *s = cJSON_CreateObject();
    if (!s) abort();
    add_str(s, "name", o->silos[i].name);
    cJSON *m = cJSON_AddArrayToObject(s, "members");
    if (!m) abort();
    for (size_t j = 0; j < o->silos[i].nmembers; j++)
      cJSON_AddItemToArray(m, cJSON_CreateString(o->silos[i].members[j]));
    add_str(s, "fabric", o->silos[i].fabric);
    if (!isnan(o->silos[i].deadband) && !cJSON_AddNumberToObject(s, "deadband", o->silos[i].deadband))
      abort();
    if (o->silos[i].samples &&
        !cJSON_AddNumberToObject(s, "samples", (double)o->silos[i].samples))
      abort();
    cJSON_AddItemToArray(silos, s);
  }
}

static void hfl_opt_print(cJSON *reg, const void *opts, const sim_regime_opt *opt) {
  const ddp_opts *o = opts;
  if (opt->offset != offsetof(ddp_opts, server)) {
    silos_print(reg, opts, opt);
    return;
  }
  if (!o->server.given) return; /* printed only when written, as pma's */
  cJSON *srv = cJSON_AddObjectToObject(reg, opt->key);
  if (!srv || !cJSON_AddNumberToObject(srv, "s_per_update", o->server.s_per_update) ||
      !cJSON_AddNumberToObject(srv, "s_per_mb", o->server.s_per_mb))
    abort();
}

static void ddp_opts_free(void *opts) {
  ddp_opts *o = opts;
  for (size_t i = 0; i < o->nsilos; i++) {
    ddp_silo *silo = &o->silos[i];
    hs_free(silo->name);
    for (size_t j = 0; j < silo->nmembers; j++) hs_free(silo->members[j]);
    hs_free(silo->members);
    hs_free(silo->fabric);
  }
  hs_free(o->silos);
  hs_free(o->silo_of);
}

static uint32_t ddp_policy_steps(const void *opts) {
  return ((const ddp_opts *)opts)->steps_per_round;
}

static const uint32_t *hfl_groups(const void *opts) { return ((const ddp_opts *)opts)->silo_of; }

/* The flat all-reduces of the collective registry (hs_collective.h). */
static const char *const collectives[] = {"ring", "tree", "star", NULL};

#define DDP_OPTS                                                                            \
  {"steps_per_round", SIM_OPT_UINT, offsetof(ddp_opts, steps_per_round), 1, 1, 1e7, 0, NULL, \
   NULL, "optimiser steps S per round (default: the mean per-rank batch is batch_size)"},   \
  {                                                                                         \
    "collective", SIM_OPT_CHOICE, offsetof(ddp_opts, collective), 0, 0, 0, 0, collectives,  \
        NULL, "the gradient all-reduce: ring, tree or star (parameter server)"              \
  }

static const sim_regime_opt ddp_table[] = {DDP_OPTS};
static const sim_regime_opt hfl_table[] = {
    DDP_OPTS,
    {"silos", SIM_OPT_CUSTOM, offsetof(ddp_opts, silos), 0, 0, 0, 0, NULL, NULL,
     "[{name, members: device or entry names, fabric: link, optional samples: its data "
     "budget, deadband: its own decision}]; every device in one silo"},
    {"server", SIM_OPT_CUSTOM, offsetof(ddp_opts, server), 0, 0, 0, 0, NULL, NULL,
     "the server's aggregation of the silo models: {s_per_update: s per silo model, s_per_mb: "
     "s per MB of it}, silos x (s_per_update + s_per_mb x model MB) per round; default none"}};

/* Memory per device (run_memory.c): the run's scratch, the group's rank and
 * step records, and a batch per optimiser step of the round. */
#define DDP_DEV_BYTES (sizeof(double) + 16)
#define DDP_STEP_BYTES 8

const sim_regime sim_regime_ddp = {
    .name = "ddp",
    .summary = "data parallel: gradient all-reduce after every optimiser step",
    .opts = ddp_table,
    .nopts = sizeof ddp_table / sizeof ddp_table[0],
    .opts_size = sizeof(ddp_opts),
    .opt_prepare = ddp_prepare,
    .opts_free = ddp_opts_free,
    .policy_steps = ddp_policy_steps,
    .caps_refused = HS_POLICY_CAP_SELECTS,
    .can = SIM_CAN_DDP | SIM_CAN_AVAIL | SIM_CAN_SHARED,
    .dev_bytes = DDP_DEV_BYTES,
    .step_bytes = DDP_STEP_BYTES,
    .setup = ddp_setup,
    .bind = ddp_bind,
    .start_round = ddp_start_round,
    .teardown = ddp_teardown,
    .telemetry = ddp_telemetry,
};

const sim_regime sim_regime_hfl_ddp = {
    .name = "hfl-ddp",
    .summary = "DDP inside fixed silos, silo models averaged every round",
    .opts = hfl_table,
    .nopts = sizeof hfl_table / sizeof hfl_table[0],
    .opts_size = sizeof(ddp_opts),
    .opt_prepare = ddp_prepare,
    .opt_parse = hfl_opt_parse,
    .opt_print = hfl_opt_print,
    .opts_free = ddp_opts_free,
    .policy_steps = ddp_policy_steps,
    .groups = hfl_groups,
    .caps_refused = HS_POLICY_CAP_SELECTS,
    .caps_needed = HS_POLICY_CAP_GROUPS,
    .can = SIM_CAN_DDP | SIM_CAN_AVAIL | SIM_CAN_SHARED,
    .dev_bytes = DDP_DEV_BYTES,
    .step_bytes = DDP_STEP_BYTES,
    .setup = hfl_setup,
    .bind = ddp_bind,
    .start_round = ddp_start_round,
    .teardown = ddp_teardown,
    .telemetry = ddp_telemetry,
};
