/* scenario_get.c: the scenario loader's error messages and typed getters.
 *
 * Every getter reads one key of a JSON object, checks its type and range and
 * either stores the value or fails with "<file>: <JSON path>: <reason>", plus
 * "(from --set KEY)" when the path lies under a key an override wrote. The
 * path is kept in a sim_jpath (push a key, check, pop back), so a message
 * costs nothing until it is written. The checks themselves are hetsim::json's
 * (hs_json_get.h: numbers, integers, strings, booleans, objects, keys),
 * shared with the profile loader; this file gives them the scenario's words
 * (scn_words, the "expected <range>" texts) and its path. The sim_opt_* functions at the end are
 * the same helpers as the regime API (sim_regime.h) exposes them to regimes
 * with options of their own shape.
 * Rejected: a schema table for the whole file (the cross checks between
 * sections, e.g. silos naming devices, would still need code). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "traces/hs_json_get.h"
#include "scenario_internal.h"

/* --- errors ------------------------------------------------------------------ */

/* Text from the input goes into one-line messages: cut it and replace control
 * characters so a message never spans lines. */
const char *scn_shown(const char *text, char *buf, size_t cap) {
  return hs_json_shown(text, buf, cap);
}

/* The scenario's wording of the shared getters' failures (hs_json_get.h). */
static const hs_json_words scn_words = {
    .top_level = "(top level)",
    .unknown_key = "unknown key (allowed here:",
    .duplicate = "key appears twice",
    .missing = "required key is missing",
    .not_string = "expected a string",
    .show_got = true,
    .empty_string = "empty string",
    .not_object = "expected an object",
    .not_bool = "expected true or false",
    .show_keys = true,
    .mark_cut = false,
};

/* " (from --set KEY)" when path lies under a key an override wrote. */
static const char *override_suffix(const hs_json_ctx *jc, const char *p, char *buf, size_t cap) {
  const ctx *c = jc->user;
  const char *key = NULL;
  for (size_t i = 0; i < c->nmarks; i++) {
    size_t n = strlen(c->marks[i].path);
    if (!strncmp(p, c->marks[i].path, n) && (p[n] == '\0' || p[n] == '.' || p[n] == '['))
      key = c->marks[i].key;
  }
  if (!key) return NULL;
  char k[96];
  snprintf(buf, cap, " (from --set %s)", scn_shown(key, k, sizeof k));
  return buf;
}

static hs_json_ctx json_ctx(ctx *c) {
  hs_json_ctx jc = {c->origin, c->err, &scn_words, override_suffix, c};
  return jc;
}

hs_status scn_fail(ctx *c, hs_status st, const char *fmt, ...) {
  char reason[HS_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  hs_json_ctx jc = json_ctx(c);
  return hs_json_fail(&jc, st, sim_jpath_str(&c->path), "%s", reason);
}

/* --- typed getters ------------------------------------------------------------ */

cJSON *scn_member(const cJSON *obj, const char *key) { return hs_json_member(obj, key); }

/* Unknown and duplicate keys of obj; allowed is NULL-terminated. */
hs_status scn_check_keys(ctx *c, const cJSON *obj, const char *const *allowed) {
  return scn_check_keys_as(c, obj, allowed, allowed);
}

hs_status scn_check_keys_as(ctx *c, const cJSON *obj, const char *const *allowed,
                            const char *const *shown) {
  hs_json_ctx jc = json_ctx(c);
  return hs_json_check_keys(&jc, obj, sim_jpath_str(&c->path), allowed, shown);
}

hs_status scn_need_object(ctx *c, const cJSON *n) {
  hs_json_ctx jc = json_ctx(c);
  return hs_json_object(&jc, n, sim_jpath_str(&c->path));
}

hs_status scn_missing(ctx *c, const char *key) {
  hs_json_ctx jc = json_ctx(c);
  return hs_json_missing(&jc, sim_jpath_str(&c->path), key);
}

/* What get_value checks a value as (with hetsim::json's getter of that type). */
typedef enum { GET_BOOL, GET_STRING, GET_NUMBER, GET_INTEGER } get_kind;

/* obj.key checked as `kind` under the key's path (spec: a number's range and
 * reason). Absent: *found false and HS_OK, or the missing-key failure when
 * required; the caller then stores its default. */
static hs_status get_value(ctx *c, const cJSON *obj, const char *key, bool required,
                           get_kind kind, const hs_json_num *spec, void *out, bool *found) {
  const cJSON *n = scn_member(obj, key);
  *found = n != NULL;
  if (!n) return required ? scn_missing(c, key) : HS_OK;
  size_t mark = sim_jpath_key(&c->path, key);
  hs_json_ctx jc = json_ctx(c);
  const char *path = sim_jpath_str(&c->path);
  hs_status st = kind == GET_BOOL     ? hs_json_bool(&jc, n, path, out)
                 : kind == GET_STRING ? hs_json_string(&jc, n, path, out)
                 : kind == GET_NUMBER ? hs_json_number(&jc, n, path, spec, out)
                                      : hs_json_integer(&jc, n, path, spec, out);
  sim_jpath_pop(&c->path, mark);
  return st;
}

/* obj.key as true or false; absent: def. */
hs_status scn_get_bool(ctx *c, const cJSON *obj, const char *key, bool def, bool *out) {
  bool found;
  hs_status st = get_value(c, obj, key, false, GET_BOOL, NULL, out, &found);
  if (!found) *out = def;
  return st;
}

/* An integer in [lo, hi]; absent: def, or an error when required. Like
 * every number the scenario reads, a failure says "expected <range>, got
 * <what>" (show_got), a non-finite value is out of range (HS_ERANGE), and
 * there is no hint above the range. */
hs_status scn_get_uint(ctx *c, const cJSON *obj, const char *key, bool required, double def,
                       double lo, double hi, double *out) {
  char want[96];
  snprintf(want, sizeof want, "expected an integer in [%.0f, %.0f]", lo, hi);
  hs_json_num spec = {.lo = lo, .hi = hi, .want = want, .non_finite = HS_ERANGE};
  bool found;
  hs_status st = get_value(c, obj, key, required, GET_INTEGER, &spec, out, &found);
  if (!found && st == HS_OK) *out = def;
  return st;
}

/* A finite number with lo <(=) v <(=) hi (hi may be INFINITY). */
hs_status scn_get_num(ctx *c, const cJSON *obj, const char *key, bool required, double def,
                      double lo, bool lo_open, double hi, bool hi_open, double *out) {
  char want[112];
  if (isinf(hi))
    snprintf(want, sizeof want, "expected a finite number %s %g", lo_open ? ">" : ">=", lo);
  else
    snprintf(want, sizeof want, "expected a number in %s%g, %g%s", lo_open ? "(" : "[", lo, hi,
             hi_open ? ")" : "]");
  hs_json_num spec = {.lo = lo, .hi = hi, .lo_open = lo_open, .hi_open = hi_open, .want = want,
                      .non_finite = HS_ERANGE};
  bool found;
  hs_status st = get_value(c, obj, key, required, GET_NUMBER, &spec, out, &found);
  if (!found && st == HS_OK) *out = def;
  return st;
}

/* A string (heap copy in *out); absent: a copy of def, or NULL if def is NULL. */
hs_status scn_get_str(ctx *c, const cJSON *obj, const char *key, bool required,
                      const char *def, char **out) {
  bool found;
  hs_status st = get_value(c, obj, key, required, GET_STRING, NULL, out, &found);
  if (!found && st == HS_OK) *out = def ? hs_strdup(def) : NULL;
  return st;
}

/* Names end up in paths, CSV columns and expanded "<name>-<k>" names. */
hs_status scn_check_name(ctx *c, const char *name) {
  size_t len = strlen(name);
  bool ok = len > 0 && len <= SCN_MAX_NAME;
  for (size_t i = 0; i < len && ok; i++) {
    char ch = name[i];
    ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '-';
  }
  if (ok) return HS_OK;
  char b[80];
  return scn_fail(c, HS_EINVAL,
              "\"%s\" is not a valid name (1 to %d of A-Z a-z 0-9 _ -, so it can appear in "
              "--set keys and CSV files)",
              scn_shown(name, b, sizeof b), SCN_MAX_NAME);
}

hs_status scn_get_name(ctx *c, const cJSON *obj, const char *key, bool required, char **out) {
  hs_status st = scn_get_str(c, obj, key, required, NULL, out);
  if (st || !*out) return st;
  size_t mark = sim_jpath_key(&c->path, key);
  st = scn_check_name(c, *out);
  sim_jpath_pop(&c->path, mark);
  return st;
}

static const char *one_of(const char *v, const char *const *choices) {
  for (size_t i = 0; choices[i]; i++)
    if (!strcmp(v, choices[i])) return choices[i];
  return NULL;
}

hs_status scn_get_choice(ctx *c, const cJSON *obj, const char *key, const char *def,
                            const char *const *choices, char **out) {
  hs_status st = scn_get_str(c, obj, key, false, def, out);
  if (st) return st;
  if (one_of(*out, choices)) return HS_OK;
  char list[200] = "", b[80];
  size_t used = 0;
  for (size_t i = 0; choices[i]; i++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
    if (w < 0 || (size_t)w >= sizeof list - used) break;
    used += (size_t)w;
  }
  size_t n = 0;
  while (choices[n]) n++;
  const char *near = hs_nearest(*out, choices, n);
  size_t mark = sim_jpath_key(&c->path, key);
  st = scn_fail(c, HS_EINVAL, "unknown value \"%s\" (one of: %s)%s%s%s",
                scn_shown(*out, b, sizeof b), list, near ? "; did you mean \"" : "",
                near ? near : "", near ? "\"?" : "");
  sim_jpath_pop(&c->path, mark);
  return st;
}

/* --- the regime API's view (sim_regime.h) -------------------------------------- */

const hs_scenario *sim_opt_scenario(const sim_opt_ctx *c) { return &c->s->pub; }

size_t sim_opt_excluded(const sim_opt_ctx *c) {
  size_t n = 0;
  for (size_t i = 0; i < c->s->nentries; i++) n += c->s->entries[i].count == 0;
  return n;
}

hs_status sim_opt_fail(sim_opt_ctx *c, hs_status st, const char *fmt, ...) {
  char reason[HS_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return scn_fail(c, st, "%s", reason);
}

size_t sim_opt_key(sim_opt_ctx *c, const char *key) { return sim_jpath_key(&c->path, key); }
size_t sim_opt_index(sim_opt_ctx *c, size_t i) { return sim_jpath_index(&c->path, i); }
void sim_opt_pop(sim_opt_ctx *c, size_t mark) { sim_jpath_pop(&c->path, mark); }
hs_status sim_opt_missing(sim_opt_ctx *c, const char *key) { return scn_missing(c, key); }

hs_status sim_opt_object(sim_opt_ctx *c, const cJSON *node, const char *const *allowed) {
  hs_status st = scn_need_object(c, node);
  return st ? st : scn_check_keys(c, node, allowed);
}

hs_status sim_opt_name(sim_opt_ctx *c, const cJSON *obj, const char *key, bool required,
                       char **out) {
  return scn_get_name(c, obj, key, required, out);
}

const char *sim_opt_shown(const char *text, char *buf, size_t cap) {
  return scn_shown(text, buf, cap);
}

/* A regime option's number: hetsim::json's check, one status and the
 * regime's reason as written (the scenario's words without ", got"). */
static hs_status opt_number(sim_opt_ctx *c, const cJSON *v, const sim_opt_range *r, bool whole,
                            double *out) {
  hs_status st = r->status ? r->status : HS_ERANGE;
  hs_json_num spec = {.lo = r->lo, .hi = r->hi, .lo_open = r->lo_open, .hi_open = r->hi_open,
                      .want = r->want, .not_number = st, .non_finite = st, .out_of_range = st};
  hs_json_ctx jc = json_ctx(c);
  hs_json_words words = *jc.words;
  words.show_got = false;
  jc.words = &words;
  const char *path = sim_jpath_str(&c->path);
  return whole ? hs_json_integer(&jc, v, path, &spec, out) : hs_json_number(&jc, v, path, &spec, out);
}

hs_status sim_opt_num(sim_opt_ctx *c, const cJSON *v, const sim_opt_range *r, double *out) {
  return opt_number(c, v, r, false, out);
}

hs_status sim_opt_uint(sim_opt_ctx *c, const cJSON *v, const sim_opt_range *r, double *out) {
  return opt_number(c, v, r, true, out);
}

static hs_status opt_get(sim_opt_ctx *c, const cJSON *obj, const char *key, bool required,
                         double def, const sim_opt_range *r, bool whole, double *out) {
  const cJSON *n = scn_member(obj, key);
  if (!n) {
    if (required) return scn_missing(c, key);
    *out = def;
    return HS_OK;
  }
  size_t mark = sim_jpath_key(&c->path, key);
  hs_status st = opt_number(c, n, r, whole, out);
  sim_jpath_pop(&c->path, mark);
  return st;
}

hs_status sim_opt_get_num(sim_opt_ctx *c, const cJSON *obj, const char *key, bool required,
                          double def, const sim_opt_range *r, double *out) {
  return opt_get(c, obj, key, required, def, r, false, out);
}

hs_status sim_opt_get_uint(sim_opt_ctx *c, const cJSON *obj, const char *key, bool required,
                           double def, const sim_opt_range *r, double *out) {
  return opt_get(c, obj, key, required, def, r, true, out);
}
