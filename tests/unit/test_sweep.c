/* test_sweep.c: grid and seed parsing (ranges without drift, every bad-spec
 * error), point order, validation up front, thread-count independence, the
 * results file (fresh, torn line, resume, wrong sweep, sort at the end) and
 * the Pareto front against a brute-force reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <math.h>

#include "base/hs_fmt.h"
#include "base/hs_alloc.h"
#include "traces/hs_outfile.h"
#include "base/hs_rng.h"
#include "sim/hs_sweep.h"

#define TINY HS_SOURCE_DIR "/tests/data/sweep/tiny.json"

/* --- grids and seeds -------------------------------------------------------- */

static void expect_values(const char *spec, const char *const *want, size_t n) {
  hs_sweep_axis a;
  hs_error err = {0};
  cr_assert_eq(hs_sweep_axis_parse(spec, &a, &err), HS_OK, "%s: %s", spec, err.msg);
  cr_assert_eq(a.nvalues, n, "%s: %zu values", spec, a.nvalues);
  for (size_t i = 0; i < n; i++) cr_expect_str_eq(a.values[i], want[i], "%s [%zu]", spec, i);
  hs_sweep_axis_fini(&a);
}

Test(sweep_grid, lists_and_ranges) {
  expect_values("policy.w_e=0,0.5,1", (const char *[]){"0", "0.5", "1"}, 3);
  expect_values("task=mnist,era5", (const char *[]){"mnist", "era5"}, 2);
  expect_values("policy.w_e=0:1:0.25", (const char *[]){"0", "0.25", "0.5", "0.75", "1"}, 5);
  /* 3 * 0.1 is 0.30000000000000004 in binary: the text must still be 0.3, and
   * the stop 0.3 is included although (0.3 - 0)/0.1 = 2.9999999999999996. */
  expect_values("x=0:0.3:0.1", (const char *[]){"0", "0.1", "0.2", "0.3"}, 4);
  expect_values("x=1:0:-0.5", (const char *[]){"1", "0.5", "0"}, 3);
  expect_values("x=-1:1:1", (const char *[]){"-1", "0", "1"}, 3);
  expect_values("rounds=2:7:2", (const char *[]){"2", "4", "6"}, 3);
  expect_values("x=5:5:1", (const char *[]){"5"}, 1);
  /* Whole numbers up to 2^53 print in full (%.15g would round them). */
  expect_values("samples_per_round=9007199254740990:9007199254740992:1",
                (const char *[]){"9007199254740990", "9007199254740991", "9007199254740992"}, 3);
}

Test(sweep_grid, range_has_no_accumulated_drift) {
  hs_sweep_axis a;
  hs_error err = {0};
  cr_assert_eq(hs_sweep_axis_parse("x=0:1:0.01", &a, &err), HS_OK);
  cr_assert_eq(a.nvalues, 101);
  cr_expect_str_eq(a.values[100], "1");
  cr_expect_str_eq(a.values[57], "0.57");
  hs_sweep_axis_fini(&a);
}

static void expect_bad_axis(const char *spec, const char *why) {
  hs_sweep_axis a;
  hs_error err = {0};
  cr_assert_neq(hs_sweep_axis_parse(spec, &a, &err), HS_OK, "%s accepted", spec);
  char head[256];
  snprintf(head, sizeof head, "--grid %s: ", spec);
  cr_expect(!strncmp(err.msg, head, strlen(head)), "%s: message names the spec: %s", spec,
            err.msg);
  cr_expect(strstr(err.msg, why) != NULL, "%s: \"%s\" lacks \"%s\"", spec, err.msg, why);
}

Test(sweep_grid, bad_specs_name_the_spec) {
  expect_bad_axis("policy.w_e=0:1:0", "step is 0");
  expect_bad_axis("policy.w_e=1:0:0.5", "empty range");
  expect_bad_axis("policy.w_e=0:x:1", "three finite numbers");
  expect_bad_axis("policy.w_e=0,,1", "empty value");
  expect_bad_axis("policy.w_e=", "empty value");
  expect_bad_axis("policy.w_e", "expected key=");
  expect_bad_axis("=1,2", "expected key=");
  expect_bad_axis("task=\"a\"", "bare");
  /* pandas.read_csv(f, comment='#'), as the README advises, would cut a row there. */
  expect_bad_axis("description=run#1,run#2", "'#'");
  expect_bad_axis("a#b=1", "a CSV header cannot");
  expect_bad_axis("x=1,2,1", "appears twice");
  expect_bad_axis("x=0:1e9:1e-3", "more than");
  expect_bad_axis("x=0:1e300:1e-300", "more than"); /* the count overflows a double */
  expect_bad_axis("x=-1e308:1e308:1e307", "beyond a double's range");
  /* Values that print alike would be two points running the same scenario. */
  expect_bad_axis("x=1:1.000000000000001:1e-16", "both print as 1");
}

Test(sweep_grid, seeds) {
  uint64_t *s;
  size_t n;
  hs_error err = {0};
  cr_assert_eq(hs_sweep_seeds_parse("3-5,9,1", &s, &n, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(n, 5);
  uint64_t want[] = {3, 4, 5, 9, 1};
  for (size_t i = 0; i < n; i++) cr_expect_eq(s[i], want[i]);
  hs_free(s);
  const char *bad[] = {"3-1", "1,,2", "a", "-1", "1-", "1,2,2", "9007199254740993", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_expect_neq(hs_sweep_seeds_parse(bad[i], &s, &n, &err), HS_OK, "\"%s\" accepted", bad[i]);
    cr_expect(!strncmp(err.msg, "--seeds ", 8), "%s", err.msg);
  }
}

/* --- the sweep -------------------------------------------------------------- */

static hs_sweep *make(const char *policies, const char *const *grids, size_t ng,
                      const char *seeds, hs_error *err) {
  static const hs_override set[] = {{"rounds", "2"}};
  hs_sweep_spec spec = {TINY, set, 1, policies, grids, ng, seeds};
  return hs_sweep_create(&spec, err);
}

Test(sweep, point_order_last_axis_fastest) {
  const char *g[] = {"policy.w_e=0,1", "policy.deadband=0,0.05,0.1"};
  hs_error err = {0};
  hs_sweep *sw = make("adaptive", g, 2, "4,2", &err);
  cr_assert(sw, "%s", err.msg);
  cr_assert_eq(hs_sweep_npoints(sw), 6);
  cr_assert_eq(hs_sweep_nrows(sw), 12);
  cr_assert_eq(hs_sweep_naxes(sw), 3);
  cr_expect_str_eq(hs_sweep_axis_at(sw, 0)->key, "policy.kind");
  cr_expect_str_eq(hs_sweep_value(sw, 0, 1), "0");
  cr_expect_str_eq(hs_sweep_value(sw, 0, 2), "0");
  cr_expect_str_eq(hs_sweep_value(sw, 1, 2), "0.05");
  cr_expect_str_eq(hs_sweep_value(sw, 3, 1), "1");
  cr_expect_str_eq(hs_sweep_value(sw, 3, 2), "0");
  cr_expect_eq(hs_sweep_seed_at(sw, 0), 4);
  cr_expect_str_eq(hs_sweep_columns(sw),
                   "point,policy.kind,policy.w_e,policy.deadband,seed,makespan_s,energy_j,"
                   "energy_compute_j,energy_comm_j,energy_idle_j,compute_cv,wait_fraction\n");
  cr_expect(strstr(hs_sweep_header(sw), "| set rounds=2 | grid policy.kind=adaptive | grid "
                                        "policy.w_e=0,1 | grid policy.deadband=0,0.05,0.1 | "
                                        "seeds 4,2\n") != NULL,
            "%s", hs_sweep_header(sw));
  hs_sweep_destroy(sw);
}

static void expect_bad_sweep(const char *policies, const char *grid, const char *head,
                             const char *why) {
  hs_error err = {0};
  const char *g[] = {grid};
  hs_sweep *sw = make(policies, g, grid ? 1 : 0, NULL, &err);
  cr_expect_null(sw, "%s accepted", grid);
  hs_sweep_destroy(sw);
  cr_expect(!strncmp(err.msg, head, strlen(head)), "message names the spec: %s", err.msg);
  cr_expect(strstr(err.msg, why) != NULL, "\"%s\" lacks \"%s\"", err.msg, why);
}

Test(sweep, every_point_validated_before_running) {
  expect_bad_sweep(NULL, "policy.nope=1", "--grid policy.nope=1: ", "unknown policy key");
  expect_bad_sweep(NULL, "nokey=1,2", "--grid nokey=1,2: ", "unknown key");
  /* Only the last value is bad: found anyway. */
  expect_bad_sweep(NULL, "rounds=1,2,abc", "--grid rounds=1,2,abc: ", "expected an integer");
  expect_bad_sweep(NULL, "policy.w_e=0:2:0.5", "--grid policy.w_e=0:2:0.5: ", "w_e");
  /* w_e on a preset: the message says how to sweep w_e. */
  expect_bad_sweep("balanced", "policy.w_e=0,0.5", "--grid policy.w_e=0,0.5: ",
                   "needs --policies adaptive");
  expect_bad_sweep("adaptive,nope", NULL, "--policies adaptive,nope: ", "no policy \"nope\"");
  expect_bad_sweep("adaptive", "policy.kind=equal", "--grid policy.kind=equal: ",
                   "already swept");
  expect_bad_sweep(NULL, "seed=1,2", "--grid seed=1,2: ", "--seeds");
  /* A key whose parent does not exist fails when it is set, not validated. */
  expect_bad_sweep(NULL, "devices[9].count=1,2", "--grid devices[9].count=1,2: ",
                   "does not exist");
}

/* A grid written out in full (200 values) with one bad value: the message
 * quotes the start of the spec and still says what is wrong. */
Test(sweep, long_spec_keeps_the_reason) {
  char grid[4096] = "policy.w_e=0", *w = grid + strlen(grid);
  for (int i = 1; i < 200; i++) w += sprintf(w, ",%g", i / 1000.0);
  strcpy(w, ",2");
  hs_error err = {0};
  const char *g[] = {grid};
  hs_sweep *sw = make(NULL, g, 1, NULL, &err);
  cr_expect_null(sw, "a w_e of 2 accepted");
  hs_sweep_destroy(sw);
  cr_expect(!strncmp(err.msg, "--grid policy.w_e=0,0.001,", 26), "names the spec: %s", err.msg);
  cr_expect(strstr(err.msg, "policy.w_e: 2 is outside") != NULL, "says why: %s", err.msg);
  /* The same for errors of the spec itself, of --seeds and of --policies. */
  strcpy(w, ",,1");
  hs_sweep_axis a;
  cr_expect_neq(hs_sweep_axis_parse(grid, &a, &err), HS_OK);
  cr_expect(strstr(err.msg, "empty value in the list") != NULL, "says why: %s", err.msg);
  char seeds[4096] = "1", *v = seeds + 1;
  for (int i = 2; i < 400; i++) v += sprintf(v, ",%d", i);
  strcpy(v, ",7");
  uint64_t *s;
  size_t n;
  cr_expect_neq(hs_sweep_seeds_parse(seeds, &s, &n, &err), HS_OK);
  cr_expect(strstr(err.msg, "seed 7 appears twice") != NULL, "says why: %s", err.msg);
  char pol[2048] = "adaptive";
  for (int i = 0; i < 100; i++) strcat(pol, ",equal");
  cr_expect_null(make(pol, NULL, 0, NULL, &err));
  cr_expect(strstr(err.msg, "appears twice") != NULL, "says why: %s", err.msg);
  /* Cut on a character boundary: "é" is two bytes, the 78th byte starts one. */
  char uni[256] = "a";
  for (int i = 0; i < 60; i++) strcat(uni, "\xc3\xa9");
  cr_expect_null(make(uni, NULL, 0, NULL, &err));
  cr_expect(strstr(err.msg, "\xc3\xa9...: ") != NULL, "cut inside a character: %s", err.msg);
}

/* Without grids (seeds only) a bad scenario reads as the scenario's own error. */
Test(sweep, no_grid_error_is_the_scenarios) {
  static const hs_override set[] = {{"rounds", "0"}};
  hs_sweep_spec spec = {TINY, set, 1, NULL, NULL, 0, "1-2"};
  hs_error err = {0};
  cr_expect_null(hs_sweep_create(&spec, &err));
  cr_expect(!strncmp(err.msg, TINY ": rounds: ", strlen(TINY ": rounds: ")), "%s", err.msg);
}

static hs_sweep *small(hs_error *err) {
  const char *g[] = {"policy.w_e=0:1:0.5", "policy.deadband=0,0.1"};
  return make(NULL, g, 2, "1-3", err);
}

typedef struct collect {
  char **line;
  const hs_sweep *sw;
  size_t calls;
} collect;

static bool collect_row(size_t i, const hs_sweep_result *r, void *ud) {
  (void)i;
  collect *c = ud;
  char buf[512];
  size_t n = hs_sweep_format_row(c->sw, r, buf, sizeof buf);
  cr_assert_lt(n, sizeof buf);
  cr_assert_null(c->line[r->row], "row %zu reported twice", r->row);
  c->line[r->row] = hs_strdup(buf);
  c->calls++;
  return true;
}

static char **run_all(const hs_sweep *sw, unsigned jobs) {
  size_t n = hs_sweep_nrows(sw);
  size_t *rows = hs_malloc(n * sizeof *rows);
  for (size_t i = 0; i < n; i++) rows[i] = i;
  collect c = {hs_calloc(n, sizeof *c.line), sw, 0};
  hs_error err = {0};
  cr_assert_eq(hs_sweep_run_rows(sw, rows, n, jobs, collect_row, &c, &err), HS_OK, "%s",
               err.msg);
  cr_assert_eq(c.calls, n);
  hs_free(rows);
  return c.line;
}

Test(sweep, same_rows_whatever_the_thread_count) {
  hs_error err = {0};
  hs_sweep *sw = small(&err);
  cr_assert(sw, "%s", err.msg);
  size_t n = hs_sweep_nrows(sw);
  char **a = run_all(sw, 1), **b = run_all(sw, 4);
  for (size_t r = 0; r < n; r++) {
    cr_expect_str_eq(a[r], b[r], "row %zu", r);
    hs_free(a[r]);
    hs_free(b[r]);
  }
  hs_free(a);
  hs_free(b);
  hs_sweep_destroy(sw);
}

typedef struct stopper {
  size_t calls, stop_after;
} stopper;

static bool stop_row(size_t i, const hs_sweep_result *r, void *ud) {
  (void)i, (void)r;
  stopper *s = ud;
  return ++s->calls < s->stop_after;
}

/* A caller that cannot keep results (a full disk) stops the sweep: no new
 * row starts, only the rows already in flight finish. */
Test(sweep, callback_stops_the_sweep) {
  hs_error err = {0};
  hs_sweep *sw = small(&err);
  cr_assert(sw, "%s", err.msg);
  size_t n = hs_sweep_nrows(sw);
  size_t *rows = hs_malloc(n * sizeof *rows);
  for (size_t i = 0; i < n; i++) rows[i] = i;
  for (unsigned jobs = 1; jobs <= 3; jobs += 2) {
    stopper s = {0, 2};
    cr_expect_eq(hs_sweep_run_rows(sw, rows, n, jobs, stop_row, &s, &err), HS_OK);
    cr_expect_geq(s.calls, 2);
    cr_expect_leq(s.calls, 2 + jobs - 1, "-j %u: %zu of %zu rows ran after the stop", jobs,
                  s.calls, n);
  }
  hs_free(rows);
  hs_sweep_destroy(sw);
}

/* --- line 1 records what the rows were computed from ------------------------ */

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

static char *header_of(const char *scenario, hs_error *err) {
  const char *g[] = {"policy.w_e=0,1"};
  hs_sweep_spec spec = {scenario, NULL, 0, NULL, g, 1, NULL};
  hs_sweep *sw = hs_sweep_create(&spec, err);
  cr_assert(sw, "%s", err->msg);
  char *h = hs_strdup(hs_sweep_header(sw));
  hs_sweep_destroy(sw);
  return h;
}

/* A profile edited between a kill and --resume (a board recalibrated with
 * hetsim-probe) changes line 1, so rows computed from the old one are refused
 * instead of being mixed into the results. */
Test(sweep, header_covers_the_profiles) {
  char dir[256], scn[300], prof[300];
  snprintf(dir, sizeof dir, "%s/test_sweep_inputs_%ld", HS_BINARY_DIR, (long)getpid());
  snprintf(scn, sizeof scn, "%s/s.json", dir);
  snprintf(prof, sizeof prof, "%s/board.json", dir);
  cr_assert(hs_mkdir_p(dir, NULL) == HS_OK);
  hs_error err = {0};
  char *text = hs_read_file(HS_SOURCE_DIR "/devices/profiles/rpi4.json", NULL, &err);
  cr_assert(text, "%s", err.msg);
  write_text(prof, text);
  write_text(scn, "{\"model_bytes\": 1000, \"rounds\": 1, \"samples_per_round\": 100,\n"
                  " \"policy\": {\"kind\": \"adaptive\"},\n"
                  " \"devices\": [{\"name\": \"a\", \"profile\": \"./board.json\"}],\n"
                  " \"network\": {\"links\": {\"lan\": {\"bandwidth_mbps\": 100}}}}\n");
  char *h1 = header_of(scn, &err);
  char *again = header_of(scn, &err);
  cr_expect_str_eq(h1, again, "same files, same line 1");
  size_t n = strlen(text);
  text = hs_realloc(text, n + 2);
  memcpy(text + n, "\n", 2); /* any change of content */
  write_text(prof, text);
  char *h2 = header_of(scn, &err);
  cr_expect_str_neq(h1, h2, "line 1 ignores the profile: %s", h2);
  unlink(prof);
  unlink(scn);
  rmdir(dir);
  hs_free(h1);
  hs_free(again);
  hs_free(h2);
  hs_free(text);
}

/* --- the results file -------------------------------------------------------- */

static char *tmp_path(const char *tag) {
  char *p = hs_malloc(256);
  snprintf(p, 256, "%s/test_sweep_%s_%ld.csv", HS_BINARY_DIR, tag, (long)getpid());
  unlink(p);
  return p;
}

static void append_rows(const hs_sweep *sw, hs_sweep_file *f, char **line, size_t from,
                        size_t to) {
  for (size_t r = from; r < to; r++) {
    hs_error err = {0};
    cr_assert_eq(hs_sweep_file_append(f, line[r], strlen(line[r]), &err), HS_OK, "%s", err.msg);
  }
  (void)sw;
}

Test(sweep_file, torn_line_resume_and_final_sort) {
  hs_error err = {0};
  hs_sweep *sw = small(&err);
  cr_assert(sw, "%s", err.msg);
  size_t n = hs_sweep_nrows(sw);
  char **line = run_all(sw, 2);
  char *path = tmp_path("resume");
  bool *done = hs_calloc(n, sizeof *done);

  hs_sweep_file *f = hs_sweep_file_open(sw, path, false, done, &err);
  cr_assert(f, "%s", err.msg);
  /* Rows out of order, as threads finish them, then a torn half line. */
  append_rows(sw, f, line, 5, 9);
  append_rows(sw, f, line, 0, 2);
  hs_sweep_file_close(f, NULL);
  FILE *fp = fopen(path, "a");
  cr_assert(fp);
  fwrite(line[2], 1, strlen(line[2]) - 3, fp);
  fclose(fp);
  /* Finishing with rows missing is refused. */
  cr_expect_eq(hs_sweep_finalize(sw, path, NULL, &err), HS_ESTATE);
  cr_expect(strstr(err.msg, "rows missing") != NULL, "%s", err.msg);
  /* Opening without --resume refuses an existing file. */
  cr_expect_null(hs_sweep_file_open(sw, path, false, done, &err));
  cr_expect(strstr(err.msg, "--resume") != NULL, "%s", err.msg);

  f = hs_sweep_file_open(sw, path, true, done, &err);
  cr_assert(f, "%s", err.msg);
  for (size_t r = 0; r < n; r++) cr_expect_eq(done[r], (r >= 5 && r < 9) || r < 2, "row %zu", r);
  for (size_t r = 0; r < n; r++)
    if (!done[r]) append_rows(sw, f, line, r, r + 1);
  cr_assert_eq(hs_sweep_file_close(f, &err), HS_OK);
  hs_sweep_point *pt = NULL;
  cr_assert_eq(hs_sweep_finalize(sw, path, &pt, &err), HS_OK, "%s", err.msg);

  /* Sorted, whole, and the header first. */
  char *text = hs_read_file(path, NULL, &err);
  size_t want_len = strlen(hs_sweep_header(sw)) + strlen(hs_sweep_columns(sw));
  for (size_t r = 0; r < n; r++) want_len += strlen(line[r]);
  char *want = hs_malloc(want_len + 1), *w = want;
  w += sprintf(w, "%s%s", hs_sweep_header(sw), hs_sweep_columns(sw));
  for (size_t r = 0; r < n; r++) w += sprintf(w, "%s", line[r]);
  cr_expect_str_eq(text, want);
  /* Aggregates over the three seeds of point 0 (makespan) from the rows. */
  double v[3];
  for (size_t s = 0; s < 3; s++) {
    const char *p = line[s];
    for (int k = 0; k < 4; k++) p = strchr(p, ',') + 1;
    v[s] = strtod(p, NULL);
  }
  double mn = v[0] < v[1] ? (v[0] < v[2] ? v[0] : v[2]) : (v[1] < v[2] ? v[1] : v[2]);
  cr_expect_eq(pt[0].m[0].min, mn);
  double mean = (v[0] + v[1] + v[2]) / 3;
  cr_expect_float_eq(pt[0].m[0].mean, mean, 1e-12);
  /* sd (n - 1) and the Student-t interval, t(0.975, 2) = 4.302652729749464. */
  double ss = 0;
  for (int s = 0; s < 3; s++) ss += (v[s] - mean) * (v[s] - mean);
  double sd = sqrt(ss / 2), half = 4.302652729749464 * sd / sqrt(3.0);
  cr_expect_float_eq(pt[0].m[0].sd, sd, 1e-9 * (sd + 1));
  cr_expect_float_eq(pt[0].m[0].ci95_lo, mean - half, 1e-9 * mean);
  cr_expect_float_eq(pt[0].m[0].ci95_hi, mean + half, 1e-9 * mean);
  cr_expect_leq(pt[0].m[0].ci95_lo, pt[0].m[0].mean);
  cr_expect_geq(pt[0].m[0].ci95_hi, pt[0].m[0].mean);
  char *pp = hs_sweep_points_path(path);
  /* The points file prints them beside mean/median/min/max. */
  char *ptext = hs_read_file(pp, NULL, &err);
  cr_assert(ptext, "%s", err.msg);
  cr_expect(strstr(ptext, ",makespan_s_max,makespan_s_sd,makespan_s_ci95_lo,makespan_s_ci95_hi,"),
            "%s", ptext);
  char cell[96], f1[HS_FMT_DOUBLE_MAX], f2[HS_FMT_DOUBLE_MAX], f3[HS_FMT_DOUBLE_MAX];
  hs_fmt_double(f1, pt[0].m[0].sd); /* exact, as the points file prints them */
  hs_fmt_double(f2, pt[0].m[0].ci95_lo);
  hs_fmt_double(f3, pt[0].m[0].ci95_hi);
  snprintf(cell, sizeof cell, ",%s,%s,%s,", f1, f2, f3);
  cr_expect(strstr(ptext, cell), "%s in %s", cell, ptext);
  hs_free(ptext);
  cr_expect(access(pp, F_OK) == 0, "%s written", pp);
  unlink(pp);
  hs_free(pp);
  hs_free(pt);
  hs_free(text);
  hs_free(want);
  unlink(path);
  for (size_t r = 0; r < n; r++) hs_free(line[r]);
  hs_free(line);
  hs_free(done);
  hs_free(path);
  hs_sweep_destroy(sw);
}

Test(sweep_file, another_sweep_or_garbage_is_refused) {
  hs_error err = {0};
  hs_sweep *sw = small(&err);
  cr_assert(sw, "%s", err.msg);
  const char *g[] = {"policy.w_e=0,1"};
  hs_sweep *other = make(NULL, g, 1, NULL, &err);
  cr_assert(other, "%s", err.msg);
  char *path = tmp_path("other");
  bool *done = hs_calloc(hs_sweep_nrows(sw), sizeof *done);
  hs_sweep_file *f = hs_sweep_file_open(other, path, false, done, &err);
  cr_assert(f);
  hs_sweep_file_close(f, NULL);
  cr_expect_null(hs_sweep_file_open(sw, path, true, done, &err));
  cr_expect(strstr(err.msg, "line 1: written by a different sweep") != NULL, "%s", err.msg);
  /* A complete line that is not a row of this sweep names its line. */
  unlink(path);
  f = hs_sweep_file_open(sw, path, false, done, &err);
  cr_assert(f);
  cr_assert_eq(hs_sweep_file_append(f, "0,0,0,7,1,2,3,4,5,6,7\n", 22, &err), HS_OK);
  hs_sweep_file_close(f, NULL);
  cr_expect_null(hs_sweep_file_open(sw, path, true, done, &err));
  cr_expect(strstr(err.msg, "line 3: seed not in this sweep") != NULL, "%s", err.msg);
  unlink(path);
  hs_free(path);
  hs_free(done);
  hs_sweep_destroy(other);
  hs_sweep_destroy(sw);
}

Test(sweep_file, points_path) {
  char *p = hs_sweep_points_path("out/we.csv");
  cr_expect_str_eq(p, "out/we.points.csv");
  hs_free(p);
  p = hs_sweep_points_path("we");
  cr_expect_str_eq(p, "we.points.csv");
  hs_free(p);
}

/* --- Pareto ----------------------------------------------------------------- */

Test(sweep_pareto, known_answer) {
  double x[] = {1, 2, 3, 2, 4, 4, 5};
  double y[] = {5, 3, 4, 3, 1, 2, 1};
  bool want[] = {true, true, false, true, true, false, false};
  bool front[7];
  hs_sweep_pareto(x, y, 7, front);
  for (size_t i = 0; i < 7; i++) cr_expect_eq(front[i], want[i], "point %zu", i);
}

Test(sweep_pareto, matches_brute_force) {
  hs_rng rng;
  hs_rng_init(&rng, 42, 0, 0);
  for (int trial = 0; trial < 200; trial++) {
    size_t n = 1 + hs_rng_next(&rng) % 40;
    double x[40], y[40];
    bool got[40];
    for (size_t i = 0; i < n; i++) { /* few distinct values: many ties */
      x[i] = (double)(hs_rng_next(&rng) % 6);
      y[i] = (double)(hs_rng_next(&rng) % 6);
    }
    hs_sweep_pareto(x, y, n, got);
    for (size_t i = 0; i < n; i++) {
      bool dominated = false;
      for (size_t j = 0; j < n; j++)
        if (x[j] <= x[i] && y[j] <= y[i] && (x[j] < x[i] || y[j] < y[i])) dominated = true;
      cr_assert_eq(got[i], !dominated, "trial %d point %zu", trial, i);
    }
  }
}
