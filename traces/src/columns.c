/* columns.c: CSV files written from their column tables (hs_columns.h).
 *
 * A row is formatted into one line buffer and handed to stdio with a single
 * fwrite: the per-device files of a 10^6-device run write 10^6 rows a round,
 * and one call per row is cheaper than the fprintf/fputc per field this
 * replaces (no format string to parse). Integers are written by hand in
 * decimal (the same digits as "%u"/"%llu"), doubles by hs_fmt_double. A
 * string longer than the room left in the buffer is written around it
 * (names are short; nothing is cut). Rejected: generating a writer per file
 * with macros (a table is easier to read and to print as documentation).
 * A column of an optional group (hs_columns.h) is skipped unless the writer
 * names its group, in the header and in every row alike. */
#include "traces/hs_columns.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_fmt.h"

/* Room for a row of short fields; longer strings go around it. */
#define LINE_MAX_BYTES 1024

typedef struct line {
  FILE *f;
  char b[LINE_MAX_BYTES];
  size_t n;
} line;

static void flush(line *l) {
  fwrite(l->b, 1, l->n, l->f);
  l->n = 0;
}

/* Room for k more bytes, flushing first when needed. */
static char *room(line *l, size_t k) {
  if (l->n + k > sizeof l->b) flush(l);
  return l->b + l->n;
}

static void put_u64(line *l, uint64_t v) {
  char d[20];
  size_t k = 0;
  do {
    d[k++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  char *p = room(l, k);
  for (size_t i = 0; i < k; i++) p[i] = d[k - 1 - i];
  l->n += k;
}

static void put_f64(line *l, double v, bool empty_if_not_finite) {
  if (empty_if_not_finite && !isfinite(v)) return;
  char *p = room(l, HS_FMT_DOUBLE_MAX);
  l->n += hs_fmt_double(p, v);
}

static void put_str(line *l, const char *s) {
  if (!s) return;
  size_t k = strlen(s);
  if (k > sizeof l->b / 2) { /* not seen in practice: write it as it is */
    flush(l);
    fwrite(s, 1, k, l->f);
    return;
  }
  memcpy(room(l, k), s, k);
  l->n += k;
}

static void put_char(line *l, char c) {
  *room(l, 1) = c;
  l->n++;
}

/* An unsigned field of the row, whatever its width. */
static uint64_t read_uint(const char *p, hs_col_type type) {
  uint32_t u32;
  uint64_t u64;
  size_t sz;
  switch (type) {
    case HS_COL_U32: memcpy(&u32, p, sizeof u32); return u32;
    case HS_COL_SIZE: memcpy(&sz, p, sizeof sz); return sz;
    default: memcpy(&u64, p, sizeof u64); return u64;
  }
}

/* Whether column c is written under `groups`. */
static bool written(const hs_column *c, unsigned groups) { return !c->group || (c->group & groups); }

void hs_csv_write_header(FILE *f, const hs_csv_table *t) { hs_csv_write_header_with(f, t, 0); }

void hs_csv_write_header_with(FILE *f, const hs_csv_table *t, unsigned groups) {
  line l = {.f = f};
  bool first = true;
  for (size_t i = 0; i < t->ncols; i++) {
    if (!written(&t->cols[i], groups)) continue;
    if (!first) put_char(&l, ',');
    first = false;
    put_str(&l, t->cols[i].name);
  }
  put_char(&l, '\n');
  flush(&l);
}

void hs_csv_write_row(FILE *f, const hs_csv_table *t, const void *row) {
  hs_csv_write_row_with(f, t, row, 0);
}

void hs_csv_write_row_with(FILE *f, const hs_csv_table *t, const void *row, unsigned groups) {
  line l = {.f = f};
  const char *base = row;
  bool first = true;
  for (size_t i = 0; i < t->ncols; i++) {
    const hs_column *c = &t->cols[i];
    if (!written(c, groups)) continue;
    const char *p = base + c->offset;
    if (!first) put_char(&l, ',');
    first = false;
    switch (c->type) {
      case HS_COL_U32:
      case HS_COL_U64:
      case HS_COL_SIZE: put_u64(&l, read_uint(p, c->type)); break;
      case HS_COL_BOOL: {
        bool v;
        memcpy(&v, p, sizeof v);
        put_char(&l, v ? '1' : '0');
        break;
      }
      case HS_COL_F64:
      case HS_COL_F64_OR_EMPTY: {
        double v;
        if (c->get) v = c->get(row);
        else memcpy(&v, p, sizeof v);
        put_f64(&l, v, c->type == HS_COL_F64_OR_EMPTY);
        break;
      }
      case HS_COL_STR: {
        const char *s;
        memcpy(&s, p, sizeof s);
        put_str(&l, s);
        break;
      }
    }
  }
  put_char(&l, '\n');
  flush(&l);
}

void hs_md_cell(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '|') fputc('\\', f);
    fputc(*s, f);
  }
}

void hs_csv_write_reference(FILE *f, const hs_csv_table *t) {
  fprintf(f, "## %s\n\n%s\n\n| column | unit | meaning |\n|---|---|---|\n", t->file, t->when);
  for (size_t i = 0; i < t->ncols; i++) {
    fprintf(f, "| `%s` | %s | ", t->cols[i].name, t->cols[i].unit);
    if (t->cols[i].group & HS_COL_METER) fputs("(with `report.meter_scopes`) ", f);
    hs_md_cell(f, t->cols[i].doc);
    fputs(" |\n", f);
  }
  fputc('\n', f);
}
