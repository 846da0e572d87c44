/* scenario_report.c: the scenario's optional "report" block, what a run
 * reports beyond its default outputs:
 *
 *   "report": { "meter_scopes": true }
 *
 * meter_scopes: summary.json, sweeps, compare and optimize also give the
 * energy under the scopes a paper's meter may have had (metric group
 * "meter": above-idle, the idle baseline, training-only; wall is energy_j).
 * Off by default, and printed back only when on, so the resolved scenario
 * (and run_identity) of every run without it keeps its bytes. The flag lives
 * in hs_scenario (report_meter_scopes): the run reads it. It also adds the
 * meter-scope columns to the CSV tables that carry energy (rounds.csv,
 * learning.csv, agc.csv; hs_scenario_columns). */
#include <stdlib.h>

#include "scenario_internal.h"
#include "traces/hs_columns.h"

unsigned hs_scenario_columns(const hs_scenario *sc) {
  return sc->report_meter_scopes ? HS_COL_METER : 0u;
}

static const char *const report_keys[] = {"meter_scopes", NULL};

static hs_status parse_report(ctx *c, const cJSON *root) {
  const cJSON *r = scn_member(root, "report");
  if (!r) return HS_OK;
  size_t m0 = sim_jpath_key(&c->path, "report");
  hs_status st;
  if ((st = scn_need_object(c, r)) || (st = scn_check_keys(c, r, report_keys)) ||
      (st = scn_get_bool(c, r, "meter_scopes", false, &c->s->pub.report_meter_scopes)))
    return st;
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

static void print_report(const hs_scenario *sc, cJSON *root) {
  if (!sc->report_meter_scopes) return;
  cJSON *o = cJSON_AddObjectToObject(root, "report");
  if (!o || !cJSON_AddBoolToObject(o, "meter_scopes", 1)) abort();
}

const scn_block scn_block_report = {
    .key = "report", .step = 155,
    .parse = parse_report, .print = print_report,
    .type = SCN_OBJECT, .def_text = "nothing beyond the default outputs", .keys = report_keys,
    .doc = "what a run reports beyond its default outputs (meter_scopes: the energy under "
           "each meter scope, metric group \"meter\")"};
