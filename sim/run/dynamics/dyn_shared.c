/* dyn_shared.c: a slowdown that devices share (dynamics.shared_slowdown,
 * issue 24): other work on the machine that moves every board's speed
 * together, beside each device's own noise (its profile's tau_cv).
 *
 * Model: in period p (the round r->round, or floor(now / period_s) with
 * period_s > 0) every device multiplies the per-sample part of each compute
 * time it draws by F_p = W_p x G_{g,p}: W_p the scenario-wide factor (CV cv),
 * G_{g,p} the factor of the device's group g (CV of the group; 1 outside
 * every group). Each factor is lognormal with mean 1: exp(s z - s^2 / 2),
 * s^2 = ln(1 + cv^2), z standard normal, so on log times the variances add:
 * var ln t = ln(1 + tau_cv^2) + ln(1 + cv^2) [+ ln(1 + cv_g^2)], and two
 * devices share the variance of the factors they have in common (their
 * correlation on log times is its share of the total; tests/unit/test_dyn_shared.c).
 * A device's shared_loading b (dynamics.devices.NAME.shared_loading, default
 * 1) scales how strongly it takes its factor: F^b x exp((b - b^2) s2 / 2),
 * s2 the log-variance of F, which is exp(b ln F - b^2 s2 / 2): lognormal,
 * mean 1, log-variance b^2 s2 (b = 1 returns F itself, bit for bit). On a
 * CPU-quota testbed the boards that need more of the CPU feel the machine's
 * other load more; hetsim-probe import --run-times fits b per board.
 * The per-round overhead is not scaled, as tau_cv does not scale it: both
 * are the noise of the per-sample time that hetsim-probe import fits.
 *
 * Streams: the factor of (group, period) is one draw of its own stream,
 * hs_rng_init(seed, entity, purpose): entity the FNV-1a hash of the group's
 * name (0 for the scenario-wide factor), purpose a tag (DYN_RNG_SHARED_*)
 * mixed with the period. Random access, so a factor depends on neither the
 * draw order nor the devices, and no device stream is touched: adding the
 * block leaves every device's own draws as they were. Without the block, or
 * with every CV 0, r->shared is NULL and nothing is multiplied.
 * Cost: O(groups) per new period (one draw each), O(1) per compute draw.
 * Rejected: one sequential stream per group, drawn at each round's start (it
 * needs a round-start hook in every regime, and with period_s its draws would
 * depend on which periods a run happens to draw in); scaling the overhead too
 * (the fitted split is of per-sample time, and tau_cv leaves it alone). */
#include <math.h>

#include "dyn.h"
#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "sim_run.h"

struct dyn_shared {
  uint64_t seed;
  double period_s;   /* 0: the round */
  size_t ng;         /* groups; factor index 0 is "in no group" */
  hs_task_noise *noise; /* ng + 1: [0] the scenario-wide factor's, [1 + g] group g's */
  uint64_t *entity;  /* ng + 1: [0] = 0, [1 + g] the hash of group g's name */
  double *f;         /* ng + 1: the factor of the current period (wide x group) */
  uint64_t period;
  bool valid;        /* f holds period's factors */
};

double dyn_shared_draw(uint64_t seed, uint64_t entity, uint64_t purpose, uint64_t period,
                       const hs_task_noise *n) {
  hs_rng s;
  hs_rng_init(&s, seed, entity, purpose ^ hs_mix64(period + 1));
  /* one draw through the profile's own sampler: 0 + 1 x 1 x f is f exactly */
  return hs_task_compute_time_with(n, 1.0, 0, 1, &s);
}

static void refresh(dyn_shared *sh, uint64_t period) {
  double w = dyn_shared_draw(sh->seed, 0, DYN_RNG_SHARED_WIDE, period, &sh->noise[0]);
  sh->f[0] = w;
  for (size_t g = 1; g <= sh->ng; g++)
    sh->f[g] = w * dyn_shared_draw(sh->seed, sh->entity[g], DYN_RNG_SHARED_GROUP, period,
                                   &sh->noise[g]);
  sh->period = period;
  sh->valid = true;
}

double sim_dev_shared_factor(sim_run *r, size_t i) {
  dyn_shared *sh = r->shared;
  double now = hs_engine_now(r->eng);
  uint64_t p = sh->period_s > 0 ? (uint64_t)floor(now / sh->period_s) : r->round;
  if (!sh->valid || p != sh->period) refresh(sh, p);
  const dyn_dev_spec *d = &r->sc->dynamics->dev[i];
  double f = sh->f[d->shared_group], b = d->shared_loading;
  if (b == 1) return f;
  /* s2, the log-variance of f: the wide factor's plus the group's */
  uint32_t g = d->shared_group;
  double s2 = 2 * (sh->noise[0].half_s2 + (g ? sh->noise[g].half_s2 : 0));
  return pow(f, b) * exp(0.5 * (b - b * b) * s2);
}

void sim_shared_setup(sim_run *r) {
  const struct hs_dynamics *dy = r->sc->dynamics;
  bool on = dy->shared_cv > 0;
  for (size_t g = 0; g < dy->nshared_groups; g++) on = on || dy->shared_groups[g].cv > 0;
  if (!on) return; /* every factor 1: draw nothing, multiply nothing */
  if (r->opts && r->opts->no_compute_noise) return; /* the expectation: every factor's mean is 1 */
  dyn_shared *sh = hs_calloc(1, sizeof *sh);
  sh->seed = r->sc->seed;
  sh->period_s = dy->shared_period_s;
  sh->ng = dy->nshared_groups;
  sh->noise = hs_calloc(sh->ng + 1, sizeof *sh->noise);
  sh->entity = hs_calloc(sh->ng + 1, sizeof *sh->entity);
  sh->f = hs_calloc(sh->ng + 1, sizeof *sh->f);
  hs_task_noise_init(&sh->noise[0], dy->shared_cv);
  for (size_t g = 0; g < sh->ng; g++) {
    hs_task_noise_init(&sh->noise[g + 1], dy->shared_groups[g].cv);
    sh->entity[g + 1] = hs_fnv1a64_str(dy->shared_groups[g].name);
  }
  r->shared = sh;
}

void sim_shared_free(sim_run *r) {
  dyn_shared *sh = r->shared;
  if (!sh) return;
  hs_free(sh->noise);
  hs_free(sh->entity);
  hs_free(sh->f);
  hs_free(sh);
  r->shared = NULL;
}
