/* config.c: the key/value vocabulary of hs_policy_config, shared by scenario
 * files, --set, replay and the bridge, read from the policy descriptors.
 *
 * A key is either one of the kind's own (its descriptor's key table; the value
 * sits in cfg->value[j], j its index in the table) or one of the two common
 * keys every kind accepts (seed, steps_per_round: plain fields, because the
 * simulator writes them directly). A key is "unknown" when no registered policy
 * has it and "does not apply" when some other policy does; both messages list
 * the kind's keys. Linear lookups over a handful of keys and policies; this
 * runs when a configuration is read, never per round. Rejected: silently
 * ignoring inapplicable keys (a typo'd or misplaced option would vanish), and
 * one field per key in the public struct (every new key was an ABI change for
 * every linked trainer; see THE ABI RULE in hs_policy.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_util.h"
#include "pol_policy.h"

/* The keys of every kind, visited after the kind's own. */
enum { COMMON_SEED, COMMON_STEPS };
static const pol_key common_keys[] = {
    [COMMON_SEED] = {"seed", POL_UINT64, 0, 0, 0, false, false, NULL,
                     "seed of randomised policies (the simulator's by default)"},
    [COMMON_STEPS] = {"steps_per_round", POL_UINT32, 1, 1, 0, false, false, NULL,
                      "DDP optimiser steps per round (the simulator sets it from the regime)"},
};
#define NCOMMON (sizeof common_keys / sizeof common_keys[0])

/* Where a key's value lives: own key `slot`, or common key `slot`. */
typedef struct keyref {
  const pol_key *k;
  size_t slot;
  bool common;
} keyref;

static bool find_key(const pol_type *t, const char *name, keyref *out) {
  for (size_t j = 0; j < t->nkeys; j++)
    if (!strcmp(t->keys[j].name, name)) {
      *out = (keyref){&t->keys[j], j, false};
      return true;
    }
  for (size_t j = 0; j < NCOMMON; j++)
    if (!strcmp(common_keys[j].name, name)) {
      *out = (keyref){&common_keys[j], j, true};
      return true;
    }
  return false;
}

/* Some registered policy has the key (so it is misplaced, not misspelt). */
static bool known_key(const char *name) {
  keyref r;
  for (size_t i = 0; i < pol_type_count(); i++)
    if (find_key(pol_type_at(i), name, &r)) return true;
  return false;
}

/* The first registered kind (registry order) that lets a user choose the key
 * (has it, not fixed by a preset), for "does not apply" messages; NULL: none. */
static const char *kind_with_key(const char *name) {
  keyref r;
  for (size_t i = 0; i < pol_type_count(); i++)
    if (find_key(pol_type_at(i), name, &r) && !r.k->fixed) return pol_type_at(i)->name;
  return NULL;
}

/* The key of any registered policy nearest to a misspelt name; NULL: none. */
static const char *nearest_key(const char *name) {
  const char *names[256];
  size_t n = 0;
  for (size_t j = 0; j < NCOMMON; j++) names[n++] = common_keys[j].name;
  for (size_t i = 0; i < pol_type_count(); i++) {
    const pol_type *t = pol_type_at(i);
    for (size_t j = 0; j < t->nkeys && n < sizeof names / sizeof names[0]; j++)
      names[n++] = t->keys[j].name;
  }
  return hs_nearest(name, names, n);
}

static hs_policy_value load(const hs_policy_config *cfg, keyref r) {
  if (!r.common) return cfg->value[r.slot];
  return (hs_policy_value){.uint = r.slot == COMMON_SEED ? cfg->seed : cfg->steps_per_round};
}

static void store(hs_policy_config *cfg, keyref r, hs_policy_value v) {
  if (!r.common)
    cfg->value[r.slot] = v;
  else if (r.slot == COMMON_SEED)
    cfg->seed = v.uint;
  else
    cfg->steps_per_round = (uint32_t)v.uint;
}

static void list_names(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < pol_type_count() && used < size; i++) {
    int k = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", pol_type_at(i)->name);
    if (k < 0) break;
    used += (size_t)k;
  }
}

static void list_keys(const pol_type *t, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < t->nkeys + NCOMMON && used < size; i++) {
    const pol_key *k = i < t->nkeys ? &t->keys[i] : &common_keys[i - t->nkeys];
    int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", k->name);
    if (w < 0) break;
    used += (size_t)w;
  }
}

static hs_status no_kind(const char *kind, hs_error *err) {
  char names[256];
  list_names(names, sizeof names);
  const char *kinds[64], *near = NULL;
  size_t n = 0;
  for (size_t i = 0; i < pol_type_count() && n < sizeof kinds / sizeof kinds[0]; i++)
    kinds[n++] = pol_type_at(i)->name;
  if (kind) near = hs_nearest(kind, kinds, n);
  return hs_error_set(err, HS_ENOENT, "kind: no policy \"%s\" (policies: %s)%s%s%s",
                      kind ? kind : "(null)", names, near ? "; did you mean \"" : "",
                      near ? near : "", near ? "\"?" : "");
}

hs_status hs_policy_config_init(hs_policy_config *cfg, const char *kind, hs_error *err) {
  memset(cfg, 0, sizeof *cfg);
  const pol_type *t = pol_lookup(kind);
  if (!t) return no_kind(kind, err);
  snprintf(cfg->kind, sizeof cfg->kind, "%s", t->name);
  for (size_t j = 0; j < t->nkeys; j++) {
    if (t->keys[j].type == POL_REAL)
      cfg->value[j].real = t->keys[j].def;
    else
      cfg->value[j].uint = (uint64_t)t->keys[j].def;
  }
  cfg->seed = (uint64_t)common_keys[COMMON_SEED].def;
  cfg->steps_per_round = (uint32_t)common_keys[COMMON_STEPS].def;
  return HS_OK;
}

/* Accepts a bare number, optionally surrounded by blanks or by JSON quotes. */
static const char *unquote(const char *v, char *buf, size_t size) {
  while (isspace((unsigned char)*v)) v++;
  size_t len = strlen(v);
  while (len && isspace((unsigned char)v[len - 1])) len--;
  if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
    v++;
    len -= 2;
  }
  if (len >= size) len = size - 1;
  memcpy(buf, v, len);
  buf[len] = '\0';
  return buf;
}

static hs_status range_error(const pol_key *k, const char *text, hs_error *err) {
  const char *lb = k->lo_open ? "(" : "[";
  if (k->type == POL_REAL) {
    if (isinf(k->hi))
      return hs_error_set(err, HS_ERANGE, "%s: %s is outside %s%g, inf)", k->name, text, lb,
                          k->lo);
    return hs_error_set(err, HS_ERANGE, "%s: %s is outside %s%g, %g%s", k->name, text, lb,
                        k->lo, k->hi, k->hi_open ? ")" : "]");
  }
  return hs_error_set(err, HS_ERANGE, "%s: %s must be an integer >= %g", k->name, text, k->lo);
}

static bool real_in_range(const pol_key *k, double v) {
  return !(v < k->lo || (k->lo_open && v == k->lo) || v > k->hi || (k->hi_open && v == k->hi));
}

static hs_status parse_value(const pol_key *k, const char *text, hs_policy_value *dst,
                             hs_error *err) {
  if (!text[0]) return hs_error_set(err, HS_EINVAL, "%s: empty value", k->name);
  char *end = NULL;
  errno = 0;
  if (k->type == POL_REAL) {
    double v = strtod(text, &end);
    if (*end || end == text || !isfinite(v)) /* ERANGE alone: a subnormal, still a number */
      return hs_error_set(err, HS_EINVAL, "%s: \"%s\" is not a finite number", k->name, text);
    if (!real_in_range(k, v)) return range_error(k, text, err);
    dst->real = v;
    return HS_OK;
  }
  /* integers: digits only (no sign, no fraction), so "-1" and "1.5" are errors */
  for (const char *p = text; *p; p++)
    if (!isdigit((unsigned char)*p))
      return hs_error_set(err, HS_EINVAL, "%s: \"%s\" is not a non-negative integer", k->name,
                          text);
  unsigned long long v = strtoull(text, &end, 10);
  if (errno == ERANGE || (k->type == POL_UINT32 && v > UINT32_MAX))
    return hs_error_set(err, HS_ERANGE, "%s: %s is too large", k->name, text);
  if ((double)v < k->lo) return range_error(k, text, err);
  dst->uint = (uint64_t)v;
  return HS_OK;
}

/* A fixed key holds a value other than its default. */
static bool off_fixed(const pol_key *k, hs_policy_value v) {
  return k->fixed && (k->type == POL_REAL ? v.real != k->def : (double)v.uint != k->def);
}

static hs_status fixed_error(const pol_type *t, const pol_key *k, const char *got,
                             hs_error *err) {
  return hs_error_set(err, HS_EINVAL,
                      "%s: policy \"%s\" fixes %s = %g, got %s; use kind \"%s\" to choose %s",
                      k->name, t->name, k->name, k->def, got, k->fixed, k->name);
}

/* The key of cfg's kind, or the set/get error naming it. */
static hs_status resolve(const hs_policy_config *cfg, const char *key, const pol_type **tp,
                         keyref *r, hs_error *err) {
  const pol_type *t = pol_lookup(cfg->kind);
  if (!t)
    return hs_error_set(err, HS_ESTATE, "%s: config has no valid kind (call hs_policy_config_init)",
                        key ? key : "(null)");
  if (!key) return hs_error_set(err, HS_EINVAL, "policy option: missing key or value");
  if (!strcmp(key, "kind"))
    return hs_error_set(err, HS_EINVAL,
                        "kind: set the kind with hs_policy_config_init, not as an option");
  if (!find_key(t, key, r)) {
    char allowed[400];
    list_keys(t, allowed, sizeof allowed);
    if (!known_key(key)) {
      const char *near = nearest_key(key);
      return hs_error_set(err, HS_EKEY, "%s: unknown policy key (keys of \"%s\": %s)%s%s%s", key,
                          t->name, allowed, near ? "; did you mean \"" : "", near ? near : "",
                          near ? "\"?" : "");
    }
    const char *kind = kind_with_key(key);
    return hs_error_set(err, HS_EKEY, "%s: does not apply to policy \"%s\" (its keys: %s)%s%s%s",
                        key, t->name, allowed, kind ? "; kind \"" : "", kind ? kind : "",
                        kind ? "\" has it" : "");
  }
  *tp = t;
  return HS_OK;
}

hs_status hs_policy_config_set(hs_policy_config *cfg, const char *key, const char *value,
                               hs_error *err) {
  if (!value && pol_lookup(cfg->kind))
    return hs_error_set(err, HS_EINVAL, "policy option: missing key or value");
  const pol_type *t;
  keyref r;
  hs_status st = resolve(cfg, key, &t, &r, err);
  if (st != HS_OK) return st;
  char text[128];
  unquote(value, text, sizeof text);
  hs_policy_value v = {0};
  st = parse_value(r.k, text, &v, err);
  if (st != HS_OK) return st;
  if (off_fixed(r.k, v)) return fixed_error(t, r.k, text, err);
  store(cfg, r, v);
  return HS_OK;
}

hs_status hs_policy_config_get(const hs_policy_config *cfg, const char *key, double *value,
                               hs_error *err) {
  const pol_type *t;
  keyref r;
  hs_status st = resolve(cfg, key, &t, &r, err);
  if (st != HS_OK) return st;
  hs_policy_value v = load(cfg, r);
  *value = r.k->type == POL_REAL ? v.real : (double)v.uint;
  return HS_OK;
}

hs_status hs_policy_config_get_uint(const hs_policy_config *cfg, const char *key,
                                    uint64_t *value, hs_error *err) {
  const pol_type *t;
  keyref r;
  hs_status st = resolve(cfg, key, &t, &r, err);
  if (st != HS_OK) return st;
  if (r.k->type == POL_REAL)
    return hs_error_set(err, HS_ETYPE, "%s: a real number, not an integer (use hs_policy_config_get)",
                        key);
  *value = load(cfg, r).uint;
  return HS_OK;
}

const char *hs_policy_key_doc(const char *kind, const char *key) {
  const pol_type *t = pol_lookup(kind);
  keyref r;
  if (!t || !key || !find_key(t, key, &r)) return NULL;
  return r.k->doc;
}

uint64_t hs_policy_config_min_samples(const hs_policy_config *cfg) {
  const pol_type *t = pol_lookup(cfg->kind);
  if (!t) return 0;
  keyref r;
  if (find_key(t, "min_samples", &r) && !r.common && r.k->type != POL_REAL)
    return cfg->value[r.slot].uint;
  return 1;
}

static void format_value(const pol_key *k, hs_policy_value v, char *buf, size_t size) {
  if (k->type == POL_REAL) {
    /* shortest of %.15g/%.17g that reads back to the same double */
    snprintf(buf, size, "%.15g", v.real);
    if (strtod(buf, NULL) != v.real) snprintf(buf, size, "%.17g", v.real);
  } else {
    snprintf(buf, size, "%llu", (unsigned long long)v.uint);
  }
}

size_t hs_policy_config_foreach(const hs_policy_config *cfg, hs_policy_key_fn fn,
                                void *userdata) {
  const pol_type *t = pol_lookup(cfg->kind);
  if (!t) return 0;
  size_t count = 0;
  for (size_t i = 0; i < t->nkeys + NCOMMON; i++) {
    keyref r = i < t->nkeys ? (keyref){&t->keys[i], i, false}
                            : (keyref){&common_keys[i - t->nkeys], i - t->nkeys, true};
    char buf[64];
    format_value(r.k, load(cfg, r), buf, sizeof buf);
    if (fn) fn(r.k->name, buf, userdata);
    count++;
  }
  return count;
}

/* A stored value against its key's range (the simulator and trainers may write
 * the fields and the store directly). */
static hs_status check_value(const pol_key *k, hs_policy_value v, hs_error *err) {
  char text[64];
  format_value(k, v, text, sizeof text);
  if (k->type == POL_REAL) {
    if (!isfinite(v.real))
      return hs_error_set(err, HS_EINVAL, "%s: \"%s\" is not a finite number", k->name, text);
    if (!real_in_range(k, v.real)) return range_error(k, text, err);
    return HS_OK;
  }
  if (k->type == POL_UINT32 && v.uint > UINT32_MAX)
    return hs_error_set(err, HS_ERANGE, "%s: %s is too large", k->name, text);
  if ((double)v.uint < k->lo) return range_error(k, text, err);
  return HS_OK;
}

hs_status hs_policy_config_check(const hs_policy_config *cfg, hs_error *err) {
  char kind[HS_POLICY_NAME_MAX + 1];
  memcpy(kind, cfg->kind, HS_POLICY_NAME_MAX);
  kind[HS_POLICY_NAME_MAX] = '\0';
  const pol_type *t = pol_lookup(kind);
  if (!t) return no_kind(kind, err);
  for (size_t i = 0; i < t->nkeys + NCOMMON; i++) {
    keyref r = i < t->nkeys ? (keyref){&t->keys[i], i, false}
                            : (keyref){&common_keys[i - t->nkeys], i - t->nkeys, true};
    hs_status st = check_value(r.k, load(cfg, r), err);
    if (st != HS_OK) return st;
  }
  for (size_t j = 0; j < t->nkeys; j++) {
    const pol_key *k = &t->keys[j];
    if (off_fixed(k, cfg->value[j])) {
      char got[64];
      if (k->type == POL_REAL)
        snprintf(got, sizeof got, "%g", cfg->value[j].real);
      else
        snprintf(got, sizeof got, "%llu", (unsigned long long)cfg->value[j].uint);
      return fixed_error(t, k, got, err);
    }
  }
  return HS_OK;
}
