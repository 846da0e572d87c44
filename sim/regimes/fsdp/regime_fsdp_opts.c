/* regime_fsdp_opts.c: the options of the four sharded regimes (fsdp, hsdp,
 * fl-fsdp, fl-hsdp) and their descriptors; the run lives in regime_fsdp.c.
 *
 * Options, in table order (a later option's default or check may read an
 * earlier one, never the reverse):
 *   shard_size S    hsdp, fl-hsdp: ranks of a shard group (divides N, or G)
 *   group_size G    fl-*: ranks of a federated group (divides N); a list of
 *                   sizes is accepted only when they are all equal (asymmetric
 *                   groups are refused: the reference code leaves them
 *                   unfinished)
 *   local_steps H   fl-*: optimiser steps between parameter averages (>= 1)
 *   final_average   fl-*: also average after the run's last step (default 1)
 *   forward_prefetch, backward_prefetch (pre | post | none; default pre, as
 *   PyTorch's FSDP), replica_overlap
 *   (hsdp, fl-hsdp), phase_barriers: the overlap switches (fsdp_cost.c)
 *   jitter          scale of the profile's tau_cv per GPU and step (0: none)
 *   other_s         seconds per step outside the four phases (data loading)
 *   micro_batch     samples per GPU per step, whatever the scale (weak scaling,
 *                   as the reference runs); 0: the allocation / steps_per_round
 *   steps_to_target optimiser steps to the target loss at this H, an INPUT
 *                   (from measurements or a learning-in-the-loop run); 0: none
 *   steps_per_round optimiser steps per reporting round (FL: default H)
 * The divisibility checks run where the option is read, so `hetsim validate`
 * refuses a bad layout with the option's path. O(1) per option. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "regime_fsdp.h"

/* An integer option written as a number in [lo, hi]. */
static hs_status get_count(sim_opt_ctx *c, const cJSON *n, double lo, double hi, uint32_t *out) {
  char want[64];
  snprintf(want, sizeof want, "expected an integer in [%.0f, %.0f]", lo, hi);
  sim_opt_range r = {.lo = lo, .hi = hi, .want = want, .status = HS_ERANGE};
  double v;
  hs_status st = sim_opt_uint(c, n, &r, &v);
  if (!st) *out = (uint32_t)v;
  return st;
}

static hs_status parse_shard(sim_opt_ctx *c, const cJSON *n, fsdp_opts *o, size_t nranks) {
  if (!n) return sim_opt_missing(c, "shard_size");
  size_t m = sim_opt_key(c, "shard_size");
  hs_status st = get_count(c, n, 1, 1e9, &o->shard);
  if (st) return st;
  if (nranks % o->shard)
    return sim_opt_fail(c, HS_EINVAL, "shard size %u does not divide the %zu GPUs", o->shard,
                        nranks);
  sim_opt_pop(c, m);
  return HS_OK;
}

static hs_status parse_group(sim_opt_ctx *c, const cJSON *n, fsdp_opts *o, size_t nranks) {
  if (!n) return sim_opt_missing(c, "group_size");
  size_t m = sim_opt_key(c, "group_size");
  hs_status st;
  if (cJSON_IsArray(n)) {
    /* A list of group sizes: symmetric lists are the same as one number. */
    size_t k = 0, total = 0;
    uint32_t first = 0;
    if (cJSON_GetArraySize(n) == 0)
      return sim_opt_fail(c, HS_EINVAL, "expected at least one group");
    for (const cJSON *e = n->child; e; e = e->next, k++) {
      size_t mi = sim_opt_index(c, k);
      uint32_t g = 0;
      if ((st = get_count(c, e, 1, 1e9, &g))) return st;
      sim_opt_pop(c, mi);
      if (k == 0) first = g;
      total += g;
      if (g != first)
        return sim_opt_fail(c, HS_EINVAL,
                            "asymmetric federated groups (%u and %u ranks) are not supported: "
                            "the reference code leaves them unfinished",
                            first, g);
    }
    if (total != nranks)
      return sim_opt_fail(c, HS_EINVAL, "the groups hold %zu ranks, the scenario has %zu GPUs",
                          total, nranks);
    o->group = first;
  } else if ((st = get_count(c, n, 1, 1e9, &o->group))) {
    return st;
  }
  if (nranks % o->group)
    return sim_opt_fail(c, HS_EINVAL, "group size %u does not divide the %zu GPUs", o->group,
                        nranks);
  if (o->shard && o->group % o->shard) /* fl-hsdp: shard_size was read before */
    return sim_opt_fail(c, HS_EINVAL, "shard size %u does not divide the group size %u", o->shard,
                        o->group);
  sim_opt_pop(c, m);
  return HS_OK;
}

static hs_status fsdp_opt_parse(sim_opt_ctx *c, const cJSON *n, void *opts,
                                const sim_regime_opt *opt) {
  fsdp_opts *o = opts;
  size_t nranks = sim_opt_scenario(c)->total_devices;
  if (opt->offset == offsetof(fsdp_opts, shard)) return parse_shard(c, n, o, nranks);
  return parse_group(c, n, o, nranks);
}

static void fsdp_opt_print(cJSON *reg, const void *opts, const sim_regime_opt *opt) {
  const fsdp_opts *o = opts;
  double v = opt->offset == offsetof(fsdp_opts, shard) ? o->shard : o->group;
  if (!cJSON_AddNumberToObject(reg, opt->key, v)) abort();
}

/* The CUSTOM options are plain integers: nothing to free (the CHOICE string
 * is freed by the loader). */
static void fsdp_opts_free(void *opts) { (void)opts; }

static const char *fsdp_prepare(const hs_scenario *sc, const void *opts, const sim_regime_opt *o,
                                double *def) {
  (void)sc;
  const fsdp_opts *fo = opts;
  /* fl-*: period was read before (non-FL tables leave it 0). */
  if (o->offset == offsetof(fsdp_opts, steps_per_round) && fo->period) *def = fo->period;
  return NULL;
}

static uint32_t fsdp_policy_steps(const void *opts) {
  return ((const fsdp_opts *)opts)->steps_per_round;
}

static const char *const prefetch[] = {"none", "pre", "post", NULL};

#define OPT_SHARD                                                                             \
  {"shard_size", SIM_OPT_CUSTOM, offsetof(fsdp_opts, shard), 0, 0, 0, 0, NULL, NULL,        \
   "S: ranks per shard group (one replica); divides the GPUs (fl-hsdp: the group size)"}
#define OPT_GROUP                                                                             \
  {"group_size", SIM_OPT_CUSTOM, offsetof(fsdp_opts, group), 0, 0, 0, 0, NULL, NULL,        \
   "G: ranks per federated group (contiguous); divides the GPUs; a list must be symmetric"}
#define OPT_H                                                                                 \
  {"local_steps", SIM_OPT_UINT, offsetof(fsdp_opts, period), 8, 1, 1e9, 0, NULL, NULL,      \
   "H: optimiser steps between averages of the parameter shards across groups"}
#define OPT_FINAL                                                                             \
  {"final_average", SIM_OPT_UINT, offsetof(fsdp_opts, final_average), 1, 0, 1, 0, NULL, NULL, \
   "1: also average after the run's last step (the reference, at the epoch's end)"}
#define OPT_REPLICA                                                                           \
  {"replica_overlap", SIM_OPT_UINT, offsetof(fsdp_opts, replica_overlap), 1, 0, 1, 0, NULL, \
   NULL, "1: the replica all-reduce runs on its own stream; 0: in line after each RS"}
#define OPT_COMMON                                                                            \
  {"forward_prefetch", SIM_OPT_UINT, offsetof(fsdp_opts, fwd_prefetch), 1, 0, 1, 0, NULL,   \
   NULL, "1: forward all-gathers run ahead of compute (implicit prefetch); 0: serialized"},  \
  {"backward_prefetch", SIM_OPT_CHOICE, offsetof(fsdp_opts, bwd_prefetch), 0, 0, 0, 0,      \
   prefetch, "pre",                                                                          \
   "pre (BACKWARD_PRE, PyTorch's default), post (BACKWARD_POST) or none (the EuroPar "       \
   "reference runs: AG after the previous RS)"},                                            \
  {"phase_barriers", SIM_OPT_UINT, offsetof(fsdp_opts, barriers), 1, 0, 1, 0, NULL, NULL,   \
   "1: device sync at phase boundaries (the reference's debug runs)"},                       \
  {"jitter", SIM_OPT_NUM, offsetof(fsdp_opts, jitter), 1, 0, 100, 0, NULL, NULL,            \
   "scale of the profile's tau_cv drawn per GPU and step (0: no noise)"},                    \
  {"other_s", SIM_OPT_NUM, offsetof(fsdp_opts, other_s), 0, 0, 1e6, 0, NULL, NULL,          \
   "seconds per step outside forward, backward, optimiser and aggregation"},                 \
  {"micro_batch", SIM_OPT_UINT, offsetof(fsdp_opts, micro_batch), 0, 0, 1e6, 0, NULL, NULL, \
   "samples per GPU per step (0: the policy's allocation / steps_per_round)"},             \
  {"steps_to_target", SIM_OPT_NUM, offsetof(fsdp_opts, steps_to_target), 0, 0, 1e15, 0,     \
   NULL, NULL, "INPUT: optimiser steps to the target loss at this H (0: not reported)"},     \
  {"steps_per_round", SIM_OPT_UINT, offsetof(fsdp_opts, steps_per_round), 8, 1, 1e7, 0,     \
   NULL, NULL, "optimiser steps per reporting round (fl-*: default H)"}

static const sim_regime_opt fsdp_table[] = {OPT_COMMON};
static const sim_regime_opt hsdp_table[] = {OPT_SHARD, OPT_REPLICA, OPT_COMMON};
static const sim_regime_opt flfsdp_table[] = {OPT_GROUP, OPT_H, OPT_FINAL, OPT_COMMON};
static const sim_regime_opt flhsdp_table[] = {OPT_SHARD, OPT_GROUP, OPT_H, OPT_FINAL,
                                              OPT_REPLICA, OPT_COMMON};

#define FSDP_DESCRIPTOR(sym, nm, sum, table)                                                  \
  const sim_regime sym = {                                                                    \
      .name = nm,                                                                             \
      .summary = sum,                                                                         \
      .opts = table,                                                                          \
      .nopts = sizeof table / sizeof table[0],                                                \
      .opts_size = sizeof(fsdp_opts),                                                         \
      .opt_prepare = fsdp_prepare,                                                            \
      .opt_parse = fsdp_opt_parse,                                                            \
      .opt_print = fsdp_opt_print,                                                            \
      .opts_free = fsdp_opts_free,                                                            \
      .policy_steps = fsdp_policy_steps,                                                      \
      .caps_refused = HS_POLICY_CAP_SELECTS | HS_POLICY_CAP_STEP_LEVEL,                       \
      .can = SIM_CAN_DDP | SIM_CAN_AVAIL | SIM_CAN_SHARED,                                    \
      .dev_bytes = sizeof(double), /* the run's scratch */                                    \
      .setup = fsdp_setup,                                                                    \
      .start_round = fsdp_start_round,                                                        \
      .teardown = fsdp_teardown,                                                              \
      .telemetry = fsdp_telemetry,                                                            \
      .summary_fields = fsdp_summary_fields,                                                  \
      .metric_group = "fsdp",                                                                 \
  }

FSDP_DESCRIPTOR(sim_regime_fsdp, "fsdp", "fully sharded data parallel over all GPUs", fsdp_table);
FSDP_DESCRIPTOR(sim_regime_hsdp, "hsdp", "sharded in groups of S, replicated across", hsdp_table);
FSDP_DESCRIPTOR(sim_regime_fl_fsdp, "fl-fsdp",
                "federated groups of G running FSDP, shards averaged every H steps",
                flfsdp_table);
FSDP_DESCRIPTOR(sim_regime_fl_hsdp, "fl-hsdp",
                "federated groups of G running HSDP (S), shards averaged every H steps",
                flhsdp_table);

fsdp_kind fsdp_kind_of(const sim_regime *rg) {
  return rg == &sim_regime_hsdp      ? FSDP_HSDP
         : rg == &sim_regime_fl_fsdp ? FSDP_FL_FSDP
         : rg == &sim_regime_fl_hsdp ? FSDP_FL_HSDP
                                     : FSDP_FSDP;
}
