/* hs_json_get.h: strict getters over cJSON, shared by the scenario loader
 * (sim/) and the device profiles (devices/). Library hetsim::json
 * (policies/base/json_get.c): hetsim::status + cJSON, so the libc-only
 * hetsim::status stays free of cJSON.
 *
 * Every failure is "<origin>: <path>: <reason><suffix>" in *err, the path
 * given as text ("a.b[2].c"). The two callers word the same situations
 * differently and their messages are checked byte for byte by the tests, so
 * the wording is a parameter (hs_json_words), not a choice made here. */
#ifndef HS_JSON_GET_H
#define HS_JSON_GET_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/hs_status.h"

/* Paths longer than this are cut (see hs_json_words.mark_cut). */
#define HS_JSON_PATH_MAX 256

typedef struct hs_json_words {
  const char *top_level;    /* shown for the empty path; NULL: "<origin>: <reason>" */
  const char *unknown_key;  /* head of the list, e.g. "unknown key (allowed here:" */
  const char *duplicate;    /* a key that appears twice */
  const char *missing;      /* a required key that is absent */
  const char *not_string;   /* a value that is not a string */
  bool not_string_got;      /* append ", got <type>" to not_string */
  const char *empty_string; /* "" where a string is required */
  bool show_keys;           /* member names pass through hs_json_shown in paths */
  bool mark_cut;            /* a cut path ends in "..." (else it is just cut) */
} hs_json_words;

typedef struct hs_json_ctx hs_json_ctx;
struct hs_json_ctx {
  const char *origin;
  hs_error *err;
  const hs_json_words *words;
  /* Optional: text appended to the message for this path (NULL or "": none),
   * e.g. the scenario's " (from --set KEY)". */
  const char *(*suffix)(const hs_json_ctx *c, const char *path, char *buf, size_t cap);
  void *user;
};

/* "<origin>: <path>: <reason><suffix>"; returns st. */
hs_status hs_json_fail(const hs_json_ctx *c, hs_status st, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Input text for a one-line message: control characters become '?', and text
 * longer than cap - 4 bytes is cut (before a UTF-8 character) and ends "...". */
const char *hs_json_shown(const char *text, char *buf, size_t cap);

/* "a string", "a number", "an object", ... for "got <type>" messages. */
const char *hs_json_type(const cJSON *node);

/* The member key of obj (case-sensitive; the first if repeated); NULL if obj
 * is NULL or has none. */
cJSON *hs_json_member(const cJSON *obj, const char *key);

/* "<parent>.<key>" ("<key>" at the top) into out[HS_JSON_PATH_MAX]. */
void hs_json_join(const hs_json_ctx *c, char *out, const char *parent, const char *key);

/* Every member of obj is in allowed (NULL-terminated) and appears once; an
 * unknown key's message lists shown (NULL: allowed). */
hs_status hs_json_check_keys(const hs_json_ctx *c, const cJSON *obj, const char *path,
                             const char *const *allowed, const char *const *shown);

/* The "required key is missing" failure of parent.key. */
hs_status hs_json_missing(const hs_json_ctx *c, const char *parent, const char *key);

/* A non-empty string value v at path: a heap copy (hs_free) in *out. */
hs_status hs_json_string(const hs_json_ctx *c, const cJSON *v, const char *path, char **out);

#endif
