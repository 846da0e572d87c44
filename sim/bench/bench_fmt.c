/* bench_fmt.c: hs_fmt_double against printf.
 *
 * Default: nanoseconds per number for hs_fmt_double, snprintf "%.17g" and
 * snprintf "%.10g" on 10^6 doubles of two kinds: random bit patterns (every
 * magnitude, 16-17 digits) and values like a run writes (seconds and joules,
 * u * 10^[-3, 5)). Best of 3 passes each.
 * --check N: asserts on N random bit patterns that strtod reads the output back
 * to the same bits and that "%.Ng" with one digit fewer does not; exit 1 on the
 * first failure (the acceptance run is --check 10000000). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hs_fmt.h"

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

static int sig_digits(const char *s) {
  int n = 0, last = 0, started = 0;
  for (; *s && *s != 'e'; s++) {
    if (*s < '0' || *s > '9') continue;
    if (*s != '0') started = 1;
    if (started && ++n && *s != '0') last = n;
  }
  return last;
}

static int check(uint64_t count) {
  uint64_t x = 0x2545f4914f6cdd1dULL;
  char buf[HS_FMT_DOUBLE_MAX], alt[400];
  uint64_t tested = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint64_t b = xorshift(&x);
    double v = from_bits(b);
    if (!isfinite(v)) continue;
    tested++;
    hs_fmt_double(buf, v);
    char *end;
    double r = strtod(buf, &end);
    if (*end || memcmp(&r, &v, sizeof r)) {
      printf("FAIL %.17g written %s reads back as %.17g\n", v, buf, r);
      return 1;
    }
    int d = sig_digits(buf);
    if (d > 1) {
      snprintf(alt, sizeof alt, "%.*g", d - 1, v);
      if (strtod(alt, NULL) == v) {
        printf("FAIL %.17g written %s, shorter %s reads back\n", v, buf, alt);
        return 1;
      }
    }
  }
  printf("check: %llu finite random doubles round-trip and are shortest\n",
         (unsigned long long)tested);
  return 0;
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
  if (argc == 3 && !strcmp(argv[1], "--check")) return check(strtoull(argv[2], NULL, 10));
  if (argc > 1) {
    printf("usage: hs-bench-fmt [--check COUNT]\n"
           "ns per number: hs_fmt_double, snprintf %%.17g and %%.10g (10^6 doubles);\n"
           "--check COUNT verifies round trip and shortness on COUNT random doubles.\n");
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
