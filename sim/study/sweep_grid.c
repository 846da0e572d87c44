/* sweep_grid.c: parsing grid specs ("key=v1,v2", "key=start:stop:step") and
 * seed lists ("1-10", "1,3,5-7") into flat arrays.
 *
 * A range is expanded at parse time into its value texts, so a point's
 * overrides are plain strings like any --set and the results header records
 * the values, not the way they were written (0:1:0.5 and 0,0.5,1 are the same
 * sweep). Value i is start + i*step, never an accumulated sum, which would
 * drift by an ulp per step; it is printed with 15 significant digits so the
 * text is the decimal the user meant (0.3, not 0.30000000000000004) and the
 * scenario parses that text exactly as it would from --set; whole numbers up
 * to 2^53 are printed in full. A step below what 15 digits resolve would
 * print two values alike (two points, one scenario): refused. The count is
 * floor((stop - start)/step + 1e-9) + 1: the 1e-9 step tolerance keeps a stop
 * that is a multiple of the step in a range despite division rounding.
 * Seeds and list values are checked for repeats with a sort, O(n log n), and
 * a list's array is sized once from its commas: a 10^6-value list parses in
 * O(n log n) (it was O(n^2): a pairwise check, and an array grown one slot at
 * a time). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "sim/hs_sweep.h"

#define MAX_VALUES 1000000u
#define MAX_SEED 9007199254740992ULL /* 2^53, the scenario's own bound; also the
                                        largest whole number a range prints in full */
#define SPEC_SHOWN 80                /* bytes of a spec that messages quote */

/* Messages quote the spec, then give the reason, in at most HS_ERROR_MSG_MAX
 * bytes: a long spec (a list of 200 values) is cut, at a UTF-8 character
 * boundary, so the reason always fits. Heap, hs_free. */
static char *spec_shown(const char *spec) {
  size_t n = strlen(spec);
  if (n <= SPEC_SHOWN) return hs_strdup(spec);
  size_t cut = SPEC_SHOWN - 3;
  while (cut > 0 && ((unsigned char)spec[cut] & 0xc0) == 0x80) cut--;
  char *s = hs_malloc(cut + 4);
  memcpy(s, spec, cut);
  memcpy(s + cut, "...", 4);
  return s;
}

void hs_sweep_axis_fini(hs_sweep_axis *a) {
  if (!a) return;
  for (size_t i = 0; i < a->nvalues; i++) hs_free(a->values[i]);
  hs_free(a->values);
  hs_free(a->key);
  hs_free(a->spec);
  memset(a, 0, sizeof *a);
}

static bool parse_num(const char *s, size_t n, double *out) {
  char buf[64];
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (errno || *end || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* a->values has room for every value: callers size it once (a list by its
 * commas, a range by its count) instead of growing it a slot at a time. */
static void push_value(hs_sweep_axis *a, const char *s, size_t n) {
  char *v = hs_malloc(n + 1);
  memcpy(v, s, n);
  v[n] = '\0';
  a->values[a->nvalues++] = v;
}

static hs_status parse_range(hs_sweep_axis *a, const char *val, hs_error *err) {
  const char *c1 = strchr(val, ':'), *c2 = strchr(c1 + 1, ':');
  double start, stop, step;
  if (!parse_num(val, (size_t)(c1 - val), &start) ||
      !parse_num(c1 + 1, (size_t)(c2 - c1 - 1), &stop) ||
      !parse_num(c2 + 1, strlen(c2 + 1), &step))
    return hs_error_set(err, HS_EINVAL,
                        "--grid %s: a range is start:stop:step with three finite numbers",
                        a->spec);
  if (step == 0)
    return hs_error_set(err, HS_EINVAL, "--grid %s: step is 0 (a range needs a step != 0)",
                        a->spec);
  if (!isfinite(stop - start))
    return hs_error_set(err, HS_EINVAL, "--grid %s: stop - start is beyond a double's range",
                        a->spec);
  double q = (stop - start) / step; /* +-inf for a tiny step: "more than" below */
  if (q < -1e-9)
    return hs_error_set(err, HS_EINVAL,
                        "--grid %s: empty range (a step of %g never goes from %g to %g)",
                        a->spec, step, start, stop);
  if (q + 1e-9 >= (double)MAX_VALUES)
    return hs_error_set(err, HS_EINVAL, "--grid %s: more than %u values", a->spec, MAX_VALUES);
  size_t n = (size_t)floor(q + 1e-9) + 1;
  a->values = hs_reallocarray(NULL, n, sizeof *a->values);
  for (size_t i = 0; i < n; i++) {
    double v = start + (double)i * step;
    if (fabs(v) < 1e-12 * fabs(step)) v = 0; /* no "-0" or 5.55e-17 for a zero crossing */
    char buf[40];
    /* Whole numbers up to 2^53 in full: %.15g would print 1234567890123457
     * as 1.23456789012346e+15, another number. */
    int len = v == floor(v) && fabs(v) <= MAX_SEED ? snprintf(buf, sizeof buf, "%.0f", v)
                                                   : snprintf(buf, sizeof buf, "%.15g", v);
    if (i > 0 && !strcmp(buf, a->values[i - 1]))
      return hs_error_set(err, HS_EINVAL,
                          "--grid %s: values %zu and %zu both print as %s (a step of %g is "
                          "below the 15 significant digits a value keeps)",
                          a->spec, i - 1, i, buf, step);
    push_value(a, buf, (size_t)len);
  }
  return HS_OK;
}

/* Characters a results row cannot hold: '"' (CSV quoting), '|' (line 1's
 * separator), '#' (readers told to skip comments, pandas' comment='#' and
 * gnuplot, would cut the row there) and control characters. */
static bool bad_char(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f || c == '"' || c == '|' || c == '#') return true;
  }
  return false;
}

typedef struct value_ix {
  const char *s;
  size_t i;
} value_ix;

static int cmp_value_ix(const void *a, const void *b) {
  const value_ix *x = a, *y = b;
  int c = strcmp(x->s, y->s);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The first position i (in list order) whose value appeared before it, or n
 * when all differ: sort (value, position) pairs, and in each run of equal
 * values the second position is that value's first repeat; the smallest of
 * those is the answer, as a pairwise scan in list order would find it. */
static size_t first_repeat(char *const *v, size_t n) {
  value_ix *x = hs_malloc((n ? n : 1) * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = (value_ix){v[i], i};
  qsort(x, n, sizeof *x, cmp_value_ix);
  size_t best = n;
  for (size_t k = 1; k < n; k++)
    if (!strcmp(x[k].s, x[k - 1].s) && (k < 2 || strcmp(x[k - 1].s, x[k - 2].s)) && x[k].i < best)
      best = x[k].i;
  hs_free(x);
  return best;
}

hs_status hs_sweep_axis_parse(const char *spec, hs_sweep_axis *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  out->spec = spec_shown(spec);
  const char *eq = strchr(spec, '=');
  hs_status st = HS_OK;
  if (!eq || eq == spec) {
    st = hs_error_set(err, HS_EINVAL,
                      "--grid %s: expected key=v1,v2,... or key=start:stop:step "
                      "(e.g. --grid policy.w_e=0:1:0.25)", out->spec);
    goto fail;
  }
  out->key = hs_malloc((size_t)(eq - spec) + 1);
  memcpy(out->key, spec, (size_t)(eq - spec));
  out->key[eq - spec] = '\0';
  if (bad_char(out->key, strlen(out->key)) || strchr(out->key, ',')) {
    st = hs_error_set(err, HS_EINVAL, "--grid %s: the key holds a character a CSV header cannot",
                      out->spec);
    goto fail;
  }
  const char *val = eq + 1;
  const char *c1 = strchr(val, ':');
  if (c1 && strchr(c1 + 1, ':') && !strchr(val, ',')) {
    st = parse_range(out, val, err);
    if (st != HS_OK) goto fail;
    return HS_OK;
  }
  double lo, hi; /* "0:1": a range without its step, not the string "0:1" */
  if (c1 && !strchr(val, ',') && parse_num(val, (size_t)(c1 - val), &lo) &&
      parse_num(c1 + 1, strlen(c1 + 1), &hi)) {
    st = hs_error_set(err, HS_EINVAL,
                      "--grid %s: a range is start:stop:step, with its step (e.g. --grid "
                      "%s=%s:0.25)", out->spec, out->key, val);
    goto fail;
  }
  size_t count = 1;
  for (const char *p = val; (p = strchr(p, ',')) != NULL; p++) count++;
  out->values = hs_reallocarray(NULL, count < MAX_VALUES ? count : MAX_VALUES, sizeof *out->values);
  for (const char *p = val;;) {
    const char *q = strchr(p, ',');
    size_t n = q ? (size_t)(q - p) : strlen(p);
    if (n == 0) {
      st = hs_error_set(err, HS_EINVAL, "--grid %s: empty value in the list", out->spec);
      goto fail;
    }
    if (bad_char(p, n)) {
      st = hs_error_set(err, HS_EINVAL,
                        "--grid %s: a value holds '\"', '|', '#' or a control character (write "
                        "strings bare: --grid task=mnist,era5)", out->spec);
      goto fail;
    }
    if (out->nvalues == MAX_VALUES) {
      st = hs_error_set(err, HS_EINVAL, "--grid %s: more than %u values", out->spec,
                        MAX_VALUES);
      goto fail;
    }
    push_value(out, p, n);
    if (!q) break;
    p = q + 1;
  }
  size_t dup = first_repeat(out->values, out->nvalues);
  if (dup < out->nvalues) {
    st = hs_error_set(err, HS_EINVAL, "--grid %s: value \"%.60s\" appears twice", out->spec,
                      out->values[dup]);
    goto fail;
  }
  return HS_OK;
fail:
  hs_sweep_axis_fini(out);
  return st;
}

static bool parse_seed(const char *s, size_t n, uint64_t *out) {
  if (n == 0 || n > 20) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
    if (v > MAX_SEED) return false;
  }
  *out = v;
  return true;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

hs_status hs_sweep_seeds_parse(const char *spec, uint64_t **seeds, size_t *nseeds,
                               hs_error *err) {
  uint64_t *v = NULL;
  size_t n = 0;
  *seeds = NULL;
  *nseeds = 0;
  char *shown = spec_shown(spec);
  hs_status st = HS_OK;
  for (const char *p = spec;;) {
    const char *q = strchr(p, ',');
    size_t len = q ? (size_t)(q - p) : strlen(p);
    const char *dash = memchr(p, '-', len);
    uint64_t a, b;
    bool ok = dash ? parse_seed(p, (size_t)(dash - p), &a) &&
                         parse_seed(dash + 1, len - (size_t)(dash - p) - 1, &b)
                   : parse_seed(p, len, &a);
    if (!dash) b = a;
    if (!ok || b < a) {
      st = hs_error_set(err, HS_EINVAL,
                        "--seeds %s: \"%.*s\" is not a seed or a range A-B with A <= B "
                        "(whole numbers in [0, 2^53])", shown, len > 60 ? 60 : (int)len, p);
      goto fail;
    }
    if (b - a >= MAX_VALUES || n + (size_t)(b - a) + 1 > MAX_VALUES) {
      st = hs_error_set(err, HS_EINVAL, "--seeds %s: more than %u seeds", shown, MAX_VALUES);
      goto fail;
    }
    v = hs_reallocarray(v, n + (size_t)(b - a) + 1, sizeof *v);
    for (uint64_t s = a;; s++) {
      v[n++] = s;
      if (s == b) break;
    }
    if (!q) break;
    p = q + 1;
  }
  uint64_t *sorted = hs_malloc(n * sizeof *sorted);
  memcpy(sorted, v, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, cmp_u64);
  for (size_t i = 1; i < n; i++)
    if (sorted[i] == sorted[i - 1]) {
      st = hs_error_set(err, HS_EINVAL, "--seeds %s: seed %llu appears twice", shown,
                        (unsigned long long)sorted[i]);
      break;
    }
  hs_free(sorted);
  if (st != HS_OK) goto fail;
  hs_free(shown);
  *seeds = v;
  *nseeds = n;
  return HS_OK;
fail:
  hs_free(shown);
  hs_free(v);
  return st;
}
