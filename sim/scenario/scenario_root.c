/* scenario_root.c: the root's own keys (name, seed, rounds, ...), the
 * "policy" and "telemetry" blocks, and the budget check: their parse, print
 * and free functions, which are lines of the loader's block table
 * (scenario.c).
 *
 * A scalar key's type, default and range are fields of its table line, read
 * here by scn_get_line (so the loader and `hetsim reference scenario-keys`
 * read the same numbers); what the value becomes (a uint32_t, a string with
 * a computed default) is the line's own parse function.
 * Policy keys are the policies library's (hs_policy_config_set checks them):
 * this file passes numbers through as text and words the library's reasons
 * as loader messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "base/hs_fmt.h"
#include "scenario_internal.h"

/* --- the root's scalar keys ------------------------------------------------ */

static hs_status scn_get_line(ctx *c, const cJSON *root, double *out) {
  const scn_block *b = c->block;
  switch (b->type) {
    case SCN_UINT: return scn_get_uint(c, root, b->key, b->required, b->def, b->lo, b->hi, out);
    case SCN_NUM:
      return scn_get_num(c, root, b->key, b->required, b->def, b->lo, b->lo_open, b->hi, false,
                         out);
    default: HS_ASSERT(0, "a number line"); return HS_EINVAL;
  }
}

static char *stem_of(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen(base);
  if (n > 5 && !strcmp(base + n - 5, ".json")) n -= 5;
  char *s = hs_malloc(n + 1);
  memcpy(s, base, n);
  s[n] = '\0';
  return s;
}

static hs_status scn_parse_name(ctx *c, const cJSON *root) {
  const scn_block *b = c->block;
  hs_scenario *sc = &c->s->pub;
  hs_status st = scn_get_str(c, root, b->key, false, NULL, &sc->name);
  if (st) return st;
  if (!sc->name) {
    sc->name = stem_of(sc->path);
    return HS_OK;
  }
  for (const char *p = sc->name; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) {
      sim_jpath_key(&c->path, b->key);
      return scn_fail(c, HS_EINVAL, "control character in the name");
    }
  return HS_OK;
}
static void scn_print_name(const hs_scenario *sc, cJSON *root) { scn_add_str(root, "name", sc->name); }
static void scn_free_name(hs_scenario *sc) { hs_free(sc->name); }

static hs_status scn_parse_description(ctx *c, const cJSON *root) {
  const scn_block *b = c->block;
  return scn_get_str(c, root, b->key, false, NULL, &c->s->description);
}
static void scn_print_description(const hs_scenario *sc, cJSON *root) {
  const sim_scn *s = (const sim_scn *)sc;
  if (s->description) scn_add_str(root, "description", s->description);
}
static void scn_free_description(hs_scenario *sc) { hs_free(((sim_scn *)sc)->description); }

static hs_status scn_parse_seed(ctx *c, const cJSON *root) {
  double v;
  hs_status st = scn_get_line(c, root, &v);
  c->s->pub.seed = (uint64_t)v;
  return st;
}
static void scn_print_seed(const hs_scenario *sc, cJSON *root) {
  scn_add_num(root, "seed", (double)sc->seed);
}

static hs_status scn_parse_task(ctx *c, const cJSON *root) {
  const scn_block *b = c->block;
  return scn_get_str(c, root, b->key, false, b->def_text, &c->s->pub.task);
}
static void scn_print_task(const hs_scenario *sc, cJSON *root) { scn_add_str(root, "task", sc->task); }
static void scn_free_task(hs_scenario *sc) { hs_free(sc->task); }

static hs_status scn_parse_model_bytes(ctx *c, const cJSON *root) {
  return scn_get_line(c, root, &c->s->pub.model_bytes);
}
static void scn_print_model_bytes(const hs_scenario *sc, cJSON *root) {
  scn_add_num(root, "model_bytes", sc->model_bytes);
}

static hs_status scn_parse_rounds(ctx *c, const cJSON *root) {
  double v;
  hs_status st = scn_get_line(c, root, &v);
  c->s->pub.rounds = (uint32_t)v;
  return st;
}
static void scn_print_rounds(const hs_scenario *sc, cJSON *root) {
  scn_add_num(root, "rounds", sc->rounds);
}

static hs_status scn_parse_samples_per_round(ctx *c, const cJSON *root) {
  double v;
  hs_status st = scn_get_line(c, root, &v);
  c->s->pub.samples_per_round = (uint64_t)v;
  return st;
}
static void scn_print_samples_per_round(const hs_scenario *sc, cJSON *root) {
  scn_add_num(root, "samples_per_round", (double)sc->samples_per_round);
}

static hs_status scn_parse_batch_size(ctx *c, const cJSON *root) {
  double v;
  hs_status st = scn_get_line(c, root, &v);
  c->s->pub.batch_size = (uint32_t)v;
  return st;
}
static void scn_print_batch_size(const hs_scenario *sc, cJSON *root) {
  scn_add_num(root, "batch_size", sc->batch_size);
}

static hs_status scn_parse_switch_off(ctx *c, const cJSON *root) {
  const scn_block *b = c->block;
  return scn_get_bool(c, root, b->key, b->def != 0, &c->s->pub.switch_off_unselected);
}
static void scn_print_switch_off(const hs_scenario *sc, cJSON *root) {
  if (!cJSON_AddBoolToObject(root, "switch_off_unselected", sc->switch_off_unselected)) abort();
}

/* --- policy ------------------------------------------------------------------ */

/* The text hs_policy_config_set reads for a JSON number: whole numbers that
 * fit 64 bits in full (%.17g writes 2^60 as 1.152921504606847e+18, which
 * the library rightly refuses as an integer). Only numbers: the library also
 * takes quoted text, but "w_e": "0.5" in a file is a wrong type, as
 * "rounds": "3" is. */
static bool policy_text(const cJSON *v, char *buf, size_t cap) {
  if (!cJSON_IsNumber(v)) return false;
  double d = v->valuedouble;
  if (d == floor(d) && fabs(d) < 18446744073709551616.0)
    snprintf(buf, cap, "%.0f", d);
  else if (cap >= HS_FMT_DOUBLE_MAX)
    hs_fmt_double(buf, d); /* the shortest text that reads back to d: 0.3, not 0.29999999999999999 */
  else
    snprintf(buf, cap, "%.17g", d);
  return true;
}

static hs_status scn_parse_policy(ctx *c, const cJSON *root) {
  const scn_block *b = c->block;
  sim_scn *s = c->s;
  hs_scenario *sc = &s->pub;
  static const cJSON empty = {0};
  const cJSON *pol = scn_member(root, b->key);
  size_t m0 = sim_jpath_key(&c->path, b->key);
  hs_status st;
  if (pol && (st = scn_need_object(c, pol))) return st;
  if (!pol) pol = &empty;
  char *kind = NULL;
  if ((st = scn_get_str(c, pol, "kind", false, "equal", &kind))) return st;
  hs_error e = {0};
  st = hs_policy_config_init(&sc->policy, kind, &e);
  hs_free(kind);
  /* The policies library's messages start with the key ("kind: ..."). */
  if (st) {
    sim_jpath_key(&c->path, "kind");
    return scn_fail(c, st, "%s", strncmp(e.msg, "kind: ", 6) ? e.msg : e.msg + 6);
  }
  /* The regime's capabilities say which policies it can run (one source of
   * truth for validate and run). */
  if (s->regime && !sim_regime_runs_policy(s->regime, sc->policy.kind)) {
    sim_jpath_key(&c->path, "kind");
    return scn_fail(c, HS_EINVAL, "policy \"%s\" does not apply to regime %s", sc->policy.kind,
                sc->regime.kind);
  }
  sc->policy.seed = sc->seed;
  for (const cJSON *m = pol->child; m; m = m->next) {
    if (!strcmp(m->string, "kind")) continue;
    char shownkey[80];
    size_t m1 = sim_jpath_key(&c->path, scn_shown(m->string, shownkey, sizeof shownkey));
    for (const cJSON *d = pol->child; d != m; d = d->next)
      if (!strcmp(d->string, m->string)) return scn_fail(c, HS_EKEY, "key appears twice");
    if (!strcmp(m->string, "steps_per_round"))
      return scn_fail(c, HS_EKEY, "set regime.steps_per_round instead (the regime owns it)");
    char text[128];
    if (!policy_text(m, text, sizeof text))
      return scn_fail(c, HS_ETYPE, "expected a number, got %s", sim_json_type(m));
    /* The policies library quotes the key before its reason. No policy key
     * is longer than a name: a longer one goes in cut, so that the reason
     * still fits in the message (it is unknown either way). */
    char key[SCN_MAX_NAME + 1];
    snprintf(key, sizeof key, "%s", m->string);
    hs_error_clear(&e);
    st = hs_policy_config_set(&sc->policy, key, text, &e);
    if (st) {
      size_t kl = strlen(key);
      const char *why = !strncmp(e.msg, key, kl) && !strncmp(e.msg + kl, ": ", 2)
                            ? e.msg + kl + 2
                            : e.msg;
      return scn_fail(c, st, "%s", why);
    }
    if (!strcmp(m->string, "seed")) s->policy_seed_set = true;
    sim_jpath_pop(&c->path, m1);
  }
  if (sc->regime.steps_per_round) sc->policy.steps_per_round = sc->regime.steps_per_round;
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

static void policy_key(const char *key, const char *value_text, void *userdata) {
  cJSON *o = userdata;
  /* The policy's own steps_per_round comes from the regime; its seed from the
   * scenario seed unless the file pinned one (the caller adds that back). */
  if (!strcmp(key, "steps_per_round") || !strcmp(key, "seed")) return;
  scn_add_num(o, key, strtod(value_text, NULL));
}

static void scn_print_policy(const hs_scenario *sc, cJSON *root) {
  const sim_scn *s = (const sim_scn *)sc;
  cJSON *pol = scn_add_obj(root, "policy");
  scn_add_str(pol, "kind", sc->policy.kind);
  hs_policy_config_foreach(&sc->policy, policy_key, pol);
  if (s->policy_seed_set) scn_add_num(pol, "seed", (double)sc->policy.seed);
}

/* --- telemetry --------------------------------------------------------------- */

static const char *const scn_telemetry_keys[] = {"time_noise", "energy_noise", NULL};

static hs_status scn_parse_telemetry(ctx *c, const cJSON *root) {
  const scn_block *b = c->block;
  hs_scenario *sc = &c->s->pub;
  const cJSON *t = scn_member(root, b->key);
  static const cJSON empty = {0};
  size_t m0 = sim_jpath_key(&c->path, b->key);
  hs_status st;
  if (t && (st = scn_need_object(c, t))) return st;
  if (!t) t = &empty;
  if ((st = scn_check_keys(c, t, scn_telemetry_keys)) ||
      (st = scn_get_num(c, t, "time_noise", false, 0, 0, false, 1, false,
                    &sc->telemetry_time_noise)) ||
      (st = scn_get_num(c, t, "energy_noise", false, 0, 0, false, 1, false,
                    &sc->telemetry_energy_noise)))
    return st;
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

static void scn_print_telemetry(const hs_scenario *sc, cJSON *root) {
  cJSON *tel = scn_add_obj(root, "telemetry");
  scn_add_num(tel, "time_noise", sc->telemetry_time_noise);
  scn_add_num(tel, "energy_noise", sc->telemetry_energy_noise);
}

/* --- checks across blocks ------------------------------------------------------ */

/* Every participant gets at least min_samples, so the budget must cover them. */
static hs_status scn_check_budget(ctx *c, const cJSON *root) {
  (void)root;
  hs_scenario *sc = &c->s->pub;
  uint64_t min_samples = hs_policy_config_min_samples(&sc->policy);
  double floor_total = (double)sc->total_devices * (double)min_samples;
  if ((double)sc->samples_per_round < floor_total) {
    sim_jpath_key(&c->path, "samples_per_round");
    return scn_fail(c, HS_ERANGE,
                "%llu is below the floor: %zu devices x policy.min_samples %llu = %.0f",
                (unsigned long long)sc->samples_per_round, sc->total_devices,
                (unsigned long long)min_samples, floor_total);
  }
  return HS_OK;
}

/* --- its blocks: lines of the loader's block table (scenario.c) --- */

const scn_block scn_block_name = {
    .key = "name", .step = 10, .first_format = true,
    .parse = scn_parse_name, .print = scn_print_name, .free = scn_free_name,
    .type = SCN_STR, .def_text = "the file name without \".json\"",
    .doc = "the scenario's name (no control characters)"};

const scn_block scn_block_description = {
    .key = "description", .step = 20, .first_format = true,
    .parse = scn_parse_description, .print = scn_print_description, .free = scn_free_description,
    .type = SCN_STR, .doc = "free text, printed back"};

const scn_block scn_block_seed = {
    .key = "seed", .step = 30, .first_format = true,
    .parse = scn_parse_seed, .print = scn_print_seed,
    SCN_UINT_LINE(false, 1, 0, SCN_MAX_U53),
    .doc = "the master seed: every random stream derives from it"};

const scn_block scn_block_task = {
    .key = "task", .step = 40, .first_format = true,
    .parse = scn_parse_task, .print = scn_print_task, .free = scn_free_task,
    .type = SCN_STR, .def_text = "mnist",
    .doc = "the task every device profile must have been measured on"};

const scn_block scn_block_model_bytes = {
    .key = "model_bytes", .step = 50, .first_format = true,
    .parse = scn_parse_model_bytes, .print = scn_print_model_bytes,
    SCN_NUM_LINE(true, 0, 0, true, INFINITY),
    .doc = "bytes of the model each transfer moves"};

const scn_block scn_block_rounds = {
    .key = "rounds", .step = 60, .first_format = true,
    .parse = scn_parse_rounds, .print = scn_print_rounds,
    SCN_UINT_LINE(true, 0, 1, 1e9), .doc = "rounds to run"};

const scn_block scn_block_samples_per_round = {
    .key = "samples_per_round", .step = 70, .first_format = true,
    .parse = scn_parse_samples_per_round, .print = scn_print_samples_per_round,
    SCN_UINT_LINE(true, 0, 1, SCN_MAX_U53),
    .doc = "the round's sample budget the policy splits"};

const scn_block scn_block_batch_size = {
    .key = "batch_size", .step = 80, .first_format = true,
    .parse = scn_parse_batch_size, .print = scn_print_batch_size,
    SCN_UINT_LINE(false, 32, 1, 1e9), .doc = "samples per optimiser step"};

const scn_block scn_block_policy = {
    .key = "policy", .step = 140, .first_format = true,
    .parse = scn_parse_policy, .print = scn_print_policy,
    .type = SCN_OBJECT, .def_text = "{\"kind\": \"equal\"}",
    .doc = "the controller: \"kind\" and that policy's keys"};

const scn_block scn_block_telemetry = {
    .key = "telemetry", .step = 150, .first_format = true,
    .parse = scn_parse_telemetry, .print = scn_print_telemetry,
    .type = SCN_OBJECT, .def_text = "no noise", .keys = scn_telemetry_keys,
    .doc = "noise on what the meters report (fractions, 0: exact)"};

const scn_block scn_block_switch_off = {
    .key = "switch_off_unselected", .step = 90, .first_format = true,
    .parse = scn_parse_switch_off, .print = scn_print_switch_off,
    .type = SCN_BOOL, .def = 0,
    .doc = "devices given no samples are powered off for the round"};

const scn_block scn_block_budget = {
    .step = 170,
    .parse = scn_check_budget,
    .doc = "samples_per_round covers every min_samples"};
