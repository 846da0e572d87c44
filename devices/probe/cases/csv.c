/* csv.c: the ERA5 CSV reader's case (CRLF, exponents, bad rows). */
#include "cases.h"

/* ------------------------------------------------------------------- CSV */
PROBE_CASE_FN(csv, parse) {
  (void)tmp;
  const char *ok = "time,t2m,u10\r\n2020-01-01T00:00,280.5,1.5\r\n2020-01-01T01:00,281,-2e-1\r\n";
  lrn_table t;
  hs_error e = {HS_OK, ""};
  CHECK(lrn_csv_parse(ok, strlen(ok), &t, &e) == HS_OK, "valid CSV rejected: %s", e.msg);
  bool good = t.rows == 2 && t.cols == 2 && lrn_table_col(&t, "u10") == 1 && t.v[3] == -0.2 && t.v[0] == 280.5;
  lrn_table_fini(&t);
  CHECK(good, "values or columns wrong");
  const char *bad = "time,t2m,u10\n2020-01-01T00:00,280.5,1.5\n2020-01-01T01:00,28x1,2\n";
  CHECK(lrn_csv_parse(bad, strlen(bad), &t, &e) == HS_EPARSE && strstr(e.msg, "line 3") &&
            strstr(e.msg, "column t2m") && strstr(e.msg, "offset 57"),
        "bad number: \"%s\"", e.msg);
  const char *shortrow = "time,t2m,u10\n2020,1\n";
  CHECK(lrn_csv_parse(shortrow, strlen(shortrow), &t, &e) == HS_EPARSE && strstr(e.msg, "line 2"),
        "short row: \"%s\"", e.msg);
  const char *longrow = "time,t2m\n2020,1,2\n";
  CHECK(lrn_csv_parse(longrow, strlen(longrow), &t, &e) == HS_EPARSE && strstr(e.msg, "more fields"),
        "long row: \"%s\"", e.msg);
  const char *nan = "time,t2m\n2020,nan\n";
  CHECK(lrn_csv_parse(nan, strlen(nan), &t, &e) == HS_EPARSE, "NaN accepted");
  return true;
}
