/* regime_fedasync.c: asynchronous federated optimisation (FedAsync, Xie et al.).
 *
 * No barrier. Every participant loops: download the current model (a flow
 * through the server link), train its allocation n_i, upload; the server mixes
 * each arrival into the global model with weight alpha_t = mixing_alpha *
 * s(staleness), where staleness is the number of server versions since the
 * participant downloaded and s is constant (1), polynomial ((t+1)^-a) or hinge
 * (1 when t <= b, else 1/(a(t-b)+1)). Training stops when the server has
 * received rounds * samples_per_round samples; whatever is in flight then is
 * abandoned (its energy was spent and is counted).
 *
 * Reporting windows stand in for rounds: a window closes each time another
 * samples_per_round samples have arrived; its rows and the controller's
 * telemetry cover the updates that arrived in it, and a new allocation applies
 * to each participant's next download. The model itself is not simulated, so
 * the staleness and mixing weights are reported as means (summary.json). */
#include <math.h>
#include <string.h>

#include "hs_alloc.h"
#include "run_internal.h"

typedef enum { STALE_CONSTANT, STALE_POLYNOMIAL, STALE_HINGE } stale_fn;

typedef struct fa_state {
  uint32_t version;
  uint64_t arrived, next_boundary;
  stale_fn fn;
  double a, b, alpha;
  double staleness_sum, weight_sum;
  uint64_t updates;
} fa_state;

static double stale_weight(const fa_state *fs, double t) {
  switch (fs->fn) {
    case STALE_POLYNOMIAL: return pow(t + 1.0, -fs->a);
    case STALE_HINGE: return t <= fs->b ? 1.0 : 1.0 / (fs->a * (t - fs->b) + 1.0);
    default: return 1.0;
  }
}

static void start_loop(sim_run *r, size_t i);

static void on_uploaded(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  fa_state *fs = r->rs;
  sim_dev *d = &r->dev[i];
  sim_dev_state(r, i, HS_POWER_IDLE);
  double stale = (double)(fs->version - d->version);
  double w = fs->alpha * stale_weight(fs, stale);
  fs->staleness_sum += stale;
  fs->weight_sum += w;
  fs->updates++;
  fs->version++;
  d->samples_window += d->inflight_samples;
  d->busy_window_s += d->inflight_s;
  d->busy_window_j += d->inflight_s * d->busy_w;
  fs->arrived += d->inflight_samples;
  while (fs->arrived >= fs->next_boundary && !r->finished && r->status == HS_OK) {
    fs->next_boundary += r->sc->samples_per_round;
    r->extra_val[0] = fs->updates ? fs->staleness_sum / (double)fs->updates : 0;
    r->extra_val[1] = fs->updates ? fs->weight_sum / (double)fs->updates : 0;
    sim_round_end(r);
  }
  if (!r->finished && r->status == HS_OK) start_loop(r, i);
}

static void on_computed(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  sim_dev_model_transfer(r, i, on_uploaded, i);
}

static void on_downloaded(hs_engine *eng, void *subject, uint64_t i) {
  sim_run *r = subject;
  fa_state *fs = r->rs;
  sim_dev *d = &r->dev[i];
  d->version = fs->version;
  d->inflight_samples = r->alloc[i];
  sim_dev_state(r, i, HS_POWER_BUSY);
  d->inflight_s = sim_dev_compute_s(r, i, d->inflight_samples, true, 0);
  hs_engine_schedule_in(eng, d->inflight_s, 0, on_computed, r, i);
}

static void start_loop(sim_run *r, size_t i) {
  if (r->alloc[i] == 0) return; /* idle until the end */
  sim_dev_model_transfer(r, i, on_downloaded, i);
}

static void fa_start(sim_run *r) {
  for (size_t i = 0; i < r->ndev; i++) start_loop(r, i);
}

static hs_status fa_setup(sim_run *r, hs_error *err) {
  const hs_regime_spec *rs = &r->sc->regime;
  fa_state *fs = hs_calloc(1, sizeof *fs);
  r->rs = fs;
  const char *name = rs->staleness && rs->staleness[0] ? rs->staleness : "polynomial";
  if (!strcmp(name, "constant"))
    fs->fn = STALE_CONSTANT;
  else if (!strcmp(name, "polynomial"))
    fs->fn = STALE_POLYNOMIAL;
  else if (!strcmp(name, "hinge"))
    fs->fn = STALE_HINGE;
  else
    return hs_error_set(err, HS_EINVAL,
                        "%s: regime.staleness: \"%s\" is not constant, polynomial or hinge",
                        r->sc->path, name);
  fs->a = rs->staleness_a;
  fs->b = rs->staleness_b;
  fs->alpha = rs->mixing_alpha > 0 ? rs->mixing_alpha : 1.0;
  fs->next_boundary = r->sc->samples_per_round;
  r->extra_key[0] = "mean_staleness_versions";
  r->extra_key[1] = "mean_mixing_weight";
  r->nextra = 2;
  return HS_OK;
}

static void fa_teardown(sim_run *r) { hs_free(r->rs); }

/* Selection (oort) and step-level sizing (ema-batch) have no meaning here. */
static bool fa_policy_applies(const char *kind) {
  return strcmp(kind, "oort") != 0 && strcmp(kind, "ema-batch") != 0;
}

const sim_regime sim_regime_fedasync = {
    "fedasync", "asynchronous PMA with staleness-weighted mixing",
    fa_policy_applies, fa_setup, NULL, fa_start, fa_teardown, true, true};
