/* jpath.h (private to sim/): JSON paths as error messages and --set keys write
 * them ("devices[2].count", "network.links.wan.bandwidth_mbps"), and the --set
 * operation on a cJSON tree. */
#ifndef SIM_JPATH_H
#define SIM_JPATH_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "traces/hs_json_get.h"
#include "base/hs_status.h"

#define SIM_JPATH_MAX HS_JSON_PATH_MAX

/* A path being built while a tree is walked: the shared builder of
 * hetsim::json (hs_json_path: push a key or an index, keep the mark, pop
 * back to it), under the names the scenario loader's files call it by. The
 * scenario's paths are cut at SIM_JPATH_MAX - 1 bytes without a mark (the
 * profile loader marks its cuts with "..."; each keeps its messages). */
typedef hs_json_path sim_jpath;

static inline void sim_jpath_init(sim_jpath *p) { hs_json_path_init(p, false, NULL); }
static inline size_t sim_jpath_key(sim_jpath *p, const char *key) {
  return hs_json_path_key(p, key);
}
static inline size_t sim_jpath_index(sim_jpath *p, size_t i) { return hs_json_path_index(p, i); }
static inline void sim_jpath_pop(sim_jpath *p, size_t mark) { hs_json_path_pop(p, mark); }
/* "" at the root. */
static inline const char *sim_jpath_str(const sim_jpath *p) { return hs_json_path_str(p); }

/* One step of a parsed path: an object key (key, keylen) or an array index. */
typedef struct sim_jseg {
  const char *key; /* points into the parsed text; NULL for an index */
  size_t keylen;
  size_t index;
} sim_jseg;

/* Parse "a.b[2].c" into segments (heap array, hs_free; points into path).
 * The first segment is a key; keys are non-empty and contain none of ". [ ]".
 * HS_EINVAL with a reason (no prefix) on a malformed path. */
hs_status sim_jpath_parse(const char *path, sim_jseg **segs, size_t *nsegs, hs_error *err);

/* The canonical text of a parsed path ("a.b[2].c") into buf. */
void sim_jpath_format(const sim_jseg *segs, size_t nsegs, char *buf, size_t cap);

/* The node at segs[0..nsegs) under root, or NULL. */
cJSON *sim_json_at(cJSON *root, const sim_jseg *segs, size_t nsegs);

/* --set: put `value` (JSON text when it parses as JSON, else a string) at the
 * path. The parent must exist: an object (the key is replaced or added) or an
 * array (an index up to its size: size appends). The JSON value null removes
 * the key or element. Errors (HS_EINVAL, HS_ENOENT, HS_ETYPE) carry a reason
 * that names the missing or mistyped part, without a prefix. */
hs_status sim_json_set(cJSON *root, const char *path, const char *value, hs_error *err);

/* With its article, for messages: "a string", "a number", "an object",
 * "an array", "a boolean", "null". */
const char *sim_json_type(const cJSON *node);

#endif
