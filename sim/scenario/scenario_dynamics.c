/* scenario_dynamics.c: the scenario's optional "dynamics" block: devices that
 * change during a run (scn_dynamics.h; the run side: sim/run/iface/dyn.h). Without the block nothing changes anywhere.
 *
 *   "dynamics": {
 *     "thermal": true,              every device whose profile has a thermal
 *                                   block throttles (default false)
 *     "start_c": 45,                initial temperature of every board
 *                                   (default: its idle steady state)
 *     "deadline_s": 600,            the server closes each round this long
 *                                   after it opens (default 0: none); only a
 *                                   regime whose descriptor can (pma, fl
 *                                   star): refused for the others, as is
 *                                   availability where it is not taken
 *     "availability_trace": "a.csv" on-intervals, CSV device,start_s,end_s
 *                                   (FedScale-style; a device or entry named
 *                                   there is on only inside its intervals;
 *                                   others are always on)
 *     "devices": {                  per device or entry name:
 *       "x86-a": {"thermal": false,
 *                 "cotenant": {"slowdown": 0.5, "mean_free_s": 600,
 *                              "mean_loaded_s": 120},
 *                 "availability": {"mean_on_s": 3600, "mean_off_s": 300},
 *                 "shared_loading": 0.6}},   how strongly it takes the
 *                                   shared slowdown (below; default 1)
 *     "shared_slowdown": {          a slowdown common to devices (issue 24):
 *       "cv": 0.125,                the CV of a factor every device takes
 *                                   (lognormal, mean 1; default 0: none)
 *       "period_s": 0,              a new factor every period_s simulated
 *                                   seconds (default 0: every round)
 *       "groups": {"host-a": {"cv": 0.1, "devices": ["n100", "ryzen"]}}}
 *                                   a group's factor on top of the
 *                                   scenario-wide one; a device in at most
 *                                   one group
 *   }
 *
 * Structure: one dyn_dev_spec per expanded device, filled from the global
 * keys, then the trace, then each device entry (an entry name applies to all
 * its devices). The block is kept as written (a cJSON copy) for hetsim
 * validate. O(devices + trace rows x log devices).
 * Rejected: keys on each devices[] entry (a second place that every device
 * reader would have to know; the block keeps the feature in one file). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scn_dynamics.h"
#include "base/hs_alloc.h"
#include "traces/hs_csv.h"
#include "base/hs_util.h"
#include "scenario_internal.h"

/* "<what>no device or entry "x"; did you mean "y"?": the nearest entry or
 * device name (hs_nearest; the first 4096 expanded devices are the candidates,
 * so a typo in a million-device scenario costs no more). */
static hs_status no_device(ctx *c, const char *what, const char *name) {
  const hs_scenario *sc = &c->s->pub;
  size_t nd = sc->total_devices < 4096 ? sc->total_devices : 4096;
  const char **cands = hs_calloc(sc->ndevices + nd + 1, sizeof *cands);
  for (size_t k = 0; k < sc->ndevices; k++) cands[k] = sc->devices[k].name;
  for (size_t k = 0; k < nd; k++) cands[sc->ndevices + k] = hs_scenario_device_name(sc, k);
  const char *near = hs_nearest(name, cands, sc->ndevices + nd);
  char b[80], n[80];
  hs_status st = scn_fail(c, HS_ENOENT, "%sno device or entry \"%s\"%s%s%s", what,
                          scn_shown(name, b, sizeof b), near ? "; did you mean \"" : "",
                          near ? scn_shown(near, n, sizeof n) : "", near ? "\"?" : "");
  hs_free(cands);
  return st;
}

static hs_status parse_cotenant(ctx *c, const cJSON *o, dyn_dev_spec *t, size_t first, size_t n) {
  static const char *const keys[] = {"slowdown", "mean_free_s", "mean_loaded_s", NULL};
  hs_status st;
  double slow, free_s, loaded_s;
  size_t mark = sim_jpath_key(&c->path, "cotenant");
  if ((st = scn_need_object(c, o)) || (st = scn_check_keys(c, o, keys)) ||
      (st = scn_get_num(c, o, "slowdown", true, 0, 0, true, 1, true, &slow)) ||
      (st = scn_get_num(c, o, "mean_free_s", true, 0, 0, true, 1e9, false, &free_s)) ||
      (st = scn_get_num(c, o, "mean_loaded_s", true, 0, 0, true, 1e9, false, &loaded_s)))
    return st;
  sim_jpath_pop(&c->path, mark);
  for (size_t k = first; k < first + n; k++) {
    t[k].cot_slowdown = slow;
    t[k].cot_free_s = free_s;
    t[k].cot_loaded_s = loaded_s;
  }
  return HS_OK;
}

static hs_status parse_availability(ctx *c, const cJSON *o, dyn_dev_spec *t, size_t first,
                                    size_t n) {
  static const char *const keys[] = {"mean_on_s", "mean_off_s", NULL};
  hs_status st;
  double on_s, off_s;
  size_t mark = sim_jpath_key(&c->path, "availability");
  if ((st = scn_regime_can(c, SIM_CAN_AVAIL, "does not take device absences")) ||
      (st = scn_need_object(c, o)) || (st = scn_check_keys(c, o, keys)) ||
      (st = scn_get_num(c, o, "mean_on_s", true, 0, 0, true, 1e9, false, &on_s)) ||
      (st = scn_get_num(c, o, "mean_off_s", true, 0, 0, true, 1e9, false, &off_s)))
    return st;
  for (size_t k = first; k < first + n; k++) {
    if (t[k].av_trace)
      return scn_fail(c, HS_EINVAL, "device \"%s\" already has intervals in availability_trace",
                      hs_scenario_device_name(&c->s->pub, k));
    t[k].av_on_s = on_s;
    t[k].av_off_s = off_s;
  }
  sim_jpath_pop(&c->path, mark);
  return HS_OK;
}

/* The thermal block of device k's profile, or a failure naming it. */
static hs_status thermal_of(ctx *c, size_t k, bool required, const hs_thermal_profile **out) {
  const hs_scenario *sc = &c->s->pub;
  const hs_device_spec *d = &sc->devices[hs_scenario_device_entry(sc, k)];
  *out = hs_profile_thermal(d->profile);
  if (!*out && required)
    return scn_fail(c, HS_EINVAL, "profile \"%s\" of device \"%s\" has no thermal block",
                    d->profile_name, hs_scenario_device_name(sc, k));
  return HS_OK;
}

static hs_status parse_device(ctx *c, const cJSON *o, struct hs_dynamics *dy) {
  static const char *const keys[] = {"thermal", "cotenant", "availability", "shared_loading", NULL};
  const hs_scenario *sc = &c->s->pub;
  size_t first, n;
  size_t mark = sim_jpath_key(&c->path, o->string);
  if (!hs_scenario_find_name(sc, o->string, &first, &n)) return no_device(c, "", o->string);
  hs_status st;
  if ((st = scn_need_object(c, o)) || (st = scn_check_keys(c, o, keys))) return st;
  const cJSON *m;
  bool on;
  if ((m = scn_member(o, "thermal"))) {
    if ((st = scn_get_bool(c, o, "thermal", false, &on))) return st;
    size_t m2 = sim_jpath_key(&c->path, "thermal");
    for (size_t k = first; k < first + n; k++) {
      const hs_thermal_profile *th = NULL;
      if (on && (st = thermal_of(c, k, true, &th))) return st;
      dy->dev[k].thermal = th;
    }
    sim_jpath_pop(&c->path, m2);
  }
  if ((m = scn_member(o, "cotenant")) && (st = parse_cotenant(c, m, dy->dev, first, n))) return st;
  if ((m = scn_member(o, "availability")) && (st = parse_availability(c, m, dy->dev, first, n)))
    return st;
  if (scn_member(o, "shared_loading")) {
    /* The exponent of the shared factor on this device's log time: boards
     * that a machine's other load slows more or less than the others (a
     * CPU quota's board that needs more of the CPU feels contention more;
     * hetsim-probe import --run-times fits it). */
    double b = 1;
    if ((st = scn_get_num(c, o, "shared_loading", true, 0, 0, false, 10, false, &b))) return st;
    if (!dy->shared_cv && !dy->nshared_groups) {
      sim_jpath_key(&c->path, "shared_loading");
      return scn_fail(c, HS_EINVAL, "there is no dynamics.shared_slowdown for it to scale");
    }
    for (size_t k = first; k < first + n; k++) dy->dev[k].shared_loading = b;
  }
  sim_jpath_pop(&c->path, mark);
  return HS_OK;
}

/* A factor's CV: as a profile's tau_cv (devices/src/profile.c caps it at 10). */
#define SHARED_CV_MAX 10.0

/* shared_slowdown.groups.<name>: {"cv": x, "devices": [device or entry names]}. */
static hs_status parse_group(ctx *c, const cJSON *o, struct hs_dynamics *dy, uint32_t gi) {
  static const char *const keys[] = {"cv", "devices", NULL};
  const hs_scenario *sc = &c->s->pub;
  size_t mark = sim_jpath_key(&c->path, o->string);
  hs_status st;
  dyn_shared_group *g = &dy->shared_groups[gi];
  if ((st = scn_check_name(c, o->string)) || (st = scn_need_object(c, o)) ||
      (st = scn_check_keys(c, o, keys)) ||
      (st = scn_get_num(c, o, "cv", true, 0, 0, false, SHARED_CV_MAX, false, &g->cv)))
    return st;
  g->name = hs_strdup(o->string);
  const cJSON *m = scn_member(o, "devices");
  if (!m) return scn_missing(c, "devices");
  size_t m2 = sim_jpath_key(&c->path, "devices");
  if (!cJSON_IsArray(m) || !m->child)
    return scn_fail(c, HS_ETYPE, "expected a non-empty array of device or entry names");
  size_t j = 0;
  for (const cJSON *e = m->child; e; e = e->next, j++) {
    size_t m3 = sim_jpath_index(&c->path, j);
    size_t first, n;
    if (!cJSON_IsString(e)) return scn_fail(c, HS_ETYPE, "expected a device or entry name");
    if (!hs_scenario_find_name(sc, e->valuestring, &first, &n))
      return no_device(c, "", e->valuestring);
    for (size_t k = first; k < first + n; k++) {
      uint32_t was = dy->dev[k].shared_group;
      if (was && was != gi + 1)
        return scn_fail(c, HS_EINVAL, "device \"%s\" is in group \"%s\" already (a device "
                        "belongs to at most one group)", hs_scenario_device_name(sc, k),
                        dy->shared_groups[was - 1].name);
      dy->dev[k].shared_group = gi + 1;
    }
    sim_jpath_pop(&c->path, m3);
  }
  sim_jpath_pop(&c->path, m2);
  sim_jpath_pop(&c->path, mark);
  return HS_OK;
}

/* shared_slowdown: {"cv": x, "period_s": p, "groups": {...}}. Every regime
 * that may draw compute through the run's sampler says so (SIM_CAN_SHARED). */
static hs_status parse_shared(ctx *c, const cJSON *o, struct hs_dynamics *dy) {
  static const char *const keys[] = {"cv", "period_s", "groups", NULL};
  size_t mark = sim_jpath_key(&c->path, "shared_slowdown");
  hs_status st;
  if ((st = scn_regime_can(c, SIM_CAN_SHARED, "does not draw its compute times per period")) ||
      (st = scn_need_object(c, o)) || (st = scn_check_keys(c, o, keys)) ||
      (st = scn_get_num(c, o, "cv", false, 0, 0, false, SHARED_CV_MAX, false, &dy->shared_cv)) ||
      (st = scn_get_num(c, o, "period_s", false, 0, 0, false, 1e12, false, &dy->shared_period_s)))
    return st;
  const cJSON *m = scn_member(o, "groups");
  if (m) {
    size_t m2 = sim_jpath_key(&c->path, "groups");
    if ((st = scn_need_object(c, m))) return st;
    size_t n = (size_t)cJSON_GetArraySize(m);
    dy->shared_groups = hs_calloc(n ? n : 1, sizeof *dy->shared_groups);
    uint32_t gi = 0;
    for (const cJSON *d = m->child; d; d = d->next, gi++) {
      for (const cJSON *e = m->child; e != d; e = e->next)
        if (!strcmp(e->string, d->string)) {
          sim_jpath_key(&c->path, d->string);
          return scn_fail(c, HS_EKEY, "duplicate key");
        }
      dy->nshared_groups = gi + 1;
      if ((st = parse_group(c, d, dy, gi))) return st;
    }
    sim_jpath_pop(&c->path, m2);
  }
  sim_jpath_pop(&c->path, mark);
  return HS_OK;
}

static int cmp_iv(const void *a, const void *b) {
  const double *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* availability_trace: rows device,start_s,end_s; per device sorted and
 * checked for overlaps (touching intervals merge). */
static hs_status parse_trace(ctx *c, const char *name, struct hs_dynamics *dy) {
  const hs_scenario *sc = &c->s->pub;
  size_t mark = sim_jpath_key(&c->path, "availability_trace");
  hs_status can = scn_regime_can(c, SIM_CAN_AVAIL, "does not take device absences");
  if (can) return can;
  char *path = hs_path_join(c->dir, name);
  hs_error e = {0};
  size_t len = 0;
  char *text = hs_read_file(path, &len, &e);
  hs_status st = HS_OK;
  hs_csv *r = NULL;
  if (!text) {
    st = scn_fail(c, e.status ? e.status : HS_EIO, "%s", e.msg);
    goto done;
  }
  r = hs_csv_create(text, len, path, HS_CSV_SKIP_BLANK | HS_CSV_COMMENTS | HS_CSV_TRIM, &e);
  static const char *const cols[] = {"device", "start_s", "end_s"};
  size_t col[3];
  if (!r || hs_csv_next(r, &e) != 1 || hs_csv_header(r, cols, 3, col, &e) != HS_OK) {
    if (!e.msg[0]) hs_error_set(&e, HS_EPARSE, "%s: empty file (header device,start_s,end_s)", path);
    st = scn_fail(c, e.status ? e.status : HS_EPARSE, "%s", e.msg);
    goto done;
  }
  int k;
  size_t line = 1;
  while ((k = hs_csv_next(r, &e)) > 0) {
    line++;
    size_t first, n;
    const char *dev = hs_csv_field(r, col[0]);
    char *end1, *end2;
    double a = strtod(hs_csv_field(r, col[1]), &end1), z = strtod(hs_csv_field(r, col[2]), &end2);
    if (!hs_scenario_find_name(sc, dev, &first, &n)) {
      char what[600];
      snprintf(what, sizeof what, "%.500s: row %zu: ", path, line - 1);
      st = no_device(c, what, dev);
      goto done;
    }
    if (*end1 || *end2 || end1 == hs_csv_field(r, col[1]) || !isfinite(a) || !isfinite(z) ||
        a < 0 || !(z > a)) {
      st = scn_fail(c, HS_EINVAL, "%s: row %zu: need finite 0 <= start_s < end_s", path, line - 1);
      goto done;
    }
    for (size_t d = first; d < first + n; d++) {
      dyn_dev_spec *t = &dy->dev[d];
      t->av_trace = true;
      t->av_iv = hs_realloc(t->av_iv, 2 * (t->av_n + 1) * sizeof *t->av_iv);
      t->av_iv[2 * t->av_n] = a;
      t->av_iv[2 * t->av_n + 1] = z;
      t->av_n++;
    }
  }
  if (k < 0) {
    st = scn_fail(c, e.status ? e.status : HS_EPARSE, "%s", e.msg);
    goto done;
  }
  for (size_t d = 0; d < dy->ndev; d++) {
    dyn_dev_spec *t = &dy->dev[d];
    if (!t->av_n) continue;
    qsort(t->av_iv, t->av_n, 2 * sizeof *t->av_iv, cmp_iv);
    size_t w = 0;
    for (size_t j = 1; j < t->av_n; j++) {
      if (t->av_iv[2 * j] < t->av_iv[2 * w + 1]) {
        st = scn_fail(c, HS_EINVAL, "%s: device \"%s\": intervals overlap at %g s", path,
                      hs_scenario_device_name(sc, d), t->av_iv[2 * j]);
        goto done;
      }
      if (t->av_iv[2 * j] == t->av_iv[2 * w + 1]) {
        t->av_iv[2 * w + 1] = t->av_iv[2 * j + 1];
      } else {
        w++;
        t->av_iv[2 * w] = t->av_iv[2 * j];
        t->av_iv[2 * w + 1] = t->av_iv[2 * j + 1];
      }
    }
    t->av_n = w + 1;
  }
  sim_jpath_pop(&c->path, mark);
done:
  hs_csv_destroy(r);
  hs_free(text);
  hs_free(path);
  return st;
}

const char *const scn_dynamics_keys[] = {"thermal", "start_c",         "deadline_s",
                                         "availability_trace", "devices", "shared_slowdown",
                                         NULL};

hs_status scn_parse_dynamics(ctx *c, const cJSON *root) {
  const cJSON *o = scn_member(root, "dynamics");
  if (!o) return HS_OK;
  const char *const *keys = scn_dynamics_keys;
  hs_scenario *sc = &c->s->pub;
  size_t mark = sim_jpath_key(&c->path, "dynamics");
  hs_status st;
  if ((st = scn_need_object(c, o)) || (st = scn_check_keys(c, o, keys))) return st;
  struct hs_dynamics *dy = hs_calloc(1, sizeof *dy);
  sc->dynamics = dy;
  dy->ndev = sc->total_devices;
  dy->dev = hs_calloc(dy->ndev, sizeof *dy->dev);
  for (size_t k = 0; k < dy->ndev; k++) dy->dev[k].shared_loading = 1;
  dy->json = cJSON_Duplicate(o, 1);
  if (!dy->json) abort();
  const cJSON *m;
  bool on = false;
  if ((st = scn_get_bool(c, o, "thermal", false, &on))) return st;
  if (on) {
    size_t m2 = sim_jpath_key(&c->path, "thermal");
    for (size_t k = 0; k < dy->ndev; k++) thermal_of(c, k, false, &dy->dev[k].thermal);
    sim_jpath_pop(&c->path, m2);
  }
  dy->start_c = NAN;
  if (scn_member(o, "start_c") &&
      (st = scn_get_num(c, o, "start_c", true, 0, -50, false, 200, false, &dy->start_c)))
    return st;
  if ((st = scn_get_num(c, o, "deadline_s", false, 0, 0, false, 1e12, false, &dy->deadline_s)))
    return st;
  if (dy->deadline_s > 0) {
    size_t m2 = sim_jpath_key(&c->path, "deadline_s");
    if ((st = scn_regime_can(c, SIM_CAN_DEADLINE, "has no round deadline"))) return st;
    sim_jpath_pop(&c->path, m2);
  }
  char *trace = NULL;
  if ((st = scn_get_str(c, o, "availability_trace", false, NULL, &trace))) return st;
  if (trace) {
    st = parse_trace(c, trace, dy);
    hs_free(trace);
    if (st) return st;
  }
  if ((m = scn_member(o, "shared_slowdown")) && (st = parse_shared(c, m, dy))) return st;
  if ((m = scn_member(o, "devices"))) {
    size_t m2 = sim_jpath_key(&c->path, "devices");
    if ((st = scn_need_object(c, m))) return st;
    for (const cJSON *d = m->child; d; d = d->next) {
      for (const cJSON *e = m->child; e != d; e = e->next)
        if (!strcmp(e->string, d->string)) {
          sim_jpath_key(&c->path, d->string);
          return scn_fail(c, HS_EKEY, "duplicate key");
        }
      if ((st = parse_device(c, d, dy))) return st;
    }
    sim_jpath_pop(&c->path, m2);
  }
  sim_jpath_pop(&c->path, mark);
  return HS_OK;
}

void scn_print_dynamics(const hs_scenario *sc, cJSON *root) {
  if (!sc->dynamics) return;
  cJSON *copy = cJSON_Duplicate(sc->dynamics->json, 1);
  if (!copy || !cJSON_AddItemToObject(root, "dynamics", copy)) abort();
}

void scn_free_dynamics(hs_scenario *sc) {
  struct hs_dynamics *dy = sc->dynamics;
  if (!dy) return;
  for (size_t k = 0; k < dy->ndev; k++) hs_free(dy->dev[k].av_iv);
  for (size_t g = 0; g < dy->nshared_groups; g++) hs_free(dy->shared_groups[g].name);
  hs_free(dy->shared_groups);
  hs_free(dy->dev);
  cJSON_Delete(dy->json);
  hs_free(dy);
  sc->dynamics = NULL;
}

/* --- its block: lines of the loader's block table (scenario.c) --- */

const scn_block scn_block_dynamics = {
    .key = "dynamics", .step = 160,
    .parse = scn_parse_dynamics, .print = scn_print_dynamics, .free = scn_free_dynamics,
    .type = SCN_OBJECT, .def_text = "none", .keys = scn_dynamics_keys,
    .doc = "devices that change: thermal throttling, co-tenants, availability"};
