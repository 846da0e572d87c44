/* scenario_json.c: a scenario printed back as JSON, every default filled in
 * (hetsim validate; loading the output again gives the same scenario).
 *
 * Key order is fixed (the order of the loader's block table, scenario.c), so
 * the same scenario always prints the same bytes; each block prints itself
 * (its line's print), regime options from the regime's table, policy keys
 * from the policies library.
 * O(size of the scenario); devices are printed as entries, not expanded, in
 * file order, an excluded entry (count 0) with "excluded": true. */
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "scenario_internal.h"

void scn_add_num(cJSON *o, const char *key, double v) {
  if (!cJSON_AddNumberToObject(o, key, v)) abort();
}
void scn_add_str(cJSON *o, const char *key, const char *v) {
  if (!cJSON_AddStringToObject(o, key, v)) abort();
}
cJSON *scn_add_obj(cJSON *o, const char *key) {
  cJSON *n = cJSON_AddObjectToObject(o, key);
  if (!n) abort();
  return n;
}

char *hs_scenario_to_json(const hs_scenario *sc) {
  cJSON *root = cJSON_CreateObject();
  if (!root) abort();
  for (size_t i = 0; i < scn_nblocks; i++)
    if (scn_blocks[i]->print) scn_blocks[i]->print(sc, root);
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) abort();
  char *out = hs_strdup(text);
  cJSON_free(text);
  return out;
}

/* The regime's options in table order, those that apply (opt_prepare). */
void scn_print_regime(const hs_scenario *sc, cJSON *root) {
  const sim_scn *s = (const sim_scn *)sc;
  cJSON *reg = scn_add_obj(root, "regime");
  scn_add_str(reg, "kind", sc->regime.kind);
  const sim_regime *rg = s->regime;
  const void *opts = s->pub.regime.opts;
  for (size_t i = 0; rg && i < rg->nopts; i++) {
    const sim_regime_opt *o = &rg->opts[i];
    double def = o->def;
    if (rg->opt_prepare && rg->opt_prepare(&s->pub, opts, o, &def)) continue;
    const char *field = (const char *)opts + o->offset;
    switch (o->type) {
      case SIM_OPT_UINT: scn_add_num(reg, o->key, *(const uint32_t *)(const void *)field); break;
      case SIM_OPT_NUM: scn_add_num(reg, o->key, *(const double *)(const void *)field); break;
      case SIM_OPT_CHOICE: scn_add_str(reg, o->key, *(char *const *)(const void *)field); break;
      case SIM_OPT_CUSTOM: rg->opt_print(reg, opts, o); break;
    }
  }
}
