/* sim_regime.h: the regime API. A regime (regime_*.c) is one descriptor,
 * sim_regime, listed in the registry of regimes/registry.c; everything that differs
 * between regimes is in the descriptor, so shared code (the scenario loader,
 * the run) never tests a regime by name.
 *
 * What a descriptor owns:
 * - Its options: a table of (key, type, default, range, doc) over the regime's
 *   own options struct (opts_size bytes, reached through hs_regime_spec.opts).
 *   The scenario loader reads, checks, prints (hetsim validate) and frees them
 *   generically, in table order. Options with a default or an applicability
 *   that depends on another option go through opt_prepare; options that are
 *   not a number or a word (hfl-ddp's silos) go through opt_parse, opt_print
 *   and opts_free with the sim_opt_* helpers below, which keep the loader's
 *   error format ("<file>: <JSON path>: <reason>").
 * - What it can do with the blocks that are not its own (can, cannot:
 *   learning and how, a round deadline, device absences): the loader refuses
 *   a scenario that asks for anything else, with one line naming the key and
 *   the regime; its memory per device (run_memory.c), the extra files it
 *   writes (csv: its column table), its group of optional metrics (metric_group).
 * - Its participant groups (groups: e.g. silos, one controller group each).
 * - The policy capabilities (hs_policy_caps) it cannot run or must have.
 * - Its run: set-up, binding to the controller, the events of a round,
 *   the telemetry a device reports, extra summary fields, teardown.
 *   Per-device state a regime needs lives in arrays it allocates in setup,
 *   not in the shared sim_dev (sim/run/iface/sim_run.h).
 *
 * The registry (regimes/registry.c) is an X-macro list, SIM_REGIMES. A test binary
 * adds regimes by compiling registry.c again with SIM_REGIMES_EXTRA defined
 * (see tests/regimes/registry_testonly.c); its copy of the registry then
 * replaces the library's at link time (the library is static, and the test's
 * object defines every symbol of registry.c, so the archive's is never pulled).
 *
 * Adding a regime: regime_x.c with `const sim_regime sim_regime_x = {...}`,
 * one X(sim_regime_x) line in SIM_REGIMES, and the file in sim/CMakeLists.txt. */
#ifndef SIM_REGIME_H
#define SIM_REGIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/hs_report.h"
#include "sim/hs_scenario.h"
#include "base/hs_status.h"

typedef struct cJSON cJSON;
typedef struct hs_summary hs_summary; /* sim/hs_run.h (the run room, above) */
typedef struct sim_run sim_run;         /* sim/run/iface/sim_run.h */
typedef struct sim_opt_ctx sim_opt_ctx; /* the scenario loader's parse context */

typedef enum sim_opt_type {
  SIM_OPT_UINT,   /* uint32_t field: an integer in [lo, hi] */
  SIM_OPT_NUM,    /* double field: a finite number in lo..hi (bounds: SIM_OPT_*_OPEN) */
  SIM_OPT_CHOICE, /* char * field (heap): one of choices; default choices[0] */
  SIM_OPT_CUSTOM  /* opt_parse / opt_print / opts_free handle it */
} sim_opt_type;

enum { SIM_OPT_LO_OPEN = 1u, SIM_OPT_HI_OPEN = 2u };

typedef struct sim_regime_opt {
  const char *key;
  sim_opt_type type;
  size_t offset;              /* of its field in the regime's options struct */
  double def;                 /* UINT, NUM: default (opt_prepare may change it) */
  double lo, hi;              /* UINT, NUM: range (hi may be INFINITY for NUM) */
  unsigned bounds;            /* NUM: SIM_OPT_LO_OPEN | SIM_OPT_HI_OPEN */
  const char *const *choices; /* CHOICE: NULL-terminated, in the order messages list them */
  const char *def_choice;     /* CHOICE: the default (NULL: choices[0]) */
  const char *doc;            /* one line: what it means, its unit */
} sim_regime_opt;

typedef struct sim_meter {
  uint64_t samples; /* trained samples the device reports */
  double train_s;   /* training time a meter on the board saw */
  double train_j;   /* training energy */
  double comm_s;    /* communication time of the round (the model's download and upload):
                       the controller's comm telemetry (hs_controller_set_comm) */
} sim_meter;

/* What a regime can do with the blocks of a scenario that are not its own
 * (learning, dynamics): sim_regime.can. The loader refuses, with one line
 * naming the key and the regime, a scenario that asks a regime for
 * something it cannot do, so no block is silently ignored. */
enum {
  SIM_CAN_FEDAVG = 1u << 0,   /* learns: FedAvg of each round's participants
                                 (sim_learn_round_fedavg) */
  SIM_CAN_DDP = 1u << 1,      /* learns: DDP steps in groups, a group average at the
                                 round's end (sim_learn_ddp_step, sim_learn_groups_end) */
  SIM_CAN_ASYNC = 1u << 2,    /* learns: asynchronous arrivals (sim_learn_arrival) */
  SIM_CAN_DEADLINE = 1u << 3, /* dynamics.deadline_s: the server closes the round */
  SIM_CAN_AVAIL = 1u << 4,    /* dynamics availability (traces, on/off processes):
                                 paused by the run (dyn.c), or taken by the regime
                                 itself when it sets r->on_avail in setup */
  SIM_CAN_SHARED = 1u << 5,   /* dynamics.shared_slowdown: every compute time it draws
                                 comes from the run's sampler (sim_dev_draw_work,
                                 sim_dev_compute_s, or a draw scaled by
                                 sim_dev_shared_factor), which applies the factor */
};
#define SIM_CAN_LEARN (SIM_CAN_FEDAVG | SIM_CAN_DDP | SIM_CAN_ASYNC)

typedef struct sim_regime {
  const char *name;
  const char *summary;

  /* --- what it can do, what it costs, what it writes --- */
  unsigned can; /* SIM_CAN_* */
  /* Options that rule out one of `can` (fl: no deadline on a ring): the
   * reason (one line, after "regime <name>: "), or NULL when `what` (one
   * SIM_CAN_* bit) holds with these options. NULL hook: `can` alone decides. */
  const char *(*cannot)(const void *opts, unsigned what);
  /* Bytes per device of its own per-device state, and per optimiser step
   * of a round (DDP's batch schedule), for the run's memory estimate
   * (run_memory.c). */
  size_t dev_bytes, step_bytes;

  /* --- options (all may be NULL / 0 for a regime without options) --- */
  const sim_regime_opt *opts;
  size_t nopts;
  size_t opts_size; /* bytes of the options struct (zeroed, then filled) */
  /* Called before option o is read, with the options before it in the table
   * already set: may change its default (*def, UINT and NUM) and returns NULL
   * when o applies, else why not (the error when the key is present; the
   * option is then not printed either). May be NULL: every option applies. */
  const char *(*opt_prepare)(const hs_scenario *sc, const void *opts, const sim_regime_opt *o,
                             double *def);
  /* CUSTOM options: read node (NULL when the key is absent) into opts; print
   * them into the regime object. */
  hs_status (*opt_parse)(sim_opt_ctx *c, const cJSON *node, void *opts,
                         const sim_regime_opt *o);
  void (*opt_print)(cJSON *regime, const void *opts, const sim_regime_opt *o);
  /* Frees what CUSTOM options own (CHOICE strings are freed generically). */
  void (*opts_free)(void *opts);
  /* Optimiser steps per round the policy plans for (0: none). NULL: 0. */
  uint32_t (*policy_steps)(const void *opts);
  /* Participant groups: one id per expanded device (hs_scenario_device
   * order), ready for hs_controller_create; NULL (or a NULL hook): one group. */
  const uint32_t *(*groups)(const void *opts);

  /* --- policies: hs_policy_caps bits --- */
  unsigned caps_refused; /* a policy with any of these does not apply */
  unsigned caps_needed;  /* a policy without all of these does not apply */

  /* --- the run --- */
  /* Called once before the controller exists (may be NULL). */
  hs_status (*setup)(sim_run *r, hs_error *err);
  /* Called once after the controller exists (may be NULL). */
  hs_status (*bind)(sim_run *r, hs_error *err);
  /* Schedule the round's events; the regime calls sim_round_end(r) at its end.
   * A windowed regime (no barriers: fedasync) gets this call for round 0 only,
   * keeps its devices looping, and calls sim_round_end at the boundary of each
   * reporting window. */
  void (*start_round)(sim_run *r);
  void (*teardown)(sim_run *r); /* may be NULL */
  bool windowed;
  /* What device i reports for the round just ended (and the regime's window
   * for it starts again). NULL: its allocation, and the busy time and busy
   * energy the ledger saw in the round (PMA: the local training loop).
   * comm_s comes in as the time the ledger saw the device in its COMM state
   * in the round (PMA: download plus upload); a hook may leave it. */
  void (*telemetry)(sim_run *r, size_t i, sim_meter *m);
  /* Extra summary.json fields: writes up to cap into out, returns how many.
   * Called once, after the last round (may be NULL). */
  size_t (*summary_fields)(sim_run *r, hs_report_field *out, size_t cap);
  /* Whole-system energy: fills s->energy_{server,network,aggregators,system}_j
   * after the last round (NULL: the regime has no such model). */
  void (*system_energy)(sim_run *r, hs_summary *s);
  /* The group of optional metrics its runs report (hs_metrics.h), e.g.
   * "system"; NULL: none. The metrics' lines in metrics.c name the group. */
  const char *metric_group;
  /* The extra CSV file its runs write in the output folder (agc.csv): its
   * column table (file name, columns), for its writer, the column reference
   * and the run, which removes an earlier run's file when this run does not
   * write one. NULL: none. */
  const struct hs_csv_table *csv;
} sim_regime;

/* The registered regime with this name, or NULL. */
const sim_regime *sim_regime_find(const char *name);
/* Registered regimes in registry order (i < sim_regime_count()). */
size_t sim_regime_count(void);
const sim_regime *sim_regime_at(size_t i);
/* Whether the regime runs policy `kind` (from its capabilities, not its name). */
bool sim_regime_runs_policy(const sim_regime *rg, const char *kind);
/* The regime option of this key, or NULL. */
const sim_regime_opt *sim_regime_opt_find(const sim_regime *rg, const char *key);

/* --- helpers for opt_parse (the loader's error format and path) --- */

const hs_scenario *sim_opt_scenario(const sim_opt_ctx *c);
/* The devices[] entries excluded by count 0 (in no device count; for messages). */
size_t sim_opt_excluded(const sim_opt_ctx *c);
/* Fails with "<file>: <current path>: <reason>" (and the --set key). */
hs_status sim_opt_fail(sim_opt_ctx *c, hs_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Descend into a key or an index (returns the mark to pop back to). */
size_t sim_opt_key(sim_opt_ctx *c, const char *key);
size_t sim_opt_index(sim_opt_ctx *c, size_t i);
void sim_opt_pop(sim_opt_ctx *c, size_t mark);
/* "key: required key is missing" under the current path. */
hs_status sim_opt_missing(sim_opt_ctx *c, const char *key);
/* node is an object whose keys are all in allowed (NULL-terminated), once each. */
hs_status sim_opt_object(sim_opt_ctx *c, const cJSON *node, const char *const *allowed);
/* obj.key as a valid name (heap copy; NULL when absent and not required). */
hs_status sim_opt_name(sim_opt_ctx *c, const cJSON *obj, const char *key, bool required,
                       char **out);
/* Input text made safe for a one-line message (cut, control characters '?'). */
const char *sim_opt_shown(const char *text, char *buf, size_t cap);
/* What a number option must be: lo <(=) v <(=) hi (hi may be INFINITY), and
 * the one reason every failure gives, as written ("expected a number >= 0":
 * no ", got ..." follows, unlike the loader's own numbers). status: of every
 * failure (not a number, not finite, out of range); HS_OK means HS_ERANGE. */
typedef struct sim_opt_range {
  double lo, hi;
  bool lo_open, hi_open;
  const char *want;
  hs_status status;
} sim_opt_range;
/* v, the node at the current path, as a finite number in r (hetsim::json's
 * hs_json_number); fails with "<file>: <path>: <want>". */
hs_status sim_opt_num(sim_opt_ctx *c, const cJSON *v, const sim_opt_range *r, double *out);
/* The same for a whole number (exact as a double up to 2^53). */
hs_status sim_opt_uint(sim_opt_ctx *c, const cJSON *v, const sim_opt_range *r, double *out);
/* obj.key as sim_opt_num / sim_opt_uint under the key's path; absent: def,
 * or the missing-key failure when required. */
hs_status sim_opt_get_num(sim_opt_ctx *c, const cJSON *obj, const char *key, bool required,
                          double def, const sim_opt_range *r, double *out);
hs_status sim_opt_get_uint(sim_opt_ctx *c, const cJSON *obj, const char *key, bool required,
                           double def, const sim_opt_range *r, double *out);

#endif
