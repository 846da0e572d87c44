/* learning.c: learning in the loop, real mode and the bookkeeping both modes
 * share (sim_learning.h). The timeline decides who trains what from which
 * model; hetsim::learn (hs_learn.h) trains it for real.
 *
 * Semantics per update shape (the regimes call these at the points where they
 * already know who trained what):
 *   fedavg      every participant with n_i > 0 trains n_i samples of its own
 *               partition (draw key: the round) from the global model; the
 *               global becomes the weighted mean of their models (weights:
 *               learning.weights, by default the size of each one's data;
 *               "samples" is n_i trained), then, with a server optimiser,
 *               one FedAvgM / FedAdam step from the old global towards it.
 *   ddp step    each rank with b_k > 0 computes its mean batch gradient at the
 *               group model; the step's gradient is sum_k (b_k / sum b) g_k
 *               (hs_ddp_grad_weights of the step), one optimiser step with the
 *               group's own state: one step on the union batch.
 *   groups end  the global is the w-weighted mean of the group models (hfl-ddp:
 *               silo samples; ddp: its one group, copied bitwise).
 *   async       a device keeps a copy of the global it downloaded; on arrival
 *               it trains n samples from that copy (draw key: its update
 *               count), and the global is mixed (1-a) g + a m.
 * Jobs of a round run on the learner's pool; results are reduced in device
 * order, so the output is the same bytes whatever learning.threads is.
 * Optimiser state: a FedAvg or FedAsync job starts a fresh state (local
 * training from a downloaded model), a DDP group keeps one for the run, the
 * server optimiser one for the run.
 * Learning rate: the schedule's value for the current round (the count of
 * round ends so far) in every job and step; DDP steps times union batch /
 * batch_size under lr_scaling "linear" (Goyal et al.'s rule for the global
 * batch). The options that shape only one update shape (weights and the
 * server optimiser: fedavg; lr_scaling: ddp steps) do nothing elsewhere.
 * Target: the first evaluation that meets it (time_to_target) and the start
 * of the last run of evaluations that all meet it, up to the last one
 * (time_to_stable_target: after it accuracy stays above the target; NaN
 * when the last evaluation misses it).
 *
 * Memory: real mode keeps one model per participant of a round (fedavg), per
 * device (async: its downloaded version, allocated at first download) and per
 * group: O(devices x parameters) at worst; real mode is for testbeds, curve
 * mode (learning_curve.c) for populations. Curve mode holds no model: each
 * hook adds effective samples and costs O(participants) of arithmetic.
 * Rejected: sharing async versions by reference count (the same bytes as a
 * copy per device, more code; a device holds at most one version at a time). */
#include <math.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "policies/hs_policy.h"
#include "sim_learning.h"

struct sim_learn {
  const hs_scenario *sc;
  const hs_learning_spec *spec;
  bool curve;
  size_t ndev;
  /* real mode */
  hs_learner *l;
  size_t np;
  float *global;
  float **models;       /* ndev, fedavg outputs, allocated on first use */
  hs_learn_job *jobs;   /* ndev */
  double *w;            /* ndev */
  const float **mptr;   /* ndev */
  uint64_t *trained;    /* ndev: last fedavg, per device */
  double *loss_sq;      /* ndev */
  /* ddp groups */
  size_t ngroups;
  float **gmodel;
  hs_learn_optstate **gopt;
  hs_learn_grad **grads; /* ndev (per rank slot) */
  hs_learn_grad *combined;
  uint32_t **idx;        /* ndev */
  size_t *idx_cap;
  uint64_t *bcol;        /* ndev: the step's batches of ranks with b > 0 */
  size_t *nb;            /* ndev: the same as size_t */
  double *gw, *mean_loss;
  /* async */
  float **snap;          /* ndev, the version each device downloaded */
  uint64_t *updates;     /* ndev */
  float *tmp;
  /* curve mode */
  double seen;           /* effective samples along the curve */
  double *snap_seen;     /* ndev: curve position at download (async) */
  bool fresh_losses;     /* a fedavg ran since sim_learn_utilities */
  /* the round's accounting */
  double loss_sum, loss_n;
  uint64_t samples_row, samples_total;
  /* options */
  hs_learn_weighting weighting;
  hs_learn_sched sched;
  double base_lr;        /* the optimiser's rate, defaults resolved */
  uint32_t round;        /* round ends so far: the schedule's round */
  hs_learn_optstate *server; /* NULL: plain FedAvg */
  float *agg;            /* server: the aggregate */
  double *pseudo;        /* server: its pseudo-gradient */
  /* evaluations and the target */
  double test_loss, test_acc;
  bool reached;
  bool in_run;           /* the evaluations since stable_* all met the target */
  sim_learn_result res;
};

/* The options of the spec as the learner's enums (names checked at load). */
static void learn_options(sim_learn *L) {
  const hs_learning_spec *s = L->spec;
  int w = hs_learn_weighting_find(s->weights);
  L->weighting = w < 0 ? HS_LEARN_W_DATA : (hs_learn_weighting)w;
  int k = hs_learn_sched_kind_find(s->lr_schedule);
  L->sched = (hs_learn_sched){.kind = k < 0 ? HS_LEARN_LR_CONSTANT : (hs_learn_sched_kind)k,
                              .step_rounds = s->lr_step_rounds, .warmup_rounds = s->lr_warmup_rounds,
                              .gamma = s->lr_gamma, .min_lr = s->lr_min};
  L->base_lr = hs_learn_optimiser(L->l)->lr;
  bool avgm = s->server_optimizer && !strcmp(s->server_optimizer, "fedavgm");
  bool adam = s->server_optimizer && !strcmp(s->server_optimizer, "fedadam");
  if (!avgm && !adam) return;
  /* Reddi et al.'s FedAdam: beta2 0.99, tau 1e-3 (Adam's eps). */
  hs_learn_opt o = {.kind = avgm ? HS_LEARN_MOMENTUM : HS_LEARN_ADAM, .lr = s->server_lr,
                    .momentum = s->server_momentum, .beta1 = s->server_momentum,
                    .beta2 = 0.99, .eps = 1e-3};
  L->server = hs_learn_optstate_create(&o, L->np);
  L->agg = hs_malloc(L->np * sizeof *L->agg);
  L->pseudo = hs_malloc(L->np * sizeof *L->pseudo);
}

/* The rate of this round's jobs and steps. */
static double current_lr(const sim_learn *L) {
  return hs_learn_sched_lr(&L->sched, L->base_lr, L->round, L->sc->rounds);
}

hs_status sim_learn_create(const hs_scenario *sc, size_t ndev, sim_learn **out, hs_error *err) {
  *out = NULL;
  sim_learn *L = hs_calloc(1, sizeof *L);
  L->sc = sc;
  L->spec = sc->learning;
  L->curve = !strcmp(L->spec->mode, "curve");
  L->ndev = ndev;
  L->test_loss = NAN;
  L->test_acc = NAN;
  L->res = (sim_learn_result){NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
  L->trained = hs_calloc(ndev, sizeof *L->trained);
  L->loss_sq = hs_calloc(ndev, sizeof *L->loss_sq);
  if (L->curve) {
    L->snap_seen = hs_calloc(ndev, sizeof *L->snap_seen);
    *out = L;
    return HS_OK;
  }
  hs_learn_cfg cfg;
  hs_learn_part_cfg pc;
  hs_status st = sim_learning_learner_cfg(sc, &cfg, err);
  if (st == HS_OK) st = hs_learn_create(&cfg, &L->l, err);
  if (st == HS_OK) {
    sim_learning_partition_cfg(sc, &pc);
    st = hs_learn_partition(L->l, &pc, err);
  }
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: learning", sc->path);
    sim_learn_destroy(L);
    return st;
  }
  L->np = hs_learn_nparams(L->l);
  L->global = hs_malloc(L->np * sizeof *L->global);
  hs_learn_init_params(L->l, L->global);
  learn_options(L);
  L->models = hs_calloc(ndev, sizeof *L->models);
  L->jobs = hs_calloc(ndev, sizeof *L->jobs);
  L->w = hs_calloc(ndev, sizeof *L->w);
  L->mptr = hs_calloc(ndev, sizeof *L->mptr);
  *out = L;
  return HS_OK;
}

void sim_learn_destroy(sim_learn *L) {
  if (!L) return;
  for (size_t i = 0; L->models && i < L->ndev; i++) hs_free(L->models[i]);
  for (size_t i = 0; L->snap && i < L->ndev; i++) hs_free(L->snap[i]);
  for (size_t i = 0; L->grads && i < L->ndev; i++) hs_learn_grad_destroy(L->grads[i]);
  for (size_t i = 0; L->idx && i < L->ndev; i++) hs_free(L->idx[i]);
  for (size_t g = 0; g < L->ngroups; g++) {
    if (L->gmodel) hs_free(L->gmodel[g]);
    if (L->gopt) hs_learn_optstate_destroy(L->gopt[g]);
  }
  hs_free(L->gmodel);
  hs_free(L->gopt);
  hs_free(L->grads);
  hs_free(L->idx);
  hs_free(L->idx_cap);
  hs_free(L->bcol);
  hs_free(L->nb);
  hs_free(L->gw);
  hs_free(L->mean_loss);
  hs_learn_grad_destroy(L->combined);
  hs_free(L->snap);
  hs_free(L->updates);
  hs_free(L->tmp);
  hs_free(L->snap_seen);
  hs_free(L->models);
  hs_free(L->jobs);
  hs_free(L->w);
  hs_free(L->mptr);
  hs_free(L->trained);
  hs_free(L->loss_sq);
  hs_free(L->global);
  hs_learn_optstate_destroy(L->server);
  hs_free(L->agg);
  hs_free(L->pseudo);
  hs_learn_destroy(L->l);
  hs_free(L);
}

/* --- fedavg ------------------------------------------------------------------- */

hs_status sim_learn_fedavg(sim_learn *L, uint32_t round, const uint64_t *n, size_t ndev,
                           hs_error *err) {
  size_t k = 0;
  uint64_t total = 0;
  for (size_t i = 0; i < ndev; i++) {
    L->trained[i] = 0;
    L->loss_sq[i] = 0;
    if (n[i] == 0) continue;
    total += n[i];
    if (L->curve) continue;
    if (!L->models[i]) L->models[i] = hs_malloc(L->np * sizeof(float));
    L->jobs[k] = (hs_learn_job){.participant = (unsigned)i, .draw = round, .samples = n[i],
                                .start = L->global, .out = L->models[i], .lr = current_lr(L)};
    k++;
  }
  L->samples_row += total;
  L->samples_total += total;
  if (L->curve) {
    L->seen += (double)total;
    return HS_OK;
  }
  if (k == 0) return HS_OK;
  hs_status st = hs_learn_train_many(L->l, L->jobs, k, err);
  if (st != HS_OK) return st;
  double W = 0;
  hs_learn_fedavg_weights(L->l, L->weighting, L->jobs, k, L->w);
  for (size_t j = 0; j < k; j++) {
    const hs_learn_job *jb = &L->jobs[j];
    L->mptr[j] = jb->out;
    if (jb->trained == 0) L->w[j] = 0; /* a dropped short job sent no update */
    W += L->w[j];
    L->loss_sum += jb->loss_sum;
    L->loss_n += (double)jb->trained;
    L->trained[jb->participant] = jb->trained;
    L->loss_sq[jb->participant] = jb->loss_sq_sum;
  }
  L->fresh_losses = true;
  /* every job dropped its only (short) batch: nothing was trained */
  if (!(W > 0)) return HS_OK;
  if (!L->server) {
    hs_learn_aggregate(L->l, L->mptr, L->w, k, L->global);
    return HS_OK;
  }
  hs_learn_aggregate(L->l, L->mptr, L->w, k, L->agg);
  hs_learn_server_step(L->server, L->global, L->agg, L->np, L->pseudo);
  return HS_OK;
}

bool sim_learn_utilities(sim_learn *L, double *u, size_t ndev) {
  /* utility "samples": the controller keeps what its telemetry says */
  if (L->curve || !L->fresh_losses || (L->spec->utility && !strcmp(L->spec->utility, "samples")))
    return false;
  L->fresh_losses = false;
  for (size_t i = 0; i < ndev; i++)
    u[i] = L->trained[i] ? (double)L->trained[i] * sqrt(L->loss_sq[i] / (double)L->trained[i])
                         : 0.0;
  return true;
}

void sim_learn_participant_loss(const sim_learn *L, size_t i, uint64_t *trained,
                                double *loss_sq_sum) {
  *trained = L->trained[i];
  *loss_sq_sum = L->loss_sq[i];
}

/* --- ddp groups ---------------------------------------------------------------- */

void sim_learn_groups(sim_learn *L, size_t ngroups) {
  L->ngroups = ngroups;
  if (L->curve) return;
  L->gmodel = hs_calloc(ngroups, sizeof *L->gmodel);
  L->gopt = hs_calloc(ngroups, sizeof *L->gopt);
  for (size_t g = 0; g < ngroups; g++) {
    L->gmodel[g] = hs_malloc(L->np * sizeof(float));
    memcpy(L->gmodel[g], L->global, L->np * sizeof(float));
    L->gopt[g] = hs_learn_optstate_for(L->l);
  }
  L->grads = hs_calloc(L->ndev, sizeof *L->grads);
  L->idx = hs_calloc(L->ndev, sizeof *L->idx);
  L->idx_cap = hs_calloc(L->ndev, sizeof *L->idx_cap);
  L->bcol = hs_calloc(L->ndev, sizeof *L->bcol);
  L->nb = hs_calloc(L->ndev, sizeof *L->nb);
  L->gw = hs_calloc(L->ndev, sizeof *L->gw);
  L->mean_loss = hs_calloc(L->ndev, sizeof *L->mean_loss);
  L->combined = hs_learn_grad_create(L->l);
}

void sim_learn_group_begin(sim_learn *L, size_t g) {
  if (L->curve) return;
  memcpy(L->gmodel[g], L->global, L->np * sizeof(float));
}

void sim_learn_ddp_step(sim_learn *L, size_t g, const size_t *ranks, const uint64_t *b,
                        size_t stride, size_t nranks, uint64_t key) {
  size_t k = 0;
  uint64_t total = 0;
  for (size_t j = 0; j < nranks; j++) {
    uint64_t bj = b[j * stride];
    if (bj == 0) continue;
    total += bj;
    if (L->curve) continue;
    size_t i = ranks[j];
    if (L->idx_cap[k] < bj) {
      L->idx[k] = hs_reallocarray(L->idx[k], bj, sizeof **L->idx);
      L->idx_cap[k] = bj;
    }
    hs_learn_draw(L->l, (unsigned)i, key, bj, L->idx[k]);
    if (!L->grads[k]) L->grads[k] = hs_learn_grad_create(L->l);
    L->bcol[k] = bj;
    k++;
  }
  L->samples_row += total;
  L->samples_total += total;
  if (L->curve) {
    L->seen += (double)total;
    return;
  }
  if (k == 0) return;
  size_t *nb = L->nb;
  for (size_t j = 0; j < k; j++) nb[j] = (size_t)L->bcol[j];
  hs_learn_batch_grad_many(L->l, L->gmodel[g], (const uint32_t *const *)L->idx, nb, L->grads,
                           L->mean_loss, k);
  hs_ddp_grad_weights(L->bcol, k, 1, L->gw);
  hs_learn_grad_combine(L->combined, (const hs_learn_grad *const *)L->grads, L->gw, k);
  double lr = current_lr(L);
  if (L->spec->lr_scaling && !strcmp(L->spec->lr_scaling, "linear"))
    lr *= (double)total / (double)L->sc->batch_size;
  hs_learn_optstate_set_lr(L->gopt[g], lr);
  hs_learn_step(L->l, L->gopt[g], L->gmodel[g], L->combined);
  for (size_t j = 0; j < k; j++) {
    L->loss_sum += L->mean_loss[j] * (double)L->bcol[j];
    L->loss_n += (double)L->bcol[j];
  }
}

void sim_learn_groups_end(sim_learn *L, const double *w) {
  if (L->curve) return;
  size_t k = 0;
  for (size_t g = 0; g < L->ngroups; g++) {
    if (!(w[g] > 0)) continue;
    L->mptr[k] = L->gmodel[g];
    L->w[k++] = w[g];
  }
  if (k > 0) hs_learn_aggregate(L->l, L->mptr, L->w, k, L->global);
}

/* --- async -------------------------------------------------------------------- */

void sim_learn_async_download(sim_learn *L, size_t i) {
  if (L->curve) {
    L->snap_seen[i] = L->seen;
    return;
  }
  if (!L->snap) {
    L->snap = hs_calloc(L->ndev, sizeof *L->snap);
    L->updates = hs_calloc(L->ndev, sizeof *L->updates);
    L->tmp = hs_malloc(L->np * sizeof *L->tmp);
  }
  if (!L->snap[i]) L->snap[i] = hs_malloc(L->np * sizeof(float));
  memcpy(L->snap[i], L->global, L->np * sizeof(float));
}

hs_status sim_learn_async_arrival(sim_learn *L, size_t i, uint64_t n, double a, hs_error *err) {
  L->samples_row += n;
  L->samples_total += n;
  if (L->curve) {
    /* The update moves the model a of the way from where it is towards where
     * n samples from the downloaded version would have taken it. */
    double target = L->snap_seen[i] + (double)n;
    L->seen = (1.0 - a) * L->seen + a * target;
    return HS_OK;
  }
  hs_learn_job j = {.participant = (unsigned)i, .draw = L->updates[i]++, .samples = n,
                    .start = L->snap[i], .out = L->tmp, .lr = current_lr(L)};
  hs_status st = hs_learn_train(L->l, &j, err);
  if (st != HS_OK) return st;
  L->loss_sum += j.loss_sum;
  L->loss_n += (double)j.trained;
  hs_learn_mix(L->l, L->global, L->tmp, a);
  return HS_OK;
}

/* --- round end ------------------------------------------------------------------ */

static bool target_met(const hs_learning_spec *s, double loss, double acc) {
  bool any = false, ok = true;
  if (!isnan(s->target_loss)) {
    any = true;
    ok = ok && loss <= s->target_loss;
  }
  if (!isnan(s->target_accuracy)) {
    any = true;
    ok = ok && acc >= s->target_accuracy;
  }
  return any && ok;
}

void sim_learn_round_end(sim_learn *L, uint32_t round, bool last, double time_s, double energy_j,
                         hs_report *rep) {
  sim_learn_energy e = {energy_j, NAN, NAN, NAN};
  sim_learn_round_end_scopes(L, round, last, time_s, &e, rep);
}

void sim_learn_round_end_scopes(sim_learn *L, uint32_t round, bool last, double time_s,
                                const sim_learn_energy *e, hs_report *rep) {
  const hs_learning_spec *s = L->spec;
  double energy_j = e->wall_j;
  L->round = round + 1;
  if (!last && (round + 1) % s->eval_every != 0) return;
  double train = L->loss_n > 0 ? L->loss_sum / L->loss_n : NAN;
  if (L->curve) {
    L->test_loss = sim_learn_curve_loss(s, L->seen);
    L->test_acc = NAN;
    train = L->test_loss;
  } else {
    hs_learn_eval(L->l, L->global, s->eval_samples, &L->test_loss, &L->test_acc);
  }
  bool met = target_met(s, L->test_loss, L->test_acc);
  if (!L->reached && met) {
    L->reached = true;
    L->res.time_to_target_s = time_s;
    L->res.energy_to_target_j = energy_j;
    L->res.rounds_to_target = (double)round + 1;
  }
  if (met && !L->in_run) {
    L->res.time_to_stable_target_s = time_s;
    L->res.energy_to_stable_target_j = energy_j;
    L->res.rounds_to_stable_target = (double)round + 1;
  } else if (!met) {
    L->res.time_to_stable_target_s = L->res.energy_to_stable_target_j = NAN;
    L->res.rounds_to_stable_target = NAN;
  }
  L->in_run = met;
  L->res.final_test_loss = L->test_loss;
  L->res.final_test_accuracy = L->test_acc;
  if (rep) {
    bool has_target = !isnan(s->target_loss) || !isnan(s->target_accuracy);
    /* the rate of the round just evaluated (L->round counts it already) */
    double lr = L->curve ? NAN : hs_learn_sched_lr(&L->sched, L->base_lr, round, L->sc->rounds);
    hs_learning_row row = {round, time_s, energy_j, L->samples_total, train, L->test_loss,
                           L->test_acc, lr, has_target ? (met ? 1.0 : 0.0) : NAN,
                           e->idle_baseline_j, e->above_idle_j, e->training_j};
    hs_report_learning(rep, &row);
  }
  L->loss_sum = 0;
  L->loss_n = 0;
  L->samples_row = 0;
}

void sim_learn_result_get(const sim_learn *L, sim_learn_result *out) { *out = L->res; }

const float *sim_learn_global(const sim_learn *L) { return L->global; }
hs_learner *sim_learn_learner(const sim_learn *L) { return L->l; }
