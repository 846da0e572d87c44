/* scenario_internal.h: what the files of the scenario loader share.
 *
 *   scenario.c          the pipeline (parse, load, destroy), root, policy,
 *                       telemetry, lookups
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
} sim_scn;

typedef struct ovr_mark {
  char path[SIM_JPATH_MAX]; /* canonical path the override wrote */
  const char *key;          /* as the user wrote it */
} ovr_mark;

/* The parse context (regimes see it as the opaque sim_opt_ctx). */
typedef struct sim_opt_ctx {
  const char *origin;
  const char *dir;
  sim_jpath path;
  const ovr_mark *marks;
  size_t nmarks;
  hs_error *err;
  sim_scn *s;
} ctx;

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
hs_status scn_parse_network(ctx *c, const cJSON *root);
hs_status scn_parse_devices(ctx *c, const cJSON *root);
hs_status scn_devices_check(ctx *c);
void scn_names_build(sim_scn *s);
bool scn_find_name(const sim_scn *s, const char *name, size_t *first, size_t *n);

/* scenario_regime.c */
hs_status scn_parse_regime(ctx *c, const cJSON *root);
/* The regime (parsed already) can do `what` (one SIM_CAN_* bit) with its
 * options; else fails at the current path with "regime <kind> <lacks>", or
 * "regime <kind>: <its reason>" when its options rule it out. */
hs_status scn_regime_can(ctx *c, unsigned what, const char *lacks);
void scn_print_regime(const sim_scn *s, cJSON *regime); /* scenario_json.c */
void scn_free_regime(sim_scn *s);

/* scenario_dynamics.c: the optional "dynamics" block (sim/run/iface/dyn.h) */
hs_status scn_parse_dynamics(ctx *c, const cJSON *root);
void scn_print_dynamics(const hs_scenario *sc, cJSON *root);
void scn_free_dynamics(hs_scenario *sc);
/* scenario_learning.c: the "learning" block (sc->learning stays NULL when off) */
hs_status scn_parse_learning(ctx *c, const cJSON *root);
void scn_print_learning(const hs_scenario *sc, cJSON *root);
void scn_free_learning(hs_scenario *sc);

/* scenario_override.c */
hs_status scn_apply_overrides(ctx *c, cJSON *root, const hs_override *ovr, size_t novr,
                              ovr_mark *marks);

#endif
