/* test_columns.c: CSV files from column tables (traces/hs_columns.h): the
 * header and rows are the table's, every type prints as printf would, a long
 * string is written whole, the reference escapes table cells, and an
 * optional group's columns appear only when the writer names the group. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/hs_columns.h"

typedef struct row {
  uint32_t a;
  uint64_t b;
  size_t c;
  bool d;
  double e, f;
  const char *g;
} row;

static double twice_e(const void *r) { return 2 * ((const row *)r)->e; }

static const hs_column cols[] = {
    {"a", "1", "u32", HS_COL_U32, offsetof(row, a), NULL, 0},
    {"b", "1", "u64", HS_COL_U64, offsetof(row, b), NULL, 0},
    {"c", "1", "size", HS_COL_SIZE, offsetof(row, c), NULL, 0},
    {"d", "1", "bool", HS_COL_BOOL, offsetof(row, d), NULL, 0},
    {"e", "s", "f64", HS_COL_F64, offsetof(row, e), NULL, 0},
    {"f", "s", "f64 or empty | piped", HS_COL_F64_OR_EMPTY, offsetof(row, f), NULL, 0},
    {"e2", "s", "derived", HS_COL_F64, 0, twice_e, 0},
    {"g", "-", "string", HS_COL_STR, offsetof(row, g), NULL, 0},
};
static const hs_csv_table table = {"x.csv", "tests", HS_COLUMNS(cols)};

/* What f held after fn wrote to it. */
static char *written(void (*fn)(FILE *, const void *), const void *arg) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_not_null(f);
  fn(f, arg);
  fclose(f);
  return buf;
}

static void header(FILE *f, const void *arg) { (void)arg, hs_csv_write_header(f, &table); }
static void one_row(FILE *f, const void *arg) { hs_csv_write_row(f, &table, arg); }
static void reference(FILE *f, const void *arg) { (void)arg, hs_csv_write_reference(f, &table); }

Test(columns, header_and_rows_as_printf_would) {
  char *h = written(header, NULL);
  cr_expect_str_eq(h, "a,b,c,d,e,f,e2,g\n");
  free(h);
  row r = {4294967295u, UINT64_MAX, 0, true, 0.1, NAN, "dev-1"};
  char *got = written(one_row, &r);
  cr_expect_str_eq(got, "4294967295,18446744073709551615,0,1,0.1,,0.2,dev-1\n");
  free(got);
  row z = {0, 10, 1234567, false, NAN, -1.5e-300, NULL};
  got = written(one_row, &z);
  cr_expect_str_eq(got, "0,10,1234567,0,nan,-1.5e-300,nan,\n");
  free(got);
}

/* A string longer than the line buffer is written whole, in place. */
Test(columns, long_string_whole) {
  size_t n = 5000;
  char *s = malloc(n + 1);
  memset(s, 'x', n);
  s[n] = '\0';
  row r = {1, 2, 3, false, 1, 2, s};
  char *got = written(one_row, &r);
  cr_expect_eq(strlen(got), strlen("1,2,3,0,1,2,2,") + n + 1);
  cr_expect(!strncmp(got, "1,2,3,0,1,2,2,xxx", 17));
  cr_expect_eq(got[strlen(got) - 1], '\n');
  free(got);
  free(s);
}

Test(columns, reference_escapes_cells) {
  char *got = written(reference, NULL);
  cr_expect(strstr(got, "## x.csv\n\ntests\n") != NULL, "%s", got);
  cr_expect(strstr(got, "| `f` | s | f64 or empty \\| piped |\n") != NULL, "%s", got);
  free(got);
}

/* Optional columns (HS_COL_METER), first and in the middle: absent from the
 * header and the rows without the group, so the plain file keeps its bytes;
 * in the table's order with it; marked in the reference. */
static const hs_column opt_cols[] = {
    {"m0", "J", "meter first", HS_COL_F64, offsetof(row, f), NULL, HS_COL_METER},
    {"a", "1", "u32", HS_COL_U32, offsetof(row, a), NULL, 0},
    {"m1", "J", "meter middle", HS_COL_F64, offsetof(row, e), NULL, HS_COL_METER},
    {"b", "1", "u64", HS_COL_U64, offsetof(row, b), NULL, 0},
};
static const hs_csv_table opt_table = {"o.csv", "tests", HS_COLUMNS(opt_cols)};
static void opt_header(FILE *f, const void *g) {
  hs_csv_write_header_with(f, &opt_table, *(const unsigned *)g);
}
static const row opt_row = {7, 8, 0, false, 0.5, 0.25, NULL};
static void opt_one_row(FILE *f, const void *g) {
  hs_csv_write_row_with(f, &opt_table, &opt_row, *(const unsigned *)g);
}
static void opt_plain(FILE *f, const void *arg) { (void)arg, hs_csv_write_row(f, &opt_table, &opt_row); }
static void opt_reference(FILE *f, const void *arg) {
  (void)arg, hs_csv_write_reference(f, &opt_table);
}

Test(columns, optional_group_only_when_named) {
  const unsigned none = 0, meter = HS_COL_METER, other = 2u;
  char *got = written(opt_header, &none);
  cr_expect_str_eq(got, "a,b\n");
  free(got);
  got = written(opt_header, &other); /* another group's bit: still not written */
  cr_expect_str_eq(got, "a,b\n");
  free(got);
  got = written(opt_header, &meter);
  cr_expect_str_eq(got, "m0,a,m1,b\n");
  free(got);
  got = written(opt_one_row, &none);
  cr_expect_str_eq(got, "7,8\n");
  free(got);
  got = written(opt_plain, NULL);
  cr_expect_str_eq(got, "7,8\n");
  free(got);
  got = written(opt_one_row, &meter);
  cr_expect_str_eq(got, "0.25,7,0.5,8\n");
  free(got);
  got = written(opt_reference, NULL);
  cr_expect(strstr(got, "| `m1` | J | (with `report.meter_scopes`) meter middle |\n") != NULL, "%s",
            got);
  cr_expect(strstr(got, "| `a` | 1 | u32 |\n") != NULL, "%s", got);
  free(got);
}
