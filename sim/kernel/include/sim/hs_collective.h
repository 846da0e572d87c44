/* [sim/kernel/include/sim -> hetsim::sim; not installed]
 * hs_collective.h: alpha-beta cost models of collective operations, as
 * descriptors in one registry looked up by the name a scenario uses.
 *
 * Symbols and units: alpha = per-message latency (s), beta = bandwidth (bit/s),
 * n = message bytes (8n bits), p = ranks. A collective on p = 1 rank costs 0,
 * except "star", whose p workers exchange with a separate server.
 *
 *   ring          all-reduce    2(p-1) alpha + 2 (p-1)/p * 8n/beta
 *                 (reduce-scatter then all-gather around a ring)
 *   tree          all-reduce    2 ceil(log2 p) (alpha + 8n/beta)
 *                 (binomial-tree reduce to a root, then binomial-tree broadcast;
 *                 every step moves the whole message, no pipelining, the
 *                 reduction's arithmetic is free)
 *   hierarchical  all-reduce    with g = ranks_per_node, m = p/g nodes:
 *                 intra-node reduce-scatter   (g-1) alpha + (g-1)/g * 8n/beta
 *               + inter-node ring all-reduce of n/g bytes between the m nodes
 *                                2(m-1) inter_alpha + 2 (m-1)/m * 8(n/g)/inter_beta
 *               + intra-node all-gather       (g-1) alpha + (g-1)/g * 8n/beta
 *                 (alpha, beta: the intra-node tier. The g inter-node rings, one
 *                 per local rank, run in parallel; inter_beta is the bandwidth
 *                 EACH of them gets: if they share one NIC of B bit/s, pass B/g)
 *   allgather     (p-1) alpha + (p-1)/p * 8n/beta      (ring; n = total bytes
 *   reducescatter (p-1) alpha + (p-1)/p * 8n/beta       gathered / reduced)
 *   star          parameter server: every worker sends n bytes up to the server
 *                 and then receives n bytes down, through the server's link
 *                 (server_beta) and each through its own access link (beta):
 *                 2 (alpha + max(p * 8n/server_beta, 8n/beta))
 *                 This is exactly what the max-min fluid model of hs_net gives
 *                 for p equal flows starting together with per-flow caps: the
 *                 last flow ends at max(p*8n/server_beta, 8n/slowest cap).
 *                 alpha is the one-way worker-server path latency. p = 1 is a
 *                 worker and a server: it costs 2 (alpha + 8n/min(beta, server_beta)).
 *
 * Heterogeneous participants: ring, tree, allgather, reducescatter and the star
 * workers are bounded by the slowest participant, so pass the SMALLEST
 * bandwidth and the LARGEST latency among the ranks (hs_collective_slowest does
 * that). A ring step ends when its slowest hop does; this is an upper bound for
 * a tree whose slow ranks are leaves. */
#ifndef HS_COLLECTIVE_H
#define HS_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_status.h"

typedef struct hs_coll_params {
  double bytes;            /* n >= 0, bytes */
  uint32_t ranks;          /* p >= 1 (star: workers, the server not counted) */
  double alpha_s;          /* >= 0; hierarchical: intra-node tier; star: worker-server path */
  double beta_bps;         /* > 0;  hierarchical: intra-node tier; star: slowest worker access link */
  uint32_t ranks_per_node; /* hierarchical: g >= 1, divides p (other kinds ignore it) */
  double inter_alpha_s;    /* hierarchical: inter-node tier latency, >= 0 */
  double inter_beta_bps;   /* hierarchical: inter-node tier bandwidth, > 0 */
  double server_beta_bps;  /* star: the server's link bandwidth, > 0 */
} hs_coll_params;

typedef struct hs_collective_type {
  const char *name;    /* as a scenario writes it */
  const char *formula; /* the closed form, for help texts */
  /* Time in seconds; params must have passed hs_collective_check (not re-checked). */
  double (*time_s)(const hs_coll_params *params);
  /* 1 when the kind reads the hierarchical / star fields. */
  int uses_inter_tier;
  int uses_server;
} hs_collective_type;

/* The registry: ring, tree, hierarchical, allgather, reducescatter, star. */
const hs_collective_type *hs_collective_find(const char *name); /* NULL if unknown */
size_t hs_collective_count(void);
const hs_collective_type *hs_collective_at(size_t i); /* i < hs_collective_count() */

/* Validate params for this kind; HS_EINVAL (or HS_ERANGE) with a message
 * naming the field, e.g. "beta_bps: must be > 0 (got -1)". */
hs_status hs_collective_check(const hs_collective_type *type, const hs_coll_params *params,
                              hs_error *err);

/* check + time_s: HS_OK and *time_s, or the check's status. */
hs_status hs_collective_time(const hs_collective_type *type, const hs_coll_params *params,
                             double *time_s, hs_error *err);

/* The slowest participant among n: *alpha_s = max latency, *beta_bps = min bandwidth. */
void hs_collective_slowest(const double *alpha_s, const double *beta_bps, size_t n,
                           double *alpha_out_s, double *beta_out_bps);

#endif
