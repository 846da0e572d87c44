/* speed_trace.c: piecewise-constant speed traces and exact completion times.
 *
 * Data structure: three parallel arrays over the rows, change times T[i]
 * (strictly ascending), speeds S[i] (> 0), and the prefix work
 * W[i] = integral_{T[0]}^{T[i]} speed, so W[0] = 0 and W is strictly
 * ascending. Define the cumulative work W(x) = x - T[0] for x < T[0] (speed 1
 * before the first row) and W[k] + (x - T[k]) * S[k] in row k's segment. Then
 * work(a, b) = W(b) - W(a), and finish(t0, w) is the inverse of W at
 * W(t0) + w: one binary search over T to place t0, one over W to place the
 * target, then a division. O(log n) per query, O(n) memory.
 *
 * Rejected: walking the segments from t0 (O(segments crossed) per query, and a
 * long-running device with a fine-grained trace would pay it every round), and
 * sampling the speed on a grid (inexact, and the tests pin closed forms).
 * Precision: when the computation ends in the segment it started in, the result
 * is t0 + w / S[k] directly, without the subtraction of two large prefix sums;
 * across segments the error is a few ulps of W(end), i.e. relative 1e-16 of the
 * simulated time. */
#include "traces/hs_speed_trace.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "traces/hs_csv.h"
#include "base/hs_util.h"

struct hs_speed_trace {
  size_t n;  /* rows, >= 1 */
  double *T; /* change times, strictly ascending, >= 0 */
  double *S; /* speeds, > 0 */
  double *W; /* prefix work at T[i] */
};

/* One field as a finite double; false when it is not exactly one (the reader
 * has already dropped the spaces and tabs around it). */
static bool parse_field(const char *s, double *out) {
  if (!*s) return false;
  char *end = NULL;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x)) return false;
  *out = x;
  return true;
}

static void push(hs_speed_trace *t, size_t *cap, double time_s, double speed) {
  if (t->n == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    t->T = hs_reallocarray(t->T, *cap, sizeof(double));
    t->S = hs_reallocarray(t->S, *cap, sizeof(double));
  }
  t->T[t->n] = time_s;
  t->S[t->n] = speed;
  t->n++;
}

static const char *const columns[] = {"time_s", "speed"};

hs_speed_trace *hs_speed_trace_parse(const char *csv_text, const char *origin, hs_error *err) {
  return hs_speed_trace_parse_n(csv_text, strlen(csv_text), origin, err);
}

hs_speed_trace *hs_speed_trace_parse_n(const char *csv_text, size_t len, const char *origin,
                                       hs_error *err) {
  assert(csv_text && origin);
  hs_csv *r = hs_csv_create(csv_text, len, origin, HS_CSV_SKIP_BLANK | HS_CSV_COMMENTS | HS_CSV_TRIM,
                            err);
  if (!r) return NULL;
  hs_speed_trace *t = hs_calloc(1, sizeof *t);
  size_t cap = 0, col[2], ncols;
  int k = hs_csv_next(r, err);
  if (k < 0) goto fail;
  if (k == 0) {
    size_t lines = hs_csv_lines(r);
    if (lines == 0)
      hs_error_set(err, HS_EPARSE, "%s: line 1: missing header \"time_s,speed\" (the file is empty)",
                   origin);
    else
      hs_error_set(err, HS_EPARSE,
                   "%s: line %zu: missing header \"time_s,speed\" (only blank or comment lines)",
                   origin, lines);
    goto fail;
  }
  if (hs_csv_header(r, columns, 2, col, err) != HS_OK) goto fail;
  ncols = hs_csv_nfields(r);
  while ((k = hs_csv_next(r, err)) > 0) {
    size_t line = hs_csv_line(r);
    if (hs_csv_nfields(r) != ncols) {
      if (ncols == 2)
        hs_error_set(err, HS_EPARSE, "%s: line %zu: expected two fields \"time_s,speed\"", origin,
                     line);
      else
        hs_error_set(err, HS_EPARSE, "%s: line %zu: expected %zu fields, as in the header", origin,
                     line, ncols);
      goto fail;
    }
    double ts, sp;
    if (!parse_field(hs_csv_field(r, col[0]), &ts)) {
      hs_error_set(err, HS_EPARSE, "%s: line %zu: time_s: not a finite number", origin, line);
      goto fail;
    }
    if (ts < 0) {
      hs_error_set(err, HS_ERANGE, "%s: line %zu: time_s: must be >= 0", origin, line);
      goto fail;
    }
    if (t->n > 0 && !(ts > t->T[t->n - 1])) {
      hs_error_set(err, HS_EINVAL, "%s: line %zu: time_s: must be strictly ascending (previous row %g)",
                   origin, line, t->T[t->n - 1]);
      goto fail;
    }
    if (!parse_field(hs_csv_field(r, col[1]), &sp)) {
      hs_error_set(err, HS_EPARSE, "%s: line %zu: speed: not a finite number", origin, line);
      goto fail;
    }
    if (!(sp > 0)) {
      hs_error_set(err, HS_ERANGE, "%s: line %zu: speed: must be > 0", origin, line);
      goto fail;
    }
    push(t, &cap, ts, sp);
  }
  if (k < 0) goto fail;
  if (t->n == 0) {
    hs_error_set(err, HS_EMISSING, "%s: line %zu: no rows after the header", origin,
                 hs_csv_lines(r));
    goto fail;
  }
  hs_csv_destroy(r);
  t->W = hs_reallocarray(NULL, t->n, sizeof(double));
  t->W[0] = 0;
  for (size_t i = 1; i < t->n; i++) t->W[i] = t->W[i - 1] + (t->T[i] - t->T[i - 1]) * t->S[i - 1];
  return t;
fail:
  hs_csv_destroy(r);
  hs_speed_trace_destroy(t);
  return NULL;
}

hs_speed_trace *hs_speed_trace_load(const char *path, hs_error *err) {
  size_t len = 0;
  char *text = hs_read_file(path, &len, err);
  if (!text) return NULL;
  hs_speed_trace *t = hs_speed_trace_parse_n(text, len, path, err);
  hs_free(text);
  return t;
}

void hs_speed_trace_destroy(hs_speed_trace *t) {
  if (!t) return;
  hs_free(t->T);
  hs_free(t->S);
  hs_free(t->W);
  hs_free(t);
}

size_t hs_speed_trace_rows(const hs_speed_trace *t) { return t->n; }

/* Index of the row in force at x: the largest k with T[k] <= x; -1 before T[0]. */
static ptrdiff_t row_at(const hs_speed_trace *t, double x) {
  if (x < t->T[0]) return -1;
  size_t lo = 0, hi = t->n; /* T[lo] <= x < T[hi] (T[n] = +inf) */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->T[mid] <= x) lo = mid;
    else hi = mid;
  }
  return (ptrdiff_t)lo;
}

static double cumulative(const hs_speed_trace *t, ptrdiff_t k, double x) {
  if (k < 0) return x - t->T[0];
  return t->W[k] + (x - t->T[k]) * t->S[k];
}

double hs_speed_trace_at(const hs_speed_trace *t, double time_s) {
  if (!t) return 1.0;
  ptrdiff_t k = row_at(t, time_s);
  return k < 0 ? 1.0 : t->S[k];
}

double hs_speed_trace_work(const hs_speed_trace *t, double t0, double t1) {
  assert(t1 >= t0);
  if (!t) return t1 - t0;
  ptrdiff_t a = row_at(t, t0), b = row_at(t, t1);
  if (a == b) return (t1 - t0) * (a < 0 ? 1.0 : t->S[a]);
  return cumulative(t, b, t1) - cumulative(t, a, t0);
}

double hs_speed_trace_finish(const hs_speed_trace *t, double t0, double work_s) {
  assert(isfinite(t0) && work_s >= 0 && isfinite(work_s));
  if (!t) return t0 + work_s;
  ptrdiff_t k = row_at(t, t0);
  double speed = k < 0 ? 1.0 : t->S[k];
  double seg_end = (size_t)(k + 1) < t->n ? t->T[k + 1] : INFINITY;
  /* Ends in the segment it started in: the direct form is the exact one. */
  if (seg_end == INFINITY || work_s <= (seg_end - t0) * speed) return t0 + work_s / speed;
  double target = cumulative(t, k, t0) + work_s;
  /* Largest j > k with W[j] <= target; W is strictly ascending. */
  size_t lo = (size_t)(k + 1), hi = t->n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->W[mid] <= target) lo = mid;
    else hi = mid;
  }
  double r = t->T[lo] + (target - t->W[lo]) / t->S[lo];
  /* Rounding must never move a completion before the change that was crossed. */
  return r < t->T[lo] ? t->T[lo] : r;
}
