/* stats.c: the few statistics the calibration reports: median, mean,
 * coefficient of variation, median absolute deviation, trapezoid integral.
 * Inputs are a handful of runs, so median sorts a copy (O(n log n));
 * rejected: selection algorithms, pointless at n < 100. */
#include "probe.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int stats_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double probe_median(const double *x, size_t n) {
  assert(n > 0);
  double *c = hs_malloc(n * sizeof *c);
  memcpy(c, x, n * sizeof *c);
  qsort(c, n, sizeof *c, stats_cmp);
  double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  free(c);
  return m;
}

double probe_mean(const double *x, size_t n) {
  assert(n > 0);
  double s = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return s / (double)n;
}

double probe_cv(const double *x, size_t n) {
  if (n < 2) return 0.0;
  double m = probe_mean(x, n), s = 0;
  for (size_t i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m);
  return m != 0 ? sqrt(s / (double)(n - 1)) / fabs(m) : 0.0;
}

double probe_mad(const double *x, size_t n) {
  double m = probe_median(x, n);
  double *d = hs_malloc(n * sizeof *d);
  for (size_t i = 0; i < n; i++) d[i] = fabs(x[i] - m);
  double r = probe_median(d, n);
  free(d);
  return r;
}

double probe_trapezoid(const double *t, const double *y, size_t n) {
  double s = 0;
  for (size_t i = 1; i < n; i++) s += 0.5 * (y[i] + y[i - 1]) * (t[i] - t[i - 1]);
  return s;
}
