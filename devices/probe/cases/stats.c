/* stats.c: the statistics' case (median, MAD, cv, trapezoid). */
#include "cases.h"

/* ------------------------------------------------------------------ stats */
PROBE_CASE_FN(stats, stats) {
  (void)tmp;
  enum { N = 2001 };
  static double t[N], y[N];
  for (int i = 0; i < N; i++) {
    t[i] = 3.141592653589793 * i / (N - 1);
    y[i] = sin(t[i]);
  }
  double I = probe_trapezoid(t, y, N); /* integral of sin over [0, pi] = 2; error ~ pi^3/(12 n^2) */
  CHECK(NEAR(I, 2.0, 1e-6), "trapezoid of sin on [0,pi]: %.9f", I);
  double lt[3] = {0, 1, 3}, ly[3] = {2, 4, 0};
  CHECK(NEAR(probe_trapezoid(lt, ly, 3), 3.0 + 4.0, 1e-12), "piecewise linear is exact");
  double x[5] = {5, 1, 4, 2, 3};
  CHECK(probe_median(x, 5) == 3 && probe_median(x, 4) == 3 && probe_mad(x, 5) == 1, "median/MAD");
  double c[2] = {1, 3};
  CHECK(NEAR(probe_cv(c, 2), sqrt(2.0) / 2.0, 1e-12), "cv of {1,3} = sqrt(2)/2, got %g", probe_cv(c, 2));
  return true;
}
