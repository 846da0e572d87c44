/* test_plot.c: the plot module (traces/plot): the figure registry (unique
 * names, a script on disk for each), the table reader on known inputs, and
 * hs_plot's promises with a stand-in gnuplot (`true`): the output folder is
 * made once the inputs pass, bad input leaves none, a missing gnuplot is exit
 * 1. The figures themselves are checked by tests/sweep/plot.sh; what each
 * figure hands gnuplot (data files and variables) is checked here with a
 * stand-in gnuplot that copies them aside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/hs_alloc.h"
#include "hs_plot.h"
#include "base/hs_util.h"
#include "plot_core.h"
#include "test_tmpdir.h"

#define FIXTURE HS_SOURCE_DIR "/tests/data/sweep/fixture.points.csv"
#define SCRIPTS HS_SOURCE_DIR "/traces/plot"

static char *write_tmp(const char *name, const char *text, size_t len) {
  char *p = hs_malloc(256);
  snprintf(p, 256, "/tmp/hs-test-plot-%ld-%s", (long)getpid(), name);
  FILE *f = fopen(p, "wb");
  cr_assert(f);
  fwrite(text, 1, len, f);
  fclose(f);
  return p;
}

Test(plot, registry_names_unique_and_scripts_exist) {
  cr_assert_gt(plot_nfigures, 0);
  size_t per_kind[HS_PLOT_OPTIMIZE + 1] = {0};
  for (size_t i = 0; i < plot_nfigures; i++) {
    const plot_figure *f = plot_figures[i];
    cr_assert(f->name && f->script && f->check && f->draw, "figure %zu", i);
    per_kind[f->kind]++;
    for (size_t j = 0; j < i; j++) cr_expect_str_neq(f->name, plot_figures[j]->name);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", SCRIPTS, f->script);
    cr_expect_eq(access(path, R_OK), 0, "%s: no script %s", f->name, path);
  }
  cr_expect_gt(per_kind[HS_PLOT_SWEEP], 0);
  cr_expect_gt(per_kind[HS_PLOT_RUN], 0);
  cr_expect_gt(per_kind[HS_PLOT_OPTIMIZE], 0);
}

Test(plot, table_known_answer) {
  static const char text[] = "# hetsim sweep v1 | scenario tiny.json fnv1a64=0 | seeds 1\n"
                             "point,name,x\r\n"
                             "0,\"a,b\",1.5\n"
                             "\n"
                             "1,c,2\n";
  char *p = write_tmp("t.csv", text, sizeof text - 1);
  hs_plot_error e = {0};
  plot_ctx c = {.err = &e};
  plot_table t;
  cr_assert_eq(plot_table_read(&c, p, &t), 0, "%s", e.msg);
  cr_expect_str_eq(t.title, "tiny.json");
  cr_assert_eq(t.ncol, 3);
  cr_expect_eq(plot_col(t.col, t.ncol, "x"), 2);
  cr_expect_eq(plot_col(t.col, t.ncol, "y"), -1);
  cr_assert_eq(t.nrow, 2, "the blank line is skipped");
  cr_expect_str_eq(t.row[0][1], "a,b");
  cr_expect_str_eq(t.row[1][2], "2");
  plot_table_free(&t);
  unlink(p);
  hs_free(p);
}

/* plot_table_read refuses text with exit 2 and a message holding want. */
static void expect_table_error(const char *name, const char *text, size_t len, const char *want) {
  char *p = write_tmp(name, text, len);
  hs_plot_error e = {0};
  plot_ctx c = {.err = &e};
  plot_table t;
  cr_expect_eq(plot_table_read(&c, p, &t), 2, "%s", name);
  cr_expect(strstr(e.msg, want) != NULL, "%s: %s", name, e.msg);
  plot_table_free(&t);
  unlink(p);
  hs_free(p);
}

Test(plot, table_errors_name_file_and_line) {
  static const char short_row[] = "round,device,samples\n0,a,1\n1,b\n";
  expect_table_error("short.csv", short_row, sizeof short_row - 1,
                     "short.csv: line 3: wrong number of fields");
  static const char nul[] = "round,device\n0,a\0\n";
  expect_table_error("nul.csv", nul, sizeof nul - 1, "nul.csv: line 2: contains a NUL byte");
  static const char none[] = "round,device\n";
  expect_table_error("none.csv", none, sizeof none - 1, "none.csv: no rows");
  static const char empty[] = "# hetsim sweep v1 | scenario x.json\n";
  expect_table_error("empty.csv", empty, sizeof empty - 1, "empty.csv: no column header");
}

static hs_plot_args sweep_args(const char *out) {
  hs_plot_args a = {0};
  a.kind = HS_PLOT_SWEEP;
  a.source = a.points = FIXTURE;
  a.out = out;
  a.gnuplot = "true";
  a.script_dir = SCRIPTS;
  a.quiet = true;
  return a;
}

Test(plot, sweep_draws_into_out) {
  char out[128];
  snprintf(out, sizeof out, "/tmp/hs-test-plot-%ld-out", (long)getpid());
  hs_plot_args a = sweep_args(out);
  hs_plot_error e;
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  struct stat st;
  cr_expect_eq(stat(out, &st), 0);
  cr_expect(S_ISDIR(st.st_mode));
  rmdir(out);
}

Test(plot, bad_input_leaves_no_folder) {
  char out[128];
  snprintf(out, sizeof out, "/tmp/hs-test-plot-%ld-bad", (long)getpid());
  hs_plot_args a = sweep_args(out);
  a.z = "joules";
  hs_plot_error e;
  cr_expect_eq(hs_plot(&a, &e), 2);
  cr_expect(strstr(e.msg, "--z joules: not a metric column") != NULL, "%s", e.msg);
  cr_expect_neq(access(out, F_OK), 0, "%s was made", out);

  a = sweep_args(out);
  a.gnuplot = "/nonexistent/gnuplot";
  cr_expect_eq(hs_plot(&a, &e), 1);
  cr_expect(strstr(e.msg, "cannot run /nonexistent/gnuplot") != NULL, "%s", e.msg);
  rmdir(out);
}

/* --- what the figures hand gnuplot ------------------------------------------ */

/* A stand-in gnuplot that copies the temporary folder (data files, script)
 * to $HS_PLOT_CAPTURE/<n>/, n counting the figures drawn. */
static char *capture_dir;

static char *capture_gnuplot(void) {
  static char gp[256];
  char dir[] = "/tmp/hs-test-plot-cap-XXXXXX";
  cr_assert(test_mkdtemp_at(dir));
  capture_dir = hs_strdup(dir);
  setenv("HS_PLOT_CAPTURE", capture_dir, 1);
  snprintf(gp, sizeof gp, "%s.sh", capture_dir);
  FILE *f = fopen(gp, "w");
  cr_assert(f);
  fputs("#!/bin/sh\nd=$(dirname \"$1\")\nn=$(ls \"$HS_PLOT_CAPTURE\" | wc -l)\n"
        "mkdir \"$HS_PLOT_CAPTURE/$n\" && cp \"$d\"/* \"$HS_PLOT_CAPTURE/$n/\"\n",
        f);
  fclose(f);
  chmod(gp, 0755);
  return gp;
}

static char *captured(int n, const char *name) {
  char p[512];
  snprintf(p, sizeof p, "%s/%d/%s", capture_dir, n, name);
  hs_error err = {0};
  char *t = hs_read_file(p, NULL, &err);
  cr_assert(t, "%s", err.msg);
  return t;
}

/* Remove the capture folder, its stand-in and the given folders (rm -rf:
 * test scratch only, under /tmp). */
static void cleanup(const char *a, const char *b) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.sh' '%s' '%s'", capture_dir, capture_dir, a,
           b ? b : a);
  cr_expect_eq(system(cmd), 0);
  hs_free(capture_dir);
  capture_dir = NULL;
}

static char *make_dir(const char *tag) {
  char *d = hs_malloc(256);
  snprintf(d, 256, "/tmp/hs-test-plot-%ld-%s", (long)getpid(), tag);
  mkdir(d, 0755);
  return d;
}

static void put(const char *dir, const char *name, const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  cr_assert(f);
  fputs(text, f);
  fclose(f);
}

static hs_plot_args run_args(const char *src, const char *out, const char *gp) {
  hs_plot_args a = {0};
  a.kind = HS_PLOT_RUN;
  a.source = src;
  a.out = out;
  a.gnuplot = gp;
  a.script_dir = SCRIPTS;
  a.quiet = true;
  return a;
}

/* 30 devices of two profiles (20 "a", 10 "b") over two rounds: one line per
 * profile, the mean per device; without the profile column, one per device. */
static void write_devices(const char *dir, bool profiles) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fputs(profiles ? "round,device,samples,compute_s,comm_s,wait_s,energy_j,profile\n"
                 : "round,device,samples,compute_s,comm_s,wait_s,energy_j\n", f);
  for (int r = 0; r < 2; r++)
    for (int d = 0; d < 30; d++) {
      fprintf(f, "%d,dev-%d,%d,1,1,1,1", r, d, d < 20 ? 10 + d % 2 + r : 100 + r);
      fputs(profiles ? (d < 20 ? ",a\n" : ",b\n") : "\n", f);
    }
  fclose(f);
  put(dir, "devices.csv", buf);
  free(buf);
}

Test(plot_data, allocation_grouped_by_profile_above_24_devices) {
  char *gp = capture_gnuplot();
  char *src = make_dir("alloc"), *out = make_dir("alloc-out");
  write_devices(src, true);
  hs_plot_args a = run_args(src, out, gp);
  hs_plot_error e;
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  char *data = captured(0, "data.dat"), *script = captured(0, "script.gp");
  /* Profile a: samples 10/11 alternate, so the mean is 10.5 in round 0. */
  cr_expect_str_eq(data, "0 10.5\n1 11.5\n\n\n0 100\n1 101\n\n\n");
  cr_expect(strstr(script, "names = 'a(x20) b(x10)'"), "%s", script);
  cr_expect(strstr(script, "grouped = 1"), "%s", script);
  hs_free(data);
  hs_free(script);

  write_devices(src, false); /* an older folder: per device, no legend */
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  script = captured(1, "script.gp");
  cr_expect(strstr(script, "grouped = 0"), "%s", script);
  cr_expect(strstr(script, "show_titles = 0"), "%s", script);
  cr_expect(strstr(script, "dev-29'"), "%s", script);
  hs_free(script);
  cleanup(src, out);
  hs_free(src);
  hs_free(out);
}

static void write_traced_run(const char *dir) {
  put(dir, "rounds.csv",
      "round,start_s,end_s,duration_s,energy_j,compute_cv,max_wait_s,reallocated\n"
      "0,0,2,2,1,0,0,0\n1,2,4,2,1,0,0,0\n");
  put(dir, "devices.csv", "round,device,samples\n0,d0,1\n0,d1,1\n0,d2,1\n");
  put(dir, "trace.json",
      "{\"traceEvents\":[\n"
      "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"d0\"}},\n"
      "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"d1\"}},\n"
      "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_name\",\"args\":{\"name\":\"d2\"}},\n"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"name\":\"compute\",\"ts\":0,\"dur\":1000000},\n"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"compute\",\"ts\":0,\"dur\":2000000},\n"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"name\":\"compute\",\"ts\":0,\"dur\":3000000}\n"
      "]}\n");
}

Test(plot_data, gantt_draws_the_devices_asked_for_in_order) {
  char *gp = capture_gnuplot();
  char *src = make_dir("gantt"), *out = make_dir("gantt-out");
  write_traced_run(src);
  hs_plot_args a = run_args(src, out, gp);
  a.devices = "d2,d0";
  hs_plot_error e;
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  /* Figure 0 is the allocation, 1 the Gantt chart: d2 on line 0, d0 on 1. */
  char *data = captured(1, "data.dat"), *script = captured(1, "script.gp");
  cr_expect(strstr(data, "0.5 1 0.5 0.38\n"), "d0 on line 1: %s", data);
  cr_expect(strstr(data, "1.5 0 1.5 0.38\n"), "d2 on line 0: %s", data);
  cr_expect(!strstr(data, "1 1 0.38"), "d1 not drawn: %s", data);
  cr_expect(strstr(script, "ndev = 2"), "%s", script);
  cr_expect(strstr(script, "(\"d2\" 0, \"d0\" 1)"), "%s", script);
  hs_free(data);
  hs_free(script);

  a.devices = "d0,nope";
  cr_expect_eq(hs_plot(&a, &e), 2);
  cr_expect(strstr(e.msg, "--devices: no device \"nope\" in"), "%s", e.msg);
  a.devices = "d0,d0";
  cr_expect_eq(hs_plot(&a, &e), 2);
  cr_expect(strstr(e.msg, "\"d0\" named twice"), "%s", e.msg);
  cleanup(src, out);
  hs_free(src);
  hs_free(out);
}

/* A points file with intervals: the Pareto data carries them; a sweep over
 * one varying key gets the line figure, sorted by the key's value. */
Test(plot_data, pareto_error_bars_and_one_key_line) {
  char *gp = capture_gnuplot();
  char *src = make_dir("line");
  put(src, "r.points.csv",
      "# hetsim sweep v1 | scenario t.json fnv1a64=0 | grid policy.w_e=0,1 | seeds 1,2\n"
      "point,policy.kind,policy.w_e,seeds,makespan_s_mean,makespan_s_ci95_lo,makespan_s_ci95_hi,"
      "energy_j_mean,energy_j_ci95_lo,energy_j_ci95_hi,pareto_front\n"
      "0,adaptive,1,2,10,9,11,500,450,550,1\n"
      "1,adaptive,0,2,12,nan,nan,400,390,410,1\n");
  char pts[512], out[512];
  snprintf(pts, sizeof pts, "%s/r.points.csv", src);
  snprintf(out, sizeof out, "%s/out", src);
  hs_plot_args a = sweep_args(out);
  a.source = a.points = pts;
  a.gnuplot = gp;
  hs_plot_error e;
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  /* Figures in registry order: pareto (0), heatmap (two keys), line. */
  char *pareto = captured(0, "data.dat");
  cr_expect(strstr(pareto, "10 500 0 1 9 11 450 550 0\n"), "%s", pareto);
  cr_expect(strstr(pareto, "12 400 1 1 12 12 390 410 0\n"), "nan: no bar: %s", pareto);
  hs_free(pareto);
  char p[512];
  int line = -1;
  for (int n = 0; n < 4 && line < 0; n++) {
    snprintf(p, sizeof p, "%s/%d/script.gp", capture_dir, n);
    hs_error err = {0};
    char *t = hs_read_file(p, NULL, &err);
    if (t && strstr(t, "sweep_line.gp")) line = n;
    hs_free(t);
  }
  cr_assert_geq(line, 0, "the line figure was drawn");
  char *data = captured(line, "data.dat"), *script = captured(line, "script.gp");
  /* In increasing order of the key, whatever the grid's order. */
  cr_expect_str_eq(data, "0 12 12 12 400 390 410\n1 10 9 11 500 450 550\n");
  cr_expect(strstr(script, "xlabel = 'policy.w_e'"), "%s", script);
  cr_expect(strstr(script, "categorical = 0"), "%s", script);
  hs_free(data);
  hs_free(script);
  cleanup(src, NULL);
  hs_free(src);
}

/* Two keys with several values: the pareto figure colours by w_e and gives
 * each deadband its own marker, named in the key (issue 23: colour alone
 * could not tell deadbands apart); the data's last column is the shape. */
Test(plot_data, pareto_shapes_by_the_second_key) {
  char *gp = capture_gnuplot();
  char *src = make_dir("shape");
  put(src, "r.points.csv",
      "# hetsim sweep v1 | scenario t.json fnv1a64=0 | grid policy.w_e=0,1 | grid "
      "policy.deadband=0,0.1 | seeds 1\n"
      "point,policy.kind,policy.w_e,policy.deadband,seeds,makespan_s_mean,energy_j_mean,"
      "pareto_front\n"
      "0,adaptive,0,0,1,10,500,1\n1,adaptive,0,0.1,1,11,510,0\n"
      "2,adaptive,1,0,1,12,400,1\n3,adaptive,1,0.1,1,13,420,0\n");
  char pts[512], out[512];
  snprintf(pts, sizeof pts, "%s/r.points.csv", src);
  snprintf(out, sizeof out, "%s/out", src);
  hs_plot_args a = sweep_args(out);
  a.source = a.points = pts;
  a.gnuplot = gp;
  hs_plot_error e;
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  char *data = captured(0, "data.dat"), *script = captured(0, "script.gp");
  cr_expect(strstr(data, "10 500 0 1 10 10 500 500 0\n11 510 0 0 11 11 510 510 1\n"
                         "12 400 1 1 12 12 400 400 0\n13 420 1 0 13 13 420 420 1\n"),
            "%s", data);
  cr_expect(strstr(script, "colorlabel = 'policy.w_e'"), "%s", script);
  cr_expect(strstr(script, "shapelabel = 'policy.deadband'\nnshapes = 2\n"), "%s", script);
  cr_expect(strstr(script, "shapename[1] = '0'\nshapename[2] = '0.1'\n"), "%s", script);
  hs_free(data);
  hs_free(script);
  cleanup(src, NULL);
  hs_free(src);
}

/* The learning figure of one run folder draws that run only; its siblings
 * (other run folders under the same parent) only with --siblings. Rows that
 * were not evaluated are left out, and curve mode (no accuracy) draws no
 * accuracy data set, so gnuplot never meets a set without points. Fails when
 * siblings are merged by default or when nan rows reach the data file. */
/* The capture number of the first learning figure drawn after capture `from`. */
static int learning_capture(int from) {
  for (int n = from; n < 16; n++) {
    char p[512];
    snprintf(p, sizeof p, "%s/%d/script.gp", capture_dir, n);
    hs_error err = {0};
    char *t = hs_read_file(p, NULL, &err);
    bool hit = t && strstr(t, "run_learning.gp");
    hs_free(t);
    if (hit) return n;
  }
  return -1;
}

Test(plot_data, learning_draws_this_run_unless_siblings_are_asked_for) {
  char *gp = capture_gnuplot();
  char *parent = make_dir("learn");
  char a_dir[512], b_dir[512];
  snprintf(a_dir, sizeof a_dir, "%s/a", parent);
  snprintf(b_dir, sizeof b_dir, "%s/b", parent);
  mkdir(a_dir, 0755);
  mkdir(b_dir, 0755);
  put(a_dir, "devices.csv", "round,device,samples,compute_s,comm_s,wait_s,energy_j\n0,d,5,1,1,1,1\n");
  put(b_dir, "devices.csv", "round,device,samples,compute_s,comm_s,wait_s,energy_j\n0,d,5,1,1,1,1\n");
  put(a_dir, "learning.csv",
      "round,time_s,energy_j,samples,train_loss,test_loss,test_accuracy\n"
      "0,1,10,5,0.9,,\n1,2,20,5,0.8,0.7,0.5\n");
  put(b_dir, "learning.csv",
      "round,time_s,energy_j,samples,train_loss,test_loss,test_accuracy\n"
      "0,0.01,1,5,0.9,0.6,nan\n");
  char *out = make_dir("learn-out");
  hs_plot_args a = run_args(a_dir, out, gp);
  hs_plot_error e;
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  int n = learning_capture(0);
  cr_assert_geq(n, 0, "the learning figure was drawn");
  char *data = captured(n, "data.dat"), *script = captured(n, "script.gp");
  cr_expect_str_eq(data, "2 20 0.7 0.5\n\n\n", "this run only, evaluated rows only");
  cr_expect(strstr(script, "names = 'a'"), "%s", script);
  cr_expect(strstr(script, "has_acc = 1"), "%s", script);
  hs_free(data);
  hs_free(script);

  a.siblings = true;
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  int m = learning_capture(n + 1);
  cr_assert_geq(m, 0, "the learning figure was drawn with --siblings");
  data = captured(m, "data.dat");
  script = captured(m, "script.gp");
  cr_expect_str_eq(data, "2 20 0.7 0.5\n\n\n0.01 1 0.6 nan\n\n\n");
  cr_expect(strstr(script, "names = 'a b'"), "%s", script);
  hs_free(data);
  hs_free(script);

  /* Curve mode alone: loss only, no accuracy data set. */
  a = run_args(b_dir, out, gp);
  cr_assert_eq(hs_plot(&a, &e), 0, "%s", e.msg);
  int k = learning_capture(m + 1);
  cr_assert_geq(k, 0);
  script = captured(k, "script.gp");
  cr_expect(strstr(script, "has_acc = 0"), "%s", script);
  hs_free(script);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", parent);
  cr_expect_eq(system(cmd), 0);
  cleanup(out, NULL);
  hs_free(parent);
  hs_free(out);
}
