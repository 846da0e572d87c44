/* regime_fl_energy.c: whole-system energy of regime "fl" (issue 17): the
 * server host and the network, beside the devices the ledger already meters.
 *
 * regime.server  {idle_w, busy_w, s_per_update, s_per_mb}: the server
 *                aggregates U updates in U x (s_per_update + s_per_mb x model
 *                MB) seconds before the next round starts (busy), and idles
 *                the rest of the makespan. Defaults 0: instantaneous and free,
 *                as pma (so fl star with defaults is pma to the byte).
 * regime.network {j_per_byte, port_w}: every model byte costs j_per_byte on
 *                each link it crosses (two per hop: the sender's access or
 *                uplink, and the shared link it enters), and every endpoint's
 *                port (devices, aggregators, the server) draws port_w for
 *                the makespan. Default j_per_byte = FL_DEFAULT_J_PER_BYTE,
 *                an ESTIMATE from public figures for Wi-Fi radios, not a
 *                measurement (regime_fl.h says where it comes from); default
 *                port_w 0: no port figure found that fits every endpoint.
 * Metrics (fl only, group "system" in metrics.c): energy_server_j,
 * energy_network_j, energy_aggregators_j and energy_system_j = energy_j
 * (devices) + server + aggregators + network, the identity the tests check.
 *
 * Invariants: bytes_hops grows by 2 x model_bytes per hop, once, when the hop
 * starts (every hop of a finished round has completed). O(1) per event.
 * Rejected: always-present metric lines (every summary.json and sweep golden
 * would change); they appear only for regimes that report them, as the
 * learning metrics only for runs that learn. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "jpath.h"
#include "regime_fl.h"
#include "run_internal.h"

/* obj.key into *out, or `dflt` when the key is absent. */
static hs_status num(sim_opt_ctx *c, const cJSON *obj, const char *key, double *out, double dflt) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = dflt;
  if (!n) return HS_OK;
  size_t m = sim_opt_key(c, key);
  if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble) || n->valuedouble < 0)
    return sim_opt_fail(c, HS_EINVAL, "expected a number >= 0");
  *out = n->valuedouble;
  sim_opt_pop(c, m);
  return HS_OK;
}

hs_status fl_energy_parse(sim_opt_ctx *c, const cJSON *node, fl_opts *o, const char *key) {
  if (!node) { /* server: every field 0; network: the sourced defaults */
    if (strcmp(key, "server")) o->j_per_byte = FL_DEFAULT_J_PER_BYTE, o->port_w = 0;
    return HS_OK;
  }
  size_t m = sim_opt_key(c, key);
  hs_status st;
  if (!strcmp(key, "server")) {
    static const char *const keys[] = {"idle_w", "busy_w", "s_per_update", "s_per_mb", NULL};
    if ((st = sim_opt_object(c, node, keys)) || (st = num(c, node, "idle_w", &o->srv_idle_w, 0)) ||
        (st = num(c, node, "busy_w", &o->srv_busy_w, 0)) ||
        (st = num(c, node, "s_per_update", &o->srv_s_per_update, 0)) ||
        (st = num(c, node, "s_per_mb", &o->srv_s_per_mb, 0)))
      return st;
  } else {
    static const char *const keys[] = {"j_per_byte", "port_w", NULL};
    if ((st = sim_opt_object(c, node, keys)) || (st = num(c, node, "j_per_byte", &o->j_per_byte, FL_DEFAULT_J_PER_BYTE)) ||
        (st = num(c, node, "port_w", &o->port_w, 0)))
      return st;
  }
  sim_opt_pop(c, m);
  return HS_OK;
}

static void add(cJSON *o, const char *k, double v) {
  if (!cJSON_AddNumberToObject(o, k, v)) abort();
}

void fl_energy_print(cJSON *reg, const fl_opts *o, const char *key) {
  cJSON *e = cJSON_AddObjectToObject(reg, key);
  if (!e) abort();
  if (!strcmp(key, "server")) {
    add(e, "idle_w", o->srv_idle_w);
    add(e, "busy_w", o->srv_busy_w);
    add(e, "s_per_update", o->srv_s_per_update);
    add(e, "s_per_mb", o->srv_s_per_mb);
  } else {
    add(e, "j_per_byte", o->j_per_byte);
    add(e, "port_w", o->port_w);
  }
}

double fl_server_agg_s(const sim_run *r, size_t updates) {
  const fl_opts *o = r->sc->regime.opts;
  return (double)updates *
         (o->srv_s_per_update + o->srv_s_per_mb * (double)r->sc->model_bytes / 1e6);
}

void fl_energy_summary(const sim_run *r, const fl_energy_acc *a, double makespan_s,
                       double aggregators_j, hs_summary *s) {
  const fl_opts *o = r->sc->regime.opts;
  double server = o->srv_busy_w * a->server_busy_s + o->srv_idle_w * (makespan_s - a->server_busy_s);
  double net = o->j_per_byte * a->bytes_hops + o->port_w * (double)a->ports * makespan_s;
  s->energy_server_j = server;
  s->energy_network_j = net;
  s->energy_aggregators_j = aggregators_j;
  s->energy_system_j = s->energy_j + server + aggregators_j + net;
}
