/* scenario.c: load, override and validate a scenario (the pipeline), and
 * look things up in it.
 *
 * Pipeline: text -> cJSON tree -> --set overrides on the tree
 * (scenario_override.c) -> one validating walk that fills the open hs_scenario
 * -> cross checks (links, names, regime options, budget). The walk is the
 * block table below: one line per top-level key, {key, parse step, parse,
 * print, free} and, for the reference, its type, default and doc. Each
 * block's functions live in its own file (scenario_internal.h lists them);
 * printing back walks the same table (scenario_json.c), and so do destroy
 * and `hetsim reference scenario-keys`. A new top-level block is its file and
 * its line here. Rejected: the four hand-kept lists this replaces (the key
 * list, the parse chain, the printer, the destructor), which had to agree.
 *
 * Errors: the first problem found stops the load; the message is
 * "<file>: <JSON path>: <reason>", plus "(from --set KEY)" when the path lies
 * under a key an override wrote. Checks run in a fixed order (top-level keys,
 * then the lines by step: scalars, network, devices, topology, regime,
 * policy, telemetry, dynamics, budget, names, learning) so a file with
 * several problems always reports the same one.
 *
 * Which policy a regime runs comes from the regime's capabilities
 * (sim_regime_runs_policy); this file knows no regime and nothing of a run. */
#include "sim/hs_scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "traces/hs_outfile.h"
#include "traces/hs_speed_trace.h"
#include "base/hs_util.h"
#include "scenario_internal.h"

#ifndef HS_SCENARIO_DIR /* the shipped scenarios, beside the program (hs_util.h) */
#define HS_SCENARIO_DIR "scenarios"
#endif

/* --- the block table ------------------------------------------------------------
 * One line per block, in the format's order (printing, the reference). A
 * block's `step` (in its descriptor) is the pipeline's
 * order, today's exactly: root scalars, network, devices, topology, regime
 * (its defaults read the devices), policy (the regime says which apply),
 * telemetry, dynamics, the budget and name checks, and learning last (real
 * mode reads the data set, so every cheaper check comes first). */
/* Each line is a block's descriptor, scn_block_<name>, defined in the
 * block's file (scenario_root.c: the root's own keys, policy, telemetry). */
#define SCN_BLOCKS(X) \
  X(name)                \
  X(description)         \
  X(seed)                \
  X(task)                \
  X(model_bytes)         \
  X(rounds)              \
  X(samples_per_round)   \
  X(batch_size)          \
  X(regime)              \
  X(policy)              \
  X(devices)             \
  X(network)             \
  X(topology)            \
  X(model)               \
  X(telemetry)           \
  X(switch_off)          \
  X(report)              \
  X(learning)            \
  X(dynamics)            \
  X(budget)              \
  X(names)

#define DECLARE(n) extern const scn_block scn_block_##n;
SCN_BLOCKS(DECLARE)
#define ADDRESS(n) &scn_block_##n,
const scn_block *const scn_blocks[] = {SCN_BLOCKS(ADDRESS)};
const size_t scn_nblocks = sizeof scn_blocks / sizeof scn_blocks[0];
_Static_assert(sizeof scn_blocks / sizeof scn_blocks[0] <= SCN_MAX_BLOCKS,
               "every block has a data slot (sim_scn.block_data)");

static size_t block_index(const scn_block *b) {
  for (size_t i = 0; i < scn_nblocks; i++)
    if (scn_blocks[i] == b) return i;
  HS_ASSERT(0, "a block of the table");
  return 0;
}

void **scn_block_data(hs_scenario *sc, const scn_block *b) {
  return &((sim_scn *)sc)->block_data[block_index(b)];
}

const void *scn_block_get(const hs_scenario *sc, const scn_block *b) {
  return ((const sim_scn *)sc)->block_data[block_index(b)];
}

/* The top-level keys, as the unknown-key message lists them: the first
 * format's, then the later ones, each in table order. */
#define NROOT (sizeof scn_blocks / sizeof scn_blocks[0] + 1)
static const char *const *root_keys(const char *keys[NROOT]) {
  size_t n = 0;
  for (int late = 0; late < 2; late++)
    for (size_t i = 0; i < scn_nblocks; i++)
      if (scn_blocks[i]->key && scn_blocks[i]->first_format == !late) keys[n++] = scn_blocks[i]->key;
  keys[n] = NULL;
  return keys;
}

static hs_status parse_root(ctx *c, const cJSON *root) {
  hs_status st;
  const char *keys[NROOT];
  if ((st = scn_need_object(c, root)) || (st = scn_check_keys(c, root, root_keys(keys)))) return st;
  /* The lines in step order: steps are few and unique, so a scan per step. */
  unsigned done = 0;
  for (;;) {
    const scn_block *next = NULL;
    for (size_t i = 0; i < scn_nblocks; i++) {
      const scn_block *b = scn_blocks[i];
      if (b->parse && b->step > done && (!next || b->step < next->step)) next = b;
    }
    if (!next) return HS_OK;
    c->block = next;
    if ((st = next->parse(c, root))) return st;
    done = next->step;
  }
}
/* --- load ---------------------------------------------------------------------- */

/* Line and column of offset `at` in text, for malformed-JSON messages. */
static void line_col(const char *text, size_t at, size_t *line, size_t *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < at && text[i]; i++) {
    if (text[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* How many arrays and objects are open at byte `at` (strings skipped): cJSON
 * fails without a reason, and past CJSON_NESTING_LIMIT the reason is depth. */
static size_t json_depth_at(const char *text, size_t at) {
  size_t depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < at && text[i]; i++) {
    char ch = text[i];
    if (in_str) {
      if (ch == '\\' && text[i + 1]) i++;
      else if (ch == '"') in_str = false;
    } else if (ch == '"') {
      in_str = true;
    } else if (ch == '[' || ch == '{') {
      depth++;
    } else if ((ch == ']' || ch == '}') && depth) {
      depth--;
    }
  }
  return depth;
}

hs_scenario *hs_scenario_parse(const char *json_text, const char *origin, const char *base_dir,
                               const hs_override *ovr, size_t novr, hs_error *err) {
  sim_scn *s = hs_calloc(1, sizeof *s);
  s->pub.path = hs_strdup(origin);
  s->pub.dir = hs_strdup(base_dir && base_dir[0] ? base_dir : ".");
  ctx c = {.origin = origin, .dir = s->pub.dir, .err = err, .s = s};
  sim_jpath_init(&c.path);
  ovr_mark *marks = novr ? hs_calloc(novr, sizeof *marks) : NULL;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(json_text, &end, 1);
  hs_status st = HS_OK;
  if (!root) {
    size_t line, col, at = end ? (size_t)(end - json_text) : 0;
    line_col(json_text, at, &line, &col);
    char near[24];
    scn_shown(json_text + at, near, sizeof near);
    if (json_depth_at(json_text, at) >= CJSON_NESTING_LIMIT)
      st = hs_error_set(err, HS_EPARSE, "%s: line %zu, column %zu: nested deeper than %d levels",
                        origin, line, col, CJSON_NESTING_LIMIT);
    else
      st = hs_error_set(err, HS_EPARSE, "%s: line %zu, column %zu: malformed JSON%s%s%s", origin,
                      line, col, near[0] ? " near \"" : " (unexpected end of file)", near,
                      near[0] ? "\"" : "");
  }
  if (!st) st = scn_apply_overrides(&c, root, ovr, novr, marks);
  c.marks = marks;
  if (!st) st = parse_root(&c, root);
  cJSON_Delete(root);
  hs_free(marks);
  if (st) {
    hs_scenario_destroy(&s->pub);
    return NULL;
  }
  return &s->pub;
}

hs_scenario *hs_scenario_load(const char *path, const hs_override *ovr, size_t novr,
                              hs_error *err) {
  hs_error e = {0};
  size_t len = 0;
  char *found = hs_scenario_find(path, err); /* a file, or a shipped scenario's name */
  if (!found) return NULL;
  char *text = hs_read_file(found, &len, &e);
  if (!text) {
    /* hs_read_file names the path; say what it is. */
    hs_error_set(err, e.status, "%s (scenario file)", e.msg);
    hs_free(found);
    return NULL;
  }
  /* A NUL byte would end the text cJSON sees: "{...}\0garbage" passed. */
  if (hs_text_check_nul(text, len, found, err) != HS_OK) {
    hs_free(text);
    hs_free(found);
    return NULL;
  }
  char *dir = hs_path_dir(found);
  hs_scenario *sc = hs_scenario_parse(text, found, dir, ovr, novr, err);
  hs_free(dir);
  hs_free(text);
  hs_free(found);
  return sc;
}

void hs_scenario_destroy(hs_scenario *sc) {
  if (!sc) return;
  for (size_t i = 0; i < scn_nblocks; i++)
    if (scn_blocks[i]->free) scn_blocks[i]->free(sc);
  hs_free(sc->path);
  hs_free(sc->dir);
  hs_free(sc);
}

const char *hs_scenario_default_path(void) {
  return hs_share_path(HS_SCENARIO_DIR "/testbed-mnist-pma.json");
}

const hs_link_spec *hs_scenario_link(const hs_scenario *sc, const char *name) {
  for (size_t i = 0; i < sc->nlinks; i++)
    if (!strcmp(sc->links[i].name, name)) return &sc->links[i];
  return NULL;
}

size_t hs_scenario_find_device(const hs_scenario *sc, const char *name) {
  size_t first, n;
  return scn_find_name((const sim_scn *)sc, name, &first, &n) && n == 1 ? first : SIZE_MAX;
}

bool hs_scenario_find_name(const hs_scenario *sc, const char *name, size_t *first, size_t *n) {
  return scn_find_name((const sim_scn *)sc, name, first, n);
}

const uint32_t *hs_scenario_groups(const hs_scenario *sc) {
  const sim_scn *s = (const sim_scn *)sc;
  return s->regime && s->regime->groups ? s->regime->groups(sc->regime.opts) : NULL;
}
