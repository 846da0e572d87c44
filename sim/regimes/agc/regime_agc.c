/* regime_agc.c: approximate gradient coding with quantisation (specs/agc.md).
 *
 * One round is one iteration. Every worker with a non-empty row of the code
 * computes the gradients of its partitions (busy: its profile's compute time
 * for the samples those partitions hold, overhead included), then sends its
 * coded message, z_i bits per coordinate times dim coordinates plus a 64-bit
 * norm, through its access link and the server link (comm: a flow of the
 * fluid network, so bits cost time and uploads share the server link), then
 * idles. The master decodes what arrived by the deadline: the iteration ends
 * at the deadline, or at the last arrival when every message is in before it
 * (first_k = K: at the K-th arrival, if that comes first; gd waits for all).
 * At the end the workers still computing or sending are cut (their event is
 * cancelled, their flow too, the bits already sent counted): they are the
 * stragglers, and the energy they spent stays spent. Off workers (no
 * partitions) idle.
 *
 * Straggler probabilities (p_rule): given; the spec's model (mu_i ~
 * U(0.01, 2) per worker, p_i = exp(-mu_i (z_th - 1)), realised on the timeline
 * as a shifted-exponential lag unit * Exp(1)/mu_i added to the compute, with
 * unit = deadline / z_th); or from the profiles against the deadline
 * (regime_agc_code.c; with first_k, P(not among the first K) by Monte Carlo),
 * iterated with the planned loads until the bits stop changing (at most 8).
 * reestimate_every R > 0: every R iterations p_i becomes (prior_weight p_i0 +
 * misses_i) / (prior_weight + iterations_i) from the lateness observed (no
 * draw: deterministic) and the code is re-planned. model_load: the model's
 * mu_i and lags on the timeline, but each p_i planned from what its load and
 * bits leave of the deadline, P(lag > deadline - nominal arrival) =
 * exp(-mu_i (deadline - arrival) / unit), iterated with the planned loads
 * like the profile rule (the published model's p ignores the load: a worker
 * given many partitions straggles more than planned and the decoder's
 * 1/(1 - p) weights are then biased).
 *
 * Outputs: agc.csv (one row per iteration, committed with the run's other
 * files by hs_report) and summary fields. With learning (learn != none) the
 * decoded gradient is the real one (regime_agc_learn.c) and the rows carry the
 * measured residual error beside the predicted one and beside its exact
 * expectation given the iteration's gradients (residual_exp; _model with the
 * planner's quantiser model; _straggle without the quantiser).
 * agc_residual_pred_observed is the planner's error model with the straggle
 * rates the timeline showed in place of the planned p.
 *
 * D (d_rule): theory dim/4 (the quantiser's worst case), the public code's
 * tuned constant (it makes the quantiser term negligible by construction),
 * given, or measured: the quantiser's relative variance at the equal split's
 * bits on the initial gradients (a normal vector without learning) times
 * (2^(z-1) - 1)^2. One constant cannot fit every z (the measured variance
 * falls about as 1/M, the model's as 1/M^2), so measured is exact only near
 * the equal split's bits.
 *
 * Events per iteration: one compute end and one arrival per active worker,
 * one deadline. Costs per iteration O(k) plus the network's per-flow work;
 * re-planning costs the allocator's time (hs_agc.h). The policy's allocation is
 * not used (the code decides each worker's load); participant selection and
 * step-level policies are refused. Rejected: letting stragglers finish into
 * the next iteration (the master has moved on; their stale message would only
 * load the server link). */
#include "regime_agc.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "jpath.h"
#include "traces/hs_columns.h"
#include "sim_run.h"

/* A worker's phase in the iteration; CUT_*: a straggler, cut at the end. */
enum { PH_OFF, PH_COMPUTE, PH_SEND, PH_IN, PH_CUT_COMPUTE, PH_CUT_SEND };

/* The extra file its runs write (the descriptor lists it). */

typedef struct agc_state {
  const agc_opts *o;
  agc_scheme scheme;
  size_t k, n;
  uint64_t dim;
  double d, deadline_s, unit_s;
  uint64_t *part_samples; /* n */
  uint64_t *samples;      /* k: what worker i computes each iteration */
  double *p, *p0, *mu;    /* k (mu: model rule only) */
  uint32_t *misses, *tries;
  agc_code code;
  hs_rng *lag; /* model rule: one stream per worker */
  /* the iteration in flight */
  uint8_t *phase;
  bool *arrived;
  hs_event_id *ev;
  hs_flow_id *flow;
  hs_event_id deadline_ev;
  size_t pending, narrived;
  double bits_in;
  /* outputs and totals */
  FILE *csv;
  bool csv_tried;
  double energy_prev, bits_cum;
  uint64_t stragglers_total, active_total;
  double pred_sum, meas_rel_sum, exp_rel_sum;
  uint32_t meas_count, replans;
  double last_eval_loss, target_time_s, target_energy_j, target_bits;
  agc_learn *learn;
} agc_state;

static double msg_bits(const agc_state *s, size_t i) {
  return (double)s->code.z[i] * (double)s->dim + 64.0;
}

/* --- the timeline
 * -------------------------------------------------------------- */

static void iteration_end(sim_run *r);

static void on_arrived(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  agc_state *s = r->rs;
  s->flow[i] = 0;
  s->phase[i] = PH_IN;
  s->arrived[i] = true;
  s->bits_in += msg_bits(s, i);
  sim_dev_state(r, i, HS_POWER_IDLE);
  if (++s->narrived == s->pending || (s->o->first_k && s->narrived >= s->o->first_k))
    iteration_end(r);
}

static void on_computed(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  agc_state *s = r->rs;
  const sim_spec *d = sim_dev_sp(r, i);
  s->ev[i] = 0;
  s->phase[i] = PH_SEND;
  sim_dev_state(r, i, HS_POWER_COMM);
  double stall = sim_dev_send_stall_s(r, i, msg_bits(s, i) / 8.0); /* 0 without devices[].cpu */
  s->flow[i] = hs_net_transfer(r->net, msg_bits(s, i) / 8.0, d->access_bps,
                               d->access_latency_s + stall, &r->server_link, 1, on_arrived, r, i);
  if (!s->flow[i]) sim_fail(r, HS_EINVAL, "a coded message cannot be sent (size out of range)");
}

static void on_deadline(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)arg;
  sim_run *r = subject;
  ((agc_state *)r->rs)->deadline_ev = 0;
  iteration_end(r);
}

/* The samples each worker computes under the current code. */
static void loads_of(agc_state *s) {
  for (size_t i = 0; i < s->k; i++) {
    s->samples[i] = 0;
    for (size_t e = s->code.L.row[i]; e < s->code.L.row[i + 1]; e++)
      s->samples[i] += s->part_samples[s->code.L.col[e]];
  }
}

static hs_status fail_opt(sim_run *r, hs_error *err, hs_error *inner) {
  return hs_error_set(err, inner->status, "%s: regime.%s", r->sc->path, inner->msg);
}

static double tuned_d(const agc_state *s) {
  double pm = 0;
  for (size_t i = 0; i < s->k; i++) pm += s->p[i] / (double)s->k;
  double zbar = ((double)s->o->z_res + (double)s->o->offset * (double)s->k) / (double)s->k;
  double m = pow(2.0, zbar - 1.0) - 1.0;
  double d = pm * m * m * 0.005;
  return d > 0 ? d : 1e-12;
}

/* measured: D such that omega(z_ref) = D / (2^(z_ref-1) - 1)^2 is the relative
 * variance the quantiser gives at z_ref, the wire bits of the equal split
 * (at least 2), on the initial model's partition gradients (or a normal
 * vector without learning). One D cannot fit every z: the quantiser's
 * relative variance falls about as 1/M at low M, not 1/M^2. */
static double measured_d(const agc_state *s, uint64_t seed) {
  int64_t z = (int64_t)(s->o->z_res / s->k) + (int64_t)s->o->offset;
  if (z < 2) z = 2;
  double m = ldexp(1.0, (int)z - 1) - 1.0;
  double w = s->learn ? agc_learn_omega(s->learn, z) : agc_omega_gaussian(s->dim, z, seed);
  return w > 0 ? w * m * m : 1e-12;
}

static hs_status plan(sim_run *r, agc_state *s, hs_error *err) {
  if (!strcmp(s->o->d_rule, "tuned")) s->d = tuned_d(s);
  agc_code_free(&s->code);
  hs_error in = {0};
  if (agc_code_build(&s->code, s->scheme, s->o, s->p, s->k, s->n, s->d, r->sc->seed, &in) != HS_OK)
    return fail_opt(r, err, &in);
  loads_of(s);
  return HS_OK;
}

/* p_i from the lateness seen so far, then a new code (D re-tuned when tuned). */
static void reestimate(sim_run *r, agc_state *s) {
  const agc_opts *o = s->o;
  for (size_t i = 0; i < s->k; i++) {
    if (o->prior_weight + s->tries[i] <= 0) continue; /* nothing to go on yet */
    double q = (o->prior_weight * s->p0[i] + s->misses[i]) / (o->prior_weight + s->tries[i]);
    s->p[i] = q < o->p_min ? o->p_min : q > o->p_max ? o->p_max : q;
  }
  hs_error err = {0};
  if (plan(r, s, &err) != HS_OK) {
    char msg[HS_ERROR_MSG_MAX + 64];
    snprintf(msg, sizeof msg, "round %u: re-planning with the observed p: %s", r->round, err.msg);
    sim_fail(r, err.status, msg);
    return;
  }
  s->replans++;
}

/* --- agc.csv: one row per iteration, from its column table ------------------- */

typedef struct agc_row {
  uint32_t iteration;
  double start_s, end_s, duration_s;
  size_t active, arrived, stragglers;
  double bits_sent, bits_arrived, energy_j, cum_bits, cum_energy_j, p_mean;
  double idle_baseline_j, above_idle_j, training_j; /* meter scopes (report.meter_scopes) */
  double residual_pred, residual_meas, residual_meas_rel, gbar_sq;
  double train_loss, eval_loss, eval_acc;
  double residual_exp, residual_exp_model, residual_exp_straggle;
} agc_row;

#define AGC_COL(field, type) type, offsetof(agc_row, field), NULL, 0
/* Doubles: an empty field when not applicable (not finite). */
#define AGC_NUM(field) AGC_COL(field, HS_COL_F64_OR_EMPTY)
/* A meter-scope column: written with report.meter_scopes only (hs_columns.h). */
#define AGC_METER(field) HS_COL_F64_OR_EMPTY, offsetof(agc_row, field), NULL, HS_COL_METER

static const hs_column agc_cols[] = {
    {"iteration", "1", "the iteration (a round), from 0", AGC_COL(iteration, HS_COL_U32)},
    {"start_s", "s", "simulated time it started", AGC_NUM(start_s)},
    {"end_s", "s", "simulated time it ended (decoded)", AGC_NUM(end_s)},
    {"duration_s", "s", "end_s - start_s", AGC_NUM(duration_s)},
    {"active", "1", "workers given work", AGC_COL(active, HS_COL_SIZE)},
    {"arrived", "1", "workers whose message arrived by the deadline", AGC_COL(arrived, HS_COL_SIZE)},
    {"stragglers", "1", "active workers cut at the deadline", AGC_COL(stragglers, HS_COL_SIZE)},
    {"bits_sent", "bit", "bits put on the wire, the stragglers' partial sends included",
     AGC_NUM(bits_sent)},
    {"bits_arrived", "bit", "bits of the messages that arrived", AGC_NUM(bits_arrived)},
    {"energy_j", "J", "energy of every worker in the iteration", AGC_NUM(energy_j)},
    {"energy_idle_baseline_j", "J", "every worker's idle power x the seconds it was on in the "
     "iteration, summed", AGC_METER(idle_baseline_j)},
    {"energy_above_idle_j", "J", "energy_j - energy_idle_baseline_j: the iteration's dynamic "
     "energy", AGC_METER(above_idle_j)},
    {"energy_training_j", "J", "training-only: the busy energy of the workers whose compute "
     "finished (what their meters reported to the controller); <= energy_j",
     AGC_METER(training_j)},
    {"cum_bits", "bit", "bits_sent since the start", AGC_NUM(cum_bits)},
    {"cum_energy_j", "J", "energy since the start", AGC_NUM(cum_energy_j)},
    {"p_mean", "1", "mean straggling probability the code was planned with", AGC_NUM(p_mean)},
    {"residual_pred", "1", "predicted E|g^ - g|^2 / |g-bar|^2 of the code", AGC_NUM(residual_pred)},
    {"residual_meas", "1", "with learning: |g^ - g|^2 of the real gradients", AGC_NUM(residual_meas)},
    {"residual_meas_rel", "1", "residual_meas / gbar_sq (comparable with residual_pred)",
     AGC_NUM(residual_meas_rel)},
    {"gbar_sq", "1", "with learning: mean over partitions of |g_j|^2", AGC_NUM(gbar_sq)},
    {"train_loss", "1", "with learning: training loss of the iteration", AGC_NUM(train_loss)},
    {"eval_loss", "1", "with learning: held-out loss, on evaluation iterations", AGC_NUM(eval_loss)},
    {"eval_acc", "1", "with learning: held-out accuracy, on evaluation iterations",
     AGC_NUM(eval_acc)},
    {"residual_exp", "1", "with learning: E|g^ - g|^2 given this iteration's gradients (bias + "
     "straggling + the quantiser's exact variance)", AGC_NUM(residual_exp)},
    {"residual_exp_model", "1", "the same with the planner's quantiser model (D) for the "
     "quantiser term", AGC_NUM(residual_exp_model)},
    {"residual_exp_straggle", "1", "bias + straggling terms only (no quantiser)",
     AGC_NUM(residual_exp_straggle)},
};

static const hs_csv_table agc_csv = {"agc.csv", "Runs of regime agc; one row per iteration.",
                                     HS_COLUMNS(agc_cols)};

static void open_csv(sim_run *r, agc_state *s) {
  s->csv_tried = true;
  if (!r->report) return;
  hs_error err = {0};
  s->csv = hs_report_extra(r->report, agc_csv.file, &err);
  if (!s->csv) {
    sim_fail(r, err.status, err.msg);
    return;
  }
  hs_csv_write_header_with(s->csv, &agc_csv, hs_scenario_columns(r->sc));
}

static void agc_start_round(sim_run *r) {
  agc_state *s = r->rs;
  const agc_opts *o = s->o;
  if (!s->csv_tried) open_csv(r, s);
  if (o->reestimate && r->round > 0 && r->round % o->reestimate == 0) reestimate(r, s);
  if (r->status != HS_OK) return;
  s->pending = s->narrived = 0;
  s->bits_in = 0;
  for (size_t i = 0; i < s->k; i++) {
    s->arrived[i] = false;
    s->phase[i] = PH_OFF;
    if (s->samples[i] == 0 || s->code.z[i] == 0) continue;
    s->phase[i] = PH_COMPUTE;
    s->pending++;
    sim_dev_state(r, i, HS_POWER_BUSY);
    double t = sim_dev_compute_s(r, i, s->samples[i], true, 0);
    if (s->mu) t += s->unit_s * -log(hs_rng_uniform_pos(&s->lag[i])) / s->mu[i];
    s->ev[i] = hs_engine_schedule_in(r->eng, t, 0, on_computed, r, i);
  }
  if (s->pending == 0) {
    sim_fail(r, HS_EINVAL, "no worker computes anything in this code");
    return;
  }
  s->deadline_ev =
      s->code.wait_all ? 0 : hs_engine_schedule_in(r->eng, s->deadline_s, 1, on_deadline, r, 0);
}

/* Whether worker i's compute of this iteration finished (its samples count
 * as trained: the meter reports them), given its busy seconds so far. */
static bool trained(const agc_state *s, size_t i, double busy_s) {
  return (s->phase[i] == PH_IN || s->phase[i] == PH_CUT_SEND) && busy_s > 0 && s->samples[i] > 0;
}

/* The iteration's energy under the other meter scopes (agc.csv, with
 * report.meter_scopes), as the run's round measure counts them from the
 * ledger's marks of the iteration (still unread here): the idle baseline is
 * each worker's idle power x its seconds on; training-only is the busy
 * energy of the workers that trained (agc_telemetry's). */
static void meter_scopes(const sim_run *r, const agc_state *s, double now, agc_row *row) {
  double base = 0, train = 0;
  for (size_t i = 0; i < s->k; i++) {
    hs_ledger_since d;
    hs_ledger_since_mark(r->ledger, i, now, &d);
    double on = d.time_s[HS_POWER_BUSY] + d.time_s[HS_POWER_COMM] + d.time_s[HS_POWER_IDLE];
    base += hs_ledger_get_power_of(r->ledger, i, HS_POWER_IDLE) * on;
    if (trained(s, i, d.time_s[HS_POWER_BUSY])) train += d.energy_j[HS_POWER_BUSY];
  }
  row->idle_baseline_j = base;
  row->above_idle_j = row->energy_j - base;
  row->training_j = train;
}

/* E||ghat - g||^2 given the iteration's gradients (regime_agc.h). */
static double exp_total(const agc_residual *e) { return e->bias + e->straggle + e->quant; }

static void iteration_end(sim_run *r) {
  agc_state *s = r->rs;
  double now = hs_engine_now(r->eng), partial = 0;
  if (s->deadline_ev) hs_engine_cancel(r->eng, s->deadline_ev);
  s->deadline_ev = 0;
  size_t stragglers = 0;
  for (size_t i = 0; i < s->k; i++) {
    if (s->phase[i] == PH_OFF) continue;
    s->tries[i]++;
    if (s->phase[i] == PH_IN) continue;
    if (s->phase[i] == PH_COMPUTE) {
      hs_engine_cancel(r->eng, s->ev[i]);
      s->ev[i] = 0;
      s->phase[i] = PH_CUT_COMPUTE;
    } else {
      partial += msg_bits(s, i) - 8.0 * hs_net_flow_remaining_bytes(r->net, s->flow[i]);
      hs_net_cancel(r->net, s->flow[i]);
      s->flow[i] = 0;
      s->phase[i] = PH_CUT_SEND;
    }
    s->misses[i]++;
    stragglers++;
    sim_dev_state(r, i, HS_POWER_IDLE);
  }
  double energy = 0, pmean = 0;
  for (size_t i = 0; i < s->k; i++) energy += hs_ledger_device_energy(r->ledger, i, now);
  for (size_t i = 0; i < s->k; i++) pmean += s->p[i] / (double)s->k;
  double sent = s->bits_in + partial;
  s->bits_cum += sent;
  s->stragglers_total += stragglers;
  s->active_total += s->pending;
  s->pred_sum += s->code.predicted;
  agc_learn_out lo = {NAN, {NAN, NAN, NAN, NAN}, NAN, NAN, NAN, NAN};
  if (s->learn) {
    bool ev = (r->round + 1) % s->o->eval_every == 0 || r->round + 1 == r->sc->rounds;
    agc_learn_iterate(s->learn, &s->code, s->p, s->arrived, r->round, ev, &lo);
    if (lo.gbar_sq > 0) {
      s->meas_rel_sum += lo.measured / lo.gbar_sq;
      s->exp_rel_sum += exp_total(&lo.expected) / lo.gbar_sq;
      s->meas_count++;
    }
    if (!isnan(lo.eval_loss)) {
      s->last_eval_loss = lo.eval_loss;
      if (s->o->target_loss > 0 && isnan(s->target_time_s) && lo.eval_loss <= s->o->target_loss) {
        s->target_time_s = now;
        s->target_energy_j = energy;
        s->target_bits = s->bits_cum;
      }
    }
  }
  if (s->csv) {
    agc_row row = {
        .iteration = r->round,
        .start_s = r->round_start_s,
        .end_s = now,
        .duration_s = now - r->round_start_s,
        .active = s->pending,
        .arrived = s->narrived,
        .stragglers = stragglers,
        .bits_sent = sent,
        .bits_arrived = s->bits_in,
        .energy_j = energy - s->energy_prev,
        .cum_bits = s->bits_cum,
        .cum_energy_j = energy,
        .p_mean = pmean,
        .residual_pred = s->code.predicted,
        .residual_meas = lo.measured,
        .residual_meas_rel = lo.gbar_sq > 0 ? lo.measured / lo.gbar_sq : NAN,
        .gbar_sq = lo.gbar_sq,
        .train_loss = lo.train_loss,
        .eval_loss = lo.eval_loss,
        .eval_acc = lo.eval_acc,
        .residual_exp = exp_total(&lo.expected),
        .residual_exp_model = lo.expected.bias + lo.expected.straggle + lo.expected.quant_model,
        .residual_exp_straggle = lo.expected.bias + lo.expected.straggle,
    };
    if (r->sc->report_meter_scopes) meter_scopes(r, s, now, &row);
    hs_csv_write_row_with(s->csv, &agc_csv, &row, hs_scenario_columns(r->sc));
  }
  s->energy_prev = energy;
  sim_round_end(r);
}

/* What a worker's meter saw: the samples of a compute that finished (a cut
 * one trained nothing), its busy time and busy energy of the iteration. */
static void agc_telemetry(sim_run *r, size_t i, sim_meter *m) {
  agc_state *s = r->rs;
  double now = hs_engine_now(r->eng);
  m->samples = trained(s, i, m->train_s) ? s->samples[i] : 0;
  m->train_j = hs_ledger_energy(r->ledger, i, HS_POWER_BUSY, now) - sim_dev_busy0_j(r, i);
}

/* --- set-up
 * ------------------------------------------------------------------- */

static hs_status agc_setup(sim_run *r, hs_error *err) {
  const hs_scenario *sc = r->sc;
  const agc_opts *o = sc->regime.opts;
  if (o->p_min >= o->p_max)
    return hs_error_set(err, HS_EINVAL, "%s: regime.p_min: %g is not below p_max = %g", sc->path,
                        o->p_min, o->p_max);
  agc_state *s = hs_calloc(1, sizeof *s);
  r->rs = s;
  size_t k = s->k = r->ndev;
  s->o = o;
  s->scheme = agc_scheme_of(o->scheme);
  s->n = o->partitions ? o->partitions : k;
  s->target_time_s = s->target_energy_j = s->target_bits = s->last_eval_loss = NAN;
  s->part_samples = hs_malloc(s->n * sizeof *s->part_samples);
  for (size_t j = 0; j < s->n; j++)
    s->part_samples[j] = sc->samples_per_round / s->n + (j < sc->samples_per_round % s->n);
  s->samples = hs_calloc(k, sizeof *s->samples);
  s->p = hs_calloc(k, sizeof *s->p);
  s->p0 = hs_calloc(k, sizeof *s->p0);
  s->misses = hs_calloc(k, sizeof *s->misses);
  s->tries = hs_calloc(k, sizeof *s->tries);
  s->phase = hs_calloc(k, sizeof *s->phase);
  s->arrived = hs_calloc(k, sizeof *s->arrived);
  s->ev = hs_calloc(k, sizeof *s->ev);
  s->flow = hs_calloc(k, sizeof *s->flow);
  if (strcmp(o->learn, "none")) {
    hs_status st = agc_learn_create(o, sc->seed, s->n, s->part_samples, &s->learn, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "%s: regime", sc->path);
      return st;
    }
  }
  s->dim = o->dim     ? o->dim
           : s->learn ? agc_learn_nparams(s->learn)
                      : (uint64_t)(sc->model_bytes / 4 > 1 ? sc->model_bytes / 4 : 1);
  s->d = !strcmp(o->d_rule, "given")      ? o->d
         : !strcmp(o->d_rule, "measured") ? measured_d(s, sc->seed)
                                          : (double)s->dim / 4.0;
  if (!strcmp(o->p_rule, "given"))
    memcpy(s->p, o->p, k * sizeof *s->p);
  else if (!strncmp(o->p_rule, "model", 5)) { /* model, model_load */
    s->mu = hs_malloc(k * sizeof *s->mu);
    s->lag = hs_malloc(k * sizeof *s->lag);
    for (size_t i = 0; i < k; i++) {
      hs_rng g;
      hs_rng_init(&g, sc->seed, sim_dev_key(r, i), 0x4d55u);
      s->mu[i] = 0.01 + 1.99 * hs_rng_uniform(&g);
      s->p[i] = exp(-s->mu[i] * (o->z_th - 1.0));
      hs_rng_init(&s->lag[i], sc->seed, sim_dev_key(r, i), 0x4c4147u);
    }
  }
  /* The deadline: given, or z_th times the slowest nominal arrival with the
   * layout's (n + k - 1)/k partitions rounded up (what every worker but the
   * last holds when n = k) and the mean bits. Rounded down, as it was, that
   * is 1 partition for n = k: every worker with 2 then straggled more often
   * than the model's p_i and the 1/(1 - p_i) decoder was biased. The
   * profile rules start their fixed point from the rounded-down load (an
   * optimistic start: a worker found late there stays off). */
  size_t parts = (s->n + k - 1) / k ? (s->n + k - 1) / k : 1;
  size_t parts_up = (s->n + 2 * k - 2) / k ? (s->n + 2 * k - 2) / k : 1;
  double zbar = s->scheme == AGC_GD ? 32.0 : (double)o->z_res / (double)k + o->offset;
  double nominal_bits = zbar * (double)s->dim + 64.0;
  uint64_t nominal_samples = (sc->samples_per_round / s->n) * parts;
  uint64_t deadline_samples = (sc->samples_per_round / s->n) * parts_up;
  /* Under the model's lags (mean unit / mu_i, far longer than an upload) the
   * uploads rarely overlap: the nominal arrival uploads alone, so that a
   * worker with the nominal load straggles with exactly the model's p_i.
   * Without lags every worker finishes together: the fair share of k. */
  bool lone = !strncmp(o->p_rule, "model", 5);
  s->deadline_s = o->deadline_s;
  if (s->deadline_s <= 0) {
    for (size_t i = 0; i < k; i++) {
      double a = agc_nominal_arrival(r, i, deadline_samples, nominal_bits, lone ? 1 : k);
      if (a > s->deadline_s) s->deadline_s = a;
    }
    s->deadline_s *= o->z_th;
  }
  s->unit_s = s->deadline_s / o->z_th;
  bool lagged = !strcmp(o->p_rule, "model_load");
  if (lagged || !strcmp(o->p_rule, "profile")) {
    /* p depends on the load and the bits, which depend on p: start from the
     * nominal load, then re-estimate with the planned one (an off worker
     * keeps the nominal load) until the code stops changing (at most 8).
     * model_load: the model's lag against what the load leaves of the
     * deadline; profile: the profile's compute noise against it. */
    uint64_t *ns = hs_malloc(k * sizeof *ns);
    double *bits = hs_malloc(k * sizeof *bits);
    int64_t *zprev = hs_calloc(k, sizeof *zprev);
    bool *sends = hs_calloc(k, sizeof *sends);
    hs_status st = HS_OK;
    for (int pass = 0; pass < 8; pass++) {
      bool same = pass > 0;
      for (size_t i = 0; i < k; i++) {
        bool on = pass > 0 && s->code.z[i] && s->samples[i];
        sends[i] = pass == 0 || on;
        ns[i] = on ? s->samples[i] : nominal_samples;
        bits[i] = on ? msg_bits(s, i) : nominal_bits;
        if (pass > 0) {
          same = same && zprev[i] == s->code.z[i];
          zprev[i] = s->code.z[i];
        }
      }
      if (same) break;
      if (lagged)
        agc_p_model_load(r, ns, bits, s->mu, s->unit_s, s->deadline_s, o->p_min, o->p_max, s->p);
      else if (o->first_k)
        agc_p_first_k(r, ns, bits, sends, s->deadline_s, o->first_k, sc->seed, o->p_min, o->p_max,
                      s->p);
      else
        agc_p_from_profiles(r, ns, bits, s->deadline_s, o->p_min, o->p_max, s->p);
      if ((st = plan(r, s, err)) != HS_OK) break;
    }
    hs_free(ns);
    hs_free(bits);
    hs_free(zprev);
    hs_free(sends);
    if (st != HS_OK) return st;
    memcpy(s->p0, s->p, k * sizeof *s->p);
    return HS_OK;
  }
  memcpy(s->p0, s->p, k * sizeof *s->p);
  return plan(r, s, err);
}

static void agc_teardown(sim_run *r) {
  agc_state *s = r->rs;
  if (!s) return;
  agc_code_free(&s->code);
  agc_learn_destroy(s->learn);
  hs_free(s->part_samples);
  hs_free(s->samples);
  hs_free(s->p);
  hs_free(s->p0);
  hs_free(s->mu);
  hs_free(s->lag);
  hs_free(s->misses);
  hs_free(s->tries);
  hs_free(s->phase);
  hs_free(s->arrived);
  hs_free(s->ev);
  hs_free(s->flow);
  hs_free(s);
  r->rs = NULL;
}

/* The planner's error model (agc_code_predicted) with each worker's straggle
 * rate seen on the timeline in place of its planned p_i: what the realised
 * arrivals cost the decoder, whose weights assume p. NAN once the code was
 * re-planned (the rates then mix codes) or before any iteration. */
static double pred_observed(const agc_state *s) {
  if (s->replans || !s->active_total) return NAN;
  double *q = hs_malloc(s->k * sizeof *q);
  for (size_t i = 0; i < s->k; i++) q[i] = s->tries[i] ? (double)s->misses[i] / s->tries[i] : s->p[i];
  double v = agc_code_predicted(&s->code, q);
  hs_free(q);
  return v;
}

static size_t agc_summary(sim_run *r, hs_report_field *out, size_t cap) {
  const agc_state *s = r->rs;
  double it = r->sc->rounds ? (double)r->sc->rounds : 1;
  const hs_report_field f[] = {
      {"agc_deadline_s", s->code.wait_all ? NAN : s->deadline_s},
      {"agc_d", s->d},
      {"agc_bits", s->bits_cum},
      {"agc_straggler_rate", s->active_total ? (double)s->stragglers_total / s->active_total : 0},
      {"agc_residual_pred", s->pred_sum / it},
      {"agc_residual_meas_rel", s->meas_count ? s->meas_rel_sum / s->meas_count : NAN},
      {"agc_residual_exp_rel", s->meas_count ? s->exp_rel_sum / s->meas_count : NAN},
      {"agc_residual_pred_observed", pred_observed(s)},
      {"agc_replans", s->replans},
      {"agc_eval_loss", s->last_eval_loss},
      {"agc_target_time_s", s->target_time_s},
      {"agc_target_energy_j", s->target_energy_j},
      {"agc_target_bits", s->target_bits},
  };
  size_t n = sizeof f / sizeof f[0];
  if (n > cap) n = cap;
  memcpy(out, f, n * sizeof *f);
  return n;
}

/* --- options
 * -------------------------------------------------------------------- */

static const char *agc_prepare(const hs_scenario *sc, const void *opts, const sim_regime_opt *o,
                               double *def) {
  const agc_opts *a = opts;
  const char *k = o->key;
  if (!strcmp(k, "z_res")) *def = 5.0 * (double)sc->total_devices;
  if (!strcmp(k, "layout") && strcmp(a->scheme, "proposed") && strcmp(a->scheme, "osgc"))
    return "applies only to schemes \"proposed\" and \"osgc\" (the planner's layouts)";
  if (!strcmp(k, "allocator") && strcmp(a->scheme, "proposed"))
    return "applies only to scheme \"proposed\" (the baselines split bits "
           "equally)";
  /* A choice not read yet (NULL) does not rule an option out. */
  if (!strcmp(k, "d") && a->d_rule && strcmp(a->d_rule, "given"))
    return "applies only to d_rule \"given\"";
  if (!strcmp(k, "p") && a->p_rule && strcmp(a->p_rule, "given"))
    return "applies only to p_rule \"given\"";
  bool learning = !a->learn || strcmp(a->learn, "none");
  static const char *const lkeys[] = {"optimizer",   "lr",      "eval_every",  "eval_samples",
                                      "target_loss", "threads", "max_samples", NULL};
  for (size_t i = 0; lkeys[i]; i++)
    if (!strcmp(k, lkeys[i]) && !learning) return "applies only with learn \"mnist\"";
  if (!strcmp(k, "lr") && a->optimizer && !strcmp(a->optimizer, "adam2")) *def = 0.001;
  return NULL;
}

static hs_status p_parse(sim_opt_ctx *c, const cJSON *node, void *opts, const sim_regime_opt *opt) {
  agc_opts *o = opts;
  const hs_scenario *sc = sim_opt_scenario(c);
  size_t k = sc->total_devices;
  if (!node) return sim_opt_missing(c, opt->key);
  size_t m = sim_opt_key(c, opt->key);
  if (!cJSON_IsNumber(node) && !cJSON_IsArray(node))
    return sim_opt_fail(c, HS_ETYPE, "expected a number or an array of %zu numbers, got %s", k,
                        sim_json_type(node));
  if (cJSON_IsArray(node) && (size_t)cJSON_GetArraySize(node) != k)
    return sim_opt_fail(c, HS_EINVAL, "expected %zu numbers (one per device), got %d", k,
                        cJSON_GetArraySize(node));
  o->p = hs_calloc(k, sizeof *o->p);
  o->np = k;
  for (size_t i = 0; i < k; i++) {
    const cJSON *e = cJSON_IsArray(node) ? cJSON_GetArrayItem(node, (int)i) : node;
    size_t m2 = cJSON_IsArray(node) ? sim_opt_index(c, i) : m;
    if (!cJSON_IsNumber(e))
      return sim_opt_fail(c, HS_ETYPE, "expected a number, got %s", sim_json_type(e));
    double v = e->valuedouble;
    if (!(v >= 0 && v < 1)) return sim_opt_fail(c, HS_ERANGE, "%g is outside [0,1)", v);
    o->p[i] = v;
    if (cJSON_IsArray(node)) sim_opt_pop(c, m2);
  }
  sim_opt_pop(c, m);
  return HS_OK;
}

static void p_print(cJSON *reg, const void *opts, const sim_regime_opt *opt) {
  const agc_opts *o = opts;
  cJSON *a = cJSON_AddArrayToObject(reg, opt->key);
  if (!a) abort();
  for (size_t i = 0; i < o->np; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(o->p[i]));
}

static void agc_opts_free(void *opts) { hs_free(((agc_opts *)opts)->p); }

static const char *const allocators[] = {"lag", "dp", "greedy", "equal", NULL};
static const char *const d_rules[] = {"theory", "tuned", "given", "measured", NULL};
static const char *const layouts[] = {"interval", "shared", NULL};
static const char *const p_rules[] = {"profile", "model", "given", "model_load", NULL};
static const char *const learns[] = {"none", "mnist", NULL};
static const char *const optimizers[] = {"sgd", "adam2", NULL};

#define U32MAX 4294967295.0
#define OPT(key, type, field, def, lo, hi, bounds, choices, doc) \
  { key, type, offsetof(agc_opts, field), def, lo, hi, bounds, choices, NULL, doc }
static const sim_regime_opt agc_table[] = {
    OPT("scheme", SIM_OPT_CHOICE, scheme, 0, 0, 0, 0, agc_scheme_names,
        "proposed (the planner), or a baseline: osgc, sgc, bgc, ehd, issgd, "
        "gd"),
    OPT("allocator", SIM_OPT_CHOICE, allocator, 0, 0, 0, 0, allocators,
        "bit allocator of the proposed scheme: lag, dp, greedy, equal"),
    OPT("offset", SIM_OPT_UINT, offset, 1, 1, 2, 0, NULL,
        "bits on the wire z_i = b_i + offset (1: the paper's model, 2: the "
        "public code)"),
    OPT("z_res", SIM_OPT_UINT, z_res, 0, 0, 2147483647.0, 0, NULL,
        "residual bit budget Z_res shared by the workers (default 5 per "
        "device)"),
    OPT("partitions", SIM_OPT_UINT, partitions, 0, 0, 2147483647.0, 0, NULL,
        "data partitions n (0: one per device)"),
    OPT("dim", SIM_OPT_UINT, dim, 0, 0, U32MAX, 0, NULL,
        "coordinates per message (0: the model's parameters, model_bytes / 4)"),
    OPT("layout", SIM_OPT_CHOICE, layout, 0, 0, 0, 0, layouts,
        "code layout of proposed and osgc: interval (nonnegative, the one "
        "whose error the planner predicts) or shared (the public code's, "
        "coefficients can be negative)"),
    OPT("d_rule", SIM_OPT_CHOICE, d_rule, 0, 0, 0, 0, d_rules,
        "quantiser constant D: theory (dim/4), tuned (the public code's), "
        "given (d), measured (from the quantiser's variance on the gradients)"),
    OPT("d", SIM_OPT_NUM, d, 1, 0, INFINITY, SIM_OPT_LO_OPEN, NULL, "quantiser constant D > 0"),
    OPT("p_rule", SIM_OPT_CHOICE, p_rule, 0, 0, 0, 0, p_rules,
        "straggler probabilities: profile (against the deadline), model "
        "(spec), given (p), model_load (the spec's lags, p from each worker's "
        "planned load)"),
    {"p", SIM_OPT_CUSTOM, 0, 0, 0, 0, 0, NULL, NULL,
     "straggler probabilities in [0,1): one number, or one per device"},
    OPT("z_th", SIM_OPT_NUM, z_th, 1.1, 1, INFINITY, SIM_OPT_LO_OPEN, NULL,
        "deadline over the nominal iteration time (> 1)"),
    OPT("deadline_s", SIM_OPT_NUM, deadline_s, 0, 0, INFINITY, 0, NULL,
        "round deadline in seconds (0: z_th x the slowest nominal arrival)"),
    OPT("first_k", SIM_OPT_UINT, first_k, 0, 0, U32MAX, 0, NULL,
        "decode at the K-th arrival if before the deadline (0: at the "
        "deadline)"),
    OPT("reestimate_every", SIM_OPT_UINT, reestimate, 0, 0, U32MAX, 0, NULL,
        "iterations between re-estimates of p from observed lateness (0: "
        "never)"),
    OPT("prior_weight", SIM_OPT_NUM, prior_weight, 10, 0, INFINITY, 0, NULL,
        "iterations the initial p counts for in a re-estimate"),
    OPT("p_min", SIM_OPT_NUM, p_min, 0.001, 0, 1, SIM_OPT_HI_OPEN, NULL,
        "estimated p are clamped to [p_min, p_max] (a floor for light-tailed "
        "profiles)"),
    OPT("p_max", SIM_OPT_NUM, p_max, 0.999, 0, 1, SIM_OPT_LO_OPEN | SIM_OPT_HI_OPEN, NULL,
        "estimated p are clamped to [p_min, p_max]"),
    OPT("lambda", SIM_OPT_NUM, lambda, 1, 0, INFINITY, SIM_OPT_LO_OPEN, NULL,
        "lane-2 (second moment) regulariser"),
    OPT("learn", SIM_OPT_CHOICE, learn, 0, 0, 0, 0, learns,
        "learning in the loop: none, or mnist (real gradients, Fashion-MNIST "
        "MLP)"),
    OPT("optimizer", SIM_OPT_CHOICE, optimizer, 0, 0, 0, 0, optimizers,
        "sgd, or adam2 (two-lane Adam: lane 1 first moment, lane 2 second)"),
    OPT("lr", SIM_OPT_NUM, lr, 0.05, 0, INFINITY, SIM_OPT_LO_OPEN, NULL,
        "learning rate (step on ghat / n)"),
    OPT("eval_every", SIM_OPT_UINT, eval_every, 10, 1, U32MAX, 0, NULL,
        "iterations between held-out evaluations"),
    OPT("eval_samples", SIM_OPT_UINT, eval_samples, 1000, 1, U32MAX, 0, NULL,
        "held-out samples per evaluation"),
    OPT("target_loss", SIM_OPT_NUM, target_loss, 0, 0, INFINITY, 0, NULL,
        "held-out loss whose first reach is reported (0: none)"),
    OPT("threads", SIM_OPT_UINT, threads, 1, 1, 256, 0, NULL,
        "learner threads (results do not depend on it)"),
    OPT("max_samples", SIM_OPT_UINT, max_samples, 0, 0, U32MAX, 0, NULL,
        "training images loaded (0: the learner's default)"),
};

const sim_regime sim_regime_agc = {
    .name = "agc",
    .summary =
        "approximate gradient coding with quantisation: coded, "
        "quantised uploads, "
        "decode at the deadline",
    .opts = agc_table,
    .nopts = sizeof agc_table / sizeof agc_table[0],
    .opts_size = sizeof(agc_opts),
    .opt_prepare = agc_prepare,
    .opt_parse = p_parse,
    .opt_print = p_print,
    .opts_free = agc_opts_free,
    .caps_refused = HS_POLICY_CAP_SELECTS | HS_POLICY_CAP_STEP_LEVEL,
    /* Its learning is its own (regime.learn), not the learning block's. */
    .can = SIM_CAN_AVAIL | SIM_CAN_SHARED,
    .dev_bytes = sizeof(double), /* the run's scratch */
    .setup = agc_setup,
    .start_round = agc_start_round,
    .teardown = agc_teardown,
    .telemetry = agc_telemetry,
    .summary_fields = agc_summary,
    .csv = &agc_csv,
    .metric_group = "agc",
};
