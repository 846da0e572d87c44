/* hs_json_get.h: strict getters over cJSON, shared by the scenario loader
 * (sim/) and the device profiles (devices/). Library hetsim::json
 * (traces/src/json_get.c): hetsim::status + cJSON, so the libc-only
 * hetsim::status stays free of cJSON.
 *
 * Every failure is "<origin>: <path>: <reason><suffix>" in *err, the path
 * given as text ("a.b[2].c", built with hs_json_path). The two callers word
 * the same situations differently and their messages are checked byte for
 * byte by the tests, so the wording is a parameter (hs_json_words for what a
 * loader says everywhere, hs_json_num for one number's range and reason), not
 * a choice made here. */
#ifndef HS_JSON_GET_H
#define HS_JSON_GET_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/hs_status.h"

/* Paths longer than HS_JSON_PATH_MAX - 1 bytes are cut (hs_json_path). */
#define HS_JSON_PATH_MAX 256

typedef struct hs_json_words {
  const char *top_level;    /* shown for the empty path; NULL: "<origin>: <reason>" */
  const char *unknown_key;  /* head of the list, e.g. "unknown key (allowed here:" */
  const char *duplicate;    /* a key that appears twice */
  const char *missing;      /* a required key that is absent */
  const char *not_string;   /* a value that is not a string */
  bool show_got;            /* append ", got <type>" to not_string, not_object
                               and not_bool, and ", got <type>" or ", got %.17g"
                               to a number's reason */
  const char *empty_string; /* "" where a string is required */
  const char *not_object;   /* a value that is not an object */
  const char *not_bool;     /* a value that is neither true nor false */
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

/* --- paths ---------------------------------------------------------------- */

/* A JSON path being built while a tree is walked: push a key or an index,
 * keep the returned mark, pop back to it. Nothing is allocated. The text
 * holds the first HS_JSON_PATH_MAX - 1 bytes of the path; a longer path is
 * cut there, and with mark_cut its text is its first HS_JSON_PATH_MAX - 4
 * bytes and "..." (the message still names where the path starts). Popping
 * below the cut gives back the exact text. Keys are copied as given (a
 * caller that shows input keys passes them through hs_json_shown). */
typedef struct hs_json_path {
  char s[HS_JSON_PATH_MAX]; /* the text shown, NUL-terminated */
  size_t len;               /* bytes of the whole path, even past the cut */
  bool mark_cut;
  char under[3];            /* the path's bytes that "..." covers */
} hs_json_path;

/* An empty path (the root), or start's text when start is not NULL. */
void hs_json_path_init(hs_json_path *p, bool mark_cut, const char *start);
/* Appends ".key" ("key" at the root) or "[i]"; returns the mark to pop to. */
size_t hs_json_path_key(hs_json_path *p, const char *key);
size_t hs_json_path_index(hs_json_path *p, size_t i);
void hs_json_path_pop(hs_json_path *p, size_t mark);
/* The text ("" at the root); valid until the next push or pop. */
const char *hs_json_path_str(const hs_json_path *p);

/* --- failures ------------------------------------------------------------- */

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

/* "<parent>.<key>" ("<key>" at the top) into out[HS_JSON_PATH_MAX], cut as
 * hs_json_path cuts (mark_cut from the words); the key is shown through
 * hs_json_shown when the words say show_keys. For callers that pass paths
 * down as text rather than keep one hs_json_path. */
void hs_json_join(const hs_json_ctx *c, char *out, const char *parent, const char *key);
/* "<parent>[i]" into out[HS_JSON_PATH_MAX], cut the same way. */
void hs_json_join_index(const hs_json_ctx *c, char *out, const char *parent, size_t i);

/* Every member of obj is in allowed (NULL-terminated) and appears once; an
 * unknown key's message lists shown (NULL: allowed). */
hs_status hs_json_check_keys(const hs_json_ctx *c, const cJSON *obj, const char *path,
                             const char *const *allowed, const char *const *shown);

/* The "required key is missing" failure of parent.key. */
hs_status hs_json_missing(const hs_json_ctx *c, const char *parent, const char *key);

/* A non-empty string value v at path: a heap copy (hs_free) in *out. */
hs_status hs_json_string(const hs_json_ctx *c, const cJSON *v, const char *path, char **out);

/* v is an object (HS_ETYPE with not_object otherwise). */
hs_status hs_json_object(const hs_json_ctx *c, const cJSON *v, const char *path);

/* v is true or false (HS_ETYPE with not_bool otherwise), into *out. */
hs_status hs_json_bool(const hs_json_ctx *c, const cJSON *v, const char *path, bool *out);

/* --- numbers -------------------------------------------------------------- */

/* What one number must be, and how its failures are worded and classed.
 * The range is lo <(=) v <(=) hi (lo may be -INFINITY, hi INFINITY). Every
 * failure's reason is `want` ("expected a number in [0, 1]", "must be a
 * finite number > 0"), except a value above the range when `above` is set
 * ("must be at most 1e+09 (check the units)"); with the words' show_got the
 * reason ends ", got <type>" (not a number) or ", got %.17g" (any other).
 * Which status each class of failure gets is the caller's: the two loaders
 * have always classed them differently and scripts read the exit codes. */
typedef struct hs_json_num {
  double lo, hi;
  bool lo_open, hi_open;
  const char *want;
  const char *above;    /* v above hi; NULL: want */
  hs_status not_number; /* not a JSON number; HS_OK means HS_ETYPE */
  hs_status non_finite; /* inf or nan (cJSON reads 1e999 as inf); HS_OK means HS_ERANGE */
  hs_status out_of_range; /* outside the range, or a fraction; HS_OK means HS_ERANGE */
} hs_json_num;

/* v as a number in the spec's range; a failure is classed as above.
 * *out untouched on failure. O(1). */
hs_status hs_json_number(const hs_json_ctx *c, const cJSON *v, const char *path,
                         const hs_json_num *spec, double *out);
/* The same for a whole number: a finite value with a fraction is out of
 * range (classed and worded as any value out of range). *out is the whole number as a double
 * (JSON numbers are doubles: exact up to 2^53 in magnitude); the caller
 * converts it to the type its range fits. */
hs_status hs_json_integer(const hs_json_ctx *c, const cJSON *v, const char *path,
                          const hs_json_num *spec, double *out);

#endif
