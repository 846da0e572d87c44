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
#include "traces/hs_outfile.h"
#include "traces/hs_speed_trace.h"
#include "base/hs_util.h"
#include "scenario_internal.h"

#ifndef HS_SCENARIO_DIR /* the shipped scenarios, beside the program (hs_util.h) */
#define HS_SCENARIO_DIR "scenarios"
#endif

/* --- the block table ------------------------------------------------------------
 * In the format's order (printing, the reference). `step` is the pipeline's
 * order, today's exactly: root scalars, network, devices, topology, regime
 * (its defaults read the devices), policy (the regime says which apply),
 * telemetry, dynamics, the budget and name checks, and learning last (real
 * mode reads the data set, so every cheaper check comes first). */
#define NUM_LINE(req, d, l, lopen, h) \
  .type = SCN_NUM, .required = req, .def = d, .lo = l, .lo_open = lopen, .hi = h
#define UINT_LINE(req, d, l, h) .type = SCN_UINT, .required = req, .def = d, .lo = l, .hi = h

const scn_block scn_blocks[] = {
    {"name", 10, true, scn_parse_name, scn_print_name, scn_free_name, .type = SCN_STR,
     .def_text = "the file name without \".json\"", .doc = "the scenario's name (no control characters)"},
    {"description", 20, true, scn_parse_description, scn_print_description, scn_free_description,
     .type = SCN_STR, .doc = "free text, printed back"},
    {"seed", 30, true, scn_parse_seed, scn_print_seed, NULL, UINT_LINE(false, 1, 0, SCN_MAX_U53),
     .doc = "the master seed: every random stream derives from it"},
    {"task", 40, true, scn_parse_task, scn_print_task, scn_free_task, .type = SCN_STR,
     .def_text = "mnist", .doc = "the task every device profile must have been measured on"},
    {"model_bytes", 50, true, scn_parse_model_bytes, scn_print_model_bytes, NULL,
     NUM_LINE(true, 0, 0, true, INFINITY), .doc = "bytes of the model each transfer moves"},
    {"rounds", 60, true, scn_parse_rounds, scn_print_rounds, NULL, UINT_LINE(true, 0, 1, 1e9),
     .doc = "rounds to run"},
    {"samples_per_round", 70, true, scn_parse_samples_per_round, scn_print_samples_per_round, NULL,
     UINT_LINE(true, 0, 1, SCN_MAX_U53), .doc = "the round's sample budget the policy splits"},
    {"batch_size", 80, true, scn_parse_batch_size, scn_print_batch_size, NULL,
     UINT_LINE(false, 32, 1, 1e9), .doc = "samples per optimiser step"},
    {"regime", 130, true, scn_parse_regime, scn_print_regime, scn_free_regime, .type = SCN_OBJECT,
     .def_text = "{\"kind\": \"pma\"}", .doc = "how a round runs: \"kind\" and that regime's options"},
    {"policy", 140, true, scn_parse_policy, scn_print_policy, NULL, .type = SCN_OBJECT,
     .def_text = "{\"kind\": \"equal\"}", .doc = "the controller: \"kind\" and that policy's keys"},
    {"devices", 110, true, scn_parse_devices, scn_print_devices, scn_free_devices,
     .type = SCN_ARRAY, .required = true, .keys = scn_device_keys,
     .doc = "entries of devices: a profile, a link, a count"},
    {"network", 100, true, scn_parse_network, scn_print_network, scn_free_network,
     .type = SCN_OBJECT, .required = true, .keys = scn_network_keys,
     .doc = "links by name (bandwidth_mbps, latency_ms) and the server's link"},
    {"topology", 120, false, scn_parse_topology, scn_print_topology, scn_free_topology,
     .type = SCN_OBJECT, .def_text = "none",
     .doc = "a GPU cluster's nodes, NICs and tiers (fsdp); read with \"model\""},
    {"model", 0, false, NULL, NULL, NULL, .type = SCN_OBJECT, .def_text = "none",
     .doc = "the model's parameters, state and activations (fsdp); read with \"topology\""},
    {"telemetry", 150, true, scn_parse_telemetry, scn_print_telemetry, NULL, .type = SCN_OBJECT,
     .def_text = "no noise", .keys = scn_telemetry_keys, .doc = "noise on what the meters report (fractions, 0: exact)"},
    {"switch_off_unselected", 90, true, scn_parse_switch_off, scn_print_switch_off, NULL,
     .type = SCN_BOOL, .def = 0, .doc = "devices given no samples are powered off for the round"},
    {"learning", 190, true, scn_parse_learning, scn_print_learning, scn_free_learning,
     .type = SCN_OBJECT, .def_text = "off", .keys = scn_learning_keys,
     .doc = "learning in the loop: data, partition, optimiser, evaluation"},
    {"dynamics", 160, false, scn_parse_dynamics, scn_print_dynamics, scn_free_dynamics,
     .type = SCN_OBJECT, .def_text = "none", .keys = scn_dynamics_keys,
     .doc = "devices that change: thermal throttling, co-tenants, availability"},
    {NULL, 170, false, scn_check_budget, .doc = "samples_per_round covers every min_samples"},
    {NULL, 180, false, scn_devices_check, .doc = "device and entry names are unique"},
};
const size_t scn_nblocks = sizeof scn_blocks / sizeof scn_blocks[0];

/* The top-level keys, as the unknown-key message lists them: the first
 * format's, then the later ones, each in table order. */
#define NROOT (sizeof scn_blocks / sizeof scn_blocks[0] + 1)
static const char *const *root_keys(const char *keys[NROOT]) {
  size_t n = 0;
  for (int late = 0; late < 2; late++)
    for (size_t i = 0; i < scn_nblocks; i++)
      if (scn_blocks[i].key && scn_blocks[i].first_format == !late) keys[n++] = scn_blocks[i].key;
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
      const scn_block *b = &scn_blocks[i];
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
  char *text = hs_read_file(path, &len, &e);
  if (!text) {
    /* hs_read_file names the path; say what it is. */
    hs_error_set(err, e.status, "%s (scenario file)", e.msg);
    return NULL;
  }
  /* A NUL byte would end the text cJSON sees: "{...}\0garbage" passed. */
  if (hs_text_check_nul(text, len, path, err) != HS_OK) {
    hs_free(text);
    return NULL;
  }
  char *dir = hs_path_dir(path);
  hs_scenario *sc = hs_scenario_parse(text, path, dir, ovr, novr, err);
  hs_free(dir);
  hs_free(text);
  return sc;
}

void hs_scenario_destroy(hs_scenario *sc) {
  if (!sc) return;
  for (size_t i = 0; i < scn_nblocks; i++)
    if (scn_blocks[i].free) scn_blocks[i].free(sc);
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
