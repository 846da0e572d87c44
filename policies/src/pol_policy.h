/* pol_policy.h: what a policy file is written against: the policy descriptor
 * (name, summary, capabilities, key table, hooks), the controller object its
 * hooks receive, and the group helpers (groups.c). Folder-internal, plus the
 * test-only policy under tests/policies.
 *
 * ADDING A POLICY: write policies/src/<name>.c defining
 *   const pol_type pol_<name> = {.name = ..., .keys = ..., .update = ...};
 * add POL_REGISTER(pol_<name>) to registry.def and the file to the source list
 * in policies/src/CMakeLists.txt. Nothing else: the config vocabulary, the
 * checks, `hetsim replay --list`, hs_policy_caps and the controller's dispatch
 * all read the descriptor.
 *
 * Hook contract (the controller calls them in this order):
 *   create(c, err)   after the groups and budgets are built and c->alloc holds
 *                    the equal split; reads its keys from c->cfg, allocates its
 *                    state into c->state, may set c->deadband; fails on
 *                    configuration (e.g. a floor that does not fit) with a
 *                    message, leaving c->state for destroy to free.
 *   update(c, t)     telemetry already validated (hs_policy.h rules); writes
 *                    the candidate split: EVERY entry of c->next or, when its
 *                    create set c->cand_w, of c->w as exact integers (no
 *                    c->next is made then: 8 B per participant less); or sets
 *                    c->keep when there is no candidate to take: the split
 *                    stays, or a policy without a deadband wrote c->alloc
 *                    itself (and sets c->moved when that changed it).
 *                    Cannot fail. The
 *                    controller then applies the deadband (when c->deadband
 *                    >= 0) and takes the candidate (a swap with c->next, a
 *                    copy from c->w).
 *   destroy(c)       frees c->state (also after a failed create; NULL-safe).
 *   step_batches / step_update: only with HS_POLICY_CAP_STEP_LEVEL.
 *   state(c, f)      describes the policy's state between updates as fields
 *                    (name, type, count, pointer into c->state, allowed range)
 *                    for hs_controller_save/restore (state.c); returns the
 *                    field count (<= POL_STATE_MAX). NULL: the state cannot be
 *                    saved (HS_EUNSUP). A stateless policy returns 0.
 *   state_check(c, err)  optional: after a restore wrote the fields of a fresh
 *                    controller, refuse combinations the ranges cannot express.
 * A hook may use c->w (n doubles) and c->scratch as scratch when its create
 * made them (pol_make_scratch), and c->sd (n doubles) when its create made
 * it (hs_calloc); the controller frees them: they hold nothing between
 * calls, and pol_apportion consumes the weights in c->w. */
#ifndef POL_POLICY_H
#define POL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/hs_policy.h"
#include "base/hs_status.h"
#include "pol_select.h"

/* --- keys ------------------------------------------------------------------- */

typedef enum pol_key_type {
  POL_REAL,   /* double, finite, in the range */
  POL_UINT64, /* non-negative integer >= lo */
  POL_UINT32  /* non-negative integer >= lo, <= UINT32_MAX */
} pol_key_type;

/* One key of a policy. Its value lives in hs_policy_config.value[j], j being
 * its index in the policy's key table (the union member .real for POL_REAL,
 * .uint otherwise). */
typedef struct pol_key {
  const char *name;
  pol_key_type type;
  double def;        /* default (integer keys: a whole number) */
  double lo, hi;     /* real keys: [lo, hi] (hi may be INFINITY); integers: >= lo */
  bool lo_open;      /* real keys: value must be > lo */
  bool hi_open;      /* real keys: value must be < hi */
  const char *fixed; /* non-NULL: the value must stay def; names the kind that
                        frees it (the presets fix w_e: "adaptive") */
  const char *doc;   /* one line */
} pol_key;

/* --- saved state (state.c) ---------------------------------------------------- */

typedef enum pol_state_type {
  POL_S_REAL, /* double */
  POL_S_U64,  /* uint64_t */
  POL_S_U32,  /* uint32_t */
  POL_S_FLAG  /* unsigned char, 0 or 1 */
} pol_state_type;

/* One field of a policy's state: count values at ptr. A field with grow set is
 * a heap array of variable length: ptr is the address of the array pointer
 * (void **), count its current length, and on restore the array is
 * reallocated to the saved length, which is written to *grow (at most
 * max_count). Values on restore must lie in [lo, hi] (reals also finite). */
typedef struct pol_state_field {
  const char *name;
  pol_state_type type;
  void *ptr;
  size_t count;
  uint64_t *grow;
  uint64_t max_count;
  double lo, hi;
} pol_state_field;

#define POL_STATE_MAX 16

/* --- descriptor ------------------------------------------------------------- */

typedef struct pol_type {
  const char *name;    /* the kind; at most HS_POLICY_NAME_MAX-1 characters */
  const char *summary; /* one line */
  unsigned caps;       /* HS_POLICY_CAP_* */
  /* Bytes the policy's own state takes per participant (its arrays beyond the
   * controller's), for the run's memory estimate (sim/run/run_memory.c). */
  size_t bytes_per_participant;
  /* It reads hs_controller_set_comm's values (c->comm, c->comm_set); without
   * it the controller checks them and keeps none (no copy, no 8 B per
   * participant: the simulator sets them every round for every policy). */
  bool reads_comm;
  const pol_key *keys; /* own keys, in the order foreach visits them */
  size_t nkeys;        /* <= HS_POLICY_VALUES_MAX */
  hs_status (*create)(hs_controller *c, hs_error *err);
  void (*destroy)(hs_controller *c);
  void (*update)(hs_controller *c, const hs_telemetry *t);
  const uint64_t *(*step_batches)(const hs_controller *c);
  hs_status (*step_update)(hs_controller *c, const double *step_time_s, size_t n,
                           hs_error *err);
  size_t (*state)(const hs_controller *c, pol_state_field *f);
  hs_status (*state_check)(const hs_controller *c, hs_error *err);
} pol_type;

/* Number of keys in a static key table, checked against the store at build time. */
#define POL_NKEYS(table)                                                             \
  (sizeof(table) / sizeof((table)[0]) +                                              \
   0 * sizeof(struct {                                                               \
     int too_many_keys_for_HS_POLICY_VALUES_MAX                                      \
         : (sizeof(table) / sizeof((table)[0]) <= HS_POLICY_VALUES_MAX) ? 1 : -1;    \
   }))

/* The registry (registry.c, from registry.def): lookup by kind, NULL when
 * unknown; the i-th descriptor in registry order, NULL past the end. */
const pol_type *pol_lookup(const char *kind);
const pol_type *pol_type_at(size_t i);
size_t pol_type_count(void);

/* --- the controller --------------------------------------------------------- */

struct hs_controller {
  hs_policy_config cfg;
  const pol_type *type;
  size_t n;
  uint64_t budget;
  uint64_t rounds;
  bool reallocated;
  double deadband; /* >= 0: keep the split when the change is within it; < 0: none */
  uint64_t *alloc; /* current allocation */
  uint64_t *next;  /* candidate built by an update; NULL when cand_w */
  bool cand_w;     /* set by the policy's create: candidates go to c->w (or
                      none: keep), no c->next */
  bool keep;       /* set by an update: no candidate to take */
  bool moved;      /* with keep: the update changed c->alloc itself */
  /* groups: order[] lists participants by (group, index); group g is
   * order[gstart[g] .. gstart[g+1]) with budget gbudget[g] */
  size_t ngroups;
  uint32_t *gid; /* ngroups ids (NULL without groups) */
  uint32_t *order;
  size_t *gstart;
  uint64_t *gbudget;
  double *gdeadband; /* ngroups: the deadband rule per group (NULL: one rule for all) */
  double *w;  /* n: scratch (pol_apportion's weights, then shares, maybe counts); NULL
                 unless the policy's create made it (pol_make_scratch) */
  double *sd; /* n: scratch; NULL unless the policy's create made it */
  pol_scratch scratch; /* made with c->w */
  void *state; /* the policy's own */
  double *utility;   /* n: hs_controller_set_utility's values (NULL until set) */
  bool utility_set;  /* they apply to the next update */
  double *comm;      /* n: hs_controller_set_comm's values (NULL until set) */
  bool comm_set;     /* they apply to the next update */
};

/* --- groups (groups.c) ------------------------------------------------------ */

/* The participants of group g (ascending index) and their count. */
static inline const uint32_t *pol_group(const hs_controller *c, size_t g, size_t *m) {
  *m = c->gstart[g + 1] - c->gstart[g];
  return c->order + c->gstart[g];
}

/* Builds order/gstart/ngroups from the group ids (NULL: one group) and splits
 * the budget over the groups (hs_policy.h rules). */
void pol_groups_build(hs_controller *c, const uint32_t *groups);

/* Makes c->w and c->scratch (n participants), for a policy that apportions
 * or selects (the controller frees them). */
void pol_make_scratch(hs_controller *c);

/* Equal split of each group's budget over its members into out. */
void pol_equal_split(const hs_controller *c, uint64_t *out);

/* HS_ERANGE naming the group unless every group's budget covers its members x
 * floor; floor 0 always fits. */
hs_status pol_check_floor(const hs_controller *c, uint64_t floor, hs_error *err);

/* Key values of c->cfg by table index (the policy knows its own table). */
static inline double pol_real(const hs_controller *c, size_t j) { return c->cfg.value[j].real; }
static inline uint64_t pol_uint(const hs_controller *c, size_t j) { return c->cfg.value[j].uint; }

#endif
