/* sim_learning.h: the simulator's side of learning in the loop (issue 10): the
 * one narrow interface between the timeline and the learner (hs_learn.h).
 *
 * The regimes say what happened on the timeline (who trained how many samples
 * from which model, which steps all-reduced, which update arrived how stale);
 * this module turns that into models (real mode: hetsim::learn trains for
 * real) or into progress along a measured loss curve (curve mode), and run.c
 * asks it at each round's end for the round's row of learning.csv.
 * A run without a learning block has no sim_learn (r->learn is NULL) and every
 * hook is a no-op then: callers write `if (r->learn) sim_learn_x(...)`.
 *
 * Nothing here knows a regime by name: the hooks are the shapes of update the
 * regimes produce (a FedAvg round, a DDP step in a group, a group average, an
 * asynchronous download and arrival). learning.c is real mode and the shared
 * bookkeeping; learning_curve.c the curve rules. */
#ifndef SIM_LEARNING_H
#define SIM_LEARNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "learn/hs_learn.h"
#include "scn_learning.h"
#include "traces/hs_report.h"
#include "sim/hs_scenario.h"
#include "base/hs_status.h"

typedef struct sim_learn sim_learn;

/* --- a run's learner --- */
/* sc->learning must be set. Real mode loads the data and draws the partition
 * (already checked at load, so an error here is a file that changed since). */
hs_status sim_learn_create(const hs_scenario *sc, size_t ndev, sim_learn **out, hs_error *err);
void sim_learn_destroy(sim_learn *L);

/* PMA round end: device i trained n[i] samples (0: not selected, contributes
 * nothing) from the global model, drawn from its own partition with draw key
 * `round`; the global model becomes their FedAvg (weights: learning.weights),
 * reduced in device order, then a server optimiser's step when there is one.
 * Updates the loss the participants saw (sim_learn_loss). */
hs_status sim_learn_fedavg(sim_learn *L, uint32_t round, const uint64_t *n, size_t ndev,
                           hs_error *err);
/* Per-participant training statistics of the last fedavg (real mode; curve
 * mode: 0): samples trained and the sum of squared per-sample losses (Oort's
 * statistical utility is trained * sqrt(loss_sq / trained)). */
void sim_learn_participant_loss(const sim_learn *L, size_t i, uint64_t *trained,
                                double *loss_sq_sum);

/* Oort's statistical utility of every device from the FedAvg since the last
 * call, u_i = trained_i * sqrt(loss_sq_i / trained_i) (0: did not train), for
 * hs_controller_set_utility. False (u untouched) in curve mode, under
 * learning.utility "samples", or when no FedAvg ran since the last call. */
bool sim_learn_utilities(sim_learn *L, double *u, size_t ndev);

/* DDP groups (ddp: one; hfl-ddp: one per silo). Call once before the run. */
void sim_learn_groups(sim_learn *L, size_t ngroups);
/* Group g starts a round: its model is the global model. */
void sim_learn_group_begin(sim_learn *L, size_t g);
/* One step of group g: ranks[k] trained b[k * stride] samples (0: none) of its own
 * partition with draw key `key`; the step's gradient is the weighted mean of
 * the ranks' batch gradients with the schedule's weights (hs_ddp_grad_weights
 * of the step), one optimiser step on the group model. */
void sim_learn_ddp_step(sim_learn *L, size_t g, const size_t *ranks, const uint64_t *b,
                        size_t stride, size_t nranks, uint64_t key);
/* The round ends: the global model is the average of the group models with
 * weights w[g] (silo samples); groups with w = 0 count nothing. */
void sim_learn_groups_end(sim_learn *L, const double *w);

/* FedAsync: device i downloads the current global model (version kept). */
void sim_learn_async_download(sim_learn *L, size_t i);
/* Device i's update arrives: it trained n samples from the model it
 * downloaded (draw key: its own update count); the global model becomes
 * (1 - a) global + a update, a = mixing alpha * s(staleness). */
hs_status sim_learn_async_arrival(sim_learn *L, size_t i, uint64_t n, double a, hs_error *err);

/* Round (or reporting window) `round` ended at time_s with energy_j spent
 * since t = 0: evaluates when due (every eval_every rounds and after the
 * last), writes the learning.csv row then, and tracks the target. */
void sim_learn_round_end(sim_learn *L, uint32_t round, bool last, double time_s, double energy_j,
                         hs_report *rep);
/* The energy since t = 0 under each meter scope (hs_learning_row's): wall
 * (energy_j, what the targets' energies report), the idle baseline, above
 * idle and training-only. The last three reach learning.csv with
 * report.meter_scopes only. */
typedef struct sim_learn_energy {
  double wall_j, idle_baseline_j, above_idle_j, training_j;
} sim_learn_energy;
/* sim_learn_round_end with every scope (the run's call); the plain one
 * leaves the other scopes NaN. */
void sim_learn_round_end_scopes(sim_learn *L, uint32_t round, bool last, double time_s,
                                const sim_learn_energy *e, hs_report *rep);

/* What summary.json reports (NaN when not reached / not evaluated): the
 * first evaluation that met the target, and the first of the evaluations
 * that all met it up to the last one (stable; NaN when the last missed it). */
typedef struct sim_learn_result {
  double time_to_target_s, energy_to_target_j, rounds_to_target;
  double final_test_loss, final_test_accuracy;
  double time_to_stable_target_s, energy_to_stable_target_j, rounds_to_stable_target;
} sim_learn_result;
void sim_learn_result_get(const sim_learn *L, sim_learn_result *out);

/* Real mode: the global model (nparams floats) and the learner (for tests
 * and evaluation); NULL in curve mode. */
const float *sim_learn_global(const sim_learn *L);
hs_learner *sim_learn_learner(const sim_learn *L);

/* Curve mode (learning_curve.c): loss after `seen` effective samples along
 * the curve (piecewise linear in samples, flat past the last point). */
double sim_learn_curve_loss(const hs_learning_spec *l, double seen);

#endif
