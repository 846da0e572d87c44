/* test_csv.c: the RFC 4180 reader (hs_csv.h): quoting, line ends, line
 * numbers across quoted line breaks, the flags, header lookup, and every
 * error named by line and column. */
#include <criterion/criterion.h>
#include <string.h>

#include "traces/hs_csv.h"

static hs_csv *open_text(const char *text, unsigned flags) {
  hs_error err = {0};
  hs_csv *r = hs_csv_create(text, strlen(text), "t.csv", flags, &err);
  cr_assert_not_null(r, "%s", err.msg);
  return r;
}

/* Next record must have exactly the n fields in want, starting on `line`. */
static void expect_record(hs_csv *r, size_t line, const char *const *want, size_t n) {
  hs_error err = {0};
  cr_assert_eq(hs_csv_next(r, &err), 1, "%s", err.msg);
  cr_expect_eq(hs_csv_line(r), line);
  cr_assert_eq(hs_csv_nfields(r), n, "line %zu: %zu fields", line, hs_csv_nfields(r));
  for (size_t i = 0; i < n; i++)
    cr_expect_str_eq(hs_csv_field(r, i), want[i], "line %zu field %zu", line, i);
}

#define REC(r, line, ...)                                                   \
  expect_record(r, line, (const char *const[]){__VA_ARGS__},              \
                sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void expect_end(hs_csv *r) {
  hs_error err = {0};
  cr_expect_eq(hs_csv_next(r, &err), 0, "%s", err.msg);
}

Test(csv, rfc4180_quoting) {
  hs_csv *r = open_text("a,\"b,c\",\"say \"\"hi\"\"\"\n"
                        "\"two\nlines\",,\"\"\r\n"
                        "last,x",
                        0);
  REC(r, 1, "a", "b,c", "say \"hi\"");
  cr_expect(!hs_csv_quoted(r, 0) && hs_csv_quoted(r, 1));
  REC(r, 2, "two\nlines", "", "");
  cr_expect(hs_csv_terminated(r));
  REC(r, 4, "last", "x");
  cr_expect(!hs_csv_terminated(r), "no line end at the end of the text");
  cr_expect_eq(hs_csv_lines(r), 4);
  expect_end(r);
  hs_csv_destroy(r);
}

Test(csv, raw_text_and_offsets) {
  const char *text = "h1,h2\r\n1,\"2\"\n";
  hs_csv *r = open_text(text, 0);
  hs_error err = {0};
  cr_assert_eq(hs_csv_next(r, &err), 1);
  size_t n;
  const char *raw = hs_csv_raw(r, &n);
  cr_expect_eq(n, 5);
  cr_expect_eq(strncmp(raw, "h1,h2", 5), 0);
  cr_expect_eq(hs_csv_end_offset(r), 7);
  cr_assert_eq(hs_csv_next(r, &err), 1);
  raw = hs_csv_raw(r, &n);
  cr_expect_eq(n, 5);
  cr_expect_eq(hs_csv_end_offset(r), strlen(text));
  hs_csv_destroy(r);
}

Test(csv, flags_blank_comments_trim) {
  const char *text = "\xEF\xBB\xBF# comment\n  \n time_s , \"speed\" \n\t\n0, 1\n  # indented\n";
  hs_csv *r = open_text(text, HS_CSV_SKIP_BLANK | HS_CSV_COMMENTS | HS_CSV_TRIM);
  REC(r, 3, "time_s", "speed");
  REC(r, 5, "0", "1");
  expect_end(r);
  cr_expect_eq(hs_csv_lines(r), 6);
  hs_csv_destroy(r);
  /* Without flags, the same lines are records, spaces kept. */
  r = open_text("# c\n \n a ,b\n", 0);
  REC(r, 1, "# c");
  REC(r, 2, " ");
  REC(r, 3, " a ", "b");
  expect_end(r);
  hs_csv_destroy(r);
  r = open_text("", 0);
  expect_end(r);
  cr_expect_eq(hs_csv_lines(r), 0);
  hs_csv_destroy(r);
}

Test(csv, skip_line_and_header) {
  hs_csv *r = open_text("# free \"text\", | here\nb,a,c\n2,1,3\n", 0);
  hs_csv_skip_line(r);
  hs_error err = {0};
  cr_assert_eq(hs_csv_next(r, &err), 1);
  size_t col[2];
  cr_assert_eq(hs_csv_header(r, (const char *const[]){"a", "c"}, 2, col, &err), HS_OK);
  cr_expect_eq(col[0], 1);
  cr_expect_eq(col[1], 2);
  cr_expect_eq(hs_csv_find(r, "b"), 0);
  cr_expect_eq(hs_csv_find(r, "z"), -1);
  cr_expect_eq(hs_csv_header(r, (const char *const[]){"a", "z"}, 2, col, &err), HS_EMISSING);
  cr_expect_str_eq(err.msg, "t.csv: line 2: header: no column \"z\" (expected a,z)");
  REC(r, 3, "2", "1", "3");
  hs_csv_destroy(r);
  r = open_text("a,b,a\n", 0);
  cr_assert_eq(hs_csv_next(r, &err), 1);
  cr_expect_eq(hs_csv_header(r, (const char *const[]){"b", "a"}, 2, col, &err), HS_EINVAL);
  cr_expect_str_eq(err.msg, "t.csv: line 1: header: column \"a\" appears twice");
  hs_csv_destroy(r);
}

static void expect_error(const char *text, const char *want) {
  hs_error err = {0};
  hs_csv *r = hs_csv_create(text, strlen(text), "t.csv", 0, &err);
  cr_assert_not_null(r);
  int k;
  while ((k = hs_csv_next(r, &err)) > 0) continue;
  cr_expect_eq(k, -1, "%s accepted", text);
  cr_expect_str_eq(err.msg, want);
  cr_expect_eq(hs_csv_next(r, &err), 0, "nothing after an error");
  hs_csv_destroy(r);
}

Test(csv, errors_name_line_and_column) {
  expect_error("a,b\n1,\"2\n3\n", "t.csv: line 2: column 2: a quoted field is never closed");
  expect_error("a\n\"x\"y\n",
               "t.csv: line 2: column 1: text after a closing quote (a quote inside a field is "
               "written \"\")");
  expect_error("a,b\n\"multi\nline\",x\"y\n",
               "t.csv: line 3: column 2: a quote inside an unquoted field (quote the whole field "
               "and write the quote as \"\")");
}

Test(csv, nul_byte_names_its_line) {
  static const char text[] = "a,b\n1,2\n3,\0\n";
  hs_error err = {0};
  cr_expect_null(hs_csv_create(text, sizeof text - 1, "t.csv", 0, &err));
  cr_expect_eq(err.status, HS_EPARSE);
  cr_expect_str_eq(err.msg, "t.csv: line 3: contains a NUL byte");
}

Test(csv, long_records_and_many_fields) {
  /* 1000 fields of 100 bytes: the buffers grow past their first sizes */
  size_t n = 1000, w = 100;
  char *text = malloc(n * (w + 1) + 2);
  char *p = text;
  for (size_t i = 0; i < n; i++) {
    memset(p, 'a' + (char)(i % 26), w);
    p += w;
    *p++ = i + 1 < n ? ',' : '\n';
  }
  *p = '\0';
  hs_csv *r = open_text(text, 0);
  hs_error err = {0};
  cr_assert_eq(hs_csv_next(r, &err), 1);
  cr_assert_eq(hs_csv_nfields(r), n);
  for (size_t i = 0; i < n; i += 97) {
    cr_expect_eq(strlen(hs_csv_field(r, i)), w);
    cr_expect_eq(hs_csv_field(r, i)[0], 'a' + (char)(i % 26));
  }
  hs_csv_destroy(r);
  free(text);
}
