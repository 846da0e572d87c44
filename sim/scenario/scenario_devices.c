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
 * or a lookup names exactly one thing. Nothing is stored per expanded device:
 * the entries are indexed by name (sorted, O(E log E) for E entries) and a
 * name is looked up as an entry name, else parsed as "<p>-<k>" (split at the
 * last '-': k has none) and looked up as entry p, k < count: O(log E). Device
 * i's entry is a binary search over the entries' ends (prefix sums); the names
 * "<entry>-<k>" are written into an arena on the first name asked (a run that
 * writes no name never makes them). The uniqueness check works on entries
 * alone (scn_devices_check), so validate never expands 10^7 devices.
 * Rejected: the earlier sorted per-device index and device table (56 bytes
 * per device, 0.5 GB and seconds of sorting at 10^7); a hash table (more code,
 * iteration order would need care to stay deterministic). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "traces/hs_speed_trace.h"
#include "base/hs_util.h"
#include "scenario_internal.h"

const char *const scn_network_keys[] = {"server", "links", "duplex", NULL};
static const char *const duplex_modes[] = {"half", "full", NULL};
const char *const scn_device_keys[] = {"name",         "profile",      "link",
                                       "count",        "speed_spread", "power_spread",
                                       "speed_trace",  "owner",        "excluded",
                                       "cpu",          NULL};

hs_status scn_parse_network(ctx *c, const cJSON *root) {
  hs_scenario *sc = &c->s->pub;
  const cJSON *net = scn_member(root, "network");
  if (!net) return scn_missing(c, "network");
  size_t m0 = sim_jpath_key(&c->path, "network");
  const char *const *keys = scn_network_keys;
  hs_status st = scn_need_object(c, net);
  if (!st) st = scn_check_keys(c, net, keys);
  if (st) return st;
  const cJSON *links = scn_member(net, "links");
  if (!links) return scn_missing(c, "links");
  size_t m1 = sim_jpath_key(&c->path, "links");
  if ((st = scn_need_object(c, links))) return st;
  if (!links->child) return scn_fail(c, HS_EINVAL, "no links (give at least one)");
  sim_jpath_pop(&c->path, m1);
  /* network.duplex: every link's default; a link's own "duplex" overrides it. */
  char *mode = NULL;
  if ((st = scn_get_choice(c, net, "duplex", "half", duplex_modes, &mode))) {
    hs_free(mode);
    return st;
  }
  bool full_default = !strcmp(mode, "full");
  hs_free(mode);
  mode = NULL;
  m1 = sim_jpath_key(&c->path, "links");
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
    static const char *const lkeys[] = {"bandwidth_mbps", "latency_ms", "duplex", NULL};
    if ((st = scn_need_object(c, l)) || (st = scn_check_keys(c, l, lkeys)) ||
        (st = scn_get_num(c, l, "bandwidth_mbps", true, 0, 0, true, INFINITY, false,
                      &ls->bandwidth_mbps)) ||
        (st = scn_get_num(c, l, "latency_ms", false, 0, 0, false, INFINITY, false,
                          &ls->latency_ms)))
      return st;
    if ((st = scn_get_choice(c, l, "duplex", full_default ? "full" : "half", duplex_modes,
                             &mode))) {
      hs_free(mode);
      return st;
    }
    ls->full_duplex = !strcmp(mode, "full");
    hs_free(mode);
    mode = NULL;
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

/* devices[i].cpu: {share, period_ms, send_ms_per_mb} (absent: no CPU limit). */
static hs_status parse_cpu(ctx *c, const cJSON *e, hs_device_spec *d) {
  const cJSON *cpu = scn_member(e, "cpu");
  if (!cpu) return HS_OK;
  static const char *const keys[] = {"share", "period_ms", "send_ms_per_mb", NULL};
  size_t mark = sim_jpath_key(&c->path, "cpu");
  hs_status st;
  if ((st = scn_need_object(c, cpu)) || (st = scn_check_keys(c, cpu, keys)) ||
      (st = scn_get_num(c, cpu, "share", true, 0, 0, true, 1, false, &d->cpu_share)) ||
      (st = scn_get_num(c, cpu, "period_ms", false, 100, 0, true, INFINITY, false,
                        &d->cpu_period_ms)) ||
      (st = scn_get_num(c, cpu, "send_ms_per_mb", true, 0, 0, true, INFINITY, false,
                        &d->cpu_send_ms_per_mb)))
    return st;
  sim_jpath_pop(&c->path, mark);
  return HS_OK;
}

static hs_status parse_device(ctx *c, const cJSON *e, hs_device_spec *d) {
  hs_scenario *sc = &c->s->pub;
  const char *const *keys = scn_device_keys;
  hs_status st;
  double count;
  if ((st = scn_need_object(c, e)) || (st = scn_check_keys(c, e, keys)) ||
      (st = scn_get_name(c, e, "name", true, &d->name)) ||
      (st = scn_get_str(c, e, "profile", true, NULL, &d->profile_name)) ||
      (st = scn_get_uint(c, e, "count", false, 1, 0, UINT32_MAX, &count)) ||
      (st = scn_get_num(c, e, "speed_spread", false, 0, 0, false, 3, false, &d->speed_spread)) ||
      (st = scn_get_num(c, e, "power_spread", false, 0, 0, false, 3, false, &d->power_spread)) ||
      (st = scn_get_str(c, e, "owner", false, NULL, &d->owner)) ||
      (st = scn_get_str(c, e, "speed_trace", false, NULL, &d->speed_trace_name)) ||
      (st = parse_cpu(c, e, d)))
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

static size_t ndigits(uint32_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    n++;
  }
  return n;
}

/* Digits of 0..k-1 together: k, plus k - 10^d for every power 10^d < k. */
static size_t digits_below(size_t k) {
  size_t n = k;
  for (size_t p = 10; p < k; p *= 10) n += k - p;
  return n;
}

static int by_name_cmp(const void *a, const void *b) {
  const scn_named *x = a, *y = b;
  int r = strcmp(x->name, y->name);
  if (r) return r;
  return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* The entries' prefix sums and name index (O(E log E) for E entries, nothing
 * per device); called at the end of scn_parse_devices. */
static void build_tables(sim_scn *s) {
  hs_scenario *sc = &s->pub;
  size_t nd = sc->ndevices ? sc->ndevices : 1;
  s->ends = hs_malloc(nd * sizeof *s->ends);
  s->name_off = hs_calloc(nd, sizeof *s->name_off);
  for (size_t j = 0; j < sc->ndevices; j++) s->ends[j] = sc->devices[j].first + sc->devices[j].count;
  s->by_name = hs_malloc(s->nentries * sizeof *s->by_name);
  for (size_t i = 0; i < s->nentries; i++) s->by_name[i] = (scn_named){s->entries[i].name, i};
  qsort(s->by_name, s->nentries, sizeof *s->by_name, by_name_cmp);
}

/* The "<entry>-<k>" names, once, on the first name asked (a run that writes
 * no name never makes them: ~11 bytes per device). */
/* Made once, on first use, so that a scenario of 10^7 devices costs no name
 * memory unless names are asked for. Thread-safe: several runs may share one
 * loaded scenario (const to them); the first caller builds under a lock and
 * publishes the arena with a release store, later callers see it with an
 * acquire load and take no lock. */
void scn_names_build(sim_scn *s) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  if (atomic_load_explicit(&s->name_arena, memory_order_acquire)) return;
  pthread_mutex_lock(&lock);
  if (atomic_load_explicit(&s->name_arena, memory_order_relaxed)) {
    pthread_mutex_unlock(&lock);
    return;
  }
  hs_scenario *sc = &s->pub;
  size_t arena = 0;
  for (size_t j = 0; j < sc->ndevices; j++) {
    const hs_device_spec *d = &sc->devices[j];
    s->name_off[j] = arena;
    if (d->count > 1) arena += d->count * (strlen(d->name) + 2) + digits_below(d->count);
  }
  char *out = hs_malloc(arena + 1);
  size_t at = 0;
  for (size_t j = 0; j < sc->ndevices; j++) {
    const hs_device_spec *d = &sc->devices[j];
    if (d->count < 2) continue;
    for (uint32_t k = 0; k < d->count; k++) {
      int w = snprintf(out + at, arena + 1 - at, "%s-%lu", d->name, (unsigned long)k);
      at += (size_t)w + 1;
    }
  }
  atomic_store_explicit(&s->name_arena, out, memory_order_release);
  pthread_mutex_unlock(&lock);
}

size_t hs_scenario_device_entry(const hs_scenario *sc, size_t i) {
  const sim_scn *s = (const sim_scn *)sc;
  size_t lo = 0, hi = sc->ndevices - 1; /* the first j with ends[j] > i */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->ends[mid] > i) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* The expansion is lazy: the names are made on first use (scn_names_build,
 * thread-safe). */
const char *hs_scenario_device_name(const hs_scenario *sc, size_t i) {
  sim_scn *s = (sim_scn *)(uintptr_t)sc;
  size_t j = hs_scenario_device_entry(sc, i);
  const hs_device_spec *d = &sc->devices[j];
  if (d->count == 1) return d->name;
  scn_names_build(s);
  size_t k = i - d->first;
  const char *arena = atomic_load_explicit(&s->name_arena, memory_order_acquire);
  return arena + s->name_off[j] + k * (strlen(d->name) + 2) + digits_below(k);
}

size_t hs_scenario_device_name_into(const hs_scenario *sc, size_t i, char *buf, size_t cap) {
  size_t j = hs_scenario_device_entry(sc, i);
  const hs_device_spec *d = &sc->devices[j];
  size_t len = strlen(d->name);
  if (len + 1 > cap) len = cap - 1;
  memcpy(buf, d->name, len);
  if (d->count != 1 && len + 2 + 8 <= cap) {
    uint32_t k = (uint32_t)(i - d->first);
    size_t nd = ndigits(k);
    buf[len++] = '-';
    for (size_t q = nd; q-- > 0; k /= 10) buf[len + q] = (char)('0' + k % 10);
    len += nd;
  }
  buf[len] = '\0';
  return len;
}

hs_device_ref hs_scenario_device(const hs_scenario *sc, size_t i) {
  size_t j = hs_scenario_device_entry(sc, i);
  return (hs_device_ref){hs_scenario_device_name(sc, i), j,
                         (uint32_t)(i - sc->devices[j].first)};
}

/* The first position in by_name whose entry name is >= the len bytes at key
 * (compared as a whole string). */
static size_t lower_bound(const sim_scn *s, const char *key, size_t len) {
  size_t lo = 0, hi = s->nentries;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const char *nm = s->by_name[mid].name;
    int r = strncmp(nm, key, len);
    if (!r) r = nm[len] != '\0';
    if (r < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static bool name_is(const sim_scn *s, size_t pos, const char *key, size_t len) {
  if (pos >= s->nentries) return false;
  const char *nm = s->by_name[pos].name;
  return !strncmp(nm, key, len) && nm[len] == '\0';
}

/* "<p>-<k>" with k written as a generated name writes it (decimal, no leading
 * zero, below 10^8): *plen = strlen(p). The last '-' splits, since k has none. */
static bool split_expanded(const char *x, size_t *plen, uint32_t *k) {
  const char *dash = strrchr(x, '-');
  if (!dash || dash == x) return false;
  const char *d = dash + 1;
  size_t nd = strlen(d);
  if (!nd || nd > 8 || (nd > 1 && d[0] == '0')) return false;
  uint32_t v = 0;
  for (size_t q = 0; q < nd; q++) {
    if (d[q] < '0' || d[q] > '9') return false;
    v = v * 10 + (uint32_t)(d[q] - '0');
  }
  *plen = (size_t)(dash - x);
  *k = v;
  return true;
}

/* One thing a name names (what the old per-device index held). */
typedef struct name_hit {
  size_t first; /* first expanded device it names */
  size_t n;     /* 1 for a device, count for an entry with count > 1, 0 for an excluded entry */
  size_t entry; /* index in sim_scn.entries */
} name_hit;

static name_hit entry_hit(const sim_scn *s, size_t e) {
  const hs_device_spec *d = &s->entries[e];
  return (name_hit){d->first, d->count == 1 ? 1 : d->count, e};
}

bool scn_find_name(const sim_scn *s, const char *name, size_t *first, size_t *n) {
  size_t len = strlen(name), pos = lower_bound(s, name, len);
  if (name_is(s, pos, name, len)) {
    name_hit h = entry_hit(s, s->by_name[pos].entry);
    *first = h.first;
    *n = h.n;
    return true;
  }
  size_t plen;
  uint32_t k;
  if (!split_expanded(name, &plen, &k)) return false;
  for (pos = lower_bound(s, name, plen); name_is(s, pos, name, plen); pos++) {
    const hs_device_spec *d = &s->entries[s->by_name[pos].entry];
    if (d->count > 1 && k < d->count) {
      *first = d->first + k;
      *n = 1;
      return true;
    }
  }
  return false;
}

static int hit_cmp(const void *a, const void *b) {
  const name_hit *x = a, *y = b;
  if (x->entry != y->entry) return x->entry < y->entry ? -1 : 1;
  return x->n < y->n ? -1 : x->n > y->n;
}

/* Every name unique: entries' names among themselves, and an entry's name
 * against the expanded names "<p>-<k>" of an entry p with count > 1 (two
 * expanded names of different entries can only meet when those entries share
 * a name, itself a smaller clash). Reports the smallest clashing name (strcmp
 * order) at the later of its two first holders (by entry, then n), as the
 * sorted per-device index of earlier versions did: same messages, without
 * expanding anything. O(E log E). */
hs_status scn_devices_check(ctx *c, const cJSON *root) {
  (void)root;
  sim_scn *s = c->s;
  const char *worst = NULL;
  for (size_t pos = 0; pos < s->nentries; pos++) {
    const char *x = s->by_name[pos].name;
    bool clash = pos + 1 < s->nentries && !strcmp(x, s->by_name[pos + 1].name);
    size_t plen;
    uint32_t k;
    if (!clash && split_expanded(x, &plen, &k))
      for (size_t q = lower_bound(s, x, plen); !clash && name_is(s, q, x, plen); q++) {
        const hs_device_spec *d = &s->entries[s->by_name[q].entry];
        clash = d->count > 1 && k < d->count;
      }
    if (clash && (!worst || strcmp(x, worst) < 0)) worst = x;
  }
  if (!worst) return HS_OK;
  /* Everything named `worst`: entries, then at most a few expanded devices. */
  size_t cap = 8, nh = 0;
  name_hit *h = hs_malloc(cap * sizeof *h);
  size_t len = strlen(worst), plen;
  uint32_t k;
  for (size_t q = lower_bound(s, worst, len); name_is(s, q, worst, len); q++) {
    if (nh == cap) h = hs_realloc(h, (cap *= 2) * sizeof *h);
    h[nh++] = entry_hit(s, s->by_name[q].entry);
  }
  if (split_expanded(worst, &plen, &k))
    for (size_t q = lower_bound(s, worst, plen); name_is(s, q, worst, plen); q++) {
      const hs_device_spec *d = &s->entries[s->by_name[q].entry];
      if (d->count < 2 || k >= d->count) continue;
      if (nh == cap) h = hs_realloc(h, (cap *= 2) * sizeof *h);
      h[nh++] = (name_hit){d->first + k, 1, s->by_name[q].entry};
    }
  qsort(h, nh, sizeof *h, hit_cmp);
  /* Report at the later entry; describe what it clashes with. */
  name_hit later = h[0].entry > h[1].entry ? h[0] : h[1];
  name_hit earlier = h[0].entry > h[1].entry ? h[1] : h[0];
  hs_free(h);
  sim_jpath_key(&c->path, "devices");
  sim_jpath_index(&c->path, later.entry);
  sim_jpath_key(&c->path, "name");
  char what[160], b1[80];
  const hs_device_spec *de = &s->entries[earlier.entry];
  if (earlier.n == 1 && de->count > 1)
    snprintf(what, sizeof what, "device %lu of devices[%zu] (\"%s\", count %lu)",
             (unsigned long)(earlier.first - de->first), earlier.entry,
             scn_shown(de->name, b1, sizeof b1), (unsigned long)de->count);
  else
    snprintf(what, sizeof what, "devices[%zu]%s", earlier.entry,
             de->count ? "" : " (excluded, count 0)");
  if (later.n == 1 && s->entries[later.entry].count > 1)
    return scn_fail(c, HS_EINVAL, "expanded name \"%s\" is already the name of %s", worst, what);
  return scn_fail(c, HS_EINVAL, "\"%s\" is already the name of %s", worst, what);
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
  build_tables(s);
  sim_jpath_pop(&c->path, m0);
  return HS_OK; /* names checked by scn_devices_check, after the budget */
}

/* --- printed back and freed (lines of the block table) ----------------------- */

void scn_print_devices(const hs_scenario *sc, cJSON *root) {
  const sim_scn *s = (const sim_scn *)sc;
  cJSON *devs = cJSON_AddArrayToObject(root, "devices");
  if (!devs) abort();
  for (size_t i = 0; i < s->nentries; i++) { /* excluded entries (count 0) too */
    const hs_device_spec *d = &s->entries[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) abort();
    scn_add_str(o, "name", d->name);
    scn_add_str(o, "profile", d->profile_name);
    scn_add_str(o, "link", d->link);
    scn_add_num(o, "count", d->count);
    if (!d->count && !cJSON_AddBoolToObject(o, "excluded", 1)) abort();
    scn_add_num(o, "speed_spread", d->speed_spread);
    scn_add_num(o, "power_spread", d->power_spread);
    if (d->speed_trace_name) scn_add_str(o, "speed_trace", d->speed_trace_name);
    if (d->owner) scn_add_str(o, "owner", d->owner);
    if (d->cpu_share > 0) { /* only when given: other scenarios print back as before */
      cJSON *cpu = scn_add_obj(o, "cpu");
      scn_add_num(cpu, "share", d->cpu_share);
      scn_add_num(cpu, "period_ms", d->cpu_period_ms);
      scn_add_num(cpu, "send_ms_per_mb", d->cpu_send_ms_per_mb);
    }
    cJSON_AddItemToArray(devs, o);
  }
}

void scn_free_devices(hs_scenario *sc) {
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
}

void scn_print_network(const hs_scenario *sc, cJSON *root) {
  cJSON *net = scn_add_obj(root, "network");
  scn_add_str(net, "server", sc->server_link);
  cJSON *links = scn_add_obj(net, "links");
  for (size_t i = 0; i < sc->nlinks; i++) {
    cJSON *o = scn_add_obj(links, sc->links[i].name);
    scn_add_num(o, "bandwidth_mbps", sc->links[i].bandwidth_mbps);
    scn_add_num(o, "latency_ms", sc->links[i].latency_ms);
    /* Only when full: a half-duplex scenario prints back as it did before. */
    if (sc->links[i].full_duplex) scn_add_str(o, "duplex", "full");
  }
}

void scn_free_network(hs_scenario *sc) {
  for (size_t i = 0; i < sc->nlinks; i++) hs_free(sc->links[i].name);
  hs_free(sc->links);
  hs_free(sc->server_link);
}

/* --- its blocks: lines of the loader's block table (scenario.c) --- */

const scn_block scn_block_devices = {
    .key = "devices", .step = 110, .first_format = true,
    .parse = scn_parse_devices, .print = scn_print_devices, .free = scn_free_devices,
    .type = SCN_ARRAY, .required = true, .keys = scn_device_keys,
    .doc = "entries of devices: a profile, a link, a count; cpu {share, period_ms, "
           "send_ms_per_mb}: CPU-bound transfers"};

const scn_block scn_block_network = {
    .key = "network", .step = 100, .first_format = true,
    .parse = scn_parse_network, .print = scn_print_network, .free = scn_free_network,
    .type = SCN_OBJECT, .required = true, .keys = scn_network_keys,
    .doc = "links by name (bandwidth_mbps, latency_ms, duplex) and the server's link; duplex "
           "(\"half\" default, or \"full\": one bandwidth per direction on shared links) for "
           "every link"};

const scn_block scn_block_names = {
    .step = 180,
    .parse = scn_devices_check,
    .doc = "device and entry names are unique"};
