/* fsdp_cost.h: the cost model of FSDP / HSDP / FL+FSDP / FL+HSDP
 * (fsdp_cost.c) on the scenario's multi-tier topology (scn_topology.h):
 * placement of ranks, the shapes and rates of groups, ring collectives and a
 * step's schedule. Shared by the sharded regimes (regime_fsdp*.c) and the
 * tests; private to the fsdp folder otherwise. */
#ifndef SIM_FSDP_COST_H
#define SIM_FSDP_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scn_topology.h"

/* --- placement --- */
uint32_t sim_topo_node(const sim_topo *t, size_t rank); /* node id */
uint32_t sim_topo_cell(const sim_topo *t, size_t rank);
uint32_t sim_topo_rail(const sim_topo *t, size_t rank); /* rail on its node */

/* A group: ranks first, first + stride, ..., count of them. */
typedef struct sim_group {
  size_t first, stride, count;
} sim_group;

/* How a group sits on the topology. */
typedef struct sim_group_shape {
  uint32_t tier;     /* slowest tier crossed: 0 one node, 1 one cell, 2 several cells */
  uint32_t per_node; /* fewest ranks of the group on one of its nodes */
  size_t nodes, cells;
} sim_group_shape;

void sim_group_shape_of(const sim_topo *t, const sim_group *g, sim_group_shape *out);

/* Bus bandwidth (bit/s) and per-step latency of each group of a family of
 * groups that run the same collective at the same time. Groups that cross
 * nodes put one flow per rank on the fluid network (hs_net): its rail (a
 * shared link only when rails are shared) and, when the group spans cells, its
 * cell's global link (capacity taper * nics * nic_bps * the job's nodes in
 * that cell); max-min rates come from hs_net. A group's bus bandwidth is
 * min(intra_bps if it has > 1 rank per node, per_node * its slowest rank's
 * rate). alpha is the latency of the slowest tier crossed. */
void sim_family_rates(const sim_topo *t, const sim_group *groups, size_t ngroups, double *bus_bps,
                      double *alpha_s);

/* Ring collectives on p ranks, M = full buffer bytes:
 *   AG, RS: (p-1) alpha + (p-1)/p * 8M/bus      AR: twice that. */
double sim_ring_ag(uint32_t p, double bytes, double bus_bps, double alpha_s);
double sim_ring_ar(uint32_t p, double bytes, double bus_bps, double alpha_s);

/* --- a step's schedule --- */
typedef enum sim_bwd_prefetch {
  SIM_BWD_NONE = 0, /* AG(u) in u's pre-backward hook, behind RS(u+1) */
  SIM_BWD_PRE = 1,  /* AG(u-1) as bwd(u) starts (PyTorch's default) */
  SIM_BWD_POST = 2  /* AG(u-1) as bwd(u) ends, ahead of RS(u) */
} sim_bwd_prefetch;

typedef struct sim_step_in {
  size_t nunits;       /* root first, then the layers */
  const double *fwd_s; /* per unit: forward compute (slowest rank) */
  const double *bwd_s; /* per unit: backward compute */
  const double *ag_s;  /* per unit: all-gather (forward and backward alike) */
  const double *rs_s;  /* per unit: reduce-scatter of gradients */
  const double *ar_s;  /* per unit: HSDP replica all-reduce (NULL: none) */
  double opt_s;        /* optimiser on the local shard */
  double agg_s;        /* FL aggregation this step (0: none) */
  double other_s;
  bool fwd_prefetch; /* AG(u+1) overlaps fwd(u) (implicit prefetch) */
  sim_bwd_prefetch bwd_prefetch;
  bool ar_overlap; /* replica AR on its own stream (else after each RS, in line) */
  bool barriers;   /* cuda_sync at phase boundaries */
} sim_step_in;

typedef struct sim_step_out {
  double fwd_s, bwd_s, opt_s, agg_s, other_s, total_s;
  double compute_s; /* forward + backward + optimiser compute of the slowest rank */
} sim_step_out;

void sim_step_schedule(const sim_step_in *in, sim_step_out *out);

#endif
