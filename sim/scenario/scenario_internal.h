/* scenario_internal.h: what the files of the scenario loader share.
 *
 *   scenario.c          the pipeline (parse, load, destroy) driven by the
 *                       block table, lookups
 *   scenario_root.c     the root's scalar keys, policy, telemetry, the budget
 *   scenario_get.c      error messages and the typed, range-checked getters
 *   scenario_devices.c  network, devices (profiles, speed traces), expanded
 *                       devices and names (no per-device table)
 *   scenario_regime.c   regime options, generically from the regime's table
 *   scenario_override.c --set overrides on the JSON tree
 *   scenario_json.c     the scenario printed back as JSON (hetsim validate)
 *   scenario_learning.c the "learning" block (issue 10)
 *
 * The public struct is embedded first in a private one (sim_scn) that owns what
 * regimes never touch directly: loaded profiles (shared between entries that
 * resolve to the same file), the expanded device table and a name index. */
#ifndef SIM_SCENARIO_INTERNAL_H
#define SIM_SCENARIO_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "devices/hs_profile.h"
#include "sim/hs_scenario.h"
#include "jpath.h"
#include "scn_topology.h"
#include "sim_regime.h"

/* Limits that catch typos, not physics. */
#define SCN_MAX_BLOCKS 32 /* lines of the block table (scn_block_data) */
#define SCN_MAX_TOTAL_DEVICES 10000000u /* 10^7 expanded devices */
#define SCN_MAX_NAME 64
#define SCN_MAX_U53 9007199254740992.0 /* 2^53: integers JSON numbers hold exactly */

typedef struct scn_named {
  const char *name; /* entries[entry].name */
  size_t entry;
} scn_named;

typedef struct sim_scn {
  hs_scenario pub; /* first: hs_scenario * and sim_scn * convert */
  /* Every devices[] entry in file order, excluded ones (count 0) too; owns
   * the entries' strings and traces. pub.devices holds shallow copies of the
   * included entries (count >= 1) only, so that a run never meets an entry
   * without a device. */
  hs_device_spec *entries;
  size_t nentries;
  hs_profile **profiles;
  char **profile_paths; /* resolved, parallel to profiles */
  size_t nprofiles;
  /* Nothing per expanded device but the name arena (scenario_devices.c):
   * device i's entry is found among `ends` (a prefix sum over the included
   * entries), a name lookup parses "<entry>-<k>" against `by_name`. */
  size_t *ends;        /* ndevices: devices[j].first + devices[j].count */
  scn_named *by_name;  /* nentries: every entry, sorted by (name, index) */
  size_t *name_off;    /* ndevices: where entry j's "<entry>-<k>" names start */
  _Atomic(char *) name_arena; /* "<entry>-<k>" names of entries with count > 1; made
                              * on first use, once, under a lock (scn_names_build) */
  const sim_regime *regime; /* descriptor of regime.kind (owns regime.opts) */
  char *description;
  bool policy_seed_set; /* policy.seed written explicitly */
  sim_topo topo;        /* "topology" (scenario_topology.c) */
  sim_model model;      /* "model" */
  void *block_data[SCN_MAX_BLOCKS]; /* scn_block_data */
} sim_scn;

typedef struct ovr_mark {
  char path[SIM_JPATH_MAX]; /* canonical path the override wrote */
  const char *key;          /* as the user wrote it */
} ovr_mark;

typedef struct scn_block scn_block;

/* The parse context (regimes see it as the opaque sim_opt_ctx). */
typedef struct sim_opt_ctx {
  const scn_block *block; /* the table line being parsed */
  const char *origin;
  const char *dir;
  sim_jpath path;
  const ovr_mark *marks;
  size_t nmarks;
  hs_error *err;
  sim_scn *s;
} ctx;

/* --- the block table (scenario.c) ---------------------------------------------
 * One descriptor per top-level key (scn_block_<name>, in the block's file),
 * listed by one line of the table in scenario.c in the format's order: the
 * order hs_scenario_to_json prints and `hetsim reference scenario-keys`
 * lists. Blocks are parsed in the order of `step` (the pipeline: a block
 * parsed later may read what earlier ones set; the first problem found stops
 * the load, so the step order decides which of several problems a file
 * reports). A descriptor without a key is a check across blocks.
 * A new block: its file (parse, print, free, descriptor; its data in
 * scn_block_data, or in iface/scn_x.h when a room above reads it) and its
 * line in the table. */
typedef enum scn_type { SCN_OBJECT, SCN_UINT, SCN_NUM, SCN_STR, SCN_BOOL, SCN_ARRAY } scn_type;

struct scn_block {
  const char *key; /* NULL: a check across blocks (parse only) */
  unsigned step;   /* parse order (unique; spaced so a line can go between) */
  /* One of the first format's keys: listed before the later ones in the
   * unknown-key message (which lists every key). */
  bool first_format;
  hs_status (*parse)(ctx *c, const cJSON *root); /* reads c->block; NULL: read by another line */
  void (*print)(const hs_scenario *sc, cJSON *root); /* NULL: printed by another line */
  void (*free)(hs_scenario *sc);                     /* NULL: owns nothing */
  /* For scalars (read by scn_get_line) and the reference: */
  scn_type type;
  bool required;
  double def, lo, hi;    /* UINT, NUM, BOOL (def: 0 or 1) */
  bool lo_open;          /* NUM: lo excluded (hi: INFINITY or included) */
  const char *def_text;  /* STR: the default; others: what a missing block means */
  const char *const *keys; /* OBJECT: its keys (the list its parse checks); NULL: see doc */
  const char *doc;
};

/* The table (scenario.c), in the format's order. */
extern const scn_block *const scn_blocks[];
extern const size_t scn_nblocks;
/* Lines of the table's numbers (a scalar's range and default). */
#define SCN_NUM_LINE(req, d, l, lopen, h) \
  .type = SCN_NUM, .required = req, .def = d, .lo = l, .lo_open = lopen, .hi = h
#define SCN_UINT_LINE(req, d, l, h) .type = SCN_UINT, .required = req, .def = d, .lo = l, .hi = h
/* A block's own data slot in the scenario (NULL until its parse sets it; its
 * free releases it): for a block whose data no other room reads, so that a
 * new block needs no field in sim_scn. */
void **scn_block_data(hs_scenario *sc, const scn_block *b);
const void *scn_block_get(const hs_scenario *sc, const scn_block *b); /* its value */

/* scenario_json.c: members added to a printed object (abort on no memory) */
void scn_add_num(cJSON *o, const char *key, double v);
void scn_add_str(cJSON *o, const char *key, const char *v);
cJSON *scn_add_obj(cJSON *o, const char *key);

/* scenario_get.c */
const char *scn_shown(const char *text, char *buf, size_t cap);
hs_status scn_fail(ctx *c, hs_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
cJSON *scn_member(const cJSON *obj, const char *key);
hs_status scn_check_keys(ctx *c, const cJSON *obj, const char *const *allowed);
/* The same, but an unknown key's message lists `shown` (e.g. the keys of the
 * regime the block asks for) instead of every key allowed. */
hs_status scn_check_keys_as(ctx *c, const cJSON *obj, const char *const *allowed,
                            const char *const *shown);
hs_status scn_need_object(ctx *c, const cJSON *n);
hs_status scn_get_bool(ctx *c, const cJSON *obj, const char *key, bool def, bool *out);
hs_status scn_missing(ctx *c, const char *key);
hs_status scn_get_uint(ctx *c, const cJSON *obj, const char *key, bool required, double def,
                       double lo, double hi, double *out);
hs_status scn_get_num(ctx *c, const cJSON *obj, const char *key, bool required, double def,
                      double lo, bool lo_open, double hi, bool hi_open, double *out);
hs_status scn_get_str(ctx *c, const cJSON *obj, const char *key, bool required,
                      const char *def, char **out);
hs_status scn_check_name(ctx *c, const char *name);
hs_status scn_get_name(ctx *c, const cJSON *obj, const char *key, bool required, char **out);
hs_status scn_get_choice(ctx *c, const cJSON *obj, const char *key, const char *def,
                         const char *const *choices, char **out);

/* scenario_devices.c */
extern const char *const scn_network_keys[], *const scn_device_keys[];
hs_status scn_parse_network(ctx *c, const cJSON *root);
void scn_print_network(const hs_scenario *sc, cJSON *root);
void scn_free_network(hs_scenario *sc);
hs_status scn_parse_devices(ctx *c, const cJSON *root);
void scn_print_devices(const hs_scenario *sc, cJSON *root);
void scn_free_devices(hs_scenario *sc);
hs_status scn_devices_check(ctx *c, const cJSON *root); /* names unique (a check line) */
void scn_names_build(sim_scn *s);
bool scn_find_name(const sim_scn *s, const char *name, size_t *first, size_t *n);

/* scenario_regime.c */
hs_status scn_parse_regime(ctx *c, const cJSON *root);
/* The regime (parsed already) can do `what` (one SIM_CAN_* bit) with its
 * options; else fails at the current path with "regime <kind> <lacks>", or
 * "regime <kind>: <its reason>" when its options rule it out. */
hs_status scn_regime_can(ctx *c, unsigned what, const char *lacks);
void scn_print_regime(const hs_scenario *sc, cJSON *root);
void scn_free_regime(hs_scenario *sc);

/* scenario_dynamics.c: the optional "dynamics" block (sim/run/iface/dyn.h) */
extern const char *const scn_dynamics_keys[];
hs_status scn_parse_dynamics(ctx *c, const cJSON *root);
void scn_print_dynamics(const hs_scenario *sc, cJSON *root);
void scn_free_dynamics(hs_scenario *sc);
/* scenario_learning.c: the "learning" block (sc->learning stays NULL when off) */
extern const char *const scn_learning_keys[];
hs_status scn_parse_learning(ctx *c, const cJSON *root);
void scn_print_learning(const hs_scenario *sc, cJSON *root);
void scn_free_learning(hs_scenario *sc);

/* scenario_override.c */
hs_status scn_apply_overrides(ctx *c, cJSON *root, const hs_override *ovr, size_t novr,
                              ovr_mark *marks);

#endif
