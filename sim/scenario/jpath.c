/* jpath.c: JSON paths for --set overrides. (Paths built for messages are
 * hetsim::json's hs_json_path, shared with the profile loader; jpath.h.)
 *
 * --set keys are parsed into segments once; every lookup is then a linear walk
 * over the members of each object on the way, O(depth x width), which is
 * nothing next to parsing the file. Invariant: paths this module formats and
 * paths it parses have one canonical text, so an error found during
 * validation can be matched to the --set key that caused it. */
#include "jpath.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "traces/hs_json_get.h"

hs_status sim_jpath_parse(const char *path, sim_jseg **segs_out, size_t *nsegs_out,
                          hs_error *err) {
  size_t cap = 4, n = 0;
  sim_jseg *segs = hs_malloc(cap * sizeof *segs);
  const char *s = path;
  if (!*s) {
    hs_free(segs);
    return hs_error_set(err, HS_EINVAL, "empty key");
  }
  for (;;) {
    if (n == cap) segs = hs_reallocarray(segs, cap *= 2, sizeof *segs);
    if (*s == '[') {
      s++;
      if (*s < '0' || *s > '9') goto bad_index;
      size_t v = 0;
      while (*s >= '0' && *s <= '9') {
        if (v > (SIZE_MAX - 9) / 10) goto bad_index;
        v = v * 10 + (size_t)(*s - '0');
        s++;
      }
      if (*s != ']') goto bad_index;
      s++;
      segs[n++] = (sim_jseg){NULL, 0, v};
    } else {
      size_t len = strcspn(s, ".[]");
      if (len == 0) {
        hs_free(segs);
        return hs_error_set(err, HS_EINVAL, "empty name at offset %zu", (size_t)(s - path));
      }
      segs[n++] = (sim_jseg){s, len, 0};
      s += len;
    }
    if (!*s) break;
    if (*s == '.') {
      s++;
      if (*s == '[' || !*s) {
        hs_free(segs);
        return hs_error_set(err, HS_EINVAL, "empty name at offset %zu", (size_t)(s - path));
      }
    } else if (*s != '[') {
      hs_free(segs);
      return hs_error_set(err, HS_EINVAL, "unexpected '%c' at offset %zu", *s,
                          (size_t)(s - path));
    }
  }
  *segs_out = segs;
  *nsegs_out = n;
  return HS_OK;
bad_index:
  hs_free(segs);
  return hs_error_set(err, HS_EINVAL, "bad array index at offset %zu (write [0], [1], ...)",
                      (size_t)(s - path));
}

void sim_jpath_format(const sim_jseg *segs, size_t nsegs, char *buf, size_t cap) {
  size_t len = 0;
  if (cap == 0) return;
  buf[0] = '\0';
  for (size_t i = 0; i < nsegs && len < cap - 1; i++) {
    int n = segs[i].key ? snprintf(buf + len, cap - len, "%s%.*s", i ? "." : "",
                                   (int)segs[i].keylen, segs[i].key)
                        : snprintf(buf + len, cap - len, "[%zu]", segs[i].index);
    if (n < 0) break;
    len += (size_t)n;
  }
}

/* cJSON allocates with malloc; like hs_alloc, running out is not an input error. */
static void json_oom(void) {
  fprintf(stderr, "hetsim: out of memory in the JSON reader\n");
  abort();
}

static cJSON *json_member(cJSON *obj, const char *key, size_t keylen) {
  cJSON *found = NULL;
  /* The last of duplicate keys, like most JSON readers; the scenario loader
   * rejects duplicates anyway. */
  for (cJSON *c = obj->child; c; c = c->next)
    if (c->string && strlen(c->string) == keylen && !memcmp(c->string, key, keylen)) found = c;
  return found;
}

cJSON *sim_json_at(cJSON *root, const sim_jseg *segs, size_t nsegs) {
  cJSON *node = root;
  for (size_t i = 0; i < nsegs && node; i++) {
    if (segs[i].key)
      node = cJSON_IsObject(node) ? json_member(node, segs[i].key, segs[i].keylen) : NULL;
    else
      node = cJSON_IsArray(node) && segs[i].index < (size_t)cJSON_GetArraySize(node)
                 ? cJSON_GetArrayItem(node, (int)segs[i].index)
                 : NULL;
  }
  return node;
}

const char *sim_json_type(const cJSON *node) { return hs_json_type(node); }

hs_status sim_json_set(cJSON *root, const char *path, const char *value, hs_error *err) {
  sim_jseg *segs;
  size_t n;
  hs_status st = sim_jpath_parse(path, &segs, &n, err);
  if (st) return st;
  char where[SIM_JPATH_MAX];
  /* Walk to the parent, naming the first part that is missing. */
  cJSON *parent = root;
  for (size_t i = 0; i + 1 < n; i++) {
    cJSON *next = sim_json_at(parent, segs + i, 1);
    if (!next) {
      sim_jpath_format(segs, i + 1, where, sizeof where);
      if (!segs[i].key && cJSON_IsArray(parent))
        st = hs_error_set(err, HS_ENOENT, "%s does not exist (it has %d entries)", where,
                          cJSON_GetArraySize(parent));
      else if (!cJSON_IsArray(parent) && !cJSON_IsObject(parent))
        st = hs_error_set(err, HS_ETYPE, "%s: cannot index into %s", where,
                          sim_json_type(parent));
      else if (segs[i].key && segs[i + 1].key && i + 2 == n) {
        /* --set regime.server.s_per_update=1 where regime has no server:
         * parents are never made up (a typo would become a new key), so
         * the message shows how to add the object whole. */
        cJSON *probe = cJSON_Parse(value);
        const char *q = probe ? "" : "\"";
        cJSON_Delete(probe);
        st = hs_error_set(err, HS_ENOENT,
                          "%s does not exist; to add it, set it whole: --set '%s={\"%.*s\": %s%s%s}'", where,
                          where, (int)segs[i + 1].keylen, segs[i + 1].key, q, value, q);
      } else
        st = hs_error_set(err, HS_ENOENT, "%s does not exist", where);
      hs_free(segs);
      return st;
    }
    parent = next;
  }
  const sim_jseg *last = &segs[n - 1];
  sim_jpath_format(segs, n, where, sizeof where);
  if (last->key ? !cJSON_IsObject(parent) : !cJSON_IsArray(parent)) {
    char pwhere[SIM_JPATH_MAX];
    sim_jpath_format(segs, n - 1, pwhere, sizeof pwhere);
    st = hs_error_set(err, HS_ETYPE, "%s is %s, not an %s", n > 1 ? pwhere : "the scenario",
                      sim_json_type(parent), last->key ? "object" : "array");
    hs_free(segs);
    return st;
  }
  const char *end = NULL;
  cJSON *v = cJSON_ParseWithOpts(value, &end, 1);
  if (!v) v = cJSON_CreateString(value);
  if (!v) json_oom();
  bool remove = cJSON_IsNull(v);
  if (last->key) {
    char *key = hs_malloc(last->keylen + 1);
    memcpy(key, last->key, last->keylen);
    key[last->keylen] = '\0';
    /* Remove every member with this key, then add: one value per key. */
    cJSON *old;
    while ((old = json_member(parent, last->key, last->keylen)) != NULL)
      cJSON_Delete(cJSON_DetachItemViaPointer(parent, old));
    if (remove)
      cJSON_Delete(v);
    else if (!cJSON_AddItemToObject(parent, key, v))
      json_oom();
    hs_free(key);
  } else {
    size_t size = (size_t)cJSON_GetArraySize(parent);
    if (last->index > size || (remove && last->index == size)) {
      st = hs_error_set(err, HS_ENOENT, "%s does not exist (it has %zu entries)", where, size);
      cJSON_Delete(v);
      hs_free(segs);
      return st;
    }
    if (remove) {
      cJSON_DeleteItemFromArray(parent, (int)last->index);
      cJSON_Delete(v);
    } else if (last->index == size) {
      if (!cJSON_AddItemToArray(parent, v)) json_oom();
    } else if (!cJSON_ReplaceItemInArray(parent, (int)last->index, v)) {
      json_oom();
    }
  }
  hs_free(segs);
  return HS_OK;
}
