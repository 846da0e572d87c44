/* test_metrics.c: the metric table (hs_metrics.h): values read from the right
 * hs_summary fields, the summary.json order, the compare table's known
 * layout, and, through the test-only registration, that one table line is
 * enough for a metric to reach RESULTS.csv, RESULTS.points.csv and compare.
 * Criterion runs each test in its own process, so a registration never leaks
 * into another test. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/hs_fmt.h"
#include "base/hs_alloc.h"
#include "sim/hs_metrics.h"
#include "traces/hs_outfile.h"
#include "sim/hs_sweep.h"

#define TINY HS_SOURCE_DIR "/tests/data/sweep/tiny.json"

static hs_summary sample(double scale) {
  hs_summary s = {0};
  s.seed = 7;
  s.devices = 4;
  s.rounds = 3;
  s.samples = 18000;
  s.makespan_s = 100 * scale;
  s.compute_j = 1000 * scale;
  s.comm_j = 200 * scale;
  s.idle_j = 300 * scale;
  s.energy_j = s.compute_j + s.comm_j + s.idle_j;
  s.compute_cv = 0.25;
  s.wait_fraction = 0.125;
  s.controller_overhead_fraction = NAN;
  s.compute_cv_adapted = NAN; /* what hs_run reports without a "dynamics" block */
  return s;
}

/* What hs_metric_compare_table prints, as a heap string (free()). */
static char *capture_compare(const char *const *names, const hs_summary *s, size_t n) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert(f);
  hs_metric_compare_table(f, "policy", names, s, n);
  fclose(f);
  return buf; /* free() */
}

Test(metrics, values_come_from_their_fields) {
  hs_summary s = sample(1);
  cr_expect_eq(hs_metric_value(hs_metric_find("seed"), &s), 7);
  cr_expect_eq(hs_metric_value(hs_metric_find("devices"), &s), 4);
  cr_expect_eq(hs_metric_value(hs_metric_find("rounds"), &s), 3);
  cr_expect_eq(hs_metric_value(hs_metric_find("samples"), &s), 18000);
  cr_expect_eq(hs_metric_value(hs_metric_find("makespan_s"), &s), 100);
  cr_expect_eq(hs_metric_value(hs_metric_find("energy_j"), &s), 1500);
  cr_expect_eq(hs_metric_value(hs_metric_find("energy_compute_j"), &s), 1000);
  cr_expect_eq(hs_metric_value(hs_metric_find("energy_comm_j"), &s), 200);
  cr_expect_eq(hs_metric_value(hs_metric_find("energy_idle_j"), &s), 300);
  cr_expect_eq(hs_metric_value(hs_metric_find("compute_cv"), &s), 0.25);
  cr_expect_eq(hs_metric_value(hs_metric_find("wait_fraction"), &s), 0.125);
  cr_expect(isnan(hs_metric_value(hs_metric_find("controller_overhead_fraction"), &s)));
  cr_expect_null(hs_metric_find("joules"));
}

/* Every line is complete, names are unique, and a name carries its unit:
 * "_s" seconds ("_per_s" a rate), "_j" joules (the convention the heat map's axis titles and
 * every reader of RESULTS.csv rely on). */
Test(metrics, table_lines_complete_and_units_in_names) {
  for (size_t i = 0; i < hs_metric_count(); i++) {
    const hs_metric *m = hs_metric_at(i);
    cr_assert(m->name && *m->name && m->unit && *m->unit && m->doc && *m->doc, "line %zu", i);
    cr_expect_eq(hs_metric_find(m->name), m, "%s: name repeated", m->name);
    size_t n = strlen(m->name);
    bool rate = n > 6 && !strcmp(m->name + n - 6, "_per_s"); /* tokens_per_s: not seconds */
    bool ends_s = n > 2 && !strcmp(m->name + n - 2, "_s") && !rate;
    bool ends_j = n > 2 && !strcmp(m->name + n - 2, "_j");
    cr_expect_eq(ends_s, !strcmp(m->unit, "s"), "%s: unit %s", m->name, m->unit);
    cr_expect_eq(ends_j, !strcmp(m->unit, "J"), "%s: unit %s", m->name, m->unit);
    if (m->in & HS_METRIC_SWEEP) cr_expect_neq(m->stats, 0, "%s: no statistic", m->name);
    cr_expect(m->offset < sizeof(hs_summary), "%s", m->name);
  }
}

/* compute_cv_adapted: in summary.json (last) only when computed. */
Test(metrics, optional_metric_only_when_set) {
  hs_summary s = sample(1);
  hs_report_field f[HS_METRIC_MAX];
  size_t n = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  for (size_t i = 0; i < n; i++) cr_expect_str_neq(f[i].key, "compute_cv_adapted");
  s.compute_cv_adapted = 0.1;
  cr_assert_eq(hs_metric_json_fields(&s, f, HS_METRIC_MAX), n + 1);
  cr_expect_str_eq(f[n].key, "compute_cv_adapted");
  cr_expect_eq(f[n].value, 0.1);
}

/* The order every golden summary.json has. */
Test(metrics, summary_json_order) {
  static const char *const want[] = {
      "seed",          "makespan_s", "energy_j",      "energy_compute_j",
      "energy_comm_j", "energy_idle_j", "compute_cv", "wait_fraction",
      "controller_overhead_fraction", "rounds", "samples", "devices"};
  hs_summary s = sample(1);
  hs_report_field f[HS_METRIC_MAX];
  size_t n = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  cr_assert_eq(n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < n; i++) cr_expect_str_eq(f[i].key, want[i], "field %zu", i);
  cr_expect_eq(f[1].value, 100);
  /* A cap cuts the list, never overruns it. */
  cr_expect_eq(hs_metric_json_fields(&s, f, 3), 3);
}

/* The sweep metrics: the RESULTS.csv order, and the two the Pareto front and
 * `hetsim sweep`'s table use by position (0 and 1). */
Test(metrics, sweep_order) {
  static const char *const want[] = {"makespan_s",    "energy_j",   "energy_compute_j",
                                     "energy_comm_j", "energy_idle_j", "compute_cv",
                                     "wait_fraction"};
  cr_assert_eq(hs_metric_sweep_count(), 7);
  for (size_t k = 0; k < 7; k++) cr_expect_str_eq(hs_metric_sweep_at(k)->name, want[k]);
  cr_expect_eq(hs_metric_sweep_index("makespan_s"), 0);
  cr_expect_eq(hs_metric_sweep_index("energy_j"), 1);
  cr_expect_eq(hs_metric_sweep_index("wait_fraction"), 6);
}

/* Whole-system energy (issue 17): in summary.json and the sweep columns only
 * when the regime reports it, after the other metrics, with their values;
 * never a compare column. */
Test(metrics, system_energy_only_when_reported) {
  hs_summary s = sample(1);
  hs_report_field f[HS_METRIC_MAX];
  size_t n = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  s.metric_groups = hs_metric_group("system");
  s.energy_server_j = 10, s.energy_network_j = 2, s.energy_aggregators_j = 3;
  s.energy_system_j = s.energy_j + 15;
  cr_assert_eq(hs_metric_json_fields(&s, f, HS_METRIC_MAX), n + 4);
  static const char *const names[] = {"energy_server_j", "energy_network_j",
                                      "energy_aggregators_j", "energy_system_j"};
  static const double want[] = {10, 2, 3, 1515};
  for (size_t i = 0; i < 4; i++) {
    cr_expect_str_eq(f[n + i].key, names[i]);
    cr_expect_eq(f[n + i].value, want[i]);
    cr_expect(!(hs_metric_find(names[i])->in & HS_METRIC_COMPARE));
  }
  cr_assert_eq(hs_metric_sweep_count(), 7);
  hs_metric_sweep_groups(hs_metric_group("system"));
  cr_assert_eq(hs_metric_sweep_count(), 11);
  cr_expect_eq(hs_metric_sweep_index("energy_system_j"), 10);
  hs_metric_sweep_groups(0);
  cr_expect_eq(hs_metric_sweep_count(), 7);
}

/* Known answer: the layout `hetsim compare` printed before the table existed. */
Test(metrics, compare_table_known_answer) {
  const char *names[] = {"equal", "time-only"};
  hs_summary s[2] = {sample(1), sample(0.5)};
  char *got = capture_compare(names, s, 2);
  const char *want =
      "policy        makespan_s   vs_1st  energy_kj compute_kj   comm_kj   idle_kj   vs_1st "
      "compute_cv wait_frac\n"
      "equal             100.00        -      1.500      1.000     0.200     0.300        -     "
      "0.2500    0.1250\n"
      "time-only          50.00   -50.0%      0.750      0.500     0.100     0.150   -50.0%     "
      "0.2500    0.1250\n";
  cr_expect_str_eq(got, want);
  free(got);
}

/* Runs that learn: the learning columns come as a second table below the
 * first (one line of both was 168 characters wide); every line stays under
 * 110 characters, the learning table's under 100. */
Test(metrics, compare_learning_columns_in_a_second_table) {
  const char *names[] = {"equal", "time-only"};
  hs_summary s[2] = {sample(1), sample(0.5)};
  for (int k = 0; k < 2; k++) {
    s[k].metric_groups = hs_metric_group("learning");
    s[k].time_to_target_s = 80 / (k + 1.0);
    s[k].energy_to_target_j = 1200;
    s[k].rounds_to_target = 4;
    s[k].final_test_loss = 0.5;
    s[k].final_test_accuracy = 0.8;
  }
  char *got = capture_compare(names, s, 2);
  char *second = strstr(got, "\n\n");
  cr_assert(second, "two tables: %s", got);
  cr_expect(!strncmp(second + 2, "policy       to_target_s ", 25), "%s", second + 2);
  cr_expect(strstr(second, "\ntime-only          40.00 "), "%s", second);
  for (char *line = got, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1)
    cr_expect_lt(nl - line, line > second ? 100 : 110, "too wide: %.*s", (int)(nl - line), line);
  *second = '\0';
  cr_expect_null(strstr(got, "to_target"), "the first table is the plain one: %s", got);
  free(got);
}

/* --- a metric added to the table reaches every output ----------------------- */

static const hs_metric extra = {
    "test_makespan_copy_s", "s", "test only: the makespan again",
    offsetof(hs_summary, makespan_s), HS_METRIC_F64,
    HS_METRIC_JSON | HS_METRIC_SWEEP | HS_METRIC_COMPARE,
    HS_STAT_MEAN | HS_STAT_MAX, {0}, NULL, NULL};

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && !strcmp(s + n - k, tail);
}

typedef struct sink {
  const hs_sweep *sw;
  hs_sweep_file *f;
} sink;

static bool append_row(size_t i, const hs_sweep_result *r, void *ud) {
  sink *k = ud;
  char line[1024];
  size_t len = hs_sweep_format_row(k->sw, r, line, sizeof line);
  (void)i;
  cr_assert_lt(len, sizeof line);
  return hs_sweep_file_append(k->f, line, len, NULL) == HS_OK;
}

Test(metrics, registered_metric_reaches_sweep_and_compare) {
  hs_error err = {0};
  cr_assert_eq(hs_metric_register_test(&extra, &err), HS_OK, "%s", err.msg);
  cr_expect_neq(hs_metric_register_test(&extra, &err), HS_OK, "a name twice");
  cr_expect(strstr(err.msg, "already") != NULL, "%s", err.msg);

  /* summary.json */
  hs_summary s = sample(1);
  hs_report_field f[HS_METRIC_MAX];
  size_t n = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  cr_assert_eq(n, 13);
  cr_expect_str_eq(f[12].key, "test_makespan_copy_s");
  cr_expect_eq(f[12].value, 100);

  /* compare: a default-width column at the end. */
  const char *names[] = {"equal"};
  char *got = capture_compare(names, &s, 1);
  char *nl = strchr(got, '\n');
  cr_assert(nl);
  *nl = '\0';
  cr_expect(ends_with(got, " wait_frac test_makespan_copy_s"), "header: %s", got);
  cr_expect(ends_with(nl + 1, "    0.1250             100.0000\n"), "row: %s", nl + 1);
  free(got);

  /* A sweep: column headers, the row's value, the per-point statistics. */
  static const hs_override set[] = {{"rounds", "2"}};
  const char *grids[] = {"policy.w_e=0,1"};
  hs_sweep_spec spec = {TINY, set, 1, "adaptive", grids, 1, "1,2"};
  hs_sweep *sw = hs_sweep_create(&spec, &err);
  cr_assert(sw, "%s", err.msg);
  cr_expect(ends_with(hs_sweep_columns(sw), ",wait_fraction,test_makespan_copy_s\n"), "%s",
            hs_sweep_columns(sw));
  cr_expect(ends_with(hs_sweep_point_columns(sw),
                      ",wait_fraction_ci95_hi,test_makespan_copy_s_mean,test_makespan_copy_s_max,"
                      "pareto_front\n"),
            "%s", hs_sweep_point_columns(sw));
  hs_sweep_result r;
  cr_assert_eq(hs_sweep_run_row(sw, 0, &r, &err), HS_OK, "%s", err.msg);
  size_t k = hs_metric_sweep_index("test_makespan_copy_s");
  cr_expect_eq(k, 7);
  cr_expect_eq(r.m[k], r.m[hs_metric_sweep_index("makespan_s")]);
  cr_expect_gt(r.m[k], 0);

  char path[] = "/tmp/hs-test-metrics-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  unlink(path);
  char *csv = hs_malloc(strlen(path) + 5);
  sprintf(csv, "%s.csv", path);
  bool done[4];
  sink sk = {sw, hs_sweep_file_open(sw, csv, false, done, &err)};
  cr_assert(sk.f, "%s", err.msg);
  size_t rows[] = {0, 1, 2, 3};
  cr_assert_eq(hs_sweep_run_rows(sw, rows, 4, 1, append_row, &sk, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(hs_sweep_file_close(sk.f, &err), HS_OK, "%s", err.msg);
  hs_sweep_point *pt = NULL;
  cr_assert_eq(hs_sweep_finalize(sw, csv, &pt, &err), HS_OK, "%s", err.msg);
  size_t mk = hs_metric_sweep_index("makespan_s");
  for (size_t p = 0; p < 2; p++) {
    cr_expect_eq(pt[p].m[k].mean, pt[p].m[mk].mean, "point %zu", p);
    cr_expect_eq(pt[p].m[k].max, pt[p].m[mk].max, "point %zu", p);
  }
  /* The points file: header and the two statistics, as RESULTS prints them. */
  char *pp = hs_sweep_points_path(csv);
  char *text = hs_read_file(pp, NULL, &err);
  cr_assert(text, "%s", err.msg);
  char want[128], f1[HS_FMT_DOUBLE_MAX], f2[HS_FMT_DOUBLE_MAX];
  hs_fmt_double(f1, pt[0].m[mk].mean); /* exact, as the points file prints them */
  hs_fmt_double(f2, pt[0].m[mk].max);
  snprintf(want, sizeof want, ",%s,%s,%d\n", f1, f2, pt[0].pareto);
  cr_expect(strstr(text, want) != NULL, "%s in %s", want, text);
  hs_free(text);
  unlink(pp);
  unlink(csv);
  hs_free(pp);
  hs_free(csv);
  hs_free(pt);
  hs_sweep_destroy(sw);
}

/* Known answers: 2, 4, 4, 4, 5, 5, 7, 9 has mean 5, sample sd sqrt(32/7);
 * t(0.975, 7) = 2.364624251592785 (tables, 15 digits). */
Test(metrics, stats_known_answer) {
  const double v[] = {9, 4, 2, 5, 4, 7, 4, 5};
  double tmp[8], o[HS_STAT_COUNT];
  hs_metric_stats(v, 8, tmp, o);
  double sd = sqrt(32.0 / 7.0), half = 2.364624251592785 * sd / sqrt(8.0);
  cr_expect_float_eq(o[0], 5.0, 1e-15);
  cr_expect_float_eq(o[1], 4.5, 1e-15);
  cr_expect_eq(o[2], 2.0);
  cr_expect_eq(o[3], 9.0);
  cr_expect_float_eq(o[4], sd, 1e-14);
  cr_expect_float_eq(o[5], 5.0 - half, 1e-12);
  cr_expect_float_eq(o[6], 5.0 + half, 1e-12);
  cr_expect_str_eq(hs_stat_names[4], "sd");
  cr_expect_str_eq(hs_stat_names[6], "ci95_hi");
}

/* Two values: t(0.975, 1) = 12.706204736174696; one value: no spread (NaN);
 * equal values: sd 0 and a zero-width interval. */
Test(metrics, stats_small_samples) {
  double tmp[4], o[HS_STAT_COUNT];
  const double two[] = {1, 3};
  hs_metric_stats(two, 2, tmp, o);
  cr_expect_float_eq(o[4], sqrt(2.0), 1e-15);
  cr_expect_float_eq(o[5], 2.0 - 12.706204736174696, 1e-10);
  cr_expect_float_eq(o[6], 2.0 + 12.706204736174696, 1e-10);
  const double one[] = {7};
  hs_metric_stats(one, 1, tmp, o);
  cr_expect_eq(o[0], 7.0);
  cr_expect_eq(o[1], 7.0);
  cr_expect(isnan(o[4]) && isnan(o[5]) && isnan(o[6]));
  const double same[] = {1e9 + 0.5, 1e9 + 0.5, 1e9 + 0.5};
  hs_metric_stats(same, 3, tmp, o);
  cr_expect_eq(o[4], 0.0);
  cr_expect_eq(o[5], o[0]);
  cr_expect_eq(o[6], o[0]);
}

/* Every sweep metric gets every statistic: the points columns come from the
 * table, not a list per metric. */
Test(metrics, every_sweep_metric_has_spread_columns) {
  for (size_t k = 0; k < HS_SWEEP_NMETRICS && k < hs_metric_sweep_count(); k++) {
    const hs_metric *m = hs_metric_sweep_at(k);
    if (!strncmp(m->name, "test_", 5)) continue;
    cr_expect_eq(m->stats, HS_STAT_ALL, "%s", m->name);
  }
}

/* compare --format csv and json: own units, exact numbers (hs_fmt_double), the vs_1st percentages. */
Test(metrics, compare_csv_and_json_for_tools) {
  const char *names[] = {"equal", "a,b"};
  hs_summary s[2] = {sample(1), sample(0.5)};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert(f);
  hs_metric_compare_csv(f, "policy", names, s, 2);
  fclose(f);
  cr_expect_str_eq(buf,
                   "policy,makespan_s,makespan_s_vs_first_pct,energy_j,energy_compute_j,"
                   "energy_comm_j,energy_idle_j,energy_j_vs_first_pct,compute_cv,wait_fraction\n"
                   "equal,100,0,1500,1000,200,300,0,0.25,0.125\n"
                   "\"a,b\",50,-50,750,500,100,150,-50,0.25,0.125\n");
  free(buf);
  buf = NULL;
  f = open_memstream(&buf, &len);
  cr_assert(f);
  s[1].compute_cv = NAN;
  hs_metric_compare_json(f, "policy", names, s, 2);
  fclose(f);
  cr_expect(strstr(buf, "{\"policy\": \"equal\", \"makespan_s\": 100, \"makespan_s_vs_first_pct\": 0, "
                        "\"energy_j\": 1500,"),
            "%s", buf);
  cr_expect(strstr(buf, "\"energy_j_vs_first_pct\": -50, \"compute_cv\": null,"), "%s", buf);
  cr_expect_eq(buf[0], '[');
  cr_expect_eq(buf[len - 1], ']');
  free(buf);
}

/* A derived metric is its function and its table line: the value comes from
 * derive(), whatever offset says, and reaches summary.json like any other. */
static double energy_per_sample(const hs_summary *s) {
  return s->samples ? s->energy_j / (double)s->samples : 0;
}

Test(metrics, derived_metric_is_computed_by_its_function) {
  static const hs_metric derived = {
      "test_energy_per_sample_j", "J", "test only: energy per sample", 0, HS_METRIC_F64,
      HS_METRIC_JSON | HS_METRIC_SWEEP, HS_STAT_MEAN, {0}, energy_per_sample, NULL};
  hs_error err = {0};
  cr_assert_eq(hs_metric_register_test(&derived, &err), HS_OK, "%s", err.msg);
  hs_summary s = sample(1);
  s.energy_j = 300;
  s.samples = 120;
  const hs_metric *m = hs_metric_find("test_energy_per_sample_j");
  cr_assert(m);
  cr_expect_eq(hs_metric_value(m, &s), 2.5);
  hs_report_field f[HS_METRIC_MAX];
  size_t n = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  cr_assert_gt(n, 0);
  cr_expect_str_eq(f[n - 1].key, "test_energy_per_sample_j");
  cr_expect_eq(f[n - 1].value, 2.5);
}

/* --- optional groups: one table line names the group ------------------------ */

/* A metric of a new group appears in summary.json, compare and the sweep
 * columns exactly where a run reports the group; nothing but its line (here
 * the test registration) and the report of the group is needed. */
Test(metrics, optional_group_is_one_line) {
  static const hs_metric opt = {
      "test_group_s", "s", "test only: a metric of an optional group",
      offsetof(hs_summary, makespan_s), HS_METRIC_F64,
      HS_METRIC_JSON | HS_METRIC_SWEEP | HS_METRIC_COMPARE, HS_STAT_MEAN, {0}, NULL,
      "test-group"};
  hs_error err = {0};
  cr_assert_eq(hs_metric_register_test(&opt, &err), HS_OK, "%s", err.msg);
  unsigned bit = hs_metric_group("test-group");
  cr_expect_neq(bit, 0u);
  cr_expect_eq(bit & (hs_metric_group("learning") | hs_metric_group("system")), 0u,
               "each group has its own bit");
  /* the bit is the group's rank: the runs of group lines before its own */
  unsigned rank = 0;
  for (size_t i = 0; strcmp(hs_metric_at(i)->name, "energy_server_j"); i++) {
    const char *g = hs_metric_at(i)->group, *prev = i ? hs_metric_at(i - 1)->group : NULL;
    if (g && (!prev || strcmp(g, prev))) rank++;
  }
  cr_expect_eq(hs_metric_group("system"), 1u << rank);

  /* summary.json: only when the run reports the group. */
  hs_summary s[2] = {sample(1), sample(0.5)};
  hs_report_field f[HS_METRIC_MAX];
  size_t off = hs_metric_json_fields(&s[0], f, HS_METRIC_MAX);
  for (size_t i = 0; i < off; i++) cr_expect_str_neq(f[i].key, "test_group_s");
  s[1].metric_groups = bit;
  cr_expect(hs_metric_reported(&s[1], "test-group"));
  cr_expect(!hs_metric_reported(&s[0], "test-group"));
  size_t on = hs_metric_json_fields(&s[1], f, HS_METRIC_MAX);
  cr_assert_eq(on, off + 1);
  cr_expect_str_eq(f[on - 1].key, "test_group_s");
  cr_expect_eq(f[on - 1].value, 50);

  /* compare: a column when one of the runs reports it, none otherwise. */
  const char *names[] = {"a", "b"};
  char *got = capture_compare(names, s, 1);
  cr_expect_null(strstr(got, "test_group_s"), "%s", got);
  free(got);
  got = capture_compare(names, s, 2);
  cr_expect(strstr(got, " test_group_s\n") != NULL, "%s", got);
  free(got);

  /* sweep columns: where the sweep's points report it. */
  size_t base = hs_metric_sweep_count();
  hs_metric_sweep_groups(bit);
  cr_expect_eq(hs_metric_sweep_count(), base + 1);
  cr_expect_str_eq(hs_metric_sweep_at(base)->name, "test_group_s");
  hs_metric_sweep_groups(0);
  cr_expect_eq(hs_metric_sweep_count(), base);
}

/* Which groups a run reports, from its scenario: the regime's group (fl:
 * "system") and "learning" with a learning block; none for a plain PMA run. */
Test(metrics, run_groups_from_the_scenario) {
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_load(TINY, NULL, 0, &err);
  cr_assert(sc, "%s", err.msg);
  cr_expect_eq(hs_metric_run_groups(sc), 0u);
  hs_scenario_destroy(sc);
  static const hs_override fl[] = {{"regime.kind", "fl"}};
  sc = hs_scenario_load(TINY, fl, 1, &err);
  cr_assert(sc, "%s", err.msg);
  cr_expect_eq(hs_metric_run_groups(sc), hs_metric_group("system"));
  hs_scenario_destroy(sc);
  sc = hs_scenario_load(HS_SOURCE_DIR "/scenarios/testbed-mnist-pma-learning.json", NULL, 0, &err);
  cr_assert(sc, "%s", err.msg);
  cr_expect_eq(hs_metric_run_groups(sc), hs_metric_group("learning"));
  hs_scenario_destroy(sc);
}

/* Who reports an optional metric, from the regime descriptors and the
 * learning block (the message optimize prints when an objective is absent). */
Test(metrics, needs_names_the_reporting_regimes) {
  char buf[256];
  size_t n = hs_metric_needs(hs_metric_find("energy_system_j"), buf, sizeof buf);
  cr_expect_str_eq(buf, "regime \"fl\", whose runs report it");
  cr_expect_eq(n, strlen(buf));
  hs_metric_needs(hs_metric_find("time_to_target_s"), buf, sizeof buf);
  cr_expect_str_eq(buf, "a scenario with a learning section");
  cr_expect_eq(hs_metric_needs(hs_metric_find("makespan_s"), buf, sizeof buf), 0u);
  cr_expect_str_eq(buf, "");
  /* A short buffer is cut, never overrun; the length needed comes back. */
  char tiny[8];
  cr_expect_eq(hs_metric_needs(hs_metric_find("energy_system_j"), tiny, sizeof tiny), n);
  cr_expect_eq(strlen(tiny), sizeof tiny - 1);
}

/* --- a regime's own figures: reported by name, kept as metrics --------------- */

/* What a regime reports under a metric's name (its summary_fields hook) is
 * that metric's value, so it reaches summary.json at its line, the sweep
 * columns and compare; a figure without a line is handed back untouched. */
Test(metrics, regime_figures_become_metrics) {
  hs_summary s = sample(1);
  hs_metric_clear_reported(&s);
  const hs_report_field got[] = {{"agc_bits", 4096}, {"not_a_metric", 3}, {"agc_d", 2}};
  hs_report_field rest[3];
  size_t n = hs_metric_keep_reported(&s, got, 3, rest);
  cr_assert_eq(n, 1);
  cr_expect_str_eq(rest[0].key, "not_a_metric");
  cr_expect_eq(hs_metric_value(hs_metric_find("agc_bits"), &s), 4096);
  cr_expect_eq(hs_metric_value(hs_metric_find("agc_d"), &s), 2);
  cr_expect(isnan(hs_metric_value(hs_metric_find("agc_replans"), &s)), "not reported: NaN");

  /* summary.json: after the metrics every run has, in table order, only when
   * the run reports the group. */
  hs_report_field f[HS_METRIC_MAX];
  size_t base = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  for (size_t i = 0; i < base; i++) cr_expect(strncmp(f[i].key, "agc_", 4), "%s", f[i].key);
  s.metric_groups = hs_metric_group("agc");
  size_t with = hs_metric_json_fields(&s, f, HS_METRIC_MAX);
  cr_assert_eq(with, base + 13);
  cr_expect_str_eq(f[base].key, "agc_deadline_s");
  cr_expect_str_eq(f[base + 2].key, "agc_bits");
  cr_expect_eq(f[base + 2].value, 4096);

  /* a sweep column when a point's run reports the group */
  hs_metric_sweep_groups(0);
  size_t cols = hs_metric_sweep_count();
  hs_metric_sweep_groups(hs_metric_group("agc"));
  cr_expect_eq(hs_metric_sweep_count(), cols + 13);
  cr_expect_str_eq(hs_metric_sweep_at(hs_metric_sweep_index("agc_bits"))->name, "agc_bits");
  hs_metric_sweep_groups(0);
}

/* Each group's lines are adjacent (a group's bit is its rank), and every
 * group has its own bit. */
Test(metrics, groups_adjacent_and_distinct) {
  unsigned seen = 0;
  for (size_t i = 0; i < hs_metric_count(); i++) {
    const char *g = hs_metric_at(i)->group;
    if (!g) continue;
    unsigned bit = hs_metric_group(g); /* asserts adjacency */
    if (i && hs_metric_at(i - 1)->group && !strcmp(hs_metric_at(i - 1)->group, g)) continue;
    cr_expect_eq(seen & bit, 0u, "%s: a bit of its own", g);
    seen |= bit;
  }
  cr_expect_neq(seen, 0u);
}
