/* test_check.c: the check's inputs and arithmetic (traces: cluster_run.c, the
 * reader of a real run's records; check.c, the comparison and its verdict).
 * Known answers on hand-made records: 2 rounds x 2 boards whose every figure
 * is chosen so that sums, errors and worst devices can be read off. The
 * command's bad-input messages are CLI cases (tests/cli/cases/check-*). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "traces/hs_check.h"
#include "traces/hs_cluster_run.h"

static void put(const char *dir, const char *name, const char *text) {
  char *p = hs_path_join(dir, name);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f, "%s", p);
  fputs(text, f);
  fclose(f);
  hs_free(p);
}

#define ROUNDS_HEADER                                                                              \
  "round,device,samples,start_s,download_s,setup_s,train_s,pack_s,upload_s,wait_s,round_s,energy_" \
  "j,energy,loss\n"

/* Round 0: a trains 1 s, b 2 s; round 1: a 3 s, b 1 s (rows of round 1 in
 * the other order). Each row adds up to its round_s. */
static char *records(void) {
  char tmpl[] = "/tmp/hetsim-test-check-XXXXXX";
  char *dir = mkdtemp(tmpl);
  cr_assert_not_null(dir);
  put(dir, "rounds.csv",
      ROUNDS_HEADER
      "0,a,100,0.01,0.1,0.01,1,0.01,0.1,1.01,2.24,5,measured,1.0\n"
      "0,b,200,0.01,0.1,0.01,2,0.01,0.1,0.01,2.24,8,stated,1.0\n"
      "1,b,50,0.01,0.2,0.01,1,0.01,0.2,1.81,3.24,4,stated,0.9\n"
      "1,a,300,0.01,0.1,0.01,3,0.01,0.1,0.01,3.24,15,measured,0.9\n");
  put(dir, "allocations.csv", "round,device,samples\n0,a,100\n0,b,200\n1,a,300\n1,b,50\n");
  put(dir, "server.csv",
      "round,round_s,server_s,aggregate_s,controller_s,overhead_s,reallocated\n"
      "0,2.24,0.01,0,0,0,0\n1,3.24,0.01,0,0,0,1\n");
  put(dir, "run.json", "{\"rounds\": 2, \"makespan_s\": 5.5}\n");
  return hs_strdup(dir);
}

static void drop(char *dir) {
  static const char *const f[] = {"rounds.csv", "allocations.csv", "server.csv", "run.json"};
  for (size_t i = 0; i < 4; i++) {
    char *p = hs_path_join(dir, f[i]);
    remove(p);
    hs_free(p);
  }
  rmdir(dir);
  hs_free(dir);
}

Test(check, error_is_signed_relative) {
  cr_expect(fabs(hs_check_error(1.1, 1.0) - 0.1) < 1e-15);
  cr_expect(fabs(hs_check_error(0.5, 2.0) + 0.75) < 1e-15);
  cr_expect_eq(hs_check_error(0, 0), 0.0);
  cr_expect(isnan(hs_check_error(1, 0)), "no relative error against 0");
  cr_expect(isnan(hs_check_error(NAN, 1)));
}

Test(check, reader_reads_every_file) {
  char *dir = records();
  hs_error err = {0};
  hs_cluster_run *c = hs_cluster_run_read(dir, &err);
  cr_assert_not_null(c, "%s", err.msg);
  cr_expect_eq(c->rounds, 2);
  cr_assert_eq(c->nboards, 2);
  cr_expect_str_eq(c->boards[0], "a");
  cr_expect_str_eq(c->boards[1], "b");
  /* round 1's rows came b, a: stored by board */
  cr_expect_eq(hs_cluster_run_row(c, 1, 0)->samples, 300);
  cr_expect_eq(hs_cluster_run_row(c, 1, 0)->line, 5);
  cr_expect_eq(hs_cluster_run_row(c, 1, 1)->samples, 50);
  cr_expect_eq(hs_cluster_run_row(c, 0, 1)->energy, HS_ENERGY_STATED);
  cr_expect_eq(hs_cluster_run_row(c, 0, 0)->energy, HS_ENERGY_MEASURED);
  cr_expect_eq(c->server_s[1], 0.01);
  cr_expect_eq(c->makespan_s, 5.5);
  hs_cluster_run_destroy(c);
  drop(dir);
}

Test(check, reader_names_the_row_and_the_reason) {
  char *dir = records();
  hs_error err = {0};
  put(dir, "allocations.csv", "round,device,samples\n0,a,100\n0,b,201\n1,a,300\n1,b,50\n");
  cr_expect_null(hs_cluster_run_read(dir, &err));
  cr_expect(strstr(err.msg,
                   "allocations.csv: line 3: samples: 201 for round 0, device \"b\", but "
                   "rounds.csv line 3 says 200"),
            "%s", err.msg);
  put(dir, "rounds.csv",
      ROUNDS_HEADER
      "0,a,100,0,0,0,1,0,0,0,1,0,none,1\n"
      "0,b,100,0,0,0,1,0,0,0,1,0,none,1\n"
      "1,bb,100,0,0,0,1,0,0,0,1,0,none,1\n");
  cr_expect_null(hs_cluster_run_read(dir, &err));
  cr_expect(strstr(err.msg,
                   "rounds.csv: line 4: device: \"bb\" is not a device of round 0 (did you "
                   "mean \"b\"?)"),
            "%s", err.msg);
  put(dir, "rounds.csv",
      ROUNDS_HEADER
      "0,a,100,0,0,0,1,0,0,0,1,0,none,1\n"
      "2,a,100,0,0,0,1,0,0,0,1,0,none,1\n");
  cr_expect_null(hs_cluster_run_read(dir, &err));
  cr_expect(strstr(err.msg, "line 3: round: round 2 after round 0"), "%s", err.msg);
  put(dir, "rounds.csv",
      ROUNDS_HEADER
      "0,a,100,0,0,0,1,0,0,0,1,0,none,1\n"
      "0,b,100,0,0,0,1,0,0,0,1,0,none,1\n"
      "1,a,100,0,0,0,1,0,0,0,1,0,none,1\n");
  cr_expect_null(hs_cluster_run_read(dir, &err));
  cr_expect(strstr(err.msg, "rounds.csv: round 1: no row for device \"b\""), "%s", err.msg);
  put(dir, "rounds.csv", ROUNDS_HEADER "0,a,100,0,0,0,-1,0,0,0,1,0,none,1\n");
  cr_expect_null(hs_cluster_run_read(dir, &err));
  cr_expect(strstr(err.msg, "line 2: train_s: expected a finite number >= 0 (got \"-1\")"), "%s",
            err.msg);
  char *p = hs_path_join(dir, "rounds.csv");
  remove(p);
  hs_free(p);
  cr_expect_null(hs_cluster_run_read(dir, &err));
  cr_expect_eq(err.status, HS_ENOENT, "a missing file: %s", err.msg);
  drop(dir);
}

/* Predicted: compute a 1.1, b 1.5 | a 3, b 1; comm 0.1 each; wait the rest of
 * a predicted round of 2 s and 3.5 s; energy 10 W x compute. */
Test(check, sums_errors_worst_devices) {
  char *dir = records();
  hs_error err = {0};
  hs_cluster_run *run = hs_cluster_run_read(dir, &err);
  cr_assert_not_null(run, "%s", err.msg);
  double compute[] = {1.1, 1.5, 3.0, 1.0}, comm[] = {0.1, 0.1, 0.1, 0.1};
  double round_s[] = {2.0, 3.5}, wait[4], train_j[4];
  for (size_t k = 0; k < 4; k++) {
    wait[k] = round_s[k / 2] - compute[k] - comm[k];
    train_j[k] = 10 * compute[k];
  }
  hs_check_input in = {compute, comm, wait, train_j, round_s, 5.5, false};
  hs_check *c = hs_check_create(run, &in);
  /* the total: makespan 5.5 vs 5.5; compute 6.6 vs 7 */
  const hs_check_cell *t = &c->total;
  cr_expect_eq(t->fig[HS_CHECK_MAKESPAN].err, 0.0);
  cr_expect(fabs(t->fig[HS_CHECK_COMPUTE].pred - 6.6) < 1e-12);
  cr_expect_eq(t->fig[HS_CHECK_COMPUTE].meas, 7.0);
  cr_expect(fabs(t->fig[HS_CHECK_COMPUTE].err - (6.6 / 7 - 1)) < 1e-12);
  /* per device over rounds: a 4.1/4 = +2.5 %, b 2.5/3 = -16.7 %: b is worst */
  cr_expect(fabs(c->board[0].fig[HS_CHECK_COMPUTE].err - 0.025) < 1e-12);
  cr_expect_eq(t->fig[HS_CHECK_COMPUTE].worst, 1);
  cr_expect(fabs(t->fig[HS_CHECK_COMPUTE].worst_err - (2.5 / 3 - 1)) < 1e-12);
  /* comm: measured download + upload = 0.2, 0.2 | 0.2, 0.4 */
  cr_expect(fabs(c->cell[3].fig[HS_CHECK_COMM].err - (0.1 / 0.4 - 1)) < 1e-12);
  cr_expect_eq(c->round[1].fig[HS_CHECK_COMM].worst, 1);
  /* wait: measured wait_s + server_s; round 0 a: 1.01 + 0.01 */
  cr_expect(fabs(c->cell[0].fig[HS_CHECK_WAIT].meas - 1.02) < 1e-12);
  /* the round's makespan: round_s + server_s = 2.25 */
  cr_expect(fabs(c->round[0].fig[HS_CHECK_MAKESPAN].err - (2.0 / 2.25 - 1)) < 1e-12);
  cr_expect_eq(c->round[0].fig[HS_CHECK_COMPUTE].worst, 1, "b: 1.5 / 2 is the farther");
  /* other: start + setup + pack, 0.03 per row */
  cr_expect(fabs(t->other_meas_s - 0.12) < 1e-12);
  /* energy: only a's measured rows (5 J and 15 J against 11 J and 30 J) */
  cr_expect_eq(t->energy, HS_CHECK_ENERGY_MEASURED);
  cr_expect(fabs(t->fig[HS_CHECK_ENERGY].pred - 41) < 1e-12);
  cr_expect_eq(t->fig[HS_CHECK_ENERGY].meas, 20);
  cr_expect_eq(c->board[1].energy, HS_CHECK_ENERGY_OFF);
  cr_expect(isnan(c->board[1].fig[HS_CHECK_ENERGY].err), "b's stated energy is not compared");
  hs_check_destroy(c);
  /* --stated-energy: b's rows too, and the label says the sum is mixed */
  in.stated_energy = true;
  c = hs_check_create(run, &in);
  cr_expect_eq(c->total.energy, HS_CHECK_ENERGY_MIXED);
  cr_expect_eq(c->board[1].energy, HS_CHECK_ENERGY_STATED);
  cr_expect_eq(c->total.fig[HS_CHECK_ENERGY].meas, 32);
  hs_check_destroy(c);
  hs_cluster_run_destroy(run);
  drop(dir);
}

Test(check, verdict_names_the_figure) {
  char *dir = records();
  hs_error err = {0};
  hs_cluster_run *run = hs_cluster_run_read(dir, &err);
  cr_assert_not_null(run, "%s", err.msg);
  double compute[] = {1, 2, 3, 1}, comm[] = {0.2, 0.2, 0.2, 0.4}, wait[] = {1, 0, 0, 1.8},
         train_j[4] = {0}, round_s[] = {2.25, 3.0};
  hs_check_input in = {compute, comm, wait, train_j, round_s, 5.75, false};
  hs_check *c = hs_check_create(run, &in);
  hs_check_verdict v;
  hs_check_judge(c, 0.05, -1, &v); /* 5.75 / 5.5 - 1 = +4.55 % */
  cr_expect(v.judged && v.pass, "%s", v.line);
  cr_expect_str_eq(v.line, "check: ok: total makespan error +4.55 %, within --tolerance 0.05");
  hs_check_judge(c, 0.04, -1, &v);
  cr_expect(!v.pass);
  cr_expect_str_eq(v.line,
                   "check: FAIL: total makespan error +4.55 % (predicted 5.75 s, measured "
                   "5.5 s) exceeds --tolerance 0.04");
  hs_check_judge(c, 0.05, 0.05, &v); /* round 1: 3 / 3.25 - 1 = -7.69 % */
  cr_expect(!v.pass);
  cr_expect_str_eq(v.line,
                   "check: FAIL: round 1 makespan error -7.69 % (predicted 3 s, measured "
                   "3.25 s) exceeds --tolerance-round 0.05");
  hs_check_judge(c, -1, -1, &v);
  cr_expect(!v.judged && v.pass);
  hs_check_destroy(c);
  hs_cluster_run_destroy(run);
  drop(dir);
}

static char *slurp(const char *path) {
  size_t len = 0;
  hs_error err = {0};
  char *t = hs_read_file(path, &len, &err);
  cr_assert_not_null(t, "%s", err.msg);
  return t;
}

/* check.csv: the header is the table's, one row per round x device, per round,
 * per device and the total (4 + 2 + 2 + 1); check.json holds the verdict and
 * the per-round and per-device arrays; a folder that does not exist is an
 * error that leaves nothing. */
Test(check, files_hold_every_row) {
  char *dir = records();
  hs_error err = {0};
  hs_cluster_run *run = hs_cluster_run_read(dir, &err);
  cr_assert_not_null(run, "%s", err.msg);
  double compute[] = {1, 2, 3, 1}, comm[] = {0.2, 0.2, 0.2, 0.4}, wait[] = {1, 0, 0, 1.8},
         train_j[4] = {10, 20, 30, 10}, round_s[] = {2.25, 3.0};
  hs_check_input in = {compute, comm, wait, train_j, round_s, 5.75, false};
  hs_check *c = hs_check_create(run, &in);
  hs_check_verdict v;
  hs_check_judge(c, 0.04, -1, &v);
  char *csv = hs_path_join(dir, "check.csv"), *json = hs_path_join(dir, "check.json");
  cr_assert_eq(hs_check_write_csv(c, csv, &err), HS_OK, "%s", err.msg);
  hs_check_meta m = {"s.json", dir, 1, false};
  cr_assert_eq(hs_check_write_json(c, &m, &v, json, &err), HS_OK, "%s", err.msg);
  char *t = slurp(csv);
  size_t lines = 0;
  for (const char *p = t; *p; p++) lines += *p == '\n';
  cr_expect_eq(lines, 10, "%s", t);
  cr_expect(!strncmp(t, "round,device,samples,makespan_pred_s,", 37), "%.80s", t);
  cr_expect(strstr(t, "\n0,,300,2.25,2.25,0,"), "round 0's own row: %s", t);
  cr_expect(strstr(t, "\nall,a,400,,,,"), "a's row over the rounds, no makespan: %s", t);
  cr_expect(strstr(t, "\nall,,650,5.75,5.5,"), "the total: %s", t);
  hs_free(t);
  t = slurp(json);
  cr_expect(strstr(t, "\"pass\": false"), "%s", t);
  cr_expect(strstr(t, "\"tolerance\": 0.04,\n  \"tolerance_round\": null"), "%s", t);
  cr_expect(strstr(t, "\"energy_compared\": \"measured\""), "%s", t);
  cr_expect(strstr(t, "\"per_device\": [\n    {\"device\": \"a\""), "%s", t);
  cr_expect(!strcmp(t + strlen(t) - 4, "]\n}\n"), "complete: %s", t + strlen(t) - 20);
  hs_free(t);
  remove(csv);
  remove(json);
  hs_free(csv);
  hs_free(json);
  char *bad = hs_path_join(dir, "no/such/check.csv");
  cr_expect_neq(hs_check_write_csv(c, bad, &err), HS_OK);
  hs_free(bad);
  hs_check_destroy(c);
  hs_cluster_run_destroy(run);
  drop(dir);
}
