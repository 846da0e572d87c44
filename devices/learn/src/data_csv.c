/* data_csv.c: the era5 trainer's CSV extract.
 *
 * Format (documented in README, section probe): a header line of column names;
 * a column named `time` (any text, e.g. 2020-01-01T00:00) is skipped; every
 * other column is a finite number in every row. One grid point, hourly rows in
 * time order, e.g. `time,t2m,u10,v10,msl,tp` as exported from an ERA5 NetCDF
 * with xarray's to_dataframe().to_csv(). Commas separate, no quoting (ERA5
 * values never need it), CRLF accepted, a final newline optional.
 * Data structure: one row-major double matrix, grown geometrically.
 * Errors name the line, the column and the byte offset. */
#include "learn/hs_learn_parts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lrn_table_fini(lrn_table *t) {
  for (size_t i = 0; i < t->cols; i++) free(t->names[i]);
  free(t->names);
  free(t->v);
  memset(t, 0, sizeof *t);
}

int lrn_table_col(const lrn_table *t, const char *name) {
  for (size_t i = 0; i < t->cols; i++)
    if (strcmp(t->names[i], name) == 0) return (int)i;
  return -1;
}

hs_status lrn_csv_parse(const char *text, size_t len, lrn_table *t, hs_error *err) {
  memset(t, 0, sizeof *t);
  size_t pos = 0, line = 1;
  /* A NUL byte (a zero-filled block after a crash) would cut a name or a
   * number short unseen: refuse it, with its line. */
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    size_t at = (size_t)(nul - text), nl = 1;
    for (const char *q = text; (q = memchr(q, '\n', (size_t)(nul - q))) != NULL; q++) nl++;
    return hs_error_set(err, HS_EPARSE, "line %zu (offset %zu): contains a NUL byte", nl, at);
  }
  /* header */
  size_t eol = pos;
  while (eol < len && text[eol] != '\n') eol++;
  if (eol == 0) return hs_error_set(err, HS_EPARSE, "line 1 (offset 0): empty header line");
  int time_col = -1, ncol_all = 0;
  size_t cap_names = 8;
  t->names = hs_calloc(cap_names, sizeof *t->names);
  size_t s = 0;
  for (size_t i = 0; i <= eol; i++) {
    if (i == eol || text[i] == ',') {
      size_t e = i;
      if (e > s && text[e - 1] == '\r') e--;
      if (e == s) {
        lrn_table_fini(t);
        return hs_error_set(err, HS_EPARSE, "line 1 (offset %zu): empty column name", s);
      }
      if (e - s == 4 && memcmp(text + s, "time", 4) == 0) {
        /* A second `time` column would leave the rows one value longer than
         * the columns counted here (found by fuzz_probe_csv). */
        if (time_col >= 0) {
          lrn_table_fini(t);
          return hs_error_set(err, HS_EPARSE, "line 1 (offset %zu): a second `time` column", s);
        }
        time_col = ncol_all;
      } else {
        if (t->cols == cap_names) {
          cap_names *= 2;
          t->names = hs_realloc(t->names, cap_names * sizeof *t->names);
        }
        char *nm = hs_malloc(e - s + 1);
        memcpy(nm, text + s, e - s);
        nm[e - s] = '\0';
        t->names[t->cols++] = nm;
      }
      ncol_all++;
      s = i + 1;
    }
  }
  if (t->cols == 0) {
    lrn_table_fini(t);
    return hs_error_set(err, HS_EPARSE, "line 1 (offset 0): no numeric column besides `time`");
  }
  size_t cap = 1024;
  t->v = hs_malloc(cap * t->cols * sizeof *t->v);
  pos = eol < len ? eol + 1 : len;
  while (pos < len) {
    line++;
    eol = pos;
    while (eol < len && text[eol] != '\n') eol++;
    size_t end = eol;
    if (end > pos && text[end - 1] == '\r') end--;
    if (end == pos) { /* blank line: only allowed at the very end */
      size_t k = eol;
      while (k < len && (text[k] == '\n' || text[k] == '\r')) k++;
      if (k == len) break;
      lrn_table_fini(t);
      return hs_error_set(err, HS_EPARSE, "line %zu (offset %zu): blank line inside the data", line, pos);
    }
    if (t->rows == cap) {
      cap *= 2;
      t->v = hs_realloc(t->v, cap * t->cols * sizeof *t->v);
    }
    double *row = t->v + t->rows * t->cols;
    size_t c = 0, f = pos;
    for (int col = 0; col < ncol_all; col++) {
      size_t fe = f;
      while (fe < end && text[fe] != ',') fe++;
      if (fe == end && col < ncol_all - 1) {
        lrn_table_fini(t);
        return hs_error_set(err, HS_EPARSE, "line %zu (offset %zu): %d fields, header has %d", line, fe,
                             col + 1, ncol_all);
      }
      if (col != time_col) {
        char num[64];
        size_t n = fe - f;
        char *stop = NULL;
        double v = NAN;
        if (n > 0 && n < sizeof num) {
          memcpy(num, text + f, n);
          num[n] = '\0';
          errno = 0;
          v = strtod(num, &stop);
        }
        if (n == 0 || n >= sizeof num || *stop != '\0' || !isfinite(v)) {
          /* quoted with hs_quote: a binary file's bytes print escaped, on one line */
          char name[HS_QUOTE_BUF], field[64], qf[HS_QUOTE_BUF];
          hs_quote(name, sizeof name, t->names[c]);
          snprintf(field, sizeof field, "%.*s", (int)(n > 30 ? 30 : n), text + f);
          lrn_table_fini(t);
          return hs_error_set(err, HS_EPARSE, "line %zu, column %s (offset %zu): not a finite number: \"%s\"",
                               line, name, f, hs_quote(qf, sizeof qf, field));
        }
        row[c++] = v;
      }
      f = fe + 1;
    }
    if (f <= end) {
      lrn_table_fini(t);
      return hs_error_set(err, HS_EPARSE, "line %zu (offset %zu): more fields than the header's %d", line,
                           f - 1, ncol_all);
    }
    t->rows++;
    pos = eol + 1;
  }
  if (t->rows == 0) {
    lrn_table_fini(t);
    return hs_error_set(err, HS_EPARSE, "line 2 (offset %zu): no data rows", len);
  }
  return HS_OK;
}

hs_status lrn_csv_load(const char *path, lrn_table *t, hs_error *err) {
  unsigned char *buf = NULL;
  size_t len = 0;
  memset(t, 0, sizeof *t);
  hs_status st = lrn_read_file(path, &buf, &len, err);
  if (st != HS_OK) return st;
  st = lrn_csv_parse((const char *)buf, len, t, err);
  free(buf);
  if (st != HS_OK) hs_error_prefix(err, "%s", path);
  return st;
}
