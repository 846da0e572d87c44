/* json_get.c: strict cJSON getters shared by scenarios and profiles
 * (hs_json_get.h). Wording comes from the caller's hs_json_words. */
#include "base/hs_json_get.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"

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

void hs_json_join(const hs_json_ctx *c, char *out, const char *parent, const char *key) {
  char kbuf[80];
  if (c->words->show_keys) key = hs_json_shown(key, kbuf, sizeof kbuf);
  int len = parent[0] ? snprintf(out, HS_JSON_PATH_MAX, "%s.%s", parent, key)
                      : snprintf(out, HS_JSON_PATH_MAX, "%s", key);
  if (c->words->mark_cut && (len < 0 || len >= HS_JSON_PATH_MAX))
    memcpy(out + HS_JSON_PATH_MAX - 4, "...", 4);
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
      return hs_json_fail(c, HS_EKEY, sub, "%s%s)", c->words->unknown_key, list);
    }
    for (const cJSON *d = obj->child; d != m; d = d->next)
      if (!strcmp(d->string, m->string)) return hs_json_fail(c, HS_EKEY, sub, "%s", c->words->duplicate);
  }
  return HS_OK;
}

hs_status hs_json_missing(const hs_json_ctx *c, const char *parent, const char *key) {
  char sub[HS_JSON_PATH_MAX];
  int len = parent[0] ? snprintf(sub, sizeof sub, "%s.%s", parent, key)
                      : snprintf(sub, sizeof sub, "%s", key);
  if (c->words->mark_cut && (len < 0 || len >= HS_JSON_PATH_MAX))
    memcpy(sub + HS_JSON_PATH_MAX - 4, "...", 4);
  return hs_json_fail(c, HS_EMISSING, sub, "%s", c->words->missing);
}

hs_status hs_json_string(const hs_json_ctx *c, const cJSON *v, const char *path, char **out) {
  if (!cJSON_IsString(v)) {
    if (c->words->not_string_got)
      return hs_json_fail(c, HS_ETYPE, path, "%s, got %s", c->words->not_string, hs_json_type(v));
    return hs_json_fail(c, HS_ETYPE, path, "%s", c->words->not_string);
  }
  if (!v->valuestring[0]) return hs_json_fail(c, HS_EINVAL, path, "%s", c->words->empty_string);
  *out = hs_strdup(v->valuestring);
  return HS_OK;
}
