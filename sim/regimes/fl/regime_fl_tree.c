/* regime_fl_tree.c: the hierarchical topology of regime "fl" (issue 17):
 * clients -> level-1 aggregators -> ... -> level-L aggregators -> the server.
 *
 * regime.levels (leaves first), each {fanout, link, aggregator}:
 *   fanout      children per aggregator of this level (devices for level 1,
 *               level-(l-1) aggregators above); children are taken in order,
 *               so n_l = ceil(n_{l-1} / fanout), n_0 = devices;
 *   link        a name in network.links: EACH aggregator of the level gets its
 *               own instance, shared by the flows to and from its children;
 *   aggregator  a host profile (regime_fl_energy.c: a name, or {profile?,
 *               s_per_update?, s_per_mb?, idle_w?, busy_w?} overriding it;
 *               {} is the default host FL_DEFAULT_SERVER): aggregation time
 *               s_per_update x children + s_per_mb x model MB x children, and
 *               the host's power (reported as aggregator energy).
 * A hop child -> parent (either way) is one flow of model_bytes over the
 * parent's link instance (the server link for level L), capped by the
 * child's access bandwidth (a device) or by its own level's link bandwidth
 * (an aggregator); its path latency is that cap's latency plus the crossed
 * link's (hs_net adds the latter).
 * Round: the model cascades down (each aggregator forwards once it has it),
 * devices train and upload, each aggregator aggregates once all its
 * participating children arrived, then uploads; the round ends when the server
 * has every top-level update and has aggregated them (regime.server's
 * time, fl_close_round: 0 s by default, as in pma). Bytes on level l's links per round: 2 x model_bytes x
 * (participating level-(l-1) nodes) -- reported as summary fields.
 * The controller's groups are the level-1 aggregators (a natural group each).
 *
 * Invariants: pending[l][j] counts the children of node j whose update has
 * not arrived; a node with no participating child takes no part. Cost: O(N)
 * per round start (participation counted bottom-up), O(1) per event.
 * Rejected: aggregators as simulated devices in the ledger (their power is
 * not a device's: no samples, no policy share); see the notes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "jpath.h"
#include "regime_fl.h"
#include "sim_run.h"

/* --- options ------------------------------------------------------------------ */

static hs_status parse_level(sim_opt_ctx *c, const cJSON *e, fl_level *lv) {
  static const char *const keys[] = {"fanout", "link", "aggregator", NULL};
  const hs_scenario *sc = sim_opt_scenario(c);
  hs_status st;
  if ((st = sim_opt_object(c, e, keys))) return st;
  static const sim_opt_range children = {
      .lo = 1, .hi = 1e9, .want = "expected a whole number of children >= 1", .status = HS_EINVAL};
  double fanout;
  if ((st = sim_opt_get_uint(c, e, "fanout", true, 0, &children, &fanout))) return st;
  lv->fanout = (uint32_t)fanout;
  if ((st = sim_opt_name(c, e, "link", true, &lv->link))) return st;
  if (!hs_scenario_link(sc, lv->link)) {
    sim_opt_key(c, "link");
    return sim_opt_fail(c, HS_ENOENT, "no link \"%s\" in network.links", lv->link);
  }
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "aggregator");
  if (!a || cJSON_IsNull(a)) {
    sim_opt_key(c, "aggregator");
    return sim_opt_fail(c, HS_EMISSING,
                        "a level needs an aggregator: a host profile name, or {profile?, "
                        "s_per_update?, s_per_mb?, idle_w?, busy_w?}");
  }
  size_t ma = sim_opt_key(c, "aggregator");
  if ((st = fl_host_parse(c, a, &lv->agg))) return st;
  sim_opt_pop(c, ma);
  return HS_OK;
}

hs_status fl_levels_parse(sim_opt_ctx *c, const cJSON *node, fl_opts *o) {
  const hs_scenario *sc = sim_opt_scenario(c);
  if (!node) return sim_opt_missing(c, "levels");
  size_t m = sim_opt_key(c, "levels");
  if (!cJSON_IsArray(node))
    return sim_opt_fail(c, HS_ETYPE, "expected an array of levels, got %s", sim_json_type(node));
  size_t n = (size_t)cJSON_GetArraySize(node);
  if (n == 0 || n > FL_MAX_LEVELS)
    return sim_opt_fail(c, HS_EINVAL, "expected 1 to %d levels, got %zu", FL_MAX_LEVELS, n);
  o->levels = hs_calloc(n, sizeof *o->levels);
  size_t i = 0;
  for (const cJSON *e = node->child; e; e = e->next, i++) {
    o->nlevels = i + 1;
    size_t mi = sim_opt_index(c, i);
    hs_status st = parse_level(c, e, &o->levels[i]);
    if (st) return st;
    sim_opt_pop(c, mi);
  }
  /* groups: the level-1 aggregator of each device */
  o->group_of = hs_malloc((sc->total_devices ? sc->total_devices : 1) * sizeof *o->group_of);
  for (size_t d = 0; d < sc->total_devices; d++) o->group_of[d] = (uint32_t)(d / o->levels[0].fanout);
  sim_opt_pop(c, m);
  return HS_OK;
}

void fl_levels_print(cJSON *reg, const fl_opts *o) {
  cJSON *arr = cJSON_AddArrayToObject(reg, "levels");
  if (!arr) abort();
  for (size_t l = 0; l < o->nlevels; l++) {
    const fl_level *lv = &o->levels[l];
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddNumberToObject(e, "fanout", lv->fanout) ||
        !cJSON_AddStringToObject(e, "link", lv->link))
      abort();
    fl_host_print(e, "aggregator", &lv->agg);
    cJSON_AddItemToArray(arr, e);
  }
}

void fl_levels_free(fl_opts *o) {
  for (size_t l = 0; l < o->nlevels; l++) {
    hs_free(o->levels[l].link);
    fl_host_free(&o->levels[l].agg);
  }
  hs_free(o->levels);
  hs_free(o->group_of);
  o->levels = NULL;
  o->group_of = NULL;
  o->nlevels = 0;
}

/* --- the run -------------------------------------------------------------------- */

/* Level l = 0 are the devices, 1..L the aggregators, L+1 the server (one node). */
typedef struct fl_tree {
  size_t L;
  size_t n[FL_MAX_LEVELS + 2];
  int *link[FL_MAX_LEVELS + 1];        /* link[l][j], l >= 1: node j's link instance */
  uint32_t *part[FL_MAX_LEVELS + 2];   /* participating children (l >= 1), or 0/1 at l = 0 */
  uint32_t *pending[FL_MAX_LEVELS + 2];
  double agg_busy_s[FL_MAX_LEVELS + 1]; /* summed over the level's nodes */
  double bytes[FL_MAX_LEVELS + 2];      /* per level l >= 1: bytes over its links */
} fl_tree;

#define ARG(l, j) (((uint64_t)(l) << 56) | (uint64_t)(j))
#define ARG_L(a) ((size_t)((a) >> 56))
#define ARG_J(a) ((size_t)((a) & ((1ull << 56) - 1)))

static const fl_opts *opts_of(const sim_run *r) { return r->sc->regime.opts; }
static fl_tree *tree_of(sim_run *r) { return fl_state_tree(r); }

static size_t parent_of(const sim_run *r, size_t l, size_t j) {
  return j / opts_of(r)->levels[l].fanout; /* levels[l] is level l+1's spec */
}

/* The flow of one hop between node (l, j) and its parent (down: from it). */
static void hop(sim_run *r, size_t l, size_t j, bool down, hs_event_fn done, uint64_t arg) {
  fl_tree *t = tree_of(r);
  const fl_opts *o = opts_of(r);
  double cap, lat;
  if (l == 0) {
    cap = sim_dev_sp(r, j)->access_bps;
    lat = sim_dev_sp(r, j)->access_latency_s;
    if (!down) lat += sim_dev_send_stall_s(r, j, (double)r->sc->model_bytes); /* after training */
  } else {
    const hs_link_spec *ls = hs_scenario_link(r->sc, o->levels[l - 1].link);
    cap = ls->bandwidth_mbps * HS_NET_BPS_PER_MBPS;
    lat = ls->latency_ms * 1e-3;
  }
  int via;
  if (l + 1 > t->L) via = r->server_link;
  else via = t->link[l + 1][parent_of(r, l, j)];
  if (down) via = hs_net_link_reverse(r->net, via); /* itself unless full duplex */
  t->bytes[l + 1] += (double)r->sc->model_bytes;
  fl_state_energy(r)->bytes_hops += 2.0 * (double)r->sc->model_bytes;
  hs_net_transfer(r->net, (double)r->sc->model_bytes, cap, lat, &via, 1, done, r, arg);
}

static void node_has_model(sim_run *r, size_t l, size_t j);
static void child_arrived(sim_run *r, size_t l, size_t j);

static void on_down(hs_engine *eng, void *subject, uint64_t a) {
  (void)eng;
  node_has_model(subject, ARG_L(a), ARG_J(a));
}

static void on_up(hs_engine *eng, void *subject, uint64_t a) {
  (void)eng;
  child_arrived(subject, ARG_L(a), ARG_J(a));
}

static void on_dev_computed(hs_engine *eng, void *subject, uint64_t i) {
  (void)eng;
  sim_run *r = subject;
  sim_dev_state(r, i, HS_POWER_COMM);
  hop(r, 0, i, false, on_up, ARG(0, i));
}

static void on_agg_done(hs_engine *eng, void *subject, uint64_t a) {
  (void)eng;
  hop(subject, ARG_L(a), ARG_J(a), false, on_up, a);
}

/* Node (l, j) received the model: a device trains, an aggregator forwards. */
static void node_has_model(sim_run *r, size_t l, size_t j) {
  fl_tree *t = tree_of(r);
  if (l == 0) { /* a leaf trains at its DVFS level (aggregators have none) */
    double s = fl_train_s(r, j); /* sets the level's busy power first */
    sim_dev_state(r, j, HS_POWER_BUSY);
    hs_engine_post_in(r->eng, s, 0, on_dev_computed, r, j);
    return;
  }
  size_t f = opts_of(r)->levels[l - 1].fanout;
  for (size_t k = j * f; k < (j + 1) * f && k < t->n[l - 1]; k++) {
    if (!t->part[l - 1][k]) continue;
    if (l == 1) sim_dev_state(r, k, HS_POWER_COMM);
    hop(r, l - 1, k, true, on_down, ARG(l - 1, k));
  }
}

/* The update of node (l, j) reached its parent. */
static void child_arrived(sim_run *r, size_t l, size_t j) {
  fl_tree *t = tree_of(r);
  if (l == 0) sim_dev_state(r, j, HS_POWER_IDLE);
  size_t pl = l + 1, pj = pl > t->L ? 0 : parent_of(r, l, j);
  if (--t->pending[pl][pj] > 0) return;
  if (pl > t->L) {
    fl_close_round(r, t->part[pl][0]);
    return;
  }
  const fl_level *lv = &opts_of(r)->levels[pl - 1];
  double kids = t->part[pl][pj];
  double s = lv->agg.s_per_update * kids + lv->agg.s_per_mb * (double)r->sc->model_bytes / 1e6 * kids;
  t->agg_busy_s[pl] += s;
  hs_engine_schedule_in(r->eng, s, 0, on_agg_done, r, ARG(pl, pj));
}

void fl_tree_start_round(sim_run *r) {
  fl_tree *t = tree_of(r);
  const fl_opts *o = opts_of(r);
  size_t any = 0;
  for (size_t i = 0; i < r->ndev; i++) {
    t->part[0][i] = r->alloc[i] > 0;
    any += t->part[0][i];
    if (!t->part[0][i] && r->sc->switch_off_unselected) sim_dev_state(r, i, HS_POWER_OFF);
  }
  if (!any) {
    sim_fail(r, HS_EINVAL, "the policy selected no participant");
    return;
  }
  for (size_t l = 1; l <= t->L + 1; l++) {
    memset(t->part[l], 0, t->n[l] * sizeof *t->part[l]);
    for (size_t j = 0; j < t->n[l - 1]; j++)
      if (t->part[l - 1][j]) t->part[l][l > t->L ? 0 : j / o->levels[l - 1].fanout]++;
    memcpy(t->pending[l], t->part[l], t->n[l] * sizeof *t->part[l]);
  }
  for (size_t j = 0; j < t->n[t->L]; j++)
    if (t->part[t->L][j]) hop(r, t->L, j, true, on_down, ARG(t->L, j));
}

hs_status fl_tree_setup(sim_run *r, hs_error *err) {
  (void)err;
  const fl_opts *o = opts_of(r);
  fl_tree *t = hs_calloc(1, sizeof *t);
  t->L = o->nlevels;
  t->n[0] = r->ndev;
  for (size_t l = 1; l <= t->L; l++) {
    size_t f = o->levels[l - 1].fanout;
    t->n[l] = (t->n[l - 1] + f - 1) / f;
  }
  t->n[t->L + 1] = 1;
  for (size_t l = 0; l <= t->L + 1; l++) {
    t->part[l] = hs_calloc(t->n[l], sizeof *t->part[l]);
    t->pending[l] = hs_calloc(t->n[l], sizeof *t->pending[l]);
  }
  for (size_t l = 1; l <= t->L; l++) {
    const hs_link_spec *ls = hs_scenario_link(r->sc, o->levels[l - 1].link);
    t->link[l] = hs_calloc(t->n[l], sizeof *t->link[l]);
    for (size_t j = 0; j < t->n[l]; j++) {
      char name[64];
      snprintf(name, sizeof name, "fl-level%zu-%zu", l, j);
      t->link[l][j] = (ls->full_duplex ? hs_net_add_duplex_link : hs_net_add_link)(
          r->net, name, ls->bandwidth_mbps * HS_NET_BPS_PER_MBPS, ls->latency_ms * 1e-3);
    }
  }
  fl_state_set_tree(r, t);
  return HS_OK;
}

void fl_tree_free(fl_tree *t) {
  if (!t) return;
  for (size_t l = 0; l <= t->L + 1; l++) {
    hs_free(t->part[l]);
    hs_free(t->pending[l]);
    if (l >= 1 && l <= t->L) hs_free(t->link[l]);
  }
  hs_free(t);
}

/* level<l>_bytes for l = 1..L+1 (L+1: the server link); *aggregators_j:
 * busy_w x aggregation time + idle_w x the rest of the makespan, over every
 * aggregator (the metric energy_aggregators_j). out may be NULL (cap 0). */
size_t fl_tree_nodes(sim_run *r) {
  fl_tree *t = tree_of(r);
  size_t n = 0;
  for (size_t l = 1; l <= t->L; l++) n += t->n[l];
  return n;
}

size_t fl_tree_summary(sim_run *r, double makespan_s, hs_report_field *out, size_t cap,
                       double *aggregators_j) {
  static const char *const keys[FL_MAX_LEVELS + 1] = {
      "level1_bytes", "level2_bytes", "level3_bytes", "level4_bytes", "level5_bytes",
      "level6_bytes", "level7_bytes", "level8_bytes", "level9_bytes"};
  fl_tree *t = tree_of(r);
  const fl_opts *o = opts_of(r);
  size_t k = 0;
  for (size_t l = 1; l <= t->L + 1 && k < cap; l++) out[k++] = (hs_report_field){keys[l - 1], t->bytes[l]};
  double e = 0;
  for (size_t l = 1; l <= t->L; l++) {
    const fl_level *lv = &o->levels[l - 1];
    e += lv->agg.busy_w * t->agg_busy_s[l] +
         lv->agg.idle_w * ((double)t->n[l] * makespan_s - t->agg_busy_s[l]);
  }
  *aggregators_j = e;
  return k;
}
