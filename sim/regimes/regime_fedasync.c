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
 * to each participant's next download. The staleness and mixing weights are
 * reported as means (summary.json). With a "learning" block the model is
 * trained too: each arrival trains from the version the device downloaded
 * and is mixed into the global model (sim_learn_async_download / _arrival);
 * without one only the timeline is simulated.
 *
 * Per-device state (the model version a device trains on, its update in
 * flight, the window's completed updates) is an array of fa_dev here.
 * Policies: no participant selection (a device left out would never rejoin
 * the loop) and no step-level sizing (there are no synchronised steps). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "sim_run.h"
#include "sim_learning.h"

/* The options (hs_regime_spec.opts). */
typedef struct fa_opts {
  char *staleness;     /* constant | polynomial | hinge */
  double staleness_a;  /* polynomial exponent / hinge slope */
  double staleness_b;  /* hinge threshold (versions) */
  double mixing_alpha; /* base mixing weight in (0,1] */
} fa_opts;

typedef enum { STALE_CONSTANT, STALE_POLYNOMIAL, STALE_HINGE } stale_fn;

typedef struct fa_dev {
  uint32_t version;          /* server model version the device trains on */
  uint64_t inflight_samples; /* samples of the update in progress */
  double inflight_s;         /* its training time */
  double inflight_t0;        /* when its download began */
  uint64_t window_samples;   /* samples of updates completed in the window */
  double window_s, window_j; /* their training time and energy */
  double window_comm_s;      /* their downloads and uploads */
  uint32_t window_updates;   /* how many they are */
} fa_dev;

typedef struct fa_state {
  uint32_t version;
  uint64_t arrived, next_boundary;
  stale_fn fn;
  double a, b, alpha;
  double staleness_sum, weight_sum;
  uint64_t updates;
  fa_dev *dev; /* per device */
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
  fa_dev *d = &fs->dev[i];
  sim_dev_state(r, i, HS_POWER_IDLE);
  double stale = (double)(fs->version - d->version);
  double w = fs->alpha * stale_weight(fs, stale);
  fs->staleness_sum += stale;
  fs->weight_sum += w;
  fs->updates++;
  fs->version++;
  if (!sim_learn_arrival(r, i, d->inflight_samples, w)) return; /* learning: mix it in */
  d->window_samples += d->inflight_samples;
  d->window_s += d->inflight_s;
  d->window_j += d->inflight_s * sim_dev_busy_w(r, i);
  d->window_comm_s += hs_engine_now(eng) - d->inflight_t0 - d->inflight_s;
  d->window_updates++;
  fs->arrived += d->inflight_samples;
  while (fs->arrived >= fs->next_boundary && !r->finished && r->status == HS_OK) {
    fs->next_boundary += r->sc->samples_per_round;
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
  fa_dev *d = &fs->dev[i];
  d->version = fs->version;
  if (r->learn) sim_learn_async_download(r->learn, i); /* learning: keep this version */
  d->inflight_samples = r->alloc[i];
  sim_dev_state(r, i, HS_POWER_BUSY);
  d->inflight_s = sim_dev_compute_s(r, i, d->inflight_samples, true, 0);
  hs_engine_post_in(eng, d->inflight_s, 0, on_computed, r, i);
}

static void start_loop(sim_run *r, size_t i) {
  if (r->alloc[i] == 0) return; /* idle until the end */
  ((fa_state *)r->rs)->dev[i].inflight_t0 = hs_engine_now(r->eng);
  sim_dev_model_download(r, i, on_downloaded, i);
}

static void fa_start(sim_run *r) {
  for (size_t i = 0; i < r->ndev; i++) start_loop(r, i);
}

/* The updates that arrived in the window, and the window starts again. Their
 * communication (comm_s) is per update, the mean download plus upload of
 * those updates: one update is what a participant's "round" is here, while
 * the window's ledger time would count transfers of updates that arrive in
 * another window. */
static void fa_telemetry(sim_run *r, size_t i, sim_meter *m) {
  fa_dev *d = &((fa_state *)r->rs)->dev[i];
  m->samples = d->window_samples;
  m->train_s = d->window_s;
  m->train_j = d->window_j;
  m->comm_s = d->window_updates ? d->window_comm_s / d->window_updates : 0;
  d->window_samples = 0;
  d->window_s = 0;
  d->window_j = 0;
  d->window_comm_s = 0;
  d->window_updates = 0;
}

/* Means over every update that arrived. */
static size_t fa_summary(sim_run *r, hs_report_field *out, size_t cap) {
  const fa_state *fs = r->rs;
  if (cap < 2) return 0;
  double n = (double)fs->updates;
  out[0] = (hs_report_field){"mean_staleness_versions", n > 0 ? fs->staleness_sum / n : 0};
  out[1] = (hs_report_field){"mean_mixing_weight", n > 0 ? fs->weight_sum / n : 0};
  return 2;
}

static hs_status fa_setup(sim_run *r, hs_error *err) {
  const fa_opts *o = r->sc->regime.opts;
  fa_state *fs = hs_calloc(1, sizeof *fs);
  r->rs = fs;
  fs->dev = hs_calloc(r->ndev, sizeof *fs->dev);
  const char *name = o->staleness && o->staleness[0] ? o->staleness : "polynomial";
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
  fs->a = o->staleness_a;
  fs->b = o->staleness_b;
  fs->alpha = o->mixing_alpha > 0 ? o->mixing_alpha : 1.0;
  fs->next_boundary = r->sc->samples_per_round;
  return HS_OK;
}

static void fa_teardown(sim_run *r) {
  fa_state *fs = r->rs;
  if (fs) hs_free(fs->dev);
  hs_free(fs);
  r->rs = NULL;
}

/* --- options ---------------------------------------------------------------- */

/* staleness_a: 0.5 (polynomial) or 10 (hinge), none for constant;
 * staleness_b: 4, hinge only. */
static const char *fa_prepare(const hs_scenario *sc, const void *opts, const sim_regime_opt *o,
                              double *def) {
  (void)sc;
  const char *fn = ((const fa_opts *)opts)->staleness;
  bool hinge = fn && !strcmp(fn, "hinge");
  if (!strcmp(o->key, "staleness_a")) {
    if (fn && !strcmp(fn, "constant")) return "does not apply to staleness \"constant\"";
    *def = hinge ? 10 : 0.5;
  } else if (!strcmp(o->key, "staleness_b") && !hinge) {
    return "applies only to staleness \"hinge\"";
  }
  return NULL;
}

static const char *const stale_fns[] = {"constant", "polynomial", "hinge", NULL};

static const sim_regime_opt fa_table[] = {
    {"staleness", SIM_OPT_CHOICE, offsetof(fa_opts, staleness), 0, 0, 0, 0, stale_fns,
     "polynomial", "weight of a stale update: constant, polynomial or hinge"},
    {"staleness_a", SIM_OPT_NUM, offsetof(fa_opts, staleness_a), 0.5, 0, INFINITY, 0, NULL, NULL,
     "polynomial exponent a ((t+1)^-a) or hinge slope (1/(a(t-b)+1))"},
    {"staleness_b", SIM_OPT_NUM, offsetof(fa_opts, staleness_b), 4, 0, INFINITY, 0, NULL, NULL,
     "hinge threshold b in versions: no discount up to b"},
    {"mixing_alpha", SIM_OPT_NUM, offsetof(fa_opts, mixing_alpha), 0.6, 0, 1, SIM_OPT_LO_OPEN,
     NULL, NULL, "base mixing weight in (0, 1] (0.6: the FedAsync paper)"},
};

const sim_regime sim_regime_fedasync = {
    .name = "fedasync",
    .summary = "asynchronous PMA with staleness-weighted mixing",
    .opts = fa_table,
    .nopts = sizeof fa_table / sizeof fa_table[0],
    .opts_size = sizeof(fa_opts),
    .opt_prepare = fa_prepare,
    .caps_refused = HS_POLICY_CAP_SELECTS | HS_POLICY_CAP_STEP_LEVEL,
    .can = SIM_CAN_ASYNC | SIM_CAN_AVAIL | SIM_CAN_SHARED,
    .dev_bytes = sizeof(double), /* the run's scratch */
    .setup = fa_setup,
    .start_round = fa_start,
    .teardown = fa_teardown,
    .windowed = true,
    .telemetry = fa_telemetry,
    .summary_fields = fa_summary,
    .metric_group = "fedasync",
};
