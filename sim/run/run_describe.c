/* run_describe.c: what makes a run folder describe itself, and the guard that
 * keeps one run from silently replacing another's folder (see
 * sim_run_describe in run_describe.h).
 *
 * summary.json gains, after the metrics, one line per member:
 *   hetsim_version     HS_VERSION: project(VERSION) plus `git describe` at
 *                      configure time when the source is a git checkout
 *   run_identity       fnv1a64 (hex) of the resolved scenario, the policy's
 *                      configuration and the --set list (below): what makes
 *                      two runs "the same run"
 *   sets               the --set list, in order, as "key=value" strings
 *   policy_config      kind and every key of hs_policy_config_foreach
 *   inputs             fnv1a64 (hex) of each input file's bytes: the scenario
 *                      ("scenario:<file name>"), each profile
 *                      ("profile:<name>"), each speed trace ("speed_trace:<as
 *                      written>"); null for a scenario not read from a file
 *   scenario_resolved  hs_scenario_to_json: every default filled in
 * Keys name files by name, never by absolute path, so the same run gives the
 * same bytes on every machine. Input hashes are not part of the identity: a
 * profile recalibrated between two runs of the same command is the same run
 * again (its new hash is recorded).
 *
 * The guard reads the folder's summary.json (if any) and compares identities;
 * a folder with rounds.csv or devices.csv but no summary.json holds a run we
 * cannot identify and is refused too. Rejected: refusing every non-empty
 * folder (re-running the same command is the common case and must work), and
 * a lock file (a crashed run would leave it behind).
 * Cost: O(input bytes) for the hashes, once per run with an output folder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "base/hs_assert.h"
#include "devices/hs_profile.h"
#include "policies/hs_policy.h"
#include "run_describe.h"

#ifndef HS_VERSION /* the one version string: `hetsim --version` prints it too */
#error "HS_VERSION is set on this file by sim/CMakeLists.txt (project VERSION + git describe)"
#endif

const char *hs_version(void) { return HS_VERSION; }

static void add_member(sim_description *d, const char *key, cJSON *v) {
  HS_ASSERT(d->n < SIM_DESC_MAX, "description members fit");
  char *text = cJSON_PrintUnformatted(v);
  HS_ASSERT(text, "cJSON prints what it built");
  d->key[d->n] = key;
  d->json[d->n] = hs_strdup(text);
  d->n++;
  cJSON_free(text);
  cJSON_Delete(v);
}

typedef struct cfg_walk {
  cJSON *obj;
  uint64_t h;
} cfg_walk;

static void cfg_key(const char *key, const char *value, void *ud) {
  cfg_walk *w = ud;
  char *end;
  double v = strtod(value, &end);
  if (*value && !*end && isfinite(v)) cJSON_AddRawToObject(w->obj, key, value);
  else cJSON_AddStringToObject(w->obj, key, value);
  w->h = hs_fnv1a64(w->h, key, strlen(key) + 1);
  w->h = hs_fnv1a64(w->h, value, strlen(value) + 1);
}

static void hex(char *buf, uint64_t h) { snprintf(buf, 17, "%016llx", (unsigned long long)h); }

/* fnv1a64 of the file's bytes into obj under key; null when unreadable
 * (a scenario parsed from text). */
static void add_hash(cJSON *obj, const char *key, const char *path) {
  if (cJSON_GetObjectItemCaseSensitive(obj, key)) return;
  hs_error e = {0};
  size_t len = 0;
  char *text = path ? hs_read_file(path, &len, &e) : NULL;
  if (!text) {
    cJSON_AddNullToObject(obj, key);
    return;
  }
  char h[17];
  hex(h, hs_fnv1a64(HS_FNV1A64_INIT, text, len));
  cJSON_AddStringToObject(obj, key, h);
  hs_free(text);
}

void sim_run_describe(const hs_scenario *sc, const hs_run_opts *o, sim_description *d) {
  memset(d, 0, sizeof *d);
  uint64_t h = HS_FNV1A64_INIT;

  add_member(d, "hetsim_version", cJSON_CreateString(HS_VERSION));

  char *scen = hs_scenario_to_json(sc);
  cJSON *resolved = cJSON_Parse(scen);
  HS_ASSERT(resolved, "hs_scenario_to_json writes JSON");
  hs_free(scen);
  char *flat = cJSON_PrintUnformatted(resolved);
  h = hs_fnv1a64(h, flat, strlen(flat) + 1);
  cJSON_free(flat);

  cJSON *sets = cJSON_CreateArray();
  for (size_t i = 0; i < o->nsets; i++) {
    size_t n = strlen(o->sets[i].key) + strlen(o->sets[i].value) + 2;
    char *kv = hs_malloc(n);
    snprintf(kv, n, "%s=%s", o->sets[i].key, o->sets[i].value);
    cJSON_AddItemToArray(sets, cJSON_CreateString(kv));
    h = hs_fnv1a64(h, kv, n);
    hs_free(kv);
  }

  cfg_walk w = {cJSON_CreateObject(), h};
  cJSON_AddStringToObject(w.obj, "kind", sc->policy.kind);
  w.h = hs_fnv1a64(w.h, sc->policy.kind, strlen(sc->policy.kind) + 1);
  hs_policy_config_foreach(&sc->policy, cfg_key, &w);
  d->identity = w.h;
  char id[17];
  hex(id, d->identity);
  add_member(d, "run_identity", cJSON_CreateString(id));
  add_member(d, "sets", sets);
  add_member(d, "policy_config", w.obj);

  cJSON *in = cJSON_CreateObject();
  const char *slash = strrchr(sc->path, '/');
  char key[512];
  snprintf(key, sizeof key, "scenario:%s", slash ? slash + 1 : sc->path);
  add_hash(in, key, sc->path);
  for (size_t i = 0; i < sc->ndevices; i++) {
    const hs_device_spec *ds = &sc->devices[i];
    snprintf(key, sizeof key, "profile:%s", hs_profile_name(ds->profile));
    add_hash(in, key, hs_profile_origin(ds->profile));
    if (ds->speed_trace_path) {
      snprintf(key, sizeof key, "speed_trace:%s", ds->speed_trace_name);
      add_hash(in, key, ds->speed_trace_path);
    }
  }
  add_member(d, "inputs", in);
  add_member(d, "scenario_resolved", resolved);
}

void sim_description_fini(sim_description *d) {
  for (size_t i = 0; i < d->n; i++) hs_free(d->json[i]);
  d->n = 0;
}

static bool exists_in(const char *dir, const char *name) {
  char *p = hs_path_join(dir, name);
  struct stat st;
  bool ok = stat(p, &st) == 0;
  hs_free(p);
  return ok;
}

hs_status sim_run_check_folder(const char *dir, uint64_t identity, hs_error *err) {
  char *path = hs_path_join(dir, "summary.json");
  hs_error e = {0};
  char *text = hs_read_file(path, NULL, &e);
  hs_status st = HS_OK;
  char id[17];
  hex(id, identity);
  if (!text) {
    if (exists_in(dir, "rounds.csv") || exists_in(dir, "devices.csv") ||
        exists_in(dir, "device_profiles.csv"))
      st = hs_error_set(err, HS_ESTATE,
                        "%s: holds run outputs without a summary.json (another run, unknown): "
                        "choose another --out, or --force to replace them",
                        dir);
    hs_free(path);
    return st;
  }
  cJSON *j = cJSON_Parse(text);
  const cJSON *rid = j ? cJSON_GetObjectItemCaseSensitive(j, "run_identity") : NULL;
  if (!cJSON_IsString(rid) || strcmp(rid->valuestring, id)) {
    const cJSON *sn = j ? cJSON_GetObjectItemCaseSensitive(j, "scenario") : NULL;
    const cJSON *po = j ? cJSON_GetObjectItemCaseSensitive(j, "policy") : NULL;
    const cJSON *se = j ? cJSON_GetObjectItemCaseSensitive(j, "seed") : NULL;
    st = hs_error_set(err, HS_ESTATE,
                      "%s: holds another run (scenario %.80s, policy %.40s, seed %.0f, "
                      "run_identity %s; this run is %s): choose another --out, or --force to "
                      "replace it",
                      dir, cJSON_IsString(sn) ? sn->valuestring : "?",
                      cJSON_IsString(po) ? po->valuestring : "?",
                      cJSON_IsNumber(se) ? se->valuedouble : -1.0,
                      cJSON_IsString(rid) ? rid->valuestring : "none recorded", id);
  }
  cJSON_Delete(j);
  hs_free(text);
  hs_free(path);
  return st;
}
