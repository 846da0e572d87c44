/* scn_learning.h (sim/scenario/iface): the learner configuration that the
 * scenario's "learning" block gives (scenario_learning.c), for the run's
 * learner (sim/run/learning, sim_learning.h) and the tests. */
#ifndef SIM_SCN_LEARNING_H
#define SIM_SCN_LEARNING_H

#include "learn/hs_learn.h"
#include "sim/hs_scenario.h"
#include "base/hs_status.h"

/* learning.threads, or the machine's online cores when 0. */
unsigned sim_learning_threads(const hs_learning_spec *l);
/* The learner config of a real-mode scenario (strings borrowed from sc). */
hs_status sim_learning_learner_cfg(const hs_scenario *sc, hs_learn_cfg *cfg, hs_error *err);
/* Its partition: one participant per expanded device, in device order. */
hs_status sim_learning_partition_cfg(const hs_scenario *sc, hs_learn_part_cfg *pc);

#endif
