/* scenario_regime.c: the "regime" object of a scenario, read generically from
 * the registered regimes' option tables (sim_regime.h); no regime is named here.
 *
 * Order of checks (fixed, so a file with several problems always reports the
 * same one): unknown keys (allowed: "kind" and every registered regime's
 * options, in registry order), the kind (one of the registered names; the
 * first registered regime is the default), keys that belong to other regimes
 * ("does not apply to regime ... (only to: ...)"), then the regime's options in
 * its table order. The regime's opt_prepare may change an option's default or
 * say that it does not apply, given the options read before it; since that
 * depends on words (CHOICE options), every later option's applicability is
 * checked right after each word is read, so a misplaced key is reported
 * before a bad value of an option between them.
 * O(regimes x options) per scenario: both are a handful.
 * Rejected: each regime parsing its whole object (every regime would repeat the
 * unknown-key, range and printing code, and the messages would drift apart). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "scenario_internal.h"

/* "kind" and every registered option key once, NULL-terminated (heap). */
static const char **regime_keys(void) {
  size_t cap = 2;
  for (size_t k = 0; k < sim_regime_count(); k++) cap += sim_regime_at(k)->nopts;
  const char **keys = hs_calloc(cap, sizeof *keys);
  size_t n = 0;
  keys[n++] = "kind";
  for (size_t k = 0; k < sim_regime_count(); k++) {
    const sim_regime *rg = sim_regime_at(k);
    for (size_t i = 0; i < rg->nopts; i++) {
      bool seen = false;
      for (size_t j = 0; j < n && !seen; j++) seen = !strcmp(keys[j], rg->opts[i].key);
      if (!seen) keys[n++] = rg->opts[i].key;
    }
  }
  return keys;
}

/* The keys of one regime ("kind" first), to name in an unknown key's message:
 * the union of every regime's keys outgrows one line. */
static const char **keys_of(const sim_regime *rg) {
  const char **keys = hs_calloc(rg->nopts + 2, sizeof *keys);
  keys[0] = "kind";
  for (size_t i = 0; i < rg->nopts; i++) keys[i + 1] = rg->opts[i].key;
  return keys;
}

/* A key of another regime: say which regimes it applies to. */
static hs_status foreign_key(ctx *c, const char *kind, const char *key) {
  char where[160] = "";
  size_t used = 0;
  for (size_t k = 0; k < sim_regime_count(); k++) {
    const sim_regime *rg = sim_regime_at(k);
    if (!sim_regime_opt_find(rg, key)) continue;
    int w = snprintf(where + used, sizeof where - used, "%s%s", used ? ", " : "", rg->name);
    if (w < 0 || (size_t)w >= sizeof where - used) break;
    used += (size_t)w;
  }
  sim_jpath_key(&c->path, key);
  return scn_fail(c, HS_EINVAL, "does not apply to regime \"%s\" (only to: %s)", kind, where);
}

/* Options from `from` on that are present but do not apply, given what has
 * been read: the first one fails. */
static hs_status check_applies(ctx *c, const cJSON *reg, const sim_regime *rg, const void *opts,
                               size_t from) {
  for (size_t i = from; rg->opt_prepare && i < rg->nopts; i++) {
    const sim_regime_opt *o = &rg->opts[i];
    double def = o->def;
    const char *why = rg->opt_prepare(&c->s->pub, opts, o, &def);
    if (why && scn_member(reg, o->key)) {
      sim_jpath_key(&c->path, o->key);
      return scn_fail(c, HS_EINVAL, "%s", why);
    }
  }
  return HS_OK;
}

static hs_status parse_opt(ctx *c, const cJSON *reg, const sim_regime *rg, void *opts,
                           const sim_regime_opt *o) {
  hs_scenario *sc = &c->s->pub;
  double def = o->def;
  const char *why = rg->opt_prepare ? rg->opt_prepare(sc, opts, o, &def) : NULL;
  if (why) {
    if (!scn_member(reg, o->key)) return HS_OK;
    sim_jpath_key(&c->path, o->key);
    return scn_fail(c, HS_EINVAL, "%s", why);
  }
  void *field = (char *)opts + o->offset;
  double v;
  hs_status st;
  switch (o->type) {
    case SIM_OPT_UINT:
      if ((st = scn_get_uint(c, reg, o->key, false, def, o->lo, o->hi, &v))) return st;
      *(uint32_t *)field = (uint32_t)v;
      return HS_OK;
    case SIM_OPT_NUM:
      return scn_get_num(c, reg, o->key, false, def, o->lo, o->bounds & SIM_OPT_LO_OPEN, o->hi,
                         o->bounds & SIM_OPT_HI_OPEN, field);
    case SIM_OPT_CHOICE:
      return scn_get_choice(c, reg, o->key, o->def_choice ? o->def_choice : o->choices[0],
                            o->choices, field);
    case SIM_OPT_CUSTOM: return rg->opt_parse(c, scn_member(reg, o->key), opts, o);
  }
  return HS_OK;
}

hs_status scn_parse_regime(ctx *c, const cJSON *root) {
  sim_scn *s = c->s;
  hs_regime_spec *r = &s->pub.regime;
  static const cJSON empty = {0};
  const cJSON *reg = scn_member(root, "regime");
  size_t m0 = sim_jpath_key(&c->path, "regime");
  hs_status st;
  if (reg && (st = scn_need_object(c, reg))) return st;
  if (!reg) reg = &empty;
  const char **keys = regime_keys();
  size_t nreg = sim_regime_count();
  const char **kinds = hs_calloc(nreg + 1, sizeof *kinds);
  for (size_t k = 0; k < nreg; k++) kinds[k] = sim_regime_at(k)->name;
  /* The regime the block asks for (the default when "kind" is absent). */
  const cJSON *kj = scn_member(reg, "kind");
  const sim_regime *asked = !kj                ? sim_regime_at(0)
                            : cJSON_IsString(kj) ? sim_regime_find(kj->valuestring)
                                                 : NULL;
  const char **shown = asked ? keys_of(asked) : NULL;
  st = scn_check_keys_as(c, reg, keys, shown ? shown : keys);
  hs_free(shown);
  if (!st) st = scn_get_choice(c, reg, "kind", kinds[0], kinds, &r->kind);
  hs_free(kinds);
  const sim_regime *rg = st ? NULL : sim_regime_find(r->kind);
  for (size_t i = 1; !st && keys[i]; i++)
    if (!sim_regime_opt_find(rg, keys[i]) && scn_member(reg, keys[i]))
      st = foreign_key(c, r->kind, keys[i]);
  hs_free(keys);
  if (st) return st;
  s->regime = rg;
  r->opts = hs_calloc(1, rg->opts_size ? rg->opts_size : 1);
  for (size_t i = 0; i < rg->nopts; i++) {
    if ((st = parse_opt(c, reg, rg, r->opts, &rg->opts[i]))) return st;
    /* Whether an option applies depends on the words (CHOICE) before it:
     * check every later one as soon as a word is read. */
    if (rg->opts[i].type == SIM_OPT_CHOICE && (st = check_applies(c, reg, rg, r->opts, i + 1)))
      return st;
  }
  r->steps_per_round = rg->policy_steps ? rg->policy_steps(r->opts) : 0;
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

hs_status scn_regime_can(ctx *c, unsigned what, const char *lacks) {
  const sim_regime *rg = c->s->regime;
  const char *kind = c->s->pub.regime.kind;
  if (!rg) return HS_OK;
  if (!(rg->can & what)) return scn_fail(c, HS_EINVAL, "regime %s %s", kind, lacks);
  const char *why = rg->cannot ? rg->cannot(c->s->pub.regime.opts, what) : NULL;
  return why ? scn_fail(c, HS_EINVAL, "regime %s: %s", kind, why) : HS_OK;
}

void scn_free_regime(hs_scenario *sc) {
  sim_scn *s = (sim_scn *)sc;
  const sim_regime *rg = s->regime;
  void *opts = s->pub.regime.opts;
  hs_free(sc->regime.kind);
  if (!opts) return;
  for (size_t i = 0; rg && i < rg->nopts; i++)
    if (rg->opts[i].type == SIM_OPT_CHOICE)
      hs_free(*(char **)(void *)((char *)opts + rg->opts[i].offset));
  if (rg && rg->opts_free) rg->opts_free(opts);
  hs_free(opts);
  s->pub.regime.opts = NULL;
}

/* --- its block: lines of the loader's block table (scenario.c) --- */

const scn_block scn_block_regime = {
    .key = "regime", .step = 130, .first_format = true,
    .parse = scn_parse_regime, .print = scn_print_regime, .free = scn_free_regime,
    .type = SCN_OBJECT, .def_text = "{\"kind\": \"pma\"}",
    .doc = "how a round runs: \"kind\" and that regime's options"};
