/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_csv.h: the one CSV reader behind every simulator-side CSV input
 * (telemetry replay, speed traces, sweep resume, plot inputs).
 *
 * Text is RFC 4180: records end with "\n" or "\r\n" (the last one may end at
 * the end of the text), fields are separated by ',', and a field that starts
 * with '"' is quoted: it may hold ',', line ends and '""' (one '"'). A quote
 * inside an unquoted field, text after a closing quote and a quote that never
 * closes are errors. A UTF-8 byte-order mark before the first record is
 * skipped. A NUL byte anywhere refuses the whole text, with its line
 * ("<origin>: line N: contains a NUL byte"): a file that a crash left
 * zero-filled must not be read as a shorter valid one.
 *
 * Options (flags), for the formats that had them before the reader existed:
 *   HS_CSV_SKIP_BLANK  records that are empty or only spaces and tabs are skipped
 *   HS_CSV_COMMENTS    lines whose first non-blank character is '#' are skipped
 *   HS_CSV_TRIM        spaces and tabs around each field (outside quotes) are dropped
 *
 * Columns are found by header name (hs_csv_header), so a file may order its
 * columns freely. Messages follow hs_status.h: "<origin>: line N: <reason>";
 * N is the line on which the record starts (a quoted field may span lines).
 *
 * Usage:
 *   hs_csv *r = hs_csv_create(text, len, path, HS_CSV_SKIP_BLANK, err);
 *   int k = hs_csv_next(r, err);            // 1 record, 0 end, -1 error
 *   ... hs_csv_header(r, names, n, col, err) on the first record ...
 *   while ((k = hs_csv_next(r, err)) > 0) use hs_csv_field(r, col[i]);
 *   hs_csv_destroy(r);
 * The reader borrows text (it must outlive the reader) and owns the field
 * copies, which stay valid until the next hs_csv_next. O(bytes) in all. */
#ifndef HS_CSV_H
#define HS_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "base/hs_status.h"

enum {
  HS_CSV_SKIP_BLANK = 1u << 0,
  HS_CSV_COMMENTS = 1u << 1,
  HS_CSV_TRIM = 1u << 2,
};

typedef struct hs_csv hs_csv;

/* NULL (with the NUL-byte message) when text[0..len) holds a NUL byte. */
hs_csv *hs_csv_create(const char *text, size_t len, const char *origin, unsigned flags,
                      hs_error *err);
void hs_csv_destroy(hs_csv *r); /* NULL is fine */

/* Advance to the next record: 1 when there is one, 0 at the end of the text,
 * -1 on a quoting error (message in err). */
int hs_csv_next(hs_csv *r, hs_error *err);
/* Skip one line as it is, unparsed (a format's first line that is not CSV,
 * such as the sweep file's "# hetsim sweep v1 | ..." record). */
void hs_csv_skip_line(hs_csv *r);

size_t hs_csv_nfields(const hs_csv *r);
/* Field i (< nfields) of the current record, unquoted, NUL-terminated. */
const char *hs_csv_field(const hs_csv *r, size_t i);
/* Was field i written in quotes? ("" quoted is not the same as empty for some formats.) */
bool hs_csv_quoted(const hs_csv *r, size_t i);
/* The line on which the current record starts (1-based). */
size_t hs_csv_line(const hs_csv *r);
/* Lines read so far: the last line of the current record, or at the end of
 * the text the number of lines it has (0 for an empty text). */
size_t hs_csv_lines(const hs_csv *r);
/* The current record as written: its first byte and its length without the
 * line end. */
const char *hs_csv_raw(const hs_csv *r, size_t *len);
/* Byte offset just past the current record, its line end included. */
size_t hs_csv_end_offset(const hs_csv *r);
/* Did the current record end with a line end (false: it ran to the end of
 * the text, as a line torn by a crash does)? */
bool hs_csv_terminated(const hs_csv *r);

/* Column of `name` in the current record (read as a header), or -1. */
long hs_csv_find(const hs_csv *r, const char *name);
/* Maps each of the n names to its column in the current record (the header):
 * col[i] = column of names[i]. Errors: "<origin>: line N: header: no column
 * \"x\" (expected a,b,c)" (HS_EMISSING) and "...: header: column \"x\" appears
 * twice" (HS_EINVAL). Columns not named are left to the caller (extra
 * columns are allowed). */
hs_status hs_csv_header(const hs_csv *r, const char *const *names, size_t n, size_t *col,
                        hs_error *err);

#endif
