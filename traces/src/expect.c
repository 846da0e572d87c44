/* expect.c: golden comparison of CSV and JSON outputs (see hs_expect.h).
 *
 * Both sides stream through one hs_csv reader each, in lock step: the first
 * record or cell that differs ends the walk, so a 10^6-row devices.csv that
 * differs on line 3 costs three records. Cells compare as text first (the
 * outputs print numbers with a fixed format, so equal runs give equal text);
 * only when the texts differ and rtol > 0 are both read as numbers.
 * Rejected: a byte diff (cmp) with a line number: it cannot name the column
 * nor loosen a tolerance, and it says nothing about which value moved.
 * JSON goes through cJSON (already a dependency of this library) and a
 * recursive walk; summary.json trees are small. */
#include "traces/hs_expect.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "traces/hs_csv.h"

static bool number(const char *s, double *v) {
  if (!*s) return false;
  char *end;
  *v = strtod(s, &end);
  return *end == '\0';
}

int hs_expect_cell_eq(const char *a, const char *b, double rtol) {
  if (!strcmp(a, b)) return 1;
  double x, y;
  if (!(rtol > 0) || !number(a, &x) || !number(b, &y)) return 0;
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (x == y) return 1;
  double scale = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
  return isfinite(scale) && fabs(x - y) <= rtol * scale;
}

/* Copy s into dst[cap], cut short when longer (messages quote at most cap - 1). */
static void put(char *dst, size_t cap, const char *s) {
  size_t n = strlen(s);
  if (n >= cap) n = cap - 1;
  memcpy(dst, s, n);
  dst[n] = '\0';
}

/* --- CSV --------------------------------------------------------------------- */

int hs_expect_csv(const char *gold, size_t glen, const char *gold_origin, const char *got,
                  size_t len, double rtol, hs_expect_diff *d, hs_error *err) {
  memset(d, 0, sizeof *d);
  hs_error e2 = {0};
  hs_csv *g = hs_csv_create(gold, glen, gold_origin, 0, err);
  if (!g) return HS_EXPECT_BAD;
  hs_csv *o = hs_csv_create(got, len, "output", 0, &e2);
  char **names = NULL;
  size_t nnames = 0;
  int rc = HS_EXPECT_SAME;
  if (!o) { /* the output holds a NUL byte: a difference at its start */
    d->line = 1;
    put(d->where, sizeof d->where, "(text)");
    put(d->want, sizeof d->want, "CSV text");
    put(d->got, sizeof d->got, e2.msg);
    rc = HS_EXPECT_DIFF;
    goto done;
  }
  for (size_t rec = 0;; rec++) {
    int kg = hs_csv_next(g, err);
    if (kg < 0) {
      rc = HS_EXPECT_BAD;
      break;
    }
    if (kg == 0 && rec == 0) { /* nothing to compare against: not a golden */
      hs_error_set(err, HS_EPARSE, "%s: empty: no header line (a malformed golden)", gold_origin);
      rc = HS_EXPECT_BAD;
      break;
    }
    if (kg && rec > 0 && hs_csv_nfields(g) != nnames) { /* the golden's own rows disagree */
      hs_error_set(err, HS_EPARSE, "%s: line %zu: %zu fields where its header has %zu (a malformed "
                   "golden)", gold_origin, hs_csv_line(g), hs_csv_nfields(g), nnames);
      rc = HS_EXPECT_BAD;
      break;
    }
    int ko = hs_csv_next(o, &e2);
    if (kg == 0 && ko == 0) break;
    d->record = rec;
    d->line = kg ? hs_csv_line(g) : 0;
    if (ko < 0) {
      put(d->where, sizeof d->where, "(record)");
      put(d->want, sizeof d->want, "a CSV record");
      put(d->got, sizeof d->got, e2.msg);
      rc = HS_EXPECT_DIFF;
      break;
    }
    if (kg == 0 || ko == 0) { /* one side ended */
      size_t rlen = 0;
      const char *raw = hs_csv_raw(kg ? g : o, &rlen);
      char text[200];
      snprintf(text, sizeof text, "%.*s", (int)(rlen < 190 ? rlen : 190), raw);
      put(d->where, sizeof d->where, "(record)");
      put(kg ? d->want : d->got, 256, text);
      put(kg ? d->got : d->want, 256, "(none: the file ends)");
      rc = HS_EXPECT_DIFF;
      break;
    }
    size_t ng = hs_csv_nfields(g), no = hs_csv_nfields(o);
    if (rec == 0) { /* the header names the columns of later messages */
      nnames = ng;
      names = hs_calloc(ng ? ng : 1, sizeof *names);
      for (size_t i = 0; i < ng; i++) names[i] = hs_strdup(hs_csv_field(g, i));
    }
    size_t n = ng > no ? ng : no;
    for (size_t i = 0; i < n; i++) {
      const char *a = i < ng ? hs_csv_field(g, i) : NULL;
      const char *b = i < no ? hs_csv_field(o, i) : NULL;
      if (a && b && hs_expect_cell_eq(a, b, rec == 0 ? 0 : rtol)) continue;
      if (rec == 0 || i >= nnames)
        snprintf(d->where, sizeof d->where, "column %zu", i + 1);
      else
        snprintf(d->where, sizeof d->where, "%s", names[i]);
      put(d->want, sizeof d->want, a ? a : "(none)");
      put(d->got, sizeof d->got, b ? b : "(none)");
      rc = HS_EXPECT_DIFF;
      break;
    }
    if (rc) break;
  }
done:
  for (size_t i = 0; i < nnames; i++) hs_free(names[i]);
  hs_free(names);
  hs_csv_destroy(o);
  hs_csv_destroy(g);
  return rc;
}

/* --- JSON -------------------------------------------------------------------- */

/* Short text of a JSON value (numbers as written by cJSON, %.17g). */
static void show(char *dst, size_t cap, const cJSON *v) {
  if (!v) {
    put(dst, cap, "(none)");
    return;
  }
  if (cJSON_IsString(v)) {
    snprintf(dst, cap, "\"%s\"", v->valuestring);
    return;
  }
  char *s = cJSON_PrintUnformatted(v);
  put(dst, cap, s ? s : "?");
  cJSON_free(s);
}

static bool walk(const cJSON *a, const cJSON *b, double rtol, const char *path, bool top,
                 const char *const *skip, size_t nskip, hs_expect_diff *d);

static bool differ(const cJSON *a, const cJSON *b, const char *path, hs_expect_diff *d) {
  put(d->where, sizeof d->where, *path ? path : "(top)");
  show(d->want, sizeof d->want, a);
  show(d->got, sizeof d->got, b);
  return false;
}

static bool skipped(const char *key, const char *const *skip, size_t nskip) {
  for (size_t i = 0; i < nskip; i++)
    if (!strcmp(key, skip[i])) return true;
  return false;
}

static bool walk_object(const cJSON *a, const cJSON *b, double rtol, const char *path, bool top,
                        const char *const *skip, size_t nskip, hs_expect_diff *d) {
  char sub[256];
  for (const cJSON *x = a->child; x; x = x->next) {
    if (top && skipped(x->string, skip, nskip)) continue;
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", x->string);
    if (!walk(x, cJSON_GetObjectItemCaseSensitive(b, x->string), rtol, sub, false, skip, nskip, d))
      return false;
  }
  for (const cJSON *y = b->child; y; y = y->next) {
    if (top && skipped(y->string, skip, nskip)) continue;
    if (cJSON_GetObjectItemCaseSensitive(a, y->string)) continue;
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", y->string);
    return differ(NULL, y, sub, d);
  }
  return true;
}

static bool walk(const cJSON *a, const cJSON *b, double rtol, const char *path, bool top,
                 const char *const *skip, size_t nskip, hs_expect_diff *d) {
  if (!b || (a->type & 0xff) != (b->type & 0xff)) return differ(a, b, path, d);
  if (cJSON_IsObject(a)) return walk_object(a, b, rtol, path, top, skip, nskip, d);
  if (cJSON_IsArray(a)) {
    char sub[256];
    int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
    for (int i = 0; i < na || i < nb; i++) {
      snprintf(sub, sizeof sub, "%s[%d]", path, i);
      const cJSON *x = cJSON_GetArrayItem(a, i), *y = cJSON_GetArrayItem(b, i);
      if (!x) return differ(NULL, y, sub, d);
      if (!walk(x, y, rtol, sub, false, skip, nskip, d)) return false;
    }
    return true;
  }
  if (cJSON_IsNumber(a)) {
    double x = a->valuedouble, y = b->valuedouble;
    if (x == y) return true;
    double scale = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
    if (rtol > 0 && isfinite(scale) && fabs(x - y) <= rtol * scale) return true;
    return differ(a, b, path, d);
  }
  if (cJSON_IsString(a)) return strcmp(a->valuestring, b->valuestring) ? differ(a, b, path, d) : true;
  return true; /* null, true, false: the type said it all */
}

int hs_expect_json_cause(const char *gold, const char *got, const char *const *keys, size_t nkeys,
                         hs_expect_diff *d) {
  memset(d, 0, sizeof *d);
  cJSON *a = cJSON_Parse(gold), *b = cJSON_Parse(got);
  int rc = a && b ? HS_EXPECT_SAME : HS_EXPECT_BAD;
  for (size_t i = 0; i < nkeys && rc == HS_EXPECT_SAME; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, keys[i]);
    const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, keys[i]);
    if (!x && !y) continue;
    bool same = x ? walk(x, y, 0, keys[i], false, NULL, 0, d) : differ(NULL, y, keys[i], d);
    if (!same) rc = HS_EXPECT_DIFF;
  }
  cJSON_Delete(a);
  cJSON_Delete(b);
  return rc;
}

int hs_expect_json(const char *gold, const char *gold_origin, const char *got, double rtol,
                   const char *const *skip, size_t nskip, hs_expect_diff *d, hs_error *err) {
  memset(d, 0, sizeof *d);
  cJSON *a = cJSON_Parse(gold);
  if (!a) {
    const char *at = cJSON_GetErrorPtr();
    size_t line = 1;
    for (const char *p = gold; at && p < at && *p; p++) line += *p == '\n';
    hs_error_set(err, HS_EPARSE, "%s: line %zu: not valid JSON", gold_origin, line);
    return HS_EXPECT_BAD;
  }
  cJSON *b = cJSON_Parse(got);
  int rc = HS_EXPECT_SAME;
  if (!b) {
    put(d->where, sizeof d->where, "(text)");
    put(d->want, sizeof d->want, "JSON text");
    put(d->got, sizeof d->got, "not valid JSON");
    rc = HS_EXPECT_DIFF;
  } else if (!walk(a, b, rtol, "", true, skip, nskip, d)) {
    rc = HS_EXPECT_DIFF;
  }
  cJSON_Delete(a);
  cJSON_Delete(b);
  return rc;
}
