/* csv.c: the RFC 4180 record reader every simulator-side CSV input uses (see
 * hs_csv.h for the accepted text).
 *
 * Data: the borrowed text with a cursor, the current line number at the
 * cursor, and one growing buffer holding the current record's fields,
 * unquoted and each NUL-terminated, addressed by offsets (the buffer may move
 * while it grows). Invariants: between calls the cursor is at the start of a
 * line or at the end of the text; fields of the current record live in buf
 * at off[0..nf). Complexity: each byte is looked at a constant number of
 * times, so a text costs O(bytes) however it is split into records; the
 * buffer grows by doubling (amortised O(1) per byte) and is sized by the
 * longest record, not by the file.
 *
 * The NUL-byte check runs once, up front, on the whole text (memchr), so the
 * per-byte loop never has to think about it and no reader can forget it.
 * Rejected: handing out pointers into a modified copy of the text (the
 * old readers did this: it cannot unquote "" in place without shifting, and
 * every reader carried its own splitter); a callback-per-field API (the
 * readers check fields by column, which wants the whole record at once). */
#include "traces/hs_csv.h"

#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"

struct hs_csv {
  const char *text, *p, *end;
  const char *origin;
  unsigned flags;
  size_t line;          /* line number at p (1-based) */
  size_t rec_line;      /* line on which the current record starts */
  const char *rec;      /* the current record's first byte */
  size_t rec_len;       /* without its line end */
  bool terminated;      /* the current record ended with a line end */
  char *buf;            /* unquoted fields, each NUL-terminated */
  size_t blen, bcap;
  size_t *off;          /* field i starts at buf + off[i] */
  bool *quoted;
  size_t nf, fcap;
};

hs_csv *hs_csv_create(const char *text, size_t len, const char *origin, unsigned flags,
                      hs_error *err) {
  if (hs_text_check_nul(text, len, origin, err) != HS_OK) return NULL;
  hs_csv *r = hs_calloc(1, sizeof *r);
  r->text = r->p = text;
  r->end = text + len;
  r->origin = origin;
  r->flags = flags;
  r->line = 1;
  if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) r->p += 3; /* spreadsheet exports */
  r->bcap = 256;
  r->buf = hs_malloc(r->bcap);
  r->fcap = 8;
  r->off = hs_reallocarray(NULL, r->fcap, sizeof *r->off);
  r->quoted = hs_reallocarray(NULL, r->fcap, sizeof *r->quoted);
  return r;
}

void hs_csv_destroy(hs_csv *r) {
  if (!r) return;
  hs_free(r->buf);
  hs_free(r->off);
  hs_free(r->quoted);
  hs_free(r);
}

static void put(hs_csv *r, const char *s, size_t n) {
  if (r->blen + n + 1 > r->bcap) {
    while (r->blen + n + 1 > r->bcap) r->bcap *= 2;
    r->buf = hs_realloc(r->buf, r->bcap);
  }
  memcpy(r->buf + r->blen, s, n);
  r->blen += n;
}

static void begin_field(hs_csv *r, bool quoted) {
  if (r->nf == r->fcap) {
    r->fcap *= 2;
    r->off = hs_reallocarray(r->off, r->fcap, sizeof *r->off);
    r->quoted = hs_reallocarray(r->quoted, r->fcap, sizeof *r->quoted);
  }
  r->off[r->nf] = r->blen;
  r->quoted[r->nf] = quoted;
}

static void end_field(hs_csv *r) {
  put(r, "", 0);
  r->buf[r->blen++] = '\0';
  r->nf++;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* Skip the rest of the line at p, its line end included. */
static void skip_line(hs_csv *r) {
  const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
  if (nl) {
    r->p = nl + 1;
    r->line++;
  } else {
    r->p = r->end;
  }
}

void hs_csv_skip_line(hs_csv *r) {
  if (r->p < r->end) skip_line(r);
}

/* After a field: ',' (another field follows), a line end or the end of the
 * text (the record is complete). 1: another field; 0: record done. */
static int after_field(hs_csv *r, const char *q) {
  if (q < r->end && *q == ',') {
    r->p = q + 1;
    return 1;
  }
  const char *stop = q;
  if (q < r->end && *q == '\r' && q + 1 < r->end && q[1] == '\n') q++;
  if (q < r->end) { /* *q == '\n' (callers check) */
    r->rec_len = (size_t)(stop - r->rec);
    r->p = q + 1;
    r->line++;
    r->terminated = true;
  } else {
    r->rec_len = (size_t)(stop - r->rec);
    r->p = r->end;
    r->terminated = false;
  }
  return 0;
}

static int fail(hs_csv *r, hs_error *err, size_t line, const char *what) {
  hs_error_set(err, HS_EPARSE, "%s: line %zu: column %zu: %s", r->origin, line, r->nf + 1, what);
  r->p = r->end;
  r->nf = 0;
  return -1;
}

int hs_csv_next(hs_csv *r, hs_error *err) {
  for (;;) {
    r->nf = 0;
    r->blen = 0;
    if (r->p >= r->end) return 0;
    const char *q = r->p;
    while (q < r->end && is_blank(*q)) q++;
    bool blank = q == r->end || *q == '\n' || (*q == '\r' && q + 1 < r->end && q[1] == '\n');
    if (((r->flags & HS_CSV_COMMENTS) && q < r->end && *q == '#') ||
        ((r->flags & HS_CSV_SKIP_BLANK) && blank)) {
      skip_line(r);
      continue;
    }
    break;
  }
  r->rec = r->p;
  r->rec_line = r->line;
  bool trim = r->flags & HS_CSV_TRIM;
  for (;;) {
    const char *q = r->p;
    if (trim)
      while (q < r->end && is_blank(*q)) q++;
    if (q < r->end && *q == '"') {
      begin_field(r, true);
      size_t opened = r->line;
      for (q++;;) {
        const char *quote = memchr(q, '"', (size_t)(r->end - q));
        if (!quote) return fail(r, err, opened, "a quoted field is never closed");
        for (const char *nl = q; (nl = memchr(nl, '\n', (size_t)(quote - nl))) != NULL; nl++)
          r->line++;
        put(r, q, (size_t)(quote - q));
        q = quote + 1;
        if (q < r->end && *q == '"') { /* "" stands for one quote */
          put(r, "\"", 1);
          q++;
          continue;
        }
        break;
      }
      if (trim)
        while (q < r->end && is_blank(*q)) q++;
      end_field(r);
      bool ends = q == r->end || *q == ',' || *q == '\n' ||
                  (*q == '\r' && q + 1 < r->end && q[1] == '\n');
      if (!ends) {
        r->nf--;
        return fail(r, err, r->line, "text after a closing quote (a quote inside a field is written \"\")");
      }
    } else {
      begin_field(r, false);
      const char *s = q;
      while (q < r->end && *q != ',' && *q != '\n' && *q != '"') q++;
      if (q < r->end && *q == '"')
        return fail(r, err, r->line,
                    "a quote inside an unquoted field (quote the whole field and write the quote as \"\")");
      const char *e = q;
      if (q < r->end && *q == '\n' && e > s && e[-1] == '\r') {
        e--;
        q = e; /* after_field sees "\r\n" */
      }
      if (trim)
        while (e > s && is_blank(e[-1])) e--;
      put(r, s, (size_t)(e - s));
      end_field(r);
    }
    if (!after_field(r, q)) return 1;
  }
}

size_t hs_csv_nfields(const hs_csv *r) { return r->nf; }

const char *hs_csv_field(const hs_csv *r, size_t i) { return i < r->nf ? r->buf + r->off[i] : ""; }

bool hs_csv_quoted(const hs_csv *r, size_t i) { return i < r->nf && r->quoted[i]; }

size_t hs_csv_line(const hs_csv *r) { return r->rec_line; }

size_t hs_csv_lines(const hs_csv *r) {
  if (r->p == r->text) return 0;
  return r->p[-1] == '\n' ? r->line - 1 : r->line;
}

const char *hs_csv_raw(const hs_csv *r, size_t *len) {
  *len = r->rec ? r->rec_len : 0;
  return r->rec ? r->rec : r->text;
}

size_t hs_csv_end_offset(const hs_csv *r) { return (size_t)(r->p - r->text); }

bool hs_csv_terminated(const hs_csv *r) { return r->terminated; }

long hs_csv_find(const hs_csv *r, const char *name) {
  for (size_t i = 0; i < r->nf; i++)
    if (!strcmp(r->buf + r->off[i], name)) return (long)i;
  return -1;
}

hs_status hs_csv_header(const hs_csv *r, const char *const *names, size_t n, size_t *col,
                        hs_error *err) {
  for (size_t k = 0; k < n; k++) {
    long c = hs_csv_find(r, names[k]);
    if (c < 0) {
      char list[256];
      size_t used = 0;
      list[0] = '\0';
      for (size_t j = 0; j < n && used < sizeof list; j++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", j ? "," : "", names[j]);
      /* A header of another delimiter reads as one field holding them all. */
      char delim = 0;
      for (size_t i = 0; i < r->nf && !delim; i++)
        delim = strchr(r->buf + r->off[i], ';') ? ';' : strchr(r->buf + r->off[i], '\t') ? '\t' : 0;
      return hs_error_set(err, HS_EMISSING, "%s: line %zu: header: no column \"%s\" (expected %s)%s%s",
                          r->origin, r->rec_line, names[k], list,
                          delim ? "; the header is split by " : "",
                          delim == ';' ? "';': hetsim reads comma-separated files"
                          : delim ? "tabs: hetsim reads comma-separated files" : "");
    }
    for (size_t i = (size_t)c + 1; i < r->nf; i++)
      if (!strcmp(r->buf + r->off[i], names[k]))
        return hs_error_set(err, HS_EINVAL, "%s: line %zu: header: column \"%s\" appears twice",
                            r->origin, r->rec_line, names[k]);
    col[k] = (size_t)c;
  }
  return HS_OK;
}
