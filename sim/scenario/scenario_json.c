/* scenario_json.c: a scenario printed back as JSON, every default filled in
 * (hetsim validate; loading the output again gives the same scenario).
 *
 * Key order is fixed (the order of the format in DESIGN.md), so the same
 * scenario always prints the same bytes; regime options come from the
 * regime's table (scenario_regime.c), policy keys from the policies library.
 * O(size of the scenario); devices are printed as entries, not expanded, in
 * file order, an excluded entry (count 0) with "excluded": true. */
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "scenario_internal.h"

static void add_num(cJSON *o, const char *key, double v) {
  if (!cJSON_AddNumberToObject(o, key, v)) abort();
}
static void add_str(cJSON *o, const char *key, const char *v) {
  if (!cJSON_AddStringToObject(o, key, v)) abort();
}
static cJSON *add_obj(cJSON *o, const char *key) {
  cJSON *n = cJSON_AddObjectToObject(o, key);
  if (!n) abort();
  return n;
}

static void policy_key(const char *key, const char *value_text, void *userdata) {
  cJSON *o = userdata;
  /* The policy's own steps_per_round comes from the regime; its seed from the
   * scenario seed unless the file pinned one (the caller adds that back). */
  if (!strcmp(key, "steps_per_round") || !strcmp(key, "seed")) return;
  add_num(o, key, strtod(value_text, NULL));
}

char *hs_scenario_to_json(const hs_scenario *sc) {
  const sim_scn *s = (const sim_scn *)sc;
  cJSON *root = cJSON_CreateObject();
  if (!root) abort();
  add_str(root, "name", sc->name);
  if (s->description) add_str(root, "description", s->description);
  add_num(root, "seed", (double)sc->seed);
  add_str(root, "task", sc->task);
  add_num(root, "model_bytes", sc->model_bytes);
  add_num(root, "rounds", sc->rounds);
  add_num(root, "samples_per_round", (double)sc->samples_per_round);
  add_num(root, "batch_size", sc->batch_size);
  cJSON *reg = add_obj(root, "regime");
  add_str(reg, "kind", sc->regime.kind);
  scn_print_regime(s, reg);
  cJSON *pol = add_obj(root, "policy");
  add_str(pol, "kind", sc->policy.kind);
  hs_policy_config_foreach(&sc->policy, policy_key, pol);
  if (s->policy_seed_set) add_num(pol, "seed", (double)sc->policy.seed);
  cJSON *devs = cJSON_AddArrayToObject(root, "devices");
  for (size_t i = 0; i < s->nentries; i++) { /* excluded entries (count 0) too */
    const hs_device_spec *d = &s->entries[i];
    cJSON *o = cJSON_CreateObject();
    add_str(o, "name", d->name);
    add_str(o, "profile", d->profile_name);
    add_str(o, "link", d->link);
    add_num(o, "count", d->count);
    if (!d->count && !cJSON_AddBoolToObject(o, "excluded", 1)) abort();
    add_num(o, "speed_spread", d->speed_spread);
    add_num(o, "power_spread", d->power_spread);
    if (d->speed_trace_name) add_str(o, "speed_trace", d->speed_trace_name);
    if (d->owner) add_str(o, "owner", d->owner);
    cJSON_AddItemToArray(devs, o);
  }
  cJSON *net = add_obj(root, "network");
  add_str(net, "server", sc->server_link);
  cJSON *links = add_obj(net, "links");
  for (size_t i = 0; i < sc->nlinks; i++) {
    cJSON *o = add_obj(links, sc->links[i].name);
    add_num(o, "bandwidth_mbps", sc->links[i].bandwidth_mbps);
    add_num(o, "latency_ms", sc->links[i].latency_ms);
  }
  scn_print_topology(sc, root);
  cJSON *tel = add_obj(root, "telemetry");
  add_num(tel, "time_noise", sc->telemetry_time_noise);
  add_num(tel, "energy_noise", sc->telemetry_energy_noise);
  if (!cJSON_AddBoolToObject(root, "switch_off_unselected", sc->switch_off_unselected)) abort();
  /* Printed only when on: the resolved scenario (and run_identity) of every
   * run without it keeps its bytes. */
  if (sc->report_meter_scopes && !cJSON_AddBoolToObject(add_obj(root, "report"), "meter_scopes", 1))
    abort();
  scn_print_learning(sc, root);
  scn_print_dynamics(sc, root);
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) abort();
  char *out = hs_strdup(text);
  cJSON_free(text);
  return out;
}

/* The regime's options in table order, those that apply (opt_prepare). */
void scn_print_regime(const sim_scn *s, cJSON *reg) {
  const sim_regime *rg = s->regime;
  const void *opts = s->pub.regime.opts;
  for (size_t i = 0; rg && i < rg->nopts; i++) {
    const sim_regime_opt *o = &rg->opts[i];
    double def = o->def;
    if (rg->opt_prepare && rg->opt_prepare(&s->pub, opts, o, &def)) continue;
    const char *field = (const char *)opts + o->offset;
    switch (o->type) {
      case SIM_OPT_UINT: add_num(reg, o->key, *(const uint32_t *)(const void *)field); break;
      case SIM_OPT_NUM: add_num(reg, o->key, *(const double *)(const void *)field); break;
      case SIM_OPT_CHOICE: add_str(reg, o->key, *(char *const *)(const void *)field); break;
      case SIM_OPT_CUSTOM: rg->opt_print(reg, opts, o); break;
    }
  }
}
