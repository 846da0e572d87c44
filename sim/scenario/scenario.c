/* scenario.c: load, override and validate a scenario (the pipeline), and
 * look things up in it.
 *
 * Pipeline: text -> cJSON tree -> --set overrides on the tree
 * (scenario_override.c) -> one validating walk that fills the open hs_scenario
 * -> cross checks (links, names, regime options, budget). The walk is split by
 * section: network and devices in scenario_devices.c, the regime's options in
 * scenario_regime.c (generic over the regime registry), root, policy and
 * telemetry here; printing back in scenario_json.c (see scenario_internal.h).
 *
 * Errors: the first problem found stops the load; the message is
 * "<file>: <JSON path>: <reason>", plus "(from --set KEY)" when the path lies
 * under a key an override wrote. Checks run in a fixed order (top-level keys,
 * scalars, network, devices, regime, policy, budget) so a file with several
 * problems always reports the same one.
 *
 * Which policy a regime runs comes from the regime's capabilities
 * (sim_regime_runs_policy); this file knows no regime and nothing of a run. */
#include "sim/hs_scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_fmt.h"
#include "traces/hs_outfile.h"
#include "traces/hs_speed_trace.h"
#include "base/hs_util.h"
#include "scenario_internal.h"

#ifndef HS_SCENARIO_DIR /* the shipped scenarios, beside the program (hs_util.h) */
#define HS_SCENARIO_DIR "scenarios"
#endif

static char *stem_of(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen(base);
  if (n > 5 && !strcmp(base + n - 5, ".json")) n -= 5;
  char *s = hs_malloc(n + 1);
  memcpy(s, base, n);
  s[n] = '\0';
  return s;
}


/* The text hs_policy_config_set reads for a JSON number: whole numbers that
 * fit 64 bits in full (%.17g writes 2^60 as 1.152921504606847e+18, which
 * the library rightly refuses as an integer). Only numbers: the library also
 * takes quoted text, but "w_e": "0.5" in a file is a wrong type, as
 * "rounds": "3" is. */
static bool policy_text(const cJSON *v, char *buf, size_t cap) {
  if (!cJSON_IsNumber(v)) return false;
  double d = v->valuedouble;
  if (d == floor(d) && fabs(d) < 18446744073709551616.0)
    snprintf(buf, cap, "%.0f", d);
  else if (cap >= HS_FMT_DOUBLE_MAX)
    hs_fmt_double(buf, d); /* the shortest text that reads back to d: 0.3, not 0.29999999999999999 */
  else
    snprintf(buf, cap, "%.17g", d);
  return true;
}

static hs_status parse_policy(ctx *c, const cJSON *root) {
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  static const cJSON empty = {0};
  const cJSON *pol = scn_member(root, "policy");
  size_t m0 = sim_jpath_key(&c->path, "policy");
  hs_status st;
  if (pol && (st = scn_need_object(c, pol))) return st;
  if (!pol) pol = &empty;
  char *kind = NULL;
  if ((st = scn_get_str(c, pol, "kind", false, "equal", &kind))) return st;
  hs_error e = {0};
  st = hs_policy_config_init(&sc->policy, kind, &e);
  hs_free(kind);
  /* The policies library's messages start with the key ("kind: ..."). */
  if (st) {
    sim_jpath_key(&c->path, "kind");
    return scn_fail(c, st, "%s", strncmp(e.msg, "kind: ", 6) ? e.msg : e.msg + 6);
  }
  /* The regime's capabilities say which policies it can run (one source of
   * truth for validate and run). */
  if (s->regime && !sim_regime_runs_policy(s->regime, sc->policy.kind)) {
    sim_jpath_key(&c->path, "kind");
    return scn_fail(c, HS_EINVAL, "policy \"%s\" does not apply to regime %s", sc->policy.kind,
                sc->regime.kind);
  }
  sc->policy.seed = sc->seed;
  for (const cJSON *m = pol->child; m; m = m->next) {
    if (!strcmp(m->string, "kind")) continue;
    char shownkey[80];
    size_t m1 = sim_jpath_key(&c->path, scn_shown(m->string, shownkey, sizeof shownkey));
    for (const cJSON *d = pol->child; d != m; d = d->next)
      if (!strcmp(d->string, m->string)) return scn_fail(c, HS_EKEY, "key appears twice");
    if (!strcmp(m->string, "steps_per_round"))
      return scn_fail(c, HS_EKEY, "set regime.steps_per_round instead (the regime owns it)");
    char text[128];
    if (!policy_text(m, text, sizeof text))
      return scn_fail(c, HS_ETYPE, "expected a number, got %s", sim_json_type(m));
    /* The policies library quotes the key before its reason. No policy key
     * is longer than a name: a longer one goes in cut, so that the reason
     * still fits in the message (it is unknown either way). */
    char key[SCN_MAX_NAME + 1];
    snprintf(key, sizeof key, "%s", m->string);
    hs_error_clear(&e);
    st = hs_policy_config_set(&sc->policy, key, text, &e);
    if (st) {
      size_t kl = strlen(key);
      const char *why = !strncmp(e.msg, key, kl) && !strncmp(e.msg + kl, ": ", 2)
                            ? e.msg + kl + 2
                            : e.msg;
      return scn_fail(c, st, "%s", why);
    }
    if (!strcmp(m->string, "seed")) s->policy_seed_set = true;
    sim_jpath_pop(&c->path, m1);
  }
  if (sc->regime.steps_per_round) sc->policy.steps_per_round = sc->regime.steps_per_round;
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

static hs_status parse_telemetry(ctx *c, const cJSON *root) {
  hs_scenario *sc = &c->s->pub;
  const cJSON *t = scn_member(root, "telemetry");
  static const cJSON empty = {0};
  size_t m0 = sim_jpath_key(&c->path, "telemetry");
  hs_status st;
  if (t && (st = scn_need_object(c, t))) return st;
  if (!t) t = &empty;
  static const char *const keys[] = {"time_noise", "energy_noise", NULL};
  if ((st = scn_check_keys(c, t, keys)) ||
      (st = scn_get_num(c, t, "time_noise", false, 0, 0, false, 1, false,
                    &sc->telemetry_time_noise)) ||
      (st = scn_get_num(c, t, "energy_noise", false, 0, 0, false, 1, false,
                    &sc->telemetry_energy_noise)))
    return st;
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

static hs_status parse_root(ctx *c, const cJSON *root) {
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  hs_status st;
  if ((st = scn_need_object(c, root))) return st;
  static const char *const keys[] = {
      "name",       "description", "seed",   "task",    "model_bytes", "rounds",
      "samples_per_round", "batch_size", "regime", "policy",  "devices",     "network",
      "telemetry",  "switch_off_unselected", "learning", "topology", "model", "dynamics", NULL};
  if ((st = scn_check_keys(c, root, keys))) return st;
  double seed, rounds, spr, batch;
  if ((st = scn_get_str(c, root, "name", false, NULL, &sc->name))) return st;
  if (sc->name) {
    for (const char *p = sc->name; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f) {
        sim_jpath_key(&c->path, "name");
        return scn_fail(c, HS_EINVAL, "control character in the name");
      }
  } else {
    sc->name = stem_of(sc->path);
  }
  if ((st = scn_get_str(c, root, "description", false, NULL, &s->description)) ||
      (st = scn_get_uint(c, root, "seed", false, 1, 0, SCN_MAX_U53, &seed)) ||
      (st = scn_get_str(c, root, "task", false, "mnist", &sc->task)) ||
      (st = scn_get_num(c, root, "model_bytes", true, 0, 0, true, INFINITY, false,
                    &sc->model_bytes)) ||
      (st = scn_get_uint(c, root, "rounds", true, 0, 1, 1e9, &rounds)) ||
      (st = scn_get_uint(c, root, "samples_per_round", true, 0, 1, SCN_MAX_U53, &spr)) ||
      (st = scn_get_uint(c, root, "batch_size", false, 32, 1, 1e9, &batch)))
    return st;
  sc->seed = (uint64_t)seed;
  sc->rounds = (uint32_t)rounds;
  sc->samples_per_round = (uint64_t)spr;
  sc->batch_size = (uint32_t)batch;
  if ((st = scn_get_bool(c, root, "switch_off_unselected", false, &sc->switch_off_unselected)))
    return st;
  if ((st = scn_parse_network(c, root)) || (st = scn_parse_devices(c, root)) ||
      (st = scn_parse_topology(c, root)) ||
      (st = scn_parse_regime(c, root)) || (st = parse_policy(c, root)) ||
      (st = parse_telemetry(c, root)) || (st = scn_parse_dynamics(c, root)))
    return st;
  /* Every participant gets at least min_samples, so the budget must cover them. */
  uint64_t min_samples = hs_policy_config_min_samples(&sc->policy);
  double floor_total = (double)sc->total_devices * (double)min_samples;
  if ((double)sc->samples_per_round < floor_total) {
    sim_jpath_key(&c->path, "samples_per_round");
    return scn_fail(c, HS_ERANGE,
                "%llu is below the floor: %zu devices x policy.min_samples %llu = %.0f",
                (unsigned long long)sc->samples_per_round, sc->total_devices,
                (unsigned long long)min_samples, floor_total);
  }
  /* Names unique (on the entries: nothing is expanded). */
  if ((st = scn_devices_check(c))) return st;
  /* Last: real mode reads the data set, so every cheaper check comes first. */
  return scn_parse_learning(c, root);
}
/* --- load ---------------------------------------------------------------------- */

/* Line and column of offset `at` in text, for malformed-JSON messages. */
static void line_col(const char *text, size_t at, size_t *line, size_t *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < at && text[i]; i++) {
    if (text[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* How many arrays and objects are open at byte `at` (strings skipped): cJSON
 * fails without a reason, and past CJSON_NESTING_LIMIT the reason is depth. */
static size_t json_depth_at(const char *text, size_t at) {
  size_t depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < at && text[i]; i++) {
    char ch = text[i];
    if (in_str) {
      if (ch == '\\' && text[i + 1]) i++;
      else if (ch == '"') in_str = false;
    } else if (ch == '"') {
      in_str = true;
    } else if (ch == '[' || ch == '{') {
      depth++;
    } else if ((ch == ']' || ch == '}') && depth) {
      depth--;
    }
  }
  return depth;
}

hs_scenario *hs_scenario_parse(const char *json_text, const char *origin, const char *base_dir,
                               const hs_override *ovr, size_t novr, hs_error *err) {
  sim_scn *s = hs_calloc(1, sizeof *s);
  s->pub.path = hs_strdup(origin);
  s->pub.dir = hs_strdup(base_dir && base_dir[0] ? base_dir : ".");
  ctx c = {.origin = origin, .dir = s->pub.dir, .err = err, .s = s};
  sim_jpath_init(&c.path);
  ovr_mark *marks = novr ? hs_calloc(novr, sizeof *marks) : NULL;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(json_text, &end, 1);
  hs_status st = HS_OK;
  if (!root) {
    size_t line, col, at = end ? (size_t)(end - json_text) : 0;
    line_col(json_text, at, &line, &col);
    char near[24];
    scn_shown(json_text + at, near, sizeof near);
    if (json_depth_at(json_text, at) >= CJSON_NESTING_LIMIT)
      st = hs_error_set(err, HS_EPARSE, "%s: line %zu, column %zu: nested deeper than %d levels",
                        origin, line, col, CJSON_NESTING_LIMIT);
    else
      st = hs_error_set(err, HS_EPARSE, "%s: line %zu, column %zu: malformed JSON%s%s%s", origin,
                      line, col, near[0] ? " near \"" : " (unexpected end of file)", near,
                      near[0] ? "\"" : "");
  }
  if (!st) st = scn_apply_overrides(&c, root, ovr, novr, marks);
  c.marks = marks;
  if (!st) st = parse_root(&c, root);
  cJSON_Delete(root);
  hs_free(marks);
  if (st) {
    hs_scenario_destroy(&s->pub);
    return NULL;
  }
  return &s->pub;
}

hs_scenario *hs_scenario_load(const char *path, const hs_override *ovr, size_t novr,
                              hs_error *err) {
  hs_error e = {0};
  size_t len = 0;
  char *found = hs_scenario_find(path, err); /* a file, or a shipped scenario's name */
  if (!found) return NULL;
  char *text = hs_read_file(found, &len, &e);
  if (!text) {
    /* hs_read_file names the path; say what it is. */
    hs_error_set(err, e.status, "%s (scenario file)", e.msg);
    hs_free(found);
    return NULL;
  }
  /* A NUL byte would end the text cJSON sees: "{...}\0garbage" passed. */
  if (hs_text_check_nul(text, len, found, err) != HS_OK) {
    hs_free(text);
    hs_free(found);
    return NULL;
  }
  char *dir = hs_path_dir(found);
  hs_scenario *sc = hs_scenario_parse(text, found, dir, ovr, novr, err);
  hs_free(dir);
  hs_free(text);
  hs_free(found);
  return sc;
}

void hs_scenario_destroy(hs_scenario *sc) {
  if (!sc) return;
  sim_scn *s = (sim_scn *)sc;
  for (size_t i = 0; i < s->nentries; i++) { /* devices[] are shallow copies of these */
    hs_device_spec *d = &s->entries[i];
    hs_free(d->name);
    hs_free(d->profile_name);
    hs_free(d->link);
    hs_free(d->speed_trace_path);
    hs_free(d->speed_trace_name);
    hs_speed_trace_destroy((hs_speed_trace *)(uintptr_t)d->speed_trace);
    hs_free(d->owner);
  }
  hs_free(s->entries);
  hs_free(sc->devices);
  scn_free_dynamics(sc);
  scn_free_regime(s);
  scn_free_learning(sc);
  hs_free(sc->regime.kind);
  for (size_t i = 0; i < sc->nlinks; i++) hs_free(sc->links[i].name);
  hs_free(sc->links);
  hs_free(sc->server_link);
  hs_free(sc->name);
  hs_free(sc->task);
  hs_free(sc->path);
  hs_free(sc->dir);
  for (size_t i = 0; i < s->nprofiles; i++) {
    hs_profile_destroy(s->profiles[i]);
    hs_free(s->profile_paths[i]);
  }
  hs_free(s->profiles);
  hs_free(s->profile_paths);
  hs_free(s->ends);
  hs_free(s->by_name);
  hs_free(s->name_off);
  hs_free(s->name_arena);
  hs_free(s->description);
  scn_free_topology(&s->pub);
  hs_free(s);
}

const char *hs_scenario_default_path(void) {
  return hs_share_path(HS_SCENARIO_DIR "/testbed-mnist-pma.json");
}

const hs_link_spec *hs_scenario_link(const hs_scenario *sc, const char *name) {
  for (size_t i = 0; i < sc->nlinks; i++)
    if (!strcmp(sc->links[i].name, name)) return &sc->links[i];
  return NULL;
}

size_t hs_scenario_find_device(const hs_scenario *sc, const char *name) {
  size_t first, n;
  return scn_find_name((const sim_scn *)sc, name, &first, &n) && n == 1 ? first : SIZE_MAX;
}

bool hs_scenario_find_name(const hs_scenario *sc, const char *name, size_t *first, size_t *n) {
  return scn_find_name((const sim_scn *)sc, name, first, n);
}

const uint32_t *hs_scenario_groups(const hs_scenario *sc) {
  const sim_scn *s = (const sim_scn *)sc;
  return s->regime && s->regime->groups ? s->regime->groups(sc->regime.opts) : NULL;
}
