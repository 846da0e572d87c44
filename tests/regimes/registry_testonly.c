/* registry_testonly.c: the regime registry of the test binaries, which is the
 * library's list (sim/regimes/registry.c) plus one line. Linked into a test, this
 * object defines every symbol of registry.c, so the static library's copy is
 * never pulled in (sim_regime.h). */
#define SIM_REGIMES_EXTRA(X) X(sim_regime_testonly)
#include "registry.c"
