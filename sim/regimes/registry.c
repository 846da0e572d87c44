/* registry.c: the registry of regimes, looked up by the scenario's regime.kind,
 * and what shared code asks of a descriptor (sim_regime.h).
 *
 * SIM_REGIMES is the list: adding a regime is a file with its descriptor and
 * a line here. The order is the order of `hetsim validate`'s key lists and
 * messages, and the first regime is the default kind. A test binary extends
 * the list by compiling this file again with SIM_REGIMES_EXTRA(X) defined (see
 * sim_regime.h): nothing else in the library keeps a list of regimes.
 * Lookups are linear: there are a handful of regimes, looked up once a run. */
#include <stddef.h>
#include <string.h>

#include "policies/hs_policy.h"
#include "sim_regime.h"

#define SIM_REGIMES(X)   \
  X(sim_regime_pma)      \
  X(sim_regime_ddp)      \
  X(sim_regime_hfl_ddp)  \
  X(sim_regime_fedasync) \
  X(sim_regime_fsdp)     \
  X(sim_regime_hsdp)     \
  X(sim_regime_fl_fsdp)  \
  X(sim_regime_fl_hsdp)  \
  X(sim_regime_agc)      \
  X(sim_regime_fl)

#ifndef SIM_REGIMES_EXTRA
#define SIM_REGIMES_EXTRA(X)
#endif

#define SIM_REGIME_DECLARE(sym) extern const sim_regime sym;
#define SIM_REGIME_ENTRY(sym) &sym,
SIM_REGIMES(SIM_REGIME_DECLARE)
SIM_REGIMES_EXTRA(SIM_REGIME_DECLARE)

static const sim_regime *const registry[] = {
    SIM_REGIMES(SIM_REGIME_ENTRY) SIM_REGIMES_EXTRA(SIM_REGIME_ENTRY)};
#define NREGIMES (sizeof registry / sizeof registry[0])

size_t sim_regime_count(void) { return NREGIMES; }

const sim_regime *sim_regime_at(size_t i) { return i < NREGIMES ? registry[i] : NULL; }

const sim_regime *sim_regime_find(const char *name) {
  for (size_t i = 0; i < NREGIMES; i++)
    if (name && !strcmp(registry[i]->name, name)) return registry[i];
  return NULL;
}

bool sim_regime_runs_policy(const sim_regime *rg, const char *kind) {
  unsigned caps = hs_policy_caps(kind);
  return !(caps & rg->caps_refused) && (caps & rg->caps_needed) == rg->caps_needed;
}

const sim_regime_opt *sim_regime_opt_find(const sim_regime *rg, const char *key) {
  for (size_t i = 0; rg && i < rg->nopts; i++)
    if (!strcmp(rg->opts[i].key, key)) return &rg->opts[i];
  return NULL;
}
