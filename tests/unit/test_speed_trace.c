/* test_speed_trace.c: speed traces (traces/hs_speed_trace.h).
 * Closed-form completion times for piecewise-constant speeds (exact equality
 * where every quantity is a dyadic rational), the inverse relation between work
 * and finish, and every rejection with the file and line it names. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "traces/hs_speed_trace.h"

static hs_speed_trace *parse_ok(const char *csv) {
  hs_error err = {0};
  hs_speed_trace *t = hs_speed_trace_parse(csv, "mem.csv", &err);
  cr_assert_not_null(t, "parse failed: %s", err.msg);
  return t;
}

/* Parse must fail with `st` and a message containing `want`. */
static void parse_bad(const char *csv, hs_status st, const char *want) {
  hs_error err = {0};
  hs_speed_trace *t = hs_speed_trace_parse(csv, "bad.csv", &err);
  cr_assert_null(t, "accepted: %s", csv);
  cr_assert_eq(err.status, st, "status %d (%s) for %s", err.status, err.msg, csv);
  cr_assert(strstr(err.msg, want), "message \"%s\" lacks \"%s\"", err.msg, want);
  cr_assert(strncmp(err.msg, "bad.csv: ", 9) == 0, "message \"%s\" does not name the file", err.msg);
}

Test(speed_trace, null_trace_is_speed_one) {
  cr_assert_eq(hs_speed_trace_finish(NULL, 3.0, 5.0), 8.0);
  cr_assert_eq(hs_speed_trace_at(NULL, 123.0), 1.0);
  cr_assert_eq(hs_speed_trace_work(NULL, 2.0, 7.5), 5.5);
}

Test(speed_trace, halving_mid_computation_moves_completion) {
  hs_speed_trace *t = parse_ok("time_s,speed\n0,1\n4,0.5\n");
  /* 10 s of work from 0: 4 s at full speed, the remaining 6 s of work at half
   * speed take 12 s, so it ends at 16 instead of 10: moved by 6 * (1/0.5 - 1). */
  cr_assert_eq(hs_speed_trace_finish(t, 0.0, 10.0), 16.0);
  /* Wholly after the change: twice as long. */
  cr_assert_eq(hs_speed_trace_finish(t, 5.0, 2.0), 9.0);
  /* Ending exactly on the change. */
  cr_assert_eq(hs_speed_trace_finish(t, 2.0, 2.0), 4.0);
  /* Straddling: 2 s of work before, 1 s of work after (2 s of wall time). */
  cr_assert_eq(hs_speed_trace_finish(t, 2.0, 3.0), 6.0);
  /* Zero work ends where it starts. */
  cr_assert_eq(hs_speed_trace_finish(t, 7.0, 0.0), 7.0);
  hs_speed_trace_destroy(t);
}

Test(speed_trace, speedup_and_before_first_row) {
  hs_speed_trace *t = parse_ok("time_s,speed\n0,0.5\n10,2\n");
  /* From 8: 2 s at 0.5 does 1 s of work, the remaining 2 s at speed 2 take 1 s. */
  cr_assert_eq(hs_speed_trace_finish(t, 8.0, 3.0), 11.0);
  hs_speed_trace_destroy(t);

  /* Speed 1 before the first row, then a quarter speed. */
  t = parse_ok("time_s,speed\n5,0.25\n");
  cr_assert_eq(hs_speed_trace_at(t, 4.99), 1.0);
  cr_assert_eq(hs_speed_trace_at(t, 5.0), 0.25);
  cr_assert_eq(hs_speed_trace_finish(t, 0.0, 7.0), 13.0); /* 5 + 2 / 0.25 */
  cr_assert_eq(hs_speed_trace_finish(t, 1.0, 3.0), 4.0);  /* all before the row */
  cr_assert_eq(hs_speed_trace_work(t, 0.0, 13.0), 7.0);
  hs_speed_trace_destroy(t);
}

Test(speed_trace, at_is_right_continuous) {
  hs_speed_trace *t = parse_ok("time_s,speed\n0,1\n1,3\n2,0.5\n");
  cr_assert_eq(hs_speed_trace_rows(t), 3);
  cr_assert_eq(hs_speed_trace_at(t, 0.999), 1.0);
  cr_assert_eq(hs_speed_trace_at(t, 1.0), 3.0);
  cr_assert_eq(hs_speed_trace_at(t, 1.5), 3.0);
  cr_assert_eq(hs_speed_trace_at(t, 2.0), 0.5);
  cr_assert_eq(hs_speed_trace_at(t, 1e9), 0.5);
  hs_speed_trace_destroy(t);
}

Test(speed_trace, many_segments_closed_form) {
  /* Speed alternates 1, 0.5 every second: each 2 s period does 1.5 s of work. */
  enum { ROWS = 2000 };
  static char csv[ROWS * 16 + 32];
  size_t len = (size_t)snprintf(csv, sizeof csv, "time_s,speed\n");
  for (int i = 0; i < ROWS; i++)
    len += (size_t)snprintf(csv + len, sizeof csv - len, "%d,%s\n", i, i % 2 ? "0.5" : "1");
  hs_speed_trace *t = parse_ok(csv);
  cr_assert_eq(hs_speed_trace_finish(t, 0.0, 150.0), 200.0);     /* 100 periods */
  cr_assert_eq(hs_speed_trace_finish(t, 0.0, 151.0), 201.0);     /* + 1 s at speed 1 */
  cr_assert_eq(hs_speed_trace_finish(t, 0.0, 151.25), 201.5);    /* + 0.25 at half speed */
  cr_assert_eq(hs_speed_trace_finish(t, 1.5, 0.25), 2.0);        /* rest of a slow second */
  cr_assert_eq(hs_speed_trace_finish(t, 1.5, 1.5), 3.5);         /* 0.25 + 1 + 0.25 */
  /* After the last row (speed 0.5 from 1999 on) the trace holds forever. */
  cr_assert_eq(hs_speed_trace_finish(t, 1999.0, 10.0), 2019.0);
  hs_speed_trace_destroy(t);
}

Test(speed_trace, finish_inverts_work) {
  hs_speed_trace *t = parse_ok("time_s,speed\n0.3,0.7\n1.1,1.9\n2.75,0.2\n9,1.3\n");
  for (int i = 0; i < 200; i++) {
    double t0 = 0.05 * i, w = 0.037 * i + 0.01;
    double end = hs_speed_trace_finish(t, t0, w);
    cr_assert(end >= t0);
    double back = hs_speed_trace_work(t, t0, end);
    cr_assert(fabs(back - w) <= 1e-12 * (1 + w), "t0 %g w %g: work back %.17g", t0, w, back);
  }
  hs_speed_trace_destroy(t);
}

Test(speed_trace, comments_blank_lines_crlf) {
  hs_speed_trace *t = parse_ok("# throttling after 60 s\r\n\r\ntime_s,speed\r\n0,1\r\n# hot\r\n60,0.5\r\n");
  cr_assert_eq(hs_speed_trace_rows(t), 2);
  cr_assert_eq(hs_speed_trace_finish(t, 50.0, 20.0), 80.0);
  hs_speed_trace_destroy(t);
}

Test(speed_trace, bad_text) {
  parse_bad("", HS_EPARSE, "missing header");
  parse_bad("time,speed\n0,1\n", HS_EMISSING, "line 1: header: no column \"time_s\"");
  parse_bad("time_s,speed,time_s\n0,1,2\n", HS_EINVAL, "line 1: header: column \"time_s\" appears twice");
  parse_bad("time_s,speed\n0,\"1\n", HS_EPARSE, "line 2: column 2: a quoted field is never closed");
  parse_bad("time_s,speed\n", HS_EMISSING, "no rows");
  parse_bad("time_s,speed\n0,1\nabc,1\n", HS_EPARSE, "line 3: time_s: not a finite number");
  parse_bad("time_s,speed\n0,1\n\n# c\n5,nan\n", HS_EPARSE, "line 5: speed: not a finite number");
  parse_bad("time_s,speed\ninf,1\n", HS_EPARSE, "line 2: time_s: not a finite number");
  parse_bad("time_s,speed\n1e999,1\n", HS_EPARSE, "line 2: time_s: not a finite number");
  parse_bad("time_s,speed\n-1,1\n", HS_ERANGE, "line 2: time_s: must be >= 0");
  parse_bad("time_s,speed\n0,1\n3,1\n3,2\n", HS_EINVAL, "line 4: time_s: must be strictly ascending");
  parse_bad("time_s,speed\n0,1\n3,1\n2,2\n", HS_EINVAL, "line 4: time_s: must be strictly ascending");
  parse_bad("time_s,speed\n0,0\n", HS_ERANGE, "line 2: speed: must be > 0");
  parse_bad("time_s,speed\n0,-0.5\n", HS_ERANGE, "line 2: speed: must be > 0");
  parse_bad("time_s,speed\n0,1,2\n", HS_EPARSE, "line 2: expected two fields");
  parse_bad("time_s,speed\n0\n", HS_EPARSE, "line 2: expected two fields");
  parse_bad("time_s,speed\n0,1x\n", HS_EPARSE, "line 2: speed: not a finite number");
  parse_bad("time_s,speed\n,1\n", HS_EPARSE, "line 2: time_s: not a finite number");
}

/* Issue 16, defect 6: an empty trace was reported at "line 0". */
Test(speed_trace, empty_trace_names_line_1) {
  parse_bad("", HS_EPARSE, "bad.csv: line 1: missing header \"time_s,speed\" (the file is empty)");
  parse_bad("# only a comment\n\n", HS_EPARSE, "bad.csv: line 2: missing header");
}

/* Issue 16, defect 1: a NUL byte ended the text, so the bad row after it was
 * never read and the trace was accepted. */
Test(speed_trace, nul_byte_is_refused_with_its_line) {
  static const char text[] = "time_s,speed\n0,1\n\0\n5,-3\n";
  hs_error err = {0};
  hs_speed_trace *t = hs_speed_trace_parse_n(text, sizeof text - 1, "nul.csv", &err);
  cr_expect_null(t);
  hs_speed_trace_destroy(t);
  cr_expect_eq(err.status, HS_EPARSE);
  cr_expect_str_eq(err.msg, "nul.csv: line 3: contains a NUL byte");
}

/* Issue 9: columns by header name, in any order; RFC 4180 quoting. */
Test(speed_trace, columns_by_name_and_quotes) {
  hs_speed_trace *t = parse_ok("speed, time_s\n\"1\",0\n 0.5 , \"60\"\n");
  cr_assert_eq(hs_speed_trace_rows(t), 2);
  cr_assert_eq(hs_speed_trace_at(t, 61.0), 0.5);
  cr_assert_eq(hs_speed_trace_finish(t, 50.0, 20.0), 80.0);
  hs_speed_trace_destroy(t);
}

Test(speed_trace, load_file_and_missing_file) {
  const char *path = HS_BINARY_DIR "/test_speed_trace_load.csv";
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("time_s,speed\n0,1\n4,0.5\n", f);
  fclose(f);
  hs_error err = {0};
  hs_speed_trace *t = hs_speed_trace_load(path, &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_assert_eq(hs_speed_trace_finish(t, 0.0, 10.0), 16.0);
  hs_speed_trace_destroy(t);

  f = fopen(path, "w");
  fputs("time_s,speed\n0,1\n4,fast\n", f);
  fclose(f);
  t = hs_speed_trace_load(path, &err);
  cr_assert_null(t);
  cr_assert(strstr(err.msg, "test_speed_trace_load.csv: line 3: speed:"), "%s", err.msg);
  remove(path);

  t = hs_speed_trace_load(HS_BINARY_DIR "/no-such-trace.csv", &err);
  cr_assert_null(t);
  cr_assert(strstr(err.msg, "no-such-trace.csv"), "%s", err.msg);
}
