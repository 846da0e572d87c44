/* sim_run.h (sim/run/iface): the run as a regime sees it. The state of one
 * simulation run, shared by run.c (the round loop, telemetry, outputs) and the
 * regimes (sim/regimes), which schedule the events of a round and call
 * sim_round_end when it is over.
 *
 * A regime is a descriptor (sim_regime.h: options, groups, capabilities,
 * hooks) in the registry of regimes/registry.c, looked up by the scenario's
 * regime.kind. What only one regime needs per device lives in that regime's
 * own arrays (r->rs), not in sim_dev. */
#ifndef SIM_RUN_INTERNAL_H
#define SIM_RUN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hs_rng_gsl.h"

#include "sim/hs_engine.h"
#include "sim/hs_ledger.h"
#include "sim/hs_net.h"
#include "policies/hs_policy.h"
#include "devices/hs_profile.h"
#include "traces/hs_report.h"
#include "base/hs_alloc.h"
#include "base/hs_rng.h"
#include "base/hs_util.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "traces/hs_speed_trace.h"
#include "sim_regime.h"

/* One expanded device, split by how often it is touched (issue 13: at 10^6
 * devices every per-device record an event reads is a cache miss):
 * - sim_hot, in the ledger's user bytes (hs_ledger_user): what the events of
 *   the device read and write, in the cache line its state switches touch;
 * - sim_dev (r->dev[i]): the compute stream and the scaled task, read once
 *   per round in device order (the power factor and the figures at the
 *   round's start are the ledger's: hs_ledger_factor, hs_ledger_mark);
 * - what is the same for every device of a scenario entry lives once in
 *   sim_spec (r->spec_tab, by the entry's index): task, link, speed trace,
 *   base powers; the name and the entry come from the scenario
 *   (hs_scenario_device_name: made on the first name asked);
 * - what only some runs need is an array of its own, NULL when unused:
 *   r->span (tracing), r->rng_tele (telemetry noise), r->dyn_of (dynamics),
 *   r->shared (a shared slowdown: per group, not per device).
 * Read the fields through the sim_dev_* accessors below. */
typedef struct sim_devagg sim_devagg;
typedef struct dyn_shared dyn_shared; /* dynamics/dyn_shared.c */

typedef struct sim_hot {
  double work_s; /* the one-pass round (regimes/fl/regime_fl_round.c): its compute work,
                    drawn at the round start, then the download's end */
  double t2, t3; /* the one-pass round: the compute's and the upload's end */
} sim_hot;
_Static_assert(sizeof(sim_hot) + 1 <= HS_LEDGER_USER_BYTES,
               "sim_hot and PMA's participation byte live in the ledger's user bytes");

typedef struct sim_dev {
  hs_rng rng_compute;
  double tau_s;    /* the scenario task's tau_s times the device's speed factor */
} sim_dev;

typedef struct sim_spec {
  double tau_cv, overhead_s;           /* the scenario task on this profile */
  hs_task_noise noise;                 /* tau_cv's part of every compute draw, made once */
  double access_bps, access_latency_s; /* its link */
  double busy_w, idle_w, comm_w;       /* before the device's power factor */
  const hs_speed_trace *trace;
  size_t ledger_class;                 /* these powers as the ledger's power class */
  /* devices[].cpu (issue 24), 0 without it: a send after a computation stalls
   * for stall_s = (1 - share) x period with probability bytes x stall_per_byte
   * (sim_dev_send_stall_s); access_bps is already capped at the CPU's rate. */
  double stall_s, stall_per_byte;
} sim_spec;

typedef struct sim_span {
  double start_s;      /* trace bookkeeping: the current span */
  hs_power_state state;
  bool untraced;       /* not among --trace-devices (no spans) */
} sim_span;

struct sim_run {
  const hs_scenario *sc;
  const sim_regime *regime;
  hs_engine *eng;
  hs_ledger *ledger;
  hs_net *net;
  hs_controller *ctl;
  sim_dev *dev;            /* cold per-device records (see sim_dev) */
  size_t ndev;
  sim_spec *spec_tab;      /* one per scenario entry */
  size_t *spec_end;        /* per entry: its first device + count (prefix sums) */
  size_t nspec;
  unsigned char *hot;      /* sim_hot of device 0, inside the ledger */
  size_t hot_stride;       /* bytes from one device's sim_hot to the next */
  sim_span *span;          /* ndev when tracing, else NULL */
  hs_rng *rng_tele;        /* ndev telemetry streams when there is noise, else NULL */
  hs_rng *rng_stall;       /* ndev send-stall streams when an entry has "cpu", else NULL */
  int server_link;         /* shared link index of network.server (uploads: to the server) */
  int server_down;         /* the direction from the server: server_link itself unless the
                              link is full duplex (hs_net_link_reverse) */
  uint32_t round;
  double round_start_s;
  const uint64_t *alloc;   /* allocation in force this round: the controller's own array
                              (valid until its next update, i.e. the round's end), or
                              alloc_own once a regime changed an entry (sim_run_set_alloc) */
  uint64_t *alloc_own;     /* NULL until a regime first changes the allocation */
  bool finished;
  double round_cv;         /* set by the regime before sim_round_end; NAN: computed here */
  hs_report *report;       /* NULL: no outputs */
  sim_devagg *agg;         /* device_profiles.csv instead of devices.csv; else NULL */
  const hs_run_opts *opts; /* never NULL while running */
  gsl_rng *gsl;            /* adapter, retargeted to a device's stream when drawing */
  hs_telemetry *tele;      /* ndev: the round's telemetry, in the ledger's mark storage
                              (hs_ledger_mark_in): device i's is written once its round is
                              measured, and the next round's mark writes over it */
  double *scratch;         /* scratch, ndev: through sim_run_scratch (made when first used) */
  /* summary accumulators */
  double cv_sum;
  uint32_t cv_count;
  uint64_t samples_total;
  double controller_wall_s;
  bool measure_overhead;
  hs_status status;        /* first error raised inside a handler */
  hs_error err;
  void *rs;                /* regime state */
  struct dyn_dev *dyn;     /* dyn.c: one per device that changes (ndyn), or NULL */
  size_t ndyn;
  dyn_shared *shared;      /* dynamics.shared_slowdown (dyn_shared.c); NULL: no shared factor */
  struct dyn_dev **dyn_of; /* per device: its record in dyn, or NULL; NULL when ndyn == 0 */
  /* A regime that takes absences itself (PMA): called when device i leaves
   * (on = false) or returns; false: the default (pause and power off). */
  bool (*on_avail)(sim_run *r, size_t i, bool on);
  /* Set by a regime just before sim_round_end (PMA's one-pass round: the
   * replay of the round's switches): called by the round's measure for each
   * device, in device order, before it reads the device's figures, so one
   * pass over the devices does both; cleared after. NULL: none. */
  void (*settle)(sim_run *r, size_t i);
  double cv_adapted_sum;   /* compute_cv of the rounds after the first */
  struct sim_learn *learn; /* learning in the loop (sim_learning.h); NULL: off */
  double energy_cum_j;     /* energy of every device from t = 0 to the last round end */
  double train_j_sum;      /* the meters' training energy (noiseless), every round and device */
  double *comm_s;          /* ndev: the round's communication telemetry (sim_meter.comm_s) */
  double idle_baseline_cum_j; /* with report.meter_scopes: idle power x seconds on, to the last
                               * round end (rounds.csv's idle baselines summed) */
};

/* --- device accessors ------------------------------------------------------ */
static inline sim_hot *sim_dev_hot(const sim_run *r, size_t i) {
  return (sim_hot *)(void *)(r->hot + i * r->hot_stride);
}
/* The fl round's participation byte of device i (regime_fl_round.c), the user byte after
 * its sim_hot: the events that read it touch the line anyway. */
static inline unsigned char *sim_dev_part(const sim_run *r, size_t i) {
  return r->hot + i * r->hot_stride + sizeof(sim_hot);
}
/* The device's scenario entry (index in sc->devices and r->spec_tab). */
/* Nothing per device: a binary search over the entries' ends, O(log entries). */
static inline size_t sim_dev_spec(const sim_run *r, size_t i) {
  size_t lo = 0, hi = r->nspec - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->spec_end[mid] > i) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
static inline const sim_spec *sim_dev_sp(const sim_run *r, size_t i) {
  return &r->spec_tab[sim_dev_spec(r, i)];
}
/* The scenario's name (its arena is made on the first name asked). */
static inline const char *sim_dev_name(const sim_run *r, size_t i) {
  return hs_scenario_device_name(r->sc, i);
}
/* Entity id of the device's random streams: a hash of its name. */
static inline uint64_t sim_dev_key(const sim_run *r, size_t i) {
  char name[HS_DEVICE_NAME_MAX];
  hs_scenario_device_name_into(r->sc, i, name, sizeof name);
  return hs_fnv1a64_str(name);
}
/* The device's powers at the start (its entry's times its power factor, which
 * the ledger keeps: hs_ledger_factor). */
static inline double sim_dev_busy_w(const sim_run *r, size_t i) {
  return sim_dev_sp(r, i)->busy_w * hs_ledger_factor(r->ledger, i);
}
static inline double sim_dev_idle_w(const sim_run *r, size_t i) {
  return sim_dev_sp(r, i)->idle_w * hs_ledger_factor(r->ledger, i);
}
static inline double sim_dev_comm_w(const sim_run *r, size_t i) {
  return sim_dev_sp(r, i)->comm_w * hs_ledger_factor(r->ledger, i);
}
/* Busy joules of device i when the round opened (for the round's training
 * energy: hs_ledger_energy(.., HS_POWER_BUSY, now) minus this). */
static inline double sim_dev_busy0_j(const sim_run *r, size_t i) {
  return hs_ledger_mark_energy(r->ledger, i, HS_POWER_BUSY);
}
static inline struct dyn_dev *sim_dev_dyn(const sim_run *r, size_t i) {
  return r->dyn_of ? r->dyn_of[i] : NULL;
}

/* Device i's allocation for the rest of the round (a participant lost, or
 * the samples actually trained) without touching the controller's: the
 * first change of a round copies its allocation into r->alloc_own. O(ndev)
 * once per round that changes any, O(1) after. */
static inline void sim_run_set_alloc(sim_run *r, size_t i, uint64_t n) {
  if (r->alloc != r->alloc_own) {
    if (!r->alloc_own) r->alloc_own = hs_malloc((r->ndev ? r->ndev : 1) * sizeof *r->alloc_own);
    memcpy(r->alloc_own, r->alloc, r->ndev * sizeof *r->alloc_own);
    r->alloc = r->alloc_own;
  }
  r->alloc_own[i] = n;
}

/* ndev doubles of scratch, zeroed when first asked for (PMA never asks). */
static inline double *sim_run_scratch(sim_run *r) {
  if (!r->scratch) r->scratch = hs_calloc(r->ndev ? r->ndev : 1, sizeof *r->scratch);
  return r->scratch;
}

/* Switch a device's power state now (ledger + trace spans). */
void sim_dev_state(sim_run *r, size_t i, hs_power_state st);
/* Device i starts sending one model to the server now (an upload): it
 * switches to COMM and a flow of model_bytes crosses its access link and the
 * server link; on_done(eng, r, arg) fires when the flow completes. */
void sim_dev_model_transfer(sim_run *r, size_t i, hs_event_fn on_done, uint64_t arg);
/* Seconds device i's send of `bytes`, right after a computation, waits for
 * its CPU quota (devices[].cpu): 0 or the entry's stall_s, one draw from the
 * device's stall stream; 0 with no draw when the entry has no "cpu". Added to
 * the flow's latency by every upload that follows a computation. */
double sim_dev_send_stall_s(sim_run *r, size_t i, double bytes);
/* The same from the server to device i (a download): on a full-duplex server
 * link it takes the other direction (server_down); on a half-duplex one it
 * costs exactly what an upload does. */
void sim_dev_model_download(sim_run *r, size_t i, hs_event_fn on_done, uint64_t arg);
/* Seconds a computation of `samples` samples (plus the profile's per-round
 * overhead when with_overhead) takes on device i if started after_s seconds
 * from now, including its speed trace. One draw from the device's compute
 * stream. */
double sim_dev_compute_s(sim_run *r, size_t i, uint64_t samples, bool with_overhead,
                         double after_s);
/* The work part of that (speed-1 seconds, before the speed trace): the one
 * draw from the device's compute stream, nothing scheduled. */
double sim_dev_draw_work(sim_run *r, size_t i, uint64_t samples, bool with_overhead);
/* The same with the device's entry given (sp == sim_dev_sp(r, i)): a loop
 * over devices entry by entry skips the per-device lookup. The draw is
 * hs_task_compute_time's for the entry's task at the device's tau_s
 * (hs_task_compute_time_with: the entry's noise is made once). */
/* The shared slowdown's factor of device i in the current period (r->shared
 * must be set; dynamics/dyn_shared.c). */
double sim_dev_shared_factor(sim_run *r, size_t i);
/* The same, 1 without a shared slowdown (tau x 1.0 is tau exactly, so a
 * scenario without one draws the same bits). */
static inline double sim_dev_shared(sim_run *r, size_t i) {
  return r->shared ? sim_dev_shared_factor(r, i) : 1.0;
}
/* The shared factor scales the per-sample part, as tau_cv's does. */
static inline double sim_dev_draw_work_sp(sim_run *r, size_t i, const sim_spec *sp,
                                          uint64_t samples, bool with_overhead) {
  sim_dev *d = &r->dev[i];
  double tau_s = r->shared ? d->tau_s * sim_dev_shared_factor(r, i) : d->tau_s;
  return hs_task_compute_time_with(&sp->noise, tau_s, with_overhead ? sp->overhead_s : 0,
                                   samples, &d->rng_compute);
}
/* The same for pure work seconds at speed 1 (no draw): speed trace only. */
double sim_dev_stretch_s(sim_run *r, size_t i, double work_s, double after_s);
/* A training time t_s of device i as its meter reports it to the controller:
 * t_s times the telemetry.time_noise factor (one draw from the device's
 * telemetry stream when the noise is on; 0 stays 0). */
double sim_dev_reported_s(sim_run *r, size_t i, double t_s);
/* Energy of device i's last computation planned by sim_dev_compute_s (its
 * busy power over its duration, throttle levels included). */
double sim_dev_last_compute_j(sim_run *r, size_t i);
/* False while device i is unavailable (dynamics.availability). */
bool sim_dev_available(const sim_run *r, size_t i);

/* Close the round now: measure it (rows, telemetry), feed the controller,
 * report the round, then start the next round or end the run. */
void sim_round_end(sim_run *r);
/* Learning hooks for regimes (no-ops when r->learn is NULL): the FedAvg of
 * the round's participants (r->alloc), and a FedAsync arrival of device i
 * (n samples, mixing weight a). False when the learner failed (the run then
 * fails with its message). */
bool sim_learn_round_fedavg(sim_run *r);
/* The same with the samples each device trained given (0: no update). */
bool sim_learn_round_fedavg_of(sim_run *r, const uint64_t *n);
bool sim_learn_arrival(sim_run *r, size_t i, uint64_t n, double a);
/* Record an error raised inside a handler and stop the engine. */
void sim_fail(sim_run *r, hs_status st, const char *msg);
/* Estimated bytes per device of a run of sc (run_memory.c). */
size_t sim_run_bytes_per_device(const hs_scenario *sc);

#endif
