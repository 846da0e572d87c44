/* regimes.c: the registry of regimes, looked up by the scenario's regime.kind.
 * Adding a regime is a file with its descriptor and a line here. */
#include <string.h>

#include "run_internal.h"

extern const sim_regime sim_regime_pma, sim_regime_ddp, sim_regime_hfl_ddp, sim_regime_fedasync;

static const sim_regime *const registry[] = {
    &sim_regime_pma, &sim_regime_ddp, &sim_regime_hfl_ddp, &sim_regime_fedasync};

const sim_regime *sim_regime_find(const char *name) {
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
    if (name && !strcmp(registry[i]->name, name)) return registry[i];
  return NULL;
}
