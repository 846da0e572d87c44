/* scn_topology.h (sim/scenario/iface): the scenario's "topology" and "model"
 * blocks (scenario_topology.c): the multi-tier GPU topology and the model
 * description that the sharded regimes read (their cost model:
 * sim/regimes/fsdp/fsdp_cost.h). Private to hetsim::sim.
 *
 * Tiers: 0 intra-node fabric (NVLink class), 1 inter-node rails inside a
 * cell (one NIC rail per GPU, or GPUs sharing nics_per_node rails), 2 the
 * tapered global tier between cells. A group of ranks uses the slowest tier
 * it crosses (see fsdp_cost.c for the bus-bandwidth rule).
 *
 * Units: bytes, seconds, bit/s (as hs_net and hs_collective). The scenario
 * writes Gbit/s and microseconds. */
#ifndef SIM_SCN_TOPOLOGY_H
#define SIM_SCN_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/hs_scenario.h"

typedef struct sim_topo {
  bool present;
  uint32_t gpus_per_node;          /* ranks per node */
  uint32_t nics_per_node;          /* rails per node; local rank l uses rail l % nics */
  uint32_t nodes_per_cell;         /* nodes per cell (global tier boundary) */
  double intra_bps, intra_alpha_s; /* tier 0: ring bus bandwidth per GPU, latency per step */
  double nic_bps, nic_alpha_s;     /* tier 1: one rail */
  double taper, global_alpha_s;    /* tier 2: per-node inter-cell bw = taper * nics * nic_bps */
  uint32_t first_node;             /* contiguous placement from this node id */
  uint32_t *nodes;                 /* or an explicit node list (node slot -> node id) */
  size_t nnodes;
} sim_topo;

typedef struct sim_model {
  bool present;
  char *name;
  double params;                /* P, parameters */
  double root_params;           /* of P, in the root FSDP unit (embeddings, head) */
  uint32_t units;               /* wrapped layers (FSDP units besides the root) */
  double bytes_per_param;       /* b: collective element size (bf16: 2) */
  double state_bytes_per_param; /* persistent bytes per sharded param (params+grads+Adam) */
  double seq_len;               /* tokens per sample */
  double act_bytes_per_token;   /* activation bytes per token of the micro-batch */
} sim_model;

/* The scenario's topology and model (never NULL; .present false when the
 * scenario has no such block). */
const sim_topo *sim_scenario_topo(const hs_scenario *sc);
const sim_model *sim_scenario_model(const hs_scenario *sc);

/* --- parsing (scenario_topology.c, hooked into the scenario pipeline) --- */
typedef struct sim_opt_ctx sim_opt_ctx;
typedef struct cJSON cJSON;
hs_status scn_parse_topology(sim_opt_ctx *c, const cJSON *root);
void scn_print_topology(const hs_scenario *sc, cJSON *root);
void scn_free_topology(hs_scenario *sc);

#endif
