/* scenario.c: load, override and validate a scenario; print it back.
 *
 * Pipeline: text -> cJSON tree -> --set overrides on the tree -> one validating
 * walk that fills the open hs_scenario -> cross checks (links, names, silos,
 * budget). Overrides go on the tree, not on the struct, so an override is
 * validated by exactly the code that validates the file, and an unknown key
 * set with --set is rejected like one written in the file.
 *
 * The public struct is embedded first in a private one (sim_scn) that owns what
 * regimes never touch directly: loaded profiles (shared between entries that
 * resolve to the same file), the expanded device table and a name index.
 *
 * Names: every expanded device ("<entry>" for count 1, "<entry>-<k>" else) and
 * every entry name with count > 1 must be distinct, so a silo member or a
 * lookup names exactly one thing. The index is an array sorted by name:
 * O(N log N) to build for N expanded devices, O(log N) per lookup, about 60
 * bytes per device with the device table (10^6 devices: 0.2 s, 80 MB).
 * Rejected: a hash table (more code, and iteration order would need care to
 * stay deterministic); per-entry linear search (O(N) per silo member,
 * quadratic for silos of 10^5 devices).
 *
 * Errors: the first problem found stops the load; the message is
 * "<file>: <JSON path>: <reason>", plus "(from --set KEY)" when the path lies
 * under a key an override wrote. Checks run in a fixed order (top-level keys,
 * scalars, network, devices, regime, policy, budget) so a file with several
 * problems always reports the same one. */
#include "hs_scenario.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hs_alloc.h"
#include "hs_outfile.h"
#include "hs_profile.h"
#include "hs_speed_trace.h"
#include "jpath.h"
#include "run_internal.h" /* sim_regime_find: which policies a regime runs */

#ifndef HS_SCENARIO_DIR
#define HS_SCENARIO_DIR "scenarios"
#endif

/* Limits that catch typos, not physics. */
#define SCN_MAX_TOTAL_DEVICES 10000000u /* 10^7 expanded devices: ~0.5 GB of tables */
#define SCN_MAX_NAME 64
#define SCN_MAX_U53 9007199254740992.0 /* 2^53: integers JSON numbers hold exactly */

typedef struct name_ix {
  const char *name;
  size_t first; /* first expanded device it names */
  size_t n;     /* 1 for a device, count for an entry name with count > 1 */
  size_t entry; /* devices[entry] */
} name_ix;

typedef struct sim_scn {
  hs_scenario pub; /* first: hs_scenario * and sim_scn * convert */
  hs_profile **profiles;
  char **profile_paths; /* resolved, parallel to profiles */
  size_t nprofiles;
  hs_device_ref *refs; /* total_devices */
  char *name_arena;    /* "<entry>-<k>" names of entries with count > 1 */
  name_ix *ix;         /* sorted by name */
  size_t nix;
  uint32_t *silo_of; /* hfl-ddp only */
  char *description;
  bool policy_seed_set; /* policy.seed written explicitly */
} sim_scn;

typedef struct ovr_mark {
  char path[SIM_JPATH_MAX]; /* canonical path the override wrote */
  const char *key;          /* as the user wrote it */
} ovr_mark;

typedef struct ctx {
  const char *origin;
  const char *dir;
  sim_jpath path;
  const ovr_mark *marks;
  size_t nmarks;
  hs_error *err;
  sim_scn *s;
} ctx;

/* --- errors ------------------------------------------------------------------ */

/* Text from the input goes into one-line messages: cut it and replace control
 * characters so a message never spans lines. */
static const char *shown(const char *text, char *buf, size_t cap) {
  size_t i = 0;
  for (; text[i] && i + 4 < cap; i++)
    buf[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
  if (text[i]) {
    /* Cut before a UTF-8 character, not inside one. */
    while (i > 0 && ((unsigned char)text[i] & 0xc0) == 0x80) i--;
    memcpy(buf + i, "...", 4);
  } else {
    buf[i] = '\0';
  }
  return buf;
}

static const char *override_of(const ctx *c) {
  const char *p = sim_jpath_str(&c->path);
  const char *key = NULL;
  for (size_t i = 0; i < c->nmarks; i++) {
    size_t n = strlen(c->marks[i].path);
    if (!strncmp(p, c->marks[i].path, n) && (p[n] == '\0' || p[n] == '.' || p[n] == '['))
      key = c->marks[i].key;
  }
  return key;
}

static hs_status fail(ctx *c, hs_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static hs_status fail(ctx *c, hs_status st, const char *fmt, ...) {
  char reason[HS_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  const char *p = sim_jpath_str(&c->path);
  const char *key = override_of(c);
  char k[96];
  hs_error_set(c->err, st, "%s: %s: %s%s%s%s", c->origin, p[0] ? p : "(top level)", reason,
               key ? " (from --set " : "", key ? shown(key, k, sizeof k) : "", key ? ")" : "");
  return st;
}

/* --- typed getters ------------------------------------------------------------ */

static cJSON *member(const cJSON *obj, const char *key) {
  return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* Unknown and duplicate keys of obj; allowed is NULL-terminated. */
static hs_status check_keys(ctx *c, const cJSON *obj, const char *const *allowed) {
  for (const cJSON *m = obj->child; m; m = m->next) {
    bool ok = false;
    for (size_t i = 0; allowed[i] && !ok; i++) ok = !strcmp(allowed[i], m->string);
    char shownkey[80];
    size_t mark = sim_jpath_key(&c->path, shown(m->string, shownkey, sizeof shownkey));
    if (!ok) {
      char list[400];
      size_t used = 0;
      list[0] = '\0';
      for (size_t i = 0; allowed[i] && used < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", allowed[i]);
        if (w < 0) break;
        used += (size_t)w;
      }
      return fail(c, HS_EKEY, "unknown key (allowed here: %s)", list);
    }
    for (const cJSON *d = obj->child; d != m; d = d->next)
      if (!strcmp(d->string, m->string)) return fail(c, HS_EKEY, "key appears twice");
    sim_jpath_pop(&c->path, mark);
  }
  return HS_OK;
}

static hs_status need_object(ctx *c, const cJSON *n) {
  if (cJSON_IsObject(n)) return HS_OK;
  return fail(c, HS_ETYPE, "expected an object, got %s", sim_json_type(n));
}

static hs_status missing(ctx *c, const char *key) {
  size_t mark = sim_jpath_key(&c->path, key);
  hs_status st = fail(c, HS_EMISSING, "required key is missing");
  sim_jpath_pop(&c->path, mark);
  return st;
}

/* An integer in [lo, hi]; absent: def, or an error when required. */
static hs_status get_uint(ctx *c, const cJSON *obj, const char *key, bool required, double def,
                          double lo, double hi, double *out) {
  const cJSON *n = member(obj, key);
  if (!n) {
    if (required) return missing(c, key);
    *out = def;
    return HS_OK;
  }
  size_t mark = sim_jpath_key(&c->path, key);
  hs_status st = HS_OK;
  if (!cJSON_IsNumber(n))
    st = fail(c, HS_ETYPE, "expected an integer in [%.0f, %.0f], got %s", lo, hi,
              sim_json_type(n));
  else if (!isfinite(n->valuedouble) || floor(n->valuedouble) != n->valuedouble ||
           n->valuedouble < lo || n->valuedouble > hi)
    st = fail(c, HS_ERANGE, "expected an integer in [%.0f, %.0f], got %.17g", lo, hi,
              n->valuedouble);
  else
    *out = n->valuedouble;
  sim_jpath_pop(&c->path, mark);
  return st;
}

/* A finite number with lo <(=) v <(=) hi (hi may be INFINITY). */
static hs_status get_num(ctx *c, const cJSON *obj, const char *key, bool required, double def,
                         double lo, bool lo_open, double hi, bool hi_open, double *out) {
  const cJSON *n = member(obj, key);
  if (!n) {
    if (required) return missing(c, key);
    *out = def;
    return HS_OK;
  }
  size_t mark = sim_jpath_key(&c->path, key);
  char range[96];
  if (isinf(hi))
    snprintf(range, sizeof range, "a finite number %s %g", lo_open ? ">" : ">=", lo);
  else
    snprintf(range, sizeof range, "a number in %s%g, %g%s", lo_open ? "(" : "[", lo, hi,
             hi_open ? ")" : "]");
  hs_status st = HS_OK;
  if (!cJSON_IsNumber(n))
    st = fail(c, HS_ETYPE, "expected %s, got %s", range, sim_json_type(n));
  else if (!isfinite(n->valuedouble) || n->valuedouble < lo || (lo_open && n->valuedouble == lo) ||
           n->valuedouble > hi || (hi_open && n->valuedouble == hi))
    st = fail(c, HS_ERANGE, "expected %s, got %.17g", range, n->valuedouble);
  else
    *out = n->valuedouble;
  sim_jpath_pop(&c->path, mark);
  return st;
}

/* A string (heap copy in *out); absent: a copy of def, or NULL if def is NULL. */
static hs_status get_str(ctx *c, const cJSON *obj, const char *key, bool required,
                         const char *def, char **out) {
  const cJSON *n = member(obj, key);
  if (!n) {
    if (required) return missing(c, key);
    *out = def ? hs_strdup(def) : NULL;
    return HS_OK;
  }
  size_t mark = sim_jpath_key(&c->path, key);
  hs_status st = HS_OK;
  if (!cJSON_IsString(n))
    st = fail(c, HS_ETYPE, "expected a string, got %s", sim_json_type(n));
  else if (!n->valuestring[0])
    st = fail(c, HS_EINVAL, "empty string");
  else
    *out = hs_strdup(n->valuestring);
  sim_jpath_pop(&c->path, mark);
  return st;
}

/* Names end up in paths, CSV columns and expanded "<name>-<k>" names. */
static hs_status check_name(ctx *c, const char *name) {
  size_t len = strlen(name);
  bool ok = len > 0 && len <= SCN_MAX_NAME;
  for (size_t i = 0; i < len && ok; i++) {
    char ch = name[i];
    ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '-';
  }
  if (ok) return HS_OK;
  char b[80];
  return fail(c, HS_EINVAL,
              "\"%s\" is not a valid name (1 to %d of A-Z a-z 0-9 _ -, so it can appear in "
              "--set keys and CSV files)",
              shown(name, b, sizeof b), SCN_MAX_NAME);
}

static hs_status get_name(ctx *c, const cJSON *obj, const char *key, bool required, char **out) {
  hs_status st = get_str(c, obj, key, required, NULL, out);
  if (st || !*out) return st;
  size_t mark = sim_jpath_key(&c->path, key);
  st = check_name(c, *out);
  sim_jpath_pop(&c->path, mark);
  return st;
}

static const char *one_of(const char *v, const char *const *choices) {
  for (size_t i = 0; choices[i]; i++)
    if (!strcmp(v, choices[i])) return choices[i];
  return NULL;
}

static hs_status get_choice(ctx *c, const cJSON *obj, const char *key, const char *def,
                            const char *const *choices, char **out) {
  hs_status st = get_str(c, obj, key, false, def, out);
  if (st) return st;
  if (one_of(*out, choices)) return HS_OK;
  char list[200] = "", b[80];
  size_t used = 0;
  for (size_t i = 0; choices[i]; i++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
    if (w < 0 || (size_t)w >= sizeof list - used) break;
    used += (size_t)w;
  }
  size_t mark = sim_jpath_key(&c->path, key);
  st = fail(c, HS_EINVAL, "unknown value \"%s\" (one of: %s)", shown(*out, b, sizeof b), list);
  sim_jpath_pop(&c->path, mark);
  return st;
}

/* --- paths ------------------------------------------------------------------- */

static char *join_path(const char *dir, const char *rel) {
  if (rel[0] == '/' || !dir || !dir[0] || !strcmp(dir, ".")) return hs_strdup(rel);
  size_t a = strlen(dir), b = strlen(rel);
  char *p = hs_malloc(a + b + 2);
  memcpy(p, dir, a);
  p[a] = '/';
  memcpy(p + a + 1, rel, b + 1);
  return p;
}

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return hs_strdup(".");
  if (slash == path) return hs_strdup("/");
  size_t n = (size_t)(slash - path);
  char *d = hs_malloc(n + 1);
  memcpy(d, path, n);
  d[n] = '\0';
  return d;
}

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

/* --- sections ------------------------------------------------------------------ */

static hs_status parse_network(ctx *c, const cJSON *root) {
  hs_scenario *sc = &c->s->pub;
  const cJSON *net = member(root, "network");
  if (!net) return missing(c, "network");
  size_t m0 = sim_jpath_key(&c->path, "network");
  static const char *const keys[] = {"server", "links", NULL};
  hs_status st = need_object(c, net);
  if (!st) st = check_keys(c, net, keys);
  if (st) return st;
  const cJSON *links = member(net, "links");
  if (!links) return missing(c, "links");
  size_t m1 = sim_jpath_key(&c->path, "links");
  if ((st = need_object(c, links))) return st;
  if (!links->child) return fail(c, HS_EINVAL, "no links (give at least one)");
  size_t n = 0;
  for (const cJSON *l = links->child; l; l = l->next) n++;
  sc->links = hs_calloc(n, sizeof *sc->links);
  for (const cJSON *l = links->child; l; l = l->next) {
    size_t m2 = sim_jpath_key(&c->path, l->string);
    if ((st = check_name(c, l->string))) return st;
    for (size_t j = 0; j < sc->nlinks; j++)
      if (!strcmp(sc->links[j].name, l->string)) return fail(c, HS_EKEY, "key appears twice");
    hs_link_spec *ls = &sc->links[sc->nlinks++];
    ls->name = hs_strdup(l->string);
    static const char *const lkeys[] = {"bandwidth_mbps", "latency_ms", NULL};
    if ((st = need_object(c, l)) || (st = check_keys(c, l, lkeys)) ||
        (st = get_num(c, l, "bandwidth_mbps", true, 0, 0, true, INFINITY, false,
                      &ls->bandwidth_mbps)) ||
        (st = get_num(c, l, "latency_ms", false, 0, 0, false, INFINITY, false, &ls->latency_ms)))
      return st;
    sim_jpath_pop(&c->path, m2);
  }
  sim_jpath_pop(&c->path, m1);
  const char *only = sc->nlinks == 1 ? sc->links[0].name : NULL;
  if (!member(net, "server") && !only)
    return fail(c, HS_EMISSING,
                "\"server\" is required when there is more than one link (name the server's link)");
  if ((st = get_name(c, net, "server", false, &sc->server_link))) return st;
  if (!sc->server_link) sc->server_link = hs_strdup(only);
  if (!hs_scenario_link(sc, sc->server_link)) {
    sim_jpath_key(&c->path, "server");
    return fail(c, HS_ENOENT, "no link \"%s\" in network.links", sc->server_link);
  }
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

/* Load (or reuse) the profile for devices[i] and check it has the task. */
static hs_status resolve_profile(ctx *c, hs_device_spec *d) {
  sim_scn *s = c->s;
  size_t mark = sim_jpath_key(&c->path, "profile");
  hs_error e = {0};
  char *path = hs_profile_find(d->profile_name, c->dir, &e);
  if (!path) return fail(c, e.status ? e.status : HS_ENOENT, "%s", e.msg);
  const hs_profile *p = NULL;
  for (size_t i = 0; i < s->nprofiles && !p; i++)
    if (!strcmp(s->profile_paths[i], path)) p = s->profiles[i];
  if (!p) {
    hs_profile *np = hs_profile_load(path, &e);
    if (!np) {
      hs_free(path);
      return fail(c, e.status ? e.status : HS_EINVAL, "%s", e.msg);
    }
    s->profiles = hs_reallocarray(s->profiles, s->nprofiles + 1, sizeof *s->profiles);
    s->profile_paths =
        hs_reallocarray(s->profile_paths, s->nprofiles + 1, sizeof *s->profile_paths);
    s->profiles[s->nprofiles] = np;
    s->profile_paths[s->nprofiles++] = path;
    path = NULL;
    p = np;
  }
  hs_free(path);
  d->profile = p;
  if (!hs_profile_task(p, c->s->pub.task)) {
    char tasks[200] = "";
    size_t used = 0;
    for (size_t i = 0; i < hs_profile_task_count(p); i++) {
      int w = snprintf(tasks + used, sizeof tasks - used, "%s%s", i ? ", " : "",
                       hs_profile_task_at(p, i)->task);
      if (w < 0 || (size_t)w >= sizeof tasks - used) break;
      used += (size_t)w;
    }
    return fail(c, HS_ENOENT, "profile \"%s\" has no task \"%s\" (it has: %s)",
                hs_profile_name(p), c->s->pub.task, tasks);
  }
  sim_jpath_pop(&c->path, mark);
  return HS_OK;
}

static hs_status parse_device(ctx *c, const cJSON *e, hs_device_spec *d) {
  hs_scenario *sc = &c->s->pub;
  static const char *const keys[] = {"name",         "profile",     "link",  "count",
                                     "speed_spread", "power_spread", "speed_trace", "owner",
                                     NULL};
  hs_status st;
  double count;
  if ((st = need_object(c, e)) || (st = check_keys(c, e, keys)) ||
      (st = get_name(c, e, "name", true, &d->name)) ||
      (st = get_str(c, e, "profile", true, NULL, &d->profile_name)) ||
      (st = get_uint(c, e, "count", false, 1, 1, UINT32_MAX, &count)) ||
      (st = get_num(c, e, "speed_spread", false, 0, 0, false, 3, false, &d->speed_spread)) ||
      (st = get_num(c, e, "power_spread", false, 0, 0, false, 3, false, &d->power_spread)) ||
      (st = get_str(c, e, "owner", false, NULL, &d->owner)) ||
      (st = get_str(c, e, "speed_trace", false, NULL, &d->speed_trace_name)))
    return st;
  d->count = (uint32_t)count;
  if (!member(e, "link") && sc->nlinks != 1)
    return fail(c, HS_EMISSING,
                "\"link\" is required when network.links has more than one link");
  if ((st = get_name(c, e, "link", false, &d->link))) return st;
  if (!d->link) d->link = hs_strdup(sc->links[0].name);
  if (!hs_scenario_link(sc, d->link)) {
    sim_jpath_key(&c->path, "link");
    return fail(c, HS_ENOENT, "no link \"%s\" in network.links", d->link);
  }
  if ((st = resolve_profile(c, d))) return st;
  if (d->speed_trace_name) {
    size_t mark = sim_jpath_key(&c->path, "speed_trace");
    d->speed_trace_path = join_path(c->dir, d->speed_trace_name);
    hs_error err = {0};
    d->speed_trace = hs_speed_trace_load(d->speed_trace_path, &err);
    if (!d->speed_trace) return fail(c, err.status ? err.status : HS_EINVAL, "%s", err.msg);
    sim_jpath_pop(&c->path, mark);
  }
  return HS_OK;
}

static int ix_cmp(const void *a, const void *b) {
  const name_ix *x = a, *y = b;
  int r = strcmp(x->name, y->name);
  if (r) return r;
  if (x->entry != y->entry) return x->entry < y->entry ? -1 : 1;
  return x->n < y->n ? -1 : x->n > y->n;
}

static size_t ndigits(uint32_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    n++;
  }
  return n;
}

/* Expand counts into the device table and the sorted name index. */
static hs_status expand_devices(ctx *c) {
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  size_t arena = 0, nix = 0;
  for (size_t i = 0; i < sc->ndevices; i++) {
    const hs_device_spec *d = &sc->devices[i];
    nix += d->count + (d->count > 1);
    if (d->count > 1) {
      size_t len = strlen(d->name) + 2; /* '-' and NUL */
      for (uint32_t k = 0; k < d->count; k++) arena += len + ndigits(k);
    }
  }
  s->refs = hs_malloc(sc->total_devices * sizeof *s->refs);
  s->name_arena = hs_malloc(arena + 1);
  s->ix = hs_malloc(nix * sizeof *s->ix);
  size_t pos = 0, at = 0;
  for (size_t i = 0; i < sc->ndevices; i++) {
    hs_device_spec *d = &sc->devices[i];
    d->first = pos;
    if (d->count > 1) s->ix[s->nix++] = (name_ix){d->name, pos, d->count, i};
    for (uint32_t k = 0; k < d->count; k++, pos++) {
      const char *name = d->name;
      if (d->count > 1) {
        char *dst = s->name_arena + at;
        int w = snprintf(dst, arena + 1 - at, "%s-%lu", d->name, (unsigned long)k);
        at += (size_t)w + 1;
        name = dst;
      }
      s->refs[pos] = (hs_device_ref){name, i, k};
      s->ix[s->nix++] = (name_ix){name, pos, 1, i};
    }
  }
  qsort(s->ix, s->nix, sizeof *s->ix, ix_cmp);
  for (size_t j = 1; j < s->nix; j++) {
    const name_ix *a = &s->ix[j - 1], *b = &s->ix[j];
    if (strcmp(a->name, b->name)) continue;
    /* Report at the later entry; describe what it clashes with. */
    const name_ix *later = a->entry > b->entry ? a : b, *earlier = later == a ? b : a;
    sim_jpath_key(&c->path, "devices");
    sim_jpath_index(&c->path, later->entry);
    sim_jpath_key(&c->path, "name");
    char what[160], b1[80];
    const hs_device_spec *de = &sc->devices[earlier->entry];
    if (earlier->n == 1 && de->count > 1)
      snprintf(what, sizeof what, "device %lu of devices[%zu] (\"%s\", count %lu)",
               (unsigned long)(earlier->first - de->first), earlier->entry,
               shown(de->name, b1, sizeof b1), (unsigned long)de->count);
    else
      snprintf(what, sizeof what, "devices[%zu]", earlier->entry);
    if (later->n == 1 && sc->devices[later->entry].count > 1)
      return fail(c, HS_EINVAL, "expanded name \"%s\" is already the name of %s", later->name,
                  what);
    return fail(c, HS_EINVAL, "\"%s\" is already the name of %s", later->name, what);
  }
  return HS_OK;
}

static hs_status parse_devices(ctx *c, const cJSON *root) {
  hs_scenario *sc = &c->s->pub;
  const cJSON *devs = member(root, "devices");
  if (!devs) return missing(c, "devices");
  size_t m0 = sim_jpath_key(&c->path, "devices");
  if (!cJSON_IsArray(devs))
    return fail(c, HS_ETYPE, "expected an array, got %s", sim_json_type(devs));
  size_t n = (size_t)cJSON_GetArraySize(devs);
  if (!n) return fail(c, HS_EINVAL, "no devices (give at least one)");
  sc->devices = hs_calloc(n, sizeof *sc->devices);
  sc->ndevices = n;
  size_t i = 0;
  double total = 0;
  for (const cJSON *e = devs->child; e; e = e->next, i++) {
    size_t m1 = sim_jpath_index(&c->path, i);
    hs_status st = parse_device(c, e, &sc->devices[i]);
    if (st) return st;
    total += sc->devices[i].count;
    if (total > SCN_MAX_TOTAL_DEVICES) {
      sim_jpath_key(&c->path, "count");
      return fail(c, HS_ERANGE, "more than %u devices in total", SCN_MAX_TOTAL_DEVICES);
    }
    sim_jpath_pop(&c->path, m1);
  }
  sc->total_devices = (size_t)total;
  sim_jpath_pop(&c->path, m0);
  return expand_devices(c);
}

typedef struct regime_kind {
  const char *name;
  unsigned opts; /* bit per option below that applies */
} regime_kind;

enum { R_STEPS = 1, R_COLL = 2, R_SILOS = 4, R_ASYNC = 8 };
static const regime_kind regime_kinds[] = {
    {"pma", 0},
    {"ddp", R_STEPS | R_COLL},
    {"hfl-ddp", R_STEPS | R_COLL | R_SILOS},
    {"fedasync", R_ASYNC},
};
static const struct {
  const char *key;
  unsigned bit;
} regime_opts[] = {
    {"steps_per_round", R_STEPS}, {"collective", R_COLL},    {"silos", R_SILOS},
    {"staleness", R_ASYNC},       {"staleness_a", R_ASYNC},  {"staleness_b", R_ASYNC},
    {"mixing_alpha", R_ASYNC},
};
#define NREGIME_KINDS (sizeof regime_kinds / sizeof regime_kinds[0])
#define NREGIME_OPTS (sizeof regime_opts / sizeof regime_opts[0])

static hs_status parse_silo(ctx *c, const cJSON *e, size_t si) {
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  hs_silo_spec *silo = &sc->regime.silos[si];
  static const char *const keys[] = {"name", "members", "fabric", NULL};
  hs_status st;
  if ((st = need_object(c, e)) || (st = check_keys(c, e, keys)) ||
      (st = get_name(c, e, "name", true, &silo->name)))
    return st;
  for (size_t j = 0; j < si; j++)
    if (!strcmp(sc->regime.silos[j].name, silo->name)) {
      sim_jpath_key(&c->path, "name");
      return fail(c, HS_EINVAL, "silo \"%s\" is already regime.silos[%zu]", silo->name, j);
    }
  const cJSON *mem = member(e, "members");
  if (!mem) return missing(c, "members");
  size_t m1 = sim_jpath_key(&c->path, "members");
  if (!cJSON_IsArray(mem))
    return fail(c, HS_ETYPE, "expected an array of device names, got %s", sim_json_type(mem));
  size_t n = (size_t)cJSON_GetArraySize(mem);
  if (!n) return fail(c, HS_EINVAL, "a silo needs at least one member");
  silo->members = hs_calloc(n, sizeof *silo->members);
  const char *common = NULL;
  bool same = true;
  size_t j = 0;
  for (const cJSON *m = mem->child; m; m = m->next, j++) {
    size_t m2 = sim_jpath_index(&c->path, j);
    if (!cJSON_IsString(m))
      return fail(c, HS_ETYPE, "expected a device name, got %s", sim_json_type(m));
    silo->members[silo->nmembers++] = hs_strdup(m->valuestring);
    name_ix key = {m->valuestring, 0, 0, 0};
    const name_ix *hit = NULL;
    size_t lo = 0, hi = s->nix;
    while (lo < hi && !hit) {
      size_t mid = lo + (hi - lo) / 2;
      int r = strcmp(key.name, s->ix[mid].name);
      if (r == 0) hit = &s->ix[mid];
      else if (r < 0) hi = mid;
      else lo = mid + 1;
    }
    char b[80];
    if (!hit)
      return fail(c, HS_ENOENT,
                  "no device \"%s\" (name an entry of devices, or \"<name>-<k>\" for one device "
                  "of an entry with count > 1)",
                  shown(m->valuestring, b, sizeof b));
    for (size_t k = hit->first; k < hit->first + hit->n; k++) {
      if (s->silo_of[k] != UINT32_MAX)
        return fail(c, HS_EINVAL, "device \"%s\" is already in silo \"%s\"", s->refs[k].name,
                    sc->regime.silos[s->silo_of[k]].name);
      s->silo_of[k] = (uint32_t)si;
    }
    const char *link = sc->devices[hit->entry].link;
    if (!common) common = link;
    else if (strcmp(common, link)) same = false;
    sim_jpath_pop(&c->path, m2);
  }
  sim_jpath_pop(&c->path, m1);
  if (!member(e, "fabric") && !same)
    return fail(c, HS_EMISSING,
                "\"fabric\" is required: the members attach by different links (name the link "
                "of the intra-silo all-reduce)");
  if ((st = get_name(c, e, "fabric", false, &silo->fabric))) return st;
  if (!silo->fabric) silo->fabric = hs_strdup(common);
  if (!hs_scenario_link(sc, silo->fabric)) {
    sim_jpath_key(&c->path, "fabric");
    return fail(c, HS_ENOENT, "no link \"%s\" in network.links", silo->fabric);
  }
  return HS_OK;
}

static hs_status parse_regime(ctx *c, const cJSON *root) {
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  hs_regime_spec *r = &sc->regime;
  static const cJSON empty = {0};
  const cJSON *reg = member(root, "regime");
  size_t m0 = sim_jpath_key(&c->path, "regime");
  hs_status st;
  if (reg && (st = need_object(c, reg))) return st;
  if (!reg) reg = &empty;
  static const char *const keys[] = {"kind",      "steps_per_round", "collective",
                                     "silos",     "staleness",       "staleness_a",
                                     "staleness_b", "mixing_alpha",  NULL};
  static const char *const kinds[] = {"pma", "ddp", "hfl-ddp", "fedasync", NULL};
  if ((st = check_keys(c, reg, keys)) || (st = get_choice(c, reg, "kind", "pma", kinds, &r->kind)))
    return st;
  unsigned opts = 0;
  for (size_t i = 0; i < NREGIME_KINDS; i++)
    if (!strcmp(regime_kinds[i].name, r->kind)) opts = regime_kinds[i].opts;
  for (size_t i = 0; i < NREGIME_OPTS; i++) {
    if ((opts & regime_opts[i].bit) || !member(reg, regime_opts[i].key)) continue;
    char where[64] = "";
    size_t used = 0;
    for (size_t k = 0; k < NREGIME_KINDS; k++)
      if (regime_kinds[k].opts & regime_opts[i].bit) {
        int w = snprintf(where + used, sizeof where - used, "%s%s", used ? ", " : "",
                         regime_kinds[k].name);
        if (w > 0) used += (size_t)w;
      }
    sim_jpath_key(&c->path, regime_opts[i].key);
    return fail(c, HS_EINVAL, "does not apply to regime \"%s\" (only to: %s)", r->kind, where);
  }
  if (opts & R_STEPS) {
    double per = (double)sc->batch_size * (double)sc->total_devices;
    double def = floor((double)sc->samples_per_round / per);
    if (def < 1) def = 1;
    if (def > 1e7) def = 1e7;
    double v;
    if ((st = get_uint(c, reg, "steps_per_round", false, def, 1, 1e7, &v))) return st;
    r->steps_per_round = (uint32_t)v;
    /* The flat all-reduces of the collective registry (hs_collective.h). */
    static const char *const colls[] = {"ring", "tree", "star", NULL};
    if ((st = get_choice(c, reg, "collective", "ring", colls, &r->collective))) return st;
  }
  if (opts & R_SILOS) {
    const cJSON *silos = member(reg, "silos");
    if (!silos) return missing(c, "silos");
    size_t m1 = sim_jpath_key(&c->path, "silos");
    if (!cJSON_IsArray(silos))
      return fail(c, HS_ETYPE, "expected an array of silos, got %s", sim_json_type(silos));
    size_t n = (size_t)cJSON_GetArraySize(silos);
    if (!n) return fail(c, HS_EINVAL, "hfl-ddp needs at least one silo");
    r->silos = hs_calloc(n, sizeof *r->silos);
    s->silo_of = hs_malloc(sc->total_devices * sizeof *s->silo_of);
    for (size_t k = 0; k < sc->total_devices; k++) s->silo_of[k] = UINT32_MAX;
    size_t i = 0;
    for (const cJSON *e = silos->child; e; e = e->next, i++) {
      r->nsilos = i + 1;
      size_t m2 = sim_jpath_index(&c->path, i);
      if ((st = parse_silo(c, e, i))) return st;
      sim_jpath_pop(&c->path, m2);
    }
    for (size_t k = 0; k < sc->total_devices; k++)
      if (s->silo_of[k] == UINT32_MAX)
        return fail(c, HS_EINVAL, "device \"%s\" is in no silo (hfl-ddp puts every device in one)",
                    s->refs[k].name);
    sim_jpath_pop(&c->path, m1);
  }
  if (opts & R_ASYNC) {
    static const char *const stal[] = {"constant", "polynomial", "hinge", NULL};
    if ((st = get_choice(c, reg, "staleness", "polynomial", stal, &r->staleness))) return st;
    bool constant = !strcmp(r->staleness, "constant"), hinge = !strcmp(r->staleness, "hinge");
    if (constant && member(reg, "staleness_a")) {
      sim_jpath_key(&c->path, "staleness_a");
      return fail(c, HS_EINVAL, "does not apply to staleness \"constant\"");
    }
    if (!hinge && member(reg, "staleness_b")) {
      sim_jpath_key(&c->path, "staleness_b");
      return fail(c, HS_EINVAL, "applies only to staleness \"hinge\"");
    }
    if ((st = get_num(c, reg, "staleness_a", false, hinge ? 10 : constant ? 0 : 0.5, 0, false,
                      INFINITY, false, &r->staleness_a)) ||
        (st = get_num(c, reg, "staleness_b", false, hinge ? 4 : 0, 0, false, INFINITY, false,
                      &r->staleness_b)) ||
        (st = get_num(c, reg, "mixing_alpha", false, 0.6, 0, true, 1, false, &r->mixing_alpha)))
      return st;
  }
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
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
  else
    snprintf(buf, cap, "%.17g", d);
  return true;
}

static hs_status parse_policy(ctx *c, const cJSON *root) {
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  static const cJSON empty = {0};
  const cJSON *pol = member(root, "policy");
  size_t m0 = sim_jpath_key(&c->path, "policy");
  hs_status st;
  if (pol && (st = need_object(c, pol))) return st;
  if (!pol) pol = &empty;
  char *kind = NULL;
  if ((st = get_str(c, pol, "kind", false, "equal", &kind))) return st;
  hs_error e = {0};
  st = hs_policy_config_init(&sc->policy, kind, &e);
  hs_free(kind);
  /* The policies library's messages start with the key ("kind: ..."). */
  if (st) {
    sim_jpath_key(&c->path, "kind");
    return fail(c, st, "%s", strncmp(e.msg, "kind: ", 6) ? e.msg : e.msg + 6);
  }
  /* The regimes' registry says which policies it can run (one source of truth
   * for validate and run). */
  const sim_regime *rg = sim_regime_find(sc->regime.kind);
  if (rg && rg->policy_applies && !rg->policy_applies(sc->policy.kind)) {
    sim_jpath_key(&c->path, "kind");
    return fail(c, HS_EINVAL, "policy \"%s\" does not apply to regime %s", sc->policy.kind,
                sc->regime.kind);
  }
  sc->policy.seed = sc->seed;
  for (const cJSON *m = pol->child; m; m = m->next) {
    if (!strcmp(m->string, "kind")) continue;
    char shownkey[80];
    size_t m1 = sim_jpath_key(&c->path, shown(m->string, shownkey, sizeof shownkey));
    for (const cJSON *d = pol->child; d != m; d = d->next)
      if (!strcmp(d->string, m->string)) return fail(c, HS_EKEY, "key appears twice");
    if (!strcmp(m->string, "steps_per_round"))
      return fail(c, HS_EKEY, "set regime.steps_per_round instead (the regime owns it)");
    char text[128];
    if (!policy_text(m, text, sizeof text))
      return fail(c, HS_ETYPE, "expected a number, got %s", sim_json_type(m));
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
      return fail(c, st, "%s", why);
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
  const cJSON *t = member(root, "telemetry");
  static const cJSON empty = {0};
  size_t m0 = sim_jpath_key(&c->path, "telemetry");
  hs_status st;
  if (t && (st = need_object(c, t))) return st;
  if (!t) t = &empty;
  static const char *const keys[] = {"time_noise", "energy_noise", NULL};
  if ((st = check_keys(c, t, keys)) ||
      (st = get_num(c, t, "time_noise", false, 0, 0, false, 1, false,
                    &sc->telemetry_time_noise)) ||
      (st = get_num(c, t, "energy_noise", false, 0, 0, false, 1, false,
                    &sc->telemetry_energy_noise)))
    return st;
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

static hs_status parse_root(ctx *c, const cJSON *root) {
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  hs_status st;
  if ((st = need_object(c, root))) return st;
  static const char *const keys[] = {
      "name",       "description", "seed",   "task",    "model_bytes", "rounds",
      "samples_per_round", "batch_size", "regime", "policy",  "devices",     "network",
      "telemetry",  "switch_off_unselected", NULL};
  if ((st = check_keys(c, root, keys))) return st;
  double seed, rounds, spr, batch;
  if ((st = get_str(c, root, "name", false, NULL, &sc->name))) return st;
  if (sc->name) {
    for (const char *p = sc->name; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f) {
        sim_jpath_key(&c->path, "name");
        return fail(c, HS_EINVAL, "control character in the name");
      }
  } else {
    sc->name = stem_of(sc->path);
  }
  if ((st = get_str(c, root, "description", false, NULL, &s->description)) ||
      (st = get_uint(c, root, "seed", false, 1, 0, SCN_MAX_U53, &seed)) ||
      (st = get_str(c, root, "task", false, "mnist", &sc->task)) ||
      (st = get_num(c, root, "model_bytes", true, 0, 0, true, INFINITY, false,
                    &sc->model_bytes)) ||
      (st = get_uint(c, root, "rounds", true, 0, 1, 1e9, &rounds)) ||
      (st = get_uint(c, root, "samples_per_round", true, 0, 1, SCN_MAX_U53, &spr)) ||
      (st = get_uint(c, root, "batch_size", false, 32, 1, 1e9, &batch)))
    return st;
  sc->seed = (uint64_t)seed;
  sc->rounds = (uint32_t)rounds;
  sc->samples_per_round = (uint64_t)spr;
  sc->batch_size = (uint32_t)batch;
  const cJSON *sw = member(root, "switch_off_unselected");
  if (sw && !cJSON_IsBool(sw)) {
    sim_jpath_key(&c->path, "switch_off_unselected");
    return fail(c, HS_ETYPE, "expected true or false, got %s", sim_json_type(sw));
  }
  sc->switch_off_unselected = sw && cJSON_IsTrue(sw);
  if ((st = parse_network(c, root)) || (st = parse_devices(c, root)) ||
      (st = parse_regime(c, root)) || (st = parse_policy(c, root)) ||
      (st = parse_telemetry(c, root)))
    return st;
  /* Every participant gets at least min_samples, so the budget must cover them. */
  uint64_t min_samples = hs_policy_config_min_samples(&sc->policy);
  double floor_total = (double)sc->total_devices * (double)min_samples;
  if ((double)sc->samples_per_round < floor_total) {
    sim_jpath_key(&c->path, "samples_per_round");
    return fail(c, HS_ERANGE,
                "%llu is below the floor: %zu devices x policy.min_samples %llu = %.0f",
                (unsigned long long)sc->samples_per_round, sc->total_devices,
                (unsigned long long)min_samples, floor_total);
  }
  return HS_OK;
}

/* --- overrides ------------------------------------------------------------------ */

static hs_status apply_one(ctx *c, cJSON *root, const hs_override *o, ovr_mark *mark) {
  sim_jseg *segs;
  size_t n;
  hs_error e = {0};
  char b[96];
  hs_status st = sim_jpath_parse(o->key, &segs, &n, &e);
  if (!st) {
    sim_jpath_format(segs, n, mark->path, sizeof mark->path);
    mark->key = o->key;
    hs_free(segs);
    st = sim_json_set(root, o->key, o->value, &e);
  }
  if (st)
    hs_error_set(c->err, st, "%s: --set %s: %s", c->origin, shown(o->key, b, sizeof b), e.msg);
  return st;
}

static hs_status apply_overrides(ctx *c, cJSON *root, const hs_override *ovr, size_t novr,
                                 ovr_mark *marks) {
  if (!novr) return HS_OK;
  if (!cJSON_IsObject(root)) {
    sim_jpath_init(&c->path);
    return fail(c, HS_ETYPE, "expected an object, got %s", sim_json_type(root));
  }
  /* Optional sections exist implicitly, so "policy.w_e" works on a file that
   * relies on the default policy. */
  static const char *const sections[] = {"regime", "policy", "network", "telemetry"};
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
    if (!member(root, sections[i])) cJSON_AddItemToObject(root, sections[i], cJSON_CreateObject());
  size_t k = 0;
  /* policy.kind first: a new kind starts from its own defaults. */
  for (size_t i = 0; i < novr; i++) {
    if (strcmp(ovr[i].key, "policy.kind")) continue;
    cJSON *pol = member(root, "policy");
    if (cJSON_IsObject(pol))
      while (pol->child) cJSON_Delete(cJSON_DetachItemViaPointer(pol, pol->child));
    hs_status st = apply_one(c, root, &ovr[i], &marks[k++]);
    if (st) return st;
  }
  for (size_t i = 0; i < novr; i++) {
    if (!strcmp(ovr[i].key, "policy.kind")) continue;
    hs_status st = apply_one(c, root, &ovr[i], &marks[k++]);
    if (st) return st;
  }
  c->nmarks = k;
  return HS_OK;
}

hs_status hs_override_parse(char *arg, hs_override *out, hs_error *err) {
  char *eq = strchr(arg, '=');
  char b[96];
  if (!eq || eq == arg)
    return hs_error_set(err, HS_EINVAL, "--set %s: expected key=value (e.g. policy.w_e=0.25)",
                        shown(arg, b, sizeof b));
  *eq = '\0';
  out->key = arg;
  out->value = eq + 1;
  return HS_OK;
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

hs_scenario *hs_scenario_parse(const char *json_text, const char *origin, const char *base_dir,
                               const hs_override *ovr, size_t novr, hs_error *err) {
  sim_scn *s = hs_calloc(1, sizeof *s);
  s->pub.path = hs_strdup(origin);
  s->pub.dir = hs_strdup(base_dir && base_dir[0] ? base_dir : ".");
  ctx c = {origin, s->pub.dir, {{0}, 0}, NULL, 0, err, s};
  sim_jpath_init(&c.path);
  ovr_mark *marks = novr ? hs_calloc(novr, sizeof *marks) : NULL;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(json_text, &end, 1);
  hs_status st = HS_OK;
  if (!root) {
    size_t line, col, at = end ? (size_t)(end - json_text) : 0;
    line_col(json_text, at, &line, &col);
    char near[24];
    shown(json_text + at, near, sizeof near);
    st = hs_error_set(err, HS_EPARSE, "%s: line %zu, column %zu: malformed JSON%s%s%s", origin,
                      line, col, near[0] ? " near \"" : " (unexpected end of file)", near,
                      near[0] ? "\"" : "");
  }
  if (!st) st = apply_overrides(&c, root, ovr, novr, marks);
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
  char *text = hs_read_file(path, NULL, &e);
  if (!text) {
    /* hs_read_file names the path; say what it is. */
    hs_error_set(err, e.status, "%s (scenario file)", e.msg);
    return NULL;
  }
  char *dir = dir_of(path);
  hs_scenario *sc = hs_scenario_parse(text, path, dir, ovr, novr, err);
  hs_free(dir);
  hs_free(text);
  return sc;
}

void hs_scenario_destroy(hs_scenario *sc) {
  if (!sc) return;
  sim_scn *s = (sim_scn *)sc;
  for (size_t i = 0; i < sc->ndevices; i++) {
    hs_device_spec *d = &sc->devices[i];
    hs_free(d->name);
    hs_free(d->profile_name);
    hs_free(d->link);
    hs_free(d->speed_trace_path);
    hs_free(d->speed_trace_name);
    hs_speed_trace_destroy((hs_speed_trace *)(uintptr_t)d->speed_trace);
    hs_free(d->owner);
  }
  hs_free(sc->devices);
  for (size_t i = 0; i < sc->regime.nsilos; i++) {
    hs_silo_spec *silo = &sc->regime.silos[i];
    hs_free(silo->name);
    for (size_t j = 0; j < silo->nmembers; j++) hs_free(silo->members[j]);
    hs_free(silo->members);
    hs_free(silo->fabric);
  }
  hs_free(sc->regime.silos);
  hs_free(sc->regime.kind);
  hs_free(sc->regime.collective);
  hs_free(sc->regime.staleness);
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
  hs_free(s->refs);
  hs_free(s->name_arena);
  hs_free(s->ix);
  hs_free(s->silo_of);
  hs_free(s->description);
  hs_free(s);
}

const char *hs_scenario_default_path(void) { return HS_SCENARIO_DIR "/testbed-mnist-pma.json"; }

const hs_link_spec *hs_scenario_link(const hs_scenario *sc, const char *name) {
  for (size_t i = 0; i < sc->nlinks; i++)
    if (!strcmp(sc->links[i].name, name)) return &sc->links[i];
  return NULL;
}

const hs_device_ref *hs_scenario_devices(const hs_scenario *sc) {
  return ((const sim_scn *)sc)->refs;
}

size_t hs_scenario_find_device(const hs_scenario *sc, const char *name) {
  const sim_scn *s = (const sim_scn *)sc;
  size_t lo = 0, hi = s->nix;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = strcmp(name, s->ix[mid].name);
    if (r == 0) return s->ix[mid].n == 1 ? s->ix[mid].first : SIZE_MAX;
    if (r < 0) hi = mid;
    else lo = mid + 1;
  }
  return SIZE_MAX;
}

const uint32_t *hs_scenario_silo_of(const hs_scenario *sc) {
  return ((const sim_scn *)sc)->silo_of;
}

/* --- printing ------------------------------------------------------------------- */

static void add_num(cJSON *o, const char *key, double v) {
  if (!cJSON_AddNumberToObject(o, key, v)) abort();
}
static void add_str(cJSON *o, const char *key, const char *v) {
  if (!cJSON_AddStringToObject(o, key, v)) abort();
}
static cJSON *add_obj(cJSON *o, const char *key) {
  cJSON *n = cJSON_AddObjectToObject(o, key);
  if (!n) abort();
  return n;
}

static void policy_key(const char *key, const char *value_text, void *userdata) {
  cJSON *o = userdata;
  /* The policy's own steps_per_round comes from the regime; its seed from the
   * scenario seed unless the file pinned one (the caller adds that back). */
  if (!strcmp(key, "steps_per_round") || !strcmp(key, "seed")) return;
  add_num(o, key, strtod(value_text, NULL));
}

char *hs_scenario_to_json(const hs_scenario *sc) {
  const sim_scn *s = (const sim_scn *)sc;
  cJSON *root = cJSON_CreateObject();
  if (!root) abort();
  add_str(root, "name", sc->name);
  if (s->description) add_str(root, "description", s->description);
  add_num(root, "seed", (double)sc->seed);
  add_str(root, "task", sc->task);
  add_num(root, "model_bytes", sc->model_bytes);
  add_num(root, "rounds", sc->rounds);
  add_num(root, "samples_per_round", (double)sc->samples_per_round);
  add_num(root, "batch_size", sc->batch_size);
  const hs_regime_spec *r = &sc->regime;
  cJSON *reg = add_obj(root, "regime");
  add_str(reg, "kind", r->kind);
  if (r->collective) {
    add_num(reg, "steps_per_round", r->steps_per_round);
    add_str(reg, "collective", r->collective);
  }
  if (r->nsilos) {
    cJSON *silos = cJSON_AddArrayToObject(reg, "silos");
    for (size_t i = 0; i < r->nsilos; i++) {
      cJSON *o = cJSON_CreateObject();
      add_str(o, "name", r->silos[i].name);
      cJSON *m = cJSON_AddArrayToObject(o, "members");
      for (size_t j = 0; j < r->silos[i].nmembers; j++)
        cJSON_AddItemToArray(m, cJSON_CreateString(r->silos[i].members[j]));
      add_str(o, "fabric", r->silos[i].fabric);
      cJSON_AddItemToArray(silos, o);
    }
  }
  if (r->staleness) {
    add_str(reg, "staleness", r->staleness);
    if (strcmp(r->staleness, "constant")) add_num(reg, "staleness_a", r->staleness_a);
    if (!strcmp(r->staleness, "hinge")) add_num(reg, "staleness_b", r->staleness_b);
    add_num(reg, "mixing_alpha", r->mixing_alpha);
  }
  cJSON *pol = add_obj(root, "policy");
  add_str(pol, "kind", sc->policy.kind);
  hs_policy_config_foreach(&sc->policy, policy_key, pol);
  if (s->policy_seed_set) add_num(pol, "seed", (double)sc->policy.seed);
  cJSON *devs = cJSON_AddArrayToObject(root, "devices");
  for (size_t i = 0; i < sc->ndevices; i++) {
    const hs_device_spec *d = &sc->devices[i];
    cJSON *o = cJSON_CreateObject();
    add_str(o, "name", d->name);
    add_str(o, "profile", d->profile_name);
    add_str(o, "link", d->link);
    add_num(o, "count", d->count);
    add_num(o, "speed_spread", d->speed_spread);
    add_num(o, "power_spread", d->power_spread);
    if (d->speed_trace_name) add_str(o, "speed_trace", d->speed_trace_name);
    if (d->owner) add_str(o, "owner", d->owner);
    cJSON_AddItemToArray(devs, o);
  }
  cJSON *net = add_obj(root, "network");
  add_str(net, "server", sc->server_link);
  cJSON *links = add_obj(net, "links");
  for (size_t i = 0; i < sc->nlinks; i++) {
    cJSON *o = add_obj(links, sc->links[i].name);
    add_num(o, "bandwidth_mbps", sc->links[i].bandwidth_mbps);
    add_num(o, "latency_ms", sc->links[i].latency_ms);
  }
  cJSON *tel = add_obj(root, "telemetry");
  add_num(tel, "time_noise", sc->telemetry_time_noise);
  add_num(tel, "energy_noise", sc->telemetry_energy_noise);
  if (!cJSON_AddBoolToObject(root, "switch_off_unselected", sc->switch_off_unselected)) abort();
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) abort();
  char *out = hs_strdup(text);
  cJSON_free(text);
  return out;
}
