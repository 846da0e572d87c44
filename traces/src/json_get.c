/* json_get.c: strict cJSON getters shared by scenarios and profiles
 * (hs_json_get.h). Wording comes from the caller's hs_json_words and, for a
 * number, its hs_json_num.
 *
 * Paths: one fixed buffer plus the whole path's length, so a push is a copy
 * of the key and a pop a store of a NUL: walking a file allocates nothing
 * for its paths and the text is ready when a message needs it. A path past
 * the buffer is cut; a loader that marks cuts sees its last three bytes as
 * "...", the three bytes they cover kept aside so that popping below the
 * cut restores the exact text. Invariant: s holds the first
 * min(len, HS_JSON_PATH_MAX - 1) bytes of the path, except those three
 * bytes when marked. Rejected: a stack of segments formatted on error (more
 * code, and a message would then cost an allocation).
 *
 * Numbers: one check for both loaders (type, finiteness, whole, range, in
 * that order); what differs between them (the reason, the hint above the
 * range, the status of a non-finite or non-number value) is data. */
#include "traces/hs_json_get.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"

const char *hs_json_shown(const char *text, char *buf, size_t cap) {
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

const char *hs_json_type(const cJSON *node) {
  if (cJSON_IsString(node)) return "a string";
  if (cJSON_IsNumber(node)) return "a number";
  if (cJSON_IsObject(node)) return "an object";
  if (cJSON_IsArray(node)) return "an array";
  if (cJSON_IsBool(node)) return "a boolean";
  if (cJSON_IsNull(node)) return "null";
  return "an invalid value";
}

/* --- paths ---------------------------------------------------------------- */

#define PATH_ROOM (HS_JSON_PATH_MAX - 1) /* bytes of text the buffer holds */
#define PATH_MARK (HS_JSON_PATH_MAX - 4) /* where "..." starts in a marked cut */

/* Appends n bytes of t; marks the cut the first time the path outgrows the
 * buffer. */
static void path_append(hs_json_path *p, const char *t, size_t n) {
  bool was_cut = p->len > PATH_ROOM;
  if (p->len < PATH_ROOM) {
    size_t room = PATH_ROOM - p->len, k = n < room ? n : room;
    memcpy(p->s + p->len, t, k);
    p->s[p->len + k] = '\0';
  }
  p->len += n;
  if (p->mark_cut && !was_cut && p->len > PATH_ROOM) {
    memcpy(p->under, p->s + PATH_MARK, sizeof p->under);
    memcpy(p->s + PATH_MARK, "...", 3);
  }
}

void hs_json_path_init(hs_json_path *p, bool mark_cut, const char *start) {
  p->s[0] = '\0';
  p->len = 0;
  p->mark_cut = mark_cut;
  if (start) path_append(p, start, strlen(start));
}

size_t hs_json_path_key(hs_json_path *p, const char *key) {
  size_t mark = p->len;
  if (p->len) path_append(p, ".", 1);
  path_append(p, key, strlen(key));
  return mark;
}

size_t hs_json_path_index(hs_json_path *p, size_t i) {
  size_t mark = p->len;
  char buf[32];
  int n = snprintf(buf, sizeof buf, "[%zu]", i);
  path_append(p, buf, (size_t)n);
  return mark;
}

void hs_json_path_pop(hs_json_path *p, size_t mark) {
  if (mark >= p->len) return;
  bool was_cut = p->len > PATH_ROOM;
  p->len = mark;
  if (mark > PATH_ROOM) return; /* still cut: the text stays as it is */
  if (was_cut && p->mark_cut) memcpy(p->s + PATH_MARK, p->under, sizeof p->under);
  p->s[mark] = '\0';
}

const char *hs_json_path_str(const hs_json_path *p) { return p->s; }

/* --- failures ------------------------------------------------------------- */

hs_status hs_json_fail(const hs_json_ctx *c, hs_status st, const char *path, const char *fmt,
                       ...) {
  char reason[HS_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  char sbuf[128];
  const char *suf = c->suffix ? c->suffix(c, path, sbuf, sizeof sbuf) : NULL;
  if (!suf) suf = "";
  const char *shown = path[0] ? path : c->words->top_level;
  if (shown) return hs_error_set(c->err, st, "%s: %s: %s%s", c->origin, shown, reason, suf);
  return hs_error_set(c->err, st, "%s: %s%s", c->origin, reason, suf);
}

cJSON *hs_json_member(const cJSON *obj, const char *key) {
  return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* parent's text (from a buffer of HS_JSON_PATH_MAX, so it fits) into out. */
static void path_out(const hs_json_path *p, char *out) {
  memcpy(out, p->s, strlen(p->s) + 1);
}

void hs_json_join(const hs_json_ctx *c, char *out, const char *parent, const char *key) {
  char kbuf[80];
  if (c->words->show_keys) key = hs_json_shown(key, kbuf, sizeof kbuf);
  hs_json_path p;
  hs_json_path_init(&p, c->words->mark_cut, parent);
  hs_json_path_key(&p, key);
  path_out(&p, out);
}

void hs_json_join_index(const hs_json_ctx *c, char *out, const char *parent, size_t i) {
  hs_json_path p;
  hs_json_path_init(&p, c->words->mark_cut, parent);
  hs_json_path_index(&p, i);
  path_out(&p, out);
}

hs_status hs_json_check_keys(const hs_json_ctx *c, const cJSON *obj, const char *path,
                             const char *const *allowed, const char *const *shown) {
  if (!shown) shown = allowed;
  char sub[HS_JSON_PATH_MAX];
  for (const cJSON *m = obj->child; m; m = m->next) {
    bool ok = false;
    for (size_t i = 0; allowed[i] && !ok; i++) ok = !strcmp(allowed[i], m->string);
    hs_json_join(c, sub, path, m->string);
    if (!ok) {
      char list[400];
      size_t used = 0;
      list[0] = '\0';
      for (size_t i = 0; shown[i] && used < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : " ", shown[i]);
        if (w < 0) break;
        used += (size_t)w;
      }
      size_t n = 0;
      while (shown[n]) n++;
      const char *near = hs_nearest(m->string, shown, n);
      return hs_json_fail(c, HS_EKEY, sub, "%s%s)%s%s%s", c->words->unknown_key, list,
                          near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
    }
    for (const cJSON *d = obj->child; d != m; d = d->next)
      if (!strcmp(d->string, m->string)) return hs_json_fail(c, HS_EKEY, sub, "%s", c->words->duplicate);
  }
  return HS_OK;
}

hs_status hs_json_missing(const hs_json_ctx *c, const char *parent, const char *key) {
  hs_json_path p; /* the key as the code names it: not passed through shown */
  hs_json_path_init(&p, c->words->mark_cut, parent);
  hs_json_path_key(&p, key);
  return hs_json_fail(c, HS_EMISSING, hs_json_path_str(&p), "%s", c->words->missing);
}

/* The type failure of v with one of the words' reasons. */
static hs_status type_fail(const hs_json_ctx *c, const cJSON *v, const char *path,
                           const char *reason) {
  if (c->words->show_got)
    return hs_json_fail(c, HS_ETYPE, path, "%s, got %s", reason, hs_json_type(v));
  return hs_json_fail(c, HS_ETYPE, path, "%s", reason);
}

hs_status hs_json_object(const hs_json_ctx *c, const cJSON *v, const char *path) {
  return cJSON_IsObject(v) ? HS_OK : type_fail(c, v, path, c->words->not_object);
}

hs_status hs_json_bool(const hs_json_ctx *c, const cJSON *v, const char *path, bool *out) {
  if (!cJSON_IsBool(v)) return type_fail(c, v, path, c->words->not_bool);
  *out = cJSON_IsTrue(v);
  return HS_OK;
}

hs_status hs_json_string(const hs_json_ctx *c, const cJSON *v, const char *path, char **out) {
  if (!cJSON_IsString(v)) return type_fail(c, v, path, c->words->not_string);
  if (!v->valuestring[0]) return hs_json_fail(c, HS_EINVAL, path, "%s", c->words->empty_string);
  *out = hs_strdup(v->valuestring);
  return HS_OK;
}

/* --- numbers -------------------------------------------------------------- */

/* The reason, and with show_got what v was: its type, or its value. */
static hs_status num_fail(const hs_json_ctx *c, hs_status st, const char *path,
                          const char *reason, const cJSON *v) {
  if (!c->words->show_got) return hs_json_fail(c, st, path, "%s", reason);
  if (!cJSON_IsNumber(v)) return hs_json_fail(c, st, path, "%s, got %s", reason, hs_json_type(v));
  return hs_json_fail(c, st, path, "%s, got %.17g", reason, v->valuedouble);
}

static hs_status check_number(const hs_json_ctx *c, const cJSON *v, const char *path,
                              const hs_json_num *spec, bool whole, double *out) {
  if (!cJSON_IsNumber(v))
    return num_fail(c, spec->not_number ? spec->not_number : HS_ETYPE, path, spec->want, v);
  double x = v->valuedouble;
  if (!isfinite(x))
    return num_fail(c, spec->non_finite ? spec->non_finite : HS_ERANGE, path, spec->want, v);
  hs_status range = spec->out_of_range ? spec->out_of_range : HS_ERANGE;
  if (x < spec->lo || (spec->lo_open && x == spec->lo) || (whole && floor(x) != x))
    return num_fail(c, range, path, spec->want, v);
  if (x > spec->hi || (spec->hi_open && x == spec->hi))
    return num_fail(c, range, path, spec->above ? spec->above : spec->want, v);
  *out = x;
  return HS_OK;
}

hs_status hs_json_number(const hs_json_ctx *c, const cJSON *v, const char *path,
                         const hs_json_num *spec, double *out) {
  return check_number(c, v, path, spec, false, out);
}

hs_status hs_json_integer(const hs_json_ctx *c, const cJSON *v, const char *path,
                          const hs_json_num *spec, double *out) {
  return check_number(c, v, path, spec, true, out);
}
