/* regime_fl_dvfs.c: DVFS levels on the devices of regime "fl" (issue 17): a
 * governor choosing, per training, a frequency level (speed and busy-power
 * factors) from the scenario's list or from the profile's thermal levels.
 *
 * regime.dvfs {levels: [{speed, power}, ...] | "profile", governor}: "profile"
 * shares the thermal model's frequency levels (hs_thermal_profile: speed[k],
 * busy_factor[k] of each device's own profile; a device whose profile has no
 * thermal block runs at its nominal level). A listed level runs the
 * device's training at `speed` times its nominal speed (0 < speed <= 1) and
 * draws `power` times its nominal busy power (0 < power <= 1); levels are
 * listed fastest first. Governors:
 *   performance  always levels[0];
 *   powersave    always the last level;
 *   slack        the lowest-power level whose training time t/speed still
 *                fits the previous round's slowest training time (the round's
 *                pace, which this device need not beat); round 0 and a device
 *                with no slack run levels[0]. Race-to-idle vs slow-down:
 *                with idle power > 0 slowing down into the slack saves
 *                (busy_w - power x busy_w) x t - idle_w x (t/speed - t).
 * Applies to every topology: the devices train through fl_train_s
 * (regime_fl.c) in star and threshold, at the leaves of hierarchical
 * (aggregators keep their host profile: no levels), and before the ring's
 * all-reduce. Invariant: every training sets its level's busy power
 * before the device switches to BUSY, so no power is ever left from an
 * earlier level. O(levels) per training. Rejected: per-step frequency changes (a round's
 * training is one event here). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "jpath.h"
#include "regime_fl.h"
#include "sim_run.h"

hs_status fl_dvfs_parse(sim_opt_ctx *c, const cJSON *node, fl_opts *o) {
  if (!node) return HS_OK;
  static const char *const keys[] = {"levels", "governor", NULL};
  static const char *const govs[] = {"performance", "powersave", "slack", NULL};
  size_t m = sim_opt_key(c, "dvfs");
  hs_status st;
  if ((st = sim_opt_object(c, node, keys))) return st;
  const cJSON *lv = cJSON_GetObjectItemCaseSensitive(node, "levels");
  if (!lv) return sim_opt_missing(c, "levels");
  size_t ml = sim_opt_key(c, "levels");
  if (cJSON_IsString(lv)) {
    if (strcmp(lv->valuestring, "profile"))
      return sim_opt_fail(c, HS_EINVAL, "expected \"profile\" or [{speed, power}, ...]");
    o->dvfs_profile = true;
    lv = NULL;
  }
  size_t n = cJSON_IsArray(lv) ? (size_t)cJSON_GetArraySize(lv) : 0;
  if (!o->dvfs_profile && (n == 0 || n > 32))
    return sim_opt_fail(c, HS_EINVAL, "expected 1 to 32 levels [{speed, power}, ...] or \"profile\"");
  o->dvfs = hs_calloc(n ? n : 1, sizeof *o->dvfs);
  size_t i = 0;
  for (const cJSON *e = lv ? lv->child : NULL; e; e = e->next, i++) {
    size_t mi = sim_opt_index(c, i);
    static const char *const lkeys[] = {"speed", "power", NULL};
    if ((st = sim_opt_object(c, e, lkeys))) return st;
    const char *const names[2] = {"speed", "power"};
    double v[2];
    for (int k = 0; k < 2; k++) {
      static const sim_opt_range factor = {.lo = 0, .lo_open = true, .hi = 1,
                                           .want = "expected a factor in (0, 1] of the nominal",
                                           .status = HS_EINVAL};
      if ((st = sim_opt_get_num(c, e, names[k], true, 0, &factor, &v[k]))) return st;
    }
    if (i > 0 && !(v[0] < o->dvfs[i - 1].speed))
      return sim_opt_fail(c, HS_EINVAL, "levels go from the fastest down: speed %g after %g", v[0],
                          o->dvfs[i - 1].speed);
    o->dvfs[i] = (fl_dvfs_level){v[0], v[1]};
    o->ndvfs = i + 1;
    sim_opt_pop(c, mi);
  }
  sim_opt_pop(c, ml);
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(node, "governor");
  o->governor = 0;
  if (g) {
    size_t mg = sim_opt_key(c, "governor");
    int k = -1;
    for (int j = 0; cJSON_IsString(g) && govs[j]; j++)
      if (!strcmp(g->valuestring, govs[j])) k = j;
    if (k < 0) return sim_opt_fail(c, HS_EINVAL, "expected performance, powersave or slack");
    o->governor = k;
    sim_opt_pop(c, mg);
  }
  sim_opt_pop(c, m);
  return HS_OK;
}

void fl_dvfs_print(cJSON *reg, const fl_opts *o) {
  static const char *const govs[] = {"performance", "powersave", "slack"};
  cJSON *d = cJSON_AddObjectToObject(reg, "dvfs");
  if (!d) abort();
  if (o->dvfs_profile) {
    if (!cJSON_AddStringToObject(d, "levels", "profile") ||
        !cJSON_AddStringToObject(d, "governor", govs[o->governor]))
      abort();
    return;
  }
  cJSON *a = cJSON_AddArrayToObject(d, "levels");
  if (!a) abort();
  for (size_t i = 0; i < o->ndvfs; i++) {
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddNumberToObject(e, "speed", o->dvfs[i].speed) ||
        !cJSON_AddNumberToObject(e, "power", o->dvfs[i].power))
      abort();
    cJSON_AddItemToArray(a, e);
  }
  if (!cJSON_AddStringToObject(d, "governor", govs[o->governor])) abort();
}

/* Device i trains now for nominal t seconds: pick the level, set its busy
 * power, return the training time at that level. pace_s: the previous round's
 * slowest nominal training (0: unknown). */
double fl_dvfs_train(sim_run *r, size_t i, double t, double pace_s) {
  const fl_opts *o = r->sc->regime.opts;
  size_t n = o->ndvfs;
  const double *speed = NULL, *power = NULL;
  double sp[32], pw[32];
  if (o->dvfs_profile) {
    const hs_thermal_profile *th = hs_profile_thermal(r->sc->devices[sim_dev_spec(r, i)].profile);
    n = th ? (th->nlevels < 32 ? th->nlevels : 32) : 0;
    speed = th ? th->speed : NULL;
    power = th ? th->busy_factor : NULL;
  } else {
    for (size_t j = 0; j < n; j++) sp[j] = o->dvfs[j].speed, pw[j] = o->dvfs[j].power;
    speed = sp, power = pw;
  }
  if (!n) return t;
  size_t k = 0;
  if (o->governor == 1) k = n - 1;
  else if (o->governor == 2 && pace_s > 0)
    for (size_t j = 0; j < n; j++)
      if (t / speed[j] <= pace_s && power[j] <= power[k]) k = j;
  hs_ledger_set_power(r->ledger, i, HS_POWER_BUSY, sim_dev_busy_w(r, i) * power[k],
                      hs_engine_now(r->eng));
  return t / speed[k];
}
