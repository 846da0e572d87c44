/* test_fmt.c: hs_fmt_double, the shortest round-trip formatter. Known strings
 * for special values and the layout thresholds; then properties against libc:
 * strtod reads every output back to the same bits, and no printf "%.Ng" with
 * fewer significant digits reads back to the value (so ours is shortest), on
 * subnormals (smallest, largest), powers of ten, integers to 2^53 and 10^6
 * random bit patterns. The acceptance run on 10^7:
 *   HS_FMT_RANDOM=10000000 build/bin/test_fmt --filter 'fmt/random_bit*' */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_fmt.h"

static double from_bits(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}
static uint64_t to_bits(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* Significant digits of a decimal string (leading and trailing zeros aside). */
static int sig_digits(const char *s) {
  int n = 0, last = 0, started = 0;
  for (; *s && *s != 'e'; s++) {
    if (*s < '0' || *s > '9') continue;
    if (*s != '0') started = 1;
    if (!started) continue;
    n++;
    if (*s != '0') last = n;
  }
  return last;
}

static int reads_back(const char *s, double v) {
  char *end;
  double r = strtod(s, &end);
  return *end == '\0' && to_bits(r) == to_bits(v);
}

/* Asserts round trip; checks %.Ng for N = digits-1 (every shorter N when all). */
static void check(double v, int all) {
  char buf[HS_FMT_DOUBLE_MAX + 8];
  memset(buf, 'x', sizeof buf);
  size_t n = hs_fmt_double(buf, v);
  cr_assert(n < HS_FMT_DOUBLE_MAX && buf[n] == '\0' && strlen(buf) == n, "%a: length %zu", v, n);
  cr_assert(reads_back(buf, v), "%a (%.17g) written %s does not read back", v, v, buf);
  int d = sig_digits(buf);
  for (int p = d - 1; p >= 1; p--) {
    char alt[400];
    snprintf(alt, sizeof alt, "%.*g", p, v);
    cr_assert(!reads_back(alt, v), "%.17g: %s has %d digits, %s reads back", v, buf, d, alt);
    if (!all) break;
  }
}

static void expect_str(double v, const char *want) {
  char buf[HS_FMT_DOUBLE_MAX];
  size_t n = hs_fmt_double(buf, v);
  cr_expect_str_eq(buf, want, "%a", v);
  cr_expect_eq(n, strlen(want));
}

Test(fmt, special_values) {
  expect_str(NAN, "nan");
  expect_str(-NAN, "nan");
  expect_str(INFINITY, "inf");
  expect_str(-INFINITY, "-inf");
  expect_str(0.0, "0");
  expect_str(-0.0, "-0");
  cr_assert(signbit(strtod("-0", NULL)));
  cr_assert(isinf(strtod("-inf", NULL)) && strtod("-inf", NULL) < 0);
}

Test(fmt, known_strings_and_layout) {
  expect_str(0.1, "0.1");
  expect_str(0.3, "0.3");
  expect_str(0.1 + 0.2, "0.30000000000000004");
  expect_str(1.0 / 3, "0.3333333333333333");
  expect_str(-123.25, "-123.25");
  expect_str(100, "100");
  expect_str(1e16, "10000000000000000"); /* decimal exponent 16: still fixed */
  expect_str(1e17, "1e+17");
  expect_str(1.5e17, "1.5e+17");
  expect_str(1e-4, "0.0001"); /* exponent -4: still fixed */
  expect_str(1.25e-4, "0.000125");
  expect_str(1e-5, "1e-05");
  expect_str(1e23, "1e+23");
  expect_str(4.35, "4.35");
  expect_str(9007199254740992.0, "9007199254740992");
  expect_str(DBL_MAX, "1.7976931348623157e+308");
  expect_str(-DBL_MAX, "-1.7976931348623157e+308");
  expect_str(DBL_MIN, "2.2250738585072014e-308");
  expect_str(DBL_EPSILON, "2.220446049250313e-16");
}

Test(fmt, subnormals) {
  expect_str(from_bits(1), "5e-324");
  expect_str(from_bits(2), "1e-323");
  expect_str(from_bits(3), "1.5e-323");
  expect_str(from_bits(0x000fffffffffffffULL), "2.225073858507201e-308");
  for (uint64_t t = 1; t <= 5000; t++) {
    check(from_bits(t), 1);
    check(from_bits(0x0010000000000000ULL - t), 1); /* the largest subnormals */
    check(-from_bits(t * 1000003ULL), 1);
  }
  /* The first normals: the gap below 2^-1022 is the subnormal spacing. */
  for (uint64_t t = 0; t < 1000; t++) check(from_bits(0x0010000000000000ULL + t), 1);
}

Test(fmt, powers_of_ten) {
  for (int x = -323; x <= 308; x++) {
    char src[16], want[400];
    snprintf(src, sizeof src, "1e%d", x);
    double v = strtod(src, NULL);
    if (x >= 0 && x <= 16)
      snprintf(want, sizeof want, "%.0f", v);
    else if (x < 0 && x >= -4)
      snprintf(want, sizeof want, "%.*f", -x, v);
    else
      snprintf(want, sizeof want, "1e%c%02d", x < 0 ? '-' : '+', abs(x));
    expect_str(v, want);
    check(v, 1);
    check(nextafter(v, 0), 1);
    check(nextafter(v, INFINITY), 1);
  }
}

Test(fmt, powers_of_two_every_exponent) {
  /* A power of two has a rounding interval narrower below than above. */
  for (int x = -1074; x <= 1023; x++) {
    check(ldexp(1.0, x), 1);
    check(nextafter(ldexp(1.0, x), 0), 0);
  }
}

Test(fmt, integers_to_2p53) {
  char want[32];
  for (uint64_t i = 0; i <= 100000; i++) {
    snprintf(want, sizeof want, "%llu", (unsigned long long)i);
    expect_str((double)i, want);
  }
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 100000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint64_t n = x >> (11 + i % 40); /* below 2^53, every magnitude */
    snprintf(want, sizeof want, "%llu", (unsigned long long)n);
    expect_str((double)n, want);
    snprintf(want, sizeof want, "%llu", (unsigned long long)(((uint64_t)1 << 53) - (uint64_t)i));
    expect_str((double)(((uint64_t)1 << 53) - (uint64_t)i), want);
  }
}

Test(fmt, random_bit_patterns_round_trip_and_shortest) {
  const char *env = getenv("HS_FMT_RANDOM");
  long count = env ? atol(env) : 1000000;
  cr_assert_gt(count, 0, "HS_FMT_RANDOM must be a positive count");
  uint64_t x = 88172645463325252ULL;
  long finite = 0;
  for (long i = 0; i < count; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double v = from_bits(x);
    if (!isfinite(v)) {
      char buf[HS_FMT_DOUBLE_MAX];
      hs_fmt_double(buf, v);
      cr_assert(!strcmp(buf, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"));
      continue;
    }
    finite++;
    check(v, i % 64 == 0);
  }
  cr_assert_gt(finite, count - count / 100);
  if (env) cr_log_info("%ld finite random doubles round-trip and are shortest", finite);
}

Test(fmt, random_ordinary_magnitudes) {
  /* Values like the ones runs write: seconds, joules, ratios. */
  uint64_t x = 12345;
  for (int i = 0; i < 200000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double u = (double)(x >> 11) * 0x1p-53;
    check(u * pow(10.0, (double)(i % 24) - 12), i % 16 == 0);
  }
}
