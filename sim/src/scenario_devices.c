/* scenario_devices.c: the network and the devices of a scenario.
 *
 * network.links become hs_link_spec; each devices[] entry resolves its profile
 * (loaded once per file, shared by the entries that name it), checks the task,
 * loads its speed trace, and is expanded into `count` devices.
 *
 * Excluded entries (issue 17): "count": 0 keeps an entry in the scenario (it
 * is validated like any other and printed back with "excluded": true) but
 * gives no device. sim_scn.entries holds every entry in file order;
 * hs_scenario.devices holds only the included ones (shallow copies), so a
 * regime, a writer or a learner sees exactly the scenario with the excluded
 * entries deleted, and nothing downstream meets an entry without a device.
 * The name of an excluded entry stays in the name index with n = 0: a silo
 * or a dynamics block that names it names no device (its owner decides
 * whether that is fine); it still clashes with any other name. A scenario
 * whose every entry is excluded is refused (no device to simulate).
 * Rejected: keeping count-0 entries in hs_scenario.devices (every loop over
 * entries - per-profile rows, input hashes, curve profile, links - would have
 * to skip them, and each one missed would break the "same as deleted" rule).
 *
 * Names: every expanded device ("<entry>" for count 1, "<entry>-<k>" else) and
 * every entry name with count > 1 or count 0 must be distinct, so a silo member
 * or a lookup names exactly one thing. The index is an array sorted by name:
 * O(N log N) to build for N expanded devices, O(log N) per lookup, about 60
 * bytes per device with the device table (10^6 devices: 0.2 s, 80 MB).
 * Rejected: a hash table (more code, and iteration order would need care to
 * stay deterministic); per-entry linear search (O(N) per silo member,
 * quadratic for silos of 10^5 devices). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "traces/hs_speed_trace.h"
#include "base/hs_util.h"
#include "scenario_internal.h"

hs_status scn_parse_network(ctx *c, const cJSON *root) {
  hs_scenario *sc = &c->s->pub;
  const cJSON *net = scn_member(root, "network");
  if (!net) return scn_missing(c, "network");
  size_t m0 = sim_jpath_key(&c->path, "network");
  static const char *const keys[] = {"server", "links", NULL};
  hs_status st = scn_need_object(c, net);
  if (!st) st = scn_check_keys(c, net, keys);
  if (st) return st;
  const cJSON *links = scn_member(net, "links");
  if (!links) return scn_missing(c, "links");
  size_t m1 = sim_jpath_key(&c->path, "links");
  if ((st = scn_need_object(c, links))) return st;
  if (!links->child) return scn_fail(c, HS_EINVAL, "no links (give at least one)");
  size_t n = 0;
  for (const cJSON *l = links->child; l; l = l->next) n++;
  sc->links = hs_calloc(n, sizeof *sc->links);
  for (const cJSON *l = links->child; l; l = l->next) {
    size_t m2 = sim_jpath_key(&c->path, l->string);
    if ((st = scn_check_name(c, l->string))) return st;
    for (size_t j = 0; j < sc->nlinks; j++)
      if (!strcmp(sc->links[j].name, l->string)) return scn_fail(c, HS_EKEY, "key appears twice");
    hs_link_spec *ls = &sc->links[sc->nlinks++];
    ls->name = hs_strdup(l->string);
    static const char *const lkeys[] = {"bandwidth_mbps", "latency_ms", NULL};
    if ((st = scn_need_object(c, l)) || (st = scn_check_keys(c, l, lkeys)) ||
        (st = scn_get_num(c, l, "bandwidth_mbps", true, 0, 0, true, INFINITY, false,
                      &ls->bandwidth_mbps)) ||
        (st = scn_get_num(c, l, "latency_ms", false, 0, 0, false, INFINITY, false,
                          &ls->latency_ms)))
      return st;
    sim_jpath_pop(&c->path, m2);
  }
  sim_jpath_pop(&c->path, m1);
  const char *only = sc->nlinks == 1 ? sc->links[0].name : NULL;
  if (!scn_member(net, "server") && !only)
    return scn_fail(c, HS_EMISSING,
                "\"server\" is required when there is more than one link (name the server's link)");
  if ((st = scn_get_name(c, net, "server", false, &sc->server_link))) return st;
  if (!sc->server_link) sc->server_link = hs_strdup(only);
  if (!hs_scenario_link(sc, sc->server_link)) {
    sim_jpath_key(&c->path, "server");
    return scn_fail(c, HS_ENOENT, "no link \"%s\" in network.links", sc->server_link);
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
  if (!path) return scn_fail(c, e.status ? e.status : HS_ENOENT, "%s", e.msg);
  const hs_profile *p = NULL;
  for (size_t i = 0; i < s->nprofiles && !p; i++)
    if (!strcmp(s->profile_paths[i], path)) p = s->profiles[i];
  if (!p) {
    hs_profile *np = hs_profile_load(path, &e);
    if (!np) {
      hs_free(path);
      return scn_fail(c, e.status ? e.status : HS_EINVAL, "%s", e.msg);
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
    return scn_fail(c, HS_ENOENT, "profile \"%s\" has no task \"%s\" (it has: %s)",
                hs_profile_name(p), c->s->pub.task, tasks);
  }
  sim_jpath_pop(&c->path, mark);
  return HS_OK;
}

static hs_status parse_device(ctx *c, const cJSON *e, hs_device_spec *d) {
  hs_scenario *sc = &c->s->pub;
  static const char *const keys[] = {"name",         "profile",      "link",        "count",
                                     "speed_spread", "power_spread", "speed_trace", "owner",
                                     "excluded",     NULL};
  hs_status st;
  double count;
  if ((st = scn_need_object(c, e)) || (st = scn_check_keys(c, e, keys)) ||
      (st = scn_get_name(c, e, "name", true, &d->name)) ||
      (st = scn_get_str(c, e, "profile", true, NULL, &d->profile_name)) ||
      (st = scn_get_uint(c, e, "count", false, 1, 0, UINT32_MAX, &count)) ||
      (st = scn_get_num(c, e, "speed_spread", false, 0, 0, false, 3, false, &d->speed_spread)) ||
      (st = scn_get_num(c, e, "power_spread", false, 0, 0, false, 3, false, &d->power_spread)) ||
      (st = scn_get_str(c, e, "owner", false, NULL, &d->owner)) ||
      (st = scn_get_str(c, e, "speed_trace", false, NULL, &d->speed_trace_name)))
    return st;
  d->count = (uint32_t)count;
  /* "excluded" is what validate prints beside count 0; read back, it must agree. */
  const cJSON *ex = scn_member(e, "excluded");
  if (ex) {
    size_t mark = sim_jpath_key(&c->path, "excluded");
    if (!cJSON_IsBool(ex))
      return scn_fail(c, HS_ETYPE, "expected true or false, got %s", sim_json_type(ex));
    if (cJSON_IsTrue(ex) != (d->count == 0))
      return scn_fail(c, HS_EINVAL,
                      "%s, but count is %lu (count 0 is what excludes an entry; this key "
                      "only repeats it)",
                      cJSON_IsTrue(ex) ? "true" : "false", (unsigned long)d->count);
    sim_jpath_pop(&c->path, mark);
  }
  if (!scn_member(e, "link") && sc->nlinks != 1)
    return scn_fail(c, HS_EMISSING,
                "\"link\" is required when network.links has more than one link");
  if ((st = scn_get_name(c, e, "link", false, &d->link))) return st;
  if (!d->link) d->link = hs_strdup(sc->links[0].name);
  if (!hs_scenario_link(sc, d->link)) {
    sim_jpath_key(&c->path, "link");
    return scn_fail(c, HS_ENOENT, "no link \"%s\" in network.links", d->link);
  }
  if ((st = resolve_profile(c, d))) return st;
  if (d->speed_trace_name) {
    size_t mark = sim_jpath_key(&c->path, "speed_trace");
    d->speed_trace_path = hs_path_join(c->dir, d->speed_trace_name);
    hs_error err = {0};
    d->speed_trace = hs_speed_trace_load(d->speed_trace_path, &err);
    if (!d->speed_trace) return scn_fail(c, err.status ? err.status : HS_EINVAL, "%s", err.msg);
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

/* Expand counts into the device table and the sorted name index, once: on the
 * first call of hs_scenario_devices or a name lookup, or by scn_devices_check
 * at the end of parsing, whichever comes first. A budget or count refused
 * before then never expands (10^7 devices: ~1 GB and seconds of sorting).
 * Walks every entry in file order: an excluded one adds its name (n = 0) and
 * no device; refs[].spec counts included entries only (hs_scenario.devices). */
void scn_devices_build(sim_scn *s) {
  if (s->refs) return;
  hs_scenario *sc = &s->pub;
  size_t arena = 0, nix = 0;
  for (size_t i = 0; i < s->nentries; i++) {
    const hs_device_spec *d = &s->entries[i];
    nix += d->count + (d->count != 1);
    if (d->count > 1) {
      size_t len = strlen(d->name) + 2; /* '-' and NUL */
      for (uint32_t k = 0; k < d->count; k++) arena += len + ndigits(k);
    }
  }
  s->refs = hs_malloc((sc->total_devices ? sc->total_devices : 1) * sizeof *s->refs);
  s->name_arena = hs_malloc(arena + 1);
  s->ix = hs_malloc((nix ? nix : 1) * sizeof *s->ix);
  size_t pos = 0, at = 0, spec = 0;
  for (size_t i = 0; i < s->nentries; i++) {
    hs_device_spec *d = &s->entries[i];
    if (d->count != 1) s->ix[s->nix++] = (name_ix){d->name, pos, d->count, i};
    for (uint32_t k = 0; k < d->count; k++, pos++) {
      const char *name = d->name;
      if (d->count > 1) {
        char *dst = s->name_arena + at;
        int w = snprintf(dst, arena + 1 - at, "%s-%lu", d->name, (unsigned long)k);
        at += (size_t)w + 1;
        name = dst;
      }
      s->refs[pos] = (hs_device_ref){name, spec, k};
      s->ix[s->nix++] = (name_ix){name, pos, 1, i};
    }
    spec += d->count > 0;
  }
  qsort(s->ix, s->nix, sizeof *s->ix, ix_cmp);
}

/* Every name (entries and expanded names) unique: expands the devices. */
hs_status scn_devices_check(ctx *c) {
  sim_scn *s = c->s;
  scn_devices_build(s);
  for (size_t j = 1; j < s->nix; j++) {
    const name_ix *a = &s->ix[j - 1], *b = &s->ix[j];
    if (strcmp(a->name, b->name)) continue;
    /* Report at the later entry; describe what it clashes with. */
    const name_ix *later = a->entry > b->entry ? a : b, *earlier = later == a ? b : a;
    sim_jpath_key(&c->path, "devices");
    sim_jpath_index(&c->path, later->entry);
    sim_jpath_key(&c->path, "name");
    char what[160], b1[80];
    const hs_device_spec *de = &s->entries[earlier->entry];
    if (earlier->n == 1 && de->count > 1)
      snprintf(what, sizeof what, "device %lu of devices[%zu] (\"%s\", count %lu)",
               (unsigned long)(earlier->first - de->first), earlier->entry,
               scn_shown(de->name, b1, sizeof b1), (unsigned long)de->count);
    else
      snprintf(what, sizeof what, "devices[%zu]%s", earlier->entry,
               de->count ? "" : " (excluded, count 0)");
    if (later->n == 1 && s->entries[later->entry].count > 1)
      return scn_fail(c, HS_EINVAL, "expanded name \"%s\" is already the name of %s", later->name,
                  what);
    return scn_fail(c, HS_EINVAL, "\"%s\" is already the name of %s", later->name, what);
  }
  return HS_OK;
}

hs_status scn_parse_devices(ctx *c, const cJSON *root) {
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  const cJSON *devs = scn_member(root, "devices");
  if (!devs) return scn_missing(c, "devices");
  size_t m0 = sim_jpath_key(&c->path, "devices");
  if (!cJSON_IsArray(devs))
    return scn_fail(c, HS_ETYPE, "expected an array, got %s", sim_json_type(devs));
  size_t n = (size_t)cJSON_GetArraySize(devs);
  if (!n) return scn_fail(c, HS_EINVAL, "no devices (give at least one)");
  s->entries = hs_calloc(n, sizeof *s->entries);
  s->nentries = n;
  size_t i = 0, included = 0;
  double total = 0;
  for (const cJSON *e = devs->child; e; e = e->next, i++) {
    size_t m1 = sim_jpath_index(&c->path, i);
    hs_status st = parse_device(c, e, &s->entries[i]);
    if (st) return st;
    total += s->entries[i].count;
    included += s->entries[i].count > 0;
    if (total > SCN_MAX_TOTAL_DEVICES) {
      sim_jpath_key(&c->path, "count");
      return scn_fail(c, HS_ERANGE, "more than %u devices in total", SCN_MAX_TOTAL_DEVICES);
    }
    sim_jpath_pop(&c->path, m1);
  }
  if (!included)
    return scn_fail(c, HS_EINVAL, "every entry has count 0: no device to simulate");
  sc->total_devices = (size_t)total;
  sc->devices = hs_calloc(included, sizeof *sc->devices);
  size_t pos = 0;
  for (size_t k = 0; k < n; k++) {
    hs_device_spec *d = &s->entries[k];
    d->first = pos;
    pos += d->count;
    if (!d->count) continue;
    sc->devices[sc->ndevices++] = *d; /* shallow: entries own the strings */
  }
  sim_jpath_pop(&c->path, m0);
  return HS_OK; /* expanded and names checked by scn_devices_check, after the budget */
}
