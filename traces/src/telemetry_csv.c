/* telemetry_csv.c: the replay CSV reader.
 *
 * One pass over the whole file held in memory (hs_read_file), record by
 * record through hs_csv (RFC 4180; columns by header name; NUL bytes refused
 * with their line before anything is parsed). Values go into growing row-major
 * arrays (doubling: amortised O(1) per row). Invariants while reading: the
 * first round's names are the device list; in every later round the j-th row
 * names device j; each round block is complete before the next begins. Device
 * names of the first round are checked for duplicates once, by sorting an index
 * (O(n log n), once); later rounds compare by position (O(1) per row), which is
 * why the format requires the first round's order. Rejected: a hash map that
 * would allow any order per round (more code, and replay output follows the
 * first round's order anyway). The comm_s column is optional (files from
 * before it, and from a runtime that does not time its link, stay valid):
 * t->comm_s is NULL without it. */
#include "traces/hs_telemetry_csv.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "traces/hs_csv.h"
#include "base/hs_util.h"

#define HEADER "round,device,time_s,energy_j,samples"

void hs_telemetry_csv_destroy(hs_telemetry_csv *t) {
  if (!t) return;
  for (size_t i = 0; i < t->ndevices; i++) hs_free(t->devices[i]);
  hs_free(t->devices);
  hs_free(t->rounds);
  hs_free(t->time_s);
  hs_free(t->energy_j);
  hs_free(t->samples);
  hs_free(t->comm_s);
  hs_free(t);
}

/* 1: ok; 0: not a non-negative integer; -1: digits only, but above UINT64_MAX. */
static int parse_u64(const char *s, uint64_t *out) { return hs_parse_count(s, out); }

static bool parse_double(const char *s, double *out) {
  if (!*s) return false;
  char *end;
  /* errno is not consulted: strtod sets ERANGE for a subnormal result too
   * (1e-310 is a finite number), and overflow shows as an infinity */
  double v = strtod(s, &end);
  if (*end || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* Only a quoted name can hold a line break; replay output and messages are
 * line-based, so it is refused (other bytes were always accepted). */
static bool has_line_break(const char *s) { return strpbrk(s, "\r\n") != NULL; }

/* Sorted index over the names; neighbours equal => duplicate. */
typedef struct name_ref {
  const char *s;
  size_t line_pos;
} name_ref;

static int cmp_ref(const void *a, const void *b) {
  const name_ref *x = a, *y = b;
  int c = strcmp(x->s, y->s);
  if (c) return c;
  return (x->line_pos > y->line_pos) - (x->line_pos < y->line_pos);
}

static hs_status check_unique(const hs_telemetry_csv *t, const char *name, hs_error *err) {
  size_t n = t->ndevices;
  name_ref *r = hs_calloc(n, sizeof *r);
  for (size_t i = 0; i < n; i++) r[i] = (name_ref){t->devices[i], i};
  qsort(r, n, sizeof *r, cmp_ref);
  for (size_t i = 1; i < n; i++) {
    if (!strcmp(r[i].s, r[i - 1].s)) {
      /* rows of the first round are lines 2.. (blank lines aside) */
      hs_error_set(err, HS_EINVAL, "%s: round %llu: device: \"%s\" appears twice (rows %zu and %zu of the round)",
                   name, (unsigned long long)t->rounds[0], r[i].s, r[i - 1].line_pos + 1,
                   r[i].line_pos + 1);
      hs_free(r);
      return HS_EINVAL;
    }
  }
  hs_free(r);
  return HS_OK;
}

static const char *const fields[] = {"round", "device", "time_s", "energy_j", "samples",
                                     "comm_s"};

hs_telemetry_csv *hs_telemetry_csv_parse(const char *text, size_t len, const char *name,
                                         hs_error *err) {
  hs_csv *r = hs_csv_create(text, len, name, HS_CSV_SKIP_BLANK, err);
  if (!r) return NULL;
  hs_telemetry_csv *t = hs_calloc(1, sizeof *t);
  size_t cap_rows = 0, nrows = 0, cap_dev = 0, cap_rounds = 0;
  size_t row_in_round = 0, col[6], ncols = 0;
  char *hdr = NULL; /* the header as written, for messages */
  int k = hs_csv_next(r, err);
  if (k < 0) goto fail;
  if (k == 0) {
    if (hs_csv_lines(r) == 0)
      hs_error_set(err, HS_EPARSE, "%s: line 1: header: file is empty, expected \"%s\"", name,
                   HEADER);
    else
      hs_error_set(err, HS_EPARSE, "%s: line %zu: header: only blank lines, expected \"%s\"",
                   name, hs_csv_lines(r), HEADER);
    goto fail;
  }
  if (hs_csv_header(r, fields, 5, col, err) != HS_OK) goto fail;
  /* comm_s is optional: files written before it (and by runtimes without a
   * link clock) stay valid; with it, it is checked like time_s */
  bool has_comm = hs_csv_find(r, fields[5]) >= 0;
  if (has_comm && hs_csv_header(r, fields + 5, 1, col + 5, err) != HS_OK) goto fail;
  ncols = hs_csv_nfields(r);
  size_t hlen;
  const char *h = hs_csv_raw(r, &hlen);
  if (hlen > 200) hlen = 200;
  hdr = hs_malloc(hlen + 1);
  memcpy(hdr, h, hlen);
  hdr[hlen] = '\0';
  while ((k = hs_csv_next(r, err)) > 0) {
    size_t lineno = hs_csv_line(r), nf = hs_csv_nfields(r);
    if (nf != ncols) {
      if (nf > ncols)
        hs_error_set(err, HS_EPARSE, "%s: line %zu: more than %zu fields, expected %s", name,
                     lineno, ncols, hdr);
      else
        hs_error_set(err, HS_EPARSE, "%s: line %zu: %zu fields, expected %zu: %s", name, lineno,
                     nf, ncols, hdr);
      goto fail;
    }
    const char *f[6];
    for (size_t c = 0; c < (has_comm ? 6u : 5u); c++) f[c] = hs_csv_field(r, col[c]);
    uint64_t round, samples;
    double ts, ej, cs = 0;
    char q[HS_QUOTE_BUF], q2[HS_QUOTE_BUF]; /* input quoted in a message: one line, cut short */
    int ok = parse_u64(f[0], &round);
    if (ok <= 0) {
      if (ok < 0)
        hs_error_set(err, HS_ERANGE, "%s: line %zu: round: %s is too large (at most %llu)", name,
                     lineno, f[0], (unsigned long long)UINT64_MAX);
      else
        hs_error_set(err, HS_EPARSE, "%s: line %zu: round: \"%s\" is not a non-negative integer",
                     name, lineno, hs_quote(q, sizeof q, f[0]));
      goto fail;
    }
    if (!f[1][0] || has_line_break(f[1])) {
      hs_error_set(err, HS_EPARSE, "%s: line %zu: device: %s", name, lineno,
                   f[1][0] ? "a line break in the name" : "empty name");
      goto fail;
    }
    for (int c = 2; c <= 5; c++) {
      if (c == 4 || (c == 5 && !has_comm)) continue;
      double *dst = c == 2 ? &ts : c == 3 ? &ej : &cs;
      if (!parse_double(f[c], dst)) {
        hs_error_set(err, HS_EPARSE, "%s: line %zu: %s: \"%s\" is not a finite number", name,
                     lineno, fields[c], hs_quote(q, sizeof q, f[c]));
        goto fail;
      }
      if (*dst < 0) {
        hs_error_set(err, HS_ERANGE, "%s: line %zu: %s: %s is negative", name, lineno,
                     fields[c], f[c]);
        goto fail;
      }
    }
    ok = parse_u64(f[4], &samples);
    if (ok <= 0 || samples > INT64_MAX) {
      if (ok != 0)
        hs_error_set(err, HS_ERANGE, "%s: line %zu: samples: %s is too large (at most %lld)", name,
                     lineno, f[4], (long long)INT64_MAX);
      else
        hs_error_set(err, HS_EPARSE,
                     "%s: line %zu: samples: \"%s\" is not a non-negative integer", name, lineno,
                     hs_quote(q, sizeof q, f[4]));
      goto fail;
    }
    /* round structure */
    bool new_round = t->nrounds == 0 || round != t->rounds[t->nrounds - 1];
    if (new_round) {
      if (t->nrounds > 0) {
        if (round < t->rounds[t->nrounds - 1]) {
          hs_error_set(err, HS_EINVAL,
                       "%s: line %zu: round: %llu after round %llu (rounds must increase, one "
                       "block per round)",
                       name, lineno, (unsigned long long)round,
                       (unsigned long long)t->rounds[t->nrounds - 1]);
          goto fail;
        }
        if (t->nrounds == 1 && check_unique(t, name, err) != HS_OK) goto fail;
        if (row_in_round != t->ndevices) {
          hs_error_set(err, HS_EINVAL,
                       "%s: line %zu: round %llu has %zu rows, expected %zu (one per device)",
                       name, lineno, (unsigned long long)t->rounds[t->nrounds - 1],
                       row_in_round, t->ndevices);
          goto fail;
        }
      }
      if (t->nrounds == cap_rounds) {
        cap_rounds = cap_rounds ? 2 * cap_rounds : 16;
        t->rounds = hs_reallocarray(t->rounds, cap_rounds, sizeof *t->rounds);
      }
      t->rounds[t->nrounds++] = round;
      row_in_round = 0;
    }
    if (t->nrounds == 1) {
      if (t->ndevices == cap_dev) {
        cap_dev = cap_dev ? 2 * cap_dev : 16;
        t->devices = hs_reallocarray(t->devices, cap_dev, sizeof *t->devices);
      }
      t->devices[t->ndevices++] = hs_strdup(f[1]);
    } else {
      if (row_in_round >= t->ndevices) {
        hs_error_set(err, HS_EINVAL,
                     "%s: line %zu: round %llu has more than %zu rows (one per device)", name,
                     lineno, (unsigned long long)round, t->ndevices);
        goto fail;
      }
      if (strcmp(f[1], t->devices[row_in_round]) != 0) {
        hs_error_set(err, HS_EINVAL,
                     "%s: line %zu: device: \"%s\" where \"%s\" was expected (every round lists "
                     "the devices in the first round's order)",
                     name, lineno, hs_quote(q, sizeof q, f[1]),
                     hs_quote(q2, sizeof q2, t->devices[row_in_round]));
        goto fail;
      }
    }
    if (nrows == cap_rows) {
      cap_rows = cap_rows ? 2 * cap_rows : 64;
      t->time_s = hs_reallocarray(t->time_s, cap_rows, sizeof *t->time_s);
      t->energy_j = hs_reallocarray(t->energy_j, cap_rows, sizeof *t->energy_j);
      t->samples = hs_reallocarray(t->samples, cap_rows, sizeof *t->samples);
      if (has_comm) t->comm_s = hs_reallocarray(t->comm_s, cap_rows, sizeof *t->comm_s);
    }
    t->time_s[nrows] = ts;
    t->energy_j[nrows] = ej;
    t->samples[nrows] = (int64_t)samples;
    if (has_comm) t->comm_s[nrows] = cs;
    nrows++;
    row_in_round++;
  }
  if (k < 0) goto fail;
  size_t lineno = hs_csv_lines(r);
  if (t->nrounds == 0) {
    hs_error_set(err, HS_EMISSING, "%s: line %zu: no data rows after the header", name, lineno);
    goto fail;
  }
  if (t->nrounds == 1 && check_unique(t, name, err) != HS_OK) goto fail;
  if (row_in_round != t->ndevices) {
    hs_error_set(err, HS_EINVAL, "%s: line %zu: round %llu has %zu rows, expected %zu (one per device)",
                 name, lineno, (unsigned long long)t->rounds[t->nrounds - 1], row_in_round,
                 t->ndevices);
    goto fail;
  }
  hs_free(hdr);
  hs_csv_destroy(r);
  return t;
fail:
  hs_free(hdr);
  hs_csv_destroy(r);
  hs_telemetry_csv_destroy(t);
  return NULL;
}

hs_telemetry_csv *hs_telemetry_csv_load(const char *path, hs_error *err) {
  size_t len = 0;
  char *text = hs_read_file(path, &len, err);
  if (!text) return NULL;
  hs_telemetry_csv *t = hs_telemetry_csv_parse(text, len, path, err);
  hs_free(text);
  return t;
}
