/* metrics.c: the table of summary metrics (see hs_metrics.h) and the
 * listings made from it: summary.json fields, sweep columns, compare table.
 *
 * The table is a const array in the order every output lists metrics; its
 * order IS the byte layout of summary.json, RESULTS.csv, RESULTS.points.csv
 * and the compare table, so a reordering changes every golden (on purpose
 * only). Lookups by name are linear: the table is a few dozen lines and is
 * searched a few times per sweep or run, never per event. Sweep indexes are
 * recomputed on each call for the same reason (O(table)).
 *
 * Values are read from hs_summary by offset and type, so the table says
 * where a number comes from without a getter function per metric.
 * Rejected: an X-macro list shared with hs_summary (the struct and its
 * public field names would be generated, hard to read for trainers linking
 * hs_run.h), and positional arrays (the m[0..6] this replaces).
 *
 * Optional metrics name a group in their line; a group's bit in
 * hs_summary.metric_groups is its rank among the groups (its lines are
 * adjacent), so no list of groups exists beside the table, and which runs
 * report a group is
 * said once (hs_metric_run_groups: the regime's descriptor, the learning
 * block). Rejected: one flag and one setter per group (what this replaces:
 * every optional metric family needed edits in four files), and the first
 * line's index as the bit (it capped the table at 32 lines).
 *
 * A regime's own figures are HS_METRIC_REPORTED lines of its group: the
 * regime reports (name, value) pairs as before, hs_metric_keep_reported keeps
 * those with a line in hs_summary.reported[line], and from there they are
 * metrics like any other (summary.json at their line, sweep columns, compare,
 * optimize's files). A new one is its line here. Rejected: a field per
 * regime figure in the public hs_summary (35 fields of four regimes).
 *
 * The test-only hook appends to a small second array: tests prove that a
 * metric added here reaches every output without a second edit. */
#include "sim/hs_metrics.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "base/hs_assert.h"
#include "base/hs_fmt.h"
#include "sim_regime.h"

const char *const hs_stat_names[HS_STAT_COUNT] = {"mean",   "median",  "min",    "max",
                                                  "sd",     "ci95_lo", "ci95_hi"};

/* Table lines of stored metrics leave `derive` out (NULL): positional lines
 * stay one per metric, so this file alone turns that warning off. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define F64(field) offsetof(hs_summary, field), HS_METRIC_F64
#define U32(field) offsetof(hs_summary, field), HS_METRIC_U32
#define U64(field) offsetof(hs_summary, field), HS_METRIC_U64
#define ALL (HS_METRIC_JSON | HS_METRIC_SWEEP | HS_METRIC_COMPARE)
#define SYS (HS_METRIC_JSON | HS_METRIC_SWEEP)
#define REP 0, HS_METRIC_REPORTED /* a figure the regime reports by this name */

/* name, unit, doc, source, where, stats over seeds, compare column[, group] */
static const hs_metric table[] = {
    {"seed", "1", "the master seed the run used", U64(seed), HS_METRIC_JSON, 0, {0}},
    {"makespan_s", "s", "simulated time from the first round's start to the last round's end",
     F64(makespan_s), ALL, HS_STAT_ALL, {"makespan_s", 11, 2, 1, "makespan_s"}},
    {"energy_j", "J", "energy of every device while on: compute + comm + idle-wait",
     F64(energy_j), ALL, HS_STAT_ALL, {"energy_kj", 10, 3, 1e3, "energy_idle_j"}},
    {"energy_compute_j", "J", "energy while computing", F64(compute_j), ALL, HS_STAT_ALL,
     {"compute_kj", 10, 3, 1e3, NULL}},
    {"energy_comm_j", "J", "energy while communicating", F64(comm_j), ALL, HS_STAT_ALL,
     {"comm_kj", 9, 3, 1e3, NULL}},
    {"energy_idle_j", "J", "energy while waiting for others, powered on", F64(idle_j), ALL,
     HS_STAT_ALL, {"idle_kj", 9, 3, 1e3, NULL}},
    {"compute_cv", "1", "mean over rounds of the CV of per-device compute time",
     F64(compute_cv), ALL, HS_STAT_ALL, {"compute_cv", 10, 4, 1, NULL}},
    {"wait_fraction", "1", "idle-wait seconds / (devices * makespan)", F64(wait_fraction), ALL,
     HS_STAT_ALL, {"wait_frac", 9, 4, 1, NULL}},
    {"controller_overhead_fraction", "1",
     "controller wall time / makespan; NaN (null) unless measured",
     F64(controller_overhead_fraction), HS_METRIC_JSON, 0, {0}},
    {"rounds", "1", "rounds run", U32(rounds), HS_METRIC_JSON, 0, {0}},
    {"samples", "1", "samples trained in total", U64(samples), HS_METRIC_JSON, 0, {0}},
    {"devices", "1", "devices in the run (groups expanded)", U64(devices), HS_METRIC_JSON, 0, {0}},
    {"compute_cv_adapted", "1", "compute_cv over the rounds after the first (with \"dynamics\")",
     F64(compute_cv_adapted), HS_METRIC_JSON | HS_METRIC_JSON_IF_SET, 0, {0}},
    /* Learning in the loop (issue 10): only for runs that learn. */
    {"time_to_target_s", "s",
     "simulated time of the first evaluation that met the learning target; null: not reached",
     F64(time_to_target_s), ALL, HS_STAT_ALL, {"to_target_s", 11, 2, 1, NULL}, .group = "learning"},
    {"energy_to_target_j", "J", "energy of every device from t = 0 to that evaluation",
     F64(energy_to_target_j), ALL, HS_STAT_ALL, {"to_target_kj", 12, 3, 1e3, NULL}, .group = "learning"},
    {"rounds_to_target", "1", "rounds (fedasync: reporting windows) until the target was met",
     F64(rounds_to_target), ALL, HS_STAT_ALL, {"to_target_rounds", 16, 0, 1, NULL}, .group = "learning"},
    {"final_test_loss", "1", "held-out loss at the last evaluation (curve mode: the curve's)",
     F64(final_test_loss), ALL, HS_STAT_ALL, {"test_loss", 10, 4, 1, NULL}, .group = "learning"},
    {"final_test_accuracy", "1", "held-out accuracy at the last evaluation; null: regression or curve mode",
     F64(final_test_accuracy), ALL | HS_METRIC_HIGHER_BETTER, HS_STAT_ALL,
     {"test_acc", 9, 4, 1, NULL}, .group = "learning"},
    {"time_to_stable_target_s", "s",
     "simulated time of the first evaluation after which every evaluation met the target; null: the last missed it",
     F64(time_to_stable_target_s), ALL, HS_STAT_ALL, {"stable_s", 9, 2, 1, NULL}, .group = "learning"},
    {"energy_to_stable_target_j", "J", "energy of every device from t = 0 to that evaluation",
     F64(energy_to_stable_target_j), SYS, HS_STAT_ALL, {0}, .group = "learning"},
    {"rounds_to_stable_target", "1", "rounds until that evaluation",
     F64(rounds_to_stable_target), SYS, HS_STAT_ALL, {0}, .group = "learning"},
    /* Whole-system energy (issue 17): present only when the regime reports it
     * (fl); not compare columns (the compare table keeps its width). */
    {"energy_server_j", "J", "the server host: busy_w x aggregating + idle_w x the rest",
     F64(energy_server_j), SYS, HS_STAT_ALL, {0}, .group = "system"},
    {"energy_network_j", "J", "links: j_per_byte x bytes x links crossed + port_w x ports x makespan",
     F64(energy_network_j), SYS, HS_STAT_ALL, {0}, .group = "system"},
    {"energy_aggregators_j", "J", "the hierarchy's aggregator hosts (0 without one)",
     F64(energy_aggregators_j), SYS, HS_STAT_ALL, {0}, .group = "system"},
    {"energy_system_j", "J", "energy_j + server + aggregators + network",
     F64(energy_system_j), SYS, HS_STAT_ALL, {0}, .group = "system"},
    /* Meter scopes (issue 25): when the scenario asks (report.meter_scopes);
     * wall is energy_j. */
    {"energy_above_idle_j", "J", "energy_j minus each device's idle power x its seconds on",
     F64(energy_above_idle_j), ALL, HS_STAT_ALL,
     {"above_idle_kj", 13, 3, 1e3, "energy_above_idle_j"}, .group = "meter"},
    {"energy_idle_baseline_j", "J", "each device's idle power x its seconds on, summed",
     F64(energy_idle_baseline_j), SYS, HS_STAT_ALL, {0}, .group = "meter"},
    {"energy_training_j", "J", "training energy the devices' meters reported (before noise)",
     F64(energy_training_j), ALL, HS_STAT_ALL, {"training_kj", 11, 3, 1e3, "energy_training_j"},
     .group = "meter"},
    /* A regime's own figures (its summary_fields hook names them), in the
     * order it reports them: summary.json lists them so. */
    {"mean_staleness_versions", "1", "mean staleness of the updates that arrived (versions)", REP,
     SYS, HS_STAT_ALL, {0}, .group = "fedasync"},
    {"mean_mixing_weight", "1", "mean mixing weight of the updates that arrived", REP, SYS,
     HS_STAT_ALL, {0}, .group = "fedasync"},
    {"step_forward_s", "s", "forward time per step (mean over groups)", REP, SYS, HS_STAT_ALL, {0},
     .group = "fsdp"},
    {"step_backward_s", "s", "backward time per step", REP, SYS, HS_STAT_ALL, {0}, .group = "fsdp"},
    {"step_optimizer_s", "s", "optimizer time per step", REP, SYS, HS_STAT_ALL, {0}, .group = "fsdp"},
    {"step_aggregation_s", "s", "shard averaging time per step (federated variants)", REP, SYS,
     HS_STAT_ALL, {0}, .group = "fsdp"},
    {"step_other_s", "s", "the rest of the wall time per step (other_s, barrier waits)", REP, SYS,
     HS_STAT_ALL, {0}, .group = "fsdp"},
    {"step_total_s", "s", "wall time per step", REP, SYS, HS_STAT_ALL, {0}, .group = "fsdp"},
    {"step_local_s", "s", "a group's local step time (mean over group steps)", REP, SYS, HS_STAT_ALL,
     {0}, .group = "fsdp"},
    {"tokens_per_s", "token/s", "tokens trained per simulated second", REP, SYS, HS_STAT_ALL, {0},
     .group = "fsdp"},
    {"energy_per_token_j", "J", "device energy per token trained", REP, SYS, HS_STAT_ALL, {0},
     .group = "fsdp"},
    {"bytes_per_gpu_step_intra", "B", "bytes each GPU moves per step inside its node", REP, SYS,
     HS_STAT_ALL, {0}, .group = "fsdp"},
    {"bytes_per_gpu_step_inter", "B", "bytes each GPU moves per step across nodes of a cell", REP,
     SYS, HS_STAT_ALL, {0}, .group = "fsdp"},
    {"bytes_per_gpu_step_global", "B", "bytes each GPU moves per step across cells", REP, SYS,
     HS_STAT_ALL, {0}, .group = "fsdp"},
    {"hbm_need_bytes", "B", "device memory a GPU needs (shards, state, activations)", REP, SYS,
     HS_STAT_ALL, {0}, .group = "fsdp"},
    {"agc_deadline_s", "s", "the decoding deadline; null: the code waits for every worker", REP,
     SYS, HS_STAT_ALL, {0}, .group = "agc"},
    {"agc_d", "1", "the code's replication d", REP, SYS, HS_STAT_ALL, {0}, .group = "agc"},
    {"agc_bits", "bit", "bits sent in the whole run", REP, ALL, HS_STAT_ALL,
     {"agc_Mbit", 10, 3, 1e6, NULL}, .group = "agc"},
    {"agc_straggler_rate", "1", "stragglers / active workers over the run", REP, SYS, HS_STAT_ALL,
     {0}, .group = "agc"},
    {"agc_residual_pred", "1", "mean over iterations of the predicted residual error", REP, ALL,
     HS_STAT_ALL, {"resid_pred", 10, 4, 1, NULL}, .group = "agc"},
    {"agc_residual_meas_rel", "1",
     "with learning: mean measured residual error / |g-bar|^2; null: not measured", REP, ALL,
     HS_STAT_ALL, {"resid_meas", 10, 4, 1, NULL}, .group = "agc"},
    {"agc_residual_exp_rel", "1",
     "with learning: mean expected residual error given each iteration's gradients / "
     "|g-bar|^2 (what residual_meas_rel estimates); null: not measured", REP, SYS, HS_STAT_ALL,
     {0}, .group = "agc"},
    {"agc_residual_pred_observed", "1",
     "the planner's error model with the straggle rates observed on the timeline", REP, SYS,
     HS_STAT_ALL, {0}, .group = "agc"},
    {"agc_replans", "1", "times the code was re-planned", REP, SYS, HS_STAT_ALL, {0},
     .group = "agc"},
    {"agc_eval_loss", "1", "with learning: the last held-out loss", REP, SYS, HS_STAT_ALL, {0},
     .group = "agc"},
    {"agc_target_time_s", "s", "time the target loss was met; null: not reached", REP, SYS,
     HS_STAT_ALL, {0}, .group = "agc"},
    {"agc_target_energy_j", "J", "energy until then", REP, SYS, HS_STAT_ALL, {0}, .group = "agc"},
    {"agc_target_bits", "bit", "bits sent until then", REP, SYS, HS_STAT_ALL, {0}, .group = "agc"},
};

#define NTABLE (sizeof table / sizeof table[0])
#define NTEST 2
static hs_metric test_extra[NTEST];
static size_t ntest;

size_t hs_metric_count(void) { return NTABLE + ntest; }

const hs_metric *hs_metric_at(size_t i) {
  HS_ASSERT(i < hs_metric_count(), "metric index in range");
  return i < NTABLE ? &table[i] : &test_extra[i - NTABLE];
}

_Static_assert(HS_METRIC_MAX <= HS_SUMMARY_REPORTED_MAX,
               "every line has a slot in hs_summary.reported");

/* The line's index in the table (test lines after the table's). */
static size_t index_of(const hs_metric *m) {
  if (m >= table && m < table + NTABLE) return (size_t)(m - table);
  HS_ASSERT(m >= test_extra && m < test_extra + ntest, "a line of the table");
  return NTABLE + (size_t)(m - test_extra);
}

const hs_metric *hs_metric_find(const char *name) {
  for (size_t i = 0; i < hs_metric_count(); i++)
    if (!strcmp(hs_metric_at(i)->name, name)) return hs_metric_at(i);
  return NULL;
}

double hs_metric_value(const hs_metric *m, const hs_summary *s) {
  if (m->derive) return m->derive(s);
  if (m->type == HS_METRIC_REPORTED) return s->reported[index_of(m)];
  const char *p = (const char *)s + m->offset;
  switch (m->type) {
    case HS_METRIC_U32: {
      uint32_t v;
      memcpy(&v, p, sizeof v);
      return (double)v;
    }
    case HS_METRIC_U64: {
      uint64_t v;
      memcpy(&v, p, sizeof v);
      return (double)v;
    }
    case HS_METRIC_F64:
    default: {
      double v;
      memcpy(&v, p, sizeof v);
      return v;
    }
  }
}

/* --- optional groups --------------------------------------------------------- */

/* A group's bit is its rank among the groups in table order: its lines are
 * adjacent, so a rank is the number of runs of lines before it, and no list
 * of groups is kept beside the table. */
unsigned hs_metric_group(const char *group) {
  unsigned rank = 0, bit = 0;
  const char *prev = NULL;
  for (size_t i = 0; i < hs_metric_count(); i++) {
    const char *g = hs_metric_at(i)->group;
    if (g && (!prev || strcmp(g, prev))) { /* a run of a group's lines starts */
      if (!strcmp(g, group)) {
        HS_ASSERT(!bit, "a metric group's lines are adjacent in the table");
        HS_ASSERT(rank < 32, "at most 32 metric groups");
        bit = 1u << rank;
      }
      rank++;
    }
    prev = g;
  }
  HS_ASSERT(bit, "a metric group named by the table");
  return bit;
}

bool hs_metric_reported(const hs_summary *s, const char *group) {
  return (s->metric_groups & hs_metric_group(group)) != 0;
}

unsigned hs_metric_run_groups(const hs_scenario *sc) {
  const sim_regime *rg = sim_regime_find(sc->regime.kind);
  unsigned g = rg && rg->metric_group ? hs_metric_group(rg->metric_group) : 0;
  if (sc->learning) g |= hs_metric_group("learning"); /* learning in the loop: the block */
  if (sc->report_meter_scopes) g |= hs_metric_group("meter"); /* asked for: the key */
  return g;
}

size_t hs_metric_needs(const hs_metric *m, char *buf, size_t cap) {
  size_t off = 0;
  if (cap) buf[0] = '\0';
  if (!m->group) return 0;
  /* The learning group comes from the scenario's block (hs_metric_run_groups). */
  if (!strcmp(m->group, "learning"))
    return (size_t)snprintf(buf, cap, "a scenario with a learning section");
  if (!strcmp(m->group, "meter"))
    return (size_t)snprintf(buf, cap, "%s",
                            "a scenario with report.meter_scopes true "
                            "(--set 'report={\"meter_scopes\":true}')");
  size_t nr = 0;
  for (size_t i = 0; i < sim_regime_count(); i++) {
    const sim_regime *rg = sim_regime_at(i);
    if (!rg->metric_group || strcmp(rg->metric_group, m->group)) continue;
    off += (size_t)snprintf(buf + (off < cap ? off : cap), off < cap ? cap - off : 0, "%s\"%s\"",
                            nr++ ? " or " : "regime ", rg->name);
  }
  if (!nr) return (size_t)snprintf(buf, cap, "a run reporting group \"%s\"", m->group);
  off += (size_t)snprintf(buf + (off < cap ? off : cap), off < cap ? cap - off : 0,
                          ", whose runs report it");
  return off;
}

/* Whether m is reported where `groups` are. */
static bool in_groups(const hs_metric *m, unsigned groups) {
  return !m->group || (groups & hs_metric_group(m->group));
}

/* The groups of the sweep in this process (hs_metric_sweep_groups). */
static unsigned sweep_groups;

void hs_metric_sweep_groups(unsigned groups) { sweep_groups = groups; }

/* A sweep column: a sweep metric whose group some point reports. */
static bool in_sweep(const hs_metric *m) {
  return (m->in & HS_METRIC_SWEEP) && in_groups(m, sweep_groups);
}

/* Every sweep metric, learning ones included: what a sweep row must hold. */
static size_t sweep_all(void) {
  size_t n = 0;
  for (size_t i = 0; i < hs_metric_count(); i++) n += (hs_metric_at(i)->in & HS_METRIC_SWEEP) != 0;
  return n;
}

size_t hs_metric_sweep_count(void) {
  size_t n = 0;
  for (size_t i = 0; i < hs_metric_count(); i++) n += in_sweep(hs_metric_at(i));
  HS_ASSERT(sweep_all() <= HS_METRIC_SWEEP_MAX,
            "the sweep metrics fit hs_sweep_result (raise HS_METRIC_SWEEP_MAX)");
  return n;
}

const hs_metric *hs_metric_sweep_at(size_t k) {
  for (size_t i = 0; i < hs_metric_count(); i++) {
    const hs_metric *m = hs_metric_at(i);
    if (in_sweep(m) && k-- == 0) return m;
  }
  HS_ASSERT(0, "sweep metric index in range");
  return NULL;
}

size_t hs_metric_sweep_index(const char *name) {
  size_t k = 0;
  for (size_t i = 0; i < hs_metric_count(); i++) {
    const hs_metric *m = hs_metric_at(i);
    if (!in_sweep(m)) continue;
    if (!strcmp(m->name, name)) return k;
    k++;
  }
  HS_ASSERT(0, "a sweep metric of that name");
  return 0;
}

size_t hs_metric_json_fields(const hs_summary *s, hs_report_field *f, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < hs_metric_count() && n < cap; i++) {
    const hs_metric *m = hs_metric_at(i);
    if (!(m->in & HS_METRIC_JSON) || !in_groups(m, s->metric_groups)) continue;
    double v = hs_metric_value(m, s);
    if ((m->in & HS_METRIC_JSON_IF_SET) && isnan(v)) continue;
    f[n++] = (hs_report_field){m->name, v};
  }
  return n;
}

void hs_metric_clear_reported(hs_summary *s) {
  for (size_t i = 0; i < HS_SUMMARY_REPORTED_MAX; i++) s->reported[i] = NAN;
}

size_t hs_metric_keep_reported(hs_summary *s, const hs_report_field *f, size_t n,
                               hs_report_field *rest) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const hs_metric *m = hs_metric_find(f[i].key);
    if (m && m->type == HS_METRIC_REPORTED) s->reported[index_of(m)] = f[i].value;
    else rest[k++] = f[i];
  }
  return k;
}

/* --- statistics over seeds ------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void hs_metric_stats(const double *v, size_t n, double *tmp, double out[HS_STAT_COUNT]) {
  HS_ASSERT(n >= 1, "statistics of at least one value");
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  double mean = sum / (double)n;
  memcpy(tmp, v, n * sizeof *tmp);
  qsort(tmp, n, sizeof *tmp, cmp_double);
  out[0] = mean;
  out[1] = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
  out[2] = tmp[0];
  out[3] = tmp[n - 1];
  if (n < 2) { /* one seed: no spread to estimate (written as nan) */
    out[4] = out[5] = out[6] = NAN;
    return;
  }
  double ss = 0;
  for (size_t i = 0; i < n; i++) ss += (v[i] - mean) * (v[i] - mean);
  double sd = sqrt(ss / (double)(n - 1));
  double half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sd / sqrt((double)n);
  out[4] = sd;
  out[5] = mean - half;
  out[6] = mean + half;
}

/* --- the compare table ------------------------------------------------------ */

typedef struct column {
  const char *label;
  int width, decimals;
  double per;
} column;

static column column_of(const hs_metric *m) {
  const hs_metric_column *c = &m->compare;
  column k = {c->label ? c->label : m->name, c->width, c->decimals, c->per};
  if (k.width <= 0) {
    int len = (int)strlen(k.label);
    k.width = len > 10 ? len : 10;
    k.decimals = 4;
  }
  if (!(k.per > 0)) k.per = 1;
  return k;
}

static double pct(double x, double ref) { return ref != 0 ? 100.0 * (x - ref) / ref : 0; }

/* One line: the header (row < 0, first column `label`) or run `row`, the
 * first column `w` wide; the metrics of no group, or (`grouped`) those of
 * the groups some run reports (`groups`, the union over the runs). */
static void compare_line(FILE *out, const char *label, int w, const char *const *names,
                         const hs_summary *s, long row, unsigned groups, bool grouped) {
  fprintf(out, "%-*s", w, row < 0 ? label : names[row]);
  for (size_t i = 0; i < hs_metric_count(); i++) {
    const hs_metric *m = hs_metric_at(i);
    if (!(m->in & HS_METRIC_COMPARE) || !in_groups(m, groups) || !m->group == grouped) continue;
    column c = column_of(m);
    if (row < 0) fprintf(out, " %*s", c.width, c.label);
    else fprintf(out, " %*.*f", c.width, c.decimals, hs_metric_value(m, &s[row]) / c.per);
    /* The "vs_1st" columns placed after this one. */
    for (size_t j = 0; j < hs_metric_count(); j++) {
      const hs_metric *v = hs_metric_at(j);
      if (!(v->in & HS_METRIC_COMPARE) || !v->compare.vs_first_after ||
          strcmp(v->compare.vs_first_after, m->name))
        continue;
      char d[16] = "-";
      if (row > 0)
        snprintf(d, sizeof d, "%+.1f%%",
                 pct(hs_metric_value(v, &s[row]), hs_metric_value(v, &s[0])));
      fprintf(out, " %8s", row < 0 ? "vs_1st" : d);
    }
  }
  fputc('\n', out);
}

/* The groups some run of s[0..n) reports. */
static unsigned any_groups(const hs_summary *s, size_t n) {
  unsigned groups = 0;
  for (size_t k = 0; k < n; k++) groups |= s[k].metric_groups;
  return groups;
}

void hs_metric_compare_table(FILE *out, const char *label, const char *const *names,
                             const hs_summary *s, size_t n) {
  unsigned groups = any_groups(s, n);
  int w = 12; /* the names in one column, a space after the longest */
  for (size_t k = 0; k < n; k++)
    if ((int)strlen(names[k]) + 1 > w) w = (int)strlen(names[k]) + 1;
  compare_line(out, label, w, names, s, -1, groups, false);
  for (size_t k = 0; k < n; k++) compare_line(out, label, w, names, s, (long)k, groups, false);
  /* A group's columns (learning's) below, as a second table: one line of
   * both would be too wide to read. */
  bool more = false;
  for (size_t i = 0; i < hs_metric_count() && !more; i++) {
    const hs_metric *m = hs_metric_at(i);
    more = (m->in & HS_METRIC_COMPARE) && m->group && in_groups(m, groups);
  }
  if (!more) return;
  fputc('\n', out);
  compare_line(out, label, w, names, s, -1, groups, true);
  for (size_t k = 0; k < n; k++) compare_line(out, label, w, names, s, (long)k, groups, true);
}

/* For tools: every HS_METRIC_COMPARE metric by its name and in its own unit
 * (J, not kJ), exact as RESULTS.csv (hs_fmt_double); each "vs_1st" column as
 * <name>_vs_first_pct. Non-finite values: "nan"/"inf" in CSV, null in JSON. */
static void num_csv(FILE *out, double v) {
  char b[HS_FMT_DOUBLE_MAX];
  fputc(',', out);
  fwrite(b, 1, hs_fmt_double(b, v), out); /* nan, inf, -inf as they are */
}

static void num_json(FILE *out, double v) {
  char b[HS_FMT_DOUBLE_MAX];
  if (isfinite(v)) fwrite(b, 1, hs_fmt_double(b, v), out);
  else fputs("null", out);
}

/* Calls put(name, value) for row k's compare metrics and vs_1st columns
 * (a group's metrics when some run reports the group). */
static void compare_values(const hs_summary *s, size_t k, unsigned groups,
                           void (*put)(FILE *, const char *, double, bool), FILE *out) {
  bool first = true;
  for (size_t i = 0; i < hs_metric_count(); i++) {
    const hs_metric *m = hs_metric_at(i);
    if (!(m->in & HS_METRIC_COMPARE) || !in_groups(m, groups)) continue;
    put(out, m->name, hs_metric_value(m, &s[k]), first);
    first = false;
    for (size_t j = 0; j < hs_metric_count(); j++) {
      const hs_metric *v = hs_metric_at(j);
      if (!(v->in & HS_METRIC_COMPARE) || !v->compare.vs_first_after ||
          strcmp(v->compare.vs_first_after, m->name))
        continue;
      char name[96];
      snprintf(name, sizeof name, "%s_vs_first_pct", v->name);
      put(out, name, k ? pct(hs_metric_value(v, &s[k]), hs_metric_value(v, &s[0])) : 0, false);
    }
  }
}

static void put_header(FILE *out, const char *name, double v, bool first) {
  (void)v;
  (void)first;
  fprintf(out, ",%s", name);
}

static void put_csv(FILE *out, const char *name, double v, bool first) {
  (void)name;
  (void)first;
  num_csv(out, v);
}

static void put_json(FILE *out, const char *name, double v, bool first) {
  (void)first;
  fputs(", ", out);
  hs_json_fputs(out, name);
  fputs(": ", out);
  num_json(out, v);
}

/* A policy name as a CSV field (quoted when it holds ',' or '"'). */
static void csv_name(FILE *out, const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

void hs_metric_compare_csv(FILE *out, const char *label, const char *const *names, const hs_summary *s,
                           size_t n) {
  unsigned groups = any_groups(s, n);
  fputs(label, out);
  if (n) compare_values(s, 0, groups, put_header, out);
  fputc('\n', out);
  for (size_t k = 0; k < n; k++) {
    csv_name(out, names[k]);
    compare_values(s, k, groups, put_csv, out);
    fputc('\n', out);
  }
}

void hs_metric_compare_json(FILE *out, const char *label, const char *const *names, const hs_summary *s,
                            size_t n) {
  unsigned groups = any_groups(s, n);
  fputs("[\n", out);
  for (size_t k = 0; k < n; k++) {
    fputs("  {", out);
    hs_json_fputs(out, label);
    fputs(": ", out);
    hs_json_fputs(out, names[k]);
    compare_values(s, k, groups, put_json, out);
    fputs(k + 1 < n ? "},\n" : "}\n", out);
  }
  fputs("]", out);
}

/* --- test-only registration ------------------------------------------------- */

hs_status hs_metric_register_test(const hs_metric *m, hs_error *err) {
  if (hs_metric_find(m->name))
    return hs_error_set(err, HS_EINVAL, "metric %s: already in the table", m->name);
  if (ntest == NTEST || hs_metric_count() == HS_METRIC_MAX ||
      ((m->in & HS_METRIC_SWEEP) && sweep_all() == HS_METRIC_SWEEP_MAX))
    return hs_error_set(err, HS_EINVAL, "metric %s: the table is full", m->name);
  HS_ASSERT(m->type == HS_METRIC_REPORTED ||
                m->offset + (m->type == HS_METRIC_U32 ? 4 : 8) <= sizeof(hs_summary),
            "the metric's value lies inside hs_summary");
  test_extra[ntest++] = *m;
  return HS_OK;
}
