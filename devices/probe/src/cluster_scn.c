/* cluster_scn.c: the parts of a hetsim scenario the cluster runtime reads,
 * with the harness's own strict JSON (json.c): the same file `hetsim run`
 * simulates, so a run and its simulation cannot disagree on who the boards
 * are, the regime, the policy, the rounds, the budget and the model size.
 *
 * Devices expand as the simulator expands them: an entry with count 1 is one
 * board named after the entry, an entry with count k > 1 is boards
 * "<name>-0" .. "<name>-<k-1>", count 0 is excluded. Names must be distinct.
 * Only what the runtime uses is checked here (the simulator checks the rest
 * when it loads the same file); unknown keys are left to it. Profiles are
 * looked up only for the stated energy (busy_w) and the box's quotas (tau_s):
 * a profile that cannot be found or read leaves both NAN, and the runtime
 * then says the energy is not known rather than inventing it.
 * Rejected: linking the simulator's loader (cJSON and GSL are not on the
 * boards). */
#include "probe_cluster.h"

#include "base/hs_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void probe_cscn_fini(probe_cscn *s) {
  free(s->path);
  free(s->name);
  free(s->task);
  free(s->regime);
  free(s->policy_kind);
  for (size_t i = 0; i < s->ndev; i++) {
    free(s->dev[i].name);
    free(s->dev[i].profile);
    free(s->dev[i].link);
    free(s->dev[i].profile_path);
  }
  free(s->dev);
  for (size_t i = 0; i < s->npolicy_keys; i++) {
    free(s->policy_keys[i]);
    free(s->policy_vals[i]);
  }
  free(s->policy_keys);
  free(s->policy_vals);
  for (size_t i = 0; i < s->nregime_keys; i++) {
    free(s->regime_keys[i]);
    free(s->regime_vals[i]);
  }
  free(s->regime_keys);
  free(s->regime_vals);
  free(s->regime_is_num);
  memset(s, 0, sizeof *s);
}

static hs_status need_num(const probe_json *o, const char *key, bool required, double dflt, double lo, double hi,
                          bool integer, double *out, hs_error *err) {
  const probe_json *v = probe_json_get(o, key);
  if (!v) {
    if (required) return hs_error_set(err, HS_EMISSING, "%s: missing", key);
    *out = dflt;
    return HS_OK;
  }
  if (v->type != PJ_NUM) return hs_error_set(err, HS_ETYPE, "%s: expected a number", key);
  if (!(v->num >= lo && v->num <= hi) || (integer && v->num != floor(v->num)))
    return hs_error_set(err, HS_ERANGE, "%s: %s is not %s in [%g, %g]", key, v->str ? v->str : "?",
                        integer ? "a whole number" : "a number", lo, hi);
  *out = v->num;
  return HS_OK;
}

static hs_status need_str(const probe_json *o, const char *key, bool required, const char *dflt, char **out,
                          hs_error *err) {
  const probe_json *v = probe_json_get(o, key);
  if (!v) {
    if (required) return hs_error_set(err, HS_EMISSING, "%s: missing", key);
    *out = dflt ? hs_strdup(dflt) : NULL;
    return HS_OK;
  }
  if (v->type != PJ_STR || !v->str[0]) return hs_error_set(err, HS_ETYPE, "%s: expected a non-empty string", key);
  *out = hs_strdup(v->str);
  return HS_OK;
}

/* A profile by name or path, for its task figures; not found is not an error. */
static void find_profile(probe_cdev *d, const char *task, const char *dirs, const char *scn_dir) {
  d->busy_w = d->tau_s = NAN;
  const char *env = getenv("HETSIM_PROFILE_PATH");
  char *search = probe_xasprintf("%s:%s:%s:%s", dirs ? dirs : "", env ? env : "", scn_dir,
                               hs_share_path("profiles"));
  bool is_path = strchr(d->profile, '/') || (strlen(d->profile) > 5 && !strcmp(d->profile + strlen(d->profile) - 5, ".json"));
  char *found = NULL;
  if (is_path) {
    char *p = d->profile[0] == '/' ? hs_strdup(d->profile) : probe_xasprintf("%s/%s", scn_dir, d->profile);
    if (probe_exists(p)) found = p;
    else free(p);
  }
  for (char *s = search, *e; !found && s; s = e ? e + 1 : NULL) {
    e = strchr(s, ':');
    if (e) *e = '\0';
    if (*s) {
      char *p = probe_xasprintf("%s/%s.json", s, d->profile);
      if (probe_exists(p)) found = p;
      else free(p);
    }
  }
  free(search);
  if (!found) return;
  unsigned char *text = NULL;
  size_t len = 0;
  hs_error e = {HS_OK, ""};
  if (probe_read_file(found, &text, &len, &e) != HS_OK) {
    free(found);
    return;
  }
  probe_json *j = probe_json_parse((const char *)text, len, &e);
  free(text);
  const probe_json *t = j ? probe_json_get(probe_json_get(j, "tasks"), task) : NULL;
  const probe_json *b = t ? probe_json_get(t, "busy_w") : NULL, *ts = t ? probe_json_get(t, "tau_s") : NULL;
  if (b && b->type == PJ_NUM && b->num > 0) d->busy_w = b->num;
  if (ts && ts->type == PJ_NUM && ts->num > 0) d->tau_s = ts->num;
  probe_json_destroy(j);
  d->profile_path = found;
}

static hs_status parse_devices(const probe_json *root, probe_cscn *s, const char *profile_dirs, const char *dir,
                               hs_error *err) {
  const probe_json *devs = probe_json_get(root, "devices");
  if (!devs) return hs_error_set(err, HS_EMISSING, "devices: missing");
  if (devs->type != PJ_ARR || devs->n == 0) return hs_error_set(err, HS_ETYPE, "devices: expected a non-empty array");
  const probe_json *links = probe_json_get(probe_json_get(root, "network"), "links");
  hs_status st = HS_OK;
  for (size_t e = 0; e < devs->n && st == HS_OK; e++) {
    const probe_json *d = devs->kids[e];
    char *name = NULL, *prof = NULL, *link = NULL;
    double count = 1;
    if (d->type != PJ_OBJ) st = hs_error_set(err, HS_ETYPE, "expected an object");
    if (st == HS_OK) st = need_str(d, "name", true, NULL, &name, err);
    if (st == HS_OK) st = need_str(d, "profile", true, NULL, &prof, err);
    if (st == HS_OK) st = need_num(d, "count", false, 1, 0, 1e6, true, &count, err);
    const char *only = links && links->type == PJ_OBJ && links->n == 1 ? links->keys[0] : NULL;
    if (st == HS_OK) st = need_str(d, "link", only == NULL, only, &link, err);
    double mbps = NAN;
    if (st == HS_OK) {
      const probe_json *l = links ? probe_json_get(links, link) : NULL;
      const probe_json *bw = l ? probe_json_get(l, "bandwidth_mbps") : NULL;
      if (!bw || bw->type != PJ_NUM || !(bw->num > 0))
        st = hs_error_set(err, HS_ENOENT, "link: no link \"%s\" with a bandwidth_mbps > 0 in network.links", link);
      else mbps = bw->num;
    }
    for (uint32_t k = 0; st == HS_OK && k < (uint32_t)count; k++) {
      s->dev = hs_reallocarray(s->dev, s->ndev + 1, sizeof *s->dev);
      probe_cdev *c = &s->dev[s->ndev];
      memset(c, 0, sizeof *c);
      c->name = count == 1 ? hs_strdup(name) : probe_xasprintf("%s-%u", name, k);
      if (probe_cscn_find(s, c->name) != SIZE_MAX) {
        st = hs_error_set(err, HS_EINVAL, "name: device \"%s\" appears twice", c->name);
        free(c->name);
        break;
      }
      c->profile = hs_strdup(prof);
      c->link = hs_strdup(link);
      c->link_mbps = mbps;
      s->ndev++;
      find_profile(c, s->task, profile_dirs, dir);
    }
    if (st != HS_OK) hs_error_prefix(err, "devices[%zu]", e);
    free(name);
    free(prof);
    free(link);
  }
  if (st == HS_OK && s->ndev == 0) st = hs_error_set(err, HS_EINVAL, "devices: every entry has count 0");
  if (st == HS_OK) {
    const probe_json *net = probe_json_get(root, "network");
    const char *srv = NULL;
    const probe_json *sv = net ? probe_json_get(net, "server") : NULL;
    if (sv && sv->type == PJ_STR) srv = sv->str;
    else if (links && links->type == PJ_OBJ && links->n == 1) srv = links->keys[0];
    const probe_json *l = srv && links ? probe_json_get(links, srv) : NULL;
    const probe_json *bw = l ? probe_json_get(l, "bandwidth_mbps") : NULL;
    if (!bw || bw->type != PJ_NUM || !(bw->num > 0))
      st = hs_error_set(err, HS_EMISSING, "network.server: no server link with a bandwidth_mbps > 0");
    else s->server_mbps = bw->num;
  }
  return st;
}

hs_status probe_cscn_load(const char *path, const char *profile_dirs, probe_cscn *s, hs_error *err) {
  memset(s, 0, sizeof *s);
  unsigned char *text = NULL;
  size_t len = 0;
  hs_status st = probe_read_file(path, &text, &len, err);
  if (st != HS_OK) return st;
  probe_json *root = probe_json_parse((const char *)text, len, err);
  free(text);
  if (!root) {
    hs_error_prefix(err, "%s", path);
    return HS_EPARSE;
  }
  s->path = hs_strdup(path);
  const char *slash = strrchr(path, '/');
  char *dir = slash ? probe_xasprintf("%.*s", (int)(slash - path), path) : hs_strdup(".");
  if (root->type != PJ_OBJ) st = hs_error_set(err, HS_ETYPE, "expected an object");
  if (st == HS_OK) st = need_str(root, "name", false, "scenario", &s->name, err);
  if (st == HS_OK) st = need_str(root, "task", true, NULL, &s->task, err);
  if (st == HS_OK) st = need_num(root, "rounds", true, 0, 1, 1e9, true, &s->rounds, err);
  if (st == HS_OK) st = need_num(root, "samples_per_round", true, 0, 1, 9007199254740992.0, true, &s->samples_per_round, err);
  if (st == HS_OK) st = need_num(root, "batch_size", false, 32, 1, 1 << 20, true, &s->batch_size, err);
  if (st == HS_OK) st = need_num(root, "seed", false, 1, 0, 9007199254740992.0, true, &s->seed, err);
  if (st == HS_OK) st = need_num(root, "model_bytes", true, 0, 1, 4294967295.0, true, &s->model_bytes, err);
  if (st == HS_OK) {
    const probe_json *r = probe_json_get(root, "regime");
    if (!r || r->type != PJ_OBJ) st = hs_error_set(err, HS_EMISSING, "regime: missing (an object with a kind)");
    else if ((st = need_str(r, "kind", true, NULL, &s->regime, err)) != HS_OK) hs_error_prefix(err, "regime");
    /* The regime's options, as text: the regime's runtime (serve_*.c) says
     * which it honours; a structured value (a silo list) is kept as "{...}". */
    for (size_t k = 0; st == HS_OK && r && k < r->n; k++) {
      if (!strcmp(r->keys[k], "kind")) continue;
      const probe_json *v = r->kids[k];
      s->regime_keys = hs_reallocarray(s->regime_keys, s->nregime_keys + 1, sizeof *s->regime_keys);
      s->regime_vals = hs_reallocarray(s->regime_vals, s->nregime_keys + 1, sizeof *s->regime_vals);
      s->regime_is_num = hs_reallocarray(s->regime_is_num, s->nregime_keys + 1, sizeof *s->regime_is_num);
      s->regime_keys[s->nregime_keys] = hs_strdup(r->keys[k]);
      s->regime_vals[s->nregime_keys] = hs_strdup(v->type == PJ_NUM || v->type == PJ_STR ? v->str : "{...}");
      s->regime_is_num[s->nregime_keys++] = v->type == PJ_NUM;
    }
  }
  if (st == HS_OK) {
    const probe_json *p = probe_json_get(root, "policy");
    if (!p) s->policy_kind = hs_strdup("equal");
    else if (p->type != PJ_OBJ) st = hs_error_set(err, HS_ETYPE, "policy: expected an object");
    else if ((st = need_str(p, "kind", true, NULL, &s->policy_kind, err)) != HS_OK) hs_error_prefix(err, "policy");
    for (size_t k = 0; st == HS_OK && p && k < p->n; k++) {
      if (!strcmp(p->keys[k], "kind")) continue;
      const probe_json *v = p->kids[k];
      if (v->type != PJ_NUM) {
        st = hs_error_set(err, HS_ETYPE, "policy.%s: the runtime takes numeric policy keys only", p->keys[k]);
        break;
      }
      s->policy_keys = hs_reallocarray(s->policy_keys, s->npolicy_keys + 1, sizeof *s->policy_keys);
      s->policy_vals = hs_reallocarray(s->policy_vals, s->npolicy_keys + 1, sizeof *s->policy_vals);
      s->policy_keys[s->npolicy_keys] = hs_strdup(p->keys[k]);
      s->policy_vals[s->npolicy_keys++] = hs_strdup(v->str);
    }
  }
  if (st == HS_OK) st = parse_devices(root, s, profile_dirs, dir, err);
  free(dir);
  probe_json_destroy(root);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s", path);
    probe_cscn_fini(s);
  }
  return st;
}

size_t probe_cscn_find(const probe_cscn *s, const char *name) {
  for (size_t i = 0; i < s->ndev; i++)
    if (s->dev[i] .name && !strcmp(s->dev[i].name, name)) return i;
  return SIZE_MAX;
}

static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return la > lb ? la : lb;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t cur = row[j];
      size_t sub = prev + (a[i - 1] != b[j - 1]);
      size_t best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
      row[j] = sub < best ? sub : best;
      prev = cur;
    }
  }
  return row[lb];
}

const char *probe_nearest_name(const char *name, const char *const *names) {
  const char *best = names[0] ? names[0] : "";
  size_t bd = (size_t)-1;
  for (size_t i = 0; names[i]; i++) {
    size_t d = edit_distance(name, names[i]);
    if (d < bd) {
      bd = d;
      best = names[i];
    }
  }
  return best;
}

const char *probe_cscn_nearest(const probe_cscn *s, const char *name) {
  const char *best = s->ndev ? s->dev[0].name : "";
  size_t bd = (size_t)-1;
  for (size_t i = 0; i < s->ndev; i++) {
    size_t d = edit_distance(name, s->dev[i].name);
    if (d < bd) {
      bd = d;
      best = s->dev[i].name;
    }
  }
  return best;
}
