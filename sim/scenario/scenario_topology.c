/* scenario_topology.c: the scenario's "topology" (a multi-tier GPU cluster)
 * and "model" (what the sharded regimes shard) blocks: parse, print back
 * (hetsim validate), free. Both are optional; a regime that needs them says
 * so at run set-up.
 *
 *   "topology": {"gpus_per_node": 4, "nics_per_node": 4, "nodes_per_cell": 180,
 *                "intra":  {"bandwidth_gbps": 1600, "latency_us": 3},
 *                "inter":  {"bandwidth_gbps": 100,  "latency_us": 8},
 *                "global": {"taper": 1, "latency_us": 10},
 *                "first_node": 0 | "nodes": [node ids...]}
 *   "model": {"name": "llama3.1-8b", "params": 7.505e9, "root_params": 5.253e8,
 *             "units": 32, "bytes_per_param": 2, "state_bytes_per_param": 8,
 *             "seq_len": 2048, "activation_bytes_per_token": 5.37e6}
 *
 * Bandwidths are Gbit/s (1e9 bit/s) per GPU: intra is the ring bus bandwidth
 * on the node fabric, inter one NIC rail. Placement: rank r on node slot
 * r / gpus_per_node, which is node first_node + slot, or nodes[slot]; node k
 * in cell k / nodes_per_cell. Invariants after a successful parse: every
 * count >= 1, every bandwidth > 0, taper in (0, 1], node ids unique.
 * O(size of the blocks); the node list is checked for duplicates by sorting a
 * copy (O(n log n)). Rejected: naming tiers in network.links (Mbit/s, shared
 * link semantics of the star regimes) - a GPU tier is per rank, not a link. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "scenario_internal.h"

#define GBPS 1e9
#define US 1e-6

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* {"bandwidth_gbps", "latency_us"} (or {"taper", "latency_us"} for global). */
static hs_status parse_tier(ctx *c, const cJSON *t, const char *key, const char *bwkey,
                            double bwdef, double bwhi, double latdef, double *bw, double *lat) {
  const cJSON *n = scn_member(t, key);
  size_t m = sim_jpath_key(&c->path, key);
  hs_status st;
  if (n && (st = scn_need_object(c, n))) return st;
  const char *keys[] = {bwkey, "latency_us", NULL};
  if (n && (st = scn_check_keys(c, n, keys))) return st;
  bool is_taper = !strcmp(bwkey, "taper");
  if ((st = scn_get_num(c, n, bwkey, !is_taper, bwdef, 0, true, bwhi, false, bw)) ||
      (st = scn_get_num(c, n, "latency_us", false, latdef, 0, false, 1e9, false, lat)))
    return st;
  sim_jpath_pop(&c->path, m);
  return HS_OK;
}

static hs_status parse_topo(ctx *c, const cJSON *t, sim_topo *o) {
  hs_status st;
  if ((st = scn_need_object(c, t))) return st;
  static const char *const keys[] = {"gpus_per_node", "nics_per_node", "nodes_per_cell",
                                     "intra",         "inter",         "global",
                                     "first_node",    "nodes",         NULL};
  if ((st = scn_check_keys(c, t, keys))) return st;
  double g, nics, cell, first;
  if ((st = scn_get_uint(c, t, "gpus_per_node", true, 0, 1, 1024, &g))) return st;
  if ((st = scn_get_uint(c, t, "nics_per_node", false, g, 1, g, &nics)) ||
      (st = scn_get_uint(c, t, "nodes_per_cell", false, 1e9, 1, 1e9, &cell)) ||
      (st = scn_get_uint(c, t, "first_node", false, 0, 0, 1e9, &first)))
    return st;
  o->gpus_per_node = (uint32_t)g;
  o->nics_per_node = (uint32_t)nics;
  o->nodes_per_cell = (uint32_t)cell;
  o->first_node = (uint32_t)first;
  double bw, lat;
  if ((st = parse_tier(c, t, "intra", "bandwidth_gbps", 0, 1e7, 3, &bw, &lat))) return st;
  o->intra_bps = bw * GBPS;
  o->intra_alpha_s = lat * US;
  if ((st = parse_tier(c, t, "inter", "bandwidth_gbps", 0, 1e7, 8, &bw, &lat))) return st;
  o->nic_bps = bw * GBPS;
  o->nic_alpha_s = lat * US;
  if ((st = parse_tier(c, t, "global", "taper", 1, 1, 10, &bw, &lat))) return st;
  o->taper = bw;
  o->global_alpha_s = lat * US;
  const cJSON *nodes = scn_member(t, "nodes");
  if (!nodes) return HS_OK;
  size_t m = sim_jpath_key(&c->path, "nodes");
  if (scn_member(t, "first_node"))
    return scn_fail(c, HS_EINVAL, "give nodes or first_node, not both");
  if (!cJSON_IsArray(nodes) || cJSON_GetArraySize(nodes) == 0)
    return scn_fail(c, HS_ETYPE, "expected a non-empty array of node ids");
  size_t n = (size_t)cJSON_GetArraySize(nodes), k = 0;
  o->nodes = hs_calloc(n, sizeof *o->nodes);
  o->nnodes = n;
  for (const cJSON *e = nodes->child; e; e = e->next, k++) {
    size_t mi = sim_jpath_index(&c->path, k);
    double v = e->valuedouble;
    if (!cJSON_IsNumber(e) || v < 0 || v > 1e9 || v != floor(v))
      return scn_fail(c, HS_EINVAL, "expected a node id, an integer in [0, 1e9]");
    o->nodes[k] = (uint32_t)v;
    sim_jpath_pop(&c->path, mi);
  }
  uint32_t *sorted = hs_calloc(n, sizeof *sorted);
  memcpy(sorted, o->nodes, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, cmp_u32);
  for (k = 1; k < n; k++)
    if (sorted[k] == sorted[k - 1]) {
      uint32_t dup = sorted[k];
      hs_free(sorted);
      return scn_fail(c, HS_EINVAL, "node %u appears twice", dup);
    }
  hs_free(sorted);
  sim_jpath_pop(&c->path, m);
  return HS_OK;
}

static hs_status parse_model(ctx *c, const cJSON *t, sim_model *o) {
  hs_status st;
  if ((st = scn_need_object(c, t))) return st;
  static const char *const keys[] = {"name",
                                     "params",
                                     "root_params",
                                     "units",
                                     "bytes_per_param",
                                     "state_bytes_per_param",
                                     "seq_len",
                                     "activation_bytes_per_token",
                                     NULL};
  if ((st = scn_check_keys(c, t, keys))) return st;
  double units, seq;
  if ((st = scn_get_str(c, t, "name", false, "model", &o->name)) ||
      (st = scn_get_num(c, t, "params", true, 0, 0, true, 1e15, false, &o->params)) ||
      (st = scn_get_num(c, t, "root_params", false, 0, 0, false, 1e15, false, &o->root_params)) ||
      (st = scn_get_uint(c, t, "units", true, 0, 1, 100000, &units)) ||
      (st = scn_get_num(c, t, "bytes_per_param", false, 2, 0, true, 16, false,
                        &o->bytes_per_param)) ||
      (st = scn_get_num(c, t, "state_bytes_per_param", false, 8, 0, false, 64, false,
                        &o->state_bytes_per_param)) ||
      (st = scn_get_uint(c, t, "seq_len", true, 0, 1, 1e9, &seq)) ||
      (st = scn_get_num(c, t, "activation_bytes_per_token", false, 0, 0, false, 1e12, false,
                        &o->act_bytes_per_token)))
    return st;
  if (o->root_params >= o->params) {
    size_t m = sim_jpath_key(&c->path, "root_params");
    (void)m; /* the error ends the parse: the path is not popped */
    return scn_fail(c, HS_ERANGE, "must be below params (%.6g)", o->params);
  }
  o->units = (uint32_t)units;
  o->seq_len = seq;
  return HS_OK;
}

hs_status scn_parse_topology(sim_opt_ctx *c, const cJSON *root) {
  sim_scn *s = c->s;
  hs_status st;
  const cJSON *t = scn_member(root, "topology");
  if (t) {
    size_t m = sim_jpath_key(&c->path, "topology");
    if ((st = parse_topo(c, t, &s->topo))) return st;
    s->topo.present = true;
    sim_jpath_pop(&c->path, m);
  }
  t = scn_member(root, "model");
  if (t) {
    size_t m = sim_jpath_key(&c->path, "model");
    if ((st = parse_model(c, t, &s->model))) return st;
    s->model.present = true;
    sim_jpath_pop(&c->path, m);
  }
  return HS_OK;
}

static void add_num(cJSON *o, const char *key, double v) {
  if (!cJSON_AddNumberToObject(o, key, v)) abort();
}
static cJSON *add_obj(cJSON *o, const char *key) {
  cJSON *n = cJSON_AddObjectToObject(o, key);
  if (!n) abort();
  return n;
}

void scn_print_topology(const hs_scenario *sc, cJSON *root) {
  const sim_scn *s = (const sim_scn *)sc;
  const sim_topo *t = &s->topo;
  if (t->present) {
    cJSON *o = add_obj(root, "topology");
    add_num(o, "gpus_per_node", t->gpus_per_node);
    add_num(o, "nics_per_node", t->nics_per_node);
    add_num(o, "nodes_per_cell", t->nodes_per_cell);
    cJSON *x = add_obj(o, "intra");
    add_num(x, "bandwidth_gbps", t->intra_bps / GBPS);
    add_num(x, "latency_us", t->intra_alpha_s / US);
    x = add_obj(o, "inter");
    add_num(x, "bandwidth_gbps", t->nic_bps / GBPS);
    add_num(x, "latency_us", t->nic_alpha_s / US);
    x = add_obj(o, "global");
    add_num(x, "taper", t->taper);
    add_num(x, "latency_us", t->global_alpha_s / US);
    if (t->nodes) {
      cJSON *a = cJSON_AddArrayToObject(o, "nodes");
      if (!a) abort();
      for (size_t k = 0; k < t->nnodes; k++) {
        cJSON *v = cJSON_CreateNumber(t->nodes[k]);
        if (!v) abort();
        cJSON_AddItemToArray(a, v);
      }
    } else {
      add_num(o, "first_node", t->first_node);
    }
  }
  const sim_model *m = &s->model;
  if (m->present) {
    cJSON *o = add_obj(root, "model");
    if (!cJSON_AddStringToObject(o, "name", m->name)) abort();
    add_num(o, "params", m->params);
    add_num(o, "root_params", m->root_params);
    add_num(o, "units", m->units);
    add_num(o, "bytes_per_param", m->bytes_per_param);
    add_num(o, "state_bytes_per_param", m->state_bytes_per_param);
    add_num(o, "seq_len", m->seq_len);
    add_num(o, "activation_bytes_per_token", m->act_bytes_per_token);
  }
}

void scn_free_topology(hs_scenario *sc) {
  sim_scn *s = (sim_scn *)sc;
  hs_free(s->topo.nodes);
  hs_free(s->model.name);
}

const sim_topo *sim_scenario_topo(const hs_scenario *sc) { return &((const sim_scn *)sc)->topo; }
const sim_model *sim_scenario_model(const hs_scenario *sc) { return &((const sim_scn *)sc)->model; }

/* --- its blocks: lines of the loader's block table (scenario.c) --- */

const scn_block scn_block_topology = {
    .key = "topology", .step = 120,
    .parse = scn_parse_topology, .print = scn_print_topology, .free = scn_free_topology,
    .type = SCN_OBJECT, .def_text = "none",
    .doc = "a GPU cluster's nodes, NICs and tiers (fsdp); read with \"model\""};

const scn_block scn_block_model = {
    .key = "model", .step = 0,
    .type = SCN_OBJECT, .def_text = "none",
    .doc = "the model's parameters, state and activations (fsdp); read with \"topology\""};
