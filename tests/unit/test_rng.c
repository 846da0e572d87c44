/* test_rng.c: known answers for splitmix64 and xoshiro256** (reference values
 * from the published algorithms), the keyed streams (values after N draws,
 * cross-checked with an independent implementation), order independence, and
 * the GSL adapter. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <math.h>

#include "base/hs_rng.h"
#include "hs_rng_gsl.h"

Test(rng, splitmix64_reference) {
  uint64_t x = 0;
  cr_assert_eq(hs_splitmix64(&x), 0xe220a8397b1dcdafULL);
}

Test(rng, xoshiro256ss_reference_from_state_1234) {
  hs_rng r = {{1, 2, 3, 4}};
  uint64_t want[] = {11520ULL, 0ULL, 1509978240ULL, 1215971899390074240ULL,
                     1216172134540287360ULL};
  for (int i = 0; i < 5; i++) cr_expect_eq(hs_rng_next(&r), want[i], "draw %d", i);
}

Test(rng, keyed_stream_known_answers) {
  hs_rng r;
  hs_rng_init(&r, 42, 7, HS_RNG_COMPUTE);
  uint64_t first = hs_rng_next(&r), last = first;
  for (int i = 1; i < 1000; i++) last = hs_rng_next(&r);
  cr_assert_eq(first, 1472316967629872383ULL);
  cr_assert_eq(last, 14160193120349609413ULL);
  hs_rng_init(&r, 1, 0, HS_RNG_TELEMETRY);
  cr_assert_eq(hs_rng_next(&r), 7951480555839720955ULL);
}

Test(rng, streams_do_not_depend_on_creation_order) {
  /* Draw entity 5's stream alone, then again after creating and using 100
   * other entities first: identical. Different keys give different streams. */
  hs_rng a, b, other;
  hs_rng_init(&a, 9, 5, HS_RNG_COMPUTE);
  uint64_t alone[16];
  for (int i = 0; i < 16; i++) alone[i] = hs_rng_next(&a);
  for (uint64_t e = 100; e < 200; e++) {
    hs_rng_init(&other, 9, e, HS_RNG_COMPUTE);
    for (int i = 0; i < 10; i++) hs_rng_next(&other);
  }
  hs_rng_init(&b, 9, 5, HS_RNG_COMPUTE);
  for (int i = 0; i < 16; i++) cr_expect_eq(hs_rng_next(&b), alone[i]);
  hs_rng c, d;
  hs_rng_init(&c, 9, 5, HS_RNG_TELEMETRY);
  hs_rng_init(&d, 9, 6, HS_RNG_COMPUTE);
  hs_rng_init(&b, 9, 5, HS_RNG_COMPUTE);
  uint64_t x = hs_rng_next(&b);
  cr_assert_neq(x, hs_rng_next(&c));
  cr_assert_neq(x, hs_rng_next(&d));
}

Test(rng, uniform_range_and_mean) {
  hs_rng r;
  hs_rng_init(&r, 3, 0, HS_RNG_BENCH);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    double u = hs_rng_uniform(&r);
    cr_assert(u >= 0.0 && u < 1.0);
    sum += u;
  }
  /* sd of the mean = sqrt(1/12/n) ~ 0.00065: 5 sd */
  cr_assert_float_eq(sum / n, 0.5, 0.0033);
}

Test(rng, below_is_in_range_and_covers_it) {
  hs_rng r;
  hs_rng_init(&r, 3, 1, HS_RNG_BENCH);
  int seen[7] = {0};
  for (int i = 0; i < 7000; i++) {
    uint64_t v = hs_rng_below(&r, 7);
    cr_assert_lt(v, 7);
    seen[v]++;
  }
  for (int k = 0; k < 7; k++) cr_expect_gt(seen[k], 800);
}

Test(rng, exponential_mean) {
  hs_rng r;
  hs_rng_init(&r, 11, 0, HS_RNG_BENCH);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; i++) sum += hs_rng_exponential(&r, 2.0);
  cr_assert_float_eq(sum / n, 2.0, 5 * 2.0 / sqrt(n));
}

Test(rng, gsl_adapter_draws_from_the_stream) {
  hs_rng a, b;
  hs_rng_init(&a, 5, 5, HS_RNG_BENCH);
  hs_rng_init(&b, 5, 5, HS_RNG_BENCH);
  gsl_rng *g = hs_rng_gsl_create(&a);
  cr_assert_str_eq(gsl_rng_name(g), "hetsim-xoshiro256**");
  /* gsl_rng_uniform must equal the stream's own uniform, draw for draw */
  for (int i = 0; i < 10; i++) cr_expect_eq(gsl_rng_uniform(g), hs_rng_uniform(&b));
  /* and a distribution runs on it with the right moments */
  double sum = 0, sq = 0;
  const int n = 100000;
  for (int i = 0; i < n; i++) {
    double x = gsl_ran_gaussian(g, 3.0);
    sum += x;
    sq += x * x;
  }
  cr_assert_float_eq(sum / n, 0.0, 5 * 3.0 / sqrt(n));
  cr_assert_float_eq(sqrt(sq / n), 3.0, 0.05);
  hs_rng_gsl_destroy(g);
}
