/* regime_fl_energy.c: whole-system energy of regime "fl" (issue 17): the
 * server host, the aggregator hosts and the network, beside the devices the
 * ledger already meters; and the one reader of host profiles.
 *
 * Hosts (regime.server, and each hierarchical level's aggregator): a profile
 * {idle_w, busy_w, s_per_update, s_per_mb}. A host aggregates U updates in
 * U x (s_per_update + s_per_mb x model MB) seconds before its round can go
 * on (busy), and idles the rest of the makespan. A host block is
 *   absent              the default profile FL_DEFAULT_SERVER;
 *   "name" or "a/b.json" that profile (found as device profiles are:
 *                       $HETSIM_PROFILE_PATH, then devices/profiles/);
 *   {profile?, idle_w?, busy_w?, s_per_update?, s_per_mb?}
 *                       the fields given override the profile named (default
 *                       FL_DEFAULT_SERVER) field by field.
 * A profile file is {"format": "hetsim-server/1", name, host, idle_w,
 * busy_w, s_per_update, s_per_mb, provenance {kind, sources, date?,
 * notes?}}: every key required (provenance.sources unless kind is
 * "measured"), numbers finite and >= 0, busy_w >= idle_w. host_read below
 * reads both forms: one reader, one set of rules.
 * regime.network {j_per_byte, port_w}: every model byte costs j_per_byte on
 *                each link it crosses (two per hop: the sender's access or
 *                uplink, and the shared link it enters), and every endpoint's
 *                port (devices, aggregators, the server) draws port_w for
 *                the makespan. Defaults FL_DEFAULT_J_PER_BYTE and
 *                FL_DEFAULT_PORT_W: ESTIMATES from public figures
 *                (regime_fl.h says which), not measurements.
 * Metrics (fl only, group "system" in metrics.c): energy_server_j,
 * energy_network_j, energy_aggregators_j and energy_system_j = energy_j
 * (devices) + server + aggregators + network, the identity the tests check.
 *
 * Invariants: bytes_hops grows by 2 x model_bytes per hop, once, when the hop
 * starts (every hop of a finished round has completed). O(1) per event; a
 * profile file is read once per host block at load. Rejected: always-present
 * metric lines (every summary.json and sweep golden would change); they
 * appear only for regimes that report them, as the learning metrics only for
 * runs that learn. Reading server profiles with devices/profile.c (its format
 * requires tasks with per-sample costs, which a server has none of; another
 * engineer owns that file): the host format is this file's. Compiled-in
 * copies of the default figures (two places to keep in step): the default
 * is read from its profile file like any other. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "devices/hs_profile.h"
#include "jpath.h"
#include "regime_fl.h"
#include "sim_run.h"

#define HOST_FORMAT "hetsim-server/1"

/* Where host_read failed: the key (NULL: the object itself) and why. */
typedef struct host_err {
  const char *key;
  hs_status st;
  char why[200];
} host_err;

static hs_status host_fail(host_err *e, const char *key, hs_status st, const char *why) {
  e->key = key;
  e->st = st;
  snprintf(e->why, sizeof e->why, "%s", why);
  return st;
}

static const char *const host_nums[] = {"idle_w", "busy_w", "s_per_update", "s_per_mb"};

static double *host_field(fl_host *h, size_t k) {
  double *f[4] = {&h->idle_w, &h->busy_w, &h->s_per_update, &h->s_per_mb};
  return f[k];
}

/* The one reader of a host block: a profile file (file = true: every key
 * required, format/name/host/provenance checked) or an inline override (the
 * numbers present replace h's). Key sets are checked by the callers' own
 * key checks for the inline form (the loader's wording and --set
 * attribution), here for files. */
static hs_status host_read(const cJSON *obj, bool file, fl_host *h, host_err *e) {
  if (!cJSON_IsObject(obj)) return host_fail(e, NULL, HS_ETYPE, "expected an object");
  if (file) {
    static const char *const keys[] = {"format", "name",         "host",     "idle_w",
                                       "busy_w", "s_per_update", "s_per_mb", "provenance"};
    /* the format first: a device profile handed here is named as one */
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(obj, "format");
    if (f && (!cJSON_IsString(f) || strcmp(f->valuestring, HOST_FORMAT)))
      return host_fail(e, "format", HS_EUNSUP, "expected \"" HOST_FORMAT "\"");
    for (const cJSON *m = obj->child; m; m = m->next) {
      bool ok = false;
      for (size_t k = 0; k < 8; k++) ok |= !strcmp(m->string, keys[k]);
      if (!ok)
        return host_fail(e, m->string, HS_EKEY,
                         "unknown key (allowed: format, name, host, idle_w, busy_w, "
                         "s_per_update, s_per_mb, provenance)");
      if (cJSON_GetObjectItemCaseSensitive(obj, m->string) != m)
        return host_fail(e, m->string, HS_EKEY, "key appears twice");
    }
    for (size_t k = 0; k < 8; k++)
      if (!cJSON_GetObjectItemCaseSensitive(obj, keys[k]))
        return host_fail(e, keys[k], HS_EMISSING, "required key is missing");
    static const char *const texts[] = {"name", "host"};
    for (size_t k = 0; k < 2; k++) {
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, texts[k]);
      if (!cJSON_IsString(t) || !t->valuestring[0])
        return host_fail(e, texts[k], HS_ETYPE, "expected a non-empty string");
    }
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "provenance");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(p, "kind");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(p, "sources");
    if (!cJSON_IsObject(p) || !cJSON_IsString(kind) ||
        (strcmp(kind->valuestring, "estimated") && strcmp(kind->valuestring, "measured") &&
         strcmp(kind->valuestring, "mixed")))
      return host_fail(e, "provenance", HS_EINVAL,
                       "expected {kind: estimated | measured | mixed, sources: [...]}");
    bool sourced = cJSON_IsArray(src) && cJSON_GetArraySize(src) > 0;
    for (const cJSON *x = sourced ? src->child : NULL; x; x = x->next)
      sourced &= cJSON_IsString(x) && x->valuestring[0];
    if (!sourced && strcmp(kind->valuestring, "measured"))
      return host_fail(e, "provenance", HS_EMISSING,
                       "an estimate needs sources: [\"each public figure and where it is from\", ...]");
  }
  for (size_t k = 0; k < 4; k++) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, host_nums[k]);
    if (!n) continue;
    if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble) || n->valuedouble < 0)
      return host_fail(e, host_nums[k], HS_EINVAL, "expected a number >= 0");
    *host_field(h, k) = n->valuedouble;
  }
  return HS_OK;
}

/* Profile `name` (a name or a path) into h; failures name the file. */
static hs_status host_file(sim_opt_ctx *c, const char *name, fl_host *h) {
  const hs_scenario *sc = sim_opt_scenario(c);
  hs_error e = {0};
  char *path = hs_profile_find(name, sc->dir, &e);
  if (!path) return sim_opt_fail(c, e.status ? e.status : HS_ENOENT, "server profile: %s", e.msg);
  size_t len = 0;
  char *text = hs_read_file(path, &len, &e);
  hs_status st = HS_OK;
  cJSON *root = NULL;
  const char *end = NULL;
  char pb[256];
  if (!text || hs_text_check_nul(text, len, path, &e)) {
    st = sim_opt_fail(c, e.status ? e.status : HS_EIO, "%s", e.msg);
  } else if (!(root = cJSON_ParseWithOpts(text, &end, 1))) { /* nothing after the value */
    st = sim_opt_fail(c, HS_EPARSE, "%s: not a JSON text (near byte %zu)",
                      sim_opt_shown(path, pb, sizeof pb), (size_t)(end ? end - text : 0));
  } else {
    host_err he = {0};
    fl_host got = {0};
    char kb[80];
    if (host_read(root, true, &got, &he) != HS_OK)
      st = sim_opt_fail(c, he.st, "%s: %s%s%s", sim_opt_shown(path, pb, sizeof pb),
                        he.key ? sim_opt_shown(he.key, kb, sizeof kb) : "", he.key ? ": " : "",
                        he.why);
    else if (got.busy_w < got.idle_w)
      st = sim_opt_fail(c, HS_EINVAL, "%s: busy_w: %g W is below idle_w %g W",
                        sim_opt_shown(path, pb, sizeof pb), got.busy_w, got.idle_w);
    else {
      got.profile = hs_strdup(name);
      fl_host_free(h);
      *h = got;
    }
  }
  cJSON_Delete(root);
  hs_free(text);
  hs_free(path);
  return st;
}

hs_status fl_host_parse(sim_opt_ctx *c, const cJSON *node, fl_host *h) {
  hs_status st;
  if (!node) return host_file(c, FL_DEFAULT_SERVER, h);
  if (cJSON_IsString(node)) {
    if (!node->valuestring[0]) return sim_opt_fail(c, HS_EINVAL, "expected a profile name or path");
    return host_file(c, node->valuestring, h);
  }
  static const char *const keys[] = {"profile", "idle_w", "busy_w", "s_per_update", "s_per_mb",
                                     NULL};
  if ((st = sim_opt_object(c, node, keys))) return st;
  char *base = NULL;
  if ((st = sim_opt_name(c, node, "profile", false, &base))) return st;
  st = host_file(c, base ? base : FL_DEFAULT_SERVER, h);
  hs_free(base);
  if (st) return st;
  host_err he = {0};
  if (host_read(node, false, h, &he)) {
    if (he.key) sim_opt_key(c, he.key);
    return sim_opt_fail(c, he.st, "%s", he.why);
  }
  if (h->busy_w < h->idle_w)
    return sim_opt_fail(c, HS_EINVAL, "busy_w %g W is below idle_w %g W", h->busy_w, h->idle_w);
  return HS_OK;
}

void fl_host_print(cJSON *obj, const char *key, const fl_host *h) {
  cJSON *e = cJSON_AddObjectToObject(obj, key);
  if (!e || (h->profile && !cJSON_AddStringToObject(e, "profile", h->profile))) abort();
  const double v[4] = {h->idle_w, h->busy_w, h->s_per_update, h->s_per_mb};
  for (size_t k = 0; k < 4; k++)
    if (!cJSON_AddNumberToObject(e, host_nums[k], v[k])) abort();
}

void fl_host_free(fl_host *h) {
  hs_free(h->profile);
  h->profile = NULL;
}

/* obj.key into *out, or `dflt` when the key is absent. */
static hs_status num(sim_opt_ctx *c, const cJSON *obj, const char *key, double *out, double dflt) {
  static const sim_opt_range nonneg = {.lo = 0, .hi = INFINITY, .want = "expected a number >= 0",
                                       .status = HS_EINVAL};
  return sim_opt_get_num(c, obj, key, false, dflt, &nonneg, out);
}

hs_status fl_energy_parse(sim_opt_ctx *c, const cJSON *node, fl_opts *o, const char *key) {
  hs_status st;
  size_t m = sim_opt_key(c, key);
  if (!strcmp(key, "server")) {
    if ((st = fl_host_parse(c, node, &o->srv))) return st;
  } else {
    static const char *const keys[] = {"j_per_byte", "port_w", NULL};
    if (node && (st = sim_opt_object(c, node, keys))) return st;
    if ((st = num(c, node, "j_per_byte", &o->j_per_byte, FL_DEFAULT_J_PER_BYTE)) ||
        (st = num(c, node, "port_w", &o->port_w, FL_DEFAULT_PORT_W)))
      return st;
  }
  sim_opt_pop(c, m);
  return HS_OK;
}

void fl_energy_print(cJSON *reg, const fl_opts *o, const char *key) {
  if (!strcmp(key, "server")) {
    fl_host_print(reg, key, &o->srv);
    return;
  }
  cJSON *e = cJSON_AddObjectToObject(reg, key);
  if (!e || !cJSON_AddNumberToObject(e, "j_per_byte", o->j_per_byte) ||
      !cJSON_AddNumberToObject(e, "port_w", o->port_w))
    abort();
}

double fl_server_agg_s(const sim_run *r, size_t updates) {
  const fl_opts *o = r->sc->regime.opts;
  return (double)updates *
         (o->srv.s_per_update + o->srv.s_per_mb * (double)r->sc->model_bytes / 1e6);
}

void fl_energy_summary(const sim_run *r, const fl_energy_acc *a, double makespan_s,
                       double aggregators_j, hs_summary *s) {
  const fl_opts *o = r->sc->regime.opts;
  /* ring: regime.server does not apply, so o->srv stays all 0 */
  double server =
      o->srv.busy_w * a->server_busy_s + o->srv.idle_w * (makespan_s - a->server_busy_s);
  double net = o->j_per_byte * a->bytes_hops + o->port_w * (double)a->ports * makespan_s;
  s->energy_server_j = server;
  s->energy_network_j = net;
  s->energy_aggregators_j = aggregators_j;
  s->energy_system_j = s->energy_j + server + aggregators_j + net;
}
