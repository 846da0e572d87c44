/* adaptive.c: the adaptive controller of the main paper and its four presets
 * (time-only, low-energy, balanced, energy-only): per-sample costs smoothed by
 * an EMA (costs.c), shares inversely proportional to
 * c_i = w_t*tau_i/median(tau) + w_e*eps_i/median(eps), a floor, a deadband.
 *
 * The presets are the same code with w_e fixed (a key with .fixed set: the
 * vocabulary refuses another value and points to "adaptive"). State: the cost
 * estimates and the key values read once at creation. One update: O(n)
 * expected (one EMA pass, two quickselect medians and one apportionment per
 * group); the deadband is applied by the controller in its comparison pass.
 * Rejected: one descriptor with a "preset" key (scenarios name the preset as
 * the kind, and the published results are reported per preset). */
#include <math.h>

#include "base/hs_alloc.h"
#include "pol_costs.h"

/* Slots in the key table (and in hs_policy_config.value). */
enum { K_W_E, K_EMA, K_DEADBAND, K_MIN_SAMPLES };

#define ADAPTIVE_KEYS(w_e, fixed)                                                          \
  {                                                                                        \
    [K_W_E] = {"w_e", POL_REAL, w_e, 0, 1, false, false, fixed,                            \
               "energy weight in [0,1]; w_t = 1 - w_e"},                                   \
    [K_EMA] = {"ema", POL_REAL, 0.5, 0, 1, false, true, NULL,                              \
               "smoothing: x <- ema*x + (1-ema)*obs"},                                     \
    [K_DEADBAND] = {"deadband", POL_REAL, 0.05, 0, INFINITY, false, false, NULL,           \
                    "keep the split when the largest relative change is at most this"},    \
    [K_MIN_SAMPLES] = {"min_samples", POL_UINT64, 1, 0, 0, false, false, NULL,             \
                       "per-participant floor"},                                           \
  }

static const pol_key adaptive_keys[] = ADAPTIVE_KEYS(0.25, NULL);
static const pol_key time_only_keys[] = ADAPTIVE_KEYS(0.0, "adaptive");
static const pol_key low_energy_keys[] = ADAPTIVE_KEYS(0.25, "adaptive");
static const pol_key balanced_keys[] = ADAPTIVE_KEYS(0.5, "adaptive");
static const pol_key energy_only_keys[] = ADAPTIVE_KEYS(1.0, "adaptive");

typedef struct adaptive {
  pol_costs costs;
  double w_e, ema;
  uint64_t min_samples;
} adaptive;

static hs_status adaptive_create(hs_controller *c, hs_error *err) {
  uint64_t floor = pol_uint(c, K_MIN_SAMPLES);
  hs_status st = pol_check_floor(c, floor, err);
  if (st != HS_OK) return st;
  adaptive *a = hs_calloc(1, sizeof *a);
  pol_costs_init(&a->costs, c->n, c->ngroups);
  pol_make_scratch(c);
  a->w_e = pol_real(c, K_W_E);
  a->ema = pol_real(c, K_EMA);
  a->min_samples = floor;
  c->deadband = pol_real(c, K_DEADBAND);
  c->cand_w = true;
  c->state = a;
  return HS_OK;
}

static void adaptive_destroy(hs_controller *c) {
  adaptive *a = c->state;
  if (!a) return;
  pol_costs_fini(&a->costs);
  hs_free(a);
  c->state = NULL;
}

static void adaptive_update(hs_controller *c, const hs_telemetry *t) {
  adaptive *a = c->state;
  pol_costs_observe(&a->costs, t, c->n, a->ema);
  pol_costs_split(c, &a->costs, a->w_e, a->min_samples, NULL); /* into c->w */
}

static size_t adaptive_state(const hs_controller *c, pol_state_field *f) {
  adaptive *a = c->state;
  return pol_costs_state(&a->costs, c->n, f);
}

#define ADAPTIVE_TYPE(sym, kind, text, table)                                              \
  const pol_type sym = {.name = kind,                                                      \
                        .summary = text,                                                   \
                        .caps = HS_POLICY_CAP_GROUPS,                                      \
                        .bytes_per_participant = POL_COSTS_BYTES,                          \
                        .keys = table,                                                     \
                        .nkeys = POL_NKEYS(table),                                         \
                        .create = adaptive_create,                                         \
                        .destroy = adaptive_destroy,                                       \
                        .update = adaptive_update,                                 \
                        .state = adaptive_state}

ADAPTIVE_TYPE(pol_adaptive, "adaptive", "inverse-cost split with a free energy weight w_e",
              adaptive_keys);
ADAPTIVE_TYPE(pol_time_only, "time-only", "adaptive with w_e = 0", time_only_keys);
ADAPTIVE_TYPE(pol_low_energy, "low-energy", "adaptive with w_e = 0.25", low_energy_keys);
ADAPTIVE_TYPE(pol_balanced, "balanced", "adaptive with w_e = 0.5", balanced_keys);
ADAPTIVE_TYPE(pol_energy_only, "energy-only", "adaptive with w_e = 1", energy_only_keys);
