/* regime_fsdp.c: the run of the sharded regimes fsdp, hsdp, fl-fsdp and
 * fl-hsdp (options and descriptors: regime_fsdp_opts.c; cost model:
 * fsdp_cost.c). Plain DDP is the degenerate hsdp with S = 1.
 *
 * The GPUs (expanded devices, in order) are ranks 0..N-1 placed on the
 * scenario's topology. They form F = N/G federated groups of G contiguous
 * ranks (fsdp, hsdp: one group of N). A group steps on its own:
 *   step start  every rank draws its forward+backward time for its batch
 *               (profile tau_s per sample, noise tau_cv * jitter) and goes BUSY;
 *               the group's phases come from sim_step_schedule with the
 *               slowest rank's compute split over the units by parameters
 *               (forward 1/3, backward 2/3) and the collective times of the
 *               group's shard and replica families (sim_family_rates);
 *   rank done   (its compute and optimiser end) -> IDLE: waiting for the
 *               slowest member;
 *   comm        (slowest compute ends) -> COMM for the exposed collective
 *               time (what the compute did not hide);
 *   other       -> IDLE for other_s; then the step ends.
 * fl-*: after steps H, 2H, ... and the run's last step a group waits (IDLE)
 * until every group arrives, then all ranks are COMM for the blocking
 * all-reduce of the P/S_shard parameter shard across the F ranks holding the
 * same shard (the slowest of the G concurrent averaging groups).
 * A reporting round is steps_per_round steps; groups meet at its end.
 * Learning in the loop (learn_mean below): a group step is a DDP step of its
 * learner group; averages set the group parameters to their mean, moments stay.
 * Events per step: one per rank and three per group; O(units) arithmetic.
 * Memory: refused at set-up when a GPU's persistent state (state bytes x P/S)
 * + two unsharded units + activations of its micro-batch exceed its HBM.
 * Energy: the ledger's busy / comm / idle states above, every GPU on from the
 * start to the end of the run (the synchronised window). Within a step the
 * states are ordered busy, idle, comm, idle: the totals per state are what the
 * overlapped streams give; the order inside a step is a simplification.
 * Rejected: an engine event per unit and collective (33 units x 3-4
 * collectives per group and step: ~100x the events for the same numbers, as
 * the schedule inside a step is fixed once the slowest compute is known). */
#include <math.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "devices/hs_profile.h"
#include "regime_fsdp.h"
#include "sim_run.h"
#include "sim_learning.h"

typedef struct flg {
  size_t first, n;      /* ranks [first, first + n) */
  double *ag, *rs, *ar; /* per unit */
  double opt_s;         /* the slowest rank's optimiser step */
  uint32_t step;        /* within the round */
  uint64_t gstep;       /* since the start */
  double bytes[3];      /* per rank and local step, per tier */
  sim_step_out cur;
  double comp_end; /* this step: slowest compute + optimiser, from its start */
  size_t *ranks;   /* learning: the group's ranks and this step's batches */
  uint64_t *batch;
} flg;

typedef struct fsdp_state {
  const fsdp_opts *o;
  fsdp_kind kind;
  size_t n, ngroups;
  uint32_t shard;    /* ranks a parameter is sharded over */
  uint32_t replicas; /* per federated group (hsdp kinds), else 1 */
  uint32_t fed;      /* ranks per averaging group (F) */
  size_t nunits;
  double *frac;      /* per unit: share of the parameters (and compute) */
  double *fwd, *bwd; /* scratch per unit */
  flg *g;
  double agg_s, agg_bytes[3];
  size_t waiting, pending;
  uint64_t total_steps;
  double seq_len;
  /* accumulators */
  double sum_fwd, sum_bwd, sum_opt, sum_local, agg_total, tokens;
  double bytes[3]; /* summed over ranks */
  uint64_t group_steps;
  double hbm_need;
} fsdp_state;

static void step_start(sim_run *r, size_t f);

/* Learning in the loop (real or curve mode; r->learn NULL: none). One
 * learner group per federated group; sharding does not change the maths, so a
 * step is a DDP step of the group (the batch-weighted mean of its ranks' batch
 * gradients, one optimiser step with the group's own state). An average sets
 * every group's parameters to the equal-weight mean of the group models (the
 * groups train equal batches) and leaves each group's optimiser state as it
 * is: parameters are averaged, moments are not (specs/fsdp.md). At a round end
 * the evaluated model is that mean; the groups keep their own parameters
 * unless the round end is also an average. */
static void learn_mean(sim_run *r, bool adopt) {
  fsdp_state *st = r->rs;
  for (size_t f = 0; f < st->ngroups; f++) sim_run_scratch(r)[f] = 1.0;
  sim_learn_groups_end(r->learn, sim_run_scratch(r));
  for (size_t f = 0; adopt && f < st->ngroups; f++) sim_learn_group_begin(r->learn, f);
}

static void set_group(sim_run *r, const flg *g, hs_power_state s) {
  for (size_t k = 0; k < g->n; k++) sim_dev_state(r, g->first + k, s);
}

static void on_rank_done(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_dev_state(subject, (size_t)i, HS_POWER_IDLE);
}

static void after_step(sim_run *r, size_t f) {
  fsdp_state *st = r->rs;
  flg *g = &st->g[f];
  if (g->step < st->o->steps_per_round) {
    step_start(r, f);
    return;
  }
  set_group(r, g, HS_POWER_IDLE);
  if (--st->pending == 0) {
    r->round_cv = NAN;
    if (r->learn) learn_mean(r, false);
    sim_round_end(r);
  }
}

static void on_agg_done(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)arg;
  sim_run *r = subject;
  fsdp_state *st = r->rs;
  st->agg_total += st->agg_s;
  for (int t = 0; t < 3; t++) st->bytes[t] += (double)st->n * st->agg_bytes[t];
  st->waiting = 0;
  for (size_t f = 0; f < st->ngroups; f++) after_step(r, f);
}

static void on_step_end(hs_engine *eng, void *subject, uint64_t f) {
  sim_run *r = subject;
  fsdp_state *st = r->rs;
  flg *g = &st->g[f];
  st->sum_fwd += g->cur.fwd_s;
  st->sum_bwd += g->cur.bwd_s;
  st->sum_opt += g->cur.opt_s;
  st->sum_local += g->cur.total_s;
  st->group_steps++;
  for (int t = 0; t < 3; t++) st->bytes[t] += (double)g->n * g->bytes[t];
  if (r->learn) sim_learn_ddp_step(r->learn, (size_t)f, g->ranks, g->batch, 1, g->n, g->gstep);
  g->step++;
  g->gstep++;
  bool fl = st->kind == FSDP_FL_FSDP || st->kind == FSDP_FL_HSDP;
  if (fl &&
      (g->gstep % st->o->period == 0 || (st->o->final_average && g->gstep == st->total_steps))) {
    set_group(r, g, HS_POWER_IDLE);
    if (++st->waiting < st->ngroups) return;
    if (r->learn) learn_mean(r, true);
    for (size_t k = 0; k < st->ngroups; k++) set_group(r, &st->g[k], HS_POWER_COMM);
    hs_engine_schedule_in(eng, st->agg_s, 1, on_agg_done, r, 0);
    return;
  }
  after_step(r, (size_t)f);
}

static void on_other(hs_engine *eng, void *subject, uint64_t f) {
  sim_run *r = subject;
  fsdp_state *st = r->rs;
  set_group(r, &st->g[f], HS_POWER_IDLE);
  hs_engine_schedule_in(eng, st->o->other_s, 1, on_step_end, r, f);
}

static void on_comm(hs_engine *eng, void *subject, uint64_t f) {
  sim_run *r = subject;
  fsdp_state *st = r->rs;
  flg *g = &st->g[f];
  double exposed = g->cur.total_s - g->comp_end - st->o->other_s;
  if (exposed < 0) exposed = 0;
  set_group(r, g, HS_POWER_COMM);
  hs_engine_schedule_in(eng, exposed, 1, st->o->other_s > 0 ? on_other : on_step_end, r, f);
}

static void step_start(sim_run *r, size_t f) {
  fsdp_state *st = r->rs;
  flg *g = &st->g[f];
  uint32_t spr = st->o->steps_per_round;
  double cmax = 0;
  double *c = sim_run_scratch(r);
  for (size_t k = 0; k < g->n; k++) {
    size_t i = g->first + k;
    const sim_dev *d = &r->dev[i];
    uint64_t b = st->o->micro_batch ? st->o->micro_batch
                                    : r->alloc[i] / spr + (g->step < r->alloc[i] % spr ? 1 : 0);
    st->tokens += (double)b * st->seq_len;
    g->batch[k] = b;
    c[k] = 0;
    if (b > 0) {
      hs_task_profile t = {.tau_s = d->tau_s * sim_dev_shared(r, i), .tau_cv = sim_dev_sp(r, i)->tau_cv * st->o->jitter};
      c[k] = sim_dev_stretch_s(r, i, hs_task_compute_time(&t, b, &r->dev[i].rng_compute), 0);
    }
    if (c[k] > cmax) cmax = c[k];
  }
  for (size_t u = 0; u < st->nunits; u++) {
    st->fwd[u] = cmax / 3.0 * st->frac[u];
    st->bwd[u] = cmax * 2.0 / 3.0 * st->frac[u];
  }
  sim_step_in in = {st->nunits,
                    st->fwd,
                    st->bwd,
                    g->ag,
                    g->rs,
                    g->ar,
                    g->opt_s,
                    0,
                    st->o->other_s,
                    st->o->fwd_prefetch != 0,
                    !strcmp(st->o->bwd_prefetch, "pre")    ? SIM_BWD_PRE
                    : !strcmp(st->o->bwd_prefetch, "post") ? SIM_BWD_POST
                                                           : SIM_BWD_NONE,
                    st->o->replica_overlap != 0,
                    st->o->barriers != 0};
  sim_step_schedule(&in, &g->cur);
  g->comp_end = cmax + g->opt_s;
  for (size_t k = 0; k < g->n; k++) {
    size_t i = g->first + k;
    sim_dev_state(r, i, HS_POWER_BUSY);
    double done = c[k] + g->opt_s;
    if (done < g->comp_end) hs_engine_schedule_in(r->eng, done, 0, on_rank_done, r, i);
  }
  hs_engine_schedule_in(r->eng, g->comp_end, 1, on_comm, r, f);
}

void fsdp_telemetry(sim_run *r, size_t i, sim_meter *m) {
  fsdp_state *st = r->rs;
  /* With micro_batch, what the GPU trained, not what the policy allocated;
   * time and energy: the round's busy time (the ledger's). */
  if (st->o->micro_batch) m->samples = (uint64_t)st->o->micro_batch * st->o->steps_per_round;
  m->train_j =
      hs_ledger_energy(r->ledger, i, HS_POWER_BUSY, hs_engine_now(r->eng)) - sim_dev_busy0_j(r, i);
}

void fsdp_start_round(sim_run *r) {
  fsdp_state *st = r->rs;
  st->pending = st->ngroups;
  for (size_t f = 0; f < st->ngroups; f++) {
    st->g[f].step = 0;
    step_start(r, f);
  }
}

/* Bus bandwidth and latency of a family of groups, reduced per federated
 * group: the slowest of the per_fl groups that belong to each. */
static void family(const sim_topo *t, const sim_group *grp, size_t ng, size_t per_fl, double *bus,
                   double *alpha, uint32_t *tier) {
  double *b = hs_calloc(ng, sizeof *b), *a = hs_calloc(ng, sizeof *a);
  sim_family_rates(t, grp, ng, b, a);
  for (size_t f = 0; f < ng / per_fl; f++) {
    bus[f] = INFINITY;
    alpha[f] = 0;
    tier[f] = 0;
    for (size_t k = f * per_fl; k < (f + 1) * per_fl; k++) {
      sim_group_shape s;
      sim_group_shape_of(t, &grp[k], &s);
      if (b[k] < bus[f]) bus[f] = b[k];
      if (a[k] > alpha[f]) alpha[f] = a[k];
      if (s.tier > tier[f]) tier[f] = s.tier;
    }
  }
  hs_free(b);
  hs_free(a);
}

static hs_status check_memory(sim_run *r, fsdp_state *st, const sim_model *m, hs_error *err) {
  const hs_scenario *sc = r->sc;
  double mb = st->o->micro_batch
                  ? st->o->micro_batch
                  : ceil((double)sc->samples_per_round / (double)st->n / st->o->steps_per_round);
  double layer = m->units ? (m->params - m->root_params) / m->units : 0;
  double state = m->state_bytes_per_param * m->params / st->shard;
  double units = (m->root_params + layer) * m->bytes_per_param;
  double act = m->act_bytes_per_token * m->seq_len * mb;
  double need = state + units + act;
  st->hbm_need = need;
  for (size_t i = 0; i < st->n; i++) {
    const hs_profile *p = sc->devices[sim_dev_spec(r, i)].profile;
    double hbm = hs_profile_hbm_bytes(p);
    if (hbm <= 0)
      return hs_error_set(err, HS_EINVAL, "%s: devices: GPU %s: profile %s has no gpu.hbm_bytes",
                          sc->path, sim_dev_name(r, i), hs_profile_name(p));
    if (need > hbm)
      return hs_error_set(err, HS_EINVAL,
                          "%s: regime: GPU %s (%s) needs %.0f bytes of HBM (state %.4g + "
                          "unsharded units %.4g + activations %.4g), has %.0f",
                          sc->path, sim_dev_name(r, i), hs_profile_name(p), need, state, units, act,
                          hbm);
  }
  return HS_OK;
}

hs_status fsdp_setup(sim_run *r, hs_error *err) {
  const hs_scenario *sc = r->sc;
  const sim_topo *t = sim_scenario_topo(sc);
  const sim_model *m = sim_scenario_model(sc);
  if (!t->present || !m->present)
    return hs_error_set(err, HS_EINVAL, "%s: %s: required by regime %s", sc->path,
                        t->present ? "model" : "topology", sc->regime.kind);
  fsdp_state *st = hs_calloc(1, sizeof *st);
  r->rs = st;
  st->o = sc->regime.opts;
  st->kind = fsdp_kind_of(r->regime);
  st->n = r->ndev;
  size_t slots = (st->n + t->gpus_per_node - 1) / t->gpus_per_node;
  if (t->nodes && t->nnodes < slots)
    return hs_error_set(err, HS_EINVAL, "%s: topology.nodes: %zu nodes listed, %zu GPUs need %zu",
                        sc->path, t->nnodes, st->n, slots);
  bool fl = st->kind == FSDP_FL_FSDP || st->kind == FSDP_FL_HSDP;
  bool hsdp = st->kind == FSDP_HSDP || st->kind == FSDP_FL_HSDP;
  size_t G = fl ? st->o->group : st->n;
  st->ngroups = st->n / G;
  st->shard = hsdp ? st->o->shard : (uint32_t)G;
  st->replicas = (uint32_t)(G / st->shard);
  st->fed = (uint32_t)st->ngroups;
  st->seq_len = m->seq_len;
  st->total_steps = (uint64_t)sc->rounds * st->o->steps_per_round;
  hs_status s = check_memory(r, st, m, err);
  if (s) return s;

  st->nunits = m->units + 1;
  st->frac = hs_calloc(st->nunits, sizeof *st->frac);
  st->fwd = hs_calloc(st->nunits, sizeof *st->fwd);
  st->bwd = hs_calloc(st->nunits, sizeof *st->bwd);
  st->frac[0] = m->root_params / m->params;
  for (size_t u = 1; u < st->nunits; u++) st->frac[u] = (1 - st->frac[0]) / m->units;

  /* Families: shard groups (contiguous S), replica groups (stride S inside
   * each federated group), averaging groups (stride G). */
  size_t nsh = st->n / st->shard, nrep = hsdp ? st->ngroups * st->shard : 0;
  sim_group *grp = hs_calloc(nsh + nrep + G + 1, sizeof *grp);
  for (size_t k = 0; k < nsh; k++) grp[k] = (sim_group){k * st->shard, 1, st->shard};
  /* Per federated group: bus bandwidth, latency and tier of its slowest group. */
  double *sh_bus = hs_calloc(st->ngroups, sizeof *sh_bus);
  double *sh_a = hs_calloc(st->ngroups, sizeof *sh_a);
  uint32_t *sh_t = hs_calloc(st->ngroups, sizeof *sh_t);
  family(t, grp, nsh, nsh / st->ngroups, sh_bus, sh_a, sh_t);
  st->g = hs_calloc(st->ngroups, sizeof *st->g);
  double P = m->params, b = m->bytes_per_param;
  double pS = (double)st->shard, pR = (double)st->replicas, pF = (double)st->fed;
  for (size_t f = 0; f < st->ngroups; f++) {
    flg *g = &st->g[f];
    g->first = f * G;
    g->n = G;
    g->ranks = hs_calloc(G, sizeof *g->ranks);
    g->batch = hs_calloc(G, sizeof *g->batch);
    for (size_t k = 0; k < G; k++) g->ranks[k] = g->first + k;
    g->ag = hs_calloc(st->nunits, sizeof *g->ag);
    g->rs = hs_calloc(st->nunits, sizeof *g->rs);
    for (size_t u = 0; u < st->nunits; u++) {
      g->ag[u] = sim_ring_ag(st->shard, st->frac[u] * P * b, sh_bus[f], sh_a[f]);
      g->rs[u] = g->ag[u];
    }
    g->bytes[sh_t[f]] += 3.0 * (pS - 1) / pS * P * b;
  }
  if (hsdp) {
    size_t k = 0;
    for (size_t f = 0; f < st->ngroups; f++)
      for (size_t s0 = 0; s0 < st->shard; s0++)
        grp[k++] = (sim_group){f * G + s0, st->shard, st->replicas};
    family(t, grp, nrep, st->shard, sh_bus, sh_a, sh_t);
    for (size_t f = 0; f < st->ngroups; f++) {
      flg *g = &st->g[f];
      g->ar = hs_calloc(st->nunits, sizeof *g->ar);
      for (size_t u = 0; u < st->nunits; u++)
        g->ar[u] = sim_ring_ar(st->replicas, st->frac[u] * P / pS * b, sh_bus[f], sh_a[f]);
      g->bytes[sh_t[f]] += 2.0 * (pR - 1) / pR * P / pS * b;
    }
  }
  if (fl) {
    for (size_t j = 0; j < G; j++) grp[j] = (sim_group){j, G, st->fed};
    double ab, aa;
    uint32_t at;
    family(t, grp, G, G, &ab, &aa, &at);
    st->agg_s = sim_ring_ar(st->fed, P / pS * b, ab, aa);
    st->agg_bytes[at] = 2.0 * (pF - 1) / pF * P / pS * b;
  }
  for (size_t i = 0; i < st->n; i++) {
    double o = hs_profile_opt_s_per_param(sc->devices[sim_dev_spec(r, i)].profile) * P / pS;
    flg *g = &st->g[i / G];
    if (o > g->opt_s) g->opt_s = o;
  }
  if (r->learn) sim_learn_groups(r->learn, st->ngroups);
  hs_free(grp);
  hs_free(sh_bus);
  hs_free(sh_a);
  hs_free(sh_t);
  return HS_OK;
}

void fsdp_teardown(sim_run *r) {
  fsdp_state *st = r->rs;
  if (!st) return;
  for (size_t f = 0; st->g && f < st->ngroups; f++) {
    hs_free(st->g[f].ag);
    hs_free(st->g[f].rs);
    hs_free(st->g[f].ar);
    hs_free(st->g[f].ranks);
    hs_free(st->g[f].batch);
  }
  hs_free(st->g);
  hs_free(st->frac);
  hs_free(st->fwd);
  hs_free(st->bwd);
  hs_free(st);
  r->rs = NULL;
}

size_t fsdp_summary_fields(sim_run *r, hs_report_field *out, size_t cap) {
  fsdp_state *st = r->rs;
  double now = hs_engine_now(r->eng);
  double steps = st->ngroups ? (double)st->group_steps / (double)st->ngroups : 0;
  double gs = st->group_steps ? (double)st->group_steps : NAN;
  double energy = hs_ledger_state_energy(r->ledger, HS_POWER_BUSY, now) +
                  hs_ledger_state_energy(r->ledger, HS_POWER_COMM, now) +
                  hs_ledger_state_energy(r->ledger, HS_POWER_IDLE, now);
  double fwd = st->sum_fwd / gs, bwd = st->sum_bwd / gs, opt = st->sum_opt / gs;
  double agg = steps > 0 ? st->agg_total / steps : NAN;
  double total = steps > 0 ? now / steps : NAN;
  double per = (double)st->n * steps;
  /* The rest of the wall time per step (other_s and waits at the averaging
   * barrier); rounding of the sums is not a phase. */
  double other = total - fwd - bwd - opt - agg;
  if (fabs(other) < 1e-9 * total) other = 0;
  hs_report_field f[] = {
      {"step_forward_s", fwd},
      {"step_backward_s", bwd},
      {"step_optimizer_s", opt},
      {"step_aggregation_s", agg},
      {"step_other_s", other},
      {"step_total_s", total},
      {"step_local_s", st->sum_local / gs},
      {"tokens_per_s", now > 0 ? st->tokens / now : NAN},
      {"energy_per_token_j", st->tokens > 0 ? energy / st->tokens : NAN},
      {"bytes_per_gpu_step_intra", st->bytes[0] / per},
      {"bytes_per_gpu_step_inter", st->bytes[1] / per},
      {"bytes_per_gpu_step_global", st->bytes[2] / per},
      {"hbm_need_bytes", st->hbm_need},
      /* From steps_to_target (an input). A run that learns reports the
       * measured time_to_target_s itself: this one is renamed, not a
       * duplicate key of summary.json. */
      {r->learn ? "time_to_target_from_steps_s" : "time_to_target_s",
       st->o->steps_to_target > 0 ? st->o->steps_to_target * total : NAN},
  };
  size_t n = sizeof f / sizeof f[0];
  if (n > cap) n = cap;
  memcpy(out, f, n * sizeof *f);
  return n;
}
