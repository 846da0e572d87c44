/* [sim/run/include/sim -> hetsim::sim; not installed]
 * hs_metrics.h: the summary metrics of a run, by name, in one table
 * (sim/run/metrics.c).
 *
 * A metric is one number of hs_summary (hs_run.h). Its table line says what it
 * is called (the summary.json key, the RESULTS.csv column and the prefix of
 * the RESULTS.points.csv columns; the name carries the unit: "_s", "_j"), its
 * unit, where its value sits in hs_summary, where it appears, how it is
 * aggregated over the seeds of a sweep point, and how `hetsim compare` prints
 * it. Everything that lists metrics walks this table in its order:
 *
 *   summary.json       every HS_METRIC_JSON metric, then the regime's extras;
 *                      a whole number up to 2^53 prints as one ("%.0f"),
 *                      another finite number with %.10g, NaN as null
 *                      (hs_report_commit)
 *   RESULTS.csv        every HS_METRIC_SWEEP metric, one column, %.10g
 *   RESULTS.points.csv every HS_METRIC_SWEEP metric, one column per statistic
 *                      of its `stats` (order mean, median, min, max, sd,
 *                      ci95_lo, ci95_hi): <name>_mean, ..., <name>_ci95_hi
 *   hetsim compare     every HS_METRIC_COMPARE metric, one column, and a
 *                      "vs_1st" column (percent against the first policy)
 *                      for each metric whose vs_first_after names it
 *
 * Adding a metric: its field in hs_summary, the line in hs_run (or the
 * regime) that fills it, its line in the table. An optional metric names its
 * group in that line, and the regime that reports it names the group in its
 * descriptor. Nothing else lists metrics. */
#ifndef HS_METRICS_H
#define HS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "traces/hs_report.h"
#include "sim/hs_run.h"
#include "base/hs_status.h"

/* The C type of the hs_summary field; HS_METRIC_REPORTED: no field of its
 * own, the value a regime reported under the metric's name (hs_summary.reported,
 * hs_metric_keep_reported), so a regime's figure is its table line alone. */
typedef enum hs_metric_type {
  HS_METRIC_F64,
  HS_METRIC_U32,
  HS_METRIC_U64,
  HS_METRIC_REPORTED
} hs_metric_type;

/* Where a metric appears (bits of hs_metric.in). */
enum { HS_METRIC_JSON = 1u, HS_METRIC_SWEEP = 2u, HS_METRIC_COMPARE = 4u };
/* The most HS_METRIC_SWEEP metrics the table may hold: a sweep row keeps
 * room for them (hs_sweep.h: HS_SWEEP_NMETRICS). Raise it when the table
 * outgrows it (asserted in metrics.c). */
#define HS_METRIC_SWEEP_MAX 64
/* With HS_METRIC_JSON: left out of summary.json when NaN (a metric only some
 * scenarios compute, so that the others' summaries stay as they were). */
enum { HS_METRIC_JSON_IF_SET = 16u };
/* Higher is better (an accuracy): `hetsim optimize` maximises it. Without
 * it lower is better (times, energies). */
enum { HS_METRIC_HIGHER_BETTER = 32u };

/* Optional metrics: a metric whose line names a `group` ("learning",
 * "system") appears only where a run reports that group: in summary.json of
 * such a run, in the compare table when one of its runs does, and as sweep
 * columns when some point's run will (hs_metric_sweep_groups, set before the
 * sweep writes its header). Outputs of runs that do not report the group
 * keep their bytes. Which groups a run of a scenario reports is
 * hs_metric_run_groups: a regime names its group in its descriptor
 * (sim_regime.metric_group), "learning" is reported by scenarios with a
 * learning block and "meter" (the meter scopes of the energy) by scenarios
 * with report.meter_scopes true. A group is a name in table lines, nothing
 * else; its lines are adjacent (asserted), and its bit is its rank among the
 * groups in table order. A regime's own figures ("agc", "fsdp", "fedasync")
 * are such a group of HS_METRIC_REPORTED lines. */
/* Statistics over the seeds of a sweep point (bits of hs_metric.stats),
 * printed in this order. */
enum {
  HS_STAT_MEAN = 1u,
  HS_STAT_MEDIAN = 2u,
  HS_STAT_MIN = 4u,
  HS_STAT_MAX = 8u,
  HS_STAT_SD = 16u,      /* sample standard deviation (n - 1); NaN for one seed */
  HS_STAT_CI95_LO = 32u, /* mean -/+ t(0.975, n-1) sd / sqrt(n): the 95 % confidence */
  HS_STAT_CI95_HI = 64u, /* interval of the mean (Student t); NaN for one seed */
  HS_STAT_ALL = 127u
};
#define HS_STAT_COUNT 7
/* "mean", "median", "min", "max", "sd", "ci95_lo", "ci95_hi": bit k of stats
 * is hs_stat_names[k]. */
extern const char *const hs_stat_names[HS_STAT_COUNT];

/* Every statistic of v[0..n) (n >= 1) into out[k] (bit k, order of
 * hs_stat_names); tmp holds n doubles of scratch. The median sorts a copy;
 * the sd is two-pass (mean first), so it does not lose digits to
 * cancellation; the t quantile is GSL's gsl_cdf_tdist_Pinv. O(n log n). */
void hs_metric_stats(const double *v, size_t n, double *tmp, double out[HS_STAT_COUNT]);

/* How `hetsim compare` prints a metric: " %*s" header, " %*.*f" value / per.
 * A zero width takes the defaults: label the name, width max(10, label),
 * 4 decimals, per 1. */
typedef struct hs_metric_column {
  const char *label;          /* header text; NULL: the metric's name */
  int width, decimals;
  double per;                 /* value printed in units of `per` (1e3: J -> kJ) */
  const char *vs_first_after; /* print this metric's "vs_1st" column after the
                                 column of the metric so named; NULL: none */
} hs_metric_column;

typedef struct hs_metric {
  const char *name;  /* key and column; carries the unit ("makespan_s") */
  const char *unit;  /* "s", "J", "1" (dimensionless) */
  const char *doc;   /* one line */
  size_t offset;     /* offsetof(hs_summary, field) */
  hs_metric_type type;
  unsigned in;       /* HS_METRIC_* bits */
  unsigned stats;    /* HS_STAT_* bits, for HS_METRIC_SWEEP metrics */
  hs_metric_column compare;
  /* A metric derived from other summary figures: its value is derive(s) and
   * offset/type are ignored. NULL: the value is the field at offset. So a
   * derived metric is its function and its table line, both in metrics.c. */
  double (*derive)(const hs_summary *s);
  /* The optional group it belongs to (see above); NULL: every run reports it. */
  const char *group;
} hs_metric;

/* Room in fixed arrays (a sweep row keeps HS_SWEEP_NMETRICS sweep metrics,
 * see hs_sweep.h); the table may not outgrow either (asserted). */
#define HS_METRIC_MAX 80

size_t hs_metric_count(void);
const hs_metric *hs_metric_at(size_t i);
/* The metric so named, or NULL. */
const hs_metric *hs_metric_find(const char *name);
/* Its value in s, as a double. */
double hs_metric_value(const hs_metric *m, const hs_summary *s);

/* The HS_METRIC_SWEEP metrics, in table order: k is the column index in
 * RESULTS.csv (after the seed) and in hs_sweep_result.m. */
size_t hs_metric_sweep_count(void);
const hs_metric *hs_metric_sweep_at(size_t k);
/* Sweep index of the metric so named; asserts that it is a sweep metric. */
size_t hs_metric_sweep_index(const char *name);

/* summary.json: the HS_METRIC_JSON metrics of s as fields (keys borrowed from
 * the table), at most cap. Returns how many were written. */
size_t hs_metric_json_fields(const hs_summary *s, hs_report_field *f, size_t cap);

/* `hetsim compare`'s table: a header line, then one line per run; the first
 * run is the reference of the "vs_1st" columns. label heads the names'
 * column ("policy", or "scenario" for compare --scenarios), as wide as the
 * longest name needs (at least 12). The columns of metric groups (learning)
 * follow as a second table after an empty line, so no line is too wide. */
void hs_metric_compare_table(FILE *out, const char *label, const char *const *names,
                             const hs_summary *s, size_t n);
/* The same for tools (compare --format csv|json): every HS_METRIC_COMPARE
 * metric under its own name in its own unit (%.10g), and each vs_1st column
 * as <name>_vs_first_pct (0 for the first run). CSV: a header "LABEL,...",
 * one line per run. JSON: an array of objects {"LABEL": ..., ...} (no
 * newline after the closing bracket: the caller wraps it). LABEL names what
 * the rows are, as in the table. */
void hs_metric_compare_csv(FILE *out, const char *label, const char *const *names, const hs_summary *s,
                           size_t n);
void hs_metric_compare_json(FILE *out, const char *label, const char *const *names, const hs_summary *s,
                            size_t n);

/* The bit of hs_summary.metric_groups that stands for the group so named:
 * 1 << (its rank among the groups, in table order). Asserts that some line
 * names it (a misspelt group would hide its metrics) and that its lines are
 * adjacent. O(table). */
unsigned hs_metric_group(const char *group);
/* Whether s reports the group so named. */
bool hs_metric_reported(const hs_summary *s, const char *group);
/* Who reports m's group, as the end of a sentence "it needs ...": for a
 * group named by regime descriptors, 'regime "fl", whose runs report it'
 * (every such regime, registry order); for "learning", 'a scenario with a
 * learning section'; for "meter", 'a scenario with report.meter_scopes
 * true (...)'. Writes into buf (cap bytes) and returns the length; 0 (buf
 * "") when m has no group: every run reports it. */
size_t hs_metric_needs(const hs_metric *m, char *buf, size_t cap);
/* The groups a run of sc reports (bits of hs_summary.metric_groups): its
 * regime's metric_group, "learning" when sc has a learning block, "meter"
 * when sc->report_meter_scopes. hs_run stores it in the summary; a sweep ORs
 * it over its points. */
unsigned hs_metric_run_groups(const hs_scenario *sc);
/* The groups some run of the sweep in this process reports: their metrics
 * are its columns. hs_sweep_create sets it before writing a header (one
 * sweep at a time per process, as the CLI runs them). */
void hs_metric_sweep_groups(unsigned groups);

/* A regime's figures f[0..n) (name, value), as its summary_fields hook gives
 * them: each that is a HS_METRIC_REPORTED metric is kept in s->reported (and
 * so reaches summary.json at its table line, sweeps and compare); the others
 * are copied to rest (at most n), to be written after the metrics as they
 * are. Returns how many went to rest. Call with s->reported all NAN
 * (hs_metric_clear_reported) before. */
size_t hs_metric_keep_reported(hs_summary *s, const hs_report_field *f, size_t n,
                               hs_report_field *rest);
void hs_metric_clear_reported(hs_summary *s);

/* TEST ONLY: append a metric to the table for the rest of the process, before
 * any run or sweep starts (the table is read without locks). The metric and
 * its strings must outlive the process. HS_EINVAL when the name is taken or
 * the table is full. Production metrics are lines of the table in metrics.c. */
hs_status hs_metric_register_test(const hs_metric *m, hs_error *err);

#endif
