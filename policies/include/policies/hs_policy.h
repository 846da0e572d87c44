/* [policies/include/policies -> hetsim::policies; installed: include/hetsim/policies/, -lhetsim-policies]
 * hs_policy.h: the controller library. Telemetry in, allocation out.
 *
 * This is the code a training script on a real board links (libc + libm only;
 * installed as libhetsim-policies, `pkg-config hetsim-policies`).
 * The simulator drives it through exactly this API; `hetsim replay` and the
 * stdin/stdout bridge (policies/examples) drive it from recorded or live
 * telemetry.
 *
 * Lifecycle:
 *   hs_policy_config cfg;
 *   hs_policy_config_init(&cfg, "balanced", &err);        // defaults for a kind
 *   hs_policy_config_set(&cfg, "deadband", "0.02", &err);  // options by name
 *   hs_controller *c = hs_controller_create(&cfg, n, NULL, budget, &err);
 *   for each round:
 *     run hs_controller_allocation(c)[i] samples on participant i,
 *     hs_controller_update(c, telemetry, n, &err);
 *   hs_controller_destroy(c);
 *
 * THE RULES (every policy)
 * - Before any telemetry the allocation is the equal split. With groups, the
 *   budget is first split across groups in proportion to group size (largest
 *   remainder, ties to the smaller group id), then each group's budget is
 *   conserved forever: samples never move between groups (HFL-DDP silos).
 * - Integers: every split is exact largest-remainder apportionment. The budget
 *   (of each group) is conserved exactly; ties between equal remainders go to
 *   the lower participant index. Nothing depends on pointers or the clock.
 * - Telemetry: time_s and energy_j finite and >= 0, samples >= 0, and
 *   time_s > 0 whenever samples > 0. A participant that ran 0 samples (oort's
 *   unselected) reports 0/0/0 and keeps its last estimates. Any bad record makes
 *   hs_controller_update return an error naming the participant and the field,
 *   and leaves the controller exactly as it was.
 *
 * THE ADAPTIVE CONTROLLER (adaptive, time-only, low-energy, balanced, energy-only)
 * - Per-sample costs tau_i = t_i/n_i, eps_i = e_i/n_i, smoothed with
 *   x <- ema*x + (1-ema)*obs; the first observation is taken as is.
 * - c_i = w_t*tau_i/median(tau) + w_e*eps_i/median(eps), w_t = 1 - w_e; the
 *   medians run over the participants of i's group that have an estimate (the
 *   mean of the two middle values for an even count, found by selection). A
 *   median of 0 (e.g. no energy meter) drops its term. A participant without
 *   any estimate yet gets the neutral cost c = 1. c is clamped to >= 1e-12.
 * - Shares proportional to 1/c_i with a per-participant floor min_samples
 *   (water-filling: floored participants get exactly min_samples and the rest
 *   is shared in proportion among the others), then largest remainder.
 * - Deadband: let d = max over i with n_old_i > 0 of |n_new_i - n_old_i| /
 *   n_old_i (infinite if some n_old_i = 0 would get samples). If d <= deadband
 *   the current allocation stays and hs_controller_reallocated() is false.
 *   The smoothed estimates are updated either way.
 * - Presets fix w_e: time-only 0, low-energy 0.25, balanced 0.5, energy-only 1.
 *
 * BASELINES
 * - equal: the equal split, always (telemetry is validated and ignored).
 * - static: after the first update that carries a sample, the time-only split
 *   of that round's measurements (ema and deadband do not apply), frozen.
 * - oort: Oort-style selection (FedScale); see the oort_* keys and
 *   policies/src/oort.c. Each update selects K participants; the budget is split
 *   equally over them (floor min_samples) and the others get 0. Randomness comes
 *   from hs_rng streams keyed by (seed, round, HS_RNG_POLICY). No groups.
 * - ema-batch: DDP step-level throughput batch sizing; see hs_controller_step_*.
 *
 * ROUND-TIME (whole rounds, communication included)
 * - Predicts participant i's round as c_i + a_i*n_i: a_i its smoothed
 *   per-sample time (tau_i above, the same estimate), c_i its smoothed
 *   communication time (hs_controller_set_comm; the same EMA, first
 *   observation as is; observed only for participants that trained, like
 *   the costs, and kept through an update without set_comm). Chooses the split that ends every round of a group
 *   together: the T with sum_i max(floor, (T - c_i)/a_i) = the group budget,
 *   solved exactly over the breakpoints c_i + a_i*floor; then largest
 *   remainder. A participant without a time estimate takes the group's
 *   median a (time-only's neutral cost); one without a communication
 *   estimate takes c = 0. Keys ema, deadband, min_samples as time-only.
 * - While no participant of any group has a communication estimate above 0
 *   it is time-only exactly: the same code, the same allocations.
 *
 * Nothing here reads the wall clock, the environment or global state: two
 * controllers fed the same telemetry produce the same allocations.
 *
 * Each policy is a descriptor in one file of policies/src (name, summary,
 * capabilities, its keys with type, default, range and doc, and its hooks),
 * listed by one line in policies/src/registry.def; pol_policy.h is the
 * contract a policy file is written against. Nothing in this header changes
 * when a policy is added (see THE ABI RULE below). */
#ifndef HS_POLICY_H
#define HS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_status.h"

#define HS_POLICY_NAME_MAX 32

/* Everything a policy can be configured with. Defaults come from
 * hs_policy_config_init; keys are set by name with hs_policy_config_set so that
 * scenario files, --set options and telemetry replay share one vocabulary.
 *
 * THE ABI RULE. This struct's layout does not change when a policy is added or
 * gains a key: a trainer linked against one build of the library keeps working
 * with the next. It holds the kind, the two keys every kind accepts (seed and
 * steps_per_round, which the simulator writes directly), and a fixed store of
 * HS_POLICY_VALUES_MAX values for the kind's own keys. Which key lives in which
 * slot belongs to the policy (its key table in policies/src): value[j] holds
 * the j-th key hs_policy_config_foreach visits (the kind's own keys come first,
 * seed and steps_per_round last), and the union member is the key's type
 * (real: a double; integer keys: uint). Read values by name with
 * hs_policy_config_get / hs_policy_config_get_uint; write them with
 * hs_policy_config_set. A policy with more own keys than HS_POLICY_VALUES_MAX
 * does not build (a static assertion in its file): raising the limit is the
 * ABI change, and is the one thing that needs every trainer relinked.
 *
 * Which keys a kind has, with their defaults: hs_policy_config_foreach on a
 * fresh config (`hetsim replay --policies` prints them all); what each means:
 * hs_policy_key_doc. */
#define HS_POLICY_VALUES_MAX 16

typedef union hs_policy_value {
  double real;
  uint64_t uint;
} hs_policy_value;

typedef struct hs_policy_config {
  char kind[HS_POLICY_NAME_MAX]; /* a registered name (hs_policy_name): equal, static,
                                    adaptive, time-only, ..., oort, ema-batch */
  uint64_t seed;                 /* for randomised policies (accepted by every kind) */
  uint32_t steps_per_round;      /* DDP optimiser steps S per round, >= 1 (1); accepted by
                                    every kind, set by the simulator from the regime */
  uint32_t reserved;             /* 0; keeps value[] 8-byte aligned on 32-bit boards */
  hs_policy_value value[HS_POLICY_VALUES_MAX]; /* the kind's own keys (see above); slots
                                    past its last key are 0 */
} hs_policy_config;

/* --- policy names ----------------------------------------------------------- */

/* Number of policies and the i-th name / one-line summary (static strings), in
 * registry order; NULL when i is out of range. */
size_t hs_policy_count(void);
const char *hs_policy_name(size_t i);
const char *hs_policy_summary(size_t i);

/* What a policy needs from the regime that runs it. Regimes ask these bits and
 * never test a policy by name.
 *   HS_POLICY_CAP_SELECTS:    may give a participant 0 samples in a round
 *                             (participant selection, e.g. oort).
 *   HS_POLICY_CAP_STEP_LEVEL: sizes per-step batches through
 *                             hs_controller_step_* (needs optimiser steps: DDP).
 *   HS_POLICY_CAP_GROUPS:     accepts participant groups (HFL-DDP silos).
 * hs_policy_caps returns 0 for an unknown kind. */
enum {
  HS_POLICY_CAP_SELECTS = 1u << 0,
  HS_POLICY_CAP_STEP_LEVEL = 1u << 1,
  HS_POLICY_CAP_GROUPS = 1u << 2
};
unsigned hs_policy_caps(const char *kind);
/* Bytes the policy's own state takes per participant (0 for an unknown kind):
 * for a run's memory estimate. */
size_t hs_policy_bytes_per_participant(const char *kind);

/* --- configuration ---------------------------------------------------------- */

/* Defaults for `kind`; HS_ENOENT (message lists the names) for an unknown one.
 * cfg is fully written either way (zeroed on error). */
hs_status hs_policy_config_init(hs_policy_config *cfg, const char *kind, hs_error *err);

/* Set one option by key from its text value (a JSON number or a bare number).
 * Errors (HS_EKEY, HS_EINVAL, HS_ERANGE) start with the key: "w_e: ...".
 * Rejected: unknown keys; keys that do not apply to cfg->kind (e.g. oort_k on
 * equal); on a preset, a w_e other than the preset's own (use kind adaptive);
 * values that do not parse or lie outside the documented range. On error cfg
 * is unchanged. "kind" itself is not a key here: call hs_policy_config_init. */
hs_status hs_policy_config_set(hs_policy_config *cfg, const char *key, const char *value,
                               hs_error *err);

/* Calls fn(key, value_text, userdata) for every key that applies to cfg->kind,
 * in a fixed order, with the current value as text that hs_policy_config_set
 * accepts back (doubles printed with %.17g, trimmed). value_text is valid only
 * during the call. Returns the number of keys visited. */
typedef void (*hs_policy_key_fn)(const char *key, const char *value_text, void *userdata);
size_t hs_policy_config_foreach(const hs_policy_config *cfg, hs_policy_key_fn fn,
                                void *userdata);

/* Whole-config check (ranges, preset w_e, known kind); hs_controller_create
 * calls it. */
hs_status hs_policy_config_check(const hs_policy_config *cfg, hs_error *err);

/* The current value of `key` for cfg->kind. hs_policy_config_get reads any key
 * as a double (integer keys above 2^53 round); hs_policy_config_get_uint reads
 * integer keys exactly and refuses real ones (HS_ETYPE). Unknown keys and keys
 * that do not apply to the kind are HS_EKEY with the same message as
 * hs_policy_config_set. *value is written only on success. */
hs_status hs_policy_config_get(const hs_policy_config *cfg, const char *key, double *value,
                               hs_error *err);
hs_status hs_policy_config_get_uint(const hs_policy_config *cfg, const char *key,
                                    uint64_t *value, hs_error *err);

/* One line documenting `key` of policy `kind` (a static string), NULL when
 * the key does not apply to the kind or the kind is unknown. */
const char *hs_policy_key_doc(const char *kind, const char *key);

/* The per-participant floor of cfg->kind: its min_samples, or 1 for a kind
 * without that key (equal and ema-batch give every participant at least one
 * sample whenever the budget allows); 0 for an unknown kind. */
uint64_t hs_policy_config_min_samples(const hs_policy_config *cfg);

/* --- the controller --------------------------------------------------------- */

/* One participant's report for one round: what a meter on that board sees. */
typedef struct hs_telemetry {
  double time_s;   /* training time of the round */
  double energy_j; /* training energy of the round */
  int64_t samples; /* samples trained in the round */
} hs_telemetry;

typedef struct hs_controller hs_controller;

/* The largest budget a controller splits: 2^53 samples per round (shares are
 * computed in doubles, which hold every integer up to 2^53 exactly). */
#define HS_POLICY_BUDGET_MAX ((uint64_t)1 << 53)

/* n >= 1 participants; groups is NULL (one group) or n group ids (any uint32
 * values; equal ids form a group); budget is the samples per round for the
 * whole population, at most HS_POLICY_BUDGET_MAX. Errors: bad config, n = 0,
 * a budget above HS_POLICY_BUDGET_MAX or below the floor
 * (n*min_samples overall and per group; oort: K*min_samples), groups with oort.
 * The caller owns the returned controller (hs_controller_destroy); cfg and
 * groups are copied. */
hs_controller *hs_controller_create(const hs_policy_config *cfg, size_t n,
                                    const uint32_t *groups, uint64_t budget, hs_error *err);
void hs_controller_destroy(hs_controller *c);

/* Current allocation (n counts summing to the budget), owned by the controller
 * and valid until the next update or destroy. For oort, 0 means "not selected
 * this round". For ema-batch: the samples each rank trains over the next round
 * if the current throughput estimates hold (the sum of the planned per-step
 * batches). */
const uint64_t *hs_controller_allocation(const hs_controller *c);

/* Feed one round of telemetry (n records, participant order). On error the
 * controller is unchanged. */
hs_status hs_controller_update(hs_controller *c, const hs_telemetry *t, size_t n, hs_error *err);

/* Optional, before hs_controller_update: the statistical utility of each
 * participant's last run as a real trainer measures it (Oort's |B_i| *
 * sqrt(mean of squared per-sample training losses)); n values, finite and
 * >= 0, applying to the next update only. A policy that has no use for it
 * ignores it; oort uses it in place of the sample count (its stand-in when
 * only a time/energy meter reports). HS_EINVAL naming the participant for a
 * bad value, HS_ERANGE for a wrong n; the controller is then unchanged. */
hs_status hs_controller_set_utility(hs_controller *c, const double *utility, size_t n,
                                    hs_error *err);

/* Optional, before hs_controller_update: each participant's communication
 * time of its last round (seconds: its model download plus its upload, the
 * time its link kept it from training or finishing), n values, finite and
 * >= 0, applying to the next update only. A policy that has no use for it
 * ignores it; round-time adds it to the predicted training time to balance
 * whole rounds. Without the call a policy sees no communication (round-time
 * then keeps its last estimates: a round without the call is not a round of
 * zero communication). HS_EINVAL naming the participant for a bad value,
 * HS_ERANGE for a wrong n; the controller is then unchanged. */
hs_status hs_controller_set_comm(hs_controller *c, const double *comm_s, size_t n,
                                 hs_error *err);

/* True when the last successful update changed the allocation. */
bool hs_controller_reallocated(const hs_controller *c);

size_t hs_controller_size(const hs_controller *c);       /* n */
uint64_t hs_controller_budget(const hs_controller *c);   /* samples per round */
/* Optional per-group rules (HFL-DDP silos), set after hs_controller_create and
 * before the first update (HS_EINVAL after it). ngroups must be the number of
 * distinct group ids; entries are in ascending group-id order.
 * budgets (NULL: keep the split in proportion to group size): samples per
 * group, summing to the budget, each covering its members x min_samples; the
 * allocation restarts from the equal split inside each group.
 * deadbands (NULL: one decision for all groups, as without this call): each
 * group keeps or changes its own split by the deadband rule with its own band
 * (a negative entry: the policy's deadband); reallocated() is true when any
 * group changed. Policies without a deadband ignore deadbands. */
hs_status hs_controller_set_group_rules(hs_controller *c, const uint64_t *budgets,
                                        const double *deadbands, size_t ngroups, hs_error *err);
const hs_policy_config *hs_controller_config(const hs_controller *c); /* its copy */
uint64_t hs_controller_rounds(const hs_controller *c);   /* successful updates so far */

/* --- saving and restoring the state -------------------------------------------- */

/* A trainer that restarts keeps its estimates: save the controller's state
 * after an update, and restore it into a controller created again with the
 * same configuration, participants, groups and budget.
 *
 * hs_controller_save returns the state as JSON text (heap, free with hs_free;
 * NULL with HS_EUNSUP for a policy whose state cannot be saved; every
 * registered policy can). The format, version 1, one object:
 *   "format": "hetsim-controller-state", "version": 1,
 *   "kind", "participants", "budget", "groups" (group id per participant, or
 *     null), "config" (every key of the kind with its value, as
 *     hs_policy_config_foreach prints it),
 *   "rounds", "reallocated", "allocation" (n counts),
 *   "state": the policy's own fields by name (adaptive and presets: tau, eps
 *     (smoothed s and J per sample), have (0/1: measured); round-time: the
 *     same plus comm (smoothed communication s per round) and have_comm;
 *     static: the same
 *     plus frozen; oort: the same plus explore, t_pref, pacer_step, round,
 *     util, last, exploited, hist; ema-batch: thr, have, step, carry, s,
 *     steps_seen). Reals are printed with %.17g, so a restore is exact.
 *
 * hs_controller_restore reads such text into c. Refused, with c unchanged:
 * malformed text (HS_EPARSE, "state: byte N: ..."); another format or
 * version; a kind, participant count, budget, group or config key that
 * differs from c's (HS_EINVAL naming it: "state: config.w_e: saved 0.25, this
 * controller 0.5"); a missing, extra or out-of-range field ("state.tau[2]:
 * ..."); an allocation that does not sum to the (group) budget. After a
 * successful restore, c behaves exactly as the saved controller did: the same
 * telemetry gives the same allocations. */
char *hs_controller_save(const hs_controller *c, hs_error *err);
hs_status hs_controller_restore(hs_controller *c, const char *text, hs_error *err);

/* --- DDP: per-step batches ---------------------------------------------------- */

/* The DDP batch schedule for one round: n[i] samples for rank i over `steps`
 * optimiser steps. Fills b[i*steps + s] with b_{i,s} = floor(n_i/S) + (s < n_i mod S):
 * sum_s b_{i,s} = n_i, every step gets >= 1 sample when n_i >= S, and no two
 * steps of a rank differ by more than one sample. No padding, no dummy batches.
 * b has ranks*steps entries (caller-owned). steps >= 1. */
void hs_ddp_schedule(const uint64_t *n, size_t ranks, uint32_t steps, uint64_t *b);

/* Gradient weights that keep the sample-mean gradient: w[i*S+s] =
 * b_{i,s} / sum_j b_{j,s} (0 for a step in which no rank has a sample).
 * For every step with samples, sum_i w = 1. */
void hs_ddp_grad_weights(const uint64_t *b, size_t ranks, uint32_t steps, double *w);

/* ema-batch, step level (only for a kind with HS_POLICY_CAP_STEP_LEVEL, i.e.
 * ema-batch; asserts otherwise).
 * The global batch of step s of a round (s = 0..S-1) is budget/S plus one for
 * s < budget mod S, so every round trains exactly the budget (per group when
 * groups are given: the group budget is spread the same way). Within a step the
 * global batch is split in proportion to each rank's smoothed throughput
 * (samples/s, EMA with ema_batch_beta, first observation as is; kept in
 * [1e-290, 1e290] so that extreme reported times cannot overflow the split),
 * floor 1 when
 * the step's batch is at least the rank count, largest remainder; rounding is
 * carried across the steps of a round, so each rank's round total stays within
 * about one sample of its exact share.
 *
 * hs_controller_step_batches: per-rank batches of the next step (n counts,
 * owned by the controller, valid until the next step update).
 * hs_controller_step_update: the measured step times (n values, finite, >= 0;
 * > 0 for ranks with a non-zero batch); advances to the next step. A rank with
 * batch 0 keeps its estimate. After S step updates the round is complete; the
 * following hs_controller_update (round telemetry) is then validated but does
 * not feed the throughput estimate. Without step updates, round telemetry feeds
 * it (throughput n_i/t_i), which is what replay uses. */
const uint64_t *hs_controller_step_batches(const hs_controller *c);
hs_status hs_controller_step_update(hs_controller *c, const double *step_time_s, size_t n,
                                    hs_error *err);

#endif
