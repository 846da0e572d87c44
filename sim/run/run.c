/* run.c: one simulation run: set-up, the round loop, telemetry to the real
 * controller, outputs, and the summary.
 *
 * Structure: sim_run holds the engine, the energy ledger, the network, the
 * controller and an array of expanded devices. A regime (regime_*.c) schedules
 * the events of a round and calls sim_round_end when it is over. A round ends
 * in four steps: measure (the ledger's per-round differences become device
 * rows, and each device's meter, the regime's telemetry hook or the ledger's
 * busy figures, becomes telemetry), feed the controller exactly as a trainer on
 * the boards would (time, energy and samples of each participant's training),
 * report the round's row, and start the next round (round_open, the one place
 * a round starts; a windowed regime keeps its devices looping instead).
 * Whatever differs between regimes comes from the descriptor (sim_regime.h):
 * groups, telemetry, policy capabilities, extra summary fields.
 *
 * Every device is on (idle) from t = 0 to the end of the last round (the
 * synchronised window) and off after; energy is what the ledger integrated.
 * Per-device random streams are keyed by a hash of the device's name, so adding
 * a device does not change another device's draws. Memory is O(devices): rows
 * stream to the output files as rounds end.
 *
 * Device records (issue 13; sim_run.h): an event reads only the device's
 * sim_hot, which lives in the ledger's line of the device (hs_ledger_user), so
 * a state switch and what the event needs cost one cache miss at 10^6
 * devices; the cold record (compute stream, scaled task, round-start ledger
 * figures) is read in device order at the round's start and end; what every
 * device of a scenario entry shares is in sim_spec; names are the scenario's.
 * Rejected: one record per device with everything (224 B, three lines, three
 * misses per event; the split and PMA's one-pass round cut hs-bench-pma's
 * CPU time and memory per device, sim/doc/performance.md); a
 * copy of each name (32 B per device for what only outputs and messages
 * read). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "sim/hs_collective.h"
#include "sim/hs_metrics.h"
#include "base/hs_util.h"
#include "traces/hs_columns.h"
#include "dyn.h"
#include "run_describe.h"
#include "run_devagg.h"
#include "sim_run.h"
#include "sim_learning.h"

#define SIM_RNG_SEND_STALL 0x73746c6cULL /* purpose of the send-stall streams ("stll") */

void sim_fail(sim_run *r, hs_status st, const char *msg) {
  if (r->status == HS_OK) {
    r->status = st;
    hs_error_set(&r->err, st, "%s", msg);
  }
  hs_engine_stop(r->eng);
}

static const char *span_name(hs_power_state st) {
  switch (st) {
    case HS_POWER_BUSY: return "compute";
    case HS_POWER_COMM: return "comm";
    case HS_POWER_IDLE: return "wait";
    default: return "off";
  }
}

/* Only the ledger's line of the device (its sim_hot is there too) is touched
 * unless the run has dynamics or traces. */
void sim_dev_state(sim_run *r, size_t i, hs_power_state st) {
  double now = hs_engine_now(r->eng);
  if (r->dyn_of && r->dyn_of[i]) sim_dyn_state(r, i, st);
  hs_ledger_switch(r->ledger, i, st, now);
  sim_span *sp = r->span ? &r->span[i] : NULL;
  if (sp && hs_report_tracing(r->report) && !sp->untraced && sp->state != st) {
    if (sp->state != HS_POWER_OFF && now > sp->start_s)
      hs_report_span(r->report, (uint32_t)i, span_name(sp->state), sp->start_s, now);
    sp->state = st;
    sp->start_s = now;
  }
}

void sim_dev_model_transfer(sim_run *r, size_t i, hs_event_fn on_done, uint64_t arg) {
  const sim_spec *sp = sim_dev_sp(r, i);
  sim_dev_state(r, i, HS_POWER_COMM);
  double stall = sp->stall_s > 0 ? sim_dev_send_stall_s(r, i, r->sc->model_bytes) : 0;
  hs_net_transfer(r->net, r->sc->model_bytes, sp->access_bps, sp->access_latency_s + stall,
                  &r->server_link, 1, on_done, r, arg);
}

/* The quota model (sim/doc/engine-and-network.md, "CPU-bound transfers"): a
 * computation ends at a uniform point of the quota it had left in its period,
 * so what is left is uniform on [0, share x period]; a send needing more CPU
 * than that (bytes x cost) waits out the period's throttled part. Two values
 * only (0 or stall_s), so the flows keep two latency lanes per entry. */
double sim_dev_send_stall_s(sim_run *r, size_t i, double bytes) {
  const sim_spec *sp = sim_dev_sp(r, i);
  if (!(sp->stall_s > 0)) return 0;
  HS_ASSERT(r->rng_stall, "stall streams exist when an entry has a cpu quota");
  return hs_rng_uniform(&r->rng_stall[i]) < bytes * sp->stall_per_byte ? sp->stall_s : 0;
}

void sim_dev_model_download(sim_run *r, size_t i, hs_event_fn on_done, uint64_t arg) {
  const sim_spec *sp = sim_dev_sp(r, i);
  sim_dev_state(r, i, HS_POWER_COMM);
  hs_net_transfer(r->net, r->sc->model_bytes, sp->access_bps, sp->access_latency_s,
                  &r->server_down, 1, on_done, r, arg);
}

/* A time past the largest double: simulated time has run out of range. */
static void fail_time_overflow(sim_run *r, const char *what) {
  char msg[HS_ERROR_MSG_MAX];
  snprintf(msg, sizeof msg,
           "round %u: %s ends beyond the largest representable time (t = inf): model_bytes, "
           "link bandwidths or speed traces too extreme",
           r->round, what);
  sim_fail(r, HS_EINVAL, msg);
}

double sim_dev_stretch_s(sim_run *r, size_t i, double work_s, double after_s) {
  const hs_speed_trace *trace = sim_dev_sp(r, i)->trace;
  bool dyn = sim_dev_dyn(r, i) != NULL;
  double t0 = hs_engine_now(r->eng) + after_s;
  double end = trace && isfinite(t0) ? hs_speed_trace_finish(trace, t0, work_s) : t0 + work_s;
  if (dyn) end = t0 + sim_dyn_finish(r, i, work_s, after_s);
  if (!isfinite(end)) {
    /* Fail, and give the caller a harmless 0: the engine stops before the
     * event it schedules. */
    char what[128];
    snprintf(what, sizeof what, "a computation on %s", sim_dev_name(r, i));
    fail_time_overflow(r, what);
    return 0;
  }
  return trace || dyn ? end - t0 : work_s;
}

double sim_dev_draw_work(sim_run *r, size_t i, uint64_t samples, bool with_overhead) {
  return sim_dev_draw_work_sp(r, i, sim_dev_sp(r, i), samples, with_overhead);
}

double sim_dev_compute_s(sim_run *r, size_t i, uint64_t samples, bool with_overhead,
                         double after_s) {
  double work = sim_dev_draw_work(r, i, samples, with_overhead);
  return sim_dev_stretch_s(r, i, work, after_s);
}

double sim_dev_last_compute_j(sim_run *r, size_t i) {
  return sim_dev_dyn(r, i) ? sim_dyn_last_j(r, i) : NAN;
}

/* --- rounds --------------------------------------------------------------- */

/* A round starts: the controller's allocation applies, the ledger is read. */
static void round_open(sim_run *r) {
  r->round_start_s = hs_engine_now(r->eng);
  r->round_cv = NAN;
  /* no copy: see sim_run_set_alloc; a fixed schedule (hs_run_opts) takes
   * the controller's place */
  r->alloc = r->opts->schedule ? r->opts->schedule + (size_t)r->round * r->ndev
                               : hs_controller_allocation(r->ctl);
  hs_ledger_mark(r->ledger, r->round_start_s); /* the round's differences start here */
}

/* Measurement noise: x times a lognormal factor with mean 1 and coefficient
 * of variation `cv`. Lognormal, not 1 + N(0, cv): a reading is never zero or
 * negative, which the controller would rightly reject for a device that
 * trained samples (with cv = 1 a normal factor is <= 0 one time in six). */
static double noisy(sim_run *r, size_t i, double x, double cv) {
  if (cv <= 0) return x;
  HS_ASSERT(r->rng_tele, "telemetry streams exist when there is noise");
  hs_rng_gsl_retarget(r->gsl, &r->rng_tele[i]);
  double s2 = log1p(cv * cv);
  return x * exp(sqrt(s2) * gsl_ran_ugaussian(r->gsl) - 0.5 * s2);
}

double sim_dev_reported_s(sim_run *r, size_t i, double t_s) {
  return t_s > 0 ? noisy(r, i, t_s, r->sc->telemetry_time_noise) : t_s;
}

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What the round adds up to over devices (its rounds.csv row). */
typedef struct round_totals {
  double energy_j, max_wait_s, cv;
  double idle_baseline_j, training_j; /* meter scopes (report.meter_scopes) */
} round_totals;

/* Measure the round: per device, the ledger's differences since round_open
 * (its devices.csv row) and what its meter reports (r->tele, which takes
 * the place of the device's mark once the device is measured: no meter may
 * read another device's mark); the totals. False when the run failed. */
static bool round_measure(sim_run *r, double now, round_totals *t) {
  const hs_scenario *sc = r->sc;
  void (*meter)(sim_run *, size_t, sim_meter *) = r->regime->telemetry;
  double energy = 0, max_wait = 0, sum = 0, sq = 0, base_sum = 0, train_sum = 0;
  size_t active = 0;
  void (*settle)(sim_run *, size_t) = r->settle;
  r->settle = NULL;
  for (size_t i = 0; i < r->ndev; i++) {
    if (settle) settle(r, i);
    hs_ledger_since d; /* the device's round, one pass over its line and mark */
    hs_ledger_since_mark(r->ledger, i, now, &d);
    double e = d.device_j, busy = d.time_s[HS_POWER_BUSY], comm = d.time_s[HS_POWER_COMM],
           wait = d.time_s[HS_POWER_IDLE];
    /* Telemetry: the training time and energy a meter on the board saw: the
     * whole busy time of the round (PMA: the local training loop, overhead
     * included), or what the regime's hook says (DDP: the steps' compute;
     * fedasync: the updates completed in the window). */
    sim_meter m = {r->alloc[i], busy, 0, comm};
    if (meter) meter(r, i, &m);
    uint64_t n = m.samples;
    if (n > 0 && !(m.train_s > 0)) {
      /* Training always takes time; none measured means the clock has grown
       * too large (or the training too short) for a double to tell the
       * round's instants apart. */
      char msg[HS_ERROR_MSG_MAX];
      snprintf(msg, sizeof msg,
               "round %u: %s trained %llu samples in 0 s: at t = %g s a double cannot "
               "resolve its training time (model_bytes, link bandwidths, speed traces or "
               "tau_s too extreme)",
               r->round, sim_dev_name(r, i), (unsigned long long)n, now);
      sim_fail(r, HS_EINVAL, msg);
      return false;
    }
    if (!meter) m.train_j = d.energy_j[HS_POWER_BUSY];
    if (n > 0) r->train_j_sum += m.train_j; /* the training-only meter scope */
    if (n > 0) train_sum += m.train_j;
    /* Idle power never changes during a run (dynamics and DVFS move the busy
     * power only): the round's idle baseline is one product per device. */
    double base = sc->report_meter_scopes
                      ? hs_ledger_get_power_of(r->ledger, i, HS_POWER_IDLE) * (busy + comm + wait)
                      : 0.0;
    base_sum += base;
    energy += e;
    if (wait > max_wait) max_wait = wait;
    if (n > 0) {
      sum += m.train_s;
      sq += m.train_s * m.train_s;
      active++;
    }
    r->samples_total += n;
    /* Over the device's mark (hs_ledger_mark_in): its last read is above. */
    r->tele[i].samples = (int64_t)n;
    r->tele[i].time_s = n ? noisy(r, i, m.train_s, sc->telemetry_time_noise) : 0.0;
    r->tele[i].energy_j = n ? noisy(r, i, m.train_j, sc->telemetry_energy_noise) : 0.0;
    /* communication as the board's clock saw it; no noise draw (the noise
     * streams, and so every existing run, stay as they were) */
    r->comm_s[i] = m.comm_s;
    if (r->report && !r->agg) {
      hs_telemetry_row tr = {r->round, sim_dev_name(r, i), r->tele[i].time_s, r->tele[i].energy_j,
                             (uint64_t)r->tele[i].samples, r->comm_s[i]};
      hs_report_telemetry(r->report, &tr);
      if (sc->report_meter_scopes) {
        hs_meter_row mr = {r->round, tr.device, e, base, e - base, n > 0 ? m.train_j : 0.0};
        hs_report_meter(r->report, &mr);
      }
    }
    if (r->opts->on_device_round) {
      hs_run_device_round dr = {r->round, i, sim_dev_name(r, i), n, busy, comm, wait, e,
                                n > 0 ? m.train_j : 0.0};
      r->opts->on_device_round(r->opts->userdata, &dr);
    }
    if (r->agg) {
      sim_devagg_add(r->agg, i, n, busy, comm, wait, e);
      if (sc->report_meter_scopes) sim_devagg_scopes(r->agg, i, base, n > 0 ? m.train_j : 0.0);
    } else if (r->report) {
      hs_device_row row = {r->round, sim_dev_name(r, i), n, busy, comm, wait, e,
                           hs_profile_name(sc->devices[sim_dev_spec(r, i)].profile)};
      hs_report_device(r->report, &row);
    }
  }
  if (r->agg) sim_devagg_flush(r->agg, r->round, r->report);
  double cv = r->round_cv;
  if (isnan(cv)) {
    double mean = active ? sum / (double)active : 0;
    double var = active ? sq / (double)active - mean * mean : 0;
    cv = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
  }
  r->cv_sum += cv;
  if (r->cv_count > 0) r->cv_adapted_sum += cv;
  r->cv_count++;
  *t = (round_totals){energy, max_wait, cv, base_sum, train_sum};
  return true;
}

/* The telemetry to the controller, timed when asked. False when it refused. */
static bool round_feed_controller(sim_run *r) {
  double t0 = r->measure_overhead ? wall_s() : 0;
  hs_error err = {0};
  hs_status st = HS_OK;
  /* Learning: the participants' real losses (Oort's statistical utility). */
  if (r->learn && sim_learn_utilities(r->learn, sim_run_scratch(r), r->ndev))
    st = hs_controller_set_utility(r->ctl, r->scratch, r->ndev, &err);
  /* Every round: the devices' communication (policies without a use for it
   * ignore it; round-time balances whole rounds with it). */
  if (st == HS_OK) st = hs_controller_set_comm(r->ctl, r->comm_s, r->ndev, &err);
  if (st == HS_OK) st = hs_controller_update(r->ctl, r->tele, r->ndev, &err);
  if (r->measure_overhead) r->controller_wall_s += wall_s() - t0;
  if (st == HS_OK) return true;
  char msg[HS_ERROR_MSG_MAX + 64];
  snprintf(msg, sizeof msg, "round %u: controller rejected the telemetry: %s", r->round, err.msg);
  sim_fail(r, st, msg);
  return false;
}

static void round_report(sim_run *r, double now, const round_totals *t) {
  if (!r->report) return;
  hs_round_row row = {r->round,     r->round_start_s, now, t->energy_j, t->cv, t->max_wait_s,
                      hs_controller_reallocated(r->ctl),
                      /* the meter scopes: written with report.meter_scopes only */
                      t->idle_baseline_j, t->energy_j - t->idle_baseline_j, t->training_j};
  hs_report_round(r->report, &row);
}

/* The next round, or the end of the run. A windowed regime's devices keep
 * looping: its round only opens (new allocation, ledger read). */
static void round_next(sim_run *r) {
  r->round++;
  if (r->round >= r->sc->rounds) {
    r->finished = true;
    hs_engine_stop(r->eng);
    return;
  }
  round_open(r);
  if (!r->regime->windowed) r->regime->start_round(r);
}

void sim_round_end(sim_run *r) {
  double now = hs_engine_now(r->eng);
  if (!isfinite(now)) {
    fail_time_overflow(r, "the round");
    return;
  }
  round_totals t;
  if (!round_measure(r, now, &t) || !round_feed_controller(r)) return;
  round_report(r, now, &t);
  if (r->opts->on_round_end)
    r->opts->on_round_end(r->opts->userdata, r->round, r->round_start_s, now);
  r->energy_cum_j += t.energy_j;
  r->idle_baseline_cum_j += t.idle_baseline_j;
  if (r->learn) {
    sim_learn_energy e = {r->energy_cum_j, r->idle_baseline_cum_j,
                          r->energy_cum_j - r->idle_baseline_cum_j, r->train_j_sum};
    sim_learn_round_end_scopes(r->learn, r->round, r->round + 1 >= r->sc->rounds, now, &e,
                               r->report);
  }
  if (r->opts->on_round) r->opts->on_round(r->opts->userdata, r->round + 1, r->sc->rounds);
  round_next(r);
}

/* --- learning hooks (sim_learning.h does the work) --------------------------- */

static bool learn_failed(sim_run *r, const hs_error *e) {
  char msg[HS_ERROR_MSG_MAX + 32];
  snprintf(msg, sizeof msg, "round %u: learning: %s", r->round, e->msg);
  sim_fail(r, e->status, msg);
  return false;
}

bool sim_learn_round_fedavg_of(sim_run *r, const uint64_t *n) {
  hs_error e = {0};
  if (!r->learn || sim_learn_fedavg(r->learn, r->round, n, r->ndev, &e) == HS_OK) return true;
  return learn_failed(r, &e);
}

bool sim_learn_round_fedavg(sim_run *r) { return sim_learn_round_fedavg_of(r, r->alloc); }

bool sim_learn_arrival(sim_run *r, size_t i, uint64_t n, double a) {
  hs_error e = {0};
  if (!r->learn || sim_learn_async_arrival(r->learn, i, n, a, &e) == HS_OK) return true;
  return learn_failed(r, &e);
}

/* --- set-up ----------------------------------------------------------------- */

/* The per-entry table, the devices' cold records and their sim_hot (in the
 * ledger, which must exist). False when the device array cannot be had. */
static bool expand_devices(sim_run *r) {
  const hs_scenario *sc = r->sc;
  r->ndev = sc->total_devices;
  r->dev = calloc(r->ndev ? r->ndev : 1, sizeof *r->dev);
  if (!r->dev) return false;
  r->spec_tab = hs_calloc(sc->ndevices ? sc->ndevices : 1, sizeof *r->spec_tab);
  r->spec_end = hs_calloc(sc->ndevices ? sc->ndevices : 1, sizeof *r->spec_end);
  r->nspec = sc->ndevices;
  bool stalls = false;
  for (size_t s = 0; s < sc->ndevices; s++) {
    const hs_device_spec *ds = &sc->devices[s];
    const hs_task_profile *task = hs_profile_task(ds->profile, sc->task);
    const hs_link_spec *link = hs_scenario_link(sc, ds->link);
    HS_ASSERT(task && link, "scenario validated: task and link exist");
    sim_spec *sp = &r->spec_tab[s];
    sp->tau_cv = r->opts->no_compute_noise ? 0.0 : task->tau_cv;
    sp->overhead_s = task->overhead_s;
    hs_task_noise_init(&sp->noise, sp->tau_cv);
    sp->access_bps = link->bandwidth_mbps * HS_NET_BPS_PER_MBPS;
    sp->access_latency_s = link->latency_ms * HS_NET_S_PER_MS;
    if (ds->cpu_share > 0) { /* CPU-bound transfers: the CPU's rate caps the link's */
      double s_per_byte = ds->cpu_send_ms_per_mb * 1e-3 / 1e6, period_s = ds->cpu_period_ms * 1e-3;
      sp->access_bps = fmin(sp->access_bps, 8.0 * ds->cpu_share / s_per_byte);
      sp->stall_s = (1.0 - ds->cpu_share) * period_s;
      sp->stall_per_byte = s_per_byte / (ds->cpu_share * period_s);
      stalls |= sp->stall_s > 0;
    }
    sp->busy_w = task->busy_w;
    sp->idle_w = hs_profile_idle_w(ds->profile);
    sp->comm_w = hs_profile_comm_w(ds->profile);
    sp->trace = ds->speed_trace;
    sp->ledger_class = hs_ledger_add_class(r->ledger, sp->busy_w, sp->comm_w, sp->idle_w);
    r->spec_end[s] = ds->first + ds->count;
  }
  r->hot = r->ndev ? hs_ledger_user(r->ledger, 0) : NULL; /* the loader refuses 0 devices */
  r->hot_stride = hs_ledger_user_stride(r->ledger);
  bool noise = sc->telemetry_time_noise > 0 || sc->telemetry_energy_noise > 0;
  if (noise) r->rng_tele = hs_calloc(r->ndev, sizeof *r->rng_tele);
  if (stalls) r->rng_stall = hs_calloc(r->ndev, sizeof *r->rng_stall);
  for (size_t k = 0, s = 0; k < r->ndev; k++) {
    while (k >= r->spec_end[s]) s++;
    const hs_device_spec *ds = &sc->devices[s];
    const hs_task_profile *task = hs_profile_task(ds->profile, sc->task);
    sim_dev *d = &r->dev[k];
    char name[HS_DEVICE_NAME_MAX];
    hs_scenario_device_name_into(sc, k, name, sizeof name);
    uint64_t key = hs_fnv1a64_str(name);
    /* Population spread: lognormal factors with median 1, drawn from the
     * device's own stream, so they do not depend on the other devices. */
    double speed = 1.0, power = 1.0;
    if (ds->speed_spread > 0 || ds->power_spread > 0) {
      hs_rng pop;
      hs_rng_init(&pop, sc->seed, key, HS_RNG_POPULATION);
      hs_rng_gsl_retarget(r->gsl, &pop);
      double z1 = gsl_ran_ugaussian(r->gsl), z2 = gsl_ran_ugaussian(r->gsl);
      speed = exp(ds->speed_spread * z1);
      power = exp(ds->power_spread * z2);
    }
    d->tau_s = task->tau_s * speed;
    hs_ledger_set_class(r->ledger, k, r->spec_tab[s].ledger_class, power, 0);
    hs_rng_init(&d->rng_compute, sc->seed, key, HS_RNG_COMPUTE);
    if (noise) hs_rng_init(&r->rng_tele[k], sc->seed, key, HS_RNG_TELEMETRY);
    if (stalls) hs_rng_init(&r->rng_stall[k], sc->seed, key, SIM_RNG_SEND_STALL);
  }
  return true;
}

/* Every link a model crosses must carry it in a finite time: 8 x model_bytes
 * bits can overflow a double, and a flow that never ends would leave the round
 * open forever. (DDP all-reduces are checked where they are costed.) */
static hs_status check_model_link(const hs_scenario *sc, const char *name, hs_error *err) {
  const hs_link_spec *l = hs_scenario_link(sc, name);
  HS_ASSERT(l, "scenario validated: the link exists");
  if (isfinite(8.0 * sc->model_bytes / (l->bandwidth_mbps * HS_NET_BPS_PER_MBPS))) return HS_OK;
  return hs_error_set(err, HS_EINVAL,
                      "%s: model_bytes: %g bytes never cross link \"%s\" (%g Mbit/s) in a "
                      "finite time",
                      sc->path, sc->model_bytes, l->name, l->bandwidth_mbps);
}

static hs_status check_model_fits(const hs_scenario *sc, hs_error *err) {
  hs_status st = check_model_link(sc, sc->server_link, err);
  for (size_t k = 0; st == HS_OK && k < sc->ndevices; k++)
    st = check_model_link(sc, sc->devices[k].link, err);
  return st;
}

/* The meter scopes (group "meter"): the idle baseline is each device's idle
 * power times the seconds it was on (busy, comm or idle); above-idle is, per
 * device and state, the state's energy minus that baseline share, so wall =
 * above-idle + baseline to rounding; training-only is what the meters
 * reported (round_measure). Idle power never changes during a run (dynamics
 * and DVFS move the busy power only), so the baseline is one product. */
static void meter_scopes(const sim_run *r, double end, hs_summary *s) {
  if (!r->sc->report_meter_scopes) { /* not reported: NAN, as every group's figures */
    s->energy_idle_baseline_j = s->energy_above_idle_j = s->energy_training_j = NAN;
    return;
  }
  double base = 0, above = 0;
  for (size_t i = 0; i < r->ndev; i++) {
    double w = hs_ledger_get_power_of(r->ledger, i, HS_POWER_IDLE);
    for (int st = HS_POWER_BUSY; st < HS_POWER_OFF; st++) {
      double on_j = w * hs_ledger_time_in(r->ledger, i, (hs_power_state)st, end);
      base += on_j;
      above += hs_ledger_energy(r->ledger, i, (hs_power_state)st, end) - on_j;
    }
  }
  s->energy_idle_baseline_j = base;
  s->energy_above_idle_j = above;
  s->energy_training_j = r->train_j_sum;
}

static void run_free(sim_run *r) {
  if (r->regime && r->regime->teardown) r->regime->teardown(r);
  hs_report_abort(r->report);
  sim_devagg_destroy(r->agg);
  sim_learn_destroy(r->learn);
  hs_controller_destroy(r->ctl);
  hs_net_destroy(r->net);
  hs_ledger_destroy(r->ledger);
  hs_engine_destroy(r->eng);
  if (r->gsl) hs_rng_gsl_destroy(r->gsl);
  free(r->dev);
  hs_free(r->spec_tab);
  hs_free(r->spec_end);
  hs_free(r->span);
  hs_free(r->rng_tele);
  hs_free(r->rng_stall);
  hs_free(r->alloc_own);
  hs_free(r->tele);
  hs_free(r->comm_s);
  hs_free(r->scratch);
  sim_dyn_free(r);
}

/* --trace-devices: only the named devices get spans and a track. */
static hs_status trace_select(sim_run *r, const char *list, hs_error *err) {
  if (!list) return HS_OK;
  HS_ASSERT(r->span, "the spans exist when devices are traced");
  for (size_t i = 0; i < r->ndev; i++) r->span[i].untraced = true;
  const char *p = list;
  for (;;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 0)
      return hs_error_set(err, HS_EINVAL, "--trace-devices %.200s: empty item in the list", list);
    /* by name, O(log entries): an entry name with count > 1 names no device */
    char name[HS_DEVICE_NAME_MAX];
    size_t i = SIZE_MAX;
    if (len < sizeof name) {
      memcpy(name, p, len);
      name[len] = '\0';
      i = hs_scenario_find_device(r->sc, name);
    }
    if (i == SIZE_MAX)
      return hs_error_set(err, HS_EINVAL, "--trace-devices: no device \"%.*s\" in %s",
                          (int)(len > 100 ? 100 : len), p, r->sc->path);
    r->span[i].untraced = false;
    if (!e) return HS_OK;
    p = e + 1;
  }
}

hs_status hs_run(const hs_scenario *sc, const hs_run_opts *opts, hs_summary *out, hs_error *err) {
  static const hs_run_opts no_opts = {0};
  if (!opts) opts = &no_opts;
  sim_run run = {0};
  sim_run *r = &run;
  sim_description desc = {0}; /* summary.json's self-description (run_describe.c) */
  hs_status st = HS_OK;
  r->sc = sc;
  r->opts = opts;
  r->regime = sim_regime_find(sc->regime.kind);
  if (!r->regime) {
    st = hs_error_set(err, HS_EINVAL, "%s: regime.kind: unknown regime \"%s\"", sc->path,
                      sc->regime.kind);
    goto done;
  }
  if (!sim_regime_runs_policy(r->regime, sc->policy.kind)) {
    st = hs_error_set(err, HS_EINVAL, "%s: policy.kind: policy \"%s\" does not apply to regime %s",
                      sc->path, sc->policy.kind, sc->regime.kind);
    goto done;
  }
  if ((st = check_model_fits(sc, err)) != HS_OK) goto done;
  if (opts->schedule && opts->schedule_rounds < sc->rounds) {
    st = hs_error_set(err, HS_EINVAL, "%s: rounds: the allocation schedule has %u rounds, the "
                      "scenario runs %u", sc->path, opts->schedule_rounds, sc->rounds);
    goto done;
  }
  if (opts->schedule && opts->out_dir) { /* its run_identity would not name the schedule */
    st = hs_error_set(err, HS_EINVAL, "%s: a run on a fixed allocation schedule writes no run "
                      "folder (%s): summary.json's identity would not name the schedule",
                      sc->path, opts->out_dir);
    goto done;
  }
  if ((st = hs_run_check_memory(sc, err)) != HS_OK) goto done;
  r->measure_overhead = opts->measure_overhead;
  hs_rng dummy;
  hs_rng_init(&dummy, sc->seed, 0, 0);
  r->gsl = hs_rng_gsl_create(&dummy);
  r->ledger = hs_ledger_create(sc->total_devices);
  if (!expand_devices(r)) {
    st = hs_error_set(err, HS_ENOMEM, "%s: devices: not enough memory for %zu devices (%zu bytes)",
                      sc->path, sc->total_devices, sc->total_devices * sizeof(sim_dev));
    goto done;
  }
  sim_dyn_setup(r);
  r->eng = hs_engine_create(2 * r->ndev + 16);
  r->net = hs_net_create(r->eng);
  const hs_link_spec *srv = hs_scenario_link(sc, sc->server_link);
  HS_ASSERT(srv, "scenario validated: server link exists");
  r->server_link = (srv->full_duplex ? hs_net_add_duplex_link : hs_net_add_link)(
      r->net, srv->name, srv->bandwidth_mbps * HS_NET_BPS_PER_MBPS,
      srv->latency_ms * HS_NET_S_PER_MS);
  HS_ASSERT(r->server_link >= 0, "validated link parameters");
  r->server_down = hs_net_link_reverse(r->net, r->server_link);
  r->tele = hs_calloc(r->ndev, sizeof *r->tele);
  _Static_assert(sizeof *r->tele == HS_LEDGER_MARK_BYTES, "telemetry fits a device's mark");
  hs_ledger_mark_in(r->ledger, r->tele); /* 24 B per device for both (round_measure) */
  r->comm_s = hs_calloc(r->ndev, sizeof *r->comm_s);
  /* The learner before the regime: its set-up declares the DDP groups. */
  if (sc->learning && (st = sim_learn_create(sc, r->ndev, &r->learn, err)) != HS_OK) goto done;
  /* What the regime cannot do (learning, a deadline, absences) the loader
   * refused already, from the descriptor (sim_regime.can). */
  if (r->regime->setup && (st = r->regime->setup(r, err)) != HS_OK) goto done;

  /* The controller, with the regime's participant groups (hfl-ddp: silos). */
  hs_policy_config cfg = sc->policy;
  if (sc->regime.steps_per_round) cfg.steps_per_round = sc->regime.steps_per_round;
  r->ctl = hs_controller_create(&cfg, r->ndev, hs_scenario_groups(sc), sc->samples_per_round,
                                err);
  if (!r->ctl) {
    hs_error_prefix(err, "%s: policy", sc->path);
    st = err ? err->status : HS_EINVAL;
    goto done;
  }

  if (r->regime->bind && (st = r->regime->bind(r, err)) != HS_OK) goto done;

  if (opts->out_dir) {
    sim_run_describe(sc, opts, &desc);
    if (!opts->force && (st = sim_run_check_folder(opts->out_dir, desc.identity, err)) != HS_OK)
      goto done;
    size_t limit = opts->devices_threshold ? opts->devices_threshold : HS_DEVICES_THRESHOLD;
    bool profiles = opts->devices == HS_DEVICES_PROFILES ||
                    (opts->devices == HS_DEVICES_AUTO && r->ndev > limit);
    if (opts->trace || opts->trace_devices) {
      r->span = hs_calloc(r->ndev ? r->ndev : 1, sizeof *r->span);
      for (size_t i = 0; i < r->ndev; i++) r->span[i].state = HS_POWER_OFF;
    }
    if ((st = trace_select(r, opts->trace_devices, err)) != HS_OK) goto done;
    r->report = hs_report_open_with(opts->out_dir, opts->trace || opts->trace_devices, profiles,
                                    hs_scenario_columns(sc), err);
    if (!r->report) {
      st = err ? err->status : HS_EIO;
      goto done;
    }
    if (profiles) r->agg = sim_devagg_create(r);
    /* Every regime's own tables: an earlier run's in the folder goes. */
    for (size_t k = 0; k < sim_regime_count(); k++)
      if (sim_regime_at(k)->csv) hs_report_optional(r->report, sim_regime_at(k)->csv->file);
    if (r->learn && (st = hs_report_learning_open(r->report, err)) != HS_OK) goto done;
    /* What the controller saw, beside devices.csv (not above the device
     * threshold: one row per device and round, as devices.csv). */
    if (!r->agg && (st = hs_report_telemetry_open(r->report, err)) != HS_OK) goto done;
    if (!r->agg && sc->report_meter_scopes && (st = hs_report_meter_open(r->report, err)) != HS_OK)
      goto done;
    for (size_t i = 0; i < r->ndev && hs_report_tracing(r->report); i++)
      if (!r->span[i].untraced) hs_report_track(r->report, (uint32_t)i, sim_dev_name(r, i));
  }

  for (size_t i = 0; i < r->ndev; i++) {
    sim_dev_state(r, i, HS_POWER_IDLE);
  }
  sim_dyn_start(r);
  round_open(r);
  r->regime->start_round(r);
  if (r->status == HS_OK && !r->finished) hs_engine_run(r->eng);
  if (r->status != HS_OK) {
    st = hs_error_set(err, r->status, "%s: %s", sc->path, r->err.msg);
    goto done;
  }
  if (!r->finished) {
    /* The engine ran dry mid-round. The only way: flows whose completion lies
     * past the largest double, which the network never schedules. */
    hs_net_stats ns;
    hs_net_get_stats(r->net, &ns);
    HS_ASSERT(ns.flows_active + ns.flows_latent > 0, "every round completed");
    fail_time_overflow(r, "a model transfer");
    st = hs_error_set(err, r->status, "%s: %s", sc->path, r->err.msg);
    goto done;
  }

  double end = hs_engine_now(r->eng);
  for (size_t i = 0; i < r->ndev; i++) sim_dev_state(r, i, HS_POWER_OFF);
  hs_summary sum = {0};
  sum.seed = sc->seed; /* the loader keeps seeds within 2^53 */
  sum.devices = r->ndev;
  sum.rounds = sc->rounds;
  sum.samples = r->samples_total;
  sum.makespan_s = end;
  sum.compute_j = hs_ledger_state_energy(r->ledger, HS_POWER_BUSY, end);
  sum.comm_j = hs_ledger_state_energy(r->ledger, HS_POWER_COMM, end);
  sum.idle_j = hs_ledger_state_energy(r->ledger, HS_POWER_IDLE, end);
  sum.energy_j = sum.compute_j + sum.comm_j + sum.idle_j;
  sum.compute_cv = r->cv_count ? r->cv_sum / r->cv_count : 0;
  sum.compute_cv_adapted =
      sc->dynamics && r->cv_count > 1 ? r->cv_adapted_sum / (r->cv_count - 1) : NAN;
  double idle_s = 0;
  for (size_t i = 0; i < r->ndev; i++) idle_s += hs_ledger_time_in(r->ledger, i, HS_POWER_IDLE, end);
  meter_scopes(r, end, &sum);
  sum.wait_fraction = end > 0 ? idle_s / ((double)r->ndev * end) : 0;
  sum.controller_overhead_fraction =
      r->measure_overhead && end > 0 ? r->controller_wall_s / end : NAN;
  sum.time_to_target_s = sum.energy_to_target_j = sum.rounds_to_target = NAN;
  sum.final_test_loss = sum.final_test_accuracy = NAN; /* no learning: none */
  sum.time_to_stable_target_s = sum.energy_to_stable_target_j = sum.rounds_to_stable_target = NAN;
  if (r->learn) {
    sim_learn_result lr;
    sim_learn_result_get(r->learn, &lr);
    sum.time_to_target_s = lr.time_to_target_s;
    sum.energy_to_target_j = lr.energy_to_target_j;
    sum.rounds_to_target = lr.rounds_to_target;
    sum.final_test_loss = lr.final_test_loss;
    sum.final_test_accuracy = lr.final_test_accuracy;
    sum.time_to_stable_target_s = lr.time_to_stable_target_s;
    sum.energy_to_stable_target_j = lr.energy_to_stable_target_j;
    sum.rounds_to_stable_target = lr.rounds_to_stable_target;
  }
  sum.energy_server_j = sum.energy_network_j = sum.energy_aggregators_j = sum.energy_system_j = NAN;
  if (r->regime->system_energy) r->regime->system_energy(r, &sum);
  sum.metric_groups = hs_metric_run_groups(sc);
  /* The regime's own figures: those with a metric line become metrics (its
   * group's), the rest follow the metrics in summary.json as they are. */
  hs_metric_clear_reported(&sum);
  hs_report_field got[32], rest[32];
  size_t nrest = 0;
  if (r->regime->summary_fields)
    nrest = hs_metric_keep_reported(&sum, got, r->regime->summary_fields(r, got, 32), rest);
  if (out) *out = sum;

  if (r->report) {
    const char *keys[] = {"scenario", "policy", "regime"};
    const char *vals[] = {sc->name, sc->policy.kind, sc->regime.kind};
    hs_report_field f[HS_METRIC_MAX + 32];
    size_t nf = hs_metric_json_fields(&sum, f, HS_METRIC_MAX);
    for (size_t i = 0; i < nrest; i++) f[nf++] = rest[i];
    for (size_t i = 0; i < desc.n; i++) hs_report_add_json(r->report, desc.key[i], desc.json[i]);
    hs_report *rep = r->report;
    r->report = NULL;
    st = hs_report_commit(rep, keys, vals, 3, f, nf, err);
  }
done:
  sim_description_fini(&desc);
  run_free(r);
  return st;
}
