/* test_plot.c: the plot module (traces/plot): the figure registry (unique
 * names, a script on disk for each), the table reader on known inputs, and
 * hs_plot's promises with a stand-in gnuplot (`true`): the output folder is
 * made once the inputs pass, bad input leaves none, a missing gnuplot is exit
 * 1. The figures themselves are checked by tests/sweep/plot.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "hs_alloc.h"
#include "hs_plot.h"
#include "plot_core.h"

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
  size_t per_kind[2] = {0, 0};
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
