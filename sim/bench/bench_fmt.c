/* bench_fmt.c: hs_fmt_double against printf.
 *
 * Nanoseconds per number for hs_fmt_double, snprintf "%.17g" and snprintf
 * "%.10g" on 10^6 doubles of two kinds: random bit patterns (every magnitude,
 * 16-17 digits) and values like a run writes (seconds and joules,
 * u * 10^[-3, 5)). Best of 3 passes each. Correctness is tests/unit/test_fmt.c
 * (HS_FMT_RANDOM=10000000 for the 10^7 run). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hs_fmt.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *x) {
  *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
  return *x;
}

static double from_bits(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

typedef enum { FMT_HS, FMT_17G, FMT_10G } which;

static double ns_per_number(const double *v, size_t n, which w) {
  char buf[400];
  double best = INFINITY;
  size_t sink = 0;
  for (int pass = 0; pass < 3; pass++) {
    double t0 = now_s();
    for (size_t i = 0; i < n; i++) {
      if (w == FMT_HS)
        sink += hs_fmt_double(buf, v[i]);
      else
        sink += (size_t)snprintf(buf, sizeof buf, w == FMT_17G ? "%.17g" : "%.10g", v[i]);
    }
    double dt = now_s() - t0;
    if (dt < best) best = dt;
  }
  if (sink == 0) puts("");
  return best * 1e9 / (double)n;
}

int main(int argc, char **argv) {
  if (argc > 1) {
    printf("usage: hs-bench-fmt\n"
           "ns per number: hs_fmt_double, snprintf %%.17g and %%.10g (10^6 doubles).\n");
    return argv[1][0] == '-' && argv[1][1] == 'h' ? 0 : 2;
  }
  size_t n = 1000000;
  double *v = malloc(n * sizeof *v);
  if (!v) return 1;
  const char *kinds[2] = {"random bits", "run-like"};
  uint64_t x = 42;
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < n; i++) {
      if (k == 0) {
        do v[i] = from_bits(xorshift(&x));
        while (!isfinite(v[i]));
      } else {
        double u = (double)(xorshift(&x) >> 11) * 0x1p-53;
        v[i] = u * pow(10.0, (double)(i % 8) - 3);
      }
    }
    printf("fmt  %-11s  hs_fmt_double=%.1f ns  %%.17g=%.1f ns  %%.10g=%.1f ns\n", kinds[k],
           ns_per_number(v, n, FMT_HS), ns_per_number(v, n, FMT_17G),
           ns_per_number(v, n, FMT_10G));
  }
  free(v);
  return 0;
}
