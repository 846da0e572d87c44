/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_columns.h: a CSV file hetsim writes, described as a table of columns.
 *
 * A column is one line: its name, its unit, one line of doc, where its value
 * sits in the writer's row struct (offset and type, or a function of the
 * row), and how it is printed. The header, every row and the column
 * reference (`hetsim reference columns`, sim/doc/reference/columns.md) are
 * made from the same table, so a new column is one line (and the field in
 * the row struct that holds it). Every CSV of a run is written this way:
 * rounds.csv, devices.csv, device_profiles.csv, learning.csv (report.c) and
 * a regime's own tables (agc.csv).
 *
 * Numbers: integers in decimal, doubles with hs_fmt_double (the shortest
 * text that reads back to the same double); a non-finite double as "nan",
 * "inf", "-inf" (HS_COL_F64) or as an empty field (HS_COL_F64_OR_EMPTY).
 * Strings are written as they are: the scenario's names are plain
 * (A-Z a-z 0-9 _ -), so no quoting is needed; NULL is an empty field.
 *
 * Optional columns: a column with a `group` (HS_COL_METER) is written only
 * when the writer is given that group (the *_with functions); the plain
 * functions write the columns without a group, so a file's default columns
 * stay what the goldens pin. The reference marks an optional column with the
 * scenario key that asks for it. */
#ifndef HS_COLUMNS_H
#define HS_COLUMNS_H

#include <stddef.h>
#include <stdio.h>

typedef enum hs_col_type {
  HS_COL_U32,          /* uint32_t */
  HS_COL_U64,          /* uint64_t */
  HS_COL_SIZE,         /* size_t */
  HS_COL_BOOL,         /* bool, as 0 or 1 */
  HS_COL_F64,          /* double */
  HS_COL_F64_OR_EMPTY, /* double; empty when not finite */
  HS_COL_STR           /* const char * */
} hs_col_type;

typedef struct hs_column {
  const char *name;
  const char *unit; /* "s", "J", "1" (a count or a ratio), "-" (a name) */
  const char *doc;  /* one line */
  hs_col_type type;
  size_t offset;    /* of the value in the row struct */
  /* Doubles derived from the row (duration_s = end_s - start_s): when set,
   * the value is get(row) and offset is not read. */
  double (*get)(const void *row);
  /* 0: always written; else the optional group it belongs to (a bit below),
   * written only when the writer is given that group. Last, so the tables'
   * positional lines without it keep meaning "always". */
  unsigned group;
} hs_column;

/* The optional column groups, one bit each. */
#define HS_COL_METER 1u /* the meter scopes (report.meter_scopes) */

/* A file: its name in the run folder, when it is written, its columns. */
typedef struct hs_csv_table {
  const char *file;
  const char *when; /* one line: which runs write it, one row per what */
  const hs_column *cols;
  size_t ncols;
} hs_csv_table;

#define HS_COLUMNS(cols) (cols), (sizeof(cols) / sizeof((cols)[0]))

/* The header line: the names, ',' between, '\n' after. */
void hs_csv_write_header(FILE *f, const hs_csv_table *t);
/* One row read from `row` (a struct the table's offsets point into). */
void hs_csv_write_row(FILE *f, const hs_csv_table *t, const void *row);
/* The same, with the optional columns of `groups` (HS_COL_* bits) too, in
 * the table's order; groups 0 is the plain functions above. A file's header
 * and rows are written with the same groups. */
void hs_csv_write_header_with(FILE *f, const hs_csv_table *t, unsigned groups);
void hs_csv_write_row_with(FILE *f, const hs_csv_table *t, const void *row, unsigned groups);
/* The table as a Markdown section (the column reference): "## <file>", its
 * `when`, and one table row per column (name, unit, meaning). */
void hs_csv_write_reference(FILE *f, const hs_csv_table *t);
/* s as the text of a Markdown table cell ('|' escaped); NULL: nothing. */
void hs_md_cell(FILE *f, const char *s);

#endif
