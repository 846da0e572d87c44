/* test_telemetry_csv.c: the replay CSV reader: a real file read back value by
 * value, and every structural and value error named by line and field. */
#include <criterion/criterion.h>
#include <string.h>

#include "traces/hs_telemetry_csv.h"

static hs_telemetry_csv *parse(const char *text, hs_error *err) {
  return hs_telemetry_csv_parse(text, strlen(text), "t.csv", err);
}

#define HDR "round,device,time_s,energy_j,samples\n"

Test(telemetry_csv, reads_the_golden_input) {
  hs_error err = {0};
  hs_telemetry_csv *t =
      hs_telemetry_csv_load(HS_SOURCE_DIR "/tests/golden/replay/telemetry.csv", &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_expect_eq(t->ndevices, 11);
  cr_expect_eq(t->nrounds, 8);
  cr_expect_str_eq(t->devices[0], "rpi4-0");
  cr_expect_str_eq(t->devices[10], "milkv-pioneer");
  cr_expect_eq(t->rounds[7], 7);
  cr_expect_eq(t->time_s[0], 5.272);
  cr_expect_eq(t->energy_j[0], 31.48);
  cr_expect_eq(t->samples[0], 100);
  /* round 5, rpi4-1 did not run: 0,0,0 */
  size_t k = 5 * 11 + 1;
  cr_expect(t->time_s[k] == 0 && t->energy_j[k] == 0 && t->samples[k] == 0);
  hs_telemetry_csv_destroy(t);
}

Test(telemetry_csv, crlf_blank_lines_and_round_gaps) {
  hs_error err = {0};
  hs_telemetry_csv *t = parse("round,device,time_s,energy_j,samples\r\n"
                              "3,a,1.5,2,10\r\n3,b,1e-1,0,4\r\n\r\n"
                              "9,a,1,1,1\r\n9,b,2,2,2",
                              &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_expect_eq(t->nrounds, 2);
  cr_expect_eq(t->rounds[0], 3);
  cr_expect_eq(t->rounds[1], 9);
  cr_expect_eq(t->time_s[1], 0.1);
  cr_expect_eq(t->samples[3], 2);
  hs_telemetry_csv_destroy(t);
}

Test(telemetry_csv, whitespace_lines_and_subnormal_values) {
  /* a line of blanks is a blank line (editors and exports leave them at the
   * end); 1e-310 is a finite number even though strtod reports ERANGE for it */
  hs_error err = {0};
  hs_telemetry_csv *t = parse(HDR "0,a,1e-310,2,10\n  \n0,b,1,4.9e-324,4\n\t\n \r\n", &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_expect_eq(t->ndevices, 2);
  cr_expect_eq(t->time_s[0], 1e-310);
  cr_expect_eq(t->energy_j[1], 4.9e-324);
  hs_telemetry_csv_destroy(t);
  /* overflow is still not a finite number */
  cr_expect_null(parse(HDR "0,a,1e999,2,10\n", &err));
  cr_expect(strstr(err.msg, "t.csv: line 2: time_s: \"1e999\" is not a finite number"), "%s",
            err.msg);
}

Test(telemetry_csv, too_large_integers_say_so) {
  /* they are non-negative integers, just too large: the message said otherwise */
  hs_error err = {0};
  cr_expect_null(parse(HDR "18446744073709551616,a,1,1,1\n", &err));
  cr_expect(strstr(err.msg, "t.csv: line 2: round: 18446744073709551616 is too large (at most "
                            "18446744073709551615)"),
            "%s", err.msg);
  cr_expect_null(parse(HDR "0,a,1,1,9223372036854775808\n", &err));
  cr_expect(strstr(err.msg, "t.csv: line 2: samples: 9223372036854775808 is too large (at most "
                            "9223372036854775807)"),
            "%s", err.msg);
  hs_telemetry_csv *t = parse(HDR "18446744073709551615,a,1,1,9223372036854775807\n", &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_expect_eq(t->rounds[0], UINT64_MAX);
  cr_expect_eq(t->samples[0], INT64_MAX);
  hs_telemetry_csv_destroy(t);
}

Test(telemetry_csv, errors_name_line_and_field) {
  struct {
    const char *text, *want;
  } bad[] = {
      {"", "t.csv: line 1: header"},
      {"round,device,time,energy,samples\n0,a,1,1,1\n", "t.csv: line 1: header"},
      {HDR, "t.csv: line 1: no data rows"},
      {HDR "0,a,1,1\n", "t.csv: line 2: 4 fields"},
      {HDR "0,a,1,1,1,9\n", "t.csv: line 2: more than 5 fields"},
      {HDR "x,a,1,1,1\n", "t.csv: line 2: round:"},
      {HDR "-1,a,1,1,1\n", "t.csv: line 2: round:"},
      {HDR "0,,1,1,1\n", "t.csv: line 2: device: empty"},
      {HDR "0,a\"b,1,1,1\n", "t.csv: line 2: column 2: a quote inside an unquoted field"},
      {HDR "0,\"a\nb\",1,1,1\n", "t.csv: line 2: device: a line break in the name"},
      {HDR "0,\"a,1,1,1\n", "t.csv: line 2: column 2: a quoted field is never closed"},
      {"round,device,time_s,samples\n0,a,1,1\n", "t.csv: line 1: header: no column \"energy_j\""},
      {"round,device,time_s,energy_j,samples,round\n", "t.csv: line 1: header: column \"round\" appears twice"},
      {" \n\n", "t.csv: line 2: header: only blank lines"},
      {HDR "0,a,nan,1,1\n", "t.csv: line 2: time_s: \"nan\" is not a finite"},
      {HDR "0,a,1,inf,1\n", "t.csv: line 2: energy_j:"},
      {HDR "0,a,-2,1,1\n", "t.csv: line 2: time_s: -2 is negative"},
      {HDR "0,a,1,1,-1\n", "t.csv: line 2: samples:"},
      {HDR "0,a,1,1,2.5\n", "t.csv: line 2: samples:"},
      {HDR "0,a,1,1,1\n0,b,1,1,1\n1,b,1,1,1\n1,a,1,1,1\n", "t.csv: line 4: device: \"b\" where \"a\""},
      {HDR "0,a,1,1,1\n0,b,1,1,1\n1,a,1,1,1\n", "t.csv: line 4: round 1 has 1 rows, expected 2"},
      {HDR "0,a,1,1,1\n0,b,1,1,1\n1,a,1,1,1\n2,a,1,1,1\n", "t.csv: line 5: round 1 has 1 rows"},
      {HDR "0,a,1,1,1\n0,b,1,1,1\n1,a,1,1,1\n1,b,1,1,1\n1,c,1,1,1\n", "t.csv: line 6: round 1 has more than 2"},
      {HDR "5,a,1,1,1\n2,a,1,1,1\n", "t.csv: line 3: round: 2 after round 5"},
      {HDR "0,a,1,1,1\n0,a,1,1,1\n", "t.csv: round 0: device: \"a\" appears twice"},
      {HDR "0,a,1,1,1\n0,b,1,1,1\n0,a,1,1,1\n1,a,1,1,1\n", "appears twice"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_error err = {0};
    hs_telemetry_csv *t = parse(bad[i].text, &err);
    cr_expect_null(t, "case %zu accepted", i);
    hs_telemetry_csv_destroy(t);
    cr_expect(err.status != HS_OK && strstr(err.msg, bad[i].want), "case %zu: \"%s\" lacks \"%s\"",
              i, err.msg, bad[i].want);
  }
}

/* Issue 16, defect 1: a NUL byte used to end the row silently (the rest of
 * the row, and a bad value after it, were never seen). */
Test(telemetry_csv, nul_byte_is_refused_with_its_line) {
  static const char text[] = HDR "0,a,1,1,1\n0,b,1,1,1\0garbage,x\n";
  hs_error err = {0};
  hs_telemetry_csv *t = hs_telemetry_csv_parse(text, sizeof text - 1, "t.csv", &err);
  cr_expect_null(t);
  hs_telemetry_csv_destroy(t);
  cr_expect_eq(err.status, HS_EPARSE);
  cr_expect_str_eq(err.msg, "t.csv: line 3: contains a NUL byte");
  static const char zeros[] = HDR "0,a,1,1,1\n\0\0\0\0";
  cr_expect_null(hs_telemetry_csv_parse(zeros, sizeof zeros - 1, "t.csv", &err));
  cr_expect_str_eq(err.msg, "t.csv: line 3: contains a NUL byte");
}

/* Issue 9: columns are found by name and fields may be quoted (RFC 4180). */
Test(telemetry_csv, columns_by_name_and_quoted_names) {
  hs_error err = {0};
  hs_telemetry_csv *t = parse("\xEF\xBB\xBFsamples,device,note,round,energy_j,time_s\n"
                              "10,\"pi, rack 2\",\"said \"\"hot\"\"\",0,2,1.5\n"
                              "4,b,,0,0,0.25\n"
                              "5,\"pi, rack 2\",x,1,3,2\n6,b,y,1,1,1\n",
                              &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_expect_eq(t->ndevices, 2);
  cr_expect_eq(t->nrounds, 2);
  cr_expect_str_eq(t->devices[0], "pi, rack 2");
  cr_expect_str_eq(t->devices[1], "b");
  cr_expect_eq(t->time_s[0], 1.5);
  cr_expect_eq(t->energy_j[0], 2);
  cr_expect_eq(t->samples[0], 10);
  cr_expect_eq(t->time_s[1], 0.25);
  cr_expect_eq(t->samples[2], 5);
  cr_expect_eq(t->energy_j[3], 1);
  hs_telemetry_csv_destroy(t);
  /* a row with fewer fields than the header names the header */
  cr_expect_null(parse("device,round,time_s,energy_j,samples\na,0,1,1\n", &err));
  cr_expect_str_eq(err.msg, "t.csv: line 2: 4 fields, expected 5: device,round,time_s,energy_j,samples");
}

Test(telemetry_csv, missing_file_names_the_path) {
  hs_error err = {0};
  cr_expect_null(hs_telemetry_csv_load("/nonexistent/t.csv", &err));
  cr_expect_eq(err.status, HS_ENOENT);
  cr_expect(strstr(err.msg, "/nonexistent/t.csv"), "%s", err.msg);
}

/* comm_s is optional: without it t->comm_s is NULL (files from before the
 * column stay valid); with it, in any column position, every row's value is
 * read, and a bad one is named by line and field like time_s. */
Test(telemetry_csv, comm_s_is_optional_and_checked) {
  hs_error err = {0};
  hs_telemetry_csv *t = parse(HDR "0,a,1,2,10\n0,b,1,2,10\n", &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_expect_null(t->comm_s);
  hs_telemetry_csv_destroy(t);
  t = parse("comm_s,round,device,time_s,energy_j,samples\n0.65,0,a,1,2,10\n0,0,b,1,2,10\n"
            "0.5,1,a,1,2,10\n1e-3,1,b,1,2,10\n",
            &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_assert_not_null(t->comm_s);
  cr_expect_eq(t->comm_s[0], 0.65);
  cr_expect_eq(t->comm_s[1], 0);
  cr_expect_eq(t->comm_s[2], 0.5);
  cr_expect_eq(t->comm_s[3], 1e-3);
  cr_expect_eq(t->time_s[3], 1);
  hs_telemetry_csv_destroy(t);
  cr_expect_null(parse("round,device,time_s,energy_j,samples,comm_s\n0,a,1,2,10,-0.5\n", &err));
  cr_expect(strstr(err.msg, "t.csv: line 2: comm_s: -0.5 is negative"), "%s", err.msg);
  cr_expect_null(parse("round,device,time_s,energy_j,samples,comm_s\n0,a,1,2,10,\n", &err));
  cr_expect(strstr(err.msg, "t.csv: line 2: comm_s: \"\" is not a finite number"), "%s",
            err.msg);
  cr_expect_null(parse("round,device,time_s,energy_j,samples,comm_s,comm_s\n0,a,1,2,10,1,1\n",
                       &err));
  cr_expect(strstr(err.msg, "column \"comm_s\" appears twice"), "%s", err.msg);
}
