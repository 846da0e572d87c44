/* [sim/run/include/sim -> hetsim::sim; not installed]
 * hs_reference.h: the output references, printed from the tables the writers
 * read (run_reference.c): `hetsim reference columns|metrics`, checked in as
 * sim/doc/reference/columns.md and metrics.md. The scenario-key reference
 * is hs_scenario_reference (hs_scenario.h). Markdown, deterministic. */
#ifndef HS_REFERENCE_H
#define HS_REFERENCE_H

#include <stdio.h>

/* Every CSV file a run writes and its columns (name, unit, meaning), then the
 * sweep's and optimize's files, whose columns are metrics. */
void hs_reference_columns(FILE *out);
/* Every metric: name, unit, group, where it appears, meaning. */
void hs_reference_metrics(FILE *out);

#endif
