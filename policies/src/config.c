/* config.c: the policy registry (one descriptor per policy name) and the
 * key/value vocabulary of hs_policy_config shared by scenario files, --set and
 * replay.
 *
 * The key table maps each flat key to its field (offset + type + range); a
 * policy descriptor carries the bitmask of keys it accepts, so "which keys apply
 * to which kind" lives in exactly one place and hs_policy_config_foreach can
 * print every default. Linear lookups: 9 policies, 14 keys. Rejected: silently
 * ignoring inapplicable keys (a typo'd or misplaced option would vanish). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_internal.h"

#define ADAPTIVE_KEYS (POL_K_W_E | POL_K_EMA | POL_K_DEADBAND | POL_K_MIN_SAMPLES)
#define COMMON_KEYS (POL_K_SEED | POL_K_STEPS)
#define OORT_KEYS                                                                      \
  (POL_K_EMA | POL_K_MIN_SAMPLES | POL_K_OORT_K | POL_K_OORT_ALPHA | POL_K_OORT_EXPLORE | \
   POL_K_OORT_EXPLORE_DECAY | POL_K_OORT_EXPLORE_MIN | POL_K_OORT_PACER_STEP |          \
   POL_K_OORT_PACER_WINDOW)

static const pol_type registry[] = {
    {"equal", "the budget split as evenly as integers allow", POL_EQUAL, -1.0, COMMON_KEYS,
     false},
    {"static", "measure one round, then the time-only split, frozen", POL_STATIC, -1.0,
     COMMON_KEYS | POL_K_MIN_SAMPLES, false},
    {"adaptive", "inverse-cost split with a free energy weight w_e", POL_ADAPTIVE, -1.0,
     COMMON_KEYS | ADAPTIVE_KEYS, true},
    {"time-only", "adaptive with w_e = 0", POL_ADAPTIVE, 0.0, COMMON_KEYS | ADAPTIVE_KEYS,
     true},
    {"low-energy", "adaptive with w_e = 0.25", POL_ADAPTIVE, 0.25,
     COMMON_KEYS | ADAPTIVE_KEYS, true},
    {"balanced", "adaptive with w_e = 0.5", POL_ADAPTIVE, 0.5, COMMON_KEYS | ADAPTIVE_KEYS,
     true},
    {"energy-only", "adaptive with w_e = 1", POL_ADAPTIVE, 1.0, COMMON_KEYS | ADAPTIVE_KEYS,
     true},
    {"oort", "Oort-style selection of K participants (FedScale)", POL_OORT, -1.0,
     COMMON_KEYS | OORT_KEYS, false},
    {"ema-batch", "DDP per-step batches in proportion to EMA throughput", POL_EMA_BATCH, -1.0,
     COMMON_KEYS | POL_K_EMA_BATCH_BETA, false},
};
#define NPOLICIES (sizeof registry / sizeof registry[0])

size_t hs_policy_count(void) { return NPOLICIES; }
const char *hs_policy_name(size_t i) { return i < NPOLICIES ? registry[i].name : NULL; }
const char *hs_policy_summary(size_t i) { return i < NPOLICIES ? registry[i].summary : NULL; }

unsigned hs_policy_caps(const char *kind) {
  const pol_type *t = pol_lookup(kind);
  if (!t) return 0;
  switch (t->family) {
  case POL_OORT: return HS_POLICY_CAP_SELECTS;
  case POL_EMA_BATCH: return HS_POLICY_CAP_STEP_LEVEL | HS_POLICY_CAP_GROUPS;
  default: return HS_POLICY_CAP_GROUPS;
  }
}

const pol_type *pol_lookup(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < NPOLICIES; i++)
    if (!strcmp(registry[i].name, name)) return &registry[i];
  return NULL;
}

/* --- keys ------------------------------------------------------------------- */

typedef enum { KT_DOUBLE, KT_U64, KT_U32 } key_type;

typedef struct key_def {
  const char *name;
  unsigned bit;
  size_t offset;
  key_type type;
  double lo, hi;   /* allowed range (doubles and integers) */
  bool hi_open;    /* value must be < hi */
  bool lo_open;    /* value must be > lo */
} key_def;

#define OFF(f) offsetof(hs_policy_config, f)
static const key_def keys[] = {
    {"w_e", POL_K_W_E, OFF(w_e), KT_DOUBLE, 0, 1, false, false},
    {"ema", POL_K_EMA, OFF(ema), KT_DOUBLE, 0, 1, true, false},
    {"deadband", POL_K_DEADBAND, OFF(deadband), KT_DOUBLE, 0, INFINITY, false, false},
    {"min_samples", POL_K_MIN_SAMPLES, OFF(min_samples), KT_U64, 0, 0, false, false},
    {"oort_k", POL_K_OORT_K, OFF(oort_k), KT_U32, 0, 0, false, false},
    {"oort_alpha", POL_K_OORT_ALPHA, OFF(oort_alpha), KT_DOUBLE, 0, INFINITY, false, false},
    {"oort_explore", POL_K_OORT_EXPLORE, OFF(oort_explore), KT_DOUBLE, 0, 1, false, false},
    {"oort_explore_decay", POL_K_OORT_EXPLORE_DECAY, OFF(oort_explore_decay), KT_DOUBLE, 0, 1,
     false, true},
    {"oort_explore_min", POL_K_OORT_EXPLORE_MIN, OFF(oort_explore_min), KT_DOUBLE, 0, 1, false,
     false},
    {"oort_pacer_step", POL_K_OORT_PACER_STEP, OFF(oort_pacer_step), KT_DOUBLE, 0, INFINITY,
     false, false},
    {"oort_pacer_window", POL_K_OORT_PACER_WINDOW, OFF(oort_pacer_window), KT_U32, 1, 0, false,
     false},
    {"ema_batch_beta", POL_K_EMA_BATCH_BETA, OFF(ema_batch_beta), KT_DOUBLE, 0, 1, true, false},
    {"seed", POL_K_SEED, OFF(seed), KT_U64, 0, 0, false, false},
    {"steps_per_round", POL_K_STEPS, OFF(steps_per_round), KT_U32, 1, 0, false, false},
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const key_def *key_lookup(const char *name) {
  for (size_t i = 0; i < NKEYS; i++)
    if (!strcmp(keys[i].name, name)) return &keys[i];
  return NULL;
}

static void list_names(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NPOLICIES && used < size; i++) {
    int k = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", registry[i].name);
    if (k < 0) break;
    used += (size_t)k;
  }
}

static void list_keys(unsigned mask, char *buf, size_t size) {
  size_t used = 0;
  bool first = true;
  buf[0] = '\0';
  for (size_t i = 0; i < NKEYS && used < size; i++) {
    if (!(mask & keys[i].bit)) continue;
    int k = snprintf(buf + used, size - used, "%s%s", first ? "" : ", ", keys[i].name);
    if (k < 0) break;
    used += (size_t)k;
    first = false;
  }
}

hs_status hs_policy_config_init(hs_policy_config *cfg, const char *kind, hs_error *err) {
  memset(cfg, 0, sizeof *cfg);
  const pol_type *t = pol_lookup(kind);
  if (!t) {
    char names[256];
    list_names(names, sizeof names);
    return hs_error_set(err, HS_ENOENT, "kind: no policy \"%s\" (policies: %s)",
                        kind ? kind : "(null)", names);
  }
  snprintf(cfg->kind, sizeof cfg->kind, "%s", t->name);
  cfg->w_e = t->preset_w_e >= 0 ? t->preset_w_e : 0.25;
  cfg->ema = 0.5;
  cfg->deadband = 0.05;
  cfg->min_samples = 1;
  cfg->oort_k = 0;
  cfg->oort_alpha = 2.0;
  cfg->oort_explore = 0.9;
  cfg->oort_explore_decay = 0.98;
  cfg->oort_explore_min = 0.3;
  cfg->oort_pacer_step = 0.0;
  cfg->oort_pacer_window = 20;
  cfg->ema_batch_beta = 0.5;
  cfg->seed = 0;
  cfg->steps_per_round = 1;
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

static hs_status range_error(const key_def *k, const char *text, hs_error *err) {
  const char *lb = k->lo_open ? "(" : "[";
  if (k->type == KT_DOUBLE) {
    if (isinf(k->hi))
      return hs_error_set(err, HS_ERANGE, "%s: %s is outside %s%g, inf)", k->name, text, lb,
                          k->lo);
    return hs_error_set(err, HS_ERANGE, "%s: %s is outside %s%g, %g%s", k->name, text, lb,
                        k->lo, k->hi, k->hi_open ? ")" : "]");
  }
  return hs_error_set(err, HS_ERANGE, "%s: %s must be an integer >= %g", k->name, text, k->lo);
}

static hs_status parse_value(const key_def *k, const char *text, void *dst, hs_error *err) {
  if (!text[0]) return hs_error_set(err, HS_EINVAL, "%s: empty value", k->name);
  char *end = NULL;
  errno = 0;
  if (k->type == KT_DOUBLE) {
    double v = strtod(text, &end);
    if (*end || end == text || !isfinite(v)) /* ERANGE alone: a subnormal, still a number */
      return hs_error_set(err, HS_EINVAL, "%s: \"%s\" is not a finite number", k->name, text);
    if (v < k->lo || (k->lo_open && v == k->lo) || v > k->hi || (k->hi_open && v == k->hi))
      return range_error(k, text, err);
    *(double *)dst = v;
    return HS_OK;
  }
  /* integers: digits only (no sign, no fraction), so "-1" and "1.5" are errors */
  for (const char *p = text; *p; p++)
    if (!isdigit((unsigned char)*p))
      return hs_error_set(err, HS_EINVAL, "%s: \"%s\" is not a non-negative integer", k->name,
                          text);
  unsigned long long v = strtoull(text, &end, 10);
  if (errno == ERANGE || (k->type == KT_U32 && v > UINT32_MAX))
    return hs_error_set(err, HS_ERANGE, "%s: %s is too large", k->name, text);
  if ((double)v < k->lo) return range_error(k, text, err);
  if (k->type == KT_U32)
    *(uint32_t *)dst = (uint32_t)v;
  else
    *(uint64_t *)dst = (uint64_t)v;
  return HS_OK;
}

hs_status hs_policy_config_set(hs_policy_config *cfg, const char *key, const char *value,
                               hs_error *err) {
  const pol_type *t = pol_lookup(cfg->kind);
  if (!t)
    return hs_error_set(err, HS_ESTATE, "%s: config has no valid kind (call hs_policy_config_init)",
                        key ? key : "(null)");
  if (!key || !value) return hs_error_set(err, HS_EINVAL, "policy option: missing key or value");
  if (!strcmp(key, "kind"))
    return hs_error_set(err, HS_EINVAL,
                        "kind: set the kind with hs_policy_config_init, not as an option");
  const key_def *k = key_lookup(key);
  char allowed[400];
  list_keys(t->keys, allowed, sizeof allowed);
  if (!k)
    return hs_error_set(err, HS_EKEY, "%s: unknown policy key (keys of \"%s\": %s)", key,
                        t->name, allowed);
  if (!(t->keys & k->bit))
    return hs_error_set(err, HS_EKEY, "%s: does not apply to policy \"%s\" (its keys: %s)", key,
                        t->name, allowed);
  char text[128];
  unquote(value, text, sizeof text);
  union {
    double d;
    uint64_t u64;
    uint32_t u32;
  } v;
  hs_status st = parse_value(k, text, &v, err);
  if (st != HS_OK) return st;
  if (k->bit == POL_K_W_E && t->preset_w_e >= 0 && v.d != t->preset_w_e)
    return hs_error_set(err, HS_EINVAL,
                        "w_e: policy \"%s\" fixes w_e = %g, got %s; use kind \"adaptive\" to "
                        "choose w_e",
                        t->name, t->preset_w_e, text);
  char *dst = (char *)cfg + k->offset;
  switch (k->type) {
  case KT_DOUBLE: memcpy(dst, &v.d, sizeof v.d); break;
  case KT_U64: memcpy(dst, &v.u64, sizeof v.u64); break;
  case KT_U32: memcpy(dst, &v.u32, sizeof v.u32); break;
  }
  return HS_OK;
}

static void format_value(const hs_policy_config *cfg, const key_def *k, char *buf, size_t size) {
  const char *src = (const char *)cfg + k->offset;
  if (k->type == KT_DOUBLE) {
    double d;
    memcpy(&d, src, sizeof d);
    /* shortest of %.15g/%.17g that reads back to the same double */
    snprintf(buf, size, "%.15g", d);
    if (strtod(buf, NULL) != d) snprintf(buf, size, "%.17g", d);
  } else if (k->type == KT_U64) {
    uint64_t u;
    memcpy(&u, src, sizeof u);
    snprintf(buf, size, "%llu", (unsigned long long)u);
  } else {
    uint32_t u;
    memcpy(&u, src, sizeof u);
    snprintf(buf, size, "%lu", (unsigned long)u);
  }
}

size_t hs_policy_config_foreach(const hs_policy_config *cfg, hs_policy_key_fn fn,
                                void *userdata) {
  const pol_type *t = pol_lookup(cfg->kind);
  if (!t) return 0;
  size_t count = 0;
  for (size_t i = 0; i < NKEYS; i++) {
    if (!(t->keys & keys[i].bit)) continue;
    char buf[64];
    format_value(cfg, &keys[i], buf, sizeof buf);
    if (fn) fn(keys[i].name, buf, userdata);
    count++;
  }
  return count;
}

hs_status hs_policy_config_check(const hs_policy_config *cfg, hs_error *err) {
  char kind[HS_POLICY_NAME_MAX + 1];
  memcpy(kind, cfg->kind, HS_POLICY_NAME_MAX);
  kind[HS_POLICY_NAME_MAX] = '\0';
  const pol_type *t = pol_lookup(kind);
  if (!t) {
    char names[256];
    list_names(names, sizeof names);
    return hs_error_set(err, HS_ENOENT, "kind: no policy \"%s\" (policies: %s)", kind, names);
  }
  /* every field, applicable or not, must hold a valid value: the simulator may
   * write fields directly */
  for (size_t i = 0; i < NKEYS; i++) {
    const key_def *k = &keys[i];
    char text[64];
    format_value(cfg, k, text, sizeof text);
    double v;
    const char *src = (const char *)cfg + k->offset;
    if (k->type == KT_DOUBLE) {
      memcpy(&v, src, sizeof v);
      if (!isfinite(v))
        return hs_error_set(err, HS_EINVAL, "%s: \"%s\" is not a finite number", k->name, text);
      if (v < k->lo || (k->lo_open && v == k->lo) || v > k->hi || (k->hi_open && v == k->hi))
        return range_error(k, text, err);
    } else if (k->type == KT_U32) {
      uint32_t u;
      memcpy(&u, src, sizeof u);
      if ((double)u < k->lo) return range_error(k, text, err);
    }
  }
  if (t->preset_w_e >= 0 && cfg->w_e != t->preset_w_e)
    return hs_error_set(err, HS_EINVAL,
                        "w_e: policy \"%s\" fixes w_e = %g, got %g; use kind \"adaptive\" to "
                        "choose w_e",
                        t->name, t->preset_w_e, cfg->w_e);
  return HS_OK;
}
