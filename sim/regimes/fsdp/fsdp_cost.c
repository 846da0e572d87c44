/* fsdp_cost.c: the cost model of sharded data parallelism on a multi-tier
 * GPU topology (scn_topology.h, fsdp_cost.h): placement of ranks, the tier a group crosses,
 * the bus bandwidth of concurrent groups (max-min through hs_net), ring
 * collective times and the schedule of one training step.
 *
 * Bus bandwidth of a group (after the spec's three-tier model): ranks on one
 * node ring over the node fabric (intra_bps). A group that spans nodes runs
 * per_node parallel rings over as many NIC rails (NCCL channels), so its bus
 * bandwidth is per_node times the rate one rank's rail flow gets, capped by
 * the node fabric when per_node > 1. Every rank of such a group puts one flow
 * on hs_net: capped at one rail (nic_bps); crossing its rail as a shared link
 * when rails are shared (nics_per_node < gpus_per_node); crossing its cell's
 * global link when the group spans cells. A cell's global link carries
 * taper * nics * nic_bps per job node in that cell (the job's share of the
 * global tier; other jobs are not modelled). Max-min fairness is hs_net's;
 * with one group per rail and every rank crossing, a rank gets
 * min(nic_bps, taper * nic_bps * nics / gpus), which is the spec's closed
 * form. Concurrent groups of one family are assumed to run together (the
 * worst case: FL groups drift apart between aggregations).
 *
 * Step schedule (sim_step_schedule): one compute stream, one collective
 * stream (NCCL ops in issue order) and, for HSDP, a replica stream.
 *   forward:  AG(u) in order; with fwd_prefetch they run back to back
 *             (limit_all_gathers off) and fwd(u) waits for AG(u) and fwd(u-1);
 *             without, AG(u) starts after fwd(u-1).
 *   backward: units in reverse. NONE: AG(u) is issued in u's pre-backward
 *             hook (after bwd(u+1)) and queues behind RS(u+1): the chain
 *             bwd(u+1) -> RS(u+1) -> AG(u) -> bwd(u). PRE (PyTorch's
 *             default): AG(u) is issued when bwd(u+1) starts, ahead of
 *             RS(u+1), so it hides under bwd(u+1). POST: AG(u) is issued
 *             when bwd(u+1) ends, still ahead of RS(u+1) (RS(u+1) then
 *             overlaps bwd(u)).
 *             AR(u) (replica all-reduce) follows RS(u) on its own stream when
 *             ar_overlap, else in line on the collective stream.
 *   barriers: every phase ends when all its streams are done (cuda_sync);
 *             without barriers the backward's collective tail overlaps the
 *             optimiser step.
 * Cost O(units) per step; family rates O(ranks log) once per run.
 * Rejected: one hs_net flow per collective per step (16k ranks x 33 units x
 * 3 collectives per step is ~10^6 flows a step for numbers the closed form
 * gives exactly when the family's groups are symmetric). */
#include <math.h>
#include <stdlib.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "sim/hs_collective.h"
#include "sim/hs_engine.h"
#include "sim/hs_net.h"
#include "fsdp_cost.h"

uint32_t sim_topo_node(const sim_topo *t, size_t rank) {
  size_t slot = rank / t->gpus_per_node;
  return t->nodes ? t->nodes[slot] : t->first_node + (uint32_t)slot;
}

uint32_t sim_topo_cell(const sim_topo *t, size_t rank) {
  return sim_topo_node(t, rank) / t->nodes_per_cell;
}

uint32_t sim_topo_rail(const sim_topo *t, size_t rank) {
  return (uint32_t)(rank % t->gpus_per_node) % t->nics_per_node;
}

void sim_group_shape_of(const sim_topo *t, const sim_group *g, sim_group_shape *out) {
  /* Ranks of a group visit nodes in increasing slot order (first + k*stride),
   * so runs of equal nodes are contiguous in that order. */
  sim_group_shape s = {0, UINT32_MAX, 0, 0};
  uint32_t prev_node = UINT32_MAX, run = 0, cell0 = 0;
  bool many_cells = false;
  for (size_t k = 0; k < g->count; k++) {
    size_t r = g->first + k * g->stride;
    uint32_t node = sim_topo_node(t, r), cell = node / t->nodes_per_cell;
    if (k == 0) cell0 = cell;
    if (cell != cell0) many_cells = true;
    if (node != prev_node) {
      if (k > 0 && run < s.per_node) s.per_node = run;
      s.nodes++;
      run = 0;
      prev_node = node;
    }
    run++;
  }
  if (run < s.per_node) s.per_node = run;
  if (g->count == 0) s.per_node = 0;
  s.cells = many_cells ? 2 : 1; /* at least two: enough for the tier */
  s.tier = s.nodes <= 1 ? 0 : many_cells ? 2 : 1;
  *out = s;
}

/* The registry's ring formulas (hs_collective.h), with the bus bandwidth of
 * the slowest tier as beta. */
static double coll_time(const char *kind, uint32_t p, double bytes, double bus_bps,
                        double alpha_s) {
  const hs_collective_type *t = hs_collective_find(kind);
  HS_ASSERT(t, "a registered collective");
  hs_coll_params c = {.bytes = bytes, .ranks = p, .alpha_s = alpha_s, .beta_bps = bus_bps};
  return t->time_s(&c);
}

double sim_ring_ag(uint32_t p, double bytes, double bus_bps, double alpha_s) {
  return coll_time("allgather", p, bytes, bus_bps, alpha_s);
}

double sim_ring_ar(uint32_t p, double bytes, double bus_bps, double alpha_s) {
  return coll_time("ring", p, bytes, bus_bps, alpha_s);
}

/* Links of the fluid oracle: per cell (global tier) and per (node, rail)
 * when rails are shared; created on first use, found through small maps. */
typedef struct oracle {
  hs_net *net;
  const sim_topo *t;
  int *cell_link; /* per cell index seen, or -1 */
  uint32_t *cell_id;
  double *cell_nodes; /* job nodes in that cell */
  size_t ncells;
} oracle;

static size_t cell_slot(oracle *o, uint32_t cell) {
  for (size_t k = 0; k < o->ncells; k++)
    if (o->cell_id[k] == cell) return k;
  return SIZE_MAX;
}

void sim_family_rates(const sim_topo *t, const sim_group *groups, size_t ngroups, double *bus_bps,
                      double *alpha_s) {
  size_t nranks = 0;
  for (size_t k = 0; k < ngroups; k++) nranks += groups[k].count;
  sim_group_shape *shape = hs_calloc(ngroups ? ngroups : 1, sizeof *shape);
  bool any_cross = false;
  for (size_t k = 0; k < ngroups; k++) {
    sim_group_shape_of(t, &groups[k], &shape[k]);
    any_cross |= shape[k].tier >= 1;
  }
  double *rank_rate = NULL;
  if (any_cross) {
    /* The job's nodes per cell: every rank of the family, one count per node
     * slot (a family covers every rank once in the regimes here; a partial
     * family counts the nodes it touches). */
    hs_engine *eng = hs_engine_create(16);
    oracle o = {hs_net_create(eng), t, NULL, NULL, NULL, 0};
    size_t cap = 0;
    uint32_t last_node = UINT32_MAX;
    size_t maxr = 0;
    for (size_t k = 0; k < ngroups; k++) {
      size_t hi = groups[k].first + (groups[k].count ? groups[k].count - 1 : 0) * groups[k].stride;
      if (hi + 1 > maxr) maxr = hi + 1;
    }
    for (size_t r = 0; r < maxr; r += t->gpus_per_node) {
      uint32_t node = sim_topo_node(t, r), cell = node / t->nodes_per_cell;
      if (node == last_node) continue;
      last_node = node;
      size_t s = cell_slot(&o, cell);
      if (s == SIZE_MAX) {
        if (o.ncells == cap) {
          cap = cap ? 2 * cap : 8;
          o.cell_id = hs_realloc(o.cell_id, cap * sizeof *o.cell_id);
          o.cell_nodes = hs_realloc(o.cell_nodes, cap * sizeof *o.cell_nodes);
        }
        s = o.ncells++;
        o.cell_id[s] = cell;
        o.cell_nodes[s] = 0;
      }
      o.cell_nodes[s] += 1;
    }
    o.cell_link = hs_calloc(o.ncells ? o.ncells : 1, sizeof *o.cell_link);
    for (size_t s = 0; s < o.ncells; s++) o.cell_link[s] = -1;
    bool shared_rails = t->nics_per_node < t->gpus_per_node;
    /* Shared rails: one link per (node slot, rail), indexed slot * nics + rail. */
    int *rail_link = NULL;
    size_t nslots = (maxr + t->gpus_per_node - 1) / t->gpus_per_node;
    if (shared_rails) {
      rail_link = hs_calloc(nslots * t->nics_per_node, sizeof *rail_link);
      for (size_t s = 0; s < nslots * t->nics_per_node; s++) rail_link[s] = -1;
    }
    rank_rate = hs_calloc(nranks, sizeof *rank_rate);
    hs_flow_id *flow = hs_calloc(nranks, sizeof *flow);
    size_t at = 0;
    for (size_t k = 0; k < ngroups; k++) {
      for (size_t j = 0; j < groups[k].count; j++, at++) {
        if (shape[k].tier == 0) continue;
        size_t r = groups[k].first + j * groups[k].stride;
        int links[2];
        size_t nl = 0;
        if (shared_rails) {
          size_t idx = (r / t->gpus_per_node) * t->nics_per_node + sim_topo_rail(t, r);
          if (rail_link[idx] < 0) rail_link[idx] = hs_net_add_link(o.net, NULL, t->nic_bps, 0);
          links[nl++] = rail_link[idx];
        }
        if (shape[k].tier == 2) {
          size_t s = cell_slot(&o, sim_topo_cell(t, r));
          if (o.cell_link[s] < 0)
            o.cell_link[s] = hs_net_add_link(
                o.net, NULL, t->taper * t->nics_per_node * t->nic_bps * o.cell_nodes[s], 0);
          links[nl++] = o.cell_link[s];
        }
        /* A flow that never ends inside the oracle's horizon (time 0). */
        flow[at] = hs_net_transfer(o.net, 1e30, t->nic_bps, 0, links, nl, NULL, NULL, 0);
      }
    }
    hs_engine_run_until(eng, 0); /* admissions at time 0: the max-min rates */
    for (size_t a = 0; a < nranks; a++)
      rank_rate[a] = flow[a] ? hs_net_flow_rate(o.net, flow[a]) : INFINITY;
    hs_free(flow);
    hs_free(rail_link);
    hs_free(o.cell_link);
    hs_free(o.cell_id);
    hs_free(o.cell_nodes);
    hs_net_destroy(o.net);
    hs_engine_destroy(eng);
  }
  size_t at = 0;
  for (size_t k = 0; k < ngroups; k++) {
    const sim_group_shape *s = &shape[k];
    double bus = INFINITY;
    if (s->tier == 0 || s->per_node > 1) bus = t->intra_bps;
    if (s->tier >= 1) {
      double slow = INFINITY;
      for (size_t j = 0; j < groups[k].count; j++)
        if (rank_rate[at + j] < slow) slow = rank_rate[at + j];
      double b = (double)s->per_node * slow;
      if (b < bus) bus = b;
    }
    at += groups[k].count;
    bus_bps[k] = bus;
    alpha_s[k] = s->tier == 0   ? t->intra_alpha_s
                 : s->tier == 1 ? t->nic_alpha_s
                                : t->global_alpha_s;
  }
  hs_free(rank_rate);
  hs_free(shape);
}

static double max2(double a, double b) { return a > b ? a : b; }

void sim_step_schedule(const sim_step_in *in, sim_step_out *out) {
  size_t n = in->nunits;
  /* forward */
  double comp = 0, comm = 0, compute = 0;
  for (size_t u = 0; u < n; u++) {
    double issue = in->fwd_prefetch ? 0 : comp;
    double ag_end = max2(issue, comm) + in->ag_s[u];
    comm = ag_end;
    comp = max2(comp, ag_end) + in->fwd_s[u];
    compute += in->fwd_s[u];
  }
  double fwd = max2(comp, comm);
  /* backward, from the last unit down */
  double t0 = in->barriers ? fwd : comp;
  comp = t0;
  comm = in->barriers ? fwd : comm;
  double ar = comm;
  double ag_end = 0;
  for (size_t k = 0; k < n; k++) {
    size_t u = n - 1 - k;
    if (k == 0 || in->bwd_prefetch == SIM_BWD_NONE) {
      ag_end = max2(comp, comm) + in->ag_s[u];
      comm = ag_end;
    }
    double start = max2(comp, ag_end);
    if (in->bwd_prefetch == SIM_BWD_PRE && u > 0) {
      /* AG(u-1) issued as bwd(u) starts, ahead of RS(u). */
      ag_end = max2(start, comm) + in->ag_s[u - 1];
      comm = ag_end;
    }
    comp = start + in->bwd_s[u];
    compute += in->bwd_s[u];
    if (in->bwd_prefetch == SIM_BWD_POST && u > 0) {
      /* AG(u-1) issued in u's post-backward hook, ahead of RS(u). */
      ag_end = max2(comp, comm) + in->ag_s[u - 1];
      comm = ag_end;
    }
    double rs_end = max2(comp, comm) + in->rs_s[u];
    comm = rs_end;
    if (in->ar_s) {
      if (in->ar_overlap) {
        ar = max2(ar, rs_end) + in->ar_s[u];
      } else {
        comm += in->ar_s[u];
        ar = comm;
      }
    }
  }
  double bwd_comm = max2(comm, ar);
  out->fwd_s = fwd;
  out->opt_s = in->opt_s;
  compute += in->opt_s;
  if (in->barriers) {
    double bwd_end = max2(comp, bwd_comm);
    out->bwd_s = bwd_end - fwd;
  } else {
    /* The collective tail overlaps the optimiser: the optimiser phase ends
     * when both are done. */
    out->bwd_s = comp - fwd; /* forward ends with its compute: no AG outlives it */
    double tail = bwd_comm - comp;
    if (tail > in->opt_s) out->opt_s = tail;
  }
  out->agg_s = in->agg_s;
  out->other_s = in->other_s;
  out->total_s = out->fwd_s + out->bwd_s + out->opt_s + out->agg_s + out->other_s;
  out->compute_s = compute;
}
